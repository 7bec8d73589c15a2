/*
 * Deep-halo Jacobi stencil kernel on isomorphic neighborhoods (EuroMPI'15
 * paper, sections 2 and 7.3).
 *
 * Every process owns an n^d block of doubles (d = 2 or 3) surrounded by a
 * halo of depth k, stored as one dense array of L^d doubles, L = n + 2k.
 * Local cell (x_0, ..., x_{d-1}), -k <= x_j < n + k, sits at element
 *     sum_j (x_j + k) * L^(d-1-j)        (last coordinate fastest).
 *
 * Shapes.  The 5-point (2D) and 7-point (3D) stencils read the von Neumann
 * neighbors (Manhattan distance 1), the 9-point and 27-point stencils the
 * Moore neighbors (Chebyshev distance 1).  A halo of depth k holds the cells
 * within distance k of the block in that norm: boxes for Moore; for von
 * Neumann an octahedral shell whose 2D corners are triangles of k(k-1)/2
 * cells, whose 3D edges are triangles extruded along the edge and whose 3D
 * corners are tetrahedra (stacks of triangles).
 *
 * Update.  Jacobi averaging including the centre:
 *     new(x) = (sum of old(x + o) over the stencil offsets o) / points,
 * summed in row-major order of the offsets o in {-1,0,1}^d (first
 * coordinate slowest), so every implementation of it gives the same bits.
 * Non-periodic: the cells outside the global grid hold fixed boundary values
 * that are never updated.  Periodic: the global grid is a torus.
 *
 * Exchange.  The halo is exchanged every k iterations with one
 * alltoallw whose datatypes point into the grid (zero copy).  The j-th
 * iteration after an exchange (j = 1..m, m = iterations in this round,
 * m <= k) updates every cell within distance m - j of the block, so the
 * overlap shrinks to the block itself and the results equal those of an
 * exchange every iteration.
 */
#ifndef ISOCOLL_STENCIL_H
#define ISOCOLL_STENCIL_H

#include <stddef.h>

#include <mpi.h>

#define STENCIL_MAXD 3
#define STENCIL_MAXS 26 /* 3^d - 1 halo pieces at most */

typedef struct {
    int dim;      /* 2 or 3 */
    int points;   /* 5 or 9 (dim 2), 7 or 27 (dim 3) */
    int n;        /* the block has n^dim points */
    int k;        /* halo depth, 1 <= k <= n */
    int periodic; /* torus (1) or mesh with fixed boundary values (0) */
} stencil_params;

/* How the halo is exchanged. */
typedef enum {
    STENCIL_ISO,            /* Iso_neighbor_alltoallw */
    STENCIL_ISO_PERSISTENT, /* Iso_neighbor_alltoallw_init + Iso_start/Iso_wait */
    STENCIL_MPI,            /* MPI_Neighbor_alltoallw on a dist-graph communicator */
    STENCIL_MPI_PERSISTENT, /* MPI_Neighbor_alltoallw_init (MPI-4 only) */
    STENCIL_NVARIANTS
} stencil_variant;

typedef struct stencil_s stencil_t;

/* NULL if p describes a valid problem, else a message saying why not. */
const char *stencil_params_error(const stencil_params *p);
/* 1 for the von Neumann shapes (5- and 7-point), 0 for Moore. */
int stencil_is_von_neumann(const stencil_params *p);

/* The neighborhood: offsets C^0..C^{s-1} (s*dim ints, at most
 * STENCIL_MAXS*dim), the directions c in {-1,0,1}^dim \ {0} whose halo
 * piece is not empty, in row-major order.  Block i is the piece of the
 * block nearest to side C^i (sent to caller + C^i) and the halo piece on
 * side -C^i (received from caller - C^i). */
int stencil_offsets(const stencil_params *p, int offsets[]);

/* The halo piece of offset c: one datatype for both the send and the
 * receive side (they are translates of each other), its displacements in
 * bytes from the start of the grid array, and its number of cells.  An
 * empty piece gives *type = MPI_DATATYPE_NULL and *cells = 0.  The caller
 * frees the type. */
int stencil_piece(const stencil_params *p, const int c[], MPI_Datatype *type,
                  MPI_Aint *sdispl, MPI_Aint *rdispl, int *cells);

/* Collective over comm.  dims[] (dim entries, product = size of comm) is
 * the process grid; info goes to Iso_neighborhood_create_with_info
 * (MPI_INFO_NULL: the library default, e.g. from ISO_ALGORITHM).  Sets up
 * the Cartesian communicator (errors return), the neighborhood, the halo
 * datatypes, the dist-graph communicator and the persistent requests. */
int stencil_create(MPI_Comm comm, const stencil_params *p, const int dims[], MPI_Info info,
                   stencil_t **st);
void stencil_free(stencil_t **st);

/* The Cartesian communicator (ranks as in comm). */
MPI_Comm stencil_comm(const stencil_t *st);
/* Whether this MPI offers the variant (MPI_Neighbor_alltoallw_init needs
 * MPI_VERSION >= 4). */
int stencil_variant_supported(stencil_variant v);
const char *stencil_variant_name(stencil_variant v);
/* The variant named name, or -1. */
int stencil_variant_parse(const char *name);

/* The current iterate (L^dim doubles, layout above) and this process's
 * coordinates in the process grid. */
const double *stencil_grid(const stencil_t *st);
void stencil_coords(const stencil_t *st, int coords[]);
/* What the persistent iso exchange runs (Iso_request_schedule_info of its
 * request): algorithm, combining mode, rounds and messages. */
int stencil_iso_schedule(const stencil_t *st, const char **algorithm, const char **combine,
                         int *rounds, int *messages);
/* Bytes this process sends in one exchange; its in- and out-degree. */
long long stencil_exchange_bytes(const stencil_t *st);
void stencil_degrees(const stencil_t *st, int *indegree, int *outdegree);

/* Initial values: every block cell gets the initial value of its global
 * position, halo cells outside the global grid their boundary value and all
 * other halo cells NaN (any read of a cell the exchange did not fill shows
 * up in the result). */
void stencil_reset(stencil_t *st);
/* Collective: iters Jacobi iterations, exchanging before every round of k.
 * Adds the time spent in exchanges to *exchange_time when it is not NULL.
 * Returns the code of the first failing exchange. */
int stencil_run(stencil_t *st, stencil_variant v, int iters, double *exchange_time);
/* One halo exchange of the current grid. */
int stencil_exchange(stencil_t *st, stencil_variant v);

/* Number of points of the global grid (prod_j dims[j] * n). */
size_t stencil_global_size(const stencil_params *p, const int dims[]);
/* Collective: root receives the global grid (row-major, global_size
 * doubles; global may be NULL elsewhere). */
int stencil_gather(const stencil_t *st, int root, double *global);
/* The reference: iters iterations computed serially on the global grid
 * (straight from the definition, no halo), starting from the same initial
 * and boundary values.  Returns 0, or -1 when out of memory. */
int stencil_serial(const stencil_params *p, const int dims[], int iters, double *global);

#endif
