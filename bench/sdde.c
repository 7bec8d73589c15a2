/* sdde: times the sparse dynamic data exchange (Iso_alltoallv_crs,
 * Iso_alltoall_crs) with every sparse algorithm on the communication
 * pattern of a sparse matrix-vector product.
 *
 * The rows of a Matrix Market matrix (.mtx, or .mtx.gz read through
 * `gzip -dc`) are split contiguously over the processes (the first
 * n mod p get one more).  Process q needs, from every other process o, the
 * columns of its rows that o owns:
 *   variable  (Iso_alltoallv_crs): q sends o those column indices (ints),
 *             or with --values double the x values of those columns
 *             (doubles equal to the indices: 8 bytes per column);
 *   constant  (Iso_alltoall_crs):  q sends o one int, their number.
 * Rank 0 alone reads the matrix: it works out every process's messages and,
 * serially from them, what every process must receive (sources ascending,
 * counts, indices), and scatters both, so that the matrix is in memory once
 * (under SMPI all processes share one address space).  Every variant is
 * first checked against that expected result.  Then every
 * repetition times one batch of --iters calls of each variant (outputs
 * freed in the batch: part of the cost), the variants in a new random order
 * each repetition (the same on all ranks), each batch after one untimed
 * call and a barrier; time per call = batch time / iters, maximised over
 * the ranks.  Reported: median and quartiles over the repetitions
 * (microseconds), the ratio of medians to personalized, and the messages
 * of one call (MPI_Isend, MPI_Issend, MPI_Put through the profiling
 * interface) of the busiest process: total, inter-node, and to another
 * package of the same node (a two-level map).
 *
 *   mpiexec -n P sdde [--matrix PATH[,PATH...]] [--reps N] [--iters K]
 *       [--nodes N | --node-map LIST] [--locality LEVEL] [--variants LIST]
 *       [--forms v,c] [--values int|double]
 *
 * Nodes: the library's (shared memory, or ISO_NODE_MAP from the
 * environment), or a pretend layout set by --nodes N (N nodes of
 * consecutive ranks, sizes differing by at most one) or --node-map LIST
 * (ISO_NODE_MAP syntax, node[.package[.numa]] entries included); either
 * sets ISO_NODE_MAP before the benchmark's communicator is made.
 * --locality LEVEL gives every variant info iso_locality=LEVEL (node,
 * package, numa, auto).  On one machine a pretend layout changes which
 * messages count as inter-node, not what they cost: it shows message
 * counts, not network gains.  See bench/README.md. */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "matrix.h"
#ifdef ISO_BENCH_ADVANCE
#include "advance.h" /* MPI Advance's SDDE: make ADVANCE=DIR */
#endif

#define MAXV 16

static int rank, nprocs;
static int doubles; /* --values double: the variable form sends 8-byte x values */

/* ---- counting the library's messages (MPI profiling interface) ------------
 * The library is linked statically, so its MPI_Isend, MPI_Issend and
 * MPI_Put calls come here.  Counting is on only around single calls made
 * to count, never while timing.  A destination is translated to its world
 * rank through the communicator's (window's) group: the private duplicates
 * have the world's ranks, the node (region) communicators their own. */
static int counting;
static const int *node_of;    /* node of each world rank */
static const int *package_of; /* package (in its node) of each world rank */
static long long count_msgs, count_inter, count_package, count_isend, count_issend, count_put;

static void count(int dest, MPI_Comm comm, MPI_Win win)
{
    MPI_Group g, world;
    int w = MPI_UNDEFINED;
    if (!counting)
        return;
    count_msgs++;
    if (win != MPI_WIN_NULL)
        PMPI_Win_get_group(win, &g);
    else
        PMPI_Comm_group(comm, &g);
    PMPI_Comm_group(MPI_COMM_WORLD, &world);
    PMPI_Group_translate_ranks(g, 1, &dest, world, &w);
    PMPI_Group_free(&g);
    PMPI_Group_free(&world);
    if (w < 0 || w >= nprocs)
        return;
    if (node_of[w] != node_of[rank])
        count_inter++;
    else if (package_of[w] != package_of[rank])
        count_package++;
}

int MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    count(dest, comm, MPI_WIN_NULL);
    count_isend += counting;
    return PMPI_Isend(buf, n, type, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    count(dest, comm, MPI_WIN_NULL);
    count_issend += counting;
    return PMPI_Issend(buf, n, type, dest, tag, comm, request);
}

int MPI_Put(const void *buf, int n, MPI_Datatype type, int target, MPI_Aint disp, int tn,
            MPI_Datatype ttype, MPI_Win win)
{
    count(target, MPI_COMM_NULL, win);
    count_put += counting;
    return PMPI_Put(buf, n, type, target, disp, tn, ttype, win);
}

/* ---- the matrix and the pattern ------------------------------------------- */
typedef mm_matrix matrix_t; /* bench/matrix.h; only the pattern is used here */

/* Reads the matrix (bench/matrix.h); dies on errors. */
static void read_matrix(const char *path, matrix_t *m)
{
    char err[512];
    if (mm_read(path, m, err, sizeof err)) {
        fprintf(stderr, "sdde: %s\n", err);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
}

static int owner(int n, int c)
{
    int base = n / nprocs, extra = n % nprocs;
    if (c < extra * (base + 1))
        return c / (base + 1);
    return extra + (c - extra * (base + 1)) / (base ? base : 1);
}

/* What one process sends: n messages to dest[], counts[], at displs[] of idx. */
typedef struct {
    int n, *dest, *counts, *displs, *idx;
    double *x; /* the x values of idx's columns (--values double) */
} sends_t;

static void sends_free(sends_t *s)
{
    free(s->dest), free(s->counts), free(s->displs), free(s->idx), free(s->x);
}

/* ---- variants -------------------------------------------------------------- */
typedef struct {
    char name[32];
    MPI_Info info;
    int advance; /* MPI Advance's variant (bench/advance.h), or -1 */
    long long msgs, inter, package, isend, issend, put; /* one call, this process */
    double *t;                                 /* per repetition */
} variant_t;

typedef struct {
    int n_recv, *src, *counts;
    void *vals; /* int, or double with --values double (variable form) */
} result_t;

/* One call; frees the outputs unless res is given. */
static int one_call(const sends_t *s, int variable, variant_t *v, MPI_Comm comm, result_t *res)
{
    int recv_nnz, *src, *rcounts = NULL, *rdispls = NULL, rc;
    void *rvals;
#ifdef ISO_BENCH_ADVANCE
    if (v->advance >= 0) { /* its outputs: arrival order, MPIL_Alloc */
        int size = variable && doubles ? (int)sizeof(double) : (int)sizeof(int), total = 0;
        int recv_size = 0;
        MPI_Datatype t = variable && doubles ? MPI_DOUBLE : MPI_INT;
        if (variable) {
            for (int i = 0; i < s->n; i++)
                total += s->counts[i];
            MPIL_Set_alltoallv_crs(advance_variants[v->advance].v_method);
            rc = MPIL_Alltoallv_crs(s->n, total, s->dest, s->counts, s->displs, t,
                                    doubles ? (const void *)s->x : s->idx, &recv_nnz, &recv_size,
                                    &src, &rcounts, &rdispls, t, &rvals, advance_info,
                                    advance_comm);
        } else {
            MPIL_Set_alltoall_crs(advance_variants[v->advance].c_method);
            rc = MPIL_Alltoall_crs(s->n, s->dest, 1, MPI_INT, s->counts, &recv_nnz, &src, 1,
                                   MPI_INT, &rvals, advance_info, advance_comm);
        }
        if (rc != MPI_SUCCESS)
            return rc;
        if (res) { /* sorted by source into malloc'd copies, for verify */
            int n = recv_nnz, *s2 = xmalloc(sizeof(int) * (size_t)(n + 1)), *c2 = NULL, vals = 0;
            char *v2;
            memcpy(s2, src, sizeof(int) * (size_t)n);
            if (variable) {
                c2 = xmalloc(sizeof(int) * (size_t)(n + 1));
                memcpy(c2, rcounts, sizeof(int) * (size_t)n);
                for (int i = 0; i < n; i++)
                    vals += rcounts[i];
            } else {
                vals = n;
            }
            v2 = xmalloc((size_t)size * (size_t)(vals + 1));
            memcpy(v2, rvals, (size_t)size * (size_t)vals);
            advance_sort(n, s2, c2, rdispls, v2, size);
            *res = (result_t){n, s2, c2, v2};
        }
        MPIL_Free(src), MPIL_Free(rcounts), MPIL_Free(rdispls), MPIL_Free(rvals);
        return MPI_SUCCESS;
    }
#endif
    if (variable)
        rc = Iso_alltoallv_crs(s->n, s->dest, s->counts, s->displs, doubles ? MPI_DOUBLE : MPI_INT,
                               doubles ? (const void *)s->x : s->idx, &recv_nnz, &src, &rcounts,
                               &rdispls, doubles ? MPI_DOUBLE : MPI_INT, &rvals, v->info, comm);
    else
        rc = Iso_alltoall_crs(s->n, s->dest, 1, MPI_INT, s->counts, &recv_nnz, &src, 1, MPI_INT,
                              &rvals, v->info, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    if (res) {
        *res = (result_t){recv_nnz, src, rcounts, rvals};
        free(rdispls);
        return MPI_SUCCESS;
    }
    free(src), free(rcounts), free(rdispls), free(rvals);
    return MPI_SUCCESS;
}

/* ---- each process's part: rank 0 works it out, MPI_Scatterv hands it out ----
 * A part is packed as ints: n, dest[n], counts[n], idx[sum counts] (what it
 * sends), then n_recv, src[n_recv], counts[n_recv], vals[sum counts] (what
 * it must receive).  The receiving half is a serial transposition of all
 * processes' sending halves on rank 0: an oracle that involves no SDDE. */
typedef struct {
    sends_t s;       /* what this process sends */
    result_t expect; /* what it must receive; vals are ints (the column indices) */
} part_t;

/* Unpacks one half at b into who, counts, displs (if wanted) and vals;
 * returns the ints it took. */
static int unpack_half(const int *b, int *n, int **who, int **counts, int **displs, int **vals)
{
    int total = 0;
    *n = b[0];
    *who = xmalloc(sizeof(int) * (size_t)(*n + 1));
    *counts = xmalloc(sizeof(int) * (size_t)(*n + 1));
    if (displs)
        *displs = xmalloc(sizeof(int) * (size_t)(*n + 1));
    memcpy(*who, b + 1, sizeof(int) * (size_t)*n);
    memcpy(*counts, b + 1 + *n, sizeof(int) * (size_t)*n);
    for (int i = 0; i < *n; i++) {
        if (displs)
            (*displs)[i] = total;
        total += (*counts)[i];
    }
    *vals = xmalloc(sizeof(int) * (size_t)(total + 1));
    memcpy(*vals, b + 1 + 2 * *n, sizeof(int) * (size_t)total);
    return 1 + 2 * *n + total;
}

/* Rank 0: every process's packed part, concatenated in rank order, with
 * each part's length in len[] (nprocs).  Process q sends to each owner the
 * columns of its rows that the owner holds (mm_needs_compute, rows split
 * evenly as owner() says), and receives the same turned around
 * (mm_needs_by_owner). */
static int *pack_parts(const matrix_t *m, int *len)
{
    int *part = xmalloc(sizeof(int) * ((size_t)m->n + 1));
    int *nsend = xmalloc(sizeof(int) * (size_t)nprocs); /* messages each process sends */
    int *needer = NULL, *count = NULL, *col = NULL, *all;
    long long *ptr = NULL, sum = 0, c = 0;
    mm_needs nd;
    for (int r = 0; r < m->n; r++)
        part[r] = owner(m->n, r);
    if (mm_needs_compute(m, part, nprocs, &nd) ||
        mm_needs_by_owner(&nd, part, nprocs, &ptr, &needer, &count, &col)) {
        fprintf(stderr, "sdde: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (int q = 0; q < nprocs; q++) { /* n, dest, counts, columns; n, src, counts, columns */
        long long recv_cols = 0;
        nsend[q] = 0;
        for (long long i = nd.ptr[q]; i < nd.ptr[q + 1]; i++)
            nsend[q] += i == nd.ptr[q] || part[nd.col[i]] != part[nd.col[i - 1]];
        for (long long r = ptr[q]; r < ptr[q + 1]; r++)
            recv_cols += count[r];
        long long ints = 2 + 2 * nsend[q] + (nd.ptr[q + 1] - nd.ptr[q]) +
                         2 * (ptr[q + 1] - ptr[q]) + recv_cols;
        sum += ints;
        if (sum > 0x7fffffff) { /* MPI_Scatterv's displacements are ints */
            fprintf(stderr, "sdde: the pattern is too large to scatter\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        len[q] = (int)ints;
    }
    all = xmalloc(sizeof(int) * (size_t)(sum + 1));
    for (int q = 0, at = 0; q < nprocs; at += len[q], q++) {
        int n = nsend[q], *b = all + at, *dest = b + 1, *counts = dest + n, k = -1;
        long long cols = nd.ptr[q + 1] - nd.ptr[q], nrecv = ptr[q + 1] - ptr[q], first = c;
        b[0] = n; /* sending half: one message per owner, owners ascending */
        for (long long i = nd.ptr[q]; i < nd.ptr[q + 1]; i++) {
            if (i == nd.ptr[q] || part[nd.col[i]] != part[nd.col[i - 1]])
                dest[++k] = part[nd.col[i]], counts[k] = 0;
            counts[k]++;
        }
        memcpy(counts + n, nd.col + nd.ptr[q], sizeof(int) * (size_t)cols);
        b = counts + n + cols; /* receiving half: needers ascending */
        b[0] = (int)nrecv;
        for (long long r = ptr[q], j = 0; r < ptr[q + 1]; r++, j++) {
            b[1 + j] = needer[r], b[1 + nrecv + j] = count[r];
            memcpy(b + 1 + 2 * nrecv + (c - first), col + c, sizeof(int) * (size_t)count[r]);
            c += count[r];
        }
    }
    mm_needs_free(&nd);
    free(part), free(nsend), free(ptr), free(needer), free(count), free(col);
    return all;
}

/* This process's part of the matrix at path (read on rank 0 only); rank 0
 * also returns the matrix's size in n and nnz. */
static part_t part_of(const char *path, int *n, long *nnz, MPI_Comm comm)
{
    int *len = NULL, *displs = NULL, *all = NULL, mine, *b, at, ncols, *vals;
    part_t p;
    if (rank == 0) {
        matrix_t m;
        read_matrix(path, &m);
        *n = m.n, *nnz = m.nnz;
        len = xmalloc(sizeof(int) * (size_t)nprocs);
        displs = xmalloc(sizeof(int) * (size_t)nprocs);
        all = pack_parts(&m, len);
        mm_free(&m);
        for (int q = 0, d = 0; q < nprocs; d += len[q], q++)
            displs[q] = d;
    }
    MPI_Scatter(len, 1, MPI_INT, &mine, 1, MPI_INT, 0, comm);
    b = xmalloc(sizeof(int) * (size_t)mine);
    MPI_Scatterv(all, len, displs, MPI_INT, b, mine, MPI_INT, 0, comm);
    free(all), free(len), free(displs);
    at = unpack_half(b, &p.s.n, &p.s.dest, &p.s.counts, &p.s.displs, &p.s.idx);
    unpack_half(b + at, &p.expect.n_recv, &p.expect.src, &p.expect.counts, NULL, &vals);
    free(b);
    p.expect.vals = vals;
    ncols = at - 1 - 2 * p.s.n;
    p.s.x = xmalloc(sizeof(double) * (size_t)(ncols + 1));
    for (int j = 0; j < ncols; j++)
        p.s.x[j] = (double)p.s.idx[j];
    return p;
}

static void part_free(part_t *p)
{
    sends_free(&p->s);
    free(p->expect.src), free(p->expect.counts), free(p->expect.vals);
}

/* The result against the expected one; returns the errors found here. */
static int verify(const result_t *want, int variable, const result_t *r, const char *name)
{
    int pos = 0, bad = 0, n = r->n_recv < want->n_recv ? r->n_recv : want->n_recv;
    const int *w = want->vals;
    if (r->n_recv != want->n_recv && bad++ == 0)
        fprintf(stderr, "FAIL rank %d: %s: %d messages, expected %d\n", rank, name, r->n_recv,
                want->n_recv);
    for (int k = 0; k < n && !bad; k++) {
        int c = want->counts[k], wrong = r->src[k] != want->src[k];
        if (!wrong && variable) {
            wrong = r->counts[k] != c;
            for (int j = 0; j < c && !wrong; j++)
                wrong = doubles ? ((const double *)r->vals)[pos + j] != (double)w[pos + j]
                                : ((const int *)r->vals)[pos + j] != w[pos + j];
        } else if (!wrong) {
            wrong = ((const int *)r->vals)[k] != c;
        }
        if (wrong && bad++ == 0)
            fprintf(stderr, "FAIL rank %d: %s: message %d (from %d) wrong\n", rank, name, k,
                    want->src[k]);
        pos += c;
    }
    return bad;
}

static double quantile(const double *t, int n, double q)
{
    double *c = xmalloc(sizeof(double) * (size_t)n), v;
    memcpy(c, t, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), bench_cmp_double);
    v = c[(int)(q * (n - 1) + 0.5)];
    free(c);
    return v;
}

/* auto's runtime tuning (iso_tune, on by default): its trial calls, at most
 * 20 per call shape (include/isocoll.h), come before auto is counted,
 * checked and timed, untimed; rank 0 prints the tuner's records of this
 * form. */
static void warm_auto(const sends_t *s, int variable, variant_t *v, MPI_Comm comm)
{
    char rec[1024];
    int state = 1;
    for (int w = 0; w < 20; w++)
        TRY(one_call(s, variable, v, comm, NULL));
    /* no tuner (ISO_TUNE=off) is an error: then nothing to print */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    for (int i = 0; state != 0; i++)
        if (Iso_tune_info(comm, i, &state, rec, sizeof rec) != MPI_SUCCESS)
            state = 0;
        else if (state != 0 && rank == 0 &&
                 strstr(rec, variable ? "form=variable" : "form=constant"))
            printf("tuning of auto: %s\n", rec);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

/* ---- one matrix, one form ---------------------------------------------------- */
static void bench(const part_t *p, const char *mname, int variable, variant_t *v, int nv,
                  int reps, int iters, MPI_Comm comm)
{
    sends_t s = p->s;
    int *order = xmalloc(sizeof(int) * (size_t)nv), ref = -1, auto_v = -1;
    unsigned seed = 12345u;
    long long mine[3], most[3];
    if (rank == 0)
        printf("\n### %s, %s (%s), %d ranks\n\n", mname,
               variable ? "Iso_alltoallv_crs" : "Iso_alltoall_crs",
               variable ? (doubles ? "x values, doubles" : "the column indices")
                        : "one int per message",
               nprocs);
    {
        long long sent[2] = {s.n, s.n}, tot[2];
        MPI_Allreduce(sent, tot, 1, MPI_LONG_LONG, MPI_SUM, comm);
        MPI_Allreduce(sent + 1, tot + 1, 1, MPI_LONG_LONG, MPI_MAX, comm);
        if (rank == 0)
            printf("messages per call: %lld in all, at most %lld from one process\n\n", tot[0],
                   tot[1]);
    }
    for (int k = 0; k < nv; k++) { /* verify and count */
        result_t r;
        int bad, total;
        if (variable && (!strcmp(v[k].name, "rma") || !strcmp(v[k].name, "advance-rma"))) {
            /* constant sizes only */
            v[k].t = NULL;
            continue;
        }
        if (!strcmp(v[k].name, "auto"))
            warm_auto(&s, variable, &v[k], comm);
        counting = 1;
        count_msgs = count_inter = count_package = count_isend = count_issend = count_put = 0;
        TRY(one_call(&s, variable, &v[k], comm, &r));
        counting = 0;
        v[k].msgs = count_msgs, v[k].inter = count_inter, v[k].package = count_package;
        v[k].isend = count_isend;
        v[k].issend = count_issend, v[k].put = count_put;
        bad = verify(&p->expect, variable, &r, v[k].name);
        free(r.src), free(r.counts), free(r.vals);
        MPI_Allreduce(&bad, &total, 1, MPI_INT, MPI_SUM, comm);
        if (total) {
            if (rank == 0)
                fprintf(stderr, "sdde: %s gave wrong results on %s\n", v[k].name, mname);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        v[k].t = xmalloc(sizeof(double) * (size_t)reps);
        if (!strcmp(v[k].name, "personalized"))
            ref = k;
        if (!strcmp(v[k].name, "auto"))
            auto_v = k;
    }
    for (int rep = 0; rep < reps; rep++) {
        bench_random_order(order, nv, &seed);
        for (int o = 0; o < nv; o++) {
            variant_t *x = &v[order[o]];
            double t0, t;
            if (x->t == NULL)
                continue;
            TRY(one_call(&s, variable, x, comm, NULL));
            MPI_Barrier(comm);
            t0 = MPI_Wtime();
            for (int it = 0; it < iters; it++)
                TRY(one_call(&s, variable, x, comm, NULL));
            t = (MPI_Wtime() - t0) / iters;
            MPI_Allreduce(&t, &x->t[rep], 1, MPI_DOUBLE, MPI_MAX, comm);
        }
    }
    if (rank == 0)
        printf("| variant | median us | q1 us | q3 us | / personalized | msgs (busiest) | "
               "inter-node msgs (busiest) | inter-package msgs in node (busiest) |\n"
               "|---|---:|---:|---:|---:|---:|---:|---:|\n");
    for (int k = 0; k < nv; k++) {
        double med;
        if (v[k].t == NULL)
            continue;
        mine[0] = v[k].msgs, mine[1] = v[k].inter, mine[2] = v[k].package;
        MPI_Allreduce(mine, most, 3, MPI_LONG_LONG, MPI_MAX, comm);
        med = quantile(v[k].t, reps, 0.5);
        if (rank == 0) {
            printf("| %s | %.1f | %.1f | %.1f | ", v[k].name, med * 1e6,
                   quantile(v[k].t, reps, 0.25) * 1e6, quantile(v[k].t, reps, 0.75) * 1e6);
            if (ref >= 0)
                printf("%.2f", med / quantile(v[ref].t, reps, 0.5));
            printf(" | %lld | %lld | %lld |\n", most[0], most[1], most[2]);
        }
    }
    /* auto's pick: the fixed variants that send the same messages of the
     * same kinds on every rank */
    if (auto_v >= 0) {
        char picked[256] = "";
        int best = -1;
        for (int k = 0; k < nv; k++) {
            int same, all;
            if (k == auto_v || v[k].t == NULL || v[k].advance >= 0)
                continue;
            if (best < 0 || quantile(v[k].t, reps, 0.5) < quantile(v[best].t, reps, 0.5))
                best = k;
            same = v[k].msgs == v[auto_v].msgs && v[k].inter == v[auto_v].inter &&
                   v[k].package == v[auto_v].package &&
                   v[k].isend == v[auto_v].isend && v[k].issend == v[auto_v].issend &&
                   v[k].put == v[auto_v].put;
            MPI_Allreduce(&same, &all, 1, MPI_INT, MPI_LAND, comm);
            if (all)
                snprintf(picked + strlen(picked), sizeof picked - strlen(picked), "%s%s",
                         picked[0] ? "=" : "", v[k].name);
        }
        if (rank == 0 && best >= 0)
            printf("\nauto picked %s (same messages); fastest fixed: %s; auto / fastest %.2f\n",
                   picked[0] ? picked : "(no fixed variant sends the same messages)", v[best].name,
                   quantile(v[auto_v].t, reps, 0.5) / quantile(v[best].t, reps, 0.5));
    }
    { /* the library's best against MPI Advance's best (with ADVANCE=DIR) */
        int iso = -1, adv = -1;
        for (int k = 0; k < nv; k++) {
            int *best = v[k].advance >= 0 ? &adv : &iso;
            if (v[k].t && (*best < 0 || quantile(v[k].t, reps, 0.5) <
                                            quantile(v[*best].t, reps, 0.5)))
                *best = k;
        }
        if (rank == 0 && iso >= 0 && adv >= 0)
            printf("\nisocoll best %s %.1f us; MPI Advance best %s %.1f us; isocoll / advance "
                   "%.2f\n",
                   v[iso].name, quantile(v[iso].t, reps, 0.5) * 1e6, v[adv].name,
                   quantile(v[adv].t, reps, 0.5) * 1e6,
                   quantile(v[iso].t, reps, 0.5) / quantile(v[adv].t, reps, 0.5));
    }
    for (int k = 0; k < nv; k++) {
        free(v[k].t);
        v[k].t = NULL;
    }
    free(order);
    if (rank == 0) /* a launch killed by its time limit keeps the tables done */
        fflush(stdout);
}

/* ---- main ------------------------------------------------------------------- */
static void usage(void)
{
    if (rank == 0)
        fprintf(stderr, "usage: sdde [--matrix PATH[,PATH...]] [--reps N] [--iters K] "
                        "[--nodes N | --node-map LIST] [--locality LEVEL] [--variants LIST] "
                        "[--forms v,c] [--values int|double]\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
}

/* Node of every world rank, and its package in package[]: the map in
 * ISO_NODE_MAP (node[.package[.numa]], the library checks it), or shared
 * memory (package 0). */
static int *nodes_of_world(int *package)
{
    int *node = xmalloc(sizeof(int) * (size_t)nprocs), key;
    const char *map = getenv("ISO_NODE_MAP");
    for (int r = 0; r < nprocs; r++)
        package[r] = 0;
    if (map && *map) {
        const char *p = map;
        for (int r = 0; r < nprocs; r++) {
            node[r] = (int)strtol(p, (char **)&p, 10);
            if (*p == '.')
                package[r] = (int)strtol(p + 1, (char **)&p, 10);
            while (*p && *p != ',')
                p++;
            if (*p == ',')
                p++;
        }
        return node;
    }
    {
        MPI_Comm shm;
        MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &shm);
        key = rank;
        MPI_Allreduce(MPI_IN_PLACE, &key, 1, MPI_INT, MPI_MIN, shm);
        MPI_Comm_free(&shm);
        MPI_Allgather(&key, 1, MPI_INT, node, 1, MPI_INT, MPI_COMM_WORLD);
    }
    return node;
}

int main(int argc, char **argv)
{
    const char *matrices = "tests/data/west0479.mtx";
    char variants[512] = "personalized,nbx,rma,locality-personalized,locality-nbx,auto"
#ifdef ISO_BENCH_ADVANCE
                         ADVANCE_ALL
#endif
        ;
    char forms[16] = "v,c", *map = NULL, *tok, *level = NULL;
    int reps = 21, iters = 5, nodes = 0, nv = 0, nnodes = 0;
    variant_t v[MAXV];
    MPI_Comm comm;
    int *node, *package;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int a = 1; a < argc; a++) {
        const char *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (val == NULL)
            usage();
        if (!strcmp(argv[a], "--matrix"))
            matrices = val;
        else if (!strcmp(argv[a], "--reps"))
            reps = atoi(val);
        else if (!strcmp(argv[a], "--iters"))
            iters = atoi(val);
        else if (!strcmp(argv[a], "--nodes"))
            nodes = atoi(val);
        else if (!strcmp(argv[a], "--node-map"))
            map = strdup(val);
        else if (!strcmp(argv[a], "--locality"))
            level = strdup(val);
        else if (!strcmp(argv[a], "--variants"))
            snprintf(variants, sizeof variants, "%s", val);
        else if (!strcmp(argv[a], "--forms"))
            snprintf(forms, sizeof forms, "%s", val);
        else if (!strcmp(argv[a], "--values") && (!strcmp(val, "int") || !strcmp(val, "double")))
            doubles = !strcmp(val, "double");
        else
            usage();
        a++;
    }
    if (reps < 1 || iters < 1 || nodes < 0 || nodes > nprocs)
        usage();
    if (nodes > 0) { /* consecutive blocks, sizes differing by at most one */
        map = xmalloc((size_t)nprocs * 12 + 1);
        map[0] = '\0';
        for (int r = 0, len = 0; r < nprocs; r++) {
            int n = 0;
            while (n + 1 < nodes && (long)(n + 1) * nprocs / nodes <= r)
                n++;
            len += sprintf(map + len, "%s%d", r ? "," : "", n);
        }
    }
    if (map)
        setenv("ISO_NODE_MAP", map, 1);
    package = xmalloc(sizeof(int) * (size_t)nprocs);
    node = nodes_of_world(package);
    node_of = node;
    package_of = package;
    for (int r = 0; r < nprocs; r++) {
        int seen = 0;
        for (int q = 0; q < r; q++)
            seen |= node[q] == node[r];
        nnodes += !seen;
    }
    MPI_Comm_dup(MPI_COMM_WORLD, &comm); /* its first call reads ISO_NODE_MAP */
#ifdef ISO_BENCH_ADVANCE
    advance_init(comm);
#endif
    for (tok = strtok(variants, ","); tok && nv < MAXV; tok = strtok(NULL, ","), nv++) {
        snprintf(v[nv].name, sizeof v[nv].name, "%s", tok);
        v[nv].advance = -1;
#ifdef ISO_BENCH_ADVANCE
        v[nv].advance = advance_variant(tok);
#endif
        MPI_Info_create(&v[nv].info);
        MPI_Info_set(v[nv].info, "iso_sparse_algorithm", tok);
        if (level)
            MPI_Info_set(v[nv].info, "iso_locality", level);
        v[nv].t = NULL;
    }
    if (rank == 0) {
        char host[MPI_MAX_PROCESSOR_NAME];
        int len;
        MPI_Get_processor_name(host, &len);
        printf("# sdde: %d ranks on %s, %d node%s (%s), iso_locality %s, reps %d, iters %d\n",
               nprocs, host, nnodes, nnodes == 1 ? "" : "s",
               map ? "pretend layout ISO_NODE_MAP: message counts only, not network gains"
                   : "shared memory",
               level ? level : "(default: node)", reps, iters);
        printf("# time per call = batch time / iters, max over ranks; median [q1, q3] over "
               "repetitions\n");
    }
    {
        char *list = strdup(matrices), *save = NULL;
        for (char *path = strtok_r(list, ",", &save); path; path = strtok_r(NULL, ",", &save)) {
            part_t part;
            int n = 0;
            long nnz = 0;
            const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
            /* A communicator per matrix, as an application per pattern: auto's
             * tuner lives on the communicator and agrees on a call's size class
             * at its first call and then every 64 calls, so on a shared one the
             * next matrix's calls kept the last matrix's class, and its trials
             * came due inside the timed calls (SMPI, 256 ranks: auto 11x the
             * best on delaunay_n16, timing a trial of personalized). */
            MPI_Comm mcomm;
            MPI_Comm_dup(comm, &mcomm);
            part = part_of(path, &n, &nnz, mcomm);
            if (rank == 0)
                printf("\n## %s: %d rows, %ld nonzeros (pattern, symmetric ones expanded)\n", base,
                       n, nnz);
            if (strchr(forms, 'v'))
                bench(&part, base, 1, v, nv, reps, iters, mcomm);
            if (strchr(forms, 'c'))
                bench(&part, base, 0, v, nv, reps, iters, mcomm);
            part_free(&part);
            MPI_Comm_free(&mcomm);
        }
        free(list);
    }
    for (int k = 0; k < nv; k++)
        MPI_Info_free(&v[k].info);
#ifdef ISO_BENCH_ADVANCE
    advance_finalize();
#endif
    MPI_Comm_free(&comm);
    free(node);
    free(package);
    free(level);
    free(map);
    MPI_Finalize();
    return 0;
}
