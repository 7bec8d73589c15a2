/* PMPI shim linked into the YGM degree-count peer (not part of YGM).
 *
 * 1. Pretend node layout.  YGM learns nodes only from
 *    MPI_Comm_split_type(comm, MPI_COMM_TYPE_SHARED, ...) (ygm/detail/layout.hpp).
 *    With PRETEND_RANKS_PER_NODE=k set, that call becomes
 *    MPI_Comm_split(comm, rank / k, key): ranks 0..k-1 are node 0, k..2k-1 node 1, ...
 *    (block placement, equal node sizes: what YGM's layout assumes; P % k must be 0).
 *    Unset: the real shared-memory split (one machine = one node).
 *    PRETEND_NODE_MAP="0,0,0,1,1,1,1,1" gives each rank's node explicitly (uneven sizes,
 *    interleaving) to probe YGM outside its equal-cores-per-node assumption.
 * 2. Count the point-to-point messages YGM itself sends (MPI_Isend/MPI_Issend/MPI_Send;
 *    MPI's own collectives do not come through these symbols), and those whose
 *    destination is on another (pretend) node.  Ranks are taken as MPI_COMM_WORLD
 *    ranks, which holds for ygm::comm(MPI_COMM_WORLD) (it only dups the communicator). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static int pretend_k(void)
{
    const char *s = getenv("PRETEND_RANKS_PER_NODE");
    return s ? atoi(s) : 0;
}

/* Pretend node of a rank: PRETEND_NODE_MAP="0,0,0,1,1,1,1,1" (node id per rank, any
 * sizes and placement; overrides PRETEND_RANKS_PER_NODE), else rank / k; -1 = no pretence. */
static int pretend_node(int rank)
{
    const char *s = getenv("PRETEND_NODE_MAP");
    if (s) {
        for (int i = 0; i < rank && s; i++) {
            s = strchr(s, ',');
            if (s) s++;
        }
        return s ? atoi(s) : -1;
    }
    int k = pretend_k();
    return k > 0 ? rank / k : -1;
}

unsigned long long pretend_sends, pretend_send_bytes;
unsigned long long pretend_remote_sends, pretend_remote_bytes;

int MPI_Comm_split_type(MPI_Comm comm, int split_type, int key, MPI_Info info,
                        MPI_Comm *newcomm)
{
    int rank;
    PMPI_Comm_rank(comm, &rank);
    int node = pretend_node(rank);
    if (split_type != MPI_COMM_TYPE_SHARED || node < 0)
        return PMPI_Comm_split_type(comm, split_type, key, info, newcomm);
    return PMPI_Comm_split(comm, node, key, newcomm);
}

static void count(MPI_Comm comm, int dest, int n, MPI_Datatype type)
{
    int rank, tsize;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Type_size(type, &tsize);
    unsigned long long bytes = (unsigned long long)n * (unsigned long long)tsize;
    pretend_sends++;
    pretend_send_bytes += bytes;
    if (pretend_node(dest) != pretend_node(rank)) {
        pretend_remote_sends++;
        pretend_remote_bytes += bytes;
    }
}

int MPI_Isend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
              MPI_Request *req)
{
    count(comm, dest, n, type);
    return PMPI_Isend(buf, n, type, dest, tag, comm, req);
}

int MPI_Issend(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm,
               MPI_Request *req)
{
    count(comm, dest, n, type);
    return PMPI_Issend(buf, n, type, dest, tag, comm, req);
}

int MPI_Send(const void *buf, int n, MPI_Datatype type, int dest, int tag, MPI_Comm comm)
{
    count(comm, dest, n, type);
    return PMPI_Send(buf, n, type, dest, tag, comm);
}
