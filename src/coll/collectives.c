/* The public collectives: describe the buffers, validate the arguments,
 * select and build a schedule, run it (blocking), start it (nonblocking) or
 * bind it (persistent). */
#include "iso_internal.h"
#include <stdlib.h>
#include <string.h>

enum mode { BLOCKING, NONBLOCKING, PERSISTENT };

/* ---- buffer descriptions -------------------------------------------------- */

static iso_side strided(int count, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_STRIDED, .count = count, .type = type};
}

static iso_side same(int count, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_SAME, .count = count, .type = type};
}

static iso_side vside(const int *counts, const int *displs, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_V, .counts = counts, .idispls = displs, .type = type};
}

static iso_side wside(const int *counts, const MPI_Aint *displs, const MPI_Datatype *types)
{
    return (iso_side){.layout = ISO_LAYOUT_W, .counts = counts, .adispls = displs, .types = types};
}

static iso_args args(iso_coll coll, const void *sendbuf, iso_side send, void *recvbuf,
                     iso_side recv, MPI_Op op)
{
    return (iso_args){.coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf, .send = send,
                      .recv = recv, .op = op};
}

/* ---- validation ---------------------------------------------------------- */

/* Checks the blocks that will move (those whose peer exists). */
static Iso_error check_side(iso_side *sd, int s, const int *peers)
{
    if (sd->layout == ISO_LAYOUT_W) {
        if (s > 0 && (sd->counts == NULL || sd->adispls == NULL || sd->types == NULL))
            return ISO_ERR_ARG;
        for (int i = 0; i < s; i++) {
            if (peers[i] == MPI_PROC_NULL)
                continue;
            if (sd->counts[i] < 0)
                return ISO_ERR_COUNT;
            if (sd->types[i] == MPI_DATATYPE_NULL)
                return ISO_ERR_TYPE;
        }
        return ISO_ERR_NONE;
    }
    if (sd->type == MPI_DATATYPE_NULL)
        return ISO_ERR_TYPE;
    if (sd->layout == ISO_LAYOUT_V) {
        if (s > 0 && (sd->counts == NULL || sd->idispls == NULL))
            return ISO_ERR_ARG;
        for (int i = 0; i < s; i++)
            if (peers[i] != MPI_PROC_NULL && sd->counts[i] < 0)
                return ISO_ERR_COUNT;
    } else if (sd->count < 0) {
        return ISO_ERR_COUNT;
    }
    {
        MPI_Aint lb;
        if (MPI_Type_get_extent(sd->type, &lb, &sd->extent) != MPI_SUCCESS)
            return ISO_ERR_TYPE;
    }
    return ISO_ERR_NONE;
}

static Iso_error check_reduction(const iso_args *a, const iso_nbh *nb)
{
    int commute = 0, size, vsize;
    if (a->op == MPI_OP_NULL || MPI_Op_commutative(a->op, &commute) != MPI_SUCCESS || !commute)
        return ISO_ERR_OP;
    if (a->coll != ISO_SCATTER_REDUCE)
        return ISO_ERR_NONE;
    /* each vector must carry count x datatype */
    MPI_Type_size(a->recv.type, &size);
    for (int i = 0; i < nb->s; i++) {
        if (nb->targets[i] == MPI_PROC_NULL)
            continue;
        if (MPI_Type_size(a->send.types[i], &vsize) != MPI_SUCCESS)
            return ISO_ERR_TYPE;
        if ((long long)vsize * a->send.counts[i] != (long long)size * a->recv.count)
            return ISO_ERR_COUNT;
    }
    return ISO_ERR_NONE;
}

static Iso_error validate(iso_args *a, const iso_nbh *nb)
{
    Iso_error e;
    if (a->sendbuf == MPI_IN_PLACE || a->recvbuf == MPI_IN_PLACE)
        return ISO_ERR_ARG;
    if ((e = check_side(&a->send, nb->s, nb->targets)) != ISO_ERR_NONE ||
        (e = check_side(&a->recv, nb->s, nb->sources)) != ISO_ERR_NONE)
        return e;
    if (a->coll == ISO_REDUCE || a->coll == ISO_SCATTER_REDUCE)
        return check_reduction(a, nb);
    return ISO_ERR_NONE;
}

#define A2A(sb, sc, st, rb, rc, rt)                                                         \
    args(ISO_ALLTOALL, sb, strided(sc, st), rb, strided(rc, rt), MPI_OP_NULL)
#define A2AV(sb, sc, sd, st, rb, rc, rd, rt)                                                \
    args(ISO_ALLTOALL, sb, vside(sc, sd, st), rb, vside(rc, rd, rt), MPI_OP_NULL)
#define A2AW(sb, sc, sd, st, rb, rc, rd, rt)                                                \
    args(ISO_ALLTOALL, sb, wside(sc, sd, st), rb, wside(rc, rd, rt), MPI_OP_NULL)
#define AG(sb, sc, st, rb, rc, rt)                                                          \
    args(ISO_ALLGATHER, sb, same(sc, st), rb, strided(rc, rt), MPI_OP_NULL)
#define AGV(sb, sc, st, rb, rc, rd, rt)                                                     \
    args(ISO_ALLGATHER, sb, same(sc, st), rb, vside(rc, rd, rt), MPI_OP_NULL)
#define AGW(sb, sc, st, rb, rc, rd, rt)                                                     \
    args(ISO_ALLGATHER, sb, same(sc, st), rb, wside(rc, rd, rt), MPI_OP_NULL)
#define RED(sb, rb, c, t, op) args(ISO_REDUCE, sb, same(c, t), rb, same(c, t), op)
#define SRED(sb, sc, sd, st, rb, c, t, op)                                                  \
    args(ISO_SCATTER_REDUCE, sb, wside(sc, sd, st), rb, same(c, t), op)

/* ---- run ------------------------------------------------------------------ */

/* Is a an alltoall/allgather v or w form? */
static int irregular(const iso_args *a)
{
    return (a->coll == ISO_ALLTOALL || a->coll == ISO_ALLGATHER) &&
           (a->send.layout == ISO_LAYOUT_V || a->send.layout == ISO_LAYOUT_W ||
            a->recv.layout == ISO_LAYOUT_V || a->recv.layout == ISO_LAYOUT_W);
}

/* Persistent v/w forms: the processes agree on one block size for the cost
 * model (the largest over processes of the mean bytes per block sent), so
 * that auto can combine them.  One allreduce on the private communicator:
 * an _init call is collective.  Every process takes part even when its own
 * arguments are bad (e: its library error, or 0), and then every process
 * gets the error, so a bad argument on one process cannot leave the others
 * waiting. */
static Iso_error agree_block_bytes(iso_state *st, iso_args *a, Iso_error e)
{
    const iso_nbh *nb = st->nbh;
    double v[2] = {0.0, (double)e}, r[2];
    int n = 0;
    for (int i = 0; i < nb->s && e == ISO_ERR_NONE; i++) {
        iso_loc l;
        int size;
        if (nb->targets[i] == MPI_PROC_NULL)
            continue;
        l = iso__block(&a->send, ISO_BUF_SEND, i);
        if (MPI_Type_size(l.type, &size) != MPI_SUCCESS)
            return ISO_ERR_TYPE;
        v[0] += (double)size * l.count;
        n++;
    }
    v[0] = n > 0 ? v[0] / n : 0.0;
    if (MPI_Allreduce(v, r, 2, MPI_DOUBLE, MPI_MAX, st->priv) != MPI_SUCCESS)
        return ISO_ERR_INTERN;
    a->agreed_bytes = r[0];
    return (Iso_error)(int)r[1];
}

/* Index of the first op used after the call returns (nonblocking): every op
 * past round 0's sends and receives. */
static int first_deferred(const iso_sched *s)
{
    int k = 0, end = s->nrounds ? s->round_end[0] : 0;
    while (k < end && (s->ops[k].kind == ISO_OP_SEND || s->ops[k].kind == ISO_OP_RECV))
        k++;
    return k < end ? k : end;
}

static int run(iso_args *a, MPI_Comm comm, enum mode mode, MPI_Info info, Iso_request *request)
{
    iso_state *st;
    iso_sched *sched = NULL;
    struct iso_request_s *r = NULL;
    int alg, requested, combine, datatype, err;
    Iso_error e;

    if (mode != BLOCKING) {
        if (request == NULL)
            return iso__fail(comm, ISO_ERR_REQUEST);
        *request = ISO_REQUEST_NULL;
    }
    if ((err = iso__state_get(comm, 1, &st)) != MPI_SUCCESS)
        return iso__raise(comm, err);
    requested = st->nbh->algorithm;
    combine = st->nbh->combine;
    e = validate(a, st->nbh);
    if (mode == PERSISTENT && e == ISO_ERR_NONE)
        e = iso__info_parse(info, &requested, &combine, NULL);
    if (mode == PERSISTENT && irregular(a))
        e = agree_block_bytes(st, a, e);
    if (e != ISO_ERR_NONE)
        return iso__fail(comm, e);
    if ((err = iso__algorithm_select(st->nbh, a, requested, combine, mode == PERSISTENT, &alg,
                                     &datatype)) != MPI_SUCCESS ||
        (err = iso__schedule_get(st->nbh, a, alg, &sched)) != MPI_SUCCESS)
        return iso__raise(comm, err);

    /* Whatever is used after the call returns must outlive the user's
     * datatypes and arrays: per-call schedules hold their types, shared
     * ones look blocks up in the request's copy of the arguments. */
    if (mode != BLOCKING && !sched->runtime_args)
        err = iso__sched_retain_types(sched, mode == PERSISTENT ? 0 : first_deferred(sched));
    if (err == MPI_SUCCESS)
        err = iso__request_create(st, comm, sched, a, st->nbh->s,
                                  mode != BLOCKING && sched->runtime_args, mode == PERSISTENT,
                                  datatype, &r);
    iso__sched_release(sched);
    if (err != MPI_SUCCESS)
        return iso__raise(comm, err);

    if (mode == PERSISTENT) {
        *request = r;
        return MPI_SUCCESS;
    }
    err = iso__request_start(r);
    if (err == MPI_SUCCESS && mode == NONBLOCKING) {
        *request = r;
        return MPI_SUCCESS;
    }
    if (err == MPI_SUCCESS)
        err = iso__request_wait(r);
    iso__request_destroy(r);
    return iso__raise(comm, err);
}

/* ---- introspection ---------------------------------------------------------- */

int Iso_schedule_info(MPI_Comm isocomm, const char *collective, const char *algorithm,
                      int *rounds, int *messages, long long *block_hops)
{
    iso_state *st;
    iso_sched *sched = NULL;
    iso_args a;
    int coll = -1, requested, alg, datatype, err, s, *ones = NULL;
    MPI_Aint *zeros = NULL;
    MPI_Datatype *types = NULL;

    if (!collective || !algorithm || !rounds || !messages || !block_hops)
        return iso__fail(isocomm, ISO_ERR_ARG);
    if ((err = iso__state_get(isocomm, 0, &st)) != MPI_SUCCESS)
        return iso__raise(isocomm, err);
    for (int k = 0; k < ISO_NCOLL; k++)
        if (!strcmp(collective, iso__coll_names[k]))
            coll = k;
    if (coll < 0)
        return iso__fail(isocomm, ISO_ERR_ARG);
    if (iso__algorithm_lookup(algorithm, &requested) != ISO_ERR_NONE)
        return iso__fail(isocomm, ISO_ERR_ALGORITHM);
    /* the figures for one MPI_DOUBLE per block */
    s = st->nbh->s;
    ones = malloc(sizeof(int) * (size_t)(s + 1));
    zeros = calloc((size_t)s + 1, sizeof(MPI_Aint));
    types = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    if (!ones || !zeros || !types) {
        err = iso__errclass(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int i = 0; i < s; i++) {
        ones[i] = 1;
        types[i] = MPI_DOUBLE;
    }
    switch (coll) {
    case ISO_ALLTOALL:
        a = A2A(NULL, 1, MPI_DOUBLE, NULL, 1, MPI_DOUBLE);
        break;
    case ISO_ALLGATHER:
        a = AG(NULL, 1, MPI_DOUBLE, NULL, 1, MPI_DOUBLE);
        break;
    case ISO_REDUCE:
        a = RED(NULL, NULL, 1, MPI_DOUBLE, MPI_SUM);
        break;
    default:
        a = SRED(NULL, ones, zeros, types, NULL, 1, MPI_DOUBLE, MPI_SUM);
        break;
    }
    a.send.extent = a.recv.extent = (MPI_Aint)sizeof(double);
    if ((err = iso__algorithm_select(st->nbh, &a, requested, st->nbh->combine, 0, &alg,
                                     &datatype)) == MPI_SUCCESS &&
        (err = iso__schedule_get(st->nbh, &a, alg, &sched)) == MPI_SUCCESS)
        iso__sched_stats(sched, rounds, messages, block_hops);
    iso__sched_release(sched);
fn_exit:
    free(ones);
    free(zeros);
    free(types);
    return iso__raise(isocomm, err);
}

/* ---- entry points: alltoall ------------------------------------------------ */

int Iso_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm,
                           Iso_request *request)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request);
}

int Iso_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm,
                            Iso_request *request)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm,
                                MPI_Info info, Iso_request *request)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, PERSISTENT, info, request);
}

int Iso_neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm isocomm)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm isocomm, MPI_Info info,
                                Iso_request *request)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, PERSISTENT, info, request);
}

/* ---- entry points: allgather ---------------------------------------------- */

int Iso_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm,
                            Iso_request *request)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request);
}

int Iso_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm isocomm, MPI_Info info,
                                 Iso_request *request)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request);
}

int Iso_neighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                            const MPI_Datatype recvtypes[], MPI_Comm isocomm)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                             const MPI_Datatype recvtypes[], MPI_Comm isocomm,
                             Iso_request *request)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_allgatherw_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                                 const MPI_Datatype recvtypes[], MPI_Comm isocomm, MPI_Info info,
                                 Iso_request *request)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, PERSISTENT, info, request);
}

/* ---- entry points: reductions --------------------------------------------- */

int Iso_neighbor_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm isocomm)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, PERSISTENT, info, request);
}

int Iso_neighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm isocomm)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL);
}

int Iso_ineighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request);
}

int Iso_neighbor_scatter_reduce_init(const void *sendbuf, const int sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, PERSISTENT, info, request);
}
