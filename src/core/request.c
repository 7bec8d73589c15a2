/* Requests: the list of active requests and the public request functions.
 * Blocking calls are start + wait, nonblocking calls start + test/wait,
 * persistent calls bind once and start many times.  Every wait or test
 * progresses all active requests, whatever their kind (DESIGN.md,
 * "Requests and progress"). */
#include "core/core.h"
#include <stddef.h>

static struct iso_request_s *active_head;

static void list_add(struct iso_request_s *r)
{
    r->prev = NULL;
    r->next = active_head;
    if (active_head)
        active_head->prev = r;
    active_head = r;
}

static void list_remove(struct iso_request_s *r)
{
    if (r->prev)
        r->prev->next = r->next;
    else if (active_head == r)
        active_head = r->next;
    if (r->next)
        r->next->prev = r->prev;
    r->prev = r->next = NULL;
}

void iso__request_init(struct iso_request_s *r, const iso_request_kind *kind, MPI_Comm comm,
                       int persistent)
{
    r->kind = kind;
    r->comm = comm;
    r->persistent = persistent;
    r->active = 0;
    r->err = MPI_SUCCESS;
    r->prev = r->next = NULL;
}

int iso__request_start(struct iso_request_s *r)
{
    int err;
    r->err = MPI_SUCCESS;
    r->active = 1;
    list_add(r);
    if ((err = r->kind->start(r)) != MPI_SUCCESS && r->active)
        iso__request_complete(r, err);
    return r->active ? MPI_SUCCESS : r->err;
}

void iso__request_complete(struct iso_request_s *r, int err)
{
    r->active = 0;
    r->err = err;
    list_remove(r);
}

static void progress_all(void)
{
    for (struct iso_request_s *q = active_head, *next; q; q = next) {
        next = q->next;
        q->kind->progress(q, 0);
    }
}

int iso__request_wait(struct iso_request_s *r)
{
    while (r->active) {
        if (active_head == r && r->next == NULL)
            r->kind->progress(r, 1); /* alone: let MPI block */
        else
            progress_all();
    }
    return r->err;
}

int iso__progress_wait(MPI_Request *mreq)
{
    int flag = 0, err;
    while (active_head != NULL) {
        if ((err = MPI_Test(mreq, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS || flag)
            return err;
        progress_all();
    }
    return MPI_Wait(mreq, MPI_STATUS_IGNORE); /* nothing else to progress: let MPI block */
}

void iso__request_destroy(struct iso_request_s *r)
{
    if (r == NULL)
        return;
    if (r->active)
        list_remove(r);
    r->kind->destroy(r);
}

/* ---- public -------------------------------------------------------------- */

static int request_error(const char *fn, MPI_Comm comm, const char *what)
{
    return iso__raise_in(fn, comm, iso__error_msg(ISO_ERR_REQUEST, "%s", what));
}

static MPI_Comm req_comm(const Iso_request *request)
{
    return (request && *request) ? (*request)->comm : MPI_COMM_WORLD;
}

int Iso_start(Iso_request *request)
{
    struct iso_request_s *r;
    if (request == NULL || *request == NULL)
        return request_error(__func__, MPI_COMM_WORLD,
                             request ? "*request is ISO_REQUEST_NULL" : "request is NULL");
    r = *request;
    if (!r->persistent)
        return request_error(__func__, r->comm, "not a persistent request");
    if (r->active)
        return request_error(__func__, r->comm, "the request is active (started, not completed)");
    return iso__raise(r->comm, iso__request_start(r));
}

/* After completion: a nonblocking request is freed, a persistent one stays. */
static int retire(const char *fn, Iso_request *request)
{
    struct iso_request_s *r = *request;
    int err = r->err;
    MPI_Comm comm = r->comm;
    if (!r->persistent) {
        iso__request_destroy(r);
        *request = ISO_REQUEST_NULL;
    }
    return iso__raise_in(fn, comm, err);
}

int Iso_wait(Iso_request *request)
{
    if (request == NULL)
        return request_error(__func__, MPI_COMM_WORLD, "request is NULL");
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    iso__request_wait(*request);
    return retire(__func__, request);
}

int Iso_test(Iso_request *request, int *flag)
{
    if (request == NULL || flag == NULL)
        return request_error(__func__, req_comm(request),
                             request ? "flag is NULL" : "request is NULL");
    *flag = 1;
    if (*request == ISO_REQUEST_NULL)
        return MPI_SUCCESS;
    progress_all();
    if ((*request)->active) {
        *flag = 0;
        return MPI_SUCCESS;
    }
    return retire(__func__, request);
}

int Iso_waitall(int n, Iso_request requests[])
{
    int err = MPI_SUCCESS;
    if (n < 0 || (n > 0 && requests == NULL))
        return request_error(__func__, MPI_COMM_WORLD,
                             n < 0 ? "negative count" : "requests is NULL");
    for (int i = 0; i < n; i++) {
        int e = Iso_wait(&requests[i]);
        if (err == MPI_SUCCESS)
            err = e;
    }
    return err;
}

int Iso_request_free(Iso_request *request)
{
    if (request == NULL || *request == NULL)
        return request_error(__func__, MPI_COMM_WORLD,
                             request ? "*request is ISO_REQUEST_NULL" : "request is NULL");
    if ((*request)->active)
        return request_error(__func__, (*request)->comm,
                             "the request is active: complete it first (Iso_wait, Iso_test)");
    iso__request_destroy(*request);
    *request = ISO_REQUEST_NULL;
    return MPI_SUCCESS;
}
