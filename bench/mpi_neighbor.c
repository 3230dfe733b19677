/* mpi_neighbor — MPI neighbourhood collectives on a periodic 2-D Cartesian communicator
 * (the halo-exchange pattern of stencil codes), in the output format of mpi_coll. One
 * source, built with our mpicc, MPICH's and Open MPI's.
 *
 *   mpiexec -n 4 mpi_neighbor [--csv] [--quick] [--impl=NAME] [--reps=N] [--min=B]
 *                             [--max=B] [--sizes=A,B,...]
 *
 * The grid: MPI_Dims_create(nranks, 2), periodic in both dimensions, no reordering, so
 * every rank has 4 neighbours (at 4 ranks, a 2x2 grid: each neighbour twice, on both
 * sides).
 * Operations, each at every size of the sweep (default 8 B .. 64 KiB, powers of 2):
 *   neighbor_allgather   MPI_Neighbor_allgather of size bytes (MPI_BYTE): each rank
 *                        sends one block to all 4 neighbours, receives 4 blocks
 *   neighbor_alltoall    MPI_Neighbor_alltoall of size bytes per neighbour: a block of
 *                        its own to each of the 4 neighbours, 4 blocks received
 * What is timed: as in mpi_coll, each rank times a loop of `iters` back-to-back calls and
 * divides by iters; a repetition's figure is the slowest rank's; the median over --reps
 * repetitions is reported; iters is calibrated to about 0.1 s per repetition (0.04 s
 * with --quick), identical on every rank. Every block received is checked once per
 * operation and size before timing, against what MPI-4.0 says each neighbour sends to
 * that block (MPI_Cart_shift's source and destination, the -1 block of a rank filled by
 * the +1 block of its neighbour). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

enum { OP_ALLGATHER, OP_ALLTOALL, OP_COUNT };
static const char *op_name[OP_COUNT] = {"neighbor_allgather", "neighbor_alltoall"};
enum { NBR = 4 }; /* neighbours of a rank on a 2-D grid */

static int rank, nranks;
static MPI_Comm cart;
static unsigned char *sbuf, *rbuf;

static void run(int op, size_t n, int iters)
{
    for (int i = 0; i < iters; i++) {
        if (op == OP_ALLGATHER)
            MPI_Neighbor_allgather(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, cart);
        else
            MPI_Neighbor_alltoall(sbuf, (int)n, MPI_BYTE, rbuf, (int)n, MPI_BYTE, cart);
    }
}

static double timed(int op, size_t n, int iters)
{
    MPI_Barrier(cart);
    double t0 = MPI_Wtime();
    run(op, n, iters);
    double t = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, cart);
    return t;
}

static int calibrate(int op, size_t n, double target)
{
    int iters = 1;
    double t = timed(op, n, iters);
    while (t * iters < target / 8 && iters < 100000) {
        iters *= 2;
        t = timed(op, n, iters);
    }
    double it = t > 0 ? target / t : 100000;
    return it < 3 ? 3 : it > 100000 ? 100000 : (int)it;
}

/* Byte i of the block rank src sends as its block j (allgather: j = 0). */
static unsigned char block_byte(int src, int j, size_t i)
{
    return (unsigned char)(src * 31 + j * 7 + i * 13 + 1);
}

/* One call on known contents; every received byte compared. */
static void check(int op, size_t n)
{
    int in[NBR];
    for (int d = 0; d < 2; d++)
        MPI_Cart_shift(cart, d, 1, &in[2 * d], &in[2 * d + 1]);
    for (int j = 0; j < (op == OP_ALLGATHER ? 1 : NBR); j++)
        for (size_t i = 0; i < n; i++)
            sbuf[(size_t)j * n + i] = block_byte(rank, j, i);
    memset(rbuf, 0xee, NBR * n);
    run(op, n, 1);
    for (int b = 0; b < NBR; b++) {
        /* block b (-1 or +1 of a dimension) comes from in[b], which sent it as its
         * opposite block */
        int j = op == OP_ALLGATHER ? 0 : b ^ 1;
        for (size_t i = 0; i < n; i++)
            if (rbuf[(size_t)b * n + i] != block_byte(in[b], j, i)) {
                fprintf(stderr,
                        "mpi_neighbor: rank %d: %s of %zu bytes: block %d byte %zu is %d, not %d\n",
                        rank, op_name[op], n, b, i, rbuf[(size_t)b * n + i],
                        block_byte(in[b], j, i));
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.min = 8, .max = 64u << 10};
    if (bench_parse(argc, argv, &o,
                    "[--csv] [--quick] [--impl=NAME] [--reps=N] [--min=B] [--max=B] "
                    "[--sizes=A,B,...]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    int dims[2] = {0, 0}, periods[2] = {1, 1};
    MPI_Dims_create(nranks, 2, dims);
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    size_t sizes[64];
    int nsizes = bench_sizes(&o, sizes, 64);
    size_t maxn = nsizes ? sizes[nsizes - 1] : 1;
    sbuf = malloc(NBR * maxn);
    rbuf = malloc(NBR * maxn);
    double *reps = calloc((size_t)o.reps, sizeof *reps);
    if (!sbuf || !rbuf || !reps)
        MPI_Abort(MPI_COMM_WORLD, 1);
    const char *impl = o.impl ? o.impl : "mpi";
    double target = o.quick ? 0.04 : 0.1;
    if (rank == 0) {
        if (o.csv)
            printf("impl,bench,mem,np,size,metric,value\n");
        else {
            printf(
                "# mpi_neighbor (%s): %d ranks on a periodic %dx%d grid, %d CPUs; median of %d\n",
                impl, nranks, dims[0], dims[1], bench_ncpus(), o.reps);
            bench_oversubscribed_note(nranks, o.csv);
            printf("%20s %10s %14s\n", "operation", "size", "time [us]");
        }
    }
    for (int op = 0; op < OP_COUNT; op++)
        for (int si = 0; si < nsizes; si++) {
            size_t n = sizes[si];
            check(op, n);
            int iters = calibrate(op, n, target);
            for (int r = 0; r < o.reps; r++)
                reps[r] = timed(op, n, iters);
            double t = bench_median(reps, o.reps) * 1e6;
            if (rank != 0)
                continue;
            if (o.csv) {
                printf("%s,%s,malloc,%d,%zu,time_us,%.4f\n", impl, op_name[op], nranks, n, t);
            } else {
                char s[32];
                printf("%20s %10s %14.3f\n", op_name[op], bench_size_str(n, s, sizeof s), t);
            }
            fflush(stdout);
        }
    free(sbuf);
    free(rbuf);
    free(reps);
    MPI_Comm_free(&cart);
    MPI_Finalize();
    return 0;
}
