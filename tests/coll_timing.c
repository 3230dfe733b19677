/* coll_timing.c — hand-run timing of the collectives straight on coll (not a test):
 *   fmplrun -n 2 build/bin/coll_timing [reps]
 * Prints, for barrier, allreduce, bcast and reduce at a few sizes, the median over
 * repetitions of the slowest rank's mean time per call over a back-to-back loop. */
#include <stdio.h>

#include "coll_common.h"

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

typedef int (*bench_fn)(coll_job_t *j, void *buf, size_t size);

static int do_barrier(coll_job_t *j, void *buf, size_t size)
{
    (void)buf, (void)size;
    return coll_barrier(j->world);
}
static int do_allreduce(coll_job_t *j, void *buf, size_t size)
{
    return coll_allreduce(j->world, buf, size / 4, &op_sum, NULL);
}
static int do_bcast(coll_job_t *j, void *buf, size_t size)
{
    return coll_bcast(j->world, buf, size, 0);
}
static int do_reduce(coll_job_t *j, void *buf, size_t size)
{
    return coll_reduce(j->world, buf, size / 4, &op_sum, 0, NULL);
}

static void max_double(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    double *a = inout;
    const double *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] = a[i] > b[i] ? a[i] : b[i];
}
static const coll_reduce_op_t op_max = {max_double, NULL, sizeof(double), 1};

static void bench(coll_job_t *j, const char *name, bench_fn fn, void *buf, size_t size, int reps)
{
    int iters = size <= 4096 ? 2000 : size <= 65536 ? 200 : 20;
    double *t = malloc((size_t)reps * sizeof *t);
    CHECK(t);
    for (int i = 0; i < iters / 10 + 1; i++)
        CHECK_RC(fn(j, buf, size), FMPL_SUCCESS);
    for (int r = 0; r < reps; r++) {
        CHECK_RC(coll_barrier(j->world), FMPL_SUCCESS);
        uint64_t t0 = base_time_ns();
        for (int i = 0; i < iters; i++)
            CHECK_RC(fn(j, buf, size), FMPL_SUCCESS);
        t[r] = (double)(base_time_ns() - t0) / iters / 1000.0;
        CHECK_RC(coll_allreduce(j->world, &t[r], 1, &op_max, NULL), FMPL_SUCCESS);
    }
    qsort(t, (size_t)reps, sizeof *t, cmp_double);
    if (j->rank == 0)
        printf("%-10s %9zu B  %10.3f us\n", name, size, t[reps / 2]);
    free(t);
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 7;
    coll_job_t j;
    coll_job_start(&j);
    size_t max = 4u << 20;
    void *buf = calloc(1, max);
    CHECK(buf && reps > 0);
    if (j.rank == 0)
        printf("coll timing, %d ranks, median of %d\n", j.size, reps);
    bench(&j, "barrier", do_barrier, buf, 0, reps);
    static const size_t sizes[] = {8, 1024, 65536, 1u << 20, 4u << 20};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench(&j, "allreduce", do_allreduce, buf, sizes[i], reps);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench(&j, "bcast", do_bcast, buf, sizes[i], reps);
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        bench(&j, "reduce", do_reduce, buf, sizes[i], reps);
    free(buf);
    coll_job_end(&j);
    return 0;
}
