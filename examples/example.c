/* The README example: a 2D periodic torus, the 9-point (Moore radius 1)
 * neighborhood, one alltoall.  Each process sends to neighbor i the value
 * 100*rank + i and checks what it receives: block i comes from the process
 * at -C^i and carries that process's block i. */
#include <isocoll.h>
#include <stdio.h>

int main(int argc, char **argv)
{
    int size, rank, dims[2] = {0, 0}, periods[2] = {1, 1}, offsets[8 * 2], s = 0, errors = 0;
    MPI_Comm cart, iso;

    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_rank(cart, &rank);

    for (int dy = -1; dy <= 1; dy++) /* the 8 Moore offsets, row-major */
        for (int dx = -1; dx <= 1; dx++)
            if (dy || dx) {
                offsets[2 * s] = dy;
                offsets[2 * s + 1] = dx;
                s++;
            }
    Iso_neighborhood_create(cart, s, offsets, &iso);

    int sendbuf[8], recvbuf[8], sources[8], targets[8];
    for (int i = 0; i < s; i++)
        sendbuf[i] = 100 * rank + i;
    Iso_neighbor_alltoall(sendbuf, 1, MPI_INT, recvbuf, 1, MPI_INT, iso);

    Iso_neighborhood_get(iso, s, sources, targets);
    for (int i = 0; i < s; i++)
        errors += recvbuf[i] != 100 * sources[i] + i;
    MPI_Allreduce(MPI_IN_PLACE, &errors, 1, MPI_INT, MPI_SUM, cart);
    if (rank == 0)
        printf("%d processes on a %dx%d torus, %d neighbors: %s\n", size, dims[0], dims[1], s,
               errors ? "WRONG" : "correct");

    Iso_neighborhood_free(&iso);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return errors != 0;
}
