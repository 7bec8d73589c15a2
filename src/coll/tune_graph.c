/* Runtime tuning of auto on distributed graph communicators (DESIGN.md,
 * "Runtime tuning of auto"): tune.c's machinery with the graph's
 * candidates.  The model (graph_route.c) prices direct, the balanced VPTs
 * T_n and message sharing; the first blocking auto calls of one call shape
 * (the mean bytes per edge, max over processes: the model's only per-call
 * input) time direct, sharing and the best MAX_VPT VPTs within 2x of the
 * model's pick, each over the trial calls, and keep the winner, which
 * persistent requests made later take too.  A persistent request made
 * first runs the same trials at its _init call, each candidate as a
 * persistent request on scratch buffers (iso__graph_tune_init): what an
 * iteration loop will start, so no blocking call's size rounds are timed.
 * Everything here follows from values the agreement made equal everywhere,
 * so every process picks alike. */
#include "coll/coll.h"
#include <stdio.h>
#include <stdlib.h>

#define MAX_VPT 3 /* VPT shapes tried per call shape: the model's best */

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
 * sharing, and the VPTs within 2x of the pick, at most MAX_VPT; the model's
 * pick first. */
static int trial_candidates(const iso_candidate *all, int nall, iso_candidate *cand)
{
    int n = 0, nvpt = 0;
    for (int c = 0; c < nall; c++) {
        int vpt = all[c].alg != 0 && all[c].alg != ISO_TUNE_SHARING;
        int close = c == 0 || all[c].cost <= 2.0 * all[0].cost;
        if (vpt && (!close || nvpt == MAX_VPT))
            continue;
        cand[n++] = all[c];
        nvpt += vpt;
    }
    return n;
}

int iso__graph_tune_pick(iso_graph *g, const iso_graph_opts *o, iso_candidate *all, int nall,
                         long long mmax, long long mean_bytes, iso_tune_shape **trial, int *alg)
{
    iso_tune_key key = {ISO_ALLTOALL, (double)mean_bytes, 1, 0, ISO_MODE_PACK};
    iso_candidate cand[ISO_MAX_CANDIDATES];
    iso_tune_shape *sh;
    iso_msg_mode mode;
    char what[48];
    int ncand, err;
    iso__tune_sort(all, nall);
    *alg = all[0].alg; /* the model's pick */
    if (o->tune <= 0)
        return MPI_SUCCESS;
    if (trial == NULL) { /* persistent, nonblocking: a winner known, else the model */
        iso__tune_lookup(g->tuner, ISO_TUNE_GRAPH, graph_id(g, mmax), &key, all, nall, alg, &mode);
        return MPI_SUCCESS;
    }
    snprintf(what, sizeof what, "p=%d, degree<=%lld", g->size, mmax);
    if (g->tuner == NULL && (g->tuner = iso__tuner_new(graph_id(g, mmax), ISO_TUNE_GRAPH,
                                                       what)) == NULL)
        return MPI_SUCCESS; /* no memory for tuning: the model decides */
    ncand = trial_candidates(all, nall, cand);
    if ((err = iso__tune_shape_get(g->tuner, &key, cand, ncand, all, nall, o->tune, &sh)) !=
            MPI_SUCCESS ||
        sh == NULL)
        return err;
    if (iso__tune_next(g->tuner, sh, alg, &mode))
        *trial = sh;
    return MPI_SUCCESS;
}

/* Zeroed memory laid out as side's first nblocks blocks: *buf is the
 * address to give in place of the user's buffer (block offsets below 0
 * included), *mem what to free. */
static int scratch_side(const iso_side *side, int nblocks, void **buf, void **mem)
{
    MPI_Aint lo = 0, hi = 0; /* byte range of the blocks, 0 included */
    *buf = *mem = NULL;
    for (int i = 0; i < nblocks; i++) {
        iso_loc l = iso__block(side, 0, i);
        MPI_Aint tlo, span;
        int err = iso__type_span(l.count, l.type, &tlo, &span);
        if (err != MPI_SUCCESS)
            return err;
        if (span == 0)
            continue;
        if (l.disp + tlo < lo)
            lo = l.disp + tlo;
        if (l.disp + tlo + span > hi)
            hi = l.disp + tlo + span;
    }
    if ((*mem = calloc((size_t)(hi - lo) + 1, 1)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    *buf = (char *)*mem - lo;
    return MPI_SUCCESS;
}

int iso__graph_tune_init(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o, const iso_args *a,
                         iso_tune_shape *trial, const char *fn)
{
    iso_args s = *a;
    void *smem = NULL, *rmem = NULL, *sbuf;
    struct iso_request_s *r = NULL; /* the candidate's request, kept through its block */
    int err, direct;
    /* a scratch failure here is one process's: agreed on by the first
     * request's allreduce, so that every process stops alike */
    err = scratch_side(&a->send, g->outdegree, &sbuf, &smem);
    if (err == MPI_SUCCESS)
        err = scratch_side(&a->recv, g->indegree, &s.recvbuf, &rmem);
    s.sendbuf = sbuf;
    while (iso__tune_shape_tuning(trial)) {
        if (r == NULL) { /* the next candidate, or the first call of one that failed */
            err = iso__graph_route_request(g, comm, o, &s, err, ISO_GRAPH_PERSISTENT_TRIAL,
                                           &direct, &r, &trial);
            if (err == MPI_SUCCESS && direct)
                err = iso__graph_direct_request(g, comm, &s, ISO_GRAPH_PERSISTENT_TRIAL, &r);
            if (err != MPI_SUCCESS || trial == NULL)
                break;
        }
        if ((err = iso__tune_run(g->tuner, o->verbose, g->priv, comm, fn, trial, r, &r)) !=
            MPI_SUCCESS)
            break;
    }
    iso__request_destroy(r);
    free(smem);
    free(rmem);
    return err;
}
