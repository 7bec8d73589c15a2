/* The shape of a virtual process topology and its dimension-order routing
 * (route.h; DESIGN.md, "Virtual process topology"). */
#include "route/route.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The error code of class e with text msg; without MPI (a simulator that
 * links the library but never calls MPI_Init) MPI's own class instead. */
static int shape_error(Iso_error e, const char *msg)
{
    int init = 0, fin = 0;
    MPI_Initialized(&init);
    MPI_Finalized(&fin);
    if (!init || fin)
        return e == ISO_ERR_INFO ? MPI_ERR_INFO : MPI_ERR_ARG;
    return iso__error_msg(e, "%s", msg);
}

static int by_size_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

int iso__vpt_dims_balanced(int p, int n, int dims[])
{
    int primes[32], np = 0; /* p < 2^31 has at most 31 prime factors */
    char msg[96];
    if (p < 1 || n < 1 || n > ISO_VPT_MAXDIMS || !dims) {
        snprintf(msg, sizeof msg, "VPT of %d processes in %d dimensions (1..%d)", p, n,
                 ISO_VPT_MAXDIMS);
        return shape_error(ISO_ERR_ARG, msg);
    }
    for (int q = p, f = 2; q > 1;) {
        if ((long long)f * f > q)
            f = q; /* what is left is prime */
        if (q % f == 0) {
            primes[np++] = f;
            q /= f;
        } else {
            f++;
        }
    }
    for (int d = 0; d < n; d++)
        dims[d] = 1;
    /* Largest factors first, each onto the smallest dimension so far (the
     * first of equals): for p = 2^m this deals the 2s round-robin. */
    for (int i = np - 1; i >= 0; i--) {
        int small = 0;
        for (int d = 1; d < n; d++)
            if (dims[d] < dims[small])
                small = d;
        dims[small] *= primes[i];
    }
    qsort(dims, (size_t)n, sizeof *dims, by_size_desc);
    return MPI_SUCCESS;
}

int iso__vpt_dims_parse(const char *s, int p, int *n, int dims[])
{
    char msg[160];
    const char *c = s;
    long long product = 1;
    int k = 0;
    if (!s || !*s)
        goto malformed;
    for (;;) {
        long long v = 0;
        if (*c < '0' || *c > '9')
            goto malformed;
        while (*c >= '0' && *c <= '9') {
            v = v * 10 + (*c++ - '0');
            if (v > 0x7fffffff)
                goto malformed;
        }
        if (v < 1 || k == ISO_VPT_MAXDIMS)
            goto malformed;
        dims[k++] = (int)v;
        product *= v;
        if (product > 0x7fffffff)
            goto malformed;
        if (*c == '\0')
            break;
        if (*c++ != ',')
            goto malformed;
    }
    if (product != p) {
        snprintf(msg, sizeof msg, "VPT dims \"%.60s\": product %lld, not the %d processes", s,
                 product, p);
        return shape_error(ISO_ERR_INFO, msg);
    }
    *n = k;
    return MPI_SUCCESS;
malformed:
    snprintf(msg, sizeof msg,
             "VPT dims \"%.60s\" (sizes >= 1 separated by commas, at most %d, e.g. \"4,2,2\")",
             s ? s : "(null)", ISO_VPT_MAXDIMS);
    return shape_error(ISO_ERR_INFO, msg);
}

int iso__vpt_stride(int n, const int dims[], int d)
{
    int stride = 1;
    for (int e = d + 1; e < n; e++)
        stride *= dims[e];
    return stride;
}

int iso__vpt_coord(int n, const int dims[], int d, int r)
{
    return r / iso__vpt_stride(n, dims, d) % dims[d];
}

int iso__vpt_hop(int n, const int dims[], int stage, int at, int dest)
{
    int stride = iso__vpt_stride(n, dims, stage);
    int from = at / stride % dims[stage], to = dest / stride % dims[stage];
    return at + (to - from) * stride;
}
