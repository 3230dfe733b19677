/* mpi_hello — the MPI counterpart of fmpl_hello for the memory comparison: init, one
 * barrier, finalize; every rank prints its peak resident set (VmHWM) as a CSV row
 * (impl,rss,malloc,np,0,peak_rss_kib,KiB).
 *
 *   mpiexec -n 16 mpi_hello [--impl=NAME] */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdio.h>

#include "bench_util.h"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {0};
    if (bench_parse(argc, argv, &o, "[--impl=NAME]") != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    printf("%s,rss,malloc,%d,0,peak_rss_kib,%ld\n", o.impl ? o.impl : "mpi", size,
           bench_peak_rss_kib());
    return 0;
}
