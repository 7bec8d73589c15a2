/* mpicount.h: counting the MPI calls a library makes, through the
 * profiling interface, for the call-cost drivers (isocallcost,
 * sddecallcost).  The library is linked statically, so its calls of the
 * functions defined here come here; each is counted while `counting` is
 * set (mpi_calls in all, counted_calls[] per name in first-call order, with
 * timing also counted_time[], the seconds inside) and passed on to PMPI_.  A driver defines more with COUNTED(ret, name,
 * (params), (args)).  Header only, for one program each. */
#ifndef ISO_BENCH_MPICOUNT_H
#define ISO_BENCH_MPICOUNT_H

#include <mpi.h>

static int counting;
static int timing; /* also the seconds inside each function (counted_time) */
static long long mpi_calls;
#define MAXCOUNTED 40
static const char *counted_name[MAXCOUNTED];
static long long counted_calls[MAXCOUNTED];
static double counted_time[MAXCOUNTED];
static int ncounted;

static void count_call(int *slot, const char *name)
{
    if (*slot < 0 && ncounted < MAXCOUNTED) {
        *slot = ncounted++;
        counted_name[*slot] = name;
    }
    mpi_calls++;
    if (*slot >= 0)
        counted_calls[*slot]++;
}

#define COUNTED(ret, name, params, args)                                                    \
    ret name params                                                                         \
    {                                                                                       \
        static int slot = -1;                                                               \
        double t0_;                                                                         \
        ret rv_;                                                                            \
        if (!counting)                                                                      \
            return P##name args;                                                            \
        count_call(&slot, #name);                                                           \
        if (!timing || slot < 0)                                                            \
            return P##name args;                                                            \
        t0_ = PMPI_Wtime();                                                                 \
        rv_ = P##name args;                                                                 \
        counted_time[slot] += PMPI_Wtime() - t0_;                                           \
        return rv_;                                                                         \
    }
COUNTED(int, MPI_Isend,
        (const void *b, int c, MPI_Datatype t, int d, int tag, MPI_Comm comm, MPI_Request *r),
        (b, c, t, d, tag, comm, r))
COUNTED(int, MPI_Irecv, (void *b, int c, MPI_Datatype t, int s, int tag, MPI_Comm comm, MPI_Request *r),
        (b, c, t, s, tag, comm, r))
COUNTED(int, MPI_Waitall, (int n, MPI_Request r[], MPI_Status st[]), (n, r, st))
COUNTED(int, MPI_Testall, (int n, MPI_Request r[], int *f, MPI_Status st[]), (n, r, f, st))
COUNTED(int, MPI_Test, (MPI_Request *r, int *f, MPI_Status *st), (r, f, st))
COUNTED(int, MPI_Comm_get_errhandler, (MPI_Comm c, MPI_Errhandler *e), (c, e))
COUNTED(int, MPI_Comm_set_errhandler, (MPI_Comm c, MPI_Errhandler e), (c, e))
COUNTED(int, MPI_Errhandler_free, (MPI_Errhandler *e), (e))
COUNTED(int, MPI_Type_size_x, (MPI_Datatype t, MPI_Count *s), (t, s))
COUNTED(int, MPI_Type_get_extent_x, (MPI_Datatype t, MPI_Count *l, MPI_Count *e), (t, l, e))
COUNTED(int, MPI_Type_get_true_extent_x, (MPI_Datatype t, MPI_Count *l, MPI_Count *e), (t, l, e))
COUNTED(int, MPI_Type_get_extent, (MPI_Datatype t, MPI_Aint *l, MPI_Aint *e), (t, l, e))
COUNTED(int, MPI_Type_get_true_extent, (MPI_Datatype t, MPI_Aint *l, MPI_Aint *e), (t, l, e))
COUNTED(int, MPI_Type_size, (MPI_Datatype t, int *s), (t, s))
COUNTED(int, MPI_Get_elements_x, (const MPI_Status *st, MPI_Datatype t, MPI_Count *c), (st, t, c))
COUNTED(int, MPI_Get_count, (const MPI_Status *st, MPI_Datatype t, int *c), (st, t, c))
COUNTED(int, MPI_Mprobe, (int s, int tag, MPI_Comm c, MPI_Message *m, MPI_Status *st), (s, tag, c, m, st))
COUNTED(int, MPI_Improbe, (int s, int tag, MPI_Comm c, int *f, MPI_Message *m, MPI_Status *st),
        (s, tag, c, f, m, st))
COUNTED(int, MPI_Imrecv, (void *b, int n, MPI_Datatype t, MPI_Message *m, MPI_Request *r), (b, n, t, m, r))
COUNTED(int, MPI_Pack, (const void *i, int n, MPI_Datatype t, void *o, int sz, int *p, MPI_Comm c),
        (i, n, t, o, sz, p, c))
COUNTED(int, MPI_Unpack, (const void *i, int sz, int *p, void *o, int n, MPI_Datatype t, MPI_Comm c),
        (i, sz, p, o, n, t, c))
COUNTED(int, MPI_Op_commutative, (MPI_Op op, int *c), (op, c))
COUNTED(int, MPI_Comm_get_attr, (MPI_Comm c, int k, void *v, int *f), (c, k, v, f))
COUNTED(int, MPI_Type_get_attr, (MPI_Datatype t, int k, void *v, int *f), (t, k, v, f))
COUNTED(int, MPI_Query_thread, (int *p), (p))
COUNTED(int, MPI_Type_get_envelope, (MPI_Datatype t, int *a, int *b, int *c, int *d), (t, a, b, c, d))
COUNTED(int, MPI_Reduce_local, (const void *i, void *o, int n, MPI_Datatype t, MPI_Op op), (i, o, n, t, op))
COUNTED(int, MPI_Topo_test, (MPI_Comm c, int *s), (c, s))

#endif
