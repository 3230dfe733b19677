/* mpi_incast.c — eager flow control (p2p.c, CREDIT; seed 002): every rank but 0 floods
 * rank 0 with K small nonblocking sends while rank 0 sleeps, then rank 0 receives them
 * all. Checked:
 *  - each MPI_Isend returns at once (well under the sleep), whatever rank 0 does;
 *  - once every message has arrived, rank 0's private memory has grown by less than the
 *    eager budget (FMPL_EAGER_BUDGET, set small by the test) plus an envelope allowance
 *    per message: without credit it would hold every payload;
 *  - matching under back-pressure: rank 0 first receives each sender's LAST message by
 *    its tag (behind K - 1 others of that sender), then probes (MPI_Probe on a specific
 *    source, MPI_Iprobe on MPI_ANY_SOURCE) and receives the rest with MPI_ANY_SOURCE in
 *    arrival order, checking every payload and the per-sender order;
 *  - a second round with MPI_Ssend from every sender (synchronous: no credit shortcut).
 * Arguments: K (default 20000), payload bytes (default 1024). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

static int rank, size;

/* This process's private resident memory (RssAnon, KiB): what it holds for messages;
 * the pages of a sender's shared heap it reads a staged message from are the sender's
 * (they would count in its total RSS). */
static long anon_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long v = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "RssAnon: %ld", &v) == 1)
            break;
    if (f)
        fclose(f);
    return v;
}

static double now_s(void)
{
    return MPI_Wtime();
}

static void fill(unsigned char *p, int n, int src, int seq)
{
    for (int i = 0; i < n; i++)
        p[i] = (unsigned char)(src * 31 + seq * 7 + i);
}

static int check(const unsigned char *p, int n, int src, int seq)
{
    for (int i = 0; i < n; i++)
        if (p[i] != (unsigned char)(src * 31 + seq * 7 + i))
            return 0;
    return 1;
}

/* Tag of message seq of K: the last one has its own tag, the others share tag 1. */
static int tag_of(int seq, int k)
{
    return seq == k - 1 ? 2 : 1;
}

static void flood(int k, int n, long budget)
{
    if (rank != 0) {
        unsigned char *bufs = malloc((size_t)k * (size_t)n);
        MPI_Request *rq = malloc((size_t)k * sizeof *rq);
        CHECK(bufs && rq);
        for (int i = 0; i < k; i++)
            fill(bufs + (size_t)i * (size_t)n, n, rank, i);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = now_s();
        for (int i = 0; i < k; i++)
            CHECK_RC(MPI_Isend(bufs + (size_t)i * (size_t)n, n, MPI_BYTE, 0, tag_of(i, k),
                               MPI_COMM_WORLD, &rq[i]),
                     MPI_SUCCESS);
        double t = now_s() - t0;
        if (t > 0.25) { /* rank 0 sleeps 0.5 s: the sends did not wait for it */
            fprintf(stderr, "rank %d: %d MPI_Isend took %.3f s\n", rank, k, t);
            exit(1);
        }
        for (int i = 0; i < k; i++)
            CHECK_RC(MPI_Wait(&rq[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
        free(rq);
        free(bufs);
        return;
    }
    unsigned char *buf = malloc((size_t)n);
    int *next = calloc((size_t)size, sizeof *next);
    CHECK(buf && next);
    long rss0 = anon_kib();
    MPI_Barrier(MPI_COMM_WORLD);
    usleep(500000);
    MPI_Status st;
    for (int s = 1; s < size; s++) { /* the last message of each, behind the others */
        CHECK_RC(MPI_Recv(buf, n, MPI_BYTE, s, 2, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK(check(buf, n, s, k - 1));
    }
    /* every message has arrived by now (the last ones were behind all the others): what
     * was not received yet is queued here */
    long grew = (anon_kib() - rss0) * 1024;
    long left = (long)(k - 1) * (size - 1);
    for (long i = 0; i < left; i++) {
        int src;
        if (i % 3 == 0) { /* a specific source, blocking probe */
            src = 1 + (int)(i / 3 % (size - 1));
            if (next[src] == k - 1) { /* that one is done: any source */
                CHECK_RC(MPI_Probe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
                src = st.MPI_SOURCE;
            } else {
                CHECK_RC(MPI_Probe(src, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            }
        } else if (i % 3 == 1) { /* nonblocking probe, any source */
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
            src = st.MPI_SOURCE;
        } else {
            src = MPI_ANY_SOURCE;
        }
        int count = -1;
        if (src != MPI_ANY_SOURCE) {
            CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &count), MPI_SUCCESS);
            CHECK(count == n);
        }
        CHECK_RC(MPI_Recv(buf, n, MPI_BYTE, src, 1, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        src = st.MPI_SOURCE;
        CHECK(src >= 1 && src < size && next[src] < k - 1);
        if (!check(buf, n, src, next[src])) {
            fprintf(stderr, "rank 0: message %d from %d damaged or out of order\n", next[src], src);
            exit(1);
        }
        next[src]++;
    }
    long allow = budget + 4l * 1024 * 1024 + (long)k * (size - 1) * 256; /* + envelopes */
    if (grew > allow) {
        fprintf(stderr,
                "rank 0: private memory grew %ld KiB for %d x %d messages of %d B (allowed %ld)\n",
                grew / 1024, size - 1, k, n, allow / 1024);
        exit(1);
    }
    printf("mpi_incast: rank 0's private memory grew %ld KiB (allowed %ld)\n", grew / 1024,
           allow / 1024);
    free(next);
    free(buf);
}

/* Every sender's synchronous sends, received in order per sender. */
static void ssend_round(int k, int n)
{
    unsigned char *buf = malloc((size_t)n);
    CHECK(buf);
    if (rank != 0) {
        for (int i = 0; i < k; i++) {
            fill(buf, n, rank, i);
            CHECK_RC(MPI_Ssend(buf, n, MPI_BYTE, 0, 3, MPI_COMM_WORLD), MPI_SUCCESS);
        }
    } else {
        int *next = calloc((size_t)size, sizeof *next);
        CHECK(next);
        for (long i = 0; i < (long)k * (size - 1); i++) {
            MPI_Status st;
            CHECK_RC(MPI_Recv(buf, n, MPI_BYTE, MPI_ANY_SOURCE, 3, MPI_COMM_WORLD, &st),
                     MPI_SUCCESS);
            CHECK(check(buf, n, st.MPI_SOURCE, next[st.MPI_SOURCE]++));
        }
        free(next);
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int k = argc > 1 ? atoi(argv[1]) : 20000, n = argc > 2 ? atoi(argv[2]) : 1024;
    const char *b = getenv("FMPL_EAGER_BUDGET");
    long budget = b ? atol(b) : 2l << 20;
    if (size > 1) {
        flood(k, n, budget);
        ssend_round(k / 10, n);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_incast: %d ranks, %d x %d B each ok\n", size, k, n);
    MPI_Finalize();
    return 0;
}
