/* The algorithm table and selection: explicit name (info key, then the
 * ISO_ALGORITHM environment variable), else "auto" (cost model).  An unknown
 * or inapplicable name is an error, never a silent fallback. */
#include "iso_internal.h"
#include <stddef.h>
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

int iso__combine_lookup(const char *name, int *mode)
{
    static const char *const names[] = {"auto", "pack", "datatype"};
    for (int k = 0; k < 3; k++)
        if (!strcmp(name, names[k])) {
            *mode = k;
            return ISO_ERR_NONE;
        }
    return ISO_ERR_INFO;
}

/* Every process knows the size of every block it receives or forwards when
 * the receive side is regular: all forms but the v/w alltoall/allgather. */
int iso__datatype_possible(const iso_args *a)
{
    return a->recv.layout == ISO_LAYOUT_STRIDED || a->recv.layout == ISO_LAYOUT_SAME;
}

/* ---- the cost model -------------------------------------------------------
 * time = gamma * phases + alpha * messages + beta * bytes sent
 *        + combining in packed mode:   pack * bytes packed and unpacked
 *                                      + probe * messages
 *        + combining in datatype mode: dtype * bytes sent
 *                                      + build * 2 * messages (a struct type
 *                                        per message at each end, built per
 *                                        call, or once per persistent
 *                                        request)
 * with the structural figures of the schedule (those of a process of a
 * torus, identical everywhere).  Defaults fit shared memory (below);
 * bench/calibrate measures a machine and writes a file that ISO_COST_FILE
 * points to. */
typedef struct {
    double alpha, beta, gamma, pack, probe, dtype, build;
} cost_t;

/* Built-in constants: bench/calibrate on a 2-core shared-memory machine
 * (2026-11-22) with the MPI library the library is compiled against; MPICH
 * at 2 ranks, Open MPI at 4 (oversubscribed, hence the dear rounds); other
 * libraries get round figures that lean towards direct and packing. */
#if defined(MPICH_VERSION)
#define ISO_COST_DEFAULTS {5.0e-7, 7.0e-11, 1.0e-7, 2.6e-11, 2.2e-7, 7.9e-10, 6.7e-7}
#elif defined(OPEN_MPI)
#define ISO_COST_DEFAULTS {8.0e-7, 2.0e-10, 6.6e-6, 2.7e-11, 8.0e-8, 2.0e-9, 6.0e-7}
#else
#define ISO_COST_DEFAULTS {1.0e-6, 2.0e-10, 1.0e-6, 3.0e-10, 3.0e-7, 1.0e-9, 1.0e-6}
#endif

static cost_t cost_params(void)
{
    static int loaded;
    static cost_t c = ISO_COST_DEFAULTS;
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {{"alpha", offsetof(cost_t, alpha)}, {"beta", offsetof(cost_t, beta)},
                {"gamma", offsetof(cost_t, gamma)}, {"pack", offsetof(cost_t, pack)},
                {"probe", offsetof(cost_t, probe)}, {"dtype", offsetof(cost_t, dtype)},
                {"build", offsetof(cost_t, build)}};
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
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                if (!strcmp(key, keys[k].key))
                    *(double *)((char *)&c + keys[k].off) = v;
        }
        fclose(f);
    }
    return c;
}

/* Modelled time of combining schedule s, packed or in datatype mode. */
static double cost(const iso_sched *s, double block_bytes, int datatype, int persistent)
{
    cost_t c = cost_params();
    double bytes = (double)s->struct_hops * block_bytes;
    double t = c.gamma * s->struct_phases + c.alpha * s->struct_msgs + c.beta * bytes;
    if (datatype)
        return t + c.dtype * bytes + (persistent ? 0.0 : 2.0 * c.build * s->struct_msgs);
    return t + 2.0 * c.pack * bytes + c.probe * s->struct_msgs;
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
        a->recv.layout == ISO_LAYOUT_V || a->recv.layout == ISO_LAYOUT_W) {
        *bytes = a->agreed_bytes;
        return a->agreed_bytes > 0;
    }
    if (MPI_Type_size(a->send.type, &size) != MPI_SUCCESS)
        return 0;
    *bytes = (double)size * a->send.count;
    return 1;
}

/* The combining mode for schedule s: the requested one where possible,
 * else the cheaper by the cost model. */
static int choose_datatype(const iso_sched *s, const iso_args *a, int combine, int persistent)
{
    double bytes;
    if (!s->runtime_args || !iso__datatype_possible(a) || combine == ISO_COMBINE_PACK)
        return 0;
    if (combine == ISO_COMBINE_DATATYPE || !uniform_block_bytes(a, &bytes))
        return 1;
    return cost(s, bytes, 1, persistent) <= cost(s, bytes, 0, persistent);
}

int iso__algorithm_select(iso_nbh *nb, const iso_args *a, int requested, int combine,
                          int persistent, int *index, int *datatype)
{
    double bytes, best = 0.0;
    *datatype = 0;
    if (requested != ISO_ALG_AUTO) {
        iso_sched *s;
        int err;
        if (requested < 0 || requested >= iso__nalgorithms || !applicable(requested, nb, a))
            return iso__errclass(ISO_ERR_ALGORITHM);
        *index = requested;
        if (!iso__algorithms[requested].cacheable)
            return MPI_SUCCESS; /* direct: no combined messages */
        if ((err = iso__schedule_get(nb, a, requested, &s)) != MPI_SUCCESS)
            return err;
        *datatype = choose_datatype(s, a, combine, persistent);
        iso__sched_release(s);
        return MPI_SUCCESS;
    }
    *index = 0; /* direct */
    /* The v and w forms have per-process counts: processes could disagree
     * on the cheapest schedule, so they stay with direct unless the
     * processes agreed on a block size (persistent init). */
    if (!uniform_block_bytes(a, &bytes))
        return MPI_SUCCESS;
    best = cost_params().gamma + cost_params().alpha * nb->s +
           cost_params().beta * bytes * nb->s;
    for (int k = 1; k < iso__nalgorithms; k++) {
        iso_sched *s;
        double c;
        int dt;
        if (!iso__algorithms[k].cacheable || !applicable(k, nb, a))
            continue;
        if (iso__schedule_get(nb, a, k, &s) != MPI_SUCCESS)
            continue; /* cannot build it: not a candidate */
        dt = choose_datatype(s, a, combine, persistent);
        c = cost(s, bytes, dt, persistent);
        iso__sched_release(s);
        if (c < best) {
            best = c;
            *index = k;
            *datatype = dt;
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
