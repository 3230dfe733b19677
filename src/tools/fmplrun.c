/* fmplrun — FMPL's launcher, also installed as mpiexec and mpirun.
 *
 *     fmplrun -n N [--tag-output] [--timeout S] prog [args...]
 *
 * Design
 * ------
 * fmplrun starts N ranks of `prog` on this host and serves each of them the PMI-1
 * wire protocol (the one MPICH's simple PMI client and Hydra speak) over a private
 * socketpair: the rank finds its end in PMI_FD, with PMI_RANK, PMI_SIZE and
 * FMPL_LAUNCHER=fmplrun beside it. The job's key-value space lives here, in a hash
 * table; barrier_out goes to every rank once all N have sent barrier_in.
 *
 * One thread, one poll() loop, no busy waiting. The loop watches the PMI sockets,
 * a signalfd (SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT — blocked, so they only
 * arrive there), and with --tag-output the ranks' stdout/stderr pipes, which it
 * copies line by line with a "[rank] " prefix, each line in one write so lines
 * never mix. Without --tag-output the ranks inherit stdout and stderr. Rank 0
 * inherits stdin unless it is a terminal; the others read /dev/null.
 *
 * Failure handling. A rank that is killed by a signal, or that exits before it
 * sent cmd=finalize (even with status 0) once the job uses PMI, ends the job:
 * fmplrun prints which rank died and how, sends SIGTERM to every rank, then
 * SIGKILL 0.5 s later. A rank's pending PMI input is read before its exit is
 * judged, so an abort message always wins over "exited before finalize".
 * cmd=abort ends the job with the rank's exit code and message; --timeout ends it
 * with exit status 124; SIGINT/SIGTERM/SIGHUP/SIGQUIT to fmplrun are forwarded to
 * the ranks and end the job with 128+signal.
 *
 * Exit status: the first non-zero rank status in the order ranks ended (a signal
 * counts as 128+signal; an exit before finalize with status 0 counts as 1; an
 * abort with code 0 counts as 1), the code of the failure that ended the job,
 * 124 on timeout, 127 (126) when prog cannot be found (executed); 0 when every
 * rank finalised and exited 0.
 *
 * Cleanup. The ranks form one process group of their own and each has
 * PR_SET_PDEATHSIG=SIGKILL, so even a SIGKILLed fmplrun takes them along. When the
 * last rank is gone, fmplrun SIGKILLs whatever is left in the group (helpers a rank
 * started) and unlinks every /dev/shm entry named "fmpl-<job id>" or
 * "fmpl-<job id>-*": the naming convention of the shared-memory transport
 * (boot.h, boot_job_id). The job id is the PMI kvsname, "fmpl-<pid>-<random hex>".
 */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "boot/pmi_wire.h"
#include "fmpl.h"

#define KEY_MAX 64                 /* PMI key limit, with its NUL */
#define VALUE_MAX 1024             /* PMI value limit, with its NUL */
#define OUT_LINE_MAX 16384         /* --tag-output: longer lines are split */
#define KILL_GRACE_NS 500000000ull /* SIGTERM -> SIGKILL */
#define DRAIN_NS 2000000000ull     /* after the last rank: wait at most this for pipe EOF */
#define EXIT_TIMEOUT 124

/* ------------------------------------------------------------------- types */

typedef struct stream { /* one --tag-output pipe of a rank */
    int fd;             /* read end; -1 when closed */
    int dest;           /* STDOUT_FILENO or STDERR_FILENO */
    size_t len;
    char buf[OUT_LINE_MAX];
} stream_t;

typedef struct rank {
    pid_t pid;
    int pmi_fd;  /* our end of the PMI socketpair; -1 once closed */
    int exec_fd; /* read end of the exec-error pipe, until read */
    int initialized, in_barrier, finalized, reaped;
    size_t inlen;
    char in[PMI_WIRE_LINE_MAX];
    stream_t out[2];
} rank_t;

typedef struct kv {
    struct kv *next;
    char *key, *value;
} kv_t;

static struct job {
    int n;
    rank_t *ranks;
    int tag_output;
    double timeout_s;
    char **argv; /* the program and its arguments */
    char kvsname[64];
    pid_t pgid;
    int sigfd;
    int nlive;    /* ranks not yet reaped */
    int nbarrier; /* ranks waiting in the current barrier */
    int ninit;    /* ranks that sent cmd=init */
    int nfinalized;
    int early_exit; /* a rank that exited 0 without ever using PMI, or -1 */
    int ending;     /* the job is being torn down */
    int killed;     /* SIGKILL already sent */
    int exit_code, exit_code_set;
    uint64_t kill_at, timeout_at, drain_until;
    struct rlimit nofile; /* the descriptor limit the ranks get (ours may be raised) */
    kv_t **buckets;
    size_t nbuckets, nkeys;
} job = {.sigfd = -1, .early_exit = -1};

/* ----------------------------------------------------------------- helpers */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* One message line on stderr, written at once. */
static void say(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void say(const char *fmt, ...)
{
    char line[2048];
    int n = snprintf(line, sizeof line, "fmplrun: ");
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    ssize_t w = write(STDERR_FILENO, line, len);
    (void)w;
}

static void write_all(int fd, const struct iovec *iov, int iovcnt)
{
    struct iovec v[4];
    memcpy(v, iov, (size_t)iovcnt * sizeof *iov);
    struct iovec *p = v;
    while (iovcnt > 0) {
        ssize_t w = writev(fd, p, iovcnt);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0)
            return; /* our output is gone (EPIPE): nothing useful left to do */
        while (iovcnt > 0 && (size_t)w >= p->iov_len) {
            w -= (ssize_t)p->iov_len;
            p++;
            iovcnt--;
        }
        if (iovcnt > 0) {
            p->iov_base = (char *)p->iov_base + w;
            p->iov_len -= (size_t)w;
        }
    }
}

static void set_exit_code(int code)
{
    if (!job.exit_code_set) {
        job.exit_code = code;
        job.exit_code_set = 1;
    }
}

static void signal_ranks(int sig)
{
    if (job.pgid > 0)
        (void)kill(-job.pgid, sig);
    for (int r = 0; r < job.n; r++) /* a rank that left the group still gets it */
        if (job.ranks[r].pid > 0 && !job.ranks[r].reaped)
            (void)kill(job.ranks[r].pid, sig);
}

/* Starts tearing the job down: the first cause wins (its message and code);
 * later calls do nothing. */
static void job_end(int code, int sig, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void job_end(int code, int sig, const char *fmt, ...)
{
    if (job.ending)
        return;
    job.ending = 1;
    if (fmt) {
        char msg[1900];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(msg, sizeof msg, fmt, ap);
        va_end(ap);
        say("%s", msg);
    }
    set_exit_code(code);
    job.timeout_at = 0;
    signal_ranks(sig);
    job.kill_at = now_ns() + KILL_GRACE_NS;
}

/* --------------------------------------------------------- key-value space */

static uint64_t hash_key(const char *s)
{
    uint64_t h = 1469598103934665603ull; /* FNV-1a */
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

static kv_t *kvs_find(const char *key)
{
    if (!job.nbuckets)
        return NULL;
    for (kv_t *e = job.buckets[hash_key(key) & (job.nbuckets - 1)]; e; e = e->next)
        if (strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

static int kvs_grow(void)
{
    size_t nb = job.nbuckets ? 2 * job.nbuckets : 256;
    kv_t **b = calloc(nb, sizeof *b);
    if (!b)
        return -1;
    for (size_t i = 0; i < job.nbuckets; i++) {
        for (kv_t *e = job.buckets[i], *next; e; e = next) {
            next = e->next;
            size_t h = hash_key(e->key) & (nb - 1);
            e->next = b[h];
            b[h] = e;
        }
    }
    free(job.buckets);
    job.buckets = b;
    job.nbuckets = nb;
    return 0;
}

/* Stores key=value (replacing an earlier value). Returns 0, or -1 out of memory. */
static int kvs_put(const char *key, const char *value)
{
    kv_t *e = kvs_find(key);
    char *v = strdup(value);
    if (!v)
        return -1;
    if (e) {
        free(e->value);
        e->value = v;
        return 0;
    }
    if (job.nkeys >= job.nbuckets && kvs_grow() != 0) {
        free(v);
        return -1;
    }
    e = malloc(sizeof *e);
    char *k = strdup(key);
    if (!e || !k) {
        free(e);
        free(k);
        free(v);
        return -1;
    }
    e->key = k;
    e->value = v;
    size_t h = hash_key(key) & (job.nbuckets - 1);
    e->next = job.buckets[h];
    job.buckets[h] = e;
    job.nkeys++;
    return 0;
}

static void kvs_free(void)
{
    for (size_t i = 0; i < job.nbuckets; i++) {
        for (kv_t *e = job.buckets[i], *next; e; e = next) {
            next = e->next;
            free(e->key);
            free(e->value);
            free(e);
        }
    }
    free(job.buckets);
    job.buckets = NULL;
    job.nbuckets = job.nkeys = 0;
}

/* ------------------------------------------------------------- PMI server */

static void pmi_close(rank_t *rk)
{
    if (rk->pmi_fd >= 0)
        close(rk->pmi_fd);
    rk->pmi_fd = -1;
}

/* Sends one reply line built from NULL-terminated key/value pairs. The protocol
 * is lockstep, so a reply that does not fit in the socket at once means the rank
 * stopped reading: that ends the job rather than blocking the launcher. */
static void pmi_reply(rank_t *rk, const char *const *kv)
{
    if (rk->pmi_fd < 0)
        return;
    char line[PMI_WIRE_LINE_MAX];
    size_t len = 0;
    for (; kv[0]; kv += 2)
        if (pmi_wire_append(line, sizeof line - 1, &len, kv[0], kv[1]) != 0)
            break; /* cannot happen: every value is bounded by VALUE_MAX */
    (void)pmi_wire_end(line, sizeof line, &len);
    size_t off = 0;
    while (off < len) {
        ssize_t w = send(rk->pmi_fd, line + off, len - off, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (w < 0 && errno == EINTR)
            continue;
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            job_end(1, SIGTERM, "rank %d (pid %d) does not read its PMI replies; ending the job",
                    (int)(rk - job.ranks), (int)rk->pid);
            return;
        }
        if (w < 0) { /* the rank is gone; its exit status tells the rest */
            pmi_close(rk);
            return;
        }
        off += (size_t)w;
    }
}

static void pmi_reply_rc(rank_t *rk, const char *cmd, int rc, const char *msg)
{
    const char *kv[] = {"cmd", cmd, "rc", rc ? "-1" : "0", "msg", msg, NULL};
    pmi_reply(rk, kv);
}

static void barrier_release(void)
{
    job.nbarrier = 0;
    for (int r = 0; r < job.n; r++) {
        job.ranks[r].in_barrier = 0;
        const char *kv[] = {"cmd", "barrier_out", "rc", "0", NULL};
        pmi_reply(&job.ranks[r], kv);
    }
}

/* A fence can never complete once some rank has finalised: say so instead of hanging. */
static void barrier_check_stuck(void)
{
    if (!job.nbarrier || !job.nfinalized)
        return;
    int in = -1, fin = -1;
    for (int r = 0; r < job.n; r++) {
        if (job.ranks[r].in_barrier && in < 0)
            in = r;
        if (job.ranks[r].finalized && fin < 0)
            fin = r;
    }
    job_end(1, SIGTERM,
            "rank %d entered a fence (PMI barrier) after rank %d called fmpl_finalize; "
            "it can never complete",
            in, fin);
}

/* The abort message is the rest of the line after message= (or error_msg=): old
 * clients send it with unescaped spaces. */
static void pmi_abort(rank_t *rk, const char *raw, const pmi_msg_t *msg)
{
    int r = (int)(rk - job.ranks);
    const char *code_text = pmi_wire_find(msg, "exitcode");
    int code = code_text ? atoi(code_text) : 1;
    char text[1024] = "";
    const char *m = strstr(raw, " message=");
    if (!m)
        m = strstr(raw, " error_msg=");
    if (m) {
        m = strchr(m, '=') + 1;
        size_t k = 0;
        for (; *m && k + 1 < sizeof text; m++) {
            if (*m == '\\' && m[1])
                m++;
            text[k++] = isprint((unsigned char)*m) ? *m : ' ';
        }
        text[k] = 0;
    }
    int status = code & 0xff;
    job_end(status ? status : 1, SIGTERM, "rank %d (pid %d) aborted the job with exit code %d%s%s",
            r, (int)rk->pid, code, text[0] ? ": " : "", text);
}

static void pmi_handle(rank_t *rk, char *line)
{
    int r = (int)(rk - job.ranks);
    char raw[PMI_WIRE_LINE_MAX];
    snprintf(raw, sizeof raw, "%s", line);
    pmi_msg_t msg;
    if (pmi_wire_parse(line, &msg) != 0) {
        job_end(1, SIGTERM, "rank %d (pid %d) sent a malformed PMI line: '%.200s'", r, (int)rk->pid,
                raw);
        return;
    }
    const char *cmd = msg.cmd;
    char num[32];

    if (strcmp(cmd, "init") == 0) {
        const char *ver = pmi_wire_find(&msg, "pmi_version");
        int ok = ver && atoi(ver) == 1;
        const char *kv[] = {"cmd", "response_to_init", "pmi_version", "1", "pmi_subversion", "1",
                            "rc",  ok ? "0" : "-1",    NULL};
        pmi_reply(rk, kv);
        if (!ok) {
            job_end(1, SIGTERM, "rank %d asked for PMI version %s; fmplrun speaks PMI-1 only", r,
                    ver ? ver : "(none)");
            return;
        }
        if (!rk->initialized) {
            rk->initialized = 1;
            job.ninit++;
        }
        if (job.early_exit >= 0)
            job_end(1, SIGTERM,
                    "rank %d (pid %d) exited with status 0 before calling fmpl_finalize",
                    job.early_exit, (int)job.ranks[job.early_exit].pid);
    } else if (strcmp(cmd, "get_maxes") == 0) {
        const char *kv[] = {"cmd", "maxes",      "kvsname_max", "256", "keylen_max",
                            "64",  "vallen_max", "1024",        NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        const char *kv[] = {"cmd", "appnum", "appnum", "0", NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        snprintf(num, sizeof num, "%d", job.n);
        const char *kv[] = {"cmd", "universe_size", "size", num, NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        const char *kv[] = {"cmd", "my_kvsname", "kvsname", job.kvsname, NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "put") == 0) {
        const char *kvs = pmi_wire_find(&msg, "kvsname");
        const char *key = pmi_wire_find(&msg, "key");
        const char *value = pmi_wire_find(&msg, "value");
        if (!value)
            value = "";
        if (!kvs || strcmp(kvs, job.kvsname) != 0)
            pmi_reply_rc(rk, "put_result", -1, "unknown_kvsname");
        else if (!key || !*key || strlen(key) >= KEY_MAX)
            pmi_reply_rc(rk, "put_result", -1, "invalid_key");
        else if (strlen(value) >= VALUE_MAX)
            pmi_reply_rc(rk, "put_result", -1, "value_too_long");
        else if (kvs_put(key, value) != 0)
            pmi_reply_rc(rk, "put_result", -1, "out_of_memory");
        else
            pmi_reply_rc(rk, "put_result", 0, "success");
    } else if (strcmp(cmd, "get") == 0) {
        const char *kvs = pmi_wire_find(&msg, "kvsname");
        const char *key = pmi_wire_find(&msg, "key");
        char mapping[64];
        const char *value = NULL;
        if (key && strcmp(key, "PMI_process_mapping") == 0) {
            /* MPICH's node map: one node holding ranks 0..n-1 */
            snprintf(mapping, sizeof mapping, "(vector,(0,1,%d))", job.n);
            value = mapping;
        } else if (key && kvs && strcmp(kvs, job.kvsname) == 0) {
            const kv_t *e = kvs_find(key);
            value = e ? e->value : NULL;
        }
        if (value) {
            const char *kv[] = {"cmd",     "get_result", "rc",  "0", "msg",
                                "success", "value",      value, NULL};
            pmi_reply(rk, kv);
        } else {
            pmi_reply_rc(rk, "get_result", -1, "key_not_found");
        }
    } else if (strcmp(cmd, "barrier_in") == 0) {
        if (!rk->in_barrier) {
            rk->in_barrier = 1;
            job.nbarrier++;
        }
        if (job.nbarrier == job.n)
            barrier_release();
        else
            barrier_check_stuck();
    } else if (strcmp(cmd, "finalize") == 0) {
        const char *kv[] = {"cmd", "finalize_ack", "rc", "0", NULL};
        pmi_reply(rk, kv);
        if (!rk->finalized) {
            rk->finalized = 1;
            job.nfinalized++;
        }
        barrier_check_stuck();
    } else if (strcmp(cmd, "abort") == 0) {
        pmi_abort(rk, raw, &msg);
    } else {
        job_end(1, SIGTERM,
                "rank %d (pid %d) sent PMI command '%.64s', which fmplrun does not "
                "support",
                r, (int)rk->pid, cmd);
    }
}

/* Reads what the rank sent and handles every complete line. Never blocks. */
static void pmi_input(rank_t *rk)
{
    while (rk->pmi_fd >= 0) {
        ssize_t n = recv(rk->pmi_fd, rk->in + rk->inlen, sizeof rk->in - rk->inlen, MSG_DONTWAIT);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return;
        if (n <= 0) { /* end of file or reset: the exit status tells the rest */
            pmi_close(rk);
            return;
        }
        rk->inlen += (size_t)n;
        char *start = rk->in, *nl;
        while ((nl = memchr(start, '\n', rk->inlen - (size_t)(start - rk->in)))) {
            *nl = 0;
            pmi_handle(rk, start);
            start = nl + 1;
        }
        rk->inlen -= (size_t)(start - rk->in);
        memmove(rk->in, start, rk->inlen);
        if (rk->inlen == sizeof rk->in) {
            job_end(1, SIGTERM, "rank %d (pid %d) sent a PMI line longer than %d bytes",
                    (int)(rk - job.ranks), (int)rk->pid, PMI_WIRE_LINE_MAX);
            pmi_close(rk);
        }
    }
}

/* ------------------------------------------------------------ tag output */

static void stream_emit(int r, stream_t *s, const char *text, size_t len)
{
    char prefix[24];
    int plen = snprintf(prefix, sizeof prefix, "[%d] ", r);
    struct iovec iov[3] = {{prefix, (size_t)plen}, {(void *)text, len}, {"\n", 1}};
    write_all(s->dest, iov, 3);
}

static void stream_input(int r, stream_t *s)
{
    ssize_t n = read(s->fd, s->buf + s->len, sizeof s->buf - s->len);
    if (n < 0 && (errno == EINTR || errno == EAGAIN))
        return;
    if (n <= 0) {
        if (s->len) /* a last line without its newline */
            stream_emit(r, s, s->buf, s->len);
        s->len = 0;
        close(s->fd);
        s->fd = -1;
        return;
    }
    s->len += (size_t)n;
    char *start = s->buf, *nl;
    while ((nl = memchr(start, '\n', s->len - (size_t)(start - s->buf)))) {
        stream_emit(r, s, start, (size_t)(nl - start));
        start = nl + 1;
    }
    s->len -= (size_t)(start - s->buf);
    memmove(s->buf, start, s->len);
    if (s->len == sizeof s->buf) { /* an over-long line: split it */
        stream_emit(r, s, s->buf, s->len);
        s->len = 0;
    }
}

/* ------------------------------------------------------------ exits */

static void judge_exit(rank_t *rk, int status)
{
    int r = (int)(rk - job.ranks);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!job.ending)
            job_end(128 + sig, SIGTERM, "rank %d (pid %d) was killed by signal %d (%s)", r,
                    (int)rk->pid, sig, strsignal(sig));
        set_exit_code(128 + sig);
        return;
    }
    int code = WEXITSTATUS(status);
    if (rk->finalized || job.ending) {
        if (code)
            set_exit_code(code);
        return;
    }
    if (rk->initialized) {
        job_end(code ? code : 1, SIGTERM,
                "rank %d (pid %d) exited with status %d before calling fmpl_finalize", r,
                (int)rk->pid, code);
    } else if (code) {
        job_end(code, SIGTERM, "rank %d (pid %d) exited with status %d", r, (int)rk->pid, code);
    } else if (job.ninit) {
        job_end(1, SIGTERM, "rank %d (pid %d) exited with status 0 before calling fmpl_finalize", r,
                (int)rk->pid);
    } else if (job.early_exit < 0) {
        /* Fine for a program that never uses PMI (fmplrun -n 2 hostname); an error as
         * soon as another rank turns out to use it. */
        job.early_exit = r;
    }
}

static void reap(void)
{
    for (;;) {
        int status;
        pid_t pid = waitpid(-1, &status, WNOHANG);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        for (int r = 0; r < job.n; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->pid != pid || rk->reaped)
                continue;
            rk->reaped = 1;
            job.nlive--;
            pmi_input(rk); /* what it said before it died comes first (an abort) */
            pmi_close(rk);
            judge_exit(rk, status);
            if (rk->in_barrier) {
                rk->in_barrier = 0;
                job.nbarrier--;
            }
            break;
        }
    }
}

/* ------------------------------------------------------------ start-up */

static void usage(FILE *f)
{
    fprintf(f, "Usage: fmplrun -n N [options] program [arguments...]\n"
               "Starts N ranks of program on this host and serves them PMI-1.\n"
               "\n"
               "  -n N, -np N       number of ranks (N >= 1)\n"
               "  --tag-output      prefix every output line with \"[rank] \"\n"
               "  --timeout S       end the job after S seconds (exit status 124);\n"
               "                    default: $MPIEXEC_TIMEOUT, else no limit\n"
               "  -h, --help        this text\n"
               "  --version         print the version\n"
               "\n"
               "If a rank is killed, or exits before calling fmpl_finalize, fmplrun ends the\n"
               "job within 2 seconds and says which rank failed. Exit status: the first\n"
               "non-zero rank status (128+signal for a signal), 124 on timeout, 127 when the\n"
               "program cannot be found; 0 when every rank succeeded.\n");
}

static int parse_count(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = s ? strtol(s, &end, 10) : 0;
    if (!s || !*s || errno || *end || v < 1 || v > 1000000)
        return -1;
    *out = (int)v;
    return 0;
}

static int parse_seconds(const char *s, double *out)
{
    char *end;
    errno = 0;
    double v = s ? strtod(s, &end) : 0;
    if (!s || !*s || errno || *end || !(v > 0) || v > 1e9)
        return -1;
    *out = v;
    return 0;
}

/* Returns the index of the program in argv, or exits (0 for --help/--version). */
static int parse_args(int argc, char **argv)
{
    int i = 1;
    for (; i < argc; i++) {
        const char *a = argv[i];
        const char *val = NULL;
        if (strcmp(a, "--") == 0) {
            i++;
            break;
        }
        if (a[0] != '-')
            break;
        if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) {
            usage(stdout);
            exit(0);
        } else if (strcmp(a, "--version") == 0) {
            printf("fmplrun (FMPL) %s\n", FMPL_VERSION_STRING);
            exit(0);
        } else if (strcmp(a, "--tag-output") == 0 || strcmp(a, "-prepend-rank") == 0) {
            job.tag_output = 1;
        } else if (strcmp(a, "-n") == 0 || strcmp(a, "-np") == 0 || strcmp(a, "--np") == 0 ||
                   strcmp(a, "--n") == 0) {
            val = i + 1 < argc ? argv[++i] : NULL;
            if (parse_count(val, &job.n) != 0) {
                say("%s needs a rank count >= 1, got '%s'", a, val ? val : "");
                exit(2);
            }
        } else if (strncmp(a, "-n=", 3) == 0 || strncmp(a, "-np=", 4) == 0 ||
                   strncmp(a, "--np=", 5) == 0) {
            val = strchr(a, '=') + 1;
            if (parse_count(val, &job.n) != 0) {
                say("%s needs a rank count >= 1", a);
                exit(2);
            }
        } else if (strcmp(a, "--timeout") == 0 || strncmp(a, "--timeout=", 10) == 0) {
            val = a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            if (parse_seconds(val, &job.timeout_s) != 0) {
                say("--timeout needs a number of seconds > 0, got '%s'", val ? val : "");
                exit(2);
            }
        } else {
            say("unknown option '%s' (try fmplrun --help)", a);
            exit(2);
        }
    }
    if (i >= argc) {
        say("no program given (try fmplrun --help)");
        exit(2);
    }
    if (job.n < 1)
        job.n = 1; /* like mpiexec: without -n, one rank */
    if (job.timeout_s <= 0) {
        const char *env = getenv("MPIEXEC_TIMEOUT");
        if (env && *env && parse_seconds(env, &job.timeout_s) != 0) {
            say("MPIEXEC_TIMEOUT='%s' is not a number of seconds > 0", env);
            exit(2);
        }
    }
    return i;
}

/* In the child: becomes rank r and execs the program; never returns. */
static _Noreturn void child_exec(int r, int pmi_fd, int out_fd, int err_fd, int exec_fd,
                                 pid_t parent, const sigset_t *old_mask)
{
    (void)setpgid(0, job.pgid); /* pgid 0 for rank 0: a new group led by it */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* fmplrun died before the line above */
        _exit(127);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    (void)setrlimit(RLIMIT_NOFILE, &job.nofile);

    int fd = dup(pmi_fd); /* a copy without FD_CLOEXEC survives exec */
    if (out_fd >= 0)
        dup2(out_fd, STDOUT_FILENO);
    if (err_fd >= 0)
        dup2(err_fd, STDERR_FILENO);
    if (r != 0 || isatty(STDIN_FILENO)) {
        int null = open("/dev/null", O_RDONLY);
        if (null >= 0 && null != STDIN_FILENO) {
            dup2(null, STDIN_FILENO);
            close(null);
        }
    }
    char num[32];
    snprintf(num, sizeof num, "%d", fd);
    setenv("PMI_FD", num, 1);
    snprintf(num, sizeof num, "%d", r);
    setenv("PMI_RANK", num, 1);
    snprintf(num, sizeof num, "%d", job.n);
    setenv("PMI_SIZE", num, 1);
    setenv("FMPL_LAUNCHER", "fmplrun", 1);
    unsetenv("PMI_ID");
    unsetenv("PMI_PORT");
    execvp(job.argv[0], job.argv);
    int err = errno;
    ssize_t w = write(exec_fd, &err, sizeof err);
    (void)w;
    _exit(err == ENOENT ? 127 : 126);
}

static int start_ranks(const sigset_t *old_mask)
{
    pid_t self = getpid();
    for (int r = 0; r < job.n; r++) {
        rank_t *rk = &job.ranks[r];
        int sv[2], ep[2], op[2] = {-1, -1}, eq[2] = {-1, -1};
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0 ||
            pipe2(ep, O_CLOEXEC) != 0 ||
            (job.tag_output && (pipe2(op, O_CLOEXEC) != 0 || pipe2(eq, O_CLOEXEC) != 0))) {
            say("cannot create the channels of rank %d: %s", r, strerror(errno));
            return -1;
        }
        pid_t pid = fork();
        if (pid < 0) {
            say("cannot start rank %d: fork: %s", r, strerror(errno));
            return -1;
        }
        if (pid == 0)
            child_exec(r, sv[1], op[1], eq[1], ep[1], self, old_mask);
        if (r == 0)
            job.pgid = pid;
        (void)setpgid(pid, job.pgid); /* both sides set it: no race with kill(-pgid) */
        rk->pid = pid;
        job.nlive++;
        close(sv[1]);
        close(ep[1]);
        rk->pmi_fd = sv[0];
        rk->exec_fd = ep[0];
        if (job.tag_output) {
            close(op[1]);
            close(eq[1]);
            rk->out[0] = (stream_t){.fd = op[0], .dest = STDOUT_FILENO};
            rk->out[1] = (stream_t){.fd = eq[0], .dest = STDERR_FILENO};
        }
    }
    /* All ranks start in parallel; now learn whether their exec worked. */
    int failed = 0;
    for (int r = 0; r < job.n; r++) {
        rank_t *rk = &job.ranks[r];
        int err = 0;
        ssize_t n;
        do
            n = read(rk->exec_fd, &err, sizeof err);
        while (n < 0 && errno == EINTR);
        close(rk->exec_fd);
        rk->exec_fd = -1;
        if (n == (ssize_t)sizeof err && !failed) {
            failed = 1;
            job_end(err == ENOENT ? 127 : 126, SIGKILL, "cannot run '%s': %s", job.argv[0],
                    strerror(err));
        }
    }
    return 0;
}

/* Unlinks /dev/shm/fmpl-<job id> and /dev/shm/fmpl-<job id>-*. */
static void shm_cleanup(void)
{
    char prefix[128];
    int plen = snprintf(prefix, sizeof prefix, "fmpl-%s", job.kvsname);
    DIR *d = opendir("/dev/shm");
    if (!d)
        return;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, (size_t)plen) != 0)
            continue;
        char next = e->d_name[plen];
        if (next != 0 && next != '-')
            continue;
        (void)unlinkat(dirfd(d), e->d_name, 0);
    }
    closedir(d);
}

static void handle_signals(void)
{
    struct signalfd_siginfo si;
    while (read(job.sigfd, &si, sizeof si) == (ssize_t)sizeof si) {
        int sig = (int)si.ssi_signo;
        if (sig == SIGCHLD)
            continue;     /* reaped below, after the PMI input of this round */
        if (job.ending) { /* a second interrupt: no more grace */
            signal_ranks(SIGKILL);
            job.killed = 1;
            continue;
        }
        job_end(128 + sig, sig, "received signal %d (%s), ending the job", sig, strsignal(sig));
    }
}

/* ------------------------------------------------------------ main loop */

int main(int argc, char **argv)
{
    int prog = parse_args(argc, argv);
    job.argv = argv + prog;

    /* Descriptors 0-2 must be open, or a socket could land there and be replaced
     * by the rank's stdin/stdout/stderr in the child. */
    for (int fd = open("/dev/null", O_RDWR); fd >= 0; fd = open("/dev/null", O_RDWR)) {
        if (fd > STDERR_FILENO) {
            close(fd);
            break;
        }
    }
    /* Up to four descriptors per rank (PMI socket, exec pipe, two output pipes):
     * take the hard limit for ourselves; the ranks get the limit we were given. */
    if (getrlimit(RLIMIT_NOFILE, &job.nofile) == 0) {
        struct rlimit raised = {job.nofile.rlim_max, job.nofile.rlim_max};
        (void)setrlimit(RLIMIT_NOFILE, &raised);
    } else {
        job.nofile = (struct rlimit){RLIM_INFINITY, RLIM_INFINITY};
    }

    unsigned int salt;
    if (getrandom(&salt, sizeof salt, 0) != (ssize_t)sizeof salt)
        salt = (unsigned int)now_ns();
    snprintf(job.kvsname, sizeof job.kvsname, "fmpl-%ld-%08x", (long)getpid(), salt);

    job.ranks = calloc((size_t)job.n, sizeof *job.ranks);
    struct pollfd *pfd = calloc((size_t)job.n * 3 + 1, sizeof *pfd);
    int *owner = calloc((size_t)job.n * 3 + 1, sizeof *owner);
    if (!job.ranks || !pfd || !owner) {
        say("out of memory for %d ranks", job.n);
        return 1;
    }
    for (int r = 0; r < job.n; r++) {
        job.ranks[r].pmi_fd = job.ranks[r].exec_fd = -1;
        job.ranks[r].out[0].fd = job.ranks[r].out[1].fd = -1;
    }

    sigset_t mask, old_mask;
    sigemptyset(&mask);
    sigaddset(&mask, SIGCHLD);
    sigaddset(&mask, SIGINT);
    sigaddset(&mask, SIGTERM);
    sigaddset(&mask, SIGHUP);
    sigaddset(&mask, SIGQUIT);
    sigprocmask(SIG_BLOCK, &mask, &old_mask);
    signal(SIGPIPE, SIG_IGN);
    job.sigfd = signalfd(-1, &mask, SFD_CLOEXEC | SFD_NONBLOCK);
    if (job.sigfd < 0) {
        say("signalfd: %s", strerror(errno));
        return 1;
    }

    if (start_ranks(&old_mask) != 0)
        job_end(1, SIGKILL, NULL);
    if (job.timeout_s > 0 && !job.ending)
        job.timeout_at = now_ns() + (uint64_t)(job.timeout_s * 1e9);

    for (;;) {
        int open_streams = 0;
        nfds_t np = 0;
        pfd[np] = (struct pollfd){.fd = job.sigfd, .events = POLLIN};
        owner[np++] = -1;
        for (int r = 0; r < job.n; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->pmi_fd >= 0) {
                pfd[np] = (struct pollfd){.fd = rk->pmi_fd, .events = POLLIN};
                owner[np++] = r * 3;
            }
            for (int s = 0; s < 2; s++) {
                if (rk->out[s].fd >= 0) {
                    open_streams++;
                    pfd[np] = (struct pollfd){.fd = rk->out[s].fd, .events = POLLIN};
                    owner[np++] = r * 3 + 1 + s;
                }
            }
        }
        uint64_t now = now_ns();
        if (job.nlive == 0) {
            if (!job.drain_until) {
                /* every rank is gone: take down helpers they left in the group */
                if (job.pgid > 0)
                    (void)kill(-job.pgid, SIGKILL);
                job.drain_until = now + DRAIN_NS;
            }
            if (!open_streams || now >= job.drain_until)
                break;
        }
        uint64_t wake = job.drain_until;
        if (job.kill_at && !job.killed && (!wake || job.kill_at < wake))
            wake = job.kill_at;
        if (job.timeout_at && (!wake || job.timeout_at < wake))
            wake = job.timeout_at;
        int timeout_ms = -1;
        if (wake)
            timeout_ms = wake > now ? (int)((wake - now + 999999) / 1000000) : 0;
        if (timeout_ms > 60000)
            timeout_ms = 60000;

        int ready = poll(pfd, np, timeout_ms);
        if (ready < 0 && errno != EINTR) {
            say("poll: %s", strerror(errno));
            job_end(1, SIGKILL, NULL);
        }
        int got_signal = 0;
        for (nfds_t i = 0; ready > 0 && i < np; i++) {
            if (!pfd[i].revents)
                continue;
            if (owner[i] < 0) {
                got_signal = 1;
                continue;
            }
            rank_t *rk = &job.ranks[owner[i] / 3];
            int which = owner[i] % 3;
            if (which == 0)
                pmi_input(rk);
            else if (rk->out[which - 1].fd >= 0)
                stream_input(owner[i] / 3, &rk->out[which - 1]);
        }
        if (got_signal)
            handle_signals();
        reap();

        now = now_ns();
        if (job.timeout_at && now >= job.timeout_at)
            job_end(EXIT_TIMEOUT, SIGTERM, "job timed out after %g seconds, killing %d ranks",
                    job.timeout_s, job.nlive);
        if (job.kill_at && !job.killed && now >= job.kill_at) {
            signal_ranks(SIGKILL);
            job.killed = 1;
        }
    }

    for (int r = 0; r < job.n; r++) {
        pmi_close(&job.ranks[r]);
        for (int s = 0; s < 2; s++)
            if (job.ranks[r].out[s].fd >= 0)
                close(job.ranks[r].out[s].fd);
    }
    shm_cleanup();
    kvs_free();
    free(job.ranks);
    free(pfd);
    free(owner);
    return job.exit_code_set ? job.exit_code : 0;
}
