/*
 * isocoll — isomorphic sparse collective communication on MPI Cartesian
 * communicators (Träff, Lübbe, Rougier, Hunold, EuroMPI'15), and the sparse
 * dynamic data exchange on any communicator (Iso_alltoall_crs,
 * Iso_alltoallv_crs; Geyko et al. 2023).
 *
 * Porting from MPI's neighborhood collectives?  Receive block i comes from
 * caller - C^i, the opposite side from MPI's Cartesian convention: read
 * "Direction" under Collectives below first.
 *
 * Linking: name the MPI in the compiler, the pkg-config file and the
 * launcher alike (the plain mpicc and isocoll.pc follow whichever MPI was
 * installed last):
 *   mpicc.mpich prog.c $(pkg-config --cflags --libs isocoll-mpich), run
 *   with mpiexec.mpich; or mpicc.openmpi, isocoll-openmpi, mpirun.openmpi.
 * pkg-config gives no rpath, so for an install in a non-system prefix also
 * pass -Wl,-rpath,$PREFIX/lib (or run with LD_LIBRARY_PATH=$PREFIX/lib).
 * Started by the other MPI's launcher, each process runs alone; the
 * library then says so once on stderr.
 *
 * Error convention.  Every function returns MPI_SUCCESS or an MPI error code.
 * Errors go through the error handler of the communicator involved
 * (MPI_Comm_call_errhandler): with MPI_ERRORS_ARE_FATAL (the default) the
 * program aborts with a message naming the error; with MPI_ERRORS_RETURN the
 * code is returned.  Library-specific errors have their own error classes,
 * registered with MPI_Add_error_class (one error code in each, with
 * MPI_Add_error_code, and its text by MPI_Add_error_string) the first time
 * the library is used; functions return the code, whose MPI_Error_class is
 * the class.  Iso_error_class() maps an MPI error code back to one of the
 * ISO_ERR_* values below.  Functions that have no communicator
 * (Iso_start, Iso_wait, ... on a NULL or misused request) report through the
 * request's communicator when there is one, else through MPI_COMM_WORLD.
 * Errors detected locally (bad arguments) are reported before any
 * communication starts, so they never leave other processes hanging in a
 * half-started operation of this process.  MPI errors of the library's own
 * messages (e.g. MPI_ERR_TRUNCATE when processes pass different counts)
 * are returned as that error, raised through the handler the communicator
 * has at the time of the call; a process whose part failed still takes
 * part in the rest of the operation (sending empty messages), so nothing
 * hangs, and a process that receives such a message fails with
 * MPI_ERR_OTHER.  On MPICH, which raises completion errors through
 * MPI_COMM_WORLD, MPI_COMM_WORLD returns errors while the library
 * progresses requests.
 *
 * Threads.  Calls on different isocomms may run concurrently in different
 * threads (MPI_THREAD_MULTIPLE); the library's shared state (the list of
 * active requests, error classes, keyvals) is locked, and a request is
 * progressed by one thread at a time.  As in MPI, calls on one
 * communicator must not overlap, and one request must not be waited for or
 * tested by two threads at once.  Without MPI_THREAD_MULTIPLE, call the
 * library from one thread at a time.
 */
#ifndef ISOCOLL_H
#define ISOCOLL_H

#include <mpi.h>
#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(__GNUC__) && defined(ISOCOLL_BUILDING)
#define ISO_API __attribute__((visibility("default")))
#else
#define ISO_API
#endif

#define ISOCOLL_VERSION_MAJOR 0
#define ISOCOLL_VERSION_MINOR 1

/* Library error classes: X(NAME, message).  ISO_ERR_<NAME> is the library's
 * own number; the MPI error class behind it is Iso_error_mpi_class(). */
#define ISO_ERRNO_MAP(X)                                                      \
    X(NOT_CART, "communicator has no Cartesian topology")                     \
    X(NO_NEIGHBORHOOD, "no isomorphic neighborhood attached to communicator") \
    X(ARG, "invalid argument (negative size, NULL array, MPI_IN_PLACE, ...)") \
    X(DIMS, "dimension mismatch")                                             \
    X(NOT_ISOMORPHIC, "processes passed different neighborhoods")             \
    X(COUNT, "invalid count")                                                 \
    X(TYPE, "invalid datatype")                                               \
    X(OP, "invalid reduction operation")                                      \
    X(ALGORITHM, "unknown or inapplicable algorithm name")                    \
    X(INFO, "invalid info key or value")                                      \
    X(REQUEST, "request misuse (NULL, active, inactive or not persistent)")   \
    X(NOMEM, "out of memory")                                                 \
    X(INTERN, "internal error")

typedef enum {
    ISO_ERR_NONE = 0, /* not a library error class (MPI_SUCCESS or MPI's own) */
#define ISO__ENUM(name, msg) ISO_ERR_##name,
    ISO_ERRNO_MAP(ISO__ENUM)
#undef ISO__ENUM
    ISO_ERR_LASTCODE
} Iso_error;

/* Which library error an MPI error code belongs to (ISO_ERR_NONE if none). */
ISO_API int Iso_error_class(int mpi_errorcode, Iso_error *err);
/* The MPI error class registered for a library error (MPI_ERR_UNKNOWN for
 * ISO_ERR_NONE or an out-of-range value).  MPI must be initialised. */
ISO_API int Iso_error_mpi_class(Iso_error err);

/* ---------------------------------------------------------------------- */
/* Relative coordinates on Cartesian communicators (paper, section 6).
 * relative[] has as many entries as the communicator has dimensions; entry j
 * is the displacement along dimension j, in MPI_Cart_coords order (ranks
 * row-major, last dimension fastest).  In a non-periodic dimension a
 * coordinate that falls off the mesh gives MPI_PROC_NULL. */
ISO_API int Cart_relative_rank(MPI_Comm cartcomm, const int relative[], int *rank);
/* relative[] = coordinates of rank minus those of the caller, each reduced to
 * the smallest absolute value in a periodic dimension (ties: positive). */
ISO_API int Cart_relative_coord(MPI_Comm cartcomm, int rank, int relative[]);
/* target = caller + relative, source = caller - relative. */
ISO_API int Cart_relative_shift(MPI_Comm cartcomm, const int relative[], int *source,
                                int *target);

/* ---------------------------------------------------------------------- */
/* Neighborhoods.
 * Iso_neighborhood_create attaches the s-neighborhood C^0..C^{s-1}
 * (relative_coordinates: s*d ints, C^i at [i*d .. i*d+d-1]) to the Cartesian
 * communicator and sets *isocomm = cartcomm: the isocomm IS the Cartesian
 * communicator.  Collective; every process must pass the same list (checked
 * with one allreduce when verification is on).  Repeated offsets and the zero
 * offset are allowed; the order defines the buffer order.  Each coordinate
 * must lie strictly between -2^30 and 2^30 (ISO_ERR_ARG).  Creating again
 * replaces the neighborhood.  s = 0 is valid (every collective is a no-op).
 *
 * Offset order: entry j of C^i is the displacement along Cartesian dimension
 * j, in MPI_Cart_coords order (ranks row-major, last dimension fastest).
 * 2D example with dimension 0 the rows: C = {dy, dx} = {-1, 0} is the row
 * above ("north"), {0, +1} the next column ("east").
 *
 * Ownership.  No communicator is created, so there is nothing extra to
 * free.  Iso_neighborhood_free(&isocomm) detaches the neighborhood and sets
 * the handle to MPI_COMM_NULL, so never give your only Cartesian handle as
 * the isocomm output if you still need it; use a second variable:
 *     MPI_Comm iso;
 *     Iso_neighborhood_create(cart, s, offsets, &iso);   (iso == cart)
 *     ... collectives on iso ...
 *     Iso_neighborhood_free(&iso);   (iso = MPI_COMM_NULL, cart still valid)
 *     MPI_Comm_free(&cart);
 * MPI_Comm_free(&cart) alone also releases everything the library attached.
 * Do not MPI_Comm_free both cart and iso: they are one communicator.
 *
 * Info keys (unknown keys starting with "iso_" are an error, others ignored):
 *   iso_algorithm  "auto" (default) | "direct" | "dimwise" | "bruck"
 *   iso_combine    "auto" (default) | "pack" | "datatype"   how combined
 *                  messages are made (see "Schedules" below)
 *   iso_verify     "true" | "false"                check isomorphism
 *   iso_tune       "on" (default) | "off" | "on:N"   runtime tuning of auto
 *                  (see Iso_tune_info): N trial calls per candidate,
 *                  1 <= N <= 20 ("on": 4)
 * Environment: ISO_ALGORITHM, ISO_COMBINE, ISO_VERIFY and ISO_TUNE give the defaults;
 * ISO_VERBOSE=1 reports what runs (see Iso_request_schedule_info).  Names
 * and booleans are case-insensitive; booleans are true/false, yes/no,
 * on/off or 1/0.  A bad value is an error whose message names the function,
 * the key or variable and the value.
 * With verification on, processes that disagree on the algorithm, the
 * combining mode or iso_tune get ISO_ERR_ALGORITHM.
 *
 * Library messages travel on a private duplicate of the communicator, made
 * at the first Iso_neighborhood_create and kept until the neighborhood is
 * freed, so they never match user point-to-point traffic.
 *
 * MPI_Comm_dup of an isocomm: the duplicate carries a copy of the
 * neighborhood (same offsets, algorithm) and gets its own private
 * communicator at its first collective (with MPI_Comm_idup, so a first
 * nonblocking or persistent call does not wait for the other processes),
 * so it is an independent isocomm. */
ISO_API int Iso_neighborhood_create(MPI_Comm cartcomm, int s, const int relative_coordinates[],
                                    MPI_Comm *isocomm);
ISO_API int Iso_neighborhood_create_with_info(MPI_Comm cartcomm, int s,
                                              const int relative_coordinates[], MPI_Info info,
                                              MPI_Comm *isocomm);
/* Detaches the neighborhood (not collective; outstanding requests keep what
 * they need) and sets *isocomm to MPI_COMM_NULL.  The Cartesian communicator
 * itself stays valid (see Ownership above). */
ISO_API int Iso_neighborhood_free(MPI_Comm *isocomm);
/* s, and the number of sources / targets that are not MPI_PROC_NULL. */
ISO_API int Iso_neighborhood_count(MPI_Comm isocomm, int *s, int *indegree, int *outdegree);
/* The first min(max_s, s) sources (caller - C^i) and destinations
 * (caller + C^i), MPI_PROC_NULL included, in neighborhood order. */
ISO_API int Iso_neighborhood_get(MPI_Comm isocomm, int max_s, int sources[], int destinations[]);
/* As above without the MPI_PROC_NULL entries: the first max_s of indegree
 * sources and of outdegree destinations, usable directly as arguments of
 * MPI_Dist_graph_create_adjacent. */
ISO_API int Iso_neighborhood_graph_get(MPI_Comm isocomm, int max_s, int sources[],
                                       int destinations[]);
/* The same three queries for MPI's own Cartesian neighborhood, the one MPI's
 * neighborhood collectives use on cartcomm: s = 2d, and for dimension j
 * entries 2j and 2j+1 are the ranks at -1 and +1 in dimension j (the
 * source and destination returned by MPI_Cart_shift(cartcomm, j, 1, ...)).
 * MPI sends to and receives from the same list, so sources[] and
 * destinations[] are equal. */
ISO_API int Cart_neighborhood_count(MPI_Comm cartcomm, int *s, int *indegree, int *outdegree);
ISO_API int Cart_neighborhood_get(MPI_Comm cartcomm, int max_s, int sources[],
                                  int destinations[]);
ISO_API int Cart_neighborhood_graph_get(MPI_Comm cartcomm, int max_s, int sources[],
                                        int destinations[]);

/* ---------------------------------------------------------------------- */
/* Collectives.
 * Direction.  Block i of the send side goes to caller + C^i; block i of the
 * receive side comes from caller - C^i (the paper's definition).  This is
 * NOT the convention of MPI_Neighbor_alltoall/v/w on a Cartesian
 * communicator, where send slot k and receive slot k are the same neighbor.
 * Code ported by renaming the MPI calls runs without an error and puts the
 * halos on the wrong side.  Halo example, C^i = (0,+1) ("east"): sendtype i
 * describes your east boundary column, which goes to the east neighbor;
 * recvtype i describes your WEST halo, which receives the west neighbor's
 * east boundary column.  The receive type of offset C describes the halo on
 * side -C.
 *
 * Aliasing.  sendbuf and recvbuf may be the same array when the regions the
 * send types and the receive types touch are disjoint: the zero-copy halo
 * exchange of stencil/, one grid array with send types over boundary cells
 * and receive types over halo cells,
 *     Iso_neighbor_alltoallw(grid, ones, sdispls, types,
 *                            grid, ones, rdispls, types, iso);
 * Overlapping send and receive regions are erroneous, as in MPI.  Where the
 * blocks have no gaps (count x type fills its extent, e.g. sendbuf ==
 * recvbuf with MPI_INT blocks) the library finds the overlap and returns
 * ISO_ERR_ARG; for blocks with gaps the results are undefined.
 * MPI_IN_PLACE is not supported (ISO_ERR_ARG).
 *
 * Slots of MPI_PROC_NULL neighbors are not read and not written.
 * Displacements: alltoall/allgather blocks are consecutive (i * count *
 * extent); the v forms take int displacements in units of the datatype's
 * extent; the w forms take MPI_Aint displacements in bytes.
 *
 * Reductions: Iso_neighbor_reduce sends the same vector (count x datatype)
 * to every target; Iso_neighbor_scatter_reduce sends vector i (its own
 * count, displacement, type) to target i, and each must match count x
 * datatype.  Every process combines the vectors from its existing sources
 * with op, which must be commutative (the order of combination is
 * unspecified).  recvbuf holds count x datatype.  A process with no existing
 * source (indegree 0) leaves recvbuf untouched: there is no identity. */
ISO_API int Iso_neighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                  void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                  MPI_Comm isocomm);
ISO_API int Iso_neighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                   const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                   const int recvcounts[], const int rdispls[],
                                   MPI_Datatype recvtype, MPI_Comm isocomm);
ISO_API int Iso_neighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                   const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                   void *recvbuf, const int recvcounts[], const MPI_Aint rdispls[],
                                   const MPI_Datatype recvtypes[], MPI_Comm isocomm);
ISO_API int Iso_neighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm isocomm);
ISO_API int Iso_neighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const int displs[],
                                    MPI_Datatype recvtype, MPI_Comm isocomm);
ISO_API int Iso_neighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, const int recvcounts[], const MPI_Aint displs[],
                                    const MPI_Datatype recvtypes[], MPI_Comm isocomm);
ISO_API int Iso_neighbor_reduce(const void *sendbuf, void *recvbuf, int count,
                                MPI_Datatype datatype, MPI_Op op, MPI_Comm isocomm);
ISO_API int Iso_neighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, int count, MPI_Datatype datatype,
                                        MPI_Op op, MPI_Comm isocomm);

/* ---------------------------------------------------------------------- */
/* Requests.  Nonblocking calls return an active request; persistent (_init)
 * calls return an inactive one, bound to its buffers and arguments, that
 * Iso_start activates any number of times.  Iso_wait / Iso_test on a
 * nonblocking request free it and set it to ISO_REQUEST_NULL; on a
 * persistent request they make it inactive.  Every wait or test progresses
 * all active requests of the process, so several operations may be
 * outstanding on one communicator and completed in any order.  Waiting on
 * ISO_REQUEST_NULL returns at once.  Iso_request_free of an active request
 * is an error (as for MPI's collective requests). */
typedef struct iso_request_s *Iso_request;
#define ISO_REQUEST_NULL ((Iso_request)0)

ISO_API int Iso_start(Iso_request *request);
ISO_API int Iso_wait(Iso_request *request);
ISO_API int Iso_test(Iso_request *request, int *flag);
ISO_API int Iso_waitall(int n, Iso_request requests[]);
ISO_API int Iso_request_free(Iso_request *request);

ISO_API int Iso_ineighbor_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                   void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                   MPI_Comm isocomm, Iso_request *request);
ISO_API int Iso_ineighbor_alltoallv(const void *sendbuf, const int sendcounts[],
                                    const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                    const int recvcounts[], const int rdispls[],
                                    MPI_Datatype recvtype, MPI_Comm isocomm,
                                    Iso_request *request);
ISO_API int Iso_ineighbor_alltoallw(const void *sendbuf, const int sendcounts[],
                                    const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                    void *recvbuf, const int recvcounts[],
                                    const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                    MPI_Comm isocomm, Iso_request *request);
ISO_API int Iso_ineighbor_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                    void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                    MPI_Comm isocomm, Iso_request *request);
ISO_API int Iso_ineighbor_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[], const int displs[],
                                     MPI_Datatype recvtype, MPI_Comm isocomm,
                                     Iso_request *request);
ISO_API int Iso_ineighbor_allgatherw(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                     void *recvbuf, const int recvcounts[],
                                     const MPI_Aint displs[], const MPI_Datatype recvtypes[],
                                     MPI_Comm isocomm, Iso_request *request);
ISO_API int Iso_ineighbor_reduce(const void *sendbuf, void *recvbuf, int count,
                                 MPI_Datatype datatype, MPI_Op op, MPI_Comm isocomm,
                                 Iso_request *request);
ISO_API int Iso_ineighbor_scatter_reduce(const void *sendbuf, const int sendcounts[],
                                         const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                         void *recvbuf, int count, MPI_Datatype datatype,
                                         MPI_Op op, MPI_Comm isocomm, Iso_request *request);

/* Persistent forms.  info may carry iso_algorithm and iso_combine for this
 * operation only (MPI_INFO_NULL: the neighborhood's defaults). */
ISO_API int Iso_neighbor_alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                       void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                       MPI_Comm isocomm, MPI_Info info, Iso_request *request);
ISO_API int Iso_neighbor_alltoallv_init(const void *sendbuf, const int sendcounts[],
                                        const int sdispls[], MPI_Datatype sendtype, void *recvbuf,
                                        const int recvcounts[], const int rdispls[],
                                        MPI_Datatype recvtype, MPI_Comm isocomm, MPI_Info info,
                                        Iso_request *request);
ISO_API int Iso_neighbor_alltoallw_init(const void *sendbuf, const int sendcounts[],
                                        const MPI_Aint sdispls[], const MPI_Datatype sendtypes[],
                                        void *recvbuf, const int recvcounts[],
                                        const MPI_Aint rdispls[], const MPI_Datatype recvtypes[],
                                        MPI_Comm isocomm, MPI_Info info, Iso_request *request);
ISO_API int Iso_neighbor_allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                                        void *recvbuf, int recvcount, MPI_Datatype recvtype,
                                        MPI_Comm isocomm, MPI_Info info, Iso_request *request);
ISO_API int Iso_neighbor_allgatherv_init(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const int displs[],
                                         MPI_Datatype recvtype, MPI_Comm isocomm, MPI_Info info,
                                         Iso_request *request);
ISO_API int Iso_neighbor_allgatherw_init(const void *sendbuf, int sendcount,
                                         MPI_Datatype sendtype, void *recvbuf,
                                         const int recvcounts[], const MPI_Aint displs[],
                                         const MPI_Datatype recvtypes[], MPI_Comm isocomm,
                                         MPI_Info info, Iso_request *request);
ISO_API int Iso_neighbor_reduce_init(const void *sendbuf, void *recvbuf, int count,
                                     MPI_Datatype datatype, MPI_Op op, MPI_Comm isocomm,
                                     MPI_Info info, Iso_request *request);
ISO_API int Iso_neighbor_scatter_reduce_init(const void *sendbuf, const int sendcounts[],
                                             const MPI_Aint sdispls[],
                                             const MPI_Datatype sendtypes[], void *recvbuf,
                                             int count, MPI_Datatype datatype, MPI_Op op,
                                             MPI_Comm isocomm, MPI_Info info,
                                             Iso_request *request);

/* ---------------------------------------------------------------------- */
/* Schedules and their introspection.
 * Algorithms (info key iso_algorithm, environment ISO_ALGORITHM):
 *   direct   one message per neighbor, all posted at once
 *   dimwise  message combining along the dimensions (paper section 5.2):
 *            a block travels one hop per non-zero coordinate
 *   bruck    logarithmic combining (section 5.3): one hop per set bit of
 *            each coordinate
 *   auto     the cheapest by an alpha-beta cost model (ISO_COST_FILE names
 *            calibrated constants, written by bench/calibrate).  The
 *            choice must be the same on every process, so it uses only
 *            the neighborhood and the block size.  The alltoall/allgather
 *            v and w forms, whose block sizes may differ between
 *            processes, use direct when blocking or nonblocking (name an
 *            algorithm to combine them); their persistent _init forms
 *            agree on a block size (the largest mean over the processes)
 *            with one allreduce, so auto chooses for them too.  That
 *            allreduce also carries argument errors: a bad argument on one
 *            process makes every process's _init fail with its class
 * Combined messages (dimwise, bruck) are made in one of two ways (info key
 * iso_combine, environment ISO_COMBINE):
 *   pack      the library packs each message; works for every form, for
 *             messages below 2 GiB (MPI_Pack counts in int): a larger one is
 *             ISO_ERR_COUNT, before any communication where every process
 *             knows the block sizes
 *   datatype  no copies by the library (struct datatypes over the user's
 *             buffers); needs block sizes every process knows, so it cannot
 *             carry the v/w forms of alltoall and allgather: naming both a
 *             combining algorithm and datatype for them is an error
 *             (ISO_ERR_ALGORITHM); auto then combines only with pack
 *   auto      the cheaper by the cost model, the same choice on every
 *             process; never pack for messages of 2 GiB or more
 * The mode concerns combined messages only: direct sends none and ignores it.
 * Schedules are built once per neighborhood and cached.  DESIGN.md explains
 * the schedule format, both modes, the cache and the cost model.
 *
 * Iso_schedule_info: for the calling process, the communication rounds of
 * the schedule in the 1-ported model of the paper (each round one send and
 * one receive: the larger of messages sent and received; the library posts
 * independent rounds together), the point-to-point messages it sends, and
 * the blocks it sends counting every forwarding hop.  collective is
 * "alltoall", "allgather", "reduce" or "scatter_reduce" (v and w forms
 * share their base's structure); algorithm is a name above ("auto": the
 * figures of the algorithm auto picks for one MPI_DOUBLE per block). */
ISO_API int Iso_schedule_info(MPI_Comm isocomm, const char *collective, const char *algorithm,
                              int *rounds, int *messages, long long *block_hops);
/* What a request of a neighborhood collective runs, whatever chose it
 * (nonblocking or persistent; for blocking calls set ISO_VERBOSE=1, which
 * makes rank 0 print each new choice once per neighborhood to stderr):
 *   algorithm  "direct", "dimwise" or "bruck"
 *   combine    "pack" or "datatype", or "none" (direct sends no combined
 *              messages)
 *   rounds, messages   as Iso_schedule_info, for this request's schedule
 *   bytes      bytes this process sent in the request's last completed
 *              execution (packed messages with their headers); -1 before
 *              one completed, so always -1 for a nonblocking request (it
 *              is freed when it completes)
 * The strings are the library's; do not free them. */
ISO_API int Iso_request_schedule_info(Iso_request request, const char **algorithm,
                                      const char **combine, int *rounds, int *messages,
                                      long long *bytes);

/* Runtime tuning of auto (iso_tune, ISO_TUNE; DESIGN.md, "Runtime tuning
 * of auto").  Under auto, with tuning on (the default), a blocking call
 * shape (collective family, bytes per block, iso_combine) is tuned: the
 * candidates are each algorithm (direct, dimwise, bruck) in the combining
 * mode the cost model prices lowest for it, and every schedule (algorithm
 * and mode) the model puts within 2x of its pick; the next N x candidates
 * blocking calls of that shape run them in turn (every call delivers its
 * data), each candidate's in a row (the first not counted: it warms the
 * candidate) and the model's pick last (an MPI library's first messages
 * can be slow, and a time made slow only makes its candidate lose), timed
 * with MPI_Wtime, back to back (on a graph
 * communicator after a barrier: all start together); the
 * last of them agrees on the winner (each candidate's median time over
 * its calls, averaged over processes -- back to back, the skew one call
 * leaves shifts time between processes, not the run's time per call --
 * or, on a graph, the maximum over processes), so every process chooses
 * the same at the same call; a tie goes to the
 * candidate the model ranks first.  At most 20 trial calls per shape (N
 * is lowered to fit), after a lead of up to 16 calls of the model's pick,
 * untimed, that warm the MPI library (on a Cartesian neighborhood).  The winner then runs every call of that shape:
 * blocking calls, and persistent requests made after tuning.  Nonblocking
 * calls and persistent requests are not timed (the caller's work overlaps
 * them): they take a known winner or the model's pick (on a distributed
 * graph communicator a persistent request tunes at its _init call; see
 * ISO_SPARSE_ALGORITHM).  A candidate that
 * cannot be built is skipped.  Up to 16 shapes per neighborhood; later
 * ones take the model's pick.
 * ISO_VERBOSE=1 makes rank 0 print each tuned shape once: the medians,
 * the winner and what the trial calls cost.
 * ISO_TUNE_FILE=PATH: winners recorded there ("iso_tune id=..." lines, per
 * neighborhood and shape; rank 0 appends each new one) are used instead of
 * tuning, so a later run starts tuned.  Every process must see the same
 * file; it is read when a selection first needs it, and again when the
 * variable names another file.  Without ISO_TUNE_FILE the records are read
 * from ISO_COST_FILE (never written there): a cost file with a run's
 * "iso_tune" lines appended starts tuned too.
 *
 * Iso_tune_info: the record of the index-th shape (0, 1, ... in the order
 * their tuning started) of isocomm's neighborhood (or of a distributed
 * graph communicator's auto, see below: bytes is the mean per edge, the
 * candidates direct, sharing, vpt/nN, combine=pack).  *state = 0: no such
 * shape; 1: tuning; 2: decided.  record (up to len bytes with its '\0';
 * may be NULL if len = 0) gets one line of key=value words, the same text
 * on every process:
 *   coll=alltoall bytes=8 reused=1 probed=0 combine=auto state=tuned
 *   source=trials tried=direct:12.1us,dimwise/datatype:8.06us,bruck/pack:failed
 *   won=dimwise/datatype calls=12/12 cost=131.4us
 * (source: trials, model (a single candidate) or file; tried: the
 * candidates in the model's order with their agreed medians; cost: the
 * time of all trial calls, and on a graph their barriers, max over
 * processes).
 *
 * The sparse dynamic data exchange (Iso_alltoall_crs, Iso_alltoallv_crs,
 * on any communicator; a distributed graph communicator reports its own
 * auto's shapes once it has any) is tuned the same way per communicator:
 * blocking calls under auto with iso_tune on, per form and size class.  A
 * process knows only its own messages, so the size class -- the largest
 * message of a call, rounded up to a power of 2, max over processes -- is
 * agreed by one MPI_Allreduce at a form's first call and every 64 calls of
 * a decided shape after (the calls between keep the last class).  The
 * candidates: auto's pick first, then personalized, nbx, rma (constant
 * sizes; on Open MPI 4 on one node only), locality-personalized and
 * locality-nbx (two or more regions, not one process each), vpt (where its
 * VPT forwards); trial calls run back to back, as on a neighborhood.  Its record:
 *   form=variable bytes<=32 state=tuned source=trials
 *   tried=personalized:9.8us,nbx:14.2us,vpt:12.5us won=personalized
 *   calls=12/12 cost=160.4us
 * Iso_tune_info on a communicator without any tuner (no SDDE call tuned,
 * not a neighborhood or graph) is an error, as before. */
ISO_API int Iso_tune_info(MPI_Comm isocomm, int index, int *state, char *record, int len);

/* ---------------------------------------------------------------------- */
/* Irregular collectives on distributed graph communicators (src/coll/graph.c,
 * src/coll/graph_route.c, src/route/; DESIGN.md, "The routing layer",
 * "Virtual process topology").
 *
 * Iso_neighbor_alltoall, Iso_neighbor_alltoallv, Iso_neighbor_alltoallw, their
 * Iso_ineighbor_* and *_init forms also accept a communicator made by
 * MPI_Dist_graph_create_adjacent or MPI_Dist_graph_create, with exactly the
 * semantics of MPI_Neighbor_alltoall/v/w on it: send block i goes to the
 * i-th destination and receive block j comes from the j-th source of
 * MPI_Dist_graph_neighbors; the k-th edge a -> b in a's destinations matches
 * the k-th occurrence of a in b's sources (repeated and self edges are
 * legal); indegree may differ from outdegree; any datatypes, derived with
 * gaps included.  Replace MPI_Neighbor_alltoallv(_init) by
 * Iso_neighbor_alltoallv(_init) and nothing else.  MPI_IN_PLACE is not
 * supported (ISO_ERR_ARG).  The other collectives (allgather, reductions) are
 * not supported on graph communicators: ISO_ERR_NOT_CART, before any
 * communication.  The library's messages travel on a duplicate of the
 * communicator (made at its first call, without blocking); what the library
 * keeps on it is freed with it (MPI_Comm_dup does not copy it).
 *
 * Algorithm: info key iso_sparse_algorithm (environment
 * ISO_SPARSE_ALGORITHM; the isomorphic key iso_algorithm does not apply):
 *   direct  (default) one message per edge, as MPI
 *   vpt     store-and-forward over a virtual process topology T_n(k_1..k_n)
 *           (Selvitopi & Aykanat, SC'19): a periodic Cartesian communicator
 *           of the same processes; at stage d a submessage moves to the
 *           process of its line whose coordinate d is its destination's, so
 *           a process sends at most k_d - 1 messages at stage d and
 *           sum(k_d - 1) in all, for more volume.  Every block must arrive
 *           with exactly the size of its receive block (a shorter one is
 *           ISO_ERR_COUNT, a longer one MPI_ERR_TRUNCATE, at the receiver,
 *           after the exchange).
 *   auto    chooses n (1 = direct) from the library's cost model (alpha,
 *           beta, gamma of ISO_COST_FILE) and the pattern's statistics
 *           (largest out-degree, largest mean block size; one allreduce,
 *           the agreement vpt makes anyway): for T_n balanced,
 *           min(mmax, sum(k_d - 1)) messages, mmax * sum(1 - 1/k_d) block
 *           hops, n phases (twice that for the header exchange of blocking
 *           and nonblocking calls).  An explicit iso_vpt_dims is kept.
 *           auto also weighs sharing (below): at the first auto call on a
 *           communicator the destinations are gathered and planned once
 *           (two allgathers; the figures depend on the neighbor lists
 *           alone), and sharing is chosen when its counted bottleneck -- 2
 *           phases, the plan's most messages of one process and most
 *           blocks one process sends, its own plus those it forwards --
 *           models cheaper than direct and the best T_n.  The same choice
 *           on every process.
 *           Runtime tuning (iso_tune "on" (default) | "off" | "on:N" in
 *           the communicator's or an _init call's info, ISO_TUNE; see
 *           Iso_tune_info): blocking calls of one call shape (the mean
 *           bytes per edge, max over processes) time direct, sharing,
 *           the best 3 T_n within 2x of the model's pick and T_n for n =
 *           2, 5, 8, 11 (a grid: the model's ranking of n can be far
 *           off) as the Cartesian
 *           side does (all processes start each trial call together after
 *           a barrier) and keep the winner, which nonblocking calls take
 *           too.  Persistent requests are shapes of their
 *           own (no size rounds; probed=0 in the record): one made before
 *           its shape is decided runs the trials in its _init call, each
 *           candidate as a persistent request on scratch buffers (the
 *           user's buffers are not touched before the first start), then
 *           takes the winner.  Iso_tune_info on the graph communicator gives
 *           the records (candidates named direct, sharing, vpt/nN);
 *           ISO_TUNE_TEST=fail:vpt or fail:sharing are its test hooks.
 *   sharing message sharing (Duymus 2021): the pattern (who sends how many
 *           bytes to whom) is gathered once per plan and every process runs
 *           the same deterministic planner, which pairs processes so that a
 *           partner sends a source's messages to common targets combined
 *           with its own, cutting the messages of the most loaded process.
 *           Two stages: sources to their partners (one combined message
 *           each), then one combined message per target; at most one
 *           forwarding hop.  Sizes as for vpt.
 * One vocabulary: ISO_SPARSE_ALGORITHM also names the SDDE's algorithm of
 * Iso_alltoall(v)_crs.  A word valid only there (personalized, nbx, ...)
 * or an unknown word is ISO_ERR_ALGORITHM, with a message naming this
 * context and its words (auto, direct, vpt, sharing); never ignored.
 * Shape (vpt): iso_vpt_dims (ISO_VPT_DIMS) "4,2,2": sizes >= 1 whose
 * product is the communicator size (ISO_ERR_INFO otherwise); or iso_vpt_n
 * (ISO_VPT_N) n = 1..16: sizes by the balanced scheme (prime factors,
 * largest first, each to the smallest dimension so far; for 2^m the paper's
 * T_n, sizes differing by at most a factor of 2; a prime process count
 * gives (p, 1, ..., 1), i.e. direct); iso_vpt_dims wins if both are given.
 * n = 1 (or a one-dimensional shape) is direct.  Without either: n = 2.
 * iso_vpt_locality (ISO_VPT_LOCALITY) "none" (default) | "node": the
 * processes of one node (shared memory, or the pretend ISO_NODE_MAP of the
 * SDDE below) form the first dimension, so stage 0 stays inside nodes.
 * Nodes of one size s > 1 with a balanced shape (iso_vpt_n): the shape
 * becomes (s, the nodes balanced over n - 1 dimensions).  Any other node
 * sizes or placement: the same embedding (processes grouped node by node
 * fill the lines of dimension 0 one after another), always a valid VPT;
 * stage 0 then stays inside a node only where a node fills whole lines.
 * iso_locality (ISO_LOCALITY) "node" (default) | "package" | "numa" |
 * "auto" (node, for now): the regions the embedding uses instead of whole
 * nodes (the processes of one package or NUMA domain of a node; see
 * Iso_alltoall_crs, "Nodes", for how they are found); another value is
 * ISO_ERR_INFO.  iso_verify is accepted and ignored.  Other
 * "iso_" keys are ISO_ERR_INFO; an unknown algorithm ISO_ERR_ALGORITHM
 * (in the environment, the SDDE's names, which mean nothing here, are
 * ignored).
 * Where the options come from: for *_init calls their info, over the
 * defaults; the defaults (and the only options of blocking and nonblocking
 * calls) are the environment, then the communicator's info as
 * MPI_Comm_get_info returns it, read once at the communicator's first call
 * (MPICH 4.0 may not keep unknown keys: use the environment or the _init
 * info).  Iso_neighborhood_create_with_info is for Cartesian isocomms.
 * Costs of vpt: every call (or *_init) first agrees with one allreduce
 * (argument errors found on any process fail every process's call; the
 * shape must be the same everywhere: ISO_ERR_ALGORITHM), makes the VPT's
 * Cartesian communicator at the first use of a shape (kept with the
 * communicator), then exchanges submessage headers (final destination,
 * source, edge ordinal, bytes) with its line neighbors stage by stage: the
 * plan.  A blocking or nonblocking call reuses the plan of the previous
 * such call on the communicator when the shape and every process's send
 * block sizes in bytes are those of that call (decided in the same
 * allreduce: a change on one process makes every process plan anew); the
 * plan holds sizes, not buffer addresses, so other buffers and datatypes
 * of the same sizes reuse it.  A nonblocking call returns once its plan is
 * made (the data then moves in the background).  A persistent request
 * makes its own plan once: every Iso_start moves only data (no header
 * exchange, no allocation).
 */

/* What a VPT exchange did (the vpt algorithm on a distributed graph
 * communicator; see "Irregular collectives on distributed graph
 * communicators" below): for request, made by a *_init call (blocking and
 * nonblocking requests are freed when they complete):
 *   *nstages        the stages (VPT dimensions); the first maxstages of
 *   messages[d]     the messages this process sends at stage d (at most
 *                   k_d - 1), and
 *   bytes[d]        the bytes it sent at stage d in the last completed
 *                   Iso_start (submessage data plus an 8-byte size header
 *                   per submessage; -1 before one completed);
 *   *forwarded      bytes of other processes' submessages it passed on
 *                   (-1 before a completed start);
 *   *buffer_bytes   the peak memory of its message buffers: the size of
 *                   the one allocation (made with the plan, reused by
 *                   every start) that holds every packed message of every
 *                   stage, messages that are never alive at the same time
 *                   sharing bytes (a stage's buffers serve later stages).
 *                   The user's send and receive buffers are not counted:
 *                   with them the peak is about 2x theirs (the paper's
 *                   bound; DESIGN.md, "Virtual process topology").
 * A request of sharing (message sharing) answers the same way with its two
 * stages: stage 0 the one message to its partner (blocks the partner
 * forwards, plus its own for the partner), stage 1 one message per target;
 * *forwarded the bytes of partners' blocks it passed on.
 * ISO_ERR_REQUEST if request is not a vpt or sharing request (direct ran:
 * the algorithm named by Iso_request_schedule_info); ISO_ERR_ARG for NULL
 * outputs. */
ISO_API int Iso_request_vpt_info(Iso_request request, int maxstages, int *nstages, int messages[],
                                 long long bytes[], long long *forwarded,
                                 long long *buffer_bytes);

/* What a message-sharing exchange did (iso_sparse_algorithm=sharing, or
 * auto's choice of it; graph communicators): for request, made by a *_init
 * call, the figures of Iso_request_vpt_info for its two stages --
 * messages[0] its stage-0 messages (one per partner), messages[1] its
 * stage-1 messages (one per target), bytes[] and *forwarded as there (-1
 * before a completed start) -- and *overhead, the stage-0 messages that
 * carry nothing of its own for the partner (the thesis's overhead
 * messages: they exist only because of the sharing).  *buffer_bytes: the
 * peak of the message buffers, as for vpt.  It peaks where stage 0 turns
 * into stage 1: the stage-0 messages received (what this process forwards)
 * are alive until they are packed into its stage-1 messages, so a
 * forwarder holds its forwarded bytes twice; sharing evens out messages,
 * not bytes, and its forwarders can hold several times a VPT process's
 * buffer.  ISO_ERR_REQUEST if request is not a sharing request;
 * ISO_ERR_ARG for NULL outputs. */
ISO_API int Iso_request_sharing_info(Iso_request request, int messages[2], long long bytes[2],
                                     long long *forwarded, int *overhead,
                                     long long *buffer_bytes);

/* ---------------------------------------------------------------------- */
/* Sparse dynamic data exchange (src/sparse/; DESIGN.md explains the
 * algorithms).  Every process knows the messages it sends and their
 * destinations, but not who sends to it: the call delivers every message
 * and tells each process its sources.  comm is any intracommunicator (no
 * topology needed).  Collective: every process of comm calls it, possibly
 * with send_nnz = 0.  Blocking; other outstanding isocoll requests progress
 * while it waits.
 *
 * Send side.  dest[0..send_nnz) are distinct ranks of comm (self allowed).
 * Iso_alltoall_crs: message i is sendcount x sendtype at sendvals +
 * i * sendcount * extent(sendtype).  Iso_alltoallv_crs: message i is
 * sendcounts[i] x sendtype at sendvals + sdispls[i] * extent(sendtype).
 * Derived types with gaps are fine.  A zero-length message is a message:
 * its destination learns the source.  Each message must be below 2 GiB
 * (INT_MAX - 12 bytes; ISO_ERR_COUNT).
 *
 * Outputs, allocated by the library with malloc; the caller releases each
 * with free().  *recv_nnz: the number of messages received.  *src: their
 * sources in ascending rank order, whatever the algorithm.  *recvvals: the
 * messages one after another in the order of *src, laid out as total x
 * recvtype would be (element j at j * extent(recvtype); recvtype's true
 * lower bound must be >= 0, else ISO_ERR_TYPE), unpacked with recvtype: a
 * message of b bytes has b / size(recvtype) elements (ISO_ERR_COUNT if
 * that does not divide; a recvtype of size 0 is ISO_ERR_TYPE).
 * Iso_alltoallv_crs: *recvcounts[k] the elements of message k and
 * *rdispls[k] their prefix sums (message k starts at element rdispls[k]).
 * Iso_alltoall_crs: every message must be recvcount x recvtype (else
 * ISO_ERR_COUNT); message k starts at element k * recvcount.  With
 * *recv_nnz == 0 every output pointer is NULL; otherwise all are valid
 * (*recvvals even when every message is empty).  On an error the outputs
 * are 0 and NULL.
 *
 * Info keys (MPI_INFO_NULL: the environment) and environment variables:
 *   iso_sparse_algorithm  (ISO_SPARSE_ALGORITHM)
 *     auto                   the default: by a rule from what every
 *                            process knows alike (process and node
 *                            counts; DESIGN.md), then tuned at run time
 *                            (iso_tune, below)
 *     personalized           sends, a reduce-scatter of message counts,
 *                            then probed receives
 *     nbx                    synchronous sends, probed receives, a
 *                            nonblocking barrier (Hoefler et al.)
 *     rma                    one-sided puts into a window kept on comm
 *                            (on every process p slots as large as the
 *                            largest message of the call anywhere);
 *                            Iso_alltoall_crs only (Iso_alltoallv_crs:
 *                            ISO_ERR_ALGORITHM).  The window lives
 *                            until comm is freed, or MPI_Finalize.
 *                            Open MPI 4: a shared window on one node;
 *                            across nodes ISO_ERR_ALGORITHM (its windows
 *                            of split communicators may mix data:
 *                            ompi#9492, fixed in Open MPI 5)
 *     locality-personalized, locality-nbx
 *                            all of a process's messages for one node go
 *                            as one message to one process of that node,
 *                            which redistributes them inside the node
 *                            (personalized or NBX between nodes)
 *     vpt                    store-and-forward over a virtual process
 *                            topology T_n (as on graph communicators,
 *                            below): at each stage a process sends its
 *                            line neighbors the headers (destination,
 *                            source, bytes) of what it will send them,
 *                            then the data moves; at most sum(k_d - 1)
 *                            messages per process.  Shape: iso_vpt_dims /
 *                            iso_vpt_n (ISO_VPT_DIMS / ISO_VPT_N), default
 *                            n = 2; n = 1 is personalized.  auto's rule
 *                            never picks it; its runtime tuning tries it
 *                            (iso_tune) and keeps it when it wins
 *     sharing                message sharing (as on graph communicators,
 *                            above): the pattern gathered, the same plan
 *                            on every process, two stages.  auto never
 *                            chooses it
 *   iso_verify=true  (ISO_VERIFY=1): one allreduce first spreads an
 *     argument error found on any process to all of them (each returns an
 *     error; a process with good arguments returns the error of another)
 *     and checks that all chose the same algorithm and VPT options
 *     (ISO_ERR_ALGORITHM).
 *     Without it, a process with bad arguments returns its error without
 *     communicating, and the others then behave as in an erroneous MPI
 *     program (they may wait forever).
 *   iso_vpt_dims, iso_vpt_n, iso_vpt_locality  the VPT of vpt (as on graph
 *                            communicators)
 *   iso_locality             (ISO_LOCALITY) node (default) | package | numa |
 *                            auto (node, for now): the regions of the
 *                            locality algorithms and of iso_vpt_locality
 *                            (below); another value is ISO_ERR_INFO
 *   iso_tune                 (ISO_TUNE) "on" (default) | "off" | "on:N":
 *                            runtime tuning of auto (see Iso_tune_info):
 *                            the calls of a communicator, per form and
 *                            size class, try auto's pick and the other
 *                            algorithms auto may choose there, N calls
 *                            each, and keep the fastest; off: auto's
 *                            rule.  Every process must pass the same
 *                            value (iso_verify checks it); another value
 *                            is ISO_ERR_INFO
 * Other keys starting with "iso_" are ISO_ERR_INFO (keys of other
 * libraries are ignored).  An unknown algorithm name is ISO_ERR_ALGORITHM
 * (names are case-insensitive).  ISO_VERBOSE=1: rank 0 prints the
 * algorithm that runs whenever it changes (what auto chose).
 *
 * Nodes.  A node is a set of processes that share memory, or, when the
 * environment variable ISO_NODE_MAP is set, a pretend layout for tests and
 * benchmarks: comma-separated non-negative node ids, one for each rank of
 * MPI_COMM_WORLD in rank order ("0,1,0,1,1": two nodes of 2 and 3
 * processes, ranks interleaved); communicators take the node of each
 * member's world rank.  Nodes may differ in size and hold any ranks.  The
 * locality algorithms work on regions: the nodes, or with iso_locality
 * package (numa) the processes of a node whose binding lies in one package
 * (NUMA domain), as hwloc reports them.  A node where some process is not
 * bound inside one such object (unbound on a machine of several packages,
 * or bound across several) is one region (ISO_VERBOSE=1 says so once).
 * A map entry may give the levels below the node too:
 * node[.package[.numa]] ("0.0,0.1,1.0,1.0": two nodes, the first of two
 * packages; missing ids are 0).  The layout is computed at a
 * communicator's first call at a level and kept until the communicator is
 * freed; MPI_Comm_dup starts afresh (and reads ISO_NODE_MAP again).  A
 * malformed map is ISO_ERR_INFO on every process, and so are processes
 * asking for different levels on a communicator's first call at them.
 *
 * Errors (through comm's error handler): comm MPI_COMM_NULL (raised on
 * MPI_COMM_WORLD) or an intercommunicator: ISO_ERR_ARG; negative send_nnz,
 * sendcount, recvcount or sendcounts[i]: ISO_ERR_COUNT; NULL dest (or
 * sendcounts, sdispls) with send_nnz > 0, or a NULL output pointer:
 * ISO_ERR_ARG; a destination out of range or repeated: ISO_ERR_ARG;
 * MPI_DATATYPE_NULL or an uncommitted datatype: ISO_ERR_TYPE.  These are
 * found before any communication.  Received sizes that do not fit
 * recvtype (above) are found after the exchange, by the receiver alone.
 *
 * The library's messages travel on a private duplicate of comm, made at
 * the first call on comm and kept until comm is freed. */
ISO_API int Iso_alltoall_crs(int send_nnz, const int dest[], int sendcount, MPI_Datatype sendtype,
                             const void *sendvals, int *recv_nnz, int **src, int recvcount,
                             MPI_Datatype recvtype, void **recvvals, MPI_Info info,
                             MPI_Comm comm);
ISO_API int Iso_alltoallv_crs(int send_nnz, const int dest[], const int sendcounts[],
                              const int sdispls[], MPI_Datatype sendtype, const void *sendvals,
                              int *recv_nnz, int **src, int **recvcounts, int **rdispls,
                              MPI_Datatype recvtype, void **recvvals, MPI_Info info,
                              MPI_Comm comm);

/* ---------------------------------------------------------------------- */
/* The mailbox (src/mailbox/; DESIGN.md, "Mailbox"): YGM's asynchronous
 * model.  Processes queue small messages for any process of comm; the
 * messages are coalesced per next hop into buffers that travel as single
 * MPI messages; recv runs at the destination for every message and may
 * send more; Iso_mailbox_wait_empty returns when every message anywhere has
 * been delivered.
 *
 * Iso_mailbox_create is collective over the intracommunicator comm (which
 * must stay valid until the mailbox is freed: errors are raised through its
 * handler).  capacity_bytes (1 .. 2^29, the same on every process) bounds
 * the queue: once the queued messages (16 bytes of header each, payloads
 * padded to 8) reach it, every buffer is sent.  recv runs on the
 * destination for every message with source = the rank in comm of the
 * process that called send or bcast (never a forwarding process), the
 * bytes as sent in the library's buffer (8-byte aligned, valid only during
 * the call), and ctx as given.  A process may send to itself (delivered
 * through recv, too).
 *
 * Iso_mailbox_bcast delivers msg to every process of comm but the caller.
 * Iso_mailbox_flush starts sending what is queued without waiting for
 * delivery.  Iso_mailbox_wait_empty is collective: it returns on every
 * process once every message sent anywhere, including those sent from
 * callbacks, has been delivered and its callback has returned; the mailbox
 * stays usable (several send phases).  Iso_mailbox_free is collective,
 * sets *mb = NULL, and is ISO_ERR_ARG on every process while messages are
 * pending anywhere (the mailbox is then kept: call wait_empty first).
 *
 * Guarantees: every message is delivered exactly once.  No ordering: two
 * messages between the same processes may arrive in either order (buffers
 * are received in whatever order they complete).  Callbacks run only
 * inside this process's calls of send, bcast, flush and wait_empty, one at
 * a time; a callback may call Iso_mailbox_send and Iso_mailbox_bcast on
 * its mailbox and nothing else of it (flush, wait_empty and free from a
 * callback are ISO_ERR_ARG, reported at once on that process without
 * taking part in the collective).  Threads: one thread at a time per
 * mailbox (MPI_THREAD_SERIALIZED suffices); different mailboxes may be used
 * by different threads under MPI_THREAD_MULTIPLE.
 *
 * Memory: the queue holds at most capacity_bytes plus one message; the
 * sends in flight are kept at most capacity_bytes by waiting (while
 * receiving) before a call returns; a process forwarding for others
 * (nl, nr, nlnr, vpt) holds an arrived buffer back, unreceived, while the
 * hop level it feeds has more than capacity_bytes in flight, so that
 * without sends from callbacks the sends in flight never exceed
 * levels x (capacity_bytes + 2 x bufmax) (levels: the hops a message can
 * still have to go, 1 for none, 2 for nl and nr, 3 for nlnr, n for vpt;
 * bufmax about 2 x capacity_bytes: the largest buffer); two receive
 * buffers of bufmax per level.  What callbacks send is posted without
 * waiting (flow control resumes when their buffer is done).  Every
 * process must keep calling into the mailbox (eventually wait_empty) for
 * the others' sends to complete.
 *
 * Routing: info key iso_route or environment ISO_ROUTE (info wins):
 *   none  every message straight to its destination
 *   nl    node-local first: to the process of the own node that serves the
 *         destination's local rank, then one remote hop
 *   nr    node-remote first: to this process's partner on the destination
 *         node, then one local hop
 *   nlnr  local to the own node's gate for the destination node, remote to
 *         that node's gate for this node, local to the destination: one
 *         channel per pair of nodes
 *   vpt   dimension-order store-and-forward over the k-ary n-cube whose
 *         dimensions iso_vpt_dims / iso_vpt_n give (ISO_VPT_DIMS,
 *         ISO_VPT_N; default: 2 balanced dimensions), ranks of comm in
 *         row-major order
 *   auto  (default) none on one node or with one process per node, else
 *         nlnr.
 * Nodes come from the locality module (MPI_COMM_TYPE_SHARED, or
 * ISO_NODE_MAP); info iso_locality / ISO_LOCALITY = package or numa makes
 * them the packages or NUMA domains inside the nodes (node, auto: the
 * nodes).  Any node sizes and placements (DESIGN.md says how the
 * channels are formed when node sizes differ).  Broadcasts follow a tree of
 * the routing: nr and nlnr send one remote message per other node.
 * Unknown "iso_" keys and bad values are ISO_ERR_INFO; processes passing
 * different capacities, routings, shapes or levels ISO_ERR_ARG.  ISO_VERBOSE
 * reports the routing chosen on rank 0.
 *
 * Errors: dest out of range, msg NULL with bytes > 0 (ISO_ERR_ARG), a
 * message larger than capacity_bytes (ISO_ERR_COUNT: refused, not split;
 * nothing is queued), a NULL or freed mailbox (ISO_ERR_ARG, raised on
 * MPI_COMM_WORLD), recv or mb NULL, capacity out of range (ISO_ERR_ARG). */
typedef struct iso_mailbox_s *Iso_mailbox;
typedef void (*Iso_mailbox_recv_fn)(Iso_mailbox mb, int source, const void *msg, size_t bytes,
                                    void *ctx);
ISO_API int Iso_mailbox_create(MPI_Comm comm, size_t capacity_bytes, Iso_mailbox_recv_fn recv,
                               void *ctx, MPI_Info info, Iso_mailbox *mb);
ISO_API int Iso_mailbox_send(Iso_mailbox mb, int dest, const void *msg, size_t bytes);
ISO_API int Iso_mailbox_bcast(Iso_mailbox mb, const void *msg, size_t bytes);
ISO_API int Iso_mailbox_flush(Iso_mailbox mb);
ISO_API int Iso_mailbox_wait_empty(Iso_mailbox mb);
ISO_API int Iso_mailbox_free(Iso_mailbox *mb);

/* ---------------------------------------------------------------------- */
/* Datatypes (datatypes/).
 * Type_create_triangular: the triangular vector of the EuroMPI'15 paper,
 * section 8.  See datatypes/triangular.c for the full semantics. */
ISO_API int Type_create_triangular(int count, int firstblock, int blockincrement, int stride,
                                   int strideincrement, MPI_Datatype oldtype,
                                   MPI_Datatype *newtype);

#ifdef __cplusplus
}
#endif
#endif /* ISOCOLL_H */
