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
            "              [--partition rows|metis] [--word W] [--header H]\n"
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
typedef struct {
    double mmax_cut; /* direct's mmax / the best n's */
    int found;
} best_t;

static best_t run_matrix(const mm_matrix *mat, const char *name, int K, int n_opt,
                         const char *dims_opt, int metis, long long word, long long header)
{
    int *part = xmalloc(sizeof(int) * ((size_t)mat->n + 1)), *dest, best = -1, direct_mmax = 0;
    long long *ptr, *bytes;
    double best_ratio = 0;
    char err[512];
    mm_needs nd;
    shapes sh = make_shapes(K, n_opt, dims_opt);
    best_t res = {0, 0};
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
            best = m.mmax, best_ratio = m.volume_ratio, res.found = n;
        iso__vpt_model_free(&m);
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
    int alltoall = 0, n_opt = 0, metis = 0;
    long long bytes = 8, word = 8, header = DEFAULT_HEADER;
    for (int a = 1; a < argc; a++) {
        const char *v = a + 1 < argc ? argv[a + 1] : NULL;
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
        n_opt > ISO_VPT_MAXDIMS || (n_opt && dims_opt) || bytes < 0 || word < 1 || header < 0)
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
                b = run_matrix(&mat, name, K, n_opt, dims_opt, metis, word, header);
                Kof[nK] = K;
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
        free(mlist);
    }
    return 0;
}
