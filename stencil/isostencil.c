/* isostencil: the deep-halo Jacobi stencil kernel, timed and verified.
 *
 *   isostencil [--dim 2|3] [--points 5|9|7|27] [--n N] [--halo K] [--iters T]
 *              [--dims a,b[,c]] [--periodic] [--reps R]
 *              [--exchange iso|iso-persistent|mpi|mpi-persistent|all]
 *              [--algorithm NAME]
 *
 * Each repetition starts from the initial grid and runs T iterations; with
 * several variants the repetitions alternate between them.  After the last
 * repetition of a variant the gathered grid is compared bit for bit with a
 * serial computation on rank 0 (PASS/FAIL).  Prints the median time per
 * iteration, the median exchange time per iteration, the exchange share and
 * the bytes moved.  Exit status 1 if any variant fails. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/bench.h" /* die(), TRY() */
#include "stencil.h"

typedef struct {
    stencil_params p;
    int dims[STENCIL_MAXD], have_dims;
    int iters, reps;
    const char *exchange, *algorithm;
    int rows; /* --rows: one @row line per measurement (bench/run) */
} options;

static void usage(void)
{
    fprintf(stderr, "usage: isostencil [--dim 2|3] [--points 5|9|7|27] [--n N] [--halo K]\n"
                    "  [--iters T] [--dims a,b[,c]] [--periodic] [--reps R]\n"
                    "  [--exchange iso|iso-persistent|mpi|mpi-persistent|all]"
                    " [--algorithm NAME] [--rows]\n");
}

static int parse_int(const char *s, int *v)
{
    char *end;
    long x = strtol(s, &end, 10);
    if (end == s || *end || x < 0 || x > 1000000000)
        return -1;
    *v = (int)x;
    return 0;
}

static int parse_dims(const char *s, options *o)
{
    int n = 0;
    char buf[64], *tok, *save = NULL;
    if (strlen(s) >= sizeof buf)
        return -1;
    strcpy(buf, s);
    for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (n == STENCIL_MAXD || parse_int(tok, &o->dims[n]) || o->dims[n] < 1)
            return -1;
        n++;
    }
    o->have_dims = n;
    return n >= 2 ? 0 : -1;
}

/* 0 on success, -1 on a bad command line. */
static int parse_args(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->p = (stencil_params){.dim = 2, .points = 0, .n = 100, .k = 1, .periodic = 0};
    o->iters = 10;
    o->reps = 5;
    o->exchange = "iso";
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        int bad = 0;
        if (strcmp(a, "--periodic") == 0) {
            o->p.periodic = 1;
            continue;
        }
        if (strcmp(a, "--rows") == 0) {
            o->rows = 1;
            continue;
        }
        if (!v)
            return -1;
        i++;
        if (strcmp(a, "--dim") == 0)
            bad = parse_int(v, &o->p.dim);
        else if (strcmp(a, "--points") == 0)
            bad = parse_int(v, &o->p.points);
        else if (strcmp(a, "--n") == 0)
            bad = parse_int(v, &o->p.n);
        else if (strcmp(a, "--halo") == 0)
            bad = parse_int(v, &o->p.k);
        else if (strcmp(a, "--iters") == 0)
            bad = parse_int(v, &o->iters) || o->iters < 1;
        else if (strcmp(a, "--reps") == 0)
            bad = parse_int(v, &o->reps) || o->reps < 1;
        else if (strcmp(a, "--dims") == 0)
            bad = parse_dims(v, o);
        else if (strcmp(a, "--exchange") == 0)
            o->exchange = v;
        else if (strcmp(a, "--algorithm") == 0)
            o->algorithm = v;
        else
            bad = 1;
        if (bad)
            return -1;
    }
    if (o->p.points == 0)
        o->p.points = o->p.dim == 3 ? 7 : 5;
    if (o->have_dims && o->have_dims != o->p.dim)
        return -1;
    if (strcmp(o->exchange, "all") != 0 && stencil_variant_parse(o->exchange) < 0)
        return -1;
    return 0;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(const double *v, int n)
{
    double *s = malloc((size_t)n * sizeof *s), m;
    if (!s)
        return v[0];
    memcpy(s, v, (size_t)n * sizeof *s);
    qsort(s, (size_t)n, sizeof *s, cmp_double);
    m = n % 2 ? s[n / 2] : 0.5 * (s[n / 2 - 1] + s[n / 2]);
    free(s);
    return m;
}

/* Collective.  On rank 0: number of points differing (bitwise) from ref. */
static long verify(stencil_t *st, const stencil_params *p, const int dims[], const double *ref,
                   int rank)
{
    size_t size = stencil_global_size(p, dims);
    double *got = rank == 0 ? malloc(size * sizeof(double)) : NULL;
    long bad = 0;
    if (rank == 0 && !got)
        die("malloc (verify)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    TRY(stencil_gather(st, 0, got));
    for (size_t i = 0; rank == 0 && i < size; i++)
        if (memcmp(&got[i], &ref[i], sizeof(double)) != 0) {
            if (bad == 0)
                fprintf(stderr, "isostencil: first difference at global point %zu: %.17g != %.17g\n",
                        i, got[i], ref[i]);
            bad++;
        }
    free(got);
    return bad;
}

static void print_schedule(const stencil_t *st);

/* The measurements as @row lines (bench/run): per variant and repetition
 * the time per iteration and the exchange time per iteration. */
static void print_rows(const options *o, const int dims[], int size, const stencil_variant *vars,
                       int nv, const double *t_run, const double *t_exch, const long *bad)
{
    char dimstr[48];
    int n = snprintf(dimstr, sizeof dimstr, "%d", dims[0]);
    for (int j = 1; j < o->p.dim; j++)
        n += snprintf(dimstr + n, sizeof dimstr - (size_t)n, "x%d", dims[j]);
    for (int i = 0; i < nv; i++)
        for (int r = 0; r < o->reps; r++)
            printf("@row exp=stencil dim=%d points=%d n=%d halo=%d iters=%d periodic=%d dims=%s "
                   "np=%d algorithm=%s competitor=%s rep=%d time_us=%.4f exch_us=%.4f%s\n",
                   o->p.dim, o->p.points, o->p.n, o->p.k, o->iters, o->p.periodic, dimstr, size,
                   o->algorithm ? o->algorithm : "default", stencil_variant_name(vars[i]), r,
                   t_run[i * o->reps + r] * 1e6, t_exch[i * o->reps + r] * 1e6,
                   bad[i] ? " wrong=1" : "");
}

static void print_header(const options *o, const stencil_t *st, int size, const int dims[], int nv,
                         long long bytes)
{
    char lib[MPI_MAX_LIBRARY_VERSION_STRING];
    int len, exchanges = (o->iters + o->p.k - 1) / o->p.k;
    MPI_Get_library_version(lib, &len);
    lib[strcspn(lib, "\n")] = 0;
    printf("# isostencil dim=%d points=%d n=%d halo=%d iters=%d dims=%d", o->p.dim, o->p.points,
           o->p.n, o->p.k, o->iters, dims[0]);
    for (int j = 1; j < o->p.dim; j++)
        printf("x%d", dims[j]);
    printf(" periodic=%s algorithm=%s ranks=%d reps=%d variants=%d\n", o->p.periodic ? "yes" : "no",
           o->algorithm ? o->algorithm : "(default)", size, o->reps, nv);
    printf("# MPI: %s\n", lib);
    printf("# bytes moved: %lld per exchange (all ranks), %d exchanges, %lld per run\n", bytes,
           exchanges, bytes * exchanges);
    print_schedule(st);
    printf("%-16s %-6s %14s %14s %9s %10s\n", "variant", "result", "time/iter[s]", "exch/iter[s]",
           "exch%", "exch/iso");
}

/* What the iso exchange runs (for blocking calls ISO_VERBOSE=1 tells). */
static void print_schedule(const stencil_t *st)
{
    const char *alg, *mode;
    int rounds, messages;
    TRY(stencil_iso_schedule(st, &alg, &mode, &rounds, &messages));
    printf("# iso-persistent runs %s (combined messages: %s): %d rounds, %d messages on rank 0; "
           "ISO_VERBOSE=1 shows what blocking calls run\n",
           alg, mode, rounds, messages);
}

int main(int argc, char **argv)
{
    options o;
    int rank, size, rc, dims[STENCIL_MAXD] = {0, 0, 0};
    stencil_variant vars[STENCIL_NVARIANTS];
    int nv = 0, fails = 0;
    MPI_Info info = MPI_INFO_NULL;
    stencil_t *st = NULL;
    double *ref = NULL;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (parse_args(argc, argv, &o) != 0 || stencil_params_error(&o.p)) {
        if (rank == 0) {
            if (stencil_params_error(&o.p))
                fprintf(stderr, "isostencil: %s\n", stencil_params_error(&o.p));
            usage();
        }
        MPI_Finalize();
        return 2;
    }
    if (o.have_dims)
        memcpy(dims, o.dims, sizeof dims);
    else
        MPI_Dims_create(size, o.p.dim, dims);
    int prod = 1;
    for (int j = 0; j < o.p.dim; j++)
        prod *= dims[j];
    if (prod != size) {
        if (rank == 0)
            fprintf(stderr, "isostencil: --dims must multiply to the %d ranks\n", size);
        MPI_Finalize();
        return 2;
    }

    for (int v = 0; v < STENCIL_NVARIANTS; v++) {
        int wanted = strcmp(o.exchange, "all") == 0 || stencil_variant_parse(o.exchange) == v;
        if (wanted && stencil_variant_supported(v))
            vars[nv++] = v;
        else if (wanted && rank == 0)
            printf("%-16s unsupported (MPI_Neighbor_alltoallw_init needs MPI 4, this is MPI %d)\n",
                   stencil_variant_name(v), MPI_VERSION);
    }
    if (nv == 0) {
        MPI_Finalize();
        return 0;
    }
    if (o.algorithm) {
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", o.algorithm);
    }
    TRY(stencil_create(MPI_COMM_WORLD, &o.p, dims, info, &st));
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);

    long long mybytes = stencil_exchange_bytes(st), bytes = 0;
    MPI_Reduce(&mybytes, &bytes, 1, MPI_LONG_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
    if (rank == 0) {
        ref = malloc(stencil_global_size(&o.p, dims) * sizeof(double));
        if (!ref || stencil_serial(&o.p, dims, o.iters, ref) != 0)
            die("serial reference", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    }

    double *t_run = calloc((size_t)nv * (size_t)o.reps, sizeof(double));
    double *t_exch = calloc((size_t)nv * (size_t)o.reps, sizeof(double));
    long bad[STENCIL_NVARIANTS] = {0};
    if (!t_run || !t_exch)
        die("calloc (timing arrays)", MPI_ERR_NO_MEM, __FILE__, __LINE__);
    for (int r = 0; r < o.reps; r++) {
        for (int i = 0; i < nv; i++) {
            int vi = (i + r) % nv; /* rotate the order: no variant always goes first */
            double t[2], tmax[2], tx = 0.0;
            stencil_reset(st);
            MPI_Barrier(MPI_COMM_WORLD);
            t[0] = MPI_Wtime();
            rc = stencil_run(st, vars[vi], o.iters, &tx);
            t[0] = MPI_Wtime() - t[0];
            t[1] = tx;
            if (rc != MPI_SUCCESS)
                die(stencil_variant_name(vars[vi]), rc, __FILE__, __LINE__);
            MPI_Reduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            t_run[vi * o.reps + r] = tmax[0] / o.iters;
            t_exch[vi * o.reps + r] = tmax[1] / o.iters;
            if (r == o.reps - 1)
                bad[vi] = verify(st, &o.p, dims, ref, rank);
        }
    }

    if (rank == 0) {
        double iso_exch = 0.0;
        print_header(&o, st, size, dims, nv, bytes);
        if (o.rows)
            print_rows(&o, dims, size, vars, nv, t_run, t_exch, bad);
        for (int i = 0; i < nv; i++)
            if (vars[i] == STENCIL_ISO)
                iso_exch = median(t_exch + i * o.reps, o.reps);
        for (int i = 0; i < nv; i++) {
            double run = median(t_run + i * o.reps, o.reps);
            double exch = median(t_exch + i * o.reps, o.reps);
            printf("%-16s %-6s %14.4e %14.4e %8.1f%% ", stencil_variant_name(vars[i]),
                   bad[i] ? "FAIL" : "PASS", run, exch, run > 0 ? 100.0 * exch / run : 0.0);
            if (iso_exch > 0)
                printf("%10.3f\n", exch / iso_exch);
            else
                printf("%10s\n", "-");
            if (bad[i]) {
                printf("# %s: %ld of %zu points differ from the serial computation\n",
                       stencil_variant_name(vars[i]), bad[i], stencil_global_size(&o.p, dims));
                fails++;
            }
        }
        fflush(stdout);
    }
    MPI_Bcast(&fails, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(t_run);
    free(t_exch);
    free(ref);
    stencil_free(&st);
    MPI_Finalize();
    return fails ? 1 : 0;
}
