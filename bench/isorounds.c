/* isorounds: communication rounds, messages and block hops per process of
 * every algorithm for the standard neighborhoods (von Neumann and Moore,
 * radius 1..3, d = 1..4), from Iso_schedule_info.  Schedules are local
 * computations and their structure does not depend on the torus size, so
 * one process on a periodic torus with dimensions of size 1 reports the
 * figures of any torus whose dimensions are all large enough.
 *   mpiexec -n 1 isorounds [--markdown] */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXD 4
static const char *const algs[] = {"direct", "dimwise", "bruck", "auto"};
static const char *const colls[] = {"alltoall", "allgather", "reduce", "scatter_reduce"};

/* Offsets c with 0 < norm(c) <= r, row-major; Manhattan or Chebyshev norm. */
static int shell(int d, int r, int manhattan, int **out)
{
    int c[MAXD], n = 0, cap = 16;
    int *off = malloc(sizeof(int) * (size_t)cap * (size_t)d);
    for (int j = 0; j < d; j++)
        c[j] = -r;
    for (;;) {
        int norm = 0;
        for (int j = 0; j < d; j++) {
            int a = abs(c[j]);
            norm = manhattan ? norm + a : (a > norm ? a : norm);
        }
        if (norm > 0 && norm <= r) {
            if (n == cap) {
                cap *= 2;
                off = realloc(off, sizeof(int) * (size_t)cap * (size_t)d);
            }
            memcpy(off + (size_t)n * d, c, sizeof(int) * (size_t)d);
            n++;
        }
        int j = d - 1;
        while (j >= 0 && c[j] == r)
            c[j--] = -r;
        if (j < 0)
            break;
        c[j]++;
    }
    *out = off;
    return n;
}

int main(int argc, char **argv)
{
    int md = argc > 1 && !strcmp(argv[1], "--markdown"), rank;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0) {
        printf(md ? "| shape | r | d | s | collective |" : "%-10s %2s %2s %5s %-14s", "shape", "r",
               "d", "s", "collective");
        for (int a = 0; a < 4; a++)
            printf(md ? " %s rounds/msgs/hops |" : " %22s", algs[a]);
        printf("\n");
        if (md) {
            printf("|---|--:|--:|--:|---|");
            for (int a = 0; a < 4; a++)
                printf("--:|");
            printf("\n");
        }
    }
    for (int shape = 0; shape < 2; shape++)
        for (int r = 1; r <= 3; r++)
            for (int d = 1; d <= MAXD; d++) {
                int dims[MAXD] = {1, 1, 1, 1}, periods[MAXD] = {1, 1, 1, 1}, *off, s;
                MPI_Comm cart, iso;
                if (rank != 0)
                    continue;
                s = shell(d, r, shape == 0, &off);
                if (shape == 1 && r == 3 && d == 4) { /* 2400 neighbors: skip */
                    free(off);
                    continue;
                }
                MPI_Cart_create(MPI_COMM_SELF, d, dims, periods, 0, &cart);
                Iso_neighborhood_create(cart, s, off, &iso);
                for (int c = 0; c < 4; c++) {
                    printf(md ? "| %s | %d | %d | %d | %s |" : "%-10s %2d %2d %5d %-14s",
                           shape ? "Moore" : "vonNeumann", r, d, s, colls[c]);
                    for (int a = 0; a < 4; a++) {
                        int rounds, msgs;
                        long long hops;
                        char cell[64];
                        Iso_schedule_info(iso, colls[c], algs[a], &rounds, &msgs, &hops);
                        snprintf(cell, sizeof cell, "%d/%d/%lld", rounds, msgs, hops);
                        printf(md ? " %s |" : " %22s", cell);
                    }
                    printf("\n");
                }
                Iso_neighborhood_free(&iso);
                MPI_Comm_free(&cart);
                free(off);
            }
    MPI_Finalize();
    return 0;
}
