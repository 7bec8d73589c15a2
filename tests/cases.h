/* The case driver shared by tests/t_alltoall.c and tests/t_allgather.c.
 *
 * Both programs check their three forms (plain, v, w) on the same cases:
 * the same neighborhood families on the same tori (oracle_topology), in the
 * same order and with the same case ids, so that ISO_TEST_CASES selects the
 * same cases in both.  Only the calls, and how the expected buffers follow
 * from them, differ.  A program describes those in a collective_t and hands
 * it to cases_main, which runs the cases and prints one TAP line per
 * (neighborhood family, form).
 *
 * Debugging: ISO_TEST_VERBOSE=1 makes rank 0 name every call on stderr
 * (with its case id); ISO_TEST_CASES=lo-hi runs only those case ids.
 */
#ifndef ISO_TEST_CASES_H
#define ISO_TEST_CASES_H
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define SENT 0xA5 /* receive-buffer sentinel byte */
#define JUNK 0x5A /* send-buffer gap byte */
#define GUARD 64  /* sentinel bytes before and after every receive buffer */

enum { F_VN, F_MOORE, F_ORDER, F_RANDOM, F_IRREG, F_EMPTY, F_XCHECK, NFAM };
enum { A_PLAIN, A_V, A_W, NFORM };

typedef struct {
    MPI_Comm cart;
    const nbh_t *n;
    int fam, id, me, p;
    int *src, *dst; /* oracle_neighbors */
    char topo[64];
} case_t;

/* What a program tests; everything else is shared. */
typedef struct {
    const char *form_name[NFORM]; /* the forms' names in TAP lines and messages */
    const char *irregular;        /* F_IRREG's description (the wording differs) */
    /* One checked call of the form on case c; count0: every count is 0. */
    void (*run_plain)(const case_t *c, int count0);
    void (*run_v)(const case_t *c, int count0);
    /* with_sendrecv_oracle: also compare the expected buffer with the
     * exchange of tests/oracle.h, as one run of (F_XCHECK, A_W). */
    void (*run_w)(const case_t *c, int count0, int with_sendrecv_oracle);
    /* s = 0: exactly one call of each form, in the order plain, v, w;
     * cases_main counts them and charges their errors. */
    void (*run_empty)(MPI_Comm cart, const char *topo);
} collective_t;

static const collective_t *collective; /* set by cases_main */

static const char *const fam_name[NFAM] = {
    "von Neumann r=1..3",
    "Moore r=1..3 and Moore minus a smaller radius",
    "row, column and random order, zero offset included",
    "random offsets with repetitions and zero offset, far wrap-around",
    NULL, /* F_IRREG: collective->irregular */
    "s = 0 and count 0: receive buffers untouched; Iso_neighborhood_free",
    "tests/oracle.h Sendrecv oracle equals the local expected buffer",
};

static const char *family_name(int fam)
{
    return fam == F_IRREG ? collective->irregular : fam_name[fam];
}

/* Errors and runs per TAP line: the checks of a case count into
 * tap_errors, and are moved here (charge_errors, count_run) until the
 * lines are printed at the end. */
static long errs[NFAM][NFORM];
static int runs[NFAM][NFORM];
static int verbose;                        /* ISO_TEST_VERBOSE: rank 0 names every call on stderr */
static int case_lo = 0, case_hi = 1 << 30; /* ISO_TEST_CASES=lo-hi: run only these ids */
/* iso_verify=false: the verification allreduce is ~45% of a case's cost at
 * 8 oversubscribed ranks, and every neighborhood here is isomorphic by
 * construction; the first case on each topology keeps the environment's
 * setting (ISO_VERIFY=1 under tests/tap-mpi). */
static MPI_Info no_verify;
static int verified_topology = -1;

/* Moves the errors counted since tap_errors was `before` to the line of
 * (fam, form). */
static void charge_errors(int fam, int form, long before)
{
    errs[fam][form] += tap_errors - before;
    tap_errors = before;
}

/* One run of (fam, form), with the errors counted since `before`. */
static void count_run(int fam, int form, long before)
{
    charge_errors(fam, form, before);
    runs[fam][form]++;
}

/* ---- helpers for building and checking the buffers ---- */

static unsigned hash3(unsigned a, unsigned b, unsigned c)
{
    unsigned h = a * 2654435761u ^ (b + 0x9e3779b9u) * 40503u ^ (c + 7u) * 2246822519u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return h;
}

static int lcm(int a, int b)
{
    int x = a, y = b;
    while (y) {
        int t = x % y;
        x = y;
        y = t;
    }
    return a / x * b;
}

/* A permutation of 0..s-1: reversed or pseudo-random (non-monotone
 * displacements). */
static void make_perm(int s, int id, int salt, int *perm)
{
    unsigned seed = (unsigned)(id * 31 + salt);
    for (int i = 0; i < s; i++)
        perm[i] = (id + salt) % 2 ? s - 1 - i : i;
    if ((id + salt) % 2 == 0)
        for (int a = s - 1; a > 0; a--) {
            int b = (int)(oracle_rand(&seed) % (unsigned)(a + 1)), t = perm[a];
            perm[a] = perm[b];
            perm[b] = t;
        }
}

/* Compare the receive buffer (len bytes including both guard zones) with
 * the expected one; name the slot of the first difference. */
static void compare(const case_t *c, int form, const char *got, const char *exp, size_t len,
                    const MPI_Aint *slot_lo, const MPI_Aint *slot_len)
{
    long k = oracle_first_diff(got, exp, len);
    if (k < 0)
        return;
    int slot = -1, g, e;
    long a = k & ~3L;
    for (int i = 0; i < c->n->s && slot_lo; i++)
        if (k >= slot_lo[i] && k < slot_lo[i] + slot_len[i])
            slot = i;
    memcpy(&g, got + a, sizeof g);
    memcpy(&e, exp + a, sizeof e);
    CHECK(0,
          "%s, %s, case %d on %s, s=%d: byte %ld of %zu differs (slot %d, source %d): int at "
          "%ld got %d (0x%08x) expected %d (0x%08x)",
          collective->form_name[form], family_name(c->fam), c->id, c->topo, c->n->s, k, len, slot,
          slot >= 0 ? c->src[slot] : -2, a, g, (unsigned)g, e, (unsigned)e);
}

static void check_send_intact(const case_t *c, int form, const char *sbuf, const char *copy,
                              size_t len)
{
    long k = oracle_first_diff(sbuf, copy, len);
    CHECK(k < 0, "%s, case %d on %s: send buffer modified at byte %ld",
          collective->form_name[form], c->id, c->topo, k);
}

/* Lays out s blocks of counts[] elements (displacements in elements, blocks
 * in perm order with a one-element gap); returns the number of elements. */
static int layout_v(int s, const int *counts, const int *perm, int *displs)
{
    int cur = 1;
    for (int k = 0; k < s; k++) {
        displs[perm[k]] = cur;
        cur += counts[perm[k]] + 1;
    }
    return cur + 1;
}

/* Byte displacements for blocks (counts[i], types[i]) in perm order with
 * gaps; returns the buffer length.  With origin_mid the displacements are
 * taken from the middle of the buffer (some negative), *origin set. */
static size_t layout_w(int s, const int *counts, const MPI_Datatype *types, const int *perm,
                       int origin_mid, MPI_Aint *displs, MPI_Aint *origin)
{
    MPI_Aint cur = 16, lo, len;
    for (int k = 0; k < s; k++) {
        int i = perm[k];
        oracle_footprint(counts[i], types[i], &lo, &len);
        displs[i] = cur - lo;
        cur += len + 4 + 8 * (i % 2);
    }
    cur += 16;
    *origin = origin_mid ? (cur / 2) & ~(MPI_Aint)7 : 0;
    for (int i = 0; i < s; i++)
        displs[i] -= *origin;
    return (size_t)cur;
}

/* ---- cases ---- */

/* The k-th neighborhood of family fam in d dimensions; 0 when there is none. */
static int make_nbh(int d, int fam, int k, unsigned seed, nbh_t *n)
{
    int rmax_vn = d <= 3 ? 3 : 2, rmax_moore = d <= 2 ? 3 : d == 3 ? 2 : 1;
    switch (fam) {
    case F_VN:
        if (k >= rmax_vn)
            return 0;
        *n = nbh_von_neumann(d, k + 1);
        return 1;
    case F_MOORE:
        if (k > rmax_moore)
            return 0;
        if (k < rmax_moore) /* Moore r = k + 1 */
            *n = nbh_moore(d, k + 1);
        else /* shell: Moore r=3 (d <= 2) or 2 (d = 3) minus r=1; d = 4: von Neumann */
            *n = d <= 2   ? nbh_shell(d, 0, 1, 3)
                 : d == 3 ? nbh_shell(3, 0, 1, 2)
                          : nbh_shell(4, 1, 1, 2);
        return 1;
    case F_ORDER:
        if (k > 2)
            return 0;
        if (k == 0) { /* Moore r=1 with the zero offset, column order */
            *n = nbh_shell(d, 0, -1, 1);
            nbh_reorder(n, 1, seed);
        } else if (k == 1) { /* von Neumann r=2 with zero offset, random order */
            *n = nbh_shell(d, 1, -1, 2);
            nbh_reorder(n, 2, seed);
        } else { /* Moore r=2 (d <= 2) or r=1, random order */
            *n = nbh_moore(d, d <= 2 ? 2 : 1);
            nbh_reorder(n, 2, seed + 1);
        }
        return 1;
    case F_RANDOM:
        if (k > 1)
            return 0;
        *n = k == 0 ? nbh_random(d, 8 + 4 * d, 3, seed) : nbh_random(d, 7, 11, seed + 17);
        return 1;
    case F_IRREG:
        if (k > 1)
            return 0;
        if (k == 0)
            *n = nbh_shell(d, 0, -1, 1);
        else
            *n = nbh_random(d, 12, 4, seed + 5);
        return 1;
    }
    return 0;
}

/* In the runner's ALG:datatype entries the v and w forms run on the same
 * neighborhood re-created with iso_combine=pack (tap_matrix_vw_needs_pack);
 * the plain form keeps datatype mode. */
static MPI_Info vw_pack = MPI_INFO_NULL;

/* Case id on the t-th topology: creates the neighborhood n on cart and runs
 * every form of the family on it (not the plain form for F_IRREG, whose
 * counts vary). */
static void run_case(MPI_Comm cart, int t, const char *topo, int fam, int id, const nbh_t *n)
{
    case_t c;
    MPI_Comm iso = MPI_COMM_NULL;
    int rc;
    long before = tap_errors;
    if (id < case_lo || id > case_hi)
        return;
    c.cart = cart;
    c.n = n;
    c.fam = fam;
    c.id = id;
    MPI_Comm_rank(cart, &c.me);
    MPI_Comm_size(cart, &c.p);
    snprintf(c.topo, sizeof c.topo, "%s", topo);
    c.src = malloc(sizeof(int) * (size_t)(n->s + 1));
    c.dst = malloc(sizeof(int) * (size_t)(n->s + 1));
    oracle_neighbors(cart, n, c.src, c.dst);
    if (verified_topology != t) {
        rc = Iso_neighborhood_create(cart, n->s, n->off, &iso);
        verified_topology = t;
    } else {
        rc = Iso_neighborhood_create_with_info(cart, n->s, n->off, no_verify, &iso);
    }
    CHECK(rc == MPI_SUCCESS && iso == cart, "Iso_neighborhood_create rc %d (case %d on %s)", rc, id,
          topo);
    /* a failed create counts against every form of the family */
    long cre = tap_errors - before;
    tap_errors = before;
    int empty = fam == F_EMPTY; /* count 0 everywhere */
    for (int f = 0; f < NFORM; f++) {
        if (fam == F_IRREG && f == A_PLAIN)
            continue;
        before = tap_errors;
        if (verbose && c.me == 0)
            fprintf(stderr, "# case %d: %s, %s on %s, s=%d\n", id, collective->form_name[f],
                    family_name(fam), topo, n->s);
        if (f != A_PLAIN && vw_pack != MPI_INFO_NULL) {
            rc = Iso_neighborhood_create_with_info(cart, n->s, n->off, vw_pack, &iso);
            CHECK(rc == MPI_SUCCESS, "Iso_neighborhood_create with iso_combine=pack rc %d", rc);
        }
        if (f == A_PLAIN)
            collective->run_plain(&c, empty);
        else if (f == A_V)
            collective->run_v(&c, empty);
        else
            collective->run_w(&c, empty,
                              fam == F_RANDOM && runs[F_XCHECK][A_W] < (c.p <= 4 ? 20 : 2));
        errs[fam][f] += cre;
        count_run(fam, f, before);
    }
    free(c.src);
    free(c.dst);
}

/* The whole program: every case on every topology of oracle_topology, then
 * the TAP lines. */
static int cases_main(int argc, char **argv, const collective_t *coll)
{
    int p, d, dims[ORACLE_MAXD], periods[ORACLE_MAXD], id = 0, m;
    collective = coll;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    oracle_types_create();
    MPI_Info_create(&no_verify);
    MPI_Info_set(no_verify, "iso_verify", "false");
    if (tap_matrix_vw_needs_pack()) {
        MPI_Info_create(&vw_pack);
        MPI_Info_set(vw_pack, "iso_verify", "false");
        MPI_Info_set(vw_pack, "iso_combine", "pack");
    }
    verbose = getenv("ISO_TEST_VERBOSE") != NULL;
    if (getenv("ISO_TEST_CASES"))
        sscanf(getenv("ISO_TEST_CASES"), "%d-%d", &case_lo, &case_hi);
    m = p <= 2 ? 1 : p <= 4 ? 2 : p <= 6 ? 3 : 4;
    for (int t = 0; oracle_topology(p, t, &d, dims, periods); t++) {
        MPI_Comm cart;
        char topo[64];
        int len = 0;
        MPI_Cart_create(MPI_COMM_WORLD, d, dims, periods, 0, &cart);
        for (int j = 0; j < d; j++)
            len += snprintf(topo + len, sizeof topo - (size_t)len, "%s%d%s", j ? "x" : "", dims[j],
                            periods[j] ? "p" : "");
        if (t == 0) { /* s = 0: one id, not filtered by ISO_TEST_CASES */
            long before = tap_errors;
            collective->run_empty(cart, topo);
            id++;
            for (int f = 0; f < NFORM; f++)
                runs[F_EMPTY][f]++;
            charge_errors(F_EMPTY, A_PLAIN, before);
        }
        for (int fam = 0; fam < F_EMPTY; fam++) {
            nbh_t n;
            for (int k = 0; make_nbh(d, fam, k, (unsigned)(t * 100 + fam * 10 + k), &n); k++) {
                /* A case costs ~15 ms at 4 and ~85 ms at 8 oversubscribed
                 * busy-polling MPICH ranks: from 3 ranks on, run every m-th
                 * family member, rotating over the topologies. */
                if ((t + k + fam) % m == 0)
                    run_case(cart, t, topo, fam, id, &n);
                id++;
                nbh_free(&n);
            }
        }
        if (t == 0) { /* count 0 with a real neighborhood */
            nbh_t n = nbh_moore(d, 1);
            run_case(cart, t, topo, F_EMPTY, id++, &n);
            nbh_free(&n);
        }
        /* On odd topologies free the neighborhood explicitly, else
         * MPI_Comm_free releases it; with ISO_TEST_CASES a topology may
         * have run no case and so have no neighborhood to free. */
        if (t % 2 && verified_topology == t) {
            MPI_Comm iso = cart;
            long before = tap_errors;
            int rc = Iso_neighborhood_free(&iso);
            CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL, "Iso_neighborhood_free rc %d", rc);
            charge_errors(F_EMPTY, A_PLAIN, before);
        }
        MPI_Comm_free(&cart);
    }
    for (int f = 1; f < NFORM; f++) { /* one line for the empty cases */
        errs[F_EMPTY][0] += errs[F_EMPTY][f];
        runs[F_EMPTY][0] += runs[F_EMPTY][f];
        runs[F_EMPTY][f] = 0;
    }
    for (int fam = 0; fam < NFAM; fam++)
        for (int f = 0; f < NFORM; f++) {
            if (!runs[fam][f])
                continue;
            tap_errors = errs[fam][f];
            if (fam == F_EMPTY)
                tap_result(MPI_COMM_WORLD, "all three forms: %s (%d calls)", family_name(fam),
                           runs[fam][f]);
            else
                tap_result(MPI_COMM_WORLD, "%s: %s (%d cases)", collective->form_name[f],
                           family_name(fam), runs[fam][f]);
        }
    MPI_Info_free(&no_verify);
    if (vw_pack != MPI_INFO_NULL)
        MPI_Info_free(&vw_pack);
    oracle_types_free();
    MPI_Finalize();
    return 0;
}
#endif
