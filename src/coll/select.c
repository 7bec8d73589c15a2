/* Choosing what runs: the algorithm (explicit name, else auto by the cost
 * model) and the message mode of combining schedules. */
#include "coll/coll.h"

/* Bytes per block, when every process has the same (regular forms) or the
 * processes agreed on one (persistent v/w forms). */
int iso__uniform_block_bytes(const iso_args *a, double *bytes)
{
    MPI_Count size; /* blocks may exceed 2 GiB */
    if (iso__is_reduction(a->coll)) { /* validated: count x datatype */
        if (MPI_Type_size_x(a->recv.type, &size) != MPI_SUCCESS)
            return 0;
        *bytes = (double)size * a->recv.count;
        return 1;
    }
    if (a->send.layout == ISO_LAYOUT_V || a->send.layout == ISO_LAYOUT_W ||
        a->recv.layout == ISO_LAYOUT_V || a->recv.layout == ISO_LAYOUT_W) {
        *bytes = a->agreed_bytes;
        return a->agreed_bytes > 0;
    }
    if (MPI_Type_size_x(a->send.type, &size) != MPI_SUCCESS)
        return 0;
    *bytes = (double)size * a->send.count;
    return 1;
}

/* The message mode for a combining schedule with figures f: the requested
 * one, or under auto the cheaper by the cost model.  An explicit mode that
 * cannot carry these blocks is an error (only auto chooses), unless the
 * schedule combines no messages at all (s = 0). */
static int choose_mode(const iso_figures *f, const iso_args *a, iso_msg_mode mode, int reused,
                       iso_msg_mode *chosen)
{
    double bytes;
    /* structural: every process has the same figures, so all agree */
    if (mode == ISO_MODE_DATATYPE && !iso__datatype_possible(a) && f->msgs > 0)
        return iso__error_msg(ISO_ERR_ALGORITHM,
                              "iso_combine=datatype cannot combine the v and w forms of "
                              "alltoall and allgather (processes that forward a block do not "
                              "know its size): use pack, auto or direct");
    if (mode == ISO_MODE_PACK || !iso__datatype_possible(a))
        *chosen = ISO_MODE_PACK;
    else if (mode == ISO_MODE_DATATYPE || !iso__uniform_block_bytes(a, &bytes))
        *chosen = ISO_MODE_DATATYPE;
    else if (!iso__pack_fits(f, bytes)) /* messages over 2 GiB cannot be packed */
        *chosen = ISO_MODE_DATATYPE;
    else
        *chosen = iso__cost(f, bytes, ISO_MODE_DATATYPE, reused, 0) <=
                          iso__cost(f, bytes, ISO_MODE_PACK, reused, 0)
                      ? ISO_MODE_DATATYPE
                      : ISO_MODE_PACK;
    return MPI_SUCCESS;
}

int iso__algorithm_select(iso_nbh *nb, const iso_args *a, int requested, iso_msg_mode mode,
                          int reused, int *index, iso_msg_mode *chosen)
{
    double bytes, best;
    *chosen = ISO_MODE_PACK;
    if (requested != ISO_ALG_AUTO) {
        iso_sched *s;
        iso_figures f;
        int err;
        if (requested < 0 || requested >= iso__nalgorithms)
            return iso__error_msg(ISO_ERR_ALGORITHM, "algorithm index %d", requested);
        *index = requested;
        if (!iso__algorithms[requested].shared)
            return MPI_SUCCESS; /* direct: no combined messages */
        if ((err = iso__schedule_get(nb, a, requested, &s)) != MPI_SUCCESS)
            return err;
        f = iso__sched_figures(s);
        err = choose_mode(&f, a, mode, reused, chosen);
        iso__sched_release(s);
        return err;
    }
    *index = 0; /* direct */
    /* The v and w forms have per-process counts: processes could disagree
     * on the cheapest schedule, so they stay with direct unless the
     * processes agreed on a block size (persistent init). */
    if (!iso__uniform_block_bytes(a, &bytes))
        return MPI_SUCCESS;
    best = iso__cost_direct(nb->s, bytes);
    for (int k = 1; k < iso__nalgorithms; k++) {
        iso_figures f;
        iso_msg_mode m;
        double c;
        if (!iso__algorithms[k].shared)
            continue;
        /* the figures only: only the chosen schedule gets built */
        if (iso__figures_get(nb, a, k, &f) != MPI_SUCCESS)
            continue; /* cannot make it: not a candidate */
        if (choose_mode(&f, a, mode, reused, &m) != MPI_SUCCESS)
            continue; /* cannot run in the requested mode: not a candidate */
        c = iso__cost(&f, bytes, m, reused, !iso__datatype_possible(a));
        if (m == ISO_MODE_PACK && !iso__pack_fits(&f, bytes))
            c = best; /* its messages would exceed pack mode's 2 GiB */
        if (c < best) {
            best = c;
            *index = k;
            *chosen = m;
        }
    }
    if (nb->tune > 0) /* a winner measured for this call shape overrides the model */
        iso__tune_known(nb, a, mode, reused, index, chosen);
    return MPI_SUCCESS;
}

int iso__algorithm_candidates(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int reused,
                              iso_candidate *out)
{
    double bytes = 0.0;
    int n = 0, probed = !iso__datatype_possible(a), uniform = iso__uniform_block_bytes(a, &bytes);
    out[n++] = (iso_candidate){0, ISO_MODE_PACK, iso__cost_direct(nb->s, bytes)};
    if (!uniform) /* as auto: direct only */
        return n;
    for (int k = 1; k < iso__nalgorithms; k++) {
        iso_figures f;
        iso_msg_mode m;
        if (!iso__algorithms[k].shared || iso__figures_get(nb, a, k, &f) != MPI_SUCCESS ||
            choose_mode(&f, a, mode, reused, &m) != MPI_SUCCESS)
            continue;
        /* under iso_combine=auto both modes are candidates where both can run */
        for (int both = 0; both < 2; both++) {
            iso_msg_mode mm = both ? (m == ISO_MODE_PACK ? ISO_MODE_DATATYPE : ISO_MODE_PACK) : m;
            if (both && (mode != ISO_MODE_AUTO || probed || !iso__pack_fits(&f, bytes)))
                break;
            if (mm == ISO_MODE_PACK && !iso__pack_fits(&f, bytes))
                continue;
            out[n++] = (iso_candidate){k, mm, iso__cost(&f, bytes, mm, reused, probed)};
        }
    }
    return n;
}
