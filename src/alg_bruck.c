/* bruck: logarithmic message combining (EuroMPI'15 section 5.3, after
 * Bruck et al.).  Each coordinate is decomposed into powers of two; the
 * block for offset C hops by sign(c_j) 2^k along dimension j for every set
 * bit k of |c_j|, dimensions in order, bits from low to high.  Moore radius
 * r in d dimensions: 2d ceil(log2(r+1)) messages. */
#include "iso_internal.h"
#include <stdlib.h>

#define BITS 31 /* phases per dimension: one per bit of an int */

static int route(const iso_nbh *nb, const int *c, iso_hop *hops, int maxhops)
{
    int n = 0;
    for (int j = 0; j < nb->d; j++) {
        unsigned a = c[j] < 0 ? 0u - (unsigned)c[j] : (unsigned)c[j];
        int sign = c[j] < 0 ? -1 : 1;
        for (int k = 0; k < BITS && (a >> k); k++)
            if ((a >> k) & 1u) {
                if (n == maxhops)
                    return -1;
                hops[n++] = (iso_hop){.phase = j * BITS + k, .dim = j, .step = sign * (1 << k)};
            }
    }
    return n;
}

int iso__build_bruck(const iso_nbh *nb, const iso_args *a, iso_sched *out)
{
    return iso__build_combining(nb, a, route, out);
}
