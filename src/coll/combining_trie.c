/* The routes of every slot and the trie merging them (combining.c has the
 * picture): a node is "the block of group g after these hops". */
#include "coll/combining.h"
#include <stdlib.h>
#include <string.h>

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

void iso__trie_free(trie_t *t)
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

/* The route of every slot (packed), and the distinct phases in order. */
int iso__routes_make(trie_t *t, iso_route_fn route, int **phases, int *nphases)
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
int iso__trie_build(trie_t *t, iso_route_fn route, int personalized, int **phases,
                    int *nphases)
{
    const iso_nbh *nb = t->nb;
    int s = nb->s, nroots = personalized ? s : (s > 0), err, root;
    idmap children; /* (parent, phase, dim, step) -> child - nroots */
    t->cur = malloc(sizeof(int) * (size_t)(s + 1));
    t->hp = calloc((size_t)s + 1, sizeof(int));
    if (!t->cur || !t->hp)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = iso__routes_make(t, route, phases, nphases)) != MPI_SUCCESS)
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
    if ((err = iso__idmap_init(&children, (size_t)t->nall)) != MPI_SUCCESS)
        return err;
    for (int p = 0; p < *nphases && !err; p++) {
        for (int i = 0; i < s && !err; i++) {
            const iso_hop *h = route_of(t, i) + t->hp[i];
            int key[4], id, fresh, child;
            if (t->hp[i] >= t->nhops[i] || h->phase != (*phases)[p])
                continue;
            key[0] = t->cur[i], key[1] = h->phase, key[2] = h->dim, key[3] = h->step;
            if ((err = iso__idmap_get(&children, key, &id, &fresh)) != MPI_SUCCESS)
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
    iso__idmap_free(&children);
    for (int i = 0; i < s && !err; i++)
        err = push_int(&t->nodes[t->cur[i]].final, &t->nodes[t->cur[i]].nfinal,
                       &t->nodes[t->cur[i]].final_cap, i);
    return err;
}
