/* Iso_neighbor_allgather, _allgatherv and _allgatherw on von Neumann,
 * Moore, Moore-shell and random neighborhoods (repetitions, zero offset,
 * row, column and random order) over periodic, non-periodic and mixed tori
 * with dimension sizes 1, 2, 3 and larger.
 *
 * Every value identifies its sender and element, so a block from the wrong
 * source shows.  Receive buffers (with guard zones) are filled with a
 * sentinel; the expected buffer starts from the same sentinel and gets, for
 * every neighbor index i whose source (computed by oracle_neighbors from
 * MPI_Cart_get/MPI_Cart_rank) exists, the source's block unpacked with the
 * receiver's count and datatype (oracle_move_block), so MPI_PROC_NULL slots
 * and the gaps of derived datatypes keep the sentinel.  The two buffers are
 * compared byte for byte.  The expected buffers are computed locally because
 * a Sendrecv chain per case costs s rounds (~8 ms each at 8 oversubscribed
 * MPICH ranks); the random-neighborhood cases also run tests/oracle.h's
 * Sendrecv oracle and check that it agrees with the local computation.
 *
 * The cases, their ids and the TAP lines (one per neighborhood family and
 * form) come from tests/cases.h, shared with tests/t_alltoall.c; so do
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

/* Element k of the block sent by rank q in case id. */
static int value(int q, int k, int id)
{
    return (id % 64) * 32000000 + q * 1000000 + k;
}

static void fill_block(int q, int id, int n, void *at, int count, MPI_Datatype type, MPI_Comm comm)
{
    int *v = malloc(sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n; k++)
        v[k] = value(q, k, id);
    if (oracle_move_block(v, n, MPI_INT, at, count, type, comm))
        CHECK(0, "test bug: block of %d ints does not match its count/type", n);
    free(v);
}

/* ---- Iso_neighbor_allgather ---- */
static const struct {
    int st, sc, rt, rc;
} plain_var[] = {
    {OT_INT, 3, OT_INT, 3},    {OT_VEC, 2, OT_INT, 4},         {OT_INT, 4, OT_RES, 4},
    {OT_CONT2, 2, OT_IDX, 1},  {OT_IDXREV, 2, OT_CONT2, 3},    {OT_LB, 3, OT_RESLB, 6},
    {OT_VECNEG, 2, OT_VEC, 2}, {OT_INT, 5000, OT_CONT2, 2500}, /* 20 KB blocks */
};
#define NPLAIN ((int)(sizeof plain_var / sizeof plain_var[0]))

/* The send buffer of rank q: count x type at sb + GUARD + 16 (room for a
 * negative true lower bound); returns its length. */
static size_t make_send(const case_t *c, int q, int count, MPI_Datatype type, char **sb)
{
    MPI_Aint lo, len;
    int size;
    oracle_footprint(count, type, &lo, &len);
    size_t slen = (size_t)(16 + lo + len) + 2 * GUARD + 16;
    *sb = malloc(slen);
    memset(*sb, JUNK, slen);
    MPI_Type_size(type, &size);
    fill_block(q, c->id, size / (int)sizeof(int) * count, *sb + GUARD + 16, count, type, c->cart);
    return slen;
}

static void run_plain(const case_t *c, int count0)
{
    static int calls; /* rotate through the variants over the cases that run */
    int s = c->n->s, v = calls++ % NPLAIN, rc;
    MPI_Datatype st = oracle_type[plain_var[v].st], rt = oracle_type[plain_var[v].rt];
    int sc = count0 ? 0 : plain_var[v].sc, rcn = count0 ? 0 : plain_var[v].rc;
    int n = sc * oracle_type_sig[plain_var[v].st];
    MPI_Aint rlb, rext, lo, len;
    char *sb, *scopy;
    MPI_Type_get_extent(rt, &rlb, &rext);
    size_t slen = make_send(c, c->me, sc, st, &sb);
    size_t rlen = (size_t)(s * plain_var[v].rc + 1) * (size_t)rext + 2 * GUARD;
    char *rb = malloc(rlen), *ex = malloc(rlen);
    MPI_Aint *slo = malloc(sizeof(MPI_Aint) * (size_t)(2 * s + 1)), *sln = slo + s;
    scopy = malloc(slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn, rt, &lo, &len);
        slo[i] = GUARD + (MPI_Aint)i * rcn * rext + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], c->id, n, ex + GUARD + (MPI_Aint)i * rcn * rext, rcn, rt,
                       c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_allgather(sb + GUARD + 16, sc, st, rb + GUARD, rcn, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_allgather returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_PLAIN, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_PLAIN, sb, scopy, slen);
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(slo);
}

/* Number of units sent by rank q (q < 0: PROC_NULL source, any value);
 * count0 makes every block empty. */
static int units(const case_t *c, int q, int count0)
{
    if (count0)
        return 0;
    if (q < 0)
        return 1;
    if (c->fam == F_IRREG)
        return (int)(hash3((unsigned)q, (unsigned)c->id, 3u) % 4u);
    return 1 + c->id % 3;
}

/* ---- Iso_neighbor_allgatherv ---- */
static const int v_pairs[][2] = {
    {OT_INT, OT_INT}, {OT_INT, OT_RES}, {OT_VEC, OT_INT},    {OT_CONT2, OT_VEC},
    {OT_IDX, OT_LB},  {OT_RES, OT_IDX}, {OT_IDXREV, OT_RES}, {OT_VECNEG, OT_CONT2},
};
#define NVPAIRS ((int)(sizeof v_pairs / sizeof v_pairs[0]))

static void run_v(const case_t *c, int count0)
{
    static int calls;
    int s = c->n->s, pv = calls++ % NVPAIRS, rc;
    int sti = v_pairs[pv][0], rti = v_pairs[pv][1];
    MPI_Datatype st = oracle_type[sti], rt = oracle_type[rti];
    int unit = lcm(oracle_type_sig[sti], oracle_type_sig[rti]);
    int sc = units(c, c->me, count0) * unit / oracle_type_sig[sti];
    int *rcn = malloc(sizeof(int) * (size_t)(3 * s + 1)), *rd = rcn + s, *rperm = rd + s;
    MPI_Aint rlb, rext, lo, len;
    MPI_Aint *slo = malloc(sizeof(MPI_Aint) * (size_t)(2 * s + 1)), *sln = slo + s;
    char *sb, *scopy;
    MPI_Type_get_extent(rt, &rlb, &rext);
    for (int i = 0; i < s; i++)
        rcn[i] = units(c, c->src[i], count0) * unit / oracle_type_sig[rti];
    make_perm(s, c->id, 2, rperm);
    size_t slen = make_send(c, c->me, sc, st, &sb);
    size_t rlen = (size_t)layout_v(s, rcn, rperm, rd) * (size_t)rext + 2 * GUARD;
    char *rb = malloc(rlen), *ex = malloc(rlen);
    scopy = malloc(slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn[i], rt, &lo, &len);
        slo[i] = GUARD + rd[i] * rext + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], c->id, rcn[i] * oracle_type_sig[rti], ex + GUARD + rd[i] * rext,
                       rcn[i], rt, c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_allgatherv(sb + GUARD + 16, sc, st, rb + GUARD, rcn, rd, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_allgatherv returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_V, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_V, sb, scopy, slen);
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(rcn);
    free(slo);
}

/* ---- Iso_neighbor_allgatherw ---- */
/* Send n = 12 x units ints (every type's signature divides 12), received
 * with a different datatype, and so a different count, in every slot. */
static void run_w(const case_t *c, int count0, int with_sendrecv_oracle)
{
    int s = c->n->s, rc;
    size_t a = (size_t)s + 1;
    int sti = (int)(hash3(0u, (unsigned)c->id, 1u) % OT_N);
    MPI_Datatype st = oracle_type[sti];
    int sc = units(c, c->me, count0) * 12 / oracle_type_sig[sti];
    int *rcn = malloc(sizeof(int) * 3 * a), *rperm = rcn + a, *rti = rperm + a;
    MPI_Aint *rd = malloc(sizeof(MPI_Aint) * 3 * a), *slo = rd + a, *sln = slo + a;
    MPI_Datatype *rt = malloc(sizeof(MPI_Datatype) * a);
    MPI_Aint rorg, lo, len;
    char *sb, *scopy;
    for (int i = 0; i < s; i++) {
        rti[i] = (int)(hash3((unsigned)i, (unsigned)c->id, 2u) % OT_N);
        rt[i] = oracle_type[rti[i]];
        rcn[i] = units(c, c->src[i], count0) * 12 / oracle_type_sig[rti[i]];
    }
    make_perm(s, c->id, 4, rperm);
    size_t slen = make_send(c, c->me, sc, st, &sb);
    size_t rlen = layout_w(s, rcn, rt, rperm, c->id % 2, rd, &rorg) + 2 * GUARD;
    char *rb = malloc(rlen), *ex = malloc(rlen);
    char *rorigin = rb + GUARD + rorg;
    scopy = malloc(slen);
    memset(rb, SENT, rlen);
    memset(ex, SENT, rlen);
    for (int i = 0; i < s; i++) {
        oracle_footprint(rcn[i], rt[i], &lo, &len);
        slo[i] = GUARD + rorg + rd[i] + lo;
        sln[i] = len;
        if (c->src[i] != MPI_PROC_NULL)
            fill_block(c->src[i], c->id, rcn[i] * oracle_type_sig[rti[i]],
                       ex + GUARD + rorg + rd[i], rcn[i], rt[i], c->cart);
    }
    memcpy(scopy, sb, slen);
    rc = Iso_neighbor_allgatherw(sb + GUARD + 16, sc, st, rorigin, rcn, rd, rt, c->cart);
    CHECK(rc == MPI_SUCCESS, "Iso_neighbor_allgatherw returned %d (case %d on %s)", rc, c->id,
          c->topo);
    compare(c, A_W, rb, ex, rlen, slo, sln);
    check_send_intact(c, A_W, sb, scopy, slen);
    if (with_sendrecv_oracle) {
        /* The independent exchange of tests/oracle.h (allgather = alltoallw
         * with every block at displacement 0) into a third buffer. */
        char *ob = malloc(rlen);
        int *scs = malloc(sizeof(int) * a);
        MPI_Aint *sds = malloc(sizeof(MPI_Aint) * a);
        MPI_Datatype *sts = malloc(sizeof(MPI_Datatype) * a);
        long k, before = tap_errors;
        for (int i = 0; i < s; i++) {
            scs[i] = sc;
            sds[i] = 0;
            sts[i] = st;
        }
        memset(ob, SENT, rlen);
        oracle_alltoallw(sb + GUARD + 16, scs, sds, sts, ob + GUARD + rorg, rcn, rd, rt, c->cart,
                         c->n);
        k = oracle_first_diff(ob, ex, rlen);
        CHECK(k < 0, "case %d on %s: Sendrecv oracle and local expected buffer differ at byte %ld",
              c->id, c->topo, k);
        count_run(F_XCHECK, A_W, before);
        free(ob);
        free(scs);
        free(sds);
        free(sts);
    }
    free(sb);
    free(scopy);
    free(rb);
    free(ex);
    free(rcn);
    free(rd);
    free(rt);
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
    rc = Iso_neighbor_allgather(sb, 3, MPI_INT, rb, 3, MPI_INT, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "allgather s=0 on %s: rc %d", topo, rc);
    rc = Iso_neighbor_allgatherv(sb, 1, MPI_INT, rb, ic, idp, MPI_INT, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "allgatherv s=0 on %s: rc %d", topo, rc);
    rc = Iso_neighbor_allgatherw(sb, 1, MPI_INT, rb, ic, wd, wt, cart);
    CHECK(rc == MPI_SUCCESS && !memcmp(rb, ex, sizeof rb), "allgatherw s=0 on %s: rc %d", topo, rc);
}

static const collective_t allgather = {
    .form_name = {"Iso_neighbor_allgather", "Iso_neighbor_allgatherv", "Iso_neighbor_allgatherw"},
    .irregular = "irregular: count varies with the sending rank",
    .run_plain = run_plain,
    .run_v = run_v,
    .run_w = run_w,
    .run_empty = run_empty,
};

int main(int argc, char **argv)
{
    return cases_main(argc, argv, &allgather);
}
