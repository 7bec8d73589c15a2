/* Threads (issue 14, item 6): under MPI_THREAD_MULTIPLE, two threads per
 * process call collectives at the same time on two isocomms (duplicates of
 * one Cartesian communicator, each with its own algorithm and combining
 * mode).  Each thread creates its neighborhood itself, so the library's
 * first use (keyval, error classes) happens in two threads at once; then
 * it runs blocking alltoalls, pairs of nonblocking allgather/alltoall
 * completed by Iso_test loops (each thread's tests progress the other
 * thread's requests too), and a persistent reduce started every iteration.
 * Results are checked against the oracle (Sendrecv exchange computed before
 * the threads start; reductions summed serially), shifted per iteration so
 * stale data shows.  Skipped if the MPI library does not provide
 * MPI_THREAD_MULTIPLE.
 *
 * NPROCS: 2 3
 * PER-ALGORITHM: no
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define NT 2
#define ITERS 40
#define SMAX 16

static int rank;
static int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1, 0, 0};
static nbh_t nb = {2, (int)(sizeof off / sizeof off[0]) / 2, off};

typedef struct {
    int id;
    MPI_Comm comm; /* plain duplicate of the Cartesian communicator */
    const char *alg, *mode;
    int a2a_send[2 * SMAX], ag_send[2 * SMAX];
    int a2a_want[2 * SMAX], ag_want[2 * SMAX], red_want[2];
    int indeg;
    long errors;
    char first[256];
} job_t;

/* A failed check of a thread: counted, the first one kept for main. */
#define TCHECK(j, cond, ...)                                                                      \
    do {                                                                                          \
        if (!(cond) && (j)->errors++ == 0)                                                        \
            snprintf((j)->first, sizeof (j)->first, __VA_ARGS__);                                 \
    } while (0)

static int salt_value(int id, int q, int k)
{
    return 1000000 * (id + 1) + 1000 * q + k;
}

/* Expected results from the oracle (main thread, before the threads). */
static void job_setup(job_t *j, MPI_Comm cart, MPI_Comm ocomm)
{
    int s = nb.s, src[SMAX], dst[SMAX], cnt[SMAX];
    MPI_Aint dsp[SMAX];
    MPI_Datatype ty[SMAX];
    for (int k = 0; k < 2 * s; k++) {
        j->a2a_send[k] = salt_value(j->id, rank, k);
        j->ag_send[k] = salt_value(j->id, rank, k % 2); /* one block, sent to all */
    }
    for (int i = 0; i < s; i++)
        cnt[i] = 2, dsp[i] = (MPI_Aint)(2 * i * sizeof(int)), ty[i] = MPI_INT;
    oracle_alltoallw_on(j->a2a_send, cnt, dsp, ty, j->a2a_want, cnt, dsp, ty, cart, ocomm, &nb);
    oracle_alltoallw_on(j->ag_send, cnt, dsp, ty, j->ag_want, cnt, dsp, ty, cart, ocomm, &nb);
    oracle_neighbors(cart, &nb, src, dst);
    j->red_want[0] = j->red_want[1] = 0;
    j->indeg = 0;
    for (int i = 0; i < s; i++)
        if (src[i] != MPI_PROC_NULL) {
            j->indeg++;
            j->red_want[0] += salt_value(j->id, src[i], 0);
            j->red_want[1] += salt_value(j->id, src[i], 1);
        }
}

static void check_shifted(job_t *j, const int *got, const int *want, int n, int shift,
                          const char *what, int it)
{
    for (int k = 0; k < n; k++)
        if (got[k] != want[k] + shift) {
            TCHECK(j, 0, "thread %d (%s:%s) iteration %d: %s[%d] = %d, expected %d", j->id, j->alg,
                   j->mode, it, what, k, got[k], want[k] + shift);
            return;
        }
}

static void *job_run(void *arg)
{
    job_t *j = arg;
    int s = nb.s, n = 2 * s, rc, flag1, flag2;
    int sa[2 * SMAX], sg[2 * SMAX], sr[2], ra[2 * SMAX], rg[2 * SMAX], rr[2];
    MPI_Info info;
    MPI_Comm iso;
    Iso_request pers = ISO_REQUEST_NULL, r1, r2;
    Iso_error e = ISO_ERR_NONE;

    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", j->alg);
    MPI_Info_set(info, "iso_combine", j->mode);
    rc = Iso_neighborhood_create_with_info(j->comm, s, off, info, &iso);
    MPI_Info_free(&info);
    TCHECK(j, rc == MPI_SUCCESS, "thread %d: create rc=%d", j->id, rc);
    if (rc != MPI_SUCCESS)
        return NULL;
    /* a library error found in both threads at once (first registration) */
    rc = Iso_neighbor_alltoall(sa, -1, MPI_INT, ra, 2, MPI_INT, iso);
    Iso_error_class(rc, &e);
    TCHECK(j, e == ISO_ERR_COUNT, "thread %d: count -1 gave rc %d (class %d)", j->id, rc, (int)e);
    rc = Iso_neighbor_reduce_init(sr, rr, 2, MPI_INT, MPI_SUM, iso, MPI_INFO_NULL, &pers);
    TCHECK(j, rc == MPI_SUCCESS, "thread %d: reduce_init rc=%d", j->id, rc);

    for (int it = 0; it < ITERS && rc == MPI_SUCCESS; it++) {
        int shift = 7 * it;
        for (int k = 0; k < n; k++) {
            sa[k] = j->a2a_send[k] + shift;
            sg[k] = j->ag_send[k] + shift;
            ra[k] = rg[k] = -1;
        }
        sr[0] = j->ag_send[0] + shift;
        sr[1] = j->ag_send[1] + shift;
        rc = Iso_neighbor_alltoall(sa, 2, MPI_INT, ra, 2, MPI_INT, iso);
        TCHECK(j, rc == MPI_SUCCESS, "thread %d: alltoall rc=%d", j->id, rc);
        check_shifted(j, ra, j->a2a_want, n, shift, "blocking alltoall", it);

        for (int k = 0; k < n; k++)
            ra[k] = -1;
        rc = Iso_ineighbor_allgather(sg, 2, MPI_INT, rg, 2, MPI_INT, iso, &r1);
        if (rc == MPI_SUCCESS)
            rc = Iso_ineighbor_alltoall(sa, 2, MPI_INT, ra, 2, MPI_INT, iso, &r2);
        TCHECK(j, rc == MPI_SUCCESS, "thread %d: nonblocking calls rc=%d", j->id, rc);
        flag1 = flag2 = 0;
        while (rc == MPI_SUCCESS && !(flag1 && flag2)) {
            if (!flag2)
                rc = Iso_test(&r2, &flag2);
            if (rc == MPI_SUCCESS && !flag1)
                rc = Iso_test(&r1, &flag1);
        }
        TCHECK(j, rc == MPI_SUCCESS, "thread %d: Iso_test rc=%d", j->id, rc);
        check_shifted(j, rg, j->ag_want, n, shift, "nonblocking allgather", it);
        check_shifted(j, ra, j->a2a_want, n, shift, "nonblocking alltoall", it);

        rr[0] = rr[1] = -1;
        if (rc == MPI_SUCCESS && (rc = Iso_start(&pers)) == MPI_SUCCESS)
            rc = Iso_wait(&pers);
        TCHECK(j, rc == MPI_SUCCESS, "thread %d: persistent reduce rc=%d", j->id, rc);
        check_shifted(j, rr, j->red_want, j->indeg > 0 ? 2 : 0, j->indeg * shift,
                      "persistent reduce", it);
    }
    Iso_request_free(&pers);
    Iso_neighborhood_free(&iso);
    return NULL;
}

static void run_pair(MPI_Comm cart, MPI_Comm ocomm, const char *alg0, const char *mode0,
                     const char *alg1, const char *mode1)
{
    job_t job[NT] = {{.id = 0, .alg = alg0, .mode = mode0}, {.id = 1, .alg = alg1, .mode = mode1}};
    pthread_t th[NT];
    for (int t = 0; t < NT; t++) {
        MPI_Comm_dup(cart, &job[t].comm);
        MPI_Comm_set_errhandler(job[t].comm, MPI_ERRORS_RETURN);
        job_setup(&job[t], cart, ocomm);
    }
    for (int t = 0; t < NT; t++)
        CHECK(pthread_create(&th[t], NULL, job_run, &job[t]) == 0, "pthread_create");
    for (int t = 0; t < NT; t++) {
        pthread_join(th[t], NULL);
        CHECK(job[t].errors == 0, "%ld errors, the first: %s", job[t].errors, job[t].first);
        MPI_Comm_free(&job[t].comm);
    }
    tap_result(MPI_COMM_WORLD,
               "two threads at once on two isocomms (%s:%s and %s:%s): blocking, nonblocking "
               "(Iso_test loops), persistent; first use of the library in both",
               alg0, mode0, alg1, mode1);
}

int main(int argc, char **argv)
{
    int provided, p, dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm cart, ocomm;
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    if (provided < MPI_THREAD_MULTIPLE) {
        tap_skip(MPI_COMM_WORLD, "the MPI library does not provide MPI_THREAD_MULTIPLE",
                 "two threads at once on two isocomms");
        MPI_Finalize();
        return 0;
    }
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    run_pair(cart, ocomm, "dimwise", "datatype", "bruck", "pack");
    run_pair(cart, ocomm, "direct", "pack", "dimwise", "pack");
    MPI_Comm_free(&ocomm);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
