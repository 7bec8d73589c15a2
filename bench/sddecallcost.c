/* sddecallcost: a driver for counting what one call of the sparse dynamic
 * data exchange costs the library (instructions under callgrind, MPI
 * calls), for the SDDE's per-call overheads.  Every process sends one
 * message to each of its --degree right neighbours on a ring (rank + 1,
 * rank + 2, ...): --form c one int (Iso_alltoall_crs), --form v
 * --count doubles (Iso_alltoallv_crs).  It runs --iters calls after
 * --warmup untimed ones with info iso_sparse_algorithm = --algorithm; only
 * the measured loop is in call_loop(), so that
 *   valgrind --tool=callgrind --toggle-collect=call_loop sddecallcost ...
 * counts nothing else.  The library's MPI calls in the loop are counted
 * through the profiling interface (mpicount.h) and printed per call, and
 * the loop's wall time per call too (meaningless under valgrind).
 *
 *   mpiexec -n P sddecallcost [--form c|v] [--count N] [--degree D]
 *       [--algorithm personalized|nbx|vpt|...|auto] [--iters K] [--warmup W] [--time 1]
 *
 * --time 1 also prints the time per call spent inside each MPI function
 * (rank 0; the timer's calls are in that time, so not under callgrind).
 * The outputs of the last call are checked: sources ascending, the values
 * each source sent (its rank, the element index). */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "mpicount.h" /* counting the library's MPI calls (profiling interface) */

/* the calls an SDDE call makes besides mpicount.h's */
COUNTED(int, MPI_Comm_size, (MPI_Comm c, int *s), (c, s))
COUNTED(int, MPI_Comm_rank, (MPI_Comm c, int *r), (c, r))
COUNTED(int, MPI_Comm_test_inter, (MPI_Comm c, int *f), (c, f))
COUNTED(int, MPI_Info_get, (MPI_Info i, const char *k, int l, char *v, int *f), (i, k, l, v, f))
COUNTED(int, MPI_Info_get_nkeys, (MPI_Info i, int *n), (i, n))
COUNTED(int, MPI_Issend, (const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm,
                          MPI_Request *r), (b, c, t, d, tag, comm, r))
COUNTED(int, MPI_Ireduce_scatter_block, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op,
                                         MPI_Comm c, MPI_Request *q), (s, r, n, t, op, c, q))
COUNTED(int, MPI_Ibarrier, (MPI_Comm c, MPI_Request *q), (c, q))
COUNTED(int, MPI_Wait, (MPI_Request *r, MPI_Status *st), (r, st))
COUNTED(int, MPI_Mrecv, (void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Status *st),
        (b, n, t, m, st))
COUNTED(int, MPI_Request_free, (MPI_Request *r), (r))
COUNTED(int, MPI_Iallreduce, (const void *s, void *r, int n, MPI_Datatype t, MPI_Op op, MPI_Comm c,
                              MPI_Request *q), (s, r, n, t, op, c, q))

typedef struct {
    int constant, n, count, *dest, *counts, *displs;
    double *vals;
    int *ivals;
    MPI_Info info;
    MPI_Comm comm;
    /* the outputs of the last call */
    int nrecv, *src, *rcounts, *rdispls;
    void *rvals;
} call;

static void outputs_free(call *c)
{
    free(c->src);
    free(c->rcounts);
    free(c->rdispls);
    free(c->rvals);
    c->src = c->rcounts = c->rdispls = NULL;
    c->rvals = NULL;
}

static void one_call(call *c)
{
    outputs_free(c);
    if (c->constant)
        TRY(Iso_alltoall_crs(c->n, c->dest, 1, MPI_INT, c->ivals, &c->nrecv, &c->src, 1, MPI_INT,
                             &c->rvals, c->info, c->comm));
    else
        TRY(Iso_alltoallv_crs(c->n, c->dest, c->counts, c->displs, MPI_DOUBLE, c->vals, &c->nrecv,
                              &c->src, &c->rcounts, &c->rdispls, MPI_DOUBLE, &c->rvals, c->info,
                              c->comm));
}

__attribute__((noinline)) static void call_loop(call *c, int iters)
{
    for (int k = 0; k < iters; k++)
        one_call(c);
}

static const char *arg_str(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return dflt;
}

static int arg_int(int argc, char **argv, const char *name, int dflt)
{
    const char *s = arg_str(argc, argv, name, NULL);
    return s ? atoi(s) : dflt;
}

/* The outputs of one call: from each left neighbour rank - d (d = 1..n,
 * distinct ranks), sources ascending, its rank (constant) or count values
 * rank * 1000 + j. */
static int check(const call *c, int rank, int p)
{
    int bad = 0, k = 0;
    for (int s = 0; s < p; s++) {
        int d = (rank - s + p) % p;
        if (d < 1 || d > c->n)
            continue;
        if (k >= c->nrecv || c->src[k] != s)
            return 1;
        if (c->constant)
            bad += ((int *)c->rvals)[k] != s;
        else {
            bad += c->rcounts[k] != c->count;
            for (int j = 0; j < c->count && !bad; j++)
                bad += ((double *)c->rvals)[c->rdispls[k] + j] != s * 1000.0 + j;
        }
        k++;
    }
    return bad || k != c->nrecv;
}

int main(int argc, char **argv)
{
    const char *alg = arg_str(argc, argv, "--algorithm", "personalized");
    int iters = arg_int(argc, argv, "--iters", 1000), warmup = arg_int(argc, argv, "--warmup", 20);
    int degree = arg_int(argc, argv, "--degree", 1), rank, p, bad;
    call c = {.constant = strcmp(arg_str(argc, argv, "--form", "c"), "v") != 0,
              .count = arg_int(argc, argv, "--count", 64)};
    long long calls;
    double t;

    timing = arg_int(argc, argv, "--time", 0);
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    c.comm = MPI_COMM_WORLD;
    c.n = degree < p - 1 ? degree : p - 1;
    c.dest = xmalloc(sizeof(int) * (size_t)(c.n + 1));
    c.counts = xmalloc(sizeof(int) * (size_t)(c.n + 1));
    c.displs = xmalloc(sizeof(int) * (size_t)(c.n + 1));
    c.vals = xmalloc(sizeof(double) * (size_t)(c.n * c.count + 1));
    c.ivals = xmalloc(sizeof(int) * (size_t)(c.n + 1));
    for (int i = 0; i < c.n; i++) {
        c.dest[i] = (rank + 1 + i) % p;
        c.counts[i] = c.count;
        c.displs[i] = i * c.count;
        c.ivals[i] = rank;
        for (int j = 0; j < c.count; j++)
            c.vals[i * c.count + j] = rank * 1000.0 + j;
    }
    TRY(MPI_Info_create(&c.info));
    TRY(MPI_Info_set(c.info, "iso_sparse_algorithm", alg));
    for (int k = 0; k < warmup; k++)
        one_call(&c);
    TRY(MPI_Barrier(c.comm));
    counting = 1;
    t = MPI_Wtime();
    call_loop(&c, iters);
    t = MPI_Wtime() - t;
    counting = 0;
    calls = mpi_calls;
    bad = check(&c, rank, p);
    if (rank == 0)
        printf("sddecallcost: %d ranks, %s, %d messages of %d %s, %s: %.3f MPI calls per call, "
               "%.2f us per call, %s\n",
               p, c.constant ? "Iso_alltoall_crs" : "Iso_alltoallv_crs", c.n,
               c.constant ? 1 : c.count, c.constant ? "int" : "doubles", alg,
               (double)calls / iters, t / iters * 1e6, bad ? "WRONG" : "checked");
    for (int k = 0; k < ncounted && rank == 0; k++)
        if (timing)
            printf("  %-28s %.3f per call, inside %.1f us\n", counted_name[k],
                   (double)counted_calls[k] / iters, counted_time[k] / iters * 1e6);
        else
            printf("  %-28s %.3f per call\n", counted_name[k], (double)counted_calls[k] / iters);
    outputs_free(&c);
    MPI_Info_free(&c.info);
    free(c.dest);
    free(c.counts);
    free(c.displs);
    free(c.vals);
    free(c.ivals);
    MPI_Finalize();
    return bad != 0;
}
