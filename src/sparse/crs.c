/* Iso_alltoall_crs and Iso_alltoallv_crs (DESIGN.md, "Sparse dynamic data
 * exchange"): options, argument checks, the optional agreement
 * (iso_verify), the choice of algorithm, and the outputs assembled in
 * ascending source order whatever order the messages arrived in. */
#include "sparse/sparse.h"
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

/* ---- options ---------------------------------------------------------------- */

typedef struct {
    int algorithm;   /* index in the table or ISO_SDDE_AUTO */
    int p;           /* processes (iso_vpt_dims) */
    iso_vpt_opts vpt;
    int verify;
    int verbose;     /* ISO_VERBOSE (environment only) */
    int tune;        /* iso_tune: trial calls per candidate of auto, 0 off (tune.c) */
} options_t;

static int set_algorithm(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__sparse_algorithm_option(&iso__sdde_table, ISO_CTX_CRS, where, value,
                                        &((options_t *)ctx)->algorithm);
}

static int set_bool(void *ctx, const char *key, const char *value, const char *where)
{
    options_t *o = ctx;
    return iso__option_bool(where, value, !strcmp(key, "verbose") ? &o->verbose : &o->verify);
}

static int set_vpt(void *ctx, const char *key, const char *value, const char *where)
{
    options_t *o = ctx;
    return iso__vpt_option(&o->vpt, o->p, key, value, where);
}

static int set_tune(void *ctx, const char *key, const char *value, const char *where)
{
    (void)key;
    return iso__tune_option(where, value, &((options_t *)ctx)->tune);
}

static const iso_option_key crs_keys[] = {
    {"iso_sparse_algorithm", set_algorithm}, {"iso_verify", set_bool},
    {"iso_vpt_dims", set_vpt},               {"iso_vpt_n", set_vpt},
    {"iso_vpt_locality", set_vpt},           {"iso_locality", set_vpt},
    {"iso_tune", set_tune},                  {"verbose", set_bool}};

static const iso_env_option env_first[] = {
    {"ISO_VERIFY", "iso_verify"}, {"ISO_VERBOSE", "verbose"}, {"ISO_TUNE", "iso_tune"}};

static void options_init(int p, options_t *o)
{
    memset(o, 0, sizeof *o);
    o->algorithm = ISO_SDDE_AUTO;
    o->p = p;
    o->tune = ISO_TUNE_TRIALS;
}

/* ISO_VERIFY and ISO_VERBOSE, info's iso_verify, the rest of the
 * environment (iso__sparse_env_options), then info.  iso_verify is settled
 * first, so that an error in the other options is spread too when
 * verification is on. */
static int options_get_in_order(MPI_Info info, int p, options_t *o)
{
    iso_options r = {crs_keys, (int)(sizeof crs_keys / sizeof crs_keys[0]), "", o, NULL};
    char value[MPI_MAX_INFO_VAL + 1];
    int flag = 0, err;
    options_init(p, o);
    err = iso__options_env(&r, env_first, sizeof env_first / sizeof env_first[0]);
    if (info != MPI_INFO_NULL && !err &&
        (err = MPI_Info_get(info, "iso_verify", MPI_MAX_INFO_VAL, value, &flag)) == MPI_SUCCESS &&
        flag)
        err = set_bool(o, "iso_verify", value, "info iso_verify");
    if (!err)
        err = iso__options_env(&r, iso__sparse_env_options, ISO_SPARSE_NENV);
    if (!err)
        err = iso__options_info(&r, info);
    return err;
}

/* The options as options_get_in_order reads them, without its separate
 * look-up of info's iso_verify when nothing fails: the info pass sets
 * iso_verify last anyway, and only an error needs it settled first.  On
 * an error, the options are read again in that order, for the same
 * options and error. */
static int options_get(MPI_Info info, int p, options_t *o)
{
    iso_options r = {crs_keys, (int)(sizeof crs_keys / sizeof crs_keys[0]), "", o, NULL};
    int err;
    options_init(p, o);
    err = iso__options_env(&r, env_first, sizeof env_first / sizeof env_first[0]);
    if (!err)
        err = iso__options_env(&r, iso__sparse_env_options, ISO_SPARSE_NENV);
    if (!err)
        err = iso__options_info(&r, info);
    return err == MPI_SUCCESS ? MPI_SUCCESS : options_get_in_order(info, p, o);
}

/* ---- arguments ------------------------------------------------------------------ */

/* What a call receives and where its outputs go. */
typedef struct {
    int recvcount; /* Alltoall_crs */
    MPI_Datatype recvtype;
    int *recv_nnz, **src, **recvcounts, **rdispls; /* recvcounts, rdispls: Alltoallv_crs */
    void **recvvals;
    int size; /* of recvtype */
    MPI_Aint extent, true_lb, true_extent;
} crs_out;

static void outputs_clear(const crs_out *o)
{
    if (o->recv_nnz)
        *o->recv_nnz = 0;
    if (o->src)
        *o->src = NULL;
    if (o->recvcounts)
        *o->recvcounts = NULL;
    if (o->rdispls)
        *o->rdispls = NULL;
    if (o->recvvals)
        *o->recvvals = NULL;
}

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Destinations in range and distinct (a sorted copy). */
static int check_dests(const int *dest, int n, int p)
{
    int *sorted, err = MPI_SUCCESS, ascending = 1;
    /* strictly ascending ranks (the usual case): distinct without a sorted copy */
    for (int i = 0; i < n && ascending; i++)
        ascending = dest[i] >= 0 && dest[i] < p && (i == 0 || dest[i] > dest[i - 1]);
    if (ascending)
        return MPI_SUCCESS;
    if ((sorted = malloc(sizeof(int) * ((size_t)n + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < n && !err; i++)
        if (dest[i] < 0 || dest[i] >= p)
            err = iso__error_msg(ISO_ERR_ARG, "dest[%d] = %d is not a rank of comm (size %d)", i,
                                 dest[i], p);
        else
            sorted[i] = dest[i];
    if (!err) {
        qsort(sorted, (size_t)n, sizeof(int), cmp_int);
        for (int i = 1; i < n && !err; i++)
            if (sorted[i] == sorted[i - 1])
                err = iso__error_msg(ISO_ERR_ARG, "destination %d appears twice in dest",
                                     sorted[i]);
    }
    free(sorted);
    return err;
}

/* null, uncommitted */
static int check_type(MPI_Datatype t, const char *name)
{
    if (t == MPI_DATATYPE_NULL)
        return iso__error_msg(ISO_ERR_TYPE, "%s is MPI_DATATYPE_NULL", name);
    if (iso__type_check(t) != MPI_SUCCESS)
        return iso__error_msg(ISO_ERR_TYPE, "%s is not committed (or not a datatype)", name);
    return MPI_SUCCESS;
}

/* Fills the sizes and extents of c and o on the way. */
static int check_args(iso_sdde_call *c, crs_out *o, int p)
{
    int err, variable = !c->constant;
    MPI_Aint lb;
    if (c->n < 0)
        return iso__error_msg(ISO_ERR_COUNT, "send_nnz = %d", c->n);
    if (!o->recv_nnz || !o->src || !o->recvvals || (variable && (!o->recvcounts || !o->rdispls)))
        return iso__error_msg(ISO_ERR_ARG, "an output pointer (recv_nnz, src, %srecvvals) is NULL",
                              variable ? "recvcounts, rdispls, " : "");
    if (c->n > 0 && (!c->dest || (variable && (!c->counts || !c->displs))))
        return iso__error_msg(ISO_ERR_ARG, "dest%s is NULL with send_nnz = %d",
                              variable ? ", sendcounts or sdispls" : "", c->n);
    if (!variable && (c->count < 0 || o->recvcount < 0))
        return iso__error_msg(ISO_ERR_COUNT, "%s = %d", c->count < 0 ? "sendcount" : "recvcount",
                              c->count < 0 ? c->count : o->recvcount);
    for (int i = 0; variable && i < c->n; i++)
        if (c->counts[i] < 0)
            return iso__error_msg(ISO_ERR_COUNT, "sendcounts[%d] = %d", i, c->counts[i]);
    if ((err = check_type(c->type, "sendtype")) != MPI_SUCCESS ||
        (err = check_type(o->recvtype, "recvtype")) != MPI_SUCCESS)
        return err;
    if (MPI_Type_size(c->type, &c->size) != MPI_SUCCESS ||
        MPI_Type_get_extent(c->type, &lb, &c->extent) != MPI_SUCCESS ||
        MPI_Type_size(o->recvtype, &o->size) != MPI_SUCCESS ||
        MPI_Type_get_extent(o->recvtype, &lb, &o->extent) != MPI_SUCCESS ||
        MPI_Type_get_true_extent(o->recvtype, &o->true_lb, &o->true_extent) != MPI_SUCCESS)
        return iso__error_msg(ISO_ERR_TYPE, "sendtype or recvtype is not a valid datatype");
    /* The library allocates *recvvals: its elements must lie after its start. */
    if (o->extent < 0 || o->true_lb < 0)
        return iso__error_msg(ISO_ERR_TYPE, "recvtype has data before its start (true lower "
                                            "bound %ld, extent %ld)",
                              (long)o->true_lb, (long)o->extent);
    if (variable && o->size == 0)
        return iso__error_msg(ISO_ERR_TYPE, "recvtype has size 0 (recvcounts undefined)");
    /* Every message, and a bundle's header with it, must fit an int of bytes. */
    for (int i = 0; i < c->n; i++)
        if ((long long)iso__sdde_count(c, i) * c->size > INT_MAX - ISO_SUB_HDR)
            return iso__error_msg(ISO_ERR_COUNT, "message %d has %lld bytes (at most %d)", i,
                                  (long long)iso__sdde_count(c, i) * c->size,
                                  INT_MAX - ISO_SUB_HDR);
    if ((long long)o->recvcount * o->size > INT_MAX - ISO_SUB_HDR)
        return iso__error_msg(ISO_ERR_COUNT, "recvcount x recvtype has %lld bytes (at most %d)",
                              (long long)o->recvcount * o->size, INT_MAX - ISO_SUB_HDR);
    c->recv_bytes = o->recvcount * o->size;
    return c->n > 0 ? check_dests(c->dest, c->n, p) : MPI_SUCCESS;
}

long long iso__sdde_options_hash(const iso_vpt_opts *o)
{
    unsigned long long h = ((unsigned long long)o->n * 131u + (unsigned)o->locality) * 131u +
                           (unsigned)o->level;
    for (int d = 0; d < o->ndims; d++)
        h = h * 131u + (unsigned)o->dims[d];
    return (long long)(h >> 2);
}

/* iso_verify: one agreement (core/agree.c) spreads an argument error found
 * anywhere and checks that all chose the same algorithm; nonblocking, so
 * that other requests progress while it completes. */
static int agree(MPI_Comm comm, int err, int algorithm, const iso_vpt_opts *vpt, int tune)
{
    /* the VPT options and the locality level too: processes whose shapes or
     * regions differ would plan apart */
    iso_agreement ag = {.nsame = 3, .same = {algorithm, iso__sdde_options_hash(vpt), tune}};
    int e;
    if ((e = iso__agree(comm, err, &ag)) != MPI_SUCCESS)
        return e;
    if (ag.differs == 0)
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different algorithms "
                                                 "(iso_sparse_algorithm, ISO_SPARSE_ALGORITHM)");
    if (ag.differs == 1)
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different VPT shapes "
                                                 "(iso_vpt_dims, iso_vpt_n, iso_vpt_locality, "
                                                 "iso_locality)");
    if (ag.differs == 2) /* the tuner's agreements need every process */
        return iso__error_msg(ISO_ERR_ALGORITHM, "processes chose different iso_tune settings "
                                                 "(iso_tune, ISO_TUNE)");
    return MPI_SUCCESS;
}

/* ---- outputs ---------------------------------------------------------------------- */

static int by_source(const void *a, const void *b)
{
    int x = ((const iso_inmsg *)a)->source, y = ((const iso_inmsg *)b)->source;
    return (x > y) - (x < y);
}

/* Writes count x recvtype from packed bytes into out. */
static int unpack(const crs_out *o, const char *in, int bytes, char *out, int count,
                  MPI_Comm comm)
{
    int pos = 0;
    if (o->true_lb == 0 && o->true_extent == o->size && o->extent == o->size) {
        memcpy(out, in, (size_t)bytes); /* contiguous: packed is the data */
        return MPI_SUCCESS;
    }
    return MPI_Unpack(in, bytes, &pos, out, count, o->recvtype, comm);
}

/* Are the received messages, sorted by source, the output as they lie: the
 * inbox's own buffer, each message right after the one before from offset
 * 0, and recvtype contiguous (packed bytes are the data)?  Then the buffer
 * becomes *recvvals.  Always so when the messages arrived in source order
 * (one source: every call at 2 processes). */
static int in_place(const iso_inbox *in, const crs_out *o)
{
    size_t off = 0;
    if (in->ext != NULL || in->data == NULL ||
        !(o->true_lb == 0 && o->true_extent == o->size && o->extent == o->size))
        return 0;
    for (int k = 0; k < in->n; k++) {
        if (in->msgs[k].off != off)
            return 0;
        off += (size_t)in->msgs[k].bytes;
    }
    return 1;
}

/* Sorts the received messages by source and writes the outputs:
 * message k at element displ[k] of *recvvals, laid out as total x recvtype. */
static int assemble(iso_inbox *in, const crs_out *o, int constant, MPI_Comm comm)
{
    int n = in->n, *src, *counts, *displs, err = MPI_SUCCESS, as_is;
    long long total = 0;
    size_t bytes;
    char *vals = NULL;
    if (n == 0)
        return MPI_SUCCESS;
    qsort(in->msgs, (size_t)n, sizeof *in->msgs, by_source);
    src = malloc(sizeof(int) * (size_t)n);
    counts = malloc(sizeof(int) * (size_t)n);
    displs = malloc(sizeof(int) * (size_t)n);
    if (src == NULL || counts == NULL || displs == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int k = 0; k < n; k++) {
        int b = in->msgs[k].bytes;
        if (k > 0 && in->msgs[k].source == in->msgs[k - 1].source) {
            err = iso__error_msg(ISO_ERR_INTERN, "two messages from rank %d", src[k - 1]);
            goto fn_fail;
        }
        src[k] = in->msgs[k].source;
        if (constant ? b != o->recvcount * o->size : b % o->size != 0) {
            if (constant)
                err = iso__error_msg(ISO_ERR_COUNT, "the message from rank %d has %d bytes, "
                                                    "recvcount x recvtype %d", src[k], b,
                                     o->recvcount * o->size);
            else
                err = iso__error_msg(ISO_ERR_COUNT, "the message from rank %d has %d bytes, not "
                                                    "a multiple of recvtype's size %d", src[k], b,
                                     o->size);
            goto fn_fail;
        }
        counts[k] = constant ? o->recvcount : b / o->size;
        if (!constant && total > INT_MAX) {
            err = iso__error_msg(ISO_ERR_COUNT, "rdispls[%d] = %lld passes INT_MAX", k, total);
            goto fn_fail;
        }
        displs[k] = (int)(constant ? 0 : total);
        total += counts[k];
    }
    if (total > 0 && (size_t)(total - 1) > (SIZE_MAX / 2) / ((size_t)o->extent + 1)) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    bytes = total > 0 ? (size_t)(total - 1) * (size_t)o->extent + (size_t)o->true_lb +
                            (size_t)o->true_extent
                      : 1;
    if ((as_is = in_place(in, o))) { /* the received bytes are the output: no copy */
        vals = in->data;
        in->data = NULL;
        in->datacap = in->len = 0;
    } else if ((vals = malloc(bytes)) == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int k = 0; k < n && err == MPI_SUCCESS && !as_is; k++) {
        MPI_Aint first = constant ? (MPI_Aint)k * o->recvcount : (MPI_Aint)displs[k];
        err = unpack(o, iso__inbox_at(in, k), in->msgs[k].bytes, vals + first * o->extent,
                     counts[k], comm);
    }
    if (err != MPI_SUCCESS)
        goto fn_fail;
    *o->recv_nnz = n;
    *o->src = src;
    *o->recvvals = vals;
    if (o->recvcounts) {
        *o->recvcounts = counts;
        *o->rdispls = displs;
    } else {
        free(counts);
        free(displs);
    }
    return MPI_SUCCESS;
fn_fail:
    free(src);
    free(counts);
    free(displs);
    free(vals);
    return err;
}

/* ---- a call ------------------------------------------------------------------------ */

/* ISO_VERBOSE=1: rank 0 says what runs whenever it differs from what the
 * last call of the same function ran. */
static void report_choice(const char *fn, MPI_Comm comm, int constant, int requested, int alg,
                          const iso_locality *loc)
{
    static int last[2][2] = {{-2, -2}, {-2, -2}}; /* [constant]: requested, alg */
    if (last[constant][0] == requested && last[constant][1] == alg)
        return;
    last[constant][0] = requested;
    last[constant][1] = alg;
    iso__report_choice(comm, fn, requested == ISO_SDDE_AUTO, iso__sdde_algorithms[alg].name,
                       " (%d processes, %d %s%s%s)", loc->size, loc->nnodes,
                       loc->level == ISO_LEVEL_NODE ? "node" : "region", loc->nnodes == 1 ? "" : "s",
                       loc->level == ISO_LEVEL_NODE ? "" : " of iso_locality");
}

/* p: the size of comm */
static int run(const char *fn, iso_sdde_call *c, const crs_out *o, const options_t *opt,
               MPI_Comm comm, int p)
{
    const iso_sdde_algorithm *a;
    iso_sdde_req *r = NULL;
    struct iso_request_s *exec;
    iso_tune_shape *trial = NULL;
    int err, algorithm = opt->algorithm;
    if ((err = iso__locality_at(c->priv->comm, c->vpt.level, &c->loc)) != MPI_SUCCESS)
        return err;
    if (algorithm == ISO_SDDE_AUTO) {
        algorithm = iso__sdde_select(p, c->loc->nnodes, c->constant);
        /* runtime tuning (tune.c): the shape's winner, or a trial call */
        if (opt->tune > 0 &&
            (err = iso__sdde_tune_pick(c, comm, p, opt->tune, &algorithm, &trial)) != MPI_SUCCESS)
            return err;
    }
    if (trial != NULL) { /* timed; ISO_VERBOSE reports the winner once decided */
        c->tag = iso__tags_reserve(c->priv, ISO_SDDE_NTAGS);
        if ((err = iso__sdde_tune_run(c, comm, fn, opt->verbose, trial, algorithm, &r)) ==
            MPI_SUCCESS)
            err = assemble((iso_inbox *)r->result, o, c->constant, c->priv->comm);
        if (r != NULL)
            iso__request_destroy(&r->req);
        return err;
    }
    if (opt->verbose) {
        report_choice(fn, comm, c->constant, opt->algorithm, algorithm, c->loc);
        iso__locality_report(comm, c->loc);
    }
    a = &iso__sdde_algorithms[algorithm];
    c->tag = iso__tags_reserve(c->priv, ISO_SDDE_NTAGS);
    if ((err = a->make(c, comm, &r)) != MPI_SUCCESS)
        return err;
    exec = r->exec ? r->exec : &r->req;
    if ((err = iso__request_start(exec)) == MPI_SUCCESS &&
        (err = iso__request_wait(exec)) == MPI_SUCCESS)
        err = assemble((iso_inbox *)r->result, o, c->constant, c->priv->comm);
    iso__request_destroy(&r->req);
    return err;
}

/* A call of the public function fn (named in its errors). */
static int crs(const char *fn, iso_sdde_call *c, crs_out *o, MPI_Info info, MPI_Comm comm)
{
    options_t opt;
    int p, inter = 0, err;
    outputs_clear(o);
    if (comm == MPI_COMM_NULL)
        return iso__raise_in(fn, MPI_COMM_NULL, iso__error_msg(ISO_ERR_ARG, "comm is "
                                                                            "MPI_COMM_NULL"));
    if ((err = MPI_Comm_test_inter(comm, &inter)) != MPI_SUCCESS || inter)
        return iso__raise_in(fn, comm, err ? err : iso__error_msg(ISO_ERR_ARG, "comm is an "
                                                                  "intercommunicator"));
    if ((err = MPI_Comm_size(comm, &p)) != MPI_SUCCESS)
        return iso__raise_in(fn, comm, err);
    err = options_get(info, p, &opt);
    c->vpt = opt.vpt;
    if (err == MPI_SUCCESS)
        err = check_args(c, o, p);
    if (err == MPI_SUCCESS && opt.algorithm != ISO_SDDE_AUTO &&
        iso__sdde_algorithms[opt.algorithm].constant_only && !c->constant)
        err = iso__error_msg(ISO_ERR_ALGORITHM, "%s needs constant sizes (Iso_alltoall_crs)",
                             iso__sdde_algorithms[opt.algorithm].name);
    /* Without verification a bad argument is reported without
     * communicating; with it, every process joins the agreement first. */
    if (err != MPI_SUCCESS && !opt.verify)
        return iso__raise_in(fn, comm, err);
    {
        int e = iso__priv_cached(comm, &c->priv);
        if (e != MPI_SUCCESS)
            return iso__raise_in(fn, comm, e);
    }
    if (opt.verify)
        err = agree(c->priv->comm, err, opt.algorithm, &opt.vpt, opt.tune);
    if (err == MPI_SUCCESS)
        err = run(fn, c, o, &opt, comm, p);
    return iso__raise_in(fn, comm, err);
}

int Iso_alltoall_crs(int send_nnz, const int dest[], int sendcount, MPI_Datatype sendtype,
                     const void *sendvals, int *recv_nnz, int **src, int recvcount,
                     MPI_Datatype recvtype, void **recvvals, MPI_Info info, MPI_Comm comm)
{
    iso_sdde_call c = {.n = send_nnz, .dest = dest, .count = sendcount, .type = sendtype,
                       .buf = sendvals, .constant = 1};
    crs_out o = {.recvcount = recvcount, .recvtype = recvtype, .recv_nnz = recv_nnz,
                 .src = src, .recvvals = recvvals};
    return crs(__func__, &c, &o, info, comm);
}

int Iso_alltoallv_crs(int send_nnz, const int dest[], const int sendcounts[], const int sdispls[],
                      MPI_Datatype sendtype, const void *sendvals, int *recv_nnz, int **src,
                      int **recvcounts, int **rdispls, MPI_Datatype recvtype, void **recvvals,
                      MPI_Info info, MPI_Comm comm)
{
    iso_sdde_call c = {.n = send_nnz, .dest = dest, .counts = sendcounts, .displs = sdispls,
                       .type = sendtype, .buf = sendvals};
    crs_out o = {.recvtype = recvtype, .recv_nnz = recv_nnz, .src = src,
                 .recvcounts = recvcounts, .rdispls = rdispls, .recvvals = recvvals};
    return crs(__func__, &c, &o, info, comm);
}
