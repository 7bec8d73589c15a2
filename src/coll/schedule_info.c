/* Iso_schedule_info: the figures of the schedule a collective family would
 * run for one MPI_DOUBLE per block. */
#include "coll/coll.h"
#include <stdlib.h>
#include <string.h>
#include <strings.h>

int Iso_schedule_info(MPI_Comm isocomm, const char *collective, const char *algorithm,
                      int *rounds, int *messages, long long *block_hops)
{
    iso_state *st;
    iso_sched *sched = NULL;
    iso_args a;
    int coll = -1, requested, alg, err, s, *ones = NULL;
    iso_msg_mode chosen;
    MPI_Aint *zeros = NULL;
    MPI_Datatype *types = NULL;
    iso_side dbl = iso__side_strided(1, MPI_DOUBLE);

    if (!collective || !algorithm || !rounds || !messages || !block_hops)
        return iso__raise(isocomm, iso__error_msg(ISO_ERR_ARG, "an argument is NULL"));
    if ((err = iso__state_get(isocomm, 0, &st)) != MPI_SUCCESS)
        return iso__raise(isocomm, err);
    for (int k = 0; k < ISO_NCOLL; k++)
        if (!strcasecmp(collective, iso__coll_names[k]))
            coll = k;
    if (coll < 0)
        return iso__raise(isocomm, iso__error_msg(ISO_ERR_ARG, "collective \"%s\" (alltoall, "
                                                               "allgather, reduce, "
                                                               "scatter_reduce)", collective));
    if ((err = iso__algorithm_option("algorithm", algorithm, &requested)) != MPI_SUCCESS)
        return iso__raise(isocomm, err);
    /* the figures for one MPI_DOUBLE per block */
    s = st->nbh->s;
    ones = malloc(sizeof(int) * (size_t)(s + 1));
    zeros = calloc((size_t)s + 1, sizeof(MPI_Aint));
    types = malloc(sizeof(MPI_Datatype) * (size_t)(s + 1));
    if (!ones || !zeros || !types) {
        err = iso__error(ISO_ERR_NOMEM);
        goto fn_exit;
    }
    for (int i = 0; i < s; i++) {
        ones[i] = 1;
        types[i] = MPI_DOUBLE;
    }
    switch (coll) {
    case ISO_ALLTOALL:
        a = iso__args(ISO_ALLTOALL, NULL, dbl, NULL, dbl, MPI_OP_NULL);
        break;
    case ISO_ALLGATHER:
        a = iso__args(ISO_ALLGATHER, NULL, iso__side_same(1, MPI_DOUBLE), NULL, dbl, MPI_OP_NULL);
        break;
    case ISO_REDUCE:
        a = iso__args(ISO_REDUCE, NULL, iso__side_same(1, MPI_DOUBLE), NULL,
                      iso__side_same(1, MPI_DOUBLE), MPI_SUM);
        break;
    default:
        a = iso__args(ISO_SCATTER_REDUCE, NULL, iso__side_w(ones, zeros, types), NULL,
                      iso__side_same(1, MPI_DOUBLE), MPI_SUM);
        break;
    }
    a.send.extent = a.recv.extent = (MPI_Aint)sizeof(double);
    /* blocking rules: a blocking call counts as reused (its call cache) */
    if ((err = iso__algorithm_select(st->nbh, &a, requested, st->nbh->mode, 1, &alg,
                                     &chosen)) == MPI_SUCCESS &&
        (err = iso__schedule_get(st->nbh, &a, alg, &sched)) == MPI_SUCCESS)
        iso__sched_stats(sched, rounds, messages, block_hops);
    iso__sched_release(sched);
fn_exit:
    free(ones);
    free(zeros);
    free(types);
    return iso__raise(isocomm, err);
}


int Iso_request_schedule_info(Iso_request request, const char **algorithm, const char **combine,
                              int *rounds, int *messages, long long *bytes)
{
    MPI_Comm comm = request ? request->comm : MPI_COMM_WORLD;
    if (request == ISO_REQUEST_NULL)
        return iso__raise(comm, iso__error_msg(ISO_ERR_REQUEST, "request is ISO_REQUEST_NULL"));
    if (!algorithm || !combine || !rounds || !messages || !bytes)
        return iso__raise(comm, iso__error_msg(ISO_ERR_ARG, "an output argument is NULL"));
    return iso__raise(comm, iso__sched_request_describe(request, algorithm, combine, rounds,
                                                        messages, bytes));
}
