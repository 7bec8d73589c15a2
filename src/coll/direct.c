/* direct: one message per existing neighbor, all in one round (paper,
 * section 5.1).  Receives are posted in neighbor order and sends in neighbor
 * order on one tag: where several indices connect the same pair of
 * processes (periodic dimensions of size 1 or 2, repeated offsets), MPI's
 * non-overtaking rule matches block i with slot i, because the indices i
 * with X + C^i = Y are exactly those with Y - C^i = X. */
#include "coll/coll.h"

/* Reductions: the first existing source lands in recvbuf, the others in
 * scratch slots that are then combined into recvbuf. */
static int build_reduce_receives(const iso_nbh *nb, const iso_args *a, iso_sched *out, int *nslots,
                                 MPI_Aint *slot_bytes, MPI_Aint *slot_shift)
{
    MPI_Aint lo;
    int err, first = 1;
    iso_loc whole = iso__block(&a->recv, ISO_BUF_RECV, 0);
    if ((err = iso__type_span(a->recv.count, a->recv.type, &lo, slot_bytes)) != MPI_SUCCESS)
        return err;
    *slot_shift = -lo;
    *nslots = 0;
    for (int i = 0; i < nb->s; i++) {
        iso_loc l = whole;
        if (nb->sources[i] == MPI_PROC_NULL)
            continue;
        if (!first) {
            l.buf = ISO_BUF_SCRATCH;
            l.disp = *nslots * *slot_bytes + *slot_shift;
            ++*nslots;
        }
        first = 0;
        if ((err = iso__sched_recv(out, nb->sources[i], 0, l)) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int iso__build_direct(const iso_nbh *nb, const iso_args *a, iso_sched *out)
{
    int reduction = iso__is_reduction(a->coll);
    int nslots = 0, err = MPI_SUCCESS;
    MPI_Aint slot_bytes = 0, slot_shift = 0;

    if (reduction)
        err = build_reduce_receives(nb, a, out, &nslots, &slot_bytes, &slot_shift);
    else
        for (int i = 0; i < nb->s && !err; i++)
            if (nb->sources[i] != MPI_PROC_NULL)
                err = iso__sched_recv(out, nb->sources[i], 0,
                                      iso__block(&a->recv, ISO_BUF_RECV, i));
    for (int i = 0; i < nb->s && !err; i++)
        if (nb->targets[i] != MPI_PROC_NULL)
            err = iso__sched_send(out, nb->targets[i], 0, iso__block(&a->send, ISO_BUF_SEND, i));
    /* combine the other contributions (local ops after the round) */
    for (int k = 0; k < nslots && !err; k++) {
        iso_loc from = iso__block(&a->recv, ISO_BUF_SCRATCH, 0);
        from.disp = k * slot_bytes + slot_shift;
        err = iso__sched_reduce(out, from, iso__block(&a->recv, ISO_BUF_RECV, 0), a->op);
    }
    if (!err)
        err = iso__sched_end_round(out);
    out->scratch_bytes = (size_t)(nslots * slot_bytes);
    out->ntags = 1; /* one tag; order matches repeated pairs */
    out->struct_phases = 1;
    out->struct_msgs = out->struct_hops = nb->s;
    return err;
}
