/* fmpl_blacs — seed 000's BLACS use of the native API: general-matrix sends and receives
 * (BLACS' dgesd2d / dgerv2d: an m x n sub-matrix of a column-major matrix with leading
 * dimension lda) between ranks 0 and 1, with fmpl_send_2d / fmpl_recv_2d against the same
 * through a pack into a contiguous buffer, a plain send, and an unpack.
 *
 *   fmplrun -n 2 fmpl_blacs [--csv] [--quick] [--reps=N] [--m=LIST] [--n=LIST] [--z=LIST]
 *
 * The shapes are those of mpi_pingpong --submatrix (seed 004's probe): the 4096 x k
 * corner of a 4096 x (z+1) row-major matrix of doubles is, column-major, the m x n =
 * k x 4096 sub-matrix of a matrix with lda = z + 1 (defaults: m 1,16,64, n 4096,
 * z 256,1024,4096).
 * Each figure is the one-way time of a ping-pong of that sub-matrix (both sides use the
 * same lda), median of --reps repetitions; every repetition's data is checked once.
 * CSV rows: impl,bench,mem,np,size,metric,value with bench "blacs_2d" or "blacs_pack",
 * size "m<M>_n<N>_z<Z>" and metric latency_us. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"
#include "fmpl.h"

#define W FMPL_COMM_WORLD
#define CHECK(call)                                                                                \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        if (rc_ != FMPL_SUCCESS) {                                                                 \
            fprintf(stderr, "fmpl_blacs: %s failed: %s\n", #call, fmpl_error_string(rc_));         \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int rank;

/* BLACS' general-matrix send and receive of the m x n sub-matrix at a (leading dimension
 * lda, in elements) as one 2-D transfer. */
static void gesd2d(const double *a, size_t m, size_t n, size_t lda, int dst)
{
    fmpl_layout l = {n, m * sizeof(double), lda * sizeof(double)};
    CHECK(fmpl_send_2d(a, &l, dst, 0, W));
}
static void gerv2d(double *a, size_t m, size_t n, size_t lda, int src)
{
    fmpl_layout l = {n, m * sizeof(double), lda * sizeof(double)};
    CHECK(fmpl_recv_2d(a, &l, src, 0, W, FMPL_STATUS_IGNORE));
}

/* The same through a contiguous copy on each side. */
static void pack_send(const double *a, size_t m, size_t n, size_t lda, double *tmp, int dst)
{
    for (size_t j = 0; j < n; j++)
        memcpy(tmp + j * m, a + j * lda, m * sizeof(double));
    CHECK(fmpl_send(tmp, m * n * sizeof(double), dst, 1, W));
}
static void recv_unpack(double *a, size_t m, size_t n, size_t lda, double *tmp, int src)
{
    CHECK(fmpl_recv(tmp, m * n * sizeof(double), src, 1, W, FMPL_STATUS_IGNORE));
    for (size_t j = 0; j < n; j++)
        memcpy(a + j * lda, tmp + j * m, m * sizeof(double));
}

static double pingpong(int packed, double *a, size_t m, size_t n, size_t lda, double *tmp,
                       int iters)
{
    CHECK(fmpl_barrier(W));
    double t0 = fmpl_wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            packed ? pack_send(a, m, n, lda, tmp, 1) : gesd2d(a, m, n, lda, 1);
            packed ? recv_unpack(a, m, n, lda, tmp, 1) : gerv2d(a, m, n, lda, 1);
        } else if (rank == 1) {
            packed ? recv_unpack(a, m, n, lda, tmp, 0) : gerv2d(a, m, n, lda, 0);
            packed ? pack_send(a, m, n, lda, tmp, 0) : gesd2d(a, m, n, lda, 0);
        }
    }
    return (fmpl_wtime() - t0) / (2.0 * iters);
}

/* One transfer from rank 0 to rank 1 with every element and gap checked at rank 1. */
static void verify(int packed, double *a, size_t m, size_t n, size_t lda, double *tmp)
{
    for (size_t k = 0; k < lda * n; k++)
        a[k] = rank == 0 ? (double)k : -1.0;
    if (rank == 0)
        packed ? pack_send(a, m, n, lda, tmp, 1) : gesd2d(a, m, n, lda, 1);
    if (rank == 1) {
        packed ? recv_unpack(a, m, n, lda, tmp, 0) : gerv2d(a, m, n, lda, 0);
        for (size_t k = 0; k < lda * n; k++)
            if (a[k] != (k % lda < m ? (double)k : -1.0)) {
                fprintf(stderr, "fmpl_blacs: %zu x %zu (lda %zu) wrong at element %zu\n", m, n, lda,
                        k);
                exit(1);
            }
    }
}

static int parse_list(const char *s, size_t *out, int cap)
{
    int k = 0;
    while (s && *s && k < cap) {
        out[k++] = bench_parse_size(s);
        s = strchr(s, ',');
        s = s ? s + 1 : NULL;
    }
    return k;
}

int main(int argc, char **argv)
{
    CHECK(fmpl_init(&argc, &argv));
    int size;
    CHECK(fmpl_comm_rank(W, &rank));
    CHECK(fmpl_comm_size(W, &size));
    if (size < 2) {
        fprintf(stderr, "fmpl_blacs: needs 2 ranks\n");
        return 2;
    }
    size_t ms[8] = {1, 16, 64}, ns[8] = {4096}, zs[8] = {256, 1024, 4096};
    int nm = 3, nn = 1, nz = 3, nargs = 0;
    for (int i = 1; i < argc; i++) { /* --m= --n= --z= are ours, the rest are common */
        if (!strncmp(argv[i], "--m=", 4))
            nm = parse_list(argv[i] + 4, ms, 8);
        else if (!strncmp(argv[i], "--n=", 4))
            nn = parse_list(argv[i] + 4, ns, 8);
        else if (!strncmp(argv[i], "--z=", 4))
            nz = parse_list(argv[i] + 4, zs, 8);
        else
            argv[++nargs] = argv[i];
    }
    bench_opts_t o = {0};
    if (bench_parse(nargs + 1, argv, &o,
                    "[--csv] [--quick] [--reps=N] [--m=LIST] [--n=LIST] [--z=LIST]"))
        return 2;
    if (rank == 0) {
        if (o.csv)
            printf("impl,bench,mem,np,size,metric,value\n");
        else
            printf("# fmpl_blacs: m x n sub-matrix of a column-major matrix with lda = z + 1 "
                   "(doubles), one-way time of a ping-pong, median of %d repetitions\n"
                   "%8s %6s %6s %16s %16s %8s\n",
                   o.reps, "m", "n", "z", "2-D [us]", "pack [us]", "ratio");
    }
    for (int im = 0; im < nm; im++)
        for (int in = 0; in < nn; in++)
            for (int iz = 0; iz < nz; iz++) {
                size_t m = ms[im], n = ns[in], lda = zs[iz] + 1;
                if (m > lda)
                    continue; /* the sub-matrix must fit its matrix */
                double *a = malloc(lda * n * sizeof *a), *tmp = malloc(m * n * sizeof *tmp);
                double *t[2] = {calloc((size_t)o.reps, sizeof(double)),
                                calloc((size_t)o.reps, sizeof(double))};
                if (!a || !tmp || !t[0] || !t[1])
                    return 1;
                size_t bytes = m * n * sizeof(double);
                /* about 64 MiB moved per repetition (16 with --quick), 5..2000 round trips */
                size_t want = ((size_t)64 << 20 >> (o.quick ? 2 : 0)) / (bytes ? bytes : 1);
                int iters = (int)(want < 5 ? 5 : want > 2000 ? 2000 : want);
                double med[2];
                for (int packed = 0; packed < 2; packed++) {
                    verify(packed, a, m, n, lda, tmp);
                    pingpong(packed, a, m, n, lda, tmp, 2); /* warm-up */
                    for (int r = 0; r < o.reps; r++)
                        t[packed][r] = pingpong(packed, a, m, n, lda, tmp, iters);
                    med[packed] = bench_median(t[packed], o.reps) * 1e6;
                }
                if (rank == 0) {
                    if (o.csv) {
                        printf("fmpl,blacs_2d,malloc,2,m%zu_n%zu_z%zu,latency_us,%.4f\n", m, n,
                               zs[iz], med[0]);
                        printf("fmpl,blacs_pack,malloc,2,m%zu_n%zu_z%zu,latency_us,%.4f\n", m, n,
                               zs[iz], med[1]);
                    } else {
                        printf("%8zu %6zu %6zu %16.3f %16.3f %8.2f\n", m, n, zs[iz], med[0], med[1],
                               med[0] / med[1]);
                    }
                    fflush(stdout);
                }
                free(a);
                free(tmp);
                free(t[0]);
                free(t[1]);
            }
    CHECK(fmpl_finalize());
    return 0;
}
