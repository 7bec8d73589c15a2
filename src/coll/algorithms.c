/* The algorithm table (one builder each) and the schedule cache.  An
 * unknown name is an error, never a silent fallback. */
#include "coll/coll.h"
#include <stdio.h>
#include <string.h>
#include <strings.h>

const iso_algorithm iso__algorithms[] = {
    {"direct", iso__build_direct, NULL, 0},
    {"dimwise", iso__build_dimwise, iso__figures_dimwise, 1},
    {"bruck", iso__build_bruck, iso__figures_bruck, 1},
};
const int iso__nalgorithms = (int)(sizeof iso__algorithms / sizeof iso__algorithms[0]);
const iso_table iso__algorithm_table = ISO_TABLE(iso__algorithms);

int iso__algorithm_option(const char *where, const char *value, int *index)
{
    char names[128];
    int k = iso__table_find(&iso__algorithm_table, value);
    if (k != -2) {
        *index = k;
        return MPI_SUCCESS;
    }
    iso__table_names(&iso__algorithm_table, names, sizeof names);
    return iso__error_msg(ISO_ERR_ALGORITHM, "%s=\"%s\" (%s)", where, value, names);
}

const char *const iso__mode_names[3] = {[ISO_MODE_AUTO] = "auto", [ISO_MODE_PACK] = "pack",
                                        [ISO_MODE_DATATYPE] = "datatype"};

int iso__mode_lookup(const char *name, iso_msg_mode *mode)
{
    for (int k = 0; k < 3; k++)
        if (!strcasecmp(name, iso__mode_names[k])) {
            *mode = (iso_msg_mode)k;
            return MPI_SUCCESS;
        }
    return iso__error(ISO_ERR_INFO);
}

static int build_new(const iso_nbh *nb, const iso_args *a, int alg, iso_sched **out)
{
    int err = iso__sched_new(out);
    if (err == MPI_SUCCESS && (err = iso__algorithms[alg].build(nb, a, *out)) != MPI_SUCCESS) {
        iso__sched_release(*out);
        *out = NULL;
    }
    return err;
}

int iso__schedule_get(iso_nbh *nb, const iso_args *a, int alg, iso_sched **out)
{
    iso_sched **slot = &nb->cache[a->coll][alg];
    int err;
    if (!iso__algorithms[alg].shared)
        return build_new(nb, a, alg, out);
    if (*slot == NULL && (err = build_new(nb, a, alg, slot)) != MPI_SUCCESS)
        return err;
    (*slot)->refs++;
    *out = *slot;
    return MPI_SUCCESS;
}

int iso__figures_get(iso_nbh *nb, const iso_args *a, int alg, iso_figures *out)
{
    int err;
    if (!iso__algorithms[alg].shared)
        return iso__error(ISO_ERR_INTERN);
    if (nb->cache[a->coll][alg]) {
        *out = iso__sched_figures(nb->cache[a->coll][alg]);
        return MPI_SUCCESS;
    }
    if (!nb->have_figures[a->coll][alg]) {
        if ((err = iso__algorithms[alg].figures(nb, a, &nb->figures[a->coll][alg])) != MPI_SUCCESS)
            return err;
        nb->have_figures[a->coll][alg] = 1;
    }
    *out = nb->figures[a->coll][alg];
    return MPI_SUCCESS;
}
