/* The nonblocking consensus SDDE, NBX (Hoefler, Siebert, Lumsdaine 2010;
 * Geyko et al. 2023, algorithm 2): synchronous sends, which complete only
 * once the destination has matched them; probe and receive until this
 * process's sends are complete, then enter a nonblocking barrier and keep
 * receiving until the barrier completes.  When it does, every process's
 * sends have been matched, so every message for this process is in. */
#include "sparse/sparse.h"

enum { SENDING, BARRIER };

static int begin(iso_xchg *x, int n, const iso_outmsg *msgs)
{
    x->state = SENDING;
    return iso__xchg_post(x, n, msgs, 1);
}

/* Busy-polls when blocking: neither the receives nor the barrier can be
 * waited for alone. */
static int step(iso_xchg *x, int block, int *done)
{
    int flag, got, err;
    *done = 0;
    do {
        if ((err = iso__xchg_receive(x, 0, &got)) != MPI_SUCCESS)
            return err;
        if (x->state == SENDING) {
            if ((err = iso__xchg_sends_done(x, 0, &flag)) != MPI_SUCCESS)
                return err;
            if (flag) {
                if ((err = MPI_Ibarrier(x->comm, &x->coll)) != MPI_SUCCESS)
                    return err;
                x->state = BARRIER;
            }
        } else {
            if ((err = MPI_Test(&x->coll, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                return err;
            if (flag) {
                *done = 1;
                return MPI_SUCCESS;
            }
        }
    } while (block);
    return MPI_SUCCESS;
}

const iso_discovery iso__nbx = {begin, step};

int iso__sdde_nbx(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    return iso__sdde_direct(c, comm, &iso__nbx, out);
}
