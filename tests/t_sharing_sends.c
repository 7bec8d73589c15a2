/* Message sharing's reported loads are the sends it executes, counted
 * through the MPI profiling interface: this program defines MPI_Isend,
 * MPI_Send and the other point-to-point send calls itself (each counts,
 * then calls its PMPI_ twin), so every message the library sends is seen.
 *
 * For seeded patterns of every kind of tests/graph.h (random with repeated
 * and self edges, one-to-all, all-to-one, empty, dense; several seeds), on
 * a distributed graph communicator with iso_sparse_algorithm=sharing: a
 * persistent Iso_neighbor_alltoallv is made and started once (its data
 * checked against the plain Isend/Irecv oracle), the sends on any
 * communicator but the oracle's counted, and compared with
 *   - load[rank] of the planner (iso__sharing_plan) run here on the
 *     process-level pattern the test generated itself,
 *   - the sum of the two stages' messages of Iso_request_vpt_info (and
 *     Iso_request_sharing_info's figures the same), and the overhead
 *     messages of Iso_request_sharing_info summed over the processes
 *     against the planner's,
 *   - over all processes: the largest count is phase2_mmax and the mean is
 *     phase2_mavg (the figures bench/vptsim and the thesis's tables use);
 * and the plan every process computed is the same (a hash of its senders,
 * allgathered).
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 4 5 8
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"
#include "route/route.h"

static MPI_Comm ocomm;
static int counting;
static long long nsends;

static void count(MPI_Comm comm)
{
    if (counting && comm != ocomm)
        nsends++;
}

int MPI_Send(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    count(comm);
    return PMPI_Send(buf, n, t, dest, tag, comm);
}
int MPI_Ssend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    count(comm);
    return PMPI_Ssend(buf, n, t, dest, tag, comm);
}
int MPI_Rsend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    count(comm);
    return PMPI_Rsend(buf, n, t, dest, tag, comm);
}
int MPI_Bsend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm)
{
    count(comm);
    return PMPI_Bsend(buf, n, t, dest, tag, comm);
}
int MPI_Isend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    count(comm);
    return PMPI_Isend(buf, n, t, dest, tag, comm, req);
}
int MPI_Issend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    count(comm);
    return PMPI_Issend(buf, n, t, dest, tag, comm, req);
}
int MPI_Irsend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    count(comm);
    return PMPI_Irsend(buf, n, t, dest, tag, comm, req);
}
int MPI_Ibsend(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    count(comm);
    return PMPI_Ibsend(buf, n, t, dest, tag, comm, req);
}
int MPI_Sendrecv(const void *sbuf, int sn, MPI_Datatype st, int dest, int stag, void *rbuf,
                 int rn, MPI_Datatype rt, int source, int rtag, MPI_Comm comm,
                 MPI_Status *status)
{
    count(comm);
    return PMPI_Sendrecv(sbuf, sn, st, dest, stag, rbuf, rn, rt, source, rtag, comm, status);
}
/* persistent sends: a message per start, not known here; none may be made */
static long long persistent_inits;
int MPI_Send_init(const void *buf, int n, MPI_Datatype t, int dest, int tag, MPI_Comm comm,
                  MPI_Request *req)
{
    persistent_inits += counting && comm != ocomm;
    return PMPI_Send_init(buf, n, t, dest, tag, comm, req);
}

/* The process-level pattern of g (distinct targets != source, ascending;
 * bytes 4 per int) planned here: *sh, and a hash of its senders. */
static int plan_here(const gpattern *g, iso_sharing *sh, unsigned long long *hash)
{
    int p = g->p, *tg;
    long long *start, *nb, *by;
    long long E = gpattern_targets(g, &start, &tg, &nb, &by);
    iso_pattern pat = {p, start, tg, by};
    int rc = iso__sharing_plan(&pat, sh);
    *hash = 1469598103934665603ull;
    for (long long e = 0; rc == MPI_SUCCESS && e < E; e++)
        *hash = (*hash ^ (unsigned long long)sh->sender[e]) * 1099511628211ull;
    free(start);
    free(tg);
    free(nb);
    free(by);
    return rc;
}

static void one_case(int kind, unsigned seed, MPI_Info info)
{
    int p, me;
    char what[96];
    gpattern g;
    iso_sharing sh;
    unsigned long long hash, *hashes;
    Iso_request req = ISO_REQUEST_NULL;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    snprintf(what, sizeof what, "%s seed %u", pat_names[kind], seed);
    gpattern_make(&g, kind, p, seed, 3, 0);
    MPI_Comm comm = gpattern_comm(&g, MPI_INFO_NULL);
    nsends = persistent_inits = 0;
    counting = 1;
    g_case(&g, comm, FORM_A2AV, CALL_PERSISTENT, info, 1, ocomm, &req, what);
    counting = 0;
    CHECK_EQ_INT(persistent_inits, 0, "%s: persistent sends made", what);
    if (plan_here(&g, &sh, &hash) != MPI_SUCCESS) {
        CHECK(0, "%s: the planner failed", what);
    } else {
        int nst = -1, m[2] = {-1, -1};
        long long by[2], f, bb, mine[2] = {nsends, nsends};
        CHECK(req != ISO_REQUEST_NULL, "%s: a request", what);
        if (req != ISO_REQUEST_NULL) {
            CHECK_EQ_INT(Iso_request_vpt_info(req, 2, &nst, m, by, &f, &bb), MPI_SUCCESS,
                         "%s: vpt info", what);
            CHECK(nst == 2 && m[0] + m[1] == nsends,
                  "%s: Iso_request_vpt_info reports %d + %d messages, %lld sent", what, m[0],
                  m[1], nsends);
        }
        CHECK(sh.load[me] == nsends, "%s: the planner's load %lld, %lld sent", what,
              sh.load[me], nsends);
        long long ovh = -1;
        if (req != ISO_REQUEST_NULL) {
            int sm[2] = {-1, -1}, so = -1;
            long long sb[2], sf, sbb;
            CHECK_EQ_INT(Iso_request_sharing_info(req, sm, sb, &sf, &so, &sbb), MPI_SUCCESS,
                         "%s: sharing info", what);
            CHECK(sm[0] == m[0] && sm[1] == m[1] && sb[0] == by[0] && sb[1] == by[1] &&
                      sf == f && sbb == bb,
                  "%s: Iso_request_sharing_info differs from Iso_request_vpt_info", what);
            CHECK(so >= 0 && so <= sm[0], "%s: %d overhead messages of %d in stage 0", what, so,
                  sm[0]);
            ovh = so;
        }
        MPI_Allreduce(MPI_IN_PLACE, &ovh, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(ovh == sh.overhead, "%s: overhead messages %lld, the planner's %lld", what, ovh,
              sh.overhead);
        MPI_Allreduce(MPI_IN_PLACE, &mine[0], 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(MPI_IN_PLACE, &mine[1], 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        CHECK(mine[0] == sh.phase2_mmax, "%s: phase2_mmax %lld, the most sent %lld", what,
              sh.phase2_mmax, mine[0]);
        CHECK((double)mine[1] / p == sh.phase2_mavg, "%s: phase2_mavg %g, sent on average %g",
              what, sh.phase2_mavg, (double)mine[1] / p);
        hashes = malloc(sizeof *hashes * (size_t)p);
        MPI_Allgather(&hash, 1, MPI_UNSIGNED_LONG_LONG, hashes, 1, MPI_UNSIGNED_LONG_LONG,
                      MPI_COMM_WORLD);
        for (int r = 0; r < p; r++)
            CHECK(hashes[r] == hash, "%s: rank %d planned differently", what, r);
        free(hashes);
        iso__sharing_free(&sh);
    }
    if (req != ISO_REQUEST_NULL)
        Iso_request_free(&req);
    MPI_Comm_free(&comm);
    gpattern_free(&g);
}

int main(int argc, char **argv)
{
    MPI_Info info;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "sharing");
    for (int kind = 0; kind < PAT_NKINDS; kind++) {
        int seeds = kind == PAT_RANDOM || kind == PAT_DENSE ? 12 : 2;
        for (int s = 0; s < seeds; s++)
            one_case(kind, 101u + 17u * (unsigned)s + (unsigned)kind, info);
        tap_result(MPI_COMM_WORLD, "sharing: %s patterns (%d seeds): the sends counted through "
                   "PMPI are the planner's loads and Iso_request_vpt_info's messages",
                   pat_names[kind], seeds);
    }
    MPI_Info_free(&info);
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
