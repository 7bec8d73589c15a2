/* Messages over 2 GiB (issue 14, defect 2).  Pack mode counts bytes in int
 * (MPI_Pack, MPI_Get_count), so a combined message of 2^31 bytes or more
 * cannot be packed: an explicit iso_combine=pack fails with ISO_ERR_COUNT
 * on every process before any communication, and auto chooses datatype
 * mode instead.
 *
 * Always (little memory): blocks of one "big" type, an hvector of 2049
 * MiB-sized elements with stride 0 (2049 MiB of data over 1 MiB of memory;
 * never sent here).  dimwise with iso_combine=pack fails with
 * ISO_ERR_COUNT, blocking, nonblocking and persistent; with
 * iso_combine=auto the persistent _init succeeds (datatype mode, although
 * the cost model prefers packing for big blocks) and is freed unstarted.
 *
 * ISO_TEST_BIG=1 (one process, about 7 GiB of memory, not in CI): real
 * transfers on a periodic ring of one process, checked byte for byte:
 * offsets {1, 3} with bruck and 1.1 GiB blocks (a combined message of 2.2
 * GiB), and one 3 GiB block (offset {1}, dimwise); explicit pack gives
 * ISO_ERR_COUNT and leaves the receive buffer alone, auto and direct
 * deliver.
 *
 * NPROCS: 1 2
 * PER-ALGORITHM: no
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

static int rank;

static MPI_Comm with_info(MPI_Comm cart, int s, const int *off, const char *alg,
                          const char *mode)
{
    MPI_Info info;
    MPI_Comm dup, iso = MPI_COMM_NULL;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", alg);
    MPI_Info_set(info, "iso_combine", mode);
    MPI_Comm_dup(cart, &dup);
    MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
    Iso_neighborhood_create_with_info(dup, s, off, info, &iso);
    MPI_Info_free(&info);
    return iso;
}

static void release(MPI_Comm *iso)
{
    MPI_Comm c = *iso;
    Iso_neighborhood_free(iso);
    MPI_Comm_free(&c);
}

static int is_count(int rc)
{
    Iso_error e = ISO_ERR_NONE;
    return rc != MPI_SUCCESS && Iso_error_class(rc, &e) == MPI_SUCCESS && e == ISO_ERR_COUNT;
}

static void detection(void)
{
    int dims[2] = {0, 0}, periods[2] = {1, 1}, p, off[] = {0, 1, 1, 0, 1, 1, -1, 0};
    char sb[1 << 20], rb[4 << 20]; /* one MiB element per block (the type repeats it) */
    MPI_Datatype mib, big;
    MPI_Comm cart, iso;
    Iso_request req = ISO_REQUEST_NULL;
    int rc;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Type_contiguous(1 << 20, MPI_BYTE, &mib);
    MPI_Type_create_hvector(2049, 1, 0, mib, &big);
    MPI_Type_commit(&big);
    memset(sb, 1, sizeof sb);
    memset(rb, 7, sizeof rb);

    iso = with_info(cart, 4, off, "dimwise", "pack");
    rc = Iso_neighbor_alltoall(sb, 1, big, rb, 1, big, iso);
    CHECK(is_count(rc), "dimwise:pack, 2049 MiB blocks, blocking: rc %d, expected ISO_ERR_COUNT",
          rc);
    if (rc != MPI_SUCCESS) { /* the message names the limit and the way out */
        char msg[MPI_MAX_ERROR_STRING];
        int len = 0;
        MPI_Error_string(rc, msg, &len);
        CHECK(strstr(msg, "2 GiB") && strstr(msg, "iso_combine=datatype"),
              "dimwise:pack over 2 GiB says \"%s\"", msg);
    }
    rc = Iso_ineighbor_alltoall(sb, 1, big, rb, 1, big, iso, &req);
    CHECK(is_count(rc), "dimwise:pack, 2049 MiB blocks, nonblocking: rc %d", rc);
    rc = Iso_neighbor_allgather_init(sb, 1, big, rb, 1, big, iso, MPI_INFO_NULL, &req);
    CHECK(is_count(rc), "dimwise:pack, 2049 MiB blocks, allgather_init: rc %d", rc);
    CHECK(rb[0] == 7 && rb[sizeof rb - 1] == 7, "receive buffer touched by a failed call");
    release(&iso);
    tap_result(MPI_COMM_WORLD, "combined messages over 2 GiB with iso_combine=pack: ISO_ERR_COUNT "
                               "on every process before communication");

    iso = with_info(cart, 4, off, "dimwise", "auto");
    rc = Iso_neighbor_alltoall_init(sb, 1, big, rb, 1, big, iso, MPI_INFO_NULL, &req);
    CHECK(rc == MPI_SUCCESS, "dimwise:auto, 2049 MiB blocks, alltoall_init: rc %d (pack chosen?)",
          rc);
    if (rc == MPI_SUCCESS)
        Iso_request_free(&req); /* never started: nothing is sent */
    release(&iso);
    tap_result(MPI_COMM_WORLD, "iso_combine=auto does not choose pack mode for messages over "
                               "2 GiB");
    MPI_Type_free(&big);
    MPI_Type_free(&mib);
    MPI_Comm_free(&cart);
}

static unsigned char pattern(size_t k)
{
    return (unsigned char)((k * 7u + (k >> 20)) & 0xff);
}

/* One alltoall on a ring of one process: block i comes back to slot i. */
static void transfer(MPI_Comm ring, int s, const int *off, const char *alg, const char *mode,
                     int count, MPI_Datatype type, int expect_count_error)
{
    MPI_Count tsize;
    size_t bytes, total;
    unsigned char *sb, *rb;
    MPI_Comm iso = with_info(ring, s, off, alg, mode);
    int rc;
    MPI_Type_size_x(type, &tsize);
    bytes = (size_t)tsize * (size_t)count;
    total = bytes * (size_t)s;
    sb = malloc(total);
    rb = malloc(total);
    CHECK(sb && rb, "%s:%s: no memory for 2 x %zu bytes", alg, mode, total);
    if (sb && rb) {
        for (size_t k = 0; k < total; k++)
            sb[k] = pattern(k);
        memset(rb, 0xEE, total);
        rc = Iso_neighbor_alltoall(sb, count, type, rb, count, type, iso);
        if (expect_count_error) {
            CHECK(is_count(rc), "%s:%s, %zu-byte blocks: rc %d, expected ISO_ERR_COUNT", alg,
                  mode, bytes, rc);
            CHECK(rb[0] == 0xEE && rb[total - 1] == 0xEE, "%s:%s: receive buffer touched", alg,
                  mode);
        } else {
            CHECK(rc == MPI_SUCCESS, "%s:%s, %zu-byte blocks: rc %d", alg, mode, bytes, rc);
            CHECK(rc != MPI_SUCCESS || memcmp(sb, rb, total) == 0, "%s:%s: wrong data", alg,
                  mode);
        }
    }
    free(sb);
    free(rb);
    release(&iso);
}

static void big_transfers(void)
{
    int dims[1] = {1}, periods[1] = {1}, two[2] = {1, 3}, one[1] = {1};
    MPI_Datatype gib, three;
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_SELF, 1, dims, periods, 0, &ring);
    /* 2 x 1.1 GiB in one bruck message (both offsets hop by 1 first) */
    transfer(ring, 2, two, "bruck", "pack", 1181116006, MPI_BYTE, 1);
    transfer(ring, 2, two, "bruck", "auto", 1181116006, MPI_BYTE, 0);
    transfer(ring, 2, two, "direct", "auto", 1181116006, MPI_BYTE, 0);
    /* one 3 GiB block */
    MPI_Type_contiguous(1 << 30, MPI_BYTE, &gib);
    MPI_Type_contiguous(3, gib, &three);
    MPI_Type_commit(&three);
    transfer(ring, 1, one, "dimwise", "pack", 1, three, 1);
    transfer(ring, 1, one, "dimwise", "auto", 1, three, 0);
    transfer(ring, 1, one, "direct", "auto", 1, three, 0);
    MPI_Type_free(&three);
    MPI_Type_free(&gib);
    MPI_Comm_free(&ring);
}

int main(int argc, char **argv)
{
    const char *big = getenv("ISO_TEST_BIG");
    int p;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    detection();
    if (!big || strcmp(big, "1") != 0 || p != 1) {
        tap_skip(MPI_COMM_WORLD, "opt-in: ISO_TEST_BIG=1 and one process (about 7 GiB)",
                 "transfers of 2.2 GiB combined messages and a 3 GiB block");
    } else {
        big_transfers();
        tap_result(MPI_COMM_WORLD, "transfers of 2.2 GiB combined messages and a 3 GiB block: "
                                   "pack refuses, auto and direct deliver");
    }
    MPI_Finalize();
    return 0;
}
