/* The mailbox (Iso_mailbox_*): random message storms against an oracle
 * every process computes from a shared seed.
 *
 * Per phase every process starts chains of messages; a message's callback
 * sends the next hop of its chain (fan-out: some send two), and a chain's
 * last message sometimes broadcasts from its callback; every process also
 * broadcasts at the top level, sends zero-length messages to its neighbour
 * and to itself.  Every process simulates the whole storm (it depends on
 * the seed alone) and checks, after each wait_empty, that it received
 * exactly the messages the simulation gives it: counts and checksums per
 * kind (exactly-once), the source the callback saw (the process that called
 * send, not a forwarder), every payload byte.  Some callbacks sleep (random
 * delays at termination).
 *
 * Every routing (none nl nr nlnr vpt auto) on pretend node maps
 * (ISO_NODE_MAP: one node, one rank per node, uneven sizes -- 3+5 and
 * 1+2+5 at 8 ranks --, interleaved), capacities from tiny (every message
 * its own buffer) to large, two phases per mailbox.  Remote messages per
 * routing are printed as comments; after every top-level send the queue
 * and the sends in flight are within the capacity (flow control); nr and nlnr broadcasts must cost one
 * remote message per other node, none one per remote process.
 * Regions below the node (iso_locality): two-level pretend maps (node.package,
 * uneven at both levels -- nodes 3+5 with packages 1+2 and 2+3 --, and
 * packages interleaved inside interleaved nodes) with nl, nr, nlnr at level
 * package, one three-level map at level numa; the broadcast's remote
 * messages (between regions) are R-1 for the R regions the test's own map
 * has, not the nodes' N-1: the level changed the routing.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 2 3 8
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mailbox/mailbox.h"
#include "tap.h"

static int P, ME;

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

#define CHAINS 12
#define BCASTS 2

/* A chain message: id, hops still to go, then id % 23 bytes of pattern. */
typedef struct {
    uint64_t id;
    int32_t hops, kind; /* kind 0: chain, 1: broadcast, 2: top-level broadcast */
} msg_t;

static size_t extra_of(uint64_t id)
{
    return (size_t)(id % 23);
}

static int dest_of(uint64_t id)
{
    return (int)(mix(id ^ 0x5555) % (uint64_t)P);
}

/* What each process expects (the oracle) or got. */
typedef struct {
    long long chain_n, bcast_n, zero_n;
    uint64_t chain_sum, bcast_sum;
} tally;

static void tally_chain(tally *t, uint64_t id, int source)
{
    t->chain_n++;
    t->chain_sum += mix(id) + (uint64_t)source * 7919u;
}

static void tally_bcast(tally *t, uint64_t id, int source)
{
    t->bcast_n++;
    t->bcast_sum += mix(id + 1) + (uint64_t)source * 104729u;
}

/* The storm as every process sees it: message id, sent by `sender` to
 * dest with `hops` to go. */
static void simulate(tally *exp, uint64_t id, int hops, int sender, int dest)
{
    tally_chain(&exp[dest], id, sender);
    if (hops > 0) {
        uint64_t next = mix(id + (uint64_t)hops);
        simulate(exp, next, hops - 1, dest, dest_of(next));
        if ((id & 7) == 0) { /* fan-out */
            uint64_t other = mix(id + 100 + (uint64_t)hops);
            simulate(exp, other, hops - 1, dest, dest_of(other));
        }
    } else if (id % 11 == 0) { /* the last hop broadcasts */
        for (int q = 0; q < P; q++)
            if (q != dest)
                tally_bcast(&exp[q], id, dest);
    }
}

static uint64_t chain_id(int phase, int origin, int k, uint64_t seed)
{
    return mix(seed ^ mix((uint64_t)phase * 1000003u + (uint64_t)origin * 7919u + (uint64_t)k));
}

static uint64_t bcast_id(int phase, int origin, int j, uint64_t seed)
{
    return mix(seed + 77 + mix((uint64_t)phase * 31u + (uint64_t)origin * 1009u + (uint64_t)j));
}

typedef struct {
    tally got;
    long long bad; /* payload or source errors seen in callbacks */
    uint64_t delay_seed;
} state;

static int send_msg(Iso_mailbox mb, int dest, uint64_t id, int hops, int kind)
{
    unsigned char buf[sizeof(msg_t) + 32];
    msg_t m = {id, hops, kind};
    size_t extra = extra_of(id);
    memcpy(buf, &m, sizeof m);
    for (size_t i = 0; i < extra; i++)
        buf[sizeof m + i] = (unsigned char)(id + i);
    if (kind == 0)
        return Iso_mailbox_send(mb, dest, buf, sizeof m + extra);
    return Iso_mailbox_bcast(mb, buf, sizeof m + extra);
}

static void on_recv(Iso_mailbox mb, int source, const void *data, size_t bytes, void *ctx)
{
    state *s = ctx;
    msg_t m;
    if (bytes == 0) {
        s->got.zero_n++;
        if (source != (ME + P - 1) % P && source != ME)
            s->bad++;
        return;
    }
    if (bytes < sizeof m || ((uintptr_t)data & 7) != 0) {
        s->bad++;
        return;
    }
    memcpy(&m, data, sizeof m);
    if (bytes != sizeof m + extra_of(m.id))
        s->bad++;
    for (size_t i = 0; i < bytes - sizeof m && i < 32; i++)
        if (((const unsigned char *)data)[sizeof m + i] != (unsigned char)(m.id + i))
            s->bad++;
    if (m.kind != 0) {
        tally_bcast(&s->got, m.id, source);
        return;
    }
    tally_chain(&s->got, m.id, source);
    s->delay_seed = mix(s->delay_seed + m.id);
    if (s->delay_seed % 61 == 0) { /* a random delay inside a callback */
        struct timespec ts = {0, 200000};
        nanosleep(&ts, NULL);
    }
    if (m.hops > 0) {
        uint64_t next = mix(m.id + (uint64_t)m.hops);
        send_msg(mb, dest_of(next), next, m.hops - 1, 0);
        if ((m.id & 7) == 0) {
            uint64_t other = mix(m.id + 100 + (uint64_t)m.hops);
            send_msg(mb, dest_of(other), other, m.hops - 1, 0);
        }
    } else if (m.id % 11 == 0) {
        send_msg(mb, -1, m.id, 0, 1);
    }
}

/* One phase on mb: the storm, checked against the oracle. */
static void phase(Iso_mailbox mb, state *s, int ph, uint64_t seed, const char *what)
{
    tally *exp = calloc((size_t)P, sizeof *exp);
    memset(&s->got, 0, sizeof s->got);
    s->bad = 0;
    for (int r = 0; r < P; r++) {
        for (int k = 0; k < CHAINS; k++) {
            uint64_t id = chain_id(ph, r, k, seed);
            simulate(exp, id, (int)(id % 4), r, dest_of(id));
        }
        for (int j = 0; j < BCASTS; j++)
            for (int q = 0; q < P; q++)
                if (q != r)
                    tally_bcast(&exp[q], bcast_id(ph, r, j, seed), r);
        exp[(r + 1) % P].zero_n++;
        exp[r].zero_n++;
    }
    for (int k = 0; k < CHAINS; k++) {
        uint64_t id = chain_id(ph, ME, k, seed);
        CHECK(send_msg(mb, dest_of(id), id, (int)(id % 4), 0) == MPI_SUCCESS, "%s: send", what);
        /* the memory bound of a top-level call: queue below capacity,
         * at most capacity bytes of sends unfinished */
        CHECK(mb->queued < mb->capacity && mb->inflight <= mb->capacity,
              "%s: %zu bytes queued, %zu in flight, capacity %zu", what, mb->queued,
              mb->inflight, mb->capacity);
        if (k == CHAINS / 2)
            CHECK(Iso_mailbox_flush(mb) == MPI_SUCCESS, "%s: flush", what);
    }
    for (int j = 0; j < BCASTS; j++)
        CHECK(send_msg(mb, -1, bcast_id(ph, ME, j, seed), 0, 2) == MPI_SUCCESS, "%s: bcast", what);
    CHECK(Iso_mailbox_send(mb, (ME + 1) % P, NULL, 0) == MPI_SUCCESS, "%s: zero bytes", what);
    CHECK(Iso_mailbox_send(mb, ME, "", 0) == MPI_SUCCESS, "%s: zero bytes to oneself", what);
    if (ME % 3 == 1) { /* a late process */
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
    CHECK(Iso_mailbox_wait_empty(mb) == MPI_SUCCESS, "%s: wait_empty", what);
    CHECK_EQ_INT(s->bad, 0, "%s phase %d: payloads and sources", what, ph);
    CHECK_EQ_INT(s->got.chain_n, exp[ME].chain_n, "%s phase %d: chain messages", what, ph);
    CHECK(s->got.chain_sum == exp[ME].chain_sum, "%s phase %d: chain checksum", what, ph);
    CHECK_EQ_INT(s->got.bcast_n, exp[ME].bcast_n, "%s phase %d: broadcasts", what, ph);
    CHECK(s->got.bcast_sum == exp[ME].bcast_sum, "%s phase %d: broadcast checksum", what, ph);
    CHECK_EQ_INT(s->got.zero_n, exp[ME].zero_n, "%s phase %d: zero-length messages", what, ph);
    free(exp);
}

/* ---- node maps ---------------------------------------------------------------- */
typedef struct {
    const char *name;
    int (*node)(int r, int p);
    int (*package)(int r, int p); /* NULL: one level */
    int (*numa)(int r, int p);    /* NULL: no third level */
} map_t;

static int one_node(int r, int p) { (void)r; (void)p; return 0; }
static int per_rank(int r, int p) { (void)p; return r; }
/* 3+5 at 8 ranks; elsewhere: a first node of ceil(p/3), the rest */
static int uneven2(int r, int p) { return r < (p == 8 ? 3 : (p + 2) / 3) ? 0 : 1; }
/* 1+2+5 at 8 ranks; elsewhere sizes 1, 2, rest */
static int uneven3(int r, int p) { (void)p; return r < 1 ? 0 : r < 3 ? 1 : 2; }
/* interleaved: rank r on node r mod 3 */
static int interleaved(int r, int p) { (void)p; return r % 3; }

static const map_t maps[] = {{"one node", one_node, NULL, NULL},
                             {"one rank per node", per_rank, NULL, NULL},
                             {"uneven 3+5", uneven2, NULL, NULL},
                             {"uneven 1+2+5", uneven3, NULL, NULL},
                             {"interleaved r%3", interleaved, NULL, NULL}};

/* Packages inside uneven2's nodes: a first package of ceil(size/3) of the
 * node's ranks, the rest (3+5 at 8 ranks: packages 1+2 and 2+3). */
static int uneven2_package(int r, int p)
{
    int first = 0, size = 0;
    for (int q = 0; q < p; q++)
        if (uneven2(q, p) == uneven2(r, p)) {
            if (size++ == 0)
                first = q;
        }
    return r - first < (size + 2) / 3 ? 0 : 1;
}
/* interleaved at two levels: node r mod 2, package r/2 mod 2 inside it */
static int inter2(int r, int p) { (void)p; return r % 2; }
static int inter2_package(int r, int p) { (void)p; return r / 2 % 2; }
/* and a third: NUMA domain r/4 mod 2 inside the package */
static int inter2_numa(int r, int p) { (void)p; return r / 4 % 2; }

static const map_t package_maps[] = {
    {"nodes 3+5, packages 1+2 and 2+3", uneven2, uneven2_package, NULL},
    {"nodes r%2, packages r/2%2 inside", inter2, inter2_package, NULL}};
static const map_t numa_map = {"nodes r%2, packages r/2%2, NUMA r/4%2", inter2, inter2_package,
                               inter2_numa};

static void set_map(const map_t *m)
{
    char *s = malloc((size_t)P * 40 + 1);
    int len = 0;
    for (int r = 0; r < P; r++) {
        len += sprintf(s + len, "%s%d", r ? "," : "", m->node(r, P));
        if (m->package)
            len += sprintf(s + len, ".%d", m->package(r, P));
        if (m->numa)
            len += sprintf(s + len, ".%d", m->numa(r, P));
    }
    setenv("ISO_NODE_MAP", s, 1);
    free(s);
}

/* The regions of m at level (the test's own count, from the map alone):
 * distinct (node, package, numa) ids down to the level. */
static int regions_of(const map_t *m, const char *level)
{
    int n = 0, depth = !strcmp(level, "numa") ? 2 : !strcmp(level, "package") ? 1 : 0;
    for (int r = 0; r < P; r++) {
        int seen = 0;
        for (int q = 0; q < r && !seen; q++)
            seen = m->node(q, P) == m->node(r, P) &&
                   (depth < 1 || !m->package || m->package(q, P) == m->package(r, P)) &&
                   (depth < 2 || !m->numa || m->numa(q, P) == m->numa(r, P));
        n += !seen;
    }
    return n;
}

static const char *routings[] = {"none", "nl", "nr", "nlnr", "vpt", "auto"};
static const size_t capacities[] = {40, 512, 1 << 20};

static void count_recv(Iso_mailbox mb, int source, const void *data, size_t bytes, void *ctx)
{
    (void)mb;
    (void)source;
    (void)data;
    (void)bytes;
    (*(long long *)ctx)++;
}

/* One broadcast from rank root costs exactly this many remote buffers
 * (between regions of the level). */
static void bcast_cost(MPI_Comm comm, const char *routing, const map_t *map, const char *level)
{
    const char *mapname = map->name;
    const iso_locality *l;
    MPI_Info info;
    Iso_mailbox mb;
    long long got = 0, remote, total;
    int root = P - 1;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_route", routing);
    if (strcmp(level, "node"))
        MPI_Info_set(info, "iso_locality", level);
    CHECK(Iso_mailbox_create(comm, 1 << 16, count_recv, &got, info, &mb) == MPI_SUCCESS,
          "create");
    MPI_Info_free(&info);
    l = mb->routes.loc;
    CHECK_EQ_INT(l->nnodes, regions_of(map, level), "%s on %s: regions at level %s", routing,
                 mapname, level);
    /* a send phase first: a broadcast-only phase after one once hung
     * (a buffer of the next phase held but not counted as received) */
    Iso_mailbox_send(mb, (ME + 1) % P, "y", 1);
    Iso_mailbox_wait_empty(mb);
    CHECK_EQ_INT(got, 1, "%s on %s: the send phase before the broadcast", routing, mapname);
    got = 0;
    remote = mb->stats.remote_msgs;
    if (ME == root)
        Iso_mailbox_bcast(mb, "x", 1);
    Iso_mailbox_wait_empty(mb);
    CHECK_EQ_INT(got, ME == root ? 0 : 1, "%s on %s: one broadcast arrives once", routing,
                 mapname);
    remote = mb->stats.remote_msgs - remote;
    MPI_Allreduce(&remote, &total, 1, MPI_LONG_LONG, MPI_SUM, comm);
    if (!strcmp(routing, "nr") || !strcmp(routing, "nlnr"))
        CHECK_EQ_INT(total, regions_of(map, level) - 1,
                     "%s on %s: remote messages of one broadcast (level %s)", routing, mapname,
                     level);
    if (!strcmp(routing, "none"))
        CHECK_EQ_INT(total, P - iso__node_size(l, l->node[root]),
                     "%s on %s: remote messages of one broadcast", routing, mapname);
    Iso_mailbox_free(&mb);
}

/* Storms with each of routings on map m (number mi: the seeds) at the
 * locality level (iso_locality), and one broadcast's cost. */
static void run_map(const map_t *map, size_t mi, const char *const *routes, size_t nroutes,
                    const char *level)
{
    MPI_Comm comm;
    set_map(map);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* reads the map */
    for (size_t r = 0; r < nroutes; r++) {
        long long remote[3] = {0}, records[3] = {0}, sums[6];
        for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
            state s = {{0}, 0, (uint64_t)ME * 31 + c};
            MPI_Info info;
            Iso_mailbox mb = NULL;
            char what[96];
            snprintf(what, sizeof what, "%s, %s, %s level, capacity %zu", map->name, routes[r],
                     level, capacities[c]);
            MPI_Info_create(&info);
            MPI_Info_set(info, "iso_route", routes[r]);
            if (strcmp(level, "node")) /* node: the default, no key */
                MPI_Info_set(info, "iso_locality", level);
            CHECK(Iso_mailbox_create(comm, capacities[c], on_recv, &s, info, &mb) ==
                      MPI_SUCCESS,
                  "%s: create", what);
            MPI_Info_free(&info);
            if (mb == NULL)
                continue;
            for (int ph = 0; ph < 2; ph++)
                phase(mb, &s, ph, 12345 + mi * 100 + r * 10 + c, what);
            remote[c] = mb->stats.remote_msgs;
            records[c] = mb->stats.records - mb->stats.forwarded;
            CHECK(Iso_mailbox_free(&mb) == MPI_SUCCESS && mb == NULL, "%s: free", what);
        }
        MPI_Allreduce(remote, sums, 3, MPI_LONG_LONG, MPI_SUM, comm);
        MPI_Allreduce(records, sums + 3, 3, MPI_LONG_LONG, MPI_SUM, comm);
        if (ME == 0)
            printf("# %s, %s, %s level: remote buffers per process at capacity 40 / 512 / 1M: "
                   "%.1f / %.1f / %.1f (%.1f messages sent per process)\n",
                   map->name, routes[r], level, sums[0] / (double)P, sums[1] / (double)P,
                   sums[2] / (double)P, sums[3] / (double)P);
        bcast_cost(comm, routes[r], map, level);
        tap_result(MPI_COMM_WORLD, "%s, %s, %s level: storms at 3 capacities, 2 phases each, "
                                   "exactly once; broadcast cost", map->name, routes[r], level);
    }
    MPI_Comm_free(&comm);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &ME);
    unsetenv("ISO_ROUTE");
    unsetenv("ISO_LOCALITY");
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++)
        run_map(&maps[m], m, routings, sizeof routings / sizeof routings[0], "node");
    for (size_t m = 0; m < sizeof package_maps / sizeof package_maps[0]; m++)
        run_map(&package_maps[m], 10 + m, routings + 1, 3, "package"); /* nl nr nlnr */
    run_map(&numa_map, 20, routings + 3, 1, "numa"); /* nlnr */
    unsetenv("ISO_NODE_MAP");
    {
        /* an explicit VPT shape, and MPI_COMM_WORLD's own nodes */
        state s = {{0}, 0, 5};
        MPI_Info info;
        Iso_mailbox mb = NULL;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_route", "vpt");
        if (P == 8)
            MPI_Info_set(info, "iso_vpt_dims", "2,2,2");
        else
            MPI_Info_set(info, "iso_vpt_n", "3");
        CHECK(Iso_mailbox_create(MPI_COMM_WORLD, 100, on_recv, &s, info, &mb) == MPI_SUCCESS,
              "create");
        MPI_Info_free(&info);
        for (int ph = 0; ph < 3 && mb; ph++)
            phase(mb, &s, ph, 999, "vpt 3 dims on MPI_COMM_WORLD");
        CHECK(Iso_mailbox_free(&mb) == MPI_SUCCESS, "free");
        tap_result(MPI_COMM_WORLD, "vpt in 3 dimensions (iso_vpt_dims / iso_vpt_n), 3 phases");
    }
    MPI_Finalize();
    return 0;
}
