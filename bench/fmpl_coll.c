/* fmpl_coll — native FMPL collectives: barrier, bcast and allreduce (double, sum)
 * at 8 B, 8 KiB and 1 MiB; on request also reduce (double, sum, root 0), allgather
 * (the coll layer's, on FMPL_COMM_WORLD's group: the native API has none; size = the
 * block of one rank), the persistent bcast and allreduce (bcast_persistent,
 * allreduce_persistent: fmpl_bcast_init / fmpl_allreduce_init once per size, then
 * fmpl_start + fmpl_wait per call), and other sizes.
 *
 *   fmplrun -n 2 fmpl_coll [--csv] [--quick] [--reps=N] [--mem=malloc|heap] [--max=B]
 *                          [--mode=OP,OP,..] [--sizes=A,B,..]
 *
 * --mode: the operations, out of barrier, bcast, reduce, allreduce, allgather,
 * bcast_persistent, allreduce_persistent (default barrier,bcast,allreduce); --sizes: the message
 * sizes (default 8,8K,1M; K/M suffixes). What is timed: each rank times a loop of `iters`
 * back-to-back calls (root 0 for bcast and reduce) and divides by iters; the figure of a repetition
 * is the largest of the ranks' times, and the table shows the median over --reps repetitions. iters
 * is calibrated so one repetition lasts about 0.1 s (0.04 s with --quick), the same on every rank.
 * Results are checked once per size before timing. With more ranks than CPUs the run is
 * oversubscribed and the output says so. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fmpl.h"
#include "runtime/runtime.h" /* allgather: coll_allgather on the world's group */

#define W FMPL_COMM_WORLD

#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_coll: %s failed: %s\n", #call, fmpl_error_string(rc_));          \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

enum {
    OP_BARRIER,
    OP_BCAST,
    OP_REDUCE,
    OP_ALLREDUCE,
    OP_ALLGATHER,
    OP_PBCAST,
    OP_PALLREDUCE,
    NOPS
};
static const char *op_name[] = {"barrier",
                                "bcast",
                                "reduce",
                                "allreduce",
                                "allgather",
                                "bcast_persistent",
                                "allreduce_persistent"};
static int rank, nranks;

/* The persistent request of the last (op, n) asked for, made on first use. */
static fmpl_request persistent(int op, double *buf, size_t n)
{
    static fmpl_request req = FMPL_REQUEST_NULL;
    static int req_op;
    static size_t req_n;
    if (req != FMPL_REQUEST_NULL && req_op == op && req_n == n)
        return req;
    if (req != FMPL_REQUEST_NULL)
        CHECK(fmpl_request_free(&req));
    if (op == OP_PBCAST)
        CHECK(fmpl_bcast_init(buf, n, 0, W, &req));
    else
        CHECK(fmpl_allreduce_init(buf, n / sizeof(double), FMPL_DOUBLE, FMPL_SUM, W, &req));
    req_op = op;
    req_n = n;
    return req;
}

static void run(int op, double *buf, size_t n, int iters)
{
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_BARRIER: CHECK(fmpl_barrier(W)); break;
        case OP_BCAST: CHECK(fmpl_bcast(buf, n, 0, W)); break;
        case OP_REDUCE:
            CHECK(fmpl_reduce(buf, n / sizeof(double), FMPL_DOUBLE, FMPL_SUM, 0, W, NULL));
            break;
        case OP_ALLREDUCE:
            CHECK(fmpl_allreduce(buf, n / sizeof(double), FMPL_DOUBLE, FMPL_SUM, W, NULL));
            break;
        case OP_ALLGATHER: CHECK(coll_allgather(runtime_world_group(), NULL, buf, n)); break;
        default: {
            fmpl_request r = persistent(op, buf, n);
            CHECK(fmpl_start(r));
            CHECK(fmpl_wait(r));
        }
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
    int bcast = op == OP_BCAST || op == OP_PBCAST;
    if (op == OP_BARRIER)
        return;
    if (op == OP_ALLGATHER) { /* block r: doubles r*cnt + i */
        for (size_t i = 0; i < cnt * (size_t)nranks; i++)
            buf[i] = i / cnt == (size_t)rank ? (double)i : -1.0;
    } else {
        for (size_t i = 0; i < cnt; i++)
            buf[i] = bcast ? (rank == 0 ? (double)i : -1.0) : (double)(rank + 1);
    }
    run(op, buf, n, 1);
    double want_sum = (double)nranks * (nranks + 1) / 2;
    if (op == OP_REDUCE && rank != 0)
        want_sum = rank + 1; /* unchanged */
    for (size_t i = 0; i < (op == OP_ALLGATHER ? cnt * (size_t)nranks : cnt); i++) {
        double want = bcast || op == OP_ALLGATHER ? (double)i : want_sum;
        if (buf[i] != want) {
            fprintf(stderr, "fmpl_coll: rank %d: %s of %zu bytes: element %zu is %g, not %g\n",
                    rank, op_name[op], n, i, buf[i], want);
            exit(1);
        }
    }
    memset(buf, 0, op == OP_ALLGATHER ? n * (size_t)nranks : n); /* zeros: sums stay finite */
}

int main(int argc, char **argv)
{
    bench_opts_t o = {
        .mem = "malloc", .max = SIZE_MAX, .sizes = "8,8K,1M", .mode = "barrier,bcast,allreduce"};
    if (bench_parse(argc, argv, &o,
                    "[--csv] [--quick] [--reps=N] [--mem=malloc|heap] [--max=B] "
                    "[--mode=OP,OP,..] [--sizes=A,B,..]"))
        return 2;
    int heap = !strcmp(o.mem, "heap");
    int want_op[NOPS] = {0};
    for (const char *m = o.mode; m && *m;) {
        size_t len = strcspn(m, ",");
        int found = 0;
        for (int op = 0; op < NOPS; op++)
            if (strlen(op_name[op]) == len && !strncmp(m, op_name[op], len))
                want_op[op] = found = 1;
        if (!found) {
            fprintf(stderr, "fmpl_coll: unknown operation '%.*s' in --mode\n", (int)len, m);
            return 2;
        }
        m += len + (m[len] == ',');
    }
    CHECK(fmpl_init(&argc, &argv));
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &nranks));

    size_t sizes[32];
    int nsizes = bench_sizes(&o, sizes, 32);
    size_t maxn = 8;
    for (int i = 0; i < nsizes; i++)
        if (sizes[i] > maxn)
            maxn = sizes[i];
    if (want_op[OP_ALLGATHER])
        maxn *= (size_t)nranks;
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
            printf("%22s %10s %14s\n", "operation", "size", "time [us]");
        }
        fflush(stdout);
    }
    for (int op = 0; op < NOPS; op++) {
        if (!want_op[op])
            continue;
        for (int si = 0; si < nsizes; si++) {
            size_t n = sizes[si];
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
                    printf("%22s %10s %14.3f\n", op_name[op],
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
