/* mailbox: the asynchronous routed mailbox (Iso_mailbox_*; DESIGN.md,
 * "Mailbox"): YGM's model in C.  Processes queue small messages for any
 * process; messages are coalesced per next hop and travel, possibly over
 * several hops, as MPI messages of whole buffers; a callback runs for each
 * message at its destination and may send more; wait_empty returns once
 * every message anywhere has been delivered.
 *   mailbox.h   this interface (the mailbox's state and its parts)
 *   hops.c      routing: the next hop of a message per scheme (none, nl,
 *               nr, nlnr, vpt) and the spanning trees of broadcasts
 *   buffers.c   coalescing: one buffer per next hop, records, the queue
 *               bound and the posting of full buffers
 *   engine.c    the exchange: receives, the processing of arrived buffers
 *               (delivery and forwarding), progress and flow control
 *   quiesce.c   termination detection (counting in waves of nonblocking
 *               allreduces, four-counter rule)
 *   api.c       the public functions: options, checks, create and free
 * Builds on core/ (errors, options) and topo/ (locality), and takes only
 * the VPT shape functions of route/ (shape.c). */
#ifndef ISO_MAILBOX_H
#define ISO_MAILBOX_H

#include "core/core.h"
#include "route/route.h"
#include "topo/topo.h"
#include <stdint.h>

/* ---- records (buffers.c) -----------------------------------------------------
 * A buffer is a sequence of records, each a header and the payload padded
 * to 8 bytes, so that every payload a callback sees is 8-byte aligned.
 * dst >= 0: a message for process dst; dst < 0: a broadcast record whose
 * stage is -1 - dst (hops.c).  src is the rank that called send or bcast. */
typedef struct {
    int32_t src, dst;
    uint32_t bytes, pad;
} iso_mb_header;
#define ISO_MB_HDR ((size_t)sizeof(iso_mb_header))
#define ISO_MB_PAD(n) (((size_t)(n) + 7) & ~(size_t)7)
#define ISO_MB_RECORD(bytes) (ISO_MB_HDR + ISO_MB_PAD(bytes))
/* The largest capacity: a buffer (at most capacity + one record) must fit
 * an int count of bytes. */
#define ISO_MB_MAX_CAPACITY ((size_t)1 << 29)
/* Receives kept posted per level (engine.c), and the most levels: a
 * route has at most ISO_VPT_MAXDIMS hops. */
#define ISO_MB_NRECV 2
#define ISO_MB_MAXLEVELS ISO_VPT_MAXDIMS

typedef struct {
    char *data;
    size_t len, cap;
} iso_mb_buf;

/* A posted send: its buffer is owned until the send completes. */
typedef struct {
    MPI_Request req;
    char *data;
    size_t len;
    int level;
} iso_mb_send;

/* ---- routing (hops.c) ------------------------------------------------------ */
typedef enum { ISO_MB_NONE, ISO_MB_NL, ISO_MB_NR, ISO_MB_NLNR, ISO_MB_VPT } iso_mb_routing;
#define ISO_MB_AUTO (-1)
extern const char *const iso__mb_routing_names[5];

typedef struct {
    iso_mb_routing routing;
    int me, p;
    const iso_locality *loc;          /* regions of the communicator (iso_locality) */
    int n, dims[ISO_VPT_MAXDIMS];     /* vpt: the shape */
} iso_mb_routes;

/* The process a message for dest moves to from process at (at != dest):
 * a function of (at, dest) alone, so forwarding needs no state. */
int iso__mb_next_hop(const iso_mb_routes *r, int at, int dest);

/* Levels (DESIGN.md, "Flow control"): a record's level on arrival at
 * process `at` is the number of hops it still has to go from there (dst >=
 * 0: to dst; dst < 0: the broadcast stage -1 - dst, the depth of the tree
 * below at).  Forwarding always lowers it: a process that processes a
 * buffer of level L queues only records of levels below L.  Buffers travel
 * per level; iso__mb_levels is the number of levels of the routing (1 for
 * none, 2 for nl and nr, 3 for nlnr, n for vpt). */
int iso__mb_levels(const iso_mb_routes *r);
int iso__mb_level(const iso_mb_routes *r, int at, int dst);

/* Broadcast stages: what a process that receives a broadcast record with
 * that stage forwards (it always delivers it to its own callback). */
enum {
    ISO_MB_BC_START = 0, /* at the origin (never travels) */
    ISO_MB_BC_FINAL,     /* deliver only */
    ISO_MB_BC_NODE,      /* deliver, then to every other process of this node */
    ISO_MB_BC_GATE,      /* nlnr: deliver, then to the gates of the nodes this process serves */
    ISO_MB_BC_SPREAD,    /* nl: deliver, then to the remote processes this process serves */
    ISO_MB_BC_VPT        /* + d: deliver, then over dimensions d .. n-1 */
};
/* Calls emit(mb, to, stage) for every process a broadcast record of
 * `origin` with `stage` moves to from process `at`; stops at an error. */
struct iso_mailbox_s;
typedef int (*iso_mb_emit)(struct iso_mailbox_s *mb, int to, int stage);
int iso__mb_bcast_spread(const iso_mb_routes *r, int at, int origin, int stage, iso_mb_emit emit,
                         struct iso_mailbox_s *mb);

/* ---- the mailbox ------------------------------------------------------------ */
typedef struct {
    long long msgs, bytes;            /* MPI messages (buffers) this process posted */
    long long remote_msgs, remote_bytes; /* of them to a process on another node */
    long long records, forwarded;     /* records queued; of them forwarded for others */
    long long peak_queued, peak_inflight; /* the most bytes ever queued / in posted sends */
    long long held;                   /* arrived buffers held back by flow control */
} iso_mb_stats;

struct iso_mailbox_s {
    MPI_Comm user;        /* the user's communicator: errors are raised there */
    MPI_Comm comm;        /* private duplicate for the mailbox's traffic (level 0) */
    MPI_Comm lcomm[ISO_MB_MAXLEVELS]; /* buffers of level l travel on lcomm[l]
                                         (lcomm[0] = comm, the others duplicates) */
    int levels;           /* iso__mb_levels of the routing */
    MPI_Comm waves;       /* the termination waves' communicator: comm, or in the
                             SMPI build a second duplicate (api.c, create) */
    int me, p;
    size_t capacity, bufmax; /* bufmax: capacity + one record, the largest buffer */
    Iso_mailbox_recv_fn recv;
    void *ctx;
    iso_mb_routes routes;
    /* coalescing (buffers.c) */
    iso_mb_buf *queue;    /* [levels * p]: queue[l * p + hop] per level and next hop
                             (queue[me]: messages to oneself) */
    int *filled, nfilled; /* slots (l * p + hop) whose buffer is not empty */
    size_t queued;        /* bytes in queue[] */
    /* buffers on their way (engine.c) */
    iso_mb_send *sends;
    int nsends, sends_cap;
    size_t inflight;      /* bytes of posted sends not completed */
    size_t inflight_level[ISO_MB_MAXLEVELS]; /* of them per level */
    iso_mb_buf *local;    /* buffers to oneself, posted, not processed yet */
    int nlocal, local_cap;
    size_t local_bytes;
    /* receive slot i (levels * ISO_MB_NRECV of them) takes buffers of
     * level i / ISO_MB_NRECV */
    int nslots;
    MPI_Request recv_req[ISO_MB_MAXLEVELS * ISO_MB_NRECV];
    char *recv_buf[ISO_MB_MAXLEVELS * ISO_MB_NRECV];
    /* an arrived buffer held unprocessed, its receive not posted again
     * (its count and tag): a buffer of the next epoch, while this process
     * still waits for the end of the current one; or a buffer to forward
     * while the level below has more than capacity bytes in flight */
    int held[ISO_MB_MAXLEVELS * ISO_MB_NRECV], held_count[ISO_MB_MAXLEVELS * ISO_MB_NRECV];
    int held_tag[ISO_MB_MAXLEVELS * ISO_MB_NRECV];
    /* epoch: wait_empty calls completed; buffers travel with tag epoch % 2 */
    long long epoch;
    long long sent, received; /* MPI messages posted / processed (termination) */
    int busy;             /* inside the processing of a buffer (callbacks run) */
    /* termination (quiesce.c) */
    MPI_Request wave;
    long long wave_in[2], wave_out[2], last_out[2];
    int have_last, wave_done;
    iso_mb_stats stats;
    /* the broadcast being spread (iso__mb_emit_bcast's payload) */
    int bc_src;
    const void *bc_msg;
    size_t bc_bytes;
    struct iso_mailbox_s *next_live; /* the registry of live mailboxes (api.c) */
};

/* ---- coalescing (buffers.c) -------------------------------------------------- */
/* Appends a record (header src, dst, bytes; payload msg) of level `level`
 * (its iso__mb_level at hop) to the buffer of next hop `hop`; posts that
 * buffer first if the record would not fit in bufmax, and posts every
 * buffer once the queue holds capacity bytes. */
int iso__mb_enqueue(struct iso_mailbox_s *mb, int hop, int level, int src, int dst,
                    const void *msg, size_t bytes);
/* Posts the buffer of slot (level * p + hop): a send, or the local list
 * for oneself. */
int iso__mb_post(struct iso_mailbox_s *mb, int slot);
/* Posts every buffer that holds records. */
int iso__mb_post_all(struct iso_mailbox_s *mb);
/* Releases the queue and the local list (free). */
void iso__mb_buffers_free(struct iso_mailbox_s *mb);

/* ---- the exchange (engine.c) ------------------------------------------------- */
/* Posts the receives (create). */
int iso__mb_recv_start(struct iso_mailbox_s *mb);
/* Cancels them (free). */
int iso__mb_recv_cancel(struct iso_mailbox_s *mb);
/* Handles what has completed: finished sends, arrived buffers (delivered
 * and forwarded), buffers to oneself, the termination wave (which sets
 * mb->wave_done).  block: waits in MPI_Waitsome for at least one event
 * first.  Never call with mb->busy. */
int iso__mb_progress(struct iso_mailbox_s *mb, int block);
/* Flow control at the top level: posts everything queued once the queue
 * is full, then waits (progressing) while more than capacity bytes are in
 * flight, and handles what has arrived without waiting. */
int iso__mb_exchange(struct iso_mailbox_s *mb, int all);
/* Waits for every posted send (after termination: all were received). */
int iso__mb_sends_complete(struct iso_mailbox_s *mb);
/* Queues the broadcast record mb->bc_* for process `to` with `stage` (the
 * emit of iso__mb_bcast_spread). */
int iso__mb_emit_bcast(struct iso_mailbox_s *mb, int to, int stage);

/* ---- termination (quiesce.c) ------------------------------------------------- */
/* Returns once every message sent anywhere has been delivered (collective). */
int iso__mb_quiesce(struct iso_mailbox_s *mb);

#endif
