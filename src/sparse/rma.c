/* The one-sided SDDE for constant sizes (Geyko et al. 2023, algorithm 3,
 * as in CELLAR), made progress-driven and with its window kept:
 *   1. a nonblocking allreduce agrees on the slot size (the largest
 *      message any process sends or expects).  Its completion also means
 *      every process has entered this call, so all have read the window
 *      of their previous call;
 *   2. the window (cached on the private communicator, locked for shared
 *      access for its whole life) is made or enlarged if the slot size
 *      grew; this is blocking but collective among processes that all
 *      are in this call already;
 *   3. each message goes, with a header (call number, bytes), by MPI_Put
 *      into slot `my rank` of the destination's window; MPI_Win_flush_all
 *      completes the puts at their targets; a nonblocking barrier follows;
 *   4. when the barrier completes, every put of this call has landed:
 *      after MPI_Win_sync, a slot holds a message of this call if its
 *      header carries this call's number.
 * The window takes p x slot bytes on every process: meant for small
 * messages. */
#include "sparse/sparse.h"
#include <stdlib.h>
#include <string.h>

#define SLOT_HDR 8    /* call number and bytes, two 32-bit ints */
#define WIN_PAGE 4096 /* window sizes are multiples of this (see window_make) */

/* The window cached on a private communicator.  Every live window is also
 * on a list, newest first: MPICH 4.0 with UCX aborts in MPI_Finalize
 * (rcache.c:409, "region->refcount == 0") when a window is still there,
 * locked or not, and the private communicator of a communicator the
 * program never frees lives until then.  So the windows are freed at
 * MPI_Finalize (core/finalize.c runs this while MPI is whole), newest
 * first: every process frees its windows in the reverse of the order in
 * which it made them, which is a valid order for these collective calls
 * because making them (also collective and blocking) succeeded.  The
 * entry stays, without its window, until its attribute goes. */
typedef struct rma_window {
    MPI_Win win; /* MPI_WIN_NULL once freed at MPI_Finalize */
    char *base;
    size_t slot;     /* bytes per slot, header included */
    unsigned number; /* of the last call (0: none since it was made) */
    struct rma_window *older, *newer;
} rma_window;

static int win_keyval = MPI_KEYVAL_INVALID;
static rma_window *newest; /* under iso__lock */

static void window_release(rma_window *w)
{
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && w->win != MPI_WIN_NULL) {
        MPI_Win_unlock_all(w->win);
        MPI_Win_free(&w->win);
    }
    w->win = MPI_WIN_NULL;
}

static void window_free(rma_window *w)
{
    if (w == NULL)
        return;
    window_release(w);
    iso__lock();
    if (w->older)
        w->older->newer = w->newer;
    if (w->newer)
        w->newer->older = w->older;
    else
        newest = w->older;
    iso__unlock();
    free(w);
}

/* At MPI_Finalize no other call of the library can run (MPI forbids calls
 * concurrent with it), and MPI_Win_free waits for the other processes: no
 * lock held. */
static void windows_free_all(void)
{
    for (rma_window *w = newest; w != NULL; w = w->older)
        window_release(w);
}

static int win_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    window_free(val);
    return MPI_SUCCESS;
}

#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
/* Open MPI 4's osc/rdma (the component MPI_Win_allocate and MPI_Win_create
 * get) keeps each node's window state in a shared-memory file named after
 * the communicator's context id, and the disjoint communicators of one
 * MPI_Comm_split may have the same id: halves that make windows at the
 * same time fail in open(2) or deliver puts into each other's windows
 * (ompi#9492, fixed in Open MPI 5; 5 of 6 runs of tests/t_rma_split.c at 8
 * ranks).  A shared window (osc/sm) names its file after the world rank of
 * the communicator's first process as well, which no disjoint communicator
 * shares; it needs all processes on one node.  Across nodes no window is
 * safe from it, so rma is refused there, alike on every process. */
static int window_allocate(MPI_Comm comm, MPI_Aint bytes, rma_window *w)
{
    MPI_Comm node;
    int size, node_size, err;
    if ((err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node)) !=
        MPI_SUCCESS)
        return err;
    MPI_Comm_size(node, &node_size);
    MPI_Comm_size(comm, &size);
    MPI_Comm_free(&node);
    if (node_size != size) /* alike everywhere: some node lacks some process */
        return iso__error_msg(ISO_ERR_ALGORITHM,
                              "iso_sparse_algorithm=rma across nodes is refused on Open MPI "
                              "4: its windows on split communicators may receive other "
                              "communicators' data (ompi#9492, fixed in Open MPI 5); use "
                              "another algorithm");
    return MPI_Win_allocate_shared(bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win);
}
#else
static int window_allocate(MPI_Comm comm, MPI_Aint bytes, rma_window *w)
{
    return MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, comm, &w->base, &w->win);
}
#endif

/* A window of p slots of slot bytes on comm, zeroed before anyone may put
 * into it (collective).  Its size is a multiple of the page size: MPICH
 * 4.0.2's MPI_Win_allocate on shared memory delivers puts to the wrong
 * place on some processes when the size is not (rank 1 of 3 with 3 x 4104
 * bytes saw none of its puts), and uses one symmetric mapping when it is. */
static int window_make(MPI_Comm comm, int p, size_t slot, rma_window **out)
{
    rma_window *w = calloc(1, sizeof *w);
    size_t bytes = (slot * (size_t)p + WIN_PAGE - 1) / WIN_PAGE * WIN_PAGE;
    int err;
    *out = NULL;
    if (w == NULL)
        return iso__error(ISO_ERR_NOMEM);
    w->slot = slot;
    if ((err = window_allocate(comm, (MPI_Aint)bytes, w)) != MPI_SUCCESS) {
        free(w);
        return err;
    }
    memset(w->base, 0, bytes);
    if ((err = MPI_Win_set_errhandler(w->win, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
        (err = MPI_Win_lock_all(MPI_MODE_NOCHECK, w->win)) != MPI_SUCCESS ||
        (err = MPI_Barrier(comm)) != MPI_SUCCESS) {
        MPI_Win_free(&w->win);
        free(w);
        return err;
    }
    iso__lock();
    if ((w->older = newest) != NULL)
        newest->newer = w;
    newest = w;
    iso__unlock();
    *out = w;
    return MPI_SUCCESS;
}

/* The cached window with slots of at least slot bytes (collective: every
 * process passes the same slot size). */
static int window_get(MPI_Comm comm, size_t slot, rma_window **out)
{
    rma_window *w = NULL;
    int flag = 0, p, err = MPI_SUCCESS;
    iso__lock();
    if (win_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, win_delete, &win_keyval, NULL)) ==
            MPI_SUCCESS &&
        (err = iso__at_finalize(windows_free_all)) != MPI_SUCCESS)
        MPI_Comm_free_keyval(&win_keyval);
    iso__unlock();
    if (err != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_get_attr(comm, win_keyval, &w, &flag)) != MPI_SUCCESS)
        return err;
    if (flag && w->slot >= slot) {
        *out = w;
        return MPI_SUCCESS;
    }
    if (flag && (err = MPI_Comm_delete_attr(comm, win_keyval)) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_size(comm, &p)) != MPI_SUCCESS ||
        (err = window_make(comm, p, slot, &w)) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_set_attr(comm, win_keyval, w)) != MPI_SUCCESS) {
        window_free(w);
        return err;
    }
    *out = w;
    return MPI_SUCCESS;
}

enum { AGREEING, LANDING };

typedef struct {
    iso_sdde_req base;
    iso_sdde_call c;
    MPI_Comm comm; /* priv->comm */
    int rank, size;
    int need, agreed; /* bytes of the largest message: mine, everybody's */
    MPI_Request coll;
    int state;
    rma_window *w;
    char *stage; /* headers and packed messages, one slot each */
    iso_inbox result;
} rma_req;

static int start(struct iso_request_s *req)
{
    rma_req *r = (rma_req *)req;
    r->state = AGREEING;
    return MPI_Iallreduce(&r->need, &r->agreed, 1, MPI_INT, MPI_MAX, r->comm, &r->coll);
}

static int put_all(rma_req *r)
{
    const iso_sdde_call *c = &r->c;
    size_t slot = SLOT_HDR + (((size_t)r->agreed + 7) & ~(size_t)7);
    int err = window_get(r->comm, slot, &r->w);
    if (err != MPI_SUCCESS)
        return err;
    if (++r->w->number == 0) /* 0 marks slots never written */
        r->w->number = 1;
    if ((r->stage = malloc(r->w->slot * ((size_t)c->n + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < c->n && err == MPI_SUCCESS; i++) {
        char *s = r->stage + (size_t)i * r->w->slot;
        int hdr[2] = {(int)r->w->number, c->count * c->size}, pos = SLOT_HDR;
        memcpy(s, hdr, sizeof hdr);
        if ((err = iso__pack(iso__sdde_data(c, i), c->count, c->type, s, (int)r->w->slot, &pos,
                            r->comm)) != MPI_SUCCESS)
            break;
        err = MPI_Put(s, pos, MPI_BYTE, c->dest[i], (MPI_Aint)((size_t)r->rank * r->w->slot), pos,
                      MPI_BYTE, r->w->win);
    }
    if (err == MPI_SUCCESS && (err = MPI_Win_flush_all(r->w->win)) == MPI_SUCCESS)
        err = MPI_Ibarrier(r->comm, &r->coll);
    return err;
}

/* The slots written in this call, in ascending source order. */
static int collect(rma_req *r)
{
    int err = MPI_Win_sync(r->w->win);
    r->result.ext = r->w->base;
    for (int k = 0; k < r->size && err == MPI_SUCCESS; k++) {
        const char *s = r->w->base + (size_t)k * r->w->slot;
        int hdr[2];
        memcpy(hdr, s, sizeof hdr);
        if ((unsigned)hdr[0] != r->w->number)
            continue;
        if (hdr[1] < 0 || (size_t)hdr[1] > r->w->slot - SLOT_HDR)
            return iso__error(ISO_ERR_INTERN);
        err = iso__inbox_add(&r->result, k, hdr[1], (size_t)k * r->w->slot + SLOT_HDR);
    }
    return err;
}

static void progress(struct iso_request_s *req, int block)
{
    rma_req *r = (rma_req *)req;
    int flag = 1, err;
    for (;;) {
        err = block ? MPI_Wait(&r->coll, MPI_STATUS_IGNORE)
                    : MPI_Test(&r->coll, &flag, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || !flag)
            break;
        if (r->state == AGREEING) {
            r->state = LANDING;
            if ((err = put_all(r)) != MPI_SUCCESS)
                break;
            continue;
        }
        err = collect(r);
        r->base.result = &r->result;
        iso__request_complete(req, err);
        return;
    }
    if (err != MPI_SUCCESS)
        iso__request_complete(req, err);
}

static void destroy(struct iso_request_s *req)
{
    rma_req *r = (rma_req *)req;
    free(r->stage);
    r->result.ext = NULL;
    iso__inbox_free(&r->result);
    free(r);
}

static const iso_request_kind rma_kind = {start, progress, destroy};

int iso__sdde_rma(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    rma_req *r = calloc(1, sizeof *r);
    int err;
    *out = NULL;
    if (r == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->base.req, &rma_kind, comm, 0);
    r->c = *c;
    r->comm = c->priv->comm;
    r->coll = MPI_REQUEST_NULL;
    r->need = c->recv_bytes;
    if (c->n > 0 && c->count * c->size > r->need)
        r->need = c->count * c->size;
    if ((err = MPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS ||
        (err = MPI_Comm_size(r->comm, &r->size)) != MPI_SUCCESS) {
        free(r);
        return err;
    }
    *out = &r->base;
    return MPI_SUCCESS;
}
