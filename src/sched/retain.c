/* Keeping the caller's arguments alive: a nonblocking or persistent call
 * returns before its arrays and datatypes are used, and the caller may free
 * or change them; the request copies the arrays and duplicates the derived
 * datatypes of its iso_args. */
#include "sched/exec.h"
#include <stdlib.h>
#include <string.h>

/* Our own duplicate of *t (derived types only), replacing *t. */
static int retain_type(iso_sreq *r, MPI_Datatype *t, int cap)
{
    int err;
    if (*t == MPI_DATATYPE_NULL || iso__type_is_named(*t))
        return MPI_SUCCESS;
    for (int k = 0; k < r->narg_types; k++) /* already ours */
        if (r->arg_types[k] == *t)
            return MPI_SUCCESS;
    if (r->narg_types >= cap)
        return iso__error(ISO_ERR_INTERN);
    if ((err = iso__type_hold(*t, &r->arg_types[r->narg_types])) != MPI_SUCCESS)
        return err;
    *t = r->arg_types[r->narg_types++];
    return MPI_SUCCESS;
}

/* Copies the arrays of one side into mem (advancing it by whole MPI_Aint
 * words, which keeps every array aligned); dups its types. */
static int retain_side(iso_sreq *r, iso_side *sd, int s, char **mem, int cap)
{
    int err = MPI_SUCCESS;
    size_t words = sizeof(MPI_Aint) * (size_t)s;
    if (sd->layout == ISO_LAYOUT_V || sd->layout == ISO_LAYOUT_W) {
        sd->counts = memcpy(*mem, sd->counts, sizeof(int) * (size_t)s);
        *mem += words;
    }
    if (sd->layout == ISO_LAYOUT_V) {
        sd->idispls = memcpy(*mem, sd->idispls, sizeof(int) * (size_t)s);
        *mem += words;
    }
    if (sd->layout == ISO_LAYOUT_W) {
        MPI_Datatype *t;
        sd->adispls = memcpy(*mem, sd->adispls, sizeof(MPI_Aint) * (size_t)s);
        *mem += words;
        t = memcpy(*mem, sd->types, sizeof(MPI_Datatype) * (size_t)s);
        sd->types = t;
        *mem += sizeof(MPI_Aint) *
                ((s * sizeof(MPI_Datatype) + sizeof(MPI_Aint) - 1) / sizeof(MPI_Aint));
        for (int i = 0; i < s && !err; i++)
            err = retain_type(r, &t[i], cap);
    } else {
        err = retain_type(r, &sd->type, cap);
    }
    return err;
}

int iso__args_retain(iso_sreq *r, int nsend, int nrecv)
{
    size_t words = ((size_t)nsend + (size_t)nrecv) * 4 + 8; /* two sides x up to 4 arrays */
    char *mem;
    int cap = nsend + nrecv + 2, err;
    r->args_mem = malloc(words * sizeof(MPI_Aint));
    r->arg_types = malloc(sizeof(MPI_Datatype) * (size_t)cap);
    if (r->args_mem == NULL || r->arg_types == NULL)
        return iso__error(ISO_ERR_NOMEM);
    mem = r->args_mem;
    if ((err = retain_side(r, &r->args.send, nsend, &mem, cap)) != MPI_SUCCESS)
        return err;
    return retain_side(r, &r->args.recv, nrecv, &mem, cap);
}

void iso__args_release(iso_sreq *r)
{
    for (int k = 0; k < r->narg_types; k++)
        MPI_Type_free(&r->arg_types[k]);
    free(r->arg_types);
    free(r->args_mem);
}
