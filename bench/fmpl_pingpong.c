/* fmpl_pingpong — native FMPL point-to-point between ranks 0 and 1:
 * ping-pong latency and bandwidth, and streaming bandwidth, from 1 B to 16 MiB.
 *
 *   fmplrun -n 2 fmpl_pingpong [--csv] [--quick] [--mem=malloc|heap]
 *                              [--mode=prepost|blocking] [--min=B] [--max=B] [--sizes=A,B,..]
 * [--reps=N]
 *
 * What is timed (every figure is the median of --reps repetitions, after a warm-up):
 *  - latency, --mode=prepost (default): the intended FMPL use. Each side keeps its next
 *    receive posted (fmpl_irecv) one message ahead, alternating between two matching-area
 *    indices per direction, so the receive header is already in the sender's matching
 *    area when a send starts (the send is one remote write) and posting happens while
 *    a message is in flight. Rank 0 runs {send ping[i%2]; irecv pong[(i+1)%2];
 *    irecv_wait pong[i%2]}, rank 1 {irecv_wait ping[i%2]; send pong[i%2]; irecv
 *    ping[i%2] for i+2}; one-way latency = elapsed / (2 iters).
 *  - latency, --mode=blocking: plain fmpl_send/fmpl_recv; the send waits for the header the
 *    receive writes, so each one-way trip includes that header's flight.
 *  - ping-pong bandwidth = size / one-way latency.
 *  - streaming bandwidth (like osu_bw): rank 1 pre-posts a window of 64 receives (one
 *    matching-area index each, all into one buffer); rank 0 isends 64 messages, waits for
 *    them, then receives a 1-byte ack (pre-posted); rank 1 pre-posts the next window before
 *    acking. Bandwidth = 64 * size * iters / elapsed on rank 0.
 * --mem=malloc: page-aligned private memory (posix_memalign), large messages use CMA or the
 * bounce buffer; --mem=heap: fmpl_alloc_mem buffers in the shared heap (plain memcpy). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fmpl.h"

#define WINDOW 64
#define MAI_ACK (WINDOW)
#define MAI_PING (WINDOW + 1) /* and WINDOW + 2: two per direction, alternating */
#define MAI_PONG (WINDOW + 3) /* and WINDOW + 4 */
#define W FMPL_COMM_WORLD

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_pingpong: %s failed: %s\n", #call, fmpl_error_string(rc_));      \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int rank;
static int blocking;

/* One-way time of a ping-pong of n bytes, averaged over iters round trips.
 * prepost: each side keeps its next receive posted one message ahead, on two matching
 * areas per direction used alternately: the post happens while the current message
 * is in flight, so neither a receive header's flight nor posting is on the critical
 * path. blocking: plain send/recv. */
static double pingpong(char *sbuf, char *rbuf, size_t n, int iters)
{
    if (rank == 0) {
        if (!blocking)
            CHECK(fmpl_irecv(rbuf, n, 1, MAI_PONG, W));
        CHECK(fmpl_barrier(W));
        double t0 = fmpl_wtime();
        for (int i = 0; i < iters; i++) {
            int m = i % 2;
            if (blocking) {
                CHECK(fmpl_send(sbuf, n, 1, MAI_PING, W));
                CHECK(fmpl_recv(rbuf, n, 1, MAI_PONG, W, FMPL_STATUS_IGNORE));
            } else {
                CHECK(fmpl_send(sbuf, n, 1, MAI_PING + m, W));
                if (i + 1 < iters)
                    CHECK(fmpl_irecv(rbuf, n, 1, MAI_PONG + 1 - m, W));
                CHECK(fmpl_irecv_wait(1, MAI_PONG + m, W, FMPL_STATUS_IGNORE));
            }
        }
        return (fmpl_wtime() - t0) / (2.0 * iters);
    }
    if (rank == 1) {
        if (!blocking) {
            CHECK(fmpl_irecv(rbuf, n, 0, MAI_PING, W));
            if (iters > 1)
                CHECK(fmpl_irecv(rbuf, n, 0, MAI_PING + 1, W));
        }
        CHECK(fmpl_barrier(W));
        for (int i = 0; i < iters; i++) {
            int m = i % 2;
            if (blocking) {
                CHECK(fmpl_recv(rbuf, n, 0, MAI_PING, W, FMPL_STATUS_IGNORE));
                CHECK(fmpl_send(sbuf, n, 0, MAI_PONG, W));
            } else {
                CHECK(fmpl_irecv_wait(0, MAI_PING + m, W, FMPL_STATUS_IGNORE));
                CHECK(fmpl_send(sbuf, n, 0, MAI_PONG + m, W));
                if (i + 2 < iters)
                    CHECK(fmpl_irecv(rbuf, n, 0, MAI_PING + m, W));
            }
        }
        return 0;
    }
    CHECK(fmpl_barrier(W));
    return 0;
}

/* Streaming bandwidth in bytes/s (rank 0's measurement). */
static double stream(char *sbuf, char *rbuf, size_t n, int iters)
{
    char ack = 0;
    if (rank == 0) {
        CHECK(fmpl_barrier(W));
        double t0 = fmpl_wtime();
        for (int it = 0; it < iters; it++) {
            CHECK(fmpl_irecv(&ack, 1, 1, MAI_ACK, W));
            for (int i = 0; i < WINDOW; i++)
                CHECK(fmpl_isend(sbuf, n, 1, i, W));
            for (int i = 0; i < WINDOW; i++)
                CHECK(fmpl_isend_wait(1, i, W));
            CHECK(fmpl_irecv_wait(1, MAI_ACK, W, FMPL_STATUS_IGNORE));
        }
        double t = fmpl_wtime() - t0;
        return (double)n * WINDOW * iters / t;
    }
    if (rank == 1) {
        for (int i = 0; i < WINDOW; i++)
            CHECK(fmpl_irecv(rbuf, n, 0, i, W));
        CHECK(fmpl_barrier(W));
        for (int it = 0; it < iters; it++) {
            for (int i = 0; i < WINDOW; i++)
                CHECK(fmpl_irecv_wait(0, i, W, FMPL_STATUS_IGNORE));
            if (it + 1 < iters)
                for (int i = 0; i < WINDOW; i++)
                    CHECK(fmpl_irecv(rbuf, n, 0, i, W));
            CHECK(fmpl_send(&ack, 1, 0, MAI_ACK, W));
        }
        return 0;
    }
    CHECK(fmpl_barrier(W));
    return 0;
}

/* One exchange with known contents, checked on both sides. */
static void verify(char *sbuf, char *rbuf, size_t n)
{
    memset(sbuf, rank == 0 ? 'p' : 'q', n);
    memset(rbuf, 0, n);
    pingpong(sbuf, rbuf, n, 1);
    if (rank <= 1) {
        char want = rank == 0 ? 'q' : 'p';
        for (size_t i = 0; i < n; i++)
            if (rbuf[i] != want) {
                fprintf(stderr, "fmpl_pingpong: rank %d: byte %zu of a %zu-byte message is wrong\n",
                        rank, i, n);
                exit(1);
            }
    }
}

static int clampi(double v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : (int)v;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.min = 1, .max = 16u << 20, .mem = "malloc", .mode = "prepost"};
    if (bench_parse(argc, argv, &o,
                    "[--csv] [--quick] [--mem=malloc|heap] [--mode=prepost|blocking] "
                    "[--min=B] [--max=B] [--sizes=A,B,..] [--reps=N]") != 0)
        return 2;
    int heap = !strcmp(o.mem, "heap");
    if (!heap && strcmp(o.mem, "malloc")) {
        fprintf(stderr, "fmpl_pingpong: --mem must be malloc or heap\n");
        return 2;
    }
    blocking = !strcmp(o.mode, "blocking");
    if (!blocking && strcmp(o.mode, "prepost")) {
        fprintf(stderr, "fmpl_pingpong: --mode must be prepost or blocking\n");
        return 2;
    }
    if (o.min == 0 || o.max < o.min) {
        fprintf(stderr, "fmpl_pingpong: need 1 <= --min <= --max\n");
        return 2;
    }
    size_t sizes[64];
    int nsizes = bench_sizes(&o, sizes, 64);
    if (nsizes == 0) {
        fprintf(stderr, "fmpl_pingpong: no message size selected\n");
        return 2;
    }
    o.max = sizes[nsizes - 1]; /* the buffers' size */
    CHECK(fmpl_init(&argc, &argv));
    int size;
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &size));
    if (size < 2) {
        if (rank == 0)
            fprintf(stderr, "fmpl_pingpong: needs 2 ranks (fmplrun -n 2 %s)\n", argv[0]);
        fmpl_finalize();
        return 2;
    }

    char *sbuf, *rbuf;
    if (heap) {
        sbuf = fmpl_alloc_mem(o.max);
        rbuf = fmpl_alloc_mem(o.max);
        if (!sbuf || !rbuf) {
            fprintf(stderr,
                    "fmpl_pingpong: fmpl_alloc_mem(%zu) failed: the shared heap is too small for "
                    "two buffers, raise FMPL_SHM_HEAP\n",
                    o.max);
            return 1;
        }
    } else {
        void *a = NULL, *b = NULL;
        if (posix_memalign(&a, 4096, o.max) || posix_memalign(&b, 4096, o.max)) {
            fprintf(stderr, "fmpl_pingpong: out of memory\n");
            return 1;
        }
        sbuf = a;
        rbuf = b;
    }
    memset(sbuf, 1, o.max);
    memset(rbuf, 0, o.max);

    const char *impl = o.impl ? o.impl : "fmpl";
    const char *bench = blocking ? "pingpong_blocking" : "pingpong";
    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            printf("# FMPL %s native ping-pong, ranks 0 and 1 of %d, %s buffers\n",
                   FMPL_VERSION_STRING, size, heap ? "fmpl_alloc_mem (shared heap)" : "malloc'd");
            printf("# latency: one-way, %s; bandwidth: size / latency; stream: window of %d "
                   "isends + ack (osu_bw style); medians of %d repetitions; 1 GB = 1e9 B\n",
                   blocking ? "blocking send/recv (header round trip included)"
                            : "receives pre-posted with fmpl_irecv",
                   WINDOW, o.reps);
            printf("%10s %14s %16s %16s\n", "size", "latency [us]", "pp bw [GB/s]",
                   "stream [GB/s]");
        }
        fflush(stdout);
    }

    double *lat = calloc((size_t)o.reps, sizeof *lat), *bw = calloc((size_t)o.reps, sizeof *bw);
    if (!lat || !bw)
        return 1;
    double budget = o.quick ? 32.0 * (1 << 20) : 64.0 * (1 << 20); /* bytes per repetition */
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        verify(sbuf, rbuf, n);
        memset(sbuf, 1, n);
        int iters = clampi(budget / (double)n, 10, o.quick ? 5000 : 10000);
        pingpong(sbuf, rbuf, n, iters / 10 + 1); /* warm-up */
        for (int r = 0; r < o.reps; r++)
            lat[r] = pingpong(sbuf, rbuf, n, iters);

        int siters = clampi(budget * 4 / ((double)n * WINDOW), 1, o.quick ? 20 : 100);
        stream(sbuf, rbuf, n, 1); /* warm-up */
        for (int r = 0; r < o.reps; r++)
            bw[r] = stream(sbuf, rbuf, n, siters);

        if (rank == 0) {
            double l = bench_median(lat, o.reps), b = bench_median(bw, o.reps);
            if (o.csv) {
                printf("%s,%s,%s,2,%zu,latency_us,%.4f\n", impl, bench, o.mem, n, l * 1e6);
                printf("%s,%s,%s,2,%zu,bw_GBps,%.4f\n", impl, bench, o.mem, n, (double)n / l / 1e9);
                printf("%s,stream,%s,2,%zu,bw_GBps,%.4f\n", impl, o.mem, n, b / 1e9);
            } else {
                char sz[32];
                printf("%10s %14.3f %16.3f %16.3f\n", bench_size_str(n, sz, sizeof sz), l * 1e6,
                       (double)n / l / 1e9, b / 1e9);
            }
            fflush(stdout);
        }
    }
    free(lat);
    free(bw);
    if (heap) {
        CHECK(fmpl_free_mem(sbuf));
        CHECK(fmpl_free_mem(rbuf));
    } else {
        free(sbuf);
        free(rbuf);
    }
    CHECK(fmpl_finalize());
    return 0;
}
