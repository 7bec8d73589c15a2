/* Packing contiguous derived types whose handles MPICH 4.0 misreads
 * (issue 24, item 4).  MPICH 4.0.x's MPI_Pack of a contiguous derived type
 * rounds the bytes down to a multiple of bits 8-15 of the type's handle
 * (src/core/datatype.c, iso__pack): which types are hit depends on their
 * handles only.  Every rank makes MPI_Type_contiguous(13, MPI_BYTE) types
 * until one has such a handle (MPICH: handles are ints; elsewhere the first
 * one is used and the checks still hold), shows plain MPI_Pack's count for
 * it, then sends 3 x that type through Iso_alltoall_crs (every sparse
 * algorithm; rma and the locality forms pack) and Iso_neighbor_alltoall in
 * pack mode, checked against the seeded pattern.
 *
 * NPROCS: 2 3
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

#define U 13     /* bytes per element: prime, so every cut of e > 1 shows */
#define COUNT 3  /* elements per message */
#define TRIES 20000

static int rank, nprocs;

static int handle_cut(MPI_Datatype t)
{
#ifdef MPICH_VERSION
    return (int)(((unsigned)t >> 8) & 0xff);
#else
    (void)t;
    return 0;
#endif
}

/* A committed contig(U, MPI_BYTE) with a misread handle (if any); the
 * types made on the way are in made[0..*nmade). */
static MPI_Datatype find_type(MPI_Datatype *made, int *nmade)
{
    MPI_Datatype t = MPI_DATATYPE_NULL;
    for (*nmade = 0; *nmade < TRIES;) {
        MPI_Type_contiguous(U, MPI_BYTE, &t);
        MPI_Type_commit(&t);
        made[(*nmade)++] = t;
        int e = handle_cut(t);
        if (e > 1 && (COUNT * U) % e != 0)
            return t;
#ifndef MPICH_VERSION
        return t;
#endif
    }
    return t;
}

static unsigned char byte_of(int from, int to, int j)
{
    return (unsigned char)(from * 31 + to * 7 + j + 1);
}

static void sparse(MPI_Datatype t, const char *alg)
{
    int *dest = malloc(sizeof(int) * (size_t)nprocs), recv_nnz = -1, *src = NULL;
    unsigned char *send = malloc((size_t)nprocs * COUNT * U);
    unsigned char *recv = NULL;
    MPI_Info info;
    for (int i = 0; i < nprocs; i++) {
        dest[i] = i;
        for (int j = 0; j < COUNT * U; j++)
            send[(size_t)i * COUNT * U + j] = byte_of(rank, i, j);
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    int err = Iso_alltoall_crs(nprocs, dest, COUNT, t, send, &recv_nnz, &src, COUNT * U, MPI_BYTE,
                               (void **)&recv, info, MPI_COMM_WORLD);
    CHECK_EQ_INT(err, MPI_SUCCESS, "Iso_alltoall_crs (%s)", alg);
    CHECK_EQ_INT(recv_nnz, nprocs, "messages received (%s)", alg);
    for (int k = 0; err == MPI_SUCCESS && k < recv_nnz && k < nprocs; k++) {
        CHECK_EQ_INT(src[k], k, "source %d (%s)", k, alg);
        for (int j = 0; j < COUNT * U; j++)
            if (recv[(size_t)k * COUNT * U + j] != byte_of(k, rank, j)) {
                CHECK(0, "%s: byte %d from %d is %d, not %d", alg, j, k,
                      recv[(size_t)k * COUNT * U + j], byte_of(k, rank, j));
                break;
            }
    }
    tap_result(MPI_COMM_WORLD, "Iso_alltoall_crs with %s sends 3 x 13-byte derived type", alg);
    MPI_Info_free(&info);
    free(dest), free(send), free(src), free(recv);
}

/* A ring with neighbours -1, +1, +2, 0 in pack mode. */
static void neighbor(MPI_Datatype t)
{
    int dims[1] = {nprocs}, periods[1] = {1}, offs[4] = {-1, 1, 2, 0}, s = 4;
    MPI_Comm cart, iso;
    MPI_Info info;
    unsigned char *send = malloc((size_t)s * COUNT * U), *recv = malloc((size_t)s * COUNT * U);
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &cart);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_combine", "pack");
    int err = Iso_neighborhood_create_with_info(cart, s, offs, info, &iso);
    CHECK_EQ_INT(err, MPI_SUCCESS, "Iso_neighborhood_create_with_info");
    for (int i = 0; i < s; i++)
        for (int j = 0; j < COUNT * U; j++)
            send[(size_t)i * COUNT * U + j] = byte_of(rank, i, j);
    memset(recv, 0, (size_t)s * COUNT * U);
    err = Iso_neighbor_alltoall(send, COUNT, t, recv, COUNT, t, iso);
    CHECK_EQ_INT(err, MPI_SUCCESS, "Iso_neighbor_alltoall");
    /* block i comes from rank - C^i (isocoll.h, "Direction") */
    for (int i = 0; err == MPI_SUCCESS && i < s; i++) {
        int from = ((rank - offs[i]) % nprocs + nprocs) % nprocs;
        for (int j = 0; j < COUNT * U; j++)
            if (recv[(size_t)i * COUNT * U + j] != byte_of(from, i, j)) {
                CHECK(0, "block %d byte %d is %d, not %d", i, j, recv[(size_t)i * COUNT * U + j],
                      byte_of(from, i, j));
                break;
            }
    }
    tap_result(MPI_COMM_WORLD, "Iso_neighbor_alltoall in pack mode with the same type");
    Iso_neighborhood_free(&iso);
    MPI_Comm_free(&cart);
    MPI_Info_free(&info);
    free(send), free(recv);
}

int main(int argc, char **argv)
{
    static MPI_Datatype made[TRIES];
    static const char *const algs[] = {"personalized", "nbx", "rma", "locality-personalized",
                                       "locality-nbx", "vpt"};
    int nmade, pos = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Datatype t = find_type(made, &nmade);
    unsigned char in[COUNT * U] = {0}, out[COUNT * U + 64];
    MPI_Pack(in, COUNT, t, out, (int)sizeof out, &pos, MPI_COMM_SELF);
    if (rank == 0)
        printf("# type %d of those made; its handle's bits 8-15: %d; plain MPI_Pack wrote %d of "
               "%d bytes\n", nmade, handle_cut(t), pos, COUNT * U);
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++)
        sparse(t, algs[a]);
    neighbor(t);
    for (int k = 0; k < nmade; k++)
        MPI_Type_free(&made[k]);
    MPI_Finalize();
    return 0;
}
