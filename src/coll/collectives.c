/* The public collectives: describe the buffers, validate the arguments,
 * select and build a schedule, run it (blocking), start it (nonblocking) or
 * bind it (persistent). */
#include "coll/coll.h"
#include <stdio.h>

enum call { BLOCKING, NONBLOCKING, PERSISTENT };

#define A2A(sb, sc, st, rb, rc, rt)                                                         \
    iso__args(ISO_ALLTOALL, sb, iso__side_strided(sc, st), rb, iso__side_strided(rc, rt), MPI_OP_NULL)
#define A2AV(sb, sc, sd, st, rb, rc, rd, rt)                                                \
    iso__args(ISO_ALLTOALL, sb, iso__side_v(sc, sd, st), rb, iso__side_v(rc, rd, rt), MPI_OP_NULL)
#define A2AW(sb, sc, sd, st, rb, rc, rd, rt)                                                \
    iso__args(ISO_ALLTOALL, sb, iso__side_w(sc, sd, st), rb, iso__side_w(rc, rd, rt), MPI_OP_NULL)
#define AG(sb, sc, st, rb, rc, rt)                                                          \
    iso__args(ISO_ALLGATHER, sb, iso__side_same(sc, st), rb, iso__side_strided(rc, rt), MPI_OP_NULL)
#define AGV(sb, sc, st, rb, rc, rd, rt)                                                     \
    iso__args(ISO_ALLGATHER, sb, iso__side_same(sc, st), rb, iso__side_v(rc, rd, rt), MPI_OP_NULL)
#define AGW(sb, sc, st, rb, rc, rd, rt)                                                     \
    iso__args(ISO_ALLGATHER, sb, iso__side_same(sc, st), rb, iso__side_w(rc, rd, rt), MPI_OP_NULL)
#define RED(sb, rb, c, t, op) iso__args(ISO_REDUCE, sb, iso__side_same(c, t), rb, iso__side_same(c, t), op)
#define SRED(sb, sc, sd, st, rb, c, t, op)                                                  \
    iso__args(ISO_SCATTER_REDUCE, sb, iso__side_w(sc, sd, st), rb, iso__side_same(c, t), op)

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

/* ISO_VERBOSE: rank 0 of comm says once per neighborhood what runs for a
 * collective family (algorithm and mode), with rank 0's figures. */
static void report_choice(const char *fn, MPI_Comm comm, iso_nbh *nb, iso_coll coll,
                          int requested, int alg, iso_msg_mode mode, const iso_sched *sched)
{
    int rounds, messages;
    long long hops;
    char what[96];
    unsigned char *done = &nb->reported[coll][alg][mode];
    if (*done)
        return;
    *done = 1;
    iso__sched_stats(sched, &rounds, &messages, &hops);
    snprintf(what, sizeof what, "%s: s=%d", fn, nb->s);
    iso__report_choice(comm, what, requested == ISO_ALG_AUTO, iso__algorithms[alg].name,
                       "%s%s: %d rounds, %d messages, %lld block hops on rank 0",
                       iso__algorithms[alg].shared ? ", mode " : "",
                       iso__algorithms[alg].shared ? iso__mode_names[mode] : "", rounds, messages,
                       hops);
}

/* The end of every call: a persistent request is handed out, a
 * nonblocking one started, a blocking one started and completed, then kept
 * in cache_nb's blocking-call cache (isomorphic calls; reused: it came from
 * there) or destroyed. */
static int finish(struct iso_request_s *r, MPI_Comm comm, enum call call, Iso_request *request,
                  const char *fn, iso_nbh *cache_nb, const iso_args *a, int reused)
{
    int err;
    if (call == PERSISTENT) {
        *request = r;
        return MPI_SUCCESS;
    }
    if (call == NONBLOCKING) {
        if ((err = iso__request_start(r)) != MPI_SUCCESS) {
            iso__request_destroy(r);
            return iso__raise_in(fn, comm, err);
        }
        *request = r;
        return MPI_SUCCESS;
    }
    /* as Iso_start and Iso_wait: each swaps MPI_COMM_WORLD's error handler
     * itself where it makes a completion call (core/request.c) */
    if ((err = iso__request_start(r)) == MPI_SUCCESS)
        err = iso__request_wait(r);
    if (err == MPI_SUCCESS && cache_nb != NULL) /* kept for the next blocking call like it */
        iso__callcache_put(cache_nb, a, r, reused);
    else
        iso__request_destroy(r);
    return iso__raise_in(fn, comm, err);
}

/* Distributed graph communicators (graph.c, graph_route.c): the alltoall forms,
 * direct or routed; the other collectives are an error.  A persistent
 * request under auto whose call shape is not tuned yet runs the shape's
 * trials first (tune_graph.c), then takes the winner. */
static int run_graph(iso_args *a, MPI_Comm comm, iso_graph *g, enum call call, MPI_Info info,
                     Iso_request *request, const char *fn)
{
    static const iso_graph_use uses[] = {ISO_GRAPH_BLOCKING, ISO_GRAPH_NONBLOCKING,
                                         ISO_GRAPH_PERSISTENT};
    iso_graph_opts o = g->opts;
    struct iso_request_s *r = NULL;
    iso_tune_shape *trial = NULL, **tuned = call == NONBLOCKING ? NULL : &trial;
    int err, direct = 1;

    /* the options first: under vpt an argument error is spread to every
     * process, which must all know that vpt runs */
    if (call == PERSISTENT && (err = iso__graph_info_parse(info, &o)) != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);
    err = iso__args_validate_lists(a, g->outdegree, g->dests, g->indegree, g->sources);
    if (o.algorithm != ISO_GRAPH_DIRECT) {
        err = iso__graph_route_request(g, comm, &o, a, err, uses[call], &direct, &r, tuned);
        if (err == MPI_SUCCESS && call == PERSISTENT && trial != NULL &&
            (err = iso__graph_tune_init(g, comm, &o, a, trial, fn)) == MPI_SUCCESS)
            err = iso__graph_route_request(g, comm, &o, a, MPI_SUCCESS, uses[call], &direct, &r,
                                           NULL); /* the winner (or, untuned, the model's) */
        if (err != MPI_SUCCESS)
            return iso__raise_in(fn, comm, err);
    }
    if (direct && (err != MPI_SUCCESS ||
                   (err = iso__graph_direct_request(g, comm, a, uses[call], &r)) != MPI_SUCCESS))
        return iso__raise_in(fn, comm, err);
    if (call == BLOCKING && trial != NULL) /* a trial call of auto's tuning: timed */
        return iso__raise_in(fn, comm, iso__tune_run(g->tuner, o.verbose, g->priv, comm, fn,
                                                     trial, r, NULL));
    return finish(r, comm, call, request, fn, NULL, a, 0);
}

/* A trial call of auto's tuning on st's neighborhood (tune.c): timed; its
 * request kept by the call cache while its candidate's block of trial
 * calls lasts (reused: it came from there), then dropped. */
static int tune_trial(iso_state *st, MPI_Comm comm, const char *fn, iso_tune_shape *trial,
                      const iso_args *a, struct iso_request_s *r, int reused)
{
    struct iso_request_s *kept;
    int err = iso__tune_run(st->nbh->tuner, st->nbh->verbose, st->priv, comm, fn, trial, r,
                            &kept);
    if (kept != NULL)
        iso__callcache_put(st->nbh, a, kept, reused);
    else
        iso__callcache_drop(st->nbh, a->coll);
    return err;
}

/* The isomorphic neighborhood collectives on the neighborhood of state st
 * (fn: the public function, named in error messages). */
static int run_cart(iso_args *a, MPI_Comm comm, iso_state *st, enum call call, MPI_Info info,
                    Iso_request *request, const char *fn)
{
    iso_sched *sched = NULL;
    struct iso_request_s *r = NULL;
    int alg, requested, shared, err;
    iso_msg_mode mode, chosen;
    iso_tune_shape *trial = NULL;

    if (call == BLOCKING && (r = iso__callcache_take(st->nbh, a)) != NULL) {
        if (st->nbh->tuner != NULL && (trial = iso__tune_trial_of(st->nbh, a)) != NULL)
            return iso__raise_in(fn, comm, tune_trial(st, comm, fn, trial, a, r, 1));
        return finish(r, comm, call, request, fn, st->nbh, a, 1);
    }
    requested = st->nbh->algorithm;
    mode = st->nbh->mode;
    err = iso__args_validate(a, st->nbh);
    if (call == PERSISTENT && err == MPI_SUCCESS)
        err = iso__op_info_parse(info, &requested, &mode);
    if (call == PERSISTENT && iso__args_irregular(a))
        err = iso__args_agree(st->priv, st->nbh, a, err);
    if (err != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);
    /* persistent requests and blocking calls (kept by the call cache) run
     * many times on types built once; nonblocking calls build per call.
     * Blocking auto calls may be tuned (tune.c). */
    if (call == BLOCKING && requested == ISO_ALG_AUTO && st->nbh->tune > 0)
        err = iso__tune_schedule(st->nbh, a, mode, &alg, &chosen, &sched, &trial);
    else if ((err = iso__algorithm_select(st->nbh, a, requested, mode, call != NONBLOCKING, &alg,
                                          &chosen)) == MPI_SUCCESS)
        err = iso__schedule_get(st->nbh, a, alg, &sched);
    if (err != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);

    /* Whatever is used after the call returns must outlive the user's
     * datatypes and arrays: per-call schedules hold their types, shared
     * ones look blocks up in the request's copy of the arguments. */
    shared = iso__algorithms[alg].shared;
    if (call != BLOCKING && !shared)
        err = iso__sched_retain_types(sched, call == PERSISTENT ? 0 : first_deferred(sched));
    if (err == MPI_SUCCESS)
        err = iso__sched_request(st->priv, comm, sched, a, st->nbh->s, st->nbh->s,
                                 call != BLOCKING && shared,
                                 call == PERSISTENT, chosen, iso__algorithms[alg].name, &r);
    if (err == MPI_SUCCESS && trial != NULL) { /* timed; kept while its block lasts */
        iso__sched_release(sched);
        return iso__raise_in(fn, comm, tune_trial(st, comm, fn, trial, a, r, 0));
    }
    if (err == MPI_SUCCESS && st->nbh->verbose)
        report_choice(fn, comm, st->nbh, a->coll, requested, alg, chosen, sched);
    iso__sched_release(sched);
    if (err != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);
    return finish(r, comm, call, request, fn, st->nbh, a, 0);
}

/* ---- dispatch ------------------------------------------------------------- */

/* Every entry point: a communicator with an isomorphic neighborhood runs
 * the Cartesian collectives; only a communicator without one may be a
 * distributed graph communicator (alltoall forms), and only then is its
 * topology asked for. */
static int run(iso_args *a, MPI_Comm comm, enum call call, MPI_Info info, Iso_request *request,
               const char *fn)
{
    iso_state *st;
    iso_graph *g = NULL;
    int graph = 0, err, e;

    if (call != BLOCKING) {
        if (request == NULL)
            return iso__raise_in(fn, comm, iso__error(ISO_ERR_REQUEST));
        *request = ISO_REQUEST_NULL;
    }
    if ((err = iso__state_get(comm, 1, &st)) == MPI_SUCCESS)
        return run_cart(a, comm, st, call, info, request, fn);
    if ((e = iso__graph_get(comm, a->coll == ISO_ALLTOALL, &graph, &g)) != MPI_SUCCESS)
        return iso__raise_in(fn, comm, e);
    if (graph && g != NULL)
        return run_graph(a, comm, g, call, info, request, fn);
    if (graph)
        err = iso__error_msg(ISO_ERR_NOT_CART, "on a distributed graph communicator only the "
                             "neighbor alltoall, alltoallv and alltoallw forms are supported");
    return iso__raise_in(fn, comm, err);
}

/* ---- entry points: alltoall ------------------------------------------------ */

int Iso_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                          void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm,
                           Iso_request *request)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype,
                               MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = A2A(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

int Iso_neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                            MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                            const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm,
                            Iso_request *request)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm isocomm,
                                MPI_Info info, Iso_request *request)
{
    iso_args a = A2AV(sendbuf, sendcounts, sdispls, sendtype, recvbuf, recvcounts, rdispls,
                      recvtype);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

int Iso_neighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                           const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                           const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                           MPI_Comm isocomm)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[], const MPI_Aint sdispls[],
                            const MPI_Datatype sendtypes[], void *recvbuf, const int recvcounts[],
                            const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                            MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm isocomm, MPI_Info info,
                                Iso_request *request)
{
    iso_args a = A2AW(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, recvcounts, rdispls,
                      recvtypes);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

/* ---- entry points: allgather ---------------------------------------------- */

int Iso_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                           void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm isocomm,
                            Iso_request *request)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = AG(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

int Iso_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const int displs[],
                            MPI_Datatype recvtype, MPI_Comm isocomm)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const int displs[],
                             MPI_Datatype recvtype, MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const int displs[],
                                 MPI_Datatype recvtype, MPI_Comm isocomm, MPI_Info info,
                                 Iso_request *request)
{
    iso_args a = AGV(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

int Iso_neighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                            void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                            const MPI_Datatype recvtypes[], MPI_Comm isocomm)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                             void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                             const MPI_Datatype recvtypes[], MPI_Comm isocomm,
                             Iso_request *request)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_allgatherw_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                 void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                                 const MPI_Datatype recvtypes[], MPI_Comm isocomm, MPI_Info info,
                                 Iso_request *request)
{
    iso_args a = AGW(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtypes);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

/* ---- entry points: reductions --------------------------------------------- */

int Iso_neighbor_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm isocomm)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                         MPI_Op op, MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                             MPI_Op op, MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = RED(sendbuf, recvbuf, count, datatype, op);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}

int Iso_neighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                MPI_Comm isocomm)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, BLOCKING, MPI_INFO_NULL, NULL, __func__);
}

int Iso_ineighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                 const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                 void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                 MPI_Comm isocomm, Iso_request *request)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, NONBLOCKING, MPI_INFO_NULL, request, __func__);
}

int Iso_neighbor_scatter_reduce_init(const void *sendbuf, const int sendcounts[],
                                     const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                     void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm isocomm, MPI_Info info, Iso_request *request)
{
    iso_args a = SRED(sendbuf, sendcounts, sdispls, sendtypes, recvbuf, count, datatype, op);
    return run(&a, isocomm, PERSISTENT, info, request, __func__);
}
