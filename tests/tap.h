/* Minimal TAP for MPI test programs: each check counts local errors; a
 * result line sums them over the communicator and rank 0 prints
 * "ok - what" or "not ok - what".  tests/tap-mpi numbers the lines. */
#ifndef ISO_TEST_TAP_H
#define ISO_TEST_TAP_H
#include <mpi.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

static long tap_errors; /* local error count since the last tap_result */
static int tap_reported; /* messages printed by this rank (capped) */

#define CHECK(cond, ...)                                                        \
    do {                                                                        \
        if (!(cond)) {                                                          \
            tap_errors++;                                                       \
            if (tap_reported++ < 10) {                                          \
                int r_;                                                         \
                MPI_Comm_rank(MPI_COMM_WORLD, &r_);                             \
                fprintf(stderr, "rank %d %s:%d: ", r_, __FILE__, __LINE__);     \
                fprintf(stderr, __VA_ARGS__);                                   \
                fputc('\n', stderr);                                            \
            }                                                                   \
        }                                                                       \
    } while (0)

/* Collective over comm.  Returns the global number of errors. */
__attribute__((format(printf, 2, 3), unused)) static long
tap_result(MPI_Comm comm, const char *fmt, ...)
{
    long total = 0;
    int rank;
    va_list ap;
    MPI_Allreduce(&tap_errors, &total, 1, MPI_LONG, MPI_SUM, comm);
    MPI_Comm_rank(comm, &rank);
    if (rank == 0) {
        printf(total ? "not ok - " : "ok - ");
        va_start(ap, fmt);
        vprintf(fmt, ap);
        va_end(ap);
        if (total)
            printf(" (%ld errors)", total);
        printf("\n");
        fflush(stdout);
    }
    tap_errors = 0;
    return total;
}
#endif
