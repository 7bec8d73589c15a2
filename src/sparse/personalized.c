/* The personalized SDDE (Geyko et al. 2023, algorithm 1): every process
 * posts its sends, then a reduce-scatter of per-destination message counts
 * tells each process how many messages to receive; it probes for that
 * many.  The reduce-scatter is nonblocking, so the request progresses
 * while it runs. */
#include "sparse/sparse.h"
#include <stdlib.h>

enum { COUNTING, RECEIVING, SENDING };

static int begin(iso_xchg *x, int n, const iso_outmsg *msgs)
{
    int p, err;
    if ((err = MPI_Comm_size(x->comm, &p)) != MPI_SUCCESS)
        return err;
    if ((x->tally = calloc((size_t)p, sizeof(int))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < n; i++)
        x->tally[msgs[i].dest]++;
    x->state = COUNTING;
    if ((err = iso__xchg_post(x, n, msgs, 0)) != MPI_SUCCESS)
        return err;
    return MPI_Ireduce_scatter_block(x->tally, &x->incoming, 1, MPI_INT, MPI_SUM, x->comm,
                                     &x->coll);
}

static int step(iso_xchg *x, int block, int *done)
{
    int flag = 1, got, err;
    *done = 0;
    if (x->state == COUNTING) { /* receive what arrives early meanwhile */
        if ((err = iso__xchg_receive(x, 0, &got)) != MPI_SUCCESS)
            return err;
        err = block ? MPI_Wait(&x->coll, MPI_STATUS_IGNORE)
                    : MPI_Test(&x->coll, &flag, MPI_STATUS_IGNORE);
        if (err != MPI_SUCCESS || !flag)
            return err;
        x->state = RECEIVING;
        x->limit = x->incoming;
    }
    while (x->state == RECEIVING) {
        if (x->in.n > x->incoming)
            return iso__error(ISO_ERR_INTERN);
        if (x->in.n == x->incoming) {
            x->state = SENDING;
            break;
        }
        if ((err = iso__xchg_receive(x, block, &got)) != MPI_SUCCESS)
            return err;
        if (!got)
            return MPI_SUCCESS;
    }
    return iso__xchg_sends_done(x, block, done);
}

const iso_discovery iso__personalized = {begin, step};

int iso__sdde_personalized(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    return iso__sdde_direct(c, comm, &iso__personalized, out);
}
