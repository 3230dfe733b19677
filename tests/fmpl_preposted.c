/* fmpl_preposted.c — seed 000's table 2 pattern as a correctness test: every rank pre-posts
 * 600 nonblocking receives (one per mai) from its left neighbour, then the neighbour sends
 * 600 messages; contents and statuses are checked. Posting is O(1) per receive by
 * construction (no queue); bench/ measures the gap. Also a pre-posted receive from every
 * peer at once (all-to-all) on one mai. */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

#define NPRE 600

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    for (int round = 0; round < 3; round++) {
        long *in = malloc(NPRE * 4 * sizeof *in), *out = malloc(NPRE * 4 * sizeof *out);
        CHECK(in && out);
        memset(in, 0, NPRE * 4 * sizeof *in);
        for (int m = 0; m < NPRE; m++) {
            /* sizes vary with m: 8 .. 32 bytes */
            size_t n = (size_t)(1 + m % 4) * sizeof(long);
            CHECK_RC(fmpl_irecv(&in[4 * m], n, left, m, FMPL_COMM_WORLD), FMPL_SUCCESS);
        }
        CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
        for (int m = 0; m < NPRE; m++) {
            size_t n = (size_t)(1 + m % 4) * sizeof(long);
            for (int j = 0; j < 4; j++)
                out[4 * m + j] = (long)rank * 1000000 + round * 10000 + m * 4 + j;
            /* in reverse order every other round: matching does not depend on order */
            int mm = round % 2 ? NPRE - 1 - m : m;
            size_t nn = (size_t)(1 + mm % 4) * sizeof(long);
            for (int j = 0; j < 4; j++)
                out[4 * mm + j] = (long)rank * 1000000 + round * 10000 + mm * 4 + j;
            (void)n;
            CHECK_RC(fmpl_send(&out[4 * mm], nn, right, mm, FMPL_COMM_WORLD), FMPL_SUCCESS);
        }
        for (int m = NPRE - 1; m >= 0; m--) {
            fmpl_status st;
            size_t n = (size_t)(1 + m % 4) * sizeof(long);
            CHECK_RC(fmpl_irecv_wait(left, m, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
            CHECK(st.source == left && st.mai == m && st.size == n);
            for (size_t j = 0; j < n / sizeof(long); j++)
                CHECK(in[4 * m + j] == (long)left * 1000000 + round * 10000 + m * 4 + (long)j);
        }
        free(in);
        free(out);
    }

    /* All-to-all on mai 11: a receive from every peer posted before any send. */
    {
        int *in = malloc((size_t)size * sizeof *in);
        CHECK(in);
        for (int p = 0; p < size; p++) {
            in[p] = -1;
            CHECK_RC(fmpl_irecv(&in[p], sizeof(int), p, 11, FMPL_COMM_WORLD), FMPL_SUCCESS);
        }
        for (int k = 0; k < size; k++) {
            int p = (rank + k) % size, v = rank * 1000 + p;
            CHECK_RC(fmpl_isend(&v, sizeof v, p, 11, FMPL_COMM_WORLD), FMPL_SUCCESS);
            CHECK_RC(fmpl_isend_wait(p, 11, FMPL_COMM_WORLD), FMPL_SUCCESS);
        }
        for (int p = 0; p < size; p++) {
            CHECK_RC(fmpl_irecv_wait(p, 11, FMPL_COMM_WORLD, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            CHECK(in[p] == p * 1000 + rank);
        }
        free(in);
    }
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_preposted: ok (%d ranks)\n", size);
    return 0;
}
