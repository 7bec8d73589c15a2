/* compat/smpi: stand-ins for the MPI calls that SimGrid's SMPI (3.32) does
 * not implement (it aborts with "Not yet implemented: PMPI_..."), so that
 * the library, its tests, examples and benchmarks run unchanged in the
 * simulator (DESIGN.md, "SimGrid's SMPI").
 *
 * Only the SMPI build sees this: the Makefile forces this header into every
 * compilation of MPI=smpi (-include src/compat/smpi.h, after smpicc's own
 * smpi_helpers.h) and compiles smpi.c into that library alone.  The MPICH
 * and Open MPI builds never include it: their objects are the same with or
 * without this directory.
 *
 * Each name below is redirected by a macro to iso_smpi_NAME (smpi.c):
 *   MPI_Topo_test          an emulated distributed graph (below) is
 *                          MPI_DIST_GRAPH, a communicator on which
 *                          MPI_Cartdim_get works is MPI_CART, any other
 *                          MPI_UNDEFINED (SMPI has no MPI_Graph_create).
 *   MPI_Comm_idup          MPI_Comm_dup, and a request that is already
 *                          complete (MPI_REQUEST_NULL).  It blocks: every
 *                          process must reach it, which the library's
 *                          callers do (collectives are called in one order).
 *                          In the simulator other transfers progress
 *                          without their process, so nothing waits on it.
 *   MPI_Test               of MPI_REQUEST_NULL: flag true, empty status
 *                          (SMPI leaves the flag unset with
 *                          MPI_STATUS_IGNORE); other requests go to SMPI.
 *   MPI_Testall, MPI_Waitall   SMPI's MPI_Testall frees the requests that
 *                          are complete even when it returns false, and
 *                          the next call gives them empty statuses: their
 *                          statuses are kept until the array completes.
 *   MPI_Ibarrier, MPI_Iallreduce   schedules of log p steps that every
 *                          process runs (SMPI's MPI_Ibarrier releases all
 *                          but rank 0 before the others have entered, and
 *                          its MPI_Iallreduce sends p(p - 1) messages,
 *                          which made iso_verify's agreement the whole
 *                          cost of a test at 256 ranks): a dissemination
 *                          barrier, and recursive doubling (a fold for
 *                          non-powers of two) for a predefined commutative
 *                          op on a named type below 64 KiB.  Every
 *                          completion call wrapped here (MPI_Test, _Wait,
 *                          _Testall, _Waitall, _Testany, _Waitany)
 *                          advances them, and a wait blocks on its
 *                          requests and the schedules' receives at once.
 *                          Tags INT_MAX - 2 and below on the
 *                          communicator.  Other ops: the relay below.
 *   MPI_Iallgather(v), MPI_Ireduce_scatter_block, MPI_Iallreduce with
 *                          other ops   a relay through rank 0 (2(p - 1)
 *                          messages; rank 0 gathers, or reduces and sends
 *                          each its block, from the wrapped completion
 *                          calls; tags INT_MAX and INT_MAX - 1):
 *                          SMPI's own send p(p - 1) messages, and auto's
 *                          sharing figures (route/sharing.c) and the
 *                          SDDE's personalized algorithm made t_graph,
 *                          t_vpt and t_sparse take minutes at 256 ranks.
 *                          Only named types, results below 64 KiB, and for
 *                          MPI_Iallgatherv blocks in rank order (displs
 *                          the prefix sums, as the library's); SMPI's own
 *                          otherwise.
 *   MPI_Win_sync           a memory barrier (SMPI: not implemented; its
 *                          windows are plain memory, one copy).
 *   MPI_Mprobe/_Improbe    MPI_Probe/_Iprobe; the MPI_Message (a void * in
 *                          SMPI) is an allocated record of the matched
 *                          source, tag and communicator.
 *   MPI_Mrecv/_Imrecv      MPI_Recv/_Irecv from that source with that tag.
 *                          The message received is the one probed: it is
 *                          the first from its source with its tag, and no
 *                          receive can be posted between the probe and this
 *                          one (SMPI runs each process as one thread; SMPI
 *                          has no MPI_THREAD_MULTIPLE).
 *   MPI_Get_elements(_x)   MPI_Get_count, for predefined datatypes (the
 *                          library asks with MPI_BYTE); a derived datatype
 *                          is MPI_ERR_TYPE.
 *   MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create
 *                          the new communicator is an MPI_Comm_dup of the
 *                          old one, and carries its neighbor lists (and
 *                          weights) as an attribute, which MPI_Comm_dup
 *                          copies as it copies a real topology.
 *                          MPI_Dist_graph_create sends every edge to both
 *                          of its ends (MPI_Alltoall of counts,
 *                          MPI_Alltoallv of the edges); lists are in the
 *                          order of the naming process, then its edges.
 *                          reorder is ignored (allowed), info unused.
 *   MPI_Dist_graph_neighbors(_count)   answered from the attribute.
 *   MPI_Neighbor_allgather, _alltoall, _alltoallv, _alltoallw
 *                          one MPI_Irecv per source and one MPI_Isend per
 *                          destination on a private duplicate of the
 *                          communicator (made at the first call), then
 *                          MPI_Waitall.  On an emulated graph one tag: the
 *                          k-th edge a -> b is matched with the k-th
 *                          occurrence of a in b's sources (non-overtaking).
 *                          On a Cartesian communicator (MPI order: per
 *                          dimension the -1 then the +1 neighbor) the block
 *                          sent in direction k arrives in block k^1 of the
 *                          receiver: tag k, received with tag k^1, which
 *                          stays right where both neighbors are one process
 *                          (a dimension of 1 or 2 processes, periodic).
 *   MPI_Add_error_class, _code, _string (SMPI: "not yet implemented",
 *   returning success with nothing made), MPI_Error_class, _string
 *                          a table of this process's added classes and
 *                          codes (numbered from MPI_ERR_LASTCODE + 1) and
 *                          their strings; other codes go to SMPI.
 *                          MPI_Comm_get_attr of MPI_LASTUSEDCODE gives the
 *                          last added code.  SMPI's
 *                          MPI_ERRORS_ARE_FATAL does not know these strings
 *                          (it prints its own text for the code).
 *   MPI_Comm_call_errhandler   SMPI 3.32 calls a null function for the
 *                          predefined handlers: MPI_ERRORS_RETURN returns,
 *                          MPI_ERRORS_ARE_FATAL prints the code's string
 *                          and aborts, a user's handler is SMPI's to call.
 *   MPI_Finalize, MPI_Comm_set_attr
 *                          SMPI deletes MPI_COMM_SELF's attributes after it
 *                          has marked the process finalized, so that their
 *                          callbacks cannot call MPI: the keyvals set on
 *                          MPI_COMM_SELF are recorded and their attributes
 *                          deleted (last set first) before PMPI_Finalize.
 *   MPI_Type_contiguous, _vector, _create_hvector, _indexed, _create_hindexed,
 *   _create_indexed_block, _create_hindexed_block, _create_struct,
 *   _create_resized, _dup, _free and the queries _size(_x),
 *   _get_extent(_x), _get_true_extent(_x), _get_envelope
 *                          SMPI 3.32 moves count > 1 of most derived types
 *                          wrongly: every type is made as a flattened
 *                          struct SMPI walks right (smpi_types.c).
 * Not covered (none is used here): the nonblocking and persistent
 * neighborhood collectives, MPI_Neighbor_allgatherv, MPI_Graph_*. */
#ifndef ISO_COMPAT_SMPI_H
#define ISO_COMPAT_SMPI_H

#include <mpi.h>

#define ISO_SMPI_COMPAT 1
#define ISO_SMPI_API __attribute__((visibility("default")))

ISO_SMPI_API int iso_smpi_Topo_test(MPI_Comm comm, int *status);
ISO_SMPI_API int iso_smpi_Comm_idup(MPI_Comm comm, MPI_Comm *newcomm, MPI_Request *request);
ISO_SMPI_API int iso_smpi_Test(MPI_Request *request, int *flag, MPI_Status *status);
ISO_SMPI_API int iso_smpi_Wait(MPI_Request *request, MPI_Status *status);
ISO_SMPI_API int iso_smpi_Testall(int count, MPI_Request requests[], int *flag,
                                  MPI_Status statuses[]);
ISO_SMPI_API int iso_smpi_Waitall(int count, MPI_Request requests[], MPI_Status statuses[]);
ISO_SMPI_API int iso_smpi_Testany(int count, MPI_Request requests[], int *index, int *flag,
                                  MPI_Status *status);
ISO_SMPI_API int iso_smpi_Waitany(int count, MPI_Request requests[], int *index,
                                  MPI_Status *status);
ISO_SMPI_API int iso_smpi_Ibarrier(MPI_Comm comm, MPI_Request *request);
ISO_SMPI_API int iso_smpi_Iallreduce(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype type, MPI_Op op, MPI_Comm comm,
                                     MPI_Request *request);
ISO_SMPI_API int iso_smpi_Ireduce_scatter_block(const void *sendbuf, void *recvbuf,
                                                int recvcount, MPI_Datatype type, MPI_Op op,
                                                MPI_Comm comm, MPI_Request *request);
ISO_SMPI_API int iso_smpi_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                     MPI_Comm comm, MPI_Request *request);
ISO_SMPI_API int iso_smpi_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                      void *recvbuf, const int recvcounts[], const int displs[],
                                      MPI_Datatype recvtype, MPI_Comm comm,
                                      MPI_Request *request);
ISO_SMPI_API int iso_smpi_Win_sync(MPI_Win win);
ISO_SMPI_API int iso_smpi_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message,
                                 MPI_Status *status);
ISO_SMPI_API int iso_smpi_Improbe(int source, int tag, MPI_Comm comm, int *flag,
                                  MPI_Message *message, MPI_Status *status);
ISO_SMPI_API int iso_smpi_Mrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                                MPI_Status *status);
ISO_SMPI_API int iso_smpi_Imrecv(void *buf, int count, MPI_Datatype type, MPI_Message *message,
                                 MPI_Request *request);
ISO_SMPI_API int iso_smpi_Get_elements(const MPI_Status *status, MPI_Datatype type,
                                       int *elements);
ISO_SMPI_API int iso_smpi_Get_elements_x(const MPI_Status *status, MPI_Datatype type,
                                         MPI_Count *elements);
ISO_SMPI_API int iso_smpi_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree,
                                                     const int sources[], const int sourceweights[],
                                                     int outdegree, const int destinations[],
                                                     const int destweights[], MPI_Info info,
                                                     int reorder, MPI_Comm *comm_dist_graph);
ISO_SMPI_API int iso_smpi_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[],
                                            const int degrees[], const int destinations[],
                                            const int weights[], MPI_Info info, int reorder,
                                            MPI_Comm *comm_dist_graph);
ISO_SMPI_API int iso_smpi_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree,
                                                     int *outdegree, int *weighted);
ISO_SMPI_API int iso_smpi_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[],
                                               int sourceweights[], int maxoutdegree,
                                               int destinations[], int destweights[]);
ISO_SMPI_API int iso_smpi_Neighbor_allgather(const void *sendbuf, int sendcount,
                                             MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                             MPI_Datatype recvtype, MPI_Comm comm);
ISO_SMPI_API int iso_smpi_Neighbor_alltoall(const void *sendbuf, int sendcount,
                                            MPI_Datatype sendtype, void *recvbuf, int recvcount,
                                            MPI_Datatype recvtype, MPI_Comm comm);
ISO_SMPI_API int iso_smpi_Neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                             const int sdispls[], MPI_Datatype sendtype,
                                             void *recvbuf, const int recvcounts[],
                                             const int rdispls[], MPI_Datatype recvtype,
                                             MPI_Comm comm);
ISO_SMPI_API int iso_smpi_Neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                             const MPI_Aint sdispls[],
                                             const MPI_Datatype sendtypes[], void *recvbuf,
                                             const int recvcounts[], const MPI_Aint rdispls[],
                                             const MPI_Datatype recvtypes[], MPI_Comm comm);
ISO_SMPI_API int iso_smpi_Add_error_class(int *errorclass);
ISO_SMPI_API int iso_smpi_Add_error_code(int errorclass, int *errorcode);
ISO_SMPI_API int iso_smpi_Add_error_string(int errorcode, const char *string);
ISO_SMPI_API int iso_smpi_Error_class(int errorcode, int *errorclass);
ISO_SMPI_API int iso_smpi_Error_string(int errorcode, char *string, int *resultlen);
ISO_SMPI_API int iso_smpi_Comm_call_errhandler(MPI_Comm comm, int errorcode);
ISO_SMPI_API int iso_smpi_Comm_get_attr(MPI_Comm comm, int keyval, void *value, int *flag);
ISO_SMPI_API int iso_smpi_Comm_set_attr(MPI_Comm comm, int keyval, void *value);
ISO_SMPI_API int iso_smpi_Finalize(void);

/* Derived datatypes (smpi_types.c says why): every constructor makes a
 * type SMPI moves correctly, and these queries answer from its type map. */
ISO_SMPI_API int iso_smpi_Type_contiguous(int count, MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_vector(int count, int blocklength, int stride, MPI_Datatype old,
                                      MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_hvector(int count, int blocklength, MPI_Aint stride,
                                              MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_indexed(int count, const int lens[], const int disps[],
                                       MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_hindexed(int count, const int lens[], const MPI_Aint disps[],
                                               MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_indexed_block(int count, int len, const int disps[],
                                                    MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_hindexed_block(int count, int len, const MPI_Aint disps[],
                                                     MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_struct(int count, const int lens[], const MPI_Aint disps[],
                                             const MPI_Datatype types[], MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_create_resized(MPI_Datatype old, MPI_Aint lb, MPI_Aint extent,
                                              MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_dup(MPI_Datatype old, MPI_Datatype *newtype);
ISO_SMPI_API int iso_smpi_Type_free(MPI_Datatype *type);
ISO_SMPI_API int iso_smpi_Type_size(MPI_Datatype type, int *size);
ISO_SMPI_API int iso_smpi_Type_size_x(MPI_Datatype type, MPI_Count *size);
ISO_SMPI_API int iso_smpi_Type_get_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent);
ISO_SMPI_API int iso_smpi_Type_get_extent_x(MPI_Datatype type, MPI_Count *lb, MPI_Count *extent);
ISO_SMPI_API int iso_smpi_Type_get_true_extent(MPI_Datatype type, MPI_Aint *lb, MPI_Aint *extent);
ISO_SMPI_API int iso_smpi_Type_get_true_extent_x(MPI_Datatype type, MPI_Count *lb,
                                                 MPI_Count *extent);
ISO_SMPI_API int iso_smpi_Type_get_envelope(MPI_Datatype type, int *ni, int *na, int *nd,
                                            int *combiner);

#undef MPI_Type_contiguous
#define MPI_Type_contiguous iso_smpi_Type_contiguous
#undef MPI_Type_vector
#define MPI_Type_vector iso_smpi_Type_vector
#undef MPI_Type_create_hvector
#define MPI_Type_create_hvector iso_smpi_Type_create_hvector
#undef MPI_Type_indexed
#define MPI_Type_indexed iso_smpi_Type_indexed
#undef MPI_Type_create_hindexed
#define MPI_Type_create_hindexed iso_smpi_Type_create_hindexed
#undef MPI_Type_create_indexed_block
#define MPI_Type_create_indexed_block iso_smpi_Type_create_indexed_block
#undef MPI_Type_create_hindexed_block
#define MPI_Type_create_hindexed_block iso_smpi_Type_create_hindexed_block
#undef MPI_Type_create_struct
#define MPI_Type_create_struct iso_smpi_Type_create_struct
#undef MPI_Type_create_resized
#define MPI_Type_create_resized iso_smpi_Type_create_resized
#undef MPI_Type_dup
#define MPI_Type_dup iso_smpi_Type_dup
#undef MPI_Type_free
#define MPI_Type_free iso_smpi_Type_free
#undef MPI_Type_size
#define MPI_Type_size iso_smpi_Type_size
#undef MPI_Type_size_x
#define MPI_Type_size_x iso_smpi_Type_size_x
#undef MPI_Type_get_extent
#define MPI_Type_get_extent iso_smpi_Type_get_extent
#undef MPI_Type_get_extent_x
#define MPI_Type_get_extent_x iso_smpi_Type_get_extent_x
#undef MPI_Type_get_true_extent
#define MPI_Type_get_true_extent iso_smpi_Type_get_true_extent
#undef MPI_Type_get_true_extent_x
#define MPI_Type_get_true_extent_x iso_smpi_Type_get_true_extent_x
#undef MPI_Type_get_envelope
#define MPI_Type_get_envelope iso_smpi_Type_get_envelope
#define MPI_Topo_test iso_smpi_Topo_test
#define MPI_Comm_idup iso_smpi_Comm_idup
#undef MPI_Test
#define MPI_Test iso_smpi_Test
#undef MPI_Wait
#define MPI_Wait iso_smpi_Wait
#undef MPI_Testall
#define MPI_Testall iso_smpi_Testall
#undef MPI_Waitall
#define MPI_Waitall iso_smpi_Waitall
#undef MPI_Testany
#define MPI_Testany iso_smpi_Testany
#undef MPI_Waitany
#define MPI_Waitany iso_smpi_Waitany
#undef MPI_Ibarrier
#define MPI_Ibarrier iso_smpi_Ibarrier
#undef MPI_Iallreduce
#define MPI_Iallreduce iso_smpi_Iallreduce
#undef MPI_Ireduce_scatter_block
#define MPI_Ireduce_scatter_block iso_smpi_Ireduce_scatter_block
#undef MPI_Iallgather
#define MPI_Iallgather iso_smpi_Iallgather
#undef MPI_Iallgatherv
#define MPI_Iallgatherv iso_smpi_Iallgatherv
#undef MPI_Win_sync
#define MPI_Win_sync iso_smpi_Win_sync
#define MPI_Mprobe iso_smpi_Mprobe
#define MPI_Improbe iso_smpi_Improbe
#define MPI_Mrecv iso_smpi_Mrecv
#define MPI_Imrecv iso_smpi_Imrecv
#define MPI_Get_elements iso_smpi_Get_elements
#define MPI_Get_elements_x iso_smpi_Get_elements_x
#define MPI_Dist_graph_create_adjacent iso_smpi_Dist_graph_create_adjacent
#define MPI_Dist_graph_create iso_smpi_Dist_graph_create
#define MPI_Dist_graph_neighbors_count iso_smpi_Dist_graph_neighbors_count
#define MPI_Dist_graph_neighbors iso_smpi_Dist_graph_neighbors
#define MPI_Neighbor_allgather iso_smpi_Neighbor_allgather
#define MPI_Neighbor_alltoall iso_smpi_Neighbor_alltoall
#define MPI_Neighbor_alltoallv iso_smpi_Neighbor_alltoallv
#define MPI_Neighbor_alltoallw iso_smpi_Neighbor_alltoallw
#define MPI_Add_error_class iso_smpi_Add_error_class
#define MPI_Add_error_code iso_smpi_Add_error_code
#define MPI_Add_error_string iso_smpi_Add_error_string
#define MPI_Error_class iso_smpi_Error_class
#define MPI_Error_string iso_smpi_Error_string
#define MPI_Comm_call_errhandler iso_smpi_Comm_call_errhandler
#undef MPI_Comm_get_attr
#define MPI_Comm_get_attr iso_smpi_Comm_get_attr
#undef MPI_Comm_set_attr
#define MPI_Comm_set_attr iso_smpi_Comm_set_attr
#undef MPI_Finalize
#define MPI_Finalize iso_smpi_Finalize

#endif
