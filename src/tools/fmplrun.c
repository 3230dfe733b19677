/* fmplrun — FMPL's launcher, also installed as mpiexec and mpirun.
 *
 *     fmplrun -n N [--tag-output] [--timeout S] prog [args...]
 *     fmplrun -n N --hosts h1[:slots],h2,... [--launcher CMD] [--pmi-addr A] prog [args...]
 *
 * Design
 * ------
 * fmplrun starts N ranks of `prog` on this host and serves each of them the PMI-1
 * wire protocol (the one MPICH's simple PMI client and Hydra speak) over a private
 * socketpair: the rank finds its end in PMI_FD, with PMI_RANK, PMI_SIZE and
 * FMPL_LAUNCHER=fmplrun beside it. The job's key-value space lives here, in a hash
 * table; barrier_out goes to every rank once all N have sent barrier_in.
 *
 * Several hosts (--hosts). Ranks are placed round after round, `slots` consecutive
 * ranks per host. A socketpair cannot cross ssh, so then every rank speaks PMI over
 * TCP: we listen on --pmi-addr (default: the source address of the route toward the
 * first other host, else our name's address; 127.0.0.1 when all hosts are this one)
 * and each rank gets PMI_PORT=addr:port, PMI_ID=rank, FMPL_NODE=<host>, and a random
 * per-job FMPL_PMI_TOKEN. An accepted connection is "pending" until its first line,
 * cmd=initack pmiid=R token=T (MPICH's handshake plus our token), makes it rank R's
 * channel (answered with initack and set size/rank/debug); anything else is refused
 * with a message. The listening socket closes once every rank has connected.
 * Strangers cannot block the port (the port listens on a LAN address): a connection
 * must send its initack line within PENDING_DEADLINE_S, or it is closed; at most
 * pend_cap connections wait (n + PENDING_EXTRA), at most pend_source_cap from one
 * IPv4 address (the most ranks of one host + PENDING_SOURCE_EXTRA). A new connection
 * is never refused for want of a slot: it evicts the oldest waiting connection of its
 * own address when that address holds its share, else, when all slots are taken, the
 * oldest of the address holding the most; and its first line is read at once (a rank
 * sends it right after connecting). So a rank always gets through, whatever idle or
 * slow-loris clients hold; refusals are reported five per kind, then counted. Ranks
 * on this host (its name, first label, localhost) are forked as usual; the others are
 * started through the launcher: CMD's words with {host} replaced (or the host
 * appended), then `env -u PMI_FD -u PMI_RANK -u PMI_SIZE PMI_PORT=... ... FMPL_*=...
 * prog args`, those words shell-quoted when the launcher is ssh or rsh. The process
 * we fork and wait for is then the launcher; its exit stands for the rank's. Since it
 * may outlive the rank (ssh), a TCP channel that closes before cmd=finalize ends the
 * job after LOST_GRACE_NS unless an exit status explained it first; a launcher that
 * fails before its rank connected ends the job, naming rank and host. --pmi-addr alone
 * runs the TCP path with every rank on this host.
 *
 * One thread, one poll() loop, no busy waiting. The loop watches the PMI sockets,
 * a signalfd (SIGCHLD, SIGINT, SIGTERM, SIGHUP, SIGQUIT — blocked, so they only
 * arrive there), and with --tag-output the ranks' stdout/stderr pipes, which it
 * copies line by line with a "[rank] " prefix, each line in one write so lines
 * never mix. Without --tag-output the ranks inherit stdout and stderr. Rank 0
 * inherits stdin unless it is a terminal; the others read /dev/null.
 *
 * Spawn (PMI-1 cmd=spawn, as MPICH's simple PMI sends it: one "mcmd=spawn" block of
 * key=value lines ending in "endcmd" per command, spawnssofar counting to totspawns,
 * one cmd=spawn_result after the last). The processes of one request form a new job
 * ("world"): ranks 0..n-1 over all its commands, appnum = the command's index, its own
 * kvsname (ours + "-s<k>", so the /dev/shm cleanup covers it), key-value space with the
 * preput keys, and barrier. They are forked here with socketpairs, also with --hosts
 * (info "host" must name this host), appended to job.ranks, which has room for
 * SPAWN_MAX of them from the start so that rank pointers never move; they are judged
 * like the first ranks (a spawned process that dies ends everything). If one of them
 * cannot be started (errcodes says which errno), all of that request's processes are
 * killed and their exits ignored: the spawn fails as a whole. Info keys wdir and path
 * are honoured, other keys ignored. The name service (publish_name, lookup_name,
 * unpublish_name) is one table for every world. MPI_Comm_spawn (src/mpi/spawn.c) uses
 * this command with the parents' port as a preput key.
 *
 * Stopped ranks. waitpid(WUNTRACED | WCONTINUED) sees a rank stop (CLD_STOPPED:
 * SIGSTOP, SIGTSTP, a debugger) and continue. A rank stopped for FMPL_STOPPED_WARN
 * seconds (default 10; 0: never) is named once per stop, since the job cannot progress
 * without it; --timeout's message names every rank stopped at that moment, and
 * the signals that end a job are followed by SIGCONT for stopped ranks.
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
 * Cleanup. The ranks (and launchers) form one process group of their own and each has
 * PR_SET_PDEATHSIG=SIGKILL, so even a SIGKILLed fmplrun takes them along. When the
 * last rank is gone, fmplrun SIGKILLs whatever is left in the group (helpers a rank
 * started) and unlinks every /dev/shm entry named "fmpl-<job id>" or
 * "fmpl-<job id>-*": the naming convention of the shared-memory transport
 * (boot.h, boot_job_id). The job id is the PMI kvsname, "fmpl-<pid>-<random hex>".
 * Only this host's /dev/shm is cleaned: ranks on other hosts are on their own.
 */
#include <arpa/inet.h>
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
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

#include "base/base.h"
#include "boot/pmi_wire.h"
#include "fmpl.h"

#define KEY_MAX 64                 /* PMI key limit, with its NUL */
#define VALUE_MAX 1024             /* PMI value limit, with its NUL */
#define OUT_LINE_MAX 16384         /* --tag-output: longer lines are split */
#define KILL_GRACE_NS 500000000ull /* SIGTERM -> SIGKILL */
#define DRAIN_NS 2000000000ull     /* after the last rank: wait at most this for pipe EOF */
#define EXIT_TIMEOUT 124
#define DEFAULT_LAUNCHER "ssh -o BatchMode=yes"
#define LOST_GRACE_NS 1000000000ull /* TCP: a lost connection waits this for an exit status */
#define PENDING_EXTRA 64            /* connections awaiting initack beyond one per rank */
#define PENDING_SOURCE_EXTRA 16     /* per source address, beyond the ranks of one host */
#define PENDING_DEADLINE_S 3        /* a connection shows its token within this many seconds */
#define PENDING_REPORTS 5           /* closed strangers reported one by one; the rest counted */
#define SPAWN_MAX 1024              /* processes all spawns together may add */
#define SPAWN_WORLDS_MAX 256        /* spawns (jobs started by cmd=spawn) per fmplrun */
#define SPAWN_LINES_MAX 4096        /* key=value lines of one spawn request, all blocks */

/* ------------------------------------------------------------------- types */

typedef struct stream { /* one --tag-output pipe of a rank */
    int fd;             /* read end; -1 when closed */
    int dest;           /* STDOUT_FILENO or STDERR_FILENO */
    size_t len;
    char buf[OUT_LINE_MAX];
} stream_t;

typedef struct spawn_req spawn_req_t;

typedef struct rank {
    int world;          /* index in job.worlds: 0 for the ranks of -n, k for spawn k's */
    int appnum;         /* MPI_APPNUM: the command of spawn_multiple it runs (0 for -n) */
    char **argv;        /* its program and arguments (spawned ranks), else NULL: job.argv */
    char *wdir;         /* spawn info "wdir": directory it starts in, or NULL */
    char *path;         /* spawn info "path": directories searched for the program, or NULL */
    spawn_req_t *spawn; /* a cmd=spawn request being received (mcmd=spawn ... endcmd) */
    pid_t pid;          /* the rank, or for a rank on another host its launcher process */
    int pmi_fd;         /* our end of the PMI socketpair or TCP connection; -1 when none */
    int exec_fd;        /* read end of the exec-error pipe, until read */
    int host;           /* index in job.hosts (--hosts), else -1 */
    int bound;          /* 1: bind the rank to cpus (--bind-to) */
    cpu_set_t cpus;
    int initialized, in_barrier, finalized, reaped;
    uint64_t stopped_at; /* when it stopped (CLD_STOPPED), 0 while it runs */
    int stop_sig;        /* the signal that stopped it */
    int stop_warned;     /* the FMPL_STOPPED_WARN message was printed for this stop */
    int connected;       /* TCP mode: the rank's connection passed the initack handshake */
    uint64_t lost_at;    /* TCP mode: its connection closed before finalize; judged then */
    size_t inlen;
    char in[PMI_WIRE_LINE_MAX];
    stream_t out[2];
} rank_t;

typedef struct spawn_app { /* one command of a spawn, shared by the ranks that run it */
    char **argv;           /* program and arguments, NULL-terminated */
    char *wdir, *path;     /* info "wdir" and "path", or NULL */
} spawn_app_t;

struct spawn_req { /* a cmd=spawn request while its blocks arrive */
    int in_block;  /* between mcmd=spawn and endcmd */
    int nlines;    /* key=value lines so far, every block; a block ends with key "endcmd" */
    int overflow;  /* more than SPAWN_LINES_MAX lines: refused at the end */
    char *key[SPAWN_LINES_MAX], *val[SPAWN_LINES_MAX];
};

typedef struct world { /* a job: the ranks of -n (world 0), or the children of one spawn */
    spawn_app_t *apps; /* a spawn's commands, [napps] */
    int napps;
    char kvsname[96]; /* its PMI kvsname; its /dev/shm entries are named after it */
    int first, n;     /* its ranks are job.ranks[first .. first + n) */
    int nbarrier;     /* ranks waiting in its current barrier */
    int nfinalized;
    int failed; /* a spawn that failed: its ranks are killed, their exits not judged */
    int parent; /* the rank that spawned it, -1 for world 0 */
} world_t;

typedef struct host { /* one entry of --hosts */
    char name[256];
    int slots; /* ranks placed per round (default 1) */
    int local; /* this host: ranks are forked directly, not through the launcher */
} host_t;

typedef struct pending { /* an accepted TCP connection before its initack line */
    int fd;
    uint32_t source;   /* the peer's IPv4 address, network order */
    uint64_t deadline; /* closed unless its initack line came by then */
    uint64_t order;    /* accept order: the oldest is evicted first */
    size_t len;
    char in[256];
    char peer[64]; /* "address:port", for messages */
} pending_t;

typedef struct name { /* one entry of the name service (MPI_Publish_name) */
    struct name *next;
    char *service, *port;
} name_t;

typedef struct kv {
    struct kv *next;
    int world; /* the key-value space (kvsname) it belongs to */
    char *key, *value;
} kv_t;

static struct job {
    int n;      /* ranks of -n (world 0) */
    int nranks; /* ranks of every world: job.ranks[0 .. nranks), room for n + SPAWN_MAX */
    rank_t *ranks;
    world_t *worlds; /* room for SPAWN_WORLDS_MAX + 2: the first, the spawns, a refused one */
    int nworlds;
    sigset_t old_mask; /* the signal mask the ranks start with */
    int tag_output;
    int bind; /* --bind-to (default FMPL_BIND): BIND_AUTO, BIND_NONE or BIND_CORE */
    double timeout_s;
    char **argv; /* the program and its arguments */
    char kvsname[64];
    pid_t pgid;
    int sigfd;
    int nlive;      /* ranks not yet reaped */
    int ninit;      /* ranks that sent cmd=init */
    int early_exit; /* a rank that exited 0 without ever using PMI, or -1 */
    int ending;     /* the job is being torn down */
    int killed;     /* SIGKILL already sent */
    int exit_code, exit_code_set;
    uint64_t kill_at, timeout_at, drain_until;
    struct rlimit nofile; /* the descriptor limit the ranks get (ours may be raised) */
    kv_t **buckets;
    size_t nbuckets, nkeys;
    name_t *names; /* the name service: published service -> port, newest first */
    /* multi-host mode (--hosts) and PMI over TCP (--hosts or --pmi-addr) */
    host_t *hosts;
    int nhosts;
    const char *launcher; /* --launcher, split into words at start-up */
    const char *pmi_addr; /* --pmi-addr, or NULL for the default */
    int tcp;              /* ranks reach the PMI server over TCP (PMI_PORT) */
    int listen_fd;        /* TCP: the PMI server's socket until every rank connected */
    int nconnected;       /* TCP: ranks whose connection passed the handshake */
    char port_text[64];   /* PMI_PORT's value: "address:port" */
    char token[33];       /* FMPL_PMI_TOKEN: a connection must show it in its initack */
    pending_t *pend;
    int npend;
    int pend_cap;             /* pending connections at most, in total */
    int pend_source_cap;      /* ... and from one source address */
    uint64_t pend_order;      /* accepts so far */
    uint64_t stopped_warn_ns; /* FMPL_STOPPED_WARN in ns; 0: never */
} job = {.sigfd = -1, .early_exit = -1, .listen_fd = -1};

/* ----------------------------------------------------------------- helpers */

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* "rank R (pid P)", with the host in multi-host mode; for messages. Two buffers, so
 * a message may name two ranks. */
static const char *who(const rank_t *rk)
{
    static char buf[2][320];
    static int next;
    char *b = buf[next];
    next ^= 1;
    int r = (int)(rk - job.ranks) - job.worlds[rk->world].first;
    if (rk->world > 0)
        snprintf(b, sizeof buf[0], "rank %d of spawned job %d (pid %d)", r, rk->world,
                 (int)rk->pid);
    else if (rk->host < 0)
        snprintf(b, sizeof buf[0], "rank %d (pid %d)", r, (int)rk->pid);
    else if (job.hosts[rk->host].local)
        snprintf(b, sizeof buf[0], "rank %d (pid %d, host %s)", r, (int)rk->pid,
                 job.hosts[rk->host].name);
    else
        snprintf(b, sizeof buf[0], "rank %d (host %s, launcher pid %d)", r,
                 job.hosts[rk->host].name, (int)rk->pid);
    return b;
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
    for (int r = 0; r < job.nranks; r++) { /* a rank that left the group still gets it */
        rank_t *rk = &job.ranks[r];
        if (rk->pid > 0 && !rk->reaped) {
            (void)kill(rk->pid, sig);
            if (rk->stopped_at) /* a stopped rank acts on the signal once continued */
                (void)kill(rk->pid, SIGCONT);
        }
    }
}

/* "; stopped: rank R (pid P) by signal S (name) for T s, ..." naming the ranks stopped
 * now (CLD_STOPPED), for the messages that end a job; "" when none is. */
static const char *stopped_ranks_text(void)
{
    static char text[1024];
    size_t len = 0;
    int count = 0;
    text[0] = 0;
    uint64_t now = now_ns();
    for (int r = 0; r < job.nranks; r++) {
        rank_t *rk = &job.ranks[r];
        if (!rk->stopped_at || rk->reaped)
            continue;
        if (++count > 8) {
            snprintf(text + len, sizeof text - len, ", ...");
            break;
        }
        int w = snprintf(text + len, sizeof text - len, "%s%s by signal %d (%s) for %.1f s",
                         count == 1 ? "; stopped: " : ", ", who(rk), rk->stop_sig,
                         strsignal(rk->stop_sig), (double)(now - rk->stopped_at) / 1e9);
        if (w < 0 || (size_t)w >= sizeof text - len)
            break;
        len += (size_t)w;
    }
    return text;
}

/* FMPL_STOPPED_WARN: says once per stop which rank has stayed stopped that long (the
 * job cannot progress without it). Returns when to look again (0: no stopped rank). */
static uint64_t stopped_check(uint64_t now)
{
    uint64_t next = 0;
    for (int r = 0; job.stopped_warn_ns && r < job.nranks; r++) {
        rank_t *rk = &job.ranks[r];
        if (!rk->stopped_at || rk->reaped || rk->stop_warned)
            continue;
        uint64_t due = rk->stopped_at + job.stopped_warn_ns;
        if (now >= due) {
            rk->stop_warned = 1;
            if (!job.ending)
                say("%s has been stopped by signal %d (%s) for %.1f s; the job cannot progress "
                    "until it continues (kill -CONT %d)",
                    who(rk), rk->stop_sig, strsignal(rk->stop_sig),
                    (double)(now - rk->stopped_at) / 1e9, (int)rk->pid);
        } else if (!next || due < next) {
            next = due;
        }
    }
    return next;
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

/* The key-value space of each world is its own: entries carry the world. */
static kv_t *kvs_find(const world_t *w, const char *key)
{
    if (!job.nbuckets)
        return NULL;
    int world = (int)(w - job.worlds);
    for (kv_t *e = job.buckets[(hash_key(key) + (uint64_t)world) & (job.nbuckets - 1)]; e;
         e = e->next)
        if (e->world == world && strcmp(e->key, key) == 0)
            return e;
    return NULL;
}

/* The world whose kvsname this is, or NULL. */
static world_t *world_of_kvsname(const char *kvsname)
{
    for (int i = 0; i < job.nworlds; i++)
        if (strcmp(job.worlds[i].kvsname, kvsname) == 0)
            return &job.worlds[i];
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
            size_t h = (hash_key(e->key) + (uint64_t)e->world) & (nb - 1);
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
static int kvs_put(const world_t *w, const char *key, const char *value)
{
    kv_t *e = kvs_find(w, key);
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
    e->world = (int)(w - job.worlds);
    size_t h = (hash_key(key) + (uint64_t)e->world) & (job.nbuckets - 1);
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

/* ------------------------------------------------------------ name service */

static name_t **names_find(const char *service)
{
    name_t **e = &job.names;
    while (*e && strcmp((*e)->service, service) != 0)
        e = &(*e)->next;
    return e;
}

static void names_free(void)
{
    while (job.names) {
        name_t *e = job.names;
        job.names = e->next;
        free(e->service);
        free(e->port);
        free(e);
    }
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
            job_end(1, SIGTERM, "%s does not read its PMI replies; ending the job", who(rk));
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

static void barrier_release(world_t *w)
{
    w->nbarrier = 0;
    for (int r = w->first; r < w->first + w->n; r++) {
        job.ranks[r].in_barrier = 0;
        const char *kv[] = {"cmd", "barrier_out", "rc", "0", NULL};
        pmi_reply(&job.ranks[r], kv);
    }
}

/* A fence can never complete once some rank has finalised: say so instead of hanging. */
static void barrier_check_stuck(world_t *w)
{
    if (!w->nbarrier || !w->nfinalized)
        return;
    int in = -1, fin = -1;
    for (int r = 0; r < w->n; r++) {
        if (job.ranks[w->first + r].in_barrier && in < 0)
            in = r;
        if (job.ranks[w->first + r].finalized && fin < 0)
            fin = r;
    }
    char of[48] = "";
    if (w != job.worlds)
        snprintf(of, sizeof of, " of spawned job %d", (int)(w - job.worlds));
    job_end(1, SIGTERM,
            "rank %d%s entered a fence (PMI barrier) after rank %d called fmpl_finalize; "
            "it can never complete",
            in, of, fin);
}

/* The abort message is the rest of the line after message= (or error_msg=): old
 * clients send it with unescaped spaces. */
static void pmi_abort(rank_t *rk, const char *raw, const pmi_msg_t *msg)
{
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
    job_end(status ? status : 1, SIGTERM, "%s aborted the job with exit code %d%s%s", who(rk), code,
            text[0] ? ": " : "", text);
}

/* ------------------------------------------------------------------ spawn */

static int fork_ranks(int first, int count, int *errs);
static int host_is_local(const char *name);

static void spawn_req_free(spawn_req_t *q)
{
    for (int i = 0; q && i < q->nlines; i++) {
        free(q->key[i]);
        free(q->val[i]);
    }
    free(q);
}

static void spawn_apps_free(world_t *w)
{
    for (int a = 0; a < w->napps; a++) {
        if (w->apps[a].argv)
            for (char **p = w->apps[a].argv; *p; p++)
                free(*p);
        free(w->apps[a].argv);
        free(w->apps[a].wdir);
        free(w->apps[a].path);
    }
    free(w->apps);
    w->apps = NULL;
    w->napps = 0;
}

/* Value of key in lines [from, to) of a request, or NULL. */
static const char *spawn_find(const spawn_req_t *q, int from, int to, const char *key)
{
    for (int i = from; i < to; i++)
        if (strcmp(q->key[i], key) == 0)
            return q->val[i];
    return NULL;
}

/* An integer in [min, max] from value v; -1 when absent or malformed. */
static int spawn_int(const char *v, int min, int max)
{
    char *end;
    if (!v || !*v)
        return -1;
    errno = 0;
    long x = strtol(v, &end, 10);
    return errno || *end || x < min || x > max ? -1 : (int)x;
}

static void spawn_reply(rank_t *rk, int rc, const char *errcodes, const char *why)
{
    const char *ok[] = {"cmd", "spawn_result", "rc", "0", "errcodes", errcodes, NULL};
    const char *bad[] = {"cmd", "spawn_result", "rc", "-1", "errcodes", errcodes, "msg", why, NULL};
    const char *plain[] = {"cmd", "spawn_result", "rc", "-1", "msg", why, NULL};
    pmi_reply(rk, rc == 0 ? ok : errcodes ? bad : plain);
}

/* Starts the processes of a complete spawn request (every block received) as a new
 * world and answers cmd=spawn_result: rc=0 and errcodes=0,0,... when all started; rc=-1
 * with msg= when the request is refused before anything starts, or when a process could
 * not be started (errcodes then holds its errno, the others 0, and none of them runs).
 * Blocks (MPICH's PMI_Spawn_multiple, one per command): nprocs, execname, totspawns,
 * spawnssofar, argcnt, arg1..argN, preput_num, preput_key_i, preput_val_i (the new
 * job's key-value space gets them), info_num, info_key_i, info_val_i. Info keys:
 * "wdir" (the directory the processes start in), "path" (directories searched for
 * execname before $PATH), "host" (must name this host: spawned processes run where
 * fmplrun runs); other keys are ignored, as MPI allows. */
static void spawn_run(rank_t *rk, spawn_req_t *q)
{
    char why[512] = "", errcodes[PMI_WIRE_LINE_MAX / 2];
    int nblocks = 0, total = 0;
    for (int i = 0; i < q->nlines; i++)
        nblocks += strcmp(q->key[i], "endcmd") == 0;
    if (q->overflow)
        snprintf(why, sizeof why, "spawn request of more than %d lines", SPAWN_LINES_MAX);
    else if (job.nworlds > SPAWN_WORLDS_MAX)
        snprintf(why, sizeof why, "fmplrun starts at most %d spawns per job", SPAWN_WORLDS_MAX);
    world_t *w = &job.worlds[job.nworlds];
    *w = (world_t){.first = job.nranks, .parent = (int)(rk - job.ranks)};
    if (!why[0] && !(w->apps = calloc((size_t)nblocks, sizeof *w->apps)))
        snprintf(why, sizeof why, "fmplrun is out of memory");
    /* one block per command */
    for (int b = 0, from = 0; !why[0] && b < nblocks; b++) {
        int to = from;
        while (strcmp(q->key[to], "endcmd") != 0)
            to++;
        int nprocs = spawn_int(spawn_find(q, from, to, "nprocs"), 1, SPAWN_MAX);
        const char *exe = spawn_find(q, from, to, "execname");
        int argcnt = spawn_int(spawn_find(q, from, to, "argcnt"), 0, SPAWN_LINES_MAX);
        if (!spawn_find(q, from, to, "argcnt"))
            argcnt = 0;
        int ninfo = spawn_int(spawn_find(q, from, to, "info_num"), 0, SPAWN_LINES_MAX);
        if (!spawn_find(q, from, to, "info_num"))
            ninfo = 0;
        if (nprocs < 0 || total + nprocs > SPAWN_MAX - (job.nranks - job.n)) {
            snprintf(why, sizeof why,
                     "command %d: nprocs=%s: 1 to %d processes may still be spawned", b + 1,
                     spawn_find(q, from, to, "nprocs") ? spawn_find(q, from, to, "nprocs") : "",
                     SPAWN_MAX - (job.nranks - job.n) - total);
            break;
        }
        if (!exe || !*exe || argcnt < 0 || ninfo < 0) {
            snprintf(why, sizeof why, "command %d: no execname, or a bad argcnt or info_num",
                     b + 1);
            break;
        }
        spawn_app_t *app = &w->apps[w->napps++];
        if (!(app->argv = calloc((size_t)argcnt + 2, sizeof *app->argv)) ||
            !(app->argv[0] = strdup(exe))) {
            snprintf(why, sizeof why, "fmplrun is out of memory");
            break;
        }
        for (int k = 1; k <= argcnt; k++) {
            char name[32];
            snprintf(name, sizeof name, "arg%d", k);
            const char *v = spawn_find(q, from, to, name);
            if (!(app->argv[k] = strdup(v ? v : ""))) {
                snprintf(why, sizeof why, "fmplrun is out of memory");
                break;
            }
        }
        for (int k = 0; !why[0] && k < ninfo; k++) {
            char name[32];
            snprintf(name, sizeof name, "info_key_%d", k);
            const char *key = spawn_find(q, from, to, name);
            snprintf(name, sizeof name, "info_val_%d", k);
            const char *val = spawn_find(q, from, to, name);
            if (!key || !val)
                continue;
            if (strcmp(key, "wdir") == 0) {
                free(app->wdir);
                app->wdir = strdup(val);
            } else if (strcmp(key, "path") == 0) {
                free(app->path);
                app->path = strdup(val);
            } else if (strcmp(key, "host") == 0 && !host_is_local(val)) {
                snprintf(why, sizeof why,
                         "command %d: info host=%.200s is not this host: fmplrun starts "
                         "spawned processes on its own host only",
                         b + 1, val);
            }
        }
        total += nprocs;
        from = to + 1;
    }
    if (why[0]) {
        spawn_apps_free(w);
        spawn_reply(rk, -1, NULL, why);
        return;
    }
    /* the new world: its kvsname extends ours, so /dev/shm cleanup covers it */
    int k = job.nworlds++;
    w->n = total;
    snprintf(w->kvsname, sizeof w->kvsname, "%s-s%d", job.kvsname, k);
    int npre = spawn_int(spawn_find(q, 0, q->nlines, "preput_num"), 0, SPAWN_LINES_MAX);
    for (int i = 0; i < npre; i++) {
        char name[32];
        snprintf(name, sizeof name, "preput_key_%d", i);
        const char *key = spawn_find(q, 0, q->nlines, name);
        snprintf(name, sizeof name, "preput_val_%d", i);
        const char *val = spawn_find(q, 0, q->nlines, name);
        if (key && *key && strlen(key) < KEY_MAX && val && strlen(val) < VALUE_MAX)
            (void)kvs_put(w, key, val);
    }
    for (int a = 0, r = w->first, from = 0; a < w->napps; a++) {
        int to = from;
        while (strcmp(q->key[to], "endcmd") != 0)
            to++;
        int nprocs = spawn_int(spawn_find(q, from, to, "nprocs"), 1, SPAWN_MAX);
        for (int i = 0; i < nprocs; i++, r++) {
            rank_t *c = &job.ranks[r];
            memset(c, 0, sizeof *c);
            c->pmi_fd = c->exec_fd = c->out[0].fd = c->out[1].fd = -1;
            c->host = -1;
            c->world = k;
            c->appnum = a;
            c->argv = w->apps[a].argv;
            c->wdir = w->apps[a].wdir;
            c->path = w->apps[a].path;
        }
        from = to + 1;
    }
    job.nranks += total;
    int *errs = calloc((size_t)total, sizeof *errs);
    int failed = !errs || fork_ranks(w->first, total, errs) != 0;
    size_t len = 0;
    errcodes[0] = 0;
    for (int i = 0; i < total; i++) {
        int e = errs ? errs[i] : ENOMEM;
        if (e && !failed) {
            failed = 1;
            const rank_t *c = &job.ranks[w->first + i];
            if (c->wdir)
                snprintf(why, sizeof why, "cannot run '%.200s' (wdir %.200s): %s", c->argv[0],
                         c->wdir, strerror(e));
            else
                snprintf(why, sizeof why, "cannot run '%.200s': %s", c->argv[0], strerror(e));
        }
        int n = snprintf(errcodes + len, sizeof errcodes - len, "%s%d", i ? "," : "", e);
        if (n > 0 && (size_t)n < sizeof errcodes - len)
            len += (size_t)n;
    }
    free(errs);
    if (failed) { /* none of them runs: MPI_Comm_spawn fails as a whole */
        w->failed = 1;
        for (int r = w->first; r < w->first + total; r++)
            if (job.ranks[r].pid > 0 && !job.ranks[r].reaped)
                (void)kill(job.ranks[r].pid, SIGKILL);
        spawn_reply(rk, -1, errcodes, why[0] ? why : "cannot start the processes");
        return;
    }
    spawn_reply(rk, 0, errcodes, NULL);
}

/* One line of a spawn request: mcmd=spawn starts a block, endcmd ends it, lines
 * between are key=value with the rest of the line as the value (no escapes: MPICH
 * sends arguments that way). The last block (spawnssofar == totspawns) runs it. */
static void spawn_line(rank_t *rk, const char *line)
{
    spawn_req_t *q = rk->spawn;
    if (!q || !q->in_block) {
        if (strcmp(line, "mcmd=spawn") != 0) {
            job_end(1, SIGTERM, "%s sent '%.64s' where fmplrun expected mcmd=spawn", who(rk), line);
            return;
        }
        if (!q && !(q = rk->spawn = calloc(1, sizeof *q))) {
            job_end(1, SIGTERM, "fmplrun is out of memory");
            return;
        }
        q->in_block = 1;
        return;
    }
    const char *eq = strchr(line, '=');
    int end = strcmp(line, "endcmd") == 0;
    if (!end && !eq) {
        job_end(1, SIGTERM, "%s sent '%.64s' inside a spawn request (key=value expected)", who(rk),
                line);
        return;
    }
    if (q->nlines >= SPAWN_LINES_MAX - 1 && !end) {
        q->overflow = 1;
        return;
    }
    char *key = end ? strdup("endcmd") : strndup(line, (size_t)(eq - line));
    char *val = strdup(end ? "" : eq + 1);
    if (!key || !val) {
        free(key);
        free(val);
        job_end(1, SIGTERM, "fmplrun is out of memory");
        return;
    }
    int block_start = q->nlines;
    while (block_start > 0 && strcmp(q->key[block_start - 1], "endcmd") != 0)
        block_start--;
    q->key[q->nlines] = key;
    q->val[q->nlines++] = val;
    if (!end)
        return;
    q->in_block = 0;
    int tot = spawn_int(spawn_find(q, block_start, q->nlines, "totspawns"), 1, SPAWN_LINES_MAX);
    int sofar = spawn_int(spawn_find(q, block_start, q->nlines, "spawnssofar"), 1, SPAWN_LINES_MAX);
    if (tot > 0 && sofar > 0 && sofar < tot && !q->overflow)
        return; /* more blocks follow */
    rk->spawn = NULL;
    if (tot < 0 || sofar < 0 || sofar > tot)
        spawn_reply(rk, -1, NULL, "bad totspawns or spawnssofar");
    else
        spawn_run(rk, q);
    spawn_req_free(q);
}

/* The name service, as MPICH's simple PMI speaks it: cmd=publish_name service=S
 * port=P, cmd=lookup_name service=S, cmd=unpublish_name service=S, answered by
 * cmd=<publish|lookup|unpublish>_result rc=0 info=ok [port=P], or rc=1 info=<why>
 * reason=published|unknown|invalid (the reason is ours: boot maps it to an error). */
static void pmi_name_service(rank_t *rk, const pmi_msg_t *msg)
{
    const char *cmd = msg->cmd;
    char result[32], why[VALUE_MAX + 64];
    snprintf(result, sizeof result, "%.*s_result", (int)(strlen(cmd) - 5), cmd);
    const char *service = pmi_wire_find(msg, "service");
    const char *port = pmi_wire_find(msg, "port");
    const char *reason = NULL;
    if (!service || !*service || strlen(service) >= VALUE_MAX) {
        reason = "invalid";
        snprintf(why, sizeof why, "a service name of 1 to %d bytes is needed", VALUE_MAX - 1);
    } else if (cmd[0] == 'p') {
        name_t **e = names_find(service);
        name_t *n = NULL;
        if (!port || !*port || strlen(port) >= VALUE_MAX) {
            reason = "invalid";
            snprintf(why, sizeof why, "a port name of 1 to %d bytes is needed", VALUE_MAX - 1);
        } else if (*e) {
            reason = "published";
            snprintf(why, sizeof why, "the service name '%.200s' is published already", service);
        } else if (!(n = calloc(1, sizeof *n)) || !(n->service = strdup(service)) ||
                   !(n->port = strdup(port))) {
            if (n) {
                free(n->service);
                free(n);
            }
            reason = "nomem";
            snprintf(why, sizeof why, "fmplrun is out of memory");
        } else {
            n->next = job.names;
            job.names = n;
        }
    } else {
        name_t **e = names_find(service);
        if (!*e) {
            reason = "unknown";
            snprintf(why, sizeof why, "no service named '%.200s' is published", service);
        } else if (cmd[0] == 'l') {
            const char *kv[] = {"cmd", result, "rc", "0", "info", "ok", "port", (*e)->port, NULL};
            pmi_reply(rk, kv);
            return;
        } else {
            name_t *gone = *e;
            *e = gone->next;
            free(gone->service);
            free(gone->port);
            free(gone);
        }
    }
    if (reason) {
        const char *kv[] = {"cmd", result, "rc", "1", "info", why, "reason", reason, NULL};
        pmi_reply(rk, kv);
    } else {
        const char *kv[] = {"cmd", result, "rc", "0", "info", "ok", NULL};
        pmi_reply(rk, kv);
    }
}

/* MPICH's PMI_process_mapping value; -1 when it does not fit in a value (thousands
 * of hosts of unequal slots): the key is then absent and MPICH's client falls back
 * to comparing host names. */
static int process_mapping(const world_t *w, char *out, size_t cap)
{
    if (!job.nhosts || w != job.worlds) { /* spawned ranks run on this host */
        snprintf(out, cap, "(vector,(0,1,%d))", w->n);
        return 0;
    }
    size_t len = (size_t)snprintf(out, cap, "(vector");
    for (int h = 0; h < job.nhosts;) {
        int k = h + 1;
        while (k < job.nhosts && job.hosts[k].slots == job.hosts[h].slots)
            k++;
        int w = snprintf(out + len, cap - len, ",(%d,%d,%d)", h, k - h, job.hosts[h].slots);
        if (w < 0 || (size_t)w >= cap - len - 1)
            return -1;
        len += (size_t)w;
        h = k;
    }
    snprintf(out + len, cap - len, ")");
    return 0;
}

static void pmi_handle(rank_t *rk, char *line)
{
    world_t *w = &job.worlds[rk->world];
    if (rk->spawn || strncmp(line, "mcmd=", 5) == 0) {
        spawn_line(rk, line);
        return;
    }
    char raw[PMI_WIRE_LINE_MAX];
    snprintf(raw, sizeof raw, "%s", line);
    pmi_msg_t msg;
    if (pmi_wire_parse(line, &msg) != 0) {
        job_end(1, SIGTERM, "%s sent a malformed PMI line: '%.200s'", who(rk), raw);
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
            job_end(1, SIGTERM, "%s asked for PMI version %s; fmplrun speaks PMI-1 only", who(rk),
                    ver ? ver : "(none)");
            return;
        }
        if (!rk->initialized) {
            rk->initialized = 1;
            job.ninit++;
        }
        if (job.early_exit >= 0)
            job_end(1, SIGTERM, "%s exited with status 0 before calling fmpl_finalize",
                    who(&job.ranks[job.early_exit]));
    } else if (strcmp(cmd, "get_maxes") == 0) {
        const char *kv[] = {"cmd", "maxes",      "kvsname_max", "256", "keylen_max",
                            "64",  "vallen_max", "1024",        NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_appnum") == 0) {
        snprintf(num, sizeof num, "%d", rk->appnum);
        const char *kv[] = {"cmd", "appnum", "appnum", num, NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_universe_size") == 0) {
        snprintf(num, sizeof num, "%d", job.n + SPAWN_MAX); /* spawn may add SPAWN_MAX */
        const char *kv[] = {"cmd", "universe_size", "size", num, NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "get_my_kvsname") == 0) {
        const char *kv[] = {"cmd", "my_kvsname", "kvsname", w->kvsname, NULL};
        pmi_reply(rk, kv);
    } else if (strcmp(cmd, "put") == 0) {
        const char *kvs = pmi_wire_find(&msg, "kvsname");
        const char *key = pmi_wire_find(&msg, "key");
        const char *value = pmi_wire_find(&msg, "value");
        if (!value)
            value = "";
        if (!kvs || strcmp(kvs, w->kvsname) != 0)
            pmi_reply_rc(rk, "put_result", -1, "unknown_kvsname");
        else if (!key || !*key || strlen(key) >= KEY_MAX)
            pmi_reply_rc(rk, "put_result", -1, "invalid_key");
        else if (strlen(value) >= VALUE_MAX)
            pmi_reply_rc(rk, "put_result", -1, "value_too_long");
        else if (kvs_put(w, key, value) != 0)
            pmi_reply_rc(rk, "put_result", -1, "out_of_memory");
        else
            pmi_reply_rc(rk, "put_result", 0, "success");
    } else if (strcmp(cmd, "get") == 0) {
        const char *kvs = pmi_wire_find(&msg, "kvsname");
        const char *key = pmi_wire_find(&msg, "key");
        char mapping[VALUE_MAX];
        const char *value = NULL;
        if (key && strcmp(key, "PMI_process_mapping") == 0) {
            /* MPICH's node map: one node holding ranks 0..n-1, or with --hosts one
             * round of the placement, (first node, nodes, ranks each) per run of
             * hosts with equal slots; MPICH repeats it until every rank is placed */
            value = process_mapping(w, mapping, sizeof mapping) == 0 ? mapping : NULL;
        } else if (key && kvs && world_of_kvsname(kvs)) {
            const kv_t *e = kvs_find(world_of_kvsname(kvs), key);
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
            w->nbarrier++;
        }
        if (w->nbarrier == w->n)
            barrier_release(w);
        else
            barrier_check_stuck(w);
    } else if (strcmp(cmd, "finalize") == 0) {
        const char *kv[] = {"cmd", "finalize_ack", "rc", "0", NULL};
        pmi_reply(rk, kv);
        if (!rk->finalized) {
            rk->finalized = 1;
            w->nfinalized++;
        }
        barrier_check_stuck(w);
    } else if (strcmp(cmd, "publish_name") == 0 || strcmp(cmd, "lookup_name") == 0 ||
               strcmp(cmd, "unpublish_name") == 0) {
        pmi_name_service(rk, &msg);
    } else if (strcmp(cmd, "abort") == 0) {
        pmi_abort(rk, raw, &msg);
    } else {
        job_end(1, SIGTERM, "%s sent PMI command '%.64s', which fmplrun does not support", who(rk),
                cmd);
    }
}

/* Handles every complete line in the rank's input buffer. */
static void pmi_lines(rank_t *rk)
{
    char *start = rk->in, *nl;
    while ((nl = memchr(start, '\n', rk->inlen - (size_t)(start - rk->in)))) {
        *nl = 0;
        pmi_handle(rk, start);
        start = nl + 1;
    }
    rk->inlen -= (size_t)(start - rk->in);
    memmove(rk->in, start, rk->inlen);
    if (rk->inlen == sizeof rk->in) {
        job_end(1, SIGTERM, "%s sent a PMI line longer than %d bytes", who(rk), PMI_WIRE_LINE_MAX);
        pmi_close(rk);
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
            /* Over TCP the process we wait for may be a launcher on this host that
             * outlives the rank (ssh): judge the lost connection itself if no exit
             * status comes soon. */
            if (job.tcp && !rk->finalized && !rk->reaped && !job.ending)
                rk->lost_at = now_ns() + LOST_GRACE_NS;
            return;
        }
        rk->inlen += (size_t)n;
        pmi_lines(rk);
    }
}

/* ------------------------------------------------------- PMI over TCP */

static void pending_close(int i)
{
    close(job.pend[i].fd);
    job.pend[i] = job.pend[--job.npend];
}

/* Why a pending connection was refused; each kind is reported one by one
 * PENDING_REPORTS times, the rest in one line at the end (pending_report_rest), so a
 * flood cannot flood our stderr as well. */
enum { REFUSE_BAD, REFUSE_SLOW, REFUSE_CROWD_SOURCE, REFUSE_CROWD, REFUSE_KINDS };
static const char *const refuse_names[REFUSE_KINDS] = {
    "a wrong first line or token", "no token in time",
    "too many connections waiting from one address", "too many connections waiting"};
static int refuse_count[REFUSE_KINDS], refuse_reported[REFUSE_KINDS];

/* Refuses pending connection i with a reply the client can log, and says why. */
static void pending_refuse(int i, int kind, const char *why)
{
    pending_t *p = &job.pend[i];
    char line[256];
    size_t len = 0;
    (void)pmi_wire_append(line, sizeof line - 1, &len, "cmd", "initack");
    (void)pmi_wire_append(line, sizeof line - 1, &len, "rc", "-1");
    (void)pmi_wire_append(line, sizeof line - 1, &len, "msg", why);
    (void)pmi_wire_end(line, sizeof line, &len);
    ssize_t w = send(p->fd, line, len, MSG_NOSIGNAL | MSG_DONTWAIT);
    (void)w;
    if (refuse_count[kind]++ < PENDING_REPORTS) {
        refuse_reported[kind]++;
        say("refused a PMI connection from %s: %s", p->peer, why);
    }
    pending_close(i);
}

/* One line per kind for the refused connections not reported one by one. */
static void pending_report_rest(void)
{
    for (int k = 0; k < REFUSE_KINDS; k++) {
        if (refuse_count[k] > refuse_reported[k])
            say("refused %d more PMI connections (%s)", refuse_count[k] - refuse_reported[k],
                refuse_names[k]);
        refuse_reported[k] = refuse_count[k];
    }
}

/* Makes room for one more connection from `source`: a source that holds its share
 * (pend_source_cap) loses its oldest pending connection; when all pend_cap slots are
 * taken, the source holding the most loses its oldest. So a new connection is always
 * accepted and judged by its first line: strangers that hold the port cannot shut out
 * a rank, and one source cannot take the slots of the others. */
static int source_cmp(const void *a, const void *b)
{
    uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
    return (x > y) - (x < y);
}

static void pending_make_room(uint32_t source)
{
    int from_source = 0;
    for (int i = 0; i < job.npend; i++)
        from_source += job.pend[i].source == source;
    uint32_t victim_source = source;
    int kind = REFUSE_CROWD_SOURCE;
    const char *why = "too many connections from this address await their token";
    if (from_source < job.pend_source_cap) {
        if (job.npend < job.pend_cap)
            return;
        /* the source holding the most: sort a copy of the sources (n log n per
         * eviction, so a flood cannot make each accept cost n^2) */
        uint32_t *sources = malloc((size_t)job.npend * sizeof *sources);
        if (sources) {
            for (int i = 0; i < job.npend; i++)
                sources[i] = job.pend[i].source;
            qsort(sources, (size_t)job.npend, sizeof *sources, source_cmp);
            for (int i = 0, most = 0; i < job.npend;) {
                int k = i;
                while (k < job.npend && sources[k] == sources[i])
                    k++;
                if (k - i > most) {
                    most = k - i;
                    victim_source = sources[i];
                }
                i = k;
            }
            free(sources);
        } else {
            victim_source = job.pend[0].source;
        }
        why = "too many connections await their token";
        kind = REFUSE_CROWD;
    }
    int oldest = -1;
    for (int i = 0; i < job.npend; i++)
        if (job.pend[i].source == victim_source &&
            (oldest < 0 || job.pend[i].order < job.pend[oldest].order))
            oldest = i;
    if (oldest >= 0)
        pending_refuse(oldest, kind, why);
}

static void pending_input(int i);

static void listen_accept(void)
{
    for (;;) {
        struct sockaddr_in sa;
        socklen_t sl = sizeof sa;
        int fd = accept4(job.listen_fd, (struct sockaddr *)&sa, &sl, SOCK_CLOEXEC | SOCK_NONBLOCK);
        if (fd < 0)
            return; /* EAGAIN, or a connection that went away (ECONNABORTED) */
        pending_make_room(sa.sin_addr.s_addr);
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        pending_t *p = &job.pend[job.npend++];
        *p = (pending_t){.fd = fd,
                         .source = sa.sin_addr.s_addr,
                         .deadline = now_ns() + PENDING_DEADLINE_S * 1000000000ull,
                         .order = job.pend_order++};
        char ip[INET_ADDRSTRLEN] = "?";
        (void)inet_ntop(AF_INET, &sa.sin_addr, ip, sizeof ip);
        snprintf(p->peer, sizeof p->peer, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
        pending_input(job.npend - 1); /* a rank sends its line at once: judge it now */
    }
}

/* Closes the pending connections whose deadline passed; returns the next deadline
 * (0: none). */
static uint64_t pending_expire(uint64_t now)
{
    uint64_t next = 0;
    for (int i = 0; i < job.npend;) {
        if (job.pend[i].deadline <= now) {
            char why[80];
            snprintf(why, sizeof why, "no initack line with the token within %d s",
                     PENDING_DEADLINE_S);
            pending_refuse(i, REFUSE_SLOW, why);
            continue;
        }
        if (!next || job.pend[i].deadline < next)
            next = job.pend[i].deadline;
        i++;
    }
    return next;
}

/* The first line of a connection must be MPICH's cmd=initack pmiid=<rank> with our
 * token; it then becomes the rank's PMI channel, answered with its rank and size. */
static void pending_input(int i)
{
    pending_t *p = &job.pend[i];
    ssize_t n = recv(p->fd, p->in + p->len, sizeof p->in - p->len, MSG_DONTWAIT);
    if (n < 0 && (errno == EINTR || errno == EAGAIN || errno == EWOULDBLOCK))
        return;
    if (n <= 0) {
        pending_close(i);
        return;
    }
    p->len += (size_t)n;
    char *nl = memchr(p->in, '\n', p->len);
    if (!nl) {
        if (p->len == sizeof p->in)
            pending_refuse(i, REFUSE_BAD, "first line too long");
        return;
    }
    *nl = 0;
    char line[sizeof p->in];
    memcpy(line, p->in, (size_t)(nl - p->in) + 1);
    size_t rest = p->len - (size_t)(nl + 1 - p->in);
    pmi_msg_t msg;
    const char *id_text, *token;
    int id = -1;
    if (pmi_wire_parse(line, &msg) != 0 || strcmp(msg.cmd, "initack") != 0 ||
        !(id_text = pmi_wire_find(&msg, "pmiid"))) {
        pending_refuse(i, REFUSE_BAD, "expected cmd=initack pmiid=<rank> first");
        return;
    }
    id = atoi(id_text);
    token = pmi_wire_find(&msg, "token");
    if (!token || strcmp(token, job.token) != 0) {
        pending_refuse(i, REFUSE_BAD, "wrong or missing token (FMPL_PMI_TOKEN)");
        return;
    }
    if (id < 0 || id >= job.n || strspn(id_text, "0123456789") != strlen(id_text)) {
        pending_refuse(i, REFUSE_BAD, "pmiid out of range");
        return;
    }
    rank_t *rk = &job.ranks[id];
    if (rk->connected || rk->reaped) {
        pending_refuse(i, REFUSE_BAD, "this rank is already connected, or gone");
        return;
    }
    rk->connected = 1;
    job.nconnected++;
    rk->pmi_fd = p->fd;
    memcpy(rk->in, nl + 1, rest); /* a client that did not wait for the reply */
    rk->inlen = rest;
    job.pend[i] = job.pend[--job.npend];
    char size[16], rank[16];
    snprintf(size, sizeof size, "%d", job.n);
    snprintf(rank, sizeof rank, "%d", id);
    const char *ack[] = {"cmd", "initack", "rc", "0", NULL};
    const char *set_size[] = {"cmd", "set", "size", size, NULL};
    const char *set_rank[] = {"cmd", "set", "rank", rank, NULL};
    const char *set_debug[] = {"cmd", "set", "debug", "0", NULL};
    pmi_reply(rk, ack);
    pmi_reply(rk, set_size);
    pmi_reply(rk, set_rank);
    pmi_reply(rk, set_debug);
    pmi_lines(rk);
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
    if (job.worlds[rk->world].failed) /* a spawn that failed as a whole: killed by us */
        return;
    int r = (int)(rk - job.ranks);
    if (WIFSIGNALED(status)) {
        int sig = WTERMSIG(status);
        if (!job.ending)
            job_end(128 + sig, SIGTERM, "%s was killed by signal %d (%s)", who(rk), sig,
                    strsignal(sig));
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
        job_end(code ? code : 1, SIGTERM, "%s exited with status %d before calling fmpl_finalize",
                who(rk), code);
    } else if (code && rk->host >= 0 && !job.hosts[rk->host].local) {
        job_end(code, SIGTERM,
                "%s: the launcher exited with status %d before the rank connected to "
                "fmplrun (see its message above)",
                who(rk), code);
    } else if (code) {
        job_end(code, SIGTERM, "%s exited with status %d", who(rk), code);
    } else if (job.ninit) {
        job_end(1, SIGTERM, "%s exited with status 0 before calling fmpl_finalize", who(rk));
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
        pid_t pid = waitpid(-1, &status, WNOHANG | WUNTRACED | WCONTINUED);
        if (pid < 0 && errno == EINTR)
            continue;
        if (pid <= 0)
            return;
        for (int r = 0; r < job.nranks; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->pid != pid || rk->reaped)
                continue;
            if (WIFSTOPPED(status)) { /* CLD_STOPPED: SIGSTOP, SIGTSTP, a debugger */
                rk->stopped_at = now_ns();
                rk->stop_sig = WSTOPSIG(status);
                rk->stop_warned = 0;
                break;
            }
            if (WIFCONTINUED(status)) {
                rk->stopped_at = 0;
                break;
            }
            rk->stopped_at = 0;
            rk->reaped = 1;
            job.nlive--;
            pmi_input(rk); /* what it said before it died comes first (an abort) */
            pmi_close(rk);
            judge_exit(rk, status);
            if (rk->in_barrier) {
                rk->in_barrier = 0;
                job.worlds[rk->world].nbarrier--;
            }
            break;
        }
    }
}

/* ------------------------------------------------------------ start-up */

enum { BIND_AUTO = 0, BIND_NONE, BIND_CORE };
static const char *const bind_names[] = {"auto", "none", "core"};

/* BIND_* for a --bind-to or FMPL_BIND value, -1 when it is none of them. */
static int parse_bind(const char *val)
{
    for (int b = BIND_AUTO; val && b <= BIND_CORE; b++)
        if (strcmp(val, bind_names[b]) == 0)
            return b;
    return -1;
}

static void usage(FILE *f)
{
    fprintf(f, "Usage: fmplrun -n N [options] program [arguments...]\n"
               "Starts N ranks of program (on this host, or on the hosts of --hosts) and\n"
               "serves them PMI-1.\n"
               "\n"
               "  -n N, -np N       number of ranks (N >= 1)\n"
               "  --tag-output      prefix every output line with \"[rank] \"\n"
               "  --bind-to B       auto (the default, or FMPL_BIND): each rank of a host\n"
               "                    gets CPUs of its own, whole cores when there are at\n"
               "                    least as many cores as ranks, else one CPU each (round\n"
               "                    robin when the ranks outnumber the CPUs); core: one\n"
               "                    CPU each; none: the scheduler decides. Only CPUs\n"
               "                    fmplrun may run on are used (taskset, cgroups)\n"
               "  --timeout S       end the job after S seconds (exit status 124);\n"
               "                    default: $MPIEXEC_TIMEOUT, else no limit\n"
               "  --hosts H[:S],... run the ranks on these hosts (also -hosts): S slots\n"
               "                    each (default 1), filled in order, round after round\n"
               "                    (h1:2,h2 with -n 5: h1 h1 h2 h1 h1; Hydra's rule).\n"
               "                    Ranks on this host (its name, short name or\n"
               "                    localhost) are started directly, the others through\n"
               "                    the launcher. Each rank gets FMPL_NODE=<host>.\n"
               "  --launcher CMD    how to start a rank on another host (default\n"
               "                    \"" DEFAULT_LAUNCHER "\"): CMD's words, {host} replaced\n"
               "                    by the host (appended when CMD has no {host}), then\n"
               "                    env VAR=... program arguments; for ssh and rsh these\n"
               "                    words are quoted for the remote shell\n"
               "  --pmi-addr A      IPv4 address of this host the ranks connect to for PMI\n"
               "                    over TCP (with --hosts, or alone to test it); default:\n"
               "                    the address this host uses toward the first other\n"
               "                    host, else the address of its name\n"
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

/* This host, under one of its names: the host name, its first label, localhost. */
static int host_is_local(const char *name)
{
    char me[256];
    if (strcmp(name, "localhost") == 0 || strcmp(name, "127.0.0.1") == 0)
        return 1;
    if (gethostname(me, sizeof me) != 0)
        return 0;
    me[sizeof me - 1] = 0;
    if (strcmp(name, me) == 0)
        return 1;
    size_t ml = strcspn(me, "."), nl = strcspn(name, ".");
    return ml == nl && strncmp(name, me, ml) == 0 && (!me[ml] || !name[nl]);
}

/* --hosts h1[:slots],h2[:slots],...: names of letters, digits, '.', '-', '_' and
 * '@' (user@host for ssh), each listed once; slots 1..1000000. Prints the error. */
static int parse_hosts(const char *list)
{
    if (!list || !*list) {
        say("--hosts needs a list of hosts, e.g. --hosts node1:4,node2:4");
        return -1;
    }
    if (job.nhosts) {
        say("--hosts given twice");
        return -1;
    }
    size_t cap = 1;
    for (const char *c = list; *c; c++)
        cap += *c == ',';
    job.hosts = calloc(cap, sizeof *job.hosts);
    if (!job.hosts) {
        say("out of memory");
        return -1;
    }
    for (const char *item = list;;) {
        size_t len = strcspn(item, ",");
        size_t nlen = strcspn(item, ",:");
        host_t *h = &job.hosts[job.nhosts];
        if (nlen == 0 || nlen >= sizeof h->name) {
            say("--hosts '%s': %s host name", list, nlen ? "a too long" : "an empty");
            return -1;
        }
        for (size_t k = 0; k < nlen; k++) {
            unsigned char c = (unsigned char)item[k];
            if (!isalnum(c) && c != '.' && c != '-' && c != '_' && c != '@') {
                say("--hosts: bad host name '%.*s' (letters, digits, '.', '-', '_', '@' only)",
                    (int)nlen, item);
                return -1;
            }
        }
        memcpy(h->name, item, nlen);
        h->name[nlen] = 0;
        h->slots = 1;
        if (nlen < len) { /* :slots */
            char num[32] = "";
            size_t sl = len - nlen - 1;
            if (sl < sizeof num) {
                memcpy(num, item + nlen + 1, sl);
                num[sl] = 0;
            }
            if (sl >= sizeof num || parse_count(num, &h->slots) != 0) {
                say("--hosts: '%.*s' needs a slot count >= 1 after the ':'", (int)len, item);
                return -1;
            }
        }
        for (int k = 0; k < job.nhosts; k++) {
            if (strcmp(job.hosts[k].name, h->name) == 0) {
                say("--hosts: host '%s' is listed twice (give it more slots: %s:N)", h->name,
                    h->name);
                return -1;
            }
        }
        h->local = host_is_local(h->name);
        job.nhosts++;
        if (!item[len])
            break;
        item += len + 1;
    }
    return 0;
}

/* Returns the index of the program in argv, or exits (0 for --help/--version). */
static int parse_args(int argc, char **argv)
{
    const char *env_bind = getenv("FMPL_BIND");
    if (env_bind && *env_bind && (job.bind = parse_bind(env_bind)) < 0) {
        say("FMPL_BIND=%s: expected core, none or auto", env_bind);
        exit(2);
    }
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
        } else if (strcmp(a, "--hosts") == 0 || strncmp(a, "--hosts=", 8) == 0 ||
                   strcmp(a, "-hosts") == 0) { /* -hosts: Hydra's spelling */
            val = a[1] == '-' && a[7] == '=' ? a + 8 : (i + 1 < argc ? argv[++i] : NULL);
            if (parse_hosts(val) != 0)
                exit(2);
        } else if (strcmp(a, "--launcher") == 0 || strncmp(a, "--launcher=", 11) == 0) {
            val = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
            if (!val || !val[strspn(val, " \t")]) {
                say("--launcher needs a command, e.g. --launcher ssh");
                exit(2);
            }
            job.launcher = val;
        } else if (strcmp(a, "--pmi-addr") == 0 || strncmp(a, "--pmi-addr=", 11) == 0) {
            val = a[10] == '=' ? a + 11 : (i + 1 < argc ? argv[++i] : NULL);
            struct in_addr ia;
            if (!val || inet_pton(AF_INET, val, &ia) != 1) {
                say("--pmi-addr needs an IPv4 address of this host, got '%s'", val ? val : "");
                exit(2);
            }
            job.pmi_addr = val;
        } else if (strcmp(a, "--bind-to") == 0 || strncmp(a, "--bind-to=", 10) == 0 ||
                   strcmp(a, "-bind-to") == 0) { /* -bind-to: Hydra's spelling */
            val = a[1] == '-' && a[9] == '=' ? a + 10 : (i + 1 < argc ? argv[++i] : NULL);
            job.bind = parse_bind(val);
            if (job.bind < 0) {
                say("--bind-to needs core, none or auto, got '%s'", val ? val : "");
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
    if (job.launcher && !job.nhosts) {
        say("--launcher needs --hosts (the hosts to start ranks on)");
        exit(2);
    }
    if (job.nhosts && !job.launcher)
        job.launcher = DEFAULT_LAUNCHER;
    job.tcp = job.nhosts > 0 || job.pmi_addr != NULL;
    /* FMPL_STOPPED_WARN: seconds a rank may stay stopped (SIGSTOP, SIGTSTP, a debugger)
     * before we say which rank it is; 0: never. */
    const char *warn = getenv("FMPL_STOPPED_WARN");
    double warn_s = 10;
    if (warn && *warn && strcmp(warn, "0") != 0 && parse_seconds(warn, &warn_s) != 0) {
        say("FMPL_STOPPED_WARN='%s' is not a number of seconds >= 0", warn);
        exit(2);
    }
    job.stopped_warn_ns = warn && strcmp(warn, "0") == 0 ? 0 : (uint64_t)(warn_s * 1e9);
    if (job.timeout_s <= 0) {
        const char *env = getenv("MPIEXEC_TIMEOUT");
        if (env && *env && parse_seconds(env, &job.timeout_s) != 0) {
            say("MPIEXEC_TIMEOUT='%s' is not a number of seconds > 0", env);
            exit(2);
        }
    }
    return i;
}

/* Single quotes for a POSIX shell: 'it'\''s'. Returns a new string, NULL out of memory. */
static char *shell_quote(const char *w)
{
    size_t len = 3;
    for (const char *c = w; *c; c++)
        len += *c == '\'' ? 4 : 1;
    char *q = malloc(len), *o = q;
    if (!q)
        return NULL;
    *o++ = '\'';
    for (const char *c = w; *c; c++) {
        if (*c == '\'') {
            memcpy(o, "'\\''", 4);
            o += 4;
        } else {
            *o++ = *c;
        }
    }
    *o++ = '\'';
    *o = 0;
    return q;
}

/* "{host}" in word replaced by host. Returns a new string, NULL out of memory. */
static char *subst_host(const char *word, const char *host)
{
    size_t len = strlen(word) + 1, hl = strlen(host);
    for (const char *c = strstr(word, "{host}"); c; c = strstr(c + 6, "{host}"))
        len += hl;
    char *out = malloc(len), *o = out;
    if (!out)
        return NULL;
    for (const char *c = word; *c;) {
        if (strncmp(c, "{host}", 6) == 0) {
            memcpy(o, host, hl);
            o += hl;
            c += 6;
        } else {
            *o++ = *c++;
        }
    }
    *o = 0;
    return out;
}

/* The command that starts rank r on its (other) host: the launcher's words ({host}
 * replaced, or the host appended), then env with the rank's PMI settings and every
 * FMPL_* variable of our environment, then the program and its arguments; each word
 * after the launcher's quoted for the remote shell when the launcher is ssh or rsh
 * (they pass one command line to it). Runs in the child; NULL (errno set) on error. */
static char **launcher_argv(int r)
{
    extern char **environ;
    const char *host = job.hosts[job.ranks[r].host].name;
    size_t nwords = 0, nenv = 0, nargs = 0;
    for (const char *c = job.launcher; *c;) {
        c += strspn(c, " \t");
        if (*c)
            nwords++;
        c += strcspn(c, " \t");
    }
    for (char **e = environ; *e; e++)
        nenv += strncmp(*e, "FMPL_", 5) == 0;
    while (job.argv[nargs])
        nargs++;
    char **argv = calloc(nwords + 1 + 12 + nenv + nargs + 1, sizeof *argv);
    char *words = strdup(job.launcher);
    if (!argv || !words)
        return NULL;
    size_t k = 0;
    int has_host = 0;
    for (char *w = strtok(words, " \t"); w; w = strtok(NULL, " \t")) {
        has_host |= strstr(w, "{host}") != NULL;
        if (!(argv[k++] = subst_host(w, host)))
            return NULL;
    }
    if (!has_host)
        argv[k++] = (char *)host;
    const char *base = strrchr(argv[0], '/');
    base = base ? base + 1 : argv[0];
    int quote = strcmp(base, "ssh") == 0 || strcmp(base, "rsh") == 0;
    size_t first = k;
    char num[64];
    argv[k++] = "env";
    argv[k++] = "-u";
    argv[k++] = "PMI_FD";
    argv[k++] = "-u";
    argv[k++] = "PMI_RANK";
    argv[k++] = "-u";
    argv[k++] = "PMI_SIZE";
    char *set[5];
    snprintf(num, sizeof num, "%d", r);
    const char *vals[5][2] = {{"PMI_PORT", job.port_text},
                              {"PMI_ID", num},
                              {"FMPL_NODE", host},
                              {"FMPL_LAUNCHER", "fmplrun"},
                              {"FMPL_PMI_TOKEN", job.token}};
    for (int i = 0; i < 5; i++) {
        size_t len = strlen(vals[i][0]) + strlen(vals[i][1]) + 2;
        if (!(set[i] = malloc(len)))
            return NULL;
        snprintf(set[i], len, "%s=%s", vals[i][0], vals[i][1]);
        argv[k++] = set[i];
    }
    for (char **e = environ; *e; e++) {
        if (strncmp(*e, "FMPL_", 5) != 0 || strncmp(*e, "FMPL_NODE=", 10) == 0 ||
            strncmp(*e, "FMPL_LAUNCHER=", 14) == 0 || strncmp(*e, "FMPL_PMI_TOKEN=", 15) == 0)
            continue;
        argv[k++] = *e;
    }
    for (size_t i = 0; i < nargs; i++)
        argv[k++] = job.argv[i];
    argv[k] = NULL;
    if (quote)
        for (size_t i = first; i < k; i++)
            if (!(argv[i] = shell_quote(argv[i])))
                return NULL;
    return argv;
}

/* In the child: becomes rank r and execs the program (for a rank on another host,
 * the launcher); never returns. */
static _Noreturn void child_exec(int r, int pmi_fd, int out_fd, int err_fd, int exec_fd,
                                 pid_t parent, const sigset_t *old_mask)
{
    const rank_t *rk = &job.ranks[r];
    const world_t *w = &job.worlds[rk->world];
    char **prog = rk->argv ? rk->argv : job.argv;
    (void)setpgid(0, job.pgid); /* pgid 0 for rank 0: a new group led by it */
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) /* fmplrun died before the line above */
        _exit(127);
    signal(SIGPIPE, SIG_DFL);
    sigprocmask(SIG_SETMASK, old_mask, NULL);
    (void)setrlimit(RLIMIT_NOFILE, &job.nofile);

    if (job.ranks[r].bound && sched_setaffinity(0, sizeof job.ranks[r].cpus, &job.ranks[r].cpus))
        say("rank %d: cannot bind to the CPUs --bind-to %s chose (%s); it runs unbound", r,
            bind_names[job.bind], strerror(errno));
    int fd = pmi_fd >= 0 ? dup(pmi_fd) : -1; /* a copy without FD_CLOEXEC survives exec */
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
    if (rk->wdir && chdir(rk->wdir) != 0) { /* spawn info "wdir" */
        int err = errno;
        ssize_t wr = write(exec_fd, &err, sizeof err);
        (void)wr;
        _exit(126);
    }
    if (rk->path) { /* spawn info "path": searched before $PATH */
        const char *old = getenv("PATH");
        size_t len = strlen(rk->path) + (old ? strlen(old) : 0) + 2;
        char *path = malloc(len);
        if (path) {
            snprintf(path, len, "%s%s%s", rk->path, old ? ":" : "", old ? old : "");
            setenv("PATH", path, 1);
        }
    }
    if (!job.tcp || rk->world > 0) { /* spawned ranks run here, on a socketpair */
        snprintf(num, sizeof num, "%d", fd);
        setenv("PMI_FD", num, 1);
        snprintf(num, sizeof num, "%d", r - w->first);
        setenv("PMI_RANK", num, 1);
        snprintf(num, sizeof num, "%d", w->n);
        setenv("PMI_SIZE", num, 1);
        setenv("FMPL_LAUNCHER", "fmplrun", 1);
        unsetenv("PMI_ID");
        unsetenv("PMI_PORT");
        unsetenv("FMPL_PMI_TOKEN");
        execvp(prog[0], prog);
    } else if (job.ranks[r].host < 0 || job.hosts[job.ranks[r].host].local) {
        unsetenv("PMI_FD");
        unsetenv("PMI_RANK");
        unsetenv("PMI_SIZE");
        setenv("PMI_PORT", job.port_text, 1);
        snprintf(num, sizeof num, "%d", r);
        setenv("PMI_ID", num, 1);
        setenv("FMPL_PMI_TOKEN", job.token, 1);
        setenv("FMPL_LAUNCHER", "fmplrun", 1);
        if (job.ranks[r].host >= 0)
            setenv("FMPL_NODE", job.hosts[job.ranks[r].host].name, 1);
        execvp(job.argv[0], job.argv);
    } else {
        char **argv = launcher_argv(r);
        if (argv)
            execvp(argv[0], argv);
    }
    int err = errno;
    ssize_t wr = write(exec_fd, &err, sizeof err);
    (void)wr;
    _exit(err == ENOENT ? 127 : 126);
}

/* 1 when rank r runs on this host (forked directly). */
static int rank_is_local(int r)
{
    return job.ranks[r].host < 0 || job.hosts[job.ranks[r].host].local;
}

/* --bind-to: the CPUs of each rank of this host (job.ranks[r].cpus), by the rule the
 * library follows when another launcher starts it (base_cpu_place, over the CPUs
 * fmplrun may run on). The ranks learn the mode from FMPL_BIND, which main sets. */
static void plan_binding(void)
{
    cpu_set_t set;
    int nlocal = 0;
    for (int r = 0; r < job.n; r++) {
        job.ranks[r].bound = 0;
        nlocal += rank_is_local(r);
    }
    if (job.bind == BIND_NONE || sched_getaffinity(0, sizeof set, &set) != 0 || CPU_COUNT(&set) < 2)
        return;
    for (int r = 0, i = 0; r < job.n; r++)
        if (rank_is_local(r))
            job.ranks[r].bound =
                base_cpu_place(&set, nlocal, i++, job.bind == BIND_CORE, &job.ranks[r].cpus) > 0;
}

/* Forks ranks [first, first + count) (channels, fork, exec) and waits until each exec
 * succeeded or failed: errs[i] is then 0 or the errno of rank first + i's failure.
 * Returns 0, or -1 (message printed) when a channel or a fork could not be made; the
 * ranks forked before that are running. */
static int fork_ranks(int first, int count, int *errs)
{
    pid_t self = getpid();
    int started = 0, rc = 0;
    for (int r = first; r < first + count; r++) {
        rank_t *rk = &job.ranks[r];
        int sv[2] = {-1, -1}, ep[2], op[2] = {-1, -1}, eq[2] = {-1, -1};
        int pair = !job.tcp || rk->world > 0;
        if ((pair && socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) != 0) ||
            pipe2(ep, O_CLOEXEC) != 0 ||
            (job.tag_output && (pipe2(op, O_CLOEXEC) != 0 || pipe2(eq, O_CLOEXEC) != 0))) {
            say("cannot create the channels of %s: %s", who(rk), strerror(errno));
            rc = -1;
            break;
        }
        pid_t pid = fork();
        if (pid < 0) {
            say("cannot start %s: fork: %s", who(rk), strerror(errno));
            rc = -1;
            break;
        }
        if (pid == 0)
            child_exec(r, sv[1], op[1], eq[1], ep[1], self, &job.old_mask);
        if (r == 0)
            job.pgid = pid;
        (void)setpgid(pid, job.pgid); /* both sides set it: no race with kill(-pgid) */
        rk->pid = pid;
        job.nlive++;
        started++;
        if (sv[1] >= 0)
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
    for (int i = 0; i < count; i++) {
        rank_t *rk = &job.ranks[first + i];
        errs[i] = 0;
        if (i >= started) {
            errs[i] = EAGAIN;
            continue;
        }
        int err = 0;
        ssize_t n;
        do
            n = read(rk->exec_fd, &err, sizeof err);
        while (n < 0 && errno == EINTR);
        close(rk->exec_fd);
        rk->exec_fd = -1;
        if (n == (ssize_t)sizeof err)
            errs[i] = err ? err : EIO;
    }
    return rc;
}

static int start_ranks(void)
{
    plan_binding();
    int *errs = calloc((size_t)job.n, sizeof *errs);
    if (!errs) {
        say("out of memory for %d ranks", job.n);
        return -1;
    }
    int rc = fork_ranks(0, job.n, errs);
    for (int r = 0; rc == 0 && r < job.n; r++) {
        rank_t *rk = &job.ranks[r];
        int err = errs[r];
        if (!err)
            continue;
        if (rk->host >= 0 && !job.hosts[rk->host].local) {
            char word[256];
            size_t skip = strspn(job.launcher, " \t");
            size_t wl = strcspn(job.launcher + skip, " \t");
            snprintf(word, sizeof word, "%.*s", (int)wl, job.launcher + skip);
            job_end(err == ENOENT ? 127 : 126, SIGKILL,
                    "cannot run the launcher '%s' (for host %s): %s", word,
                    job.hosts[rk->host].name, strerror(err));
        } else {
            job_end(err == ENOENT ? 127 : 126, SIGKILL, "cannot run '%s': %s", job.argv[0],
                    strerror(err));
        }
        break;
    }
    free(errs);
    return rc;
}

/* The address of this host the other hosts reach: the source address of the route
 * toward the first other host whose name resolves, else the first non-loopback
 * address of our own name; loopback when every host is this one. */
static int default_pmi_addr(struct in_addr *out)
{
    int all_local = 1;
    for (int h = 0; h < job.nhosts; h++) {
        if (job.hosts[h].local)
            continue;
        all_local = 0;
        const char *name = strchr(job.hosts[h].name, '@'); /* user@host */
        name = name ? name + 1 : job.hosts[h].name;
        struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
        if (getaddrinfo(name, "9", &hints, &res) != 0 || !res)
            continue;
        int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        struct sockaddr_in me;
        socklen_t sl = sizeof me;
        int ok = fd >= 0 && connect(fd, res->ai_addr, res->ai_addrlen) == 0 &&
                 getsockname(fd, (struct sockaddr *)&me, &sl) == 0 &&
                 me.sin_addr.s_addr != htonl(INADDR_ANY) &&
                 (ntohl(me.sin_addr.s_addr) >> 24) != 127;
        if (fd >= 0)
            close(fd);
        freeaddrinfo(res);
        if (ok) {
            *out = me.sin_addr;
            return 0;
        }
    }
    if (all_local) {
        out->s_addr = htonl(INADDR_LOOPBACK);
        return 0;
    }
    char me[256];
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    if (gethostname(me, sizeof me) == 0 && (me[sizeof me - 1] = 0, 1) &&
        getaddrinfo(me, NULL, &hints, &res) == 0) {
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
            struct in_addr a = ((struct sockaddr_in *)(void *)ai->ai_addr)->sin_addr;
            if ((ntohl(a.s_addr) >> 24) != 127) {
                *out = a;
                freeaddrinfo(res);
                return 0;
            }
        }
        freeaddrinfo(res);
    }
    return -1;
}

/* PMI over TCP: places the ranks on the hosts, opens the listening socket and picks
 * the token. Prints the error. */
static int tcp_setup(void)
{
    for (int r = 0, h = 0, used = 0; r < job.n; r++) {
        job.ranks[r].host = job.nhosts ? h : -1;
        if (job.nhosts && ++used == job.hosts[h].slots) {
            used = 0;
            h = (h + 1) % job.nhosts;
        }
    }
    struct in_addr addr;
    if (job.pmi_addr) {
        (void)inet_pton(AF_INET, job.pmi_addr, &addr);
    } else if (default_pmi_addr(&addr) != 0) {
        say("cannot tell which address of this host the other hosts reach (no other host "
            "name resolves, and this host's name has no address outside 127.0.0.0/8): "
            "give --pmi-addr");
        return -1;
    }
    job.listen_fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = addr, .sin_port = 0};
    socklen_t sl = sizeof sa;
    char ip[INET_ADDRSTRLEN];
    (void)inet_ntop(AF_INET, &addr, ip, sizeof ip);
    if (job.listen_fd < 0 || bind(job.listen_fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        listen(job.listen_fd, SOMAXCONN) != 0 /* strangers never fill it */ ||
        getsockname(job.listen_fd, (struct sockaddr *)&sa, &sl) != 0) {
        say("cannot listen for PMI connections on %s: %s%s", ip, strerror(errno),
            job.pmi_addr ? "" : " (give --pmi-addr)");
        return -1;
    }
    snprintf(job.port_text, sizeof job.port_text, "%s:%u", ip, (unsigned)ntohs(sa.sin_port));
    unsigned char rnd[16];
    if (getrandom(rnd, sizeof rnd, 0) != (ssize_t)sizeof rnd) {
        say("getrandom: %s", strerror(errno));
        return -1;
    }
    for (int i = 0; i < 16; i++)
        snprintf(job.token + 2 * i, 3, "%02x", rnd[i]);
    /* Every rank of one host may connect at once from one address. */
    int most = job.nhosts ? 0 : job.n, local = 0;
    for (int h = 0; h < job.nhosts; h++) {
        int count = 0;
        for (int r = 0; r < job.n; r++)
            count += job.ranks[r].host == h;
        if (job.hosts[h].local)
            local += count;
        most = count > most ? count : most;
    }
    most = local > most ? local : most;
    job.pend_cap = job.n + PENDING_EXTRA;
    job.pend_source_cap = most + PENDING_SOURCE_EXTRA;
    job.pend = calloc((size_t)job.pend_cap, sizeof *job.pend);
    if (!job.pend) {
        say("out of memory for %d ranks", job.n);
        return -1;
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
    /* every rank, here or on another host, learns how it was (to be) placed */
    setenv("FMPL_BIND", bind_names[job.bind], 1);

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

    /* poll: the signalfd, the listening socket, pending connections, 3 per rank (room
     * for the ranks spawns may add: the array never moves, rank pointers stay valid) */
    size_t cap = (size_t)job.n + SPAWN_MAX;
    size_t npoll = cap * 3 + 2 + (job.tcp ? (size_t)job.n + PENDING_EXTRA : 0); /* = pend_cap */
    job.ranks = calloc(cap, sizeof *job.ranks);
    job.worlds = calloc(SPAWN_WORLDS_MAX + 2, sizeof *job.worlds); /* + a refused one */
    struct pollfd *pfd = calloc(npoll, sizeof *pfd);
    int *owner = calloc(npoll, sizeof *owner);
    if (!job.ranks || !job.worlds || !pfd || !owner) {
        say("out of memory for %d ranks", job.n);
        return 1;
    }
    job.nranks = job.n;
    job.nworlds = 1;
    job.worlds[0] = (world_t){.first = 0, .n = job.n, .parent = -1};
    snprintf(job.worlds[0].kvsname, sizeof job.worlds[0].kvsname, "%s", job.kvsname);
    for (int r = 0; r < job.n; r++) {
        job.ranks[r].pmi_fd = job.ranks[r].exec_fd = -1;
        job.ranks[r].out[0].fd = job.ranks[r].out[1].fd = -1;
        job.ranks[r].host = -1;
    }
    if (job.tcp && tcp_setup() != 0)
        return 1;

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

    job.old_mask = old_mask;
    if (start_ranks() != 0)
        job_end(1, SIGKILL, NULL);
    if (job.timeout_s > 0 && !job.ending)
        job.timeout_at = now_ns() + (uint64_t)(job.timeout_s * 1e9);

    for (;;) {
        int open_streams = 0;
        nfds_t np = 0;
        uint64_t pend_next = pending_expire(now_ns()), stop_next = stopped_check(now_ns());
        pfd[np] = (struct pollfd){.fd = job.sigfd, .events = POLLIN};
        owner[np++] = -1;
        if (job.listen_fd >= 0) {
            pfd[np] = (struct pollfd){.fd = job.listen_fd, .events = POLLIN};
            owner[np++] = -2;
        }
        for (int i = 0; i < job.npend; i++) {
            pfd[np] = (struct pollfd){.fd = job.pend[i].fd, .events = POLLIN};
            owner[np++] = -3;
        }
        uint64_t lost_at = 0;
        for (int r = 0; r < job.nranks; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->lost_at && !rk->reaped && (!lost_at || rk->lost_at < lost_at))
                lost_at = rk->lost_at;
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
        if (pend_next && (!wake || pend_next < wake))
            wake = pend_next;
        if (stop_next && (!wake || stop_next < wake))
            wake = stop_next;
        if (job.kill_at && !job.killed && (!wake || job.kill_at < wake))
            wake = job.kill_at;
        if (job.timeout_at && (!wake || job.timeout_at < wake))
            wake = job.timeout_at;
        if (lost_at && !job.ending && (!wake || lost_at < wake))
            wake = lost_at;
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
            if (owner[i] == -1) {
                got_signal = 1;
                continue;
            }
            if (owner[i] == -2) {
                listen_accept();
                continue;
            }
            if (owner[i] == -3) { /* found by descriptor: the array moves as entries go */
                for (int k = 0; k < job.npend; k++) {
                    if (job.pend[k].fd == pfd[i].fd) {
                        pending_input(k);
                        break;
                    }
                }
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
        for (int r = 0; lost_at && !job.ending && r < job.nranks; r++) {
            rank_t *rk = &job.ranks[r];
            if (rk->lost_at && !rk->reaped && now >= rk->lost_at)
                job_end(1, SIGTERM, "%s closed its PMI connection before calling fmpl_finalize",
                        who(rk));
        }
        if (job.listen_fd >= 0 && (job.nconnected == job.n || job.ending)) {
            close(job.listen_fd); /* nobody else may join */
            job.listen_fd = -1;
            while (job.npend)
                pending_close(0);
            pending_report_rest();
        }
        if (job.timeout_at && now >= job.timeout_at)
            job_end(EXIT_TIMEOUT, SIGTERM, "job timed out after %g seconds, killing %d ranks%s",
                    job.timeout_s, job.nlive, stopped_ranks_text());
        if (job.kill_at && !job.killed && now >= job.kill_at) {
            signal_ranks(SIGKILL);
            job.killed = 1;
        }
    }

    for (int r = 0; r < job.nranks; r++) {
        pmi_close(&job.ranks[r]);
        for (int s = 0; s < 2; s++)
            if (job.ranks[r].out[s].fd >= 0)
                close(job.ranks[r].out[s].fd);
    }
    while (job.npend)
        pending_close(0);
    pending_report_rest();
    if (job.listen_fd >= 0)
        close(job.listen_fd);
    shm_cleanup();
    kvs_free();
    names_free();
    for (int r = 0; r < job.nranks; r++)
        spawn_req_free(job.ranks[r].spawn);
    for (int i = 0; i < job.nworlds; i++)
        spawn_apps_free(&job.worlds[i]);
    free(job.worlds);
    free(job.hosts);
    free(job.pend);
    free(job.ranks);
    free(pfd);
    free(owner);
    return job.exit_code_set ? job.exit_code : 0;
}
