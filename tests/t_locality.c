/* Locality levels from hwloc (white box: iso__locality_at), on this machine
 * and on a pretend machine of two packages that hwloc believes is this one
 * (HWLOC_SYNTHETIC="package:2 numa:1 core:1 pu:1", HWLOC_THISSYSTEM=1: its
 * processing units 0 and 1 are the real ones, so real bindings land in
 * them).  The oracle is the binding each process gives itself here:
 *   - this machine, as bound by the launcher: at levels package and numa
 *     the regions are the nodes whenever hwloc sees one package (NUMA
 *     domain) here, with no node taken whole;
 *   - two packages, rank r bound to processing unit r mod 2: the regions
 *     at package and numa level are the even and the odd ranks, and an
 *     Iso_alltoallv_crs with info iso_locality=package (locality-
 *     personalized, locality-nbx) delivers every rank's seeded message;
 *   - two packages, every process bound to both units (as if unbound), or
 *     only the odd ranks: the node is taken whole (whole_nodes 1), its
 *     regions those of level node;
 *   - processes asking for different levels: ISO_ERR_INFO on every process.
 * The map-based levels (ISO_NODE_MAP "node.package.numa") are t_sparse's.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 2 3 4
 */
#include <hwloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"
#include "topo/topo.h"

static int rank, nprocs;

/* The real machine's topology (loaded before any pretence). */
static hwloc_topology_t real;

/* Binds this thread to the processing units in pus (os indexes). */
static int bind_to(const int *pus, int n)
{
    hwloc_bitmap_t set = hwloc_bitmap_alloc();
    int rc;
    for (int k = 0; k < n; k++)
        hwloc_bitmap_set(set, (unsigned)pus[k]);
    rc = hwloc_set_cpubind(real, set, HWLOC_CPUBIND_THREAD);
    hwloc_bitmap_free(set);
    return rc;
}

/* l's regions against want[] (any ids: equal where the region is). */
static void same_regions(const iso_locality *l, const int *want, const char *what)
{
    for (int a = 0; a < nprocs; a++)
        for (int b = 0; b < nprocs; b++)
            if ((want[a] == want[b]) != (l->node[a] == l->node[b])) {
                CHECK(0, "%s: ranks %d and %d together: expected %d, library %d", what, a, b,
                      want[a] == want[b], l->node[a] == l->node[b]);
                return;
            }
}

/* The regions of a fresh duplicate of MPI_COMM_WORLD at level. */
static int regions(int level, MPI_Comm *comm, const iso_locality **l)
{
    MPI_Comm_dup(MPI_COMM_WORLD, comm);
    return iso__locality_at(*comm, level, l);
}

/* This machine as the launcher bound us. */
static void this_machine(void)
{
    static const hwloc_obj_type_t types[] = {HWLOC_OBJ_PACKAGE, HWLOC_OBJ_NUMANODE};
    MPI_Comm comm;
    const iso_locality *nodes, *l;
    int rc = regions(ISO_LEVEL_NODE, &comm, &nodes);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "level node");
    for (int k = 0; k < 2 && rc == MPI_SUCCESS; k++) {
        int objs = hwloc_get_nbobjs_by_type(real, types[k]);
        const char *what = k ? "this machine at numa" : "this machine at package";
        rc = iso__locality_at(comm, ISO_LEVEL_PACKAGE + k, &l);
        CHECK_EQ_INT(rc, MPI_SUCCESS, "%s", what);
        if (rc != MPI_SUCCESS)
            break;
        CHECK_EQ_INT(l->level, ISO_LEVEL_PACKAGE + k, "%s: level", what);
        if (objs == 1) { /* one object: it covers every binding */
            same_regions(l, nodes->node, what);
            CHECK_EQ_INT(l->whole_nodes, 0, "%s: nodes taken whole", what);
        } else if (rank == 0) {
            printf("# %s: %d objects, not checked against the nodes\n", what, objs);
        }
    }
    MPI_Comm_free(&comm);
    tap_result(MPI_COMM_WORLD, "this machine (one package, one NUMA domain): package, numa = node");
}

/* Every rank's seeded message to every rank through alg at level package. */
static void exchange(const char *alg, const char *what)
{
    int *dest = malloc(sizeof(int) * (size_t)nprocs), *vals = malloc(sizeof(int) * 2 * nprocs);
    int *counts = malloc(sizeof(int) * (size_t)nprocs), *displs = malloc(sizeof(int) * nprocs);
    int recv_nnz = 0, *src = NULL, *rcounts = NULL, *rdispls = NULL, *got = NULL, rc;
    MPI_Info info;
    MPI_Comm comm;
    for (int d = 0; d < nprocs; d++) { /* to d: d % 2 + 1 values */
        dest[d] = (d + rank) % nprocs;
        counts[d] = dest[d] % 2 + 1;
        displs[d] = 2 * d;
        vals[2 * d] = rank * 1000 + dest[d];
        vals[2 * d + 1] = -(rank * 1000 + dest[d]);
    }
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    MPI_Info_set(info, "iso_locality", "package");
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    rc = Iso_alltoallv_crs(nprocs, dest, counts, displs, MPI_INT, vals, &recv_nnz, &src, &rcounts,
                           &rdispls, MPI_INT, (void **)&got, info, comm);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "%s %s", what, alg);
    if (rc == MPI_SUCCESS) {
        CHECK_EQ_INT(recv_nnz, nprocs, "%s %s: messages", what, alg);
        for (int k = 0; k < recv_nnz && k < nprocs; k++) {
            CHECK_EQ_INT(src[k], k, "%s %s: source %d", what, alg, k);
            CHECK_EQ_INT(rcounts[k], rank % 2 + 1, "%s %s: count from %d", what, alg, k);
            CHECK_EQ_INT(got[rdispls[k]], k * 1000 + rank, "%s %s: from %d", what, alg, k);
            if (rcounts[k] == 2)
                CHECK_EQ_INT(got[rdispls[k] + 1], -(k * 1000 + rank), "%s %s: from %d", what, alg,
                             k);
        }
        free(src), free(rcounts), free(rdispls), free(got);
    }
    MPI_Comm_free(&comm);
    MPI_Info_free(&info);
    free(dest), free(vals), free(counts), free(displs);
}

/* The pretend two-package machine (processing units 0 and 1). */
static void two_packages(void)
{
    static const int both[] = {0, 1};
    int mine = rank % 2, want[64], nodes[64] = {0}, rc;
    MPI_Comm comm;
    const iso_locality *l;
    setenv("HWLOC_SYNTHETIC", "package:2 numa:1 core:1 pu:1", 1);
    setenv("HWLOC_THISSYSTEM", "1", 1);
    for (int r = 0; r < nprocs; r++)
        want[r] = r % 2;
    /* bound to one unit each: even and odd ranks */
    CHECK_EQ_INT(bind_to(&mine, 1), 0, "binding to unit %d", mine);
    for (int level = ISO_LEVEL_PACKAGE; level <= ISO_LEVEL_NUMA; level++) {
        const char *what = level == ISO_LEVEL_PACKAGE ? "two packages, bound, package"
                                                      : "two packages, bound, numa";
        rc = regions(level, &comm, &l);
        CHECK_EQ_INT(rc, MPI_SUCCESS, "%s", what);
        if (rc == MPI_SUCCESS) {
            same_regions(l, want, what);
            CHECK_EQ_INT(l->nnodes, nprocs > 1 ? 2 : 1, "%s: regions", what);
            CHECK_EQ_INT(l->whole_nodes, 0, "%s: nodes taken whole", what);
        }
        MPI_Comm_free(&comm);
    }
    exchange("locality-personalized", "two packages, bound");
    exchange("locality-nbx", "two packages, bound");
    tap_result(MPI_COMM_WORLD, "two packages, ranks bound to units: even and odd ranks");
    /* bound across both (as unbound), then only the odd ranks */
    for (int k = 0; k < 2; k++) {
        const char *what = k ? "two packages, odd ranks across both" : "two packages, unbound";
        CHECK_EQ_INT(k && rank % 2 == 0 ? bind_to(&mine, 1) : bind_to(both, 2), 0, "binding");
        rc = regions(ISO_LEVEL_PACKAGE, &comm, &l);
        CHECK_EQ_INT(rc, MPI_SUCCESS, "%s", what);
        if (rc == MPI_SUCCESS) {
            int whole = k == 0 || nprocs > 1;
            same_regions(l, whole ? nodes : want, what);
            CHECK_EQ_INT(l->whole_nodes, whole, "%s: nodes taken whole", what);
        }
        MPI_Comm_free(&comm);
    }
    exchange("locality-personalized", "two packages, unbound");
    tap_result(MPI_COMM_WORLD, "two packages, unbound processes: the node taken whole");
    unsetenv("HWLOC_SYNTHETIC");
    unsetenv("HWLOC_THISSYSTEM");
}

/* Processes asking for different levels fail alike. */
static void levels_differ(void)
{
    MPI_Comm comm;
    const iso_locality *l;
    Iso_error cls = ISO_ERR_NONE;
    int rc;
    MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    rc = iso__locality_at(comm, rank == 0 ? ISO_LEVEL_PACKAGE : ISO_LEVEL_NODE, &l);
    Iso_error_class(rc, &cls);
    CHECK(rc != MPI_SUCCESS && cls == ISO_ERR_INFO, "levels differ: rc=%d class %d", rc, (int)cls);
    MPI_Comm_free(&comm);
    tap_result(MPI_COMM_WORLD, "processes asking for different levels: ISO_ERR_INFO everywhere");
}

int main(int argc, char **argv)
{
    hwloc_bitmap_t allowed;
    int usable;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsetenv("ISO_NODE_MAP");
    unsetenv("ISO_LOCALITY");
    hwloc_topology_init(&real);
    hwloc_topology_load(real);
    this_machine();
    /* the pretence needs processing units 0 and 1 */
    allowed = hwloc_bitmap_dup(hwloc_topology_get_allowed_cpuset(real));
    usable = hwloc_bitmap_isset(allowed, 0) && hwloc_bitmap_isset(allowed, 1);
    MPI_Allreduce(MPI_IN_PLACE, &usable, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (usable && nprocs <= 64) {
        hwloc_bitmap_t was = hwloc_bitmap_alloc();
        hwloc_get_cpubind(real, was, HWLOC_CPUBIND_THREAD);
        two_packages();
        hwloc_set_cpubind(real, was, HWLOC_CPUBIND_THREAD);
        hwloc_bitmap_free(was);
    } else if (rank == 0) {
        printf("# no processing units 0 and 1 here: the two-package pretence is skipped\n");
    }
    hwloc_bitmap_free(allowed);
    if (nprocs > 1)
        levels_differ();
    hwloc_topology_destroy(real);
    MPI_Finalize();
    return 0;
}
