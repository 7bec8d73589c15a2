/* Store-and-forward over a virtual process topology T_n(k_1..k_n)
 * (Selvitopi & Aykanat, SC'19; DESIGN.md, "Virtual process topology") for
 * the alltoall forms on distributed graph communicators.
 *
 * The VPT is a periodic Cartesian communicator (cached on the graph
 * communicator's state).  A submessage (one edge's block) travels in
 * dimension order: at stage d it moves to the process of its line whose
 * coordinate d is its destination's (shape.c, iso__vpt_hop), so a process
 * sends at most k_d - 1 messages at stage d, each one combined message
 * holding every submessage for that neighbor.
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
#include "coll/coll.h"
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
    int finalized = 0;
    MPI_Finalized(&finalized);
    while (v) {
        iso_vpt *next = v->next;
        iso__priv_release(v->priv);
        if (!finalized && v->cart != MPI_COMM_NULL)
            MPI_Comm_free(&v->cart);
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

/* The locality embedding (iso_vpt_locality=node): with g(r) the position
 * of rank r in the ranks grouped node by node (iso_locality.members), VPT
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
    int periods[ISO_VPT_MAXDIMS], flag = 0, rank, err = MPI_SUCCESS;
    *out = NULL;
    /* locality, balanced shape, nodes of one size s dividing p: the first
     * dimension is the node (k_0 = s), the others balanced over the nodes */
    if (o->locality && (err = iso__locality_get(base, &loc)) != MPI_SUCCESS)
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
        if (v->n == n && v->locality == o->locality &&
            !memcmp(v->dims, dims, sizeof(int) * (size_t)n)) {
            *out = v;
            return MPI_SUCCESS;
        }
    if ((v = calloc(1, sizeof *v)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    v->n = n;
    v->locality = o->locality;
    memcpy(v->dims, dims, sizeof(int) * (size_t)n);
    v->cart = MPI_COMM_NULL;
    for (int d = 0; d < n; d++)
        periods[d] = 1;
    if ((err = MPI_Comm_rank(base, &rank)) != MPI_SUCCESS)
        goto fn_fail;
    v->me = rank;
    if (loc) { /* ranks reordered by the embedding (split by key = VPT rank) */
        if ((v->vrank = malloc(sizeof(int) * (size_t)loc->size)) == NULL) {
            err = iso__error(ISO_ERR_NOMEM);
            goto fn_fail;
        }
        embed(loc, n, dims, v->vrank);
        v->me = v->vrank[rank];
        if ((err = MPI_Comm_split(base, 0, v->me, &ordered)) != MPI_SUCCESS)
            goto fn_fail;
    }
    /* no reordering by MPI: VPT rank = rank of the (ordered) base */
    if ((err = MPI_Cart_create(loc ? ordered : base, n, v->dims, periods, 0, &v->cart)) ||
        (err = iso__priv_create(v->cart, &v->priv)) != MPI_SUCCESS)
        goto fn_fail;
    if (ordered != MPI_COMM_NULL)
        MPI_Comm_free(&ordered);
    v->next = list->head;
    list->head = v;
    *out = v;
    return MPI_SUCCESS;
fn_fail:
    if (ordered != MPI_COMM_NULL)
        MPI_Comm_free(&ordered);
    if (v->cart != MPI_COMM_NULL)
        MPI_Comm_free(&v->cart);
    free(v->vrank);
    free(v);
    return err;
}

/* ---- agreement ------------------------------------------------------------------ */

/* One allreduce over the graph communicator's private communicator: the
 * outcome of the argument checks (library error number or MPI class, the
 * same on every process) and the shape, which every process must have
 * alike; with hit, whether every process can use the plan it cached (*hit
 * in: this one can; out: all can, with plans of one call, generation
 * gen).  Returns this process's error, or one that says another process
 * failed. */
static int agree(iso_priv *priv, int err, int n, const int dims[], long long stats[2], int *hit,
                 long long gen)
{
    long long v[9] = {0, 0, 0, 0, 0, 0, 1, 0, 0}, r[9];
    MPI_Request req;
    int ready, rc;
    if (err != MPI_SUCCESS) {
        Iso_error lib = iso__error_which(err);
        int cls = MPI_ERR_OTHER;
        if (lib == ISO_ERR_NONE)
            MPI_Error_class(err, &cls);
        v[0] = lib;
        v[1] = lib == ISO_ERR_NONE ? cls : 0;
    }
    /* the shape: n and a hash of dims, as (x, -x) for max and -min */
    for (int d = 0; d < n; d++)
        v[2] = v[2] * 131 + dims[d];
    v[2] = v[2] * 17 + n;
    v[3] = -v[2];
    if (stats) { /* auto's statistics: maxima over the processes */
        v[4] = stats[0];
        v[5] = stats[1];
    }
    if (hit) { /* a miss anywhere is a miss everywhere; one generation */
        v[6] = !*hit;
        v[7] = gen;
        v[8] = -gen;
    }
    if ((rc = iso__priv_ready(priv, 1, &ready)) != MPI_SUCCESS ||
        (rc = MPI_Iallreduce(v, r, 9, MPI_LONG_LONG, MPI_MAX, priv->comm, &req)) ||
        (rc = iso__progress_wait(&req)) != MPI_SUCCESS)
        return rc;
    if (hit)
        *hit = r[6] == 0 && r[7] == -r[8];
    if (stats) {
        stats[0] = r[4];
        stats[1] = r[5];
    }
    if (err != MPI_SUCCESS)
        return err;
    if (r[0] > 0)
        return iso__error_msg((Iso_error)r[0], "invalid arguments on another process");
    if (r[1] > 0)
        return iso__error_msg(ISO_ERR_ARG, "invalid arguments on another process (MPI class %lld)",
                              r[1]);
    if (r[2] != -r[3])
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different VPT shapes");
    return MPI_SUCCESS;
}

/* ---- the plan ---------------------------------------------------------------------- */

typedef struct {
    iso_vpt *v;
    int rank, size;        /* of the communicator whose ranks the lists hold */
    int nsend, nrecv;
    const int *dests, *sources; /* sources NULL: unknown, delivered in arrival order */
    iso_vpt_arrival *arrived;   /* then: what arrived, slot by slot */
    int arrived_cap;
    int *src_pairs;  /* sources known: sorted_pairs(sources) */
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

static int cmp_pair(const void *x, const void *y)
{
    const int *a = x, *b = y;
    return a[0] != b[0] ? (a[0] > b[0]) - (a[0] < b[0]) : (a[1] > b[1]) - (a[1] < b[1]);
}

/* (rank, index) pairs of a list, sorted: the k-th occurrence of rank r is
 * pairs[first(r) + k]. */
static int *sorted_pairs(const int *list, int n)
{
    int *pairs = malloc(sizeof(int) * 2 * ((size_t)n + 1));
    if (pairs == NULL)
        return NULL;
    for (int i = 0; i < n; i++) {
        pairs[2 * i] = list[i];
        pairs[2 * i + 1] = i;
    }
    qsort(pairs, (size_t)n, 2 * sizeof(int), cmp_pair);
    return pairs;
}

static int first_of(const int *pairs, int n, long long rank)
{
    int lo = 0, hi = n;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (pairs[2 * mid] < rank)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

/* The submessages this process starts with: one per destination entry,
 * with its edge ordinal (the how-manieth edge to that destination). */
static int initial_items(plan_t *pl, const iso_args *a)
{
    int *pairs = sorted_pairs(pl->dests, pl->nsend), err = MPI_SUCCESS;
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

/* Records the byte size of message m (for buffers reserved up front). */
static int note_size(plan_t *pl, int m, size_t bytes)
{
    int err = iso__grow(&pl->msgsize, &pl->msgsize_cap, m + 1, sizeof *pl->msgsize);
    if (err == MPI_SUCCESS)
        pl->msgsize[m] = bytes;
    return err;
}

/* Submessage it has arrived here (it stays for the remaining stages): a
 * DELIVER in the local stage of the current round, so the message that
 * brought it may die once its other entries are forwarded (sched/arena.c).
 * Its slot: that of the ord-th occurrence of its source, or, when the
 * sources are unknown (the SDDE), the next arrival, which is recorded. */
static int deliver(plan_t *pl, const item *it)
{
    int slot = pl->ndelivered, at = -1, err = MPI_SUCCESS;
    if (it->h.dest != pl->rank || it->h.bytes > INT_MAX)
        return iso__error_msg(ISO_ERR_INTERN, "VPT: a submessage for another process");
    if (pl->sources == NULL) {
        if ((err = iso__grow(&pl->arrived, &pl->arrived_cap, slot + 1, sizeof *pl->arrived)))
            return err;
        pl->arrived[slot] = (iso_vpt_arrival){(int)it->h.src, (int)it->h.bytes};
    } else {
        if (it->h.ord >= 0 && it->h.ord < pl->nrecv)
            at = first_of(pl->src_pairs, pl->nrecv, it->h.src) + (int)it->h.ord;
        if (at < 0 || at >= pl->nrecv || pl->src_pairs[2 * at] != it->h.src ||
            pl->filled[slot = pl->src_pairs[2 * at + 1]])
            return iso__error_msg(ISO_ERR_INTERN, "VPT: a submessage from %lld matches no source",
                                  it->h.src);
        pl->filled[slot] = 1;
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
                err = note_size(pl, m, bytes);
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
            if (!(err = iso__sched_add(pl->s, &recv)) && !(err = note_size(pl, m, bytes)))
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
                  const int *sources, const iso_args *a, iso_vpt_plan_out *out)
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
    if (sources && (!(pl.src_pairs = sorted_pairs(sources, nrecv)) ||
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

void iso__vpt_plan_free(iso_vpt_plan_out *p)
{
    iso__sched_release(p->sched);
    free(p->msgsize);
    free(p->arrived);
    memset(p, 0, sizeof *p);
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
    return iso__error_msg(ISO_ERR_INFO, "unknown info key %s (iso_vpt_dims, iso_vpt_n, "
                                        "iso_vpt_locality)", key);
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

int iso__vpt_agree(iso_priv *priv, int err, int n, const int dims[])
{
    return agree(priv, err, n, dims, NULL, NULL, 0);
}

/* ---- auto ---------------------------------------------------------------------------- */

/* auto's choice of n (1: direct) for p processes from the statistics every
 * process has after the agreement: the largest out-degree (direct's
 * messages, mmax) and the largest mean bytes per edge.  The cost model of
 * coll/cost.c in pack mode, for the balanced T_n, n = 1 .. log2 p:
 *   messages  min(mmax, sum(k_d - 1))
 *   hops      mmax * sum_d (1 - 1/k_d)   (the expected hops of a random
 *             destination; direct: mmax)
 *   phases    n, plus n header rounds per call unless persistent.
 * Every process computes the same.  dims gets the chosen shape. */
static int choose_n(int p, long long mmax, long long mean_bytes, int persistent, int dims[])
{
    double best = 0.0, block = (double)mean_bytes + 8.0;
    int best_n = 1;
    for (int n = 1; n <= ISO_VPT_MAXDIMS && (1 << n) <= p; n++) {
        int k[ISO_VPT_MAXDIMS], msgs = 0;
        double hops = 0.0, t;
        iso_figures f = {0, 0, 0, 0};
        iso__vpt_dims_balanced(p, n, k);
        for (int d = 0; d < n; d++) {
            msgs += k[d] - 1;
            hops += 1.0 - 1.0 / k[d];
        }
        f.phases = persistent ? n : 2 * n;
        f.msgs = (int)(mmax < msgs ? mmax : msgs) * (persistent ? 1 : 2);
        f.hops = (int)((double)mmax * hops + 0.5);
        t = n == 1 ? iso__cost_direct((int)mmax, (double)mean_bytes)
                   : iso__cost(&f, block, ISO_MODE_PACK, persistent, 0);
        if (n == 1 || t < best) {
            best = t;
            best_n = n;
        }
    }
    return iso__vpt_dims_balanced(p, best_n, dims) == MPI_SUCCESS ? best_n : 1;
}

/* ---- the plan cache of blocking and nonblocking calls ----------------------------- */

/* A plan holds counts, not pointers: the routes, the per-stage messages and
 * their sizes follow from the shape and every process's send block sizes
 * alone (the pieces name send blocks and receive slots by index; the
 * request binds them to each call's buffers).  So a call may reuse the
 * last call's plan if the shape is the same and no process's send block
 * sizes changed -- which the agreement's allreduce establishes (every
 * process votes; all plans must come from the same call, generation
 * g->vpt_plans). */
struct iso_vpt_cache_s {
    long long gen;
    int n, dims[ISO_VPT_MAXDIMS], locality;
    long long *sizes; /* [outdegree] bytes of each send block */
    iso_vpt_plan_out plan;
};

void iso__vpt_cache_free(struct iso_vpt_cache_s *c)
{
    if (c == NULL)
        return;
    iso__vpt_plan_free(&c->plan);
    free(c->sizes);
    free(c);
}

static long long send_block_bytes(const iso_args *a, int i)
{
    iso_loc l = iso__block(&a->send, ISO_BUF_SEND, i);
    MPI_Count size = 0;
    MPI_Type_size_x(l.type, &size);
    return (long long)size * l.count;
}

/* Can this process use the cached plan for a call with the send blocks of
 * a (its side of the vote)? */
static int cache_fits(const iso_graph *g, const iso_args *a)
{
    const struct iso_vpt_cache_s *c = g->vpt_cache;
    if (c == NULL)
        return 0;
    for (int i = 0; i < g->outdegree; i++)
        if (c->sizes[i] != send_block_bytes(a, i))
            return 0;
    return 1;
}

/* Keeps *plan (taken over) as the cached plan of generation gen. */
static void cache_put(iso_graph *g, const iso_vpt_opts *o, int n, const int dims[],
                      const iso_args *a, long long gen, iso_vpt_plan_out *plan)
{
    struct iso_vpt_cache_s *c = calloc(1, sizeof *c);
    if (c == NULL || (c->sizes = malloc(sizeof(long long) * ((size_t)g->outdegree + 1))) == NULL) {
        free(c); /* not kept: the next call plans anew (the old plan is of another generation) */
        iso__vpt_cache_free(g->vpt_cache);
        g->vpt_cache = NULL;
        return;
    }
    for (int i = 0; i < g->outdegree; i++)
        c->sizes[i] = send_block_bytes(a, i);
    c->gen = gen;
    c->n = n;
    memcpy(c->dims, dims, sizeof(int) * (size_t)n);
    c->locality = o->locality;
    c->plan = *plan;
    memset(plan, 0, sizeof *plan);
    iso__vpt_cache_free(g->vpt_cache);
    g->vpt_cache = c;
}

/* ---- the request on a graph communicator ----------------------------------------- */

int iso__vpt_request(iso_graph *g, MPI_Comm comm, const iso_graph_opts *o, const iso_args *a,
                     int err, int retain_args, int persistent, int *use_direct,
                     struct iso_request_s **out)
{
    int n = 0, dims[ISO_VPT_MAXDIMS], hit = 0, cacheable = !persistent;
    int choose = o->algorithm == ISO_GRAPH_AUTO && o->vpt.ndims == 0;
    long long stats[2] = {g->outdegree, 0}, gen = -1;
    struct iso_vpt_cache_s *c;
    iso_vpt *v = NULL;
    iso_vpt_plan_out plan, *use = &plan;
    *out = NULL;
    *use_direct = 0;
    memset(&plan, 0, sizeof plan);
    if (!choose && iso__vpt_shape(&o->vpt, g->size, &n, dims) != MPI_SUCCESS)
        return iso__error(ISO_ERR_INTERN);
    if (!choose && n == 1) { /* T_1 is direct */
        *use_direct = 1;
        return err;
    }
    if (choose && err == MPI_SUCCESS) { /* mean bytes per edge */
        for (int i = 0; i < g->outdegree; i++)
            stats[1] += send_block_bytes(a, i);
        stats[1] = g->outdegree > 0 ? stats[1] / g->outdegree : 0;
    }
    if (cacheable && err == MPI_SUCCESS)
        hit = cache_fits(g, a);
    if ((err = agree(g->priv, err, n, dims, choose ? stats : NULL, cacheable ? &hit : NULL,
                     g->vpt_cache ? g->vpt_cache->gen : -1)) != MPI_SUCCESS)
        return err;
    if (choose && (n = choose_n(g->size, stats[0], stats[1], persistent, dims)) == 1) {
        *use_direct = 1;
        return MPI_SUCCESS;
    }
    if ((err = iso__vpt_get(g->priv->comm, &o->vpt, n, dims, &v)) != MPI_SUCCESS)
        return err;
    /* the shape is the same everywhere: so is this test's outcome */
    c = g->vpt_cache;
    if (hit && c->n == n && !memcmp(c->dims, dims, sizeof(int) * (size_t)n) &&
        c->locality == o->vpt.locality) {
        use = &c->plan;
    } else {
        hit = 0;
        gen = cacheable ? ++g->vpt_plans : -1;
        err = iso__vpt_plan(v, g->rank, g->size, g->outdegree, g->dests, g->indegree, g->sources,
                            a, &plan);
    }
    if (err == MPI_SUCCESS &&
        (err = iso__sched_request(v->priv, comm, use->sched, a, g->outdegree, g->indegree,
                                  retain_args, persistent, ISO_MODE_PACK, "vpt", out)) ==
            MPI_SUCCESS &&
        (err = iso__sched_request_reserve(*out, use->msgsize)) != MPI_SUCCESS) {
        iso__request_destroy(*out);
        *out = NULL;
    }
    if (cacheable && !hit && err == MPI_SUCCESS) {
        cache_put(g, &o->vpt, n, dims, a, gen, &plan);
    } else if (cacheable && !hit) { /* no plan of this generation here */
        iso__vpt_cache_free(g->vpt_cache);
        g->vpt_cache = NULL;
    }
    iso__vpt_plan_free(&plan);
    return err;
}

/* ---- what a VPT exchange did ---------------------------------------------------- */

int Iso_request_vpt_info(Iso_request request, int maxstages, int *nstages, int messages[],
                         long long bytes[], long long *forwarded, long long *buffer_bytes)
{
    MPI_Comm comm = request ? request->comm : MPI_COMM_WORLD;
    const char *alg, *mode;
    int rounds, msgs, err;
    long long b;
    if (request == ISO_REQUEST_NULL)
        return iso__raise(comm, iso__error_msg(ISO_ERR_REQUEST, "request is ISO_REQUEST_NULL"));
    if (!nstages || !forwarded || !buffer_bytes || maxstages < 0 ||
        (maxstages > 0 && (!messages || !bytes)))
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "an output argument is NULL"));
    if ((err = iso__sched_request_describe(request, &alg, &mode, &rounds, &msgs, &b)) ==
            MPI_SUCCESS &&
        strcmp(alg, "vpt") != 0)
        err = iso__error_msg(ISO_ERR_REQUEST, "not a request of the vpt algorithm (it runs %s)",
                             alg);
    if (err == MPI_SUCCESS)
        err = iso__sched_request_rounds(request, maxstages, nstages, messages, bytes, forwarded,
                                        buffer_bytes);
    return iso__raise(comm, err);
}
