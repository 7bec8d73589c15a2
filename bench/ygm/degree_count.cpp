// Degree counting on generated graphs with YGM's mailbox (ygm::comm::async),
// the peer for isocoll's Iso_mailbox (issue #22).  Written for this comparison
// against YGM's public API; not a YGM example.
//
//   degree_count {er|rmat} SCALE EDGES_PER_RANK SEED
//
// Generator (mirror exactly on the isocoll side):
//   n = 2^SCALE vertices numbered 0..n-1; rank r generates the global edges
//   g = r*EDGES_PER_RANK + i, i = 0..EDGES_PER_RANK-1 (in that order).
//   rnd(g, j) = splitmix64 output for state seed + GAMMA*(64*g + j), i.e.
//     z = seed + GAMMA*(64*g + j + 1);  z = (z^(z>>30))*M1;  z = (z^(z>>27))*M2;  z^(z>>31)
//   with GAMMA = 0x9E3779B97F4A7C15, M1 = 0xBF58476D1CE4E5B9, M2 = 0x94D049BB133111EB
//   (all uint64 arithmetic mod 2^64).
//   er:   u = rnd(g,0) & (n-1),  v = rnd(g,1) & (n-1).
//   rmat: u = v = 0; for level l = 0..SCALE-1:  p = (rnd(g,l) >> 11) * 2^-53;
//         quadrant (ubit,vbit) = (0,0) if p < a, (0,1) if p < a+b, (1,0) if p < a+b+c,
//         else (1,1);  u = 2u+ubit, v = 2v+vbit;  a,b,c,d = 0.57,0.19,0.19,0.05.
//         No vertex permutation, no noise; self loops and duplicate edges kept.
//   Each edge (u,v) sends one message carrying the vertex (uint64) to owner(u) = u mod P
//   and one carrying v to owner(v) = v mod P: 2*EDGES_PER_RANK messages per rank.
//   The owner keeps degree[x / P] += 1.
// Checks: sum of degrees == 2*E*P; sum over x of degree(x)*(x+1) == sum over edges of
//   (u+1)+(v+1) (mod 2^64), the latter computed by the senders.
// Timing: each rank first generates its edges into an array (gen_s, not in the rate);
//   then world.barrier(); t0; async both endpoints of every edge in generation order
//   (u's message first); world.barrier() (YGM's global quiescence); t1.
//   messages/s = 2*E*P / max over ranks (t1 - t0).
#include <ygm/comm.hpp>

#include <cinttypes>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <vector>

static const uint64_t GAMMA = 0x9E3779B97F4A7C15ULL;

static inline uint64_t rnd(uint64_t seed, uint64_t g, uint64_t j) {
  uint64_t z = seed + GAMMA * (64 * g + j + 1);
  z          = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z          = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

static inline void make_edge(bool rmat, int scale, uint64_t seed, uint64_t g,
                             uint64_t &u, uint64_t &v) {
  if (!rmat) {
    uint64_t mask = (scale >= 64) ? ~0ULL : ((1ULL << scale) - 1);
    u             = rnd(seed, g, 0) & mask;
    v             = rnd(seed, g, 1) & mask;
    return;
  }
  const double a = 0.57, b = 0.19, c = 0.19;
  u = v = 0;
  for (int l = 0; l < scale; ++l) {
    double p = (double)(rnd(seed, g, l) >> 11) * 0x1.0p-53;
    int ub, vb;
    if (p < a) { ub = 0; vb = 0; }
    else if (p < a + b) { ub = 0; vb = 1; }
    else if (p < a + b + c) { ub = 1; vb = 0; }
    else { ub = 1; vb = 1; }
    u = 2 * u + ub;
    v = 2 * v + vb;
  }
}

extern "C" unsigned long long pretend_sends, pretend_send_bytes, pretend_remote_sends,
    pretend_remote_bytes;

static std::vector<uint64_t> degree;  // degree of local vertex x is degree[x / P]
static uint64_t              nprocs;

int main(int argc, char **argv) {
  ygm::comm world(&argc, &argv);
  if (argc != 5 || (strcmp(argv[1], "er") && strcmp(argv[1], "rmat"))) {
    if (world.rank0())
      fprintf(stderr, "usage: %s {er|rmat} SCALE EDGES_PER_RANK SEED\n", argv[0]);
    return 1;
  }
  const bool     rmat  = !strcmp(argv[1], "rmat");
  const int      scale = atoi(argv[2]);
  const uint64_t E     = strtoull(argv[3], nullptr, 10);
  const uint64_t seed  = strtoull(argv[4], nullptr, 10);
  const int      P     = world.size(), r = world.rank();
  nprocs               = P;
  const uint64_t n     = 1ULL << scale;
  degree.assign((n + P - 1) / P, 0);

  // Generate this rank's edges first, so the timed phase is the mailbox alone.
  world.cf_barrier();
  double                g0 = MPI_Wtime();
  std::vector<uint64_t> edges(2 * E);
  uint64_t              weighted = 0;
  for (uint64_t i = 0; i < E; ++i) {
    make_edge(rmat, scale, seed, (uint64_t)r * E + i, edges[2 * i], edges[2 * i + 1]);
    weighted += (edges[2 * i] + 1) + (edges[2 * i + 1] + 1);
  }
  double gen_s = MPI_Wtime() - g0;

  auto inc = [](uint64_t x) { degree[x / nprocs] += 1; };
  unsigned long long s0 = pretend_sends, b0 = pretend_send_bytes,
                     rs0 = pretend_remote_sends, rb0 = pretend_remote_bytes;
  world.barrier();
  double t0 = MPI_Wtime();
  for (uint64_t i = 0; i < E; ++i) {
    uint64_t u = edges[2 * i], v = edges[2 * i + 1];
    world.async((int)(u % P), inc, u);
    world.async((int)(v % P), inc, v);
  }
  world.barrier();
  double t = MPI_Wtime() - t0;

  uint64_t deg_sum = 0, deg_weighted = 0;
  for (uint64_t k = 0; k < degree.size(); ++k) {
    deg_sum += degree[k];
    deg_weighted += degree[k] * (k * P + r + 1);
  }
  deg_sum      = world.all_reduce_sum(deg_sum);
  deg_weighted = world.all_reduce_sum(deg_weighted);
  weighted     = world.all_reduce_sum(weighted);
  double t_max = world.all_reduce_max(t), gen_max = world.all_reduce_max(gen_s);
  uint64_t sends  = world.all_reduce_sum((uint64_t)(pretend_sends - s0)),
           bytes  = world.all_reduce_sum((uint64_t)(pretend_send_bytes - b0)),
           rsends = world.all_reduce_sum((uint64_t)(pretend_remote_sends - rs0)),
           rbytes = world.all_reduce_sum((uint64_t)(pretend_remote_bytes - rb0));
  bool ok = deg_sum == 2 * E * P && deg_weighted == weighted;
  if (world.rank0()) {
    const char *route = getenv("YGM_COMM_ROUTING");
    const char *rpn   = getenv("PRETEND_RANKS_PER_NODE");
    printf("graph=%s scale=%d edges_per_rank=%" PRIu64 " seed=%" PRIu64
           " P=%d routing=%s ranks_per_node=%s nodes=%d\n",
           argv[1], scale, E, seed, P, route ? route : "NONE", rpn ? rpn : "shared",
           world.layout().node_size());
    printf("degree_sum=%" PRIu64 " expect=%" PRIu64 " weighted=%" PRIu64
           " expect=%" PRIu64 " check=%s\n",
           deg_sum, 2 * E * P, deg_weighted, weighted, ok ? "ok" : "FAILED");
    printf("time_s=%.4f gen_s=%.4f msgs=%" PRIu64 " msgs_per_s=%.4g\n", t_max,
           gen_max, 2 * E * P, 2.0 * E * P / t_max);
    printf("mpi_sends_per_rank=%.1f bytes_per_rank=%.0f remote_sends_per_rank=%.1f "
           "remote_bytes_per_rank=%.0f\n",
           (double)sends / P, (double)bytes / P, (double)rsends / P, (double)rbytes / P);
  }
  return ok ? 0 : 2;
}
