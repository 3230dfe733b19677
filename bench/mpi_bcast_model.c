/* mpi_bcast_model — the LogGP-planned bcast (src/coll/coll_loggp.c): for every size, the
 * model's plan and predicted time next to the measured time of MPI_Bcast on
 * MPI_COMM_WORLD, and the prediction's error. FMPL only (it asks the coll layer for its
 * plan), built against libfmpl.a:
 *
 *   fmplrun -n P mpi_bcast_model [--csv] [--reps=N] [--sizes=A,B,...]
 *
 * Sizes: 8 B to 4 MiB in powers of 4, and 4 MiB (or --sizes). For each size, after 3
 * warm-up calls, --reps repetitions (default: 400 down to 30 as sizes grow) of {barrier;
 * root notes the clock; MPI_Bcast; every rank notes the clock}. A repetition's time is
 * from the root's start to the last rank's end: the ranks of one host read one clock
 * (CLOCK_MONOTONIC through MPI_Wtime), which is what the model predicts (every rank ready
 * at 0, the time at which the last one has the data). The table gives the median over
 * repetitions, the rank that was last most often (the slowest rank) and its median end,
 * the plan (tree, or chain/segment), the prediction and error = (predicted - measured) /
 * measured. Contents are checked at every repetition. CSV rows:
 * impl,bench,mem,np,size,metric,value. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

static int default_reps(size_t size)
{
    return size <= (64u << 10) ? 400 : size <= (1u << 20) ? 100 : 30;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, np, csv = 0, reps_set = 0, nsizes = 0;
    size_t sizes[64];
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &np);
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strncmp(argv[i], "--reps=", 7))
            reps_set = atoi(argv[i] + 7);
        else if (!strncmp(argv[i], "--sizes=", 8))
            for (char *p = argv[i] + 8; *p && nsizes < 64; p += strcspn(p, ","), p += *p == ',')
                sizes[nsizes++] = strtoull(p, NULL, 0);
        else {
            if (rank == 0)
                fprintf(stderr, "usage: mpi_bcast_model [--csv] [--reps=N] [--sizes=A,B,...]\n");
            MPI_Finalize();
            return 2;
        }
    }
    if (!nsizes) {
        for (size_t s = 8; s <= (4u << 20); s *= 4)
            sizes[nsizes++] = s;
        sizes[nsizes++] = 4u << 20;
    }
    size_t maxsize = 0;
    for (int i = 0; i < nsizes; i++)
        maxsize = sizes[i] > maxsize ? sizes[i] : maxsize;
    unsigned char *buf = malloc(maxsize ? maxsize : 1);
    int reps_max = reps_set > 0 ? reps_set : 400;
    double *start = malloc((size_t)reps_max * sizeof *start);
    double *end = malloc((size_t)reps_max * sizeof *end);
    double *all = rank == 0 ? malloc((size_t)reps_max * (size_t)np * sizeof *all) : NULL;
    double *times = malloc((size_t)reps_max * sizeof *times);
    double *rank_end = malloc((size_t)reps_max * sizeof *rank_end);
    int *last = calloc((size_t)np, sizeof *last);
    int bad = 0;
    const coll_loggp_t *m = coll_loggp_agreed();
    if (rank == 0 && !csv) {
        printf("# mpi_bcast_model: %d ranks; LogGP L %.1f ns, o %.1f ns, g %.1f ns, G %.4f ns/B "
               "(past 1 MiB %.4f), S %.1f ns, %d CPUs\n",
               np, m->latency, m->overhead, m->gap, m->per_byte, m->per_byte_far, m->switch_cost,
               m->cpus);
        printf("%10s %14s %12s %12s %8s %6s %12s\n", "size", "plan", "predicted_us", "measured_us",
               "error", "last", "last_med_us");
    }
    for (int si = 0; si < nsizes; si++) {
        size_t size = sizes[si];
        int reps = reps_set > 0 ? reps_set : default_reps(size);
        for (int r = -3; r < reps; r++) {
            unsigned char v = (unsigned char)(r * 31 + (int)si);
            if (rank == 0)
                memset(buf, v, size);
            else
                memset(buf, (unsigned char)~v, size);
            MPI_Barrier(MPI_COMM_WORLD);
            double t0 = MPI_Wtime();
            MPI_Bcast(buf, (int)size, MPI_BYTE, 0, MPI_COMM_WORLD);
            double t1 = MPI_Wtime();
            if (r >= 0) {
                start[r] = t0;
                end[r] = t1;
            }
            if (size && (buf[0] != v || buf[size - 1] != v || buf[size / 2] != v))
                bad = 1;
        }
        MPI_Bcast(start, reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        MPI_Gather(end, reps, MPI_DOUBLE, all, reps, MPI_DOUBLE, 0, MPI_COMM_WORLD);
        if (rank != 0)
            continue;
        memset(last, 0, (size_t)np * sizeof *last);
        for (int r = 0; r < reps; r++) {
            int who = 0;
            for (int q = 1; q < np; q++)
                if (all[(size_t)q * (size_t)reps + (size_t)r] >
                    all[(size_t)who * (size_t)reps + (size_t)r])
                    who = q;
            last[who]++;
            times[r] = (all[(size_t)who * (size_t)reps + (size_t)r] - start[r]) * 1e6;
        }
        int slow = 0;
        for (int q = 1; q < np; q++)
            if (last[q] > last[slow])
                slow = q;
        for (int r = 0; r < reps; r++)
            rank_end[r] = (all[(size_t)slow * (size_t)reps + (size_t)r] - start[r]) * 1e6;
        double meas = median(times, reps), slow_med = median(rank_end, reps);
        coll_bcast_plan_t plan = coll_bcast_plan(size, np);
        double pred = plan.predicted / 1e3, err = meas > 0 ? (pred - meas) / meas : 0;
        char what[32];
        if (np == 1)
            snprintf(what, sizeof what, "-");
        else if (plan.chain)
            snprintf(what, sizeof what, "chain/%zu", plan.seg);
        else
            snprintf(what, sizeof what, "tree");
        if (csv) {
            printf("fmpl,bcast_model,malloc,%d,%zu,predicted_us,%.3f\n", np, size, pred);
            printf("fmpl,bcast_model,malloc,%d,%zu,measured_us,%.3f\n", np, size, meas);
            printf("fmpl,bcast_model,malloc,%d,%zu,error_pct,%.1f\n", np, size, 100 * err);
        } else {
            printf("%10zu %14s %12.2f %12.2f %7.1f%% %6d %12.2f\n", size, what, pred, meas,
                   100 * err, slow, slow_med);
        }
        fflush(stdout);
    }
    int any_bad = 0;
    MPI_Reduce(&bad, &any_bad, 1, MPI_INT, MPI_MAX, 0, MPI_COMM_WORLD);
    if (rank == 0 && any_bad)
        fprintf(stderr, "mpi_bcast_model: wrong contents after a bcast\n");
    free(buf);
    free(start);
    free(end);
    free(all);
    free(times);
    free(rank_end);
    free(last);
    MPI_Finalize();
    return any_bad ? 1 : 0;
}
