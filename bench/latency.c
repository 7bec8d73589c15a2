/* latency: the machine's physical references, so that every exchange time
 * can be read as a multiple of what the hardware and MPI allow:
 *
 *   pingpong  ranks 0 and 1 (any other ranks wait): half the round-trip
 *             time of a message of n bytes (MPI_Send/MPI_Recv), so
 *             latency at small n and n / time = bandwidth at large n
 *   memcpy    rank 0 copies n bytes between two buffers touched before
 *             (what moving the bytes of an exchange costs at least)
 *
 * Each repetition times a batch of calls (about 1 ms, at least one) and
 * reports the time per call.  Prints a table, and with --rows one line per
 * measurement (bench/run):
 *   @row exp=latency np=.. competitor=pingpong|memcpy bytes=N rep=.. time_us=..
 *
 *   mpiexec -n 2 latency [--sizes 1,64,4096,...] [--reps N] [--rows] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

#define MAXSIZES 32

/* Seconds per round trip of n bytes between ranks 0 and 1 over iters. */
static double pingpong(int rank, char *buf, int n, int iters)
{
    double t0;
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (int i = 0; i < iters && rank < 2; i++) {
        if (rank == 0) {
            TRY(MPI_Send(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD));
            TRY(MPI_Recv(buf, n, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
        } else {
            TRY(MPI_Recv(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE));
            TRY(MPI_Send(buf, n, MPI_BYTE, 0, 0, MPI_COMM_WORLD));
        }
    }
    return (MPI_Wtime() - t0) / iters;
}

/* Read after each copy, so that the copies are not optimised away. */
volatile char latency_sink;

/* Seconds per memcpy of n bytes over iters. */
static double copy(char *dst, const char *src, int n, int iters)
{
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        memcpy(dst, src, (size_t)n);
        latency_sink = dst[i % n];
    }
    return (MPI_Wtime() - t0) / iters;
}

int main(int argc, char **argv)
{
    int rank, nprocs, nsizes = 0, reps = 21, rows = 0, maxn = 1;
    int sizes[MAXSIZES];
    char *a, *b;
    double *t;

    TRY(MPI_Init(&argc, &argv));
    TRY(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    TRY(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--rows"))
            rows = 1;
        else if (!strcmp(argv[k], "--reps") && k + 1 < argc)
            reps = atoi(argv[++k]);
        else if (!strcmp(argv[k], "--sizes") && k + 1 < argc) {
            char *p = argv[++k], *end;
            while (*p && nsizes < MAXSIZES) {
                sizes[nsizes] = (int)strtol(p, &end, 10);
                if (end == p || sizes[nsizes] < 1 || (*end && *end != ','))
                    nsizes = -MAXSIZES - 1;
                else
                    nsizes++;
                p = *end == ',' ? end + 1 : end;
            }
        } else
            nsizes = -MAXSIZES - 1;
        if (nsizes < 0)
            break;
    }
    if (nsizes < 0 || reps < 1 || nprocs < 2) {
        if (rank == 0)
            fprintf(stderr, "usage: mpiexec -n 2 latency [--sizes 1,64,4096] [--reps N] "
                            "[--rows] (at least 2 ranks)\n");
        MPI_Finalize();
        return 2;
    }
    if (nsizes == 0) /* 1 B .. 16 MiB in steps of 4 */
        for (int n = 1; n <= 16 << 20; n *= 4)
            sizes[nsizes++] = n;
    for (int z = 0; z < nsizes; z++)
        maxn = sizes[z] > maxn ? sizes[z] : maxn;
    a = malloc((size_t)maxn);
    b = malloc((size_t)maxn);
    t = malloc(sizeof(double) * 2 * (size_t)reps);
    if (!a || !b || !t)
        die("malloc", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    memset(a, 1, (size_t)maxn);
    memset(b, 2, (size_t)maxn);

    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING];
        int len;
        MPI_Get_library_version(lib, &len);
        lib[strcspn(lib, "\n")] = '\0';
        printf("# latency: ping-pong ranks 0-1 of %d (half round trip), memcpy on rank 0; "
               "medians of %d repetitions\n# MPI: %s\n", nprocs, reps, lib);
        printf("| bytes | pingpong us | MB/s | memcpy us | MB/s |\n|--:|--:|--:|--:|--:|\n");
    }
    for (int z = 0; z < nsizes; z++) {
        int n = sizes[z], iters;
        double pilot = pingpong(rank, a, n, 2), cp;
        TRY(MPI_Bcast(&pilot, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD));
        iters = pilot > 1e-3 ? 1 : (int)(1e-3 / (pilot > 1e-7 ? pilot : 1e-7));
        for (int rep = 0; rep < reps; rep++) {
            t[rep] = pingpong(rank, a, n, iters) / 2;
            cp = copy(b, a, n, 1); /* pilot */
            t[reps + rep] = copy(b, a, n, cp > 1e-3 ? 1 : (int)(1e-3 / (cp > 1e-8 ? cp : 1e-8)));
        }
        if (rank != 0)
            continue;
        if (rows)
            for (int rep = 0; rep < 2 * reps; rep++)
                printf("@row exp=latency np=%d competitor=%s bytes=%d rep=%d time_us=%.4f\n",
                       nprocs, rep < reps ? "pingpong" : "memcpy", n, rep % reps, t[rep] * 1e6);
        qsort(t, (size_t)reps, sizeof(double), bench_cmp_double);
        qsort(t + reps, (size_t)reps, sizeof(double), bench_cmp_double);
        printf("| %d | %.3f | %.1f | %.3f | %.1f |\n", n, t[reps / 2] * 1e6, n / t[reps / 2] / 1e6,
               t[reps + reps / 2] * 1e6, n / t[reps + reps / 2] / 1e6);
        fflush(stdout);
    }
    free(a);
    free(b);
    free(t);
    MPI_Finalize();
    return 0;
}
