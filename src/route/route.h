/* route: store-and-forward routings of irregular exchanges (DESIGN.md,
 * "Layers", "Virtual process topology").  A routing turns one exchange --
 * every process sends blocks to destinations it knows -- into a plan: one
 * schedule (sched/) whose rounds are stages, the sizes of its messages and,
 * where the sources are unknown, what arrived.  coll/ (distributed graph
 * communicators) and sparse/ (Iso_*_crs) both run such plans through the
 * same executor path; the routing decides only how submessages travel.
 *   route.h    this interface
 *   shape.c    the shape of a virtual process topology T_n(k_1..k_n) and
 *              its dimension-order routing (pure computations)
 *   vpt.c      the VPT: its communicators (cached, with the locality
 *              embedding), its options, and its planner (the per-stage
 *              header exchange that builds the plan)
 *   sharing_plan.c  message sharing's planner (pure computation)
 *   sharing.c  message sharing's execution: the pattern gathered, the
 *              planner run everywhere, the two-stage plan
 *   plan.c     what every routing shares: the plan type, the graph rule's
 *              slot lookup and message sizes, the send-buffer
 *              check and the agreement before planning, the plan cache,
 *              the environment of the irregular exchanges, and
 *              Iso_request_vpt_info
 * Builds on topo/ (locality) and sched/ (schedules, requests); used by
 * coll/ and sparse/, which never include each other. */
#ifndef ISO_ROUTE_H
#define ISO_ROUTE_H

#include "sched/sched.h"
#include "topo/topo.h"

/* ---- the shape of a VPT (shape.c) --------------------------------------------
 * Pure computations: no communication; the error paths make library error
 * codes (which needs MPI initialised; before MPI_Init or after
 * MPI_Finalize they return MPI_ERR_ARG / MPI_ERR_INFO).
 *
 * Ranks are row-major, dimension 0 slowest (MPI_Cart_coords order): rank r
 * has coordinate (r / stride_d) % dims[d] with stride_d = dims[d+1] * ... *
 * dims[n-1]. */
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

/* ---- the VPT (vpt.c) ------------------------------------------------------------- */
/* The VPT options (iso_vpt_dims, iso_vpt_n, iso_vpt_locality), and the
 * level of the locality regions (iso_locality), which the SDDE's
 * locality-aware algorithms read from here too. */
typedef struct {
    int n;                            /* iso_vpt_n, 0: not given */
    int ndims, dims[ISO_VPT_MAXDIMS]; /* iso_vpt_dims, ndims 0: not given */
    int locality;                     /* iso_vpt_locality: 0 none, 1 embed the regions */
    int level;                        /* iso_locality: ISO_LEVEL_* (topo.h) */
} iso_vpt_opts;

/* The embedding o asks for: 0 none, else 1 + the level of its regions;
 * what cached VPTs and plans are told apart by. */
static inline int iso__vpt_embedding(const iso_vpt_opts *o)
{
    return o->locality ? 1 + o->level : 0;
}

/* One key iso_vpt_dims, iso_vpt_n, iso_vpt_locality or iso_locality into
 * *o (p processes; where: "info KEY" or "environment VAR", for errors). */
int iso__vpt_option(iso_vpt_opts *o, int p, const char *key, const char *value,
                    const char *where);
/* The shape the options give for p processes (n == 1: direct). */
int iso__vpt_shape(const iso_vpt_opts *o, int p, int *n, int dims[]);

/* A virtual process topology T_n(dims) of a communicator: its own private
 * communicator for the library's messages, whose rank r is VPT rank r (the
 * shape is arithmetic, route/shape.c: no MPI topology). */
typedef struct iso_vpt_s {
    int n, dims[ISO_VPT_MAXDIMS], locality; /* locality: iso__vpt_embedding */
    iso_priv *priv;         /* rank r: VPT rank r */
    int *vrank;             /* [p] VPT rank of each rank of the base communicator (NULL: the same) */
    int me;                 /* this process's VPT rank */
    struct iso_vpt_s *next; /* the other shapes used on the communicator */
} iso_vpt;

/* The VPT of shape (n, dims) on base (a private communicator), made on
 * first use (collective over base: one new communicator, a duplicate of base
 * or with the embedding its split; with o->locality the nodes of base too)
 * and cached on base until it is freed.  With o->locality and a balanced
 * shape (o->ndims 0) on nodes of one size s > 1, dims becomes (s, balanced
 * over the nodes). */
int iso__vpt_get(MPI_Comm base, const iso_vpt_opts *o, int n, int dims[], iso_vpt **out);

/* ---- message sharing: the planner (sharing_plan.c) -------------------------------
 * Duymus 2021 (thesis, chapters 4-5): processes are paired, and one sends
 * the other's messages to common targets combined with its own, cutting
 * the messages of the most loaded process.  Pure computation on the
 * process-to-process pattern, the same on every process (deterministic:
 * sharing_plan.c writes its tie-breaking down), memory O(pattern).
 *
 * The pattern: process p (0 <= p < K) sends one message to each of
 * targets[start[p] .. start[p+1]) -- distinct ranks, ascending, never p
 * itself (a message to oneself is local and not routed); bytes, if not
 * NULL, gives each message's size (for the volume figure). */
typedef struct {
    int K;
    const long long *start;  /* [K + 1] */
    const int *targets;      /* [start[K]] */
    const long long *bytes;  /* [start[K]] or NULL */
} iso_pattern;

/* The planner's answer: message e (an index into targets) is sent to its
 * target by sender[e]: its source, or a partner of the source that
 * forwards it (at most one forwarding hop; a source may have several
 * partners, one stage-0 message to each); and the thesis's figures. */
typedef struct {
    int *sender;                  /* [start[K]] */
    long long initial_mmax, phase1_mmax, phase2_mmax; /* messages of the bottleneck */
    double initial_mavg, phase2_mavg;                 /* mean messages per process */
    long long overhead;           /* source -> partner messages that were not messages before */
    double volume_ratio;          /* bytes moved / bytes of direct (1 without bytes) */
    double phase1_mavg;           /* mean messages per process after phase I */
    long long *load;              /* [K] messages each process sends (both stages) */
} iso_sharing;

/* Plans message sharing for pat into *out (sender allocated here).
 * MPI_SUCCESS, or MPI_ERR_NO_MEM / MPI_ERR_ARG (MPI's own classes: the
 * planner also runs in tools without MPI_Init). */
int iso__sharing_plan(const iso_pattern *pat, iso_sharing *out);
void iso__sharing_free(iso_sharing *s);
/* The same, stopped after phase `phases` (1: phase I only, the phase-II
 * figures then equal phase I's; 2: both, as iso__sharing_plan): for tests. */
int iso__sharing_plan_phases(const iso_pattern *pat, int phases, iso_sharing *out);

/* ---- the plan every routing produces (plan.c) ------------------------------------ */
/* Which routing made a plan, and its shape: what processes must agree on
 * and what a cached plan is looked up by. */
enum { ISO_ROUTE_VPT, ISO_ROUTE_SHARING };
typedef struct {
    int routing;                 /* ISO_ROUTE_* */
    int n, dims[ISO_VPT_MAXDIMS]; /* VPT: the shape (n 0: auto, not chosen yet) */
    int locality;                /* VPT: iso__vpt_embedding */
} iso_route_key;

typedef struct {
    int source, bytes;
} iso_route_arrival;

/* A plan: one schedule whose round d is stage d (PACK + SEND_MSG per
 * neighbor of the stage, RECV_MSG per neighbor that sends, DELIVER into
 * receive slots; run in pack mode), the byte size of each of its messages
 * (buffers reserved when the request is made), and, when the sources were
 * unknown, what arrived in each receive slot.  The schedule's struct_*
 * figures are the plan's (stages, messages, hops, largest message). */
typedef struct {
    iso_sched *sched;
    size_t *msgsize;            /* per message of sched: its bytes, header included */
    iso_route_arrival *arrived; /* sources unknown: slot i's source and bytes */
    int narrived;
} iso_route_plan;

void iso__route_plan_free(iso_route_plan *p);

/* The graph rule's lookup: (rank, index) pairs of a list of n ranks,
 * sorted (malloc'd; NULL if out of memory), so that the k-th occurrence of
 * rank r is pairs[2 * (iso__route_first_of(pairs, n, r) + k) + 1]. */
int *iso__route_sorted_pairs(const int *list, int n);
int iso__route_first_of(const int *pairs, int n, long long rank);
/* The first index i in [lo, hi) of the ascending a[] with a[i] >= x (hi if
 * none): the lookup of the sharing plan's sorted lists. */
long long iso__route_lower_bound(const int *a, long long lo, long long hi, int x);
/* The receive slot of the ord-th block from source under the graph rule
 * (src_pairs: the sorted pairs of the n receive sources), marked in
 * filled[]: 1 and *slot, or 0 if there is no such slot or it was filled
 * already (the caller's plan is then wrong: it names its routing). */
int iso__route_graph_slot(const int *src_pairs, int n, char *filled, long long source,
                          long long ord, int *slot);
/* Records that message m of a plan has bytes bytes (*msgsize grown as
 * needed, capacity *cap): the sizes the arena is reserved from. */
int iso__route_note_size(size_t **msgsize, int *cap, int m, size_t bytes);

/* The agreement before planning a routed exchange (collective over
 * priv->comm; every process calls it, also with err set).  Unless err is
 * set, this process first checks its send side (a, nsend blocks): data at
 * address 0 with nonzero size is MPI_ERR_BUFFER, found here for every
 * routing before any memory is touched.  ag->same[0] becomes key's hash
 * (the caller's values follow from 1 on; ag->max is the caller's).
 * Returns this process's error, a peer's (core/agree.c's rule), or the
 * ALGORITHM code if the processes have different keys. */
int iso__route_agree(iso_priv *priv, int err, const iso_args *a, int nsend,
                     const iso_route_key *key, iso_agreement *ag);

/* The plan of one exchange over VPT v (collective over v): this process
 * (rank of size, ranks of the base communicator) sends block i of a's send
 * side to dests[i]; receive slot j is the ord-th occurrence of sources[j]
 * (the graph rule), or, with sources NULL, slot i is the i-th arrival
 * (recorded in out->arrived; a's receive side is then set by the caller
 * before the request is made). */
int iso__vpt_plan(iso_vpt *v, int rank, int size, int nsend, const int *dests, int nrecv,
                  const int *sources, const iso_args *a, iso_route_plan *out);

/* The plan of one exchange by message sharing (collective over
 * priv->comm: an allgather of the pattern, then the planner on every
 * process): the arguments as iso__vpt_plan's; with sources NULL the slots
 * are the arrivals in ascending source order (recorded in out->arrived;
 * dests then distinct).  Two stages: sources to partners, then every
 * process to its targets (sharing.c). */
int iso__sharing_route_plan(iso_priv *priv, int rank, int size, int nsend, const int *dests,
                            int nrecv, const int *sources, const iso_args *a,
                            iso_route_plan *out);

/* What auto weighs message sharing by (collective over priv->comm: an
 * allgather of the pattern, the planner on every process): the pattern of
 * this process's blocks to dests (the graph rule; blocks to itself left
 * out) gives, the same on every process, *mmax: the messages of the busiest
 * process, (sends + receives) / 2 over both stages (the planner balances
 * sends only; forwarding adds receives) and *blocks: the most blocks
 * one process sends (its own once, plus those it forwards).  The figures
 * depend on the destinations alone, not on sizes. */
int iso__sharing_figures(iso_priv *priv, int rank, int size, int nsend, const int *dests,
                         long long *mmax, long long *blocks);

/* The request that runs plan for a (the one executor path of every
 * routing): the schedule's request on priv (comm: the user's, for errors)
 * in pack mode with its message buffers reserved; named "vpt" or
 * "sharing" for Iso_request_vpt_info. */
int iso__route_request(iso_priv *priv, MPI_Comm comm, const iso_route_plan *plan,
                       const iso_args *a, int nsend, int nrecv, int retain_args, int persistent,
                       const char *name, struct iso_request_s **out);

/* ---- the plan cache (plan.c) ------------------------------------------------------ */
/* A plan holds counts, not pointers: the routes, the per-stage messages and
 * their sizes follow from the key and every process's send block sizes
 * alone (pieces name send blocks and receive slots by index; the request
 * binds them to each call's buffers).  So a call may reuse the last call's
 * plan if the key is the same and no process's send block sizes changed --
 * which the agreement establishes (every process votes; all plans must
 * come from the same call: one generation). */
typedef struct iso_route_cache_s iso_route_cache;
/* The bytes of send block i of a. */
long long iso__route_send_bytes(const iso_args *a, int i);
/* This process's vote: does the cached plan fit the send blocks of a? */
int iso__route_cache_fits(const iso_route_cache *c, int nsend, const iso_args *a);
/* The generation of the cached plan, -1 if none. */
long long iso__route_cache_gen(const iso_route_cache *c);
/* The cached plan if it was made for key, else NULL. */
const iso_route_plan *iso__route_cache_plan(const iso_route_cache *c, const iso_route_key *key);
/* Keeps *plan (taken over) as the plan of generation gen for key and the
 * send blocks of a; on failure *cache is emptied (the next call plans
 * anew). */
void iso__route_cache_put(iso_route_cache **cache, const iso_route_key *key, int nsend,
                          const iso_args *a, long long gen, iso_route_plan *plan);
void iso__route_cache_free(iso_route_cache *c);

/* ---- the environment of the irregular exchanges (plan.c) -------------------------- */
/* ISO_SPARSE_ALGORITHM, ISO_VPT_DIMS, ISO_VPT_N, ISO_VPT_LOCALITY, read in
 * this order by graph communicators and Iso_*_crs alike. */
#define ISO_SPARSE_NENV 5
extern const iso_env_option iso__sparse_env_options[ISO_SPARSE_NENV];

/* iso_sparse_algorithm is one key with one vocabulary read in two
 * contexts, each with its own table (coll/graph.c, sparse/table.c).  A
 * value is looked up in the table of the context; a word of the other
 * context, or an unknown word, is the ALGORITHM code naming the context
 * and the words it accepts -- never ignored. */
typedef enum { ISO_CTX_GRAPH, ISO_CTX_CRS } iso_sparse_context;
int iso__sparse_algorithm_option(const iso_table *t, iso_sparse_context ctx, const char *where,
                                 const char *value, int *index);

/* ---- runtime tuning of auto: the tuner's shared core ------------------------------
 * Declared here, below its three users (Cartesian neighborhoods and graph
 * communicators in coll/, the SDDE in sparse/), which never include each
 * other; its code is coll/tune.c (DESIGN.md, "Runtime tuning of auto"). */
/* One schedule auto could run: algorithm index, message mode, modelled cost. */
typedef struct {
    int alg;
    iso_msg_mode mode;
    double cost;
} iso_candidate;
#define ISO_MAX_CANDIDATES (2 * ISO_MAX_ALGORITHMS)
#define ISO_TUNE_TRIALS 4     /* trial calls per candidate under iso_tune=on */
#define ISO_TUNE_MAX_CALLS 20 /* trial calls per call shape at most, all candidates */
/* iso_tune's value (off, on, on:N with 1 <= N <= ISO_TUNE_MAX_CALLS) into
 * *trials (0: off), or the INFO code naming where and the accepted values. */
int iso__tune_option(const char *where, const char *value, int *trials);
typedef struct iso_tune_shape iso_tune_shape;
/* A tuner: the call shapes of one neighborhood (Cartesian, or a
 * distributed graph communicator's), or of one communicator's SDDE calls,
 * and their winners. */
typedef struct iso_tuner iso_tuner;
enum { ISO_TUNE_CART, ISO_TUNE_GRAPH, ISO_TUNE_SDDE }; /* what a tuner's candidates are */
/* On a graph (tune_graph.c) a candidate's alg is 0 for direct, n >= 2 for
 * the balanced VPT T_n, or ISO_TUNE_SHARING (its mode: pack). */
#define ISO_TUNE_SHARING (-1)
/* A call shape: what auto's choice depends on besides the neighborhood. */
typedef struct {
    iso_coll coll;
    double bytes;       /* per block (graphs: mean bytes per edge, max over processes;
                         * SDDE: its size class) */
    int reused, probed; /* SDDE: constant form, a hash of the VPT and locality options;
                         * graphs: 1, and 0 for persistent requests (no size rounds) */
    iso_msg_mode mode;  /* iso_combine asked for */
} iso_tune_key;
/* A new tuner (NULL: out of memory) of neighborhood id (the same on every
 * process, and across runs: ISO_TUNE_FILE's records name it); what names
 * it for ISO_VERBOSE.  Freed by iso__tuner_free. */
iso_tuner *iso__tuner_new(unsigned long long id, int kind, const char *what);
void iso__tuner_free(void *t);
/* An SDDE tuner (kind ISO_TUNE_SDDE): a candidate's alg is an index of
 * names, the SDDE's algorithm table (sparse/ gives it: coll/ cannot see
 * it), its mode pack; a failed candidate's trial calls run alg 0.  Its
 * call shape: reused 1 for the constant form (Iso_alltoall_crs), bytes the
 * agreed size class, probed 1, coll ISO_ALLTOALL, mode ISO_MODE_PACK. */
iso_tuner *iso__tuner_new_sdde(unsigned long long id, const char *what, const iso_table *names);
/* The SDDE tuner kept on communicator comm (an attribute, freed with it,
 * not copied by MPI_Comm_dup), NULL if none; attach keeps t there (taken
 * over, also on failure). */
iso_tuner *iso__tuner_of_comm(MPI_Comm comm);
/* size zeroed bytes kept with t for its user (the same block at every
 * call; NULL: out of memory), freed with t. */
void *iso__tuner_ext(iso_tuner *t, size_t size);
/* Is sh still in its trial calls? */
int iso__tune_shape_tuning(const iso_tune_shape *sh);
int iso__tuner_attach(MPI_Comm comm, iso_tuner *t);
/* Candidates by modelled cost, the first of equals kept first. */
void iso__tune_sort(iso_candidate *c, int n);
/* key's shape of t, made if new: from ISO_TUNE_FILE, the model's only
 * candidate, or tuned over cand[0..ncand) (the model's pick first) with
 * trials calls each; all[0..nall): what the file's records may name.
 * *out NULL if the table is full (the model then decides). */
int iso__tune_shape_get(iso_tuner *t, const iso_tune_key *key, const iso_candidate *cand,
                        int ncand, const iso_candidate *all, int nall, int trials,
                        iso_tune_shape **out);
/* What this call of shape sh runs: 0 and the winner once decided; else 1
 * (a trial call, to be run by iso__tune_run): the candidate in turn, or
 * direct (alg 0) if that candidate failed -- its test hook included. */
int iso__tune_next(const iso_tuner *t, iso_tune_shape *sh, int *alg, iso_msg_mode *mode);
/* The candidate of this trial call could not be made: it is skipped from
 * now on, and this call runs direct, untimed.  (Must fail alike on every
 * process.)  0 if this call ran direct already (nothing was skipped). */
int iso__tune_failed(iso_tune_shape *sh);
/* The winner of key, decided in t (may be NULL) or recorded in
 * ISO_TUNE_FILE for neighborhood id among all[0..nall): 1 and *alg, *mode;
 * else 0. */
int iso__tune_lookup(const iso_tuner *t, int kind, unsigned long long id, const iso_tune_key *key,
                     const iso_candidate *all, int nall, int *alg, iso_msg_mode *mode);
/* Runs trial call r (blocking: start, wait) and times it, then destroys
 * it, or hands it back in *keep (if keep is not NULL) when the next trial
 * call runs the same candidate (*keep NULL otherwise).  The last trial
 * call of a shape agrees on its winner with one allreduce over priv
 * (collective: every process makes the same trial calls).  fn: the public
 * function, for ISO_VERBOSE (verbose: print the outcome). */
int iso__tune_run(iso_tuner *t, int verbose, iso_priv *priv, MPI_Comm comm, const char *fn,
                  iso_tune_shape *trial, struct iso_request_s *r, struct iso_request_s **keep);
/* A trial call of sh that the caller ran itself (the SDDE: its request
 * is needed after the wait): seconds, its time; spent, with what the
 * caller did around it (nothing for the SDDE; a graph's barrier in
 * iso__tune_run).  Counts it as iso__tune_run does, and
 * the last trial call agrees (collective over priv). */
int iso__tune_count(iso_tuner *t, int verbose, iso_priv *priv, MPI_Comm comm, const char *fn,
                    iso_tune_shape *sh, double seconds, double spent);

#endif
