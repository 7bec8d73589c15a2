/* Argument checks of the collectives, and the agreement of persistent v/w
 * forms.  Errors are found locally and returned as MPI codes before any
 * communication starts, except in the agreement, which every process joins
 * so that a bad argument on one process fails the call on all. */
#include "coll/coll.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Checks the blocks of one side (name: "send" or "recv") that will move
 * (those whose peer exists). */
static int check_side(iso_side *sd, const char *name, int s, const int *peers)
{
    MPI_Aint lb;
    if (sd->layout == ISO_LAYOUT_W) {
        if (s > 0 && (sd->counts == NULL || sd->adispls == NULL || sd->types == NULL))
            return iso__error_msg(ISO_ERR_ARG, "%scounts, %s displacements or %stypes is NULL",
                                  name, name, name);
        for (int i = 0; i < s; i++) {
            if (peers[i] == MPI_PROC_NULL)
                continue;
            if (sd->counts[i] < 0)
                return iso__error_msg(ISO_ERR_COUNT, "%scounts[%d] = %d", name, i, sd->counts[i]);
            if (sd->types[i] == MPI_DATATYPE_NULL)
                return iso__error_msg(ISO_ERR_TYPE, "%stypes[%d] is MPI_DATATYPE_NULL", name, i);
        }
        return MPI_SUCCESS;
    }
    if (sd->type == MPI_DATATYPE_NULL)
        return iso__error_msg(ISO_ERR_TYPE, "%stype is MPI_DATATYPE_NULL", name);
    if (sd->layout == ISO_LAYOUT_V) {
        if (s > 0 && (sd->counts == NULL || sd->idispls == NULL))
            return iso__error_msg(ISO_ERR_ARG, "%scounts or %s displacements is NULL", name, name);
        for (int i = 0; i < s; i++)
            if (peers[i] != MPI_PROC_NULL && sd->counts[i] < 0)
                return iso__error_msg(ISO_ERR_COUNT, "%scounts[%d] = %d", name, i, sd->counts[i]);
    } else if (sd->count < 0) {
        return iso__error_msg(ISO_ERR_COUNT, "%scount = %d", name, sd->count);
    }
    if (MPI_Type_get_extent(sd->type, &lb, &sd->extent) != MPI_SUCCESS)
        return iso__error_msg(ISO_ERR_TYPE, "%stype is not a valid datatype", name);
    return MPI_SUCCESS;
}

static int check_reduction(const iso_args *a, const iso_nbh *nb)
{
    int commute = 0;
    MPI_Count size, vsize;
    if (a->op == MPI_OP_NULL || MPI_Op_commutative(a->op, &commute) != MPI_SUCCESS)
        return iso__error_msg(ISO_ERR_OP, "op is MPI_OP_NULL or not an operation");
    if (!commute)
        return iso__error_msg(ISO_ERR_OP, "op is not commutative");
    if (a->coll != ISO_SCATTER_REDUCE)
        return MPI_SUCCESS;
    /* each vector must carry count x datatype */
    if (MPI_Type_size_x(a->recv.type, &size) != MPI_SUCCESS)
        return iso__error_msg(ISO_ERR_TYPE, "datatype is not a valid datatype");
    for (int i = 0; i < nb->s; i++) {
        if (nb->targets[i] == MPI_PROC_NULL)
            continue;
        if (MPI_Type_size_x(a->send.types[i], &vsize) != MPI_SUCCESS)
            return iso__error_msg(ISO_ERR_TYPE, "sendtypes[%d] is not a valid datatype", i);
        if (vsize * a->send.counts[i] != size * a->recv.count)
            return iso__error_msg(ISO_ERR_COUNT, "vector %d has %lld bytes, count x datatype %lld",
                                  i, (long long)vsize * a->send.counts[i],
                                  (long long)size * a->recv.count);
    }
    return MPI_SUCCESS;
}

/* ---- aliasing ----------------------------------------------------------
 * The bytes a send block reads and those a receive block writes must not
 * overlap (erroneous in MPI too).  Checked exactly where it is cheap: for
 * dense blocks, whose count x type covers its whole true extent, the byte
 * ranges are the blocks.  Blocks with gaps are left alone: their ranges may
 * interleave without sharing a byte, as the zero-copy halos of stencil/ do
 * (a boundary box and a halo box in the same rows).  O(s log s). */
typedef struct {
    MPI_Aint lo, hi; /* absolute addresses [lo, hi) */
    int block;       /* its index in the side's blocks */
    MPI_Aint top;    /* after sorting: the largest hi of this span and those before it */
    int top_block;   /* whose hi that is */
} span_t;

/* The dense blocks of one side whose peer exists, as address ranges.  The
 * blocks of a strided or same side are all count x type: their span and
 * size are asked of MPI once, not per block (a per-call cost of the
 * nonblocking and persistent forms). */
static int dense_spans(const iso_side *sd, const void *buf, int s, const int *peers,
                       span_t *out, int *n)
{
    int err = MPI_SUCCESS, uniform = sd->layout == ISO_LAYOUT_STRIDED ||
                                     sd->layout == ISO_LAYOUT_SAME, known = 0;
    MPI_Aint lo = 0, span = 0;
    MPI_Count size = 0;
    *n = 0;
    for (int i = 0; i < s && !err; i++) {
        iso_loc l;
        if (peers[i] == MPI_PROC_NULL)
            continue;
        l = iso__block(sd, 0, i);
        if (l.count <= 0)
            continue;
        if (!known && ((err = iso__type_span(l.count, l.type, &lo, &span)) ||
                       (err = MPI_Type_size_x(l.type, &size))))
            continue;
        known = uniform;
        if (span == 0 || size * l.count != span) /* empty, or gaps */
            continue;
        out[*n].lo = (MPI_Aint)(uintptr_t)buf + l.disp + lo;
        out[*n].hi = out[*n].lo + span;
        out[*n].block = i;
        ++*n;
        if (sd->layout == ISO_LAYOUT_SAME)
            break; /* every block is the same */
    }
    return err;
}

static int cmp_span(const void *x, const void *y)
{
    MPI_Aint a = ((const span_t *)x)->lo, b = ((const span_t *)y)->lo;
    return (a > b) - (a < b);
}

/* Does some range of a overlap some range of b?  1 with the indices of
 * one such pair of blocks; b is sorted and given its prefix maxima. */
static int any_overlap(const span_t *a, int na, span_t *b, int nb, int *ablock, int *bblock)
{
    qsort(b, (size_t)nb, sizeof *b, cmp_span);
    for (int k = 0; k < nb; k++) {
        b[k].top = b[k].hi;
        b[k].top_block = b[k].block;
        if (k > 0 && b[k].top < b[k - 1].top) {
            b[k].top = b[k - 1].top;
            b[k].top_block = b[k - 1].top_block;
        }
    }
    for (int i = 0; i < na; i++) {
        int lo = 0, hi = nb; /* the b ranges starting before a[i] ends: [0, lo) */
        while (lo < hi) {
            int mid = lo + (hi - lo) / 2;
            if (b[mid].lo < a[i].hi)
                lo = mid + 1;
            else
                hi = mid;
        }
        if (lo > 0 && b[lo - 1].top > a[i].lo) {
            *ablock = a[i].block;
            *bblock = b[lo - 1].top_block;
            return 1;
        }
    }
    return 0;
}

static int check_aliasing(const iso_args *a, int nsend, const int *targets, int nrecv,
                          const int *sources)
{
    span_t *snd = malloc(sizeof *snd * ((size_t)nsend + 1));
    span_t *rcv = malloc(sizeof *rcv * ((size_t)nrecv + 1));
    int ns = 0, nr = 0, sblock, rblock, err;
    if (snd == NULL || rcv == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    else if ((err = dense_spans(&a->send, a->sendbuf, nsend, targets, snd, &ns)) ==
                 MPI_SUCCESS &&
             (err = dense_spans(&a->recv, a->recvbuf, nrecv, sources, rcv, &nr)) ==
                 MPI_SUCCESS &&
             ns > 0 && nr > 0 && any_overlap(snd, ns, rcv, nr, &sblock, &rblock))
        err = iso__error_msg(ISO_ERR_ARG,
                             "send and receive regions overlap: send block %d and receive "
                             "block %d share bytes in memory (erroneous in MPI too)",
                             sblock, rblock);
    free(snd);
    free(rcv);
    return err;
}

int iso__args_validate_lists(iso_args *a, int nsend, const int *targets, int nrecv,
                             const int *sources)
{
    int e;
    if (a->sendbuf == MPI_IN_PLACE || a->recvbuf == MPI_IN_PLACE)
        return iso__error_msg(ISO_ERR_ARG, "MPI_IN_PLACE is not supported");
    if ((e = check_side(&a->send, "send", nsend, targets)) != MPI_SUCCESS ||
        (e = check_side(&a->recv, "recv", nrecv, sources)) != MPI_SUCCESS)
        return e;
    return check_aliasing(a, nsend, targets, nrecv, sources);
}

int iso__args_validate(iso_args *a, const iso_nbh *nb)
{
    int e;
    if (a->sendbuf == MPI_IN_PLACE || a->recvbuf == MPI_IN_PLACE)
        return iso__error_msg(ISO_ERR_ARG, "MPI_IN_PLACE is not supported");
    if ((e = check_side(&a->send, "send", nb->s, nb->targets)) != MPI_SUCCESS ||
        (e = check_side(&a->recv, "recv", nb->s, nb->sources)) != MPI_SUCCESS)
        return e;
    if (iso__is_reduction(a->coll) && (e = check_reduction(a, nb)) != MPI_SUCCESS)
        return e;
    return check_aliasing(a, nb->s, nb->targets, nb->s, nb->sources);
}

/* Is a an alltoall/allgather v or w form? */
int iso__args_irregular(const iso_args *a)
{
    return (a->coll == ISO_ALLTOALL || a->coll == ISO_ALLGATHER) &&
           (a->send.layout == ISO_LAYOUT_V || a->send.layout == ISO_LAYOUT_W ||
            a->recv.layout == ISO_LAYOUT_V || a->recv.layout == ISO_LAYOUT_W);
}

/* Persistent v/w forms: the processes agree on one block size for the cost
 * model (the largest over processes of the mean bytes per block sent), so
 * that auto can combine them.  One agreement on the private communicator
 * (core/agree.c: an _init call is collective, and a bad argument on one
 * process fails it on all; e: this process's error, or MPI_SUCCESS). */
int iso__args_agree(iso_priv *priv, const iso_nbh *nb, iso_args *a, int e)
{
    iso_agreement ag = {.nmax = 1};
    double mean = 0.0;
    int n = 0, ready, err;
    for (int i = 0; i < nb->s && e == MPI_SUCCESS; i++) {
        iso_loc l;
        MPI_Count size;
        if (nb->targets[i] == MPI_PROC_NULL)
            continue;
        l = iso__block(&a->send, ISO_BUF_SEND, i);
        if (MPI_Type_size_x(l.type, &size) != MPI_SUCCESS) {
            e = iso__error_msg(ISO_ERR_TYPE, "send block %d: not a valid datatype", i);
            break; /* and still join the agreement */
        }
        mean += (double)size * l.count;
        n++;
    }
    mean = n > 0 ? mean / n : 0.0;
    /* A non-negative double's bits, read as a signed 64-bit integer, order
     * as the doubles do: the maximum travels exactly. */
    memcpy(&ag.max[0], &mean, sizeof mean);
    if ((err = iso__priv_ready(priv, 1, &ready)) != MPI_SUCCESS ||
        (err = iso__agree(priv->comm, e, &ag)) != MPI_SUCCESS)
        return err;
    memcpy(&a->agreed_bytes, &ag.max[0], sizeof a->agreed_bytes);
    return MPI_SUCCESS;
}
