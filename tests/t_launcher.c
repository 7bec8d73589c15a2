/* A program started by the other MPI's launcher (issue 24, item 7): the
 * processes run as singletons, and the library says so in one line on
 * stderr (src/core/mpilib.c), without false alarms.  The test runs itself
 * as a singleton child (argument "child": one library call, on
 * MPI_COMM_WORLD) in a clean environment (no launcher variables) plus the
 * variables the other launcher would set, and reads the child's stderr:
 *   - the other launcher's size 2, its rank 0: one line naming both;
 *   - its rank 1: nothing (rank 0 speaks for all);
 *   - size 1, or no variables, or our own launcher's size variable as
 *     well (a deliberate singleton inside the other's job): nothing.
 *
 * NPROCS: 1
 * PER-ALGORITHM: no
 */
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "isocoll.h"
#include "tap.h"

extern char **environ;

#if defined(OPEN_MPI)
#define OTHER_SIZE "PMI_SIZE"
#define OTHER_RANK "PMI_RANK"
#define OWN_SIZE "OMPI_COMM_WORLD_SIZE"
#else
#define OTHER_SIZE "OMPI_COMM_WORLD_SIZE"
#define OTHER_RANK "OMPI_COMM_WORLD_RANK"
#define OWN_SIZE "PMI_SIZE"
#endif

static int child(void)
{
    int nnz = -1, *src = NULL, *recv = NULL;
    Iso_alltoall_crs(0, NULL, 1, MPI_INT, NULL, &nnz, &src, 1, MPI_INT, (void **)&recv,
                     MPI_INFO_NULL, MPI_COMM_WORLD);
    free(src), free(recv);
    return 0;
}

/* Launcher variables of both MPIs (and their PMI connections) stay out. */
static int launcher_var(const char *kv)
{
    static const char *const prefixes[] = {"PMI_", "PMIX_", "OMPI_", "HYDRA_", "MPI_LOCAL",
                                           "ORTE_", "OPAL_"};
    for (size_t k = 0; k < sizeof prefixes / sizeof prefixes[0]; k++)
        if (strncmp(kv, prefixes[k], strlen(prefixes[k])) == 0)
            return strncmp(kv, "OMPI_ALLOW_RUN_AS_ROOT", 22) != 0;
    return 0;
}

/* Runs the child with extra[] added to a clean environment; its stderr in
 * err (up to size bytes).  The exit status, or -1. */
static int run_child(const char *const extra[], char *err, size_t size)
{
    size_t n = 0, k = 0;
    while (environ[n])
        n++;
    char **env = calloc(n + 8, sizeof *env), path[] = "/tmp/iso_launcher_XXXXXX";
    for (size_t i = 0; i < n; i++)
        if (!launcher_var(environ[i]))
            env[k++] = environ[i];
    for (size_t i = 0; extra[i]; i++)
        env[k++] = (char *)extra[i];
    int fd = mkstemp(path), status = -1;
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, fd, 2);
    posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", 1 /* O_WRONLY */, 0);
    char *argv[] = {"/proc/self/exe", "child", NULL};
    pid_t pid;
    if (posix_spawn(&pid, "/proc/self/exe", &fa, NULL, argv, env) == 0)
        waitpid(pid, &status, 0);
    posix_spawn_file_actions_destroy(&fa);
    ssize_t got = pread(fd, err, size - 1, 0);
    err[got > 0 ? got : 0] = '\0';
    close(fd);
    unlink(path);
    free(env);
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void expect(const char *what, const char *const extra[], int warn)
{
    char err[4096];
    int rc = run_child(extra, err, sizeof err);
    const char *line = strstr(err, "isocoll: ");
    CHECK_EQ_INT(rc, 0, "%s: child's exit status", what);
    if (warn) {
        CHECK(line != NULL, "%s: no warning; stderr: %s", what, err);
        CHECK(line == NULL || (strstr(line, OTHER_SIZE "=2") && strstr(line, "start it with")),
              "%s: the warning names neither the variable nor the way out: %s", what, line);
        CHECK(line == NULL || strstr(line + 1, "isocoll: ") == NULL, "%s: more than one line: %s",
              what, err);
    } else {
        CHECK(line == NULL, "%s: a false alarm: %s", what, line);
    }
    tap_result(MPI_COMM_WORLD, "%s", what);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0) {
        MPI_Init(&argc, &argv);
        child();
        MPI_Finalize();
        return 0;
    }
    MPI_Init(&argc, &argv);
    const char *const other0[] = {OTHER_SIZE "=2", OTHER_RANK "=0", NULL};
    const char *const other1[] = {OTHER_SIZE "=2", OTHER_RANK "=1", NULL};
    const char *const other_one[] = {OTHER_SIZE "=1", OTHER_RANK "=0", NULL};
    const char *const none[] = {NULL};
    const char *const both[] = {OTHER_SIZE "=2", OTHER_RANK "=0", OWN_SIZE "=1", NULL};
    expect("started by the other launcher (its rank 0): one line on stderr", other0, 1);
    expect("started by the other launcher (its rank 1): silent", other1, 0);
    expect("the other launcher's size 1: silent", other_one, 0);
    expect("a plain singleton: silent", none, 0);
    expect("our own launcher's variable too: silent", both, 0);
    MPI_Finalize();
    return 0;
}
