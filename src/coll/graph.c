/* Distributed graph communicators (DESIGN.md, "Irregular neighborhood
 * collectives"): the state cached on such a communicator (its neighbor
 * lists, private communicator, options and virtual process topologies),
 * the options (iso_sparse_algorithm, iso_vpt_*), and direct's schedule.
 * The routed exchanges are in graph_route.c. */
#include "coll/coll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int graph_keyval = MPI_KEYVAL_INVALID;

static void graph_free(iso_graph *g)
{
    if (g == NULL)
        return;
    iso__priv_release(g->priv);
    iso__route_cache_free(g->plan_cache);
    iso__tuner_free(g->tuner);
    free(g->sources);
    free(g);
}

static int graph_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    graph_free(val);
    return MPI_SUCCESS;
}

/* ---- options ------------------------------------------------------------------ */

/* The algorithms of the alltoall forms on a graph communicator: direct, or
 * a routing (route/) run by graph_route.c.  "auto" chooses. */
static const struct {
    const char *name;
    int algorithm; /* ISO_GRAPH_* */
} graph_algorithms[] = {{"direct", ISO_GRAPH_DIRECT},
                        {"vpt", ISO_GRAPH_VPT},
                        {"sharing", ISO_GRAPH_SHARING}};
static const iso_table graph_table = ISO_TABLE(graph_algorithms);

static int set_algorithm(void *ctx, const char *key, const char *value, const char *where)
{
    iso_graph_opts *o = ctx;
    int k, err;
    (void)key;
    err = iso__sparse_algorithm_option(&graph_table, ISO_CTX_GRAPH, where, value, &k);
    if (err == MPI_SUCCESS)
        o->algorithm = k == ISO_AUTO ? ISO_GRAPH_AUTO : graph_algorithms[k].algorithm;
    return err;
}

static int set_vpt(void *ctx, const char *key, const char *value, const char *where)
{
    iso_graph_opts *o = ctx;
    return iso__vpt_option(&o->vpt, o->p, key, value, where);
}

/* iso_verify is accepted for info shared with the other calls; verbose is
 * ISO_VERBOSE (environment only) */
static int set_bool(void *ctx, const char *key, const char *value, const char *where)
{
    int flag;
    iso_graph_opts *o = ctx;
    return iso__option_bool(where, value, !strcmp(key, "verbose") ? &o->verbose : &flag);
}

static int set_tune(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__tune_option(where, value, &((iso_graph_opts *)ctx)->tune);
}

static const iso_option_key graph_keys[] = {
    {"iso_sparse_algorithm", set_algorithm}, {"iso_vpt_dims", set_vpt},
    {"iso_vpt_n", set_vpt},                  {"iso_vpt_locality", set_vpt},
    {"iso_locality", set_vpt},               {"iso_verify", set_bool},
    {"iso_tune", set_tune},                  {"verbose", set_bool}};

/* Read after ISO_SPARSE_ALGORITHM and the VPT's variables. */
static const iso_env_option graph_env[] = {{"ISO_TUNE", "iso_tune"}, {"ISO_VERBOSE", "verbose"}};

static int options_read(iso_graph_opts *o, MPI_Info info, int env)
{
    iso_options r = {graph_keys, (int)(sizeof graph_keys / sizeof graph_keys[0]),
                     "on a distributed graph communicator", o, NULL};
    int err = MPI_SUCCESS;
    if (env)
        err = iso__options_env(&r, iso__sparse_env_options, ISO_SPARSE_NENV);
    if (env && err == MPI_SUCCESS)
        err = iso__options_env(&r, graph_env, sizeof graph_env / sizeof graph_env[0]);
    return err ? err : iso__options_info(&r, info);
}

int iso__graph_info_parse(MPI_Info info, iso_graph_opts *o)
{
    return options_read(o, info, 0);
}

/* The environment, then the communicator's info (as MPI_Comm_get_info
 * returns it). */
static int options_defaults(MPI_Comm comm, int p, iso_graph_opts *o)
{
    MPI_Info info = MPI_INFO_NULL;
    int err;
    memset(o, 0, sizeof *o);
    o->algorithm = ISO_GRAPH_DIRECT;
    o->tune = ISO_TUNE_TRIALS;
    o->p = p;
    if ((err = MPI_Comm_get_info(comm, &info)) != MPI_SUCCESS)
        return err;
    err = options_read(o, info, 1);
    MPI_Info_free(&info);
    return err;
}

/* ---- the state -------------------------------------------------------------- */

static int keyval_get(void)
{
    int err = MPI_SUCCESS;
    iso__lock();
    /* MPI_Comm_dup does not copy it: the copy computes its own */
    if (graph_keyval == MPI_KEYVAL_INVALID)
        err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, graph_delete, &graph_keyval, NULL);
    iso__unlock();
    return err;
}

/* A new state: neighbor lists (local), options, and the private
 * communicator by MPI_Comm_idup (a nonblocking first call must not wait). */
static int graph_new(MPI_Comm comm, iso_graph **out)
{
    iso_graph *g = calloc(1, sizeof *g);
    int weighted, *w = NULL, err;
    *out = NULL;
    if (g == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = MPI_Comm_size(comm, &g->size)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(comm, &g->rank)) != MPI_SUCCESS ||
        (err = options_defaults(comm, g->size, &g->opts)) != MPI_SUCCESS ||
        (err = MPI_Dist_graph_neighbors_count(comm, &g->indegree, &g->outdegree, &weighted)))
        goto fn_fail;
    g->sources = malloc(sizeof(int) * ((size_t)g->indegree + (size_t)g->outdegree + 1));
    w = malloc(sizeof(int) * ((size_t)g->indegree + (size_t)g->outdegree + 1));
    if (g->sources == NULL || w == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    g->dests = g->sources + g->indegree;
    if ((err = MPI_Dist_graph_neighbors(comm, g->indegree, g->sources, w, g->outdegree, g->dests,
                                        w + g->indegree)) != MPI_SUCCESS ||
        (err = iso__priv_create_nb(comm, &g->priv)) != MPI_SUCCESS)
        goto fn_fail;
    free(w);
    *out = g;
    return MPI_SUCCESS;
fn_fail:
    free(w);
    graph_free(g);
    return err;
}

int iso__graph_get(MPI_Comm comm, int create, int *is_graph, iso_graph **out)
{
    iso_graph *g = NULL;
    int flag = 0, topo = MPI_UNDEFINED, err;
    *out = NULL;
    *is_graph = 0;
    if (comm == MPI_COMM_NULL)
        return MPI_SUCCESS;
    if ((err = keyval_get()) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_get_attr(comm, graph_keyval, &g, &flag)) != MPI_SUCCESS)
        return err;
    if (flag) {
        *is_graph = 1;
        *out = g;
        return MPI_SUCCESS;
    }
    if ((err = MPI_Topo_test(comm, &topo)) != MPI_SUCCESS || topo != MPI_DIST_GRAPH)
        return err;
    *is_graph = 1;
    if (!create)
        return MPI_SUCCESS;
    if ((err = graph_new(comm, &g)) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_set_attr(comm, graph_keyval, g)) != MPI_SUCCESS) {
        graph_free(g);
        return err;
    }
    *out = g;
    return MPI_SUCCESS;
}

/* ---- direct ------------------------------------------------------------------- */

/* One round on one tag: receives in source order, sends in destination
 * order.  MPI's non-overtaking rule then matches the k-th edge a -> b in
 * a's destinations with the k-th occurrence of a in b's sources, which is
 * MPI_Neighbor_alltoall's rule for repeated edges. */
static int build_direct(const iso_graph *g, const iso_args *a, iso_sched *out)
{
    int err = MPI_SUCCESS;
    for (int j = 0; j < g->indegree && !err; j++)
        err = iso__sched_recv(out, g->sources[j], 0, iso__block(&a->recv, ISO_BUF_RECV, j));
    for (int i = 0; i < g->outdegree && !err; i++)
        err = iso__sched_send(out, g->dests[i], 0, iso__block(&a->send, ISO_BUF_SEND, i));
    if (!err)
        err = iso__sched_end_round(out);
    out->ntags = 1;
    out->struct_phases = 1;
    out->struct_msgs = out->struct_hops = g->outdegree;
    return err;
}

int iso__graph_direct_request(iso_graph *g, MPI_Comm comm, const iso_args *a, iso_graph_use use,
                              struct iso_request_s **out)
{
    iso_sched *sched = NULL;
    int persistent = use == ISO_GRAPH_PERSISTENT || use == ISO_GRAPH_PERSISTENT_TRIAL;
    int err = iso__sched_new(&sched);
    if (err == MPI_SUCCESS)
        err = build_direct(g, a, sched);
    /* all types: round 0 waits for the private communicator's
     * MPI_Comm_idup, which may complete after the call returns */
    if (err == MPI_SUCCESS && use != ISO_GRAPH_BLOCKING)
        err = iso__sched_retain_types(sched, 0);
    if (err == MPI_SUCCESS)
        err = iso__sched_request(g->priv, comm, sched, a, g->outdegree, g->indegree, 0,
                                 persistent, ISO_MODE_PACK, "direct", out);
    iso__sched_release(sched);
    return err;
}
