/* coll_loggp.c — the LogGP model that plans a group's broadcast (seed 003, issue 17 item
 * 4): which of the two bcast algorithms to run (binomial tree or pipelined chain) and the
 * chain's segment size, from the transport's measured parameters.
 *
 * The parameters (LogGP: Alexandrov et al., 1995), as `fmpl-info --loggp` measures them
 * between two ranks with the vnic's own operations (tail-flag puts into the peer's
 * registered memory, the same operation the mailboxes use):
 *   L  latency: the time a small message is in flight, from the end of the sender's
 *      post to the moment the receiver polling its flag sees it (half a ping-pong of
 *      8-byte puts minus the sender's overhead);
 *   o  overhead: the sender's CPU time per small message (one post of an 8-byte put);
 *   g  gap: the time between two small messages of a stream from one sender (the
 *      reciprocal of the message rate), at least o;
 *   G  gap per byte: the added time per byte of large messages. On shm a put is a copy
 *      into the peer's mapped memory, and the message is there for the receiver once it
 *      has copied it out (as a mailbox receive does into the user's buffer), so G is
 *      measured as half the slope of the one-way ping-pong time, the receiver copying
 *      each message out, between 64 KiB and 1 MiB: the time per byte of one such copy.
 *      Those copies run from the caches; the buffers of a larger bcast do not fit them, so
 *      the bytes of a message beyond COLL_LOGGP_NEAR (1 MiB) cost G far, half the slope
 *      of the same ping-pong from 1 to 8 MiB: a message of m bytes copies at
 *          G(m) = (min(m, NEAR) G + max(m - NEAR, 0) G_far) / m   per byte;
 * and one term of our own:
 *   S  CPU switch: what a hop costs on top of L when its receiver must first get a CPU
 *      (the ranks of a host outnumber its CPUs; waiting ranks yield at every poll): the
 *      one-way time of an 8-byte ping-pong with both ranks on one CPU, minus L + 2o.
 *
 * What a message costs in the mailboxes (coll_gsched.c): the sender puts it into the
 * receiver's cell (o + mG), it flies (L), the receiver copies it out of the cell into the
 * user's buffer (o + mG). So one hop of m bytes takes
 *      hop(m) = L + 2o + 2mG.
 * (G below is G(m) of the whole bcast's m: the segments of a chain stream through buffers
 * of m bytes.)
 *
 * Binomial tree (build_bcast_binomial): a rank that has the data sends it to its children
 * one after the other, farthest first; child j of a rank ready at t has it at
 *      t + j (o + mG) + L + o + mG  (+ S when the ranks outnumber the CPUs),
 * and the bcast takes as long as the last rank to be ready. coll_loggp_tree works this out
 * for every rank in the builder's order (no closed form: ranks that are not a power of two
 * leave holes in the tree).
 *
 * Pipelined chain (build_bcast_chain): root -> root+1 -> ... -> root+p-1 in n = ceil(m/s)
 * segments of s bytes, m/n on average (the model uses the average: the last segment is
 * short). The first segment reaches the last rank after p - 1 hops; the others follow at
 * the pace of the slowest stage: a rank in the middle copies every segment out of its
 * cell and puts it into the next rank's, 2(o + sG); with two ranks the root's put and the
 * receiver's copy overlap (the big channel has two cells), o + sG; never faster than g.
 * When the ranks outnumber the CPUs (c = cpus < p), the CPUs must also do all 2(p - 1)
 * copies of a segment, c at a time, and every stage waits for a switch:
 *      hop(s)   = L + 2o + 2sG (+ S)
 *      stage(s) = max(g, (p == 2 ? 1 : 2)(o + sG))                         (p <= c)
 *               = max(g, 2(o + sG), 2(p - 1)(o + sG) / c) + S              (p > c)
 *      T_chain(m, p, s) = (p - 1) hop(s) + (n - 1) stage(s).
 * (Seed 003's eq. 1, T = (hops + 1)(L + sG) + (n - 1)(sG + g), is the same shape for a
 * NIC that copies without the CPU.) With s = m/n, T_chain is convex in n (its 1/n terms
 * have non-negative weights), so the best count is found by a ternary search over n
 * between the segment bounds: segments are at most the big cell's room (FMPL_COLL_SEG,
 * fixed by the area's layout) and at least COLL_LOGGP_SEG_MIN; then the best multiple of
 * 64 bytes near m/n (not every count is possible with such segments).
 *
 * What the model leaves out (docs/performance.md, "LogGP-planned bcast", has the
 * errors): the caches beyond the two per-byte costs, and the engine's own costs per
 * transfer beyond o (acknowledgements, schedule steps).
 *
 * The choice: the tree when m fits its cells (FMPL_COLL_SMALL) and T_tree <= T_chain at
 * the best segment, else the chain; but always the tree up to COLL_LOGGP_TREE_MIN (8 KiB,
 * one default mailbox). At 2 ranks the model finds a chain of two 4 KiB segments faster at
 * 8 KiB, but it measured 1.62-1.69 us against the tree's 0.87-1.01 (mpi_coll, 3
 * interleaved runs with FMPL_COLL_LOGGP=0 and 1): the engine's cost per transfer beyond o
 * is missing from the model. Also, sizes on both sides of the tiny/small channel boundary
 * (248 B) then stay on the tree's channels, where ranks that disagree on the size fail and the
 * channels stay in step (mpi_coll_mismatch), while a disagreement across the tree/chain switch
 * gives up the big channel (it ends the job under the default error handler:
 * coll_mismatch_fatal.sh). Settings the user sets override the model: an explicit
 * FMPL_COLL_BCAST_TREE_MAX fixes the switch, an explicit FMPL_COLL_SEG the segment,
 * FMPL_COLL_LOGGP=0 both (the fixed rules of before), and FMPL_COLL_LOGGP_* replace single
 * parameters.
 *
 * Agreement: every member of a group must build the same schedule, so the plan depends
 * only on (bytes, ranks) and on parameters that are the same on every rank: rank 0 reads
 * them at coll_init (from the cache file `fmpl-info --loggp` writes, else the built-in
 * defaults measured on a 2-CPU Xeon), publishes them in its collective area, and every
 * other rank reads them from there; the settings, which every rank must see alike
 * anyway, are applied after that. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "coll/coll_impl.h"

#define COLL_LOGGP_VERSION 3

/* Built-in parameters: `fmpl-info --loggp` on the 2-CPU Xeon (2.5 GHz) guest the model
 * was written on, shm transport (2026-11-28). */
static const coll_loggp_t loggp_default = {.latency = 66.6,
                                           .overhead = 151.1,
                                           .gap = 151.1,
                                           .per_byte = 0.0928,
                                           .switch_cost = 1278.8,
                                           .cpus = 2};

const coll_loggp_t *coll_loggp_builtin(void)
{
    return &loggp_default;
}

/* G(m): the time per byte of the copies of an m-byte message (see the top). */
static double per_byte(const coll_loggp_t *m, size_t bytes)
{
    if (bytes <= COLL_LOGGP_NEAR || m->per_byte_far <= 0)
        return m->per_byte;
    return ((double)COLL_LOGGP_NEAR * m->per_byte +
            (double)(bytes - COLL_LOGGP_NEAR) * m->per_byte_far) /
           (double)bytes;
}

/* One copy of `bytes` bytes of an m-byte message. */
static double copy_ns(const coll_loggp_t *m, double bytes, size_t message)
{
    return m->overhead + bytes * per_byte(m, message);
}

/* S when the ranks outnumber the CPUs, else 0. */
static double switch_ns(const coll_loggp_t *m, int ranks)
{
    return m->cpus > 0 && ranks > m->cpus ? m->switch_cost : 0.0;
}

/* When the last rank of the subtree of relative rank c (which has the data at t; its
 * children are c + mask for the masks below low, farthest first) has it. */
static double tree_last(int c, int low, int ranks, double t, double send, double arrive)
{
    double last = t, sent = t;
    for (int mask = low >> 1; mask > 0; mask >>= 1)
        if (c + mask < ranks) {
            sent += send;
            last = BASE_MAX(last, tree_last(c + mask, mask, ranks, sent + arrive, send, arrive));
        }
    return last;
}

double coll_loggp_tree(const coll_loggp_t *m, size_t bytes, int ranks)
{
    if (ranks < 2 || bytes == 0)
        return 0.0;
    int top = 1;
    while (top < ranks)
        top <<= 1;
    double send = copy_ns(m, (double)bytes, bytes);
    return tree_last(0, top, ranks, 0.0, send, m->latency + send + switch_ns(m, ranks));
}

/* T_chain for n segments of bytes / n on average (n real: convex in n). */
static double chain_time(const coll_loggp_t *m, size_t bytes, int ranks, double n)
{
    double copy = copy_ns(m, (double)bytes / n, bytes);
    double hop = m->latency + 2.0 * copy + switch_ns(m, ranks);
    double stage = BASE_MAX(m->gap, (ranks == 2 ? 1.0 : 2.0) * copy);
    if (switch_ns(m, ranks) > 0)
        stage = BASE_MAX(stage, 2.0 * (ranks - 1) * copy / m->cpus) + m->switch_cost;
    return (ranks - 1) * hop + (n - 1.0) * stage;
}

double coll_loggp_chain(const coll_loggp_t *m, size_t bytes, int ranks, size_t seg)
{
    if (ranks < 2 || bytes == 0)
        return 0.0;
    if (seg == 0 || seg > bytes)
        seg = bytes;
    return chain_time(m, bytes, ranks, (double)((bytes + seg - 1) / seg));
}

size_t coll_loggp_best_seg(const coll_loggp_t *m, size_t bytes, int ranks, size_t seg_max)
{
    seg_max = BASE_MAX(seg_max - seg_max % 64, (size_t)64);
    if (bytes <= COLL_LOGGP_SEG_MIN || ranks < 2)
        return BASE_MIN(BASE_ALIGN_UP(BASE_MAX(bytes, (size_t)1), 64), seg_max);
    size_t seg_min = BASE_MIN((size_t)COLL_LOGGP_SEG_MIN, seg_max);
    /* the best segment count n: ternary search (convex) */
    size_t lo = (bytes + seg_max - 1) / seg_max, hi = (bytes + seg_min - 1) / seg_min;
    while (hi - lo > 2) {
        size_t a = lo + (hi - lo) / 3, b = hi - (hi - lo) / 3;
        if (chain_time(m, bytes, ranks, (double)a) <= chain_time(m, bytes, ranks, (double)b))
            hi = b;
        else
            lo = a;
    }
    size_t n = lo;
    for (size_t k = lo + 1; k <= hi; k++)
        if (chain_time(m, bytes, ranks, (double)k) < chain_time(m, bytes, ranks, (double)n))
            n = k;
    /* segments are multiples of 64, so not every count is possible: the best of the
     * segments around bytes / n, the smallest of those that give the same count (the
     * most even split: the model takes the average segment) */
    size_t s_lo = BASE_MAX(bytes / (n + 3) / 64 * 64, seg_min);
    size_t s_hi = BASE_MIN(BASE_ALIGN_UP(bytes / (n > 3 ? n - 3 : 1), 64) + 64, seg_max);
    size_t best = s_lo;
    for (size_t seg = s_lo + 64; seg <= s_hi; seg += 64)
        if (coll_loggp_chain(m, bytes, ranks, seg) < coll_loggp_chain(m, bytes, ranks, best))
            best = seg;
    return best;
}

coll_bcast_plan_t coll_loggp_plan(const coll_loggp_t *m, size_t bytes, int ranks, size_t tree_max,
                                  size_t seg_max)
{
    coll_bcast_plan_t p;
    p.seg = coll_loggp_best_seg(m, bytes, ranks, seg_max);
    p.predicted = coll_loggp_chain(m, bytes, ranks, p.seg);
    p.chain = 1;
    if (bytes <= tree_max) {
        double tree = coll_loggp_tree(m, bytes, ranks);
        if (tree <= p.predicted || bytes <= COLL_LOGGP_TREE_MIN) {
            p.chain = 0;
            p.predicted = tree;
        }
    }
    return p;
}

coll_bcast_plan_t coll_loggp_group_plan(const coll_state_t *st, size_t bytes, int ranks)
{
    coll_bcast_plan_t p;
    if (!st->loggp_on) { /* the fixed rules */
        p.chain = bytes > st->bcast_tree_max;
        p.seg = st->seg;
        p.predicted = p.chain ? coll_loggp_chain(&st->loggp, bytes, ranks, p.seg)
                              : coll_loggp_tree(&st->loggp, bytes, ranks);
        return p;
    }
    p = coll_loggp_plan(&st->loggp, bytes, ranks, st->bcast_tree_set ? 0 : st->small, st->seg);
    if (st->seg_set)
        p.seg = st->seg;
    if (st->bcast_tree_set)
        p.chain = bytes > st->bcast_tree_max;
    if (st->seg_set || st->bcast_tree_set)
        p.predicted = p.chain ? coll_loggp_chain(&st->loggp, bytes, ranks, p.seg)
                              : coll_loggp_tree(&st->loggp, bytes, ranks);
    return p;
}

/* ---------------------------------------------------------------- the cache file
 * One file per user (FMPL_COLL_LOGGP_CACHE; by default $XDG_CACHE_HOME/fmpl/loggp, else
 * ~/.cache/fmpl/loggp), lines "fmpl-loggp <version> <transport> <L> <o> <g> <G> <cpus>
 * <S> <G far> <host>", one per transport; a line counts only when its host (the CPU model and the
 * number of CPUs) is this one's. */

/* The CPU model (/proc/cpuinfo) and the CPUs online, without blanks. */
static void host_key(char *buf, size_t len)
{
    char model[128];
    base_cpu_model(model, sizeof model);
    for (char *p = model; *p; p++)
        if (*p == ' ' || *p == '\t')
            *p = '_';
    snprintf(buf, len, "%s/%ld", model, sysconf(_SC_NPROCESSORS_ONLN));
}

const char *coll_loggp_transport(vnic_t *v)
{
    const char *tr = vnic_info(v)->transports;
    return tr && strstr(tr, "udp(forced)") ? "udp" : "shm";
}

int coll_loggp_cache_path(char *buf, size_t len)
{
    const char *set = base_env_str("FMPL_COLL_LOGGP_CACHE", "auto",
                                   "file of the LogGP parameters fmpl-info --loggp measured "
                                   "(auto: $XDG_CACHE_HOME/fmpl/loggp or ~/.cache/fmpl/loggp; "
                                   "none: the built-in ones)");
    return base_cache_file(set, "loggp", buf, len);
}

/* Parses one line of the file; 1 when it is a valid one of `transport` for this host. */
static int cache_line(const char *line, const char *transport, const char *key, coll_loggp_t *m)
{
    int version, cpus;
    char tr[16], host[192];
    double l, o, g, gb, sw, gf;
    if (sscanf(line, "fmpl-loggp %d %15s %lf %lf %lf %lf %d %lf %lf %191s", &version, tr, &l, &o,
               &g, &gb, &cpus, &sw, &gf, host) != 10)
        return 0;
    if (version != COLL_LOGGP_VERSION || strcmp(tr, transport) || strcmp(host, key))
        return 0;
    if (!(l >= 0 && o >= 0 && g >= 0 && gb >= 0 && sw >= 0 && gf >= 0 && l < 1e9 && o < 1e9 &&
          g < 1e9 && gb < 1e6 && sw < 1e9 && gf < 1e6) ||
        cpus < 1)
        return 0;
    *m = (coll_loggp_t){l, o, g, gb, gf, sw, cpus};
    return 1;
}

int coll_loggp_cache_read(const char *transport, coll_loggp_t *m)
{
    char path[1024], key[256], line[512];
    if (!coll_loggp_cache_path(path, sizeof path))
        return 0;
    host_key(key, sizeof key);
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int found = 0;
    while (!found && fgets(line, sizeof line, f))
        found = cache_line(line, transport, key, m);
    fclose(f);
    return found;
}

/* Makes the directories of path (mkdir -p of its dirname). */
static void make_dirs(const char *path)
{
    char dir[1024];
    snprintf(dir, sizeof dir, "%s", path);
    for (char *p = dir + 1; *p; p++)
        if (*p == '/') {
            *p = 0;
            if (mkdir(dir, 0700) != 0 && errno != EEXIST)
                return;
            *p = '/';
        }
}

int coll_loggp_cache_write(const char *transport, const coll_loggp_t *m, char *path, size_t len)
{
    char key[256], tmp[1100], line[512];
    if (!coll_loggp_cache_path(path, len))
        return FMPL_ERR_ARG;
    host_key(key, sizeof key);
    make_dirs(path);
    snprintf(tmp, sizeof tmp, "%s.%ld", path, (long)getpid());
    FILE *out = fopen(tmp, "w");
    if (!out)
        return FMPL_ERR_SYS;
    FILE *in = fopen(path, "r");
    if (in) { /* keep the other transports' and hosts' lines of this format */
        coll_loggp_t other;
        char version[32];
        int vlen = snprintf(version, sizeof version, "fmpl-loggp %d ", COLL_LOGGP_VERSION);
        while (fgets(line, sizeof line, in))
            if (strncmp(line, version, (size_t)vlen) == 0 &&
                !cache_line(line, transport, key, &other))
                fputs(line, out);
        fclose(in);
    }
    fprintf(out, "fmpl-loggp %d %s %.1f %.1f %.1f %.4f %d %.1f %.4f %s\n", COLL_LOGGP_VERSION,
            transport, m->latency, m->overhead, m->gap, m->per_byte, m->cpus, m->switch_cost,
            m->per_byte_far, key);
    int bad = ferror(out);
    bad |= fclose(out) != 0;
    if (bad || rename(tmp, path) != 0) {
        unlink(tmp);
        return FMPL_ERR_SYS;
    }
    return FMPL_SUCCESS;
}
