/* Message sharing (iso_sparse_algorithm=sharing) for Iso_neighbor_alltoall(v/w)
 * on distributed graph communicators: the patterns and oracle of t_graph
 * (tests/graph.h: plain Isend/Irecv per edge; random graphs with repeated
 * and self edges and indegree != outdegree, one-to-all, all-to-one, empty
 * and dense; derived send types with gaps), blocking and nonblocking calls
 * (ISO_SPARSE_ALGORITHM=sharing, read when a graph communicator is first
 * used) and persistent requests (info) started many times with new data;
 * blocking calls again with other sizes (the cached plan must not be
 * reused).
 *
 * Iso_request_vpt_info and Iso_request_schedule_info are checked against
 * what the plan implies: the test runs the planner (iso__sharing_plan, the
 * same deterministic function every process runs) on the pattern it
 * generated itself and derives, from the senders alone, the messages and
 * bytes (8 per block + 4 per int) this process sends in each of the two
 * stages and the bytes of others' blocks it forwards.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 1 2 3 5 8
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"
#include "route/route.h"

static MPI_Comm ocomm;

/* The figures of this process's sharing plan for pattern g. */
static void expected(const gpattern *g, int msgs[2], long long bytes[2], long long *fwd)
{
    int p = g->p, me = g->rank;
    long long *start, *nb, *by;
    int *tg, *src;
    long long E = gpattern_targets(g, &start, &tg, &nb, &by);
    int *sent0 = calloc((size_t)p, sizeof(int)), *sent_to = calloc((size_t)p, sizeof(int));
    iso_sharing sh = {0};
    src = malloc(sizeof(int) * ((size_t)E + 1));
    for (int a = 0; a < p; a++)
        for (long long e = start[a]; e < start[a + 1]; e++)
            src[e] = a;
    iso_pattern pat = {p, start, tg, by};
    msgs[0] = msgs[1] = 0;
    bytes[0] = bytes[1] = 0;
    *fwd = 0;
    if (iso__sharing_plan(&pat, &sh) != MPI_SUCCESS) {
        CHECK(0, "the planner failed");
        goto out;
    }
    for (long long e = 0; e < E; e++) {
        /* stage 0 goes to a partner: the sender if it is not the source,
         * else the target if that is a partner (a sender of another of the
         * source's messages) */
        int q = src[e], t = tg[e], via = sh.sender[e] != q ? sh.sender[e] : -1;
        for (long long f = start[q]; via < 0 && f < start[q + 1]; f++)
            if (sh.sender[f] == t)
                via = t;
        if (q == me && via >= 0) {
            if (!sent0[via]++)
                msgs[0]++;
            bytes[0] += 8 * nb[e] + by[e];
        }
        if (via == t)
            continue; /* delivered at the partner */
        if (sh.sender[e] == me) {
            if (!sent_to[t]++)
                msgs[1]++;
            bytes[1] += 8 * nb[e] + by[e];
            if (q != me)
                *fwd += by[e];
        }
    }
out:
    iso__sharing_free(&sh);
    free(start);
    free(tg);
    free(nb);
    free(by);
    free(src);
    free(sent0);
    free(sent_to);
}

static MPI_Info sharing_info(void)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "sharing");
    return info;
}

static void patterns(void)
{
    int p;
    MPI_Info info = sharing_info();
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int kind = 0; kind < PAT_NKINDS; kind++)
        for (int form = 0; form < FORM_N; form++) {
            gpattern g;
            MPI_Comm comm;
            gpattern_make(&g, kind, p, 31u + (unsigned)kind, 3, form == FORM_A2A);
            comm = gpattern_comm(&g, MPI_INFO_NULL);
            for (int call = 0; call < CALL_N; call++) {
                char what[96];
                Iso_request req = ISO_REQUEST_NULL;
                snprintf(what, sizeof what, "%s %s %s", pat_names[kind], form_names[form],
                         call_names[call]);
                g_case(&g, comm, form, call, call == CALL_PERSISTENT ? info : MPI_INFO_NULL,
                       call == CALL_PERSISTENT ? 6 : 3, ocomm,
                       call == CALL_PERSISTENT ? &req : NULL, what);
                if (req != ISO_REQUEST_NULL) {
                    const char *alg = "", *comb = "";
                    int rounds, m[4], want_m[2], nst = -1;
                    long long b, by[4], want_b[2], f, want_f, bb;
                    Iso_request_schedule_info(req, &alg, &comb, &rounds, m, &b);
                    CHECK(!strcmp(alg, "sharing"), "%s: the request runs %s", what, alg);
                    CHECK_EQ_INT(Iso_request_vpt_info(req, 4, &nst, m, by, &f, &bb),
                                 MPI_SUCCESS, "%s: vpt info", what);
                    expected(&g, want_m, want_b, &want_f);
                    CHECK_EQ_INT(nst, 2, "%s: stages", what);
                    for (int d = 0; d < 2 && nst == 2; d++) {
                        CHECK_EQ_INT(m[d], want_m[d], "%s: messages of stage %d", what, d);
                        CHECK(by[d] == want_b[d], "%s: stage %d sent %lld bytes, %lld expected",
                              what, d, by[d], want_b[d]);
                    }
                    CHECK(f == want_f, "%s: forwarded %lld bytes, %lld expected", what, f,
                          want_f);
                    CHECK(bb >= (want_b[0] > want_b[1] ? want_b[0] : want_b[1]),
                          "%s: buffer peak %lld below the largest stage", what, bb);
                    /* everyone to everyone: pairs have common targets from
                     * 4 processes on, and some process forwards */
                    MPI_Allreduce(MPI_IN_PLACE, &f, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
                    if (kind == PAT_DENSE && p >= 4)
                        CHECK(f > 0, "%s: nothing was shared", what);
                    Iso_request_free(&req);
                }
            }
            MPI_Comm_free(&comm);
            tap_result(MPI_COMM_WORLD, "sharing: %s pattern, %s: blocking, nonblocking, "
                       "persistent (6 starts), its figures", pat_names[kind], form_names[form]);
            gpattern_free(&g);
        }
    MPI_Info_free(&info);
}

/* Blocking calls on one communicator with patterns of other block sizes:
 * a cached plan reused with the wrong sizes would deliver wrong data. */
static void changing_sizes(void)
{
    int p;
    gpattern g;
    MPI_Comm comm;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    gpattern_make(&g, PAT_RANDOM, p, 7u, 4, 0);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    for (int round = 0; round < 3; round++) {
        for (int e = 0; e < g.first[p]; e++) /* new sizes, the same everywhere */
            g.cnt[e] = (g.cnt[e] + 1 + round) % 5;
        for (int j = 0; j < g.indeg; j++) {
            int a = g.sources[j], occ = 0;
            for (int i = 0; i < j; i++)
                occ += g.sources[i] == a;
            for (int e = g.first[a]; e < g.first[a + 1]; e++)
                if (g.dst[e] == g.rank && occ-- == 0) {
                    g.rcnt[j] = g.cnt[e];
                    break;
                }
        }
        g_case(&g, comm, FORM_A2AV, CALL_BLOCKING, MPI_INFO_NULL, 2, ocomm, NULL,
               "changing sizes");
    }
    MPI_Comm_free(&comm);
    gpattern_free(&g);
    tap_result(MPI_COMM_WORLD, "sharing: blocking calls with changing block sizes plan anew");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    setenv("ISO_SPARSE_ALGORITHM", "sharing", 1); /* read at a graph's first call */
    patterns();
    changing_sizes();
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
