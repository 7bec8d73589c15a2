/* Deep-halo Jacobi stencil: halo datatypes, neighborhood, exchange, update.
 * See stencil.h for the grid layout and the iteration scheme. */
#include "stencil.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"

#define MAXPOINTS 27

struct stencil_s {
    stencil_params p;
    int dims[STENCIL_MAXD], coords[STENCIL_MAXD];
    size_t cells;    /* L^dim elements per grid array */
    double *grid[2]; /* current and next iterate */
    int cur;         /* index of the current iterate in grid[] */
    MPI_Comm cart;   /* Cartesian communicator, carries the neighborhood */
    MPI_Comm graph;  /* dist-graph communicator for the MPI variants */

    /* Iso_ argument set: one entry per neighbor index. */
    int s;
    int offsets[STENCIL_MAXS * STENCIL_MAXD];
    int ones[STENCIL_MAXS];
    int cells_of[STENCIL_MAXS]; /* cells in piece i */
    MPI_Datatype types[STENCIL_MAXS];
    MPI_Aint sdispl[STENCIL_MAXS], rdispl[STENCIL_MAXS];
    long long bytes; /* sent per exchange */

    /* MPI_ argument set: the graph's neighbors only, MPI_PROC_NULL removed. */
    int indeg, outdeg;
    MPI_Aint msdispl[STENCIL_MAXS], mrdispl[STENCIL_MAXS];
    MPI_Datatype mstypes[STENCIL_MAXS], mrtypes[STENCIL_MAXS];

    Iso_request iso_req[2];  /* persistent, bound to grid[0] and grid[1] */
    MPI_Request mpi_req[2];

    int npoints;
    ptrdiff_t nbr[MAXPOINTS]; /* stencil offsets as element offsets */
};

/* ---------------------------------------------------------------------- */
/* Geometry. */

const char *stencil_params_error(const stencil_params *p)
{
    if (p->dim == 2 && p->points != 5 && p->points != 9)
        return "2D stencils have 5 or 9 points";
    if (p->dim == 3 && p->points != 7 && p->points != 27)
        return "3D stencils have 7 or 27 points";
    if (p->dim != 2 && p->dim != 3)
        return "dim must be 2 or 3";
    if (p->k < 1)
        return "halo depth must be at least 1";
    if (p->n < p->k)
        return "n must be at least the halo depth (halo from the immediate neighbors)";
    return NULL;
}

int stencil_is_von_neumann(const stencil_params *p)
{
    return p->points == 5 || p->points == 7;
}

static int grid_side(const stencil_params *p)
{
    return p->n + 2 * p->k;
}

/* Distance between elements one apart in dimension j. */
static MPI_Aint elem_stride(const stencil_params *p, int j)
{
    MPI_Aint st = 1;
    for (int i = j + 1; i < p->dim; i++)
        st *= grid_side(p);
    return st;
}

static MPI_Aint cell_index(const stencil_params *p, const int x[])
{
    MPI_Aint idx = 0;
    for (int j = 0; j < p->dim; j++)
        idx = idx * grid_side(p) + x[j] + p->k;
    return idx;
}

static int nonzeros(int d, const int c[])
{
    int m = 0;
    for (int j = 0; j < d; j++)
        m += c[j] != 0;
    return m;
}

/* A halo piece with m non-zero directions holds cells at distance >= m in
 * the Manhattan norm, so von Neumann pieces need k >= m. */
static int piece_empty(const stencil_params *p, const int c[])
{
    return stencil_is_von_neumann(p) && nonzeros(p->dim, c) > p->k;
}

/* Visit the directions {-1,0,1}^d in row-major order; returns 0 when c
 * wraps around to all -1 again. */
static int next_direction(int d, int c[])
{
    for (int j = d - 1; j >= 0; j--) {
        if (c[j] < 1) {
            c[j]++;
            return 1;
        }
        c[j] = -1;
    }
    return 0;
}

int stencil_offsets(const stencil_params *p, int offsets[])
{
    int d = p->dim, s = 0, c[STENCIL_MAXD] = {-1, -1, -1};
    do {
        if (nonzeros(d, c) > 0 && !piece_empty(p, c))
            memcpy(offsets + (size_t)s++ * d, c, (size_t)d * sizeof(int));
    } while (next_direction(d, c));
    return s;
}

/* ---------------------------------------------------------------------- */
/* Halo piece datatypes.  Each is built for the receive side (the halo on
 * side D = -c) relative to an anchor cell; the send side is the same shape
 * translated by c*n into the block. */

/* A box of ext[0] x ... x ext[d-1] cells, nested vectors from the fastest
 * dimension out. */
static int box_type(const stencil_params *p, const int ext[], MPI_Datatype *type)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, outer;
    int rc = MPI_Type_contiguous(ext[p->dim - 1], MPI_DOUBLE, &t);
    for (int j = p->dim - 2; j >= 0 && rc == MPI_SUCCESS; j--) {
        rc = MPI_Type_create_hvector(ext[j], 1, elem_stride(p, j) * (MPI_Aint)sizeof(double), t,
                                     &outer);
        MPI_Type_free(&t);
        t = rc == MPI_SUCCESS ? outer : MPI_DATATYPE_NULL;
    }
    *type = t;
    return rc;
}

/* Row i (i = 0..K-2) of the triangle of cells at distances a_p, a_q >= 1
 * outside the block on sides Dp, Dq of two dimensions, with a_p + a_q <= K.
 * Rows run along the faster dimension q and come in increasing order of
 * x_p; the row at distance a_p has K - a_p cells.  Row lengths and starts
 * are linear in i, which is what Type_create_triangular describes. */
static void triangle_row(int n, int K, int Dp, int Dq, int i, int *xp, int *xq, int *len)
{
    int ap = Dp < 0 ? K - 1 - i : 1 + i;
    *len = K - ap;
    *xp = Dp < 0 ? -ap : n - 1 + ap;
    *xq = Dq < 0 ? -*len : n;
}

/* The triangle as a Type_create_triangular of unit, whose extent is one
 * step in dimension q; S = steps in q per step in p.  Sets the anchor (row
 * 0's first cell) coordinates in dimensions p and q. */
static int triangle_type(const stencil_params *p, int K, int Dp, int Dq, MPI_Aint S,
                         MPI_Datatype unit, int *anchor_p, int *anchor_q, MPI_Datatype *type)
{
    int xp0, xq0, len0, xp1, xq1, len1;
    triangle_row(p->n, K, Dp, Dq, 0, &xp0, &xq0, &len0);
    triangle_row(p->n, K, Dp, Dq, 1, &xp1, &xq1, &len1);
    MPI_Aint stride = (xp1 - xp0) * S + (xq1 - xq0);
    *anchor_p = xp0;
    *anchor_q = xq0;
    return Type_create_triangular(K - 1, len0, len1 - len0, (int)stride, 0, unit, type);
}

/* von Neumann piece with two non-zero directions p < q: in 2D the corner
 * triangle, in 3D that triangle extruded along the remaining dimension e
 * (the unit is then the column of n cells along e). */
static int edge_type(const stencil_params *p, const int D[], int x[], MPI_Datatype *type)
{
    int d = p->dim, pq[2], e = -1, m = 0;
    for (int j = 0; j < d; j++) {
        if (D[j])
            pq[m++] = j;
        else
            e = j;
    }
    int P = pq[0], Q = pq[1];
    MPI_Aint S = elem_stride(p, P) / elem_stride(p, Q);
    MPI_Datatype col = MPI_DATATYPE_NULL, unit = MPI_DOUBLE;
    int rc = MPI_SUCCESS;
    if (e >= 0) {
        rc = MPI_Type_vector(p->n, 1, (int)elem_stride(p, e), MPI_DOUBLE, &col);
        if (rc == MPI_SUCCESS)
            rc = MPI_Type_create_resized(col, 0, elem_stride(p, Q) * (MPI_Aint)sizeof(double),
                                         &unit);
    }
    if (rc == MPI_SUCCESS)
        rc = triangle_type(p, p->k, D[P], D[Q], S, unit, &x[P], &x[Q], type);
    if (col != MPI_DATATYPE_NULL)
        MPI_Type_free(&col);
    if (unit != MPI_DOUBLE)
        MPI_Type_free(&unit);
    return rc;
}

/* von Neumann 3D corner: the tetrahedron a_0 + a_1 + a_2 <= k as a struct
 * of triangles, one per layer of dimension 0 (distance a_0 = 1..k-2). */
static int corner_type(const stencil_params *p, const int D[], int x[], MPI_Datatype *type)
{
    int layers = p->k - 2, rc = MPI_SUCCESS, made = 0;
    MPI_Datatype *t = malloc((size_t)layers * sizeof *t);
    MPI_Aint *disp = malloc((size_t)layers * sizeof *disp), first = 0;
    int *ones = malloc((size_t)layers * sizeof *ones);
    if (!t || !disp || !ones)
        rc = MPI_ERR_NO_MEM;
    for (int l = 0; l < layers && rc == MPI_SUCCESS; l++) {
        int a0 = D[0] < 0 ? layers - l : 1 + l; /* increasing x_0 */
        int y[STENCIL_MAXD];
        y[0] = D[0] < 0 ? -a0 : p->n - 1 + a0;
        rc = triangle_type(p, p->k - a0, D[1], D[2], elem_stride(p, 1), MPI_DOUBLE, &y[1], &y[2],
                           &t[l]);
        if (rc != MPI_SUCCESS)
            break;
        made++;
        if (l == 0) {
            memcpy(x, y, sizeof y);
            first = cell_index(p, y);
        }
        disp[l] = (cell_index(p, y) - first) * (MPI_Aint)sizeof(double);
        ones[l] = 1;
    }
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_create_struct(layers, ones, disp, t, type);
    for (int l = 0; l < made; l++)
        MPI_Type_free(&t[l]);
    free(t);
    free(disp);
    free(ones);
    return rc;
}

int stencil_piece(const stencil_params *p, const int c[], MPI_Datatype *type, MPI_Aint *sdispl,
                  MPI_Aint *rdispl, int *cells)
{
    int d = p->dim, D[STENCIL_MAXD], x[STENCIL_MAXD], ext[STENCIL_MAXD], m, rc, size;
    *type = MPI_DATATYPE_NULL;
    *sdispl = *rdispl = 0;
    *cells = 0;
    if (nonzeros(d, c) == 0 || piece_empty(p, c))
        return MPI_SUCCESS;
    for (int j = 0; j < d; j++) {
        D[j] = -c[j];
        x[j] = D[j] == 0 ? 0 : D[j] < 0 ? -p->k : p->n;
        ext[j] = D[j] == 0 ? p->n : p->k;
    }
    m = nonzeros(d, D);
    if (!stencil_is_von_neumann(p) || m == 1)
        rc = box_type(p, ext, type);
    else if (m == 2)
        rc = edge_type(p, D, x, type);
    else
        rc = corner_type(p, D, x, type);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_commit(type);
    if (rc == MPI_SUCCESS)
        rc = MPI_Type_size(*type, &size);
    if (rc != MPI_SUCCESS) {
        if (*type != MPI_DATATYPE_NULL)
            MPI_Type_free(type);
        return rc;
    }
    MPI_Aint shift = 0; /* the sent cells: the received ones moved by c*n */
    for (int j = 0; j < d; j++)
        shift += c[j] * p->n * elem_stride(p, j);
    *rdispl = cell_index(p, x) * (MPI_Aint)sizeof(double);
    *sdispl = *rdispl + shift * (MPI_Aint)sizeof(double);
    *cells = size / (int)sizeof(double);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------- */
/* Set-up and tear-down. */

static const char *const variant_names[STENCIL_NVARIANTS] = {"iso", "iso-persistent", "mpi",
                                                             "mpi-persistent"};

const char *stencil_variant_name(stencil_variant v)
{
    return v >= 0 && v < STENCIL_NVARIANTS ? variant_names[v] : "?";
}

int stencil_variant_parse(const char *name)
{
    for (int v = 0; v < STENCIL_NVARIANTS; v++)
        if (strcmp(name, variant_names[v]) == 0)
            return v;
    return -1;
}

int stencil_variant_supported(stencil_variant v)
{
#if MPI_VERSION >= 4
    return v >= 0 && v < STENCIL_NVARIANTS;
#else
    return v >= 0 && v < STENCIL_NVARIANTS && v != STENCIL_MPI_PERSISTENT;
#endif
}

MPI_Comm stencil_comm(const stencil_t *st)
{
    return st->cart;
}

const double *stencil_grid(const stencil_t *st)
{
    return st->grid[st->cur];
}

void stencil_coords(const stencil_t *st, int coords[])
{
    memcpy(coords, st->coords, (size_t)st->p.dim * sizeof(int));
}

long long stencil_exchange_bytes(const stencil_t *st)
{
    return st->bytes;
}

void stencil_degrees(const stencil_t *st, int *indegree, int *outdegree)
{
    *indegree = st->indeg;
    *outdegree = st->outdeg;
}

/* The stencil offsets in row-major order, as element offsets in the grid. */
static void stencil_points(stencil_t *st)
{
    int d = st->p.dim, o[STENCIL_MAXD] = {-1, -1, -1};
    st->npoints = 0;
    do {
        int manhattan = 0;
        ptrdiff_t off = 0;
        for (int j = 0; j < d; j++) {
            manhattan += abs(o[j]);
            off += o[j] * elem_stride(&st->p, j);
        }
        if (!stencil_is_von_neumann(&st->p) || manhattan <= 1)
            st->nbr[st->npoints++] = off;
    } while (next_direction(d, o));
}

static int make_pieces(stencil_t *st)
{
    st->s = stencil_offsets(&st->p, st->offsets);
    for (int i = 0; i < st->s; i++) {
        int rc = stencil_piece(&st->p, st->offsets + (size_t)i * st->p.dim, &st->types[i],
                               &st->sdispl[i], &st->rdispl[i], &st->cells_of[i]);
        if (rc != MPI_SUCCESS)
            return rc;
        st->ones[i] = 1;
    }
    return MPI_SUCCESS;
}

/* The dist-graph communicator of the neighborhood, and the MPI argument
 * set: entry j of the send (receive) arrays is the j-th neighbor index with
 * an existing destination (source), the order of Iso_neighborhood_graph_get. */
static int make_graph(stencil_t *st)
{
    int src[STENCIL_MAXS], dst[STENCIL_MAXS], gsrc[STENCIL_MAXS], gdst[STENCIL_MAXS], s;
    int rc = Iso_neighborhood_get(st->cart, st->s, src, dst);
    if (rc == MPI_SUCCESS)
        rc = Iso_neighborhood_count(st->cart, &s, &st->indeg, &st->outdeg);
    if (rc == MPI_SUCCESS)
        rc = Iso_neighborhood_graph_get(st->cart, st->s, gsrc, gdst);
    if (rc != MPI_SUCCESS)
        return rc;
    int in = 0, out = 0;
    st->bytes = 0;
    for (int i = 0; i < st->s; i++) {
        if (dst[i] != MPI_PROC_NULL) {
            if (out >= st->outdeg || gdst[out] != dst[i])
                return MPI_ERR_INTERN; /* graph_get disagrees with get */
            st->msdispl[out] = st->sdispl[i];
            st->mstypes[out++] = st->types[i];
            st->bytes += (long long)st->cells_of[i] * (long long)sizeof(double);
        }
        if (src[i] != MPI_PROC_NULL) {
            if (in >= st->indeg || gsrc[in] != src[i])
                return MPI_ERR_INTERN;
            st->mrdispl[in] = st->rdispl[i];
            st->mrtypes[in++] = st->types[i];
        }
    }
    if (s != st->s || in != st->indeg || out != st->outdeg)
        return MPI_ERR_INTERN;
    /* Unit weights rather than MPI_UNWEIGHTED: Open MPI's (int *)2 sentinel
     * trips GCC's -Wstringop-overread; with reorder = 0 nothing differs. */
    rc = MPI_Dist_graph_create_adjacent(st->cart, st->indeg, gsrc, st->ones, st->outdeg, gdst,
                                        st->ones, MPI_INFO_NULL, 0, &st->graph);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(st->graph, MPI_ERRORS_RETURN);
    return rc;
}

int stencil_iso_schedule(const stencil_t *st, const char **algorithm, const char **combine,
                         int *rounds, int *messages)
{
    long long bytes;
    return Iso_request_schedule_info(st->iso_req[0], algorithm, combine, rounds, messages, &bytes);
}

/* Persistent requests for both grid arrays: the current iterate alternates. */
static int make_requests(stencil_t *st)
{
    int rc = MPI_SUCCESS;
    for (int b = 0; b < 2 && rc == MPI_SUCCESS; b++) {
        double *g = st->grid[b];
        rc = Iso_neighbor_alltoallw_init(g, st->ones, st->sdispl, st->types, g, st->ones,
                                         st->rdispl, st->types, st->cart, MPI_INFO_NULL,
                                         &st->iso_req[b]);
#if MPI_VERSION >= 4
        if (rc == MPI_SUCCESS)
            rc = MPI_Neighbor_alltoallw_init(g, st->ones, st->msdispl, st->mstypes, g, st->ones,
                                             st->mrdispl, st->mrtypes, st->graph, MPI_INFO_NULL,
                                             &st->mpi_req[b]);
#endif
    }
    return rc;
}

static int make_cart(stencil_t *st, MPI_Comm comm)
{
    int periods[STENCIL_MAXD], size, rank, prod = 1, rc;
    for (int j = 0; j < st->p.dim; j++) {
        periods[j] = st->p.periodic;
        prod *= st->dims[j];
    }
    MPI_Comm_size(comm, &size);
    if (prod != size)
        return MPI_ERR_DIMS;
    rc = MPI_Cart_create(comm, st->p.dim, st->dims, periods, 0, &st->cart);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_set_errhandler(st->cart, MPI_ERRORS_RETURN);
    if (rc == MPI_SUCCESS)
        rc = MPI_Comm_rank(st->cart, &rank);
    if (rc == MPI_SUCCESS)
        rc = MPI_Cart_coords(st->cart, rank, st->p.dim, st->coords);
    return rc;
}

int stencil_create(MPI_Comm comm, const stencil_params *p, const int dims[], MPI_Info info,
                   stencil_t **stp)
{
    int rc = MPI_SUCCESS;
    MPI_Comm isocomm;
    stencil_t *st;
    *stp = NULL;
    if (stencil_params_error(p))
        return MPI_ERR_ARG;
    st = calloc(1, sizeof *st);
    if (!st)
        return MPI_ERR_NO_MEM;
    st->p = *p;
    st->cart = st->graph = MPI_COMM_NULL;
    for (int i = 0; i < STENCIL_MAXS; i++)
        st->types[i] = MPI_DATATYPE_NULL;
    for (int b = 0; b < 2; b++) {
        st->iso_req[b] = ISO_REQUEST_NULL;
        st->mpi_req[b] = MPI_REQUEST_NULL;
    }
    memcpy(st->dims, dims, (size_t)p->dim * sizeof(int));
    st->cells = (size_t)elem_stride(p, 0) * (size_t)grid_side(p);
    st->grid[0] = malloc(st->cells * sizeof(double));
    st->grid[1] = malloc(st->cells * sizeof(double));
    if (!st->grid[0] || !st->grid[1]) {
        rc = MPI_ERR_NO_MEM;
        goto fail;
    }
    rc = make_cart(st, comm);
    if (rc == MPI_SUCCESS)
        rc = make_pieces(st);
    if (rc == MPI_SUCCESS)
        rc = Iso_neighborhood_create_with_info(st->cart, st->s, st->offsets, info, &isocomm);
    if (rc == MPI_SUCCESS)
        rc = make_graph(st);
    if (rc == MPI_SUCCESS)
        rc = make_requests(st);
    if (rc != MPI_SUCCESS)
        goto fail;
    stencil_points(st);
    stencil_reset(st);
    *stp = st;
    return MPI_SUCCESS;
fail:
    stencil_free(&st);
    return rc;
}

void stencil_free(stencil_t **stp)
{
    stencil_t *st = *stp;
    if (!st)
        return;
    for (int b = 0; b < 2; b++) {
        if (st->iso_req[b] != ISO_REQUEST_NULL)
            Iso_request_free(&st->iso_req[b]);
        if (st->mpi_req[b] != MPI_REQUEST_NULL)
            MPI_Request_free(&st->mpi_req[b]);
    }
    for (int i = 0; i < STENCIL_MAXS; i++)
        if (st->types[i] != MPI_DATATYPE_NULL)
            MPI_Type_free(&st->types[i]);
    if (st->graph != MPI_COMM_NULL)
        MPI_Comm_free(&st->graph);
    if (st->cart != MPI_COMM_NULL)
        MPI_Comm_free(&st->cart); /* releases the neighborhood too */
    free(st->grid[0]);
    free(st->grid[1]);
    free(st);
    *stp = NULL;
}

/* ---------------------------------------------------------------------- */
/* Initial and boundary values: a hash of the global position, in [0, 1). */

static uint64_t mix64(uint64_t z)
{
    z += 0x9e3779b97f4a7c15u;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
}

static double point_value(int d, const int g[], int boundary)
{
    uint64_t h = boundary ? 0x5bd1e995u : 0x1b873593u;
    for (int j = 0; j < d; j++)
        h = mix64(h ^ (uint32_t)g[j]);
    return (double)(h >> 11) * 0x1.0p-53;
}

static int off_mesh(const stencil_params *p, const int dims[], const int g[])
{
    if (p->periodic)
        return 0;
    for (int j = 0; j < p->dim; j++)
        if (g[j] < 0 || g[j] >= dims[j] * p->n)
            return 1;
    return 0;
}

static int in_block(const stencil_params *p, const int x[])
{
    for (int j = 0; j < p->dim; j++)
        if (x[j] < 0 || x[j] >= p->n)
            return 0;
    return 1;
}

/* Step x through [lo, hi)^d in row-major order; 0 after the last. */
static int next_cell(int d, int x[], int lo, int hi)
{
    for (int j = d - 1; j >= 0; j--) {
        if (++x[j] < hi)
            return 1;
        x[j] = lo;
    }
    return 0;
}

void stencil_reset(stencil_t *st)
{
    const stencil_params *p = &st->p;
    int d = p->dim, x[STENCIL_MAXD], g[STENCIL_MAXD];
    size_t idx = 0;
    for (int j = 0; j < d; j++)
        x[j] = -p->k;
    do {
        double v;
        for (int j = 0; j < d; j++)
            g[j] = st->coords[j] * p->n + x[j];
        if (in_block(p, x))
            v = point_value(d, g, 0);
        else if (off_mesh(p, st->dims, g))
            v = point_value(d, g, 1);
        else
            v = NAN;
        st->grid[0][idx] = st->grid[1][idx] = v;
        idx++;
    } while (next_cell(d, x, -p->k, p->n + p->k));
    st->cur = 0;
}

/* ---------------------------------------------------------------------- */
/* Update. */

/* dst[i] = average of src[i + nbr[q]], summed in the order of nbr[]. */
static void row_update(const double *restrict src, double *restrict dst, ptrdiff_t len,
                       const ptrdiff_t *nbr, int npoints)
{
    for (ptrdiff_t i = 0; i < len; i++)
        dst[i] = src[i + nbr[0]];
    for (int q = 1; q < npoints; q++)
        for (ptrdiff_t i = 0; i < len; i++)
            dst[i] += src[i + nbr[q]];
    for (ptrdiff_t i = 0; i < len; i++)
        dst[i] /= npoints;
}

/* Keep [lo, hi) of dimension j on the global grid (non-periodic). */
static void clip(const stencil_t *st, int j, int *lo, int *hi)
{
    if (st->p.periodic)
        return;
    int first = -st->coords[j] * st->p.n;
    int end = (st->dims[j] - st->coords[j]) * st->p.n;
    if (*lo < first)
        *lo = first;
    if (*hi > end)
        *hi = end;
}

static int dist_to_block(int x, int n)
{
    return x < 0 ? -x : x >= n ? x - n + 1 : 0;
}

/* Update the cells within distance w of the block, dimension j onwards;
 * base = element index contributed by dimensions 0..j-1. */
static void sweep(const stencil_t *st, int j, ptrdiff_t base, int w)
{
    const stencil_params *p = &st->p;
    int lo = -w, hi = p->n + w;
    clip(st, j, &lo, &hi);
    if (lo >= hi)
        return;
    if (j == p->dim - 1) {
        ptrdiff_t at = base + lo + p->k;
        row_update(st->grid[st->cur] + at, st->grid[1 - st->cur] + at, hi - lo, st->nbr,
                   st->npoints);
        return;
    }
    for (int x = lo; x < hi; x++) {
        int wx = stencil_is_von_neumann(p) ? w - dist_to_block(x, p->n) : w;
        sweep(st, j + 1, base + (x + p->k) * elem_stride(p, j), wx);
    }
}

int stencil_exchange(stencil_t *st, stencil_variant v)
{
    double *g = st->grid[st->cur];
    int rc;
    switch (v) {
    case STENCIL_ISO:
        return Iso_neighbor_alltoallw(g, st->ones, st->sdispl, st->types, g, st->ones, st->rdispl,
                                      st->types, st->cart);
    case STENCIL_ISO_PERSISTENT:
        rc = Iso_start(&st->iso_req[st->cur]);
        return rc == MPI_SUCCESS ? Iso_wait(&st->iso_req[st->cur]) : rc;
    case STENCIL_MPI:
        return MPI_Neighbor_alltoallw(g, st->ones, st->msdispl, st->mstypes, g, st->ones,
                                      st->mrdispl, st->mrtypes, st->graph);
    case STENCIL_MPI_PERSISTENT:
#if MPI_VERSION >= 4
        rc = MPI_Start(&st->mpi_req[st->cur]);
        return rc == MPI_SUCCESS ? MPI_Wait(&st->mpi_req[st->cur], MPI_STATUS_IGNORE) : rc;
#else
        return MPI_ERR_UNSUPPORTED_OPERATION;
#endif
    default:
        return MPI_ERR_ARG;
    }
}

int stencil_run(stencil_t *st, stencil_variant v, int iters, double *exchange_time)
{
    for (int done = 0; done < iters;) {
        int m = iters - done < st->p.k ? iters - done : st->p.k;
        double t0 = MPI_Wtime();
        int rc = stencil_exchange(st, v);
        if (exchange_time)
            *exchange_time += MPI_Wtime() - t0;
        if (rc != MPI_SUCCESS)
            return rc;
        for (int t = 1; t <= m; t++) {
            sweep(st, 0, 0, m - t);
            st->cur = 1 - st->cur;
        }
        done += m;
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------------- */
/* Verification: gather and the serial reference. */

size_t stencil_global_size(const stencil_params *p, const int dims[])
{
    size_t size = 1;
    for (int j = 0; j < p->dim; j++)
        size *= (size_t)dims[j] * (size_t)p->n;
    return size;
}

static size_t global_index(const stencil_params *p, const int dims[], const int g[])
{
    size_t idx = 0;
    for (int j = 0; j < p->dim; j++)
        idx = idx * (size_t)dims[j] * (size_t)p->n + (size_t)g[j];
    return idx;
}

/* Copy between the block of the process at coords and a packed n^d array
 * (to_global: packed -> global, else grid -> packed). */
static void block_cells(const stencil_t *st, const int coords[], const double *from, double *to,
                        int to_global)
{
    const stencil_params *p = &st->p;
    int d = p->dim, x[STENCIL_MAXD] = {0, 0, 0}, g[STENCIL_MAXD];
    size_t i = 0;
    do {
        if (to_global) {
            for (int j = 0; j < d; j++)
                g[j] = coords[j] * p->n + x[j];
            to[global_index(p, st->dims, g)] = from[i++];
        } else {
            to[i++] = from[cell_index(p, x)];
        }
    } while (next_cell(d, x, 0, p->n));
}

int stencil_gather(const stencil_t *st, int root, double *global)
{
    const stencil_params *p = &st->p;
    size_t block = 1;
    int rank, size, ok, all_ok = 0, rc;
    double *all = NULL, *mine;
    for (int j = 0; j < p->dim; j++)
        block *= (size_t)p->n;
    MPI_Comm_rank(st->cart, &rank);
    MPI_Comm_size(st->cart, &size);
    mine = malloc(block * sizeof(double));
    if (rank == root)
        all = malloc(block * (size_t)size * sizeof(double));
    ok = mine && (rank != root || all);
    /* Agree first, so that nobody is left hanging when one rank is short. */
    rc = MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_LAND, st->cart);
    if (rc == MPI_SUCCESS && !all_ok)
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS) {
        block_cells(st, st->coords, st->grid[st->cur], mine, 0);
        rc = MPI_Gather(mine, (int)block, MPI_DOUBLE, all, (int)block, MPI_DOUBLE, root, st->cart);
    }
    for (int r = 0; r < size && rank == root && rc == MPI_SUCCESS; r++) {
        int c[STENCIL_MAXD];
        rc = MPI_Cart_coords(st->cart, r, p->dim, c);
        if (rc == MPI_SUCCESS)
            block_cells(st, c, all + (size_t)r * block, global, 1);
    }
    free(mine);
    free(all);
    return rc;
}

/* Value of global point g + o on the grid a (boundary value off the mesh). */
static double serial_read(const stencil_params *p, const int dims[], const double *a,
                          const int g[], const int o[])
{
    int h[STENCIL_MAXD];
    for (int j = 0; j < p->dim; j++) {
        int size = dims[j] * p->n;
        h[j] = g[j] + o[j];
        if (p->periodic)
            h[j] = (h[j] + size) % size;
    }
    if (off_mesh(p, dims, h))
        return point_value(p->dim, h, 1);
    return a[global_index(p, dims, h)];
}

/* The stencil offsets in row-major order, and as offsets in the global
 * grid (valid away from its faces). */
static int serial_points(const stencil_params *p, const int dims[], int o[][STENCIL_MAXD],
                         ptrdiff_t lin[])
{
    int d = p->dim, c[STENCIL_MAXD] = {-1, -1, -1}, np = 0;
    do {
        int manhattan = 0;
        ptrdiff_t off = 0;
        for (int j = 0; j < d; j++) {
            manhattan += abs(c[j]);
            off = off * dims[j] * p->n + c[j];
        }
        if (stencil_is_von_neumann(p) && manhattan > 1)
            continue;
        memcpy(o[np], c, sizeof c);
        lin[np++] = off;
    } while (next_direction(d, c));
    return np;
}

static void serial_step(const stencil_params *p, const int dims[], const double *a, double *b)
{
    int d = p->dim, g[STENCIL_MAXD] = {0, 0, 0}, sizes[STENCIL_MAXD], o[MAXPOINTS][STENCIL_MAXD];
    ptrdiff_t lin[MAXPOINTS];
    int np = serial_points(p, dims, o, lin);
    size_t idx = 0;
    for (int j = 0; j < d; j++)
        sizes[j] = dims[j] * p->n;
    for (;;) {
        int inner = 1;
        for (int j = 0; j < d; j++)
            inner &= g[j] >= 1 && g[j] < sizes[j] - 1;
        double sum = inner ? a[idx + lin[0]] : serial_read(p, dims, a, g, o[0]);
        for (int q = 1; q < np; q++)
            sum += inner ? a[idx + lin[q]] : serial_read(p, dims, a, g, o[q]);
        b[idx++] = sum / np;
        int j = d - 1; /* advance g through the global grid, row-major */
        while (j >= 0 && ++g[j] == sizes[j])
            g[j--] = 0;
        if (j < 0)
            break;
    }
}

int stencil_serial(const stencil_params *p, const int dims[], int iters, double *global)
{
    size_t size = stencil_global_size(p, dims);
    double *tmp = malloc(size * sizeof(double)), *a = global, *b = tmp;
    int g[STENCIL_MAXD] = {0, 0, 0};
    if (!tmp)
        return -1;
    for (size_t idx = 0; idx < size; idx++) {
        global[idx] = point_value(p->dim, g, 0);
        for (int j = p->dim - 1; j >= 0; j--) {
            if (++g[j] < dims[j] * p->n)
                break;
            g[j] = 0;
        }
    }
    for (int it = 0; it < iters; it++) {
        double *t;
        serial_step(p, dims, a, b);
        t = a;
        a = b;
        b = t;
    }
    if (a != global)
        memcpy(global, a, size * sizeof(double));
    free(tmp);
    return 0;
}
