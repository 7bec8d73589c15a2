/* nbcoll [ITERS]: the time of one MPI_Ibarrier + MPI_Wait and of one
 * MPI_Iallreduce of two long longs (MPI_SUM) + MPI_Wait, as the mailbox's
 * termination waves (mailbox/quiesce.c), core/agree.c and the SDDE's NBX
 * and rma use them.  Meant for the SMPI build, where src/compat/smpi.c
 * replaces both (SIMULATED time there); it runs under any MPI.
 *
 * Each form: one untimed call, an MPI_Barrier, then ITERS (default 20)
 * calls back to back; the time is the slowest process's over ITERS.
 * One @row line per form. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

static double timed(int form, int iters, MPI_Comm comm)
{
    long long in[2] = {1, 2}, out[2];
    double t0 = 0, mine, slowest = 0;
    for (int i = -1; i < iters; i++) {
        MPI_Request req;
        if (i == 0) {
            MPI_Barrier(comm);
            t0 = MPI_Wtime();
        }
        if (form == 0)
            MPI_Ibarrier(comm, &req);
        else
            MPI_Iallreduce(in, out, 2, MPI_LONG_LONG, MPI_SUM, comm, &req);
        MPI_Wait(&req, MPI_STATUS_IGNORE);
    }
    mine = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, comm);
    return slowest;
}

int main(int argc, char **argv)
{
    int iters = argc > 1 ? atoi(argv[1]) : 20, rank, p;
    static const char *const name[] = {"ibarrier", "iallreduce2"};
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    if (iters < 1)
        iters = 1;
    for (int form = 0; form < 2; form++) {
        double t = timed(form, iters, comm);
        if (rank == 0)
            printf("@row exp=nbcoll np=%d competitor=%s iters=%d time_us=%.3f\n", p, name[form],
                   iters, t * 1e6);
    }
    MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
