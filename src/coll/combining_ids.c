/* Interning for message combining: tuples of 4 ints -> consecutive ids,
 * in an open-addressing table, and grouping items by id (combining.h). */
#include "coll/combining.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

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

int iso__idmap_init(idmap *m, size_t expect)
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

void iso__idmap_free(idmap *m)
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
int iso__idmap_get(idmap *m, const int *k, int *id, int *fresh)
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
int iso__bucket(const int *key, int n, int nkeys, int **start, int **items)
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
