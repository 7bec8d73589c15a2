/* The store-and-forward model of one exchange over a VPT (vptmodel.h;
 * DESIGN.md, "VPT model").
 *
 * Why it is cheap.  A submessage s -> t that hops at stage d (s and t differ
 * in coordinate d) is then held by P, which has t's coordinates before d and
 * s's from d on, and goes to P's neighbor with coordinate d = t^d.  So for a
 * fixed source, its stage-d traffic depends only on t's coordinates 0..d:
 * the prefix t / stride_d.  Ranks are row-major, so sends sorted by
 * destination group into runs of equal prefix, and the groups of level d are
 * merged runs of those of level d+1.  Each group adds to one link, whatever
 * the number of submessages in it: all-to-all costs K + K/k + ... <= 2K
 * group steps per source instead of K n.  A link's first submessage makes
 * it a message (one bit per possible link, K k_d per stage). */
#include "vptmodel.h"
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A run of submessages of one source whose destinations share a prefix. */
typedef struct {
    int pre;         /* destination / stride of the level */
    int nsub;        /* submessages in the run */
    long long bytes; /* their payload bytes */
} group;

typedef struct {
    int dest;
    long long bytes;
} send_pair;

static int by_dest(const void *a, const void *b)
{
    int x = ((const send_pair *)a)->dest, y = ((const send_pair *)b)->dest;
    return (x > y) - (x < y);
}

void iso__vpt_model_free(iso_vpt_model *m)
{
    free(m->msgs);
    free(m->msgs_recv);
    free(m->bytes_sent);
    free(m->bytes_fwd);
    free(m->bytes_recv);
    m->msgs = m->msgs_recv = NULL;
    m->bytes_sent = m->bytes_fwd = m->bytes_recv = NULL;
}

/* The totals of model.h from the per-process, per-stage arrays. */
static void aggregate(iso_vpt_model *m)
{
    int K = m->K, n = m->n;
    long long msgs_total = 0;
    m->mmax = 0;
    m->volume = 0;
    m->buffer_max = 0;
    for (int p = 0; p < K; p++) {
        int mine = 0;
        for (int d = 0; d < n; d++) {
            long long buf = m->bytes_sent[p * n + d] + m->bytes_recv[p * n + d];
            mine += m->msgs[p * n + d];
            m->volume += m->bytes_sent[p * n + d];
            if (buf > m->buffer_max)
                m->buffer_max = buf;
        }
        msgs_total += mine;
        if (mine > m->mmax)
            m->mmax = mine;
    }
    m->mavg = (double)msgs_total / K;
    m->vavg = (double)m->volume / K;
    m->volume_ratio = m->direct_volume ? (double)m->volume / (double)m->direct_volume : 1.0;
}

/* One source's sends, grouped level by level from the last dimension to the
 * first, each level's groups added to the links of its stage.  g and h are
 * scratch of nsends groups each; used is the link bitmap. */
static void route_source(iso_vpt_model *m, int s, const send_pair *sp, int nsends, group *g,
                         group *h, uint8_t *used, const size_t link_base[])
{
    int n = m->n, ng = 0, stride = 1;
    for (int i = 0; i < nsends; i++) { /* level n-1: equal destinations */
        if (ng > 0 && g[ng - 1].pre == sp[i].dest) {
            g[ng - 1].nsub++;
            g[ng - 1].bytes += sp[i].bytes;
        } else {
            g[ng++] = (group){sp[i].dest, 1, sp[i].bytes};
        }
    }
    for (int d = n - 1; d >= 0; d--) {
        int k = m->dims[d], span = stride * k, sd = s / stride % k;
        if (d < n - 1) { /* merge the runs of level d+1 into prefixes of level d */
            int k_next = m->dims[d + 1], nh = 0;
            for (int i = 0; i < ng; i++) {
                int pre = g[i].pre / k_next;
                if (nh > 0 && h[nh - 1].pre == pre) {
                    h[nh - 1].nsub += g[i].nsub;
                    h[nh - 1].bytes += g[i].bytes;
                } else {
                    h[nh++] = (group){pre, g[i].nsub, g[i].bytes};
                }
            }
            memcpy(g, h, sizeof *g * (size_t)nh);
            ng = nh;
        }
        for (int i = 0; i < ng && k > 1; i++) {
            int x = g[i].pre % k, P, Q;
            long long b;
            size_t bit;
            if (x == sd)
                continue; /* already right in coordinate d: no hop at this stage */
            P = g[i].pre / k * span + s % span;
            Q = P + (x - sd) * stride;
            b = g[i].bytes + m->header * g[i].nsub;
            m->bytes_sent[(size_t)P * n + d] += b;
            m->bytes_recv[(size_t)Q * n + d] += b;
            if (P != s)
                m->bytes_fwd[(size_t)P * n + d] += b;
            bit = link_base[d] + (size_t)P * (size_t)k + (size_t)x;
            if (!(used[bit >> 3] & (1u << (bit & 7)))) {
                used[bit >> 3] |= (uint8_t)(1u << (bit & 7));
                m->msgs[(size_t)P * n + d]++;
                m->msgs_recv[(size_t)Q * n + d]++;
            }
        }
        stride = span;
    }
}

int iso__vpt_model_run(int K, int n, const int dims[], long long header, iso_vpt_sends_fn sends,
                       void *ctx, iso_vpt_model *m)
{
    int rc = MPI_SUCCESS, cap = 0;
    long long product = 1;
    size_t link_base[ISO_VPT_MAXDIMS + 1], nkn;
    uint8_t *used = NULL;
    send_pair *sp = NULL;
    group *g = NULL, *h = NULL;

    memset(m, 0, sizeof *m);
    if (K < 1 || n < 1 || n > ISO_VPT_MAXDIMS || !dims || header < 0 || !sends)
        return MPI_ERR_ARG;
    for (int d = 0; d < n; d++) {
        if (dims[d] < 1)
            return MPI_ERR_ARG;
        product *= dims[d];
        if (product > K)
            return MPI_ERR_ARG;
    }
    if (product != K)
        return MPI_ERR_ARG;
    m->K = K, m->n = n, m->header = header;
    memcpy(m->dims, dims, sizeof *dims * (size_t)n);
    link_base[0] = 0;
    for (int d = 0; d < n; d++)
        link_base[d + 1] = link_base[d] + (size_t)K * (size_t)dims[d];
    nkn = (size_t)K * (size_t)n;
    m->msgs = calloc(nkn, sizeof *m->msgs);
    m->msgs_recv = calloc(nkn, sizeof *m->msgs_recv);
    m->bytes_sent = calloc(nkn, sizeof *m->bytes_sent);
    m->bytes_fwd = calloc(nkn, sizeof *m->bytes_fwd);
    m->bytes_recv = calloc(nkn, sizeof *m->bytes_recv);
    used = calloc(link_base[n] / 8 + 1, 1);
    if (!m->msgs || !m->msgs_recv || !m->bytes_sent || !m->bytes_fwd || !m->bytes_recv || !used)
        goto no_mem;

    for (int s = 0; s < K; s++) {
        iso_vpt_sends in = {0, NULL, NULL};
        int ns = 0, sorted = 1;
        rc = sends(ctx, s, &in);
        if (rc != MPI_SUCCESS)
            goto fn_fail;
        if (in.n < 0 || (in.n > 0 && (!in.dest || !in.bytes))) {
            rc = MPI_ERR_ARG;
            goto fn_fail;
        }
        if (in.n > cap) {
            free(sp), free(g), free(h);
            cap = in.n;
            sp = malloc(sizeof *sp * (size_t)cap);
            g = malloc(sizeof *g * (size_t)cap);
            h = malloc(sizeof *h * (size_t)cap);
            if (!sp || !g || !h)
                goto no_mem;
        }
        for (int i = 0; i < in.n; i++) {
            if (in.dest[i] < 0 || in.dest[i] >= K || in.bytes[i] < 0) {
                rc = MPI_ERR_ARG;
                goto fn_fail;
            }
            if (in.dest[i] == s)
                continue; /* a local copy: neither a message nor volume */
            if (ns > 0 && sp[ns - 1].dest > in.dest[i])
                sorted = 0;
            sp[ns++] = (send_pair){in.dest[i], in.bytes[i]};
            m->direct_volume += in.bytes[i];
        }
        if (ns == 0)
            continue;
        if (!sorted)
            qsort(sp, (size_t)ns, sizeof *sp, by_dest);
        route_source(m, s, sp, ns, g, h, used, link_base);
    }
    aggregate(m);

fn_exit:
    free(used), free(sp), free(g), free(h);
    return rc;
no_mem:
    rc = MPI_ERR_NO_MEM;
fn_fail:
    iso__vpt_model_free(m);
    goto fn_exit;
}

typedef struct {
    const long long *ptr;
    const int *dest;
    const long long *bytes;
} csr_sends;

static int csr_source(void *ctx, int src, iso_vpt_sends *out)
{
    const csr_sends *c = ctx;
    long long lo = c->ptr[src], hi = c->ptr[src + 1];
    if (lo < 0 || hi < lo || hi - lo > INT32_MAX)
        return MPI_ERR_ARG;
    out->n = (int)(hi - lo);
    out->dest = c->dest + lo;
    out->bytes = c->bytes + lo;
    return MPI_SUCCESS;
}

int iso__vpt_model_csr(int K, int n, const int dims[], long long header, const long long ptr[],
                       const int dest[], const long long bytes[], iso_vpt_model *m)
{
    csr_sends c = {ptr, dest, bytes};
    if (!ptr) {
        memset(m, 0, sizeof *m);
        return MPI_ERR_ARG;
    }
    return iso__vpt_model_run(K, n, dims, header, csr_source, &c, m);
}

int iso__vpt_model_max_n(int K)
{
    int c = 0;
    for (int f = 2; K > 1; f++)
        while (K % f == 0)
            K /= f, c++;
    return c < 1 ? 1 : c > ISO_VPT_MAXDIMS ? ISO_VPT_MAXDIMS : c;
}

void iso__vpt_model_dims_string(int n, const int dims[], char *s, size_t len)
{
    size_t at = 0;
    if (len == 0)
        return;
    s[0] = '\0';
    for (int d = 0; d < n && at < len; d++)
        at += (size_t)snprintf(s + at, len - at, "%s%d", d ? "," : "", dims[d]);
}
