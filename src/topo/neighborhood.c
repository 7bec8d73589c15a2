/* Isomorphic neighborhoods attached to Cartesian communicators with an MPI
 * attribute; the private communicator for library traffic; tags; info. */
#include "iso_internal.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int keyval = MPI_KEYVAL_INVALID;

/* ---- neighborhood objects ---------------------------------------------- */

static void nbh_free(iso_nbh *nb)
{
    if (nb == NULL)
        return;
    for (int k = 0; k < 4; k++)
        for (int a = 0; a < ISO_MAX_ALGORITHMS; a++)
            iso__sched_release(nb->cache[k][a]);
    free(nb->dims); /* dims, periods, coords share one allocation */
    free(nb->offsets);
    free(nb->sources);
    free(nb);
}

/* Allocates a neighborhood of s offsets in d dims (arrays uninitialised). */
static iso_nbh *nbh_alloc(int d, int s)
{
    iso_nbh *nb = calloc(1, sizeof *nb);
    if (nb == NULL)
        return NULL;
    nb->d = d;
    nb->s = s;
    nb->offsets = malloc(sizeof(int) * ((size_t)s * (size_t)d + 1));
    nb->sources = malloc(sizeof(int) * (2 * (size_t)s + 1)); /* targets follow */
    if (nb->offsets == NULL || nb->sources == NULL) {
        nbh_free(nb);
        return NULL;
    }
    nb->targets = nb->sources + s;
    return nb;
}

static iso_nbh *nbh_clone(const iso_nbh *from)
{
    iso_nbh *nb = nbh_alloc(from->d, from->s);
    if (nb == NULL)
        return NULL;
    nb->dims = malloc(sizeof(int) * (size_t)(3 * from->d + 1));
    if (nb->dims == NULL) {
        nbh_free(nb);
        return NULL;
    }
    memcpy(nb->dims, from->dims, sizeof(int) * (size_t)(3 * from->d));
    nb->periods = nb->dims + nb->d;
    nb->coords = nb->dims + 2 * nb->d;
    memcpy(nb->offsets, from->offsets, sizeof(int) * (size_t)from->s * (size_t)from->d);
    memcpy(nb->sources, from->sources, sizeof(int) * 2 * (size_t)from->s);
    nb->indegree = from->indegree;
    nb->outdegree = from->outdegree;
    nb->algorithm = from->algorithm;
    nb->combine = from->combine;
    return nb;
}

/* Translates the offsets into source and target ranks (local only). */
static int nbh_build(MPI_Comm cart, int s, const int *rel, int algorithm, int combine,
                     iso_nbh **out)
{
    int d, *layout = NULL, *scratch = NULL, err;
    iso_nbh *nb = NULL;
    *out = NULL;
    err = iso__cart_layout(cart, &d, &layout);
    if (err != MPI_SUCCESS)
        return err;
    nb = nbh_alloc(d, s);
    scratch = malloc(sizeof(int) * (size_t)(d + 1));
    if (nb == NULL || scratch == NULL) {
        err = iso__errclass(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    nb->dims = layout;
    layout = NULL;
    nb->periods = nb->dims + d;
    nb->coords = nb->dims + 2 * d;
    nb->algorithm = algorithm;
    nb->combine = combine;
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
fn_fail:
    free(layout);
    free(scratch);
    nbh_free(nb);
    return err;
}

/* ---- per-communicator state and the attribute --------------------------- */

void iso__state_release(iso_state *st)
{
    int finalized = 0;
    if (st == NULL || --st->refs > 0)
        return;
    MPI_Finalized(&finalized);
    if (st->priv != MPI_COMM_NULL && !finalized)
        MPI_Comm_free(&st->priv);
    nbh_free(st->nbh);
    free(st);
}

static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    iso_state *st = val;
    (void)comm;
    (void)kv;
    (void)extra;
    nbh_free(st->nbh);
    st->nbh = NULL;
    iso__state_release(st);
    return MPI_SUCCESS;
}

/* MPI_Comm_dup: the copy gets its own state with a copy of the
 * neighborhood; its private communicator is made at its first collective
 * (a copy callback must not start collective communication). */
static int copy_fn(MPI_Comm old, int kv, void *extra, void *in, void *out, int *flag)
{
    iso_state *from = in, *st;
    (void)old;
    (void)kv;
    (void)extra;
    *flag = 0;
    if (from->nbh == NULL)
        return MPI_SUCCESS;
    st = calloc(1, sizeof *st);
    if (st == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    st->nbh = nbh_clone(from->nbh);
    if (st->nbh == NULL) {
        free(st);
        return iso__errclass(ISO_ERR_NOMEM);
    }
    st->refs = 1;
    st->priv = MPI_COMM_NULL;
    *(iso_state **)out = st;
    *flag = 1;
    return MPI_SUCCESS;
}

/* Makes the private duplicate (collective over comm). */
static int state_make_priv(iso_state *st, MPI_Comm comm)
{
    int *ub, flag, err = MPI_Comm_dup(comm, &st->priv);
    if (err != MPI_SUCCESS)
        return err;
    err = MPI_Comm_get_attr(st->priv, MPI_TAG_UB, &ub, &flag);
    st->tag_ub = (err == MPI_SUCCESS && flag) ? *ub : 32767;
    st->tag_next = 0;
    return err;
}

int iso__state_get(MPI_Comm comm, int need_priv, iso_state **state)
{
    int flag = 0, err = iso__cart_check(comm);
    iso_state *st = NULL;
    *state = NULL;
    if (err != MPI_SUCCESS)
        return err;
    if (keyval == MPI_KEYVAL_INVALID)
        return iso__errclass(ISO_ERR_NO_NEIGHBORHOOD);
    err = MPI_Comm_get_attr(comm, keyval, &st, &flag);
    if (err != MPI_SUCCESS)
        return err;
    if (!flag || st == NULL || st->nbh == NULL)
        return iso__errclass(ISO_ERR_NO_NEIGHBORHOOD);
    if (need_priv && st->priv == MPI_COMM_NULL && (err = state_make_priv(st, comm)) != MPI_SUCCESS)
        return err;
    *state = st;
    return MPI_SUCCESS;
}

int iso__tags_reserve(iso_state *st, int n)
{
    unsigned base = st->tag_next;
    if (n < 1)
        n = 1;
    if ((unsigned long long)base + (unsigned)n > (unsigned long long)st->tag_ub + 1)
        base = 0;
    st->tag_next = base + (unsigned)n;
    return (int)base;
}

/* ---- info --------------------------------------------------------------- */

static Iso_error parse_bool(const char *v, int *out)
{
    if (!strcasecmp(v, "true") || !strcmp(v, "1"))
        *out = 1;
    else if (!strcasecmp(v, "false") || !strcmp(v, "0"))
        *out = 0;
    else
        return ISO_ERR_INFO;
    return ISO_ERR_NONE;
}

Iso_error iso__info_parse(MPI_Info info, int *algorithm, int *combine, int *verify)
{
    int nkeys = 0;
    if (info == MPI_INFO_NULL)
        return ISO_ERR_NONE;
    if (MPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
        return ISO_ERR_INFO;
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        Iso_error e = ISO_ERR_NONE;
        if (MPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS)
            return ISO_ERR_INFO;
        if (strncmp(key, "iso_", 4) != 0)
            continue; /* another library's key */
        if (MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag) != MPI_SUCCESS || !flag)
            return ISO_ERR_INFO;
        if (!strcmp(key, "iso_algorithm") && algorithm)
            e = (Iso_error)iso__algorithm_lookup(value, algorithm);
        else if (!strcmp(key, "iso_combine") && combine)
            e = (Iso_error)iso__combine_lookup(value, combine);
        else if (!strcmp(key, "iso_verify") && verify)
            e = parse_bool(value, verify);
        else
            e = ISO_ERR_INFO;
        if (e != ISO_ERR_NONE)
            return e;
    }
    return ISO_ERR_NONE;
}

/* Defaults from the environment: ISO_ALGORITHM, ISO_COMBINE, ISO_VERIFY. */
static Iso_error env_defaults(int *algorithm, int *combine, int *verify)
{
    const char *a = getenv("ISO_ALGORITHM"), *c = getenv("ISO_COMBINE"), *v = getenv("ISO_VERIFY");
    Iso_error e = ISO_ERR_NONE;
    *algorithm = ISO_ALG_AUTO;
    *combine = ISO_COMBINE_AUTO;
    *verify = 0;
    if (a && *a)
        e = (Iso_error)iso__algorithm_lookup(a, algorithm);
    if (e == ISO_ERR_NONE && c && *c)
        e = (Iso_error)iso__combine_lookup(c, combine);
    if (e == ISO_ERR_NONE && v && *v)
        e = parse_bool(v, verify);
    return e;
}

/* ---- verification -------------------------------------------------------- */

/* One allreduce: every process must have the same d, s, offsets,
 * algorithm and combining mode.  MAX over (x, -x) gives max and -min at
 * once. */
static int verify_isomorphic(MPI_Comm comm, int d, int s, const int *rel, int algorithm,
                             int combine)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    long long v[8], r[8];
    int err;
    for (size_t i = 0; i < (size_t)s * (size_t)d; i++) {
        h ^= (uint32_t)rel[i];
        h *= 1099511628211ull;
    }
    v[0] = d;
    v[1] = s;
    v[2] = (long long)(h >> 2); /* 62 bits: negation cannot overflow */
    v[3] = 4LL * algorithm + combine;
    for (int k = 0; k < 4; k++)
        v[4 + k] = -v[k];
    err = MPI_Allreduce(v, r, 8, MPI_LONG_LONG, MPI_MAX, comm);
    if (err != MPI_SUCCESS)
        return err;
    if (r[0] != -r[4])
        return iso__errclass(ISO_ERR_DIMS);
    if (r[1] != -r[5] || r[2] != -r[6])
        return iso__errclass(ISO_ERR_NOT_ISOMORPHIC);
    if (r[3] != -r[7])
        return iso__errclass(ISO_ERR_ALGORITHM);
    return MPI_SUCCESS;
}

/* ---- public ------------------------------------------------------------- */

static int create(MPI_Comm cart, int s, const int *rel, MPI_Info info, MPI_Comm *isocomm)
{
    int d = 0, algorithm, combine, verify, flag = 0, err;
    Iso_error e;
    iso_state *st = NULL;
    iso_nbh *nb = NULL;

    if ((err = iso__cart_check(cart)) != MPI_SUCCESS)
        return err;
    if (s < 0 || isocomm == NULL)
        return iso__errclass(ISO_ERR_ARG);
    if ((err = MPI_Cartdim_get(cart, &d)) != MPI_SUCCESS)
        return err;
    if (s > 0 && d > 0 && rel == NULL)
        return iso__errclass(ISO_ERR_ARG);
    for (size_t k = 0; k < (size_t)s * (size_t)d; k++)
        if (rel[k] <= -ISO_MAX_OFFSET || rel[k] >= ISO_MAX_OFFSET)
            return iso__errclass(ISO_ERR_ARG);
    if ((e = env_defaults(&algorithm, &combine, &verify)) != ISO_ERR_NONE ||
        (e = iso__info_parse(info, &algorithm, &combine, &verify)) != ISO_ERR_NONE)
        return iso__errclass(e);
    if (verify && (err = verify_isomorphic(cart, d, s, rel, algorithm, combine)) != MPI_SUCCESS)
        return err;
    if ((err = nbh_build(cart, s, rel, algorithm, combine, &nb)) != MPI_SUCCESS)
        return err;

    if (keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(copy_fn, delete_fn, &keyval, NULL)) != MPI_SUCCESS)
        goto fn_fail;
    if ((err = MPI_Comm_get_attr(cart, keyval, &st, &flag)) != MPI_SUCCESS)
        goto fn_fail;
    if (!flag) {
        st = calloc(1, sizeof *st);
        if (st == NULL) {
            err = iso__errclass(ISO_ERR_NOMEM);
            goto fn_fail;
        }
        st->refs = 1;
        if ((err = state_make_priv(st, cart)) != MPI_SUCCESS ||
            (err = MPI_Comm_set_attr(cart, keyval, st)) != MPI_SUCCESS) {
            iso__state_release(st);
            goto fn_fail;
        }
    } else if (st->priv == MPI_COMM_NULL && (err = state_make_priv(st, cart)) != MPI_SUCCESS) {
        goto fn_fail;
    }
    nbh_free(st->nbh); /* creating again replaces the neighborhood */
    st->nbh = nb;
    *isocomm = cart;
    return MPI_SUCCESS;
fn_fail:
    nbh_free(nb);
    return err;
}

int Iso_neighborhood_create_with_info(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                                      MPI_Info info, MPI_Comm *isocomm)
{
    return iso__raise(cartcomm, create(cartcomm, s, relative_coordinates, info, isocomm));
}

int Iso_neighborhood_create(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                            MPI_Comm *isocomm)
{
    return Iso_neighborhood_create_with_info(cartcomm, s, relative_coordinates, MPI_INFO_NULL,
                                             isocomm);
}

int Iso_neighborhood_free(MPI_Comm *isocomm)
{
    iso_state *st;
    int err;
    if (isocomm == NULL)
        return iso__fail(MPI_COMM_NULL, ISO_ERR_ARG);
    err = iso__state_get(*isocomm, 0, &st);
    if (err == MPI_SUCCESS)
        err = MPI_Comm_delete_attr(*isocomm, keyval);
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
        return iso__fail(isocomm, ISO_ERR_ARG);
    if ((err = iso__state_get(isocomm, 0, &st)) != MPI_SUCCESS)
        return iso__raise(isocomm, err);
    *s = st->nbh->s;
    *indegree = st->nbh->indegree;
    *outdegree = st->nbh->outdegree;
    return MPI_SUCCESS;
}

static int nbh_get(MPI_Comm comm, int max_s, int *sources, int *destinations, int graph)
{
    iso_state *st;
    int err;
    if (max_s < 0 || (max_s > 0 && (sources == NULL || destinations == NULL)))
        return iso__fail(comm, ISO_ERR_ARG);
    if ((err = iso__state_get(comm, 0, &st)) != MPI_SUCCESS)
        return iso__raise(comm, err);
    iso__copy_list(st->nbh->sources, st->nbh->s, max_s, graph, sources);
    iso__copy_list(st->nbh->targets, st->nbh->s, max_s, graph, destinations);
    return MPI_SUCCESS;
}

int Iso_neighborhood_get(MPI_Comm isocomm, int max_s, int sources[], int destinations[])
{
    return nbh_get(isocomm, max_s, sources, destinations, 0);
}

int Iso_neighborhood_graph_get(MPI_Comm isocomm, int max_s, int sources[], int destinations[])
{
    return nbh_get(isocomm, max_s, sources, destinations, 1);
}
