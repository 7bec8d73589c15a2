/* Reductions in message combining: partial results combined on the way.
 * Reduce and scatter_reduce run the routes forwards but merge instead of
 * copying: at every process, contributions that still have the same
 * remaining route (hence the same final target) are one partial result,
 * reduced before it is forwarded.  Scatter_reduce thus moves one vector per
 * edge of the reversed trie instead of one per block hop.  A remaining
 * route (slot i from hop h on) is named by its suffix id: equal ids, equal
 * hops (interned from the end of each route). */
#include "coll/combining.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    int rep, h;        /* key: the hops of slot rep from index h on */
    iso_piece *pieces; /* contributions present here */
    int npieces, cap;
    int alive;
} partial_t;

typedef struct {
    partial_t *p;
    int n, cap;
    int *sid;       /* per slot i, h = 0 .. nhops[i]: sid[first[i] + i + h] */
    int nsid;       /* suffix ids 0 .. nsid-1; 0 is the empty suffix */
    int *live;      /* per suffix id: its live partial, or -1 */
    int *with_start, *with; /* per suffix id: the slots whose route ends with it */
} partials_t;

static int suffix_id(const partials_t *ps, const trie_t *t, int i, int h)
{
    return ps->sid[t->first[i] + i + h];
}

/* Suffix ids of every slot's route, and the slots that end with each. */
static int suffixes_make(partials_t *ps, const trie_t *t)
{
    int s = t->nb->s, n = t->nall + s, err, *owner;
    idmap m; /* (phase, dim, step, id of the rest) -> id - 1 */
    ps->sid = malloc(sizeof(int) * ((size_t)n + 1));
    owner = malloc(sizeof(int) * ((size_t)n + 1));
    if (!ps->sid || !owner) {
        free(owner);
        return iso__error(ISO_ERR_NOMEM);
    }
    err = iso__idmap_init(&m, (size_t)t->nall);
    for (int i = 0; i < s && !err; i++) {
        const iso_hop *r = route_of(t, i);
        int *sid = ps->sid + t->first[i] + i;
        sid[t->nhops[i]] = 0;
        for (int h = t->nhops[i] - 1; h >= 0 && !err; h--) {
            int key[4] = {r[h].phase, r[h].dim, r[h].step, sid[h + 1]}, id, fresh;
            err = iso__idmap_get(&m, key, &id, &fresh);
            sid[h] = id + 1;
        }
        for (int h = 0; h <= t->nhops[i]; h++)
            owner[t->first[i] + i + h] = i;
    }
    ps->nsid = m.n + 1;
    iso__idmap_free(&m);
    if (!err && (ps->live = malloc(sizeof(int) * ((size_t)ps->nsid + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    for (int k = 0; !err && k < ps->nsid; k++)
        ps->live[k] = -1;
    if (!err) { /* with[]: entries of sid[] bucketed by id, then mapped to their slot */
        err = iso__bucket(ps->sid, n, ps->nsid, &ps->with_start, &ps->with);
        for (int k = 0; !err && k < n; k++)
            ps->with[k] = owner[ps->with[k]];
    }
    free(owner);
    return err;
}

/* Does the partial with key (rep, h) at caller + yoff hold anything?  Its
 * target caller + yoff + rest must exist, and some slot j with that
 * remaining route must have an existing origin. */
static int partial_needed(const trie_t *t, const partials_t *ps, int rep, int h, const int *yoff,
                          int *v)
{
    const iso_nbh *nb = t->nb;
    const iso_hop *hp = route_of(t, rep);
    int id = suffix_id(ps, t, rep, h);
    if (t->torus)
        return 1;
    for (int j = 0; j < nb->d; j++)
        v[j] = yoff[j];
    for (int k = h; k < t->nhops[rep]; k++)
        hop_add(t, hp[k].dim, hp[k].step, v);
    if (!on_mesh(nb, v, 1, NULL))
        return 0;
    for (int q = ps->with_start[id]; q < ps->with_start[id + 1]; q++) {
        const int *c = nb->offsets + (size_t)ps->with[q] * (size_t)nb->d;
        if (on_mesh(nb, c, -1, v)) /* origin = target - C^j */
            return 1;
    }
    return 0;
}

/* The live partial with key (rep, h), made if there is none; in *index. */
static int partial_find(partials_t *ps, const trie_t *t, int rep, int h, int *index)
{
    int id = suffix_id(ps, t, rep, h), err;
    if (ps->live[id] >= 0) {
        *index = ps->live[id];
        return MPI_SUCCESS;
    }
    if ((err = iso__grow(&ps->p, &ps->cap, ps->n + 1, sizeof *ps->p)) != MPI_SUCCESS)
        return err;
    memset(&ps->p[ps->n], 0, sizeof(partial_t));
    ps->p[ps->n].rep = rep;
    ps->p[ps->n].h = h;
    ps->p[ps->n].alive = 1;
    ps->live[id] = ps->n;
    *index = ps->n++;
    return MPI_SUCCESS;
}

static void partial_retire(partials_t *ps, const trie_t *t, int k)
{
    ps->p[k].alive = 0;
    ps->live[suffix_id(ps, t, ps->p[k].rep, ps->p[k].h)] = -1;
}

static int partial_add(partial_t *p, iso_piece pc)
{
    int err = iso__grow(&p->pieces, &p->cap, p->npieces + 1, sizeof *p->pieces);
    if (err == MPI_SUCCESS)
        p->pieces[p->npieces++] = pc;
    return err;
}

static const iso_hop *first_hop(const trie_t *t, const partial_t *p)
{
    return p->h < t->nhops[p->rep] ? route_of(t, p->rep) + p->h : NULL;
}

/* Local ops closing a round: deliver partials whose route has ended, and
 * accumulate those with several pieces that phase `next` sends. */
static int settle(const trie_t *t, partials_t *ps, int next, iso_sched *out, int *delivered)
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < ps->n && !err; k++) {
        partial_t *p = &ps->p[k];
        const iso_hop *h = first_hop(t, p);
        if (!p->alive)
            continue;
        if (h == NULL) {
            for (int e = 0; e < p->npieces && !err; e++) {
                iso_op op = {.kind = ISO_OP_DELIVER, .src = p->pieces[e], .first = !*delivered};
                err = iso__sched_add(out, &op);
                *delivered = 1;
            }
            partial_retire(ps, t, k);
        } else if (h->phase == next && p->npieces > 1) {
            int acc = out->nacc++;
            for (int e = 0; e < p->npieces && !err; e++) {
                iso_op op = {.kind = ISO_OP_ACC, .src = p->pieces[e], .slot = acc, .first = !e};
                err = iso__sched_add(out, &op);
            }
            p->npieces = 1;
            p->pieces[0] = (iso_piece){ISO_PIECE_ACC, acc};
        }
    }
    return err ? err : iso__sched_end_round(out);
}

/* The live partials whose next hop is in phase, grouped by that hop (one
 * message each), groups in order of their first partial. */
static int group_partials(const trie_t *t, const partials_t *ps, int phase, int *cand, int *ncand,
                          int **start, int **items, int *ngroups)
{
    int err, *key = malloc(sizeof(int) * ((size_t)ps->n + 1));
    idmap m;
    *ncand = 0;
    if (key == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = iso__idmap_init(&m, 64);
    for (int k = 0; k < ps->n && !err; k++) {
        const iso_hop *h = ps->p[k].alive ? first_hop(t, &ps->p[k]) : NULL;
        int tuple[4], fresh;
        if (h == NULL || h->phase != phase)
            continue;
        tuple[0] = h->dim, tuple[1] = h->step, tuple[2] = tuple[3] = 0;
        err = iso__idmap_get(&m, tuple, &key[*ncand], &fresh);
        cand[(*ncand)++] = k;
    }
    *ngroups = m.n;
    iso__idmap_free(&m);
    if (!err)
        err = iso__bucket(key, *ncand, *ngroups, start, items);
    free(key);
    return err;
}

static int reduce_phase(trie_t *t, partials_t *ps, int phase, int *tag, iso_sched *out,
                        int *scratch)
{
    const iso_nbh *nb = t->nb;
    int d = nb->d, err = MPI_SUCCESS, ncand = 0, ngroups = 0, *start = NULL, *items = NULL;
    int *cand = malloc(sizeof(int) * ((size_t)ps->n + 1));
    int *delta = calloc((size_t)d + 1, sizeof(int)), *yoff = calloc((size_t)d + 1, sizeof(int));
    int *v = calloc((size_t)d + 1, sizeof(int));
    if (!cand || !delta || !yoff || !v) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    if ((err = group_partials(t, ps, phase, cand, &ncand, &start, &items, &ngroups)))
        goto fn_exit;
    for (int g = 0; g < ngroups && !err; g++) {
        int *list = items + start[g], nl = start[g + 1] - start[g], msg = -1;
        const iso_hop *lead = first_hop(t, &ps->p[cand[list[0]]]);
        if (nl > out->struct_max_entries)
            out->struct_max_entries = nl;
        memset(delta, 0, sizeof(int) * (size_t)d);
        hop_add(t, lead->dim, lead->step, delta);
        out->struct_hops += nl;
        /* outgoing: our partials */
        for (int e = 0; e < nl && !err; e++) {
            partial_t *p = &ps->p[cand[list[e]]];
            memset(yoff, 0, sizeof(int) * (size_t)d);
            if (!partial_needed(t, ps, p->rep, p->h, yoff, v))
                continue;
            if (p->npieces != 1) { /* settle() leaves exactly one */
                err = iso__error(ISO_ERR_INTERN);
                break;
            }
            err = iso__sched_msg_add(out, &msg, p->pieces[0]);
        }
        if (!err && msg >= 0)
            err = iso__emit_send(out, nb, delta, msg, *tag, scratch);
        /* incoming: the same keys, from caller - delta, one hop further */
        msg = -1;
        for (int e = 0; e < nl && !err; e++) {
            int rep = ps->p[cand[list[e]]].rep, h = ps->p[cand[list[e]]].h, q;
            /* the partial exists whether or not data comes: structural */
            if ((err = partial_find(ps, t, rep, h + 1, &q)) != MPI_SUCCESS)
                break;
            for (int j = 0; j < d; j++)
                yoff[j] = -delta[j];
            if (!partial_needed(t, ps, rep, h, yoff, v))
                continue;
            if ((err = iso__sched_msg_add(out, &msg, (iso_piece){ISO_PIECE_VEC, out->nvec++})) ==
                MPI_SUCCESS)
                err = partial_add(&ps->p[q], (iso_piece){msg, out->msgs[msg].n - 1});
        }
        if (!err && msg >= 0)
            err = iso__emit_recv(out, nb, delta, msg, *tag, scratch);
        for (int e = 0; e < nl; e++) /* sent: gone from here */
            partial_retire(ps, t, cand[list[e]]);
        ++*tag;
    }
fn_exit:
    free(cand);
    free(start);
    free(items);
    free(delta);
    free(yoff);
    free(v);
    return err;
}

int iso__build_reduction(trie_t *t, const int *phases, int nphases, int personalized,
                         iso_sched *out, int *scratch)
{
    const iso_nbh *nb = t->nb;
    partials_t ps;
    int err, tag = 0, delivered = 0;
    memset(&ps, 0, sizeof ps);
    err = suffixes_make(&ps, t);
    /* our own contributions, one partial per distinct route.  The partials
     * (and so message order and tags) are the same on every process; only
     * their pieces depend on what exists around it. */
    for (int i = 0; i < nb->s && !err; i++) {
        int q;
        if ((err = partial_find(&ps, t, i, 0, &q)) == MPI_SUCCESS &&
            (t->torus || on_mesh(nb, nb->offsets + (size_t)i * (size_t)nb->d, 1, NULL)))
            err = partial_add(&ps.p[q], (iso_piece){ISO_PIECE_USER, personalized ? i : 0});
    }
    if (!err)
        err = settle(t, &ps, nphases > 0 ? phases[0] : -1, out, &delivered);
    for (int p = 0; p < nphases && !err; p++) {
        err = reduce_phase(t, &ps, phases[p], &tag, out, scratch);
        if (!err)
            err = settle(t, &ps, p + 1 < nphases ? phases[p + 1] : -1, out, &delivered);
    }
    out->struct_phases = nphases;
    out->struct_msgs = out->ntags = tag;
    for (int k = 0; k < ps.n; k++)
        free(ps.p[k].pieces);
    free(ps.p);
    free(ps.sid);
    free(ps.live);
    free(ps.with_start);
    free(ps.with);
    return err;
}
