/* fmpl_prepost — seed 000's table 2: many pre-posted nonblocking receives.
 *
 *   fmplrun -n 2 fmpl_prepost [--csv] [--quick] [--reps=N] [--mode=K]   (K receives, 600)
 *
 * What is timed (medians over --reps rounds):
 *  - posting gap: rank 1 posts K nonblocking 4-byte receives from rank 0 (fmpl_irecv,
 *    matching-area indices 0..K-1, each into its own buffer) and times each call with the
 *    monotonic clock; the figure for the k-th post is the median over the rounds of the
 *    time of that call. An MPI library scans its posted-receive queue, so its k-th post
 *    grows with k; FMPL has no queue, so the 1st and the K-th should cost the same.
 *  - send latency with K receives outstanding: rank 0 has also posted K receives from
 *    rank 1; then for k = K-1 down to 0, rank 0 sends 4 bytes on index k and waits for
 *    rank 1's 4-byte reply on index k (rank 1 waits for k, then replies). The newest
 *    receive is matched first, so an implementation that searches would scan the whole
 *    queue. One-way latency = elapsed / (2 K). For reference, the same loop with only
 *    the next receive posted ahead on each side (at most 2 outstanding), as in
 *    fmpl_pingpong. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"
#include "fmpl.h"

#define W FMPL_COMM_WORLD

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_prepost: %s failed: %s\n", #call, fmpl_error_string(rc_));       \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static inline double now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int rank;

/* One round: rank 1 times each of its K posts (gap[k], ns); both sides then run the
 * ping-pong over the outstanding receives. Returns the one-way latency (rank 0). */
static double round_k(int k, int32_t *rbuf, double *gap)
{
    int peer = 1 - rank;
    int32_t sval = rank;
    if (rank == 1) {
        for (int i = 0; i < k; i++) {
            double t0 = now_ns();
            CHECK(fmpl_irecv(&rbuf[i], sizeof rbuf[i], peer, i, W));
            gap[i] = now_ns() - t0;
        }
    } else {
        for (int i = 0; i < k; i++)
            CHECK(fmpl_irecv(&rbuf[i], sizeof rbuf[i], peer, i, W));
    }
    CHECK(fmpl_barrier(W));
    double t0 = fmpl_wtime();
    for (int i = k - 1; i >= 0; i--) {
        if (rank == 0) {
            CHECK(fmpl_send(&sval, sizeof sval, peer, i, W));
            CHECK(fmpl_irecv_wait(peer, i, W, FMPL_STATUS_IGNORE));
        } else {
            CHECK(fmpl_irecv_wait(peer, i, W, FMPL_STATUS_IGNORE));
            CHECK(fmpl_send(&sval, sizeof sval, peer, i, W));
        }
    }
    double t = (fmpl_wtime() - t0) / (2.0 * k);
    for (int i = 0; i < k; i++)
        if (rbuf[i] != peer) {
            fprintf(stderr, "fmpl_prepost: rank %d: receive %d got %d, expected %d\n", rank, i,
                    (int)rbuf[i], peer);
            exit(1);
        }
    CHECK(fmpl_barrier(W));
    return t;
}

/* The reference: the same loop of n 4-byte round trips with only the next receive
 * posted ahead on each side (indices 0/1 alternating, as fmpl_pingpong does), so
 * at most 2 receives are outstanding per side. One-way latency. */
static double few(int n, int32_t *rbuf)
{
    int peer = 1 - rank;
    int32_t sval = rank;
    if (rank == 0) {
        CHECK(fmpl_irecv(&rbuf[0], sizeof rbuf[0], peer, 0, W));
    } else {
        CHECK(fmpl_irecv(&rbuf[0], sizeof rbuf[0], peer, 0, W));
        CHECK(fmpl_irecv(&rbuf[1], sizeof rbuf[1], peer, 1, W));
    }
    CHECK(fmpl_barrier(W));
    double t0 = fmpl_wtime();
    for (int i = 0; i < n; i++) {
        int m = i % 2;
        if (rank == 0) {
            CHECK(fmpl_send(&sval, sizeof sval, peer, m, W));
            if (i + 1 < n)
                CHECK(fmpl_irecv(&rbuf[1 - m], sizeof rbuf[0], peer, 1 - m, W));
            CHECK(fmpl_irecv_wait(peer, m, W, FMPL_STATUS_IGNORE));
        } else {
            CHECK(fmpl_irecv_wait(peer, m, W, FMPL_STATUS_IGNORE));
            CHECK(fmpl_send(&sval, sizeof sval, peer, m, W));
            if (i + 2 < n)
                CHECK(fmpl_irecv(&rbuf[m], sizeof rbuf[0], peer, m, W));
        }
    }
    double t = (fmpl_wtime() - t0) / (2.0 * n);
    CHECK(fmpl_barrier(W));
    return t;
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.mode = "600"};
    if (bench_parse(argc, argv, &o, "[--csv] [--quick] [--reps=N] [--mode=K]") != 0)
        return 2;
    int k = atoi(o.mode);
    if (k < 2) {
        fprintf(stderr, "fmpl_prepost: --mode=K needs K >= 2 receives\n");
        return 2;
    }
    if (!o.quick && o.reps < 21)
        o.reps = 21;
    CHECK(fmpl_init(&argc, &argv));
    int size;
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &size));
    if (size != 2) {
        if (rank == 0)
            fprintf(stderr, "fmpl_prepost: needs exactly 2 ranks (fmplrun -n 2 %s)\n", argv[0]);
        fmpl_finalize();
        return 2;
    }

    int32_t *rbuf = calloc((size_t)k, sizeof *rbuf);
    double *gaps = calloc((size_t)k * (size_t)o.reps, sizeof *gaps); /* [rep][k] */
    double *lat = calloc((size_t)o.reps, sizeof *lat), *lat1 = calloc((size_t)o.reps, sizeof *lat1);
    double *col = calloc((size_t)o.reps, sizeof *col);
    if (!rbuf || !gaps || !lat || !lat1 || !col)
        return 1;

    round_k(k, rbuf, gaps); /* warm-up: every matching area touched once */
    for (int r = 0; r < o.reps; r++) {
        lat[r] = round_k(k, rbuf, gaps + (size_t)r * (size_t)k);
        lat1[r] = few(k, rbuf);
    }

    /* Rank 1 owns the gaps: per-k medians over rounds, sent to rank 0 (first, last, mean). */
    double res[4] = {0};
    if (rank == 1) {
        double sum = 0;
        for (int i = 0; i < k; i++) {
            for (int r = 0; r < o.reps; r++)
                col[r] = gaps[(size_t)r * (size_t)k + (size_t)i];
            double m = bench_median(col, o.reps);
            if (i == 0)
                res[0] = m;
            if (i == k - 1)
                res[1] = m;
            sum += m;
        }
        res[2] = sum / k;
        /* the median over rounds of the time to post all k */
        for (int r = 0; r < o.reps; r++) {
            col[r] = 0;
            for (int i = 0; i < k; i++)
                col[r] += gaps[(size_t)r * (size_t)k + (size_t)i];
        }
        res[3] = bench_median(col, o.reps);
        CHECK(fmpl_send(res, sizeof res, 0, 0, W));
    } else {
        CHECK(fmpl_recv(res, sizeof res, 1, 0, W, FMPL_STATUS_IGNORE));
    }

    if (rank == 0) {
        double l = bench_median(lat, o.reps), l1 = bench_median(lat1, o.reps);
        const char *impl = o.impl ? o.impl : "fmpl";
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
            printf("%s,prepost,malloc,2,4,post_first_us,%.4f\n", impl, res[0] / 1e3);
            printf("%s,prepost,malloc,2,4,post_last_us,%.4f\n", impl, res[1] / 1e3);
            printf("%s,prepost,malloc,2,4,post_mean_us,%.4f\n", impl, res[2] / 1e3);
            printf("%s,prepost,malloc,2,4,post_all_us,%.4f\n", impl, res[3] / 1e3);
            printf("%s,prepost,malloc,2,4,latency_outstanding_us,%.4f\n", impl, l * 1e6);
            printf("%s,prepost,malloc,2,4,latency_few_us,%.4f\n", impl, l1 * 1e6);
        } else {
            printf("# FMPL %s, seed 000 table 2: %d pre-posted nonblocking 4-byte receives, "
                   "medians of %d rounds\n",
                   FMPL_VERSION_STRING, k, o.reps);
            printf("# (a post's time includes one clock read, ~20-30 ns)\n");
            printf("  %-44s %10.3f us\n", "posting gap, 1st receive", res[0] / 1e3);
            char label[64];
            snprintf(label, sizeof label, "posting gap, %dth receive", k);
            printf("  %-44s %10.3f us\n", label, res[1] / 1e3);
            printf("  %-44s %10.3f us\n", "posting gap, mean", res[2] / 1e3);
            snprintf(label, sizeof label, "send latency, %d receives outstanding", k);
            printf("  %-44s %10.3f us\n", label, l * 1e6);
            printf("  %-44s %10.3f us\n", "send latency, 2 receives outstanding", l1 * 1e6);
            printf("  (paper, SR8000: FMPL gap 7.03 us, latency 9.90 us; vendor MPI 370.1 / "
                   "945.8 us)\n");
        }
        fflush(stdout);
    }
    free(rbuf);
    free(gaps);
    free(lat);
    free(lat1);
    free(col);
    CHECK(fmpl_finalize());
    return 0;
}
