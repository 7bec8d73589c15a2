/* Independent oracle for the collective tests: neighborhoods generated
 * here, neighbor ranks computed from MPI_Cart_get/MPI_Cart_rank (not from
 * the library), and exchanges done with one MPI_Sendrecv per neighbor index.
 * Every rank generates the same lists (deterministic seeds). */
#ifndef ISO_TEST_ORACLE_H
#define ISO_TEST_ORACLE_H
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#define ORACLE_MAXD 8

typedef struct {
    int d, s;
    int *off; /* s*d offsets, C^i at off[i*d] */
} nbh_t;

static void __attribute__((unused)) nbh_free(nbh_t *n)
{
    free(n->off);
    n->off = NULL;
    n->s = 0;
}

static void nbh_push(nbh_t *n, const int *c)
{
    n->off = realloc(n->off, (size_t)(n->s + 1) * (size_t)n->d * sizeof(int));
    memcpy(n->off + (size_t)n->s * (size_t)n->d, c, (size_t)n->d * sizeof(int));
    n->s++;
}

/* Offsets c with lo < norm(c) <= hi in row-major order (last coordinate
 * fastest); norm is 1 (von Neumann, Manhattan) or 0 (Moore, Chebyshev).
 * lo = 0 excludes the zero offset; lo = -1 includes it. */
static nbh_t __attribute__((unused)) nbh_shell(int d, int manhattan, int lo, int hi)
{
    nbh_t n = {d, 0, NULL};
    int c[ORACLE_MAXD];
    for (int j = 0; j < d; j++)
        c[j] = -hi;
    for (;;) {
        int norm = 0;
        for (int j = 0; j < d; j++) {
            int a = abs(c[j]);
            norm = manhattan ? norm + a : (a > norm ? a : norm);
        }
        if (norm > lo && norm <= hi)
            nbh_push(&n, c);
        int j = d - 1;
        while (j >= 0 && c[j] == hi)
            c[j--] = -hi;
        if (j < 0)
            break;
        c[j]++;
    }
    return n;
}

static nbh_t __attribute__((unused)) nbh_von_neumann(int d, int r) { return nbh_shell(d, 1, 0, r); }
static nbh_t __attribute__((unused)) nbh_moore(int d, int r) { return nbh_shell(d, 0, 0, r); }

/* Deterministic generator, the same sequence on every rank. */
static unsigned oracle_rand(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return (*state >> 16) & 0x7fff;
}

/* Reorder: 0 = as generated (row-major), 1 = column-major (first coordinate
 * fastest), 2 = random permutation from seed. */
static void __attribute__((unused)) nbh_reorder(nbh_t *n, int how, unsigned seed)
{
    int d = n->d, s = n->s;
    if (how == 1) { /* stable sort by reversed coordinate order */
        for (int a = 1; a < s; a++)
            for (int b = a; b > 0; b--) {
                int *x = n->off + (size_t)(b - 1) * d, *y = n->off + (size_t)b * d, cmp = 0;
                for (int j = d - 1; j >= 0 && !cmp; j--)
                    cmp = (x[j] > y[j]) - (x[j] < y[j]);
                if (cmp <= 0)
                    break;
                for (int j = 0; j < d; j++) {
                    int t = x[j];
                    x[j] = y[j];
                    y[j] = t;
                }
            }
    } else if (how == 2) {
        for (int a = s - 1; a > 0; a--) {
            int b = (int)(oracle_rand(&seed) % (unsigned)(a + 1));
            for (int j = 0; j < d; j++) {
                int t = n->off[(size_t)a * d + j];
                n->off[(size_t)a * d + j] = n->off[(size_t)b * d + j];
                n->off[(size_t)b * d + j] = t;
            }
        }
    }
}

/* s random offsets in [-range, range]^d, with repetitions and (usually) the
 * zero offset among them. */
static nbh_t __attribute__((unused)) nbh_random(int d, int s, int range, unsigned seed)
{
    nbh_t n = {d, 0, NULL};
    int c[ORACLE_MAXD];
    for (int i = 0; i < s; i++) {
        if (i > 0 && oracle_rand(&seed) % 5 == 0) { /* repeat an earlier one */
            int k = (int)(oracle_rand(&seed) % (unsigned)i);
            memcpy(c, n.off + (size_t)k * d, (size_t)d * sizeof(int));
        } else if (oracle_rand(&seed) % 7 == 0) {
            memset(c, 0, sizeof c);
        } else {
            for (int j = 0; j < d; j++)
                c[j] = (int)(oracle_rand(&seed) % (unsigned)(2 * range + 1)) - range;
        }
        nbh_push(&n, c);
    }
    return n;
}

/* Neighbor ranks of the caller computed from its coordinates:
 * targets[i] = caller + C^i, sources[i] = caller - C^i, MPI_PROC_NULL off a
 * non-periodic mesh. */
static void __attribute__((unused))
oracle_neighbors(MPI_Comm cart, const nbh_t *n, int *sources, int *targets)
{
    int dims[ORACLE_MAXD], periods[ORACLE_MAXD], me[ORACLE_MAXD], c[ORACLE_MAXD];
    MPI_Cart_get(cart, n->d, dims, periods, me);
    for (int i = 0; i < n->s; i++)
        for (int sign = -1; sign <= 1; sign += 2) {
            int valid = 1, r = MPI_PROC_NULL;
            for (int j = 0; j < n->d; j++) {
                long x = (long)me[j] + sign * (long)n->off[(size_t)i * n->d + j];
                if (periods[j])
                    x = ((x % dims[j]) + dims[j]) % dims[j];
                else if (x < 0 || x >= dims[j])
                    valid = 0;
                c[j] = (int)x;
            }
            if (valid)
                MPI_Cart_rank(cart, c, &r);
            (sign > 0 ? targets : sources)[i] = r;
        }
}

/* The oracle exchange: for i = 0..s-1, one MPI_Sendrecv of block i to
 * targets[i] and from sources[i] (tag i), on a duplicate of comm. */
static void __attribute__((unused))
oracle_alltoallw(const void *sendbuf, const int scounts[], const MPI_Aint sdispls[],
                 const MPI_Datatype stypes[], void *recvbuf, const int rcounts[],
                 const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm cart,
                 const nbh_t *n)
{
    int *src = malloc(sizeof(int) * (size_t)(n->s + 1));
    int *dst = malloc(sizeof(int) * (size_t)(n->s + 1));
    MPI_Comm comm;
    MPI_Comm_dup(cart, &comm);
    oracle_neighbors(cart, n, src, dst);
    for (int i = 0; i < n->s; i++)
        MPI_Sendrecv((const char *)sendbuf + sdispls[i], scounts[i], stypes[i], dst[i], i,
                     (char *)recvbuf + rdispls[i], rcounts[i], rtypes[i], src[i], i, comm,
                     MPI_STATUS_IGNORE);
    MPI_Comm_free(&comm);
    free(src);
    free(dst);
}

/* A Cartesian communicator over all of MPI_COMM_WORLD; dims[] entries of 0
 * are filled by MPI_Dims_create.  Returns MPI_COMM_NULL if the product of
 * the given dims does not match the world size. */
static MPI_Comm __attribute__((unused)) oracle_cart(int d, const int *dims_in, const int *periods)
{
    int p, dims[ORACLE_MAXD], prod = 1;
    MPI_Comm cart;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    memcpy(dims, dims_in, (size_t)d * sizeof(int));
    for (int j = 0; j < d; j++)
        if (dims[j] > 0)
            prod *= dims[j];
    if (p % prod)
        return MPI_COMM_NULL;
    MPI_Dims_create(p, d, dims);
    prod = 1;
    for (int j = 0; j < d; j++)
        prod *= dims[j];
    if (prod != p)
        return MPI_COMM_NULL;
    MPI_Cart_create(MPI_COMM_WORLD, d, dims, periods, 0, &cart);
    return cart;
}
#endif
