/* Locality-aware SDDE (Geyko et al. 2023, algorithms 4 and 5), for nodes
 * of any sizes and any rank placement (DESIGN.md, "Sparse dynamic data
 * exchange"):
 *   1. inter-node: all of a process's messages for one other node travel
 *      as one bundle (chunks, if huge) to its partner on that node
 *      (iso__locality_partner), found by personalized or NBX discovery
 *      over the whole communicator; messages for the own node skip it;
 *   2. intra-node: each process regroups what it holds (received bundles
 *      and its own node's messages) by final destination and sends one
 *      bundle to each process of its node, found by personalized discovery
 *      on the node's communicator (as the paper: nodes are small and the
 *      redistribution dense).
 * Data is packed once, by its origin, with the sender's type and unpacked
 * by the destination with its receive type (crs.c); each submessage
 * carries its origin and size. */
#include "sparse/sparse.h"
#include <stdlib.h>

enum { INTER, INTRA, DONE };

typedef struct {
    iso_sdde_req base;
    const iso_discovery *inter;
    const iso_locality *loc;
    int rank, node, tag;
    MPI_Comm comm; /* priv->comm */
    iso_bundle *to_node;  /* [nnodes] step 1, by destination node */
    iso_bundle *to_local; /* [size of this node] step 2, by local rank */
    iso_outmsg *msgs;
    iso_xchg x1, x2;
    int state;
    iso_inbox result; /* submessages of x2's bundles; data stays in x2 */
} loc_req;

/* The chunks of bundles b[0..nb) as messages: bundle k goes to this
 * process's partner on node k (inter), or to local rank k of this node. */
static int bundle_msgs(loc_req *r, iso_bundle *b, int nb, int inter, int *n)
{
    int count = 0;
    for (int k = 0; k < nb; k++)
        count += b[k].n;
    free(r->msgs);
    if ((r->msgs = malloc(sizeof *r->msgs * ((size_t)count + 1))) == NULL)
        return iso__error(ISO_ERR_NOMEM);
    *n = 0;
    for (int k = 0; k < nb; k++) {
        int target = inter ? iso__locality_partner(r->loc, r->rank, k) : k;
        for (int j = 0; j < b[k].n; j++)
            r->msgs[(*n)++] =
                (iso_outmsg){target, b[k].chunks[j].buf, b[k].chunks[j].len, MPI_PACKED};
    }
    return MPI_SUCCESS;
}

static int start(struct iso_request_s *req)
{
    loc_req *r = (loc_req *)req;
    int n, err = bundle_msgs(r, r->to_node, r->loc->nnodes, 1, &n);
    if (err == MPI_SUCCESS)
        err = r->inter->begin(&r->x1, n, r->msgs);
    return err;
}

/* Calls fn for every submessage of the bundles in inbox in: its data at
 * byte off of the inbox's data. */
typedef int (*sub_fn)(loc_req *r, const char *data, size_t off, int origin, int dest, int bytes);

static int each_submessage(loc_req *r, const iso_inbox *in, sub_fn fn)
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < in->n && err == MPI_SUCCESS; k++) {
        const char *chunk = iso__inbox_at(in, k);
        int pos = 0, origin, dest, bytes, data;
        while (pos < in->msgs[k].bytes && err == MPI_SUCCESS &&
               (err = iso__bundle_next(chunk, in->msgs[k].bytes, &pos, &origin, &dest, &bytes,
                                       &data)) == MPI_SUCCESS)
            err = fn(r, chunk + data, in->msgs[k].off + (size_t)data, origin, dest, bytes);
    }
    return err;
}

/* Step 1: a submessage for this node goes into its destination's bundle. */
static int forward(loc_req *r, const char *data, size_t off, int origin, int dest, int bytes)
{
    (void)off;
    if (dest < 0 || dest >= r->loc->size || r->loc->node[dest] != r->node)
        return iso__error(ISO_ERR_INTERN);
    return iso__bundle_copy(&r->to_local[r->loc->local[dest]], origin, dest, data, bytes);
}

/* Step 2: a submessage for this process is a result. */
static int deliver(loc_req *r, const char *data, size_t off, int origin, int dest, int bytes)
{
    (void)data;
    if (dest != r->rank || origin < 0 || origin >= r->loc->size)
        return iso__error(ISO_ERR_INTERN);
    return iso__inbox_add(&r->result, origin, bytes, off);
}

/* Step 1 is over: every submessage this process holds for its node goes
 * into the bundle of its destination, then step 2 starts. */
static int regroup(loc_req *r)
{
    int n, err = each_submessage(r, &r->x1.in, forward);
    if (err != MPI_SUCCESS)
        return err;
    for (int k = 0; k < r->loc->nnodes; k++) /* step 1's sends are complete */
        iso__bundle_free(&r->to_node[k]);
    iso__xchg_free(&r->x1);
    iso__xchg_init(&r->x2, r->loc->node_comm, r->tag + 1);
    if ((err = bundle_msgs(r, r->to_local, iso__node_size(r->loc, r->node), 0, &n)) != MPI_SUCCESS)
        return err;
    return iso__personalized.begin(&r->x2, n, r->msgs);
}

/* Step 2 is over: the submessages of the received bundles are the result
 * (their data stays in x2's inbox). */
static int unbundle(loc_req *r)
{
    r->result.ext = r->x2.in.data;
    return each_submessage(r, &r->x2.in, deliver);
}

static void progress(struct iso_request_s *req, int block)
{
    loc_req *r = (loc_req *)req;
    int done = 0, err = MPI_SUCCESS;
    while (err == MPI_SUCCESS && r->state != DONE) {
        if (r->state == INTER) {
            if ((err = r->inter->step(&r->x1, block, &done)) != MPI_SUCCESS || !done)
                break;
            r->state = INTRA;
            err = regroup(r);
        } else {
            if ((err = iso__personalized.step(&r->x2, block, &done)) != MPI_SUCCESS || !done)
                break;
            r->state = DONE;
            err = unbundle(r);
        }
    }
    if (err != MPI_SUCCESS || r->state == DONE) {
        r->base.result = &r->result;
        iso__request_complete(req, err);
    }
}

static void destroy(struct iso_request_s *req)
{
    loc_req *r = (loc_req *)req;
    if (r->to_node)
        for (int k = 0; k < r->loc->nnodes; k++)
            iso__bundle_free(&r->to_node[k]);
    if (r->to_local)
        for (int k = 0; k < iso__node_size(r->loc, r->node); k++)
            iso__bundle_free(&r->to_local[k]);
    free(r->to_node);
    free(r->to_local);
    free(r->msgs);
    iso__xchg_free(&r->x1);
    iso__xchg_free(&r->x2);
    r->result.ext = NULL;
    iso__inbox_free(&r->result);
    free(r);
}

static const iso_request_kind loc_kind = {start, progress, destroy};

/* Packs every message into the bundle of its destination node, or of its
 * destination on this node. */
static int make(const iso_sdde_call *c, MPI_Comm comm, const iso_discovery *inter,
                iso_sdde_req **out)
{
    loc_req *r = calloc(1, sizeof *r);
    const iso_locality *l = c->loc;
    int err = MPI_SUCCESS;
    *out = NULL;
    if (r == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__request_init(&r->base.req, &loc_kind, comm, 0);
    r->inter = inter;
    r->loc = l;
    r->comm = c->priv->comm;
    r->tag = c->tag;
    iso__xchg_init(&r->x1, r->comm, c->tag);
    iso__xchg_init(&r->x2, l->node_comm, c->tag + 1);
    if ((err = MPI_Comm_rank(r->comm, &r->rank)) != MPI_SUCCESS)
        goto fn_fail;
    r->node = l->node[r->rank];
    r->to_node = calloc((size_t)l->nnodes, sizeof *r->to_node);
    r->to_local = calloc((size_t)iso__node_size(l, r->node), sizeof *r->to_local);
    if (r->to_node == NULL || r->to_local == NULL) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_fail;
    }
    for (int i = 0; i < c->n && err == MPI_SUCCESS; i++) {
        int d = c->dest[i], count = iso__sdde_count(c, i);
        iso_bundle *b = l->node[d] == r->node ? &r->to_local[l->local[d]] : &r->to_node[l->node[d]];
        err = iso__bundle_pack(b, r->rank, d, iso__sdde_data(c, i), count, c->type,
                               count * c->size, r->comm);
    }
    if (err != MPI_SUCCESS)
        goto fn_fail;
    *out = &r->base;
    return MPI_SUCCESS;
fn_fail:
    destroy(&r->base.req);
    return err;
}

int iso__sdde_locality_personalized(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    return make(c, comm, &iso__personalized, out);
}

int iso__sdde_locality_nbx(const iso_sdde_call *c, MPI_Comm comm, iso_sdde_req **out)
{
    return make(c, comm, &iso__nbx, out);
}
