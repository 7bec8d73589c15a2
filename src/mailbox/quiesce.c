/* Termination detection of the mailbox (DESIGN.md, "Mailbox",
 * "Termination"): Mattern's four-counter method with the waves as
 * nonblocking allreduces.
 *
 * Every process counts S, the buffers it has posted to other processes,
 * and R, the buffers it has received and processed.  A wave is one
 * MPI_Iallreduce (sum) of (S, R), to which a process contributes only when
 * it is idle: nothing queued, nothing to itself waiting, no callback
 * running.  While a wave is under way the process keeps receiving,
 * processing and sending.  The mailbox is empty when wave k+1's sum of S
 * equals wave k's sum of R (and wave k+1's own sums agree).
 *
 * Why that is correct: let t be the moment the last process contributed to
 * wave k.  Every contribution to wave k+1 comes after t (a process starts
 * wave k+1 only after its wave k completed, which needs every
 * contribution).  Counters only grow, and a buffer is counted sent before
 * it can be received, so R_k <= R(t) <= S(t) <= S_{k+1}.  S_{k+1} = R_k
 * forces R(t) = S(t) -- no buffer in transit at t -- and R(t) = R_k: no
 * process received anything between its wave-k contribution and t, so
 * each was still idle at t (a process in wait_empty leaves idleness only
 * by receiving).  Idle everywhere and nothing in transit is final: nothing
 * can send again.  Conversely, once that holds, two more waves see equal
 * sums, so the loop ends.  Every process sees the same sums and decides
 * the same, in the same wave.
 *
 * Buffers held by flow control (engine.c) are counted received only when
 * they are processed: until then they are in transit for the waves, and
 * processing one is receiving (it leaves idleness).  The flow control's
 * own argument (DESIGN.md, "Flow control") says that they are processed
 * eventually, so the waves still end. */
#include "mailbox/mailbox.h"

/* Post and process until this process is idle (nothing queued, nothing to
 * itself), keeping at most capacity bytes in flight. */
static int become_idle(struct iso_mailbox_s *mb)
{
    int err = MPI_SUCCESS;
    while (!err && (mb->queued > 0 || mb->nlocal > 0))
        err = iso__mb_exchange(mb, 1);
    return err;
}

int iso__mb_quiesce(struct iso_mailbox_s *mb)
{
    int err;
    mb->have_last = 0;
    /* Buffers of this epoch that arrived (held) while the previous
     * wait_empty was ending are processed from here on (progress takes a
     * held buffer once its tag is the epoch's); until then they count as
     * sent and not received, so no wave can see S = R without them. */
    if ((err = iso__mb_progress(mb, 0)) != MPI_SUCCESS)
        return err;
    for (;;) {
        if ((err = become_idle(mb)) != MPI_SUCCESS)
            return err;
        mb->wave_in[0] = mb->sent;
        mb->wave_in[1] = mb->received;
        if ((err = MPI_Iallreduce(mb->wave_in, mb->wave_out, 2, MPI_LONG_LONG, MPI_SUM, mb->waves,
                                  &mb->wave)) != MPI_SUCCESS)
            return err;
        mb->wave_done = 0;
        while (!mb->wave_done) {
            /* blocks in MPI_Waitsome (arrivals, sends, or the wave), then
             * sends what arrivals queued at once, within the flow control */
            if ((err = iso__mb_progress(mb, 1)) != MPI_SUCCESS ||
                (err = iso__mb_exchange(mb, 1)) != MPI_SUCCESS)
                return err; /* the wave may stay posted: the mailbox is broken now */
        }
        if (mb->have_last && mb->wave_out[0] == mb->last_out[1] &&
            mb->wave_out[0] == mb->wave_out[1])
            break;
        mb->last_out[0] = mb->wave_out[0];
        mb->last_out[1] = mb->wave_out[1];
        mb->have_last = 1;
    }
    /* the next epoch: held buffers of it are processed from now on */
    mb->epoch++;
    /* every buffer sent was received: the sends complete at once */
    return iso__mb_sends_complete(mb);
}
