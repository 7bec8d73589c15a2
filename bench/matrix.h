/* Sparse matrices for the benchmarks (bench/sdde.c, bench/spmv.c,
 * bench/vptsim.c): a Matrix Market reader, row partitions and the x-vector
 * pattern of a row-parallel y = Ax.  Header only; no MPI calls, so the
 * one-process simulator can use it without MPI.  Errors come back as -1 with
 * a message in err (the caller decides how to stop).
 *
 *   mm_read(path, &m, err, len)      coordinate Matrix Market, plain or .gz
 *                                    (read through `gzip -dc`); symmetric
 *                                    and skew-symmetric ones expanded
 *   part_rows_nnz(&m, K, part)       contiguous rows, balanced by nonzeros
 *   part_metis(&m, K, part, err, len) METIS k-way partition of the graph of
 *                                    A + A^T (vertex weight: nonzeros of the
 *                                    row); only with ISO_HAVE_METIS
 *   mm_needs_compute(&m, part, K, &nd) what each process needs of x
 *   mm_needs_by_owner(&nd, part, K, ...) the same turned around: who needs
 *                                    which columns of each owner
 *   mm_sends_by_source(&nd, part, K, word, ...) the same as messages, listed
 *                                    by sending process
 *
 * The matrix is treated as square, n = max(rows, cols) (x and y have n
 * entries, rows and x entries partitioned alike).  Pattern matrices get
 * values 1 + ((7 i + 13 j) mod 10) / 16, exact in binary and different per
 * entry, so that a y = Ax check notices misplaced x entries. */
#ifndef ISO_BENCH_MATRIX_H
#define ISO_BENCH_MATRIX_H
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef ISO_HAVE_METIS
#include <metis.h>
#endif

typedef struct {
    int n;          /* max(rows, cols) */
    int rows, cols; /* from the size line */
    long nnz;       /* entries after symmetric expansion */
    int *rowptr;    /* CSR: n + 1 */
    int *col;       /* nnz column indices, in file order within a row */
    double *val;    /* nnz values */
} mm_matrix;

/* What process q needs of x: col[ptr[q] .. ptr[q+1]), sorted by owner
 * (part[j]) then column; only columns other processes own. */
typedef struct {
    long long *ptr; /* K + 1 */
    int *col;
} mm_needs;

__attribute__((format(printf, 3, 4), unused)) static int mm_fail(char *err, size_t len,
                                                                  const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, len, fmt, ap);
    va_end(ap);
    return -1;
}

__attribute__((unused)) static void mm_free(mm_matrix *m)
{
    free(m->rowptr), free(m->col), free(m->val);
    m->rowptr = m->col = NULL;
    m->val = NULL;
}

__attribute__((unused)) static FILE *mm_open(const char *path, int *piped)
{
    size_t len = strlen(path);
    *piped = len > 3 && !strcmp(path + len - 3, ".gz");
    if (*piped) {
        char cmd[4200];
        if (strchr(path, '\'') || len > 4000)
            return NULL;
        snprintf(cmd, sizeof cmd, "gzip -dc '%s' 2>/dev/null", path);
        return popen(cmd, "r");
    }
    return fopen(path, "r");
}

/* Reads a coordinate Matrix Market file (real, integer or pattern; general,
 * symmetric or skew-symmetric).  0, or -1 with a message in err. */
__attribute__((unused)) static int mm_read(const char *path, mm_matrix *m, char *err, size_t len)
{
    char line[1024], field[32] = "", sym[32] = "";
    int piped = 0, rows, cols, pattern, mirror, rc = -1, *fill = NULL;
    long nz, k = 0, *ri = NULL, *ci = NULL;
    double *vi = NULL;
    FILE *f = mm_open(path, &piped);
    memset(m, 0, sizeof *m);
    if (f == NULL)
        return mm_fail(err, len, "%s: cannot open", path);
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket matrix coordinate %31s %31s", field, sym) != 2) {
        mm_fail(err, len, "%s: not a coordinate Matrix Market file", path);
        goto done;
    }
    pattern = !strcmp(field, "pattern");
    if (!pattern && strcmp(field, "real") && strcmp(field, "integer")) {
        mm_fail(err, len, "%s: field \"%s\" (real, integer or pattern)", path, field);
        goto done;
    }
    mirror = !strcmp(sym, "general") ? 0 : !strcmp(sym, "skew-symmetric") ? -1 : 1;
    do
        if (!fgets(line, sizeof line, f))
            line[0] = '\0';
    while (line[0] == '%');
    if (sscanf(line, "%d %d %ld", &rows, &cols, &nz) != 3 || rows < 1 || cols < 1 || nz < 0) {
        mm_fail(err, len, "%s: no size line", path);
        goto done;
    }
    m->rows = rows, m->cols = cols;
    m->n = rows > cols ? rows : cols;
    ri = malloc(sizeof(long) * 2 * (size_t)(nz + 1));
    ci = malloc(sizeof(long) * 2 * (size_t)(nz + 1));
    vi = malloc(sizeof(double) * 2 * (size_t)(nz + 1));
    if (!ri || !ci || !vi) {
        mm_fail(err, len, "%s: out of memory for %ld entries", path, nz);
        goto done;
    }
    for (long e = 0; e < nz; e++) {
        long i, j;
        double v = 0;
        int got = fgets(line, sizeof line, f) ? sscanf(line, "%ld %ld %lf", &i, &j, &v) : 0;
        if (got < (pattern ? 2 : 3) || i < 1 || j < 1 || i > rows || j > cols) {
            mm_fail(err, len, "%s: bad entry %ld", path, e + 1);
            goto done;
        }
        if (pattern)
            v = 1.0 + (double)((7 * (i - 1) + 13 * (j - 1)) % 10) / 16.0;
        ri[k] = i - 1, ci[k] = j - 1, vi[k++] = v;
        if (mirror && i != j)
            ri[k] = j - 1, ci[k] = i - 1, vi[k++] = mirror * v;
    }
    m->nnz = k;
    m->rowptr = calloc((size_t)m->n + 1, sizeof(int));
    m->col = malloc(sizeof(int) * (size_t)(k + 1));
    m->val = malloc(sizeof(double) * (size_t)(k + 1));
    fill = calloc((size_t)m->n + 1, sizeof(int));
    if (!m->rowptr || !m->col || !m->val || !fill) {
        mm_fail(err, len, "%s: out of memory for %ld entries", path, k);
        goto done;
    }
    for (long e = 0; e < k; e++)
        m->rowptr[ri[e] + 1]++;
    for (int r = 0; r < m->n; r++)
        m->rowptr[r + 1] += m->rowptr[r];
    for (long e = 0; e < k; e++) {
        long at = m->rowptr[ri[e]] + fill[ri[e]]++;
        m->col[at] = (int)ci[e];
        m->val[at] = vi[e];
    }
    rc = 0;
done:
    if (piped)
        pclose(f);
    else
        fclose(f);
    free(ri), free(ci), free(vi), free(fill);
    if (rc)
        mm_free(m);
    return rc;
}

/* Contiguous rows, part q ending where the nonzeros so far first reach
 * (q + 1) nnz / K; parts may be empty when K exceeds the rows. */
__attribute__((unused)) static void part_rows_nnz(const mm_matrix *m, int K, int *part)
{
    int q = 0;
    for (int r = 0; r < m->n; r++) {
        /* the row goes to the first part whose share its first nonzero is in */
        while (q < K - 1 && (long double)m->rowptr[r] * K >= (long double)(q + 1) * m->nnz)
            q++;
        part[r] = q;
    }
}

/* METIS k-way partition of the graph of A + A^T without the diagonal,
 * vertices weighted by their row's nonzeros (so parts balance the SpMV
 * work).  0, or -1 with a message in err (also when built without METIS). */
__attribute__((unused)) static int part_metis(const mm_matrix *m, int K, int *part, char *err,
                                              size_t len)
{
#ifdef ISO_HAVE_METIS
    idx_t nv = m->n, ncon = 1, nparts = K, cut = 0, opts[METIS_NOPTIONS];
    idx_t *xadj = NULL, *adj = NULL, *vwgt = NULL, *where = NULL;
    long *deg = calloc((size_t)m->n + 1, sizeof(long)), e2 = 0;
    int rc = -1, st;
    if (K == 1 || m->n == 0) {
        for (int r = 0; r < m->n; r++)
            part[r] = 0;
        free(deg);
        return 0;
    }
    /* the symmetric graph: both directions of every off-diagonal entry,
     * duplicates removed per vertex below */
    for (int r = 0; r < m->n && deg; r++)
        for (int e = m->rowptr[r]; e < m->rowptr[r + 1]; e++)
            if (m->col[e] != r)
                deg[r]++, deg[m->col[e]]++;
    xadj = malloc(sizeof(idx_t) * ((size_t)m->n + 1));
    adj = malloc(sizeof(idx_t) * (size_t)(2 * m->nnz + 1));
    vwgt = malloc(sizeof(idx_t) * ((size_t)m->n + 1));
    where = malloc(sizeof(idx_t) * ((size_t)m->n + 1));
    if (!deg || !xadj || !adj || !vwgt || !where) {
        mm_fail(err, len, "METIS: out of memory");
        goto done;
    }
    xadj[0] = 0;
    for (int r = 0; r < m->n; r++)
        xadj[r + 1] = xadj[r] + deg[r], deg[r] = xadj[r];
    for (int r = 0; r < m->n; r++)
        for (int e = m->rowptr[r]; e < m->rowptr[r + 1]; e++)
            if (m->col[e] != r)
                adj[deg[r]++] = m->col[e], adj[deg[m->col[e]]++] = r;
    { /* drop repeated neighbors (A and A^T both have most entries) */
        idx_t *mark = where, at = 0, start;
        for (int r = 0; r < m->n; r++)
            mark[r] = -1;
        for (int r = 0; r < m->n; r++) {
            start = at;
            for (idx_t e = xadj[r]; e < xadj[r + 1]; e++)
                if (mark[adj[e]] != r)
                    mark[adj[e]] = r, adj[at++] = adj[e];
            xadj[r] = start;
        }
        xadj[m->n] = at;
        e2 = at;
    }
    for (int r = 0; r < m->n; r++)
        vwgt[r] = m->rowptr[r + 1] - m->rowptr[r] + 1;
    METIS_SetDefaultOptions(opts);
    opts[METIS_OPTION_SEED] = 1; /* the same partition on every process */
    st = METIS_PartGraphKway(&nv, &ncon, xadj, adj, vwgt, NULL, NULL, &nparts, NULL, NULL, opts,
                             &cut, where);
    if (st != METIS_OK) {
        mm_fail(err, len, "METIS_PartGraphKway: error %d (%ld edges, %d parts)", st, (long)e2, K);
        goto done;
    }
    for (int r = 0; r < m->n; r++)
        part[r] = (int)where[r];
    rc = 0;
done:
    free(deg), free(xadj), free(adj), free(vwgt), free(where);
    return rc;
#else
    (void)m, (void)K, (void)part;
    return mm_fail(err, len, "built without METIS (libmetis-dev: run 'make deps', then rebuild)");
#endif
}

static const int *mm_sort_part_; /* qsort has no context argument */

__attribute__((unused)) static int mm_by_owner(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    int px = mm_sort_part_[x], py = mm_sort_part_[y];
    if (px != py)
        return (px > py) - (px < py);
    return (x > y) - (x < y);
}

/* The x entries each process needs from the others under partition part.
 * 0, or -1 (out of memory). */
__attribute__((unused)) static int mm_needs_compute(const mm_matrix *m, const int *part, int K,
                                                    mm_needs *nd)
{
    long long *rows_at = calloc((size_t)K + 1, sizeof(long long)), total = 0;
    int *rows = malloc(sizeof(int) * ((size_t)m->n + 1));
    int *mark = malloc(sizeof(int) * ((size_t)m->n + 1));
    nd->ptr = calloc((size_t)K + 1, sizeof(long long));
    nd->col = malloc(sizeof(int) * (size_t)(m->nnz + 1));
    if (!rows_at || !rows || !mark || !nd->ptr || !nd->col) {
        free(rows_at), free(rows), free(mark), free(nd->ptr), free(nd->col);
        nd->ptr = NULL, nd->col = NULL;
        return -1;
    }
    for (int r = 0; r < m->n; r++) /* the rows of each part (counting sort) */
        rows_at[part[r] + 1]++;
    for (int q = 0; q < K; q++)
        rows_at[q + 1] += rows_at[q];
    for (int r = 0; r < m->n; r++)
        rows[rows_at[part[r]]++] = r;
    for (int q = K; q > 0; q--)
        rows_at[q] = rows_at[q - 1];
    rows_at[0] = 0;
    for (int j = 0; j < m->n; j++)
        mark[j] = -1;
    mm_sort_part_ = part;
    for (int q = 0; q < K; q++) {
        long long start = total;
        for (long long i = rows_at[q]; i < rows_at[q + 1]; i++)
            for (int e = m->rowptr[rows[i]]; e < m->rowptr[rows[i] + 1]; e++) {
                int j = m->col[e];
                if (part[j] != q && mark[j] != q)
                    mark[j] = q, nd->col[total++] = j;
            }
        qsort(nd->col + start, (size_t)(total - start), sizeof(int), mm_by_owner);
        nd->ptr[q + 1] = total;
    }
    free(rows_at), free(rows), free(mark);
    return 0;
}

/* nd turned around: who needs which columns of each owner.  Owner o's
 * requests are r = ptr[o] .. ptr[o+1]), from process needer[r] (ascending),
 * count[r] columns each; with col_out, the columns of every request in
 * request order (owner by owner), ascending within each.  The transposition
 * behind every serial oracle of the benchmarks.  0, or -1 (out of memory;
 * nothing allocated). */
__attribute__((unused)) static int mm_needs_by_owner(const mm_needs *nd, const int *part, int K,
                                                     long long **ptr_out, int **needer_out,
                                                     int **count_out, int **col_out)
{
    long long *ptr = calloc((size_t)K + 2, sizeof(long long)), *fill = NULL, *cfill = NULL;
    long long total = 0, ncols = nd->ptr[K];
    int *needer = NULL, *count = NULL, *col = NULL;
    if (!ptr)
        return -1;
    for (int q = 0; q < K; q++) /* requests per owner: one run of nd[q] per owner */
        for (long long i = nd->ptr[q]; i < nd->ptr[q + 1]; i++)
            if (i == nd->ptr[q] || part[nd->col[i]] != part[nd->col[i - 1]])
                ptr[part[nd->col[i]] + 1]++, total++;
    for (int o = 0; o < K; o++)
        ptr[o + 1] += ptr[o];
    fill = malloc(sizeof(long long) * ((size_t)K + 1));
    needer = malloc(sizeof(int) * (size_t)(total + 1));
    count = malloc(sizeof(int) * (size_t)(total + 1));
    if (col_out) {
        col = malloc(sizeof(int) * (size_t)(ncols + 1));
        cfill = calloc((size_t)K + 1, sizeof(long long));
    }
    if (!fill || !needer || !count || (col_out && (!col || !cfill))) {
        free(ptr), free(fill), free(needer), free(count), free(col), free(cfill);
        return -1;
    }
    memcpy(fill, ptr, sizeof(long long) * (size_t)K);
    if (col_out) { /* where each owner's columns start: its columns counted */
        for (long long i = 0; i < ncols; i++)
            cfill[part[nd->col[i]] + 1]++;
        for (int o = 0; o < K - 1; o++)
            cfill[o + 1] += cfill[o];
    }
    for (int q = 0; q < K; q++) /* q ascending: every owner's list is sorted */
        for (long long i = nd->ptr[q]; i < nd->ptr[q + 1]; i++) {
            int o = part[nd->col[i]];
            if (i == nd->ptr[q] || o != part[nd->col[i - 1]]) {
                needer[fill[o]] = q;
                count[fill[o]++] = 0;
            }
            count[fill[o] - 1]++;
            if (col_out)
                col[cfill[o]++] = nd->col[i];
        }
    free(fill), free(cfill);
    *ptr_out = ptr, *needer_out = needer, *count_out = count;
    if (col_out)
        *col_out = col;
    return 0;
}

/* The messages of nd by source, as arrays for bench/vptmodel.h: process o
 * sends dest[ptr[o] .. ptr[o+1]) (ascending) word bytes per needed column,
 * bytes[...].  0, or -1 (out of memory; nothing allocated). */
__attribute__((unused)) static int mm_sends_by_source(const mm_needs *nd, const int *part, int K,
                                                      long long word, long long **ptr_out,
                                                      int **dest_out, long long **bytes_out)
{
    long long *ptr, *bytes;
    int *dest, *count;
    if (mm_needs_by_owner(nd, part, K, &ptr, &dest, &count, NULL))
        return -1;
    if ((bytes = malloc(sizeof(long long) * (size_t)(ptr[K] + 1))) == NULL) {
        free(ptr), free(dest), free(count);
        return -1;
    }
    for (long long r = 0; r < ptr[K]; r++)
        bytes[r] = word * count[r];
    free(count);
    *ptr_out = ptr, *dest_out = dest, *bytes_out = bytes;
    return 0;
}

__attribute__((unused)) static void mm_needs_free(mm_needs *nd)
{
    free(nd->ptr), free(nd->col);
    nd->ptr = NULL, nd->col = NULL;
}
#endif
