/* The cost model (DESIGN.md, "Selection and the cost model"):
 *   time = gamma * phases + alpha * messages + beta * bytes sent
 *          + pack mode:     pack * 2 * bytes (packed and unpacked)
 *                           + pack_blk * block hops (a copy and a header
 *                             entry per block)
 *                           + probe * messages (only where the receiver
 *                             cannot know a message's size: v/w forms)
 *          + datatype mode: dtype * bytes + dtype_blk * block hops (a
 *                             segment of the datatype engine per block)
 *                           + build * 2 * messages (a struct type per
 *                             message at each end, built per nonblocking
 *                             call; once for persistent requests and for
 *                             blocking calls, whose call cache keeps the
 *                             types while the buffers stay the same)
 *          + rndv * messages above the eager limit (a rendezvous handshake
 *            first; the messages of a schedule are taken as its mean size)
 * with the structural figures of the schedule (those of a process of a
 * torus, identical everywhere).  bench/calibrate measures a machine and
 * writes a file that ISO_COST_FILE points to. */
#include "coll/coll.h"
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    double alpha, beta, gamma, pack, probe, dtype, build, eager, rndv, pack_blk, dtype_blk;
} cost_t;

/* Built-in constants: bench/calibrate on a 2-core shared-memory machine
 * (2026-11-22) with the MPI library the library is compiled against; MPICH
 * at 2 ranks, Open MPI at 4 (oversubscribed, hence the dear rounds); other
 * libraries get round figures that lean towards direct and packing.  The
 * eager limits and rendezvous costs (2026-11-23): a ping-pong at 2 ranks
 * jumps from 1.27 to 4.29 us above 8 KiB with MPICH 4.0.2 and from 0.57 to
 * 2.70 us above 4 KiB with Open MPI 4.1; Open MPI's handshake is taken at
 * one dependent round (gamma) of its oversubscribed figures.
 *
 * Open MPI's pack, dtype and per-block figures (2026-11-23) come from the
 * library's own messages instead: bench/run --series issue9 at 4 ranks
 * times every combining schedule in both modes, and datatype mode was
 * cheaper than pack mode by 29-32 ns per block hop at 8-byte blocks (3D
 * Moore r1, 2D Moore r3, dimwise and bruck alike) and by 0.59 us per block
 * hop at 1 KiB.  calibrate's dtype series (8 MPI_BYTE blocks of 512 B)
 * said the opposite, 2 ns per byte dearer, and with it auto packed where
 * datatype mode was 15-20% faster.  Fitted: datatype mode adds no
 * per-byte cost over beta; pack mode 0.28 ns per byte copied (twice) and
 * 26 ns per block.  MPICH's figures agree with its pairs (datatype mode
 * 6-20 ns per block hop dearer at 8 B) and stay. */
#if defined(MPICH_VERSION)
#define ISO_COST_DEFAULTS                                                                          \
    {5.0e-7, 7.0e-11, 1.0e-7, 2.6e-11, 2.2e-7, 7.9e-10, 6.7e-7, 8192, 3.0e-6, 0.0, 0.0}
#elif defined(OPEN_MPI)
#define ISO_COST_DEFAULTS                                                                          \
    {8.0e-7, 2.0e-10, 6.6e-6, 2.8e-10, 8.0e-8, 0.0, 6.0e-7, 4096, 6.6e-6, 2.6e-8, 0.0}
#else
#define ISO_COST_DEFAULTS                                                                          \
    {1.0e-6, 2.0e-10, 1.0e-6, 3.0e-10, 3.0e-7, 1.0e-9, 1.0e-6, 8192, 3.0e-6, 0.0, 0.0}
#endif

static cost_t params = ISO_COST_DEFAULTS;
static pthread_once_t params_once = PTHREAD_ONCE_INIT;

/* The constants of ISO_COST_FILE, read once (any thread may be first). */
static void load_params(void)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {{"alpha", offsetof(cost_t, alpha)}, {"beta", offsetof(cost_t, beta)},
                {"gamma", offsetof(cost_t, gamma)}, {"pack", offsetof(cost_t, pack)},
                {"probe", offsetof(cost_t, probe)}, {"dtype", offsetof(cost_t, dtype)},
                {"build", offsetof(cost_t, build)}, {"eager", offsetof(cost_t, eager)},
                {"rndv", offsetof(cost_t, rndv)}, {"pack_blk", offsetof(cost_t, pack_blk)},
                {"dtype_blk", offsetof(cost_t, dtype_blk)}};
    const char *path = getenv("ISO_COST_FILE");
    FILE *f;
    if (path && (f = fopen(path, "r")) != NULL) {
        char line[256], key[32];
        double v;
        while (fgets(line, sizeof line, f)) { /* "key value" lines; others ignored */
            if (sscanf(line, "%31s %lf", key, &v) != 2)
                continue;
            for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++)
                if (!strcmp(key, keys[k].key))
                    *(double *)((char *)&params + keys[k].off) = v;
        }
        fclose(f);
    }
}

static cost_t cost_params(void)
{
    pthread_once(&params_once, load_params);
    return params;
}

/* Messages of msg_bytes each above the eager limit wait for a handshake. */
static double rendezvous(const cost_t *c, double msg_bytes, int msgs)
{
    return msg_bytes > c->eager ? c->rndv * msgs : 0.0;
}

double iso__cost(const iso_figures *f, double block_bytes, iso_msg_mode mode, int reused,
                 int probed)
{
    cost_t c = cost_params();
    double bytes = (double)f->hops * block_bytes;
    double t = c.gamma * f->phases + c.alpha * f->msgs + c.beta * bytes;
    if (f->msgs > 0) /* packed: one int64 of header per block */
        t += rendezvous(&c, (bytes + (mode == ISO_MODE_PACK ? 8.0 * f->hops : 0.0)) / f->msgs,
                        f->msgs);
    if (mode == ISO_MODE_DATATYPE)
        return t + c.dtype * bytes + c.dtype_blk * f->hops +
               (reused ? 0.0 : 2.0 * c.build * f->msgs);
    return t + 2.0 * c.pack * bytes + c.pack_blk * f->hops + (probed ? c.probe * f->msgs : 0.0);
}

double iso__cost_direct(int s, double block_bytes)
{
    cost_t c = cost_params();
    return c.gamma + c.alpha * s + c.beta * block_bytes * s + rendezvous(&c, block_bytes, s);
}
