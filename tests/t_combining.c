/* Message-combining specifics, against the Sendrecv oracle and closed-form
 * schedule figures:
 *  - neighborhoods on a line (multiples of one vector, also diagonal): the
 *    bruck line variant, ceil(log2(s+1)) rounds for {V, 2V, ..., sV};
 *  - Iso_schedule_info figures of the issue: 3D Moore radius 1 (dimwise 6
 *    rounds/messages, alltoall 54 block hops, allgather 26), 2D Moore
 *    radius 3 (dimwise 12, bruck 8, direct 48 messages), and partial
 *    results combined on the way (scatter_reduce 26 vector hops);
 *  - all four collective families on line neighborhoods on tori and meshes.
 * NPROCS: 1 2 4 6 8
 */
#include "oracle.h"
#include "tap.h"
#include <isocoll.h>
#include <stdio.h>

static nbh_t line(int d, const int *v, int from, int to, int with_zero_and_repeat)
{
    nbh_t n = {d, 0, NULL};
    int c[ORACLE_MAXD];
    for (int m = from; m <= to; m++) {
        if (m == 0)
            continue;
        for (int j = 0; j < d; j++)
            c[j] = m * v[j];
        nbh_push(&n, c);
    }
    if (with_zero_and_repeat) {
        nbh_push(&n, (int[ORACLE_MAXD]){0});
        memcpy(c, n.off, sizeof(int) * (size_t)d); /* repeat the first */
        nbh_push(&n, c);
    }
    return n;
}

/* One case: alltoall, allgather, reduce and scatter_reduce against the
 * oracle (integers, so any reduction order is exact). */
static void check_collectives(MPI_Comm cart, const nbh_t *n, const char *what)
{
    int s = n->s, rank, *src = malloc(sizeof(int) * (size_t)(s + 1)),
        *dst = malloc(sizeof(int) * (size_t)(s + 1));
    int *sb = malloc(sizeof(int) * (size_t)(2 * s + 2)), *rb = malloc(sizeof(int) * (size_t)(2 * s + 2));
    int *ob = malloc(sizeof(int) * (size_t)(2 * s + 2)), *cnt = malloc(sizeof(int) * (size_t)(s + 1));
    MPI_Aint *dis = malloc(sizeof(MPI_Aint) * (size_t)(s + 1));
    MPI_Datatype *ty = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    MPI_Comm iso;
    MPI_Comm_rank(cart, &rank);
    oracle_neighbors(cart, n, src, dst);
    CHECK_EQ_INT(Iso_neighborhood_create(cart, s, n->off, &iso), MPI_SUCCESS, "%s: create", what);
    for (int i = 0; i < s; i++) {
        cnt[i] = 2;
        dis[i] = (MPI_Aint)(2 * i * sizeof(int));
        ty[i] = MPI_INT;
    }
    /* alltoall: 2 ints per block */
    for (int i = 0; i < 2 * s; i++) {
        sb[i] = rank * 10000 + i;
        rb[i] = ob[i] = -1;
    }
    Iso_neighbor_alltoall(sb, 2, MPI_INT, rb, 2, MPI_INT, iso);
    oracle_alltoallw(sb, cnt, dis, ty, ob, cnt, dis, ty, cart, n);
    for (int i = 0; i < 2 * s; i++)
        CHECK_EQ_INT(rb[i], ob[i], "%s alltoall: rb[%d]", what, i);
    /* allgather: the same 2 ints to everyone */
    for (int i = 0; i < 2 * s; i++) {
        rb[i] = -1;
        ob[i] = src[i / 2] == MPI_PROC_NULL ? -1 : src[i / 2] * 7 + i % 2;
    }
    sb[0] = rank * 7;
    sb[1] = rank * 7 + 1;
    Iso_neighbor_allgather(sb, 2, MPI_INT, rb, 2, MPI_INT, iso);
    for (int i = 0; i < 2 * s; i++)
        CHECK_EQ_INT(rb[i], ob[i], "%s allgather: rb[%d]", what, i);
    /* reduce: sum over existing sources of (source+1, 2*(source+1)) */
    {
        int v[2] = {rank + 1, 2 * (rank + 1)}, r[2] = {-5, -5}, e[2] = {-5, -5}, any = 0;
        for (int i = 0; i < s; i++)
            if (src[i] != MPI_PROC_NULL) {
                e[0] = (any ? e[0] : 0) + src[i] + 1;
                e[1] = (any ? e[1] : 0) + 2 * (src[i] + 1);
                any = 1;
            }
        Iso_neighbor_reduce(v, r, 2, MPI_INT, MPI_SUM, iso);
        CHECK(r[0] == e[0] && r[1] == e[1], "%s reduce: %d %d, expected %d %d", what, r[0], r[1],
              e[0], e[1]);
    }
    /* scatter_reduce: block i of process q is (q*100 + i, i); sum of the
     * blocks i from the sources (oracle: alltoall then a serial sum) */
    {
        int r[2] = {-5, -5}, e[2] = {-5, -5}, any = 0;
        for (int i = 0; i < s; i++) {
            sb[2 * i] = rank * 100 + i;
            sb[2 * i + 1] = i;
            ob[2 * i] = ob[2 * i + 1] = 0;
        }
        oracle_alltoallw(sb, cnt, dis, ty, ob, cnt, dis, ty, cart, n);
        for (int i = 0; i < s; i++)
            if (src[i] != MPI_PROC_NULL) {
                e[0] = (any ? e[0] : 0) + ob[2 * i];
                e[1] = (any ? e[1] : 0) + ob[2 * i + 1];
                any = 1;
            }
        Iso_neighbor_scatter_reduce(sb, cnt, dis, ty, r, 2, MPI_INT, MPI_SUM, iso);
        CHECK(r[0] == e[0] && r[1] == e[1], "%s scatter_reduce: %d %d, expected %d %d", what,
              r[0], r[1], e[0], e[1]);
    }
    Iso_neighborhood_free(&iso);
    free(src), free(dst), free(sb), free(rb), free(ob), free(cnt), free(dis), free(ty);
}

static void expect_info(MPI_Comm iso, const char *coll, const char *alg, int rounds, int msgs,
                        long long hops, const char *what)
{
    int r = -1, m = -1;
    long long h = -1;
    CHECK_EQ_INT(Iso_schedule_info(iso, coll, alg, &r, &m, &h), MPI_SUCCESS, "%s info", what);
    CHECK(r == rounds && m == msgs && h == hops, "%s %s %s: %d/%d/%lld, expected %d/%d/%lld", what,
          coll, alg, r, m, h, rounds, msgs, hops);
}

int main(int argc, char **argv)
{
    int p;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);

    /* schedule figures: structure does not depend on the torus size, but
     * take tori whose dimensions are >= 3 where the rank count allows */
    {
        int dims3[3] = {0, 0, 0}, per3[3] = {1, 1, 1}, dims2[2] = {0, 0}, per2[2] = {1, 1};
        MPI_Comm c3 = oracle_cart(3, dims3, per3), c2 = oracle_cart(2, dims2, per2), iso;
        nbh_t m3 = nbh_moore(3, 1), m2 = nbh_moore(2, 3), l = line(2, (int[]){1, 1}, 1, 7, 0);
        Iso_neighborhood_create(c3, m3.s, m3.off, &iso);
        expect_info(iso, "alltoall", "direct", 26, 26, 26, "3D Moore r1");
        expect_info(iso, "alltoall", "dimwise", 6, 6, 54, "3D Moore r1");
        expect_info(iso, "allgather", "dimwise", 6, 6, 26, "3D Moore r1");
        expect_info(iso, "reduce", "dimwise", 6, 6, 26, "3D Moore r1");
        expect_info(iso, "scatter_reduce", "dimwise", 6, 6, 26, "3D Moore r1");
        expect_info(iso, "alltoall", "bruck", 6, 6, 54, "3D Moore r1");
        Iso_neighborhood_create(c2, m2.s, m2.off, &iso);
        expect_info(iso, "alltoall", "direct", 48, 48, 48, "2D Moore r3");
        expect_info(iso, "alltoall", "dimwise", 12, 12, 84, "2D Moore r3");
        expect_info(iso, "alltoall", "bruck", 8, 8, 112, "2D Moore r3");
        expect_info(iso, "allgather", "bruck", 8, 8, 48, "2D Moore r3");
        /* the diagonal line {(1,1) .. (7,7)}: 3 rounds (bits of 1..7) */
        Iso_neighborhood_create(c2, l.s, l.off, &iso);
        expect_info(iso, "allgather", "bruck", 3, 3, 7, "diagonal line 1..7");
        /* dimwise: 7 distinct values in each of the 2 dimensions */
        expect_info(iso, "alltoall", "dimwise", 14, 14, 14, "diagonal line 1..7");
        expect_info(iso, "allgather", "direct", 7, 7, 7, "diagonal line 1..7");
        tap_result(MPI_COMM_WORLD, "schedule figures (3D Moore r1, 2D Moore r3, diagonal line)");
        Iso_neighborhood_free(&iso);
        MPI_Comm_free(&c3);
        MPI_Comm_free(&c2);
        nbh_free(&m3), nbh_free(&m2), nbh_free(&l);
    }

    /* line neighborhoods on tori, meshes and mixed; all collectives */
    {
        static const int v2[][2] = {{1, 1}, {1, -2}, {0, 1}, {3, 1}};
        for (int per = 0; per < 3; per++)
            for (int k = 0; k < 4; k++) {
                int dims[2] = {0, 0}, periods[2] = {per != 1, per == 0};
                MPI_Comm cart = oracle_cart(2, dims, periods);
                nbh_t n = line(2, v2[k], -3, 4, k % 2);
                char what[96];
                snprintf(what, sizeof what, "line (%d,%d) x [-3,4] %s", v2[k][0], v2[k][1],
                         per == 0 ? "torus" : per == 1 ? "mesh" : "mixed");
                check_collectives(cart, &n, what);
                nbh_free(&n);
                MPI_Comm_free(&cart);
            }
        tap_result(MPI_COMM_WORLD, "line neighborhoods, 2D torus/mesh/mixed, 4 collectives");
    }
    {
        int dims[3] = {0, 0, 0}, periods[3] = {1, 0, 1};
        MPI_Comm cart = oracle_cart(3, dims, periods);
        nbh_t n = line(3, (int[]){1, 1, 1}, -5, 5, 1);
        check_collectives(cart, &n, "3D diagonal line [-5,5]");
        nbh_free(&n);
        MPI_Comm_free(&cart);
        tap_result(MPI_COMM_WORLD, "3D diagonal line with zero offset and a repeat, mixed");
    }
    MPI_Finalize();
    return 0;
}
