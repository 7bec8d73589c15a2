/* Bad inputs to the alltoall forms on distributed graph communicators, with
 * MPI_ERRORS_RETURN: each returns a code of its library error class and
 * hangs nothing (the harness has a timeout); a correct call on the same
 * communicator works afterwards.  For direct and vpt: negative counts, NULL
 * arrays, MPI_DATATYPE_NULL, MPI_IN_PLACE; bad info values of the *_init
 * calls; a bad argument on one process only under vpt (every process
 * fails: the plan starts with an agreement); a receive block larger than
 * what arrives (vpt: ISO_ERR_COUNT at the receiver alone, after the
 * exchange); Iso_request_vpt_info on a request that is not vpt.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 3 4
 */
#include <stdio.h>
#include <stdlib.h>

#include "graph.h"

static int lib_class(int err)
{
    Iso_error e = ISO_ERR_NONE;
    Iso_error_class(err, &e);
    return (int)e;
}

static MPI_Info vpt_info(const char *key, const char *value)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
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
    const char *alg = vpt ? "vpt" : "direct";
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
    arguments(comm, 1);
    tap_result(MPI_COMM_WORLD, "argument errors, direct and vpt");
    infos(comm, p);
    tap_result(MPI_COMM_WORLD, "bad info values of _init calls");
    one_bad(&g, comm);
    tap_result(MPI_COMM_WORLD, "vpt: a bad argument on one process fails every process");
    short_block(&g, comm);
    not_vpt(comm);
    tap_result(MPI_COMM_WORLD, "vpt: a short block fails its receiver only; vpt info errors");
    {
        MPI_Info info = vpt_info(NULL, NULL);
        g_case(&g, comm, FORM_A2AV, CALL_PERSISTENT, info, 2, ocomm, NULL, "after");
        g_case(&g, comm, FORM_A2AW, CALL_BLOCKING, MPI_INFO_NULL, 1, ocomm, NULL, "after");
        MPI_Info_free(&info);
    }
    tap_result(MPI_COMM_WORLD, "correct calls afterwards");
    MPI_Comm_free(&comm);
    MPI_Comm_free(&ocomm);
    gpattern_free(&g);
    g_types_free();
    MPI_Finalize();
    return 0;
}
