/* The paper's generalized neighborhoods (EuroMPI'15, section 7), shared by
 * the benchmark programs (bench/isobench.c, bench/isosetup.c, and the huge
 * random ones of bench/isobuild.c, bench/isohuge.c): offsets of
 * Moore (Chebyshev) or von Neumann (Manhattan) norm between an inner and an
 * outer radius, in row-major, column-major or one random order, and the
 * ranks at those offsets computed from the Cartesian topology alone
 * (independently of the library).  Header only. */
#ifndef ISO_BENCH_NEIGHBORHOOD_H
#define ISO_BENCH_NEIGHBORHOOD_H
#include <math.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define NBH_MAXD 8

static inline void *nbh_malloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL)
        die("malloc (neighborhood)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    return p;
}

/* Offsets c with inner < norm(c) <= r in row-major order (last coordinate
 * fastest) or column-major order (first fastest); Chebyshev norm (Moore)
 * or Manhattan norm (von Neumann). */
static inline int make_offsets(int d, int r, int inner, int colmajor, int moore,
                               int **out)
{
    int c[NBH_MAXD], n = 0, total = 1;
    int *off;
    for (int j = 0; j < d; j++)
        total *= 2 * r + 1;
    off = nbh_malloc(sizeof(int) * (size_t)total * (size_t)d);
    for (int j = 0; j < d; j++)
        c[j] = -r;
    for (;;) {
        int norm = 0, j;
        for (j = 0; j < d; j++) {
            int a = abs(c[j]);
            norm = moore ? (a > norm ? a : norm) : norm + a;
        }
        if (norm > inner && norm <= r) {
            memcpy(off + (size_t)n * d, c, sizeof(int) * (size_t)d);
            n++;
        }
        if (colmajor) {
            for (j = 0; j < d && c[j] == r; j++)
                c[j] = -r;
            if (j == d)
                break;
        } else {
            for (j = d - 1; j >= 0 && c[j] == r; j--)
                c[j] = -r;
            if (j < 0)
                break;
        }
        c[j]++;
    }
    *out = off;
    return n;
}

/* One random order of the offsets, the same on every process (a fixed
 * seed), so that every process names the same neighborhood. */
static inline void shuffle_offsets(int *off, int s, int d)
{
    unsigned state = 4711;
    for (int i = s - 1; i > 0; i--) {
        int r = (int)(bench_random(&state) % (unsigned)(i + 1)), tmp[NBH_MAXD];
        memcpy(tmp, off + (size_t)i * d, sizeof(int) * (size_t)d);
        memcpy(off + (size_t)i * d, off + (size_t)r * d, sizeof(int) * (size_t)d);
        memcpy(off + (size_t)r * d, tmp, sizeof(int) * (size_t)d);
    }
}

/* s distinct random offsets in [-R, R]^3 from a fixed seed (the same on
 * every process), R so that they fill about half the cube: the huge
 * neighborhoods of bench/isobuild.c and bench/isohuge.c.  *r_out = R. */
static inline int *nbh_random_offsets(int s, int *r_out)
{
    int r = (int)ceil(cbrt(2.0 * s) / 2.0) + 1, side = 2 * r + 1;
    char *used = nbh_malloc((size_t)side * side * side);
    int *off = nbh_malloc(sizeof(int) * 3 * (size_t)s);
    unsigned x = 12345u;
    memset(used, 0, (size_t)side * side * side);
    for (int n = 0; n < s;) {
        int c[3];
        size_t key = 0;
        for (int j = 0; j < 3; j++) {
            x = x * 1103515245u + 12345u;
            c[j] = (int)((x >> 8) % (unsigned)side) - r;
            key = key * (size_t)side + (size_t)(c[j] + r);
        }
        if (used[key])
            continue;
        used[key] = 1;
        memcpy(off + 3 * (size_t)n++, c, sizeof c);
    }
    free(used);
    *r_out = r;
    return off;
}

/* Non-zero if a fully given process grid does not have nprocs processes
 * (zeros are left to MPI_Dims_create, which then checks divisibility). */
static inline int dims_mismatch(int d, const int *dims, int nprocs)
{
    long prod = 1;
    for (int j = 0; j < d; j++) {
        if (dims[j] == 0)
            return nprocs % (prod > 0 ? prod : 1) != 0;
        prod *= dims[j];
    }
    return prod != nprocs;
}

/* Rank at my coordinates + sign * c, computed here from the Cartesian
 * topology (independently of the library), MPI_PROC_NULL off the mesh. */
static inline int shifted_rank(MPI_Comm cart, int d, const int *dims, const int *periods,
                        const int *mine, const int *c, int sign)
{
    int x[NBH_MAXD], rank;
    for (int j = 0; j < d; j++) {
        x[j] = mine[j] + sign * c[j];
        if (periods[j])
            x[j] = ((x[j] % dims[j]) + dims[j]) % dims[j];
        else if (x[j] < 0 || x[j] >= dims[j])
            return MPI_PROC_NULL;
    }
    TRY(MPI_Cart_rank(cart, x, &rank));
    return rank;
}

/* A comma-separated list of at most max integers in [0, 2^30]: their
 * number, or -1. */
static inline int nbh_parse_list(const char *s, int *out, int max)
{
    int n = 0;
    char *end;
    while (*s && n < max) {
        long v = strtol(s, &end, 10);
        if (end == s || v < 0 || v > 1 << 30)
            return -1;
        out[n++] = (int)v;
        s = *end == ',' ? end + 1 : end;
        if (*end && *end != ',')
            return -1;
    }
    return *s ? -1 : n;
}

/* --periodic (1) or --mesh (0) into *periodic: 1 if a is one, else 0. */
static inline int nbh_parse_periodic(const char *a, int *periodic)
{
    if (strcmp(a, "--periodic") && strcmp(a, "--mesh"))
        return 0;
    *periodic = !strcmp(a, "--periodic");
    return 1;
}

/* The options that name a neighborhood, shared by the programs: --shape
 * moore|vonneumann, --radius R, --dim D, --dims a,b,.. (sets D too).
 * 1 if a is one of them (its value v stored), 0 if not, -1 if v is bad. */
static inline int nbh_parse_shape(const char *a, const char *v, int *moore, int *radius, int *d,
                                  int *dims)
{
    int nd;
    if (!strcmp(a, "--shape")) {
        if (strcmp(v, "moore") && strcmp(v, "vonneumann"))
            return -1;
        *moore = !strcmp(v, "moore");
    } else if (!strcmp(a, "--radius"))
        *radius = atoi(v);
    else if (!strcmp(a, "--dim"))
        *d = atoi(v);
    else if (!strcmp(a, "--dims")) {
        if ((nd = nbh_parse_list(v, dims, NBH_MAXD)) <= 0)
            return -1;
        *d = nd;
    } else
        return 0;
    return 1;
}
#endif
