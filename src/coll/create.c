/* Iso_neighborhood_create: the options of a neighborhood (info keys, then
 * the environment for what info does not set), the optional isomorphism
 * check, and the attachment (topo/neighborhood.c). */
#include "coll/coll.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int *algorithm;
    iso_msg_mode *mode;
    int *verify; /* NULL: the key is not accepted here */
} options_t;

static int option(void *ctx, const char *key, const char *value)
{
    options_t *o = ctx;
    if (!strcmp(key, "iso_algorithm"))
        return iso__algorithm_lookup(value, o->algorithm);
    if (!strcmp(key, "iso_combine"))
        return iso__mode_lookup(value, o->mode);
    if (!strcmp(key, "iso_verify") && o->verify)
        return iso__parse_bool(value, o->verify);
    return iso__error(ISO_ERR_INFO);
}

int iso__op_info_parse(MPI_Info info, int *algorithm, iso_msg_mode *mode)
{
    options_t o = {algorithm, mode, NULL};
    return iso__info_each(info, option, &o);
}

/* Defaults from the environment: ISO_ALGORITHM, ISO_COMBINE, ISO_VERIFY. */
static int env_defaults(options_t *o)
{
    static const char *const keys[][2] = {{"ISO_ALGORITHM", "iso_algorithm"},
                                          {"ISO_COMBINE", "iso_combine"},
                                          {"ISO_VERIFY", "iso_verify"}};
    int err = MPI_SUCCESS;
    *o->algorithm = ISO_ALG_AUTO;
    *o->mode = ISO_MODE_AUTO;
    *o->verify = 0;
    for (size_t k = 0; k < sizeof keys / sizeof keys[0] && !err; k++) {
        const char *v = getenv(keys[k][0]);
        if (v && *v)
            err = option(o, keys[k][1], v);
    }
    return err;
}

/* One allreduce: every process must have the same d, s, offsets, algorithm
 * and message mode.  MAX over (x, -x) gives max and -min at once. */
static int verify_isomorphic(MPI_Comm comm, int d, int s, const int *rel, int algorithm,
                             iso_msg_mode mode)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    long long v[8], r[8];
    int err;
    for (size_t i = 0; i < (size_t)s * (size_t)d; i++) {
        h ^= (uint32_t)rel[i];
        h *= 1099511628211ull;
    }
    v[0] = d;
    v[1] = s;
    v[2] = (long long)(h >> 2); /* 62 bits: negation cannot overflow */
    v[3] = 4LL * algorithm + (long long)mode;
    for (int k = 0; k < 4; k++)
        v[4 + k] = -v[k];
    if ((err = MPI_Allreduce(v, r, 8, MPI_LONG_LONG, MPI_MAX, comm)) != MPI_SUCCESS)
        return err;
    if (r[0] != -r[4])
        return iso__error(ISO_ERR_DIMS);
    if (r[1] != -r[5] || r[2] != -r[6])
        return iso__error(ISO_ERR_NOT_ISOMORPHIC);
    if (r[3] != -r[7])
        return iso__error(ISO_ERR_ALGORITHM);
    return MPI_SUCCESS;
}

static int create(MPI_Comm cart, int s, const int *rel, MPI_Info info, MPI_Comm *isocomm)
{
    int d = 0, algorithm, verify, err;
    iso_msg_mode mode;
    options_t o = {&algorithm, &mode, &verify};

    if ((err = iso__cart_check(cart)) != MPI_SUCCESS)
        return err;
    if (s < 0 || isocomm == NULL)
        return iso__error(ISO_ERR_ARG);
    if ((err = MPI_Cartdim_get(cart, &d)) != MPI_SUCCESS)
        return err;
    if (s > 0 && d > 0 && rel == NULL)
        return iso__error(ISO_ERR_ARG);
    for (size_t k = 0; k < (size_t)s * (size_t)d; k++)
        if (rel[k] <= -ISO_MAX_OFFSET || rel[k] >= ISO_MAX_OFFSET)
            return iso__error(ISO_ERR_ARG);
    if ((err = env_defaults(&o)) != MPI_SUCCESS || (err = iso__info_each(info, option, &o)))
        return err;
    if (verify && (err = verify_isomorphic(cart, d, s, rel, algorithm, mode)) != MPI_SUCCESS)
        return err;
    if ((err = iso__nbh_attach(cart, s, rel, algorithm, mode)) != MPI_SUCCESS)
        return err;
    *isocomm = cart;
    return MPI_SUCCESS;
}

int Iso_neighborhood_create_with_info(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                                      MPI_Info info, MPI_Comm *isocomm)
{
    return iso__raise(cartcomm, create(cartcomm, s, relative_coordinates, info, isocomm));
}

int Iso_neighborhood_create(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                            MPI_Comm *isocomm)
{
    return Iso_neighborhood_create_with_info(cartcomm, s, relative_coordinates, MPI_INFO_NULL,
                                             isocomm);
}
