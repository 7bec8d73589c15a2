/* What the SDDE algorithms share (DESIGN.md, "Sparse dynamic data
 * exchange"): the inbox of received messages, point-to-point exchanges
 * whose receives are found by probing, bundles of packed submessages for
 * the algorithms that forward through another process, and the request of
 * a single exchange (personalized, nbx). */
#include "sparse/sparse.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

/* Chunks close before this many bytes (t_sparse lowers it to cover the
 * splitting). */
int iso__sdde_chunk_limit = 1 << 30;

/* Makes *buf hold at least n bytes, growing by doubling (iso__reserve
 * grows to exactly n). */
static int reserve_doubling(char **buf, size_t *cap, size_t n)
{
    void *p = *buf;
    int err;
    if (n <= *cap)
        return MPI_SUCCESS;
    err = iso__reserve(&p, cap, n > 2 * *cap ? n : 2 * *cap);
    *buf = p;
    return err;
}

/* ---- inbox ------------------------------------------------------------------ */

int iso__inbox_add(iso_inbox *in, int source, int bytes, size_t off)
{
    int err = iso__grow(&in->msgs, &in->cap, in->n + 1, sizeof *in->msgs);
    if (err != MPI_SUCCESS)
        return err;
    in->msgs[in->n++] = (iso_inmsg){source, bytes, off};
    return MPI_SUCCESS;
}

void iso__inbox_free(iso_inbox *in)
{
    free(in->msgs);
    free(in->data);
    memset(in, 0, sizeof *in);
}

/* ---- exchanges ---------------------------------------------------------------- */

void iso__xchg_init(iso_xchg *x, MPI_Comm comm, int tag)
{
    memset(x, 0, sizeof *x);
    x->comm = comm;
    x->tag = tag;
    x->coll = MPI_REQUEST_NULL;
    x->limit = -1;
}

int iso__xchg_post(iso_xchg *x, int n, const iso_outmsg *msgs, int synchronous)
{
    int err = MPI_SUCCESS;
    if ((x->sends = malloc(sizeof(MPI_Request) * ((size_t)n + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int i = 0; i < n && err == MPI_SUCCESS; i++) {
        const iso_outmsg *m = &msgs[i];
        if (synchronous)
            err = MPI_Issend(m->buf, m->count, m->type, m->dest, x->tag, x->comm, &x->sends[i]);
        else
            err = MPI_Isend(m->buf, m->count, m->type, m->dest, x->tag, x->comm, &x->sends[i]);
        if (err == MPI_SUCCESS)
            x->nsends = i + 1;
    }
    return err;
}

/* Every message is received as MPI_PACKED (allowed whatever the type it
 * was sent with), into the inbox's data; MPI_Mrecv of a message already
 * matched by the probe does not wait for anything but its data. */
int iso__xchg_receive(iso_xchg *x, int block, int *got)
{
    *got = 0;
    for (;;) {
        MPI_Message msg;
        MPI_Status st;
        int flag = 1, bytes, err;
        if (x->limit >= 0 && x->in.n >= x->limit)
            return MPI_SUCCESS; /* all are here: no probe that can only fail */
        if (block && *got == 0)
            err = MPI_Mprobe(MPI_ANY_SOURCE, x->tag, x->comm, &msg, &st);
        else
            err = MPI_Improbe(MPI_ANY_SOURCE, x->tag, x->comm, &flag, &msg, &st);
        if (err != MPI_SUCCESS)
            return err;
        if (!flag)
            return MPI_SUCCESS;
        if ((err = MPI_Get_count(&st, MPI_BYTE, &bytes)) != MPI_SUCCESS)
            return err;
        if ((err = reserve_doubling(&x->in.data, &x->in.datacap, x->in.len + (size_t)bytes + 1)))
            return err;
        if ((err = MPI_Mrecv(x->in.data + x->in.len, bytes, MPI_PACKED, &msg,
                             MPI_STATUS_IGNORE)) != MPI_SUCCESS ||
            (err = iso__inbox_add(&x->in, st.MPI_SOURCE, bytes, x->in.len)) != MPI_SUCCESS)
            return err;
        x->in.len += (size_t)bytes;
        (*got)++;
    }
}

int iso__requests_done(int n, MPI_Request *reqs, int block, int *done)
{
    *done = 1;
    if (n == 0)
        return MPI_SUCCESS;
/* MPICH's access attributes make gcc flag MPI_STATUSES_IGNORE (NULL). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
    if (block)
        return MPI_Waitall(n, reqs, MPI_STATUSES_IGNORE);
    return MPI_Testall(n, reqs, done, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
}

int iso__xchg_sends_done(iso_xchg *x, int block, int *done)
{
    return iso__requests_done(x->nsends, x->sends, block, done);
}

void iso__xchg_free(iso_xchg *x)
{
    int sending = 0;
    for (int i = 0; i < x->nsends; i++)
        if (x->sends[i] != MPI_REQUEST_NULL)
            MPI_Request_free(&x->sends[i]);
    /* count messages still active after an error: the receives are
     * cancelled and completed (their buffer is freed below); a send is
     * freed active and completes on its own, from tally, which is then
     * left allocated */
    for (int i = 0; i < x->ncounts; i++) {
        if (x->counts[i] == MPI_REQUEST_NULL)
            continue;
        if (i < x->ncounts / 2) {
            MPI_Cancel(&x->counts[i]);
            MPI_Wait(&x->counts[i], MPI_STATUS_IGNORE);
        } else {
            MPI_Request_free(&x->counts[i]);
            sending = 1;
        }
    }
    free(x->counts);
    free(x->sends);
    if (!sending)
        free(x->tally);
    x->counts = NULL;
    x->ncounts = 0;
    iso__inbox_free(&x->in);
    x->sends = NULL;
    x->tally = NULL;
    x->nsends = 0;
}

/* ---- bundles -------------------------------------------------------------------- */

/* The chunk a submessage of bytes goes into: the last one, or a new one if
 * it would pass the limit. */
static int chunk_for(iso_bundle *b, int bytes, iso_chunk **out)
{
    long long need = (long long)ISO_SUB_HDR + bytes;
    int err;
    if (b->n == 0 || (b->chunks[b->n - 1].len > 0 &&
                      b->chunks[b->n - 1].len + need > (long long)iso__sdde_chunk_limit)) {
        if ((err = iso__grow(&b->chunks, &b->cap, b->n + 1, sizeof *b->chunks)) != MPI_SUCCESS)
            return err;
        b->chunks[b->n++] = (iso_chunk){NULL, 0, 0};
    }
    *out = &b->chunks[b->n - 1];
    if ((*out)->len + need > INT_MAX)
        return iso__error_msg(ISO_ERR_COUNT, "an aggregated message would pass INT_MAX bytes");
    return reserve_doubling(&(*out)->buf, &(*out)->cap, (size_t)((*out)->len + need));
}

static void put_header(iso_chunk *ch, int origin, int dest, int bytes)
{
    int h[3] = {origin, dest, bytes};
    memcpy(ch->buf + ch->len, h, sizeof h);
    ch->len += ISO_SUB_HDR;
}

int iso__bundle_pack(iso_bundle *b, int origin, int dest, const void *data, int count,
                     MPI_Datatype type, int bytes, MPI_Comm comm)
{
    iso_chunk *ch;
    int pos, err = chunk_for(b, bytes, &ch);
    if (err != MPI_SUCCESS)
        return err;
    put_header(ch, origin, dest, bytes);
    pos = ch->len;
    err = iso__pack(data, count, type, ch->buf, ch->len + bytes, &pos, comm);
    /* packed data is the type signature's bytes (a homogeneous system) */
    if (err == MPI_SUCCESS && pos != ch->len + bytes)
        err = iso__error(ISO_ERR_INTERN);
    if (err != MPI_SUCCESS) { /* no header without its data: the bundle stays well formed */
        ch->len -= ISO_SUB_HDR;
        return err;
    }
    ch->len = pos;
    return MPI_SUCCESS;
}

int iso__bundle_copy(iso_bundle *b, int origin, int dest, const char *data, int bytes)
{
    iso_chunk *ch;
    int err = chunk_for(b, bytes, &ch);
    if (err != MPI_SUCCESS)
        return err;
    put_header(ch, origin, dest, bytes);
    memcpy(ch->buf + ch->len, data, (size_t)bytes);
    ch->len += bytes;
    return MPI_SUCCESS;
}

int iso__bundle_next(const char *buf, int len, int *pos, int *origin, int *dest, int *bytes,
                     int *data)
{
    int h[3];
    if (len - *pos < ISO_SUB_HDR)
        return iso__error(ISO_ERR_INTERN);
    memcpy(h, buf + *pos, sizeof h);
    if (h[2] < 0 || h[2] > len - *pos - ISO_SUB_HDR)
        return iso__error(ISO_ERR_INTERN);
    *origin = h[0];
    *dest = h[1];
    *bytes = h[2];
    *data = *pos + ISO_SUB_HDR;
    *pos = *data + h[2];
    return MPI_SUCCESS;
}

void iso__bundle_free(iso_bundle *b)
{
    for (int k = 0; k < b->n; k++)
        free(b->chunks[k].buf);
    free(b->chunks);
    b->chunks = NULL;
    b->n = b->cap = 0;
}

/* ---- the request of one exchange, straight to the destinations ----------------- */

typedef struct {
    iso_sdde_req base;
    const iso_discovery *disc;
    iso_xchg x;
    iso_outmsg *msgs;
    int n;
} direct_req;

static int direct_start(struct iso_request_s *req)
{
    direct_req *r = (direct_req *)req;
    return r->disc->begin(&r->x, r->n, r->msgs);
}

static void direct_progress(struct iso_request_s *req, int block)
{
    direct_req *r = (direct_req *)req;
    int done = 0, err = r->disc->step(&r->x, block, &done);
    if (err != MPI_SUCCESS || done) {
        r->base.result = &r->x.in;
        iso__request_complete(req, err);
    }
}

static void direct_destroy(struct iso_request_s *req)
{
    direct_req *r = (direct_req *)req;
    iso__xchg_free(&r->x);
    free(r->msgs);
    free(r);
}

static const iso_request_kind direct_kind = {direct_start, direct_progress, direct_destroy};

int iso__sdde_direct(const iso_sdde_call *c, MPI_Comm comm, const iso_discovery *d,
                     iso_sdde_req **out)
{
    direct_req *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL || (r->msgs = malloc(sizeof *r->msgs * ((size_t)c->n + 1))) == NULL) {
        free(r);
        return iso__error(ISO_ERR_NOMEM);
    }
    iso__request_init(&r->base.req, &direct_kind, comm, 0);
    iso__xchg_init(&r->x, c->priv->comm, c->tag);
    r->x.one_node = c->loc->nnodes == 1 && c->loc->level == ISO_LEVEL_NODE;
    r->disc = d;
    r->n = c->n;
    for (int i = 0; i < c->n; i++) /* the user's data with the user's type */
        r->msgs[i] = (iso_outmsg){c->dest[i], iso__sdde_data(c, i), iso__sdde_count(c, i),
                                  c->type};
    *out = &r->base;
    return MPI_SUCCESS;
}
