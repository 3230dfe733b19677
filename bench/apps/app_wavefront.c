/* app_wavefront — a 2-D wavefront sweep, the communication pattern of Sweep3D and of the
 * LU benchmark's triangular solves: a pipeline of tiny messages along rank boundaries.
 *
 *   mpiexec -n 2 app_wavefront [--csv] [--quick] [--reps=N] [--impl=NAME]
 *                              [--nx=ROWS] [--ny=COLUMNS] [--iters=SWEEPS] [--tile=ROWS]
 *
 * The problem: a grid of nx rows by ny columns; a sweep updates every cell, in order of
 * rows and within a row from west to east, from its north and west neighbours (already
 * updated in this sweep) and its own old value:
 *     a[i][j] = (q[i][j] + 0.3 a[i-1][j] + 0.2 a[i][j]) * 0.5 + 0.25 a[i][j-1]
 * (7 flops, the west term last so that a row's dependency chain is one multiply-add;
 * row -1 and column -1 are fixed inflow boundaries, q a fixed source in [0, 1)). Each
 * run does --iters sweeps from a zero grid.
 * The decomposition: the columns are split into nranks blocks (the first ny % nranks ranks
 * get one column more). A rank works through its block in tiles of --tile rows (default
 * 1): it receives the west values of the tile's rows from its west neighbour (MPI_Recv of
 * --tile doubles: one double by default), updates the tile, and sends its east edge to the
 * east neighbour (MPI_Send): rank r starts a sweep r tiles after rank 0, and every tile of
 * every sweep crosses every boundary as one message of --tile doubles.
 * Measured: the time of the --iters sweeps (slowest rank; median of --reps runs after a
 * warm-up run); rate = nx * ny * iters / time in Mcells/s (cell updates per second;
 * GFlop/s = 7 * Mcells/s / 1000 in the summary).
 * Verification: rank 0 computes the same sweeps serially (the same row function over the
 * full width, so the values are bitwise the same), and every rank's block of the final
 * grid must match it bit for bit (a fingerprint per rank). The checksum is the exact sum
 * of the final grid (fixed point): the same with any library and any rank count. */
#include "app_util.h"

#define TAG 7
#define C_NORTH 0.3
#define C_OLD 0.2
#define C_SCALE 0.5
#define C_WEST 0.25

typedef struct wave {
    long nx, ny, iters, tile;
    long c0, w;     /* this rank's first global column and its number of columns */
    long ld;        /* w + 1: column 0 of a row is the west (ghost or boundary) value */
    double *a;      /* (nx + 1) rows of ld: row 0 is the north boundary */
    double *q;      /* nx rows of w sources */
    double *buf;    /* one tile's edge values */
    int west, east; /* neighbour ranks or MPI_PROC_NULL */
} wave_t;

/* The problem's fixed data, as functions of global indices. */
static double source(long i, long j, long ny)
{
    return app_uniform((uint64_t)(i * ny + j));
}
static double north_boundary(long j)
{
    return (double)(j % 8) / 8.0;
}
static double west_boundary(long i)
{
    return (double)((i * 5) % 11) / 11.0;
}

/* One row of a sweep: row[0..w-1] updated in place from above[0..w-1] (the row north of
 * it, already updated) and row[-1] (west of the first cell). Both the distributed sweep
 * and the serial reference use this function, so their values are bitwise equal. */
static void sweep_row(double *restrict row, const double *restrict above, const double *restrict q,
                      long w)
{
    double west = row[-1];
    for (long j = 0; j < w; j++) {
        double v = (q[j] + C_NORTH * above[j] + C_OLD * row[j]) * C_SCALE + C_WEST * west;
        row[j] = v;
        west = v;
    }
}

/* Fills a grid of nx rows, ld = w + 1 columns whose first computed column is global
 * column c0: boundaries, zero interior; west values only when c0 == 0 (else ghosts). */
static void grid_reset(double *a, long nx, long w, long c0)
{
    long ld = w + 1;
    for (long j = 0; j < ld; j++)
        a[j] = c0 + j - 1 >= 0 ? north_boundary(c0 + j - 1) : 0.0;
    for (long i = 1; i <= nx; i++) {
        a[i * ld] = c0 == 0 ? west_boundary(i - 1) : 0.0;
        memset(&a[i * ld + 1], 0, sizeof(double) * (size_t)w);
    }
}

static void wave_reset(void *ctx)
{
    wave_t *p = ctx;
    grid_reset(p->a, p->nx, p->w, p->c0);
}

static void wave_run(void *ctx)
{
    wave_t *p = ctx;
    long ld = p->ld;
    for (long it = 0; it < p->iters; it++) {
        for (long i0 = 0; i0 < p->nx; i0 += p->tile) {
            int nt = (int)(p->nx - i0 < p->tile ? p->nx - i0 : p->tile);
            if (p->west != MPI_PROC_NULL) {
                MPI_Recv(p->buf, nt, MPI_DOUBLE, p->west, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
                for (int t = 0; t < nt; t++)
                    p->a[(i0 + t + 1) * ld] = p->buf[t];
            }
            for (int t = 0; t < nt; t++)
                sweep_row(&p->a[(i0 + t + 1) * ld + 1], &p->a[(i0 + t) * ld + 1],
                          &p->q[(i0 + t) * p->w], p->w);
            if (p->east != MPI_PROC_NULL) {
                for (int t = 0; t < nt; t++)
                    p->buf[t] = p->a[(i0 + t + 1) * ld + p->w];
                MPI_Send(p->buf, nt, MPI_DOUBLE, p->east, TAG, MPI_COMM_WORLD);
            }
        }
    }
}

/* Fingerprint of columns [j0, j0 + w) of a grid (ld, global first column c0 of the
 * grid's column 1): position-dependent hash of every value's bits, summed. */
static uint64_t fingerprint(const double *a, long nx, long ld, long c0, long j0, long w, long ny)
{
    uint64_t f = 0;
    for (long i = 0; i < nx; i++)
        for (long j = j0; j < j0 + w; j++)
            f += app_hash(app_bits(a[(i + 1) * ld + 1 + (j - c0)]) ^
                          app_hash((uint64_t)(i * ny + j)));
    return f;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    app_opts_t o = {.prog = "app_wavefront"};
    app_param_t prm[] = {
        {"nx", 2048, 96, 1, "rows"},
        {"ny", 2048, 80, 1, "columns (at least the number of ranks)"},
        {"iters", 12, 3, 1, "sweeps per run"},
        {"tile", 1, 1, 1, "rows per message (doubles per message)"},
    };
    app_parse(argc, argv, &o, prm, 4);
    wave_t p = {
        .nx = prm[0].value, .ny = prm[1].value, .iters = prm[2].value, .tile = prm[3].value};
    if (p.ny < o.nranks) {
        if (o.rank == 0)
            fprintf(stderr, "%s: --ny=%ld is less than the %d ranks\n", o.prog, p.ny, o.nranks);
        MPI_Finalize();
        return 2;
    }
    p.c0 = app_split_lo(p.ny, o.nranks, o.rank);
    p.w = app_split_hi(p.ny, o.nranks, o.rank) - p.c0;
    p.ld = p.w + 1;
    p.west = o.rank > 0 ? o.rank - 1 : MPI_PROC_NULL;
    p.east = o.rank < o.nranks - 1 ? o.rank + 1 : MPI_PROC_NULL;
    p.a = malloc(sizeof(double) * (size_t)((p.nx + 1) * p.ld));
    p.q = malloc(sizeof(double) * (size_t)(p.nx * p.w));
    p.buf = malloc(sizeof(double) * (size_t)p.tile);
    if (!p.a || !p.q || !p.buf) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long i = 0; i < p.nx; i++)
        for (long j = 0; j < p.w; j++)
            p.q[i * p.w + j] = source(i, p.c0 + j, p.ny);

    app_describe(&o,
                 "2-D wavefront sweep, %ld x %ld cells, %ld sweeps per run, %ld row(s) "
                 "(%ld double(s)) per message, columns split over the ranks",
                 p.nx, p.ny, p.iters, p.tile, p.tile);
    app_kernel_t k = {wave_reset, wave_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    double cells = (double)p.nx * (double)p.ny * (double)p.iters;
    app_report_rate(&o, p.nx * p.ny, cells / 1e6, "Mcells/s", t, tmin, tmax);
    app_note(&o, "           %12.3f GFlop/s (7 flops per cell)", 7.0 * cells / t / 1e9);

    /* Verification against the serial sweeps on rank 0, block by block. */
    unsigned long long mine = fingerprint(p.a, p.nx, p.ld, p.c0, p.c0, p.w, p.ny), *all = NULL;
    if (o.rank == 0)
        all = malloc(sizeof *all * (size_t)o.nranks);
    MPI_Gather(&mine, 1, MPI_UNSIGNED_LONG_LONG, all, 1, MPI_UNSIGNED_LONG_LONG, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (o.rank == 0) {
        wave_t s = {.nx = p.nx, .ny = p.ny, .w = p.ny, .ld = p.ny + 1};
        s.a = malloc(sizeof(double) * (size_t)((s.nx + 1) * s.ld));
        s.q = malloc(sizeof(double) * (size_t)(s.nx * s.w));
        if (!s.a || !s.q) {
            fprintf(stderr, "%s: out of memory for the serial reference\n", o.prog);
            MPI_Abort(MPI_COMM_WORLD, 2);
        }
        for (long i = 0; i < s.nx; i++)
            for (long j = 0; j < s.w; j++)
                s.q[i * s.w + j] = source(i, j, s.ny);
        grid_reset(s.a, s.nx, s.w, 0);
        for (long it = 0; it < p.iters; it++)
            for (long i = 0; i < s.nx; i++)
                sweep_row(&s.a[(i + 1) * s.ld + 1], &s.a[i * s.ld + 1], &s.q[i * s.w], s.w);
        for (int r = 0; r < o.nranks; r++) {
            long j0 = app_split_lo(p.ny, o.nranks, r), w = app_split_hi(p.ny, o.nranks, r) - j0;
            if (fingerprint(s.a, s.nx, s.ld, 0, j0, w, s.ny) != all[r])
                ok = app_fail(&o, "columns %ld..%ld of rank %d differ from the serial sweep", j0,
                              j0 + w - 1, r);
        }
        free(s.a);
        free(s.q);
        free(all);
    }
    app_verdict(&o, ok, "distributed sweep against the serial one");
    app_note(&o, "verified   every value bitwise equal to the serial sweep on rank 0");

    int64_t sum = 0;
    for (long i = 1; i <= p.nx; i++)
        for (long j = 1; j <= p.w; j++)
            sum += app_fix(p.a[i * p.ld + j]);
    app_report_checksum(&o, p.nx * p.ny, app_fix_total(sum));
    free(p.a);
    free(p.q);
    free(p.buf);
    MPI_Finalize();
    return 0;
}
