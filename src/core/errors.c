/* Library error classes: registered once with MPI_Add_error_class and
 * MPI_Add_error_string, raised through the communicator's error handler.
 *
 * Errors that name their cause: a code of the right class whose string says
 * which function, key or variable and value, e.g. "isocoll:
 * Iso_neighborhood_create: unknown or inapplicable algorithm name:
 * environment ISO_ALGORITHM="fastest" (auto, direct, dimwise, bruck)".
 * MPI prints a code's string when the error is fatal, and MPI_Error_string
 * gives it to MPI_ERRORS_RETURN users.  MPI limits the codes a program may
 * add (MPICH 4.0: 8190), so each class has a small pool of detail codes
 * whose strings are reused round-robin; an identical text reuses its code.
 * A code's string is therefore good until POOL later errors of its class
 * (the class, from MPI_Error_class or Iso_error_class, stays right). */
#include "core/core.h"
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

static const char *const messages[ISO_ERR_LASTCODE] = {
    [ISO_ERR_NONE] = "no error",
#define ISO__MSG(name, msg) [ISO_ERR_##name] = "isocoll: " msg,
    ISO_ERRNO_MAP(ISO__MSG)
#undef ISO__MSG
};

static int classes[ISO_ERR_LASTCODE]; /* MPI error class of each library error */
static int codes[ISO_ERR_LASTCODE];   /* the code returned for it */
static int registered;

/* One class and one code in it per library error.  Functions return the
 * code: Open MPI 4.1 maps a dynamically added class, used as a code, to
 * MPI_ERR_UNKNOWN in MPI_Error_class, whereas codes map to their class. */
static void register_classes(void)
{
    if (registered)
        return;
    registered = 1;
    classes[ISO_ERR_NONE] = codes[ISO_ERR_NONE] = MPI_SUCCESS;
    for (int e = 1; e < ISO_ERR_LASTCODE; e++) {
        /* Should MPI refuse (no free classes), fall back to MPI's own
         * class rather than report success. */
        if (MPI_Add_error_class(&classes[e]) != MPI_SUCCESS) {
            classes[e] = codes[e] = MPI_ERR_OTHER;
            continue;
        }
        if (MPI_Add_error_code(classes[e], &codes[e]) != MPI_SUCCESS)
            codes[e] = classes[e];
        MPI_Add_error_string(classes[e], messages[e]);
        if (codes[e] != classes[e])
            MPI_Add_error_string(codes[e], messages[e]);
    }
}

int iso__error(Iso_error e)
{
    if (e <= ISO_ERR_NONE || e >= ISO_ERR_LASTCODE)
        return MPI_ERR_UNKNOWN;
    register_classes();
    return codes[e];
}

/* ---- detail codes ---------------------------------------------------------- */
#define POOL 16 /* detail codes per class */
static struct {
    int code;
    char text[MPI_MAX_ERROR_STRING];
} pool[ISO_ERR_LASTCODE][POOL];
static int pool_next[ISO_ERR_LASTCODE];

Iso_error iso__error_which(int err)
{
    int cls = MPI_ERR_UNKNOWN;
    if (err == MPI_SUCCESS)
        return ISO_ERR_NONE;
    register_classes();
    MPI_Error_class(err, &cls);
    for (int e = 1; e < ISO_ERR_LASTCODE; e++)
        if (classes[e] != MPI_ERR_OTHER &&
            (err == codes[e] || err == classes[e] || cls == classes[e]))
            return (Iso_error)e;
    return ISO_ERR_NONE;
}

/* A code of class e with string text (a pool code; the plain code if MPI
 * has no more codes to give). */
static int code_with_text(Iso_error e, const char *full)
{
    char text[MPI_MAX_ERROR_STRING];
    int k;
    snprintf(text, sizeof text, "%s", full); /* MPI's limit */
    for (k = 0; k < POOL; k++)
        if (pool[e][k].code != 0 && !strcmp(pool[e][k].text, text))
            return pool[e][k].code;
    k = pool_next[e];
    if (pool[e][k].code == 0 && MPI_Add_error_code(classes[e], &pool[e][k].code) != MPI_SUCCESS) {
        pool[e][k].code = 0;
        return codes[e];
    }
    pool_next[e] = (k + 1) % POOL;
    snprintf(pool[e][k].text, sizeof pool[e][k].text, "%s", text);
    MPI_Add_error_string(pool[e][k].code, pool[e][k].text);
    return pool[e][k].code;
}

int iso__error_msg(Iso_error e, const char *fmt, ...)
{
    char text[2 * MPI_MAX_ERROR_STRING];
    int n;
    va_list ap;
    if (e <= ISO_ERR_NONE || e >= ISO_ERR_LASTCODE)
        return MPI_ERR_UNKNOWN;
    register_classes();
    if (classes[e] == MPI_ERR_OTHER)
        return codes[e];
    n = snprintf(text, sizeof text, "%s: ", messages[e]);
    va_start(ap, fmt);
    vsnprintf(text + n, sizeof text - (size_t)n, fmt, ap);
    va_end(ap);
    return code_with_text(e, text);
}

/* Sets the string of pool code `code` of class e to text, if it is one;
 * returns whether it was. */
static int retext(Iso_error e, int code, const char *full)
{
    for (int k = 0; k < POOL; k++)
        if (pool[e][k].code == code) {
            size_t n = strlen(full);
            if (n >= sizeof pool[e][k].text) /* MPI's limit */
                n = sizeof pool[e][k].text - 1;
            memcpy(pool[e][k].text, full, n);
            pool[e][k].text[n] = '\0';
            MPI_Add_error_string(code, pool[e][k].text);
            return 1;
        }
    return 0;
}

int iso__raise_in(const char *function, MPI_Comm comm, int err)
{
    Iso_error e;
    if (err == MPI_SUCCESS)
        return err;
    /* library errors name the public function: "isocoll: FUNCTION: ..."; a
     * detail code keeps its pool slot, the plain code takes one */
    if (function != NULL && (e = iso__error_which(err)) != ISO_ERR_NONE &&
        classes[e] != MPI_ERR_OTHER) {
        char old[MPI_MAX_ERROR_STRING], text[2 * MPI_MAX_ERROR_STRING];
        int len = 0;
        const char *rest = old;
        MPI_Error_string(err, old, &len);
        if (!strncmp(rest, "isocoll: ", 9))
            rest += 9;
        snprintf(text, sizeof text, "isocoll: %s: %s", function, rest);
        if (!retext(e, err, text))
            err = code_with_text(e, text);
    }
    MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
    return err;
}

int Iso_error_mpi_class(Iso_error err)
{
    if (err <= ISO_ERR_NONE || err >= ISO_ERR_LASTCODE)
        return MPI_ERR_UNKNOWN;
    register_classes();
    return classes[err];
}

int Iso_error_class(int mpi_errorcode, Iso_error *err)
{
    if (err == NULL)
        return iso__raise(MPI_COMM_NULL, iso__error_msg(ISO_ERR_ARG, "err is NULL"));
    *err = iso__error_which(mpi_errorcode);
    return MPI_SUCCESS;
}
