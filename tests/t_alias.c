/* Aliasing (issue 14, item 9): a send block and a receive block whose
 * bytes overlap are erroneous, and the library says so (ISO_ERR_ARG)
 * where it can tell cheaply: blocks without gaps.  Disjoint regions of one
 * array keep working, also when their true extents interleave.
 *
 *   - ISO_ERR_ARG, blocking, nonblocking and persistent: alltoall and
 *     allgather with sendbuf == recvbuf, reduce with sendbuf == recvbuf,
 *     scatter_reduce whose vector 0 is the receive vector, alltoallv with
 *     recvbuf = sendbuf + 1 int (different pointers, overlapping blocks);
 *     the message says that the regions overlap and names two blocks;
 *     after each error a correct call works;
 *   - correct results (oracle): alltoallv with sends in the first half of
 *     one array and receives in the second; alltoallw over one array with
 *     send blocks on the even ints and receive blocks on the odd ints of
 *     the same region (vector types: their spans overlap, their bytes do
 *     not).
 * Every algorithm in both combining modes, set per neighborhood.
 *
 * NPROCS: 1 2 4
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "oracle.h"
#include "tap.h"

#define S 8
enum { BLOCKING, NONBLOCKING, PERSISTENT, NCALL };

static int rank;
static MPI_Comm ocomm;

/* Completes a nonblocking or persistent call the way `how` says. */
static int finish(int how, int rc, Iso_request *req)
{
    if (rc != MPI_SUCCESS || how == BLOCKING)
        return rc;
    if (how == PERSISTENT) {
        if ((rc = Iso_start(req)) == MPI_SUCCESS)
            rc = Iso_wait(req);
        Iso_request_free(req);
        return rc;
    }
    return Iso_wait(req);
}

/* ISO_ERR_ARG whose string says that the regions overlap (issue 24,
 * item 6: it used to be the class's generic "negative size, NULL array"). */
static void expect_arg(int rc, const char *what, int how)
{
    Iso_error e = ISO_ERR_NONE;
    char text[MPI_MAX_ERROR_STRING] = "";
    int len = 0;
    if (rc != MPI_SUCCESS) {
        Iso_error_class(rc, &e);
        MPI_Error_string(rc, text, &len);
    }
    CHECK(e == ISO_ERR_ARG, "%s (call %d): rc %d, class %d, expected ISO_ERR_ARG", what, how, rc,
          (int)e);
    CHECK(strstr(text, "send and receive regions overlap: send block ") != NULL,
          "%s (call %d): the message does not say the regions overlap: \"%s\"", what, how, text);
}

static void overlapping(MPI_Comm iso)
{
    int buf[4 * S + 4], cnt[S], idsp[S];
    MPI_Aint adsp[S];
    MPI_Datatype ty[S];
    for (int i = 0; i < S; i++)
        cnt[i] = 2, idsp[i] = 2 * i, adsp[i] = (MPI_Aint)(2 * i * sizeof(int)), ty[i] = MPI_INT;
    for (int how = 0; how < NCALL; how++) {
        Iso_request req = ISO_REQUEST_NULL;
        int rc;
        memset(buf, 0, sizeof buf);
        rc = how == BLOCKING ? Iso_neighbor_alltoall(buf, 2, MPI_INT, buf, 2, MPI_INT, iso)
             : how == NONBLOCKING
                 ? Iso_ineighbor_alltoall(buf, 2, MPI_INT, buf, 2, MPI_INT, iso, &req)
                 : Iso_neighbor_alltoall_init(buf, 2, MPI_INT, buf, 2, MPI_INT, iso,
                                              MPI_INFO_NULL, &req);
        expect_arg(finish(how, rc, &req), "alltoall with sendbuf == recvbuf", how);
        rc = how == BLOCKING ? Iso_neighbor_allgather(buf, 2, MPI_INT, buf, 2, MPI_INT, iso)
             : how == NONBLOCKING
                 ? Iso_ineighbor_allgather(buf, 2, MPI_INT, buf, 2, MPI_INT, iso, &req)
                 : Iso_neighbor_allgather_init(buf, 2, MPI_INT, buf, 2, MPI_INT, iso,
                                               MPI_INFO_NULL, &req);
        expect_arg(finish(how, rc, &req), "allgather with sendbuf == recvbuf", how);
        rc = how == BLOCKING ? Iso_neighbor_reduce(buf, buf, 2, MPI_INT, MPI_SUM, iso)
             : how == NONBLOCKING
                 ? Iso_ineighbor_reduce(buf, buf, 2, MPI_INT, MPI_SUM, iso, &req)
                 : Iso_neighbor_reduce_init(buf, buf, 2, MPI_INT, MPI_SUM, iso, MPI_INFO_NULL,
                                            &req);
        expect_arg(finish(how, rc, &req), "reduce with sendbuf == recvbuf", how);
        rc = how == BLOCKING
                 ? Iso_neighbor_scatter_reduce(buf, cnt, adsp, ty, buf, 2, MPI_INT, MPI_SUM, iso)
             : how == NONBLOCKING
                 ? Iso_ineighbor_scatter_reduce(buf, cnt, adsp, ty, buf, 2, MPI_INT, MPI_SUM, iso,
                                                &req)
                 : Iso_neighbor_scatter_reduce_init(buf, cnt, adsp, ty, buf, 2, MPI_INT, MPI_SUM,
                                                    iso, MPI_INFO_NULL, &req);
        expect_arg(finish(how, rc, &req), "scatter_reduce onto its own vector 0", how);
        rc = how == BLOCKING
                 ? Iso_neighbor_alltoallv(buf, cnt, idsp, MPI_INT, buf + 1, cnt, idsp, MPI_INT, iso)
             : how == NONBLOCKING
                 ? Iso_ineighbor_alltoallv(buf, cnt, idsp, MPI_INT, buf + 1, cnt, idsp, MPI_INT,
                                           iso, &req)
                 : Iso_neighbor_alltoallv_init(buf, cnt, idsp, MPI_INT, buf + 1, cnt, idsp,
                                               MPI_INT, iso, MPI_INFO_NULL, &req);
        expect_arg(finish(how, rc, &req), "alltoallv with recvbuf = sendbuf + 1 int", how);
    }
}

/* Disjoint regions of one array: results against the oracle. */
static void disjoint(MPI_Comm cart, MPI_Comm iso, const nbh_t *nb)
{
    int arr[4 * S + 2], want[4 * S + 2], cnt[S], sd[S], rd[S];
    MPI_Aint asd[S], ard[S], osd[S], ord[S];
    MPI_Datatype ty[S], vec, everyother[S];
    int rc;
    /* alltoallv: sends in ints [0, 2S), receives in [2S, 4S) */
    for (int i = 0; i < S; i++) {
        cnt[i] = 2, sd[i] = 2 * i, rd[i] = 2 * S + 2 * i, ty[i] = MPI_INT;
        osd[i] = (MPI_Aint)sd[i] * (MPI_Aint)sizeof(int);
        ord[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
    }
    for (int k = 0; k < 4 * S + 2; k++)
        arr[k] = want[k] = k < 2 * S ? 1000 * rank + k : -1;
    oracle_alltoallw_on(arr, cnt, osd, ty, want, cnt, ord, ty, cart, ocomm, nb);
    rc = Iso_neighbor_alltoallv(arr, cnt, sd, MPI_INT, arr, cnt, rd, MPI_INT, iso);
    CHECK(rc == MPI_SUCCESS && !memcmp(arr, want, sizeof arr),
          "alltoallv over disjoint halves of one array: rc %d or wrong data", rc);
    /* alltoallw: block i sends the even ints of region i and receives into
     * its odd ints (vector(2,1,2): spans overlap, bytes do not) */
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    for (int i = 0; i < S; i++) {
        cnt[i] = 1, everyother[i] = vec;
        asd[i] = (MPI_Aint)(4 * i * sizeof(int));
        ard[i] = asd[i] + (MPI_Aint)sizeof(int);
    }
    for (int k = 0; k < 4 * S + 2; k++)
        arr[k] = want[k] = k % 2 == 0 ? 1000 * rank + k : -1;
    oracle_alltoallw_on(arr, cnt, asd, everyother, want, cnt, ard, everyother, cart, ocomm, nb);
    rc = Iso_neighbor_alltoallw(arr, cnt, asd, everyother, arr, cnt, ard, everyother, iso);
    CHECK(rc == MPI_SUCCESS && !memcmp(arr, want, sizeof arr),
          "alltoallw, send on even and receive on odd ints of one region: rc %d or wrong data",
          rc);
    MPI_Type_free(&vec);
}

static const struct {
    const char *alg, *mode;
} variants[] = {{"direct", "pack"}, {"dimwise", "pack"}, {"dimwise", "datatype"},
                {"bruck", "pack"},  {"bruck", "datatype"}};

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periods[2] = {1, 1};
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
    nbh_t nb = {2, S, off};
    MPI_Comm cart;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        MPI_Info info;
        MPI_Comm dup, iso;
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", variants[v].alg);
        MPI_Info_set(info, "iso_combine", variants[v].mode);
        MPI_Comm_dup(cart, &dup);
        MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
        Iso_neighborhood_create_with_info(dup, S, off, info, &iso);
        overlapping(iso);
        if (!strcmp(variants[v].mode, "datatype")) {
            /* disjoint() uses the v/w forms, which datatype mode cannot carry
             * with a combining algorithm (an error: t_diagnostics) */
            MPI_Info_set(info, "iso_combine", "pack");
            Iso_neighborhood_create_with_info(dup, S, off, info, &iso);
        }
        disjoint(cart, iso, &nb);
        tap_result(MPI_COMM_WORLD,
                   "%s:%s: overlapping send and receive blocks give ISO_ERR_ARG (5 forms, "
                   "blocking, nonblocking, persistent); disjoint regions of one array work",
                   variants[v].alg, variants[v].mode);
        Iso_neighborhood_free(&iso);
        MPI_Comm_free(&dup);
        MPI_Info_free(&info);
    }
    MPI_Comm_free(&cart);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
