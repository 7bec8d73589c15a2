/*
 * Type_create_triangular — the triangular vector datatype of Träff, Lübbe,
 * Rougier, Hunold, EuroMPI'15 (section 8), for the corner exchanges of
 * deep-halo stencils (section 2, figure 1).
 *
 * Semantics.  count blocks of oldtype elements, in block order 0..count-1
 * (this is also the order of the type map, so sender and receiver must list
 * their blocks in the same order).  All quantities are in units of the
 * extent of oldtype.
 *     length of block i        L(i) = firstblock + i*blockincrement
 *     block i to block i+1     stride + i*strideincrement
 *     start of block i         D(i) = i*stride + strideincrement*i*(i-1)/2
 * blockincrement, stride and strideincrement may be negative.  Blocks of
 * length 0 are allowed and contribute nothing.  The paper's text says block
 * i is "placed at offset i × (stride + strideincrement)"; read literally
 * that would make strideincrement a constant and the type a plain vector,
 * so we implement the distance that grows by strideincrement per block, as
 * above (it is what describes packed triangular storage, see below).
 *
 * Result.  Not committed, like every MPI constructor.  One MPI constructor,
 * the one with the fewest envelope integers that gives exactly this type
 * map (MPI_Type_get_envelope shows it):
 *     no non-empty block                    MPI_Type_contiguous(0)
 *     the non-empty blocks abut, in order,  MPI_Type_contiguous(total) if the
 *     into one run of total <= INT_MAX      run starts at 0, else
 *     (count 1, whole packed triangles)     MPI_Type_create_indexed_block(1)
 *     equal lengths, equal distances        MPI_Type_vector
 *     (blockincrement 0 and strideincrement 0, or count 2)
 *     equal lengths                         MPI_Type_create_indexed_block
 *     otherwise                             MPI_Type_indexed over the
 *                                           non-empty blocks only
 * Because L(i) is linear in i, at most one block (the first or the last) is
 * empty unless all are, so a triangle of k-1 non-empty rows described with
 * count k costs 2(k-1)+1 integers instead of the 2k+1 of a plain
 * MPI_Type_indexed.  Varying lengths cannot be expressed in constant space
 * with MPI's constructors; the indexed form is linear in count, as the
 * paper notes.
 *
 * Bounds.  All these constructors follow the same rule (the rule of
 * MPI_Type_indexed over the non-empty blocks), with E = extent(oldtype) > 0
 * and the min/max over non-empty blocks:
 *     lb     = lb(oldtype) + min_i D(i) * E
 *     extent = (max_i (D(i) + L(i)) - min_i D(i)) * E
 * i.e. the hull of the non-empty blocks; size = sum_i L(i) * size(oldtype).
 * (For E <= 0, MPI's general rule over the element displacements applies.)
 * A type with no non-empty block has size 0, lb 0 and extent 0.  Empty
 * blocks never widen the bounds (they are not in the type).
 *
 * Errors.  Datatype constructors have no communicator, so errors detected
 * here are simply returned, without calling any error handler:
 *     newtype == NULL                              MPI_ERR_ARG
 *     count < 0                                    MPI_ERR_COUNT
 *     oldtype == MPI_DATATYPE_NULL                 MPI_ERR_TYPE
 *     L(i) < 0 for some i < count                  MPI_ERR_ARG
 *     L(i) or D(i) of a non-empty block beyond
 *     int, or D(i)*E, (D(i)+L(i))*E beyond MPI_Aint MPI_ERR_ARG
 *     out of memory for the indexed arrays         MPI_ERR_NO_MEM
 * (checked in this order).  On any error *newtype is MPI_DATATYPE_NULL; a
 * partly built type is never returned.  Errors raised inside the MPI calls
 * made here (MPI_Type_get_extent and the constructor) are handled by MPI
 * itself, as for any datatype call, and their code is returned.
 *
 * Corner triangles of the depth-k 5-point halo (figure 1).  Local matrix of
 * order M = n + 2k with a halo of depth k, interior rows and columns
 * k..k+n-1; n >= k-1 so that the corner pieces do not run out of the
 * interior.  After k stencil steps an interior value depends on cells at
 * Manhattan distance <= k, so at each corner
 *   halo triangle (received; hypotenuse away from the interior):
 *     cells a >= 1 rows and b >= 1 columns outside the interior corner,
 *     a + b <= k;
 *   interior triangle (sent to the diagonal neighbour, which receives it
 *   in its opposite halo corner; hypotenuse towards the interior):
 *     cells a >= 0 rows and b >= 0 columns inside the interior corner,
 *     a + b <= k - 2.
 * Each has k(k-1)/2 elements in count = k-1 blocks (rows in a row-major,
 * columns in a column-major matrix, in increasing address order), with
 * strideincrement = 0.  base (r,c) is the first cell of block 0: pass the
 * address of that element as the buffer (offset r*M + c row-major,
 * c*M + r column-major).
 *
 *   row-major (element (r,c) at r*M + c)
 *   corner triangle  base (r, c)        firstblock blockinc stride
 *   TL     halo      (1, k-1)           1          +1       M-1
 *   TR     halo      (1, k+n)           1          +1       M
 *   BL     halo      (k+n, 1)           k-1        -1       M+1
 *   BR     halo      (k+n, k+n)         k-1        -1       M
 *   TL     interior  (k, k)             k-1        -1       M
 *   TR     interior  (k, n+1)           k-1        -1       M+1
 *   BL     interior  (n+1, k)           1          +1       M
 *   BR     interior  (n+1, k+n-1)       1          +1       M-1
 *
 *   column-major (element (r,c) at c*M + r; transposition swaps TR and BL)
 *   corner triangle  base (r, c)        firstblock blockinc stride
 *   TL     halo      (k-1, 1)           1          +1       M-1
 *   TR     halo      (1, k+n)           k-1        -1       M+1
 *   BL     halo      (k+n, 1)           1          +1       M
 *   BR     halo      (k+n, k+n)         k-1        -1       M
 *   TL     interior  (k, k)             k-1        -1       M
 *   TR     interior  (k, n+1)           1          +1       M
 *   BL     interior  (n+1, k)           k-1        -1       M+1
 *   BR     interior  (k+n-1, n+1)       1          +1       M-1
 *
 * So the paper's claim holds: four parameter sets per storage order cover
 * all eight triangles, and the interior triangle at a corner has the
 * parameters of the halo triangle at the opposite corner, so sender and
 * receiver types match element for element.  Each triangle can also be
 * listed in the opposite block order: base at the last block, firstblock
 * = the last length, blockincrement and stride negated.  k = 1 gives
 * count 0 (no corner data), k = 2 a single element.  The 9-point stencil's
 * k x k corner squares are (count k, firstblock k, 0, M, 0), i.e. a vector.
 * strideincrement != 0 describes packed triangular storage, e.g. rows
 * j0..P-1, columns j0..i of a lower triangle of order P packed by rows
 * (row i at i(i+1)/2): count P-j0, firstblock 1, blockinc 1, stride j0+1,
 * strideincrement 1, base j0(j0+1)/2 + j0.
 */
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>

#include "isocoll.h"

/* MPI has no macro for the largest MPI_Aint (a signed integer type). */
#define TRI_AINT_MAX ((MPI_Aint)(((uintmax_t)1 << (CHAR_BIT * sizeof(MPI_Aint) - 1)) - 1))

static int fits_int(long long v)
{
    return v >= INT_MIN && v <= INT_MAX;
}

/* |v| * |extent| is representable as an MPI_Aint byte displacement. */
static int fits_bytes(long long v, MPI_Aint extent)
{
    MPI_Aint e = extent < 0 ? -extent : extent;
    long long a = v < 0 ? -v : v; /* |v| < 2^34 here */
    return e == 0 || a <= TRI_AINT_MAX / e;
}

/* The non-empty blocks are i0 .. i0+n-1.  L(i) is linear in i, so both
 * ends bound every block, and only an end block can be empty unless all
 * are. */
static int nonempty_blocks(int count, int firstblock, int blockincrement, int *i0, int *n)
{
    long long first = firstblock;
    long long last = first + (long long)(count - 1) * blockincrement;

    *i0 = 0;
    *n = 0;
    if (count == 0)
        return MPI_SUCCESS;
    if (first < 0 || last < 0 || last > INT_MAX)
        return MPI_ERR_ARG;
    if (first == 0 && last == 0)
        return MPI_SUCCESS;
    *i0 = first == 0;
    *n = count - *i0 - (last == 0);
    return MPI_SUCCESS;
}

/* count >= 1 blocks of blocklength > 0, block i at i*stride (closed form:
 * no per-block work, so huge counts cost nothing). */
static int create_regular(int count, int blocklength, int stride, MPI_Aint extent,
                          MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    long long lastdisp = (long long)(count - 1) * stride;
    long long total = (long long)count * blocklength;

    if (!fits_int(lastdisp) || !fits_bytes(lastdisp, extent) ||
        !fits_bytes(lastdisp + blocklength, extent) || !fits_bytes(blocklength, extent))
        return MPI_ERR_ARG;
    if ((count == 1 || stride == blocklength) && total <= INT_MAX)
        return MPI_Type_contiguous((int)total, oldtype, newtype);
    return MPI_Type_vector(count, blocklength, stride, oldtype, newtype);
}

/* What one walk over the non-empty blocks finds. */
typedef struct {
    long long lo, hi; /* hull: min D(i), max D(i) + L(i) */
    long long start;  /* D(i0) */
    long long total;  /* sum of L(i) */
    int abut;         /* each block starts where the previous one ends */
} block_walk;

/* Visits the n >= 1 non-empty blocks from i0.  D(i) is quadratic in i, so
 * every block is checked against int, not just the ends; stepping keeps each
 * intermediate far inside long long.  Records the blocks if lens != NULL. */
static int walk_blocks(int firstblock, int blockincrement, int stride, int strideincrement,
                       int i0, int n, block_walk *w, int *lens, int *displs)
{
    long long d = 0, prev_end = 0;

    *w = (block_walk){0, 0, 0, 0, 1};
    for (int i = 0; i < i0 + n; i++) {
        if (i >= i0) {
            long long len = firstblock + (long long)i * blockincrement;
            if (!fits_int(d))
                return MPI_ERR_ARG;
            if (i == i0) {
                w->lo = w->start = d;
                w->hi = d + len;
            } else {
                if (d != prev_end)
                    w->abut = 0;
                w->lo = d < w->lo ? d : w->lo;
                w->hi = d + len > w->hi ? d + len : w->hi;
            }
            prev_end = d + len;
            w->total += len;
            if (lens != NULL) {
                lens[i - i0] = (int)len;
                displs[i - i0] = (int)d;
            }
        }
        d += stride + (long long)i * strideincrement;
    }
    return MPI_SUCCESS;
}

/* The n >= 1 non-empty blocks starting at block i0: checked in a first
 * walk, so that bad arguments fail before any allocation and a single run
 * needs none; listed in a second walk otherwise. */
static int create_listed(int firstblock, int blockincrement, int stride, int strideincrement,
                         int i0, int n, MPI_Aint extent, MPI_Datatype oldtype,
                         MPI_Datatype *newtype)
{
    int err;
    int *lens = NULL, *displs = NULL;
    block_walk w;

    err = walk_blocks(firstblock, blockincrement, stride, strideincrement, i0, n, &w, NULL, NULL);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    if (!fits_bytes(w.lo, extent) || !fits_bytes(w.hi, extent)) {
        err = MPI_ERR_ARG;
        goto fn_exit;
    }
    if (w.abut && w.total <= INT_MAX) {
        int start = (int)w.start;
        if (start == 0)
            err = MPI_Type_contiguous((int)w.total, oldtype, newtype);
        else
            err = MPI_Type_create_indexed_block(1, (int)w.total, &start, oldtype, newtype);
        goto fn_exit;
    }
    if ((size_t)n > SIZE_MAX / sizeof(int)) {
        err = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    lens = malloc((size_t)n * sizeof *lens);
    displs = malloc((size_t)n * sizeof *displs);
    if (lens == NULL || displs == NULL) {
        err = MPI_ERR_NO_MEM;
        goto fn_exit;
    }
    walk_blocks(firstblock, blockincrement, stride, strideincrement, i0, n, &w, lens, displs);
    if (blockincrement == 0)
        err = MPI_Type_create_indexed_block(n, firstblock, displs, oldtype, newtype);
    else
        err = MPI_Type_indexed(n, lens, displs, oldtype, newtype);

fn_exit:
    free(lens);
    free(displs);
    return err;
}

int Type_create_triangular(int count, int firstblock, int blockincrement, int stride,
                           int strideincrement, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    int err, i0, n;
    MPI_Aint lb, extent;

    if (newtype == NULL)
        return MPI_ERR_ARG;
    *newtype = MPI_DATATYPE_NULL;
    if (count < 0)
        return MPI_ERR_COUNT;
    if (oldtype == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    err = nonempty_blocks(count, firstblock, blockincrement, &i0, &n);
    if (err != MPI_SUCCESS)
        return err;
    if (n == 0) {
        err = MPI_Type_contiguous(0, oldtype, newtype);
        goto fn_exit;
    }
    err = MPI_Type_get_extent(oldtype, &lb, &extent);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    /* With equal lengths, two blocks are always equally spaced. */
    if (blockincrement == 0 && (strideincrement == 0 || count <= 2))
        err = create_regular(count, firstblock, stride, extent, oldtype, newtype);
    else
        err = create_listed(firstblock, blockincrement, stride, strideincrement, i0, n, extent,
                            oldtype, newtype);

fn_exit:
    if (err != MPI_SUCCESS)
        *newtype = MPI_DATATYPE_NULL;
    return err;
}
