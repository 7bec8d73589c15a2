/* The one executor (DESIGN.md, "Schedules"): a schedule request runs its
 * rounds in order.  Per round, stage by stage (iso__op_stage): pack the
 * outgoing messages, post every send and receive, complete them (probing
 * for packed messages of unknown size), then run the local ops (deliveries,
 * accumulations, reductions); then the next round.  Also what a request
 * reports of its runs (describe, rounds); making and binding the request
 * is request_bind.c's. */
#include "sched/exec.h"
#include <stdlib.h>

static void *addr(const iso_sreq *r, const iso_loc *l)
{
    return (char *)r->buf[l->buf] + l->disp;
}

static int round_first(const iso_sched *s, int round)
{
    return round ? s->round_end[round - 1] : 0;
}

/* Records the first error of this execution.  From then on the request
 * only keeps its peers going: it still posts every later round, sends
 * empty messages in place of combined ones and runs no local ops, so no
 * process waits for a message that never comes (DESIGN.md, "Errors inside
 * an operation"). */
static void fail(iso_sreq *r, int err)
{
    if (err != MPI_SUCCESS && r->fail == MPI_SUCCESS)
        r->fail = err;
}

int iso__stage_plan(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    int nslices = 3 * s->nrounds, *at;
    r->stage_ops = malloc(sizeof(int) * ((size_t)s->nops + 1));
    r->stage_at = at = calloc((size_t)nslices + 1, sizeof(int));
    if (r->stage_ops == NULL || at == NULL)
        return iso__error(ISO_ERR_NOMEM);
    /* a counting sort by (round, stage), stable: schedule order within */
    for (int round = 0; round < s->nrounds; round++)
        for (int k = round_first(s, round); k < s->round_end[round]; k++)
            at[3 * round + (int)iso__op_stage(s->ops[k].kind) + 1]++;
    for (int i = 0; i < nslices; i++)
        at[i + 1] += at[i];
    for (int round = 0; round < s->nrounds; round++)
        for (int k = round_first(s, round); k < s->round_end[round]; k++)
            r->stage_ops[at[3 * round + (int)iso__op_stage(s->ops[k].kind)]++] = k;
    for (int i = nslices; i > 0; i--) /* each start moved to the next slice's: back */
        at[i] = at[i - 1];
    at[0] = 0;
    return MPI_SUCCESS;
}

/* The ops of stage g of the request's current round: stage_ops[*from .. *to). */
static void stage_slice(const iso_sreq *r, iso_stage g, int *from, int *to)
{
    *from = r->stage_at[3 * r->round + (int)g];
    *to = r->stage_at[3 * r->round + (int)g + 1];
}

/* Posts the round's communication.  Returns an error only if MPI refused to
 * post (the execution cannot go on); errors of packing are recorded. */
static int post_round(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    MPI_Comm comm = r->priv->comm;
    int from, to, err = MPI_SUCCESS;
    r->nreqs = 0;
    r->npending = 0;
    stage_slice(r, ISO_STAGE_PACK, &from, &to);
    for (int i = from; i < to && !r->datatype; i++)
        if (r->fail == MPI_SUCCESS)
            fail(r, iso__pack_message(r, s->ops[r->stage_ops[i]].msg));
    stage_slice(r, ISO_STAGE_COMM, &from, &to);
    for (int i = from; i < to && !err; i++) {
        int k = r->stage_ops[i];
        const iso_op *op = &s->ops[k];
        int tag = r->tagbase + op->tag, slot = r->nreqs;
        r->reqop[slot] = k;
        r->got[slot] = -1;
        r->nreqs++;
        switch (op->kind) {
        case ISO_OP_SEND:
            err = MPI_Isend(addr(r, &op->a), op->a.count, op->a.type, op->peer, tag, comm,
                            &r->reqs[slot]);
            break;
        case ISO_OP_RECV:
            err = MPI_Irecv(addr(r, &op->a), op->a.count, op->a.type, op->peer, tag, comm,
                            &r->reqs[slot]);
            break;
        case ISO_OP_SEND_MSG:
            if (r->fail != MPI_SUCCESS) /* empty: "the sender's part failed" */
                err = MPI_Isend(MPI_BOTTOM, 0, MPI_BYTE, op->peer, tag, comm, &r->reqs[slot]);
            else if (r->datatype)
                err = MPI_Isend(MPI_BOTTOM, 1, r->msgtype[op->msg], op->peer, tag, comm,
                                &r->reqs[slot]);
            else {
                err = MPI_Isend(r->msgbuf[op->msg], (int)r->msglen[op->msg], MPI_PACKED,
                                op->peer, tag, comm, &r->reqs[slot]);
                r->packed_bytes += (long long)r->msglen[op->msg];
            }
            break;
        default: /* ISO_OP_RECV_MSG */
            r->reqs[slot] = MPI_REQUEST_NULL;
            if (r->datatype) {
                err = MPI_Irecv(MPI_BOTTOM, 1, r->msgtype[op->msg], op->peer, tag, comm,
                                &r->reqs[slot]);
                break;
            }
            if (r->recv_size) { /* its size is known: no probe */
                size_t bytes = r->recv_size[op->msg];
                if ((err = iso__msgbuf_reserve(r, op->msg, bytes)) == MPI_SUCCESS)
                    err = MPI_Irecv(r->msgbuf[op->msg], (int)bytes, MPI_PACKED, op->peer, tag,
                                    comm, &r->reqs[slot]);
                break;
            }
            /* packed: size unknown, matched by probe in progress() */
            r->pending[2 * r->npending] = k;
            r->pending[2 * r->npending + 1] = slot;
            r->npending++;
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
        if ((*err = MPI_Get_count(&status, MPI_PACKED, &count)) == MPI_SUCCESS && count < 0)
            *err = iso__error(ISO_ERR_COUNT); /* over 2 GiB: no sender makes one */
        if (*err || (*err = iso__msgbuf_reserve(r, op->msg, (size_t)count)) != MPI_SUCCESS)
            return 0;
        if ((*err = MPI_Imrecv(r->msgbuf[op->msg], count, MPI_PACKED, &message, &r->reqs[slot])))
            return 0;
        r->npending--;
    }
    return 1;
}

/* Completes the round's requests (block: waits).  *done once all have
 * completed.  Errors of single requests (MPI_ERR_IN_STATUS) are recorded
 * from their statuses; only an error of the call itself is returned. */
static int complete_comm(iso_sreq *r, int block, int *done)
{
    int err, flag = 1, in_status;
    *done = 1;
    if (r->nreqs == 0)
        return MPI_SUCCESS;
    err = block ? MPI_Waitall(r->nreqs, r->reqs, r->stats)
                : MPI_Testall(r->nreqs, r->reqs, &flag, r->stats);
    in_status = err == MPI_ERR_IN_STATUS;
    if (err != MPI_SUCCESS && !in_status)
        return err;
    if (!flag && !in_status) {
        *done = 0;
        return MPI_SUCCESS;
    }
    /* the statuses matter for errors and for the sizes of combined
     * messages; a round of plain sends and receives that succeeded has
     * nothing to read there */
    if (!in_status && (r->sched->nmsgs == 0 || !(r->datatype || r->recv_size)))
        return MPI_SUCCESS;
    for (int k = 0; k < r->nreqs; k++) {
        const MPI_Status *st = &r->stats[k];
        if (in_status && st->MPI_ERROR == MPI_ERR_PENDING) {
            *done = 0;
            continue;
        }
        if (in_status && st->MPI_ERROR != MPI_SUCCESS)
            fail(r, st->MPI_ERROR);
        /* bytes of a message received without a probe (an empty status has
         * MPI_ANY_TAG) */
        if ((r->datatype || r->recv_size) && r->got[k] < 0 && st->MPI_TAG != MPI_ANY_TAG &&
            r->sched->ops[r->reqop[k]].kind == ISO_OP_RECV_MSG &&
            (err = MPI_Get_elements_x(st, MPI_BYTE, &r->got[k])) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

/* Did every combined message of the round arrive whole?  An empty one
 * says that its sender's part failed (MPI_ERR_OTHER here); in datatype mode
 * a message shorter than its type means that the processes disagree on a
 * block size (ISO_ERR_COUNT; a longer one is MPI's truncation error). */
static void check_messages(iso_sreq *r)
{
    if (r->sched->nmsgs == 0)
        return;
    for (int k = 0; k < r->nreqs; k++) {
        const iso_op *op = &r->sched->ops[r->reqop[k]];
        MPI_Count want = 0;
        if (op->kind != ISO_OP_RECV_MSG)
            continue;
        if (!r->datatype) {
            if (r->recv_size) /* as much as arrived (none if it failed) */
                r->msglen[op->msg] = r->got[k] > 0 ? (size_t)r->got[k] : 0;
            if (r->msglen[op->msg] == 0)
                fail(r, MPI_ERR_OTHER);
            else
                fail(r, iso__msg_index(r, op->msg));
            continue;
        }
        if (MPI_Type_size_x(r->msgtype[op->msg], &want) != MPI_SUCCESS || r->got[k] < 0)
            continue;
        if (r->got[k] == 0 && want > 0)
            fail(r, MPI_ERR_OTHER);
        else if (r->got[k] != want)
            fail(r, iso__error(ISO_ERR_COUNT));
    }
}

/* A failed delivery is this process's own: a DELIVER writes only into the
 * receive buffer, which no later op reads, so the request goes on packing
 * and forwarding (vpt delivers stage by stage, while it still forwards
 * others' submessages) and reports the error when it completes. */
static void deliver_failed(iso_sreq *r, int err)
{
    if (err != MPI_SUCCESS && r->deliver_fail == MPI_SUCCESS)
        r->deliver_fail = err;
}

static int finish_round(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    int err = MPI_SUCCESS, from, to;
    if (s->nlocal == 0) /* direct's exchanges: nothing to deliver or reduce */
        return MPI_SUCCESS;
    stage_slice(r, ISO_STAGE_LOCAL, &from, &to);
    for (int i = from; i < to && !err; i++) {
        const iso_op *op = &s->ops[r->stage_ops[i]];
        if (op->kind == ISO_OP_REDUCE)
            err = MPI_Reduce_local(addr(r, &op->a), addr(r, &op->b), op->b.count, op->b.type,
                                   op->op);
        else if (op->kind == ISO_OP_DELIVER) {
            if (!iso__deliver_in_place(r, op)) /* datatype mode: received in its slot */
                deliver_failed(r, iso__deliver(r, op));
        } else if (op->kind == ISO_OP_ACC)
            err = iso__deliver(r, op);
    }
    return err != MPI_SUCCESS || r->round < s->nrounds - 1 ? err : r->deliver_fail;
}

static void complete(iso_sreq *r, int err)
{
    r->nreqs = 0;
    r->npending = 0;
    iso__request_complete(&r->req, err);
}

/* Round 0 is posted once the private communicator is usable (it may still
 * be being duplicated: a nonblocking call never waits for other processes). */
static int post_first(iso_sreq *r, int block)
{
    int ready, err = iso__priv_ready(r->priv, block, &ready);
    if (err != MPI_SUCCESS || !ready)
        return err;
    r->posted = 1;
    return post_round(r);
}

/* Advances the request as far as possible; with block, until it completes. */
static void progress(struct iso_request_s *req, int block)
{
    iso_sreq *r = (iso_sreq *)req;
    int err = MPI_SUCCESS, done;
    if (!r->posted && ((err = post_first(r, block)) != MPI_SUCCESS || !r->posted))
        goto fn_exit;
    while (r->req.active) {
        if (!match_pending(r, block, &err) || (err = complete_comm(r, block, &done)))
            break;
        if (!done) {
            if (block)
                continue;
            break;
        }
        check_messages(r);
        if (r->fail == MPI_SUCCESS)
            fail(r, finish_round(r));
        if (++r->round == r->sched->nrounds) {
            r->packed_last = r->packed_bytes;
            complete(r, r->fail);
            return;
        }
        if ((err = post_round(r)) != MPI_SUCCESS)
            break;
    }
fn_exit:
    if (err != MPI_SUCCESS) { /* MPI refused: nothing more can be posted */
        fail(r, err);
        complete(r, r->fail);
    }
}

static int start(struct iso_request_s *req)
{
    iso_sreq *r = (iso_sreq *)req;
    r->round = 0;
    r->posted = 0;
    r->fail = MPI_SUCCESS;
    r->deliver_fail = MPI_SUCCESS;
    r->packed_bytes = 0;
    if (r->sched->nrounds == 0) {
        r->packed_last = 0;
        complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    return post_first(r, 0);
}

static void destroy(struct iso_request_s *req)
{
    iso_sreq *r = (iso_sreq *)req;
    iso__args_release(r);
    iso__msgtypes_free(r);
    iso__vectors_free(r);
    iso__msgbufs_free(r);
    free(r->reqs);
    free(r->stats);
    free(r->reqop);
    free(r->got);
    free(r->pending);
    free(r->stage_ops);
    free(r->stage_at);
    free(r->recv_size);
    free(r->scratch_mem);
    iso__sched_release(r->sched);
    iso__priv_release(r->priv);
    free(r);
}

const iso_request_kind iso__sched_kind = {start, progress, destroy};

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
    if (req->kind != &iso__sched_kind)
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


int iso__sched_request_rounds(const struct iso_request_s *req, int maxrounds, int *nrounds,
                              int messages[], long long bytes[], long long *forwarded,
                              long long *buffer_bytes)
{
    const iso_sreq *r = (const iso_sreq *)req;
    const iso_sched *s = r->sched;
    int ran = r->packed_last >= 0;
    if (req->kind != &iso__sched_kind)
        return iso__error_msg(ISO_ERR_REQUEST, "not a request of a neighborhood collective");
    *nrounds = s->nrounds;
    *forwarded = ran ? 0 : -1;
    *buffer_bytes = (long long)r->arena_bytes;
    for (int m = 0; m < s->nmsgs && r->arena == NULL; m++)
        *buffer_bytes += (long long)r->msgcap[m];
    for (int round = 0; round < s->nrounds; round++) {
        int nm = 0;
        long long b = 0;
        for (int k = round_first(s, round); k < s->round_end[round]; k++) {
            const iso_op *op = &s->ops[k];
            if (op->kind != ISO_OP_SEND && op->kind != ISO_OP_SEND_MSG)
                continue;
            nm++;
            if (op->kind == ISO_OP_SEND_MSG && !r->datatype) {
                b += (long long)r->msglen[op->msg];
                if (ran) /* entries of incoming messages sent on */
                    *forwarded += (long long)r->msgfwd[op->msg];
            }
        }
        if (round < maxrounds) {
            messages[round] = nm;
            bytes[round] = ran ? b : -1;
        }
    }
    return MPI_SUCCESS;
}

int iso__sched_request_overhead(const struct iso_request_s *req, int *overhead)
{
    const iso_sreq *r = (const iso_sreq *)req;
    if (req->kind != &iso__sched_kind)
        return iso__error_msg(ISO_ERR_REQUEST, "not a request of a neighborhood collective");
    *overhead = r->sched->overhead_msgs;
    return MPI_SUCCESS;
}
