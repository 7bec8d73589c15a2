/* The blocking-call cache (DESIGN.md, "Caching"): a blocking collective
 * would validate its arguments, choose and build a schedule, make a
 * request, run it and destroy it.  Instead the neighborhood keeps the
 * finished request of the last blocking call of each collective family,
 * with a key of everything it was made from except the buffer addresses:
 *   - the layout of both sides (counts, displacements, datatypes and the
 *     extents validation read), and the reduction operation;
 *   - recvbuf - sendbuf, on which the aliasing check depends;
 *   - the generation of watched derived types (core/datatype.c): a handle
 *     freed and made again may name another type.
 * A later blocking call with the same key runs that request on its own
 * buffers (iso__sched_request_rebind): no validation, selection, building
 * or allocation.  Validation, selection and the builders are functions of
 * the key alone, so the reused request is the one the call would make, and
 * every process decides as if it had made it (tags are reserved per call
 * either way).  Only successful calls are kept.  A kept request keeps its
 * message buffers within the bounds a cached schedule keeps spare ones
 * (sched.h, ISO_SPARE_MAX); one that is replaced frees them. */
#include "coll/coll.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    iso_layout layout;
    int count;
    MPI_Datatype type;
    MPI_Aint extent;
} side_key;

/* Followed by the arrays of the send side, then of the receive side: V:
 * counts and displacements; W: counts, byte displacements, types (s each). */
typedef struct {
    MPI_Op op;
    side_key send, recv;
    intptr_t diff;
    unsigned long generation;
} call_key;

static size_t arrays_bytes(iso_layout layout, int s)
{
    if (layout == ISO_LAYOUT_V)
        return (size_t)s * 2 * sizeof(int);
    if (layout == ISO_LAYOUT_W)
        return (size_t)s * (sizeof(int) + sizeof(MPI_Aint) + sizeof(MPI_Datatype));
    return 0;
}

/* The arrays of side sd, one after the other as the key keeps them; the
 * callback gets each with its byte size (arrays of an empty neighborhood
 * may be NULL: nothing). */
typedef int (*array_fn)(char **pos, const void *array, size_t bytes);

static int side_arrays(const iso_side *sd, int s, char **pos, array_fn fn)
{
    size_t n = (size_t)s;
    if (s == 0)
        return 1;
    if (sd->layout == ISO_LAYOUT_V)
        return fn(pos, sd->counts, n * sizeof(int)) && fn(pos, sd->idispls, n * sizeof(int));
    if (sd->layout == ISO_LAYOUT_W)
        return fn(pos, sd->counts, n * sizeof(int)) &&
               fn(pos, sd->adispls, n * sizeof(MPI_Aint)) &&
               fn(pos, sd->types, n * sizeof(MPI_Datatype));
    return 1;
}

static int array_store(char **pos, const void *array, size_t bytes)
{
    memcpy(*pos, array, bytes);
    *pos += bytes;
    return 1;
}

static int array_same(char **pos, const void *array, size_t bytes)
{
    int same = memcmp(*pos, array, bytes) == 0;
    *pos += bytes;
    return same;
}

static side_key side_key_of(const iso_side *sd)
{
    return (side_key){sd->layout, sd->count, sd->type, sd->extent};
}

static int side_same(const side_key *k, const iso_side *sd)
{
    return k->layout == sd->layout && k->count == sd->count && k->type == sd->type;
}

static intptr_t buffer_diff(const iso_args *a)
{
    return (intptr_t)a->recvbuf - (intptr_t)a->sendbuf;
}

struct iso_request_s *iso__callcache_take(iso_nbh *nb, iso_args *a)
{
    const call_key *k = nb->call_key[a->coll];
    struct iso_request_s *r = NULL;
    char *pos;
    int commute = 1;
    if (k == NULL || nb->call_req[a->coll] == NULL || a->sendbuf == MPI_IN_PLACE ||
        a->recvbuf == MPI_IN_PLACE || k->op != a->op || k->diff != buffer_diff(a) ||
        k->generation != iso__type_generation() || !side_same(&k->send, &a->send) ||
        !side_same(&k->recv, &a->recv))
        return NULL;
    pos = (char *)(k + 1);
    if (!side_arrays(&a->send, nb->s, &pos, array_same) ||
        !side_arrays(&a->recv, nb->s, &pos, array_same))
        return NULL;
    /* an operation's handle may be reused too: commutativity is checked */
    if (iso__is_reduction(a->coll) &&
        (MPI_Op_commutative(a->op, &commute) != MPI_SUCCESS || !commute))
        return NULL;
    a->send.extent = k->send.extent; /* as validation would set them */
    a->recv.extent = k->recv.extent;
    iso__lock();
    r = nb->call_req[a->coll];
    nb->call_req[a->coll] = NULL;
    iso__unlock();
    if (r != NULL && iso__sched_request_rebind(r, a) != MPI_SUCCESS) {
        iso__request_destroy(r); /* the call goes the long way */
        r = NULL;
    }
    return r;
}

/* Marks the derived types of one side's moving blocks (core/datatype.c). */
static int watch_types(const iso_side *sd, int s, const int *peers)
{
    int err = MPI_SUCCESS;
    if (sd->layout != ISO_LAYOUT_W)
        return iso__type_watch(sd->type);
    for (int i = 0; i < s && err == MPI_SUCCESS; i++)
        if (peers[i] != MPI_PROC_NULL)
            err = iso__type_watch(sd->types[i]);
    return err;
}

void iso__callcache_put(iso_nbh *nb, const iso_args *a, struct iso_request_s *r, int reused)
{
    int s = nb->s;
    size_t bytes = sizeof(call_key) + arrays_bytes(a->send.layout, s) +
                   arrays_bytes(a->recv.layout, s);
    call_key *k = NULL;
    struct iso_request_s *old_req;
    void *old_key;
    char *pos;
    if (reused) { /* its key is still there, and its buffers, trimmed when it was put
                   * first, have the same sizes (the key fixes every block size) */
        iso__lock();
        nb->call_req[a->coll] = r;
        iso__unlock();
        return;
    }
    iso__sched_request_park(r);
    if (watch_types(&a->send, s, nb->targets) != MPI_SUCCESS ||
        watch_types(&a->recv, s, nb->sources) != MPI_SUCCESS ||
        (k = malloc(bytes)) == NULL) {
        iso__request_destroy(r); /* not kept: the next call builds anew */
        return;
    }
    *k = (call_key){a->op, side_key_of(&a->send), side_key_of(&a->recv), buffer_diff(a),
                    iso__type_generation()};
    pos = (char *)(k + 1);
    side_arrays(&a->send, s, &pos, array_store);
    side_arrays(&a->recv, s, &pos, array_store);
    iso__lock();
    old_req = nb->call_req[a->coll];
    old_key = nb->call_key[a->coll];
    nb->call_req[a->coll] = r;
    nb->call_key[a->coll] = k;
    iso__unlock();
    if (old_req)
        iso__sched_request_drop(old_req);
    free(old_key);
}

void iso__callcache_drop(iso_nbh *nb, iso_coll coll)
{
    struct iso_request_s *r;
    iso__lock();
    r = nb->call_req[coll];
    nb->call_req[coll] = NULL;
    iso__unlock();
    if (r)
        iso__sched_request_drop(r);
}
