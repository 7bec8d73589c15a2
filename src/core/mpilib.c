/* The MPI library isocoll was compiled for, checked once against the one
 * the program runs with.  A program built with one MPI and run with the
 * other library's isocoll (or MPI) passes handles of one implementation to
 * the other: nothing works, and the first error would name a confusing
 * cause ("no Cartesian topology").  The installed libraries have different
 * names and SONAMEs per MPI (libisocoll-mpich, libisocoll-openmpi), so the
 * loader keeps them apart; this check catches what remains (a library
 * copied or renamed by hand, LD_PRELOAD). */
#include "core/core.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A mismatch is recognised by the *other* family's name, so derivatives
 * (MVAPICH, Intel MPI: MPICH's ABI, their own names) pass. */
#if defined(OPEN_MPI)
#define BUILT_FOR "Open MPI"
static const char *const others[] = {"MPICH", "MVAPICH", "Intel(R) MPI"};
#elif defined(MPICH_VERSION)
#define BUILT_FOR "MPICH"
static const char *const others[] = {"Open MPI"};
#else
#define BUILT_FOR "this MPI"
static const char *const others[] = {""}; /* another MPI: no check */
#endif

int iso__mpi_library_matches(const char *version)
{
    for (size_t k = 0; k < sizeof others / sizeof others[0]; k++)
        if (others[k][0] && strstr(version, others[k]) != NULL)
            return 0;
    return 1;
}

/* Once per process: every entry point comes here, so the fast path is one
 * test (the version buffer lives in the slow path only). */
static void check_now(void)
{
    char version[MPI_MAX_LIBRARY_VERSION_STRING] = "";
    int len = 0;
    MPI_Get_library_version(version, &len);
    if (iso__mpi_library_matches(version))
        return;
    /* Handles of this MPI are meaningless to the other: no error handler
     * can be called, so say it plainly and stop. */
    fprintf(stderr,
            "isocoll: this library was built for %s but the program runs with \"%.60s\": "
            "build the program and isocoll with one MPI (pkg-config isocoll-mpich or "
            "isocoll-openmpi)\n",
            BUILT_FOR, version);
    abort();
}

void iso__mpi_library_check(void)
{
    static int checked;
    if (checked)
        return;
    checked = 1;
    check_now();
}
