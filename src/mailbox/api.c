/* The mailbox's public functions (include/isocoll.h; DESIGN.md, "Mailbox"):
 * options (iso_route, iso_vpt_dims, iso_vpt_n, iso_locality), argument checks, the
 * registry of live mailboxes that turns a use after free into an error,
 * create and free. */
#include "mailbox/mailbox.h"
#include <stdlib.h>
#include <string.h>

/* ---- live mailboxes ----------------------------------------------------------
 * A handle is checked against the mailboxes that exist, so a freed one (or
 * garbage) is an error, not a read of freed memory. */
static struct iso_mailbox_s *live;

static void live_add(struct iso_mailbox_s *mb)
{
    iso__lock();
    mb->next_live = live;
    live = mb;
    iso__unlock();
}

static void live_remove(struct iso_mailbox_s *mb)
{
    iso__lock();
    for (struct iso_mailbox_s **q = &live; *q; q = &(*q)->next_live)
        if (*q == mb) {
            *q = mb->next_live;
            break;
        }
    iso__unlock();
}

/* MPI_SUCCESS if mb is a live mailbox; with top_level, also not called
 * from one of its callbacks.  *errcomm: where to raise an error (the
 * user's communicator of a live mailbox, else MPI_COMM_NULL: world's). */
static int live_check(const struct iso_mailbox_s *mb, int top_level, MPI_Comm *errcomm)
{
    int found = 0;
    *errcomm = MPI_COMM_NULL;
    if (mb == NULL)
        return iso__error_msg(ISO_ERR_ARG, "mb is NULL (a freed mailbox?)");
    iso__lock();
    for (const struct iso_mailbox_s *q = live; q && !found; q = q->next_live)
        found = q == mb;
    iso__unlock();
    if (!found)
        return iso__error_msg(ISO_ERR_ARG, "mb is not a mailbox (freed already?)");
    *errcomm = mb->user;
    if (top_level && mb->busy)
        return iso__error_msg(ISO_ERR_ARG, "called from a receive callback (callbacks may "
                                           "only send and bcast)");
    return MPI_SUCCESS;
}

/* ---- options ------------------------------------------------------------------ */
typedef struct {
    const char *name;
} routing_entry;
static const routing_entry routing_entries[] = {{"none"}, {"nl"}, {"nr"}, {"nlnr"}, {"vpt"}};
static const iso_table routing_table = ISO_TABLE(routing_entries);

typedef struct {
    int routing; /* iso_mb_routing or ISO_MB_AUTO */
    int p;
    iso_vpt_opts vpt;
    int verbose;
} options_t;

static int set_route(void *ctx, const char *key, const char *value, const char *where)
{
    options_t *o = ctx;
    int k = iso__table_find(&routing_table, value);
    (void)key;
    if (k == -2) {
        char names[128];
        iso__table_names(&routing_table, names, sizeof names);
        return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" (%s)", where, value, names);
    }
    o->routing = k == ISO_AUTO ? ISO_MB_AUTO : k;
    return MPI_SUCCESS;
}

static int set_vpt(void *ctx, const char *key, const char *value, const char *where)
{
    options_t *o = ctx;
    return iso__vpt_option(&o->vpt, o->p, key, value, where);
}

static int set_verbose(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__option_bool(where, value, &((options_t *)ctx)->verbose);
}

static const iso_option_key mailbox_keys[] = {{"iso_route", set_route},
                                              {"iso_vpt_dims", set_vpt},
                                              {"iso_vpt_n", set_vpt},
                                              {"iso_locality", set_vpt},
                                              {"verbose", set_verbose}};

/* The environment (ISO_ROUTE, ISO_VPT_DIMS, ISO_VPT_N, ISO_LOCALITY,
 * ISO_VERBOSE), then info, which wins.  iso_locality goes through the VPT's
 * reader into o->vpt.level, as for the SDDE and the graph routings. */
static int options_get(MPI_Info info, int p, options_t *o)
{
    static const iso_env_option env[] = {{"ISO_ROUTE", "iso_route"},
                                         {"ISO_VPT_DIMS", "iso_vpt_dims"},
                                         {"ISO_VPT_N", "iso_vpt_n"},
                                         {"ISO_LOCALITY", "iso_locality"},
                                         {"ISO_VERBOSE", "verbose"}};
    iso_options r = {mailbox_keys, (int)(sizeof mailbox_keys / sizeof mailbox_keys[0]),
                     "on a mailbox", o, NULL};
    int err;
    memset(o, 0, sizeof *o);
    o->routing = ISO_MB_AUTO;
    o->p = p;
    err = iso__options_env(&r, env, sizeof env / sizeof env[0]);
    if (!err)
        err = iso__options_info(&r, info);
    return err;
}

/* auto: none where every message is local or every process is its own
 * node (no hop can coalesce anything), else nlnr, which needs one remote
 * channel per pair of nodes. */
static iso_mb_routing routing_auto(const iso_locality *l)
{
    return l->nnodes == 1 || l->nnodes == l->size ? ISO_MB_NONE : ISO_MB_NLNR;
}

/* ---- create and free ------------------------------------------------------------ */

static void mailbox_release(struct iso_mailbox_s *m)
{
    if (m == NULL)
        return;
    iso__mb_buffers_free(m);
    for (int i = 0; i < m->nslots; i++)
        free(m->recv_buf[i]);
    for (int l = 1; l < ISO_MB_MAXLEVELS; l++)
        if (m->lcomm[l] != MPI_COMM_NULL)
            MPI_Comm_free(&m->lcomm[l]);
    if (m->waves != MPI_COMM_NULL && m->waves != m->comm)
        MPI_Comm_free(&m->waves);
    if (m->comm != MPI_COMM_NULL)
        MPI_Comm_free(&m->comm);
    free(m);
}

/* What each process can check alone (before the
 * agreement, so that a failure is everyone's). */
static int setup_local(struct iso_mailbox_s *m, size_t capacity, Iso_mailbox_recv_fn recv,
                       Iso_mailbox *mb, MPI_Info info, options_t *o)
{
    int err;
    if (mb == NULL)
        return iso__error_msg(ISO_ERR_ARG, "mb is NULL");
    if (recv == NULL)
        return iso__error_msg(ISO_ERR_ARG, "recv is NULL");
    if (capacity < 1 || capacity > ISO_MB_MAX_CAPACITY)
        return iso__error_msg(ISO_ERR_ARG, "capacity_bytes = %zu (1 .. %zu)", capacity,
                              ISO_MB_MAX_CAPACITY);
    if ((err = options_get(info, m->p, o)) != MPI_SUCCESS)
        return err;
    m->capacity = capacity;
    m->bufmax = ISO_MB_PAD(capacity) + ISO_MB_RECORD(capacity);
    return MPI_SUCCESS;
}

/* The buffers for the levels that the routing may need (vpt: n; auto:
 * nlnr's, create drops what the routing chosen does not use). */
static int setup_buffers(struct iso_mailbox_s *m, const options_t *o, int n)
{
    m->levels = o->routing == ISO_MB_NONE                            ? 1
                : o->routing == ISO_MB_NL || o->routing == ISO_MB_NR ? 2
                : o->routing == ISO_MB_VPT                           ? n
                                                                     : 3;
    m->nslots = m->levels * ISO_MB_NRECV;
    m->queue = calloc((size_t)m->levels * (size_t)m->p, sizeof *m->queue);
    m->filled = malloc(sizeof(int) * (size_t)m->levels * (size_t)m->p);
    if (m->queue == NULL || m->filled == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < m->nslots; i++)
        if ((m->recv_buf[i] = malloc(m->bufmax)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
    return MPI_SUCCESS;
}

static int create(MPI_Comm comm, size_t capacity, Iso_mailbox_recv_fn recv, void *ctx,
                  MPI_Info info, Iso_mailbox *mb)
{
    struct iso_mailbox_s *m = calloc(1, sizeof *m);
    iso_agreement ag = {0};
    options_t o;
    int err, n = 1, dims[ISO_VPT_MAXDIMS] = {0};
    long long shape = 0;
    if (m == NULL)
        return iso__error(ISO_ERR_NOMEM); /* not collective: nothing can be shared */
    m->comm = m->waves = MPI_COMM_NULL;
    m->wave = MPI_REQUEST_NULL;
    for (int l = 0; l < ISO_MB_MAXLEVELS; l++)
        m->lcomm[l] = MPI_COMM_NULL;
    for (int i = 0; i < ISO_MB_MAXLEVELS * ISO_MB_NRECV; i++)
        m->recv_req[i] = MPI_REQUEST_NULL;
    m->user = comm;
    m->recv = recv;
    m->ctx = ctx;
    if ((err = MPI_Comm_size(comm, &m->p)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(comm, &m->me)) != MPI_SUCCESS ||
        (err = MPI_Comm_dup(comm, &m->comm)) != MPI_SUCCESS ||
        (err = MPI_Comm_set_errhandler(m->comm, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
        mailbox_release(m);
        return err;
    }
    m->waves = m->comm;
#ifdef ISO_SMPI_COMPAT
    /* SMPI: src/compat's MPI_Iallreduce is point-to-point messages on its
     * communicator (tags INT_MAX and INT_MAX - 1), which the buffers'
     * MPI_ANY_TAG receives on comm would take: every process then waited
     * for ever in the first wave.  An MPI's own nonblocking collectives
     * never match point-to-point receives: one communicator serves there. */
    if ((err = MPI_Comm_dup(comm, &m->waves)) != MPI_SUCCESS ||
        (err = MPI_Comm_set_errhandler(m->waves, MPI_ERRORS_RETURN)) != MPI_SUCCESS) {
        mailbox_release(m);
        return err;
    }
#endif
    err = setup_local(m, capacity, recv, mb, info, &o);
    if (!err && (o.routing == ISO_MB_VPT || o.routing == ISO_MB_AUTO))
        err = iso__vpt_shape(&o.vpt, m->p, &n, dims);
    if (!err)
        err = setup_buffers(m, &o, n);
    for (int d = 0; d < n; d++)
        shape = shape * 1000003 + dims[d];
    ag.nsame = 4;
    ag.same[0] = (long long)m->capacity;
    ag.same[1] = err ? 0 : o.routing;
    ag.same[2] = err ? 0 : shape;
    ag.same[3] = err ? 0 : o.vpt.level; /* a level not cached everywhere would hang */
    err = iso__agree(m->comm, err, &ag);
    if (!err && ag.differs >= 0)
        err = iso__error_msg(ISO_ERR_ARG, "the processes passed different %s",
                             ag.differs == 0   ? "capacity_bytes"
                             : ag.differs == 1 ? "routings (iso_route)"
                             : ag.differs == 2 ? "VPT shapes (iso_vpt_dims, iso_vpt_n)"
                                               : "locality levels (iso_locality)");
    if (!err) /* collective over comm, and its errors are everyone's */
        err = iso__locality_at(comm, o.vpt.level, &m->routes.loc);
    if (err) {
        mailbox_release(m);
        return err;
    }
    m->routes.routing = o.routing == ISO_MB_AUTO ? routing_auto(m->routes.loc) : (iso_mb_routing)o.routing;
    m->routes.me = m->me;
    m->routes.p = m->p;
    m->routes.n = n;
    memcpy(m->routes.dims, dims, sizeof dims);
    /* the routing's levels (at most those allocated for), one
     * communicator each: a receive takes one level only (engine.c) */
    m->levels = iso__mb_levels(&m->routes);
    m->lcomm[0] = m->comm;
    for (int l = 1; l < m->levels && !err; l++)
        if ((err = MPI_Comm_dup(m->comm, &m->lcomm[l])) == MPI_SUCCESS)
            err = MPI_Comm_set_errhandler(m->lcomm[l], MPI_ERRORS_RETURN);
    for (int i = m->levels * ISO_MB_NRECV; i < m->nslots; i++) {
        free(m->recv_buf[i]);
        m->recv_buf[i] = NULL;
    }
    m->nslots = m->levels * ISO_MB_NRECV;
    if (err) {
        mailbox_release(m);
        return err;
    }
    if (o.verbose)
        iso__report_choice(comm, "Iso_mailbox_create", o.routing == ISO_MB_AUTO,
                           iso__mb_routing_names[m->routes.routing], " on %d regions (%s)",
                           m->routes.loc->nnodes, o.vpt.level == ISO_LEVEL_NODE ? "nodes"
                                                  : o.vpt.level == ISO_LEVEL_PACKAGE ? "packages"
                                                                                   : "NUMA domains");
    if ((err = iso__mb_recv_start(m)) != MPI_SUCCESS) {
        iso__mb_recv_cancel(m);
        mailbox_release(m);
        return err;
    }
    live_add(m);
    *mb = m;
    return MPI_SUCCESS;
}

int Iso_mailbox_create(MPI_Comm comm, size_t capacity_bytes, Iso_mailbox_recv_fn recv, void *ctx,
                       MPI_Info info, Iso_mailbox *mb)
{
    int inter = 0, err;
    if (mb != NULL)
        *mb = NULL;
    if (comm == MPI_COMM_NULL)
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "comm is MPI_COMM_NULL"));
    if ((err = MPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS)
        return iso__raise(comm, err);
    if (inter)
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "comm is an intercommunicator"));
    return iso__raise(comm, create(comm, capacity_bytes, recv, ctx, info, mb));
}

int Iso_mailbox_free(Iso_mailbox *mb)
{
    struct iso_mailbox_s *m;
    long long mine[3], sum[3];
    MPI_Comm errcomm;
    int err;
    if (mb == NULL)
        return iso__raise(MPI_COMM_NULL, iso__error_msg(ISO_ERR_ARG, "mb is NULL"));
    m = *mb;
    if ((err = live_check(m, 1, &errcomm)) != MPI_SUCCESS)
        return iso__raise(errcomm, err);
    /* pending: queued here, or sent and not received anywhere */
    mine[0] = (long long)(m->queued + m->local_bytes);
    mine[1] = m->sent;
    mine[2] = m->received;
    if ((err = MPI_Allreduce(mine, sum, 3, MPI_LONG_LONG, MPI_SUM, m->comm)) != MPI_SUCCESS)
        return iso__raise(m->user, err);
    if (sum[0] != 0 || sum[1] != sum[2])
        return iso__raise(m->user,
                          iso__error_msg(ISO_ERR_ARG, "messages are pending (%lld bytes queued, "
                                                      "%lld buffers in transit): call "
                                                      "Iso_mailbox_wait_empty first; the mailbox "
                                                      "is kept",
                                         sum[0], sum[1] - sum[2]));
    /* every send was received: they complete at once */
    if ((err = iso__mb_sends_complete(m)) == MPI_SUCCESS)
        err = iso__mb_recv_cancel(m);
    live_remove(m);
    mailbox_release(m);
    *mb = NULL;
    return err ? iso__raise(MPI_COMM_NULL, err) : MPI_SUCCESS;
}

/* ---- sending --------------------------------------------------------------------- */

/* The checks of a message (bytes and msg). */
static int message_check(const struct iso_mailbox_s *m, const void *msg, size_t bytes)
{
    if (msg == NULL && bytes > 0)
        return iso__error_msg(ISO_ERR_ARG, "msg is NULL with %zu bytes", bytes);
    if (bytes > m->capacity)
        return iso__error_msg(ISO_ERR_COUNT, "a message of %zu bytes is larger than the "
                                             "mailbox's capacity of %zu bytes (refused, not "
                                             "split: nothing was queued)", bytes, m->capacity);
    return MPI_SUCCESS;
}

/* After queuing at the top level: flow control and arrivals if something
 * was posted (a full buffer or queue) or more than capacity bytes are in
 * flight (callbacks post without waiting); cheap otherwise. */
static int after_queue(struct iso_mailbox_s *m, long long posted_before, int nlocal_before)
{
    if (m->busy || (m->stats.msgs == posted_before && m->nlocal == nlocal_before &&
                    m->inflight <= m->capacity))
        return MPI_SUCCESS;
    return iso__mb_exchange(m, 0);
}

int Iso_mailbox_send(Iso_mailbox mb, int dest, const void *msg, size_t bytes)
{
    long long before;
    MPI_Comm errcomm;
    int err, nlocal, hop;
    if ((err = live_check(mb, 0, &errcomm)) != MPI_SUCCESS)
        return iso__raise(errcomm, err);
    if (dest < 0 || dest >= mb->p)
        return iso__raise(mb->user, iso__error_msg(ISO_ERR_ARG, "dest = %d is not a rank of the "
                                                                "mailbox's communicator (size %d)",
                                                   dest, mb->p));
    if ((err = message_check(mb, msg, bytes)) != MPI_SUCCESS)
        return iso__raise(mb->user, err);
    before = mb->stats.msgs;
    nlocal = mb->nlocal;
    hop = dest == mb->me ? dest : iso__mb_next_hop(&mb->routes, mb->me, dest);
    err = iso__mb_enqueue(mb, hop, iso__mb_level(&mb->routes, hop, dest), mb->me, dest, msg,
                          bytes);
    if (!err)
        err = after_queue(mb, before, nlocal);
    return iso__raise(mb->user, err);
}

int Iso_mailbox_bcast(Iso_mailbox mb, const void *msg, size_t bytes)
{
    long long before;
    MPI_Comm errcomm;
    int err, nlocal;
    if ((err = live_check(mb, 0, &errcomm)) != MPI_SUCCESS)
        return iso__raise(errcomm, err);
    if ((err = message_check(mb, msg, bytes)) != MPI_SUCCESS)
        return iso__raise(mb->user, err);
    before = mb->stats.msgs;
    nlocal = mb->nlocal;
    mb->bc_src = mb->me;
    mb->bc_msg = msg;
    mb->bc_bytes = bytes;
    err = iso__mb_bcast_spread(&mb->routes, mb->me, mb->me, ISO_MB_BC_START, iso__mb_emit_bcast,
                               mb);
    if (!err)
        err = after_queue(mb, before, nlocal);
    return iso__raise(mb->user, err);
}

int Iso_mailbox_flush(Iso_mailbox mb)
{
    MPI_Comm errcomm;
    int err;
    if ((err = live_check(mb, 1, &errcomm)) != MPI_SUCCESS)
        return iso__raise(errcomm, err);
    return iso__raise(mb->user, iso__mb_exchange(mb, 1));
}

int Iso_mailbox_wait_empty(Iso_mailbox mb)
{
    MPI_Comm errcomm;
    int err;
    if ((err = live_check(mb, 1, &errcomm)) != MPI_SUCCESS)
        return iso__raise(errcomm, err);
    return iso__raise(mb->user, iso__mb_quiesce(mb));
}
