/* topo: process topologies (DESIGN.md, "Layers").
 *   cart.c          Cartesian grids: relative coordinates, MPI's own
 *                   Cartesian neighborhood (the Cart_* functions)
 *   neighborhood.c  isomorphic neighborhoods attached to Cartesian
 *                   communicators, with the private communicator and the
 *                   schedules cached for them (Iso_neighborhood_*)
 *   locality.c      which processes share a region: a node (ISO_NODE_MAP or
 *                   shared memory), or a package or NUMA domain inside one
 *                   (hwloc), cached per communicator and level, and the
 *                   pairing of processes across regions of any sizes
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
#define ISO_ALG_AUTO ISO_AUTO

typedef struct {
    int d, s;
    int *dims, *periods, *coords; /* of the Cartesian communicator / caller */
    int *offsets;                 /* s*d relative coordinates */
    int *sources, *targets;       /* s ranks each, MPI_PROC_NULL off the mesh */
    int indegree, outdegree;      /* entries that are not MPI_PROC_NULL */
    int algorithm;                /* default: index in the algorithm table, or ISO_ALG_AUTO */
    iso_msg_mode mode;            /* default mode of combined messages */
    int verbose;                  /* ISO_VERBOSE: report each new choice on rank 0 */
    /* what verbose mode has reported: [collective][algorithm][mode] */
    unsigned char reported[ISO_NCOLL][ISO_MAX_ALGORITHMS][3];
    /* Schedules that depend only on the neighborhood (message combining),
     * per [collective][algorithm]; built on first use by coll/. */
    iso_sched *cache[ISO_NCOLL][ISO_MAX_ALGORITHMS];
    /* The blocking-call cache (coll/callcache.c): per collective, the
     * request of the last blocking call (NULL while a call runs it) and a
     * key describing what it was made for (one allocation). */
    struct iso_request_s *call_req[ISO_NCOLL];
    void *call_key[ISO_NCOLL];
    /* Their structural figures, computed without building them (auto). */
    iso_figures figures[ISO_NCOLL][ISO_MAX_ALGORITHMS];
    unsigned char have_figures[ISO_NCOLL][ISO_MAX_ALGORITHMS];
    /* Runtime tuning of auto (coll/tune.c): trial calls per candidate (0:
     * off), and the tuner's table of call shapes, made at the first tuned
     * call and freed with tuner_free. */
    int tune;
    void *tuner;
    void (*tuner_free)(void *tuner);
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
 * of cart with the given defaults (tune: iso_tune's trial calls per
 * candidate, 0 off) and attaches it, replacing any earlier one
 * (collective: the first attachment makes the private communicator). */
int iso__nbh_attach(MPI_Comm cart, int s, const int *rel, int algorithm, iso_msg_mode mode,
                    int verbose, int tune);

/* ---- locality: regions of a communicator (locality.c) ---------------------- */
/* The level of the regions (iso_locality, ISO_LOCALITY; auto is node). */
enum { ISO_LEVEL_NODE, ISO_LEVEL_PACKAGE, ISO_LEVEL_NUMA, ISO_NLEVELS };

/* One value of iso_locality into *level (where: "info KEY" or
 * "environment VAR", for the INFO error naming the levels). */
int iso__locality_option(const char *where, const char *value, int *level);

/* A node is a set of processes that share memory
 * (MPI_Comm_split_type(MPI_COMM_TYPE_SHARED)), or, if the environment
 * variable ISO_NODE_MAP is set, what it says: a comma-separated entry for
 * every rank of MPI_COMM_WORLD, in world rank order, each a node id and
 * optionally a package id inside the node and a NUMA id inside the package
 * ("node[.package[.numa]]", non-negative integers, missing ones 0); a
 * communicator's ranks take the entry of their world rank.  At level node
 * the regions are the nodes; at level package (numa) each node is divided
 * by the package (NUMA node) whose processors hold the process's binding
 * (hwloc), or by the map's ids.  A node where hwloc cannot place every
 * process in one object of the level (unbound on a machine of several,
 * bound across several) is one region (whole_nodes counts them).
 * The fields keep the word "node" for a region of the level: the
 * algorithms treat a region as the nodes they were written for.  Regions
 * may differ in size and hold any ranks; ids are 0..nnodes-1, in the order
 * of the regions' lowest ranks. */
typedef struct {
    int size;           /* processes of the communicator */
    int level;          /* ISO_LEVEL_* of the regions */
    int nnodes;         /* regions */
    int whole_nodes;    /* nodes taken whole: hwloc could not place their processes */
    int *node;          /* [size] region of each rank */
    int *local;         /* [size] rank within its region (in rank order) */
    int *node_first;    /* [nnodes + 1] region n is members[node_first[n] .. node_first[n+1]) */
    int *members;       /* [size] the ranks grouped by region, ascending in each */
    int min_node_size, max_node_size;
    MPI_Comm node_comm; /* this process's region: comm split by region, rank = local rank */
} iso_locality;

/* The regions of comm at `level`, computed on first use of the level
 * (collective over comm then: an allgather, which also checks that all
 * asked for the same level, and a split) and cached on comm until it is
 * freed.  ISO_NODE_MAP is read at that first use; MPI_Comm_dup does not
 * copy the cache, so a duplicate reads the map again.  A malformed map
 * (not one entry for each world rank), or processes asking for different
 * levels, is the INFO code on every process. */
int iso__locality_at(MPI_Comm comm, int level, const iso_locality **out);
/* The nodes: iso__locality_at(comm, ISO_LEVEL_NODE, out). */
int iso__locality_get(MPI_Comm comm, const iso_locality **out);
/* ISO_VERBOSE: rank 0 of comm says, once per process, that l has nodes
 * taken whole (nothing if it has none). */
void iso__locality_report(MPI_Comm comm, const iso_locality *l);

static inline int iso__node_size(const iso_locality *l, int n)
{
    return l->node_first[n + 1] - l->node_first[n];
}

/* The process of node n that rank r addresses for all of its node's
 * messages to node n (DESIGN.md, "Sparse dynamic data exchange"): r itself
 * on its own node; else, with g the position of r in members (ranks ordered
 * by node, then rank), the process of local rank g mod size(n).  Over all
 * other nodes' processes, every process of n is chosen by as many as
 * another, give or take one, whatever the node sizes. */
int iso__locality_partner(const iso_locality *l, int r, int n);

#endif
