/* Runtime tuning of the SDDE's auto (iso_tune, ISO_TUNE, ISO_TUNE_TEST,
 * Iso_tune_info; sparse/tune.c on coll/tune.c's machinery).  Every call
 * is a fresh seeded pattern that every process generates alike (process
 * a sends to t when a hash of (a, t, call) says so, values a function of
 * (a, t, call, element)), so each process knows exactly what it must
 * receive: the oracle.  Blocking Iso_alltoallv_crs and Iso_alltoall_crs
 * under auto, every call checked:
 *   1. tuning on:2: every call correct while tuning and after; each
 *      form's shape is decided within 20 calls; the record is the same
 *      text on every process (gathered and compared), lists auto's pick
 *      first and nbx, rma for the constant form only, the locality-aware
 *      ones where the (pretended, ISO_NODE_MAP) layout has two regions of
 *      two or more processes, and names a winner among its candidates;
 *      after 64 calls of a decided shape with larger messages, a second
 *      shape (a larger size class) is tuned;
 *   2. a forced tie (ISO_TUNE_TEST=tie): auto's rule's pick (personalized
 *      at these sizes) wins; so it does when the first block of trials is
 *      timed slow (ISO_TUNE_TEST=cold, as an MPI library's warm-up): it
 *      runs last;
 *   3. a failing candidate (ISO_TUNE_TEST=fail:nbx): its trial calls run
 *      personalized and stay correct, it is marked failed and does not win;
 *   4. iso_tune=off (info, and ISO_TUNE=off): auto's rule: no shape made,
 *      a tuning shape not advanced; calls correct;
 *   5. bad values: info iso_tune, ISO_TUNE, ISO_TUNE_TEST=fail:bogus are
 *      ISO_ERR_INFO on every process (nothing hangs); with iso_verify,
 *      iso_tune differing between processes is ISO_ERR_ALGORITHM.
 * At one process there is one candidate: the shape is decided at once.
 *
 * NPROCS: 1 2 4 8
 * PER-ALGORITHM: no (tunes auto only)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"
#include "tune_record.h"

static int rank, size;

static unsigned mix(unsigned a, unsigned t, unsigned k)
{
    unsigned h = (a * 7919u + t * 104729u + k * 1299709u + 12345u) * 2654435761u;
    return h ^ (h >> 15);
}

/* Every process sends to the next (so that the largest message of every
 * call, the size class, is known: 4 x scale elements), and to others at
 * random. */
static int edge(int a, int t, int k)
{
    return t == (a + 1) % size || (mix((unsigned)a, (unsigned)t, (unsigned)k) >> 4) % 3 != 0;
}

/* Elements a sends t in call k: scale x (1 .. 4) (variable; 4 to the
 * next), scale (constant). */
static int count_of(int constant, int scale, int a, int t, int k)
{
    if (constant)
        return scale;
    if (t == (a + 1) % size)
        return 4 * scale;
    return scale * (1 + (int)(mix((unsigned)t, (unsigned)a, (unsigned)k) % 4));
}

static long long value(int a, int t, int k, int e)
{
    return 1000000000LL * (k % 1000) + 1000000LL * a + 1000LL * t + e;
}

/* One call of the form (constant: Iso_alltoall_crs) as call number k of
 * the pattern, checked against the oracle; returns the call's code. */
static int exchange(MPI_Comm comm, int constant, int scale, int k, MPI_Info info)
{
    int n = 0, *dest = malloc(sizeof(int) * (size_t)size), *counts = malloc(sizeof(int) * (size_t)size);
    int *displs = malloc(sizeof(int) * (size_t)size), total = 0, rc;
    int recv_nnz = -1, *src = NULL, *rcounts = NULL, *rdispls = NULL;
    long long *vals, *rvals = NULL;
    for (int t = 0; t < size; t++)
        if (edge(rank, t, k)) {
            dest[n] = t;
            counts[n] = count_of(constant, scale, rank, t, k);
            displs[n] = total;
            total += counts[n++];
        }
    vals = malloc(sizeof(long long) * (size_t)(total + 1));
    for (int i = 0; i < n; i++)
        for (int e = 0; e < counts[i]; e++)
            vals[displs[i] + e] = value(rank, dest[i], k, e);
    if (constant)
        rc = Iso_alltoall_crs(n, dest, scale, MPI_LONG_LONG, vals, &recv_nnz, &src, scale,
                              MPI_LONG_LONG, (void **)&rvals, info, comm);
    else
        rc = Iso_alltoallv_crs(n, dest, counts, displs, MPI_LONG_LONG, vals, &recv_nnz, &src,
                               &rcounts, &rdispls, MPI_LONG_LONG, (void **)&rvals, info, comm);
    if (rc == MPI_SUCCESS) {
        int j = 0, off = 0;
        for (int a = 0; a < size; a++) {
            int c;
            if (!edge(a, rank, k))
                continue;
            c = count_of(constant, scale, a, rank, k);
            if (j >= recv_nnz) {
                CHECK(0, "call %d: the message from %d is missing", k, a);
                break;
            }
            CHECK_EQ_INT(src[j], a, "call %d: source %d", k, j);
            if (!constant) {
                CHECK_EQ_INT(rcounts[j], c, "call %d: recvcounts[%d]", k, j);
                CHECK_EQ_INT(rdispls[j], off, "call %d: rdispls[%d]", k, j);
            }
            for (int e = 0; e < c && src[j] == a; e++)
                if (rvals[off + e] != value(a, rank, k, e)) {
                    CHECK(0, "call %d: element %d from %d", k, e, a);
                    break;
                }
            off += c;
            j++;
        }
        CHECK_EQ_INT(recv_nnz, j, "call %d: messages received", k);
    }
    free(src), free(rcounts), free(rdispls), free(rvals);
    free(dest), free(counts), free(displs), free(vals);
    return rc;
}

/* A fresh duplicate of MPI_COMM_WORLD (its private state is made at the
 * first call, under the environment then set). */
static MPI_Comm fresh(void)
{
    MPI_Comm c;
    MPI_Comm_dup(MPI_COMM_WORLD, &c);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

/* Shape index of comm: its state (0: none) and record. */
static int info_of(MPI_Comm comm, int index, char *rec)
{
    int state = -1, rc = Iso_tune_info(comm, index, &state, rec, REC);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "Iso_tune_info(%d)", index);
    return rc == MPI_SUCCESS ? state : -1;
}

/* Runs calls of one form until its shape (index) is decided (at most 21
 * calls), each checked; returns the calls made. */
static int tune_form(MPI_Comm comm, int constant, int scale, int *k, int index, char *rec)
{
    int calls = 0, state = 0;
    while (calls < 21) {
        CHECK_EQ_INT(exchange(comm, constant, scale, (*k)++, MPI_INFO_NULL), MPI_SUCCESS,
                     "call %d", *k - 1);
        calls++;
        if ((state = info_of(comm, index, rec)) == 2)
            break;
    }
    CHECK_EQ_INT(state, 2, "form %s: shape %d decided within 21 calls", constant ? "constant" : "variable", index);
    return calls;
}

static void test_tuning(void)
{
    char rec[REC], won[64], map[512] = "";
    int k = 0, regions = size >= 4;
    MPI_Comm comm;
    /* two regions of size/2 from 4 processes on: the locality-aware candidates */
    for (int r = 0; r < size; r++)
        snprintf(map + strlen(map), sizeof map - strlen(map), "%s%d", r ? "," : "",
                 regions ? r >= size / 2 : 0);
    if (regions)
        setenv("ISO_NODE_MAP", map, 1);
    set_tune_env("on:2", NULL);
    comm = fresh();
    for (int constant = 0; constant < 2; constant++) {
        int calls = tune_form(comm, constant, 1, &k, constant, rec);
        check_same(rec, constant ? "the constant form's record" : "the variable form's record");
        CHECK(!strncmp(rec, constant ? "form=constant" : "form=variable", 13), "record: %s", rec);
        word(rec, "won=", won, sizeof won);
        CHECK(won[0] != '\0', "no winner: %s", rec);
        if (size == 1) {
            CHECK(strstr(rec, "source=model") != NULL && !strcmp(won, "personalized"), "p=1: %s", rec);
            CHECK_EQ_INT(calls, 1, "p=1: decided at once");
            continue;
        }
        CHECK(strstr(rec, "source=trials") && strstr(rec, "tried=personalized:"), "%s", rec);
        CHECK(strstr(rec, ",nbx:") != NULL, "nbx tried: %s", rec);
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
        /* Open MPI 4 refuses rma across nodes, and the map pretends them */
        CHECK((strstr(rec, "rma:") != NULL) == (constant && !regions),
              "rma tried for the constant form only, not on Open MPI 4 with a map: %s", rec);
#else
        CHECK((strstr(rec, "rma:") != NULL) == constant, "rma tried for the constant form only: %s", rec);
#endif
        CHECK((strstr(rec, "locality-nbx:") != NULL) == regions, "locality-aware tried iff two regions: %s", rec);
        CHECK((strstr(rec, ",vpt:") != NULL) == (size == 4 || size == 8), "vpt tried where it forwards: %s", rec);
        {
            char pat[80];
            snprintf(pat, sizeof pat, "%s:", won);
            CHECK(strstr(rec, pat) != NULL && strstr(rec, ":failed") == NULL, "winner %s among the candidates: %s", won, rec);
        }
    }
    tap_result(MPI_COMM_WORLD, "tuning: each form decided within 21 calls, the record alike everywhere, data correct");
    /* the variable form's decided shape runs on; after 64 calls a larger
     * size class is agreed and tuned (shape 2) */
    for (int i = 0; i < 64; i++)
        CHECK_EQ_INT(exchange(comm, 0, 1, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
    CHECK_EQ_INT(info_of(comm, 2, rec), 0, "no third shape after 64 calls of one class");
    {
        int i = 0; /* the class is agreed again within 64 calls */
        for (; i <= 64 && info_of(comm, 2, rec) == 0; i++)
            CHECK_EQ_INT(exchange(comm, 0, 64, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
        CHECK(i <= 64, "no new shape within 64 calls of a larger class");
    }
    tune_form(comm, 0, 64, &k, 2, rec);
    check_same(rec, "the larger class's record");
    CHECK(strstr(rec, "form=variable bytes<=2048") != NULL, "the larger size class (4 x 64 x 8 B): %s", rec);
    for (int i = 0; i < 5; i++)
        CHECK_EQ_INT(exchange(comm, 0, 64, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
    tap_result(MPI_COMM_WORLD, "a larger size class after 64 calls is tuned as a shape of its own");
    MPI_Comm_free(&comm);
    unsetenv("ISO_NODE_MAP");
}

static void test_hook(const char *hook, const char *what)
{
    char rec[REC], won[64];
    int k = 0;
    MPI_Comm comm;
    set_tune_env("on:2", hook);
    comm = fresh();
    tune_form(comm, 0, 1, &k, 0, rec);
    check_same(rec, what);
    word(rec, "won=", won, sizeof won);
    for (int i = 0; i < 3; i++)
        CHECK_EQ_INT(exchange(comm, 0, 1, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
    if (size > 1 && (!strcmp(hook, "tie") || !strcmp(hook, "cold")))
        CHECK(!strcmp(won, "personalized"), "%s: auto's pick wins: %s", hook, rec);
    if (size > 1 && !strcmp(hook, "fail:nbx"))
        CHECK(strstr(rec, "nbx:failed") != NULL && strcmp(won, "nbx"), "nbx failed: %s", rec);
    MPI_Comm_free(&comm);
    set_tune_env(NULL, NULL);
    tap_result(MPI_COMM_WORLD, "%s", what);
}

static void test_off(void)
{
    char rec[REC], rec2[REC];
    int k = 0, state = -1;
    MPI_Info off;
    MPI_Comm comm;
    MPI_Info_create(&off);
    MPI_Info_set(off, "iso_tune", "off");
    /* ISO_TUNE=off: no shape is made */
    set_tune_env("off", NULL);
    comm = fresh();
    for (int i = 0; i < 6; i++)
        CHECK_EQ_INT(exchange(comm, 0, 1, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
    Iso_tune_info(comm, 0, &state, rec, REC); /* no tuner: an error, or state 0 */
    CHECK(state <= 0, "ISO_TUNE=off made a shape: %s", rec);
    MPI_Comm_free(&comm);
    /* a shape tuning, then calls with info iso_tune=off: not advanced */
    set_tune_env("on:4", NULL);
    comm = fresh();
    CHECK_EQ_INT(exchange(comm, 0, 1, k++, MPI_INFO_NULL), MPI_SUCCESS, "call %d", k - 1);
    if (size > 1) {
        CHECK_EQ_INT(info_of(comm, 0, rec), 1, "tuning after one call");
        for (int i = 0; i < 6; i++)
            CHECK_EQ_INT(exchange(comm, i % 2, 1, k++, off), MPI_SUCCESS, "call %d", k - 1);
        CHECK_EQ_INT(info_of(comm, 0, rec2), 1, "still tuning");
        CHECK(!strcmp(rec, rec2), "iso_tune=off calls advanced the tuning: %s / %s", rec, rec2);
        CHECK_EQ_INT(info_of(comm, 1, rec2), 0, "iso_tune=off calls made a shape");
    }
    MPI_Comm_free(&comm);
    MPI_Info_free(&off);
    set_tune_env(NULL, NULL);
    tap_result(MPI_COMM_WORLD, "iso_tune=off: auto's rule, nothing tuned, data correct");
}

static void test_bad(void)
{
    MPI_Info bad;
    MPI_Comm comm = fresh();
    MPI_Info_create(&bad);
    MPI_Info_set(bad, "iso_tune", "sometimes");
    expect_info_error(exchange(comm, 0, 1, 0, bad), "iso_tune", "sometimes");
    MPI_Info_set(bad, "iso_tune", "on:0");
    expect_info_error(exchange(comm, 0, 1, 0, bad), "iso_tune", "on:0");
    set_tune_env("on:99", NULL);
    expect_info_error(exchange(comm, 0, 1, 0, MPI_INFO_NULL), "ISO_TUNE", "on:99");
    set_tune_env("on", "fail:bogus");
    if (size > 1) /* one process: one candidate, no trials, the hook unread */
        expect_info_error(exchange(comm, 0, 1, 0, MPI_INFO_NULL), "ISO_TUNE_TEST", "fail:bogus");
    set_tune_env(NULL, NULL);
    if (size > 1) { /* iso_verify: iso_tune differing between processes */
        int rc;
        Iso_error cls = (Iso_error)0;
        MPI_Info_set(bad, "iso_verify", "true");
        MPI_Info_set(bad, "iso_tune", rank % 2 ? "off" : "on");
        rc = exchange(comm, 0, 1, 0, bad);
        Iso_error_class(rc, &cls);
        CHECK_EQ_INT(cls, ISO_ERR_ALGORITHM, "iso_verify with iso_tune differing");
    }
    CHECK_EQ_INT(exchange(comm, 1, 1, 1, MPI_INFO_NULL), MPI_SUCCESS, "a good call after the errors");
    MPI_Info_free(&bad);
    MPI_Comm_free(&comm);
    tap_result(MPI_COMM_WORLD, "bad iso_tune, ISO_TUNE, ISO_TUNE_TEST are ISO_ERR_INFO; "
                               "iso_verify finds iso_tune differing (ISO_ERR_ALGORITHM)");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsetenv("ISO_SPARSE_ALGORITHM");
    set_tune_env(NULL, NULL);
    test_tuning();
    test_hook("tie", "a forced tie goes to auto's pick");
    test_hook("cold", "a slow first block of trials: auto's pick, timed last, wins");
    test_hook("fail:nbx", "a failing candidate is skipped, its calls correct");
    test_off();
    test_bad();
    MPI_Finalize();
    return 0;
}
