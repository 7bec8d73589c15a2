/* Runtime tuning of auto (DESIGN.md, "Runtime tuning of auto").  The cost
 * model is the prior: for a blocking call shape (everything auto's choice
 * depends on besides the neighborhood: collective family, bytes per block,
 * requested message mode, probed v/w messages), the candidates are each
 * algorithm in its cheapest mode (direct among them) and every schedule
 * the model puts within 2x of its pick.  The next
 * candidates x trials blocking calls of that shape run the candidates in
 * blocks of trials consecutive calls, in the model's order except that its
 * pick comes last, and after a lead of untimed calls of the pick
 * (candidate_at says why); each call is
 * timed with MPI_Wtime around start and wait (simulated time under SMPI;
 * on a graph after a barrier, iso__tune_run says why), and the first call
 * of a block, which meets the candidate cold, is not counted unless it is
 * the only one.  On a Cartesian neighborhood the call cache keeps the
 * candidate's request between the calls of its block, as it will keep the
 * winner's; at the block's end its buffers are freed, not left with the
 * candidate's cached schedule.  The last
 * of them agrees on each candidate's median over processes (the maximum
 * where the calls started together, on a graph; else the mean: agree())
 * and on the time spent; the least wins, a tie going to the candidate the
 * model ranks first.  Every process makes the same trial
 * calls, so all choose alike at the same call.  Every trial call is a real
 * call: it delivers the data.
 *
 * A candidate whose schedule cannot be built is skipped: its trial calls
 * run direct, untimed, and it cannot win.  (A build fails alike on every
 * process for structural reasons; one that fails on one process only, out
 * of memory, would make the processes run different schedules in that
 * call, which is why the test hook fails a candidate everywhere.)
 *
 * Winners are kept per neighborhood (at most MAX_SHAPES shapes; further
 * shapes take the model's pick) and used by every later auto selection of
 * the same shape: the blocking call cache, persistent requests, the
 * schedule queries.  (On a graph a persistent request made before its
 * shape is decided runs the trials at its _init call: tune_graph.c.)
 * ISO_TUNE_FILE: read at the first selection that looks
 * for a record, and again whenever the variable names another file
 * ("iso_tune id=..." lines, per neighborhood and shape); rank 0 appends
 * each new winner to it, so a later run starts tuned.  Without it the
 * records are read from ISO_COST_FILE, which may carry them beside the
 * model's constants (never written there).
 *
 * The same machinery tunes auto on distributed graph communicators
 * (tune_graph.c: its candidates are direct, message sharing and VPT
 * shapes; the tuner is told which kind of candidates it names) and the
 * SDDE's (sparse/tune.c: the SDDE's algorithms, named by its table; the
 * tuner is kept on the user's communicator, below).
 *
 * Test hook ISO_TUNE_TEST (read when a shape's tuning starts): "tie" takes
 * every trial call's time as 1 s (a tie: the model's pick wins); "cold"
 * takes the first block's calls as 2 s and the others as 1 s, as a
 * library's warm-up would (the model's pick, timed last, still wins);
 * "fail:ALG" makes the build of shared algorithm ALG (on a graph: vpt or
 * sharing; in the SDDE: any of its algorithms) fail in trial calls. */
#include "coll/coll.h"
#include <ctype.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define MAX_SHAPES 16
/* The trials begin with calls of the model's pick, untimed, until the
 * process has received WARM_MESSAGES of its messages, at most MAX_LEAD
 * calls (candidate_at says why) */
#define WARM_MESSAGES 96
#define MAX_LEAD 16
enum { HOOK_TIE = 1, HOOK_COLD }; /* ISO_TUNE_TEST=tie, cold */

typedef enum { SHAPE_TUNING, SHAPE_DONE } shape_state;
typedef enum { FROM_MODEL, FROM_TRIALS, FROM_FILE } shape_source;

struct iso_tune_shape {
    iso_tune_key key;

    shape_state state;
    shape_source source;
    int ncand, trials;                     /* candidates, trial calls of each */
    int lead; /* untimed calls of the model's pick before the blocks (candidate_at) */
    iso_candidate cand[ISO_MAX_CANDIDATES]; /* by modelled cost: the model's pick first */
    unsigned char failed[ISO_MAX_CANDIDATES];
    char fail[32]; /* test hook: candidates named so (or ALG/..., ALG:...) fail; "": none */
    int hooked;    /* test hook on times: 0 none, HOOK_TIE, HOOK_COLD */
    int calls;         /* trial calls made */
    int current;       /* candidate of the trial call under way; -1: direct, untimed */
    int ntimes[ISO_MAX_CANDIDATES];
    double times[ISO_MAX_CANDIDATES][ISO_TUNE_MAX_CALLS];
    double spent;                          /* this process's time in trial calls */
    double median[ISO_MAX_CANDIDATES];     /* agreed (agree()); HUGE_VAL: failed */
    double cost;                           /* agreed: time of the trial calls, max */
    int won_alg;
    iso_msg_mode won_mode;
};

/* The candidate of trial call k (0, 1, ...): first lead calls of cand[0],
 * the model's pick, untimed (what auto runs untuned); then the blocks of
 * cand[1], cand[2], ..., cand[ncand-1] and last cand[0], trials calls
 * each.  The MPI library's own start-up then falls on the lead, and what
 * it leaves falls on candidates it can only make lose (a time made slow
 * never wins) while the pick is timed warm: the winner runs no slower
 * than the pick would.  (MPICH 4.0.2 with UCX sends a process's first
 * 64-80 messages of 256 B-8 KiB to a process of its node 5-10x slower:
 * its shared-memory FIFO has 64 slots whose pages are touched on the first
 * lap, so the lead warms it for messages up to the size of the pick's.
 * With the pick's block first and no lead, at 2 ranks, 2D Moore r1,
 * 4 KiB, direct was timed at 38-51 us where it runs in 5, and auto ran
 * bruck 3.3-3.5x slower.  DESIGN.md has the measurements.) */
static int candidate_at(const iso_tune_shape *sh, int k)
{
    int others = (sh->ncand - 1) * sh->trials;
    k -= sh->lead;
    return k >= 0 && k < others ? k / sh->trials + 1 : 0;
}

/* Is trial call k timed?  Not in the lead, nor the first of a block,
 * which meets its candidate cold (unless it is the block's only call). */
static int call_timed(const iso_tune_shape *sh, int k)
{
    k -= sh->lead;
    return k >= 0 && (k % sh->trials != 0 || sh->trials == 1);
}

static int total_calls(const iso_tune_shape *sh)
{
    return sh->ncand * sh->trials + sh->lead;
}

struct iso_tuner {
    unsigned long long id; /* the neighborhood, as ISO_TUNE_FILE names it */
    int kind;              /* ISO_TUNE_CART, _GRAPH or _SDDE: how candidates are named */
    char what[48];         /* the neighborhood for ISO_VERBOSE ("s=8") */
    int tuning;            /* shapes in SHAPE_TUNING */
    void *ext;             /* what the user of the tuner keeps with it (iso__tuner_ext) */
    int n;
    iso_tune_shape shapes[MAX_SHAPES];
};
typedef iso_tuner tuner_t;

/* ---- options --------------------------------------------------------------- */

int iso__tune_option(const char *where, const char *value, int *trials)
{
    if (!strcasecmp(value, "off")) {
        *trials = 0;
        return MPI_SUCCESS;
    }
    if (!strcasecmp(value, "on")) {
        *trials = ISO_TUNE_TRIALS;
        return MPI_SUCCESS;
    }
    if (!strncasecmp(value, "on:", 3) && isdigit((unsigned char)value[3])) {
        char *end;
        long n = strtol(value + 3, &end, 10);
        if (*end == '\0' && n >= 1 && n <= ISO_TUNE_MAX_CALLS) {
            *trials = (int)n;
            return MPI_SUCCESS;
        }
    }
    return iso__error_msg(ISO_ERR_INFO,
                          "%s=\"%s\" (off, on, or on:N for N trial calls per candidate, "
                          "1 <= N <= %d)",
                          where, value, ISO_TUNE_MAX_CALLS);
}

/* ---- names and records -------------------------------------------------------- */

/* The SDDE's algorithm table (iso__tuner_new_sdde): one for the process. */
static const iso_table *sdde_names;

static void candidate_name(int kind, int alg, iso_msg_mode mode, char *buf, size_t len)
{
    if (kind == ISO_TUNE_SDDE) { /* sparse/tune.c's candidates */
        const char *name = sdde_names ? iso__table_name(sdde_names, alg) : NULL;
        snprintf(buf, len, "%s", name ? name : "?");
    } else if (kind == ISO_TUNE_GRAPH) { /* tune_graph.c's candidates */
        if (alg == 0)
            snprintf(buf, len, "direct");
        else if (alg == ISO_TUNE_SHARING)
            snprintf(buf, len, "sharing");
        else
            snprintf(buf, len, "vpt/n%d", alg);
    } else if (iso__algorithms[alg].shared)
        snprintf(buf, len, "%s/%s", iso__algorithms[alg].name, iso__mode_names[mode]);
    else
        snprintf(buf, len, "%s", iso__algorithms[alg].name);
}

/* Appends to buf (of len bytes) without overflowing it. */
static void append(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void append(char *buf, size_t len, const char *fmt, ...)
{
    size_t used = strlen(buf);
    va_list ap;
    if (used + 1 >= len)
        return;
    va_start(ap, fmt);
    vsnprintf(buf + used, len - used, fmt, ap);
    va_end(ap);
}

/* The shape's record (Iso_tune_info, ISO_TUNE_FILE's comment): made of
 * agreed values only, so it is the same text on every process. */
static void shape_record(int kind, const iso_tune_shape *sh, char *buf, size_t len)
{
    static const char *const sources[] = {"model", "trials", "file"};
    char name[64];
    buf[0] = '\0';
    if (kind == ISO_TUNE_SDDE) /* the form, and the largest message at most bytes */
        append(buf, len, "form=%s bytes<=%.17g state=%s source=%s",
               sh->key.reused ? "constant" : "variable", sh->key.bytes,
               sh->state == SHAPE_DONE ? "tuned" : "tuning", sources[sh->source]);
    else
        append(buf, len, "coll=%s bytes=%.17g reused=%d probed=%d combine=%s state=%s source=%s",
               iso__coll_names[sh->key.coll], sh->key.bytes, sh->key.reused, sh->key.probed,
               iso__mode_names[sh->key.mode], sh->state == SHAPE_DONE ? "tuned" : "tuning",
               sources[sh->source]);
    append(buf, len, " tried=");
    for (int c = 0; c < sh->ncand && sh->source != FROM_FILE; c++) {
        candidate_name(kind, sh->cand[c].alg, sh->cand[c].mode, name, sizeof name);
        append(buf, len, "%s%s", c ? "," : "", name);
        if (sh->state != SHAPE_DONE || sh->source != FROM_TRIALS)
            continue;
        if (sh->median[c] == HUGE_VAL)
            append(buf, len, ":failed");
        else
            append(buf, len, ":%.4gus", sh->median[c] * 1e6);
    }
    if (sh->state == SHAPE_DONE) {
        candidate_name(kind, sh->won_alg, sh->won_mode, name, sizeof name);
        append(buf, len, " won=%s", name);
    }
    append(buf, len, " calls=%d/%d", sh->calls, total_calls(sh));
    if (sh->state == SHAPE_DONE && sh->source == FROM_TRIALS)
        append(buf, len, " cost=%.4gus", sh->cost * 1e6);
}

/* ---- ISO_TUNE_FILE -------------------------------------------------------------- */

typedef struct {
    unsigned long long id;
    char coll[32], mode[16], won[64];
    double bytes;
    int reused, probed;
} file_rec;

static file_rec *file_recs;
static int file_nrecs;
static char *file_path; /* the file file_recs were read from */
static pthread_mutex_t file_lock = PTHREAD_MUTEX_INITIALIZER;

/* Where winners are read: ISO_TUNE_FILE, else ISO_COST_FILE, so that a
 * cost file can carry them too (each reader skips the other's lines: the
 * model's "key value" lines, the tuner's "iso_tune id=..." lines).  Saved
 * only to ISO_TUNE_FILE: a benchmark's cost file is not written. */
static const char *file_read_path(void)
{
    const char *path = getenv("ISO_TUNE_FILE");
    return path && *path ? path : getenv("ISO_COST_FILE");
}

/* Reads the winners' file into file_recs if it is another file than the
 * last read; none named: no records (under file_lock). */
static void file_sync(void)
{
    const char *path = file_read_path();
    char line[1024];
    FILE *f;
    if (path && *path && file_path && !strcmp(path, file_path))
        return;
    free(file_path);
    free(file_recs);
    file_path = NULL;
    file_recs = NULL;
    file_nrecs = 0;
    if (!path || !*path || (file_path = strdup(path)) == NULL || (f = fopen(path, "r")) == NULL)
        return;
    while (fgets(line, sizeof line, f)) {
        file_rec r;
        void *more;
        if (sscanf(line, "iso_tune id=%llx coll=%31s bytes=%lf reused=%d probed=%d combine=%15s "
                         "won=%63s",
                   &r.id, r.coll, &r.bytes, &r.reused, &r.probed, r.mode, r.won) != 7)
            continue; /* other lines are comments */
        if ((more = realloc(file_recs, sizeof r * (size_t)(file_nrecs + 1))) == NULL)
            break;
        file_recs = more;
        file_recs[file_nrecs++] = r; /* a later record of the same shape wins */
    }
    fclose(f);
}

/* The file's winner for call shape key of neighborhood id, if it names one
 * of the schedules auto can run here (all: every candidate). */
static int file_winner(int kind, unsigned long long id, const iso_tune_key *key,
                       const iso_candidate *all, int nall, int *alg, iso_msg_mode *mode)
{
    int found = 0;
    pthread_mutex_lock(&file_lock);
    file_sync();
    for (int k = file_nrecs - 1; k >= 0; k--) {
        const file_rec *r = &file_recs[k];
        char name[64];
        if (r->id != id || strcmp(r->coll, iso__coll_names[key->coll]) ||
            r->bytes != key->bytes || r->reused != key->reused || r->probed != key->probed ||
            strcmp(r->mode, iso__mode_names[key->mode]))
            continue;
        for (int c = 0; c < nall && !found; c++) {
            candidate_name(kind, all[c].alg, all[c].mode, name, sizeof name);
            if (!strcasecmp(name, r->won)) {
                *alg = all[c].alg;
                *mode = all[c].mode;
                found = 1;
            }
        }
        break; /* the last record of the shape decides; one that cannot run here: tune */
    }
    pthread_mutex_unlock(&file_lock);
    return found;
}

/* Does the winners' file have records? */
static int file_has_records(void)
{
    int n;
    pthread_mutex_lock(&file_lock);
    file_sync();
    n = file_nrecs;
    pthread_mutex_unlock(&file_lock);
    return n > 0;
}

static void file_save(int kind, unsigned long long id, const iso_tune_shape *sh)
{
    const char *path = getenv("ISO_TUNE_FILE");
    char name[64], record[1024];
    FILE *f;
    if (!path || !*path)
        return;
    candidate_name(kind, sh->won_alg, sh->won_mode, name, sizeof name);
    shape_record(kind, sh, record, sizeof record);
    pthread_mutex_lock(&file_lock);
    if ((f = fopen(path, "a")) != NULL) { /* no file, no record: tuning goes on without it */
        fprintf(f, "iso_tune id=%016llx coll=%s bytes=%.17g reused=%d probed=%d combine=%s won=%s "
                   "# %s\n",
                id, iso__coll_names[sh->key.coll], sh->key.bytes, sh->key.reused, sh->key.probed,
                iso__mode_names[sh->key.mode], name, record);
        fclose(f);
    }
    pthread_mutex_unlock(&file_lock);
}

/* ---- the table of shapes ------------------------------------------------------- */

iso_tuner *iso__tuner_new(unsigned long long id, int kind, const char *what)
{
    iso_tuner *t = calloc(1, sizeof *t);
    if (t != NULL) {
        t->id = id;
        t->kind = kind;
        snprintf(t->what, sizeof t->what, "%s", what);
    }
    return t;
}

iso_tuner *iso__tuner_new_sdde(unsigned long long id, const char *what, const iso_table *names)
{
    sdde_names = names; /* the same table at every call */
    return iso__tuner_new(id, ISO_TUNE_SDDE, what);
}

void iso__tuner_free(void *t)
{
    if (t != NULL)
        free(((tuner_t *)t)->ext);
    free(t);
}

void *iso__tuner_ext(iso_tuner *t, size_t size)
{
    if (t->ext == NULL)
        t->ext = calloc(1, size);
    return t->ext;
}

int iso__tune_shape_tuning(const iso_tune_shape *sh) { return sh->state == SHAPE_TUNING; }

/* ---- the SDDE's tuner, kept on the user's communicator --------------------------- */

static int comm_keyval = MPI_KEYVAL_INVALID;

static int comm_tuner_delete(MPI_Comm comm, int keyval, void *attr, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)extra;
    iso__tuner_free(attr);
    return MPI_SUCCESS;
}

static void comm_tuners_drop_world(void)
{
    iso__world_attr_delete(comm_keyval);
}

iso_tuner *iso__tuner_of_comm(MPI_Comm comm)
{
    iso_tuner *t = NULL;
    int flag = 0;
    if (comm_keyval == MPI_KEYVAL_INVALID || comm == MPI_COMM_NULL ||
        MPI_Comm_get_attr(comm, comm_keyval, &t, &flag) != MPI_SUCCESS || !flag)
        return NULL;
    return t;
}

int iso__tuner_attach(MPI_Comm comm, iso_tuner *t)
{
    int err = MPI_SUCCESS;
    iso__lock();
    if (comm_keyval == MPI_KEYVAL_INVALID &&
        (err = MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_tuner_delete, &comm_keyval,
                                      NULL)) == MPI_SUCCESS)
        err = iso__at_finalize(comm_tuners_drop_world);
    iso__unlock();
    if (err == MPI_SUCCESS && (err = MPI_Comm_set_attr(comm, comm_keyval, t)) == MPI_SUCCESS)
        return MPI_SUCCESS;
    iso__tuner_free(t);
    return err;
}

/* FNV-1a over the grid and the offsets: the same on every process. */
static unsigned long long nbh_id(const iso_nbh *nb)
{
    const int *parts[] = {nb->dims, nb->periods, nb->offsets};
    size_t lens[] = {(size_t)nb->d, (size_t)nb->d, (size_t)nb->s * (size_t)nb->d};
    unsigned long long h = iso__fnv1a(ISO_FNV1A_BASIS, (unsigned)nb->d);
    h = iso__fnv1a(h, (unsigned)nb->s);
    for (int p = 0; p < 3; p++)
        for (size_t i = 0; i < lens[p]; i++)
            h = iso__fnv1a(h, (unsigned)parts[p][i]);
    return h;
}

static tuner_t *tuner_of(iso_nbh *nb)
{
    tuner_t *t = nb->tuner;
    char what[48];
    snprintf(what, sizeof what, "s=%d", nb->s);
    if (t == NULL && (t = iso__tuner_new(nbh_id(nb), ISO_TUNE_CART, what)) != NULL) {
        nb->tuner = t;
        nb->tuner_free = iso__tuner_free;
    }
    return t;
}

static void shape_key(const iso_args *a, iso_msg_mode mode, int reused, iso_tune_key *key)
{
    key->coll = a->coll;
    key->bytes = 0.0;
    iso__uniform_block_bytes(a, &key->bytes);
    key->reused = reused;
    key->probed = !iso__datatype_possible(a);
    key->mode = mode;
}

static iso_tune_shape *shape_find(const tuner_t *t, const iso_tune_key *key)
{
    for (int k = 0; t && k < t->n; k++) {
        const iso_tune_key *x = &t->shapes[k].key;
        if (x->coll == key->coll && x->bytes == key->bytes && x->reused == key->reused &&
            x->probed == key->probed && x->mode == key->mode)
            return (iso_tune_shape *)&t->shapes[k];
    }
    return NULL;
}

/* ISO_TUNE_TEST into sh's hooks (kind: which candidates may be failed). */
static int test_hooks(int kind, iso_tune_shape *sh)
{
    const char *v = getenv("ISO_TUNE_TEST");
    if (!v || !*v)
        return MPI_SUCCESS;
    if (!strcasecmp(v, "tie") || !strcasecmp(v, "cold")) {
        sh->hooked = !strcasecmp(v, "tie") ? HOOK_TIE : HOOK_COLD;
        return MPI_SUCCESS;
    }
    if (!strncasecmp(v, "fail:", 5)) {
        const char *alg = v + 5;
        int k = kind == ISO_TUNE_CART ? iso__table_find(&iso__algorithm_table, alg) : -1;
        if (kind == ISO_TUNE_SDDE)
            alg = sdde_names && (k = iso__table_find(sdde_names, alg)) >= 0
                      ? iso__table_name(sdde_names, k)
                      : NULL;
        else if (kind == ISO_TUNE_CART && k > 0 && iso__algorithms[k].shared)
            alg = iso__algorithms[k].name;
        else if (kind == ISO_TUNE_CART || (strcasecmp(alg, "vpt") && strcasecmp(alg, "sharing")))
            alg = NULL;
        if (alg != NULL) {
            snprintf(sh->fail, sizeof sh->fail, "%s", alg);
            return MPI_SUCCESS;
        }
    }
    return iso__error_msg(ISO_ERR_INFO,
                          "environment ISO_TUNE_TEST=\"%s\" (tie, cold, or fail:ALG for %s)", v,
                          kind == ISO_TUNE_CART   ? "a combining algorithm"
                          : kind == ISO_TUNE_SDDE ? "an iso_sparse_algorithm of Iso_*_crs"
                                                  : "vpt or sharing");
}

/* Does the test hook fail candidate c of sh?  Its name is the hook's ALG,
 * or ALG followed by its mode or shape (dimwise/pack, vpt/n3). */
static int hook_fails(int kind, const iso_tune_shape *sh, int c)
{
    char name[64];
    size_t len = strlen(sh->fail);
    if (len == 0)
        return 0;
    candidate_name(kind, sh->cand[c].alg, sh->cand[c].mode, name, sizeof name);
    return !strncasecmp(name, sh->fail, len) &&
           (name[len] == '\0' || name[len] == '/');
}

/* Sorts the candidates by modelled cost, keeping the order of equals
 * (the model's pick among them comes first, as in iso__algorithm_select). */
void iso__tune_sort(iso_candidate *c, int n)
{
    for (int i = 1; i < n; i++) {
        iso_candidate x = c[i];
        int j = i;
        for (; j > 0 && c[j - 1].cost > x.cost; j--)
            c[j] = c[j - 1];
        c[j] = x;
    }
}

/* A new shape for key: from the file, the model's only candidate, or to be
 * tuned over cand[0..ncand) (the model's pick first; all: every candidate
 * auto could run, for the file's records) with trials calls each.  NULL
 * (and MPI_SUCCESS) if the table is full. */
static int shape_add(tuner_t *t, const iso_tune_key *key, const iso_candidate *cand, int ncand,
                     const iso_candidate *all, int nall, int trials, iso_tune_shape **out)
{
    iso_tune_shape *sh;
    int err;
    *out = NULL;
    if (t->n == MAX_SHAPES || ncand < 1)
        return MPI_SUCCESS;
    sh = &t->shapes[t->n];
    memset(sh, 0, sizeof *sh);
    sh->key = *key;
    sh->ncand = ncand < ISO_MAX_CANDIDATES ? ncand : ISO_MAX_CANDIDATES;
    memcpy(sh->cand, cand, sizeof *cand * (size_t)sh->ncand);
    sh->won_alg = sh->cand[0].alg;
    sh->won_mode = sh->cand[0].mode;
    if (file_winner(t->kind, t->id, key, all, nall, &sh->won_alg, &sh->won_mode)) {
        sh->state = SHAPE_DONE;
        sh->source = FROM_FILE;
    } else if (sh->ncand == 1) {
        sh->state = SHAPE_DONE;
        sh->source = FROM_MODEL;
    } else {
        if ((err = test_hooks(t->kind, sh)) != MPI_SUCCESS)
            return err;
        sh->state = SHAPE_TUNING;
        sh->source = FROM_TRIALS;
        t->tuning++;
        sh->trials = trials < ISO_TUNE_MAX_CALLS / sh->ncand ? trials
                                                             : ISO_TUNE_MAX_CALLS / sh->ncand;
    }
    t->n++;
    *out = sh;
    return MPI_SUCCESS;
}

/* The lead: untimed calls of the model's pick c before the trials, so that
 * the process has received WARM_MESSAGES of its messages (every process
 * has the same figures: all make the same calls). */
static int lead_calls(iso_nbh *nb, const iso_args *a, const iso_candidate *c)
{
    iso_figures f;
    int msgs = nb->s, calls;
    if (c->alg != 0 && iso__figures_get(nb, a, c->alg, &f) == MPI_SUCCESS)
        msgs = f.msgs;
    calls = msgs > 0 ? (WARM_MESSAGES + msgs - 1) / msgs : 1;
    return calls < MAX_LEAD ? calls : MAX_LEAD;
}

/* A new shape of the neighborhood's calls: the candidates within 2x of the
 * model's pick, and each algorithm in its cheapest mode (direct among them).
 * Every algorithm is timed because the model sees no link contention: on a
 * simulated 5D torus at 64 processes, 2D Moore r3 with 64 KiB blocks, bruck
 * was priced above 2x direct and ran 1.31x faster than it (probably as its
 * fewer messages share links less than direct's 48). */
static int shape_new(iso_nbh *nb, tuner_t *t, const iso_tune_key *key, const iso_args *a,
                     iso_tune_shape **out)
{
    iso_candidate all[ISO_MAX_CANDIDATES], cand[ISO_MAX_CANDIDATES];
    int nall, ncand = 0, err;
    nall = iso__algorithm_candidates(nb, a, key->mode, key->reused, all);
    iso__tune_sort(all, nall);
    for (int c = 0; c < nall; c++) {
        int cheapest_of_alg = 1; /* all is sorted: the first of its algorithm */
        for (int d = 0; d < c; d++)
            cheapest_of_alg &= all[d].alg != all[c].alg;
        if (all[c].cost <= 2.0 * all[0].cost || cheapest_of_alg)
            cand[ncand++] = all[c];
    }
    if ((err = shape_add(t, key, cand, ncand, all, nall, nb->tune, out)) == MPI_SUCCESS &&
        *out != NULL && (*out)->state == SHAPE_TUNING)
        (*out)->lead = lead_calls(nb, a, &cand[0]);
    return err;
}

/* ---- the candidate of a call --------------------------------------------------- */

int iso__tune_shape_get(iso_tuner *t, const iso_tune_key *key, const iso_candidate *cand,
                        int ncand, const iso_candidate *all, int nall, int trials,
                        iso_tune_shape **out)
{
    if ((*out = shape_find(t, key)) != NULL)
        return MPI_SUCCESS;
    return shape_add(t, key, cand, ncand, all, nall, trials, out);
}

int iso__tune_next(const iso_tuner *t, iso_tune_shape *sh, int *alg, iso_msg_mode *mode)
{
    int c;
    if (sh->state == SHAPE_DONE) {
        *alg = sh->won_alg;
        *mode = sh->won_mode;
        return 0;
    }
    /* each candidate's trials in a row: its first call warms it (and on a
     * graph its plan, the one the graph keeps, is made once, not at every
     * trial call) */
    c = candidate_at(sh, sh->calls);
    sh->current = -1;
    if (!sh->failed[c] && hook_fails(t->kind, sh, c))
        sh->failed[c] = 1; /* as a build that fails everywhere */
    if (!sh->failed[c]) {
        sh->current = c;
        *alg = sh->cand[c].alg;
        *mode = sh->cand[c].mode;
    } else {
        *alg = 0; /* this trial call runs direct, untimed */
        *mode = ISO_MODE_PACK;
    }
    return 1;
}

int iso__tune_failed(iso_tune_shape *sh)
{
    int skipped = sh->current >= 0;
    if (skipped)
        sh->failed[sh->current] = 1; /* skipped from now on: cannot win */
    sh->current = -1;
    return skipped;
}

int iso__tune_lookup(const iso_tuner *t, int kind, unsigned long long id, const iso_tune_key *key,
                     const iso_candidate *all, int nall, int *alg, iso_msg_mode *mode)
{
    const iso_tune_shape *sh = shape_find(t, key);
    if (sh != NULL) {
        if (sh->state != SHAPE_DONE)
            return 0;
        *alg = sh->won_alg;
        *mode = sh->won_mode;
        return 1;
    }
    if (key->bytes <= 0.0 || file_read_path() == NULL || !file_has_records())
        return 0;
    return file_winner(kind, id, key, all, nall, alg, mode);
}

/* ---- selection on a Cartesian neighborhood ------------------------------------- */

void iso__tune_known(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int reused, int *alg,
                     iso_msg_mode *chosen)
{
    iso_tune_key key;
    iso_candidate all[ISO_MAX_CANDIDATES];
    int n = 0;
    if (nb->tune <= 0)
        return;
    shape_key(a, mode, reused, &key);
    if (shape_find(nb->tuner, &key) == NULL && file_read_path() != NULL && file_has_records())
        n = iso__algorithm_candidates(nb, a, mode, reused, all); /* a record of an earlier run */
    iso__tune_lookup(nb->tuner, ISO_TUNE_CART, nbh_id(nb), &key, all, n, alg, chosen);
}

int iso__tune_schedule(iso_nbh *nb, const iso_args *a, iso_msg_mode mode, int *alg,
                       iso_msg_mode *chosen, iso_sched **sched, iso_tune_shape **trial)
{
    tuner_t *t = tuner_of(nb);
    iso_tune_key key;
    iso_tune_shape *sh;
    int err;
    *trial = NULL;
    shape_key(a, mode, 1, &key);
    if ((sh = shape_find(t, &key)) == NULL && t != NULL &&
        (err = shape_new(nb, t, &key, a, &sh)) != MPI_SUCCESS)
        return err;
    if (sh == NULL) { /* no memory for the table, or it is full: the model decides */
        if ((err = iso__algorithm_select(nb, a, ISO_ALG_AUTO, mode, 1, alg, chosen)) != MPI_SUCCESS)
            return err;
        return iso__schedule_get(nb, a, *alg, sched);
    }
    if (!iso__tune_next(t, sh, alg, chosen))
        return iso__schedule_get(nb, a, *alg, sched);
    *trial = sh;
    if (sh->current >= 0 && iso__schedule_get(nb, a, *alg, sched) == MPI_SUCCESS)
        return MPI_SUCCESS;
    iso__tune_failed(sh);
    *alg = 0; /* this trial call runs direct, untimed */
    *chosen = ISO_MODE_PACK;
    return iso__schedule_get(nb, a, *alg, sched);
}

/* ---- trial calls and the agreement -------------------------------------------- */

static int cmp_double(const void *x, const void *y)
{
    double a = *(const double *)x, b = *(const double *)y;
    return (a > b) - (a < b);
}

static double median(double *v, int n)
{
    if (n == 0)
        return HUGE_VAL;
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* Do t's trial calls start together (after a barrier: a graph's) or back
 * to back?  How a call is timed (iso__tune_run) and how its times are
 * agreed (agree()) both follow from it. */
static int starts_together(const tuner_t *t) { return t->kind == ISO_TUNE_GRAPH; }

/* ISO_VERBOSE: rank 0 says once per shape what was tried and what won. */
static void report(MPI_Comm comm, const char *fn, const tuner_t *t, const iso_tune_shape *sh)
{
    char what[128], name[64], tried[200] = "";
    for (int c = 0; c < sh->ncand; c++) {
        candidate_name(t->kind, sh->cand[c].alg, sh->cand[c].mode, name, sizeof name);
        if (sh->median[c] == HUGE_VAL)
            append(tried, sizeof tried, "%s%s failed", c ? ", " : "", name);
        else
            append(tried, sizeof tried, "%s%s %.2f us", c ? ", " : "", name,
                   sh->median[c] * 1e6);
    }
    if (t->kind == ISO_TUNE_SDDE)
        snprintf(what, sizeof what, "%s: %s, %s sizes, messages of at most %.17g B", fn, t->what,
                 sh->key.reused ? "constant" : "variable", sh->key.bytes);
    else
        snprintf(what, sizeof what, "%s: %s, %.17g B per block", fn, t->what, sh->key.bytes);
    candidate_name(t->kind, sh->won_alg, sh->won_mode, name, sizeof name);
    iso__report_choice(comm, what, 1, name,
                       " by tuning (medians of %d warm calls, %s over processes: %s; %d "
                       "trial calls took %.1f us)",
                       sh->trials > 1 ? sh->trials - 1 : 1,
                       starts_together(t) ? "max" : "mean", tried, sh->calls,
                       sh->cost * 1e6);
}

/* The last trial call: each candidate's median over its warm calls and the
 * time spent are agreed, then the least median wins, a tie going to the
 * candidate the model ranks first; direct if every candidate failed.
 *
 * Over processes, the time spent is the maximum; a candidate's time
 * depends on how its calls started.  Started together (a graph's trials,
 * after a barrier) a call lasts until its last process is done: the
 * maximum of the processes' medians.  Back to back (Cartesian and SDDE
 * trials) a process's call starts when its previous call ended, so the
 * skew the previous candidate left moves time from process to process (one
 * that starts early waits for its neighbours) without changing the run's
 * time per call, which is every process's in a steady run: the mean of the
 * processes' medians.  The maximum picked up that skew: SIMULATED on the
 * BG/Q-like torus, 2D Moore r3, 1 KiB, K = 1024, direct's medians ranged
 * from 329 to 736 us (mean 428) after the combining candidates' blocks, and
 * the maximum made it lose to dimwise, while back to back after a barrier
 * direct took 531 us per call and dimwise 651. */
static int agree(tuner_t *t, int verbose, iso_priv *priv, MPI_Comm comm, const char *fn,
                 iso_tune_shape *sh)
{
    /* in whole nanoseconds: a sum of integers is exact in any order, so
     * every process gets the same and decides alike (a sum of doubles may
     * differ in its last bit from process to process); then how many
     * processes each candidate failed on (alike everywhere, but a failure
     * anywhere must be one everywhere) */
    long long v[2 * ISO_MAX_CANDIDATES];
    int n = sh->ncand, ready, err, best = -1, p = 1;
    for (int c = 0; c < n; c++) {
        v[c] = sh->failed[c] ? 0 : llround(median(sh->times[c], sh->ntimes[c]) * 1e9);
        v[n + c] = sh->failed[c];
    }
    sh->cost = sh->spent;
    if ((err = iso__priv_ready(priv, 1, &ready)) != MPI_SUCCESS ||
        (err = MPI_Allreduce(MPI_IN_PLACE, &sh->cost, 1, MPI_DOUBLE, MPI_MAX, priv->comm)) !=
            MPI_SUCCESS ||
        (err = MPI_Allreduce(MPI_IN_PLACE, v, 2 * n, MPI_LONG_LONG,
                             starts_together(t) ? MPI_MAX : MPI_SUM, priv->comm)) !=
            MPI_SUCCESS ||
        (!starts_together(t) && (err = MPI_Comm_size(priv->comm, &p)) != MPI_SUCCESS))
        return err;
    for (int c = 0; c < n; c++) {
        sh->median[c] = v[n + c] ? HUGE_VAL : (double)v[c] / p * 1e-9;
        if (!v[n + c] && (best < 0 || v[c] < v[best]))
            best = c;
    }
    sh->won_alg = best >= 0 ? sh->cand[best].alg : 0;
    sh->won_mode = best >= 0 ? sh->cand[best].mode : ISO_MODE_PACK;
    sh->state = SHAPE_DONE;
    t->tuning--;
    if (verbose)
        report(comm, fn, t, sh);
    if (MPI_Comm_rank(priv->comm, &ready) == MPI_SUCCESS && ready == 0)
        file_save(t->kind, t->id, sh);
    return MPI_SUCCESS;
}

iso_tune_shape *iso__tune_trial_of(iso_nbh *nb, const iso_args *a)
{
    tuner_t *t = nb->tuner;
    iso_tune_key key;
    iso_tune_shape *sh;
    if (t == NULL || t->tuning == 0 || nb->algorithm != ISO_ALG_AUTO)
        return NULL;
    shape_key(a, nb->mode, 1, &key);
    if ((sh = shape_find(t, &key)) == NULL || sh->state != SHAPE_TUNING)
        return NULL;
    sh->current = candidate_at(sh, sh->calls); /* kept only within its candidate's block */
    return sh;
}

int iso__tune_run(iso_tuner *t, int verbose, iso_priv *priv, MPI_Comm comm, const char *fn,
                  iso_tune_shape *sh, struct iso_request_s *r, struct iso_request_s **keep)
{
    double t0, t1, t2;
    int ready, err = MPI_SUCCESS;
    iso__world_errors_return(1); /* once for the barrier, start and wait (MPICH) */
    t0 = MPI_Wtime();
    /* On a graph every process starts together: a call's time is then its
     * own, not the skew the previous collective left (under SMPI on a
     * torus, tens of microseconds: direct measured 65 us against 25
     * started together), as in an SpMV iteration, one exchange between
     * computations.  Cartesian trials run back to back, as halo exchanges
     * and isobench's batches do: started together, a pack-mode call on
     * MPICH at 2 ranks measured 4.5-5.5 us against 1.9 in a run of calls,
     * and the tuner picked datatype mode, 1.5x slower there. */
    if (starts_together(t) && (err = iso__priv_ready(priv, 1, &ready)) == MPI_SUCCESS)
        err = MPI_Barrier(priv->comm);
    t1 = MPI_Wtime();
    if (err == MPI_SUCCESS && (err = iso__request_start(r)) == MPI_SUCCESS)
        err = iso__request_wait(r);
    t2 = MPI_Wtime();
    iso__world_errors_return(0);
    if (keep != NULL)
        *keep = NULL;
    if (err != MPI_SUCCESS) {
        iso__request_destroy(r);
        return err;
    }
    /* the block's next call runs the same candidate: r for it, warm (a
     * failed candidate's direct calls are not kept).  At the end of the
     * block its buffers go, rather than to its cached schedule as spare
     * ones (sched.h): a loser's would stay there for calls that never
     * come (auto, 2D Moore r3, 64 KiB, pack mode: ~7 MB per process) */
    if (keep != NULL && sh->current >= 0 && sh->calls + 1 < total_calls(sh) &&
        candidate_at(sh, sh->calls + 1) == sh->current)
        *keep = r;
    else
        iso__sched_request_drop(r);
    return iso__tune_count(t, verbose, priv, comm, fn, sh, t2 - t1, t2 - t0);
}

/* A trial call's time as counted: measured, or the test hook's. */
static double hooked_time(const iso_tune_shape *sh, double seconds)
{
    if (sh->hooked == HOOK_COLD)
        return candidate_at(sh, sh->calls) == 1 ? 2.0 : 1.0;
    return sh->hooked == HOOK_TIE ? 1.0 : seconds;
}

int iso__tune_count(iso_tuner *t, int verbose, iso_priv *priv, MPI_Comm comm, const char *fn,
                    iso_tune_shape *sh, double seconds, double spent)
{
    int err;
    sh->spent += spent; /* the barrier included */
    /* the first call of a block meets its candidate cold (buffers, types)
     * and is not counted unless it is the only one */
    if (sh->current >= 0 && call_timed(sh, sh->calls) &&
        sh->ntimes[sh->current] < ISO_TUNE_MAX_CALLS)
        sh->times[sh->current][sh->ntimes[sh->current]++] = hooked_time(sh, seconds);
    sh->calls++;
    if (sh->calls < total_calls(sh))
        return MPI_SUCCESS;
    if ((err = agree(t, verbose, priv, comm, fn, sh)) != MPI_SUCCESS) {
        /* no agreement (the error is raised): the model's pick from now
         * on, so that no later call takes a candidate past the last */
        sh->state = SHAPE_DONE;
        sh->source = FROM_MODEL;
        sh->won_alg = sh->cand[0].alg;
        sh->won_mode = sh->cand[0].mode;
        t->tuning--;
    }
    return err;
}

/* ---- the query --------------------------------------------------------------- */

int Iso_tune_info(MPI_Comm isocomm, int index, int *state, char *record, int len)
{
    iso_state *st;
    iso_graph *g = NULL;
    const tuner_t *t;
    int err, graph = 0;
    if (state == NULL || index < 0 || len < 0 || (record == NULL && len > 0))
        return iso__raise(isocomm, iso__error_msg(ISO_ERR_ARG, "state is NULL, index < 0, len < "
                                                               "0 or record NULL with len > 0"));
    /* the neighborhood's tuner, else a distributed graph communicator's
     * (tune_graph.c) if it has tuned, else the SDDE's on the communicator
     * (sparse/tune.c) */
    if ((err = iso__state_get(isocomm, 0, &st)) == MPI_SUCCESS)
        t = st->nbh->tuner;
    else {
        t = iso__graph_get(isocomm, 0, &graph, &g) == MPI_SUCCESS && graph && g != NULL
                ? g->tuner
                : NULL;
        if (t == NULL)
            t = iso__tuner_of_comm(isocomm);
        if (t == NULL && !graph) /* neither a neighborhood nor a graph, nor any SDDE tuned */
            return iso__raise(isocomm, err);
    }
    *state = 0;
    if (len > 0)
        record[0] = '\0';
    if (t == NULL || index >= t->n)
        return MPI_SUCCESS;
    *state = t->shapes[index].state == SHAPE_DONE ? 2 : 1;
    if (len > 0)
        shape_record(t->kind, &t->shapes[index], record, (size_t)len);
    return MPI_SUCCESS;
}
