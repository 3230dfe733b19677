/* mpi_coll — the MPI counterpart of fmpl_coll: MPI_Barrier, MPI_Bcast and MPI_Allreduce
 * (MPI_DOUBLE, MPI_SUM) at 8 B, 8 KiB and 1 MiB, in the same output format.
 *
 *   mpiexec -n 2 mpi_coll [--csv] [--quick] [--impl=NAME] [--reps=N] [--max=B]
 *
 * What is timed: each rank times a loop of `iters` back-to-back calls (root 0 for bcast)
 * and divides by iters; a repetition's figure is the slowest rank's; the table shows the
 * median over --reps repetitions; iters is calibrated to about 0.1 s per repetition
 * (0.04 s with --quick), identical on every rank. Results are checked once per size. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { OP_BARRIER, OP_BCAST, OP_ALLREDUCE };
static const char *op_name[] = {"barrier", "bcast", "allreduce"};
static int rank, nranks;

static void run(int op, double *buf, size_t n, int iters)
{
    int cnt = (int)(n / sizeof(double));
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_BARRIER: MPI_Barrier(MPI_COMM_WORLD); break;
        case OP_BCAST: MPI_Bcast(buf, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD); break;
        default: MPI_Allreduce(MPI_IN_PLACE, buf, cnt, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        }
    }
}

static double timed(int op, double *buf, size_t n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    run(op, buf, n, iters);
    double t = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
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
            fprintf(stderr, "mpi_coll: rank %d: %s of %zu bytes: element %zu is %g, not %g\n", rank,
                    op_name[op], n, i, buf[i], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
    memset(buf, 0, n);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.max = 1u << 20};
    if (bench_parse(argc, argv, &o, "[--csv] [--quick] [--impl=NAME] [--reps=N] [--max=B]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    static const size_t sizes[] = {8, 8192, 1u << 20};
    double *buf = malloc(1u << 20);
    double *reps = calloc((size_t)o.reps, sizeof *reps);
    if (!buf || !reps)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(buf, 0, 1u << 20);
    const char *impl = o.impl ? o.impl : "mpi";
    double target = o.quick ? 0.04 : 0.1;
    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            printf("# %s: MPI collectives, %d ranks; time per call = slowest rank's mean over a "
                   "loop, median of %d repetitions\n",
                   impl, nranks, o.reps);
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
                if (o.csv) {
                    printf("%s,%s,malloc,%d,%zu,time_us,%.4f\n", impl, op_name[op], nranks,
                           op == OP_BARRIER ? (size_t)0 : n, t);
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
    free(buf);
    MPI_Finalize();
    return 0;
}
