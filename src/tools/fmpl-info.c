/* fmpl-info — what this FMPL installation is and how it is configured: the version,
 * the transports the software NIC activates here, whether CMA works and which path large
 * transfers between ranks of a host take (measured, cached or set, and why), the limits
 * in force and every setting the library reads from the environment.
 *
 * It runs fmpl_init, so every layer reads and records its settings, asks the vnic
 * what it found (runtime.h), and finalizes. Under a launcher every rank does the
 * same and rank 0 prints.
 *
 * --loggp measures the LogGP parameters of the transport between ranks 0 and 1 (L, o, g,
 * G, G far and our S: src/coll/coll_loggp.c says what each means and how the bcast planner uses
 * them),
 * prints them with how they were measured, and stores them in the cache file the
 * collectives read at start-up. It needs two ranks: started alone, it runs itself under
 * the fmplrun next to it (fmplrun -n 2 fmpl-info --loggp); FMPL_TRANSPORT=udp measures
 * udp over loopback. */
#include <errno.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "base/base.h"
#include "boot/boot.h"
#include "coll/coll.h"
#include "fmpl.h"
#include "runtime/runtime.h"
#include "vnic/vnic.h"

typedef struct info {
    int have_vnic; /* the vnic opened: the fields below are valid */
    char transports[128];
    char shm_paths[1088]; /* paths of large local transfers and why */
    char udp_mac[256];    /* the udp packets' tags, when udp is active */
    int cma;
    size_t inline_max, heap_size;
    int oversubscribed;
    char placement[160];
    int size;
    char backend[32];
    int init_rc; /* fmpl_init's result */
    int rank;
} info_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: fmpl-info [--version | --settings | --loggp | --help]\n"
               "  (no option)  version, transports, CMA, limits and settings\n"
               "  --version    the version only\n"
               "  --settings   the environment settings only (name, value, source, meaning)\n"
               "  --loggp      measure the transport's LogGP parameters between two ranks\n"
               "               and cache them for the bcast planner (runs itself under\n"
               "               fmplrun -n 2; FMPL_TRANSPORT=udp: udp over loopback)\n");
}

static const char *human_size(size_t n, char *buf, size_t len)
{
    if (n >= (1u << 30) && n % (1u << 30) == 0)
        snprintf(buf, len, "%zu GiB", n >> 30);
    else if (n >= (1u << 20) && n % (1u << 20) == 0)
        snprintf(buf, len, "%zu MiB", n >> 20);
    else if (n >= (1u << 10) && n % (1u << 10) == 0)
        snprintf(buf, len, "%zu KiB", n >> 10);
    else
        snprintf(buf, len, "%zu B", n);
    return buf;
}

/* ---- settings ---- */

static void width_cb(const base_setting_t *s, void *arg)
{
    int *w = arg;
    int n = (int)strlen(s->name);
    int v = (int)strlen(s->value);
    if (n > w[0])
        w[0] = n;
    if (v > w[1])
        w[1] = v;
}

static void print_cb(const base_setting_t *s, void *arg)
{
    const int *w = arg;
    printf("  %-*s  %-*s  %-7s  %s\n", w[0], s->name, w[1], s->value,
           s->from_env ? "env" : "default", s->what ? s->what : "");
}

static void print_settings(void)
{
    int w[2] = {7, 5};
    base_env_foreach(width_cb, w);
    printf("Settings read from the environment (%s):\n",
           "value in force; source: env = set by you, default = built-in");
    printf("  %-*s  %-*s  %-7s  %s\n", w[0], "name", w[1], "value", "source", "meaning");
    base_env_foreach(print_cb, w);
}

/* ---- probing ---- */

/* fmpl_init (so every layer reads and records its settings), then the vnic's view. */
static void probe(info_t *in, int *argc, char ***argv)
{
    in->init_rc = fmpl_init(argc, argv);
    if (in->init_rc != FMPL_SUCCESS) {
        fprintf(stderr, "fmpl-info: fmpl_init: %s\n", fmpl_error_string(in->init_rc));
        return;
    }
    boot_t *boot = runtime_boot();
    vnic_t *v = runtime_vnic();
    in->rank = boot_rank(boot);
    in->size = boot_size(boot);
    snprintf(in->backend, sizeof in->backend, "%s", boot_backend(boot));
    const vnic_info_t *vi = vnic_info(v);
    snprintf(in->transports, sizeof in->transports, "%s",
             vi->transports ? vi->transports : "(none)");
    in->cma = vi->cma;
    snprintf(in->shm_paths, sizeof in->shm_paths, "%s", vi->shm_paths ? vi->shm_paths : "?");
    snprintf(in->udp_mac, sizeof in->udp_mac, "%s", vi->udp_mac ? vi->udp_mac : "");
    in->inline_max = vi->inline_max;
    in->heap_size = vi->heap_size;
    in->oversubscribed = vi->oversubscribed;
    snprintf(in->placement, sizeof in->placement, "%s", vi->placement ? vi->placement : "?");
    in->have_vnic = 1;
    /* The shared heap answers: a small allocation proves fmpl_alloc_mem works. */
    void *p = fmpl_alloc_mem(64);
    if (p)
        fmpl_free_mem(p);
    int rc = fmpl_finalize();
    if (rc != FMPL_SUCCESS)
        fprintf(stderr, "fmpl-info: fmpl_finalize: %s\n", fmpl_error_string(rc));
}

static const char *cma_text(const info_t *in)
{
    if (in->cma)
        return "yes (process_vm_readv/writev; which large transfers use it: next line)";
    const base_setting_t *s = base_env_find("FMPL_SHM_CMA");
    if (s && s->from_env && strcmp(s->value, "0") == 0)
        return "no, disabled by FMPL_SHM_CMA=0 (pipelined bounce buffer)";
    return "no, the kernel denies it here (pipelined bounce buffer)";
}

static void print_limit(const char *label, const char *name, const char *unit)
{
    const base_setting_t *s = base_env_find(name);
    if (!s)
        return;
    printf("  %-28s %s%s%s  (%s)\n", label, s->value, unit ? " " : "", unit ? unit : "", name);
}

/* The placement in force, and what FMPL_BIND's rule (fmplrun's --bind-to) does with
 * as many ranks as this process has CPUs, and with twice as many. */
static void print_placement(const info_t *in)
{
    printf("Placement:\n");
    if (in->have_vnic)
        printf("  %-28s %s\n", in->size > 1 ? "rank 0" : "this process", in->placement);
    const base_setting_t *b = base_env_find("FMPL_BIND");
    const char *mode = b ? b->value : "auto";
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) != 0 || strcmp(mode, "none") == 0)
        return;
    int n = CPU_COUNT(&set);
    for (int nlocal = n; nlocal <= 2 * n && nlocal > 1; nlocal += n) {
        char line[256], label[96];
        size_t len = 0;
        line[0] = 0;
        for (int r = 0; r < nlocal && len + 40 < sizeof line; r++) {
            cpu_set_t out;
            char cpus[64];
            base_cpu_place(&set, nlocal, r, strcmp(mode, "core") == 0, &out);
            base_cpu_text(&out, cpus, sizeof cpus);
            len +=
                (size_t)snprintf(line + len, sizeof line - len, "%s%d:%s", r ? " " : "", r, cpus);
        }
        snprintf(label, sizeof label, "%d ranks, FMPL_BIND=%s", nlocal, mode);
        printf("  %-28s rank:CPUs %s\n", label, line);
    }
}

static void print_all(const info_t *in)
{
    char b1[32];
    printf("FMPL %s\n", FMPL_VERSION_STRING);
    printf("  %-28s %s\n", "license", "BSD-3-Clause");
    printf("  %-28s %s\n", "launcher (boot backend)", in->backend[0] ? in->backend : "?");
    if (in->size > 1)
        printf("  %-28s %d\n", "ranks in this job", in->size);

    printf("Transports:\n");
    if (in->have_vnic) {
        printf("  %-28s %s\n", "active", in->transports);
        printf("  %-28s %s\n", "CMA (cross-memory attach)", cma_text(in));
        printf("  %-28s %s\n", "large transfers on a host", in->shm_paths);
        if (in->udp_mac[0])
            printf("  %-28s %s\n", "udp packet tags", in->udp_mac);
    } else {
        printf("  %-28s %s\n", "active", "unknown: the software NIC did not open");
    }

    printf("Limits in force:\n");
    print_limit("matching areas per peer", "FMPL_MAI_MAX", NULL);
    if (in->have_vnic) {
        printf("  %-28s %zu B\n", "inline payload (one cell)", in->inline_max);
        printf("  %-28s %s\n", "shared heap per rank", human_size(in->heap_size, b1, sizeof b1));
    }
    printf("  %-28s %d\n", "CPUs available", base_ncpus());
    struct statvfs sv;
    if (statvfs("/dev/shm", &sv) == 0)
        printf(
            "  %-28s %s\n", "/dev/shm free",
            human_size((size_t)sv.f_bavail * sv.f_frsize / (1u << 20) * (1u << 20), b1, sizeof b1));
    else
        printf("  %-28s unavailable (%s)\n", "/dev/shm free", strerror(errno));
    if (in->have_vnic && in->oversubscribed)
        printf("  %-28s %s\n", "note", "more ranks than CPUs: waiting ranks yield at once");
    print_placement(in);

    if (in->init_rc != FMPL_SUCCESS)
        printf("fmpl_init failed: %s\n", fmpl_error_string(in->init_rc));
    print_settings();
}

/* ---- LogGP (--loggp) ----
 * Ranks 0 and 1 exchange tail-flag puts into each other's registered shared-heap buffer
 * (the operation the collective mailboxes use); a receiver polls the last 8 bytes of the
 * message, progressing the vnic between polls (udp needs it; shm finds the flag at once). */
enum { LG_BIG = 1 << 20, LG_FAR = 8 << 20, LG_RING = 1024, LG_REPS = 5 };
_Static_assert(LG_BIG == COLL_LOGGP_NEAR, "G is measured up to the model's near size");

typedef struct loggp_run {
    vnic_t *v;
    int peer;
    char *mine;     /* registered, LG_FAR bytes: where the peer puts */
    char *src;      /* private source of this rank's puts */
    char *copy;     /* private destination of the receiver's copies */
    int shared_cpu; /* the two ranks run on one CPU */
    vnic_key_t key; /* the peer's buffer */
    uint64_t seq;
} loggp_run_t;

static int lg_put(loggp_run_t *x, size_t off, size_t len, uint64_t flag)
{
    memcpy(x->src + off + len - 8, &flag, 8);
    vnic_op_t op;
    memset(&op, 0, sizeof op);
    op.opcode = VNIC_OP_PUT;
    op.peer = x->peer;
    op.flags = VNIC_F_TAIL_FLAG;
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = x->src + off;
    op.local.u.contig.len = len;
    op.remote.key = x->key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    return vnic_post(x->v, &op);
}

/* Waits for the flag; a rank that shares its CPU yields it at every poll, as the library's
 * waits do on an oversubscribed host. */
static void lg_wait(loggp_run_t *x, size_t flag_off, uint64_t flag)
{
    volatile uint64_t *f = (volatile uint64_t *)(void *)(x->mine + flag_off);
    while (__atomic_load_n(f, __ATOMIC_ACQUIRE) != flag) {
        vnic_progress(x->v);
        if (x->shared_cpu)
            sched_yield();
    }
}

/* One-way time of len-byte messages (ns), a ping-pong of iters round trips in which the
 * receiver copies every message out of its buffer (as a mailbox receive does) before it
 * answers; *post gets the mean time rank 0 spent in one post. */
static double lg_pingpong(loggp_run_t *x, int rank, size_t len, int iters, double *post)
{
    double in_post = 0;
    uint64_t t0 = base_time_ns();
    for (int i = 0; i < iters; i++) {
        uint64_t f = ++x->seq;
        if (rank == 1) {
            lg_wait(x, len - 8, f);
            memcpy(x->copy, x->mine, len);
        }
        uint64_t p0 = base_time_ns();
        lg_put(x, 0, len, f);
        in_post += (double)(base_time_ns() - p0);
        if (rank == 0) {
            lg_wait(x, len - 8, f);
            memcpy(x->copy, x->mine, len);
        }
    }
    if (post)
        *post = in_post / iters;
    return (double)(base_time_ns() - t0) / (2.0 * iters);
}

/* Time per message (ns) of streams of LG_RING 8-byte messages into as many lines, each
 * of which the receiver polls in turn; a stream ends with the receiver's answer. */
static double lg_stream(loggp_run_t *x, int rank, int streams)
{
    uint64_t t0 = base_time_ns();
    for (int s = 0; s < streams; s++) {
        uint64_t f = ++x->seq;
        for (int i = 0; i < LG_RING; i++) {
            size_t line = (size_t)i * BASE_CACHE_LINE;
            if (rank == 0)
                lg_put(x, line, 8, f);
            else
                lg_wait(x, line, f);
        }
        size_t ack = (size_t)LG_RING * BASE_CACHE_LINE;
        if (rank == 1)
            lg_put(x, ack, 8, f);
        else
            lg_wait(x, ack, f);
    }
    return (double)(base_time_ns() - t0) / ((double)streams * LG_RING);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Median of LG_REPS runs of f. */
#define LG_MEDIAN(out, expr)                                                                       \
    do {                                                                                           \
        double r_[LG_REPS];                                                                        \
        for (int i_ = 0; i_ < LG_REPS; i_++)                                                       \
            r_[i_] = (expr);                                                                       \
        qsort(r_, LG_REPS, sizeof r_[0], cmp_double);                                              \
        (out) = r_[LG_REPS / 2];                                                                   \
    } while (0)

/* Started without a launcher: runs `fmplrun -n 2 <this program> --loggp` (the fmplrun of
 * the same build or installation). Returns only when that is impossible. */
static void loggp_relaunch(void)
{
    char self[PATH_MAX], run[PATH_MAX + 16];
    ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
    if (n <= 0)
        return;
    self[n] = 0;
    char *slash = strrchr(self, '/');
    snprintf(run, sizeof run, "%.*s/fmplrun", (int)(slash - self), self);
    if (access(run, X_OK) != 0)
        return;
    char *args[] = {run, "-n", "2", self, "--loggp", NULL};
    fflush(stdout);
    execv(run, args);
}

static int loggp_main(int *argc, char ***argv)
{
    if (!getenv("PMI_FD") && !getenv("PMI_PORT"))
        loggp_relaunch();
    int rc = fmpl_init(argc, argv);
    if (rc != FMPL_SUCCESS) {
        fprintf(stderr, "fmpl-info: fmpl_init: %s\n", fmpl_error_string(rc));
        return 1;
    }
    boot_t *boot = runtime_boot();
    vnic_t *v = runtime_vnic();
    int rank = boot_rank(boot), size = boot_size(boot);
    if (size < 2) {
        fprintf(stderr, "fmpl-info --loggp measures between two ranks: run it as\n"
                        "  fmplrun -n 2 fmpl-info --loggp\n");
        fmpl_finalize();
        return 2;
    }
    const char *transport = coll_loggp_transport(v);
    loggp_run_t x = {v, 1 - rank, NULL, NULL, NULL, 0, 0, 0};
    vnic_key_t mykey = 0;
    int ok = 1;
    if (rank < 2) {
        x.mine = vnic_mem_alloc(v, LG_FAR);
        x.src = calloc(1, LG_FAR);
        x.copy = calloc(1, LG_FAR);
        ok = x.mine && x.src && x.copy &&
             vnic_mr_reg(v, x.mine, LG_FAR, VNIC_ACC_REMOTE_WRITE, &mykey) == FMPL_SUCCESS;
        if (ok)
            memset(x.mine, 0, LG_FAR);
        /* the keys, rank 0 first */
        if (rank == 0)
            ok = ok && fmpl_send(&mykey, sizeof mykey, 1, 0, FMPL_COMM_WORLD) == FMPL_SUCCESS &&
                 fmpl_recv(&x.key, sizeof x.key, 1, 0, FMPL_COMM_WORLD, FMPL_STATUS_IGNORE) ==
                     FMPL_SUCCESS;
        else
            ok = ok &&
                 fmpl_recv(&x.key, sizeof x.key, 0, 0, FMPL_COMM_WORLD, FMPL_STATUS_IGNORE) ==
                     FMPL_SUCCESS &&
                 fmpl_send(&mykey, sizeof mykey, 0, 0, FMPL_COMM_WORLD) == FMPL_SUCCESS;
    }
    double small = 0, post = 0, stream = 0, mid = 0, big = 0, far = 0, shared = 0;
    const size_t mid_len = 64 << 10;
    if (rank < 2 && ok) {
        int udp = strcmp(transport, "udp") == 0, iters = udp ? 2000 : 20000;
        lg_pingpong(&x, rank, 8, iters / 4, NULL); /* warm-up */
        LG_MEDIAN(small, lg_pingpong(&x, rank, 8, iters, &post));
        LG_MEDIAN(stream, lg_stream(&x, rank, udp ? 4 : 40));
        LG_MEDIAN(mid, lg_pingpong(&x, rank, mid_len, udp ? 100 : 1000, NULL));
        LG_MEDIAN(big, lg_pingpong(&x, rank, LG_BIG, udp ? 10 : 100, NULL));
        LG_MEDIAN(far, lg_pingpong(&x, rank, LG_FAR, udp ? 2 : 12, NULL));
        /* both on rank 0's first CPU: what a message costs when its receiver must first
         * get the CPU (an oversubscribed host) */
        cpu_set_t set, one;
        if (sched_getaffinity(0, sizeof set, &set) == 0) {
            int cpu = 0;
            if (rank == 0)
                while (cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set))
                    cpu++;
            if (rank == 0)
                fmpl_send(&cpu, sizeof cpu, 1, 1, FMPL_COMM_WORLD);
            else
                fmpl_recv(&cpu, sizeof cpu, 0, 1, FMPL_COMM_WORLD, FMPL_STATUS_IGNORE);
            CPU_ZERO(&one);
            CPU_SET(cpu, &one);
            if (sched_setaffinity(0, sizeof one, &one) == 0) {
                x.shared_cpu = 1;
                LG_MEDIAN(shared, lg_pingpong(&x, rank, 8, udp ? 200 : 2000, NULL));
                sched_setaffinity(0, sizeof set, &set);
            }
        }
    }
    fmpl_barrier(FMPL_COMM_WORLD);
    if (rank < 2) {
        if (mykey)
            vnic_mr_dereg(v, mykey);
        vnic_mem_free(v, x.mine);
        free(x.src);
        free(x.copy);
    }
    if (rank == 0 && ok) {
        coll_loggp_t m;
        m.overhead = post;
        m.latency = BASE_MAX(small - post, 0.0);
        m.gap = BASE_MAX(stream, post);
        m.per_byte = BASE_MAX((big - mid) / (2.0 * (double)(LG_BIG - mid_len)), 0.0);
        m.per_byte_far = BASE_MAX((far - big) / (2.0 * (double)(LG_FAR - LG_BIG)), 0.0);
        m.switch_cost = BASE_MAX(shared - small, 0.0);
        m.cpus = (int)sysconf(_SC_NPROCESSORS_ONLN);
        printf("LogGP parameters of the %s transport, ranks 0 and 1 (%s), medians of %d runs:\n",
               transport, vnic_info(v)->oversubscribed ? "oversubscribed" : "a CPU each", LG_REPS);
        printf("  L  latency         %8.1f ns    half an 8-byte ping-pong of tail-flag puts "
               "(%.1f ns) minus o\n",
               m.latency, small);
        printf("  o  overhead        %8.1f ns    time in one post of an 8-byte put, during "
               "that ping-pong\n",
               m.overhead);
        printf("  g  gap             %8.1f ns    per message of streams of %d 8-byte puts "
               "the receiver polls in turn (%.1f ns; at least o)\n",
               m.gap, LG_RING, stream);
        printf("  G  gap per byte    %8.4f ns/B  half the slope of the one-way ping-pong time, "
               "the receiver copying each message out, from 64 KiB (%.1f us) to 1 MiB (%.1f "
               "us): a hop copies twice, %.2f GB/s each\n",
               m.per_byte, mid / 1e3, big / 1e3, m.per_byte > 0 ? 1.0 / m.per_byte : 0.0);
        printf("  G far              %8.4f ns/B  the same from 1 MiB to 8 MiB (%.1f us): the "
               "bytes of a message past 1 MiB, whose buffers leave the caches\n",
               m.per_byte_far, far / 1e3);
        printf("  S  CPU switch      %8.1f ns    one-way 8-byte ping-pong with both ranks on one "
               "CPU, waits yielding (%.1f ns), minus L + 2o: a hop to a rank without a CPU\n",
               m.switch_cost, shared);
        printf("  CPUs               %8d\n", m.cpus);
        char path[1024];
        rc = coll_loggp_cache_write(transport, &m, path, sizeof path);
        if (rc == FMPL_SUCCESS)
            printf("Cached in %s: the collectives of later jobs on this host plan their bcast "
                   "with them.\n",
                   path);
        else if (rc == FMPL_ERR_ARG)
            printf("Not cached (FMPL_COLL_LOGGP_CACHE=none).\n");
        else
            printf("Not cached: cannot write %s (%s).\n", path, strerror(errno));
    }
    if (!ok)
        fprintf(stderr, "fmpl-info: rank %d: cannot set up the measurement buffers\n", rank);
    rc = fmpl_finalize();
    return ok && rc == FMPL_SUCCESS ? 0 : 1;
}

int main(int argc, char **argv)
{
    int only_version = 0, only_settings = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
            only_version = 1;
        } else if (!strcmp(argv[i], "--settings")) {
            only_settings = 1;
        } else if (!strcmp(argv[i], "--loggp")) {
            return loggp_main(&argc, &argv);
        } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
            usage(stdout);
            return 0;
        } else {
            fprintf(stderr, "fmpl-info: unknown option '%s'\n", argv[i]);
            usage(stderr);
            return 2;
        }
    }
    if (only_version) {
        printf("FMPL %s\n", FMPL_VERSION_STRING);
        return 0;
    }

    info_t in = {0};
    in.init_rc = FMPL_ERR_NOT_INIT;
    probe(&in, &argc, &argv);
    int ok = in.have_vnic && in.init_rc == FMPL_SUCCESS;
    if (in.rank != 0)
        return ok ? 0 : 1;

    if (only_settings)
        print_settings();
    else
        print_all(&in);
    fflush(stdout);
    return ok ? 0 : 1;
}
