/* fmpl_coll — native FMPL collectives: barrier, bcast and allreduce (double, sum)
 * at 8 B, 8 KiB and 1 MiB.
 *
 *   fmplrun -n 2 fmpl_coll [--csv] [--quick] [--reps=N] [--mem=malloc|heap] [--max=B]
 *
 * What is timed: each rank times a loop of `iters` back-to-back calls (root 0 for bcast)
 * and divides by iters; the figure of a repetition is the largest of the ranks' times,
 * and the table shows the median over --reps repetitions. iters is calibrated so one
 * repetition lasts about 0.1 s (0.04 s with --quick), the same on every rank. Results
 * are checked once per size before timing. With more ranks than CPUs the run is
 * oversubscribed and the output says so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fmpl.h"

#define W FMPL_COMM_WORLD

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_coll: %s failed: %s\n", #call, fmpl_error_string(rc_));          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum { OP_BARRIER, OP_BCAST, OP_ALLREDUCE };
static const char *op_name[] = {"barrier", "bcast", "allreduce"};
static int rank, nranks;

static void run(int op, double *buf, size_t n, int iters)
{
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_BARRIER: CHECK(fmpl_barrier(W)); break;
        case OP_BCAST: CHECK(fmpl_bcast(buf, n, 0, W)); break;
        default: CHECK(fmpl_allreduce(buf, n / sizeof(double), FMPL_DOUBLE, FMPL_SUM, W, NULL));
        }
    }
}

/* Largest per-call time over the ranks, seconds. */
static double timed(int op, double *buf, size_t n, int iters)
{
    CHECK(fmpl_barrier(W));
    double t0 = fmpl_wtime();
    run(op, buf, n, iters);
    double t = (fmpl_wtime() - t0) / iters;
    CHECK(fmpl_allreduce(&t, 1, FMPL_DOUBLE, FMPL_MAX, W, NULL));
    return t;
}

static void check(int op, double *buf, size_t n)
{
    size_t cnt = n / sizeof(double);
    if (op == OP_BARRIER)
        return;
    for (size_t i = 0; i < cnt; i++)
        buf[i] = op == OP_BCAST ? (rank == 0 ? (double)i : -1.0) : (double)(rank + 1);
    run(op, buf, n, 1);
    double want_sum = (double)nranks * (nranks + 1) / 2;
    for (size_t i = 0; i < cnt; i++) {
        double want = op == OP_BCAST ? (double)i : want_sum;
        if (buf[i] != want) {
            fprintf(stderr, "fmpl_coll: rank %d: %s of %zu bytes: element %zu is %g, not %g\n",
                    rank, op_name[op], n, i, buf[i], want);
            exit(1);
        }
    }
    memset(buf, 0, n); /* time with zeros: sums stay finite */
}

int main(int argc, char **argv)
{
    bench_opts_t o = {.mem = "malloc", .max = 1u << 20};
    if (bench_parse(argc, argv, &o, "[--csv] [--quick] [--reps=N] [--mem=malloc|heap] [--max=B]"))
        return 2;
    int heap = !strcmp(o.mem, "heap");
    CHECK(fmpl_init(&argc, &argv));
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &nranks));

    static const size_t sizes[] = {8, 8192, 1u << 20};
    size_t maxn = 8;
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        if (sizes[i] <= o.max && sizes[i] > maxn)
            maxn = sizes[i];
    double *buf = heap ? fmpl_alloc_mem(maxn) : malloc(maxn);
    double *reps = calloc((size_t)o.reps, sizeof *reps);
    if (!buf || !reps) {
        fprintf(stderr, "fmpl_coll: cannot allocate %zu bytes (%s)\n", maxn, o.mem);
        return 1;
    }
    memset(buf, 0, maxn);
    const char *impl = o.impl ? o.impl : "fmpl";
    double target = o.quick ? 0.04 : 0.1;

    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            printf("# FMPL %s collectives, %d ranks, %s buffers; time per call = slowest rank's "
                   "mean over a loop, median of %d repetitions\n",
                   FMPL_VERSION_STRING, nranks, heap ? "shared-heap" : "malloc'd", o.reps);
            bench_oversubscribed_note(nranks, o.csv);
            printf("%10s %10s %14s\n", "operation", "size", "time [us]");
        }
        fflush(stdout);
    }
    for (int op = OP_BARRIER; op <= OP_ALLREDUCE; op++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            if (n > o.max)
                continue;
            if (op == OP_BARRIER && si > 0)
                break;
            check(op, buf, n);
            double est = timed(op, buf, n, 3);
            double it = est > 0 ? target / est : 10000;
            int iters = it < 3 ? 3 : it > 100000 ? 100000 : (int)it;
            for (int r = 0; r < o.reps; r++)
                reps[r] = timed(op, buf, n, iters);
            if (rank == 0) {
                double t = bench_median(reps, o.reps) * 1e6;
                size_t shown = op == OP_BARRIER ? 0 : n;
                if (o.csv) {
                    printf("%s,%s,%s,%d,%zu,time_us,%.4f\n", impl, op_name[op], o.mem, nranks,
                           shown, t);
                } else {
                    char sz[32];
                    printf("%10s %10s %14.3f\n", op_name[op],
                           op == OP_BARRIER ? "-" : bench_size_str(n, sz, sizeof sz), t);
                }
                fflush(stdout);
            }
        }
    }
    free(reps);
    if (heap)
        CHECK(fmpl_free_mem(buf));
    else
        free(buf);
    CHECK(fmpl_finalize());
    return 0;
}
