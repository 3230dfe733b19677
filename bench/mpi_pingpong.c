/* mpi_pingpong — the MPI counterpart of fmpl_pingpong, for the peers (MPICH, Open MPI)
 * and later for our own mpi.h: ping-pong latency and bandwidth, and streaming bandwidth,
 * from 1 B to 16 MiB, in the same output format (table, or CSV with --csv).
 *
 *   mpiexec -n 2 mpi_pingpong [--csv] [--quick] [--impl=NAME] [--min=B] [--max=B] [--sizes=A,B,..]
 * [--reps=N]
 *
 * What is timed (medians of --reps repetitions, after a warm-up):
 *  - latency (osu_latency style): rank 0 {MPI_Send; MPI_Recv}, rank 1 {MPI_Recv; MPI_Send},
 *    `iters` times; one-way latency = elapsed / (2 iters); bandwidth = size / latency;
 *  - streaming bandwidth (osu_bw style): rank 1 posts 64 MPI_Irecv into one buffer, rank 0
 *    64 MPI_Isend, both MPI_Waitall, then rank 1 sends a 1-byte ack; bandwidth =
 *    64 * size * iters / elapsed on rank 0. Buffers: page-aligned posix_memalign. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define WINDOW 64
#define TAG 1
#define TAG_ACK 2

static int rank;

static double pingpong(char *sbuf, char *rbuf, int n, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(sbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(rbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(rbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(sbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * iters);
}

static double stream(char *sbuf, char *rbuf, int n, int iters)
{
    MPI_Request req[WINDOW];
    MPI_Status st[WINDOW];
    char ack = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters; it++) {
        if (rank == 0) {
            for (int i = 0; i < WINDOW; i++)
                MPI_Isend(sbuf, n, MPI_CHAR, 1, TAG, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Recv(&ack, 1, MPI_CHAR, 1, TAG_ACK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            for (int i = 0; i < WINDOW; i++)
                MPI_Irecv(rbuf, n, MPI_CHAR, 0, TAG, MPI_COMM_WORLD, &req[i]);
            MPI_Waitall(WINDOW, req, st);
            MPI_Send(&ack, 1, MPI_CHAR, 0, TAG_ACK, MPI_COMM_WORLD);
        }
    }
    return (double)n * WINDOW * iters / (MPI_Wtime() - t0);
}

static void verify(char *sbuf, char *rbuf, int n)
{
    memset(sbuf, rank == 0 ? 'p' : 'q', (size_t)n);
    memset(rbuf, 0, (size_t)n);
    pingpong(sbuf, rbuf, n, 1);
    if (rank <= 1) {
        char want = rank == 0 ? 'q' : 'p';
        for (int i = 0; i < n; i++)
            if (rbuf[i] != want) {
                fprintf(stderr, "mpi_pingpong: rank %d: byte %d of a %d-byte message is wrong\n",
                        rank, i, n);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
}

static int clampi(double v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : (int)v;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.min = 1, .max = 16u << 20};
    if (bench_parse(
            argc, argv, &o,
            "[--csv] [--quick] [--impl=NAME] [--min=B] [--max=B] [--sizes=A,B,..] [--reps=N]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || o.min == 0 || o.max < o.min) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: needs 2 ranks and 1 <= --min <= --max\n");
        MPI_Finalize();
        return 2;
    }
    size_t sizes[64];
    int nsizes = bench_sizes(&o, sizes, 64);
    if (nsizes == 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    o.max = sizes[nsizes - 1]; /* the buffers' size */
    void *a = NULL, *b = NULL;
    if (posix_memalign(&a, 4096, o.max) || posix_memalign(&b, 4096, o.max))
        MPI_Abort(MPI_COMM_WORLD, 1);
    char *sbuf = a, *rbuf = b;
    memset(sbuf, 1, o.max);
    memset(rbuf, 0, o.max);

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
            printf("# %s: MPI ping-pong, ranks 0 and 1 of %d, malloc'd buffers (%s)\n", impl, size,
                   lib);
            printf("# latency: one-way, blocking MPI_Send/MPI_Recv; bandwidth: size / latency; "
                   "stream: window of %d isends + ack (osu_bw style); medians of %d "
                   "repetitions; 1 GB = 1e9 B\n",
                   WINDOW, o.reps);
            printf("%10s %14s %16s %16s\n", "size", "latency [us]", "pp bw [GB/s]",
                   "stream [GB/s]");
        }
        fflush(stdout);
    }
    double *lat = calloc((size_t)o.reps, sizeof *lat), *bw = calloc((size_t)o.reps, sizeof *bw);
    if (!lat || !bw)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double budget = o.quick ? 32.0 * (1 << 20) : 64.0 * (1 << 20);
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        int ni = (int)n;
        verify(sbuf, rbuf, ni);
        memset(sbuf, 1, n);
        int iters = clampi(budget / (double)n, 10, o.quick ? 5000 : 10000);
        pingpong(sbuf, rbuf, ni, iters / 10 + 1);
        for (int r = 0; r < o.reps; r++)
            lat[r] = pingpong(sbuf, rbuf, ni, iters);
        int siters = clampi(budget * 4 / ((double)n * WINDOW), 1, o.quick ? 20 : 100);
        stream(sbuf, rbuf, ni, 1);
        for (int r = 0; r < o.reps; r++)
            bw[r] = stream(sbuf, rbuf, ni, siters);
        if (rank == 0) {
            double l = bench_median(lat, o.reps), bwm = bench_median(bw, o.reps);
            if (o.csv) {
                printf("%s,pingpong,malloc,2,%zu,latency_us,%.4f\n", impl, n, l * 1e6);
                printf("%s,pingpong,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, (double)n / l / 1e9);
                printf("%s,stream,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, bwm / 1e9);
            } else {
                char sz[32];
                printf("%10s %14.3f %16.3f %16.3f\n", bench_size_str(n, sz, sizeof sz), l * 1e6,
                       (double)n / l / 1e9, bwm / 1e9);
            }
            fflush(stdout);
        }
    }
    free(lat);
    free(bw);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
