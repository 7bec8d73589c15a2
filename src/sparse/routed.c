/* sharing for the SDDE (Iso_alltoall_crs, Iso_alltoallv_crs): the plan
 * of route/ with unknown sources.  Making the plan is the discovery (the
 * gathered pattern); the plan's schedule then moves the data (pack mode,
 * stages = rounds) and delivers submessage i, as raw packed bytes, at its
 * offset of one receive buffer, which becomes the inbox.  Made per call
 * (the plan needs every process in the call: crs.c's private communicator
 * proves that).  The schedule is the request's exec: crs.c starts and
 * waits for it alone.  (vpt: forward.c.) */
#include "sparse/sparse.h"
#include <stdlib.h>
#include <string.h>

typedef struct {
    iso_sdde_req base;
    struct iso_request_s *inner; /* the schedule request of the plan */
    iso_route_plan plan;
    int *scounts, *sdispls;      /* the send side as a v layout */
    int *rcounts;                /* the receive side: bytes at byte offsets */
    MPI_Aint *rdispls;
    MPI_Datatype *rtypes;
    char *rbuf;
    iso_inbox in;
} shared_req;

/* The send side of an SDDE call as alltoallv arguments (the receive side
 * is set once known). */
static iso_args args_sdde(const void *buf, const int *counts, const int *displs,
                                      MPI_Datatype type, MPI_Aint extent)
{
    iso_args a = iso__args(ISO_ALLTOALL, buf, iso__side_v(counts, displs, type), NULL,
                           iso__side_v(NULL, NULL, MPI_BYTE), MPI_OP_NULL);
    a.send.extent = extent;
    return a;
}

static int shared_start(struct iso_request_s *req)
{
    return iso__request_start(((shared_req *)req)->inner);
}

static void shared_progress(struct iso_request_s *req, int block)
{
    shared_req *r = (shared_req *)req;
    int err;
    if (iso__request_active(r->inner)) {
        if (!block)
            return; /* progressed with the active list */
        err = iso__request_wait(r->inner);
    } else {
        err = r->inner->err;
    }
    r->base.result = &r->in;
    iso__request_complete(req, err);
}

static void shared_destroy(struct iso_request_s *req)
{
    shared_req *r = (shared_req *)req;
    iso__request_destroy(r->inner);
    iso__route_plan_free(&r->plan);
    iso__inbox_free(&r->in);
    free(r->scounts);
    free(r->sdispls);
    free(r->rcounts);
    free(r->rdispls);
    free(r->rtypes);
    free(r->rbuf);
    free(r);
}

static const iso_request_kind shared_kind = {shared_start, shared_progress, shared_destroy};

int iso__sdde_sharing(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    shared_req *r;
    iso_args a;
    iso_route_key key = {.routing = ISO_ROUTE_SHARING};
    iso_agreement ag = {.nsame = 1};
    int p, rank, n, err;
    size_t total = 0;
    *out = NULL;
    if ((err = MPI_Comm_size(c->priv->comm, &p)) != MPI_SUCCESS ||
        (err = MPI_Comm_rank(c->priv->comm, &rank)) != MPI_SUCCESS)
        return err;
    if ((r = calloc(1, sizeof *r)) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->base.req, &shared_kind, comm, 0);
    r->scounts = malloc(sizeof(int) * ((size_t)c->n + 1));
    r->sdispls = malloc(sizeof(int) * ((size_t)c->n + 1));
    if (!r->scounts || !r->sdispls) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int i = 0; i < c->n; i++) {
        r->scounts[i] = iso__sdde_count(c, i);
        r->sdispls[i] = c->displs ? c->displs[i] : i * c->count;
    }
    a = args_sdde(c->buf, r->scounts, r->sdispls, c->type, c->extent);
    if ((err = iso__route_agree(c->priv, MPI_SUCCESS, &a, c->n, &key, &ag)) != MPI_SUCCESS ||
        (err = iso__sharing_route_plan(c->priv, rank, p, c->n, c->dest, 0, NULL, &a,
                                       &r->plan)) != MPI_SUCCESS)
        goto fn_fail;
    /* what arrives: slot i at its offset in one buffer, as bytes */
    n = r->plan.narrived;
    r->rcounts = malloc(sizeof(int) * ((size_t)n + 1));
    r->rdispls = malloc(sizeof(MPI_Aint) * ((size_t)n + 1));
    r->rtypes = malloc(sizeof(MPI_Datatype) * ((size_t)n + 1));
    if (!r->rcounts || !r->rdispls || !r->rtypes) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int i = 0; i < n; i++) {
        r->rcounts[i] = r->plan.arrived[i].bytes;
        r->rdispls[i] = (MPI_Aint)total;
        r->rtypes[i] = MPI_BYTE;
        total += (size_t)r->plan.arrived[i].bytes;
    }
    if ((r->rbuf = malloc(total + 1)) == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int i = 0; i < n && !err; i++)
        err = iso__inbox_add(&r->in, r->plan.arrived[i].source, r->rcounts[i],
                             (size_t)r->rdispls[i]);
    r->in.ext = r->rbuf;
    a.recvbuf = r->rbuf;
    a.recv = (iso_side){.layout = ISO_LAYOUT_W, .counts = r->rcounts, .adispls = r->rdispls,
                        .types = r->rtypes};
    if (err != MPI_SUCCESS ||
        (err = iso__route_request(c->priv, comm, &r->plan, &a, c->n, n, 0, 0, "sharing",
                                  &r->inner)) != MPI_SUCCESS)
        goto fn_fail;
    /* crs.c runs the schedule itself (iso_sdde_req's exec); the inbox is
     * known already and the schedule's receives fill its buffer */
    r->base.exec = r->inner;
    r->base.result = &r->in;
    *out = &r->base;
    return MPI_SUCCESS;
fn_fail:
    shared_destroy(&r->base.req);
    return err;
}
