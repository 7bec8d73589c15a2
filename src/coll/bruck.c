/* bruck: logarithmic message combining (EuroMPI'15 section 5.3, after
 * Bruck et al.).  Each coordinate is decomposed into powers of two; the
 * block for offset C hops by sign(c_j) 2^k along dimension j for every set
 * bit k of |c_j|, dimensions in order, bits from low to high.  Moore radius
 * r in d dimensions: 2d ceil(log2(r+1)) messages.
 *
 * Linear variant: if every offset is a multiple m V of one vector V (the
 * neighborhood lies on a line of the torus, e.g. {V, 2V, ..., sV}), blocks
 * hop by sign(m) 2^k V instead, ceil(log2(s+1)) rounds for {V..sV} whatever
 * the direction of V.  The builder takes whichever variant sends fewer
 * messages (per-dimension on ties). */
#include "coll/coll.h"
#include <stdlib.h>

#define BITS 30 /* phases per dimension: offsets are below 2^30 */

/* Hops for a signed multiplier m along dimension dim (d: the line). */
static int bits(int m, int dim, int phase0, iso_hop *hops, int n, int maxhops)
{
    unsigned a = m < 0 ? 0u - (unsigned)m : (unsigned)m;
    int sign = m < 0 ? -1 : 1;
    for (int k = 0; k < BITS && (a >> k); k++)
        if ((a >> k) & 1u) {
            if (n == maxhops)
                return -1;
            hops[n++] = (iso_hop){.phase = phase0 + k, .dim = dim, .step = sign * (1 << k)};
        }
    return n;
}

static int route_dims(const iso_nbh *nb, const int *line, const int *c, iso_hop *hops,
                      int maxhops)
{
    int n = 0;
    (void)line;
    for (int j = 0; j < nb->d && n >= 0; j++)
        n = bits(c[j], j, j * BITS, hops, n, maxhops);
    return n;
}

/* The multiplier m with c = m * line (the caller checked that it exists). */
static int multiplier(const iso_nbh *nb, const int *line, const int *c)
{
    for (int j = 0; j < nb->d; j++)
        if (line[j] != 0)
            return c[j] / line[j];
    return 0;
}

static int route_line(const iso_nbh *nb, const int *line, const int *c, iso_hop *hops,
                      int maxhops)
{
    return bits(multiplier(nb, line, c), nb->d, 0, hops, 0, maxhops);
}

static int gcd(int a, int b)
{
    a = abs(a);
    b = abs(b);
    while (b) {
        int t = a % b;
        a = b;
        b = t;
    }
    return a;
}

/* Finds V (primitive, first non-zero component positive) with every
 * offset a multiple of it; returns 0 if there is none or all are zero. */
static int find_line(const iso_nbh *nb, int *line)
{
    const int *first = NULL;
    int g = 0;
    for (int i = 0; i < nb->s && first == NULL; i++)
        for (int j = 0; j < nb->d; j++)
            if (nb->offsets[(size_t)i * nb->d + j] != 0)
                first = nb->offsets + (size_t)i * nb->d;
    if (first == NULL || nb->d < 1)
        return 0;
    for (int j = 0; j < nb->d; j++)
        g = gcd(g, first[j]);
    for (int j = 0, sign = 0; j < nb->d; j++) {
        if (sign == 0 && first[j] != 0)
            sign = first[j] > 0 ? 1 : -1;
        line[j] = sign * first[j] / g;
    }
    for (int i = 0; i < nb->s; i++) {
        const int *c = nb->offsets + (size_t)i * nb->d;
        int m = multiplier(nb, line, c);
        for (int j = 0; j < nb->d; j++)
            if ((long long)m * line[j] != c[j])
                return 0;
    }
    return 1;
}

/* The variant bruck takes: the line (*use_line, line set) if every offset
 * lies on one and it sends fewer messages, else per dimension; and that
 * variant's figures.  Decided from the figures, so only one is built. */
static int choose_variant(const iso_nbh *nb, const iso_args *a, int *line, int *use_line,
                          iso_figures *f)
{
    iso_figures alt;
    int err = iso__combining_figures(nb, a, route_dims, NULL, f);
    *use_line = 0;
    if (err == MPI_SUCCESS && nb->d > 1 && find_line(nb, line) &&
        (err = iso__combining_figures(nb, a, route_line, line, &alt)) == MPI_SUCCESS &&
        alt.msgs < f->msgs) {
        *f = alt;
        *use_line = 1;
    }
    return err;
}

int iso__build_bruck(const iso_nbh *nb, const iso_args *a, iso_sched *out)
{
    int *line = malloc(sizeof(int) * (size_t)(nb->d + 1)), use_line, err;
    iso_figures f;
    if (line == NULL)
        return iso__error(ISO_ERR_NOMEM);
    if ((err = choose_variant(nb, a, line, &use_line, &f)) == MPI_SUCCESS)
        err = iso__build_combining(nb, a, use_line ? route_line : route_dims,
                                   use_line ? line : NULL, out);
    free(line);
    return err;
}

int iso__figures_bruck(const iso_nbh *nb, const iso_args *a, iso_figures *out)
{
    int *line = malloc(sizeof(int) * (size_t)(nb->d + 1)), use_line, err;
    if (line == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = choose_variant(nb, a, line, &use_line, out);
    free(line);
    return err;
}
