/* isocallcost: a driver for counting what one isomorphic collective call
 * costs the library (instructions under callgrind, MPI calls), for the
 * isomorphic collectives' per-call overheads.  It makes one neighborhood (Moore norm,
 * dimension --dim, radius --radius, periodic) and runs --iters calls of one
 * form of Iso_neighbor_alltoall after --warmup untimed ones: persistent
 * (Iso_start + Iso_wait on one request), blocking (through the call
 * cache) or nonblocking (Iso_ineighbor_alltoall + Iso_wait).  Only the
 * measured loop is in call_loop(), so that
 *   valgrind --tool=callgrind --toggle-collect=call_loop isocallcost ...
 * counts nothing else; the MPI calls the library makes in the loop are
 * counted through the profiling interface and printed per call, and the
 * loop's wall time per call too (meaningless under valgrind).
 *
 *   mpiexec -n P isocallcost [--dim D] [--radius R] [--bytes B]
 *       [--algorithm direct|dimwise|bruck|auto] [--form persistent|blocking|nonblocking]
 *       [--iters K] [--warmup W]
 *
 * The result of the last call is checked against the expected pattern
 * (block i from the source at -C^i carries that source's rank and i). */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neighborhood.h"

#include "mpicount.h" /* counting the library's MPI calls (profiling interface) */

/* ---- the measured loop ----------------------------------------------------- */
enum form { PERSISTENT, BLOCKING, NONBLOCKING };

typedef struct {
    enum form form;
    Iso_request req; /* persistent */
    MPI_Comm iso;
    char *sbuf, *rbuf;
    int bytes;
} call;

static void one_call(call *c)
{
    Iso_request r;
    switch (c->form) {
    case PERSISTENT:
        TRY(Iso_start(&c->req));
        TRY(Iso_wait(&c->req));
        break;
    case BLOCKING:
        TRY(Iso_neighbor_alltoall(c->sbuf, c->bytes, MPI_BYTE, c->rbuf, c->bytes, MPI_BYTE,
                                  c->iso));
        break;
    case NONBLOCKING:
        TRY(Iso_ineighbor_alltoall(c->sbuf, c->bytes, MPI_BYTE, c->rbuf, c->bytes, MPI_BYTE,
                                   c->iso, &r));
        TRY(Iso_wait(&r));
        break;
    }
}

__attribute__((noinline)) static void call_loop(call *c, int iters)
{
    for (int k = 0; k < iters; k++)
        one_call(c);
}

static int arg_int(int argc, char **argv, const char *name, int dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return atoi(argv[i + 1]);
    return dflt;
}

static const char *arg_str(int argc, char **argv, const char *name, const char *dflt)
{
    for (int i = 1; i + 1 < argc; i++)
        if (strcmp(argv[i], name) == 0)
            return argv[i + 1];
    return dflt;
}

int main(int argc, char **argv)
{
    int d = arg_int(argc, argv, "--dim", 3), r = arg_int(argc, argv, "--radius", 1);
    int iters = arg_int(argc, argv, "--iters", 1000), warmup = arg_int(argc, argv, "--warmup", 20);
    const char *alg = arg_str(argc, argv, "--algorithm", "direct");
    const char *form = arg_str(argc, argv, "--form", "persistent");
    int dims[NBH_MAXD] = {0}, periods[NBH_MAXD], rank, size, s, *off, bad = 0;
    MPI_Comm cart;
    MPI_Info info;
    call c = {.bytes = arg_int(argc, argv, "--bytes", 8)};
    long long calls;
    double t;

    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    c.form = strcmp(form, "blocking") == 0      ? BLOCKING
             : strcmp(form, "nonblocking") == 0 ? NONBLOCKING
                                                : PERSISTENT;
    for (int j = 0; j < d; j++)
        periods[j] = 1;
    TRY(MPI_Dims_create(size, d, dims));
    TRY(MPI_Cart_create(MPI_COMM_WORLD, d, dims, periods, 0, &cart));
    TRY(MPI_Comm_rank(cart, &rank));
    s = make_offsets(d, r, 0, 0, 1, &off);
    TRY(MPI_Info_create(&info));
    TRY(MPI_Info_set(info, "iso_algorithm", alg));
    TRY(Iso_neighborhood_create_with_info(cart, s, off, info, &c.iso));
    c.sbuf = nbh_malloc((size_t)s * (size_t)c.bytes);
    c.rbuf = nbh_malloc((size_t)s * (size_t)c.bytes);
    for (int i = 0; i < s; i++)
        for (int b = 0; b < c.bytes; b++)
            c.sbuf[(size_t)i * c.bytes + b] = (char)(rank * 31 + i * 7 + b);
    if (c.form == PERSISTENT)
        TRY(Iso_neighbor_alltoall_init(c.sbuf, c.bytes, MPI_BYTE, c.rbuf, c.bytes, MPI_BYTE,
                                       c.iso, info, &c.req));
    for (int k = 0; k < warmup; k++)
        one_call(&c);
    TRY(MPI_Barrier(cart));
    counting = 1;
    t = MPI_Wtime();
    call_loop(&c, iters);
    t = MPI_Wtime() - t;
    counting = 0;
    calls = mpi_calls;
    /* block i came from the source at -C^i, which filled its block i */
    for (int i = 0; i < s; i++) {
        int src, dst, srank;
        TRY(Cart_relative_shift(cart, off + (size_t)i * d, &src, &dst));
        srank = src;
        for (int b = 0; b < c.bytes; b++)
            bad += c.rbuf[(size_t)i * c.bytes + b] != (char)(srank * 31 + i * 7 + b);
    }
    if (rank == 0)
        printf("isocallcost: %d ranks, %dD Moore r%d (s=%d), %d B, %s, %s: %.3f MPI calls per "
               "call, %.2f us per call, %s\n",
               size, d, r, s, c.bytes, alg, form, (double)calls / iters, t / iters * 1e6,
               bad ? "WRONG" : "checked");
    for (int k = 0; k < ncounted && rank == 0; k++)
        printf("  %-28s %.3f per call\n", counted_name[k], (double)counted_calls[k] / iters);
    if (c.form == PERSISTENT)
        TRY(Iso_request_free(&c.req));
    MPI_Info_free(&info);
    free(off);
    free(c.sbuf);
    free(c.rbuf);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return bad != 0;
}
