/* The SpMV use of the SDDE: the rows of a real matrix (tests/data/NAME.mtx,
 * Matrix Market, see tests/data/README.md) are split contiguously over the
 * processes; each process sends, with Iso_alltoallv_crs, the sorted column
 * indices its rows need from every other process to that process (their
 * owner), and with Iso_alltoall_crs how many they are.  Every owner checks
 * what it got against the matrix itself (every process reads all of it):
 * the sources are exactly the other processes whose rows touch its columns,
 * ascending, and each message holds exactly those columns.  Every sparse
 * algorithm, on MPI_COMM_WORLD and, for the locality algorithms, on an
 * uneven pretend node layout.
 *
 * PER-ALGORITHM: no (the sparse algorithms are looped over here)
 * NPROCS: 1 2 4 7
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

static int rank, nprocs;

typedef struct {
    int n;         /* rows = columns considered: max(rows, cols) */
    int *rowptr;   /* CSR pattern, n + 1 */
    int *col;      /* sorted, unique per row */
} pattern_t;

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Reads the pattern of a Matrix Market coordinate file (symmetric ones
 * expanded).  Returns 0 on success. */
static int read_mtx(const char *path, pattern_t *m)
{
    FILE *f = fopen(path, "r");
    char line[1024], field[32] = "", sym[32] = "";
    int rows, cols, nz, symmetric, *ri, *ci, k = 0, *fill;
    if (f == NULL)
        return -1;
    if (!fgets(line, sizeof line, f) ||
        sscanf(line, "%%%%MatrixMarket matrix coordinate %31s %31s", field, sym) != 2) {
        fclose(f);
        return -1;
    }
    symmetric = strcmp(sym, "general") != 0;
    do
        if (!fgets(line, sizeof line, f)) {
            fclose(f);
            return -1;
        }
    while (line[0] == '%');
    if (sscanf(line, "%d %d %d", &rows, &cols, &nz) != 3) {
        fclose(f);
        return -1;
    }
    m->n = rows > cols ? rows : cols;
    ri = malloc(sizeof(int) * 2 * (size_t)nz);
    ci = malloc(sizeof(int) * 2 * (size_t)nz);
    for (int e = 0; e < nz; e++) {
        int i, j;
        if (!fgets(line, sizeof line, f) || sscanf(line, "%d %d", &i, &j) != 2) {
            fclose(f);
            free(ri), free(ci);
            return -1;
        }
        ri[k] = i - 1, ci[k++] = j - 1;
        if (symmetric && i != j)
            ri[k] = j - 1, ci[k++] = i - 1;
    }
    fclose(f);
    m->rowptr = calloc((size_t)m->n + 1, sizeof(int));
    m->col = malloc(sizeof(int) * ((size_t)k + 1));
    fill = calloc((size_t)m->n + 1, sizeof(int));
    for (int e = 0; e < k; e++)
        m->rowptr[ri[e] + 1]++;
    for (int r = 0; r < m->n; r++)
        m->rowptr[r + 1] += m->rowptr[r];
    for (int e = 0; e < k; e++)
        m->col[m->rowptr[ri[e]] + fill[ri[e]]++] = ci[e];
    for (int r = 0; r < m->n; r++) /* sort each row; duplicates stay (harmless) */
        qsort(m->col + m->rowptr[r], (size_t)(m->rowptr[r + 1] - m->rowptr[r]), sizeof(int),
              cmp_int);
    free(ri), free(ci), free(fill);
    return 0;
}

/* Contiguous rows: the first n % p processes get one more. */
static int first_row(int n, int p, int q)
{
    return q * (n / p) + (q < n % p ? q : n % p);
}

static int owner(int n, int p, int c)
{
    int q = 0;
    while (q + 1 < p && first_row(n, p, q + 1) <= c)
        q++;
    return q;
}

/* The sorted, unique columns owned by `to` in the rows of process q (to != q). */
static int needed(const pattern_t *m, int p, int q, int to, int *out)
{
    int k = 0;
    for (int r = first_row(m->n, p, q); r < first_row(m->n, p, q + 1); r++)
        for (int e = m->rowptr[r]; e < m->rowptr[r + 1]; e++)
            if (owner(m->n, p, m->col[e]) == to)
                out[k++] = m->col[e];
    qsort(out, (size_t)k, sizeof(int), cmp_int);
    {
        int u = 0;
        for (int i = 0; i < k; i++)
            if (u == 0 || out[u - 1] != out[i])
                out[u++] = out[i];
        k = u;
    }
    return k;
}

/* The messages this process must receive, sources ascending: n of them,
 * from src[k], cnt[k] indices at idx[off[k]]. */
typedef struct {
    int n, *src, *cnt, *off, *idx;
} expect_t;

static expect_t expected(const pattern_t *m)
{
    expect_t e = {0, malloc(sizeof(int) * (size_t)nprocs), malloc(sizeof(int) * (size_t)nprocs),
                  malloc(sizeof(int) * (size_t)nprocs),
                  malloc(sizeof(int) * ((size_t)m->rowptr[m->n] + 1))}; /* before dedup */
    int total = 0;
    for (int q = 0; q < nprocs; q++) {
        int c = q == rank ? 0 : needed(m, nprocs, q, rank, e.idx + total);
        if (c == 0)
            continue;
        e.src[e.n] = q, e.cnt[e.n] = c, e.off[e.n] = total, e.n++;
        total += c;
    }
    return e;
}

static void exchange(const pattern_t *m, const char *name, const char *alg, MPI_Comm comm,
                     const char *where)
{
    int p = nprocs, n = 0, *dest = malloc(sizeof(int) * (size_t)p);
    int *counts = malloc(sizeof(int) * (size_t)p), *displs = malloc(sizeof(int) * (size_t)p);
    int *idx = malloc(sizeof(int) * ((size_t)m->rowptr[m->n] + 1)), total = 0;
    int recv_nnz, *src, *rcounts, *rdispls, rc;
    expect_t e = expected(m);
    void *rvals;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", alg);
    for (int o = p - 1; o >= 0; o--) { /* destinations in descending order */
        int k;
        if (o == rank || (k = needed(m, p, rank, o, idx + total)) == 0)
            continue;
        dest[n] = o, counts[n] = k, displs[n] = total, total += k, n++;
    }
    for (int variable = 1; variable >= 0; variable--) {
        const char *form = variable ? "alltoallv" : "alltoall";
        if (variable && !strcmp(alg, "rma"))
            continue;
        if (variable)
            rc = Iso_alltoallv_crs(n, dest, counts, displs, MPI_INT, idx, &recv_nnz, &src,
                                   &rcounts, &rdispls, MPI_INT, &rvals, info, comm);
        else /* the number of indices, one int per message */
            rc = Iso_alltoall_crs(n, dest, 1, MPI_INT, counts, &recv_nnz, &src, 1, MPI_INT,
                                  &rvals, info, comm);
        CHECK(rc == MPI_SUCCESS, "%s %s %s: %s rc=%d", name, alg, where, form, rc);
        if (rc != MPI_SUCCESS)
            continue;
        CHECK_EQ_INT(recv_nnz, e.n, "%s %s %s: %s recv_nnz", name, alg, where, form);
        for (int k = 0; k < recv_nnz && k < e.n; k++) {
            int c = e.cnt[k];
            CHECK_EQ_INT(src[k], e.src[k], "%s %s %s: %s source %d", name, alg, where, form, k);
            if (!variable) {
                CHECK_EQ_INT(((int *)rvals)[k], c, "%s %s %s: count from %d", name, alg, where,
                             e.src[k]);
                continue;
            }
            CHECK_EQ_INT(rcounts[k], c, "%s %s %s: indices from %d", name, alg, where, e.src[k]);
            CHECK(rcounts[k] != c || !memcmp((int *)rvals + rdispls[k], e.idx + e.off[k],
                                             sizeof(int) * (size_t)c),
                  "%s %s %s: wrong indices from %d", name, alg, where, e.src[k]);
        }
        free(src), free(rvals);
        if (variable)
            free(rcounts), free(rdispls);
    }
    MPI_Info_free(&info);
    free(dest), free(counts), free(displs), free(idx);
    free(e.src), free(e.cnt), free(e.off), free(e.idx);
}

int main(int argc, char **argv)
{
    static const char *const mats[] = {"bcsstk01", "494_bus", "west0479"};
    static const char *const algs[] = {"personalized", "nbx", "rma", "locality-personalized",
                                       "locality-nbx", "auto"};
    const char *dir = getenv("ISO_TEST_DATA") ? getenv("ISO_TEST_DATA") : "tests/data";
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    unsetenv("ISO_SPARSE_ALGORITHM");
    for (size_t k = 0; k < sizeof mats / sizeof mats[0]; k++) {
        char path[512];
        pattern_t m;
        snprintf(path, sizeof path, "%s/%s.mtx", dir, mats[k]);
        if (read_mtx(path, &m) != 0) {
            CHECK(0, "cannot read %s (run from the repository root or set ISO_TEST_DATA)", path);
            tap_result(MPI_COMM_WORLD, "%s", mats[k]);
            continue;
        }
        unsetenv("ISO_NODE_MAP");
        for (size_t a = 0; a < sizeof algs / sizeof algs[0]; a++)
            exchange(&m, mats[k], algs[a], MPI_COMM_WORLD, "world");
        {
            /* two nodes, 1/3 and 2/3 of the ranks, interleaved */
            char map[8 * 64 + 1] = "";
            MPI_Comm comm;
            for (int r = 0; r < nprocs && r < 64; r++)
                strcat(map, r % 3 == 1 ? (r ? ",1" : "1") : (r ? ",0" : "0"));
            if (nprocs <= 64)
                setenv("ISO_NODE_MAP", map, 1);
            MPI_Comm_dup(MPI_COMM_WORLD, &comm);
            exchange(&m, mats[k], "locality-personalized", comm, "uneven nodes");
            exchange(&m, mats[k], "locality-nbx", comm, "uneven nodes");
            MPI_Comm_free(&comm);
            unsetenv("ISO_NODE_MAP");
        }
        tap_result(MPI_COMM_WORLD, "%s (%d rows): column indices to their owners, every algorithm",
                   mats[k], m.n);
        free(m.rowptr), free(m.col);
    }
    MPI_Finalize();
    return 0;
}
