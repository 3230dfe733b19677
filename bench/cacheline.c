/* cacheline.c — the machine's state, no library at all: one-way time of a cache line
 * passed back and forth between two threads bound to CPUs A and B (default 0 and 1),
 * the floor under any message between two ranks there. On a guest whose vCPUs the host
 * moves, it changes within seconds (an AMD EPYC guest here: 0.03 us while the two vCPUs
 * share a cache, 0.17-0.68 while they do not), and so does every figure of every library
 * that moves data between ranks; bench/compare.sh prints it before each round.
 *
 * usage: cacheline [--cpus=A,B] [--trips=N] [--csv]
 * Prints the one-way time in microseconds of N round trips (default 200000). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static _Alignas(64) _Atomic long flag;
static long trips = 200000;
static int cpu_a = 0, cpu_b = 1;

static void bind_to(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    pthread_setaffinity_np(pthread_self(), sizeof set, &set);
}

static void *partner(void *arg)
{
    (void)arg;
    bind_to(cpu_b);
    for (long i = 0; i < trips; i++) {
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 1)
            ;
        atomic_store_explicit(&flag, 2 * i + 2, memory_order_release);
    }
    return NULL;
}

int main(int argc, char **argv)
{
    int csv = 0;
    for (int i = 1; i < argc; i++) {
        if (strncmp(argv[i], "--cpus=", 7) == 0 &&
            sscanf(argv[i] + 7, "%d,%d", &cpu_a, &cpu_b) == 2)
            continue;
        if (strncmp(argv[i], "--trips=", 8) == 0 && (trips = atol(argv[i] + 8)) > 0)
            continue;
        if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
            continue;
        }
        fprintf(stderr, "usage: %s [--cpus=A,B] [--trips=N] [--csv]\n", argv[0]);
        return 2;
    }
    pthread_t t;
    bind_to(cpu_a);
    if (pthread_create(&t, NULL, partner, NULL)) {
        fprintf(stderr, "cacheline: cannot start a thread\n");
        return 1;
    }
    struct timespec a, b;
    clock_gettime(CLOCK_MONOTONIC, &a);
    for (long i = 0; i < trips; i++) {
        atomic_store_explicit(&flag, 2 * i + 1, memory_order_release);
        while (atomic_load_explicit(&flag, memory_order_acquire) != 2 * i + 2)
            ;
    }
    clock_gettime(CLOCK_MONOTONIC, &b);
    pthread_join(t, NULL);
    double us = ((double)(b.tv_sec - a.tv_sec) * 1e9 + (double)(b.tv_nsec - a.tv_nsec)) / 1e3 /
                (double)trips / 2;
    if (csv)
        printf("cacheline,%d,%d,one_way_us,%.4f\n", cpu_a, cpu_b, us);
    else
        printf("cache line between CPU %d and %d: %.3f us one way\n", cpu_a, cpu_b, us);
    return 0;
}
