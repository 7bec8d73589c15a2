/* spmv: row-parallel y = Ax with the x-vector exchange done by
 * MPI_Neighbor_alltoallv, Iso_neighbor_alltoallv_init with direct (the
 * paper's BL) and with vpt for n = 2 .. (store-and-forward over a virtual
 * process topology, Selvitopi & Aykanat SC'19) and with sharing (message
 * sharing, Duymus 2021: a row "sharing", n=2 its stages, no model) and
 * with auto (the library's choice as a user gets it: with runtime
 * tuning on, the default, the persistent request's _init call times the
 * candidates and takes the winner; n and dims "auto:nN" say what it ran),
 * automodel (the cost model's pick, iso_tune=off) and tuned (iso_tune=on,
 * whatever ISO_TUNE says),
 * interleaved in one run; prints the columns of the paper's table 2.
 *
 *   mpiexec -n K spmv [--matrix PATH[,PATH..]] [--partition rows|metis]
 *       [--reps N] [--iters I] [--variants mpi,direct,vpt,sharing,auto,automodel,tuned] [--n LIST]
 *       [--dims a,b,..] [--header H] [--strict] [--sdde]
 *
 * Set-up per matrix (bench/matrix.h): rank 0 reads it (Matrix Market, plain
 * or .gz) and partitions the rows (contiguous, balanced by nonzeros; or
 * METIS); x is partitioned like the rows.  From the whole matrix rank 0
 * computes what each process needs of x (grouped by owner) and scatters to
 * every rank only its own rows, the x entries they need from others with
 * their owners, and the requests it gets as an owner (who needs which of
 * its entries): no process but rank 0 holds anything of size n (at K =
 * 4096 in one simulator process, the partition and an n-sized map on every
 * rank were gigabytes).  Positions in the local x are found by binary
 * search in the process's own rows and ghosts.  With --sdde the
 * processes instead tell the owners with Iso_alltoallv_crs (the pattern as
 * an SDDE), checked against rank 0's lists; not the default because its
 * probe polls made most of a launch's cost under SMPI at K = 512.  Then
 * the distributed graph (MPI_Dist_graph_create_adjacent: sources = the
 * owners it needs from, destinations = the processes that asked it;
 * indegree may differ from outdegree).  One iteration = pack the requested
 * x entries, exchange, local product.
 *
 * Check: y against the serial product of the same rows with the same x,
 * bit for bit (same operands, same order), with two different x vectors
 * (a persistent request must read the buffers at each start).  A library
 * variant that fails makes the exit status 1; MPI_Neighbor_alltoallv's FAIL
 * (MPICH 4.0.2 with indegree != outdegree) is reported and timed anyway,
 * fatal only with --strict.
 *
 * Figures per variant: mmax, mavg (messages sent per process: the largest
 * and the mean), vavg (words of 8 bytes sent per process, submessage
 * headers included): for the library's variants counted from its MPI_Isend
 * calls during one exchange (MPI profiling interface: the library is linked
 * statically), for MPI's own from the graph.  Beside them the model's
 * prediction (bench/vptmodel.h, --header bytes per submessage).  Times:
 * every repetition runs, for each variant in a new random order (the same
 * on all ranks), one untimed iteration, a barrier and --iters iterations;
 * comm = exchange time per iteration, SpMV = whole iteration, each
 * maximised over the ranks; medians over the repetitions.  Buffer: bytes of
 * the send and receive buffers of the original messages (BL), for vpt plus
 * the library's message buffers (Iso_request_vpt_info); max over ranks.
 * Set-up (setup_us=, machine lines only): the variant's one
 * Iso_neighbor_alltoallv_init after a barrier, max over the ranks, in the
 * order of --variants: it includes making a vpt or sharing plan (and
 * auto's figures) unless an earlier variant's plan on the same graph is
 * reused from the cache, and for tuned its trial calls.  See
 * bench/README.md. */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "matrix.h"
#include "vptmodel.h"

#define MAXV 20

static int rank, nprocs;

/* ---- counting the library's messages (MPI profiling interface) ----------- */
static int counting;
static long long count_msgs, count_bytes;

static void count(int n, MPI_Datatype type, int dest)
{
    int size = 0;
    if (!counting || dest == MPI_PROC_NULL)
        return;
    PMPI_Type_size(type, &size);
    count_msgs++;
    count_bytes += (long long)n * size;
}

int MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    count(n, type, dest);
    return PMPI_Isend(buf, n, type, dest, tag, comm, request);
}

int MPI_Issend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *request)
{
    count(n, type, dest);
    return PMPI_Issend(buf, n, type, dest, tag, comm, request);
}

int MPI_Send(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    count(n, type, dest);
    return PMPI_Send(buf, n, type, dest, tag, comm);
}

/* ---- the distributed problem ---------------------------------------------- */
typedef struct {
    int nown, nghost;          /* x entries owned, received */
    int nrows, *rows;          /* my rows (global), ascending */
    int *rowptr, *colmap;      /* local CSR; colmap indexes xv = [own | ghost] */
    double *val, *xv, *y;
    int outdeg, *dests, *scounts, *sdispls, *sendloc; /* sendloc: xv index per sent entry */
    int indeg, *srcs, *rcounts, *rdispls;
    int nsend;
    double *sendbuf;
    MPI_Comm graph;
} problem;

/* x_j of check vector `which` (exact in binary). */
static double xval(int j, int which)
{
    return 1.0 + (double)((j * (which ? 5 : 3) + which) % 23) / 32.0;
}

static void die_msg(const char *msg)
{
    fprintf(stderr, "spmv: rank %d: %s\n", rank, msg);
    MPI_Abort(MPI_COMM_WORLD, 2);
    exit(2);
}

/* My rows: their global numbers (ascending) and a CSR of them alone, with
 * global column numbers. */
typedef struct {
    int nrows, *rows, *rowptr, *col;
    double *val;
} row_block;

static void row_block_free(row_block *b)
{
    free(b->rows), free(b->rowptr), free(b->col), free(b->val);
}

/* Rank 0 reads the matrix into *whole and partitions its rows into *part
 * (n entries, rank 0 only: no process but rank 0 holds anything of size n);
 * all abort if it cannot be read. */
static void read_and_partition(const char *path, int metis, mm_matrix *whole, int **part)
{
    long hdr[4] = {0};
    char err[512];
    memset(whole, 0, sizeof *whole);
    *part = NULL;
    if (rank == 0) {
        if (mm_read(path, whole, err, sizeof err)) {
            fprintf(stderr, "spmv: %s\n", err);
            hdr[0] = -1;
        } else {
            hdr[0] = whole->n, hdr[1] = whole->rows, hdr[2] = whole->cols, hdr[3] = whole->nnz;
        }
    }
    MPI_Bcast(hdr, 4, MPI_LONG, 0, MPI_COMM_WORLD);
    if (hdr[0] < 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (hdr[3] > 0x7fffffffL)
        die_msg("more than 2^31 nonzeros");
    if (rank != 0)
        return;
    *part = xmalloc(sizeof(int) * ((size_t)whole->n + 1));
    if (metis) {
        if (part_metis(whole, nprocs, *part, err, sizeof err)) {
            fprintf(stderr, "spmv: %s\n", err);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    } else {
        part_rows_nnz(whole, nprocs, *part);
    }
}

/* Each rank gets its rows of rank 0's *whole (partition part) in *mine, by
 * scatter: row numbers, row lengths, columns and values, rows ascending (at
 * K = 4096 in one simulator process, anything of size n on every rank was
 * gigabytes). */
static void distribute_rows(const mm_matrix *whole, const int *part, row_block *mine)
{
    int *cnt = NULL, *dsp = NULL, *ecnt = NULL, *edsp = NULL, *srow = NULL, *slen = NULL;
    int *scol = NULL, mine_cnt[2] = {0, 0}, *all_cnt = NULL, *len;
    double *sval = NULL;
    if (rank == 0) { /* rows and entries grouped by owner, rows ascending within */
        int n = whole->n, *rfill, *efill;
        cnt = xmalloc(sizeof(int) * (size_t)nprocs), dsp = xmalloc(sizeof(int) * (size_t)nprocs);
        ecnt = xmalloc(sizeof(int) * (size_t)nprocs), edsp = xmalloc(sizeof(int) * (size_t)nprocs);
        all_cnt = xmalloc(sizeof(int) * 2 * (size_t)nprocs);
        rfill = xmalloc(sizeof(int) * (size_t)nprocs), efill = xmalloc(sizeof(int) * (size_t)nprocs);
        memset(cnt, 0, sizeof(int) * (size_t)nprocs), memset(ecnt, 0, sizeof(int) * (size_t)nprocs);
        for (int r = 0; r < n; r++)
            cnt[part[r]]++, ecnt[part[r]] += whole->rowptr[r + 1] - whole->rowptr[r];
        for (int q = 0, d = 0, e = 0; q < nprocs; d += cnt[q], e += ecnt[q], q++)
            dsp[q] = rfill[q] = d, edsp[q] = efill[q] = e;
        for (int q = 0; q < nprocs; q++)
            all_cnt[2 * q] = cnt[q], all_cnt[2 * q + 1] = ecnt[q];
        srow = xmalloc(sizeof(int) * ((size_t)n + 1)), slen = xmalloc(sizeof(int) * ((size_t)n + 1));
        scol = xmalloc(sizeof(int) * (size_t)(whole->nnz + 1));
        sval = xmalloc(sizeof(double) * (size_t)(whole->nnz + 1));
        for (int r = 0; r < n; r++) {
            int q = part[r];
            srow[rfill[q]] = r, slen[rfill[q]++] = whole->rowptr[r + 1] - whole->rowptr[r];
            for (int e = whole->rowptr[r]; e < whole->rowptr[r + 1]; e++, efill[q]++)
                scol[efill[q]] = whole->col[e], sval[efill[q]] = whole->val[e];
        }
        free(rfill), free(efill);
    }
    MPI_Scatter(all_cnt, 2, MPI_INT, mine_cnt, 2, MPI_INT, 0, MPI_COMM_WORLD);
    mine->nrows = mine_cnt[0];
    mine->rows = xmalloc(sizeof(int) * ((size_t)mine->nrows + 1));
    len = xmalloc(sizeof(int) * ((size_t)mine->nrows + 1));
    mine->col = xmalloc(sizeof(int) * ((size_t)mine_cnt[1] + 1));
    mine->val = xmalloc(sizeof(double) * ((size_t)mine_cnt[1] + 1));
    MPI_Scatterv(srow, cnt, dsp, MPI_INT, mine->rows, mine->nrows, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(slen, cnt, dsp, MPI_INT, len, mine->nrows, MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(scol, ecnt, edsp, MPI_INT, mine->col, mine_cnt[1], MPI_INT, 0, MPI_COMM_WORLD);
    MPI_Scatterv(sval, ecnt, edsp, MPI_DOUBLE, mine->val, mine_cnt[1], MPI_DOUBLE, 0,
                 MPI_COMM_WORLD);
    mine->rowptr = xmalloc(sizeof(int) * ((size_t)mine->nrows + 1));
    mine->rowptr[0] = 0;
    for (int i = 0; i < mine->nrows; i++)
        mine->rowptr[i + 1] = mine->rowptr[i] + len[i];
    free(len), free(cnt), free(dsp), free(ecnt), free(edsp), free(all_cnt);
    free(srow), free(slen), free(scol), free(sval);
}

/* What each process needs of x, from rank 0's view of the whole pattern
 * nd: process q gets the columns of nd[q] (sorted by owner, then column)
 * in *ghost and their owners in *owner; *nghost their number. */
static void distribute_needs(const mm_needs *nd, const int *part, int *nghost, int **ghost,
                             int **owner)
{
    int *cnt = NULL, *dsp = NULL, *owners = NULL;
    if (rank == 0) {
        long long total = nd->ptr[nprocs];
        if (total > 0x7fffffffLL)
            die_msg("x-vector pattern too large to scatter");
        cnt = xmalloc(sizeof(int) * (size_t)nprocs), dsp = xmalloc(sizeof(int) * (size_t)nprocs);
        for (int q = 0; q < nprocs; q++)
            dsp[q] = (int)nd->ptr[q], cnt[q] = (int)(nd->ptr[q + 1] - nd->ptr[q]);
        owners = xmalloc(sizeof(int) * (size_t)(total + 1));
        for (long long i = 0; i < total; i++)
            owners[i] = part[nd->col[i]];
    }
    MPI_Scatter(cnt, 1, MPI_INT, nghost, 1, MPI_INT, 0, MPI_COMM_WORLD);
    *ghost = xmalloc(sizeof(int) * ((size_t)*nghost + 1));
    *owner = xmalloc(sizeof(int) * ((size_t)*nghost + 1));
    MPI_Scatterv(rank == 0 ? nd->col : NULL, cnt, dsp, MPI_INT, *ghost, *nghost, MPI_INT, 0,
                 MPI_COMM_WORLD);
    MPI_Scatterv(owners, cnt, dsp, MPI_INT, *owner, *nghost, MPI_INT, 0, MPI_COMM_WORLD);
    free(cnt), free(dsp), free(owners);
}

/* The requests each process receives (the x-vector pattern, and the SDDE's
 * oracle with --sdde), from rank 0's view of the whole pattern nd: for process o, for q ascending with
 * columns owned by o in nd[q]: q, their count, the columns in nd[q]'s order.
 * Scattered; *len gets the ints of mine. */
static int *expected_requests(const mm_needs *nd, const int *part, int *len)
{
    int *cnt = NULL, *dsp = NULL, *all = NULL, *mine;
    if (rank == 0) {
        long long *ptr, total = 0, at = 0, c = 0;
        int *needer, *count, *col;
        if (mm_needs_by_owner(nd, part, nprocs, &ptr, &needer, &count, &col))
            die_msg("out of memory");
        cnt = xmalloc(sizeof(int) * (size_t)nprocs), dsp = xmalloc(sizeof(int) * (size_t)nprocs);
        for (int o = 0; o < nprocs; o++) { /* o's records: 2 ints each, and their columns */
            long long ints = 2 * (ptr[o + 1] - ptr[o]);
            for (long long r = ptr[o]; r < ptr[o + 1]; r++)
                ints += count[r];
            if (total + ints > 0x7fffffffLL)
                die_msg("SDDE pattern too large for the check");
            dsp[o] = (int)total, cnt[o] = (int)ints, total += ints;
        }
        all = xmalloc(sizeof(int) * (size_t)(total + 1));
        for (long long r = 0; r < ptr[nprocs]; r++) { /* records in owner order */
            all[at++] = needer[r], all[at++] = count[r];
            memcpy(all + at, col + c, sizeof(int) * (size_t)count[r]);
            at += count[r], c += count[r];
        }
        free(ptr), free(needer), free(count), free(col);
    }
    MPI_Scatter(cnt, 1, MPI_INT, len, 1, MPI_INT, 0, MPI_COMM_WORLD);
    mine = xmalloc(sizeof(int) * ((size_t)*len + 1));
    MPI_Scatterv(all, cnt, dsp, MPI_INT, mine, *len, MPI_INT, 0, MPI_COMM_WORLD);
    free(cnt), free(dsp), free(all);
    return mine;
}

/* The received SDDE pattern against the expected requests (expected_requests):
 * process q asked me for exactly the columns of its needs that I own, in that
 * order.  Returns the errors here. */
static int check_sdde(const int *expect, int len, int nsrc, const int *src, const int *cnt,
                      const int *displs, const int *vals)
{
    int k = 0, bad = 0;
    for (int at = 0; at < len; k++) {
        int q = expect[at], c = expect[at + 1];
        if (k >= nsrc || src[k] != q || cnt[k] != c ||
            memcmp(vals + displs[k], expect + at + 2, sizeof(int) * (size_t)c))
            bad++;
        at += 2 + c;
    }
    return bad + (k != nsrc);
}

/* The requests of expected_requests (records q, count, columns) in the
 * SDDE's output form: the processes that asked, their counts, displacements
 * and the columns; the arrays are NULL when nobody asked, as the SDDE's. */
static void requests_as_crs(const int *expect, int len, int *nsrc, int **src, int **cnt,
                            int **displs, int **vals)
{
    int n = 0, nval = 0;
    for (int at = 0; at < len; at += 2 + expect[at + 1])
        n++, nval += expect[at + 1];
    *nsrc = n;
    *src = *cnt = *displs = NULL;
    if (n > 0) {
        *src = xmalloc(sizeof(int) * (size_t)n), *cnt = xmalloc(sizeof(int) * (size_t)n);
        *displs = xmalloc(sizeof(int) * (size_t)n);
    }
    *vals = xmalloc(sizeof(int) * ((size_t)nval + 1));
    for (int at = 0, k = 0, d = 0; at < len; at += 2 + expect[at + 1], k++) {
        (*src)[k] = expect[at], (*cnt)[k] = expect[at + 1], (*displs)[k] = d;
        memcpy(*vals + d, expect + at + 2, sizeof(int) * (size_t)expect[at + 1]);
        d += expect[at + 1];
    }
}

/* Local positions of x entries in xv = [own | ghost], found by binary
 * search in my rows (ascending) and in the ghosts sorted by column: no
 * n-sized map per process. */
typedef struct {
    int nown, nghost;
    const int *rows; /* nown, ascending */
    int *ghosts;     /* nghost pairs (column, position in xv), by column */
} xv_index;

static void xv_index_make(xv_index *ix, int nown, const int *rows, int nghost, const int *ghost)
{
    ix->nown = nown, ix->rows = rows, ix->nghost = nghost;
    ix->ghosts = xmalloc(sizeof(int) * 2 * ((size_t)nghost + 1));
    for (int i = 0; i < nghost; i++)
        ix->ghosts[2 * i] = ghost[i], ix->ghosts[2 * i + 1] = nown + i;
    qsort(ix->ghosts, (size_t)nghost, 2 * sizeof(int), bench_cmp_int);
}

/* Position of my own x entry j, -1 if I do not own it. */
static int xv_own(const xv_index *ix, int j)
{
    const int *at = bsearch(&j, ix->rows, (size_t)ix->nown, sizeof(int), bench_cmp_int);
    return at ? (int)(at - ix->rows) : -1;
}

/* Position of x entry j, owned or received; -1 if neither. */
static int xv_position(const xv_index *ix, int j)
{
    const int *at;
    int i = xv_own(ix, j);
    if (i >= 0)
        return i;
    at = bsearch(&j, ix->ghosts, (size_t)ix->nghost, 2 * sizeof(int), bench_cmp_int);
    return at ? at[1] : -1;
}

/* The problem from my rows (mine), what I need (ghost: columns by owner,
 * owner) and what the others need of me (expect, expected_requests). */
static void setup(const row_block *mine, int nghost, const int *ghost, const int *owner,
                  const int *expect, int elen, int use_sdde, problem *pb)
{
    int ndest = 0, *dest, *cnt, *dsp;
    int recv_nnz, *src = NULL, *rcnt = NULL, *rdsp = NULL, *rvals = NULL, bad, allbad, *ones;
    xv_index ix;
    memset(pb, 0, sizeof *pb);
    pb->nown = pb->nrows = mine->nrows;
    pb->rows = xmalloc(sizeof(int) * ((size_t)pb->nrows + 1));
    memcpy(pb->rows, mine->rows, sizeof(int) * (size_t)pb->nrows);
    pb->nghost = nghost; /* ghosts after the own entries */
    xv_index_make(&ix, pb->nown, pb->rows, nghost, ghost);
    /* what I need, by owner: the SDDE's messages */
    dest = xmalloc(sizeof(int) * ((size_t)nghost + 1));
    cnt = xmalloc(sizeof(int) * ((size_t)nghost + 1));
    dsp = xmalloc(sizeof(int) * ((size_t)nghost + 1));
    for (int i = 0; i < nghost; i++) {
        int o = owner[i];
        if (ndest == 0 || dest[ndest - 1] != o)
            dest[ndest] = o, cnt[ndest] = 0, dsp[ndest] = i, ndest++;
        cnt[ndest - 1]++;
    }
    if (use_sdde) { /* the owners learn it by the SDDE, checked against rank 0's lists */
        TRY(Iso_alltoallv_crs(ndest, dest, cnt, dsp, MPI_INT, ghost, &recv_nnz, &src,
                              &rcnt, &rdsp, MPI_INT, (void **)&rvals, MPI_INFO_NULL,
                              MPI_COMM_WORLD));
        bad = check_sdde(expect, elen, recv_nnz, src, rcnt, rdsp, rvals);
        MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        if (allbad)
            die_msg("Iso_alltoallv_crs gave a wrong x-vector pattern");
    } else { /* rank 0's lists are the pattern: no SDDE (its polls cost the simulator) */
        requests_as_crs(expect, elen, &recv_nnz, &src, &rcnt, &rdsp, &rvals);
    }
    if (src == NULL) { /* nobody asked: non-NULL arrays all the same for the graph calls */
        free(rcnt), free(rdsp);
        src = xmalloc(sizeof(int)), rcnt = xmalloc(sizeof(int)), rdsp = xmalloc(sizeof(int));
    }
    /* in: from the owners (indegree); out: to those who asked (outdegree) */
    pb->indeg = ndest, pb->srcs = dest, pb->rcounts = cnt, pb->rdispls = dsp;
    pb->outdeg = recv_nnz, pb->dests = src, pb->scounts = rcnt, pb->sdispls = rdsp;
    pb->nsend = recv_nnz ? rdsp[recv_nnz - 1] + rcnt[recv_nnz - 1] : 0;
    pb->sendloc = xmalloc(sizeof(int) * ((size_t)pb->nsend + 1));
    for (int i = 0; i < pb->nsend; i++)
        if ((pb->sendloc[i] = xv_own(&ix, rvals[i])) < 0)
            die_msg("asked for an x entry I do not own");
    free(rvals);
    pb->sendbuf = xmalloc(sizeof(double) * ((size_t)pb->nsend + 1));
    pb->xv = xmalloc(sizeof(double) * ((size_t)pb->nown + pb->nghost + 1));
    pb->y = xmalloc(sizeof(double) * ((size_t)pb->nrows + 1));
    /* local CSR with columns into xv */
    pb->rowptr = xmalloc(sizeof(int) * ((size_t)pb->nrows + 1));
    memcpy(pb->rowptr, mine->rowptr, sizeof(int) * ((size_t)pb->nrows + 1));
    pb->colmap = xmalloc(sizeof(int) * ((size_t)pb->rowptr[pb->nrows] + 1));
    pb->val = xmalloc(sizeof(double) * ((size_t)pb->rowptr[pb->nrows] + 1));
    for (int k = 0; k < pb->rowptr[pb->nrows]; k++) {
        if ((pb->colmap[k] = xv_position(&ix, mine->col[k])) < 0)
            die_msg("a column of my rows neither owned nor received");
        pb->val[k] = mine->val[k];
    }
    /* unit weights rather than MPI_UNWEIGHTED, which gcc takes for an empty
     * array with Open MPI's mpi.h */
    ones = xmalloc(sizeof(int) * ((size_t)(pb->indeg > pb->outdeg ? pb->indeg : pb->outdeg) + 1));
    for (int i = 0; i < pb->indeg || i < pb->outdeg; i++)
        ones[i] = 1;
    TRY(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, pb->indeg, pb->srcs, ones, pb->outdeg,
                                       pb->dests, ones, MPI_INFO_NULL, 0, &pb->graph));
    MPI_Comm_set_errhandler(pb->graph, MPI_ERRORS_RETURN);
    free(ix.ghosts), free(ones);
}

static void problem_free(problem *pb)
{
    free(pb->rows), free(pb->rowptr), free(pb->colmap), free(pb->val), free(pb->xv), free(pb->y);
    free(pb->dests), free(pb->scounts), free(pb->sdispls), free(pb->sendloc), free(pb->sendbuf);
    free(pb->srcs), free(pb->rcounts), free(pb->rdispls);
    MPI_Comm_free(&pb->graph);
}

/* ---- variants ----------------------------------------------------------------- */
enum { V_MPI, V_DIRECT, V_VPT, V_SHARING, V_AUTO, V_AUTOMODEL, V_TUNED };
static const char *const kind_names[] = {"mpi",  "direct",    "vpt",  "sharing",
                                         "auto", "automodel", "tuned"};

typedef struct {
    int kind, n, dims[ISO_VPT_MAXDIMS]; /* n, dims: vpt (direct: 1; sharing: n its 2 stages) */
    char label[64], dimstr[64];
    MPI_Info info;
    Iso_request req;
    int ok;                        /* set up (library variants: init succeeded) */
    int pass;                      /* y = Ax held on every rank */
    long long msgs, bytes;         /* one exchange, this rank */
    double *tcomm, *tspmv;         /* per repetition */
    double tsetup;                 /* the init, max over ranks (seconds) */
    iso_vpt_model model;           /* rank 0: the prediction */
    int have_model;
    long long lib_buf;             /* vpt: Iso_request_vpt_info's buffer bytes, else -1 */
    long long mmax;                /* over all ranks (after the timing) */
    double mavg, vavg, buf_kb;
} variant;

static int exchange(problem *pb, variant *v)
{
    int rc;
    if (v->kind == V_MPI)
        return MPI_Neighbor_alltoallv(pb->sendbuf, pb->scounts, pb->sdispls, MPI_DOUBLE,
                                      pb->xv + pb->nown, pb->rcounts, pb->rdispls, MPI_DOUBLE,
                                      pb->graph);
    rc = Iso_start(&v->req);
    return rc == MPI_SUCCESS ? Iso_wait(&v->req) : rc;
}

/* One iteration: pack, exchange, multiply; *tc gets the exchange time. */
static int iteration(problem *pb, variant *v, double *tc)
{
    double t0;
    int rc;
    for (int i = 0; i < pb->nsend; i++)
        pb->sendbuf[i] = pb->xv[pb->sendloc[i]];
    t0 = MPI_Wtime();
    rc = exchange(pb, v);
    *tc += MPI_Wtime() - t0;
    for (int i = 0; i < pb->nrows; i++) {
        double sum = 0;
        for (int k = pb->rowptr[i]; k < pb->rowptr[i + 1]; k++)
            sum += pb->val[k] * pb->xv[pb->colmap[k]];
        pb->y[i] = sum;
    }
    return rc;
}

/* y = Ax with check vector `which`, against the serial product of my rows;
 * the ghost part is poisoned first.  Returns the wrong entries here. */
static int check(const row_block *mine, problem *pb, variant *v, int which)
{
    double tc = 0;
    int bad = 0;
    for (int i = 0; i < pb->nown; i++)
        pb->xv[i] = xval(pb->rows[i], which);
    for (int i = 0; i < pb->nghost; i++)
        pb->xv[pb->nown + i] = -1e300;
    if (iteration(pb, v, &tc) != MPI_SUCCESS)
        return pb->nrows + 1;
    for (int i = 0; i < pb->nrows; i++) {
        double sum = 0;
        int r = pb->rows[i];
        for (int e = mine->rowptr[i]; e < mine->rowptr[i + 1]; e++)
            sum += mine->val[e] * xval(mine->col[e], which);
        if (sum != pb->y[i]) {
            if (bad++ == 0)
                fprintf(stderr, "FAIL rank %d: %s: y[%d] = %.17g, expected %.17g\n", rank,
                        v->label, r, pb->y[i], sum);
        }
    }
    return bad;
}

static double median(const double *t, int n)
{
    double *c = xmalloc(sizeof(double) * (size_t)n), v;
    memcpy(c, t, sizeof(double) * (size_t)n);
    qsort(c, (size_t)n, sizeof(double), bench_cmp_double);
    v = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
    free(c);
    return v;
}

/* The variants asked for: mpi, direct, and vpt for each n of nlist (or the
 * explicit dims). */
static int make_variants(const char *list, const char *nlist, const char *dims_opt, variant *v)
{
    int nv = 0;
    char *l = strdup(list), *save = NULL;
    for (char *t = strtok_r(l, ",", &save); t && nv < MAXV; t = strtok_r(NULL, ",", &save)) {
        if (!strcmp(t, "mpi")) {
            v[nv] = (variant){.kind = V_MPI, .n = 1, .dims = {nprocs}};
            snprintf(v[nv].label, sizeof v[nv].label, "MPI_Neighbor_alltoallv");
            nv++;
        } else if (!strcmp(t, "direct")) {
            v[nv] = (variant){.kind = V_DIRECT, .n = 1, .dims = {nprocs}};
            snprintf(v[nv].label, sizeof v[nv].label, "direct");
            nv++;
        } else if (!strcmp(t, "vpt")) {
            int ns[ISO_VPT_MAXDIMS + 1], nn = 0;
            if (dims_opt) {
                v[nv] = (variant){.kind = V_VPT};
                if (iso__vpt_dims_parse(dims_opt, nprocs, &v[nv].n, v[nv].dims) != MPI_SUCCESS)
                    die_msg("--dims: sizes >= 1 whose product is the number of processes");
                snprintf(v[nv].label, sizeof v[nv].label, "vpt %s", dims_opt);
                nv++;
                continue;
            }
            if (nlist) {
                char *nl = strdup(nlist), *s2 = NULL;
                for (char *x = strtok_r(nl, ",", &s2); x && nn < ISO_VPT_MAXDIMS;
                     x = strtok_r(NULL, ",", &s2))
                    ns[nn++] = atoi(x);
                free(nl);
            } else {
                for (int n = 2; n <= iso__vpt_model_max_n(nprocs); n++)
                    ns[nn++] = n;
            }
            for (int i = 0; i < nn && nv < MAXV; i++) {
                v[nv] = (variant){.kind = V_VPT, .n = ns[i]};
                if (ns[i] < 1 || iso__vpt_dims_balanced(nprocs, ns[i], v[nv].dims) != MPI_SUCCESS)
                    die_msg("--n: numbers of dimensions 1..16");
                snprintf(v[nv].label, sizeof v[nv].label, "vpt n=%d", ns[i]);
                nv++;
            }
        } else if (!strcmp(t, "sharing")) {
            v[nv] = (variant){.kind = V_SHARING, .n = 2};
            snprintf(v[nv].label, sizeof v[nv].label, "sharing");
            nv++;
        } else if (!strcmp(t, "auto")) { /* the library's choice of n; n, dims: what it ran */
            v[nv] = (variant){.kind = V_AUTO, .n = 1, .dims = {nprocs}};
            snprintf(v[nv].label, sizeof v[nv].label, "auto");
            nv++;
        } else if (!strcmp(t, "automodel") || !strcmp(t, "tuned")) { /* as auto's */
            v[nv] = (variant){.kind = t[4] == 'm' ? V_AUTOMODEL : V_TUNED, .n = 1,
                              .dims = {nprocs}};
            snprintf(v[nv].label, sizeof v[nv].label, "%s", t);
            nv++;
        } else {
            die_msg("--variants: mpi, direct, vpt, sharing, auto, automodel, tuned");
        }
    }
    free(l);
    for (int k = 0; k < nv; k++) {
        char val[16];
        if (v[k].kind == V_SHARING) /* no VPT shape */
            snprintf(v[k].dimstr, sizeof v[k].dimstr, "-");
        else
            iso__vpt_model_dims_string(v[k].n, v[k].dims, v[k].dimstr, sizeof v[k].dimstr);
        v[k].info = MPI_INFO_NULL;
        v[k].req = ISO_REQUEST_NULL;
        if (v[k].kind == V_MPI)
            continue;
        MPI_Info_create(&v[k].info);
        MPI_Info_set(v[k].info, "iso_sparse_algorithm",
                     kind_names[v[k].kind >= V_AUTO ? V_AUTO : v[k].kind]);
        /* auto: the library's default (ISO_TUNE, else tuning on); automodel:
         * the model's pick; tuned: tuning on.  A tuning _init call times the
         * candidates (the first such request of the graph; later ones take
         * its winner) */
        if (v[k].kind != V_AUTO)
            MPI_Info_set(v[k].info, "iso_tune", v[k].kind == V_AUTOMODEL ? "off" : "on");
        if (v[k].kind == V_VPT) {
            if (dims_opt) {
                MPI_Info_set(v[k].info, "iso_vpt_dims", v[k].dimstr);
            } else {
                snprintf(val, sizeof val, "%d", v[k].n);
                MPI_Info_set(v[k].info, "iso_vpt_n", val);
            }
        }
    }
    return nv;
}

/* After an auto or tuned variant's _init call (which ran auto's trial calls
 * unless an earlier one did): the graph's record, printed by rank 0
 * (Iso_tune_info: candidates, medians, winner, cost). */
static void print_tuning(const problem *pb)
{
    char record[1024] = "";
    int state = 0;
    TRY(Iso_tune_info(pb->graph, 0, &state, record, sizeof record));
    if (rank == 0)
        printf("tuned: %s\n", state == 2 ? record : "not tuned (iso_tune off)");
}

/* ---- one matrix ------------------------------------------------------------------ */
static int bench(const char *path, int metis, variant *v, int nv, int reps, int iters,
                 long long header, int strict, int use_sdde)
{
    mm_matrix whole;
    row_block myrows;
    mm_needs all_nd = {NULL, NULL};
    problem pb;
    int *part, *order = xmalloc(sizeof(int) * (size_t)nv), failed = 0, *expect, elen;
    int nghost, *ghost, *owner;
    unsigned seed = 4711u;
    char base[256];
    long long bl_buf, *mptr = NULL, *mbytes = NULL;
    int *mdest = NULL;

    snprintf(base, sizeof base, "%s", strrchr(path, '/') ? strrchr(path, '/') + 1 : path);
    if (strstr(base, ".mtx"))
        *strstr(base, ".mtx") = '\0';
    read_and_partition(path, metis, &whole, &part);
    distribute_rows(&whole, part, &myrows);
    /* rank 0, from the whole matrix: the pattern for the model, what each
     * process needs and who owns it, what each owner is asked for */
    if (rank == 0 && (mm_needs_compute(&whole, part, nprocs, &all_nd) ||
                      mm_sends_by_source(&all_nd, part, nprocs, sizeof(double), &mptr, &mdest,
                                         &mbytes)))
        die_msg("out of memory");
    expect = expected_requests(&all_nd, part, &elen);
    distribute_needs(&all_nd, part, &nghost, &ghost, &owner);
    if (rank == 0)
        printf("\n## %s: %d x %d, %ld nonzeros, %d ranks, partition %s; %lld x entries move "
               "in %lld messages\n",
               base, whole.rows, whole.cols, whole.nnz, nprocs,
               metis ? "metis" : "rows (by nonzeros)", all_nd.ptr[nprocs], mptr[nprocs]);
    mm_needs_free(&all_nd);
    mm_free(&whole);
    free(part);
    setup(&myrows, nghost, ghost, owner, expect, elen, use_sdde, &pb);
    free(expect), free(ghost), free(owner);
    { /* MPICH 4.0.2 has delivered wrong data with indegree != outdegree: say how common */
        int differ = pb.indeg != pb.outdeg, ndiffer = 0;
        MPI_Reduce(&differ, &ndiffer, 1, MPI_INT, MPI_SUM, 0, MPI_COMM_WORLD);
        if (rank == 0)
            printf("ranks with indegree != outdegree in the graph: %d of %d\n\n", ndiffer,
                   nprocs);
    }
    bl_buf = (long long)(pb.nsend + pb.nghost) * (long long)sizeof(double);
    /* set up, check and count each variant */
    for (int k = 0; k < nv; k++) {
        int rc = MPI_SUCCESS, worst, bad, allbad;
        v[k].ok = 0, v[k].pass = 0;
        v[k].tcomm = xmalloc(sizeof(double) * (size_t)reps);
        v[k].tspmv = xmalloc(sizeof(double) * (size_t)reps);
        MPI_Barrier(MPI_COMM_WORLD);
        v[k].tsetup = MPI_Wtime();
        if (v[k].kind != V_MPI)
            rc = Iso_neighbor_alltoallv_init(pb.sendbuf, pb.scounts, pb.sdispls, MPI_DOUBLE,
                                             pb.xv + pb.nown, pb.rcounts, pb.rdispls,
                                             MPI_DOUBLE, pb.graph, v[k].info, &v[k].req);
        v[k].tsetup = MPI_Wtime() - v[k].tsetup;
        MPI_Allreduce(MPI_IN_PLACE, &v[k].tsetup, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if ((v[k].kind == V_AUTO || v[k].kind == V_TUNED) && rc == MPI_SUCCESS)
            print_tuning(&pb);
        MPI_Allreduce(&rc, &worst, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
        if (worst != MPI_SUCCESS) {
            char msg[MPI_MAX_ERROR_STRING] = "";
            int len = 0;
            MPI_Error_string(rc != MPI_SUCCESS ? rc : worst, msg, &len);
            if (rank == 0)
                printf("variant=%s n=%d dims=%s SKIP (Iso_neighbor_alltoallv_init on a graph "
                       "communicator: %s)\n",
                       kind_names[v[k].kind], v[k].n, v[k].dimstr, msg);
            if (v[k].req != ISO_REQUEST_NULL)
                Iso_request_free(&v[k].req);
            continue;
        }
        v[k].ok = 1;
        counting = 1;
        count_msgs = count_bytes = 0;
        bad = check(&myrows, &pb, &v[k], 0);
        counting = 0;
        v[k].msgs = count_msgs, v[k].bytes = count_bytes;
        if (v[k].kind == V_MPI) { /* MPI's own sends are not seen: from the graph */
            v[k].msgs = pb.outdeg;
            v[k].bytes = (long long)pb.nsend * (long long)sizeof(double);
        }
        bad += check(&myrows, &pb, &v[k], 1);
        MPI_Allreduce(&bad, &allbad, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
        v[k].pass = allbad == 0;
        if (!v[k].pass && (v[k].kind != V_MPI || strict))
            failed = 1;
        v[k].lib_buf = -1; /* the library's buffers of a routed request (its statistics) */
        if (v[k].kind == V_VPT || v[k].kind == V_SHARING || v[k].kind >= V_AUTO) {
            int nst, msg[ISO_VPT_MAXDIMS];
            long long b[ISO_VPT_MAXDIMS], fwd, buf;
            /* errors return: raised on the graph communicator (auto that
             * chose direct: ISO_ERR_REQUEST, so n stays 1) */
            if (Iso_request_vpt_info(v[k].req, ISO_VPT_MAXDIMS, &nst, msg, b, &fwd, &buf) ==
                MPI_SUCCESS) {
                v[k].lib_buf = buf;
                if (v[k].kind >= V_AUTO)
                    v[k].n = nst;
            }
            if (v[k].kind >= V_AUTO) {
                int smsg[2], over;
                long long sb[2], sfwd, sbuf;
                /* auto may pick sharing, whose two stages vpt_info reports as n = 2 */
                if (Iso_request_sharing_info(v[k].req, smsg, sb, &sfwd, &over, &sbuf) ==
                    MPI_SUCCESS)
                    snprintf(v[k].dimstr, sizeof v[k].dimstr, "auto:sharing");
                else
                    snprintf(v[k].dimstr, sizeof v[k].dimstr, "auto:n%d", v[k].n);
            }
        }
        v[k].have_model = 0;
        if (rank == 0 && (v[k].kind == V_DIRECT || v[k].kind == V_VPT)) {
            long long h = v[k].kind == V_VPT ? header : 0;
            v[k].have_model = iso__vpt_model_csr(nprocs, v[k].n, v[k].dims, h, mptr, mdest,
                                                 mbytes, &v[k].model) == MPI_SUCCESS;
        }
    }

    /* timing: variants interleaved, a new random order every repetition */
    for (int rep = 0; rep < reps; rep++) {
        bench_random_order(order, nv, &seed);
        for (int o = 0; o < nv; o++) {
            variant *x = &v[order[o]];
            double tc = 0, t0, t[2], tmax[2];
            if (!x->ok)
                continue;
            TRY(iteration(&pb, x, &tc));
            MPI_Barrier(MPI_COMM_WORLD);
            tc = 0;
            t0 = MPI_Wtime();
            for (int it = 0; it < iters; it++)
                TRY(iteration(&pb, x, &tc));
            t[0] = tc / iters, t[1] = (MPI_Wtime() - t0) / iters;
            MPI_Allreduce(t, tmax, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
            x->tcomm[rep] = tmax[0], x->tspmv[rep] = tmax[1];
        }
    }

    /* report: the table, then one line per variant for scripts */
    for (int k = 0; k < nv; k++) {
        long long mine[2] = {v[k].msgs, v[k].bytes}, most[2], sum[2];
        if (!v[k].ok)
            continue;
        MPI_Allreduce(mine, most, 2, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
        MPI_Allreduce(mine, sum, 2, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
        v[k].mmax = most[0];
        v[k].mavg = (double)sum[0] / nprocs;
        v[k].vavg = (double)sum[1] / nprocs / (double)sizeof(double);
        { /* BL: the original messages' buffers; vpt, sharing: those plus the library's */
            long long buf = bl_buf + (v[k].lib_buf > 0 ? v[k].lib_buf : 0), most_buf;
            MPI_Allreduce(&buf, &most_buf, 1, MPI_LONG_LONG, MPI_MAX, MPI_COMM_WORLD);
            v[k].buf_kb = (double)most_buf / 1024.0;
        }
    }
    if (rank == 0) {
        printf("| variant | dims | mmax | mavg | vavg (words) | comm us | SpMV us | buffer KB | "
               "y = Ax | model mmax | model mavg | model vavg |\n"
               "|---|---|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n");
        for (int k = 0; k < nv; k++) {
            if (!v[k].ok)
                continue;
            printf("| %s | %s | %lld | %.2f | %.1f | %.1f | %.1f | %.1f | %s |", v[k].label,
                   v[k].dimstr, v[k].mmax, v[k].mavg, v[k].vavg, median(v[k].tcomm, reps) * 1e6,
                   median(v[k].tspmv, reps) * 1e6, v[k].buf_kb, v[k].pass ? "PASS" : "FAIL");
            if (v[k].have_model)
                printf(" %d | %.2f | %.1f |\n", v[k].model.mmax, v[k].model.mavg,
                       v[k].model.vavg / (double)sizeof(double));
            else
                printf(" | | |\n");
        }
        printf("\n");
        for (int k = 0; k < nv; k++) {
            char nfield[96] = "";
            if (!v[k].ok)
                continue;
            if (v[k].kind != V_MPI) /* "n=" only for the library's: direct (1), vpt, sharing (2) */
                snprintf(nfield, sizeof nfield, " n=%d dims=%s", v[k].n, v[k].dimstr);
            printf("matrix=%s variant=%s%s mmax=%lld mavg=%.2f vavg=%.1f comm_us=%.1f "
                   "spmv_us=%.1f buffer_kb=%.1f setup_us=%.1f %s\n",
                   base, kind_names[v[k].kind],
                   nfield, v[k].mmax, v[k].mavg, v[k].vavg, median(v[k].tcomm, reps) * 1e6,
                   median(v[k].tspmv, reps) * 1e6, v[k].buf_kb, v[k].tsetup * 1e6,
                   v[k].pass ? "PASS" : "FAIL");
        }
    }
    for (int k = 0; k < nv; k++) {
        if (v[k].req != ISO_REQUEST_NULL)
            Iso_request_free(&v[k].req);
        if (v[k].have_model)
            iso__vpt_model_free(&v[k].model);
        free(v[k].tcomm), free(v[k].tspmv);
    }
    problem_free(&pb);
    row_block_free(&myrows);
    free(order), free(mptr), free(mdest), free(mbytes);
    return failed;
}

static void usage(void)
{
    if (rank == 0)
        fprintf(stderr,
                "usage: spmv [--matrix PATH[,PATH..]] [--partition rows|metis] [--reps N] "
                "[--iters I]\n            [--variants mpi,direct,vpt,sharing] [--n LIST] [--dims a,b,..] "
                "[--header H] [--strict] [--sdde]\nMETIS: %s\n",
#ifdef ISO_HAVE_METIS
                "built in"
#else
                "not built in (libmetis-dev missing when built)"
#endif
        );
    MPI_Abort(MPI_COMM_WORLD, 2);
}

int main(int argc, char **argv)
{
    const char *matrices = "tests/data/west0479.mtx", *nlist = NULL;
    const char *dims_opt = NULL, *variants = "mpi,direct,vpt,sharing";
    int reps = 21, iters = 10, metis = 0, strict = 0, use_sdde = 0, nv, failed = 0;
    long long header = 8; /* pack mode: one int64 size per submessage (DESIGN.md) */
    variant v[MAXV];

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nprocs);
    for (int a = 1; a < argc; a++) {
        const char *val = a + 1 < argc ? argv[a + 1] : NULL;
        if (!strcmp(argv[a], "--strict")) {
            strict = 1;
            continue;
        }
        if (!strcmp(argv[a], "--sdde")) {
            use_sdde = 1;
            continue;
        }
        if (val == NULL)
            usage();
        if (!strcmp(argv[a], "--matrix"))
            matrices = val;
        else if (!strcmp(argv[a], "--partition") && !strcmp(val, "rows"))
            metis = 0;
        else if (!strcmp(argv[a], "--partition") && !strcmp(val, "metis"))
            metis = 1;
        else if (!strcmp(argv[a], "--reps"))
            reps = atoi(val);
        else if (!strcmp(argv[a], "--iters"))
            iters = atoi(val);
        else if (!strcmp(argv[a], "--variants"))
            variants = val;
        else if (!strcmp(argv[a], "--n"))
            nlist = val;
        else if (!strcmp(argv[a], "--dims"))
            dims_opt = val;
        else if (!strcmp(argv[a], "--header"))
            header = atoll(val);
        else
            usage();
        a++;
    }
    if (reps < 1 || iters < 1 || header < 0 || (nlist && dims_opt))
        usage();
    nv = make_variants(variants, nlist, dims_opt, v);
    if (rank == 0) {
        char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "", *nl;
        int len;
        MPI_Get_library_version(lib, &len);
        if ((nl = strchr(lib, '\n')))
            *nl = '\0';
        printf("# spmv: %d ranks, reps %d, iters %d, model header %lld bytes; %s\n", nprocs, reps,
               iters, header, lib);
        printf("# mmax, mavg: messages sent per process (max, mean); vavg: 8-byte words sent "
               "per process; times: median over repetitions of the per-iteration max over "
               "ranks\n");
    }
    {
        char *list = strdup(matrices), *save = NULL;
        for (char *p = strtok_r(list, ",", &save); p; p = strtok_r(NULL, ",", &save))
            failed |= bench(p, metis, v, nv, reps, iters, header, strict, use_sdde);
        free(list);
    }
    for (int k = 0; k < nv; k++)
        if (v[k].info != MPI_INFO_NULL)
            MPI_Info_free(&v[k].info);
    MPI_Finalize();
    return failed;
}
