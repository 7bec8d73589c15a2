/* MPI_Ibarrier and MPI_Iallreduce as the library uses them (core/agree.c,
 * mailbox/quiesce.c, sparse/nbx.c and rma.c): under MPICH and Open MPI
 * this checks the MPI; under SMPI it checks src/compat/smpi.c's log p
 * schedules, which replace SMPI's own (its MPI_Ibarrier lets processes
 * leave before all have entered).
 *   - a barrier waits for the last process: every other process enters,
 *     lets time pass (two blocking barriers among themselves), tests its
 *     barrier (it must not be complete), and only then tells the last
 *     process, which enters after hearing from all;
 *   - allreduce of 1, 2 and 5 elements with SUM, MAX (long long), MIN
 *     (double), BOR, LAND (int), and SUM in place, against the serial
 *     reduction of every process's contribution (each computed from its
 *     rank, so every process knows them all; the values are exact);
 *   - five collectives outstanding at once on one communicator (barriers
 *     and allreduces mixed), completed in reverse order by MPI_Wait on
 *     some ranks, by MPI_Waitall or an MPI_Waitany loop on others;
 *   - 40 allreduces in a sliding window of 4 outstanding, completed by
 *     MPI_Test loops, each with its own values.
 * The rank counts include non-powers of two (the schedules' fold).
 *
 * NPROCS: 1 2 3 5 8 13
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tap.h"

static int rank, nprocs;

/* Process r's element j of test t. */
static long long v_ll(int t, int r, int j)
{
    return (long long)((r * 7 + j * 3 + t * 5) % 11) - 4 + (long long)r * (j + 1);
}

static double v_dbl(int t, int r, int j)
{
    return 0.5 * (double)((r * 5 + j + t) % 9) - (double)j;
}

static int v_int(int t, int r, int j)
{
    return (1 << ((r + j + t) % 30)) | (r % 3 == 2 && j == 1 ? 0 : 1);
}

static void barrier_waits(MPI_Comm comm)
{
    int last = nprocs - 1;
    MPI_Request req;
    if (nprocs == 1) {
        int flag = 0;
        CHECK(MPI_Ibarrier(comm, &req) == MPI_SUCCESS, "MPI_Ibarrier");
        for (int k = 0; k < 1000 && !flag; k++)
            MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(flag, "barrier of one process not complete");
        if (!flag)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
        return;
    }
    MPI_Comm others;
    MPI_Comm_split(MPI_COMM_WORLD, rank == last, rank, &others);
    if (rank != last) {
        int flag = 1;
        CHECK(MPI_Ibarrier(comm, &req) == MPI_SUCCESS, "MPI_Ibarrier");
        MPI_Barrier(others);
        MPI_Barrier(others);
        MPI_Test(&req, &flag, MPI_STATUS_IGNORE);
        CHECK(!flag, "barrier complete before the last process entered");
        MPI_Send(NULL, 0, MPI_BYTE, last, 1, MPI_COMM_WORLD);
        if (!flag)
            MPI_Wait(&req, MPI_STATUS_IGNORE);
    } else {
        for (int i = 0; i < last; i++)
            MPI_Recv(NULL, 0, MPI_BYTE, i, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        CHECK(MPI_Ibarrier(comm, &req) == MPI_SUCCESS, "MPI_Ibarrier");
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    MPI_Comm_free(&others);
}

/* One allreduce of test t: count elements of kind (0 SUM, 1 MAX long long,
 * 2 MIN double, 3 BOR int, 4 LAND int, 5 SUM long long in place), started
 * into *req; check_reduce checks the result after completion. */
typedef struct {
    int t, kind, count;
    long long ll[5];
    double d[5];
    int in[5], out[5];
    long long llout[5];
    double dout[5];
} reduce_case;

static void start_reduce(reduce_case *c, MPI_Comm comm, MPI_Request *req)
{
    int err = MPI_SUCCESS;
    for (int j = 0; j < c->count; j++) {
        c->ll[j] = v_ll(c->t, rank, j);
        c->d[j] = v_dbl(c->t, rank, j);
        c->in[j] = c->kind == 4 ? v_int(c->t, rank, j) & 1 : v_int(c->t, rank, j); /* LAND: 0, 1 */
        c->llout[j] = c->out[j] = -77;
        c->dout[j] = -77.0;
    }
    switch (c->kind) {
    case 0: err = MPI_Iallreduce(c->ll, c->llout, c->count, MPI_LONG_LONG, MPI_SUM, comm, req); break;
    case 1: err = MPI_Iallreduce(c->ll, c->llout, c->count, MPI_LONG_LONG, MPI_MAX, comm, req); break;
    case 2: err = MPI_Iallreduce(c->d, c->dout, c->count, MPI_DOUBLE, MPI_MIN, comm, req); break;
    case 3: err = MPI_Iallreduce(c->in, c->out, c->count, MPI_INT, MPI_BOR, comm, req); break;
    case 4: err = MPI_Iallreduce(c->in, c->out, c->count, MPI_INT, MPI_LAND, comm, req); break;
    default:
        memcpy(c->llout, c->ll, sizeof c->ll);
        err = MPI_Iallreduce(MPI_IN_PLACE, c->llout, c->count, MPI_LONG_LONG, MPI_SUM, comm, req);
    }
    CHECK(err == MPI_SUCCESS, "MPI_Iallreduce kind %d", c->kind);
}

static void check_reduce(const reduce_case *c)
{
    for (int j = 0; j < c->count; j++) {
        long long ll = c->kind == 1 ? v_ll(c->t, 0, j) : 0;
        double d = v_dbl(c->t, 0, j);
        int in = c->kind == 4 ? 1 : 0;
        for (int r = 0; r < nprocs; r++) {
            long long x = v_ll(c->t, r, j);
            double y = v_dbl(c->t, r, j);
            ll = c->kind == 1 ? (x > ll ? x : ll) : ll + x;
            d = y < d ? y : d;
            in = c->kind == 4 ? in && (v_int(c->t, r, j) & 1) : in | v_int(c->t, r, j);
        }
        if (c->kind == 0 || c->kind == 1 || c->kind == 5)
            CHECK_EQ_INT(c->llout[j], ll, "test %d kind %d element %d", c->t, c->kind, j);
        else if (c->kind == 2)
            CHECK(c->dout[j] == d, "test %d MIN element %d: got %g, want %g", c->t, j, c->dout[j], d);
        else
            CHECK_EQ_INT(c->out[j], in, "test %d kind %d element %d", c->t, c->kind, j);
    }
}

static void reduce_values(MPI_Comm comm)
{
    static const int counts[] = {1, 2, 5};
    int t = 0;
    for (int kind = 0; kind < 6; kind++)
        for (int k = 0; k < 3; k++) {
            reduce_case c = {.t = t++, .kind = kind, .count = counts[k]};
            MPI_Request req;
            start_reduce(&c, comm, &req);
            MPI_Wait(&req, MPI_STATUS_IGNORE);
            check_reduce(&c);
        }
}

/* Five outstanding: barrier, SUM, MAX of 3, barrier, in-place SUM of 2. */
static void outstanding(MPI_Comm comm)
{
    reduce_case c[3] = {{.t = 100, .kind = 0, .count = 1},
                        {.t = 101, .kind = 1, .count = 3},
                        {.t = 102, .kind = 5, .count = 2}};
    MPI_Request req[5];
    MPI_Status st[5];
    CHECK(MPI_Ibarrier(comm, &req[0]) == MPI_SUCCESS, "MPI_Ibarrier");
    start_reduce(&c[0], comm, &req[1]);
    start_reduce(&c[1], comm, &req[2]);
    CHECK(MPI_Ibarrier(comm, &req[3]) == MPI_SUCCESS, "MPI_Ibarrier");
    start_reduce(&c[2], comm, &req[4]);
    if (rank % 3 == 0) {
        for (int i = 4; i >= 0; i--)
            MPI_Wait(&req[i], MPI_STATUS_IGNORE);
    } else if (rank % 3 == 1) {
        CHECK(MPI_Waitall(5, req, st) == MPI_SUCCESS, "MPI_Waitall");
    } else {
        for (int n = 0; n < 5; n++) {
            int i = MPI_UNDEFINED;
            MPI_Waitany(5, req, &i, MPI_STATUS_IGNORE);
            CHECK(i >= 0 && i < 5, "MPI_Waitany index %d", i);
        }
    }
    for (int i = 0; i < 5; i++)
        CHECK(req[i] == MPI_REQUEST_NULL, "request %d not freed", i);
    for (int i = 0; i < 3; i++)
        check_reduce(&c[i]);
}

/* 40 allreduces, at most 4 outstanding, completed by MPI_Test loops. */
static void window(MPI_Comm comm)
{
    enum { N = 40, W = 4 };
    reduce_case c[W];
    MPI_Request req[W];
    int started = 0, finished = 0;
    for (int i = 0; i < W; i++)
        req[i] = MPI_REQUEST_NULL;
    while (finished < N) {
        while (started < N && started - finished < W) {
            reduce_case *x = &c[started % W];
            *x = (reduce_case){.t = 200 + started, .kind = started % 3 == 2 ? 3 : 0,
                               .count = 1 + started % 2};
            start_reduce(x, comm, &req[started % W]);
            started++;
        }
        int flag = 0, i = finished % W;
        while (!flag)
            MPI_Test(&req[i], &flag, MPI_STATUS_IGNORE);
        check_reduce(&c[i]);
        finished++;
    }
}

int main(int argc, char **argv)
{
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    barrier_waits(comm);
    tap_result(MPI_COMM_WORLD, "MPI_Ibarrier waits for the last process (%d processes)", nprocs);
    reduce_values(comm);
    tap_result(MPI_COMM_WORLD, "MPI_Iallreduce SUM MAX MIN BOR LAND, in place, 1-5 elements");
    outstanding(comm);
    tap_result(MPI_COMM_WORLD, "five barriers and allreduces outstanding, completed in any order");
    window(comm);
    tap_result(MPI_COMM_WORLD, "40 allreduces, 4 outstanding, MPI_Test loops");
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
