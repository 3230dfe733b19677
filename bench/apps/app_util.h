/* app_util.h — what the application proxies (bench/apps/app_*.c) share: options, the timed
 * repetitions with their warm-up and median, the output (a human summary, or CSV rows
 * impl,bench,mem,np,size,metric,value with --csv, as the other MPI benchmarks print),
 * deterministic data, order-independent checksums and the collective pass/fail verdict.
 * Header-only, MPI only (no FMPL API), so the same file builds with our mpicc, MPICH's and
 * Open MPI's.
 *
 * Common options of every proxy:
 *   --csv          CSV rows instead of the summary
 *   --quick        the small problem of the tests (well under a second at any rank count)
 *   --reps=N       timed repetitions (default 5, 3 with --quick); the rate is the median
 *   --impl=NAME    the impl column (default "mpi")
 *   --NAME=V       the program's problem parameters (sizes, iterations; K/M/G suffixes:
 *                  powers of 1024); --help lists them with their defaults
 * One untimed warm-up run precedes the repetitions. Every repetition starts from the same
 * initial state (reset outside the timed part), so each computes the same result, and the
 * result of the last one is verified. A repetition's time is the slowest rank's. */
#ifndef APP_UTIL_H
#define APP_UTIL_H

#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity in bench_util.h */
#endif
#include <math.h>
#include <mpi.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "../bench_util.h"

#define APP_MAX_PARAMS 16

/* A problem parameter, --name=V: value holds the default, quick the default under --quick;
 * after app_parse, value is the one in force. */
typedef struct app_param {
    const char *name;
    long value;
    long quick;
    long min; /* smallest accepted value */
    const char *help;
} app_param_t;

typedef struct app_opts {
    const char *prog;  /* "app_halo2d": messages and the summary */
    const char *bench; /* the bench column: the program's name without "app_" */
    int csv, quick, reps;
    const char *impl;
    int rank, nranks;
} app_opts_t;

/* Parses the options (every rank the same way); on an error or --help rank 0 prints the
 * usage and the program ends with status 2 (0 for --help). */
static inline void app_parse(int argc, char **argv, app_opts_t *o, app_param_t *params, int nparams)
{
    MPI_Comm_rank(MPI_COMM_WORLD, &o->rank);
    MPI_Comm_size(MPI_COMM_WORLD, &o->nranks);
    o->bench = strncmp(o->prog, "app_", 4) ? o->prog : o->prog + 4;
    if (!o->impl)
        o->impl = "mpi";
    long given[APP_MAX_PARAMS] = {0};
    int have[APP_MAX_PARAMS] = {0};
    int bad = nparams > APP_MAX_PARAMS, help = 0;
    for (int i = 1; i < argc && !bad; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--csv"))
            o->csv = 1;
        else if (!strcmp(a, "--quick"))
            o->quick = 1;
        else if (!strncmp(a, "--reps=", 7))
            o->reps = atoi(a + 7);
        else if (!strncmp(a, "--impl=", 7))
            o->impl = a + 7;
        else if (!strcmp(a, "--help") || !strcmp(a, "-h"))
            help = 1;
        else {
            int found = 0;
            for (int p = 0; p < nparams && p < APP_MAX_PARAMS; p++) {
                size_t n = strlen(params[p].name);
                if (!strncmp(a, "--", 2) && !strncmp(a + 2, params[p].name, n) && a[2 + n] == '=') {
                    given[p] = (long)bench_parse_size(a + 3 + n);
                    have[p] = found = 1;
                }
            }
            if (!found) {
                if (o->rank == 0)
                    fprintf(stderr, "%s: unknown option '%s'\n", o->prog, a);
                bad = 1;
            }
        }
    }
    for (int p = 0; p < nparams && p < APP_MAX_PARAMS && !bad; p++) {
        if (have[p])
            params[p].value = given[p];
        else if (o->quick)
            params[p].value = params[p].quick;
        if (params[p].value < params[p].min) {
            if (o->rank == 0)
                fprintf(stderr, "%s: --%s must be at least %ld\n", o->prog, params[p].name,
                        params[p].min);
            bad = 1;
        }
    }
    if (o->reps <= 0)
        o->reps = o->quick ? 3 : 5;
    if (bad || help) {
        if (o->rank == 0) {
            fprintf(bad ? stderr : stdout,
                    "usage: %s [--help] [--csv] [--quick] [--reps=N] [--impl=NAME]", o->prog);
            for (int p = 0; p < nparams; p++)
                fprintf(bad ? stderr : stdout, " [--%s=N]", params[p].name);
            fprintf(bad ? stderr : stdout, "\n");
            for (int p = 0; p < nparams; p++)
                fprintf(bad ? stderr : stdout, "  --%-10s %s (default %ld, --quick %ld)\n",
                        params[p].name, params[p].help, params[p].value, params[p].quick);
        }
        MPI_Finalize();
        exit(bad ? 2 : 0);
    }
}

/* The collective verdict: every rank passes ok (its own checks); a failing rank has
 * printed why. On failure rank 0 says so, every rank finalizes and the program exits with
 * status 1 (fmplrun, mpiexec and mpirun then exit non-zero). */
static inline void app_verdict(const app_opts_t *o, int ok, const char *what)
{
    int all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
    if (all)
        return;
    if (o->rank == 0)
        fprintf(stderr, "%s: VERIFICATION FAILED (%s), %d ranks\n", o->prog, what, o->nranks);
    MPI_Finalize();
    exit(1);
}

/* A failed check on this rank: prints the reason, returns 0 (for ok = app_fail(...)). */
static inline int app_fail(const app_opts_t *o, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fprintf(stderr, "%s: rank %d: ", o->prog, o->rank);
    vfprintf(stderr, fmt, ap);
    fprintf(stderr, "\n");
    va_end(ap);
    return 0;
}

/* SplitMix64: the deterministic "random" data of every proxy (a function of an index). */
static inline uint64_t app_hash(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* A double in [0, 1) from an index. */
static inline double app_uniform(uint64_t x)
{
    return (double)(app_hash(x) >> 11) * 0x1.0p-53;
}

/* Fixed point (units of 2^-24) of a value, for checksums: sums of these in int64 are
 * exact, so a checksum does not depend on the order a library's reduction adds in. */
#define APP_FIX_SCALE 16777216.0
static inline int64_t app_fix(double v)
{
    return (int64_t)llround(v * APP_FIX_SCALE);
}

/* The global sum of per-rank fixed-point sums, as a double (every rank gets it). */
static inline double app_fix_total(int64_t local)
{
    long long l = (long long)local, g = 0;
    MPI_Allreduce(&l, &g, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return (double)g / APP_FIX_SCALE;
}

/* The global sum of per-rank integers (every rank gets it). */
static inline long long app_int_total(int64_t local)
{
    long long l = (long long)local, g = 0;
    MPI_Allreduce(&l, &g, 1, MPI_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    return g;
}

/* Bits of a double, for exact comparisons through a fingerprint. */
static inline uint64_t app_bits(double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof u);
    return u;
}

/* Lower and upper (exclusive) index of part p of n items split into parts: the first
 * n % parts parts get one more. */
static inline long app_split_lo(long n, int parts, int p)
{
    long base = n / parts, rem = n % parts;
    return p * base + (p < rem ? p : rem);
}
static inline long app_split_hi(long n, int parts, int p)
{
    return app_split_lo(n, parts, p + 1);
}

/* Time in MPI. The proxies' communication calls are wrapped here through the profiling
 * interface (MPI_X calls PMPI_X), the same way for the three libraries: while a timed run
 * goes on, the wall time inside them is added up (an MPI call made inside another, by a
 * library that calls its own MPI_ entry points, counts once). app_time turns it into
 * each rank's share of the timed runs, and app_report_rate prints the mean over the ranks
 * (metric mpi_pct): what any library could gain on this proxy is bounded by it. */
static struct {
    int on, depth;
    double seconds;
    double share; /* of the last app_time: mean over ranks, percent */
} app_mpi;

static inline double app_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

#define APP_TIMED(CALL)                                                                            \
    do {                                                                                           \
        if (!app_mpi.on || app_mpi.depth)                                                          \
            return CALL;                                                                           \
        app_mpi.depth++;                                                                           \
        double t0_ = app_now();                                                                    \
        int rc_ = CALL;                                                                            \
        app_mpi.seconds += app_now() - t0_;                                                        \
        app_mpi.depth--;                                                                           \
        return rc_;                                                                                \
    } while (0)

int MPI_Send(const void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm comm)
{
    APP_TIMED(PMPI_Send(b, n, t, peer, tag, comm));
}
int MPI_Recv(void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm comm, MPI_Status *st)
{
    APP_TIMED(PMPI_Recv(b, n, t, peer, tag, comm, st));
}
int MPI_Isend(const void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
              MPI_Request *r)
{
    APP_TIMED(PMPI_Isend(b, n, t, peer, tag, comm, r));
}
int MPI_Irecv(void *b, int n, MPI_Datatype t, int peer, int tag, MPI_Comm comm, MPI_Request *r)
{
    APP_TIMED(PMPI_Irecv(b, n, t, peer, tag, comm, r));
}
int MPI_Waitall(int n, MPI_Request r[], MPI_Status *st)
{
    APP_TIMED(PMPI_Waitall(n, r, st));
}
int MPI_Sendrecv(const void *sb, int sn, MPI_Datatype st, int dest, int stag, void *rb, int rn,
                 MPI_Datatype rt, int src, int rtag, MPI_Comm comm, MPI_Status *status)
{
    APP_TIMED(PMPI_Sendrecv(sb, sn, st, dest, stag, rb, rn, rt, src, rtag, comm, status));
}
int MPI_Allreduce(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    APP_TIMED(PMPI_Allreduce(sb, rb, n, t, op, comm));
}
int MPI_Exscan(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm)
{
    APP_TIMED(PMPI_Exscan(sb, rb, n, t, op, comm));
}
int MPI_Alltoall(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                 MPI_Comm comm)
{
    APP_TIMED(PMPI_Alltoall(sb, sn, st, rb, rn, rt, comm));
}
int MPI_Alltoallv(const void *sb, const int sc[], const int sd[], MPI_Datatype st, void *rb,
                  const int rc[], const int rd[], MPI_Datatype rt, MPI_Comm comm)
{
    APP_TIMED(PMPI_Alltoallv(sb, sc, sd, st, rb, rc, rd, rt, comm));
}
int MPI_Allgather(const void *sb, int sn, MPI_Datatype st, void *rb, int rn, MPI_Datatype rt,
                  MPI_Comm comm)
{
    APP_TIMED(PMPI_Allgather(sb, sn, st, rb, rn, rt, comm));
}
int MPI_Barrier(MPI_Comm comm)
{
    APP_TIMED(PMPI_Barrier(comm));
}

/* One run of the timed part of a proxy: reset (untimed) then run. */
typedef struct app_kernel {
    void (*reset)(void *ctx);
    void (*run)(void *ctx);
    void *ctx;
} app_kernel_t;

/* The timing: one warm-up run, then o->reps runs; each run's time is the slowest rank's.
 * Returns the median time in seconds; *tmin and *tmax the fastest and slowest run. */
static inline double app_time(const app_opts_t *o, const app_kernel_t *k, double *tmin,
                              double *tmax)
{
    double *t = malloc(sizeof *t * (size_t)o->reps);
    k->reset(k->ctx);
    k->run(k->ctx); /* warm-up */
    double mine = 0, share = 0;
    app_mpi.seconds = 0;
    for (int r = 0; r < o->reps; r++) {
        k->reset(k->ctx);
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        app_mpi.on = 1;
        k->run(k->ctx);
        app_mpi.on = 0;
        double dt = MPI_Wtime() - t0;
        mine += dt;
        MPI_Allreduce(&dt, &t[r], 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    }
    share = mine > 0 ? 100.0 * app_mpi.seconds / mine : 0;
    MPI_Allreduce(&share, &app_mpi.share, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    app_mpi.share /= o->nranks;
    *tmin = *tmax = t[0];
    for (int r = 1; r < o->reps; r++) {
        *tmin = t[r] < *tmin ? t[r] : *tmin;
        *tmax = t[r] > *tmax ? t[r] : *tmax;
    }
    double m = bench_median(t, o->reps);
    free(t);
    return m;
}

/* The output, rank 0 only. The problem line (human output only). */
static inline void app_describe(const app_opts_t *o, const char *fmt, ...)
{
    if (o->rank != 0)
        return;
    if (o->csv) {
        printf("impl,bench,mem,np,size,metric,value\n");
    } else {
        va_list ap;
        va_start(ap, fmt);
        printf("# %s (%s), %d ranks: ", o->prog, o->impl, o->nranks);
        vprintf(fmt, ap);
        printf("\n");
        va_end(ap);
        long ncpu = sysconf(_SC_NPROCESSORS_ONLN); /* not the affinity: launchers bind */
        if (ncpu > 0 && o->nranks > ncpu)
            printf("# note: %d ranks on %ld CPUs: oversubscribed, ranks share cores\n", o->nranks,
                   ncpu);
    }
    fflush(stdout);
}

/* The rate: a CSV row (metric "rate", value in unit; size = the problem size) or a line. */
static inline void app_report_rate(const app_opts_t *o, long size, double work, const char *unit,
                                   double tmed, double tmin, double tmax)
{
    if (o->rank != 0)
        return;
    if (o->csv) {
        printf("%s,%s,malloc,%d,%ld,rate,%.4f\n", o->impl, o->bench, o->nranks, size, work / tmed);
        printf("%s,%s,malloc,%d,%ld,mpi_pct,%.1f\n", o->impl, o->bench, o->nranks, size,
               app_mpi.share);
    } else {
        printf("rate       %12.3f %s (median of %d; %.3f .. %.3f; %.4f s per run)\n", work / tmed,
               unit, o->reps, work / tmax, work / tmin, tmed);
        printf("in MPI     %12.1f %% of the timed runs (mean over the ranks)\n", app_mpi.share);
    }
    fflush(stdout);
}

/* The checksum (the same for the same problem and rank count with any library). */
static inline void app_report_checksum(const app_opts_t *o, long size, double checksum)
{
    if (o->rank != 0)
        return;
    if (o->csv)
        printf("%s,%s,malloc,%d,%ld,checksum,%.6f\n", o->impl, o->bench, o->nranks, size, checksum);
    else
        printf("checksum   %.6f\n", checksum);
    fflush(stdout);
}

/* A line of the human output only (rank 0). */
static inline void app_note(const app_opts_t *o, const char *fmt, ...)
{
    if (o->rank != 0 || o->csv)
        return;
    va_list ap;
    va_start(ap, fmt);
    vprintf(fmt, ap);
    va_end(ap);
    printf("\n");
    fflush(stdout);
}

#endif
