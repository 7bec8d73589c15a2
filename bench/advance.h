/* sdde's glue to MPI Advance's sparse dynamic data exchange
 * (github.com/mpi-advance/locality_aware, built outside the repository with
 * the same MPI and linked only with `make ADVANCE=DIR`: DIR/include/
 * locality_aware.h, DIR/lib/liblocality_aware.a; bench/README.md, "sdde").
 * Only calls to its public API (MPIL_Alltoall_crs, MPIL_Alltoallv_crs and
 * the MPIL_Comm/MPIL_Info they take); nothing of it is copied here.
 *
 * Its variants, selected with MPIL_Set_alltoall(v)_crs before each call:
 *   advance-personalized      *_CRS_PERSONALIZED      (allreduce of counts)
 *   advance-nonblocking       *_CRS_NONBLOCKING       (NBX)
 *   advance-personalized-loc  *_CRS_PERSONALIZED_LOC  (aggregated per node)
 *   advance-nonblocking-loc   *_CRS_NONBLOCKING_LOC
 *   advance-rma               ALLTOALL_CRS_RMA        (constant form only)
 * Its outputs come in arrival order and are allocated with MPIL_Alloc; the
 * checked call sorts them by source for sdde's oracle, every output is
 * freed with MPIL_Free. */
#ifndef ISO_BENCH_ADVANCE_H
#define ISO_BENCH_ADVANCE_H

#include <locality_aware.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"

static MPIL_Comm *advance_comm;
static MPIL_Info *advance_info;

/* The variant's index in the table below, or -1 if name is not MPI Advance's. */
static const struct {
    const char *name;
    int v_method; /* enum AlltoallvCRSMethod, -1: none */
    int c_method; /* enum AlltoallCRSMethod */
} advance_variants[] = {
    {"advance-personalized", ALLTOALLV_CRS_PERSONALIZED, ALLTOALL_CRS_PERSONALIZED},
    {"advance-nonblocking", ALLTOALLV_CRS_NONBLOCKING, ALLTOALL_CRS_NONBLOCKING},
    {"advance-personalized-loc", ALLTOALLV_CRS_PERSONALIZED_LOC, ALLTOALL_CRS_PERSONALIZED_LOC},
    {"advance-nonblocking-loc", ALLTOALLV_CRS_NONBLOCKING_LOC, ALLTOALL_CRS_NONBLOCKING_LOC},
    {"advance-rma", -1, ALLTOALL_CRS_RMA},
};
#define ADVANCE_NVARIANTS ((int)(sizeof advance_variants / sizeof advance_variants[0]))
#define ADVANCE_ALL                                                                                \
    ",advance-personalized,advance-nonblocking,advance-personalized-loc,advance-nonblocking-loc," \
    "advance-rma"

static int advance_variant(const char *name)
{
    for (int k = 0; k < ADVANCE_NVARIANTS; k++)
        if (!strcmp(name, advance_variants[k].name))
            return k;
    return -1;
}

static void advance_init(MPI_Comm comm)
{
    MPIL_Comm_init(&advance_comm, comm);
    MPIL_Info_init(&advance_info);
}

static void advance_finalize(void)
{
    MPIL_Info_free(&advance_info);
    MPIL_Comm_free(&advance_comm);
}

/* Sorts n messages by source: src[], counts[] (variable form) and the
 * values (elements of size bytes at displs[], or one per message). */
static void advance_sort(int n, int *src, int *counts, const int *displs, char *vals, int size)
{
    int *order = xmalloc(sizeof(int) * (size_t)(n + 1)), *s2, *c2 = NULL, total = 0;
    char *v2;
    for (int i = 0; i < n; i++)
        order[i] = i;
    for (int i = 1; i < n; i++) /* insertion sort: few messages */
        for (int j = i; j > 0 && src[order[j - 1]] > src[order[j]]; j--) {
            int t = order[j];
            order[j] = order[j - 1], order[j - 1] = t;
        }
    for (int i = 0; i < n; i++)
        total += counts ? counts[i] : 1;
    s2 = xmalloc(sizeof(int) * (size_t)(n + 1));
    v2 = xmalloc((size_t)size * (size_t)(total + 1));
    if (counts)
        c2 = xmalloc(sizeof(int) * (size_t)(n + 1));
    for (int i = 0, pos = 0; i < n; i++) {
        int k = order[i], c = counts ? counts[k] : 1, at = counts ? displs[k] : k;
        s2[i] = src[k];
        if (counts)
            c2[i] = c;
        memcpy(v2 + (size_t)pos * size, vals + (size_t)at * size, (size_t)c * size);
        pos += c;
    }
    memcpy(src, s2, sizeof(int) * (size_t)n);
    if (counts)
        memcpy(counts, c2, sizeof(int) * (size_t)n);
    memcpy(vals, v2, (size_t)size * (size_t)total);
    free(order), free(s2), free(c2), free(v2);
}

#endif
