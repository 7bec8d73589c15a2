/* Agreement: the one allreduce by which the processes of a collective call
 * learn whether any of them found an error, check that values they must
 * share are alike, and combine statistics (DESIGN.md, "Errors").
 *
 * Everything travels as long long under MPI_MAX.  A value that must be the
 * same everywhere travels as (x, -x): the maximum of both gives max and
 * -min at once, and they differ exactly when some process has another x.
 *
 * The rule for errors, the same in every collective of the library: every
 * process takes part even when its own arguments are bad, so none waits for
 * one that gave up.  A process returns its own error if it has one.  A
 * process that was fine returns an error of the failing process's class:
 * the library error number or MPI's class travel, because codes are per
 * process.  A library class comes with the text "invalid arguments on
 * another process"; one of MPI's own classes comes back as that class (a
 * valid code; MPI has no portable way to give its own classes our text).
 * When several processes fail, the largest number wins, library errors
 * before MPI's. */
#include "core/core.h"
#include <limits.h>

int iso__agree(MPI_Comm comm, int err, iso_agreement *ag)
{
    long long v[2 + 2 * ISO_AGREE_MAXVALS + ISO_AGREE_MAXVALS];
    long long r[2 + 2 * ISO_AGREE_MAXVALS + ISO_AGREE_MAXVALS];
    int nsame = ag->nsame, nmax = ag->nmax, n = 0, rc;
    MPI_Request req;
    if (nsame < 0 || nsame > ISO_AGREE_MAXVALS || nmax < 0 || nmax > ISO_AGREE_MAXVALS)
        return iso__error_msg(ISO_ERR_INTERN, "agreement over %d and %d values", nsame, nmax);
    v[n] = v[n + 1] = 0;
    if (err != MPI_SUCCESS) {
        Iso_error lib = iso__error_which(err);
        int cls = MPI_ERR_OTHER;
        if (lib == ISO_ERR_NONE && MPI_Error_class(err, &cls) != MPI_SUCCESS)
            cls = MPI_ERR_OTHER;
        v[n] = lib;
        v[n + 1] = lib == ISO_ERR_NONE ? cls : 0;
    }
    n += 2;
    for (int i = 0; i < nsame; i++) {
        /* -LLONG_MIN overflows: such a value cannot travel as (x, -x) */
        long long x = ag->same[i] == LLONG_MIN ? LLONG_MIN + 1 : ag->same[i];
        v[n++] = x;
        v[n++] = -x;
    }
    for (int i = 0; i < nmax; i++)
        v[n++] = ag->max[i];
    if ((rc = MPI_Iallreduce(v, r, n, MPI_LONG_LONG, MPI_MAX, comm, &req)) != MPI_SUCCESS ||
        (rc = iso__progress_wait(&req)) != MPI_SUCCESS)
        return rc;
    ag->differs = -1;
    for (int i = nsame - 1; i >= 0; i--)
        if (r[2 + 2 * i] != -r[3 + 2 * i])
            ag->differs = i;
    for (int i = 0; i < nmax; i++)
        ag->max[i] = r[2 + 2 * nsame + i];
    if (err != MPI_SUCCESS)
        return err;
    if (r[0] > ISO_ERR_NONE && r[0] < ISO_ERR_LASTCODE)
        return iso__error_msg((Iso_error)r[0], "invalid arguments on another process");
    if (r[1] > 0 && r[1] <= INT_MAX)
        return (int)r[1];
    return MPI_SUCCESS;
}
