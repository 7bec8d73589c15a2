/* rma windows on communicators the program never frees end cleanly at
 * MPI_Finalize (issue 24, item 2: MPICH 4.0 with UCX aborted there, exit 6,
 * "rcache.c:409 Assertion `region->refcount == 0'").  Three duplicates of
 * MPI_COMM_WORLD and the halves of a split run Iso_alltoall_crs with rma
 * (on one duplicate twice, the second time with larger messages, so its
 * window is replaced); one duplicate is freed, the others are left to
 * MPI_Finalize.  Data are checked against the seeded pattern; the exit
 * status of the program (checked by tests/tap-mpi) is the finalize check.
 *
 * NPROCS: 2 4
 * PER-ALGORITHM: no
 */
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

static int value(int from, int to, int j)
{
    return 1000 * from + 10 * to + j;
}

/* Each process sends count ints to its successor and to itself. */
static void ring(MPI_Comm comm, int count, const char *what)
{
    int rank, p, nnz = -1, *src = NULL, *recv = NULL, dest[2];
    int *send = malloc(sizeof(int) * 2 * (size_t)count);
    MPI_Info info;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &p);
    dest[0] = rank;
    dest[1] = (rank + 1) % p;
    int n = p > 1 ? 2 : 1;
    for (int i = 0; i < n; i++)
        for (int j = 0; j < count; j++)
            send[i * count + j] = value(rank, dest[i], j);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "rma");
    int err = Iso_alltoall_crs(n, dest, count, MPI_INT, send, &nnz, &src, count, MPI_INT,
                               (void **)&recv, info, comm);
    CHECK_EQ_INT(err, MPI_SUCCESS, "%s", what);
    CHECK_EQ_INT(nnz, n, "%s: messages", what);
    for (int k = 0; err == MPI_SUCCESS && k < nnz && k < n; k++) {
        int from = src[k];
        CHECK(from == rank || from == (rank - 1 + p) % p, "%s: source %d", what, from);
        for (int j = 0; j < count; j++)
            CHECK_EQ_INT(recv[k * count + j], value(from, rank, j), "%s: from %d, int %d", what,
                         from, j);
    }
    MPI_Info_free(&info);
    free(send), free(src), free(recv);
}

int main(int argc, char **argv)
{
    MPI_Comm a, b, c, half;
    int rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_dup(MPI_COMM_WORLD, &a);
    MPI_Comm_dup(MPI_COMM_WORLD, &b);
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
    ring(a, 1, "first duplicate");
    ring(b, 3, "second duplicate");
    ring(a, 2000, "first duplicate, larger window");
    ring(c, 5, "third duplicate (freed)");
    ring(half, 4, "half of a split");
    ring(MPI_COMM_WORLD, 2, "MPI_COMM_WORLD");
    MPI_Comm_free(&c);
    tap_result(MPI_COMM_WORLD, "rma on duplicates and a split never freed (MPI_Finalize next)");
    MPI_Finalize();
    return 0;
}
