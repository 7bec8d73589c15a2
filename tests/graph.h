/* Irregular patterns on distributed graph communicators for t_graph and
 * t_vpt, and their independent oracle.
 *
 * Every process generates the whole pattern from a shared seed: for each
 * rank a its destination list (repeats and self edges allowed) and a count
 * per edge.  Rank b's source list holds a once for every edge a -> b, in a
 * shuffled order; the k-th occurrence of a in it is a's k-th edge to b
 * (MPI's rule), so b knows each slot's count.  The graph communicator is
 * made with MPI_Dist_graph_create_adjacent.
 *
 * Every form is described per block as (count, type, byte displacement) on
 * both sides; the oracle moves the same blocks with one MPI_Isend/MPI_Irecv
 * per edge on a duplicate of MPI_COMM_WORLD (sends in destination order,
 * receives in source order, one tag: non-overtaking gives MPI's matching).
 * Receive buffers are prefilled with a sentinel, so gaps and untouched
 * memory are compared too (the whole buffer byte for byte). */
#ifndef ISO_TEST_GRAPH_H
#define ISO_TEST_GRAPH_H

#include <limits.h>
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

/* Open MPI's MPI_UNWEIGHTED is a pointer gcc takes for an empty array */
#pragma GCC diagnostic ignored "-Wstringop-overread"
#pragma GCC diagnostic ignored "-Wstringop-overflow"

enum { PAT_RANDOM, PAT_ONE_TO_ALL, PAT_ALL_TO_ONE, PAT_EMPTY, PAT_DENSE, PAT_NKINDS };
static const char *const pat_names[] = {"random", "one-to-all", "all-to-one", "empty", "dense"};
enum { FORM_A2A, FORM_A2AV, FORM_A2AW, FORM_N };
static const char *const form_names[] = {"alltoall", "alltoallv", "alltoallw"};
enum { CALL_BLOCKING, CALL_NONBLOCKING, CALL_PERSISTENT, CALL_N };
static const char *const call_names[] = {"blocking", "nonblocking", "persistent"};

typedef struct {
    int p;
    int *first;      /* [p + 1] edges of rank a: first[a] .. first[a+1] */
    int *dst, *cnt;  /* per edge */
    /* this process */
    int rank, indeg, outdeg;
    int *sources, *dests; /* as passed to MPI_Dist_graph_create_adjacent */
    int *rcnt;            /* count of the edge arriving in each source slot */
} gpattern;

static unsigned long long g_rng;
static unsigned g_rand(void)
{
    g_rng = g_rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(g_rng >> 33);
}

static void gpattern_free(gpattern *g)
{
    free(g->first);
    free(g->dst);
    free(g->cnt);
    free(g->sources);
    free(g->dests);
    free(g->rcnt);
    memset(g, 0, sizeof *g);
}

/* The dense pattern's out-degree: p (everyone to everyone) unless
 * ISO_TEST_DENSE_DEGREE caps it (the SMPI scale check, make check
 * MPI=smpi: p^2 simulated messages a call at 256 ranks and more cost
 * minutes); then each process sends to the next that many ranks, and
 * rank 0 says so on stdout. */
static int dense_degree = INT_MAX;
static void dense_degree_read(int p)
{
    const char *cap = getenv("ISO_TEST_DENSE_DEGREE");
    int rank;
    if (cap == NULL || atoi(cap) <= 0 || atoi(cap) >= p)
        return;
    dense_degree = atoi(cap);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    if (rank == 0)
        printf("# dense pattern: %d of %d destinations each (ISO_TEST_DENSE_DEGREE)\n",
               dense_degree, p);
}

/* The pattern of kind on p processes from seed (the same everywhere);
 * counts 0..maxcount (every count = maxcount if fixed). */
static void gpattern_make(gpattern *g, int kind, int p, unsigned seed, int maxcount, int fixed)
{
    int rank, cap = 16, n = 0;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    memset(g, 0, sizeof *g);
    g->p = p;
    g->rank = rank;
    if (dense_degree == INT_MAX && kind == PAT_DENSE)
        dense_degree_read(p);
    g->first = calloc((size_t)p + 1, sizeof(int));
    g->dst = malloc(sizeof(int) * (size_t)cap);
    g->cnt = malloc(sizeof(int) * (size_t)cap);
    g_rng = seed * 2654435761ull + 12345;
    for (int a = 0; a < p; a++) {
        int deg = 0;
        g->first[a] = n;
        switch (kind) {
        case PAT_RANDOM:
            deg = (int)(g_rand() % (unsigned)(p < 6 ? 2 * p + 1 : 13));
            break;
        case PAT_ONE_TO_ALL:
            deg = a == 0 ? p + 1 : 0;
            break;
        case PAT_ALL_TO_ONE:
            deg = 1 + (a % 2);
            break;
        case PAT_DENSE:
            deg = p < dense_degree ? p : dense_degree;
            break;
        default:
            deg = 0;
        }
        for (int e = 0; e < deg; e++) {
            if (n == cap) {
                cap *= 2;
                g->dst = realloc(g->dst, sizeof(int) * (size_t)cap);
                g->cnt = realloc(g->cnt, sizeof(int) * (size_t)cap);
            }
            switch (kind) {
            case PAT_RANDOM:
                g->dst[n] = (int)(g_rand() % (unsigned)p);
                break;
            case PAT_ONE_TO_ALL:
                g->dst[n] = e < p ? e : p - 1; /* p - 1 twice */
                break;
            case PAT_ALL_TO_ONE:
                g->dst[n] = p - 1;
                break;
            default: /* dense: everyone to everyone, in a rotated order */
                g->dst[n] = (a + e) % p;
            }
            g->cnt[n] = fixed ? maxcount : (int)(g_rand() % (unsigned)(maxcount + 1));
            n++;
        }
    }
    g->first[p] = n;
    /* this process's lists */
    g->outdeg = g->first[rank + 1] - g->first[rank];
    g->dests = malloc(sizeof(int) * ((size_t)g->outdeg + 1));
    for (int i = 0; i < g->outdeg; i++)
        g->dests[i] = g->dst[g->first[rank] + i];
    g->indeg = 0;
    for (int e = 0; e < n; e++)
        g->indeg += g->dst[e] == rank;
    g->sources = malloc(sizeof(int) * ((size_t)g->indeg + 1));
    g->rcnt = malloc(sizeof(int) * ((size_t)g->indeg + 1));
    {
        int k = 0;
        for (int a = 0; a < p; a++)
            for (int e = g->first[a]; e < g->first[a + 1]; e++)
                if (g->dst[e] == rank)
                    g->sources[k++] = a;
        for (int j = k - 1; j > 0; j--) { /* shuffle (the same on every run) */
            int t, r = (int)(g_rand() % (unsigned)(j + 1));
            t = g->sources[j];
            g->sources[j] = g->sources[r];
            g->sources[r] = t;
        }
        /* slot j: the occ-th occurrence of its source is that source's
         * occ-th edge to this rank */
        for (int j = 0; j < k; j++) {
            int a = g->sources[j], occ = 0;
            for (int i = 0; i < j; i++)
                occ += g->sources[i] == a;
            for (int e = g->first[a]; e < g->first[a + 1]; e++)
                if (g->dst[e] == rank && occ-- == 0) {
                    g->rcnt[j] = g->cnt[e];
                    break;
                }
        }
    }
}

/* The graph communicator of the pattern (info may be MPI_INFO_NULL). */
static MPI_Comm gpattern_comm(const gpattern *g, MPI_Info info)
{
    MPI_Comm c;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, g->indeg, g->sources, MPI_UNWEIGHTED, g->outdeg,
                                   g->dests, MPI_UNWEIGHTED, info, 0, &c);
    return c;
}

/* The process-level pattern of g, as the routing planners take it: for
 * each process a its distinct targets t != a, ascending, in
 * (*tg)[(*start)[a] .. (*start)[a + 1]), with the blocks (*nb) and bytes
 * (*by, 4 per int) of all its edges to t.  malloc'd; returns their number. */
static inline long long gpattern_targets(const gpattern *g, long long **start, int **tg,
                                         long long **nb, long long **by)
{
    int p = g->p;
    long long E = 0;
    *start = calloc((size_t)p + 1, sizeof(long long));
    *tg = malloc(sizeof(int) * ((size_t)g->first[p] + 1));
    *nb = malloc(sizeof(long long) * ((size_t)g->first[p] + 1));
    *by = malloc(sizeof(long long) * ((size_t)g->first[p] + 1));
    for (int a = 0; a < p; a++) {
        (*start)[a] = E;
        for (int t = 0; t < p; t++) {
            long long n = 0, b = 0;
            for (int e = g->first[a]; e < g->first[a + 1]; e++)
                if (g->dst[e] == t && t != a)
                    n++, b += 4LL * g->cnt[e];
            if (n > 0) {
                (*tg)[E] = t;
                (*nb)[E] = n;
                (*by)[E++] = b;
            }
        }
    }
    (*start)[p] = E;
    return E;
}

/* ---- buffers of one form ------------------------------------------------------ */
/* gap2: one int every two ints (a derived type with gaps). */
static MPI_Datatype g_gap2 = MPI_DATATYPE_NULL;

static void g_types_init(void)
{
    if (g_gap2 == MPI_DATATYPE_NULL) {
        MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &g_gap2);
        MPI_Type_commit(&g_gap2);
    }
}

static void g_types_free(void)
{
    if (g_gap2 != MPI_DATATYPE_NULL)
        MPI_Type_free(&g_gap2);
}

typedef struct {
    int form;
    int n;              /* blocks */
    int *count, *idispl;
    MPI_Aint *adispl;
    MPI_Datatype *type; /* per block (the one type for a2a/a2av) */
    MPI_Datatype one;
    int fixed;          /* a2a: the count */
    size_t bytes;       /* buffer size */
    int *buf;
} gside;

/* Block layouts: send side uses gap2 (a2a, a2av) or alternates (a2aw); the
 * receive side MPI_INT (a2aw: alternates the other way); v forms leave a
 * gap of 3 ints between blocks. */
static void gside_make(gside *s, int form, int n, const int *counts, int send)
{
    size_t at = 2; /* ints; a lead-in gap */
    memset(s, 0, sizeof *s);
    g_types_init();
    s->form = form;
    s->n = n;
    s->count = malloc(sizeof(int) * ((size_t)n + 1));
    s->idispl = malloc(sizeof(int) * ((size_t)n + 1));
    s->adispl = malloc(sizeof(MPI_Aint) * ((size_t)n + 1));
    s->type = malloc(sizeof(MPI_Datatype) * ((size_t)n + 1));
    s->one = send ? g_gap2 : MPI_INT;
    s->fixed = n > 0 ? counts[0] : 0;
    for (int i = 0; i < n; i++) {
        MPI_Datatype t = form == FORM_A2AW ? ((i + send) % 2 ? g_gap2 : MPI_INT) : s->one;
        int ext = t == g_gap2 ? 2 : 1;
        s->count[i] = counts[i];
        s->type[i] = t;
        if (form == FORM_A2A) { /* strided: block i at i * count * extent */
            s->idispl[i] = i * s->fixed * ext;
            s->adispl[i] = (MPI_Aint)s->idispl[i] * (MPI_Aint)sizeof(int);
            at = (size_t)(i + 1) * (size_t)s->fixed * (size_t)ext;
            continue;
        }
        /* v: displacements in extents of the one type; w: in bytes */
        s->idispl[i] = (int)(at / (size_t)ext) + 0;
        s->adispl[i] = (MPI_Aint)((size_t)s->idispl[i] * (size_t)ext * sizeof(int));
        at = (size_t)s->idispl[i] * (size_t)ext + (size_t)counts[i] * (size_t)ext + 3;
    }
    s->bytes = (at + 4) * sizeof(int);
    s->buf = malloc(s->bytes);
}

static void gside_free(gside *s)
{
    free(s->count);
    free(s->idispl);
    free(s->adispl);
    free(s->type);
    free(s->buf);
}

/* Send data of iteration it: element t of block i is a code of (rank,
 * block, t, it); gaps hold -7. */
static void gside_fill_send(gside *s, int rank, int it)
{
    for (size_t k = 0; k < s->bytes / sizeof(int); k++)
        s->buf[k] = -7;
    for (int i = 0; i < s->n; i++) {
        int ext = s->type[i] == g_gap2 ? 2 : 1;
        int *b = (int *)((char *)s->buf + s->adispl[i]);
        for (int t = 0; t < s->count[i]; t++)
            b[t * ext] = rank * 1000003 + i * 1009 + t * 7 + it * 31;
    }
}

static void gside_fill_recv(gside *s)
{
    for (size_t k = 0; k < s->bytes / sizeof(int); k++)
        s->buf[k] = -99;
}

/* The oracle: one Isend / Irecv per edge on ocomm (a duplicate of
 * MPI_COMM_WORLD), the same blocks. */
static void g_oracle(const gpattern *g, gside *snd, gside *rcv, MPI_Comm ocomm)
{
    MPI_Request *rq = malloc(sizeof(MPI_Request) * ((size_t)g->indeg + (size_t)g->outdeg + 1));
    int n = 0;
    for (int j = 0; j < g->indeg; j++)
        MPI_Irecv((char *)rcv->buf + rcv->adispl[j], rcv->count[j], rcv->type[j], g->sources[j],
                  5, ocomm, &rq[n++]);
    for (int i = 0; i < g->outdeg; i++)
        MPI_Isend((char *)snd->buf + snd->adispl[i], snd->count[i], snd->type[i], g->dests[i], 5,
                  ocomm, &rq[n++]);
    for (int k = 0; k < n; k++)
        MPI_Wait(&rq[k], MPI_STATUS_IGNORE);
    free(rq);
}

/* Starts (or runs) the library's form on comm. */
static int g_call(int call, gside *s, gside *r, MPI_Comm comm, MPI_Info info, Iso_request *req)
{
    switch (s->form * CALL_N + call) {
    case FORM_A2A * CALL_N + CALL_BLOCKING:
        return Iso_neighbor_alltoall(s->buf, s->fixed, s->one, r->buf, r->fixed, r->one, comm);
    case FORM_A2A * CALL_N + CALL_NONBLOCKING:
        return Iso_ineighbor_alltoall(s->buf, s->fixed, s->one, r->buf, r->fixed, r->one, comm,
                                      req);
    case FORM_A2A * CALL_N + CALL_PERSISTENT:
        return Iso_neighbor_alltoall_init(s->buf, s->fixed, s->one, r->buf, r->fixed, r->one,
                                          comm, info, req);
    case FORM_A2AV * CALL_N + CALL_BLOCKING:
        return Iso_neighbor_alltoallv(s->buf, s->count, s->idispl, s->one, r->buf, r->count,
                                      r->idispl, r->one, comm);
    case FORM_A2AV * CALL_N + CALL_NONBLOCKING:
        return Iso_ineighbor_alltoallv(s->buf, s->count, s->idispl, s->one, r->buf, r->count,
                                       r->idispl, r->one, comm, req);
    case FORM_A2AV * CALL_N + CALL_PERSISTENT:
        return Iso_neighbor_alltoallv_init(s->buf, s->count, s->idispl, s->one, r->buf, r->count,
                                           r->idispl, r->one, comm, info, req);
    case FORM_A2AW * CALL_N + CALL_BLOCKING:
        return Iso_neighbor_alltoallw(s->buf, s->count, s->adispl, s->type, r->buf, r->count,
                                      r->adispl, r->type, comm);
    case FORM_A2AW * CALL_N + CALL_NONBLOCKING:
        return Iso_ineighbor_alltoallw(s->buf, s->count, s->adispl, s->type, r->buf, r->count,
                                       r->adispl, r->type, comm, req);
    default:
        return Iso_neighbor_alltoallw_init(s->buf, s->count, s->adispl, s->type, r->buf, r->count,
                                           r->adispl, r->type, comm, info, req);
    }
}

/* One case: the form and call kind on graph communicator comm of pattern
 * g, iters executions (persistent: one request started iters times with
 * new data; others: iters calls), each compared with the oracle.  If
 * req_out is not NULL the persistent request is returned unfreed (for
 * queries). */
static void g_case(const gpattern *g, MPI_Comm comm, int form, int call, MPI_Info info, int iters,
                   MPI_Comm ocomm, Iso_request *req_out, const char *what)
{
    gside s, r, os, orr;
    Iso_request req = ISO_REQUEST_NULL;
    int err;
    /* a2a needs one count: the pattern was made with fixed counts then */
    gside_make(&s, form, g->outdeg, g->cnt + g->first[g->rank], 1);
    gside_make(&r, form, g->indeg, g->rcnt, 0);
    gside_make(&os, form, g->outdeg, g->cnt + g->first[g->rank], 1);
    gside_make(&orr, form, g->indeg, g->rcnt, 0);
    for (int it = 0; it < iters; it++) {
        gside_fill_send(&s, g->rank, it);
        gside_fill_send(&os, g->rank, it);
        gside_fill_recv(&r);
        gside_fill_recv(&orr);
        if (call == CALL_PERSISTENT) {
            if (it == 0) {
                err = g_call(call, &s, &r, comm, info, &req);
                CHECK_EQ_INT(err, MPI_SUCCESS, "%s: init", what);
            }
            err = req ? Iso_start(&req) : MPI_ERR_REQUEST;
            CHECK_EQ_INT(err, MPI_SUCCESS, "%s: start %d", what, it);
            if (err == MPI_SUCCESS)
                Iso_wait(&req);
        } else if (call == CALL_NONBLOCKING) {
            err = g_call(call, &s, &r, comm, info, &req);
            CHECK_EQ_INT(err, MPI_SUCCESS, "%s: call %d", what, it);
            if (err == MPI_SUCCESS)
                CHECK_EQ_INT(Iso_wait(&req), MPI_SUCCESS, "%s: wait %d", what, it);
        } else {
            err = g_call(call, &s, &r, comm, info, &req);
            CHECK_EQ_INT(err, MPI_SUCCESS, "%s: call %d", what, it);
        }
        g_oracle(g, &os, &orr, ocomm);
        CHECK(!memcmp(r.buf, orr.buf, r.bytes), "%s: iteration %d: received data differ from the "
              "oracle's", what, it);
        CHECK(!memcmp(s.buf, os.buf, s.bytes), "%s: send buffer changed", what);
    }
    if (req != ISO_REQUEST_NULL) {
        if (req_out)
            *req_out = req;
        else
            Iso_request_free(&req);
    }
    gside_free(&s);
    gside_free(&r);
    gside_free(&os);
    gside_free(&orr);
}
#endif
