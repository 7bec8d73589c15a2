/* Growing arrays: the one doubling realloc of the library. */
#include "core/core.h"
#include <stdlib.h>
#include <string.h>

int iso__grow(void *arr, int *cap, int n, size_t elem)
{
    void *old, *p;
    int c;
    if (n <= *cap)
        return MPI_SUCCESS;
    c = *cap ? 2 * *cap : 16;
    if (c < n)
        c = n;
    memcpy(&old, arr, sizeof old); /* arr is the address of some T *, any T */
    if ((p = realloc(old, (size_t)c * elem)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    memcpy(arr, &p, sizeof p);
    *cap = c;
    return MPI_SUCCESS;
}

int iso__reserve(void **buf, size_t *cap, size_t n)
{
    void *p;
    if (n <= *cap)
        return MPI_SUCCESS;
    if ((p = realloc(*buf, n)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    *buf = p;
    *cap = n;
    return MPI_SUCCESS;
}
