/* isohuge: forced direct at huge neighborhoods against the same messages in
 * plain MPI.  One process per launch side: either "plain" (one Irecv per
 * source, one Isend per target, one Waitall) or "direct" (iso_algorithm =
 * direct: the library's schedule of the same messages), on a periodic 3-d
 * torus with s distinct random offsets (a fixed seed, the same on every
 * process) and one double per block.  Prints the neighborhood's creation
 * time (direct) and the time of each call (max over ranks), and checks
 * every received value against what its source sent (value = source rank
 * * 1e7 + slot): a wrong value ends the run with FAIL.
 *
 *   mpiexec -n P isohuge --s 100000 [--calls 2] [--plain]
 *
 * The library's own work per call is linear in s; at s = 10^5 MPI's
 * message matching dominates both sides (bench/README.md, "isohuge"). */
#include <isocoll.h>
#include <math.h>
#include <string.h>

#include "bench.h"
#include "neighborhood.h"

/* The rank at my coordinates + sign * offset i. */
static int rank_at(MPI_Comm cart, const int *me, const int *off, int i, int sign)
{
    int c[3], r;
    for (int j = 0; j < 3; j++)
        c[j] = me[j] + sign * off[3 * i + j];
    TRY(MPI_Cart_rank(cart, c, &r));
    return r;
}

int main(int argc, char **argv)
{
    int s = 1000, calls = 2, plain = 0, size, rank, me[3];
    int dims[3] = {0, 0, 0}, periods[3] = {1, 1, 1}, wrong = 0;
    MPI_Comm cart, iso = MPI_COMM_NULL;
    MPI_Init(&argc, &argv);
    for (int a = 1; a < argc; a++) {
        if (!strcmp(argv[a], "--s") && a + 1 < argc)
            s = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--calls") && a + 1 < argc)
            calls = atoi(argv[++a]);
        else if (!strcmp(argv[a], "--plain"))
            plain = 1;
        else {
            fprintf(stderr, "usage: isohuge --s S [--calls N] [--plain]\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    TRY(MPI_Dims_create(size, 3, dims));
    TRY(MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 0, &cart));
    MPI_Comm_rank(cart, &rank);
    TRY(MPI_Cart_coords(cart, rank, 3, me));
    int r, *off = nbh_random_offsets(s, &r), *src = xmalloc(sizeof(int) * (size_t)s + 1),
        *dst = xmalloc(sizeof(int) * (size_t)s + 1);
    double *sb = xmalloc(sizeof(double) * (size_t)s + 1), *rb = xmalloc(sizeof(double) * (size_t)s + 1);
    MPI_Request *rq = xmalloc(sizeof *rq * 2 * (size_t)s + 1);
    for (int i = 0; i < s; i++) {
        sb[i] = rank * 1e7 + i;
        dst[i] = rank_at(cart, me, off, i, 1);
        src[i] = rank_at(cart, me, off, i, -1);
    }
    if (!plain) {
        MPI_Info info;
        double t0, t, tmax;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", "direct");
        MPI_Barrier(cart);
        t0 = MPI_Wtime();
        TRY(Iso_neighborhood_create_with_info(cart, s, off, info, &iso));
        t = MPI_Wtime() - t0;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
        if (rank == 0)
            printf("isohuge side=direct s=%d np=%d create_s=%.3f\n", s, size, tmax);
        MPI_Info_free(&info);
    }
    for (int k = 0; k < calls; k++) {
        double t0, t, tmax;
        memset(rb, 0, sizeof(double) * (size_t)s);
        MPI_Barrier(cart);
        t0 = MPI_Wtime();
        if (plain) {
            for (int i = 0; i < s; i++)
                TRY(MPI_Irecv(rb + i, 1, MPI_DOUBLE, src[i], 0, cart, rq + i));
            for (int i = 0; i < s; i++)
                TRY(MPI_Isend(sb + i, 1, MPI_DOUBLE, dst[i], 0, cart, rq + s + i));
/* GCC takes MPICH's MPI_STATUSES_IGNORE for an array of size 0; statuses
 * stay ignored, as the library's direct ignores them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
            TRY(MPI_Waitall(2 * s, rq, MPI_STATUSES_IGNORE));
#pragma GCC diagnostic pop
        } else {
            TRY(Iso_neighbor_alltoall(sb, 1, MPI_DOUBLE, rb, 1, MPI_DOUBLE, iso));
        }
        t = MPI_Wtime() - t0;
        for (int i = 0; i < s; i++) /* slot i comes from me - C^i, its slot i */
            wrong += rb[i] != src[i] * 1e7 + i;
        MPI_Reduce(&t, &tmax, 1, MPI_DOUBLE, MPI_MAX, 0, cart);
        if (rank == 0)
            printf("isohuge side=%s s=%d np=%d call=%d time_s=%.3f\n", plain ? "plain" : "direct",
                   s, size, k, tmax);
    }
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_INT, MPI_SUM, cart);
    if (rank == 0)
        printf("isohuge side=%s s=%d np=%d %s (%d wrong values)\n", plain ? "plain" : "direct", s,
               size, wrong ? "FAIL" : "PASS", wrong);
    if (iso != MPI_COMM_NULL)
        Iso_neighborhood_free(&iso);
    MPI_Comm_free(&cart);
    free(off), free(src), free(dst), free(sb), free(rb), free(rq);
    MPI_Finalize();
    return wrong != 0;
}
