/* What the runtime-tuning tests read from Iso_tune_info's records
 * (t_tune.c, t_tune_graph.c, t_tune_sdde.c): its words, that every
 * process has the same record, the model's pick, and the error a bad
 * iso_tune value gives; and the tuning environment they set. */
#ifndef ISO_TESTS_TUNE_RECORD_H
#define ISO_TESTS_TUNE_RECORD_H

#include <stdlib.h>
#include <string.h>

#include "isocoll.h"
#include "tap.h"

#define REC 1024 /* bytes of a record buffer */

/* The value of word key= in rec (up to the next space) into out. */
static inline void word(const char *rec, const char *key, char *out, size_t len)
{
    const char *p = strstr(rec, key);
    size_t n = 0;
    out[0] = '\0';
    if (!p)
        return;
    p += strlen(key);
    while (p[n] && p[n] != ' ' && n + 1 < len)
        n++;
    memcpy(out, p, n);
    out[n] = '\0';
}

/* Every process of MPI_COMM_WORLD has the same record text (rec: REC
 * bytes). */
static inline void check_same(const char *rec, const char *what)
{
    int rank, size;
    char *all;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    all = rank == 0 ? malloc((size_t)size * REC) : NULL;
    MPI_Gather(rec, REC, MPI_CHAR, all, REC, MPI_CHAR, 0, MPI_COMM_WORLD);
    for (int q = 1; rank == 0 && q < size; q++)
        CHECK(!strcmp(all, all + (size_t)q * REC), "%s: rank %d has \"%s\", rank 0 \"%s\"",
              what, q, all + (size_t)q * REC, all);
    free(all);
}

/* ISO_TUNE and ISO_TUNE_TEST for what follows (NULL: unset). */
static inline void set_tune_env(const char *tune, const char *hook)
{
    if (tune)
        setenv("ISO_TUNE", tune, 1);
    else
        unsetenv("ISO_TUNE");
    if (hook)
        setenv("ISO_TUNE_TEST", hook, 1);
    else
        unsetenv("ISO_TUNE_TEST");
}

/* The first candidate of the tried list (the model's pick for the shape:
 * the list is in the model's order, not the trials'), without its median. */
static inline void first_tried(const char *rec, char *out, size_t len)
{
    word(rec, "tried=", out, len);
    out[strcspn(out, ",:")] = '\0';
}

/* rc is ISO_ERR_INFO and its message names key and value. */
static inline void expect_info_error(int rc, const char *key, const char *value)
{
    char msg[MPI_MAX_ERROR_STRING];
    int len = 0;
    Iso_error cls = (Iso_error)0;
    Iso_error_class(rc, &cls);
    CHECK_EQ_INT(cls, ISO_ERR_INFO, "%s=%s", key, value);
    if (rc != MPI_SUCCESS) {
        MPI_Error_string(rc, msg, &len);
        CHECK(strstr(msg, key) && strstr(msg, value), "message \"%s\" names %s and %s", msg,
              key, value);
    }
}

#endif
