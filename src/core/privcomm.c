/* The private communicator: library messages travel on a duplicate of the
 * user's communicator, never on the user's own, and each operation reserves
 * its own tags on it (the same on every process).  Isomorphic neighborhoods
 * keep theirs in their state (topo/); other operations (sparse/) find one
 * cached on the user's communicator (iso__priv_cached). */
#include "core/core.h"
#include <stdlib.h>

static int cache_keyval = MPI_KEYVAL_INVALID;

/* A private communicator made by MPI_Comm_idup, or by MPI_Comm_dup. */
static int priv_make(MPI_Comm comm, int nonblocking, iso_priv **out)
{
    iso_priv *p;
    int *ub, flag = 0, err;
    iso__mpi_library_check(); /* before any handle is used */
    p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if (nonblocking) {
        MPI_Request req;
        if ((err = MPI_Comm_idup(comm, &p->comm, &req)) == MPI_SUCCESS)
            err = iso__progress_wait(&req);
    } else {
        err = MPI_Comm_dup(comm, &p->comm);
    }
    if (err != MPI_SUCCESS) {
        free(p);
        return err;
    }
    err = MPI_Comm_get_attr(p->comm, MPI_TAG_UB, &ub, &flag);
    p->tag_ub = (err == MPI_SUCCESS && flag) ? *ub : 32767; /* the least MPI allows */
    p->refs = 1;
    *out = p;
    return MPI_SUCCESS;
}

int iso__priv_create(MPI_Comm comm, iso_priv **out)
{
    return priv_make(comm, 0, out);
}

void iso__priv_release(iso_priv *p)
{
    int finalized = 0;
    if (p == NULL || --p->refs > 0)
        return;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(&p->comm);
    free(p);
}

int iso__tags_reserve(iso_priv *p, int n)
{
    unsigned base = p->tag_next;
    if (n < 1)
        n = 1; /* an empty operation still takes a tag: counters stay in step */
    if ((unsigned long long)base + (unsigned)n > (unsigned long long)p->tag_ub + 1)
        base = 0;
    p->tag_next = base + (unsigned)n;
    return (int)base;
}

/* ---- the private communicator cached on any intracommunicator ------------ */

static int cache_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    iso__priv_release(val);
    return MPI_SUCCESS;
}

static void drop_world_cache(void)
{
    iso__world_attr_delete(cache_keyval);
}

int iso__priv_cached(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p = NULL;
    int flag = 0, err;
    *out = NULL;
    if (cache_keyval == MPI_KEYVAL_INVALID) {
        /* MPI_Comm_dup of comm does not copy it: the copy makes its own
         * at its first use (a copy callback must not communicate). */
        if ((err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_delete, &cache_keyval,
                                          NULL)) != MPI_SUCCESS ||
            (err = iso__at_finalize(drop_world_cache)) != MPI_SUCCESS)
            return err;
    }
    if ((err = MPI_Comm_get_attr(comm, cache_keyval, &p, &flag)) != MPI_SUCCESS)
        return err;
    if (!flag) {
        if ((err = priv_make(comm, 1, &p)) != MPI_SUCCESS)
            return err;
        /* MPI errors on library traffic come back as codes, to be raised
         * once through the user's communicator by the entry point. */
        if ((err = MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
            (err = MPI_Comm_set_attr(comm, cache_keyval, p)) != MPI_SUCCESS) {
            iso__priv_release(p);
            return err;
        }
    }
    *out = p;
    return MPI_SUCCESS;
}
