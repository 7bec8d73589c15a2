/* Neighborhood and request lifecycles: many create/free cycles with
 * requests (leaks show up in the ASan build), creating again replaces the
 * neighborhood, Iso_neighborhood_free clears the handle and leaves the
 * Cartesian communicator usable for plain MPI, an outstanding request
 * survives Iso_neighborhood_free, MPI_Comm_free of a communicator with a
 * neighborhood (and after persistent/nonblocking requests), and
 * MPI_Comm_dup of an isocomm: the duplicate carries a copy of the
 * neighborhood and stays correct and independent of the original; a
 * nonblocking or persistent call on a fresh duplicate does not block.
 *
 * NPROCS: 1 2 4 8
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

static int rank, nprocs;

/* Alltoall/allgather data (2 ints per block) for one neighborhood, with the
 * expected receive buffers from the Sendrecv oracle. */
typedef struct {
    const nbh_t *nb;
    int n; /* 2*s + 1 (one guard element) */
    int *a2a_send, *a2a_want, *ag_send, *ag_want, *rbuf;
} xfer_t;

static void xfer_init(xfer_t *x, MPI_Comm cart, const nbh_t *nb, int salt)
{
    int s = nb->s, n = 2 * s + 1;
    x->nb = nb;
    x->n = n;
    x->a2a_send = malloc(sizeof(int) * (size_t)n);
    x->a2a_want = malloc(sizeof(int) * (size_t)n);
    x->ag_send = malloc(sizeof(int) * (size_t)n);
    x->ag_want = malloc(sizeof(int) * (size_t)n);
    x->rbuf = malloc(sizeof(int) * (size_t)n);
    int *cnt = malloc(sizeof(int) * (size_t)n);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * (size_t)n);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)n);
    for (int j = 0; j < n; j++) {
        x->a2a_send[j] = 100000 * salt + 100 * rank + j;
        x->ag_send[j] = 100000 * salt + 100 * rank + 50 + j % 2; /* same block for all i */
        x->a2a_want[j] = x->ag_want[j] = -1;
    }
    for (int i = 0; i < s; i++)
        cnt[i] = 2, dsp[i] = (MPI_Aint)((size_t)i * 2 * sizeof(int)), ty[i] = MPI_INT;
    oracle_alltoallw_on(x->a2a_send, cnt, dsp, ty, x->a2a_want, cnt, dsp, ty, cart, ocomm, nb);
    oracle_alltoallw_on(x->ag_send, cnt, dsp, ty, x->ag_want, cnt, dsp, ty, cart, ocomm, nb);
    free(cnt), free(dsp), free(ty);
}

static void xfer_free(xfer_t *x)
{
    free(x->a2a_send), free(x->a2a_want), free(x->ag_send), free(x->ag_want), free(x->rbuf);
}

static void xfer_reset(xfer_t *x)
{
    for (int j = 0; j < x->n; j++)
        x->rbuf[j] = -1;
}

static void xfer_check(xfer_t *x, int allgather, const char *what)
{
    const int *want = allgather ? x->ag_want : x->a2a_want;
    for (int j = 0; j < x->n; j++)
        if (x->rbuf[j] != want[j]) {
            CHECK(0, "%s: %s recvbuf[%d] = %d, expected %d", what,
                  allgather ? "allgather" : "alltoall", j, x->rbuf[j], want[j]);
            break;
        }
}

/* Blocking alltoall and allgather on comm, checked. */
static void xfer_run(xfer_t *x, MPI_Comm comm, const char *what)
{
    xfer_reset(x);
    int rc = Iso_neighbor_alltoall(x->a2a_send, 2, MPI_INT, x->rbuf, 2, MPI_INT, comm);
    CHECK(rc == MPI_SUCCESS, "%s: alltoall rc=%d", what, rc);
    xfer_check(x, 0, what);
    xfer_reset(x);
    rc = Iso_neighbor_allgather(x->ag_send, 2, MPI_INT, x->rbuf, 2, MPI_INT, comm);
    CHECK(rc == MPI_SUCCESS, "%s: allgather rc=%d", what, rc);
    xfer_check(x, 1, what);
}

/* Iso_neighborhood_count/get on comm against the oracle for nb. */
static void check_queries(MPI_Comm comm, MPI_Comm cart, const nbh_t *nb, const char *what)
{
    int s = nb->s, qs = -1, qi = -1, qo = -1, in = 0, out = 0;
    size_t ns = (size_t)(s > 0 ? s : 1);
    int *src = malloc(sizeof(int) * ns), *dst = malloc(sizeof(int) * ns);
    int *qsrc = malloc(sizeof(int) * ns), *qdst = malloc(sizeof(int) * ns);
    oracle_neighbors(cart, nb, src, dst);
    for (int i = 0; i < s; i++)
        in += src[i] != MPI_PROC_NULL, out += dst[i] != MPI_PROC_NULL;
    int rc = Iso_neighborhood_count(comm, &qs, &qi, &qo);
    CHECK(rc == MPI_SUCCESS && qs == s && qi == in && qo == out,
          "%s: Iso_neighborhood_count rc=%d s=%d/%d in=%d/%d out=%d/%d", what, rc, qs, s, qi, in,
          qo, out);
    rc = Iso_neighborhood_get(comm, s, qsrc, qdst);
    CHECK(rc == MPI_SUCCESS, "%s: Iso_neighborhood_get rc=%d", what, rc);
    if (rc == MPI_SUCCESS)
        for (int i = 0; i < s; i++)
            CHECK(qsrc[i] == src[i] && qdst[i] == dst[i],
                  "%s: Iso_neighborhood_get[%d] = (%d, %d), expected (%d, %d)", what, i, qsrc[i],
                  qdst[i], src[i], dst[i]);
    free(src), free(dst), free(qsrc), free(qdst);
}

static void expect_class(int rc, Iso_error want, const char *what)
{
    Iso_error got = ISO_ERR_NONE;
    if (rc != MPI_SUCCESS)
        Iso_error_class(rc, &got);
    CHECK(rc != MPI_SUCCESS && got == want, "%s: rc=%d class %d, expected %d", what, rc, (int)got,
          (int)want);
}

static MPI_Comm new_cart(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 0};
    MPI_Comm c = oracle_cart(2, dims, periods);
    MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
    return c;
}

#define NL 4
static nbh_t lists[NL];

static void make_lists(void)
{
    static const int one_dir[2] = {1, 0};
    lists[0] = nbh_moore(2, 1);
    lists[1] = (nbh_t){2, 0, NULL};
    nbh_push(&lists[1], one_dir);
    lists[2] = nbh_shell(2, 1, -1, 2); /* von Neumann r2 with the zero offset */
    lists[3] = nbh_random(2, 5, 2, 777u);
    int rep[2] = {lists[3].off[0], lists[3].off[1]}; /* a repeated offset */
    nbh_push(&lists[3], rep);
}

static void test_cycles(MPI_Comm cart)
{
    /* Each cycle costs a few collectives (verification allreduce, private
     * communicator); fewer cycles at larger p keep the run short. */
    int iters = nprocs <= 2 ? 200 : nprocs <= 4 ? 60 : 20, rc;
    xfer_t x[NL];
    for (int k = 0; k < NL; k++)
        xfer_init(&x[k], cart, &lists[k], k);
    for (int it = 0; it < iters; it++) {
        int k = it % NL;
        const nbh_t *nb = &lists[k];
        MPI_Comm iso = MPI_COMM_NULL;
        Iso_request r = ISO_REQUEST_NULL;
        rc = Iso_neighborhood_create(cart, nb->s, nb->off, &iso);
        CHECK(rc == MPI_SUCCESS && iso == cart, "cycle %d: create rc=%d", it, rc);
        int qs = -1, qi, qo;
        rc = Iso_neighborhood_count(iso, &qs, &qi, &qo);
        CHECK(rc == MPI_SUCCESS && qs == nb->s, "cycle %d: count rc=%d s=%d", it, rc, qs);
        /* A persistent request that is never started. */
        rc = Iso_neighbor_alltoall_init(x[k].a2a_send, 2, MPI_INT, x[k].rbuf, 2, MPI_INT, iso,
                                        MPI_INFO_NULL, &r);
        CHECK(rc == MPI_SUCCESS, "cycle %d: alltoall_init rc=%d", it, rc);
        rc = Iso_request_free(&r);
        CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "cycle %d: request_free rc=%d", it, rc);
        if (it % 10 == 3) { /* nonblocking, checked */
            xfer_reset(&x[k]);
            rc = Iso_ineighbor_alltoall(x[k].a2a_send, 2, MPI_INT, x[k].rbuf, 2, MPI_INT, iso, &r);
            CHECK(rc == MPI_SUCCESS, "cycle %d: ineighbor_alltoall rc=%d", it, rc);
            rc = Iso_wait(&r);
            CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "cycle %d: wait rc=%d", it, rc);
            xfer_check(&x[k], 0, "create/free cycle, nonblocking");
        } else if (it % 10 == 8) { /* persistent, started twice, checked */
            rc = Iso_neighbor_allgather_init(x[k].ag_send, 2, MPI_INT, x[k].rbuf, 2, MPI_INT, iso,
                                             MPI_INFO_NULL, &r);
            CHECK(rc == MPI_SUCCESS, "cycle %d: allgather_init rc=%d", it, rc);
            for (int t = 0; t < 2 && rc == MPI_SUCCESS; t++) {
                xfer_reset(&x[k]);
                rc = Iso_start(&r);
                CHECK(rc == MPI_SUCCESS, "cycle %d: start rc=%d", it, rc);
                rc = Iso_wait(&r);
                CHECK(rc == MPI_SUCCESS, "cycle %d: wait rc=%d", it, rc);
                xfer_check(&x[k], 1, "create/free cycle, persistent");
            }
            rc = Iso_request_free(&r);
            CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "cycle %d: free rc=%d", it, rc);
        }
        rc = Iso_neighborhood_free(&iso);
        CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL,
              "cycle %d: Iso_neighborhood_free rc=%d, handle %s", it, rc,
              iso == MPI_COMM_NULL ? "MPI_COMM_NULL" : "not cleared");
    }
    for (int k = 0; k < NL; k++)
        xfer_free(&x[k]);
    tap_result(MPI_COMM_WORLD,
               "%d create/free cycles over 4 neighborhoods with persistent and nonblocking "
               "requests",
               iters);
}

static void test_replace(MPI_Comm cart)
{
    MPI_Comm iso = MPI_COMM_NULL, iso2 = MPI_COMM_NULL;
    xfer_t x[3];
    const int order[3] = {0, 2, 1};
    for (int j = 0; j < 3; j++)
        xfer_init(&x[j], cart, &lists[order[j]], 10 + j);
    int rc = Iso_neighborhood_create(cart, lists[0].s, lists[0].off, &iso);
    CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
    xfer_run(&x[0], iso, "first neighborhood");
    check_queries(iso, cart, &lists[0], "first neighborhood");
    /* Again on the same communicator, no free in between: replaces. */
    rc = Iso_neighborhood_create(cart, lists[2].s, lists[2].off, &iso2);
    CHECK(rc == MPI_SUCCESS && iso2 == cart, "replacing create rc=%d", rc);
    check_queries(cart, cart, &lists[2], "replaced neighborhood");
    xfer_run(&x[1], cart, "replaced neighborhood");
    /* And again through the isocomm handle, with a smaller s. */
    rc = Iso_neighborhood_create(iso2, lists[1].s, lists[1].off, &iso);
    CHECK(rc == MPI_SUCCESS && iso == cart, "second replacing create rc=%d", rc);
    check_queries(iso, cart, &lists[1], "replaced again (s=1)");
    xfer_run(&x[2], iso, "replaced again (s=1)");
    /* The same offsets again: kept as it is (issue 12: re-creation is cheap). */
    rc = Iso_neighborhood_create(iso, lists[1].s, lists[1].off, &iso);
    CHECK(rc == MPI_SUCCESS && iso == cart, "create with the same offsets rc=%d", rc);
    check_queries(iso, cart, &lists[1], "created again with the same offsets");
    xfer_run(&x[2], iso, "created again with the same offsets");
    /* The same s with other offsets (negated): replaced. */
    {
        size_t n = (size_t)lists[2].s * (size_t)lists[2].d;
        int *neg = malloc(sizeof(int) * (n + 1));
        nbh_t negated = {lists[2].d, lists[2].s, neg};
        for (size_t k = 0; k < n; k++)
            neg[k] = -lists[2].off[k];
        rc = Iso_neighborhood_create(iso, lists[2].s, lists[2].off, &iso);
        CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
        rc = Iso_neighborhood_create(iso, negated.s, negated.off, &iso);
        CHECK(rc == MPI_SUCCESS, "create with negated offsets rc=%d", rc);
        check_queries(iso, cart, &negated, "the same s with negated offsets");
        free(neg);
    }
    rc = Iso_neighborhood_free(&iso);
    CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL, "free rc=%d", rc);
    for (int j = 0; j < 3; j++)
        xfer_free(&x[j]);
    tap_result(MPI_COMM_WORLD, "creating again replaces the neighborhood (new offsets take effect)");
}

static void test_free(MPI_Comm cart)
{
    MPI_Comm iso = MPI_COMM_NULL, h;
    xfer_t x;
    xfer_init(&x, cart, &lists[0], 20);
    int rc = Iso_neighborhood_create(cart, lists[0].s, lists[0].off, &iso);
    CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
    xfer_run(&x, iso, "before free");
    rc = Iso_neighborhood_free(&iso);
    CHECK(rc == MPI_SUCCESS && iso == MPI_COMM_NULL, "Iso_neighborhood_free rc=%d", rc);
    /* Plain MPI on the Cartesian communicator still works. */
    {
        int sum = 0, topo = -1, src, dst, got = -1;
        MPI_Topo_test(cart, &topo);
        CHECK_EQ_INT(topo, MPI_CART, "topology after Iso_neighborhood_free");
        rc = MPI_Allreduce(&rank, &sum, 1, MPI_INT, MPI_SUM, cart);
        CHECK(rc == MPI_SUCCESS && sum == nprocs * (nprocs - 1) / 2, "MPI_Allreduce on cart");
        MPI_Cart_shift(cart, 0, 1, &src, &dst);
        rc = MPI_Sendrecv(&rank, 1, MPI_INT, dst, 3, &got, 1, MPI_INT, src, 3, cart,
                          MPI_STATUS_IGNORE);
        CHECK(rc == MPI_SUCCESS && got == src, "MPI_Sendrecv on cart: got %d from %d", got, src);
    }
    int qs, qi, qo;
    rc = Iso_neighborhood_count(cart, &qs, &qi, &qo);
    expect_class(rc, ISO_ERR_NO_NEIGHBORHOOD, "Iso_neighborhood_count after free");
    xfer_reset(&x);
    rc = Iso_neighbor_alltoall(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, cart);
    expect_class(rc, ISO_ERR_NO_NEIGHBORHOOD, "Iso_neighbor_alltoall after free");
    rc = Iso_neighborhood_create(cart, lists[0].s, lists[0].off, &iso);
    CHECK(rc == MPI_SUCCESS, "create again rc=%d", rc);
    xfer_run(&x, iso, "created again after free");
    tap_result(MPI_COMM_WORLD,
               "Iso_neighborhood_free: handle MPI_COMM_NULL, cart usable for MPI, no neighborhood");

    /* An active request survives Iso_neighborhood_free; a persistent one
     * can still be freed. */
    Iso_request r = ISO_REQUEST_NULL, p = ISO_REQUEST_NULL;
    xfer_reset(&x);
    rc = Iso_neighbor_alltoall_init(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, iso,
                                    MPI_INFO_NULL, &p);
    CHECK(rc == MPI_SUCCESS, "alltoall_init rc=%d", rc);
    rc = Iso_ineighbor_allgather(x.ag_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, iso, &r);
    CHECK(rc == MPI_SUCCESS, "ineighbor_allgather rc=%d", rc);
    h = iso;
    rc = Iso_neighborhood_free(&h);
    CHECK(rc == MPI_SUCCESS && h == MPI_COMM_NULL, "free with an active request rc=%d", rc);
    rc = Iso_wait(&r);
    CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "Iso_wait after neighborhood free rc=%d", rc);
    xfer_check(&x, 1, "request outstanding across Iso_neighborhood_free");
    rc = Iso_request_free(&p);
    CHECK(rc == MPI_SUCCESS && p == ISO_REQUEST_NULL, "persistent free after nbh free rc=%d", rc);
    xfer_free(&x);
    tap_result(MPI_COMM_WORLD,
               "outstanding request completes after Iso_neighborhood_free; persistent freed later");
}

static void test_comm_free(void)
{
    int rc;
    for (int variant = 0; variant < 4; variant++) {
        MPI_Comm c = new_cart(), iso;
        xfer_t x;
        xfer_init(&x, c, &lists[variant % NL], 30 + variant);
        rc = Iso_neighborhood_create(c, lists[variant % NL].s, lists[variant % NL].off, &iso);
        CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
        if (variant == 1) {
            xfer_run(&x, iso, "before MPI_Comm_free");
        } else if (variant == 2) { /* completed persistent request, freed */
            Iso_request p;
            rc = Iso_neighbor_alltoall_init(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, iso,
                                            MPI_INFO_NULL, &p);
            CHECK(rc == MPI_SUCCESS, "init rc=%d", rc);
            for (int t = 0; t < 3; t++) {
                xfer_reset(&x);
                rc = Iso_start(&p);
                CHECK(rc == MPI_SUCCESS, "start rc=%d", rc);
                rc = Iso_wait(&p);
                CHECK(rc == MPI_SUCCESS, "wait rc=%d", rc);
                xfer_check(&x, 0, "persistent before MPI_Comm_free");
            }
            rc = Iso_request_free(&p);
            CHECK(rc == MPI_SUCCESS && p == ISO_REQUEST_NULL, "request_free rc=%d", rc);
        } else if (variant == 3) { /* completed nonblocking requests */
            Iso_request r[2];
            int *rb2 = malloc(sizeof(int) * (size_t)x.n);
            xfer_reset(&x);
            rc = Iso_ineighbor_alltoall(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, iso, &r[0]);
            CHECK(rc == MPI_SUCCESS, "ialltoall rc=%d", rc);
            rc = Iso_ineighbor_allgather(x.ag_send, 2, MPI_INT, rb2, 2, MPI_INT, iso, &r[1]);
            CHECK(rc == MPI_SUCCESS, "iallgather rc=%d", rc);
            rc = Iso_waitall(2, r);
            CHECK(rc == MPI_SUCCESS, "waitall rc=%d", rc);
            xfer_check(&x, 0, "nonblocking before MPI_Comm_free");
            free(rb2);
        }
        xfer_free(&x);
        rc = MPI_Comm_free(&c);
        CHECK(rc == MPI_SUCCESS && c == MPI_COMM_NULL, "MPI_Comm_free rc=%d", rc);
    }
    tap_result(MPI_COMM_WORLD,
               "MPI_Comm_free of a cart comm with a neighborhood (idle, used, after persistent "
               "and nonblocking requests)");
}

static void test_dup(void)
{
    MPI_Comm c = new_cart(), iso, dup, dup2, handle;
    const nbh_t *A = &lists[0], *B = &lists[2];
    xfer_t xa, xa2, xb;
    int rc, topo = -1;
    xfer_init(&xa, c, A, 40);
    xfer_init(&xa2, c, A, 41);
    xfer_init(&xb, c, B, 42);
    rc = Iso_neighborhood_create(c, A->s, A->off, &iso);
    CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
    rc = MPI_Comm_dup(iso, &dup);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_dup rc=%d", rc);
    MPI_Topo_test(dup, &topo);
    CHECK_EQ_INT(topo, MPI_CART, "dup topology");
    check_queries(dup, c, A, "dup");
    xfer_run(&xa, dup, "dup");
    xfer_run(&xa, iso, "original after dup");

    /* Outstanding on both at once, completed in rank-dependent order. */
    {
        int *rb2 = malloc(sizeof(int) * (size_t)xa2.n);
        Iso_request r1, r2;
        xfer_reset(&xa);
        for (int j = 0; j < xa2.n; j++)
            rb2[j] = -1;
        rc = Iso_ineighbor_alltoall(xa.a2a_send, 2, MPI_INT, xa.rbuf, 2, MPI_INT, iso, &r1);
        CHECK(rc == MPI_SUCCESS, "ialltoall on original rc=%d", rc);
        rc = Iso_ineighbor_alltoall(xa2.a2a_send, 2, MPI_INT, rb2, 2, MPI_INT, dup, &r2);
        CHECK(rc == MPI_SUCCESS, "ialltoall on dup rc=%d", rc);
        if (rank % 2) {
            rc = Iso_wait(&r2);
            rc |= Iso_wait(&r1);
        } else {
            rc = Iso_wait(&r1);
            rc |= Iso_wait(&r2);
        }
        CHECK(rc == MPI_SUCCESS, "waits failed");
        xfer_check(&xa, 0, "original, concurrent with dup");
        memcpy(xa2.rbuf, rb2, sizeof(int) * (size_t)xa2.n);
        xfer_check(&xa2, 0, "dup, concurrent with original");
        free(rb2);
    }
    tap_result(MPI_COMM_WORLD, "MPI_Comm_dup of an isocomm carries the neighborhood; both "
                               "usable, also concurrently");

    /* Replacing the original's neighborhood does not change the dup. */
    rc = Iso_neighborhood_create(iso, B->s, B->off, &iso);
    CHECK(rc == MPI_SUCCESS, "re-create original rc=%d", rc);
    check_queries(iso, c, B, "original re-created");
    check_queries(dup, c, A, "dup after original re-created");
    xfer_run(&xb, iso, "original re-created");
    xfer_run(&xa, dup, "dup after original re-created");
    /* Freeing the original's neighborhood, then the original itself. */
    handle = iso;
    rc = Iso_neighborhood_free(&handle);
    CHECK(rc == MPI_SUCCESS, "free original nbh rc=%d", rc);
    check_queries(dup, c, A, "dup after original's neighborhood freed");
    xfer_run(&xa, dup, "dup after original's neighborhood freed");
    rc = MPI_Comm_dup(dup, &dup2);
    CHECK(rc == MPI_SUCCESS, "dup of dup rc=%d", rc);
    MPI_Comm_free(&c);
    xfer_run(&xa, dup, "dup after MPI_Comm_free of the original");
    xfer_run(&xa2, dup2, "dup of dup after MPI_Comm_free of the original");
    {
        int qs = -1, qi = -1, qo = -1;
        rc = Iso_neighborhood_count(dup2, &qs, &qi, &qo);
        CHECK(rc == MPI_SUCCESS && qs == A->s, "count on dup of dup rc=%d s=%d", rc, qs);
    }
    rc = MPI_Comm_free(&dup2);
    CHECK(rc == MPI_SUCCESS, "MPI_Comm_free dup2 rc=%d", rc);
    handle = dup;
    rc = Iso_neighborhood_free(&handle);
    CHECK(rc == MPI_SUCCESS && handle == MPI_COMM_NULL, "Iso_neighborhood_free(dup) rc=%d", rc);
    MPI_Comm_free(&dup);

    /* Dup of a cart comm without a neighborhood has none. */
    {
        MPI_Comm plain = new_cart(), pdup;
        int qs, qi, qo;
        MPI_Comm_dup(plain, &pdup);
        rc = Iso_neighborhood_count(pdup, &qs, &qi, &qo);
        expect_class(rc, ISO_ERR_NO_NEIGHBORHOOD, "count on dup of a plain cart comm");
        MPI_Comm_free(&pdup);
        MPI_Comm_free(&plain);
    }
    xfer_free(&xa);
    xfer_free(&xa2);
    xfer_free(&xb);
    tap_result(MPI_COMM_WORLD, "dup independent of the original: re-create, Iso_neighborhood_free "
                               "and MPI_Comm_free of the original; dup of dup");
}

/* A nonblocking or persistent call on a fresh MPI_Comm_dup of an isocomm
 * must not wait for other processes (its private communicator is made with
 * MPI_Comm_idup): in a chain, rank k starts the call and then sends a token
 * to rank k+1, which receives it before starting.  A blocking duplication
 * inside the call deadlocks here (issue 14, defect 5). */
static void test_dup_chain(void)
{
    MPI_Comm c = new_cart(), iso;
    const nbh_t *A = &lists[0];
    xfer_t x;
    int rc, token = 0;
    xfer_init(&x, c, A, 43);
    rc = Iso_neighborhood_create(c, A->s, A->off, &iso);
    CHECK(rc == MPI_SUCCESS, "create rc=%d", rc);
    for (int how = 0; how < 3; how++) {
        static const char *const name[] = {"Iso_ineighbor_alltoall", "Iso_ineighbor_allgather",
                                           "Iso_neighbor_alltoall_init + Iso_start"};
        MPI_Comm dup;
        Iso_request req = ISO_REQUEST_NULL;
        MPI_Comm_dup(iso, &dup);
        xfer_reset(&x);
        if (rank > 0)
            MPI_Recv(&token, 1, MPI_INT, rank - 1, 0, ocomm, MPI_STATUS_IGNORE);
        if (how == 0)
            rc = Iso_ineighbor_alltoall(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, dup, &req);
        else if (how == 1)
            rc = Iso_ineighbor_allgather(x.ag_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, dup, &req);
        else if ((rc = Iso_neighbor_alltoall_init(x.a2a_send, 2, MPI_INT, x.rbuf, 2, MPI_INT, dup,
                                                  MPI_INFO_NULL, &req)) == MPI_SUCCESS)
            rc = Iso_start(&req);
        CHECK(rc == MPI_SUCCESS, "%s on a fresh dup: rc=%d", name[how], rc);
        if (rank + 1 < nprocs)
            MPI_Send(&token, 1, MPI_INT, rank + 1, 0, ocomm);
        rc = Iso_wait(&req);
        CHECK(rc == MPI_SUCCESS, "%s on a fresh dup: Iso_wait rc=%d", name[how], rc);
        xfer_check(&x, how == 1, name[how]);
        if (req != ISO_REQUEST_NULL)
            Iso_request_free(&req);
        MPI_Comm_free(&dup);
    }
    Iso_neighborhood_free(&iso);
    MPI_Comm_free(&c);
    xfer_free(&x);
    tap_result(MPI_COMM_WORLD, "nonblocking and persistent calls on a fresh MPI_Comm_dup of an "
                               "isocomm do not wait for other processes (start, then send to the "
                               "next rank)");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    make_lists();
    MPI_Comm cart = new_cart();

    test_cycles(cart);
    test_replace(cart);
    test_free(cart);
    MPI_Comm_free(&cart);
    test_comm_free();
    test_dup();
    test_dup_chain();

    for (int k = 0; k < NL; k++)
        nbh_free(&lists[k]);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
