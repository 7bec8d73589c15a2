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

int iso__build_bruck(const iso_nbh *nb, const iso_args *a, iso_sched *out)
{
    int *line = malloc(sizeof(int) * (size_t)(nb->d + 1)), err;
    iso_sched alt;
    if (line == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = iso__build_combining(nb, a, route_dims, NULL, out);
    if (err == MPI_SUCCESS && nb->d > 1 && find_line(nb, line)) {
        iso__sched_init(&alt);
        err = iso__build_combining(nb, a, route_line, line, &alt);
        if (err == MPI_SUCCESS && alt.struct_msgs < out->struct_msgs) {
            int refs = out->refs;
            iso__sched_destroy(out);
            *out = alt;
            out->refs = refs;
        } else {
            iso__sched_destroy(&alt);
        }
    }
    free(line);
    return err;
}

int iso__figures_bruck(const iso_nbh *nb, const iso_args *a, iso_figures *out)
{
    int *line = malloc(sizeof(int) * (size_t)(nb->d + 1)), err;
    iso_figures alt;
    if (line == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = iso__combining_figures(nb, a, route_dims, NULL, out);
    if (err == MPI_SUCCESS && nb->d > 1 && find_line(nb, line) &&
        (err = iso__combining_figures(nb, a, route_line, line, &alt)) == MPI_SUCCESS &&
        alt.msgs < out->msgs) /* the variant iso__build_bruck takes */
        *out = alt;
    free(line);
    return err;
}
