/* auto on distributed graph communicators weighs message sharing by its
 * plan's counted bottleneck (coll/graph_route.c): on a pattern where half
 * of the processes send small blocks to all of the other half (every pair
 * of senders has every target in common: sharing halves the senders'
 * messages in two phases) auto picks sharing; on a ring (two messages per
 * process, nothing to share) it picks direct; on everyone-to-everyone at
 * 8 bytes it picks the VPT, whose modelled cost there is lower (the
 * persistent request's pick, with iso_tune=off: the model's).  The
 * choice is the same on every process (gathered and compared), and the
 * data arrive as the oracle (a plain Isend/Irecv per edge) says, for
 * persistent, blocking and nonblocking calls.
 *
 * PER-ALGORITHM: no (graph communicators have their own key)
 * NPROCS: 8
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "isocoll.h"
#include "tap.h"

enum { HALF_TO_HALF, RING, ALL_TO_ALL, NKINDS };
static const char *kind_names[] = {"half to the other half", "ring", "everyone to everyone"};
static const char *want[] = {"sharing", "direct", "vpt"};

static int edge(int kind, int p, int a, int t)
{
    switch (kind) {
    case HALF_TO_HALF:
        return a < p / 2 && t >= p / 2;
    case RING:
        return t == (a + 1) % p || t == (a + p - 1) % p;
    default:
        return a != t;
    }
}

static void one_kind(int kind)
{
    int p, me, no = 0, ni = 0;
    MPI_Comm_size(MPI_COMM_WORLD, &p);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    int *out = malloc(sizeof(int) * (size_t)p), *in = malloc(sizeof(int) * (size_t)p);
    for (int a = 0; a < p; a++)
        for (int t = 0; t < p; t++)
            if (edge(kind, p, a, t)) {
                if (a == me)
                    out[no++] = t;
                if (t == me)
                    in[ni++] = a;
            }
    MPI_Comm g;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "iso_sparse_algorithm", "auto");
    /* the model's pick: a persistent request under iso_tune=on would time
     * the candidates at its _init call and take what is fastest here */
    MPI_Info_set(info, "iso_tune", "off");
    /* explicit unit weights: MPI_UNWEIGHTED is a sentinel pointer that
     * GCC's -Wstringop-overread mistakes for a zero-length array (Open MPI) */
    int *w = malloc(sizeof(int) * (size_t)p);
    for (int i = 0; i < p; i++)
        w[i] = 1;
    MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, ni, in, w, no, out, w, MPI_INFO_NULL, 0, &g);
    free(w);
    MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
    long long *sb = malloc(sizeof(long long) * ((size_t)no + 1));
    long long *rb = malloc(sizeof(long long) * ((size_t)ni + 1));
    for (int call = 0; call < 3; call++) {
        for (int i = 0; i < no; i++)
            sb[i] = 1000000LL * call + 1000LL * me + out[i];
        for (int j = 0; j < ni; j++)
            rb[j] = -1;
        if (call == 0) {
            Iso_request r = ISO_REQUEST_NULL;
            const char *alg = "", *comb = "";
            int rounds, m[4], err;
            long long b;
            err = Iso_neighbor_alltoall_init(sb, 1, MPI_LONG_LONG, rb, 1, MPI_LONG_LONG, g, info,
                                             &r);
            CHECK_EQ_INT(err, MPI_SUCCESS, "%s: init", kind_names[kind]);
            if (err == MPI_SUCCESS) {
                Iso_request_schedule_info(r, &alg, &comb, &rounds, m, &b);
                CHECK(!strcmp(alg, want[kind]), "%s: auto chose %s, not %s", kind_names[kind],
                      alg, want[kind]);
                /* the same choice everywhere */
                char mine[16] = {0}, *all = malloc(16 * (size_t)p);
                snprintf(mine, sizeof mine, "%s", alg);
                MPI_Allgather(mine, 16, MPI_CHAR, all, 16, MPI_CHAR, MPI_COMM_WORLD);
                for (int r2 = 0; r2 < p; r2++)
                    CHECK(!strcmp(all + 16 * r2, mine), "%s: rank %d chose %s, rank %d %s",
                          kind_names[kind], r2, all + 16 * r2, me, mine);
                free(all);
                { /* only a sharing request answers Iso_request_sharing_info */
                    int sm[2], so, rc;
                    long long sfig[2], sf, sbb;
                    Iso_error cls = ISO_ERR_NONE;
                    rc = Iso_request_sharing_info(r, sm, sfig, &sf, &so, &sbb);
                    if (rc != MPI_SUCCESS)
                        Iso_error_class(rc, &cls);
                    CHECK_EQ_INT(cls, strcmp(alg, "sharing") ? ISO_ERR_REQUEST : ISO_ERR_NONE,
                                 "%s: Iso_request_sharing_info of a %s request", kind_names[kind],
                                 alg);
                }
                CHECK_EQ_INT(Iso_start(&r), MPI_SUCCESS, "%s: start", kind_names[kind]);
                Iso_wait(&r);
                Iso_request_free(&r);
            }
        } else if (call == 1) {
            CHECK_EQ_INT(Iso_neighbor_alltoall(sb, 1, MPI_LONG_LONG, rb, 1, MPI_LONG_LONG, g),
                         MPI_SUCCESS, "%s: blocking", kind_names[kind]);
        } else {
            Iso_request r = ISO_REQUEST_NULL;
            CHECK_EQ_INT(Iso_ineighbor_alltoall(sb, 1, MPI_LONG_LONG, rb, 1, MPI_LONG_LONG, g,
                                                &r),
                         MPI_SUCCESS, "%s: nonblocking", kind_names[kind]);
            Iso_wait(&r);
        }
        /* the oracle: what source in[j] sends to me */
        for (int j = 0; j < ni; j++)
            CHECK(rb[j] == 1000000LL * call + 1000LL * in[j] + me,
                  "%s call %d: slot %d (from %d) holds %lld", kind_names[kind], call, j, in[j],
                  rb[j]);
    }
    tap_result(MPI_COMM_WORLD, "auto on %s (8-byte blocks) chooses %s, the same everywhere; "
               "persistent, blocking and nonblocking deliver", kind_names[kind], want[kind]);
    MPI_Info_free(&info);
    MPI_Comm_free(&g);
    free(out);
    free(in);
    free(sb);
    free(rb);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    /* the model's parameters fixed (the built-in ones differ between MPI
     * libraries: Open MPI's dear rounds make direct win at 8 processes):
     * MPICH's built-in figures, in a file of this process */
    char path[] = "/tmp/t_sharing_auto_XXXXXX";
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
    if (f == NULL) {
        fprintf(stderr, "t_sharing_auto: cannot write a cost file\n");
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    fprintf(f, "alpha 5.0e-7\nbeta 7.0e-11\ngamma 1.0e-7\npack 2.6e-11\nprobe 2.2e-7\n"
               "dtype 7.9e-10\nbuild 6.7e-7\neager 8192\nrndv 3.0e-6\npack_blk 0\n"
               "dtype_blk 0\n");
    fclose(f);
    setenv("ISO_COST_FILE", path, 1); /* read at the first use of the model */
    setenv("ISO_SPARSE_ALGORITHM", "auto", 1); /* blocking calls: read at a graph's first call */
    for (int kind = 0; kind < NKINDS; kind++)
        one_kind(kind);
    remove(path);
    MPI_Finalize();
    return 0;
}
