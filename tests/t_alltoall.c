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
 * The cases, their ids and the TAP lines (one per neighborhood family and
 * form) come from tests/cases.h, shared with tests/t_allgather.c; so do
 * ISO_TEST_VERBOSE and ISO_TEST_CASES.
 *
 * NPROCS: 1 2 3 4 6 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"
#include "cases.h"

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
        count_run(F_XCHECK, A_W, before);
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
    rc = Iso_neighbor_alltoallv(sb, ic, idp, MPI_INT, rb, ic, idp, MPI_INT, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "alltoallv s=0 on %s: rc %d", topo, rc);
    rc = Iso_neighbor_alltoallw(sb, ic, wd, wt, rb, ic, wd, wt, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "alltoallw s=0 on %s: rc %d", topo, rc);
}

static const collective_t alltoall = {
    .form_name = {"Iso_neighbor_alltoall", "Iso_neighbor_alltoallv", "Iso_neighbor_alltoallw"},
    .irregular = "irregular: counts vary with the sending rank",
    .run_plain = run_plain,
    .run_v = run_v,
    .run_w = run_w,
    .run_empty = run_empty,
};

int main(int argc, char **argv)
{
    return cases_main(argc, argv, &alltoall);
}
