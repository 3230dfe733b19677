/* fmpl-info — what this FMPL installation is and how it is configured: the version,
 * the transports the software NIC activates here, whether CMA works and which path large
 * transfers between ranks of a host take (measured, cached or set, and why), the limits
 * in force and every setting the library reads from the environment.
 *
 * It runs fmpl_init, so every layer reads and records its settings, asks the vnic
 * what it found (fmpl_tool.h), and finalizes. Under a launcher every rank does the
 * same and rank 0 prints. */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/statvfs.h>

#include "base/base.h"
#include "boot/boot.h"
#include "fmpl.h"
#include "fmpl/fmpl_tool.h"
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
    fprintf(f, "usage: fmpl-info [--version | --settings | --help]\n"
               "  (no option)  version, transports, CMA, limits and settings\n"
               "  --version    the version only\n"
               "  --settings   the environment settings only (name, value, source, meaning)\n");
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
    boot_t *boot = fmpl_tool_boot();
    vnic_t *v = fmpl_tool_vnic();
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

int main(int argc, char **argv)
{
    int only_version = 0, only_settings = 0;
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--version") || !strcmp(argv[i], "-V")) {
            only_version = 1;
        } else if (!strcmp(argv[i], "--settings")) {
            only_settings = 1;
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
