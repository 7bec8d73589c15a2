/* The mailbox's exchange (DESIGN.md, "Mailbox"): receives always posted,
 * the processing of arrived buffers (delivery to the callback, forwarding
 * to the next hop, spreading broadcasts), progress and flow control.
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
    for (int i = 0; i < ISO_MB_NRECV && !err; i++)
        err = MPI_Irecv(mb->recv_buf[i], (int)mb->bufmax, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        mb->comm, &mb->recv_req[i]);
    return err;
}

int iso__mb_recv_cancel(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    iso__world_errors_return(1);
    for (int i = 0; i < ISO_MB_NRECV; i++)
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
    return iso__mb_enqueue(mb, to, mb->bc_src, -1 - stage, mb->bc_msg, mb->bc_bytes);
}

/* Every record of one arrived buffer (or one buffer to oneself): its own
 * messages to the callback, the others queued for their next hop. */
static int process(struct iso_mailbox_s *mb, const char *data, size_t len)
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
            err = iso__mb_enqueue(mb, iso__mb_next_hop(&mb->routes, mb->me, h.dst), h.src, h.dst,
                                  payload, h.bytes);
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
        err = process(mb, b.data, b.len);
        free(b.data);
    }
    return err;
}

/* Receive slot i holds a buffer of count bytes: process it, post the
 * receive again. */
static int take(struct iso_mailbox_s *mb, int i, int count)
{
    int err = process(mb, mb->recv_buf[i], (size_t)count);
    mb->received++;
    mb->held[i] = 0;
    if (!err)
        err = MPI_Irecv(mb->recv_buf[i], (int)mb->bufmax, MPI_BYTE, MPI_ANY_SOURCE, MPI_ANY_TAG,
                        mb->comm, &mb->recv_req[i]);
    return err;
}

/* Request i of the array iso__mb_progress waits on has completed. */
static int complete(struct iso_mailbox_s *mb, int i, MPI_Status *st)
{
    int err, count;
    if (i < ISO_MB_NRECV) { /* an arrived buffer */
        if ((err = MPI_Get_count(st, MPI_BYTE, &count)) != MPI_SUCCESS)
            return err;
        /* A sender that has seen the end of wait_empty sends with the next
         * epoch's tag while this process may still wait for it: its
         * callbacks must not run before this wait_empty returns. */
        if (st->MPI_TAG != (int)(mb->epoch & 1)) {
            mb->held[i] = 1;
            mb->held_count[i] = count;
            return MPI_SUCCESS;
        }
        return take(mb, i, count);
    }
    if (i == ISO_MB_NRECV) { /* the termination wave */
        mb->wave_done = 1;
        return MPI_SUCCESS;
    }
    i -= ISO_MB_NRECV + 1; /* a send: its buffer is free */
    free(mb->sends[i].data);
    mb->inflight -= mb->sends[i].len;
    mb->sends[i] = mb->sends[--mb->nsends];
    return MPI_SUCCESS;
}

int iso__mb_progress(struct iso_mailbox_s *mb, int block)
{
    MPI_Request *reqs = NULL;
    int cap = 0, err;
    if ((err = process_local(mb)) != MPI_SUCCESS)
        return err;
    for (int i = 0; i < ISO_MB_NRECV && !mb->wave_waiting; i++) /* the epoch has changed */
        if (mb->held[i] && (err = take(mb, i, mb->held_count[i])) != MPI_SUCCESS)
            return err;
    iso__world_errors_return(1); /* completion calls: errors come back as codes */
    for (;;) {
        int n = ISO_MB_NRECV + 1 + mb->nsends, idx = MPI_UNDEFINED, flag = 0;
        MPI_Status st;
        if ((err = iso__grow(&reqs, &cap, n, sizeof *reqs)) != MPI_SUCCESS)
            break;
        memcpy(reqs, mb->recv_req, sizeof(MPI_Request) * ISO_MB_NRECV);
        reqs[ISO_MB_NRECV] = mb->wave;
        for (int i = 0; i < mb->nsends; i++)
            reqs[ISO_MB_NRECV + 1 + i] = mb->sends[i].req;
        if (block) { /* MPI's own progress while nothing has arrived */
            err = MPI_Waitany(n, reqs, &idx, &st);
            flag = 1;
            block = 0; /* one wait; then take what else is there */
        } else {
            err = MPI_Testany(n, reqs, &idx, &flag, &st);
        }
        if (err != MPI_SUCCESS || !flag || idx == MPI_UNDEFINED)
            break;
        /* the completed request is MPI_REQUEST_NULL now */
        if (idx < ISO_MB_NRECV)
            mb->recv_req[idx] = MPI_REQUEST_NULL;
        else if (idx == ISO_MB_NRECV)
            mb->wave = MPI_REQUEST_NULL;
        if ((err = complete(mb, idx, &st)) != MPI_SUCCESS ||
            (err = process_local(mb)) != MPI_SUCCESS)
            break;
    }
    iso__world_errors_return(0);
    free(reqs);
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
        mb->nsends--;
    }
    iso__world_errors_return(0);
    return err;
}
