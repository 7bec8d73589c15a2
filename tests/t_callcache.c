/* The blocking-call cache (issue 9): a blocking call reuses the request of
 * the previous blocking call of its collective family when the block
 * layout is the same.  Changing buffers, counts, displacements and types
 * between calls must never run a wrong schedule.  A sequence of blocking
 * calls on one isocomm, each checked against the Isend/Irecv oracle
 * (oracle_alltoallw_on) or a serial sum:
 *   1. alltoall on buffers A, then on buffers B (the same distance between
 *      send and receive buffer: a rebound request), then on A again with
 *      new data (datatype mode rebuilds its message types when buffers move);
 *   2. the same with another count, then the first count again;
 *   3. a derived type freed and another one made (MPI may give it the same
 *      handle) with another extent: the new type is used;
 *   4. alltoallv with new displacements, then new counts;
 *   5. alltoallw with new types;
 *   6. allgather between alltoalls (one cache entry per family);
 *   7. a call like an earlier correct one but with recvbuf == sendbuf: the
 *      aliasing error (ISO_ERR_ARG), then correct calls again;
 *   8. reduce with a user op, freed and made again as a non-commutative op:
 *      ISO_ERR_OP, never the cached request.
 * Every algorithm in both combining modes, set per neighborhood (the v/w
 * forms run with pack in datatype-mode neighborhoods: datatype mode cannot
 * carry them with a combining algorithm).
 *
 * NPROCS: 1 2 3 4
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define S 8
#define MAXC 4  /* ints per block at most */
#define MAXE 16 /* bytes per element at most (vector types) */

static int rank, calls, bad;
static MPI_Comm ocomm, cart;
static const nbh_t *nb;

/* Send block i: ints value(rank, i, k). */
static int value(int q, int i, int k) { return (q + 1) * 100000 + i * 100 + k + (calls << 20); }

typedef struct {
    char *send, *recv, *expect;
    size_t bytes;
} bufs_t;

/* Buffers k = 0, 1 in one allocation, each receive buffer at the same
 * distance from its send buffer: calls on A and on B then differ in their
 * addresses only, which is the case where a cached request is rebound. */
static bufs_t bufs_make(char *mem, size_t bytes, int k)
{
    bufs_t b = {mem + 2 * (size_t)k * bytes, mem + (2 * (size_t)k + 1) * bytes,
                calloc(bytes, 1), bytes};
    return b;
}

static void bufs_free(bufs_t *b)
{
    free(b->expect);
}

/* Fills the send blocks (count x type at sdispls) with fresh values, clears
 * the receive buffer and computes the expected one with the oracle. */
static void prepare(bufs_t *b, const int *cnt, const MPI_Aint *sd, const MPI_Datatype *st,
                    const MPI_Aint *rd, const MPI_Datatype *rt)
{
    calls++;
    memset(b->send, 0, b->bytes);
    for (int i = 0; i < S; i++) {
        int v[MAXC * MAXE], sig;
        MPI_Type_size(st[i], &sig);
        sig = sig / (int)sizeof(int) * cnt[i];
        for (int k = 0; k < sig; k++)
            v[k] = value(rank, i, k);
        oracle_move_block(v, sig, MPI_INT, b->send + sd[i], cnt[i], st[i], MPI_COMM_SELF);
    }
    memset(b->recv, 0xEE, b->bytes);
    memset(b->expect, 0xEE, b->bytes);
    oracle_alltoallw_on(b->send, cnt, sd, st, b->expect, cnt, rd, rt, cart, ocomm, nb);
}

static void verify(const bufs_t *b, int rc, const char *what)
{
    long d;
    if (rc != MPI_SUCCESS) {
        CHECK(0, "%s: rc %d", what, rc);
        bad++;
        return;
    }
    d = oracle_first_diff(b->recv, b->expect, b->bytes);
    if (d >= 0)
        bad++;
    CHECK(d < 0, "%s: receive buffer differs from the oracle at byte %ld", what, d);
}

/* Alltoall of count x t per block (strided), described for the oracle. */
static void alltoall(MPI_Comm iso, bufs_t *b, int count, MPI_Datatype t, const char *what)
{
    int cnt[S];
    MPI_Aint lb, ext, d[S];
    MPI_Datatype ty[S];
    MPI_Type_get_extent(t, &lb, &ext);
    for (int i = 0; i < S; i++)
        cnt[i] = count, d[i] = (MPI_Aint)i * count * ext, ty[i] = t;
    prepare(b, cnt, d, ty, d, ty);
    verify(b, Iso_neighbor_alltoall(b->send, count, t, b->recv, count, t, iso), what);
}

static void alltoallv(MPI_Comm iso, bufs_t *b, const int *cnt, const int *idsp, const char *what)
{
    MPI_Aint d[S];
    MPI_Datatype ty[S];
    for (int i = 0; i < S; i++)
        d[i] = (MPI_Aint)idsp[i] * (MPI_Aint)sizeof(int), ty[i] = MPI_INT;
    prepare(b, cnt, d, ty, d, ty);
    verify(b, Iso_neighbor_alltoallv(b->send, cnt, idsp, MPI_INT, b->recv, cnt, idsp, MPI_INT, iso),
           what);
}

static void alltoallw(MPI_Comm iso, bufs_t *b, const MPI_Datatype *ty, const char *what)
{
    int cnt[S];
    MPI_Aint d[S];
    for (int i = 0; i < S; i++)
        cnt[i] = 1, d[i] = (MPI_Aint)i * MAXE * (MPI_Aint)sizeof(int);
    prepare(b, cnt, d, ty, d, ty);
    verify(b, Iso_neighbor_alltoallw(b->send, cnt, d, ty, b->recv, cnt, d, ty, iso), what);
}

/* Allgather of 2 ints: block i of the receive buffer comes from source i. */
static void allgather(MPI_Comm iso, bufs_t *b, const char *what)
{
    int cnt[S], mine[2];
    MPI_Aint sd[S], rd[S];
    MPI_Datatype ty[S];
    calls++;
    mine[0] = value(rank, 0, 0), mine[1] = value(rank, 0, 1);
    for (int i = 0; i < S; i++)
        cnt[i] = 2, sd[i] = 0, rd[i] = (MPI_Aint)i * 2 * (MPI_Aint)sizeof(int), ty[i] = MPI_INT;
    memcpy(b->send, mine, sizeof mine);
    memset(b->recv, 0xEE, b->bytes);
    memset(b->expect, 0xEE, b->bytes);
    oracle_alltoallw_on(b->send, cnt, sd, ty, b->expect, cnt, rd, ty, cart, ocomm, nb);
    verify(b, Iso_neighbor_allgather(b->send, 2, MPI_INT, b->recv, 2, MPI_INT, iso), what);
}

static void expect_class(int rc, Iso_error want, const char *what)
{
    Iso_error e = ISO_ERR_NONE;
    if (rc != MPI_SUCCESS)
        Iso_error_class(rc, &e);
    if (e != want)
        bad++;
    CHECK(e == want, "%s: rc %d, class %d, expected %d", what, rc, (int)e, (int)want);
}

static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    for (int k = 0; k < *len; k++)
        ((int *)inout)[k] += ((int *)in)[k];
}

static void first_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)in, (void)inout, (void)len, (void)dt;
}

/* Reduce of 3 ints with op: the sum over the existing sources. */
static void reduce(MPI_Comm iso, MPI_Op op, int *sendv, int *recvv, const char *what)
{
    int src[S], dst[S], expect[3] = {0, 0, 0}, got = 0, rc;
    calls++;
    oracle_neighbors(cart, nb, src, dst);
    for (int k = 0; k < 3; k++)
        sendv[k] = value(rank, 0, k) % 1000;
    for (int i = 0; i < S; i++)
        for (int k = 0; k < 3 && src[i] != MPI_PROC_NULL; k++)
            expect[k] += value(src[i], 0, k) % 1000, got = 1;
    rc = Iso_neighbor_reduce(sendv, recvv, 3, MPI_INT, op, iso);
    if (rc != MPI_SUCCESS || !got) {
        CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
        return;
    }
    if (memcmp(recvv, expect, sizeof expect))
        bad++;
    CHECK(!memcmp(recvv, expect, sizeof expect), "%s: got %d %d %d, expected %d %d %d", what,
          recvv[0], recvv[1], recvv[2], expect[0], expect[1], expect[2]);
}

static void sequence(MPI_Comm iso, int vw)
{
    size_t bytes = (size_t)S * MAXC * MAXE * sizeof(int);
    char *mem = calloc(4, bytes);
    bufs_t A = bufs_make(mem, bytes, 0), B = bufs_make(mem, bytes, 1);
    MPI_Datatype t1, t2, t1h, w[S];
    int cnt[S], idsp[S], sendv[3], recvv[3];
    MPI_Op op;

    /* 1, 2: buffers and counts */
    alltoall(iso, &A, 2, MPI_INT, "alltoall 2 ints on A");
    alltoall(iso, &B, 2, MPI_INT, "alltoall 2 ints on B");
    alltoall(iso, &A, 2, MPI_INT, "alltoall 2 ints on A again");
    alltoall(iso, &A, 3, MPI_INT, "alltoall 3 ints on A");
    alltoall(iso, &B, 2, MPI_INT, "alltoall 2 ints on B again");

    /* 3: a freed derived type and a new one, perhaps under its handle */
    MPI_Type_contiguous(2, MPI_INT, &t1);
    MPI_Type_commit(&t1);
    alltoall(iso, &A, 1, t1, "alltoall of contiguous(2, int)");
    alltoall(iso, &A, 1, t1, "alltoall of contiguous(2, int) again");
    t1h = t1;
    MPI_Type_free(&t1);
    MPI_Type_vector(2, 1, 3, MPI_INT, &t2); /* extent 4 ints, not 2 */
    MPI_Type_commit(&t2);
    if (rank == 0)
        printf("# the new type %s the freed one's handle\n", t2 == t1h ? "has" : "does not have");
    alltoall(iso, &A, 1, t2, "alltoall of vector(2, 1, 3) made after freeing contiguous(2)");

    if (vw) {
        /* 4: alltoallv, new displacements then new counts */
        for (int i = 0; i < S; i++)
            cnt[i] = 2, idsp[i] = 4 * i;
        alltoallv(iso, &A, cnt, idsp, "alltoallv");
        for (int i = 0; i < S; i++)
            idsp[i] = 4 * (S - 1 - i);
        alltoallv(iso, &A, cnt, idsp, "alltoallv with reversed displacements");
        for (int i = 0; i < S; i++)
            cnt[i] = 1 + i % 3;
        alltoallv(iso, &A, cnt, idsp, "alltoallv with other counts");

        /* 5: alltoallw, new types */
        for (int i = 0; i < S; i++)
            w[i] = i % 2 ? t2 : MPI_INT;
        alltoallw(iso, &A, w, "alltoallw with int and vector types");
        for (int i = 0; i < S; i++)
            w[i] = i % 2 ? MPI_INT : t2;
        alltoallw(iso, &A, w, "alltoallw with the types swapped");
    }

    /* 6: families side by side */
    allgather(iso, &A, "allgather between alltoalls");
    alltoall(iso, &A, 2, MPI_INT, "alltoall after allgather");
    allgather(iso, &B, "allgather on B");

    /* 7: aliasing in a call otherwise like a cached one */
    alltoall(iso, &A, 2, MPI_INT, "alltoall before the aliased call");
    expect_class(Iso_neighbor_alltoall(A.send, 2, MPI_INT, A.send, 2, MPI_INT, iso), ISO_ERR_ARG,
                 "alltoall with recvbuf == sendbuf after a cached call");
    alltoall(iso, &A, 2, MPI_INT, "alltoall after the aliasing error");

    /* 8: a user op freed and made again, not commutative */
    MPI_Op_create(sum_fn, 1, &op);
    reduce(iso, op, sendv, recvv, "reduce with a commutative user op");
    reduce(iso, op, sendv, recvv, "reduce with a commutative user op again");
    MPI_Op_free(&op);
    MPI_Op_create(first_fn, 0, &op);
    expect_class(Iso_neighbor_reduce(sendv, recvv, 3, MPI_INT, op, iso), ISO_ERR_OP,
                 "reduce with a non-commutative op made after freeing a commutative one");
    MPI_Op_free(&op);
    MPI_Op_create(sum_fn, 1, &op);
    reduce(iso, op, sendv, recvv, "reduce with a commutative user op once more");
    MPI_Op_free(&op);

    MPI_Type_free(&t2);
    bufs_free(&A);
    bufs_free(&B);
    free(mem);
}

static const struct {
    const char *alg, *mode;
} variants[] = {{"direct", "pack"},    {"dimwise", "pack"}, {"dimwise", "datatype"},
                {"bruck", "pack"},     {"bruck", "datatype"}, {"auto", "auto"}};

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periods[2] = {1, 0};
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
    nbh_t n = {2, S, off};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_dup(cart, &ocomm);
    nb = &n;
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        MPI_Info info;
        MPI_Comm dup, iso;
        int datatype = !strcmp(variants[v].mode, "datatype");
        bad = 0;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", variants[v].alg);
        MPI_Info_set(info, "iso_combine", variants[v].mode);
        MPI_Comm_dup(cart, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        Iso_neighborhood_create_with_info(dup, S, off, info, &iso);
        sequence(iso, !datatype);
        if (datatype) { /* the v/w forms in pack mode on the same algorithm */
            MPI_Info_set(info, "iso_combine", "pack");
            Iso_neighborhood_create_with_info(dup, S, off, info, &iso);
            sequence(iso, 1);
        }
        tap_result(MPI_COMM_WORLD,
                   "%s:%s: blocking calls with changing buffers, counts, displacements, types "
                   "and ops all match the oracle (%d wrong)",
                   variants[v].alg, variants[v].mode, bad);
        Iso_neighborhood_free(&iso);
        MPI_Comm_free(&dup);
        MPI_Info_free(&info);
    }
    MPI_Comm_free(&ocomm);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
