/* Store-and-forward over a virtual process topology T_n(k_1..k_n)
 * (Selvitopi & Aykanat, SC'19; DESIGN.md, "Virtual process topology") for
 * irregular exchanges: the alltoall forms on distributed graph
 * communicators (coll/graph_route.c) and Iso_*_crs (sparse/routed.c).
 *
 * The VPT is a communicator whose rank r is VPT rank r, used as the VPT's
 * private communicator (cached on the private communicator it is made
 * from); its shape is arithmetic (shape.c), no MPI topology.  A submessage
 * (one edge's block) travels in dimension order: at stage d it moves to the
 * process of its line whose coordinate d is its destination's (shape.c,
 * iso__vpt_hop), so a process sends at most k_d - 1 messages at stage d,
 * each one combined message holding every submessage for that neighbor.
 *
 * The plan is made once per request: at each stage every process sends its
 * line neighbors the headers (final destination, source, edge ordinal,
 * bytes) of the submessages it will send them -- the count exchange of the
 * stage -- and receives theirs, so it knows what arrives and where it goes
 * next.  The plan is one schedule (sched/) whose round d is stage d: PACK +
 * SEND_MSG per line neighbor it sends to, RECV_MSG per neighbor that sends
 * to it, and a DELIVER per submessage for this process in the round it
 * arrives (its own ones in round 0), into the slot of the k-th occurrence
 * of its source.  The executor runs it in pack mode (the message header
 * carries each submessage's byte size); a persistent request's Iso_start
 * moves only data: no header exchange, and buffers sized when the plan was
 * made, in one arena where messages whose lifetimes do not overlap share
 * memory (sched/arena.c). */
#include "route/route.h"
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define HDR_WORDS 4 /* a header: final destination, source, edge ordinal, bytes */

typedef struct {
    long long dest, src, ord, bytes; /* ranks of the graph communicator */
} item_hdr;

/* A submessage held by this process before a stage. */
typedef struct {
    item_hdr h;
    int vdest;       /* VPT rank of h.dest */
    iso_piece piece; /* where its data is: a user send block or an incoming entry */
} item;

static int vrank_of(const iso_vpt *v, int r)
{
    return v->vrank ? v->vrank[r] : r;
}

/* ---- the VPT communicators --------------------------------------------------- */

static int vpt_keyval = MPI_KEYVAL_INVALID;

static void vpts_free(iso_vpt *v)
{
    while (v) { /* iso__priv_release frees a communicator only before MPI_Finalize */
        iso_vpt *next = v->next;
        iso__priv_release(v->priv);
        free(v->vrank);
        free(v);
        v = next;
    }
}

/* The attribute holds the list through a holder set once: setting the
 * attribute again would run the delete callback on the list that a new
 * head links to. */
typedef struct {
    iso_vpt *head;
} vpt_list;

static int vpts_delete(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)extra;
    vpts_free(((vpt_list *)val)->head);
    free(val);
    return MPI_SUCCESS;
}

static void drop_world_vpts(void)
{
    iso__world_attr_delete(vpt_keyval);
}

/* The locality embedding (iso_vpt_locality=node; its regions are nodes,
 * or packages or NUMA domains with iso_locality): with g(r) the position
 * of rank r in the ranks grouped region by region (iso_locality.members), VPT
 * rank (g mod k_0) * stride_0 + g / k_0.  Consecutive members of a node
 * thus share every coordinate but the first, so stage 0 stays inside the
 * node wherever a node's members fill whole lines of dimension 0 (nodes of
 * a size that is a multiple of k_0, any placement of ranks).  Any node
 * sizes give a valid VPT (a bijection); lines that straddle nodes merely
 * leave the node at stage 0. */
static int embed(const iso_locality *loc, int n, const int dims[], int *vrank)
{
    int stride0 = iso__vpt_stride(n, dims, 0);
    for (int g = 0; g < loc->size; g++)
        vrank[loc->members[g]] = (g % dims[0]) * stride0 + g / dims[0];
    return MPI_SUCCESS;
}

int iso__vpt_get(MPI_Comm base, const iso_vpt_opts *o, int n, int dims[], iso_vpt **out)
{
    iso_vpt *v;
    vpt_list *list = NULL;
    const iso_locality *loc = NULL;
    MPI_Comm ordered = MPI_COMM_NULL;
    int flag = 0, rank, err = MPI_SUCCESS;
    *out = NULL;
    /* locality, balanced shape, nodes of one size s dividing p: the first
     * dimension is the node (k_0 = s), the others balanced over the nodes */
    if (o->locality && (err = iso__locality_at(base, o->level, &loc)) != MPI_SUCCESS)
        return err;
    if (loc && o->ndims == 0 && n >= 2 && loc->min_node_size == loc->max_node_size &&
        loc->nnodes > 1 && loc->min_node_size > 1) {
        dims[0] = loc->min_node_size;
        if ((err = iso__vpt_dims_balanced(loc->nnodes, n - 1, dims + 1)) != MPI_SUCCESS)
            return err;
    }
    iso__lock();
    if (vpt_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, vpts_delete, &vpt_keyval, NULL)) ==
            MPI_SUCCESS)
        err = iso__at_finalize(drop_world_vpts);
    iso__unlock();
    if (err != MPI_SUCCESS || (err = MPI_Comm_get_attr(base, vpt_keyval, &list, &flag)))
        return err;
    if (!flag) {
        if ((list = calloc(1, sizeof *list)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        if ((err = MPI_Comm_set_attr(base, vpt_keyval, list)) != MPI_SUCCESS) {
            free(list);
            return err;
        }
    }
    for (v = list->head; v; v = v->next)
        if (v->n == n && v->locality == iso__vpt_embedding(o) &&
            !memcmp(v->dims, dims, sizeof(int) * (size_t)n)) {
            *out = v;
            return MPI_SUCCESS;
        }
    if ((v = calloc(1, sizeof *v)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    v->n = n;
    v->locality = iso__vpt_embedding(o);
    memcpy(v->dims, dims, sizeof(int) * (size_t)n);
    if ((err = MPI_Comm_rank(base, &rank)) != MPI_SUCCESS)
        goto fn_fail;
    v->me = rank;
    /* one new communicator, the VPT's private one: a duplicate of base, or
     * with the embedding base split by key = VPT rank (nobody else holds
     * the split's result: no duplicate of it) */
    if (loc) {
        if ((v->vrank = malloc(sizeof(int) * (size_t)loc->size)) == NULL) {
            err = iso__error(ISO_ERR_NOMEM);
            goto fn_fail;
        }
        embed(loc, n, dims, v->vrank);
        v->me = v->vrank[rank];
        if ((err = MPI_Comm_split(base, 0, v->me, &ordered)) != MPI_SUCCESS ||
            (err = iso__priv_adopt(ordered, &v->priv)) != MPI_SUCCESS)
            goto fn_fail;
    } else if ((err = iso__priv_create(base, &v->priv)) != MPI_SUCCESS) {
        goto fn_fail;
    }
    v->next = list->head;
    list->head = v;
    *out = v;
    return MPI_SUCCESS;
fn_fail:
    if (ordered != MPI_COMM_NULL)
        MPI_Comm_free(&ordered);
    free(v->vrank);
    free(v);
    return err;
}

/* ---- the plan ---------------------------------------------------------------------- */

typedef struct {
    iso_vpt *v;
    int rank, size;        /* of the communicator whose ranks the lists hold */
    int nsend, nrecv;
    const int *dests, *sources; /* sources NULL: unknown, delivered in arrival order */
    iso_route_arrival *arrived;   /* then: what arrived, slot by slot */
    int arrived_cap;
    int *src_pairs;  /* sources known: iso__route_sorted_pairs(sources) */
    char *filled;    /* per receive slot: delivered */
    int ndelivered;
    iso_sched *s;
    item *held;      /* submessages on this process before the stage */
    int nheld, held_cap;
    item *next;      /* after it */
    int nnext, next_cap;
    size_t *msgsize; /* per message of s: its bytes, header included */
    int msgsize_cap;
    int hdr_tag;     /* first of n header tags */
} plan_t;

/* The submessages this process starts with: one per destination entry,
 * with its edge ordinal (the how-manieth edge to that destination). */
static int initial_items(plan_t *pl, const iso_args *a)
{
    int *pairs = iso__route_sorted_pairs(pl->dests, pl->nsend), err = MPI_SUCCESS;
    if (pairs == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = iso__grow(&pl->held, &pl->held_cap, pl->nsend + 1, sizeof *pl->held)))
        goto fn_exit;
    for (int k = 0, ord = 0; k < pl->nsend; k++) {
        int i = pairs[2 * k + 1];
        iso_loc l = iso__block(&a->send, ISO_BUF_SEND, i);
        MPI_Count size;
        item *it = &pl->held[i];
        ord = k > 0 && pairs[2 * k] == pairs[2 * k - 2] ? ord + 1 : 0;
        if ((err = MPI_Type_size_x(l.type, &size)) != MPI_SUCCESS)
            goto fn_exit;
        it->h = (item_hdr){pl->dests[i], pl->rank, ord, (long long)size * l.count};
        it->vdest = vrank_of(pl->v, pl->dests[i]);
        it->piece = (iso_piece){ISO_PIECE_USER, i};
    }
    pl->nheld = pl->nsend;
fn_exit:
    free(pairs);
    return err;
}

/* Submessage it has arrived here (it stays for the remaining stages): a
 * DELIVER in the local stage of the current round, so the message that
 * brought it may die once its other entries are forwarded (sched/arena.c).
 * Its slot: that of the ord-th occurrence of its source, or, when the
 * sources are unknown (the SDDE), the next arrival, which is recorded. */
static int deliver(plan_t *pl, const item *it)
{
    int slot = pl->ndelivered, err = MPI_SUCCESS;
    if (it->h.dest != pl->rank || it->h.bytes > INT_MAX)
        return iso__error_msg(ISO_ERR_INTERN, "VPT: a submessage for another process");
    if (pl->sources == NULL) {
        if ((err = iso__grow(&pl->arrived, &pl->arrived_cap, slot + 1, sizeof *pl->arrived)))
            return err;
        pl->arrived[slot] = (iso_route_arrival){(int)it->h.src, (int)it->h.bytes};
    } else if (!iso__route_graph_slot(pl->src_pairs, pl->nrecv, pl->filled, it->h.src,
                                      it->h.ord, &slot)) {
        return iso__error_msg(ISO_ERR_INTERN, "VPT: a submessage from %lld matches no source",
                              it->h.src);
    }
    pl->ndelivered++;
    iso_op op = {.kind = ISO_OP_DELIVER, .src = it->piece, .slot = slot, .first = 1};
    return iso__sched_add(pl->s, &op);
}

/* The submessages next[from ..] that are for this process are delivered
 * and leave the list; the others stay, in order. */
static int deliver_arrived(plan_t *pl, int from)
{
    int kept = from, err = MPI_SUCCESS;
    for (int i = from; i < pl->nnext && !err; i++) {
        if (pl->next[i].vdest == pl->v->me)
            err = deliver(pl, &pl->next[i]);
        else
            pl->next[kept++] = pl->next[i];
    }
    pl->nnext = kept;
    return err;
}

/* Receives the header list of every line neighbor (one message each, any
 * length: probed), progressing other requests while waiting. */
static int recv_headers(plan_t *pl, int tag, int k, int c, int stride, item_hdr **rh, int *rn)
{
    MPI_Comm comm = pl->v->priv->comm;
    int left = k - 1, err = MPI_SUCCESS;
    while (left > 0 && !err) {
        int found = 0;
        for (int j = 0; j < k && !err; j++) {
            MPI_Message msg;
            MPI_Status st;
            int flag = 0, count;
            if (j == c || rn[j] >= 0)
                continue;
            if ((err = MPI_Improbe(pl->v->me + (j - c) * stride, tag, comm, &flag, &msg, &st)) ||
                !flag)
                continue;
            if ((err = MPI_Get_count(&st, MPI_LONG_LONG, &count)) != MPI_SUCCESS)
                break;
            rn[j] = count / HDR_WORDS;
            if ((rh[j] = malloc(sizeof(item_hdr) * ((size_t)rn[j] + 1))) == NULL) {
                err = iso__error(ISO_ERR_NOMEM);
                break;
            }
            err = MPI_Mrecv(rh[j], count, MPI_LONG_LONG, &msg, MPI_STATUS_IGNORE);
            found++;
            left--;
        }
        if (!found && left > 0)
            iso__progress_poll();
    }
    return err;
}

/* Stage d: the header exchange with the line neighbors, then round d of the
 * schedule (sends of the held submessages that move, receives of what the
 * neighbors announced). */
static int plan_stage(plan_t *pl, int d)
{
    iso_vpt *v = pl->v;
    int k = v->dims[d], stride = iso__vpt_stride(v->n, v->dims, d);
    int c = iso__vpt_coord(v->n, v->dims, d, v->me), tag = pl->hdr_tag + d;
    int *cnt = calloc((size_t)k + 1, sizeof(int)), *off = calloc((size_t)k + 2, sizeof(int));
    int *rn = malloc(sizeof(int) * ((size_t)k + 1)), *order = NULL, nreq = 0, err = MPI_SUCCESS;
    item_hdr *sh = NULL, **rh = calloc((size_t)k + 1, sizeof *rh);
    MPI_Request *reqs = malloc(sizeof(MPI_Request) * ((size_t)k + 1));

    if (!cnt || !off || !rn || !rh || !reqs ||
        !(order = malloc(sizeof(int) * ((size_t)pl->nheld + 1))) ||
        !(sh = malloc(sizeof(item_hdr) * ((size_t)pl->nheld + 1)))) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    /* group the held submessages by the coordinate they move to */
    for (int i = 0; i < pl->nheld; i++)
        cnt[iso__vpt_coord(v->n, v->dims, d, pl->held[i].vdest)]++;
    for (int j = 0; j < k; j++)
        off[j + 1] = off[j] + cnt[j];
    for (int j = 0; j < k; j++)
        cnt[j] = 0;
    for (int i = 0; i < pl->nheld; i++) {
        int j = iso__vpt_coord(v->n, v->dims, d, pl->held[i].vdest);
        order[off[j] + cnt[j]] = i;
        sh[off[j] + cnt[j]++] = pl->held[i].h;
    }
    /* the count exchange of this stage: one header list to every line
     * neighbor (empty ones too: the receiver waits for each) */
    for (int j = 0; j < k && !err; j++) {
        rn[j] = -1;
        if (j != c)
            err = MPI_Isend(sh + off[j], cnt[j] * HDR_WORDS, MPI_LONG_LONG,
                            v->me + (j - c) * stride, tag, v->priv->comm, &reqs[nreq++]);
    }
    if (!err)
        err = recv_headers(pl, tag, k, c, stride, rh, rn);
    if (!err)
        err = iso__progress_waitall(nreq, reqs);
    nreq = 0;
    /* round d: sends of what moves, receives of what comes */
    pl->nnext = 0;
    for (int j = 0; j < k && !err; j++) {
        int m = -1, peer = v->me + (j - c) * stride;
        size_t bytes = sizeof(int64_t) * (size_t)cnt[j];
        if (j == c || cnt[j] == 0)
            continue;
        for (int e = 0; e < cnt[j] && !err; e++) {
            const item *it = &pl->held[order[off[j] + e]];
            bytes += (size_t)it->h.bytes;
            err = iso__sched_msg_add(pl->s, &m, it->piece);
        }
        if (!err) {
            iso_op pack = {.kind = ISO_OP_PACK, .msg = m};
            iso_op send = {.kind = ISO_OP_SEND_MSG, .msg = m, .peer = peer, .tag = d,
                           .nblocks = cnt[j]};
            if (!(err = iso__sched_add(pl->s, &pack)) && !(err = iso__sched_add(pl->s, &send)))
                err = iso__route_note_size(&pl->msgsize, &pl->msgsize_cap, m, bytes);
        }
    }
    for (int j = 0; j < k && !err; j++) {
        int m = -1, peer = v->me + (j - c) * stride, from = pl->nnext;
        size_t bytes = sizeof(int64_t) * (size_t)(j == c ? 0 : rn[j]);
        if (j == c) { /* what stays here (at stage 0: for oneself too) */
            for (int e = 0; e < cnt[j] && !err; e++)
                if (!(err = iso__grow(&pl->next, &pl->next_cap, pl->nnext + 1, sizeof *pl->next)))
                    pl->next[pl->nnext++] = pl->held[order[off[j] + e]];
            if (!err)
                err = deliver_arrived(pl, from);
            continue;
        }
        if (rn[j] == 0)
            continue;
        if ((err = iso__grow(&pl->next, &pl->next_cap, pl->nnext + rn[j], sizeof *pl->next)))
            break;
        for (int e = 0; e < rn[j] && !err; e++) {
            item *it = &pl->next[pl->nnext++];
            it->h = rh[j][e];
            if (it->h.dest < 0 || it->h.dest >= pl->size || it->h.bytes < 0) {
                err = iso__error_msg(ISO_ERR_INTERN, "VPT: a malformed submessage header");
                break;
            }
            it->vdest = vrank_of(v, (int)it->h.dest);
            bytes += (size_t)it->h.bytes;
            /* in pack mode an incoming entry has no place of its own: the
             * piece is a placeholder, entries are found by index */
            err = iso__sched_msg_add(pl->s, &m, (iso_piece){ISO_PIECE_SLOT, 0});
            it->piece = (iso_piece){m, e};
        }
        if (!err) {
            iso_op recv = {.kind = ISO_OP_RECV_MSG, .msg = m, .peer = peer, .tag = d};
            if (!(err = iso__sched_add(pl->s, &recv)) &&
                !(err = iso__route_note_size(&pl->msgsize, &pl->msgsize_cap, m, bytes)))
                err = deliver_arrived(pl, from);
        }
    }
    if (!err) { /* the received and kept submessages are held for the next stage */
        item *t = pl->held;
        int tc = pl->held_cap;
        pl->held = pl->next;
        pl->held_cap = pl->next_cap;
        pl->nheld = pl->nnext;
        pl->next = t;
        pl->next_cap = tc;
        pl->nnext = 0;
    }
fn_exit:
    if (nreq > 0) /* an error after posting: the sends still complete */
        iso__progress_waitall(nreq, reqs);
    for (int j = 0; rh && j < k; j++)
        free(rh[j]);
    free(rh);
    free(reqs);
    free(cnt);
    free(off);
    free(rn);
    free(order);
    free(sh);
    return err;
}

/* After the last stage every submessage has been delivered where it
 * arrived: one per receive slot when the sources are known. */
static int check_delivered(plan_t *pl)
{
    if (pl->nheld != 0)
        return iso__error_msg(ISO_ERR_INTERN, "VPT: %d submessages left after the last stage",
                              pl->nheld);
    if (pl->sources == NULL)
        pl->nrecv = pl->ndelivered;
    else if (pl->ndelivered != pl->nrecv)
        return iso__error_msg(ISO_ERR_INTERN, "VPT: %d submessages arrived for %d sources",
                              pl->ndelivered, pl->nrecv);
    return MPI_SUCCESS;
}

static int build_plan(plan_t *pl, const iso_args *a)
{
    int err = initial_items(pl, a), maxn = 0;
    long long hops;
    for (int d = 0; d < pl->v->n && !err; d++) {
        if ((err = plan_stage(pl, d)) == MPI_SUCCESS && d == pl->v->n - 1)
            err = check_delivered(pl);
        if (!err)
            err = iso__sched_end_round(pl->s);
    }
    for (int m = 0; m < pl->s->nmsgs; m++)
        maxn = pl->s->msgs[m].n > maxn ? pl->s->msgs[m].n : maxn;
    pl->s->ntags = pl->v->n;
    pl->s->struct_phases = pl->v->n;
    pl->s->struct_max_entries = maxn;
    iso__sched_stats(pl->s, &maxn, &pl->s->struct_msgs, &hops);
    pl->s->struct_hops = (int)hops;
    return err;
}

/* ---- the plan of one exchange --------------------------------------------------- */

int iso__vpt_plan(iso_vpt *v, int rank, int size, int nsend, const int *dests, int nrecv,
                  const int *sources, const iso_args *a, iso_route_plan *out)
{
    plan_t pl;
    int err;
    memset(&pl, 0, sizeof pl);
    memset(out, 0, sizeof *out);
    pl.v = v;
    pl.rank = rank;
    pl.size = size;
    pl.nsend = nsend;
    pl.dests = dests;
    pl.nrecv = nrecv;
    pl.sources = sources;
    pl.hdr_tag = iso__tags_reserve(v->priv, v->n);
    if (sources && (!(pl.src_pairs = iso__route_sorted_pairs(sources, nrecv)) ||
                    !(pl.filled = calloc((size_t)nrecv + 1, 1))))
        err = iso__error(ISO_ERR_NOMEM);
    else if ((err = iso__sched_new(&pl.s)) == MPI_SUCCESS &&
             (err = build_plan(&pl, a)) == MPI_SUCCESS) {
        out->sched = pl.s;
        out->msgsize = pl.msgsize;
        out->arrived = pl.arrived;
        out->narrived = pl.sources ? 0 : pl.nrecv;
        pl.s = NULL;
        pl.msgsize = NULL;
        pl.arrived = NULL;
    }
    iso__sched_release(pl.s);
    free(pl.held);
    free(pl.next);
    free(pl.msgsize);
    free(pl.arrived);
    free(pl.src_pairs);
    free(pl.filled);
    return err;
}

int iso__vpt_option(iso_vpt_opts *o, int p, const char *key, const char *value,
                    const char *where)
{
    if (!strcmp(key, "iso_vpt_dims")) {
        int n;
        if (iso__vpt_dims_parse(value, p, &n, o->dims) != MPI_SUCCESS)
            return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\": comma-separated sizes >= 1 whose "
                                                "product is the %d processes", where, value, p);
        o->ndims = n;
        return MPI_SUCCESS;
    }
    if (!strcmp(key, "iso_vpt_n")) {
        char *end;
        long n = strtol(value, &end, 10);
        if (*value == '\0' || *end != '\0' || n < 1 || n > ISO_VPT_MAXDIMS)
            return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" (1 .. %d dimensions)", where, value,
                                  ISO_VPT_MAXDIMS);
        o->n = (int)n;
        return MPI_SUCCESS;
    }
    if (!strcmp(key, "iso_vpt_locality")) {
        if (!strcasecmp(value, "none") || !strcasecmp(value, "node")) {
            o->locality = !strcasecmp(value, "node");
            return MPI_SUCCESS;
        }
        return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" (none, node)", where, value);
    }
    if (!strcmp(key, "iso_locality"))
        return iso__locality_option(where, value, &o->level);
    return iso__error_msg(ISO_ERR_INFO, "unknown info key %s (iso_vpt_dims, iso_vpt_n, "
                                        "iso_vpt_locality, iso_locality)", key);
}

/* The shape of options o for p processes; n == 1 means direct. */
int iso__vpt_shape(const iso_vpt_opts *o, int p, int *n, int dims[])
{
    if (o->ndims > 0) {
        *n = o->ndims;
        memcpy(dims, o->dims, sizeof(int) * (size_t)*n);
        return MPI_SUCCESS;
    }
    *n = o->n > 0 ? o->n : 2;
    return iso__vpt_dims_balanced(p, *n, dims);
}
