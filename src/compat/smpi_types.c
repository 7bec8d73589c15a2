/* compat/smpi_types: derived datatypes that SMPI 3.32 moves correctly.
 *
 * Why: SMPI's engine walks count > 1 elements of a derived type wrongly.
 * Its serializers (smpi_datatype_derived.cpp) step from one element to the
 * next by the end of the element's last block (vector, hvector: by the
 * block length; indexed, hindexed, struct: to the end of the last block,
 * and for the first block of every element after the first they drop its
 * displacement), not by the extent; and its constructors compute wrong
 * bounds for negative strides or displacements (vector(2,1,-2) has extent
 * -4).  resized(INT,-8,16) x 4 moves elements 0 2 4 6, not 0 4 8 12.
 *
 * What: every type constructor is redirected here.  We compute the type's
 * type map ourselves, flattened to runs of predefined types at byte
 * displacements, with its bounds as MPI defines them, and hand SMPI a
 * struct of only predefined types that its walk gets right:
 *
 *     { MPI_LB at lb, the runs..., MPI_UB at ub, 0 x MPI_BYTE at extent }
 *
 * SMPI's struct walk puts block i of element j at base_j + disp_i (i >= 1;
 * block 0 is the zero-size MPI_LB, wherever it lands) and makes base_{j+1}
 * the end of the last block of element j: the empty MPI_BYTE at `extent`,
 * so element j is at j * extent, as MPI says.  MPI_LB/MPI_UB first and
 * before last force SMPI's lb and ub (its extent queries then agree).  SMPI
 * only takes such a struct for a plain contiguous block when it is one:
 * lb 0, data filling [0, extent).
 *
 * Chosen over keeping the user's type aside and packing ourselves around
 * every communication call: that would need every point-to-point,
 * collective and persistent call redirected; here SMPI sees a correct type
 * and every call of SMPI's moves it right, with SMPI's own pack and unpack.
 * The cost is one run per contiguous piece (vector(n,1,2,INT) has n runs),
 * made once per type.
 *
 * The side table, keyed by SMPI's handle, also answers the queries SMPI
 * gets wrong or cannot represent (its sizes are int): size, extent and true
 * extent (also _x) and the envelope (combiner and argument counts of the
 * user's call).  Not kept: MPI_Type_get_contents (SMPI answers for its
 * struct), attributes on MPI_Type_dup (the copy has none), MPI_LB/MPI_UB as
 * old types of a user's struct (taken as empty types).  Types larger than
 * INT_MAX bytes are described right but SMPI cannot move them. */
#include "compat/smpi.h"
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* n consecutive elements of the predefined type prim (extent pext) at disp,
 * or (nested) one element of an SMPI vector made here, whose data lie in
 * [disp + lo, disp + hi). */
typedef struct {
    MPI_Aint disp, pext;
    MPI_Count n;
    MPI_Datatype prim;
    int nested;
    MPI_Aint lo, hi;
} run;

typedef struct typemap {
    MPI_Datatype handle; /* SMPI's struct */
    struct typemap *next;
    run *runs;
    size_t nruns, cap;
    int bounded;         /* lb and ub hold the bounds of some copy */
    MPI_Aint lb, ub;     /* extent = ub - lb */
    MPI_Count size;
    int combiner, ni, na, nd;
    MPI_Datatype inner;  /* the SMPI vector of a nested run, freed with this */
} typemap;

/* One address space holds every simulated rank: handles are unique in it,
 * and SMPI runs one rank at a time, so one table serves all. */
#define NBUCKETS 1024
static typemap *table[NBUCKETS];

static size_t bucket(MPI_Datatype t)
{
    return ((uintptr_t)t >> 4) % NBUCKETS;
}

static typemap *lookup(MPI_Datatype t)
{
    for (typemap *m = table[bucket(t)]; m != NULL; m = m->next)
        if (m->handle == t)
            return m;
    return NULL;
}

/* An empty type map (SMPI's MPI_DATATYPE_NULL is no null pointer). */
static typemap *map_new(void)
{
    typemap *m = calloc(1, sizeof *m);
    if (m != NULL)
        m->inner = MPI_DATATYPE_NULL;
    return m;
}

static void map_free(typemap *m)
{
    if (m != NULL) {
        if (m->inner != MPI_DATATYPE_NULL)
            PMPI_Type_free(&m->inner);
        free(m->runs);
    }
    free(m);
}

static int type_error(int err)
{
    MPI_Comm_call_errhandler(MPI_COMM_WORLD, err);
    return err;
}

/* What a constructor reads of an old type: its runs, bounds and size. */
typedef struct {
    const run *runs;
    size_t nruns;
    MPI_Aint lb, ub;
    MPI_Count size;
    run one; /* the run of a predefined type */
} view;

static int view_of(MPI_Datatype t, view *v)
{
    const typemap *m;
    int ni, na, nd, combiner, size;
    MPI_Aint lb, extent;
    if (t == MPI_DATATYPE_NULL)
        return MPI_ERR_TYPE;
    if ((m = lookup(t)) != NULL) {
        v->runs = m->runs;
        v->nruns = m->nruns;
        v->lb = m->lb;
        v->ub = m->ub;
        v->size = m->size;
        return MPI_SUCCESS;
    }
    /* not made here: a predefined type, whose SMPI description is right */
    if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS ||
        combiner != MPI_COMBINER_NAMED || PMPI_Type_get_extent(t, &lb, &extent) != MPI_SUCCESS ||
        PMPI_Type_size(t, &size) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    v->one = (run){.disp = 0, .pext = extent, .n = 1, .prim = t, .hi = extent};
    v->runs = &v->one;
    v->nruns = size > 0 ? 1 : 0;
    v->lb = lb;
    v->ub = lb + extent;
    v->size = size;
    return MPI_SUCCESS;
}

/* Appends r at disp, merged with the last run where they abut. */
static int append_run(typemap *m, const run *r, MPI_Aint disp, MPI_Count n)
{
    run *last = m->nruns > 0 ? &m->runs[m->nruns - 1] : NULL;
    if (n == 0)
        return MPI_SUCCESS;
    if (last != NULL && !r->nested && !last->nested && last->prim == r->prim &&
        last->disp + (MPI_Aint)last->n * r->pext == disp) {
        last->n += n;
        last->hi = (MPI_Aint)last->n * r->pext;
        return MPI_SUCCESS;
    }
    if (m->nruns == m->cap) {
        size_t cap = m->cap ? 2 * m->cap : 8;
        run *grown = realloc(m->runs, cap * sizeof *grown);
        if (grown == NULL)
            return MPI_ERR_NO_MEM;
        m->runs = grown;
        m->cap = cap;
    }
    m->runs[m->nruns] = *r;
    m->runs[m->nruns].disp = disp;
    m->runs[m->nruns].n = n;
    if (!r->nested)
        m->runs[m->nruns].hi = (MPI_Aint)n * r->pext;
    m->nruns++;
    return MPI_SUCCESS;
}

static void include_bounds(typemap *m, MPI_Aint lo, MPI_Aint hi)
{
    if (!m->bounded || lo < m->lb)
        m->lb = lo;
    if (!m->bounded || hi > m->ub)
        m->ub = hi;
    m->bounded = 1;
}

/* reps consecutive copies of v, the first at offset, copy k at offset +
 * k * extent(v): their runs and bounds.  A dense v (one run filling its
 * extent) gives one run, so that large contiguous blocks stay one run. */
static int append_copies(typemap *m, const view *v, MPI_Aint offset, MPI_Count reps)
{
    MPI_Aint extent = v->ub - v->lb, last, span;
    MPI_Count n;
    int err;
    if (reps <= 0)
        return MPI_SUCCESS;
    if (__builtin_mul_overflow((MPI_Aint)(reps - 1), extent, &last) ||
        __builtin_mul_overflow(v->size, reps, &n) || __builtin_add_overflow(offset, last, &span))
        return MPI_ERR_ARG;
    include_bounds(m, offset + v->lb + (last < 0 ? last : 0), offset + v->ub + (last > 0 ? last : 0));
    m->size += n;
    if (v->nruns == 1 && !v->runs[0].nested && extent > 0 && v->runs[0].disp == v->lb &&
        (MPI_Aint)v->runs[0].n * v->runs[0].pext == extent)
        return append_run(m, &v->runs[0], offset + v->runs[0].disp, v->runs[0].n * reps);
    for (MPI_Count k = 0; k < reps; k++)
        for (size_t r = 0; r < v->nruns; r++)
            if ((err = append_run(m, &v->runs[r], offset + (MPI_Aint)k * extent + v->runs[r].disp,
                                  v->runs[r].n)) != MPI_SUCCESS)
                return err;
    return MPI_SUCCESS;
}

/* The struct SMPI walks right (top of file); runs longer than INT_MAX
 * elements are cut. */
static int smpi_struct(const typemap *m, MPI_Datatype *out)
{
    size_t n = 3;
    for (size_t r = 0; r < m->nruns; r++)
        n += m->runs[r].nested ? 1 : (size_t)((m->runs[r].n + INT_MAX - 1) / INT_MAX);
    if (n > INT_MAX)
        return MPI_ERR_ARG;
    int *len = malloc(n * sizeof *len);
    MPI_Aint *disp = malloc(n * sizeof *disp);
    MPI_Datatype *types = malloc(n * sizeof *types);
    int err = MPI_ERR_NO_MEM;
    if (len != NULL && disp != NULL && types != NULL) {
        size_t k = 0;
        len[k] = 1, disp[k] = m->lb, types[k++] = MPI_LB;
        for (size_t r = 0; r < m->nruns; r++)
            for (MPI_Count done = 0; done < m->runs[r].n; done += INT_MAX) {
                MPI_Count left = m->runs[r].n - done;
                len[k] = left > INT_MAX ? INT_MAX : (int)left;
                disp[k] = m->runs[r].disp + (MPI_Aint)done * m->runs[r].pext;
                types[k++] = m->runs[r].prim;
            }
        len[k] = 1, disp[k] = m->ub, types[k++] = MPI_UB;
        len[k] = 0, disp[k] = m->ub - m->lb, types[k++] = MPI_BYTE;
        err = PMPI_Type_create_struct((int)k, len, disp, types, out);
    }
    free(len);
    free(disp);
    free(types);
    return err;
}

/* Finishes a constructor: the SMPI type, the table entry, *newtype. */
static int make(typemap *m, int combiner, int ni, int na, int nd, MPI_Datatype *newtype)
{
    int err;
    if (!m->bounded)
        m->lb = m->ub = 0;
    m->combiner = combiner, m->ni = ni, m->na = na, m->nd = nd;
    if ((err = smpi_struct(m, &m->handle)) != MPI_SUCCESS) {
        map_free(m);
        *newtype = MPI_DATATYPE_NULL;
        return type_error(err);
    }
    m->next = table[bucket(m->handle)];
    table[bucket(m->handle)] = m;
    *newtype = m->handle;
    return MPI_SUCCESS;
}

static int fail(typemap *m, int err, MPI_Datatype *newtype)
{
    map_free(m);
    if (newtype != NULL)
        *newtype = MPI_DATATYPE_NULL;
    return type_error(err);
}

/* A constructor of count blocks of one old type: block i is len(i) copies
 * at byte offset disp(i).  Checks the arguments as MPI does. */
typedef struct {
    const int *lens;          /* or every block `len` copies */
    int len;
    const int *idisp;         /* displacements in extents of old, or */
    const MPI_Aint *adisp;    /* in bytes, or */
    MPI_Aint stride;          /* block i at i * stride bytes */
} blocks;

/* The type map of count such blocks, in *out. */
static int collect(int count, const blocks *b, MPI_Datatype old, typemap **out)
{
    typemap *m;
    view v;
    int err;
    *out = NULL;
    if (count < 0)
        return MPI_ERR_COUNT;
    if ((err = view_of(old, &v)) != MPI_SUCCESS)
        return err;
    if ((m = map_new()) == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < count; i++) {
        int len = b->lens != NULL ? b->lens[i] : b->len;
        MPI_Aint at = b->adisp != NULL ? b->adisp[i]
                      : b->idisp != NULL ? (MPI_Aint)b->idisp[i] * (v.ub - v.lb)
                                         : (MPI_Aint)i * b->stride;
        if (len < 0)
            err = MPI_ERR_ARG;
        else
            err = append_copies(m, &v, at, len);
        if (err != MPI_SUCCESS) {
            map_free(m);
            return err;
        }
    }
    *out = m;
    return MPI_SUCCESS;
}

static int build_blocks(int count, const blocks *b, MPI_Datatype old, int combiner, int ni,
                        int na, MPI_Datatype *newtype)
{
    typemap *m;
    int err;
    if (newtype == NULL)
        return type_error(MPI_ERR_ARG);
    if ((err = collect(count, b, old, &m)) != MPI_SUCCESS)
        return fail(NULL, err, newtype);
    return make(m, combiner, ni, na, 1, newtype);
}

int iso_smpi_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype)
{
    blocks b = {.len = count, .stride = 0};
    if (count < 0)
        return fail(NULL, MPI_ERR_COUNT, newtype);
    return build_blocks(1, &b, old, MPI_COMBINER_CONTIGUOUS, 1, 0, newtype);
}

/* A vector of more blocks than this is one nested run: an SMPI hvector of
 * the old type, which SMPI walks right for one element (the outer struct
 * steps between elements), so that a vector of 2^29 blocks takes no
 * per-block memory.  Its first and last blocks give its bounds. */
#define FLAT_BLOCKS_MAX 64

static int nested_vector(int count, int len, MPI_Aint stride, MPI_Datatype old, int combiner,
                         int ni, int na, MPI_Datatype *newtype)
{
    typemap *ends;
    view v;
    run r = {.n = 1, .nested = 1};
    blocks b = {.len = len, .stride = (MPI_Aint)(count - 1) * stride};
    int err;
    if ((err = view_of(old, &v)) != MPI_SUCCESS)
        return fail(NULL, err, newtype);
    if (len < 0)
        return fail(NULL, MPI_ERR_ARG, newtype);
    if ((err = collect(2, &b, old, &ends)) != MPI_SUCCESS)
        return fail(NULL, err, newtype);
    r.lo = r.hi = 0;
    for (size_t k = 0; k < ends->nruns; k++) {
        const run *e = &ends->runs[k];
        if (k == 0 || e->disp + e->lo < r.lo)
            r.lo = e->disp + e->lo;
        if (k == 0 || e->disp + e->hi > r.hi)
            r.hi = e->disp + e->hi;
    }
    free(ends->runs);
    ends->runs = NULL;
    ends->nruns = ends->cap = 0;
    ends->size = v.size * len * count;
    if ((err = PMPI_Type_create_hvector(count, len, stride, old, &ends->inner)) != MPI_SUCCESS)
        return fail(ends, err, newtype);
    r.prim = ends->inner;
    if (ends->size > 0 && (err = append_run(ends, &r, 0, 1)) != MPI_SUCCESS)
        return fail(ends, err, newtype);
    return make(ends, combiner, ni, na, 1, newtype);
}

int iso_smpi_Type_vector(int count, int blocklength, int stride, MPI_Datatype old,
                         MPI_Datatype *newtype)
{
    view v;
    blocks b = {.len = blocklength};
    if (newtype == NULL)
        return type_error(MPI_ERR_ARG);
    if (view_of(old, &v) != MPI_SUCCESS)
        return fail(NULL, MPI_ERR_TYPE, newtype);
    b.stride = (MPI_Aint)stride * (v.ub - v.lb);
    if (count > FLAT_BLOCKS_MAX)
        return nested_vector(count, blocklength, b.stride, old, MPI_COMBINER_VECTOR, 3, 0,
                             newtype);
    return build_blocks(count, &b, old, MPI_COMBINER_VECTOR, 3, 0, newtype);
}

int iso_smpi_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype old,
                                 MPI_Datatype *newtype)
{
    blocks b = {.len = blocklength, .stride = stride};
    if (newtype == NULL)
        return type_error(MPI_ERR_ARG);
    if (count > FLAT_BLOCKS_MAX)
        return nested_vector(count, blocklength, stride, old, MPI_COMBINER_HVECTOR, 2, 1, newtype);
    return build_blocks(count, &b, old, MPI_COMBINER_HVECTOR, 2, 1, newtype);
}

int iso_smpi_Type_indexed(int count, const int lens[], const int disps[], MPI_Datatype old,
                          MPI_Datatype *newtype)
{
    blocks b = {.lens = lens, .idisp = disps};
    return build_blocks(count, &b, old, MPI_COMBINER_INDEXED, 2 * count + 1, 0, newtype);
}

int iso_smpi_Type_create_hindexed(int count, const int lens[], const MPI_Aint disps[],
                                  MPI_Datatype old, MPI_Datatype *newtype)
{
    blocks b = {.lens = lens, .adisp = disps};
    return build_blocks(count, &b, old, MPI_COMBINER_HINDEXED, count + 1, count, newtype);
}

int iso_smpi_Type_create_indexed_block(int count, int len, const int disps[], MPI_Datatype old,
                                       MPI_Datatype *newtype)
{
    blocks b = {.len = len, .idisp = disps};
    return build_blocks(count, &b, old, MPI_COMBINER_INDEXED_BLOCK, count + 2, 0, newtype);
}

int iso_smpi_Type_create_hindexed_block(int count, int len, const MPI_Aint disps[],
                                        MPI_Datatype old, MPI_Datatype *newtype)
{
    blocks b = {.len = len, .adisp = disps};
    return build_blocks(count, &b, old, MPI_COMBINER_HINDEXED_BLOCK, 2, count, newtype);
}

/* A struct of predefined types only is padded, as MPICH and Open MPI do
 * (MPI's epsilon): its extent is rounded up to a multiple of the largest
 * alignment among them (taken as the size, at most 8 bytes). */
int iso_smpi_Type_create_struct(int count, const int lens[], const MPI_Aint disps[],
                                const MPI_Datatype types[], MPI_Datatype *newtype)
{
    typemap *m;
    int err, named = 1;
    MPI_Aint align = 1;
    if (newtype == NULL)
        return type_error(MPI_ERR_ARG);
    if (count < 0)
        return fail(NULL, MPI_ERR_COUNT, newtype);
    if ((m = map_new()) == NULL)
        return fail(NULL, MPI_ERR_NO_MEM, newtype);
    for (int i = 0; i < count; i++) {
        view v;
        if ((err = view_of(types[i], &v)) != MPI_SUCCESS)
            return fail(m, err, newtype);
        if (lens[i] < 0)
            return fail(m, MPI_ERR_ARG, newtype);
        if (lookup(types[i]) != NULL)
            named = 0;
        else if (v.size > align)
            align = v.size > 8 ? 8 : (MPI_Aint)v.size;
        if ((err = append_copies(m, &v, disps[i], lens[i])) != MPI_SUCCESS)
            return fail(m, err, newtype);
    }
    if (named && m->bounded) {
        MPI_Aint extent = m->ub - m->lb;
        m->ub += (align - extent % align) % align;
    }
    return make(m, MPI_COMBINER_STRUCT, count + 1, count, count, newtype);
}

int iso_smpi_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                                 MPI_Datatype *newtype)
{
    blocks b = {.len = 1};
    typemap *m;
    int err;
    if (newtype == NULL)
        return type_error(MPI_ERR_ARG);
    if ((err = collect(1, &b, old, &m)) != MPI_SUCCESS)
        return fail(NULL, err, newtype);
    m->lb = lb;
    m->ub = lb + extent;
    m->bounded = 1;
    return make(m, MPI_COMBINER_RESIZED, 0, 2, 1, newtype);
}

int iso_smpi_Type_dup(MPI_Datatype old, MPI_Datatype *newtype)
{
    blocks b = {.len = 1};
    return build_blocks(1, &b, old, MPI_COMBINER_DUP, 0, 0, newtype);
}

int iso_smpi_Type_free(MPI_Datatype *type)
{
    if (type != NULL && *type != MPI_DATATYPE_NULL) {
        typemap **p = &table[bucket(*type)];
        while (*p != NULL && (*p)->handle != *type)
            p = &(*p)->next;
        if (*p != NULL) {
            typemap *m = *p;
            *p = m->next;
            map_free(m);
        }
    }
    return PMPI_Type_free(type);
}

/* ---- queries ---------------------------------------------------------------- */

int iso_smpi_Type_size_x(MPI_Datatype type, MPI_Count *size)
{
    const typemap *m = lookup(type);
    int s, err;
    if (m != NULL) {
        *size = m->size;
        return MPI_SUCCESS;
    }
    if ((err = PMPI_Type_size(type, &s)) == MPI_SUCCESS)
        *size = s;
    return err;
}

int iso_smpi_Type_size(MPI_Datatype type, int *size)
{
    const typemap *m = lookup(type);
    if (m == NULL)
        return PMPI_Type_size(type, size);
    *size = m->size > INT_MAX ? MPI_UNDEFINED : (int)m->size;
    return MPI_SUCCESS;
}

int iso_smpi_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    const typemap *m = lookup(type);
    if (m == NULL)
        return PMPI_Type_get_extent(type, lb, extent);
    *lb = m->lb;
    *extent = m->ub - m->lb;
    return MPI_SUCCESS;
}

int iso_smpi_Type_get_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    int err = iso_smpi_Type_get_extent(type, &l, &e);
    if (err == MPI_SUCCESS)
        *lb = l, *extent = e;
    return err;
}

/* The bytes that hold data: from the lowest run's start to the highest
 * run's end (0, 0 without data). */
int iso_smpi_Type_get_true_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent)
{
    const typemap *m = lookup(type);
    MPI_Aint lo = 0, hi = 0;
    if (m == NULL)
        return PMPI_Type_get_true_extent(type, lb, extent);
    for (size_t r = 0; r < m->nruns; r++) {
        MPI_Aint a = m->runs[r].disp + m->runs[r].lo, b = m->runs[r].disp + m->runs[r].hi;
        if (r == 0 || a < lo)
            lo = a;
        if (r == 0 || b > hi)
            hi = b;
    }
    *lb = lo;
    *extent = hi - lo;
    return MPI_SUCCESS;
}

int iso_smpi_Type_get_true_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent)
{
    MPI_Aint l, e;
    int err = iso_smpi_Type_get_true_extent(type, &l, &e);
    if (err == MPI_SUCCESS)
        *lb = l, *extent = e;
    return err;
}

int iso_smpi_Type_get_envelope(MPI_Datatype type, int *ni, int *na, int *nd, int *combiner)
{
    const typemap *m = lookup(type);
    if (m == NULL)
        return PMPI_Type_get_envelope(type, ni, na, nd, combiner);
    *ni = m->ni, *na = m->na, *nd = m->nd, *combiner = m->combiner;
    return MPI_SUCCESS;
}
