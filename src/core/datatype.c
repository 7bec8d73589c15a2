/* Small facts about MPI datatypes. */
#include "core/core.h"

int iso__type_is_named(MPI_Datatype t)
{
    int ni, na, nd, combiner;
    if (MPI_Type_get_envelope(t, &ni, &na, &nd, &combiner) != MPI_SUCCESS)
        return 1; /* not a type we could duplicate either */
    return combiner == MPI_COMBINER_NAMED;
}
