/* What a cached schedule, or a request kept by the blocking-call cache,
 * keeps of its message buffers between calls (issue 14, item 8; issue 9),
 * read with the library's internal iso__sched_spare_bytes and
 * iso__sched_request_park over the neighborhood's caches: after a big pack-mode alltoall the
 * buffers are kept (the next big call reuses them), after small calls
 * they are gone (nothing above 2x what a call used, plus 4 KiB), and a
 * call whose buffers add up to more than ISO_SPARE_MAX keeps nothing.
 * Auto's tuning in pack mode: once decided, no candidate's cached schedule
 * keeps its trial calls' buffers (a loser's would never be used again).
 * Every call's result is checked against the oracle.
 *
 * NPROCS: 1 2
 * PER-ALGORITHM: no
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "oracle.h"
#include "tap.h"

static MPI_Comm ocomm;

/* Bytes kept by every cached schedule of comm's neighborhood and by the
 * requests its blocking-call cache keeps (issue 9). */
static size_t kept(MPI_Comm comm)
{
    iso_state *st;
    size_t bytes = 0;
    if (iso__state_get(comm, 0, &st) != MPI_SUCCESS)
        return (size_t)-1;
    for (int c = 0; c < ISO_NCOLL; c++) {
        for (int a = 0; a < ISO_MAX_ALGORITHMS; a++)
            if (st->nbh->cache[c][a])
                bytes += iso__sched_spare_bytes(st->nbh->cache[c][a]);
        if (st->nbh->call_req[c])
            bytes += iso__sched_request_park(st->nbh->call_req[c]);
    }
    return bytes;
}

/* One alltoall of n ints per block, checked. */
static void alltoall(MPI_Comm cart, MPI_Comm iso, const nbh_t *nb, int n, int salt)
{
    size_t len = (size_t)nb->s * (size_t)n;
    int *sb = malloc(sizeof(int) * len), *rb = malloc(sizeof(int) * len);
    int *want = malloc(sizeof(int) * len), cnt[16], rank, rc;
    MPI_Aint dsp[16];
    MPI_Datatype ty[16];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    for (size_t k = 0; k < len; k++)
        sb[k] = (int)(k * 7u) + 1000 * rank + salt, rb[k] = want[k] = -1;
    for (int i = 0; i < nb->s; i++)
        cnt[i] = n, dsp[i] = (MPI_Aint)((size_t)i * (size_t)n * sizeof(int)), ty[i] = MPI_INT;
    oracle_alltoallw_on(sb, cnt, dsp, ty, want, cnt, dsp, ty, cart, ocomm, nb);
    rc = Iso_neighbor_alltoall(sb, n, MPI_INT, rb, n, MPI_INT, iso);
    CHECK(rc == MPI_SUCCESS, "alltoall of %d ints per block: rc=%d", n, rc);
    CHECK(memcmp(rb, want, sizeof(int) * len) == 0, "alltoall of %d ints per block: wrong data",
          n);
    free(sb);
    free(rb);
    free(want);
}

int main(int argc, char **argv)
{
    int p, dims[2] = {0, 0}, periods[2] = {1, 1};
    int off[] = {-1, -1, -1, 0, -1, 1, 0, -1, 0, 1, 1, -1, 1, 0, 1, 1};
    nbh_t nb = {2, 8, off};
    const int big = 64 * 1024, huge = 1024 * 1024; /* ints per block: 256 KiB, 4 MiB */
    size_t after_big, after_big2, after_small, after_huge;
    MPI_Comm cart, iso;
    MPI_Info info;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_dup(MPI_COMM_WORLD, &ocomm);
    MPI_Dims_create(p, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_algorithm", "dimwise");
    MPI_Info_set(info, "iso_combine", "pack");
    Iso_neighborhood_create_with_info(cart, nb.s, off, info, &iso);

    alltoall(cart, iso, &nb, big, 1);
    after_big = kept(iso);
    alltoall(cart, iso, &nb, big, 2);
    after_big2 = kept(iso);
    CHECK(after_big >= (size_t)big * sizeof(int),
          "after a call with 256 KiB blocks %zu bytes are kept: the next call cannot reuse them",
          after_big);
    CHECK_EQ_INT(after_big2, after_big, "kept bytes after a second call of the same size");
    tap_result(MPI_COMM_WORLD, "a cached schedule keeps the buffers of a big call for the next");

    for (int k = 0; k < 3; k++)
        alltoall(cart, iso, &nb, 2, 10 + k);
    after_small = kept(iso);
    CHECK(after_small <= 3 * ISO_SPARE_SLACK,
          "after small calls %zu bytes are still kept (the big call's buffers)", after_small);
    tap_result(MPI_COMM_WORLD, "after small calls the big call's buffers are released (%zu bytes "
               "kept, at most 2x use + 4 KiB per buffer)", after_small);

    alltoall(cart, iso, &nb, huge, 20);
    after_huge = kept(iso);
    CHECK_EQ_INT(after_huge, 0, "bytes kept after a call with 4 MiB blocks (over ISO_SPARE_MAX)");
    tap_result(MPI_COMM_WORLD, "a call whose buffers exceed ISO_SPARE_MAX (32 MiB) keeps none");

    Iso_neighborhood_free(&iso);

    { /* auto, tuned in pack mode: the trial calls leave nothing behind */
        char record[512] = "";
        int state = 0, calls = 0;
        size_t left = (size_t)-1;
        MPI_Info_set(info, "iso_algorithm", "auto");
        MPI_Info_set(info, "iso_tune", "on:2");
        Iso_neighborhood_create_with_info(cart, nb.s, off, info, &iso);
        for (; calls < 100 && state != 2; calls++) {
            alltoall(cart, iso, &nb, big, 30 + calls);
            Iso_tune_info(iso, 0, &state, record, (int)sizeof record);
        }
        if (state == 2)
            left = kept(iso);
        CHECK(state == 2, "auto's tuning undecided after %d calls: %s", calls, record);
        CHECK(strstr(record, "tried=direct") && strstr(record, "/pack"),
              "the trials ran no pack-mode combining candidate: %s", record);
        CHECK_EQ_INT(left, 0, "bytes kept after auto's trials");
        tap_result(MPI_COMM_WORLD, "auto's trial calls leave no buffers with the candidates' "
                   "schedules (%d calls: %s)", calls, record);
        Iso_neighborhood_free(&iso);
    }
    MPI_Info_free(&info);
    MPI_Comm_free(&cart);
    MPI_Comm_free(&ocomm);
    MPI_Finalize();
    return 0;
}
