/* topo: process topologies (DESIGN.md, "Layers").
 *   cart.c          Cartesian grids: relative coordinates, MPI's own
 *                   Cartesian neighborhood (the Cart_* functions)
 *   neighborhood.c  isomorphic neighborhoods attached to Cartesian
 *                   communicators, with the private communicator and the
 *                   schedules cached for them (Iso_neighborhood_*)
 * The neighborhood holds schedules (sched/) but never builds one: the
 * collectives (coll/) do. */
#ifndef ISO_TOPO_H
#define ISO_TOPO_H

#include "sched/sched.h"

/* ---- Cartesian grids (cart.c) ---------------------------------------------- */
#define ISO_MAX_OFFSET (1 << 30) /* |offset coordinate| below this */

/* A process's view of a Cartesian layout (d dims, row-major ranks). */
typedef struct {
    int d;
    const int *dims, *periods, *coords;
} iso_grid;

/* The point coords + sign*a + b (b may be NULL): 1 if it is on the grid,
 * with its coordinates (periodic dimensions wrapped) in out if out is not
 * NULL; 0 if it falls off a non-periodic dimension. */
int iso__grid_point(const iso_grid *g, const int *a, int sign, const int *b, int *out);
/* Rank of coordinates (row-major, as MPI defines it). */
int iso__coords_rank(int d, const int *dims, const int *coords);
/* MPI_SUCCESS, or the NOT_CART code for a null or non-Cartesian comm. */
int iso__cart_check(MPI_Comm comm);
/* dims, periods, coords of the caller in one allocation of 3d ints. */
int iso__cart_layout(MPI_Comm comm, int *d, int **mem);
/* The first max entries of list, without MPI_PROC_NULL if graph. */
void iso__copy_list(const int *list, int n, int max, int graph, int *out);

/* ---- isomorphic neighborhoods (neighborhood.c) ----------------------------- */
#define ISO_MAX_ALGORITHMS 8
#define ISO_ALG_AUTO (-1)

typedef struct {
    int d, s;
    int *dims, *periods, *coords; /* of the Cartesian communicator / caller */
    int *offsets;                 /* s*d relative coordinates */
    int *sources, *targets;       /* s ranks each, MPI_PROC_NULL off the mesh */
    int indegree, outdegree;      /* entries that are not MPI_PROC_NULL */
    int algorithm;                /* default: index in the algorithm table, or ISO_ALG_AUTO */
    iso_msg_mode mode;            /* default mode of combined messages */
    /* Schedules that depend only on the neighborhood (message combining),
     * per [collective][algorithm]; built on first use by coll/. */
    iso_sched *cache[ISO_NCOLL][ISO_MAX_ALGORITHMS];
    /* Their structural figures, computed without building them (auto). */
    iso_figures figures[ISO_NCOLL][ISO_MAX_ALGORITHMS];
    unsigned char have_figures[ISO_NCOLL][ISO_MAX_ALGORITHMS];
} iso_nbh;

static inline iso_grid iso__nbh_grid(const iso_nbh *nb)
{
    return (iso_grid){nb->d, nb->dims, nb->periods, nb->coords};
}

/* Rank of caller + sign*relative, MPI_PROC_NULL off the mesh; scratch holds
 * d ints. */
int iso__shifted_rank(const iso_nbh *nb, const int *relative, int sign, int *scratch);

/* Attribute value of a Cartesian communicator with a neighborhood. */
typedef struct {
    iso_priv *priv; /* NULL in an MPI_Comm_dup copy until its first collective */
    iso_nbh *nbh;
} iso_state;

/* The state of an isocomm (errors: comm null, not Cartesian, no
 * neighborhood).  With need_priv, starts duplicating the private
 * communicator (MPI_Comm_idup) if this communicator is an MPI_Comm_dup copy
 * that has none yet (collective then: only collectives pass need_priv);
 * iso__priv_ready tells when it is usable. */
int iso__state_get(MPI_Comm comm, int need_priv, iso_state **state);
/* Translates offsets rel (s*d, checked by the caller) into a neighborhood
 * of cart with the given defaults and attaches it, replacing any earlier
 * one (collective: the first attachment makes the private communicator). */
int iso__nbh_attach(MPI_Comm cart, int s, const int *rel, int algorithm, iso_msg_mode mode);

#endif
