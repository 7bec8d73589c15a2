/* Runtime tuning of the SDDE's auto (DESIGN.md, "Runtime tuning of auto"):
 * coll/tune.c's machinery (declared in route/route.h) with the SDDE's
 * algorithms as candidates, one tuner per communicator (kept on the
 * user's communicator, where Iso_tune_info finds it).
 *
 * The call shape.  An SDDE call is dynamic: a process knows only its own
 * messages, so no size is known alike everywhere without communicating,
 * and every process must run the same candidate at the same call.  What
 * all know alike is the form (which function: Alltoall_crs or
 * Alltoallv_crs), the options, and how many calls of the form came
 * before (blocking collectives: called in the same order everywhere).  So
 * the size class -- the largest message of the call, rounded up to a power
 * of 2, max over processes -- is agreed by one MPI_Allreduce at the first
 * call of a form and again every RECHECK calls of it once its shape is
 * decided (never during a shape's trial calls); the calls in between keep
 * the shape of the last agreement.  A shape is (form, size class, the VPT
 * and locality options, which decide the candidates).
 *
 * The candidates: auto's pick (iso__sdde_select) first, then the other
 * algorithms auto may choose here in table order: personalized, nbx, rma
 * (constant sizes), locality-personalized and locality-nbx (more than one
 * region, not one process per region), vpt (a VPT with two or more
 * dimensions of size > 1; otherwise it is personalized).  sharing is left
 * out: its plan gathers the whole pattern at every call.  Trial calls run
 * back to back, as the Cartesian ones do (no barrier: started together,
 * personalized measured 1.5x its time in a run of calls and lost to nbx,
 * DESIGN.md), timed around start and wait; the outputs are assembled
 * after each, as in every call. */
#include "sparse/sparse.h"
#include <stdio.h>
#include <stdlib.h>

#define RECHECK 64 /* calls of a decided shape between agreements of the size class */

enum { PERSONALIZED, NBX, RMA, LOCALITY_PERSONALIZED, LOCALITY_NBX, VPT }; /* table.c's order */

/* What one form's calls are on, kept with the tuner. */
typedef struct {
    int agreed;            /* a size class has been agreed */
    iso_tune_shape *shape; /* its shape; NULL: the table was full (auto's rule) */
    long since;            /* calls since that agreement */
    double bytes;          /* its size class */
    long long opts;        /* its options' hash */
} form_state;

typedef struct {
    iso_tuner *tuner;
    form_state form[2]; /* [constant] */
} sdde_tuning;

/* The tuning state of comm's SDDE calls, made at the first tuned call. */
static int tuning_of(MPI_Comm comm, iso_priv *priv, int p, int nnodes, sdde_tuning **out)
{
    iso_tuner *t = priv->sdde_tuner;
    char what[48];
    int err;
    if (t == NULL && (t = iso__tuner_of_comm(comm)) == NULL) {
        /* FNV-1a of what decides the candidates besides the shape (the
         * same on every process and in every run: ISO_TUNE_FILE) */
        unsigned long long id = ISO_FNV1A_BASIS;
        const long long v[] = {p, nnodes, 0x73646465 /* "sdde" */};
        for (size_t i = 0; i < sizeof v / sizeof v[0]; i++)
            id = iso__fnv1a(id, (unsigned long long)v[i]);
        snprintf(what, sizeof what, "p=%d, %d region%s", p, nnodes, nnodes == 1 ? "" : "s");
        if ((t = iso__tuner_new_sdde(id, what, &iso__sdde_table)) == NULL)
            return iso__error(ISO_ERR_NOMEM);
        if ((err = iso__tuner_attach(comm, t)) != MPI_SUCCESS)
            return err;
    }
    priv->sdde_tuner = t;
    *out = iso__tuner_ext(t, sizeof **out);
    if (*out == NULL)
        return iso__error(ISO_ERR_NOMEM);
    (*out)->tuner = t;
    return MPI_SUCCESS;
}

/* This process's size class: the largest message it sends in call c,
 * as the exponent of the next power of 2 (-1: no bytes). */
static int local_class(const iso_sdde_call *c)
{
    long long most = 0;
    int e = -1;
    for (int i = 0; i < c->n; i++) {
        long long b = (long long)iso__sdde_count(c, i) * c->size;
        if (b > most)
            most = b;
    }
    while (most > 0 && (e < 0 || (1ll << e) < most))
        e++;
    return most > 0 && e < 0 ? 0 : e;
}

/* Does vpt run store-and-forward here (two or more dimensions of size > 1),
 * not personalized? */
static int vpt_forwards(const iso_sdde_call *c, int p)
{
    int n, dims[ISO_VPT_MAXDIMS], real = 0;
    if (iso__vpt_shape(&c->vpt, p, &n, dims) != MPI_SUCCESS)
        return 0;
    for (int d = 0; d < n; d++)
        real += dims[d] > 1;
    return real > 1;
}

/* Can rma make its window here?  Open MPI 4 refuses it across nodes (rma.c,
 * ompi#9492), and only once the call runs: a trial call would fail.  The
 * nodes are the node-level locality's (cached; alike everywhere), unless
 * ISO_NODE_MAP pretends them, which rma does not see. */
static int rma_runs(const iso_sdde_call *c)
{
#if defined(OPEN_MPI) && OMPI_MAJOR_VERSION < 5
    const iso_locality *node;
    const char *map = getenv("ISO_NODE_MAP");
    if (map != NULL && *map)
        return 0;
    return iso__locality_at(c->priv->comm, ISO_LEVEL_NODE, &node) == MPI_SUCCESS &&
           node->nnodes == 1;
#else
    (void)c;
    return 1;
#endif
}

/* auto's pick first, then the others auto may choose here. */
static int candidates(const iso_sdde_call *c, int p, int pick, iso_candidate *out)
{
    int nnodes = c->loc->nnodes, n = 0;
    int usable[] = {
        [PERSONALIZED] = 1,
        [NBX] = 1,
        [RMA] = c->constant && rma_runs(c),
        [LOCALITY_PERSONALIZED] = nnodes > 1 && nnodes < p,
        [LOCALITY_NBX] = nnodes > 1 && nnodes < p,
        [VPT] = vpt_forwards(c, p),
    };
    out[n++] = (iso_candidate){pick, ISO_MODE_PACK, 0.0};
    for (int k = 0; k < (int)(sizeof usable / sizeof usable[0]) && p > 1; k++)
        if (usable[k] && k != pick)
            out[n++] = (iso_candidate){k, ISO_MODE_PACK, (double)n};
    return n;
}

int iso__sdde_tune_pick(iso_sdde_call *c, MPI_Comm comm, int p, int trials, int *alg,
                        iso_tune_shape **trial)
{
    sdde_tuning *st;
    form_state *f;
    iso_candidate cand[ISO_MAX_CANDIDATES];
    iso_msg_mode mode;
    long long opts = iso__sdde_options_hash(&c->vpt);
    int err, ready;
    *trial = NULL;
    if ((err = tuning_of(comm, c->priv, p, c->loc->nnodes, &st)) != MPI_SUCCESS)
        return err;
    f = &st->form[c->constant ? 1 : 0];
    /* a new size class is agreed at the form's first call, every RECHECK
     * calls of a decided shape, and when the options change (alike on
     * every process: iso_verify checks them) */
    if (!f->agreed || f->opts != opts ||
        (f->since >= RECHECK && (f->shape == NULL || !iso__tune_shape_tuning(f->shape)))) {
        int e = local_class(c);
        if ((err = iso__priv_ready(c->priv, 1, &ready)) != MPI_SUCCESS ||
            (err = MPI_Allreduce(MPI_IN_PLACE, &e, 1, MPI_INT, MPI_MAX, c->priv->comm)) !=
                MPI_SUCCESS)
            return err;
        f->bytes = e < 0 ? 0.0 : (double)(1ll << e);
        f->opts = opts;
        f->since = 0;
        f->shape = NULL;
        f->agreed = 0; /* until the shape is had: after an error (ISO_TUNE_TEST) agree again */
        {
            iso_tune_key key = {ISO_ALLTOALL, f->bytes, c->constant, (int)(opts & 0x7fffffff),
                                ISO_MODE_PACK};
            int ncand = candidates(c, p, *alg, cand);
            if ((err = iso__tune_shape_get(st->tuner, &key, cand, ncand, cand, ncand, trials,
                                           &f->shape)) != MPI_SUCCESS)
                return err;
            f->agreed = 1;
        }
    }
    f->since++;
    if (f->shape == NULL) /* the table is full: auto's rule */
        return MPI_SUCCESS;
    if (iso__tune_next(st->tuner, f->shape, alg, &mode))
        *trial = f->shape;
    return MPI_SUCCESS;
}

int iso__sdde_tune_run(iso_sdde_call *c, MPI_Comm comm, const char *fn, int verbose,
                       iso_tune_shape *trial, int alg, iso_sdde_req **out)
{
    iso_tuner *t = c->priv->sdde_tuner; /* set by iso__sdde_tune_pick */
    struct iso_request_s *exec;
    double t0, t1;
    int err;
    *out = NULL;
    /* a candidate that cannot be made is skipped (alike everywhere: its
     * make fails for structural reasons, or from the test hook); this call
     * runs personalized, untimed */
    if ((err = iso__sdde_algorithms[alg].make(c, comm, out)) != MPI_SUCCESS) {
        iso__tune_failed(trial);
        if ((err = iso__sdde_algorithms[PERSONALIZED].make(c, comm, out)) != MPI_SUCCESS)
            return err;
    }
    exec = (*out)->exec ? (*out)->exec : &(*out)->req;
    iso__world_errors_return(1); /* once for start and wait (MPICH) */
    t0 = MPI_Wtime();
    if ((err = iso__request_start(exec)) == MPI_SUCCESS)
        err = iso__request_wait(exec);
    t1 = MPI_Wtime();
    iso__world_errors_return(0);
    if (err != MPI_SUCCESS)
        return err;
    return iso__tune_count(t, verbose, c->priv, comm, fn, trial, t1 - t0, t1 - t0);
}
