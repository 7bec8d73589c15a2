/* Relative coordinates on Cartesian communicators (paper, section 6) and
 * MPI's own Cartesian neighborhood. */
#include "topo/topo.h"
#include <limits.h>
#include <stdlib.h>

int iso__cart_check(MPI_Comm comm)
{
    int topo, err;
    iso__mpi_library_check(); /* before any handle is used */
    if (comm == MPI_COMM_NULL)
        return iso__error_msg(ISO_ERR_NOT_CART, "the communicator is MPI_COMM_NULL (an isocomm "
                                                "freed by Iso_neighborhood_free is MPI_COMM_NULL)");
    if ((err = MPI_Topo_test(comm, &topo)) != MPI_SUCCESS)
        return err;
    if (topo != MPI_CART)
        return iso__error_msg(ISO_ERR_NOT_CART, "the communicator has %s topology (create one "
                                                "with MPI_Cart_create)",
                              topo == MPI_GRAPH ? "a graph" : topo == MPI_DIST_GRAPH
                                                                  ? "a distributed graph"
                                                                  : "no");
    return MPI_SUCCESS;
}

int iso__coords_rank(int d, const int *dims, const int *coords)
{
    int rank = 0;
    for (int j = 0; j < d; j++)
        rank = rank * dims[j] + coords[j];
    return rank;
}

/* dims/periods/coords of the caller, in one allocation of 3*d ints. */
static int cart_layout(MPI_Comm comm, int *d, int **mem)
{
    int err = MPI_Cartdim_get(comm, d);
    if (err != MPI_SUCCESS)
        return err;
    *mem = malloc(sizeof(int) * (size_t)(3 * *d + 1));
    if (*mem == NULL)
        return iso__error(ISO_ERR_NOMEM);
    err = MPI_Cart_get(comm, *d, *mem, *mem + *d, *mem + 2 * *d);
    if (err != MPI_SUCCESS) {
        free(*mem);
        *mem = NULL;
    }
    return err;
}

int iso__grid_point(const iso_grid *g, const int *a, int sign, const int *b, int *out)
{
    for (int j = 0; j < g->d; j++) {
        long long x = (long long)g->coords[j] + sign * (long long)a[j] + (b ? b[j] : 0);
        if (g->periods[j])
            x = ((x % g->dims[j]) + g->dims[j]) % g->dims[j];
        else if (x < 0 || x >= g->dims[j])
            return 0;
        if (out)
            out[j] = (int)x;
    }
    return 1;
}

/* Rank of caller + sign*relative, MPI_PROC_NULL off a non-periodic mesh. */
static int shifted_rank(const iso_grid *g, const int *relative, int sign, int *scratch)
{
    if (!iso__grid_point(g, relative, sign, NULL, scratch))
        return MPI_PROC_NULL;
    return iso__coords_rank(g->d, g->dims, scratch);
}

/* Shared body of the three translation functions. */
static int relative_shift(MPI_Comm comm, const int relative[], int *source, int *target)
{
    int d = 0, *mem = NULL, err = iso__cart_check(comm);
    if (err != MPI_SUCCESS)
        return err;
    err = cart_layout(comm, &d, &mem);
    if (err != MPI_SUCCESS)
        return err;
    if (d > 0 && relative == NULL) {
        err = iso__error(ISO_ERR_ARG);
        goto fn_exit;
    }
    {
        iso_grid g = {d, mem, mem + d, mem + 2 * d};
        int *scratch = malloc(sizeof(int) * (size_t)(d + 1));
        if (scratch == NULL) {
            err = iso__error(ISO_ERR_NOMEM);
            goto fn_exit;
        }
        if (source)
            *source = shifted_rank(&g, relative, -1, scratch);
        if (target)
            *target = shifted_rank(&g, relative, +1, scratch);
        free(scratch);
    }
fn_exit:
    free(mem);
    return err;
}

int Cart_relative_rank(MPI_Comm cartcomm, const int relative[], int *rank)
{
    if (rank == NULL)
        return iso__raise(cartcomm, iso__error(ISO_ERR_ARG));
    return iso__raise(cartcomm, relative_shift(cartcomm, relative, NULL, rank));
}

int Cart_relative_shift(MPI_Comm cartcomm, const int relative[], int *source, int *target)
{
    if (source == NULL || target == NULL)
        return iso__raise(cartcomm, iso__error(ISO_ERR_ARG));
    return iso__raise(cartcomm, relative_shift(cartcomm, relative, source, target));
}

int Cart_relative_coord(MPI_Comm cartcomm, int rank, int relative[])
{
    int d = 0, p, *mem = NULL, err = iso__cart_check(cartcomm);
    if (err != MPI_SUCCESS)
        return iso__raise(cartcomm, err);
    if ((err = MPI_Comm_size(cartcomm, &p)) != MPI_SUCCESS)
        return iso__raise(cartcomm, err);
    if (rank < 0 || rank >= p)
        return iso__raise(cartcomm, iso__error(ISO_ERR_ARG));
    if ((err = cart_layout(cartcomm, &d, &mem)) != MPI_SUCCESS)
        return iso__raise(cartcomm, err);
    if (d > 0 && relative == NULL) {
        free(mem);
        return iso__raise(cartcomm, iso__error(ISO_ERR_ARG));
    }
    {
        int *dims = mem, *periods = mem + d, *me = mem + 2 * d;
        int *c = malloc(sizeof(int) * (size_t)(d + 1));
        if (c == NULL) {
            free(mem);
            return iso__raise(cartcomm, iso__error(ISO_ERR_NOMEM));
        }
        err = MPI_Cart_coords(cartcomm, rank, d, c);
        for (int j = 0; err == MPI_SUCCESS && j < d; j++) {
            int r = c[j] - me[j];
            /* periodic: the representative in (-dims/2, dims/2] */
            if (periods[j]) {
                r = ((r % dims[j]) + dims[j]) % dims[j];
                if (r > dims[j] / 2)
                    r -= dims[j];
            }
            relative[j] = r;
        }
        free(c);
    }
    free(mem);
    return iso__raise(cartcomm, err);
}

/* ---- MPI's own Cartesian neighborhood --------------------------------- */

/* Lists MPI's Cartesian neighbors (2d entries) into nb[], returns d. */
static int cart_neighbors(MPI_Comm comm, int **nb, int *s)
{
    int d, err = iso__cart_check(comm);
    *nb = NULL;
    if (err == MPI_SUCCESS)
        err = MPI_Cartdim_get(comm, &d);
    if (err != MPI_SUCCESS)
        return err;
    *s = 2 * d;
    *nb = malloc(sizeof(int) * (size_t)(*s + 1));
    if (*nb == NULL)
        return iso__error(ISO_ERR_NOMEM);
    for (int j = 0; j < d && err == MPI_SUCCESS; j++)
        err = MPI_Cart_shift(comm, j, 1, &(*nb)[2 * j], &(*nb)[2 * j + 1]);
    return err;
}

int Cart_neighborhood_count(MPI_Comm cartcomm, int *s, int *indegree, int *outdegree)
{
    int *nb, n = 0, deg = 0, err;
    if (s == NULL || indegree == NULL || outdegree == NULL)
        return iso__raise(cartcomm, iso__error(ISO_ERR_ARG));
    err = cart_neighbors(cartcomm, &nb, &n);
    if (err == MPI_SUCCESS) {
        for (int i = 0; i < n; i++)
            deg += nb[i] != MPI_PROC_NULL;
        *s = n;
        *indegree = *outdegree = deg;
    }
    free(nb);
    return iso__raise(cartcomm, err);
}

/* Copies the first max entries of list (skipping PROC_NULL if graph). */
static void copy_list(const int *list, int n, int max, int graph, int *out)
{
    for (int i = 0, k = 0; i < n && k < max; i++)
        if (!graph || list[i] != MPI_PROC_NULL)
            out[k++] = list[i];
}

static int cart_get(const char *fn, MPI_Comm comm, int max_s, int *sources, int *destinations,
                    int graph)
{
    int *nb, n = 0, err;
    if (max_s < 0 || (max_s > 0 && (sources == NULL || destinations == NULL)))
        return iso__raise_in(fn, comm, iso__error(ISO_ERR_ARG));
    err = cart_neighbors(comm, &nb, &n);
    if (err == MPI_SUCCESS) {
        copy_list(nb, n, max_s, graph, sources);
        copy_list(nb, n, max_s, graph, destinations);
    }
    free(nb);
    return iso__raise_in(fn, comm, err);
}

int Cart_neighborhood_get(MPI_Comm cartcomm, int max_s, int sources[], int destinations[])
{
    return cart_get(__func__, cartcomm, max_s, sources, destinations, 0);
}

int Cart_neighborhood_graph_get(MPI_Comm cartcomm, int max_s, int sources[], int destinations[])
{
    return cart_get(__func__, cartcomm, max_s, sources, destinations, 1);
}

void iso__copy_list(const int *list, int n, int max, int graph, int *out)
{
    copy_list(list, n, max, graph, out);
}

int iso__cart_layout(MPI_Comm comm, int *d, int **mem)
{
    int err = iso__cart_check(comm);
    return err == MPI_SUCCESS ? cart_layout(comm, d, mem) : err;
}

int iso__shifted_rank(const iso_nbh *nb, const int *relative, int sign, int *scratch)
{
    iso_grid g = iso__nbh_grid(nb);
    return shifted_rank(&g, relative, sign, scratch);
}
