/* Message combining's parts, shared by its files only (nothing else in
 * coll/ includes this; coll.h declares the builder and its figures):
 *   combining.c          the builder's top level (iso__build_combining)
 *   combining_ids.c      tuples of 4 ints -> consecutive ids; bucketing by id
 *   combining_trie.c     the routes of every slot and the trie merging them
 *   combining_phases.c   a trie's messages, phase by phase (allgather, alltoall)
 *   combining_reduce.c   reductions: partial results combined on the way
 *   combining_figures.c  the figures of a schedule, from the routes alone */
#ifndef ISO_COLL_COMBINING_H
#define ISO_COLL_COMBINING_H

#include "coll/coll.h"

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

int iso__idmap_init(idmap *m, size_t expect);
void iso__idmap_free(idmap *m);
/* The id of tuple k: the one it has, or the next one (*fresh = 1). */
int iso__idmap_get(idmap *m, const int *k, int *id, int *fresh);
/* Counting sort: for keys key[0..n) in [0, nkeys), start[0..nkeys] and
 * items (0..n-1 grouped by key, ascending within a key). */
int iso__bucket(const int *key, int n, int nkeys, int **start, int **items);

/* ---- the route trie (combining_trie.c) ------------------------------------- */
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

static inline const iso_hop *route_of(const trie_t *t, int i)
{
    return t->hops + t->first[i];
}

/* v += step * (unit vector of dim, or the line vector for dim == d). */
static inline void hop_add(const trie_t *t, int dim, int step, int *v)
{
    if (dim < t->nb->d) {
        v[dim] += step;
        return;
    }
    for (int j = 0; j < t->nb->d; j++)
        v[j] += step * t->line[j];
}

/* Is caller + sign*a + b on the mesh (b may be NULL)? */
static inline int on_mesh(const iso_nbh *nb, const int *a, int sign, const int *b)
{
    iso_grid g = iso__nbh_grid(nb);
    return iso__grid_point(&g, a, sign, b, NULL);
}

/* The route of every slot (packed), and the distinct phases in order. */
int iso__routes_make(trie_t *t, iso_route_fn route, int **phases, int *nphases);
/* Builds the trie: nodes are created phase by phase, in slot order. */
int iso__trie_build(trie_t *t, iso_route_fn route, int personalized, int **phases,
                    int *nphases);
void iso__trie_free(trie_t *t);

/* ---- messages (combining_phases.c, combining_reduce.c) ---------------------- */
/* Packs outgoing message msg and sends it to caller + delta.  The routes
 * guarantee that the peer exists when there is something to send. */
int iso__emit_send(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
                   int *scratch);
/* Receives message msg from caller - delta. */
int iso__emit_recv(iso_sched *out, const iso_nbh *nb, const int *delta, int msg, int tag,
                   int *scratch);
/* The schedule of a built trie (allgather, alltoall): the self deliveries,
 * then one round per phase. */
int iso__build_trie_schedule(trie_t *t, const int *phases, int nphases, int nroots,
                             int personalized, iso_sched *out, int *scratch);
/* The schedule of a reduction over the routes (reduce, scatter_reduce). */
int iso__build_reduction(trie_t *t, const int *phases, int nphases, int personalized,
                         iso_sched *out, int *scratch);

#endif
