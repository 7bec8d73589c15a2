/* vpt/shape: the shape of a virtual process topology T_n(k_1..k_n) and its
 * store-and-forward routing (Selvitopi & Aykanat, SC'19; DESIGN.md,
 * "Virtual process topology").  Pure computations: no communication; the
 * error paths make library error codes (which needs MPI initialised; before
 * MPI_Init or after MPI_Finalize they return MPI_ERR_ARG / MPI_ERR_INFO).
 *
 * Ranks are row-major, dimension 0 slowest (MPI_Cart_coords order): rank r
 * has coordinate (r / stride_d) % dims[d] with stride_d = dims[d+1] * ... *
 * dims[n-1]. */
#ifndef ISO_VPT_SHAPE_H
#define ISO_VPT_SHAPE_H

#include <mpi.h>

#define ISO_VPT_MAXDIMS 16

/* dims[0..n-1] with product p (p >= 1, 1 <= n <= ISO_VPT_MAXDIMS), the
 * paper's balanced scheme generalised to any p: the prime factors of p,
 * largest first, each go to the dimension with the smallest product so far;
 * the sizes are then sorted non-increasing.  For p = 2^m this is the paper's
 * T_n (sizes 2^floor(m/n) and 2^ceil(m/n), differing by at most a factor of
 * 2); in general sizes differ by at most a factor of the largest prime
 * factor where p allows nothing better.  A prime p gives (p, 1, ..., 1): a
 * one-dimensional VPT, i.e. direct.  n beyond the number of prime factors
 * gives dimensions of size 1 (no stage there).  MPI_SUCCESS or the ARG
 * code. */
int iso__vpt_dims_balanced(int p, int n, int dims[]);

/* Parses "4,2,2" (decimal sizes >= 1, separated by single commas, at most
 * ISO_VPT_MAXDIMS) into *n and dims.  The INFO code if malformed or if the
 * product is not p. */
int iso__vpt_dims_parse(const char *s, int p, int *n, int dims[]);

/* Store-and-forward in dimension order: at stage d (0..n-1) a message at
 * VPT rank `at` for VPT rank `dest` moves to the rank whose coordinate d is
 * dest's, the others kept (`at` itself when they already agree).  After
 * stage n-1 it is at dest.  Arguments are trusted (internal). */
int iso__vpt_hop(int n, const int dims[], int stage, int at, int dest);

/* stride of dimension d: dims[d+1] * ... * dims[n-1] (1 for the last). */
int iso__vpt_stride(int n, const int dims[], int d);

/* Coordinate d of rank r. */
int iso__vpt_coord(int n, const int dims[], int d, int r);

#endif
