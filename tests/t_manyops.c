/* Many outstanding operations whose datatypes the caller frees at once
 * (issue 14, item 10): 200 nonblocking operations of all eight forms are
 * posted on one isocomm, each with derived types made for it and freed
 * right after the call returns (the library must hold its own), while
 * datatype-mode operations build and free their struct types; they are
 * completed in a random order that differs between ranks.  Runs with
 * dimwise and bruck in datatype mode (the v/w forms pack) and with auto.
 *
 * Every type describes 2 ints at byte offsets 0 and 8 with extent 16, made
 * in one of four ways (vector, struct, indexed, hvector, each resized), so
 * one reference type gives the oracle exchange (tests/oracle.h, computed
 * after all operations are posted); reductions reduce 2 MPI_INT with
 * MPI_SUM (predefined ops take predefined types), summed serially here.
 *
 * NPROCS: 2 4
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define NOPS 200
#define NFORM 8
#define SMAX 8

static int rank;

/* 2 ints at 0 and 8, extent 16, built in one of four ways. */
static MPI_Datatype make_type(int kind)
{
    MPI_Datatype t, inner;
    int bl[2] = {1, 1}, idp[2] = {0, 2};
    MPI_Aint dp[2] = {0, 8};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    switch (kind % 4) {
    case 0:
        MPI_Type_vector(2, 1, 2, MPI_INT, &inner);
        break;
    case 1:
        MPI_Type_create_struct(2, bl, dp, ty, &inner);
        break;
    case 2:
        MPI_Type_indexed(2, bl, idp, MPI_INT, &inner);
        break;
    default:
        MPI_Type_create_hvector(2, 1, 8, MPI_INT, &inner);
        break;
    }
    MPI_Type_create_resized(inner, 0, 16, &t);
    MPI_Type_free(&inner);
    MPI_Type_commit(&t);
    return t;
}

typedef struct {
    int form;
    int sb[4 * SMAX + 4], rb[4 * SMAX + 4], want[4 * SMAX + 4];
    Iso_request req;
} op_t;

static int post(op_t *o, int s, MPI_Comm iso, unsigned *seed)
{
    MPI_Datatype t = make_type((int)(oracle_rand(seed) % 4)), tys[SMAX];
    int cnt[SMAX], idsp[SMAX], rc;
    MPI_Aint adsp[SMAX];
    for (int i = 0; i < s; i++)
        cnt[i] = 1, idsp[i] = i, adsp[i] = (MPI_Aint)i * 16, tys[i] = t;
    switch (o->form) {
    case 0:
        rc = Iso_ineighbor_alltoall(o->sb, 1, t, o->rb, 1, t, iso, &o->req);
        break;
    case 1:
        rc = Iso_ineighbor_alltoallv(o->sb, cnt, idsp, t, o->rb, cnt, idsp, t, iso, &o->req);
        break;
    case 2:
        rc = Iso_ineighbor_alltoallw(o->sb, cnt, adsp, tys, o->rb, cnt, adsp, tys, iso, &o->req);
        break;
    case 3:
        rc = Iso_ineighbor_allgather(o->sb, 1, t, o->rb, 1, t, iso, &o->req);
        break;
    case 4:
        rc = Iso_ineighbor_allgatherv(o->sb, 1, t, o->rb, cnt, idsp, t, iso, &o->req);
        break;
    case 5:
        rc = Iso_ineighbor_allgatherw(o->sb, 1, t, o->rb, cnt, adsp, tys, iso, &o->req);
        break;
    case 6:
        rc = Iso_ineighbor_reduce(o->sb, o->rb, 2, MPI_INT, MPI_SUM, iso, &o->req);
        break;
    default: /* vector i: 2 ints at 16 i and 16 i + 8 */
        rc = Iso_ineighbor_scatter_reduce(o->sb, cnt, adsp, tys, o->rb, 2, MPI_INT, MPI_SUM,
                                          iso, &o->req);
        break;
    }
    MPI_Type_free(&t); /* the caller's type goes at once */
    return rc;
}

static void run(MPI_Comm cart, MPI_Comm ocomm, const char *alg, const char *mode)
{
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
    nbh_t nb = {2, 8, off};
    int s = nb.s, src[SMAX], dst[SMAX], c1[SMAX], *order;
    MPI_Aint sd[SMAX], rd[SMAX], zero[SMAX];
    MPI_Datatype ref = make_type(0), refs[SMAX];
    MPI_Info info;
    MPI_Comm dup, iso, dup_vw, iso_vw; /* iso_vw: the v/w forms (see below) */
    unsigned seed = 4242, oseed = 777u + 31u * (unsigned)rank;
    op_t *ops = calloc(NOPS, sizeof *ops);
    long wrong = 0;
    oracle_neighbors(cart, &nb, src, dst);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", alg);
    MPI_Info_set(info, "iso_combine", mode);
    MPI_Comm_dup(cart, &dup);
    Iso_neighborhood_create_with_info(dup, s, off, info, &iso);
    /* datatype mode cannot carry the v/w forms of alltoall and allgather with
     * a combining algorithm (an error: t_diagnostics); they pack, on a second
     * isocomm, outstanding alongside the others */
    MPI_Info_set(info, "iso_combine", "pack");
    MPI_Comm_dup(cart, &dup_vw);
    Iso_neighborhood_create_with_info(dup_vw, s, off, info, &iso_vw);
    for (int n = 0; n < NOPS; n++) {
        op_t *o = &ops[n];
        int rc;
        o->form = n % NFORM;
        for (int j = 0; j < 4 * SMAX + 4; j++) {
            o->sb[j] = 100000 * rank + 100 * n + j;
            o->rb[j] = o->want[j] = -1;
        }
        rc = post(o, s, o->form % 3 != 0 && o->form < 6 ? iso_vw : iso, &seed);
        CHECK(rc == MPI_SUCCESS, "%s:%s op %d (form %d): post rc=%d", alg, mode, n, o->form, rc);
    }
    /* the oracle: exchanges of the reference type; reductions serially */
    for (int i = 0; i < s; i++)
        c1[i] = 1, sd[i] = rd[i] = (MPI_Aint)i * 16, zero[i] = 0, refs[i] = ref;
    for (int n = 0; n < NOPS; n++) {
        op_t *o = &ops[n];
        if (o->form < 6) {
            oracle_alltoallw_on(o->sb, c1, o->form < 3 ? sd : zero, refs, o->want, c1, rd, refs,
                                cart, ocomm, &nb);
            continue;
        }
        for (int i = 0, any = 0; i < s; i++) {
            if (src[i] == MPI_PROC_NULL)
                continue;
            for (int k = 0; k < 2; k++) { /* the source's sb[k] (reduce) or sb[4i + 2k] */
                int j = o->form == 6 ? k : 4 * i + 2 * k;
                o->want[k] = (any ? o->want[k] : 0) + 100000 * src[i] + 100 * n + j;
            }
            any = 1;
        }
    }
    order = malloc(sizeof(int) * NOPS);
    for (int n = 0; n < NOPS; n++)
        order[n] = n;
    for (int a = NOPS - 1; a > 0; a--) { /* a different order on every rank */
        int b = (int)(oracle_rand(&oseed) % (unsigned)(a + 1)), t = order[a];
        order[a] = order[b];
        order[b] = t;
    }
    for (int q = 0; q < NOPS; q++) {
        op_t *o = &ops[order[q]];
        int rc = Iso_wait(&o->req);
        CHECK(rc == MPI_SUCCESS, "%s:%s op %d: Iso_wait rc=%d", alg, mode, order[q], rc);
        if (memcmp(o->rb, o->want, sizeof o->rb) != 0 && wrong++ < 3)
            CHECK(0, "%s:%s op %d (form %d): wrong data", alg, mode, order[q], o->form);
    }
    CHECK(wrong == 0, "%s:%s: %ld of %d operations wrong", alg, mode, wrong, NOPS);
    tap_result(MPI_COMM_WORLD,
               "%s:%s: %d outstanding operations of all forms, types freed at once, completed "
               "in a different random order on every rank",
               alg, mode, NOPS);
    free(order);
    free(ops);
    MPI_Type_free(&ref);
    Iso_neighborhood_free(&iso);
    MPI_Comm_free(&dup);
    Iso_neighborhood_free(&iso_vw);
    MPI_Comm_free(&dup_vw);
    MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Comm cart, ocomm;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    run(cart, ocomm, "dimwise", "datatype");
    run(cart, ocomm, "bruck", "datatype");
    run(cart, ocomm, "auto", "auto");
    MPI_Comm_free(&ocomm);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
