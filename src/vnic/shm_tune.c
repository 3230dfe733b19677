/* shm_tune.c — picks the paths of large transfers between the ranks of a host from what
 * this machine does (the paths and the reasons they differ: shm_tune.h).
 *
 * CONTRACT. vnic_shm_tune runs in every rank at the end of vnic_open. Local rank 0
 * decides, in this order, publishes the choice and the reason in the segment header, and
 * the other local ranks wait for it (progressing, so that local rank 1 serves the trial):
 *   1. settings: FMPL_SHM_GET_PATH=pipeline|cma|shared, or FMPL_SHM_PIPELINE set in the
 *      environment (1: the pipeline, 0: CMA, for puts and gets), or CMA unavailable
 *      (FMPL_SHM_CMA=0 or denied: the pipeline); nothing is measured;
 *   2. more local ranks than the CPUs they may run on (vnic_place): nothing measured (a
 *      trial among ranks that share CPUs measures the scheduler); shared gets and puts
 *      from SHM_CROWDED_SHARE_MIN on, CMA alone below. The pipeline and the shared copy
 *      win only where the target copies on a CPU that would otherwise wait; with ranks
 *      queued on every CPU that holds for long transfers only (a waiting target takes
 *      pieces), while for short ones the target's part is overhead. Measured on the
 *      2-vCPU AMD EPYC guest, 4 ranks (docs/performance.md): the neighbourhood
 *      alltoall's 64 KiB blocks took 65-76 us a call with CMA alone, 80-92 shared; the
 *      1 MiB allreduce (gets of 512 and 256 KiB) 1311-1396 us with CMA alone, 1158-1219
 *      shared when the vCPUs share no cache, the same either way when they do. A rank
 *      whose environment sets FMPL_SHM_SHARED_MIN keeps its value;
 *   3. the cache file (FMPL_SHM_TUNE_CACHE; by default $XDG_CACHE_HOME/fmpl/shm-tune, else
 *      ~/.cache/fmpl/shm-tune): used when its format version, its key (CPU model, kernel
 *      release, CPUs online) and its checksum match; anything else is ignored, and the
 *      trial below rewrites it;
 *   4. with two or more ranks on the host: a trial. Local rank 0 gets 1 MiB and 4 MiB from
 *      a private buffer of local rank 1 by every path, interleaved, and keeps each path's
 *      best time (after an untimed 4 MiB read, 3 rounds at 1 MiB and 2 at 4 MiB: about
 *      4 ms here; interference only slows a run down, so the best is the machine's). The
 *      path with the least time per byte, summed over the two sizes, carries gets; puts
 *      keep the pipeline only when it beat CMA alone. The result goes to the cache file (a
 *      temporary file renamed over it, so concurrent jobs never read half a file), unless
 *      the two best runs of some case differ by over FMPL_SHM_TUNE_SPREAD (50%: quiet runs
 *      differ by up to 40% here, a busy machine's by 2x and more): the next job measures
 *      again then;
 *   5. otherwise (one rank on the host and nothing cached): the pipeline, as before.
 * Every rank then takes the published choice, except that settings in its own
 * environment win (step 1 again, per rank: the initiator alone picks its path, so ranks
 * that differ still interoperate). vnic_info()->shm_paths tells what was chosen and why,
 * for fmpl-info. FMPL_TRANSPORT=udp carries no local transfer over shm: nothing is
 * measured then. */
#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include "vnic/shm_tune.h"

#define TUNE_VERSION 1
#define SHM_CROWDED_SHARE_MIN (256u << 10) /* step 2 of the contract */
#define TUNE_FILE_MAX 4096
#define TUNE_SMALL (1u << 20) /* the two trial sizes: one that fits a core's cache */
#define TUNE_LARGE (4u << 20) /* and one that does not (L2 4 MiB on the Xeon guest) */

static const char *const path_names[SHM_GET_NPATHS] = {"pipeline", "cma", "shared"};

const char *vnic_shm_path_name(int get)
{
    return get >= 0 && get < SHM_GET_NPATHS ? path_names[get] : "?";
}

static int path_parse(const char *text)
{
    for (int i = 0; i < SHM_GET_NPATHS; i++)
        if (strcmp(text, path_names[i]) == 0)
            return i;
    return -1;
}

/* Bandwidths a trial measured, GB/s: [path][0] at TUNE_SMALL, [path][1] at TUNE_LARGE. */
typedef struct tune_result {
    shm_paths_t paths;
    double gbps[SHM_GET_NPATHS][2];
    int steady; /* a trial's two best runs of each case agreed (else it is not cached) */
    double ms;  /* how long the trial took */
} tune_result_t;

static void measured_text(const tune_result_t *t, char *buf, size_t len)
{
    snprintf(buf, len,
             "GB/s at 1 MiB / 4 MiB: pipeline %.1f / %.1f, cma %.1f / %.1f, shared %.1f / %.1f",
             t->gbps[0][0], t->gbps[0][1], t->gbps[1][0], t->gbps[1][1], t->gbps[2][0],
             t->gbps[2][1]);
}

/* ---- settings */

/* The setting `name` when the environment set it (it was read before: shm.c reads its
 * own), else NULL. */
static const base_setting_t *env_set(const char *name)
{
    const base_setting_t *found = base_env_find(name);
    return found && found->from_env ? found : NULL;
}

/* Step 1 of the contract: 1 when this rank's settings fix the paths (out, why). */
static int choice_from_settings(vnic_t *v, shm_paths_t *out, char *why, size_t len)
{
    const char *get = base_env_str("FMPL_SHM_GET_PATH", "auto",
                                   "path of large blocking gets from a local rank's private "
                                   "memory: pipeline, cma, shared (both ranks copy with CMA), "
                                   "or auto (measured once per host, see fmpl-info)");
    const base_setting_t *pipe = env_set("FMPL_SHM_PIPELINE");
    int pipe_on = pipe && strcmp(pipe->value, "0") != 0;
    if (!vnic_shm_cma(v->local)) {
        const base_setting_t *cma = env_set("FMPL_SHM_CMA");
        out->get = SHM_GET_PIPELINE;
        out->put_pipeline = 1;
        snprintf(why, len, "pipeline only: CMA %s",
                 cma && strcmp(cma->value, "0") == 0 ? "disabled by FMPL_SHM_CMA=0"
                                                     : "denied by the kernel");
        return 1;
    }
    if (strcmp(get, "auto") != 0) {
        int g = path_parse(get);
        if (g < 0)
            base_setting_fail("FMPL_SHM_GET_PATH=%s: expected auto, pipeline, cma or shared", get);
        out->get = g;
        out->put_pipeline = pipe ? pipe_on : g == SHM_GET_PIPELINE;
        snprintf(why, len, "set by FMPL_SHM_GET_PATH=%s%s", get,
                 pipe ? (pipe_on ? " and FMPL_SHM_PIPELINE=1" : " and FMPL_SHM_PIPELINE=0") : "");
        return 1;
    }
    if (pipe) {
        out->get = pipe_on ? SHM_GET_PIPELINE : SHM_GET_CMA;
        out->put_pipeline = pipe_on;
        snprintf(why, len, "set by FMPL_SHM_PIPELINE=%d", pipe_on);
        return 1;
    }
    return 0;
}

/* ---- the cache file */

static uint64_t fnv1a(const char *p, size_t n)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ (unsigned char)p[i]) * 0x100000001b3ull;
    return h;
}

/* What the choice depends on: the CPU model, the kernel (its copy routines and CMA) and
 * how many CPUs there are. */
static void host_key(char *buf, size_t len)
{
    char model[128];
    base_cpu_model(model, sizeof model);
    model[strcspn(model, "|")] = 0; /* the key's separator */
    struct utsname u;
    if (uname(&u) != 0)
        snprintf(u.release, sizeof u.release, "unknown");
    snprintf(buf, len, "%s|%s|%ld", model, u.release, sysconf(_SC_NPROCESSORS_ONLN));
}

/* The cache file's path ("" for none): FMPL_SHM_TUNE_CACHE, else the default. */
static void cache_path(char *buf, size_t len, int *is_default)
{
    const char *set = base_env_str("FMPL_SHM_TUNE_CACHE", "auto",
                                   "file caching the measured choice of large-transfer paths "
                                   "(auto: $XDG_CACHE_HOME/fmpl/shm-tune or "
                                   "~/.cache/fmpl/shm-tune; none: measure at every start)");
    *is_default = strcmp(set, "auto") == 0;
    base_cache_file(set, "shm-tune", buf, len);
}

static void cache_format(const tune_result_t *t, const char *key, char *buf, size_t len)
{
    int n = snprintf(buf, len,
                     "fmpl-shm-tune %d\nkey %s\nget %s\nput_pipeline %d\n"
                     "gbps %.2f %.2f %.2f %.2f %.2f %.2f\n",
                     TUNE_VERSION, key, vnic_shm_path_name(t->paths.get), t->paths.put_pipeline,
                     t->gbps[0][0], t->gbps[0][1], t->gbps[1][0], t->gbps[1][1], t->gbps[2][0],
                     t->gbps[2][1]);
    if (n > 0 && (size_t)n < len)
        snprintf(buf + n, len - (size_t)n, "check %016llx\n",
                 (unsigned long long)fnv1a(buf, (size_t)n));
}

/* 1 when the file holds a valid result for this host (the same text cache_format
 * writes, checksum included). */
static int cache_read(const char *path, const char *key, tune_result_t *t)
{
    char buf[TUNE_FILE_MAX + 1];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, TUNE_FILE_MAX);
    close(fd);
    if (n <= 0 || n == TUNE_FILE_MAX)
        return 0;
    buf[n] = 0;
    char get[16];
    tune_result_t r;
    memset(&r, 0, sizeof r);
    if (sscanf(buf, "fmpl-shm-tune %*d\nkey %*[^\n]\nget %15s\nput_pipeline %d\n", get,
               &r.paths.put_pipeline) != 2)
        return 0;
    r.paths.get = path_parse(get);
    const char *g = strstr(buf, "\ngbps ");
    if (!g || sscanf(g, "\ngbps %lf %lf %lf %lf %lf %lf", &r.gbps[0][0], &r.gbps[0][1],
                     &r.gbps[1][0], &r.gbps[1][1], &r.gbps[2][0], &r.gbps[2][1]) != 6)
        return 0;
    if (r.paths.get < 0 || (r.paths.put_pipeline != 0 && r.paths.put_pipeline != 1))
        return 0;
    /* The whole text must be what this version writes for this host. */
    char again[TUNE_FILE_MAX];
    cache_format(&r, key, again, sizeof again);
    if (strcmp(again, buf) != 0)
        return 0;
    *t = r;
    return 1;
}

static void cache_write(const char *path, int make_dirs, const char *key, const tune_result_t *t)
{
    char text[TUNE_FILE_MAX], tmp[PATH_MAX + 32];
    cache_format(t, key, text, sizeof text);
    if (make_dirs) { /* the default path's two last directories (.cache/fmpl) */
        char dir[PATH_MAX];
        snprintf(dir, sizeof dir, "%s", path);
        char *slash = strrchr(dir, '/');
        if (slash) {
            *slash = 0;
            char *up = strrchr(dir, '/');
            if (up && up != dir) {
                *up = 0;
                mkdir(dir, 0700);
                *up = '/';
            }
            mkdir(dir, 0700);
        }
    }
    snprintf(tmp, sizeof tmp, "%s.%d.tmp", path, (int)getpid());
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        BASE_DEBUG("vnic/shm: cannot write the tuning cache %s: %s", tmp, strerror(errno));
        return;
    }
    size_t len = strlen(text);
    int ok = write(fd, text, len) == (ssize_t)len;
    ok = close(fd) == 0 && ok;
    if (!ok || rename(tmp, path) != 0) {
        BASE_DEBUG("vnic/shm: cannot write the tuning cache %s: %s", path, strerror(errno));
        unlink(tmp);
    }
}

/* ---- the trial */

static int tune_key_ready(void *arg)
{
    const shm_tune_area_t *a = arg;
    return __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) == SHM_TUNE_KEY_READY;
}

static int tune_asked(void *arg)
{
    const shm_tune_area_t *a = arg;
    return __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) != SHM_TUNE_DECIDING;
}

static int tune_decided(void *arg)
{
    const shm_tune_area_t *a = arg;
    return __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) == SHM_TUNE_DECIDED;
}

/* Local rank 1's part: when local rank 0 asks for a trial, a private buffer for it to
 * read, served until the choice is published. */
static int trial_serve(vnic_t *v, shm_tune_area_t *a)
{
    int wrc = vnic_wait(v, tune_asked, a, -1);
    if (wrc || __atomic_load_n(&a->state, __ATOMIC_ACQUIRE) == SHM_TUNE_DECIDED)
        return wrc;
    char *buf = NULL;
    vnic_key_t key;
    int rc = FMPL_ERR_NOMEM;
    if (posix_memalign((void **)&buf, 4096, TUNE_LARGE) == 0) {
        memset(buf, 0x5a, TUNE_LARGE);
        rc = vnic_mr_reg(v, buf, TUNE_LARGE, VNIC_ACC_REMOTE_READ, &key);
    }
    if (rc == FMPL_SUCCESS)
        a->key = key;
    /* KEY_READY even without a buffer: key 0 then tells local rank 0 to skip the trial */
    __atomic_store_n(&a->state, SHM_TUNE_KEY_READY, __ATOMIC_RELEASE);
    vnic_shm_wake_all(v->local);
    /* Serve by polling, not with vnic_wait: its back-off would put this rank to sleep
     * during the trial, and a target woken for every get would measure the wake-up, not
     * the path (an application's target waits afresh for each message). A yield now and
     * then lets local rank 0 run should it be queued on this CPU (vnic_cpu_needed). */
    for (unsigned polls = 1; !tune_decided(a); polls++) {
        vnic_progress(v);
        if (polls % 256 == 0 && vnic_cpu_needed(v))
            sched_yield();
    }
    vnic_cpu_release(v);
    if (rc == FMPL_SUCCESS)
        vnic_mr_dereg(v, key);
    free(buf);
    return wrc;
}

typedef struct tune_peer {
    vnic_t *v;
    int world;
} tune_peer_t;

static int tune_consumed(void *arg)
{
    tune_peer_t *tp = arg;
    return vnic_shm_consumed(tp->v->local, tp->world);
}

/* Local rank 0's part: 0 and the result when the trial ran. */
static int trial_run(vnic_t *v, shm_tune_area_t *a, long long spread, tune_result_t *t)
{
    __atomic_store_n(&a->state, SHM_TUNE_TRIAL, __ATOMIC_RELEASE);
    vnic_shm_wake_all(v->local);
    /* local rank 1 answers at once normally; 10 s covers a slow start under load */
    if (vnic_wait(v, tune_key_ready, a, 10ll * 1000 * 1000 * 1000) != FMPL_SUCCESS || a->key == 0)
        return -1;
    char *dst = NULL;
    if (posix_memalign((void **)&dst, 4096, TUNE_LARGE) != 0)
        return -1;
    memset(dst, 0, TUNE_LARGE);
    int peer = v->nodes->local_ranks[1];
    shm_paths_t saved;
    vnic_shm_paths(v->local, &saved);
    static const size_t sizes[2] = {TUNE_SMALL, TUNE_LARGE};
    static const int rounds[2] = {3, 2};
    double best[SHM_GET_NPATHS][2], second[SHM_GET_NPATHS][2];
    for (int p = 0; p < SHM_GET_NPATHS; p++)
        for (int z = 0; z < 2; z++)
            best[p][z] = second[p][z] = DBL_MAX;
    /* Warm-up, not timed: the first large read pins and maps both buffers' pages, which
     * only the first path tried would otherwise pay for. */
    shm_paths_t warm = {SHM_GET_CMA, saved.put_pipeline, 0};
    vnic_shm_set_paths(v->local, &warm);
    uint64_t start = base_time_ns();
    int rc = vnic_get(v, peer, dst, TUNE_LARGE, a->key, 0);
    for (int round = 0; round < 3 && !rc; round++) {
        for (int z = 0; z < 2 && !rc; z++) {
            if (round >= rounds[z])
                continue;
            for (int i = 0; i < SHM_GET_NPATHS && !rc; i++) {
                int p = (i + round) % SHM_GET_NPATHS; /* no path always goes first */
                shm_paths_t try = {p, saved.put_pipeline, 0};
                vnic_shm_set_paths(v->local, &try);
                uint64_t t0 = base_time_ns();
                rc = vnic_get(v, peer, dst, sizes[z], a->key, 0);
                double ns = (double)(base_time_ns() - t0);
                if (ns < best[p][z]) {
                    second[p][z] = best[p][z];
                    best[p][z] = ns;
                } else if (ns < second[p][z]) {
                    second[p][z] = ns;
                }
            }
        }
    }
    vnic_shm_set_paths(v->local, &saved);
    t->ms = (double)(base_time_ns() - start) / 1e6;
    /* Local rank 1 deregisters its buffer once the choice is out: it must have handled
     * every request first (a get finished without its help leaves one behind). */
    tune_peer_t tp = {v, peer};
    vnic_wait(v, tune_consumed, &tp, -1);
    int ok = rc == FMPL_SUCCESS && dst[0] == 0x5a && dst[TUNE_LARGE - 1] == 0x5a;
    free(dst);
    if (!ok)
        return -1;
    double score[SHM_GET_NPATHS];
    int win = 0;
    t->steady = 1;
    for (int p = 0; p < SHM_GET_NPATHS; p++) {
        for (int z = 0; z < 2; z++) {
            t->gbps[p][z] = (double)sizes[z] / BASE_MAX(best[p][z], 1.0);
            /* another job or a descheduled rank disturbs a run by far more than this */
            if (second[p][z] > (1.0 + (double)spread / 100.0) * best[p][z])
                t->steady = 0;
        }
        score[p] = best[p][0] / (double)sizes[0] + best[p][1] / (double)sizes[1];
        if (score[p] < score[win])
            win = p;
    }
    t->paths.get = win;
    t->paths.put_pipeline = score[SHM_GET_PIPELINE] < score[SHM_GET_CMA];
    return 0;
}

/* Local rank 0: the host's choice (steps 2 to 5 of the contract) and its reason. */
static void choose_for_host(vnic_t *v, shm_tune_area_t *a, const char *path, int is_default,
                            long long spread, shm_paths_t *out, char *why, size_t len)
{
    char key[256], meas[160];
    if (v->info.oversubscribed) {
        out->get = SHM_GET_SHARED;
        out->put_pipeline = 0;
        out->share_min = SHM_CROWDED_SHARE_MIN;
        snprintf(why, len,
                 "shared from %u KiB, CMA alone below, not measured: this host's %d ranks "
                 "outnumber their CPUs, so a target helps only with long transfers",
                 SHM_CROWDED_SHARE_MIN >> 10, v->nodes->nlocal);
        return;
    }
    host_key(key, sizeof key);
    tune_result_t t;
    memset(&t, 0, sizeof t);
    if (path[0] && cache_read(path, key, &t)) {
        measured_text(&t, meas, sizeof meas);
        *out = t.paths;
        snprintf(why, len, "from the cache file %.512s (%s)", path, meas);
        return;
    }
    if (v->nodes->nlocal < 2 || v->force_udp || trial_run(v, a, spread, &t) != 0) {
        out->get = SHM_GET_PIPELINE;
        out->put_pipeline = 1;
        snprintf(why, len, "built-in default, not measured (%s)",
                 v->force_udp           ? "FMPL_TRANSPORT=udp"
                 : v->nodes->nlocal < 2 ? "one rank on this host and no cache file"
                                        : "the trial failed");
        return;
    }
    measured_text(&t, meas, sizeof meas);
    *out = t.paths;
    if (path[0] && t.steady)
        cache_write(path, is_default, key, &t);
    char where[640]; /* a path is shown up to 512 bytes */
    if (!path[0])
        snprintf(where, sizeof where, "not cached (FMPL_SHM_TUNE_CACHE=none)");
    else if (!t.steady)
        snprintf(where, sizeof where,
                 "not cached: runs of one case differed by over FMPL_SHM_TUNE_SPREAD percent, "
                 "a busy machine?");
    else
        snprintf(where, sizeof where, "cached in %.512s", path);
    snprintf(why, len, "measured at start-up between local ranks 0 and 1 in %.1f ms (%s); %s", t.ms,
             meas, where);
}

void vnic_shm_tune(vnic_t *v)
{
    shm_tune_area_t *a = vnic_shm_tune_area(v->local);
    int me = vnic_shm_local_index(v->local);
    shm_paths_t mine = {SHM_GET_PIPELINE, 1, 0};
    char why[SHM_TUNE_WHY] = "built-in default (a local rank failed before the host's choice)";
    int rc = FMPL_SUCCESS;
    int fixed = choice_from_settings(v, &mine, why, sizeof why);
    /* read by every rank, used by local rank 0: fmpl-info lists what is in force */
    char path[PATH_MAX];
    int is_default;
    cache_path(path, sizeof path, &is_default);
    long long spread = base_env_int("FMPL_SHM_TUNE_SPREAD", 50, 0, 1000000,
                                    "percent by which the two best runs of one case of the "
                                    "start-up trial may differ for its result to be cached");

    if (me == 0) {
        if (!fixed)
            choose_for_host(v, a, path, is_default, spread, &mine, why, sizeof why);
        a->get = mine.get;
        a->put_pipeline = mine.put_pipeline;
        a->share_min = mine.share_min;
        snprintf(a->why, sizeof a->why, "%s", why);
        __atomic_store_n(&a->state, SHM_TUNE_DECIDED, __ATOMIC_RELEASE);
        vnic_shm_wake_all(v->local);
    } else {
        /* Local rank 1 serves the trial (when there is one: rank 0 may decide without) */
        if (me == 1)
            rc = trial_serve(v, a);
        else
            rc = vnic_wait(v, tune_decided, a, -1);
        if (!fixed && rc == FMPL_SUCCESS) {
            mine.get = a->get;
            mine.put_pipeline = a->put_pipeline;
            mine.share_min = a->share_min;
            snprintf(why, sizeof why, "%s", a->why);
        }
    }
    const base_setting_t *min_set = env_set("FMPL_SHM_SHARED_MIN");
    if (mine.share_min && min_set) { /* this rank's own setting wins (step 1, per rank) */
        mine.share_min = 0;
        size_t n = strlen(why);
        snprintf(why + n, sizeof why - n, " (FMPL_SHM_SHARED_MIN=%s set: it stands)",
                 min_set->value);
    }
    vnic_shm_set_paths(v->local, &mine);
    vnic_shm_paths(v->local, &mine); /* as applied (no CMA: the pipeline) */
    snprintf(v->shm_paths, sizeof v->shm_paths, "gets %s, puts %s; %s",
             vnic_shm_path_name(mine.get),
             mine.get == SHM_GET_SHARED ? "shared"
             : mine.put_pipeline        ? "pipeline"
                                        : "cma",
             why);
    v->info.shm_paths = v->shm_paths;
}
