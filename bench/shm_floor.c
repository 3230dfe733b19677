/* shm_floor.c — the floor under a small allreduce on one host, without any library: N
 * forked processes exchange one double per operation through shared memory (each writes
 * its value and the operation's number into a cell of every other process, by parity, the
 * one-round shape of the mailbox allreduce for few ranks) and sum what they read; a
 * waiting process polls its cells and calls sched_yield every --spin polls (1: at every
 * poll, as FMPL's waits do with more ranks than cores). With more processes than CPUs
 * each is bound to one CPU, round robin, as fmplrun --bind-to auto binds ranks (--bind=0:
 * never). The time per operation of this
 * program is what no MPI library can beat with the same waiting on the same machine, so it
 * tells how far a library's 8-byte allreduce is from the machine (docs/performance.md).
 *
 * usage: shm_floor [--np=N] [--ops=N] [--reps=R] [--spin=S] [--bind=0|1] [--csv]
 * Prints the median over R repetitions of the time per operation (rank 0's clock). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "bench_util.h"

#define MAXP 64

typedef struct cell {
    double v;
    uint64_t flag; /* the operation whose value v is */
    char pad[48];  /* one cache line a cell */
} cell_t;

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Cell (to, from, parity) of the shared block. */
static cell_t *cell(cell_t *c, int to, int from, int par)
{
    return &c[((size_t)to * MAXP + (size_t)from) * 2 + (size_t)par];
}

/* One process's loop: ops operations numbered from first; returns the seconds the last
 * ops - ops/8 took (the first eighth warms up). */
static double run(cell_t *c, int p, int r, uint64_t first, int ops, long spin, double *sum)
{
    double t0 = 0, mine = r + 1;
    for (int i = 0; i < ops; i++) {
        uint64_t n = first + (uint64_t)i;
        int par = (int)(n & 1);
        if (i == ops / 8)
            t0 = now();
        for (int d = 0; d < p; d++)
            if (d != r) {
                cell(c, d, r, par)->v = mine;
                __atomic_store_n(&cell(c, d, r, par)->flag, n, __ATOMIC_RELEASE);
            }
        double s = 0;
        for (int f = 0; f < p; f++) {
            if (f == r) {
                s += mine;
                continue;
            }
            long polls = 0;
            while (__atomic_load_n(&cell(c, r, f, par)->flag, __ATOMIC_ACQUIRE) < n)
                if (++polls % spin == 0)
                    sched_yield();
            s += cell(c, r, f, par)->v;
        }
        *sum = s;
    }
    return now() - t0;
}

int main(int argc, char **argv)
{
    int p = 4, ops = 100000, reps = 5, csv = 0, bind = 1;
    long spin = 1;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--np=", 5))
            p = atoi(argv[i] + 5);
        else if (!strncmp(argv[i], "--ops=", 6))
            ops = atoi(argv[i] + 6);
        else if (!strncmp(argv[i], "--reps=", 7))
            reps = atoi(argv[i] + 7);
        else if (!strncmp(argv[i], "--spin=", 7))
            spin = atol(argv[i] + 7);
        else if (!strncmp(argv[i], "--bind=", 7))
            bind = atoi(argv[i] + 7);
        else if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else {
            fprintf(stderr,
                    "usage: %s [--np=N] [--ops=N] [--reps=R] [--spin=S] [--bind=0|1] [--csv]\n",
                    argv[0]);
            return 2;
        }
    }
    if (p < 2 || p > MAXP || ops < 8 || reps < 1 || reps > 1000 || spin < 1) {
        fprintf(stderr, "shm_floor: need 2 <= np <= %d, ops >= 8, 1 <= reps <= 1000, spin >= 1\n",
                MAXP);
        return 2;
    }
    size_t bytes = sizeof(cell_t) * MAXP * MAXP * 2;
    cell_t *c = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    double *times = mmap(NULL, sizeof(double) * (size_t)reps, PROT_READ | PROT_WRITE,
                         MAP_SHARED | MAP_ANONYMOUS, -1, 0);
    if (c == MAP_FAILED || times == MAP_FAILED) {
        perror("shm_floor: mmap");
        return 1;
    }
    cpu_set_t all;
    int cpus[CPU_SETSIZE], ncpus = 0;
    if (sched_getaffinity(0, sizeof all, &all) == 0)
        for (int k = 0; k < CPU_SETSIZE; k++)
            if (CPU_ISSET(k, &all))
                cpus[ncpus++] = k;
    bind = bind && ncpus > 1 && p > ncpus;
    for (int r = 0; r < p; r++) {
        pid_t pid = fork();
        if (pid < 0) {
            perror("shm_floor: fork");
            return 1;
        }
        if (pid > 0)
            continue;
        if (bind) {
            cpu_set_t one;
            CPU_ZERO(&one);
            CPU_SET(cpus[r % ncpus], &one);
            if (sched_setaffinity(0, sizeof one, &one) != 0)
                perror("shm_floor: sched_setaffinity");
        }
        double sum = 0, want = (double)p * (p + 1) / 2;
        for (int k = 0; k < reps; k++) {
            double t = run(c, p, r, 1 + (uint64_t)k * (uint64_t)ops, ops, spin, &sum);
            if (r == 0)
                times[k] = t / (ops - ops / 8);
        }
        if (sum != want) {
            fprintf(stderr, "shm_floor: rank %d summed %g, expected %g\n", r, sum, want);
            _exit(1);
        }
        _exit(0);
    }
    int bad = 0, st;
    while (wait(&st) > 0)
        bad |= !WIFEXITED(st) || WEXITSTATUS(st) != 0;
    if (bad)
        return 1;
    double us = bench_median(times, reps) * 1e6;
    if (csv)
        printf("shm-floor,allreduce,shm,%d,8,us,%.4f\n", p, us);
    else
        printf("allreduce 8 B, %d processes%s%s, spin %ld: %.3f us (median of %d)\n", p,
               p > bench_ncpus() ? " (oversubscribed)" : "", bind ? ", bound" : "", spin, us, reps);
    return 0;
}
