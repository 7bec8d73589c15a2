/* Work to do at MPI_Finalize while MPI is still whole: releasing what the
 * library caches on MPI_COMM_WORLD and on communicators of its own.  Open
 * MPI 4.1 deletes MPI_COMM_WORLD's attributes only after it has shut
 * windows and other objects down (an MPI_Win_free or MPI_Comm_free in a
 * delete callback then crashes), whereas the attributes of MPI_COMM_SELF
 * are deleted first, at the start of MPI_Finalize (MPI standard, "Allowing
 * User Functions at Process Termination").  So the registered functions
 * run from the delete callback of one attribute on MPI_COMM_SELF, in the
 * reverse order of their registration. */
#include "core/core.h"

#define MAX_FINALIZERS 16

static iso_finalizer finalizers[MAX_FINALIZERS];
static int nfinalizers;
static int self_keyval = MPI_KEYVAL_INVALID;

static int at_finalize(MPI_Comm comm, int kv, void *val, void *extra)
{
    (void)comm;
    (void)kv;
    (void)val;
    (void)extra;
    while (nfinalizers > 0)
        finalizers[--nfinalizers]();
    return MPI_SUCCESS;
}

int iso__at_finalize(iso_finalizer fn)
{
    int err;
    if (nfinalizers == MAX_FINALIZERS)
        return iso__error(ISO_ERR_INTERN);
    if (self_keyval == MPI_KEYVAL_INVALID) {
        if ((err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, at_finalize, &self_keyval,
                                          NULL)) != MPI_SUCCESS)
            return err;
        if ((err = MPI_Comm_set_attr(MPI_COMM_SELF, self_keyval, NULL)) != MPI_SUCCESS)
            return err;
    }
    finalizers[nfinalizers++] = fn;
    return MPI_SUCCESS;
}

void iso__world_attr_delete(int keyval)
{
    void *attr;
    int flag = 0;
    if (keyval != MPI_KEYVAL_INVALID &&
        MPI_Comm_get_attr(MPI_COMM_WORLD, keyval, &attr, &flag) == MPI_SUCCESS && flag)
        MPI_Comm_delete_attr(MPI_COMM_WORLD, keyval);
}
