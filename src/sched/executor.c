/* The one executor (DESIGN.md, "Schedules"): a schedule request runs its
 * rounds in order.  Per round, stage by stage (iso__op_stage): pack the
 * outgoing messages, post every send and receive, complete them (probing
 * for packed messages of unknown size), then run the local ops (deliveries,
 * accumulations, reductions); then the next round. */
#include "sched/exec.h"
#include <stdint.h>
#include <stdlib.h>

static void *addr(const iso_sreq *r, const iso_loc *l)
{
    return (char *)r->buf[l->buf] + l->disp;
}

static int round_first(const iso_sched *s, int round)
{
    return round ? s->round_end[round - 1] : 0;
}

static int post_round(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    MPI_Comm comm = r->priv->comm;
    int first = round_first(s, r->round), end = s->round_end[r->round], err = MPI_SUCCESS;
    r->nreqs = 0;
    r->npending = 0;
    for (int k = first; k < end && !err && !r->datatype && s->nmsgs > 0; k++)
        if (iso__op_stage(s->ops[k].kind) == ISO_STAGE_PACK)
            err = iso__pack_message(r, s->ops[k].msg);
    for (int k = first; k < end && !err; k++) {
        const iso_op *op = &s->ops[k];
        int tag = r->tagbase + op->tag;
        switch (op->kind) {
        case ISO_OP_SEND:
            err = MPI_Isend(addr(r, &op->a), op->a.count, op->a.type, op->peer, tag, comm,
                            &r->reqs[r->nreqs++]);
            break;
        case ISO_OP_RECV:
            err = MPI_Irecv(addr(r, &op->a), op->a.count, op->a.type, op->peer, tag, comm,
                            &r->reqs[r->nreqs++]);
            break;
        case ISO_OP_SEND_MSG:
            if (r->datatype)
                err = MPI_Isend(MPI_BOTTOM, 1, r->msgtype[op->msg], op->peer, tag, comm,
                                &r->reqs[r->nreqs++]);
            else {
                err = MPI_Isend(r->msgbuf[op->msg], (int)r->msglen[op->msg], MPI_PACKED,
                                op->peer, tag, comm, &r->reqs[r->nreqs++]);
                r->packed_bytes += (long long)r->msglen[op->msg];
            }
            break;
        case ISO_OP_RECV_MSG:
            if (r->datatype) {
                err = MPI_Irecv(MPI_BOTTOM, 1, r->msgtype[op->msg], op->peer, tag, comm,
                                &r->reqs[r->nreqs++]);
                break;
            }
            /* packed: size unknown, matched by probe in progress() */
            r->pending[2 * r->npending] = k;
            r->pending[2 * r->npending + 1] = r->nreqs;
            r->npending++;
            r->reqs[r->nreqs++] = MPI_REQUEST_NULL;
            break;
        default:
            break;
        }
    }
    return err;
}

/* Matches the round's receives of unknown size; returns 1 when all are. */
static int match_pending(iso_sreq *r, int block, int *err)
{
    while (r->npending > 0) {
        int k = r->pending[2 * (r->npending - 1)], slot = r->pending[2 * r->npending - 1];
        const iso_op *op = &r->sched->ops[k];
        MPI_Comm comm = r->priv->comm;
        MPI_Message message;
        MPI_Status status;
        int flag = 1, count;
        if (block)
            *err = MPI_Mprobe(op->peer, r->tagbase + op->tag, comm, &message, &status);
        else
            *err = MPI_Improbe(op->peer, r->tagbase + op->tag, comm, &flag, &message, &status);
        if (*err || !flag)
            return 0;
        if ((*err = MPI_Get_count(&status, MPI_PACKED, &count)) != MPI_SUCCESS ||
            (*err = iso__msgbuf_reserve(r, op->msg, (size_t)count)) != MPI_SUCCESS)
            return 0;
        if ((*err = MPI_Imrecv(r->msgbuf[op->msg], count, MPI_PACKED, &message, &r->reqs[slot])))
            return 0;
        r->npending--;
    }
    return 1;
}

static int finish_round(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    int err = MPI_SUCCESS;
    for (int k = round_first(s, r->round); k < s->round_end[r->round] && !err; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind == ISO_OP_REDUCE)
            err = MPI_Reduce_local(addr(r, &op->a), addr(r, &op->b), op->b.count, op->b.type,
                                   op->op);
        else if (op->kind == ISO_OP_DELIVER || op->kind == ISO_OP_ACC)
            err = iso__deliver(r, op);
    }
    return err;
}

static void complete(iso_sreq *r, int err)
{
    r->nreqs = 0;
    r->npending = 0;
    iso__request_complete(&r->req, err);
}

/* Advances the request as far as possible; with block, until it completes. */
static void progress(struct iso_request_s *req, int block)
{
    iso_sreq *r = (iso_sreq *)req;
    int err = MPI_SUCCESS, flag = 1;
    while (r->req.active) {
        if (!match_pending(r, block, &err))
            break;
        if (r->nreqs) {
/* MPICH's access attributes make gcc flag MPI_STATUSES_IGNORE (NULL). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
            err = block ? MPI_Waitall(r->nreqs, r->reqs, MPI_STATUSES_IGNORE)
                        : MPI_Testall(r->nreqs, r->reqs, &flag, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
            if (err != MPI_SUCCESS || !flag)
                break;
        }
        if ((err = finish_round(r)) != MPI_SUCCESS)
            break;
        if (++r->round == r->sched->nrounds) {
            r->packed_last = r->packed_bytes;
            complete(r, MPI_SUCCESS);
            return;
        }
        if ((err = post_round(r)) != MPI_SUCCESS)
            break;
    }
    if (err != MPI_SUCCESS)
        complete(r, err);
}

static int start(struct iso_request_s *req)
{
    iso_sreq *r = (iso_sreq *)req;
    int err;
    r->round = 0;
    r->packed_bytes = 0;
    if (r->sched->nrounds == 0) {
        r->packed_last = 0;
        complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if ((err = post_round(r)) != MPI_SUCCESS)
        complete(r, err);
    return err;
}

static void destroy(struct iso_request_s *req)
{
    iso_sreq *r = (iso_sreq *)req;
    iso__args_release(r);
    iso__msgtypes_free(r);
    iso__vectors_free(r);
    iso__msgbufs_free(r);
    free(r->reqs);
    free(r->pending);
    free(r->scratch_mem);
    iso__sched_release(r->sched);
    iso__priv_release(r->priv);
    free(r);
}

static const iso_request_kind sched_kind = {start, progress, destroy};

/* Bytes of the SEND ops and (datatype mode) of the combined messages: their
 * sizes are fixed when the request is made (computed when asked for, so
 * calls nobody asks about do not pay for it). */
static int fixed_bytes(const iso_sreq *r, long long *bytes)
{
    const iso_sched *s = r->sched;
    MPI_Count size;
    int err;
    *bytes = 0;
    for (int k = 0; k < s->nops; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind == ISO_OP_SEND) {
            if ((err = MPI_Type_size_x(op->a.type, &size)) != MPI_SUCCESS)
                return err;
            *bytes += (long long)size * op->a.count;
        } else if (op->kind == ISO_OP_SEND_MSG && r->datatype) {
            if ((err = MPI_Type_size_x(r->msgtype[op->msg], &size)) != MPI_SUCCESS)
                return err;
            *bytes += (long long)size;
        }
    }
    return MPI_SUCCESS;
}

int iso__sched_request_describe(const struct iso_request_s *req, const char **algorithm,
                                const char **mode, int *rounds, int *messages, long long *bytes)
{
    const iso_sreq *r = (const iso_sreq *)req;
    long long hops;
    int combined = 0;
    if (req->kind != &sched_kind)
        return iso__error_msg(ISO_ERR_REQUEST, "not a request of a neighborhood collective");
    for (int k = 0; k < r->sched->nops && !combined; k++)
        combined = r->sched->ops[k].kind == ISO_OP_SEND_MSG ||
                   r->sched->ops[k].kind == ISO_OP_RECV_MSG;
    *algorithm = r->algorithm;
    *mode = !combined ? "none" : r->datatype ? "datatype" : "pack";
    iso__sched_stats(r->sched, rounds, messages, &hops);
    *bytes = -1;
    if (r->packed_last >= 0) {
        int err = fixed_bytes(r, bytes);
        *bytes += r->packed_last;
        return err;
    }
    return MPI_SUCCESS;
}

int iso__sched_request(iso_priv *priv, MPI_Comm comm, iso_sched *sched, const iso_args *a, int s,
                       int retain_args, int persistent, iso_msg_mode mode, const char *algorithm,
                       struct iso_request_s **out)
{
    iso_sreq *r = calloc(1, sizeof *r);
    int err = MPI_SUCCESS, nm = sched->nmsgs;
    *out = NULL;
    if (r == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->req, &sched_kind, comm, persistent);
    r->sched = sched;
    sched->refs++;
    r->priv = priv;
    priv->refs++;
    r->args = *a;
    r->datatype = mode == ISO_MODE_DATATYPE;
    r->algorithm = algorithm;
    r->packed_last = -1;
    r->reqs = malloc(sizeof(MPI_Request) * (size_t)(sched->max_comm + 1));
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
    if (!r->reqs || !r->pending || !r->scratch_mem || !r->msgbuf || !r->msgcap || !r->msglen)
        err = iso__error(ISO_ERR_NOMEM);
    if (!err && retain_args)
        err = iso__args_retain(r, s);
    if (!err && (sched->nacc > 0 || r->datatype))
        err = iso__vectors_alloc(r);
    r->buf[ISO_BUF_SEND] = (void *)(uintptr_t)a->sendbuf;
    r->buf[ISO_BUF_RECV] = a->recvbuf;
    r->buf[ISO_BUF_SCRATCH] = r->scratch_mem;
    if (!err && r->datatype)
        err = iso__msgtypes_build(r);
    if (err) {
        destroy(&r->req);
        return err;
    }
    r->tagbase = iso__tags_reserve(priv, sched->ntags);
    *out = &r->req;
    return MPI_SUCCESS;
}
