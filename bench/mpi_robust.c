/* mpi_robust — the robustness benchmark's job (issue 13, item 3): small-message latency
 * repeated many times in one job, every repetition reported, so that a slow job, or a
 * slow stretch inside one, shows instead of hiding behind a best-of figure. One source
 * for every MPI, like mpi_pingpong: built with our mpicc (bin/mpi_robust.fmpl), MPICH's
 * (.mpich) and Open MPI's (.openmpi). bench/robust.sh runs many such jobs per library,
 * idle and under background load (bench/load.c), and compares the slowest and the median
 * job.
 *
 *   mpiexec -n 2 mpi_robust [--csv] [--impl=NAME] [--reps=N] [--iters=N] [--quick]
 *                           [--bench=pingpong,barrier,allreduce]
 *
 * Benchmarks (--bench picks them; default all three), each a fixed number of iterations
 * (--iters, default 20000; 2000 with --quick) per repetition, --reps repetitions
 * (default 10):
 *   pingpong   ranks 0 and 1: rank 0 {MPI_Send; MPI_Recv}, rank 1 {MPI_Recv; MPI_Send} of
 *              8 bytes (MPI_CHAR), iters round trips; one-way latency = rank 0's elapsed
 *              time / (2 iters). Each message carries the iteration number, checked on
 *              arrival.
 *   barrier    MPI_Barrier, iters calls; time per call = the slowest rank's elapsed time
 *              / iters.
 *   allreduce  MPI_Allreduce of one double, MPI_IN_PLACE, MPI_SUM, iters calls; time per
 *              call as for barrier. Rank r contributes r + 1 + i in call i; every result
 *              is checked.
 * A repetition times the three benchmarks in turn (pingpong, barrier, allreduce), so a
 * slow stretch of the job reaches all three; before the first repetition each runs
 * iters / 10 + 1 untimed iterations (a warm-up, which also checks the data). Wrong data
 * prints an error and aborts with a non-zero status. Any number of ranks >= 2 works;
 * the ping-pong uses ranks 0 and 1 only (robust.sh runs 2).
 *
 * Output (rank 0): with --csv the rows impl,bench,mem,np,size,metric,value of the other
 * benchmarks: for every repetition, in order, one row per benchmark with metric rep_us,
 * then after the last repetition one row per benchmark with metric median_us (the median
 * over the repetitions). bench is robust_pingpong (size 8), robust_barrier (size 0) or
 * robust_allreduce (size 8); mem is malloc; np the number of ranks. Rows are flushed
 * after every repetition, so a job killed part-way leaves the repetitions it finished.
 * Without --csv, a table of the same figures. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define TAG 1
#define NBENCH 3

enum { B_PINGPONG = 1, B_BARRIER = 2, B_ALLREDUCE = 4 };

static const char *const bench_names[NBENCH] = {"pingpong", "barrier", "allreduce"};
static const int bench_sizes_bytes[NBENCH] = {8, 0, 8};

static int rank, nranks;

static void fail(const char *what, double got, double want)
{
    fprintf(stderr, "mpi_robust: rank %d: %s: got %.17g, expected %.17g\n", rank, what, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One-way latency of iters 8-byte round trips between ranks 0 and 1, in seconds (rank 0's
 * figure; the other ranks return 0). */
static double pingpong(int iters)
{
    char sbuf[8], rbuf[8];
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters && rank <= 1; i++) {
        uint64_t want = (uint64_t)i, got;
        if (rank == 0) {
            memcpy(sbuf, &want, sizeof want);
            MPI_Send(sbuf, 8, MPI_CHAR, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(rbuf, 8, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else {
            MPI_Recv(rbuf, 8, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            memcpy(sbuf, rbuf, sizeof sbuf); /* echo it */
            MPI_Send(sbuf, 8, MPI_CHAR, 0, TAG, MPI_COMM_WORLD);
        }
        memcpy(&got, rbuf, sizeof got);
        if (got != want)
            fail("ping-pong message", (double)got, (double)want);
    }
    double t = MPI_Wtime() - t0;
    return rank == 0 ? t / (2.0 * iters) : 0;
}

/* The slowest rank's time per call over iters calls of a collective, on rank 0. */
static double slowest(double elapsed, int iters)
{
    double t = elapsed / iters, max = 0;
    MPI_Reduce(&t, &max, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
    return max;
}

static double barrier(int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++)
        MPI_Barrier(MPI_COMM_WORLD);
    return slowest(MPI_Wtime() - t0, iters);
}

static double allreduce(int iters)
{
    /* sum over ranks of (r + 1 + i) = nranks (nranks + 1) / 2 + nranks i: exact in a
     * double while below 2^53 */
    double base = 0.5 * nranks * (nranks + 1.0);
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        double v = rank + 1.0 + i;
        MPI_Allreduce(MPI_IN_PLACE, &v, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
        if (v != base + (double)nranks * i)
            fail("allreduce result", v, base + (double)nranks * i);
    }
    return slowest(MPI_Wtime() - t0, iters);
}

static double run(int b, int iters)
{
    switch (b) {
    case 0: return pingpong(iters);
    case 1: return barrier(iters);
    default: return allreduce(iters);
    }
}

/* A comma-separated list of benchmark names into a mask, or -1. */
static int bench_list(const char *s)
{
    int mask = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int i = 0; i < NBENCH; i++)
            if (strlen(bench_names[i]) == len && !strncmp(s, bench_names[i], len)) {
                mask |= 1 << i;
                found = 1;
            }
        if (!found)
            return -1;
        s += len;
        if (*s)
            s++;
    }
    return mask ? mask : -1;
}

#define USAGE                                                                                      \
    "[--csv] [--impl=NAME] [--reps=N] [--iters=N] [--quick] "                                      \
    "[--bench=pingpong,barrier,allreduce]"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);

    /* Our own options first; the rest go to bench_parse. */
    int benches = B_PINGPONG | B_BARRIER | B_ALLREDUCE, iters = 0, bad = 0;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && !strncmp(a, "--bench=", 8)) {
            bad |= (benches = bench_list(a + 8)) < 0;
        } else if (i > 0 && !strncmp(a, "--iters=", 8)) {
            char *end;
            long v = strtol(a + 8, &end, 10);
            bad |= end == a + 8 || *end || v < 1 || v > 1000000000;
            iters = (int)v;
        } else {
            /* bench_parse takes --reps=0 for its default: here it is a mistake */
            if (i > 0 && !strncmp(a, "--reps=", 7))
                bad |= atoi(a + 7) < 1;
            rest[nrest++] = argv[i];
        }
    }
    bench_opts_t o = {.reps = 10};
    if (!bad && bench_parse(nrest, rest, &o, USAGE))
        MPI_Abort(MPI_COMM_WORLD, 2);
    free(rest);
    /* The sweep options of the other programs mean nothing here. */
    bad |= o.min || o.max || o.mem || o.mode || o.sizes;
    if (bad || nranks < 2) {
        if (rank == 0)
            fprintf(stderr,
                    "mpi_robust: needs 2 ranks or more; bad --bench, --iters or --reps, or an "
                    "option it does not take\nusage: %s %s\n",
                    argv[0], USAGE);
        MPI_Finalize();
        return 2;
    }
    if (iters == 0)
        iters = o.quick ? 2000 : 20000;

    const char *impl = o.impl ? o.impl : "mpi";
    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            char lib[MPI_MAX_LIBRARY_VERSION_STRING] = "";
            int len = 0;
            MPI_Get_library_version(lib, &len);
            char *nl = strchr(lib, '\n');
            if (nl)
                *nl = 0;
            printf("# %s: robustness, %d ranks (%s)\n", impl, nranks, lib);
            printf("# %d repetitions of %d iterations each; pingpong: one-way latency of 8 B; "
                   "barrier, allreduce (one double): time per call, slowest rank\n",
                   o.reps, iters);
            printf("%10s", "rep");
            for (int b = 0; b < NBENCH; b++)
                if (benches & (1 << b))
                    printf(" %13s [us]", bench_names[b]);
            printf("\n");
        }
        fflush(stdout);
    }

    double *t = calloc((size_t)NBENCH * (size_t)o.reps, sizeof *t);
    if (!t)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int b = 0; b < NBENCH; b++)
        if (benches & (1 << b))
            run(b, iters / 10 + 1);
    for (int r = 0; r < o.reps; r++) {
        for (int b = 0; b < NBENCH; b++)
            if (benches & (1 << b))
                t[b * o.reps + r] = run(b, iters) * 1e6;
        if (rank != 0)
            continue;
        if (!o.csv)
            printf("%10d", r + 1);
        for (int b = 0; b < NBENCH; b++) {
            if (!(benches & (1 << b)))
                continue;
            if (o.csv)
                printf("%s,robust_%s,malloc,%d,%d,rep_us,%.4f\n", impl, bench_names[b], nranks,
                       bench_sizes_bytes[b], t[b * o.reps + r]);
            else
                printf(" %18.3f", t[b * o.reps + r]);
        }
        if (!o.csv)
            printf("\n");
        fflush(stdout);
    }
    if (rank == 0) {
        if (!o.csv)
            printf("%10s", "median");
        for (int b = 0; b < NBENCH; b++) {
            if (!(benches & (1 << b)))
                continue;
            double m = bench_median(t + b * o.reps, o.reps);
            if (o.csv)
                printf("%s,robust_%s,malloc,%d,%d,median_us,%.4f\n", impl, bench_names[b], nranks,
                       bench_sizes_bytes[b], m);
            else
                printf(" %18.3f", m);
        }
        if (!o.csv)
            printf("\n");
        fflush(stdout);
    }
    free(t);
    MPI_Finalize();
    return 0;
}
