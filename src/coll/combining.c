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
 * message of an operation has its own tag.
 *
 * This file is the builder's top level; its parts, one file each, are
 * listed in combining.h. */
#include "coll/combining.h"
#include <stdlib.h>
#include <string.h>

int iso__build_combining(const iso_nbh *nb, const iso_args *a, iso_route_fn route,
                         const int *line, iso_sched *out)
{
    int personalized = a->coll == ISO_ALLTOALL || a->coll == ISO_SCATTER_REDUCE;
    int nroots = personalized ? nb->s : (nb->s > 0);
    int *phases = NULL, nphases = 0, err = MPI_SUCCESS;
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
        err = iso__routes_make(&t, route, &phases, &nphases);
    else
        err = iso__trie_build(&t, route, personalized, &phases, &nphases);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    if (iso__is_reduction(a->coll)) {
        err = iso__build_reduction(&t, phases, nphases, personalized, out, scratch);
        goto fn_exit;
    }
    err = iso__build_trie_schedule(&t, phases, nphases, nroots, personalized, out, scratch);
fn_exit:
    iso__trie_free(&t);
    free(phases);
    free(scratch);
    return err;
}
