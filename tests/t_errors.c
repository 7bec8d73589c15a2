/* Error handling with MPI_ERRORS_RETURN on every communicator involved
 * (MPI_COMM_WORLD too): each bad input must return a code of its library
 * error class (Iso_error_class, and MPI_Error_class equal to
 * Iso_error_mpi_class), MPI_Error_string must give the library's text, the
 * receive buffer stays untouched, nothing hangs, and a correct collective on
 * the same communicator still works afterwards.  Every rank passes the same
 * bad arguments, except in the isomorphism checks where rank 0 (or the last
 * rank) passes a different neighborhood and EVERY rank must get the error.
 *
 * Where the header leaves the class open between two (e.g. MPI_COMM_NULL:
 * NOT_CART or ARG; a NULL request pointer: ARG or REQUEST) both are
 * accepted.  The default handler (MPI_ERRORS_ARE_FATAL aborting) is not
 * tested in-process.
 *
 * NPROCS: 1 2 4 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

/* Oracle messages travel on a duplicate of MPI_COMM_WORLD: every Cartesian
 * communicator here is made without reordering, so its ranks are the same. */
static MPI_Comm ocomm;

static const char *const err_name[] = {"NONE",
#define N_(name, msg) #name,
                                       ISO_ERRNO_MAP(N_)
#undef N_
};
static const char *const err_msg[] = {"",
#define M_(name, msg) msg,
                                      ISO_ERRNO_MAP(M_)
#undef M_
};

static int rank, nprocs, sanity_every_error;
static char what[256];

#define ANY ISO_ERR_NONE /* "no alternative class" */

static void expect_err(int rc, Iso_error want, Iso_error alt, const char *desc)
{
    if (rc == MPI_SUCCESS) {
        CHECK(0, "%s: returned MPI_SUCCESS, expected ISO_ERR_%s", desc, err_name[want]);
        return;
    }
    Iso_error got = ISO_ERR_LASTCODE;
    int rc2 = Iso_error_class(rc, &got);
    CHECK(rc2 == MPI_SUCCESS, "%s: Iso_error_class(%d) rc=%d", desc, rc, rc2);
    if (got < ISO_ERR_NONE || got >= ISO_ERR_LASTCODE) {
        CHECK(0, "%s: Iso_error_class gave %d", desc, (int)got);
        return;
    }
    char str[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0, cls = -1;
    MPI_Error_string(rc, str, &len);
    MPI_Error_class(rc, &cls);
    CHECK(got == want || (alt != ANY && got == alt),
          "%s: error class ISO_ERR_%s (\"%s\"), expected ISO_ERR_%s%s%s", desc, err_name[got], str,
          err_name[want], alt != ANY ? " or ISO_ERR_" : "", alt != ANY ? err_name[alt] : "");
    if (got == ISO_ERR_NONE)
        return;
    CHECK_EQ_INT(cls, Iso_error_mpi_class(got), "%s: MPI_Error_class", desc);
    CHECK(tap_text_has(str, err_msg[got]), "%s: MPI_Error_string \"%s\" lacks \"%s\"", desc,
          str, err_msg[got]);
}

/* ---------------------------------------------------------------------- */
/* A correct alltoall on a communicator, against the oracle (computed once
 * per neighborhood). */
typedef struct {
    MPI_Comm comm;
    nbh_t nb;
    int *sb, *rb, *want;
} sane_t;

static void sane_init(sane_t *z, MPI_Comm comm, const nbh_t *nb)
{
    size_t n = (size_t)nb->s * 2 + 1;
    z->comm = comm;
    z->nb = *nb;
    z->sb = malloc(sizeof(int) * n);
    z->rb = malloc(sizeof(int) * n);
    z->want = malloc(sizeof(int) * n);
    int *cnt = malloc(sizeof(int) * n);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * n);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * n);
    for (size_t j = 0; j < n; j++)
        z->sb[j] = rank * 1000 + (int)j, z->want[j] = -1;
    for (int i = 0; i < nb->s; i++)
        cnt[i] = 2, dsp[i] = (MPI_Aint)((size_t)i * 2 * sizeof(int)), ty[i] = MPI_INT;
    oracle_alltoallw_on(z->sb, cnt, dsp, ty, z->want, cnt, dsp, ty, comm, ocomm, nb);
    free(cnt), free(dsp), free(ty);
}

static void sane_free(sane_t *z) { free(z->sb), free(z->rb), free(z->want); }

static void sane_run(sane_t *z, const char *after)
{
    size_t n = (size_t)z->nb.s * 2 + 1;
    for (size_t j = 0; j < n; j++)
        z->rb[j] = -1;
    int rc = Iso_neighbor_alltoall(z->sb, 2, MPI_INT, z->rb, 2, MPI_INT, z->comm);
    CHECK(rc == MPI_SUCCESS, "correct alltoall after %s: rc=%d", after, rc);
    CHECK(memcmp(z->rb, z->want, n * sizeof(int)) == 0, "correct alltoall after %s: wrong data",
          after);
}

/* ---------------------------------------------------------------------- */
/* Every collective form in three modes, with an argument set that tests
 * corrupt one field at a time. */
enum { A2A, A2AV, A2AW, AG, AGV, AGW, RED, SRED, NFORMS };
static const char *const fname[NFORMS] = {"alltoall",  "alltoallv",  "alltoallw", "allgather",
                                          "allgatherv", "allgatherw", "reduce",    "scatter_reduce"};
enum { BLOCKING, NONBLOCKING, PERSISTENT };

#define MAXS 32
typedef struct {
    const void *sb;
    void *rb;
    int scount, rcount, count;
    MPI_Datatype stype, rtype, dtype;
    const int *scounts, *rcounts, *sdispls, *rdispls;
    const MPI_Aint *sadispls, *radispls;
    const MPI_Datatype *stypes, *rtypes;
    MPI_Op op;
    MPI_Info info;
    Iso_request *req;
} args_t;

static int g_sb[4 * MAXS], g_rb[4 * MAXS + 4], g_counts[MAXS], g_idispl[MAXS];
static int g_negcounts[MAXS];
static MPI_Aint g_adispl[MAXS];
static MPI_Datatype g_types[MAXS], g_nulltypes[MAXS];
static Iso_request g_req;

static args_t good_args(void)
{
    args_t a = {g_sb,      g_rb,      2,       2,         2,        MPI_INT,  MPI_INT,
                MPI_INT,   g_counts,  g_counts, g_idispl, g_idispl, g_adispl, g_adispl,
                g_types,   g_types,   MPI_SUM, MPI_INFO_NULL, &g_req};
    return a;
}

static int call(int f, int mode, MPI_Comm c, const args_t *a)
{
    switch (mode * NFORMS + f) {
    case BLOCKING * NFORMS + A2A:
        return Iso_neighbor_alltoall(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype, c);
    case BLOCKING * NFORMS + A2AV:
        return Iso_neighbor_alltoallv(a->sb, a->scounts, a->sdispls, a->stype, a->rb, a->rcounts,
                                      a->rdispls, a->rtype, c);
    case BLOCKING * NFORMS + A2AW:
        return Iso_neighbor_alltoallw(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                      a->rcounts, a->radispls, a->rtypes, c);
    case BLOCKING * NFORMS + AG:
        return Iso_neighbor_allgather(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype, c);
    case BLOCKING * NFORMS + AGV:
        return Iso_neighbor_allgatherv(a->sb, a->scount, a->stype, a->rb, a->rcounts, a->rdispls,
                                       a->rtype, c);
    case BLOCKING * NFORMS + AGW:
        return Iso_neighbor_allgatherw(a->sb, a->scount, a->stype, a->rb, a->rcounts, a->radispls,
                                       a->rtypes, c);
    case BLOCKING * NFORMS + RED:
        return Iso_neighbor_reduce(a->sb, a->rb, a->count, a->dtype, a->op, c);
    case BLOCKING * NFORMS + SRED:
        return Iso_neighbor_scatter_reduce(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                           a->count, a->dtype, a->op, c);
    case NONBLOCKING * NFORMS + A2A:
        return Iso_ineighbor_alltoall(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype, c,
                                      a->req);
    case NONBLOCKING * NFORMS + A2AV:
        return Iso_ineighbor_alltoallv(a->sb, a->scounts, a->sdispls, a->stype, a->rb, a->rcounts,
                                       a->rdispls, a->rtype, c, a->req);
    case NONBLOCKING * NFORMS + A2AW:
        return Iso_ineighbor_alltoallw(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                       a->rcounts, a->radispls, a->rtypes, c, a->req);
    case NONBLOCKING * NFORMS + AG:
        return Iso_ineighbor_allgather(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype, c,
                                       a->req);
    case NONBLOCKING * NFORMS + AGV:
        return Iso_ineighbor_allgatherv(a->sb, a->scount, a->stype, a->rb, a->rcounts, a->rdispls,
                                        a->rtype, c, a->req);
    case NONBLOCKING * NFORMS + AGW:
        return Iso_ineighbor_allgatherw(a->sb, a->scount, a->stype, a->rb, a->rcounts,
                                        a->radispls, a->rtypes, c, a->req);
    case NONBLOCKING * NFORMS + RED:
        return Iso_ineighbor_reduce(a->sb, a->rb, a->count, a->dtype, a->op, c, a->req);
    case NONBLOCKING * NFORMS + SRED:
        return Iso_ineighbor_scatter_reduce(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                            a->count, a->dtype, a->op, c, a->req);
    case PERSISTENT * NFORMS + A2A:
        return Iso_neighbor_alltoall_init(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype,
                                          c, a->info, a->req);
    case PERSISTENT * NFORMS + A2AV:
        return Iso_neighbor_alltoallv_init(a->sb, a->scounts, a->sdispls, a->stype, a->rb,
                                           a->rcounts, a->rdispls, a->rtype, c, a->info, a->req);
    case PERSISTENT * NFORMS + A2AW:
        return Iso_neighbor_alltoallw_init(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                           a->rcounts, a->radispls, a->rtypes, c, a->info, a->req);
    case PERSISTENT * NFORMS + AG:
        return Iso_neighbor_allgather_init(a->sb, a->scount, a->stype, a->rb, a->rcount, a->rtype,
                                           c, a->info, a->req);
    case PERSISTENT * NFORMS + AGV:
        return Iso_neighbor_allgatherv_init(a->sb, a->scount, a->stype, a->rb, a->rcounts,
                                            a->rdispls, a->rtype, c, a->info, a->req);
    case PERSISTENT * NFORMS + AGW:
        return Iso_neighbor_allgatherw_init(a->sb, a->scount, a->stype, a->rb, a->rcounts,
                                            a->radispls, a->rtypes, c, a->info, a->req);
    case PERSISTENT * NFORMS + RED:
        return Iso_neighbor_reduce_init(a->sb, a->rb, a->count, a->dtype, a->op, c, a->info,
                                        a->req);
    default:
        return Iso_neighbor_scatter_reduce_init(a->sb, a->scounts, a->sadispls, a->stypes, a->rb,
                                                a->count, a->dtype, a->op, c, a->info, a->req);
    }
}

#define RB_SENTINEL (-4242)

/* One bad call: expect the error, the receive buffer untouched, and clean
 * up if the library wrongly accepted it (all ranks behave the same). */
static void bad(int f, int mode, MPI_Comm c, const args_t *a, Iso_error want, Iso_error alt,
                const char *desc, sane_t *z)
{
    for (size_t j = 0; j < sizeof g_rb / sizeof g_rb[0]; j++)
        g_rb[j] = RB_SENTINEL;
    g_req = ISO_REQUEST_NULL;
    snprintf(what, sizeof what, "Iso_%sneighbor_%s%s: %s", mode == NONBLOCKING ? "i" : "",
             fname[f], mode == PERSISTENT ? "_init" : "", desc);
    int rc = call(f, mode, c, a);
    expect_err(rc, want, alt, what);
    if (rc == MPI_SUCCESS && mode != BLOCKING && a->req == &g_req && g_req != ISO_REQUEST_NULL) {
        if (mode == NONBLOCKING)
            Iso_wait(&g_req);
        else
            Iso_request_free(&g_req);
    }
    if (rc != MPI_SUCCESS) {
        int touched = 0;
        for (size_t j = 0; j < sizeof g_rb / sizeof g_rb[0]; j++)
            touched += g_rb[j] != RB_SENTINEL;
        CHECK(touched == 0, "%s: %d receive elements written despite the error", what, touched);
    }
    if (z && sanity_every_error)
        sane_run(z, what);
}

static int has_scalar_counts(int f) { return f == A2A || f == AG; }
static int is_v(int f) { return f == A2AV || f == AGV; }
static int is_w(int f) { return f == A2AW || f == AGW || f == SRED; }
static int is_red(int f) { return f == RED || f == SRED; }

/* All argument errors of one form in one mode on a good isocomm. */
static void bad_args(int f, int mode, MPI_Comm iso, sane_t *z)
{
    args_t a;
#define BAD(field, val, want, alt, desc)                                                          \
    do {                                                                                          \
        a = good_args();                                                                          \
        a.field = val;                                                                            \
        bad(f, mode, iso, &a, want, alt, desc, z);                                                \
    } while (0)
    BAD(sb, MPI_IN_PLACE, ISO_ERR_ARG, ANY, "MPI_IN_PLACE sendbuf");
    if (is_red(f)) {
        BAD(count, -1, ISO_ERR_COUNT, ANY, "count -1");
        BAD(dtype, MPI_DATATYPE_NULL, ISO_ERR_TYPE, ANY, "MPI_DATATYPE_NULL");
        BAD(op, MPI_OP_NULL, ISO_ERR_OP, ANY, "MPI_OP_NULL");
    }
    if (has_scalar_counts(f)) {
        BAD(scount, -1, ISO_ERR_COUNT, ANY, "sendcount -1");
        BAD(rcount, -3, ISO_ERR_COUNT, ANY, "recvcount -3");
    }
    if (f == AGV || f == AGW)
        BAD(scount, -1, ISO_ERR_COUNT, ANY, "sendcount -1");
    if (f != RED && f != SRED && !is_w(f))
        BAD(stype, MPI_DATATYPE_NULL, ISO_ERR_TYPE, ANY, "sendtype MPI_DATATYPE_NULL");
    if (f == AGW)
        BAD(stype, MPI_DATATYPE_NULL, ISO_ERR_TYPE, ANY, "sendtype MPI_DATATYPE_NULL");
    if (f == A2A || f == A2AV || f == AG || f == AGV)
        BAD(rtype, MPI_DATATYPE_NULL, ISO_ERR_TYPE, ANY, "recvtype MPI_DATATYPE_NULL");
    if (f == A2AV || f == A2AW || f == SRED) {
        BAD(scounts, g_negcounts, ISO_ERR_COUNT, ANY, "sendcounts[1] = -1");
        BAD(scounts, NULL, ISO_ERR_ARG, ANY, "sendcounts NULL");
    }
    if (f == A2AV || f == A2AW || f == AGV || f == AGW) {
        BAD(rcounts, g_negcounts, ISO_ERR_COUNT, ANY, "recvcounts[1] = -1");
        BAD(rcounts, NULL, ISO_ERR_ARG, ANY, "recvcounts NULL");
    }
    if (f == A2AV)
        BAD(sdispls, NULL, ISO_ERR_ARG, ANY, "sdispls NULL");
    if (is_v(f))
        BAD(rdispls, NULL, ISO_ERR_ARG, ANY, "rdispls NULL");
    if (f == A2AW || f == SRED) {
        BAD(sadispls, NULL, ISO_ERR_ARG, ANY, "sdispls NULL");
        BAD(stypes, NULL, ISO_ERR_ARG, ANY, "sendtypes NULL");
        BAD(stypes, g_nulltypes, ISO_ERR_TYPE, ANY, "sendtypes[1] = MPI_DATATYPE_NULL");
    }
    if (f == A2AW || f == AGW) {
        BAD(radispls, NULL, ISO_ERR_ARG, ANY, "rdispls NULL");
        BAD(rtypes, NULL, ISO_ERR_ARG, ANY, "recvtypes NULL");
        BAD(rtypes, g_nulltypes, ISO_ERR_TYPE, ANY, "recvtypes[1] = MPI_DATATYPE_NULL");
    }
    if (mode != BLOCKING)
        BAD(req, NULL, ISO_ERR_ARG, ISO_ERR_REQUEST, "request pointer NULL");
    if (mode == PERSISTENT) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", "nonsense");
        BAD(info, info, ISO_ERR_ALGORITHM, ANY, "info iso_algorithm=nonsense");
        MPI_Info_free(&info);
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_combine", "zip");
        BAD(info, info, ISO_ERR_INFO, ANY, "info iso_combine=zip");
        MPI_Info_free(&info);
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_foo", "1");
        BAD(info, info, ISO_ERR_INFO, ANY, "info iso_foo=1");
        MPI_Info_free(&info);
    }
#undef BAD
}

/* ---------------------------------------------------------------------- */
static MPI_Comm make_cart(int periodic)
{
    int dims[2] = {0, 0}, periods[2] = {periodic, periodic};
    MPI_Comm c = oracle_cart(2, dims, periods);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* A ring as a distributed graph (weights given explicitly: MPI_UNWEIGHTED
 * trips gcc's -Wstringop-overread with Open MPI's headers). */
static MPI_Comm make_graph(void)
{
    int src = (rank + nprocs - 1) % nprocs, dst = (rank + 1) % nprocs, w = 1;
    MPI_Comm g;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &src, &w, 1, &dst, &w, MPI_INFO_NULL, 0,
                                   &g);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    return g;
}

static void test_error_table(void)
{
    for (int e = 1; e < ISO_ERR_LASTCODE; e++) {
        int cls = Iso_error_mpi_class((Iso_error)e), len = 0, lastused = 0, flag = 0;
        int *lu = NULL;
        char str[MPI_MAX_ERROR_STRING + 1] = "";
        Iso_error back = ISO_ERR_NONE;
        CHECK(cls != MPI_ERR_UNKNOWN && cls != MPI_SUCCESS, "Iso_error_mpi_class(%s) = %d",
              err_name[e], cls);
        MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_LASTUSEDCODE, &lu, &flag);
        if (flag)
            lastused = *lu;
        CHECK(!flag || cls <= lastused, "class %d of %s beyond MPI_LASTUSEDCODE %d", cls,
              err_name[e], lastused);
        for (int e2 = 1; e2 < e; e2++)
            CHECK(Iso_error_mpi_class((Iso_error)e2) != cls, "%s and %s share MPI class %d",
                  err_name[e2], err_name[e], cls);
        MPI_Error_string(cls, str, &len);
        CHECK(strstr(str, err_msg[e]) != NULL, "MPI_Error_string(class of %s) = \"%s\"",
              err_name[e], str);
        int rc = Iso_error_class(cls, &back);
        CHECK(rc == MPI_SUCCESS && back == (Iso_error)e, "Iso_error_class(class of %s) = %d rc=%d",
              err_name[e], (int)back, rc);
    }
    Iso_error x = ISO_ERR_LASTCODE;
    int rc = Iso_error_class(MPI_SUCCESS, &x);
    CHECK(rc == MPI_SUCCESS && x == ISO_ERR_NONE, "Iso_error_class(MPI_SUCCESS) = %d", (int)x);
    x = ISO_ERR_LASTCODE;
    rc = Iso_error_class(MPI_ERR_COMM, &x);
    CHECK(rc == MPI_SUCCESS && x == ISO_ERR_NONE, "Iso_error_class(MPI_ERR_COMM) = %d", (int)x);
    CHECK_EQ_INT(Iso_error_mpi_class(ISO_ERR_NONE), MPI_ERR_UNKNOWN, "Iso_error_mpi_class(NONE)");
    CHECK_EQ_INT(Iso_error_mpi_class(ISO_ERR_LASTCODE), MPI_ERR_UNKNOWN,
                 "Iso_error_mpi_class(LASTCODE)");
    CHECK_EQ_INT(Iso_error_mpi_class((Iso_error)-1), MPI_ERR_UNKNOWN, "Iso_error_mpi_class(-1)");
    tap_result(MPI_COMM_WORLD,
               "error classes registered, distinct, strings are the library's, round trip");
}

static void test_create_errors(MPI_Comm iso, const nbh_t *nb, sane_t *z)
{
    MPI_Comm out = MPI_COMM_NULL, graph = MPI_COMM_NULL, fresh = make_cart(1);
    int rc;
    graph = make_graph();
    rc = Iso_neighborhood_create(MPI_COMM_WORLD, nb->s, nb->off, &out);
    expect_err(rc, ISO_ERR_NOT_CART, ANY, "create on MPI_COMM_WORLD");
    rc = Iso_neighborhood_create(graph, nb->s, nb->off, &out);
    expect_err(rc, ISO_ERR_NOT_CART, ANY, "create on a dist-graph communicator");
    rc = Iso_neighborhood_create(MPI_COMM_NULL, nb->s, nb->off, &out);
    expect_err(rc, ISO_ERR_NOT_CART, ISO_ERR_ARG, "create on MPI_COMM_NULL");
    rc = Iso_neighborhood_create(iso, -1, nb->off, &out);
    expect_err(rc, ISO_ERR_ARG, ANY, "create with s = -1");
    sane_run(z, "create with s = -1");
    rc = Iso_neighborhood_create(iso, nb->s, NULL, &out);
    expect_err(rc, ISO_ERR_ARG, ANY, "create with NULL relative_coordinates, s > 0");
    sane_run(z, "create with NULL relative_coordinates");
    rc = Iso_neighborhood_create(iso, nb->s, nb->off, NULL);
    expect_err(rc, ISO_ERR_ARG, ANY, "create with NULL isocomm");
    sane_run(z, "create with NULL isocomm");

    /* Info values. */
    static const char *const keyval[][3] = {
        {"iso_verify", "maybe", "INFO"},
        {"iso_algorithm", "nonsense", "ALGORITHM"},
        {"iso_foo", "1", "INFO"},
        {"iso_combine", "zip", "INFO"},
    };
    for (int k = 0; k < 4; k++) {
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, keyval[k][0], keyval[k][1]);
        rc = Iso_neighborhood_create_with_info(iso, nb->s, nb->off, info, &out);
        snprintf(what, sizeof what, "create with info %s=%s", keyval[k][0], keyval[k][1]);
        expect_err(rc, k == 1 ? ISO_ERR_ALGORITHM : ISO_ERR_INFO, ANY, what);
        sane_run(z, what);
        MPI_Info_free(&info);
    }
    {
        /* Non-iso keys are ignored; valid iso keys accepted.  On its own
         * communicator so that iso keeps the default algorithm. */
        MPI_Info info;
        MPI_Comm ic = make_cart(1);
        MPI_Info_create(&info);
        MPI_Info_set(info, "foo_bar", "whatever");
        MPI_Info_set(info, "iso_algorithm", "direct");
        MPI_Info_set(info, "iso_combine", "datatype");
        MPI_Info_set(info, "iso_verify", "true");
        out = MPI_COMM_NULL;
        rc = Iso_neighborhood_create_with_info(ic, nb->s, nb->off, info, &out);
        CHECK(rc == MPI_SUCCESS && out == ic,
              "create with non-iso key foo_bar + valid iso keys: rc=%d", rc);
        if (rc == MPI_SUCCESS) {
            sane_t zi;
            sane_init(&zi, ic, nb);
            sane_run(&zi, "create with a non-iso info key");
            sane_free(&zi);
        }
        MPI_Info_free(&info);
        MPI_Comm_free(&ic);
    }
    tap_result(MPI_COMM_WORLD, "Iso_neighborhood_create: bad communicator, s, arrays, info");

    /* Queries and translation functions. */
    {
        int qs, qi, qo, arr[4 * MAXS], arr2[4 * MAXS], rel[2] = {1, 0}, r;
        rc = Iso_neighborhood_count(MPI_COMM_WORLD, &qs, &qi, &qo);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Iso_neighborhood_count(MPI_COMM_WORLD)");
        rc = Iso_neighborhood_count(graph, &qs, &qi, &qo);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Iso_neighborhood_count(dist graph)");
        rc = Iso_neighborhood_count(MPI_COMM_NULL, &qs, &qi, &qo);
        expect_err(rc, ISO_ERR_NOT_CART, ISO_ERR_ARG, "Iso_neighborhood_count(MPI_COMM_NULL)");
        rc = Iso_neighborhood_count(fresh, &qs, &qi, &qo);
        expect_err(rc, ISO_ERR_NO_NEIGHBORHOOD, ANY, "Iso_neighborhood_count(fresh cart)");
        rc = Iso_neighborhood_count(iso, NULL, &qi, &qo);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_count(s = NULL)");
        rc = Iso_neighborhood_count(iso, &qs, NULL, &qo);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_count(indegree = NULL)");
        rc = Iso_neighborhood_get(iso, -1, arr, arr2);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_get(max_s = -1)");
        rc = Iso_neighborhood_get(iso, nb->s, NULL, arr2);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_get(sources = NULL)");
        rc = Iso_neighborhood_graph_get(iso, nb->s, arr, NULL);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_graph_get(destinations = NULL)");
        rc = Iso_neighborhood_get(fresh, nb->s, arr, arr2);
        expect_err(rc, ISO_ERR_NO_NEIGHBORHOOD, ANY, "Iso_neighborhood_get(fresh cart)");
        rc = Cart_relative_rank(MPI_COMM_WORLD, rel, &r);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Cart_relative_rank(MPI_COMM_WORLD)");
        rc = Cart_relative_rank(iso, rel, NULL);
        expect_err(rc, ISO_ERR_ARG, ANY, "Cart_relative_rank(rank = NULL)");
        rc = Cart_relative_rank(iso, NULL, &r);
        expect_err(rc, ISO_ERR_ARG, ANY, "Cart_relative_rank(relative = NULL)");
        rc = Cart_relative_coord(graph, 0, rel);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Cart_relative_coord(dist graph)");
        rc = Cart_relative_shift(iso, rel, NULL, &r);
        expect_err(rc, ISO_ERR_ARG, ANY, "Cart_relative_shift(source = NULL)");
        rc = Cart_neighborhood_count(MPI_COMM_WORLD, &qs, &qi, &qo);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Cart_neighborhood_count(MPI_COMM_WORLD)");
        rc = Iso_neighborhood_free(NULL);
        expect_err(rc, ISO_ERR_ARG, ANY, "Iso_neighborhood_free(NULL)");
        MPI_Comm tmp = fresh;
        rc = Iso_neighborhood_free(&tmp);
        expect_err(rc, ISO_ERR_NO_NEIGHBORHOOD, ANY, "Iso_neighborhood_free(fresh cart)");
        tmp = MPI_COMM_WORLD;
        rc = Iso_neighborhood_free(&tmp);
        expect_err(rc, ISO_ERR_NOT_CART, ANY, "Iso_neighborhood_free(MPI_COMM_WORLD)");
        /* The good isocomm still answers. */
        qs = qi = qo = -1;
        rc = Iso_neighborhood_count(iso, &qs, &qi, &qo);
        CHECK(rc == MPI_SUCCESS && qs == nb->s, "Iso_neighborhood_count after errors: rc=%d s=%d",
              rc, qs);
        sane_run(z, "query errors");
        tap_result(MPI_COMM_WORLD, "queries and Cart_relative_*: bad communicator, NULL outputs");
    }
    MPI_Comm_free(&graph);
    MPI_Comm_free(&fresh);
}

/* Non-isomorphic neighborhoods: one rank deviates, every rank must see
 * ISO_ERR_NOT_ISOMORPHIC; the communicator gets no neighborhood and a
 * correct create afterwards works. */
static void test_isomorphism(const nbh_t *nb)
{
    if (nprocs < 2) {
        tap_skip(MPI_COMM_WORLD, "needs 2 ranks", "non-isomorphic neighborhoods");
        return;
    }
    const char *env = getenv("ISO_VERIFY");
    int env_on = env && (!strcmp(env, "1") || !strcmp(env, "true"));
    enum { CHANGED, PERMUTED, LONGER, ENV, OFF, NCASES };
    static const char *const cname[] = {
        "rank 0 changes one offset, info iso_verify=true",
        "last rank permutes the order, info iso_verify=true",
        "rank 0 passes s+1 offsets, info iso_verify=true",
        "rank 0 changes one offset, MPI_INFO_NULL + ISO_VERIFY env",
        "rank 0 changes one offset, info iso_verify=false: accepted",
    };
    for (int k = 0; k < NCASES; k++) {
        if (k == ENV && !env_on) {
            tap_skip(MPI_COMM_WORLD, "ISO_VERIFY not set", "non-isomorphic: %s", cname[k]);
            continue;
        }
        MPI_Comm cart = make_cart(1), out = MPI_COMM_NULL;
        nbh_t my = {nb->d, 0, NULL};
        for (int i = 0; i < nb->s; i++)
            nbh_push(&my, nb->off + (size_t)i * nb->d);
        int deviant = k == PERMUTED ? nprocs - 1 : 0;
        if (rank == deviant) {
            if (k == PERMUTED) {
                for (int j = 0; j < nb->d; j++) {
                    int t = my.off[j];
                    my.off[j] = my.off[nb->d + j];
                    my.off[nb->d + j] = t;
                }
            } else if (k == LONGER) {
                int extra[2] = {2, 2};
                nbh_push(&my, extra);
            } else {
                my.off[0] += 5;
            }
        }
        MPI_Info info = MPI_INFO_NULL;
        if (k != ENV) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "iso_verify", k == OFF ? "false" : "true");
        }
        int rc = Iso_neighborhood_create_with_info(cart, my.s, my.off, info, &out);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        if (k == OFF) {
            CHECK(rc == MPI_SUCCESS, "iso_verify=false: mismatch must not be checked, rc=%d", rc);
            if (rc == MPI_SUCCESS) {
                rc = Iso_neighborhood_free(&out);
                CHECK(rc == MPI_SUCCESS && out == MPI_COMM_NULL, "Iso_neighborhood_free rc=%d",
                      rc);
            }
        } else {
            expect_err(rc, ISO_ERR_NOT_ISOMORPHIC, ANY, cname[k]);
            int qs, qi, qo;
            rc = Iso_neighborhood_count(cart, &qs, &qi, &qo);
            expect_err(rc, ISO_ERR_NO_NEIGHBORHOOD, ANY,
                       "Iso_neighborhood_count after a failed create on a fresh cart");
        }
        /* A correct create and collective afterwards. */
        rc = Iso_neighborhood_create(cart, nb->s, nb->off, &out);
        CHECK(rc == MPI_SUCCESS, "correct create after %s: rc=%d", cname[k], rc);
        if (rc == MPI_SUCCESS) {
            sane_t z;
            sane_init(&z, cart, nb);
            sane_run(&z, cname[k]);
            sane_free(&z);
        }
        nbh_free(&my);
        MPI_Comm_free(&cart);
        tap_result(MPI_COMM_WORLD, "non-isomorphic: %s", cname[k]);
    }
}

/* Processes that disagree on the algorithm or on the combining mode would
 * exchange messages that do not match: with verification every rank gets
 * ISO_ERR_ALGORITHM, and the communicator stays usable. */
static void test_disagreement(const nbh_t *nb)
{
    static const char *const kv[2][3] = {{"iso_algorithm", "direct", "bruck"},
                                         {"iso_combine", "pack", "datatype"}};
    if (nprocs < 2) {
        tap_skip(MPI_COMM_WORLD, "needs 2 ranks", "processes disagree on algorithm / combining");
        return;
    }
    for (int k = 0; k < 2; k++) {
        MPI_Comm cart = make_cart(1), out = MPI_COMM_NULL;
        MPI_Info info;
        char desc[128];
        int rc;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_verify", "true");
        MPI_Info_set(info, kv[k][0], kv[k][rank == nprocs - 1 ? 2 : 1]);
        rc = Iso_neighborhood_create_with_info(cart, nb->s, nb->off, info, &out);
        MPI_Info_free(&info);
        snprintf(desc, sizeof desc, "last rank %s=%s, others %s", kv[k][0], kv[k][2], kv[k][1]);
        expect_err(rc, ISO_ERR_ALGORITHM, ANY, desc);
        rc = Iso_neighborhood_create(cart, nb->s, nb->off, &out);
        CHECK(rc == MPI_SUCCESS, "correct create after %s: rc=%d", desc, rc);
        if (rc == MPI_SUCCESS) {
            sane_t z;
            sane_init(&z, cart, nb);
            sane_run(&z, desc);
            sane_free(&z);
        }
        MPI_Comm_free(&cart);
        tap_result(MPI_COMM_WORLD, "processes disagree: %s", desc);
    }
}

/* A persistent v/w init is collective (the processes agree on a block size
 * for auto): a bad argument on one process only must give every process
 * the error, and none may hang. */
static void test_one_rank_bad_init(MPI_Comm iso, sane_t *z)
{
    int s = z->nb.s, *counts = malloc(sizeof(int) * (size_t)(s + 1));
    int *displs = malloc(sizeof(int) * (size_t)(s + 1)), *buf = calloc((size_t)s + 1, sizeof(int));
    int *rbuf = calloc((size_t)s + 1, sizeof(int)); /* not buf: that would be aliasing */
    Iso_request req = ISO_REQUEST_NULL;
    int rc;
    for (int i = 0; i < s; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    if (rank == nprocs - 1 && s > 0)
        counts[0] = -1;
    rc = Iso_neighbor_alltoallv_init(buf, counts, displs, MPI_INT, rbuf, counts, displs, MPI_INT,
                                     iso, MPI_INFO_NULL, &req);
    expect_err(rc, s > 0 ? ISO_ERR_COUNT : ISO_ERR_NONE, ANY,
               "Iso_neighbor_alltoallv_init, sendcounts[0] = -1 on the last rank only");
    CHECK(req == ISO_REQUEST_NULL, "request set after a failed init");
    sane_run(z, "a failed alltoallv_init");
    free(counts);
    free(displs);
    free(buf);
    free(rbuf);
    tap_result(MPI_COMM_WORLD, "persistent v/w init with a bad count on one rank: every rank "
               "gets ISO_ERR_COUNT");
}

static void test_collective_errors(MPI_Comm iso, sane_t *z)
{
    MPI_Comm graph = make_graph(), fresh = make_cart(1), freed = make_cart(1), freed_handle;
    {
        nbh_t nb = nbh_moore(2, 1);
        int rc = Iso_neighborhood_create(freed, nb.s, nb.off, &freed_handle);
        CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
        rc = Iso_neighborhood_free(&freed_handle);
        CHECK(rc == MPI_SUCCESS && freed_handle == MPI_COMM_NULL, "free rc=%d", rc);
        nbh_free(&nb);
    }
    for (int mode = BLOCKING; mode <= PERSISTENT; mode++) {
        for (int f = 0; f < NFORMS; f++) {
            args_t a = good_args();
            bad(f, mode, MPI_COMM_WORLD, &a, ISO_ERR_NOT_CART, ANY, "MPI_COMM_WORLD", NULL);
            /* the alltoall forms run on graph communicators (t_graph) */
            if (f != A2A && f != A2AV && f != A2AW)
                bad(f, mode, graph, &a, ISO_ERR_NOT_CART, ANY, "dist-graph comm", NULL);
            bad(f, mode, MPI_COMM_NULL, &a, ISO_ERR_NOT_CART, ISO_ERR_ARG, "MPI_COMM_NULL", NULL);
            bad(f, mode, fresh, &a, ISO_ERR_NO_NEIGHBORHOOD, ANY, "cart comm without neighborhood",
                NULL);
            bad(f, mode, freed, &a, ISO_ERR_NO_NEIGHBORHOOD, ANY,
                "cart comm after Iso_neighborhood_free", NULL);
        }
        sane_run(z, "bad communicators");
        tap_result(MPI_COMM_WORLD,
                   "Iso_%sneighbor_*%s on WORLD, dist graph, MPI_COMM_NULL, no neighborhood",
                   mode == NONBLOCKING ? "i" : "", mode == PERSISTENT ? "_init" : "");
    }
    for (int mode = BLOCKING; mode <= PERSISTENT; mode++) {
        for (int f = 0; f < NFORMS; f++) {
            bad_args(f, mode, iso, z);
            if (!sanity_every_error)
                sane_run(z, fname[f]);
        }
        tap_result(MPI_COMM_WORLD,
                   "Iso_%sneighbor_*%s: negative counts, MPI_DATATYPE_NULL, MPI_OP_NULL, NULL "
                   "arrays, MPI_IN_PLACE%s",
                   mode == NONBLOCKING ? "i" : "", mode == PERSISTENT ? "_init" : "",
                   mode == BLOCKING ? "" : ", NULL request");
    }
    MPI_Comm_free(&graph);
    MPI_Comm_free(&fresh);
    MPI_Comm_free(&freed);
}

static void test_request_misuse(MPI_Comm iso, sane_t *z)
{
    int rc, flag = 0;
    Iso_request r = ISO_REQUEST_NULL, arr[2] = {ISO_REQUEST_NULL, ISO_REQUEST_NULL};
    size_t n = (size_t)z->nb.s * 2 + 1;

    rc = Iso_start(NULL);
    expect_err(rc, ISO_ERR_REQUEST, ISO_ERR_ARG, "Iso_start(NULL)");
    rc = Iso_start(&r);
    expect_err(rc, ISO_ERR_REQUEST, ANY, "Iso_start(&ISO_REQUEST_NULL)");
    rc = Iso_wait(NULL);
    expect_err(rc, ISO_ERR_REQUEST, ISO_ERR_ARG, "Iso_wait(NULL)");
    rc = Iso_test(NULL, &flag);
    expect_err(rc, ISO_ERR_REQUEST, ISO_ERR_ARG, "Iso_test(NULL, &flag)");
    rc = Iso_request_free(NULL);
    expect_err(rc, ISO_ERR_REQUEST, ISO_ERR_ARG, "Iso_request_free(NULL)");
    rc = Iso_request_free(&r);
    expect_err(rc, ISO_ERR_REQUEST, ISO_ERR_ARG, "Iso_request_free(&ISO_REQUEST_NULL)");
    rc = Iso_waitall(-1, arr);
    expect_err(rc, ISO_ERR_ARG, ISO_ERR_REQUEST, "Iso_waitall(-1, ...)");
    rc = Iso_waitall(2, NULL);
    expect_err(rc, ISO_ERR_ARG, ISO_ERR_REQUEST, "Iso_waitall(2, NULL)");
    sane_run(z, "request errors without a request");

    /* An active nonblocking request. */
    for (size_t j = 0; j < n; j++)
        z->rb[j] = -1;
    rc = Iso_ineighbor_alltoall(z->sb, 2, MPI_INT, z->rb, 2, MPI_INT, iso, &r);
    CHECK(rc == MPI_SUCCESS && r != ISO_REQUEST_NULL, "Iso_ineighbor_alltoall rc=%d", rc);
    Iso_request keep = r;
    rc = Iso_start(&r);
    expect_err(rc, ISO_ERR_REQUEST, ANY, "Iso_start of a nonblocking request");
    rc = Iso_request_free(&r);
    expect_err(rc, ISO_ERR_REQUEST, ANY, "Iso_request_free of an active nonblocking request");
    rc = Iso_test(&r, NULL);
    expect_err(rc, ISO_ERR_ARG, ISO_ERR_REQUEST, "Iso_test with flag NULL");
    CHECK(r == keep, "request handle changed by a failed call");
    rc = Iso_wait(&r);
    CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "Iso_wait after misuse: rc=%d", rc);
    CHECK(memcmp(z->rb, z->want, n * sizeof(int)) == 0, "nonblocking alltoall after misuse: wrong data");
    tap_result(MPI_COMM_WORLD, "request misuse: NULL, ISO_REQUEST_NULL, active nonblocking, n<0");

    /* An active persistent request. */
    rc = Iso_neighbor_alltoall_init(z->sb, 2, MPI_INT, z->rb, 2, MPI_INT, iso, MPI_INFO_NULL, &r);
    CHECK(rc == MPI_SUCCESS && r != ISO_REQUEST_NULL, "Iso_neighbor_alltoall_init rc=%d", rc);
    for (int round = 0; round < 2 && rc == MPI_SUCCESS; round++) {
        for (size_t j = 0; j < n; j++)
            z->rb[j] = -1;
        rc = Iso_start(&r);
        CHECK(rc == MPI_SUCCESS, "Iso_start rc=%d", rc);
        rc = Iso_start(&r);
        expect_err(rc, ISO_ERR_REQUEST, ANY, "Iso_start of an active persistent request");
        rc = Iso_request_free(&r);
        expect_err(rc, ISO_ERR_REQUEST, ANY, "Iso_request_free of an active persistent request");
        CHECK(r != ISO_REQUEST_NULL, "failed Iso_request_free cleared the handle");
        rc = Iso_test(&r, NULL);
        expect_err(rc, ISO_ERR_ARG, ISO_ERR_REQUEST, "Iso_test(persistent, NULL flag)");
        rc = Iso_wait(&r);
        CHECK(rc == MPI_SUCCESS && r != ISO_REQUEST_NULL, "Iso_wait persistent rc=%d", rc);
        CHECK(memcmp(z->rb, z->want, n * sizeof(int)) == 0,
              "persistent alltoall after misuse (round %d): wrong data", round);
    }
    rc = Iso_request_free(&r);
    CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "Iso_request_free inactive rc=%d", rc);
    sane_run(z, "persistent request misuse");
    tap_result(MPI_COMM_WORLD,
               "request misuse: double Iso_start, Iso_request_free of active persistent request");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    sanity_every_error = nprocs <= 2; /* else after each batch: keeps runs short */

    nbh_t nb = nbh_moore(2, 1); /* on a torus: every neighbor exists */
    for (int i = 0; i < MAXS; i++) {
        g_counts[i] = 2, g_negcounts[i] = i == 1 ? -1 : 2;
        g_idispl[i] = 2 * i, g_adispl[i] = (MPI_Aint)(2 * i * (int)sizeof(int));
        g_types[i] = MPI_INT, g_nulltypes[i] = i == 1 ? MPI_DATATYPE_NULL : MPI_INT;
    }
    for (int j = 0; j < 4 * MAXS; j++)
        g_sb[j] = j;

    test_error_table();

    MPI_Comm cart = make_cart(1), iso = MPI_COMM_NULL;
    int rc = Iso_neighborhood_create(cart, nb.s, nb.off, &iso);
    CHECK(rc == MPI_SUCCESS && iso == cart, "Iso_neighborhood_create rc=%d", rc);
    sane_t z;
    sane_init(&z, iso, &nb);
    sane_run(&z, "nothing");
    tap_result(MPI_COMM_WORLD, "setup: Moore r1 on a 2d torus, correct alltoall");

    test_create_errors(iso, &nb, &z);
    test_isomorphism(&nb);
    test_disagreement(&nb);
    test_collective_errors(iso, &z);
    test_one_rank_bad_init(iso, &z);
    test_request_misuse(iso, &z);

    sane_free(&z);
    nbh_free(&nb);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
