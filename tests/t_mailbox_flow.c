/* The mailbox's flow control (DESIGN.md, "Flow control"): floods through
 * forwarding processes with tiny capacities stay within the documented
 * memory bound, and every message still arrives exactly once.
 *
 * Every process sends FLOOD messages at the top level (no sends from
 * callbacks), half of them to the last rank -- which on the map "gate"
 * is alone on its node, so that under nl, nr and nlnr a few processes
 * forward for all others -- and half to seeded random ranks, 0 to 40
 * bytes each; the last rank's callback sleeps now and then (a slow
 * receiver).  The oracle: every sender tallies what it sent per
 * destination (count, checksum of id and payload); an MPI_Alltoall brings
 * each receiver the tallies of its sources, compared with what its
 * callbacks saw (source, payload bytes, count, checksum), per source.
 *
 * The bound (include/isocoll.h, "Memory"): without sends from callbacks,
 * the bytes a process holds in posted sends stay at most
 * levels x (capacity + 2 x bufmax), with levels the routing's hop levels
 * (none 1, nl and nr 2, nlnr 3, vpt n) and bufmax = the largest buffer
 * (capacity padded to 8 plus one record of capacity bytes), and the queue
 * at most bufmax: checked on the largest peak any process reached
 * (mb->stats.peak_inflight, peak_queued).
 *
 * Every routing (none nl nr nlnr vpt) on pretend node maps (ISO_NODE_MAP:
 * one node, the gate map, uneven 3 + rest, interleaved, one rank per node)
 * at capacities 256 and 1024 bytes, two phases per mailbox.
 *
 * PER-ALGORITHM: no
 * NPROCS: 4 8
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mailbox/mailbox.h"
#include "tap.h"

static int P, ME;

#define FLOOD 2000
#define MAXEXTRA 32

static uint64_t mix(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ULL;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
    return x ^ (x >> 31);
}

/* per source (receiver side) or per destination (sender side) */
typedef struct {
    long long n;
    uint64_t sum;
} tally;

typedef struct {
    tally *got; /* [P] by source */
    long long bad;
    long long seen;
} state;

/* Message id k of phase ph from origin: its id, destination, payload. */
static uint64_t msg_id(int ph, int origin, int k, uint64_t seed)
{
    return mix(seed ^ mix((uint64_t)ph * 1000003u + (uint64_t)origin * 7919u + (uint64_t)k));
}

static int dest_of(uint64_t id)
{
    return id & 1 ? P - 1 : (int)(mix(id ^ 0x77) % (uint64_t)P);
}

static size_t extra_of(uint64_t id)
{
    return (size_t)(mix(id + 3) % (MAXEXTRA + 1));
}

/* payload byte i (i >= 8) of message id */
static unsigned char pattern(uint64_t id, size_t i)
{
    return (unsigned char)((id >> (i % 8 * 8)) + i);
}

static uint64_t checksum(uint64_t id, int source)
{
    return mix(id) + (uint64_t)source * 7919u;
}

static void on_recv(Iso_mailbox mb, int source, const void *data, size_t bytes, void *ctx)
{
    state *s = ctx;
    const unsigned char *b = data;
    uint64_t id;
    (void)mb;
    if (bytes < sizeof id || source < 0 || source >= P) {
        s->bad++;
        return;
    }
    memcpy(&id, b, sizeof id);
    if (bytes != sizeof id + extra_of(id) || dest_of(id) != ME) {
        s->bad++;
        return;
    }
    for (size_t i = sizeof id; i < bytes; i++)
        if (b[i] != pattern(id, i))
            s->bad++;
    s->got[source].n++;
    s->got[source].sum += checksum(id, source);
    if (ME == P - 1 && ++s->seen % 700 == 0) { /* the slow receiver */
        struct timespec ts = {0, 2000000};
        nanosleep(&ts, NULL);
    }
}

/* One flood phase and its check against the senders' tallies. */
static void phase(Iso_mailbox mb, state *s, int ph, uint64_t seed, const char *what)
{
    tally *sent = calloc((size_t)P, sizeof *sent), *expect = calloc((size_t)P, sizeof *expect);
    unsigned char buf[8 + MAXEXTRA];
    long long wrong = 0;
    memset(s->got, 0, sizeof *s->got * (size_t)P);
    s->bad = 0;
    for (int k = 0; k < FLOOD; k++) {
        uint64_t id = msg_id(ph, ME, k, seed);
        int dest = dest_of(id);
        size_t bytes = 8 + extra_of(id);
        memcpy(buf, &id, 8);
        for (size_t i = 8; i < bytes; i++)
            buf[i] = pattern(id, i);
        sent[dest].n++;
        sent[dest].sum += checksum(id, ME);
        CHECK(Iso_mailbox_send(mb, dest, buf, bytes) == MPI_SUCCESS, "%s: send", what);
    }
    CHECK(Iso_mailbox_wait_empty(mb) == MPI_SUCCESS, "%s: wait_empty", what);
    MPI_Alltoall(sent, 2, MPI_LONG_LONG, expect, 2, MPI_LONG_LONG, MPI_COMM_WORLD);
    for (int q = 0; q < P; q++)
        wrong += expect[q].n != s->got[q].n || expect[q].sum != s->got[q].sum;
    CHECK(wrong == 0 && s->bad == 0,
          "%s, phase %d: %lld sources with wrong counts or checksums, %lld bad messages", what,
          ph, wrong, s->bad);
    free(sent);
    free(expect);
}

typedef struct {
    const char *name;
    int (*node)(int r, int p);
} map_t;

static int one_node(int r, int p) { (void)r; (void)p; return 0; }
static int gate_map(int r, int p) { return r == p - 1; }
static int uneven(int r, int p) { (void)p; return r >= 3; }
static int interleaved(int r, int p) { (void)p; return r % 2; }
static int per_rank(int r, int p) { (void)p; return r; }

static const map_t maps[] = {{"one node", one_node},
                             {"gate: the last rank alone", gate_map},
                             {"uneven 3 + rest", uneven},
                             {"interleaved r%2", interleaved},
                             {"one rank per node", per_rank}};
static const char *const routings[] = {"none", "nl", "nr", "nlnr", "vpt"};
static const size_t capacities[] = {256, 1024};

static void set_map(const map_t *m)
{
    char *s = malloc((size_t)P * 12 + 1);
    int len = 0;
    for (int r = 0; r < P; r++)
        len += sprintf(s + len, "%s%d", r ? "," : "", m->node(r, P));
    setenv("ISO_NODE_MAP", s, 1);
    free(s);
}

int main(int argc, char **argv)
{
    state s;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &ME);
    unsetenv("ISO_ROUTE");
    unsetenv("ISO_LOCALITY");
    s.got = calloc((size_t)P, sizeof *s.got);
    for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
        MPI_Comm comm;
        set_map(&maps[m]);
        MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* reads the map */
        for (size_t r = 0; r < sizeof routings / sizeof routings[0]; r++) {
            for (size_t c = 0; c < sizeof capacities / sizeof capacities[0]; c++) {
                MPI_Info info;
                Iso_mailbox mb = NULL;
                long long mine[3], peak[3];
                size_t cap = capacities[c], bufmax, bound;
                int levels;
                char what[96];
                snprintf(what, sizeof what, "%s, %s, capacity %zu", maps[m].name, routings[r],
                         cap);
                MPI_Info_create(&info);
                MPI_Info_set(info, "iso_route", routings[r]);
                CHECK(Iso_mailbox_create(comm, cap, on_recv, &s, info, &mb) == MPI_SUCCESS,
                      "%s: create", what);
                MPI_Info_free(&info);
                if (mb == NULL)
                    continue;
                s.seen = 0;
                for (int ph = 0; ph < 2; ph++)
                    phase(mb, &s, ph, 4242 + m * 100 + r * 10 + c, what);
                /* the bound, from the routing's hop count and the capacity */
                levels = !strcmp(routings[r], "none")   ? 1
                         : !strcmp(routings[r], "nlnr") ? 3
                         : !strcmp(routings[r], "vpt")  ? mb->routes.n
                                                        : 2;
                bufmax = (cap + 7) / 8 * 8 + 16 + (cap + 7) / 8 * 8;
                bound = (size_t)levels * (cap + 2 * bufmax);
                mine[0] = mb->stats.peak_inflight;
                mine[1] = mb->stats.peak_queued;
                mine[2] = mb->stats.held;
                MPI_Allreduce(mine, peak, 3, MPI_LONG_LONG, MPI_MAX, comm);
                if (ME == 0)
                    printf("# %s: peak in flight %lld bytes (bound %zu), peak queued %lld, "
                           "buffers held back %lld (most on a process)\n",
                           what, peak[0], bound, peak[1], peak[2]);
                CHECK(peak[0] <= (long long)bound && peak[1] <= (long long)bufmax,
                      "%s: peak %lld bytes in flight (bound %zu), %lld queued (bound %zu)", what,
                      peak[0], bound, peak[1], bufmax);
                CHECK(Iso_mailbox_free(&mb) == MPI_SUCCESS && mb == NULL, "%s: free", what);
            }
            tap_result(MPI_COMM_WORLD, "%s, %s: floods at capacities 256 and 1024, exactly once, "
                                       "memory within the bound", maps[m].name, routings[r]);
        }
        MPI_Comm_free(&comm);
    }
    unsetenv("ISO_NODE_MAP");
    free(s.got);
    MPI_Finalize();
    return 0;
}
