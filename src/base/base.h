/* base.h — the bottom layer: status codes and messages, logging, environment
 * settings, clocks, CPU hints, futexes and the wait back-off policy.
 * Depends on nothing but libc and the public error list. Thread-safe unless a
 * function says otherwise. */
#ifndef FMPL_BASE_H
#define FMPL_BASE_H

#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

#include "fmpl_errors.h"

#define BASE_CACHE_LINE 64
#define BASE_ALIGNED __attribute__((aligned(BASE_CACHE_LINE)))
#define BASE_LIKELY(x) __builtin_expect(!!(x), 1)
#define BASE_UNLIKELY(x) __builtin_expect(!!(x), 0)
#define BASE_NOINLINE __attribute__((noinline))
#define BASE_INLINE inline __attribute__((always_inline))
#define BASE_MIN(a, b) ((a) < (b) ? (a) : (b))
#define BASE_MAX(a, b) ((a) > (b) ? (a) : (b))
#define BASE_ALIGN_UP(x, a) (((x) + ((a)-1)) & ~((size_t)(a)-1))

/* ---- status ---- */

/* The message for an FMPL_* status code; never NULL, for any int. */
const char *base_strerror(int code);

/* ---- logging ---- */

/* Prints "fmpl[rank]: message" to stderr. Never blocks on anything but stderr. */
void base_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Prints like base_log, then calls abort(). Never returns. */
_Noreturn void base_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* For a setting the user got wrong (malformed, out of range, too small for what it must
 * hold): prints like base_log, then ends the process with exit status
 * BASE_EXIT_SETTING, which launchers report as an exit, not as a crash. The message
 * names the setting, its value and what it must be. Never returns. */
#define BASE_EXIT_SETTING 78 /* EX_CONFIG of sysexits.h */
_Noreturn void base_setting_fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Sets the rank shown in log lines (-1: none). */
void base_log_set_rank(int rank);
/* Debug output, enabled by FMPL_DEBUG=1. */
extern int base_debug_enabled;
#define BASE_DEBUG(...)                                                                            \
    do {                                                                                           \
        if (BASE_UNLIKELY(base_debug_enabled))                                                     \
            base_log(__VA_ARGS__);                                                                 \
    } while (0)

/* ---- environment settings ----
 * Every setting read through these functions is recorded (name, value, default,
 * description) so fmpl-info can list them. A malformed or out-of-range value is a
 * fatal configuration error with a clear message: silently ignoring it would hide
 * a user's mistake. */

/* Integer setting; accepts decimal with an optional K/M/G suffix (powers of 1024). */
long long base_env_int_at(const char *file, const char *name, long long def, long long min,
                          long long max, const char *what);
/* Boolean setting: 1/0, yes/no, on/off, true/false. */
int base_env_bool_at(const char *file, const char *name, int def, const char *what);
/* String setting; returns def when unset. The result stays valid for the process. */
const char *base_env_str_at(const char *file, const char *name, const char *def, const char *what);
/* The readers name the source file that reads the setting: its layer (the folder under
 * src/) is recorded with it, and is the setting's MPI_T category. */
#define base_env_int(...) base_env_int_at(__FILE__, __VA_ARGS__)
#define base_env_bool(...) base_env_bool_at(__FILE__, __VA_ARGS__)
#define base_env_str(...) base_env_str_at(__FILE__, __VA_ARGS__)

typedef enum { BASE_SETTING_INT = 0, BASE_SETTING_BOOL, BASE_SETTING_STR } base_setting_kind_t;
typedef struct base_setting {
    const char *name, *what;
    char value[64]; /* the value in force, as text */
    int from_env;   /* 1 when the environment set it */
    base_setting_kind_t kind;
    long long min, max; /* the accepted range (int: as given; bool: 0..1; str: 0..0) */
    char layer[8];      /* the layer that reads it: base, boot, vnic, dt, coll, fmpl, mpi */
    /* Set by base_env_writable: the setting may change while the process runs
     * (MPI_T_cvar_write); apply puts a new value in force. all_equal: the value must be
     * the same on every rank (the program writes it everywhere between two calls). */
    int (*apply)(long long value);
    int all_equal;
} base_setting_t;
/* Calls fn for every setting read so far, in the order first read. */
void base_env_foreach(void (*fn)(const base_setting_t *s, void *arg), void *arg);
/* The record of setting `name` once it has been read, else NULL. */
const base_setting_t *base_env_find(const char *name);
/* Number of settings read so far; they are numbered 0..n-1 in the order first read, and
 * a number never changes meaning. */
int base_env_count(void);
/* Setting number i (0 <= i < base_env_count()), else NULL. */
const base_setting_t *base_env_at(int i);
/* Declares that int or bool setting `name` (already read) may change at run time:
 * apply(value) puts a value in its range in force, returning FMPL_SUCCESS, or
 * FMPL_ERR_ARG for a value it cannot take now. FMPL_ERR_ARG: unknown name, or a string. */
int base_env_writable(const char *name, int (*apply)(long long value), int all_equal);
/* Puts value in force for writable setting number i and records it (its text value,
 * from_env 0). FMPL_ERR_UNSUPPORTED: not writable; FMPL_ERR_ARG: out of range or refused
 * by the setting. Thread-safe; the setting's readers see the new value at their next use. */
int base_env_write(int i, long long value);

/* ---- memory ----
 * Zeroes the n bytes at p (n a constant, as in sizeof) with 16-byte stores: for objects
 * of a few hundred bytes cleared on a hot path (an MPI request). gcc expands a memset of
 * that size inline as `rep stos`, twice as slow on the CPU we measured (Xeon model 85:
 * 22 ns against 12 for 424 bytes); clang turns this loop into a call of libc's memset,
 * which uses vector stores too. */
static inline void base_zero(void *p, size_t n)
{
    typedef char base_v16_t __attribute__((vector_size(16), aligned(1), may_alias));
    base_v16_t z = {0}, *v = p;
    size_t i = 0;
#pragma GCC unroll 64
    for (; i < n / 16; i++)
        v[i] = z;
    if (n % 16)
        memset((char *)p + n / 16 * 16, 0, n % 16);
}

/* Copies n bytes from src to dst with non-temporal stores where the CPU has them (x86-64:
 * 16-byte streaming stores to the 16-byte-aligned middle; memcpy elsewhere): for data that
 * another process reads next, so that the writer neither fetches the destination's lines
 * nor keeps them. Ends with a store fence (the stores are ordered before later ones). */
void base_copy_stream(void *dst, const void *src, size_t n);

/* ---- clocks ---- */
static inline uint64_t base_time_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* ---- CPU ---- */
static inline void base_cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    __asm__ __volatile__("yield" ::: "memory");
#endif
}
/* Number of CPUs this process may run on (sched_getaffinity). */
int base_ncpus(void);
/* The CPU's model name (/proc/cpuinfo's "model name" or "cpu model"; "unknown") in buf, cut
 * short when buf is too small: what tuning caches are keyed by. Reads a file. */
void base_cpu_model(char *buf, size_t size);
/* The file of a tuning cache named `name` from its setting's value `set`: "none" gives
 * "" (no file), "auto" the user's cache directory ($XDG_CACHE_HOME/fmpl/name, else
 * $HOME/.cache/fmpl/name; "" when neither is an absolute path), anything else is the path
 * itself. Written to buf; returns 1 when buf names a file. */
int base_cache_file(const char *set, const char *name, char *buf, size_t size);

/* ---- CPU placement ----
 * Which CPUs of `set` local rank `index` of `nlocal` ranks is bound to (out), by the
 * rule both fmplrun and the library's own binding follow. The CPUs are taken in
 * topology order (package, core; sysfs, else CPU number):
 *  - one_cpu (bind to core): one CPU each, distinct cores first, then a core's other
 *    hardware threads, round robin when the ranks outnumber the CPUs;
 *  - otherwise (auto): with at least as many cores as ranks, a domain of whole cores
 *    each (ncores / nlocal of them, so threads of a rank, e.g. OpenMP, keep their
 *    cores and no two ranks share one); else as one_cpu.
 * Returns the number of CPUs in out (0 when set is empty). Reads sysfs; never blocks
 * otherwise. */
int base_cpu_place(const cpu_set_t *set, int nlocal, int index, int one_cpu, cpu_set_t *out);
/* set as a CPU list ("0-3,6") in buf, cut short when buf is too small. Never blocks. */
void base_cpu_text(const cpu_set_t *set, char *buf, size_t size);

/* ---- futex (process-shared) ---- */
/* Sleeps while *addr == val, at most timeout_ns (<0: no limit). Returns 0 when woken or
 * the value differed, FMPL_ERR_TIMEOUT on timeout. May block. */
int base_futex_wait(uint32_t *addr, uint32_t val, int64_t timeout_ns);
/* Wakes up to n sleepers on addr. Never blocks. */
void base_futex_wake(uint32_t *addr, int n);

/* ---- wait back-off ----
 * The policy of every wait loop: spin, then sleep. A spinning rank gives its CPU away
 * only to a rank of this job that needs it now (a peer runnable on this CPU, which the
 * caller can tell: see vnic_cpu_needed), never to unrelated processes: they are the
 * scheduler's business, and a yield to one of them costs up to a time slice. With more
 * ranks than CPUs on the host (oversubscribed; or FMPL_SPIN_US=0) it yields at every
 * poll instead, for FMPL_YIELD_US, and sleeps at once while more tasks are runnable on
 * the host than the job has ranks there and than it has CPUs (base.c says why). A loop calls
 * base_backoff_next() after each unsuccessful poll and acts on the answer. */
/* SPIN: poll again; YIELD_IF_NEEDED: spinning still, but yield the CPU if a rank of
 * this job waits for it (the caller knows how to tell); YIELD: sched_yield; SLEEP: block
 * (futex) for base_backoff_sleep_ns at most. */
typedef enum {
    BASE_BACKOFF_SPIN,
    BASE_BACKOFF_YIELD_IF_NEEDED,
    BASE_BACKOFF_YIELD,
    BASE_BACKOFF_SLEEP
} base_backoff_action_t;
typedef struct base_backoff {
    uint64_t start_ns; /* first clock reading of the wait (0: not yet; poll 64 when spinning) */
    uint32_t polls;
    int oversubscribed;
    base_backoff_action_t last; /* the previous answer */
} base_backoff_t;
/* Process-wide knobs, set at init by the vnic (FMPL_SPIN_US, FMPL_YIELD_US, FMPL_SLEEP_US);
 * may be called again (the vnic does once the host's placement is known: nlocal ranks
 * of the job on this host, 0 when unknown). */
void base_backoff_configure(int oversubscribed, int nlocal);
/* No spin phase (oversubscribed, or FMPL_SPIN_US=0): set by base_backoff_configure,
 * read by base_backoff_init. */
extern int base_backoff_oversubscribed;
static inline void base_backoff_init(base_backoff_t *b)
{
    b->start_ns = 0;
    b->polls = 0;
    b->oversubscribed = base_backoff_oversubscribed;
    b->last = BASE_BACKOFF_SPIN;
}
base_backoff_action_t base_backoff_decide(base_backoff_t *b);
/* The answer for the next poll; inline for the common case (spinning, between clock
 * reads), the rest in base_backoff_decide. */
static inline base_backoff_action_t base_backoff_next(base_backoff_t *b)
{
    b->polls++;
    /* While spinning, read the clock only every 64 polls (it costs ~20 ns), the first
     * time at poll 64: a wait that ends sooner never reads it. */
    if (BASE_LIKELY(b->last == BASE_BACKOFF_SPIN && (b->polls & 63) != 0 && !b->oversubscribed))
        return BASE_BACKOFF_SPIN;
    return base_backoff_decide(b);
}
/* Sleep period once sleeping (ns): short so a missed wake-up costs little. */
int64_t base_backoff_sleep_ns(void);
/* For a polling loop that has no condition to hand to a wait (it must re-issue an
 * operation to look, as RMA lock retries do): call once per poll, with *polls zero at
 * the loop's start. Every 64th call gives the CPU away (sched_yield). Blocks only as
 * sched_yield does. */
static inline void base_poll_pause(unsigned *polls)
{
    if (++*polls % 64 == 0)
        sched_yield();
}

#endif
