/* core: what every layer of isocoll uses (DESIGN.md, "Layers").
 *   errors.c    the library's error classes and how errors are raised
 *   mpilib.c    the MPI library isocoll was built for
 *   memory.c    growing arrays
 *   datatype.c  small facts about MPI datatypes
 *   info.c      info keys and environment values: the one option reader,
 *               the one shape of algorithm tables, ISO_VERBOSE's line
 *   agree.c     the agreement of collective calls (one allreduce)
 *   privcomm.c  the private communicator for library traffic, and tags
 *   finalize.c  releasing what is cached on MPI_COMM_WORLD at MPI_Finalize
 *   request.c   requests, the list of active requests, Iso_start/wait/test
 *
 * Error convention (DESIGN.md, "Errors"): every internal function that can
 * fail returns an MPI error code, MPI_SUCCESS (0) on success.  A library
 * error is made where it is found, as iso__error(ISO_ERR_...), which is an
 * MPI code of the library's class; MPI's own codes are passed on as they
 * are.  Only the public entry points raise (iso__raise), once, through the
 * error handler of the communicator involved. */
#ifndef ISO_CORE_H
#define ISO_CORE_H

#include "isocoll.h"
#include <stddef.h>

/* ---- errors (errors.c) ---------------------------------------------------- */
/* The MPI error code of library error e (registers the classes on first use). */
int iso__error(Iso_error e);
/* The same with the cause in its string: "isocoll: <class text>: <fmt...>".
 * Say what was wrong and where it came from, e.g. "environment
 * ISO_ALGORITHM=\"fast\" (auto, direct, dimwise, bruck)". */
int iso__error_msg(Iso_error e, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Reports err (an MPI code, MPI_SUCCESS does nothing) through comm's error
 * handler (MPI_COMM_WORLD's if comm is MPI_COMM_NULL) and returns it; a
 * library error's string then names the public function.  Call it in the
 * public function itself (iso__raise names it with __func__); helpers that
 * raise for several public functions take their name and call
 * iso__raise_in. */
int iso__raise_in(const char *function, MPI_Comm comm, int err);
/* Which library error an MPI code belongs to (ISO_ERR_NONE: MPI_SUCCESS or
 * one of MPI's own).  Codes are per process (MPI_Add_error_code), library
 * error numbers are the same everywhere: send these to other processes. */
Iso_error iso__error_which(int err);
#define iso__raise(comm, err) iso__raise_in(__func__, (comm), (err))

/* ---- the MPI library (mpilib.c) -------------------------------------------- */
/* Aborts with a clear message, once, if the program does not run with the
 * MPI library isocoll was compiled for (MPICH or Open MPI). */
void iso__mpi_library_check(void);
/* Does MPI_Get_library_version's text name that library? */
int iso__mpi_library_matches(const char *version);

/* ---- memory (memory.c) ---------------------------------------------------- */
/* Grows *arr (elements of elem bytes, capacity *cap) to hold at least n
 * elements, doubling.  MPI_SUCCESS, or the NOMEM code with *arr unchanged. */
int iso__grow(void *arr, int *cap, int n, size_t elem);
/* Makes the byte buffer *buf (capacity *cap) hold at least n bytes; its
 * contents are kept.  MPI_SUCCESS or the NOMEM code. */
int iso__reserve(void **buf, size_t *cap, size_t n);

/* ---- hashing ---------------------------------------------------------------- */
/* FNV-1a's step on a whole value (not byte by byte), from ISO_FNV1A_BASIS:
 * ids that must come out the same on every process and in every run (the
 * agreements' hashes, ISO_TUNE_FILE's records), so this arithmetic never
 * changes.  The caller's cast decides how a value widens: (unsigned) for
 * 32 bits, (unsigned long long) for 64. */
#define ISO_FNV1A_BASIS 1469598103934665603ull
static inline unsigned long long iso__fnv1a(unsigned long long h, unsigned long long v)
{
    return (h ^ v) * 1099511628211ull;
}

/* ---- datatypes (datatype.c) ----------------------------------------------- */
/* A predefined (named) datatype, which needs no duplicate to outlive a call. */
int iso__type_is_named(MPI_Datatype t);
/* MPI_SUCCESS if t can be used in communication: not MPI_DATATYPE_NULL
 * and committed; else the TYPE code.  Local (no communication). */
int iso__type_check(MPI_Datatype t);
/* The bytes count x t at displacement 0 touches: [*lo, *lo + *span), the
 * true extent of the whole (right for negative extents too; 0 and 0 for
 * count <= 0).  The COUNT code if the span overflows an MPI_Aint. */
int iso__type_span(int count, MPI_Datatype t, MPI_Aint *lo, MPI_Aint *span);
/* Caches that keep derived type handles: iso__type_watch(t) marks t (named
 * types need nothing), and iso__type_generation() changes whenever a marked
 * type is freed, so a cache entry of an older generation may name a type
 * that no longer exists (or a new one under the same handle). */
int iso__type_watch(MPI_Datatype t);
unsigned long iso__type_generation(void);
/* The library's own committed handle on derived type t (the same type map
 * and extent), valid after the user frees t; freed with MPI_Type_free. */
int iso__type_hold(MPI_Datatype t, MPI_Datatype *held);
/* MPI_Pack, with MPICH 4.0's short packs of contiguous derived types
 * completed (datatype.c): every packing in the library goes through it. */
int iso__pack(const void *in, int count, MPI_Datatype t, void *out, int outsize, int *pos,
              MPI_Comm comm);

/* ---- agreement (agree.c) ---------------------------------------------------- */
/* What the processes of a collective call agree on in one allreduce:
 * same[0..nsame) must be alike on every process (LLONG_MIN counts as
 * LLONG_MIN + 1), max[0..nmax) are replaced by their maxima. */
#define ISO_AGREE_MAXVALS 8
typedef struct {
    int nsame;
    long long same[ISO_AGREE_MAXVALS];
    int nmax;
    long long max[ISO_AGREE_MAXVALS];
    int differs; /* out: the first index of same[] that differs, -1: none */
} iso_agreement;
/* One nonblocking allreduce on comm, progressing the active requests while
 * it completes; collective over comm, and every process must call it even
 * when its own arguments are bad (err: its error, else MPI_SUCCESS).
 * Returns err; else, if another process failed, an error of its class
 * (agree.c states the rule); else MPI_SUCCESS.  ag->max and ag->differs
 * are set whenever the allreduce ran; what a difference means is the
 * caller's to say. */
int iso__agree(MPI_Comm comm, int err, iso_agreement *ag);

/* ---- info keys and environment values (info.c) ---------------------------- */
/* Calls handler(ctx, key, value) for every key of info that starts with
 * "iso_" (keys of other libraries are ignored); stops at the first error.
 * MPI_INFO_NULL has no keys. */
typedef int (*iso_info_handler)(void *ctx, const char *key, const char *value);
int iso__info_each(MPI_Info info, iso_info_handler handler, void *ctx);
/* An environment variable and the option it sets: an info key, or a name
 * of the caller's own (ISO_VERBOSE has no info key). */
typedef struct {
    const char *var, *key;
} iso_env_option;
/* Calls handler(ctx, key, value) for every variable of vars[0..n) that is
 * set and not empty, in order; *var_now names the variable while the
 * handler runs (its error messages say where the value came from) and is
 * NULL afterwards.  Stops at the first error. */
int iso__env_each(const iso_env_option vars[], size_t n, const char **var_now,
                  iso_info_handler handler, void *ctx);
/* Where an option's value came from, for error messages: "environment
 * VAR" while iso__env_each reads VAR (env != NULL), else "info KEY". */
void iso__option_where(char *buf, size_t n, const char *env, const char *key);
/* A boolean option: iso__parse_bool, or the INFO code with a message
 * naming where="value" and the accepted words. */
int iso__option_bool(const char *where, const char *value, int *out);
/* true/yes/on/1 -> 1, false/no/off/0 -> 0 (case-insensitive, as every
 * name the library accepts); else the INFO code. */
int iso__parse_bool(const char *value, int *out);

/* ---- tables of named entries (info.c) -------------------------------------- */
/* Every family's algorithm table has one shape: an array of structs whose
 * first member is the name (const char *), declared once with its count
 * as ISO_TABLE(array).  "auto" is never an entry: it looks up as ISO_AUTO. */
#define ISO_AUTO (-1)
typedef struct {
    const void *entries;
    size_t size; /* of one entry */
    int n;
} iso_table;
#define ISO_TABLE(arr) {(arr), sizeof(arr)[0], (int)(sizeof(arr) / sizeof(arr)[0])}
/* Entry k's name. */
const char *iso__table_name(const iso_table *t, int k);
/* The index of name (any case), ISO_AUTO for "auto", else -2. */
int iso__table_find(const iso_table *t, const char *name);
/* "auto, NAME, NAME, ..." for error messages. */
void iso__table_names(const iso_table *t, char *buf, size_t size);

/* ---- reading options (info.c) ----------------------------------------------- */
/* One reader for info and environment: a family lists its keys, each with
 * the function that takes its value (where: "info KEY" or "environment
 * VAR", for its errors); a key ending in '*' takes every key with that
 * prefix.  An "iso_" key not in the list is the INFO code naming the keys
 * accepted `here` (e.g. "on a distributed graph communicator"). */
typedef struct {
    const char *key;
    int (*set)(void *ctx, const char *key, const char *value, const char *where);
} iso_option_key;
typedef struct {
    const iso_option_key *keys;
    int nkeys;
    const char *here; /* for the unknown-key error, "" if nothing to add */
    void *ctx;        /* the family's options */
    const char *env;  /* set while the environment is read */
} iso_options;
/* info's keys (MPI_INFO_NULL: none), then the variables vars[0..n) that are set. */
int iso__options_info(iso_options *o, MPI_Info info);
int iso__options_env(iso_options *o, const iso_env_option vars[], size_t n);

/* What ISO_VERBOSE prints: on rank 0 of comm only, one line
 * "isocoll: FN: auto chose ALG..." (requested auto) or "isocoll: FN: runs
 * ALG...", then what follows from fmt (may be ""). When to say it is the
 * caller's. */
void iso__report_choice(MPI_Comm comm, const char *fn, int was_auto, const char *alg,
                        const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* ---- at MPI_Finalize (finalize.c) ------------------------------------------ */
/* Makes MPI_Finalize call fn first thing (from the delete callback of an
 * MPI_COMM_SELF attribute), while MPI can still free communicators and
 * windows; functions run in the reverse order of registration.  Register
 * once per function. */
typedef void (*iso_finalizer)(void);
int iso__at_finalize(iso_finalizer fn);
/* Deletes the attribute of keyval from MPI_COMM_WORLD if it is set (for
 * finalizers of caches kept on any communicator). */
void iso__world_attr_delete(int keyval);

/* ---- the private communicator (privcomm.c) -------------------------------- */
/* A duplicate of a user's communicator on which the library's messages
 * travel, so they never match user traffic; shared by the requests that use
 * it (counted references).  Tags are handed out identically on every process
 * because every process calls collectives in the same order.  Its error
 * handler is MPI_ERRORS_RETURN: errors come back as codes and are raised on
 * the user's communicator. */
typedef struct {
    int refs;
    MPI_Comm comm;   /* usable once ready */
    MPI_Request dup; /* the MPI_Comm_idup making comm (iso__priv_create_nb) */
    int ready;
    unsigned tag_next;
    int tag_ub;
    /* The SDDE's tuner kept on the user's communicator (sparse/tune.c),
     * borrowed so that a tuned call finds it without a second attribute
     * look-up; only read through calls on that communicator, which owns it. */
    void *sdde_tuner;
} iso_priv;

/* MPI_Comm_dup of comm (collective over comm, blocking), one reference;
 * ready at once. */
int iso__priv_create(MPI_Comm comm, iso_priv **out);
/* comm itself, a communicator the library has just made and nobody else
 * holds (no duplicate needed), taken over: freed with the last reference.
 * On failure comm stays the caller's. */
int iso__priv_adopt(MPI_Comm comm, iso_priv **out);
/* The same with MPI_Comm_idup, for calls that must not block: tags can be
 * reserved at once, comm is usable after iso__priv_ready says so. */
int iso__priv_create_nb(MPI_Comm comm, iso_priv **out);
/* Completes the duplication if it has (block: waits for it); *ready = 1
 * when comm is usable.  Thread-safe. */
int iso__priv_ready(iso_priv *p, int block, int *ready);
void iso__priv_release(iso_priv *p);
/* The private communicator cached on the intracommunicator comm (an
 * attribute that holds one reference, released when comm is freed;
 * MPI_Comm_dup does not copy it).  The first call on a communicator makes
 * it with MPI_Comm_idup, progressing active requests while it completes
 * (iso__progress_wait), so it is collective over comm; when it returns,
 * every process of comm has entered this call.  Its MPI error handler is
 * MPI_ERRORS_RETURN.  The reference is borrowed: take one (refs++) to keep
 * it beyond comm's lifetime. */
int iso__priv_cached(MPI_Comm comm, iso_priv **out);
/* The first of n consecutive tags (n >= 1) below MPI_TAG_UB; wraps to 0. */
int iso__tags_reserve(iso_priv *p, int n);

/* ---- threads (request.c) -----------------------------------------------------
 * One process-wide lock for the library's shared state: the active list,
 * the lazily registered error classes and keyvals, a private communicator
 * being duplicated.  Held only briefly, never across a blocking MPI call. */
/* MPICH 4.0 raises errors of completion calls through MPI_COMM_WORLD's
 * handler (request.c): between on=1 and on=0 it returns errors instead.
 * Nests; the request functions do it themselves, and a caller running
 * several of them in a row (a blocking call: start, then wait) may wrap
 * them in one pair so the handler is swapped once. */
void iso__world_errors_return(int on);
void iso__lock(void);
void iso__unlock(void);

/* ---- requests (request.c) --------------------------------------------------
 * Every operation of the library is a request with its own progress
 * function: the round executor of schedules (sched/) is one kind, probe or
 * barrier driven exchanges another.  A request that has started is on the
 * active list until it completes; every wait or test progresses the whole
 * list, so operations completed in different orders on different processes
 * cannot deadlock.  A kind embeds struct iso_request_s as its first member. */
struct iso_request_s;
typedef struct {
    /* Posts the first communication.  Called with the request on the active
     * list; calls iso__request_complete when there is nothing to wait for. */
    int (*start)(struct iso_request_s *r);
    /* Advances the request as far as possible without waiting (block = 0) or
     * until it completes (block = 1); calls iso__request_complete at the end
     * or on an error. */
    void (*progress)(struct iso_request_s *r, int block);
    /* Frees the request (never called while it is active). */
    void (*destroy)(struct iso_request_s *r);
} iso_request_kind;

struct iso_request_s {
    const iso_request_kind *kind;
    MPI_Comm comm;  /* the user's communicator, for error reporting */
    int persistent; /* started by Iso_start, kept after completion */
    int active;
    int busy;       /* a thread is progressing it (guarded by the lock) */
    int err;        /* outcome of the last execution */
    struct iso_request_s *prev, *next; /* the active list */
};

/* Sets the common fields of a new, inactive request. */
void iso__request_init(struct iso_request_s *r, const iso_request_kind *kind, MPI_Comm comm,
                       int persistent);
/* Activates r and starts it; returns its error, if starting failed. */
int iso__request_start(struct iso_request_s *r);
/* Ends r's execution with err and takes it off the active list. */
void iso__request_complete(struct iso_request_s *r, int err);
/* Is r active (started and not completed)? */
int iso__request_active(struct iso_request_s *r);
/* Completes r, progressing every other active request meanwhile. */
int iso__request_wait(struct iso_request_s *r);
/* Completes the MPI request *mreq (a nonblocking collective, say),
 * progressing every active request meanwhile: a collective step inside an
 * operation must not stop other outstanding operations, which processes
 * may complete before entering this one. */
int iso__progress_wait(MPI_Request *mreq);
/* The same for n MPI requests (point-to-point steps inside an operation). */
int iso__progress_waitall(int n, MPI_Request reqs[]);
/* Progresses every active request once, without waiting (for loops that
 * poll MPI themselves, e.g. probes). */
void iso__progress_poll(void);
/* Frees r (taking it off the active list first if it is still there). */
void iso__request_destroy(struct iso_request_s *r);

#endif
