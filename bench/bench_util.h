/* bench_util.h — helpers shared by the benchmark programs (FMPL and MPI alike):
 * options, size lists, medians, table/CSV output, CPU count and peak RSS.
 * Header-only and library-free, so the same file serves programs built with our
 * compiler wrapper and with MPICH's or Open MPI's mpicc. */
#ifndef BENCH_UTIL_H
#define BENCH_UTIL_H

#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct bench_opts {
    int csv;           /* --csv: machine-readable rows instead of the table */
    int quick;         /* --quick: fewer sizes, repetitions and iterations */
    int reps;          /* --reps=N: timed repetitions per point (median reported) */
    size_t min, max;   /* --min=BYTES --max=BYTES */
    const char *mem;   /* --mem=malloc|heap */
    const char *mode;  /* --mode=... (program-specific) */
    const char *impl;  /* --impl=NAME: label in the output (default: the program's) */
    const char *sizes; /* --sizes=A,B,...: exactly these message sizes (K/M/G suffixes) */
} bench_opts_t;

/* Parses a size with an optional K/M/G suffix (powers of 1024). */
static inline size_t bench_parse_size(const char *s)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    switch (*end) {
    case 'k':
    case 'K': v <<= 10; break;
    case 'm':
    case 'M': v <<= 20; break;
    case 'g':
    case 'G': v <<= 30; break;
    default: break;
    }
    return (size_t)v;
}

/* Parses the common options; unknown ones are an error (prints usage, returns -1). */
static inline int bench_parse(int argc, char **argv, bench_opts_t *o, const char *usage)
{
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (!strcmp(a, "--csv"))
            o->csv = 1;
        else if (!strcmp(a, "--quick"))
            o->quick = 1;
        else if (!strncmp(a, "--reps=", 7))
            o->reps = atoi(a + 7);
        else if (!strncmp(a, "--min=", 6))
            o->min = bench_parse_size(a + 6);
        else if (!strncmp(a, "--max=", 6))
            o->max = bench_parse_size(a + 6);
        else if (!strncmp(a, "--mem=", 6))
            o->mem = a + 6;
        else if (!strncmp(a, "--mode=", 7))
            o->mode = a + 7;
        else if (!strncmp(a, "--impl=", 7))
            o->impl = a + 7;
        else if (!strncmp(a, "--sizes=", 8))
            o->sizes = a + 8;
        else {
            fprintf(stderr, "unknown option '%s'\nusage: %s %s\n", a, argv[0], usage);
            return -1;
        }
    }
    if (o->reps <= 0)
        o->reps = o->quick ? 5 : 7;
    return 0;
}

static inline int bench_cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Median of n values (sorts v). */
static inline double bench_median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, bench_cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

/* "8 B", "4 KiB", "16 MiB" */
static inline const char *bench_size_str(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= (1u << 10) && n % (1u << 10) == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu B", n);
    return buf;
}

/* The message sizes of a sweep, ascending, into out[cap]; returns how many.
 * --sizes=A,B,... gives them exactly (--min/--max still apply); otherwise powers of two
 * from --min to --max, or with --quick a short list that keeps the sizes the
 * comparisons quote (8 B, 8 KiB, 1 MiB, 4 MiB). */
static inline int bench_sizes(const bench_opts_t *o, size_t *out, int cap)
{
    static const size_t qs[] = {1, 8, 64, 512, 8192, 65536, 262144, 1u << 20, 4u << 20, 16u << 20};
    int n = 0;
    if (o->sizes) {
        const char *p = o->sizes;
        while (*p && n < cap) {
            size_t v = bench_parse_size(p);
            if (v >= o->min && v <= o->max && (n == 0 || v > out[n - 1]))
                out[n++] = v;
            p = strchr(p, ',');
            if (!p)
                break;
            p++;
        }
    } else if (o->quick) {
        for (size_t i = 0; i < sizeof qs / sizeof qs[0] && n < cap; i++)
            if (qs[i] >= o->min && qs[i] <= o->max)
                out[n++] = qs[i];
    } else {
        for (size_t v = o->min ? o->min : 1; v <= o->max && n < cap; v *= 2)
            out[n++] = v;
    }
    return n;
}

/* CPUs the job may use: this process's, or its launcher's (the parent: fmplrun, Hydra's
 * proxy, Open MPI's daemon) when that is more, since a launcher that binds its ranks
 * gives each one CPU of its own set. */
static inline int bench_ncpus(void)
{
    cpu_set_t set;
    int n = 0;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        n = CPU_COUNT(&set);
    if (sched_getaffinity(getppid(), sizeof set, &set) == 0 && CPU_COUNT(&set) > n)
        n = CPU_COUNT(&set);
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : online > 0 ? (int)online : 1;
}

/* Peak resident set of this process in KiB (VmHWM), or -1. */
static inline long bench_peak_rss_kib(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    if (!f)
        return -1;
    char line[256];
    long kib = -1;
    while (fgets(line, sizeof line, f))
        if (!strncmp(line, "VmHWM:", 6)) {
            kib = strtol(line + 6, NULL, 10);
            break;
        }
    fclose(f);
    return kib;
}

/* A note printed once for runs with more ranks than CPUs. */
static inline void bench_oversubscribed_note(int nranks, int csv)
{
    int ncpu = bench_ncpus();
    if (nranks > ncpu && !csv)
        printf("# note: %d ranks on %d CPUs: oversubscribed, ranks share cores; times measure "
               "how well waiting ranks give the core away\n",
               nranks, ncpu);
}

#endif
