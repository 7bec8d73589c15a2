/* Isomorphic neighborhoods attached to Cartesian communicators with an MPI
 * attribute (DESIGN.md, "Neighborhoods and communicator state"): offsets
 * translated into source and target ranks, the private communicator, the
 * schedules cached per neighborhood; the queries and Iso_neighborhood_free.
 * Creation (options, verification) is in coll/create.c. */
#include "topo/topo.h"
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;

/* ---- neighborhood objects ---------------------------------------------- */

static void nbh_free(iso_nbh *nb)
{
    if (nb == NULL)
        return;
    for (int k = 0; k < ISO_NCOLL; k++)
        for (int a = 0; a < ISO_MAX_ALGORITHMS; a++)
            iso__sched_release(nb->cache[k][a]);
    for (int k = 0; k < ISO_NCOLL; k++) {
        if (nb->call_req[k])
            iso__request_destroy(nb->call_req[k]);
        free(nb->call_key[k]);
    }
    if (nb->tuner)
        nb->tuner_free(nb->tuner);
    free(nb->dims); /* dims, periods, coords share one allocation */
    free(nb->offsets);
    free(nb->sources);
    free(nb);
}

/* A neighborhood of s offsets in d dims with its layout in one allocation
 * of 3d ints (taken over, freed on failure too; arrays uninitialised). */
static int nbh_alloc(int d, int s, int *layout, iso_nbh **out)
{
    iso_nbh *nb;
    *out = NULL;
    if (layout == NULL || (nb = calloc(1, sizeof *nb)) == NULL) {
        free(layout);
        return iso__error(ISO_ERR_NOMEM);
    }
    nb->d = d;
    nb->s = s;
    nb->dims = layout;
    nb->offsets = malloc(sizeof(int) * ((size_t)s * (size_t)d + 1));
    nb->sources = malloc(sizeof(int) * (2 * (size_t)s + 1)); /* targets follow */
    if (nb->offsets == NULL || nb->sources == NULL) {
        nbh_free(nb);
        return iso__error(ISO_ERR_NOMEM);
    }
    nb->periods = nb->dims + d;
    nb->coords = nb->dims + 2 * d;
    nb->targets = nb->sources + s;
    *out = nb;
    return MPI_SUCCESS;
}

static int nbh_clone(const iso_nbh *from, iso_nbh **out)
{
    int *layout = malloc(sizeof(int) * (size_t)(3 * from->d + 1)), err;
    iso_nbh *nb;
    if (layout != NULL)
        memcpy(layout, from->dims, sizeof(int) * (size_t)(3 * from->d));
    if ((err = nbh_alloc(from->d, from->s, layout, &nb)) != MPI_SUCCESS)
        return err;
    memcpy(nb->offsets, from->offsets, sizeof(int) * (size_t)from->s * (size_t)from->d);
    memcpy(nb->sources, from->sources, sizeof(int) * 2 * (size_t)from->s);
    nb->indegree = from->indegree;
    nb->outdegree = from->outdegree;
    nb->algorithm = from->algorithm;
    nb->mode = from->mode;
    nb->verbose = from->verbose;
    nb->tune = from->tune; /* the copy tunes its own calls anew */
    *out = nb;
    return MPI_SUCCESS;
}

/* Translates the offsets into source and target ranks (local only). */
static int nbh_build(MPI_Comm cart, int s, const int *rel, int algorithm, iso_msg_mode mode,
                     iso_nbh **out)
{
    int d, *layout = NULL, *scratch, err;
    iso_nbh *nb;
    *out = NULL;
    if ((err = iso__cart_layout(cart, &d, &layout)) != MPI_SUCCESS ||
        (err = nbh_alloc(d, s, layout, &nb)) != MPI_SUCCESS)
        return err;
    if ((scratch = malloc(sizeof(int) * (size_t)(d + 1))) == NULL) {
        nbh_free(nb);
        return iso__error(ISO_ERR_NOMEM);
    }
    nb->algorithm = algorithm;
    nb->mode = mode;
    if (s > 0 && d > 0)
        memcpy(nb->offsets, rel, sizeof(int) * (size_t)s * (size_t)d);
    for (int i = 0; i < s; i++) {
        const int *c = nb->offsets + (size_t)i * (size_t)d;
        nb->sources[i] = iso__shifted_rank(nb, c, -1, scratch);
        nb->targets[i] = iso__shifted_rank(nb, c, +1, scratch);
        nb->indegree += nb->sources[i] != MPI_PROC_NULL;
        nb->outdegree += nb->targets[i] != MPI_PROC_NULL;
    }
    free(scratch);
    *out = nb;
    return MPI_SUCCESS;
}

/* ---- per-communicator state and the attribute --------------------------- */

static void state_free(iso_state *st)
{
    nbh_free(st->nbh);
    iso__priv_release(st->priv); /* requests may keep it alive */
    free(st);
}

static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    state_free(val);
    return MPI_SUCCESS;
}

/* MPI_Comm_dup: the copy gets its own state with a copy of the
 * neighborhood; its private communicator is made at its first collective
 * (a copy callback must not start collective communication). */
static int copy_fn(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    const iso_state *from = in;
    iso_state *st;
    int err;
    (void)old;
    (void)kv;
    (void)extra;
    *flag = 0;
    if ((st = calloc(1, sizeof *st)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = nbh_clone(from->nbh, &st->nbh)) != MPI_SUCCESS) {
        free(st);
        return err;
    }
    *(iso_state **)out = st;
    *flag = 1;
    return MPI_SUCCESS;
}

/* The keyval, created by the first attachment (create) of any thread. */
static int keyval_get(int create, int *kv)
{
    int err = MPI_SUCCESS;
    iso__lock();
    if (keyval == MPI_KEYVAL_INVALID && create)
        err = MPI_Comm_create_keyval(copy_fn, delete_fn, &keyval, NULL);
    *kv = keyval;
    iso__unlock();
    return err;
}

int iso__state_get(MPI_Comm comm, int need_priv, iso_state **state)
{
    int flag = 0, kv, err;
    iso_state *st = NULL;
    *state = NULL;
    iso__mpi_library_check(); /* before any handle is used */
    if (comm == MPI_COMM_NULL)
        return iso__cart_check(comm);
    if ((err = keyval_get(0, &kv)) != MPI_SUCCESS)
        return err;
    /* the state hangs only from Cartesian communicators (and their
     * duplicates): the topology is asked only when it is missing, for the
     * error that names the cause */
    if (kv == MPI_KEYVAL_INVALID ||
        (err = MPI_Comm_get_attr(comm, kv, &st, &flag)) != MPI_SUCCESS || !flag || st == NULL) {
        if (err == MPI_SUCCESS && (err = iso__cart_check(comm)) == MPI_SUCCESS)
            err = iso__error_msg(ISO_ERR_NO_NEIGHBORHOOD,
                                 "create one with Iso_neighborhood_create (a neighborhood "
                                 "detached by Iso_neighborhood_free is gone)");
        return err;
    }
    /* an MPI_Comm_dup copy: duplicated without blocking (the first call
     * may be nonblocking); requests wait until it is usable */
    if (need_priv && st->priv == NULL &&
        (err = iso__priv_create_nb(comm, &st->priv)) != MPI_SUCCESS)
        return err;
    *state = st;
    return MPI_SUCCESS;
}

int iso__nbh_attach(MPI_Comm cart, int s, const int *rel, int algorithm, iso_msg_mode mode,
                    int verbose, int tune)
{
    iso_state *st = NULL;
    iso_nbh *nb = NULL;
    int flag = 0, kv, err;
    if ((err = keyval_get(1, &kv)) != MPI_SUCCESS ||
        (err = MPI_Comm_get_attr(cart, kv, &st, &flag)) != MPI_SUCCESS)
        return err;
    /* The same neighborhood again (an application that creates it before
     * every phase): its caches and tuned winners stay valid; only iso_tune's
     * trial count follows the new creation. */
    if (flag && st->priv != NULL && st->nbh != NULL && st->nbh->s == s &&
        st->nbh->algorithm == algorithm && st->nbh->mode == mode && st->nbh->verbose == verbose &&
        (s == 0 || !memcmp(st->nbh->offsets, rel, sizeof(int) * (size_t)s * (size_t)st->nbh->d))) {
        st->nbh->tune = tune;
        return MPI_SUCCESS;
    }
    if ((err = nbh_build(cart, s, rel, algorithm, mode, &nb)) != MPI_SUCCESS)
        return err;
    nb->verbose = verbose;
    nb->tune = tune;
    if (!flag) {
        if ((st = calloc(1, sizeof *st)) == NULL) {
            err = iso__error(ISO_ERR_NOMEM);
            goto fn_fail;
        }
        if ((err = iso__priv_create(cart, &st->priv)) != MPI_SUCCESS ||
            (err = MPI_Comm_set_attr(cart, kv, st)) != MPI_SUCCESS) {
            state_free(st);
            goto fn_fail;
        }
    } else if (st->priv == NULL && (err = iso__priv_create(cart, &st->priv)) != MPI_SUCCESS) {
        goto fn_fail;
    }
    nbh_free(st->nbh); /* attaching again replaces the neighborhood */
    st->nbh = nb;
    return MPI_SUCCESS;
fn_fail:
    nbh_free(nb);
    return err;
}

/* ---- public ------------------------------------------------------------- */

int Iso_neighborhood_free(MPI_Comm *isocomm)
{
    iso_state *st;
    int err;
    if (isocomm == NULL)
        return iso__raise(MPI_COMM_NULL, iso__error_msg(ISO_ERR_ARG, "isocomm is NULL"));
    err = iso__state_get(*isocomm, 0, &st);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_delete_attr(*isocomm, keyval); /* set: there is a state */
    if (err != MPI_SUCCESS)
        return iso__raise(*isocomm, err);
    *isocomm = MPI_COMM_NULL;
    return MPI_SUCCESS;
}

int Iso_neighborhood_count(MPI_Comm isocomm, int *s, int *indegree, int *outdegree)
{
    iso_state *st;
    int err;
    if (s == NULL || indegree == NULL || outdegree == NULL)
        return iso__raise(isocomm, iso__error(ISO_ERR_ARG));
    if ((err = iso__state_get(isocomm, 0, &st)) != MPI_SUCCESS)
        return iso__raise(isocomm, err);
    *s = st->nbh->s;
    *indegree = st->nbh->indegree;
    *outdegree = st->nbh->outdegree;
    return MPI_SUCCESS;
}

static int nbh_get(const char *fn, MPI_Comm comm, int max_s, int *sources, int *destinations,
                   int graph)
{
    iso_state *st;
    int err;
    if (max_s < 0 || (max_s > 0 && (sources == NULL || destinations == NULL)))
        return iso__raise_in(fn, comm, iso__error(ISO_ERR_ARG));
    if ((err = iso__state_get(comm, 0, &st)) != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);
    iso__copy_list(st->nbh->sources, st->nbh->s, max_s, graph, sources);
    iso__copy_list(st->nbh->targets, st->nbh->s, max_s, graph, destinations);
    return MPI_SUCCESS;
}

int Iso_neighborhood_get(MPI_Comm isocomm, int max_s, int sources[], int destinations[])
{
    return nbh_get(__func__, isocomm, max_s, sources, destinations, 0);
}

int Iso_neighborhood_graph_get(MPI_Comm isocomm, int max_s, int sources[], int destinations[])
{
    return nbh_get(__func__, isocomm, max_s, sources, destinations, 1);
}
