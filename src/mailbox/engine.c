/* The mailbox's exchange (DESIGN.md, "Mailbox"): receives posted per
 * level, the processing of arrived buffers (delivery to the callback,
 * forwarding to the next hop, spreading broadcasts), progress and flow
 * control.
 *
 * Flow control of forwarding: a buffer of level L >= 1 (records that still
 * have L hops to go) is processed only while every level below L has at
 * most capacity bytes of this process's sends in flight; otherwise it is
 * held in its receive slot, and that receive is not posted again, so its
 * senders' sends stay unfinished (their own flow control then waits; a send
 * below MPI's eager limit completes anyway, its bytes held by MPI).
 * Level 0 is never held back, and processing a level-L buffer queues only
 * records of lower levels: by induction over the levels every held buffer
 * is processed eventually (DESIGN.md, "Flow control").
 *
 * Callbacks run only from iso__mb_progress, which runs only at the top
 * level of a public call (mb->busy == 0): a callback's sends queue and post
 * buffers but never wait, so nothing recurses and a callback never sees
 * another one running. */
#include "mailbox/mailbox.h"
#include <stdlib.h>
#include <string.h>

int iso__mb_recv_start(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < mb->nslots && !err; i++)
        err = MPI_Irecv(mb->recv_buf[i], (int)mb->bufmax, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        mb->lcomm[i / ISO_MB_NRECV], &mb->recv_req[i]);
    return err;
}

int iso__mb_recv_cancel(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    iso__world_errors_return(1);
    for (int i = 0; i < mb->nslots; i++)
        if (mb->recv_req[i] != MPI_REQUEST_NULL) {
            int e = MPI_Cancel(&mb->recv_req[i]);
            if (e == MPI_SUCCESS)
                e = MPI_Wait(&mb->recv_req[i], MPI_STATUS_IGNORE);
            err = err ? err : e;
        }
    iso__world_errors_return(0);
    return err;
}

int iso__mb_emit_bcast(struct iso_mailbox_s *mb, int to, int stage)
{
    return iso__mb_enqueue(mb, to, iso__mb_level(&mb->routes, to, -1 - stage), mb->bc_src,
                           -1 - stage, mb->bc_msg, mb->bc_bytes);
}

/* Every record of one arrived buffer of `level` (or one buffer to
 * oneself, level 0): its own messages to the callback, the others queued
 * for their next hop, one level lower. */
static int process(struct iso_mailbox_s *mb, const char *data, size_t len, int level)
{
    size_t off = 0;
    int err = MPI_SUCCESS;
    mb->busy = 1;
    while (off + ISO_MB_HDR <= len && !err) {
        iso_mb_header h;
        const char *payload = data + off + ISO_MB_HDR;
        memcpy(&h, data + off, ISO_MB_HDR);
        if (off + ISO_MB_RECORD(h.bytes) > len || h.src < 0 || h.src >= mb->p ||
            h.dst >= mb->p) {
            err = iso__error_msg(ISO_ERR_INTERN, "mailbox: a malformed record arrived");
            break;
        }
        if (h.dst == mb->me) {
            mb->recv(mb, h.src, payload, h.bytes, mb->ctx);
        } else if (h.dst >= 0) {
            mb->stats.forwarded++;
            err = iso__mb_enqueue(mb, iso__mb_next_hop(&mb->routes, mb->me, h.dst), level - 1,
                                  h.src, h.dst, payload, h.bytes);
        } else {
            /* a broadcast: forward along its tree first, then deliver
             * (the callback may start broadcasts of its own) */
            mb->bc_src = h.src;
            mb->bc_msg = payload;
            mb->bc_bytes = h.bytes;
            err = iso__mb_bcast_spread(&mb->routes, mb->me, h.src, -1 - h.dst, iso__mb_emit_bcast,
                                       mb);
            if (!err)
                mb->recv(mb, h.src, payload, h.bytes, mb->ctx);
        }
        off += ISO_MB_RECORD(h.bytes);
    }
    mb->busy = 0;
    return err;
}

/* The buffers to oneself, until none is left (their callbacks may add). */
static int process_local(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    while (mb->nlocal > 0 && !err) {
        iso_mb_buf b = mb->local[--mb->nlocal];
        mb->local_bytes -= b.len;
        err = process(mb, b.data, b.len, 0);
        free(b.data);
    }
    return err;
}

/* Receive slot i holds a buffer of count bytes: process it, post the
 * receive again. */
static int take(struct iso_mailbox_s *mb, int i, int count)
{
    int err = process(mb, mb->recv_buf[i], (size_t)count, i / ISO_MB_NRECV);
    mb->received++;
    mb->held[i] = 0;
    if (!err)
        err = MPI_Irecv(mb->recv_buf[i], (int)mb->bufmax, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        mb->lcomm[i / ISO_MB_NRECV], &mb->recv_req[i]);
    return err;
}

/* Whether an arrived buffer of slot i with tag may be processed now.  A
 * sender that has seen the end of wait_empty sends with the next epoch's
 * tag while this process may still wait for it: its callbacks must not run
 * before this wait_empty returns.  And forwarding: a buffer of level L
 * waits while a level below has more than capacity bytes in flight. */
static int may_take(const struct iso_mailbox_s *mb, int i, int tag)
{
    if (tag != (int)(mb->epoch & 1))
        return 0;
    for (int l = 0; l < i / ISO_MB_NRECV; l++)
        if (mb->inflight_level[l] > mb->capacity)
            return 0;
    return 1;
}

/* The held buffers that may be processed now. */
static int take_held(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < mb->nslots && !err; i++)
        if (mb->held[i] && may_take(mb, i, mb->held_tag[i]))
            err = take(mb, i, mb->held_count[i]);
    return err;
}

/* Receive slot i has completed (st): process the buffer or hold it. */
static int arrived(struct iso_mailbox_s *mb, int i, MPI_Status *st)
{
    int err, count;
    mb->recv_req[i] = MPI_REQUEST_NULL;
    if ((err = MPI_Get_count(st, MPI_BYTE, &count)) != MPI_SUCCESS)
        return err;
    if (!may_take(mb, i, st->MPI_TAG)) {
        mb->held[i] = 1;
        mb->held_count[i] = count;
        mb->held_tag[i] = st->MPI_TAG;
        mb->stats.held++;
        return MPI_SUCCESS;
    }
    return take(mb, i, count);
}

/* Send i has completed: its buffer is free. */
static void sent(struct iso_mailbox_s *mb, int i)
{
    free(mb->sends[i].data);
    mb->inflight -= mb->sends[i].len;
    mb->inflight_level[mb->sends[i].level] -= mb->sends[i].len;
    mb->sends[i] = mb->sends[--mb->nsends];
}

static int by_index_down(const void *a, const void *b)
{
    return *(const int *)b - *(const int *)a;
}

/* MPI_Waitsome (block) or MPI_Testsome.  The SMPI build's compat layer
 * (src/compat/smpi.h) makes its nonblocking allreduce, the wave, a request
 * of its own that only its Wait/Test wrappers progress, and it wraps
 * Waitany and Testany but not the -some forms: there one completion at a
 * time. */
static int wait_some(int n, MPI_Request *reqs, int block, int *out, int *idx, MPI_Status *sts)
{
#ifdef ISO_SMPI_COMPAT
    int flag = 1, err;
    err = block ? MPI_Waitany(n, reqs, idx, sts) : MPI_Testany(n, reqs, idx, &flag, sts);
    *out = err != MPI_SUCCESS || !flag ? 0 : idx[0] == MPI_UNDEFINED ? MPI_UNDEFINED : 1;
    return err;
#else
    return block ? MPI_Waitsome(n, reqs, out, idx, sts) : MPI_Testsome(n, reqs, out, idx, sts);
#endif
}

/* The requests waited on: the nslots receives, the wave, then the sends.
 * One MPI_Waitsome / MPI_Testsome takes every completion at once (one scan
 * of the array, not one per completion).  The completed sends are released
 * first, highest index first (a removal moves the last send into the hole,
 * which then is not a completed one), then the arrivals, whose callbacks
 * may post sends. */
int iso__mb_progress(struct iso_mailbox_s *mb, int block)
{
    MPI_Request *reqs = NULL;
    MPI_Status *sts = NULL;
    int *idx = NULL, cap = 0, err;
    iso__world_errors_return(1); /* completion calls: errors come back as codes */
    for (;;) {
        int nr = mb->nslots, n, out = 0, nsent = 0;
        /* what waits without MPI first: buffers to oneself, and held
         * buffers that the epoch or the flow allows now */
        if ((err = process_local(mb)) != MPI_SUCCESS || (err = take_held(mb)) != MPI_SUCCESS ||
            (err = process_local(mb)) != MPI_SUCCESS)
            break;
        n = nr + 1 + mb->nsends;
        if (n > cap) {
            int want = n * 2;
            free(reqs);
            free(sts);
            free(idx);
            reqs = malloc(sizeof *reqs * (size_t)want);
            sts = malloc(sizeof *sts * (size_t)want);
            idx = malloc(sizeof *idx * (size_t)want);
            if (reqs == NULL || sts == NULL || idx == NULL) {
                err = iso__error(ISO_ERR_NOMEM);
                break;
            }
            cap = want;
        }
        memcpy(reqs, mb->recv_req, sizeof(MPI_Request) * (size_t)nr);
        reqs[nr] = mb->wave;
        for (int i = 0; i < mb->nsends; i++)
            reqs[nr + 1 + i] = mb->sends[i].req;
        /* block: MPI's own progress while nothing has arrived; one wait,
         * then take what else is there */
        err = wait_some(n, reqs, block, &out, idx, sts);
        block = 0;
        if (err != MPI_SUCCESS || out == MPI_UNDEFINED || out == 0)
            break;
        /* the sends' indices (as send numbers) to the front, apart */
        for (int c = 0; c < out; c++)
            if (idx[c] > nr) {
                int t = idx[nsent], k = idx[c] - nr - 1;
                MPI_Status ts = sts[nsent];
                idx[c] = t;
                sts[c] = sts[nsent] = ts; /* a send's status is not read */
                idx[nsent++] = k;
            }
        qsort(idx, (size_t)nsent, sizeof *idx, by_index_down);
        for (int c = 0; c < nsent; c++)
            sent(mb, idx[c]);
        for (int c = nsent; c < out && !err; c++) {
            if (idx[c] == nr) { /* the termination wave */
                mb->wave = MPI_REQUEST_NULL;
                mb->wave_done = 1;
            } else {
                err = arrived(mb, idx[c], &sts[c]);
            }
        }
        if (err)
            break;
    }
    iso__world_errors_return(0);
    free(reqs);
    free(sts);
    free(idx);
    return err;
}

int iso__mb_exchange(struct iso_mailbox_s *mb, int all)
{
    int err = MPI_SUCCESS;
    if (all || mb->queued >= mb->capacity)
        err = iso__mb_post_all(mb);
    /* arrivals first, then flow control: at most capacity bytes in flight
     * once this returns (the loop ends only when that holds after the
     * callbacks run by the last progress; the receivers keep receiving
     * while this process waits, so these sends complete) */
    if (!err)
        err = iso__mb_progress(mb, 0);
    while (!err && mb->inflight > mb->capacity)
        err = iso__mb_progress(mb, 1);
    return err;
}

int iso__mb_sends_complete(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    iso__world_errors_return(1);
    while (mb->nsends > 0 && !err) {
        iso_mb_send *s = &mb->sends[mb->nsends - 1];
        if ((err = MPI_Wait(&s->req, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
            break;
        free(s->data);
        mb->inflight -= s->len;
        mb->inflight_level[s->level] -= s->len;
        mb->nsends--;
    }
    iso__world_errors_return(0);
    return err;
}
