/* Who plans message sharing: ISO_SHARING_PLAN=all (every process plans on
 * the allgathered pattern) and ISO_SHARING_PLAN=root (rank 0 plans and
 * scatters each process its part) must give the same plan.  For each
 * pattern of tests/graph.h (random with repeated and self edges, one-to-all,
 * all-to-one, empty, dense) and a few seeds, the test runs a persistent
 * Iso_neighbor_alltoallv with iso_sparse_algorithm=sharing once per path on
 * a new graph communicator (a new plan cache): g_case checks the delivered
 * data against the plain Isend/Irecv oracle, and this process's figures of
 * the two plans (Iso_request_sharing_info: messages and bytes per stage,
 * forwarded bytes, overhead messages, buffer peak; Iso_request_schedule_info:
 * rounds, messages, bytes) must be equal.  The path really taken is counted
 * through the profiling interface: the all path calls MPI_Iallgatherv and
 * never MPI_Iscatterv, the root path the reverse.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 1 4 7 8
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

static int n_allgatherv, n_scatterv;

int MPI_Iallgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
                    const int rcounts[], const int displs[], MPI_Datatype rtype, MPI_Comm comm,
                    MPI_Request *req)
{
    n_allgatherv++;
    return PMPI_Iallgatherv(sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm, req);
}

int MPI_Iscatterv(const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
                  void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm,
                  MPI_Request *req)
{
    n_scatterv++;
    return PMPI_Iscatterv(sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm, req);
}

/* What a plan shows of itself at this process. */
typedef struct {
    int msgs[2], overhead, rounds, smsgs;
    long long bytes[2], fwd, peak, sbytes;
} figures;

static MPI_Comm ocomm;

/* One persistent sharing exchange of g planned by path ("all" or "root"):
 * data checked by g_case, the plan's figures into *f. */
static void run(const gpattern *g, const char *path, figures *f, const char *what)
{
    MPI_Info info;
    MPI_Comm comm;
    Iso_request req = ISO_REQUEST_NULL;
    const char *alg = "", *comb = "";
    int ag = n_allgatherv, sc = n_scatterv;
    setenv("ISO_SHARING_PLAN", path, 1); /* read when a plan is made */
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "sharing");
    comm = gpattern_comm(g, MPI_INFO_NULL);
    g_case(g, comm, FORM_A2AV, CALL_PERSISTENT, info, 3, ocomm, &req, what);
    memset(f, 0, sizeof *f);
    CHECK(req != ISO_REQUEST_NULL, "%s: no request", what);
    if (req != ISO_REQUEST_NULL) {
        CHECK_EQ_INT(Iso_request_sharing_info(req, f->msgs, f->bytes, &f->fwd, &f->overhead,
                                              &f->peak),
                     MPI_SUCCESS, "%s: sharing info", what);
        CHECK_EQ_INT(Iso_request_schedule_info(req, &alg, &comb, &f->rounds, &f->smsgs,
                                               &f->sbytes),
                     MPI_SUCCESS, "%s: schedule info", what);
        CHECK(!strcmp(alg, "sharing"), "%s: the request runs %s", what, alg);
        Iso_request_free(&req);
    }
    if (!strcmp(path, "root"))
        CHECK(n_scatterv > sc && n_allgatherv == ag, "%s: the root path made %d allgathers "
              "and %d scatters", what, n_allgatherv - ag, n_scatterv - sc);
    else
        CHECK(n_allgatherv > ag && n_scatterv == sc, "%s: the all path made %d allgathers "
              "and %d scatters", what, n_allgatherv - ag, n_scatterv - sc);
    MPI_Comm_free(&comm);
    MPI_Info_free(&info);
}

static void same_plans(void)
{
    int p;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int kind = 0; kind < PAT_NKINDS; kind++) {
        for (unsigned seed = 1; seed <= 3; seed++) {
            gpattern g;
            figures fa, fr;
            char what[96];
            snprintf(what, sizeof what, "%s pattern, seed %u", pat_names[kind], seed);
            gpattern_make(&g, kind, p, 101u * seed + (unsigned)kind, 4, 0);
            run(&g, "all", &fa, what);
            run(&g, "root", &fr, what);
            for (int d = 0; d < 2; d++) {
                CHECK_EQ_INT(fr.msgs[d], fa.msgs[d], "%s: stage-%d messages", what, d);
                CHECK(fr.bytes[d] == fa.bytes[d], "%s: stage-%d bytes %lld (root) and %lld "
                      "(all)", what, d, fr.bytes[d], fa.bytes[d]);
            }
            CHECK(fr.fwd == fa.fwd, "%s: forwarded %lld (root) and %lld (all)", what, fr.fwd,
                  fa.fwd);
            CHECK_EQ_INT(fr.overhead, fa.overhead, "%s: overhead messages", what);
            CHECK(fr.peak == fa.peak, "%s: buffer peak %lld (root) and %lld (all)", what,
                  fr.peak, fa.peak);
            CHECK_EQ_INT(fr.rounds, fa.rounds, "%s: rounds", what);
            CHECK_EQ_INT(fr.smsgs, fa.smsgs, "%s: messages", what);
            CHECK(fr.sbytes == fa.sbytes, "%s: bytes %lld (root) and %lld (all)", what,
                  fr.sbytes, fa.sbytes);
            gpattern_free(&g);
        }
        tap_result(MPI_COMM_WORLD, "sharing: %s patterns planned by all and by the root: the "
                   "same data and the same plan", pat_names[kind]);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    same_plans();
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
