/* Bad inputs to Iso_alltoall_crs and Iso_alltoallv_crs, with
 * MPI_ERRORS_RETURN on every communicator involved: each must return a code
 * of its library error class (Iso_error_class, MPI_Error_class and the
 * error string agree), leave the outputs 0 and NULL, and hang nothing (the
 * harness has a timeout); a correct call on the same communicator works
 * afterwards.  Argument errors are tried with iso_verify on and off (every
 * process passes the same bad argument), and with verification where only
 * one process is wrong: every process must then fail.  Sizes that do not
 * fit the receive type are found by the receiver after the exchange, for
 * every algorithm.  iso_sparse_algorithm has one vocabulary: a graph
 * communicator's word (direct) or an unknown one is ISO_ERR_ALGORITHM
 * naming the context and its words.  vpt with a NULL send buffer and
 * nonzero counts is MPI_ERR_BUFFER on every process (it used to crash).
 *
 * PER-ALGORITHM: no (the checks come before any algorithm runs; the size
 * errors are tried with each sparse algorithm here)
 * NPROCS: 1 2 4
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

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

static int rank, nprocs;

static void expect_err(int rc, Iso_error want, const char *desc)
{
    Iso_error got = ISO_ERR_LASTCODE;
    char str[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0, cls = -1;
    if (rc == MPI_SUCCESS) {
        CHECK(0, "%s: returned MPI_SUCCESS, expected ISO_ERR_%s", desc, err_name[want]);
        return;
    }
    Iso_error_class(rc, &got);
    if (got <= ISO_ERR_NONE || got >= ISO_ERR_LASTCODE) {
        CHECK(0, "%s: rc=%d is no library error (expected ISO_ERR_%s)", desc, rc, err_name[want]);
        return;
    }
    MPI_Error_string(rc, str, &len);
    MPI_Error_class(rc, &cls);
    CHECK(got == want, "%s: ISO_ERR_%s (\"%s\"), expected ISO_ERR_%s", desc, err_name[got], str,
          err_name[want]);
    CHECK_EQ_INT(cls, Iso_error_mpi_class(got), "%s: MPI_Error_class", desc);
    CHECK(strstr(str, err_msg[got]) != NULL, "%s: error string \"%s\"", desc, str);
}

/* ---- one call with every argument open to corruption ------------------------- */
typedef struct {
    int v; /* Alltoallv_crs */
    int n;
    const int *dest, *counts, *displs;
    int count, recvcount;
    MPI_Datatype stype, rtype;
    const void *sendvals;
    int *recv_nnz, **src, **rcounts, **rdispls;
    void **rvals;
    MPI_Info info;
    MPI_Comm comm;
} call_t;

static int nprocs_of(MPI_Comm comm)
{
    int p;
    MPI_Comm_size(comm, &p);
    return p;
}

static int out_nnz, *out_src, *out_counts, *out_displs;
static void *out_vals;
static int g_dest[64], g_counts[64], g_displs[64], g_vals[64 * 4];

/* A correct call: to every rank, 2 ints each. */
static call_t good(int v, MPI_Comm comm, MPI_Info info)
{
    int p;
    MPI_Comm_size(comm, &p);
    for (int r = 0; r < p; r++) {
        g_dest[r] = (r + rank) % p;
        g_counts[r] = 2;
        g_displs[r] = 2 * r;
        g_vals[2 * r] = g_vals[2 * r + 1] = rank;
    }
    return (call_t){v, p, g_dest, g_counts, g_displs, 2, 2, MPI_INT, MPI_INT, g_vals,
                    &out_nnz, &out_src, &out_counts, &out_displs, &out_vals, info, comm};
}

static int call(const call_t *c)
{
    out_nnz = -7;
    out_src = out_counts = out_displs = (int *)&out_nnz; /* must become NULL */
    out_vals = &out_nnz;
    if (c->v)
        return Iso_alltoallv_crs(c->n, c->dest, c->counts, c->displs, c->stype, c->sendvals,
                                 c->recv_nnz, c->src, c->rcounts, c->rdispls, c->rtype, c->rvals,
                                 c->info, c->comm);
    return Iso_alltoall_crs(c->n, c->dest, c->count, c->stype, c->sendvals, c->recv_nnz, c->src,
                            c->recvcount, c->rtype, c->rvals, c->info, c->comm);
}

/* The outputs the call was given are 0 and NULL. */
static void outputs_cleared(const call_t *c, const char *desc)
{
    CHECK(c->recv_nnz == NULL || out_nnz == 0, "%s: recv_nnz not 0 after the error", desc);
    CHECK(c->src == NULL || out_src == NULL, "%s: src not NULL after the error", desc);
    CHECK(c->rvals == NULL || out_vals == NULL, "%s: recvvals not NULL after the error", desc);
    if (c->v) {
        CHECK(c->rcounts == NULL || out_counts == NULL, "%s: recvcounts not NULL", desc);
        CHECK(c->rdispls == NULL || out_displs == NULL, "%s: rdispls not NULL", desc);
    }
}

/* The call must fail with `want`; then a correct call on the same comm
 * with info ok_info. */
static void bad_then(const call_t *c, MPI_Info ok_info, Iso_error want, const char *what)
{
    char desc[160];
    call_t ok;
    int rc;
    snprintf(desc, sizeof desc, "%s %s", c->v ? "alltoallv_crs" : "alltoall_crs", what);
    expect_err(call(c), want, desc);
    outputs_cleared(c, desc);
    ok = good(c->v, c->comm, ok_info); /* after: c may point into the same arrays */
    rc = call(&ok);
    CHECK(rc == MPI_SUCCESS, "%s: correct call afterwards rc=%d", desc, rc);
    if (rc == MPI_SUCCESS) {
        CHECK_EQ_INT(out_nnz, nprocs_of(c->comm), "%s: correct call afterwards", desc);
        free(out_src), free(out_vals);
        if (c->v)
            free(out_counts), free(out_displs);
    }
}

static void bad(const call_t *c, Iso_error want, const char *what)
{
    bad_then(c, c->info, want, what);
}

/* The call c with key=value added to a copy of its info must fail with want. */
static void bad_info(call_t *c, const char *key, const char *value, Iso_error want,
                     const char *what)
{
    MPI_Info info, saved = c->info;
    if (saved == MPI_INFO_NULL)
        MPI_Info_create(&info);
    else
        MPI_Info_dup(saved, &info);
    MPI_Info_set(info, key, value);
    c->info = info;
    bad_then(c, saved, want, what);
    c->info = saved;
    MPI_Info_free(&info);
}

/* ---- argument errors, every process alike ------------------------------------ */
static void argument_errors(MPI_Comm comm, MPI_Info info, const char *mode)
{
    MPI_Datatype uncommitted, negative_lb, empty;
    int dest_bad[2] = {0, 0}, neg[64];
    char what[128];
    MPI_Type_contiguous(2, MPI_INT, &uncommitted);
    {
        MPI_Aint before = -4; /* an int 4 bytes before the element's start */
        MPI_Type_create_hindexed_block(1, 1, &before, MPI_INT, &negative_lb);
    }
    MPI_Type_commit(&negative_lb);
    MPI_Type_contiguous(0, MPI_INT, &empty);
    MPI_Type_commit(&empty);
    for (int r = 0; r < 64; r++)
        neg[r] = r == nprocs - 1 ? -1 : 1;
    for (int v = 0; v <= 1; v++) {
        call_t c;
#define BAD(field_change, want, text)                                                             \
    do {                                                                                          \
        c = good(v, comm, info);                                                                  \
        field_change;                                                                             \
        snprintf(what, sizeof what, "%s (%s)", text, mode);                                       \
        bad(&c, want, what);                                                                      \
    } while (0)
        BAD(c.n = -1, ISO_ERR_COUNT, "negative send_nnz");
        BAD(c.dest = NULL, ISO_ERR_ARG, "NULL dest");
        BAD(c.recv_nnz = NULL, ISO_ERR_ARG, "NULL recv_nnz");
        BAD(c.src = NULL, ISO_ERR_ARG, "NULL src");
        BAD(c.rvals = NULL, ISO_ERR_ARG, "NULL recvvals");
        BAD(g_dest[0] = nprocs, ISO_ERR_ARG, "destination = size");
        BAD(g_dest[0] = -1, ISO_ERR_ARG, "destination -1");
        BAD((c.n = 2, c.dest = dest_bad), ISO_ERR_ARG, "repeated destination");
        BAD(c.stype = MPI_DATATYPE_NULL, ISO_ERR_TYPE, "sendtype MPI_DATATYPE_NULL");
        BAD(c.rtype = MPI_DATATYPE_NULL, ISO_ERR_TYPE, "recvtype MPI_DATATYPE_NULL");
        BAD((c.stype = uncommitted, c.count = 1), ISO_ERR_TYPE, "uncommitted sendtype");
        BAD((c.rtype = uncommitted, c.recvcount = 1), ISO_ERR_TYPE, "uncommitted recvtype");
        BAD(c.rtype = negative_lb, ISO_ERR_TYPE, "recvtype with data before its start");
        c = good(v, comm, info);
        snprintf(what, sizeof what, "unknown algorithm (%s)", mode);
        bad_info(&c, "iso_sparse_algorithm", "bogus", ISO_ERR_ALGORITHM, what);
        snprintf(what, sizeof what, "unknown iso_ info key (%s)", mode);
        bad_info(&c, "iso_colour", "red", ISO_ERR_INFO, what);
        if (v) {
            BAD(c.counts = NULL, ISO_ERR_ARG, "NULL sendcounts");
            BAD(c.displs = NULL, ISO_ERR_ARG, "NULL sdispls");
            BAD(c.rcounts = NULL, ISO_ERR_ARG, "NULL recvcounts");
            BAD(c.rdispls = NULL, ISO_ERR_ARG, "NULL rdispls");
            BAD(c.counts = neg, ISO_ERR_COUNT, "negative sendcounts[i]");
            BAD(c.rtype = empty, ISO_ERR_TYPE, "recvtype of size 0");
            c = good(v, comm, info);
            snprintf(what, sizeof what, "rma with variable sizes (%s)", mode);
            bad_info(&c, "iso_sparse_algorithm", "rma", ISO_ERR_ALGORITHM, what);
            BAD(g_counts[0] = INT_MAX / 4, ISO_ERR_COUNT, "message of 2 GiB");
        } else {
            BAD(c.count = -1, ISO_ERR_COUNT, "negative sendcount");
            BAD(c.recvcount = -1, ISO_ERR_COUNT, "negative recvcount");
            BAD(c.count = INT_MAX / 4, ISO_ERR_COUNT, "messages of 2 GiB");
        }
#undef BAD
    }
    MPI_Type_free(&uncommitted);
    MPI_Type_free(&negative_lb);
    MPI_Type_free(&empty);
}

/* ---- errors found after the exchange, by the receiver ------------------------- */
static void size_errors(MPI_Comm comm, MPI_Info info, const char *alg)
{
    char what[128];
    call_t c;
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    if (strcmp(alg, "rma")) { /* 3 bytes to every rank, received as ints */
        c = good(1, comm, info);
        c.stype = MPI_BYTE;
        for (int r = 0; r < c.n; r++)
            g_counts[r] = 3;
        snprintf(what, sizeof what, "%s: 3 bytes received as MPI_INT", alg);
        bad(&c, ISO_ERR_COUNT, what);
    }
    c = good(0, comm, info); /* 2 ints to every rank, 3 expected */
    c.recvcount = 3;
    snprintf(what, sizeof what, "%s: 2 ints for recvcount 3", alg);
    bad(&c, ISO_ERR_COUNT, what);
    MPI_Info_delete(info, "iso_sparse_algorithm");
}

/* ---- one process wrong, verification on: every process fails ------------------ */
static void spread_errors(MPI_Comm comm, MPI_Info info)
{
    call_t c = good(1, comm, info);
    int rc, last = nprocs - 1;
    char what[128];
    if (rank == last)
        g_counts[0] = -1;
    rc = call(&c);
    snprintf(what, sizeof what, "negative count on rank %d only", last);
    CHECK(rc != MPI_SUCCESS, "%s: rank %d returned MPI_SUCCESS", what, rank);
    expect_err(rc, ISO_ERR_COUNT, what);
    /* different algorithms on different processes */
    c = good(0, comm, info);
    MPI_Info_set(info, "iso_sparse_algorithm", rank == last ? "nbx" : "personalized");
    if (nprocs > 1)
        expect_err(call(&c), ISO_ERR_ALGORITHM, "algorithms differ between processes");
    /* vpt everywhere, but VPT shapes that differ (one process direct, T_1):
     * without the check the others would wait for it in the VPT's plan */
    c = good(0, comm, info);
    MPI_Info_set(info, "iso_sparse_algorithm", "vpt");
    MPI_Info_set(info, "iso_vpt_n", rank == last ? "1" : "2");
    if (nprocs > 1)
        expect_err(call(&c), ISO_ERR_ALGORITHM, "VPT shapes differ between processes");
    MPI_Info_delete(info, "iso_vpt_n");
    MPI_Info_delete(info, "iso_sparse_algorithm");
    c = good(0, comm, info);
    rc = call(&c);
    CHECK(rc == MPI_SUCCESS, "correct call after spread errors: rc=%d", rc);
    if (rc == MPI_SUCCESS)
        free(out_src), free(out_vals);
}

/* ---- communicators and the environment ----------------------------------------- */
static void comm_errors(MPI_Info info)
{
    call_t c = good(0, MPI_COMM_WORLD, info);
    c.comm = MPI_COMM_NULL;
    expect_err(call(&c), ISO_ERR_ARG, "MPI_COMM_NULL (raised on MPI_COMM_WORLD)");
#ifdef ISO_SMPI_COMPAT
    if (nprocs >= 2 && rank == 0)
        printf("# intercommunicator case left out: SimGrid's SMPI 3.32 has no "
               "MPI_Intercomm_create\n");
#else
    if (nprocs >= 2) {
        MPI_Comm half, inter;
        MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &half);
        MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - rank % 2, 99, &inter);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        c = good(0, MPI_COMM_WORLD, info);
        c.n = 1;
        c.comm = inter;
        expect_err(call(&c), ISO_ERR_ARG, "intercommunicator");
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
#endif
}

static void env_errors(void)
{
    static const char *const maps[] = {"0,,1", "a", "1,2,", "-1", "0 1", "99999999999",
                                       "0.1.2.3", "0..1", "0.", ".1", "1.-1", "0.1,"};
    char what[64 * 4 + 32];
    /* a map entry for every world rank, one of them malformed, or wrong counts */
    for (size_t k = 0; k < sizeof maps / sizeof maps[0] + 2; k++) {
        MPI_Comm comm;
        call_t c;
        char map[64 * 4] = "";
        if (k < sizeof maps / sizeof maps[0]) {
            snprintf(map, sizeof map, "%s", maps[k]);
            for (int r = 1; r < nprocs; r++) /* entries for the other ranks */
                strcat(map, ",0");
        } else { /* one entry too few, one too many */
            int n = nprocs + (k == sizeof maps / sizeof maps[0] ? -1 : 1);
            for (int r = 0; r < n; r++)
                strcat(map, r ? ",0" : "0");
            if (n == 0)
                strcpy(map, ",");
        }
        setenv("ISO_NODE_MAP", map, 1);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
        MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
        c = good(0, comm, MPI_INFO_NULL);
        snprintf(what, sizeof what, "ISO_NODE_MAP=\"%s\"", map);
        expect_err(call(&c), ISO_ERR_INFO, what);
        MPI_Comm_free(&comm);
    }
    unsetenv("ISO_NODE_MAP");
    {
        call_t c = good(0, MPI_COMM_WORLD, MPI_INFO_NULL);
        setenv("ISO_SPARSE_ALGORITHM", "fastest", 1);
        expect_err(call(&c), ISO_ERR_ALGORITHM, "ISO_SPARSE_ALGORITHM=fastest");
        unsetenv("ISO_SPARSE_ALGORITHM");
    }
    { /* the message names the variable and the value */
        static const char *const bad[][2] = {{"ISO_SPARSE_ALGORITHM", "fastest"},
                                             {"ISO_VPT_N", "two"},
                                             {"ISO_VPT_LOCALITY", "rack"},
                                             {"ISO_LOCALITY", "socket"},
                                             {"ISO_VERIFY", "perhaps"}};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            call_t c = good(0, MPI_COMM_WORLD, MPI_INFO_NULL);
            char str[MPI_MAX_ERROR_STRING + 1] = "";
            int len = 0, rc;
            setenv(bad[k][0], bad[k][1], 1);
            if (k > 0) /* the vpt keys are read where vpt may run */
                setenv("ISO_SPARSE_ALGORITHM", "vpt", 1);
            rc = call(&c);
            unsetenv(bad[k][0]);
            unsetenv("ISO_SPARSE_ALGORITHM");
            CHECK(rc != MPI_SUCCESS, "%s=%s: an error", bad[k][0], bad[k][1]);
            if (rc != MPI_SUCCESS)
                MPI_Error_string(rc, str, &len);
            CHECK(tap_text_has(str, bad[k][0]) && tap_text_has(str, bad[k][1]),
                  "%s=%s: the message names both: \"%s\"", bad[k][0], bad[k][1], str);
        }
    }
    {
        MPI_Info info;
        call_t c;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_verify", "maybe");
        c = good(0, MPI_COMM_WORLD, info);
        expect_err(call(&c), ISO_ERR_INFO, "iso_verify=maybe");
        MPI_Info_free(&info);
    }
    { /* iso_locality: the message names the key, the value and the levels */
        static const char *const bad[] = {"socket", "node ", "l3", "node,package"};
        for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
            MPI_Info info;
            call_t c;
            char str[MPI_MAX_ERROR_STRING + 1] = "", desc[64];
            int len = 0, rc;
            MPI_Info_create(&info);
            MPI_Info_set(info, "iso_sparse_algorithm",
                         k % 2 ? "locality-nbx" : "locality-personalized");
            MPI_Info_set(info, "iso_locality", bad[k]);
            c = good(0, MPI_COMM_WORLD, info);
            snprintf(desc, sizeof desc, "info iso_locality=\"%s\"", bad[k]);
            rc = call(&c);
            expect_err(rc, ISO_ERR_INFO, desc);
            if (rc != MPI_SUCCESS)
                MPI_Error_string(rc, str, &len);
            CHECK(strstr(str, "iso_locality") && strstr(str, "node, package, numa, auto"),
                  "%s: the message names the key and the levels: \"%s\"", desc, str);
            MPI_Info_free(&info);
        }
    }
}

/* ---- one vocabulary; a NULL send buffer under vpt -------------------------------- */
static int says(int rc, const char *a, const char *b)
{
    char str[MPI_MAX_ERROR_STRING + 1] = "";
    int len = 0;
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, str, &len);
    return tap_text_has(str, a) && tap_text_has(str, b);
}

static void vocabulary_errors(void)
{
    static const char *const words[] = {"direct", "fastest"};
    for (size_t k = 0; k < sizeof words / sizeof words[0]; k++) {
        const char *want = k == 0 ? "is a distributed graph communicator algorithm" : "is unknown";
        MPI_Info info;
        call_t c;
        int rc;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_sparse_algorithm", words[k]);
        c = good(1, MPI_COMM_WORLD, info);
        rc = call(&c);
        expect_err(rc, ISO_ERR_ALGORITHM, words[k]);
        CHECK(says(rc, want, "for Iso_*_crs: auto, personalized, nbx"),
              "info %s: the message names the context and its words", words[k]);
        MPI_Info_free(&info);
        c = good(0, MPI_COMM_WORLD, MPI_INFO_NULL);
        setenv("ISO_SPARSE_ALGORITHM", words[k], 1);
        rc = call(&c);
        unsetenv("ISO_SPARSE_ALGORITHM");
        expect_err(rc, ISO_ERR_ALGORITHM, words[k]);
        CHECK(says(rc, want, "ISO_SPARSE_ALGORITHM"), "environment %s: named", words[k]);
    }
}

static void null_buffer(const char *alg)
{
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    MPI_Info_set(info, "iso_vpt_n", "2");
    for (int v = 0; v < 2; v++) {
        call_t c = good(v, MPI_COMM_WORLD, info);
        int rc, cls = MPI_SUCCESS;
        c.sendvals = NULL;
        rc = call(&c);
        MPI_Error_class(rc, &cls);
        CHECK_EQ_INT(cls, MPI_ERR_BUFFER, "Iso_alltoall%s_crs, %s, NULL sendvals", v ? "v" : "",
                     alg);
        outputs_cleared(&c, "NULL sendvals");
        c = good(v, MPI_COMM_WORLD, info);
        CHECK_EQ_INT(call(&c), MPI_SUCCESS, "a correct %s call afterwards", alg);
        free(out_src);
        free(out_vals);
        if (v) {
            free(out_counts);
            free(out_displs);
        }
    }
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    static const char *const algs[] = {"personalized", "nbx", "rma", "locality-personalized",
                                       "locality-nbx", "sharing", "auto"};
    MPI_Info on, off;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsetenv("ISO_SPARSE_ALGORITHM");
    unsetenv("ISO_NODE_MAP");
    if (nprocs > 64) {
        tap_skip(MPI_COMM_WORLD, "more than 64 ranks", "sparse errors");
        MPI_Finalize();
        return 0;
    }
    MPI_Info_create(&on);
    MPI_Info_set(on, "iso_verify", "true");
    MPI_Info_create(&off);
    MPI_Info_set(off, "iso_verify", "false");

    argument_errors(MPI_COMM_WORLD, on, "verify");
    tap_result(MPI_COMM_WORLD, "argument errors, every process alike, iso_verify=true");
    argument_errors(MPI_COMM_WORLD, off, "no verify");
    tap_result(MPI_COMM_WORLD, "argument errors, every process alike, iso_verify=false");
    for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++)
        size_errors(MPI_COMM_WORLD, off, algs[a]);
    tap_result(MPI_COMM_WORLD, "received sizes that do not fit recvtype, every algorithm");
    spread_errors(MPI_COMM_WORLD, on);
    tap_result(MPI_COMM_WORLD, "one process wrong, iso_verify=true: every process fails");
    comm_errors(on);
    tap_result(MPI_COMM_WORLD, "MPI_COMM_NULL and intercommunicators");
    env_errors();
    tap_result(MPI_COMM_WORLD, "malformed ISO_NODE_MAP, ISO_SPARSE_ALGORITHM, iso_verify");
    vocabulary_errors();
    tap_result(MPI_COMM_WORLD, "iso_sparse_algorithm: a graph word or an unknown one");
    null_buffer("vpt");
    tap_result(MPI_COMM_WORLD, "vpt: NULL sendvals is MPI_ERR_BUFFER on every process");
    null_buffer("sharing");
    tap_result(MPI_COMM_WORLD, "sharing: NULL sendvals is MPI_ERR_BUFFER on every process");

    MPI_Info_free(&on);
    MPI_Info_free(&off);
    MPI_Finalize();
    return 0;
}
