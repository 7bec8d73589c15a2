/* Message combining over routes (EuroMPI'15 sections 5.2 and 5.3).
 *
 * An algorithm gives every neighbor offset C^i a route: hops along single
 * dimensions, each in a numbered phase (dimwise: one hop per non-zero
 * coordinate, phase = dimension; bruck: one hop per set bit of each
 * coordinate, phase = (dimension, bit)).  Routes are merged into a trie:
 * a node is "the block of group g after these hops".  For personalized
 * collectives (alltoall, scatter_reduce) each offset is its own group; for
 * allgather and reduce all offsets share one group, so a block bound for
 * several targets travels each trie edge once (no volume overhead).
 *
 * In phase P, every process sends one packed message per distinct hop
 * (dimension, step) of the phase, holding the trie nodes created by that
 * hop, and receives the matching message from the opposite direction.
 * Because neighborhoods are isomorphic, the structure is the same on every
 * process and needs no communication.  On non-periodic meshes a node is
 * carried only if its origin exists and some target below it exists; the
 * sender and the receiver evaluate the same condition, and routes move
 * monotonically between origin and target, so every hop stays on the mesh.
 *
 * Each combined message lists its pieces (where its blocks come from, or
 * land in datatype mode: the receive slot where the route ends, or a
 * scratch vector for blocks passing through); how the executor makes it,
 * packed or as a datatype, is in DESIGN.md ("Combined messages").  Each
 * message of an operation has its own tag. */
#include "coll/coll.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    int parent, phase, dim, step, group;
    int *prefix;            /* d ints: sum of the hops so far */
    int *pass;              /* slots whose route passes through (or ends at) this node */
    int npass, pass_cap;
    int *final;             /* slots whose route ends here */
    int nfinal, final_cap;
    int msg_in, entry_in;   /* where this node arrives at the caller (-1: not) */
} node_t;

typedef struct {
    const iso_nbh *nb;
    node_t *nodes;
    int nnodes, cap;
    int *cur;  /* per slot: current node */
    int *hp;   /* per slot: next hop index */
    iso_hop *hops; /* per slot: route, maxhops each */
    int *nhops;
    int maxhops;
    int torus; /* every dimension periodic: no existence checks */
    const int *line; /* hops with dim == d move along this vector */
} trie_t;

/* v += step * (unit vector of dim, or the line vector for dim == d). */
static void hop_add(const trie_t *t, int dim, int step, int *v)
{
    if (dim < t->nb->d) {
        v[dim] += step;
        return;
    }
    for (int j = 0; j < t->nb->d; j++)
        v[j] += step * t->line[j];
}

static int push_int(int **arr, int *n, int *cap, int v)
{
    int err = iso__grow(arr, cap, *n + 1, sizeof **arr);
    if (err == MPI_SUCCESS)
        (*arr)[(*n)++] = v;
    return err;
}

/* A new node; its index in *index. */
static int new_node(trie_t *t, int parent, int phase, int dim, int step, int group, int *index)
{
    int d = t->nb->d, err;
    node_t *n;
    if ((err = iso__grow(&t->nodes, &t->cap, t->nnodes + 1, sizeof *t->nodes)) != MPI_SUCCESS)
        return err;
    n = &t->nodes[t->nnodes];
    memset(n, 0, sizeof *n);
    n->parent = parent;
    n->phase = phase;
    n->dim = dim;
    n->step = step;
    n->group = group;
    n->msg_in = n->entry_in = -1;
    n->prefix = calloc((size_t)d + 1, sizeof(int));
    if (n->prefix == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if (parent >= 0) {
        memcpy(n->prefix, t->nodes[parent].prefix, sizeof(int) * (size_t)d);
        hop_add(t, dim, step, n->prefix);
    }
    *index = t->nnodes++;
    return MPI_SUCCESS;
}

static void trie_free(trie_t *t)
{
    for (int k = 0; k < t->nnodes; k++) {
        free(t->nodes[k].prefix);
        free(t->nodes[k].pass);
        free(t->nodes[k].final);
    }
    free(t->nodes);
    free(t->cur);
    free(t->hp);
    free(t->hops);
    free(t->nhops);
}

/* Is caller + sign*a + b on the mesh (b may be NULL)? */
static int on_mesh(const iso_nbh *nb, const int *a, int sign, const int *b)
{
    iso_grid g = iso__nbh_grid(nb);
    return iso__grid_point(&g, a, sign, b, NULL);
}

/* Does node n carry data when its origin is caller - origin_off?  The
 * origin must exist and some slot through n must have an existing target
 * origin + C^i. */
static int needed(const trie_t *t, const node_t *n, const int *origin_off)
{
    const iso_nbh *nb = t->nb;
    if (t->torus)
        return 1;
    if (!on_mesh(nb, origin_off, -1, NULL))
        return 0;
    for (int k = 0; k < n->npass; k++) /* target: caller - origin_off + C^i */
        if (on_mesh(nb, origin_off, -1, nb->offsets + (size_t)n->pass[k] * (size_t)nb->d))
            return 1;
    return 0;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Builds the trie: nodes are created phase by phase, in slot order. */
static int trie_build(trie_t *t, iso_route_fn route, int personalized, int **phases, int *nphases)
{
    const iso_nbh *nb = t->nb;
    int s = nb->s, nroots = personalized ? s : (s > 0);
    int nall = 0, *all = NULL, err, root;
    t->maxhops = 32 * (nb->d + 1);
    t->cur = malloc(sizeof(int) * (size_t)(s + 1));
    t->hp = calloc((size_t)s + 1, sizeof(int));
    t->nhops = malloc(sizeof(int) * (size_t)(s + 1));
    t->hops = malloc(sizeof(iso_hop) * (size_t)t->maxhops * (size_t)(s + 1));
    if (!t->cur || !t->hp || !t->nhops || !t->hops)
        return iso__error(ISO_ERR_NOMEM);
    for (int g = 0; g < nroots; g++)
        if ((err = new_node(t, -1, -1, 0, 0, g, &root)) != MPI_SUCCESS)
            return err;
    for (int i = 0; i < s; i++) {
        t->cur[i] = personalized ? i : 0;
        t->nhops[i] = route(nb, t->line, nb->offsets + (size_t)i * (size_t)nb->d,
                            t->hops + (size_t)i * (size_t)t->maxhops, t->maxhops);
        if (t->nhops[i] < 0) /* offsets below 2^30 have short routes */
            return iso__error(ISO_ERR_INTERN);
        nall += t->nhops[i];
    }
    /* the distinct phases, in order */
    all = malloc(sizeof(int) * (size_t)(nall + 1));
    if (all == NULL)
        return iso__error(ISO_ERR_NOMEM);
    nall = 0;
    for (int i = 0; i < s; i++)
        for (int h = 0; h < t->nhops[i]; h++)
            all[nall++] = t->hops[(size_t)i * (size_t)t->maxhops + (size_t)h].phase;
    qsort(all, (size_t)nall, sizeof(int), cmp_int);
    *nphases = 0;
    for (int k = 0; k < nall; k++)
        if (k == 0 || all[k] != all[k - 1])
            all[(*nphases)++] = all[k];
    *phases = all;

    for (int i = 0; i < s; i++) /* every slot passes through its root */
        if ((err = push_int(&t->nodes[t->cur[i]].pass, &t->nodes[t->cur[i]].npass,
                            &t->nodes[t->cur[i]].pass_cap, i)) != MPI_SUCCESS)
            return err;
    for (int p = 0; p < *nphases; p++) {
        int first_new = t->nnodes;
        for (int i = 0; i < s; i++) {
            const iso_hop *h = t->hops + (size_t)i * (size_t)t->maxhops + (size_t)t->hp[i];
            int child = -1;
            if (t->hp[i] >= t->nhops[i] || h->phase != all[p])
                continue;
            for (int k = first_new; k < t->nnodes && child < 0; k++)
                if (t->nodes[k].parent == t->cur[i] && t->nodes[k].dim == h->dim &&
                    t->nodes[k].step == h->step)
                    child = k;
            if (child < 0 && (err = new_node(t, t->cur[i], all[p], h->dim, h->step,
                                             t->nodes[t->cur[i]].group, &child)) != MPI_SUCCESS)
                return err;
            t->cur[i] = child;
            t->hp[i]++;
            if ((err = push_int(&t->nodes[child].pass, &t->nodes[child].npass,
                                &t->nodes[child].pass_cap, i)) != MPI_SUCCESS)
                return err;
        }
    }
    for (int i = 0; i < s; i++)
        if ((err = push_int(&t->nodes[t->cur[i]].final, &t->nodes[t->cur[i]].nfinal,
                            &t->nodes[t->cur[i]].final_cap, i)) != MPI_SUCCESS)
            return err;
    return MPI_SUCCESS;
}

/* Delivers every final slot of node n from piece pc. */
static int add_deliveries(iso_sched *out, const node_t *n, iso_piece pc, int *delivered)
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < n->nfinal && !err; k++) {
        iso_op op = {.kind = ISO_OP_DELIVER, .src = pc, .slot = n->final[k], .first = !*delivered};
        err = iso__sched_add(out, &op);
        *delivered = 1;
    }
    return err;
}

/* Where node n's data is at the caller: the user's block, or a message. */
static iso_piece source_of(const trie_t *t, int n, int personalized)
{
    const node_t *nd = &t->nodes[n];
    iso_piece pc = {-1, personalized ? nd->group : 0};
    if (nd->parent >= 0) {
        pc.msg = nd->msg_in;
        pc.index = nd->entry_in;
    }
    return pc;
}

/* Packs outgoing message msg and sends it to caller + delta.  The routes
 * guarantee that the peer exists when there is something to send. */
static int emit_send(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
                     int *scratch)
{
    iso_op pack = {.kind = ISO_OP_PACK, .msg = msg};
    iso_op send = {.kind = ISO_OP_SEND_MSG, .msg = msg, .tag = tag, .nblocks = out->msgs[msg].n};
    int err;
    send.peer = iso__shifted_rank(nb, delta, +1, scratch);
    if (send.peer == MPI_PROC_NULL)
        return iso__error(ISO_ERR_INTERN);
    err = iso__sched_add(out, &pack);
    return err ? err : iso__sched_add(out, &send);
}

/* Receives message msg from caller - delta. */
static int emit_recv(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
                     int *scratch)
{
    iso_op recv = {.kind = ISO_OP_RECV_MSG, .msg = msg, .tag = tag};
    recv.peer = iso__shifted_rank(nb, delta, -1, scratch);
    if (recv.peer == MPI_PROC_NULL)
        return iso__error(ISO_ERR_INTERN);
    return iso__sched_add(out, &recv);
}

/* One phase: its outgoing and incoming messages, then deliveries. */
static int build_phase(trie_t *t, int phase, int personalized, int *tag, iso_sched *out,
                       int *delivered, int *scratch)
{
    const iso_nbh *nb = t->nb;
    int d = nb->d, err = MPI_SUCCESS;
    int *done = calloc((size_t)t->nnodes + 1, sizeof(int)); /* node already in a message */
    int *list = malloc(sizeof(int) * (size_t)(t->nnodes + 1));
    int *delta = calloc((size_t)d + 1, sizeof(int));
    if (!done || !list || !delta) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int k = 0; k < t->nnodes && !err; k++) {
        node_t *lead = &t->nodes[k];
        int nl = 0, msg;
        if (lead->phase != phase || done[k])
            continue;
        for (int m = k; m < t->nnodes; m++) /* the nodes of this message */
            if (t->nodes[m].phase == phase && !done[m] && t->nodes[m].dim == lead->dim &&
                t->nodes[m].step == lead->step) {
                done[m] = 1;
                list[nl++] = m;
            }
        if (nl > out->struct_max_entries)
            out->struct_max_entries = nl;
        memset(delta, 0, sizeof(int) * (size_t)d);
        hop_add(t, lead->dim, lead->step, delta);

        /* outgoing: nodes whose parent is here (origin caller - parent prefix) */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            node_t *n = &t->nodes[list[e]];
            if (!needed(t, n, t->nodes[n->parent].prefix))
                continue;
            err = iso__sched_msg_add(out, &msg, source_of(t, n->parent, personalized));
        }
        if (!err && msg >= 0)
            err = emit_send(out, nb, delta, msg, *tag, scratch);

        /* incoming: nodes that arrive here (origin caller - node prefix) */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            node_t *n = &t->nodes[list[e]];
            if (!needed(t, n, n->prefix))
                continue;
            /* datatype mode: a node that ends here lands in its first slot */
            err = iso__sched_msg_add(out, &msg,
                                     n->nfinal > 0 ? (iso_piece){ISO_PIECE_SLOT, n->final[0]}
                                                   : (iso_piece){ISO_PIECE_VEC, out->nvec++});
            n->msg_in = msg;
            n->entry_in = msg >= 0 ? out->msgs[msg].n - 1 : -1;
        }
        if (!err && msg >= 0)
            err = emit_recv(out, nb, delta, msg, *tag, scratch);
        ++*tag; /* one tag per message, the same on every process */
    }
    /* deliveries of the nodes that arrived in this phase */
    for (int k = 0; k < t->nnodes && !err; k++) {
        node_t *n = &t->nodes[k];
        if (n->phase == phase && n->msg_in >= 0)
            err = add_deliveries(out, n, (iso_piece){n->msg_in, n->entry_in}, delivered);
    }
    if (!err)
        err = iso__sched_end_round(out);
fn_exit:
    free(done);
    free(list);
    free(delta);
    return err;
}

/* ---- reductions: combine partial results on the way --------------------
 * Reduce and scatter_reduce run the routes forwards but merge instead of
 * copying: at every process, contributions that still have the same
 * remaining route (hence the same final target) are one partial result,
 * reduced before it is forwarded.  Scatter_reduce thus moves one vector per
 * edge of the reversed trie instead of one per block hop. */

typedef struct {
    int rep, h;        /* key: the hops of slot rep from index h on */
    iso_piece *pieces; /* contributions present here */
    int npieces, cap;
    int alive;
} partial_t;

static int same_suffix(const trie_t *t, int i, int h, int j, int g)
{
    const iso_hop *a = t->hops + (size_t)i * (size_t)t->maxhops;
    const iso_hop *b = t->hops + (size_t)j * (size_t)t->maxhops;
    if (t->nhops[i] - h != t->nhops[j] - g)
        return 0;
    for (int k = 0; h + k < t->nhops[i]; k++)
        if (a[h + k].phase != b[g + k].phase || a[h + k].dim != b[g + k].dim ||
            a[h + k].step != b[g + k].step)
            return 0;
    return 1;
}

/* Does the partial with key (rep, h) at caller + yoff hold anything?  Its
 * target caller + yoff + rest must exist, and some slot j with that
 * remaining route must have an existing origin. */
static int partial_needed(const trie_t *t, int rep, int h, const int *yoff, int *v)
{
    const iso_nbh *nb = t->nb;
    const iso_hop *hp = t->hops + (size_t)rep * (size_t)t->maxhops;
    int len = t->nhops[rep] - h;
    if (t->torus)
        return 1;
    for (int j = 0; j < nb->d; j++)
        v[j] = yoff[j];
    for (int k = h; k < t->nhops[rep]; k++)
        hop_add(t, hp[k].dim, hp[k].step, v);
    if (!on_mesh(nb, v, 1, NULL))
        return 0;
    for (int j = 0; j < nb->s; j++) {
        const int *c = nb->offsets + (size_t)j * (size_t)nb->d;
        if (t->nhops[j] < len || !same_suffix(t, j, t->nhops[j] - len, rep, h))
            continue;
        if (on_mesh(nb, c, -1, v)) /* origin = target - C^j */
            return 1;
    }
    return 0;
}

typedef struct {
    partial_t *p;
    int n, cap;
} partials_t;

/* The live partial with key (rep, h), made if there is none; in *index. */
static int partial_find(partials_t *ps, const trie_t *t, int rep, int h, int *index)
{
    int err;
    for (int k = 0; k < ps->n; k++)
        if (ps->p[k].alive && same_suffix(t, ps->p[k].rep, ps->p[k].h, rep, h)) {
            *index = k;
            return MPI_SUCCESS;
        }
    if ((err = iso__grow(&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p)) != MPI_SUCCESS)
        return err;
    memset(&ps->p[ps->n], 0, sizeof(partial_t));
    ps->p[ps->n].rep = rep;
    ps->p[ps->n].h = h;
    ps->p[ps->n].alive = 1;
    *index = ps->n++;
    return MPI_SUCCESS;
}

static int partial_add(partial_t *p, iso_piece pc)
{
    int err = iso__grow(&p->pieces, &p->cap, p->npieces + 1, sizeof *p->pieces);
    if (err == MPI_SUCCESS)
        p->pieces[p->npieces++] = pc;
    return err;
}

static const iso_hop *first_hop(const trie_t *t, const partial_t *p)
{
    return p->h < t->nhops[p->rep] ? t->hops + (size_t)p->rep * (size_t)t->maxhops + p->h : NULL;
}

/* Local ops closing a round: deliver partials whose route has ended, and
 * accumulate those with several pieces that phase `next` sends. */
static int settle(const trie_t *t, partials_t *ps, int next, iso_sched *out, int *delivered)
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < ps->n && !err; k++) {
        partial_t *p = &ps->p[k];
        const iso_hop *h = first_hop(t, p);
        if (!p->alive)
            continue;
        if (h == NULL) {
            for (int e = 0; e < p->npieces && !err; e++) {
                iso_op op = {.kind = ISO_OP_DELIVER, .src = p->pieces[e], .first = !*delivered};
                err = iso__sched_add(out, &op);
                *delivered = 1;
            }
            p->alive = 0;
        } else if (h->phase == next && p->npieces > 1) {
            int acc = out->nacc++;
            for (int e = 0; e < p->npieces && !err; e++) {
                iso_op op = {.kind = ISO_OP_ACC, .src = p->pieces[e], .slot = acc, .first = !e};
                err = iso__sched_add(out, &op);
            }
            p->npieces = 1;
            p->pieces[0] = (iso_piece){ISO_PIECE_ACC, acc};
        }
    }
    return err ? err : iso__sched_end_round(out);
}

static int reduce_phase(trie_t *t, partials_t *ps, int phase, int *tag, iso_sched *out,
                        int *scratch)
{
    const iso_nbh *nb = t->nb;
    int d = nb->d, err = MPI_SUCCESS, n0 = ps->n;
    int *done = calloc((size_t)n0 + 1, sizeof(int)), *list = malloc(sizeof(int) * (size_t)(n0 + 1));
    int *delta = calloc((size_t)d + 1, sizeof(int)), *yoff = calloc((size_t)d + 1, sizeof(int));
    int *v = calloc((size_t)d + 1, sizeof(int));
    if (!done || !list || !delta || !yoff || !v) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int k = 0; k < n0 && !err; k++) {
        const iso_hop *lead = ps->p[k].alive ? first_hop(t, &ps->p[k]) : NULL;
        int nl = 0, msg = -1;
        if (lead == NULL || lead->phase != phase || done[k])
            continue;
        for (int m = k; m < n0; m++) {
            const iso_hop *h = ps->p[m].alive ? first_hop(t, &ps->p[m]) : NULL;
            if (h && !done[m] && h->phase == phase && h->dim == lead->dim && h->step == lead->step) {
                done[m] = 1;
                list[nl++] = m;
            }
        }
        if (nl > out->struct_max_entries)
            out->struct_max_entries = nl;
        memset(delta, 0, sizeof(int) * (size_t)d);
        hop_add(t, lead->dim, lead->step, delta);
        out->struct_hops += nl;
        /* outgoing: our partials */
        for (int e = 0; e < nl && !err; e++) {
            partial_t *p = &ps->p[list[e]];
            memset(yoff, 0, sizeof(int) * (size_t)d);
            if (!partial_needed(t, p->rep, p->h, yoff, v))
                continue;
            if (p->npieces != 1) { /* settle() leaves exactly one */
                err = iso__error(ISO_ERR_INTERN);
                break;
            }
            err = iso__sched_msg_add(out, &msg, p->pieces[0]);
        }
        if (!err && msg >= 0)
            err = emit_send(out, nb, delta, msg, *tag, scratch);
        /* incoming: the same keys, from caller - delta, one hop further */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            int rep = ps->p[list[e]].rep, h = ps->p[list[e]].h, q;
            /* the partial exists whether or not data comes: structural */
            if ((err = partial_find(ps, t, rep, h + 1, &q)) != MPI_SUCCESS)
                break;
            for (int j = 0; j < d; j++)
                yoff[j] = -delta[j];
            if (!partial_needed(t, rep, h, yoff, v))
                continue;
            if ((err = iso__sched_msg_add(out, &msg, (iso_piece){ISO_PIECE_VEC, out->nvec++})) ==
                MPI_SUCCESS)
                err = partial_add(&ps->p[q], (iso_piece){msg, out->msgs[msg].n - 1});
        }
        if (!err && msg >= 0)
            err = emit_recv(out, nb, delta, msg, *tag, scratch);
        for (int e = 0; e < nl; e++) /* sent: gone from here */
            ps->p[list[e]].alive = 0;
        ++*tag;
    }
fn_exit:
    free(done);
    free(list);
    free(delta);
    free(yoff);
    free(v);
    return err;
}

static int build_reduction(trie_t *t, const int *phases, int nphases, int personalized,
                           iso_sched *out, int *scratch)
{
    const iso_nbh *nb = t->nb;
    partials_t ps = {NULL, 0, 0};
    int err = MPI_SUCCESS, tag = 0, delivered = 0;
    /* our own contributions, one partial per distinct route.  The partials
     * (and so message order and tags) are the same on every process; only
     * their pieces depend on what exists around it. */
    for (int i = 0; i < nb->s && !err; i++) {
        int q;
        if ((err = partial_find(&ps, t, i, 0, &q)) == MPI_SUCCESS &&
            (t->torus || on_mesh(nb, nb->offsets + (size_t)i * (size_t)nb->d, 1, NULL)))
            err = partial_add(&ps.p[q], (iso_piece){ISO_PIECE_USER, personalized ? i : 0});
    }
    if (!err)
        err = settle(t, &ps, nphases > 0 ? phases[0] : -1, out, &delivered);
    for (int p = 0; p < nphases && !err; p++) {
        err = reduce_phase(t, &ps, phases[p], &tag, out, scratch);
        if (!err)
            err = settle(t, &ps, p + 1 < nphases ? phases[p + 1] : -1, out, &delivered);
    }
    out->struct_phases = nphases;
    out->struct_msgs = out->ntags = tag;
    for (int k = 0; k < ps.n; k++)
        free(ps.p[k].pieces);
    free(ps.p);
    return err;
}

int iso__build_combining(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                         const int *line, iso_sched *out)
{
    int personalized = a->coll == ISO_ALLTOALL || a->coll == ISO_SCATTER_REDUCE;
    int *phases = NULL, nphases = 0, tag = 0, delivered = 0, err = MPI_SUCCESS;
    int *scratch = malloc(sizeof(int) * (size_t)(nb->d + 1));
    trie_t t;
    memset(&t, 0, sizeof t);
    t.nb = nb;
    t.line = line;
    t.torus = 1;
    for (int j = 0; j < nb->d; j++)
        t.torus &= nb->periods[j] != 0;
    if (scratch == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    else
        err = trie_build(&t, route, personalized, &phases, &nphases);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    if (iso__is_reduction(a->coll)) {
        err = build_reduction(&t, phases, nphases, personalized, out, scratch);
        goto fn_exit;
    }
    /* slots with the zero route (self) are delivered from the send buffer */
    for (int g = 0; g < (personalized ? nb->s : (nb->s > 0)) && !err; g++)
        if (t.nodes[g].nfinal > 0 && (t.torus || on_mesh(nb, t.nodes[g].prefix, -1, NULL)))
            err = add_deliveries(out, &t.nodes[g], source_of(&t, g, personalized), &delivered);
    if (!err)
        err = iso__sched_end_round(out);
    for (int p = 0; p < nphases && !err; p++)
        err = build_phase(&t, phases[p], personalized, &tag, out, &delivered, scratch);
    out->struct_phases = nphases;
    out->struct_msgs = out->ntags = tag;
    out->struct_hops = t.nnodes - (personalized ? nb->s : (nb->s > 0));
fn_exit:
    trie_free(&t);
    free(phases);
    free(scratch);
    return err;
}
