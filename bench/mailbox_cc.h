/* Connected components by label propagation on the mailbox (Iso_mailbox_*),
 * YGM's second application (Priest et al., section V-B), with delegates for
 * high-degree vertices.  Header only; bench/mailbox_cc.c and
 * tests/t_mailbox_cc.c run it, cc_union_find is their serial oracle.
 *
 *   cc_run(comm, n, edges, nedges, threshold, capacity, info, &res)
 *
 * Input: each process passes any share of the undirected edges (u, v),
 * 0 <= u, v < n (duplicates and self loops allowed).  Vertex x is owned by
 * process x mod P; its label starts at x and ends as the least vertex id of
 * its component.
 *
 * Delegates: the vertices of degree > threshold (threshold 0: none), found
 * with one allreduce of the dense degree array.  Every process keeps a copy
 * of every delegate's label.  Each edge is stored as two arcs a -> b; an arc
 * lives at the owner of a if a is no delegate, else at the owner of b
 * ("colocated" edges), and an arc between two delegates at (a xor b) mod P.
 * The arcs reach their process through the mailbox (16-byte messages).
 *
 * Passes (the paper's algorithm): every arc a -> b whose source label
 * changed since the arc was last used carries label(a) to b: by a message
 * {b, label} to owner(b) if b is a remote non-delegate, else by a local
 * minimum (b owned here or a delegate copy).  The callback keeps the
 * minimum.  wait_empty ends the pass; then every process broadcasts
 * (Iso_mailbox_bcast) each delegate whose copy it lowered in the pass, and
 * the receivers keep the minimum; wait_empty.  The passes end when one
 * changes no label anywhere (an allreduce).  The paper resends every edge
 * each pass; sending only from changed labels reaches the same fixed point
 * in the same number of passes with fewer messages: at the end every arc
 * has carried its source's final label, so label(b) <= label(a) along every
 * arc, both directions exist, hence labels are constant on a component,
 * and the least id of a component never changes and reaches every member.
 *
 * Memory: O(n) per process for the degree array (dense), the arcs stored
 * here, n / P labels. */
#ifndef ISO_BENCH_MAILBOX_CC_H
#define ISO_BENCH_MAILBOX_CC_H
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "mailbox/mailbox.h" /* the mailbox's traffic counters (stats) */

typedef struct {
    uint64_t u, v;
} cc_pair; /* an edge, an arc (u -> v), or a message {vertex, label} */

typedef struct {
    uint64_t *label;       /* the final label of every vertex (rank 0 only; else NULL) */
    uint64_t components;   /* vertices x with label x (every process) */
    uint64_t ndelegates;   /* vertices of degree > threshold */
    int passes;            /* label passes, the last one changing nothing */
    long long messages;    /* top-level sends + broadcasts, all processes */
    long long remote_msgs; /* the mailbox's MPI messages between nodes, all processes */
    long long arcs;        /* arcs stored, all processes */
    double seconds;        /* the passes, slowest process */
    int delegate_copies_agree; /* every process ends with the same delegate labels */
} cc_result;

typedef struct {
    int P, me, mode; /* mode: CC_STORE (arcs arrive), CC_LABEL (labels arrive) */
    uint64_t n, nlocal;
    uint64_t *label;      /* owned vertex x: label[x / P] */
    unsigned char *fresh; /* owned vertex changed since its arcs were last used */
    uint64_t ndel, *del_id, *del_label; /* delegates, ids ascending, label copies */
    unsigned char *del_fresh, *del_lowered; /* changed since used / lowered here since sync */
    cc_pair *arcs;
    size_t narcs, arccap;
    long long changes; /* labels lowered in this pass (local and received) */
    int oom;
} cc_state;

enum { CC_STORE, CC_LABEL };

/* The index of delegate x, or -1. */
static long cc_delegate(const cc_state *s, uint64_t x)
{
    long lo = 0, hi = (long)s->ndel - 1;
    while (lo <= hi) {
        long mid = (lo + hi) / 2;
        if (s->del_id[mid] == x)
            return mid;
        if (s->del_id[mid] < x)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

/* Keeps the smaller label of x (owned here or a delegate); lowered_here
 * marks a delegate for the next broadcast. */
static void cc_lower(cc_state *s, uint64_t x, uint64_t lab, int lowered_here)
{
    long d = cc_delegate(s, x);
    if (d >= 0) {
        if (lab < s->del_label[d]) {
            s->del_label[d] = lab;
            s->del_fresh[d] = 1;
            s->del_lowered[d] |= (unsigned char)lowered_here;
            s->changes++;
        }
        return;
    }
    uint64_t k = x / (uint64_t)s->P;
    if (lab < s->label[k]) {
        s->label[k] = lab;
        s->fresh[k] = 1;
        s->changes++;
    }
}

static void cc_recv(Iso_mailbox mb, int source, const void *msg, size_t bytes, void *ctx)
{
    cc_state *s = ctx;
    cc_pair m;
    (void)mb;
    (void)source;
    (void)bytes;
    memcpy(&m, msg, sizeof m);
    if (s->mode == CC_LABEL) {
        cc_lower(s, m.u, m.v, 0); /* a broadcast delegate or an owned vertex */
        return;
    }
    if (s->narcs == s->arccap) {
        size_t cap = s->arccap ? 2 * s->arccap : 1024;
        cc_pair *a = realloc(s->arcs, cap * sizeof *a);
        if (!a) {
            s->oom = 1;
            return;
        }
        s->arcs = a;
        s->arccap = cap;
    }
    s->arcs[s->narcs++] = m;
}

/* Where arc a -> b is stored. */
static int cc_arc_home(const cc_state *s, uint64_t a, uint64_t b)
{
    if (cc_delegate(s, a) < 0)
        return (int)(a % (uint64_t)s->P);
    if (cc_delegate(s, b) < 0)
        return (int)(b % (uint64_t)s->P);
    return (int)((a ^ b) % (uint64_t)s->P);
}

/* Finds the delegates: degree > threshold (0: none). */
static int cc_find_delegates(cc_state *s, MPI_Comm comm, const cc_pair *edges, size_t nedges,
                             uint64_t threshold)
{
    uint32_t *deg;
    s->ndel = 0;
    s->del_id = NULL;
    if (threshold == 0)
        return MPI_SUCCESS;
    deg = calloc(s->n, sizeof *deg);
    if (!deg)
        return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < nedges; i++)
        if (edges[i].u != edges[i].v)
            deg[edges[i].u]++, deg[edges[i].v]++;
    MPI_Allreduce(MPI_IN_PLACE, deg, (int)s->n, MPI_UINT32_T, MPI_SUM, comm);
    for (uint64_t x = 0; x < s->n; x++)
        s->ndel += deg[x] > threshold;
    s->del_id = malloc((s->ndel ? s->ndel : 1) * sizeof *s->del_id);
    if (!s->del_id) {
        free(deg);
        return MPI_ERR_NO_MEM;
    }
    s->ndel = 0;
    for (uint64_t x = 0; x < s->n; x++)
        if (deg[x] > threshold)
            s->del_id[s->ndel++] = x;
    free(deg);
    return MPI_SUCCESS;
}

/* One pass over the arcs stored here: labels that changed move along. */
static int cc_pass(cc_state *s, Iso_mailbox mb, long long *sent)
{
    unsigned char *act = malloc(s->nlocal + s->ndel + 1);
    int rc = MPI_SUCCESS;
    if (!act)
        return MPI_ERR_NO_MEM;
    /* a snapshot of what changed before the pass: a label lowered during
     * the pass is carried in the next one (or by this one, if later) */
    memcpy(act, s->fresh, s->nlocal);
    memcpy(act + s->nlocal, s->del_fresh, s->ndel);
    memset(s->fresh, 0, s->nlocal);
    memset(s->del_fresh, 0, s->ndel);
    for (size_t i = 0; i < s->narcs && rc == MPI_SUCCESS; i++) {
        uint64_t a = s->arcs[i].u, b = s->arcs[i].v, lab;
        long da = cc_delegate(s, a), db;
        if (da >= 0) {
            if (!act[s->nlocal + (size_t)da])
                continue;
            lab = s->del_label[da];
        } else {
            if (!act[a / (uint64_t)s->P])
                continue;
            lab = s->label[a / (uint64_t)s->P];
        }
        db = cc_delegate(s, b);
        if (db >= 0 || (int)(b % (uint64_t)s->P) == s->me) {
            cc_lower(s, b, lab, 1);
        } else {
            cc_pair m = {b, lab};
            rc = Iso_mailbox_send(mb, (int)(b % (uint64_t)s->P), &m, sizeof m);
            (*sent)++;
        }
    }
    free(act);
    if (rc == MPI_SUCCESS)
        rc = Iso_mailbox_wait_empty(mb);
    /* the delegates lowered here, to every other process */
    for (uint64_t d = 0; d < s->ndel && rc == MPI_SUCCESS; d++) {
        if (!s->del_lowered[d])
            continue;
        cc_pair m = {s->del_id[d], s->del_label[d]};
        s->del_lowered[d] = 0;
        rc = Iso_mailbox_bcast(mb, &m, sizeof m);
        (*sent)++;
    }
    if (rc == MPI_SUCCESS)
        rc = Iso_mailbox_wait_empty(mb);
    return rc;
}

static void cc_state_free(cc_state *s)
{
    free(s->label);
    free(s->fresh);
    free(s->del_id);
    free(s->del_label);
    free(s->del_fresh);
    free(s->del_lowered);
    free(s->arcs);
}

/* The whole computation (collective over comm).  Returns an MPI code. */
__attribute__((unused)) static int cc_run(MPI_Comm comm, uint64_t n, const cc_pair *edges,
                                          size_t nedges, uint64_t threshold, size_t capacity,
                                          MPI_Info info, cc_result *res)
{
    cc_state s;
    Iso_mailbox mb = NULL;
    long long sent = 0, changes, totals[3];
    double t0, dt;
    int rc;
    memset(&s, 0, sizeof s);
    memset(res, 0, sizeof *res);
    MPI_Comm_size(comm, &s.P);
    MPI_Comm_rank(comm, &s.me);
    s.n = n;
    s.nlocal = n / (uint64_t)s.P + 1;
    rc = cc_find_delegates(&s, comm, edges, nedges, threshold);
    s.label = malloc(s.nlocal * sizeof *s.label);
    s.fresh = malloc(s.nlocal);
    s.del_label = malloc((s.ndel + 1) * sizeof *s.del_label);
    s.del_fresh = calloc(s.ndel + 1, 1);
    s.del_lowered = calloc(s.ndel + 1, 1);
    if (rc == MPI_SUCCESS && (!s.label || !s.fresh || !s.del_label || !s.del_fresh ||
                              !s.del_lowered))
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS) {
        cc_state_free(&s);
        return rc;
    }
    for (uint64_t k = 0; k < s.nlocal; k++)
        s.label[k] = k * (uint64_t)s.P + (uint64_t)s.me;
    memset(s.fresh, 1, s.nlocal);
    for (uint64_t d = 0; d < s.ndel; d++)
        s.del_label[d] = s.del_id[d], s.del_fresh[d] = 1;
    rc = Iso_mailbox_create(comm, capacity, cc_recv, &s, info, &mb);
    /* the arcs to their processes */
    s.mode = CC_STORE;
    for (size_t i = 0; i < nedges && rc == MPI_SUCCESS; i++) {
        cc_pair e = edges[i], r = {e.v, e.u};
        if (e.u == e.v)
            continue;
        rc = Iso_mailbox_send(mb, cc_arc_home(&s, e.u, e.v), &e, sizeof e);
        if (rc == MPI_SUCCESS)
            rc = Iso_mailbox_send(mb, cc_arc_home(&s, e.v, e.u), &r, sizeof r);
    }
    if (rc == MPI_SUCCESS)
        rc = Iso_mailbox_wait_empty(mb);
    if (rc == MPI_SUCCESS && s.oom)
        rc = MPI_ERR_NO_MEM; /* (a real program would agree on this first) */
    s.mode = CC_LABEL;
    long long remote0 = mb ? mb->stats.remote_msgs : 0;
    MPI_Barrier(comm);
    t0 = MPI_Wtime();
    do {
        s.changes = 0;
        if (rc == MPI_SUCCESS)
            rc = cc_pass(&s, mb, &sent);
        res->passes++;
        MPI_Allreduce(&s.changes, &changes, 1, MPI_LONG_LONG, MPI_SUM, comm);
    } while (changes > 0 && rc == MPI_SUCCESS);
    dt = MPI_Wtime() - t0;
    MPI_Allreduce(&dt, &res->seconds, 1, MPI_DOUBLE, MPI_MAX, comm);
    {
        long long mine[3] = {sent, mb ? mb->stats.remote_msgs - remote0 : 0,
                             (long long)s.narcs};
        MPI_Allreduce(mine, totals, 3, MPI_LONG_LONG, MPI_SUM, comm);
        res->messages = totals[0];
        res->remote_msgs = totals[1];
        res->arcs = totals[2];
    }
    if (mb)
        Iso_mailbox_free(&mb);
    res->ndelegates = s.ndel;
    /* the labels on rank 0; delegate copies compared over all processes */
    {
        uint64_t *all = s.me == 0 ? malloc(s.nlocal * (uint64_t)s.P * sizeof *all) : NULL,
                 *dmin = malloc((s.ndel + 1) * sizeof *dmin), mine = 0;
        int agree = 1;
        MPI_Gather(s.label, (int)s.nlocal, MPI_UINT64_T, all, (int)s.nlocal, MPI_UINT64_T, 0,
                   comm);
        MPI_Allreduce(s.del_label, dmin, (int)s.ndel, MPI_UINT64_T, MPI_MIN, comm);
        for (uint64_t d = 0; d < s.ndel; d++)
            agree &= dmin[d] == s.del_label[d];
        MPI_Allreduce(MPI_IN_PLACE, &agree, 1, MPI_INT, MPI_LAND, comm);
        res->delegate_copies_agree = agree;
        if (s.me == 0) {
            res->label = malloc((n ? n : 1) * sizeof *res->label);
            for (uint64_t x = 0; x < n; x++)
                res->label[x] = all[(x % (uint64_t)s.P) * s.nlocal + x / (uint64_t)s.P];
            for (uint64_t d = 0; d < s.ndel; d++)
                res->label[s.del_id[d]] = s.del_label[d];
            for (uint64_t x = 0; x < n; x++)
                mine += res->label[x] == x;
        }
        MPI_Bcast(&mine, 1, MPI_UINT64_T, 0, comm);
        res->components = mine;
        free(all);
        free(dmin);
    }
    cc_state_free(&s);
    return rc;
}

/* The serial oracle: label[x] = least vertex id of x's component, by
 * union-find (path halving; the root of a set is its least member). */
__attribute__((unused)) static void cc_union_find(uint64_t n, const cc_pair *edges,
                                                  size_t nedges, uint64_t *label)
{
    for (uint64_t x = 0; x < n; x++)
        label[x] = x;
    for (size_t i = 0; i < nedges; i++) {
        uint64_t a = edges[i].u, b = edges[i].v;
        while (label[a] != a)
            a = label[a] = label[label[a]];
        while (label[b] != b)
            b = label[b] = label[label[b]];
        if (a < b)
            label[b] = a;
        else if (b < a)
            label[a] = b;
    }
    for (uint64_t x = 0; x < n; x++) /* parents are smaller: one sweep */
        label[x] = label[label[x]];
}
#endif
