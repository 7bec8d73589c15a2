/* The peer of isobench's `peer` and `peer_trivial` competitors: TU Wien's
 * Cartesian collectives (Traeff and Hunold, "Cartesian Collective
 * Communication", ICPP 2019; github.com/parlab-tuwien/mpi-cartesian-collectives
 * @e691e97), the only public message-combining library for these
 * neighborhoods.  It is fetched and built OUTSIDE this repository and linked
 * only when the Makefile is given PEER=DIR (DIR/include/tuwcartesians.h,
 * DIR/lib/libtuwcartesians.a built with the same MPI; bench/README.md, "The
 * peer").  Without it (no -DISO_BENCH_PEER) peer_unavailable() says so and
 * nothing here is called.  Header only.
 *
 * What is timed (its API, tuwcartesians.h):
 *   TUW_Cart_neighborhood_create(cart, d, dims, periods, s, offsets,
 *       weights, info, 0, &comm)   a Cartesian communicator carrying
 *       the s relative offsets; info "trivial" and "blocking" choose the
 *       implementation (both "false" by default)
 *   TUW_Cart_neighbor_alltoall(allgather)(send, b, MPI_BYTE, recv, b,
 *       MPI_BYTE, comm)   block i goes to rank + offset i and comes from
 *       rank - offset i: isocoll's layout, so it runs on isobench's buffers
 *   TUW_Cart_neighbor_alltoall(allgather)_init / _free   build / drop the
 *       combining schedule
 * peer (trivial=false): d rounds, in round j one message per distinct
 * nonzero coordinate of dimension j, every message an MPI struct datatype
 * over the user's buffers and a temporary buffer (no packing), rounds of
 * Irecv/Isend + Waitall: the rounds, messages and block hops of our dimwise.
 * peer_trivial (trivial=true): one Irecv and one Isend per offset, then
 * MPI_Waitall: our direct.  Both with blocking=false (its default).
 *
 * Its combining schedule holds the absolute addresses and the block size of
 * the call that built it (it is built on the first call and never checked
 * again), so peer_bind builds it anew for every block size's buffers and
 * every later call must use exactly those buffers. */
#ifndef ISO_BENCH_PEER_H
#define ISO_BENCH_PEER_H
#include <mpi.h>
#include <stdlib.h>
#ifdef ISO_BENCH_PEER
#include <tuwcartesians.h>
#endif

/* Why the peer cannot run here, or NULL if it can.  It is only built in
 * with PEER=DIR; it is run on tori periodic in every dimension (its shifts
 * on a mesh are not what isobench's neighborhood means) and without the w
 * forms (isobench would need its alltoallw with a derived type per block). */
static inline const char *peer_unavailable(int torus, int wform)
{
#ifdef ISO_BENCH_PEER
    if (!torus)
        return "the peer runs on tori periodic in every dimension only";
    if (wform)
        return "the peer is not run for the w forms";
    return NULL;
#else
    (void)torus;
    (void)wform;
    return "isobench was built without the peer (TU Wien's Cartesian collectives): "
           "make build/bench/isobench PEER=DIR, see bench/README.md, \"The peer\"";
#endif
}

/* The peer's communicator for the torus cart (its ranks: no reordering) and
 * the s offsets off[s][d]; trivial chooses its trivial implementation. */
static inline int peer_create(MPI_Comm cart, int d, const int *dims, const int *periods, int s,
                              const int *off, int trivial, MPI_Comm *comm)
{
#ifdef ISO_BENCH_PEER
    /* unit weights (it ignores them) rather than MPI_UNWEIGHTED, which gcc
     * takes for an empty array with Open MPI's mpi.h */
    int *ones = malloc(sizeof(int) * (size_t)(s > 0 ? s : 1)), rc;
    MPI_Info info;
    if (ones == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < s; i++)
        ones[i] = 1;
    if ((rc = MPI_Info_create(&info)) != MPI_SUCCESS) {
        free(ones);
        return rc;
    }
    if ((rc = MPI_Info_set(info, "trivial", trivial ? "true" : "false")) == MPI_SUCCESS &&
        (rc = MPI_Info_set(info, "blocking", "false")) == MPI_SUCCESS)
        rc = TUW_Cart_neighborhood_create(cart, d, dims, periods, s, off, ones, info, 0, comm);
    MPI_Info_free(&info);
    free(ones);
    return rc;
#else
    (void)cart, (void)d, (void)dims, (void)periods, (void)s, (void)off, (void)trivial;
    *comm = MPI_COMM_NULL;
    return MPI_ERR_OTHER;
#endif
}

/* Builds the combining schedule for these buffers and b-byte blocks (a
 * no-op for the trivial implementation). */
static inline int peer_bind(MPI_Comm comm, int allgather, void *send, void *recv, int b)
{
#ifdef ISO_BENCH_PEER
    if (allgather)
        return TUW_Cart_neighbor_allgather_init(send, b, MPI_BYTE, recv, b, MPI_BYTE, comm);
    return TUW_Cart_neighbor_alltoall_init(send, b, MPI_BYTE, recv, b, MPI_BYTE, comm);
#else
    (void)comm, (void)allgather, (void)send, (void)recv, (void)b;
    return MPI_ERR_OTHER;
#endif
}

/* One call, on the buffers of the last peer_bind. */
static inline int peer_call(MPI_Comm comm, int allgather, void *send, void *recv, int b)
{
#ifdef ISO_BENCH_PEER
    if (allgather)
        return TUW_Cart_neighbor_allgather(send, b, MPI_BYTE, recv, b, MPI_BYTE, comm);
    return TUW_Cart_neighbor_alltoall(send, b, MPI_BYTE, recv, b, MPI_BYTE, comm);
#else
    (void)comm, (void)allgather, (void)send, (void)recv, (void)b;
    return MPI_ERR_OTHER;
#endif
}

/* Drops the schedule of the last peer_bind (its datatypes and buffer). */
static inline int peer_unbind(MPI_Comm comm, int allgather)
{
#ifdef ISO_BENCH_PEER
    return allgather ? TUW_Cart_neighbor_allgather_free(comm) : TUW_Cart_neighbor_alltoall_free(comm);
#else
    (void)comm, (void)allgather;
    return MPI_ERR_OTHER;
#endif
}
#endif
