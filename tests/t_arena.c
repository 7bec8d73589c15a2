/* The arena of packed messages (src/sched/arena.c) on random schedules of
 * the VPT plans' shape, without communication: rounds of PACK + SEND_MSG
 * (pieces: user blocks or entries of messages received in earlier rounds),
 * RECV_MSG, and DELIVERs of received entries in the round of arrival or
 * later.  The test keeps its own record of what it built and derives each
 * message's lifetime from it (time points 3 * round + step, step 0 packing,
 * 1 communication, 2 local ops: an outgoing message of round d lives
 * [3d, 3d+1], an incoming one from 3d+1 to its last reader), then checks
 * iso__arena_layout's offsets: 8-aligned, inside the arena, and disjoint
 * for every two messages alive at one time point; the arena at least the
 * most bytes alive at one time point, at most all messages, and less than
 * all whenever two lifetimes are disjoint.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1
 */
#include <stdio.h>
#include <stdlib.h>

#include "sched/exec.h"
#include "tap.h"

#define MAXM 64

typedef struct {
    size_t bytes[MAXM];
    int born[MAXM], dies[MAXM], nentries[MAXM], incoming[MAXM];
    int nm;
} record;

static unsigned long long rng = 12345;
static int rnd(int n)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (int)((rng >> 33) % (unsigned)n);
}

static size_t align8(size_t b)
{
    return (b + 7) / 8 * 8;
}

static void extend(record *rec, int m, int t)
{
    if (t > rec->dies[m])
        rec->dies[m] = t;
}

/* A random schedule of nrounds rounds and the test's own record of it. */
static void random_plan(iso_sched *s, record *rec, int nrounds)
{
    rec->nm = 0;
    for (int d = 0; d < nrounds; d++) {
        int nout = rnd(4), nin = rnd(4), first_in;
        for (int o = 0; o < nout && rec->nm < MAXM; o++) {
            int m = -1, n = 1 + rnd(3);
            for (int e = 0; e < n; e++) {
                int src = rnd(rec->nm + 1) - 1; /* -1: a user block */
                iso_piece pc = {ISO_PIECE_USER, e};
                if (src >= 0 && rec->incoming[src] && rec->born[src] < 3 * d) {
                    pc = (iso_piece){src, rnd(rec->nentries[src])};
                    extend(rec, src, 3 * d);
                }
                iso__sched_msg_add(s, &m, pc);
            }
            iso__sched_add(s, &(iso_op){.kind = ISO_OP_PACK, .msg = m});
            iso__sched_add(s, &(iso_op){.kind = ISO_OP_SEND_MSG, .msg = m, .nblocks = n});
            rec->bytes[m] = (size_t)(8 * n + rnd(200));
            rec->born[m] = 3 * d;
            rec->dies[m] = 3 * d + 1;
            rec->nentries[m] = n;
            rec->incoming[m] = 0;
            rec->nm = m + 1;
        }
        first_in = rec->nm;
        for (int i = 0; i < nin && rec->nm < MAXM; i++) {
            int m = -1, n = 1 + rnd(3);
            for (int e = 0; e < n; e++)
                iso__sched_msg_add(s, &m, (iso_piece){ISO_PIECE_SLOT, 0});
            iso__sched_add(s, &(iso_op){.kind = ISO_OP_RECV_MSG, .msg = m});
            rec->bytes[m] = (size_t)(8 * n + rnd(200));
            rec->born[m] = rec->dies[m] = 3 * d + 1;
            rec->nentries[m] = n;
            rec->incoming[m] = 1;
            rec->nm = m + 1;
        }
        /* deliveries: mostly of this round's arrivals, some of earlier ones */
        for (int m = 0; m < rec->nm; m++)
            if (rec->incoming[m] && (m >= first_in ? rnd(3) > 0 : rnd(4) == 0)) {
                iso__sched_add(s, &(iso_op){.kind = ISO_OP_DELIVER, .src = {m, 0}, .first = 1});
                extend(rec, m, 3 * d + 2);
            }
        iso__sched_end_round(s);
    }
}

/* The most bytes (8-aligned) alive at one time point. */
static size_t most_alive(const record *rec)
{
    size_t most = 0;
    for (int t = 0; t < 3 * 8; t++) {
        size_t now = 0;
        for (int m = 0; m < rec->nm; m++)
            if (rec->born[m] <= t && t <= rec->dies[m])
                now += align8(rec->bytes[m]);
        most = now > most ? now : most;
    }
    return most;
}

static void check_layout(const record *rec, const size_t off[], size_t total, int trial)
{
    size_t live_most = most_alive(rec), sum = 0;
    int disjoint = 0;
    for (int m = 0; m < rec->nm; m++) {
        sum += align8(rec->bytes[m]);
        CHECK(off[m] % 8 == 0 && off[m] + rec->bytes[m] <= total,
              "trial %d: message %d at %zu (%zu bytes) in an arena of %zu", trial, m, off[m],
              rec->bytes[m], total);
        for (int q = 0; q < m; q++) {
            int together = rec->born[m] <= rec->dies[q] && rec->born[q] <= rec->dies[m];
            disjoint |= !together;
            CHECK(!together || off[m] + rec->bytes[m] <= off[q] ||
                      off[q] + rec->bytes[q] <= off[m],
                  "trial %d: messages %d [%d,%d] and %d [%d,%d] alive together share bytes",
                  trial, m, rec->born[m], rec->dies[m], q, rec->born[q], rec->dies[q]);
        }
    }
    CHECK(total >= live_most && total <= sum, "trial %d: arena %zu outside [%zu, %zu]", trial,
          total, live_most, sum);
    CHECK(!disjoint || total < sum, "trial %d: arena %zu: no sharing", trial, total);
}

int main(int argc, char **argv)
{
    int optimal = 0, trials = 500;
    MPI_Init(&argc, &argv);
    for (int trial = 0; trial < trials; trial++) {
        iso_sched *s = NULL;
        record rec;
        size_t off[MAXM], total = 0;
        int err = iso__sched_new(&s);
        CHECK_EQ_INT(err, MPI_SUCCESS, "iso__sched_new");
        if (err != MPI_SUCCESS)
            break;
        random_plan(s, &rec, 1 + rnd(5));
        err = iso__arena_layout(s, rec.bytes, off, &total);
        CHECK_EQ_INT(err, MPI_SUCCESS, "trial %d: iso__arena_layout", trial);
        if (err == MPI_SUCCESS)
            check_layout(&rec, off, total, trial);
        optimal += total == most_alive(&rec);
        iso__sched_release(s);
    }
    printf("# arena = most bytes alive at once in %d of %d random schedules\n", optimal, trials);
    tap_result(MPI_COMM_WORLD, "arena layout: messages alive together never share bytes; "
               "the arena between the most bytes alive at once and all messages");
    MPI_Finalize();
    return 0;
}
