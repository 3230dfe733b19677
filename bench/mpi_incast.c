/* mpi_incast — receive memory under incast (seed 002): every rank but 0 posts K
 * nonblocking sends of `size` bytes to rank 0 while rank 0 computes, without any MPI
 * call, for --busy milliseconds; then rank 0 receives them all (MPI_ANY_SOURCE).
 * Builds against any MPI (ours, MPICH, Open MPI).
 *
 *   mpiexec -n 4 mpi_incast [--csv] [--impl=NAME] [--k=5000,20000] [--size=1024]
 *                           [--busy=1000]
 *
 * Reported per K (rank 0): the growth of rank 0's peak resident set from just before it
 * starts computing to the end of the draining (MiB: what a library kept for messages
 * nobody had asked for yet), and the time from the end of the computation to the last
 * receive (ms: the draining). The senders' MPI_Isend calls are timed too (µs per call,
 * slowest sender): a send start is local (MPI-4.0 3.7), it must not wait for rank 0.
 * Every payload is checked (sender, sequence number). K runs in increasing order in one
 * process, so a larger K's growth counts only what goes beyond the earlier peak.
 * CSV rows as the other MPI benchmarks: impl,incast,malloc,np,K,metric,value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench_util.h"

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Computes (no MPI call) for ms milliseconds. */
static double compute(int ms)
{
    double x = 1.0, end = now_s() + ms / 1000.0;
    while (now_s() < end)
        for (int i = 0; i < 1000; i++)
            x = x * 1.0000001 + 1e-9;
    return x;
}

static void fill(char *p, int size, int src, int seq)
{
    memset(p, (src * 131 + seq) & 0xff, (size_t)size);
    if (size >= 8) {
        memcpy(p, &src, sizeof src);
        memcpy(p + 4, &seq, sizeof seq);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    int csv = 0, size = 1024, busy = 1000;
    const char *impl = "mpi", *klist = "5000,20000";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strncmp(argv[i], "--impl=", 7))
            impl = argv[i] + 7;
        else if (!strncmp(argv[i], "--k=", 4))
            klist = argv[i] + 4;
        else if (!strncmp(argv[i], "--size=", 7))
            size = atoi(argv[i] + 7);
        else if (!strncmp(argv[i], "--busy=", 7))
            busy = atoi(argv[i] + 7);
        else {
            if (!rank)
                fprintf(stderr, "usage: mpi_incast [--csv] [--impl=NAME] [--k=LIST] [--size=B] "
                                "[--busy=MS]\n");
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
    }
    if (np < 2 || size < 8) {
        if (!rank)
            fprintf(stderr, "mpi_incast: needs 2 ranks or more and --size of 8 or more\n");
        MPI_Finalize();
        return np < 2 ? 0 : 2;
    }
    if (!csv && !rank)
        printf("# mpi_incast: %d senders x K sends of %d B to rank 0, which computes %d ms\n"
               "%8s %14s %12s %16s\n",
               np - 1, size, busy, "K", "RSS growth MiB", "drain ms", "Isend us (max)");
    char *kl = strdup(klist);
    for (char *tok = strtok(kl, ","); tok; tok = strtok(NULL, ",")) {
        int k = atoi(tok);
        double isend_us = 0, drain_ms = 0, grow_mib = 0;
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0) {
            char *buf = malloc((size_t)size);
            int *seen = calloc((size_t)np, sizeof *seen);
            long rss0 = bench_peak_rss_kib();
            volatile double sink = compute(busy);
            (void)sink;
            double t0 = now_s();
            for (long i = 0; i < (long)k * (np - 1); i++) {
                MPI_Status st;
                MPI_Recv(buf, size, MPI_BYTE, MPI_ANY_SOURCE, 7, MPI_COMM_WORLD, &st);
                int src, seq;
                memcpy(&src, buf, sizeof src);
                memcpy(&seq, buf + 4, sizeof seq);
                if (src != st.MPI_SOURCE || seq != seen[src]++) {
                    fprintf(stderr, "mpi_incast: message %d from %d out of order or damaged\n", seq,
                            st.MPI_SOURCE);
                    MPI_Abort(MPI_COMM_WORLD, 1);
                }
            }
            drain_ms = (now_s() - t0) * 1e3;
            grow_mib = (double)(bench_peak_rss_kib() - rss0) / 1024.0;
            free(seen);
            free(buf);
        } else {
            char *bufs = malloc((size_t)k * (size_t)size);
            MPI_Request *rq = malloc((size_t)k * sizeof *rq);
            for (int i = 0; i < k; i++)
                fill(bufs + (size_t)i * (size_t)size, size, rank, i);
            double t0 = now_s();
            for (int i = 0; i < k; i++)
                MPI_Isend(bufs + (size_t)i * (size_t)size, size, MPI_BYTE, 0, 7, MPI_COMM_WORLD,
                          &rq[i]);
            isend_us = (now_s() - t0) * 1e6 / k;
            MPI_Status *sts = malloc((size_t)k * sizeof *sts); /* (MPICH's header warns on
                                                                * MPI_STATUSES_IGNORE) */
            MPI_Waitall(k, rq, sts);
            free(sts);
            free(rq);
            free(bufs);
        }
        double worst = 0;
        MPI_Reduce(&isend_us, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
        if (rank == 0) {
            if (csv) {
                printf("%s,incast,malloc,%d,%d,rss_growth_MiB,%.2f\n", impl, np, k, grow_mib);
                printf("%s,incast,malloc,%d,%d,drain_ms,%.2f\n", impl, np, k, drain_ms);
                printf("%s,incast,malloc,%d,%d,isend_us,%.3f\n", impl, np, k, worst);
            } else {
                printf("%8d %14.2f %12.2f %16.3f\n", k, grow_mib, drain_ms, worst);
            }
            fflush(stdout);
        }
    }
    free(kl);
    MPI_Finalize();
    return 0;
}
