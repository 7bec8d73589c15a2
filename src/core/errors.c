/* Library error classes: registered once with MPI_Add_error_class and
 * MPI_Add_error_string, raised through the communicator's error handler. */
#include "core/core.h"

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
static void register_classes_locked(void)
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

/* Threads may find the first error at the same time. */
static void register_classes(void)
{
    iso__lock();
    register_classes_locked();
    iso__unlock();
}

int iso__error(Iso_error e)
{
    if (e <= ISO_ERR_NONE || e >= ISO_ERR_LASTCODE)
        return MPI_ERR_UNKNOWN;
    register_classes();
    return codes[e];
}

int iso__raise(MPI_Comm comm, int err)
{
    if (err != MPI_SUCCESS)
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
    int cls = MPI_ERR_UNKNOWN;
    if (err == NULL)
        return iso__raise(MPI_COMM_NULL, iso__error(ISO_ERR_ARG));
    *err = ISO_ERR_NONE;
    if (mpi_errorcode == MPI_SUCCESS)
        return MPI_SUCCESS;
    register_classes();
    MPI_Error_class(mpi_errorcode, &cls);
    for (int e = 1; e < ISO_ERR_LASTCODE; e++)
        if (classes[e] != MPI_ERR_OTHER &&
            (mpi_errorcode == codes[e] || mpi_errorcode == classes[e] || cls == classes[e])) {
            *err = (Iso_error)e;
            break;
        }
    return MPI_SUCCESS;
}
