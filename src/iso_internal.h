/* Internal interfaces of isocoll.  Layers (DESIGN.md): neighborhood ->
 * schedule (one structure, one executor) -> algorithms (builders in a
 * table) -> collectives (validate, build, run). */
#ifndef ISO_INTERNAL_H
#define ISO_INTERNAL_H

#include "isocoll.h"
#include <stddef.h>

/* ---- errors (errors.c) ------------------------------------------------ */
/* The MPI error class of a library error (registers classes on first use). */
int iso__errclass(Iso_error err);
/* Report err (an MPI error code or class) through comm's error handler
 * (MPI_COMM_WORLD if comm is MPI_COMM_NULL) and return it. */
int iso__raise(MPI_Comm comm, int err);
/* Shorthand: iso__raise(comm, iso__errclass(err)). */
int iso__fail(MPI_Comm comm, Iso_error err);

/* ---- neighborhood (neighborhood.c) ------------------------------------ */
typedef struct {
    int d, s;
    int *dims, *periods, *coords; /* of the Cartesian communicator / caller */
    int *offsets;                 /* s*d relative coordinates */
    int *sources, *targets;       /* s ranks each, MPI_PROC_NULL off the mesh */
    int indegree, outdegree;      /* entries that are not MPI_PROC_NULL */
    int algorithm;                /* default: index in iso__algorithms, or ISO_ALG_AUTO */
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

typedef enum { ISO_OP_SEND, ISO_OP_RECV, ISO_OP_COPY, ISO_OP_REDUCE } iso_opkind;

typedef struct {
    iso_opkind kind;
    int peer;   /* SEND, RECV */
    int tag;    /* SEND, RECV: offset from the operation's tag base */
    iso_loc a;  /* SEND, RECV: the data; COPY, REDUCE: the source */
    iso_loc b;  /* COPY, REDUCE: the destination */
    MPI_Op op;  /* REDUCE: b = a op b */
} iso_op;

/* Rounds: round r is ops[round_end[r-1] .. round_end[r]); its SEND/RECV
 * ops are posted together, and its COPY/REDUCE ops run in order once they
 * have all completed. */
typedef struct {
    iso_op *ops;
    int nops, ops_cap;
    int *round_end;
    int nrounds, rounds_cap;
    int ntags;            /* tags used: 0 .. ntags-1 relative */
    size_t scratch_bytes; /* scratch memory each execution needs */
    MPI_Datatype *owned;  /* datatypes this schedule frees */
    int nowned, owned_cap;
    int max_comm;         /* largest number of SEND/RECV ops in a round */
} iso_sched;

void iso__sched_init(iso_sched *s);
void iso__sched_destroy(iso_sched *s);
int iso__sched_add(iso_sched *s, const iso_op *op);
int iso__sched_send(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_recv(iso_sched *s, int peer, int tag, iso_loc a);
int iso__sched_copy(iso_sched *s, iso_loc from, iso_loc to);
int iso__sched_reduce(iso_sched *s, iso_loc from, iso_loc to, MPI_Op op);
/* Closes the current round (an empty round is dropped). */
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
} iso_algorithm;

#define ISO_ALG_AUTO (-1)
extern const iso_algorithm iso__algorithms[];
extern const int iso__nalgorithms;

/* Algorithm index for a name ("auto" -> ISO_ALG_AUTO); returns 0, or
 * ISO_ERR_ALGORITHM for an unknown name. */
int iso__algorithm_lookup(const char *name, int *index);
/* Resolves auto / checks applicability for one call. */
int iso__algorithm_select(const iso_nbh *nb, const iso_args *a, int requested, int *index);

int iso__build_direct(const iso_nbh *nb, const iso_args *a, iso_sched *out);

/* Block i of one side as a place in buffer buf. */
iso_loc iso__block(const iso_side *side, int buf, int i);

/* ---- requests and the executor (request.c) ---------------------------- */
struct iso_request_s {
    iso_sched sched;
    iso_state *state;
    MPI_Comm comm; /* the user's communicator, for error reporting */
    void *base[ISO_NBUF];
    void *scratch_mem;
    int tagbase;
    int persistent, active, round;
    int err; /* outcome of the last execution */
    MPI_Request *reqs;
    int nreqs;
    struct iso_request_s *prev, *next; /* list of active requests */
};

/* A request for sched (ownership moves into it, *sched is left empty),
 * bound to the buffers, with its tags reserved. */
int iso__request_create(iso_state *st, MPI_Comm comm, iso_sched *sched, const void *sendbuf,
                        void *recvbuf, int persistent, struct iso_request_s **out);
/* Starts an inactive request (posts round 0). */
int iso__request_start(struct iso_request_s *r);
/* Completes r, progressing every other active request meanwhile. */
int iso__request_wait(struct iso_request_s *r);
void iso__request_destroy(struct iso_request_s *r);

/* ---- info (neighborhood.c) -------------------------------------------- */
/* Parses the iso_* keys of info (MPI_INFO_NULL allowed); unset values are
 * left as they are.  Returns 0 or a library error. */
Iso_error iso__info_parse(MPI_Info info, int *algorithm, int *verify);

#endif
