/* What a user sees when something is wrong or unclear:
 *   - error messages name the public function, the key or environment
 *     variable and the value (MPI_Error_string of the returned code);
 *   - names and booleans are case-insensitive;
 *   - an explicit combining algorithm with iso_combine=datatype on a v/w
 *     form is an error (ISO_ERR_ALGORITHM), not a silent fallback; auto
 *     still combines those forms, with pack;
 *   - Iso_request_schedule_info: algorithm and mode as requested, rounds
 *     and messages as Iso_schedule_info, messages as counted through the
 *     PMPI interface (MPI_Isend below), bytes as the schedule moves them;
 *   - ISO_VERBOSE=1 prints each new choice once, on rank 0 only;
 *   - ownership misuse (freeing a neighborhood twice, a collective after
 *     Iso_neighborhood_free) is reported with its likely cause;
 *   - the check that the program runs with the MPI library isocoll was
 *     built for accepts this one and refuses the other.
 *
 * NPROCS: 1 2 4
 * PER-ALGORITHM: no
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "core/core.h" /* iso__mpi_library_matches */
#include "isocoll.h"
#include "tap.h"

/* ---- counting sends (PMPI) ------------------------------------------------ */
static int counting, isends;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    isends += counting;
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

/* ---- helpers ---------------------------------------------------------------- */
static MPI_Comm cart;
static int rank, size;

/* rc must be of library class want and its string must contain every
 * string of must (NULL-terminated). */
static void expect(int rc, Iso_error want, const char *const *must, const char *what)
{
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    Iso_error got = ISO_ERR_NONE;
    Iso_error_class(rc, &got);
    CHECK_EQ_INT(got, want, "%s: error class", what);
    if (rc != MPI_SUCCESS)
        MPI_Error_string(rc, text, &len);
    for (int k = 0; must && must[k]; k++)
        CHECK(tap_text_has(text, must[k]), "%s: message \"%s\" lacks \"%s\"", what, text,
              must[k]);
}

/* The 2D Moore neighborhood of radius 1: 8 offsets. */
static const int moore[16] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};

static MPI_Info info2(const char *k1, const char *v1, const char *k2, const char *v2)
{
    MPI_Info info;
    MPI_Info_create(&info);
    if (k1)
        MPI_Info_set(info, k1, v1);
    if (k2)
        MPI_Info_set(info, k2, v2);
    return info;
}

/* Creation with the environment variable var set to value on every rank.
 * The barriers keep each rank's setting from meeting another's creation:
 * under SimGrid's SMPI all ranks share one environment. */
static int create_with_env(const char *var, const char *value, MPI_Comm *iso)
{
    const char *old = getenv(var);
    char *saved = old ? strdup(old) : NULL;
    int rc;
    MPI_Barrier(MPI_COMM_WORLD);
    setenv(var, value, 1);
    rc = Iso_neighborhood_create(cart, 8, moore, iso);
    MPI_Barrier(MPI_COMM_WORLD);
    if (saved) {
        setenv(var, saved, 1);
        free(saved);
    } else {
        unsetenv(var);
    }
    return rc;
}

/* ---- error messages ------------------------------------------------------------ */
static void test_messages(void)
{
    MPI_Comm iso;
    MPI_Info info;
    Iso_request req = ISO_REQUEST_NULL;
    int sc[8], sd[8], rc, sb[8], rb[8];
    static const struct {
        const char *var, *value;
        Iso_error want;
    } env[] = {{"ISO_ALGORITHM", "fastest", ISO_ERR_ALGORITHM},
               {"ISO_COMBINE", "zip", ISO_ERR_INFO},
               {"ISO_VERIFY", "maybe", ISO_ERR_INFO},
               {"ISO_VERBOSE", "loud", ISO_ERR_INFO}};
    for (size_t k = 0; k < sizeof env / sizeof env[0]; k++) {
        const char *must[] = {"Iso_neighborhood_create", env[k].var, env[k].value, NULL};
        expect(create_with_env(env[k].var, env[k].value, &iso), env[k].want, must, env[k].var);
    }
    info = info2("iso_algorithm", "zzz", NULL, NULL);
    {
        const char *must[] = {"Iso_neighborhood_create_with_info", "info iso_algorithm", "zzz",
                              "bruck", NULL};
        expect(Iso_neighborhood_create_with_info(cart, 8, moore, info, &iso), ISO_ERR_ALGORITHM,
               must, "info iso_algorithm");
    }
    MPI_Info_free(&info);
    info = info2("iso_foo", "1", NULL, NULL);
    {
        const char *must[] = {"Iso_neighborhood_create_with_info", "iso_foo", NULL};
        expect(Iso_neighborhood_create_with_info(cart, 8, moore, info, &iso), ISO_ERR_INFO, must,
               "unknown info key");
    }
    MPI_Info_free(&info);

    rc = Iso_neighborhood_create(cart, 8, moore, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create");
    info = info2("iso_verify", "true", NULL, NULL); /* a creation key, not an _init key */
    {
        const char *must[] = {"Iso_neighbor_alltoall_init", "iso_verify", NULL};
        expect(Iso_neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, iso, info, &req),
               ISO_ERR_INFO, must, "_init with iso_verify");
    }
    MPI_Info_free(&info);
    for (int i = 0; i < 8; i++) {
        sc[i] = i == 1 ? -3 : 1;
        sd[i] = i;
    }
    {
        const char *must[] = {"Iso_neighbor_alltoallv", "sendcounts[1] = -3", NULL};
        expect(Iso_neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, sc, sd, MPI_INT, iso),
               ISO_ERR_COUNT, must, "negative count");
    }
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "error messages name the function, the variable or key and "
                               "the value");
}

/* ---- case-insensitive names and booleans ------------------------------------------ */
static void test_case(void)
{
    MPI_Comm iso = MPI_COMM_NULL;
    MPI_Info info = info2("iso_combine", "PACK", "iso_verify", "On");
    Iso_request req = ISO_REQUEST_NULL;
    const char *alg = "", *mode = "";
    int sb[16], rb[16], rounds, messages, rc; /* 8 blocks of 2 */
    long long bytes;
    rc = create_with_env("ISO_ALGORITHM", "Bruck", &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "ISO_ALGORITHM=Bruck");
    rc = Iso_neighborhood_create_with_info(cart, 8, moore, info, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "iso_combine=PACK, iso_verify=On");
    MPI_Info_free(&info);
    info = info2("iso_algorithm", "DimWise", "iso_combine", "DataType");
    rc = Iso_neighbor_alltoall_init(sb, 2, MPI_INT, rb, 2, MPI_INT, iso, info, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "_init with DimWise, DataType");
    if (rc == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        CHECK(!strcmp(alg, "dimwise") && !strcmp(mode, "datatype"), "runs %s, %s", alg, mode);
        Iso_request_free(&req);
    }
    MPI_Info_free(&info);
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "names and booleans are case-insensitive");
}

/* ---- explicit datatype mode on v/w forms ----------------------------------------- */
static void test_explicit_mode(void)
{
    MPI_Comm iso;
    MPI_Info info = info2("iso_algorithm", "bruck", "iso_combine", "datatype");
    Iso_request req = ISO_REQUEST_NULL;
    int c[8], d[8], sb[8], rb[8], rc, rounds, messages;
    MPI_Aint wd[8];
    MPI_Datatype wt[8];
    const char *alg, *mode;
    long long bytes;
    for (int i = 0; i < 8; i++) {
        c[i] = 1;
        d[i] = i;
        wd[i] = (MPI_Aint)(i * sizeof(int));
        wt[i] = MPI_INT;
    }
    rc = Iso_neighborhood_create_with_info(cart, 8, moore, info, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create bruck, datatype");
    MPI_Info_free(&info);
    {
        const char *must[] = {"Iso_neighbor_alltoallv", "datatype", NULL};
        expect(Iso_neighbor_alltoallv(sb, c, d, MPI_INT, rb, c, d, MPI_INT, iso),
               ISO_ERR_ALGORITHM, must, "alltoallv, bruck, datatype");
    }
    {
        const char *must[] = {"Iso_ineighbor_allgatherw", "datatype", NULL};
        expect(Iso_ineighbor_allgatherw(sb, 1, MPI_INT, rb, c, wd, wt, iso, &req),
               ISO_ERR_ALGORITHM, must, "allgatherw, bruck, datatype");
        CHECK(req == ISO_REQUEST_NULL, "a failed call returned a request");
    }
    /* the regular forms run in datatype mode */
    rc = Iso_neighbor_alltoall_init(sb, 1, MPI_INT, rb, 1, MPI_INT, iso, MPI_INFO_NULL, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "alltoall_init, bruck, datatype");
    if (rc == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        CHECK(!strcmp(alg, "bruck") && !strcmp(mode, "datatype"), "runs %s, %s", alg, mode);
        Iso_request_free(&req);
    }
    /* per operation: dimwise + datatype on alltoallw is an error too */
    info = info2("iso_algorithm", "dimwise", NULL, NULL);
    {
        const char *must[] = {"Iso_neighbor_alltoallw_init", "datatype", NULL};
        expect(Iso_neighbor_alltoallw_init(sb, c, wd, wt, rb, c, wd, wt, iso, info, &req),
               ISO_ERR_ALGORITHM, must, "alltoallw_init, dimwise, datatype");
    }
    MPI_Info_free(&info);
    /* a combining algorithm with mode auto runs the v/w forms packed */
    info = info2("iso_combine", "auto", NULL, NULL);
    rc = Iso_neighbor_alltoallv_init(sb, c, d, MPI_INT, rb, c, d, MPI_INT, iso, info, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "alltoallv_init, bruck, mode auto");
    if (rc == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        CHECK(!strcmp(alg, "bruck") && !strcmp(mode, "pack"), "runs %s, %s", alg, mode);
        Iso_request_free(&req);
    }
    MPI_Info_free(&info);
    /* auto chooses among what can run: never datatype mode for v/w */
    info = info2("iso_algorithm", "auto", NULL, NULL);
    rc = Iso_neighbor_alltoallv_init(sb, c, d, MPI_INT, rb, c, d, MPI_INT, iso, info, &req);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "alltoallv_init, auto, datatype");
    if (rc == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        CHECK(strcmp(mode, "datatype") != 0, "auto runs %s in datatype mode on alltoallv", alg);
        Iso_request_free(&req);
    }
    MPI_Info_free(&info);
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "explicit iso_combine=datatype on v/w forms is an error; auto "
                               "avoids it");
}

/* ---- Iso_request_schedule_info ------------------------------------------------------- */
static void test_query(void)
{
    static const char *const algs[] = {"direct", "dimwise", "bruck"};
    static const char *const modes[] = {"pack", "datatype"};
    enum { COUNT = 3 }; /* ints per block: 12 bytes */
    int sb[8 * COUNT], rb[8 * COUNT];
    for (int a = 0; a < 3; a++)
        for (int m = 0; m < 2; m++) {
            MPI_Comm iso;
            MPI_Info info = info2("iso_algorithm", algs[a], "iso_combine", modes[m]);
            Iso_request req = ISO_REQUEST_NULL;
            const char *alg = "", *mode = "";
            int rounds = -1, messages = -1, r2, m2, rc;
            long long bytes = 0, hops, want;
            rc = Iso_neighborhood_create_with_info(cart, 8, moore, info, &iso);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "create %s %s", algs[a], modes[m]);
            rc = Iso_neighbor_alltoall_init(sb, COUNT, MPI_INT, rb, COUNT, MPI_INT, iso,
                                            MPI_INFO_NULL, &req);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "alltoall_init %s %s", algs[a], modes[m]);
            if (rc != MPI_SUCCESS) {
                MPI_Info_free(&info);
                continue;
            }
            Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
            CHECK_EQ_INT(bytes, -1, "%s %s: bytes before an execution", algs[a], modes[m]);
            CHECK(!strcmp(alg, algs[a]), "asked for %s, runs %s", algs[a], alg);
            CHECK(!strcmp(mode, a == 0 ? "none" : modes[m]), "%s %s: mode %s", algs[a], modes[m],
                  mode);
            Iso_schedule_info(iso, "alltoall", algs[a], &r2, &m2, &hops);
            CHECK_EQ_INT(rounds, r2, "%s %s: rounds", algs[a], modes[m]);
            CHECK_EQ_INT(messages, m2, "%s %s: messages", algs[a], modes[m]);
            isends = 0;
            counting = 1;
            Iso_start(&req);
            Iso_wait(&req);
            counting = 0;
            CHECK_EQ_INT(isends, messages, "%s %s: MPI_Isend calls counted", algs[a], modes[m]);
            Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
            /* every hop moves a 12-byte block; packed messages add an int64
             * size per block */
            want = hops * (long long)sizeof(int) * COUNT;
            if (a > 0 && m == 0)
                want += hops * 8;
            CHECK_EQ_INT(bytes, want, "%s %s: bytes sent", algs[a], modes[m]);
            Iso_request_free(&req);
            Iso_neighborhood_free(&iso);
            MPI_Info_free(&info);
        }
    tap_result(MPI_COMM_WORLD, "Iso_request_schedule_info agrees with Iso_schedule_info and "
                               "with the sends counted through PMPI");
}

/* ---- a bad argument on one process ----------------------------------------------- */
/* The others must fail too (no hang), with their own message saying so,
 * and the bad process with its own cause: codes are per process, so only
 * error numbers may travel. */
static void test_one_bad(void)
{
    MPI_Comm iso;
    MPI_Info info = info2("iso_verify", "true", NULL, NULL);
    Iso_request req = ISO_REQUEST_NULL;
    int c[8], d[8], sb[8], rb[8], bad = size - 1, off[16], rc;
    const char *theirs[] = {"another process", NULL}, *mine[] = {"sendcounts[2] = -5", NULL};
    const char *mine_off[] = {"coordinate", NULL};
    if (size < 2) {
        MPI_Info_free(&info);
        tap_skip(MPI_COMM_WORLD, "needs 2 ranks", "a bad argument on one process fails all");
        return;
    }
    for (int i = 0; i < 8; i++) {
        c[i] = i == 2 && rank == bad ? -5 : 1;
        d[i] = i;
    }
    rc = Iso_neighborhood_create(cart, 8, moore, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create");
    /* many errors on the bad rank first: its codes differ from the others' */
    for (int k = 0; k < 40 && rank == bad; k++)
        Iso_neighbor_alltoall(sb, -k - 1, MPI_INT, rb, 1, MPI_INT, iso);
    rc = Iso_neighbor_alltoallv_init(sb, c, d, MPI_INT, rb, c, d, MPI_INT, iso, MPI_INFO_NULL,
                                     &req);
    expect(rc, ISO_ERR_COUNT, rank == bad ? mine : theirs, "alltoallv_init, one bad rank");
    CHECK(req == ISO_REQUEST_NULL, "a failed _init returned a request");
    Iso_neighborhood_free(&iso);
    /* creation with iso_verify: an offset out of range on one rank */
    memcpy(off, moore, sizeof off);
    if (rank == bad)
        off[5] = 1 << 30;
    rc = Iso_neighborhood_create_with_info(cart, 8, off, info, &iso);
    expect(rc, ISO_ERR_ARG, rank == bad ? mine_off : theirs, "create with iso_verify, one bad rank");
    MPI_Info_free(&info);
    tap_result(MPI_COMM_WORLD, "a bad argument on one process fails all (_init agreement, "
                               "iso_verify), each with its own message");
}

/* ---- ISO_VERBOSE ------------------------------------------------------------------- */
/* Runs two blocking alltoalls with ISO_VERBOSE=1 and stderr in a file;
 * returns what was printed (malloc'ed).  Runtime tuning is off: its trial
 * calls and its own line are tested in t_tune. */
static char *verbose_output(MPI_Comm *iso)
{
    char path[] = "/tmp/isodiagXXXXXX";
    int fd = mkstemp(path), saved = dup(2), sb[8], rb[8], rc;
    char *text = calloc(4096, 1), *tune = getenv("ISO_TUNE") ? strdup(getenv("ISO_TUNE")) : NULL;
    FILE *f;
    fflush(stderr);
    dup2(fd, 2);
    setenv("ISO_TUNE", "off", 1);
    rc = create_with_env("ISO_VERBOSE", "1", iso);
    if (tune)
        setenv("ISO_TUNE", tune, 1);
    else
        unsetenv("ISO_TUNE");
    free(tune);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create with ISO_VERBOSE=1");
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++)
        Iso_neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, *iso);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    f = fdopen(fd, "r");
    rewind(f);
    if (fread(text, 1, 4095, f) == 0)
        text[0] = '\0';
    fclose(f);
    unlink(path);
    return text;
}

static void test_verbose(void)
{
    MPI_Comm iso = MPI_COMM_NULL;
    char *text, want[64];
    Iso_request req = ISO_REQUEST_NULL;
    const char *alg = "?", *mode = "?";
    int sb[8], rb[8], rounds, messages, lines = 0;
    long long bytes;
#ifdef ISO_SMPI_COMPAT
    if (size > 1) { /* each rank's stderr is redirected by itself */
        tap_skip(MPI_COMM_WORLD,
                 "SimGrid's SMPI runs all ranks in one process: one stderr for all of them",
                 "ISO_VERBOSE=1: one line per new choice, rank 0 only");
        return;
    }
#endif
    text = verbose_output(&iso);
    for (char *p = text; (p = strchr(p, '\n')) != NULL; p++)
        lines++;
    /* what the same call runs, as the query says */
    if (Iso_ineighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, iso, &req) == MPI_SUCCESS) {
        Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes);
        Iso_wait(&req);
    }
    snprintf(want, sizeof want, "auto chose %s", alg);
    if (rank == 0) {
        CHECK_EQ_INT(lines, 1, "lines printed for two calls: \"%s\"", text);
        CHECK(strstr(text, "Iso_neighbor_alltoall") && strstr(text, want), "\"%s\" lacks \"%s\"",
              text, want);
    } else {
        CHECK(text[0] == '\0', "rank %d printed \"%s\"", rank, text);
    }
    free(text);
    Iso_neighborhood_free(&iso);
    tap_result(MPI_COMM_WORLD, "ISO_VERBOSE=1: one line per new choice, rank 0 only, naming "
                               "what the request query reports");
}

/* ---- ownership misuse ------------------------------------------------------------------ */
static void test_misuse(void)
{
    MPI_Comm iso = MPI_COMM_NULL;
    int sb[8], rb[8], rc = Iso_neighborhood_create(cart, 8, moore, &iso);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "create");
    rc = Iso_neighborhood_free(&iso);
    CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL, "free: rc %d", rc);
    {
        const char *must[] = {"Iso_neighborhood_free", "MPI_COMM_NULL", NULL};
        expect(Iso_neighborhood_free(&iso), ISO_ERR_NOT_CART, must, "freeing twice");
    }
    {
        const char *must[] = {"Iso_neighbor_alltoall", "Iso_neighborhood_free", NULL};
        expect(Iso_neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, cart),
               ISO_ERR_NO_NEIGHBORHOOD, must, "a collective after free");
    }
    tap_result(MPI_COMM_WORLD, "ownership misuse names its likely cause");
}

/* ---- the MPI library check ----------------------------------------------------- */
static void test_mpi_library(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;
    MPI_Get_library_version(version, &len);
    CHECK(iso__mpi_library_matches(version), "refuses its own MPI: %s", version);
#if defined(MPICH_VERSION)
    CHECK(!iso__mpi_library_matches("Open MPI v4.1.4, package: Debian OpenMPI"),
          "an MPICH build accepts Open MPI");
#elif defined(OPEN_MPI)
    CHECK(!iso__mpi_library_matches("MPICH Version:\t4.0.2\nMPICH Release date: ..."),
          "an Open MPI build accepts MPICH");
#endif
    tap_result(MPI_COMM_WORLD, "the library check accepts this MPI and refuses the other");
}

int main(int argc, char **argv)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Dims_create(size, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_set_errhandler(cart, MPI_ERRORS_RETURN);
    test_messages();
    test_case();
    test_explicit_mode();
    test_query();
    test_one_bad();
    test_verbose();
    test_misuse();
    test_mpi_library();
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
