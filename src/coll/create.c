/* Iso_neighborhood_create: the options of a neighborhood (info keys, then
 * the environment for what info does not set), the optional isomorphism
 * check, and the attachment (topo/neighborhood.c). */
#include "coll/coll.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int algorithm;
    iso_msg_mode mode;
    int verify, verbose; /* verbose: ISO_VERBOSE (environment only) */
    int tune;            /* iso_tune: trial calls per candidate, 0 off (coll/tune.c) */
} options_t;

static int set_algorithm(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__algorithm_option(where, value, &((options_t *)ctx)->algorithm);
}

static int set_combine(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    if (iso__mode_lookup(value, &((options_t *)ctx)->mode) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" (auto, pack, datatype)", where, value);
}

static int set_tune(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__tune_option(where, value, &((options_t *)ctx)->tune);
}

static int set_bool(void *ctx, const char *key, const char *value, const char *where)
{
    options_t *o = ctx;
    return iso__option_bool(where, value, !strcmp(key, "verbose") ? &o->verbose : &o->verify);
}

/* The keys of a neighborhood, and of a persistent _init call (which
 * override the neighborhood's algorithm and mode). */
static const iso_option_key create_keys[] = {{"iso_algorithm", set_algorithm},
                                             {"iso_combine", set_combine},
                                             {"iso_verify", set_bool},
                                             {"iso_tune", set_tune},
                                             {"verbose", set_bool}};
static const iso_option_key op_keys[] = {{"iso_algorithm", set_algorithm},
                                         {"iso_combine", set_combine}};

int iso__op_info_parse(MPI_Info info, int *algorithm, iso_msg_mode *mode)
{
    options_t v = {*algorithm, *mode, 0, 0, 0};
    iso_options o = {op_keys, 2, "", &v, NULL};
    int err = iso__options_info(&o, info);
    *algorithm = v.algorithm;
    *mode = v.mode;
    return err;
}

/* Defaults from the environment: ISO_ALGORITHM, ISO_COMBINE, ISO_VERIFY,
 * ISO_TUNE, and ISO_VERBOSE, which has no info key; then info. */
static int options_get(MPI_Info info, options_t *v)
{
    static const iso_env_option vars[] = {{"ISO_ALGORITHM", "iso_algorithm"},
                                          {"ISO_COMBINE", "iso_combine"},
                                          {"ISO_VERIFY", "iso_verify"},
                                          {"ISO_TUNE", "iso_tune"},
                                          {"ISO_VERBOSE", "verbose"}};
    iso_options o = {create_keys, 5, "", v, NULL};
    int err;
    v->algorithm = ISO_ALG_AUTO;
    v->mode = ISO_MODE_AUTO;
    v->verify = v->verbose = 0;
    v->tune = ISO_TUNE_TRIALS;
    if ((err = iso__options_env(&o, vars, sizeof vars / sizeof vars[0])) == MPI_SUCCESS)
        err = iso__options_info(&o, info);
    return err;
}

/* One agreement (core/agree.c): every process must have the same d, s,
 * offsets, algorithm, message mode and iso_tune (tuning agrees on its
 * choice with a reduction that every process must join); it also carries this process's
 * argument error (err), so a bad argument on one process fails the call on
 * all. */
static int verify_isomorphic(MPI_Comm comm, int d, int s, const int *rel, int algorithm,
                             iso_msg_mode mode, int tune, int err)
{
    unsigned long long h = ISO_FNV1A_BASIS;
    iso_agreement ag = {.nsame = 4};
    int rc;
    for (size_t i = 0; err == MPI_SUCCESS && i < (size_t)s * (size_t)d; i++)
        h = iso__fnv1a(h, (unsigned)rel[i]);
    ag.same[0] = d;
    ag.same[1] = s;
    ag.same[2] = (long long)(h >> 2);
    ag.same[3] = (4LL * algorithm + (long long)mode) * 64 + tune;
    if ((rc = iso__agree(comm, err, &ag)) != MPI_SUCCESS)
        return rc;
    if (ag.differs == 0)
        return iso__error_msg(ISO_ERR_DIMS, "processes have Cartesian communicators of "
                                            "different dimensions (iso_verify)");
    if (ag.differs == 1 || ag.differs == 2)
        return iso__error_msg(ISO_ERR_NOT_ISOMORPHIC, "processes passed different %s "
                                                      "(iso_verify)",
                              ag.differs == 1 ? "s" : "offsets");
    if (ag.differs == 3)
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different algorithms, "
                                                 "iso_combine modes or iso_tune settings "
                                                 "(iso_verify)");
    return MPI_SUCCESS;
}

/* The local checks of a creation. */
static int check_args(int s, const int *rel, const MPI_Comm *isocomm, int d)
{
    if (s < 0)
        return iso__error_msg(ISO_ERR_ARG, "s = %d is negative", s);
    if (isocomm == NULL)
        return iso__error_msg(ISO_ERR_ARG, "isocomm is NULL");
    if (s > 0 && d > 0 && rel == NULL)
        return iso__error_msg(ISO_ERR_ARG, "relative_coordinates is NULL");
    for (size_t k = 0; k < (size_t)s * (size_t)d; k++)
        if (rel[k] <= -ISO_MAX_OFFSET || rel[k] >= ISO_MAX_OFFSET)
            return iso__error_msg(ISO_ERR_ARG, "offset %zu, coordinate %zu is %d: |c| < 2^30",
                                  k / (size_t)d, k % (size_t)d, rel[k]);
    return MPI_SUCCESS;
}

/* Is verification asked for (ISO_VERIFY, then info iso_verify)?  Read on its
 * own, so that it is known even when another key is bad. */
static int verify_wanted(MPI_Info info)
{
    const char *env = getenv("ISO_VERIFY");
    char value[MPI_MAX_INFO_VAL + 1];
    int verify = 0, flag = 0;
    if (env && *env && iso__parse_bool(env, &verify) != MPI_SUCCESS)
        verify = 0;
    if (info != MPI_INFO_NULL && MPI_Info_get(info, "iso_verify", MPI_MAX_INFO_VAL, value,
                                              &flag) == MPI_SUCCESS && flag &&
        iso__parse_bool(value, &flag) == MPI_SUCCESS)
        verify = flag;
    return verify;
}

/* Without verification, a process whose arguments are bad returns its error
 * at once and the others go on (an erroneous MPI program: they may wait for
 * it); with verification on every process, every process fails alike. */
static int create(MPI_Comm cart, int s, const int *rel, MPI_Info info, MPI_Comm *isocomm)
{
    int d = 0, err;
    options_t o = {ISO_ALG_AUTO, ISO_MODE_AUTO, 0, 0, ISO_TUNE_TRIALS};

    if ((err = iso__cart_check(cart)) != MPI_SUCCESS ||
        (err = MPI_Cartdim_get(cart, &d)) != MPI_SUCCESS)
        return err; /* no communicator to agree on */
    err = check_args(s, rel, isocomm, d);
    if (err == MPI_SUCCESS)
        err = options_get(info, &o);
    if (err != MPI_SUCCESS)
        o.verify = verify_wanted(info);
    if (o.verify &&
        (err = verify_isomorphic(cart, d, s, rel, o.algorithm, o.mode, o.tune, err)) != MPI_SUCCESS)
        return err;
    if (err != MPI_SUCCESS)
        return err;
    if ((err = iso__nbh_attach(cart, s, rel, o.algorithm, o.mode, o.verbose, o.tune)) !=
        MPI_SUCCESS)
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
    return iso__raise(cartcomm, create(cartcomm, s, relative_coordinates, MPI_INFO_NULL, isocomm));
}
