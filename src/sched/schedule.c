/* Building a schedule: ops appended round by round, combined messages and
 * their pieces, the datatypes it owns; and its per-process statistics. */
#include "sched/sched.h"
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const char *const iso__coll_names[ISO_NCOLL] = {"alltoall", "allgather", "reduce",
                                                "scatter_reduce"};

void iso__sched_init(iso_sched *s)
{
    memset(s, 0, sizeof *s);
}

int iso__sched_new(iso_sched **out)
{
    *out = malloc(sizeof **out);
    if (*out == NULL)
        return iso__error(ISO_ERR_NOMEM);
    iso__sched_init(*out);
    (*out)->refs = 1;
    return MPI_SUCCESS;
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

void iso__sched_release(iso_sched *s)
{
    if (s == NULL || --s->refs > 0)
        return;
    iso__sched_destroy(s);
    free(s);
}

int iso__sched_add(iso_sched *s, const iso_op *op)
{
    int err = iso__grow(&s->ops, &s->ops_cap, s->nops + 1, sizeof *s->ops);
    if (err == MPI_SUCCESS)
        s->ops[s->nops++] = *op;
    return err;
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

int iso__sched_reduce(iso_sched *s, iso_loc from, iso_loc to, MPI_Op mop)
{
    iso_op op = {.kind = ISO_OP_REDUCE, .a = from, .b = to, .op = mop};
    return iso__sched_add(s, &op);
}

int iso__sched_msg_add(iso_sched *s, int *msg, iso_piece p)
{
    int err;
    if (*msg < 0) {
        if ((err = iso__grow(&s->msgs, &s->msgs_cap, s->nmsgs + 1, sizeof *s->msgs)))
            return err;
        s->msgs[s->nmsgs] = (iso_msg){.first = s->npieces, .n = 0};
        *msg = s->nmsgs++;
    }
    /* a message's pieces are consecutive: only the newest message grows */
    if (*msg != s->nmsgs - 1 || s->msgs[*msg].first + s->msgs[*msg].n != s->npieces)
        return iso__error(ISO_ERR_INTERN);
    if ((err = iso__grow(&s->pieces, &s->pieces_cap, s->npieces + 1, sizeof *s->pieces)))
        return err;
    s->pieces[s->npieces++] = p;
    s->msgs[*msg].n++;
    return MPI_SUCCESS;
}

int iso__sched_end_round(iso_sched *s)
{
    int first = s->nrounds ? s->round_end[s->nrounds - 1] : 0, ncomm = 0;
    int err = iso__grow(&s->round_end, &s->rounds_cap, s->nrounds + 1, sizeof *s->round_end);
    if (err)
        return err;
    s->round_end[s->nrounds++] = s->nops;
    for (int k = first; k < s->nops; k++) {
        ncomm += iso__op_stage(s->ops[k].kind) == ISO_STAGE_COMM;
        s->nlocal += iso__op_stage(s->ops[k].kind) == ISO_STAGE_LOCAL;
    }
    if (ncomm > s->max_comm)
        s->max_comm = ncomm;
    return MPI_SUCCESS;
}

int iso__sched_own(iso_sched *s, MPI_Datatype t)
{
    int err = iso__grow(&s->owned, &s->owned_cap, s->nowned + 1, sizeof *s->owned);
    if (err == MPI_SUCCESS)
        s->owned[s->nowned++] = t;
    return err;
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
        int nloc = (kind == ISO_OP_SEND || kind == ISO_OP_RECV) ? 1 : kind == ISO_OP_REDUCE ? 2 : 0;
        for (int j = 0; j < nloc && err == MPI_SUCCESS; j++) {
            MPI_Datatype t = locs[j]->type;
            int m = 0;
            while (m < n && from[m] != t)
                m++;
            if (m < n) {
                locs[j]->type = to[m];
                continue;
            }
            if (t == MPI_DATATYPE_NULL || iso__type_is_named(t) || owns(s, t))
                continue;
            if ((err = iso__grow(&from, &cap, n + 1, sizeof *from)) ||
                (err = iso__grow(&to, &cap2, n + 1, sizeof *to)) ||
                (err = iso__type_hold(t, &to[n])) != MPI_SUCCESS)
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

size_t iso__sched_spare_bytes(const iso_sched *s)
{
    size_t bytes = 0;
    for (int m = 0; s->spare_cap && m < s->nmsgs; m++)
        bytes += s->spare_cap[m];
    return bytes;
}

void iso__sched_stats(const iso_sched *s, int *rounds, int *messages, long long *block_hops)
{
    int sent = 0, received = 0;
    long long hops = 0;
    for (int k = 0; k < s->nops; k++) {
        iso_opkind kind = s->ops[k].kind;
        if (kind == ISO_OP_SEND || kind == ISO_OP_SEND_MSG) {
            sent++;
            hops += s->ops[k].nblocks;
        } else if (kind == ISO_OP_RECV || kind == ISO_OP_RECV_MSG) {
            received++;
        }
    }
    *rounds = sent > received ? sent : received;
    *messages = sent;
    *block_hops = hops;
}

/* Every process knows the size of every block it receives or forwards when
 * the receive side is regular: all forms but the v/w alltoall/allgather. */
int iso__datatype_possible(const iso_args *a)
{
    return a->recv.layout == ISO_LAYOUT_STRIDED || a->recv.layout == ISO_LAYOUT_SAME;
}

iso_figures iso__sched_figures(const iso_sched *s)
{
    return (iso_figures){s->struct_phases, s->struct_msgs, s->struct_hops,
                         s->struct_max_entries};
}

int iso__pack_fits(const iso_figures *f, double block_bytes)
{
    return (double)f->max_entries * (8.0 + block_bytes) <= (double)INT_MAX;
}
