/* The private communicator: library messages travel on a duplicate of the
 * user's communicator, never on the user's own, and each operation reserves
 * its own tags on it (the same on every process).  Isomorphic neighborhoods
 * keep theirs in their state (topo/); other operations (sparse/) find one
 * cached on the user's communicator (iso__priv_cached). */
#include "core/core.h"
#include <sched.h>
#include <stdlib.h>

/* MPI_TAG_UB is the same on every communicator: read it from the parent. */
static int priv_new(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p;
    int *ub, flag = 0;
    *out = NULL;
    iso__mpi_library_check(); /* before any handle is used */
    if ((p = calloc(1, sizeof *p)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if (MPI_Comm_get_attr(comm, MPI_TAG_UB, &ub, &flag) != MPI_SUCCESS || !flag)
        p->tag_ub = 32767; /* the least MPI allows */
    else
        p->tag_ub = *ub;
    p->comm = MPI_COMM_NULL;
    p->dup = MPI_REQUEST_NULL;
    p->refs = 1;
    *out = p;
    return MPI_SUCCESS;
}

/* Library code checks every return: errors on the private communicator
 * come back as codes and are raised through the user's communicator (its
 * handler at the time of the call), never through the handler the user's
 * communicator had when it was duplicated. */
static int priv_finish(iso_priv *p)
{
    return MPI_Comm_set_errhandler(p->comm, MPI_ERRORS_RETURN);
}

int iso__priv_create(MPI_Comm comm, iso_priv **out)
{
    MPI_Comm dup;
    int err;
    *out = NULL;
    iso__mpi_library_check(); /* before any handle is used */
    if ((err = MPI_Comm_dup(comm, &dup)) != MPI_SUCCESS)
        return err;
    if ((err = iso__priv_adopt(dup, out)) != MPI_SUCCESS)
        MPI_Comm_free(&dup);
    return err;
}

int iso__priv_adopt(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p;
    int err;
    *out = NULL;
    if ((err = priv_new(comm, &p)) != MPI_SUCCESS)
        return err;
    p->comm = comm;
    if ((err = priv_finish(p)) != MPI_SUCCESS) {
        free(p);
        return err;
    }
    p->ready = 1;
    *out = p;
    return MPI_SUCCESS;
}

void iso__priv_release(iso_priv *p)
{
    int finalized = 0;
    if (p == NULL || --p->refs > 0)
        return;
    MPI_Finalized(&finalized);
    if (!finalized) {
        if (p->dup != MPI_REQUEST_NULL) /* every process started it: it completes */
            MPI_Wait(&p->dup, MPI_STATUS_IGNORE);
        if (p->comm != MPI_COMM_NULL)
            MPI_Comm_free(&p->comm);
    }
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

/* ---- made without blocking (nonblocking and persistent calls) ------------ */

int iso__priv_create_nb(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p;
    int err;
    *out = NULL;
    if ((err = priv_new(comm, &p)) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_idup(comm, &p->comm, &p->dup)) != MPI_SUCCESS) {
        free(p);
        return err;
    }
    *out = p;
    return MPI_SUCCESS;
}

int iso__priv_ready(iso_priv *p, int block, int *ready)
{
    int flag, err = MPI_SUCCESS;
    iso__lock(); /* requests of one communicator may be progressed by several threads */
    if (p->ready) { /* the common case: no completion call, no handler swap */
        iso__unlock();
        *ready = 1;
        return MPI_SUCCESS;
    }
    iso__unlock();
    iso__world_errors_return(1); /* MPI_Test is a completion call (request.c) */
    iso__lock();
    while (!p->ready) {
        if ((err = MPI_Test(&p->dup, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            break;
        if (flag) {
            if ((err = priv_finish(p)) == MPI_SUCCESS)
                p->ready = 1;
            break;
        }
        if (!block)
            break;
        iso__unlock(); /* never hold the lock while other processes are awaited */
        sched_yield();
        iso__lock();
    }
    *ready = p->ready;
    iso__unlock();
    iso__world_errors_return(0);
    return err;
}

/* ---- the private communicator cached on any intracommunicator ------------ */

static int cache_keyval = MPI_KEYVAL_INVALID;

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

/* The keyval, made once (under the library lock: threads). */
static int cache_keyval_get(void)
{
    int err = MPI_SUCCESS;
    iso__lock();
    /* MPI_Comm_dup of comm does not copy the attribute: the copy makes its
     * own private communicator at its first use (a copy callback must not
     * communicate). */
    if (cache_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, cache_delete, &cache_keyval,
                                      NULL)) == MPI_SUCCESS)
        err = iso__at_finalize(drop_world_cache);
    iso__unlock();
    return err;
}

int iso__priv_cached(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p = NULL;
    int flag = 0, err;
    *out = NULL;
    if ((err = cache_keyval_get()) != MPI_SUCCESS ||
        (err = MPI_Comm_get_attr(comm, cache_keyval, &p, &flag)) != MPI_SUCCESS)
        return err;
    if (!flag) {
        /* MPI_Comm_idup, completed while the active requests progress: other
         * outstanding operations may be what the other processes finish
         * before they enter this call */
        if ((err = iso__priv_create_nb(comm, &p)) != MPI_SUCCESS)
            return err;
        if ((err = iso__progress_wait(&p->dup)) == MPI_SUCCESS &&
            (err = priv_finish(p)) == MPI_SUCCESS) {
            p->ready = 1;
            err = MPI_Comm_set_attr(comm, cache_keyval, p);
        }
        if (err != MPI_SUCCESS) {
            iso__priv_release(p);
            return err;
        }
    }
    *out = p;
    return MPI_SUCCESS;
}
