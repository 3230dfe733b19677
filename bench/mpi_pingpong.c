/* mpi_pingpong — the MPI point-to-point benchmark, one source for every MPI: built with
 * our mpicc (bin/mpi_pingpong.fmpl), MPICH's (.mpich) and Open MPI's (.openmpi). Ping-pong
 * latency and bandwidth, streaming and bidirectional bandwidth from 1 B to 16 MiB, and
 * seed 004's derived-datatype ping-pong of a sub-matrix, in the output format of
 * fmpl_pingpong (table, or CSV rows impl,bench,mem,np,size,metric,value with --csv).
 *
 *   mpiexec -n 2 mpi_pingpong [--csv] [--quick] [--impl=NAME] [--min=B] [--max=B]
 *       [--sizes=A,B,..] [--reps=N] [--bench=pingpong,stream,bibw,submatrix] [--submatrix]
 *       [--m=LIST] [--n=LIST] [--z=LIST]
 *
 * --bench picks the benchmarks (default: all four); --submatrix is --bench=submatrix.
 * What is timed (medians of --reps repetitions, after a warm-up), between ranks 0 and 1:
 *  - pingpong (osu_latency style): rank 0 {MPI_Send; MPI_Recv}, rank 1 {MPI_Recv; MPI_Send},
 *    `iters` times; one-way latency = elapsed / (2 iters); bandwidth = size / latency;
 *  - stream (osu_bw style): rank 1 posts 64 MPI_Irecv into one buffer, rank 0 64 MPI_Isend,
 *    both MPI_Waitall, then rank 1 sends a 1-byte ack; bandwidth = 64 * size * iters /
 *    elapsed on rank 0;
 *  - bibw (osu_bibw style): both ranks post 64 MPI_Irecv from the other, then 64 MPI_Isend
 *    to it, and MPI_Waitall all 128; bandwidth = 2 * 64 * size * iters / elapsed on rank 0;
 *  - submatrix (seed 004): an m x n sub-matrix of a 4096 x z matrix of doubles, datatype
 *    MPI_Type_vector(m, n, z + 1, MPI_DOUBLE) (stride z + 1, as in the seed), one element of
 *    it sent and received by a ping-pong (both sides use the derived type); latency is
 *    one-way, bandwidth = m * n * 8 payload bytes / latency. CSV: bench submatrix_n<n>_z<z>,
 *    size = payload bytes (so m = size / (8 n)). Defaults: m = 4096, n = 1 and 16,
 *    z = 256, 1024, 4096. The matrix is allocated for the type's extent.
 * Every size and sub-matrix case first runs a verification pass with position-dependent
 * contents (and, for the sub-matrix, checks that the gaps between blocks are untouched);
 * wrong data prints an error and aborts with a non-zero status. Buffers: page-aligned
 * posix_memalign. */
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
#define MAX_LIST 16

enum { B_PINGPONG = 1, B_STREAM = 2, B_BIBW = 4, B_SUBMATRIX = 8 };

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

static double bibw(char *sbuf, char *rbuf, int n, int iters)
{
    MPI_Request req[2 * WINDOW];
    MPI_Status st[2 * WINDOW]; /* not MPI_STATUSES_IGNORE: gcc 12 warns on MPICH's */
    int peer = 1 - rank;
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int it = 0; it < iters && rank <= 1; it++) {
        for (int i = 0; i < WINDOW; i++)
            MPI_Irecv(rbuf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, &req[i]);
        for (int i = 0; i < WINDOW; i++)
            MPI_Isend(sbuf, n, MPI_CHAR, peer, TAG, MPI_COMM_WORLD, &req[WINDOW + i]);
        MPI_Waitall(2 * WINDOW, req, st);
    }
    return 2.0 * n * WINDOW * iters / (MPI_Wtime() - t0);
}

/* Byte i of a message from rank r of a given size: position- and sender-dependent, so
 * a shifted, truncated or misdirected transfer does not pass. */
static unsigned char pattern(int r, size_t n, size_t i)
{
    return (unsigned char)((i * 131u) ^ (i >> 8) ^ (n * 7u) ^ (size_t)(r * 29 + 1));
}

static void fill(char *buf, int r, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = (char)pattern(r, n, i);
}

static void expect(const char *what, const char *buf, int from, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)buf[i] != pattern(from, n, i)) {
            fprintf(stderr,
                    "mpi_pingpong: rank %d: %s: byte %zu of a %zu-byte message is 0x%02x, "
                    "not 0x%02x\n",
                    rank, what, i, n, (unsigned char)buf[i], pattern(from, n, i));
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
}

/* One checked ping-pong, window and bidirectional window of n bytes before timing. */
static void verify(char *sbuf, char *rbuf, int n, int benches)
{
    size_t sz = (size_t)n;
    if (rank > 1) {
        if (benches & B_PINGPONG)
            pingpong(sbuf, rbuf, n, 1);
        if (benches & B_STREAM)
            stream(sbuf, rbuf, n, 1);
        if (benches & B_BIBW)
            bibw(sbuf, rbuf, n, 1);
        return;
    }
    fill(sbuf, rank, sz);
    if (benches & B_PINGPONG) {
        memset(rbuf, 0, sz);
        pingpong(sbuf, rbuf, n, 1);
        expect("ping-pong", rbuf, 1 - rank, sz);
    }
    if (benches & B_STREAM) {
        memset(rbuf, 0, sz);
        stream(sbuf, rbuf, n, 1);
        if (rank == 1)
            expect("stream", rbuf, 0, sz);
    }
    if (benches & B_BIBW) {
        memset(rbuf, 0, sz);
        bibw(sbuf, rbuf, n, 1);
        expect("bibw", rbuf, 1 - rank, sz);
    }
}

static int clampi(double v, int lo, int hi)
{
    return v < lo ? lo : v > hi ? hi : (int)v;
}

/* Sub-matrix ping-pong: one element of type t, buffer mat on both sides. */
static double pingpong_type(double *mat, MPI_Datatype t, int iters)
{
    MPI_Barrier(MPI_COMM_WORLD);
    double t0 = MPI_Wtime();
    for (int i = 0; i < iters; i++) {
        if (rank == 0) {
            MPI_Send(mat, 1, t, 1, TAG, MPI_COMM_WORLD);
            MPI_Recv(mat, 1, t, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        } else if (rank == 1) {
            MPI_Recv(mat, 1, t, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
            MPI_Send(mat, 1, t, 0, TAG, MPI_COMM_WORLD);
        }
    }
    return (MPI_Wtime() - t0) / (2.0 * iters);
}

/* Checks the whole matrix after a typed receive: the type's elements hold their
 * values, every other element (a gap) still holds `gap`. */
static void check_matrix(const double *mat, size_t elems, int m, int n, int z, double gap)
{
    size_t stride = (size_t)z + 1, next = 0; /* next: first element of the current block */
    int r = 0;
    for (size_t i = 0; i < elems; i++) {
        double want = gap;
        if (r < m && i >= next && i < next + (size_t)n) {
            want = (double)r * n + (double)(i - next) + 0.5;
            if (i == next + (size_t)n - 1) {
                r++;
                next += stride;
            }
        }
        if (mat[i] != want) {
            fprintf(stderr,
                    "mpi_pingpong: rank %d: sub-matrix m=%d n=%d z=%d: element %zu is %g, "
                    "not %g\n",
                    rank, m, n, z, i, mat[i], want);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
    }
}

/* One sub-matrix case: verification pass, calibration, timed repetitions; the median
 * one-way latency in *lat. */
static void submatrix(int m, int n, int z, const bench_opts_t *o, double *reps, double *lat)
{
    MPI_Datatype t;
    MPI_Aint lb, ext;
    MPI_Type_vector(m, n, z + 1, MPI_DOUBLE, &t);
    MPI_Type_commit(&t);
    MPI_Type_get_extent(t, &lb, &ext);
    size_t elems = (size_t)4096 * (size_t)z, need = (size_t)(lb + ext) / sizeof(double);
    if (need > elems)
        elems = need;
    void *p = NULL;
    if (posix_memalign(&p, 4096, elems * sizeof(double)))
        MPI_Abort(MPI_COMM_WORLD, 1);
    double *mat = p;

    /* Verification: rank 0 sends the sub-matrix's values, rank 1 receives into a
     * matrix of -2 and checks; rank 1 sends them back, rank 0 receives into a matrix
     * of -1 and checks. */
    double gap = rank == 0 ? -1.0 : -2.0;
    for (size_t i = 0; i < elems; i++)
        mat[i] = gap;
    if (rank == 0)
        for (int r = 0; r < m; r++)
            for (int c = 0; c < n; c++)
                mat[(size_t)r * ((size_t)z + 1) + (size_t)c] = (double)r * n + c + 0.5;
    if (rank == 0) {
        MPI_Send(mat, 1, t, 1, TAG, MPI_COMM_WORLD);
        for (size_t i = 0; i < elems; i++)
            mat[i] = gap;
        MPI_Recv(mat, 1, t, 1, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_matrix(mat, elems, m, n, z, gap);
    } else if (rank == 1) {
        MPI_Recv(mat, 1, t, 0, TAG, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        check_matrix(mat, elems, m, n, z, gap);
        MPI_Send(mat, 1, t, 0, TAG, MPI_COMM_WORLD);
    }

    /* Calibration on rank 0 (about 0.05 s per repetition, 0.02 s with --quick). */
    double est = pingpong_type(mat, t, 3);
    int iters = clampi((o->quick ? 0.02 : 0.05) / (2.0 * (est > 0 ? est : 1e-6)), 3, 100000);
    MPI_Bcast(&iters, 1, MPI_INT, 0, MPI_COMM_WORLD);
    pingpong_type(mat, t, iters / 10 + 1);
    for (int r = 0; r < o->reps; r++)
        reps[r] = pingpong_type(mat, t, iters);
    *lat = bench_median(reps, o->reps);
    MPI_Type_free(&t);
    free(mat);
}

/* A comma-separated list of positive ints into out[MAX_LIST]; returns the count, or -1. */
static int int_list(const char *s, int *out)
{
    int k = 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v <= 0 || v > 1 << 24 || k == MAX_LIST || (*end && *end != ','))
            return -1;
        out[k++] = (int)v;
        s = *end ? end + 1 : end;
    }
    return k ? k : -1;
}

static int bench_list(const char *s)
{
    static const char *names[] = {"pingpong", "stream", "bibw", "submatrix"};
    int mask = 0;
    while (*s) {
        size_t len = strcspn(s, ",");
        int found = 0;
        for (int i = 0; i < 4; i++)
            if (strlen(names[i]) == len && !strncmp(s, names[i], len)) {
                mask |= 1 << i;
                found = 1;
            }
        if (!found)
            return -1;
        s += len;
        if (*s)
            s++;
    }
    return mask ? mask : -1;
}

#define USAGE                                                                                      \
    "[--csv] [--quick] [--impl=NAME] [--min=B] [--max=B] [--sizes=A,B,..] [--reps=N] "             \
    "[--bench=pingpong,stream,bibw,submatrix] [--submatrix] [--m=LIST] [--n=LIST] [--z=LIST]"

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);

    /* Our own options first; the rest go to bench_parse. */
    int benches = B_PINGPONG | B_STREAM | B_BIBW | B_SUBMATRIX;
    int ms[MAX_LIST] = {4096}, ns[MAX_LIST] = {1, 16}, zs[MAX_LIST] = {256, 1024, 4096};
    int nm = 1, nn = 2, nz = 3, bad = 0;
    char **rest = calloc((size_t)argc + 1, sizeof *rest);
    int nrest = 0;
    if (!rest)
        MPI_Abort(MPI_COMM_WORLD, 1);
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i > 0 && !strncmp(a, "--bench=", 8))
            bad |= (benches = bench_list(a + 8)) < 0;
        else if (i > 0 && !strcmp(a, "--submatrix"))
            benches = B_SUBMATRIX;
        else if (i > 0 && !strncmp(a, "--m=", 4))
            bad |= (nm = int_list(a + 4, ms)) < 0;
        else if (i > 0 && !strncmp(a, "--n=", 4))
            bad |= (nn = int_list(a + 4, ns)) < 0;
        else if (i > 0 && !strncmp(a, "--z=", 4))
            bad |= (nz = int_list(a + 4, zs)) < 0;
        else
            rest[nrest++] = argv[i];
    }
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: bad --bench, --m, --n or --z list\nusage: %s %s\n",
                    argv[0], USAGE);
        MPI_Finalize();
        return 2;
    }
    bench_opts_t o = {.min = 1, .max = 16u << 20};
    if (bench_parse(nrest, rest, &o, USAGE))
        MPI_Abort(MPI_COMM_WORLD, 2);
    free(rest);
    int size;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size < 2 || o.min == 0 || o.max < o.min || o.max > (size_t)1 << 30) {
        if (rank == 0)
            fprintf(stderr, "mpi_pingpong: needs 2 ranks and 1 <= --min <= --max <= 1G\n");
        MPI_Finalize();
        return 2;
    }
    for (int i = 0; i < nn; i++)
        for (int j = 0; j < nz; j++)
            if (ns[i] > zs[j]) {
                if (rank == 0)
                    fprintf(stderr, "mpi_pingpong: sub-matrix n=%d wider than z=%d\n", ns[i],
                            zs[j]);
                MPI_Finalize();
                return 2;
            }
    size_t sizes[64];
    int nsizes = 0;
    char *sbuf = NULL, *rbuf = NULL;
    if (benches & (B_PINGPONG | B_STREAM | B_BIBW)) {
        nsizes = bench_sizes(&o, sizes, 64);
        if (nsizes == 0)
            MPI_Abort(MPI_COMM_WORLD, 2);
        o.max = sizes[nsizes - 1]; /* the buffers' size */
        void *a = NULL, *b = NULL;
        if (posix_memalign(&a, 4096, o.max) || posix_memalign(&b, 4096, o.max))
            MPI_Abort(MPI_COMM_WORLD, 1);
        sbuf = a;
        rbuf = b;
        memset(sbuf, 1, o.max);
        memset(rbuf, 0, o.max);
    }

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
            printf("# %s: MPI point-to-point, ranks 0 and 1 of %d, malloc'd buffers (%s)\n", impl,
                   size, lib);
            printf("# medians of %d repetitions; 1 GB = 1e9 B\n", o.reps);
        }
        if (!o.csv && nsizes) {
            printf("# latency: one-way, blocking MPI_Send/MPI_Recv; pp bw: size / latency; "
                   "stream: window of %d isends + ack (osu_bw); bibw: both ranks send a window "
                   "of %d (osu_bibw)\n",
                   WINDOW, WINDOW);
            printf("%10s %14s %14s %14s %14s\n", "size", "latency [us]", "pp bw [GB/s]",
                   "stream [GB/s]", "bibw [GB/s]");
        }
        fflush(stdout);
    }
    double *lat = calloc((size_t)o.reps, sizeof *lat), *bw = calloc((size_t)o.reps, sizeof *bw),
           *bbw = calloc((size_t)o.reps, sizeof *bbw);
    if (!lat || !bw || !bbw)
        MPI_Abort(MPI_COMM_WORLD, 1);
    double budget = o.quick ? 32.0 * (1 << 20) : 64.0 * (1 << 20);
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        int ni = (int)n;
        verify(sbuf, rbuf, ni, benches);
        memset(sbuf, 1, n);
        double l = 0, bwm = 0, bbwm = 0;
        if (benches & B_PINGPONG) {
            int iters = clampi(budget / (double)n, 10, o.quick ? 5000 : 10000);
            pingpong(sbuf, rbuf, ni, iters / 10 + 1);
            for (int r = 0; r < o.reps; r++)
                lat[r] = pingpong(sbuf, rbuf, ni, iters);
            l = bench_median(lat, o.reps);
        }
        int siters = clampi(budget * 4 / ((double)n * WINDOW), 1, o.quick ? 20 : 100);
        if (benches & B_STREAM) {
            stream(sbuf, rbuf, ni, 1);
            for (int r = 0; r < o.reps; r++)
                bw[r] = stream(sbuf, rbuf, ni, siters);
            bwm = bench_median(bw, o.reps);
        }
        if (benches & B_BIBW) {
            int biters = siters / 2 > 0 ? siters / 2 : 1;
            bibw(sbuf, rbuf, ni, 1);
            for (int r = 0; r < o.reps; r++)
                bbw[r] = bibw(sbuf, rbuf, ni, biters);
            bbwm = bench_median(bbw, o.reps);
        }
        if (rank == 0) {
            if (o.csv) {
                if (benches & B_PINGPONG) {
                    printf("%s,pingpong,malloc,2,%zu,latency_us,%.4f\n", impl, n, l * 1e6);
                    printf("%s,pingpong,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, (double)n / l / 1e9);
                }
                if (benches & B_STREAM)
                    printf("%s,stream,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, bwm / 1e9);
                if (benches & B_BIBW)
                    printf("%s,bibw,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, bbwm / 1e9);
            } else {
                char sz[32];
                printf("%10s", bench_size_str(n, sz, sizeof sz));
                if (benches & B_PINGPONG)
                    printf(" %14.3f %14.3f", l * 1e6, (double)n / l / 1e9);
                else
                    printf(" %14s %14s", "-", "-");
                if (benches & B_STREAM)
                    printf(" %14.3f", bwm / 1e9);
                else
                    printf(" %14s", "-");
                if (benches & B_BIBW)
                    printf(" %14.3f\n", bbwm / 1e9);
                else
                    printf(" %14s\n", "-");
            }
            fflush(stdout);
        }
    }

    if (benches & B_SUBMATRIX) {
        if (rank == 0 && !o.csv) {
            printf("# sub-matrix (seed 004): one MPI_Type_vector(m, n, z+1, MPI_DOUBLE) of a "
                   "4096 x z matrix, ping-pong; latency one-way; bw = m*n*8 B / latency\n");
            printf("%6s %4s %6s %10s %14s %14s\n", "m", "n", "z", "payload", "latency [us]",
                   "bw [GB/s]");
            fflush(stdout);
        }
        for (int im = 0; im < nm; im++)
            for (int in = 0; in < nn; in++)
                for (int iz = 0; iz < nz; iz++) {
                    int m = ms[im], n = ns[in], z = zs[iz];
                    double l = 0;
                    submatrix(m, n, z, &o, lat, &l);
                    if (rank != 0)
                        continue;
                    size_t payload = (size_t)m * (size_t)n * sizeof(double);
                    if (o.csv) {
                        printf("%s,submatrix_n%d_z%d,malloc,2,%zu,latency_us,%.4f\n", impl, n, z,
                               payload, l * 1e6);
                        printf("%s,submatrix_n%d_z%d,malloc,2,%zu,bw_GBps,%.4f\n", impl, n, z,
                               payload, (double)payload / l / 1e9);
                    } else {
                        char sz[32];
                        printf("%6d %4d %6d %10s %14.3f %14.3f\n", m, n, z,
                               bench_size_str(payload, sz, sizeof sz), l * 1e6,
                               (double)payload / l / 1e9);
                    }
                    fflush(stdout);
                }
    }
    free(lat);
    free(bw);
    free(bbw);
    free(sbuf);
    free(rbuf);
    MPI_Finalize();
    return 0;
}
