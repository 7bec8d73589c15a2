/* compat/smpi: the stand-ins for MPI calls SMPI 3.32 lacks (smpi.h says
 * which and how).  Compiled into the SMPI build only (Makefile); every
 * call here is one SMPI implements.  smpi.h's macros apply here too: a
 * stand-in that needs SMPI's own function of its name calls the PMPI_ one. */
#include "compat/smpi.h"
#include <stdio.h>
#include <stdlib.h>
#include <limits.h>
#include <string.h>

/* An error of a call on comm, through its handler as MPI reports it. */
static int raise_on(MPI_Comm comm, int err)
{
    MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
    return err;
}

/* ---- the emulated topology, an attribute of the communicator -------------- */

/* What a communicator carries for this layer: the lists of an emulated
 * distributed graph (graph = 1), or nothing but the private duplicate of a
 * Cartesian communicator for neighborhood collectives (graph = 0). */
typedef struct {
    int graph;
    int indegree, outdegree, weighted;
    int *sources, *sourceweights, *dests, *destweights; /* one allocation */
    MPI_Comm coll; /* the neighborhood collectives' traffic, made at first use */
} compat_topo;

static int topo_keyval = MPI_KEYVAL_INVALID;

static compat_topo *topo_new(int indegree, int outdegree, int weighted)
{
    compat_topo *t = calloc(1, sizeof *t);
    int *lists = malloc(sizeof(int) * (2 * ((size_t)indegree + (size_t)outdegree) + 1));
    if (t == NULL || lists == NULL) {
        free(t);
        free(lists);
        return NULL;
    }
    t->graph = 1;
    t->indegree = indegree;
    t->outdegree = outdegree;
    t->weighted = weighted;
    t->sources = lists;
    t->sourceweights = t->sources + indegree;
    t->dests = t->sourceweights + indegree;
    t->destweights = t->dests + outdegree;
    t->coll = MPI_COMM_NULL;
    return t;
}

static void topo_free(compat_topo *t)
{
    if (t == NULL)
        return;
    if (t->coll != MPI_COMM_NULL)
        MPI_Comm_free(&t->coll);
    free(t->sources);
    free(t);
}

/* MPI_Comm_dup keeps a graph (as it keeps a real topology), without the
 * private duplicate; a Cartesian communicator's copy makes its own. */
static int topo_copy(MPI_Comm comm, int kv, void *extra, void *in, void *out, int *flag)
{
    const compat_topo *t = in;
    compat_topo *c;
    (void)comm;
    (void)kv;
    (void)extra;
    *flag = 0;
    if (!t->graph)
        return MPI_SUCCESS;
    if ((c = topo_new(t->indegree, t->outdegree, t->weighted)) == NULL)
        return MPI_ERR_NO_MEM;
    memcpy(c->sources, t->sources, sizeof(int) * 2 * ((size_t)t->indegree + (size_t)t->outdegree));
    *(compat_topo **)out = c;
    *flag = 1;
    return MPI_SUCCESS;
}

static int topo_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    topo_free(val);
    return MPI_SUCCESS;
}

/* comm's record, or NULL (*t) when it has none. */
static int topo_get(MPI_Comm comm, compat_topo **t)
{
    int flag = 0, err;
    *t = NULL;
    if (topo_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(topo_copy, topo_delete, &topo_keyval, NULL)) != MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_get_attr(comm, topo_keyval, t, &flag)) != MPI_SUCCESS)
        return err;
    if (!flag)
        *t = NULL;
    return MPI_SUCCESS;
}

/* *graph: the emulated graph of comm, NULL if it has none. */
static int graph_of(MPI_Comm comm, compat_topo **graph)
{
    int err = topo_get(comm, graph);
    if (err == MPI_SUCCESS && *graph != NULL && !(*graph)->graph)
        *graph = NULL;
    return err;
}

/* *graph: the emulated graph of comm, which must have one (the queries of
 * a distributed graph: MPI_ERR_COMM, MPI_ERR_TOPOLOGY otherwise). */
static int graph_required(MPI_Comm comm, compat_topo **graph)
{
    int err;
    if (comm == MPI_COMM_NULL)
        return raise_on(comm, MPI_ERR_COMM);
    if ((err = graph_of(comm, graph)) != MPI_SUCCESS)
        return err;
    return *graph == NULL ? raise_on(comm, MPI_ERR_TOPOLOGY) : MPI_SUCCESS;
}

/* Is comm Cartesian?  PMPI_Cartdim_get reports without calling the error
 * handler (SMPI calls it in the MPI_ layer only). */
static int is_cart(MPI_Comm comm, int *cart)
{
    int d, err = PMPI_Cartdim_get(comm, &d);
    *cart = err == MPI_SUCCESS;
    return err == MPI_ERR_TOPOLOGY ? MPI_SUCCESS : err;
}

int iso_smpi_Topo_test(MPI_Comm comm, int *status)
{
    compat_topo *g;
    int cart, err;
    if (comm == MPI_COMM_NULL)
        return raise_on(comm, MPI_ERR_COMM);
    if ((err = graph_of(comm, &g)) != MPI_SUCCESS)
        return err;
    if (g != NULL) { /* before the Cartesian test: a graph made from a
                        Cartesian communicator duplicates its topology */
        *status = MPI_DIST_GRAPH;
        return MPI_SUCCESS;
    }
    if ((err = is_cart(comm, &cart)) != MPI_SUCCESS)
        return raise_on(comm, err);
    *status = cart ? MPI_CART : MPI_UNDEFINED;
    return MPI_SUCCESS;
}

/* ---- communicators ------------------------------------------------------- */

int iso_smpi_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request)
{
    int err = MPI_Comm_dup(comm, newcomm);
    *request = MPI_REQUEST_NULL;
    return err;
}

/* ---- completion ---------------------------------------------------------- */

static void progress(void);
static void relays_progress(void);
static int work_pending(void);
static int wait_union(int count, MPI_Request requests[], int *index, MPI_Status *status);

/* MPI_Test of MPI_REQUEST_NULL must give flag = true with an empty status;
 * SMPI 3.32 sets the flag only when a status is asked for, and leaves it
 * as it was with MPI_STATUS_IGNORE.  A caller that loops until the flag
 * (core/privcomm.c waits on MPI_Comm_idup's request, which is
 * MPI_REQUEST_NULL here) then never yields to the other simulated
 * processes: t_vpt hung at 16 ranks. */
int iso_smpi_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    if (request != NULL && flag != NULL && *request == MPI_REQUEST_NULL) {
        *flag = 1;
        if (status != MPI_STATUS_IGNORE) {
            status->MPI_SOURCE = MPI_ANY_SOURCE;
            status->MPI_TAG = MPI_ANY_TAG;
            status->MPI_ERROR = MPI_SUCCESS;
            MPI_Status_set_elements(status, MPI_BYTE, 0);
            MPI_Status_set_cancelled(status, 0);
        }
        return MPI_SUCCESS;
    }
    progress();
    return PMPI_Test(request, flag, status);
}

/* While this process has collective work pending (below: rank 0's relays,
 * any process's schedules), a wait blocks on its request and on every
 * receive that work waits for, and progresses the work when one of those
 * completes: the request waited for may depend on another process that
 * waits for this one's next message. */
int iso_smpi_Wait(MPI_Request *request, MPI_Status *status)
{
    int i, err;
    progress();
    while (work_pending() && request != NULL && *request != MPI_REQUEST_NULL) {
        err = wait_union(1, request, &i, status);
        progress();
        if (err != MPI_SUCCESS || i == 0)
            return err;
    }
    return PMPI_Wait(request, status);
}

/* SMPI 3.32's MPI_Testall tests each request alone: those complete are
 * freed (their handles set to MPI_REQUEST_NULL) even when others are not
 * and the flag is false, and the next MPI_Testall or MPI_Waitall reports
 * an empty status for them (the executor then saw a combined message of
 * 0 bytes: the SDDE's vpt failed with MPI_ERR_OTHER).  MPI leaves the
 * requests alone then.  Here the statuses of requests completed early are
 * kept, by the address of their handle, until the call that completes
 * the whole array reports them (a handle that is active again drops a
 * stale one). */
typedef struct early_status {
    const MPI_Request *slot;
    MPI_Status status;
    struct early_status *next;
} early_status;

static early_status *early; /* this process's (globals are privatized) */

/* Takes the status kept for slot into *st, if there is one. */
static int early_take(const MPI_Request *slot, MPI_Status *st)
{
    for (early_status **at = &early; *at != NULL; at = &(*at)->next)
        if ((*at)->slot == slot) {
            early_status *e = *at;
            if (st != NULL)
                *st = e->status;
            *at = e->next;
            free(e);
            return 1;
        }
    return 0;
}

int iso_smpi_Testall(int count, MPI_Request requests[], int *flag, MPI_Status statuses[])
{
    int all = 1, failed = 0;
    progress();
    if (statuses == MPI_STATUSES_IGNORE)
        return PMPI_Testall(count, requests, flag, statuses);
    for (int i = 0; i < count; i++) {
        MPI_Status st;
        early_status *e;
        int done = 0, err;
        if (requests[i] == MPI_REQUEST_NULL)
            continue;
        early_take(&requests[i], NULL); /* active again: any kept one is stale */
        err = PMPI_Test(&requests[i], &done, &st);
        if (err != MPI_SUCCESS)
            done = 1;
        if (!done) {
            all = 0;
            continue;
        }
        st.MPI_ERROR = err;
        if ((e = malloc(sizeof *e)) == NULL)
            return MPI_ERR_NO_MEM;
        *e = (early_status){&requests[i], st, early};
        early = e;
    }
    *flag = all;
    if (!all)
        return MPI_SUCCESS;
    for (int i = 0; i < count; i++) {
        if (!early_take(&requests[i], &statuses[i])) {
            statuses[i].MPI_SOURCE = MPI_ANY_SOURCE;
            statuses[i].MPI_TAG = MPI_ANY_TAG;
            statuses[i].MPI_ERROR = MPI_SUCCESS;
            MPI_Status_set_elements(&statuses[i], MPI_BYTE, 0);
        }
        failed |= statuses[i].MPI_ERROR != MPI_SUCCESS;
    }
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* MPI_Waitall after an MPI_Testall that completed some requests early:
 * their kept statuses, the others' from SMPI.  While collective work is
 * pending it waits for any one of the requests or of the work's receives
 * (as MPI_Wait), and keeps the statuses of the requests completed one by
 * one the same way, until MPI_Testall finds them all complete. */
int iso_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[])
{
    int err, failed = 0, flag = 0;
    progress();
    while (work_pending()) {
        MPI_Status st;
        early_status *e;
        int i;
        if ((err = iso_smpi_Testall(count, requests, &flag, statuses)) != MPI_SUCCESS || flag)
            return err;
        err = wait_union(count, requests, &i, &st);
        progress();
        if (i == MPI_UNDEFINED || i >= count) {
            if (err != MPI_SUCCESS)
                return err;
            continue;
        }
        if (statuses == MPI_STATUSES_IGNORE)
            continue;
        st.MPI_ERROR = err;
        if ((e = malloc(sizeof *e)) == NULL)
            return MPI_ERR_NO_MEM;
        *e = (early_status){&requests[i], st, early};
        early = e;
    }
    for (int i = 0; i < count && early != NULL; i++)
        if (requests[i] != MPI_REQUEST_NULL || statuses == MPI_STATUSES_IGNORE)
            early_take(&requests[i], NULL); /* active again, or not asked for */
    if (early == NULL)
        return PMPI_Waitall(count, requests, statuses);
    /* the kept statuses overwrite the empty ones SMPI gives their slots */
    err = PMPI_Waitall(count, requests, statuses);
    if (err != MPI_SUCCESS && err != MPI_ERR_IN_STATUS)
        return err;
    for (int i = 0; i < count; i++) {
        if (err == MPI_SUCCESS)
            statuses[i].MPI_ERROR = MPI_SUCCESS;
        early_take(&requests[i], &statuses[i]);
        failed |= statuses[i].MPI_ERROR != MPI_SUCCESS;
    }
    return failed ? MPI_ERR_IN_STATUS : MPI_SUCCESS;
}

/* ---- nonblocking collectives through rank 0 ---------------------------------- */

/* SMPI 3.32's MPI_Ibarrier is no barrier: its root posts the releases
 * together with the receives of the others' arrivals, so every process
 * but the root may leave it before the others have entered (the SDDE's
 * rma and NBX then read slots and probe before the last messages are in).
 * Its MPI_Iallreduce (and its other nonblocking collectives) send from
 * every process to every other: p(p - 1) messages a call, which the
 * simulator matches in mailboxes of p messages each; with iso_verify's
 * agreement (core/agree.c) in every call, a test at 256 ranks did not
 * finish in 300 s, against about a second without it.
 * MPI_Ibarrier and the MPI_Iallreduce the library makes (a predefined
 * commutative op on a few elements) are schedules of log p steps now (next
 * section).  The others (MPI_Iallreduce with any other op,
 * MPI_Ireduce_scatter_block, MPI_Iallgather(v)) are a relay through rank
 * 0, 2(p - 1) messages: every process
 * sends its arrival (its contribution) to rank 0 and returns the receive
 * of rank 0's release (the result) as its request; rank 0 receives the
 * arrivals, reduces them in rank order (so any MPI_Op is right) and sends
 * the releases once all are in, and its own request is the receive of a
 * release it sends itself.  Only rank 0 must act, which it does in the
 * completion calls wrapped here (MPI_Test, MPI_Wait, MPI_Testall,
 * MPI_Waitall, MPI_Testany, MPI_Waitany), whatever request they are given.  Tags MPI_TAG_UB (SMPI:
 * INT_MAX) and one below, on comm itself: no duplicate can be made without
 * blocking, and the library's tags count up from 0 (core/privcomm.c).
 * Collectives on one communicator start in one order everywhere, and
 * messages between two processes do not overtake: arrivals meet the
 * receives of their own call.  MPI_Iallreduce keeps SMPI's own for
 * MPI_IN_PLACE, derived datatypes and results of 64 KiB or more (the limit
 * the relays were tested with; the releases' own copy, below, would carry
 * more). */
#define ARRIVE_TAG INT_MAX
#define RELEASE_TAG (INT_MAX - 1)
#define RELAY_MAX_BYTES 65536

/* What a relay computes: the arrivals are contributions of count
 * elements reduced (allreduce: the result goes to everyone;
 * reduce_scatter_block: block i of it to rank i), or blocks gathered in
 * rank order into one result of count elements (allgather(v)), or
 * nothing (a barrier, count 0). */
typedef enum { RELAY_BARRIER, RELAY_ALLREDUCE, RELAY_REDUCE_SCATTER, RELAY_ALLGATHER } relay_kind;

typedef struct pending_relay {
    MPI_Comm comm;
    relay_kind kind;
    MPI_Request release;   /* rank 0's own release receive, the caller's request */
    MPI_Request *arrivals; /* p - 1 receives */
    int n;
    char *contrib;         /* reductions: the arrivals' contributions, rank order */
    void *result;          /* rank 0's result (the reductions: its contribution first):
                              its recvbuf, or its own buffer for reduce_scatter_block */
    void *recvbuf;         /* reduce_scatter_block: rank 0's block of the result */
    int count;             /* elements of the result; 0: a barrier */
    int n_sends;           /* release sends posted */
    int block;             /* reduce_scatter_block: elements per process */
    MPI_Datatype type;
    MPI_Op op;
    char *out;             /* released: the releases' data, rank 0's own copy */
    MPI_Request *sends;    /* released: the p - 1 release sends */
    struct pending_relay *next;
} pending_relay;

/* rank 0's relays not yet released, and those released whose release
 * sends are not complete yet (each simulated process has its own copy of
 * these variables: smpirun privatizes globals).  The releases are sent
 * from a copy that lives until they are complete: the caller may reuse
 * its buffers once its own request is done, and SMPI copies a send at once
 * only below smpi/send-is-detached-thresh (64 KiB; 0 would spare the
 * simulator its quadratic bookkeeping of detached sends, DESIGN.md). */
static pending_relay *pending, *draining;

/* Sends nobody waits for: the arrivals, and rank 0's release to itself.
 * MPI lets them be freed active (MPI_Request_free), but SMPI 3.32 then
 * deletes the request its mailbox still matches by unless the send is
 * detached (below smpi/send-is-detached-thresh): with the threshold at 0,
 * t_alltoall deadlocked at 3 ranks (the arrivals never matched) and
 * bench/mailbox_degree crashed at 128.  So they are kept here until
 * complete: tested when the array is full, waited for at MPI_Finalize. */
static MPI_Request *loose;
static int nloose, loose_cap;

/* Drops the complete ones (block: waits for them all first). */
static void loose_drain(int block)
{
    int all = 0, n = 0;
    if (nloose == 0)
        return;
    if (block)
        PMPI_Waitall(nloose, loose, MPI_STATUSES_IGNORE);
    else
        PMPI_Testall(nloose, loose, &all, MPI_STATUSES_IGNORE);
    /* SMPI's MPI_Testall frees those complete even when not all are
     * (see iso_smpi_Testall); any other MPI would leave them for later */
    for (int i = 0; i < nloose; i++)
        if (loose[i] != MPI_REQUEST_NULL)
            loose[n++] = loose[i];
    nloose = n;
}

/* Keeps the send *r until it is complete (*r becomes MPI_REQUEST_NULL). */
static int loose_keep(MPI_Request *r)
{
    if (nloose == loose_cap)
        loose_drain(0);
    if (nloose == 0 ? loose_cap == 0 : nloose > loose_cap / 2) { /* mostly still active: grow */
        int cap = loose_cap ? 2 * loose_cap : 16;
        MPI_Request *more = realloc(loose, sizeof *more * (size_t)cap);
        if (more == NULL)
            return MPI_ERR_NO_MEM;
        loose = more;
        loose_cap = cap;
    }
    loose[nloose++] = *r;
    *r = MPI_REQUEST_NULL;
    return MPI_SUCCESS;
}

/* All arrivals are in: the result (v_0 op (v_1 op ... v_p-1)), then the
 * releases, rank 0's own last. */
static int relay_release(pending_relay *b)
{
    int p, size = 0, err = MPI_SUCCESS;
    int reduce = b->kind == RELAY_ALLREDUCE || b->kind == RELAY_REDUCE_SCATTER;
    MPI_Comm_size(b->comm, &p);
    PMPI_Type_size(b->type, &size);
    if (reduce && b->count > 0 && p > 1) {
        char *acc = b->contrib + (size_t)(p - 2) * (size_t)size * (size_t)b->count;
        for (int i = p - 3; i >= 0 && err == MPI_SUCCESS; i--)
            err = PMPI_Reduce_local(b->contrib + (size_t)i * (size_t)size * (size_t)b->count, acc,
                                    b->count, b->type, b->op);
        if (err == MPI_SUCCESS)
            err = PMPI_Reduce_local(b->result, acc, b->count, b->type, b->op);
        if (err == MPI_SUCCESS)
            memcpy(b->result, acc, (size_t)size * (size_t)b->count);
    }
    if (b->kind == RELAY_REDUCE_SCATTER && err == MPI_SUCCESS)
        memcpy(b->recvbuf, b->result, (size_t)size * (size_t)b->block);
    if (err == MPI_SUCCESS && (b->sends = malloc(sizeof(MPI_Request) * (size_t)p)) == NULL)
        err = MPI_ERR_NO_MEM;
    if (err == MPI_SUCCESS && b->count > 0) {
        if ((b->out = malloc((size_t)size * (size_t)b->count)) == NULL)
            err = MPI_ERR_NO_MEM;
        else
            memcpy(b->out, b->result, (size_t)size * (size_t)b->count);
    }
    for (int i = 1; i <= p && err == MPI_SUCCESS; i++) {
        MPI_Request r;
        if (i == p) {
            if ((err = PMPI_Isend(NULL, 0, MPI_BYTE, 0, RELEASE_TAG, b->comm, &r)) == MPI_SUCCESS)
                err = loose_keep(&r);
        } else if (b->kind == RELAY_REDUCE_SCATTER) {
            err = PMPI_Isend(b->out + (size_t)i * (size_t)size * (size_t)b->block, b->block,
                             b->type, i, RELEASE_TAG, b->comm, &b->sends[i - 1]);
        } else {
            err = PMPI_Isend(b->out, b->count, b->count ? b->type : MPI_BYTE, i, RELEASE_TAG,
                             b->comm, &b->sends[i - 1]);
        }
        if (err == MPI_SUCCESS && i < p)
            b->n_sends = i;
    }
    return err;
}

static void relay_free(pending_relay *b)
{
    free(b->arrivals);
    free(b->contrib);
    if (b->kind == RELAY_REDUCE_SCATTER)
        free(b->result);
    free(b->out);
    free(b->sends);
    free(b);
}

/* Frees the released relays whose release sends are complete (block: waits
 * for them all, at MPI_Finalize). */
static void relays_drain(int block)
{
    for (pending_relay **at = &draining; *at != NULL;) {
        pending_relay *b = *at;
        int all = 0;
        if (block)
            all = PMPI_Waitall(b->n_sends, b->sends, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
        else if (PMPI_Testall(b->n_sends, b->sends, &all, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            all = 0;
        if (!all && !block) {
            at = &b->next;
            continue;
        }
        *at = b->next;
        relay_free(b);
    }
}

/* Starts the relay of one collective of kind on comm, type elements:
 *   barrier           nothing (sendbuf, recvbuf unused);
 *   allreduce         count from sendbuf, the result into recvbuf;
 *   reduce_scatter    count = p * block from sendbuf, block `rank` of the
 *                     result into recvbuf;
 *   allgather         counts[rank] from sendbuf, all of them in rank order
 *                     into recvbuf (count = their sum; counts the same
 *                     everywhere). */
static int relay_start(relay_kind kind, const void *sendbuf, void *recvbuf, int count,
                       const int *counts, int block, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                       MPI_Request *request)
{
    pending_relay *b;
    MPI_Request r;
    MPI_Datatype t = count ? type : MPI_BYTE;
    int rank, p, size = 0, err, mine, reduce = kind == RELAY_ALLREDUCE || kind == RELAY_REDUCE_SCATTER;
    size_t at = 0;
    if ((err = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (err = MPI_Comm_size(comm, &p)) != MPI_SUCCESS ||
        (err = PMPI_Type_size(t, &size)) != MPI_SUCCESS)
        return err;
    mine = kind == RELAY_ALLGATHER ? counts[rank] : count; /* the contribution */
    if (rank != 0) {
        if ((err = PMPI_Irecv(recvbuf, kind == RELAY_REDUCE_SCATTER ? block : count, t, 0,
                              RELEASE_TAG, comm, request)) != MPI_SUCCESS ||
            (err = PMPI_Isend(sendbuf, mine, t, 0, ARRIVE_TAG, comm, &r)) != MPI_SUCCESS)
            return err;
        return loose_keep(&r);
    }
    if ((b = calloc(1, sizeof *b)) == NULL ||
        (b->arrivals = malloc(sizeof(MPI_Request) * (size_t)p)) == NULL ||
        (reduce && (b->contrib = malloc((size_t)size * (size_t)count * (size_t)p + 1)) == NULL) ||
        (kind == RELAY_REDUCE_SCATTER &&
         (b->result = malloc((size_t)size * (size_t)count + 1)) == NULL)) {
        if (b != NULL) {
            free(b->arrivals);
            free(b->contrib);
        }
        free(b);
        return MPI_ERR_NO_MEM;
    }
    b->comm = comm;
    b->kind = kind;
    b->release = MPI_REQUEST_NULL;
    b->recvbuf = recvbuf;
    if (kind != RELAY_REDUCE_SCATTER)
        b->result = recvbuf;
    b->count = count;
    b->block = block;
    b->type = t;
    b->op = op;
    if (mine > 0)
        memcpy(b->result, sendbuf, (size_t)size * (size_t)mine);
    err = PMPI_Irecv(NULL, 0, MPI_BYTE, 0, RELEASE_TAG, comm, &b->release);
    for (int i = 1; i < p && err == MPI_SUCCESS; i++) {
        void *into;
        int n = count;
        if (kind == RELAY_ALLGATHER) { /* block i after those of ranks 0 .. i - 1 */
            at += (size_t)counts[i - 1];
            into = (char *)b->result + at * (size_t)size;
            n = counts[i];
        } else {
            into = b->contrib ? b->contrib + (size_t)(i - 1) * (size_t)size * (size_t)count : NULL;
        }
        err = PMPI_Irecv(into, n, t, i, ARRIVE_TAG, comm, &b->arrivals[b->n++]);
    }
    if (err != MPI_SUCCESS) {
        relay_free(b);
        return err;
    }
    *request = b->release;
    {
        pending_relay **end = &pending; /* last: releases go in start order */
        while (*end != NULL)
            end = &(*end)->next;
        *end = b;
    }
    relays_progress(); /* p = 1: released at once */
    return MPI_SUCCESS;
}

/* Can a relay carry count elements of type (the same on every process,
 * which their calls must agree on anyway)?  Named types only, results below
 * RELAY_MAX_BYTES. */
static int relay_fits(MPI_Comm comm, long long count, MPI_Datatype type)
{
    int size = 0, ni, na, nd, combiner = -1;
    return comm != MPI_COMM_NULL && count > 0 && type != MPI_DATATYPE_NULL &&
           PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner) == MPI_SUCCESS &&
           combiner == MPI_COMBINER_NAMED && PMPI_Type_size(type, &size) == MPI_SUCCESS &&
           size * count < RELAY_MAX_BYTES;
}

/* Progresses rank 0's pending relays: those whose arrivals are all in are
 * released, in the order they started on each communicator (the list's:
 * the other processes post the receives of their releases in that order,
 * and two relays may run at once, as the two MPI_Iallgatherv of
 * route/sharing.c do). */
static void relays_progress(void)
{
    for (pending_relay **at = &pending; *at != NULL;) {
        pending_relay *b = *at;
        int all = 0, earlier = 0;
        for (pending_relay *e = pending; e != b && !earlier; e = e->next)
            earlier = e->comm == b->comm;
        if (earlier || PMPI_Testall(b->n, b->arrivals, &all, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
            all = 0;
        if (!all) {
            at = &b->next;
            continue;
        }
        *at = b->next;
        relay_release(b); /* (an error leaves the others waiting: nothing better here) */
        b->next = draining; /* freed when the sends posted are complete */
        draining = b;
    }
    relays_drain(0);
}

/* ---- nonblocking barrier and allreduce in log p rounds ------------------- */

/* MPI_Ibarrier, and MPI_Iallreduce of a few elements of a named type with
 * a predefined commutative MPI_Op (core/agree.c, mailbox/quiesce.c,
 * sparse/rma.c): the relay above makes one call cost 2(p - 1) messages
 * through rank 0, which at 512 simulated ranks took ~0.35 ms of simulated
 * time, where an MPI takes log p rounds.  Here every process runs a
 * schedule of steps; step k sends to one process, or receives from one,
 * or both, and step k + 1 starts when step k's receive is complete:
 *   MPI_Ibarrier    dissemination: step k (k < ceil(log2 p)) sends to
 *                   rank + 2^k and receives from rank - 2^k (mod p), zero
 *                   bytes.  After step k a process has heard, directly or
 *                   not, from the 2^(k+1) - 1 processes before it.
 *   MPI_Iallreduce  recursive doubling over the largest power of two
 *                   q <= p; the first 2(p - q) ranks fold in pairs first
 *                   (step 0: even sends its vector to odd, which reduces)
 *                   and unfold last (odd sends even the result).  In
 *                   between, log2 q exchanges with partner (new rank) xor
 *                   2^j, each reduced lower rank first, so that both
 *                   partners compute the same value and every process
 *                   ends with the same bits.
 * The receives of all steps are posted at the start (the buffers are the
 * schedule's); the sends of a step are posted from the schedule's copy of
 * the partial result when the step starts; the result is copied to recvbuf
 * at the end.  The caller's request is a zero-byte receive from itself
 * (DONE_TAG), which the schedule's last act sends: SMPI has no generalized
 * requests, and any wait on it goes to SMPI.
 * Progress: every wrapped completion call (MPI_Test, _Wait, _Testall,
 * _Waitall, _Testany, _Waitany) advances every schedule of its process as
 * far as its receives allow, whatever request it is given, and a wait
 * blocks in MPI_Waitany on its own requests and the receive each schedule
 * waits for, advancing when one completes (polling would spin: with
 * smpi/test:0, MPI_Test lets no simulated time pass).
 * Matching: step k's messages have tag BARRIER_TAG(k) or ALLREDUCE_TAG(k)
 * on comm itself (next to the relay's, the top of the tag range, which the
 * library's tags, counting up from 0, never reach).  Two schedules of one
 * kind on one communicator have the same peers in every step (same rank,
 * same size): collectives start in one order on every process, so each
 * process posts their receives in that order, and it posts their step-k
 * sends in that order too (a step's send waits until every earlier
 * schedule of its kind on comm has posted its own step-k send, which
 * never waits for a later one).  Messages between two processes with one
 * tag do not overtake: the j-th step-k message from a peer meets the j-th
 * step-k receive, that of the same collective.  Likewise the DONE messages
 * are sent in start order on each communicator (a schedule completes only
 * after the earlier ones on its comm), and meet their own requests.
 * Everything else (user and non-commutative ops, MINLOC/MAXLOC, derived
 * types, 64 KiB or more) keeps the relay or SMPI's own, as before. */
#define DONE_TAG (INT_MAX - 2)
#define STEPS_MAX 34 /* fold, 31 exchanges (p < 2^31), unfold; a barrier 31 */
#define BARRIER_TAG(k) (INT_MAX - 3 - (k))
#define ALLREDUCE_TAG(k) (INT_MAX - 3 - STEPS_MAX - (k))

typedef enum { SCHED_BARRIER, SCHED_ALLREDUCE } sched_kind;

/* After a step's receive, the partial result acc and what came in: */
typedef enum {
    KEEP,     /* nothing (a barrier) */
    IN_OP,    /* acc = in op acc (in: the lower ranks') */
    OP_IN,    /* acc = acc op in (in: the higher ranks') */
    TAKE_IN   /* acc = in (the unfold: the result) */
} step_action;

typedef struct {
    int to, from;         /* ranks, or -1: no send / no receive in this step */
    step_action action;
} sched_step;

typedef struct schedule {
    MPI_Comm comm;
    sched_kind kind;
    int nsteps;
    int step;             /* the current step (nsteps: all done) */
    int sent;             /* the current step's send is posted */
    int done;             /* the caller's request is released (DONE sent) */
    sched_step steps[STEPS_MAX];
    MPI_Request recvs[STEPS_MAX]; /* posted at the start */
    MPI_Request sends[STEPS_MAX];
    MPI_Datatype type;
    MPI_Op op;
    int count;
    size_t bytes;         /* of one vector (0: a barrier) */
    char *acc;            /* the partial result, then nsteps incoming and
                             nsteps outgoing vectors */
    void *recvbuf;
    struct schedule *next;
} schedule;

/* This process's schedules in start order, kept until their sends are
 * complete (the others may still be receiving them). */
static schedule *schedules;

static char *sched_in(schedule *s, int k)
{
    return s->acc + (size_t)(1 + k) * s->bytes;
}

static char *sched_out(schedule *s, int k)
{
    return s->acc + (size_t)(1 + s->nsteps + k) * s->bytes;
}

static int sched_tag(const schedule *s, int k)
{
    return s->kind == SCHED_BARRIER ? BARRIER_TAG(k) : ALLREDUCE_TAG(k);
}

/* The steps of rank of p (above). */
static int barrier_steps(int rank, int p, sched_step *steps)
{
    int n = 0;
    for (long long d = 1; d < p; d *= 2, n++)
        steps[n] = (sched_step){(int)((rank + d) % p), (int)((rank - d % p + p) % p), KEEP};
    return n;
}

static int allreduce_steps(int rank, int p, sched_step *steps)
{
    int q = 1, rem, n = 0, me;
    while (q <= p / 2)
        q *= 2;
    rem = p - q;
    if (rem > 0) { /* fold: even 2i gives its vector to 2i + 1 */
        steps[n++] = rank >= 2 * rem ? (sched_step){-1, -1, KEEP}
                     : rank % 2 == 0 ? (sched_step){rank + 1, -1, KEEP}
                                     : (sched_step){-1, rank - 1, IN_OP};
    }
    me = rank < 2 * rem ? (rank % 2 ? rank / 2 : -1) : rank - rem; /* new rank, -1: folded */
    for (int d = 1; d < q; d *= 2) {
        int peer = me ^ d, real = peer < rem ? 2 * peer + 1 : peer + rem;
        steps[n++] = me < 0 ? (sched_step){-1, -1, KEEP}
                            : (sched_step){real, real, peer < me ? IN_OP : OP_IN};
    }
    if (rem > 0) { /* unfold: odd 2i + 1 gives 2i the result */
        steps[n++] = rank >= 2 * rem ? (sched_step){-1, -1, KEEP}
                     : rank % 2 == 0 ? (sched_step){-1, rank + 1, TAKE_IN}
                                     : (sched_step){rank - 1, -1, KEEP};
    }
    return n;
}

/* Has every schedule before s of its kind on its comm posted its send of
 * step k?  (They have the same steps.) */
static int earlier_sent(const schedule *s, int k)
{
    for (const schedule *e = schedules; e != s; e = e->next)
        if (e->comm == s->comm && e->kind == s->kind && e->step < e->nsteps &&
            (e->step < k || (e->step == k && !e->sent)))
            return 0;
    return 1;
}

static int earlier_done(const schedule *s)
{
    for (const schedule *e = schedules; e != s; e = e->next)
        if (e->comm == s->comm && !e->done)
            return 0;
    return 1;
}

/* Takes s as many steps as its receives allow, then releases the caller's
 * request if the earlier ones on its comm are released. */
static int sched_advance(schedule *s)
{
    int err = MPI_SUCCESS, rank, flag;
    while (s->step < s->nsteps) {
        const sched_step *st = &s->steps[s->step];
        int k = s->step;
        if (!s->sent && st->to >= 0) {
            if (!earlier_sent(s, k))
                return MPI_SUCCESS;
            if (s->bytes)
                memcpy(sched_out(s, k), s->acc, s->bytes);
            if ((err = PMPI_Isend(s->bytes ? sched_out(s, k) : NULL, s->count,
                                  s->bytes ? s->type : MPI_BYTE, st->to, sched_tag(s, k), s->comm,
                                  &s->sends[k])) != MPI_SUCCESS)
                return err;
        }
        s->sent = 1;
        if (st->from >= 0) {
            if (s->recvs[k] != MPI_REQUEST_NULL) {
                if ((err = PMPI_Test(&s->recvs[k], &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS)
                    return err;
                if (!flag)
                    return MPI_SUCCESS;
            }
            if (st->action == IN_OP)
                err = PMPI_Reduce_local(sched_in(s, k), s->acc, s->count, s->type, s->op);
            else if (st->action == OP_IN) {
                if ((err = PMPI_Reduce_local(s->acc, sched_in(s, k), s->count, s->type, s->op)) ==
                    MPI_SUCCESS)
                    memcpy(s->acc, sched_in(s, k), s->bytes);
            } else if (st->action == TAKE_IN)
                memcpy(s->acc, sched_in(s, k), s->bytes);
            if (err != MPI_SUCCESS)
                return err;
        }
        s->step++;
        s->sent = 0;
    }
    if (!s->done && earlier_done(s)) {
        MPI_Request r;
        if (s->bytes)
            memcpy(s->recvbuf, s->acc, s->bytes);
        if ((err = MPI_Comm_rank(s->comm, &rank)) != MPI_SUCCESS ||
            (err = PMPI_Isend(NULL, 0, MPI_BYTE, rank, DONE_TAG, s->comm, &r)) != MPI_SUCCESS ||
            (err = loose_keep(&r)) != MPI_SUCCESS)
            return err;
        s->done = 1;
    }
    return MPI_SUCCESS;
}

static void sched_free(schedule *s)
{
    free(s->acc);
    free(s);
}

/* Advances every schedule (earliest first: an earlier one may let a later
 * one send or finish) and frees those done whose sends are complete.
 * (An error leaves the schedule where it is: nothing better here.) */
static void scheds_progress(int block)
{
    for (schedule *s = schedules; s != NULL; s = s->next)
        sched_advance(s);
    for (schedule **at = &schedules; *at != NULL;) {
        schedule *s = *at;
        int all = 0;
        if (s->done) {
            if (block)
                all = PMPI_Waitall(s->nsteps, s->sends, MPI_STATUSES_IGNORE) == MPI_SUCCESS;
            else if (PMPI_Testall(s->nsteps, s->sends, &all, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
                all = 0;
        }
        if (!all) {
            at = &s->next;
            continue;
        }
        *at = s->next;
        sched_free(s);
    }
}

/* Starts the schedule of kind on comm (an allreduce: count elements of
 * type, which sched_fits accepted) and returns its request. */
static int sched_start(sched_kind kind, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype type, MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    schedule *s;
    int rank, p, size = 0, err;
    if ((err = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS ||
        (err = MPI_Comm_size(comm, &p)) != MPI_SUCCESS ||
        (kind == SCHED_ALLREDUCE && (err = PMPI_Type_size(type, &size)) != MPI_SUCCESS))
        return err;
    if ((s = calloc(1, sizeof *s)) == NULL)
        return MPI_ERR_NO_MEM;
    s->comm = comm;
    s->kind = kind;
    s->nsteps = kind == SCHED_BARRIER ? barrier_steps(rank, p, s->steps)
                                      : allreduce_steps(rank, p, s->steps);
    s->type = type;
    s->op = op;
    s->count = kind == SCHED_BARRIER ? 0 : count;
    s->bytes = (size_t)size * (size_t)s->count;
    s->recvbuf = recvbuf;
    if ((s->acc = malloc(s->bytes * (size_t)(1 + 2 * s->nsteps) + 1)) == NULL) {
        free(s);
        return MPI_ERR_NO_MEM;
    }
    if (s->bytes)
        memcpy(s->acc, sendbuf == MPI_IN_PLACE ? recvbuf : sendbuf, s->bytes);
    for (int k = 0; k < STEPS_MAX; k++)
        s->recvs[k] = s->sends[k] = MPI_REQUEST_NULL;
    err = PMPI_Irecv(NULL, 0, MPI_BYTE, rank, DONE_TAG, comm, request);
    for (int k = 0; k < s->nsteps && err == MPI_SUCCESS; k++)
        if (s->steps[k].from >= 0)
            err = PMPI_Irecv(s->bytes ? sched_in(s, k) : NULL, s->count,
                             s->bytes ? type : MPI_BYTE, s->steps[k].from, sched_tag(s, k), comm,
                             &s->recvs[k]);
    if (err != MPI_SUCCESS) { /* (receives already posted stay: nothing better here) */
        sched_free(s);
        return err;
    }
    {
        schedule **end = &schedules; /* last: the list is in start order */
        while (*end != NULL)
            end = &(*end)->next;
        *end = s;
    }
    return sched_advance(s); /* the first sends; p = 1: done at once */
}

/* Can MPI_Iallreduce run as a schedule?  A predefined commutative op
 * (MINLOC and MAXLOC need pair types, left to the relay), a named type
 * without gaps (the vectors are copied as bytes), what relay_fits takes. */
static int sched_fits(MPI_Comm comm, int count, MPI_Datatype type, MPI_Op op)
{
    MPI_Aint lb = 0, extent = 0;
    int size = 0;
    int builtin = op == MPI_SUM || op == MPI_PROD || op == MPI_MAX || op == MPI_MIN ||
                  op == MPI_LAND || op == MPI_LOR || op == MPI_LXOR || op == MPI_BAND ||
                  op == MPI_BOR || op == MPI_BXOR;
    return builtin && relay_fits(comm, count, type) &&
           PMPI_Type_get_extent(type, &lb, &extent) == MPI_SUCCESS &&
           PMPI_Type_size(type, &size) == MPI_SUCCESS && lb == 0 && extent == size;
}

/* ---- progress of the collectives above ------------------------------------ */

/* The request slots whose completion lets this process's collective work
 * go on: rank 0's pending relays' arrivals, and the receive of the step
 * each schedule not yet done is at (the earliest of each communicator is
 * never held back by another, so there is one while any is pending).
 * Returns their number; *slots (if not NULL) gets them, to be freed. */
static int waitables(MPI_Request ***slots)
{
    int n = 0;
    for (int fill = 0; fill < 2; fill++) {
        if (fill) {
            if (slots == NULL || n == 0)
                return n;
            if ((*slots = malloc(sizeof **slots * (size_t)n)) == NULL)
                return -1;
            n = 0;
        }
        for (pending_relay *b = pending; b != NULL; b = b->next)
            for (int i = 0; i < b->n; i++)
                if (b->arrivals[i] != MPI_REQUEST_NULL) {
                    if (fill)
                        (*slots)[n] = &b->arrivals[i];
                    n++;
                }
        for (schedule *s = schedules; s != NULL; s = s->next)
            if (!s->done && s->step < s->nsteps && s->recvs[s->step] != MPI_REQUEST_NULL) {
                if (fill)
                    (*slots)[n] = &s->recvs[s->step];
                n++;
            }
    }
    return n;
}

static int work_pending(void)
{
    return waitables(NULL) > 0;
}

static void progress(void)
{
    relays_progress();
    scheds_progress(0);
}

/* MPI_Waitany over the caller's count requests and the waitables: *index
 * is the caller's request completed (its status in *status), or
 * MPI_UNDEFINED when one of the waitables completed (or none is
 * active). */
static int wait_union(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    MPI_Request **slots = NULL, *all;
    MPI_Status st;
    int n = waitables(&slots), i = MPI_UNDEFINED, err;
    *index = MPI_UNDEFINED;
    if (n < 0 || (all = malloc(sizeof *all * (size_t)(count + n) + 1)) == NULL) {
        free(slots);
        return MPI_ERR_NO_MEM;
    }
    memcpy(all, requests, sizeof *all * (size_t)count);
    for (int k = 0; k < n; k++)
        all[count + k] = *slots[k];
    err = PMPI_Waitany(count + n, all, &i, &st);
    memcpy(requests, all, sizeof *all * (size_t)count);
    for (int k = 0; k < n; k++)
        *slots[k] = all[count + k];
    free(all);
    free(slots);
    if (i != MPI_UNDEFINED && i < count) {
        *index = i;
        if (status != MPI_STATUS_IGNORE)
            *status = st;
    }
    return err;
}

/* MPI_Testany, MPI_Waitany: the progress above too (the mailbox waits for
 * its termination waves, MPI_Iallreduce, in MPI_Waitany beside its receives
 * and sends; without this every process waited for ever).  While work is
 * pending MPI_Waitany waits for any of the caller's requests or any
 * waitable (wait_union), and progresses.  Polling would not do: SMPI's
 * MPI_Testany and MPI_Testall let no simulated time pass, and the
 * simulation spun at one instant. */
int iso_smpi_Testany(int count, MPI_Request requests[], int *index, int *flag,
                     MPI_Status *status)
{
    progress();
    return PMPI_Testany(count, requests, index, flag, status);
}

int iso_smpi_Waitany(int count, MPI_Request requests[], int *index, MPI_Status *status)
{
    int active = 0;
    progress();
    for (int i = 0; i < count; i++)
        active |= requests[i] != MPI_REQUEST_NULL;
    while (active && work_pending()) {
        int i, err = wait_union(count, requests, &i, status);
        progress();
        if (i != MPI_UNDEFINED || err != MPI_SUCCESS) { /* one of the caller's */
            *index = i;
            return err;
        }
    }
    return PMPI_Waitany(count, requests, index, status);
}

int iso_smpi_Ibarrier(MPI_Comm comm, MPI_Request *request)
{
    int err;
    if (comm == MPI_COMM_NULL)
        return raise_on(comm, MPI_ERR_COMM);
    if ((err = sched_start(SCHED_BARRIER, NULL, NULL, 0, MPI_BYTE, MPI_OP_NULL, comm, request)) !=
        MPI_SUCCESS)
        return raise_on(comm, err);
    return MPI_SUCCESS;
}

/* A schedule (above) for a predefined commutative op on a few elements of
 * a plain named type, in place too; the relay for the other ops (rank 0
 * reduces in rank order, so any MPI_Op is right); SMPI's own beyond
 * (MPI_IN_PLACE with another op, derived types, 64 KiB or more). */
int iso_smpi_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype type,
                        MPI_Op op, MPI_Comm comm, MPI_Request *request)
{
    int err;
    if (sched_fits(comm, count, type, op)) {
        if ((err = sched_start(SCHED_ALLREDUCE, sendbuf, recvbuf, count, type, op, comm,
                               request)) != MPI_SUCCESS)
            return raise_on(comm, err);
        return MPI_SUCCESS;
    }
    if (sendbuf != MPI_IN_PLACE && op != MPI_OP_NULL && relay_fits(comm, count, type)) {
        if ((err = relay_start(RELAY_ALLREDUCE, sendbuf, recvbuf, count, NULL, 0, type, op, comm,
                               request)) != MPI_SUCCESS)
            return raise_on(comm, err);
        return MPI_SUCCESS;
    }
    return PMPI_Iallreduce(sendbuf, recvbuf, count, type, op, comm, request);
}

/* MPI_Ireduce_scatter_block: the allreduce of p blocks, block i to rank i
 * (rank 0 sends each its block); as MPI_Iallreduce, SMPI's own beyond. */
int iso_smpi_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                   MPI_Request *request)
{
    int p, err;
    if (comm != MPI_COMM_NULL && MPI_Comm_size(comm, &p) == MPI_SUCCESS &&
        sendbuf != MPI_IN_PLACE && op != MPI_OP_NULL && recvcount > 0 &&
        relay_fits(comm, (long long)recvcount * p, type)) {
        if ((err = relay_start(RELAY_REDUCE_SCATTER, sendbuf, recvbuf, recvcount * p, NULL,
                               recvcount, type, op, comm, request)) != MPI_SUCCESS)
            return raise_on(comm, err);
        return MPI_SUCCESS;
    }
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, type, op, comm, request);
}

/* MPI_Iallgatherv with the blocks one after the other in rank order
 * (displs the prefix sums of recvcounts, as the library lays them out),
 * one named type on both sides: rank 0 gathers and sends everyone the
 * whole; SMPI's own otherwise.  Each process decides from its own
 * displacements, which MPI lets differ between processes: a call that is
 * contiguous on some and not on others would mix the two and hang, which
 * the library's calls never are. */
int iso_smpi_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                         const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                         MPI_Comm comm, MPI_Request *request)
{
    int p, rank, err, ok;
    long long total = 0;
    ok = comm != MPI_COMM_NULL && sendbuf != MPI_IN_PLACE && sendtype == recvtype &&
         recvcounts != NULL && displs != NULL && MPI_Comm_size(comm, &p) == MPI_SUCCESS &&
         MPI_Comm_rank(comm, &rank) == MPI_SUCCESS && sendcount == recvcounts[rank];
    for (int i = 0; ok && i < p; i++) {
        ok = recvcounts[i] >= 0 && displs[i] == total;
        total += recvcounts[i];
    }
    if (ok && relay_fits(comm, total, recvtype)) {
        if ((err = relay_start(RELAY_ALLGATHER, sendbuf, recvbuf, (int)total, recvcounts, 0,
                               recvtype, MPI_OP_NULL, comm, request)) != MPI_SUCCESS)
            return raise_on(comm, err);
        return MPI_SUCCESS;
    }
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                            comm, request);
}

/* MPI_Iallgather: the same relay, every block recvcount. */
int iso_smpi_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request)
{
    int p, err, *counts;
    if (comm != MPI_COMM_NULL && sendbuf != MPI_IN_PLACE && sendtype == recvtype &&
        sendcount == recvcount && MPI_Comm_size(comm, &p) == MPI_SUCCESS &&
        relay_fits(comm, (long long)recvcount * p, recvtype)) {
        if ((counts = malloc(sizeof(int) * (size_t)p)) == NULL)
            return raise_on(comm, MPI_ERR_NO_MEM);
        for (int i = 0; i < p; i++)
            counts[i] = recvcount;
        err = relay_start(RELAY_ALLGATHER, sendbuf, recvbuf, recvcount * p, counts, 0, recvtype,
                          MPI_OP_NULL, comm, request);
        free(counts);
        if (err != MPI_SUCCESS)
            return raise_on(comm, err);
        return MPI_SUCCESS;
    }
    return PMPI_Iallgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                           request);
}

/* ---- one-sided ----------------------------------------------------------- */

/* MPI_Win_sync (SMPI 3.32: "not yet implemented", MPI_ERR_OTHER): it
 * synchronizes the private and public copies of a window, and SMPI's
 * windows are plain memory of the one simulator process (one copy), so a
 * compiler and processor memory barrier is all that is left to do. */
int iso_smpi_Win_sync(MPI_Win win)
{
    if (win == MPI_WIN_NULL)
        return MPI_ERR_WIN;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* ---- matched probes ------------------------------------------------------- */

/* What an MPI_Message stands for here: the probed message's envelope. */
typedef struct {
    int source, tag;
    MPI_Comm comm;
} compat_message;

/* The handle for the message st describes (MPI_MESSAGE_NO_PROC for one
 * from MPI_PROC_NULL). */
static int message_new(MPI_Comm comm, const MPI_Status *st, MPI_Message *message)
{
    compat_message *m;
    *message = MPI_MESSAGE_NO_PROC;
    if (st->MPI_SOURCE == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if ((m = malloc(sizeof *m)) == NULL)
        return raise_on(comm, MPI_ERR_NO_MEM);
    m->source = st->MPI_SOURCE;
    m->tag = st->MPI_TAG;
    m->comm = comm;
    *message = m;
    return MPI_SUCCESS;
}

int iso_smpi_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    MPI_Status st;
    int err;
    *message = MPI_MESSAGE_NULL;
    if ((err = MPI_Probe(source, tag, comm, &st)) != MPI_SUCCESS)
        return err;
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return message_new(comm, &st, message);
}

int iso_smpi_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                     MPI_Status *status)
{
    MPI_Status st;
    int err;
    *message = MPI_MESSAGE_NULL;
    if ((err = MPI_Iprobe(source, tag, comm, flag, &st)) != MPI_SUCCESS || !*flag)
        return err;
    if (status != MPI_STATUS_IGNORE)
        *status = st;
    return message_new(comm, &st, message);
}

/* MPI_MESSAGE_NO_PROC is MPI_MESSAGE_NULL (NULL) in SMPI: either receives
 * from MPI_PROC_NULL, as MPI_MESSAGE_NO_PROC must.  Mrecv is Imrecv and a
 * wait. */
int iso_smpi_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                   MPI_Status *status)
{
    MPI_Request req;
    int err = iso_smpi_Imrecv(buf, count, type, message, &req);
    return err != MPI_SUCCESS ? err : MPI_Wait(&req, status);
}

int iso_smpi_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                    MPI_Request *request)
{
    compat_message *m = *message;
    int err;
    *message = MPI_MESSAGE_NULL;
    if (m == NULL)
        return MPI_Irecv(buf, count, type, MPI_PROC_NULL, 0, MPI_COMM_SELF, request);
    err = MPI_Irecv(buf, count, type, m->source, m->tag, m->comm, request);
    free(m);
    return err;
}

/* ---- elements ------------------------------------------------------------- */

int iso_smpi_Get_elements_x(const MPI_Status *status, MPI_Datatype type, MPI_Count *elements)
{
    int ni, na, nd, combiner, count, err;
    if ((err = MPI_Type_get_envelope(type, &ni, &na, &nd, &combiner)) != MPI_SUCCESS)
        return err;
    if (combiner != MPI_COMBINER_NAMED) /* elements of a derived type: not emulated */
        return raise_on(MPI_COMM_WORLD, MPI_ERR_TYPE);
    if ((err = MPI_Get_count(status, type, &count)) != MPI_SUCCESS)
        return err;
    *elements = count;
    return MPI_SUCCESS;
}

int iso_smpi_Get_elements(const MPI_Status *status, MPI_Datatype type, int *elements)
{
    MPI_Count n;
    int err = iso_smpi_Get_elements_x(status, type, &n);
    if (err == MPI_SUCCESS)
        *elements = (int)n;
    return err;
}

/* ---- distributed graphs --------------------------------------------------- */

static int ranks_valid(int n, const int *ranks, int size)
{
    for (int k = 0; k < n; k++)
        if (ranks[k] < 0 || ranks[k] >= size)
            return 0;
    return 1;
}

/* The new communicator: a duplicate of comm_old with graph t attached
 * (given away: freed on failure). */
static int graph_attach(MPI_Comm comm_old, compat_topo *t, MPI_Comm *comm_dist_graph)
{
    compat_topo *old;
    int err;
    *comm_dist_graph = MPI_COMM_NULL;
    if ((err = topo_get(comm_old, &old)) != MPI_SUCCESS) { /* makes the keyval */
        topo_free(t);
        return err;
    }
    if ((err = MPI_Comm_dup(comm_old, comm_dist_graph)) != MPI_SUCCESS) {
        topo_free(t);
        return err;
    }
    /* the duplicate of a graph carries the old graph's copy: replaced */
    if ((err = MPI_Comm_set_attr(*comm_dist_graph, topo_keyval, t)) != MPI_SUCCESS) {
        topo_free(t);
        MPI_Comm_free(comm_dist_graph);
    }
    return err;
}

int iso_smpi_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                        const int sourceweights[], int outdegree,
                                        const int destinations[], const int destweights[],
                                        MPI_Info info, int reorder, MPI_Comm *comm_dist_graph)
{
    int size, weighted, err;
    compat_topo *t;
    (void)info;
    (void)reorder;
    if (comm_old == MPI_COMM_NULL)
        return raise_on(comm_old, MPI_ERR_COMM);
    if ((err = MPI_Comm_size(comm_old, &size)) != MPI_SUCCESS)
        return err;
    if (indegree < 0 || outdegree < 0 || (indegree > 0 && sources == NULL) ||
        (outdegree > 0 && destinations == NULL))
        return raise_on(comm_old, MPI_ERR_ARG);
    if (!ranks_valid(indegree, sources, size) || !ranks_valid(outdegree, destinations, size))
        return raise_on(comm_old, MPI_ERR_RANK);
    weighted = sourceweights != MPI_UNWEIGHTED && destweights != MPI_UNWEIGHTED;
    if (weighted && ((indegree > 0 && sourceweights == MPI_WEIGHTS_EMPTY) ||
                     (outdegree > 0 && destweights == MPI_WEIGHTS_EMPTY)))
        return raise_on(comm_old, MPI_ERR_ARG);
    if ((t = topo_new(indegree, outdegree, weighted)) == NULL)
        return raise_on(comm_old, MPI_ERR_NO_MEM);
    for (int k = 0; k < indegree; k++) {
        t->sources[k] = sources[k];
        t->sourceweights[k] = weighted ? sourceweights[k] : 1;
    }
    for (int k = 0; k < outdegree; k++) {
        t->dests[k] = destinations[k];
        t->destweights[k] = weighted ? destweights[k] : 1;
    }
    return graph_attach(comm_old, t, comm_dist_graph);
}

/* An edge as it travels to one of its ends: out (1, the destination, the
 * weight) to its source, in (0, the source, the weight) to its destination. */
enum { EDGE_INTS = 3 };

int iso_smpi_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                               const int destinations[], const int weights[], MPI_Info info,
                               int reorder, MPI_Comm *comm_dist_graph)
{
    int size, err, nedges = 0, here, weighted, indegree = 0, outdegree = 0;
    int *scount = NULL, *rcount, *sdispl, *rdispl, *sbuf = NULL, *rbuf = NULL;
    compat_topo *t = NULL;
    (void)info;
    (void)reorder;
    if (comm_old == MPI_COMM_NULL)
        return raise_on(comm_old, MPI_ERR_COMM);
    if ((err = MPI_Comm_size(comm_old, &size)) != MPI_SUCCESS)
        return err;
    if (n < 0 || (n > 0 && (sources == NULL || degrees == NULL)))
        return raise_on(comm_old, MPI_ERR_ARG);
    for (int i = 0; i < n; i++) {
        if (degrees[i] < 0)
            return raise_on(comm_old, MPI_ERR_ARG);
        nedges += degrees[i];
    }
    if (!ranks_valid(n, sources, size) || !ranks_valid(nedges, destinations, size))
        return raise_on(comm_old, MPI_ERR_RANK);
    /* weighted if any process gave weights (MPI: all or none do) */
    here = weights != MPI_UNWEIGHTED;
    if ((err = MPI_Allreduce(&here, &weighted, 1, MPI_INT, MPI_MAX, comm_old)) != MPI_SUCCESS)
        return err;
    if (here && nedges > 0 && weights == MPI_WEIGHTS_EMPTY)
        return raise_on(comm_old, MPI_ERR_ARG);
    if ((scount = calloc(4 * (size_t)size, sizeof(int))) == NULL ||
        (sbuf = malloc(sizeof(int) * (2 * (size_t)nedges * EDGE_INTS + 1))) == NULL) {
        err = raise_on(comm_old, MPI_ERR_NO_MEM);
        goto out;
    }
    rcount = scount + size;
    sdispl = rcount + size;
    rdispl = sdispl + size;
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            scount[sources[i]] += EDGE_INTS;
            scount[destinations[e]] += EDGE_INTS;
        }
    for (int r = 1; r < size; r++)
        sdispl[r] = sdispl[r - 1] + scount[r - 1];
    for (int i = 0, e = 0; i < n; i++)
        for (int j = 0; j < degrees[i]; j++, e++) {
            int s = sources[i], d = destinations[e], w = here ? weights[e] : 1;
            int *rec = sbuf + sdispl[s];
            rec[0] = 1, rec[1] = d, rec[2] = w;
            sdispl[s] += EDGE_INTS;
            rec = sbuf + sdispl[d];
            rec[0] = 0, rec[1] = s, rec[2] = w;
            sdispl[d] += EDGE_INTS;
        }
    for (int r = 0; r < size; r++) /* back to the starts */
        sdispl[r] -= scount[r];
    if ((err = MPI_Alltoall(scount, 1, MPI_INT, rcount, 1, MPI_INT, comm_old)) != MPI_SUCCESS)
        goto out;
    for (int r = 1; r < size; r++)
        rdispl[r] = rdispl[r - 1] + rcount[r - 1];
    if ((rbuf = malloc(sizeof(int) * ((size_t)rdispl[size - 1] + (size_t)rcount[size - 1] + 1))) ==
        NULL) {
        err = raise_on(comm_old, MPI_ERR_NO_MEM);
        goto out;
    }
    if ((err = MPI_Alltoallv(sbuf, scount, sdispl, MPI_INT, rbuf, rcount, rdispl, MPI_INT,
                             comm_old)) != MPI_SUCCESS)
        goto out;
    for (int k = 0; k < rdispl[size - 1] + rcount[size - 1]; k += EDGE_INTS)
        *(rbuf[k] ? &outdegree : &indegree) += 1;
    if ((t = topo_new(indegree, outdegree, weighted)) == NULL) {
        err = raise_on(comm_old, MPI_ERR_NO_MEM);
        goto out;
    }
    indegree = outdegree = 0;
    for (int k = 0; k < rdispl[size - 1] + rcount[size - 1]; k += EDGE_INTS) {
        if (rbuf[k]) {
            t->dests[outdegree] = rbuf[k + 1];
            t->destweights[outdegree++] = rbuf[k + 2];
        } else {
            t->sources[indegree] = rbuf[k + 1];
            t->sourceweights[indegree++] = rbuf[k + 2];
        }
    }
    err = graph_attach(comm_old, t, comm_dist_graph);
out:
    free(scount);
    free(sbuf);
    free(rbuf);
    return err;
}

int iso_smpi_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree,
                                        int *weighted)
{
    compat_topo *g;
    int err;
    if ((err = graph_required(comm, &g)) != MPI_SUCCESS)
        return err;
    *indegree = g->indegree;
    *outdegree = g->outdegree;
    *weighted = g->weighted;
    return MPI_SUCCESS;
}

int iso_smpi_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                  int sourceweights[], int maxoutdegree, int destinations[],
                                  int destweights[])
{
    compat_topo *g;
    int err;
    if ((err = graph_required(comm, &g)) != MPI_SUCCESS)
        return err;
    if (maxindegree < 0 || maxoutdegree < 0)
        return raise_on(comm, MPI_ERR_ARG);
    for (int k = 0; k < g->indegree && k < maxindegree; k++) {
        sources[k] = g->sources[k];
        if (g->weighted && sourceweights != MPI_UNWEIGHTED && sourceweights != MPI_WEIGHTS_EMPTY)
            sourceweights[k] = g->sourceweights[k];
    }
    for (int k = 0; k < g->outdegree && k < maxoutdegree; k++) {
        destinations[k] = g->dests[k];
        if (g->weighted && destweights != MPI_UNWEIGHTED && destweights != MPI_WEIGHTS_EMPTY)
            destweights[k] = g->destweights[k];
    }
    return MPI_SUCCESS;
}

/* ---- neighborhood collectives --------------------------------------------- */

/* One process's neighborhood for a collective: its lists, the tags of its
 * blocks, and the communicator of the traffic. */
typedef struct {
    int in, out;
    const int *sources, *dests;
    int *lists; /* Cartesian: sources = dests, 2 per dimension (MPI_Cart_shift) */
    MPI_Comm comm;
} hood;

/* The neighborhood of comm (graph or Cartesian; anything else is
 * MPI_ERR_TOPOLOGY).  The private duplicate is made at the first
 * collective: every process of comm calls it then. */
static int hood_get(MPI_Comm comm, hood *h)
{
    compat_topo *t;
    int cart, d, err;
    memset(h, 0, sizeof *h);
    if (comm == MPI_COMM_NULL)
        return raise_on(comm, MPI_ERR_COMM);
    if ((err = topo_get(comm, &t)) != MPI_SUCCESS)
        return err;
    if (t == NULL || !t->graph) {
        if ((err = is_cart(comm, &cart)) != MPI_SUCCESS)
            return raise_on(comm, err);
        if (!cart)
            return raise_on(comm, MPI_ERR_TOPOLOGY);
        if ((err = MPI_Cartdim_get(comm, &d)) != MPI_SUCCESS)
            return err;
        if ((h->lists = malloc(sizeof(int) * (2 * (size_t)d + 1))) == NULL)
            return raise_on(comm, MPI_ERR_NO_MEM);
        for (int j = 0; j < d; j++)
            if ((err = MPI_Cart_shift(comm, j, 1, &h->lists[2 * j], &h->lists[2 * j + 1])) !=
                MPI_SUCCESS) {
                free(h->lists);
                return err;
            }
        h->in = h->out = 2 * d;
        h->sources = h->dests = h->lists;
        if (t == NULL) {
            if ((t = calloc(1, sizeof *t)) == NULL) {
                free(h->lists);
                return raise_on(comm, MPI_ERR_NO_MEM);
            }
            t->coll = MPI_COMM_NULL;
            if ((err = MPI_Comm_set_attr(comm, topo_keyval, t)) != MPI_SUCCESS) {
                free(t);
                free(h->lists);
                return err;
            }
        }
    } else {
        h->in = t->indegree;
        h->out = t->outdegree;
        h->sources = t->sources;
        h->dests = t->dests;
    }
    if (t->coll == MPI_COMM_NULL && (err = MPI_Comm_dup(comm, &t->coll)) != MPI_SUCCESS) {
        free(h->lists);
        return err;
    }
    h->comm = t->coll;
    return MPI_SUCCESS;
}

/* Tags: on a graph all blocks travel with tag 0 (edges matched in order).
 * On a Cartesian communicator block k goes out in direction k (dimension
 * k/2, -1 for even k) and arrives from the opposite direction, as block
 * k^1 of the receiver: sent with tag k, it is received with tag k^1. */
static int send_tag(const hood *h, int k)
{
    return h->lists ? k : 0;
}

static int recv_tag(const hood *h, int k)
{
    return h->lists ? k ^ 1 : 0;
}

/* What one block of a neighborhood exchange is. */
typedef struct {
    const char *buf;
    int count;
    MPI_Datatype type;
} block;

typedef void (*block_fn)(const void *args, int k, block *b);

/* Receives block k from source k and sends block k to destination k, all
 * at once, then waits for all. */
static int hood_exchange(MPI_Comm comm, block_fn sendblock, block_fn recvblock, const void *args)
{
    hood h;
    MPI_Request *reqs;
    int err, n = 0;
    if ((err = hood_get(comm, &h)) != MPI_SUCCESS)
        return err;
    if ((reqs = malloc(sizeof(MPI_Request) * ((size_t)h.in + (size_t)h.out + 1))) == NULL) {
        free(h.lists);
        return raise_on(comm, MPI_ERR_NO_MEM);
    }
    for (int k = 0; k < h.in && err == MPI_SUCCESS; k++) {
        block b;
        recvblock(args, k, &b);
        err = MPI_Irecv((void *)b.buf, b.count, b.type, h.sources[k], recv_tag(&h, k), h.comm,
                        &reqs[n++]);
    }
    for (int k = 0; k < h.out && err == MPI_SUCCESS; k++) {
        block b;
        sendblock(args, k, &b);
        err = MPI_Isend(b.buf, b.count, b.type, h.dests[k], send_tag(&h, k), h.comm, &reqs[n++]);
    }
    if (err != MPI_SUCCESS)
        n--; /* the failed call made no request */
    if (n > 0) {
        int werr = MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
        if (err == MPI_SUCCESS)
            err = werr;
    }
    free(reqs);
    free(h.lists);
    return err;
}

static MPI_Aint extent_of(MPI_Datatype type)
{
    MPI_Aint lb, extent = 0;
    MPI_Type_get_extent(type, &lb, &extent);
    return extent;
}

/* Blocks of a regular buffer (allgather, alltoall): count each, the k-th
 * at k * stride bytes. */
typedef struct {
    const char *sbuf;
    char *rbuf;
    int scount, rcount;
    MPI_Datatype stype, rtype;
    MPI_Aint sstride, rstride;
} regular;

static void regular_send(const void *args, int k, block *b)
{
    const regular *a = args;
    b->buf = a->sbuf + k * a->sstride, b->count = a->scount, b->type = a->stype;
}

static void regular_recv(const void *args, int k, block *b)
{
    const regular *a = args;
    b->buf = a->rbuf + k * a->rstride, b->count = a->rcount, b->type = a->rtype;
}

int iso_smpi_Neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    regular a = {sendbuf, recvbuf, sendcount, recvcount, sendtype, recvtype, 0,
                 recvcount * extent_of(recvtype)};
    return hood_exchange(comm, regular_send, regular_recv, &a);
}

int iso_smpi_Neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                               void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm)
{
    regular a = {sendbuf, recvbuf, sendcount, recvcount, sendtype, recvtype,
                 sendcount * extent_of(sendtype), recvcount * extent_of(recvtype)};
    return hood_exchange(comm, regular_send, regular_recv, &a);
}

/* Blocks with their own counts and displacements (alltoallv: in extents of
 * one type; alltoallw: in bytes, with a type each). */
typedef struct {
    const char *sbuf;
    char *rbuf;
    const int *scounts, *rcounts;
    const int *sdispls, *rdispls;          /* alltoallv */
    const MPI_Aint *sbytes, *rbytes;       /* alltoallw */
    MPI_Datatype stype, rtype;             /* alltoallv */
    const MPI_Datatype *stypes, *rtypes;   /* alltoallw */
    MPI_Aint sext, rext;
} varying;

static void varying_send(const void *args, int k, block *b)
{
    const varying *a = args;
    b->count = a->scounts[k];
    if (a->stypes) {
        b->buf = a->sbuf + a->sbytes[k], b->type = a->stypes[k];
    } else {
        b->buf = a->sbuf + a->sdispls[k] * a->sext, b->type = a->stype;
    }
}

static void varying_recv(const void *args, int k, block *b)
{
    const varying *a = args;
    b->count = a->rcounts[k];
    if (a->rtypes) {
        b->buf = a->rbuf + a->rbytes[k], b->type = a->rtypes[k];
    } else {
        b->buf = a->rbuf + a->rdispls[k] * a->rext, b->type = a->rtype;
    }
}

int iso_smpi_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[], const int sdispls[],
                                MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                                const int rdispls[], MPI_Datatype recvtype, MPI_Comm comm)
{
    varying a = {.sbuf = sendbuf,
                 .rbuf = recvbuf,
                 .scounts = sendcounts,
                 .rcounts = recvcounts,
                 .sdispls = sdispls,
                 .rdispls = rdispls,
                 .stype = sendtype,
                 .rtype = recvtype,
                 .sext = extent_of(sendtype),
                 .rext = extent_of(recvtype)};
    return hood_exchange(comm, varying_send, varying_recv, &a);
}

int iso_smpi_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                const MPI_Datatype recvtypes[], MPI_Comm comm)
{
    varying a = {.sbuf = sendbuf,
                 .rbuf = recvbuf,
                 .scounts = sendcounts,
                 .rcounts = recvcounts,
                 .sbytes = sdispls,
                 .rbytes = rdispls,
                 .stypes = sendtypes,
                 .rtypes = recvtypes};
    return hood_exchange(comm, varying_send, varying_recv, &a);
}

/* ---- added error classes and codes ---------------------------------------- */

/* This process's added classes and codes: code FIRST_ADDED + k is added[k]
 * (a class is its own class). */
enum { FIRST_ADDED = MPI_ERR_LASTCODE + 1 };
typedef struct {
    int errorclass;
    char text[MPI_MAX_ERROR_STRING];
} added_code;
static added_code *added;
static int nadded, added_cap;

static added_code *added_find(int code)
{
    return code >= FIRST_ADDED && code < FIRST_ADDED + nadded ? &added[code - FIRST_ADDED] : NULL;
}

/* A new code of class errorclass (-1: a new class, its own). */
static int added_new(int errorclass, int *code)
{
    if (nadded == added_cap) {
        int cap = added_cap ? 2 * added_cap : 64;
        added_code *a = realloc(added, sizeof *a * (size_t)cap);
        if (a == NULL)
            return MPI_ERR_NO_MEM;
        added = a;
        added_cap = cap;
    }
    *code = FIRST_ADDED + nadded;
    added[nadded].errorclass = errorclass < 0 ? *code : errorclass;
    added[nadded].text[0] = '\0';
    nadded++;
    return MPI_SUCCESS;
}

/* MPI_LASTUSEDCODE: the last added code once there is one (SMPI's
 * attribute stays at MPI_ERR_LASTCODE); the others are SMPI's. */
static int last_used_code;

int iso_smpi_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag)
{
    if (keyval == MPI_LASTUSEDCODE && nadded > 0 && comm != MPI_COMM_NULL) {
        last_used_code = FIRST_ADDED + nadded - 1;
        *(int **)value = &last_used_code;
        *flag = 1;
        return MPI_SUCCESS;
    }
    return PMPI_Comm_get_attr(comm, keyval, value, flag);
}

int iso_smpi_Add_error_class(int *errorclass)
{
    return added_new(-1, errorclass);
}

int iso_smpi_Add_error_code(int errorclass, int *errorcode)
{
    const added_code *c = added_find(errorclass);
    if (c == NULL || c->errorclass != errorclass) /* only added classes take codes */
        return MPI_ERR_ARG;
    return added_new(errorclass, errorcode);
}

int iso_smpi_Add_error_string(int errorcode, const char *string)
{
    added_code *c = added_find(errorcode);
    if (c == NULL) /* MPI's own codes keep their strings */
        return MPI_ERR_ARG;
    snprintf(c->text, sizeof c->text, "%s", string);
    return MPI_SUCCESS;
}

int iso_smpi_Error_class(int errorcode, int *errorclass)
{
    const added_code *c = added_find(errorcode);
    if (c == NULL) /* (MPI_Error_class is this function: smpi.h) */
        return PMPI_Error_class(errorcode, errorclass);
    *errorclass = c->errorclass;
    return MPI_SUCCESS;
}

int iso_smpi_Error_string(int errorcode, char *string, int *resultlen)
{
    const added_code *c = added_find(errorcode);
    if (c == NULL)
        return PMPI_Error_string(errorcode, string, resultlen);
    *resultlen = snprintf(string, MPI_MAX_ERROR_STRING, "%s", c->text);
    return MPI_SUCCESS;
}

/* ---- calling a communicator's error handler -------------------------------- */

int iso_smpi_Comm_call_errhandler(MPI_Comm comm, int errorcode)
{
    MPI_Errhandler h;
    int returns, fatal, err = MPI_Comm_get_errhandler(comm, &h);
    if (err != MPI_SUCCESS)
        return err;
    returns = h == MPI_ERRORS_RETURN;
    fatal = h == MPI_ERRORS_ARE_FATAL;
    MPI_Errhandler_free(&h); /* the reference MPI_Comm_get_errhandler made */
    if (returns)
        return MPI_SUCCESS;
    if (fatal) {
        char text[MPI_MAX_ERROR_STRING];
        int len = 0, rank = -1;
        iso_smpi_Error_string(errorcode, text, &len);
        MPI_Comm_rank(MPI_COMM_WORLD, &rank);
        fprintf(stderr, "rank %d: fatal MPI error %d: %s\n", rank, errorcode, text);
        return MPI_Abort(comm, errorcode);
    }
    return PMPI_Comm_call_errhandler(comm, errorcode);
}

/* ---- MPI_Finalize ----------------------------------------------------------
 * MPI_Finalize deletes MPI_COMM_SELF's attributes first, while MPI is still
 * whole, so that their delete callbacks may call MPI (the library's
 * finalizers run from one, core/finalize.c).  SMPI 3.32 deletes them after
 * it has marked the process finalized: every MPI call in a callback then
 * fails ("MPI_Init was not called"), fatally.  So the keyvals set on
 * MPI_COMM_SELF are recorded, and their attributes deleted here, the last
 * set first, before SMPI's MPI_Finalize. */
#define SELF_KEYVALS_MAX 64
static int self_keyvals[SELF_KEYVALS_MAX];
static int nself_keyvals;

int iso_smpi_Comm_set_attr(MPI_Comm comm, int keyval, void *value)
{
    int err = PMPI_Comm_set_attr(comm, keyval, value), known = 0;
    if (err != MPI_SUCCESS || comm != MPI_COMM_SELF)
        return err;
    for (int i = 0; i < nself_keyvals; i++)
        known |= self_keyvals[i] == keyval;
    if (!known && nself_keyvals < SELF_KEYVALS_MAX)
        self_keyvals[nself_keyvals++] = keyval;
    return err;
}

int iso_smpi_Finalize(void)
{
    relays_drain(1);
    scheds_progress(1);
    loose_drain(1);
    free(loose);
    while (nself_keyvals > 0) {
        int keyval = self_keyvals[--nself_keyvals], flag = 0;
        void *value;
        if (PMPI_Comm_get_attr(MPI_COMM_SELF, keyval, &value, &flag) == MPI_SUCCESS && flag)
            PMPI_Comm_delete_attr(MPI_COMM_SELF, keyval);
    }
    return PMPI_Finalize();
}
