/* Iso_alltoall_crs and Iso_alltoallv_crs: every sparse algorithm (sharing; vpt with
 * its default shape, n = 2) on every pattern, on several pretend node layouts (ISO_NODE_MAP) and on a
 * subcommunicator.  The oracle: every process generates every process's
 * messages from a shared seed and computes what it must receive (sources
 * ascending, counts, data); random patterns are also checked against an
 * independent exchange (counts by MPI_Alltoall, data by MPI_Alltoallv).
 * Further checks:
 *   - the pairing of processes across nodes (white box: iso__locality_get
 *     and iso__locality_partner): node sizes as the map says, each
 *     process of a node chosen by as many processes of other nodes as any
 *     other of that node, give or take one;
 *   - aggregation really happens: the inter-node messages a process sends
 *     (counted through the MPI profiling interface) are at most one per
 *     remote destination node with the locality algorithms and one per
 *     remote destination without;
 *   - bundles split into chunks (a tiny chunk limit) still deliver;
 *   - a pending nonblocking neighbor alltoall progresses while the
 *     exchange waits (processes finish the two in different orders);
 *   - thousands of calls at 1-2 ranks (no leaks under make asan).
 *   - two-level maps (regions inside nodes) under ISO_LOCALITY=package and
 *     numa: the regions, the data, one message per remote region, and vpt
 *     with iso_vpt_locality=node embedding those regions;
 * Node maps are set with setenv on every rank, then a fresh MPI_Comm_dup
 * of MPI_COMM_WORLD reads them (the library reads ISO_NODE_MAP when a
 * communicator's locality is first computed).
 *
 * PER-ALGORITHM: no (the isomorphic algorithm list does not apply; the
 * sparse algorithms are looped over here)
 * NPROCS: 1 2 3 4 5 8 16
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "sparse/sparse.h" /* iso__locality_*, iso__sdde_chunk_limit */
#include "tap.h"

static int rank, nprocs;

static const char *const algs[] = {"personalized", "nbx", "rma", "locality-personalized",
                                   "locality-nbx", "vpt", "sharing", "auto"};
enum { NALGS = 8 };
static int is_locality(const char *a) { return strncmp(a, "locality", 8) == 0; }

/* ---- inter-node messages, counted through the profiling interface ---------- */
static int counting;        /* count while the library runs */
static const int *count_node; /* node of each rank of MPI_COMM_WORLD */
static long inter_sent;

static void count_send(int dest, MPI_Comm comm)
{
    int size, me;
    if (!counting || count_node == NULL)
        return;
    PMPI_Comm_size(comm, &size);
    if (size != nprocs) /* the node communicators: intra-node by construction */
        return;
    PMPI_Comm_rank(comm, &me); /* a duplicate of MPI_COMM_WORLD: same ranks */
    if (dest >= 0 && dest < nprocs && count_node[dest] != count_node[me])
        inter_sent++;
}

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    count_send(dest, comm);
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    count_send(dest, comm);
    return PMPI_Issend(buf, count, type, dest, tag, comm, request);
}

/* ---- patterns: every process can generate every process's messages -------- */
enum { RANDOM, ONE_TO_ALL, ALL_TO_ONE, NOBODY, SELF_ONLY, ZERO_LENGTH, LARGE, NPAT };
static const char *const pat_name[NPAT] = {"random",    "one to all",  "all to one", "nobody",
                                           "self only", "zero-length", "1 MiB"};
#define LARGE_INTS (1 << 18) /* 1 MiB */

typedef struct {
    int n, *dest, *count; /* count: elements of the send type */
} msgs_t;

static void msgs_free(msgs_t *m)
{
    free(m->dest);
    free(m->count);
    m->dest = m->count = NULL;
}

/* Process q's messages in pattern `pat` (constant: every count is c). */
static msgs_t pattern(int pat, unsigned seed, int p, int q, int constant, int c)
{
    msgs_t m = {0, malloc(sizeof(int) * (size_t)(p + 1)), malloc(sizeof(int) * (size_t)(p + 1))};
    unsigned st = seed * 7919u + (unsigned)q * 104729u + 1u;
    switch (pat) {
    case RANDOM:
    case ZERO_LENGTH:
        for (int r = 0; r < p; r++)
            if (oracle_rand(&st) % 100 < 45)
                m.dest[m.n++] = r;
        for (int i = m.n - 1; i > 0; i--) { /* destinations in random order */
            int j = (int)(oracle_rand(&st) % (unsigned)(i + 1)), t = m.dest[i];
            m.dest[i] = m.dest[j];
            m.dest[j] = t;
        }
        for (int i = 0; i < m.n; i++)
            m.count[i] = pat == ZERO_LENGTH ? 0 : (int)(oracle_rand(&st) % 6);
        break;
    case ONE_TO_ALL:
        if (q == 0)
            for (int r = p - 1; r >= 0; r--, m.n++)
                m.dest[m.n] = r, m.count[m.n] = r % 3;
        break;
    case ALL_TO_ONE:
        m.dest[0] = p - 1, m.count[0] = q % 4 + 1, m.n = 1;
        break;
    case SELF_ONLY:
        m.dest[0] = q, m.count[0] = 3, m.n = 1;
        break;
    case LARGE:
        m.dest[0] = (q + 1) % p, m.count[0] = LARGE_INTS, m.n = 1;
        if (p > 2)
            m.dest[1] = (q + p - 1) % p, m.count[1] = 5, m.n = 2;
        break;
    default:
        break;
    }
    if (constant)
        for (int i = 0; i < m.n; i++)
            m.count[i] = c;
    return m;
}

/* The constant count of a pattern (Alltoall_crs). */
static int pattern_count(int pat)
{
    return pat == LARGE ? LARGE_INTS : pat == ZERO_LENGTH ? 0 : 2;
}

/* Int j of the message from q to r. */
static int value(int q, int r, int j) { return q * 1000003 + r * 1009 + j; }

/* ---- one call and its check ---------------------------------------------------- */
typedef struct {
    MPI_Comm comm;
    int p, me;
    const char *where; /* for messages */
    MPI_Info info_verify, info_noverify;
} ctx_t;

/* Runs algorithm alg on pattern pat: send type stype (over ints, sig ints
 * each), receive type rtype (over ints, rsig ints each); checks everything
 * against the shared-seed expectation.  Returns the library's error code. */
static int run_case(const ctx_t *x, const char *alg, int pat, int constant, int stype, int rtype,
                    unsigned seed, int verify)
{
    int p = x->p, me = x->me, c = pattern_count(pat) / oracle_type_sig[stype];
    msgs_t m = pattern(pat, seed, p, me, constant, c);
    MPI_Datatype st = oracle_type[stype], rt = oracle_type[rtype];
    int sig = oracle_type_sig[stype], rsig = oracle_type_sig[rtype];
    MPI_Aint lb, sext, rext;
    int *displs = malloc(sizeof(int) * (size_t)(m.n + 1)), total = 0, rc;
    MPI_Info info = verify ? x->info_verify : x->info_noverify;
    char *sendbuf;
    int recv_nnz = -1, *src = (int *)1, *rcounts = (int *)1, *rdispls = (int *)1;
    void *rvals = (void *)1;

    MPI_Type_get_extent(st, &lb, &sext);
    MPI_Type_get_extent(rt, &lb, &rext);
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    /* Alltoallv: messages stored in reverse order with a gap of one
     * element between them, so that displacements matter. */
    for (int i = m.n - 1; i >= 0; i--) {
        displs[i] = constant ? i * c : total + 1;
        total += m.count[i] + 1;
    }
    if (constant)
        total = m.n * c;
    sendbuf = calloc((size_t)(total + 2) * (size_t)sext + 64, 1);
    for (int i = 0; i < m.n; i++) {
        int nints = m.count[i] * sig, *v = malloc(sizeof(int) * (size_t)(nints + 1));
        for (int j = 0; j < nints; j++)
            v[j] = value(me, m.dest[i], j);
        /* + 8 bytes: OT_RESLB has lower bound -8 */
        oracle_move_block(v, nints, MPI_INT, sendbuf + 8 + (MPI_Aint)displs[i] * sext, m.count[i],
                          st, MPI_COMM_SELF);
        free(v);
    }
    if (constant)
        rc = Iso_alltoall_crs(m.n, m.dest, c, st, sendbuf + 8, &recv_nnz, &src, c * sig / rsig,
                              rt, &rvals, info, x->comm);
    else
        rc = Iso_alltoallv_crs(m.n, m.dest, m.count, displs, st, sendbuf + 8, &recv_nnz, &src,
                               &rcounts, &rdispls, rt, &rvals, info, x->comm);
    MPI_Info_delete(info, "iso_sparse_algorithm");
    CHECK(rc == MPI_SUCCESS, "%s %s %s %s: rc=%d", x->where, alg, pat_name[pat],
          constant ? "alltoall" : "alltoallv", rc);
    if (rc != MPI_SUCCESS)
        goto done;

    /* expected: the senders to me in ascending order */
    {
        int k = 0, pos = 0, bad = 0;
        for (int q = 0; q < p; q++) {
            msgs_t mq = pattern(pat, seed, p, q, constant, c);
            for (int i = 0; i < mq.n; i++) {
                int nints;
                if (mq.dest[i] != me)
                    continue;
                nints = mq.count[i] * sig;
                if (k >= recv_nnz) {
                    k++;
                    continue;
                }
                if (src[k] != q && bad++ < 3)
                    CHECK_EQ_INT(src[k], q, "%s %s %s: source %d", x->where, alg, pat_name[pat], k);
                if (!constant) {
                    if (rcounts[k] != nints / rsig && bad++ < 3)
                        CHECK_EQ_INT(rcounts[k], nints / rsig, "%s %s %s: recvcounts[%d]",
                                     x->where, alg, pat_name[pat], k);
                    if (rdispls[k] != pos && bad++ < 3)
                        CHECK_EQ_INT(rdispls[k], pos, "%s %s %s: rdispls[%d]", x->where, alg,
                                     pat_name[pat], k);
                }
                {
                    int *got = malloc(sizeof(int) * (size_t)(nints + 1));
                    oracle_move_block((char *)rvals + (MPI_Aint)pos * rext, nints / rsig, rt, got,
                                      nints, MPI_INT, MPI_COMM_SELF);
                    for (int j = 0; j < nints; j++)
                        if (got[j] != value(q, me, j)) {
                            if (bad++ < 3)
                                CHECK(0, "%s %s %s %s: message from %d, int %d: %d, expected %d",
                                      x->where, alg, pat_name[pat],
                                      constant ? "alltoall" : "alltoallv", q, j, got[j],
                                      value(q, me, j));
                            break;
                        }
                    free(got);
                }
                pos += nints / rsig;
                k++;
            }
            msgs_free(&mq);
        }
        CHECK_EQ_INT(recv_nnz, k, "%s %s %s %s: recv_nnz", x->where, alg, pat_name[pat],
                     constant ? "alltoall" : "alltoallv");
        if (recv_nnz == 0)
            CHECK(src == NULL && rvals == NULL && (constant || (rcounts == NULL && rdispls == NULL)),
                  "%s %s %s: outputs not NULL with recv_nnz 0", x->where, alg, pat_name[pat]);
        else
            CHECK(src && rvals && (constant || (rcounts && rdispls)),
                  "%s %s %s: NULL output with recv_nnz %d", x->where, alg, pat_name[pat],
                  recv_nnz);
    }
    free(src);
    free(rvals);
    if (!constant) {
        free(rcounts);
        free(rdispls);
    }
done:
    free(sendbuf);
    free(displs);
    msgs_free(&m);
    return rc;
}

/* ---- the independent oracle: MPI_Alltoall + MPI_Alltoallv ---------------------- */
static void alltoallv_oracle(const ctx_t *x, const char *alg, unsigned seed)
{
    int p = x->p, me = x->me;
    msgs_t m = pattern(RANDOM, seed, p, me, 0, 0);
    int *scnt = calloc((size_t)p, sizeof(int)), *rcnt = calloc((size_t)p, sizeof(int));
    int *sdsp = calloc((size_t)p, sizeof(int)), *rdsp = calloc((size_t)p, sizeof(int));
    int *flag = calloc((size_t)p, sizeof(int)), *rflag = calloc((size_t)p, sizeof(int));
    int *sbuf, *rbuf, stot = 0, rtot = 0, *displs = malloc(sizeof(int) * (size_t)(m.n + 1));
    int *vals, vtot = 0, recv_nnz, *src, *rcounts, *rdispls, rc;
    void *rvals;
    for (int i = 0; i < m.n; i++)
        scnt[m.dest[i]] = m.count[i], flag[m.dest[i]] = 1, vtot += m.count[i];
    MPI_Alltoall(flag, 1, MPI_INT, rflag, 1, MPI_INT, x->comm);
    MPI_Alltoall(scnt, 1, MPI_INT, rcnt, 1, MPI_INT, x->comm);
    for (int r = 0; r < p; r++)
        sdsp[r] = stot, stot += scnt[r], rdsp[r] = rtot, rtot += rcnt[r];
    sbuf = malloc(sizeof(int) * (size_t)(stot + 1));
    rbuf = malloc(sizeof(int) * (size_t)(rtot + 1));
    vals = malloc(sizeof(int) * (size_t)(vtot + 1));
    for (int i = 0, v = 0; i < m.n; i++) { /* one set of values, random per call */
        displs[i] = v;
        for (int j = 0; j < m.count[i]; j++, v++)
            vals[v] = sbuf[sdsp[m.dest[i]] + j] = (int)(oracle_rand(&seed) & 0xffffff);
    }
    MPI_Alltoallv(sbuf, scnt, sdsp, MPI_INT, rbuf, rcnt, rdsp, MPI_INT, x->comm);
    MPI_Info_set(x->info_noverify, "iso_sparse_algorithm", alg);
    rc = Iso_alltoallv_crs(m.n, m.dest, m.count, displs, MPI_INT, vals, &recv_nnz, &src, &rcounts,
                           &rdispls, MPI_INT, &rvals, x->info_noverify, x->comm);
    MPI_Info_delete(x->info_noverify, "iso_sparse_algorithm");
    CHECK(rc == MPI_SUCCESS, "%s %s: oracle case rc=%d", x->where, alg, rc);
    if (rc == MPI_SUCCESS) {
        int k = 0;
        for (int q = 0; q < p; q++) {
            if (!rflag[q])
                continue;
            if (k < recv_nnz) {
                CHECK_EQ_INT(src[k], q, "%s %s: oracle: source %d", x->where, alg, k);
                CHECK_EQ_INT(rcounts[k], rcnt[q], "%s %s: oracle: count from %d", x->where, alg,
                             q);
                if (rcounts[k] == rcnt[q])
                    CHECK(!memcmp((int *)rvals + rdispls[k], rbuf + rdsp[q],
                                  sizeof(int) * (size_t)rcnt[q]),
                          "%s %s: oracle: data from %d", x->where, alg, q);
            }
            k++;
        }
        CHECK_EQ_INT(recv_nnz, k, "%s %s: oracle: recv_nnz", x->where, alg);
        free(src), free(rcounts), free(rdispls), free(rvals);
    }
    free(scnt), free(rcnt), free(sdsp), free(rdsp), free(flag), free(rflag);
    free(sbuf), free(rbuf), free(vals), free(displs);
    msgs_free(&m);
}

/* ---- node maps ------------------------------------------------------------------ */
enum { MAP_ONE_NODE, MAP_PER_RANK, MAP_TWO_UNEVEN, MAP_THREE_UNEVEN, MAP_INTERLEAVED, MAP_RANDOM,
       NMAPS };
static const char *const map_name[NMAPS] = {"one node",     "one rank per node", "uneven 3+5",
                                            "uneven 1+2+5", "interleaved",       "random"};

/* Node id of every world rank (ids need not be dense or ordered). */
static void make_map(int kind, int p, int *node)
{
    unsigned st = 4242u;
    for (int r = 0; r < p; r++) {
        switch (kind) {
        case MAP_ONE_NODE: node[r] = 7; break;
        case MAP_PER_RANK: node[r] = 3 * (p - r); break;
        case MAP_TWO_UNEVEN: node[r] = r < (3 * p + 7) / 8 ? 1 : 0; break; /* 3+5 at 8 */
        case MAP_THREE_UNEVEN: node[r] = r < (p + 7) / 8 ? 5 : r < (3 * p + 7) / 8 ? 2 : 9; break;
        case MAP_INTERLEAVED: node[r] = r % (p > 4 ? 3 : 2); break;
        default: node[r] = (int)(oracle_rand(&st) % 4) * 10; break;
        }
    }
}

static void set_map(const int *node, int p)
{
    char *s = malloc((size_t)p * 12 + 1);
    int len = 0;
    for (int r = 0; r < p; r++)
        len += sprintf(s + len, "%s%d", r ? "," : "", node[r]);
    setenv("ISO_NODE_MAP", s, 1);
    free(s);
}

/* The library's view of comm (a duplicate of MPI_COMM_WORLD) at `level`
 * against the map's regions (node: the region of each rank), and the
 * balance of its pairing. */
static void check_locality(MPI_Comm comm, int level, const int *node, const char *where)
{
    const iso_locality *l;
    int p = nprocs, rc = iso__locality_at(comm, level, &l);
    CHECK(rc == MPI_SUCCESS, "%s: iso__locality_at rc=%d", where, rc);
    if (rc != MPI_SUCCESS)
        return;
    for (int a = 0; a < p; a++)
        for (int b = 0; b < p; b++)
            if ((node[a] == node[b]) != (l->node[a] == l->node[b])) {
                CHECK(0, "%s: ranks %d and %d: same node in the map %d, in the library %d", where,
                      a, b, node[a] == node[b], l->node[a] == l->node[b]);
                return;
            }
    for (int r = 0, seen = -1; r < p; r++) { /* ids in the order of the lowest ranks */
        CHECK(l->node[r] <= seen + 1, "%s: node ids not in order of lowest rank", where);
        seen = l->node[r] > seen ? l->node[r] : seen;
    }
    for (int r = 0; r < p; r++) {
        int below = 0;
        for (int q = 0; q < r; q++)
            below += node[q] == node[r];
        CHECK_EQ_INT(l->local[r], below, "%s: local rank of %d", where, r);
    }
    for (int n = 0; n < l->nnodes; n++) {
        int sz = iso__node_size(l, n), *load = calloc((size_t)sz, sizeof(int)), lo = p, hi = 0;
        for (int r = 0; r < p; r++) {
            int partner;
            if (l->node[r] == n)
                continue;
            partner = iso__locality_partner(l, r, n);
            CHECK(l->node[partner] == n, "%s: partner of %d on node %d is on node %d", where, r,
                  n, l->node[partner]);
            load[l->local[partner]]++;
        }
        for (int k = 0; k < sz; k++)
            lo = load[k] < lo ? load[k] : lo, hi = load[k] > hi ? load[k] : hi;
        CHECK(hi - lo <= 1, "%s: node %d (size %d): partners chosen %d to %d times", where, n, sz,
              lo, hi);
        free(load);
    }
    for (int r = 0; r < p; r++)
        CHECK_EQ_INT(iso__locality_partner(l, r, l->node[r]), r, "%s: own-node partner of %d",
                     where, r);
}

/* Inter-node messages one call of alg sends from this process, against the
 * bound: remote destination nodes (locality) or remote destinations. */
static void check_aggregation(const ctx_t *x, const char *alg, const int *node, unsigned seed)
{
    msgs_t m = pattern(RANDOM, seed, x->p, x->me, 0, 0);
    int remote = 0, nodes = 0, *seen = calloc((size_t)x->p, sizeof(int)), *displs, recv_nnz, rc;
    int *src, *rcounts, *rdispls, *vals = calloc(6 * (size_t)x->p + 1, sizeof(int));
    void *rvals;
    displs = calloc((size_t)m.n + 1, sizeof(int));
    for (int i = 0; i < m.n; i++) {
        int d = m.dest[i];
        if (node[d] == node[x->me])
            continue;
        remote++;
        for (int j = 0; j < i; j++)
            if (node[m.dest[j]] == node[d])
                goto counted;
        nodes++;
    counted:;
    }
    MPI_Info_set(x->info_noverify, "iso_sparse_algorithm", alg);
    count_node = node;
    inter_sent = 0;
    counting = 1;
    rc = Iso_alltoallv_crs(m.n, m.dest, m.count, displs, MPI_INT, vals, &recv_nnz, &src, &rcounts,
                           &rdispls, MPI_INT, &rvals, x->info_noverify, x->comm);
    counting = 0;
    MPI_Info_delete(x->info_noverify, "iso_sparse_algorithm");
    CHECK(rc == MPI_SUCCESS, "%s %s: aggregation case rc=%d", x->where, alg, rc);
    if (is_locality(alg))
        CHECK(inter_sent == nodes, "%s %s: %ld inter-node messages for %d remote nodes", x->where,
              alg, inter_sent, nodes);
    else
        CHECK_EQ_INT(inter_sent, remote, "%s %s: inter-node messages", x->where, alg);
    if (rc == MPI_SUCCESS)
        free(src), free(rcounts), free(rdispls), free(rvals);
    free(seen), free(vals), free(displs);
    msgs_free(&m);
}

/* ---- test groups ------------------------------------------------------------------ */

static void run_patterns(const ctx_t *x, const char *alg, int npat, unsigned seed)
{
    for (int pat = 0; pat < npat; pat++)
        for (int constant = 0; constant <= 1; constant++) {
            if (!constant && !strcmp(alg, "rma"))
                continue;
            run_case(x, alg, pat, constant, OT_INT, OT_INT, seed + (unsigned)pat,
                     (pat + constant) & 1);
        }
}

/* Send types with gaps, a receive type with gaps. */
static void run_types(const ctx_t *x, const char *alg, unsigned seed)
{
    static const int st[] = {OT_VEC, OT_RESLB, OT_IDXREV, OT_CONT2};
    for (size_t k = 0; k < sizeof st / sizeof st[0]; k++)
        for (int constant = 0; constant <= 1; constant++)
            if (constant || strcmp(alg, "rma"))
                run_case(x, alg, RANDOM, constant, st[k], k & 1 ? OT_RES : OT_INT,
                         seed + (unsigned)k, 1);
}

static ctx_t ctx_make(MPI_Comm comm, const char *where)
{
    ctx_t x = {comm, 0, 0, where, MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm_size(comm, &x.p);
    MPI_Comm_rank(comm, &x.me);
    MPI_Info_create(&x.info_verify);
    MPI_Info_set(x.info_verify, "iso_verify", "true");
    MPI_Info_create(&x.info_noverify);
    MPI_Info_set(x.info_noverify, "iso_verify", "false");
    return x;
}

static void ctx_free(ctx_t *x)
{
    MPI_Info_free(&x->info_verify);
    MPI_Info_free(&x->info_noverify);
}

/* ---- other requests progress while the exchange waits ---------------------------- */
/* A nonblocking neighbor alltoall with a two-round schedule (dimwise on a
 * 2D torus, Moore radius 1) is pending while the SDDE runs; even ranks
 * call the SDDE before waiting for it, odd ranks after.  The odd ranks'
 * wait needs the even ranks to post the second round, which only the
 * library's progress does: if the SDDE progressed only itself, this would
 * hang (the harness's timeout). */
static void progress_together(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1}, send[8], recv[8], src[8], dst[8];
    MPI_Comm cart, iso;
    MPI_Info info;
    nbh_t nb = nbh_moore(2, 1);
    ctx_t x;
    MPI_Dims_create(nprocs, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", "dimwise");
    Iso_neighborhood_create_with_info(cart, nb.s, nb.off, info, &iso);
    oracle_neighbors(cart, &nb, src, dst);
    x = ctx_make(MPI_COMM_WORLD, "beside a pending neighbor alltoall");
    for (int a = 0; a < NALGS; a++) {
        Iso_request req;
        int rc;
        for (int i = 0; i < nb.s; i++)
            send[i] = rank * 100 + i, recv[i] = -1;
        rc = Iso_ineighbor_alltoall(send, 1, MPI_INT, recv, 1, MPI_INT, iso, &req);
        CHECK(rc == MPI_SUCCESS, "%s: Iso_ineighbor_alltoall rc=%d", algs[a], rc);
        if (rank % 2 == 1)
            Iso_wait(&req);
        run_case(&x, algs[a], RANDOM, 1, OT_INT, OT_INT, 1100 + (unsigned)a, a & 1);
        if (rank % 2 == 0)
            Iso_wait(&req);
        for (int i = 0; i < nb.s; i++)
            CHECK_EQ_INT(recv[i], src[i] * 100 + i, "%s: neighbor alltoall block %d", algs[a], i);
    }
    ctx_free(&x);
    MPI_Info_free(&info);
    Iso_neighborhood_free(&iso);
    MPI_Comm_free(&cart);
    nbh_free(&nb);
}

/* Two-level layout `kind` (0: nodes 3+5 at 8, the first one package, the
 * second two of 2 and 3 processes with NUMA halves in the larger;
 * 1: interleaved nodes, random packages of 1..3 per node, random NUMA
 * halves), checked at levels package and numa; region[] holds the
 * expected region of each rank (distinct per (node, package[, numa])). */
static void two_level(int kind, int *region)
{
    static const char *const lname[] = {"node", "package", "numa"};
    int p = nprocs, *nd = malloc(sizeof(int) * 3 * (size_t)p), *pk = nd + p, *nm = nd + 2 * p;
    char *map = malloc((size_t)p * 36 + 1);
    unsigned st = 777u + (unsigned)kind;
    int len = 0;
    for (int r = 0; r < p; r++) {
        if (kind == 0) {
            nd[r] = r < (3 * p + 7) / 8 ? 1 : 0;
            pk[r] = nd[r] == 0 && r % 3 == 0;
            nm[r] = pk[r] == 0 && nd[r] == 0 && r % 2;
        } else {
            nd[r] = r % 2 + 4;
            pk[r] = (int)(oracle_rand(&st) % (unsigned)(nd[r] == 4 ? 2 : 3));
            nm[r] = (int)(oracle_rand(&st) % 2);
        }
        len += sprintf(map + len, "%s%d.%d.%d", r ? "," : "", nd[r], pk[r], nm[r]);
    }
    setenv("ISO_NODE_MAP", map, 1);
    for (int level = ISO_LEVEL_PACKAGE; level <= ISO_LEVEL_NUMA; level++) {
        MPI_Comm comm;
        char where[64];
        for (int r = 0; r < p; r++)
            region[r] = (nd[r] * 4 + pk[r]) * 2 + (level == ISO_LEVEL_NUMA ? nm[r] : 0);
        setenv("ISO_LOCALITY", lname[level], 1);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        snprintf(where, sizeof where, "two-level map %d at %s", kind, lname[level]);
        {
            ctx_t x = ctx_make(comm, where);
            check_locality(comm, level, region, where);
            for (int a = 0; a < NALGS; a++) {
                if (!is_locality(algs[a]))
                    continue;
                run_patterns(&x, algs[a], NOBODY, 1400 + (unsigned)kind);
                alltoallv_oracle(&x, algs[a], 1500 + (unsigned)level);
                check_aggregation(&x, algs[a], region, 1600 + (unsigned)kind);
            }
            /* the VPT embedding of the same regions (iso_vpt_locality=node) */
            setenv("ISO_VPT_LOCALITY", "node", 1);
            run_patterns(&x, "vpt", NOBODY, 1700 + (unsigned)kind);
            unsetenv("ISO_VPT_LOCALITY");
            ctx_free(&x);
        }
        MPI_Comm_free(&comm);
        unsetenv("ISO_LOCALITY");
        tap_result(MPI_COMM_WORLD, "%s: regions, locality algorithms, one message per region, "
                   "vpt embedding", where);
    }
    unsetenv("ISO_NODE_MAP");
    free(map);
    free(nd);
}

int main(int argc, char **argv)
{
    int big, *node, nmaps;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    oracle_types_create();
    big = nprocs > 8; /* MPICH: ~100 ms per collective at 16 ranks: few calls */
    node = malloc(sizeof(int) * (size_t)nprocs);
    unsetenv("ISO_NODE_MAP");
    unsetenv("ISO_SPARSE_ALGORITHM");

    /* Every algorithm and pattern on MPI_COMM_WORLD (this machine: one node). */
    {
        ctx_t x = ctx_make(MPI_COMM_WORLD, "world");
        for (int a = 0; a < NALGS; a++) {
            if (big) {
                if (strcmp(algs[a], "rma"))
                    run_case(&x, algs[a], RANDOM, 0, OT_INT, OT_INT, 11, a & 1);
                run_case(&x, algs[a], RANDOM, 1, OT_INT, OT_INT, 12, 1);
            } else {
                run_patterns(&x, algs[a], NPAT, 100);
                /* at 5+ ranks (MPICH is slow there) the datatype paths once
                 * each: typed sends, packed puts, packed bundles */
                if (nprocs <= 4 || a == 0 || !strcmp(algs[a], "rma") || a == 4 ||
                    !strcmp(algs[a], "sharing"))
                    run_types(&x, algs[a], 200);
                if (strcmp(algs[a], "rma"))
                    alltoallv_oracle(&x, algs[a], 300 + (unsigned)a);
            }
            tap_result(MPI_COMM_WORLD, "%s: every pattern and datatype on MPI_COMM_WORLD",
                       algs[a]);
        }
        ctx_free(&x);
    }

    if (nprocs >= 2 && !big) {
        progress_together();
        tap_result(MPI_COMM_WORLD, "every algorithm progresses a pending neighbor alltoall");
    }

    /* Pretend node layouts: a fresh duplicate per map. */
    /* at 5+ ranks the one-node and one-per-node layouts are left to the
     * smaller runs */
    nmaps = big ? 2 : nprocs > 4 ? NMAPS - 2 : NMAPS;
    for (int k = 0; k < nmaps; k++) {
        int kind = big ? (k ? MAP_THREE_UNEVEN : MAP_RANDOM) : nprocs > 4 ? k + 2 : k;
        MPI_Comm comm;
        char where[64];
        make_map(kind, nprocs, node);
        set_map(node, nprocs);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        snprintf(where, sizeof where, "map %s", map_name[kind]);
        {
            ctx_t x = ctx_make(comm, where);
            check_locality(comm, ISO_LEVEL_NODE, node, where);
            /* The other algorithms do not depend on the layout (auto picks
             * personalized below 64 processes): their inter-node messages
             * are counted once, for comparison. */
            check_aggregation(&x, "nbx", node, 700 + (unsigned)k);
            for (int a = 0; a < NALGS; a++) {
                if (!is_locality(algs[a]))
                    continue;
                if (big) {
                    run_case(&x, algs[a], RANDOM, a & 1, OT_INT, OT_INT, 21, 1);
                } else {
                    run_patterns(&x, algs[a], NOBODY, 400 + (unsigned)k);
                    run_case(&x, algs[a], ZERO_LENGTH, k & 1, OT_INT, OT_INT, 450, 1);
                    run_case(&x, algs[a], RANDOM, 0, OT_VEC, OT_INT, 500, 0);
                    alltoallv_oracle(&x, algs[a], 600 + (unsigned)k);
                }
                check_aggregation(&x, algs[a], node, 700 + (unsigned)k);
            }
            ctx_free(&x);
        }
        MPI_Comm_free(&comm);
        unsetenv("ISO_NODE_MAP");
        tap_result(MPI_COMM_WORLD, "%s: locality pairing, aggregation, locality algorithms",
                   where);
    }

    /* Two-level pretend maps (ISO_NODE_MAP "node.package.numa"), uneven at
     * both levels, under ISO_LOCALITY=package and numa: the regions are
     * (node, package) and (node, package, numa) pairs; the locality
     * algorithms deliver, and send at most one message per remote region. */
    if (nprocs >= 3 && !big)
        for (int kind = 0; kind < 2; kind++)
            two_level(kind, node);

    /* A subcommunicator (odd and even world ranks, in reverse order) with a
     * map: nodes through world ranks. */
    if (!big) {
        MPI_Comm sub;
        make_map(MAP_INTERLEAVED, nprocs, node);
        set_map(node, nprocs);
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, nprocs - rank, &sub);
        {
            ctx_t x = ctx_make(sub, "subcommunicator");
            /* Both halves at once, rma included: under Open MPI 4 the
             * library must keep the halves' windows apart (ompi#9492). */
            for (int a = 0; a < NALGS; a++)
                run_patterns(&x, algs[a], 3, 800);
            ctx_free(&x);
        }
        MPI_Comm_free(&sub);
        unsetenv("ISO_NODE_MAP");
        tap_result(MPI_COMM_WORLD, "subcommunicator with an interleaved map: every algorithm");
    }

    /* Bundles split into chunks: a limit below one submessage. */
    if (!big) {
        MPI_Comm comm;
        make_map(MAP_TWO_UNEVEN, nprocs, node);
        set_map(node, nprocs);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        iso__sdde_chunk_limit = 16;
        {
            ctx_t x = ctx_make(comm, "tiny chunks");
            run_patterns(&x, "locality-personalized", 3, 900);
            run_patterns(&x, "locality-nbx", 3, 901);
            ctx_free(&x);
        }
        iso__sdde_chunk_limit = 1 << 30;
        MPI_Comm_free(&comm);
        unsetenv("ISO_NODE_MAP");
        tap_result(MPI_COMM_WORLD, "bundles split into chunks of at most one submessage");
    }

    /* Many calls (leaks show under make asan). */
    if (nprocs <= 2) {
        ctx_t x = ctx_make(MPI_COMM_WORLD, "loop");
        int errors = 0;
        for (int it = 0; it < 2000 && errors == 0; it++)
            errors += run_case(&x, algs[it % NALGS], it % 3 ? RANDOM : SELF_ONLY,
                               !strcmp(algs[it % NALGS], "rma") || it % 2, OT_INT, OT_INT,
                               1000 + (unsigned)it, it % 2) != MPI_SUCCESS;
        ctx_free(&x);
        tap_result(MPI_COMM_WORLD, "2000 calls, every algorithm in turn");
    }

    free(node);
    oracle_types_free();
    MPI_Finalize();
    return 0;
}
