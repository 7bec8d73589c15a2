/* Error handling shared by the benchmark programs (bench/calibrate.c,
 * bench/isobench.c, stencil/isostencil.c): a failed MPI or isocoll call
 * ends the whole run.  Header only.
 *
 *   TRY(call)                  die() unless call returns MPI_SUCCESS
 *   die(what, rc, file, line)  prints what failed with rc's error string,
 *                              then MPI_Abort(MPI_COMM_WORLD, 2)
 *   xmalloc(n)                 malloc, or the same end when memory runs out
 *
 * (The tests' CHECK, tests/tap.h, counts an error and goes on; here there
 * is nothing sensible to time after an error, so these stop.  Not
 * "MPI_TRY": the MPI standard reserves the MPI_ prefix to itself.) */
#ifndef ISO_BENCH_H
#define ISO_BENCH_H
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

/* rc is an MPI error code or class, or an isocoll code (MPI_Error_string
 * knows both).  Message: "rank R: WHAT failed at FILE:LINE: <error string>";
 * the file names the program. */
__attribute__((noreturn, unused)) static void die(const char *what, int rc, const char *file,
                                                  int line)
{
    char msg[MPI_MAX_ERROR_STRING] = "";
    int len = 0, rank = -1;
    MPI_Error_string(rc, msg, &len);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    fprintf(stderr, "rank %d: %s failed at %s:%d: %s\n", rank, what, file, line, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2); /* not reached: MPI_Abort does not return, but is not declared noreturn */
}

/* malloc that ends the run when memory runs out; n = 0 gives a pointer too. */
__attribute__((unused)) static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        int rank = -1;
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "rank %d: out of memory (%zu bytes)\n", rank, n);
        MPI_Abort(MPI_COMM_WORLD, 2);
        exit(2); /* not reached */
    }
    return p;
}

/* qsort and bsearch comparison of ints, ascending. */
static inline int bench_cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* qsort comparison of doubles, ascending. */
static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Pseudo-random numbers, the same sequence on every process (so that all
 * agree on random orders without communicating). */
static inline unsigned bench_random(unsigned *state)
{
    *state = *state * 1103515245u + 12345u;
    return *state >> 8;
}

/* order[0..n-1] = a random permutation of 0..n-1 (Fisher-Yates). */
static inline void bench_random_order(int *order, int n, unsigned *state)
{
    for (int k = 0; k < n; k++)
        order[k] = k;
    for (int k = n - 1; k > 0; k--) {
        int r = (int)(bench_random(state) % (unsigned)(k + 1)), tmp = order[k];
        order[k] = order[r];
        order[r] = tmp;
    }
}

#define TRY(call)                                                                                 \
    do {                                                                                          \
        int try_rc_ = (call);                                                                     \
        if (try_rc_ != MPI_SUCCESS)                                                               \
            die(#call, try_rc_, __FILE__, __LINE__);                                              \
    } while (0)
#endif
