/* The plan cache of blocking and nonblocking vpt calls (route/plan.c, coll/graph_route.c): a call
 * on a graph communicator whose VPT shape and send block sizes are, on
 * every process, those of the previous call reuses that call's plan (no
 * header exchange), with its own buffers and data; a size change on one
 * process makes every process plan anew; persistent requests always plan.
 *
 * Whether a call planned is counted, not timed: the header exchange is the
 * only MPI_Isend of MPI_LONG_LONG on the library's communicators (profiling
 * interface; the library is linked statically), and every process with a
 * line neighbor sends its neighbors a header list at every stage of a plan,
 * empty or not.  Every call's data is checked against tests/graph.h's
 * oracle (plain Isend/Irecv per edge), new buffers and new data each call.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 4 6
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

static MPI_Comm ocomm;
static long long header_sends;

int MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (type == MPI_LONG_LONG && comm != ocomm)
        header_sends++;
    return PMPI_Isend(buf, n, type, dest, tag, comm, request);
}

/* One case; returns how many processes planned (exchanged headers). */
static int run(const gpattern *g, MPI_Comm comm, int form, int call, int iters, const char *what)
{
    long long before = header_sends;
    int planned, nplanned;
    Iso_request req = ISO_REQUEST_NULL;
    g_case(g, comm, form, call, MPI_INFO_NULL, iters, ocomm, call == CALL_PERSISTENT ? &req : NULL,
           what);
    if (req != ISO_REQUEST_NULL)
        Iso_request_free(&req);
    planned = header_sends > before;
    MPI_Allreduce(&planned, &nplanned, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return nplanned;
}

/* g with the counts of h on rank `who`'s edges (the same graph). */
static void counts_of(gpattern *g, const gpattern *h, int who)
{
    for (int e = h->first[who]; e < h->first[who + 1]; e++)
        g->cnt[e] = h->cnt[e];
    for (int j = 0; j < g->indeg; j++) { /* slot j: the occ-th edge of its source */
        int a = g->sources[j], occ = 0;
        for (int i = 0; i < j; i++)
            occ += g->sources[i] == a;
        for (int e = g->first[a]; e < g->first[a + 1]; e++)
            if (g->dst[e] == g->rank && occ-- == 0) {
                g->rcnt[j] = g->cnt[e];
                break;
            }
    }
}

int main(int argc, char **argv)
{
    int p, who = 0;
    gpattern g, h;
    MPI_Comm comm;
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    setenv("ISO_SPARSE_ALGORITHM", "vpt", 1);
    setenv("ISO_VPT_N", "2", 1);
    gpattern_make(&g, PAT_RANDOM, p, 7u, 3, 0);
    gpattern_make(&h, PAT_RANDOM, p, 7u, 9, 0); /* the same graph, other counts */
    comm = gpattern_comm(&g, MPI_INFO_NULL);

    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_BLOCKING, 1, "first call"), p,
                 "the first call plans everywhere");
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_BLOCKING, 3, "same sizes, blocking"), 0,
                 "blocking calls with the same sizes reuse the plan");
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_NONBLOCKING, 2, "same sizes, nonblocking"), 0,
                 "nonblocking calls with the same sizes reuse the plan");
    tap_result(MPI_COMM_WORLD, "vpt: calls with the same sizes reuse the plan, data right");

    /* one process's sizes change (the first with an edge whose count differs) */
    while (who < p - 1) {
        int differs = 0;
        for (int e = g.first[who]; e < g.first[who + 1]; e++)
            differs |= g.cnt[e] != h.cnt[e];
        if (differs)
            break;
        who++;
    }
    counts_of(&g, &h, who);
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_BLOCKING, 2, "one process's sizes changed"), p,
                 "rank %d's sizes changed: every process plans anew", who);
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_NONBLOCKING, 2, "the new sizes"), 0,
                 "the new sizes: the new plan is reused");
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_PERSISTENT, 2, "persistent"), p,
                 "a persistent request makes its own plan");
    CHECK_EQ_INT(run(&g, comm, FORM_A2AV, CALL_BLOCKING, 1, "after persistent"), 0,
                 "the cached plan outlives a persistent request");
    tap_result(MPI_COMM_WORLD, "vpt: a size change on one process re-plans everywhere; "
               "persistent requests plan for themselves");

    MPI_Comm_free(&comm);
    gpattern_free(&g);
    gpattern_free(&h);
    g_types_free();
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
