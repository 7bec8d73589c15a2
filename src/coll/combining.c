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
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* ---- interning: tuples of 4 ints -> consecutive ids ----------------------
 * Builds must stay O(s log s) for huge neighborhoods: trie children, nodes
 * grouped into messages, route suffixes and the figures are found through
 * this open-addressing table instead of by scanning. */
typedef struct {
    int key[4];
    int id; /* -1: empty */
} idslot;

typedef struct {
    idslot *slot;
    size_t cap; /* a power of two */
    int n;      /* ids handed out: 0 .. n-1 */
} idmap;

static size_t hash4(const int *k)
{
    uint64_t h = 0x9e3779b97f4a7c15ull;
    for (int j = 0; j < 4; j++) {
        h ^= (uint32_t)k[j];
        h *= 0xff51afd7ed558ccdull;
        h ^= h >> 32;
    }
    return (size_t)h;
}

static int idmap_init(idmap *m, size_t expect)
{
    size_t cap = 64;
    while (cap < 2 * expect + 1)
        cap *= 2;
    m->n = 0;
    m->cap = cap;
    if ((m->slot = malloc(sizeof *m->slot * cap)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (size_t k = 0; k < cap; k++)
        m->slot[k].id = -1;
    return MPI_SUCCESS;
}

static void idmap_free(idmap *m)
{
    free(m->slot);
    m->slot = NULL;
}

static idslot *idmap_find(idslot *slot, size_t cap, const int *k)
{
    size_t i = hash4(k) & (cap - 1);
    while (slot[i].id >= 0 && memcmp(slot[i].key, k, sizeof slot[i].key) != 0)
        i = (i + 1) & (cap - 1);
    return &slot[i];
}

/* The id of tuple k: the one it has, or the next one (*fresh = 1). */
static int idmap_get(idmap *m, const int *k, int *id, int *fresh)
{
    idslot *e;
    if (2 * (size_t)(m->n + 1) > m->cap) { /* keep it at most half full */
        size_t cap = 2 * m->cap;
        idslot *slot = malloc(sizeof *slot * cap);
        if (slot == NULL)
            return iso__error(ISO_ERR_NOMEM);
        for (size_t j = 0; j < cap; j++)
            slot[j].id = -1;
        for (size_t j = 0; j < m->cap; j++)
            if (m->slot[j].id >= 0)
                *idmap_find(slot, cap, m->slot[j].key) = m->slot[j];
        free(m->slot);
        m->slot = slot;
        m->cap = cap;
    }
    e = idmap_find(m->slot, m->cap, k);
    *fresh = e->id < 0;
    if (*fresh) {
        memcpy(e->key, k, sizeof e->key);
        e->id = m->n++;
    }
    *id = e->id;
    return MPI_SUCCESS;
}

/* Counting sort: for keys key[0..n) in [0, nkeys), start[0..nkeys] and
 * items (0..n-1 grouped by key, ascending within a key). */
static int bucket(const int *key, int n, int nkeys, int **start, int **items)
{
    *start = calloc((size_t)nkeys + 2, sizeof(int));
    *items = malloc(sizeof(int) * ((size_t)n + 1));
    if (*start == NULL || *items == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < n; i++)
        (*start)[key[i] + 1]++;
    for (int k = 0; k < nkeys; k++)
        (*start)[k + 1] += (*start)[k];
    {
        int *fill = malloc(sizeof(int) * ((size_t)nkeys + 1));
        if (fill == NULL)
            return iso__error(ISO_ERR_NOMEM);
        memcpy(fill, *start, sizeof(int) * (size_t)nkeys);
        for (int i = 0; i < n; i++)
            (*items)[fill[key[i]]++] = i;
        free(fill);
    }
    return MPI_SUCCESS;
}

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
    iso_hop *hops; /* the routes, packed: slot i's are hops[first[i] ..] */
    int *first;    /* s + 1 */
    int *nhops;
    int nall, all_cap;
    int torus; /* every dimension periodic: no existence checks */
    const int *line; /* hops with dim == d move along this vector */
    /* the messages of each phase: groups of nodes with the same hop, in
     * order of first appearance (group_nodes) */
    int *phase_groups_start, *phase_groups; /* per phase index: its groups */
    int *group_start, *group_nodes;         /* per group: its nodes */
    int *phase_nodes_start, *phase_nodes;   /* per phase index: its nodes */
} trie_t;

static const iso_hop *route_of(const trie_t *t, int i)
{
    return t->hops + t->first[i];
}

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
    free(t->first);
    free(t->nhops);
    free(t->phase_groups_start);
    free(t->phase_groups);
    free(t->group_start);
    free(t->group_nodes);
    free(t->phase_nodes_start);
    free(t->phase_nodes);
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

/* The route of every slot (packed), and the distinct phases in order. */
static int routes_make(trie_t *t, iso_route_fn route, int **phases, int *nphases)
{
    const iso_nbh *nb = t->nb;
    int s = nb->s, maxhops = 32 * (nb->d + 1), err = MPI_SUCCESS, *all;
    iso_hop *one = malloc(sizeof(iso_hop) * (size_t)maxhops);
    t->first = malloc(sizeof(int) * (size_t)(s + 1));
    t->nhops = malloc(sizeof(int) * (size_t)(s + 1));
    if (!one || !t->first || !t->nhops)
        err = iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < s && !err; i++) {
        int n = route(nb, t->line, nb->offsets + (size_t)i * (size_t)nb->d, one, maxhops);
        if (n < 0) { /* offsets below 2^30 have short routes */
            err = iso__error(ISO_ERR_INTERN);
            break;
        }
        t->first[i] = t->nall;
        t->nhops[i] = n;
        /* n = 0 (the zero offset): nothing to copy, and hops may still be NULL */
        if (n > 0 &&
            (err = iso__grow(&t->hops, &t->all_cap, t->nall + n, sizeof *t->hops)) == MPI_SUCCESS)
            memcpy(t->hops + t->nall, one, sizeof(iso_hop) * (size_t)n);
        t->nall += n;
    }
    free(one);
    if (err)
        return err;
    t->first[s] = t->nall;
    /* phases are small numbers (below the most hops a route may have) */
    for (int k = 0; k < t->nall; k++)
        if (t->hops[k].phase < 0 || t->hops[k].phase >= maxhops)
            return iso__error(ISO_ERR_INTERN);
    if ((all = calloc((size_t)maxhops + 1, sizeof(int))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int k = 0; k < t->nall; k++)
        all[t->hops[k].phase] = 1;
    *nphases = 0;
    for (int p = 0; p < maxhops; p++)
        if (all[p])
            all[(*nphases)++] = p;
    *phases = all;
    return MPI_SUCCESS;
}

/* Builds the trie: nodes are created phase by phase, in slot order. */
static int trie_build(trie_t *t, iso_route_fn route, int personalized, int **phases, int *nphases)
{
    const iso_nbh *nb = t->nb;
    int s = nb->s, nroots = personalized ? s : (s > 0), err, root;
    idmap children; /* (parent, phase, dim, step) -> child - nroots */
    t->cur = malloc(sizeof(int) * (size_t)(s + 1));
    t->hp = calloc((size_t)s + 1, sizeof(int));
    if (!t->cur || !t->hp)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = routes_make(t, route, phases, nphases)) != MPI_SUCCESS)
        return err;
    for (int g = 0; g < nroots; g++)
        if ((err = new_node(t, -1, -1, 0, 0, g, &root)) != MPI_SUCCESS)
            return err;
    for (int i = 0; i < s; i++) { /* every slot passes through its root */
        node_t *r = &t->nodes[personalized ? i : 0];
        t->cur[i] = personalized ? i : 0;
        if ((err = push_int(&r->pass, &r->npass, &r->pass_cap, i)) != MPI_SUCCESS)
            return err;
    }
    if ((err = idmap_init(&children, (size_t)t->nall)) != MPI_SUCCESS)
        return err;
    for (int p = 0; p < *nphases && !err; p++) {
        for (int i = 0; i < s && !err; i++) {
            const iso_hop *h = route_of(t, i) + t->hp[i];
            int key[4], id, fresh, child;
            if (t->hp[i] >= t->nhops[i] || h->phase != (*phases)[p])
                continue;
            key[0] = t->cur[i], key[1] = h->phase, key[2] = h->dim, key[3] = h->step;
            if ((err = idmap_get(&children, key, &id, &fresh)) != MPI_SUCCESS)
                break;
            child = nroots + id; /* nodes past the roots are made only here, in id order */
            if (fresh && (err = new_node(t, t->cur[i], h->phase, h->dim, h->step,
                                         t->nodes[t->cur[i]].group, &child)) != MPI_SUCCESS)
                break;
            t->cur[i] = child;
            t->hp[i]++;
            err = push_int(&t->nodes[child].pass, &t->nodes[child].npass,
                           &t->nodes[child].pass_cap, i);
        }
    }
    idmap_free(&children);
    for (int i = 0; i < s && !err; i++)
        err = push_int(&t->nodes[t->cur[i]].final, &t->nodes[t->cur[i]].nfinal,
                       &t->nodes[t->cur[i]].final_cap, i);
    return err;
}

/* Index of phase in the sorted phases. */
static int phase_index(const int *phases, int nphases, int phase)
{
    const int *at = bsearch(&phase, phases, (size_t)nphases, sizeof(int), cmp_int);
    return at ? (int)(at - phases) : -1;
}

/* The messages of each phase: the non-root nodes grouped by their hop
 * (phase, dim, step); groups in order of their first node, nodes in index
 * order; and the nodes of each phase in index order. */
static int group_nodes(trie_t *t, const int *phases, int nphases, int nroots)
{
    int n = t->nnodes - nroots, err, *gid = malloc(sizeof(int) * ((size_t)n + 1));
    int *gphase = NULL, *nphase = malloc(sizeof(int) * ((size_t)n + 1)), ngroups;
    idmap groups;
    if (!gid || !nphase) {
        free(gid);
        free(nphase);
        return iso__error(ISO_ERR_NOMEM);
    }
    err = idmap_init(&groups, (size_t)n);
    for (int k = 0; k < n && !err; k++) {
        const node_t *nd = &t->nodes[nroots + k];
        int key[4] = {nd->phase, nd->dim, nd->step, 0}, fresh;
        err = idmap_get(&groups, key, &gid[k], &fresh);
        nphase[k] = phase_index(phases, nphases, nd->phase);
    }
    ngroups = groups.n;
    idmap_free(&groups);
    if (!err && (gphase = malloc(sizeof(int) * ((size_t)ngroups + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int k = 0; k < n && !err; k++)
        gphase[gid[k]] = nphase[k];
    if (!err)
        err = bucket(gid, n, ngroups, &t->group_start, &t->group_nodes);
    if (!err)
        err = bucket(gphase, ngroups, nphases, &t->phase_groups_start, &t->phase_groups);
    if (!err)
        err = bucket(nphase, n, nphases, &t->phase_nodes_start, &t->phase_nodes);
    free(gid);
    free(gphase);
    free(nphase);
    return err;
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

/* One phase (index p of the sorted phases): its outgoing and incoming
 * messages, one per group of nodes (group_nodes), then deliveries. */
static int build_phase(trie_t *t, int p, int nroots, int personalized, int *tag, iso_sched *out,
                       int *delivered, int *scratch)
{
    const iso_nbh *nb = t->nb;
    int d = nb->d, err = MPI_SUCCESS;
    int *delta = calloc((size_t)d + 1, sizeof(int));
    if (!delta)
        return iso__error(ISO_ERR_NOMEM);
    for (int q = t->phase_groups_start[p]; q < t->phase_groups_start[p + 1] && !err; q++) {
        int g = t->phase_groups[q], *list = t->group_nodes + t->group_start[g];
        int nl = t->group_start[g + 1] - t->group_start[g], msg;
        const node_t *lead = &t->nodes[nroots + list[0]];
        if (nl > out->struct_max_entries)
            out->struct_max_entries = nl;
        memset(delta, 0, sizeof(int) * (size_t)d);
        hop_add(t, lead->dim, lead->step, delta);

        /* outgoing: nodes whose parent is here (origin caller - parent prefix) */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            node_t *n = &t->nodes[nroots + list[e]];
            if (!needed(t, n, t->nodes[n->parent].prefix))
                continue;
            err = iso__sched_msg_add(out, &msg, source_of(t, n->parent, personalized));
        }
        if (!err && msg >= 0)
            err = emit_send(out, nb, delta, msg, *tag, scratch);

        /* incoming: nodes that arrive here (origin caller - node prefix) */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            node_t *n = &t->nodes[nroots + list[e]];
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
    for (int q = t->phase_nodes_start[p]; q < t->phase_nodes_start[p + 1] && !err; q++) {
        node_t *n = &t->nodes[nroots + t->phase_nodes[q]];
        if (n->msg_in >= 0)
            err = add_deliveries(out, n, (iso_piece){n->msg_in, n->entry_in}, delivered);
    }
    if (!err)
        err = iso__sched_end_round(out);
    free(delta);
    return err;
}

/* ---- reductions: combine partial results on the way --------------------
 * Reduce and scatter_reduce run the routes forwards but merge instead of
 * copying: at every process, contributions that still have the same
 * remaining route (hence the same final target) are one partial result,
 * reduced before it is forwarded.  Scatter_reduce thus moves one vector per
 * edge of the reversed trie instead of one per block hop.  A remaining
 * route (slot i from hop h on) is named by its suffix id: equal ids, equal
 * hops (interned from the end of each route). */

typedef struct {
    int rep, h;        /* key: the hops of slot rep from index h on */
    iso_piece *pieces; /* contributions present here */
    int npieces, cap;
    int alive;
} partial_t;

typedef struct {
    partial_t *p;
    int n, cap;
    int *sid;       /* per slot i, h = 0 .. nhops[i]: sid[first[i] + i + h] */
    int nsid;       /* suffix ids 0 .. nsid-1; 0 is the empty suffix */
    int *live;      /* per suffix id: its live partial, or -1 */
    int *with_start, *with; /* per suffix id: the slots whose route ends with it */
} partials_t;

static int suffix_id(const partials_t *ps, const trie_t *t, int i, int h)
{
    return ps->sid[t->first[i] + i + h];
}

/* Suffix ids of every slot's route, and the slots that end with each. */
static int suffixes_make(partials_t *ps, const trie_t *t)
{
    int s = t->nb->s, n = t->nall + s, err, *owner;
    idmap m; /* (phase, dim, step, id of the rest) -> id - 1 */
    ps->sid = malloc(sizeof(int) * ((size_t)n + 1));
    owner = malloc(sizeof(int) * ((size_t)n + 1));
    if (!ps->sid || !owner) {
        free(owner);
        return iso__error(ISO_ERR_NOMEM);
    }
    err = idmap_init(&m, (size_t)t->nall);
    for (int i = 0; i < s && !err; i++) {
        const iso_hop *r = route_of(t, i);
        int *sid = ps->sid + t->first[i] + i;
        sid[t->nhops[i]] = 0;
        for (int h = t->nhops[i] - 1; h >= 0 && !err; h--) {
            int key[4] = {r[h].phase, r[h].dim, r[h].step, sid[h + 1]}, id, fresh;
            err = idmap_get(&m, key, &id, &fresh);
            sid[h] = id + 1;
        }
        for (int h = 0; h <= t->nhops[i]; h++)
            owner[t->first[i] + i + h] = i;
    }
    ps->nsid = m.n + 1;
    idmap_free(&m);
    if (!err && (ps->live = malloc(sizeof(int) * ((size_t)ps->nsid + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int k = 0; !err && k < ps->nsid; k++)
        ps->live[k] = -1;
    if (!err) { /* with[]: entries of sid[] bucketed by id, then mapped to their slot */
        err = bucket(ps->sid, n, ps->nsid, &ps->with_start, &ps->with);
        for (int k = 0; !err && k < n; k++)
            ps->with[k] = owner[ps->with[k]];
    }
    free(owner);
    return err;
}

/* Does the partial with key (rep, h) at caller + yoff hold anything?  Its
 * target caller + yoff + rest must exist, and some slot j with that
 * remaining route must have an existing origin. */
static int partial_needed(const trie_t *t, const partials_t *ps, int rep, int h, const int *yoff,
                          int *v)
{
    const iso_nbh *nb = t->nb;
    const iso_hop *hp = route_of(t, rep);
    int id = suffix_id(ps, t, rep, h);
    if (t->torus)
        return 1;
    for (int j = 0; j < nb->d; j++)
        v[j] = yoff[j];
    for (int k = h; k < t->nhops[rep]; k++)
        hop_add(t, hp[k].dim, hp[k].step, v);
    if (!on_mesh(nb, v, 1, NULL))
        return 0;
    for (int q = ps->with_start[id]; q < ps->with_start[id + 1]; q++) {
        const int *c = nb->offsets + (size_t)ps->with[q] * (size_t)nb->d;
        if (on_mesh(nb, c, -1, v)) /* origin = target - C^j */
            return 1;
    }
    return 0;
}

/* The live partial with key (rep, h), made if there is none; in *index. */
static int partial_find(partials_t *ps, const trie_t *t, int rep, int h, int *index)
{
    int id = suffix_id(ps, t, rep, h), err;
    if (ps->live[id] >= 0) {
        *index = ps->live[id];
        return MPI_SUCCESS;
    }
    if ((err = iso__grow(&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p)) != MPI_SUCCESS)
        return err;
    memset(&ps->p[ps->n], 0, sizeof(partial_t));
    ps->p[ps->n].rep = rep;
    ps->p[ps->n].h = h;
    ps->p[ps->n].alive = 1;
    ps->live[id] = ps->n;
    *index = ps->n++;
    return MPI_SUCCESS;
}

static void partial_retire(partials_t *ps, const trie_t *t, int k)
{
    ps->p[k].alive = 0;
    ps->live[suffix_id(ps, t, ps->p[k].rep, ps->p[k].h)] = -1;
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
    return p->h < t->nhops[p->rep] ? route_of(t, p->rep) + p->h : NULL;
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
            partial_retire(ps, t, k);
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

/* The live partials whose next hop is in phase, grouped by that hop (one
 * message each), groups in order of their first partial. */
static int group_partials(const trie_t *t, const partials_t *ps, int phase, int *cand, int *ncand,
                          int **start, int **items, int *ngroups)
{
    int err, *key = malloc(sizeof(int) * ((size_t)ps->n + 1));
    idmap m;
    *ncand = 0;
    if (key == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = idmap_init(&m, 64);
    for (int k = 0; k < ps->n && !err; k++) {
        const iso_hop *h = ps->p[k].alive ? first_hop(t, &ps->p[k]) : NULL;
        int tuple[4], fresh;
        if (h == NULL || h->phase != phase)
            continue;
        tuple[0] = h->dim, tuple[1] = h->step, tuple[2] = tuple[3] = 0;
        err = idmap_get(&m, tuple, &key[*ncand], &fresh);
        cand[(*ncand)++] = k;
    }
    *ngroups = m.n;
    idmap_free(&m);
    if (!err)
        err = bucket(key, *ncand, *ngroups, start, items);
    free(key);
    return err;
}

static int reduce_phase(trie_t *t, partials_t *ps, int phase, int *tag, iso_sched *out,
                        int *scratch)
{
    const iso_nbh *nb = t->nb;
    int d = nb->d, err = MPI_SUCCESS, ncand = 0, ngroups = 0, *start = NULL, *items = NULL;
    int *cand = malloc(sizeof(int) * ((size_t)ps->n + 1));
    int *delta = calloc((size_t)d + 1, sizeof(int)), *yoff = calloc((size_t)d + 1, sizeof(int));
    int *v = calloc((size_t)d + 1, sizeof(int));
    if (!cand || !delta || !yoff || !v) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    if ((err = group_partials(t, ps, phase, cand, &ncand, &start, &items, &ngroups)))
        goto fn_exit;
    for (int g = 0; g < ngroups && !err; g++) {
        int *list = items + start[g], nl = start[g + 1] - start[g], msg = -1;
        const iso_hop *lead = first_hop(t, &ps->p[cand[list[0]]]);
        if (nl > out->struct_max_entries)
            out->struct_max_entries = nl;
        memset(delta, 0, sizeof(int) * (size_t)d);
        hop_add(t, lead->dim, lead->step, delta);
        out->struct_hops += nl;
        /* outgoing: our partials */
        for (int e = 0; e < nl && !err; e++) {
            partial_t *p = &ps->p[cand[list[e]]];
            memset(yoff, 0, sizeof(int) * (size_t)d);
            if (!partial_needed(t, ps, p->rep, p->h, yoff, v))
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
            int rep = ps->p[cand[list[e]]].rep, h = ps->p[cand[list[e]]].h, q;
            /* the partial exists whether or not data comes: structural */
            if ((err = partial_find(ps, t, rep, h + 1, &q)) != MPI_SUCCESS)
                break;
            for (int j = 0; j < d; j++)
                yoff[j] = -delta[j];
            if (!partial_needed(t, ps, rep, h, yoff, v))
                continue;
            if ((err = iso__sched_msg_add(out, &msg, (iso_piece){ISO_PIECE_VEC, out->nvec++})) ==
                MPI_SUCCESS)
                err = partial_add(&ps->p[q], (iso_piece){msg, out->msgs[msg].n - 1});
        }
        if (!err && msg >= 0)
            err = emit_recv(out, nb, delta, msg, *tag, scratch);
        for (int e = 0; e < nl; e++) /* sent: gone from here */
            partial_retire(ps, t, cand[list[e]]);
        ++*tag;
    }
fn_exit:
    free(cand);
    free(start);
    free(items);
    free(delta);
    free(yoff);
    free(v);
    return err;
}

static int build_reduction(trie_t *t, const int *phases, int nphases, int personalized,
                           iso_sched *out, int *scratch)
{
    const iso_nbh *nb = t->nb;
    partials_t ps;
    int err, tag = 0, delivered = 0;
    memset(&ps, 0, sizeof ps);
    err = suffixes_make(&ps, t);
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
    free(ps.sid);
    free(ps.live);
    free(ps.with_start);
    free(ps.with);
    return err;
}

int iso__build_combining(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                         const int *line, iso_sched *out)
{
    int personalized = a->coll == ISO_ALLTOALL || a->coll == ISO_SCATTER_REDUCE;
    int nroots = personalized ? nb->s : (nb->s > 0);
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
    else if (iso__is_reduction(a->coll))
        err = routes_make(&t, route, &phases, &nphases);
    else
        err = trie_build(&t, route, personalized, &phases, &nphases);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    if (iso__is_reduction(a->coll)) {
        err = build_reduction(&t, phases, nphases, personalized, out, scratch);
        goto fn_exit;
    }
    if ((err = group_nodes(&t, phases, nphases, nroots)) != MPI_SUCCESS)
        goto fn_exit;
    /* slots with the zero route (self) are delivered from the send buffer */
    for (int g = 0; g < nroots && !err; g++)
        if (t.nodes[g].nfinal > 0 && (t.torus || on_mesh(nb, t.nodes[g].prefix, -1, NULL)))
            err = add_deliveries(out, &t.nodes[g], source_of(&t, g, personalized), &delivered);
    if (!err)
        err = iso__sched_end_round(out);
    for (int p = 0; p < nphases && !err; p++)
        err = build_phase(&t, p, nroots, personalized, &tag, out, &delivered, scratch);
    out->struct_phases = nphases;
    out->struct_msgs = out->ntags = tag;
    out->struct_hops = t.nnodes - nroots;
fn_exit:
    trie_free(&t);
    free(phases);
    free(scratch);
    return err;
}

/* ---- figures without a schedule -------------------------------------------
 * What iso__build_combining sets, from the routes alone:
 *   phases       the distinct phases of all hops;
 *   msgs         one message (and tag) per distinct hop (phase, dim, step):
 *                every hop of every route is a trie node, or the first hop
 *                of a reduction's partial, of that message;
 *   hops         the blocks those messages carry: personalized alltoall,
 *                every hop of every route (one trie per slot); allgather,
 *                the distinct route prefixes (one shared trie); reductions,
 *                the distinct non-empty route suffixes (one partial each);
 *   max_entries  the most of those one message carries.
 * The offline verifier (tests/t_verify.c) checks them against the built
 * schedules. */
int iso__combining_figures(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                           const int *line, iso_figures *out)
{
    int reduction = iso__is_reduction(a->coll), personalized = a->coll == ISO_ALLTOALL;
    int *phases = NULL, nphases = 0, *count = NULL, *tri = NULL, err;
    idmap hops, blocks; /* hops: (phase, dim, step) -> message; blocks: prefixes or suffixes */
    trie_t t;
    memset(&t, 0, sizeof t);
    memset(out, 0, sizeof *out);
    hops.slot = blocks.slot = NULL;
    t.nb = nb;
    t.line = line;
    if ((err = routes_make(&t, route, &phases, &nphases)) != MPI_SUCCESS ||
        (err = idmap_init(&hops, 64)) != MPI_SUCCESS ||
        (err = idmap_init(&blocks, (size_t)t.nall)) != MPI_SUCCESS)
        goto fn_exit;
    if ((tri = malloc(sizeof(int) * ((size_t)t.nall + 1))) == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int k = 0; k < t.nall && !err; k++) {
        int key[4] = {t.hops[k].phase, t.hops[k].dim, t.hops[k].step, 0}, fresh;
        err = idmap_get(&hops, key, &tri[k], &fresh);
    }
    if (!err && (count = calloc((size_t)hops.n + 1, sizeof(int))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < nb->s && !err; i++) {
        const iso_hop *r = route_of(&t, i);
        int prev = 0; /* id of the prefix (or suffix) so far, + 1; 0: empty */
        for (int q = 0; q < t.nhops[i] && !err; q++) {
            int h = reduction ? t.nhops[i] - 1 - q : q; /* suffixes grow from the end */
            int key[4] = {prev, r[h].phase, r[h].dim, r[h].step}, id, fresh = 1;
            if (!personalized && (err = idmap_get(&blocks, key, &id, &fresh)) != MPI_SUCCESS)
                break;
            prev = personalized ? 0 : id + 1;
            if (fresh) { /* a new block hop of the message of hop h */
                out->hops++;
                if (++count[tri[t.first[i] + h]] > out->max_entries)
                    out->max_entries = count[tri[t.first[i] + h]];
            }
        }
    }
    out->phases = nphases;
    out->msgs = hops.n;
fn_exit:
    idmap_free(&hops);
    idmap_free(&blocks);
    free(tri);
    free(count);
    free(phases);
    free(t.hops);
    free(t.first);
    free(t.nhops);
    return err;
}
