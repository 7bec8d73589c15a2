/* Degree counting with the mailbox (Iso_mailbox_*), YGM's benchmark
 * application, checked against a serial count.
 *
 *   mailbox_degree {er|rmat} SCALE EDGES_PER_RANK SEED [CAPACITY_BYTES]
 *   routing: ISO_ROUTE (none nl nr nlnr vpt auto); nodes: ISO_NODE_MAP
 *
 * The graph generator (bench/rmat.h) and command line are those of the YGM
 * peer program (bench/ygm/degree_count.cpp, built against YGM by
 * bench/ygm/compare), so both count
 * the same edges: n = 2^SCALE vertices; rank r makes global edges
 * g = r*E + i (i < E); rnd(g, j) = splitmix64 of seed + GAMMA*(64g + j + 1);
 * er: u = rnd(g,0) mod n, v = rnd(g,1) mod n; rmat: SCALE levels of
 * quadrant choices with (a, b, c, d) = (0.57, 0.19, 0.19, 0.05) from
 * p = (rnd(g, l) >> 11) * 2^-53.  Each edge sends one 8-byte message with u
 * to owner(u) = u mod P and one with v to v mod P; the owner counts.
 * Timed: barrier, all sends, Iso_mailbox_wait_empty.  msgs/s = 2EP / the
 * slowest rank's time.  Capacity 16 MiB by default (YGM's default buffer).
 *
 * Checks: the degrees sum to 2EP; sum of degree(x)*(x+1) equals the sum
 * over edges of (u+1)+(v+1); and, up to 2^24 edges in all, rank 0
 * regenerates every edge, counts serially and compares every vertex.
 * Prints "check ok" or "check FAILED" and exits non-zero on failure.
 *
 * Counts (the mailbox's own, mailbox/mailbox.h): the nodes it sees
 * (MPI_COMM_TYPE_SHARED or ISO_NODE_MAP), the routing in effect, and per
 * process the MPI messages (buffers) posted, of them to another node, and
 * the records forwarded for others; with them one line
 *   @row exp=mailbox_degree graph=.. scale=.. edges_per_rank=.. np=.. nodes=..
 *        competitor=ROUTING capacity=.. time_us=.. msgs_per_s=..
 *        mpi_msgs_per_proc=.. remote_msgs_per_proc=.. remote_kb_per_proc=..
 *        forwarded_per_proc=.. peak_queued=.. peak_inflight=.. check=ok|FAILED
 * (peak_*: the most bytes any one process held queued / in posted sends)
 * (bench/mailbox_scale.py reads it). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "mailbox/mailbox.h" /* the mailbox's traffic counters and routing */
#include "rmat.h"

typedef struct {
    uint64_t *degree; /* local vertex x / P */
    int P;
} counter;

static void on_vertex(Iso_mailbox mb, int source, const void *msg, size_t bytes, void *ctx)
{
    counter *c = ctx;
    uint64_t x;
    (void)mb;
    (void)source;
    (void)bytes;
    memcpy(&x, msg, sizeof x);
    c->degree[x / (uint64_t)c->P]++;
}

int main(int argc, char **argv)
{
    int P, me, rmat, scale, ok = 1;
    uint64_t E, seed, n, nlocal, *edges, sums[2] = {0, 0}, gsums[2], esum = 0, gesum;
    size_t capacity = (size_t)16 << 20;
    double t0, t1, tg, dt, tmax;
    long long counts[4], totals[4]; /* MPI messages, remote ones, remote bytes, forwarded */
    long long peaks[2], maxpeaks[2]; /* the most bytes queued / in flight on a process */
    int nodes;
    const char *routing;
    counter c;
    Iso_mailbox mb;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    if (argc < 5 || (strcmp(argv[1], "er") && strcmp(argv[1], "rmat"))) {
        if (me == 0)
            fprintf(stderr, "usage: %s {er|rmat} SCALE EDGES_PER_RANK SEED [CAPACITY_BYTES]\n",
                    argv[0]);
        MPI_Finalize();
        return 2;
    }
    rmat = !strcmp(argv[1], "rmat");
    scale = atoi(argv[2]);
    E = strtoull(argv[3], NULL, 10);
    seed = strtoull(argv[4], NULL, 10);
    if (argc > 5)
        capacity = strtoull(argv[5], NULL, 10);
    n = (uint64_t)1 << scale;
    nlocal = n / (uint64_t)P + 1;
    c.P = P;
    c.degree = calloc(nlocal, sizeof *c.degree);
    edges = malloc(sizeof *edges * 2 * (E ? E : 1));
    tg = MPI_Wtime();
    for (uint64_t i = 0; i < E; i++) {
        gen_edge(rmat, scale, seed, (uint64_t)me * E + i, &edges[2 * i], &edges[2 * i + 1]);
        esum += edges[2 * i] + 1 + edges[2 * i + 1] + 1;
    }
    tg = MPI_Wtime() - tg;
    if (Iso_mailbox_create(MPI_COMM_WORLD, capacity, on_vertex, &c, MPI_INFO_NULL, &mb) !=
        MPI_SUCCESS)
        MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Barrier(MPI_COMM_WORLD);
    t0 = MPI_Wtime();
    for (uint64_t i = 0; i < 2 * E; i++)
        Iso_mailbox_send(mb, (int)(edges[i] % (uint64_t)P), &edges[i], sizeof edges[i]);
    Iso_mailbox_wait_empty(mb);
    t1 = MPI_Wtime();
    counts[0] = mb->stats.msgs;
    counts[1] = mb->stats.remote_msgs;
    counts[2] = mb->stats.remote_bytes;
    counts[3] = mb->stats.forwarded;
    peaks[0] = mb->stats.peak_queued;
    peaks[1] = mb->stats.peak_inflight;
    nodes = mb->routes.loc->nnodes;
    routing = iso__mb_routing_names[mb->routes.routing];
    Iso_mailbox_free(&mb);
    MPI_Allreduce(counts, totals, 4, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(peaks, maxpeaks, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
    dt = t1 - t0;
    MPI_Allreduce(&dt, &tmax, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    for (uint64_t k = 0; k < nlocal; k++) {
        uint64_t x = k * (uint64_t)P + (uint64_t)me;
        sums[0] += c.degree[k];
        sums[1] += c.degree[k] * (x + 1);
    }
    MPI_Allreduce(sums, gsums, 2, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(&esum, &gesum, 1, MPI_UINT64_T, MPI_SUM, MPI_COMM_WORLD);
    ok = gsums[0] == 2 * E * (uint64_t)P && gsums[1] == gesum;
    if (E * (uint64_t)P <= ((uint64_t)1 << 24) && scale <= 24) {
        /* the serial count on rank 0: every vertex */
        uint64_t *all = me == 0 ? malloc(sizeof *all * nlocal * (uint64_t)P) : NULL;
        MPI_Gather(c.degree, (int)nlocal, MPI_UINT64_T, all, (int)nlocal, MPI_UINT64_T, 0,
                   MPI_COMM_WORLD);
        if (me == 0) {
            uint64_t *serial = calloc(n, sizeof *serial), u, v, bad = 0;
            for (uint64_t g = 0; g < E * (uint64_t)P; g++) {
                gen_edge(rmat, scale, seed, g, &u, &v);
                serial[u]++;
                serial[v]++;
            }
            for (uint64_t x = 0; x < n; x++)
                bad += all[(x % (uint64_t)P) * nlocal + x / (uint64_t)P] != serial[x];
            ok = ok && bad == 0;
            printf("serial count: %llu of %llu vertices differ\n", (unsigned long long)bad,
                   (unsigned long long)n);
            free(serial);
        }
        free(all);
        MPI_Bcast(&ok, 1, MPI_INT, 0, MPI_COMM_WORLD);
    }
    if (me == 0) {
        const char *route = getenv("ISO_ROUTE");
        printf("graph=%s scale=%d edges/rank=%llu seed=%llu P=%d route=%s capacity=%zu\n",
               argv[1], scale, (unsigned long long)E, (unsigned long long)seed, P,
               route ? route : "auto", capacity);
        printf("time_s=%.4f gen_s=%.4f msgs_per_s=%.4g\n", tmax, tg,
               tmax > 0 ? 2.0 * (double)E * P / tmax : 0.0);
        printf("nodes=%d routing=%s mpi_msgs_per_proc=%.1f remote_msgs_per_proc=%.1f "
               "forwarded_per_proc=%.1f peak_queued=%lld peak_inflight=%lld\n", nodes, routing,
               (double)totals[0] / P, (double)totals[1] / P, (double)totals[3] / P, maxpeaks[0],
               maxpeaks[1]);
        printf("check %s\n", ok ? "ok" : "FAILED");
        printf("@row exp=mailbox_degree graph=%s scale=%d edges_per_rank=%llu np=%d nodes=%d "
               "competitor=%s capacity=%zu time_us=%.4f msgs_per_s=%.6g mpi_msgs_per_proc=%.1f "
               "remote_msgs_per_proc=%.1f remote_kb_per_proc=%.2f forwarded_per_proc=%.1f "
               "peak_queued=%lld peak_inflight=%lld check=%s\n", argv[1], scale, (unsigned long long)E, P, nodes, routing, capacity,
               tmax * 1e6, tmax > 0 ? 2.0 * (double)E * P / tmax : 0.0, (double)totals[0] / P,
               (double)totals[1] / P, (double)totals[2] / 1024.0 / P, (double)totals[3] / P,
               maxpeaks[0], maxpeaks[1], ok ? "ok" : "FAILED");
    }
    free(edges);
    free(c.degree);
    MPI_Finalize();
    return ok ? 0 : 1;
}
