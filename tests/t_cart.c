/* Relative coordinates and neighborhood queries:
 *   Cart_relative_rank / _coord / _shift against a hand computation
 *   (row-major ranks, periodic wrap, MPI_PROC_NULL off a non-periodic mesh;
 *   dimensions of size 1 and 2, offsets that wrap many times, negative
 *   offsets);
 *   Iso_neighborhood_count / _get / _graph_get against oracle_neighbors
 *   (PROC_NULL included / excluded, max_s smaller than s, nothing written
 *   past max_s);
 *   Cart_neighborhood_count / _get / _graph_get against MPI_Cart_shift;
 *   MPI_Dist_graph_create_adjacent from the Iso_neighborhood_graph_get lists:
 *   its neighbor lists equal the library's, and one exchange over it with
 *   plain Isend/Irecv equals the Sendrecv oracle.
 * Nothing here depends on the collective algorithm.
 *
 * NPROCS: 1 2 3 4 6 8 12 16
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define UNSET (-77) /* entry not written by a query */

enum { T_RANK, T_SHIFT, T_COORD, T_COUNT, T_GET, T_GRAPH, T_CART, T_DISTNB, T_DISTX, NT };
static const char *const test_name[NT] = {
    "Cart_relative_rank equals the hand computation",
    "Cart_relative_shift equals the hand computation",
    "Cart_relative_coord equals the hand computation, round trip through Cart_relative_rank",
    "Iso_neighborhood_count: s, indegree, outdegree",
    "Iso_neighborhood_get: max_s = s, > s, < s, 0 (PROC_NULL included, nothing past max_s)",
    "Iso_neighborhood_graph_get: PROC_NULL excluded, max_s < degree, nothing past max_s",
    "Cart_neighborhood_count/_get/_graph_get equal MPI_Cart_shift order",
    "MPI_Dist_graph_create_adjacent from Iso_neighborhood_graph_get: neighbors equal the lists",
    "exchange over the dist graph with Isend/Irecv equals the Sendrecv oracle",
};
static long errs[NT];
static int runs[NT];
static long before;

static void begin(void)
{
    before = tap_errors;
}
static void end(int t)
{
    errs[t] += tap_errors - before;
    tap_errors = before;
    runs[t]++;
}

typedef struct {
    MPI_Comm cart;
    int d, p, me, dims[ORACLE_MAXD], periods[ORACLE_MAXD], mc[ORACLE_MAXD];
    char name[64];
} geo_t;

/* Row-major rank <-> coordinates, by hand. */
static void coords_of(const geo_t *g, int rank, int *c)
{
    for (int j = g->d - 1; j >= 0; j--) {
        c[j] = rank % g->dims[j];
        rank /= g->dims[j];
    }
}

static int rank_of(const geo_t *g, const int *c)
{
    int r = 0;
    for (int j = 0; j < g->d; j++)
        r = r * g->dims[j] + c[j];
    return r;
}

/* caller + sign * rel, or MPI_PROC_NULL off the mesh */
static int hand_shift(const geo_t *g, const int *rel, int sign)
{
    int c[ORACLE_MAXD];
    for (int j = 0; j < g->d; j++) {
        long x = (long)g->mc[j] + sign * (long)rel[j], n = g->dims[j];
        if (g->periods[j])
            x = ((x % n) + n) % n;
        else if (x < 0 || x >= n)
            return MPI_PROC_NULL;
        c[j] = (int)x;
    }
    return rank_of(g, c);
}

/* coordinates of q minus the caller's; periodic: smallest absolute value,
 * ties positive */
static void hand_coord(const geo_t *g, int q, int *rel)
{
    int c[ORACLE_MAXD];
    coords_of(g, q, c);
    for (int j = 0; j < g->d; j++) {
        int x = c[j] - g->mc[j], n = g->dims[j];
        if (g->periods[j]) {
            x = ((x % n) + n) % n;
            if (2 * x > n)
                x -= n;
        }
        rel[j] = x;
    }
}

static void vec_str(const int *v, int d, char *buf, size_t len)
{
    size_t k = 0;
    for (int j = 0; j < d && k < len; j++)
        k += (size_t)snprintf(buf + k, len - k, "%s%d", j ? "," : "(", v[j]);
    if (k < len)
        snprintf(buf + k, len - k, ")");
}

static void check_relative_vector(const geo_t *g, const int *rel)
{
    int r = UNSET, src = UNSET, dst = UNSET, rc;
    int er = hand_shift(g, rel, 1), es = hand_shift(g, rel, -1);
    char v[160];
    vec_str(rel, g->d, v, sizeof v);
    begin();
    rc = Cart_relative_rank(g->cart, rel, &r);
    CHECK(rc == MPI_SUCCESS && r == er,
          "%s rank %d: Cart_relative_rank%s = %d (rc %d), expected %d", g->name, g->me, v, r, rc,
          er);
    end(T_RANK);
    begin();
    rc = Cart_relative_shift(g->cart, rel, &src, &dst);
    CHECK(rc == MPI_SUCCESS && src == es && dst == er,
          "%s rank %d: Cart_relative_shift%s = source %d target %d (rc %d), expected %d %d",
          g->name, g->me, v, src, dst, rc, es, er);
    end(T_SHIFT);
}

static void check_relative(const geo_t *g)
{
    int rel[ORACLE_MAXD], c[ORACLE_MAXD], R, ok = 1;
    unsigned seed = 12345u + (unsigned)g->d;
    MPI_Cart_coords(g->cart, g->me, g->d, c);
    for (int j = 0; j < g->d; j++)
        ok &= c[j] == g->mc[j];
    CHECK(ok, "test bug: hand coordinates differ from MPI_Cart_coords on %s", g->name);
    /* every vector of a box around 0; in 1-d the box wraps a few times */
    R = g->d == 1 ? 2 * g->dims[0] + 3 : g->d == 2 ? 4 : g->d == 3 ? 2 : 1;
    for (int j = 0; j < g->d; j++)
        rel[j] = -R;
    for (;;) {
        check_relative_vector(g, rel);
        int j = g->d - 1;
        while (j >= 0 && rel[j] == R)
            rel[j--] = -R;
        if (j < 0)
            break;
        rel[j]++;
    }
    /* large offsets along each axis and in all axes at once */
    static const int big[] = {1000000000, 999999999, 1000000007, 123456789, 1 << 30, 65537};
    for (int b = 0; b < (int)(sizeof big / sizeof big[0]); b++)
        for (int sign = -1; sign <= 1; sign += 2) {
            for (int j = 0; j < g->d; j++) {
                memset(rel, 0, sizeof rel);
                rel[j] = sign * big[b];
                check_relative_vector(g, rel);
                rel[j] = sign * (g->dims[j] * (big[b] / 4 / g->dims[j]) + 1);
                check_relative_vector(g, rel);
            }
            for (int j = 0; j < g->d; j++)
                rel[j] = (j % 2 ? -sign : sign) * (big[b] - j);
            check_relative_vector(g, rel);
        }
    for (int k = 0; k < 40; k++) { /* mixed large and small */
        for (int j = 0; j < g->d; j++) {
            int x = (int)oracle_rand(&seed) % 2001 - 1000;
            rel[j] = oracle_rand(&seed) % 2 ? x * 1000000 + (int)(oracle_rand(&seed) % 7) : x % 5;
        }
        check_relative_vector(g, rel);
    }
    /* Cart_relative_coord of every rank, and back */
    for (int q = 0; q < g->p; q++) {
        int got[ORACLE_MAXD], exp[ORACLE_MAXD], rc, back = UNSET, same = 1;
        char v[160], w[160];
        for (int j = 0; j < g->d; j++)
            got[j] = UNSET;
        hand_coord(g, q, exp);
        begin();
        rc = Cart_relative_coord(g->cart, q, got);
        for (int j = 0; j < g->d; j++)
            same &= got[j] == exp[j];
        vec_str(got, g->d, v, sizeof v);
        vec_str(exp, g->d, w, sizeof w);
        CHECK(rc == MPI_SUCCESS && same,
              "%s rank %d: Cart_relative_coord(%d) = %s (rc %d), expected %s", g->name, g->me, q, v,
              rc, w);
        rc = Cart_relative_rank(g->cart, got, &back);
        CHECK(rc == MPI_SUCCESS && back == q,
              "%s rank %d: Cart_relative_rank(Cart_relative_coord(%d)) = %d (rc %d)", g->name,
              g->me, q, back, rc);
        end(T_COORD);
    }
}

/* Fills an int array with UNSET. */
static int *unset_array(int n)
{
    int *a = malloc(sizeof(int) * (size_t)(n + 1));
    for (int k = 0; k < n + 1; k++)
        a[k] = UNSET;
    return a;
}

/* Compares got[0..n) with exp[0..n) and checks got[from..cap) is UNSET. */
static void check_list(const geo_t *g, const char *what, int max_s, const int *got, const int *exp,
                       int n, int from, int cap)
{
    for (int k = 0; k < n; k++)
        CHECK_EQ_INT(got[k], exp[k], "%s rank %d: %s(max_s=%d)[%d]", g->name, g->me, what, max_s,
                     k);
    for (int k = from; k < cap; k++)
        CHECK(got[k] == UNSET, "%s rank %d: %s(max_s=%d) wrote entry %d (= %d) past max_s", g->name,
              g->me, what, max_s, k, got[k]);
}

/* Both PROC_NULL-free lists of the neighborhood; returns their lengths. */
static void filter(const int *a, int n, int *out, int *len)
{
    *len = 0;
    for (int k = 0; k < n; k++)
        if (a[k] != MPI_PROC_NULL)
            out[(*len)++] = a[k];
}

static void dist_graph_check(const geo_t *g, const nbh_t *n, const int *src, const int *dst,
                             const int *gsrc, int indeg, const int *gdst, int outdeg)
{
    MPI_Comm graph;
    int in = -1, out = -1, weighted = -1, bad, anybad, m = 2, s = n->s;
    int *nsrc = unset_array(indeg + 1), *ndst = unset_array(outdeg + 1);
    int *isrc = malloc(sizeof(int) * (size_t)(s + 1)),
        *idst = malloc(sizeof(int) * (size_t)(s + 1));
    /* explicit unit weights: MPI_UNWEIGHTED is a sentinel pointer that
     * GCC's -Wstringop-overread mistakes for a zero-length array */
    int *wts = malloc(sizeof(int) * (size_t)(s + 1)),
        *w2 = malloc(sizeof(int) * (size_t)(2 * s + 2));
    for (int k = 0; k <= s; k++)
        wts[k] = 1;
    begin();
    MPI_Dist_graph_create_adjacent(g->cart, indeg, gsrc, wts, outdeg, gdst, wts, MPI_INFO_NULL, 0,
                                   &graph);
    MPI_Dist_graph_neighbors_count(graph, &in, &out, &weighted);
    CHECK(in == indeg && out == outdeg, "%s rank %d: dist graph degrees %d %d, lists %d %d",
          g->name, g->me, in, out, indeg, outdeg);
    if (in == indeg && out == outdeg) {
        MPI_Dist_graph_neighbors(graph, in, nsrc, w2, out, ndst, w2 + s + 1);
        check_list(g, "MPI_Dist_graph_neighbors sources", in, nsrc, gsrc, in, in, in);
        check_list(g, "MPI_Dist_graph_neighbors destinations", out, ndst, gdst, out, out, out);
    }
    end(T_DISTNB);
    /* Neighborhood index of every graph-list entry (the lists keep the
     * neighborhood order); exchange only if every rank's lists are right,
     * or a wrong list could leave a receive unmatched. */
    int a = 0, b = 0;
    bad = errs[T_GRAPH] != 0;
    for (int i = 0; i < s; i++) {
        if (src[i] != MPI_PROC_NULL) {
            bad |= a >= indeg || gsrc[a] != src[i];
            isrc[a++] = i;
        }
        if (dst[i] != MPI_PROC_NULL) {
            bad |= b >= outdeg || gdst[b] != dst[i];
            idst[b++] = i;
        }
    }
    bad |= a != indeg || b != outdeg;
    MPI_Allreduce(&bad, &anybad, 1, MPI_INT, MPI_LOR, g->cart);
    begin();
    if (anybad) {
        CHECK(!bad, "%s rank %d: graph lists wrong, dist graph exchange skipped", g->name, g->me);
    } else {
        size_t len = (size_t)(s * m + 8) * sizeof(int);
        int *sb = malloc(len), *rb = malloc(len), *ob = malloc(len);
        int *cnt = malloc(sizeof(int) * (size_t)(s + 1));
        MPI_Aint *dsp = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
        MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
        MPI_Request *req = malloc(sizeof(MPI_Request) * (size_t)(indeg + outdeg + 1));
        MPI_Status *st = malloc(sizeof(MPI_Status) * (size_t)(indeg + outdeg + 1));
        for (int i = 0; i < s; i++) {
            for (int k = 0; k < m; k++)
                sb[i * m + k] = g->me * 1000000 + i * 1000 + k;
            cnt[i] = m;
            dsp[i] = (MPI_Aint)(i * m) * (MPI_Aint)sizeof(int);
            ty[i] = MPI_INT;
        }
        memset(rb, 0xA5, len);
        memset(ob, 0xA5, len);
        for (int k = 0; k < indeg; k++)
            MPI_Irecv(rb + isrc[k] * m, m, MPI_INT, gsrc[k], isrc[k], graph, &req[k]);
        for (int k = 0; k < outdeg; k++)
            MPI_Isend(sb + idst[k] * m, m, MPI_INT, gdst[k], idst[k], graph, &req[indeg + k]);
        MPI_Waitall(indeg + outdeg, req, st);
        oracle_alltoallw(sb, cnt, dsp, ty, ob, cnt, dsp, ty, g->cart, n);
        long k = oracle_first_diff(rb, ob, len);
        CHECK(k < 0, "%s rank %d: dist graph exchange differs from the oracle at byte %ld (s=%d)",
              g->name, g->me, k, s);
        free(sb);
        free(rb);
        free(ob);
        free(cnt);
        free(dsp);
        free(ty);
        free(req);
        free(st);
    }
    end(T_DISTX);
    MPI_Comm_free(&graph);
    free(wts);
    free(w2);
    free(nsrc);
    free(ndst);
    free(isrc);
    free(idst);
}

/* iso_verify=false for all but the first neighborhood on each topology:
 * the verification allreduce dominates the cost at 8+ oversubscribed
 * ranks, and these neighborhoods are isomorphic by construction. */
static MPI_Info no_verify;

static void check_iso(const geo_t *g, const nbh_t *n, int with_dist_graph, int verify)
{
    int s = n->s, rc, gs = -1, in = -1, out = -1, ein, eout;
    int *src = malloc(sizeof(int) * (size_t)(s + 1)), *dst = malloc(sizeof(int) * (size_t)(s + 1));
    int *fsrc = malloc(sizeof(int) * (size_t)(s + 1)),
        *fdst = malloc(sizeof(int) * (size_t)(s + 1));
    MPI_Comm iso = MPI_COMM_NULL;
    int dummy[ORACLE_MAXD] = {0};
    oracle_neighbors(g->cart, n, src, dst);
    filter(src, s, fsrc, &ein);
    filter(dst, s, fdst, &eout);
    begin();
    if (verify)
        rc = Iso_neighborhood_create(g->cart, s, s ? n->off : dummy, &iso);
    else
        rc = Iso_neighborhood_create_with_info(g->cart, s, s ? n->off : dummy, no_verify, &iso);
    CHECK(rc == MPI_SUCCESS && iso == g->cart, "%s: Iso_neighborhood_create rc %d", g->name, rc);
    rc = Iso_neighborhood_count(iso, &gs, &in, &out);
    CHECK(rc == MPI_SUCCESS && gs == s && in == ein && out == eout,
          "%s rank %d: Iso_neighborhood_count = s %d in %d out %d (rc %d), expected %d %d %d",
          g->name, g->me, gs, in, out, rc, s, ein, eout);
    end(T_COUNT);

    /* Iso_neighborhood_get */
    int maxs[4] = {s, s + 3, s / 2, 0};
    begin();
    for (int t = 0; t < 4; t++) {
        int ms = maxs[t], cap = s + 8, w = ms < s ? ms : s;
        int *gsrc = unset_array(cap), *gdst = unset_array(cap);
        rc = Iso_neighborhood_get(iso, ms, gsrc, gdst);
        CHECK(rc == MPI_SUCCESS, "%s: Iso_neighborhood_get rc %d", g->name, rc);
        check_list(g, "Iso_neighborhood_get sources", ms, gsrc, src, w, ms, cap);
        check_list(g, "Iso_neighborhood_get destinations", ms, gdst, dst, w, ms, cap);
        free(gsrc);
        free(gdst);
    }
    end(T_GET);

    /* Iso_neighborhood_graph_get */
    int deg = ein > eout ? ein : eout;
    int gmax[4] = {s, deg, deg / 2, 0};
    int *full_src = NULL, *full_dst = NULL;
    begin();
    for (int t = 0; t < 4; t++) {
        int ms = gmax[t], cap = s + 8;
        int *gsrc = unset_array(cap), *gdst = unset_array(cap);
        rc = Iso_neighborhood_graph_get(iso, ms, gsrc, gdst);
        CHECK(rc == MPI_SUCCESS, "%s: Iso_neighborhood_graph_get rc %d", g->name, rc);
        check_list(g, "Iso_neighborhood_graph_get sources", ms, gsrc, fsrc, ms < ein ? ms : ein, ms,
                   cap);
        check_list(g, "Iso_neighborhood_graph_get destinations", ms, gdst, fdst,
                   ms < eout ? ms : eout, ms, cap);
        if (t == 0) {
            full_src = gsrc;
            full_dst = gdst;
        } else {
            free(gsrc);
            free(gdst);
        }
    }
    end(T_GRAPH);
    if (with_dist_graph)
        dist_graph_check(g, n, src, dst, full_src, ein, full_dst, eout);
    free(full_src);
    free(full_dst);
    free(src);
    free(dst);
    free(fsrc);
    free(fdst);
}

/* MPI's own Cartesian neighborhood: for each dimension the MPI_Cart_shift
 * source (-1) then destination (+1), the same list for sources and
 * destinations (the order of MPI's Cartesian neighborhood collectives). */
static void check_cart_nbh(const geo_t *g, int with_dist_graph)
{
    int s = 2 * g->d, list[2 * ORACLE_MAXD], flist[2 * ORACLE_MAXD], deg, gs = -1, in = -1,
        out = -1, rc;
    for (int j = 0; j < g->d; j++)
        MPI_Cart_shift(g->cart, j, 1, &list[2 * j], &list[2 * j + 1]);
    filter(list, s, flist, &deg);
    begin();
    rc = Cart_neighborhood_count(g->cart, &gs, &in, &out);
    CHECK(rc == MPI_SUCCESS && gs == s && in == deg && out == deg,
          "%s rank %d: Cart_neighborhood_count = %d %d %d (rc %d), expected %d %d %d", g->name,
          g->me, gs, in, out, rc, s, deg, deg);
    int maxs[3] = {s, s / 2 + 1, 0};
    for (int t = 0; t < 3; t++) {
        int ms = maxs[t], cap = s + 4, w = ms < s ? ms : s;
        int *a = unset_array(cap), *b = unset_array(cap);
        rc = Cart_neighborhood_get(g->cart, ms, a, b);
        CHECK(rc == MPI_SUCCESS, "%s: Cart_neighborhood_get rc %d", g->name, rc);
        check_list(g, "Cart_neighborhood_get sources", ms, a, list, w, ms, cap);
        check_list(g, "Cart_neighborhood_get destinations", ms, b, list, w, ms, cap);
        for (int k = 0; k < cap; k++)
            a[k] = b[k] = UNSET;
        ms = t == 0 ? s : t == 1 ? deg / 2 : 0;
        w = ms < deg ? ms : deg;
        rc = Cart_neighborhood_graph_get(g->cart, ms, a, b);
        CHECK(rc == MPI_SUCCESS, "%s: Cart_neighborhood_graph_get rc %d", g->name, rc);
        check_list(g, "Cart_neighborhood_graph_get sources", ms, a, flist, w, ms, cap);
        check_list(g, "Cart_neighborhood_graph_get destinations", ms, b, flist, w, ms, cap);
        free(a);
        free(b);
    }
    end(T_CART);
    if (with_dist_graph) {
        MPI_Comm graph;
        int gi = -1, go = -1, wt, nb[2 * ORACLE_MAXD], nd[2 * ORACLE_MAXD];
        int one[2 * ORACLE_MAXD], w2[2 * ORACLE_MAXD];
        for (int k = 0; k < 2 * ORACLE_MAXD; k++)
            one[k] = 1;
        begin();
        MPI_Dist_graph_create_adjacent(g->cart, deg, flist, one, deg, flist, one, MPI_INFO_NULL, 0,
                                       &graph);
        MPI_Dist_graph_neighbors_count(graph, &gi, &go, &wt);
        CHECK(gi == deg && go == deg, "%s rank %d: dist graph from Cart lists: degrees %d %d",
              g->name, g->me, gi, go);
        if (gi == deg && go == deg) {
            MPI_Dist_graph_neighbors(graph, deg, nb, w2, deg, nd, w2);
            check_list(g, "dist graph (Cart lists) sources", deg, nb, flist, deg, deg, deg);
            check_list(g, "dist graph (Cart lists) destinations", deg, nd, flist, deg, deg, deg);
        }
        end(T_DISTNB);
        MPI_Comm_free(&graph);
    }
}

/* Offsets far beyond every dimension size, positive and negative. */
static nbh_t nbh_far(int d, unsigned seed)
{
    nbh_t n = {d, 0, NULL};
    int c[ORACLE_MAXD];
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < d; j++)
            c[j] = ((int)(oracle_rand(&seed) % 3) - 1) * 1000000000 +
                   (int)(oracle_rand(&seed) % 7) - 3;
        nbh_push(&n, c);
    }
    return n;
}

int main(int argc, char **argv)
{
    int p, me, ndist = 0, m;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Info_create(&no_verify);
    MPI_Info_set(no_verify, "iso_verify", "false");
    /* every neighborhood creation costs an allreduce (~40 ms at 8 and ~100 ms
     * at 16 oversubscribed MPICH ranks): rotate over the topologies; at 12
     * and 16 ranks only the local checks and a few neighborhoods */
    m = p <= 4 ? 1 : 2;
    for (int t = 0;; t++) {
        geo_t g;
        int len = 0;
        if (!oracle_topology(p, t, &g.d, g.dims, g.periods))
            break;
        g.p = p;
        g.me = me;
        MPI_Cart_create(MPI_COMM_WORLD, g.d, g.dims, g.periods, 0, &g.cart);
        coords_of(&g, me, g.mc);
        for (int j = 0; j < g.d; j++)
            len += snprintf(g.name + len, sizeof g.name - (size_t)len, "%s%d%s", j ? "x" : "",
                            g.dims[j], g.periods[j] ? "p" : "");
        check_relative(&g);
        check_cart_nbh(&g, t == 0 && p <= 8);
        int first = 1;
        for (int k = 0; k < 5; k++) {
            nbh_t n;
            unsigned seed = (unsigned)(t * 10 + k);
            if (p <= 8 ? (t + k) % m != 0 : t > 1 || (k != 1 + t && k != 4))
                continue;
            switch (k) {
            case 0: /* Moore r=1 with the zero offset, column order */
                n = nbh_shell(g.d, 0, -1, 1);
                nbh_reorder(&n, 1, seed);
                break;
            case 1:
                n = nbh_random(g.d, 10, 3, seed);
                break;
            case 2:
                n = nbh_far(g.d, seed);
                break;
            case 3:
                n = nbh_von_neumann(g.d, 2);
                nbh_reorder(&n, 2, seed);
                break;
            default:
                n = (nbh_t){g.d, 0, NULL};
                break;
            }
            int dist = k < 3 && ndist < (p <= 8 ? 4 : 1);
            ndist += dist;
            check_iso(&g, &n, dist, first);
            first = 0;
            nbh_free(&n);
        }
        /* the Cartesian neighborhood is unaffected by an attached one */
        check_cart_nbh(&g, 0);
        MPI_Comm_free(&g.cart);
    }
    for (int t = 0; t < NT; t++) {
        tap_errors = errs[t];
        tap_result(MPI_COMM_WORLD, "%s (%d checks)", test_name[t], runs[t]);
    }
    MPI_Info_free(&no_verify);
    MPI_Finalize();
    return 0;
}
