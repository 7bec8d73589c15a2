/* The private communicator: library messages travel on a duplicate of the
 * user's communicator, never on the user's own, and each operation reserves
 * its own tags on it (the same on every process). */
#include "core/core.h"
#include <stdlib.h>

int iso__priv_create(MPI_Comm comm, iso_priv **out)
{
    iso_priv *p;
    int *ub, flag = 0, err;
    iso__mpi_library_check(); /* before any handle is used */
    p = calloc(1, sizeof *p);
    *out = NULL;
    if (p == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = MPI_Comm_dup(comm, &p->comm)) != MPI_SUCCESS) {
        free(p);
        return err;
    }
    err = MPI_Comm_get_attr(p->comm, MPI_TAG_UB, &ub, &flag);
    p->tag_ub = (err == MPI_SUCCESS && flag) ? *ub : 32767; /* the least MPI allows */
    p->refs = 1;
    *out = p;
    return MPI_SUCCESS;
}

void iso__priv_release(iso_priv *p)
{
    int finalized = 0;
    if (p == NULL || --p->refs > 0)
        return;
    MPI_Finalized(&finalized);
    if (!finalized)
        MPI_Comm_free(&p->comm);
    free(p);
}

int iso__tags_reserve(iso_priv *p, int n)
{
    unsigned base = p->tag_next;
    if (n < 1)
        n = 1; /* an empty operation still takes a tag: counters stay in step */
    if ((unsigned long long)base + (unsigned)n > (unsigned long long)p->tag_ub + 1)
        base = 0;
    p->tag_next = base + (unsigned)n;
    return (int)base;
}
