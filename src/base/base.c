/* base.c — status messages, logging, environment settings, futexes, back-off. */
#include "base/base.h"

#include <errno.h>
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>
#if defined(__x86_64__)
#include <emmintrin.h>
#endif

/* ---- status ---- */

static const char *const base_messages[FMPL_ERR_LAST] = {
    [FMPL_SUCCESS] = "success",
    [FMPL_ERR_ARG] = "invalid argument",
    [FMPL_ERR_RANK] = "invalid rank",
    [FMPL_ERR_COMM] = "invalid communicator",
    [FMPL_ERR_MAI] = "matching-area index out of range",
    [FMPL_ERR_BUSY] = "matching area busy: an operation with this index is still in flight",
    [FMPL_ERR_TRUNCATE] = "message truncated: longer than the receive buffer",
    [FMPL_ERR_SPOOL] = "send spool full: the buffer given to fmpl_sendbuf_set has no room",
    [FMPL_ERR_TIMEOUT] = "operation timed out",
    [FMPL_ERR_NOMEM] = "out of memory",
    [FMPL_ERR_NOT_INIT] = "library not initialised (call fmpl_init first)",
    [FMPL_ERR_INIT] = "initialisation failed or repeated",
    [FMPL_ERR_TYPE] = "invalid datatype",
    [FMPL_ERR_OP] = "invalid reduction operation",
    [FMPL_ERR_ROOT] = "invalid root",
    [FMPL_ERR_BUFFER] = "invalid buffer",
    [FMPL_ERR_KEY] = "remote access denied: wrong key or outside the registered region",
    [FMPL_ERR_PEER] = "a peer process died or stopped answering",
    [FMPL_ERR_SYS] = "system call failed",
    [FMPL_ERR_UNSUPPORTED] = "operation not supported by the active transport",
    [FMPL_ERR_NO_PENDING] = "no pending operation matches this wait",
    [FMPL_ERR_INTERNAL] = "internal error (a bug in FMPL: please report it)",
    [FMPL_ERR_MISMATCH] = "the ranks of a collective disagree on its size",
};

const char *base_strerror(int code)
{
    if (code < 0 || code >= FMPL_ERR_LAST || !base_messages[code])
        return "unknown error code";
    return base_messages[code];
}

/* ---- logging ---- */

int base_debug_enabled;
static int base_log_rank = -1;

void base_log_set_rank(int rank)
{
    base_log_rank = rank;
}

static void base_vlog(const char *fmt, va_list ap)
{
    char line[1024];
    int n = base_log_rank >= 0 ? snprintf(line, sizeof line, "fmpl[%d]: ", base_log_rank)
                               : snprintf(line, sizeof line, "fmpl: ");
    if (n < 0)
        return;
    vsnprintf(line + n, sizeof line - (size_t)n, fmt, ap);
    size_t len = strlen(line);
    if (len + 1 < sizeof line) {
        line[len++] = '\n';
        line[len] = 0;
    }
    ssize_t w = write(STDERR_FILENO, line, len); /* one write: lines of ranks do not mix */
    (void)w;
}

void base_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vlog(fmt, ap);
    va_end(ap);
}

_Noreturn void base_fatal(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vlog(fmt, ap);
    va_end(ap);
    abort();
}

_Noreturn void base_setting_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    base_vlog(fmt, ap);
    va_end(ap);
    exit(BASE_EXIT_SETTING);
}

/* ---- environment settings ---- */

#define BASE_MAX_SETTINGS 128
static base_setting_t base_settings[BASE_MAX_SETTINGS];
static int base_nsettings;
static pthread_mutex_t base_settings_lock = PTHREAD_MUTEX_INITIALIZER;

/* The layer of a source file: the folder after the last "src/" in its path. */
static void base_layer_of(const char *file, char *out, size_t size)
{
    const char *p = NULL;
    for (const char *q = file; (q = strstr(q, "src/")); q += 4)
        p = q + 4;
    size_t n = p ? strcspn(p, "/") : 0;
    if (!p || !p[n] || n == 0 || n >= size)
        snprintf(out, size, "%s", "base");
    else
        snprintf(out, size, "%.*s", (int)n, p);
}

static void base_record(const char *file, const char *name, const char *what, const char *value,
                        int from_env, base_setting_kind_t kind, long long min, long long max)
{
    pthread_mutex_lock(&base_settings_lock);
    for (int i = 0; i < base_nsettings; i++)
        if (strcmp(base_settings[i].name, name) == 0)
            goto out;
    if (base_nsettings < BASE_MAX_SETTINGS) {
        base_setting_t *s = &base_settings[base_nsettings];
        s->name = name;
        s->what = what;
        snprintf(s->value, sizeof s->value, "%s", value);
        s->from_env = from_env;
        s->kind = kind;
        s->min = min;
        s->max = max;
        base_layer_of(file, s->layer, sizeof s->layer);
        /* published last: a reader that sees the count sees the record */
        __atomic_store_n(&base_nsettings, base_nsettings + 1, __ATOMIC_RELEASE);
    }
out:
    pthread_mutex_unlock(&base_settings_lock);
}

int base_env_count(void)
{
    return __atomic_load_n(&base_nsettings, __ATOMIC_ACQUIRE);
}

const base_setting_t *base_env_at(int i)
{
    return i >= 0 && i < base_env_count() ? &base_settings[i] : NULL;
}

void base_env_foreach(void (*fn)(const base_setting_t *s, void *arg), void *arg)
{
    int n = base_env_count();
    for (int i = 0; i < n; i++)
        fn(&base_settings[i], arg);
}

const base_setting_t *base_env_find(const char *name)
{
    int n = base_env_count();
    for (int i = 0; i < n; i++)
        if (strcmp(base_settings[i].name, name) == 0)
            return &base_settings[i];
    return NULL;
}

int base_env_writable(const char *name, int (*apply)(long long value), int all_equal)
{
    base_setting_t *s = (base_setting_t *)base_env_find(name);
    if (!s || !apply || s->kind == BASE_SETTING_STR)
        return FMPL_ERR_ARG;
    pthread_mutex_lock(&base_settings_lock);
    s->apply = apply;
    s->all_equal = all_equal;
    pthread_mutex_unlock(&base_settings_lock);
    return FMPL_SUCCESS;
}

int base_env_write(int i, long long value)
{
    if (i < 0 || i >= base_env_count())
        return FMPL_ERR_ARG;
    base_setting_t *s = &base_settings[i];
    pthread_mutex_lock(&base_settings_lock);
    int rc = FMPL_ERR_UNSUPPORTED;
    if (s->apply) {
        rc = value < s->min || value > s->max ? FMPL_ERR_ARG : s->apply(value);
        if (rc == FMPL_SUCCESS) {
            snprintf(s->value, sizeof s->value, "%lld", value);
            s->from_env = 0;
        }
    }
    pthread_mutex_unlock(&base_settings_lock);
    return rc;
}

long long base_env_int_at(const char *file, const char *name, long long def, long long min,
                          long long max, const char *what)
{
    const char *s = getenv(name);
    long long v = def;
    if (s && *s) {
        char *end;
        errno = 0;
        v = strtoll(s, &end, 0);
        if (errno || end == s)
            base_setting_fail("%s=%s is not a number (%s)", name, s, what);
        switch (*end) {
        case 'k':
        case 'K':
            v <<= 10;
            end++;
            break;
        case 'm':
        case 'M':
            v <<= 20;
            end++;
            break;
        case 'g':
        case 'G':
            v <<= 30;
            end++;
            break;
        default: break;
        }
        if (*end)
            base_setting_fail("%s=%s: unexpected '%s' (%s)", name, s, end, what);
        if (v < min || v > max)
            base_setting_fail("%s=%s is out of range [%lld, %lld] (%s)", name, s, min, max, what);
    }
    char buf[32];
    snprintf(buf, sizeof buf, "%lld", v);
    base_record(file, name, what, buf, s && *s, BASE_SETTING_INT, min, max);
    return v;
}

int base_env_bool_at(const char *file, const char *name, int def, const char *what)
{
    const char *s = getenv(name);
    int v = def;
    if (s && *s) {
        if (!strcmp(s, "1") || !strcasecmp(s, "yes") || !strcasecmp(s, "on") ||
            !strcasecmp(s, "true"))
            v = 1;
        else if (!strcmp(s, "0") || !strcasecmp(s, "no") || !strcasecmp(s, "off") ||
                 !strcasecmp(s, "false"))
            v = 0;
        else
            base_setting_fail("%s=%s is not a boolean (use 1/0, yes/no, on/off) (%s)", name, s,
                              what);
    }
    base_record(file, name, what, v ? "1" : "0", s && *s, BASE_SETTING_BOOL, 0, 1);
    return v;
}

const char *base_env_str_at(const char *file, const char *name, const char *def, const char *what)
{
    const char *s = getenv(name);
    const char *v = (s && *s) ? s : def;
    base_record(file, name, what, v ? v : "(unset)", s && *s, BASE_SETTING_STR, 0, 0);
    return v;
}

/* ---- CPU ---- */

int base_ncpus(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0)
        return CPU_COUNT(&set) > 0 ? CPU_COUNT(&set) : 1;
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

void base_cpu_model(char *buf, size_t size)
{
    snprintf(buf, size, "unknown");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char line[256];
    while (fgets(line, sizeof line, f)) {
        char *colon = strchr(line, ':');
        if (colon && (strncmp(line, "model name", 10) == 0 || strncmp(line, "cpu model", 9) == 0)) {
            char *p = colon + 1;
            while (*p == ' ' || *p == '\t')
                p++;
            p[strcspn(p, "\n")] = 0;
            snprintf(buf, size, "%s", p);
            break;
        }
    }
    fclose(f);
}

int base_cache_file(const char *set, const char *name, char *buf, size_t size)
{
    buf[0] = 0;
    if (strcmp(set, "none") == 0)
        return 0;
    if (strcmp(set, "auto") != 0) {
        snprintf(buf, size, "%s", set);
        return buf[0] != 0;
    }
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    if (xdg && xdg[0] == '/')
        snprintf(buf, size, "%s/fmpl/%s", xdg, name);
    else if (home && home[0] == '/')
        snprintf(buf, size, "%s/.cache/fmpl/%s", home, name);
    return buf[0] != 0;
}

/* ---- CPU placement ---- */

/* A sysfs topology number of cpu (core_id, physical_package_id), or dflt. */
static int base_cpu_topology_read(int cpu, const char *what, int dflt)
{
    char path[96];
    snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/topology/%s", cpu, what);
    FILE *f = fopen(path, "r");
    int v = dflt;
    if (f) {
        if (fscanf(f, "%d", &v) != 1)
            v = dflt;
        fclose(f);
    }
    return v;
}

/* Package and core of every CPU, read once per process. */
static struct {
    int package[CPU_SETSIZE], core[CPU_SETSIZE];
} base_topo;
static pthread_once_t base_topo_once = PTHREAD_ONCE_INIT;

static void base_topo_read(void)
{
    long conf = sysconf(_SC_NPROCESSORS_CONF); /* CPUs beyond: no sysfs entry to read */
    for (int c = 0; c < CPU_SETSIZE; c++) {
        int known = c < conf;
        base_topo.package[c] = known ? base_cpu_topology_read(c, "physical_package_id", 0) : 0;
        base_topo.core[c] = known ? base_cpu_topology_read(c, "core_id", c) : c;
    }
}

typedef struct base_cpu_slot {
    int cpu, package, core, thread; /* thread: its place among its core's CPUs */
} base_cpu_slot_t;

static int base_cpu_by_core(const void *a, const void *b)
{
    const base_cpu_slot_t *x = a, *y = b;
    if (x->package != y->package)
        return x->package < y->package ? -1 : 1;
    if (x->core != y->core)
        return x->core < y->core ? -1 : 1;
    return x->cpu < y->cpu ? -1 : x->cpu > y->cpu;
}

static int base_cpu_by_thread(const void *a, const void *b)
{
    const base_cpu_slot_t *x = a, *y = b;
    if (x->thread != y->thread)
        return x->thread < y->thread ? -1 : 1;
    return base_cpu_by_core(a, b);
}

int base_cpu_place(const cpu_set_t *set, int nlocal, int index, int one_cpu, cpu_set_t *out)
{
    CPU_ZERO(out);
    pthread_once(&base_topo_once, base_topo_read);
    base_cpu_slot_t slot[CPU_SETSIZE];
    int n = 0;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, set)) {
            slot[n].cpu = c;
            slot[n].package = base_topo.package[c];
            slot[n].core = base_topo.core[c];
            n++;
        }
    if (n == 0 || nlocal < 1 || index < 0)
        return 0;
    qsort(slot, (size_t)n, sizeof *slot, base_cpu_by_core);
    int ncores = 0;
    for (int i = 0; i < n; i++) {
        int same =
            i > 0 && slot[i].package == slot[i - 1].package && slot[i].core == slot[i - 1].core;
        slot[i].thread = same ? slot[i - 1].thread + 1 : 0;
        ncores += !same;
    }
    if (!one_cpu && nlocal <= ncores) {
        /* cores [index * k, index * k + k) with all their threads */
        int k = ncores / nlocal, first = index % nlocal * k, core = -1, count = 0;
        for (int i = 0; i < n; i++) {
            core += slot[i].thread == 0;
            if (core >= first && core < first + k) {
                CPU_SET(slot[i].cpu, out);
                count++;
            }
        }
        return count;
    }
    /* one CPU each: first threads of every core, then second threads, ... */
    qsort(slot, (size_t)n, sizeof *slot, base_cpu_by_thread);
    CPU_SET(slot[index % n].cpu, out);
    return 1;
}

void base_cpu_text(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && len + 24 < size; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        len += (size_t)snprintf(buf + len, size - len, len ? ",%d" : "%d", c);
        if (last > c)
            len += (size_t)snprintf(buf + len, size - len, "-%d", last);
        c = last;
    }
}

/* ---- futex ---- */

int base_futex_wait(uint32_t *addr, uint32_t val, int64_t timeout_ns)
{
    struct timespec ts, *tp = NULL;
    if (timeout_ns >= 0) {
        ts.tv_sec = (time_t)(timeout_ns / 1000000000);
        ts.tv_nsec = (long)(timeout_ns % 1000000000);
        tp = &ts;
    }
    long r = syscall(SYS_futex, addr, FUTEX_WAIT, val, tp, NULL, 0);
    if (r == -1 && errno == ETIMEDOUT)
        return FMPL_ERR_TIMEOUT;
    return FMPL_SUCCESS;
}

void base_futex_wake(uint32_t *addr, int n)
{
    syscall(SYS_futex, addr, FUTEX_WAKE, n, NULL, NULL, 0);
}

/* ---- back-off ---- */

int base_backoff_oversubscribed;

static struct {
    int configured;
    uint64_t spin_ns, yield_ns;
    int64_t sleep_ns;
    int oversubscribed;     /* as configured, before FMPL_SPIN_US=0 */
    int nlocal;             /* ranks of the job on this host (0: unknown) */
    int online;             /* CPUs online on this host (all, not only ours) */
    uint64_t crowd_next_ns; /* when base_host_crowded looks at /proc/loadavg again */
    int crowded;            /* its last answer */
} base_bo;

/* 1 when more tasks are runnable on this host than the job has ranks here, and than it
 * has CPUs online: other processes compete for the CPUs (the count is the whole
 * machine's, so on a large host shared with other jobs only a load beyond its CPUs
 * counts). Looks at /proc/loadavg's "running/total" field at most every
 * BASE_CROWD_CHECK_NS per process (a read costs a few us); 0 when it cannot tell. Any
 * thread (a racy refresh is harmless: both answers come from the file). */
#define BASE_CROWD_CHECK_NS 10000000
static int base_host_crowded(uint64_t now)
{
    if (now < __atomic_load_n(&base_bo.crowd_next_ns, __ATOMIC_RELAXED))
        return __atomic_load_n(&base_bo.crowded, __ATOMIC_RELAXED);
    __atomic_store_n(&base_bo.crowd_next_ns, now + BASE_CROWD_CHECK_NS, __ATOMIC_RELAXED);
    int crowded = 0, fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        char buf[128];
        ssize_t n = read(fd, buf, sizeof buf - 1);
        close(fd);
        int running = 0;
        if (n > 0) {
            buf[n] = 0;
            if (sscanf(buf, "%*s %*s %*s %d/", &running) == 1)
                crowded =
                    base_bo.nlocal > 0 && running > base_bo.nlocal && running > base_bo.online;
        }
    }
    __atomic_store_n(&base_bo.crowded, crowded, __ATOMIC_RELAXED);
    return crowded;
}

static int base_backoff_set_spin(long long us)
{
    __atomic_store_n(&base_bo.spin_ns, (uint64_t)us * 1000, __ATOMIC_RELAXED);
    base_backoff_oversubscribed = base_bo.oversubscribed || us == 0;
    return FMPL_SUCCESS;
}

static int base_backoff_set_yield(long long us)
{
    __atomic_store_n(&base_bo.yield_ns, (uint64_t)us * 1000, __ATOMIC_RELAXED);
    return FMPL_SUCCESS;
}

static int base_backoff_set_sleep(long long us)
{
    __atomic_store_n(&base_bo.sleep_ns, (int64_t)us * 1000, __ATOMIC_RELAXED);
    return FMPL_SUCCESS;
}

void base_backoff_configure(int oversubscribed, int nlocal)
{
    base_bo.spin_ns = (uint64_t)base_env_int("FMPL_SPIN_US", 2000, 0, 10000000,
                                             "microseconds a waiting rank spins (giving its CPU "
                                             "only to a rank of the job that needs it) before "
                                             "it sleeps; 0: yield at every poll") *
                      1000;
    base_bo.yield_ns = (uint64_t)base_env_int("FMPL_YIELD_US", 2000, 0, 100000000,
                                              "microseconds a waiting rank yields the CPU at every "
                                              "poll before it sleeps, when the host's ranks "
                                              "outnumber its CPUs and no other process competes "
                                              "(else it sleeps at once)") *
                       1000;
    base_bo.sleep_ns = base_env_int("FMPL_SLEEP_US", 2000, 10, 1000000,
                                    "longest single sleep of a waiting rank, microseconds (a "
                                    "wake-up normally ends it sooner)") *
                       1000;
    base_bo.configured = 1;
    base_bo.oversubscribed = oversubscribed;
    base_bo.nlocal = nlocal;
    base_bo.online = (int)sysconf(_SC_NPROCESSORS_ONLN);
    base_bo.crowd_next_ns = 0; /* look again at the next decision */
    /* No spin phase: base_backoff_next asks base_backoff_decide at every poll. */
    base_backoff_oversubscribed = oversubscribed || base_bo.spin_ns == 0;
    /* The three may change at run time (MPI_T): each wait reads them at every decision. */
    base_env_writable("FMPL_SPIN_US", base_backoff_set_spin, 0);
    base_env_writable("FMPL_YIELD_US", base_backoff_set_yield, 0);
    base_env_writable("FMPL_SLEEP_US", base_backoff_set_sleep, 0);
}

base_backoff_action_t base_backoff_decide(base_backoff_t *b)
{
    if (BASE_UNLIKELY(!base_bo.configured))
        base_backoff_configure(0, 0);
    uint64_t now = base_time_ns();
    if (!b->start_ns)
        b->start_ns = now;
    uint64_t idle = now - b->start_ns;
    if (b->oversubscribed) {
        /* Some rank of this host has no CPU: hand ours over at every poll, while the
         * job's ranks are all that compete for the CPUs. When other processes do too,
         * sleep at once: a yield hands the CPU to one of them for up to a time slice, and
         * a rank that polls is only runnable when its message arrives, where a sleeping
         * one is woken and preempts the running process (with 4 busy loops beside a
         * 4-rank job on 2 CPUs: test mpi_comm_basic 55 s polling, 4 s sleeping). */
        b->last = idle < base_bo.yield_ns && !base_host_crowded(now) ? BASE_BACKOFF_YIELD
                                                                     : BASE_BACKOFF_SLEEP;
        return b->last;
    }
    if (idle < base_bo.spin_ns) {
        /* Past the first 2 us (longer than any answer from a running peer), once every
         * 64 polls: if a peer we may wait for sits runnable on this CPU (the scheduler
         * put it here, or the ranks were bound so), yield so that it runs now; if not,
         * keep the CPU (a yield would hand it to an unrelated process). */
        b->last = BASE_BACKOFF_SPIN;
        return idle >= 2000 ? BASE_BACKOFF_YIELD_IF_NEEDED : BASE_BACKOFF_SPIN;
    }
    b->last = BASE_BACKOFF_SLEEP;
    return b->last;
}

int64_t base_backoff_sleep_ns(void)
{
    return base_bo.sleep_ns ? base_bo.sleep_ns : 2000000;
}

/* ---- memory ---- */

void base_copy_stream(void *dst, const void *src, size_t n)
{
#if defined(__x86_64__)
    char *d = dst;
    const char *sp = src;
    size_t head = (size_t)(-(uintptr_t)d & 15);
    if (n < head + 64) {
        memcpy(dst, src, n);
        return;
    }
    memcpy(d, sp, head);
    d += head;
    sp += head;
    n -= head;
    for (; n >= 64; n -= 64, d += 64, sp += 64)
        for (int k = 0; k < 64; k += 16)
            _mm_stream_si128((__m128i *)(void *)(d + k),
                             _mm_loadu_si128((const __m128i *)(const void *)(sp + k)));
    memcpy(d, sp, n);
    _mm_sfence();
#else
    memcpy(dst, src, n);
#endif
}
