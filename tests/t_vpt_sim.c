/* The simulator's model (bench/vptmodel.c, what bench/vptsim prints) against
 * what a real vpt exchange sends: on graph communicators of the patterns of
 * tests/graph.h (random with repeated and self edges, one-to-all,
 * all-to-one, empty, dense), Iso_neighbor_alltoallv_init with
 * iso_sparse_algorithm=vpt for every n and some explicit dims; each process
 * counts the MPI_Isend calls and bytes of one Iso_start (profiling
 * interface: the library is linked statically) and they must equal the
 * model's messages and bytes for that process (payload plus the pack-mode
 * size entry of 8 bytes per submessage and hop).  The dense pattern (every
 * process sends s ints to every other) must also meet the paper's closed
 * form: sum(k_d - 1) messages and (s + 8) sum_d (K - K/k_d) bytes per
 * process.  The received data is checked against codes every process can
 * compute (so the counted run is a correct one), and a second start must
 * send exactly what the first did (no count exchange in Iso_start).
 * Iso_request_vpt_info must report the model's messages and bytes stage by
 * stage, its forwarded payload, and buffers that hold at least what the
 * process sends and receives in one stage and at most what it sends and
 * receives in all (shared across stages: sched/arena.c).
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 4 6 8
 */
#include <stdio.h>
#include <stdlib.h>

/* graph.h's helpers for other tests' cases are not used here */
#pragma GCC diagnostic ignored "-Wunused-function"
#include "graph.h"
#include "vptmodel.h"

#define HEADER 8 /* pack mode: one int64 byte size per submessage */

/* ---- counting the library's sends ----------------------------------------- */
static int counting;
static long long count_msgs, count_bytes;

int MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (counting && dest != MPI_PROC_NULL) {
        int size = 0;
        PMPI_Type_size(type, &size);
        count_msgs++;
        count_bytes += (long long)n * size;
    }
    return PMPI_Isend(buf, n, type, dest, tag, comm, request);
}

/* Element t of the block of a's k-th edge to b. */
static int code(int a, int k, int b, int t)
{
    return ((a * 64 + k) * 64 + b) * 64 + t;
}

/* One shape on one pattern: info has iso_vpt_n or iso_vpt_dims. */
static void check_shape(const gpattern *g, MPI_Comm comm, int n, const int dims[], MPI_Info info,
                        const char *what)
{
    int p = g->p, me = g->rank, *scounts, *sdispls, *rcounts, *rdispls, *sbuf, *rbuf;
    int ssum = 0, rsum = 0, rc;
    long long *ptr = malloc(sizeof(long long) * (size_t)(p + 1)), *bytes, first_msgs, first_bytes;
    iso_vpt_model m;
    Iso_request req = ISO_REQUEST_NULL;

    /* buffers: contiguous ints, blocks in edge order */
    scounts = malloc(sizeof(int) * (size_t)(g->outdeg + 1));
    sdispls = malloc(sizeof(int) * (size_t)(g->outdeg + 1));
    rcounts = malloc(sizeof(int) * (size_t)(g->indeg + 1));
    rdispls = malloc(sizeof(int) * (size_t)(g->indeg + 1));
    for (int i = 0; i < g->outdeg; i++)
        scounts[i] = g->cnt[g->first[me] + i], sdispls[i] = ssum, ssum += scounts[i];
    for (int j = 0; j < g->indeg; j++)
        rcounts[j] = g->rcnt[j], rdispls[j] = rsum, rsum += rcounts[j];
    sbuf = malloc(sizeof(int) * (size_t)(ssum + 1));
    rbuf = malloc(sizeof(int) * (size_t)(rsum + 1));
    for (int i = 0; i < g->outdeg; i++) {
        int b = g->dests[i], k = 0;
        for (int e = 0; e < i; e++)
            k += g->dests[e] == b;
        for (int t = 0; t < scounts[i]; t++)
            sbuf[sdispls[i] + t] = code(me, k, b, t);
    }

    /* the model, from the whole pattern every process knows */
    for (int a = 0; a <= p; a++)
        ptr[a] = g->first[a];
    bytes = malloc(sizeof(long long) * (size_t)(g->first[p] + 1));
    for (int e = 0; e < g->first[p]; e++)
        bytes[e] = (long long)g->cnt[e] * (long long)sizeof(int);
    rc = iso__vpt_model_csr(p, n, dims, HEADER, ptr, g->dst, bytes, &m);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "%s: model", what);

    rc = Iso_neighbor_alltoallv_init(sbuf, scounts, sdispls, MPI_INT, rbuf, rcounts, rdispls,
                                     MPI_INT, comm, info, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "%s: Iso_neighbor_alltoallv_init", what);
    first_msgs = first_bytes = -1;
    for (int start = 0; start < 2 && rc == MPI_SUCCESS; start++) {
        for (int j = 0; j < rsum; j++)
            rbuf[j] = -1;
        counting = 1;
        count_msgs = count_bytes = 0;
        rc = Iso_start(&req);
        if (rc == MPI_SUCCESS)
            rc = Iso_wait(&req);
        counting = 0;
        CHECK_EQ_INT(rc, MPI_SUCCESS, "%s: start %d", what, start);
        for (int j = 0; j < g->indeg; j++) { /* the k-th occurrence of a: a's k-th edge */
            int a = g->sources[j], k = 0, bad = 0;
            for (int i = 0; i < j; i++)
                k += g->sources[i] == a;
            for (int t = 0; t < rcounts[j]; t++)
                bad += rbuf[rdispls[j] + t] != code(a, k, me, t);
            CHECK(bad == 0, "%s: start %d: slot %d (from %d) wrong", what, start, j, a);
        }
        if (start == 0) {
            first_msgs = count_msgs, first_bytes = count_bytes;
        } else {
            CHECK_EQ_INT(count_msgs, first_msgs, "%s: the second start's messages", what);
            CHECK_EQ_INT(count_bytes, first_bytes, "%s: the second start's bytes", what);
        }
    }
    if (m.msgs) {
        long long msgs = 0, sent = 0, held = 0, stage_most = 0, slack = 0;
        for (int d = 0; d < n; d++) {
            long long stage = m.bytes_sent[me * n + d] + m.bytes_recv[me * n + d];
            msgs += m.msgs[me * n + d], sent += m.bytes_sent[me * n + d];
            held += stage;
            stage_most = stage > stage_most ? stage : stage_most;
            slack += 8LL * (m.msgs[me * n + d] + m.msgs_recv[me * n + d]); /* 8-byte alignment */
        }
        CHECK_EQ_INT(first_msgs, msgs, "%s: rank %d: messages sent, counted vs model", what, me);
        CHECK_EQ_INT(first_bytes, sent, "%s: rank %d: bytes sent, counted vs model", what, me);
        if (rc == MPI_SUCCESS) { /* the library's own statistics, stage by stage */
            int nstages = -1, smsgs[ISO_VPT_MAXDIMS];
            long long sbytes[ISO_VPT_MAXDIMS], fwd = -1, buf = -1, fwd_payload = 0;
            iso_vpt_model m0; /* payload only: forwarded counts no size entries */
            rc = Iso_request_vpt_info(req, ISO_VPT_MAXDIMS, &nstages, smsgs, sbytes, &fwd, &buf);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "%s: Iso_request_vpt_info", what);
            CHECK_EQ_INT(iso__vpt_model_csr(p, n, dims, 0, ptr, g->dst, bytes, &m0), MPI_SUCCESS,
                         "%s: model without headers", what);
            CHECK_EQ_INT(nstages, n, "%s: stages", what);
            for (int d = 0; rc == MPI_SUCCESS && d < n && d < nstages; d++) {
                CHECK_EQ_INT(smsgs[d], m.msgs[me * n + d], "%s: rank %d stage %d: messages", what,
                             me, d);
                CHECK_EQ_INT(sbytes[d], m.bytes_sent[me * n + d], "%s: rank %d stage %d: bytes",
                             what, me, d);
                fwd_payload += m0.msgs ? m0.bytes_fwd[me * n + d] : 0;
            }
            CHECK_EQ_INT(fwd, fwd_payload, "%s: rank %d: forwarded payload", what, me);
            /* a stage's outgoing and incoming messages are alive together;
             * the arena never holds more than all messages of all stages */
            CHECK(buf >= stage_most && buf <= held + slack,
                  "%s: rank %d: buffer %lld outside [%lld sent and received in one stage, "
                  "%lld in all]", what, me, buf, stage_most, held + slack);
            iso__vpt_model_free(&m0);
        }
        iso__vpt_model_free(&m);
    }
    if (req != ISO_REQUEST_NULL)
        Iso_request_free(&req);
    free(ptr), free(bytes), free(scounts), free(sdispls), free(rcounts), free(rdispls);
    free(sbuf), free(rbuf);
}

/* Every n (balanced dims, info iso_vpt_n); for the random and dense
 * patterns also the explicit shapes of p (non-square, sizes 1). */
static void check_pattern(int kind, int p, unsigned seed)
{
    static const char *const explicit_dims[9][3] = {
        [4] = {"4,1", "1,2,2", NULL}, [6] = {"2,3", "3,2", NULL}, [8] = {"4,2", "2,4", "2,1,4"}};
    gpattern g;
    MPI_Comm comm;
    int fixed = kind == PAT_DENSE, s = 3;
    gpattern_make(&g, kind, p, seed, s, fixed);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    for (int n = 2; n <= iso__vpt_model_max_n(p); n++) {
        int dims[ISO_VPT_MAXDIMS];
        char what[128], val[16];
        MPI_Info info;
        iso__vpt_dims_balanced(p, n, dims);
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
        snprintf(val, sizeof val, "%d", n);
        MPI_Info_set(info, "iso_vpt_n", val);
        snprintf(what, sizeof what, "%s p=%d n=%d", pat_names[kind], p, n);
        check_shape(&g, comm, n, dims, info, what);
        MPI_Info_free(&info);
        if (kind == PAT_DENSE) { /* the closed form, on the counted figures */
            long long want_msgs = 0, want_bytes = 0;
            for (int d = 0; d < n; d++) {
                want_msgs += dims[d] - 1;
                want_bytes += (long long)(s * (int)sizeof(int) + HEADER) * (p - p / dims[d]);
            }
            CHECK_EQ_INT(count_msgs, want_msgs, "%s: closed form: messages", what);
            CHECK_EQ_INT(count_bytes, want_bytes, "%s: closed form: bytes", what);
        }
    }
    for (int i = 0; (kind == PAT_RANDOM || kind == PAT_DENSE) && p <= 8 && i < 3 && explicit_dims[p][i];
         i++) {
        int dims[ISO_VPT_MAXDIMS], n;
        char what[128];
        MPI_Info info;
        iso__vpt_dims_parse(explicit_dims[p][i], p, &n, dims);
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
        MPI_Info_set(info, "iso_vpt_dims", explicit_dims[p][i]);
        snprintf(what, sizeof what, "%s p=%d dims=%s", pat_names[kind], p, explicit_dims[p][i]);
        check_shape(&g, comm, n, dims, info, what);
        MPI_Info_free(&info);
    }
    MPI_Comm_free(&comm);
    gpattern_free(&g);
}

int main(int argc, char **argv)
{
    int p;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int kind = 0; kind < PAT_NKINDS; kind++) {
        check_pattern(kind, p, 101u + (unsigned)kind);
        tap_result(MPI_COMM_WORLD, "%s pattern, %d processes: counted sends of vpt = the model's%s",
                   pat_names[kind], p, kind == PAT_DENSE ? " = the closed form" : "");
    }
    MPI_Finalize();
    return 0;
}
