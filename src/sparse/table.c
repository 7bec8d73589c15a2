/* The SDDE algorithm table and auto's rule.  An unknown name is an error,
 * never a silent fallback. */
#include "sparse/sparse.h"

enum { PERSONALIZED, NBX, RMA, LOCALITY_PERSONALIZED, LOCALITY_NBX, VPT, SHARING };

const iso_sdde_algorithm iso__sdde_algorithms[] = {
    [PERSONALIZED] = {"personalized", iso__sdde_personalized, 0},
    [NBX] = {"nbx", iso__sdde_nbx, 0},
    [RMA] = {"rma", iso__sdde_rma, 1},
    [LOCALITY_PERSONALIZED] = {"locality-personalized", iso__sdde_locality_personalized, 0},
    [LOCALITY_NBX] = {"locality-nbx", iso__sdde_locality_nbx, 0},
    [VPT] = {"vpt", iso__sdde_vpt, 0},
    [SHARING] = {"sharing", iso__sdde_sharing, 0},
};
const iso_table iso__sdde_table = ISO_TABLE(iso__sdde_algorithms);

/* auto, from the paper's findings (Geyko et al. 2023, section V): the
 * reduction of the personalized method is cheap at small process counts,
 * where it wins; NBX avoids it at larger ones; aggregation per node pays
 * once there are many processes per node and many nodes, and loses at
 * small scale (64 processes on 2 nodes in the paper).  rma needs p slots
 * of window memory on every process and is never chosen; neither is vpt
 * (its header exchange costs n rounds of messages per call).  The thresholds
 * are first guesses, to be set by bench/sdde measurements. */
#define NBX_MIN_PROCS 64        /* from here on nbx instead of personalized */
#define LOCALITY_MIN_PROCS 128  /* locality-nbx from here on ... */
#define LOCALITY_MIN_PER_NODE 8 /* ... with at least this many per node on average */

int iso__sdde_select(int nprocs, int nnodes, int constant)
{
    (void)constant; /* the paper's ranking is the same for both forms */
    if (nnodes > 1 && nprocs >= LOCALITY_MIN_PROCS && nprocs >= LOCALITY_MIN_PER_NODE * nnodes)
        return LOCALITY_NBX;
    return nprocs >= NBX_MIN_PROCS ? NBX : PERSONALIZED;
}
