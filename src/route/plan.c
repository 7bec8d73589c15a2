/* What every routing shares (route.h): the plan type, the check of the
 * send side and the agreement before planning, the request that runs a
 * plan, the plan cache, the environment of the irregular exchanges, and
 * Iso_request_vpt_info. */
#include "route/route.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void iso__route_plan_free(iso_route_plan *p)
{
    iso__sched_release(p->sched);
    free(p->msgsize);
    free(p->arrived);
    memset(p, 0, sizeof *p);
}

/* ---- the graph rule ------------------------------------------------------------- */

static int cmp_pair(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* (rank, index) pairs of a list, sorted: the k-th occurrence of rank r is
 * pairs[first(r) + k]. */
int *iso__route_sorted_pairs(const int *list, int n)
{
    int *pairs = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    if (pairs == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        pairs[2 * i] = list[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, (size_t)n, 2 * sizeof(int), cmp_pair);
    return pairs;
}

int iso__route_first_of(const int *pairs, int n, long long rank)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

long long iso__route_lower_bound(const int *a, long long lo, long long hi, int x)
{
    while (lo < hi) {
        long long mid = lo + (hi - lo) / 2;
        if (a[mid] < x)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

int iso__route_graph_slot(const int *src_pairs, int n, char *filled, long long source,
                          long long ord, int *slot)
{
    int at = ord >= 0 && ord < n ? iso__route_first_of(src_pairs, n, source) + (int)ord : -1;
    if (at < 0 || at >= n || src_pairs[2 * at] != source || filled[src_pairs[2 * at + 1]])
        return 0;
    *slot = src_pairs[2 * at + 1];
    filled[*slot] = 1;
    return 1;
}

int iso__route_note_size(size_t **msgsize, int *cap, int m, size_t bytes)
{
    int err = iso__grow(msgsize, cap, m + 1, sizeof **msgsize);
    if (err == MPI_SUCCESS)
        (*msgsize)[m] = bytes;
    return err;
}

/* ---- before planning ------------------------------------------------------------- */

/* Unsigned arithmetic: up to 16 dimensions overflow 64 bits, which must
 * wrap, not be undefined; 62 bits travel (no LLONG_MIN). */
static long long key_hash(const iso_route_key *k)
{
    unsigned long long h = (unsigned)k->routing;
    for (int d = 0; d < k->n; d++)
        h = h * 131u + (unsigned)k->dims[d];
    h = (h * 17u + (unsigned)k->n) * 3u + (unsigned)k->locality;
    return (long long)(h >> 2);
}

/* A send block with data at address 0: what MPI's own sends refuse as
 * MPI_ERR_BUFFER (a NULL buffer with nonzero counts).  A routing copies
 * blocks itself (PACK), so it must refuse them before it does; a null
 * buffer with absolute addresses in the displacements or the type (MPI_BOTTOM)
 * is fine. */
static int check_send(const iso_args *a, int nsend)
{
    if (a->sendbuf != NULL)
        return MPI_SUCCESS;
    for (int i = 0; i < nsend; i++) {
        iso_loc l = iso__block(&a->send, ISO_BUF_SEND, i);
        MPI_Aint lb, extent;
        int size = 0;
        if (l.count <= 0 || MPI_Type_size(l.type, &size) != MPI_SUCCESS || size == 0)
            continue;
        if (MPI_Type_get_true_extent(l.type, &lb, &extent) == MPI_SUCCESS && l.disp + lb == 0)
            return MPI_ERR_BUFFER;
    }
    return MPI_SUCCESS;
}

int iso__route_agree(iso_priv *priv, int err, const iso_args *a, int nsend,
                     const iso_route_key *key, iso_agreement *ag)
{
    int ready, rc;
    if (err == MPI_SUCCESS && a != NULL)
        err = check_send(a, nsend);
    ag->same[0] = key_hash(key);
    if (ag->nsame < 1)
        ag->nsame = 1;
    if ((rc = iso__priv_ready(priv, 1, &ready)) != MPI_SUCCESS ||
        (rc = iso__agree(priv->comm, err, ag)) != MPI_SUCCESS)
        return rc;
    if (ag->differs == 0)
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different routing shapes "
                                                 "(iso_vpt_dims, iso_vpt_n, iso_vpt_locality, "
                                                 "iso_locality)");
    return MPI_SUCCESS;
}

/* ---- the request that runs a plan ------------------------------------------------ */

int iso__route_request(iso_priv *priv, MPI_Comm comm, const iso_route_plan *plan,
                       const iso_args *a, int nsend, int nrecv, int retain_args, int persistent,
                       const char *name, struct iso_request_s **out)
{
    int err = iso__sched_request(priv, comm, plan->sched, a, nsend, nrecv, retain_args,
                                 persistent, ISO_MODE_PACK, name, out);
    if (err == MPI_SUCCESS && (err = iso__sched_request_reserve(*out, plan->msgsize))) {
        iso__request_destroy(*out);
        *out = NULL;
    }
    return err;
}

/* ---- the plan cache ---------------------------------------------------------------- */

struct iso_route_cache_s {
    long long gen;
    iso_route_key key;
    int nsend;
    long long *sizes; /* [nsend] bytes of each send block */
    iso_route_plan plan;
};

void iso__route_cache_free(iso_route_cache *c)
{
    if (c == NULL)
        return;
    iso__route_plan_free(&c->plan);
    free(c->sizes);
    free(c);
}

long long iso__route_send_bytes(const iso_args *a, int i)
{
    iso_loc l = iso__block(&a->send, ISO_BUF_SEND, i);
    MPI_Count size = 0;
    MPI_Type_size_x(l.type, &size);
    return (long long)size * l.count;
}

int iso__route_cache_fits(const iso_route_cache *c, int nsend, const iso_args *a)
{
    if (c == NULL || c->nsend != nsend)
        return 0;
    for (int i = 0; i < nsend; i++)
        if (c->sizes[i] != iso__route_send_bytes(a, i))
            return 0;
    return 1;
}

long long iso__route_cache_gen(const iso_route_cache *c)
{
    return c ? c->gen : -1;
}

static int same_key(const iso_route_key *x, const iso_route_key *y)
{
    return x->routing == y->routing && x->n == y->n && x->locality == y->locality &&
           !memcmp(x->dims, y->dims, sizeof(int) * (size_t)x->n);
}

const iso_route_plan *iso__route_cache_plan(const iso_route_cache *c, const iso_route_key *key)
{
    return c && same_key(&c->key, key) ? &c->plan : NULL;
}

void iso__route_cache_put(iso_route_cache **cache, const iso_route_key *key, int nsend,
                          const iso_args *a, long long gen, iso_route_plan *plan)
{
    iso_route_cache *c = calloc(1, sizeof *c);
    iso__route_cache_free(*cache);
    *cache = NULL;
    if (c == NULL || (c->sizes = malloc(sizeof(long long) * ((size_t)nsend + 1))) == NULL) {
        free(c); /* not kept: the next call plans anew */
        return;
    }
    for (int i = 0; i < nsend; i++)
        c->sizes[i] = iso__route_send_bytes(a, i);
    c->gen = gen;
    c->key = *key;
    c->nsend = nsend;
    c->plan = *plan;
    memset(plan, 0, sizeof *plan);
    *cache = c;
}

/* ---- the environment of the irregular exchanges ------------------------------------- */

const iso_env_option iso__sparse_env_options[ISO_SPARSE_NENV] = {
    {"ISO_SPARSE_ALGORITHM", "iso_sparse_algorithm"},
    {"ISO_VPT_DIMS", "iso_vpt_dims"},
    {"ISO_VPT_N", "iso_vpt_n"},
    {"ISO_VPT_LOCALITY", "iso_vpt_locality"},
    {"ISO_LOCALITY", "iso_locality"}};

/* The vocabulary of iso_sparse_algorithm: each word and the contexts it is
 * valid in (bit ISO_CTX_*), so that a word of one context read in the
 * other gets an error that says so. */
static const struct {
    const char *name;
    unsigned contexts;
} sparse_words[] = {{"direct", 1u << ISO_CTX_GRAPH},
                    {"vpt", 1u << ISO_CTX_GRAPH | 1u << ISO_CTX_CRS},
                    {"sharing", 1u << ISO_CTX_GRAPH | 1u << ISO_CTX_CRS},
                    {"personalized", 1u << ISO_CTX_CRS},
                    {"nbx", 1u << ISO_CTX_CRS},
                    {"rma", 1u << ISO_CTX_CRS},
                    {"locality-personalized", 1u << ISO_CTX_CRS},
                    {"locality-nbx", 1u << ISO_CTX_CRS}};

static const char *const context_names[] = {[ISO_CTX_GRAPH] = "on a distributed graph communicator",
                                            [ISO_CTX_CRS] = "for Iso_*_crs"};

int iso__sparse_algorithm_option(const iso_table *t, iso_sparse_context ctx, const char *where,
                                 const char *value, int *index)
{
    char names[192];
    int k = iso__table_find(t, value);
    if (k != -2) {
        *index = k;
        return MPI_SUCCESS;
    }
    iso__table_names(t, names, sizeof names);
    for (size_t w = 0; w < sizeof sparse_words / sizeof sparse_words[0]; w++)
        if (!strcasecmp(value, sparse_words[w].name) && !(sparse_words[w].contexts & 1u << ctx))
            return iso__error_msg(ISO_ERR_ALGORITHM, "%s=\"%s\" is %s algorithm; %s: %s", where,
                                  value, ctx == ISO_CTX_GRAPH ? "an Iso_*_crs"
                                                              : "a distributed graph communicator",
                                  context_names[ctx], names);
    return iso__error_msg(ISO_ERR_ALGORITHM, "%s=\"%s\" is unknown; %s: %s", where, value,
                          context_names[ctx], names);
}

/* ---- what a routed exchange did (vpt: its stages; sharing: its two) --------------- */

/* MPI_SUCCESS when the request runs sharing (or vpt, when vpt_too): the check
 * both info queries make before reading the request's stages. */
static int check_routed_request(Iso_request request, int vpt_too)
{
    const char *alg, *mode;
    int rounds, msgs;
    long long b;
    int err = iso__sched_request_describe(request, &alg, &mode, &rounds, &msgs, &b);
    if (err == MPI_SUCCESS && strcmp(alg, "sharing") != 0 && !(vpt_too && strcmp(alg, "vpt") == 0))
        err = iso__error_msg(ISO_ERR_REQUEST, "not a request of the %s algorithm (it runs %s)",
                             vpt_too ? "vpt or sharing" : "sharing", alg);
    return err;
}

int Iso_request_vpt_info(Iso_request request, int maxstages, int *nstages, int messages[],
                         long long bytes[], long long *forwarded, long long *buffer_bytes)
{
    MPI_Comm comm = request ? request->comm : MPI_COMM_WORLD;
    int err;
    if (request == ISO_REQUEST_NULL)
        return iso__raise(comm, iso__error_msg(ISO_ERR_REQUEST, "request is ISO_REQUEST_NULL"));
    if (!nstages || !forwarded || !buffer_bytes || maxstages < 0 ||
        (maxstages > 0 && (!messages || !bytes)))
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "an output argument is NULL"));
    err = check_routed_request(request, 1);
    if (err == MPI_SUCCESS)
        err = iso__sched_request_rounds(request, maxstages, nstages, messages, bytes, forwarded,
                                        buffer_bytes);
    return iso__raise(comm, err);
}

int Iso_request_sharing_info(Iso_request request, int messages[2], long long bytes[2],
                             long long *forwarded, int *overhead, long long *buffer_bytes)
{
    MPI_Comm comm = request ? request->comm : MPI_COMM_WORLD;
    int nstages, err;
    if (request == ISO_REQUEST_NULL)
        return iso__raise(comm, iso__error_msg(ISO_ERR_REQUEST, "request is ISO_REQUEST_NULL"));
    if (!messages || !bytes || !forwarded || !overhead || !buffer_bytes)
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "an output argument is NULL"));
    err = check_routed_request(request, 0);
    if (err == MPI_SUCCESS)
        err = iso__sched_request_rounds(request, 2, &nstages, messages, bytes, forwarded,
                                        buffer_bytes);
    if (err == MPI_SUCCESS)
        err = iso__sched_request_overhead(request, overhead);
    return iso__raise(comm, err);
}
