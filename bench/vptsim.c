/* vptsim: message and volume figures of store-and-forward over a virtual
 * process topology T_n(k_1..k_n) (Selvitopi & Aykanat, SC'19) for K
 * processes, simulated on one process without MPI (bench/vptmodel.c routes
 * every process's submessages as the library does), so that K = 512 ...
 * 16384 can be studied on one machine.
 *
 *   vptsim --alltoall K [--n N | --dims a,b,..] [--bytes S] [--header H]
 *   vptsim --matrix PATH[,PATH..] --K K[,K..] [--n N | --dims a,b,..]
 *          [--partition rows|metis] [--word W] [--header H]
 *
 * All-to-all: every process sends S bytes to every other; one line per n
 * with `mmax=<int> volume_ratio=<float>` and the paper's closed forms
 * (section 4) beside them.  Matrix: the x-vector pattern of a row-parallel
 * y = Ax (bench/matrix.h: rows and x partitioned alike over K processes;
 * process q receives from the owner of x_j every x_j its rows use, W bytes
 * each), one line per n (n = 1 is direct) with `n=<n> mmax=<..> mavg=<..>
 * vavg=<..>` (vavg in words of W bytes, headers included), and a `best`
 * line: the n with the fewest messages from one process among those within
 * 3x direct's volume.  See bench/README.md. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

#include "matrix.h"
#include "vptmodel.h"

/* Bytes of a submessage header on every hop (--header): 0 gives the paper's
 * payload volume; direct (n = 1) sends plain messages and never has one. */
#define DEFAULT_HEADER 0

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "vptsim: out of memory (%zu bytes)\n", n);
        exit(2);
    }
    return p;
}

static void usage(void)
{
    fprintf(stderr,
            "usage: vptsim --alltoall K [--n N | --dims a,b,..] [--bytes S] [--header H]\n"
            "       vptsim --matrix PATH[,PATH..] --K K[,K..] [--n N | --dims a,b,..]\n"
            "              [--partition rows|metis] [--word W] [--header H] [--sharing]\n"
            "              [--combine] (with --header 0 only)\n"
            "METIS: %s\n",
#ifdef ISO_HAVE_METIS
            "built in"
#else
            "not built in (libmetis-dev missing when built)"
#endif
    );
    exit(2);
}

/* The shapes to simulate: --dims, --n, or every n from 1 to iso__vpt_model_max_n(K). */
typedef struct {
    int count, n[ISO_VPT_MAXDIMS], dims[ISO_VPT_MAXDIMS][ISO_VPT_MAXDIMS];
} shapes;

static shapes make_shapes(int K, int n_opt, const char *dims_opt)
{
    shapes s = {0, {0}, {{0}}};
    if (dims_opt) {
        if (iso__vpt_dims_parse(dims_opt, K, &s.n[0], s.dims[0]) != MPI_SUCCESS) {
            fprintf(stderr, "vptsim: --dims %s: sizes >= 1 whose product is K = %d\n", dims_opt,
                    K);
            exit(2);
        }
        s.count = 1;
        return s;
    }
    for (int n = n_opt ? n_opt : 1; n <= (n_opt ? n_opt : iso__vpt_model_max_n(K)); n++) {
        if (iso__vpt_dims_balanced(K, n, s.dims[s.count]) != MPI_SUCCESS) {
            fprintf(stderr, "vptsim: no VPT of %d processes in %d dimensions\n", K, n);
            exit(2);
        }
        s.n[s.count++] = n;
    }
    return s;
}

/* ---- all-to-all ------------------------------------------------------------ */
typedef struct {
    int *dest;
    long long *bytes;
    int K;
} alltoall_gen;

static int alltoall_source(void *ctx, int src, iso_vpt_sends *out)
{
    alltoall_gen *a = ctx;
    (void)src; /* the send to itself is in the list; the model skips it */
    out->n = a->K, out->dest = a->dest, out->bytes = a->bytes;
    return MPI_SUCCESS;
}

static void run_alltoall(int K, const shapes *sh, long long bytes, long long header)
{
    alltoall_gen a = {xmalloc(sizeof(int) * (size_t)K), xmalloc(sizeof(long long) * (size_t)K), K};
    for (int t = 0; t < K; t++)
        a.dest[t] = t, a.bytes[t] = bytes;
    printf("# vptsim: all-to-all, K=%d, %lld bytes per message, header %lld bytes per "
           "submessage\n",
           K, bytes, header);
    for (int i = 0; i < sh->count; i++) {
        iso_vpt_model m;
        int n = sh->n[i], rc;
        long long cf_mmax = 0;
        double cf_ratio = 0;
        char shape[128];
        for (int d = 0; d < n; d++) { /* section 4, any sizes: sum_d (K - K/k_d) / (K - 1) */
            cf_mmax += sh->dims[i][d] - 1;
            cf_ratio += K - K / sh->dims[i][d];
        }
        cf_ratio = K > 1 ? cf_ratio / (K - 1) : 1.0;
        rc = iso__vpt_model_run(K, n, sh->dims[i], n > 1 ? header : 0, alltoall_source, &a, &m);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "vptsim: model failed (MPI error class %d)\n", rc);
            exit(2);
        }
        iso__vpt_model_dims_string(n, sh->dims[i], shape, sizeof shape);
        printf("K=%d n=%d dims=%s mmax=%d mavg=%.2f vavg=%.1f volume_ratio=%.4f "
               "closed_form_mmax=%lld closed_form_volume_ratio=%.4f\n",
               K, n, shape, m.mmax, m.mavg, m.vavg, m.volume_ratio, cf_mmax, cf_ratio);
        iso__vpt_model_free(&m);
    }
    free(a.dest), free(a.bytes);
}

/* ---- matrices ---------------------------------------------------------------- */
/* One combination of sharing and the VPT on one shape (--combine). */
typedef struct {
    int n;          /* 0: none within 3x volume */
    int mmax;       /* most messages sent by one process, all stages */
    double mavg;    /* mean messages sent per process */
    double volume_ratio; /* payload bytes moved / direct's */
} combo;

typedef struct {
    double mmax_cut; /* direct's mmax / the best n's */
    int found;
    int best_mmax;       /* the best n's */
    double best_mavg;
    double best_ratio;   /* the best n's volume ratio */
    iso_sharing sh;      /* --sharing: the planner's figures (sender kept for --combine) */
    double plan_ms;      /* --sharing: the planner's time */
    /* --combine: the best n >= 2 within 3x direct's volume of each order */
    combo share_vpt, vpt_share;
    /* --combine: the same within vpt's best n's volume (n 0: none) */
    combo share_vpt_eq, vpt_share_eq;
    combo sharing_exec;  /* --combine: sharing alone as its executor sends */
} best_t;

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static long maxrss_kb(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return ru.ru_maxrss;
}

/* Message sharing (Duymus 2021) on the pattern ptr/dest/bytes: the machine
 * line and the figures for the table.  The planner's memory is its peak
 * resident set growth (ru_maxrss after minus before: an upper bound only
 * when it sets a new peak, so it runs before the VPT models). */
static void run_sharing(const char *name, int K, const long long *ptr, const int *dest,
                        const long long *bytes, int keep_sender, best_t *res)
{
    iso_pattern pat = {K, ptr, dest, bytes};
    long rss0 = maxrss_kb();
    double t0 = now_ms();
    int rc = iso__sharing_plan(&pat, &res->sh);
    res->plan_ms = now_ms() - t0;
    long rss1 = maxrss_kb();
    if (rc != MPI_SUCCESS) {
        fprintf(stderr, "vptsim: sharing planner failed (MPI error class %d)\n", rc);
        exit(2);
    }
    if (!keep_sender)
        iso__sharing_free(&res->sh);
    printf("matrix=%s K=%d sharing initial_mmax=%lld phase1_mmax=%lld phase2_mmax=%lld "
           "initial_mavg=%.2f phase2_mavg=%.2f overhead=%.2f volume_ratio=%.3f "
           "phase1_mavg=%.2f messages=%lld plan_ms=%.1f plan_rss_kb=%ld\n",
           name, K, res->sh.initial_mmax, res->sh.phase1_mmax, res->sh.phase2_mmax,
           res->sh.initial_mavg, res->sh.phase2_mavg, (double)res->sh.overhead / K,
           res->sh.volume_ratio, res->sh.phase1_mavg, ptr[K], res->plan_ms, rss1 - rss0);
}

/* ---- --combine: message sharing with the VPT ----------------------------------
 * Two orders, counted as the two alone are (payload volume, no headers):
 *
 * SHARE THEN VPT.  The sharing plan of the whole pattern, then its second
 * stage over T_n.  Stage 1 (direct, as sharing alone): source s sends one
 * message to each partner q in Q(s), carrying the messages q forwards and
 * s's own messages to q.  Then every other message -- a forwarded one from
 * its sender q, an own one from its source -- is routed over T_n from the
 * process that holds it (the VPT combines per link and stage).  A process
 * sends |Q(p)| + its VPT messages.  n = 1 is sharing alone as its
 * executor runs it (add_sharing_sends; checked).
 *
 * VPT THEN SHARE.  The VPT's routes, and at every stage d the stage's
 * process-to-process pattern (who sends to whom at d, with the bytes)
 * planned by message sharing on its own: each stage becomes sharing's two
 * sub-stages (2n in all).  A process sends the sum over stages of the
 * messages sharing's executor sends (add_sharing_sends).  n = 1 is sharing alone.  Phase II may pair processes of
 * different lines of dimension d: a partner message is a direct message.
 *
 * Which combination is kept: per matrix and order, the n >= 2 with the
 * fewest messages from one process among those within 3x direct's payload
 * volume (ties: less volume), the rule of vpt's best. */

static int by_key(const void *a, const void *b)
{
    long long x = *(const long long *)a, y = *(const long long *)b;
    return (x > y) - (x < y);
}

/* Sorts keys[0..n) and drops repeats; the new count. */
static long long sort_unique(long long *keys, long long n)
{
    long long m = 0;
    qsort(keys, (size_t)n, sizeof *keys, by_key);
    for (long long i = 0; i < n; i++)
        if (m == 0 || keys[m - 1] != keys[i])
            keys[m++] = keys[i];
    return m;
}

static int has_key(const long long *keys, long long n, long long k)
{
    return bsearch(&k, keys, (size_t)n, sizeof k, by_key) != NULL;
}

/* The messages each process sends when sharing's executor runs a plan
 * (src/route/sharing.c), added to count[p]; returns the payload bytes
 * moved (forwarded messages twice).  Stage 0: s to each partner q (the
 * forwarded messages, and s's own message to q if q is a target); stage 1:
 * every process to each target it forwards to or still has its own
 * message for (a partner that is also a target of forwarded messages gets
 * two: stage 0 goes before the forwarded message has arrived).  Written
 * from the executor, independently of the planner's load bookkeeping, which
 * must give the same counts (--sharing checks it). */
static long long add_sharing_sends(const iso_pattern *pat, const int *sender, int *count)
{
    long long ne = pat->start[pat->K], npart = 0, nk = 0;
    long long moved = 0, *part = xmalloc(sizeof *part * (size_t)(ne + 1));
    long long *keys = xmalloc(sizeof *keys * (size_t)(ne + 1));
    for (int s = 0; s < pat->K; s++)
        for (long long e = pat->start[s]; e < pat->start[s + 1]; e++)
            if (sender[e] != s)
                part[npart++] = (long long)s * pat->K + sender[e];
    npart = sort_unique(part, npart);
    for (long long i = 0; i < npart; i++)
        count[part[i] / pat->K]++;
    for (int s = 0; s < pat->K; s++)
        for (long long e = pat->start[s]; e < pat->start[s + 1]; e++) {
            int q = sender[e], t = pat->targets[e];
            long long b = pat->bytes ? pat->bytes[e] : 0;
            moved += q != s ? 2 * b : b;
            if (q != s || !has_key(part, npart, (long long)s * pat->K + t))
                keys[nk++] = (long long)q * pat->K + t;
        }
    nk = sort_unique(keys, nk);
    for (long long i = 0; i < nk; i++)
        count[keys[i] / pat->K]++;
    free(keys), free(part);
    return moved;
}

static combo combo_figures(int K, const int *count, long long moved, long long direct, int n)
{
    combo c = {n, 0, 0.0, direct ? (double)moved / (double)direct : 1.0};
    long long total = 0;
    for (int p = 0; p < K; p++) {
        total += count[p];
        if (count[p] > c.mmax)
            c.mmax = count[p];
    }
    c.mavg = (double)total / K;
    return c;
}

/* Share then VPT on T_n(dims), the plan sh of pattern pat. */
static combo share_then_vpt(const iso_pattern *pat, const iso_sharing *sh, int n,
                            const int dims[])
{
    int K = pat->K;
    long long ne = pat->start[K], npart = 0, moved = 0, direct = 0, *part, *vptr;
    int *count = calloc((size_t)K, sizeof *count), *vdest, *fill;
    long long *vbytes;
    iso_vpt_model m;
    combo c;
    if (!count) {
        fprintf(stderr, "vptsim: out of memory\n");
        exit(2);
    }
    part = xmalloc(sizeof *part * (size_t)(ne + 1));
    for (int s = 0; s < K; s++) /* stage 1: the partner messages s -> q */
        for (long long e = pat->start[s]; e < pat->start[s + 1]; e++)
            if (sh->sender[e] != s)
                part[npart++] = (long long)s * K + sh->sender[e];
    npart = sort_unique(part, npart);
    for (long long i = 0; i < npart; i++)
        count[part[i] / K]++;
    /* the rest, from the process that holds it, over T_n */
    vptr = calloc((size_t)K + 1, sizeof *vptr);
    fill = calloc((size_t)K, sizeof *fill);
    vdest = xmalloc(sizeof *vdest * (size_t)(ne + 1));
    vbytes = xmalloc(sizeof *vbytes * (size_t)(ne + 1));
    if (!vptr || !fill) {
        fprintf(stderr, "vptsim: out of memory\n");
        exit(2);
    }
    for (int pass = 0; pass < 2; pass++) { /* 0: count per holder, 1: fill */
        for (int s = 0; s < K; s++)
            for (long long e = pat->start[s]; e < pat->start[s + 1]; e++) {
                int q = sh->sender[e], t = pat->targets[e];
                long long b = pat->bytes ? pat->bytes[e] : 0;
                if (q == s && has_key(part, npart, (long long)s * K + t)) {
                    if (pass)
                        moved += b, direct += b; /* in the stage-1 message to t */
                    continue;
                }
                if (pass == 0) {
                    vptr[q + 1]++;
                    continue;
                }
                if (q != s)
                    moved += b; /* s -> q in stage 1 */
                direct += b;
                vdest[vptr[q] + fill[q]] = t;
                vbytes[vptr[q] + fill[q]++] = b;
            }
        if (pass == 0)
            for (int p = 0; p < K; p++)
                vptr[p + 1] += vptr[p];
    }
    if (iso__vpt_model_csr(K, n, dims, 0, vptr, vdest, vbytes, &m) != MPI_SUCCESS) {
        fprintf(stderr, "vptsim: model failed\n");
        exit(2);
    }
    moved += m.volume;
    for (int p = 0; p < K; p++)
        for (int d = 0; d < n; d++)
            count[p] += m.msgs[(size_t)p * n + d];
    c = combo_figures(K, count, moved, direct, n);
    iso__vpt_model_free(&m);
    free(count), free(part), free(vptr), free(fill), free(vdest), free(vbytes);
    return c;
}

typedef struct {
    long long key, bytes; /* link at * K + next of one stage, a message's payload */
} hop;

static int by_hop(const void *a, const void *b)
{
    return by_key(&((const hop *)a)->key, &((const hop *)b)->key);
}

/* VPT then share on T_n(dims): the stage patterns of pat's routes, each
 * planned by sharing.  vpt_msgs: the model's per-process, per-stage
 * messages of the same routes (checked against the stage patterns). */
static combo vpt_then_share(const iso_pattern *pat, int n, const int dims[], const int *vpt_msgs)
{
    int K = pat->K;
    long long ne = pat->start[K], direct = 0, moved = 0;
    int *count = calloc((size_t)K, sizeof *count);
    hop *h = xmalloc(sizeof *h * (size_t)(ne + 1));
    if (!count) {
        fprintf(stderr, "vptsim: out of memory\n");
        exit(2);
    }
    for (long long e = 0; e < ne; e++)
        direct += pat->bytes ? pat->bytes[e] : 0;
    for (int d = 0; d < n; d++) {
        long long nh = 0, nl = 0, *start = calloc((size_t)K + 1, sizeof *start), *lbytes;
        int *targets;
        iso_sharing sh;
        iso_pattern sp;
        if (!start) {
            fprintf(stderr, "vptsim: out of memory\n");
            exit(2);
        }
        for (int s = 0; s < K; s++) /* where each message is at stage d, and where it goes */
            for (long long e = pat->start[s]; e < pat->start[s + 1]; e++) {
                int at = s, t = pat->targets[e], next;
                for (int x = 0; x < d; x++)
                    at = iso__vpt_hop(n, dims, x, at, t);
                next = iso__vpt_hop(n, dims, d, at, t);
                if (next != at)
                    h[nh++] = (hop){(long long)at * K + next, pat->bytes ? pat->bytes[e] : 0};
            }
        qsort(h, (size_t)nh, sizeof *h, by_hop);
        targets = xmalloc(sizeof *targets * (size_t)(nh + 1));
        lbytes = xmalloc(sizeof *lbytes * (size_t)(nh + 1));
        for (long long i = 0; i < nh; i++) { /* one message per link of the stage */
            if (i > 0 && h[i - 1].key == h[i].key) {
                lbytes[nl - 1] += h[i].bytes;
                continue;
            }
            targets[nl] = (int)(h[i].key % K);
            lbytes[nl++] = h[i].bytes;
            start[h[i].key / K + 1]++;
        }
        for (int p = 0; p < K; p++)
            start[p + 1] += start[p];
        for (int p = 0; p < K; p++) {
            if (start[p + 1] - start[p] != vpt_msgs[(size_t)p * n + d]) {
                fprintf(stderr, "vptsim: stage %d of process %d: %lld links, the model %d\n", d,
                        p, start[p + 1] - start[p], vpt_msgs[(size_t)p * n + d]);
                exit(2);
            }
        }
        sp = (iso_pattern){K, start, targets, lbytes};
        if (iso__sharing_plan(&sp, &sh) != MPI_SUCCESS) {
            fprintf(stderr, "vptsim: sharing planner failed\n");
            exit(2);
        }
        moved += add_sharing_sends(&sp, sh.sender, count);
        iso__sharing_free(&sh);
        free(start), free(targets), free(lbytes);
    }
    free(h);
    {
        combo c = combo_figures(K, count, moved, direct, n);
        free(count);
        return c;
    }
}

/* Keeps c in *best if it is the better n >= 2 within limit x direct's volume. */
static void keep_best(combo *best, combo c, double limit)
{
    if (c.n < 2 || c.volume_ratio > limit)
        return;
    if (best->n == 0 || c.mmax < best->mmax ||
        (c.mmax == best->mmax && c.volume_ratio < best->volume_ratio))
        *best = c;
}

static best_t run_matrix(const mm_matrix *mat, const char *name, int K, int n_opt,
                         const char *dims_opt, int metis, long long word, long long header,
                         int sharing, int combine)
{
    int *part = xmalloc(sizeof(int) * ((size_t)mat->n + 1)), *dest, best = -1, direct_mmax = 0;
    long long *ptr, *bytes;
    double best_ratio = 0;
    char err[512];
    mm_needs nd;
    shapes sh = make_shapes(K, n_opt, dims_opt);
    best_t res;
    memset(&res, 0, sizeof res);
    if (metis) {
        if (part_metis(mat, K, part, err, sizeof err)) {
            fprintf(stderr, "vptsim: %s: %s\n", name, err);
            exit(2);
        }
    } else {
        part_rows_nnz(mat, K, part);
    }
    if (mm_needs_compute(mat, part, K, &nd)) {
        fprintf(stderr, "vptsim: out of memory\n");
        exit(2);
    }
    if (mm_sends_by_source(&nd, part, K, word, &ptr, &dest, &bytes)) {
        fprintf(stderr, "vptsim: out of memory\n");
        exit(2);
    }
    printf("# vptsim: %s (%d x %d, %ld nonzeros), K=%d, partition %s, word %lld bytes, header "
           "%lld bytes per submessage; %lld messages, %lld words in direct\n",
           name, mat->rows, mat->cols, mat->nnz, K, metis ? "metis" : "rows", word, header,
           ptr[K], (long long)(nd.ptr[K]));
    iso_pattern pat = {K, ptr, dest, bytes};
    combo all_a[ISO_VPT_MAXDIMS], all_b[ISO_VPT_MAXDIMS]; /* --combine: per shape */
    if (sharing || combine)
        run_sharing(name, K, ptr, dest, bytes, 1, &res);
    if (sharing && !combine && res.sh.sender != NULL) {
        /* the planner's loads are what the executor sends */
        int *count = calloc((size_t)K, sizeof *count);
        long long total = 0, mmax = 0;
        if (!count) {
            fprintf(stderr, "vptsim: out of memory\n");
            exit(2);
        }
        add_sharing_sends(&pat, res.sh.sender, count);
        for (int p = 0; p < K; p++)
            total += count[p], mmax = count[p] > mmax ? count[p] : mmax;
        if (mmax != res.sh.phase2_mmax || fabs((double)total / K - res.sh.phase2_mavg) > 1e-9) {
            fprintf(stderr, "vptsim: %s K=%d: the planner's loads (max %lld, avg %.2f) are not "
                    "the executor's sends (max %lld, avg %.2f)\n", name, K, res.sh.phase2_mmax,
                    res.sh.phase2_mavg, mmax, (double)total / K);
            exit(2);
        }
        free(count);
        iso__sharing_free(&res.sh);
    }
    if (combine) {
        int *count = calloc((size_t)K, sizeof *count);
        long long moved, direct = 0;
        if (!count) {
            fprintf(stderr, "vptsim: out of memory\n");
            exit(2);
        }
        moved = add_sharing_sends(&pat, res.sh.sender, count);
        for (long long e = 0; e < ptr[K]; e++)
            direct += bytes[e];
        res.sharing_exec = combo_figures(K, count, moved, direct, 1);
        free(count);
    }
    for (int i = 0; i < sh.count; i++) {
        iso_vpt_model m;
        char shape[128];
        int n = sh.n[i];
        int rc = iso__vpt_model_csr(K, n, sh.dims[i], n > 1 ? header : 0, ptr, dest, bytes, &m);
        if (rc != MPI_SUCCESS) {
            fprintf(stderr, "vptsim: model failed (MPI error class %d)\n", rc);
            exit(2);
        }
        iso__vpt_model_dims_string(n, sh.dims[i], shape, sizeof shape);
        printf("matrix=%s K=%d n=%d dims=%s mmax=%d mavg=%.2f vavg=%.1f volume_ratio=%.3f "
               "buffer_kb=%.1f\n",
               name, K, n, shape, m.mmax, m.mavg, m.vavg / (double)word, m.volume_ratio,
               (double)m.buffer_max / 1024.0);
        if (n == 1)
            direct_mmax = m.mmax;
        else if (m.volume_ratio <= 3.0 &&
                 (best < 0 || m.mmax < best || (m.mmax == best && m.volume_ratio < best_ratio)))
            best = m.mmax, best_ratio = m.volume_ratio, res.found = n, res.best_mavg = m.mavg;
        if (combine) {
            combo a = share_then_vpt(&pat, &res.sh, n, sh.dims[i]);
            combo b = vpt_then_share(&pat, n, sh.dims[i], m.msgs);
            if (n == 1 && (a.mmax != res.sharing_exec.mmax || b.mmax != res.sharing_exec.mmax ||
                           a.mavg != res.sharing_exec.mavg || b.mavg != res.sharing_exec.mavg)) {
                fprintf(stderr, "vptsim: n=1 combinations (%d, %d) differ from sharing (%d)\n",
                        a.mmax, b.mmax, res.sharing_exec.mmax);
                exit(2);
            }
            printf("matrix=%s K=%d n=%d combine share_vpt_mmax=%d share_vpt_mavg=%.2f "
                   "share_vpt_volume_ratio=%.3f vpt_share_mmax=%d vpt_share_mavg=%.2f "
                   "vpt_share_volume_ratio=%.3f\n",
                   name, K, n, a.mmax, a.mavg, a.volume_ratio, b.mmax, b.mavg, b.volume_ratio);
            all_a[i] = a, all_b[i] = b;
        }
        iso__vpt_model_free(&m);
    }
    res.best_mmax = best;
    res.best_ratio = best_ratio;
    for (int i = 0; combine && i < sh.count; i++) {
        keep_best(&res.share_vpt, all_a[i], 3.0);
        keep_best(&res.vpt_share, all_b[i], 3.0);
        if (res.found) {
            keep_best(&res.share_vpt_eq, all_a[i], best_ratio);
            keep_best(&res.vpt_share_eq, all_b[i], best_ratio);
        }
    }
    if (combine) {
        printf("combine matrix=%s K=%d sharing mmax=%lld mavg=%.2f volume_ratio=%.3f "
               "executed_mmax=%d executed_mavg=%.2f | vpt n=%d "
               "mmax=%d mavg=%.2f volume_ratio=%.3f | share_vpt n=%d mmax=%d mavg=%.2f "
               "volume_ratio=%.3f | vpt_share n=%d mmax=%d mavg=%.2f volume_ratio=%.3f\n",
               name, K, res.sh.phase2_mmax, res.sh.phase2_mavg, res.sh.volume_ratio,
               res.sharing_exec.mmax, res.sharing_exec.mavg, res.found,
               best, res.best_mavg, best_ratio, res.share_vpt.n, res.share_vpt.mmax,
               res.share_vpt.mavg, res.share_vpt.volume_ratio, res.vpt_share.n,
               res.vpt_share.mmax, res.vpt_share.mavg, res.vpt_share.volume_ratio);
        printf("combine matrix=%s K=%d within vpt's volume %.3f: share_vpt n=%d mmax=%d "
               "volume_ratio=%.3f | vpt_share n=%d mmax=%d volume_ratio=%.3f\n",
               name, K, best_ratio, res.share_vpt_eq.n, res.share_vpt_eq.mmax,
               res.share_vpt_eq.volume_ratio, res.vpt_share_eq.n, res.vpt_share_eq.mmax,
               res.vpt_share_eq.volume_ratio);
        iso__sharing_free(&res.sh);
    }
    if (direct_mmax > 0 && best > 0) {
        res.mmax_cut = (double)direct_mmax / best;
        printf("best matrix=%s K=%d n=%d mmax=%d direct_mmax=%d mmax_cut=%.1f volume_ratio=%.3f "
               "(fewest messages from one process within 3x direct's volume)\n",
               name, K, res.found, best, direct_mmax, res.mmax_cut, best_ratio);
    }
    mm_needs_free(&nd);
    free(part), free(ptr), free(dest), free(bytes);
    return res;
}

int main(int argc, char **argv)
{
    const char *matrices = NULL, *dims_opt = NULL, *Ks = NULL;
    int alltoall = 0, n_opt = 0, metis = 0, sharing = 0, combine = 0;
    long long bytes = 8, word = 8, header = DEFAULT_HEADER;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "--sharing")) {
            sharing = 1;
            continue;
        }
        if (!strcmp(argv[a], "--combine")) {
            combine = 1;
            continue;
        }
        if (!strcmp(argv[a], "--help") || !strcmp(argv[a], "-h") || v == NULL)
            usage();
        if (!strcmp(argv[a], "--alltoall"))
            alltoall = atoi(v);
        else if (!strcmp(argv[a], "--matrix"))
            matrices = v;
        else if (!strcmp(argv[a], "--K"))
            Ks = v;
        else if (!strcmp(argv[a], "--n"))
            n_opt = atoi(v);
        else if (!strcmp(argv[a], "--dims"))
            dims_opt = v;
        else if (!strcmp(argv[a], "--bytes"))
            bytes = atoll(v);
        else if (!strcmp(argv[a], "--word"))
            word = atoll(v);
        else if (!strcmp(argv[a], "--header"))
            header = atoll(v);
        else if (!strcmp(argv[a], "--partition") && !strcmp(v, "rows"))
            metis = 0;
        else if (!strcmp(argv[a], "--partition") && !strcmp(v, "metis"))
            metis = 1;
        else
            usage();
        a++;
    }
    if ((alltoall > 0) == (matrices != NULL) || (matrices && !Ks) || n_opt < 0 ||
        n_opt > ISO_VPT_MAXDIMS || (n_opt && dims_opt) || bytes < 0 || word < 1 || header < 0 ||
        (combine && (header != 0 || !matrices)))
        usage();
    if (alltoall > 0) {
        shapes sh = make_shapes(alltoall, n_opt, dims_opt);
        run_alltoall(alltoall, &sh, bytes, header);
        return 0;
    }
    {
        char *mlist = strdup(matrices), *ms = NULL;
        double log_cut[64] = {0};
        int nmat[64] = {0}, Kof[64] = {0}, nK = 0;
        /* --sharing: the thesis's table 6.3, geometric means over the matrices
         * (overhead: arithmetic, it is 0 for some); g[K][column] sums of logs */
        enum { G_AVG0, G_AVG1, G_AVG2, G_MAX0, G_MAX1, G_MAX2, G_VOL, G_VPTMAX, G_VPTAVG, G_N };
        static double g[64][G_N], ovh[64];
        int gmat[64] = {0}, gvpt[64] = {0};
        /* --combine: per K and order (0 share_vpt, 1 vpt_share), over the
         * matrices where the order and vpt have an n within 3x volume: sums of
         * logs, and how the order's mmax compares with the better alone */
        enum { C_SH, C_SHAVG, C_SHVOL, C_V, C_VAVG, C_VVOL, C_BETTER, C_O, C_OAVG, C_OVOL, C_N };
        static double cg[64][2][C_N];
        int cmat[64][2] = {{0}}, cmiss[64][2] = {{0}}, cwin[64][2] = {{0}}, ctie[64][2] = {{0}};
        int ceq[64][2] = {{0}}; /* fewer than vpt_best within its volume */
        for (char *path = strtok_r(mlist, ",", &ms); path; path = strtok_r(NULL, ",", &ms)) {
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            char err[512], name[256], *klist = strdup(Ks), *ks = NULL;
            mm_matrix mat;
            snprintf(name, sizeof name, "%s", base);
            if (strstr(name, ".mtx"))
                *strstr(name, ".mtx") = '\0';
            if (mm_read(path, &mat, err, sizeof err)) {
                fprintf(stderr, "vptsim: %s\n", err);
                return 2;
            }
            nK = 0;
            for (char *k = strtok_r(klist, ",", &ks); k && nK < 64;
                 k = strtok_r(NULL, ",", &ks), nK++) {
                int K = atoi(k);
                best_t b;
                if (K < 1) {
                    fprintf(stderr, "vptsim: --K %s: process counts >= 1\n", Ks);
                    return 2;
                }
                b = run_matrix(&mat, name, K, n_opt, dims_opt, metis, word, header, sharing,
                               combine);
                Kof[nK] = K;
                for (int o = 0; combine && b.sh.initial_mmax > 0 && o < 2; o++) {
                    const combo *c = o ? &b.vpt_share : &b.share_vpt;
                    const combo *eq = o ? &b.vpt_share_eq : &b.share_vpt_eq;
                    int better = b.best_mmax < b.sharing_exec.mmax ? b.best_mmax
                                                                   : b.sharing_exec.mmax;
                    if (b.found && c->n) {
                        double v[C_N] = {b.sharing_exec.mmax, b.sharing_exec.mavg,
                                         b.sharing_exec.volume_ratio, b.best_mmax, b.best_mavg,
                                         b.best_ratio, better, c->mmax, c->mavg,
                                         c->volume_ratio};
                        for (int x = 0; x < C_N; x++)
                            cg[nK][o][x] += log(v[x]);
                        cmat[nK][o]++;
                        cwin[nK][o] += c->mmax < better;
                        ctie[nK][o] += c->mmax == better;
                        ceq[nK][o] += eq->n && eq->mmax < b.best_mmax;
                    } else {
                        cmiss[nK][o]++;
                    }
                }
                if (sharing && b.sh.initial_mmax > 0) {
                    double v[G_N] = {b.sh.initial_mavg, b.sh.phase1_mavg, b.sh.phase2_mavg,
                                     (double)b.sh.initial_mmax, (double)b.sh.phase1_mmax,
                                     (double)b.sh.phase2_mmax, b.sh.volume_ratio,
                                     b.best_mmax, b.best_mavg};
                    for (int c = 0; c < G_VPTMAX; c++)
                        g[nK][c] += log(v[c]);
                    if (b.found)
                        g[nK][G_VPTMAX] += log(v[G_VPTMAX]), g[nK][G_VPTAVG] += log(v[G_VPTAVG]),
                            gvpt[nK]++;
                    ovh[nK] += (double)b.sh.overhead / K;
                    gmat[nK]++;
                    printf("table K=%d %-22s avg %8.2f %8.2f %8.2f  max %5lld %5lld %5lld  "
                           "overhead %6.2f  volume %.3f  vpt n=%d max %d avg %.2f\n",
                           K, name, v[0], v[1], v[2], b.sh.initial_mmax, b.sh.phase1_mmax,
                           b.sh.phase2_mmax, (double)b.sh.overhead / K, v[G_VOL], b.found,
                           b.best_mmax, b.best_mavg);
                }
                if (b.found)
                    log_cut[nK] += log(b.mmax_cut), nmat[nK]++;
            }
            free(klist);
            mm_free(&mat);
        }
        for (int i = 0; i < nK; i++)
            if (nmat[i] > 1)
                printf("geomean K=%d matrices=%d mmax_cut=%.1f (best n per matrix, volume <= 3x "
                       "direct)\n",
                       Kof[i], nmat[i], exp(log_cut[i] / nmat[i]));
        for (int i = 0; sharing && i < nK; i++)
            if (gmat[i] > 0) {
                double m = gmat[i];
                printf("# table 6.3 style, K=%d, %d matrices, geometric means (overhead: "
                       "arithmetic mean of the per-matrix means)\n",
                       Kof[i], gmat[i]);
                printf("geomean K=%d sharing        avg initial %.1f phase1 %.1f phase2 %.1f  "
                       "max initial %.1f phase1 %.1f phase2 %.1f  cut %.0f%%  overhead %.2f  "
                       "volume %.3f\n",
                       Kof[i], exp(g[i][G_AVG0] / m), exp(g[i][G_AVG1] / m),
                       exp(g[i][G_AVG2] / m), exp(g[i][G_MAX0] / m), exp(g[i][G_MAX1] / m),
                       exp(g[i][G_MAX2] / m),
                       100.0 * (1 - exp((g[i][G_MAX2] - g[i][G_MAX0]) / m)), ovh[i] / m,
                       exp(g[i][G_VOL] / m));
                if (gvpt[i] > 0)
                    printf("geomean K=%d vpt_best       avg %.1f  max %.1f  (%d matrices; best n "
                           "within 3x volume)\n",
                           Kof[i], exp(g[i][G_VPTAVG] / gvpt[i]), exp(g[i][G_VPTMAX] / gvpt[i]),
                           gvpt[i]);
            }
        for (int i = 0; combine && i < nK; i++)
            for (int o = 0; o < 2; o++) {
                const char *on = o ? "vpt_share" : "share_vpt";
                double m = cmat[i][o], *c = cg[i][o];
                if (cmat[i][o] == 0)
                    continue;
                printf("# %s, K=%d: %d matrices (%d without an n >= 2 within 3x volume left out), "
                       "geometric means of max / avg messages per process and volume ratio; "
                       "sharing as executed\n",
                       on, Kof[i], cmat[i][o], cmiss[i][o]);
                printf("geomean K=%d %s: sharing max %.1f avg %.1f vol %.3f | vpt_best max %.1f "
                       "avg %.1f vol %.3f | better max %.1f | %s max %.1f avg %.1f vol %.3f | "
                       "fewer than better on %d, equal on %d; fewer than vpt_best within its "
                       "volume on %d\n",
                       Kof[i], on, exp(c[C_SH] / m), exp(c[C_SHAVG] / m), exp(c[C_SHVOL] / m),
                       exp(c[C_V] / m), exp(c[C_VAVG] / m), exp(c[C_VVOL] / m),
                       exp(c[C_BETTER] / m), on, exp(c[C_O] / m), exp(c[C_OAVG] / m),
                       exp(c[C_OVOL] / m), cwin[i][o], ctie[i][o], ceq[i][o]);
            }
        free(mlist);
    }
    return 0;
}
