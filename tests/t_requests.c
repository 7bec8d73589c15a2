/* Nonblocking and persistent requests: every Iso_ineighbor_* form and every
 * _init form against the Sendrecv oracle, several operations outstanding on
 * one communicator and completed in different orders on different ranks
 * (even ranks in order, odd ranks in reverse; Iso_test loops; Iso_waitall
 * with ISO_REQUEST_NULL entries), persistent requests started many times
 * with new send contents and sentinel-filled receive buffers (every fourth
 * round starts only half of them: the inactive ones must not write),
 * persistent requests with info iso_algorithm=direct, iso_combine=pack or
 * iso_combine=datatype next to nonblocking ones, requests freed without ever being started, request-handle semantics
 * (nonblocking -> ISO_REQUEST_NULL after completion, persistent stays
 * inactive, Iso_request_free of inactive requests), and user point-to-point
 * traffic with MPI_ANY_SOURCE/MPI_ANY_TAG on the same Cartesian
 * communicator while library operations are outstanding.
 *
 * Each form is described by where element k of block i lives in the send
 * and receive buffers, so one oracle exchange (all forms' blocks
 * concatenated per neighbor index) gives the expected contents of every
 * receive buffer.  Values are small integers, so the double MAX and the int
 * SUM are exact.
 *
 * NPROCS: 1 2 3 4 8
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

#define SENTINEL (-5555)
#define MAXC 3 /* max elements per block */

enum { A2A, A2AV, A2AW, AG, AGV, AGW, RED, SRED, NFORMS };
enum { MOVE, SUM, MAX };
static const char *const fname[NFORMS] = {"alltoall",  "alltoallv",  "alltoallw", "allgather",
                                          "allgatherv", "allgatherw", "reduce",    "scatter_reduce"};

/* Is the neighborhoods' default algorithm (ISO_ALGORITHM) a combining one? */
static int combining_default(void)
{
    const char *alg = getenv("ISO_ALGORITHM");
    return alg && (strcasecmp(alg, "dimwise") == 0 || strcasecmp(alg, "bruck") == 0);
}


static MPI_Datatype vec2, pair2; /* vector(2,1,2,MPI_INT), contiguous(2,MPI_INT) */

typedef struct {
    int form, dbl, kind, s;
    size_t slen, rlen; /* buffer lengths in elements */
    void *sbuf, *rbuf; /* rbuf has rlen + 1 elements (guard) */
    double *expect;
    int cnt[64];
    size_t spos[64][MAXC], rpos[64][MAXC];
    int scount, rcount, count;
    int scounts[64], rcounts[64], sdi[64], rdi[64];
    MPI_Aint sda[64], rda[64];
    MPI_Datatype stypes[64], rtypes[64];
    Iso_request req;
} op_t;

static size_t esize(const op_t *o) { return o->dbl ? sizeof(double) : sizeof(int); }

static void put(op_t *o, void *buf, size_t j, double v)
{
    if (o->dbl)
        ((double *)buf)[j] = v;
    else
        ((int *)buf)[j] = (int)v;
}

static double get(const op_t *o, const void *buf, size_t j)
{
    return o->dbl ? ((const double *)buf)[j] : (double)((const int *)buf)[j];
}

static void op_setup(op_t *o, int form, int s)
{
    memset(o, 0, sizeof *o);
    o->form = form;
    o->s = s;
    o->req = ISO_REQUEST_NULL;
    o->kind = form == RED ? SUM : form == SRED ? MAX : MOVE;
    o->dbl = form == SRED;
    size_t off = 0;
    switch (form) {
    case A2A:
        o->scount = o->rcount = 2;
        for (int i = 0; i < s; i++) {
            o->cnt[i] = 2;
            for (int k = 0; k < 2; k++)
                o->spos[i][k] = o->rpos[i][k] = (size_t)i * 2 + k;
        }
        o->slen = o->rlen = (size_t)s * 2;
        break;
    case A2AV: /* send blocks in reverse order with 1-element gaps, receive
                  blocks forward with 2-element gaps */
        for (int i = s - 1; i >= 0; i--) {
            o->cnt[i] = o->scounts[i] = o->rcounts[i] = 1 + i % 3;
            o->sdi[i] = (int)off;
            off += (size_t)o->cnt[i] + 1;
        }
        o->slen = off;
        off = 0;
        for (int i = 0; i < s; i++) {
            o->rdi[i] = (int)off + 2;
            off += (size_t)o->cnt[i] + 2;
        }
        o->rlen = off;
        for (int i = 0; i < s; i++)
            for (int k = 0; k < o->cnt[i]; k++) {
                o->spos[i][k] = (size_t)o->sdi[i] + k;
                o->rpos[i][k] = (size_t)o->rdi[i] + k;
            }
        break;
    case A2AW: /* 3-element regions; send in reverse region order, odd
                  blocks as vector(2,1,2); receive forms vary with i % 3 */
        for (int i = 0; i < s; i++) {
            size_t sb = (size_t)(s - 1 - i) * 3, rb = (size_t)i * 3;
            o->cnt[i] = 2;
            o->sda[i] = (MPI_Aint)(sb * sizeof(int));
            o->spos[i][0] = sb;
            if (i % 2) {
                o->scounts[i] = 1;
                o->stypes[i] = vec2;
                o->spos[i][1] = sb + 2;
            } else {
                o->scounts[i] = 2;
                o->stypes[i] = MPI_INT;
                o->spos[i][1] = sb + 1;
            }
            switch (i % 3) {
            case 0:
                o->rcounts[i] = 2, o->rtypes[i] = MPI_INT, o->rda[i] = (MPI_Aint)((rb + 1) * sizeof(int));
                o->rpos[i][0] = rb + 1, o->rpos[i][1] = rb + 2;
                break;
            case 1:
                o->rcounts[i] = 1, o->rtypes[i] = pair2, o->rda[i] = (MPI_Aint)(rb * sizeof(int));
                o->rpos[i][0] = rb, o->rpos[i][1] = rb + 1;
                break;
            default:
                o->rcounts[i] = 1, o->rtypes[i] = vec2, o->rda[i] = (MPI_Aint)(rb * sizeof(int));
                o->rpos[i][0] = rb, o->rpos[i][1] = rb + 2;
                break;
            }
        }
        o->slen = o->rlen = (size_t)s * 3;
        break;
    case AG:
        o->scount = o->rcount = 2;
        o->slen = 2;
        o->rlen = (size_t)s * 2;
        for (int i = 0; i < s; i++) {
            o->cnt[i] = 2;
            for (int k = 0; k < 2; k++)
                o->spos[i][k] = (size_t)k, o->rpos[i][k] = (size_t)i * 2 + k;
        }
        break;
    case AGV: /* blocks in reverse order with gaps */
        o->scount = 3;
        o->slen = 3;
        o->rlen = (size_t)s * 4;
        for (int i = 0; i < s; i++) {
            o->cnt[i] = o->rcounts[i] = 3;
            o->rdi[i] = (s - 1 - i) * 4 + 1;
            for (int k = 0; k < 3; k++)
                o->spos[i][k] = (size_t)k, o->rpos[i][k] = (size_t)o->rdi[i] + k;
        }
        break;
    case AGW:
        o->scount = 2;
        o->slen = 2;
        o->rlen = (size_t)s * 3;
        for (int i = 0; i < s; i++) {
            size_t rb = (size_t)i * 3;
            o->cnt[i] = 2;
            o->rda[i] = (MPI_Aint)(rb * sizeof(int));
            o->spos[i][0] = 0, o->spos[i][1] = 1;
            o->rpos[i][0] = rb;
            if (i % 2)
                o->rcounts[i] = 1, o->rtypes[i] = vec2, o->rpos[i][1] = rb + 2;
            else
                o->rcounts[i] = 2, o->rtypes[i] = MPI_INT, o->rpos[i][1] = rb + 1;
        }
        break;
    case RED:
        o->count = 3;
        o->slen = o->rlen = 3;
        for (int i = 0; i < s; i++) {
            o->cnt[i] = 3;
            for (int k = 0; k < 3; k++)
                o->spos[i][k] = o->rpos[i][k] = (size_t)k;
        }
        break;
    case SRED: /* doubles; contiguous blocks in reverse order */
        o->count = 2;
        o->slen = (size_t)s * 2;
        o->rlen = 2;
        for (int i = 0; i < s; i++) {
            o->cnt[i] = o->scounts[i] = 2;
            o->stypes[i] = MPI_DOUBLE;
            o->sda[i] = (MPI_Aint)((size_t)(s - 1 - i) * 2 * sizeof(double));
            for (int k = 0; k < 2; k++)
                o->spos[i][k] = (size_t)(s - 1 - i) * 2 + k, o->rpos[i][k] = (size_t)k;
        }
        break;
    }
    o->sbuf = calloc(o->slen + 1, esize(o));
    o->rbuf = calloc(o->rlen + 1, esize(o));
    o->expect = calloc(o->rlen + 1, sizeof(double));
}

static void op_free(op_t *o)
{
    free(o->sbuf);
    free(o->rbuf);
    free(o->expect);
}

/* New send contents for round t (gaps get values too); receive buffer and
 * guard back to the sentinel. */
static void op_fill(op_t *o, int rank, int t)
{
    for (size_t j = 0; j < o->slen; j++)
        put(o, o->sbuf, j,
            (double)(int)(((unsigned)rank * 37u + (unsigned)j * 11u + (unsigned)o->form * 101u +
                           (unsigned)t * 53u) % 97u) - 48.0);
    for (size_t j = 0; j <= o->rlen; j++)
        put(o, o->rbuf, j, SENTINEL);
}

/* One oracle exchange for a set of ops: block i = every op's block i. */
static void oracle_expect(op_t *ops, int nops, MPI_Comm cart, const nbh_t *n)
{
    int s = n->s;
    size_t ns = (size_t)(s > 0 ? s : 1), total = 0;
    int *cnt = malloc(sizeof(int) * ns), *src = malloc(sizeof(int) * ns),
        *dst = malloc(sizeof(int) * ns);
    MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * ns);
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * ns);
    for (int i = 0; i < s; i++) {
        cnt[i] = 0;
        for (int f = 0; f < nops; f++)
            cnt[i] += ops[f].cnt[i];
        dsp[i] = (MPI_Aint)(total * sizeof(double));
        ty[i] = MPI_DOUBLE;
        total += (size_t)cnt[i];
    }
    double *sb = malloc(sizeof(double) * (total + 1)), *rb = malloc(sizeof(double) * (total + 1));
    for (int i = 0, j = 0; i < s; i++)
        for (int f = 0; f < nops; f++)
            for (int k = 0; k < ops[f].cnt[i]; k++)
                sb[j++] = get(&ops[f], ops[f].sbuf, ops[f].spos[i][k]);
    oracle_alltoallw_on(sb, cnt, dsp, ty, rb, cnt, dsp, ty, cart, ocomm, n);
    oracle_neighbors(cart, n, src, dst);
    for (int f = 0; f < nops; f++) {
        op_t *o = &ops[f];
        int *seen = calloc(o->rlen + 1, sizeof(int));
        for (size_t j = 0; j <= o->rlen; j++)
            o->expect[j] = SENTINEL;
        for (int i = 0, j = 0; i < s; i++)
            for (int g = 0; g < nops; g++)
                for (int k = 0; k < ops[g].cnt[i]; k++, j++) {
                    if (g != f || src[i] == MPI_PROC_NULL)
                        continue;
                    size_t r = o->rpos[i][k];
                    double x = rb[j];
                    if (o->kind == MOVE || !seen[r])
                        o->expect[r] = x;
                    else if (o->kind == SUM)
                        o->expect[r] += x;
                    else if (x > o->expect[r])
                        o->expect[r] = x;
                    seen[r] = 1;
                }
        free(seen);
    }
    free(cnt), free(src), free(dst), free(dsp), free(ty), free(sb), free(rb);
}

static void op_check(op_t *o, const char *what)
{
    int bad = 0;
    for (size_t j = 0; j <= o->rlen; j++) {
        double got = get(o, o->rbuf, j);
        if (got != o->expect[j] && bad++ < 3)
            CHECK(0, "%s %s: recvbuf[%zu] = %g, expected %g%s", what, fname[o->form], j, got,
                  o->expect[j], j == o->rlen ? " (guard)" : "");
    }
}

static int op_post(op_t *o, MPI_Comm c)
{
    switch (o->form) {
    case A2A:
        return Iso_ineighbor_alltoall(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcount, MPI_INT, c,
                                      &o->req);
    case A2AV:
        return Iso_ineighbor_alltoallv(o->sbuf, o->scounts, o->sdi, MPI_INT, o->rbuf, o->rcounts,
                                       o->rdi, MPI_INT, c, &o->req);
    case A2AW:
        return Iso_ineighbor_alltoallw(o->sbuf, o->scounts, o->sda, o->stypes, o->rbuf,
                                       o->rcounts, o->rda, o->rtypes, c, &o->req);
    case AG:
        return Iso_ineighbor_allgather(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcount, MPI_INT,
                                       c, &o->req);
    case AGV:
        return Iso_ineighbor_allgatherv(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcounts, o->rdi,
                                        MPI_INT, c, &o->req);
    case AGW:
        return Iso_ineighbor_allgatherw(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcounts, o->rda,
                                        o->rtypes, c, &o->req);
    case RED:
        return Iso_ineighbor_reduce(o->sbuf, o->rbuf, o->count, MPI_INT, MPI_SUM, c, &o->req);
    default:
        return Iso_ineighbor_scatter_reduce(o->sbuf, o->scounts, o->sda, o->stypes, o->rbuf,
                                            o->count, MPI_DOUBLE, MPI_MAX, c, &o->req);
    }
}

static int op_init(op_t *o, MPI_Comm c, MPI_Info info)
{
    switch (o->form) {
    case A2A:
        return Iso_neighbor_alltoall_init(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcount, MPI_INT,
                                          c, info, &o->req);
    case A2AV:
        return Iso_neighbor_alltoallv_init(o->sbuf, o->scounts, o->sdi, MPI_INT, o->rbuf,
                                           o->rcounts, o->rdi, MPI_INT, c, info, &o->req);
    case A2AW:
        return Iso_neighbor_alltoallw_init(o->sbuf, o->scounts, o->sda, o->stypes, o->rbuf,
                                           o->rcounts, o->rda, o->rtypes, c, info, &o->req);
    case AG:
        return Iso_neighbor_allgather_init(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcount,
                                           MPI_INT, c, info, &o->req);
    case AGV:
        return Iso_neighbor_allgatherv_init(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcounts,
                                            o->rdi, MPI_INT, c, info, &o->req);
    case AGW:
        return Iso_neighbor_allgatherw_init(o->sbuf, o->scount, MPI_INT, o->rbuf, o->rcounts,
                                            o->rda, o->rtypes, c, info, &o->req);
    case RED:
        return Iso_neighbor_reduce_init(o->sbuf, o->rbuf, o->count, MPI_INT, MPI_SUM, c, info,
                                        &o->req);
    default:
        return Iso_neighbor_scatter_reduce_init(o->sbuf, o->scounts, o->sda, o->stypes, o->rbuf,
                                                o->count, MPI_DOUBLE, MPI_MAX, c, info, &o->req);
    }
}

static int rank, nprocs;

/* Completion styles for a set of active requests. */
enum { BY_WAIT, BY_TEST, BY_WAITALL };

static void complete_p(op_t **ops, int n, int style, int persistent, const char *what)
{
    int rc;
    if (style == BY_WAIT) { /* even ranks in order, odd ranks in reverse */
        for (int j = 0; j < n; j++) {
            op_t *o = ops[rank % 2 ? n - 1 - j : j];
            rc = Iso_wait(&o->req);
            CHECK(rc == MPI_SUCCESS, "%s: Iso_wait %s rc=%d", what, fname[o->form], rc);
        }
    } else if (style == BY_TEST) { /* rotating start, direction by parity */
        int left = n;
        int *done = calloc((size_t)n, sizeof(int));
        while (left > 0) {
            for (int j = 0; j < n; j++) {
                int x = rank % 2 ? (rank + n - j) % n : (rank + j) % n, flag = -1;
                if (done[x])
                    continue;
                rc = Iso_test(&ops[x]->req, &flag);
                CHECK(rc == MPI_SUCCESS && (flag == 0 || flag == 1), "%s: Iso_test %s rc=%d flag=%d",
                      what, fname[ops[x]->form], rc, flag);
                if (rc != MPI_SUCCESS || flag)
                    done[x] = 1, left--;
                if (flag == 0 && !persistent)
                    CHECK(ops[x]->req != ISO_REQUEST_NULL, "%s: Iso_test flag=0 but request freed",
                          what);
            }
        }
        free(done);
    } else { /* Iso_waitall with ISO_REQUEST_NULL interleaved */
        Iso_request *reqs = malloc(sizeof(Iso_request) * (size_t)(2 * n + 1));
        for (int j = 0; j < n; j++) {
            reqs[2 * j] = ISO_REQUEST_NULL;
            reqs[2 * j + 1] = ops[j]->req;
        }
        reqs[2 * n] = ISO_REQUEST_NULL;
        rc = Iso_waitall(2 * n + 1, reqs);
        CHECK(rc == MPI_SUCCESS, "%s: Iso_waitall rc=%d", what, rc);
        for (int j = 0; j < n; j++) {
            CHECK(reqs[2 * j] == ISO_REQUEST_NULL, "%s: Iso_waitall changed a NULL entry", what);
            ops[j]->req = reqs[2 * j + 1];
        }
        free(reqs);
    }
    for (int j = 0; j < n; j++) {
        if (persistent)
            CHECK(ops[j]->req != ISO_REQUEST_NULL,
                  "%s: persistent %s request is ISO_REQUEST_NULL after completion", what,
                  fname[ops[j]->form]);
        else
            CHECK(ops[j]->req == ISO_REQUEST_NULL,
                  "%s: nonblocking %s request not ISO_REQUEST_NULL after completion", what,
                  fname[ops[j]->form]);
    }
}

static void complete(op_t *ops, int n, int style, int persistent, const char *what)
{
    op_t *p[2 * NFORMS];
    for (int j = 0; j < n; j++)
        p[j] = &ops[j];
    complete_p(p, n, style, persistent, what);
}

static const char *const style_name[] = {"Iso_wait (odd ranks reversed)", "Iso_test loop",
                                         "Iso_waitall"};

static void prepare(op_t *ops, int n, MPI_Comm cart, const nbh_t *nb, int t)
{
    for (int f = 0; f < n; f++)
        op_fill(&ops[f], rank, t);
    oracle_expect(ops, n, cart, nb);
}

static void check_all(op_t *ops, int n, const char *what)
{
    for (int f = 0; f < n; f++)
        op_check(&ops[f], what);
}

/* User messages with wildcards on cart while library operations are active. */
#define MAGIC 271828
static void user_traffic_check(int (*ubuf)[64], MPI_Status *st)
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs, seen[3] = {0, 0, 0};
    for (int m = 0; m < 3; m++) {
        int c = -1;
        MPI_Get_count(&st[m], MPI_INT, &c);
        int tag = st[m].MPI_TAG;
        CHECK(c == 3 && ubuf[m][0] == MAGIC && tag >= 0 && tag < 3 && ubuf[m][2] == tag &&
                  ubuf[m][1] == st[m].MPI_SOURCE,
              "user receive %d matched a foreign message: count=%d tag=%d source=%d data=%d,%d,%d",
              m, c, tag, st[m].MPI_SOURCE, ubuf[m][0], ubuf[m][1], ubuf[m][2]);
        if (tag >= 0 && tag < 3) {
            int want = tag == 0 ? prev : tag == 1 ? next : rank;
            CHECK_EQ_INT(st[m].MPI_SOURCE, want, "user message tag %d: source", tag);
            seen[tag]++;
        }
    }
    CHECK(seen[0] == 1 && seen[1] == 1 && seen[2] == 1, "user tags seen %d %d %d", seen[0],
          seen[1], seen[2]);
}

static void user_post_recvs(MPI_Comm cart, MPI_Request *ureq, int (*ubuf)[64])
{
    for (int m = 0; m < 3; m++) {
        memset(ubuf[m], 0, sizeof ubuf[m]);
        MPI_Irecv(ubuf[m], 64, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, cart, &ureq[m]);
    }
}

static void user_post_sends(MPI_Comm cart, MPI_Request *ureq, int (*sbuf)[3])
{
    int next = (rank + 1) % nprocs, prev = (rank + nprocs - 1) % nprocs;
    int to[3] = {next, prev, rank};
    for (int m = 0; m < 3; m++) {
        sbuf[m][0] = MAGIC, sbuf[m][1] = rank, sbuf[m][2] = m;
        MPI_Isend(sbuf[m], 3, MPI_INT, to[m], m, cart, &ureq[m]);
    }
}

static void run_topology(const char *name, int d, const int *dims, const int *periods, nbh_t nb,
                         int rounds)
{
    MPI_Comm cart = oracle_cart(d, dims, periods), iso = MPI_COMM_NULL;
    int rc;
    if (cart == MPI_COMM_NULL) {
        tap_skip(MPI_COMM_WORLD, "dims do not fit the number of ranks", "requests %s", name);
        nbh_free(&nb);
        return;
    }
    rc = Iso_neighborhood_create(cart, nb.s, nb.off, &iso);
    CHECK(rc == MPI_SUCCESS, "%s: Iso_neighborhood_create rc=%d", name, rc);
    op_t ops[NFORMS];
    for (int f = 0; f < NFORMS; f++)
        op_setup(&ops[f], f, nb.s);

    /* A: each nonblocking form alone. */
    prepare(ops, NFORMS, cart, &nb, 1);
    for (int f = 0; f < NFORMS; f++) {
        rc = op_post(&ops[f], iso);
        CHECK(rc == MPI_SUCCESS, "Iso_ineighbor_%s rc=%d", fname[f], rc);
        CHECK(ops[f].req != ISO_REQUEST_NULL, "Iso_ineighbor_%s returned ISO_REQUEST_NULL",
              fname[f]);
        rc = Iso_wait(&ops[f].req);
        CHECK(rc == MPI_SUCCESS, "Iso_wait %s rc=%d", fname[f], rc);
        CHECK(ops[f].req == ISO_REQUEST_NULL, "%s: request not ISO_REQUEST_NULL after Iso_wait",
              fname[f]);
    }
    check_all(ops, NFORMS, "one at a time");
    tap_result(MPI_COMM_WORLD, "%s: each Iso_ineighbor_* form alone, Iso_wait", name);

    /* B-D: all eight outstanding at once, three completion styles. */
    for (int style = BY_WAIT; style <= BY_WAITALL; style++) {
        prepare(ops, NFORMS, cart, &nb, 10 + style);
        for (int f = 0; f < NFORMS; f++) {
            rc = op_post(&ops[f], iso);
            CHECK(rc == MPI_SUCCESS, "Iso_ineighbor_%s rc=%d", fname[f], rc);
        }
        complete(ops, NFORMS, style, 0, style_name[style]);
        check_all(ops, NFORMS, style_name[style]);
        tap_result(MPI_COMM_WORLD, "%s: 8 nonblocking outstanding, completed by %s", name,
                   style_name[style]);
    }

    /* E: persistent, started `rounds` times, completion style rotating. */
    for (int f = 0; f < NFORMS; f++) {
        rc = op_init(&ops[f], iso, MPI_INFO_NULL);
        CHECK(rc == MPI_SUCCESS && ops[f].req != ISO_REQUEST_NULL, "%s_init rc=%d", fname[f], rc);
    }
    for (int t = 0; t < rounds; t++) {
        /* Every fourth round starts only half of them: the others stay
         * inactive and must not touch their receive buffers. */
        op_t *act[NFORMS];
        int nact = 0;
        prepare(ops, NFORMS, cart, &nb, 100 + t);
        for (int f = 0; f < NFORMS; f++) {
            if (t % 4 == 3 && f % 2) {
                for (size_t j = 0; j <= ops[f].rlen; j++)
                    ops[f].expect[j] = SENTINEL;
                continue;
            }
            rc = Iso_start(&ops[f].req);
            CHECK(rc == MPI_SUCCESS, "round %d: Iso_start %s rc=%d", t, fname[f], rc);
            act[nact++] = &ops[f];
        }
        complete_p(act, nact, t % 3, 1, style_name[t % 3]);
        char what[64];
        snprintf(what, sizeof what, "persistent round %d", t);
        check_all(ops, NFORMS, what);
    }
    tap_result(MPI_COMM_WORLD, "%s: 8 persistent requests started %d times (sometimes half), new data each time",
               name, rounds);

    /* H: user wildcard receives pre-posted on cart for the whole library
     * operation (8 nonblocking + 8 persistent outstanding), then user sends;
     * and the other way round: user sends in flight while the library runs. */
    {
        op_t nbo[NFORMS];
        MPI_Request urecv[3], usend[3];
        MPI_Status ust[3];
        int ubuf[3][64], usbuf[3][3];
        for (int f = 0; f < NFORMS; f++)
            op_setup(&nbo[f], f, nb.s);
        for (int phase = 0; phase < 2; phase++) {
            prepare(ops, NFORMS, cart, &nb, 200 + phase);
            prepare(nbo, NFORMS, cart, &nb, 300 + phase);
            user_post_recvs(cart, urecv, ubuf);
            if (phase == 1)
                user_post_sends(cart, usend, usbuf);
            for (int f = 0; f < NFORMS; f++) {
                rc = Iso_start(&ops[f].req);
                CHECK(rc == MPI_SUCCESS, "Iso_start %s rc=%d", fname[f], rc);
                rc = op_post(&nbo[f], iso);
                CHECK(rc == MPI_SUCCESS, "Iso_ineighbor_%s rc=%d", fname[f], rc);
            }
            if (phase == 1) { /* interleave library progress and user receives */
                int udone = 0, left = 2 * NFORMS, done[2 * NFORMS] = {0};
                while (left > 0 || !udone) {
                    for (int x = 0; x < 2 * NFORMS; x++) {
                        op_t *o = x < NFORMS ? &ops[x] : &nbo[x - NFORMS];
                        int flag = 0;
                        if (done[x])
                            continue;
                        rc = Iso_test(&o->req, &flag);
                        CHECK(rc == MPI_SUCCESS, "Iso_test rc=%d", rc);
                        if (flag || rc != MPI_SUCCESS)
                            done[x] = 1, left--;
                    }
                    if (!udone)
                        MPI_Testall(3, urecv, &udone, ust);
                }
            } else {
                complete(ops, NFORMS, BY_WAITALL, 1, "with wildcard receives pre-posted");
                complete(nbo, NFORMS, BY_WAIT, 0, "with wildcard receives pre-posted");
                user_post_sends(cart, usend, usbuf);
                MPI_Waitall(3, urecv, ust);
            }
            MPI_Status sst[3];
            MPI_Waitall(3, usend, sst);
            user_traffic_check(ubuf, ust);
            /* Sends complete locally (eager): without this a fast rank's
             * next-phase message could meet a slow rank's wildcard receive. */
            MPI_Barrier(cart);
            check_all(ops, NFORMS, phase ? "user traffic interleaved" : "user receives pre-posted");
            check_all(nbo, NFORMS, phase ? "user traffic interleaved" : "user receives pre-posted");
        }
        for (int f = 0; f < NFORMS; f++)
            op_free(&nbo[f]);
        tap_result(MPI_COMM_WORLD,
                   "%s: MPI_ANY_SOURCE/MPI_ANY_TAG user traffic on the cart comm never matches "
                   "library messages",
                   name);
    }

    /* Iso_request_free of inactive persistent requests. */
    for (int f = 0; f < NFORMS; f++) {
        rc = Iso_request_free(&ops[f].req);
        CHECK(rc == MPI_SUCCESS && ops[f].req == ISO_REQUEST_NULL,
              "Iso_request_free of inactive %s rc=%d", fname[f], rc);
    }
    tap_result(MPI_COMM_WORLD, "%s: Iso_request_free of inactive persistent requests", name);

    /* F: persistent with a per-operation info key (another algorithm, or
     * another combining mode), mixed with nonblocking operations using the
     * neighborhood's defaults. */
    for (int v = 0; v < 3; v++) {
        static const char *const kv[3][2] = {{"iso_algorithm", "direct"},
                                             {"iso_combine", "pack"},
                                             {"iso_combine", "datatype"}};
        MPI_Info info, info_vw;
        MPI_Info_create(&info);
        MPI_Info_set(info, kv[v][0], kv[v][1]);
        /* datatype mode with a combining algorithm is an error for the v/w
         * forms of alltoall and allgather (t_diagnostics): they ask for pack */
        MPI_Info_dup(info, &info_vw);
        if (v == 2 && combining_default())
            MPI_Info_set(info_vw, "iso_combine", "pack");
        op_t nbo[NFORMS];
        for (int f = 0; f < NFORMS; f++) {
            int vw = f == A2AV || f == A2AW || f == AGV || f == AGW;
            op_setup(&nbo[f], f, nb.s);
            rc = op_init(&ops[f], iso, vw ? info_vw : info);
            CHECK(rc == MPI_SUCCESS, "%s_init(%s=%s) rc=%d", fname[f], kv[v][0], kv[v][1], rc);
        }
        MPI_Info_free(&info);
        MPI_Info_free(&info_vw);
        for (int t = 0; t < 4; t++) {
            prepare(ops, NFORMS, cart, &nb, 400 + t);
            prepare(nbo, NFORMS, cart, &nb, 500 + t);
            for (int f = 0; f < NFORMS; f++) {
                rc = Iso_start(&ops[f].req);
                CHECK(rc == MPI_SUCCESS, "Iso_start rc=%d", rc);
                rc = op_post(&nbo[f], iso);
                CHECK(rc == MPI_SUCCESS, "Iso_ineighbor_%s rc=%d", fname[f], rc);
            }
            complete(nbo, NFORMS, (t + 1) % 3, 0, "mixed with persistent (info key)");
            complete(ops, NFORMS, t % 3, 1, "persistent (info key)");
            check_all(ops, NFORMS, "persistent (info key)");
            check_all(nbo, NFORMS, "nonblocking next to persistent (info key)");
        }
        for (int f = 0; f < NFORMS; f++) {
            rc = Iso_request_free(&ops[f].req);
            CHECK(rc == MPI_SUCCESS && ops[f].req == ISO_REQUEST_NULL, "Iso_request_free rc=%d",
                  rc);
            op_free(&nbo[f]);
        }
        tap_result(MPI_COMM_WORLD, "%s: persistent with info %s=%s next to nonblocking ops",
                   name, kv[v][0], kv[v][1]);
    }

    /* Persistent requests freed without ever being started. */
    for (int f = 0; f < NFORMS; f++) {
        rc = op_init(&ops[f], iso, MPI_INFO_NULL);
        CHECK(rc == MPI_SUCCESS, "%s_init rc=%d", fname[f], rc);
        rc = Iso_request_free(&ops[f].req);
        CHECK(rc == MPI_SUCCESS && ops[f].req == ISO_REQUEST_NULL,
              "Iso_request_free of never-started %s rc=%d", fname[f], rc);
    }
    /* A collective after all that still works (tags stay in step). */
    prepare(ops, 1, cart, &nb, 600);
    rc = op_post(&ops[0], iso);
    CHECK(rc == MPI_SUCCESS, "Iso_ineighbor_alltoall rc=%d", rc);
    rc = Iso_wait(&ops[0].req);
    CHECK(rc == MPI_SUCCESS, "Iso_wait rc=%d", rc);
    check_all(ops, 1, "after never-started persistent requests");
    tap_result(MPI_COMM_WORLD, "%s: never-started persistent requests freed; next op correct",
               name);

    for (int f = 0; f < NFORMS; f++)
        op_free(&ops[f]);
    nbh_free(&nb);
    MPI_Comm_free(&cart);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (tap_matrix_vw_needs_pack()) /* v/w forms on the environment's neighborhood */
        setenv("ISO_COMBINE", "pack", 1);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec2);
    MPI_Type_contiguous(2, MPI_INT, &pair2);
    MPI_Type_commit(&vec2);
    MPI_Type_commit(&pair2);

    /* Handle semantics that need no neighborhood. */
    {
        Iso_request r = ISO_REQUEST_NULL, rs[3] = {ISO_REQUEST_NULL, ISO_REQUEST_NULL,
                                                   ISO_REQUEST_NULL};
        int rc = Iso_wait(&r);
        CHECK(rc == MPI_SUCCESS && r == ISO_REQUEST_NULL, "Iso_wait(ISO_REQUEST_NULL) rc=%d", rc);
        rc = Iso_waitall(3, rs);
        CHECK(rc == MPI_SUCCESS, "Iso_waitall of 3 ISO_REQUEST_NULL rc=%d", rc);
        rc = Iso_waitall(0, rs);
        CHECK(rc == MPI_SUCCESS, "Iso_waitall(0) rc=%d", rc);
        tap_result(MPI_COMM_WORLD, "Iso_wait/Iso_waitall on ISO_REQUEST_NULL return MPI_SUCCESS");
    }

    {
        static const int dims[2] = {0, 0}, periods[2] = {1, 0};
        nbh_t nb = nbh_shell(2, 0, -1, 1); /* Moore r1 with the zero offset */
        nbh_reorder(&nb, 2, 31337u);
        run_topology("2d mixed Moore r1 + zero, random order", 2, dims, periods, nb,
                     nprocs <= 4 ? 20 : 10);
    }
    {
        static const int dims[1] = {0}, periods[1] = {1};
        nbh_t nb = nbh_random(1, 6, 2, 123u);
        int z = 0, one = 1;
        nbh_push(&nb, &z);
        nbh_push(&nb, &one); /* repeated offsets for sure */
        nbh_push(&nb, &one);
        run_topology("1d torus random s=9 (repeats, zero)", 1, dims, periods, nb, 4);
    }
    MPI_Type_free(&vec2);
    MPI_Type_free(&pair2);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
