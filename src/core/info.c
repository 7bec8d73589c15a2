/* Info keys and environment values.  Keys that start with "iso_" belong to
 * the library (an unknown one is an error, raised by the caller's handler);
 * other keys belong to other libraries and are ignored. */
#include "core/core.h"
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern char **environ; /* POSIX */

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
    enum { MAXVARS = 16 };
    const char *values[MAXVARS] = {NULL};
    int err = MPI_SUCCESS;
    /* One pass over the environment for every variable (the first entry of
     * each, as getenv finds it), not one getenv per variable: each getenv
     * scans the whole environment, and these are read on every call. */
    for (char **e = n <= MAXVARS ? environ : NULL; e && *e; e++) {
        const char *v = *e; /* by hand: a strncmp call per entry costs more than getenv */
        if (v[0] != 'I' || v[1] != 'S' || v[2] != 'O' || v[3] != '_')
            continue;
        for (size_t k = 0; k < n; k++) {
            size_t len = strlen(vars[k].var);
            if (!values[k] && !strncmp(*e, vars[k].var, len) && (*e)[len] == '=')
                values[k] = *e + len + 1;
        }
    }
    for (size_t k = 0; k < n && err == MPI_SUCCESS; k++) {
        const char *value = n <= MAXVARS ? values[k] : getenv(vars[k].var);
        *var_now = vars[k].var;
        if (value && *value)
            err = handler(ctx, vars[k].key, value);
    }
    *var_now = NULL;
    return err;
}

void iso__option_where(char *buf, size_t n, const char *env, const char *key)
{
    /* "environment VAR" or "info KEY", cut to n - 1 bytes; without snprintf,
     * which is most of the cost of reading an info key on every call */
    const char *parts[2] = {env ? "environment " : "info ", env ? env : key};
    size_t len = 0;
    for (int i = 0; i < 2 && n > 0; i++)
        for (const char *c = parts[i]; *c && len + 1 < n; c++)
            buf[len++] = *c;
    if (n > 0)
        buf[len] = '\0';
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

/* ---- tables of named entries ------------------------------------------------ */

const char *iso__table_name(const iso_table *t, int k)
{
    return *(const char *const *)((const char *)t->entries + (size_t)k * t->size);
}

int iso__table_find(const iso_table *t, const char *name)
{
    if (!strcasecmp(name, "auto"))
        return ISO_AUTO;
    for (int k = 0; k < t->n; k++)
        if (!strcasecmp(name, iso__table_name(t, k)))
            return k;
    return -2;
}

void iso__table_names(const iso_table *t, char *buf, size_t size)
{
    int len = snprintf(buf, size, "auto");
    for (int k = 0; k < t->n && len >= 0 && (size_t)len < size; k++)
        len += snprintf(buf + len, size - (size_t)len, ", %s", iso__table_name(t, k));
}

/* ---- reading options -------------------------------------------------------- */

static int key_matches(const char *pattern, const char *key)
{
    size_t n = strlen(pattern);
    if (n > 0 && pattern[n - 1] == '*')
        return !strncmp(pattern, key, n - 1);
    return !strcmp(pattern, key);
}

/* One key of o's family: its setter, or the INFO code listing the keys. */
static int option_set(void *ctx, const char *key, const char *value)
{
    iso_options *o = ctx;
    char where[64], keys[256];
    int len = 0;
    iso__option_where(where, sizeof where, o->env, key);
    for (int k = 0; k < o->nkeys; k++)
        if (key_matches(o->keys[k].key, key))
            return o->keys[k].set(o->ctx, key, value, where);
    keys[0] = '\0';
    for (int k = 0; k < o->nkeys && len >= 0 && (size_t)len < sizeof keys; k++)
        if (!strncmp(o->keys[k].key, "iso_", 4)) /* not the environment-only names */
            len += snprintf(keys + len, sizeof keys - (size_t)len, "%s%s", len ? ", " : "",
                            o->keys[k].key);
    return iso__error_msg(ISO_ERR_INFO, "unknown info key %s%s%s (here: %s)", key,
                          *o->here ? " " : "", o->here, keys);
}

int iso__options_info(iso_options *o, MPI_Info info)
{
    o->env = NULL;
    return iso__info_each(info, option_set, o);
}

int iso__options_env(iso_options *o, const iso_env_option vars[], size_t n)
{
    return iso__env_each(vars, n, &o->env, option_set, o);
}

/* ---- ISO_VERBOSE ------------------------------------------------------------- */

void iso__report_choice(MPI_Comm comm, const char *fn, int was_auto, const char *alg,
                        const char *fmt, ...)
{
    char rest[256];
    va_list ap;
    int rank = 0;
    if (MPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0)
        return;
    va_start(ap, fmt);
    vsnprintf(rest, sizeof rest, fmt, ap);
    va_end(ap);
    fprintf(stderr, "isocoll: %s: %s %s%s\n", fn, was_auto ? "auto chose" : "runs", alg, rest);
}
