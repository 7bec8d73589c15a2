/* Bad inputs to the alltoall forms on distributed graph communicators, with
 * MPI_ERRORS_RETURN: each returns a code of its library error class and
 * hangs nothing (the harness has a timeout); a correct call on the same
 * communicator works afterwards.  For direct and vpt: negative counts, NULL
 * arrays, MPI_DATATYPE_NULL, MPI_IN_PLACE; bad info values of the *_init
 * calls; a bad argument on one process only under vpt (every process
 * fails: the plan starts with an agreement); a receive block larger than
 * what arrives (vpt: ISO_ERR_COUNT at the receiver alone, after the
 * exchange); Iso_request_vpt_info on a request that is not vpt; one
 * vocabulary for iso_sparse_algorithm (a word of Iso_*_crs or an unknown
 * one, from info or the environment, is ISO_ERR_ALGORITHM naming the
 * context); a NULL send buffer with nonzero counts under vpt
 * (MPI_ERR_BUFFER on every process, before any memory is touched).  The
 * routed cases run again under sharing (message sharing).
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 3 4
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "graph.h"

static int lib_class(int err)
{
    Iso_error e = ISO_ERR_NONE;
    Iso_error_class(err, &e);
    return (int)e;
}

/* The routing of the routed cases: "vpt" or "sharing" (the vpt keys are
 * accepted under both). */
static const char *routing = "vpt";

static MPI_Info vpt_info(const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", routing);
    MPI_Info_set(info, "iso_vpt_n", "2");
    if (key)
        MPI_Info_set(info, key, value);
    return info;
}

/* Arguments found before any communication, direct and vpt. */
static void arguments(MPI_Comm comm, int vpt)
{
    int sc[64], sd[64], rc[64], rd[64], buf[512], rbuf[512];
    MPI_Info info = vpt ? vpt_info(NULL, NULL) : MPI_INFO_NULL;
    Iso_request req = ISO_REQUEST_NULL;
    const char *alg = vpt ? routing : "direct";
    for (int i = 0; i < 64; i++)
        sc[i] = rc[i] = 1, sd[i] = rd[i] = i;
    /* the same bad argument on every process (so nothing waits; the dense
     * pattern gives every process edges) */
    {
        sc[0] = -1;
        CHECK_EQ_INT(lib_class(Iso_neighbor_alltoallv_init(buf, sc, sd, MPI_INT, rbuf, rc, rd,
                                                           MPI_INT, comm, info, &req)),
                     ISO_ERR_COUNT, "%s: negative sendcount", alg);
        sc[0] = 1;
        CHECK_EQ_INT(lib_class(Iso_neighbor_alltoallv_init(buf, NULL, sd, MPI_INT, rbuf, rc, rd,
                                                           MPI_INT, comm, info, &req)),
                     ISO_ERR_ARG, "%s: NULL sendcounts", alg);
    }
    {
        /* every process: a NULL type, MPI_IN_PLACE (some may have no edges:
         * the type is checked anyway) */
        int e = lib_class(Iso_neighbor_alltoall_init(buf, 1, MPI_DATATYPE_NULL, rbuf, 1, MPI_INT,
                                                     comm, info, &req));
        CHECK_EQ_INT(e, ISO_ERR_TYPE, "%s: MPI_DATATYPE_NULL", alg);
        e = lib_class(Iso_neighbor_alltoall_init(MPI_IN_PLACE, 1, MPI_INT, rbuf, 1, MPI_INT, comm,
                                                 info, &req));
        CHECK_EQ_INT(e, ISO_ERR_ARG, "%s: MPI_IN_PLACE", alg);
        CHECK(req == ISO_REQUEST_NULL, "%s: no request after errors", alg);
        e = lib_class(Iso_ineighbor_alltoall(buf, 1, MPI_INT, rbuf, 1, MPI_INT, comm, NULL));
        CHECK_EQ_INT(e, ISO_ERR_REQUEST, "%s: NULL request", alg);
    }
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

/* Bad info values: the same on every process. */
static void infos(MPI_Comm comm, int p)
{
    static const char *const bad[][3] = {
        {"iso_sparse_algorithm", "nbx", "ALGORITHM"}, {"iso_sparse_algorithm", "fast", "ALGORITHM"},
        {"iso_vpt_n", "0", "INFO"},                   {"iso_vpt_n", "x", "INFO"},
        {"iso_vpt_n", "17", "INFO"},                  {"iso_vpt_locality", "rack", "INFO"},
        {"iso_vpt_dims", "2,,2", "INFO"},             {"iso_unknown", "1", "INFO"}};
    int x[64] = {0}, y[64];
    char wrong[32];
    Iso_request req = ISO_REQUEST_NULL;
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        MPI_Info info = vpt_info(bad[k][0], bad[k][1]);
        int e = lib_class(Iso_neighbor_alltoall_init(x, 0, MPI_INT, y, 0, MPI_INT, comm, info,
                                                     &req));
        CHECK_EQ_INT(e, bad[k][2][0] == 'A' ? ISO_ERR_ALGORITHM : ISO_ERR_INFO, "info %s=%s",
                     bad[k][0], bad[k][1]);
        MPI_Info_free(&info);
    }
    snprintf(wrong, sizeof wrong, "%d,2", p + 1); /* product is not p */
    {
        MPI_Info info = vpt_info("iso_vpt_dims", wrong);
        CHECK_EQ_INT(lib_class(Iso_neighbor_alltoall_init(x, 0, MPI_INT, y, 0, MPI_INT, comm, info,
                                                          &req)),
                     ISO_ERR_INFO, "dims %s", wrong);
        MPI_Info_free(&info);
    }
    CHECK(req == ISO_REQUEST_NULL, "no request after info errors");
}

/* vpt: one process has a bad count; all fail (the agreement). */
static void one_bad(const gpattern *g, MPI_Comm comm)
{
    int sc[64], sd[64], rc[64], rd[64], buf[512], rbuf[512], e;
    MPI_Info info = vpt_info(NULL, NULL);
    Iso_request req = ISO_REQUEST_NULL;
    for (int i = 0; i < 64; i++)
        sc[i] = rc[i] = 0, sd[i] = rd[i] = i;
    if (g->rank == 0)
        sc[0] = -5;
    e = Iso_neighbor_alltoallv_init(buf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, info, &req);
    if (g->rank == 0)
        CHECK_EQ_INT(lib_class(e), ISO_ERR_COUNT, "the bad process");
    else if (g->p > 1)
        CHECK(e != MPI_SUCCESS, "a good process must fail too (got %d)", e);
    if (req != ISO_REQUEST_NULL)
        Iso_request_free(&req);
    MPI_Info_free(&info);
}

/* vpt: rank 0 expects one int more than arrives in its first slot. */
static void short_block(const gpattern *g, MPI_Comm comm)
{
    int sc[64], sd[64], rc[64], rd[64], buf[512] = {0}, rbuf[512], e;
    MPI_Info info = vpt_info(NULL, NULL);
    Iso_request req = ISO_REQUEST_NULL;
    for (int i = 0; i < g->outdeg; i++)
        sc[i] = g->cnt[g->first[g->rank] + i], sd[i] = 4 * i;
    for (int j = 0; j < g->indeg; j++)
        rc[j] = g->rcnt[j], rd[j] = 4 * j;
    if (g->rank == 0 && g->indeg > 0)
        rc[0]++;
    e = Iso_neighbor_alltoallv_init(buf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, info, &req);
    CHECK_EQ_INT(e, MPI_SUCCESS, "short block: init");
    if (e == MPI_SUCCESS) {
        e = Iso_start(&req);
        if (e == MPI_SUCCESS)
            e = Iso_wait(&req);
        if (g->rank == 0 && g->indeg > 0 && g->p > 1)
            CHECK_EQ_INT(lib_class(e), ISO_ERR_COUNT, "short block at the receiver");
        else if (g->rank != 0)
            CHECK_EQ_INT(e, MPI_SUCCESS, "others are fine");
        /* Iso_request_vpt_info works on it */
        {
            int nst, m[4];
            long long b[4], f, bb;
            CHECK_EQ_INT(Iso_request_vpt_info(req, 4, &nst, m, b, &f, &bb), MPI_SUCCESS, "info");
            CHECK_EQ_INT(lib_class(Iso_request_vpt_info(req, 4, NULL, m, b, &f, &bb)), ISO_ERR_ARG,
                         "info: NULL");
        }
        Iso_request_free(&req);
    }
    MPI_Info_free(&info);
}

static void not_vpt(MPI_Comm comm)
{
    int x[64] = {0}, y[64], nst, m[4];
    long long b[4], f, bb;
    Iso_request req = ISO_REQUEST_NULL;
    CHECK_EQ_INT(Iso_neighbor_alltoall_init(x, 0, MPI_INT, y, 0, MPI_INT, comm, MPI_INFO_NULL,
                                            &req),
                 MPI_SUCCESS, "direct init");
    CHECK_EQ_INT(lib_class(Iso_request_vpt_info(req, 4, &nst, m, b, &f, &bb)), ISO_ERR_REQUEST,
                 "vpt info on a direct request");
    Iso_request_free(&req);
}

/* The message of err contains both texts. */
static int says(int err, const char *a, const char *b)
{
    char str[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    MPI_Error_string(err, str, &len);
    return tap_text_has(str, a) && tap_text_has(str, b);
}

/* iso_sparse_algorithm: the words of Iso_*_crs and unknown words are
 * errors here, from info and from the environment alike. */
static void vocabulary(const gpattern *g, MPI_Comm comm)
{
    static const char *const words[] = {"nbx", "locality-nbx", "fastest"};
    int x[4] = {0}, y[4];
    Iso_request req = ISO_REQUEST_NULL;
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        int crs = k < 2, e;
        MPI_Info info = vpt_info("iso_sparse_algorithm", words[k]);
        MPI_Comm fresh;
        e = Iso_neighbor_alltoall_init(x, 0, MPI_INT, y, 0, MPI_INT, comm, info, &req);
        CHECK_EQ_INT(lib_class(e), ISO_ERR_ALGORITHM, "info %s", words[k]);
        CHECK(says(e, crs ? "is an Iso_*_crs algorithm" : "is unknown",
                   "on a distributed graph communicator: auto, direct, vpt, sharing"),
              "info %s: the message names the context and its words", words[k]);
        MPI_Info_free(&info);
        /* the environment is read at a graph communicator's first call;
         * the barriers keep each rank's setting from meeting another's
         * call (under SimGrid's SMPI all ranks share one environment) */
        MPI_Barrier(MPI_COMM_WORLD);
        setenv("ISO_SPARSE_ALGORITHM", words[k], 1);
        fresh = gpattern_comm(g, MPI_INFO_NULL);
        MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
        e = Iso_neighbor_alltoall(x, 0, MPI_INT, y, 0, MPI_INT, fresh);
        MPI_Barrier(MPI_COMM_WORLD);
        unsetenv("ISO_SPARSE_ALGORITHM");
        CHECK_EQ_INT(lib_class(e), ISO_ERR_ALGORITHM, "ISO_SPARSE_ALGORITHM=%s", words[k]);
        CHECK(says(e, "ISO_SPARSE_ALGORITHM", words[k]), "environment %s: named", words[k]);
        MPI_Comm_free(&fresh);
    }
    CHECK(req == ISO_REQUEST_NULL, "no request after algorithm errors");
}

/* vpt with a NULL send buffer and nonzero counts: every process returns
 * MPI_ERR_BUFFER (the routing layer's check, spread by the agreement) as
 * direct's sends would; it used to crash in the first PACK.  Persistent
 * (info) and blocking (environment, a fresh communicator). */
static void null_send(const gpattern *g, MPI_Comm comm)
{
    int rbuf[512], any = g->outdeg > 0, e, cls = MPI_SUCCESS;
    MPI_Info info = vpt_info(NULL, NULL);
    Iso_request req = ISO_REQUEST_NULL;
    MPI_Comm fresh;
    MPI_Allreduce(MPI_IN_PLACE, &any, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    e = Iso_neighbor_alltoall_init(NULL, 1, MPI_INT, rbuf, 1, MPI_INT, comm, info, &req);
    MPI_Error_class(e, &cls);
    CHECK_EQ_INT(cls, any ? MPI_ERR_BUFFER : MPI_SUCCESS, "init: NULL sendbuf, count 1");
    if (req != ISO_REQUEST_NULL)
        Iso_request_free(&req);
    MPI_Info_free(&info);
    MPI_Barrier(MPI_COMM_WORLD); /* one environment under SMPI: see vocabulary */
    setenv("ISO_SPARSE_ALGORITHM", routing, 1);
    setenv("ISO_VPT_N", "2", 1);
    fresh = gpattern_comm(g, MPI_INFO_NULL);
    MPI_Comm_set_errhandler(fresh, MPI_ERRORS_RETURN);
    e = Iso_neighbor_alltoall(NULL, 1, MPI_INT, rbuf, 1, MPI_INT, fresh);
    MPI_Barrier(MPI_COMM_WORLD);
    unsetenv("ISO_SPARSE_ALGORITHM");
    unsetenv("ISO_VPT_N");
    cls = MPI_SUCCESS;
    MPI_Error_class(e, &cls);
    CHECK_EQ_INT(cls, any ? MPI_ERR_BUFFER : MPI_SUCCESS, "blocking: NULL sendbuf, count 1");
    MPI_Comm_free(&fresh);
}

int main(int argc, char **argv)
{
    int p;
    gpattern g;
    MPI_Comm comm, ocomm;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    gpattern_make(&g, PAT_DENSE, p, 3u, 2, 0);
    comm = gpattern_comm(&g, MPI_INFO_NULL);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* a correct call first: the library's state on comm is complete */
    g_case(&g, comm, FORM_A2AV, CALL_BLOCKING, MPI_INFO_NULL, 1, ocomm, NULL, "before");
    arguments(comm, 0);
    tap_result(MPI_COMM_WORLD, "argument errors, direct");
    infos(comm, p);
    tap_result(MPI_COMM_WORLD, "bad info values of _init calls");
    vocabulary(&g, comm);
    tap_result(MPI_COMM_WORLD, "iso_sparse_algorithm: words of Iso_*_crs and unknown words");
    for (int k = 0; k < 2; k++) {
        routing = k ? "sharing" : "vpt";
        arguments(comm, 1);
        tap_result(MPI_COMM_WORLD, "%s: argument errors", routing);
        null_send(&g, comm);
        tap_result(MPI_COMM_WORLD, "%s: NULL send buffer is MPI_ERR_BUFFER everywhere", routing);
        one_bad(&g, comm);
        tap_result(MPI_COMM_WORLD, "%s: a bad argument on one process fails every process",
                   routing);
        short_block(&g, comm);
        not_vpt(comm);
        tap_result(MPI_COMM_WORLD, "%s: a short block fails its receiver only; vpt info errors",
                   routing);
        {
            MPI_Info info = vpt_info(NULL, NULL);
            g_case(&g, comm, FORM_A2AV, CALL_PERSISTENT, info, 2, ocomm, NULL, "after");
            g_case(&g, comm, FORM_A2AW, CALL_BLOCKING, MPI_INFO_NULL, 1, ocomm, NULL, "after");
            MPI_Info_free(&info);
        }
        tap_result(MPI_COMM_WORLD, "%s: correct calls afterwards", routing);
    }
    MPI_Comm_free(&comm);
    MPI_Comm_free(&ocomm);
    gpattern_free(&g);
    g_types_free();
    MPI_Finalize();
    return 0;
}
