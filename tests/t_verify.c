/* Offline schedule verifier (DESIGN.md, "Verification"): in one process,
 * build the schedules of all p processes of a
 * torus or mesh for every algorithm of iso__algorithms and every collective
 * family (iso__schedule_get on a neighborhood made as nbh_build makes it),
 * and simulate them together, round by round, as src/sched/executor.c runs them:
 *
 *   - PACK ops first (an entry is the process's own send block, an
 *     accumulator, or an entry of a message it holds from an earlier
 *     round), then SEND / RECV / SEND_MSG / RECV_MSG are posted together.
 *     Sends and receives are matched per channel (source, destination, tag)
 *     in MPI order: sends in posting order; receives: the RECVs in posting
 *     order (Irecv), then the RECV_MSGs in the order the executor probes for
 *     them (last posted first).  Every send must meet exactly one receive of
 *     the same round and kind, and vice versa; anything left over would wait
 *     for ever (deadlock).  A received packed message must have exactly the
 *     msgs[m].n entries the receiver expects.  Within a round, no receive may
 *     target a place that another receive or a send of the process uses.
 *   - then COPY / REDUCE / DELIVER / ACC in order.
 *   - the schedules run twice, the second time with each process's tags
 *     shifted by what it reserved for the first (as the next operation on
 *     the communicator would be): tag counters must stay in step.
 *   - combining schedules run a third time (tags shifted again) in datatype
 *     mode, as src/sched/ runs them with derived datatypes: no PACK; a
 *     message is read from the places of its pieces when its SEND_MSG is
 *     posted (an entry of an incoming message from the place it was
 *     received into), its RECV_MSG is a plain receive (posting order), and
 *     entry e of an incoming message lands in the place its destination
 *     piece names: a receive slot or a scratch vector.  A send can only read
 *     what earlier rounds wrote, and no receive may write a place that a
 *     send of the same round reads.  DELIVER / ACC read from the places; a
 *     DELIVER from the slot itself does nothing (received in place), and
 *     none may overwrite a block received in place with another.  Before
 *     that, statically: every entry of a received message has a destination
 *     piece, a slot (never in reductions: their receive buffer accumulates)
 *     or one of the schedule's nvec vectors, and no slot or vector receives
 *     two entries.
 *
 * Data are block identities (origin rank, group): group = neighbor index for
 * alltoall and scatter_reduce, 0 for allgather and reduce; reductions
 * accumulate multisets of identities.  One MPI_UNSIGNED_CHAR per block,
 * extent 1, so a place's displacement is its block index (iso__block).
 *
 * At the end, on process X: slot i got exactly once the block of X - C^i
 * (computed here, not by the library) if that process exists, nothing
 * otherwise (datatype mode: holds that block at the end, however often it
 * was written); for the reductions, recvbuf holds exactly the identities of
 * the existing sources (untouched if there are none).  Volume: the
 * block-hops that moved in the simulation = the sum of iso__sched_stats
 * block_hops = the figure computed here from the routes (see expected_hops;
 * bruck's linear variant included).  Schedules must agree across processes
 * in rounds, tags and cost-model figures, and auto must pick the same
 * algorithm and combining mode everywhere.  On Moore neighborhoods of tori
 * (every dimension >= 2r+1) the figures of the issue are checked per
 * process with
 * iso__sched_stats: dimwise 2rd rounds and messages, bruck
 * 2d ceil(log2(r+1)), direct (2r+1)^d - 1, and for r = 1, d = 3 alltoall
 * 54 and allgather 26 block-hops.  A self-test first injects faults into
 * one schedule and requires that each is reported by each interpretation
 * (packed, datatype) that can see it, simulated alone.
 *
 * Without arguments the quick set of cases runs (make check).  Arguments
 * name other cases, DIMS:PERIODS:NBH, e.g. 32x32x16:111:moore1,
 * 64x64x4:000:vn2, 8x8:10:rand20,4,7 (s, range, seed), 5x5:11:off1,0/-2,1
 * (an offset list); tests/verify_big.sh (make verify-big) runs large ones.
 *
 * NPROCS: 1
 * PER-ALGORITHM: no
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "coll/coll.h"
#include "oracle.h"
#include "tap.h"

#define MAXD ORACLE_MAXD
#define TYPE MPI_UNSIGNED_CHAR /* one block = one byte: disp = block index */
#define MAXREPORT 5            /* failure messages per collective */

/* ---- cases ------------------------------------------------------------------ */

typedef struct {
    int d, dims[MAXD], periods[MAXD];
    nbh_t n;
    char name[160], topo[48];
    int moore_r; /* a full Moore neighborhood of this radius (figures), or 0 */
} vcase_t;

static vcase_t *cases;
static int ncases, cases_cap;

static void add_case(int d, const int *dims, const int *periods, nbh_t n, const char *nbhname,
                     int moore_r)
{
    vcase_t *c;
    int len = 0;
    if (ncases == cases_cap) {
        cases_cap = cases_cap ? 2 * cases_cap : 64;
        cases = realloc(cases, sizeof *cases * (size_t)cases_cap);
        if (cases == NULL) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
    }
    c = &cases[ncases++];
    memset(c, 0, sizeof *c);
    c->d = d;
    memcpy(c->dims, dims, sizeof(int) * (size_t)d);
    memcpy(c->periods, periods, sizeof(int) * (size_t)d);
    c->n = n;
    c->moore_r = moore_r;
    for (int j = 0; j < d; j++)
        len += snprintf(c->topo + len, sizeof c->topo - (size_t)len, "%s%d", j ? "x" : "",
                        dims[j]);
    len += snprintf(c->topo + len, sizeof c->topo - (size_t)len, " periods ");
    for (int j = 0; j < d; j++)
        len += snprintf(c->topo + len, sizeof c->topo - (size_t)len, "%d", periods[j] != 0);
    snprintf(c->name, sizeof c->name, "%s %s s=%d", c->topo, nbhname, n.s);
}

/* Parses "NxNxN:PPP:NBH"; returns 0 on success. */
static int parse_case(const char *spec)
{
    int d = 0, dims[MAXD], periods[MAXD], r, s, range, seed;
    const char *p = spec;
    char *end;
    nbh_t n;
    char nm[48];
    for (;;) {
        long v = strtol(p, &end, 10);
        if (end == p || v < 1 || v > 1 << 20 || d == MAXD)
            return -1;
        dims[d++] = (int)v;
        p = end;
        if (*p == 'x')
            p++;
        else
            break;
    }
    if (*p++ != ':')
        return -1;
    for (int j = 0; j < d; j++, p++) {
        if (*p != '0' && *p != '1')
            return -1;
        periods[j] = *p == '1';
    }
    if (*p++ != ':')
        return -1;
    if (sscanf(p, "moore%d", &r) == 1 && r >= 0) {
        n = nbh_moore(d, r);
        snprintf(nm, sizeof nm, "Moore r=%d", r);
        add_case(d, dims, periods, n, nm, r);
    } else if (sscanf(p, "vn%d", &r) == 1 && r >= 0) {
        n = nbh_von_neumann(d, r);
        snprintf(nm, sizeof nm, "von Neumann r=%d", r);
        add_case(d, dims, periods, n, nm, d == 1 ? r : 0);
    } else if (!strncmp(p, "off", 3)) { /* off1,0/-2,1: the offsets (1,0) and (-2,1) */
        int c[MAXD];
        snprintf(nm, sizeof nm, "offsets %s", p + 3);
        n = (nbh_t){d, 0, NULL};
        p += 3;
        while (*p) {
            for (int j = 0; j < d; j++) {
                long v = strtol(p, &end, 10);
                if (end == p || (j < d - 1 && *end != ','))
                    goto bad_list;
                c[j] = (int)v;
                p = j < d - 1 ? end + 1 : end;
            }
            nbh_push(&n, c);
            if (*p == '/')
                p++;
            else if (*p)
                goto bad_list;
        }
        add_case(d, dims, periods, n, nm, 0);
        return 0;
bad_list:
        nbh_free(&n);
        return -1;
    } else if (sscanf(p, "rand%d,%d,%d", &s, &range, &seed) == 3 && s >= 0 && range >= 0) {
        n = nbh_random(d, s, range, (unsigned)seed);
        snprintf(nm, sizeof nm, "random(range %d, seed %d)", range, seed);
        add_case(d, dims, periods, n, nm, 0);
    } else {
        return -1;
    }
    return 0;
}

static void quick_cases(void)
{
    static const char *const specs[] = {
        /* 1-d; s = 0 */
        "3:0:off1/2", "5:1:moore1", "5:0:moore1", "5:1:moore2", "5:0:moore3", "5:1:rand8,3,11",
        "5:0:rand8,3,12", "5:1:rand6,12,13", "5:0:rand6,12,14", "4:1:moore0", "3:1:moore1",
        "7:1:moore3", "2:1:moore1", "2:0:moore2", "1:1:moore2", "1:0:moore1",
        /* 2-d: periodic, non-periodic, mixed; offsets beyond the dimension */
        "4x4:11:moore1", "4x4:00:moore1", "4x4:10:moore1", "4x4:01:moore1", "4x4:11:moore2",
        "4x4:00:moore2", "4x4:10:vn2", "4x4:01:vn3", "4x4:11:vn3", "4x4:00:vn1",
        "4x4:11:moore3", "4x4:10:moore3", "4x4:11:rand12,3,21", "4x4:00:rand12,3,22",
        "4x4:10:rand10,9,23", "4x4:01:rand10,9,24", "3x3:11:moore1", "5x5:11:moore2",
        "7x7:11:moore3", "3x3:11:rand9,9,25", "5x3:00:moore2",
        /* dimensions of size 1 and 2: indices reaching the same process */
        "1x4:10:moore1", "1x4:01:moore2", "1x4:11:rand8,3,31", "1x4:00:vn2",
        "2x2x2:111:moore1", "2x2x2:111:vn2", "2x2x2:010:moore1", "2x2x2:000:moore2",
        "2x2x2:101:rand12,3,32", "6x1x3:101:moore1", "6x1x3:111:vn2", "6x1x3:000:moore1",
        "6x1x3:010:rand12,4,33",
        /* 3-d and 4-d */
        "3x3x3:111:moore1", "3x3x3:000:moore1", "3x3x3:101:moore1", "3x3x3:111:vn1",
        "3x3x3:111:vn2", "3x3x3:011:vn3", "3x3x3:111:moore2", "4x3x5:100:vn2",
        "4x3x5:111:rand16,5,34", "2x3x2x2:1011:moore1",
        "3x2x2x3:0000:vn2",
        /* on one line (bruck's linear variant), with repetitions and zero */
        "8x8:11:off1,1/2,2/3,3/-1,-1/-2,-2/-3,-3", "8x8:00:off1,1/2,2/3,3/-1,-1/-2,-2/-3,-3",
        "9x5:10:off2,-1/4,-2/6,-3/0,0/2,-1/-8,4/10,-5", "4x4x4:101:off1,0,-1/2,0,-2/3,0,-3/-1,0,1",
        "6x4:01:off0,1/0,2/0,3/0,-1/0,-2",
    };
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++)
        if (parse_case(specs[k])) {
            fprintf(stderr, "bad case %s\n", specs[k]);
            exit(1);
        }
}

/* ---- geometry, computed here (the oracle) ------------------------------------ */

typedef struct {
    const vcase_t *c;
    int p, s, d;
    long long s1;      /* identity = origin * s1 + group */
    int *coords;       /* p*d */
    int *src, *dst;    /* p*s: X - C^i, X + C^i or MPI_PROC_NULL */
    int torus;
} geo_t;

static int coords_to_rank(const geo_t *g, const int *x)
{
    int r = 0;
    for (int j = 0; j < g->d; j++)
        r = r * g->c->dims[j] + x[j];
    return r;
}

static int shift(const geo_t *g, const int *x, const int *off, int sign)
{
    int y[MAXD];
    for (int j = 0; j < g->d; j++) {
        long long v = (long long)x[j] + sign * (long long)off[j];
        long long n = g->c->dims[j];
        if (g->c->periods[j])
            v = ((v % n) + n) % n;
        else if (v < 0 || v >= n)
            return MPI_PROC_NULL;
        y[j] = (int)v;
    }
    return coords_to_rank(g, y);
}

static int geo_init(geo_t *g, const vcase_t *c)
{
    memset(g, 0, sizeof *g);
    g->c = c;
    g->d = c->d;
    g->s = c->n.s;
    g->s1 = c->n.s + 1;
    g->p = 1;
    g->torus = 1;
    for (int j = 0; j < c->d; j++) {
        g->p *= c->dims[j];
        g->torus &= c->periods[j] != 0;
    }
    g->coords = malloc(sizeof(int) * ((size_t)g->p * (size_t)g->d + 1));
    g->src = malloc(sizeof(int) * ((size_t)g->p * (size_t)g->s + 1));
    g->dst = malloc(sizeof(int) * ((size_t)g->p * (size_t)g->s + 1));
    if (!g->coords || !g->src || !g->dst)
        return -1;
    for (int x = 0; x < g->p; x++) {
        int *xc = g->coords + (size_t)x * (size_t)g->d, r = x;
        for (int j = g->d - 1; j >= 0; j--) {
            xc[j] = r % c->dims[j];
            r /= c->dims[j];
        }
        for (int i = 0; i < g->s; i++) {
            const int *off = c->n.off + (size_t)i * (size_t)g->d;
            g->src[(size_t)x * g->s + i] = shift(g, xc, off, -1);
            g->dst[(size_t)x * g->s + i] = shift(g, xc, off, +1);
        }
    }
    return 0;
}

static void geo_free(geo_t *g)
{
    free(g->coords);
    free(g->src);
    free(g->dst);
}

/* "rank (x,y,z)" in a rotating static buffer. */
static const char *pname(const geo_t *g, int x)
{
    static char buf[4][96];
    static int k;
    char *b = buf[k++ & 3];
    int len;
    if (x == MPI_PROC_NULL)
        return "MPI_PROC_NULL";
    if (x < 0 || x >= g->p) {
        snprintf(b, 96, "rank %d (out of range)", x);
        return b;
    }
    len = snprintf(b, 96, "%d (", x);
    for (int j = 0; j < g->d && len < 90; j++)
        len += snprintf(b + len, 96 - (size_t)len, "%s%d", j ? "," : "",
                        g->coords[(size_t)x * g->d + j]);
    snprintf(b + len, 96 - (size_t)len, ")");
    return b;
}

static const char *idname(const geo_t *g, int64_t id)
{
    static char buf[4][128];
    static int k;
    char *b = buf[k++ & 3];
    if (id < 0) {
        snprintf(b, 128, "<invalid %lld>", (long long)id);
        return b;
    }
    snprintf(b, 128, "[block %lld of %s]", (long long)(id % g->s1),
             pname(g, (int)(id / g->s1)));
    return b;
}

/* ---- reporting ----------------------------------------------------------------- */

static char what[256]; /* the (case, algorithm, collective) being verified */
static int reported;

#define FAIL(...)                                                                   \
    do {                                                                            \
        tap_errors++;                                                               \
        if (reported++ < MAXREPORT) {                                               \
            printf("# FAIL %s: ", what);                                            \
            printf(__VA_ARGS__);                                                    \
            printf("\n");                                                           \
        }                                                                           \
    } while (0)

/* ---- expected volume (routes computed here) ---------------------------------- */

typedef struct {
    int dim, step;
} hop_t;

/* Hops of sign(m) 2^k along dimension dim for the set bits k of |m|. */
static int binary_hops(long long m, int dim, hop_t *h, int n)
{
    long long a = m < 0 ? -m : m;
    for (int k = 0; a >> k; k++)
        if ((a >> k) & 1)
            h[n++] = (hop_t){dim, (m < 0 ? -1 : 1) * (int)(1LL << k)};
    return n;
}

/* Route of offset c for algorithm name (-1: no formula known).  line: bruck's
 * linear variant, hops by 2^k V along the line V (dimension index d). */
static int route_of(const char *alg, int d, const int *c, const int *line, hop_t *h)
{
    int n = 0;
    if (!strcmp(alg, "dimwise")) {
        for (int j = 0; j < d; j++)
            if (c[j])
                h[n++] = (hop_t){j, c[j]};
        return n;
    }
    if (!strcmp(alg, "bruck")) {
        if (line) {
            long long m = 0;
            for (int j = 0; j < d; j++)
                if (line[j]) {
                    m = c[j] / line[j];
                    break;
                }
            return binary_hops(m, d, h, 0);
        }
        for (int j = 0; j < d; j++)
            n = binary_hops(c[j], j, h, n);
        return n;
    }
    return -1;
}

/* The primitive vector V (first non-zero component positive) with every
 * offset an integer multiple of it; 0 if there is none. */
static int find_line(const vcase_t *c, int *v)
{
    int d = c->d, j0 = -1, g = 0;
    const int *first = NULL;
    for (int i = 0; i < c->n.s && !first; i++)
        for (int j = 0; j < d && !first; j++)
            if (c->n.off[(size_t)i * d + j])
                first = c->n.off + (size_t)i * d;
    if (!first)
        return 0;
    for (int j = 0; j < d; j++) {
        int a = abs(first[j]);
        while (a) {
            int r = g % a;
            g = a;
            a = r;
        }
    }
    for (int j = 0; j < d; j++) {
        if (j0 < 0 && first[j])
            j0 = j;
        v[j] = (first[j0 < 0 ? 0 : j0] > 0 ? 1 : -1) * first[j] / g;
    }
    for (int i = 0; i < c->n.s; i++) {
        const int *o = c->n.off + (size_t)i * d;
        long long m = o[j0] / v[j0];
        for (int j = 0; j < d; j++)
            if (m * v[j] != o[j])
                return 0;
    }
    return 1;
}

/* Distinct hops (= messages per process, one tag each) of a set of routes. */
static int distinct_hops(const hop_t *h, const int *nh, int s, int maxh)
{
    int n = 0;
    for (int i = 0; i < s; i++)
        for (int k = 0; k < nh[i]; k++) {
            const hop_t *x = h + (size_t)i * maxh + k;
            int dup = 0;
            for (int i2 = 0; i2 <= i && !dup; i2++)
                for (int k2 = 0; k2 < (i2 < i ? nh[i2] : k) && !dup; k2++)
                    dup = h[(size_t)i2 * maxh + k2].dim == x->dim &&
                          h[(size_t)i2 * maxh + k2].step == x->step;
            n += !dup;
        }
    return n;
}

/* Routes of all offsets into h (maxh each) and nh; bruck takes its linear
 * variant where that sends fewer messages (per dimension on ties).
 * Returns -1 if no formula is known. */
static int routes(const vcase_t *c, const char *alg, hop_t *h, int *nh, int maxh, int *line,
                  int *use_line)
{
    int s = c->n.s, d = c->d, *v = line;
    *use_line = 0;
    for (int i = 0; i < s; i++)
        if ((nh[i] = route_of(alg, d, c->n.off + (size_t)i * d, NULL, h + (size_t)i * maxh)) < 0)
            return -1;
    if (!strcmp(alg, "bruck") && d > 1 && find_line(c, v)) {
        hop_t *hl = malloc(sizeof(hop_t) * (size_t)maxh * (size_t)s);
        int *nl = malloc(sizeof(int) * (size_t)s);
        for (int i = 0; i < s; i++)
            nl[i] = route_of(alg, d, c->n.off + (size_t)i * d, v, hl + (size_t)i * maxh);
        if (distinct_hops(hl, nl, s, maxh) < distinct_hops(h, nh, s, maxh)) {
            *use_line = 1;
            memcpy(h, hl, sizeof(hop_t) * (size_t)maxh * (size_t)s);
            memcpy(nh, nl, sizeof(int) * (size_t)s);
        }
        free(hl);
        free(nl);
    }
    return 0;
}

static int same_hops(const hop_t *a, const hop_t *b, int n)
{
    for (int k = 0; k < n; k++)
        if (a[k].dim != b[k].dim || a[k].step != b[k].step)
            return 0;
    return 1;
}

/* Expected total block-hops over all processes, or -1 if no formula is
 * known for the algorithm.  direct: one per existing target.  Routes:
 *   personalized (alltoall; scatter_reduce without merging): block i of
 *     origin X makes all the hops of its route if X + C^i exists;
 *   shared (allgather; reduce without merging): one trie edge per distinct
 *     non-empty route prefix, carried for origin X if some route through
 *     it ends at an existing target;
 *   merging (reductions that combine partial results on the way): one
 *     partial result per distinct non-empty route suffix leaves process Z
 *     if its target T = Z + (the suffix's hops) exists and some route j
 *     ending with that suffix has an existing origin T - C^j. */
enum { VOL_PERSONALIZED, VOL_SHARED, VOL_MERGING };

static long long expected_hops(const geo_t *g, const char *alg, int mode)
{
    int s = g->s, d = g->d, maxh = 33 * d + 1, line[MAXD], use_line;
    long long total = 0;
    hop_t *h;
    int *nh, *pass;
    if (!strcmp(alg, "direct")) {
        for (size_t k = 0; k < (size_t)g->p * (size_t)s; k++)
            total += g->dst[k] != MPI_PROC_NULL;
        return total;
    }
    if (strcmp(alg, "dimwise") && strcmp(alg, "bruck"))
        return -1;
    if (s == 0)
        return 0;
    h = malloc(sizeof(hop_t) * (size_t)maxh * (size_t)s);
    nh = malloc(sizeof(int) * (size_t)s);
    pass = malloc(sizeof(int) * (size_t)s);
    if (routes(g->c, alg, h, nh, maxh, line, &use_line)) {
        total = -1;
        goto done;
    }
    if (mode == VOL_PERSONALIZED) {
        for (int x = 0; x < g->p; x++)
            for (int i = 0; i < s; i++)
                if (g->dst[(size_t)x * s + i] != MPI_PROC_NULL)
                    total += nh[i];
    } else if (mode == VOL_SHARED) {
        for (int i = 0; i < s; i++)
            for (int k = 1; k <= nh[i]; k++) {
                const hop_t *hi = h + (size_t)i * maxh;
                int dup = 0, np = 0;
                for (int i2 = 0; i2 < i && !dup; i2++)
                    dup = nh[i2] >= k && same_hops(h + (size_t)i2 * maxh, hi, k);
                if (dup)
                    continue;
                for (int i2 = i; i2 < s; i2++)
                    if (nh[i2] >= k && same_hops(h + (size_t)i2 * maxh, hi, k))
                        pass[np++] = i2;
                for (int x = 0; x < g->p; x++) {
                    int any = 0;
                    for (int e = 0; e < np && !any; e++)
                        any = g->dst[(size_t)x * s + pass[e]] != MPI_PROC_NULL;
                    total += any;
                }
            }
    } else {
        for (int i = 0; i < s; i++)
            for (int len = 1; len <= nh[i]; len++) {
                const hop_t *si = h + (size_t)i * maxh + (nh[i] - len);
                int dup = 0, np = 0, sum[MAXD] = {0};
                for (int i2 = 0; i2 < i && !dup; i2++)
                    dup = nh[i2] >= len && same_hops(h + (size_t)i2 * maxh + (nh[i2] - len), si, len);
                if (dup)
                    continue;
                for (int i2 = i; i2 < s; i2++)
                    if (nh[i2] >= len && same_hops(h + (size_t)i2 * maxh + (nh[i2] - len), si, len))
                        pass[np++] = i2;
                for (int k = 0; k < len; k++)
                    for (int j = 0; j < d; j++)
                        sum[j] += si[k].step * (si[k].dim == d ? line[j] : si[k].dim == j);
                for (int z = 0; z < g->p; z++) {
                    int tgt = shift(g, g->coords + (size_t)z * d, sum, +1), any = 0;
                    for (int e = 0; e < np && !any && tgt != MPI_PROC_NULL; e++)
                        any = g->src[(size_t)tgt * s + pass[e]] != MPI_PROC_NULL;
                    total += any;
                }
            }
    }
done:
    free(h);
    free(nh);
    free(pass);
    return total;
}

/* ---- simulation state ------------------------------------------------------------ */

/* A multiset of identities (one for a plain block). */
typedef struct {
    int n, cap;
    int64_t one;
    int64_t *v;
} ms_t;

static int64_t *ms_data(ms_t *m) { return m->cap ? m->v : &m->one; }

static void ms_reserve(ms_t *m, int n)
{
    int64_t *nv;
    int c;
    if (n <= (m->cap ? m->cap : 1))
        return;
    c = m->cap ? 2 * m->cap : 4;
    if (c < n)
        c = n;
    nv = malloc(sizeof(int64_t) * (size_t)c);
    if (nv == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    memcpy(nv, ms_data(m), sizeof(int64_t) * (size_t)m->n);
    free(m->v);
    m->v = nv;
    m->cap = c;
}

static void ms_set(ms_t *m, const int64_t *v, int n)
{
    ms_reserve(m, n);
    if (n > 0)
        memmove(ms_data(m), v, sizeof(int64_t) * (size_t)n);
    m->n = n;
}

static void ms_add(ms_t *m, const int64_t *v, int n)
{
    ms_reserve(m, m->n + n);
    if (n > 0)
        memmove(ms_data(m) + m->n, v, sizeof(int64_t) * (size_t)n);
    m->n += n;
}

static int same_value(ms_t *m, const int64_t *v, int n)
{
    return m->n == n && (n == 0 || !memcmp(ms_data(m), v, sizeof(int64_t) * (size_t)n));
}

typedef struct {
    ms_t val;
    int writes;   /* 0: never written (undefined) */
    int received; /* datatype mode: a receive wrote it (in place) */
    int sent_in;  /* datatype mode: 1 + the last round in which a send read it */
} place_t;

typedef struct {
    iso_sched *s;
    place_t *recv; /* nrecv places of the receive buffer */
    place_t *scr;  /* scratch_bytes places */
    ms_t *entries; /* all messages' entries, message m at moff[m] */
    int *moff, nentries;
    char *filled;  /* message m holds data (packed or received) */
    place_t *acc;  /* reduction accumulators (nacc) */
    int nacc;
    place_t *vec;  /* datatype mode: the scratch vectors (nvec) */
    int nvec;
    int rounds, messages;
    long long hops;
    int broken;  /* round boundaries unusable: not simulated */
    int tagbase; /* of this execution: the tags reserved by the earlier ones */
} proc_t;

typedef struct {
    const geo_t *g;
    iso_coll coll;
    int personalized, reduction, alg;
    int datatype; /* this execution runs combined messages in datatype mode */
    iso_args args;
    int nsend, nrecv; /* places per side */
    proc_t *P;
    long long sim_hops;
    int64_t *tmp; /* one value in transit */
    int tmpcap;
} sim_t;

static void tmp_reserve(sim_t *S, int n)
{
    if (n <= S->tmpcap)
        return;
    S->tmpcap = n < 2 * S->tmpcap ? 2 * S->tmpcap : n + 16;
    S->tmp = realloc(S->tmp, sizeof(int64_t) * (size_t)S->tmpcap);
    if (S->tmp == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
}

static void place_free(place_t *pl, size_t n)
{
    for (size_t k = 0; k < n; k++)
        free(pl[k].val.v);
    free(pl);
}

static void proc_free(proc_t *pr, const sim_t *S)
{
    if (pr->recv)
        place_free(pr->recv, (size_t)S->nrecv);
    if (pr->scr)
        place_free(pr->scr, pr->s ? pr->s->scratch_bytes : 0);
    if (pr->entries)
        for (int k = 0; k < pr->nentries; k++)
            free(pr->entries[k].v);
    free(pr->entries);
    if (pr->acc)
        place_free(pr->acc, (size_t)pr->nacc);
    if (pr->vec)
        place_free(pr->vec, (size_t)pr->nvec);
    free(pr->moff);
    free(pr->filled);
    iso__sched_release(pr->s);
    memset(pr, 0, sizeof *pr);
}

static const char *kind_name(iso_opkind k)
{
    static const char *const names[] = {"SEND",     "RECV",     "COPY",    "REDUCE", "PACK",
                                        "SEND_MSG", "RECV_MSG", "DELIVER", "ACC"};
    return (unsigned)k < sizeof names / sizeof names[0] ? names[k] : "?";
}

/* What an op is, for messages: "round R WHAT [ARG] [from P]". */
typedef struct {
    int round;
    const char *what;
    int arg, from; /* -1: none */
} octx_t;

static const char *cx(const sim_t *S, const octx_t *c)
{
    static char buf[4][192];
    static int k;
    char *b = buf[k++ & 3];
    int n = snprintf(b, 192, "round %d %s", c->round, c->what);
    if (c->arg >= 0)
        n += snprintf(b + n, 192 - (size_t)n, " %d", c->arg);
    if (c->from >= 0)
        snprintf(b + n, 192 - (size_t)n, " from %s", pname(S->g, c->from));
    return b;
}

/* Place a loc names at process x: *sendid for the send buffer, else a
 * place; returns 0, or -1 after reporting an invalid loc. */
static int resolve(sim_t *S, int x, const iso_loc *l, int64_t *sendid, place_t **pl,
                   const octx_t *ctx)
{
    proc_t *pr = &S->P[x];
    *pl = NULL;
    if (l->count != 1 || l->type != TYPE) {
        FAIL("%s on %s: place of %d elements of another type (expected one block)", cx(S, ctx),
             pname(S->g, x), l->count);
        return -1;
    }
    switch (l->buf) {
    case ISO_BUF_SEND:
        if (l->disp < 0 || l->disp >= S->nsend)
            break;
        *sendid = (int64_t)x * S->g->s1 + l->disp;
        return 0;
    case ISO_BUF_RECV:
        if (l->disp < 0 || l->disp >= S->nrecv)
            break;
        *pl = &pr->recv[l->disp];
        return 0;
    case ISO_BUF_SCRATCH:
        if (l->disp < 0 || (size_t)l->disp >= pr->s->scratch_bytes)
            break;
        *pl = &pr->scr[l->disp];
        return 0;
    default:
        break;
    }
    FAIL("%s on %s: place (buffer %d, displacement %lld) outside the buffer", cx(S, ctx),
         pname(S->g, x), l->buf, (long long)l->disp);
    return -1;
}

/* Reads the value at loc into S->tmp; returns its size or -1. */
static int read_loc(sim_t *S, int x, const iso_loc *l, const octx_t *ctx)
{
    int64_t id;
    place_t *pl;
    if (resolve(S, x, l, &id, &pl, ctx))
        return -1;
    if (pl == NULL) {
        tmp_reserve(S, 1);
        S->tmp[0] = id;
        return 1;
    }
    if (pl->writes == 0) {
        FAIL("%s on %s: reads (buffer %d, displacement %lld) before anything was written there",
             cx(S, ctx), pname(S->g, x), l->buf, (long long)l->disp);
        return -1;
    }
    tmp_reserve(S, pl->val.n);
    if (pl->val.n > 0)
        memcpy(S->tmp, ms_data(&pl->val), sizeof(int64_t) * (size_t)pl->val.n);
    return pl->val.n;
}

/* Writes S->tmp[0..n) at loc (accumulate: multiset union with what is there). */
static void write_loc(sim_t *S, int x, const iso_loc *l, int n, int accumulate, const octx_t *ctx)
{
    int64_t id;
    place_t *pl;
    if (resolve(S, x, l, &id, &pl, ctx))
        return;
    if (pl == NULL) {
        FAIL("%s on %s: writes into the send buffer (displacement %lld)", cx(S, ctx), pname(S->g, x),
             (long long)l->disp);
        return;
    }
    if (accumulate && pl->writes == 0) {
        FAIL("%s on %s: reduces into (buffer %d, displacement %lld) before anything was written "
             "there",
             cx(S, ctx), pname(S->g, x), l->buf, (long long)l->disp);
        return;
    }
    if (accumulate)
        ms_add(&pl->val, S->tmp, n);
    else
        ms_set(&pl->val, S->tmp, n);
    pl->writes++;
}

/* "send block I", "accumulator A", ... in a rotating static buffer. */
static const char *piece_name(iso_piece pc)
{
    static char buf[4][64];
    static int k;
    char *b = buf[k++ & 3];
    if (pc.msg >= 0)
        snprintf(b, 64, "entry %d of message %d", pc.index, pc.msg);
    else if (pc.msg == ISO_PIECE_USER)
        snprintf(b, 64, "send block %d", pc.index);
    else if (pc.msg == ISO_PIECE_ACC)
        snprintf(b, 64, "accumulator %d", pc.index);
    else if (pc.msg == ISO_PIECE_SLOT)
        snprintf(b, 64, "receive slot %d", pc.index);
    else if (pc.msg == ISO_PIECE_VEC)
        snprintf(b, 64, "scratch vector %d", pc.index);
    else
        snprintf(b, 64, "piece {%d, %d}", pc.msg, pc.index);
    return b;
}

/* Datatype mode: the place at process x that entry e of message m (e below
 * its n) is received into, as its destination piece names it: a receive
 * slot or a scratch vector.  Resolved as sched/message.c's iso__place_of() does, also
 * where check_dests() objects (a slot in a reduction), so that the
 * simulation shows what would happen.  NULL after reporting. */
static place_t *dest_place(sim_t *S, int x, int m, int e, const octx_t *ctx)
{
    proc_t *pr = &S->P[x];
    const iso_sched *s = pr->s;
    iso_piece d;
    if (s->msgs[m].first < 0 || s->msgs[m].first + e >= s->npieces) {
        FAIL("%s on %s: entry %d of message %d has no destination piece", cx(S, ctx),
             pname(S->g, x), e, m);
        return NULL;
    }
    d = s->pieces[s->msgs[m].first + e];
    if (d.msg == ISO_PIECE_VEC && d.index >= 0 && d.index < pr->nvec)
        return &pr->vec[d.index];
    if (d.msg == ISO_PIECE_SLOT && d.index >= 0 && d.index < S->g->s) {
        iso_loc l = iso__block(&S->args.recv, ISO_BUF_RECV, d.index);
        int64_t id;
        place_t *pl;
        return resolve(S, x, &l, &id, &pl, ctx) ? NULL : pl;
    }
    FAIL("%s on %s: entry %d of message %d is received into %s, not a receive slot or one of "
         "the %d scratch vectors",
         cx(S, ctx), pname(S->g, x), e, m, piece_name(d), pr->nvec);
    return NULL;
}

/* The value of a piece at process x into S->tmp: the user's send block
 * (ISO_PIECE_USER), an accumulator (ISO_PIECE_ACC) or an entry of a message
 * the process holds: in packed mode the entry itself, in datatype mode the
 * place it was received into.  *from (if from is not NULL): the place read,
 * NULL for a send block or a packed entry.  Returns the value's size, or -1
 * after reporting. */
static int piece_value(sim_t *S, int x, iso_piece pc, place_t **from, const octx_t *ctx)
{
    proc_t *pr = &S->P[x];
    const ms_t *m;
    place_t *at = NULL; /* the place read */
    if (from)
        *from = NULL;
    if (pc.msg == -1) {
        iso_loc l;
        int64_t id;
        place_t *pl;
        if (pc.index < 0 || pc.index >= S->g->s) {
            FAIL("%s on %s: piece names send block %d of %d", cx(S, ctx), pname(S->g, x), pc.index,
                 S->g->s);
            return -1;
        }
        l = iso__block(&S->args.send, ISO_BUF_SEND, pc.index);
        if (resolve(S, x, &l, &id, &pl, ctx))
            return -1;
        if (pl) {
            FAIL("%s on %s: send block %d is not in the send buffer", cx(S, ctx), pname(S->g, x),
                 pc.index);
            return -1;
        }
        tmp_reserve(S, 1);
        S->tmp[0] = id;
        return 1;
    }
#ifdef ISO_PIECE_ACC
    if (pc.msg == ISO_PIECE_ACC) {
        if (pc.index < 0 || pc.index >= pr->nacc) {
            FAIL("%s on %s: piece names accumulator %d of %d", cx(S, ctx), pname(S->g, x), pc.index,
                 pr->nacc);
            return -1;
        }
        at = &pr->acc[pc.index];
        goto place;
    }
#endif
    if (pc.msg < 0 || pc.msg >= pr->s->nmsgs || pc.index < 0 ||
        pc.index >= pr->s->msgs[pc.msg].n) {
        FAIL("%s on %s: piece names entry %d of message %d (%d messages)", cx(S, ctx), pname(S->g, x),
             pc.index, pc.msg, pr->s->nmsgs);
        return -1;
    }
    if (S->datatype) {
        if ((at = dest_place(S, x, pc.msg, pc.index, ctx)) == NULL)
            return -1;
        goto place;
    }
    if (!pr->filled[pc.msg]) {
        FAIL("%s on %s: piece from message %d, which holds no data yet", cx(S, ctx), pname(S->g, x),
             pc.msg);
        return -1;
    }
    m = &pr->entries[pr->moff[pc.msg] + pc.index];
    goto copy;
place:
    if (at->writes == 0) {
        FAIL("%s on %s: piece from %s, whose place holds nothing yet", cx(S, ctx), pname(S->g, x),
             piece_name(pc));
        return -1;
    }
    if (from)
        *from = at;
    m = &at->val;
copy:
    tmp_reserve(S, m->n);
    if (m->n > 0)
        memcpy(S->tmp, m->cap ? m->v : &m->one, sizeof(int64_t) * (size_t)m->n);
    return m->n;
}

/* Fills the entries of outgoing message op->msg from its pieces: at its
 * PACK in packed mode; in datatype mode when its SEND_MSG is posted, the
 * send reading the places for the whole round (see land()). */
static void do_pack(sim_t *S, int x, const iso_op *op, int round)
{
    proc_t *pr = &S->P[x];
    const iso_sched *s = pr->s;
    octx_t c = {round, op->kind == ISO_OP_PACK ? "PACK of message" : "SEND_MSG of message",
                op->msg, -1},
           *ctx = &c;
    if (op->msg < 0 || op->msg >= s->nmsgs) {
        FAIL("%s on %s: no such message", cx(S, ctx), pname(S->g, x));
        return;
    }
    if (s->msgs[op->msg].first < 0 || s->msgs[op->msg].first + s->msgs[op->msg].n > s->npieces) {
        FAIL("%s on %s: pieces out of range", cx(S, ctx), pname(S->g, x));
        return;
    }
    for (int e = 0; e < s->msgs[op->msg].n; e++) {
        place_t *from;
        int n = piece_value(S, x, s->pieces[s->msgs[op->msg].first + e], &from, ctx);
        if (from && S->datatype)
            from->sent_in = round + 1;
        ms_set(&pr->entries[pr->moff[op->msg] + e], S->tmp, n < 0 ? 0 : n);
    }
    pr->filled[op->msg] = 1;
}

static void do_local(sim_t *S, int x, const iso_op *op, int round)
{
    octx_t c = {round, kind_name(op->kind), -1, -1}, *ctx = &c;
    int n;
    if (op->kind == ISO_OP_REDUCE) {
        if ((n = read_loc(S, x, &op->a, ctx)) >= 0)
            write_loc(S, x, &op->b, n, 1, ctx);
    } else if (op->kind == ISO_OP_DELIVER) {
        int combine = S->reduction && !op->first;
        iso_loc l;
        place_t *from, *to;
        int64_t id;
        c.what = "DELIVER to slot";
        c.arg = op->slot;
        if (op->slot < 0 || op->slot >= S->g->s) {
            FAIL("%s on %s: no such slot", cx(S, ctx), pname(S->g, x));
            return;
        }
        if ((n = piece_value(S, x, op->src, &from, ctx)) < 0)
            return;
        l = iso__block(&S->args.recv, ISO_BUF_RECV, op->slot);
        if (resolve(S, x, &l, &id, &to, ctx))
            return;
        if (from == to && !combine) /* datatype mode: received in place, nothing to do */
            return;
        if (to && to->received && !combine && !same_value(&to->val, S->tmp, n))
            FAIL("%s on %s: overwrites %s, received there in place, with %s", cx(S, ctx),
                 pname(S->g, x), to->val.n ? idname(S->g, ms_data(&to->val)[0]) : "nothing",
                 n ? idname(S->g, S->tmp[0]) : "nothing");
        write_loc(S, x, &l, n, combine, ctx);
    }
#ifdef ISO_PIECE_ACC
    else if (op->kind == ISO_OP_ACC) { /* combine into accumulator op->slot */
        proc_t *pr = &S->P[x];
        place_t *pl;
        c.what = "ACC into accumulator";
        c.arg = op->slot;
        if (op->slot < 0 || op->slot >= pr->nacc) {
            FAIL("%s on %s: no such accumulator (%d)", cx(S, ctx), pname(S->g, x), pr->nacc);
            return;
        }
        if ((n = piece_value(S, x, op->src, NULL, ctx)) < 0)
            return;
        pl = &pr->acc[op->slot];
        if (S->reduction && !op->first) {
            if (pl->writes == 0) {
                FAIL("%s on %s: combines into an accumulator that holds nothing yet", cx(S, ctx),
                     pname(S->g, x));
                return;
            }
            ms_add(&pl->val, S->tmp, n);
        } else {
            ms_set(&pl->val, S->tmp, n);
        }
        pl->writes++;
    }
#endif
}

/* ---- one round: pack, post, match, transfer, local ops --------------------------- */

typedef struct {
    int src, dst, tag, side; /* side 0: send, 1: receive */
    int order, proc, op;
} ev_t;

static int ev_cmp(const void *a, const void *b)
{
    const ev_t *x = a, *y = b;
    if (x->src != y->src)
        return x->src < y->src ? -1 : 1;
    if (x->dst != y->dst)
        return x->dst < y->dst ? -1 : 1;
    if (x->tag != y->tag)
        return x->tag < y->tag ? -1 : 1;
    if (x->side != y->side)
        return x->side - y->side;
    return (x->order > y->order) - (x->order < y->order);
}

static int cmp_ll(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}


/* Datatype mode: entry e of message m, value v, is received at process x
 * into the place its destination piece names.  MPI forbids receiving into
 * what a pending send of the process reads: no send of this round may read
 * the place (sends read only what earlier rounds wrote: do_pack runs before
 * any transfer of the round). */
static void land(sim_t *S, int x, int m, int e, ms_t *v, int round, const octx_t *ctx)
{
    place_t *pl = dest_place(S, x, m, e, ctx);
    if (pl == NULL)
        return;
    if (pl->sent_in == round + 1)
        FAIL("%s to %s: entry %d of message %d is received into a place that a send of the same "
             "round reads",
             cx(S, ctx), pname(S->g, x), e, m);
    ms_set(&pl->val, ms_data(v), v->n);
    pl->writes++;
    pl->received = 1;
}

static void transfer(sim_t *S, int round, const ev_t *se, const ev_t *re)
{
    proc_t *A = &S->P[se->proc], *B = &S->P[re->proc];
    const iso_op *so = &A->s->ops[se->op], *ro = &B->s->ops[re->op];
    octx_t c = {round, so->kind == ISO_OP_SEND ? "SEND with tag" : "SEND_MSG with tag", so->tag,
                se->proc},
           *ctx = &c;
    if (so->kind == ISO_OP_SEND && ro->kind == ISO_OP_RECV) {
        int n;
        if (so->a.count != ro->a.count || so->a.type != ro->a.type)
            FAIL("%s to %s: type signatures differ", cx(S, ctx), pname(S->g, re->proc));
        if ((n = read_loc(S, se->proc, &so->a, ctx)) >= 0)
            write_loc(S, re->proc, &ro->a, n, 0, ctx);
        S->sim_hops += 1;
    } else if (so->kind == ISO_OP_SEND_MSG && ro->kind == ISO_OP_RECV_MSG) {
        int ns, nr;
        if (so->msg < 0 || so->msg >= A->s->nmsgs || ro->msg < 0 || ro->msg >= B->s->nmsgs) {
            FAIL("%s to %s: no such message", cx(S, ctx), pname(S->g, re->proc));
            return;
        }
        ns = A->s->msgs[so->msg].n;
        nr = B->s->msgs[ro->msg].n;
        if (!A->filled[so->msg])
            FAIL("%s: message %d was never packed", cx(S, ctx), so->msg);
        if (ns != nr)
            FAIL("%s to %s: message of %d entries, the receiver expects %d", cx(S, ctx),
                 pname(S->g, re->proc), ns, nr);
        for (int e = 0; e < nr; e++) {
            ms_t *to = &B->entries[B->moff[ro->msg] + e];
            ms_t *from = e < ns ? &A->entries[A->moff[so->msg] + e] : NULL;
            if (S->datatype) { /* a shorter message leaves the rest untouched */
                if (from)
                    land(S, re->proc, ro->msg, e, from, round, ctx);
            } else if (from) {
                ms_set(to, ms_data(from), from->n);
            } else {
                to->n = 0;
            }
        }
        B->filled[ro->msg] = 1;
        S->sim_hops += ns;
    } else {
        FAIL("%s is matched by a %s on %s", cx(S, ctx), kind_name(ro->kind), pname(S->g, re->proc));
    }
}

/* Receives must not target places used by another receive or a send of the
 * same process in the same round (MPI: undefined). */
static void check_overlap(sim_t *S, int x, int first, int end, int round, long long *keys)
{
    const iso_sched *s = S->P[x].s;
    int total = 0;
    /* receives: key*2+1, sends: key*2, sorted: a receive equal to any other key is a clash */
    for (int k = first; k < end; k++) {
        const iso_op *op = &s->ops[k];
        long long key;
        if (iso__op_stage(op->kind) != ISO_STAGE_COMM || op->peer == MPI_PROC_NULL)
            continue;
        if (op->kind == ISO_OP_SEND || op->kind == ISO_OP_RECV)
            key = ((long long)op->a.buf << 40) + op->a.disp;
        else
            key = (4LL << 40) + op->msg;
        keys[total++] = key * 2 + (op->kind == ISO_OP_RECV || op->kind == ISO_OP_RECV_MSG);
    }
    if (total)
        qsort(keys, (size_t)total, sizeof *keys, cmp_ll);
    for (int k = 1; k < total; k++)
        if ((keys[k] >> 1) == (keys[k - 1] >> 1) && (keys[k] & 1))
            FAIL("round %d on %s: a receive into a place (key %lld) that another operation of "
                 "the round uses",
                 round, pname(S->g, x), keys[k] >> 1);
}

static void sim_round(sim_t *S, int round, ev_t **evs, size_t *evcap, long long **keys,
                      size_t *keycap)
{
    const geo_t *g = S->g;
    size_t nev = 0;
    /* pack, then post */
    for (int x = 0; x < g->p; x++) {
        const iso_sched *s = S->P[x].s;
        int first, end;
        if (round >= s->nrounds || S->P[x].broken)
            continue;
        first = round ? s->round_end[round - 1] : 0;
        end = s->round_end[round];
        /* datatype mode: no PACK, a SEND_MSG reads its places itself */
        for (int k = first; k < end; k++)
            if (s->ops[k].kind == (S->datatype ? ISO_OP_SEND_MSG : ISO_OP_PACK))
                do_pack(S, x, &s->ops[k], round);
        if ((size_t)(end - first) * 2 > *keycap) {
            *keycap = (size_t)(end - first) * 2 + 16;
            *keys = realloc(*keys, sizeof **keys * *keycap);
        }
        check_overlap(S, x, first, end, round, *keys);
        for (int k = first; k < end; k++) {
            const iso_op *op = &s->ops[k];
            ev_t e = {0};
            if (iso__op_stage(op->kind) != ISO_STAGE_COMM)
                continue;
            if (op->peer == MPI_PROC_NULL) { /* completes at once, moves nothing */
                if (op->kind == ISO_OP_RECV_MSG)
                    FAIL("round %d on %s: RECV_MSG from MPI_PROC_NULL (the executor's probe "
                         "gets an empty message)",
                         round, pname(g, x));
                continue;
            }
            if (nev == *evcap) {
                *evcap = *evcap ? 2 * *evcap : 1024;
                *evs = realloc(*evs, sizeof **evs * *evcap);
                if (*evs == NULL) {
                    fprintf(stderr, "out of memory\n");
                    exit(1);
                }
            }
            e.tag = S->P[x].tagbase + op->tag;
            e.proc = x;
            e.op = k;
            if (op->kind == ISO_OP_SEND || op->kind == ISO_OP_SEND_MSG) {
                e.src = x;
                e.dst = op->peer;
                e.side = 0;
                e.order = k;
            } else {
                e.src = op->peer;
                e.dst = x;
                e.side = 1;
                /* Irecvs are posted in order; the RECV_MSGs are then matched
                 * by probes, the last posted first (sched/executor.c), except in
                 * datatype mode, where they are Irecvs too */
                e.order = op->kind == ISO_OP_RECV || S->datatype ? k
                                                                 : INT_MAX / 2 + (INT_MAX / 4 - k);
            }
            (*evs)[nev++] = e;
        }
    }
    if (nev)
        qsort(*evs, nev, sizeof **evs, ev_cmp);
    for (size_t a = 0; a < nev;) {
        size_t b = a, ns, nr;
        while (b < nev && (*evs)[b].src == (*evs)[a].src && (*evs)[b].dst == (*evs)[a].dst &&
               (*evs)[b].tag == (*evs)[a].tag)
            b++;
        for (ns = 0; a + ns < b && (*evs)[a + ns].side == 0; ns++)
            ;
        nr = b - a - ns;
        for (size_t k = 0; k < ns && k < nr; k++)
            transfer(S, round, &(*evs)[a + k], &(*evs)[a + ns + k]);
        for (size_t k = nr; k < ns; k++)
            FAIL("round %d: deadlock: %s from %s to %s (tag %d) has no matching receive "
                 "(%zu sends, %zu receives on this channel)",
                 round, kind_name(S->P[(*evs)[a + k].proc].s->ops[(*evs)[a + k].op].kind),
                 pname(g, (*evs)[a].src), pname(g, (*evs)[a].dst), (*evs)[a].tag, ns, nr);
        for (size_t k = ns; k < nr; k++)
            FAIL("round %d: deadlock: %s on %s from %s (tag %d) has no matching send "
                 "(%zu sends, %zu receives on this channel)",
                 round,
                 kind_name(S->P[(*evs)[a + ns + k].proc].s->ops[(*evs)[a + ns + k].op].kind),
                 pname(g, (*evs)[a].dst), pname(g, (*evs)[a].src), (*evs)[a].tag, ns, nr);
        a = b;
    }
    /* local operations, in order */
    for (int x = 0; x < g->p; x++) {
        const iso_sched *s = S->P[x].s;
        int first, end;
        if (round >= s->nrounds || S->P[x].broken)
            continue;
        first = round ? s->round_end[round - 1] : 0;
        end = s->round_end[round];
        for (int k = first; k < end; k++)
            do_local(S, x, &s->ops[k], round);
    }
}

/* ---- structure of one schedule --------------------------------------------------- */

static void check_structure(sim_t *S, int x)
{
    const iso_sched *s = S->P[x].s, *s0 = S->P[0].s;
    const geo_t *g = S->g;
    int prev = 0;
    if (s->nrounds != s0->nrounds)
        FAIL("%s has %d rounds, %s has %d (rounds would not line up)", pname(g, x), s->nrounds,
             pname(g, 0), s0->nrounds);
    if ((s->ntags > 1 ? s->ntags : 1) != (s0->ntags > 1 ? s0->ntags : 1))
        FAIL("%s reserves %d tags, %s reserves %d: the tag counters of later operations "
             "diverge",
             pname(g, x), s->ntags, pname(g, 0), s0->ntags);
    if (s->struct_phases != s0->struct_phases || s->struct_msgs != s0->struct_msgs ||
        s->struct_hops != s0->struct_hops || s->struct_max_entries != s0->struct_max_entries)
        FAIL("cost-model figures differ: %s (%d, %d, %d), %s (%d, %d, %d): auto could choose "
             "differently",
             pname(g, x), s->struct_phases, s->struct_msgs, s->struct_hops, pname(g, 0),
             s0->struct_phases, s0->struct_msgs, s0->struct_hops);
    if ((s->nrounds ? s->round_end[s->nrounds - 1] : 0) != s->nops)
        FAIL("%s: the rounds hold %d ops of %d", pname(g, x),
             s->nrounds ? s->round_end[s->nrounds - 1] : 0, s->nops);
    for (int r = 0; r < s->nrounds; r++) {
        int ncomm = 0;
        if (s->round_end[r] < prev || s->round_end[r] > s->nops) {
            FAIL("%s: round %d ends at op %d", pname(g, x), r, s->round_end[r]);
            S->P[x].broken = 1;
            break;
        }
        for (int k = prev; k < s->round_end[r]; k++) {
            const iso_op *op = &s->ops[k];
            if (iso__op_stage(op->kind) != ISO_STAGE_COMM) {
                if (op->kind == ISO_OP_PACK && (op->msg < 0 || op->msg >= s->nmsgs))
                    FAIL("%s: round %d PACK of message %d of %d", pname(g, x), r, op->msg,
                         s->nmsgs);
                continue;
            }
            ncomm++;
            if (op->tag < 0 || op->tag >= s->ntags)
                FAIL("%s: round %d %s tag %d outside 0..%d", pname(g, x), r, kind_name(op->kind),
                     op->tag, s->ntags - 1);
            if (op->peer != MPI_PROC_NULL && (op->peer < 0 || op->peer >= g->p))
                FAIL("%s: round %d %s to rank %d", pname(g, x), r, kind_name(op->kind), op->peer);
            if ((op->kind == ISO_OP_SEND_MSG || op->kind == ISO_OP_RECV_MSG) &&
                (op->msg < 0 || op->msg >= s->nmsgs)) {
                FAIL("%s: round %d %s of message %d of %d", pname(g, x), r, kind_name(op->kind),
                     op->msg, s->nmsgs);
                continue;
            }
            if (op->kind == ISO_OP_SEND && op->nblocks != 1)
                FAIL("%s: round %d SEND counts %d blocks", pname(g, x), r, op->nblocks);
            if (op->kind == ISO_OP_SEND_MSG && op->nblocks != s->msgs[op->msg].n)
                FAIL("%s: round %d SEND_MSG counts %d blocks, the message has %d", pname(g, x), r,
                     op->nblocks, s->msgs[op->msg].n);
        }
        if (ncomm > s->max_comm)
            FAIL("%s: round %d has %d communication ops, max_comm is %d", pname(g, x), r, ncomm,
                 s->max_comm);
        prev = s->round_end[r];
    }
}

/* Datatype mode: every entry of every received message has a destination
 * piece, a receive slot or one of the schedule's nvec scratch vectors.  Not
 * a slot in a reduction: its receive buffer accumulates (sched/message.c reduces
 * into it).  No slot or vector receives two entries: the second would
 * overwrite the first, perhaps before it is forwarded or delivered, or in
 * the same round (undefined in MPI). */
static void check_dests(sim_t *S, int x)
{
    const iso_sched *s = S->P[x].s;
    const geo_t *g = S->g;
    int nvec = s->nvec > 0 ? s->nvec : 0;
    char *used = calloc((size_t)g->s + (size_t)nvec + 1, 1); /* slots, then vectors */
    if (used == NULL) {
        fprintf(stderr, "out of memory\n");
        exit(1);
    }
    if (s->nvec < 0)
        FAIL("%s: %d scratch vectors", pname(g, x), s->nvec);
    for (int k = 0; k < s->nops; k++) {
        const iso_op *op = &s->ops[k];
        const iso_msg *m;
        if (op->kind != ISO_OP_RECV_MSG || op->msg < 0 || op->msg >= s->nmsgs)
            continue; /* check_structure reports a bad message */
        m = &s->msgs[op->msg];
        if (m->n < 0 || m->first < 0 || m->first + m->n > s->npieces) {
            FAIL("%s: received message %d has %d entries at piece %d, of %d pieces: no "
                 "destination for each",
                 pname(g, x), op->msg, m->n, m->first, s->npieces);
            continue;
        }
        for (int e = 0; e < m->n; e++) {
            iso_piece d = s->pieces[m->first + e];
            int at = -1; /* in used[] */
            if (d.msg == ISO_PIECE_SLOT && d.index >= 0 && d.index < g->s)
                at = d.index;
            else if (d.msg == ISO_PIECE_VEC && d.index >= 0 && d.index < nvec)
                at = g->s + d.index;
            if (at < 0)
                FAIL("%s: entry %d of received message %d goes to %s, not one of the %d receive "
                     "slots or %d scratch vectors",
                     pname(g, x), e, op->msg, piece_name(d), g->s, nvec);
            else if (at < g->s && S->reduction)
                FAIL("%s: entry %d of received message %d goes to %s, but a reduction "
                     "accumulates in its receive buffer",
                     pname(g, x), e, op->msg, piece_name(d));
            else if (used[at])
                FAIL("%s: entry %d of received message %d goes to %s, which another entry is "
                     "received into",
                     pname(g, x), e, op->msg, piece_name(d));
            else
                used[at] = 1;
        }
    }
    free(used);
}

/* ---- final state ---------------------------------------------------------------- */

static void check_result(sim_t *S, int x, long long *ids)
{
    const geo_t *g = S->g;
    proc_t *pr = &S->P[x];
    int s = g->s;
    if (!S->reduction) {
        for (int i = 0; i < s; i++) {
            int src = g->src[(size_t)x * s + i];
            iso_loc l = iso__block(&S->args.recv, ISO_BUF_RECV, i);
            place_t *pl = &pr->recv[l.disp];
            int64_t want = (int64_t)src * g->s1 + (S->personalized ? i : 0);
            /* Packed mode: written exactly once.  Datatype mode: a slot
             * received in place may also get a copy of the same block
             * (do_local reports one of another block). */
            if (src == MPI_PROC_NULL) {
                if (pl->writes)
                    FAIL("%s slot %d (no source): written %d times, last %s", pname(g, x), i,
                         pl->writes, idname(g, ms_data(&pl->val)[0]));
            } else if (pl->writes < 1 || (pl->writes > 1 && !S->datatype) || pl->val.n != 1 ||
                       ms_data(&pl->val)[0] != want) {
                FAIL("%s slot %d: got %s (written %d times), expected %s", pname(g, x), i,
                     pl->writes && pl->val.n ? idname(g, ms_data(&pl->val)[0]) : "nothing",
                     pl->writes, idname(g, want));
            }
        }
        return;
    }
    {
        place_t *pl = &pr->recv[0];
        int n = 0;
        for (int i = 0; i < s; i++)
            if (g->src[(size_t)x * s + i] != MPI_PROC_NULL)
                ids[n++] = (long long)g->src[(size_t)x * s + i] * g->s1 + (S->personalized ? i : 0);
        if (n == 0) {
            if (pl->writes)
                FAIL("%s has no source but its recvbuf was written %d times", pname(g, x),
                     pl->writes);
            return;
        }
        if (pl->writes == 0) {
            FAIL("%s: recvbuf never written (%d contributions expected)", pname(g, x), n);
            return;
        }
        qsort(ids, (size_t)n, sizeof *ids, cmp_ll);
        {
            long long *got = ids + s;
            int m = pl->val.n, k;
            if (m > s + 1)
                m = s + 1; /* the rest is surely wrong */
            for (k = 0; k < m; k++)
                got[k] = ms_data(&pl->val)[k];
            qsort(got, (size_t)m, sizeof *got, cmp_ll);
            for (k = 0; k < n && k < m && got[k] == ids[k]; k++)
                ;
            if (m != n || k < n)
                FAIL("%s: recvbuf combines %d contributions, expected %d; first difference at "
                     "%d: got %s, expected %s",
                     pname(g, x), pl->val.n, n, k, k < m ? idname(g, got[k]) : "nothing",
                     k < n ? idname(g, ids[k]) : "nothing");
        }
    }
}

/* ---- one (case, algorithm, collective) ------------------------------------------- */

typedef struct {
    int ok_built, skipped;
    int rounds0, msgs0;   /* iso__sched_stats of process 0 */
    long long hops0;
    int uniform;          /* every process has the same stats */
    int max_rounds, max_msgs; /* over all processes */
    long long max_hops;
    int nrounds;          /* executor rounds */
    int datatype;         /* datatype mode was simulated too */
    long long total_hops, sim_hops, expect_hops;
    double secs;
} result_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static iso_args make_args(iso_coll coll, int s, int *ones, MPI_Aint *displs, MPI_Datatype *types)
{
    iso_side strided = {.layout = ISO_LAYOUT_STRIDED, .count = 1, .type = TYPE, .extent = 1};
    iso_side same = {.layout = ISO_LAYOUT_SAME, .count = 1, .type = TYPE, .extent = 1};
    iso_side w = {.layout = ISO_LAYOUT_W, .counts = ones, .adispls = displs, .types = types,
                  .type = TYPE, .extent = 1};
    iso_args a = {.coll = coll, .op = MPI_OP_NULL};
    for (int i = 0; i < s; i++) {
        ones[i] = 1;
        displs[i] = i;
        types[i] = TYPE;
    }
    switch (coll) {
    case ISO_ALLTOALL:
        a.send = a.recv = strided;
        break;
    case ISO_ALLGATHER:
        a.send = same;
        a.recv = strided;
        break;
    case ISO_REDUCE:
        a.send = a.recv = same;
        a.op = MPI_SUM;
        break;
    default:
        a.send = w;
        a.recv = same;
        a.op = MPI_SUM;
        break;
    }
    return a;
}

/* Reductions combine partial results on the way where the library has
 * accumulators (ISO_PIECE_ACC); before, they moved every block like
 * alltoall / allgather. */
static int vol_mode(iso_coll coll)
{
#ifdef ISO_PIECE_ACC
    if (coll == ISO_REDUCE || coll == ISO_SCATTER_REDUCE)
        return VOL_MERGING;
#endif
    return coll == ISO_ALLTOALL || coll == ISO_SCATTER_REDUCE ? VOL_PERSONALIZED : VOL_SHARED;
}

/* The interpretations of combined messages that verify_one simulates
 * (the self-test takes one at a time). */
enum { SIM_PACKED = 1, SIM_DATATYPE = 2 };
static int sim_modes = SIM_PACKED | SIM_DATATYPE;

/* Self-test of the verifier: faults injected into one schedule, each to be
 * reported by every interpretation that can see it (mut_modes) alone. */
enum {
    MUT_NONE, MUT_PEER, MUT_TAG, MUT_SLOT, MUT_ENTRY, MUT_NBLOCKS, MUT_FIRST, MUT_ROUND,
    MUT_EARLY, MUT_DEST_SWAP, MUT_DEST_SLOT, MUT_DEST_VEC, NMUT
};
static const char *const mut_name[NMUT] = {
    "none", "send to the next rank", "receive tag + 1", "two deliveries swapped",
    "two entries of an outgoing message swapped", "nblocks + 1",
    "a later contribution marked first (REDUCE: into its source)", "an op moved to the next round",
    "a send reads an entry received in the same round",
    "the destinations of two received entries (one a slot) swapped",
    "a received entry's destination moved to another slot (reductions: slot 0)",
    "a scratch vector receives two entries"};
static int mutation;

/* Packed mode ignores the destinations of received entries (MUT_DEST_*). */
static int mut_modes(int kind)
{
    return kind >= MUT_DEST_SWAP ? SIM_DATATYPE : SIM_PACKED | SIM_DATATYPE;
}

/* Swaps the first two pieces of the first message used by an op of kind
 * `kind` whose first two pieces differ: PACK, where an outgoing message's
 * entries come from; RECV_MSG, where an incoming message's entries land,
 * one of them a slot (an entry is read where it landed: swapping two
 * vectors changes nothing). */
static int swap_pieces(iso_sched *s, iso_opkind kind)
{
    for (int k = 0; k < s->nops; k++) {
        const iso_op *op = &s->ops[k];
        iso_piece *pc, t;
        if (op->kind != kind || op->msg < 0 || op->msg >= s->nmsgs || s->msgs[op->msg].n < 2 ||
            s->msgs[op->msg].first < 0 || s->msgs[op->msg].first + 2 > s->npieces)
            continue;
        pc = s->pieces + s->msgs[op->msg].first;
        if ((pc[0].msg == pc[1].msg && pc[0].index == pc[1].index) ||
            (kind == ISO_OP_RECV_MSG && pc[0].msg != ISO_PIECE_SLOT && pc[1].msg != ISO_PIECE_SLOT))
            continue;
        t = pc[0];
        pc[0] = pc[1];
        pc[1] = t;
        return 1;
    }
    return 0;
}

/* MUT_DEST_SLOT: the first slot destination of a received entry becomes the
 * next slot (reductions have none: their first vector becomes slot 0);
 * MUT_DEST_VEC: the second vector destination becomes the first one. */
static int change_dest(iso_sched *s, int kind, int nslots, int reduction)
{
    const iso_piece *vec0 = NULL;
    for (int k = 0; k < s->nops; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind != ISO_OP_RECV_MSG || op->msg < 0 || op->msg >= s->nmsgs)
            continue;
        for (int e = 0; e < s->msgs[op->msg].n && s->msgs[op->msg].first + e < s->npieces; e++) {
            iso_piece *dp = &s->pieces[s->msgs[op->msg].first + e];
            if (kind == MUT_DEST_SLOT && reduction && dp->msg == ISO_PIECE_VEC) {
                *dp = (iso_piece){ISO_PIECE_SLOT, 0};
                return 1;
            }
            if (kind == MUT_DEST_SLOT && dp->msg == ISO_PIECE_SLOT && nslots > 1) {
                dp->index = (dp->index + 1) % nslots;
                return 1;
            }
            if (kind == MUT_DEST_VEC && dp->msg == ISO_PIECE_VEC) {
                if (vec0 == NULL)
                    vec0 = dp;
                else if (dp->index != vec0->index) {
                    dp->index = vec0->index;
                    return 1;
                }
            }
        }
    }
    return 0;
}

/* MUT_EARLY: in the first round that sends and receives messages, the first
 * entry of an outgoing message is taken from an incoming one of the round,
 * which has not arrived when the send starts. */
static int read_early(iso_sched *s)
{
    for (int r = 0, first = 0; r < s->nrounds; first = s->round_end[r++]) {
        int out = -1, in = -1;
        for (int k = first; k < s->round_end[r] && k < s->nops; k++) {
            const iso_op *op = &s->ops[k];
            if ((op->kind != ISO_OP_SEND_MSG && op->kind != ISO_OP_RECV_MSG) || op->msg < 0 ||
                op->msg >= s->nmsgs || s->msgs[op->msg].n < 1)
                continue;
            if (op->kind == ISO_OP_SEND_MSG)
                out = op->msg;
            else
                in = op->msg;
        }
        if (out >= 0 && in >= 0 && s->msgs[out].first >= 0 && s->msgs[out].first < s->npieces) {
            s->pieces[s->msgs[out].first] = (iso_piece){in, 0};
            return 1;
        }
    }
    return 0;
}

static int mutate(sim_t *S, int x, int kind)
{
    iso_sched *s = S->P[x].s;
    int a = -1, b = -1;
    switch (kind) { /* faults in the pieces of messages */
    case MUT_ENTRY:
        return swap_pieces(s, ISO_OP_PACK);
    case MUT_DEST_SWAP:
        return swap_pieces(s, ISO_OP_RECV_MSG);
    case MUT_DEST_SLOT:
    case MUT_DEST_VEC:
        return change_dest(s, kind, S->g->s, S->reduction);
    case MUT_EARLY:
        return read_early(s);
    default:
        break;
    }
    for (int k = 0; k < s->nops; k++) {
        iso_op *op = &s->ops[k];
        switch (kind) {
        case MUT_PEER:
            if ((op->kind == ISO_OP_SEND || op->kind == ISO_OP_SEND_MSG) && op->peer >= 0) {
                op->peer = (op->peer + 1) % S->g->p;
                return 1;
            }
            break;
        case MUT_TAG:
            if (op->kind == ISO_OP_RECV || op->kind == ISO_OP_RECV_MSG) {
                op->tag++;
                return 1;
            }
            break;
        case MUT_NBLOCKS:
            if (op->kind == ISO_OP_SEND || op->kind == ISO_OP_SEND_MSG) {
                op->nblocks++;
                return 1;
            }
            break;
        case MUT_SLOT: /* two deliveries to different slots, or two receives */
            if (S->reduction) /* the same multiset: the fault would be harmless */
                return 0;
            if ((op->kind == ISO_OP_DELIVER &&
                 (a < 0 || s->ops[a].slot != op->slot)) ||
                (op->kind == ISO_OP_RECV && (a < 0 || s->ops[a].a.disp != op->a.disp))) {
                if (a >= 0 && s->ops[a].kind == op->kind) {
                    iso_op t = s->ops[a];
                    if (op->kind == ISO_OP_DELIVER) {
                        s->ops[a].slot = op->slot;
                        op->slot = t.slot;
                    } else {
                        s->ops[a].a = op->a;
                        op->a = t.a;
                    }
                    return 1;
                }
                if (a < 0)
                    a = k;
            }
            break;
        case MUT_FIRST:
            if (op->kind == ISO_OP_DELIVER && !op->first && S->reduction) {
                op->first = 1;
                return 1;
            }
            if (op->kind == ISO_OP_REDUCE) { /* direct: reduces into its source instead */
                iso_loc t = op->a;
                op->a = op->b;
                op->b = t;
                return 1;
            }
            break;
        case MUT_ROUND: /* the last comm op of round 0 with later rounds: into round 1 */
            if (s->nrounds > 1 && k < s->round_end[0] && iso__op_stage(op->kind) == ISO_STAGE_COMM)
                b = k;
            break;
        default:
            break;
        }
    }
    if (kind == MUT_ROUND && b >= 0) {
        iso_op t = s->ops[b];
        memmove(&s->ops[b], &s->ops[b + 1], sizeof(iso_op) * (size_t)(s->round_end[0] - 1 - b));
        s->ops[s->round_end[0] - 1] = t;
        s->round_end[0]--;
        return 1;
    }
    return 0;
}

static void places_clear(place_t *pl, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        pl[k].writes = pl[k].val.n = 0;
        pl[k].received = pl[k].sent_in = 0;
    }
}

static void sim_reset(sim_t *S)
{
    for (int x = 0; x < S->g->p; x++) {
        proc_t *pr = &S->P[x];
        places_clear(pr->recv, (size_t)S->nrecv);
        places_clear(pr->scr, pr->s->scratch_bytes);
        places_clear(pr->acc, (size_t)pr->nacc);
        places_clear(pr->vec, (size_t)pr->nvec);
        for (int k = 0; k < pr->nentries; k++)
            pr->entries[k].n = 0;
        memset(pr->filled, 0, (size_t)pr->s->nmsgs + 1);
    }
    S->sim_hops = 0;
}

/* The neighborhood of geometry g as nbh_build makes it, in mem (3d + 2s
 * ints, and d more of scratch after the targets); the caller fills coords,
 * sources and targets for each process. */
static void nbh_view(const geo_t *g, int alg, int *mem, iso_nbh *nb)
{
    int d = g->d;
    memset(nb, 0, sizeof *nb);
    nb->d = d;
    nb->s = g->s;
    nb->dims = mem;
    nb->periods = mem + d;
    nb->coords = mem + 2 * d;
    nb->sources = mem + 3 * d;
    nb->targets = nb->sources + g->s;
    nb->offsets = g->c->n.off;
    nb->algorithm = alg;
    memcpy(nb->dims, g->c->dims, sizeof(int) * (size_t)d);
    memcpy(nb->periods, g->c->periods, sizeof(int) * (size_t)d);
}

static void verify_one(const geo_t *g, int alg, iso_coll coll, result_t *res)
{
    const vcase_t *c = g->c;
    int s = g->s, d = g->d;
    int *ones = malloc(sizeof(int) * (size_t)(s + 1));
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    int *nbmem = malloc(sizeof(int) * (size_t)(3 * d + 2 * s + d + 1));
    ev_t *evs = NULL;
    long long *keys = NULL;
    size_t evcap = 0, keycap = 0;
    int maxr = 0, modes = SIM_PACKED, ran = 0;
    double t0 = now();
    sim_t S;
    iso_nbh nb;
    iso_figures figs;

    memset(res, 0, sizeof *res);
    memset(&S, 0, sizeof S);
    S.g = g;
    S.coll = coll;
    S.alg = alg;
    S.personalized = coll == ISO_ALLTOALL || coll == ISO_SCATTER_REDUCE;
    S.reduction = coll == ISO_REDUCE || coll == ISO_SCATTER_REDUCE;
    S.args = make_args(coll, s, ones, displs, types);
    S.nsend = S.args.send.layout == ISO_LAYOUT_SAME ? 1 : s;
    S.nrecv = S.args.recv.layout == ISO_LAYOUT_SAME ? 1 : s;
    S.P = calloc((size_t)g->p, sizeof *S.P);

    /* the neighborhood of each process, as nbh_build makes it */
    nbh_view(g, alg, nbmem, &nb);
    res->ok_built = 1;
    for (int x = 0; x < g->p; x++) {
        int *scratch = nb.targets + s, err;
        memcpy(nb.coords, g->coords + (size_t)x * d, sizeof(int) * (size_t)d);
        nb.indegree = nb.outdegree = 0;
        for (int i = 0; i < s; i++) {
            const int *off = c->n.off + (size_t)i * d;
            nb.sources[i] = iso__shifted_rank(&nb, off, -1, scratch);
            nb.targets[i] = iso__shifted_rank(&nb, off, +1, scratch);
            nb.indegree += nb.sources[i] != MPI_PROC_NULL;
            nb.outdegree += nb.targets[i] != MPI_PROC_NULL;
            if (nb.sources[i] != g->src[(size_t)x * s + i] ||
                nb.targets[i] != g->dst[(size_t)x * s + i])
                FAIL("%s index %d: iso__shifted_rank gives source %d target %d, expected %d %d",
                     pname(g, x), i, nb.sources[i], nb.targets[i], g->src[(size_t)x * s + i],
                     g->dst[(size_t)x * s + i]);
        }
        /* auto's figures, computed from the routes without a schedule,
         * must be those of the schedule built */
        if (x == 0 && iso__algorithms[alg].shared &&
            (err = iso__figures_get(&nb, &S.args, alg, &figs)) != MPI_SUCCESS)
            FAIL("%s: iso__figures_get failed (error %d)", pname(g, x), err);
        err = iso__schedule_get(&nb, &S.args, alg, &S.P[x].s);
        if (x == 0 && err == MPI_SUCCESS && iso__algorithms[alg].shared) {
            iso_figures built = iso__sched_figures(S.P[x].s);
            if (memcmp(&built, &figs, sizeof figs) != 0)
                FAIL("figures without building (phases %d, messages %d, hops %d, most blocks "
                     "per message %d) differ from the schedule's (%d, %d, %d, %d)",
                     figs.phases, figs.msgs, figs.hops, figs.max_entries, built.phases,
                     built.msgs, built.hops, built.max_entries);
        }
        for (size_t k = 0; k < sizeof nb.cache / sizeof nb.cache[0]; k++)
            for (int a = 0; a < ISO_MAX_ALGORITHMS; a++) {
                iso__sched_release(nb.cache[k][a]);
                nb.cache[k][a] = NULL;
                nb.have_figures[k][a] = 0;
            }
        if (err != MPI_SUCCESS || S.P[x].s == NULL) {
            char msg[MPI_MAX_ERROR_STRING + 1];
            int len = 0;
            MPI_Error_string(err, msg, &len);
            FAIL("%s: iso__schedule_get failed: %s", pname(g, x), msg);
            res->ok_built = 0;
            break;
        }
    }
    if (res->skipped || !res->ok_built)
        goto fn_exit;
    /* Datatype mode where the library may choose it (choose_datatype in
     * coll/select.c): combining schedules, block sizes known everywhere. */
    if (iso__algorithms[alg].shared)
        modes |= SIM_DATATYPE;
    if (!iso__datatype_possible(&S.args))
        modes = SIM_PACKED;
    modes &= sim_modes;
    if (!modes || (mutation && !mutate(&S, g->p / 2, mutation))) {
        res->skipped = 1;
        goto fn_exit;
    }

    /* per-process memory for the simulation */
    for (int x = 0; x < g->p; x++) {
        proc_t *pr = &S.P[x];
        const iso_sched *sc = pr->s;
        int tot = 0;
        pr->recv = calloc((size_t)S.nrecv + 1, sizeof *pr->recv);
        pr->scr = calloc(sc->scratch_bytes + 1, sizeof *pr->scr);
        pr->moff = malloc(sizeof(int) * ((size_t)sc->nmsgs + 1));
        pr->filled = calloc((size_t)sc->nmsgs + 1, 1);
        for (int m = 0; m < sc->nmsgs; m++) {
            pr->moff[m] = tot;
            tot += sc->msgs[m].n > 0 ? sc->msgs[m].n : 0;
        }
        pr->entries = calloc((size_t)tot + 1, sizeof *pr->entries);
        pr->nentries = tot;
#ifdef ISO_PIECE_ACC
        pr->nacc = sc->nacc;
#endif
        pr->acc = calloc((size_t)pr->nacc + 1, sizeof *pr->acc);
        pr->nvec = sc->nvec > 0 ? sc->nvec : 0;
        pr->vec = calloc((size_t)pr->nvec + 1, sizeof *pr->vec);
        if (!pr->recv || !pr->scr || !pr->moff || !pr->filled || !pr->entries || !pr->acc ||
            !pr->vec) {
            fprintf(stderr, "out of memory\n");
            exit(1);
        }
        check_structure(&S, x);
        if (modes & SIM_DATATYPE)
            check_dests(&S, x);
        iso__sched_stats(sc, &pr->rounds, &pr->messages, &pr->hops);
        res->total_hops += pr->hops;
        if (sc->nrounds > maxr)
            maxr = sc->nrounds;
    }
    res->rounds0 = S.P[0].rounds;
    res->msgs0 = S.P[0].messages;
    res->hops0 = S.P[0].hops;
    res->nrounds = S.P[0].s->nrounds;
    res->uniform = 1;
    for (int x = 0; x < g->p; x++) {
        res->uniform &= S.P[x].rounds == res->rounds0 && S.P[x].messages == res->msgs0 &&
                        S.P[x].hops == res->hops0;
        if (S.P[x].rounds > res->max_rounds)
            res->max_rounds = S.P[x].rounds;
        if (S.P[x].messages > res->max_msgs)
            res->max_msgs = S.P[x].messages;
        if (S.P[x].hops > res->max_hops)
            res->max_hops = S.P[x].hops;
    }
    if (g->torus && !res->uniform)
        FAIL("on a torus, processes differ in rounds/messages/block-hops");

    /* Executions as consecutive operations on the communicator, each with
     * every process's tags shifted by what it reserved for the earlier ones
     * (iso__tags_reserve: at least one): packed twice, so that tag counters
     * must stay in step, then in datatype mode. */
    for (int run = 0; run < 3; run++) {
        static const char *const label[3] = {"", " [second execution]",
                                             " [third execution, datatype mode]"};
        long long *ids;
        size_t len = strlen(what);
        S.datatype = run == 2;
        if (!(modes & (S.datatype ? SIM_DATATYPE : SIM_PACKED)))
            continue;
        snprintf(what + len, sizeof what - len, "%s", label[run]);
        if (ran++)
            sim_reset(&S);
        for (int x = 0; x < g->p; x++)
            S.P[x].tagbase = run * (S.P[x].s->ntags > 1 ? S.P[x].s->ntags : 1);
        for (int r = 0; r < maxr; r++)
            sim_round(&S, r, &evs, &evcap, &keys, &keycap);
        ids = malloc(sizeof(long long) * (size_t)(2 * s + 2));
        for (int x = 0; x < g->p; x++)
            check_result(&S, x, ids);
        free(ids);
        what[len] = '\0';
        if (ran == 1)
            res->sim_hops = S.sim_hops;
    }
    res->datatype = (modes & SIM_DATATYPE) != 0;

    /* volume */
    res->expect_hops = expected_hops(g, iso__algorithms[alg].name, vol_mode(coll));
    if (res->sim_hops != res->total_hops)
        FAIL("block-hops: %lld moved in the simulation, iso__sched_stats counts %lld",
             res->sim_hops, res->total_hops);
    if (res->expect_hops >= 0 && res->total_hops != res->expect_hops)
        FAIL("block-hops: iso__sched_stats counts %lld over all processes, expected %lld",
             res->total_hops, res->expect_hops);

fn_exit:
    for (int x = 0; x < g->p; x++)
        proc_free(&S.P[x], &S);
    free(S.P);
    free(S.tmp);
    free(evs);
    free(keys);
    free(ones);
    free(displs);
    free(types);
    free(nbmem);
    res->secs = now() - t0;
}

/* auto (the cost model) must pick the same algorithm and combining mode on
 * every process, or they would run different schedules, or send packed
 * messages to receives described by datatypes. */
static long check_auto(const geo_t *g)
{
    const vcase_t *c = g->c;
    int s = g->s, d = g->d, n = 0;
    int *ones = malloc(sizeof(int) * (size_t)(s + 1));
    MPI_Aint *displs = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    MPI_Datatype *types = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    int *nbmem = malloc(sizeof(int) * (size_t)(3 * d + 2 * s + d + 1));
    char text[256] = "";
    iso_nbh nb;
    snprintf(what, sizeof what, "auto, %s", c->name);
    reported = 0;
    nbh_view(g, ISO_ALG_AUTO, nbmem, &nb);
    for (int k = 0; k < ISO_NCOLL; k++) {
        iso_args a = make_args((iso_coll)k, s, ones, displs, types);
        int first = -2;
        iso_msg_mode first_dt = ISO_MODE_PACK;
        for (int x = 0; x < g->p; x++) {
            int idx = -3, err;
            iso_msg_mode dt = ISO_MODE_PACK;
            memcpy(nb.coords, g->coords + (size_t)x * d, sizeof(int) * (size_t)d);
            for (int i = 0; i < s; i++) {
                nb.sources[i] = g->src[(size_t)x * s + i];
                nb.targets[i] = g->dst[(size_t)x * s + i];
            }
            err = iso__algorithm_select(&nb, &a, ISO_ALG_AUTO, ISO_MODE_AUTO, 0, &idx, &dt);
            for (size_t q = 0; q < sizeof nb.cache / sizeof nb.cache[0]; q++)
                for (int e = 0; e < ISO_MAX_ALGORITHMS; e++) {
                    iso__sched_release(nb.cache[q][e]);
                    nb.cache[q][e] = NULL;
                    nb.have_figures[q][e] = 0; /* each process decides afresh */
                }
            if (err != MPI_SUCCESS || idx < 0 || idx >= iso__nalgorithms) {
                FAIL("%s on %s: auto fails (error %d, index %d)", iso__coll_names[k],
                     pname(g, x), err, idx);
                break;
            }
            if (x == 0) {
                first = idx;
                first_dt = dt;
            } else if (idx != first || dt != first_dt) {
                FAIL("%s: auto picks %s%s on %s but %s%s on %s", iso__coll_names[k],
                     iso__algorithms[first].name,
                     first_dt == ISO_MODE_DATATYPE ? " (datatype)" : "", pname(g, 0),
                     iso__algorithms[idx].name, dt == ISO_MODE_DATATYPE ? " (datatype)" : "",
                     pname(g, x));
                break;
            }
        }
        if (first >= 0)
            n += snprintf(text + n, sizeof text - (size_t)n, "%s%s %s%s", k ? ", " : "",
                          iso__coll_names[k], iso__algorithms[first].name,
                          first_dt == ISO_MODE_DATATYPE ? " (datatype)" : "");
    }
    free(ones);
    free(displs);
    free(types);
    free(nbmem);
    return tap_result(MPI_COMM_WORLD,
                      "auto picks the same algorithm and mode on every process, %s: %s", c->name,
                      text);
}

/* ---- the figures of the issue ---------------------------------------------------- */

static int ceil_log2(int v) /* ceil(log2(v)), v >= 1 */
{
    int k = 0;
    while ((1 << k) < v)
        k++;
    return k;
}

/* Checks the figures for a Moore radius-r neighborhood on a torus whose
 * dimensions are all >= 2r+1; res[alg][coll]. */
static long check_figures(const geo_t *g, result_t res[][ISO_NCOLL])
{
    const vcase_t *c = g->c;
    int r = c->moore_r, d = c->d, s = g->s, n = 0;
    char text[256];
    snprintf(what, sizeof what, "figures %s", c->name);
    reported = 0;
    for (int alg = 0; alg < iso__nalgorithms && alg < ISO_MAX_ALGORITHMS; alg++) {
        const char *name = iso__algorithms[alg].name;
        int want = -1;
        if (!strcmp(name, "direct"))
            want = s;
        else if (!strcmp(name, "dimwise"))
            want = 2 * r * d;
        else if (!strcmp(name, "bruck"))
            want = 2 * d * ceil_log2(r + 1);
        if (want < 0)
            continue;
        for (int k = 0; k < ISO_NCOLL; k++) {
            const result_t *q = &res[alg][k];
            if (!q->ok_built || q->skipped)
                continue;
            if (!q->uniform || q->rounds0 != want || q->msgs0 != want)
                FAIL("%s %s: %d rounds, %d messages per process%s; expected %d and %d", name,
                     iso__coll_names[k], q->rounds0, q->msgs0,
                     q->uniform ? "" : " (not the same on every process)", want, want);
        }
        if (r == 1 && d == 3 && strcmp(name, "direct")) {
            if (res[alg][ISO_ALLTOALL].hops0 != 54)
                FAIL("%s alltoall moves %lld block-hops per process, expected 54", name,
                     res[alg][ISO_ALLTOALL].hops0);
            if (res[alg][ISO_ALLGATHER].hops0 != 26)
                FAIL("%s allgather moves %lld block-hops per process, expected 26", name,
                     res[alg][ISO_ALLGATHER].hops0);
        }
        n += snprintf(text + n, sizeof text - (size_t)n, "%s%s %d", n ? ", " : "", name, want);
    }
    if (r == 1 && d == 3)
        snprintf(text + n, sizeof text - (size_t)n, "; alltoall 54, allgather 26 block-hops");
    return tap_result(MPI_COMM_WORLD,
                      "figures, Moore r=%d d=%d on %s: rounds = messages per process: %s", r, d,
                      c->topo, text);
}

/* Every injected fault must be reported: the verifier is not blind.  One
 * interpretation of combined messages at a time (mode: SIM_PACKED or
 * SIM_DATATYPE), so that each is shown to see the faults on its own. */
static long self_test(int mode)
{
    static const char *const specs[] = {"4x4:10:moore1"};
    char missed[512] = "";
    int tried = 0, caught = 0, len = 0, first = ncases;
    for (size_t k = 0; k < sizeof specs / sizeof specs[0]; k++)
        parse_case(specs[k]);
    for (int ci = first; ci < ncases; ci++) {
        geo_t g;
        geo_init(&g, &cases[ci]);
        for (int alg = 0; alg < iso__nalgorithms && alg < ISO_MAX_ALGORITHMS; alg++)
            for (int k = 0; k < ISO_NCOLL; k++)
                for (int m = 1; m < NMUT; m++) {
                    result_t res;
                    long before = tap_errors;
                    if (!(mut_modes(m) & mode))
                        continue;
                    reported = MAXREPORT; /* quiet */
                    mutation = m;
                    sim_modes = mode;
                    snprintf(what, sizeof what, "self-test");
                    verify_one(&g, alg, (iso_coll)k, &res);
                    mutation = MUT_NONE;
                    sim_modes = SIM_PACKED | SIM_DATATYPE;
                    if (res.skipped) /* not applicable to this schedule */
                        continue;
                    tried++;
                    if (tap_errors > before)
                        caught++;
                    else if (len < (int)sizeof missed - 100)
                        len += snprintf(missed + len, sizeof missed - (size_t)len,
                                        " [%s %s %s: %s]", iso__algorithms[alg].name,
                                        iso__coll_names[k], cases[ci].name, mut_name[m]);
                    tap_errors = before;
                }
        geo_free(&g);
        nbh_free(&cases[ci].n);
    }
    ncases = first;
    if (caught < tried)
        tap_errors++;
    return tap_result(MPI_COMM_WORLD,
                      "self-test, %s mode alone: %d of %d faults injected into one schedule "
                      "are reported%s%s",
                      mode == SIM_PACKED ? "packed" : "datatype", caught, tried,
                      caught < tried ? "; missed:" : "", missed);
}

/* ---- main ----------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    double t_all;
    long failures = 0;
    MPI_Init(&argc, &argv);
    t_all = now();
    (void)tap_reported;
    for (int k = 1; k < argc; k++)
        if (parse_case(argv[k])) {
            fprintf(stderr, "usage: %s [DIMS:PERIODS:NBH ...], e.g. 32x32x16:111:moore1, "
                            "64x64x4:000:vn2, 8x8:10:rand20,4,7 (s,range,seed), "
                            "5x5:11:off1,0/-2,1 (offsets)\n",
                    argv[0]);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    if (argc < 2)
        quick_cases();
    if (iso__nalgorithms > ISO_MAX_ALGORITHMS) {
        printf("not ok - iso__algorithms has %d entries, more than ISO_MAX_ALGORITHMS %d\n",
               iso__nalgorithms, ISO_MAX_ALGORITHMS);
        failures++;
    }

    if (argc < 2) {
        failures += self_test(SIM_PACKED) != 0;
        failures += self_test(SIM_DATATYPE) != 0;
    }

    for (int ci = 0; ci < ncases; ci++) {
        vcase_t *c = &cases[ci];
        result_t res[ISO_MAX_ALGORITHMS][ISO_NCOLL];
        geo_t g;
        double t_case = now();
        clock_t cpu_case = clock();
        int figures = c->moore_r > 0;
        if (geo_init(&g, c)) {
            fprintf(stderr, "out of memory\n");
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        for (int j = 0; j < c->d; j++)
            figures &= c->periods[j] && c->dims[j] >= 2 * c->moore_r + 1;
        for (int alg = 0; alg < iso__nalgorithms && alg < ISO_MAX_ALGORITHMS; alg++) {
            char line[512];
            int n = 0, dt = 0;
            reported = 0;
            for (int k = 0; k < ISO_NCOLL; k++) {
                result_t *q = &res[alg][k];
                reported = 0;
                snprintf(what, sizeof what, "%s %s, %s", iso__algorithms[alg].name,
                         iso__coll_names[k], c->name);
                verify_one(&g, alg, (iso_coll)k, q);
                dt |= q->datatype;
                if (q->skipped)
                    n += snprintf(line + n, sizeof line - (size_t)n, "; %s not applicable",
                                  iso__coll_names[k]);
                else
                    n += snprintf(line + n, sizeof line - (size_t)n,
                                  "; %s %d rounds %d msgs %lld hops (total %lld%s)",
                                  iso__coll_names[k], q->max_rounds, q->max_msgs, q->max_hops,
                                  q->total_hops, q->expect_hops >= 0 ? "" : ", no formula");
            }
            failures += tap_result(MPI_COMM_WORLD,
                                   "%s, p=%d, %s: sends matched, blocks delivered%s; per "
                                   "process at most%s",
                                   iso__algorithms[alg].name, g.p, c->name,
                                   dt ? " (packed and datatype mode)" : "", line + 1) != 0;
        }
        if (figures)
            failures += check_figures(&g, res) != 0;
        failures += check_auto(&g) != 0;
        printf("# %s: p=%d, %.2f s (cpu %.2f s)\n", c->name, g.p, now() - t_case,
               (double)(clock() - cpu_case) / CLOCKS_PER_SEC);
        geo_free(&g);
    }
    printf("# total %.2f s (cpu %.2f s)\n", now() - t_all, (double)clock() / CLOCKS_PER_SEC);
    for (int ci = 0; ci < ncases; ci++)
        nbh_free(&cases[ci].n);
    free(cases);
    MPI_Finalize();
    return failures ? 1 : 0;
}
