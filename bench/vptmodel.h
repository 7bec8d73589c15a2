/* bench/vptmodel: the store-and-forward model of one irregular exchange over a
 * virtual process topology T_n(k_1..k_n), all K processes at once, without
 * communication (Selvitopi & Aykanat, SC'19, sections 3-4; DESIGN.md,
 * "VPT model").  Used by bench/vptsim (K up to 16384 on one process) and the
 * tests; the routing is the library's (route/shape.c: at stage d a submessage
 * moves to the rank whose coordinate d is its destination's; ranks
 * row-major, dimension 0 slowest).
 *
 * What is counted, per process and per stage:
 *   - a *submessage* is one send of the input (source, destination, payload
 *     bytes) on its way; it carries `header` bytes besides its payload on
 *     every hop (the library's submessage header; 0 gives the paper's
 *     payload volume);
 *   - a *message* is one (sender, receiver) pair of a stage that carries at
 *     least one submessage: all submessages of a stage that go from P to Q
 *     travel in one message (the paper's M_ij);
 *   - sends to oneself are never messages and never volume; dimensions of
 *     size 1 have no stage traffic.
 * A submessage of 0 payload bytes is still a submessage (header only): a
 * caller that models a library which drops empty sends drops them from the
 * input.  Repeated destinations are separate submessages on the same links.
 *
 * No MPI calls: errors are MPI's own classes MPI_ERR_ARG and MPI_ERR_NO_MEM
 * (valid MPI codes that need no MPI_Init), so a simulator can run it
 * without initialising MPI. */
#ifndef ISO_VPT_MODEL_H
#define ISO_VPT_MODEL_H

#include "route/route.h"
#include <stddef.h>

/* One process's sends: n submessages, to dest[i] (0..K-1) with bytes[i]
 * payload bytes.  Any order; the model is fastest when dest is ascending. */
typedef struct {
    int n;
    const int *dest;
    const long long *bytes;
} iso_vpt_sends;

/* Gives process src's sends in *out (MPI_SUCCESS or an error code, passed
 * on).  Called once per source, in order 0..K-1; the arrays must stay valid
 * until the next call (a generator may reuse one buffer). */
typedef int (*iso_vpt_sends_fn)(void *ctx, int src, iso_vpt_sends *out);

typedef struct {
    int K, n, dims[ISO_VPT_MAXDIMS];
    long long header;
    /* Per process p and stage d, at [p * n + d]: */
    int *msgs;              /* messages sent */
    int *msgs_recv;         /* messages received */
    long long *bytes_sent;  /* payload + headers sent */
    long long *bytes_fwd;   /* of bytes_sent, submessages from other processes */
    long long *bytes_recv;  /* payload + headers received */
    /* Aggregates over the processes (a process's count is its sum over
     * stages): */
    int mmax;               /* most messages sent by one process */
    double mavg;            /* mean messages sent per process */
    double vavg;            /* mean bytes sent per process (payload + headers) */
    long long volume;       /* bytes sent by all (payload + headers) */
    long long direct_volume; /* payload bytes of all sends to other processes */
    double volume_ratio;    /* volume / direct_volume (1 if direct_volume is 0) */
    long long buffer_max;   /* max over processes and stages of bytes sent plus
                             * received in one stage: the memory of one stage's
                             * messages (direct: the paper's BL buffer size) */
} iso_vpt_model;

/* Routes every process's sends over T_n(dims) (product K, sizes >= 1) and
 * fills *m (its arrays allocated here; iso__vpt_model_free releases them,
 * also after a failure).  Time O(sum over sources of their sends times n)
 * at most, and O(K) per source for all-to-all (prefix groups shrink by k_d
 * per level); memory O(K n) plus one bit per (process, stage, neighbor). */
int iso__vpt_model_run(int K, int n, const int dims[], long long header, iso_vpt_sends_fn sends,
                       void *ctx, iso_vpt_model *m);

/* The same for sends given as arrays: process p's sends are
 * dest[ptr[p] .. ptr[p+1]) with bytes[...] (ptr has K + 1 entries). */
int iso__vpt_model_csr(int K, int n, const int dims[], long long header, const long long ptr[],
                       const int dest[], const long long bytes[], iso_vpt_model *m);

void iso__vpt_model_free(iso_vpt_model *m);

/* The n worth modelling for K processes: up to the number of prime factors
 * of K (log2 K for powers of two), beyond which balanced shapes only add
 * dimensions of size 1; at most ISO_VPT_MAXDIMS, 1 for K = 1. */
int iso__vpt_model_max_n(int K);

/* dims as "a,b,c" into s (len bytes, truncated if short). */
void iso__vpt_model_dims_string(int n, const int dims[], char *s, size_t len);

#endif
