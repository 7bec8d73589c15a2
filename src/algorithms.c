/* The algorithm table and selection: explicit name (info key, then the
 * ISO_ALGORITHM environment variable), else "auto" (cost model).  An unknown
 * or inapplicable name is an error, never a silent fallback. */
#include "iso_internal.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const iso__coll_names[ISO_NCOLL] = {"alltoall", "allgather", "reduce",
                                                "scatter_reduce"};

const iso_algorithm iso__algorithms[] = {
    {"direct", iso__build_direct, NULL, 0},
    {"dimwise", iso__build_dimwise, NULL, 1},
    {"bruck", iso__build_bruck, NULL, 1},
};
const int iso__nalgorithms = (int)(sizeof iso__algorithms / sizeof iso__algorithms[0]);

int iso__algorithm_lookup(const char *name, int *index)
{
    if (!strcmp(name, "auto")) {
        *index = ISO_ALG_AUTO;
        return ISO_ERR_NONE;
    }
    for (int k = 0; k < iso__nalgorithms; k++)
        if (!strcmp(name, iso__algorithms[k].name)) {
            *index = k;
            return ISO_ERR_NONE;
        }
    return ISO_ERR_ALGORITHM;
}

static int applicable(int k, const iso_nbh *nb, const iso_args *a)
{
    return iso__algorithms[k].applicable == NULL || iso__algorithms[k].applicable(nb, a);
}

static int build_new(const iso_nbh *nb, const iso_args *a, int alg, iso_sched **out)
{
    iso_sched *s = malloc(sizeof *s);
    int err;
    *out = NULL;
    if (s == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    iso__sched_init(s);
    s->refs = 1;
    if ((err = iso__algorithms[alg].build(nb, a, s)) != MPI_SUCCESS) {
        iso__sched_release(s);
        return err;
    }
    *out = s;
    return MPI_SUCCESS;
}

int iso__schedule_get(iso_nbh *nb, const iso_args *a, int alg, iso_sched **out)
{
    iso_sched **slot = &nb->cache[a->coll][alg];
    int err;
    if (!iso__algorithms[alg].cacheable)
        return build_new(nb, a, alg, out);
    if (*slot == NULL && (err = build_new(nb, a, alg, slot)) != MPI_SUCCESS)
        return err;
    (*slot)->refs++;
    *out = *slot;
    return MPI_SUCCESS;
}

void iso__sched_stats(const iso_sched *s, int *rounds, int *messages, long long *block_hops)
{
    int sent = 0, received = 0;
    long long hops = 0;
    for (int k = 0; k < s->nops; k++) {
        iso_opkind kind = s->ops[k].kind;
        if (kind == ISO_OP_SEND || kind == ISO_OP_SEND_MSG) {
            sent++;
            hops += s->ops[k].nblocks;
        } else if (kind == ISO_OP_RECV || kind == ISO_OP_RECV_MSG) {
            received++;
        }
    }
    *rounds = sent > received ? sent : received;
    *messages = sent;
    *block_hops = hops;
}

/* ---- the cost model -------------------------------------------------------
 * time = gamma * phases + alpha * messages + beta * bytes sent
 *        + pack * bytes packed and unpacked (combining only)
 * with the structural figures of the schedule (those of a process of a
 * torus, identical everywhere).  Defaults fit shared memory; bench/calibrate
 * measures a machine and writes a file that ISO_COST_FILE points to. */
typedef struct {
    double alpha, beta, gamma, pack;
} cost_t;

static cost_t cost_params(void)
{
    static int loaded;
    static cost_t c = {1.0e-6, 2.0e-10, 1.0e-6, 3.0e-10};
    const char *path = getenv("ISO_COST_FILE");
    FILE *f;
    if (loaded)
        return c;
    loaded = 1;
    if (path && (f = fopen(path, "r")) != NULL) {
        char line[256], key[32];
        double v;
        while (fgets(line, sizeof line, f)) { /* "key value" lines; others ignored */
            if (sscanf(line, "%31s %lf", key, &v) != 2)
                continue;
            if (!strcmp(key, "alpha"))
                c.alpha = v;
            else if (!strcmp(key, "beta"))
                c.beta = v;
            else if (!strcmp(key, "gamma"))
                c.gamma = v;
            else if (!strcmp(key, "pack"))
                c.pack = v;
        }
        fclose(f);
    }
    return c;
}

static double cost(const iso_sched *s, double block_bytes, int combining)
{
    cost_t c = cost_params();
    double bytes = (double)s->struct_hops * block_bytes;
    return c.gamma * s->struct_phases + c.alpha * s->struct_msgs + c.beta * bytes +
           (combining ? 2.0 * c.pack * bytes : 0.0);
}

/* Bytes per block, when every process has the same (regular forms). */
static int uniform_block_bytes(const iso_args *a, double *bytes)
{
    int size;
    if (a->coll == ISO_REDUCE || a->coll == ISO_SCATTER_REDUCE) { /* validated: count x datatype */
        if (MPI_Type_size(a->recv.type, &size) != MPI_SUCCESS)
            return 0;
        *bytes = (double)size * a->recv.count;
        return 1;
    }
    if (a->send.layout == ISO_LAYOUT_V || a->send.layout == ISO_LAYOUT_W ||
        a->recv.layout == ISO_LAYOUT_V || a->recv.layout == ISO_LAYOUT_W)
        return 0;
    if (MPI_Type_size(a->send.type, &size) != MPI_SUCCESS)
        return 0;
    *bytes = (double)size * a->send.count;
    return 1;
}

int iso__algorithm_select(iso_nbh *nb, const iso_args *a, int requested, int *index)
{
    double bytes, best = 0.0;
    if (requested != ISO_ALG_AUTO) {
        if (requested < 0 || requested >= iso__nalgorithms || !applicable(requested, nb, a))
            return iso__errclass(ISO_ERR_ALGORITHM);
        *index = requested;
        return MPI_SUCCESS;
    }
    *index = 0; /* direct */
    /* The v and w forms have per-process counts: processes could disagree
     * on the cheapest schedule, so they stay with direct. */
    if (!uniform_block_bytes(a, &bytes))
        return MPI_SUCCESS;
    best = cost_params().gamma + cost_params().alpha * nb->s +
           cost_params().beta * bytes * nb->s;
    for (int k = 1; k < iso__nalgorithms; k++) {
        iso_sched *s;
        double c;
        if (!iso__algorithms[k].cacheable || !applicable(k, nb, a))
            continue;
        if (iso__schedule_get(nb, a, k, &s) != MPI_SUCCESS)
            continue; /* cannot build it: not a candidate */
        c = cost(s, bytes, 1);
        iso__sched_release(s);
        if (c < best) {
            best = c;
            *index = k;
        }
    }
    return MPI_SUCCESS;
}

iso_loc iso__block(const iso_side *side, int buf, int i)
{
    iso_loc l = {buf, 0, side->count, side->type};
    switch (side->layout) {
    case ISO_LAYOUT_STRIDED:
        l.disp = (MPI_Aint)i * side->count * side->extent;
        break;
    case ISO_LAYOUT_V:
        l.count = side->counts[i];
        l.disp = (MPI_Aint)side->idispls[i] * side->extent;
        break;
    case ISO_LAYOUT_W:
        l.count = side->counts[i];
        l.disp = side->adispls[i];
        l.type = side->types[i];
        break;
    case ISO_LAYOUT_SAME:
        break;
    }
    return l;
}
