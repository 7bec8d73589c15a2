/* Runtime tuning of auto on distributed graph communicators (DESIGN.md,
 * "Runtime tuning of auto"): tune.c's machinery with the graph's
 * candidates.  The model (graph_route.c) prices direct, the balanced VPTs
 * T_n and message sharing; the first blocking auto calls of one call shape
 * (the mean bytes per edge, max over processes: the model's only per-call
 * input) time direct, sharing, the best MAX_VPT VPTs within 2x of the
 * model's pick and a grid of n, each over the trial calls, and keep the
 * winner, which nonblocking calls take too.  Persistent requests are
 * shapes of their own (no size rounds): the first of a shape runs its
 * trials at its _init call, each candidate as a persistent request on
 * scratch buffers (iso__graph_tune_init), what an iteration loop will
 * start.  Everything here follows from values the agreement made equal
 * everywhere, so every process picks alike. */
#include "coll/coll.h"
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>

#define MAX_VPT 3   /* VPT shapes tried per call shape: the model's best */
#define GRID_STEP 3 /* and every GRID_STEP-th n from 2 */

/* FNV-1a over what the model sees of the graph (processes, the largest
 * out-degree, sharing's figures): the same on every process, and in every
 * run on the same graph, as ISO_TUNE_FILE's records need. */
static unsigned long long graph_id(const iso_graph *g, long long mmax)
{
    unsigned long long h = ISO_FNV1A_BASIS;
    const long long v[] = {g->size, mmax, g->sharing_known ? g->sharing_mmax : -1,
                           g->sharing_known ? g->sharing_blocks : -1, 0x67726170 /* "grap" */};
    for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
        h = iso__fnv1a(h, (unsigned long long)v[i]);
    return h;
}

/* The candidates to time, from all (sorted by modelled cost): direct,
 * sharing, the VPTs within 2x of the pick, at most MAX_VPT, and the VPTs
 * of a grid of n (2, 5, 8, ..., every GRID_STEP-th); the model's pick
 * first.  The grid is there because the model's ranking of n can be far
 * off (it sees neither how a pattern's destinations share coordinates
 * nor the network's contention: at K = 4096 it ranked n = 12, 11, 2 first
 * where n = 5-7 were fastest, SIMULATED), while a VPT's time changes
 * slowly with n near the best (neighbouring n within 2-8% in every row
 * measured), so a candidate at most one step from the best is close to
 * it.  At most 2 + MAX_VPT + 4 candidates up to K = 2^13 (n <= 13). */
static int trial_candidates(const iso_candidate *all, int nall, iso_candidate *cand)
{
    int n = 0, nvpt = 0;
    for (int c = 0; c < nall; c++) {
        int vpt = all[c].alg != 0 && all[c].alg != ISO_TUNE_SHARING;
        int close = c == 0 || all[c].cost <= 2.0 * all[0].cost;
        int grid = vpt && (all[c].alg - 2) % GRID_STEP == 0;
        if (vpt && !grid && (!close || nvpt == MAX_VPT))
            continue;
        cand[n++] = all[c];
        nvpt += vpt && !grid;
    }
    return n;
}

int iso__graph_tune_pick(iso_graph *g, const iso_graph_opts *o, iso_candidate *all, int nall,
                         long long mmax, long long mean_bytes, int persistent,
                         iso_tune_shape **trial, int *alg)
{
    /* probed: a blocking or nonblocking routed call sends its sizes first
     * (n rounds more), a persistent request never does, so the two are
     * different shapes, tuned apart */
    iso_tune_key key = {ISO_ALLTOALL, (double)mean_bytes, 1, !persistent, ISO_MODE_PACK};
    iso_candidate cand[ISO_MAX_CANDIDATES];
    iso_tune_shape *sh;
    iso_msg_mode mode;
    char what[48];
    int ncand, err;
    iso__tune_sort(all, nall);
    *alg = all[0].alg; /* the model's pick */
    if (o->tune <= 0)
        return MPI_SUCCESS;
    if (trial == NULL) { /* nonblocking: a winner known, else the model */
        iso__tune_lookup(g->tuner, ISO_TUNE_GRAPH, graph_id(g, mmax), &key, all, nall, alg, &mode);
        return MPI_SUCCESS;
    }
    snprintf(what, sizeof what, "p=%d, degree<=%lld", g->size, mmax);
    if (g->tuner == NULL && (g->tuner = iso__tuner_new(graph_id(g, mmax), ISO_TUNE_GRAPH,
                                                       what)) == NULL)
        return MPI_SUCCESS; /* no memory for tuning: the model decides */
    ncand = trial_candidates(all, nall, cand);
    if ((err = iso__tune_shape_get(g->tuner, &key, cand, ncand, all, nall, o->tune, &sh)) !=
        MPI_SUCCESS)
        return err;
    if (sh == NULL) { /* no room for another shape: a recorded winner, else the model */
        iso__tune_lookup(g->tuner, ISO_TUNE_GRAPH, graph_id(g, mmax), &key, all, nall, alg, &mode);
        return MPI_SUCCESS;
    }
    if (iso__tune_next(g->tuner, sh, alg, &mode))
        *trial = sh;
    return MPI_SUCCESS;
}

/* A side's blocks one after another in zeroed memory, for the trials:
 * side as the user's (counts, types) with displacements of its own, buf in
 * place of the user's buffer.  Packed, not the user's layout: a layout of
 * absolute addresses (MPI_BOTTOM) or of blocks far apart would ask for
 * their whole span.  The size is the blocks' (a send side's repeated
 * blocks each once more), which the candidates' message buffers hold too. */
typedef struct {
    iso_side side;
    void *buf;
    void *mem, *displs; /* freed by scratch_free */
} scratch_t;

static void scratch_free(scratch_t *x)
{
    free(x->mem);
    free(x->displs);
    x->mem = x->displs = NULL;
}

static int scratch_make(const iso_side *user, int nblocks, scratch_t *x)
{
    MPI_Aint lo = 0, span = 0, total = 0;
    int err = MPI_SUCCESS;
    x->side = *user;
    x->mem = x->displs = NULL;
    switch (user->layout) {
    case ISO_LAYOUT_STRIDED: /* packed already: block i at i x count x extent */
    case ISO_LAYOUT_SAME: {  /* every block at offset 0 */
        long long n = user->layout == ISO_LAYOUT_SAME ? user->count
                                                      : (long long)nblocks * user->count;
        if (n > INT_MAX)
            return iso__error(ISO_ERR_COUNT);
        err = iso__type_span((int)n, user->type, &lo, &span);
        total = span;
        break;
    }
    case ISO_LAYOUT_V: { /* in units of the extent: the prefix sums of the counts */
        int *d = malloc(sizeof(int) * ((size_t)nblocks + 1));
        long long sum = 0;
        if ((x->displs = d) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        for (int i = 0; i < nblocks; i++) {
            d[i] = (int)sum;
            sum += user->counts[i];
        }
        if (sum > INT_MAX)
            return iso__error(ISO_ERR_COUNT);
        x->side.idispls = d;
        err = iso__type_span((int)sum, user->type, &lo, &span);
        total = span;
        break;
    }
    case ISO_LAYOUT_W: { /* byte displacements: each block's data at the next 16 bytes */
        MPI_Aint *d = malloc(sizeof(MPI_Aint) * ((size_t)nblocks + 1));
        if ((x->displs = d) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        for (int i = 0; i < nblocks && err == MPI_SUCCESS; i++) {
            MPI_Aint blo, bspan;
            err = iso__type_span(user->counts[i], user->types[i], &blo, &bspan);
            d[i] = total - blo;
            total += (bspan + 15) & ~(MPI_Aint)15;
        }
        x->side.adispls = d;
        break;
    }
    }
    if (err != MPI_SUCCESS)
        return err;
    if ((x->mem = calloc((size_t)total + 1, 1)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    x->buf = (char *)x->mem - lo;
    return MPI_SUCCESS;
}

/* Did this candidate's build fail anywhere?  (A build that fails on one
 * process only, out of memory, must not leave the others in the trial's
 * barrier: all skip the candidate alike.)  Collective over g. */
static int failed_anywhere(iso_graph *g, int err, int *any)
{
    int mine = err != MPI_SUCCESS;
    return MPI_Allreduce(&mine, any, 1, MPI_INT, MPI_MAX, g->priv->comm);
}

int iso__graph_tune_init(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o, const iso_args *a,
                         iso_tune_shape *trial, const char *fn)
{
    iso_args s = *a;
    scratch_t snd, rcv;
    struct iso_request_s *r = NULL; /* the candidate's request, kept through its block */
    int err, rc = MPI_SUCCESS, any;
    /* scratch, and whether every process has it: else no trials (the
     * model's pick or a recorded winner) */
    err = scratch_make(&a->send, g->outdegree, &snd);
    if (err == MPI_SUCCESS)
        err = scratch_make(&a->recv, g->indegree, &rcv);
    else
        rcv.mem = rcv.displs = NULL;
    if ((rc = failed_anywhere(g, err, &any)) != MPI_SUCCESS || any) {
        scratch_free(&snd);
        scratch_free(&rcv);
        return rc;
    }
    s.sendbuf = snd.buf;
    s.send = snd.side;
    s.recvbuf = rcv.buf;
    s.recv = rcv.side;
    while (iso__tune_shape_tuning(trial)) {
        if (r == NULL) { /* the next candidate, or a call of one that failed (direct) */
            iso_tune_shape *due = NULL;
            int direct = 0;
            err = iso__graph_route_request(g, comm, o, &s, MPI_SUCCESS, ISO_GRAPH_PERSISTENT_TRIAL,
                                           &direct, &r, &due);
            if (err == MPI_SUCCESS && direct)
                err = iso__graph_direct_request(g, comm, &s, ISO_GRAPH_PERSISTENT_TRIAL, &r);
            if ((rc = failed_anywhere(g, err, &any)) != MPI_SUCCESS)
                break;
            if (any) {
                iso__request_destroy(r);
                r = NULL;
                /* the candidate is skipped, as a build that fails everywhere,
                 * and its calls run direct; if direct itself failed, no
                 * trials: the model's pick */
                if (iso__tune_failed(trial))
                    continue;
                break;
            }
        }
        if ((rc = iso__tune_run(g->tuner, o->verbose, g->priv, comm, fn, trial, r, &r)) !=
            MPI_SUCCESS)
            break;
    }
    iso__request_destroy(r);
    scratch_free(&snd);
    scratch_free(&rcv);
    return rc;
}
