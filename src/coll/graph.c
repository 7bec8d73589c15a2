/* Distributed graph communicators (DESIGN.md, "Irregular neighborhood
 * collectives"): the state cached on such a communicator (its neighbor
 * lists, private communicator, options and virtual process topologies),
 * the options (iso_sparse_algorithm, iso_vpt_*), and direct's schedule.
 * The VPT plans are in vpt.c. */
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
    iso__vpt_cache_free(g->vpt_cache);
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

static const char *const graph_algorithm_names[] = {"direct", "vpt", "auto"};

/* One key; errors say where the value came from and what is accepted. */
static int option(void *ctx, const char *key, const char *value)
{
    iso_graph_opts *o = ctx;
    char where[64];
    iso__option_where(where, sizeof where, o->env, key);
    if (!strcmp(key, "iso_sparse_algorithm")) {
        for (int k = 0; k < 3; k++)
            if (!strcasecmp(value, graph_algorithm_names[k])) {
                o->algorithm = k;
                return MPI_SUCCESS;
            }
        /* the environment variable is shared with Iso_alltoall(v)_crs,
         * whose discovery algorithms mean nothing when the pattern is known */
        if (o->env)
            return MPI_SUCCESS;
        return iso__error_msg(ISO_ERR_ALGORITHM,
                              "%s=\"%s\" (on a distributed graph communicator: direct, vpt, auto)",
                              where, value);
    }
    if (!strncmp(key, "iso_vpt_", 8))
        return iso__vpt_option(&o->vpt, o->p, key, value, where);
    if (!strcmp(key, "iso_verify")) { /* accepted for info shared with the other calls */
        int flag;
        return iso__option_bool(where, value, &flag);
    }
    return iso__error_msg(ISO_ERR_INFO,
                          "unknown info key %s on a distributed graph communicator (here: "
                          "iso_sparse_algorithm, iso_vpt_dims, iso_vpt_n, iso_vpt_locality, "
                          "iso_verify)",
                          key);
}

int iso__graph_info_parse(MPI_Info info, iso_graph_opts *o)
{
    o->env = NULL;
    return iso__info_each(info, option, o);
}

const iso_env_option iso__sparse_env_options[ISO_SPARSE_NENV] = {
    {"ISO_SPARSE_ALGORITHM", "iso_sparse_algorithm"},
    {"ISO_VPT_DIMS", "iso_vpt_dims"},
    {"ISO_VPT_N", "iso_vpt_n"},
    {"ISO_VPT_LOCALITY", "iso_vpt_locality"}};

/* The environment, then the communicator's info (as MPI_Comm_get_info
 * returns it). */
static int options_defaults(MPI_Comm comm, int p, iso_graph_opts *o)
{
    MPI_Info info = MPI_INFO_NULL;
    int err;
    memset(o, 0, sizeof *o);
    o->algorithm = ISO_GRAPH_DIRECT;
    o->p = p;
    err = iso__env_each(iso__sparse_env_options, ISO_SPARSE_NENV, &o->env, option, o);
    if (!err && (err = MPI_Comm_get_info(comm, &info)) == MPI_SUCCESS) {
        err = iso__info_each(info, option, o);
        MPI_Info_free(&info);
    }
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
    if (comm == MPI_COMM_NULL || (err = keyval_get()) != MPI_SUCCESS)
        return MPI_SUCCESS;
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
int iso__graph_build_direct(const iso_graph *g, const iso_args *a, iso_sched *out)
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
