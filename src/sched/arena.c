/* One allocation for the packed messages of a request whose message sizes
 * are known when it is made (the VPT plans; DESIGN.md, "Virtual process
 * topology", Memory).  Messages whose lifetimes overlap get disjoint bytes
 * of the arena; the others share, so a plan of n stages holds about one
 * stage's messages at a time rather than all of them.
 *
 * Lifetimes come from the schedule alone.  The executor runs a round stage
 * by stage (iso__op_stage): PACK, then communication, then local ops.  With
 * the time point t = 3 * round + stage, a message lives from the first to
 * the last time point at which an op touches it: PACK writes it and reads
 * the incoming entries it forwards, SEND_MSG and RECV_MSG hold it until the
 * round's communication completes, DELIVER and ACC read it.  So an outgoing
 * message of round d lives [P(d), C(d)], an incoming one from C(d) to its
 * last reader (a PACK of a later round, or a delivery). */
#include "sched/exec.h"
#include <limits.h>
#include <stdlib.h>

#define ARENA_ALIGN ((size_t)8) /* message headers are int64 */

static size_t aligned(size_t bytes)
{
    return (bytes + ARENA_ALIGN - 1) / ARENA_ALIGN * ARENA_ALIGN;
}

static void touch(int born[], int dies[], int m, int t)
{
    if (t < born[m])
        born[m] = t;
    if (t > dies[m])
        dies[m] = t;
}

void iso__arena_lifetimes(const iso_sched *s, int born[], int dies[])
{
    for (int m = 0; m < s->nmsgs; m++) {
        born[m] = INT_MAX;
        dies[m] = -1;
    }
    for (int round = 0, k = 0; round < s->nrounds; round++)
        for (; k < s->round_end[round]; k++) {
            const iso_op *op = &s->ops[k];
            int t = 3 * round + (int)iso__op_stage(op->kind);
            switch (op->kind) {
            case ISO_OP_PACK: {
                const iso_msg *msg = &s->msgs[op->msg];
                touch(born, dies, op->msg, t);
                for (int e = 0; e < msg->n; e++)
                    if (s->pieces[msg->first + e].msg >= 0)
                        touch(born, dies, s->pieces[msg->first + e].msg, t);
                break;
            }
            case ISO_OP_SEND_MSG:
            case ISO_OP_RECV_MSG:
                touch(born, dies, op->msg, t);
                break;
            case ISO_OP_DELIVER:
            case ISO_OP_ACC:
                if (op->src.msg >= 0)
                    touch(born, dies, op->src.msg, t);
                break;
            default:
                break;
            }
        }
    for (int m = 0; m < s->nmsgs; m++)
        if (born[m] == INT_MAX) /* touched by no op: a lifetime of its own */
            born[m] = dies[m] = -1;
}

typedef struct {
    size_t lo, hi;
} span;

static int by_size_desc(const void *x, const void *y)
{
    const span *a = x, *b = y; /* lo: size, hi: message index */
    if (a->lo != b->lo)
        return a->lo < b->lo ? 1 : -1;
    return (a->hi > b->hi) - (a->hi < b->hi);
}

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* Offline first fit, largest message first: each message goes to the
 * lowest offset (a multiple of 8) where it overlaps no message already
 * placed whose lifetime overlaps its own.  O(M^2 log M) for M messages, once
 * per plan.  *total: the arena's size, at least the most bytes live at any
 * time point. */
int iso__arena_layout(const iso_sched *s, const size_t bytes[], size_t off[], size_t *total)
{
    int nm = s->nmsgs, err = MPI_SUCCESS;
    int *born = malloc(sizeof(int) * ((size_t)nm + 1)), *dies = malloc(sizeof(int) * ((size_t)nm + 1));
    span *order = malloc(sizeof(span) * ((size_t)nm + 1)), *busy = malloc(sizeof(span) * ((size_t)nm + 1));
    *total = 0;
    if (!born || !dies || !order || !busy) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    iso__arena_lifetimes(s, born, dies);
    for (int m = 0; m < nm; m++)
        order[m] = (span){aligned(bytes[m]), (size_t)m};
    qsort(order, (size_t)nm, sizeof *order, by_size_desc);
    for (int i = 0; i < nm; i++) {
        int m = (int)order[i].hi, nbusy = 0;
        size_t size = order[i].lo, pos = 0;
        for (int j = 0; j < i; j++) { /* placed messages alive with m */
            int q = (int)order[j].hi;
            if (born[q] <= dies[m] && born[m] <= dies[q] && order[j].lo > 0)
                busy[nbusy++] = (span){off[q], off[q] + order[j].lo};
        }
        qsort(busy, (size_t)nbusy, sizeof *busy, by_start);
        for (int j = 0; j < nbusy && busy[j].lo < pos + size; j++)
            if (busy[j].hi > pos)
                pos = busy[j].hi;
        off[m] = pos;
        if (pos + size > *total)
            *total = pos + size;
    }
fn_exit:
    free(born);
    free(dies);
    free(order);
    free(busy);
    return err;
}

/* The request's message buffers become slices of one arena at the offsets
 * of iso__arena_layout, each exactly bytes[m] long (iso__msgbuf_reserve
 * refuses more: the arena is never reallocated). */
int iso__arena_reserve(iso_sreq *r, const size_t bytes[])
{
    const iso_sched *s = r->sched;
    int nm = s->nmsgs, err;
    size_t *off = malloc(sizeof(size_t) * ((size_t)nm + 1)), total = 0;
    char *arena = NULL;
    if (off == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = iso__arena_layout(s, bytes, off, &total)) != MPI_SUCCESS)
        goto fn_exit;
    if ((arena = malloc(total + 1)) == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int m = 0; m < nm; m++) { /* buffers of its own it may have had (spare ones) */
        if (r->arena == NULL)
            free(r->msgbuf[m]);
        r->msgbuf[m] = arena + off[m];
        r->msgcap[m] = bytes[m];
    }
    free(r->arena);
    r->arena = arena;
    r->arena_bytes = total;
fn_exit:
    free(off);
    return err;
}
