/* firstcalls: the time of each of a process's first exchanges, to see the
 * MPI library's own warm-up (DESIGN.md, "Runtime tuning of auto": the MPI
 * library's own warm-up).  Processes pair up (rank r with r ^ 1; an odd
 * last one sits out); each call posts MSGS MPI_Irecv and MSGS MPI_Isend of
 * BYTES to the partner and waits for all, as a direct neighborhood
 * exchange does.  Plain MPI: no isocoll.
 *
 *   firstcalls [--bytes B] [--msgs M] [--calls N] [--before BYTES:CALLS]
 *              [--sleep-us U]
 *
 * --before runs CALLS exchanges of BYTES first (untimed: does another size
 * warm this one?); --sleep-us sleeps before every timed call (is the
 * warm-up a time or a count?).  Rank 0 prints one line: the N call times
 * in microseconds, then the calls before the first one within 2x of the
 * last half's median ("slow calls") and that many x MSGS messages. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define MAX_MSGS 64
#define MAX_CALLS 1000

static void die(const char *msg)
{
    fprintf(stderr, "firstcalls: %s\n", msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* One exchange of msgs messages of bytes with partner (MPI_PROC_NULL: none). */
static double exchange(char *sb, char *rb, int bytes, int msgs, int partner)
{
    MPI_Request rq[2 * MAX_MSGS];
    MPI_Status st[2 * MAX_MSGS]; /* not MPI_STATUSES_IGNORE: GCC 12 warns on it */
    double t0 = MPI_Wtime();
    for (int i = 0; i < msgs; i++)
        MPI_Irecv(rb + (size_t)i * bytes, bytes, MPI_BYTE, partner, i, MPI_COMM_WORLD, &rq[i]);
    for (int i = 0; i < msgs; i++)
        MPI_Isend(sb + (size_t)i * bytes, bytes, MPI_BYTE, partner, i, MPI_COMM_WORLD,
                  &rq[msgs + i]);
    MPI_Waitall(2 * msgs, rq, st);
    return MPI_Wtime() - t0;
}

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
    int bytes = 4096, msgs = 8, calls = 40, before_bytes = 0, before_calls = 0, sleep_us = 0;
    int rank, size, partner, slow;
    double t[MAX_CALLS], tail[MAX_CALLS], settled;
    char *sb, *rb;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    for (int k = 1; k < argc; k++) {
        const char *v = k + 1 < argc ? argv[k + 1] : NULL;
        if (v == NULL)
            die("an option without its value");
        if (!strcmp(argv[k], "--bytes"))
            bytes = atoi(v);
        else if (!strcmp(argv[k], "--msgs"))
            msgs = atoi(v);
        else if (!strcmp(argv[k], "--calls"))
            calls = atoi(v);
        else if (!strcmp(argv[k], "--before")) {
            if (sscanf(v, "%d:%d", &before_bytes, &before_calls) != 2)
                die("--before BYTES:CALLS");
        } else if (!strcmp(argv[k], "--sleep-us"))
            sleep_us = atoi(v);
        else
            die("usage: firstcalls [--bytes B] [--msgs M] [--calls N] [--before BYTES:CALLS] "
                "[--sleep-us U]");
        k++;
    }
    if (bytes < 1 || msgs < 1 || msgs > MAX_MSGS || calls < 2 || calls > MAX_CALLS ||
        before_bytes < 0 || before_calls < 0 || sleep_us < 0)
        die("--bytes >= 1, 1 <= --msgs <= 64, 2 <= --calls <= 1000, --before and --sleep-us >= 0");
    partner = (rank ^ 1) < size ? rank ^ 1 : MPI_PROC_NULL;
    {
        size_t most = (size_t)msgs * (size_t)(bytes > before_bytes ? bytes : before_bytes);
        sb = calloc(most, 1);
        rb = calloc(most, 1);
        if (sb == NULL || rb == NULL)
            die("out of memory");
    }
    for (int k = 0; k < before_calls; k++)
        exchange(sb, rb, before_bytes, msgs, partner);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int k = 0; k < calls; k++) {
        if (sleep_us > 0)
            nanosleep(&(struct timespec){sleep_us / 1000000, (sleep_us % 1000000) * 1000L}, NULL);
        t[k] = exchange(sb, rb, bytes, msgs, partner);
    }
    /* settled: the median of the last half; the slow calls end at the
     * first call within 2x of it */
    memcpy(tail, t + calls / 2, sizeof(double) * (size_t)(calls - calls / 2));
    qsort(tail, (size_t)(calls - calls / 2), sizeof(double), cmp_double);
    settled = tail[(calls - calls / 2) / 2];
    for (slow = 0; slow < calls && t[slow] > 2.0 * settled; slow++)
        ;
    if (rank == 0) {
        printf("firstcalls bytes=%d msgs=%d before=%d:%d sleep_us=%d us:", bytes, msgs,
               before_bytes, before_calls, sleep_us);
        for (int k = 0; k < calls; k++)
            printf(" %.1f", t[k] * 1e6);
        printf(" | settled=%.1f us slow_calls=%d slow_messages=%d\n", settled * 1e6, slow,
               slow * msgs);
    }
    free(sb);
    free(rb);
    MPI_Finalize();
    return 0;
}
