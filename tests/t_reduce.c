/* Iso_neighbor_reduce and Iso_neighbor_scatter_reduce against a
 * gather-to-oracle: the vectors every process sends are exchanged with the
 * Sendrecv oracle (tests/oracle.h) and reduced serially here.
 *
 * Per neighborhood case, 12 library calls: {MPI_INT, MPI_DOUBLE} x
 * {MPI_SUM, MPI_MAX} x {reduce, scatter_reduce with contiguous blocks in
 * reverse order, scatter_reduce with per-target derived send types that have
 * gaps (vector stride 2, contiguous pairs, reversed indexed block) and
 * overlapping send regions}.  All values are small integers (|v| <= 20, at
 * most a few dozen terms), so the double sums are exact in any summation
 * order and can be compared with ==.
 *
 * recvbuf is filled with a sentinel and framed by guard elements: a process
 * without an existing source must leave it untouched (header: no identity),
 * and nobody may write past count elements.
 *
 * NPROCS: 1 2 3 4 6 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

/* Oracle messages travel on a duplicate of MPI_COMM_WORLD: every Cartesian
 * communicator here is made without reordering, so its ranks are the same. */
static MPI_Comm ocomm;

#define COUNT 4 /* default elements per vector (even: pair types) */
#define SENTINEL (-7777)
#define GAP_BASE 1000 /* values in send-buffer gaps: never part of a result */

enum { T_INT, T_DOUBLE, NTYPES };
enum { O_SUM, O_MAX, NOPS };
enum { F_REDUCE, F_SCATTER_CONTIG, F_SCATTER_DERIVED, NFORMS };
#define NVAR (NTYPES * NOPS * NFORMS)

static const char *const form_name[NFORMS] = {"reduce", "scatter_reduce/contig",
                                              "scatter_reduce/derived"};

static MPI_Datatype type_of(int t) { return t == T_INT ? MPI_INT : MPI_DOUBLE; }
static MPI_Op op_of(int o) { return o == O_SUM ? MPI_SUM : MPI_MAX; }
static size_t size_of(int t) { return t == T_INT ? sizeof(int) : sizeof(double); }

static void put(void *buf, int t, size_t j, double v)
{
    if (t == T_INT)
        ((int *)buf)[j] = (int)v;
    else
        ((double *)buf)[j] = v;
}

static double get(const void *buf, int t, size_t j)
{
    return t == T_INT ? (double)((const int *)buf)[j] : ((const double *)buf)[j];
}

/* Small integer in [-20, 20], deterministic. */
static double value(int rank, int i, int k, int var)
{
    unsigned h = (unsigned)rank * 2654435761u ^ (unsigned)(i + 7) * 40503u ^
                 (unsigned)(k + 3) * 9973u ^ (unsigned)(var + 11) * 69069u;
    h ^= h >> 13;
    h *= 0x5bd1e995u;
    h ^= h >> 15;
    return (double)(int)(h % 41u) - 20.0;
}

/* Derived send layouts for scatter_reduce: target i uses form i % 4 in a
 * region of 2*count elements; every fifth target shares region 0 (overlapping
 * reads).  Element k of block i sits at buffer index pos(i, k). */
static int region_of(int i) { return i % 5 == 4 ? 0 : i; }

static size_t derived_pos(int i, int k, int count)
{
    size_t base = (size_t)region_of(i) * 2 * (size_t)count;
    switch (i % 4) {
    case 0: /* vector(count, 1, 2) */
        return base + 2 * (size_t)k;
    case 1: /* count x basic */
    case 2: /* count/2 x contiguous(2) */
        return base + (size_t)k;
    default: /* indexed_block reversed, stride 2 */
        return base + 2 * (size_t)(count - 1 - k);
    }
}

typedef struct {
    MPI_Datatype vec, pair, rev; /* derived types of one basic type */
} dtypes_t;

static void dtypes_make(int t, int count, dtypes_t *dt)
{
    int *displs = malloc(sizeof(int) * (size_t)count);
    for (int k = 0; k < count; k++)
        displs[k] = 2 * (count - 1 - k);
    MPI_Type_vector(count, 1, 2, type_of(t), &dt->vec);
    MPI_Type_contiguous(2, type_of(t), &dt->pair);
    MPI_Type_create_indexed_block(count, 1, displs, type_of(t), &dt->rev);
    free(displs);
    MPI_Type_commit(&dt->vec);
    MPI_Type_commit(&dt->pair);
    MPI_Type_commit(&dt->rev);
}

static void dtypes_free(dtypes_t *dt)
{
    MPI_Type_free(&dt->vec);
    MPI_Type_free(&dt->pair);
    MPI_Type_free(&dt->rev);
}

static int var_index(int t, int o, int f) { return (t * NOPS + o) * NFORMS + f; }

typedef struct {
    const char *name;
    int d;
    int dims[3], periods[3];
    nbh_t n;
    int count; /* 0: COUNT */
} rcase_t;

/* Runs the variants of one case (all of them up to 4 ranks, every other
 * one, alternating between cases, above: keeps 8-rank runs short); one
 * tap_result. */
static void run_case(rcase_t *c, int which)
{
    int rank, p;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm cart = oracle_cart(c->d, c->dims, c->periods);
    if (cart == MPI_COMM_NULL) {
        tap_skip(MPI_COMM_WORLD, "dims do not fit the number of ranks", "reduce %s", c->name);
        nbh_free(&c->n);
        return;
    }
    const int s = c->n.s, count = c->count ? c->count : COUNT;
    const size_t ns = (size_t)(s > 0 ? s : 1);
    MPI_Comm iso = MPI_COMM_NULL;
    int rc = Iso_neighborhood_create(cart, s, c->n.off, &iso);
    CHECK(rc == MPI_SUCCESS, "%s: Iso_neighborhood_create rc=%d", c->name, rc);
    CHECK(iso == cart, "%s: isocomm differs from cartcomm", c->name);

    int *src = malloc(sizeof(int) * ns), *dst = malloc(sizeof(int) * ns);
    oracle_neighbors(cart, &c->n, src, dst);
    int nsrc = 0, ndst = 0;
    for (int i = 0; i < s; i++) {
        nsrc += src[i] != MPI_PROC_NULL;
        ndst += dst[i] != MPI_PROC_NULL;
    }
    {
        int qs = -1, qin = -1, qout = -1;
        rc = Iso_neighborhood_count(iso, &qs, &qin, &qout);
        CHECK(rc == MPI_SUCCESS && qs == s && qin == nsrc && qout == ndst,
              "%s: Iso_neighborhood_count rc=%d s=%d/%d in=%d/%d out=%d/%d", c->name, rc, qs, s,
              qin, nsrc, qout, ndst);
    }

    /* Send buffers of every variant, as the library reads them. */
    void *sbuf[NVAR];
    size_t slen[NVAR];
    double *payload = malloc(sizeof(double) * ns * NVAR * count); /* [i][var][k] */
    double *gathered = malloc(sizeof(double) * ns * NVAR * count);
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++)
            for (int f = 0; f < NFORMS; f++) {
                int v = var_index(t, o, f);
                slen[v] = f == F_REDUCE           ? (size_t)count
                          : f == F_SCATTER_CONTIG ? ns * count
                                                  : ns * 2 * count;
                sbuf[v] = malloc(slen[v] * size_of(t));
                for (size_t j = 0; j < slen[v]; j++)
                    put(sbuf[v], t, j, GAP_BASE + (double)j);
                for (int i = 0; i < s; i++)
                    for (int k = 0; k < count; k++) {
                        size_t j = f == F_REDUCE           ? (size_t)k
                                   : f == F_SCATTER_CONTIG ? (size_t)(s - 1 - i) * count + k
                                                           : derived_pos(i, k, count);
                        if (f == F_REDUCE)
                            put(sbuf[v], t, j, value(rank, 0, k, v));
                        else
                            put(sbuf[v], t, j, value(rank, i, k, v));
                    }
                /* What goes to target i, read back from the buffer (so the
                 * overlapping regions are accounted for). */
                for (int i = 0; i < s; i++)
                    for (int k = 0; k < count; k++) {
                        size_t j = f == F_REDUCE           ? (size_t)k
                                   : f == F_SCATTER_CONTIG ? (size_t)(s - 1 - i) * count + k
                                                           : derived_pos(i, k, count);
                        payload[((size_t)i * NVAR + v) * count + k] = get(sbuf[v], t, j);
                    }
            }

    /* Oracle: block i of every variant to target i, from source i. */
    {
        int *cnt = malloc(sizeof(int) * ns);
        MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * ns);
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * ns);
        for (int i = 0; i < s; i++) {
            cnt[i] = NVAR * count;
            dsp[i] = (MPI_Aint)((size_t)i * NVAR * count * sizeof(double));
            ty[i] = MPI_DOUBLE;
        }
        for (size_t j = 0; j < ns * NVAR * count; j++)
            gathered[j] = SENTINEL;
        oracle_alltoallw_on(payload, cnt, dsp, ty, gathered, cnt, dsp, ty, cart, ocomm, &c->n);
        free(cnt);
        free(dsp);
        free(ty);
    }

    dtypes_t dt[NTYPES];
    for (int t = 0; t < NTYPES; t++)
        dtypes_make(t, count, &dt[t]);
    int *scnt = malloc(sizeof(int) * ns);
    MPI_Aint *sdsp = malloc(sizeof(MPI_Aint) * ns);
    MPI_Datatype *sty = malloc(sizeof(MPI_Datatype) * ns);

    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++)
            for (int f = 0; f < NFORMS; f++) {
                int v = var_index(t, o, f);
                size_t es = size_of(t);
                if (p > 4 && (v + which) % 2)
                    continue;
                /* recvbuf with one guard element on each side */
                char *rbuf = malloc((size_t)(count + 2) * es);
                for (int k = 0; k < count + 2; k++)
                    put(rbuf, t, (size_t)k, SENTINEL);
                void *sbak = malloc(slen[v] * es);
                memcpy(sbak, sbuf[v], slen[v] * es);
                if (f == F_REDUCE) {
                    rc = Iso_neighbor_reduce(sbuf[v], rbuf + es, count, type_of(t), op_of(o), iso);
                } else {
                    for (int i = 0; i < s; i++) {
                        if (f == F_SCATTER_CONTIG) {
                            scnt[i] = count;
                            sdsp[i] = (MPI_Aint)((size_t)(s - 1 - i) * count * es);
                            sty[i] = type_of(t);
                        } else {
                            sdsp[i] = (MPI_Aint)((size_t)region_of(i) * 2 * count * es);
                            switch (i % 4) {
                            case 0: scnt[i] = 1; sty[i] = dt[t].vec; break;
                            case 1: scnt[i] = count; sty[i] = type_of(t); break;
                            case 2: scnt[i] = count / 2; sty[i] = dt[t].pair; break;
                            default: scnt[i] = 1; sty[i] = dt[t].rev; break;
                            }
                        }
                    }
                    rc = Iso_neighbor_scatter_reduce(sbuf[v], scnt, sdsp, sty, rbuf + es, count,
                                                     type_of(t), op_of(o), iso);
                }
                CHECK(rc == MPI_SUCCESS, "%s %s %s %s: rc=%d", c->name, form_name[f],
                      t == T_INT ? "int" : "double", o == O_SUM ? "SUM" : "MAX", rc);
                CHECK(memcmp(sbak, sbuf[v], slen[v] * es) == 0, "%s %s: sendbuf modified",
                      c->name, form_name[f]);
                for (int k = -1; k <= count; k++) {
                    double want = SENTINEL;
                    if (k >= 0 && k < count && nsrc > 0) {
                        int first = 1;
                        for (int i = 0; i < s; i++) {
                            if (src[i] == MPI_PROC_NULL)
                                continue;
                            double x = gathered[((size_t)i * NVAR + v) * count + k];
                            if (first)
                                want = x;
                            else if (o == O_SUM)
                                want += x;
                            else if (x > want)
                                want = x;
                            first = 0;
                        }
                    }
                    double got = get(rbuf, t, (size_t)(k + 1));
                    CHECK(got == want, "%s %s %s %s: recvbuf[%d] = %g, expected %g (%s)",
                          c->name, form_name[f], t == T_INT ? "int" : "double",
                          o == O_SUM ? "SUM" : "MAX", k, got, want,
                          k < 0 || k >= count ? "guard"
                          : nsrc == 0         ? "no source: untouched"
                                              : "reduced");
                }
                free(rbuf);
                free(sbak);
            }

    tap_result(MPI_COMM_WORLD, "reduce+scatter_reduce int/double SUM/MAX: %s (s=%d)", c->name, s);

    for (int t = 0; t < NTYPES; t++)
        dtypes_free(&dt[t]);
    for (int v = 0; v < NVAR; v++)
        free(sbuf[v]);
    free(scnt);
    free(sdsp);
    free(sty);
    free(payload);
    free(gathered);
    free(src);
    free(dst);
    nbh_free(&c->n);
    MPI_Comm_free(&cart); /* releases the neighborhood too */
}

static nbh_t with_zero(nbh_t n)
{
    int z[ORACLE_MAXD] = {0};
    nbh_push(&n, z);
    return n;
}

static nbh_t with_repeat(nbh_t n)
{
    int c[ORACLE_MAXD];
    memcpy(c, n.off, sizeof(int) * (size_t)n.d);
    nbh_push(&n, c);
    return n;
}

static nbh_t list(int d, int s, const int *off)
{
    nbh_t n = {d, 0, NULL};
    for (int i = 0; i < s; i++)
        nbh_push(&n, off + (size_t)i * d);
    return n;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    static const int one_dir[] = {1, 0};
    static const int two_dir[] = {1, 2};
    static const int zero2[] = {0, 0};
    static const int zero_twice_plus[] = {0, 0, 0, 1, 0, 0, 0, -1};
    nbh_t moore_perm = nbh_moore(2, 1);
    nbh_reorder(&moore_perm, 2, 4242u);
    nbh_t moore3 = nbh_moore(3, 1);
    nbh_reorder(&moore3, 1, 0);

    rcase_t cases[] = {
        {"2d torus von Neumann r1", 2, {0, 0}, {1, 1}, nbh_von_neumann(2, 1), 0},
        {"2d mesh Moore r1 + zero offset", 2, {0, 0}, {0, 0}, nbh_shell(2, 0, -1, 1), 0},
        {"2d mixed (periodic, mesh) Moore r2", 2, {0, 0}, {1, 0}, nbh_moore(2, 2), 0},
        {"2d mixed (mesh, periodic) Moore r1 random order", 2, {0, 0}, {0, 1}, moore_perm, 0},
        {"3d torus von Neumann r2", 3, {0, 0, 0}, {1, 1, 1}, nbh_von_neumann(3, 2), 0},
        {"3d mixed Moore r1 column-major", 3, {0, 0, 0}, {0, 1, 0}, moore3, 0},
        {"1d torus random s=9 (repeats, zero)", 1, {0}, {1},
         with_zero(nbh_random(1, 8, 3, 17u)), 0},
        {"1d mesh random s=9 (repeats, zero)", 1, {0}, {0}, with_zero(nbh_random(1, 8, 2, 5u)), 0},
        {"2d mixed random s=12 (repeat, zero)", 2, {0, 0}, {0, 1},
         with_repeat(with_zero(nbh_random(2, 10, 2, 99u))), 0},
        {"2d torus Moore r1, vectors of 300", 2, {0, 0}, {1, 1}, nbh_moore(2, 1), 300},
        {"3d mixed von Neumann r2 + zero, vectors of 64", 3, {0, 0, 0}, {1, 0, 1},
         nbh_shell(3, 1, -1, 2), 64},
        {"dims 1 x p torus Moore r1", 2, {1, 0}, {1, 1}, nbh_moore(2, 1), 0},
        {"dims p x 1 mesh Moore r1", 2, {0, 1}, {0, 0}, nbh_moore(2, 1), 0},
        {"dims 2 x p/2 torus Moore r2", 2, {2, 0}, {1, 1}, nbh_moore(2, 2), 0},
        {"dims 2 x p/2 mixed von Neumann r2", 2, {2, 0}, {0, 1}, nbh_von_neumann(2, 2), 0},
        {"2d mesh one-directional {(1,0)}", 2, {0, 0}, {0, 0}, list(2, 1, one_dir), 0},
        {"1d mesh one-directional {(1),(2)}", 1, {0}, {0}, list(1, 2, two_dir), 0},
        {"2d torus self only {(0,0)}", 2, {0, 0}, {1, 1}, list(2, 1, zero2), 0},
        {"2d mesh zero offset twice + (0,+-1)", 2, {0, 0}, {0, 0}, list(2, 4, zero_twice_plus), 0},
        {"2d torus s=0", 2, {0, 0}, {1, 1}, {2, 0, NULL}, 0},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++)
        run_case(&cases[c], (int)c);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
