/* vpt for the SDDE: store-and-forward over a virtual process topology
 * with the submessages' headers travelling with their data.  Stage s
 * (one per dimension of size k > 1) sends every line neighbour one bundle
 * (exchange.c; possibly empty) of the submessages whose destination's
 * coordinate in that dimension is the neighbour's: the process's own
 * messages and those forwarded to it in earlier stages.  A bundle's last
 * chunk ends with an end mark that says how many chunks it has, so every
 * process knows when a stage is complete without a discovery: it expects
 * one bundle from each of its k - 1 line neighbours.  One round of
 * messages per stage, as in the VPT paper, and nothing before them (the
 * plan of route/ would add a header exchange per stage and an agreement:
 * five dependent steps where a two-stage VPT needs two, each a time slice
 * on an oversubscribed machine).
 *
 * All stages use one tag, received from any source: a neighbour differs
 * from this process in exactly one coordinate, so a message's source tells
 * its stage, and a message of a later stage that arrives early is handled
 * like any other (its submessages go to later stages' bundles or are
 * delivered).  Received chunks stay in one buffer (the exchange's inbox),
 * which becomes the result: submessages for this process are found there
 * by offset, messages to oneself are packed into it first. */
#include "sparse/sparse.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    iso_sdde_req base;
    const iso_sdde_call *c;
    iso_vpt *v;
    int nstages, dim[ISO_VPT_MAXDIMS]; /* the dimensions of size > 1 */
    int stage;                         /* next to send; nstages: all sent */
    int rank, p;                       /* in and of c->priv->comm (submessage origins) */
    iso_bundle *bundles;               /* [first[s] + coordinate] */
    int first[ISO_VPT_MAXDIMS + 1];
    int *expected, *arrived;           /* chunks per source VPT rank (-1: not known) */
    MPI_Request *sends;
    int nsends, sends_cap;
    iso_xchg x;                        /* the received chunks; x.in.n parsed so far: parsed */
    int parsed;
    iso_inbox result;
    int err_own; /* a message of this process that could not be sent (it still forwards) */
} fwd_req;

/* The end mark: origin -1, dest the number of chunks of the bundle. */
#define END_MARK (-1)

static int vrank(const iso_vpt *v, int r)
{
    return v->vrank ? v->vrank[r] : r;
}

static int coord(const fwd_req *r, int d, int vr)
{
    return iso__vpt_coord(r->v->n, r->v->dims, d, vr);
}

/* The first stage from s on where the VPT rank vdest differs from this
 * process's coordinate, and the bundle for it; NULL if vdest is here. */
static iso_bundle *bundle_for(fwd_req *r, int s, int vdest)
{
    for (; s < r->nstages; s++) {
        int d = r->dim[s], j = coord(r, d, vdest);
        if (j != coord(r, d, r->v->me))
            return &r->bundles[r->first[s] + j];
    }
    return NULL;
}

/* The stage whose line neighbour the VPT rank q is (-1 if none). */
static int stage_of(const fwd_req *r, int q)
{
    for (int s = 0; s < r->nstages; s++)
        if (coord(r, r->dim[s], q) != coord(r, r->dim[s], r->v->me))
            return s;
    return -1;
}

/* Parses the chunks received since the last call: a submessage for this
 * process is a result, another is copied to the bundle of the next stage
 * it moves in, an end mark tells how many chunks its source sends. */
static int parse_arrived(fwd_req *r)
{
    int err = MPI_SUCCESS;
    for (; r->parsed < r->x.in.n && !err; r->parsed++) {
        const iso_inmsg *m = &r->x.in.msgs[r->parsed];
        int q = m->source, s = stage_of(r, q), pos = 0;
        if (s < 0)
            return iso__error_msg(ISO_ERR_INTERN, "vpt: a bundle from %d, no line neighbour", q);
        r->arrived[q]++;
        while (pos < m->bytes && !err) {
            int origin, dest, bytes, data;
            const char *buf = r->x.in.data + m->off;
            iso_bundle *b;
            if ((err = iso__bundle_next(buf, m->bytes, &pos, &origin, &dest, &bytes, &data)))
                break;
            if (origin == END_MARK)
                r->expected[q] = dest;
            else if (dest < 0 || dest >= r->p)
                err = iso__error_msg(ISO_ERR_INTERN, "vpt: a submessage for rank %d", dest);
            else if ((b = bundle_for(r, s + 1, vrank(r->v, dest))) == NULL)
                err = iso__inbox_add(&r->result, origin, bytes, m->off + (size_t)data);
            else
                err = iso__bundle_copy(b, origin, dest, buf + data, bytes);
        }
    }
    return err;
}

/* Posts stage s: each line neighbour's bundle, closed by the end mark
 * (MPI_Isend of each chunk's bytes). */
static int send_stage(fwd_req *r, int s)
{
    int d = r->dim[s], k = r->v->dims[d], me = r->v->me, c = coord(r, d, me);
    int stride = iso__vpt_stride(r->v->n, r->v->dims, d), err = MPI_SUCCESS;
    MPI_Comm comm = r->v->priv->comm;
    for (int j = 0; j < k && !err; j++) {
        iso_bundle *b = &r->bundles[r->first[s] + j];
        iso_chunk *last;
        int h[3];
        char none = 0;
        if (j == c)
            continue;
        if ((err = iso__bundle_copy(b, END_MARK, 0, &none, 0)) != MPI_SUCCESS ||
            (err = iso__grow(&r->sends, &r->sends_cap, r->nsends + b->n, sizeof *r->sends)))
            break;
        last = &b->chunks[b->n - 1]; /* the mark's count: the chunks, its own included */
        memcpy(h, last->buf + last->len - ISO_SUB_HDR, sizeof h);
        h[1] = b->n;
        memcpy(last->buf + last->len - ISO_SUB_HDR, h, sizeof h);
        for (int k2 = 0; k2 < b->n && !err; k2++)
            if ((err = MPI_Isend(b->chunks[k2].buf, b->chunks[k2].len, MPI_PACKED,
                                 me + (j - c) * stride, r->x.tag, comm,
                                 &r->sends[r->nsends])) == MPI_SUCCESS)
                r->nsends++;
    }
    return err;
}

/* Have all chunks of stage s arrived? */
static int stage_complete(const fwd_req *r, int s)
{
    int d = r->dim[s], k = r->v->dims[d], me = r->v->me, c = coord(r, d, me);
    int stride = iso__vpt_stride(r->v->n, r->v->dims, d);
    for (int j = 0; j < k; j++) {
        int q = me + (j - c) * stride;
        if (j != c && (r->expected[q] < 0 || r->arrived[q] < r->expected[q]))
            return 0;
    }
    return 1;
}

/* Receives and forwards until every stage is sent and complete and the
 * sends are done (*done), or, without block, until nothing more can
 * happen now. */
static int advance(fwd_req *r, int block, int *done)
{
    int got, err;
    *done = 0;
    for (;;) {
        if ((err = parse_arrived(r)) != MPI_SUCCESS)
            return err;
        if (r->stage > 0 && !stage_complete(r, r->stage - 1)) {
            if ((err = iso__xchg_receive(&r->x, block, &got)) != MPI_SUCCESS)
                return err;
            if (!got)
                return MPI_SUCCESS;
            continue;
        }
        if (r->stage == r->nstages)
            break;
        if ((err = send_stage(r, r->stage++)) != MPI_SUCCESS)
            return err;
    }
    return iso__requests_done(r->nsends, r->sends, block, done);
}

static void fwd_progress(struct iso_request_s *req, int block)
{
    fwd_req *r = (fwd_req *)req;
    int done = 0, err = advance(r, block, &done);
    if (err == MPI_SUCCESS && done)
        err = r->err_own;
    if (err != MPI_SUCCESS || done) {
        r->result.ext = r->x.in.data; /* complete: the buffer grows no more */
        r->base.result = &r->result;
        iso__request_complete(req, err);
    }
}

/* A message with data at address 0: what MPI's own sends refuse as
 * MPI_ERR_BUFFER (a NULL buffer with nonzero counts); packing it would
 * crash.  A null buffer with absolute addresses in the displacements or
 * the type (MPI_BOTTOM) is fine. */
static int check_buffer(const iso_sdde_call *c, int i)
{
    MPI_Aint lb, extent, first = c->displs ? (MPI_Aint)c->displs[i] : (MPI_Aint)i * c->count;
    if (c->buf != NULL || iso__sdde_count(c, i) == 0 || c->size == 0 ||
        MPI_Type_get_true_extent(c->type, &lb, &extent) != MPI_SUCCESS ||
        first * c->extent + lb != 0)
        return MPI_SUCCESS;
    return MPI_ERR_BUFFER;
}

/* Messages to oneself are packed into the receive buffer; every other
 * goes to the bundle of the first stage it moves in; then stage 0 is
 * sent.  A message that cannot be packed is left out and its error kept
 * for the end: the stages still run, so that no other process waits for
 * this one's bundles. */
static int fwd_start(struct iso_request_s *req)
{
    fwd_req *r = (fwd_req *)req;
    const iso_sdde_call *c = r->c;
    int err = MPI_SUCCESS;
    for (int i = 0; i < c->n && !err && !r->err_own; i++) {
        int count = iso__sdde_count(c, i), bytes = count * c->size, pos = 0;
        iso_bundle *b = bundle_for(r, 0, vrank(r->v, c->dest[i]));
        void *buf = r->x.in.data;
        if ((r->err_own = check_buffer(c, i)) != MPI_SUCCESS)
            break;
        if (b != NULL) {
            r->err_own = iso__bundle_pack(b, r->rank, c->dest[i], iso__sdde_data(c, i), count,
                                          c->type, bytes, c->priv->comm);
            continue;
        }
        if ((err = iso__reserve(&buf, &r->x.in.datacap, r->x.in.len + (size_t)bytes + 1)))
            break;
        r->x.in.data = buf;
        pos = (int)r->x.in.len;
        if ((r->err_own = iso__pack(iso__sdde_data(c, i), count, c->type, r->x.in.data,
                                    (int)r->x.in.len + bytes, &pos, c->priv->comm)) ==
                MPI_SUCCESS &&
            (err = iso__inbox_add(&r->result, r->rank, bytes, r->x.in.len)) == MPI_SUCCESS)
            r->x.in.len += (size_t)bytes;
    }
    if (err == MPI_SUCCESS && r->nstages > 0)
        err = send_stage(r, r->stage++);
    return err;
}

static void fwd_destroy(struct iso_request_s *req)
{
    fwd_req *r = (fwd_req *)req;
    int sending = 0;
    for (int i = 0; i < r->nsends; i++) /* after an error: they complete on their own */
        if (r->sends[i] != MPI_REQUEST_NULL) {
            MPI_Request_free(&r->sends[i]);
            sending = 1;
        }
    /* a freed active send still reads its chunk: the bundles are then
     * left allocated (an error path only), as iso__xchg_free leaves tally */
    for (int b = 0; !sending && r->bundles && b < r->first[r->nstages]; b++)
        iso__bundle_free(&r->bundles[b]);
    if (!sending)
        free(r->bundles);
    free(r->sends);
    free(r->expected);
    r->result.ext = NULL;
    iso__inbox_free(&r->result);
    iso__xchg_free(&r->x);
    free(r);
}

static const iso_request_kind fwd_kind = {fwd_start, fwd_progress, fwd_destroy};

static int forward(const iso_sdde_call *c, MPI_Comm comm, int n, int dims[],
                   iso_sdde_req **out)
{
    fwd_req *r = calloc(1, sizeof *r);
    int err, p;
    *out = NULL;
    if (r == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->base.req, &fwd_kind, comm, 0);
    r->c = c;
    if ((err = MPI_Comm_size(c->priv->comm, &p)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(c->priv->comm, &r->rank)) != MPI_SUCCESS ||
        (err = iso__vpt_get(c->priv->comm, &c->vpt, n, dims, &r->v)) != MPI_SUCCESS)
        goto fn_fail;
    r->p = p;
    for (int d = 0; d < r->v->n; d++)
        if (r->v->dims[d] > 1) {
            r->first[r->nstages + 1] = r->first[r->nstages] + r->v->dims[d];
            r->dim[r->nstages++] = d;
        }
    /* the chunk counts by source (VPT ranks: those of the VPT's communicator) */
    r->bundles = calloc((size_t)r->first[r->nstages] + 1, sizeof *r->bundles);
    r->expected = malloc(sizeof(int) * 2 * (size_t)p);
    if (r->bundles == NULL || r->expected == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    r->arrived = r->expected + p;
    for (int q = 0; q < p; q++) {
        r->expected[q] = -1;
        r->arrived[q] = 0;
    }
    iso__xchg_init(&r->x, r->v->priv->comm, iso__tags_reserve(r->v->priv, 1));
    *out = &r->base;
    return MPI_SUCCESS;
fn_fail:
    fwd_destroy(&r->base.req);
    return err;
}

/* A VPT with at most one dimension of size > 1 is T_1 (the default n = 2
 * at 2 or a prime number of processes: T_2(p, 1)): its one stage sends
 * every message straight to its destination, which personalized does with
 * fewer bytes (no headers). */
static int vpt_is_direct(int n, const int dims[])
{
    int real = 0;
    for (int d = 0; d < n; d++)
        real += dims[d] > 1;
    return real <= 1;
}

int iso__sdde_vpt(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    int p, n, dims[ISO_VPT_MAXDIMS], err;
    *out = NULL;
    if ((err = MPI_Comm_size(c->priv->comm, &p)) != MPI_SUCCESS ||
        (err = iso__vpt_shape(&c->vpt, p, &n, dims)) != MPI_SUCCESS)
        return err;
    if (vpt_is_direct(n, dims))
        return iso__sdde_personalized(c, comm, out);
    return forward(c, comm, n, dims, out);
}
