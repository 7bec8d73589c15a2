/* Type_create_triangular against references built here, independently of
 * the library: an MPI_Type_indexed of single elements listing the cells of
 * each layout (enumerated from the geometry of the deep-halo corners and of
 * packed triangular storage, or from the closed formula for the parameter
 * sweep).  Both types pack the same source (bytes compared), unpack into
 * sentinel-filled buffers (compared with each other and with the expected
 * buffer), and send to/receive from contiguous buffers; size, lb and extent
 * are checked against the rule documented in datatypes/triangular.c.
 * NPROCS: 1 2
 * PER-ALGORITHM: no
 */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

#define SENTINEL 0xA5

typedef struct {
    int count, first, binc, stride, sinc;
    long base; /* element offset of block 0's first element in the buffer */
} tri_t;

/* An oldtype: its extent in doubles, and the double slots of one element
 * that carry data (relative to the element's origin). */
typedef struct {
    const char *name;
    MPI_Datatype type;
    int ext;
    int ndata;
    int data[2];
    MPI_Aint lb; /* bytes */
} elem_t;

static int rank, nprocs;

/* ---------------------------------------------------------------------- */
/* Helpers */

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    if (p == NULL) {
        fprintf(stderr, "out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    return p;
}

static void fill_sentinel(double *x, size_t n)
{
    memset(x, SENTINEL, n * sizeof *x);
}

static int is_sentinel(const double *x)
{
    double s;
    memset(&s, SENTINEL, sizeof s);
    return memcmp(x, &s, sizeof s) == 0;
}

static const char *combiner_name(int combiner)
{
    if (combiner == MPI_COMBINER_NAMED)
        return "named";
    if (combiner == MPI_COMBINER_CONTIGUOUS)
        return "contiguous";
    if (combiner == MPI_COMBINER_VECTOR)
        return "vector";
    if (combiner == MPI_COMBINER_INDEXED_BLOCK)
        return "indexed_block";
    if (combiner == MPI_COMBINER_INDEXED)
        return "indexed";
    return "other";
}

typedef struct {
    int ni, na, nd, combiner;
} envelope_t;

static envelope_t envelope(MPI_Datatype t)
{
    envelope_t e;
    MPI_Type_get_envelope(t, &e.ni, &e.na, &e.nd, &e.combiner);
    return e;
}

static int error_class(int rc)
{
    int cls = rc;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &cls);
    return cls;
}

static int make_tri(const tri_t *p, MPI_Datatype old, MPI_Datatype *t)
{
    return Type_create_triangular(p->count, p->first, p->binc, p->stride, p->sinc, old, t);
}

/* The same parameters listing the blocks last to first. */
static tri_t reversed(tri_t p)
{
    tri_t q = p;
    long m = p.count;
    if (m <= 1)
        return q;
    q.base = p.base + (m - 1) * p.stride + (long)p.sinc * (m - 1) * (m - 2) / 2;
    q.first = (int)(p.first + (m - 1) * p.binc);
    q.binc = -p.binc;
    q.stride = (int)-(p.stride + (m - 2) * p.sinc);
    return q;
}

/* ---------------------------------------------------------------------- */
/* The layout check: tri (from p) against the cells listed in order. */

/* Expected buffer after unpacking: sentinels except the data slots of the
 * listed cells, which hold src. */
static void expected_scatter(const elem_t *el, const long *cells, int ncells, const double *src,
                             double *exp, size_t ndoubles)
{
    fill_sentinel(exp, ndoubles);
    for (int t = 0; t < ncells; t++)
        for (int q = 0; q < el->ndata; q++) {
            long x = cells[t] * el->ext + el->data[q];
            exp[x] = src[x];
        }
}

/* Returns the envelope of the triangular type (combiner -1 on failure). */
static envelope_t check_layout(const elem_t *el, const tri_t *p, const long *cells, int ncells,
                               long nbuf, const char *what)
{
    envelope_t env = {0, 0, 0, -1};
    MPI_Datatype tri, ref;
    size_t nd = (size_t)nbuf * (size_t)el->ext;
    size_t esize = (size_t)el->ndata * sizeof(double);
    double *src, *a, *b, *exp, *flat;
    int *ones, *displs;
    char *pk1, *pk2;
    int rc, ps1, ps2, pos1 = 0, pos2 = 0, q1 = 0, q2 = 0, size;
    long mincell = 0, maxcell = 0;
    MPI_Aint lb, extent, ebytes = (MPI_Aint)el->ext * (MPI_Aint)sizeof(double);

    rc = make_tri(p, el->type, &tri);
    CHECK(rc == MPI_SUCCESS, "%s: Type_create_triangular(%d,%d,%d,%d,%d) returned %d", what,
          p->count, p->first, p->binc, p->stride, p->sinc, rc);
    if (rc != MPI_SUCCESS)
        return env;
    env = envelope(tri);

    ones = xmalloc((size_t)ncells * sizeof *ones);
    displs = xmalloc((size_t)ncells * sizeof *displs);
    for (int t = 0; t < ncells; t++) {
        ones[t] = 1;
        displs[t] = (int)cells[t];
        if (t == 0 || cells[t] < mincell)
            mincell = cells[t];
        if (t == 0 || cells[t] > maxcell)
            maxcell = cells[t];
    }
    MPI_Type_indexed(ncells, ones, displs, el->type, &ref);
    MPI_Type_commit(&tri);
    MPI_Type_commit(&ref);

    /* size and bounds as documented */
    MPI_Type_size(tri, &size);
    CHECK_EQ_INT(size, (size_t)ncells * esize, "%s: MPI_Type_size", what);
    MPI_Type_get_extent(tri, &lb, &extent);
    if (ncells == 0) {
        CHECK(lb == 0 && extent == 0, "%s: empty type has lb %ld extent %ld", what, (long)lb,
              (long)extent);
    } else {
        MPI_Aint xlb = el->lb + (MPI_Aint)(mincell - p->base) * ebytes;
        MPI_Aint xext = (MPI_Aint)(maxcell + 1 - mincell) * ebytes;
        CHECK(lb == xlb && extent == xext, "%s: lb %ld extent %ld, expected %ld %ld", what,
              (long)lb, (long)extent, (long)xlb, (long)xext);
    }

    src = xmalloc(nd * sizeof *src);
    a = xmalloc(nd * sizeof *a);
    b = xmalloc(nd * sizeof *b);
    exp = xmalloc(nd * sizeof *exp);
    flat = xmalloc((size_t)ncells * esize);
    for (size_t x = 0; x < nd; x++)
        src[x] = (double)x + 0.25;
    expected_scatter(el, cells, ncells, src, exp, nd);

    /* pack: same bytes from both types */
    MPI_Pack_size(1, tri, MPI_COMM_SELF, &ps1);
    MPI_Pack_size(1, ref, MPI_COMM_SELF, &ps2);
    if (ps2 > ps1)
        ps1 = ps2;
    pk1 = xmalloc((size_t)ps1);
    pk2 = xmalloc((size_t)ps1);
    MPI_Pack(src + p->base * el->ext, 1, tri, pk1, ps1, &pos1, MPI_COMM_SELF);
    MPI_Pack(src, 1, ref, pk2, ps1, &pos2, MPI_COMM_SELF);
    CHECK(pos1 == pos2 && memcmp(pk1, pk2, (size_t)pos1) == 0,
          "%s: packed %d bytes, reference %d, contents %s", what, pos1, pos2,
          pos1 == pos2 && memcmp(pk1, pk2, (size_t)pos1) == 0 ? "equal" : "differ");

    /* unpack into sentinels: equal to the reference's and to the expected */
    fill_sentinel(a, nd);
    fill_sentinel(b, nd);
    MPI_Unpack(pk1, pos1, &q1, a + p->base * el->ext, 1, tri, MPI_COMM_SELF);
    MPI_Unpack(pk1, pos1, &q2, b, 1, ref, MPI_COMM_SELF);
    CHECK(q1 == pos1 && q2 == pos1, "%s: unpack consumed %d / %d of %d bytes", what, q1, q2,
          pos1);
    CHECK(memcmp(a, b, nd * sizeof *a) == 0, "%s: unpack differs from reference", what);
    CHECK(memcmp(a, exp, nd * sizeof *a) == 0, "%s: unpack differs from expected", what);

    /* communication with a contiguous partner, both ways (to self) */
    MPI_Sendrecv(src + p->base * el->ext, 1, tri, 0, 11, flat, ncells * el->ndata, MPI_DOUBLE, 0,
                 11, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    for (int t = 0, bad = 0; t < ncells && !bad; t++)
        for (int q = 0; q < el->ndata && !bad; q++) {
            double want = src[cells[t] * el->ext + el->data[q]];
            bad = flat[t * el->ndata + q] != want;
            CHECK(!bad, "%s: sent element %d.%d is %g, expected %g", what, t, q,
                  flat[t * el->ndata + q], want);
        }
    fill_sentinel(a, nd);
    MPI_Sendrecv(flat, ncells * el->ndata, MPI_DOUBLE, 0, 12, a + p->base * el->ext, 1, tri, 0,
                 12, MPI_COMM_SELF, MPI_STATUS_IGNORE);
    CHECK(memcmp(a, exp, nd * sizeof *a) == 0, "%s: received layout differs from expected",
          what);

    free(pk1);
    free(pk2);
    free(flat);
    free(exp);
    free(b);
    free(a);
    free(src);
    free(ones);
    free(displs);
    MPI_Type_free(&ref);
    MPI_Type_free(&tri);
    return env;
}

/* ---------------------------------------------------------------------- */
/* Corner triangles of the depth-k 5-point halo (figure 1 of the paper) */

enum { TL, TR, BL, BR };
static const char *const corner_name[] = {"TL", "TR", "BL", "BR"};

/* Cell (r,c) of the matrix of order n+2k belongs to the corner triangle:
 * the halo one holds cells a>=1 rows and b>=1 columns outside the interior
 * corner with a+b <= k (Manhattan distance k after k stencil steps); the
 * interior one is what the diagonal neighbour needs of ours: a>=0, b>=0
 * inside with (a+1)+(b+1) <= k. */
static int in_corner(int corner, int interior, int n, int k, int r, int c)
{
    int top = corner == TL || corner == TR, left = corner == TL || corner == BL;
    int a, b;
    if (!interior) {
        a = top ? k - r : r - (k + n - 1);
        b = left ? k - c : c - (k + n - 1);
        return a >= 1 && b >= 1 && a + b <= k;
    }
    a = top ? r - k : k + n - 1 - r;
    b = left ? c - k : k + n - 1 - c;
    return a >= 0 && b >= 0 && a < n && b < n && a + b <= k - 2;
}

/* Cells in block order: rows (row-major) or columns (column-major),
 * ascending or descending; each block ascending in memory. */
static int corner_cells(int colmajor, int corner, int interior, int reverse, int n, int k,
                        long *cells)
{
    int M = n + 2 * k, nc = 0;
    for (int a = 0; a < M; a++) {
        int major = reverse ? M - 1 - a : a;
        for (int minor = 0; minor < M; minor++) {
            int r = colmajor ? minor : major, c = colmajor ? major : minor;
            if (in_corner(corner, interior, n, k, r, c))
                cells[nc++] = (long)major * M + minor;
        }
    }
    return nc;
}

/* The table of datatypes/triangular.c, literally. */
static tri_t corner_table(int colmajor, int corner, int interior, int n, int k)
{
    const int M = n + 2 * k;
    const struct {
        int r, c, first, binc, stride;
    } rm[2][4] = {{{1, k - 1, 1, +1, M - 1},
                   {1, k + n, 1, +1, M},
                   {k + n, 1, k - 1, -1, M + 1},
                   {k + n, k + n, k - 1, -1, M}},
                  {{k, k, k - 1, -1, M},
                   {k, n + 1, k - 1, -1, M + 1},
                   {n + 1, k, 1, +1, M},
                   {n + 1, k + n - 1, 1, +1, M - 1}}},
      cm[2][4] = {{{k - 1, 1, 1, +1, M - 1},
                   {1, k + n, k - 1, -1, M + 1},
                   {k + n, 1, 1, +1, M},
                   {k + n, k + n, k - 1, -1, M}},
                  {{k, k, k - 1, -1, M},
                   {k, n + 1, 1, +1, M},
                   {n + 1, k, k - 1, -1, M + 1},
                   {k + n - 1, n + 1, 1, +1, M - 1}}};
    tri_t p;
    if (colmajor) {
        p.base = (long)cm[interior][corner].c * M + cm[interior][corner].r;
        p.first = cm[interior][corner].first;
        p.binc = cm[interior][corner].binc;
        p.stride = cm[interior][corner].stride;
    } else {
        p.base = (long)rm[interior][corner].r * M + rm[interior][corner].c;
        p.first = rm[interior][corner].first;
        p.binc = rm[interior][corner].binc;
        p.stride = rm[interior][corner].stride;
    }
    p.count = k - 1;
    p.sinc = 0;
    return p;
}

static void test_corners(const elem_t *el, int colmajor)
{
    static const int ks[] = {1, 2, 3, 4, 5, 7};
    char what[160];
    for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ik++) {
        int k = ks[ik];
        int ns[2] = {k > 1 ? k - 1 : 1, k + 3};
        for (int in = 0; in < 2; in++) {
            int n = ns[in], M = n + 2 * k;
            long *cells = xmalloc((size_t)M * M * sizeof *cells);
            for (int corner = 0; corner < 4; corner++)
                for (int interior = 0; interior < 2; interior++) {
                    tri_t fwd = corner_table(colmajor, corner, interior, n, k);
                    tri_t opp = corner_table(colmajor, 3 - corner, !interior, n, k);
                    CHECK(fwd.first == opp.first && fwd.binc == opp.binc &&
                              fwd.stride == opp.stride,
                          "%s %s: parameters differ from the opposite corner's",
                          corner_name[corner], interior ? "interior" : "halo");
                    for (int reverse = 0; reverse < 2; reverse++) {
                        tri_t p = reverse ? reversed(fwd) : fwd;
                        int nc = corner_cells(colmajor, corner, interior, reverse, n, k, cells);
                        snprintf(what, sizeof what, "%s-major %s %s%s k=%d n=%d oldtype %s",
                                 colmajor ? "column" : "row", corner_name[corner],
                                 interior ? "interior" : "halo", reverse ? " reversed" : "", k,
                                 n, el->name);
                        CHECK_EQ_INT(nc, k * (k - 1) / 2, "%s: geometry cells", what);
                        check_layout(el, &p, cells, nc, (long)M * M, what);
                    }
                }
            free(cells);
        }
    }
    tap_result(MPI_COMM_WORLD,
               "corner triangles, %s-major, oldtype %s: 4 corners x halo/interior x both "
               "block orders, k=1..7",
               colmajor ? "column" : "row", el->name);
}

/* ---------------------------------------------------------------------- */
/* Packed triangular storage: strideincrement != 0 (positive and negative) */

enum { LOWER_TAIL, LOWER_COLUMN, UPPER_COLUMN, UPPER_LEFT, NSHAPES };
static const char *const shape_name[] = {"lower tail", "lower column", "upper column",
                                         "upper left part"};

/* Lower triangle packed by rows: (i,j), j<=i, at i(i+1)/2 + j.
 * Upper triangle packed by rows: (i,j), j>=i, at iP - i(i-1)/2 + j - i. */
static long packed_offset(int upper, int P, long i, long j)
{
    return upper ? i * P - i * (i - 1) / 2 + j - i : i * (i + 1) / 2 + j;
}

static int packed_in(int shape, int j0, int i, int j)
{
    switch (shape) {
    case LOWER_TAIL: return i >= j0 && j >= j0 && j <= i;
    case LOWER_COLUMN: return i >= j0 && j == j0;
    case UPPER_COLUMN: return i <= j0 && j == j0;
    default: return i <= j0 && j >= i && j <= j0;
    }
}

static tri_t packed_params(int shape, int P, int j0)
{
    tri_t p;
    switch (shape) {
    case LOWER_TAIL: p = (tri_t){P - j0, 1, 1, j0 + 1, 1, packed_offset(0, P, j0, j0)}; break;
    case LOWER_COLUMN: p = (tri_t){P - j0, 1, 0, j0 + 1, 1, packed_offset(0, P, j0, j0)}; break;
    case UPPER_COLUMN: p = (tri_t){j0 + 1, 1, 0, P - 1, -1, packed_offset(1, P, 0, j0)}; break;
    default: p = (tri_t){j0 + 1, j0 + 1, -1, P, -1, 0}; break;
    }
    return p;
}

static void test_packed(const elem_t *el)
{
    char what[160];
    for (int P = 1; P <= 7; P++) {
        long nbuf = (long)P * (P + 1) / 2;
        long *cells = xmalloc((size_t)nbuf * sizeof *cells);
        for (int shape = 0; shape < NSHAPES; shape++)
            for (int j0 = 0; j0 < P; j0++)
                for (int reverse = 0; reverse < 2; reverse++) {
                    int upper = shape >= UPPER_COLUMN, nc = 0;
                    tri_t p = packed_params(shape, P, j0);
                    if (reverse)
                        p = reversed(p);
                    for (int a = 0; a < P; a++) {
                        int i = reverse ? P - 1 - a : a;
                        for (int j = 0; j < P; j++)
                            if (packed_in(shape, j0, i, j))
                                cells[nc++] = packed_offset(upper, P, i, j);
                    }
                    snprintf(what, sizeof what, "packed %s P=%d j0=%d%s oldtype %s",
                             shape_name[shape], P, j0, reverse ? " reversed" : "", el->name);
                    check_layout(el, &p, cells, nc, nbuf, what);
                }
        free(cells);
    }
    tap_result(MPI_COMM_WORLD,
               "packed triangular storage (strideincrement +1 and -1), both block orders, "
               "oldtype %s",
               el->name);
}

/* ---------------------------------------------------------------------- */
/* Parameter sweep against the closed formula; negative lengths must fail */

typedef struct {
    int cmax, fmin, fmax, bmax, smax, simax;
} sweep_t;

static void test_sweep(const elem_t *el, const sweep_t *s, long *larger)
{
    char what[160];
    long cases = 0, errors = 0;
    for (int count = 0; count <= s->cmax; count++)
        for (int first = s->fmin; first <= s->fmax; first++)
            for (int binc = -s->bmax; binc <= s->bmax; binc++)
                for (int stride = -s->smax; stride <= s->smax; stride++)
                    for (int sinc = -s->simax; sinc <= s->simax; sinc++) {
                        tri_t p = {count, first, binc, stride, sinc, 0};
                        long lo = 0, hi = 0, total = 0;
                        int negative = 0, nc = 0;
                        long *cells;
                        snprintf(what, sizeof what, "sweep (%d,%d,%d,%d,%d) oldtype %s", count,
                                 first, binc, stride, sinc, el->name);
                        for (long i = 0; i < count; i++) {
                            long len = first + i * binc, d = i * stride + sinc * i * (i - 1) / 2;
                            negative |= len < 0;
                            if (len > 0) {
                                lo = d < lo ? d : lo;
                                hi = d + len > hi ? d + len : hi;
                                total += len;
                            }
                        }
                        cases++;
                        if (negative) {
                            MPI_Datatype t = MPI_INT;
                            int rc = make_tri(&p, el->type, &t);
                            errors++;
                            CHECK(error_class(rc) == MPI_ERR_ARG && t == MPI_DATATYPE_NULL,
                                  "%s: negative block accepted (rc %d)", what, rc);
                            continue;
                        }
                        /* room on both sides of the hull */
                        p.base = 2 - lo;
                        cells = xmalloc((size_t)(total + 1) * sizeof *cells);
                        for (long i = 0; i < count; i++) {
                            long len = first + i * binc, d = i * stride + sinc * i * (i - 1) / 2;
                            for (long j = 0; j < len; j++)
                                cells[nc++] = p.base + d + j;
                        }
                        envelope_t e = check_layout(el, &p, cells, nc, hi - lo + 4, what);
                        /* never larger than the plain MPI_Type_indexed of count blocks */
                        if (e.combiner != -1 && (e.ni > 2 * count + 1 || e.na != 0 || e.nd != 1)) {
                            (*larger)++;
                            CHECK(0, "%s: type map %d/%d/%d larger than indexed", what, e.ni, e.na,
                                  e.nd);
                        }
                        free(cells);
                    }
    tap_result(MPI_COMM_WORLD,
               "parameter sweep, oldtype %s: %ld cases (%ld with a negative block rejected) "
               "against the closed formula",
               el->name, cases, errors);
}

/* ---------------------------------------------------------------------- */
/* Errors, degenerate counts, overflow */

static void expect_rc(int expected, int count, int first, int binc, int stride, int sinc,
                      MPI_Datatype old, const char *what)
{
    MPI_Datatype t = MPI_INT; /* must be overwritten */
    int rc = Type_create_triangular(count, first, binc, stride, sinc, old, &t);
    CHECK_EQ_INT(error_class(rc), expected, "%s: error class", what);
    if (expected != MPI_SUCCESS)
        CHECK(t == MPI_DATATYPE_NULL, "%s: newtype not reset to MPI_DATATYPE_NULL", what);
    else
        CHECK(t != MPI_DATATYPE_NULL && t != MPI_INT, "%s: no type returned", what);
    if (rc == MPI_SUCCESS && t != MPI_DATATYPE_NULL && t != MPI_INT)
        MPI_Type_free(&t);
}

static void test_errors(void)
{
    int rc;

    expect_rc(MPI_ERR_COUNT, -1, 1, 0, 1, 0, MPI_DOUBLE, "count -1");
    expect_rc(MPI_ERR_COUNT, INT_MIN, 1, 0, 1, 0, MPI_DOUBLE, "count INT_MIN");
    expect_rc(MPI_ERR_TYPE, 3, 1, 0, 1, 0, MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL");
    expect_rc(MPI_ERR_TYPE, 0, 1, 0, 1, 0, MPI_DATATYPE_NULL, "MPI_DATATYPE_NULL, count 0");
    rc = Type_create_triangular(3, 1, 0, 1, 0, MPI_DOUBLE, NULL);
    CHECK_EQ_INT(error_class(rc), MPI_ERR_ARG, "NULL newtype: error class");

    /* negative block lengths */
    expect_rc(MPI_ERR_ARG, 1, -1, 0, 0, 0, MPI_DOUBLE, "firstblock -1");
    expect_rc(MPI_ERR_ARG, 5, 3, -1, 10, 0, MPI_DOUBLE, "block 4 of length -1");
    expect_rc(MPI_SUCCESS, 4, 3, -1, 10, 0, MPI_DOUBLE, "last block of length 0");
    expect_rc(MPI_ERR_ARG, 2, 0, -1, 1, 0, MPI_DOUBLE, "0 then -1");
    expect_rc(MPI_ERR_ARG, INT_MAX, 1, -1, 1, 0, MPI_DOUBLE, "decreasing to -(INT_MAX-2)");
    expect_rc(MPI_SUCCESS, 0, -5, -1, 1, 0, MPI_DOUBLE, "count 0 ignores firstblock");

    /* int overflow of block lengths and displacements */
    expect_rc(MPI_ERR_ARG, 2, INT_MAX, 1, 0, 0, MPI_DOUBLE, "length INT_MAX+1");
    expect_rc(MPI_ERR_ARG, INT_MAX, 2, INT_MAX, 0, 0, MPI_DOUBLE, "length overflow, huge count");
    expect_rc(MPI_ERR_ARG, 3, 1, 0, INT_MAX, 0, MPI_DOUBLE, "vector displacement 2*INT_MAX");
    expect_rc(MPI_ERR_ARG, 3, 1, 1, INT_MIN, 0, MPI_DOUBLE, "indexed displacement 2*INT_MIN");
    expect_rc(MPI_ERR_ARG, 4, 1, 0, 0, INT_MAX, MPI_DOUBLE, "displacement 3*INT_MAX");
    /* D = 0, INT_MAX, 2863311529, 2147483646: only a middle block overflows */
    expect_rc(MPI_ERR_ARG, 4, 1, 0, INT_MAX, -1431655765, MPI_DOUBLE,
              "overflow of a middle block only");
    expect_rc(MPI_SUCCESS, 3, 1, 0, 0, INT_MIN, MPI_DOUBLE, "displacement exactly INT_MIN");
    expect_rc(MPI_SUCCESS, 3, 4, -2, INT_MAX, INT_MAX, MPI_DOUBLE,
              "empty last block beyond int is dropped");
    expect_rc(MPI_SUCCESS, 2, 0, 5, INT_MAX, 0, MPI_DOUBLE, "one block at INT_MAX");
    expect_rc(MPI_SUCCESS, INT_MAX, 0, 0, INT_MAX, INT_MAX, MPI_DOUBLE,
              "all blocks empty, huge count");

    /* byte displacements beyond MPI_Aint */
    if (sizeof(MPI_Aint) == 8) {
        MPI_Datatype huge;
        MPI_Type_create_resized(MPI_DOUBLE, 0, (MPI_Aint)1 << 40, &huge);
        expect_rc(MPI_ERR_ARG, 2, 1, 0, 1 << 24, 0, huge, "2^24 x extent 2^40 bytes");
        expect_rc(MPI_ERR_ARG, 3, 1, 1, 1 << 23, 1 << 23, huge, "indexed, 3*2^23 x 2^40 bytes");
        expect_rc(MPI_SUCCESS, 2, 1, 0, 1 << 20, 0, huge, "2^20 x extent 2^40 bytes");
        MPI_Type_free(&huge);
    }
    tap_result(MPI_COMM_WORLD,
               "errors: count<0, MPI_DATATYPE_NULL, NULL newtype, negative blocks, int and "
               "MPI_Aint overflow; newtype reset to MPI_DATATYPE_NULL");
}

static void check_type(MPI_Datatype t, int combiner, MPI_Count size, MPI_Count lb,
                       MPI_Count extent, const char *what)
{
    envelope_t e = envelope(t);
    MPI_Count s, l, x;
    MPI_Type_size_x(t, &s);
    MPI_Type_get_extent_x(t, &l, &x);
    CHECK(e.combiner == combiner, "%s: combiner %s, expected %s", what,
          combiner_name(e.combiner), combiner_name(combiner));
    CHECK(s == size && l == lb && x == extent,
          "%s: size %lld lb %lld extent %lld, expected %lld %lld %lld", what, (long long)s,
          (long long)l, (long long)x, (long long)size, (long long)lb, (long long)extent);
}

static void test_degenerate(const elem_t *pair)
{
    MPI_Datatype t;
    int rc;

    rc = Type_create_triangular(0, 3, -7, 11, -2, MPI_DOUBLE, &t);
    CHECK(rc == MPI_SUCCESS, "count 0: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        check_type(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 0, "count 0");
        MPI_Type_free(&t);
    }
    rc = Type_create_triangular(0, 3, 0, 11, 0, pair->type, &t);
    CHECK(rc == MPI_SUCCESS, "count 0, lb -8: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        check_type(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 0, "count 0, oldtype with lb -8");
        MPI_Type_free(&t);
    }
    rc = Type_create_triangular(1, 5, -100, 77, 99, MPI_DOUBLE, &t);
    CHECK(rc == MPI_SUCCESS, "count 1: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        check_type(t, MPI_COMBINER_CONTIGUOUS, 40, 0, 40, "count 1");
        MPI_Type_free(&t);
    }
    rc = Type_create_triangular(1, 5, 1, 1, 1, pair->type, &t);
    CHECK(rc == MPI_SUCCESS, "count 1 pair: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        check_type(t, MPI_COMBINER_CONTIGUOUS, 80, -8, 160, "count 1, oldtype with lb -8");
        MPI_Type_free(&t);
    }
    rc = Type_create_triangular(1, 0, 1, 1, 1, MPI_DOUBLE, &t);
    CHECK(rc == MPI_SUCCESS, "count 1 empty: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        check_type(t, MPI_COMBINER_CONTIGUOUS, 0, 0, 0, "count 1, empty block");
        MPI_Type_free(&t);
    }
    /* a vector of INT_MAX/4 blocks: closed form, no per-block memory */
    rc = Type_create_triangular(INT_MAX / 4, 1, 0, 3, 0, MPI_DOUBLE, &t);
    CHECK(rc == MPI_SUCCESS, "huge vector: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Count nb = INT_MAX / 4;
        check_type(t, MPI_COMBINER_VECTOR, nb * 8, 0, ((nb - 1) * 3 + 1) * 8, "huge vector");
        MPI_Type_free(&t);
    }
    /* blocks that abut but hold more than INT_MAX elements together: not
     * one contiguous run (its count would not fit in int) */
    rc = Type_create_triangular(2, 1 << 30, 1, 1 << 30, 0, MPI_CHAR, &t);
    CHECK(rc == MPI_SUCCESS, "abutting, > INT_MAX in all: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Count all = ((MPI_Count)1 << 31) + 1;
        check_type(t, MPI_COMBINER_INDEXED, all, 0, all, "abutting, > INT_MAX in all");
        MPI_Type_free(&t);
    }
    rc = Type_create_triangular(2, (1 << 30) + 1, 0, (1 << 30) + 1, 0, MPI_CHAR, &t);
    CHECK(rc == MPI_SUCCESS, "abutting equal blocks, > INT_MAX in all: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        MPI_Count all = ((MPI_Count)1 << 31) + 2;
        check_type(t, MPI_COMBINER_VECTOR, all, 0, all, "abutting equal blocks, > INT_MAX in all");
        MPI_Type_free(&t);
    }
    /* negative stride: the hull starts below the buffer pointer */
    rc = Type_create_triangular(4, 1, 1, -5, 0, MPI_DOUBLE, &t);
    CHECK(rc == MPI_SUCCESS, "negative stride: rc %d", rc);
    if (rc == MPI_SUCCESS) {
        /* blocks at 0 (1), -5 (2), -10 (3), -15 (4): hull [-15, 1) */
        check_type(t, MPI_COMBINER_INDEXED, 10 * 8, -15 * 8, 16 * 8, "negative stride");
        MPI_Type_free(&t);
    }

    /* the same as layouts: count 0 and 1 with both element kinds */
    {
        static const tri_t ps[] = {{0, 3, -7, 11, -2, 1}, {1, 5, -100, 77, 99, 1},
                                   {1, 0, 3, 3, 3, 1},    {2, 0, 4, -1, 0, 3},
                                   {2, 3, -3, 9, 9, 1},   {2, 2, 1, 2, 7, 0}};
        for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++) {
            long cells[16];
            int nc = 0;
            char what[100];
            for (long b = 0; b < ps[i].count; b++) {
                long d = b * ps[i].stride + ps[i].sinc * b * (b - 1) / 2;
                for (long j = 0; j < ps[i].first + b * ps[i].binc; j++)
                    cells[nc++] = ps[i].base + d + j;
            }
            snprintf(what, sizeof what, "degenerate case %zu, double", i);
            check_layout(&(elem_t){"double", MPI_DOUBLE, 1, 1, {0, 0}, 0}, &ps[i], cells, nc, 16,
                         what);
            snprintf(what, sizeof what, "degenerate case %zu, %s", i, pair->name);
            check_layout(pair, &ps[i], cells, nc, 16, what);
        }
    }
    tap_result(MPI_COMM_WORLD, "count 0, count 1, empty end blocks, negative stride: "
                               "combiner, size, lb, extent as documented");
}

/* ---------------------------------------------------------------------- */
/* Type-map size against the plain MPI_Type_indexed of the same blocks */

/* expect_ni: the envelope integers of the smallest single MPI constructor
 * for this type map (see the table in datatypes/triangular.c). */
static void report_typemap(const char *what, const tri_t *p, int expect_combiner, int expect_ni)
{
    MPI_Datatype tri, plain;
    int *lens = xmalloc((size_t)p->count * sizeof *lens);
    int *displs = xmalloc((size_t)p->count * sizeof *displs);
    envelope_t et, ep;
    int rc;

    for (long i = 0; i < p->count; i++) {
        lens[i] = (int)(p->first + i * p->binc);
        displs[i] = (int)(i * p->stride + p->sinc * i * (i - 1) / 2);
    }
    MPI_Type_indexed(p->count, lens, displs, MPI_DOUBLE, &plain);
    rc = make_tri(p, MPI_DOUBLE, &tri);
    CHECK(rc == MPI_SUCCESS, "%s: rc %d", what, rc);
    if (rc == MPI_SUCCESS) {
        et = envelope(tri);
        ep = envelope(plain);
        CHECK(et.ni <= ep.ni && et.na <= ep.na && et.nd <= ep.nd,
              "%s: triangular larger than indexed", what);
        CHECK(et.combiner == expect_combiner && et.ni == expect_ni,
              "%s: %s with %d integers, expected %s with %d", what, combiner_name(et.combiner),
              et.ni, combiner_name(expect_combiner), expect_ni);
        if (rank == 0)
            printf("# type map %-44s triangular %-13s %4d/%d/%d   plain %s %4d/%d/%d\n", what,
                   combiner_name(et.combiner), et.ni, et.na, et.nd, combiner_name(ep.combiner),
                   ep.ni, ep.na, ep.nd);
        MPI_Type_free(&tri);
    }
    MPI_Type_free(&plain);
    free(lens);
    free(displs);
}

static void test_typemap(long larger)
{
    static const int ks[] = {2, 3, 4, 8, 32};
    char what[80];
    if (rank == 0)
        printf("# type map sizes: envelope integers/addresses/datatypes\n");
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
        int k = ks[i], n = 64, M = n + 2 * k;
        tri_t p = corner_table(0, TL, 0, n, k);
        /* one row of one element (k=2) is contiguous; otherwise k-1 rows */
        int tc = k == 2 ? MPI_COMBINER_CONTIGUOUS : MPI_COMBINER_INDEXED;
        int ti = k == 2 ? 1 : 2 * (k - 1) + 1;
        snprintf(what, sizeof what, "corner triangle k=%d (count k-1)", k);
        report_typemap(what, &p, tc, ti);
        p = (tri_t){k, 0, 1, M - 1, 0, 0};
        snprintf(what, sizeof what, "same from empty row 0, k=%d (count k)", k);
        report_typemap(what, &p, k == 2 ? MPI_COMBINER_INDEXED_BLOCK : tc, k == 2 ? 3 : ti);
        p = (tri_t){k, k, 0, M, 0, 0};
        snprintf(what, sizeof what, "9-point corner square k=%d", k);
        report_typemap(what, &p, MPI_COMBINER_VECTOR, 3);
    }
    report_typemap("count 0", &(tri_t){0, 1, 1, 1, 0, 0}, MPI_COMBINER_CONTIGUOUS, 1);
    report_typemap("count 1", &(tri_t){1, 7, 1, 1, 0, 0}, MPI_COMBINER_CONTIGUOUS, 1);
    report_typemap("packed lower triangle P=32 (rows abut)", &(tri_t){32, 1, 1, 1, 1, 0},
                   MPI_COMBINER_CONTIGUOUS, 1);
    report_typemap("packed lower column P=32", &(tri_t){32, 1, 0, 1, 1, 0},
                   MPI_COMBINER_INDEXED_BLOCK, 32 + 2);
    report_typemap("equal rows, 2 blocks, strideinc 5", &(tri_t){2, 3, 0, 7, 5, 0},
                   MPI_COMBINER_VECTOR, 3);
    report_typemap("2 abutting rows from an empty one", &(tri_t){3, 0, 2, 9, -7, 0},
                   MPI_COMBINER_INDEXED_BLOCK, 3);
    {
        tri_t tail = packed_params(LOWER_TAIL, 32, 4);
        report_typemap("packed lower tail P=32 j0=4", &tail, MPI_COMBINER_INDEXED,
                       2 * 28 + 1);
    }
    CHECK(larger == 0, "%ld sweep cases larger than plain indexed", larger);
    tap_result(MPI_COMM_WORLD, "type map never larger than the plain MPI_Type_indexed "
                               "(sweep and the cases above)");
}

/* ---------------------------------------------------------------------- */
/* A real corner exchange between ranks */

static void test_exchange(void)
{
    static const int ks[] = {2, 3, 5};
    const int right = (rank + 1) % nprocs, left = (rank + nprocs - 1) % nprocs;
    for (int colmajor = 0; colmajor < 2; colmajor++)
        for (size_t ik = 0; ik < sizeof ks / sizeof ks[0]; ik++) {
            int k = ks[ik], n = 7, M = n + 2 * k, nel = k * (k - 1) / 2;
            double *A = xmalloc((size_t)M * M * sizeof *A);
            double *H = xmalloc((size_t)M * M * sizeof *H);
            double *flat = xmalloc((size_t)nel * sizeof *flat);
            long *ci = xmalloc((size_t)nel * sizeof *ci), *ch = xmalloc((size_t)nel * sizeof *ch);
            for (long x = 0; x < (long)M * M; x++)
                A[x] = 1e6 * rank + x;
            for (int corner = 0; corner < 4; corner++) {
                tri_t pi = corner_table(colmajor, corner, 1, n, k);
                tri_t ph = corner_table(colmajor, 3 - corner, 0, n, k);
                MPI_Datatype ti, th;
                char what[100];
                snprintf(what, sizeof what, "%s-major k=%d %s interior -> %s halo",
                         colmajor ? "column" : "row", k, corner_name[corner],
                         corner_name[3 - corner]);
                corner_cells(colmajor, corner, 1, 0, n, k, ci);
                corner_cells(colmajor, 3 - corner, 0, 0, n, k, ch);
                make_tri(&pi, MPI_DOUBLE, &ti);
                make_tri(&ph, MPI_DOUBLE, &th);
                MPI_Type_commit(&ti);
                MPI_Type_commit(&th);

                /* triangle -> contiguous */
                MPI_Sendrecv(A + pi.base, 1, ti, right, 1, flat, nel, MPI_DOUBLE, left, 1,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int t = 0; t < nel; t++)
                    CHECK(flat[t] == 1e6 * left + ci[t], "%s: contiguous[%d] = %g", what, t,
                          flat[t]);

                /* contiguous -> triangle */
                for (int t = 0; t < nel; t++)
                    flat[t] = 1e6 * rank + 0.5 + t;
                fill_sentinel(H, (size_t)M * M);
                MPI_Sendrecv(flat, nel, MPI_DOUBLE, right, 2, H + ph.base, 1, th, left, 2,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int t = 0; t < nel; t++) {
                    CHECK(H[ch[t]] == 1e6 * left + 0.5 + t, "%s: halo cell %ld = %g", what, ch[t],
                          H[ch[t]]);
                    fill_sentinel(&H[ch[t]], 1); /* checked: the scan below skips it */
                }
                for (long x = 0; x < (long)M * M; x++)
                    CHECK(is_sentinel(&H[x]), "%s: cell %ld outside the halo written", what, x);

                /* triangle -> triangle: the deep-halo corner exchange itself */
                fill_sentinel(H, (size_t)M * M);
                MPI_Sendrecv(A + pi.base, 1, ti, right, 3, H + ph.base, 1, th, left, 3,
                             MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int t = 0; t < nel; t++) {
                    CHECK(H[ch[t]] == 1e6 * left + ci[t], "%s: halo cell %ld = %g, expected %g",
                          what, ch[t], H[ch[t]], 1e6 * left + ci[t]);
                    fill_sentinel(&H[ch[t]], 1);
                }
                for (long x = 0; x < (long)M * M; x++)
                    CHECK(is_sentinel(&H[x]), "%s: cell %ld outside the halo written", what, x);
                MPI_Type_free(&ti);
                MPI_Type_free(&th);
            }
            free(A);
            free(H);
            free(flat);
            free(ci);
            free(ch);
        }
    tap_result(MPI_COMM_WORLD,
               "MPI_Sendrecv at %d ranks: triangle<->contiguous and interior triangle -> "
               "opposite halo triangle, all corners, both storage orders",
               nprocs);
}

/* ---------------------------------------------------------------------- */

int main(int argc, char **argv)
{
    MPI_Datatype pair2, pairgap, vec2, pairlb;
    static const sweep_t full = {5, 0, 3, 2, 6, 3}, small = {4, 0, 2, 1, 4, 2};
    long larger = 0;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);

    /* derived oldtypes: a pair of doubles resized to leave a gap, and two
     * doubles 16 bytes apart with lb -8 and extent 32 */
    MPI_Type_contiguous(2, MPI_DOUBLE, &pair2);
    MPI_Type_create_resized(pair2, 0, 3 * sizeof(double), &pairgap);
    MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec2);
    MPI_Type_create_resized(vec2, -8, 4 * sizeof(double), &pairlb);
    MPI_Type_commit(&pairgap);
    MPI_Type_commit(&pairlb);
    {
        const elem_t elems[3] = {{"double", MPI_DOUBLE, 1, 1, {0, 0}, 0},
                                 {"pair+gap", pairgap, 3, 2, {0, 1}, 0},
                                 {"pair@0,16 lb=-8 ext=32", pairlb, 4, 2, {0, 2}, -8}};

        test_errors();
        test_degenerate(&elems[2]);
        for (int colmajor = 0; colmajor < 2; colmajor++)
            for (int e = 0; e < 3; e++)
                test_corners(&elems[e], colmajor);
        for (int e = 0; e < 3; e++)
            test_packed(&elems[e]);
        test_sweep(&elems[0], &full, &larger);
        test_sweep(&elems[1], &small, &larger);
        test_sweep(&elems[2], &small, &larger);
        test_typemap(larger);
        test_exchange();
    }

    MPI_Type_free(&pair2);
    MPI_Type_free(&pairgap);
    MPI_Type_free(&vec2);
    MPI_Type_free(&pairlb);
    MPI_Finalize();
    return 0;
}
