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
 * forwards.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 1 3 4 7 12 16
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"
#include "vpt/shape.h"

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

/* Messages, bytes per stage and forwarded bytes of rank me, with 4-byte
 * elements. */
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
            int at = a, ca[16], cb[16];
            coords(n, dims, g->dst[e], cb);
            for (int d = 0; d < n; d++) {
                int next;
                coords(n, dims, at, ca);
                ca[d] = cb[d];
                next = rank_of(n, dims, ca);
                if (next != at && at == me) {
                    if (!to[(size_t)d * (size_t)p + (size_t)next]++)
                        msgs[d]++;
                    bytes[d] += 8 + 4LL * g->cnt[e];
                    if (a != me)
                        *fwd += 4LL * g->cnt[e];
                }
                at = next;
            }
        }
    free(to);
}

static void check_info(const gpattern *g, Iso_request req, int n, const int dims[],
                       const char *what)
{
    int nst = -1, msgs[16], want_msgs[16];
    long long bytes[16], want_bytes[16], fwd = -2, want_fwd, buf = -1, total = 0;
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
        total += want_bytes[d];
    }
    CHECK_EQ_INT(fwd, want_fwd, "%s: forwarded bytes", what);
    CHECK(buf >= total, "%s: buffers %lld below the %lld bytes sent", what, buf, total);
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
    persistent_case(p, PAT_RANDOM, FORM_A2AV, 3, info, n, dims, shape);
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
    MPI_Comm_free(&ocomm);
    g_types_free();
    MPI_Finalize();
    return 0;
}
