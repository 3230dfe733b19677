/* mpi_allpeers — memory per process when every rank has talked to every other (the paper's
 * table 3 for the udp transport): init, a few 8-byte messages to and from every peer
 * (MPI_Isend/MPI_Irecv, contents checked), a barrier, finalize; every rank prints its peak
 * resident set (VmHWM) as a CSV row (impl,rss_allpeers,malloc,np,0,peak_rss_kib,KiB).
 * One source for every MPI (bin/mpi_allpeers.fmpl, .mpich, .openmpi); bench/udp_compare.sh
 * runs it over our udp transport and Open MPI's TCP path.
 *
 *   mpiexec -n 32 mpi_allpeers [--impl=NAME] [--reps=N]   (N messages per peer, default 4) */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.reps = 4};
    if (bench_parse(argc, argv, &o, "[--impl=NAME] [--reps=N]") != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    uint64_t *out = calloc((size_t)size, sizeof *out), *in = calloc((size_t)size, sizeof *in);
    MPI_Request *rq = calloc(2 * (size_t)size, sizeof *rq);
    MPI_Status *st = calloc(2 * (size_t)size, sizeof *st);
    if (!out || !in || !rq || !st)
        MPI_Abort(MPI_COMM_WORLD, 1);
    int bad = 0;
    for (int it = 0; it < o.reps; it++) {
        int n = 0;
        for (int p = 0; p < size; p++) {
            if (p == rank)
                continue;
            out[p] = (uint64_t)it << 40 | (uint64_t)rank << 20 | (uint64_t)p;
            MPI_Irecv(&in[p], 1, MPI_UINT64_T, p, it, MPI_COMM_WORLD, &rq[n++]);
            MPI_Isend(&out[p], 1, MPI_UINT64_T, p, it, MPI_COMM_WORLD, &rq[n++]);
        }
        MPI_Waitall(n, rq, st);
        for (int p = 0; p < size; p++)
            if (p != rank && in[p] != ((uint64_t)it << 40 | (uint64_t)p << 20 | (uint64_t)rank))
                bad++;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    free(out);
    free(in);
    free(rq);
    free(st);
    MPI_Finalize();
    if (bad) {
        fprintf(stderr, "mpi_allpeers: rank %d received %d wrong messages\n", rank, bad);
        return 1;
    }
    printf("%s,rss_allpeers,malloc,%d,0,peak_rss_kib,%ld\n", o.impl ? o.impl : "mpi", size,
           bench_peak_rss_kib());
    return 0;
}
