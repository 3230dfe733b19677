/* fmpl_hello — a trivial program for the memory comparison: init, one barrier,
 * finalize; every rank prints its peak resident set (VmHWM) as a CSV row
 * (impl,rss,malloc,np,0,peak_rss_kib,KiB).
 *
 *   fmplrun -n 16 fmpl_hello [--impl=NAME] */
#include <stdio.h>
#include <string.h>

#include "bench_util.h"
#include "fmpl.h"

int main(int argc, char **argv)
{
    bench_opts_t o = {0};
    if (bench_parse(argc, argv, &o, "[--impl=NAME]") != 0)
        return 2;
    int rank, size;
    if (fmpl_init(&argc, &argv) != FMPL_SUCCESS || fmpl_comm_rank(FMPL_COMM_WORLD, &rank) ||
        fmpl_comm_size(FMPL_COMM_WORLD, &size) || fmpl_barrier(FMPL_COMM_WORLD)) {
        fprintf(stderr, "fmpl_hello: start-up failed\n");
        return 1;
    }
    if (fmpl_finalize() != FMPL_SUCCESS)
        return 1;
    (void)rank;
    printf("%s,rss,malloc,%d,0,peak_rss_kib,%ld\n", o.impl ? o.impl : "fmpl", size,
           bench_peak_rss_kib());
    return 0;
}
