/* Message sharing's planner (Duymus 2021, thesis chapters 4 and 5): which
 * process sends each message of a process-to-process pattern to its target.
 * Pure computation, no MPI calls; the same input gives the same plan on
 * every process and in every other implementation that follows the rules
 * written down here.
 *
 * THE MODEL.  Message e goes from its source s to its target t.  The plan
 * gives it a sender: s itself, or a partner q that receives it from s
 * (stage 1: one combined message s -> q per partner) and sends it to t
 * combined with every other message it sends to t (stage 2).  So a message
 * takes at most one forwarding hop, and nobody ever forwards to itself
 * (a sender is never the message's target).
 *
 * THE LOAD of process p (the thesis's |SS(p)|, what mmax and mavg count) is
 * the number of messages the executor (sharing.c) makes p send, summed
 * over the processes t it sends to:
 *   [t in Q(p)] + [p sends something to t in stage 2],
 *   Q(p) = partners t != p that send one of p's messages (one stage-1
 *   message each); in stage 2 p sends to t the messages whose sender is p
 *   and target t, except p's own message to a partner t, which rides on
 *   the stage-1 message to t.
 * So a target that is also a partner costs p one message (the thesis:
 * sharing with Pa costs Pb a message only "if Pa is not in SendSet(Pb)")
 * -- unless p also forwards other sources' messages to t: those reach p in
 * stage 1, after its stage-1 message to t has gone, so p sends to t twice.
 * The thesis's count has no stages and would count that pair once; ours is
 * what is sent.  The overhead is the number of stage-1 messages that carry
 * no message of p's own to t (table 6.4: partner messages that were not
 * messages before).  Loads are kept exact through every move, so a share
 * that costs a source a new partner is counted when it is made, not
 * ignored as in the thesis.
 *
 * A MOVE of (x, t) to y: every message whose sender is x and target is t
 * gets sender y (x stops sending to t; y sends to t, combining).
 *
 * PHASE I (chapter 4, algorithms 1-3).  Repeat:
 *  1. Pmax = the process of largest load; ties: smallest rank.  Stop if
 *     Pmax and its load are those of the previous iteration (algorithm 1).
 *  2. Pfriend = the process not yet paired with Pmax (in this phase) with
 *     the most common targets in the INITIAL (static) send sets; ties:
 *     smallest rank.  Stop if there is none with a common target.  (Not
 *     re-pairing a pair is ours: the static count would otherwise pick the
 *     same friend for the same Pmax forever.)
 *  3. Walk the two initial lists merged, common targets t ascending; x and
 *     y are the current senders of Pmax's and Pfriend's messages to t.
 *     Pmax can share t if x = Pmax and t is no partner of Pmax; Pfriend
 *     can share t if y = Pfriend and t is no partner of Pfriend.  (A
 *     partner still receives from the process, so sharing its message
 *     gains nothing: this is the thesis's "no message is shared back into
 *     its own group", stated per process.)  C = the t with x != y where
 *     Pmax or Pfriend can share.  alpha = |C| if load(Pmax) >=
 *     load(Pfriend) + |C| (equal sharing impossible, 4.2.1), else (|C| +
 *     load(Pmax) - load(Pfriend)) / 2 rounded down (4.2.2, equation 4.1).
 *  4. Pass 1, t in C ascending, at most alpha: if Pmax can share t, move
 *     (Pmax, t) to y -- Pfriend itself, or the process that now sends
 *     Pfriend's message (the thesis's cases 2 and 4: its group member).
 *     Pass 2, t in C ascending, at most |C| - alpha: if Pfriend can share
 *     t (still), move (Pfriend, t) to x (Pmax, or the process that sends
 *     Pmax's message: case 3).
 *
 * PHASE II (chapter 5, algorithm 4).  Repeat:
 *  1. Pmax as in phase I; Pmin = the process of smallest load other than
 *     Pmax, ties smallest rank.  Stop if load(Pmax) <= average + 1 (the
 *     average of the current loads), or if Pmax and its load are those of
 *     the previous iteration.
 *  2. alpha = (load(Pmax) - load(Pmin)) / 2 rounded down.
 *  3. The targets t Pmax sends to now (its SendSet' after phase I and the
 *     moves so far: its own and those it forwards to; the thesis's
 *     adjacency'), ascending, while fewer than alpha moved:
 *     move (Pmax, t) to Pmin -- ALL the messages Pmax sends to t, its own
 *     and those it forwards (the thesis shares the entry of SendSet') --
 *     if t != Pmin, t is no partner of Pmax, no message of (Pmax, t) was
 *     moved in this phase before (never share back what was received),
 *     and no source of them other than Pmax and Pmin that gets Pmin as a
 *     new partner would pass load(Pmax) by it (reaching it is allowed:
 *     such a source usually has several messages forwarded by Pmax, and
 *     once all have moved it drops Pmax as a partner again; forbidding
 *     the tie stopped phase II at forwarders, 36.0 against 33.6 in the
 *     geometric mean of bench/results/2026-11-25-sharing-counts-2.txt's
 *     K = 512 rows).  The sources of forwarded
 *     messages then send them to Pmin directly: still one hop, and their
 *     new partner message is counted (the thesis counts neither).
 *  4. Stop if nothing moved.
 * A message moves at most once in phase II, so phase II ends.
 *
 * COSTS.  Memory O(K + messages + pairs made): the pattern's inverse lists,
 * hash maps ((sender, target) -> its messages; (source, partner) -> count;
 * the pairs of phase I), two indexed heaps of loads.  Time per phase-I step: the sum of the in-degrees
 * of Pmax's targets (a sparse accumulator finds Pfriend) plus a merge of
 * two lists; per move O(log K) per load that changes. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "route/route.h"

/* ---- a hash map from (a, b), 0 <= a, b < K, to a slot index -------------------
 * Open addressing, linear probing, at most half full (grows by doubling). */
typedef struct {
    long long *key; /* a * K + b, -1 empty */
    int *val;
    size_t mask, used;
} pairmap;

static int pairmap_init(pairmap *m, size_t n)
{
    size_t cap = 16;
    while (cap < 2 * n + 16)
        cap *= 2;
    m->key = malloc(cap * sizeof *m->key);
    m->val = malloc(cap * sizeof *m->val);
    m->mask = cap - 1, m->used = 0;
    if (m->key == NULL || m->val == NULL)
        return MPI_ERR_NO_MEM;
    for (size_t i = 0; i < cap; i++)
        m->key[i] = -1;
    return MPI_SUCCESS;
}

static void pairmap_free(pairmap *m)
{
    free(m->key);
    free(m->val);
}

static size_t pairmap_find(const pairmap *m, long long k)
{
    uint64_t h = (uint64_t)k * 0x9E3779B97F4A7C15ull;
    size_t i = (size_t)(h >> 24) & m->mask;
    while (m->key[i] != -1 && m->key[i] != k)
        i = (i + 1) & m->mask;
    return i;
}

/* The slot of k, -1 if none. */
static int pairmap_get(const pairmap *m, long long k)
{
    size_t i = pairmap_find(m, k);
    return m->key[i] == -1 ? -1 : m->val[i];
}

/* Adds k -> v (k not there). */
static int pairmap_put(pairmap *m, long long k, int v)
{
    if (2 * (m->used + 1) > m->mask + 1) {
        pairmap old = *m;
        if (pairmap_init(m, old.mask + 1) != MPI_SUCCESS) {
            pairmap_free(m);
            *m = old;
            return MPI_ERR_NO_MEM;
        }
        for (size_t i = 0; i <= old.mask; i++)
            if (old.key[i] != -1) {
                size_t j = pairmap_find(m, old.key[i]);
                m->key[j] = old.key[i], m->val[j] = old.val[i];
            }
        m->used = old.used;
        pairmap_free(&old);
    }
    size_t i = pairmap_find(m, k);
    m->key[i] = k, m->val[i] = v;
    m->used++;
    return MPI_SUCCESS;
}

/* ---- an indexed binary heap of processes by load ----------------------------
 * sign +1: largest load first; -1: smallest first; ties smallest rank. */
typedef struct {
    int *h, *pos, n, sign;
    const long long *load;
} heap;

static int heap_before(const heap *q, int a, int b)
{
    if (q->load[a] != q->load[b])
        return q->sign > 0 ? q->load[a] > q->load[b] : q->load[a] < q->load[b];
    return a < b;
}

static void heap_swap(heap *q, int i, int j)
{
    int a = q->h[i], b = q->h[j];
    q->h[i] = b, q->h[j] = a;
    q->pos[b] = i, q->pos[a] = j;
}

static void heap_down(heap *q, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, b = i;
        if (l < q->n && heap_before(q, q->h[l], q->h[b]))
            b = l;
        if (r < q->n && heap_before(q, q->h[r], q->h[b]))
            b = r;
        if (b == i)
            break;
        heap_swap(q, i, b);
        i = b;
    }
}

/* Restores the order after p's load changed. */
static void heap_fix(heap *q, int p)
{
    int i = q->pos[p];
    while (i > 0 && heap_before(q, q->h[i], q->h[(i - 1) / 2])) {
        heap_swap(q, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
    heap_down(q, i);
}

static int heap_init(heap *q, int K, int sign, const long long *load)
{
    q->h = malloc((size_t)K * sizeof *q->h);
    q->pos = malloc((size_t)K * sizeof *q->pos);
    q->n = K, q->sign = sign, q->load = load;
    if (q->h == NULL || q->pos == NULL)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < K; i++)
        q->h[i] = i, q->pos[i] = i;
    for (int i = K / 2 - 1; i >= 0; i--)
        heap_down(q, i);
    return MPI_SUCCESS;
}

static void heap_free(heap *q)
{
    free(q->h);
    free(q->pos);
}

/* The second entry of the heap: the best process other than the top. */
static int heap_second(const heap *q)
{
    if (q->n < 2)
        return -1;
    if (q->n == 2 || heap_before(q, q->h[1], q->h[2]))
        return q->h[1];
    return q->h[2];
}

/* ---- the planner's state ------------------------------------------------------ */
typedef struct {
    int K, err;
    long long M, total; /* total: the sum of the loads */
    const long long *start;
    const int *tgt;
    int *src;    /* [M] each message's source */
    int *sender; /* [M] the answer */
    int *next;   /* [M] the next message of the same (sender, target), -1 */
    /* (sender, target) slots: the messages the sender sends to the target */
    pairmap tmap;
    int *thead, *ttail, *tcount, ntslot, captslot;
    int *starget, *snext; /* per slot: its target, the sender's next slot */
    int *sfirst;          /* [K] each sender's last slot made, -1 */
    /* (source, partner) slots: how many of source's messages partner sends */
    pairmap qmap;
    int *qcount, nqslot, capqslot;
    long long *load;
    heap hmax, hmin;
    pairmap pairs;  /* (a, b), a < b: paired in phase I */
    unsigned char *moved2; /* [M] moved in phase II */
} plan;

static int tslot_count(const plan *P, int a, int b)
{
    int s = pairmap_get(&P->tmap, (long long)a * P->K + b);
    return s < 0 ? 0 : P->tcount[s];
}

static int qslot_count(const plan *P, int a, int b)
{
    int s = pairmap_get(&P->qmap, (long long)a * P->K + b);
    return s < 0 ? 0 : P->qcount[s];
}

/* Is p's own message to t still sent by p?  (Its index by binary search
 * in p's ascending targets.) */
static int own_at(const plan *P, int p, int t)
{
    long long i = iso__route_lower_bound(P->tgt, P->start[p], P->start[p + 1], t);
    return i < P->start[p + 1] && P->tgt[i] == t && P->sender[i] == p;
}

/* The messages p sends to t when the plan is executed (THE LOAD): one in
 * stage 1 if t is p's partner, one in stage 2 if anything is left for t
 * once p's own message has ridden on the stage-1 message. */
static int sends_to(const plan *P, int p, int t)
{
    int partner = qslot_count(P, p, t) > 0, n = tslot_count(P, p, t);
    if (partner && n > 0 && own_at(P, p, t))
        n--;
    return partner + (n > 0);
}

static int grow(void *pp, int *cap, size_t size)
{
    void **p = pp;
    int c = *cap < 16 ? 16 : 2 * *cap;
    void *q = realloc(*p, (size_t)c * size);
    if (q == NULL)
        return MPI_ERR_NO_MEM;
    *p = q;
    return MPI_SUCCESS;
}

/* The slot of (a, b), made if new; -1 out of memory (P->err set). */
static int tslot_get(plan *P, int a, int b)
{
    long long k = (long long)a * P->K + b;
    int s = pairmap_get(&P->tmap, k);
    if (s >= 0)
        return s;
    if (P->ntslot == P->captslot) {
        int cap = P->captslot;
        if (grow(&P->thead, &cap, sizeof(int)) || grow(&P->ttail, &cap, sizeof(int)) ||
            grow(&P->tcount, &cap, sizeof(int)) || grow(&P->starget, &cap, sizeof(int)) ||
            grow(&P->snext, &cap, sizeof(int))) {
            P->err = MPI_ERR_NO_MEM;
            return -1;
        }
        P->captslot = cap < 16 ? 16 : 2 * cap;
    }
    s = P->ntslot;
    if (pairmap_put(&P->tmap, k, s)) {
        P->err = MPI_ERR_NO_MEM;
        return -1;
    }
    P->ntslot++;
    P->thead[s] = P->ttail[s] = -1;
    P->tcount[s] = 0;
    P->starget[s] = b;
    P->snext[s] = P->sfirst[a];
    P->sfirst[a] = s;
    return s;
}

static int qslot_get(plan *P, int a, int b)
{
    long long k = (long long)a * P->K + b;
    int s = pairmap_get(&P->qmap, k);
    if (s >= 0)
        return s;
    if (P->nqslot == P->capqslot) {
        int cap = P->capqslot;
        if (grow(&P->qcount, &cap, sizeof(int))) {
            P->err = MPI_ERR_NO_MEM;
            return -1;
        }
        P->capqslot = cap < 16 ? 16 : 2 * cap;
    }
    s = P->nqslot;
    if (pairmap_put(&P->qmap, k, s)) {
        P->err = MPI_ERR_NO_MEM;
        return -1;
    }
    P->nqslot++;
    P->qcount[s] = 0;
    return s;
}

static void set_load(plan *P, int p, long long delta)
{
    P->load[p] += delta;
    P->total += delta;
    heap_fix(&P->hmax, p);
    heap_fix(&P->hmin, p);
}

/* Partner q gains (+1) or loses (-1) one of source s's messages. */
static void partner_add(plan *P, int s, int q, int d)
{
    if (s == q)
        return;
    int slot = qslot_get(P, s, q);
    if (slot < 0)
        return;
    int before = sends_to(P, s, q);
    P->qcount[slot] += d;
    set_load(P, s, sends_to(P, s, q) - before);
}

/* Moves (x, t) to y.  The loads that change: x's and y's to t, and each
 * moved message's source's to x and to y (distinct pairs: x, y != t). */
static void move(plan *P, int x, int t, int y)
{
    int to = tslot_get(P, y, t), from = tslot_get(P, x, t);
    if (to < 0 || from < 0 || P->tcount[from] == 0)
        return;
    int xbefore = sends_to(P, x, t), ybefore = sends_to(P, y, t);
    for (int e = P->thead[from]; e != -1; e = P->next[e]) {
        P->sender[e] = y;
        partner_add(P, P->src[e], x, -1);
        partner_add(P, P->src[e], y, +1);
    }
    int n = P->tcount[from];
    if (P->ttail[to] == -1)
        P->thead[to] = P->thead[from];
    else
        P->next[P->ttail[to]] = P->thead[from];
    P->ttail[to] = P->ttail[from];
    P->tcount[to] += n;
    P->thead[from] = P->ttail[from] = -1;
    P->tcount[from] = 0;
    set_load(P, x, sends_to(P, x, t) - xbefore);
    set_load(P, y, sends_to(P, y, t) - ybefore);
}

static int paired(const plan *P, int a, int b)
{
    return pairmap_get(&P->pairs, a < b ? (long long)a * P->K + b : (long long)b * P->K + a) >= 0;
}

static int pair_add(plan *P, int a, int b)
{
    if (pairmap_put(&P->pairs, a < b ? (long long)a * P->K + b : (long long)b * P->K + a, 0))
        P->err = MPI_ERR_NO_MEM;
    return P->err;
}

/* ---- phase I ------------------------------------------------------------------ */
static int phase1(plan *P)
{
    int K = P->K, rc = MPI_SUCCESS;
    long long *istart = calloc((size_t)K + 1, sizeof *istart);
    int *isrc = malloc((size_t)(P->M ? P->M : 1) * sizeof *isrc);
    int *acc = calloc((size_t)K, sizeof *acc), *touched = malloc((size_t)K * sizeof *touched);
    long long *fill = malloc((size_t)K * sizeof *fill);
    if (istart == NULL || isrc == NULL || acc == NULL || touched == NULL || fill == NULL) {
        rc = MPI_ERR_NO_MEM;
        goto out;
    }
    /* inverse lists: the sources of each target, ascending */
    for (long long e = 0; e < P->M; e++)
        istart[P->tgt[e] + 1]++;
    for (int t = 0; t < K; t++)
        istart[t + 1] += istart[t];
    memcpy(fill, istart, (size_t)K * sizeof *fill);
    for (long long e = 0; e < P->M; e++)
        isrc[fill[P->tgt[e]]++] = P->src[e];

    int prev = -1;
    long long prevload = -1;
    for (;;) {
        int pmax = P->hmax.h[0];
        if (pmax == prev && P->load[pmax] == prevload)
            break;
        prev = pmax, prevload = P->load[pmax];
        int ntouched = 0;
        for (long long i = P->start[pmax]; i < P->start[pmax + 1]; i++) {
            int t = P->tgt[i];
            for (long long j = istart[t]; j < istart[t + 1]; j++) {
                int q = isrc[j];
                if (q == pmax)
                    continue;
                if (acc[q]++ == 0)
                    touched[ntouched++] = q;
            }
        }
        int friend = -1;
        for (int i = 0; i < ntouched; i++) {
            int q = touched[i];
            if (paired(P, pmax, q))
                continue;
            if (friend == -1 || acc[q] > acc[friend] || (acc[q] == acc[friend] && q < friend))
                friend = q;
        }
        for (int i = 0; i < ntouched; i++)
            acc[touched[i]] = 0;
        if (friend == -1)
            break;
        if (pair_add(P, pmax, friend))
            break;
        /* pass 0 counts |C|, pass 1 shares Pmax's side, pass 2 Pfriend's */
        long long c = 0, alpha = 0, share1 = 0, share2 = 0;
        for (int pass = 0; pass < 3; pass++) {
            long long i = P->start[pmax], j = P->start[friend];
            while (i < P->start[pmax + 1] && j < P->start[friend + 1]) {
                int a = P->tgt[i], b = P->tgt[j];
                if (a < b) {
                    i++;
                    continue;
                }
                if (b < a) {
                    j++;
                    continue;
                }
                int t = a, x = P->sender[i], y = P->sender[j];
                int max_can = x == pmax && qslot_count(P, pmax, t) == 0;
                int friend_can = y == friend && qslot_count(P, friend, t) == 0;
                if (x != y && (max_can || friend_can)) {
                    if (pass == 0)
                        c++;
                    else if (pass == 1 && share1 < alpha && max_can) {
                        move(P, pmax, t, y);
                        share1++;
                    } else if (pass == 2 && share2 < c - alpha && friend_can) {
                        move(P, friend, t, x);
                        share2++;
                    }
                }
                i++, j++;
            }
            if (pass == 0) {
                long long lm = P->load[pmax], lf = P->load[friend];
                alpha = lm >= lf + c ? c : (c + lm - lf) / 2;
                if (alpha < 0)
                    alpha = 0;
            }
        }
        if (P->err)
            break;
    }
out:
    if (rc == MPI_SUCCESS)
        rc = P->err;
    free(istart);
    free(isrc);
    free(acc);
    free(touched);
    free(fill);
    return rc;
}

/* ---- phase II ----------------------------------------------------------------- */
/* The load s gains if q becomes its partner (0 if q is one already): the
 * stage-1 message, less the stage-2 message it replaces when s sends q
 * nothing but its own message. */
static int partner_cost(const plan *P, int s, int q)
{
    if (qslot_count(P, s, q) > 0)
        return 0;
    int n = tslot_count(P, s, q);
    return n == 0 || n - own_at(P, s, q) > 0;
}

/* May (pmax, t) move to pmin?  Pmax sends to t, no message of it was
 * received in this phase, and no source of its messages other than Pmax
 * would pass lmax by the new partner pmin. */
static int shareable2(const plan *P, int pmax, int t, int pmin, long long lmax)
{
    int slot = pairmap_get(&P->tmap, (long long)pmax * P->K + t);
    if (slot < 0 || P->tcount[slot] == 0)
        return 0;
    for (int e = P->thead[slot]; e != -1; e = P->next[e]) {
        int s = P->src[e];
        if (P->moved2[e])
            return 0;
        if (s != pmax && s != pmin && P->load[s] + partner_cost(P, s, pmin) > lmax)
            return 0;
    }
    return 1;
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

static int phase2(plan *P)
{
    int K = P->K, prev = -1;
    int *cand = malloc((size_t)K * sizeof *cand); /* Pmax's current targets */
    long long prevload = -1;
    if (cand == NULL)
        return MPI_ERR_NO_MEM;
    for (;;) {
        int pmax = P->hmax.h[0], ncand = 0;
        int pmin = P->hmin.h[0] == pmax ? heap_second(&P->hmin) : P->hmin.h[0];
        if (pmin < 0 || (double)P->load[pmax] <= (double)P->total / K + 1.0)
            break;
        if (pmax == prev && P->load[pmax] == prevload)
            break;
        prev = pmax, prevload = P->load[pmax];
        for (int sl = P->sfirst[pmax]; sl != -1; sl = P->snext[sl])
            if (P->tcount[sl] > 0)
                cand[ncand++] = P->starget[sl];
        qsort(cand, (size_t)ncand, sizeof *cand, cmp_int);
        long long lmax = P->load[pmax], alpha = (lmax - P->load[pmin]) / 2, moved = 0;
        for (int i = 0; i < ncand && moved < alpha; i++) {
            int t = cand[i];
            if (t == pmin || qslot_count(P, pmax, t) != 0 || !shareable2(P, pmax, t, pmin, lmax))
                continue;
            int slot = pairmap_get(&P->tmap, (long long)pmax * K + t);
            for (int e = P->thead[slot]; e != -1; e = P->next[e])
                P->moved2[e] = 1;
            move(P, pmax, t, pmin);
            moved++;
        }
        if (moved == 0 || P->err)
            break;
    }
    free(cand);
    return P->err;
}

/* ---- the planner ---------------------------------------------------------------- */
static int check_pattern(const iso_pattern *pat)
{
    if (pat == NULL || pat->K < 1 || pat->start == NULL || pat->start[0] != 0)
        return MPI_ERR_ARG;
    if (pat->start[pat->K] > 0 && pat->targets == NULL)
        return MPI_ERR_ARG;
    if (pat->start[pat->K] >= INT32_MAX) /* slots and list links are ints */
        return MPI_ERR_ARG;
    for (int p = 0; p < pat->K; p++) {
        if (pat->start[p + 1] < pat->start[p])
            return MPI_ERR_ARG;
        for (long long e = pat->start[p]; e < pat->start[p + 1]; e++) {
            int t = pat->targets[e];
            if (t < 0 || t >= pat->K || t == p || (e > pat->start[p] && t <= pat->targets[e - 1]))
                return MPI_ERR_ARG;
        }
    }
    return MPI_SUCCESS;
}

static void plan_free(plan *P)
{
    free(P->src);
    free(P->next);
    pairmap_free(&P->tmap);
    free(P->thead);
    free(P->starget);
    free(P->snext);
    free(P->sfirst);
    free(P->ttail);
    free(P->tcount);
    pairmap_free(&P->qmap);
    free(P->qcount);
    free(P->load);
    heap_free(&P->hmax);
    heap_free(&P->hmin);
    pairmap_free(&P->pairs);
    free(P->moved2);
}

int iso__sharing_plan(const iso_pattern *pat, iso_sharing *out)
{
    return iso__sharing_plan_phases(pat, 2, out);
}

int iso__sharing_plan_phases(const iso_pattern *pat, int phases, iso_sharing *out)
{
    if (out == NULL)
        return MPI_ERR_ARG;
    memset(out, 0, sizeof *out);
    int rc = check_pattern(pat);
    if (rc != MPI_SUCCESS)
        return rc;
    int K = pat->K;
    long long M = pat->start[K];
    size_t m1 = (size_t)(M ? M : 1);
    plan P;
    memset(&P, 0, sizeof P);
    P.K = K, P.M = M, P.start = pat->start, P.tgt = pat->targets;
    P.src = malloc(m1 * sizeof *P.src);
    P.sender = malloc(m1 * sizeof *P.sender);
    P.next = malloc(m1 * sizeof *P.next);
    P.load = calloc((size_t)K, sizeof *P.load);
    P.moved2 = calloc(m1, 1);
    P.sfirst = malloc((size_t)K * sizeof *P.sfirst);
    if (P.sfirst != NULL)
        for (int p = 0; p < K; p++)
            P.sfirst[p] = -1;
    if (P.src == NULL || P.sender == NULL || P.next == NULL || P.load == NULL ||
        P.moved2 == NULL || P.sfirst == NULL || pairmap_init(&P.tmap, (size_t)M) || pairmap_init(&P.qmap, (size_t)K) ||
        pairmap_init(&P.pairs, (size_t)K)) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    /* initially every process sends its own messages: load = out-degree */
    for (int p = 0; p < K; p++) {
        P.load[p] = pat->start[p + 1] - pat->start[p];
        P.total += P.load[p];
        for (long long e = pat->start[p]; e < pat->start[p + 1]; e++) {
            P.src[e] = P.sender[e] = p;
            P.next[e] = -1;
            int s = tslot_get(&P, p, pat->targets[e]);
            if (s < 0) {
                rc = P.err;
                goto fail;
            }
            P.thead[s] = P.ttail[s] = (int)e;
            P.tcount[s] = 1;
        }
    }
    if ((rc = heap_init(&P.hmax, K, +1, P.load)) || (rc = heap_init(&P.hmin, K, -1, P.load)))
        goto fail;
    out->initial_mmax = P.load[P.hmax.h[0]];
    out->initial_mavg = (double)P.total / K;
    if ((rc = phase1(&P)) != MPI_SUCCESS)
        goto fail;
    out->phase1_mmax = P.load[P.hmax.h[0]];
    out->phase1_mavg = (double)P.total / K;
    if (phases >= 2 && (rc = phase2(&P)) != MPI_SUCCESS)
        goto fail;
    if ((rc = P.err) != MPI_SUCCESS)
        goto fail;
    out->phase2_mmax = P.load[P.hmax.h[0]];
    out->phase2_mavg = (double)P.total / K;
    /* the overhead: stage-1 messages that carry no own message to the partner */
    for (size_t i = 0; i <= P.qmap.mask; i++) {
        long long k = P.qmap.key[i];
        if (k != -1 && P.qcount[P.qmap.val[i]] > 0 && !own_at(&P, (int)(k / K), (int)(k % K)))
            out->overhead++;
    }
    out->volume_ratio = 1.0;
    if (pat->bytes != NULL) {
        double direct = 0, forwarded = 0;
        for (long long e = 0; e < M; e++) {
            direct += (double)pat->bytes[e];
            if (P.sender[e] != P.src[e])
                forwarded += (double)pat->bytes[e];
        }
        if (direct > 0)
            out->volume_ratio = (direct + forwarded) / direct;
    }
    out->sender = P.sender;
    out->load = P.load;
    P.sender = NULL;
    P.load = NULL;
    plan_free(&P);
    return MPI_SUCCESS;
fail:
    free(P.sender);
    plan_free(&P);
    return rc;
}

void iso__sharing_free(iso_sharing *s)
{
    if (s != NULL) {
        free(s->sender);
        free(s->load);
        s->sender = NULL;
        s->load = NULL;
    }
}
