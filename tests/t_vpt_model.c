/* The store-and-forward model of a VPT exchange (bench/vptmodel.c) against
 * independent facts:
 *   - the closed forms of the paper's section 4 for the all-to-all pattern
 *     (every process sends s bytes to every other): every process sends
 *     exactly sum(k_d - 1) messages, and the volume is exactly
 *     s K sum_d (K - K/k_d), i.e. sum_l (k-1)^l C(n,l) l / (K-1) times
 *     direct for equal sizes (K = 256: 1.88 for T_2, 3.01 for T_4, 4.02 for
 *     T_8); for many K and n, non-square dims and dims of size 1;
 *   - a small pattern worked out by hand (every count and byte of it);
 *   - random patterns (repeated destinations, self sends, empty sends)
 *     routed submessage by submessage with the library's hop function,
 *     every link recorded in a K x K table: all per-process, per-stage
 *     figures must agree;
 *   - bad input gives MPI_ERR_ARG.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"
#include "vptmodel.h"

/* ---- all-to-all, generated one source at a time ------------------------ */
typedef struct {
    int K;
    long long s;
    int *dest;
    long long *bytes;
} alltoall_gen;

static int alltoall_source(void *ctx, int src, iso_vpt_sends *out)
{
    alltoall_gen *a = ctx;
    (void)src;
    out->n = a->K; /* the send to itself is in the list: the model must skip it */
    out->dest = a->dest;
    out->bytes = a->bytes;
    return MPI_SUCCESS;
}

static long long binomial(int n, int l)
{
    long long c = 1;
    for (int i = 1; i <= l; i++)
        c = c * (n - l + i) / i;
    return c;
}

/* The model of all-to-all on dims (n entries), s bytes per message. */
static int run_alltoall(int K, int n, const int dims[], long long s, iso_vpt_model *m)
{
    alltoall_gen a = {K, s, malloc(sizeof(int) * (size_t)K), malloc(sizeof(long long) * (size_t)K)};
    int rc;
    for (int t = 0; t < K; t++)
        a.dest[t] = t, a.bytes[t] = s;
    rc = iso__vpt_model_run(K, n, dims, 0, alltoall_source, &a, m);
    free(a.dest), free(a.bytes);
    return rc;
}

static void check_alltoall(int K, int n, const int dims[], long long s)
{
    iso_vpt_model m;
    long long sumk = 0, vol = 0;
    char shape[128];
    int len = 0;
    for (int d = 0; d < n; d++) {
        sumk += dims[d] - 1;
        vol += K - K / dims[d]; /* destinations that differ in coordinate d */
        len += snprintf(shape + len, sizeof shape - (size_t)len, "%s%d", d ? "," : "", dims[d]);
    }
    CHECK_EQ_INT(run_alltoall(K, n, dims, s, &m), MPI_SUCCESS, "alltoall K=%d (%s)", K, shape);
    if (m.msgs == NULL)
        return;
    CHECK_EQ_INT(m.mmax, sumk, "alltoall K=%d (%s): mmax", K, shape);
    CHECK(m.mavg == (double)sumk, "alltoall K=%d (%s): mavg %g, expected %lld", K, shape, m.mavg,
          sumk);
    CHECK_EQ_INT(m.direct_volume, s * K * (K - 1), "alltoall K=%d (%s): direct volume", K, shape);
    CHECK_EQ_INT(m.volume, s * K * vol, "alltoall K=%d (%s): volume", K, shape);
    /* every process alike, stage by stage: k_d - 1 messages, s K (k_d-1)/k_d bytes */
    for (int p = 0; p < K; p++)
        for (int d = 0; d < n; d++) {
            CHECK_EQ_INT(m.msgs[p * n + d], dims[d] - 1, "alltoall K=%d (%s) p=%d d=%d msgs", K,
                         shape, p, d);
            CHECK_EQ_INT(m.bytes_sent[p * n + d], s * (K - K / dims[d]),
                         "alltoall K=%d (%s) p=%d d=%d bytes", K, shape, p, d);
        }
    iso__vpt_model_free(&m);
}

static void test_closed_forms(void)
{
    static const struct {
        int K, n, dims[16];
    } shapes[] = {
        {256, 1, {256}},
        {256, 2, {16, 16}},
        {256, 4, {4, 4, 4, 4}},
        {256, 8, {2, 2, 2, 2, 2, 2, 2, 2}},
        {256, 3, {8, 8, 4}},
        {256, 2, {64, 4}},
        {512, 3, {8, 8, 8}},
        {512, 9, {2, 2, 2, 2, 2, 2, 2, 2, 2}},
        {24, 3, {4, 3, 2}},
        {60, 3, {3, 5, 4}},
        {7, 1, {7}},
        {12, 4, {3, 1, 2, 2}},
        {1, 1, {1}},
        {4096, 2, {64, 64}},
        {4096, 12, {2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2, 2}},
    };
    /* the paper's numbers, from the model, to two decimals */
    static const struct {
        int n, k;
        double ratio;
    } paper[] = {{2, 16, 1.88}, {4, 4, 3.01}, {8, 2, 4.02}};
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++)
        check_alltoall(shapes[i].K, shapes[i].n, shapes[i].dims, 3);
    for (size_t i = 0; i < sizeof paper / sizeof paper[0]; i++) {
        int dims[16], n = paper[i].n, k = paper[i].k, K = 256;
        long long sum = 0;
        iso_vpt_model m;
        for (int d = 0; d < n; d++)
            dims[d] = k;
        for (int l = 1; l <= n; l++) { /* sum_l (k-1)^l C(n,l) l */
            long long pw = 1;
            for (int j = 0; j < l; j++)
                pw *= k - 1;
            sum += pw * binomial(n, l) * l;
        }
        CHECK_EQ_INT(run_alltoall(K, n, dims, 8, &m), MPI_SUCCESS, "T_%d", n);
        if (m.msgs == NULL)
            continue;
        CHECK_EQ_INT(m.volume * (K - 1), m.direct_volume * sum, "T_%d: volume / direct", n);
        CHECK(fabs(m.volume_ratio - paper[i].ratio) < 0.005, "T_%d: ratio %.4f, paper %.2f", n,
              m.volume_ratio, paper[i].ratio);
        CHECK_EQ_INT(m.mmax, n * (k - 1), "T_%d: mmax", n);
        iso__vpt_model_free(&m);
    }
    tap_result(MPI_COMM_WORLD, "closed forms for all-to-all: mmax = sum(k_d-1), volume ratio "
                               "(K=256: 1.88, 3.01, 4.02), many K and dims");
}

/* ---- a pattern worked out by hand ------------------------------------- */
/* T_2(2,2): rank = 2 c0 + c1, so 0=(0,0) 1=(0,1) 2=(1,0) 3=(1,1); header 4.
 *   0->3 10 B: stage 0 0->2 (14), stage 1 2->3 (forwarded by 2)
 *   0->1  5 B: stage 1 0->1 (9)
 *   1->2  7 B: stage 0 1->3 (11), stage 1 3->2 (forwarded by 3)
 *   2->3  3 B: stage 1 2->3 (7), in one message with 0->3's: 21 B
 *   3->0  0 B: stage 0 3->1 (4), stage 1 1->0 (forwarded by 1)
 *   1->1 100 B: to itself, nothing
 * Process 0's list is not sorted by destination. */
static void test_by_hand(void)
{
    static const long long ptr[] = {0, 2, 4, 5, 6};
    static const int dest[] = {3, 1, 2, 1, 3, 0};
    static const long long bytes[] = {10, 5, 7, 100, 3, 0};
    static const int msgs[4][2] = {{1, 1}, {1, 1}, {0, 1}, {1, 1}};
    static const int msgs_recv[4][2] = {{0, 1}, {1, 1}, {1, 1}, {1, 1}};
    static const long long sent[4][2] = {{14, 9}, {11, 4}, {0, 21}, {4, 11}};
    static const long long fwd[4][2] = {{0, 0}, {0, 4}, {0, 14}, {0, 11}};
    static const long long recv[4][2] = {{0, 4}, {4, 9}, {14, 11}, {11, 21}};
    int dims[2] = {2, 2};
    iso_vpt_model m;
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, dims, 4, ptr, dest, bytes, &m), MPI_SUCCESS, "by hand");
    if (m.msgs) {
        for (int p = 0; p < 4; p++)
            for (int d = 0; d < 2; d++) {
                CHECK_EQ_INT(m.msgs[p * 2 + d], msgs[p][d], "p%d stage %d msgs", p, d);
                CHECK_EQ_INT(m.msgs_recv[p * 2 + d], msgs_recv[p][d], "p%d stage %d recvd", p, d);
                CHECK_EQ_INT(m.bytes_sent[p * 2 + d], sent[p][d], "p%d stage %d sent", p, d);
                CHECK_EQ_INT(m.bytes_fwd[p * 2 + d], fwd[p][d], "p%d stage %d fwd", p, d);
                CHECK_EQ_INT(m.bytes_recv[p * 2 + d], recv[p][d], "p%d stage %d recv", p, d);
            }
        CHECK_EQ_INT(m.mmax, 2, "mmax");
        CHECK(m.mavg == 1.75, "mavg %g", m.mavg);
        CHECK_EQ_INT(m.volume, 74, "volume");
        CHECK(m.vavg == 18.5, "vavg %g", m.vavg);
        CHECK_EQ_INT(m.direct_volume, 25, "direct volume");
        CHECK(fabs(m.volume_ratio - 74.0 / 25) < 1e-12, "ratio %g", m.volume_ratio);
        CHECK_EQ_INT(m.buffer_max, 32, "buffer max");
        iso__vpt_model_free(&m);
    }
    /* n = 1 (direct) on the same pattern: one message per distinct pair */
    dims[0] = 4;
    CHECK_EQ_INT(iso__vpt_model_csr(4, 1, dims, 4, ptr, dest, bytes, &m), MPI_SUCCESS, "direct");
    if (m.msgs) {
        CHECK_EQ_INT(m.msgs[0] + m.msgs[1] + m.msgs[2] + m.msgs[3], 5, "direct: messages");
        CHECK_EQ_INT(m.mmax, 2, "direct: mmax");
        CHECK_EQ_INT(m.volume, 25 + 5 * 4, "direct: volume with headers");
        iso__vpt_model_free(&m);
    }
    tap_result(MPI_COMM_WORLD, "a pattern worked out by hand on T_2(2,2) and T_1(4), header 4");
}

/* ---- random patterns against submessage-by-submessage routing ---------- */
static unsigned rnd(unsigned *s)
{
    *s = *s * 1103515245u + 12345u;
    return (*s >> 16) & 0x7fff;
}

static void check_random(int K, int n, const int dims[], long long header, unsigned seed)
{
    long long *ptr = malloc(sizeof(long long) * (size_t)(K + 1)), nsub = 0, direct = 0;
    int *dest, *link = calloc((size_t)n * K * K, sizeof(int));
    long long *bytes, *sent = calloc((size_t)K * n, sizeof(long long));
    long long *fwd = calloc((size_t)K * n, sizeof(long long));
    long long *recv = calloc((size_t)K * n, sizeof(long long));
    iso_vpt_model m;
    ptr[0] = 0;
    for (int p = 0; p < K; p++) /* 0..2K sends: a few processes send many */
        ptr[p + 1] = ptr[p] + (rnd(&seed) % 8 == 0 ? rnd(&seed) % (2 * K + 1) : rnd(&seed) % 4);
    nsub = ptr[K];
    dest = malloc(sizeof(int) * (size_t)(nsub + 1));
    bytes = malloc(sizeof(long long) * (size_t)(nsub + 1));
    for (int p = 0; p < K; p++)
        for (long long i = ptr[p]; i < ptr[p + 1]; i++) {
            int at = p;
            unsigned r = rnd(&seed);
            dest[i] = r % 5 == 0 ? p : (int)(rnd(&seed) % (unsigned)K); /* self, repeats */
            bytes[i] = r % 7 == 0 ? 0 : rnd(&seed) % 100;
            if (dest[i] == p)
                continue;
            direct += bytes[i];
            for (int d = 0; d < n; d++) { /* the library's own hop, one by one */
                int next = iso__vpt_hop(n, dims, d, at, dest[i]);
                if (next == at)
                    continue;
                link[((size_t)d * K + at) * K + next] = 1;
                sent[at * n + d] += bytes[i] + header;
                recv[next * n + d] += bytes[i] + header;
                if (at != p)
                    fwd[at * n + d] += bytes[i] + header;
                at = next;
            }
            CHECK_EQ_INT(at, dest[i], "K=%d: hops end at the destination", K);
        }
    CHECK_EQ_INT(iso__vpt_model_csr(K, n, dims, header, ptr, dest, bytes, &m), MPI_SUCCESS,
                 "random K=%d n=%d", K, n);
    if (m.msgs) {
        long long volume = 0;
        for (int p = 0; p < K; p++)
            for (int d = 0; d < n; d++) {
                int out = 0, in = 0;
                for (int q = 0; q < K; q++) {
                    out += link[((size_t)d * K + p) * K + q];
                    in += link[((size_t)d * K + q) * K + p];
                }
                CHECK_EQ_INT(m.msgs[p * n + d], out, "K=%d n=%d p=%d d=%d msgs", K, n, p, d);
                CHECK_EQ_INT(m.msgs_recv[p * n + d], in, "K=%d n=%d p=%d d=%d recvd", K, n, p, d);
                CHECK_EQ_INT(m.bytes_sent[p * n + d], sent[p * n + d], "K=%d n=%d p=%d d=%d sent",
                             K, n, p, d);
                CHECK_EQ_INT(m.bytes_fwd[p * n + d], fwd[p * n + d], "K=%d n=%d p=%d d=%d fwd",
                             K, n, p, d);
                CHECK_EQ_INT(m.bytes_recv[p * n + d], recv[p * n + d], "K=%d n=%d p=%d d=%d recv",
                             K, n, p, d);
                volume += sent[p * n + d];
            }
        CHECK_EQ_INT(m.volume, volume, "K=%d n=%d volume", K, n);
        CHECK_EQ_INT(m.direct_volume, direct, "K=%d n=%d direct volume", K, n);
        iso__vpt_model_free(&m);
    }
    free(ptr), free(dest), free(bytes), free(link), free(sent), free(fwd), free(recv);
}

static void test_random(void)
{
    unsigned seed = 2019;
    for (int K = 1; K <= 40; K++)
        for (int n = 1; n <= 4; n++) {
            int dims[ISO_VPT_MAXDIMS];
            if (iso__vpt_dims_balanced(K, n, dims) != MPI_SUCCESS)
                continue;
            check_random(K, n, dims, K % 3 == 0 ? 0 : 16, seed++);
        }
    {
        static const int explicit_dims[][4] = {{2, 3, 4, 1}, {1, 6, 1, 4}, {3, 8, 1, 1}};
        for (int i = 0; i < 3; i++)
            check_random(24, 4, explicit_dims[i], 8, seed++);
        check_random(64, 6, (const int[]){2, 2, 2, 2, 2, 2}, 12, seed++);
    }
    tap_result(MPI_COMM_WORLD, "random patterns (repeats, self, empty sends), K = 1..40, n = 1..4, "
                               "explicit dims with sizes 1: as routed hop by hop");
}

static int failing_source(void *ctx, int src, iso_vpt_sends *out)
{
    (void)ctx;
    out->n = 0;
    return src == 2 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

static void test_bad_input(void)
{
    static const long long ptr[] = {0, 1, 1, 1, 1};
    int bad_dest[] = {4}, good_dest[] = {1}, dims[2] = {2, 2}, wrong[2] = {2, 3}, zero[2] = {0, 4};
    long long b[] = {1}, neg[] = {-1};
    iso_vpt_model m;
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, wrong, 0, ptr, good_dest, b, &m), MPI_ERR_ARG,
                 "dims product 6 for K 4");
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, zero, 0, ptr, good_dest, b, &m), MPI_ERR_ARG, "size 0");
    CHECK_EQ_INT(iso__vpt_model_csr(4, 0, dims, 0, ptr, good_dest, b, &m), MPI_ERR_ARG, "n = 0");
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, dims, -1, ptr, good_dest, b, &m), MPI_ERR_ARG,
                 "negative header");
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, dims, 0, ptr, bad_dest, b, &m), MPI_ERR_ARG,
                 "destination 4 of 4");
    CHECK(m.msgs == NULL, "arrays freed after an error");
    CHECK_EQ_INT(iso__vpt_model_csr(4, 2, dims, 0, ptr, good_dest, neg, &m), MPI_ERR_ARG,
                 "negative bytes");
    CHECK_EQ_INT(iso__vpt_model_run(4, 2, dims, 0, failing_source, NULL, &m), MPI_ERR_OTHER,
                 "a generator's error is passed on");
    CHECK(m.msgs == NULL, "arrays freed after a generator's error");
    iso__vpt_model_free(&m); /* harmless twice */
    tap_result(MPI_COMM_WORLD, "bad input: MPI_ERR_ARG, generator errors passed on, nothing leaks");
}

static void test_helpers(void)
{
    char s[8];
    CHECK_EQ_INT(iso__vpt_model_max_n(256), 8, "max n of 256");
    CHECK_EQ_INT(iso__vpt_model_max_n(24), 4, "max n of 24 = 2*2*2*3");
    CHECK_EQ_INT(iso__vpt_model_max_n(7), 1, "max n of a prime");
    CHECK_EQ_INT(iso__vpt_model_max_n(1), 1, "max n of 1");
    CHECK_EQ_INT(iso__vpt_model_max_n(1 << 20), ISO_VPT_MAXDIMS, "max n capped");
    iso__vpt_model_dims_string(3, (const int[]){16, 4, 2}, s, sizeof s);
    CHECK(!strcmp(s, "16,4,2"), "dims string \"%s\"", s);
    iso__vpt_model_dims_string(4, (const int[]){16, 16, 16, 16}, s, sizeof s);
    CHECK(strlen(s) == sizeof s - 1 && !strncmp(s, "16,16,1", 7), "truncated: \"%s\"", s);
    tap_result(MPI_COMM_WORLD, "helpers: the n worth modelling, dims strings");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    test_helpers();
    test_closed_forms();
    test_by_hand();
    test_random();
    test_bad_input();
    MPI_Finalize();
    return 0;
}
