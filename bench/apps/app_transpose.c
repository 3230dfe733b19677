/* app_transpose — a distributed matrix transpose through MPI_Alltoall, the all-to-all
 * core of parallel FFTs and of codes that switch the distributed dimension.
 *
 *   mpiexec -n 2 app_transpose [--csv] [--quick] [--reps=N] [--impl=NAME] [--n=N]
 *                              [--iters=N]
 *
 * The problem: an n x n matrix of doubles distributed by block rows, transposed --iters
 * times in a row (each transpose's result is the next one's input). With nranks ranks
 * every rank owns b = ceil(n / nranks) rows of a matrix padded with zeros to
 * nranks * b columns and rows, so all blocks have the same size (uneven splits: the last
 * ranks own padding rows); the rate counts the n x n elements only.
 * One transpose: each rank transposes each of its nranks blocks of b x b (the columns
 * destined to each rank) into a send buffer, in tiles of 32 x 32 (the local transpose
 * before the exchange); MPI_Alltoall of b * b doubles per rank pair; then the received
 * blocks are copied into the rank's rows (received block s holds the columns s b ..
 * (s + 1) b - 1 of each of its new rows, row by row).
 * Measured: the time of --iters transposes (slowest rank; median of --reps runs after a
 * warm-up run); rate = n * n * 8 bytes * iters / time in GB/s (1e9 B: matrix bytes
 * transposed per second; an MPI_Alltoall moves (nranks - 1) / nranks of them).
 * Verification: element (i, j) starts as i n + j (exact in a double), so after the
 * transposes every element of every rank, padding included, is known: all are checked.
 * The checksum is sum over the matrix of value * (i % 7 + 1), an exact integer. */
#include "app_util.h"

#define TILE 32

typedef struct transpose {
    long n, iters, b, cols; /* matrix size, transposes, rows per rank, padded columns */
    long row0;              /* first global row of this rank */
    int nranks;
    double *a;           /* b x cols: this rank's rows */
    double *send, *recv; /* nranks blocks of b x b */
} transpose_t;

/* Element (i, j) of the initial matrix (0 in the padding). */
static double initial(long i, long j, long n)
{
    return i < n && j < n ? (double)(i * n + j) : 0.0;
}

static void transpose_reset(void *ctx)
{
    transpose_t *p = ctx;
    for (long r = 0; r < p->b; r++)
        for (long j = 0; j < p->cols; j++)
            p->a[r * p->cols + j] = initial(p->row0 + r, j, p->n);
}

static void transpose_once(transpose_t *p)
{
    long b = p->b, cols = p->cols;
    /* send block s, element (c, r) = a[r][s b + c]: tiles of TILE x TILE */
    for (int s = 0; s < p->nranks; s++) {
        double *blk = &p->send[(long)s * b * b];
        const double *src = &p->a[(long)s * b];
        for (long r0 = 0; r0 < b; r0 += TILE)
            for (long c0 = 0; c0 < b; c0 += TILE) {
                long r1 = r0 + TILE < b ? r0 + TILE : b, c1 = c0 + TILE < b ? c0 + TILE : b;
                for (long r = r0; r < r1; r++)
                    for (long c = c0; c < c1; c++)
                        blk[c * b + r] = src[r * cols + c];
            }
    }
    MPI_Alltoall(p->send, (int)(b * b), MPI_DOUBLE, p->recv, (int)(b * b), MPI_DOUBLE,
                 MPI_COMM_WORLD);
    /* received block s: row c of it = columns s b .. s b + b - 1 of row c */
    for (int s = 0; s < p->nranks; s++)
        for (long c = 0; c < b; c++)
            memcpy(&p->a[c * cols + (long)s * b], &p->recv[((long)s * b + c) * b],
                   sizeof(double) * (size_t)b);
}

static void transpose_run(void *ctx)
{
    transpose_t *p = ctx;
    for (long it = 0; it < p->iters; it++)
        transpose_once(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    app_opts_t o = {.prog = "app_transpose"};
    app_param_t prm[] = {
        {"n", 2048, 100, 1, "matrix rows and columns"},
        {"iters", 4, 3, 1, "transposes per run"},
    };
    app_parse(argc, argv, &o, prm, 2);
    transpose_t p = {.n = prm[0].value, .iters = prm[1].value, .nranks = o.nranks};
    p.b = (p.n + o.nranks - 1) / o.nranks;
    p.cols = p.b * o.nranks;
    p.row0 = p.b * o.rank;
    if (p.b * p.b > 0x7fffffffL) {
        if (o.rank == 0)
            fprintf(stderr, "%s: blocks of %ld x %ld are too large for an int count\n", o.prog, p.b,
                    p.b);
        MPI_Finalize();
        return 2;
    }
    size_t bytes = sizeof(double) * (size_t)(p.b * p.cols);
    p.a = malloc(bytes);
    p.send = malloc(bytes);
    p.recv = malloc(bytes);
    if (!p.a || !p.send || !p.recv) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    app_describe(&o,
                 "transpose of a %ld x %ld matrix of doubles (%.1f MB) by MPI_Alltoall, %ld "
                 "rows per rank (%ld padded), %ld transposes per run",
                 p.n, p.n, 8e-6 * (double)p.n * (double)p.n, p.b, p.cols - p.n, p.iters);
    app_kernel_t k = {transpose_reset, transpose_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    app_report_rate(&o, p.n, 8e-9 * (double)p.n * (double)p.n * (double)p.iters, "GB/s", t, tmin,
                    tmax);

    /* Verification: every element, padding included. */
    int ok = 1, odd = (int)(p.iters % 2);
    int64_t sum = 0;
    for (long r = 0; r < p.b && ok; r++)
        for (long j = 0; j < p.cols; j++) {
            long i = p.row0 + r;
            double want = odd ? initial(j, i, p.n) : initial(i, j, p.n), got = p.a[r * p.cols + j];
            if (got != want) {
                ok = app_fail(&o, "element (%ld, %ld) is %.17g, expected %.17g", i, j, got, want);
                break;
            }
            sum += (int64_t)got * (i % 7 + 1);
        }
    app_verdict(&o, ok, "transposed matrix");
    app_note(&o, "verified   every element after %ld transposes", p.iters);
    app_report_checksum(&o, p.n, (double)app_int_total(sum));
    free(p.a);
    free(p.send);
    free(p.recv);
    MPI_Finalize();
    return 0;
}
