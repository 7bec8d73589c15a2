/* Iso_neighbor_alltoall, _alltoallv and _alltoallw on von Neumann, Moore,
 * Moore-shell and random neighborhoods (repetitions, zero offset, row,
 * column and random order) over periodic, non-periodic and mixed tori with
 * dimension sizes 1, 2, 3 and larger.
 *
 * Every value identifies its sender, block and element, so a misrouted
 * block shows.  Receive buffers (with guard zones) are filled with a
 * sentinel; the expected buffer starts from the same sentinel and gets, for
 * every neighbor index i whose source (computed by oracle_neighbors from
 * MPI_Cart_get/MPI_Cart_rank) exists, block i unpacked with the receiver's
 * count and datatype (oracle_move_block), so MPI_PROC_NULL slots and the gaps
 * of derived datatypes keep the sentinel.  The two buffers are compared byte
 * for byte.  The expected buffers are computed locally because a Sendrecv
 * chain per case costs s rounds (~8 ms each at 8 oversubscribed MPICH ranks);
 * the random-neighborhood cases also run tests/oracle.h's Sendrecv oracle and
 * check that it agrees with the local computation.
 *
 * Results are batched: one TAP line per (neighborhood family, form).
 * Debugging: ISO_TEST_VERBOSE=1 makes rank 0 name every call on stderr
 * (with its case id); ISO_TEST_CASES=lo-hi runs only those case ids.
 *
 * NPROCS: 1 2 3 4 6 8
 */
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
static const char *const fam_name[NFAM] = {
    "von Neumann r=1..3",
    "Moore r=1..3 and Moore minus a smaller radius",
    "row, column and random order, zero offset included",
    "random offsets with repetitions and zero offset, far wrap-around",
    "irregular: counts vary with the sending rank",
    "s = 0 and count 0: receive buffers untouched; Iso_neighborhood_free",
    "tests/oracle.h Sendrecv oracle equals the local expected buffer",
};
enum { A_PLAIN, A_V, A_W, NFORM };
static const char *const form_name[NFORM] = {"Iso_neighbor_alltoall", "Iso_neighbor_alltoallv",
                                             "Iso_neighbor_alltoallw"};
static long errs[NFAM][NFORM];
static int verbose;                        /* ISO_TEST_VERBOSE: rank 0 names every call on stderr */
static int case_lo = 0, case_hi = 1 << 30; /* ISO_TEST_CASES=lo-hi: run only these ids */
/* iso_verify=false: the verification allreduce is ~45% of a case's cost at
 * 8 oversubscribed ranks, and every neighborhood here is isomorphic by
 * construction; the first case on each topology keeps the environment's
 * setting (ISO_VERIFY=1 under tests/tap-mpi). */
static MPI_Info no_verify;
static int verified_topology = -1;
static int runs[NFAM][NFORM];

typedef struct {
    MPI_Comm cart;
    const nbh_t *n;
    int fam, id, me, p;
    int *src, *dst; /* oracle_neighbors */
    char topo[64];
} case_t;

static unsigned hash3(unsigned a, unsigned b, unsigned c)
{
    unsigned h = a * 2654435761u ^ (b + 0x9e3779b9u) * 40503u ^ (c + 7u) * 2246822519u;
    h ^= h >> 15;
    h *= 2246822519u;
    h ^= h >> 13;
    return h;
}

/* Element k of block i sent by rank q in case id. */
static int value(int q, int i, int k, int id)
{
    return (id % 64) * 32000000 + q * 1000000 + i * 1000 + k;
}

static void fill_block(int q, int i, int id, int n, void *at, int count, MPI_Datatype type,
                       MPI_Comm comm)
{
    int *v = malloc(sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        v[k] = value(q, i, k, id);
    if (oracle_move_block(v, n, MPI_INT, at, count, type, comm))
        CHECK(0, "test bug: block of %d ints does not match its count/type", n);
    free(v);
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
          form_name[form], fam_name[c->fam], c->id, c->topo, c->n->s, k, len, slot,
          slot >= 0 ? c->src[slot] : -2, a, g, (unsigned)g, e, (unsigned)e);
}

static void check_send_intact(const case_t *c, int form, const char *sbuf, const char *copy,
                              size_t len)
{
    long k = oracle_first_diff(sbuf, copy, len);
    CHECK(k < 0, "%s, case %d on %s: send buffer modified at byte %ld", form_name[form], c->id,
          c->topo, k);
}

/* ---- Iso_neighbor_alltoall ---- */
static const struct {
    int st, sc, rt, rc;
} plain_var[] = {
    {OT_INT, 3, OT_INT, 3},         {OT_CONT2, 2, OT_INT, 4},    {OT_INT, 2, OT_RES, 2},
    {OT_VEC, 2, OT_IDX, 1},         {OT_IDXREV, 2, OT_CONT2, 3}, {OT_LB, 3, OT_RESLB, 6},
    {OT_CONT2, 2500, OT_INT, 5000}, /* 20 KB blocks: beyond the eager limit */
};
#define NPLAIN ((int)(sizeof plain_var / sizeof plain_var[0]))

static void run_plain(const case_t *c, int count0)
{
    static int calls; /* rotate through the variants over the cases that run */
    int s = c->n->s, v = calls++ % NPLAIN, rc;
    MPI_Datatype st = oracle_type[plain_var[v].st], rt = oracle_type[plain_var[v].rt];
    int sc = count0 ? 0 : plain_var[v].sc, rcn = count0 ? 0 : plain_var[v].rc;
    int n = sc * oracle_type_sig[plain_var[v].st];
    MPI_Aint slb, sext, rlb, rext, lo, len;
    MPI_Type_get_extent(st, &slb, &sext);
    MPI_Type_get_extent(rt, &rlb, &rext);
    /* all types here have true lb >= -8 and true ub <= extent */
    size_t slen = (size_t)(s * plain_var[v].sc + 1) * (size_t)sext + 2 * GUARD;
    size_t rlen = (size_t)(s * plain_var[v].rc + 1) * (size_t)rext + 2 * GUARD;
    char *sb = malloc(slen), *scopy = malloc(slen), *rb = malloc(rlen), *ex = malloc(rlen);
    MPI_Aint *slo = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    MPI_Aint *sln = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    memset(sb, JUNK, slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++)
        fill_block(c->me, i, c->id, n, sb + GUARD + (MPI_Aint)i * sc * sext, sc, st, c->cart);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn, rt, &lo, &len);
        slo[i] = GUARD + (MPI_Aint)i * rcn * rext + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], i, c->id, n, ex + GUARD + (MPI_Aint)i * rcn * rext, rcn, rt,
                       c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_alltoall(sb + GUARD, sc, st, rb + GUARD, rcn, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_alltoall returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_PLAIN, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_PLAIN, sb, scopy, slen);
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(slo);
    free(sln);
}

/* Number of units of block i sent by rank q (q < 0: PROC_NULL source, any
 * value); count0 makes every block empty. */
static int units(const case_t *c, int q, int i, int count0)
{
    if (count0)
        return 0;
    if (q < 0)
        return 1;
    if (c->fam == F_IRREG)
        return (int)(hash3((unsigned)q, (unsigned)i, (unsigned)c->id) % 4u);
    return (i * 7 + c->id) % 5;
}

/* ---- Iso_neighbor_alltoallv ---- */
static const int v_pairs[][2] = {
    {OT_INT, OT_INT}, {OT_INT, OT_RES}, {OT_CONT2, OT_INT}, {OT_VEC, OT_CONT2},
    {OT_IDX, OT_LB},  {OT_RES, OT_IDX}, {OT_LB, OT_VEC},
};
#define NVPAIRS ((int)(sizeof v_pairs / sizeof v_pairs[0]))

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

static void run_v(const case_t *c, int count0)
{
    static int calls;
    int s = c->n->s, pv = calls++ % NVPAIRS, rc;
    int sti = v_pairs[pv][0], rti = v_pairs[pv][1];
    MPI_Datatype st = oracle_type[sti], rt = oracle_type[rti];
    int unit = lcm(oracle_type_sig[sti], oracle_type_sig[rti]);
    int *sc = malloc(sizeof(int) * (size_t)(6 * s + 1)), *sd = sc + s, *rcn = sd + s, *rd = rcn + s,
        *perm = rd + s, *rperm = perm + s;
    MPI_Aint slb, sext, rlb, rext, lo, len;
    MPI_Aint *slo = malloc(sizeof(MPI_Aint) * (size_t)(2 * s + 1)), *sln = slo + s;
    MPI_Type_get_extent(st, &slb, &sext);
    MPI_Type_get_extent(rt, &rlb, &rext);
    for (int i = 0; i < s; i++) {
        sc[i] = units(c, c->me, i, count0) * unit / oracle_type_sig[sti];
        rcn[i] = units(c, c->src[i], i, count0) * unit / oracle_type_sig[rti];
    }
    make_perm(s, c->id, 1, perm);
    make_perm(s, c->id, 2, rperm);
    size_t slen = (size_t)layout_v(s, sc, perm, sd) * (size_t)sext + 2 * GUARD;
    size_t rlen = (size_t)layout_v(s, rcn, rperm, rd) * (size_t)rext + 2 * GUARD;
    char *sb = malloc(slen), *scopy = malloc(slen), *rb = malloc(rlen), *ex = malloc(rlen);
    memset(sb, JUNK, slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++)
        fill_block(c->me, i, c->id, sc[i] * oracle_type_sig[sti], sb + GUARD + sd[i] * sext, sc[i],
                   st, c->cart);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn[i], rt, &lo, &len);
        slo[i] = GUARD + rd[i] * rext + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], i, c->id, rcn[i] * oracle_type_sig[rti],
                       ex + GUARD + rd[i] * rext, rcn[i], rt, c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_alltoallv(sb + GUARD, sc, sd, st, rb + GUARD, rcn, rd, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_alltoallv returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_V, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_V, sb, scopy, slen);
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(sc);
    free(slo);
}

/* ---- Iso_neighbor_alltoallw ---- */
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

static void w_types(const case_t *c, int i, int *sti, int *rti)
{
    *sti = (int)(hash3((unsigned)i, (unsigned)c->id, 1u) % OT_N);
    *rti = (int)(hash3((unsigned)i, (unsigned)c->id, 2u) % OT_N);
}

static void run_w(const case_t *c, int count0, int with_sendrecv_oracle)
{
    int s = c->n->s, rc;
    size_t a = (size_t)s + 1;
    int *sc = malloc(sizeof(int) * 6 * a), *rcn = sc + a, *perm = rcn + a, *rperm = perm + a,
        *sti = rperm + a, *rti = sti + a;
    MPI_Aint *sd = malloc(sizeof(MPI_Aint) * 4 * a), *rd = sd + a, *slo = rd + a, *sln = slo + a;
    MPI_Datatype *st = malloc(sizeof(MPI_Datatype) * 2 * a), *rt = st + a;
    MPI_Aint sorg, rorg, lo, len;
    for (int i = 0; i < s; i++) {
        w_types(c, i, &sti[i], &rti[i]);
        int unit = lcm(oracle_type_sig[sti[i]], oracle_type_sig[rti[i]]);
        st[i] = oracle_type[sti[i]];
        rt[i] = oracle_type[rti[i]];
        sc[i] = units(c, c->me, i, count0) * unit / oracle_type_sig[sti[i]];
        rcn[i] = units(c, c->src[i], i, count0) * unit / oracle_type_sig[rti[i]];
    }
    make_perm(s, c->id, 3, perm);
    make_perm(s, c->id, 4, rperm);
    size_t slen = layout_w(s, sc, st, perm, c->id % 2, sd, &sorg) + 2 * GUARD;
    size_t rlen = layout_w(s, rcn, rt, rperm, c->id % 3 == 0, rd, &rorg) + 2 * GUARD;
    char *sb = malloc(slen), *scopy = malloc(slen), *rb = malloc(rlen), *ex = malloc(rlen);
    char *sorigin = sb + GUARD + sorg, *rorigin = rb + GUARD + rorg;
    memset(sb, JUNK, slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++)
        fill_block(c->me, i, c->id, sc[i] * oracle_type_sig[sti[i]], sorigin + sd[i], sc[i], st[i],
                   c->cart);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn[i], rt[i], &lo, &len);
        slo[i] = GUARD + rorg + rd[i] + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], i, c->id, rcn[i] * oracle_type_sig[rti[i]],
                       ex + GUARD + rorg + rd[i], rcn[i], rt[i], c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_alltoallw(sorigin, sc, sd, st, rorigin, rcn, rd, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_alltoallw returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_W, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_W, sb, scopy, slen);
    if (with_sendrecv_oracle) {
        /* The independent exchange of tests/oracle.h into a third buffer. */
        char *ob = malloc(rlen);
        long k, before = tap_errors;
        memset(ob, SENT, rlen);
        oracle_alltoallw(sorigin, sc, sd, st, ob + GUARD + rorg, rcn, rd, rt, c->cart, c->n);
        k = oracle_first_diff(ob, ex, rlen);
        CHECK(k < 0, "case %d on %s: Sendrecv oracle and local expected buffer differ at byte %ld",
              c->id, c->topo, k);
        errs[F_XCHECK][A_W] += tap_errors - before;
        tap_errors = before;
        runs[F_XCHECK][A_W]++;
        free(ob);
    }
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(sc);
    free(sd);
    free(st);
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

static void run_empty(MPI_Comm cart, const char *topo)
{
    int rc, dummy_off[ORACLE_MAXD] = {0};
    int ic[2] = {1, 1}, idp[2] = {0, 0};
    MPI_Aint wd[2] = {0, 0};
    MPI_Datatype wt[2] = {MPI_INT, MPI_INT};
    MPI_Comm iso;
    char sb[64], rb[64], ex[64];
    memset(sb, JUNK, sizeof sb);
    memset(ex, SENT, sizeof ex);
    /* s = 0: every form is a no-op */
    rc = Iso_neighborhood_create(cart, 0, dummy_off, &iso);
    CHECK(rc == MPI_SUCCESS && iso == cart, "create s=0 on %s: rc %d", topo, rc);
    memset(rb, SENT, sizeof rb);
    rc = Iso_neighbor_alltoall(sb, 3, MPI_INT, rb, 3, MPI_INT, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "alltoall s=0 on %s: rc %d", topo, rc);
    runs[F_EMPTY][A_PLAIN]++;
    rc = Iso_neighbor_alltoallv(sb, ic, idp, MPI_INT, rb, ic, idp, MPI_INT, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "alltoallv s=0 on %s: rc %d", topo, rc);
    runs[F_EMPTY][A_V]++;
    rc = Iso_neighbor_alltoallw(sb, ic, wd, wt, rb, ic, wd, wt, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "alltoallw s=0 on %s: rc %d", topo, rc);
    runs[F_EMPTY][A_W]++;
}

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
            fprintf(stderr, "# case %d: %s, %s on %s, s=%d\n", id, form_name[f], fam_name[fam],
                    topo, n->s);
        if (f == A_PLAIN)
            run_plain(&c, empty);
        else if (f == A_V)
            run_v(&c, empty);
        else
            run_w(&c, empty, fam == F_RANDOM && runs[F_XCHECK][A_W] < (c.p <= 4 ? 20 : 2));
        errs[fam][f] += tap_errors - before + cre;
        tap_errors = before;
        runs[fam][f]++;
    }
    free(c.src);
    free(c.dst);
}

int main(int argc, char **argv)
{
    int p, me, d, dims[ORACLE_MAXD], periods[ORACLE_MAXD], id = 0, m;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    oracle_types_create();
    MPI_Info_create(&no_verify);
    MPI_Info_set(no_verify, "iso_verify", "false");
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
        if (t == 0) {
            long before = tap_errors;
            run_empty(cart, topo);
            id++;
            errs[F_EMPTY][A_PLAIN] += tap_errors - before;
            tap_errors = before;
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
        if (t % 2) { /* else MPI_Comm_free releases the neighborhood */
            MPI_Comm iso = cart;
            long before = tap_errors;
            int rc = Iso_neighborhood_free(&iso);
            CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL, "Iso_neighborhood_free rc %d", rc);
            errs[F_EMPTY][A_PLAIN] += tap_errors - before;
            tap_errors = before;
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
            if (fam == F_EMPTY) {
                tap_errors = errs[fam][f];
                tap_result(MPI_COMM_WORLD, "all three forms: %s (%d calls)", fam_name[fam],
                           runs[fam][f]);
                continue;
            }
            tap_errors = errs[fam][f];
            tap_result(MPI_COMM_WORLD, "%s: %s (%d cases)", form_name[f], fam_name[fam],
                       runs[fam][f]);
        }
    MPI_Info_free(&no_verify);
    oracle_types_free();
    MPI_Finalize();
    return 0;
}
