/* Info keys and environment values.  Keys that start with "iso_" belong to
 * the library (an unknown one is an error, raised by the caller's handler);
 * other keys belong to other libraries and are ignored. */
#include "core/core.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int iso__info_each(MPI_Info info, iso_info_handler handler, void *ctx)
{
    int nkeys = 0, err;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    if ((err = MPI_Info_get_nkeys(info, &nkeys)) != MPI_SUCCESS)
        return err;
    for (int k = 0; k < nkeys; k++) {
        char key[MPI_MAX_INFO_KEY + 1], value[MPI_MAX_INFO_VAL + 1];
        int flag = 0;
        if ((err = MPI_Info_get_nthkey(info, k, key)) != MPI_SUCCESS)
            return err;
        if (strncmp(key, "iso_", 4) != 0)
            continue;
        if ((err = MPI_Info_get(info, key, MPI_MAX_INFO_VAL, value, &flag)) != MPI_SUCCESS)
            return err;
        if (!flag)
            return iso__error_msg(ISO_ERR_INFO, "info key %s has no value", key);
        if ((err = handler(ctx, key, value)) != MPI_SUCCESS)
            return err;
    }
    return MPI_SUCCESS;
}

int iso__env_each(const iso_env_option vars[], size_t n, const char **var_now,
                  iso_info_handler handler, void *ctx)
{
    int err = MPI_SUCCESS;
    for (size_t k = 0; k < n && err == MPI_SUCCESS; k++) {
        const char *value = getenv(vars[k].var);
        *var_now = vars[k].var;
        if (value && *value)
            err = handler(ctx, vars[k].key, value);
    }
    *var_now = NULL;
    return err;
}

void iso__option_where(char *buf, size_t n, const char *env, const char *key)
{
    if (env)
        snprintf(buf, n, "environment %s", env);
    else
        snprintf(buf, n, "info %s", key);
}

int iso__option_bool(const char *where, const char *value, int *out)
{
    if (iso__parse_bool(value, out) == MPI_SUCCESS)
        return MPI_SUCCESS;
    return iso__error_msg(ISO_ERR_INFO, "%s=\"%s\" is not a boolean (true, false, yes, no, on, "
                                        "off, 1, 0)", where, value);
}

int iso__parse_bool(const char *value, int *out)
{
    static const char *const yes[] = {"true", "yes", "on", "1"};
    static const char *const no[] = {"false", "no", "off", "0"};
    for (int k = 0; k < 4; k++) {
        if (!strcasecmp(value, yes[k])) {
            *out = 1;
            return MPI_SUCCESS;
        }
        if (!strcasecmp(value, no[k])) {
            *out = 0;
            return MPI_SUCCESS;
        }
    }
    return iso__error(ISO_ERR_INFO);
}
