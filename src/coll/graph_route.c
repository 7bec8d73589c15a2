/* The routed alltoall forms on distributed graph communicators: auto's
 * choice between direct, a VPT and message sharing, the agreement, the plan (route/: a VPT
 * or message sharing; cached for blocking and nonblocking calls) and its
 * request. */
#include "coll/coll.h"
#include <string.h>

/* ---- auto ---------------------------------------------------------------------------- */

/* The modelled time of the balanced T_n (n = 1: direct) for p processes
 * from the statistics every process has after the agreement: the largest
 * out-degree (direct's messages, mmax) and the largest mean bytes per
 * edge.  The cost model of coll/cost.c in pack mode:
 *   messages  min(mmax, sum(k_d - 1))
 *   hops      mmax * sum_d (1 - 1/k_d)   (the expected hops of a random
 *             destination; direct: mmax)
 *   phases    n, plus n header rounds per call unless persistent.
 * Every process computes the same.  dims gets the shape; 0 if T_n is no
 * n-dimensional VPT (p has too few factors: a dimension of size 1). */
static int vpt_cost(int p, int n, long long mmax, long long mean_bytes, int persistent,
                    int dims[], double *cost)
{
    int msgs = 0;
    double hops = 0.0;
    iso_figures f = {0, 0, 0, 0};
    if (iso__vpt_dims_balanced(p, n, dims) != MPI_SUCCESS || (n > 1 && dims[n - 1] == 1))
        return 0;
    for (int d = 0; d < n; d++) {
        msgs += dims[d] - 1;
        hops += 1.0 - 1.0 / dims[d];
    }
    f.phases = persistent ? n : 2 * n;
    f.msgs = (int)(mmax < msgs ? mmax : msgs) * (persistent ? 1 : 2);
    f.hops = (int)((double)mmax * hops + 0.5);
    *cost = n == 1 ? iso__cost_direct((int)mmax, (double)mean_bytes)
                   : iso__cost(&f, (double)mean_bytes + 8.0, ISO_MODE_PACK, persistent, 0);
    return 1;
}

/* Message sharing in the same model, from its plan's counted bottleneck
 * (iso__sharing_figures: the busiest process's (sends + receives) / 2 and the
 * most blocks one process sends): two phases; no header rounds (the sizes come with the gathered
 * pattern, and blocking calls reuse the cached plan). */
static double sharing_cost(const iso_graph *g, long long mean_bytes, int persistent)
{
    iso_figures f = {0, 0, 0, 0};
    f.phases = 2;
    f.msgs = (int)g->sharing_mmax;
    f.hops = (int)g->sharing_blocks;
    return iso__cost(&f, (double)mean_bytes + 8.0, ISO_MODE_PACK, persistent, 0);
}

/* Every schedule auto weighs, with its modelled time: direct (alg 0), the
 * balanced T_n for n = 2 .. log2 p (alg n), and message sharing
 * (ISO_TUNE_SHARING) once its figures are known; in this order, so that
 * the first of least cost is the model's pick. */
static int graph_candidates(const iso_graph *g, long long mmax, long long mean_bytes,
                            int persistent, iso_candidate *out)
{
    int n = 0, dims[ISO_VPT_MAXDIMS];
    double cost;
    vpt_cost(g->size, 1, mmax, mean_bytes, persistent, dims, &cost);
    out[n++] = (iso_candidate){0, ISO_MODE_PACK, cost};
    for (int k = 2; k <= ISO_VPT_MAXDIMS && (1 << k) <= g->size && n < ISO_MAX_CANDIDATES - 1; k++)
        if (vpt_cost(g->size, k, mmax, mean_bytes, persistent, dims, &cost))
            out[n++] = (iso_candidate){k, ISO_MODE_PACK, cost};
    if (g->sharing_known)
        out[n++] = (iso_candidate){ISO_TUNE_SHARING, ISO_MODE_PACK,
                                   sharing_cost(g, mean_bytes, persistent)};
    return n;
}

/* A blocking trial call of auto's tuning whose candidate could not be made
 * (err): the candidate is skipped from now on, as on a Cartesian
 * neighborhood, so that the next calls of the shape go on (tune.c); err is
 * returned.  (A persistent trial's failure is agreed on first:
 * iso__graph_tune_init.) */
static int trial_failed(iso_graph_use call, iso_tune_shape **trial, int err)
{
    if (err != MPI_SUCCESS && call == ISO_GRAPH_BLOCKING && trial != NULL && *trial != NULL)
        iso__tune_failed(*trial);
    return err;
}

/* ---- the request on a graph communicator ----------------------------------------- */

int iso__graph_route_request(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o,
                             const iso_args *a, int err, iso_graph_use call, int *use_direct,
                             struct iso_request_s **out, iso_tune_shape **trial)
{
    enum { MISSED = 2 };
    int persistent = call == ISO_GRAPH_PERSISTENT || call == ISO_GRAPH_PERSISTENT_TRIAL;
    int retain_args = call != ISO_GRAPH_BLOCKING;
    int n = 0, dims[ISO_VPT_MAXDIMS] = {0}, cacheable = !persistent;
    int sharing = o->algorithm == ISO_GRAPH_SHARING;
    int choose = o->algorithm == ISO_GRAPH_AUTO && o->vpt.ndims == 0;
    long long gen = -1;
    /* sharing has no shape: its key is the routing alone */
    iso_route_key key = {.routing = sharing ? ISO_ROUTE_SHARING : ISO_ROUTE_VPT,
                         .locality = sharing ? 0 : iso__vpt_embedding(&o->vpt)};
    /* same[1]: the generation of the cached plans; max: auto's statistics
     * (largest out-degree, largest mean bytes per edge) and the vote, a
     * miss anywhere being a miss everywhere */
    iso_agreement ag = {.nsame = 2, .same = {0, iso__route_cache_gen(g->plan_cache)},
                        .nmax = 3, .max = {g->outdegree, 0, 1}};
    const iso_route_plan *use;
    iso_route_plan plan;
    iso_vpt *v = NULL;
    iso_priv *priv = g->priv; /* sharing's messages: the graph's private communicator */
    *out = NULL;
    *use_direct = 0;
    if (trial != NULL)
        *trial = NULL;
    memset(&plan, 0, sizeof plan);
    if (!choose && !sharing) { /* the options' shape, the same everywhere: T_1 is direct */
        int e = iso__vpt_shape(&o->vpt, g->size, &n, dims);
        if (e == MPI_SUCCESS && n == 1) {
            *use_direct = 1;
            return err;
        }
        err = err ? err : e;
    }
    if (choose && err == MPI_SUCCESS) { /* mean bytes per edge */
        for (int i = 0; i < g->outdegree; i++)
            ag.max[1] += iso__route_send_bytes(a, i);
        ag.max[1] = g->outdegree > 0 ? ag.max[1] / g->outdegree : 0;
    }
    if (cacheable && err == MPI_SUCCESS)
        ag.max[MISSED] = !iso__route_cache_fits(g->plan_cache, g->outdegree, a);
    key.n = n;
    memcpy(key.dims, dims, sizeof(int) * (size_t)n);
    if ((err = iso__route_agree(g->priv, err, a, g->outdegree, &key, &ag)) != MPI_SUCCESS)
        return err;
    if (choose) {
        iso_candidate all[ISO_MAX_CANDIDATES];
        int nall, alg;
        if (!g->sharing_known && g->size >= 3) { /* collective: the same call everywhere */
            if ((err = iso__sharing_figures(g->priv, g->rank, g->size, g->outdegree, g->dests,
                                            &g->sharing_mmax, &g->sharing_blocks)) != MPI_SUCCESS)
                return err;
            g->sharing_known = 1;
        }
        /* the figures are the same everywhere, and so the model's choice
         * and the tuner's (tune_graph.c) */
        nall = graph_candidates(g, ag.max[0], ag.max[1], persistent, all);
        if ((err = iso__graph_tune_pick(g, o, all, nall, ag.max[0], ag.max[1], persistent, trial,
                                        &alg)) != MPI_SUCCESS)
            return err;
        if (call == ISO_GRAPH_PERSISTENT && trial != NULL && *trial != NULL)
            return MPI_SUCCESS; /* the shape's trials first (iso__graph_tune_init) */
        if (alg == ISO_TUNE_SHARING) {
            sharing = 1;
            n = 0;
            key.routing = ISO_ROUTE_SHARING;
            key.locality = 0;
        } else if (alg == 0) {
            *use_direct = 1;
            return MPI_SUCCESS;
        } else {
            n = alg;
            iso__vpt_dims_balanced(g->size, n, dims);
        }
    }
    if (!sharing) {
        if ((err = iso__vpt_get(g->priv->comm, &o->vpt, n, dims, &v)) != MPI_SUCCESS)
            return trial_failed(call, trial, err);
        priv = v->priv;
    }
    key.n = n;
    memcpy(key.dims, dims, sizeof(int) * (size_t)n);
    /* the key is the same everywhere, and so the vote and the generation:
     * so is this test's outcome */
    use = NULL;
    if (cacheable && !ag.max[MISSED] && ag.differs < 0)
        use = iso__route_cache_plan(g->plan_cache, &key);
    if (use == NULL) {
        gen = cacheable ? ++g->plans : -1;
        err = sharing ? iso__sharing_route_plan(g->priv, g->rank, g->size, g->outdegree, g->dests,
                                                g->indegree, g->sources, a, &plan)
                      : iso__vpt_plan(v, g->rank, g->size, g->outdegree, g->dests, g->indegree,
                                      g->sources, a, &plan);
        use = &plan;
    }
    if (err == MPI_SUCCESS)
        err = iso__route_request(priv, comm, use, a, g->outdegree, g->indegree, retain_args,
                                 persistent, sharing ? "sharing" : "vpt", out);
    if (cacheable && use == &plan) { /* kept if made; else no plan of this generation here */
        if (err == MPI_SUCCESS)
            iso__route_cache_put(&g->plan_cache, &key, g->outdegree, a, gen, &plan);
        else {
            iso__route_cache_free(g->plan_cache);
            g->plan_cache = NULL;
        }
    }
    iso__route_plan_free(&plan);
    return trial_failed(call, trial, err);
}
