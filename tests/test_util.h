/* test_util.h — the one assertion macro of the tests: on failure it prints where and
 * what, and exits non-zero (so the launcher ends the job). Works in every build type. */
#ifndef FMPL_TEST_UTIL_H
#define FMPL_TEST_UTIL_H

#include <stdio.h>
#include <stdlib.h>

#define CHECK(cond)                                                                                \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #cond);               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* CHECK_RC(call, code): the call returns exactly code. */
#define CHECK_RC(call, code)                                                                       \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != (code)) {                                                                       \
            fprintf(stderr, "%s:%d: %s returned %d, expected %d (%s)\n", __FILE__, __LINE__,       \
                    #call, rc_, (int)(code), #code);                                               \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

#ifdef MPI_VERSION
/* CHECK_CLASS(call, cls): an MPI call fails with an error code of class cls (the code
 * itself is a detailed code beyond the class, see MPI_Error_string). */
#define CHECK_CLASS(call, cls)                                                                     \
    do {                                                                                           \
        int rc_ = (call), cls_ = -1;                                                               \
        if (rc_ != MPI_SUCCESS)                                                                    \
            MPI_Error_class(rc_, &cls_);                                                           \
        else                                                                                       \
            cls_ = MPI_SUCCESS;                                                                    \
        if (cls_ != (cls)) {                                                                       \
            fprintf(stderr, "%s:%d: %s returned %d of class %d, expected class %d (%s)\n",         \
                    __FILE__, __LINE__, #call, rc_, cls_, (int)(cls), #cls);                       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)
#endif

#endif
