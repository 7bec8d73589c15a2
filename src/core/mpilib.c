/* The MPI library isocoll was compiled for, checked once against the one
 * the program runs with.  A program built with one MPI and run with the
 * other library's isocoll (or MPI) passes handles of one implementation to
 * the other: nothing works, and the first error would name a confusing
 * cause ("no Cartesian topology").  The installed libraries have different
 * names and SONAMEs per MPI (libisocoll-mpich, libisocoll-openmpi), so the
 * loader keeps them apart; this check catches what remains (a library
 * copied or renamed by hand, LD_PRELOAD).  It also notices a program
 * started by the other MPI's launcher (launcher_check). */
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

/* A program started by the other MPI's launcher (built for MPICH, run with
 * Open MPI's mpirun, or the reverse) runs as singletons that each think they
 * are alone, and nothing fails.  The signs: MPI_COMM_WORLD has one process,
 * the other launcher's size variable says more, and our own launcher's is
 * absent (a deliberate singleton started by our own launcher inside the
 * other's job has it).  Only the process the other launcher calls rank 0
 * says so, in one line. */
#if defined(OPEN_MPI)
#define OTHER_SIZE "PMI_SIZE"
#define OTHER_RANK "PMI_RANK"
#define OTHER_LAUNCHER "MPICH's mpiexec (Hydra) or another PMI launcher"
#define OWN_SIZE "OMPI_COMM_WORLD_SIZE"
#define OWN_LAUNCHER "Open MPI's mpirun (mpirun.openmpi)"
#elif defined(MPICH_VERSION)
#define OTHER_SIZE "OMPI_COMM_WORLD_SIZE"
#define OTHER_RANK "OMPI_COMM_WORLD_RANK"
#define OTHER_LAUNCHER "Open MPI's mpirun"
#define OWN_SIZE "PMI_SIZE"
#define OWN_LAUNCHER "MPICH's mpiexec (mpiexec.mpich)"
#endif

static void launcher_check(void)
{
#ifdef OTHER_SIZE
    const char *size = getenv(OTHER_SIZE), *rank = getenv(OTHER_RANK);
    int world = 0;
    if (size == NULL || atoi(size) < 2 || getenv(OWN_SIZE) != NULL ||
        (rank != NULL && strcmp(rank, "0") != 0) ||
        MPI_Comm_size(MPI_COMM_WORLD, &world) != MPI_SUCCESS || world != 1)
        return;
    fprintf(stderr,
            "isocoll: MPI_COMM_WORLD has 1 process but %s=%s: the program, built for %s, "
            "seems started by %s, so each process runs alone; start it with %s\n",
            OTHER_SIZE, size, BUILT_FOR, OTHER_LAUNCHER, OWN_LAUNCHER);
#endif
}

void iso__mpi_library_check(void)
{
    static int checked;
    if (checked)
        return;
    checked = 1;
    check_now();
    launcher_check();
}
