/* Message combining's figures without a schedule (what auto needs to
 * decide).  What iso__build_combining sets, from the routes alone:
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
#include "coll/combining.h"
#include <stdlib.h>
#include <string.h>

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
    if ((err = iso__routes_make(&t, route, &phases, &nphases)) != MPI_SUCCESS ||
        (err = iso__idmap_init(&hops, 64)) != MPI_SUCCESS ||
        (err = iso__idmap_init(&blocks, (size_t)t.nall)) != MPI_SUCCESS)
        goto fn_exit;
    if ((tri = malloc(sizeof(int) * ((size_t)t.nall + 1))) == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int k = 0; k < t.nall && !err; k++) {
        int key[4] = {t.hops[k].phase, t.hops[k].dim, t.hops[k].step, 0}, fresh;
        err = iso__idmap_get(&hops, key, &tri[k], &fresh);
    }
    if (!err && (count = calloc((size_t)hops.n + 1, sizeof(int))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < nb->s && !err; i++) {
        const iso_hop *r = route_of(&t, i);
        int prev = 0; /* id of the prefix (or suffix) so far, + 1; 0: empty */
        for (int q = 0; q < t.nhops[i] && !err; q++) {
            int h = reduction ? t.nhops[i] - 1 - q : q; /* suffixes grow from the end */
            int key[4] = {prev, r[h].phase, r[h].dim, r[h].step}, id, fresh = 1;
            if (!personalized && (err = iso__idmap_get(&blocks, key, &id, &fresh)) != MPI_SUCCESS)
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
    iso__idmap_free(&hops);
    iso__idmap_free(&blocks);
    free(tri);
    free(count);
    free(phases);
    free(t.hops);
    free(t.first);
    free(t.nhops);
    return err;
}
