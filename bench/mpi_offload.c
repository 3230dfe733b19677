/* mpi_offload — does a started collective complete without its callers' CPUs? (seed 003;
 * issue 17's delayed-rank and overlap measurements). One source, built with our mpicc,
 * MPICH's and Open MPI's.
 *
 *   mpiexec -n 4 mpi_offload [--csv] [--quick] [--impl=NAME] [--reps=N] [--sizes=A,B,..]
 *                            [--delay=MS] [--mode=each]
 *
 * Operations (root 0 for the bcasts), at 8 B, 256 KiB and 1 MiB unless --sizes says:
 *   ibcast                 MPI_Ibcast of size bytes (MPI_BYTE), then MPI_Wait
 *   iallreduce             MPI_Iallreduce, size bytes of MPI_DOUBLE, MPI_SUM, separate buffers
 *   bcast_persistent       MPI_Bcast_init once, then MPI_Start + MPI_Wait
 *   allreduce_persistent   MPI_Allreduce_init once, then MPI_Start + MPI_Wait
 * (the persistent ones are "missing" for a library without them: bench_pcoll.h).
 *
 * For each operation and size, --reps repetitions (default 5, 3 with --quick; the median
 * reported) of three measures, every one after a barrier:
 *   once_us     one start + wait after a barrier, the slowest rank's time: what one
 *               collective takes on its own (not time_us: mpi_coll's loop of calls has that);
 *   delay_frac  delayed rank: every rank starts the collective, then rank k computes for
 *               --delay ms (default 50) without calling MPI and only then waits; the
 *               other ranks wait at once. The figure is the others' slowest completion
 *               time (from the start) as a fraction of the delay: near 0 when the
 *               collective moves on without rank k, near 1 when it waits for it. The
 *               median over repetitions for each k, then the worst k (rows with
 *               bench delayed_<op>; --mode=each adds each k's figure to the table); with
 *               one rank there are no others and no row;
 *   overlap_pct overlap, as the OSU benchmarks define it: start, compute for as long as
 *               the collective takes (once_us), wait; overlap = 100 * (1 - (total -
 *               compute) / once_us), clipped to 0..100; the worst rank's (rows with bench
 *               overlap_<op>).
 * "Computing" is a loop reading the clock (clock_gettime, not MPI_Wtime: no library
 * gets a chance to progress in it).
 *
 * Results are checked once per operation and size (every element at every rank). CSV
 * rows: impl,bench,mem,np,size,metric,value. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_pcoll.h"
#include "bench_util.h"

enum { OP_IBCAST, OP_IALLREDUCE, OP_BCAST_P, OP_ALLREDUCE_P, OP_COUNT };
static const char *op_name[OP_COUNT] = {"ibcast", "iallreduce", "bcast_persistent",
                                        "allreduce_persistent"};

static int rank, nranks;
static char *sbuf, *rbuf;
static MPI_Request preq = MPI_REQUEST_NULL; /* the persistent request of the current point */

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Computes for s seconds without calling MPI. */
static void compute(double s)
{
    double end = now() + s;
    while (now() < end)
        ;
}

static int is_persistent(int op)
{
    return op == OP_BCAST_P || op == OP_ALLREDUCE_P;
}

static int is_bcast(int op)
{
    return op == OP_IBCAST || op == OP_BCAST_P;
}

/* Makes the persistent request of op for n bytes; -1 when the library has none. */
static int persistent_init(int op, size_t n)
{
#if BENCH_PCOLL
    int count = (int)(n / sizeof(double));
    if (op == OP_BCAST_P)
        return bench_bcast_init(rbuf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &preq);
    return bench_allreduce_init(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &preq);
#else
    (void)op;
    (void)n;
    return -1;
#endif
}

/* Starts op on n bytes into *req (the persistent request: started, not freed). */
static void start(int op, size_t n, MPI_Request *req)
{
    int count = (int)(n / sizeof(double));
    switch (op) {
    case OP_IBCAST: MPI_Ibcast(rbuf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD, req); break;
    case OP_IALLREDUCE:
        MPI_Iallreduce(sbuf, rbuf, count, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, req);
        break;
    default:
        *req = preq;
        MPI_Start(req);
        break;
    }
}

/* Fills the buffers for a checked run: the bcast root's rbuf, every rank's sbuf. */
static void fill(int op, size_t n)
{
    double *s = (double *)sbuf;
    for (size_t i = 0; i < n / sizeof(double); i++)
        s[i] = (double)(rank + 1) * (double)(i % 1000 + 1);
    if (is_bcast(op))
        for (size_t i = 0; i < n; i++)
            rbuf[i] = rank == 0 ? (char)(i * 7 + 3) : 0;
    else
        memset(rbuf, 0, n);
}

static void verify(int op, size_t n)
{
    const double *r = (const double *)rbuf;
    double ranksum = (double)nranks * (nranks + 1) / 2;
    for (size_t i = 0; i < (is_bcast(op) ? n : n / sizeof(double)); i++) {
        int bad =
            is_bcast(op) ? rbuf[i] != (char)(i * 7 + 3) : r[i] != ranksum * (double)(i % 1000 + 1);
        if (bad) {
            fprintf(stderr, "mpi_offload: rank %d: %s of %zu B wrong at element %zu\n", rank,
                    op_name[op], n, i);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

/* One start + wait with rank `late` computing for `delay` s between them (late < 0: no
 * one). Returns this rank's time from the start to the end of its wait. */
static double run(int op, size_t n, int late, double delay)
{
    MPI_Request req;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = now();
    start(op, n, &req);
    if (rank == late)
        compute(delay);
    MPI_Wait(&req, MPI_STATUS_IGNORE);
    return now() - t0;
}

static double reduce_max(double v)
{
    double out;
    MPI_Allreduce(&v, &out, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return out;
}

static void row(const bench_opts_t *o, const char *impl, const char *bench, size_t n,
                const char *metric, double v, int missing)
{
    if (rank != 0)
        return;
    if (o->csv) {
        if (missing)
            printf("%s,%s,malloc,%d,%zu,%s,missing\n", impl, bench, nranks, n, metric);
        else
            printf("%s,%s,malloc,%d,%zu,%s,%.4f\n", impl, bench, nranks, n, metric, v);
    } else {
        char s[32];
        if (missing)
            printf("%28s %10s %12s %12s\n", bench, bench_size_str(n, s, sizeof s), metric,
                   "missing");
        else
            printf("%28s %10s %12s %12.3f\n", bench, bench_size_str(n, s, sizeof s), metric, v);
    }
    fflush(stdout);
}

static void measure(const bench_opts_t *o, const char *impl, int op, size_t n, double delay)
{
    char name[64];
    int reps = o->reps;
    double *v = calloc((size_t)reps, sizeof *v);
    if (!v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    fill(op, n);
    run(op, n, -1, 0);
    verify(op, n);
    /* the collective alone */
    for (int r = 0; r < reps; r++)
        v[r] = reduce_max(run(op, n, -1, 0));
    double t = bench_median(v, reps);
    row(o, impl, op_name[op], n, "once_us", t * 1e6, 0);
    /* delayed rank: the others' slowest time / delay, worst k */
    double worst = 0;
    for (int k = 0; k < nranks && nranks > 1; k++) {
        for (int r = 0; r < reps; r++) {
            double mine = run(op, n, k, delay);
            v[r] = reduce_max(rank == k ? 0 : mine) / delay;
        }
        double f = bench_median(v, reps);
        worst = f > worst ? f : worst;
        if (rank == 0 && !o->csv && o->mode && !strcmp(o->mode, "each"))
            printf("%28s %10s %12s %12.3f  (rank %d late)\n", "", "", "", f, k);
    }
    snprintf(name, sizeof name, "delayed_%s", op_name[op]);
    if (nranks > 1)
        row(o, impl, name, n, "delay_frac", worst, 0);
    /* overlap: compute for as long as the collective takes */
    for (int r = 0; r < reps; r++) {
        double total = run(op, n, rank, t);
        double ov = 100.0 * (1.0 - (total - t) / t);
        ov = ov < 0 ? 0 : ov > 100 ? 100 : ov;
        v[r] = -reduce_max(-ov); /* the worst rank's */
    }
    snprintf(name, sizeof name, "overlap_%s", op_name[op]);
    row(o, impl, name, n, "overlap_pct", bench_median(v, reps), 0);
    free(v);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    /* --delay=MS is ours; the rest are the common options */
    double delay = 0.05;
    int nargs = 0, reps_given = 0;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--delay=", 8))
            delay = atof(argv[i] + 8) * 1e-3;
        else
            argv[++nargs] = argv[i];
        reps_given |= !strncmp(argv[i], "--reps=", 7);
    }
    bench_opts_t o = {.max = 1u << 30, .sizes = "8,256K,1M"};
    if (bench_parse(nargs + 1, argv, &o,
                    "[--csv] [--quick] [--impl=NAME] [--reps=N] [--sizes=A,B,..] [--delay=MS] "
                    "[--mode=each]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (!(delay > 0)) {
        if (rank == 0)
            fprintf(stderr, "mpi_offload: --delay must be a positive number of ms\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (!reps_given) /* each delayed repetition costs nranks x delay */
        o.reps = o.quick ? 3 : 5;
    size_t sizes[16];
    int nsizes = bench_sizes(&o, sizes, 16);
    size_t maxn = 8;
    for (int i = 0; i < nsizes; i++)
        maxn = sizes[i] > maxn ? sizes[i] : maxn;
    sbuf = malloc(maxn);
    rbuf = malloc(maxn);
    if (!sbuf || !rbuf)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const char *impl = o.impl ? o.impl : "mpi";
    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            printf("# %s: collectives without their callers, %d ranks; delay %.0f ms; medians "
                   "of %d repetitions\n",
                   impl, nranks, delay * 1e3, o.reps);
            bench_oversubscribed_note(nranks, o.csv);
            printf("%28s %10s %12s %12s\n", "operation", "size", "metric", "value");
        }
        fflush(stdout);
    }
    for (int op = 0; op < OP_COUNT; op++)
        for (int i = 0; i < nsizes; i++) {
            size_t n = sizes[i];
            if (is_persistent(op) && persistent_init(op, n) != MPI_SUCCESS) {
                row(&o, impl, op_name[op], n, "once_us", 0, 1);
                continue;
            }
            measure(&o, impl, op, n, delay);
            if (preq != MPI_REQUEST_NULL)
                MPI_Request_free(&preq);
        }
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
