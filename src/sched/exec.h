/* The schedule request, shared by the files of the executor (executor.c,
 * request_bind.c, message.c, datatype_mode.c, retain.c, arena.c); nothing
 * outside sched/ sees it. */
#ifndef ISO_SCHED_EXEC_H
#define ISO_SCHED_EXEC_H

#include "sched/sched.h"

/* A piece of an outgoing packed message as its packing found it: where
 * its data are and how many bytes; raw: copied as bytes (a raw block, or
 * an entry of an incoming message: forwarded), else MPI_Pack'ed. */
typedef struct {
    char *p;
    size_t bytes;
    int count;
    MPI_Datatype type;
    int raw, forwarded;
} iso_staged;

typedef struct {
    struct iso_request_s req; /* first: the request is one of these */
    iso_sched *sched;         /* counted reference */
    iso_priv *priv;           /* counted reference */
    iso_args args;            /* buffers and block descriptions (PACK/DELIVER use them) */
    void *args_mem;           /* copies of the argument arrays (retain.c) */
    MPI_Datatype *arg_types;  /* our duplicates of derived types in args */
    int narg_types;
    void *buf[ISO_NBUF]; /* the buffers iso_loc.buf names */
    void *scratch_mem;
    int tagbase;
    int round;
    int posted;    /* round 0 is posted (the private communicator was ready) */
    int fail;      /* the first error of this execution (see fail() in executor.c) */
    MPI_Request *reqs;
    MPI_Status *stats;
    int *reqop;    /* per request of the round: its op */
    MPI_Count *got; /* per request: bytes received, datatype-mode messages (-1: not yet) */
    int nreqs;
    /* The ops of every round by stage (iso__stage_plan): those of stage g
     * of round r are stage_ops[stage_at[3r+g] .. stage_at[3r+g+1]), in
     * schedule order, so no round is scanned for the ops of a stage. */
    int *stage_ops, *stage_at;
    int *pending; /* RECV_MSG ops of the round still to be matched (op index, req slot) */
    int npending;
    void **msgbuf; /* packed messages */
    size_t *msgcap, *msglen;
    size_t *msgfwd; /* per outgoing message: bytes of the incoming entries it carries */
    char *arena;    /* NULL, or the one allocation msgbuf[m] point into (arena.c) */
    size_t arena_bytes;
    int deliver_fail; /* the first failed delivery of this execution (executor.c) */
    size_t *entry_off; /* per piece of an incoming packed message: its offset */
    iso_staged *staged; /* per piece of the message being packed (iso__pack_message) */
    void *tmp; /* one reduction vector */
    size_t tmpcap;
    void **acc; /* the schedule's accumulators, one vector each */
    size_t vec_span; /* bytes of one vector (receive count x type), true extent */
    MPI_Aint vec_shift; /* -true lower bound of the vector type */
    /* Pack mode: per message, its size where every process knows it
     * (iso__datatype_possible, or a plan that reserved exact sizes), so that
     * it is received without a probe; NULL: probed. */
    size_t *recv_size;
    /* Pack mode: the send and receive types whose blocks are plain bytes
     * (contiguous, no gaps), copied with memcpy instead of MPI_Pack and
     * MPI_Unpack (iso__raw_types_find); MPI_DATATYPE_NULL: none. */
    MPI_Datatype raw_type[2];
    size_t raw_size[2];
    int no_spare; /* destroyed without handing its buffers to the schedule */
    size_t entry_bytes;
    int datatype;          /* datatype mode: messages described by msgtype */
    MPI_Datatype *msgtype; /* per message: struct type over MPI_BOTTOM */
    char *vec;             /* the scratch vectors of datatype mode */
    size_t vec_stride;
    const char *algorithm;  /* for iso__sched_request_describe */
    long long packed_bytes; /* packed messages sent by this execution so far */
    long long packed_last;  /* by the last completed execution, -1: none yet */
} iso_sreq;

/* Where a piece's data is: address, count, type. */
typedef struct {
    char *p;
    int count;
    MPI_Datatype type;
} iso_place;

/* executor.c: the kind of every schedule request (start, progress,
 * destroy). */
extern const iso_request_kind iso__sched_kind;
/* Sorts the schedule's ops by round and stage for r (stage_ops, stage_at). */
int iso__stage_plan(iso_sreq *r);

/* message.c */
iso_place iso__place_of(const iso_sreq *r, iso_piece pc);
int iso__pack_message(iso_sreq *r, int m);
/* Receives message m of count packed bytes (probed) into its buffer. */
int iso__msgbuf_reserve(iso_sreq *r, int m, size_t bytes);
/* Finds the entries of the received packed message m (once per arrival). */
int iso__msg_index(iso_sreq *r, int m);
int iso__deliver(iso_sreq *r, const iso_op *op);
/* Sets raw_type/raw_size from r->args (the regular and v forms; the w forms
 * have a type per block and keep MPI_Pack). */
int iso__raw_types_find(iso_sreq *r);
/* Is DELIVER op a no-op in datatype mode (its block was received in its
 * slot)? */
int iso__deliver_in_place(const iso_sreq *r, const iso_op *op);
/* The bounded buffers rule (ISO_SPARE_SLACK, ISO_SPARE_MAX), applied to
 * r's own buffers: what stays, in bytes. */
size_t iso__msgbufs_trim(iso_sreq *r);
void iso__msgbufs_free(iso_sreq *r);

/* arena.c: message buffers in one allocation, shared by messages whose
 * lifetimes do not overlap.  The lifetime of message m is [born[m],
 * dies[m]] in time points 3 * round + stage (-1: no op touches it). */
void iso__arena_lifetimes(const iso_sched *s, int born[], int dies[]);
/* Offsets (multiples of 8) for messages of bytes[m] bytes such that no two
 * messages alive at one time point overlap; *total: the arena's size. */
int iso__arena_layout(const iso_sched *s, const size_t bytes[], size_t off[], size_t *total);
/* Makes r's message buffers slices of one arena, exactly bytes[m] each. */
int iso__arena_reserve(iso_sreq *r, const size_t bytes[]);

/* datatype_mode.c */
int iso__vectors_alloc(iso_sreq *r);
void iso__vectors_free(iso_sreq *r);
int iso__msgtypes_build(iso_sreq *r);
void iso__msgtypes_free(iso_sreq *r);

/* retain.c */
int iso__args_retain(iso_sreq *r, int nsend, int nrecv);
void iso__args_release(iso_sreq *r);

#endif
