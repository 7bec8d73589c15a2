/* isobench: times Iso_neighbor_alltoall (or _allgather) with each algorithm
 * (direct, dimwise, bruck, auto; optionally their persistent forms) against
 * MPI_Neighbor_alltoallw and MPI_Neighbor_alltoall (allgather) on a
 * distributed-graph communicator with the same neighbors, and against the
 * same messages sent by hand (hand: one Irecv and Isend per neighbor and
 * MPI_Waitall, the floor of direct).
 *
 * Method (after Traeff et al., EuroMPI'15, section 7): for each block size,
 * every variant is first checked against a plain Isend/Irecv oracle; then
 * every repetition times one batch of `iters` calls of each variant
 * (variants in a new random order every repetition; before its batch, one
 * untimed call and a barrier).  A repetition's time per call is the batch
 * time / iters, maximised over the ranks.  Reported: median and quartiles
 * over the repetitions, and ratios of medians.  See bench/README.md.
 *
 *   mpiexec -n P isobench [--shape moore|vonneumann] [--radius R] [--dim D]
 *       [--dims 4,2] [--periodic|--mesh] [--drop N] [--sizes 8,512,65536]
 *       [--reps N] [--iters K] [--target-ms T] [--coll alltoall|allgather]
 *       [--variants LIST] [--persistent] [--strict] [--folded-above B]
 *
 * A variant names an algorithm (direct, dimwise, bruck, auto), optionally
 * with a combining mode (dimwise:pack, bruck:datatype, ...: the iso_combine
 * info key), and a "p" prefix for the persistent form; mpiw and mpi are
 * MPI_Neighbor_alltoallw and MPI_Neighbor_alltoall (allgather).  Default:
 * direct, dimwise and bruck in both modes, auto, mpiw, mpi; --persistent
 * adds the persistent forms of the library's.
 *
 * Optional competitors peer and peer_trivial: TU Wien's Cartesian
 * collectives, combining and trivial (bench/peer.h), only in a build with
 * PEER=DIR (bench/README.md, "The peer"); otherwise left out with a note.
 *
 * Which algorithm auto picked at each block size comes from the library
 * (Iso_request_schedule_info).  The MPI_Isend calls and bytes of one call of
 * every variant are counted too (profiling interface, below). */
#include <isocoll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "neighborhood.h"
#include "peer.h"

#define MAXD NBH_MAXD
#define MAXV 20
#define MAXSIZES 32

/* ---- counting the library's sends (MPI profiling interface) ---------------
 * The library is linked statically into this program, so its calls to
 * MPI_Isend come here.  Counting is switched on only around single calls
 * made to identify schedules, never while timing. */
static int counting;
static long long count_sends, count_bytes;

int MPI_Isend(const void *buf, int count, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *request)
{
    if (counting) {
        int size = 0;
        PMPI_Type_size(type, &size);
        count_sends++;
        count_bytes += (long long)size * count;
    }
    return PMPI_Isend(buf, count, type, dest, tag, comm, request);
}

/* ---- options -------------------------------------------------------------- */

/* The generalized neighborhoods of the paper's section 7 and the
 * machine-readable output (options added for bench/run): inner radius k'
 * (offsets with k' < norm <= k), periodic in the first t dimensions only,
 * offset order, the w forms with a derived type per block, and @row lines. */
enum { ORDER_ROW, ORDER_COL, ORDER_RANDOM };
typedef struct {
    int inner;     /* --inner K': leave out offsets of norm <= K' */
    int tper;      /* --periodic-dims T: periodic in dimensions 0..T-1; -1: as --periodic/--mesh */
    int order;     /* --order row|col|random */
    int wform;     /* --coll alltoallw|allgatherw */
    int rows;      /* --rows: one "@row key=value ..." line per repetition and variant */
} generalized;

typedef struct {
    int moore, radius, d, periodic, dims[MAXD], drop;
    int nsizes, sizes[MAXSIZES];
    int reps, iters;
    double target_ms;
    int allgather;
    char variants[256];
    int persistent, strict;
    int folded_above; /* --folded-above B: sizes above B are timed unchecked (below) */
    generalized gen; /* bench/README.md, "exchange": the paper's generalized neighborhoods */
} options;

static void usage(void)
{
    fprintf(stderr,
            "usage: isobench [--shape moore|vonneumann] [--radius R] [--dim D] [--dims a,b,..]\n"
            "  [--periodic|--mesh] [--drop N (leave out the first N offsets)]\n"
            "  [--sizes 8,512,65536] [--reps N] [--iters K (0: auto)] [--target-ms T]\n"
            "  [--coll alltoall|allgather|alltoallw|allgatherw]\n"
            "  [--variants direct,dimwise,bruck,auto,mpiw,mpi,hand, ALG:pack, ALG:datatype (combining\n"
            "   mode), a p prefix for the persistent form: pauto, pbruck:datatype, ...;\n"
            "   automodel (auto with runtime tuning off: the cost model's pick),\n"
            "   mpiw_init (MPI 4), cart (von Neumann radius 1), memcpy (the bytes received),\n"
            "   peer, peer_trivial (TU Wien's Cartesian collectives, a build with PEER=DIR)]\n"
            "  [--persistent] [--strict (wrong data from MPI's collectives is fatal too)]\n"
            "  [--inner K'] [--periodic-dims T] [--order row|col|random] [--rows]\n"
            "  [--folded-above B (SMPI only: the sizes above B get block buffers the simulator\n"
            "   folds onto the same memory; timed unchecked after the sizes up to B)]\n");
}

/* The generalized-neighborhood options: 0 if a (with value v) is one. */
static int parse_generalized(const char *a, const char *v, generalized *g)
{
    if (!strcmp(a, "--inner"))
        g->inner = atoi(v);
    else if (!strcmp(a, "--periodic-dims"))
        g->tper = atoi(v) < 0 ? 0 : atoi(v);
    else if (!strcmp(a, "--order") && !strcmp(v, "row"))
        g->order = ORDER_ROW;
    else if (!strcmp(a, "--order") && !strcmp(v, "col"))
        g->order = ORDER_COL;
    else if (!strcmp(a, "--order") && !strcmp(v, "random"))
        g->order = ORDER_RANDOM;
    else
        return -1;
    return 0;
}

static int parse(int argc, char **argv, options *o)
{
    memset(o, 0, sizeof *o);
    o->moore = 1;
    o->radius = 1;
    o->d = 2;
    o->periodic = 1;
    o->nsizes = 3;
    o->sizes[0] = 8;
    o->sizes[1] = 512;
    o->sizes[2] = 65536;
    o->reps = 41;
    o->iters = 0;
    o->target_ms = 1.0;
    o->gen.tper = -1;
    strcpy(o->variants,
           "direct,dimwise:pack,dimwise:datatype,bruck:pack,bruck:datatype,auto,mpiw,mpi,hand");
    for (int k = 1; k < argc; k++) {
        const char *a = argv[k], *v = k + 1 < argc ? argv[k + 1] : NULL;
        int shape;
        if (nbh_parse_periodic(a, &o->periodic))
            continue;
        if (!strcmp(a, "--persistent"))
            o->persistent = 1;
        else if (!strcmp(a, "--strict"))
            o->strict = 1;
        else if (!strcmp(a, "--rows"))
            o->gen.rows = 1;
        else if (v != NULL && parse_generalized(a, v, &o->gen) == 0)
            k++;
        else if (v == NULL)
            return -1;
        else if ((shape = nbh_parse_shape(a, v, &o->moore, &o->radius, &o->d, o->dims)) != 0) {
            if (shape < 0)
                return -1;
            k++;
        } else if (k++, !strcmp(a, "--drop"))
            o->drop = atoi(v);
        else if (!strcmp(a, "--sizes")) {
            if ((o->nsizes = nbh_parse_list(v, o->sizes, MAXSIZES)) <= 0)
                return -1;
        } else if (!strcmp(a, "--reps"))
            o->reps = atoi(v);
        else if (!strcmp(a, "--iters"))
            o->iters = atoi(v);
        else if (!strcmp(a, "--target-ms"))
            o->target_ms = atof(v);
        else if (!strcmp(a, "--folded-above"))
            o->folded_above = atoi(v);
        else if (!strcmp(a, "--coll")) {
            if (strcmp(v, "alltoall") && strcmp(v, "allgather") && strcmp(v, "alltoallw") &&
                strcmp(v, "allgatherw"))
                return -1;
            o->allgather = !strncmp(v, "allgather", 9);
            o->gen.wform = v[strlen(v) - 1] == 'w';
        } else if (!strcmp(a, "--variants")) {
            if (strlen(v) >= sizeof o->variants)
                return -1;
            strcpy(o->variants, v);
        } else
            return -1;
    }
    if (o->radius < 1 || o->d < 1 || o->d > MAXD || o->reps < 1 || o->iters < 0 || o->drop < 0 ||
        o->target_ms <= 0 || o->gen.inner < 0 || o->gen.inner >= o->radius || o->gen.tper > o->d)
        return -1;
    for (int j = 0; j < o->nsizes; j++)
        if (o->sizes[j] < 1)
            return -1;
    /* a folded size is timed only after the variants passed the check at a
     * size that is not folded */
    if (o->folded_above < 0 || (o->folded_above > 0 && o->sizes[0] > o->folded_above))
        return -1;
#ifndef SMPI_SHARED_MALLOC
    if (o->folded_above > 0) {
        fprintf(stderr, "isobench: --folded-above needs the SMPI build (make MPI=smpi)\n");
        return -1;
    }
#endif
    return 0;
}

/* ---- neighborhood ---------------------------------------------------------- */

/* ---- variants -------------------------------------------------------------- */

/* V_HAND: the same messages as direct, written by hand (one Irecv and one
 * Isend per neighbor index, tag = index, then MPI_Waitall): the floor a
 * library call adds its per-call cost to. */
/* V_MPI_W_INIT: MPI_Neighbor_alltoallw_init (MPI 4).  V_CART:
 * MPI_Neighbor_alltoall (allgather) on the bare Cartesian communicator (von
 * Neumann radius 1 only).  V_MEMCPY: one memcpy of the bytes a call
 * receives (indegree blocks), the machine's floor for moving them (not
 * verified).  V_PEER: TU Wien's Cartesian collectives (bench/peer.h), alg 0
 * its combining, 1 its trivial implementation. */
typedef enum {
    V_ISO, V_PERSISTENT, V_MPI_W, V_MPI, V_HAND, V_MPI_W_INIT, V_CART, V_MEMCPY, V_PEER
} vkind;
/* Library configurations: algorithm (iso_algorithm) and combining mode
 * (iso_combine); the first NFIG are the algorithms with the default mode. */
static const char *const alg_names[] = {"direct",       "dimwise",          "bruck",
                                        "auto",         "dimwise:pack",     "dimwise:datatype",
                                        "bruck:pack",   "bruck:datatype",   "automodel"};
static const char *const alg_algorithm[] = {"direct", "dimwise", "bruck", "auto",
                                            "dimwise", "dimwise", "bruck", "bruck", "auto"};
static const char *const alg_combine[] = {"auto", "auto", "auto", "auto",
                                          "pack", "datatype", "pack", "datatype", "auto"};
#define NALG 9
#define NFIG 4
#define ALG_AUTO 3
/* automodel: auto with runtime tuning off (iso_tune=off), the cost model's
 * pick, so that tuned and untuned auto are timed in one interleaved run */
#define ALG_AUTO_MODEL 8

/* auto in either form: its pick is reported and compared with the fixed ones */
static int is_auto(int a)
{
    return a == ALG_AUTO || a == ALG_AUTO_MODEL;
}

typedef struct {
    char name[40];
    char id[24];        /* the --variants word: the competitor in @row lines */
    vkind kind;
    int alg;            /* V_ISO, V_PERSISTENT: index into alg_names; V_PEER: trivial */
    MPI_Comm comm;      /* isocomm, the graph communicator, or the peer's */
    Iso_request req;    /* V_PERSISTENT, bound to the current size's buffers */
    MPI_Request mreq;   /* V_MPI_W_INIT, likewise */
    double *t;          /* per repetition: time per call, this rank */
    long long sends, bytes; /* MPI_Isend calls and bytes of one call */
    int wrong;          /* failed verification at the current size */
    char picked[64];    /* auto variants: the algorithm(s) with the same sends */
} variant;

/* Extra buffers of the w forms (a derived type per block) and of V_CART
 * (MPI's Cartesian layout: 2d blocks). */
typedef struct {
    MPI_Datatype block;          /* b contiguous bytes, committed; MPI_DATATYPE_NULL: not w */
    int *ones;                   /* s counts of 1 */
    MPI_Aint *sdispls, *rdispls; /* s byte displacements in the neighborhood layout */
    MPI_Datatype *types;         /* s times block */
    unsigned char *cartsend, *cartrecv;
} wbuffers;

typedef struct {
    int b;                       /* bytes per block */
    int folded;                  /* the block data are folded (data_alloc) */
    unsigned char *send, *recv;  /* neighborhood layout: s blocks (send: 1 for allgather) */
    unsigned char *csend, *crecv; /* compact graph layout for MPI_Neighbor_alltoall */
    int *wscounts, *wrcounts;
    MPI_Aint *wsdispls, *wrdispls;
    MPI_Datatype *wstypes, *wrtypes;
    wbuffers w;
} buffers;

typedef struct {
    MPI_Comm cart, graph, hand; /* hand: a duplicate of cart for V_HAND */
    MPI_Request *hreq;          /* V_HAND: 2s requests */
    int rank, nprocs, s, indeg, outdeg, allgather;
    int *src, *dst;      /* s entries, MPI_PROC_NULL included (own computation) */
    int *rslot, *tslot;  /* graph index -> neighborhood slot, indeg / outdeg entries */
    int wform;           /* the w forms with a derived type per block */
    int ncart;           /* V_CART possible: 2d blocks, else 0 */
    int torus;           /* periodic in every dimension (V_PEER needs it) */
    int cart_sslot[2 * MAXD], cart_rslot[2 * MAXD]; /* Cartesian block -> neighborhood slot */
} setup;

static unsigned char pattern(int rank, int block, size_t j)
{
    unsigned x = (unsigned)rank * 2654435761u + (unsigned)block * 40503u + (unsigned)j * 97u;
    x ^= x >> 13;
    x *= 2246822519u;
    return (unsigned char)(x ^ (x >> 16));
}

/* Whether b-byte blocks get folded buffers (--folded-above). */
static int folded_size(const options *o, int b)
{
    return o->folded_above > 0 && b > o->folded_above;
}

/* A buffer of block data.  Folded (--folded-above, SMPI only): SMPI maps
 * it onto the same few pages as every other folded buffer of every rank
 * (SMPI_SHARED_MALLOC), so K ranks' 64 KiB blocks fit in memory and its
 * contents are meaningless.  Only isobench's own buffers are folded, never
 * the library's: its packed messages carry headers it checks. */
static unsigned char *data_alloc(size_t bytes, int folded)
{
#ifdef SMPI_SHARED_MALLOC
    if (folded)
        return SMPI_SHARED_MALLOC(bytes);
#else
    (void)folded;
#endif
    return xmalloc(bytes);
}

static void data_free(void *p, int folded)
{
#ifdef SMPI_SHARED_FREE
    if (folded) {
        SMPI_SHARED_FREE(p);
        return;
    }
#else
    (void)folded;
#endif
    free(p);
}

/* The w forms send each block as one element of a derived type (b
 * contiguous bytes), MPI's alltoallw included; V_CART's blocks are copied
 * from the neighborhood layout once (Cartesian block 2j goes to and comes
 * from the -1 neighbor in dimension j, 2j+1 the +1 one). */
static void wbuffers_init(buffers *B, const setup *S, int b, int nw)
{
    wbuffers *w = &B->w;
    memset(w, 0, sizeof *w);
    w->block = MPI_DATATYPE_NULL;
    w->cartsend = data_alloc((size_t)(S->ncart ? S->ncart : 1) * b, B->folded);
    w->cartrecv = data_alloc((size_t)(S->ncart ? S->ncart : 1) * b, B->folded);
    for (int k = 0; k < S->ncart; k++)
        memcpy(w->cartsend + (size_t)k * b,
               B->send + (size_t)(S->allgather ? 0 : S->cart_sslot[k]) * b, (size_t)b);
    if (!S->wform)
        return;
    TRY(MPI_Type_contiguous(b, MPI_BYTE, &w->block));
    TRY(MPI_Type_commit(&w->block));
    w->ones = xmalloc(sizeof(int) * nw);
    w->sdispls = xmalloc(sizeof(MPI_Aint) * nw);
    w->rdispls = xmalloc(sizeof(MPI_Aint) * nw);
    w->types = xmalloc(sizeof(MPI_Datatype) * nw);
    for (int i = 0; i < S->s; i++) {
        w->ones[i] = 1;
        w->sdispls[i] = S->allgather ? 0 : (MPI_Aint)i * b;
        w->rdispls[i] = (MPI_Aint)i * b;
        w->types[i] = w->block;
    }
    for (int k = 0; k < S->outdeg; k++) {
        B->wscounts[k] = 1;
        B->wstypes[k] = w->block;
    }
    for (int k = 0; k < S->indeg; k++) {
        B->wrcounts[k] = 1;
        B->wrtypes[k] = w->block;
    }
}

static void wbuffers_free(wbuffers *w, int folded)
{
    if (w->block != MPI_DATATYPE_NULL)
        TRY(MPI_Type_free(&w->block));
    free(w->ones);
    free(w->sdispls);
    free(w->rdispls);
    free(w->types);
    data_free(w->cartsend, folded);
    data_free(w->cartrecv, folded);
}

static void buffers_init(buffers *B, const setup *S, int b, int folded)
{
    int nsend = S->allgather ? 1 : S->s;
    int nw = S->s > 0 ? S->s : 1;
    B->b = b;
    B->folded = folded;
    B->send = data_alloc((size_t)nsend * b, folded);
    B->recv = data_alloc((size_t)S->s * b, folded);
    B->csend = data_alloc((size_t)(S->allgather ? 1 : S->outdeg) * b, folded);
    B->crecv = data_alloc((size_t)S->indeg * b, folded);
    for (int i = 0; i < nsend; i++)
        for (int j = 0; j < b; j++)
            B->send[(size_t)i * b + j] = pattern(S->rank, i, (size_t)j);
    for (int k = 0; k < (S->allgather ? 1 : S->outdeg); k++)
        memcpy(B->csend + (size_t)k * b,
               B->send + (size_t)(S->allgather ? 0 : S->tslot[k]) * b, (size_t)b);
    B->wscounts = xmalloc(sizeof(int) * nw);
    B->wrcounts = xmalloc(sizeof(int) * nw);
    B->wsdispls = xmalloc(sizeof(MPI_Aint) * nw);
    B->wrdispls = xmalloc(sizeof(MPI_Aint) * nw);
    B->wstypes = xmalloc(sizeof(MPI_Datatype) * nw);
    B->wrtypes = xmalloc(sizeof(MPI_Datatype) * nw);
    for (int k = 0; k < S->outdeg; k++) {
        B->wscounts[k] = b;
        B->wsdispls[k] = S->allgather ? 0 : (MPI_Aint)S->tslot[k] * b;
        B->wstypes[k] = MPI_BYTE;
    }
    for (int k = 0; k < S->indeg; k++) {
        B->wrcounts[k] = b;
        B->wrdispls[k] = (MPI_Aint)S->rslot[k] * b;
        B->wrtypes[k] = MPI_BYTE;
    }
    wbuffers_init(B, S, b, nw);
}

static void buffers_free(buffers *B)
{
    data_free(B->send, B->folded);
    data_free(B->recv, B->folded);
    data_free(B->csend, B->folded);
    data_free(B->crecv, B->folded);
    free(B->wscounts);
    free(B->wrcounts);
    free(B->wsdispls);
    free(B->wrdispls);
    free(B->wstypes);
    free(B->wrtypes);
    wbuffers_free(&B->w, B->folded);
}

/* One blocking w-form call (a derived type per block). */
static int run_iso_w(const setup *S, buffers *B, MPI_Comm isocomm)
{
    wbuffers *w = &B->w;
    if (S->allgather)
        return Iso_neighbor_allgatherw(B->send, 1, w->block, B->recv, w->ones, w->rdispls,
                                       w->types, isocomm);
    return Iso_neighbor_alltoallw(B->send, w->ones, w->sdispls, w->types, B->recv, w->ones,
                                  w->rdispls, w->types, isocomm);
}

/* The library's nonblocking (persistent = 0) or persistent request of the
 * collective, for auto's pick and the persistent variants. */
static int iso_request(const setup *S, buffers *B, MPI_Comm isocomm, int persistent,
                       Iso_request *req)
{
    wbuffers *w = &B->w;
    int b = B->b;
    if (S->wform && S->allgather)
        return persistent ? Iso_neighbor_allgatherw_init(B->send, 1, w->block, B->recv, w->ones,
                                                         w->rdispls, w->types, isocomm,
                                                         MPI_INFO_NULL, req)
                          : Iso_ineighbor_allgatherw(B->send, 1, w->block, B->recv, w->ones,
                                                     w->rdispls, w->types, isocomm, req);
    if (S->wform)
        return persistent ? Iso_neighbor_alltoallw_init(B->send, w->ones, w->sdispls, w->types,
                                                        B->recv, w->ones, w->rdispls, w->types,
                                                        isocomm, MPI_INFO_NULL, req)
                          : Iso_ineighbor_alltoallw(B->send, w->ones, w->sdispls, w->types,
                                                    B->recv, w->ones, w->rdispls, w->types,
                                                    isocomm, req);
    if (S->allgather)
        return persistent ? Iso_neighbor_allgather_init(B->send, b, MPI_BYTE, B->recv, b,
                                                        MPI_BYTE, isocomm, MPI_INFO_NULL, req)
                          : Iso_ineighbor_allgather(B->send, b, MPI_BYTE, B->recv, b, MPI_BYTE,
                                                    isocomm, req);
    return persistent ? Iso_neighbor_alltoall_init(B->send, b, MPI_BYTE, B->recv, b, MPI_BYTE,
                                                   isocomm, MPI_INFO_NULL, req)
                      : Iso_ineighbor_alltoall(B->send, b, MPI_BYTE, B->recv, b, MPI_BYTE,
                                               isocomm, req);
}

/* MPI_Neighbor_alltoallw_init's request for the current buffers (MPI 4). */
static int mpi_w_init(variant *v, buffers *B)
{
#if MPI_VERSION >= 4
    return MPI_Neighbor_alltoallw_init(B->send, B->wscounts, B->wsdispls, B->wstypes, B->recv,
                                       B->wrcounts, B->wrdispls, B->wrtypes, v->comm,
                                       MPI_INFO_NULL, &v->mreq);
#else
    (void)v;
    (void)B;
    return MPI_ERR_OTHER;
#endif
}

/* One call of the reference variants added for bench/run. */
static int run_reference(variant *v, const setup *S, buffers *B)
{
    int b = B->b, rc;
    switch (v->kind) {
    case V_MPI_W_INIT:
        if ((rc = MPI_Start(&v->mreq)) != MPI_SUCCESS)
            return rc;
        return MPI_Wait(&v->mreq, MPI_STATUS_IGNORE);
    case V_CART:
        if (S->allgather)
            return MPI_Neighbor_allgather(B->send, b, MPI_BYTE, B->w.cartrecv, b, MPI_BYTE,
                                          v->comm);
        return MPI_Neighbor_alltoall(B->w.cartsend, b, MPI_BYTE, B->w.cartrecv, b, MPI_BYTE,
                                     v->comm);
    case V_MEMCPY: /* the indegree blocks a call receives, in one copy */
        memcpy(B->recv, B->crecv, (size_t)S->indeg * (size_t)b);
        return MPI_SUCCESS;
    default:
        return MPI_ERR_OTHER;
    }
}

/* Which Cartesian block (MPI's order) holds each slot of a von Neumann
 * radius-1 neighborhood, if the neighborhood is exactly that (any order). */
static void cart_slots(setup *S, const int *off, int d)
{
    S->ncart = 0;
    if (S->s != 2 * d)
        return;
    for (int j = 0; j < d; j++)
        S->cart_sslot[2 * j] = S->cart_sslot[2 * j + 1] = -1;
    for (int i = 0; i < S->s; i++) {
        int nz = -1, units = 0;
        for (int j = 0; j < d; j++)
            if (off[(size_t)i * d + j]) {
                nz = j;
                units += abs(off[(size_t)i * d + j]) == 1 ? 1 : 2;
            }
        if (nz < 0 || units != 1)
            return;
        /* offset -e_j: sent as block 2j (to the -1 neighbor), received as
         * block 2j+1 (from the +1 neighbor, rank - offset) */
        if (off[(size_t)i * d + nz] < 0) {
            S->cart_sslot[2 * nz] = i;
            S->cart_rslot[2 * nz + 1] = i;
        } else {
            S->cart_sslot[2 * nz + 1] = i;
            S->cart_rslot[2 * nz] = i;
        }
    }
    for (int k = 0; k < 2 * d; k++)
        if (S->cart_sslot[k] < 0)
            return;
    S->ncart = 2 * d;
}

/* One call of variant v. */
static int run(variant *v, const setup *S, buffers *B)
{
    int b = B->b, rc;
    switch (v->kind) {
    case V_ISO:
        if (S->wform)
            return run_iso_w(S, B, v->comm);
        if (S->allgather)
            return Iso_neighbor_allgather(B->send, b, MPI_BYTE, B->recv, b, MPI_BYTE, v->comm);
        return Iso_neighbor_alltoall(B->send, b, MPI_BYTE, B->recv, b, MPI_BYTE, v->comm);
    case V_PERSISTENT:
        if ((rc = Iso_start(&v->req)) != MPI_SUCCESS)
            return rc;
        return Iso_wait(&v->req);
    case V_MPI_W:
        return MPI_Neighbor_alltoallw(B->send, B->wscounts, B->wsdispls, B->wstypes, B->recv,
                                      B->wrcounts, B->wrdispls, B->wrtypes, v->comm);
    case V_MPI:
        if (S->allgather)
            return MPI_Neighbor_allgather(B->send, b, MPI_BYTE, B->crecv, b, MPI_BYTE, v->comm);
        return MPI_Neighbor_alltoall(B->csend, b, MPI_BYTE, B->crecv, b, MPI_BYTE, v->comm);
    case V_HAND: {
        int n = 0;
        for (int i = 0; i < S->s; i++)
            if (S->src[i] != MPI_PROC_NULL &&
                (rc = MPI_Irecv(B->recv + (size_t)i * b, b, MPI_BYTE, S->src[i], i, v->comm,
                                &S->hreq[n++])) != MPI_SUCCESS)
                return rc;
        for (int i = 0; i < S->s; i++)
            if (S->dst[i] != MPI_PROC_NULL &&
                (rc = MPI_Isend(B->send + (S->allgather ? 0 : (size_t)i * b), b, MPI_BYTE,
                                S->dst[i], i, v->comm, &S->hreq[n++])) != MPI_SUCCESS)
                return rc;
/* MPICH's access attributes make gcc flag MPI_STATUSES_IGNORE (NULL). */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpragmas"
#pragma GCC diagnostic ignored "-Wstringop-overflow"
        return MPI_Waitall(n, S->hreq, MPI_STATUSES_IGNORE);
#pragma GCC diagnostic pop
    }
    case V_MPI_W_INIT:
    case V_CART:
    case V_MEMCPY:
        return run_reference(v, S, B);
    case V_PEER:
        return peer_call(v->comm, S->allgather, B->send, B->recv, b);
    }
    return MPI_ERR_OTHER;
}

/* The oracle: one Isend and one Irecv per neighbor index, tag = index. */
static void oracle(const setup *S, buffers *B, unsigned char *out)
{
    MPI_Request *req = xmalloc(sizeof(MPI_Request) * (size_t)(2 * S->s + 1));
    MPI_Status *st = xmalloc(sizeof(MPI_Status) * (size_t)(2 * S->s + 1));
    int n = 0, b = B->b;
    for (int i = 0; i < S->s; i++)
        if (S->src[i] != MPI_PROC_NULL)
            TRY(MPI_Irecv(out + (size_t)i * b, b, MPI_BYTE, S->src[i], i, S->cart, &req[n++]));
    for (int i = 0; i < S->s; i++)
        if (S->dst[i] != MPI_PROC_NULL)
            TRY(MPI_Isend(B->send + (size_t)(S->allgather ? 0 : i) * b, b, MPI_BYTE,
                          S->dst[i], i, S->cart, &req[n++]));
    TRY(MPI_Waitall(n, req, st)); /* (not MPI_STATUSES_IGNORE: gcc warns with MPICH) */
    free(req);
    free(st);
}

#define SENTINEL 0xA5

/* Runs v once into a sentinel-filled receive buffer and compares with the
 * oracle's; returns 0 if equal.  Also counts v's MPI_Isend calls. */
static int verify(variant *v, const setup *S, buffers *B, const unsigned char *expect,
                  unsigned char *got)
{
    size_t n = (size_t)S->s * B->b;
    int rc;
    if (v->kind == V_MEMCPY) /* a reference, not a collective */
        return 0;
    if (v->kind == V_CART)
        memset(B->w.cartrecv, SENTINEL, (size_t)S->ncart * B->b);
    memset(B->recv, SENTINEL, n);
    memset(B->crecv, SENTINEL, (size_t)S->indeg * B->b);
    count_sends = count_bytes = 0;
    counting = 1;
    rc = run(v, S, B);
    counting = 0;
    v->sends = count_sends;
    v->bytes = count_bytes;
    if (rc != MPI_SUCCESS) {
        char msg[MPI_MAX_ERROR_STRING];
        int len;
        MPI_Error_string(rc, msg, &len);
        fprintf(stderr, "FAIL rank %d: %s, %d B blocks: returned error: %s\n", S->rank, v->name,
                B->b, msg);
        return 1;
    }
    if (v->kind == V_MPI) { /* compact layout: put block k into its slot */
        memset(got, SENTINEL, n);
        for (int k = 0; k < S->indeg; k++)
            memcpy(got + (size_t)S->rslot[k] * B->b, B->crecv + (size_t)k * B->b, (size_t)B->b);
    } else if (v->kind == V_CART) {
        memset(got, SENTINEL, n);
        for (int k = 0; k < S->ncart; k++)
            memcpy(got + (size_t)S->cart_rslot[k] * B->b, B->w.cartrecv + (size_t)k * B->b,
                   (size_t)B->b);
    } else {
        memcpy(got, B->recv, n);
    }
    for (int i = 0; i < S->s; i++) {
        size_t at = (size_t)i * B->b;
        if (memcmp(got + at, expect + at, (size_t)B->b)) {
            int j = 0;
            while (got[at + j] == expect[at + j])
                j++;
            fprintf(stderr,
                    "FAIL rank %d: %s, %d B blocks: slot %d (from rank %d), byte %d: "
                    "expected 0x%02x, got 0x%02x%s\n",
                    S->rank, v->name, B->b, i, S->src[i], j, expect[at + j], got[at + j],
                    got[at + j] == SENTINEL ? " (slot not written?)" : "");
            return 1;
        }
    }
    return 0;
}

/* ---- statistics ---------------------------------------------------------- */

/* Quantile q of sorted x[0..n-1], linear interpolation. */
static double quantile(const double *x, int n, double q)
{
    double pos = q * (n - 1);
    int lo = (int)pos;
    if (lo >= n - 1)
        return x[n - 1];
    return x[lo] + (pos - lo) * (x[lo + 1] - x[lo]);
}

/* The machine's load averages (Linux), to judge how quiet a run was. */
static const char *loadavg(void)
{
    static char load[128];
    FILE *f = fopen("/proc/loadavg", "r");
    strcpy(load, "?");
    if (f) {
        if (fgets(load, sizeof load, f) && strchr(load, '\n'))
            *strchr(load, '\n') = '\0';
        fclose(f);
    }
    return load;
}

/* ---- machine-readable output (bench/run) ------------------------------------ */

/* One line per repetition and variant at block size b:
 *   @row exp=exchange coll=.. shape=.. d=.. r=.. inner=.. periodic=T order=.. drop=..
 *        dims=AxB s=.. np=.. block=.. competitor=ID rep=.. iters=.. time_us=.. [picked=..]
 *        [wrong=1] [unchecked=folded (--folded-above)]
 * tmax: nv x reps times per call in seconds (max over ranks). */
static void print_rows(const options *o, const setup *S, const variant *V, int nv,
                       const int *dims, const int *periods, int b, int iters, const double *tmax)
{
    static const char *const order_names[] = {"row", "col", "random"};
    char params[256];
    int t = 0, n;
    while (t < o->d && periods[t])
        t++;
    n = snprintf(params, sizeof params,
                 "exp=exchange coll=%s%s shape=%s d=%d r=%d inner=%d periodic=%d order=%s "
                 "drop=%d dims=",
                 o->allgather ? "allgather" : "alltoall", o->gen.wform ? "w" : "",
                 o->moore ? "moore" : "vonneumann", o->d, o->radius, o->gen.inner, t,
                 order_names[o->gen.order], o->drop);
    for (int j = 0; j < o->d && n < (int)sizeof params; j++)
        n += snprintf(params + n, sizeof params - (size_t)n, "%s%d", j ? "x" : "", dims[j]);
    for (int k = 0; k < nv; k++)
        for (int rep = 0; rep < o->reps; rep++)
            printf("@row %s s=%d np=%d block=%d competitor=%s rep=%d iters=%d time_us=%.4f%s%s%s%s\n",
                   params, S->s, S->nprocs, b, V[k].id, rep, iters,
                   tmax[(size_t)k * o->reps + rep] * 1e6, V[k].picked[0] ? " picked=" : "",
                   V[k].picked, V[k].wrong ? " wrong=1" : "",
                   folded_size(o, b) ? " unchecked=folded" : "");
    fflush(stdout);
}

/* ---- main ---------------------------------------------------------------- */

static int add_variant(variant *V, int *nv, const char *name, vkind kind, int alg)
{
    if (*nv == MAXV)
        return -1;
    char id[sizeof V[*nv].id];
    memcpy(id, V[*nv].id, sizeof id); /* label_variants' */
    memset(&V[*nv], 0, sizeof V[*nv]);
    memcpy(V[*nv].id, id, sizeof id);
    snprintf(V[*nv].name, sizeof V[*nv].name, "%s", name);
    V[*nv].kind = kind;
    V[*nv].alg = alg;
    V[*nv].comm = MPI_COMM_NULL;
    V[*nv].req = ISO_REQUEST_NULL;
    (*nv)++;
    return 0;
}

/* Variants from the --variants list, in the order given. */
/* Names V[nv] (if it gets added) by its --variants word, for @row lines. */
static void label_variants(variant *V, int nv, const char *tok)
{
    if (nv < MAXV)
        snprintf(V[nv].id, sizeof V[nv].id, "%s", tok);
}

/* The reference variants added for bench/run (mpiw_init, cart, memcpy):
 * 1 if tok is one (added, or left out with a note where this MPI or
 * neighborhood has none), 0 if not, -1 if V is full. */
static int reference_variant(const char *tok, variant *V, int *nv, const setup *S)
{
    int rc = 0;
    if (!strcmp(tok, "mpiw_init")) {
        if (MPI_VERSION >= 4)
            rc = add_variant(V, nv, "MPI_Neighbor_alltoallw_init", V_MPI_W_INIT, -1);
        else if (S->rank == 0)
            printf("# mpiw_init left out: MPI_Neighbor_alltoallw_init needs MPI 4, this is "
                   "MPI %d.%d\n", MPI_VERSION, MPI_SUBVERSION);
    } else if (!strcmp(tok, "cart")) {
        if (S->ncart && !S->wform)
            rc = add_variant(V, nv, "MPI on the Cartesian comm", V_CART, -1);
        else if (S->rank == 0)
            printf("# cart left out: only for von Neumann radius 1 (all 2d unit offsets), "
                   "not the w forms\n");
    } else if (!strcmp(tok, "memcpy"))
        rc = add_variant(V, nv, "memcpy (bytes received)", V_MEMCPY, -1);
    else
        return 0;
    return rc < 0 ? -1 : 1;
}

/* The peer's competitors (bench/peer.h): 1 if tok is peer or peer_trivial
 * (added, or left out with a note saying why), 0 if not, -1 if V is full. */
static int peer_variant(const char *tok, variant *V, int *nv, const setup *S)
{
    int trivial = !strcmp(tok, "peer_trivial");
    const char *why;
    if (!trivial && strcmp(tok, "peer"))
        return 0;
    why = peer_unavailable(S->torus, S->wform);
    if (why == NULL)
        return add_variant(V, nv, trivial ? "peer trivial (TU Wien)" : "peer combining (TU Wien)",
                           V_PEER, trivial) < 0 ? -1 : 1;
    if (S->rank == 0)
        printf("# %s left out: %s\n", tok, why);
    return 1;
}

static int make_variants(const options *o, variant *V, const char *mpi_plain, const setup *S)
{
    char list[256 + 128], *tok, *save = NULL;
    int nv = 0;
    snprintf(list, sizeof list, "%s%s", o->variants,
             o->persistent ? ",pdirect,pdimwise:pack,pdimwise:datatype,pbruck:pack,"
                             "pbruck:datatype,pauto"
                           : "");
    for (tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        char name[40];
        int a, found = 0, persistent = tok[0] == 'p', ref; /* pdirect, pauto, ... */
        label_variants(V, nv, tok); /* a variant added below is named tok in @row lines */
        if ((ref = reference_variant(tok, V, &nv, S)) < 0 ||
            (!ref && (ref = peer_variant(tok, V, &nv, S)) < 0))
            return -1;
        if (ref) /* (before the p prefix of the persistent forms: peer is no pALG) */
            continue;
        if (S->wform && strstr(tok, ":datatype")) { /* an error for the v and w forms */
            if (S->rank == 0)
                printf("# %s left out: datatype mode with a combining algorithm is an error "
                       "for the w forms\n", tok);
            continue;
        }
        if (!strcmp(tok, "mpiw")) {
            if (add_variant(V, &nv, "MPI_Neighbor_alltoallw", V_MPI_W, -1))
                return -1;
            continue;
        }
        if (!strcmp(tok, "mpi")) {
            if (add_variant(V, &nv, mpi_plain, V_MPI, -1))
                return -1;
            continue;
        }
        if (!strcmp(tok, "hand")) {
            if (add_variant(V, &nv, "Isend/Irecv by hand", V_HAND, -1))
                return -1;
            continue;
        }
        for (a = 0; a < NALG && !found; a++)
            if (!strcmp(tok + persistent, alg_names[a])) {
                snprintf(name, sizeof name, "iso %s%s", alg_names[a],
                         persistent ? " (persistent)" : "");
                if (add_variant(V, &nv, name, persistent ? V_PERSISTENT : V_ISO, a))
                    return -1;
                found = 1;
            }
        if (!found) {
            fprintf(stderr, "isobench: unknown variant '%s'\n", tok);
            return -1;
        }
    }
    return nv;
}

int main(int argc, char **argv)
{
    options o;
    setup S;
    variant V[MAXV];
    int nv, dims[MAXD] = {0}, periods[MAXD], mine[MAXD], *off, failed = 0;
    int *isrc, *idst, *gsrc, *gdst, *weights, tag_ub_ok = 1;
    unsigned seed = 12345;
    MPI_Comm isocomm[NALG];
    const char *coll_name;
    char libver[MPI_MAX_LIBRARY_VERSION_STRING];
    int len;

    TRY(MPI_Init(&argc, &argv));
    TRY(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
    memset(&S, 0, sizeof S);
    TRY(MPI_Comm_rank(MPI_COMM_WORLD, &S.rank));
    TRY(MPI_Comm_size(MPI_COMM_WORLD, &S.nprocs));
    if (parse(argc, argv, &o)) {
        if (S.rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    S.allgather = o.allgather;
    S.wform = o.gen.wform;
    coll_name = o.allgather ? "allgather" : "alltoall";

    /* Cartesian communicator (no reordering: ranks as in MPI_COMM_WORLD) */
    S.torus = 1;
    for (int j = 0; j < o.d; j++) {
        dims[j] = o.dims[j];
        periods[j] = o.gen.tper < 0 ? o.periodic : j < o.gen.tper;
        S.torus = S.torus && periods[j];
    }
    if (dims_mismatch(o.d, dims, S.nprocs)) {
        if (S.rank == 0)
            fprintf(stderr, "isobench: --dims must multiply to the %d ranks\n", S.nprocs);
        MPI_Finalize();
        return 2;
    }
    TRY(MPI_Dims_create(S.nprocs, o.d, dims));
    TRY(MPI_Cart_create(MPI_COMM_WORLD, o.d, dims, periods, 0, &S.cart));
    TRY(MPI_Cart_coords(S.cart, S.rank, o.d, mine));

    S.s = make_offsets(o.d, o.radius, o.gen.inner, o.gen.order == ORDER_COL, o.moore, &off);
    if (o.gen.order == ORDER_RANDOM)
        shuffle_offsets(off, S.s, o.d);
    if (o.drop > 0) { /* an asymmetric neighborhood: indegree != outdegree on meshes */
        int keep = o.drop < S.s ? S.s - o.drop : 0;
        memmove(off, off + (size_t)(S.s - keep) * o.d, sizeof(int) * (size_t)keep * o.d);
        S.s = keep;
    }
    S.src = xmalloc(sizeof(int) * (size_t)S.s);
    S.dst = xmalloc(sizeof(int) * (size_t)S.s);
    for (int i = 0; i < S.s; i++) {
        S.src[i] = shifted_rank(S.cart, o.d, dims, periods, mine, off + (size_t)i * o.d, -1);
        S.dst[i] = shifted_rank(S.cart, o.d, dims, periods, mine, off + (size_t)i * o.d, +1);
    }
    cart_slots(&S, off, o.d);
    {
        void *ub;
        int flag;
        TRY(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &ub, &flag));
        tag_ub_ok = flag && *(int *)ub >= S.s;
        if (!tag_ub_ok) {
            if (S.rank == 0)
                fprintf(stderr, "isobench: %d neighbors exceed MPI_TAG_UB\n", S.s);
            MPI_Finalize();
            return 2;
        }
    }

    /* one isocomm per algorithm, each on its own copy of the torus */
    for (int a = 0; a < NALG; a++) {
        MPI_Comm dup;
        MPI_Info info;
        TRY(MPI_Comm_dup(S.cart, &dup));
        TRY(MPI_Info_create(&info));
        TRY(MPI_Info_set(info, "iso_algorithm", alg_algorithm[a]));
        TRY(MPI_Info_set(info, "iso_combine", alg_combine[a]));
        if (a == ALG_AUTO_MODEL)
            TRY(MPI_Info_set(info, "iso_tune", "off"));
        TRY(Iso_neighborhood_create_with_info(dup, S.s, off, info, &isocomm[a]));
        TRY(MPI_Info_free(&info));
    }

    /* the library's neighbor lists must match ours; the graph lists must be
     * them without MPI_PROC_NULL, in the same order */
    {
        int s2, ind, outd;
        TRY(Iso_neighborhood_count(isocomm[0], &s2, &ind, &outd));
        isrc = xmalloc(sizeof(int) * (size_t)S.s);
        idst = xmalloc(sizeof(int) * (size_t)S.s);
        gsrc = xmalloc(sizeof(int) * (size_t)S.s);
        gdst = xmalloc(sizeof(int) * (size_t)S.s);
        S.rslot = xmalloc(sizeof(int) * (size_t)S.s);
        S.tslot = xmalloc(sizeof(int) * (size_t)S.s);
        TRY(Iso_neighborhood_get(isocomm[0], S.s, isrc, idst));
        TRY(Iso_neighborhood_graph_get(isocomm[0], S.s, gsrc, gdst));
        S.indeg = S.outdeg = 0;
        for (int i = 0; i < S.s; i++) {
            if (S.src[i] != MPI_PROC_NULL)
                S.rslot[S.indeg++] = i;
            if (S.dst[i] != MPI_PROC_NULL)
                S.tslot[S.outdeg++] = i;
        }
        if (s2 != S.s || ind != S.indeg || outd != S.outdeg) {
            fprintf(stderr, "FAIL rank %d: Iso_neighborhood_count gives s=%d in=%d out=%d, "
                    "expected %d %d %d\n", S.rank, s2, ind, outd, S.s, S.indeg, S.outdeg);
            failed = 1;
        }
        for (int i = 0; i < S.s && !failed; i++)
            if (isrc[i] != S.src[i] || idst[i] != S.dst[i]) {
                fprintf(stderr, "FAIL rank %d: Iso_neighborhood_get entry %d: %d %d, "
                        "expected %d %d\n", S.rank, i, isrc[i], idst[i], S.src[i], S.dst[i]);
                failed = 1;
            }
        for (int k = 0; k < S.indeg && !failed; k++)
            failed = gsrc[k] != S.src[S.rslot[k]];
        for (int k = 0; k < S.outdeg && !failed; k++)
            failed = gdst[k] != S.dst[S.tslot[k]];
        if (failed)
            fprintf(stderr, "FAIL rank %d: Iso_neighborhood_graph_get differs from the "
                    "neighborhood without MPI_PROC_NULL\n", S.rank);
        TRY(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        if (failed) {
            MPI_Finalize();
            return 1;
        }
        /* unit weights rather than MPI_UNWEIGHTED, which gcc takes for an
         * empty array with Open MPI's mpi.h */
        weights = xmalloc(sizeof(int) * (size_t)S.s);
        for (int i = 0; i < S.s; i++)
            weights[i] = 1;
        TRY(MPI_Dist_graph_create_adjacent(S.cart, S.indeg, gsrc, weights, S.outdeg, gdst,
                                           weights, MPI_INFO_NULL, 0, &S.graph));
        TRY(MPI_Comm_dup(S.cart, &S.hand));
        S.hreq = xmalloc(sizeof(MPI_Request) * (size_t)(2 * S.s + 1));
        free(weights);
    }

    nv = make_variants(&o, V, o.allgather ? "MPI_Neighbor_allgather" : "MPI_Neighbor_alltoall",
                       &S);
    if (nv <= 0) {
        if (S.rank == 0)
            usage();
        MPI_Finalize();
        return 2;
    }
    for (int k = 0; k < nv; k++) {
        V[k].comm = V[k].kind == V_ISO || V[k].kind == V_PERSISTENT ? isocomm[V[k].alg]
                    : V[k].kind == V_HAND                          ? S.hand
                    : V[k].kind == V_CART                          ? S.cart
                                                                   : S.graph;
        V[k].t = xmalloc(sizeof(double) * (size_t)o.reps);
        if (V[k].kind == V_PEER) /* on its own Cartesian communicator */
            TRY(peer_create(S.cart, o.d, dims, periods, S.s, off, V[k].alg, &V[k].comm));
    }

    /* header and schedule figures */
    TRY(MPI_Get_library_version(libver, &len));
    if (S.rank == 0) {
        char *nl = strchr(libver, '\n');
        int figs[NFIG][3];
        long long hops[NFIG];
        if (nl)
            *nl = '\0';
        printf("# isobench: %s%s, %s radius %d", coll_name, o.gen.wform ? "w" : "",
               o.moore ? "Moore" : "von Neumann", o.radius);
        if (o.gen.inner)
            printf(" minus radius %d", o.gen.inner);
        if (o.gen.tper >= 0 && o.gen.tper < o.d)
            printf(", %d-D grid periodic in the first %d dimensions ", o.d, o.gen.tper);
        else
            printf(", %d-D %s ", o.d, o.periodic ? "torus" : "mesh");
        for (int j = 0; j < o.d; j++)
            printf("%s%d", j ? "x" : "", dims[j]);
        printf(", s = %d neighbors", S.s);
        if (o.drop)
            printf(" (first %d offsets left out)", o.drop);
        printf(", %d ranks\n# MPI: %s\n", S.nprocs, libver);
        printf("# load average at start (/proc/loadavg): %s\n", loadavg());
        printf("# ISO_COST_FILE: %s\n",
               getenv("ISO_COST_FILE") ? getenv("ISO_COST_FILE") : "(unset: built-in defaults)");
#ifdef ISO_BENCH_PEER_DIR
        printf("# peer: TU Wien's Cartesian collectives, linked from %s\n", ISO_BENCH_PEER_DIR);
#endif
        printf("# schedule figures of rank 0 (Iso_schedule_info: 1-ported rounds, messages "
               "sent, blocks sent counting hops):\n");
        for (int a = 0; a < NFIG; a++) {
            TRY(Iso_schedule_info(isocomm[a], coll_name, alg_names[a], &figs[a][0],
                                  &figs[a][1], &hops[a]));
            printf("#   %-8s rounds %4d  messages %4d  block hops %6lld", alg_names[a],
                   figs[a][0], figs[a][1], hops[a]);
            if (a == ALG_AUTO) {
                printf("  (for 8 B blocks: same figures as");
                for (int f = 0; f < ALG_AUTO; f++)
                    if (figs[f][0] == figs[a][0] && figs[f][1] == figs[a][1] &&
                        hops[f] == hops[a])
                        printf(" %s", alg_names[f]);
                printf(")");
            }
            printf("\n");
        }
        printf("# method: %d repetitions; per repetition, every variant in random order: one "
               "untimed call, a barrier, a timed batch of iters calls;\n# time per call = batch "
               "time / iters, max over ranks; median [q1, q3] over repetitions, microseconds\n",
               o.reps);
        fflush(stdout);
    } else {
        for (int a = 0; a < NFIG; a++) {
            int r, m;
            long long h;
            TRY(Iso_schedule_info(isocomm[a], coll_name, alg_names[a], &r, &m, &h));
        }
    }

    for (int z = 0; z < o.nsizes && !failed; z++) {
        buffers B;
        unsigned char *expect, *got;
        int b = o.sizes[z], iters = o.iters, ref_w = -1, ref_direct = -1, first_auto = -1;
        int folded = folded_size(&o, b);
        double *tmax = xmalloc(sizeof(double) * (size_t)nv * o.reps);

        buffers_init(&B, &S, b, folded);
        for (int k = 0; k < nv; k++)
            if (V[k].kind == V_PERSISTENT)
                TRY(iso_request(&S, &B, V[k].comm, 1, &V[k].req));
            else if (V[k].kind == V_MPI_W_INIT)
                TRY(mpi_w_init(&V[k], &B));
            else if (V[k].kind == V_PEER) /* its schedule holds these buffers' addresses */
                TRY(peer_bind(V[k].comm, S.allgather, B.send, B.recv, b));

        /* verification: oracle against the expected pattern, every variant
         * against the oracle.  Above --folded-above the block buffers are
         * folded (data_alloc), so the data are meaningless: the same calls
         * are made, their results not looked at; the sizes before it in
         * this launch were checked */
        expect = data_alloc((size_t)S.s * b, folded);
        got = data_alloc((size_t)S.s * b, folded);
        memset(expect, SENTINEL, (size_t)S.s * b);
        oracle(&S, &B, expect);
        for (int i = 0; i < S.s && !failed && !folded; i++)
            for (int j = 0; j < b && S.src[i] != MPI_PROC_NULL && !failed; j++)
                if (expect[(size_t)i * b + j] !=
                    pattern(S.src[i], o.allgather ? 0 : i, (size_t)j)) {
                    fprintf(stderr, "FAIL rank %d: Isend/Irecv oracle, %d B blocks: slot %d "
                            "byte %d wrong\n", S.rank, b, i, j);
                    failed = 1;
                }
        for (int k = 0; k < nv; k++) {
            V[k].wrong = verify(&V[k], &S, &B, expect, got) && !folded;
            TRY(MPI_Allreduce(MPI_IN_PLACE, &V[k].wrong, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
            /* wrong data from MPI's own collectives (or the peer) is a
             * finding about them: reported, timed anyway, fatal only with
             * --strict */
            if (V[k].wrong && (o.strict || V[k].kind == V_ISO || V[k].kind == V_PERSISTENT))
                failed = 1;
        }
        TRY(MPI_Allreduce(MPI_IN_PLACE, &failed, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD));
        if (S.rank == 0) {
            printf("\n## %d B blocks\n\nverification against the Isend/Irecv oracle: ", b);
            if (folded)
                printf("not possible, the simulator folds these buffers; the same variants "
                       "were checked at the sizes up to %d B in this launch (--folded-above)",
                       o.folded_above);
            for (int k = 0; k < nv && !folded; k++)
                printf("%s%s %s", k ? ", " : "", V[k].name, V[k].wrong ? "FAIL" : "ok");
            printf("\n");
            for (int k = 0; k < nv; k++)
                if (V[k].wrong && !failed)
                    printf("FAIL: %s delivers wrong data (%s, details on stderr); "
                           "timed anyway, marked WRONG\n", V[k].name,
                           V[k].kind == V_PEER ? "the peer's bug" : "MPI library bug");
            fflush(stdout);
        }

        /* blocking auto under runtime tuning (iso_tune, on by default):
         * its trial calls (include/isocoll.h: at most 20 of the candidates
         * after a lead of up to 16 of the model's pick) come before the
         * measurement, untimed, until this block size's shape is decided
         * (on every process at the same call); its record is printed */
        for (int k = 0; k < nv && !failed; k++) {
            char rec[1024], want[32];
            int decided = 0;
            if (V[k].kind != V_ISO || V[k].alg != ALG_AUTO)
                continue;
            snprintf(want, sizeof want, " bytes=%d ", b);
            for (int w = 0; w < 64 && !decided; w++) {
                int state = 1;
                TRY(run(&V[k], &S, &B));
                for (int i = 0; state != 0 && !decided; i++) {
                    TRY(Iso_tune_info(V[k].comm, i, &state, rec, sizeof rec));
                    decided = state == 2 && strstr(rec, want) != NULL;
                }
            }
            if (decided && S.rank == 0)
                printf("tuning of %s: %s\n", V[k].name, rec);
        }

        /* what auto picked, from the library (Iso_request_schedule_info):
         * the persistent request's own; for blocking calls that of a
         * persistent request with the same arguments, which chooses alike
         * (both run many times on types built once: the call cache) */
        for (int k = 0; k < nv && !failed; k++) {
            const char *alg, *mode;
            int rounds, messages;
            long long bytes;
            Iso_request req = ISO_REQUEST_NULL;
            V[k].picked[0] = '\0';
            if ((V[k].kind != V_ISO && V[k].kind != V_PERSISTENT) || !is_auto(V[k].alg))
                continue;
            if (V[k].kind == V_PERSISTENT)
                req = V[k].req;
            else
                TRY(iso_request(&S, &B, V[k].comm, 1, &req));
            TRY(Iso_request_schedule_info(req, &alg, &mode, &rounds, &messages, &bytes));
            snprintf(V[k].picked, sizeof V[k].picked, "%s%s%s", alg,
                     strcmp(mode, "none") ? ":" : "", strcmp(mode, "none") ? mode : "");
            if (V[k].kind == V_ISO)
                TRY(Iso_request_free(&req));
            if (first_auto < 0)
                first_auto = k;
        }

        if (!failed) {
            /* warm-up, then a pilot to choose iters if not given: the fastest
             * of 5 single calls per variant (max over ranks); iters makes a
             * batch of the fastest variant take target_ms, but a batch of
             * the slowest no more than 25 times that.  With --iters there
             * is nothing to choose: no pilot (under SMPI its 5 calls per
             * variant were 5 of a launch's 12) */
            for (int k = 0; k < nv; k++)
                for (int w = 0; w < 2; w++)
                    TRY(run(&V[k], &S, &B));
            if (iters == 0) {
                double pilot[MAXV], lo = 1e30, hi = 0;
                for (int k = 0; k < nv; k++) {
                    pilot[k] = 1e30;
                    for (int w = 0; w < 5; w++) {
                        double t0;
                        TRY(MPI_Barrier(S.cart));
                        t0 = MPI_Wtime();
                        TRY(run(&V[k], &S, &B));
                        t0 = MPI_Wtime() - t0;
                        pilot[k] = t0 < pilot[k] ? t0 : pilot[k];
                    }
                }
                TRY(MPI_Allreduce(MPI_IN_PLACE, pilot, nv, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
                for (int k = 0; k < nv; k++) {
                    if (V[k].kind == V_MEMCPY) /* a reference, far faster than any call */
                        continue;
                    lo = pilot[k] < lo ? pilot[k] : lo;
                    hi = pilot[k] > hi ? pilot[k] : hi;
                }
                double target = o.target_ms * 1e-3, want = target / (lo > 1e-9 ? lo : 1e-9);
                if (want * hi > 25 * target)
                    want = 25 * target / hi;
                iters = want < 1 ? 1 : want > 10000 ? 10000 : (int)want;
            }

            /* the measurement: per repetition the variants in a random
             * order (the same on every rank), so that no variant always
             * follows the same one; before its batch, one untimed call
             * warms the variant's buffers up (iters may be 1).  That call
             * of the last repetition counts the sends again: auto's count
             * in verify was of its first tuning trial, not of its pick */
            for (int rep = 0; rep < o.reps; rep++) {
                int order[MAXV];
                bench_random_order(order, nv, &seed);
                for (int j = 0; j < nv; j++) {
                    variant *v = &V[order[j]];
                    double t0;
                    if (rep == o.reps - 1 && v->kind != V_MEMCPY) {
                        count_sends = count_bytes = 0;
                        counting = 1;
                    }
                    TRY(run(v, &S, &B));
                    if (counting) {
                        counting = 0;
                        v->sends = count_sends;
                        v->bytes = count_bytes;
                    }
                    TRY(MPI_Barrier(S.cart));
                    t0 = MPI_Wtime();
                    for (int it = 0; it < iters; it++)
                        TRY(run(v, &S, &B));
                    v->t[rep] = (MPI_Wtime() - t0) / iters;
                }
            }
            for (int k = 0; k < nv; k++)
                memcpy(tmax + (size_t)k * o.reps, V[k].t, sizeof(double) * (size_t)o.reps);
            TRY(MPI_Reduce(S.rank == 0 ? MPI_IN_PLACE : tmax, tmax, nv * o.reps, MPI_DOUBLE,
                           MPI_MAX, 0, MPI_COMM_WORLD));
            for (int k = 0; k < nv; k++) {
                long long mx[2] = {V[k].sends, V[k].bytes};
                TRY(MPI_Reduce(S.rank == 0 ? MPI_IN_PLACE : mx, mx, 2, MPI_LONG_LONG, MPI_MAX,
                               0, MPI_COMM_WORLD));
                V[k].sends = mx[0];
                V[k].bytes = mx[1];
            }
        }

        if (S.rank == 0 && !failed && o.gen.rows)
            print_rows(&o, &S, V, nv, dims, periods, b, iters, tmax);
        if (S.rank == 0 && !failed) {
            double med[MAXV], q1[MAXV], q3[MAXV];
            for (int k = 0; k < nv; k++) {
                double *x = tmax + (size_t)k * o.reps;
                qsort(x, (size_t)o.reps, sizeof(double), bench_cmp_double);
                med[k] = quantile(x, o.reps, 0.5) * 1e6;
                q1[k] = quantile(x, o.reps, 0.25) * 1e6;
                q3[k] = quantile(x, o.reps, 0.75) * 1e6;
                if (V[k].kind == V_MPI_W)
                    ref_w = k;
                if (V[k].kind == V_ISO && V[k].alg == 0)
                    ref_direct = k;
            }
            printf("iters per batch: %d; load average after the measurement: %s\n\n", iters,
                   loadavg());
            printf("| variant | block B | median us | q1 us | q3 us | / iso direct | / "
                   "MPI alltoallw | sends/call | KiB sent/call |\n");
            printf("|---|--:|--:|--:|--:|--:|--:|--:|--:|\n");
            for (int k = 0; k < nv; k++) {
                char rd[16] = "-", rw[16] = "-", sends[24] = "-", kib[24] = "-";
                if (ref_direct >= 0)
                    snprintf(rd, sizeof rd, "%.2f", med[k] / med[ref_direct]);
                if (ref_w >= 0)
                    snprintf(rw, sizeof rw, "%.2f", med[k] / med[ref_w]);
                if (V[k].kind == V_ISO || V[k].kind == V_PERSISTENT || V[k].kind == V_PEER) {
                    snprintf(sends, sizeof sends, "%lld", V[k].sends);
                    snprintf(kib, sizeof kib, "%.1f", V[k].bytes / 1024.0);
                }
                printf("| %-24s%-13s | %6d | %10.2f | %10.2f | %10.2f | %5s | %5s | %5s | %8s |\n",
                       V[k].name, V[k].wrong ? " (WRONG DATA)" : "", b, med[k], q1[k], q3[k], rd,
                       rw, sends, kib);
            }
            /* auto against the best fixed algorithm of the same kind */
            for (int k = 0; k < nv; k++) {
                int best = -1;
                if (!V[k].picked[0])
                    continue;
                for (int f = 0; f < nv; f++)
                    if (V[f].kind == V[k].kind && !is_auto(V[f].alg) &&
                        (best < 0 || med[f] < med[best]))
                        best = f;
                printf("%s%s at %d B picked %s", k == first_auto ? "\n" : "", V[k].name, b,
                       V[k].picked);
                for (int f = 0; f < nv; f++) /* the same schedule: a gauge of the noise */
                    if (V[f].kind == V[k].kind && !is_auto(V[f].alg) &&
                        !strcmp(V[k].picked, alg_names[V[f].alg]))
                        printf(" (auto / %s = %.2f)", alg_names[V[f].alg], med[k] / med[f]);
                if (best >= 0)
                    printf("; fastest fixed: %s (%.2f us); auto / fastest = %.2f", V[best].name,
                           med[best], med[k] / med[best]);
                printf("\n");
            }
            fflush(stdout);
        }
        for (int k = 0; k < nv; k++)
            if (V[k].kind == V_PERSISTENT)
                TRY(Iso_request_free(&V[k].req));
            else if (V[k].kind == V_MPI_W_INIT)
                TRY(MPI_Request_free(&V[k].mreq));
            else if (V[k].kind == V_PEER)
                TRY(peer_unbind(V[k].comm, S.allgather));
        buffers_free(&B);
        data_free(expect, folded);
        data_free(got, folded);
        free(tmax);
    }

    for (int k = 0; k < nv; k++) {
        free(V[k].t);
        if (V[k].kind == V_PEER) /* (its attribute's delete callback frees the rest) */
            TRY(MPI_Comm_free(&V[k].comm));
    }
    for (int a = 0; a < NALG; a++) {
        MPI_Comm c = isocomm[a];
        TRY(Iso_neighborhood_free(&isocomm[a]));
        TRY(MPI_Comm_free(&c));
    }
    TRY(MPI_Comm_free(&S.graph));
    TRY(MPI_Comm_free(&S.hand));
    free(S.hreq);
    TRY(MPI_Comm_free(&S.cart));
    free(off);
    free(S.src);
    free(S.dst);
    free(S.rslot);
    free(S.tslot);
    free(isrc);
    free(idst);
    free(gsrc);
    free(gdst);
    MPI_Finalize();
    return failed ? 1 : 0;
}
