/* Runtime tuning of auto (iso_tune, ISO_TUNE, Iso_tune_info, ISO_TUNE_FILE).
 * On a periodic 3D torus with the Moore neighborhood of radius 1 (s = 26),
 * where the cost model puts direct and the combining schedules within reach
 * of each other, blocking alltoalls of one MPI_DOUBLE per block, each checked
 * against a seeded pattern: block i of rank q in call k is value(q, i, k), so
 * the caller's receive block i is value(caller - C^i, i, k), with caller -
 * C^i from MPI_Cart_get/MPI_Cart_rank (tests/oracle.h), not the library.
 *   1. tuning on:3: every call correct while tuning and after; the shape is
 *      decided after the model's pick's untimed lead (1 to 16 calls) and
 *      candidates x 3 calls (at most 20); the record is the
 *      same text on every process (gathered and compared); a persistent
 *      request made afterwards runs the winner; a second shape (8192
 *      doubles per block) gets its own record, whose candidates include
 *      direct, dimwise and bruck though the model prices bruck above 2x
 *      direct (it sees no link contention, so it rules no algorithm out);
 *   2. iso_tune=off: nothing is tuned; a persistent request runs the
 *      model's pick, which is the first candidate the tuned record lists;
 *   3. a forced tie (ISO_TUNE_TEST=tie: every trial takes 1 s): the model's
 *      pick wins; so it does when the first block of trials is timed slow
 *      (ISO_TUNE_TEST=cold, as an MPI library's warm-up): it runs last;
 *   4. a failing candidate (ISO_TUNE_TEST=fail:ALG, the model's pick): its
 *      trial calls run direct and stay correct, it is marked failed and
 *      does not win;
 *   5. bad iso_tune values (info and ISO_TUNE) and a bad ISO_TUNE_TEST are
 *      ISO_ERR_INFO naming the key and the value;
 *   6. ISO_TUNE_FILE: a tuned winner is appended by rank 0; a new
 *      neighborhood reading a copy of that file starts decided (source=file)
 *      with the same winner, without trial calls; so does one reading a
 *      cost file (ISO_COST_FILE, no ISO_TUNE_FILE) of constants and that
 *      record, and nothing is appended to the cost file.
 *
 * NPROCS: 1 2 4
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"
#include "tune_record.h"


static int rank, size, calls;
static MPI_Comm cart;
static nbh_t nb;
static int *sources, *targets;

static double value(int q, int i, int k, int e) { return q * 1e6 + i * 1e3 + k + e * 0.25; }

/* One blocking alltoall of `count` doubles per block, checked. */
static int checked_call(MPI_Comm iso, int count, const char *what)
{
    size_t n = (size_t)nb.s * (size_t)count;
    double *sb = malloc(sizeof(double) * n), *rb = malloc(sizeof(double) * n);
    int rc, wrong = 0;
    calls++;
    for (int i = 0; i < nb.s; i++)
        for (int e = 0; e < count; e++) {
            sb[(size_t)i * count + e] = value(rank, i, calls, e);
            rb[(size_t)i * count + e] = -1.0;
        }
    rc = Iso_neighbor_alltoall(sb, count, MPI_DOUBLE, rb, count, MPI_DOUBLE, iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "%s: call %d", what, calls);
    for (int i = 0; i < nb.s && rc == MPI_SUCCESS; i++)
        for (int e = 0; e < count; e++)
            if (rb[(size_t)i * count + e] != value(sources[i], i, calls, e))
                wrong++;
    CHECK(wrong == 0, "%s: call %d: %d wrong elements", what, calls, wrong);
    free(sb);
    free(rb);
    return rc;
}

static MPI_Comm make_iso(const char *tune)
{
    MPI_Info info;
    MPI_Comm iso = MPI_COMM_NULL;
    int rc;
    MPI_Info_create(&info);
    if (tune)
        MPI_Info_set(info, "iso_tune", tune);
    rc = Iso_neighborhood_create_with_info(cart, nb.s, nb.off, info, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create with iso_tune=%s", tune ? tune : "(unset)");
    MPI_Info_free(&info);
    return iso;
}

/* Runs checked calls until shape `index` is decided (at most 40): the
 * calls it took, its record in rec. */
static int tune_shape(MPI_Comm iso, int index, int count, char *rec, const char *what)
{
    int state = 0, made = 0;
    for (; made < 40; made++) {
        Iso_tune_info(iso, index, &state, rec, REC);
        if (state == 2)
            break;
        if (checked_call(iso, count, what) != MPI_SUCCESS)
            break;
    }
    CHECK_EQ_INT(state, 2, "%s: decided after %d calls: \"%s\"", what, made, rec);
    return made;
}

/* "alg" or "alg/mode" of a persistent request of the shape (1 double). */
static void persistent_runs(MPI_Comm iso, char *out, size_t len)
{
    double sb[64] = {0}, rb[64];
    Iso_request req = ISO_REQUEST_NULL;
    const char *alg = "?", *mode = "?";
    int rounds, messages, rc;
    long long bytes;
    rc = Iso_neighbor_alltoall_init(sb, 1, MPI_DOUBLE, rb, 1, MPI_DOUBLE, iso, MPI_INFO_NULL, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "persistent init");
    if (rc == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        if (!strcmp(mode, "none"))
            snprintf(out, len, "%s", alg);
        else
            snprintf(out, len, "%s/%s", alg, mode);
        Iso_request_free(&req);
    }
}

static char model_pick[64];

static void test_tuned(void)
{
    MPI_Comm iso = make_iso("on:3");
    char rec[REC], won[64], runs[64], ncalls[32], tried[512];
    int made, cands = 1, state;
    calls = 0;
    made = tune_shape(iso, 0, 1, rec, "on:3");
    word(rec, "tried=", tried, sizeof tried);
    for (char *p = tried; *p; p++)
        cands += *p == ',';
    word(rec, "won=", won, sizeof won);
    word(rec, "calls=", ncalls, sizeof ncalls);
    CHECK(cands >= 2, "3D Moore r1: at least two candidates: \"%s\"", rec);
    /* and the lead, 1 to 16 untimed calls of the model's pick */
    CHECK(made >= cands * 3 + 1 && made <= cands * 3 + 16,
          "trial calls: candidates x 3 and a lead of 1 to 16 (\"%s\")", rec);
    CHECK(made <= 20 + 16, "at most 20 + 16 trial calls: %d", made);
    CHECK(strstr(rec, "source=trials") && strstr(rec, "cost=") && won[0], "record \"%s\"", rec);
    check_same(rec, "on:3");
    for (int k = 0; k < 5; k++) /* the winner runs, kept by the call cache */
        checked_call(iso, 1, "after tuning");
    Iso_tune_info(iso, 0, &state, rec, REC);
    CHECK_EQ_INT(state, 2, "still decided");
    persistent_runs(iso, runs, sizeof runs);
    CHECK(!strcmp(runs, won), "a persistent request runs %s, the tuned winner is %s", runs, won);
    first_tried(rec, model_pick, sizeof model_pick);
    /* a second shape: 64 KiB blocks, where the model prices bruck's
     * forwarded bytes above 2x direct, and it is tried all the same */
    tune_shape(iso, 1, 8192, rec, "second shape");
    CHECK(strstr(rec, "bytes=65536 "), "second shape's record \"%s\"", rec);
    word(rec, "tried=", tried, sizeof tried);
    CHECK(strstr(tried, "direct") && strstr(tried, "dimwise") && strstr(tried, "bruck"),
          "every algorithm is a candidate, whatever the model's price: \"%s\"", rec);
    check_same(rec, "second shape");
    Iso_tune_info(iso, 2, &state, rec, REC);
    CHECK_EQ_INT(state, 0, "no third shape");
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "tuning: correct during and after, decided after candidates x N "
                               "calls, the same record on every process, kept for the shape");
}

static void test_off(void)
{
    MPI_Comm iso = make_iso("off");
    char rec[REC], runs[64];
    int state = -1;
    for (int k = 0; k < 6; k++)
        checked_call(iso, 1, "off");
    Iso_tune_info(iso, 0, &state, rec, REC);
    CHECK_EQ_INT(state, 0, "iso_tune=off tunes nothing");
    persistent_runs(iso, runs, sizeof runs);
    CHECK(!strcmp(runs, model_pick), "iso_tune=off runs %s, the model's pick (first candidate) "
                                     "is %s", runs, model_pick);
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "iso_tune=off: the cost model's pick");
}

static void with_hook(const char *hook, char *rec)
{
    MPI_Comm iso;
    setenv("ISO_TUNE_TEST", hook, 1);
    iso = make_iso(NULL); /* the default: on */
    tune_shape(iso, 0, 1, rec, hook);
    unsetenv("ISO_TUNE_TEST");
    for (int k = 0; k < 3; k++)
        checked_call(iso, 1, "after the hook");
    check_same(rec, hook);
    Iso_neighborhood_free(&iso);
}

static void test_tie(void)
{
    char rec[REC], won[64];
    with_hook("tie", rec);
    word(rec, "won=", won, sizeof won);
    CHECK(!strcmp(won, model_pick), "a tie goes to the model's pick %s, won %s", model_pick, won);
    tap_result(MPI_COMM_WORLD, "a forced tie: the model's pick wins");
}

/* As if the MPI library's first calls were slow: the first block of trial
 * calls is timed 2 s, the others 1 s.  The model's pick runs last, so it
 * is not the one slowed, and wins the tie with the others. */
static void test_cold(void)
{
    char rec[REC], won[64];
    with_hook("cold", rec);
    word(rec, "won=", won, sizeof won);
    CHECK(!strcmp(won, model_pick), "a cold start: the model's pick %s wins, won %s", model_pick,
          won);
    tap_result(MPI_COMM_WORLD, "a cold start: the model's pick, timed last, wins");
}

static void test_fail(void)
{
    char rec[REC], won[64], hook[80], alg[64], failed[80];
    snprintf(alg, sizeof alg, "%s", model_pick);
    alg[strcspn(alg, "/")] = '\0';
    CHECK(strcmp(alg, "direct") != 0, "the model picks a combining schedule here: %s", alg);
    snprintf(hook, sizeof hook, "fail:%s", alg);
    with_hook(hook, rec);
    word(rec, "won=", won, sizeof won);
    snprintf(failed, sizeof failed, "%s:failed", model_pick);
    CHECK(strstr(rec, failed) != NULL, "\"%s\" lacks \"%s\"", rec, failed);
    CHECK(strncmp(won, alg, strlen(alg)) != 0, "failed %s won: \"%s\"", alg, rec);
    tap_result(MPI_COMM_WORLD, "a candidate that fails is skipped, the calls stay correct");
}

static void test_bad(void)
{
    static const char *bad[] = {"maybe", "on:0", "on:21", "on:", "on:3x", "on:-1", "of"};
    MPI_Comm iso;
    double sb[64] = {0}, rb[64];
    int rc;
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
        MPI_Info info;
        iso = MPI_COMM_NULL;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_tune", bad[k]);
        rc = Iso_neighborhood_create_with_info(cart, nb.s, nb.off, info, &iso);
        expect_info_error(rc, "iso_tune", bad[k]);
        MPI_Info_free(&info);
    }
    setenv("ISO_TUNE", "sometimes", 1);
    rc = Iso_neighborhood_create(cart, nb.s, nb.off, &iso);
    unsetenv("ISO_TUNE");
    expect_info_error(rc, "ISO_TUNE", "sometimes");
    /* the test hook's own errors come at the first call of a shape, on every process */
    iso = make_iso("on");
    setenv("ISO_TUNE_TEST", "fail:direct", 1);
    rc = Iso_neighbor_alltoall(sb, 1, MPI_DOUBLE, rb, 1, MPI_DOUBLE, iso);
    unsetenv("ISO_TUNE_TEST");
    expect_info_error(rc, "ISO_TUNE_TEST", "fail:direct");
    calls = 100;
    checked_call(iso, 1, "after the hook's error");
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "bad iso_tune and ISO_TUNE values are ISO_ERR_INFO naming them");
}

/* A new neighborhood is decided at its first call, from the winners'
 * file the environment names now, with the winner won. */
static void starts_from_file(const char *what, const char *won)
{
    char rec[REC], won2[64];
    int state = 0;
    MPI_Comm iso = make_iso("on");
    checked_call(iso, 1, what);
    Iso_tune_info(iso, 0, &state, rec, REC);
    word(rec, "won=", won2, sizeof won2);
    CHECK_EQ_INT(state, 2, "%s: decided at the first call: \"%s\"", what, rec);
    CHECK(strstr(rec, "source=file") && !strcmp(won, won2), "%s: \"%s\", tuned %s", what, rec,
          won);
    check_same(rec, what);
    Iso_neighborhood_free(&iso);
}

static void test_file(void)
{
    char path[64] = "/tmp/isotuneXXXXXX", copy[80], cost[80], rec[REC], won[64];
    char line[2048];
    MPI_Comm iso;
    FILE *f;
    int lines = 0;
    if (rank == 0) {
        int fd = mkstemp(path);
        close(fd);
    }
    MPI_Bcast(path, sizeof path, MPI_CHAR, 0, MPI_COMM_WORLD);
    snprintf(copy, sizeof copy, "%s.copy", path);
    snprintf(cost, sizeof cost, "%s.cost", path);
    setenv("ISO_TUNE_FILE", path, 1);
    iso = make_iso("on:2");
    tune_shape(iso, 0, 1, rec, "file");
    word(rec, "won=", won, sizeof won);
    Iso_neighborhood_free(&iso);
    if (rank == 0) { /* one record, copied: the next reader reads another file; and a
                      * cost file of the model's constants that carries it too */
        FILE *out = fopen(copy, "w"), *out2 = fopen(cost, "w");
        f = fopen(path, "r");
        if (out2)
            fputs("# a cost file: constants, and a winner\nalpha 3e-06\nbeta 1e-10\n", out2);
        while (f && out && out2 && fgets(line, sizeof line, f)) {
            lines += !strncmp(line, "iso_tune id=", 12);
            CHECK(strstr(line, won) != NULL, "file line \"%s\" lacks %s", line, won);
            fputs(line, out);
            fputs(line, out2);
        }
        if (f)
            fclose(f);
        if (out)
            fclose(out);
        if (out2)
            fclose(out2);
        CHECK_EQ_INT(lines, 1, "records appended to ISO_TUNE_FILE");
    }
    MPI_Barrier(MPI_COMM_WORLD);
    setenv("ISO_TUNE_FILE", copy, 1);
    starts_from_file("from the file", won);
    /* without ISO_TUNE_FILE the winners come from ISO_COST_FILE; nothing is
     * written there */
    unsetenv("ISO_TUNE_FILE");
    setenv("ISO_COST_FILE", cost, 1);
    starts_from_file("from the cost file", won);
    unsetenv("ISO_COST_FILE");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        lines = 0;
        f = fopen(cost, "r");
        while (f && fgets(line, sizeof line, f))
            lines++;
        if (f)
            fclose(f);
        CHECK_EQ_INT(lines, 4, "lines of the cost file after the run (nothing appended)");
        unlink(path);
        unlink(copy);
        unlink(cost);
    }
    tap_result(MPI_COMM_WORLD, "ISO_TUNE_FILE: winners saved, and a later reader starts tuned, "
                               "also from ISO_COST_FILE");
}

int main(int argc, char **argv)
{
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    unsetenv("ISO_TUNE"); /* the defaults are tested */
    unsetenv("ISO_TUNE_TEST");
    unsetenv("ISO_TUNE_FILE");
    unsetenv("ISO_COST_FILE");
    unsetenv("ISO_ALGORITHM");
    unsetenv("ISO_COMBINE");
    cart = oracle_cart(3, dims, periods);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    nb = nbh_moore(3, 1);
    sources = malloc(sizeof(int) * (size_t)nb.s);
    targets = malloc(sizeof(int) * (size_t)nb.s);
    oracle_neighbors(cart, &nb, sources, targets);
    test_tuned();
    test_off();
    test_tie();
    test_cold();
    test_fail();
    test_bad();
    test_file();
    free(sources);
    free(targets);
    nbh_free(&nb);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
