/* Iso_neighbor_alltoall(v/w), their Iso_ineighbor_* and *_init forms on
 * distributed graph communicators with direct: MPI_Neighbor_alltoall's
 * semantics (the k-th edge a -> b matches the k-th occurrence of a in b's
 * sources), checked against plain Isend/Irecv per edge (tests/graph.h) on
 * random graphs with repeated and self edges and indegree != outdegree,
 * one-to-all, all-to-one, empty and dense patterns; derived send types
 * with gaps; persistent requests started several times with new data.
 * Also: a graph communicator made with MPI_Dist_graph_create (not
 * adjacent), and the collectives that are not supported on graphs.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 1 2 5 8 16
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

static MPI_Comm ocomm;

static void patterns(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int kind = 0; kind < PAT_NKINDS; kind++)
        for (int form = 0; form < FORM_N; form++) {
            gpattern g;
            MPI_Comm comm;
            gpattern_make(&g, kind, p, 17u + (unsigned)kind, 3, form == FORM_A2A);
            comm = gpattern_comm(&g, MPI_INFO_NULL);
            for (int call = 0; call < CALL_N; call++) {
                char what[96];
                snprintf(what, sizeof what, "%s %s %s", pat_names[kind], form_names[form],
                         call_names[call]);
                g_case(&g, comm, form, call, MPI_INFO_NULL, call == CALL_PERSISTENT ? 3 : 2,
                       ocomm, NULL, what);
            }
            MPI_Comm_free(&comm);
            tap_result(MPI_COMM_WORLD, "direct: %s pattern, %s: blocking, nonblocking, persistent",
                       pat_names[kind], form_names[form]);
            gpattern_free(&g);
        }
}

/* MPI_Dist_graph_create: each process names some edges of others (here:
 * rank r gives the edges of rank (r + 1) % p); MPI may order the lists as
 * it likes, the library reads them back. */
static void nonadjacent(void)
{
    int p, rank, from, n, *dst, indeg, outdeg, weighted;
    gpattern g;
    MPI_Comm comm;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    gpattern_make(&g, PAT_RANDOM, p, 99u, 2, 0);
    from = (rank + 1) % p;
    n = g.first[from + 1] - g.first[from];
    dst = g.dst + g.first[from];
    {
        int deg[1] = {n};
        MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &from, deg, dst, MPI_UNWEIGHTED, MPI_INFO_NULL, 0,
                              &comm);
    }
    /* the lists as MPI keeps them, and the counts of the slots */
    MPI_Dist_graph_neighbors_count(comm, &indeg, &outdeg, &weighted);
    CHECK_EQ_INT(outdeg, g.outdeg, "outdegree");
    CHECK_EQ_INT(indeg, g.indeg, "indegree");
    if (indeg == g.indeg && outdeg == g.outdeg) {
        gpattern h = g;
        int *src = malloc(sizeof(int) * ((size_t)indeg + 1));
        int *dd = malloc(sizeof(int) * ((size_t)outdeg + 1));
        MPI_Dist_graph_neighbors(comm, indeg, src, MPI_UNWEIGHTED, outdeg, dd, MPI_UNWEIGHTED);
        /* the lists MPI returned, with the counts of edges in that order:
         * rebuild this rank's view (counts per edge by occurrence) */
        h.sources = src;
        h.dests = dd;
        h.rcnt = malloc(sizeof(int) * ((size_t)indeg + 1));
        {
            int *cnt = malloc(sizeof(int) * ((size_t)outdeg + 1));
            for (int i = 0; i < outdeg; i++) { /* occ-th edge to dd[i] */
                int occ = 0, e;
                for (int k = 0; k < i; k++)
                    occ += dd[k] == dd[i];
                for (e = g.first[rank]; e < g.first[rank + 1]; e++)
                    if (g.dst[e] == dd[i] && occ-- == 0)
                        break;
                cnt[i] = g.cnt[e];
            }
            for (int j = 0; j < indeg; j++) {
                int a = src[j], occ = 0;
                for (int k = 0; k < j; k++)
                    occ += src[k] == a;
                for (int e = g.first[a]; e < g.first[a + 1]; e++)
                    if (g.dst[e] == rank && occ-- == 0) {
                        h.rcnt[j] = g.cnt[e];
                        break;
                    }
            }
            /* the send counts follow dd's order: lay them into a copy of
             * the pattern's edge counts of this rank */
            h.cnt = malloc(sizeof(int) * ((size_t)g.first[p] + 1));
            memcpy(h.cnt, g.cnt, sizeof(int) * (size_t)g.first[p]);
            for (int i = 0; i < outdeg; i++)
                h.cnt[g.first[rank] + i] = cnt[i];
            free(cnt);
        }
        g_case(&h, comm, FORM_A2AV, CALL_BLOCKING, MPI_INFO_NULL, 1, ocomm, NULL,
               "Dist_graph_create alltoallv");
        g_case(&h, comm, FORM_A2AW, CALL_PERSISTENT, MPI_INFO_NULL, 2, ocomm, NULL,
               "Dist_graph_create alltoallw persistent");
        free(src);
        free(dd);
        free(h.rcnt);
        free(h.cnt);
    }
    MPI_Comm_free(&comm);
    gpattern_free(&g);
    tap_result(MPI_COMM_WORLD, "direct on a graph communicator made by MPI_Dist_graph_create");
}

/* Allgather and reductions are not supported on graph communicators: a
 * clear error of class ISO_ERR_NOT_CART, nothing sent. */
static void unsupported(void)
{
    int p, x = 1, y[64];
    gpattern g;
    MPI_Comm comm;
    Iso_error e = ISO_ERR_NONE;
    Iso_request req = ISO_REQUEST_NULL;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    gpattern_make(&g, PAT_RANDOM, p, 5u, 1, 1);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    Iso_error_class(Iso_neighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, comm), &e);
    CHECK_EQ_INT(e, ISO_ERR_NOT_CART, "allgather on a graph");
    e = ISO_ERR_NONE;
    Iso_error_class(Iso_neighbor_reduce(&x, y, 1, MPI_INT, MPI_SUM, comm), &e);
    CHECK_EQ_INT(e, ISO_ERR_NOT_CART, "reduce on a graph");
    e = ISO_ERR_NONE;
    Iso_error_class(Iso_ineighbor_allgather(&x, 1, MPI_INT, y, 1, MPI_INT, comm, &req), &e);
    CHECK_EQ_INT(e, ISO_ERR_NOT_CART, "ineighbor_allgather on a graph");
    CHECK(req == ISO_REQUEST_NULL, "no request");
    MPI_Comm_free(&comm);
    gpattern_free(&g);
    tap_result(MPI_COMM_WORLD, "allgather and reductions on a graph: ISO_ERR_NOT_CART");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    patterns();
    nonadjacent();
    unsupported();
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
