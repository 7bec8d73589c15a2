/* Routing of the mailbox (DESIGN.md, "Mailbox"): where a message moves
 * next, and the spanning trees of broadcasts, per scheme.  Everything here
 * is a pure function of the locality (or the VPT shape) and the ranks, the
 * same on every process, so a forwarding process needs no state.
 *
 * Nodes of any sizes: YGM pairs "the same core offset" on two nodes, which
 * needs equal node sizes.  Here, with s(n) the size of node n and l(r) the
 * local rank of r:
 *   nr    r on node a reaches node b through iso__locality_partner(r, b)
 *         (the locality module's pairing: position of r in the ranks
 *         grouped by node, mod s(b)), which spreads a's processes evenly
 *         over b's, give or take one, whatever the sizes;
 *   nl    a message for d on node b leaves node a from a's process of local
 *         rank l(d) mod s(a) (d's "offset" folded onto a);
 *   nlnr  the channel between nodes a and b is gate(a, b) -- a's process of
 *         local rank b mod s(a) -- and gate(b, a): every pair of nodes has
 *         one channel, and node a's channels are dealt over its processes
 *         round-robin.
 * With equal node sizes these are YGM's offsets exactly. */
#include "mailbox/mailbox.h"

const char *const iso__mb_routing_names[5] = {"none", "nl", "nr", "nlnr", "vpt"};

static int member(const iso_locality *l, int n, int i)
{
    return l->members[l->node_first[n] + i];
}

/* nl: the process of node n through which messages for d leave n. */
static int nl_proxy(const iso_locality *l, int n, int d)
{
    return member(l, n, l->local[d] % iso__node_size(l, n));
}

/* nlnr: the process of node n that holds the channel to node m. */
static int gate(const iso_locality *l, int n, int m)
{
    return member(l, n, m % iso__node_size(l, n));
}

int iso__mb_next_hop(const iso_mb_routes *r, int at, int dest)
{
    const iso_locality *l = r->loc;
    int a, b, x;
    switch (r->routing) {
    case ISO_MB_NONE:
        return dest;
    case ISO_MB_VPT:
        for (int d = 0; d < r->n; d++)
            if (iso__vpt_coord(r->n, r->dims, d, at) != iso__vpt_coord(r->n, r->dims, d, dest))
                return iso__vpt_hop(r->n, r->dims, d, at, dest);
        return dest;
    default:
        break;
    }
    a = l->node[at];
    b = l->node[dest];
    if (a == b)
        return dest; /* the last (local) hop of every scheme */
    switch (r->routing) {
    case ISO_MB_NR: /* remote to the partner on b, then local */
        return iso__locality_partner(l, at, b);
    case ISO_MB_NL: /* local to the proxy, then remote to dest */
        x = nl_proxy(l, a, dest);
        return at == x ? dest : x;
    default: /* nlnr: local to a's gate, remote to b's gate, local */
        x = gate(l, a, b);
        return at == x ? gate(l, b, a) : x;
    }
}

int iso__mb_levels(const iso_mb_routes *r)
{
    switch (r->routing) {
    case ISO_MB_NONE:
        return 1;
    case ISO_MB_NL:
    case ISO_MB_NR:
        return 2;
    case ISO_MB_NLNR:
        return 3;
    default:
        return r->n; /* one hop per dimension at most */
    }
}

int iso__mb_level(const iso_mb_routes *r, int at, int dst)
{
    int hops = 0;
    if (dst < 0) { /* the depth of the broadcast tree below a record of this stage */
        int stage = -1 - dst;
        return stage >= ISO_MB_BC_VPT   ? r->n - (stage - ISO_MB_BC_VPT)
               : stage == ISO_MB_BC_GATE ? 2
               : stage == ISO_MB_BC_NODE || stage == ISO_MB_BC_SPREAD ? 1
                                                                      : 0;
    }
    for (; at != dst; hops++)
        at = iso__mb_next_hop(r, at, dst);
    return hops;
}

/* Every other process of at's node gets `stage`. */
static int to_node(const iso_locality *l, int at, int stage, iso_mb_emit emit,
                   struct iso_mailbox_s *mb)
{
    int n = l->node[at], err = MPI_SUCCESS;
    for (int i = 0; i < iso__node_size(l, n) && !err; i++)
        if (member(l, n, i) != at)
            err = emit(mb, member(l, n, i), stage);
    return err;
}

int iso__mb_bcast_spread(const iso_mb_routes *r, int at, int origin, int stage, iso_mb_emit emit,
                         struct iso_mailbox_s *mb)
{
    const iso_locality *l = r->loc;
    int a = l->node[at], err = MPI_SUCCESS;
    if (stage == ISO_MB_BC_FINAL)
        return MPI_SUCCESS;
    if (stage == ISO_MB_BC_NODE)
        return to_node(l, at, ISO_MB_BC_FINAL, emit, mb);
    if (stage == ISO_MB_BC_START) {
        switch (r->routing) {
        case ISO_MB_NONE: /* a copy to every other process */
            for (int q = 0; q < r->p && !err; q++)
                if (q != at)
                    err = emit(mb, q, ISO_MB_BC_FINAL);
            return err;
        case ISO_MB_NR: /* own node, and one copy per other node to the partner */
            err = to_node(l, at, ISO_MB_BC_FINAL, emit, mb);
            for (int b = 0; b < l->nnodes && !err; b++)
                if (b != a)
                    err = emit(mb, iso__locality_partner(l, at, b), ISO_MB_BC_NODE);
            return err;
        case ISO_MB_NL: /* own node, then every process of it serves its remote share */
            if ((err = to_node(l, at, ISO_MB_BC_SPREAD, emit, mb)) != MPI_SUCCESS)
                return err;
            stage = ISO_MB_BC_SPREAD;
            break;
        case ISO_MB_NLNR: /* own node, then every gate sends one copy over its channels */
            if ((err = to_node(l, at, ISO_MB_BC_GATE, emit, mb)) != MPI_SUCCESS)
                return err;
            stage = ISO_MB_BC_GATE;
            break;
        case ISO_MB_VPT:
            stage = ISO_MB_BC_VPT;
            break;
        }
    }
    (void)origin; /* the trees do not depend on it: at is the origin at START */
    if (stage == ISO_MB_BC_SPREAD) {
        /* the remote processes d with nl_proxy(a, d) == at: local ranks
         * l(at), l(at) + s(a), ... of every other node */
        int sa = iso__node_size(l, a);
        for (int b = 0; b < l->nnodes && !err; b++)
            if (b != a)
                for (int j = l->local[at]; j < iso__node_size(l, b) && !err; j += sa)
                    err = emit(mb, member(l, b, j), ISO_MB_BC_FINAL);
        return err;
    }
    if (stage == ISO_MB_BC_GATE) {
        /* the nodes b with gate(a, b) == at, through their gate to a */
        int sa = iso__node_size(l, a);
        for (int b = l->local[at]; b < l->nnodes && !err; b += sa)
            if (b != a)
                err = emit(mb, gate(l, b, a), ISO_MB_BC_NODE);
        return err;
    }
    /* vpt: dimension by dimension, from stage's dimension on (a binomial-
     * like tree: every process is reached once, over at most n hops) */
    for (int d = stage - ISO_MB_BC_VPT; d < r->n && !err; d++) {
        int stride = iso__vpt_stride(r->n, r->dims, d), c = iso__vpt_coord(r->n, r->dims, d, at);
        for (int v = 0; v < r->dims[d] && !err; v++)
            if (v != c)
                err = emit(mb, at + (v - c) * stride, ISO_MB_BC_VPT + d + 1);
    }
    return err;
}
