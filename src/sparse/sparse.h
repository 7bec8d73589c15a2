/* sparse: the sparse dynamic data exchange (SDDE), Iso_alltoall_crs and
 * Iso_alltoallv_crs (DESIGN.md, "Sparse dynamic data exchange").  Every
 * process knows what it sends and to whom, nobody knows who sends to it.
 *   crs.c           the two entry points: arguments, options, verification,
 *                   the outputs in ascending source order
 *   table.c         the algorithm table and auto's rule
 *   exchange.c      what the algorithms share: received messages (inbox),
 *                   probed receives, bundles of packed submessages, the
 *                   request of a single exchange
 *   personalized.c  discovery by a reduce-scatter of message counts
 *   nbx.c           discovery by synchronous sends and a nonblocking barrier
 *   rma.c           one-sided puts into a cached window (constant sizes)
 *   aggregate.c     aggregation per destination node, then redistribution
 *                   inside the node (locality-personalized, locality-nbx)
 *   forward.c       vpt: store-and-forward over a VPT, headers with the data
 *   routed.c        sharing (route/: its plan with unknown sources)
 *   tune.c          runtime tuning of auto (the tuner core of route/route.h)
 * Every algorithm is a request (core/) on the active list, so that the
 * blocking entry points progress other outstanding requests while they
 * wait. */
#ifndef ISO_SPARSE_H
#define ISO_SPARSE_H

#include "route/route.h"

/* Tags one call reserves on the private communicator: the exchange (or the
 * inter-node step), the redistribution inside nodes, and the count
 * messages of each (an exchange on tag t sends them on t + 2: personalized
 * among few processes). */
#define ISO_SDDE_NTAGS 4
#define ISO_SDDE_COUNT_TAG(t) ((t) + 2)

/* ---- one call ------------------------------------------------------------------ */
/* The messages a process sends and where they travel (checked by crs.c). */
typedef struct {
    iso_priv *priv;          /* messages travel on priv->comm */
    const iso_locality *loc; /* of priv->comm */
    int tag;                 /* the first of ISO_SDDE_NTAGS */
    int n;                   /* messages to send */
    const int *dest;         /* n distinct ranks */
    const int *counts;       /* elements of message i; NULL: count each */
    int count;
    const int *displs;       /* message i at displs[i] elements; NULL: i * count */
    MPI_Datatype type;
    MPI_Aint extent;
    int size;                /* bytes of one element (its type signature) */
    const char *buf;
    int constant;            /* Alltoall_crs: every message has recv_bytes bytes */
    iso_vpt_opts vpt;        /* the shape for vpt */
    int recv_bytes;
} iso_sdde_call;

static inline int iso__sdde_count(const iso_sdde_call *c, int i)
{
    return c->counts ? c->counts[i] : c->count;
}

static inline const void *iso__sdde_data(const iso_sdde_call *c, int i)
{
    MPI_Aint first = c->displs ? (MPI_Aint)c->displs[i] : (MPI_Aint)i * c->count;
    return c->buf + first * c->extent;
}

/* ---- received messages (exchange.c) ------------------------------------------- */
/* Message k came from msgs[k].source: bytes of packed data (as MPI_Pack
 * of the sender's type writes them) at offset off of the data. */
typedef struct {
    int source, bytes;
    size_t off;
} iso_inmsg;

typedef struct {
    iso_inmsg *msgs;
    int n, cap;
    char *data;      /* owned, grown as messages arrive */
    size_t len, datacap;
    const char *ext; /* if not NULL, offsets point here instead (not owned) */
} iso_inbox;

static inline const char *iso__inbox_at(const iso_inbox *in, int k)
{
    return (in->ext ? in->ext : in->data) + in->msgs[k].off;
}

int iso__inbox_add(iso_inbox *in, int source, int bytes, size_t off);
void iso__inbox_free(iso_inbox *in);

/* ---- exchanges with probed receives (exchange.c) -------------------------------- */
/* One outgoing message: count x type at buf to rank dest of the exchange's
 * communicator. */
typedef struct {
    int dest;
    const void *buf;
    int count;
    MPI_Datatype type;
} iso_outmsg;

/* Point-to-point messages on one communicator and tag, received by probing
 * (any source) into an inbox.  A discovery decides when every message for
 * this process has arrived. */
typedef struct {
    MPI_Comm comm;
    int tag;
    int nsends;
    MPI_Request *sends;
    MPI_Request coll; /* the discovery's collective (reduce-scatter, barrier) */
    int *tally;       /* personalized: messages to each rank, then (pairwise)
                       * messages from each rank */
    MPI_Request *counts; /* personalized among few processes: the count
                          * messages, receives then sends */
    int ncounts;
    int one_node;        /* all of comm is on one node (set by the maker):
                          * personalized may count by messages */
    int incoming;     /* personalized: messages to this process, once known */
    int limit;        /* receive no more messages than this in all (-1: not known) */
    int state;        /* the discovery's progress */
    iso_inbox in;
} iso_xchg;

typedef struct {
    /* Posts the n messages on x (comm and tag set by iso__xchg_init) and
     * what the discovery needs. */
    int (*begin)(iso_xchg *x, int n, const iso_outmsg *msgs);
    /* Receives what has arrived; *done once every message for this process
     * is in x->in and the sends are complete.  With block, returns only
     * then (or on an error). */
    int (*step)(iso_xchg *x, int block, int *done);
} iso_discovery;

extern const iso_discovery iso__personalized; /* personalized.c */
extern const iso_discovery iso__nbx;          /* nbx.c */

void iso__xchg_init(iso_xchg *x, MPI_Comm comm, int tag);
/* Posts the sends: MPI_Issend if synchronous, else MPI_Isend. */
int iso__xchg_post(iso_xchg *x, int n, const iso_outmsg *msgs, int synchronous);
/* Receives every message of the exchange that has arrived into x->in;
 * with block, waits for one first.  *got: how many. */
int iso__xchg_receive(iso_xchg *x, int block, int *got);
/* Tests (block: waits for) the sends; *done when all are complete. */
int iso__xchg_sends_done(iso_xchg *x, int block, int *done);
/* Completes (block: waits for) n requests whose statuses do not matter;
 * *done once all have. */
int iso__requests_done(int n, MPI_Request *reqs, int block, int *done);
/* Frees what x holds.  After an error, active sends are freed (they
 * complete on their own); an active collective is left to MPI, since MPI
 * forbids freeing nonblocking collective requests. */
void iso__xchg_free(iso_xchg *x);

/* ---- bundles: submessages packed one after another (exchange.c) ----------------- */
/* A submessage is a header of three ints (origin rank, final destination
 * rank, bytes) and its bytes of packed data.  A bundle holds the
 * submessages for one target in chunks of at most iso__sdde_chunk_limit
 * bytes (one submessage may exceed it alone), each chunk one message, so
 * that no message passes INT_MAX bytes. */
#define ISO_SUB_HDR ((int)(3 * sizeof(int)))
extern int iso__sdde_chunk_limit;

typedef struct {
    char *buf;
    int len;
    size_t cap;
} iso_chunk;

typedef struct {
    iso_chunk *chunks;
    int n, cap;
} iso_bundle;

/* Appends a submessage with count x type from data, packed (MPI_Pack on
 * comm) into its bytes. */
int iso__bundle_pack(iso_bundle *b, int origin, int dest, const void *data, int count,
                     MPI_Datatype type, int bytes, MPI_Comm comm);
/* Appends a submessage whose data is packed already. */
int iso__bundle_copy(iso_bundle *b, int origin, int dest, const char *data, int bytes);
/* Reads the submessage at *pos of a received chunk of len bytes and moves
 * *pos past it; *data is the offset of its data.  INTERN if malformed. */
int iso__bundle_next(const char *buf, int len, int *pos, int *origin, int *dest, int *bytes,
                     int *data);
void iso__bundle_free(iso_bundle *b);

/* ---- requests of the algorithms ---------------------------------------------- */
/* Every algorithm's request starts with this; once it has completed
 * without error, result holds the messages this process received (in any
 * order), valid until the request is destroyed.  exec, if not NULL, is the
 * request that does the work (vpt and sharing: the plan's schedule, which
 * fills result itself): crs.c starts and waits for it instead of req, so
 * that a blocking call's wait finds it alone on the active list and lets
 * MPI block (with req active beside it, every wait would poll both). */
typedef struct {
    struct iso_request_s req;
    const iso_inbox *result;
    struct iso_request_s *exec;
} iso_sdde_req;

/* Makes the (inactive) request of an algorithm for call c (comm: the
 * user's, for errors); c and the buffers it names must stay valid until
 * the request is destroyed. */
typedef int (*iso_sdde_make)(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);

/* One exchange from the sender straight to the destination (exchange.c). */
int iso__sdde_direct(const iso_sdde_call *c, MPI_Comm comm, const iso_discovery *d,
                     iso_sdde_req **out);
int iso__sdde_personalized(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
int iso__sdde_nbx(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
int iso__sdde_rma(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
int iso__sdde_locality_personalized(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
int iso__sdde_locality_nbx(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
/* Store-and-forward over a VPT (forward.c): each stage's bundles carry
 * their submessages' headers, and end marks are the discovery. */
int iso__sdde_vpt(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);
/* Message sharing (routed.c): the plan's gathered pattern is the
 * discovery. */
int iso__sdde_sharing(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out);

/* ---- the algorithm table (table.c) ------------------------------------------ */
#define ISO_SDDE_AUTO ISO_AUTO

typedef struct {
    const char *name;
    iso_sdde_make make;
    int constant_only; /* Alltoall_crs only (rma) */
} iso_sdde_algorithm;

extern const iso_sdde_algorithm iso__sdde_algorithms[];
/* iso__sdde_algorithms in the one table shape (names looked up with
 * iso__sparse_algorithm_option, route.h). */
extern const iso_table iso__sdde_table;
/* auto's choice, from what every process knows alike: the number of
 * processes and nodes and whether sizes are constant (Alltoall_crs). */
int iso__sdde_select(int nprocs, int nnodes, int constant);

/* A hash of the VPT and locality options (crs.c), which decide vpt's shape
 * and the regions: iso_verify's agreement and the tuner's call shape (kept
 * in ISO_TUNE_FILE's records, so its arithmetic stays). */
long long iso__sdde_options_hash(const iso_vpt_opts *o);

/* ---- runtime tuning of auto (tune.c) ------------------------------------------ */
/* A blocking auto call c (p processes; *alg: auto's rule's pick) under
 * iso_tune (trials per candidate): *alg becomes what the call runs -- the
 * winner of its shape, or the candidate of a trial call (*trial set: run
 * it with iso__sdde_tune_run).  Collective at the calls that agree on the
 * size class.  c->loc and c->priv must be set. */
int iso__sdde_tune_pick(iso_sdde_call *c, MPI_Comm comm, int p, int trials, int *alg,
                        iso_tune_shape **trial);
/* Makes, runs and times trial call c of algorithm alg (personalized if
 * alg cannot be made), counting it in trial's tuning; *out: its request
 * (completed unless an error is returned), for the caller to assemble and
 * destroy.  fn, verbose: for ISO_VERBOSE's report of the winner. */
int iso__sdde_tune_run(iso_sdde_call *c, MPI_Comm comm, const char *fn, int verbose,
                       iso_tune_shape *trial, int alg, iso_sdde_req **out);

#endif
