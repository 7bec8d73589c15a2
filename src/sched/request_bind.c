/* Binding a schedule to a call: making the schedule request for a call's
 * buffers and mode (iso__sched_request), binding a finished one to another
 * call's buffers (the call cache), reserving its message buffers (plans
 * with known sizes), parking and dropping it.  The rounds it then runs are
 * executor.c's. */
#include "sched/exec.h"
#include <stdint.h>
#include <stdlib.h>

/* Pack mode with blocks whose size every process knows: a combined message
 * over 2 GiB fails here, alike everywhere and before any communication
 * (others are caught when packed: fail() in executor.c then keeps the peers
 * going). */
static int pack_limit(const iso_sched *sched, const iso_args *a, iso_msg_mode mode)
{
    iso_figures f = iso__sched_figures(sched);
    MPI_Count size;
    int err;
    if (mode != ISO_MODE_PACK || sched->nmsgs == 0 || !iso__datatype_possible(a))
        return MPI_SUCCESS;
    if ((err = MPI_Type_size_x(a->recv.type, &size)) != MPI_SUCCESS)
        return err;
    if (iso__pack_fits(&f, (double)size * a->recv.count))
        return MPI_SUCCESS;
    return iso__error_msg(ISO_ERR_COUNT, PACK_2GIB);
}

/* The size of every incoming message, where it is known before it arrives
 * (so it is received without a probe): every block a process receives or
 * forwards is count x type of the receive side (the forms
 * iso__datatype_possible admits), so a message of n entries has n int64 of
 * header and n blocks of that size (MPI_Pack writes a block's type size on
 * the homogeneous systems MPICH and Open MPI run on, which delivery already
 * assumes: message.c, piece_to). */
static int known_recv_sizes(iso_sreq *r, const iso_args *a)
{
    const iso_sched *s = r->sched;
    MPI_Count size;
    size_t block;
    int err = MPI_Type_size_x(a->recv.type, &size);
    if (err != MPI_SUCCESS)
        return err;
    block = (size_t)size * (size_t)(a->recv.count > 0 ? a->recv.count : 0);
    if ((r->recv_size = malloc(sizeof *r->recv_size * ((size_t)s->nmsgs + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int m = 0; m < s->nmsgs; m++)
        r->recv_size[m] = (size_t)s->msgs[m].n * (sizeof(int64_t) + block);
    return MPI_SUCCESS;
}

int iso__sched_request(iso_priv *priv, MPI_Comm comm, iso_sched *sched, const iso_args *a,
                       int nsend, int nrecv, int retain_args, int persistent, iso_msg_mode mode,
                       const char *algorithm,
                       struct iso_request_s **out)
{
    iso_sreq *r;
    int err = pack_limit(sched, a, mode), nm = sched->nmsgs;
    *out = NULL;
    if (err != MPI_SUCCESS)
        return err;
    if ((r = calloc(1, sizeof *r)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->req, &iso__sched_kind, comm, persistent);
    r->sched = sched;
    sched->refs++;
    r->priv = priv;
    priv->refs++;
    r->args = *a;
    r->datatype = mode == ISO_MODE_DATATYPE;
    r->algorithm = algorithm;
    r->packed_last = -1;
    r->reqs = malloc(sizeof(MPI_Request) * (size_t)(sched->max_comm + 1));
    r->stats = malloc(sizeof(MPI_Status) * (size_t)(sched->max_comm + 1));
    r->reqop = malloc(sizeof(int) * (size_t)(sched->max_comm + 1));
    r->got = malloc(sizeof(MPI_Count) * (size_t)(sched->max_comm + 1));
    r->pending = malloc(sizeof(int) * 2 * (size_t)(sched->max_comm + 1));
    r->scratch_mem = malloc(sched->scratch_bytes + 1);
    if (sched->spare_buf) { /* buffers of the previous request */
        r->msgbuf = sched->spare_buf;
        r->msgcap = sched->spare_cap;
        sched->spare_buf = NULL;
        sched->spare_cap = NULL;
    } else {
        r->msgbuf = calloc((size_t)nm + 1, sizeof *r->msgbuf);
        r->msgcap = calloc((size_t)nm + 1, sizeof *r->msgcap);
    }
    r->msglen = calloc((size_t)nm + 1, sizeof *r->msglen);
    r->msgfwd = calloc((size_t)nm + 1, sizeof *r->msgfwd);
    r->entry_off = malloc(sizeof *r->entry_off * ((size_t)sched->npieces + 1));
    r->staged = malloc(sizeof *r->staged * ((size_t)sched->npieces + 1));
    if (!r->reqs || !r->stats || !r->reqop || !r->got || !r->pending || !r->scratch_mem ||
        !r->msgbuf || !r->msgcap || !r->msglen || !r->msgfwd || !r->entry_off || !r->staged)
        err = iso__error(ISO_ERR_NOMEM);
    if (!err)
        err = iso__stage_plan(r);
    if (!err && retain_args)
        err = iso__args_retain(r, nsend, nrecv);
    if (!err && (sched->nacc > 0 || r->datatype))
        err = iso__vectors_alloc(r);
    r->buf[ISO_BUF_SEND] = (void *)(uintptr_t)a->sendbuf;
    r->buf[ISO_BUF_RECV] = a->recvbuf;
    r->buf[ISO_BUF_SCRATCH] = r->scratch_mem;
    if (!err && !r->datatype && nm > 0 && iso__datatype_possible(a))
        err = known_recv_sizes(r, a);
    if (!err && !r->datatype && nm > 0)
        err = iso__raw_types_find(r);
    if (!err && r->datatype)
        err = iso__msgtypes_build(r);
    if (err) {
        iso__sched_kind.destroy(&r->req);
        return err;
    }
    r->tagbase = iso__tags_reserve(priv, sched->ntags);
    *out = &r->req;
    return MPI_SUCCESS;
}

/* The blocking-call cache (coll/callcache.c) runs a finished request again
 * for a call with the same block layout: this call's buffers and argument
 * arrays, and tags of its own (every process reserves tags for every call,
 * whether its request is new or reused, so that the counters stay in
 * step).  Datatype mode's message types hold absolute addresses: rebuilt
 * only if a buffer moved. */
int iso__sched_request_rebind(struct iso_request_s *req, const iso_args *a)
{
    iso_sreq *r = (iso_sreq *)req;
    int moved = r->buf[ISO_BUF_SEND] != (void *)(uintptr_t)a->sendbuf ||
                r->buf[ISO_BUF_RECV] != a->recvbuf;
    int err = MPI_SUCCESS;
    if (req->kind != &iso__sched_kind || r->args_mem != NULL)
        return iso__error(ISO_ERR_INTERN);
    r->args = *a;
    r->buf[ISO_BUF_SEND] = (void *)(uintptr_t)a->sendbuf;
    r->buf[ISO_BUF_RECV] = a->recvbuf;
    if (r->datatype && moved) {
        iso__msgtypes_free(r);
        err = iso__msgtypes_build(r);
    }
    r->tagbase = iso__tags_reserve(r->priv, r->sched->ntags);
    return err;
}

/* A blocking request kept by the call cache keeps what a cached schedule
 * would keep of its buffers (the same bounds); one replaced by another
 * frees them rather than leaving them with the schedule. */
size_t iso__sched_request_park(struct iso_request_s *req)
{
    return req->kind == &iso__sched_kind ? iso__msgbufs_trim((iso_sreq *)req) : 0;
}

void iso__sched_request_drop(struct iso_request_s *req)
{
    if (req->kind == &iso__sched_kind)
        ((iso_sreq *)req)->no_spare = 1;
    iso__request_destroy(req);
}

int iso__sched_request_reserve(struct iso_request_s *req, const size_t bytes[])
{
    iso_sreq *r = (iso_sreq *)req;
    int err;
    if (req->kind != &iso__sched_kind || r->datatype)
        return iso__error(ISO_ERR_INTERN);
    err = iso__arena_reserve(r, bytes);
    /* the sizes of its incoming messages are known too: no probe */
    if (!err && r->recv_size == NULL &&
        (r->recv_size = malloc(sizeof *r->recv_size * ((size_t)r->sched->nmsgs + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int m = 0; m < r->sched->nmsgs && !err; m++)
        r->recv_size[m] = bytes[m];
    return err;
}
