/* Message sharing (Duymus 2021; route.h, "message sharing") as a routing
 * of irregular exchanges: the plan of one exchange, run by the executor
 * path every routing shares (iso__route_request, pack mode, one arena).
 *
 * The pattern.  A process's message to a target is all its blocks for
 * that target (repeated edges: several blocks, one message); blocks to
 * itself are delivered locally and are not part of the pattern.  Each
 * process contributes its targets (ascending) and per target the number of
 * blocks and their bytes.  Who plans depends on the communicator's size
 * (root_plans; ISO_SHARING_PLAN=all|root forces one, for tests):
 *   all:  two MPI_Iallgatherv make the whole pattern known to every
 *         process, and every process runs the planner (iso__sharing_plan,
 *         deterministic) on it and gets the same plan.  One round of
 *         collectives, but O(pattern) memory and the planner's time on
 *         every process.
 *   root: MPI_Igatherv brings the pattern to rank 0 alone, which plans and
 *         sends each process its part by MPI_Iscatterv: the messages it
 *         sends, forwards or receives, with their senders (plan_at_root).
 *         Memory O(its part) elsewhere (and O(K) counts); the planner runs
 *         once; one more round (the scatter).  The same plan: a process's
 *         schedule reads only its part of the pattern.
 * Either is waited on with the library's progress, so other isocoll
 * requests move meanwhile.  The plan tells every process its sources,
 * which the SDDE needs.  Each process needs more than its own sends --
 * a forwarder must know what its partners send it, a target what arrives
 * from which sender and in which order, so that every size is known
 * without a header exchange -- which is what a part holds.  No O(K^2)
 * array on any path.
 *
 * The plan: two rounds (stages) of one schedule.
 *   Stage 0: a source q sends each of its partners p (the senders != q of
 *   its messages; the planner may give a source several) one combined
 *   message with the blocks of every message p forwards for it, and also
 *   its own message to p if p is one of its targets (so sharing adds a
 *   message only when p was not a target: the thesis's overhead message).
 *   p delivers the blocks for itself at once.
 *   Stage 1: every process sends each target one combined message: its own
 *   blocks for that target (those not sent in stage 0) and those it
 *   forwards, entries ordered by source rank, then by edge ordinal.
 * Entry order in both stages follows from the pattern alone, so a
 * receiver knows each entry's source and ordinal: receive slot j is the
 * ord-th occurrence of sources[j] (the graph rule, as the VPT delivers);
 * for the SDDE (sources unknown) the slots are the arrivals in ascending
 * source order.  Message sizes (data plus the 8-byte size header per
 * entry of pack mode) are known when the plan is made; the request
 * reserves its buffers then. */
#include "route/route.h"
#include <limits.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The gathered pattern and its plan, the same on every process. */
typedef struct {
    int K, me;
    long long E;          /* messages */
    long long *start;     /* [K + 1] */
    int *targets;         /* [E] */
    int *src;             /* [E] the source of message e */
    long long *nblocks;   /* [E] blocks of message e */
    long long *bytes;     /* [E] bytes of message e */
    int *sender;          /* [E] the planner's */
    long long *pstart;    /* [K + 1] the partners of source q: */
    int *partners;        /* partners[pstart[q] .. pstart[q+1]), ascending */
} pattern_t;

/* Planning state of this process. */
typedef struct {
    pattern_t P;
    int nsend, nrecv;
    const int *dests;
    int *dest_pairs;     /* iso__route_sorted_pairs(dests) */
    int *src_pairs;      /* iso__route_sorted_pairs(sources) */
    char *filled;        /* per receive slot: delivered */
    iso_piece *fwd;      /* [E] where message e's first block is here before stage 1 */
    iso_sched *s;
    size_t *msgsize;
    int msgsize_cap;
} plan_t;

static void pattern_free(pattern_t *P)
{
    free(P->start);
    free(P->targets);
    free(P->src);
    free(P->nblocks);
    free(P->bytes);
    free(P->sender);
    free(P->pstart);
    free(P->partners);
    memset(P, 0, sizeof *P);
}

/* Is x a partner of source q? */
static int is_partner(const pattern_t *P, int q, int x)
{
    long long i = iso__route_lower_bound(P->partners, P->pstart[q], P->pstart[q + 1], x);
    return i < P->pstart[q + 1] && P->partners[i] == x;
}

/* The partner message e goes to in stage 0, or -1: its sender if that is
 * not its source, else its target if that is a partner of its source. */
static int carrier(const pattern_t *P, long long e)
{
    int q = P->src[e];
    if (P->sender[e] != q)
        return P->sender[e];
    return is_partner(P, q, P->targets[e]) ? P->targets[e] : -1;
}

/* Does message e travel in stage 1 (from sender[e])?  All but those whose
 * target is the partner they reached in stage 0. */
static int in_stage1(const pattern_t *P, long long e)
{
    return carrier(P, e) != P->targets[e];
}

/* ---- the pattern ------------------------------------------------------------- */

/* This process's messages: per distinct target other than itself,
 * ascending, its blocks and bytes (tg[n], info[2n] = nblocks, bytes; the
 * bytes 0 without a). */
static int local_messages(plan_t *pl, const iso_args *a, int *n, int **tg, long long **info)
{
    const int *pairs = pl->dest_pairs;
    int m = 0;
    *tg = malloc(sizeof(int) * ((size_t)pl->nsend + 1));
    *info = malloc(sizeof(long long) * 2 * ((size_t)pl->nsend + 1));
    if (!*tg || !*info)
        return iso__error(ISO_ERR_NOMEM);
    for (int k = 0; k < pl->nsend; k++) {
        int t = pairs[2 * k];
        if (t == pl->P.me)
            continue;
        if (m == 0 || (*tg)[m - 1] != t) {
            (*tg)[m] = t;
            (*info)[2 * m] = (*info)[2 * m + 1] = 0;
            m++;
        }
        (*info)[2 * (m - 1)]++;
        (*info)[2 * (m - 1) + 1] += a ? iso__route_send_bytes(a, pairs[2 * k + 1]) : 0;
    }
    *n = m;
    return MPI_SUCCESS;
}

/* Allocates P's arrays for P->E messages and K processes. */
static int pattern_alloc(pattern_t *P)
{
    P->start = malloc(sizeof(long long) * ((size_t)P->K + 1));
    P->pstart = malloc(sizeof(long long) * ((size_t)P->K + 1));
    P->targets = malloc(sizeof(int) * ((size_t)P->E + 1));
    P->src = malloc(sizeof(int) * ((size_t)P->E + 1));
    P->nblocks = malloc(sizeof(long long) * ((size_t)P->E + 1));
    P->bytes = malloc(sizeof(long long) * ((size_t)P->E + 1));
    if (!P->start || !P->pstart || !P->targets || !P->src || !P->nblocks || !P->bytes)
        return iso__error(ISO_ERR_NOMEM);
    return MPI_SUCCESS;
}

/* Fills P's arrays from the gathered counts and [nblocks, bytes] pairs
 * (start, src, nblocks, bytes; targets are gathered in place). */
static void pattern_fill(pattern_t *P, const int *cnt, const long long *info_all)
{
    P->start[0] = 0;
    for (int q = 0; q < P->K; q++)
        P->start[q + 1] = P->start[q] + cnt[q];
    for (int q = 0; q < P->K; q++)
        for (long long e = P->start[q]; e < P->start[q + 1]; e++)
            P->src[e] = q;
    for (long long e = 0; e < P->E; e++) {
        P->nblocks[e] = info_all[2 * e];
        P->bytes[e] = info_all[2 * e + 1];
    }
}

/* Every process's messages, gathered at every process (collective over
 * comm), or only at root when root >= 0 (the other processes' P stays
 * empty).  err: the caller's error so far; every process joins every
 * collective here even after an error of its own, and the two agreements
 * (core/agree.c) make an allocation that failed on one process, or a
 * pattern too large at the root, an error on all of them before anyone
 * waits for a gather that would never complete. */
static int gather_pattern_at(plan_t *pl, MPI_Comm comm, const iso_args *a, int root, int err)
{
    pattern_t *P = &pl->P;
    int n = 0, *tg = NULL, *cnt = NULL, *dsp = NULL, *cnt2 = NULL, *dsp2 = NULL;
    int here = root < 0 || root == P->me; /* this process gets the pattern */
    long long *info = NULL, *info_all = NULL;
    iso_agreement ag = {0};
    MPI_Request req[2];
    if (err == MPI_SUCCESS)
        err = local_messages(pl, a, &n, &tg, &info);
    if (err == MPI_SUCCESS && here) {
        cnt = malloc(sizeof(int) * ((size_t)P->K + 1));
        dsp = malloc(sizeof(int) * ((size_t)P->K + 1));
        cnt2 = malloc(sizeof(int) * ((size_t)P->K + 1));
        dsp2 = malloc(sizeof(int) * ((size_t)P->K + 1));
        if (!cnt || !dsp || !cnt2 || !dsp2)
            err = iso__error(ISO_ERR_NOMEM);
    }
    if ((err = iso__agree(comm, err, &ag)) != MPI_SUCCESS)
        goto fn_exit;
    if (root < 0)
        err = MPI_Iallgather(&n, 1, MPI_INT, cnt, 1, MPI_INT, comm, &req[0]);
    else
        err = MPI_Igather(&n, 1, MPI_INT, cnt, 1, MPI_INT, root, comm, &req[0]);
    if (err || (err = iso__progress_waitall(1, req)))
        goto fn_exit;
    if (here) {
        P->E = 0;
        for (int q = 0; q < P->K; q++) {
            dsp[q] = (int)P->E;
            cnt2[q] = 2 * cnt[q];
            dsp2[q] = 2 * dsp[q];
            P->E += cnt[q];
        }
        if (2 * P->E > INT_MAX) /* the same on every process that has the pattern */
            err = iso__error_msg(ISO_ERR_COUNT, "sharing: the pattern has %lld messages, more "
                                                "than the gathers' int counts hold", P->E);
        else if ((err = pattern_alloc(P)) == MPI_SUCCESS &&
                 (info_all = malloc(sizeof(long long) * 2 * ((size_t)P->E + 1))) == NULL)
            err = iso__error(ISO_ERR_NOMEM);
    }
    if ((err = iso__agree(comm, err, &ag)) != MPI_SUCCESS)
        goto fn_exit;
    if (root < 0)
        err = MPI_Iallgatherv(tg, n, MPI_INT, P->targets, cnt, dsp, MPI_INT, comm, &req[0]);
    else
        err = MPI_Igatherv(tg, n, MPI_INT, P->targets, cnt, dsp, MPI_INT, root, comm, &req[0]);
    if (err)
        goto fn_exit;
    if (root < 0)
        err = MPI_Iallgatherv(info, 2 * n, MPI_LONG_LONG, info_all, cnt2, dsp2, MPI_LONG_LONG,
                              comm, &req[1]);
    else
        err = MPI_Igatherv(info, 2 * n, MPI_LONG_LONG, info_all, cnt2, dsp2, MPI_LONG_LONG, root,
                           comm, &req[1]);
    if (err) {
        iso__progress_waitall(1, req);
        goto fn_exit;
    }
    if ((err = iso__progress_waitall(2, req)) != MPI_SUCCESS)
        goto fn_exit;
    if (here)
        pattern_fill(P, cnt, info_all);
fn_exit:
    free(tg);
    free(info);
    free(info_all);
    free(cnt);
    free(dsp);
    free(cnt2);
    free(dsp2);
    return err;
}

static int cmp_int(const void *x, const void *y)
{
    int a = *(const int *)x, b = *(const int *)y;
    return (a > b) - (a < b);
}

/* Each source's partners (the senders other than itself of its messages in
 * P), distinct and ascending. */
static int derive_partners(pattern_t *P)
{
    long long n = 0;
    if ((P->partners = malloc(sizeof(int) * ((size_t)P->E + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int q = 0; q < P->K; q++) {
        long long first = n;
        P->pstart[q] = n;
        for (long long e = P->start[q]; e < P->start[q + 1]; e++) {
            int s = P->sender[e];
            if (s < 0 || s >= P->K)
                return iso__error_msg(ISO_ERR_INTERN, "sharing: the planner gave message %lld "
                                                      "the sender %d", e, s);
            if (s != q)
                P->partners[n++] = s;
        }
        qsort(P->partners + first, (size_t)(n - first), sizeof(int), cmp_int);
        { /* distinct */
            long long kept = first;
            for (long long i = first; i < n; i++)
                if (i == first || P->partners[i] != P->partners[kept - 1])
                    P->partners[kept++] = P->partners[i];
            n = kept;
        }
    }
    P->pstart[P->K] = n;
    return MPI_SUCCESS;
}

/* The planner on the gathered pattern; each source's partners (its
 * messages' senders other than itself), distinct and ascending. */
static int run_planner(pattern_t *P)
{
    iso_pattern pat = {P->K, P->start, P->targets, P->bytes};
    iso_sharing sh;
    int err;
    memset(&sh, 0, sizeof sh);
    if ((err = iso__sharing_plan(&pat, &sh)) != MPI_SUCCESS)
        return err;
    P->sender = sh.sender;
    sh.sender = NULL;
    iso__sharing_free(&sh);
    return derive_partners(P);
}

/* Who plans (DESIGN.md, "Message sharing"): every process on the allgathered
 * pattern below ROOT_PLANS_FROM processes, the root (plan_at_root) from
 * there on; ISO_SHARING_PLAN=all or =root forces one (a knob for tests and
 * measurements: it must be the same on every process).  8: the set-up
 * measured faster by the root path from 8 ranks on Open MPI (1.6x) and
 * under SMPI, slower at MPICH 2, a tie at Open MPI 4. */
enum { ROOT_PLANS_FROM = 8 };

static int root_plans(int size)
{
    const char *v = getenv("ISO_SHARING_PLAN");
    if (v && strcmp(v, "all") == 0)
        return 0;
    if (v && strcmp(v, "root") == 0)
        return 1;
    return size >= ROOT_PLANS_FROM;
}

/* ---- one process plans ---------------------------------------------------------
 *
 * The root (rank 0) gathers the pattern (MPI_Igatherv), runs the planner and
 * sends every other process its part (MPI_Iscatterv): the messages it has a
 * hand in -- those it sends, forwards or receives -- each as a record
 * (source, target, sender, blocks, bytes), in the pattern's order.  From
 * its part a process rebuilds a pattern_t of those messages alone; the
 * schedule (round0, round1, arrivals) reads nothing else: its own messages
 * are all there, so its partners are; a source q's messages that it
 * forwards or receives are there, so "is it a partner of q" is answered
 * alike; and the messages keep their relative order, so every entry order
 * is the same.  The plan is the one the gathered pattern gives. */

enum { RECORD = 5 }; /* long longs a message's record takes */

/* The processes other than the root (P->me) whose part holds message e:
 * its source, target and sender, distinct (the target is never the
 * source).  Returns how many are in who[]. */
static int holders(const pattern_t *P, long long e, int who[3])
{
    int n = 0, all[3] = {P->src[e], P->targets[e], P->sender[e]};
    for (int i = 0; i < 3; i++)
        if (all[i] != P->me && (i < 2 || (all[2] != all[0] && all[2] != all[1])))
            who[n++] = all[i];
    return n;
}

/* At the root: every other process's part, records[dsp[r] ..] count[r]. */
static int make_parts(const pattern_t *P, int *count, int *dsp, long long **records)
{
    long long total = 0, *fill;
    int who[3];
    for (int r = 0; r < P->K; r++)
        count[r] = 0;
    for (long long e = 0; e < P->E; e++)
        for (int i = 0, n = holders(P, e, who); i < n; i++)
            count[who[i]]++;
    for (int r = 0; r < P->K; r++) {
        if (total + count[r] > INT_MAX)
            return iso__error_msg(ISO_ERR_COUNT, "sharing: the plan's parts hold more than "
                                                 "MPI_Iscatterv counts");
        dsp[r] = (int)total;
        total += count[r];
    }
    if ((*records = malloc(sizeof(long long) * RECORD * ((size_t)total + 1))) == NULL ||
        (fill = malloc(sizeof(long long) * ((size_t)P->K + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int r = 0; r < P->K; r++)
        fill[r] = dsp[r];
    for (long long e = 0; e < P->E; e++)
        for (int i = 0, n = holders(P, e, who); i < n; i++) {
            long long *rec = *records + RECORD * fill[who[i]]++;
            rec[0] = P->src[e];
            rec[1] = P->targets[e];
            rec[2] = P->sender[e];
            rec[3] = P->nblocks[e];
            rec[4] = P->bytes[e];
        }
    free(fill);
    return MPI_SUCCESS;
}

/* This process's pattern from its part (n records, sources ascending). */
static int part_pattern(pattern_t *P, const long long *rec, int n)
{
    P->E = n;
    if (pattern_alloc(P) != MPI_SUCCESS ||
        (P->sender = malloc(sizeof(int) * ((size_t)n + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int q = 0; q <= P->K; q++)
        P->start[q] = 0;
    for (int e = 0; e < n; e++, rec += RECORD) {
        P->src[e] = (int)rec[0];
        P->targets[e] = (int)rec[1];
        P->sender[e] = (int)rec[2];
        P->nblocks[e] = rec[3];
        P->bytes[e] = rec[4];
        P->start[P->src[e] + 1]++;
    }
    for (int q = 0; q < P->K; q++)
        P->start[q + 1] += P->start[q];
    return derive_partners(P);
}

/* The plan's pattern at this process by the root's planning (collective
 * over comm): the whole pattern at the root, this process's part elsewhere.
 * err: the caller's error so far (every process joins every collective).
 * The root's error (planner, parts) and a failed allocation of a part
 * meet in one agreement before the parts travel. */
static int plan_at_root(plan_t *pl, MPI_Comm comm, const iso_args *a, int err)
{
    pattern_t *P = &pl->P;
    int root = 0, mine = 0, *count = NULL, *dsp = NULL;
    long long *records = NULL, *part = NULL;
    iso_agreement ag = {0};
    MPI_Datatype rectype = MPI_DATATYPE_NULL;
    MPI_Request req;
    if (err == MPI_SUCCESS && P->me == root) {
        count = calloc((size_t)P->K + 1, sizeof *count);
        dsp = calloc((size_t)P->K + 1, sizeof *dsp);
        if (!count || !dsp)
            err = iso__error(ISO_ERR_NOMEM);
    }
    if ((err = gather_pattern_at(pl, comm, a, root, err)) != MPI_SUCCESS)
        goto fn_exit;
    if (P->me == root && (err = run_planner(P)) == MPI_SUCCESS &&
        (err = make_parts(P, count, dsp, &records)) != MPI_SUCCESS)
        memset(count, 0, sizeof *count * (size_t)P->K); /* nothing travels */
    {   /* the root's error is kept for the agreement below */
        int rc = MPI_Iscatter(count, 1, MPI_INT, &mine, 1, MPI_INT, root, comm, &req);
        if (rc != MPI_SUCCESS || (rc = iso__progress_waitall(1, &req)) != MPI_SUCCESS) {
            err = rc;
            goto fn_exit;
        }
    }
    if (err == MPI_SUCCESS &&
        (part = malloc(sizeof(long long) * RECORD * ((size_t)mine + 1))) == NULL)
        err = iso__error(ISO_ERR_NOMEM);
    if ((err = iso__agree(comm, err, &ag)) != MPI_SUCCESS)
        goto fn_exit;
    if ((err = MPI_Type_contiguous(RECORD, MPI_LONG_LONG, &rectype)) ||
        (err = MPI_Type_commit(&rectype)) ||
        (err = MPI_Iscatterv(records, count, dsp, rectype, part, mine, rectype, root, comm,
                             &req)) ||
        (err = iso__progress_waitall(1, &req)))
        goto fn_exit;
    if (P->me != root)
        err = part_pattern(P, part, mine);
fn_exit:
    if (rectype != MPI_DATATYPE_NULL)
        MPI_Type_free(&rectype);
    free(count);
    free(dsp);
    free(records);
    free(part);
    return err;
}

/* ---- the schedule ------------------------------------------------------------ */

/* Delivers piece src, the ord-th block from source q, into its slot (the
 * graph rule; the SDDE's slots are made in the same form). */
static int deliver(plan_t *pl, int q, long long ord, iso_piece src)
{
    int slot = -1;
    if (!iso__route_graph_slot(pl->src_pairs, pl->nrecv, pl->filled, q, ord, &slot))
        return iso__error_msg(ISO_ERR_INTERN, "sharing: a block from %d matches no source", q);
    iso_op op = {.kind = ISO_OP_DELIVER, .src = src, .slot = slot, .first = 1};
    return iso__sched_add(pl->s, &op);
}

/* Adds this process's own blocks of message e (to target t) to message *m. */
static int add_own_blocks(plan_t *pl, long long e, int *m)
{
    int first = iso__route_first_of(pl->dest_pairs, pl->nsend, pl->P.targets[e]), err = 0;
    for (long long k = 0; k < pl->P.nblocks[e] && !err; k++)
        err = iso__sched_msg_add(pl->s, m, (iso_piece){ISO_PIECE_USER,
                                                         pl->dest_pairs[2 * (first + k) + 1]});
    return err;
}

static int end_send(plan_t *pl, int m, int peer, int tag, size_t bytes)
{
    iso_op pack = {.kind = ISO_OP_PACK, .msg = m};
    iso_op send = {.kind = ISO_OP_SEND_MSG, .msg = m, .peer = peer, .tag = tag,
                   .nblocks = pl->s->msgs[m].n};
    int err = iso__sched_add(pl->s, &pack);
    if (!err && !(err = iso__sched_add(pl->s, &send)))
        err = iso__route_note_size(&pl->msgsize, &pl->msgsize_cap, m, bytes);
    return err;
}

/* Round 0: this process's stage-0 message to each of its partners, those
 * of the processes it is a partner of, and its blocks to itself. */
static int round0(plan_t *pl)
{
    pattern_t *P = &pl->P;
    int me = P->me, m, err = MPI_SUCCESS;
    size_t bytes;
    for (long long i = P->pstart[me]; i < P->pstart[me + 1] && !err; i++) {
        int p = P->partners[i], own = 0;
        m = -1;
        bytes = 0;
        for (long long e = P->start[me]; e < P->start[me + 1] && !err; e++)
            if (carrier(P, e) == p) {
                bytes += sizeof(int64_t) * (size_t)P->nblocks[e] + (size_t)P->bytes[e];
                own |= P->targets[e] == p;
                err = add_own_blocks(pl, e, &m);
            }
        pl->s->overhead_msgs += !own; /* nothing of its own for p: the thesis's overhead */
        if (!err && m >= 0)
            err = end_send(pl, m, p, 0, bytes);
    }
    for (int q = 0; q < P->K && !err; q++) {
        int entry = 0;
        if (q == me || !is_partner(P, q, me))
            continue;
        m = -1;
        bytes = 0;
        for (long long e = P->start[q]; e < P->start[q + 1] && !err; e++) {
            if (carrier(P, e) != me)
                continue;
            bytes += sizeof(int64_t) * (size_t)P->nblocks[e] + (size_t)P->bytes[e];
            for (long long k = 0; k < P->nblocks[e] && !err; k++)
                err = iso__sched_msg_add(pl->s, &m, (iso_piece){ISO_PIECE_SLOT, 0});
            pl->fwd[e] = (iso_piece){m, entry};
            entry += (int)P->nblocks[e];
        }
        if (err || m < 0)
            continue;
        iso_op recv = {.kind = ISO_OP_RECV_MSG, .msg = m, .peer = q, .tag = 0};
        if ((err = iso__sched_add(pl->s, &recv)) ||
            (err = iso__route_note_size(&pl->msgsize, &pl->msgsize_cap, m, bytes)))
            break;
        for (long long e = P->start[q]; e < P->start[q + 1] && !err; e++)
            if (carrier(P, e) == me && P->targets[e] == me)
                for (long long k = 0; k < P->nblocks[e] && !err; k++)
                    err = deliver(pl, q, k, (iso_piece){m, pl->fwd[e].index + (int)k});
    }
    /* blocks to itself: dest_pairs holds them in edge order */
    if (!err) {
        int first = iso__route_first_of(pl->dest_pairs, pl->nsend, me);
        for (int k = first; k < pl->nsend && pl->dest_pairs[2 * k] == me && !err; k++)
            err = deliver(pl, me, k - first, (iso_piece){ISO_PIECE_USER, pl->dest_pairs[2 * k + 1]});
    }
    return err ? err : iso__sched_end_round(pl->s);
}

/* A message (an index into the pattern) with its sort key: messages are
 * grouped by key (target or sender), sources ascending within a group. */
typedef struct {
    int key, src;
    long long e;
} keyed;

static int cmp_keyed(const void *x, const void *y)
{
    const keyed *a = x, *b = y;
    if (a->key != b->key)
        return (a->key > b->key) - (a->key < b->key);
    if (a->src != b->src)
        return (a->src > b->src) - (a->src < b->src);
    return (a->e > b->e) - (a->e < b->e);
}

/* Round 1: one message per target from what this process sends or
 * forwards, and one per sender of what comes to it. */
static int round1(plan_t *pl)
{
    pattern_t *P = &pl->P;
    int me = P->me, err = MPI_SUCCESS;
    long long n = 0;
    keyed *list = malloc(sizeof *list * ((size_t)P->E + 1));
    if (list == NULL)
        return iso__error(ISO_ERR_NOMEM);
    /* sends: own messages and those of the processes this one is partner of */
    for (long long e = 0; e < P->E; e++)
        if (in_stage1(P, e) && P->sender[e] == me)
            list[n++] = (keyed){P->targets[e], P->src[e], e};
    qsort(list, (size_t)n, sizeof *list, cmp_keyed);
    for (long long i = 0; i < n && !err;) {
        int t = list[i].key, m = -1;
        size_t bytes = 0;
        for (; i < n && list[i].key == t && !err; i++) {
            long long e = list[i].e;
            bytes += sizeof(int64_t) * (size_t)P->nblocks[e] + (size_t)P->bytes[e];
            if (P->src[e] == me)
                err = add_own_blocks(pl, e, &m);
            else
                for (long long k = 0; k < P->nblocks[e] && !err; k++)
                    err = iso__sched_msg_add(pl->s, &m, (iso_piece){pl->fwd[e].msg,
                                                                     pl->fwd[e].index + (int)k});
        }
        if (!err)
            err = end_send(pl, m, t, 1, bytes);
    }
    /* receives: the messages for this process, by sender, then source */
    n = 0;
    for (long long e = 0; e < P->E; e++)
        if (P->targets[e] == me && in_stage1(P, e))
            list[n++] = (keyed){P->sender[e], P->src[e], e};
    qsort(list, (size_t)n, sizeof *list, cmp_keyed);
    for (long long i = 0; i < n && !err;) {
        int s = list[i].key, m = -1, entry = 0;
        long long from = i;
        size_t bytes = 0;
        for (; i < n && list[i].key == s && !err; i++) {
            long long e = list[i].e;
            bytes += sizeof(int64_t) * (size_t)P->nblocks[e] + (size_t)P->bytes[e];
            for (long long k = 0; k < P->nblocks[e] && !err; k++)
                err = iso__sched_msg_add(pl->s, &m, (iso_piece){ISO_PIECE_SLOT, 0});
        }
        if (err)
            break;
        iso_op recv = {.kind = ISO_OP_RECV_MSG, .msg = m, .peer = s, .tag = 1};
        if ((err = iso__sched_add(pl->s, &recv)) ||
            (err = iso__route_note_size(&pl->msgsize, &pl->msgsize_cap, m, bytes)))
            break;
        for (long long j = from; j < i && !err; j++)
            for (long long k = 0; k < P->nblocks[list[j].e] && !err; k++)
                err = deliver(pl, list[j].src, k, (iso_piece){m, entry++});
    }
    free(list);
    return err ? err : iso__sched_end_round(pl->s);
}

/* Sources unknown (the SDDE): the slots are the arrivals, in ascending
 * source order, this process's block to itself among them. */
static int arrivals(plan_t *pl, const iso_args *a, iso_route_plan *out, int **sources)
{
    pattern_t *P = &pl->P;
    int n = 0, self = -1;
    for (int i = 0; i < pl->nsend; i++)
        if (pl->dests[i] == P->me)
            self = i;
    for (long long e = 0; e < P->E; e++)
        n += P->targets[e] == P->me;
    n += self >= 0;
    out->arrived = malloc(sizeof *out->arrived * ((size_t)n + 1));
    *sources = malloc(sizeof(int) * ((size_t)n + 1));
    if (!out->arrived || !*sources)
        return iso__error(ISO_ERR_NOMEM);
    n = 0;
    for (int q = 0; q < P->K; q++) {
        long long bytes = -1;
        if (q == P->me && self >= 0)
            bytes = iso__route_send_bytes(a, self);
        for (long long e = P->start[q]; e < P->start[q + 1] && q != P->me; e++)
            if (P->targets[e] == P->me) {
                if (P->nblocks[e] != 1)
                    return iso__error_msg(ISO_ERR_INTERN, "sharing: repeated destinations in "
                                                          "an SDDE");
                bytes = P->bytes[e];
            }
        if (bytes < 0)
            continue;
        if (bytes > INT_MAX)
            return iso__error_msg(ISO_ERR_COUNT, "sharing: a message of %lld bytes", bytes);
        out->arrived[n] = (iso_route_arrival){q, (int)bytes};
        (*sources)[n++] = q;
    }
    out->narrived = n;
    pl->nrecv = n;
    return MPI_SUCCESS;
}

int iso__sharing_route_plan(iso_priv *priv, int rank, int size, int nsend, const int *dests,
                            int nrecv, const int *sources, const iso_args *a,
                            iso_route_plan *out)
{
    plan_t pl;
    int *own_sources = NULL, err, maxn = 0;
    long long hops;
    memset(&pl, 0, sizeof pl);
    memset(out, 0, sizeof *out);
    pl.P.K = size;
    pl.P.me = rank;
    pl.nsend = nsend;
    pl.dests = dests;
    pl.nrecv = nrecv;
    pl.dest_pairs = iso__route_sorted_pairs(dests, nsend);
    err = pl.dest_pairs == NULL ? iso__error(ISO_ERR_NOMEM) : MPI_SUCCESS;
    if (root_plans(size))
        err = plan_at_root(&pl, priv->comm, a, err);
    else if ((err = gather_pattern_at(&pl, priv->comm, a, -1, err)) == MPI_SUCCESS)
        err = run_planner(&pl.P);
    if (err != MPI_SUCCESS)
        goto fn_exit;
    if (sources == NULL && (err = arrivals(&pl, a, out, &own_sources)) != MPI_SUCCESS)
        goto fn_exit;
    if (sources == NULL)
        sources = own_sources;
    if (!(pl.src_pairs = iso__route_sorted_pairs(sources, pl.nrecv)) ||
        !(pl.filled = calloc((size_t)pl.nrecv + 1, 1)) ||
        !(pl.fwd = calloc((size_t)pl.P.E + 1, sizeof *pl.fwd))) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    if ((err = iso__sched_new(&pl.s)) || (err = round0(&pl)) || (err = round1(&pl)))
        goto fn_exit;
    for (int j = 0; j < pl.nrecv; j++)
        if (!pl.filled[j]) {
            err = iso__error_msg(ISO_ERR_INTERN, "sharing: receive slot %d gets no block", j);
            goto fn_exit;
        }
    for (int m = 0; m < pl.s->nmsgs; m++)
        maxn = pl.s->msgs[m].n > maxn ? pl.s->msgs[m].n : maxn;
    pl.s->ntags = 2;
    pl.s->struct_phases = 2;
    pl.s->struct_max_entries = maxn;
    iso__sched_stats(pl.s, &maxn, &pl.s->struct_msgs, &hops);
    pl.s->struct_hops = (int)hops;
    out->sched = pl.s;
    out->msgsize = pl.msgsize;
    pl.s = NULL;
    pl.msgsize = NULL;
fn_exit:
    if (err != MPI_SUCCESS) {
        free(out->arrived);
        memset(out, 0, sizeof *out);
    }
    iso__sched_release(pl.s);
    free(pl.msgsize);
    free(pl.dest_pairs);
    free(pl.src_pairs);
    free(pl.filled);
    free(pl.fwd);
    free(own_sources);
    pattern_free(&pl.P);
    return err;
}

/* ---- what auto needs ------------------------------------------------------------ */

static int cmp_ll(const void *x, const void *y)
{
    long long a = *(const long long *)x, b = *(const long long *)y;
    return (a > b) - (a < b);
}

/* recv[q] += the messages process q receives under the plan: one stage-0
 * message from each source whose messages it forwards, one stage-1 message
 * from each distinct sender to it.  Each message is a key (receiver,
 * sending process, stage), sorted and counted once. */
static int count_receives(const pattern_t *P, const int *sender, long long *recv)
{
    long long n = 0, *keys = malloc(sizeof *keys * 2 * ((size_t)P->E + 1));
    if (keys == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (long long e = 0; e < P->E; e++) {
        if (sender[e] != P->src[e])
            keys[n++] = (((long long)sender[e] * P->K + P->src[e]) << 1);
        keys[n++] = (((long long)P->targets[e] * P->K + sender[e]) << 1) | 1;
    }
    qsort(keys, (size_t)n, sizeof *keys, cmp_ll);
    for (long long i = 0; i < n; i++)
        if (i == 0 || keys[i] != keys[i - 1])
            recv[(keys[i] >> 1) / P->K]++;
    free(keys);
    return MPI_SUCCESS;
}

/* The figures auto weighs, from the whole pattern P. */
static int figures_of(const pattern_t *P, long long *mmax, long long *blocks)
{
    iso_pattern pat = {P->K, P->start, P->targets, NULL};
    iso_sharing sh;
    int err;
    long long *sent = calloc((size_t)P->K * 2 + 1, sizeof *sent), *recv = sent + P->K;
    memset(&sh, 0, sizeof sh);
    if (sent == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = iso__sharing_plan(&pat, &sh)) != MPI_SUCCESS) {
        free(sent);
        iso__sharing_free(&sh);
        return iso__error_msg(ISO_ERR_INTERN, "sharing: the planner failed on a gathered "
                                              "pattern (MPI class %d)", err);
    }
    /* blocks a process sends: its own once (to a partner or to the
     * target), and those it forwards */
    for (long long e = 0; e < P->E; e++) {
        sent[P->src[e]] += P->nblocks[e];
        if (sh.sender[e] != P->src[e])
            sent[sh.sender[e]] += P->nblocks[e];
    }
    for (int q = 0; q < P->K; q++)
        *blocks = sent[q] > *blocks ? sent[q] : *blocks;
    /* messages: the planner balances what processes send (sh.load),
     * but a process also pays for what it receives, and forwarding
     * adds receives (stage 0) that direct does not have: the busiest
     * process by (sends + receives) / 2, which for direct on a
     * symmetric pattern is its degree, as direct's cost counts it */
    if ((err = count_receives(P, sh.sender, recv)) == MPI_SUCCESS)
        for (int q = 0; q < P->K; q++) {
            long long m = (sh.load[q] + recv[q] + 1) / 2;
            *mmax = m > *mmax ? m : *mmax;
        }
    free(sent);
    iso__sharing_free(&sh);
    return err;
}

int iso__sharing_figures(iso_priv *priv, int rank, int size, int nsend, const int *dests,
                         long long *mmax, long long *blocks)
{
    plan_t pl;
    int err, root = root_plans(size) ? 0 : -1;
    memset(&pl, 0, sizeof pl);
    pl.P.K = size;
    pl.P.me = rank;
    pl.nsend = nsend;
    pl.dests = dests;
    *mmax = *blocks = 0;
    pl.dest_pairs = iso__route_sorted_pairs(dests, nsend);
    err = pl.dest_pairs == NULL ? iso__error(ISO_ERR_NOMEM) : MPI_SUCCESS;
    if ((err = gather_pattern_at(&pl, priv->comm, NULL, root, err)) != MPI_SUCCESS)
        goto fn_exit;
    {   /* the figures (the same on every process that has the pattern; 0
         * elsewhere, so the maximum), or an error, to every process */
        iso_agreement ag = {.nmax = 2};
        if (root < 0 || rank == root)
            err = figures_of(&pl.P, &ag.max[0], &ag.max[1]);
        if ((err = iso__agree(priv->comm, err, &ag)) == MPI_SUCCESS) {
            *mmax = ag.max[0];
            *blocks = ag.max[1];
        }
    }
fn_exit:
    free(pl.dest_pairs);
    pattern_free(&pl.P);
    return err;
}
