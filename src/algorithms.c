/* The algorithm table and selection: explicit name (info key, then the
 * ISO_ALGORITHM environment variable), else "auto".  An unknown or
 * inapplicable name is an error, never a silent fallback. */
#include "iso_internal.h"
#include <string.h>

const char *const iso__coll_names[ISO_NCOLL] = {"alltoall", "allgather", "reduce",
                                                "scatter_reduce"};

const iso_algorithm iso__algorithms[] = {
    {"direct", iso__build_direct, NULL},
};
const int iso__nalgorithms = (int)(sizeof iso__algorithms / sizeof iso__algorithms[0]);

int iso__algorithm_lookup(const char *name, int *index)
{
    if (!strcmp(name, "auto")) {
        *index = ISO_ALG_AUTO;
        return ISO_ERR_NONE;
    }
    for (int k = 0; k < iso__nalgorithms; k++)
        if (!strcmp(name, iso__algorithms[k].name)) {
            *index = k;
            return ISO_ERR_NONE;
        }
    return ISO_ERR_ALGORITHM;
}

static int applicable(int k, const iso_nbh *nb, const iso_args *a)
{
    return iso__algorithms[k].applicable == NULL || iso__algorithms[k].applicable(nb, a);
}

int iso__algorithm_select(const iso_nbh *nb, const iso_args *a, int requested, int *index)
{
    if (requested != ISO_ALG_AUTO) {
        if (requested < 0 || requested >= iso__nalgorithms || !applicable(requested, nb, a))
            return iso__errclass(ISO_ERR_ALGORITHM);
        *index = requested;
        return MPI_SUCCESS;
    }
    /* auto: only "direct" exists so far; the cost model comes with the
     * message-combining schedules. */
    *index = 0;
    return MPI_SUCCESS;
}

iso_loc iso__block(const iso_side *side, int buf, int i)
{
    iso_loc l = {buf, 0, side->count, side->type};
    switch (side->layout) {
    case ISO_LAYOUT_STRIDED:
        l.disp = (MPI_Aint)i * side->count * side->extent;
        break;
    case ISO_LAYOUT_V:
        l.count = side->counts[i];
        l.disp = (MPI_Aint)side->idispls[i] * side->extent;
        break;
    case ISO_LAYOUT_W:
        l.count = side->counts[i];
        l.disp = side->adispls[i];
        l.type = side->types[i];
        break;
    case ISO_LAYOUT_SAME:
        break;
    }
    return l;
}
