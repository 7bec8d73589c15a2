/* The mailbox's errors and lifecycle: bad arguments give the documented
 * class through the communicator's handler (MPI_ERRORS_RETURN here) and
 * queue nothing (a later wait_empty delivers exactly the good messages);
 * options that are unknown, malformed or different between processes fail
 * create on every process (a bad iso_locality / ISO_LOCALITY with a message
 * naming the key, the value and the levels); free while messages are pending fails on every
 * process and keeps the mailbox; a freed handle is an error, not a read of
 * freed memory; flush, wait_empty and free from a callback are errors;
 * 2000 create/free cycles (500 at 4 ranks) (a leaked communicator would exhaust
 * MPI's context ids; ASan's leak check sees the rest).
 *
 * PER-ALGORITHM: no
 * NPROCS: 1 2 4
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

static int P, ME;

static Iso_error cls(int err)
{
    Iso_error e = ISO_ERR_NONE;
    Iso_error_class(err, &e);
    return e;
}

typedef struct {
    long long n;
    int in_callback_errs[3]; /* flush, wait_empty, free from a callback */
    int try_forbidden;
} state;

static void on_recv(Iso_mailbox mb, int source, const void *msg, size_t bytes, void *ctx)
{
    state *s = ctx;
    (void)source;
    (void)msg;
    (void)bytes;
    s->n++;
    if (s->try_forbidden) {
        Iso_mailbox copy = mb;
        s->in_callback_errs[0] = cls(Iso_mailbox_flush(mb));
        s->in_callback_errs[1] = cls(Iso_mailbox_wait_empty(mb));
        s->in_callback_errs[2] = cls(Iso_mailbox_free(&copy));
        s->try_forbidden = 0;
    }
}

static void create_fails(const char *key, const char *value, size_t capacity, Iso_error want,
                         const char *what)
{
    MPI_Info info = MPI_INFO_NULL;
    Iso_mailbox mb = (Iso_mailbox)&info; /* must become NULL */
    state s = {0};
    int err;
    if (key) {
        MPI_Info_create(&info);
        MPI_Info_set(info, key, value);
    }
    err = Iso_mailbox_create(MPI_COMM_WORLD, capacity, on_recv, &s, info, &mb);
    CHECK_EQ_INT(cls(err), want, "create with %s", what);
    CHECK(mb == NULL, "create with %s: mb is NULL", what);
    if (info != MPI_INFO_NULL)
        MPI_Info_free(&info);
}

int main(int argc, char **argv)
{
    state s = {0};
    Iso_mailbox mb = NULL, stale;
    char big[200] = {0};
    int err, ncycles;
    MPI_Init(&argc, &argv);
    MPI_Comm_size(MPI_COMM_WORLD, &P);
    MPI_Comm_rank(MPI_COMM_WORLD, &ME);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    unsetenv("ISO_ROUTE");
    unsetenv("ISO_NODE_MAP");
    unsetenv("ISO_LOCALITY");

    create_fails(NULL, NULL, 0, ISO_ERR_ARG, "capacity 0");
    create_fails("iso_bogus", "1", 64, ISO_ERR_INFO, "an unknown iso_ key");
    create_fails("iso_route", "fast", 64, ISO_ERR_INFO, "iso_route=fast");
    create_fails("iso_vpt_dims", "5,7", 64, ISO_ERR_INFO, "iso_vpt_dims of the wrong product");
    create_fails("iso_locality", "socket", 64, ISO_ERR_INFO, "iso_locality=socket");
    if (P > 1) {
        create_fails(NULL, NULL, ME == 0 ? 100 : 200, ISO_ERR_ARG, "different capacities");
        create_fails("iso_locality", ME == 0 ? "node" : "package", 64, ISO_ERR_ARG,
                     "different locality levels");
    }
    { /* the messages name the key or variable, the value and the levels */
        static const char *const where[] = {"iso_locality", "ISO_LOCALITY"};
        for (int k = 0; k < 2; k++) {
            MPI_Info info = MPI_INFO_NULL;
            char str[MPI_MAX_ERROR_STRING + 1] = "";
            int len = 0, rc;
            if (k == 0) {
                MPI_Info_create(&info);
                MPI_Info_set(info, "iso_locality", "l3");
            } else
                setenv("ISO_LOCALITY", "l3", 1);
            mb = NULL;
            rc = Iso_mailbox_create(MPI_COMM_WORLD, 64, on_recv, &s, info, &mb);
            unsetenv("ISO_LOCALITY");
            if (info != MPI_INFO_NULL)
                MPI_Info_free(&info);
            CHECK_EQ_INT(cls(rc), ISO_ERR_INFO, "%s=l3", where[k]);
            CHECK(mb == NULL, "%s=l3: mb is NULL", where[k]);
            if (rc != MPI_SUCCESS)
                MPI_Error_string(rc, str, &len);
            CHECK(strstr(str, where[k]) && strstr(str, "l3") &&
                      strstr(str, "node, package, numa, auto"),
                  "%s=l3: the message names it, the value and the levels: \"%s\"", where[k],
                  str);
        }
    }
    err = Iso_mailbox_create(MPI_COMM_WORLD, 64, NULL, NULL, MPI_INFO_NULL, &mb);
    CHECK_EQ_INT(cls(err), ISO_ERR_ARG, "create with recv NULL");
    CHECK_EQ_INT(cls(Iso_mailbox_create(MPI_COMM_NULL, 64, on_recv, &s, MPI_INFO_NULL, &mb)),
                 ISO_ERR_ARG, "create on MPI_COMM_NULL");
    tap_result(MPI_COMM_WORLD, "create: bad capacity, options, recv, comm fail everywhere");

    {
        /* other libraries' keys are ignored */
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "other_lib_key", "x");
        CHECK(Iso_mailbox_create(MPI_COMM_WORLD, 64, on_recv, &s, info, &mb) == MPI_SUCCESS,
              "create");
        MPI_Info_free(&info);
    }
    CHECK_EQ_INT(cls(Iso_mailbox_send(mb, -1, "x", 1)), ISO_ERR_ARG, "dest -1");
    CHECK_EQ_INT(cls(Iso_mailbox_send(mb, P, "x", 1)), ISO_ERR_ARG, "dest = size");
    CHECK_EQ_INT(cls(Iso_mailbox_send(mb, 0, NULL, 5)), ISO_ERR_ARG, "NULL with 5 bytes");
    CHECK_EQ_INT(cls(Iso_mailbox_send(mb, 0, big, 65)), ISO_ERR_COUNT, "65 bytes > capacity");
    CHECK_EQ_INT(cls(Iso_mailbox_bcast(mb, big, 65)), ISO_ERR_COUNT, "bcast 65 bytes");
    CHECK_EQ_INT(cls(Iso_mailbox_bcast(mb, NULL, 3)), ISO_ERR_ARG, "bcast NULL with 3 bytes");
    CHECK(Iso_mailbox_send(mb, (ME + 1) % P, big, 64) == MPI_SUCCESS, "64 bytes = capacity");
    CHECK(Iso_mailbox_wait_empty(mb) == MPI_SUCCESS, "wait_empty");
    CHECK_EQ_INT(s.n, 1, "exactly the good message arrived");
    tap_result(MPI_COMM_WORLD, "send/bcast: bad dest, NULL, too large are errors, queue nothing");

    /* free with messages pending: an error everywhere, the mailbox kept */
    s.n = 0;
    CHECK(Iso_mailbox_send(mb, (ME + 1) % P, "y", 1) == MPI_SUCCESS, "send");
    err = Iso_mailbox_free(&mb);
    CHECK_EQ_INT(cls(err), ISO_ERR_ARG, "free while pending");
    CHECK(mb != NULL, "the mailbox is kept");
    CHECK(Iso_mailbox_wait_empty(mb) == MPI_SUCCESS, "wait_empty");
    CHECK_EQ_INT(s.n, 1, "the pending message arrived once");
    tap_result(MPI_COMM_WORLD, "free while messages are pending fails everywhere, keeps them");

    /* flush, wait_empty, free from a callback */
    s.n = 0;
    s.try_forbidden = 1;
    CHECK(Iso_mailbox_send(mb, ME, "z", 1) == MPI_SUCCESS, "send to oneself");
    CHECK(Iso_mailbox_wait_empty(mb) == MPI_SUCCESS, "wait_empty");
    CHECK_EQ_INT(s.n, 1, "delivered");
    for (int k = 0; k < 3; k++)
        CHECK_EQ_INT(s.in_callback_errs[k], ISO_ERR_ARG, "call %d from a callback", k);
    tap_result(MPI_COMM_WORLD, "flush, wait_empty and free from a callback are errors");

    stale = mb;
    CHECK(Iso_mailbox_free(&mb) == MPI_SUCCESS && mb == NULL, "free");
    CHECK_EQ_INT(cls(Iso_mailbox_send(stale, 0, "x", 1)), ISO_ERR_ARG, "send after free");
    CHECK_EQ_INT(cls(Iso_mailbox_bcast(stale, "x", 1)), ISO_ERR_ARG, "bcast after free");
    CHECK_EQ_INT(cls(Iso_mailbox_wait_empty(stale)), ISO_ERR_ARG, "wait_empty after free");
    CHECK_EQ_INT(cls(Iso_mailbox_free(&stale)), ISO_ERR_ARG, "free after free");
    CHECK_EQ_INT(cls(Iso_mailbox_send(NULL, 0, "x", 1)), ISO_ERR_ARG, "send on NULL");
    CHECK_EQ_INT(cls(Iso_mailbox_free(NULL)), ISO_ERR_ARG, "free(NULL)");
    tap_result(MPI_COMM_WORLD, "use after free and NULL handles are errors");

    /* thousands of mailboxes; every hundredth carries a message around a
     * ring (fewer when the ranks outnumber this machine's 2 cores: each
     * cycle is a few collectives, slow oversubscribed) */
    ncycles = P <= 2 ? 2000 : 500;
    for (int k = 0; k < ncycles; k++) {
        long long before = s.n;
        if (Iso_mailbox_create(MPI_COMM_WORLD, 32 + (size_t)k % 100, on_recv, &s, MPI_INFO_NULL,
                               &mb) != MPI_SUCCESS) {
            CHECK(0, "create %d", k);
            break;
        }
        if (k % 100 == 0) {
            Iso_mailbox_send(mb, (ME + 1) % P, &k, sizeof k);
            Iso_mailbox_wait_empty(mb);
            CHECK_EQ_INT(s.n - before, 1, "mailbox %d: one message", k);
        }
        if (Iso_mailbox_free(&mb) != MPI_SUCCESS || mb != NULL) {
            CHECK(0, "free %d", k);
            break;
        }
    }
    tap_result(MPI_COMM_WORLD, "%d mailboxes created and freed", ncycles);
    MPI_Finalize();
    return 0;
}
