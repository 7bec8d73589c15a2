/* Small facts about MPI datatypes. */
#include "core/core.h"
#include <string.h>

int iso__type_is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 1; /* not a type we could duplicate either */
    return combiner == MPI_COMBINER_NAMED;
}

/* MPI has no query for "committed".  MPI_Pack of zero elements checks the
 * type and moves nothing: MPICH 4.0 and Open MPI 4.1 both fail it for an
 * uncommitted type (whereas Open MPI's MPI_Pack_size crashes on one).  It
 * runs on a library duplicate of MPI_COMM_SELF whose handler returns
 * errors, so the check neither aborts nor communicates. */
static MPI_Comm check_comm = MPI_COMM_NULL;

static void check_comm_free(void)
{
    MPI_Comm_free(&check_comm);
}

/* The predefined types programs pass most: committed by definition, so the
 * check costs them no MPI_Pack (about 160 instructions per type and call
 * in MPICH 4.0). */
static int type_common_predefined(MPI_Datatype t)
{
    static const MPI_Datatype common[] = {MPI_BYTE,   MPI_CHAR,    MPI_INT,       MPI_DOUBLE,
                                          MPI_FLOAT,  MPI_LONG,    MPI_LONG_LONG, MPI_UNSIGNED,
                                          MPI_PACKED, MPI_INT64_T, MPI_INT32_T,   MPI_UINT64_T};
    for (size_t k = 0; k < sizeof common / sizeof common[0]; k++)
        if (t == common[k])
            return 1;
    return 0;
}

int iso__type_check(MPI_Datatype t)
{
    char in = 0, out = 0;
    int pos = 0, err;
    if (t == MPI_DATATYPE_NULL)
        return iso__error(ISO_ERR_TYPE);
    if (type_common_predefined(t))
        return MPI_SUCCESS;
    if (check_comm == MPI_COMM_NULL) {
        if ((err = MPI_Comm_dup(MPI_COMM_SELF, &check_comm)) != MPI_SUCCESS)
            return err;
        if ((err = MPI_Comm_set_errhandler(check_comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS ||
            (err = iso__at_finalize(check_comm_free)) != MPI_SUCCESS) {
            MPI_Comm_free(&check_comm);
            return err;
        }
    }
    if (MPI_Pack(&in, 0, t, &out, 1, &pos, check_comm) != MPI_SUCCESS)
        return iso__error(ISO_ERR_TYPE);
    return MPI_SUCCESS;
}

/* Element k of count x t starts at k * extent, and its bytes are
 * [tlb, tlb + true extent) from there.  With a negative extent the elements
 * go downwards, so the lowest byte is that of the last element. */
int iso__type_span(int count, MPI_Datatype t, MPI_Aint *lo, MPI_Aint *span)
{
    MPI_Aint lb, extent, tlb, textent, step, reach;
    int err;
    *lo = *span = 0;
    if (count <= 0)
        return MPI_SUCCESS;
    if ((err = MPI_Type_get_extent(t, &lb, &extent)) != MPI_SUCCESS ||
        (err = MPI_Type_get_true_extent(t, &tlb, &textent)) != MPI_SUCCESS)
        return err;
    if (__builtin_mul_overflow((MPI_Aint)(count - 1), extent < 0 ? -extent : extent, &reach) ||
        __builtin_add_overflow(reach, textent, span))
        return iso__error(ISO_ERR_COUNT);
    step = extent < 0 ? (MPI_Aint)(count - 1) * extent : 0;
    *lo = tlb + step;
    return MPI_SUCCESS;
}

/* MPI_Type_contiguous(1, t) has t's type map, bounds and extent. */
int iso__type_hold(MPI_Datatype t, MPI_Datatype *held)
{
    int err = MPI_Type_contiguous(1, t, held);
    if (err == MPI_SUCCESS && (err = MPI_Type_commit(held)) != MPI_SUCCESS)
        MPI_Type_free(held);
    return err;
}

/* MPI_Pack, made right on MPICH 4.0.x.  Its MPI_Pack copies a contiguous
 * derived type with memcpy, rounded down to a whole number of elements of
 * the basic type, but takes that element size from bits 8-15 of the
 * *derived* type's handle (MPIR_Datatype_get_basic_size(datatype) in
 * typerep_do_pack, src/mpi/datatype/typerep/src/typerep_yaksa_pack.c; fixed
 * in MPICH 4.1): a handle whose bits give e > 1 cuts count x size bytes down
 * to a multiple of e.  Which handles do so depends only on how many types
 * exist, so duplicates and holds of a type fail as often as the type itself
 * (28 of 200 packs short in a plain-MPI reproducer).  MPICH takes that path only for types
 * whose bytes are one contiguous run from the true lower bound, and only it
 * packs fewer bytes than count x size into room enough: the missing tail is
 * then the next bytes of that run. */
int iso__pack(const void *in, int count, MPI_Datatype t, void *out, int outsize, int *pos,
              MPI_Comm comm)
{
#ifdef MPICH_VERSION
    MPI_Count size;
    MPI_Aint tlb, textent;
    int start = *pos, err = MPI_Pack(in, count, t, out, outsize, pos, comm);
    long long want, got = *pos - start;
    if (err != MPI_SUCCESS || count <= 0 || (err = MPI_Type_size_x(t, &size)) != MPI_SUCCESS)
        return err;
    want = (long long)size * count;
    if (got < want && want <= outsize - start &&
        (err = MPI_Type_get_true_extent(t, &tlb, &textent)) == MPI_SUCCESS) {
        memcpy((char *)out + *pos, (const char *)in + tlb + got, (size_t)(want - got));
        *pos = start + (int)want;
    }
    return err;
#else
    return MPI_Pack(in, count, t, out, outsize, pos, comm);
#endif
}

/* ---- watching derived types for reuse of their handles --------------------
 * A freed handle may name a new type later.  Caches that keep a derived
 * type's handle (coll/callcache.c) give it an attribute whose delete
 * callback, run when the user frees the type, advances a generation
 * counter: an entry made in an older generation is never used.  Dups do not
 * copy the attribute (MPI_TYPE_NULL_COPY_FN). */
static int watch_keyval = MPI_KEYVAL_INVALID;
static unsigned long watch_generation;

static int watch_deleted(MPI_Datatype t, int keyval, void *value, void *extra)
{
    (void)t, (void)keyval, (void)value, (void)extra;
    __atomic_add_fetch(&watch_generation, 1, __ATOMIC_RELAXED);
    return MPI_SUCCESS;
}

static void watch_keyval_free(void)
{
    MPI_Type_free_keyval(&watch_keyval);
}

unsigned long iso__type_generation(void)
{
    return __atomic_load_n(&watch_generation, __ATOMIC_RELAXED);
}

int iso__type_watch(MPI_Datatype t)
{
    static int sentinel;
    void *value;
    int flag = 0, err = MPI_SUCCESS;
    if (t == MPI_DATATYPE_NULL || iso__type_is_named(t))
        return MPI_SUCCESS;
    iso__lock();
    if (watch_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, watch_deleted, &watch_keyval,
                                      NULL)) == MPI_SUCCESS &&
        (err = iso__at_finalize(watch_keyval_free)) != MPI_SUCCESS)
        MPI_Type_free_keyval(&watch_keyval);
    iso__unlock();
    if (err == MPI_SUCCESS && (err = MPI_Type_get_attr(t, watch_keyval, &value, &flag)) ==
                                  MPI_SUCCESS && !flag)
        err = MPI_Type_set_attr(t, watch_keyval, &sentinel);
    return err;
}
