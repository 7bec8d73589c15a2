/* isosetup: what setting a neighborhood up costs (the paper's figures 2
 * and 3), each competitor timed on its own:
 *
 *   cart_create       MPI_Cart_create (no reordering)
 *   graph_adjacent    MPI_Dist_graph_create_adjacent on the Cartesian
 *                     communicator with the neighborhood's sources and targets
 *   graph_create      MPI_Dist_graph_create, each process giving its own
 *                     out-edges
 *   iso_first         Iso_neighborhood_create on a fresh Cartesian communicator
 *                     (it also makes the library's private communicator)
 *   iso_again         Iso_neighborhood_create on a communicator that already
 *                     has a neighborhood (it replaces it)
 *   iso_verify        Iso_neighborhood_create_with_info, iso_verify=true, on a
 *                     fresh Cartesian communicator
 *   first_alltoall    the first Iso_neighbor_alltoall (8-byte blocks, auto) on
 *                     a new neighborhood: it builds and caches the schedule
 *   next_alltoall     the second such call, for comparison
 *
 * Every repetition times each competitor once, in a new random order (the
 * same on every process), after a barrier; a time is the maximum over the
 * processes.  Communicators made for a measurement are freed outside the
 * timed region.  Prints a median table, and with --rows one line per
 * measurement (bench/run):
 *   @row exp=setup shape=.. d=.. r=.. inner=.. periodic=T dims=AxB s=.. np=..
 *        competitor=ID rep=.. time_us=..
 *
 *   mpiexec -n P isosetup [--shape moore|vonneumann] [--radius R] [--inner K']
 *       [--dim D] [--dims a,b,..] [--periodic|--mesh] [--reps N] [--rows] */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neighborhood.h"

enum { CART, ADJ, GRAPH, ISO_FIRST, ISO_AGAIN, ISO_VERIFY, FIRST_A2A, NEXT_A2A, NCOMP };
static const char *const comp_names[NCOMP] = {"cart_create", "graph_adjacent", "graph_create",
                                              "iso_first",   "iso_again",      "iso_verify",
                                              "first_alltoall", "next_alltoall"};

typedef struct {
    int moore, radius, inner, d, periodic, dims[NBH_MAXD], reps, rows;
} options;

typedef struct {
    int d, dims[NBH_MAXD], periods[NBH_MAXD], s, *off;
    int indeg, outdeg, *src, *dst; /* graph lists, MPI_PROC_NULL left out */
    int *weights;
} problem;

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->moore = 1;
    o->radius = 1;
    o->d = 2;
    o->periodic = 1;
    o->reps = 21;
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        int shape;
        if (nbh_parse_periodic(a, &o->periodic))
            continue;
        if (!strcmp(a, "--rows"))
            o->rows = 1;
        else if (v == NULL)
            return -1;
        else if ((shape = nbh_parse_shape(a, v, &o->moore, &o->radius, &o->d, o->dims)) != 0) {
            if (shape < 0)
                return -1;
            k++;
        } else if (k++, !strcmp(a, "--inner"))
            o->inner = atoi(v);
        else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else
            return -1;
    }
    return o->radius < 1 || o->inner < 0 || o->inner >= o->radius || o->d < 1 ||
                   o->d > NBH_MAXD || o->reps < 1
               ? -1
               : 0;
}

/* The offsets and, on cart, this process's graph lists. */
static void problem_init(problem *P, const options *o, MPI_Comm cart, int rank)
{
    int mine[NBH_MAXD];
    P->s = make_offsets(P->d, o->radius, o->inner, 0, o->moore, &P->off);
    P->src = nbh_malloc(sizeof(int) * (size_t)P->s);
    P->dst = nbh_malloc(sizeof(int) * (size_t)P->s);
    P->weights = nbh_malloc(sizeof(int) * (size_t)P->s);
    TRY(MPI_Cart_coords(cart, rank, P->d, mine));
    P->indeg = P->outdeg = 0;
    for (int i = 0; i < P->s; i++) {
        const int *c = P->off + (size_t)i * P->d;
        int from = shifted_rank(cart, P->d, P->dims, P->periods, mine, c, -1);
        int to = shifted_rank(cart, P->d, P->dims, P->periods, mine, c, +1);
        if (from != MPI_PROC_NULL)
            P->src[P->indeg++] = from;
        if (to != MPI_PROC_NULL)
            P->dst[P->outdeg++] = to;
        P->weights[i] = 1; /* not MPI_UNWEIGHTED: gcc takes it for an empty array (Open MPI) */
    }
}

static MPI_Comm new_cart(const problem *P)
{
    MPI_Comm cart;
    TRY(MPI_Cart_create(MPI_COMM_WORLD, P->d, P->dims, P->periods, 0, &cart));
    return cart;
}

/* Frees an isocomm (the Cartesian communicator it is). */
static void free_iso(MPI_Comm *iso)
{
    MPI_Comm c = *iso;
    TRY(Iso_neighborhood_free(iso));
    TRY(MPI_Comm_free(&c));
}

/* One measurement of competitor k: seconds on this process. */
static double measure(int k, const problem *P)
{
    MPI_Comm cart = MPI_COMM_NULL, out = MPI_COMM_NULL, iso = MPI_COMM_NULL;
    MPI_Info info = MPI_INFO_NULL;
    double t0, t;
    char *buf = NULL;
    int me;
    TRY(MPI_Comm_rank(MPI_COMM_WORLD, &me));
    /* untimed preparation */
    if (k != CART)
        cart = new_cart(P);
    if (k == ISO_AGAIN || k == FIRST_A2A || k == NEXT_A2A)
        TRY(Iso_neighborhood_create(cart, P->s, P->off, &iso));
    if (k == ISO_VERIFY) {
        TRY(MPI_Info_create(&info));
        TRY(MPI_Info_set(info, "iso_verify", "true"));
    }
    if (k == FIRST_A2A || k == NEXT_A2A) { /* buf: s receive blocks, then s send blocks */
        buf = nbh_malloc((size_t)P->s * 16);
        memset(buf, me & 0xff, (size_t)P->s * 16);
        if (k == NEXT_A2A)
            TRY(Iso_neighbor_alltoall(buf + (size_t)P->s * 8, 8, MPI_BYTE, buf, 8, MPI_BYTE, iso));
    }
    TRY(MPI_Barrier(MPI_COMM_WORLD));
    t0 = MPI_Wtime();
    switch (k) {
    case CART:
        out = new_cart(P);
        break;
    case ADJ:
        TRY(MPI_Dist_graph_create_adjacent(cart, P->indeg, P->src, P->weights, P->outdeg, P->dst,
                                           P->weights, MPI_INFO_NULL, 0, &out));
        break;
    case GRAPH:
        TRY(MPI_Dist_graph_create(cart, 1, &me, &P->outdeg, P->dst, P->weights, MPI_INFO_NULL, 0,
                                  &out));
        break;
    case ISO_FIRST:
    case ISO_AGAIN:
        TRY(Iso_neighborhood_create(cart, P->s, P->off, &iso));
        break;
    case ISO_VERIFY:
        TRY(Iso_neighborhood_create_with_info(cart, P->s, P->off, info, &iso));
        break;
    case FIRST_A2A:
    case NEXT_A2A:
        TRY(Iso_neighbor_alltoall(buf + (size_t)P->s * 8, 8, MPI_BYTE, buf, 8, MPI_BYTE, iso));
        break;
    }
    t = MPI_Wtime() - t0;
    if (out != MPI_COMM_NULL)
        TRY(MPI_Comm_free(&out));
    if (iso != MPI_COMM_NULL)
        free_iso(&iso); /* also frees cart: they are one communicator */
    else if (cart != MPI_COMM_NULL)
        TRY(MPI_Comm_free(&cart));
    if (info != MPI_INFO_NULL)
        TRY(MPI_Info_free(&info));
    free(buf);
    return t;
}

int main(int argc, char **argv)
{
    options o;
    problem P;
    MPI_Comm cart;
    int rank, nprocs, len;
    unsigned state = 12345;
    double *t;
    char lib[MPI_MAX_LIBRARY_VERSION_STRING], dimstr[64] = "";

    TRY(MPI_Init(&argc, &argv));
    TRY(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
    TRY(MPI_Comm_size(MPI_COMM_WORLD, &nprocs));
    if (parse(argc, argv, &o)) {
        if (rank == 0)
            fprintf(stderr, "usage: isosetup [--shape moore|vonneumann] [--radius R] [--inner K']"
                            " [--dim D] [--dims a,b,..] [--periodic|--mesh] [--reps N] [--rows]\n");
        MPI_Finalize();
        return 2;
    }
    memset(&P, 0, sizeof P);
    P.d = o.d;
    for (int j = 0; j < o.d; j++) {
        P.dims[j] = o.dims[j];
        P.periods[j] = o.periodic;
    }
    if (dims_mismatch(P.d, P.dims, nprocs)) {
        if (rank == 0)
            fprintf(stderr, "isosetup: --dims must multiply to the %d ranks\n", nprocs);
        MPI_Finalize();
        return 2;
    }
    TRY(MPI_Dims_create(nprocs, P.d, P.dims));
    cart = new_cart(&P);
    problem_init(&P, &o, cart, rank);
    TRY(MPI_Comm_free(&cart));
    for (int j = 0, n = 0; j < P.d; j++)
        n += snprintf(dimstr + n, sizeof dimstr - (size_t)n, "%s%d", j ? "x" : "", P.dims[j]);

    t = nbh_malloc(sizeof(double) * NCOMP * (size_t)o.reps);
    for (int k = 0; k < NCOMP; k++) /* warm-up: MPI's first communicator calls */
        (void)measure(k, &P);
    for (int rep = 0; rep < o.reps; rep++) {
        int order[NCOMP];
        bench_random_order(order, NCOMP, &state);
        for (int j = 0; j < NCOMP; j++)
            t[(size_t)order[j] * o.reps + rep] = measure(order[j], &P);
    }
    TRY(MPI_Reduce(rank == 0 ? MPI_IN_PLACE : t, t, NCOMP * o.reps, MPI_DOUBLE, MPI_MAX, 0,
                   MPI_COMM_WORLD));
    TRY(MPI_Get_library_version(lib, &len));
    lib[strcspn(lib, "\n")] = '\0';
    if (rank == 0) {
        printf("# isosetup: %s radius %d", o.moore ? "Moore" : "von Neumann", o.radius);
        if (o.inner)
            printf(" minus radius %d", o.inner);
        printf(", %d-D %s %s, s = %d neighbors, %d ranks, %d repetitions\n# MPI: %s\n", P.d,
               o.periodic ? "torus" : "mesh", dimstr, P.s, nprocs, o.reps, lib);
        if (o.rows)
            for (int k = 0; k < NCOMP; k++)
                for (int rep = 0; rep < o.reps; rep++)
                    printf("@row exp=setup shape=%s d=%d r=%d inner=%d periodic=%d dims=%s s=%d "
                           "np=%d competitor=%s rep=%d time_us=%.3f\n",
                           o.moore ? "moore" : "vonneumann", P.d, o.radius, o.inner,
                           o.periodic ? P.d : 0, dimstr, P.s, nprocs, comp_names[k], rep,
                           t[(size_t)k * o.reps + rep] * 1e6);
        printf("| competitor | median us | / graph_adjacent |\n|---|--:|--:|\n");
        double med[NCOMP];
        for (int k = 0; k < NCOMP; k++) {
            double *x = t + (size_t)k * o.reps;
            qsort(x, (size_t)o.reps, sizeof(double), bench_cmp_double);
            med[k] = (x[(o.reps - 1) / 2] + x[o.reps / 2]) / 2 * 1e6;
        }
        for (int k = 0; k < NCOMP; k++)
            printf("| %-16s | %10.2f | %6.3f |\n", comp_names[k], med[k],
                   med[ADJ] > 0 ? med[k] / med[ADJ] : 0.0);
        fflush(stdout);
    }
    free(t);
    free(P.off);
    free(P.src);
    free(P.dst);
    free(P.weights);
    MPI_Finalize();
    return 0;
}
