/* The vpt algorithm (store-and-forward over a virtual process topology) for
 * Iso_neighbor_alltoall(v/w) on distributed graph communicators: the
 * patterns and oracle of t_graph (tests/graph.h: plain Isend/Irecv per
 * edge) for n = 2 and 3 dimensions (balanced sizes,
 * iso_vpt_n) and an explicit shape (iso_vpt_dims: the smallest factor
 * first, or 1,p for a prime p);
 * persistent requests started several times with new data, blocking calls
 * (the shape from ISO_SPARSE_ALGORITHM / ISO_VPT_DIMS read when a graph
 * communicator is first used) and nonblocking ones.
 *
 * Iso_request_vpt_info is checked against what the pattern implies: every
 * process routes every edge of the shared pattern here (its own dimension-
 * order routing, not the library's) and counts, per stage, its messages
 * (distinct next processes; at most k_d - 1), the bytes they carry (8 per
 * submessage + 4 per int) and the bytes of others' submessages it
 * forwards; the peak buffer against the messages of that routing and their
 * lifetimes: at least the most bytes alive at once, at most all of them,
 * and less than all whenever two lifetimes are disjoint (shared buffers).
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 1 3 4 7 12 16
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"
#include "route/route.h"

static MPI_Comm ocomm;

/* ---- the expected statistics --------------------------------------------------- */

static void coords(int n, const int dims[], int r, int c[])
{
    for (int d = n - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static int rank_of(int n, const int dims[], const int c[])
{
    int r = 0;
    for (int d = 0; d < n; d++)
        r = r * dims[d] + c[d];
    return r;
}

/* Where a submessage at VPT rank at for VPT rank dest goes at stage d:
 * at's coordinates with dest's in dimension d. */
static int hop(int n, const int dims[], int at, int dest, int d)
{
    int ca[16], cb[16];
    coords(n, dims, at, ca);
    coords(n, dims, dest, cb);
    ca[d] = cb[d];
    return rank_of(n, dims, ca);
}

/* Messages, bytes per stage and forwarded bytes of rank me, with 4-byte
 * elements. */
static const int *g_vrank; /* the VPT rank of each rank (NULL: the same) */

static int vr(int r)
{
    return g_vrank ? g_vrank[r] : r;
}

static void expected(const gpattern *g, int n, const int dims[], int me, int msgs[],
                     long long bytes[], long long *fwd)
{
    int p = g->p;
    char *to = calloc((size_t)p * (size_t)n, 1); /* [stage][next]: me sends there */
    *fwd = 0;
    for (int d = 0; d < n; d++)
        msgs[d] = 0, bytes[d] = 0;
    for (int a = 0; a < p; a++)
        for (int e = g->first[a]; e < g->first[a + 1]; e++) {
            int at = vr(a);
            me = vr(g->rank);
            for (int d = 0; d < n; d++) {
                int next = hop(n, dims, at, vr(g->dst[e]), d);
                if (next != at && at == me) {
                    if (!to[(size_t)d * (size_t)p + (size_t)next]++)
                        msgs[d]++;
                    bytes[d] += 8 + 4LL * g->cnt[e];
                    if (vr(a) != me)
                        *fwd += 4LL * g->cnt[e];
                }
                at = next;
            }
        }
    free(to);
}

/* The message buffers of rank me, modelled on the pattern alone: the
 * messages of its routing (one per stage and peer, 8 bytes per submessage
 * + 4 per int) with their lifetimes in time points 3 * stage + step (step
 * 0: packing, 1: communication, 2: delivery).  An outgoing message of
 * stage d lives [3d, 3d+1]; an incoming one from 3d+1 until it is
 * delivered (3d+2, if it holds a submessage for me) or forwarded (3e at
 * the next stage e its submessage moves).  Sizes rounded up to 8 bytes
 * (the headers are int64).  *live: the most bytes alive at one time point
 * (no allocator does with less); *sum: all messages (separate buffers). */
static void expected_buffers(const gpattern *g, int n, const int dims[], long long *live,
                             long long *sum)
{
    int p = g->p, me = vr(g->rank);
    size_t nm = (size_t)n * (size_t)p;
    long long *out = calloc(nm, sizeof(long long)), *in = calloc(nm, sizeof(long long));
    int *dies = calloc(nm, sizeof(int));
    *live = *sum = 0;
    for (int a = 0; a < p; a++)
        for (int e = g->first[a]; e < g->first[a + 1]; e++) {
            int at = vr(a), held = -1, bytes = 8 + 4 * g->cnt[e];
            for (int d = 0; d < n; d++) {
                int next = hop(n, dims, at, vr(g->dst[e]), d);
                if (at == me && next != at) {
                    out[(size_t)d * (size_t)p + (size_t)next] += bytes;
                    if (held >= 0 && dies[held] < 3 * d)
                        dies[held] = 3 * d;
                    held = -1;
                }
                if (next == me && at != me) {
                    held = d * p + at;
                    in[held] += bytes;
                    if (dies[held] < 3 * d + 1)
                        dies[held] = 3 * d + 1;
                    if (vr(g->dst[e]) == me) {
                        dies[held] = 3 * d + 2;
                        held = -1;
                    }
                }
                at = next;
            }
        }
    for (int t = 0; t < 3 * n; t++) {
        long long now = 0;
        for (size_t i = 0; i < nm; i++) {
            int d = (int)(i / (size_t)p);
            if (out[i] > 0 && 3 * d <= t && t <= 3 * d + 1)
                now += (out[i] + 7) / 8 * 8;
            if (in[i] > 0 && 3 * d + 1 <= t && t <= dies[i])
                now += (in[i] + 7) / 8 * 8;
        }
        *live = now > *live ? now : *live;
    }
    for (size_t i = 0; i < nm; i++)
        *sum += (out[i] + 7) / 8 * 8 + (in[i] + 7) / 8 * 8;
    free(out);
    free(in);
    free(dies);
}

static void check_info(const gpattern *g, Iso_request req, int n, const int dims[],
                       const char *what)
{
    int nst = -1, msgs[16], want_msgs[16];
    long long bytes[16], want_bytes[16], fwd = -2, want_fwd, buf = -1, live, sum;
    int err = Iso_request_vpt_info(req, 16, &nst, msgs, bytes, &fwd, &buf);
    CHECK_EQ_INT(err, MPI_SUCCESS, "%s: Iso_request_vpt_info", what);
    if (err != MPI_SUCCESS)
        return;
    CHECK_EQ_INT(nst, n, "%s: stages", what);
    expected(g, n, dims, g->rank, want_msgs, want_bytes, &want_fwd);
    for (int d = 0; d < n && d < nst; d++) {
        CHECK(msgs[d] <= dims[d] - 1, "%s: stage %d: %d messages for k = %d", what, d, msgs[d],
              dims[d]);
        CHECK_EQ_INT(msgs[d], want_msgs[d], "%s: messages at stage %d", what, d);
        CHECK_EQ_INT(bytes[d], want_bytes[d], "%s: bytes at stage %d", what, d);
    }
    CHECK_EQ_INT(fwd, want_fwd, "%s: forwarded bytes", what);
    expected_buffers(g, n, dims, &live, &sum);
    CHECK(buf >= live && buf <= sum, "%s: buffers %lld outside [%lld live at once, %lld in all]",
          what, buf, live, sum);
    /* two messages with disjoint lifetimes exist (else all are alive at
     * once): the first placed of them leaves its bytes to the other */
    CHECK(live == sum || buf < sum, "%s: buffers %lld, no sharing (%lld live at once)", what, buf,
          live);
}

/* ---- cases ------------------------------------------------------------------------ */

/* One persistent case on a fresh graph communicator: the pattern of kind,
 * the form, the shape in info; the query checked if n > 1. */
static void persistent_case(int p, int kind, int form, int iters, MPI_Info info, int n,
                            const int dims[], const char *shape)
{
    gpattern g;
    MPI_Comm comm;
    Iso_request req = ISO_REQUEST_NULL;
    char what[128];
    snprintf(what, sizeof what, "%s %s persistent T(%s)", pat_names[kind], form_names[form],
             shape);
    gpattern_make(&g, kind, p, 31u + (unsigned)kind, 3, form == FORM_A2A);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    g_case(&g, comm, form, CALL_PERSISTENT, info, iters, ocomm, &req, what);
    if (req != ISO_REQUEST_NULL) {
        const char *alg = "", *mode;
        int rounds, messages;
        long long b;
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &b);
        CHECK(!strcmp(alg, n > 1 ? "vpt" : "direct"), "%s: runs %s", what, alg);
        if (n > 1)
            check_info(&g, req, n, dims, what);
        Iso_request_free(&req);
    }
    MPI_Comm_free(&comm);
    gpattern_free(&g);
}

/* One shape given by info (dims_s "": iso_vpt_n = n): the random pattern
 * in every form, and one of the others (by shape number) with alltoallv. */
static void persistent_cases(int p, int n, const int dims[], const char *dims_s, int shape_no)
{
    static const int others[] = {PAT_DENSE, PAT_ONE_TO_ALL, PAT_ALL_TO_ONE, PAT_EMPTY};
    MPI_Info info;
    char nbuf[8];
    const char *shape = dims_s;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
    if (dims_s[0]) {
        MPI_Info_set(info, "iso_vpt_dims", dims_s);
    } else {
        snprintf(nbuf, sizeof nbuf, "%d", n);
        MPI_Info_set(info, "iso_vpt_n", nbuf);
        shape = nbuf;
    }
    persistent_case(p, PAT_RANDOM, FORM_A2AV, 4, info, n, dims, shape);
    persistent_case(p, PAT_RANDOM, FORM_A2AW, 2, info, n, dims, shape);
    persistent_case(p, PAT_RANDOM, FORM_A2A, 2, info, n, dims, shape);
    persistent_case(p, others[shape_no % 4], FORM_A2AV, 2, info, n, dims, shape);
    MPI_Info_free(&info);
    tap_result(MPI_COMM_WORLD, "vpt T(%s) (n=%d): random pattern in every form, %s alltoallv; "
               "persistent, started several times; Iso_request_vpt_info", shape, n,
               pat_names[others[shape_no % 4]]);
}

/* Blocking and nonblocking calls with the shape from the environment, read
 * when the graph communicator is first used. */
static void env_cases(int p, const char *dims_s)
{
    setenv("ISO_SPARSE_ALGORITHM", "vpt", 1);
    setenv("ISO_VPT_DIMS", dims_s, 1);
    for (int kind = 0; kind < PAT_NKINDS; kind += 4) /* random, dense */
        for (int form = kind ? FORM_A2A : FORM_A2AV; form <= FORM_A2AV; form++) {
            gpattern g;
            MPI_Comm comm;
            char what[128];
            gpattern_make(&g, kind, p, 77u + (unsigned)kind, 2, form == FORM_A2A);
            comm = gpattern_comm(&g, MPI_INFO_NULL);
            snprintf(what, sizeof what, "%s %s blocking T(%s)", pat_names[kind], form_names[form],
                     dims_s);
            g_case(&g, comm, form, CALL_BLOCKING, MPI_INFO_NULL, 2, ocomm, NULL, what);
            snprintf(what, sizeof what, "%s %s nonblocking T(%s)", pat_names[kind],
                     form_names[form], dims_s);
            g_case(&g, comm, form, CALL_NONBLOCKING, MPI_INFO_NULL, 1, ocomm, NULL, what);
            MPI_Comm_free(&comm);
            gpattern_free(&g);
        }
    unsetenv("ISO_SPARSE_ALGORITHM");
    unsetenv("ISO_VPT_DIMS");
    tap_result(MPI_COMM_WORLD, "vpt T(%s) from the environment: blocking, nonblocking", dims_s);
}

/* iso_vpt_locality=node on a pretend node map (ISO_NODE_MAP, world
 * ranks): the shape becomes (node size, nodes) for nodes of one size, and
 * the VPT ranks follow the documented embedding (members grouped by node,
 * VPT rank (g mod k_0) * stride_0 + g / k_0); stage 0 then stays inside
 * nodes.  Data against the oracle, statistics against that embedding.
 * With pkg (a package id per rank, ids below 8) the map has two levels
 * ("node.package") and iso_locality=package: the regions embedded are the
 * (node, package) pairs, and the expectations are computed on those. */
static void locality_case(int p, const int *nodes, const int *pkg, const char *what)
{
    char map[1024] = "";
    int nn = 0, sizes[64] = {0}, order[64], members[64], vrank[64], dims[2], m = 0, same = 1;
    int node[64], seen[64 * 8];
    for (int k = 0; k < 64 * 8; k++)
        seen[k] = -1;
    for (int r = 0; r < p; r++) { /* regions numbered densely from 0 */
        int id = pkg ? nodes[r] * 8 + pkg[r] : nodes[r];
        if (seen[id] < 0)
            seen[id] = nn++;
        node[r] = seen[id];
    }
    nn = 0;
    MPI_Info info;
    gpattern g;
    MPI_Comm comm;
    Iso_request req = ISO_REQUEST_NULL;
    for (int r = 0; r < p; r++) {
        if (pkg)
            snprintf(map + strlen(map), sizeof map - strlen(map), "%s%d.%d", r ? "," : "",
                     nodes[r], pkg[r]);
        else
            snprintf(map + strlen(map), sizeof map - strlen(map), "%s%d", r ? "," : "", node[r]);
        nn = node[r] + 1 > nn ? node[r] + 1 : nn;
        sizes[node[r]]++;
    }
    /* nodes in the order of their lowest ranks, members ascending */
    for (int k = 0; k < nn; k++)
        order[k] = -1;
    {
        int cnt = 0;
        for (int r = 0; r < p; r++) {
            int known = 0;
            for (int k = 0; k < cnt; k++)
                known |= order[k] == node[r];
            if (!known)
                order[cnt++] = node[r];
        }
        for (int k = 0; k < cnt; k++)
            for (int r = 0; r < p; r++)
                if (node[r] == order[k])
                    members[m++] = r;
    }
    for (int k = 1; k < nn; k++)
        same &= sizes[k] == sizes[0];
    if (same && nn > 1 && sizes[0] > 1) {
        dims[0] = sizes[0];
        dims[1] = nn;
    } else {
        iso__vpt_dims_balanced(p, 2, dims);
    }
    for (int q = 0; q < p; q++)
        vrank[members[q]] = (q % dims[0]) * (p / dims[0]) + q / dims[0];
    setenv("ISO_NODE_MAP", map, 1);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
    MPI_Info_set(info, "iso_vpt_n", "2");
    MPI_Info_set(info, "iso_vpt_locality", "node");
    if (pkg)
        MPI_Info_set(info, "iso_locality", "package");
    gpattern_make(&g, PAT_DENSE, p, 41u, 3, 0);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    g_case(&g, comm, FORM_A2AV, CALL_PERSISTENT, info, 2, ocomm, &req, what);
    g_vrank = vrank;
    if (req != ISO_REQUEST_NULL) {
        check_info(&g, req, 2, dims, what);
        Iso_request_free(&req);
    }
    g_vrank = NULL;
    /* stage 0 inside nodes when nodes (of more than one process) fill lines
     * of dimension 0 */
    if (same && nn > 1 && sizes[0] > 1)
        for (int a = 0; a < p; a++)
            for (int b = 0; b < p; b++) {
                int at = vrank[a], c[2], cb[2], next, who = -1;
                coords(2, dims, at, c);
                coords(2, dims, vrank[b], cb);
                c[0] = cb[0];
                next = rank_of(2, dims, c);
                for (int r = 0; r < p; r++)
                    if (vrank[r] == next)
                        who = r;
                CHECK(node[who] == node[a], "%s: stage 0 leaves node %d", what, node[a]);
            }
    MPI_Comm_free(&comm);
    gpattern_free(&g);
    MPI_Info_free(&info);
    unsetenv("ISO_NODE_MAP");
}

static void locality_cases(int p)
{
    int node[64];
    if (p < 3 || p > 64)
        return;
    for (int r = 0; r < p; r++) /* interleaved nodes of one size */
        node[r] = p % 2 == 0 ? r % 2 : r % p == 0;
    if (p % 2 == 0)
        locality_case(p, node, NULL, "interleaved equal nodes");
    for (int r = 0; r < p; r++) /* uneven: one small node at the end */
        node[r] = r >= p - 1 - (p > 4);
    locality_case(p, node, NULL, "uneven nodes");
    tap_result(MPI_COMM_WORLD, "vpt with iso_vpt_locality=node on pretend node maps");
    if (p % 4 == 0) { /* two nodes of two equal packages, ranks interleaved */
        int pkg[64];
        for (int r = 0; r < p; r++)
            node[r] = r % 2, pkg[r] = r / 2 % 2;
        locality_case(p, node, pkg, "two nodes of two equal packages");
    }
    { /* uneven at both levels: the small node last, the large one split 1:2 */
        int pkg[64];
        for (int r = 0; r < p; r++)
            node[r] = r >= p - 1 - (p > 4);
        for (int r = 0; r < p; r++)
            pkg[r] = node[r] == 0 && r % 3 == 1;
        locality_case(p, node, pkg, "uneven nodes and packages");
    }
    tap_result(MPI_COMM_WORLD, "vpt with iso_vpt_locality=node, iso_locality=package on "
                               "two-level maps");
}

/* iso_sparse_algorithm=auto: direct, a VPT's n or sharing from the cost
 * model and the pattern's statistics: the data against the oracle, the same
 * choice on every process, and its stages consistent with the request's
 * info. */
static void auto_cases(int p)
{
    static const int kinds[] = {PAT_DENSE, PAT_RANDOM, PAT_EMPTY};
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "auto");
    for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
        gpattern g;
        MPI_Comm comm;
        Iso_request req = ISO_REQUEST_NULL;
        char what[96];
        int choice[2] = {0, 0}, lo[2], hi[2];
        snprintf(what, sizeof what, "auto %s alltoallv", pat_names[kinds[k]]);
        gpattern_make(&g, kinds[k], p, 55u, 1, 0);
        comm = gpattern_comm(&g, MPI_INFO_NULL);
        g_case(&g, comm, FORM_A2AV, CALL_PERSISTENT, info, 2, ocomm, &req, what);
        if (req != ISO_REQUEST_NULL) {
            const char *alg = "", *mode;
            int rounds, messages, nst = 0, msgs[16];
            long long b, bytes[16], f, bb;
            Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &b);
            CHECK(!strcmp(alg, "vpt") || !strcmp(alg, "direct") || !strcmp(alg, "sharing"),
                  "%s: runs %s", what, alg);
            if (!strcmp(alg, "vpt")) {
                CHECK_EQ_INT(Iso_request_vpt_info(req, 16, &nst, msgs, bytes, &f, &bb),
                             MPI_SUCCESS, "%s: info", what);
                CHECK(nst >= 2, "%s: %d stages", what, nst);
            }
            if (!strcmp(alg, "sharing")) { /* auto weighs message sharing too */
                int smsg[2], over;
                long long sb[2];
                CHECK_EQ_INT(Iso_request_sharing_info(req, smsg, sb, &f, &over, &bb), MPI_SUCCESS,
                             "%s: sharing info", what);
                nst = 1; /* a VPT has at least 2 stages: 1 names sharing */
            }
            choice[0] = nst;
            Iso_request_free(&req);
        }
        choice[1] = -choice[0];
        MPI_Allreduce(choice, hi, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(choice, lo, 2, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
        CHECK(hi[0] == lo[0], "%s: processes chose differently", what);
        if (g.rank == 0)
            printf("# %s at %d processes: %s\n", what, p,
                   hi[0] == 0   ? "direct"
                   : hi[0] == 1 ? "sharing"
                   : hi[0] == 2 ? "vpt n=2"
                   : hi[0] == 3 ? "vpt n=3"
                                : "vpt n>3");
        MPI_Comm_free(&comm);
        gpattern_free(&g);
    }
    MPI_Info_free(&info);
    tap_result(MPI_COMM_WORLD, "auto: a choice made alike everywhere, data right");
}

/* Shapes for p: balanced n = 2 and 3, and an explicit one (the smallest
 * factor first, or 1,p for primes: one real stage). */
int main(int argc, char **argv)
{
    int p, dims[16], f = 0;
    char s[64];
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int n = 2; n <= 3; n++) {
        iso__vpt_dims_balanced(p, n, dims);
        persistent_cases(p, n, dims, "", n);
    }
    for (int k = 2; k <= p && !f; k++)
        if (p % k == 0)
            f = k;
    dims[0] = f > 1 && f < p ? f : 1;
    dims[1] = p / dims[0];
    snprintf(s, sizeof s, "%d,%d", dims[0], dims[1]);
    persistent_cases(p, 2, dims, s, 0);
    env_cases(p, s);
    locality_cases(p);
    auto_cases(p);
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
