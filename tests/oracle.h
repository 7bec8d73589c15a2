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

/* ---- Local oracle and shared test fixtures (t_alltoall, t_allgather). ---- */

/* Moves one block as a matched message would: packs scount x stype from
 * sbuf and unpacks it as rcount x rtype into rbuf, without communication.
 * Used to fill send buffers (from a plain int array) and to compute the
 * expected receive buffer.  Returns -1 if the two sides differ in size. */
static int __attribute__((unused))
oracle_move_block(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
                  MPI_Datatype rtype, MPI_Comm comm)
{
    int ssize, rsize, packsize, pos = 0, len;
    char *tmp;
    MPI_Type_size(stype, &ssize);
    MPI_Type_size(rtype, &rsize);
    if ((long)ssize * scount != (long)rsize * rcount)
        return -1;
    MPI_Pack_size(scount, stype, comm, &packsize);
    tmp = malloc((size_t)packsize + 1);
    MPI_Pack(sbuf, scount, stype, tmp, packsize, &pos, comm);
    len = pos;
    pos = 0;
    MPI_Unpack(tmp, len, &pos, rbuf, rcount, rtype, comm);
    free(tmp);
    return 0;
}

/* Offset of the first byte where a and b differ, or -1. */
static long __attribute__((unused)) oracle_first_diff(const void *a, const void *b, size_t n)
{
    const unsigned char *x = a, *y = b;
    for (size_t k = 0; k < n; k++)
        if (x[k] != y[k])
            return (long)k;
    return -1;
}

/* Test topologies for p ranks: the k-th (d, dims, periods), or 0 past the
 * end.  Dimension sizes 1, 2, 3 and larger; periodic, non-periodic, mixed. */
typedef struct {
    int d, dims[4], periods[4];
} oracle_topo_t;

static int __attribute__((unused))
oracle_topology(int p, int k, int *d, int dims[], int periods[])
{
    static const struct {
        int p;
        oracle_topo_t t[9];
    } table[] = {
        {1, {{1, {1}, {1}}, {1, {1}, {0}}, {2, {1, 1}, {1, 0}}, {3, {1, 1, 1}, {0, 1, 0}},
             {4, {1, 1, 1, 1}, {1, 0, 1, 0}}}},
        {2, {{1, {2}, {1}}, {1, {2}, {0}}, {2, {1, 2}, {0, 1}}, {2, {2, 1}, {0, 0}},
             {3, {2, 1, 1}, {1, 1, 0}}, {4, {1, 2, 1, 1}, {1, 0, 1, 1}}}},
        {3, {{1, {3}, {1}}, {1, {3}, {0}}, {2, {3, 1}, {1, 1}}, {2, {1, 3}, {1, 0}},
             {3, {3, 1, 1}, {0, 1, 1}}, {4, {1, 1, 3, 1}, {1, 1, 1, 0}}}},
        {4, {{1, {4}, {1}}, {1, {4}, {0}}, {2, {2, 2}, {1, 1}}, {2, {2, 2}, {0, 1}},
             {2, {1, 4}, {1, 0}}, {3, {2, 1, 2}, {1, 0, 1}}, {3, {2, 1, 2}, {0, 0, 0}},
             {4, {1, 2, 1, 2}, {1, 1, 0, 1}}}},
        {6, {{1, {6}, {1}}, {1, {6}, {0}}, {2, {2, 3}, {1, 1}}, {2, {2, 3}, {1, 0}},
             {2, {3, 2}, {0, 0}}, {3, {3, 2, 1}, {1, 0, 1}}, {4, {1, 3, 1, 2}, {1, 1, 0, 1}}}},
        {8, {{1, {8}, {1}}, {1, {8}, {0}}, {2, {2, 4}, {1, 0}}, {2, {4, 2}, {1, 1}},
             {3, {2, 2, 2}, {1, 1, 1}}, {3, {2, 2, 2}, {1, 0, 1}},
             {4, {1, 2, 2, 2}, {1, 1, 0, 1}}}},
        {12, {{1, {12}, {1}}, {2, {3, 4}, {1, 0}}, {3, {2, 2, 3}, {1, 0, 1}},
              {4, {1, 2, 2, 3}, {1, 1, 1, 1}}}},
        {16, {{1, {16}, {0}}, {2, {4, 4}, {1, 1}}, {4, {2, 2, 2, 2}, {1, 0, 1, 1}},
              {2, {2, 8}, {0, 1}}}},
    };
    for (size_t t = 0; t < sizeof table / sizeof table[0]; t++) {
        if (table[t].p != p)
            continue;
        if (k < 0 || k >= 9 || table[t].t[k].d == 0)
            return 0;
        *d = table[t].t[k].d;
        memcpy(dims, table[t].t[k].dims, sizeof(int) * (size_t)*d);
        memcpy(periods, table[t].t[k].periods, sizeof(int) * (size_t)*d);
        return 1;
    }
    /* other p: 1-d periodic and non-periodic, 2-d mixed, 3-d mixed */
    if (k > 3)
        return 0;
    *d = k < 2 ? 1 : k;
    for (int j = 0; j < *d; j++) {
        dims[j] = 0;
        periods[j] = k == 1 ? 0 : !(j & 1);
    }
    MPI_Dims_create(p, *d, dims);
    return 1;
}

/* Derived datatypes over MPI_INT with gaps, odd lower bounds and
 * non-monotone type maps, for the v and w tests.  sig = number of ints. */
enum {
    OT_INT,    /* MPI_INT */
    OT_RES,    /* int resized to extent 12: 8-byte gap after it */
    OT_RESLB,  /* int resized to lb -8, extent 16 */
    OT_CONT2,  /* 2 contiguous ints */
    OT_VEC,    /* vector(2, 1, 3): ints 0 and 3 */
    OT_LB,     /* indexed_block ints 2 and 5: lb 8 bytes */
    OT_VECNEG, /* vector(2, 1, -2): ints 0 then -2 (decreasing type map) */
    OT_IDXREV, /* indexed {1 at 3, 2 at 0}: non-monotone, gap at int 2 */
    OT_IDX,    /* indexed {2 at 0, 1 at 3, 1 at 5}: gaps at ints 2, 4 */
    OT_N
};
static MPI_Datatype oracle_type[OT_N];
static int oracle_type_sig[OT_N];

static void __attribute__((unused)) oracle_types_create(void)
{
    int bl[3] = {2, 1, 1}, dp[3] = {0, 3, 5}, bl2[2] = {1, 2}, dp2[2] = {3, 0}, dp3[2] = {2, 5};
    oracle_type[OT_INT] = MPI_INT;
    MPI_Type_create_resized(MPI_INT, 0, 12, &oracle_type[OT_RES]);
    MPI_Type_create_resized(MPI_INT, -8, 16, &oracle_type[OT_RESLB]);
    MPI_Type_contiguous(2, MPI_INT, &oracle_type[OT_CONT2]);
    MPI_Type_vector(2, 1, 3, MPI_INT, &oracle_type[OT_VEC]);
    MPI_Type_create_indexed_block(2, 1, dp3, MPI_INT, &oracle_type[OT_LB]);
    MPI_Type_vector(2, 1, -2, MPI_INT, &oracle_type[OT_VECNEG]);
    MPI_Type_indexed(2, bl2, dp2, MPI_INT, &oracle_type[OT_IDXREV]);
    MPI_Type_indexed(3, bl, dp, MPI_INT, &oracle_type[OT_IDX]);
    for (int k = 0; k < OT_N; k++) {
        int size;
        if (k != OT_INT)
            MPI_Type_commit(&oracle_type[k]);
        MPI_Type_size(oracle_type[k], &size);
        oracle_type_sig[k] = size / (int)sizeof(int);
    }
}

static void __attribute__((unused)) oracle_types_free(void)
{
    for (int k = 1; k < OT_N; k++)
        MPI_Type_free(&oracle_type[k]);
}

/* Where count x type at displacement 0 puts its bytes: [*lo, *lo + *len).
 * Element k starts at k * extent; with a negative extent the last element
 * is the lowest. */
static void __attribute__((unused))
oracle_footprint(int count, MPI_Datatype type, MPI_Aint *lo, MPI_Aint *len)
{
    MPI_Aint lb, ext, tlb, text, last;
    MPI_Type_get_extent(type, &lb, &ext);
    MPI_Type_get_true_extent(type, &tlb, &text);
    last = count > 0 ? (MPI_Aint)(count - 1) * ext : 0;
    *lo = tlb + (last < 0 ? last : 0);
    *len = count > 0 ? (last < 0 ? -last : last) + text : 0;
}

/* As oracle_alltoallw, but all receives and sends are posted at once
 * (MPI_Irecv/MPI_Isend per neighbor index, tag i) on comm, a duplicate of
 * cart the caller made once: the same reference result without s sequential
 * round trips and a communicator duplication per call. */
static void __attribute__((unused))
oracle_alltoallw_on(const void *sendbuf, const int scounts[], const MPI_Aint sdispls[],
                    const MPI_Datatype stypes[], void *recvbuf, const int rcounts[],
                    const MPI_Aint rdispls[], const MPI_Datatype rtypes[], MPI_Comm cart,
                    MPI_Comm comm, const nbh_t *n)
{
    int *src = malloc(sizeof(int) * (size_t)(n->s + 1));
    int *dst = malloc(sizeof(int) * (size_t)(n->s + 1));
    MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(2 * n->s + 1));
    MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(2 * n->s + 1));
    oracle_neighbors(cart, n, src, dst);
    for (int i = 0; i < n->s; i++)
        MPI_Irecv((char *)recvbuf + rdispls[i], rcounts[i], rtypes[i], src[i], i, comm, &req[i]);
    for (int i = 0; i < n->s; i++)
        MPI_Isend((const char *)sendbuf + sdispls[i], scounts[i], stypes[i], dst[i], i, comm,
                  &req[n->s + i]);
    MPI_Waitall(2 * n->s, req, st);
    free(st);
    free(req);
    free(src);
    free(dst);
}
#endif
