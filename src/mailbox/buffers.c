/* Coalescing (DESIGN.md, "Mailbox"): one buffer per next hop and level
 * (the hops the records still have to go from there: flow control needs
 * the levels apart, engine.c); a buffer is
 * posted as one MPI message when the next record would make it exceed
 * bufmax (capacity + one record), and all buffers are posted once the
 * queue holds capacity bytes.  Posting never waits and never runs a
 * callback, so it is safe inside callbacks; waiting for memory is the
 * engine's, at the top level only. */
#include "mailbox/mailbox.h"
#include <stdlib.h>
#include <string.h>

int iso__mb_post(struct iso_mailbox_s *mb, int slot)
{
    iso_mb_buf *b = &mb->queue[slot];
    int hop = slot % mb->p, level = slot / mb->p, err;
    if (b->len == 0)
        return MPI_SUCCESS;
    if (hop == mb->me) { /* to oneself: the local list, processed by the engine */
        if ((err = iso__grow(&mb->local, &mb->local_cap, mb->nlocal + 1, sizeof *mb->local)) !=
            MPI_SUCCESS)
            return err;
        mb->local[mb->nlocal++] = *b;
        mb->local_bytes += b->len;
    } else {
        iso_mb_send *s;
        if ((err = iso__grow(&mb->sends, &mb->sends_cap, mb->nsends + 1, sizeof *mb->sends)) !=
            MPI_SUCCESS)
            return err;
        s = &mb->sends[mb->nsends];
        if ((err = MPI_Isend(b->data, (int)b->len, MPI_BYTE, hop, (int)(mb->epoch & 1),
                               mb->lcomm[level], &s->req)) != MPI_SUCCESS)
            return err;
        s->data = b->data;
        s->len = b->len;
        s->level = level;
        mb->nsends++;
        mb->inflight += b->len;
        mb->inflight_level[level] += b->len;
        if ((long long)mb->inflight > mb->stats.peak_inflight)
            mb->stats.peak_inflight = (long long)mb->inflight;
        mb->sent++;
        mb->stats.msgs++;
        mb->stats.bytes += (long long)b->len;
        if (mb->routes.loc->node[hop] != mb->routes.loc->node[mb->me]) {
            mb->stats.remote_msgs++;
            mb->stats.remote_bytes += (long long)b->len;
        }
    }
    mb->queued -= b->len;
    *b = (iso_mb_buf){NULL, 0, 0};
    /* drop slot from the filled list (order does not matter) */
    for (int i = 0; i < mb->nfilled; i++)
        if (mb->filled[i] == slot) {
            mb->filled[i] = mb->filled[--mb->nfilled];
            break;
        }
    return MPI_SUCCESS;
}

int iso__mb_post_all(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    while (mb->nfilled > 0 && !err)
        err = iso__mb_post(mb, mb->filled[mb->nfilled - 1]);
    return err;
}

int iso__mb_enqueue(struct iso_mailbox_s *mb, int hop, int level, int src, int dst,
                    const void *msg, size_t bytes)
{
    /* to oneself: one list, whatever the level (the records are delivered) */
    int slot = hop == mb->me ? hop : level * mb->p + hop, err;
    iso_mb_buf *b = &mb->queue[slot];
    size_t rec = ISO_MB_RECORD(bytes);
    iso_mb_header h = {src, dst, (uint32_t)bytes, 0};
    if (level < 0 || level >= mb->levels)
        return iso__error_msg(ISO_ERR_INTERN, "mailbox: a record of level %d (routing has %d)",
                              level, mb->levels);
    if (b->len > 0 && b->len + rec > mb->bufmax && (err = iso__mb_post(mb, slot)) != MPI_SUCCESS)
        return err;
    if (b->len == 0) {
        /* a fresh buffer: bufmax bounds it, allocate what this record needs
         * and grow by doubling (most buffers stay far below bufmax) */
        size_t want = rec < 256 ? 256 : rec;
        if (want > mb->bufmax)
            want = mb->bufmax;
        if (b->cap < want) {
            char *d = realloc(b->data, want);
            if (d == NULL)
                return iso__error(ISO_ERR_NOMEM);
            b->data = d;
            b->cap = want;
        }
        mb->filled[mb->nfilled++] = slot;
    } else if (b->len + rec > b->cap) {
        size_t want = b->cap * 2 < b->len + rec ? b->len + rec : b->cap * 2;
        char *d;
        if (want > mb->bufmax)
            want = mb->bufmax;
        if ((d = realloc(b->data, want)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        b->data = d;
        b->cap = want;
    }
    memcpy(b->data + b->len, &h, ISO_MB_HDR);
    if (bytes > 0)
        memcpy(b->data + b->len + ISO_MB_HDR, msg, bytes);
    if (rec > ISO_MB_HDR + bytes) /* padding: defined bytes on the wire */
        memset(b->data + b->len + ISO_MB_HDR + bytes, 0, rec - ISO_MB_HDR - bytes);
    b->len += rec;
    mb->queued += rec;
    if ((long long)mb->queued > mb->stats.peak_queued)
        mb->stats.peak_queued = (long long)mb->queued;
    mb->stats.records++;
    if (mb->queued >= mb->capacity)
        return iso__mb_post_all(mb);
    return MPI_SUCCESS;
}

void iso__mb_buffers_free(struct iso_mailbox_s *mb)
{
    if (mb->queue)
        for (int q = 0; q < mb->levels * mb->p; q++)
            free(mb->queue[q].data);
    for (int i = 0; i < mb->nlocal; i++)
        free(mb->local[i].data);
    free(mb->queue);
    free(mb->filled);
    free(mb->local);
    free(mb->sends);
}
