/* mpi_coll_large — large blocking collectives at every size from 64 KiB to 4 MiB (mpi_coll
 * has 8 B, 8 KiB and 1 MiB only): MPI_Bcast of size bytes from rank 0, MPI_Allreduce of
 * size bytes of MPI_DOUBLE with MPI_SUM, MPI_Allgather of size / nranks bytes a rank. One
 * source, built with our mpicc, MPICH's and Open MPI's.
 *
 *   mpiexec -n N mpi_coll_large [--csv] [--impl=NAME] [--reps=N] [--sizes=A,B,..]
 *
 * Each point: --reps repetitions (default 7) of 20 calls (200 below 1 MiB) after a
 * barrier; a repetition's figure is the time per call, the point's the median over the
 * repetitions, and the row the slowest rank's. The results are checked once per point.
 * CSV rows: impl,bench,mem,np,size,metric,value (metric time_us). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { BCAST, ALLREDUCE, ALLGATHER, NOPS };
static const char *const op_name[NOPS] = {"bcast", "allreduce", "allgather"};
static int rank, nranks;

static void call(int op, char *a, char *b, size_t n)
{
    if (op == BCAST)
        MPI_Bcast(a, (int)n, MPI_BYTE, 0, MPI_COMM_WORLD);
    else if (op == ALLREDUCE)
        MPI_Allreduce(a, b, (int)(n / 8), MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else
        MPI_Allgather(a, (int)(n / (size_t)nranks), MPI_BYTE, b, (int)(n / (size_t)nranks),
                      MPI_BYTE, MPI_COMM_WORLD);
}

/* Fills the inputs for op at n bytes, runs it once and checks every byte of the result. */
static void check(int op, char *a, char *b, size_t n)
{
    size_t block = n / (size_t)nranks;
    double *d = (double *)a, *r = (double *)b;
    for (size_t i = 0; i < n / 8; i++)
        d[i] = op == BCAST && rank ? -1.0 : (double)(rank + 1) * (double)(i % 97);
    if (op == ALLGATHER)
        for (size_t i = 0; i < block; i++)
            a[i] = (char)(rank * 31 + (int)(i % 113));
    call(op, a, b, n);
    int bad = 0;
    for (size_t i = 0; i < n / 8 && op != ALLGATHER; i++) {
        double want =
            op == BCAST ? (double)(i % 97) : (double)nranks * (nranks + 1) / 2 * (double)(i % 97);
        bad |= (op == BCAST ? d[i] : r[i]) != want;
    }
    for (size_t i = 0; i < block * (size_t)nranks && op == ALLGATHER; i++)
        bad |= b[i] != (char)((int)(i / block) * 31 + (int)(i % block % 113));
    if (bad) {
        fprintf(stderr, "mpi_coll_large: wrong %s result at %zu bytes on rank %d\n", op_name[op], n,
                rank);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    bench_opts_t o = {0};
    o.max = 4u << 20;
    if (bench_parse(argc, argv, &o, "[--csv] [--impl=NAME] [--reps=N] [--sizes=A,B,..]") != 0)
        MPI_Abort(MPI_COMM_WORLD, 2);
    if (!o.sizes)
        o.sizes = "64K,256K,1M,4M";
    size_t sizes[32];
    int ns = bench_sizes(&o, sizes, 32);
    char *a = malloc(o.max), *b = malloc(o.max);
    double *v = calloc((size_t)o.reps, sizeof *v);
    if (!a || !b || !v)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const char *impl = o.impl ? o.impl : "mpi";
    if (!rank && !o.csv)
        printf("# %d ranks; time per call, slowest rank's median of %d repetitions\n", nranks,
               o.reps);
    for (int op = 0; op < NOPS; op++)
        for (int s = 0; s < ns; s++) {
            size_t n = sizes[s] / 8 / (size_t)nranks * 8 * (size_t)nranks;
            int iters = n >= (1u << 20) ? 20 : 200;
            check(op, a, b, n);
            for (int r = 0; r < o.reps; r++) {
                MPI_Barrier(MPI_COMM_WORLD);
                double t0 = MPI_Wtime();
                for (int i = 0; i < iters; i++)
                    call(op, a, b, n);
                v[r] = (MPI_Wtime() - t0) / iters * 1e6;
            }
            double m = bench_median(v, o.reps), worst;
            MPI_Reduce(&m, &worst, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
            char str[32];
            if (rank)
                continue;
            if (o.csv)
                printf("%s,%s,malloc,%d,%zu,time_us,%.4f\n", impl, op_name[op], nranks, sizes[s],
                       worst);
            else
                printf("%10s %10s %12.2f us\n", op_name[op],
                       bench_size_str(sizes[s], str, sizeof str), worst);
        }
    free(a);
    free(b);
    free(v);
    MPI_Finalize();
    return 0;
}
