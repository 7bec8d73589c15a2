/* Connected components by label propagation with the mailbox
 * (Iso_mailbox_*), YGM's second application, checked against a serial
 * union-find.  The algorithm is bench/mailbox_cc.h's (passes, delegates
 * synchronised by broadcasts).
 *
 *   mailbox_cc rmat SCALE EDGES_PER_RANK SEED [THRESHOLD [CAPACITY_BYTES]]
 *   mailbox_cc mm FILE.mtx[.gz] [THRESHOLD [CAPACITY_BYTES]]
 *   routing: ISO_ROUTE (none nl nr nlnr vpt auto); nodes: ISO_NODE_MAP
 *
 * rmat: the edges of bench/rmat.h (mailbox_degree's generator; rank r makes
 * edges r*E .. r*E+E-1).  mm: a Matrix Market file read by every process
 * (bench/matrix.h); entry (i, j), i != j, is the undirected edge
 * {min, max}, taken by process min(i, j) mod P, duplicates removed there;
 * n = max(rows, cols).  THRESHOLD: vertices of degree above it are
 * delegates (default 0: none).  Capacity 16 MiB by default.
 *
 * Reported: components, delegates, passes (the last changes nothing),
 * messages (top-level sends and broadcasts of the passes; the arc
 * distribution before them is not timed or counted), msgs/s = messages /
 * the slowest process's time of the passes, and the mailbox's MPI messages
 * between nodes per process during the passes.  Check: rank 0 gathers every
 * edge, runs union-find and compares every vertex's label; every process's
 * delegate copies must agree.  "check ok" or "check FAILED" (exit 1). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "mailbox_cc.h"
#include "matrix.h"
#include "rmat.h"

static int by_pair(const void *a, const void *b)
{
    const cc_pair *x = a, *y = b;
    if (x->u != y->u)
        return x->u < y->u ? -1 : 1;
    return x->v < y->v ? -1 : x->v > y->v;
}

/* This process's share of the matrix's edges. */
static cc_pair *mm_edges(const char *path, int P, int me, uint64_t *n, size_t *count)
{
    mm_matrix m;
    char err[256];
    cc_pair *e;
    size_t k = 0;
    if (mm_read(path, &m, err, sizeof err) != 0) {
        fprintf(stderr, "mailbox_cc: %s\n", err);
        return NULL;
    }
    *n = (uint64_t)m.n;
    e = malloc(((size_t)m.nnz + 1) * sizeof *e);
    for (int i = 0; e && i < m.n; i++)
        for (int q = m.rowptr[i]; q < m.rowptr[i + 1]; q++) {
            uint64_t a = (uint64_t)i, b = (uint64_t)m.col[q];
            if (a == b || (a < b ? a : b) % (uint64_t)P != (uint64_t)me)
                continue;
            e[k].u = a < b ? a : b;
            e[k].v = a < b ? b : a;
            k++;
        }
    mm_free(&m);
    if (!e)
        return NULL;
    qsort(e, k, sizeof *e, by_pair);
    size_t w = 0;
    for (size_t i = 0; i < k; i++)
        if (w == 0 || e[i].u != e[w - 1].u || e[i].v != e[w - 1].v)
            e[w++] = e[i];
    *count = w;
    return e;
}

int main(int argc, char **argv)
{
    int P, me, ok = 1, rmat, argi;
    uint64_t n = 0, threshold = 0, seed = 0, E = 0;
    size_t capacity = (size_t)16 << 20, nedges = 0;
    cc_pair *edges = NULL;
    cc_result res;
    double tg;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    rmat = argc >= 5 && !strcmp(argv[1], "rmat");
    if (!rmat && !(argc >= 3 && !strcmp(argv[1], "mm"))) {
        if (me == 0)
            fprintf(stderr,
                    "usage: %s rmat SCALE EDGES_PER_RANK SEED [THRESHOLD [CAPACITY_BYTES]]\n"
                    "       %s mm FILE.mtx[.gz] [THRESHOLD [CAPACITY_BYTES]]\n",
                    argv[0], argv[0]);
        MPI_Finalize();
        return 2;
    }
    argi = rmat ? 5 : 3;
    if (argc > argi)
        threshold = strtoull(argv[argi], NULL, 10);
    if (argc > argi + 1)
        capacity = strtoull(argv[argi + 1], NULL, 10);
    tg = MPI_Wtime();
    if (rmat) {
        int scale = atoi(argv[2]);
        E = strtoull(argv[3], NULL, 10);
        seed = strtoull(argv[4], NULL, 10);
        n = (uint64_t)1 << scale;
        nedges = (size_t)E;
        edges = malloc((nedges + 1) * sizeof *edges);
        for (uint64_t i = 0; edges && i < E; i++)
            gen_edge(1, scale, seed, (uint64_t)me * E + i, &edges[i].u, &edges[i].v);
    } else {
        edges = mm_edges(argv[2], P, me, &n, &nedges);
    }
    if (!edges)
        MPI_Abort(MPI_COMM_WORLD, 1);
    tg = MPI_Wtime() - tg;
    if (cc_run(MPI_COMM_WORLD, n, edges, nedges, threshold, capacity, MPI_INFO_NULL, &res) !=
        MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);

    /* the serial oracle on rank 0, over the gathered edges */
    {
        int mine = (int)(2 * nedges), *counts = NULL, *displs = NULL;
        uint64_t *all = NULL, total = 0, bad = 0;
        if (me == 0)
            counts = malloc(sizeof *counts * (size_t)P), displs = malloc(sizeof *displs * (size_t)P);
        MPI_Gather(&mine, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
        if (me == 0) {
            for (int r = 0; r < P; r++)
                displs[r] = (int)total, total += (uint64_t)counts[r];
            all = malloc((total + 1) * sizeof *all);
        }
        MPI_Gatherv(edges, mine, MPI_UINT64_T, all, counts, displs, MPI_UINT64_T, 0,
                    MPI_COMM_WORLD);
        if (me == 0) {
            uint64_t *serial = malloc((n + 1) * sizeof *serial);
            cc_union_find(n, (const cc_pair *)all, (size_t)(total / 2), serial);
            for (uint64_t x = 0; x < n; x++)
                bad += res.label[x] != serial[x];
            ok = bad == 0 && res.delegate_copies_agree;
            printf("union-find: %llu of %llu labels differ; delegate copies %s\n",
                   (unsigned long long)bad, (unsigned long long)n,
                   res.delegate_copies_agree ? "agree" : "DIFFER");
            free(serial);
        }
        free(all);
        free(counts);
        free(displs);
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (me == 0) {
        const char *route = getenv("ISO_ROUTE"), *map = getenv("ISO_NODE_MAP");
        if (rmat)
            printf("graph=rmat scale=%s edges/rank=%llu seed=%llu", argv[2],
                   (unsigned long long)E, (unsigned long long)seed);
        else
            printf("graph=%s", argv[2]);
        printf(" n=%llu P=%d route=%s node_map=%s threshold=%llu capacity=%zu\n",
               (unsigned long long)n, P, route ? route : "auto", map ? map : "(hwloc)",
               (unsigned long long)threshold, capacity);
        printf("components=%llu delegates=%llu arcs=%lld passes=%d messages=%lld\n",
               (unsigned long long)res.components, (unsigned long long)res.ndelegates, res.arcs,
               res.passes, res.messages);
        printf("time_s=%.4f input_s=%.4f msgs_per_s=%.4g remote_msgs_per_process=%.1f\n",
               res.seconds, tg, res.seconds > 0 ? (double)res.messages / res.seconds : 0.0,
               (double)res.remote_msgs / P);
        printf("check %s\n", ok ? "ok" : "FAILED");
    }
    free(res.label);
    free(edges);
    MPI_Finalize();
    return ok ? 0 : 1;
}
