/* STAND-IN for message sharing's planner (route.h), until sharing_plan.c
 * lands: pairs 2i with 2i+1; a message to a target both have is sent by
 * the lower of the pair for even targets and the higher for odd ones
 * (deterministic; one partner per process; sender = source or partner). */
#include "route/route.h"
#include <stdlib.h>

static int has_target(const iso_pattern *pat, int p, int t)
{
    for (long long e = pat->start[p]; e < pat->start[p + 1]; e++)
        if (pat->targets[e] == t)
            return 1;
    return 0;
}

int iso__sharing_plan(const iso_pattern *pat, iso_sharing *out)
{
    long long E = pat->start[pat->K];
    out->sender = malloc(sizeof(int) * ((size_t)E + 1));
    if (out->sender == NULL)
        return MPI_ERR_NO_MEM;
    for (int q = 0; q < pat->K; q++) {
        int p = q ^ 1;
        for (long long e = pat->start[q]; e < pat->start[q + 1]; e++) {
            int t = pat->targets[e];
            out->sender[e] = q;
            if (p < pat->K && t != p && has_target(pat, p, t))
                out->sender[e] = (t % 2 == 0) == (q < p) ? q : p;
        }
    }
    out->volume_ratio = 1.0;
    return MPI_SUCCESS;
}

void iso__sharing_free(iso_sharing *s)
{
    free(s->sender);
    s->sender = NULL;
}
