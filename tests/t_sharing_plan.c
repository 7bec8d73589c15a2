/* Message sharing's planner (src/route/sharing_plan.c, Duymus 2021) against
 * independent facts:
 *   (the splits are checked on the plan after phase I alone:
 *   iso__sharing_plan_phases(.., 1, ..); phase II may move them on)
 *   - figures 4.1-4.2: two processes with the same six targets share three
 *     messages each way and end with four messages each (three targets and
 *     the partner), as the thesis says ("the reduction ... is in fact two");
 *   - section 4.2: |SS(Pmax)| = 100, |SS(Pfriend)| = 80 with |C| = 10
 *     (equal sharing impossible: 90 and 80) and |C| = 40 (alpha = 30: 70
 *     and 70), the two processes targeting each other so that no overhead
 *     message blurs the thesis's arithmetic;
 *   - random seeded patterns, K = 1..64 (primes included), empty lists,
 *     one-to-all, all-to-one: every sender valid and never the target,
 *     the figures recomputed here from sender[] alone (loads as the
 *     messages the executor sends in its two stages), mmax non-increasing
 *     over the phases, the same plan twice;
 *   - bad patterns give MPI_ERR_ARG.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "route/route.h"
#include "tap.h"

/* A pattern built one process at a time from a K x K 0/1 table. */
typedef struct {
    int K;
    long long *start;
    int *targets;
    long long *bytes;
    iso_pattern pat;
} pattern;

static void pattern_from_table(pattern *P, int K, const unsigned char *a)
{
    P->K = K;
    P->start = calloc((size_t)K + 1, sizeof *P->start);
    long long m = 0;
    for (int p = 0; p < K; p++)
        for (int t = 0; t < K; t++)
            m += a[(size_t)p * K + t] && t != p;
    P->targets = malloc((size_t)(m ? m : 1) * sizeof *P->targets);
    P->bytes = malloc((size_t)(m ? m : 1) * sizeof *P->bytes);
    m = 0;
    for (int p = 0; p < K; p++) {
        for (int t = 0; t < K; t++)
            if (a[(size_t)p * K + t] && t != p) {
                P->bytes[m] = 8 * (1 + (p + 3 * t) % 5);
                P->targets[m++] = t;
            }
        P->start[p + 1] = m;
    }
    P->pat = (iso_pattern){K, P->start, P->targets, P->bytes};
}

static void pattern_free(pattern *P)
{
    free(P->start);
    free(P->targets);
    free(P->bytes);
}

static int source_of(const iso_pattern *pat, long long e)
{
    int p = 0;
    while (pat->start[p + 1] <= e)
        p++;
    return p;
}

/* The figures of plan s recomputed from its sender[] alone, as the
 * executor (src/route/sharing.c) sends: process p sends one stage-1
 * message to every partner that sends one of its messages (with p's own
 * message to that partner, if p still sends it), and one stage-2 message
 * to every target of the other messages it is the sender of.  A partner
 * that is also such a target gets two: what p forwards reaches p only in
 * stage 1.  The overhead: stage-1 messages carrying no own message. */
typedef struct {
    long long mmax, total, overhead;
    double volume;
} figures;

static figures recompute(const iso_pattern *pat, const iso_sharing *s)
{
    int K = pat->K;
    unsigned char *stage2 = calloc((size_t)K * K, 1), *partner = calloc((size_t)K * K, 1);
    unsigned char *own = calloc((size_t)K * K, 1);
    double direct = 0, moved = 0;
    for (long long e = 0; e < pat->start[K]; e++) {
        int src = source_of(pat, e), q = s->sender[e];
        if (q != src)
            partner[(size_t)src * K + q] = 1;
        else
            own[(size_t)src * K + pat->targets[e]] = 1;
        double b = pat->bytes ? (double)pat->bytes[e] : 0;
        direct += b;
        moved += b * (q != src ? 2 : 1);
    }
    for (long long e = 0; e < pat->start[K]; e++) {
        int src = source_of(pat, e), q = s->sender[e], t = pat->targets[e];
        if (q != src || !partner[(size_t)src * K + t])
            stage2[(size_t)q * K + t] = 1;
    }
    figures f = {0, 0, 0, 1.0};
    for (int p = 0; p < K; p++) {
        long long load = 0;
        for (int x = 0; x < K; x++) {
            int t = stage2[(size_t)p * K + x], q = partner[(size_t)p * K + x];
            load += t + q;
            f.overhead += q && !own[(size_t)p * K + x];
        }
        f.total += load;
        if (load > f.mmax)
            f.mmax = load;
    }
    if (pat->bytes && direct > 0)
        f.volume = moved / direct;
    free(stage2);
    free(partner);
    free(own);
    return f;
}

static void test_figure_4_1(void)
{
    /* P0 and P1 (the thesis's P1 and P2) both send to 2..7, not to each other */
    int K = 8;
    unsigned char a[64] = {0};
    for (int p = 0; p < 2; p++)
        for (int t = 2; t < 8; t++)
            a[p * K + t] = 1;
    pattern P;
    pattern_from_table(&P, K, a);
    iso_sharing s, full;
    int rc = iso__sharing_plan_phases(&P.pat, 1, &s);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "figure 4.1: planned");
    CHECK_EQ_INT(iso__sharing_plan(&P.pat, &full), MPI_SUCCESS, "figure 4.1: planned fully");
    CHECK(full.phase2_mmax <= 4 && full.phase1_mmax == 4, "figure 4.1: phases %lld %lld",
          full.phase1_mmax, full.phase2_mmax);
    iso__sharing_free(&full);
    if (rc == MPI_SUCCESS) {
        CHECK_EQ_INT(s.initial_mmax, 6, "figure 4.1: six messages each at first");
        CHECK_EQ_INT(s.phase1_mmax, 4, "figure 4.2: four messages each after sharing");
        CHECK_EQ_INT(s.phase2_mmax, 4, "phase I only: the final figure is phase I's");
        CHECK_EQ_INT(s.overhead, 2, "figure 4.2: one partner message each");
        /* three each way (alpha = 3) */
        int shared01 = 0, shared10 = 0;
        for (long long e = 0; e < 12; e++) {
            int src = e < 6 ? 0 : 1;
            shared01 += src == 0 && s.sender[e] == 1;
            shared10 += src == 1 && s.sender[e] == 0;
        }
        CHECK_EQ_INT(shared01, 3, "figure 4.2: P0 shared three with P1");
        CHECK_EQ_INT(shared10, 3, "figure 4.2: P1 shared three with P0");
        for (long long e = 0; e < 3; e++)
            CHECK_EQ_INT(s.sender[e], 1, "P0's first three targets (ascending) go by P1");
        figures f = recompute(&P.pat, &s);
        CHECK_EQ_INT(f.mmax, s.phase2_mmax, "figure 4.1: reported mmax is the plan's");
        iso__sharing_free(&s);
    }
    pattern_free(&P);
    tap_result(MPI_COMM_WORLD, "figures 4.1-4.2: six identical targets, four messages each after phase I");
}

/* Section 4.2: P0 sends to P1 and 99 more, P1 to P0 and 79 more, c common. */
static void test_100_80(int c, long long want0)
{
    int only0 = 99 - c, only1 = 79 - c, K = 2 + c + only0 + only1;
    unsigned char *a = calloc((size_t)K * K, 1);
    a[0 * K + 1] = a[1 * K + 0] = 1;
    int t = 2;
    for (int i = 0; i < c; i++, t++)
        a[0 * K + t] = a[1 * K + t] = 1;
    for (int i = 0; i < only0; i++, t++)
        a[0 * K + t] = 1;
    for (int i = 0; i < only1; i++, t++)
        a[1 * K + t] = 1;
    pattern P;
    pattern_from_table(&P, K, a);
    iso_sharing s, full;
    int rc = iso__sharing_plan_phases(&P.pat, 1, &s);
    CHECK_EQ_INT(rc, MPI_SUCCESS, "planned");
    CHECK_EQ_INT(iso__sharing_plan(&P.pat, &full), MPI_SUCCESS, "planned fully");
    CHECK_EQ_INT(full.phase1_mmax, want0, "|C| = %d: phase I of the full plan", c);
    CHECK(full.phase2_mmax <= full.phase1_mmax, "phase II no worse");
    iso__sharing_free(&full);
    if (rc == MPI_SUCCESS) {
        CHECK_EQ_INT(s.initial_mmax, 100, "|SS(Pmax)| = 100 at first");
        CHECK_EQ_INT(s.phase1_mmax, want0, "|C| = %d: |SS(Pmax)|' after phase I", c);
        CHECK_EQ_INT(s.overhead, 0, "|C| = %d: P0 and P1 target each other: no overhead", c);
        /* the first step's split, read from sender[] of the common targets */
        int p0_to_p1 = 0, p1_to_p0 = 0;
        for (long long e = P.start[0]; e < P.start[1]; e++)
            p0_to_p1 += P.targets[e] >= 2 && P.targets[e] < 2 + c && P.targets[e] != 1 &&
                        s.sender[e] == 1;
        for (long long e = P.start[1]; e < P.start[2]; e++)
            p1_to_p0 += P.targets[e] >= 2 && P.targets[e] < 2 + c && s.sender[e] == 0;
        CHECK_EQ_INT(p0_to_p1, c == 10 ? 10 : 30, "|C| = %d: messages Pmax shared with Pfriend", c);
        CHECK_EQ_INT(p1_to_p0, c == 10 ? 0 : 10, "|C| = %d: messages Pfriend shared with Pmax", c);
        iso__sharing_free(&s);
    }
    pattern_free(&P);
    free(a);
    tap_result(MPI_COMM_WORLD, "section 4.2: 100/80 with |C| = %d gives %lld after phase I", c,
               want0);
}

static unsigned long long rng;
static unsigned rnd(void)
{
    rng = rng * 6364136223846793005ull + 1442695040888963407ull;
    return (unsigned)(rng >> 33);
}

static void test_random(void)
{
    int patterns = 0;
    for (int K = 1; K <= 64; K++)
        for (int kind = 0; kind < 40; kind++) {
            rng = 1000003ull * K + (unsigned long long)kind;
            unsigned char *a = calloc((size_t)K * K, 1);
            int density = kind % 8; /* 0: empty ... 7: dense */
            for (int p = 0; p < K; p++)
                for (int t = 0; t < K; t++)
                    a[(size_t)p * K + t] = (int)(rnd() % 8) < density;
            if (kind % 10 == 8)
                for (int t = 0; t < K; t++)
                    a[(size_t)(kind % K) * K + t] = 1; /* one to all */
            if (kind % 10 == 9)
                for (int p = 0; p < K; p++)
                    a[(size_t)p * K + (kind % K)] = 1; /* all to one */
            pattern P;
            pattern_from_table(&P, K, a);
            iso_sharing s, s2;
            int rc = iso__sharing_plan(&P.pat, &s);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "K %d kind %d: planned", K, kind);
            if (rc != MPI_SUCCESS) {
                pattern_free(&P);
                free(a);
                continue;
            }
            long long M = P.start[K], outmax = 0;
            for (int p = 0; p < K; p++)
                if (P.start[p + 1] - P.start[p] > outmax)
                    outmax = P.start[p + 1] - P.start[p];
            for (long long e = 0; e < M; e++) {
                int q = s.sender[e];
                CHECK(q >= 0 && q < K && q != P.targets[e],
                      "K %d kind %d: message %lld has sender %d (target %d)", K, kind, e, q,
                      P.targets[e]);
            }
            figures f = recompute(&P.pat, &s);
            CHECK_EQ_INT(s.initial_mmax, outmax, "K %d kind %d: initial_mmax", K, kind);
            CHECK(fabs(s.initial_mavg - (double)M / K) < 1e-9, "K %d kind %d: initial_mavg", K, kind);
            CHECK_EQ_INT(s.phase2_mmax, f.mmax, "K %d kind %d: phase2_mmax", K, kind);
            CHECK(fabs(s.phase2_mavg - (double)f.total / K) < 1e-9,
                  "K %d kind %d: phase2_mavg %g, recomputed %g", K, kind, s.phase2_mavg,
                  (double)f.total / K);
            CHECK_EQ_INT(s.overhead, f.overhead, "K %d kind %d: overhead", K, kind);
            CHECK(fabs(s.volume_ratio - f.volume) < 1e-9, "K %d kind %d: volume_ratio %g, %g", K,
                  kind, s.volume_ratio, f.volume);
            CHECK(s.phase2_mmax <= s.phase1_mmax && s.phase1_mmax <= s.initial_mmax,
                  "K %d kind %d: mmax %lld -> %lld -> %lld", K, kind, s.initial_mmax,
                  s.phase1_mmax, s.phase2_mmax);
            rc = iso__sharing_plan_phases(&P.pat, 1, &s2);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "K %d kind %d: phase I alone", K, kind);
            if (rc == MPI_SUCCESS) {
                figures f1 = recompute(&P.pat, &s2);
                CHECK(s2.phase1_mmax == s.phase1_mmax && s2.phase2_mmax == f1.mmax &&
                          s2.phase1_mmax == f1.mmax && s2.overhead == f1.overhead &&
                          fabs(s2.phase1_mavg - s.phase1_mavg) < 1e-9 &&
                          fabs(s2.phase1_mavg - (double)f1.total / K) < 1e-9,
                      "K %d kind %d: phase I alone: mmax %lld/%lld, recomputed %lld", K, kind,
                      s2.phase1_mmax, s.phase1_mmax, f1.mmax);
                iso__sharing_free(&s2);
            }
            rc = iso__sharing_plan(&P.pat, &s2);
            CHECK_EQ_INT(rc, MPI_SUCCESS, "K %d kind %d: planned again", K, kind);
            if (rc == MPI_SUCCESS) {
                CHECK(memcmp(s.sender, s2.sender, (size_t)M * sizeof *s.sender) == 0 &&
                          s.phase1_mmax == s2.phase1_mmax && s.overhead == s2.overhead,
                      "K %d kind %d: the same plan twice", K, kind);
                iso__sharing_free(&s2);
            }
            iso__sharing_free(&s);
            pattern_free(&P);
            free(a);
            patterns++;
        }
    tap_result(MPI_COMM_WORLD,
               "%d random patterns, K = 1..64: valid senders, figures recomputed from sender[], "
               "mmax non-increasing, deterministic",
               patterns);
}

static void test_bad(void)
{
    long long start[3] = {0, 2, 3};
    int self[3] = {1, 0, 1};    /* process 1 sends to itself */
    int unsorted[3] = {1, 0, 0}; /* process 0: 1 then 0 (0 is itself too) */
    int range[3] = {1, 2, 0};   /* target 2 of K = 2 */
    iso_sharing s;
    iso_pattern p = {2, start, self, NULL};
    CHECK_EQ_INT(iso__sharing_plan(&p, &s), MPI_ERR_ARG, "a self message");
    p.targets = unsorted;
    CHECK_EQ_INT(iso__sharing_plan(&p, &s), MPI_ERR_ARG, "targets not ascending");
    p.targets = range;
    CHECK_EQ_INT(iso__sharing_plan(&p, &s), MPI_ERR_ARG, "a target out of range");
    p.K = 0;
    CHECK_EQ_INT(iso__sharing_plan(&p, &s), MPI_ERR_ARG, "K = 0");
    CHECK_EQ_INT(iso__sharing_plan(NULL, &s), MPI_ERR_ARG, "no pattern");
    tap_result(MPI_COMM_WORLD, "bad patterns: MPI_ERR_ARG");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_figure_4_1();
    test_100_80(10, 90);
    test_100_80(40, 70);
    test_random();
    test_bad();
    MPI_Finalize();
    return 0;
}
