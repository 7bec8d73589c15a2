/* Locality: which processes of a communicator share a node, from
 * ISO_NODE_MAP (pretend layouts, for tests and benchmarks on one machine)
 * or from MPI_Comm_split_type(MPI_COMM_TYPE_SHARED); cached on the
 * communicator (DESIGN.md, "Sparse dynamic data exchange"). */
#include "topo/topo.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int keyval = MPI_KEYVAL_INVALID;

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
    (void)comm;
    (void)kv;
    (void)extra;
    locality_free(val);
    return MPI_SUCCESS;
}

static void drop_world_cache(void)
{
    iso__world_attr_delete(keyval);
}

/* The INFO code for a malformed ISO_NODE_MAP, with the reason. */
static int map_error(const char *map, int count, const char *why)
{
    return iso__error_msg(ISO_ERR_INFO, "environment ISO_NODE_MAP=\"%.120s%s\" is not one node "
                                        "id (0, 1, ...) for each of the %d world ranks, "
                                        "separated by commas: %s",
                          map, strlen(map) > 120 ? "..." : "", count, why);
}

/* Entry `index` of ISO_NODE_MAP, which must be exactly `count` node ids
 * (digits only, at most INT_MAX) separated by commas. */
static int map_entry(const char *map, int count, int index, int *id)
{
    int n = 0;
    const char *p = map;
    *id = -1;
    for (;;) {
        char *end;
        long v;
        if (*p < '0' || *p > '9')
            return map_error(map, count, "an entry that is not a non-negative integer");
        errno = 0;
        v = strtol(p, &end, 10);
        if (errno || v > INT_MAX)
            return map_error(map, count, "an id above INT_MAX");
        if (n == index)
            *id = (int)v;
        n++;
        if (*end == '\0')
            break;
        if (*end != ',')
            return map_error(map, count, "an entry that is not a non-negative integer");
        p = end + 1;
    }
    if (n != count) {
        char why[64];
        snprintf(why, sizeof why, "%d entries", n);
        return map_error(map, count, why);
    }
    return MPI_SUCCESS;
}

/* This process's node key: equal on processes of one node, distinct
 * between nodes (non-negative). */
static int node_key(MPI_Comm comm, int *key)
{
    const char *map = getenv("ISO_NODE_MAP");
    MPI_Group group, world;
    MPI_Comm shm;
    int rank, other, err, zero = 0;
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
        return map_entry(map, wsize, other, key);
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
    return err;
}

/* Ranks ordered by (key, rank). */
static const int *sort_keys;
static int by_key(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    if (sort_keys[x] != sort_keys[y])
        return sort_keys[x] < sort_keys[y] ? -1 : 1;
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
    /* a node's lowest rank opens its run in order; number the nodes by
     * that rank: mark each rank with the lowest rank of its node first */
    first_of = l->members; /* scratch until members is filled */
    for (int k = 0; k < p; k++) {
        int lead = (k > 0 && keys[order[k]] == keys[order[k - 1]]) ? first_of[order[k - 1]]
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

static int compute(MPI_Comm comm, iso_locality **out)
{
    iso_locality *l = calloc(1, sizeof *l);
    int *keys = NULL, key = -1, rank, err, key_err;
    *out = NULL;
    if (l == NULL)
        return iso__error(ISO_ERR_NOMEM);
    l->node_comm = MPI_COMM_NULL;
    if ((err = MPI_Comm_size(comm, &l->size)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(comm, &rank)) != MPI_SUCCESS)
        goto fn_fail;
    l->node = malloc(sizeof(int) * 3 * (size_t)l->size);
    keys = malloc(sizeof(int) * (size_t)l->size);
    if (l->node == NULL || keys == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    l->local = l->node + l->size;
    l->members = l->node + 2 * l->size;
    /* A local failure still joins the allgather (as key -1, which no node
     * has), so a bad map on one process fails the call on all of them. */
    if ((key_err = node_key(comm, &key)) != MPI_SUCCESS)
        key = -1;
    if ((err = MPI_Allgather(&key, 1, MPI_INT, keys, 1, MPI_INT, comm)) != MPI_SUCCESS)
        goto fn_fail;
    if ((err = key_err) != MPI_SUCCESS)
        goto fn_fail;
    for (int r = 0; r < l->size; r++)
        if (keys[r] < 0) {
            err = iso__error_msg(ISO_ERR_INFO, "environment ISO_NODE_MAP is malformed on rank %d",
                                 r);
            goto fn_fail;
        }
    if ((err = build(l, keys)) != MPI_SUCCESS ||
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

int iso__locality_get(MPI_Comm comm, const iso_locality **out)
{
    iso_locality *l = NULL;
    int flag = 0, err;
    *out = NULL;
    if (keyval == MPI_KEYVAL_INVALID) {
        if ((err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, delete_fn, &keyval, NULL)) !=
                MPI_SUCCESS ||
            (err = iso__at_finalize(drop_world_cache)) != MPI_SUCCESS)
            return err;
    }
    if ((err = MPI_Comm_get_attr(comm, keyval, &l, &flag)) != MPI_SUCCESS)
        return err;
    if (!flag) {
        if ((err = compute(comm, &l)) != MPI_SUCCESS)
            return err;
        if ((err = MPI_Comm_set_attr(comm, keyval, l)) != MPI_SUCCESS) {
            locality_free(l);
            return err;
        }
    }
    *out = l;
    return MPI_SUCCESS;
}

int iso__locality_partner(const iso_locality *l, int r, int n)
{
    int g;
    if (l->node[r] == n)
        return r;
    g = l->node_first[l->node[r]] + l->local[r];
    return l->members[l->node_first[n] + g % iso__node_size(l, n)];
}
