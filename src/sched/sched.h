/* sched: the schedule (one typed array of operations with round
 * boundaries) and the one executor that runs every schedule (DESIGN.md,
 * "Schedules" and "Combined messages").  Builders (coll/) fill schedules;
 * nothing here knows about neighborhoods or topologies.
 *   schedule.c      building a schedule, its datatypes, statistics
 *   executor.c      the schedule request: rounds posted and completed in
 *                   order; what it reports (describe, rounds)
 *   request_bind.c  making a schedule request for a call's buffers, binding
 *                   it to another call's, reserving, parking, dropping it
 *   message.c       where a block is, packed messages, deliveries (pack mode)
 *   arena.c         message buffers of plans with known sizes: one allocation
 *   datatype_mode.c datatype mode: struct types over MPI_BOTTOM; the scratch
 *                   vectors and reduction accumulators
 *   retain.c        keeping the caller's arrays and datatypes alive */
#ifndef ISO_SCHED_H
#define ISO_SCHED_H

#include "core/core.h"

/* ---- what a collective call moves ------------------------------------------ */
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

/* Describing a call: its sides and arguments. */
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

static inline int iso__is_reduction(iso_coll c)
{
    return c == ISO_REDUCE || c == ISO_SCATTER_REDUCE;
}

/* ---- places and operations ------------------------------------------------- */
typedef enum { ISO_BUF_SEND, ISO_BUF_RECV, ISO_BUF_SCRATCH, ISO_NBUF } iso_buf;

/* A place: count x type at byte displacement disp from buffer buf. */
typedef struct {
    int buf;
    MPI_Aint disp;
    int count;
    MPI_Datatype type;
} iso_loc;

/* Block i of one side as a place in buffer buf (inline: the executor asks
 * it for every block it packs or delivers). */
static inline iso_loc iso__block(const iso_side *side, int buf, int i)
{
    iso_loc l = {buf, 0, side->count, side->type};
    switch (side->layout) {
    case ISO_LAYOUT_STRIDED:
        l.disp = (MPI_Aint)i * side->count * side->extent;
        break;
    case ISO_LAYOUT_V:
        l.count = side->counts[i];
        l.disp = (MPI_Aint)side->idispls[i] * side->extent;
        break;
    case ISO_LAYOUT_W:
        l.count = side->counts[i];
        l.disp = side->adispls[i];
        l.type = side->types[i];
        break;
    case ISO_LAYOUT_SAME:
        break;
    }
    return l;
}


/* Op kinds and the fields each uses (all others are zero):
 *   SEND, RECV      peer, tag, a (the data), nblocks (SEND: 1)
 *   REDUCE          a (source), b (destination), op: b = a op b
 *   PACK            msg: fill packed message msg from its pieces
 *   SEND_MSG        peer, tag, msg, nblocks (pieces carried)
 *   RECV_MSG        peer, tag, msg (packed: size unknown, probed)
 *   DELIVER         src, slot, first: piece src into receive slot `slot`
 *                   (reductions: into recvbuf, a copy if first, else op)
 *   ACC             src, slot, first: piece src into accumulator `slot`
 * tag is an offset from the operation's tag base. */
typedef enum {
    ISO_OP_SEND,
    ISO_OP_RECV,
    ISO_OP_REDUCE,
    ISO_OP_PACK,
    ISO_OP_SEND_MSG,
    ISO_OP_RECV_MSG,
    ISO_OP_DELIVER,
    ISO_OP_ACC
} iso_opkind;

/* Within a round the executor runs the ops stage by stage, and in schedule
 * order within a stage: first every PACK, then every communication op is
 * posted, and once they have all completed the local ops run.  Builders and
 * the offline verifier (tests/t_verify.c) rely on this order. */
typedef enum { ISO_STAGE_PACK, ISO_STAGE_COMM, ISO_STAGE_LOCAL } iso_stage;
static inline iso_stage iso__op_stage(iso_opkind k)
{
    if (k == ISO_OP_PACK)
        return ISO_STAGE_PACK;
    if (k == ISO_OP_SEND || k == ISO_OP_RECV || k == ISO_OP_SEND_MSG || k == ISO_OP_RECV_MSG)
        return ISO_STAGE_COMM;
    return ISO_STAGE_LOCAL;
}

/* Where a block's data is (a piece): the user's send block `index` (msg =
 * ISO_PIECE_USER), reduction accumulator `index` (ISO_PIECE_ACC), or entry
 * `index` of incoming message `msg` (msg >= 0).  In datatype mode an entry
 * of an incoming message is received in place; the builder lists these
 * destinations as the pieces of incoming messages: receive slot `index`
 * (ISO_PIECE_SLOT) or scratch vector `index` (ISO_PIECE_VEC). */
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
    int peer, tag;
    iso_loc a, b;
    MPI_Op op;
    int msg;
    int nblocks;
    iso_piece src;
    int slot;
    int first;
} iso_op;

/* A combined message: its n entries are pieces[first .. first+n): where
 * they come from (outgoing), or where they land in datatype mode
 * (incoming; in packed mode their sizes arrive in the message's header). */
typedef struct {
    int first, n;
} iso_msg;

/* ---- the schedule ------------------------------------------------------------ */
/* A schedule's structural figures, the same on every process (those of a
 * process of a torus): what the cost model and pack mode's size limit use.
 * Combining algorithms can compute them from the routes alone, without
 * building the schedule (coll/combining.c). */
typedef struct {
    int phases, msgs, hops; /* communication phases, messages, block hops */
    int max_entries;        /* the most blocks one combined message carries */
} iso_figures;

/* Round r is ops[round_end[r-1] .. round_end[r]).  Empty rounds are kept, so
 * that processes at the border of a mesh have the rounds of those inside. */
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
    int nlocal;           /* local ops (deliveries, reductions) in all rounds */
    int nacc;             /* reduction accumulators (one vector each) */
    int nvec;             /* scratch vectors of datatype mode (ISO_PIECE_VEC) */
    /* Message buffers of a finished request, handed to the next request of
     * this (cached) schedule: repeated blocking calls neither allocate nor
     * fault in their buffers again.  Bounded (ISO_SPARE_MAX). */
    void **spare_buf;
    size_t *spare_cap;
    /* the same on every process (as on a torus): for the cost model; and
     * the most blocks one combined message carries (pack mode's limit) */
    int struct_phases, struct_msgs, struct_hops;
    int struct_max_entries;
    /* this process's messages that carry none of its own data for their
     * receiver (message sharing's overhead messages; 0 for the others) */
    int overhead_msgs;
} iso_sched;

/* What a cached schedule keeps of the message buffers of its last request:
 * each buffer only if at most twice its message plus ISO_SPARE_SLACK bytes,
 * and nothing if they add up to more than ISO_SPARE_MAX bytes. */
#define ISO_SPARE_SLACK ((size_t)4096)
#define ISO_SPARE_MAX ((size_t)32 << 20)

/* A new empty schedule with one reference. */
int iso__sched_new(iso_sched **out);
void iso__sched_init(iso_sched *s);
void iso__sched_destroy(iso_sched *s);
/* Drops a reference, freeing the schedule with the last one. */
void iso__sched_release(iso_sched *s);
int iso__sched_add(iso_sched *s, const iso_op *op);
int iso__sched_send(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_recv(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_reduce(iso_sched *s, iso_loc from, iso_loc to, MPI_Op op);
/* Appends piece p to message *msg, creating the message first if *msg < 0
 * (builders make a message only when it gets a piece).  Pieces are added to
 * the newest message only. */
int iso__sched_msg_add(iso_sched *s, int *msg, iso_piece p);
/* Closes the current round. */
int iso__sched_end_round(iso_sched *s);
/* The schedule frees t when destroyed (for types a builder creates). */
int iso__sched_own(iso_sched *s, MPI_Datatype t);
/* Makes the schedule own (a duplicate of) every derived datatype used by
 * ops from index first on, so the user may free theirs after the call. */
int iso__sched_retain_types(iso_sched *s, int first);
/* Bytes of message buffers the schedule keeps for its next request. */
size_t iso__sched_spare_bytes(const iso_sched *s);
/* Per-process figures: 1-ported rounds (max of messages sent and received),
 * messages sent, blocks sent counting every hop. */
void iso__sched_stats(const iso_sched *s, int *rounds, int *messages, long long *block_hops);

/* ---- running a schedule (executor.c, request_bind.c) ----------------------- */
/* How combined messages are made (DESIGN.md, "Combined messages"). */
typedef enum { ISO_MODE_AUTO, ISO_MODE_PACK, ISO_MODE_DATATYPE } iso_msg_mode;

/* Can the blocks of a be described by datatypes everywhere (every process
 * knows the size of every block it receives or forwards)? */
int iso__datatype_possible(const iso_args *a);
/* The structural figures of schedule s. */
iso_figures iso__sched_figures(const iso_sched *s);
/* Pack mode counts bytes in int (MPI_Pack, MPI_Get_count): does every
 * combined message, with blocks of block_bytes and its header of one int64
 * per block, stay below 2^31 bytes?  Structural: the same answer on every
 * process. */
int iso__pack_fits(const iso_figures *f, double block_bytes);
/* The message of the COUNT error when a combined message would not fit. */
#define PACK_2GIB                                                                              \
    "a combined message in pack mode (iso_combine=pack) would reach 2 GiB, the most MPI_Pack " \
    "counts in an int: use iso_combine=datatype or auto"

/* A request running sched (takes a reference) on the private communicator
 * priv (takes a reference, reserves the schedule's tags), bound to the
 * buffers of a; nsend and nrecv are the numbers of send and receive
 * blocks (the same for isomorphic neighborhoods).  With retain_args the
 * request copies a's arrays and duplicates its derived types (the call
 * returns before they are used).  mode: ISO_MODE_PACK or _DATATYPE.
 * algorithm: the name reported by iso__sched_request_describe. */
int iso__sched_request(iso_priv *priv, MPI_Comm comm, iso_sched *sched, const iso_args *a,
                       int nsend, int nrecv, int retain_args, int persistent, iso_msg_mode mode, const char *algorithm,
                       struct iso_request_s **out);
/* Binds the finished blocking request r (made without retain_args) to the
 * buffers and arrays of a, whose block layout is the one r was made for,
 * and reserves its tags for one more execution. */
int iso__sched_request_rebind(struct iso_request_s *r, const iso_args *a);
/* The call cache keeps finished blocking requests: park trims r's message
 * buffers to the bounds of ISO_SPARE_SLACK and ISO_SPARE_MAX and returns
 * the bytes it keeps (also a query: it trims nothing more the second
 * time); drop destroys r, freeing its buffers. */
size_t iso__sched_request_park(struct iso_request_s *r);
void iso__sched_request_drop(struct iso_request_s *r);
/* What schedule request r runs: its algorithm name; "pack", "datatype", or
 * "none" if it sends no combined messages; the figures of iso__sched_stats;
 * the bytes it sent in its last completed execution (packed messages with
 * their headers), -1 before one completed.  The REQUEST code if r is not a
 * schedule request. */
int iso__sched_request_describe(const struct iso_request_s *r, const char **algorithm,
                                const char **mode, int *rounds, int *messages,
                                long long *bytes);
/* Gives packed message m of request r (pack mode) a buffer of exactly
 * bytes[m] bytes now, all of them slices of one arena in which messages
 * with overlapping lifetimes never share bytes (arena.c): for plans whose
 * message sizes are known when the request is made.  Its executions then
 * allocate nothing; a message larger than its slice is ISO_ERR_INTERN. */
int iso__sched_request_reserve(struct iso_request_s *r, const size_t bytes[]);
/* Per round of request r (up to maxrounds of them): the messages it sends,
 * and the bytes sent by its last completed execution (packed messages with
 * their headers; -1 before one completed); over all rounds the bytes of
 * entries taken from incoming messages and sent on (*forwarded, -1 before
 * an execution) and the bytes of message buffers held (*buffer_bytes: the
 * arena's size if iso__sched_request_reserve made one, the peak).  For
 * pack mode and direct ops (SEND bytes are not counted).  The REQUEST code
 * if r is not a schedule request. */
int iso__sched_request_rounds(const struct iso_request_s *r, int maxrounds, int *nrounds,
                              int messages[], long long bytes[], long long *forwarded,
                              long long *buffer_bytes);
/* The overhead_msgs of r's schedule (ISO_ERR_REQUEST if r runs none). */
int iso__sched_request_overhead(const struct iso_request_s *r, int *overhead);

#endif
