/* Datatype mode of combined messages (DESIGN.md, "Combined messages"): no
 * copies by the library; each message is one struct type over MPI_BOTTOM
 * listing the places of its blocks, and blocks that only pass through land
 * in scratch vectors.  Also the reduction accumulators, which are vectors
 * of the same shape in both modes. */
#include "sched/exec.h"
#include <stdlib.h>

/* The vectors (receive count x datatype) of the schedule: its reduction
 * accumulators and, in datatype mode, its scratch vectors, each spanning the
 * true extent of the vector. */
int iso__vectors_alloc(iso_sreq *r)
{
    MPI_Aint lo, span;
    size_t bytes;
    int n = r->sched->nacc, err;
    if ((err = iso__type_span(r->args.recv.count, r->args.recv.type, &lo, &span)) != MPI_SUCCESS)
        return err;
    r->vec_span = (size_t)span;
    r->vec_shift = -lo;
    if ((r->acc = calloc((size_t)n + 1, sizeof *r->acc)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int k = 0; k < n; k++)
        if ((r->acc[k] = malloc(r->vec_span + 1)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
    r->vec_stride = (r->vec_span + 63) & ~(size_t)63;
    if (!r->datatype)
        return MPI_SUCCESS;
    if (__builtin_mul_overflow(r->vec_stride, (size_t)r->sched->nvec, &bytes) ||
        (r->vec = malloc(bytes + 1)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    return MPI_SUCCESS;
}

void iso__vectors_free(iso_sreq *r)
{
    if (r->acc)
        for (int k = 0; k < r->sched->nacc; k++)
            free(r->acc[k]);
    free(r->acc);
    free(r->vec);
}

/* One struct type over MPI_BOTTOM per message, listing the places of its
 * blocks in message order (empty blocks left out: they add nothing to the
 * type signature). */
int iso__msgtypes_build(iso_sreq *r)
{
    const iso_sched *s = r->sched;
    int maxn = 1, err = MPI_SUCCESS, *len;
    MPI_Aint *disp;
    MPI_Datatype *types;
    for (int m = 0; m < s->nmsgs; m++)
        if (s->msgs[m].n > maxn)
            maxn = s->msgs[m].n;
    r->msgtype = malloc(sizeof(MPI_Datatype) * (size_t)(s->nmsgs + 1));
    len = malloc(sizeof(int) * (size_t)maxn);
    disp = malloc(sizeof(MPI_Aint) * (size_t)maxn);
    types = malloc(sizeof(MPI_Datatype) * (size_t)maxn);
    if (!r->msgtype || !len || !disp || !types)
        err = iso__error(ISO_ERR_NOMEM);
    for (int m = 0; r->msgtype && m < s->nmsgs; m++)
        r->msgtype[m] = MPI_DATATYPE_NULL;
    for (int m = 0; m < s->nmsgs && !err; m++) {
        int n = 0;
        for (int k = 0; k < s->msgs[m].n && !err; k++) {
            iso_place q = iso__place_of(r, s->pieces[s->msgs[m].first + k]);
            if (q.count == 0)
                continue;
            len[n] = q.count;
            types[n] = q.type;
            err = MPI_Get_address(q.p, &disp[n++]);
        }
        if (!err)
            err = MPI_Type_create_struct(n, len, disp, types, &r->msgtype[m]);
        if (!err)
            err = MPI_Type_commit(&r->msgtype[m]);
    }
    free(len);
    free(disp);
    free(types);
    return err;
}

void iso__msgtypes_free(iso_sreq *r)
{
    if (r->msgtype)
        for (int m = 0; m < r->sched->nmsgs; m++)
            if (r->msgtype[m] != MPI_DATATYPE_NULL)
                MPI_Type_free(&r->msgtype[m]);
    free(r->msgtype);
    r->msgtype = NULL;
}
