/* MPI errors raised inside an operation (issue 14, defects 3 and 4).
 *
 * The isocomm gets MPI_ERRORS_RETURN only AFTER Iso_neighborhood_create, so
 * the private communicator was duplicated while the default handler
 * (MPI_ERRORS_ARE_FATAL) was in place; MPI_COMM_WORLD keeps it throughout.
 * An error that reached any handler but the isocomm's would abort the test.
 *
 *   - every rank passes sendcount 2, recvcount 1: every rank must get a
 *     code of class MPI_ERR_TRUNCATE (not MPI_ERR_IN_STATUS, not the
 *     library's COUNT), blocking, nonblocking and persistent;
 *   - only rank 0 passes recvcount 1 (or sendcount 1 and recvcount 1):
 *     nothing hangs, rank 0 gets MPI_ERR_TRUNCATE, the others succeed or
 *     fail with MPI_ERR_OTHER (a peer's part failed), ISO_ERR_COUNT or
 *     MPI_ERR_TRUNCATE;
 *   - after each, a correct alltoall on the same isocomm gives the oracle's
 *     result (tags still in step).
 * Every algorithm in both combining modes, set per neighborhood.
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

enum { BLOCKING, NONBLOCKING, PERSISTENT, NCALL };
static const char *const callname[NCALL] = {"blocking", "nonblocking", "persistent"};

static int rank;

static int alltoall(int how, const int *sb, int sc, int *rb, int rc, MPI_Comm iso)
{
    Iso_request req = ISO_REQUEST_NULL;
    int err;
    if (how == BLOCKING)
        return Iso_neighbor_alltoall(sb, sc, MPI_INT, rb, rc, MPI_INT, iso);
    if (how == NONBLOCKING) {
        err = Iso_ineighbor_alltoall(sb, sc, MPI_INT, rb, rc, MPI_INT, iso, &req);
        return err ? err : Iso_wait(&req);
    }
    if ((err = Iso_neighbor_alltoall_init(sb, sc, MPI_INT, rb, rc, MPI_INT, iso, MPI_INFO_NULL,
                                          &req)) != MPI_SUCCESS)
        return err;
    if ((err = Iso_start(&req)) == MPI_SUCCESS)
        err = Iso_wait(&req);
    Iso_request_free(&req);
    return err;
}

static int class_of(int rc)
{
    int cls = MPI_ERR_UNKNOWN;
    MPI_Error_class(rc, &cls);
    return cls;
}

static const struct {
    const char *alg, *mode;
} variants[] = {{"direct", "pack"}, {"dimwise", "pack"}, {"dimwise", "datatype"},
                {"bruck", "pack"},  {"bruck", "datatype"}};

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periods[2] = {1, 1}, src[16], dst[16];
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1, 0, 0, 2, 3};
    nbh_t nb = {2, (int)(sizeof off / sizeof off[0]) / 2, off};
    int sb[2 * 16], rb[2 * 16 + 2], want[2 * 16], cnt[16];
    MPI_Aint dsp[16];
    MPI_Datatype ty[16];
    MPI_Comm cart, ocomm;
    Iso_error isoerr;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    oracle_neighbors(cart, &nb, src, dst);
    for (int k = 0; k < 2 * nb.s; k++)
        sb[k] = rank * 1000 + k;
    for (int i = 0; i < nb.s; i++)
        cnt[i] = 2, dsp[i] = (MPI_Aint)(2 * i * sizeof(int)), ty[i] = MPI_INT;
    oracle_alltoallw_on(sb, cnt, dsp, ty, want, cnt, dsp, ty, cart, ocomm, &nb);

    for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) {
        char name[64];
        MPI_Info info;
        MPI_Comm dup, iso;
        snprintf(name, sizeof name, "%s:%s", variants[v].alg, variants[v].mode);
        MPI_Info_create(&info);
        MPI_Info_set(info, "iso_algorithm", variants[v].alg);
        MPI_Info_set(info, "iso_combine", variants[v].mode);
        MPI_Comm_dup(cart, &dup); /* inherits MPI_ERRORS_ARE_FATAL */
        Iso_neighborhood_create_with_info(dup, nb.s, off, info, &iso);
        MPI_Comm_set_errhandler(iso, MPI_ERRORS_RETURN); /* after creation */

        for (int how = 0; how < NCALL; how++) {
            int rc = alltoall(how, sb, 2, rb, 1, iso);
            CHECK_EQ_INT(class_of(rc), MPI_ERR_TRUNCATE,
                         "%s %s, sendcount 2 recvcount 1 everywhere: error class of %d", name,
                         callname[how], rc);
            memset(rb, -1, sizeof rb);
            rc = alltoall(how, sb, 2, rb, 2, iso);
            CHECK(rc == MPI_SUCCESS && !memcmp(rb, want, sizeof(int) * 2 * (size_t)nb.s),
                  "%s %s: a correct alltoall after the error: rc %d or wrong data", name,
                  callname[how], rc);
        }
        tap_result(MPI_COMM_WORLD,
                   "%s: truncation everywhere returns MPI_ERR_TRUNCATE (handler set after "
                   "creation, MPI_COMM_WORLD fatal), blocking, nonblocking, persistent",
                   name);

        for (int shorter = 0; shorter < 2; shorter++)
            for (int how = 0; how < NCALL; how++) {
                int sc = rank == 0 && shorter ? 1 : 2, rcount = rank == 0 ? 1 : 2, cls;
                int rc = alltoall(how, sb, sc, rb, rcount, iso);
                cls = class_of(rc);
                if (rank == 0)
                    CHECK_EQ_INT(cls, MPI_ERR_TRUNCATE, "%s %s, rank 0 alone with recvcount 1",
                                 name, callname[how]);
                else
                    CHECK(rc == MPI_SUCCESS || cls == MPI_ERR_OTHER || cls == MPI_ERR_TRUNCATE ||
                              (Iso_error_class(rc, &isoerr) == MPI_SUCCESS &&
                               isoerr == ISO_ERR_COUNT),
                          "%s %s, rank 0 alone with %s: rank %d got rc %d class %d", name,
                          callname[how], shorter ? "counts 1" : "recvcount 1", rank, rc, cls);
                memset(rb, -1, sizeof rb);
                rc = alltoall(how, sb, 2, rb, 2, iso);
                CHECK(rc == MPI_SUCCESS && !memcmp(rb, want, sizeof(int) * 2 * (size_t)nb.s),
                      "%s %s: a correct alltoall after rank 0's error: rc %d or wrong data",
                      name, callname[how], rc);
            }
        tap_result(MPI_COMM_WORLD,
                   "%s: a mismatch on rank 0 alone hangs nothing; rank 0 gets MPI_ERR_TRUNCATE, "
                   "the next call works",
                   name);
        Iso_neighborhood_free(&iso);
        MPI_Comm_free(&dup);
        MPI_Info_free(&info);
    }
    MPI_Comm_free(&ocomm);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
