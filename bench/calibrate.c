/* calibrate: measures the constants of isocoll's cost model on this machine
 * and writes them as a cost file (ISO_COST_FILE format).  Ranks work in pairs
 * (rank r with r ^ 1, all pairs at once), so any even number of ranks
 * works: calibrate at the rank count and placement the program will run
 * with (an oversubscribed machine has much dearer rounds):
 *
 *   time = gamma * phases + alpha * messages + beta * bytes
 *          combining, packed:        + pack * 2 * bytes + probe * messages
 *          combining, datatype mode: + dtype * bytes + build * 2 * messages
 *
 *   alpha  per message: slope of the time of one round in which each rank
 *          sends m messages of 512 bytes to the other (and receives m),
 *          over m, minus 512 * beta.  Small messages cost more per byte
 *          than beta (eager copies): on this machine MPICH 4.0 takes about
 *          0.2 us per 8-byte message but 0.7 us per 512-byte one, and a
 *          model fitted at 8 bytes preferred direct where combining was 2x
 *          faster.  512 bytes (--alpha-bytes N) is the middle of the block
 *          sizes where combining matters
 *   gamma  per round: slope of the time of r dependent rounds of one 8-byte
 *          exchange, over r, minus alpha (a round also sends a message);
 *          with 4, 8, ... ranks the rounds cycle through partners rank ^ 1,
 *          ^ 2, ^ 4, ... as the combining schedules' phases do
 *   beta   per byte: slope of the time of one exchange of n bytes, over n
 *   pack   per byte: half the slope of MPI_Pack + MPI_Unpack of n bytes
 *   probe  per message received by MPI_Mprobe + MPI_Imrecv (as packed
 *          messages are): slope of r dependent such rounds, over r, minus
 *          the per-round slope of plain rounds
 *   dtype  per byte of a message described by a struct datatype over
 *          MPI_BOTTOM, as the library's messages are in datatype mode: one
 *          exchange of 8 blocks of 512 MPI_BYTEs with gaps between them,
 *          minus one exchange of the same 4 KiB contiguous, over 4 KiB.
 *          (MPICH 4.0's datatype engine copies MPI_BYTE blocks of this
 *          size several times slower than MPI_DOUBLE ones or than 4 KiB
 *          blocks; the constant is measured where it hurts, so that auto
 *          takes datatype mode only where it pays.)
 *   build  per message: an exchange of 8 blocks of 8 bytes whose struct
 *          types are created, committed and freed around it, minus the same
 *          exchange with types built once (MPI libraries do part of the
 *          work at the first use of a type)
 *   eager, rndv  the eager limit and the extra time of a message above it
 *          (rendezvous: a handshake first): one exchange of 2^k and of
 *          2^k + 64 bytes for k = 10..17; the k with the largest jump
 *          (minus 64 * beta) is the limit, the jump is rndv (none below 1%
 *          of the time: eager 0, rndv 0, as in SMPI's model).  On this
 *          machine MPICH 4.0.2 jumps above 8 KiB, Open MPI 4.1 above 4 KiB,
 *          by 2-3 us at 2 ranks: combined messages of 1 KiB blocks cross it
 *          where direct's do not (the series versus-mpi-peer)
 *
 * Every point is the median over repetitions of (batch time / calls),
 * maximised over the ranks; the points of all series are measured
 * interleaved (round-robin), each batch after a barrier; a slope is the
 * median of the slopes between all pairs of points of its series.
 *
 *   mpiexec -n 2 calibrate [FILE] [--reps N] [--alpha-bytes N]   (FILE: stdout)
 *
 * The values come first in the file, comments (lines starting with #) after
 * them. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"

enum { S_ALPHA, S_GAMMA, S_BETA, S_PACK, S_PROBE, S_DTYPE, S_BUILD, S_RNDV, NSERIES };
static const char *const series_name[NSERIES] = {"alpha", "gamma", "beta", "pack",
                                                 "probe", "dtype", "build", "rndv"};
static const char *const series_x[NSERIES] = {
    "messages per round", "rounds", "bytes", "bytes", "rounds",
    "bytes (0: the same 4 KiB contiguous)",
    "new types (0: built once)", "bytes (2^k and 2^k + 64)"};

typedef struct {
    int series;
    long x;     /* messages, rounds or bytes */
    int iters;  /* calls per batch, the same on all ranks */
    double *t;  /* per repetition, seconds per call (max over ranks on rank 0) */
    double med;
} probe;

#define MAXMSG 64
#define MAXBYTES (4L << 20)
#define NBLOCKS 8

static int peer, rank_, partner_bits = 1;

/* The partner in dependent round r: rank ^ 1, ^ 2, ^ 4, ... in turn when
 * the number of ranks is a power of two (a dimension exchange, as the
 * combining schedules do: each round waits for a different process), else
 * always rank ^ 1. */
static int round_partner(long r)
{
    return rank_ ^ (1 << (r % partner_bits));
}
static long alpha_bytes = 512; /* --alpha-bytes */
static char *sendbuf, *recvbuf, *packbuf;
static MPI_Request reqs[2 * MAXMSG];
static MPI_Status stats[2 * MAXMSG];
/* A committed struct over MPI_BOTTOM of NBLOCKS blocks of b bytes, 2b
 * bytes apart in buf. */
static MPI_Datatype scattered(char *buf, long b)
{
    int len[NBLOCKS];
    MPI_Aint disp[NBLOCKS];
    MPI_Datatype types[NBLOCKS], t;
    for (int k = 0; k < NBLOCKS; k++) {
        len[k] = (int)b;
        types[k] = MPI_BYTE;
        TRY(MPI_Get_address(buf + (size_t)k * 2 * (size_t)b, &disp[k]));
    }
    TRY(MPI_Type_create_struct(NBLOCKS, len, disp, types, &t));
    TRY(MPI_Type_commit(&t));
    return t;
}

/* One exchange of one scattered message each way. */
static void scattered_exchange(MPI_Datatype send, MPI_Datatype recv)
{
    TRY(MPI_Irecv(MPI_BOTTOM, 1, recv, peer, 0, MPI_COMM_WORLD, &reqs[0]));
    TRY(MPI_Isend(MPI_BOTTOM, 1, send, peer, 0, MPI_COMM_WORLD, &reqs[1]));
    TRY(MPI_Waitall(2, reqs, stats));
}

#define NDTYPE 2
static const long dtype_x[NDTYPE] = {0, NBLOCKS * 512L};
static MPI_Datatype blocktype[2][NDTYPE]; /* [send/recv][dtype_x index] */

/* One round of one 8-byte message each way, received as packed messages
 * are: matched by MPI_Mprobe, then MPI_Imrecv. */
static void probed_exchange(void)
{
    MPI_Message msg;
    MPI_Status st;
    TRY(MPI_Isend(sendbuf, 8, MPI_BYTE, peer, 0, MPI_COMM_WORLD, &reqs[0]));
    TRY(MPI_Mprobe(peer, 0, MPI_COMM_WORLD, &msg, &st));
    TRY(MPI_Imrecv(recvbuf, 8, MPI_BYTE, &msg, &reqs[1]));
    TRY(MPI_Waitall(2, reqs, stats));
}

/* One round: m messages of n bytes each way between the two ranks. */
static void exchange(int m, long n)
{
    for (int k = 0; k < m; k++)
        TRY(MPI_Irecv(recvbuf + (size_t)k * n, (int)n, MPI_BYTE, peer, k, MPI_COMM_WORLD,
                      &reqs[k]));
    for (int k = 0; k < m; k++)
        TRY(MPI_Isend(sendbuf + (size_t)k * n, (int)n, MPI_BYTE, peer, k, MPI_COMM_WORLD,
                      &reqs[m + k]));
    TRY(MPI_Waitall(2 * m, reqs, stats));
}

static void call(const probe *p)
{
    int pos = 0;
    switch (p->series) {
    case S_ALPHA:
        exchange((int)p->x, alpha_bytes);
        break;
    case S_GAMMA:
        for (long r = 0; r < p->x; r++) {
            peer = round_partner(r);
            exchange(1, 8);
        }
        peer = rank_ ^ 1;
        break;
    case S_BETA:
    case S_RNDV:
        exchange(1, p->x);
        break;
    case S_PACK:
        TRY(MPI_Pack(sendbuf, (int)p->x, MPI_BYTE, packbuf, (int)p->x, &pos, MPI_COMM_WORLD));
        pos = 0;
        TRY(MPI_Unpack(packbuf, (int)p->x, &pos, recvbuf, (int)p->x, MPI_BYTE,
                       MPI_COMM_WORLD));
        break;
    case S_PROBE:
        for (long r = 0; r < p->x; r++) {
            peer = round_partner(r);
            probed_exchange();
        }
        peer = rank_ ^ 1;
        break;
    case S_DTYPE:
        if (p->x == 0)
            exchange(1, dtype_x[1]);
        else
            scattered_exchange(blocktype[0][1], blocktype[1][1]);
        break;
    case S_BUILD:
        if (p->x == 0) {
            scattered_exchange(blocktype[0][0], blocktype[1][0]);
        } else {
            MPI_Datatype s = scattered(sendbuf, 8), r = scattered(recvbuf, 8);
            scattered_exchange(s, r);
            TRY(MPI_Type_free(&s));
            TRY(MPI_Type_free(&r));
        }
        break;
    }
}

static double batch(const probe *p, int iters)
{
    double t0;
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        call(p);
    return (MPI_Wtime() - t0) / iters;
}

/* Slope of the medians of one series over x: the median of the slopes
 * between all pairs of points (Theil-Sen), so one disturbed point does not
 * spoil the fit. */
static double slope(const probe *P, int np, int series)
{
    double s[32 * 31 / 2];
    int n = 0;
    for (int i = 0; i < np; i++)
        for (int j = i + 1; j < np; j++)
            if (P[i].series == series && P[j].series == series && P[i].x != P[j].x)
                s[n++] = (P[j].med - P[i].med) / (double)(P[j].x - P[i].x);
    if (n == 0)
        return 0;
    qsort(s, (size_t)n, sizeof(double), bench_cmp_double);
    return n % 2 ? s[n / 2] : (s[n / 2 - 1] + s[n / 2]) / 2;
}

int main(int argc, char **argv)
{
    static const long alpha_x[] = {1, 2, 4, 8, 16, 32, 64};
    static const long gamma_x[] = {1, 2, 4, 8, 16, 32};
    static const long beta_x[] = {64L << 10, 256L << 10, 1L << 20, 2L << 20, 4L << 20};
    static const long pack_x[] = {64L << 10, 256L << 10, 1L << 20, 2L << 20, 4L << 20};
    static const long probe_x[] = {1, 2, 4, 8, 16, 32};
    static const long build_x[] = {0, 2};
    static const long rndv_x[] = {1024, 1088, 2048, 2112, 4096, 4160, 8192, 8256,
                                  16384, 16448, 32768, 32832, 65536, 65600, 131072, 131136};
    probe P[64];
    int np = 0, rank, size, reps = 31;
    const char *path = NULL;
    double target = 2e-3; /* seconds per batch */

    TRY(MPI_Init(&argc, &argv));
    TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    TRY(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    TRY(MPI_Comm_size(MPI_COMM_WORLD, &size));
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--alpha-bytes") && k + 1 < argc)
            alpha_bytes = atol(argv[++k]);
        else if (!strcmp(argv[k], "--reps") && k + 1 < argc)
            reps = atoi(argv[++k]);
        else if (argv[k][0] != '-' && path == NULL)
            path = argv[k];
        else {
            if (rank == 0)
                fprintf(stderr,
                        "usage: mpiexec -n 2 calibrate [FILE] [--reps N] [--alpha-bytes N]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (size % 2 != 0 || reps < 3) {
        if (rank == 0)
            fprintf(stderr, "calibrate: run with an even number of ranks (and --reps >= 3)\n");
        MPI_Finalize();
        return 2;
    }
    peer = rank ^ 1;
    rank_ = rank;
    if ((size & (size - 1)) == 0)
        while ((1 << partner_bits) < size)
            partner_bits++;
    sendbuf = malloc(MAXBYTES);
    recvbuf = malloc(MAXBYTES);
    packbuf = malloc(MAXBYTES);
    if (!sendbuf || !recvbuf || !packbuf) {
        fprintf(stderr, "calibrate: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    memset(sendbuf, 1, MAXBYTES);
    memset(recvbuf, 2, MAXBYTES);
    memset(packbuf, 3, MAXBYTES);

#define ADD(series_, xs_)                                                                         \
    for (size_t k_ = 0; k_ < sizeof xs_ / sizeof xs_[0]; k_++)                                    \
        P[np++] = (probe){.series = series_, .x = xs_[k_]};
    ADD(S_ALPHA, alpha_x)
    ADD(S_GAMMA, gamma_x)
    ADD(S_BETA, beta_x)
    ADD(S_PACK, pack_x)
    ADD(S_PROBE, probe_x)
    ADD(S_DTYPE, dtype_x)
    ADD(S_BUILD, build_x)
    ADD(S_RNDV, rndv_x)
#undef ADD
    for (int k = 0; k < NDTYPE; k++) {
        blocktype[0][k] = scattered(sendbuf, k ? dtype_x[k] / NBLOCKS : 8);
        blocktype[1][k] = scattered(recvbuf, k ? dtype_x[k] / NBLOCKS : 8);
    }

    /* warm-up, and calls per batch from a pilot (the same on all ranks) */
    for (int k = 0; k < np; k++) {
        double t = 1e30;
        batch(&P[k], 2);
        for (int w = 0; w < 5; w++) { /* the fastest of 5: robust to interruptions */
            double tw = batch(&P[k], 2);
            t = tw < t ? tw : t;
        }
        TRY(MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
        P[k].iters = t * 10000 < target ? 10000 : t > target ? 1 : (int)(target / t);
        P[k].t = malloc(sizeof(double) * (size_t)reps);
        if (P[k].t == NULL)
            MPI_Abort(MPI_COMM_WORLD, 2);
    }
    /* the measurement, interleaved */
    for (int rep = 0; rep < reps; rep++)
        for (int j = 0; j < np; j++) {
            probe *p = &P[(j + rep) % np];
            p->t[rep] = batch(p, p->iters);
        }
    for (int k = 0; k < np; k++) {
        TRY(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : P[k].t, P[k].t, reps, MPI_DOUBLE, MPI_MAX,
                       0, MPI_COMM_WORLD));
        qsort(P[k].t, (size_t)reps, sizeof(double), bench_cmp_double);
        P[k].med = P[k].t[reps / 2];
    }

    if (rank == 0) {
        double beta = slope(P, np, S_BETA), alpha = slope(P, np, S_ALPHA) - alpha_bytes * beta;
        double per_round = slope(P, np, S_GAMMA), pack = slope(P, np, S_PACK) / 2;
        double gamma = per_round - alpha;
        double probed = slope(P, np, S_PROBE) - per_round;
        double dtype = slope(P, np, S_DTYPE), build = slope(P, np, S_BUILD);
        double rndv = 0;
        long eager = 0;
        /* pairs 2^k, 2^k + 64: the largest jump, if any is above 1% of the
         * time (a simulated network without a rendezvous protocol has only
         * rounding errors there: then eager 0 and rndv 0, no rendezvous) */
        for (int k = 0; k + 1 < np; k++)
            if (P[k].series == S_RNDV && P[k + 1].series == S_RNDV && (P[k].x & 64) == 0) {
                double jump = P[k + 1].med - P[k].med - 64 * beta;
                if (jump > rndv && jump > 0.01 * P[k + 1].med)
                    rndv = jump, eager = P[k].x;
            }
        char libver[MPI_MAX_LIBRARY_VERSION_STRING], host[MPI_MAX_PROCESSOR_NAME], *nl;
        char when[64];
        time_t now = time(NULL);
        int len, simulated;
        FILE *out = stdout, *log = stderr;

        TRY(MPI_Get_library_version(libver, &len));
        TRY(MPI_Get_processor_name(host, &len));
        if ((nl = strchr(libver, '\n')) != NULL)
            *nl = '\0';
        simulated = strncmp(libver, "SMPI", 4) == 0;
        strftime(when, sizeof when, "%Y-%m-%d %H:%M:%S", localtime(&now));
        if (path) {
            if ((out = fopen(path, "w")) == NULL) {
                fprintf(stderr, "calibrate: cannot write %s\n", path);
                MPI_Abort(MPI_COMM_WORLD, 2);
            }
            log = stdout;
        }
        fprintf(log, "%-6s %20s %8s %14s %14s %14s\n", "series", "x", "calls", "median us",
                "min us", "max us");
        for (int k = 0; k < np; k++)
            fprintf(log, "%-6s %20ld %8d %14.3f %14.3f %14.3f\n", series_name[P[k].series],
                    P[k].x, P[k].iters, P[k].med * 1e6, P[k].t[0] * 1e6,
                    P[k].t[reps - 1] * 1e6);
        fprintf(log, "fits: per message %.3g s, per dependent round %.3g s (gamma = that - "
                "alpha), per byte %.3g s (%.2f GB/s), pack per byte %.3g s (%.2f GB/s)\n",
                alpha, per_round, beta, beta > 0 ? 1e-9 / beta : 0.0, pack,
                pack > 0 ? 1e-9 / pack : 0.0);
        fprintf(log, "fits: per probed receive %.3g s, per datatype byte %.3g s, per struct "
                "type built %.3g s, eager limit %ld bytes, rendezvous %.3g s more\n", probed,
                dtype, build, eager, rndv);
        if (gamma < 0) {
            fprintf(log, "note: measured gamma %.3g s < 0 (noise); written as 0\n", gamma);
            gamma = 0;
        }
        if (probed < 0) {
            fprintf(log, "note: measured probe %.3g s < 0 (noise); written as 0\n", probed);
            probed = 0;
        }
        if (dtype < 0) {
            fprintf(log, "note: measured dtype %.3g s < 0 (noise); written as 0\n", dtype);
            dtype = 0;
        }
        if (simulated && pack <= 0) /* SMPI, smpi/simulate-computation:no */
            fprintf(log, "note: pack %.3g s: the simulator charges no time for CPU work; "
                         "pack, dtype and build are 0 there\n", pack);
        if (alpha <= 0 || beta <= 0 || (pack <= 0 && !simulated))
            fprintf(log, "warning: a non-positive slope: the machine was probably busy; "
                         "measure again\n");
        fprintf(out, "alpha %.4g\nbeta %.4g\ngamma %.4g\npack %.4g\nprobe %.4g\ndtype %.4g\n"
                "build %.4g\neager %ld\nrndv %.4g\n", alpha, beta, gamma, pack, probed, dtype,
                build, eager, rndv);
        fprintf(out, "# isocoll cost model, bench/calibrate, %s, %s, %d ranks, %d reps, %s\n",
                host, libver, size, reps, when);
        fprintf(out, "# series (x: median seconds per call):");
        for (int s = 0; s < NSERIES; s++) {
            fprintf(out, "\n# %s over %s:", series_name[s], series_x[s]);
            for (int k = 0; k < np; k++)
                if (P[k].series == s)
                    fprintf(out, " %ld:%.3g", P[k].x, P[k].med);
        }
        fprintf(out, "\n");
        if (path) {
            fclose(out);
            fprintf(log, "wrote %s\n", path);
        }
    }
    for (int k = 0; k < np; k++)
        free(P[k].t);
    for (int k = 0; k < NDTYPE; k++)
        for (int side = 0; side < 2; side++)
            TRY(MPI_Type_free(&blocktype[side][k]));
    free(sendbuf);
    free(recvbuf);
    free(packbuf);
    MPI_Finalize();
    return 0;
}
