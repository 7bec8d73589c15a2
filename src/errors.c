/* Library error classes: registered once with MPI_Add_error_class and
 * MPI_Add_error_string, raised through the communicator's error handler. */
#include "iso_internal.h"

static const char *const messages[ISO_ERR_LASTCODE] = {
    [ISO_ERR_NONE] = "no error",
#define ISO__MSG(name, msg) [ISO_ERR_##name] = "isocoll: " msg,
    ISO_ERRNO_MAP(ISO__MSG)
#undef ISO__MSG
};

static int classes[ISO_ERR_LASTCODE];
static int registered;

static void register_classes(void)
{
    if (registered)
        return;
    registered = 1;
    classes[ISO_ERR_NONE] = MPI_SUCCESS;
    for (int e = 1; e < ISO_ERR_LASTCODE; e++) {
        /* Should MPI refuse (no free classes), fall back to MPI's own
         * classes rather than report success. */
        if (MPI_Add_error_class(&classes[e]) != MPI_SUCCESS) {
            classes[e] = MPI_ERR_OTHER;
            continue;
        }
        MPI_Add_error_string(classes[e], messages[e]);
    }
}

int iso__errclass(Iso_error err)
{
    if (err <= ISO_ERR_NONE || err >= ISO_ERR_LASTCODE)
        return MPI_ERR_UNKNOWN;
    register_classes();
    return classes[err];
}

int iso__raise(MPI_Comm comm, int err)
{
    if (err != MPI_SUCCESS)
        MPI_Comm_call_errhandler(comm == MPI_COMM_NULL ? MPI_COMM_WORLD : comm, err);
    return err;
}

int iso__fail(MPI_Comm comm, Iso_error err)
{
    return iso__raise(comm, iso__errclass(err));
}

int Iso_error_mpi_class(Iso_error err)
{
    return iso__errclass(err);
}

int Iso_error_class(int mpi_errorcode, Iso_error *err)
{
    int cls;
    if (err == NULL)
        return iso__fail(MPI_COMM_NULL, ISO_ERR_ARG);
    *err = ISO_ERR_NONE;
    if (mpi_errorcode == MPI_SUCCESS)
        return MPI_SUCCESS;
    register_classes();
    if (MPI_Error_class(mpi_errorcode, &cls) != MPI_SUCCESS)
        return MPI_SUCCESS;
    for (int e = 1; e < ISO_ERR_LASTCODE; e++)
        if (classes[e] == cls && cls != MPI_ERR_OTHER) {
            *err = (Iso_error)e;
            break;
        }
    return MPI_SUCCESS;
}
