/* The shape of a virtual process topology (src/route/shape.c): balanced
 * dimension sizes for any process count, parsing of "4,2,2", and the
 * dimension-order hop.  Local computations checked against independent
 * facts: the product, the paper's 2^floor(m/n) / 2^ceil(m/n) sizes for
 * powers of two, a bound on the imbalance, the (p, 1, ..., 1) shape of
 * primes; and for every pair of ranks of many shapes that the hops reach the
 * destination within n stages, changing only coordinate d at stage d.
 *
 * PER-ALGORITHM: no
 * NPROCS: 1
 */
#include <stdio.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"
#include "route/route.h"

static int is_prime(int p)
{
    if (p < 2)
        return 0;
    for (int f = 2; f * f <= p; f++)
        if (p % f == 0)
            return 0;
    return 1;
}

static int largest_prime_factor(int p)
{
    int big = 1;
    for (int f = 2; p > 1; f++)
        while (p % f == 0) {
            big = f;
            p /= f;
        }
    return big;
}

/* Coordinates the slow way: the MPI_Cart_coords convention, independent of
 * shape.c. */
/* The library error number of an MPI code (ISO_ERR_NONE for others). */
static int lib_class(int err)
{
    Iso_error e = ISO_ERR_NONE;
    Iso_error_class(err, &e);
    return (int)e;
}

static void coords_of(int n, const int dims[], int r, int c[])
{
    for (int d = n - 1; d >= 0; d--) {
        c[d] = r % dims[d];
        r /= dims[d];
    }
}

static void check_balanced(void)
{
    int dims[ISO_VPT_MAXDIMS];
    for (int p = 1; p <= 1100; p++)
        for (int n = 1; n <= 6; n++) {
            long long prod = 1;
            int lo = 1 << 30, hi = 0, big = largest_prime_factor(p);
            CHECK_EQ_INT(iso__vpt_dims_balanced(p, n, dims), MPI_SUCCESS, "p=%d n=%d", p, n);
            for (int d = 0; d < n; d++) {
                prod *= dims[d];
                lo = dims[d] < lo ? dims[d] : lo;
                hi = dims[d] > hi ? dims[d] : hi;
                if (d)
                    CHECK(dims[d] <= dims[d - 1], "p=%d n=%d: sizes not non-increasing", p, n);
            }
            CHECK_EQ_INT(prod, p, "p=%d n=%d: product", p, n);
            /* the factor between sizes is at most 2 or the largest prime */
            CHECK(hi <= lo * (big > 2 ? big : 2), "p=%d n=%d: sizes %d..%d", p, n, lo, hi);
            if (is_prime(p)) {
                CHECK_EQ_INT(dims[0], p, "prime p=%d n=%d", p, n);
            }
        }
    /* the paper's T_n for K = 2^m */
    for (int m = 0; m <= 14; m++)
        for (int n = 1; n <= 8; n++) {
            int fl = m / n, ce = (m + n - 1) / n, nce = m - fl * n;
            CHECK_EQ_INT(iso__vpt_dims_balanced(1 << m, n, dims), MPI_SUCCESS, "2^%d", m);
            for (int d = 0; d < n; d++)
                CHECK_EQ_INT(dims[d], 1 << (d < nce ? ce : fl), "K=2^%d n=%d dim %d", m, n, d);
        }
    iso__vpt_dims_balanced(256, 2, dims);
    CHECK(dims[0] == 16 && dims[1] == 16, "256 in 2: %d,%d", dims[0], dims[1]);
    iso__vpt_dims_balanced(12, 2, dims);
    CHECK(dims[0] == 4 && dims[1] == 3, "12 in 2: %d,%d", dims[0], dims[1]);
    iso__vpt_dims_balanced(6, 4, dims);
    CHECK(dims[0] == 3 && dims[1] == 2 && dims[2] == 1 && dims[3] == 1, "6 in 4");
    /* bad arguments */
    CHECK(iso__vpt_dims_balanced(0, 2, dims) != MPI_SUCCESS, "p = 0");
    CHECK(iso__vpt_dims_balanced(4, 0, dims) != MPI_SUCCESS, "n = 0");
    CHECK(iso__vpt_dims_balanced(4, ISO_VPT_MAXDIMS + 1, dims) != MPI_SUCCESS, "n too big");
    CHECK_EQ_INT(lib_class(iso__vpt_dims_balanced(-3, 2, dims)), ISO_ERR_ARG, "class");
    tap_result(MPI_COMM_WORLD, "balanced dims: products, order, balance, primes, 2^m");
}

static void check_parse(void)
{
    int n = -1, dims[ISO_VPT_MAXDIMS];
    static const char *const bad[] = {"",     ",",     "4,",   ",4",  "4,,4", "4;4", "0,16",
                                      "-4,4", "4, 4",  "4x4",  " 16", "16 ",  "a",   "99999999999",
                                      "1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,1,16"};
    CHECK_EQ_INT(iso__vpt_dims_parse("4,2,2", 16, &n, dims), MPI_SUCCESS, "4,2,2");
    CHECK(n == 3 && dims[0] == 4 && dims[1] == 2 && dims[2] == 2, "4,2,2 -> %d dims", n);
    CHECK_EQ_INT(iso__vpt_dims_parse("16", 16, &n, dims), MPI_SUCCESS, "16");
    CHECK(n == 1 && dims[0] == 16, "16 -> n %d", n);
    CHECK_EQ_INT(iso__vpt_dims_parse("1,3,1", 3, &n, dims), MPI_SUCCESS, "1,3,1");
    CHECK(n == 3 && dims[1] == 3, "1,3,1");
    CHECK_EQ_INT(iso__vpt_dims_parse("2,8", 16, &n, dims), MPI_SUCCESS, "uneven 2,8");
    n = -1;
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        int err = iso__vpt_dims_parse(bad[i], 16, &n, dims);
        CHECK_EQ_INT(lib_class(err), ISO_ERR_INFO, "\"%s\"", bad[i]);
    }
    CHECK_EQ_INT(lib_class(iso__vpt_dims_parse("4,2", 16, &n, dims)), ISO_ERR_INFO,
                 "product 8 for 16");
    CHECK_EQ_INT(lib_class(iso__vpt_dims_parse("65536,65536", 16, &n, dims)), ISO_ERR_INFO,
                 "overflowing product");
    CHECK_EQ_INT(lib_class(iso__vpt_dims_parse(NULL, 16, &n, dims)), ISO_ERR_INFO, "NULL");
    CHECK_EQ_INT(n, -1, "n untouched by failures");
    tap_result(MPI_COMM_WORLD, "dims parse: good shapes, malformed strings, wrong products");
}

/* Every pair of ranks of the shape: stage d changes coordinate d only (to
 * dest's), never another; after n stages the message is at dest; the
 * number of real hops is the number of differing coordinates. */
static void check_hops(int n, const int dims[])
{
    int p = 1, ca[ISO_VPT_MAXDIMS], cb[ISO_VPT_MAXDIMS], cd[ISO_VPT_MAXDIMS];
    for (int d = 0; d < n; d++)
        p *= dims[d];
    for (int src = 0; src < p; src++)
        for (int dest = 0; dest < p; dest++) {
            int at = src, moves = 0, differ = 0;
            coords_of(n, dims, dest, cd);
            coords_of(n, dims, src, ca);
            for (int d = 0; d < n; d++)
                differ += ca[d] != cd[d];
            for (int d = 0; d < n; d++) {
                int next = iso__vpt_hop(n, dims, d, at, dest);
                CHECK(next >= 0 && next < p, "hop out of range");
                coords_of(n, dims, at, ca);
                coords_of(n, dims, next, cb);
                for (int e = 0; e < n; e++)
                    if (e == d)
                        CHECK_EQ_INT(cb[e], cd[e], "stage %d coordinate %d", d, e);
                    else
                        CHECK_EQ_INT(cb[e], ca[e], "stage %d kept coordinate %d", d, e);
                moves += next != at;
                at = next;
            }
            CHECK_EQ_INT(at, dest, "%d -> %d", src, dest);
            CHECK_EQ_INT(moves, differ, "%d -> %d hops", src, dest);
            CHECK(moves <= n, "more than n hops");
        }
}

static void check_all_hops(void)
{
    static const int shapes[][5] = {
        {1, 1},       {1, 7},       {2, 4, 4},    {2, 3, 5},    {3, 2, 2, 3},
        {4, 2, 2, 2, 2}, {2, 1, 13}, {3, 4, 1, 3}, {2, 16, 2},  {1, 16},
    };
    int dims[ISO_VPT_MAXDIMS];
    for (size_t i = 0; i < sizeof shapes / sizeof *shapes; i++)
        check_hops(shapes[i][0], shapes[i] + 1);
    for (int p = 1; p <= 24; p++)
        for (int n = 1; n <= 4; n++) {
            iso__vpt_dims_balanced(p, n, dims);
            check_hops(n, dims);
        }
    /* coordinates agree with the MPI_Cart_coords convention */
    {
        int sh[3] = {3, 4, 5}, c[3];
        for (int r = 0; r < 60; r++) {
            coords_of(3, sh, r, c);
            for (int d = 0; d < 3; d++)
                CHECK_EQ_INT(iso__vpt_coord(3, sh, d, r), c[d], "coord %d of %d", d, r);
        }
    }
    tap_result(MPI_COMM_WORLD, "hops: every pair reaches dest in <= n stages, stage d moves dim d");
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    check_balanced();
    check_parse();
    check_all_hops();
    MPI_Finalize();
    return 0;
}
