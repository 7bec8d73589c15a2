/* Minimal TAP for MPI test programs: each check counts local errors; a
 * result line sums them over the communicator and rank 0 prints
 * "ok - what" or "not ok - what".  tests/tap-mpi numbers the lines.
 *
 *   CHECK(cond, fmt, ...)            an error unless cond holds
 *   CHECK_EQ_INT(got, want, fmt, ...) an error unless got == want (compared
 *                                    as long long); the message gives both
 *   tap_result(comm, fmt, ...)       one result line (collective)
 *   tap_skip(comm, why, fmt, ...)    one skipped result line (collective)
 *
 * Failed checks print "rank R FILE:LINE: message" to stderr, the first 10
 * per rank only. */
#ifndef ISO_TEST_TAP_H
#define ISO_TEST_TAP_H
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static long tap_errors; /* local error count since the last tap_result */
static int tap_reported; /* messages printed by this rank (capped) */

/* Counts one error and prints its message (unless 10 were printed
 * already); tail, if not NULL, is appended to the message. */
__attribute__((format(printf, 4, 5), unused)) static void
tap_fail_(const char *file, int line, const char *tail, const char *fmt, ...)
{
    va_list ap;
    int r;
    tap_errors++;
    if (tap_reported++ >= 10)
        return;
    MPI_Comm_rank(MPI_COMM_WORLD, &r);
    fprintf(stderr, "rank %d %s:%d: ", r, file, line);
    va_start(ap, fmt);
    vfprintf(stderr, fmt, ap);
    va_end(ap);
    fprintf(stderr, "%s\n", tail ? tail : "");
}

#define CHECK(cond, ...)                                                                          \
    do {                                                                                          \
        if (!(cond))                                                                              \
            tap_fail_(__FILE__, __LINE__, NULL, __VA_ARGS__);                                     \
    } while (0)

/* CHECK_EQ_INT(got, want, fmt, ...): got and want are evaluated once each
 * and compared as long long, so any integer type (int, MPI_Aint, MPI_Count,
 * size_t up to LLONG_MAX) fits.  On a mismatch the message is
 * "fmt...: got G (expr), expected W (expr)". */
#define CHECK_EQ_INT(got, want, ...)                                                              \
    do {                                                                                          \
        long long tap_got_ = (long long)(got), tap_want_ = (long long)(want);                     \
        if (tap_got_ != tap_want_) {                                                              \
            char tap_tail_[256];                                                                  \
            snprintf(tap_tail_, sizeof tap_tail_, ": got %lld (%s), expected %lld (%s)",          \
                     tap_got_, #got, tap_want_, #want);                                           \
            tap_fail_(__FILE__, __LINE__, tap_tail_, __VA_ARGS__);                                \
        }                                                                                         \
    } while (0)

/* Sums the errors over comm (collective), prints the line from rank 0 and
 * starts the next count.  why == NULL: "ok - WHAT" or "not ok - WHAT (N
 * errors)".  why != NULL (a skip): "ok - WHAT # SKIP WHY", or, if errors
 * were counted before the skip, "not ok - WHAT (N errors before the skip:
 * WHY)" -- a skip never hides a failure. */
__attribute__((unused)) static long
tap_line_(MPI_Comm comm, const char *why, const char *fmt, va_list ap)
{
    long total = 0;
    int rank;
    MPI_Allreduce(&tap_errors, &total, 1, MPI_LONG, MPI_SUM, comm);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        printf(total ? "not ok - " : "ok - ");
        vprintf(fmt, ap);
        if (total && why)
            printf(" (%ld errors before the skip: %s)", total, why);
        else if (total)
            printf(" (%ld errors)", total);
        else if (why)
            printf(" # SKIP %s", why);
        printf("\n");
        fflush(stdout);
    }
    tap_errors = 0;
    return total;
}

/* Collective over comm.  Returns the global number of errors. */
__attribute__((format(printf, 2, 3), unused)) static long
tap_result(MPI_Comm comm, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    long total = tap_line_(comm, NULL, fmt, ap);
    va_end(ap);
    return total;
}

/* The one way to report a skipped test: collective over comm like
 * tap_result, whose line it replaces.  fmt... is the test's description,
 * why the reason.  tests/tap-mpi keeps the "# SKIP" directive when it
 * numbers the line, and prove counts the test as skipped.  Neither text
 * may contain '#': TAP reads the first '#' as the start of the directive,
 * so the skip would turn into a plain pass. */
__attribute__((format(printf, 3, 4), unused)) static long
tap_skip(MPI_Comm comm, const char *why, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    long total = tap_line_(comm, why, fmt, ap);
    va_end(ap);
    return total;
}

/* Does the error string text contain want?  MPI cuts error strings at
 * MPI_MAX_ERROR_STRING - 1 characters (1023 in MPICH and Open MPI, 99 in
 * SimGrid's SMPI): a text cut there holds what fits of want, a prefix of it
 * ending the text; a want that would start after the cut cannot be
 * checked, which is said on stdout (a TAP comment) and not counted. */
__attribute__((unused)) static int tap_text_has(const char *text, const char *want)
{
    size_t len = strlen(text), n = strlen(want);
    if (strstr(text, want) != NULL)
        return 1;
    if (len + 1 < MPI_MAX_ERROR_STRING)
        return 0;
    for (size_t k = n - 1; k > 0; k--)
        if (k <= len && memcmp(text + len - k, want, k) == 0)
            return 1;
    printf("# not checked: \"%s\" would follow the cut of \"%s\" (MPI_MAX_ERROR_STRING %d)\n",
           want, text, MPI_MAX_ERROR_STRING);
    return 1;
}

/* The runner (tests/tap-mpi) runs an ALG:datatype entry with
 * ISO_ALGORITHM=ALG and ISO_COMBINE=datatype.  Naming a combining algorithm
 * together with datatype mode is an error for the v and w forms of alltoall
 * and allgather (datatype mode cannot carry them: tests/t_diagnostics.c),
 * so tests that run those forms on neighborhoods made from the environment
 * ask this and run them in pack mode. */
__attribute__((unused)) static int tap_matrix_vw_needs_pack(void)
{
    const char *alg = getenv("ISO_ALGORITHM"), *mode = getenv("ISO_COMBINE");
    return alg && mode && strcasecmp(mode, "datatype") == 0 &&
           (strcasecmp(alg, "dimwise") == 0 || strcasecmp(alg, "bruck") == 0);
}
#endif
