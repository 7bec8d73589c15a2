/* The paper's generalized neighborhoods (EuroMPI'15, section 7), shared by
 * the benchmark programs (bench/isobench.c, bench/isosetup.c): offsets of
 * Moore (Chebyshev) or von Neumann (Manhattan) norm between an inner and an
 * outer radius, in row-major, column-major or one random order, and the
 * ranks at those offsets computed from the Cartesian topology alone
 * (independently of the library).  Header only. */
#ifndef ISO_BENCH_NEIGHBORHOOD_H
#define ISO_BENCH_NEIGHBORHOOD_H
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
        int r, tmp[NBH_MAXD];
        state = state * 1103515245u + 12345u;
        r = (int)((state >> 8) % (unsigned)(i + 1));
        memcpy(tmp, off + (size_t)i * d, sizeof(int) * (size_t)d);
        memcpy(off + (size_t)i * d, off + (size_t)r * d, sizeof(int) * (size_t)d);
        memcpy(off + (size_t)r * d, tmp, sizeof(int) * (size_t)d);
    }
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

#endif
