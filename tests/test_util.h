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

#endif
