/* rma on the halves of one MPI_Comm_split at the same time (issue 24,
 * item 3).  Open MPI 4's osc/rdma names its shared-memory segment after
 * the communicator's context id, which both halves share (ompi#9492): two
 * halves making windows at once failed in open(2) or received each
 * other's puts.  The library makes its windows where that cannot happen
 * (src/sparse/rma.c); here each round splits MPI_COMM_WORLD into halves
 * (new communicators, so new windows, made by both halves at once) and
 * every process sends to every member of its half, checked against the
 * seeded pattern (values name sender, receiver and round).
 *
 * NPROCS: 4 8
 * PER-ALGORITHM: no
 */
#include <stdlib.h>

#include "isocoll.h"
#include "tap.h"

#define ROUNDS 12
#define COUNT 6

static int value(int round, int from, int to, int j)
{
    return ((round * 64 + from) * 64 + to) * 16 + j;
}

int main(int argc, char **argv)
{
    int wrank, wsize, failed = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "rma");
    for (int round = 0; round < ROUNDS; round++) {
        MPI_Comm half;
        int rank, p, nnz = -1, *src = NULL, *recv = NULL;
        /* alternate halves (even/odd world ranks) and blocks (low/high) */
        int color = round % 2 ? wrank % 2 : wrank < wsize / 2;
        MPI_Comm_split(MPI_COMM_WORLD, color, wrank, &half);
        MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
        MPI_Comm_rank(half, &rank);
        MPI_Comm_size(half, &p);
        int *dest = malloc(sizeof(int) * (size_t)p), *wranks = malloc(sizeof(int) * (size_t)p);
        int *send = malloc(sizeof(int) * (size_t)p * COUNT);
        MPI_Allgather(&wrank, 1, MPI_INT, wranks, 1, MPI_INT, half);
        for (int i = 0; i < p; i++) {
            dest[i] = i;
            for (int j = 0; j < COUNT; j++)
                send[i * COUNT + j] = value(round, wrank, wranks[i], j);
        }
        int err = Iso_alltoall_crs(p, dest, COUNT, MPI_INT, send, &nnz, &src, COUNT, MPI_INT,
                                   (void **)&recv, info, half);
        if (err != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING];
            int len;
            MPI_Error_string(err, msg, &len);
            CHECK(0, "round %d: Iso_alltoall_crs failed: %s", round, msg);
        } else {
            CHECK_EQ_INT(nnz, p, "round %d: messages", round);
            for (int k = 0; k < nnz && k < p; k++) {
                CHECK_EQ_INT(src[k], k, "round %d: source", round);
                for (int j = 0; j < COUNT; j++)
                    if (recv[k * COUNT + j] != value(round, wranks[k], wrank, j)) {
                        CHECK(0, "round %d: int %d from %d is %d, not %d", round, j, wranks[k],
                              recv[k * COUNT + j], value(round, wranks[k], wrank, j));
                        break;
                    }
            }
        }
        failed += tap_errors > 0;
        free(dest), free(wranks), free(send), free(src), free(recv);
        MPI_Comm_free(&half);
    }
    MPI_Info_free(&info);
    tap_result(MPI_COMM_WORLD, "%d rounds of rma on both halves of a split at once", ROUNDS);
    MPI_Finalize();
    return failed < 0;
}
