/* The personalized SDDE (Geyko et al. 2023, algorithm 1): every process
 * posts its sends, then a reduce-scatter of per-destination message counts
 * tells each process how many messages to receive; it probes for that
 * many.  The reduce-scatter is nonblocking, so the request progresses
 * while it runs.  Among at most PAIRWISE_MAX processes of one node it is
 * done by hand, one count message to every other process: one round of
 * shared-memory messages as small as the collective's, without the cost
 * of setting up a nonblocking collective (MPICH 4.0: about 5,000
 * instructions, more than the rest of a call at 2 processes).  Across
 * nodes the collective stays: its log p rounds, not a message to every
 * process, keep the inter-node messages of a call to the data's (what the
 * locality algorithms aggregate).  The choice depends on the number of
 * processes and nodes only, which all processes know alike. */
#include "sparse/sparse.h"
#include <stdlib.h>

#define PAIRWISE_MAX 8

enum { COUNTING, RECEIVING, SENDING };

/* The reduce-scatter by hand: tally[q] to every process q, tally[p + q]
 * from it (this process's own count copied), on the exchange's count
 * tag. */
static int post_counts(iso_xchg *x, int p)
{
    int rank, err, n = 0, tag = ISO_SDDE_COUNT_TAG(x->tag);
    if ((err = MPI_Comm_rank(x->comm, &rank)) != MPI_SUCCESS)
        return err;
    if ((x->counts = malloc(sizeof(MPI_Request) * 2 * (size_t)p)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    x->tally[p + rank] = x->tally[rank];
    for (int q = 0; q < p; q++) /* receives first: counts[0 .. p-2] */
        x->counts[q] = x->counts[p - 1 + q] = MPI_REQUEST_NULL;
    x->ncounts = 2 * (p - 1);
    for (int q = 0; q < p && err == MPI_SUCCESS; q++)
        if (q != rank)
            err = MPI_Irecv(&x->tally[p + q], 1, MPI_INT, q, tag, x->comm, &x->counts[n++]);
    for (int q = 0; q < p && err == MPI_SUCCESS; q++)
        if (q != rank)
            err = MPI_Isend(&x->tally[q], 1, MPI_INT, q, tag, x->comm, &x->counts[n++]);
    return err;
}

static int begin(iso_xchg *x, int n, const iso_outmsg *msgs)
{
    int p, err;
    if ((err = MPI_Comm_size(x->comm, &p)) != MPI_SUCCESS)
        return err;
    if ((x->tally = calloc(2 * (size_t)p, sizeof(int))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < n; i++)
        x->tally[msgs[i].dest]++;
    x->state = COUNTING;
    if ((err = iso__xchg_post(x, n, msgs, 0)) != MPI_SUCCESS)
        return err;
    if (x->one_node && p <= PAIRWISE_MAX)
        return post_counts(x, p);
    return MPI_Ireduce_scatter_block(x->tally, &x->incoming, 1, MPI_INT, MPI_SUM, x->comm,
                                     &x->coll);
}

/* Tests (block: waits for) the count messages; once complete, their sum
 * is x->incoming. */
static int counts_done(iso_xchg *x, int block, int *flag)
{
    int err, p = x->ncounts / 2 + 1;
    if ((err = iso__requests_done(x->ncounts, x->counts, block, flag)) != MPI_SUCCESS || !*flag)
        return err;
    x->incoming = 0;
    for (int q = 0; q < p; q++)
        x->incoming += x->tally[p + q];
    return MPI_SUCCESS;
}

static int step(iso_xchg *x, int block, int *done)
{
    int flag = 1, got, err;
    *done = 0;
    if (x->state == COUNTING) {
        /* polled: receive what arrives early meanwhile; blocking (alone),
         * the counts first: early messages wait in MPI, and the probe that
         * would mostly find nothing costs as much as a receive */
        if (!block && (err = iso__xchg_receive(x, 0, &got)) != MPI_SUCCESS)
            return err;
        if (x->counts != NULL)
            err = counts_done(x, block, &flag);
        else
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
