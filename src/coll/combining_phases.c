/* A trie's messages, phase by phase (allgather, alltoall): per phase, one
 * packed message per distinct hop, holding the trie nodes that hop creates,
 * sent only where the nodes carry data on a non-periodic mesh; then the
 * deliveries of the nodes that arrived. */
#include "coll/combining.h"
#include <stdlib.h>
#include <string.h>

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
    err = iso__idmap_init(&groups, (size_t)n);
    for (int k = 0; k < n && !err; k++) {
        const node_t *nd = &t->nodes[nroots + k];
        int key[4] = {nd->phase, nd->dim, nd->step, 0}, fresh;
        err = iso__idmap_get(&groups, key, &gid[k], &fresh);
        nphase[k] = phase_index(phases, nphases, nd->phase);
    }
    ngroups = groups.n;
    iso__idmap_free(&groups);
    if (!err && (gphase = malloc(sizeof(int) * ((size_t)ngroups + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int k = 0; k < n && !err; k++)
        gphase[gid[k]] = nphase[k];
    if (!err)
        err = iso__bucket(gid, n, ngroups, &t->group_start, &t->group_nodes);
    if (!err)
        err = iso__bucket(gphase, ngroups, nphases, &t->phase_groups_start, &t->phase_groups);
    if (!err)
        err = iso__bucket(nphase, n, nphases, &t->phase_nodes_start, &t->phase_nodes);
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
int iso__emit_send(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
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
int iso__emit_recv(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
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
            err = iso__emit_send(out, nb, delta, msg, *tag, scratch);

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
            err = iso__emit_recv(out, nb, delta, msg, *tag, scratch);
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

int iso__build_trie_schedule(trie_t *t, const int *phases, int nphases, int nroots,
                             int personalized, iso_sched *out, int *scratch)
{
    const iso_nbh *nb = t->nb;
    int tag = 0, delivered = 0, err;
    if ((err = group_nodes(t, phases, nphases, nroots)) != MPI_SUCCESS)
        return err;
    /* slots with the zero route (self) are delivered from the send buffer */
    for (int g = 0; g < nroots && !err; g++)
        if (t->nodes[g].nfinal > 0 && (t->torus || on_mesh(nb, t->nodes[g].prefix, -1, NULL)))
            err = add_deliveries(out, &t->nodes[g], source_of(t, g, personalized), &delivered);
    if (!err)
        err = iso__sched_end_round(out);
    for (int p = 0; p < nphases && !err; p++)
        err = build_phase(t, p, nroots, personalized, &tag, out, &delivered, scratch);
    out->struct_phases = nphases;
    out->struct_msgs = out->ntags = tag;
    out->struct_hops = t->nnodes - nroots;
    return err;
}
