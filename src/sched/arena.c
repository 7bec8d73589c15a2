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

/* A block: the messages of one lifetime, laid out one after the other
 * (they are alive together anyway), placed as one. */
typedef struct {
    size_t size, off;
    int born, dies, first; /* first: its first message in the index order */
} block;

typedef struct {
    size_t lo, hi;
} span;

static int cmp_size_desc(const block *a, const block *b)
{
    return a->size != b->size ? (a->size < b->size ? 1 : -1) : 0;
}

static int cmp_blocks(const void *x, const void *y, int how)
{
    const block *a = *(block *const *)x, *b = *(block *const *)y;
    int la = a->dies - a->born, lb = b->dies - b->born, c = 0;
    switch (how) {
    case 1: /* longest lifetime first */
        c = la != lb ? (la < lb ? 1 : -1) : 0;
        break;
    case 2: /* earliest first (left edge) */
        c = a->born != b->born ? (a->born < b->born ? -1 : 1) : 0;
        break;
    case 3: /* most bytes x time first */
        if ((double)a->size * (la + 1) != (double)b->size * (lb + 1))
            c = (double)a->size * (la + 1) < (double)b->size * (lb + 1) ? 1 : -1;
        break;
    default: /* largest first */
        break;
    }
    if (c == 0)
        c = cmp_size_desc(a, b);
    return c != 0 ? c : (a->first > b->first) - (a->first < b->first);
}

#define ARENA_ORDERS 4
static int cmp_order0(const void *x, const void *y) { return cmp_blocks(x, y, 0); }
static int cmp_order1(const void *x, const void *y) { return cmp_blocks(x, y, 1); }
static int cmp_order2(const void *x, const void *y) { return cmp_blocks(x, y, 2); }
static int cmp_order3(const void *x, const void *y) { return cmp_blocks(x, y, 3); }
static int (*const block_orders[ARENA_ORDERS])(const void *, const void *) = {
    cmp_order0, cmp_order1, cmp_order2, cmp_order3};

static int by_start(const void *x, const void *y)
{
    const span *a = x, *b = y;
    return (a->lo > b->lo) - (a->lo < b->lo);
}

/* First fit in the given order: each block goes to the lowest offset where
 * it overlaps no block placed before it whose lifetime overlaps its own.
 * Returns the arena's size. */
static size_t first_fit(block **order, int nb, span *busy)
{
    size_t total = 0;
    for (int i = 0; i < nb; i++) {
        block *b = order[i];
        size_t pos = 0;
        int nbusy = 0;
        for (int j = 0; j < i; j++) /* placed blocks alive with b */
            if (order[j]->born <= b->dies && b->born <= order[j]->dies && order[j]->size > 0)
                busy[nbusy++] = (span){order[j]->off, order[j]->off + order[j]->size};
        qsort(busy, (size_t)nbusy, sizeof *busy, by_start);
        for (int j = 0; j < nbusy && busy[j].lo < pos + b->size; j++)
            if (busy[j].hi > pos)
                pos = busy[j].hi;
        b->off = pos;
        if (pos + b->size > total)
            total = pos + b->size;
    }
    return total;
}

/* Messages of one lifetime form a block; the blocks are placed by first fit
 * in a few orders (largest, longest-lived, earliest, most bytes x time
 * first), and the smallest arena wins.  O(B^2 log B) per order for B
 * blocks (at most one per pair of time points), once per plan.  *total is
 * at least the most bytes alive at any time point. */
int iso__arena_layout(const iso_sched *s, const size_t bytes[], size_t off[], size_t *total)
{
    int nm = s->nmsgs, nb = 0, err = MPI_SUCCESS;
    size_t n1 = (size_t)nm + 1;
    int *born = malloc(sizeof(int) * n1), *dies = malloc(sizeof(int) * n1);
    int *idx = malloc(sizeof(int) * n1), *blk = malloc(sizeof(int) * n1);
    block *blocks = malloc(sizeof(block) * n1), **order = malloc(sizeof(block *) * n1);
    span *busy = malloc(sizeof(span) * n1);
    size_t *best = malloc(sizeof(size_t) * n1);
    *total = 0;
    if (!born || !dies || !idx || !blk || !blocks || !order || !busy || !best) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    iso__arena_lifetimes(s, born, dies);
    /* the blocks: messages sorted by lifetime (insertion sort, stable) */
    for (int m = 0; m < nm; m++) {
        int i = m;
        for (; i > 0 && (born[idx[i - 1]] > born[m] ||
                         (born[idx[i - 1]] == born[m] && dies[idx[i - 1]] > dies[m]));
             i--)
            idx[i] = idx[i - 1];
        idx[i] = m;
    }
    for (int i = 0; i < nm; i++) {
        int m = idx[i];
        if (i == 0 || born[m] != blocks[nb - 1].born || dies[m] != blocks[nb - 1].dies)
            blocks[nb++] = (block){0, 0, born[m], dies[m], m};
        blk[m] = nb - 1;
        off[m] = blocks[nb - 1].size; /* within its block, for now */
        blocks[nb - 1].size += aligned(bytes[m]);
    }
    for (int how = 0; how < ARENA_ORDERS; how++) {
        size_t size;
        for (int b = 0; b < nb; b++)
            order[b] = &blocks[b];
        qsort(order, (size_t)nb, sizeof *order, block_orders[how]);
        size = first_fit(order, nb, busy);
        if (how == 0 || size < *total) {
            *total = size;
            for (int b = 0; b < nb; b++)
                best[b] = blocks[b].off;
        }
    }
    for (int m = 0; m < nm; m++)
        off[m] += best[blk[m]];
fn_exit:
    free(born);
    free(dies);
    free(idx);
    free(blk);
    free(blocks);
    free(order);
    free(busy);
    free(best);
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
