/* The one executor: pack a round's outgoing messages, post its sends and
 * receives, complete them, run its local copies, deliveries and reductions,
 * go on with the next round.  Blocking calls are start + wait, nonblocking
 * calls start + test/wait, persistent calls bind once and start many times.
 * Every wait or test progresses all active requests, so operations
 * completed in different orders on different processes cannot deadlock. */
#include "iso_internal.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct iso_request_s *active_head;

static void list_add(struct iso_request_s *r)
{
    r->prev = NULL;
    r->next = active_head;
    if (active_head)
        active_head->prev = r;
    active_head = r;
}

static void list_remove(struct iso_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (active_head == r)
        active_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void *addr(const struct iso_request_s *r, const iso_loc *l)
{
    return (char *)r->base[l->buf] + l->disp;
}

static int ensure(void **buf, size_t *cap, size_t n)
{
    void *p;
    if (n <= *cap)
        return MPI_SUCCESS;
    if ((p = realloc(*buf, n)) == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    *buf = p;
    *cap = n;
    return MPI_SUCCESS;
}

/* Copies count x type between two places whose type signatures match. */
static int local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                      MPI_Datatype dtype)
{
    int size, pos = 0, err;
    MPI_Aint lb, extent, tlb, textent;
    void *tmp;
    if (stype == dtype && scount == dcount && MPI_Type_size(stype, &size) == MPI_SUCCESS &&
        MPI_Type_get_true_extent(stype, &tlb, &textent) == MPI_SUCCESS &&
        MPI_Type_get_extent(stype, &lb, &extent) == MPI_SUCCESS && tlb == 0 && textent == size &&
        extent == size) { /* contiguous: one memmove */
        memmove(dst, src, (size_t)size * (size_t)scount);
        return MPI_SUCCESS;
    }
    if ((err = MPI_Pack_size(scount, stype, MPI_COMM_SELF, &size)) != MPI_SUCCESS)
        return err;
    if ((tmp = malloc((size_t)size + 1)) == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    err = MPI_Pack(src, scount, stype, tmp, size, &pos, MPI_COMM_SELF);
    if (err == MPI_SUCCESS) {
        pos = 0;
        err = MPI_Unpack(tmp, size, &pos, dst, dcount, dtype, MPI_COMM_SELF);
    }
    free(tmp);
    return err;
}

/* ---- packed messages ------------------------------------------------------ */
/* Layout: n int64 byte sizes, then the n blocks as MPI_Pack wrote them. */

static int block_bytes(int count, MPI_Datatype type, size_t *bytes)
{
    int size, err = MPI_Type_size(type, &size);
    *bytes = (size_t)size * (size_t)(count > 0 ? count : 0);
    return err;
}

/* Pointer to and size of entry k of message m. */
static int entry_at(const struct iso_request_s *r, int m, int k, char **ptr, size_t *size)
{
    int n = r->sched->msgs[m].n;
    const int64_t *hdr = r->msgbuf[m];
    size_t off = (size_t)n * sizeof(int64_t);
    if (r->msglen[m] < off || k >= n)
        return iso__errclass(ISO_ERR_INTERN);
    for (int j = 0; j < k; j++)
        off += (size_t)hdr[j];
    *size = (size_t)hdr[k];
    if (off + *size > r->msglen[m])
        return iso__errclass(ISO_ERR_INTERN);
    *ptr = (char *)r->msgbuf[m] + off;
    return MPI_SUCCESS;
}

/* Where a piece's data is: address, count, type. */
typedef struct {
    char *p;
    int count;
    MPI_Datatype type;
} place_t;

/* An accumulator or scratch vector: count x datatype of the receive side. */
static place_t vector_place(const struct iso_request_s *r, char *mem)
{
    return (place_t){mem + r->acc_shift, r->args.recv.count, r->args.recv.type};
}

/* The place of piece pc: a user send block, an accumulator, or (datatype
 * mode) the place an entry of an incoming message was received into.
 * Entries of packed messages have no place of their own (entry_at). */
static place_t place_of(const struct iso_request_s *r, iso_piece pc)
{
    iso_loc l;
    if (pc.msg >= 0)
        pc = r->sched->pieces[r->sched->msgs[pc.msg].first + pc.index];
    switch (pc.msg) {
    case ISO_PIECE_ACC:
        return vector_place(r, r->acc[pc.index]);
    case ISO_PIECE_VEC:
        return vector_place(r, r->vec + (size_t)pc.index * r->vec_stride);
    case ISO_PIECE_SLOT:
        l = iso__block(&r->args.recv, ISO_BUF_RECV, pc.index);
        break;
    default:
        l = iso__block(&r->args.send, ISO_BUF_SEND, pc.index);
        break;
    }
    return (place_t){addr(r, &l), l.count, l.type};
}

/* Does piece pc have a place (rather than bytes in a packed message)? */
static int has_place(const struct iso_request_s *r, iso_piece pc)
{
    return pc.msg < 0 || r->datatype;
}

static int pack_message(struct iso_request_s *r, int m)
{
    const iso_msg *msg = &r->sched->msgs[m];
    const iso_piece *pc = r->sched->pieces + msg->first;
    size_t total = (size_t)msg->n * sizeof(int64_t), sz;
    int64_t *hdr;
    char *src;
    int err = MPI_SUCCESS;

    for (int k = 0; k < msg->n && !err; k++) {
        if (pc[k].msg < 0) {
            place_t q = place_of(r, pc[k]);
            err = block_bytes(q.count, q.type, &sz);
        } else {
            err = entry_at(r, pc[k].msg, pc[k].index, &src, &sz);
        }
        total += sz;
    }
    if (err || (err = ensure(&r->msgbuf[m], &r->msgcap[m], total + 1)))
        return err;
    hdr = r->msgbuf[m];
    r->msglen[m] = total;
    {
        int pos = msg->n * (int)sizeof(int64_t);
        for (int k = 0; k < msg->n && !err; k++) {
            if (pc[k].msg < 0) {
                place_t q = place_of(r, pc[k]);
                int before = pos;
                err = MPI_Pack(q.p, q.count, q.type, r->msgbuf[m], (int)total, &pos,
                               r->state->priv);
                hdr[k] = pos - before;
            } else if ((err = entry_at(r, pc[k].msg, pc[k].index, &src, &sz)) == MPI_SUCCESS) {
                memcpy((char *)r->msgbuf[m] + pos, src, sz);
                hdr[k] = (int64_t)sz;
                pos += (int)sz;
            }
        }
        r->msglen[m] = (size_t)pos;
    }
    return err;
}

/* Moves a piece into count x type at p. */
static int piece_to(struct iso_request_s *r, iso_piece pc, void *p, int count, MPI_Datatype type)
{
    size_t want, sz;
    char *src;
    int pos = 0, err;
    if (has_place(r, pc)) {
        place_t q = place_of(r, pc);
        if (q.p == p && q.count == count && q.type == type)
            return MPI_SUCCESS; /* received in place */
        return local_copy(q.p, q.count, q.type, p, count, type);
    }
    if ((err = entry_at(r, pc.msg, pc.index, &src, &sz)) != MPI_SUCCESS ||
        (err = block_bytes(count, type, &want)) != MPI_SUCCESS)
        return err;
    if (sz != want) /* the sender's block does not match this slot */
        return iso__errclass(ISO_ERR_COUNT);
    return MPI_Unpack(src, (int)sz, &pos, p, count, type, r->state->priv);
}

/* Puts piece pc into count x type at p: a plain copy, or (combine) reduced
 * into what p holds with the request's op. */
static int combine_into(struct iso_request_s *r, iso_piece pc, void *p, int count,
                        MPI_Datatype type, int combine)
{
    MPI_Aint tlb, textent, lb, extent;
    size_t span;
    int err;
    if (!combine)
        return piece_to(r, pc, p, count, type);
    if (has_place(r, pc)) { /* a vector of the same type: reduce from where it is */
        place_t q = place_of(r, pc);
        if (q.count == count && q.type == type)
            return MPI_Reduce_local(q.p, p, count, type, r->args.op);
    }
    if ((err = MPI_Type_get_true_extent(type, &tlb, &textent)) != MPI_SUCCESS ||
        (err = MPI_Type_get_extent(type, &lb, &extent)) != MPI_SUCCESS)
        return err;
    span = count > 0 ? (size_t)((count - 1) * extent + textent) : 0;
    if ((err = ensure(&r->tmp, &r->tmpcap, span + 1)) != MPI_SUCCESS)
        return err;
    if ((err = piece_to(r, pc, (char *)r->tmp - tlb, count, type)) != MPI_SUCCESS)
        return err;
    return MPI_Reduce_local((char *)r->tmp - tlb, p, count, type, r->args.op);
}

/* DELIVER: into receive slot `slot`, or combined into the reduction vector;
 * ACC: combined into accumulator `slot`. */
static int deliver(struct iso_request_s *r, const iso_op *op)
{
    int reduction = r->args.coll == ISO_REDUCE || r->args.coll == ISO_SCATTER_REDUCE;
    iso_loc dst = iso__block(&r->args.recv, ISO_BUF_RECV, op->slot);
    void *p = op->kind == ISO_OP_ACC ? (char *)r->acc[op->slot] + r->acc_shift : addr(r, &dst);
    return combine_into(r, op->src, p, dst.count, dst.type, reduction && !op->first);
}

/* ---- rounds ---------------------------------------------------------------- */

static int round_first(const iso_sched *s, int round)
{
    return round ? s->round_end[round - 1] : 0;
}

static int post_round(struct iso_request_s *r)
{
    const iso_sched *s = r->sched;
    MPI_Comm comm = r->state->priv;
    int first = round_first(s, r->round), end = s->round_end[r->round], err = MPI_SUCCESS;
    r->nreqs = 0;
    r->npending = 0;
    for (int k = first; k < end && !err && !r->datatype; k++)
        if (s->ops[k].kind == ISO_OP_PACK)
            err = pack_message(r, s->ops[k].msg);
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
            else
                err = MPI_Isend(r->msgbuf[op->msg], (int)r->msglen[op->msg], MPI_PACKED,
                                op->peer, tag, comm, &r->reqs[r->nreqs++]);
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
static int match_pending(struct iso_request_s *r, int block, int *err)
{
    while (r->npending > 0) {
        int k = r->pending[2 * (r->npending - 1)], slot = r->pending[2 * r->npending - 1];
        const iso_op *op = &r->sched->ops[k];
        MPI_Message message;
        MPI_Status status;
        int flag = 1, count;
        if (block)
            *err = MPI_Mprobe(op->peer, r->tagbase + op->tag, r->state->priv, &message, &status);
        else
            *err = MPI_Improbe(op->peer, r->tagbase + op->tag, r->state->priv, &flag, &message,
                               &status);
        if (*err || !flag)
            return 0;
        if ((*err = MPI_Get_count(&status, MPI_PACKED, &count)) != MPI_SUCCESS ||
            (*err = ensure(&r->msgbuf[op->msg], &r->msgcap[op->msg], (size_t)count + 1)))
            return 0;
        r->msglen[op->msg] = (size_t)count;
        if ((*err = MPI_Imrecv(r->msgbuf[op->msg], count, MPI_PACKED, &message, &r->reqs[slot])))
            return 0;
        r->npending--;
    }
    return 1;
}

static int finish_round(struct iso_request_s *r)
{
    const iso_sched *s = r->sched;
    int err = MPI_SUCCESS;
    for (int k = round_first(s, r->round); k < s->round_end[r->round] && !err; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind == ISO_OP_COPY)
            err = local_copy(addr(r, &op->a), op->a.count, op->a.type, addr(r, &op->b),
                             op->b.count, op->b.type);
        else if (op->kind == ISO_OP_REDUCE)
            err = MPI_Reduce_local(addr(r, &op->a), addr(r, &op->b), op->b.count, op->b.type,
                                   op->op);
        else if (op->kind == ISO_OP_DELIVER || op->kind == ISO_OP_ACC)
            err = deliver(r, op);
    }
    return err;
}

static void complete(struct iso_request_s *r, int err)
{
    r->active = 0;
    r->err = err;
    r->nreqs = 0;
    r->npending = 0;
    list_remove(r);
}

/* Advances r as far as possible; with block, until it completes. */
static void progress(struct iso_request_s *r, int block)
{
    int err = MPI_SUCCESS, flag = 1;
    while (r->active) {
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
            complete(r, MPI_SUCCESS);
            return;
        }
        if ((err = post_round(r)) != MPI_SUCCESS)
            break;
    }
    if (err != MPI_SUCCESS)
        complete(r, err);
}

static void progress_all(void)
{
    for (struct iso_request_s *q = active_head, *next; q; q = next) {
        next = q->next;
        progress(q, 0);
    }
}

int iso__request_start(struct iso_request_s *r)
{
    r->round = 0;
    r->err = MPI_SUCCESS;
    r->active = 1;
    list_add(r);
    if (r->sched->nrounds == 0) {
        complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if ((r->err = post_round(r)) != MPI_SUCCESS)
        complete(r, r->err);
    return r->err;
}

int iso__request_wait(struct iso_request_s *r)
{
    while (r->active) {
        if (active_head == r && r->next == NULL)
            progress(r, 1); /* alone: let MPI block */
        else
            progress_all();
    }
    return r->err;
}

/* ---- creation: keeping the arguments alive ---------------------------------- */

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    return MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
           combiner == MPI_COMBINER_NAMED;
}

/* Our own duplicate of *t (derived types only), replacing *t. */
static int retain_type(struct iso_request_s *r, MPI_Datatype *t, int cap)
{
    int err;
    if (*t == MPI_DATATYPE_NULL || is_named(*t))
        return MPI_SUCCESS;
    for (int k = 0; k < r->narg_types; k++) /* already ours */
        if (r->arg_types[k] == *t)
            return MPI_SUCCESS;
    if (r->narg_types >= cap)
        return iso__errclass(ISO_ERR_INTERN);
    if ((err = MPI_Type_dup(*t, &r->arg_types[r->narg_types])) != MPI_SUCCESS)
        return err;
    *t = r->arg_types[r->narg_types++];
    return MPI_SUCCESS;
}

/* Copies the arrays of one side into mem (advancing it); dups its types. */
static int retain_side(struct iso_request_s *r, iso_side *sd, int s, char **mem, int cap)
{
    int err = MPI_SUCCESS;
    if (sd->layout == ISO_LAYOUT_V || sd->layout == ISO_LAYOUT_W) {
        int *c = (int *)*mem;
        memcpy(c, sd->counts, sizeof(int) * (size_t)s);
        sd->counts = c;
        *mem += sizeof(MPI_Aint) * (size_t)s; /* keeps alignment */
    }
    if (sd->layout == ISO_LAYOUT_V) {
        int *d = (int *)*mem;
        memcpy(d, sd->idispls, sizeof(int) * (size_t)s);
        sd->idispls = d;
        *mem += sizeof(MPI_Aint) * (size_t)s;
    }
    if (sd->layout == ISO_LAYOUT_W) {
        MPI_Aint *d = (MPI_Aint *)*mem;
        MPI_Datatype *t;
        memcpy(d, sd->adispls, sizeof(MPI_Aint) * (size_t)s);
        sd->adispls = d;
        *mem += sizeof(MPI_Aint) * (size_t)s;
        t = (MPI_Datatype *)*mem;
        memcpy(t, sd->types, sizeof(MPI_Datatype) * (size_t)s);
        sd->types = t;
        *mem += sizeof(MPI_Aint) * (size_t)((s * sizeof(MPI_Datatype) + sizeof(MPI_Aint) - 1) /
                                            sizeof(MPI_Aint));
        for (int i = 0; i < s && !err; i++)
            err = retain_type(r, &t[i], cap);
    } else {
        err = retain_type(r, &sd->type, cap);
    }
    return err;
}

static int retain_args(struct iso_request_s *r, int s)
{
    size_t words = (size_t)s * 2 * 4 + 8; /* two sides x up to 4 arrays */
    char *mem;
    int cap = 2 * s + 2;
    r->args_mem = malloc(words * sizeof(MPI_Aint));
    r->arg_types = malloc(sizeof(MPI_Datatype) * (size_t)cap);
    if (r->args_mem == NULL || r->arg_types == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    mem = r->args_mem;
    {
        int err = retain_side(r, &r->args.send, s, &mem, cap);
        return err ? err : retain_side(r, &r->args.recv, s, &mem, cap);
    }
}

/* The vectors (receive count x datatype) of the schedule: its reduction
 * accumulators and, in datatype mode, its scratch vectors, each spanning the
 * true extent of the vector. */
static int alloc_vectors(struct iso_request_s *r)
{
    MPI_Aint tlb, textent, lb, extent;
    int n = r->sched->nacc, count = r->args.recv.count, err;
    if ((err = MPI_Type_get_true_extent(r->args.recv.type, &tlb, &textent)) != MPI_SUCCESS ||
        (err = MPI_Type_get_extent(r->args.recv.type, &lb, &extent)) != MPI_SUCCESS)
        return err;
    r->acc_span = count > 0 ? (size_t)((count - 1) * extent + textent) : 0;
    r->acc_shift = -tlb;
    if ((r->acc = calloc((size_t)n + 1, sizeof *r->acc)) == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    for (int k = 0; k < n; k++)
        if ((r->acc[k] = malloc(r->acc_span + 1)) == NULL)
            return iso__errclass(ISO_ERR_NOMEM);
    r->vec_stride = (r->acc_span + 63) & ~(size_t)63;
    if (r->datatype &&
        (r->vec = malloc(r->vec_stride * (size_t)r->sched->nvec + 1)) == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    return MPI_SUCCESS;
}

/* Datatype mode: one struct type over MPI_BOTTOM per message, listing the
 * places of its blocks in message order (empty blocks left out: they add
 * nothing to the type signature). */
static int build_msgtypes(struct iso_request_s *r)
{
    const iso_sched *s = r->sched;
    int maxn = 1, err = MPI_SUCCESS, *len;
    MPI_Aint *disp;
    MPI_Datatype *types;
    for (int m = 0; m < s->nmsgs; m++)
        if (s->msgs[m].n > maxn)
            maxn = s->msgs[m].n;
    r->msgtype = malloc(sizeof(MPI_Datatype) * (size_t)(s->nmsgs + 1));
    len = malloc(sizeof(int) * (size_t)maxn);
    disp = malloc(sizeof(MPI_Aint) * (size_t)maxn);
    types = malloc(sizeof(MPI_Datatype) * (size_t)maxn);
    if (!r->msgtype || !len || !disp || !types)
        err = iso__errclass(ISO_ERR_NOMEM);
    for (int m = 0; r->msgtype && m < s->nmsgs; m++)
        r->msgtype[m] = MPI_DATATYPE_NULL;
    for (int m = 0; m < s->nmsgs && !err; m++) {
        int n = 0;
        for (int k = 0; k < s->msgs[m].n && !err; k++) {
            place_t q = place_of(r, s->pieces[s->msgs[m].first + k]);
            if (q.count == 0)
                continue;
            len[n] = q.count;
            types[n] = q.type;
            err = MPI_Get_address(q.p, &disp[n++]);
        }
        if (!err)
            err = MPI_Type_create_struct(n, len, disp, types, &r->msgtype[m]);
        if (!err)
            err = MPI_Type_commit(&r->msgtype[m]);
    }
    free(len);
    free(disp);
    free(types);
    return err;
}

int iso__request_create(iso_state *st, MPI_Comm comm, iso_sched *sched, const iso_args *a,
                        int s, int retain, int persistent, int datatype,
                        struct iso_request_s **out)
{
    struct iso_request_s *r = calloc(1, sizeof *r);
    int err = MPI_SUCCESS, nm = sched->nmsgs;
    *out = NULL;
    if (r == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    r->sched = sched;
    sched->refs++;
    r->state = st;
    st->refs++;
    r->args = *a;
    r->datatype = datatype;
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
        err = iso__errclass(ISO_ERR_NOMEM);
    if (!err && retain)
        err = retain_args(r, s);
    if (!err && (sched->nacc > 0 || datatype))
        err = alloc_vectors(r);
    r->base[ISO_BUF_SEND] = (void *)(uintptr_t)a->sendbuf;
    r->base[ISO_BUF_RECV] = a->recvbuf;
    r->base[ISO_BUF_SCRATCH] = r->scratch_mem;
    if (!err && datatype)
        err = build_msgtypes(r);
    if (err) {
        iso__request_destroy(r);
        return err;
    }
    r->comm = comm;
    r->persistent = persistent;
    r->tagbase = iso__tags_reserve(st, sched->ntags);
    *out = r;
    return MPI_SUCCESS;
}

void iso__request_destroy(struct iso_request_s *r)
{
    if (r == NULL)
        return;
    if (r->active)
        list_remove(r);
    for (int k = 0; k < r->narg_types; k++)
        MPI_Type_free(&r->arg_types[k]);
    if (r->msgtype)
        for (int m = 0; m < r->sched->nmsgs; m++)
            if (r->msgtype[m] != MPI_DATATYPE_NULL)
                MPI_Type_free(&r->msgtype[m]);
    free(r->msgtype);
    free(r->vec);
    if (r->msgbuf && r->msgcap && r->sched->spare_buf == NULL && r->sched->refs > 1) {
        r->sched->spare_buf = r->msgbuf; /* the cache keeps the schedule */
        r->sched->spare_cap = r->msgcap;
    } else {
        if (r->msgbuf)
            for (int m = 0; m < r->sched->nmsgs; m++)
                free(r->msgbuf[m]);
        free(r->msgbuf);
        free(r->msgcap);
    }
    free(r->msglen);
    free(r->tmp);
    if (r->acc)
        for (int k = 0; k < r->sched->nacc; k++)
            free(r->acc[k]);
    free(r->acc);
    free(r->arg_types);
    free(r->args_mem);
    free(r->reqs);
    free(r->pending);
    free(r->scratch_mem);
    iso__sched_release(r->sched);
    iso__state_release(r->state);
    free(r);
}

/* ---- public -------------------------------------------------------------- */

static MPI_Comm req_comm(const Iso_request *request)
{
    return (request && *request) ? (*request)->comm : MPI_COMM_WORLD;
}

int Iso_start(Iso_request *request)
{
    struct iso_request_s *r;
    if (request == NULL || *request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    r = *request;
    if (!r->persistent || r->active)
        return iso__fail(r->comm, ISO_ERR_REQUEST);
    return iso__raise(r->comm, iso__request_start(r));
}

/* After completion: a nonblocking request is freed, a persistent one stays. */
static int retire(Iso_request *request)
{
    struct iso_request_s *r = *request;
    int err = r->err;
    MPI_Comm comm = r->comm;
    if (!r->persistent) {
        iso__request_destroy(r);
        *request = ISO_REQUEST_NULL;
    }
    return iso__raise(comm, err);
}

int Iso_wait(Iso_request *request)
{
    if (request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    iso__request_wait(*request);
    return retire(request);
}

int Iso_test(Iso_request *request, int *flag)
{
    if (request == NULL || flag == NULL)
        return iso__fail(req_comm(request), ISO_ERR_REQUEST);
    *flag = 1;
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    progress_all();
    if ((*request)->active) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return retire(request);
}

int Iso_waitall(int n, Iso_request requests[])
{
    int err = MPI_SUCCESS;
    if (n < 0 || (n > 0 && requests == NULL))
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    for (int i = 0; i < n; i++) {
        int e = Iso_wait(&requests[i]);
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

int Iso_request_free(Iso_request *request)
{
    if (request == NULL || *request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    if ((*request)->active)
        return iso__fail((*request)->comm, ISO_ERR_REQUEST);
    iso__request_destroy(*request);
    *request = ISO_REQUEST_NULL;
    return MPI_SUCCESS;
}
