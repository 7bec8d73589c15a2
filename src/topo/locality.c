/* Locality: which processes of a communicator share a region -- a node,
 * or a package or NUMA domain inside one (iso_locality) -- from
 * ISO_NODE_MAP (pretend layouts, for tests and benchmarks on one machine)
 * or from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) and hwloc; cached on
 * the communicator per level (DESIGN.md, "Sparse dynamic data exchange"). */
#include "topo/topo.h"
#include <errno.h>
#include <hwloc.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static int keyval = MPI_KEYVAL_INVALID;

/* The attribute: the locality of each level computed so far. */
typedef struct {
    iso_locality *at[ISO_NLEVELS];
} locality_cache;

static const char *const level_names[ISO_NLEVELS] = {"node", "package", "numa"};

static void locality_free(iso_locality *l)
{
    int finalized = 0;
    if (l == NULL)
        return;
    MPI_Finalized(&finalized);
    if (!finalized && l->node_comm != MPI_COMM_NULL)
        MPI_Comm_free(&l->node_comm);
    free(l->node); /* node, local, members share one allocation */
    free(l->node_first);
    free(l);
}

static int delete_fn(MPI_Comm comm, int kv, void *val, void *extra)
{
    locality_cache *c = val;
    (void)comm;
    (void)kv;
    (void)extra;
    for (int k = 0; k < ISO_NLEVELS; k++)
        locality_free(c->at[k]);
    free(c);
    return MPI_SUCCESS;
}

int iso__locality_option(const char *where, const char *value, int *level)
{
    if (!strcasecmp(value, "auto")) { /* node: nothing measured yet shows a finer level pays */
        *level = ISO_LEVEL_NODE;
        return MPI_SUCCESS;
    }
    for (int k = 0; k < ISO_NLEVELS; k++)
        if (!strcasecmp(value, level_names[k])) {
            *level = k;
            return MPI_SUCCESS;
        }
    return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" is not a locality level (node, package, "
                                        "numa, auto)", where, value);
}

static void drop_world_cache(void)
{
    iso__world_attr_delete(keyval);
}

/* The INFO code for a malformed ISO_NODE_MAP, with the reason. */
static int map_error(const char *map, int count, const char *why)
{
    return iso__error_msg(ISO_ERR_INFO, "environment ISO_NODE_MAP=\"%.120s%s\" is not one entry "
                                        "node[.package[.numa]] of non-negative integers for each "
                                        "of the %d world ranks, separated by commas: %s",
                          map, strlen(map) > 120 ? "..." : "", count, why);
}

/* Entry `index` of ISO_NODE_MAP, which must be exactly `count` entries
 * separated by commas, each one to three ids (digits only, at most
 * INT_MAX) joined by dots: node, package in the node, NUMA domain in the
 * package; ids not given are 0. */
static int map_entry(const char *map, int count, int index, int id[3])
{
    int n = 0, part = 0;
    const char *p = map;
    id[0] = -1;
    for (;;) {
        char *end;
        long v;
        if (*p < '0' || *p > '9')
            return map_error(map, count, "an id that is not a non-negative integer");
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || v > INT_MAX)
            return map_error(map, count, "an id above INT_MAX");
        if (n == index) {
            id[part] = (int)v;
            for (int k = part + 1; k < 3; k++)
                id[k] = 0;
        }
        if (*end == '.') {
            if (++part == 3)
                return map_error(map, count, "an entry of more than three ids");
        } else {
            part = 0;
            n++;
            if (*end == '\0')
                break;
            if (*end != ',')
                return map_error(map, count, "an id that is not a non-negative integer");
        }
        p = end + 1;
    }
    if (n != count) {
        char why[64];
        snprintf(why, sizeof why, "%d entries", n);
        return map_error(map, count, why);
    }
    return MPI_SUCCESS;
}

/* The logical index of the object of type t (package, NUMA node) whose
 * processors hold all of this thread's binding, or -1: bound across
 * several, or hwloc cannot tell.  An unbound process is bound to the
 * whole machine: inside the package only on a machine of one package. */
static int hwloc_region(hwloc_obj_type_t t)
{
    hwloc_topology_t topo;
    hwloc_bitmap_t set = NULL;
    int found = -1;
    if (hwloc_topology_init(&topo) != 0)
        return -1;
    if (hwloc_topology_load(topo) == 0 && (set = hwloc_bitmap_alloc()) != NULL &&
        hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_THREAD) == 0 && !hwloc_bitmap_iszero(set)) {
        int n = hwloc_get_nbobjs_by_type(topo, t);
        for (int k = 0; k < n && found < 0; k++) {
            hwloc_obj_t o = hwloc_get_obj_by_type(topo, t, (unsigned)k);
            if (o != NULL && o->cpuset != NULL && hwloc_bitmap_isincluded(set, o->cpuset))
                found = (int)o->logical_index;
        }
    }
    hwloc_bitmap_free(set);
    hwloc_topology_destroy(topo);
    return found;
}

/* This process's region key at `level`: key[0] equal on processes of one
 * node, distinct between nodes (non-negative); key[1], key[2] the region
 * inside the node (0 at level node; key[1] -1: hwloc cannot place this
 * process in one object of the level). */
static int region_key(MPI_Comm comm, int level, int key[3])
{
    const char *map = getenv("ISO_NODE_MAP");
    MPI_Group group, world;
    MPI_Comm shm;
    int rank, other, err, zero = 0;
    key[0] = -1;
    key[1] = key[2] = 0;
    if ((err = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        return err;
    if (map != NULL && *map != '\0') {
        int wsize;
        if ((err = MPI_Comm_size(MPI_COMM_WORLD, &wsize)) != MPI_SUCCESS ||
            (err = MPI_Comm_group(comm, &group)) != MPI_SUCCESS)
            return err;
        if ((err = MPI_Comm_group(MPI_COMM_WORLD, &world)) == MPI_SUCCESS) {
            err = MPI_Group_translate_ranks(group, 1, &rank, world, &other);
            MPI_Group_free(&world);
        }
        MPI_Group_free(&group);
        if (err != MPI_SUCCESS)
            return err;
        if (other == MPI_UNDEFINED)
            return iso__error_msg(ISO_ERR_INFO, "environment ISO_NODE_MAP names the ranks of "
                                                "MPI_COMM_WORLD, and this process is not in it");
        if ((err = map_entry(map, wsize, other, key)) != MPI_SUCCESS)
            return err;
        if (level < ISO_LEVEL_NUMA) /* the ids below the level do not count */
            key[2] = 0;
        if (level < ISO_LEVEL_PACKAGE)
            key[1] = 0;
        return MPI_SUCCESS;
    }
    /* the node's key: the comm rank of its process 0 */
    if ((err = MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm)) !=
        MPI_SUCCESS)
        return err;
    if ((err = MPI_Comm_group(shm, &group)) == MPI_SUCCESS) {
        if ((err = MPI_Comm_group(comm, &world)) == MPI_SUCCESS) {
            err = MPI_Group_translate_ranks(group, 1, &zero, world, key);
            MPI_Group_free(&world);
        }
        MPI_Group_free(&group);
    }
    MPI_Comm_free(&shm);
    if (level == ISO_LEVEL_PACKAGE)
        key[1] = hwloc_region(HWLOC_OBJ_PACKAGE);
    else if (level == ISO_LEVEL_NUMA)
        key[1] = hwloc_region(HWLOC_OBJ_NUMANODE);
    return err;
}

/* What every process contributes to the allgather: the level it asked
 * for and its region key. */
enum { K_LEVEL, K_NODE, K_SUB1, K_SUB2, K_INTS };

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Nodes where hwloc could not place some process (key[K_SUB1] -1) are
 * one region: their processes' keys below the node become 0.  The number
 * of such nodes goes to l->whole_nodes. */
static int whole_nodes(iso_locality *l, int *keys)
{
    int p = l->size, n = 0, *bad = malloc(sizeof(int) * ((size_t)p + 1));
    if (bad == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int r = 0; r < p; r++)
        if (keys[K_INTS * r + K_SUB1] < 0)
            bad[n++] = keys[K_INTS * r + K_NODE];
    qsort(bad, (size_t)n, sizeof(int), cmp_int);
    l->whole_nodes = 0;
    for (int k = 0; k < n; k++)
        l->whole_nodes += k == 0 || bad[k] != bad[k - 1];
    for (int r = 0; r < p && n > 0; r++)
        if (bsearch(&keys[K_INTS * r + K_NODE], bad, (size_t)n, sizeof(int), cmp_int))
            keys[K_INTS * r + K_SUB1] = keys[K_INTS * r + K_SUB2] = 0;
    free(bad);
    return MPI_SUCCESS;
}

/* Ranks ordered by (region key, rank). */
static const int *sort_keys;
static int same_region(int x, int y)
{
    return !memcmp(&sort_keys[K_INTS * x + K_NODE], &sort_keys[K_INTS * y + K_NODE],
                   sizeof(int) * (K_INTS - K_NODE));
}
static int by_key(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    for (int k = K_NODE; k < K_INTS; k++)
        if (sort_keys[K_INTS * x + k] != sort_keys[K_INTS * y + k])
            return sort_keys[K_INTS * x + k] < sort_keys[K_INTS * y + k] ? -1 : 1;
    return (x > y) - (x < y);
}

/* Fills node, local, node_first, members from every rank's key. */
static int build(iso_locality *l, int *keys)
{
    int p = l->size, *order = malloc(sizeof(int) * (size_t)p), *first_of, nn = 0;
    if (order == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int r = 0; r < p; r++)
        order[r] = r;
    sort_keys = keys;
    qsort(order, (size_t)p, sizeof(int), by_key);
    /* a region's lowest rank opens its run in order; number the regions
     * by that rank: mark each rank with the lowest rank of its region */
    first_of = l->members; /* scratch until members is filled */
    for (int k = 0; k < p; k++) {
        int lead = (k > 0 && same_region(order[k], order[k - 1])) ? first_of[order[k - 1]]
                                                                  : order[k];
        first_of[order[k]] = lead;
    }
    for (int r = 0; r < p; r++) /* ids in order of the lowest ranks */
        l->node[r] = first_of[r] == r ? nn++ : -1;
    for (int r = 0; r < p; r++)
        l->node[r] = l->node[first_of[r]];
    free(order);
    l->nnodes = nn;
    if ((l->node_first = calloc((size_t)nn + 1, sizeof(int))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int r = 0; r < p; r++)
        l->node_first[l->node[r] + 1]++;
    for (int n = 0; n < nn; n++)
        l->node_first[n + 1] += l->node_first[n];
    l->min_node_size = p;
    l->max_node_size = 0;
    for (int n = 0; n < nn; n++) {
        int sz = iso__node_size(l, n);
        l->min_node_size = sz < l->min_node_size ? sz : l->min_node_size;
        l->max_node_size = sz > l->max_node_size ? sz : l->max_node_size;
    }
    {
        int *fill = keys; /* reused: next free slot per node */
        for (int n = 0; n < nn; n++)
            fill[n] = l->node_first[n];
        for (int r = 0; r < p; r++) { /* ascending r: local ranks in rank order */
            l->local[r] = fill[l->node[r]] - l->node_first[l->node[r]];
            l->members[fill[l->node[r]]++] = r;
        }
    }
    return MPI_SUCCESS;
}

static int compute(MPI_Comm comm, int level, iso_locality **out)
{
    iso_locality *l = calloc(1, sizeof *l);
    int *keys = NULL, key[K_INTS], rank, err, key_err;
    *out = NULL;
    if (l == NULL)
        return iso__error(ISO_ERR_NOMEM);
    l->node_comm = MPI_COMM_NULL;
    l->level = level;
    if ((err = MPI_Comm_size(comm, &l->size)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        goto fn_fail;
    l->node = malloc(sizeof(int) * 3 * (size_t)l->size);
    keys = malloc(sizeof(int) * K_INTS * (size_t)l->size);
    if (l->node == NULL || keys == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    l->local = l->node + l->size;
    l->members = l->node + 2 * l->size;
    /* A local failure still joins the allgather (as node key -1, which no
     * node has), so a bad map on one process fails the call on all of
     * them; the level travels too, so that processes which asked for
     * different levels fail alike instead of disagreeing on regions. */
    key[K_LEVEL] = level;
    if ((key_err = region_key(comm, level, key + K_NODE)) != MPI_SUCCESS)
        key[K_NODE] = -1;
    if ((err = MPI_Allgather(key, K_INTS, MPI_INT, keys, K_INTS, MPI_INT, comm)) != MPI_SUCCESS)
        goto fn_fail;
    if ((err = key_err) != MPI_SUCCESS)
        goto fn_fail;
    for (int r = 0; r < l->size; r++) {
        if (keys[K_INTS * r + K_NODE] < 0) {
            err = iso__error_msg(ISO_ERR_INFO, "environment ISO_NODE_MAP is malformed on rank %d",
                                 r);
            goto fn_fail;
        }
        if (keys[K_INTS * r + K_LEVEL] != level) {
            err = iso__error_msg(ISO_ERR_INFO, "this process asked for locality level %s, rank "
                                               "%d for %s (iso_locality, ISO_LOCALITY)",
                                 level_names[level], r,
                                 level_names[keys[K_INTS * r + K_LEVEL] % ISO_NLEVELS]);
            goto fn_fail;
        }
    }
    if ((err = whole_nodes(l, keys)) != MPI_SUCCESS || (err = build(l, keys)) != MPI_SUCCESS ||
        (err = MPI_Comm_split(comm, l->node[rank], rank, &l->node_comm)) != MPI_SUCCESS)
        goto fn_fail;
    free(keys);
    *out = l;
    return MPI_SUCCESS;
fn_fail:
    free(keys);
    locality_free(l);
    return err;
}

int iso__locality_at(MPI_Comm comm, int level, const iso_locality **out)
{
    locality_cache *c = NULL;
    iso_locality *l = NULL;
    int flag = 0, err = MPI_SUCCESS;
    *out = NULL;
    if (level < 0 || level >= ISO_NLEVELS)
        return iso__error_msg(ISO_ERR_INTERN, "locality level %d", level);
    iso__lock();
    if (keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL)) ==
            MPI_SUCCESS)
        err = iso__at_finalize(drop_world_cache);
    iso__unlock();
    if (err != MPI_SUCCESS || (err = MPI_Comm_get_attr(comm, keyval, &c, &flag)) != MPI_SUCCESS)
        return err;
    if (!flag) {
        if ((c = calloc(1, sizeof *c)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        if ((err = MPI_Comm_set_attr(comm, keyval, c)) != MPI_SUCCESS) {
            free(c);
            return err;
        }
    }
    if (c->at[level] == NULL) {
        if ((err = compute(comm, level, &l)) != MPI_SUCCESS)
            return err;
        c->at[level] = l;
    }
    *out = c->at[level];
    return MPI_SUCCESS;
}

int iso__locality_get(MPI_Comm comm, const iso_locality **out)
{
    return iso__locality_at(comm, ISO_LEVEL_NODE, out);
}

void iso__locality_report(MPI_Comm comm, const iso_locality *l)
{
    static int said;
    int rank = 0;
    if (said || l->whole_nodes == 0 || MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0)
        return;
    said = 1;
    fprintf(stderr, "isocoll: iso_locality=%s: on %d node%s hwloc cannot place every process in "
                    "one %s (unbound, or bound across several): %s taken whole\n",
            level_names[l->level], l->whole_nodes, l->whole_nodes == 1 ? "" : "s",
            level_names[l->level], l->whole_nodes == 1 ? "it is" : "they are");
}

int iso__locality_partner(const iso_locality *l, int r, int n)
{
    int g;
    if (l->node[r] == n)
        return r;
    g = l->node_first[l->node[r]] + l->local[r];
    return l->members[l->node_first[n] + g % iso__node_size(l, n)];
}
