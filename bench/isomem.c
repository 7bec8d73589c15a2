/* isomem: resident memory over many blocking calls of one collective, and
 * the same pattern in plain MPI: a leak or a cache that grows with calls shows as growth.
 *
 *   mpiexec -n 2 isomem [--coll allgather] [--alg bruck:datatype]
 *                       [--calls 50000] [--every 5000] [--bytes 8]
 *   mpiexec -n 1 isomem --plain-mpi [--calls 50000] [--every 5000]
 *
 * The first form runs blocking calls of --coll on 2D Moore radius 1
 * (periodic) with --alg (ALG:MODE sets iso_combine); the second creates,
 * commits, uses (one MPI_Sendrecv to itself) and frees one struct type over
 * MPI_BOTTOM per iteration, what datatype mode does per message of a
 * blocking call, with no library involved.  Every --every calls rank 0
 * prints VmRSS (/proc/self/status) and the bytes malloc has handed out
 * (mallinfo2), in MB.  Memory, not time: the figures do not depend on a
 * quiet machine. */
#define _GNU_SOURCE
#include <isocoll.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static double rss_mb(void)
{
    char line[256];
    double kb = -1;
    FILE *f = fopen("/proc/self/status", "r");
    while (f && fgets(line, sizeof line, f))
        if (!strncmp(line, "VmRSS:", 6))
            kb = atof(line + 6);
    if (f)
        fclose(f);
    return kb / 1024.0;
}

static void report(int rank, long calls)
{
    struct mallinfo2 mi = mallinfo2();
    if (rank == 0)
        printf("%10ld  %8.1f  %8.1f\n", calls, rss_mb(), (double)mi.uordblks / 1048576.0);
    fflush(stdout);
}

/* One struct type over MPI_BOTTOM per iteration, as datatype mode builds
 * per message of a blocking call. */
static void plain_mpi(long calls, long every)
{
    static int a[64], b[64];
    for (long n = 1; n <= calls; n++) {
        int len[2] = {1, 1};
        MPI_Aint disp[2];
        MPI_Datatype types[2] = {MPI_INT, MPI_INT}, st;
        TRY(MPI_Get_address(&a[n % 32], &disp[0]));
        TRY(MPI_Get_address(&a[32 + n % 32], &disp[1]));
        TRY(MPI_Type_create_struct(2, len, disp, types, &st));
        TRY(MPI_Type_commit(&st));
        TRY(MPI_Sendrecv(MPI_BOTTOM, 1, st, 0, 0, b, 2, MPI_INT, 0, 0, MPI_COMM_SELF,
                         MPI_STATUS_IGNORE));
        TRY(MPI_Type_free(&st));
        if (n % every == 0)
            report(0, n);
    }
}

int main(int argc, char **argv)
{
    const char *coll = "allgather", *alg = "bruck:datatype";
    long calls = 50000, every = 5000;
    int bytes = 8, plain = 0, rank, p, dims[2] = {0, 0}, periods[2] = {1, 1}, off[16], s = 0;
    char algname[32], *colon;
    MPI_Comm cart, iso;
    MPI_Info info;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    for (int k = 1; k < argc; k++) {
        if (!strcmp(argv[k], "--plain-mpi"))
            plain = 1;
        else if (k + 1 < argc && !strcmp(argv[k], "--coll"))
            coll = argv[++k];
        else if (k + 1 < argc && !strcmp(argv[k], "--alg"))
            alg = argv[++k];
        else if (k + 1 < argc && !strcmp(argv[k], "--calls"))
            calls = atol(argv[++k]);
        else if (k + 1 < argc && !strcmp(argv[k], "--every"))
            every = atol(argv[++k]);
        else if (k + 1 < argc && !strcmp(argv[k], "--bytes"))
            bytes = atoi(argv[++k]);
    }
    if (every < 1)
        every = 1;
    if (rank == 0)
        printf("# %s, %d ranks: calls, VmRSS MB, malloc'd MB\n",
               plain ? "plain MPI: struct type over MPI_BOTTOM per iteration" : coll, p);
    report(rank, 0);
    if (plain) {
        if (rank == 0)
            plain_mpi(calls, every);
        MPI_Finalize();
        return 0;
    }
    snprintf(algname, sizeof algname, "%s", alg);
    MPI_Info_create(&info);
    if ((colon = strchr(algname, ':')) != NULL) {
        *colon = '\0';
        MPI_Info_set(info, "iso_combine", colon + 1);
    }
    MPI_Info_set(info, "iso_algorithm", algname);
    MPI_Dims_create(p, 2, dims);
    TRY(MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart));
    for (int dy = -1; dy <= 1; dy++)
        for (int dx = -1; dx <= 1; dx++)
            if (dy || dx) {
                off[2 * s] = dy;
                off[2 * s + 1] = dx;
                s++;
            }
    TRY(Iso_neighborhood_create_with_info(cart, s, off, info, &iso));
    {
        int n = bytes / (int)sizeof(int) > 0 ? bytes / (int)sizeof(int) : 1;
        int *sb = calloc((size_t)(s * n), sizeof(int)), *rb = calloc((size_t)(s * n), sizeof(int));
        for (long c = 1; c <= calls; c++) {
            if (!strcmp(coll, "alltoall"))
                TRY(Iso_neighbor_alltoall(sb, n, MPI_INT, rb, n, MPI_INT, iso));
            else if (!strcmp(coll, "reduce"))
                TRY(Iso_neighbor_reduce(sb, rb, n, MPI_INT, MPI_SUM, iso));
            else
                TRY(Iso_neighbor_allgather(sb, n, MPI_INT, rb, n, MPI_INT, iso));
            if (c % every == 0)
                report(rank, c);
        }
        free(sb);
        free(rb);
    }
    TRY(Iso_neighborhood_free(&iso));
    MPI_Comm_free(&cart);
    MPI_Info_free(&info);
    MPI_Finalize();
    return 0;
}
