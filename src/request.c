/* The one executor: post a round's sends and receives, complete them, run
 * its local copies and reductions, post the next round.  Blocking calls are
 * start + wait, nonblocking calls start + test/wait, persistent calls bind
 * once and start many times.  Every wait or test progresses all active
 * requests, so operations completed in different orders on different
 * processes cannot deadlock. */
#include "iso_internal.h"
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static struct iso_request_s *active_head;

static void list_add(struct iso_request_s *r)
{
    r->prev = NULL;
    r->next = active_head;
    if (active_head)
        active_head->prev = r;
    active_head = r;
}

static void list_remove(struct iso_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (active_head == r)
        active_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

static void *addr(const struct iso_request_s *r, const iso_loc *l)
{
    return (char *)r->base[l->buf] + l->disp;
}

/* Copies count x type between two places whose type signatures match. */
static int local_copy(const void *src, int scount, MPI_Datatype stype, void *dst, int dcount,
                      MPI_Datatype dtype)
{
    int size, pos = 0, err;
    MPI_Aint lb, extent;
    void *tmp;
    if (stype == dtype && scount == dcount && MPI_Type_size(stype, &size) == MPI_SUCCESS &&
        MPI_Type_get_true_extent(stype, &lb, &extent) == MPI_SUCCESS && lb == 0 &&
        extent == size) {
        MPI_Aint ext;
        MPI_Type_get_extent(stype, &lb, &ext);
        if (ext == size) { /* contiguous: one memmove */
            memmove(dst, src, (size_t)size * (size_t)scount);
            return MPI_SUCCESS;
        }
    }
    if ((err = MPI_Pack_size(scount, stype, MPI_COMM_SELF, &size)) != MPI_SUCCESS)
        return err;
    if ((tmp = malloc((size_t)size + 1)) == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    err = MPI_Pack(src, scount, stype, tmp, size, &pos, MPI_COMM_SELF);
    if (err == MPI_SUCCESS) {
        pos = 0;
        err = MPI_Unpack(tmp, size, &pos, dst, dcount, dtype, MPI_COMM_SELF);
    }
    free(tmp);
    return err;
}

static int round_first(const iso_sched *s, int round)
{
    return round ? s->round_end[round - 1] : 0;
}

static int post_round(struct iso_request_s *r)
{
    const iso_sched *s = &r->sched;
    MPI_Comm comm = r->state->priv;
    int err = MPI_SUCCESS;
    r->nreqs = 0;
    for (int k = round_first(s, r->round); k < s->round_end[r->round] && !err; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind == ISO_OP_SEND)
            err = MPI_Isend(addr(r, &op->a), op->a.count, op->a.type, op->peer,
                            r->tagbase + op->tag, comm, &r->reqs[r->nreqs++]);
        else if (op->kind == ISO_OP_RECV)
            err = MPI_Irecv(addr(r, &op->a), op->a.count, op->a.type, op->peer,
                            r->tagbase + op->tag, comm, &r->reqs[r->nreqs++]);
    }
    return err;
}

static int finish_round(struct iso_request_s *r)
{
    const iso_sched *s = &r->sched;
    int err = MPI_SUCCESS;
    for (int k = round_first(s, r->round); k < s->round_end[r->round] && !err; k++) {
        const iso_op *op = &s->ops[k];
        if (op->kind == ISO_OP_COPY)
            err = local_copy(addr(r, &op->a), op->a.count, op->a.type, addr(r, &op->b),
                             op->b.count, op->b.type);
        else if (op->kind == ISO_OP_REDUCE)
            err = MPI_Reduce_local(addr(r, &op->a), addr(r, &op->b), op->b.count, op->b.type,
                                   op->op);
    }
    return err;
}

static void complete(struct iso_request_s *r, int err)
{
    r->active = 0;
    r->err = err;
    r->nreqs = 0;
    list_remove(r);
}

/* Advances r as far as possible; with block, until it completes. */
static void progress(struct iso_request_s *r, int block)
{
    int err = MPI_SUCCESS, flag = 1;
    while (r->active) {
        if (r->nreqs) {
/* MPICH's access attributes make gcc flag MPI_STATUSES_IGNORE (NULL). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
            err = block ? MPI_Waitall(r->nreqs, r->reqs, MPI_STATUSES_IGNORE)
                        : MPI_Testall(r->nreqs, r->reqs, &flag, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
            if (err != MPI_SUCCESS || !flag)
                break;
        }
        if ((err = finish_round(r)) != MPI_SUCCESS)
            break;
        if (++r->round == r->sched.nrounds) {
            complete(r, MPI_SUCCESS);
            return;
        }
        if ((err = post_round(r)) != MPI_SUCCESS)
            break;
    }
    if (err != MPI_SUCCESS)
        complete(r, err);
}

static void progress_all(void)
{
    for (struct iso_request_s *q = active_head, *next; q; q = next) {
        next = q->next;
        progress(q, 0);
    }
}

int iso__request_start(struct iso_request_s *r)
{
    r->round = 0;
    r->err = MPI_SUCCESS;
    r->active = 1;
    list_add(r);
    if (r->sched.nrounds == 0) {
        complete(r, MPI_SUCCESS);
        return MPI_SUCCESS;
    }
    if ((r->err = post_round(r)) != MPI_SUCCESS)
        complete(r, r->err);
    return r->err;
}

int iso__request_wait(struct iso_request_s *r)
{
    while (r->active) {
        if (active_head == r && r->next == NULL)
            progress(r, 1); /* alone: let MPI block */
        else
            progress_all();
    }
    return r->err;
}

int iso__request_create(iso_state *st, MPI_Comm comm, iso_sched *sched, const void *sendbuf,
                        void *recvbuf, int persistent, struct iso_request_s **out)
{
    struct iso_request_s *r = calloc(1, sizeof *r);
    *out = NULL;
    if (r == NULL)
        return iso__errclass(ISO_ERR_NOMEM);
    r->sched = *sched; /* takes ownership */
    iso__sched_init(sched);
    r->reqs = malloc(sizeof(MPI_Request) * (size_t)(r->sched.max_comm + 1));
    r->scratch_mem = malloc(r->sched.scratch_bytes + 1);
    if (r->reqs == NULL || r->scratch_mem == NULL) {
        iso__request_destroy(r);
        return iso__errclass(ISO_ERR_NOMEM);
    }
    r->base[ISO_BUF_SEND] = (void *)(uintptr_t)sendbuf;
    r->base[ISO_BUF_RECV] = recvbuf;
    r->base[ISO_BUF_SCRATCH] = r->scratch_mem;
    r->state = st;
    st->refs++;
    r->comm = comm;
    r->persistent = persistent;
    r->tagbase = iso__tags_reserve(st, r->sched.ntags);
    *out = r;
    return MPI_SUCCESS;
}

void iso__request_destroy(struct iso_request_s *r)
{
    if (r == NULL)
        return;
    if (r->active)
        list_remove(r);
    iso__sched_destroy(&r->sched);
    free(r->reqs);
    free(r->scratch_mem);
    iso__state_release(r->state);
    free(r);
}

/* ---- public -------------------------------------------------------------- */

static MPI_Comm req_comm(const Iso_request *request)
{
    return (request && *request) ? (*request)->comm : MPI_COMM_WORLD;
}

int Iso_start(Iso_request *request)
{
    struct iso_request_s *r;
    if (request == NULL || *request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    r = *request;
    if (!r->persistent || r->active)
        return iso__fail(r->comm, ISO_ERR_REQUEST);
    return iso__raise(r->comm, iso__request_start(r));
}

/* After completion: a nonblocking request is freed, a persistent one stays. */
static int retire(Iso_request *request)
{
    struct iso_request_s *r = *request;
    int err = r->err;
    MPI_Comm comm = r->comm;
    if (!r->persistent) {
        iso__request_destroy(r);
        *request = ISO_REQUEST_NULL;
    }
    return iso__raise(comm, err);
}

int Iso_wait(Iso_request *request)
{
    if (request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    iso__request_wait(*request);
    return retire(request);
}

int Iso_test(Iso_request *request, int *flag)
{
    if (request == NULL || flag == NULL)
        return iso__fail(req_comm(request), ISO_ERR_REQUEST);
    *flag = 1;
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    progress_all();
    if ((*request)->active) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return retire(request);
}

int Iso_waitall(int n, Iso_request requests[])
{
    int err = MPI_SUCCESS;
    if (n < 0 || (n > 0 && requests == NULL))
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    for (int i = 0; i < n; i++) {
        int e = Iso_wait(&requests[i]);
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

int Iso_request_free(Iso_request *request)
{
    if (request == NULL || *request == NULL)
        return iso__fail(MPI_COMM_WORLD, ISO_ERR_REQUEST);
    if ((*request)->active)
        return iso__fail((*request)->comm, ISO_ERR_REQUEST);
    iso__request_destroy(*request);
    *request = ISO_REQUEST_NULL;
    return MPI_SUCCESS;
}
