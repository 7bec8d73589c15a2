/* Combined messages, packed mode (DESIGN.md, "Combined messages"): where a
 * block's data is (a piece), packing a message (a header of n int64 byte
 * sizes, then the n blocks as MPI_Pack wrote them), and delivering pieces
 * into receive slots, reduction vectors and accumulators. */
#include "sched/exec.h"
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void *addr(const iso_sreq *r, const iso_loc *l)
{
    return (char *)r->buf[l->buf] + l->disp;
}

static int block_bytes(int count, MPI_Datatype type, size_t *bytes)
{
    MPI_Count size = 0;
    int err = MPI_Type_size_x(type, &size);
    *bytes = (size_t)size * (size_t)(count > 0 ? count : 0);
    return err;
}

/* Copies count x type between two places whose type signatures match. */
static int local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                      MPI_Datatype dtype)
{
    int size, pos = 0, err;
    size_t bytes;
    MPI_Aint lb, extent, tlb, textent;
    void *tmp;
    if ((err = block_bytes(scount, stype, &bytes)) != MPI_SUCCESS)
        return err;
    if (stype == dtype && scount == dcount &&
        MPI_Type_get_true_extent(stype, &tlb, &textent) == MPI_SUCCESS &&
        MPI_Type_get_extent(stype, &lb, &extent) == MPI_SUCCESS && tlb == 0 &&
        (size_t)textent * (size_t)scount == bytes && extent == textent) { /* contiguous */
        memmove(dst, src, bytes);
        return MPI_SUCCESS;
    }
    if (bytes > INT_MAX) /* MPI_Pack counts in int */
        return iso__error(ISO_ERR_COUNT);
    if ((err = MPI_Pack_size(scount, stype, MPI_COMM_SELF, &size)) != MPI_SUCCESS)
        return err;
    if ((tmp = malloc((size_t)size + 1)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = iso__pack(src, scount, stype, tmp, size, &pos, MPI_COMM_SELF);
    if (err == MPI_SUCCESS) {
        pos = 0;
        err = MPI_Unpack(tmp, size, &pos, dst, dcount, dtype, MPI_COMM_SELF);
    }
    free(tmp);
    return err;
}

/* Does MPI_Pack write a block of basic types as its bytes in memory?  On
 * the homogeneous systems MPICH and Open MPI run on it does, and the packed
 * sizes already rely on it (executor.c, known_recv_sizes); checked once per
 * process all the same, so that memcpy and MPI_Pack/MPI_Unpack may meet
 * at the two ends of one message. */
static pthread_once_t raw_once = PTHREAD_ONCE_INIT;
static int pack_is_raw;

static void check_pack_raw(void)
{
    struct {
        int i[2];
        double d;
    } v = {{0x01020304, -7}, 1.5};
    char packed[64], raw[sizeof v.i + sizeof v.d];
    int pos = 0;
    memcpy(raw, v.i, sizeof v.i);
    memcpy(raw + sizeof v.i, &v.d, sizeof v.d);
    pack_is_raw = MPI_Pack(v.i, 2, MPI_INT, packed, sizeof packed, &pos, MPI_COMM_SELF) ==
                      MPI_SUCCESS &&
                  MPI_Pack(&v.d, 1, MPI_DOUBLE, packed, sizeof packed, &pos, MPI_COMM_SELF) ==
                      MPI_SUCCESS &&
                  pos == (int)sizeof raw && memcmp(packed, raw, sizeof raw) == 0;
}

/* The size of one element of t if its data are contiguous bytes from its
 * address with no gaps, also between consecutive elements; else 0. */
static size_t contiguous_size(MPI_Datatype t)
{
    MPI_Count size, lb, extent, tlb, textent;
    if (MPI_Type_size_x(t, &size) != MPI_SUCCESS ||
        MPI_Type_get_extent_x(t, &lb, &extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent_x(t, &tlb, &textent) != MPI_SUCCESS)
        return 0;
    return size > 0 && lb == 0 && tlb == 0 && extent == size && textent == size ? (size_t)size
                                                                                 : 0;
}

int iso__raw_types_find(iso_sreq *r)
{
    const iso_side *side[2] = {&r->args.send, &r->args.recv};
    pthread_once(&raw_once, check_pack_raw);
    for (int k = 0; k < 2; k++) {
        r->raw_type[k] = MPI_DATATYPE_NULL;
        if (!pack_is_raw || side[k]->layout == ISO_LAYOUT_W ||
            (r->raw_size[k] = contiguous_size(side[k]->type)) == 0)
            continue;
        r->raw_type[k] = side[k]->type;
    }
    return MPI_SUCCESS;
}

/* count x type as plain bytes (*bytes of them), if type is a raw type. */
static int raw_block(const iso_sreq *r, int count, MPI_Datatype type, size_t *bytes)
{
    for (int k = 0; k < 2; k++)
        if (type == r->raw_type[k] && type != MPI_DATATYPE_NULL) {
            *bytes = r->raw_size[k] * (size_t)(count > 0 ? count : 0);
            return 1;
        }
    return 0;
}

/* Pointer to and size of entry k of packed message m (indexed when it
 * arrived: iso__msg_index). */
static int entry_at(const iso_sreq *r, int m, int k, char **ptr, size_t *size)
{
    const int64_t *hdr = r->msgbuf[m];
    if (k >= r->sched->msgs[m].n || r->msglen[m] < (size_t)r->sched->msgs[m].n * sizeof(int64_t))
        return iso__error(ISO_ERR_INTERN);
    *size = (size_t)hdr[k];
    *ptr = (char *)r->msgbuf[m] + r->entry_off[r->sched->msgs[m].first + k];
    return MPI_SUCCESS;
}

int iso__msg_index(iso_sreq *r, int m)
{
    const iso_msg *msg = &r->sched->msgs[m];
    const int64_t *hdr = r->msgbuf[m];
    size_t off = (size_t)msg->n * sizeof(int64_t);
    if (r->msglen[m] < off)
        return iso__error(ISO_ERR_INTERN);
    for (int k = 0; k < msg->n; k++) {
        if (hdr[k] < 0 || (size_t)hdr[k] > r->msglen[m] - off)
            return iso__error(ISO_ERR_INTERN);
        r->entry_off[msg->first + k] = off;
        off += (size_t)hdr[k];
    }
    return MPI_SUCCESS;
}

/* An accumulator or scratch vector: count x datatype of the receive side. */
static iso_place vector_place(const iso_sreq *r, char *mem)
{
    return (iso_place){mem + r->vec_shift, r->args.recv.count, r->args.recv.type};
}

/* The place of piece pc: a user send block, an accumulator, or (datatype
 * mode) the place an entry of an incoming message was received into.
 * Entries of packed messages have no place of their own (entry_at). */
iso_place iso__place_of(const iso_sreq *r, iso_piece pc)
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
    return (iso_place){addr(r, &l), l.count, l.type};
}

/* Does piece pc have a place (rather than bytes in a packed message)? */
static int has_place(const iso_sreq *r, iso_piece pc)
{
    return pc.msg < 0 || r->datatype;
}

int iso__msgbuf_reserve(iso_sreq *r, int m, size_t bytes)
{
    int err;
    if (r->arena) /* sized by the plan, never reallocated: more is the plan's mistake */
        err = bytes <= r->msgcap[m]
                  ? MPI_SUCCESS
                  : iso__error_msg(ISO_ERR_INTERN, "message %d: %zu bytes in a slice of %zu", m,
                                   bytes, r->msgcap[m]);
    else
        err = iso__reserve(&r->msgbuf[m], &r->msgcap[m], bytes + 1);
    if (err == MPI_SUCCESS)
        r->msglen[m] = bytes;
    return err;
}

/* Packs message m in two passes over its pieces: the first finds where
 * each is and how many bytes it has (for the header and the buffer's size),
 * the second copies them, from what the first found (r->staged): every
 * piece is located once per execution, and raw blocks are sized without
 * asking MPI. */
int iso__pack_message(iso_sreq *r, int m)
{
    const iso_msg *msg = &r->sched->msgs[m];
    const iso_piece *pc = r->sched->pieces + msg->first;
    iso_staged *st = r->staged;
    size_t total = (size_t)msg->n * sizeof(int64_t), fwd = 0;
    int64_t *hdr;
    char *out;
    int pos, err = MPI_SUCCESS;

    for (int k = 0; k < msg->n && !err; k++) {
        if (pc[k].msg < 0) {
            iso_place q = iso__place_of(r, pc[k]);
            st[k] = (iso_staged){q.p, 0, q.count, q.type, 1, 0};
            if (!raw_block(r, q.count, q.type, &st[k].bytes)) {
                st[k].raw = 0;
                err = block_bytes(q.count, q.type, &st[k].bytes);
            }
        } else {
            st[k] = (iso_staged){NULL, 0, 0, MPI_DATATYPE_NULL, 1, 1};
            err = entry_at(r, pc[k].msg, pc[k].index, &st[k].p, &st[k].bytes);
        }
        total += st[k].bytes;
    }
    if (err == MPI_SUCCESS && total > INT_MAX) /* MPI_Pack and the receiver's probe count in int */
        err = iso__error_msg(ISO_ERR_COUNT, PACK_2GIB);
    if (err || (err = iso__msgbuf_reserve(r, m, total)))
        return err;
    out = r->msgbuf[m];
    hdr = r->msgbuf[m];
    pos = msg->n * (int)sizeof(int64_t);
    for (int k = 0; k < msg->n && !err; k++) {
        int before = pos;
        if (st[k].raw) { /* a raw block or an entry of an incoming message */
            memcpy(out + pos, st[k].p, st[k].bytes);
            pos += (int)st[k].bytes;
            fwd += st[k].forwarded ? st[k].bytes : 0;
        } else {
            err = iso__pack(st[k].p, st[k].count, st[k].type, out, (int)total, &pos,
                            r->priv->comm);
        }
        hdr[k] = pos - before;
    }
    r->msglen[m] = (size_t)pos;
    r->msgfwd[m] = fwd;
    return err;
}

/* Moves a piece into count x type at p. */
static int piece_to(iso_sreq *r, iso_piece pc, void *p, int count, MPI_Datatype type)
{
    size_t want, sz;
    char *src;
    int pos = 0, err, raw;
    if (has_place(r, pc)) {
        iso_place q = iso__place_of(r, pc);
        if (q.p == p && q.count == count && q.type == type)
            return MPI_SUCCESS; /* received in place */
        /* a block to oneself whose size differs from its slot's (vpt on a
         * graph communicator: sizes come from two arguments) */
        if ((q.count != count || q.type != type) &&
            ((err = block_bytes(q.count, q.type, &sz)) != MPI_SUCCESS ||
             (err = block_bytes(count, type, &want)) != MPI_SUCCESS))
            return err;
        if ((q.count != count || q.type != type) && sz != want)
            return sz > want ? MPI_ERR_TRUNCATE : iso__error(ISO_ERR_COUNT);
        return local_copy(q.p, q.count, q.type, p, count, type);
    }
    raw = raw_block(r, count, type, &want);
    if ((err = entry_at(r, pc.msg, pc.index, &src, &sz)) != MPI_SUCCESS ||
        (!raw && (err = block_bytes(count, type, &want)) != MPI_SUCCESS))
        return err;
    if (sz > want) /* the sender's block does not fit the slot: as MPI would say */
        return MPI_ERR_TRUNCATE;
    if (sz < want) /* a shorter block: the processes disagree on a block size */
        return iso__error(ISO_ERR_COUNT);
    if (raw) {
        memcpy(p, src, sz);
        return MPI_SUCCESS;
    }
    return MPI_Unpack(src, (int)sz, &pos, p, count, type, r->priv->comm);
}

/* Reduces piece pc into count x type at p with the request's op. */
static int reduce_into(iso_sreq *r, iso_piece pc, void *p, int count, MPI_Datatype type)
{
    MPI_Aint lo, span;
    int err;
    if (has_place(r, pc)) { /* a vector of the same type: reduce from where it is */
        iso_place q = iso__place_of(r, pc);
        if (q.count == count && q.type == type)
            return MPI_Reduce_local(q.p, p, count, type, r->args.op);
    }
    if ((err = iso__type_span(count, type, &lo, &span)) != MPI_SUCCESS ||
        (err = iso__reserve(&r->tmp, &r->tmpcap, (size_t)span + 1)) != MPI_SUCCESS)
        return err;
    if ((err = piece_to(r, pc, (char *)r->tmp - lo, count, type)) != MPI_SUCCESS)
        return err;
    return MPI_Reduce_local((char *)r->tmp - lo, p, count, type, r->args.op);
}

int iso__deliver_in_place(const iso_sreq *r, const iso_op *op)
{
    iso_piece pc = op->src;
    if (!r->datatype || op->kind != ISO_OP_DELIVER || pc.msg < 0 ||
        iso__is_reduction(r->args.coll))
        return 0;
    pc = r->sched->pieces[r->sched->msgs[pc.msg].first + pc.index];
    return pc.msg == ISO_PIECE_SLOT && pc.index == op->slot;
}

int iso__deliver(iso_sreq *r, const iso_op *op)
{
    iso_loc dst = iso__block(&r->args.recv, ISO_BUF_RECV, op->slot);
    void *p = op->kind == ISO_OP_ACC ? (char *)r->acc[op->slot] + r->vec_shift : addr(r, &dst);
    if (iso__is_reduction(r->args.coll) && !op->first)
        return reduce_into(r, op->src, p, dst.count, dst.type);
    return piece_to(r, op->src, p, dst.count, dst.type);
}

/* The cached schedule keeps the buffers of a finished request for the next
 * one (DESIGN.md, "Caching and what a request keeps"), but only what this
 * call needed: a buffer more than twice the size of its message (with
 * ISO_SPARE_SLACK to spare) is freed, and if the rest exceeds ISO_SPARE_MAX
 * nothing is kept.  So one big call does not pin its buffers for the small
 * calls after it. */
/* Frees the message buffers that are more than twice their message of the
 * last execution plus ISO_SPARE_SLACK, and all of them if the rest adds up
 * to more than ISO_SPARE_MAX; returns the bytes kept. */
size_t iso__msgbufs_trim(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    size_t kept = 0;
    if (r->arena) /* slices of exactly their messages' sizes: all stays */
        return r->arena_bytes;
    if (r->msgbuf == NULL || r->msgcap == NULL)
        return 0;
    for (int m = 0; m < s->nmsgs; m++) {
        if (r->msgcap[m] > 2 * r->msglen[m] + ISO_SPARE_SLACK) {
            free(r->msgbuf[m]);
            r->msgbuf[m] = NULL;
            r->msgcap[m] = 0;
        }
        kept += r->msgcap[m];
    }
    for (int m = 0; kept > ISO_SPARE_MAX && m < s->nmsgs; m++) {
        free(r->msgbuf[m]);
        r->msgbuf[m] = NULL;
        r->msgcap[m] = 0;
    }
    return kept > ISO_SPARE_MAX ? 0 : kept;
}

void iso__msgbufs_free(iso_sreq *r)
{
    iso_sched *s = r->sched;
    int keep = r->msgbuf && r->msgcap && s->spare_buf == NULL && s->refs > 1 && !r->no_spare &&
               r->arena == NULL; /* slices of an arena are no buffers of their own */
    if (keep && iso__msgbufs_trim(r) > 0) {
        s->spare_buf = r->msgbuf;
        s->spare_cap = r->msgcap;
    } else {
        if (r->msgbuf && r->arena == NULL)
            for (int m = 0; m < s->nmsgs; m++)
                free(r->msgbuf[m]);
        free(r->arena);
        free(r->msgbuf);
        free(r->msgcap);
    }
    free(r->msglen);
    free(r->msgfwd);
    free(r->entry_off);
    free(r->staged);
    free(r->tmp);
}
