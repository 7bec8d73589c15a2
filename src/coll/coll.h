/* coll: the isomorphic neighborhood collectives (DESIGN.md, "Layers").
 *   create.c         Iso_neighborhood_create: options, verification
 *   collectives.c    the Iso_neighbor_* entry points: describe, run
 *   validate.c       argument checks and the agreement of _init calls
 *   algorithms.c     the algorithm table and the schedule cache
 *   select.c         choosing the algorithm and the message mode
 *   cost.c           the cost model
 *   schedule_info.c  Iso_schedule_info
 *   direct.c dimwise.c bruck.c   one builder per algorithm
 *   graph.c          distributed graph communicators: their state, options
 *                    and direct's schedule
 *   vpt.c            store-and-forward over a virtual process topology on
 *                    graph communicators: the plan and its schedule
 *   combining.c      the message-combining builder over routes (dimwise,
 *                    bruck) */
#ifndef ISO_COLL_H
#define ISO_COLL_H

#include "topo/topo.h"
#include "vpt/shape.h"

/* ---- algorithms (algorithms.c) ---------------------------------------------- */
typedef int (*iso_builder)(const iso_nbh *nb, const iso_args *a, iso_sched *out);
/* The structural figures of the schedule build would make, without
 * building it (what auto needs to decide). */
typedef int (*iso_figurer)(const iso_nbh *nb, const iso_args *a, iso_figures *out);

typedef struct {
    const char *name;
    iso_builder build;
    iso_figurer figures; /* shared algorithms */
    /* The schedule depends only on the neighborhood and the collective
     * family: built once, cached in the neighborhood, shared by requests,
     * and its ops find the user's blocks through the request's arguments
     * (PACK, DELIVER).  Otherwise built per call for its buffers and types. */
    int shared;
} iso_algorithm;

extern const iso_algorithm iso__algorithms[];
extern const int iso__nalgorithms;

/* Index for a name ("auto" -> ISO_ALG_AUTO), or the ALGORITHM code. */
int iso__algorithm_lookup(const char *name, int *index);
/* "auto", "pack", "datatype" -> ISO_MODE_*, or the INFO code. */
int iso__mode_lookup(const char *name, iso_msg_mode *mode);
extern const char *const iso__mode_names[3];
/* "auto, direct, ..." for error messages. */
void iso__algorithm_names(char *buf, size_t len);
/* The schedule of algorithm alg for a call: from the cache, or built.
 * Returns a new reference in *out. */
int iso__schedule_get(iso_nbh *nb, const iso_args *a, int alg, iso_sched **out);
/* The blocking-call cache (callcache.c).  take: the finished request of an
 * earlier blocking call with the same block layout, rebound to a's buffers
 * (and a's extents set as validation would), or NULL.  put: keeps the
 * finished request r of a successful blocking call (reused: r came from
 * take), or destroys it if it cannot.
 * Neither can fail the call (DESIGN.md, "Errors", the exceptions): a miss
 * is an answer, not an error, and whatever goes wrong on the way (MPI's
 * commutativity query, rebinding, memory to keep a request) makes a miss
 * or drops the request, so that the call goes the long way, which finds
 * and reports any real error itself. */
struct iso_request_s *iso__callcache_take(iso_nbh *nb, iso_args *a);
void iso__callcache_put(iso_nbh *nb, const iso_args *a, struct iso_request_s *r, int reused);
/* The structural figures of shared algorithm alg's schedule for a's
 * collective family: from the cached schedule or figures, else computed
 * from the routes (and cached) without building the schedule. */
int iso__figures_get(iso_nbh *nb, const iso_args *a, int alg, iso_figures *out);

/* ---- selection (select.c) and the cost model (cost.c) ------------------------ */
/* Resolves auto with the cost model, and chooses the message mode of
 * combining schedules.  The choices depend only on data every process has
 * alike (the neighborhood, the block size of the regular forms or the
 * agreed one, whether the request runs many times), so all processes agree.
 * reused: persistent requests and blocking calls, which the call cache
 * keeps with their datatypes; not nonblocking calls. */
int iso__algorithm_select(iso_nbh *nb, const iso_args *a, int requested, iso_msg_mode mode,
                          int reused, int *index, iso_msg_mode *chosen);
/* Modelled time of a schedule with structural figures f for blocks of
 * block_bytes, combined messages made in mode (PACK or DATATYPE); probed:
 * pack mode probes for the size of each message (the v/w forms). */
double iso__cost(const iso_figures *f, double block_bytes, iso_msg_mode mode, int reused,
                 int probed);
/* Modelled time of direct: one message per neighbor in one phase. */
double iso__cost_direct(int s, double block_bytes);

/* ---- builders ------------------------------------------------------------------ */
int iso__build_direct(const iso_nbh *nb, const iso_args *a, iso_sched *out);
int iso__build_dimwise(const iso_nbh *nb, const iso_args *a, iso_sched *out);
int iso__build_bruck(const iso_nbh *nb, const iso_args *a, iso_sched *out);
int iso__figures_dimwise(const iso_nbh *nb, const iso_args *a, iso_figures *out);
int iso__figures_bruck(const iso_nbh *nb, const iso_args *a, iso_figures *out);

/* Message combining (combining.c): a route is a list of hops in increasing
 * phase order, each step times the unit vector of dimension dim, or, for
 * dim == d, step times the line vector passed to the builder. */
typedef struct {
    int phase, dim, step;
} iso_hop;
/* Writes the route of offset c (at most maxhops hops); returns the number of
 * hops or -1. */
typedef int (*iso_route_fn)(const iso_nbh *nb, const int *line, const int *c, iso_hop *hops,
                            int maxhops);
int iso__build_combining(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                         const int *line, iso_sched *out);
/* The figures iso__build_combining would set, from the routes alone:
 * O(hops log hops), no schedule. */
int iso__combining_figures(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                           const int *line, iso_figures *out);

/* ---- describing and checking a call (collectives.c, validate.c) ------------- */
static inline iso_side iso__side_strided(int count, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_STRIDED, .count = count, .type = type};
}

static inline iso_side iso__side_same(int count, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_SAME, .count = count, .type = type};
}

static inline iso_side iso__side_v(const int *counts, const int *displs, MPI_Datatype type)
{
    return (iso_side){.layout = ISO_LAYOUT_V, .counts = counts, .idispls = displs, .type = type};
}

static inline iso_side iso__side_w(const int *counts, const MPI_Aint *displs,
                                   const MPI_Datatype *types)
{
    return (iso_side){.layout = ISO_LAYOUT_W, .counts = counts, .adispls = displs, .types = types};
}

static inline iso_args iso__args(iso_coll coll, const void *sendbuf, iso_side send, void *recvbuf,
                                 iso_side recv, MPI_Op op)
{
    return (iso_args){.coll = coll, .sendbuf = sendbuf, .recvbuf = recvbuf, .send = send,
                      .recv = recv, .op = op};
}

/* The send side of an SDDE call as alltoallv arguments (the receive side
 * is set once known). */
static inline iso_args iso__args_sdde(const void *buf, const int *counts, const int *displs,
                                      MPI_Datatype type, MPI_Aint extent)
{
    iso_args a = iso__args(ISO_ALLTOALL, buf, iso__side_v(counts, displs, type), NULL,
                           iso__side_v(NULL, NULL, MPI_BYTE), MPI_OP_NULL);
    a.send.extent = extent;
    return a;
}

/* Checks the blocks that will move (those whose peer exists) and sets the
 * extents of the sides. */
int iso__args_validate(iso_args *a, const iso_nbh *nb);
/* The same for irregular lists: nsend blocks to targets, nrecv from
 * sources (distributed graph communicators; no reductions). */
int iso__args_validate_lists(iso_args *a, int nsend, const int *targets, int nrecv,
                             const int *sources);
/* Is a an alltoall/allgather v or w form? */
int iso__args_irregular(const iso_args *a);
/* Persistent v/w forms (collective over priv): the processes agree on a
 * block size for the cost model, and on the outcome of the argument checks
 * (err: this process's). */
int iso__args_agree(iso_priv *priv, const iso_nbh *nb, iso_args *a, int err);

/* ---- options (create.c) --------------------------------------------------------- */
/* The per-operation keys of a persistent _init call: iso_algorithm and
 * iso_combine override the neighborhood's defaults. */
int iso__op_info_parse(MPI_Info info, int *algorithm, iso_msg_mode *mode);

/* ---- distributed graph communicators (graph.c, vpt.c) ------------------------- */
enum { ISO_GRAPH_DIRECT, ISO_GRAPH_VPT, ISO_GRAPH_AUTO };

/* The VPT options (iso_vpt_dims, iso_vpt_n, iso_vpt_locality). */
typedef struct {
    int n;                            /* iso_vpt_n, 0: not given */
    int ndims, dims[ISO_VPT_MAXDIMS]; /* iso_vpt_dims, ndims 0: not given */
    int locality;                     /* iso_vpt_locality: 0 none, 1 node */
} iso_vpt_opts;

/* Options of irregular collectives on a graph communicator. */
typedef struct {
    int algorithm;    /* ISO_GRAPH_* */
    iso_vpt_opts vpt;
    int p;            /* processes (to check dims) */
    const char *env;  /* the variable being read, NULL: info */
} iso_graph_opts;

/* The environment of the irregular exchanges (graph communicators and
 * Iso_*_crs): ISO_SPARSE_ALGORITHM, ISO_VPT_DIMS, ISO_VPT_N,
 * ISO_VPT_LOCALITY, read in this order. */
#define ISO_SPARSE_NENV 4
extern const iso_env_option iso__sparse_env_options[ISO_SPARSE_NENV];

/* A virtual process topology T_n(dims) of a communicator: a periodic
 * Cartesian communicator whose rank r is VPT rank r, with its own private
 * communicator for the library's messages. */
typedef struct iso_vpt_s {
    int n, dims[ISO_VPT_MAXDIMS], locality;
    MPI_Comm cart;
    iso_priv *priv;         /* on cart */
    int *vrank;             /* [p] VPT rank of each rank of the base communicator (NULL: the same) */
    int me;                 /* this process's VPT rank */
    struct iso_vpt_s *next; /* the other shapes used on the communicator */
} iso_vpt;

/* What the library keeps on a distributed graph communicator (an attribute,
 * made at its first collective, freed with it; MPI_Comm_dup does not copy
 * it). */
typedef struct {
    int size, rank;
    int indegree, outdegree;
    int *sources, *dests; /* MPI_Dist_graph_neighbors (one allocation) */
    iso_priv *priv;       /* duplicate of the communicator (MPI_Comm_idup) */
    iso_graph_opts opts;  /* environment, then the communicator's info */
    struct iso_vpt_cache_s *vpt_cache; /* vpt.c: the plan of the last blocking or
                                        * nonblocking vpt call */
    long long vpt_plans;  /* plans those calls made (the same on every process) */
} iso_graph;

/* Frees the cached plan (with the graph state). */
void iso__vpt_cache_free(struct iso_vpt_cache_s *c);

/* *is_graph: is comm a distributed graph communicator?  Then *out is its
 * state, made at the first call with create (local, plus an MPI_Comm_idup);
 * else NULL. */
int iso__graph_get(MPI_Comm comm, int create, int *is_graph, iso_graph **out);
/* The keys of an _init call's info over *o. */
int iso__graph_info_parse(MPI_Info info, iso_graph_opts *o);
int iso__graph_build_direct(const iso_graph *g, const iso_args *a, iso_sched *out);
/* A request of the VPT exchange for a (alltoall forms) on graph g: agrees
 * on the outcome of the argument checks (err: this process's) and the
 * shape with one allreduce, exchanges the submessage headers stage by stage
 * and builds the schedule, whose rounds are the stages.  Collective over
 * the graph communicator; blocks until the plan is made.  *out is NULL and
 * *use_direct 1 if the options resolve to direct (a one-dimensional VPT). */
int iso__vpt_request(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o, const iso_args *a,
                     int err, int retain_args, int persistent, int *use_direct,
                     struct iso_request_s **out);

/* ---- the VPT plan (vpt.c), shared with sparse/ ---------------------------------- */
/* The VPT of shape (n, dims) on base (a private communicator), made on
 * first use (collective over base: a Cartesian communicator and its private
 * duplicate; with o->locality the nodes of base too) and cached on base
 * until it is freed.  With o->locality and a balanced shape (o->ndims 0)
 * on nodes of one size s > 1, dims becomes (s, balanced over the nodes). */
int iso__vpt_get(MPI_Comm base, const iso_vpt_opts *o, int n, int dims[], iso_vpt **out);
/* One key iso_vpt_dims, iso_vpt_n or iso_vpt_locality into *o (p
 * processes; where: "info KEY" or "environment VAR", for errors). */
int iso__vpt_option(iso_vpt_opts *o, int p, const char *key, const char *value,
                    const char *where);
/* The shape the options give for p processes (n == 1: direct). */
int iso__vpt_shape(const iso_vpt_opts *o, int p, int *n, int dims[]);
/* One allreduce on priv: argument errors (err: this process's) and the
 * shape; every process fails if one does. */
int iso__vpt_agree(iso_priv *priv, int err, int n, const int dims[]);

typedef struct {
    int source, bytes;
} iso_vpt_arrival;

typedef struct {
    iso_sched *sched;         /* rounds = stages; DELIVER into receive slots */
    size_t *msgsize;          /* per message of sched: its bytes */
    iso_vpt_arrival *arrived; /* sources unknown: slot i's source and bytes */
    int narrived;
} iso_vpt_plan_out;

/* The plan of one exchange over VPT v (collective over v): this process
 * (rank of size, ranks of the base communicator) sends block i of a's send
 * side to dests[i]; receive slot j is the ord-th occurrence of sources[j]
 * (the graph rule), or, with sources NULL, slot i is the i-th arrival
 * (recorded in out->arrived; a's receive side is then set by the caller
 * before the request is made). */
int iso__vpt_plan(iso_vpt *v, int rank, int size, int nsend, const int *dests, int nrecv,
                  const int *sources, const iso_args *a, iso_vpt_plan_out *out);
void iso__vpt_plan_free(iso_vpt_plan_out *p);

#endif
