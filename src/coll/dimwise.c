/* dimwise: message combining along the torus dimensions (EuroMPI'15
 * section 5.2).  The block for offset C travels one hop per non-zero
 * coordinate, in dimension order; phase j sends one combined message per
 * distinct non-zero j-th coordinate.  Moore radius r in d dimensions:
 * 2rd messages instead of (2r+1)^d - 1. */
#include "coll/coll.h"

static int route(const iso_nbh *nb, const int *line, const int *c, iso_hop *hops, int maxhops)
{
    int n = 0;
    (void)line;
    for (int j = 0; j < nb->d; j++)
        if (c[j] != 0) {
            if (n == maxhops)
                return -1;
            hops[n++] = (iso_hop){.phase = j, .dim = j, .step = c[j]};
        }
    return n;
}

int iso__build_dimwise(const iso_nbh *nb, const iso_args *a, iso_sched *out)
{
    return iso__build_combining(nb, a, route, NULL, out);
}

int iso__figures_dimwise(const iso_nbh *nb, const iso_args *a, iso_figures *out)
{
    return iso__combining_figures(nb, a, route, NULL, out);
}
