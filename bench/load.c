/* load — a background load generator for bench/robust.sh (plain C, no MPI): one process
 * that keeps a CPU busy, all the time or in bursts, so a benchmark can be run next to
 * other tenants' work on purpose.
 *
 *   load --busy [--seconds=S]
 *   load --bursty[=BUSY_MS,SLEEP_MS] [--seconds=S]
 *
 * --busy spins without a pause (one busy loop: one CPU's worth of load). --bursty
 * alternates BUSY_MS milliseconds of spinning with SLEEP_MS milliseconds asleep (default
 * 5,5: half a CPU on average, but arriving in bursts, the shape that hurts a waiting rank
 * most). Runs until killed, or for S seconds (S may be fractional). One load is one
 * process: start several for more (robust.sh's bursty2 starts two).
 *
 * The process ends with its parent (PR_SET_PDEATHSIG): a script that starts it and dies
 * without cleaning up (SIGKILL) leaves no busy loop behind. Exit status 0 after
 * --seconds, 2 on a bad option. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define USAGE "--busy | --bursty[=BUSY_MS,SLEEP_MS] [--seconds=S]"

static double now_seconds(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Spins until the clock passes `until`; the work between clock reads is a few hundred
 * nanoseconds of arithmetic the compiler cannot drop. */
static void spin_until(double until)
{
    static volatile unsigned long sink;
    unsigned long x = sink;
    while (now_seconds() < until) {
        for (int i = 0; i < 256; i++)
            x = x * 6364136223846793005ul + 1442695040888963407ul;
        sink = x;
    }
}

static void sleep_seconds(double s)
{
    struct timespec ts = {.tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0)
        ; /* interrupted by a signal that did not end us: sleep the rest */
}

/* A non-negative number of milliseconds or seconds; -1 when s is not one. */
static double parse_number(const char *s, char **end)
{
    double v = strtod(s, end);
    return *end == s || v < 0 ? -1 : v;
}

static int usage(const char *prog)
{
    fprintf(stderr, "load: bad arguments\nusage: %s %s\n", prog, USAGE);
    return 2;
}

int main(int argc, char **argv)
{
    int busy = 0, bursty = 0;
    double busy_ms = 5, sleep_ms = 5, seconds = 0; /* 0: until killed */
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        char *end;
        if (!strcmp(a, "--busy")) {
            busy = 1;
        } else if (!strcmp(a, "--bursty")) {
            bursty = 1;
        } else if (!strncmp(a, "--bursty=", 9)) {
            bursty = 1;
            busy_ms = parse_number(a + 9, &end);
            if (busy_ms < 0 || *end != ',' || (sleep_ms = parse_number(end + 1, &end)) < 0 ||
                *end || busy_ms + sleep_ms <= 0)
                return usage(argv[0]);
        } else if (!strncmp(a, "--seconds=", 10)) {
            seconds = parse_number(a + 10, &end);
            if (seconds < 0 || *end)
                return usage(argv[0]);
        } else {
            return usage(argv[0]);
        }
    }
    if (busy + bursty != 1)
        return usage(argv[0]);

    /* End with the parent; if it is gone already, we were orphaned before the call. */
    pid_t parent = getppid();
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0 || getppid() != parent)
        return 0;

    double start = now_seconds(), stop = seconds > 0 ? start + seconds : 1e300;
    if (busy) {
        spin_until(stop);
        return 0;
    }
    for (double t = start; t < stop; t = now_seconds()) {
        double spin_end = t + busy_ms * 1e-3;
        spin_until(spin_end < stop ? spin_end : stop);
        double rest = stop - now_seconds();
        if (rest <= 0)
            break;
        sleep_seconds(sleep_ms * 1e-3 < rest ? sleep_ms * 1e-3 : rest);
    }
    return 0;
}
