/* Requests: the list of active requests and the public request functions.
 * Blocking calls are start + wait, nonblocking calls start + test/wait,
 * persistent calls bind once and start many times.  Every wait or test
 * progresses all active requests, whatever their kind (DESIGN.md,
 * "Requests and progress").
 *
 * Threads (DESIGN.md, "Threads"): the list is guarded by the library's lock,
 * and a request is progressed by one thread at a time (busy); a thread that
 * finds a request busy leaves it to the thread that has it.  The lock is
 * never held while a request progresses, so MPI may block there. */
#include "core/core.h"
#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

static pthread_mutex_t lib_lock = PTHREAD_MUTEX_INITIALIZER;
static struct iso_request_s *active_head;

/* Only a program that runs MPI_THREAD_MULTIPLE can enter the library from
 * two threads at once; the others do not pay for the mutex (about 80
 * instructions a pair, several pairs per call). */
static pthread_once_t thread_level_once = PTHREAD_ONCE_INIT;
static int threaded;

static void thread_level(void)
{
    int provided = MPI_THREAD_SINGLE;
    MPI_Query_thread(&provided);
    threaded = provided == MPI_THREAD_MULTIPLE;
}

void iso__lock(void)
{
    pthread_once(&thread_level_once, thread_level);
    if (threaded)
        pthread_mutex_lock(&lib_lock);
}

void iso__unlock(void)
{
    if (threaded)
        pthread_mutex_unlock(&lib_lock);
}

/* MPICH 4.0 raises the errors of completion calls (MPI_Wait, MPI_Testall,
 * ...) through MPI_COMM_WORLD's error handler, whatever the communicator
 * of the request, so an error on the private communicator would abort the
 * program even though the user's communicator returns errors.  While the
 * library progresses requests, MPI_COMM_WORLD returns errors instead; the
 * library checks every code and raises it on the user's communicator.  A
 * count, because threads progress at the same time.  Other MPI libraries
 * use the request's communicator (whose handler is MPI_ERRORS_RETURN). */
#if defined(MPICH_VERSION)
static int world_swaps;
static MPI_Errhandler world_handler = MPI_ERRHANDLER_NULL;

void iso__world_errors_return(int on)
{
    iso__lock();
    if (on && world_swaps++ == 0 &&
        MPI_Comm_get_errhandler(MPI_COMM_WORLD, &world_handler) == MPI_SUCCESS)
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    if (!on && --world_swaps == 0 && world_handler != MPI_ERRHANDLER_NULL) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, world_handler);
        MPI_Errhandler_free(&world_handler);
        world_handler = MPI_ERRHANDLER_NULL;
    }
    iso__unlock();
}
#else
void iso__world_errors_return(int on)
{
    (void)on;
}
#endif

/* The list functions are called with the lock held. */
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

/* Takes r for this thread once no other thread progresses it (lock held). */
static void take(struct iso_request_s *r)
{
    while (r->busy) {
        iso__unlock();
        sched_yield();
        iso__lock();
    }
    r->busy = 1;
}

static void give_back(struct iso_request_s *r)
{
    iso__lock();
    r->busy = 0;
    iso__unlock();
}

void iso__request_init(struct iso_request_s *r, const iso_request_kind *kind, MPI_Comm comm,
                       int persistent)
{
    r->kind = kind;
    r->comm = comm;
    r->persistent = persistent;
    r->active = 0;
    r->busy = 0;
    r->err = MPI_SUCCESS;
    r->prev = r->next = NULL;
}

int iso__request_start(struct iso_request_s *r)
{
    int err, active;
    iso__lock();
    take(r); /* a persistent request may still be in another thread's hands */
    r->err = MPI_SUCCESS;
    r->active = 1;
    list_add(r);
    iso__unlock();
    /* no MPI_COMM_WORLD swap: a start only posts (the one completion call
     * a start can make, the test of a private communicator's idup, swaps
     * itself in iso__priv_ready) */
    if ((err = r->kind->start(r)) != MPI_SUCCESS && iso__request_active(r))
        iso__request_complete(r, err);
    iso__lock();
    r->busy = 0;
    active = r->active;
    err = r->err;
    iso__unlock();
    return active ? MPI_SUCCESS : err;
}

void iso__request_complete(struct iso_request_s *r, int err)
{
    iso__lock();
    r->active = 0;
    r->err = err;
    list_remove(r);
    iso__unlock();
}

int iso__request_active(struct iso_request_s *r)
{
    int active;
    iso__lock();
    active = r->active;
    iso__unlock();
    return active;
}

/* Progresses every active request no other thread has, without blocking. */
static void progress_all(void)
{
    struct iso_request_s *small[32], **batch = small, **more;
    int n = 0, cap = 32;
    iso__lock();
    for (struct iso_request_s *q = active_head; q; q = q->next) {
        if (q->busy)
            continue;
        if (n == cap) {
            if ((more = malloc(sizeof *more * 2 * (size_t)cap)) == NULL)
                break; /* the rest waits for the next pass */
            memcpy(more, batch, sizeof *more * (size_t)n);
            if (batch != small)
                free(batch);
            batch = more;
            cap *= 2;
        }
        q->busy = 1;
        batch[n++] = q;
    }
    iso__unlock();
    iso__world_errors_return(1);
    for (int k = 0; k < n; k++)
        batch[k]->kind->progress(batch[k], 0);
    iso__world_errors_return(0);
    iso__lock();
    for (int k = 0; k < n; k++)
        batch[k]->busy = 0;
    iso__unlock();
    if (batch != small)
        free(batch);
}

int iso__request_wait(struct iso_request_s *r)
{
    int err;
    for (;;) {
        int alone;
        iso__lock();
        if (!r->active)
            break;
        alone = active_head == r && r->next == NULL && !r->busy;
        if (alone)
            r->busy = 1;
        iso__unlock();
        if (alone) {
            iso__world_errors_return(1);
            r->kind->progress(r, 1); /* alone: let MPI block */
            iso__world_errors_return(0);
            give_back(r);
        } else {
            progress_all();
        }
    }
    err = r->err;
    iso__unlock();
    return err;
}

int iso__progress_wait(MPI_Request *mreq)
{
    int flag = 0, err, any;
    iso__world_errors_return(1); /* MPI_Test and MPI_Wait are completion calls */
    for (;;) {
        iso__lock();
        any = active_head != NULL;
        iso__unlock();
        if (!any)
            break;
        if ((err = MPI_Test(mreq, &flag, MPI_STATUS_IGNORE)) != MPI_SUCCESS || flag)
            goto fn_exit;
        progress_all();
    }
    err = MPI_Wait(mreq, MPI_STATUS_IGNORE); /* nothing else to progress: let MPI block */
fn_exit:
    iso__world_errors_return(0);
    return err;
}

int iso__progress_waitall(int n, MPI_Request reqs[])
{
    int err = MPI_SUCCESS;
    for (int k = 0; k < n && err == MPI_SUCCESS; k++)
        err = iso__progress_wait(&reqs[k]);
    return err;
}

void iso__progress_poll(void)
{
    progress_all();
}

void iso__request_destroy(struct iso_request_s *r)
{
    if (r == NULL)
        return;
    iso__lock();
    take(r); /* another thread may still hold it from its last pass */
    if (r->active)
        list_remove(r);
    iso__unlock();
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
    if (iso__request_active(r))
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
    if (iso__request_active(*request)) {
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
    if (iso__request_active(*request))
        return request_error(__func__, (*request)->comm,
                             "the request is active: complete it first (Iso_wait, Iso_test)");
    iso__request_destroy(*request);
    *request = ISO_REQUEST_NULL;
    return MPI_SUCCESS;
}
