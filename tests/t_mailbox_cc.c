/* Connected components by label propagation on the mailbox
 * (bench/mailbox_cc.h, YGM's section V-B application) against a serial
 * union-find over the gathered edges: every vertex's label must be the
 * least vertex id of its component, every process's delegate copies equal.
 *
 * Graphs: RMAT from a seed (bench/rmat.h, scale 9, 300 edges per rank) and
 * two matrices of tests/data (494_bus, west0479 as undirected graphs; see
 * tests/data/README.md).  Every routing (none nl nr nlnr vpt auto) on one
 * pretend node map (ISO_NODE_MAP: rank r on node 2r / P: two uneven nodes
 * at 3 ranks), delegates off and on (degree > 4), a small capacity (many
 * exchanges) for RMAT.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 3 4
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../bench/mailbox_cc.h"
#include "../bench/matrix.h"
#include "../bench/rmat.h"
#include "tap.h"

static int P, ME;

/* This process's share of a graph: edge i goes to process i mod P. */
static cc_pair *graph(const char *name, uint64_t *n, size_t *count)
{
    cc_pair *e = NULL;
    size_t k = 0;
    if (!strcmp(name, "rmat")) {
        const uint64_t E = 300 * (uint64_t)P;
        *n = 1u << 9;
        e = malloc(E * sizeof *e);
        for (uint64_t g = 0; g < E; g++)
            if (g % (uint64_t)P == (uint64_t)ME)
                gen_edge(1, 9, 12345, g, &e[k].u, &e[k].v), k++;
    } else {
        mm_matrix m;
        char path[512], err[256];
        const char *dir = getenv("ISO_TEST_DATA") ? getenv("ISO_TEST_DATA") : "tests/data";
        snprintf(path, sizeof path, "%s/%s.mtx", dir, name);
        if (mm_read(path, &m, err, sizeof err) != 0)
            return NULL;
        *n = (uint64_t)m.n;
        e = malloc(((size_t)m.nnz + 1) * sizeof *e);
        for (int i = 0; i < m.n; i++)
            for (int q = m.rowptr[i]; q < m.rowptr[i + 1]; q++)
                if (q % P == ME)
                    e[k].u = (uint64_t)i, e[k].v = (uint64_t)m.col[q], k++;
        mm_free(&m);
    }
    *count = k;
    return e;
}

/* The union-find labels of the whole graph (every process). */
static uint64_t *oracle(const cc_pair *e, size_t k, uint64_t n, uint64_t *components)
{
    int mine = (int)(2 * k), *counts = malloc(sizeof *counts * (size_t)P),
        *displs = malloc(sizeof *displs * (size_t)P), total = 0;
    uint64_t *all, *label = malloc((n + 1) * sizeof *label);
    MPI_Allgather(&mine, 1, MPI_INT, counts, 1, MPI_INT, MPI_COMM_WORLD);
    for (int r = 0; r < P; r++)
        displs[r] = total, total += counts[r];
    all = malloc(((size_t)total + 1) * sizeof *all);
    MPI_Allgatherv(e, mine, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, MPI_COMM_WORLD);
    cc_union_find(n, (const cc_pair *)all, (size_t)total / 2, label);
    *components = 0;
    for (uint64_t x = 0; x < n; x++)
        *components += label[x] == x;
    free(all);
    free(counts);
    free(displs);
    return label;
}

int main(int argc, char **argv)
{
    static const char *graphs[] = {"rmat", "494_bus", "west0479"};
    static const char *routings[] = {"none", "nl", "nr", "nlnr", "vpt", "auto"};
    char map[256];
    int len = 0;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &ME);
    unsetenv("ISO_ROUTE");
    for (int r = 0; r < P; r++)
        len += snprintf(map + len, sizeof map - (size_t)len, "%s%d", r ? "," : "", 2 * r / P);
    setenv("ISO_NODE_MAP", map, 1); /* before the first mailbox: one pretend map */
    for (size_t g = 0; g < sizeof graphs / sizeof graphs[0]; g++) {
        uint64_t n = 0, components, *want;
        size_t k = 0;
        cc_pair *e = graph(graphs[g], &n, &k);
        int have = e != NULL, all;
        MPI_Allreduce(&have, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD);
        if (!all) {
            tap_skip(MPI_COMM_WORLD, "no data", "%s", graphs[g]);
            free(e);
            continue;
        }
        want = oracle(e, k, n, &components);
        for (size_t r = 0; r < sizeof routings / sizeof routings[0]; r++)
            for (int del = 0; del < 2; del++) {
                MPI_Info info;
                cc_result res;
                uint64_t bad = 0;
                MPI_Info_create(&info);
                MPI_Info_set(info, "iso_route", routings[r]);
                CHECK(cc_run(MPI_COMM_WORLD, n, e, k, del ? 4 : 0,
                             g == 0 ? 256 : 4096, info, &res) == MPI_SUCCESS,
                      "cc_run");
                MPI_Info_free(&info);
                if (ME == 0) {
                    for (uint64_t x = 0; x < n; x++)
                        bad += res.label[x] != want[x];
                    CHECK_EQ_INT(bad, 0, "%s %s: labels differing from union-find", graphs[g],
                                 routings[r]);
                }
                CHECK_EQ_INT(res.components, components, "components");
                CHECK(res.delegate_copies_agree, "delegate copies agree");
                CHECK(del ? res.ndelegates > 0 : res.ndelegates == 0, "delegates: %llu",
                      (unsigned long long)res.ndelegates);
                CHECK(res.passes >= 2 || n <= 1, "passes: %d", res.passes);
                if (ME == 0 && r == 0)
                    printf("# %s n=%llu: %llu components, %llu delegates, %d passes, "
                           "%lld messages\n",
                           graphs[g], (unsigned long long)n, (unsigned long long)components,
                           (unsigned long long)res.ndelegates, res.passes, res.messages);
                free(res.label);
                tap_result(MPI_COMM_WORLD, "%s, %s, delegates %s: labels = union-find",
                           graphs[g], routings[r], del ? "on" : "off");
            }
        free(want);
        free(e);
    }
    MPI_Finalize();
    return 0;
}
