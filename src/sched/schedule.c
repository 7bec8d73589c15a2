/* The schedule: one typed array of operations with round boundaries, built
 * by the algorithms and run by the one executor in request.c. */
#include "iso_internal.h"
#include <stdlib.h>
#include <string.h>

void iso__sched_init(iso_sched *s)
{
    memset(s, 0, sizeof *s);
}

void iso__sched_destroy(iso_sched *s)
{
    for (int k = 0; k < s->nowned; k++)
        MPI_Type_free(&s->owned[k]);
    free(s->owned);
    free(s->ops);
    if (s->spare_buf)
        for (int m = 0; m < s->nmsgs; m++)
            free(s->spare_buf[m]);
    free(s->spare_buf);
    free(s->spare_cap);
    free(s->msgs);
    free(s->pieces);
    free(s->round_end);
    iso__sched_init(s);
}

/* Grows *arr (elements of size sz, capacity *cap) to hold n elements. */
static int grow(void **arr, int *cap, int n, size_t sz)
{
    void *p;
    int c;
    if (n <= *cap)
        return 0;
    c = *cap ? 2 * *cap : 16;
    if (c < n)
        c = n;
    p = realloc(*arr, (size_t)c * sz);
    if (p == NULL)
        return -1;
    *arr = p;
    *cap = c;
    return 0;
}

int iso__sched_is_comm(iso_opkind k)
{
    return k == ISO_OP_SEND || k == ISO_OP_RECV || k == ISO_OP_SEND_MSG || k == ISO_OP_RECV_MSG;
}

int iso__sched_msg(iso_sched *s)
{
    if (grow((void **)&s->msgs, &s->msgs_cap, s->nmsgs + 1, sizeof *s->msgs))
        return -1;
    s->msgs[s->nmsgs].first = s->npieces;
    s->msgs[s->nmsgs].n = 0;
    return s->nmsgs++;
}

int iso__sched_msg_piece(iso_sched *s, int msg, iso_piece p)
{
    if (msg != s->nmsgs - 1 || s->msgs[msg].first + s->msgs[msg].n != s->npieces)
        return iso__errclass(ISO_ERR_INTERN);
    if (grow((void **)&s->pieces, &s->pieces_cap, s->npieces + 1, sizeof *s->pieces))
        return iso__errclass(ISO_ERR_NOMEM);
    s->pieces[s->npieces++] = p;
    s->msgs[msg].n++;
    return MPI_SUCCESS;
}

int iso__sched_msg_add(iso_sched *s, int *msg, iso_piece p)
{
    if (*msg < 0 && (*msg = iso__sched_msg(s)) < 0)
        return iso__errclass(ISO_ERR_NOMEM);
    return iso__sched_msg_piece(s, *msg, p);
}

void iso__sched_release(iso_sched *s)
{
    if (s == NULL || --s->refs > 0)
        return;
    iso__sched_destroy(s);
    free(s);
}

int iso__sched_add(iso_sched *s, const iso_op *op)
{
    if (grow((void **)&s->ops, &s->ops_cap, s->nops + 1, sizeof *s->ops))
        return iso__errclass(ISO_ERR_NOMEM);
    s->ops[s->nops++] = *op;
    return MPI_SUCCESS;
}

int iso__sched_send(iso_sched *s, int peer, int tag, iso_loc a)
{
    iso_op op = {.kind = ISO_OP_SEND, .peer = peer, .tag = tag, .a = a, .nblocks = 1};
    return iso__sched_add(s, &op);
}

int iso__sched_recv(iso_sched *s, int peer, int tag, iso_loc a)
{
    iso_op op = {.kind = ISO_OP_RECV, .peer = peer, .tag = tag, .a = a};
    return iso__sched_add(s, &op);
}

int iso__sched_copy(iso_sched *s, iso_loc from, iso_loc to)
{
    iso_op op = {.kind = ISO_OP_COPY, .a = from, .b = to};
    return iso__sched_add(s, &op);
}

int iso__sched_reduce(iso_sched *s, iso_loc from, iso_loc to, MPI_Op mop)
{
    iso_op op = {.kind = ISO_OP_REDUCE, .a = from, .b = to, .op = mop};
    return iso__sched_add(s, &op);
}

int iso__sched_end_round(iso_sched *s)
{
    int first = s->nrounds ? s->round_end[s->nrounds - 1] : 0, ncomm = 0;
    if (grow((void **)&s->round_end, &s->rounds_cap, s->nrounds + 1, sizeof *s->round_end))
        return iso__errclass(ISO_ERR_NOMEM);
    s->round_end[s->nrounds++] = s->nops;
    for (int k = first; k < s->nops; k++)
        ncomm += iso__sched_is_comm(s->ops[k].kind);
    if (ncomm > s->max_comm)
        s->max_comm = ncomm;
    return MPI_SUCCESS;
}

static int is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 1;
    return combiner == MPI_COMBINER_NAMED;
}

/* Registers a datatype the schedule frees when destroyed. */
int iso__sched_own(iso_sched *s, MPI_Datatype t)
{
    if (grow((void **)&s->owned, &s->owned_cap, s->nowned + 1, sizeof *s->owned))
        return iso__errclass(ISO_ERR_NOMEM);
    s->owned[s->nowned++] = t;
    return MPI_SUCCESS;
}

static int owns(const iso_sched *s, MPI_Datatype t)
{
    for (int k = 0; k < s->nowned; k++)
        if (s->owned[k] == t)
            return 1;
    return 0;
}

int iso__sched_retain_types(iso_sched *s, int first)
{
    MPI_Datatype *from = NULL, *to = NULL; /* user type from[k] is now to[k] */
    int n = 0, cap = 0, cap2 = 0, err = MPI_SUCCESS;
    for (int k = first; k < s->nops && err == MPI_SUCCESS; k++) {
        iso_loc *locs[2] = {&s->ops[k].a, &s->ops[k].b};
        iso_opkind kind = s->ops[k].kind;
        int nloc = (kind == ISO_OP_SEND || kind == ISO_OP_RECV)      ? 1
                   : (kind == ISO_OP_COPY || kind == ISO_OP_REDUCE) ? 2
                                                                    : 0;
        for (int j = 0; j < nloc && err == MPI_SUCCESS; j++) {
            MPI_Datatype t = locs[j]->type;
            int m = 0;
            while (m < n && from[m] != t)
                m++;
            if (m < n) {
                locs[j]->type = to[m];
                continue;
            }
            if (t == MPI_DATATYPE_NULL || is_named(t) || owns(s, t))
                continue;
            if (grow((void **)&from, &cap, n + 1, sizeof *from) ||
                grow((void **)&to, &cap2, n + 1, sizeof *to)) {
                err = iso__errclass(ISO_ERR_NOMEM);
                break;
            }
            if ((err = MPI_Type_dup(t, &to[n])) != MPI_SUCCESS)
                break;
            if ((err = iso__sched_own(s, to[n])) != MPI_SUCCESS) {
                MPI_Type_free(&to[n]);
                break;
            }
            from[n] = t;
            locs[j]->type = to[n++];
        }
    }
    free(from);
    free(to);
    return err;
}
