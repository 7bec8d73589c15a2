/* The edge generator of the mailbox applications (bench/mailbox_degree.c,
 * bench/mailbox_cc.c, tests/t_mailbox_cc.c) and of the YGM peer program
 * (bench/ygm/degree_count.cpp, built by bench/ygm/compare), so that all
 * see the same edges for the same seed.  Header only, no MPI.
 *
 *   gen_edge(rmat, scale, seed, g, &u, &v)   global edge number g
 *
 * n = 2^scale vertices; rnd(seed, g, j) = splitmix64 of
 * seed + GAMMA*(64g + j + 1); Erdos-Renyi (rmat = 0): u = rnd(g,0) mod n,
 * v = rnd(g,1) mod n; RMAT (rmat = 1): scale levels of quadrant choices
 * with Graph500's (a, b, c, d) = (0.57, 0.19, 0.19, 0.05) from
 * p = (rnd(g, l) >> 11) * 2^-53.  Vertex ids are not permuted. */
#ifndef ISO_BENCH_RMAT_H
#define ISO_BENCH_RMAT_H
#include <stdint.h>

#define GEN_GAMMA 0x9E3779B97F4A7C15ULL

__attribute__((unused)) static uint64_t gen_rnd(uint64_t seed, uint64_t g, uint64_t j)
{
    uint64_t z = seed + GEN_GAMMA * (64 * g + j + 1);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

__attribute__((unused)) static void gen_edge(int rmat, int scale, uint64_t seed, uint64_t g,
                                             uint64_t *u, uint64_t *v)
{
    uint64_t n = (uint64_t)1 << scale;
    if (!rmat) {
        *u = gen_rnd(seed, g, 0) & (n - 1);
        *v = gen_rnd(seed, g, 1) & (n - 1);
        return;
    }
    const double a = 0.57, b = 0.19, c = 0.19;
    *u = *v = 0;
    for (int l = 0; l < scale; l++) {
        double p = (double)(gen_rnd(seed, g, (uint64_t)l) >> 11) * 0x1p-53;
        int ub = 1, vb = 1;
        if (p < a)
            ub = 0, vb = 0;
        else if (p < a + b)
            ub = 0, vb = 1;
        else if (p < a + b + c)
            ub = 1, vb = 0;
        *u = 2 * *u + (uint64_t)ub;
        *v = 2 * *v + (uint64_t)vb;
    }
}
#endif
