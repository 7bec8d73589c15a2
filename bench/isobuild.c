/* isobuild: how long the first call takes to build its schedules for huge
 * neighborhoods (does it stay near-linear in s?), one process on a periodic 3-d torus of
 * size 1 (every offset exists; the structure does not depend on the torus
 * size).  For each s: s distinct random offsets in [-R, R]^3 (R so that
 * they fill about half the cube), then the first Iso_schedule_info of each
 * collective family and algorithm on a fresh neighborhood (it builds the
 * schedule; "auto" also decides), and the first blocking alltoall with
 * auto (one int per block).
 *   mpiexec -n 1 isobuild [s ...]        default: 10000 40000 100000
 * Prints seconds; run it on a quiet machine to quote them. */
#include <isocoll.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neighborhood.h"

static const char *const colls[] = {"alltoall", "allgather", "reduce", "scatter_reduce"};
static const char *const algs[] = {"dimwise", "bruck", "auto"};

int main(int argc, char **argv)
{
    static const int dflt[] = {10000, 40000, 100000};
    int n = argc > 1 ? argc - 1 : 3, dims[3] = {1, 1, 1}, periods[3] = {1, 1, 1};
    MPI_Comm cart;
    MPI_Init(&argc, &argv);
    TRY(MPI_Cart_create(MPI_COMM_SELF, 3, dims, periods, 0, &cart));
    printf("# first-call seconds per schedule (Iso_schedule_info), one process\n");
    printf("%8s %4s %-15s %8s %8s %8s\n", "s", "R", "collective", "dimwise", "bruck", "auto");
    for (int k = 0; k < n; k++) {
        int s = argc > 1 ? atoi(argv[k + 1]) : dflt[k], r, rounds, msgs;
        long long hops;
        int *off = nbh_random_offsets(s, &r);
        for (size_t c = 0; c < sizeof colls / sizeof colls[0]; c++) {
            printf("%8d %4d %-15s", s, r, colls[c]);
            for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++) {
                MPI_Comm iso;
                double t;
                TRY(Iso_neighborhood_create(cart, s, off, &iso));
                t = MPI_Wtime();
                TRY(Iso_schedule_info(iso, colls[c], algs[a], &rounds, &msgs, &hops));
                printf(" %8.3f", MPI_Wtime() - t);
                fflush(stdout);
                TRY(Iso_neighborhood_free(&iso));
            }
            printf("\n");
        }
        {
            MPI_Comm iso;
            int *sb = calloc((size_t)s, sizeof(int)), *rb = calloc((size_t)s, sizeof(int));
            double t;
            TRY(Iso_neighborhood_create(cart, s, off, &iso));
            t = MPI_Wtime();
            TRY(Iso_neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, iso));
            printf("%8d %4d first blocking alltoall with auto: %.3f s\n", s, r, MPI_Wtime() - t);
            TRY(Iso_neighborhood_free(&iso));
            free(sb);
            free(rb);
        }
        free(off);
    }
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
