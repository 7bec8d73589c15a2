/* Internal interfaces of isocoll.  Layers (DESIGN.md): neighborhood ->
 * schedule (one structure, one executor) -> algorithms (builders in a
 * table) -> collectives (validate, build, run). */
#ifndef ISO_INTERNAL_H
#define ISO_INTERNAL_H

#include "isocoll.h"
#include <stddef.h>

/* ---- errors (errors.c) ------------------------------------------------ */
/* The MPI error code returned for a library error (its class is the
 * library class; registers classes and codes on first use). */
int iso__errclass(Iso_error err);
/* Report err (an MPI error code or class) through comm's error handler
 * (MPI_COMM_WORLD if comm is MPI_COMM_NULL) and return it. */
int iso__raise(MPI_Comm comm, int err);
/* Shorthand: iso__raise(comm, iso__errclass(err)). */
int iso__fail(MPI_Comm comm, Iso_error err);

/* ---- neighborhood (neighborhood.c) ------------------------------------ */
#define ISO_MAX_ALGORITHMS 8
#define ISO_MAX_OFFSET (1 << 30) /* |offset coordinate| below this */
typedef struct {
    int d, s;
    int *dims, *periods, *coords; /* of the Cartesian communicator / caller */
    int *offsets;                 /* s*d relative coordinates */
    int *sources, *targets;       /* s ranks each, MPI_PROC_NULL off the mesh */
    int indegree, outdegree;      /* entries that are not MPI_PROC_NULL */
    int algorithm;                /* default: index in iso__algorithms, or ISO_ALG_AUTO */
    int combine;                  /* default iso_combine: ISO_COMBINE_* */
    /* Schedules that depend only on the neighborhood (message combining),
     * per [collective][algorithm]; built on first use. */
    struct iso_sched_s *cache[4][ISO_MAX_ALGORITHMS];
} iso_nbh;

/* Attribute value of a Cartesian communicator.  Referenced by the attribute
 * and by every request that still needs the private communicator. */
typedef struct {
    int refs;
    MPI_Comm priv;     /* private duplicate for library traffic */
    unsigned tag_next; /* next tag to hand out, identical on every rank */
    int tag_ub;
    iso_nbh *nbh; /* NULL once freed */
} iso_state;

/* Looks up the state of an isocomm (errors: comm null, not Cartesian, no
 * neighborhood; not raised, returned as MPI codes).  With need_priv, creates
 * the private communicator if this communicator is an MPI_Comm_dup copy that
 * has none yet (collective then: only collectives pass need_priv). */
int iso__state_get(MPI_Comm comm, int need_priv, iso_state **state);
void iso__state_release(iso_state *st);
/* Reserves n consecutive tags below MPI_TAG_UB. */
int iso__tags_reserve(iso_state *st, int n);
/* Rank of coordinates in a Cartesian layout (row-major, as MPI defines it). */
int iso__coords_rank(int d, const int *dims, const int *coords);
/* (cart.c) MPI_SUCCESS or the error for a null / non-Cartesian comm. */
int iso__cart_check(MPI_Comm comm);
/* (cart.c) dims, periods, coords of the caller in one allocation of 3d ints;
 * errors for a communicator that is null or not Cartesian. */
int iso__cart_layout(MPI_Comm comm, int *d, int **mem);
/* (cart.c) rank of caller + sign*relative, MPI_PROC_NULL off the mesh;
 * scratch holds d ints. */
int iso__shifted_rank(const iso_nbh *nb, const int *relative, int sign, int *scratch);
/* (cart.c) the first max entries of list, without MPI_PROC_NULL if graph. */
void iso__copy_list(const int *list, int n, int max, int graph, int *out);

/* ---- collective arguments ---------------------------------------------- */
typedef enum { ISO_ALLTOALL, ISO_ALLGATHER, ISO_REDUCE, ISO_SCATTER_REDUCE, ISO_NCOLL } iso_coll;
extern const char *const iso__coll_names[ISO_NCOLL];

/* How one side's s blocks are laid out in the user's buffer. */
typedef enum {
    ISO_LAYOUT_STRIDED, /* block i at i*count*extent (alltoall, allgather recv) */
    ISO_LAYOUT_V,       /* counts[i], displs[i]*extent (v forms) */
    ISO_LAYOUT_W,       /* counts[i], byte displs[i], types[i] (w forms) */
    ISO_LAYOUT_SAME     /* every block is (count, type) at offset 0 */
} iso_layout;

typedef struct {
    iso_layout layout;
    int count;
    MPI_Datatype type;
    MPI_Aint extent; /* of type (STRIDED, V) */
    const int *counts;
    const int *idispls;
    const MPI_Aint *adispls;
    const MPI_Datatype *types;
} iso_side;

typedef struct {
    iso_coll coll;
    const void *sendbuf;
    void *recvbuf;
    iso_side send, recv; /* reductions: recv is SAME (count, datatype) */
    MPI_Op op;
    /* v/w forms: bytes per block that every process agreed on (persistent
     * init under auto: max over processes of the mean), 0 if none */
    double agreed_bytes;
} iso_args;

/* ---- schedules (schedule.c) ------------------------------------------- */
typedef enum { ISO_BUF_SEND, ISO_BUF_RECV, ISO_BUF_SCRATCH, ISO_NBUF } iso_buf;

/* A place: count x type at byte displacement disp from buffer buf. */
typedef struct {
    int buf;
    MPI_Aint disp;
    int count;
    MPI_Datatype type;
} iso_loc;

/* Op kinds.  SEND/RECV move a place; COPY/REDUCE act on two places.  The
 * message-combining schedules move packed messages: PACK fills message msg
 * from its pieces (header of per-block byte sizes, then the blocks),
 * SEND_MSG sends it, RECV_MSG receives one of unknown size (probe), DELIVER
 * unpacks one piece into receive slot `slot` (or combines it into recvbuf
 * for reductions). */
typedef enum {
    ISO_OP_SEND,
    ISO_OP_RECV,
    ISO_OP_COPY,
    ISO_OP_REDUCE,
    ISO_OP_PACK,
    ISO_OP_SEND_MSG,
    ISO_OP_RECV_MSG,
    ISO_OP_DELIVER,
    ISO_OP_ACC /* combine a piece into accumulator `slot` (first: copy) */
} iso_opkind;

/* Where a block's data is: the user's send block `index` (msg = -1),
 * reduction accumulator `index` (msg = ISO_PIECE_ACC), or entry `index` of
 * incoming message `msg`.  In datatype mode an entry of an incoming message
 * is received in place: into receive slot `index` (ISO_PIECE_SLOT) or into
 * the schedule's scratch vector `index` (ISO_PIECE_VEC); the builder lists
 * these destinations as the pieces of incoming messages. */
#define ISO_PIECE_USER (-1)
#define ISO_PIECE_ACC (-2)
#define ISO_PIECE_SLOT (-3)
#define ISO_PIECE_VEC (-4)
typedef struct {
    int msg;
    int index;
} iso_piece;

typedef struct {
    iso_opkind kind;
    int peer;    /* SEND, RECV, SEND_MSG, RECV_MSG */
    int tag;     /* ditto: offset from the operation's tag base */
    iso_loc a;   /* SEND, RECV: the data; COPY, REDUCE: the source */
    iso_loc b;   /* COPY, REDUCE: the destination */
    MPI_Op op;   /* REDUCE: b = a op b */
    int msg;     /* PACK, SEND_MSG, RECV_MSG: message id */
    int nblocks; /* SEND, SEND_MSG: blocks carried (statistics) */
    iso_piece src; /* DELIVER */
    int slot;      /* DELIVER: receive slot */
    int first;     /* DELIVER in a reduction: first contribution (copy) */
} iso_op;

/* A combined message: its n entries are pieces[first .. first+n): where
 * they come from (outgoing), or where they land in datatype mode
 * (incoming; in packed mode their sizes arrive in the message's header). */
typedef struct {
    int first, n;
} iso_msg;

/* Rounds: round r is ops[round_end[r-1] .. round_end[r]); its PACK ops run
 * first, then its SEND/RECV/SEND_MSG/RECV_MSG ops are posted together, and
 * its COPY/REDUCE/DELIVER ops run in order once they have all completed. */
typedef struct iso_sched_s {
    int refs; /* cached schedules are shared by requests */
    iso_op *ops;
    int nops, ops_cap;
    int *round_end;
    int nrounds, rounds_cap;
    iso_msg *msgs;
    int nmsgs, msgs_cap;
    iso_piece *pieces;
    int npieces, pieces_cap;
    int ntags; /* tags reserved per execution: set by the builder from the
                * structure alone, the same on every process (not from the
                * ops this process happens to have) */
    size_t scratch_bytes; /* scratch memory each execution needs */
    MPI_Datatype *owned;  /* datatypes this schedule frees */
    int nowned, owned_cap;
    int max_comm;         /* largest number of communication ops in a round */
    int runtime_args;     /* ops find blocks through the request's args (PACK, DELIVER) */
    int nacc;             /* reduction accumulators (one vector each) */
    int nvec;             /* scratch vectors of datatype mode (ISO_PIECE_VEC) */
    /* Message buffers of a finished request, handed to the next request of
     * this (cached) schedule: repeated blocking calls neither allocate nor
     * fault in their buffers again. */
    void **spare_buf;
    size_t *spare_cap;
    /* the same on every process (as on a torus): for the cost model */
    int struct_phases, struct_msgs, struct_hops;
} iso_sched;

void iso__sched_init(iso_sched *s);
void iso__sched_destroy(iso_sched *s);
int iso__sched_add(iso_sched *s, const iso_op *op);
int iso__sched_send(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_recv(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_copy(iso_sched *s, iso_loc from, iso_loc to);
int iso__sched_reduce(iso_sched *s, iso_loc from, iso_loc to, MPI_Op op);
/* A new packed message; returns its id or -1 (no memory). */
int iso__sched_msg(iso_sched *s);
/* Appends a piece to the last message created. */
int iso__sched_msg_piece(iso_sched *s, int msg, iso_piece p);
/* Appends a piece to message *msg, creating the message first if *msg < 0
 * (builders make a message only when it gets a piece). */
int iso__sched_msg_add(iso_sched *s, int *msg, iso_piece p);
int iso__sched_is_comm(iso_opkind k);
/* Closes the current round.  Empty rounds are kept, so that processes at
 * the border of a mesh have the same rounds as those inside. */
int iso__sched_end_round(iso_sched *s);
/* The schedule frees t when destroyed (for types a builder creates). */
int iso__sched_own(iso_sched *s, MPI_Datatype t);
/* Makes the schedule own (a duplicate of) every derived datatype used by
 * ops from index first on, so the user may free theirs after the call. */
int iso__sched_retain_types(iso_sched *s, int first);

/* ---- algorithms (algorithms.c, alg_*.c) -------------------------------- */
typedef int (*iso_builder)(const iso_nbh *nb, const iso_args *a, iso_sched *out);

typedef struct {
    const char *name;
    iso_builder build;
    /* restrictions: NULL = every neighborhood and collective */
    int (*applicable)(const iso_nbh *nb, const iso_args *a);
    /* the schedule depends only on the neighborhood and on whether the
     * collective is personalized: built once, cached, shared */
    int cacheable;
} iso_algorithm;

#define ISO_ALG_AUTO (-1)
extern const iso_algorithm iso__algorithms[];
extern const int iso__nalgorithms;

/* Algorithm index for a name ("auto" -> ISO_ALG_AUTO); returns 0, or
 * ISO_ERR_ALGORITHM for an unknown name. */
int iso__algorithm_lookup(const char *name, int *index);
/* The schedule of algorithm alg for a call: cached, or built for it.
 * Returns a new reference in *out. */
int iso__schedule_get(iso_nbh *nb, const iso_args *a, int alg, iso_sched **out);
/* How combined messages are made (info key iso_combine, ISO_COMBINE):
 * packed by the library (a header of block sizes, then the blocks), or
 * described by derived datatypes over the user's buffers and the scratch
 * vectors (no copies by the library; needs block sizes that every process
 * knows: not the v/w forms of alltoall/allgather). */
enum { ISO_COMBINE_AUTO, ISO_COMBINE_PACK, ISO_COMBINE_DATATYPE };
/* "auto", "pack", "datatype" -> ISO_COMBINE_*; ISO_ERR_INFO otherwise. */
int iso__combine_lookup(const char *name, int *mode);
/* Can the blocks of a be described by datatypes everywhere? */
int iso__datatype_possible(const iso_args *a);

/* Resolves auto (cost model) / checks applicability for one call, and
 * chooses the combining mode (*datatype).  The choices depend only on data
 * every process has alike (the neighborhood, the block size of the regular
 * forms, whether the operation is persistent), so all processes agree. */
int iso__algorithm_select(iso_nbh *nb, const iso_args *a, int requested, int combine,
                          int persistent, int *index, int *datatype);
/* Per-process figures of a schedule: 1-ported rounds (max of messages sent
 * and received), messages sent, blocks sent counting every hop. */
void iso__sched_stats(const iso_sched *s, int *rounds, int *messages, long long *block_hops);

int iso__build_direct(const iso_nbh *nb, const iso_args *a, iso_sched *out);

/* Message combining (combine.c): a route is a list of hops in increasing
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
int iso__build_dimwise(const iso_nbh *nb, const iso_args *a, iso_sched *out);
int iso__build_bruck(const iso_nbh *nb, const iso_args *a, iso_sched *out);

/* Block i of one side as a place in buffer buf. */
iso_loc iso__block(const iso_side *side, int buf, int i);

/* ---- requests and the executor (request.c) ---------------------------- */
struct iso_request_s {
    iso_sched *sched; /* counted reference */
    iso_args args;    /* buffers and block descriptions (PACK/DELIVER use them) */
    void *args_mem;   /* copies of the argument arrays (nonblocking, persistent) */
    MPI_Datatype *arg_types; /* our duplicates of derived types in args */
    int narg_types;
    iso_state *state;
    MPI_Comm comm; /* the user's communicator, for error reporting */
    void *base[ISO_NBUF];
    void *scratch_mem;
    int tagbase;
    int persistent, active, round;
    int err; /* outcome of the last execution */
    MPI_Request *reqs;
    int nreqs;
    int *pending; /* RECV_MSG ops of the round still to be matched (op index, req slot) */
    int npending;
    void **msgbuf; /* packed messages */
    size_t *msgcap, *msglen;
    void *tmp; /* one reduction vector */
    size_t tmpcap;
    void **acc; /* the schedule's accumulators, one vector each */
    size_t acc_span;
    MPI_Aint acc_shift; /* -true lower bound of the vector type */
    int datatype;           /* datatype mode: messages described by msgtype */
    MPI_Datatype *msgtype;  /* per message: struct type over MPI_BOTTOM */
    char *vec;              /* the scratch vectors of datatype mode */
    size_t vec_stride;
    struct iso_request_s *prev, *next; /* list of active requests */
};

/* A request running sched (takes one reference), bound to the buffers of a,
 * with its tags reserved.  With retain, copies a's arrays and duplicates its
 * derived types (the call returns before they are used). */
int iso__request_create(iso_state *st, MPI_Comm comm, iso_sched *sched, const iso_args *a,
                        int s, int retain, int persistent, int datatype,
                        struct iso_request_s **out);
/* Starts an inactive request (posts round 0). */
int iso__request_start(struct iso_request_s *r);
/* Completes r, progressing every other active request meanwhile. */
int iso__request_wait(struct iso_request_s *r);
void iso__request_destroy(struct iso_request_s *r);
/* Drops a reference to a schedule, freeing it with the last one. */
void iso__sched_release(iso_sched *s);

/* ---- info (neighborhood.c) -------------------------------------------- */
/* Parses the iso_* keys of info (MPI_INFO_NULL allowed); unset values are
 * left as they are.  Returns 0 or a library error. */
Iso_error iso__info_parse(MPI_Info info, int *algorithm, int *combine, int *verify);

#endif
