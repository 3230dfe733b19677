/* fmpl_demo — what `make run` shows: a ring of messages, a broadcast and an allreduce
 * over every rank, each rank reporting what it got; rank 0 prints the reports in rank
 * order and checks them.
 *
 *   fmplrun -n 4 fmpl_demo */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"

#define W FMPL_COMM_WORLD
#define MAI_RING 1
#define MAI_REPORT 2
#define LINE 160

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_demo: %s failed: %s\n", #call, fmpl_error_string(rc_));          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

int main(int argc, char **argv)
{
    int rank, size, ok = 1;
    CHECK(fmpl_init(&argc, &argv));
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &size));
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* Ring: post the receive from the left first (its header lands in the left
     * neighbour's matching area), then send to the right, then wait. */
    char out[64], in[64] = "";
    snprintf(out, sizeof out, "hello from rank %d", rank);
    fmpl_status st;
    CHECK(fmpl_irecv(in, sizeof in, left, MAI_RING, W));
    CHECK(fmpl_send(out, strlen(out) + 1, right, MAI_RING, W));
    CHECK(fmpl_irecv_wait(left, MAI_RING, W, &st));
    char want[64];
    snprintf(want, sizeof want, "hello from rank %d", left);
    ok &= strcmp(in, want) == 0 && st.source == left && st.size == strlen(want) + 1;

    /* Broadcast from rank 0. */
    char msg[64] = "";
    if (rank == 0)
        snprintf(msg, sizeof msg, "FMPL %s says hi to %d ranks", FMPL_VERSION_STRING, size);
    CHECK(fmpl_bcast(msg, sizeof msg, 0, W));
    char bwant[64];
    snprintf(bwant, sizeof bwant, "FMPL %s says hi to %d ranks", FMPL_VERSION_STRING, size);
    ok &= strcmp(msg, bwant) == 0;

    /* Allreduce: the sum and the maximum of (rank + 1). */
    int64_t sum = rank + 1, max = rank + 1;
    CHECK(fmpl_allreduce(&sum, 1, FMPL_INT64, FMPL_SUM, W, NULL));
    CHECK(fmpl_allreduce(&max, 1, FMPL_INT64, FMPL_MAX, W, NULL));
    ok &= sum == (int64_t)size * (size + 1) / 2 && max == size;

    char report[LINE];
    snprintf(report, sizeof report,
             "rank %d/%d: ring got \"%s\" (%zu B from rank %d); bcast got \"%s\"; "
             "allreduce sum=%lld max=%lld  %s",
             rank, size, in, st.size, st.source, msg, (long long)sum, (long long)max,
             ok ? "ok" : "WRONG");

    /* Reports travel to rank 0, which prints them in rank order. */
    int all_ok = ok;
    if (rank == 0) {
        printf("%s\n", report);
        for (int r = 1; r < size; r++) {
            char line[LINE];
            CHECK(fmpl_recv(line, sizeof line, r, MAI_REPORT, W, FMPL_STATUS_IGNORE));
            line[LINE - 1] = 0;
            printf("%s\n", line);
            all_ok &= strstr(line, " ok") != NULL;
        }
        printf("%s: %d ranks, ring + bcast + allreduce %s\n", all_ok ? "PASS" : "FAIL", size,
               all_ok ? "all correct" : "gave wrong results");
        fflush(stdout);
    } else {
        CHECK(fmpl_send(report, sizeof report, 0, MAI_REPORT, W));
    }
    /* Everyone learns the verdict so every rank's exit status tells it. */
    int32_t verdict = all_ok;
    CHECK(fmpl_bcast(&verdict, sizeof verdict, 0, W));
    CHECK(fmpl_finalize());
    return verdict ? 0 : 1;
}
