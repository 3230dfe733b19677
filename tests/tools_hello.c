/* tools_hello — a user program built by the tools tests with fmplcc and with
 * pkg-config (so it includes nothing but the public fmpl.h): init, rank and size, a
 * ring of messages, an allreduce, fmpl_alloc_mem, finalize. Prints one line per rank
 * and exits non-zero on any wrong result. Runs as a singleton and under fmplrun. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <fmpl.h>

#define MUST(cond)                                                                                 \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "tools_hello: %s:%d: %s failed\n", __FILE__, __LINE__, #cond);         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int rank = -1, size = 0;
    MUST(fmpl_init(&argc, &argv) == FMPL_SUCCESS);
    MUST(fmpl_comm_rank(FMPL_COMM_WORLD, &rank) == FMPL_SUCCESS);
    MUST(fmpl_comm_size(FMPL_COMM_WORLD, &size) == FMPL_SUCCESS);
    MUST(rank >= 0 && rank < size);

    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int out = 1000 + rank, in = -1;
    if (size > 1) {
        fmpl_status st;
        MUST(fmpl_irecv(&in, sizeof in, left, 3, FMPL_COMM_WORLD) == FMPL_SUCCESS);
        MUST(fmpl_send(&out, sizeof out, right, 3, FMPL_COMM_WORLD) == FMPL_SUCCESS);
        MUST(fmpl_irecv_wait(left, 3, FMPL_COMM_WORLD, &st) == FMPL_SUCCESS);
        MUST(in == 1000 + left && st.source == left && st.size == sizeof in);
    }

    double v = rank + 1;
    MUST(fmpl_allreduce(&v, 1, FMPL_DOUBLE, FMPL_SUM, FMPL_COMM_WORLD, NULL) == FMPL_SUCCESS);
    MUST(v == (double)size * (size + 1) / 2);

    char *p = fmpl_alloc_mem(4096);
    MUST(p != NULL);
    memset(p, rank, 4096);
    MUST(fmpl_free_mem(p) == FMPL_SUCCESS);
    MUST(strcmp(fmpl_error_string(FMPL_SUCCESS), "") != 0);

    printf("tools_hello: rank %d of %d ok (FMPL %s)\n", rank, size, FMPL_VERSION_STRING);
    MUST(fmpl_finalize() == FMPL_SUCCESS);
    return 0;
}
