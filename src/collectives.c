/* The public collectives: describe the buffers, validate the arguments,
 * select and build a schedule, run it (blocking), start it (nonblocking) or
 * bind it (persistent). */
#include "iso_internal.h"

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

/* ---- run ------------------------------------------------------------------ */

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
    iso_sched sched;
    struct iso_request_s *r = NULL;
    int alg, requested, err;
    Iso_error e;

    if (mode != BLOCKING) {
        if (request == NULL)
            return iso__fail(comm, ISO_ERR_REQUEST);
        *request = ISO_REQUEST_NULL;
    }
    if ((err = iso__state_get(comm, 1, &st)) != MPI_SUCCESS)
        return iso__raise(comm, err);
    if ((e = validate(a, st->nbh)) != ISO_ERR_NONE)
        return iso__fail(comm, e);
    requested = st->nbh->algorithm;
    if (mode == PERSISTENT && (e = iso__info_parse(info, &requested, NULL)) != ISO_ERR_NONE)
        return iso__fail(comm, e);
    if ((err = iso__algorithm_select(st->nbh, a, requested, &alg)) != MPI_SUCCESS)
        return iso__raise(comm, err);

    iso__sched_init(&sched);
    err = iso__algorithms[alg].build(st->nbh, a, &sched);
    if (err == MPI_SUCCESS && mode != BLOCKING)
        err = iso__sched_retain_types(&sched, mode == PERSISTENT ? 0 : first_deferred(&sched));
    if (err == MPI_SUCCESS)
        err = iso__request_create(st, comm, &sched, a->sendbuf, a->recvbuf, mode == PERSISTENT, &r);
    iso__sched_destroy(&sched); /* empty unless something failed */
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

/* ---- entry points: alltoall ------------------------------------------------ */

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
