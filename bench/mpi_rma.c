/* mpi_rma — MPI one-sided communication: latency, bandwidth, atomics, synchronization.
 * One source, built with our mpicc, MPICH's and Open MPI's (bench/CMakeLists.txt).
 *
 *   mpiexec -n 2 mpi_rma [--csv] [--quick] [--impl=NAME] [--reps=N] [--sizes=A,B,...]
 *                        [--mode=all|passive|sync|shm|strided]
 *
 * Passive target (rank 0 the origin, rank 1 the target, which waits in MPI_Barrier; any
 * other ranks too), window from MPI_Win_allocate, one MPI_Win_lock_all epoch around each
 * timed loop:
 *   put_lat / get_lat   MPI_Put / MPI_Get of size bytes + MPI_Win_flush, per iteration
 *   put_bw / get_bw     16 back-to-back operations of size bytes, then one flush
 *   acc_bw              16 back-to-back MPI_Accumulate of size bytes (MPI_DOUBLE, MPI_SUM),
 *                       then one flush
 *   fetch_and_op        8-byte MPI_Fetch_and_op (MPI_INT64_T, MPI_SUM) + flush
 *   compare_and_swap    8-byte MPI_Compare_and_swap + flush
 *   accumulate          8-byte MPI_Accumulate (MPI_INT64_T, MPI_SUM) + flush
 *   lock_unlock         MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1) + MPI_Win_unlock(1), no operation
 * Active target (every rank, --mode=sync, the job's rank count):
 *   fence               MPI_Win_fence(0) per iteration
 *   pscw                every rank posts to and starts on all the others, complete, wait
 * Strided (--mode=strided, not part of all): a window from MPI_Win_create over malloc'd
 * memory (so a local target is reached by CMA or the bounce pipeline, not by stores),
 * passive target, lock_all around each loop; the target layout a vector of blocks of
 * size bytes at a stride of twice that, as many as fit in 1 MiB, the origin contiguous:
 *   strided_put / strided_get   one MPI_Put / MPI_Get of the blocks + flush per iteration
 *                               (--sizes gives the block sizes; default 8,64,512,4K,32K)
 * Shared memory (--mode=shm, 2 ranks): shm_pingpong: a window from
 * MPI_Win_allocate_shared; rank 0 stores a counter into rank 1's segment, rank 1 sees it
 * (plain loads + MPI_Win_sync) and stores it back: one-way latency.
 *
 * Each figure: the median over --reps repetitions of a loop of `iters` iterations
 * calibrated on rank 0 to about 0.05 s (0.02 s with --quick). Contents are checked once
 * per operation before timing. CSV rows: impl,bench,mem,np,size,metric,value with metric
 * latency_us (per operation) or bw_GBps. Open MPI needs `--mca osc sm,ucx` on this
 * machine (its default osc/rdma crashes in MPI_Win_lock); bench/compare.sh passes it. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#define WIN_BYTES (4u << 20)
#define BW_BURST 16

static int rank, nranks;
static bench_opts_t o;
static const char *impl = "mpi";

static void report(const char *bench, size_t size, const char *metric, double v)
{
    if (rank != 0)
        return;
    if (o.csv) {
        printf("%s,%s,malloc,%d,%zu,%s,%.4f\n", impl, bench, nranks, size, metric, v);
    } else {
        char s[32];
        printf("%18s %10s %12.3f %s\n", bench, bench_size_str(size, s, sizeof s), v, metric);
    }
    fflush(stdout);
}

typedef void (*body_fn)(void *arg, long iters);

/* Times body on rank 0 only (passive: the others wait in a barrier); returns the median
 * time per iteration in seconds. */
static double time_origin(body_fn body, void *arg)
{
    double per = 0;
    if (rank == 0) {
        double target = o.quick ? 0.02 : 0.05;
        long iters = 1;
        for (;;) {
            double t0 = MPI_Wtime();
            body(arg, iters);
            double dt = MPI_Wtime() - t0;
            if (dt > target / 4 || iters > (1l << 28)) {
                iters = (long)(iters * (target / (dt > 1e-9 ? dt : 1e-9)));
                if (iters < 1)
                    iters = 1;
                break;
            }
            iters *= 4;
        }
        double *v = malloc(sizeof *v * (size_t)o.reps);
        for (int r = 0; r < o.reps; r++) {
            double t0 = MPI_Wtime();
            body(arg, iters);
            v[r] = (MPI_Wtime() - t0) / (double)iters;
        }
        per = bench_median(v, o.reps);
        free(v);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    return per;
}

/* Times body on every rank with the same iteration count; returns the median over
 * repetitions of the slowest rank's time per iteration. */
static double time_all(body_fn body, void *arg)
{
    double target = o.quick ? 0.02 : 0.05;
    long iters = 1;
    for (;;) {
        double t0 = MPI_Wtime();
        body(arg, iters);
        double dt = MPI_Wtime() - t0, mx;
        MPI_Allreduce(&dt, &mx, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
        if (mx > target / 4 || iters > (1l << 24)) {
            iters = (long)(iters * (target / (mx > 1e-9 ? mx : 1e-9)));
            if (iters < 1)
                iters = 1;
            break;
        }
        iters *= 4;
    }
    MPI_Bcast(&iters, 1, MPI_LONG, 0, MPI_COMM_WORLD);
    double *v = malloc(sizeof *v * (size_t)o.reps);
    for (int r = 0; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        body(arg, iters);
        double dt = (MPI_Wtime() - t0) / (double)iters;
        MPI_Allreduce(&dt, &v[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    double m = bench_median(v, o.reps);
    free(v);
    return m;
}

typedef struct pass {
    MPI_Win win;
    char *buf;
    double *dbuf; /* WIN_BYTES / 8 ones (acc_bw) */
    size_t size;
    int64_t one, res, cmp;
} pass_t;

static void put_lat(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Put(p->buf, (int)p->size, MPI_BYTE, 1, 0, (int)p->size, MPI_BYTE, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void get_lat(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Get(p->buf, (int)p->size, MPI_BYTE, 1, 0, (int)p->size, MPI_BYTE, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void put_bw(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < BW_BURST; k++)
            MPI_Put(p->buf, (int)p->size, MPI_BYTE, 1, 0, (int)p->size, MPI_BYTE, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void get_bw(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < BW_BURST; k++)
            MPI_Get(p->buf, (int)p->size, MPI_BYTE, 1, 0, (int)p->size, MPI_BYTE, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void acc_bw(void *arg, long n)
{
    pass_t *p = arg;
    int count = (int)(p->size / sizeof(double));
    for (long i = 0; i < n; i++) {
        for (int k = 0; k < BW_BURST; k++)
            MPI_Accumulate(p->dbuf, count, MPI_DOUBLE, 1, 0, count, MPI_DOUBLE, MPI_SUM, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void fop(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Fetch_and_op(&p->one, &p->res, MPI_INT64_T, 1, 0, MPI_SUM, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void cas(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Compare_and_swap(&p->one, &p->cmp, &p->res, MPI_INT64_T, 1, 8, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void acc(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Accumulate(&p->one, 1, MPI_INT64_T, 1, 16, 1, MPI_INT64_T, MPI_SUM, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void lock_unlock(void *arg, long n)
{
    pass_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, p->win);
        MPI_Win_unlock(1, p->win);
    }
}

static void check(int ok, const char *what)
{
    if (!ok) {
        fprintf(stderr, "mpi_rma: rank %d: wrong result of %s\n", rank, what);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
}

static void run_passive(void)
{
    pass_t p = {.one = 1, .cmp = 0};
    char *base;
    MPI_Win_allocate(WIN_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &p.win);
    memset(base, 0, WIN_BYTES);
    p.buf = malloc(WIN_BYTES);
    for (size_t i = 0; i < WIN_BYTES; i++)
        p.buf[i] = (char)(i * 7 + 1);
    p.dbuf = malloc(WIN_BYTES);
    for (size_t i = 0; i < WIN_BYTES / sizeof(double); i++)
        p.dbuf[i] = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    /* correctness once: a put and a get of 4 KiB, one of each atomic */
    if (rank == 0) {
        MPI_Win_lock_all(0, p.win);
        MPI_Put(p.buf, 4096, MPI_BYTE, 1, 0, 4096, MPI_BYTE, p.win);
        MPI_Win_flush(1, p.win);
        char *back = calloc(1, 4096);
        MPI_Get(back, 4096, MPI_BYTE, 1, 0, 4096, MPI_BYTE, p.win);
        MPI_Win_flush(1, p.win);
        check(!memcmp(back, p.buf, 4096), "put/get");
        free(back);
        int64_t zero = 0, r = -1;
        MPI_Put(&zero, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, p.win);
        MPI_Put(&zero, 1, MPI_INT64_T, 1, 8, 1, MPI_INT64_T, p.win);
        MPI_Win_flush(1, p.win);
        MPI_Fetch_and_op(&p.one, &r, MPI_INT64_T, 1, 0, MPI_SUM, p.win);
        MPI_Win_flush(1, p.win);
        check(r == 0, "fetch_and_op");
        MPI_Compare_and_swap(&p.one, &p.cmp, &r, MPI_INT64_T, 1, 8, p.win);
        MPI_Win_flush(1, p.win);
        check(r == 0, "compare_and_swap");
        MPI_Win_unlock_all(p.win);
    }
    MPI_Barrier(MPI_COMM_WORLD);

    size_t sizes[32];
    int ns = bench_sizes(&o, sizes, 32);
    if (rank == 0)
        MPI_Win_lock_all(0, p.win);
    for (int i = 0; i < ns; i++) {
        p.size = sizes[i];
        report("put_lat", p.size, "latency_us", 1e6 * time_origin(put_lat, &p));
        report("get_lat", p.size, "latency_us", 1e6 * time_origin(get_lat, &p));
        double t = time_origin(put_bw, &p);
        report("put_bw", p.size, "bw_GBps", BW_BURST * (double)p.size / t / 1e9);
        t = time_origin(get_bw, &p);
        report("get_bw", p.size, "bw_GBps", BW_BURST * (double)p.size / t / 1e9);
        if (p.size >= sizeof(double)) {
            t = time_origin(acc_bw, &p);
            report("acc_bw", p.size, "bw_GBps", BW_BURST * (double)p.size / t / 1e9);
        }
    }
    report("fetch_and_op", 8, "latency_us", 1e6 * time_origin(fop, &p));
    report("compare_and_swap", 8, "latency_us", 1e6 * time_origin(cas, &p));
    report("accumulate", 8, "latency_us", 1e6 * time_origin(acc, &p));
    if (rank == 0)
        MPI_Win_unlock_all(p.win);
    report("lock_unlock", 0, "latency_us", 1e6 * time_origin(lock_unlock, &p));
    free(p.buf);
    free(p.dbuf);
    MPI_Win_free(&p.win);
}

typedef struct sync_arg {
    MPI_Win win;
    MPI_Group others;
} sync_arg_t;

static void fence(void *arg, long n)
{
    sync_arg_t *s = arg;
    for (long i = 0; i < n; i++)
        MPI_Win_fence(0, s->win);
}

static void pscw(void *arg, long n)
{
    sync_arg_t *s = arg;
    for (long i = 0; i < n; i++) {
        MPI_Win_post(s->others, 0, s->win);
        MPI_Win_start(s->others, 0, s->win);
        MPI_Win_complete(s->win);
        MPI_Win_wait(s->win);
    }
}

static void run_sync(void)
{
    sync_arg_t s;
    char *base;
    MPI_Win_allocate(4096, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &s.win);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    int me = rank;
    MPI_Group_excl(world, 1, &me, &s.others);
    MPI_Group_free(&world);
    report("fence", 0, "latency_us", 1e6 * time_all(fence, &s));
    MPI_Win_fence(MPI_MODE_NOSUCCEED, s.win);
    report("pscw", 0, "latency_us", 1e6 * time_all(pscw, &s));
    MPI_Group_free(&s.others);
    MPI_Win_free(&s.win);
}

typedef struct shm_arg {
    MPI_Win win;
    volatile int64_t *mine, *peer;
} shm_arg_t;

static void run_shm(void)
{
    if (nranks != 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_rma: --mode=shm wants 2 ranks\n");
        return;
    }
    shm_arg_t s;
    int64_t *mine, *peer;
    MPI_Win_allocate_shared(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &mine, &s.win);
    MPI_Aint sz;
    int du;
    MPI_Win_shared_query(s.win, 1 - rank, &sz, &du, &peer);
    *mine = 0;
    s.mine = mine;
    s.peer = peer;
    MPI_Win_lock_all(MPI_MODE_NOCHECK, s.win);
    MPI_Win_sync(s.win);
    MPI_Barrier(MPI_COMM_WORLD);
    long n = o.quick ? 20000 : 100000;
    double *v = malloc(sizeof *v * (size_t)o.reps);
    int64_t seq = 0;
    for (int r = 0; r < o.reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        for (long i = 1; i <= n; i++) {
            seq++;
            if (rank == 0) {
                *s.peer = seq;
                MPI_Win_sync(s.win);
                while (*s.mine != seq)
                    MPI_Win_sync(s.win);
            } else {
                while (*s.mine != seq)
                    MPI_Win_sync(s.win);
                *s.peer = seq;
                MPI_Win_sync(s.win);
            }
        }
        v[r] = (MPI_Wtime() - t0) / (double)n / 2;
    }
    report("shm_pingpong", 8, "latency_us", 1e6 * bench_median(v, o.reps));
    free(v);
    MPI_Win_unlock_all(s.win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&s.win);
}

#define STRIDED_BYTES (1u << 20)

typedef struct strided {
    MPI_Win win;
    MPI_Datatype type;
    char *buf;
    int bytes; /* whole blocks of at most STRIDED_BYTES */
} strided_t;

static void strided_put(void *arg, long n)
{
    strided_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Put(p->buf, p->bytes, MPI_BYTE, 1, 0, 1, p->type, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void strided_get(void *arg, long n)
{
    strided_t *p = arg;
    for (long i = 0; i < n; i++) {
        MPI_Get(p->buf, p->bytes, MPI_BYTE, 1, 0, 1, p->type, p->win);
        MPI_Win_flush(1, p->win);
    }
}

static void run_strided(void)
{
    strided_t p;
    char *mem = malloc(2 * STRIDED_BYTES);
    p.buf = malloc(STRIDED_BYTES);
    char *back = malloc(STRIDED_BYTES);
    if (!mem || !p.buf || !back) {
        fprintf(stderr, "mpi_rma: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    MPI_Win_create(mem, 2 * STRIDED_BYTES, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &p.win);
    bench_opts_t so = o;
    if (!so.sizes)
        so.sizes = "8,64,512,4K,32K";
    size_t list[32];
    int nsize = bench_sizes(&so, list, 32);
    for (int k = 0; k < nsize; k++) {
        size_t b = list[k];
        if (b == 0 || b > STRIDED_BYTES)
            continue;
        p.bytes = (int)(STRIDED_BYTES / b * b);
        MPI_Type_vector((int)(STRIDED_BYTES / b), (int)b, (int)(2 * b), MPI_BYTE, &p.type);
        MPI_Type_commit(&p.type);
        memset(mem, 0x5A, 2 * STRIDED_BYTES);
        MPI_Barrier(MPI_COMM_WORLD);
        MPI_Win_lock_all(0, p.win);
        if (rank == 0) { /* contents once: put, get back, compare */
            for (int i = 0; i < p.bytes; i++)
                p.buf[i] = (char)(i * 7 + (int)b);
            strided_put(&p, 1);
            memset(back, 0, (size_t)p.bytes);
            MPI_Get(back, p.bytes, MPI_BYTE, 1, 0, 1, p.type, p.win);
            MPI_Win_flush(1, p.win);
            check(!memcmp(back, p.buf, (size_t)p.bytes), "strided put/get");
        }
        MPI_Win_unlock_all(p.win);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 1) /* the gaps between the blocks untouched */
            for (size_t i = b; i + b <= 2 * STRIDED_BYTES; i += 2 * b)
                check(mem[i] == 0x5A && mem[i + b - 1] == 0x5A, "strided put (gaps)");
        MPI_Win_lock_all(0, p.win);
        report("strided_put", b, "latency_us", 1e6 * time_origin(strided_put, &p));
        report("strided_get", b, "latency_us", 1e6 * time_origin(strided_get, &p));
        MPI_Win_unlock_all(p.win);
        MPI_Type_free(&p.type);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_free(&p.win);
    free(mem);
    free(p.buf);
    free(back);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    o.max = WIN_BYTES;
    if (bench_parse(argc, argv, &o,
                    "[--csv] [--quick] [--impl=NAME] [--reps=N] [--sizes=A,B,...] "
                    "[--mode=all|passive|sync|shm|strided]") != 0) {
        MPI_Finalize();
        return 2;
    }
    if (!o.sizes && strcmp(o.mode ? o.mode : "all", "strided") != 0)
        o.sizes = o.quick ? "8,64K,4M" : "8,64,512,4K,64K,256K,1M,4M";
    if (o.impl)
        impl = o.impl;
    const char *mode = o.mode ? o.mode : "all";
    if (rank == 0) {
        if (o.csv)
            printf("impl,bench,mem,np,size,metric,value\n");
        else
            printf("# %s: MPI one-sided, %d ranks; median of %d repetitions\n", impl, nranks,
                   o.reps);
    }
    if (nranks < 2) {
        if (rank == 0)
            fprintf(stderr, "mpi_rma: needs at least 2 ranks\n");
        MPI_Finalize();
        return 2;
    }
    if (!strcmp(mode, "all") || !strcmp(mode, "passive"))
        run_passive();
    if (!strcmp(mode, "all") || !strcmp(mode, "sync"))
        run_sync();
    if ((!strcmp(mode, "all") && nranks == 2) || !strcmp(mode, "shm"))
        run_shm();
    if (!strcmp(mode, "strided"))
        run_strided();
    MPI_Finalize();
    return 0;
}
