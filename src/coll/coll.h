/* coll: the isomorphic neighborhood collectives (DESIGN.md, "Layers").
 *   create.c         Iso_neighborhood_create: options, verification
 *   collectives.c    the Iso_neighbor_* entry points: describe, run
 *   validate.c       argument checks and the agreement of _init calls
 *   algorithms.c     the algorithm table and the schedule cache
 *   select.c         choosing the algorithm and the message mode
 *   cost.c           the cost model
 *   tune.c           runtime tuning of auto: trial calls, the agreement,
 *                    the winners per call shape, Iso_tune_info, ISO_TUNE_FILE
 *   schedule_info.c  Iso_schedule_info
 *   direct.c dimwise.c bruck.c   one builder per algorithm
 *   graph.c          distributed graph communicators: their state, options
 *                    and direct's schedule
 *   graph_route.c    their routed exchanges: auto's choice of direct or a
 *                    VPT, the agreement, the plan (route/) and its request
 *   tune_graph.c     runtime tuning of auto on graph communicators: its
 *                    candidates and call shapes (tune.c's machinery)
 *   combining.c      the message-combining builder over routes (dimwise,
 *                    bruck); its parts are combining_*.c, listed in the
 *                    private combining.h */
#ifndef ISO_COLL_H
#define ISO_COLL_H

#include "route/route.h"

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

extern const iso_table iso__algorithm_table; /* iso__algorithms, its one shape */
/* One option's algorithm name (where: "info KEY" or "environment VAR"):
 * the index, ISO_ALG_AUTO for "auto", or the ALGORITHM code naming the
 * accepted names. */
int iso__algorithm_option(const char *where, const char *value, int *index);
/* "auto", "pack", "datatype" -> ISO_MODE_*, or the INFO code. */
int iso__mode_lookup(const char *name, iso_msg_mode *mode);
extern const char *const iso__mode_names[3];
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
/* Drops the request kept for collective family coll, if any (a trial
 * call's request must not outlive its candidate's block of trial calls). */
void iso__callcache_drop(iso_nbh *nb, iso_coll coll);
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
/* Bytes per block where every process has the same (regular forms and
 * reductions) or the processes agreed on one (persistent v/w forms):
 * 1 and *bytes, else 0 (auto keeps to direct then). */
int iso__uniform_block_bytes(const iso_args *a, double *bytes);
/* Modelled time of a schedule with structural figures f for blocks of
 * block_bytes, combined messages made in mode (PACK or DATATYPE); probed:
 * pack mode probes for the size of each message (the v/w forms). */
double iso__cost(const iso_figures *f, double block_bytes, iso_msg_mode mode, int reused,
                 int probed);
/* Modelled time of direct: one message per neighbor in one phase. */
double iso__cost_direct(int s, double block_bytes);

/* What auto chooses among (at most ISO_MAX_CANDIDATES, their number
 * returned): direct first, then each shared algorithm that can run in the
 * mode iso__algorithm_select would give it, and under iso_combine=auto in
 * the other mode too where it can carry the blocks; direct only where auto
 * keeps to direct (blocking v/w forms).  The model's pick is the first
 * candidate of least cost. */
int iso__algorithm_candidates(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int reused,
                              iso_candidate *out);

/* ---- runtime tuning of auto (tune.c; its shared part is declared in
 * route/route.h) ------------------------------------------------------------------ */
/* A blocking auto call on a tuning neighborhood: the algorithm, mode and
 * schedule (a new reference) that this call runs.  *trial is the shape
 * being tuned if this call is one of its trial calls (then it is run by
 * iso__tune_run), else NULL (the winner, the model's pick or a file's). */
int iso__tune_schedule(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int *alg,
                       iso_msg_mode *chosen, iso_sched **sched, iso_tune_shape **trial);
/* A blocking call on a Cartesian neighborhood that found a request in the
 * call cache: the shape being tuned if the call is one of its trial calls
 * (the cached request is then the current candidate's, kept from the
 * block's previous call), else NULL. */
iso_tune_shape *iso__tune_trial_of(iso_nbh *nb, const iso_args *a);
/* The tuned winner of a's call shape, if one is known (measured, or from
 * ISO_TUNE_FILE), over *alg and *mode; else nothing changes. */
void iso__tune_known(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int reused, int *alg,
                     iso_msg_mode *chosen);

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

/* ---- distributed graph communicators (graph.c, graph_route.c) ----------------- */
enum { ISO_GRAPH_DIRECT, ISO_GRAPH_VPT, ISO_GRAPH_AUTO, ISO_GRAPH_SHARING };

/* Options of irregular collectives on a graph communicator. */
typedef struct {
    int algorithm;    /* ISO_GRAPH_* */
    iso_vpt_opts vpt;
    int tune;         /* iso_tune: trial calls per candidate of blocking auto calls, 0 off */
    int verbose;      /* ISO_VERBOSE (environment only): report what tuning chose */
    int p;            /* processes (to check dims) */
} iso_graph_opts;

/* What the library keeps on a distributed graph communicator (an attribute,
 * made at its first collective, freed with it; MPI_Comm_dup does not copy
 * it). */
typedef struct {
    int size, rank;
    int indegree, outdegree;
    int *sources, *dests; /* MPI_Dist_graph_neighbors (one allocation) */
    iso_priv *priv;       /* duplicate of the communicator (MPI_Comm_idup) */
    iso_graph_opts opts;  /* environment, then the communicator's info */
    iso_route_cache *plan_cache; /* the plan of the last blocking or nonblocking routed call */
    long long plans;      /* plans those calls made (the same on every process) */
    /* auto's figures of message sharing (iso__sharing_figures), made at the
     * first auto call: they depend on the neighbor lists alone */
    int sharing_known;
    long long sharing_mmax, sharing_blocks;
    iso_tuner *tuner; /* auto's tuned call shapes (tune_graph.c), made at the first tuned call */
} iso_graph;

/* *is_graph: is comm a distributed graph communicator?  Then *out is its
 * state, made at the first call with create (local, plus an MPI_Comm_idup);
 * else NULL. */
int iso__graph_get(MPI_Comm comm, int create, int *is_graph, iso_graph **out);
/* The keys of an _init call's info over *o. */
int iso__graph_info_parse(MPI_Info info, iso_graph_opts *o);
/* What a routed request on a graph is for (iso__graph_route_request). */
typedef enum {
    ISO_GRAPH_BLOCKING,         /* run once, now: auto's trial calls are blocking calls */
    ISO_GRAPH_NONBLOCKING,      /* started once: auto takes a known winner */
    ISO_GRAPH_PERSISTENT,       /* started again and again: auto's trials, if due, first */
    ISO_GRAPH_PERSISTENT_TRIAL  /* a trial candidate's persistent request, on scratch buffers */
} iso_graph_use;
/* A request of a routed exchange for a (alltoall forms) on graph g: agrees
 * on the outcome of the argument checks (err: this process's) and the
 * shape with one allreduce, then plans it (route/) and makes the request
 * that runs the plan.  Collective over the graph communicator; blocks until
 * the plan is made.  *out is NULL and *use_direct 1 if the options resolve
 * to direct (a one-dimensional VPT).  trial: NULL (auto takes a known
 * winner), or where auto may be tuned (iso__graph_tune_pick), *trial is set
 * if this call is a trial call; for ISO_GRAPH_PERSISTENT nothing is made
 * then (*out NULL, *use_direct 0): the caller runs the shape's trials
 * (iso__graph_tune_init) and asks again. */
int iso__graph_route_request(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o,
                             const iso_args *a, int err, iso_graph_use call, int *use_direct,
                             struct iso_request_s **out, iso_tune_shape **trial);
/* The direct exchange's request for a on graph g (graph.c): one message
 * per edge. */
int iso__graph_direct_request(iso_graph *g, MPI_Comm comm, const iso_args *a, iso_graph_use use,
                              struct iso_request_s **out);
/* Auto's tuning of a persistent request's call shape, due (trial: the
 * shape): its trial calls now, at the _init call, each a persistent
 * request of the candidate in turn started and timed as blocking trial
 * calls are (tune.c), on zeroed scratch buffers holding a's blocks (the
 * user's buffers are neither read nor written), until the shape is
 * decided.  A candidate whose request cannot be made on some process is
 * skipped everywhere; without scratch memory on some process there are no
 * trials (MPI_SUCCESS; the shape stays undecided).  Errors: the trials'
 * communication.  Collective over g. */
int iso__graph_tune_init(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o, const iso_args *a,
                         iso_tune_shape *trial, const char *fn);
/* auto's choice on graph g (tune_graph.c) among all[0..nall) (every
 * candidate with its modelled cost, the model's pick the first of least
 * cost; mmax, mean_bytes: the agreed statistics): for a blocking or
 * persistent call (trial not NULL) under iso_tune, the candidate of a trial
 * call (*trial set: the caller runs it by iso__tune_run) or the shape's
 * winner; for others a tuned or recorded winner of the shape; else the
 * model's pick.
 * *alg as iso_candidate's on a graph. */
int iso__graph_tune_pick(iso_graph *g, const iso_graph_opts *o, iso_candidate *all, int nall,
                         long long mmax, long long mean_bytes, int persistent,
                         iso_tune_shape **trial, int *alg);

#endif
