/* Datatypes whose extent is negative or whose lower bound is negative, in
 * every algorithm and every combining mode (issue 14, defect 1: the scratch
 * vectors of datatype mode and the reduction buffers were sized as
 * (count - 1) * extent + true extent, which underflows for a negative
 * extent).
 *
 * Types (each over MPI_INT, count 3 per block):
 *   NEG      MPI_INT resized to extent -4: element k is the int at -4k
 *   NEGLB    struct {int at -8, int at +4}: lower bound -8, extent 16
 *   NEGBOTH  NEGLB resized to lb -8, extent -20: elements go downwards
 * For alltoall, allgather, reduce and scatter_reduce, blocking,
 * nonblocking and persistent (started twice), on a periodic torus and a
 * mesh, with direct, dimwise and bruck in pack and datatype mode (set per
 * neighborhood with iso_algorithm / iso_combine, so one run covers them
 * all).  The expected receive buffer is computed locally: the sentinel
 * everywhere, and for every existing source (oracle_neighbors) the values
 * it sent unpacked with the receive type (oracle_move_block); reductions
 * sum the sources' values serially.  The buffers are compared byte for
 * byte, guard zones and type gaps included; send buffers must be intact.
 * Reductions use a commutative user op that walks the type map (MPICH does
 * not apply MPI_SUM to resized types).
 *
 * NPROCS: 1 2 4
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define COUNT 3
#define GUARD 64
#define SENT 0xA5

enum { NEG, NEGLB, NEGBOTH, NTYPES };
static const char *const tname[NTYPES] = {"NEG (extent -4)", "NEGLB (lb -8)",
                                          "NEGBOTH (lb -8, extent -20)"};
static MPI_Datatype types[NTYPES];
static int sig[NTYPES]; /* ints per element */

enum { A2A, AG, RED, SRED, NCOLL };
static const char *const cname[NCOLL] = {"alltoall", "allgather", "reduce", "scatter_reduce"};
enum { BLOCKING, NONBLOCKING, PERSISTENT, NCALL };
static const char *const callname[NCALL] = {"blocking", "nonblocking", "persistent"};

static int rank;

static void types_create(void)
{
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {-8, 4};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    MPI_Type_create_resized(MPI_INT, 0, -4, &types[NEG]);
    MPI_Type_create_struct(2, bl, dp, ty, &types[NEGLB]);
    MPI_Type_create_resized(types[NEGLB], -8, -20, &types[NEGBOTH]);
    for (int t = 0; t < NTYPES; t++) {
        int size;
        MPI_Type_commit(&types[t]);
        MPI_Type_size(types[t], &size);
        sig[t] = size / (int)sizeof(int);
    }
}

/* The byte offsets of the ints of one element, identified by extent and
 * true lower bound (the library may pass a duplicate of the type). */
static int element_ints(MPI_Datatype dt, MPI_Aint *ext, MPI_Aint off[2])
{
    MPI_Aint lb, tlb, text;
    MPI_Type_get_extent(dt, &lb, ext);
    MPI_Type_get_true_extent(dt, &tlb, &text);
    if (text == 4) { /* NEG or plain int */
        off[0] = tlb;
        return 1;
    }
    off[0] = -8; /* NEGLB, NEGBOTH */
    off[1] = 4;
    return 2;
}

/* inout += in, elementwise over the type map. */
static void sum_fn(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    MPI_Aint ext, off[2];
    int n = element_ints(*dt, &ext, off);
    for (int k = 0; k < *len; k++)
        for (int j = 0; j < n; j++) {
            int a, b;
            memcpy(&a, (char *)in + k * ext + off[j], sizeof a);
            memcpy(&b, (char *)inout + k * ext + off[j], sizeof b);
            b += a;
            memcpy((char *)inout + k * ext + off[j], &b, sizeof b);
        }
}

/* A buffer for n elements of type t: base is where displacement 0 is. */
typedef struct {
    char *mem, *base;
    size_t len;
} buf_t;

static buf_t buf_make(int n, MPI_Datatype t)
{
    MPI_Aint lo, span;
    buf_t b;
    oracle_footprint(n, t, &lo, &span);
    b.len = (size_t)span + 2 * GUARD;
    b.mem = malloc(b.len);
    memset(b.mem, SENT, b.len);
    b.base = b.mem + GUARD - lo;
    return b;
}

static int value(int q, int i, int k)
{
    return q * 10000 + i * 100 + k + 1;
}

/* Writes the ints of vector (q, i) as COUNT elements of type t at p. */
static void put_vector(int q, int i, char *p, int t, const int *sum)
{
    int v[COUNT * 2];
    for (int k = 0; k < COUNT * sig[t]; k++)
        v[k] = sum ? sum[k] : value(q, i, k);
    oracle_move_block(v, COUNT * sig[t], MPI_INT, p, COUNT, types[t], MPI_COMM_SELF);
}

typedef struct {
    MPI_Comm iso;
    const nbh_t *nb;
    int *src, *dst;
    const char *variant, *topo;
    MPI_Op op;
} ctx_t;

static int call(const ctx_t *c, int coll, int how, int t, buf_t *sb, buf_t *rb, const int *counts,
                const MPI_Aint *displs, const MPI_Datatype *tys)
{
    MPI_Datatype ty = types[t];
    Iso_request req = ISO_REQUEST_NULL;
    int rc = MPI_SUCCESS;
    if (how == BLOCKING) {
        switch (coll) {
        case A2A:
            return Iso_neighbor_alltoall(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso);
        case AG:
            return Iso_neighbor_allgather(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso);
        case RED:
            return Iso_neighbor_reduce(sb->base, rb->base, COUNT, ty, c->op, c->iso);
        default:
            return Iso_neighbor_scatter_reduce(sb->base, counts, displs, tys, rb->base, COUNT, ty,
                                               c->op, c->iso);
        }
    }
    switch (coll) {
    case A2A:
        rc = how == NONBLOCKING
                 ? Iso_ineighbor_alltoall(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso, &req)
                 : Iso_neighbor_alltoall_init(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso,
                                              MPI_INFO_NULL, &req);
        break;
    case AG:
        rc = how == NONBLOCKING
                 ? Iso_ineighbor_allgather(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso, &req)
                 : Iso_neighbor_allgather_init(sb->base, COUNT, ty, rb->base, COUNT, ty, c->iso,
                                               MPI_INFO_NULL, &req);
        break;
    case RED:
        rc = how == NONBLOCKING
                 ? Iso_ineighbor_reduce(sb->base, rb->base, COUNT, ty, c->op, c->iso, &req)
                 : Iso_neighbor_reduce_init(sb->base, rb->base, COUNT, ty, c->op, c->iso,
                                            MPI_INFO_NULL, &req);
        break;
    default:
        rc = how == NONBLOCKING
                 ? Iso_ineighbor_scatter_reduce(sb->base, counts, displs, tys, rb->base, COUNT, ty,
                                                c->op, c->iso, &req)
                 : Iso_neighbor_scatter_reduce_init(sb->base, counts, displs, tys, rb->base, COUNT,
                                                    ty, c->op, c->iso, MPI_INFO_NULL, &req);
        break;
    }
    if (rc != MPI_SUCCESS)
        return rc;
    if (how == PERSISTENT) { /* twice: the second start reuses what the first built */
        for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
            if ((rc = Iso_start(&req)) == MPI_SUCCESS)
                rc = Iso_wait(&req);
        Iso_request_free(&req);
        return rc;
    }
    return Iso_wait(&req);
}

static void run_one(const ctx_t *c, int coll, int how, int t)
{
    int s = c->nb->s, personalized = coll == A2A || coll == SRED;
    int nsend = personalized ? s * COUNT : COUNT, nrecv = coll == A2A || coll == AG ? s * COUNT : COUNT;
    buf_t sb = buf_make(nsend, types[t]), rb = buf_make(nrecv, types[t]), ex = buf_make(nrecv, types[t]);
    MPI_Aint ext, lb;
    int *counts = malloc(sizeof(int) * (size_t)(s + 1)), rc;
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    MPI_Datatype *tys = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    char *scopy = malloc(sb.len);
    MPI_Type_get_extent(types[t], &lb, &ext);
    for (int i = 0; i < s; i++) {
        counts[i] = COUNT;
        displs[i] = (MPI_Aint)i * COUNT * ext;
        tys[i] = types[t];
    }
    /* send side */
    if (personalized)
        for (int i = 0; i < s; i++)
            put_vector(rank, i, sb.base + displs[i], t, NULL);
    else
        put_vector(rank, 0, sb.base, t, NULL);
    memcpy(scopy, sb.mem, sb.len);
    /* expected receive side */
    if (coll == A2A || coll == AG) {
        for (int i = 0; i < s; i++)
            if (c->src[i] != MPI_PROC_NULL)
                put_vector(c->src[i], coll == A2A ? i : 0, ex.base + displs[i], t, NULL);
    } else {
        int sum[COUNT * 2] = {0}, any = 0;
        for (int i = 0; i < s; i++) {
            if (c->src[i] == MPI_PROC_NULL)
                continue;
            any = 1;
            for (int k = 0; k < COUNT * sig[t]; k++)
                sum[k] += value(c->src[i], coll == SRED ? i : 0, k);
        }
        if (any)
            put_vector(0, 0, ex.base, t, sum);
    }
    rc = call(c, coll, how, t, &sb, &rb, counts, displs, tys);
    CHECK(rc == MPI_SUCCESS, "%s %s %s %s on %s: returned %d", c->variant, cname[coll],
          callname[how], tname[t], c->topo, rc);
    if (rc == MPI_SUCCESS) {
        long k = oracle_first_diff(rb.mem, ex.mem, rb.len);
        int g = 0, e = 0;
        if (k >= 0) {
            memcpy(&g, rb.mem + (k & ~3L), sizeof g);
            memcpy(&e, ex.mem + (k & ~3L), sizeof e);
        }
        CHECK(k < 0, "%s %s %s %s on %s: byte %ld of %zu differs (int got %d, expected %d)",
              c->variant, cname[coll], callname[how], tname[t], c->topo, k, rb.len, g, e);
    }
    CHECK(oracle_first_diff(sb.mem, scopy, sb.len) < 0, "%s %s %s %s on %s: send buffer changed",
          c->variant, cname[coll], callname[how], tname[t], c->topo);
    free(sb.mem);
    free(rb.mem);
    free(ex.mem);
    free(scopy);
    free(counts);
    free(displs);
    free(tys);
}

static const struct {
    const char *alg, *mode;
} variants[] = {{"direct", "pack"},    {"dimwise", "pack"}, {"dimwise", "datatype"},
                {"bruck", "pack"},     {"bruck", "datatype"}};

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0};
    MPI_Op op;
    /* Moore radius 1, the zero offset, a repeat and two far offsets (bruck:
     * several hops through scratch vectors) */
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1, 0, 0, 1, 0, 2, 3, -3, 1};
    nbh_t nb = {2, (int)(sizeof off / sizeof off[0]) / 2, off};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Dims_create(p, 2, dims);
    types_create();
    MPI_Op_create(sum_fn, 1, &op);
    for (int periodic = 1; periodic >= 0; periodic--) {
        int periods[2] = {periodic, periodic}, src[16], dst[16];
        MPI_Comm cart;
        MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
        oracle_neighbors(cart, &nb, src, dst);
        for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
            char name[64];
            MPI_Info info;
            MPI_Comm dup, iso;
            ctx_t c = {MPI_COMM_NULL, &nb, src, dst, name, periodic ? "torus" : "mesh", op};
            snprintf(name, sizeof name, "%s:%s", variants[v].alg, variants[v].mode);
            MPI_Info_create(&info);
            MPI_Info_set(info, "iso_algorithm", variants[v].alg);
            MPI_Info_set(info, "iso_combine", variants[v].mode);
            MPI_Comm_dup(cart, &dup);
            if (Iso_neighborhood_create_with_info(dup, nb.s, off, info, &iso) != MPI_SUCCESS)
                CHECK(0, "create %s", name);
            c.iso = iso;
            for (int coll = 0; coll < NCOLL; coll++) {
                for (int how = 0; how < NCALL; how++)
                    for (int t = 0; t < NTYPES; t++)
                        run_one(&c, coll, how, t);
                tap_result(MPI_COMM_WORLD, "negative extent and lower bound: %s %s on a %dx%d %s",
                           name, cname[coll], dims[0], dims[1], c.topo);
            }
            Iso_neighborhood_free(&iso);
            MPI_Comm_free(&dup);
            MPI_Info_free(&info);
        }
        MPI_Comm_free(&cart);
    }
    MPI_Op_free(&op);
    for (int t = 0; t < NTYPES; t++)
        MPI_Type_free(&types[t]);
    MPI_Finalize();
    return 0;
}
