/* boot.c — the boot layer (see boot.h): a PMI-1 wire-protocol client over the
 * socket a launcher passes in PMI_FD (our fmplrun, MPICH's Hydra) or over a TCP
 * connection to PMI_PORT (fmplrun --hosts, Hydra -pmi-port), and a singleton
 * backend with a process-local key-value space when no launcher is present.
 *
 * Every PMI exchange is one request line and one reply line on a blocking socket;
 * reads and writes survive EINTR and partial transfers. When the launcher goes
 * away (end of file, reset) the call fails with FMPL_ERR_PEER and every later
 * call fails at once the same way, so nothing hangs on a dead launcher. */
#include "boot/boot.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "boot/pmi_wire.h"

#define BOOT_JOB_ID_MAX 128 /* longest job id and kvsname accepted, with the NUL */
#define BOOT_HOST_KEY "boot-host"
#define BOOT_ABORT_PAUSE_MS 100 /* between the abort message and cmd=abort (not fmplrun) */

/* A put of the longest key and kvsname and a BOOT_VALUE_PORTABLE value fits in a line. */
_Static_assert(sizeof "cmd=put kvsname= key= value=\n" - 1 + (BOOT_JOB_ID_MAX - 1) +
                       (BOOT_KEY_MAX - 1) + BOOT_VALUE_PORTABLE <=
                   PMI_WIRE_REQUEST_MAX,
               "BOOT_VALUE_PORTABLE does not fit in a PMI-1 request line");

typedef enum { BOOT_SINGLETON, BOOT_PMI } boot_kind_t;

typedef struct boot_kv { /* one entry of the singleton's key-value space */
    char key[BOOT_KEY_MAX + 16];
    char value[BOOT_VALUE_MAX];
} boot_kv_t;

struct boot {
    boot_kind_t kind;
    int from_fmplrun; /* the launcher is our own fmplrun (FMPL_LAUNCHER=fmplrun) */
    int rank, size;
    int fd;     /* PMI socket; -1 for the singleton */
    int own_fd; /* fd was connected here (PMI_PORT), not inherited (PMI_FD) */
    int broken; /* the launcher went away: every call fails with FMPL_ERR_PEER */
    int retry;  /* a PMI_PORT initack that may be tried again: a lost connection is quiet */
    /* local IPv4 address of the PMI_PORT connection, or "" */
    char local_addr[INET_ADDRSTRLEN];
    int keylen_max, vallen_max;
    char kvsname[BOOT_JOB_ID_MAX];
    char job_id[BOOT_JOB_ID_MAX];
    /* bytes received from the launcher and not yet consumed */
    char rbuf[PMI_WIRE_LINE_MAX];
    size_t rlen;
    /* the last reply line; the tokens of a parsed reply point into it */
    char reply[PMI_WIRE_LINE_MAX];
    /* singleton key-value space */
    boot_kv_t *kvs;
    size_t nkvs, kvs_cap;
    /* topology, filled by the first boot_nodes() */
    int nodes_ready;
    boot_nodes_t nodes;
    int *node_of, *local_ranks;
};

/* ------------------------------------------------------------------ helpers */

/* Parses a decimal int in [min, max]; returns 0 or -1. */
static int boot_parse_int(const char *s, int min, int max, int *out)
{
    if (!s || !*s)
        return -1;
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || *end || v < min || v > max)
        return -1;
    *out = (int)v;
    return 0;
}

/* Keys and values travel as single PMI tokens through any PMI-1 server, old or
 * new: printable ASCII without space, '=' or backslash (hex, base64url, host
 * names and the like). */
static int boot_text_ok(const char *s, size_t max_with_nul)
{
    size_t n = 0;
    for (; s[n]; n++) {
        unsigned char c = (unsigned char)s[n];
        if (c <= 0x20 || c >= 0x7f || c == '=' || c == '\\')
            return 0;
    }
    return n > 0 && n < max_with_nul;
}

static void boot_sanitise_job_id(const char *kvsname, char *out, size_t cap)
{
    size_t n = 0;
    for (; kvsname[n] && n + 1 < cap; n++) {
        char c = kvsname[n];
        int ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                 c == '_' || c == '-';
        out[n] = ok ? c : '_';
    }
    out[n] = 0;
}

/* ------------------------------------------------------------- PMI transport */

static int boot_broken(boot_t *b, const char *why, int err)
{
    if (!b->broken && !b->retry) {
        if (err)
            base_log("boot: lost the launcher (PMI socket %d): %s: %s", b->fd, why, strerror(err));
        else
            base_log("boot: lost the launcher (PMI socket %d): %s", b->fd, why);
    }
    b->broken = 1;
    return FMPL_ERR_PEER;
}

static int pmi_write_all(boot_t *b, const char *buf, size_t len)
{
    while (len) {
        ssize_t n = send(b->fd, buf, len, MSG_NOSIGNAL);
        if (n < 0 && errno == ENOTSOCK)
            n = write(b->fd, buf, len); /* a pipe pair: still a valid PMI channel */
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return boot_broken(b, "write failed", errno);
        }
        buf += n;
        len -= (size_t)n;
    }
    return FMPL_SUCCESS;
}

/* Reads one reply line into b->reply (without its '\n'). Blocks until it arrives. */
static int pmi_read_line(boot_t *b)
{
    for (;;) {
        char *nl = memchr(b->rbuf, '\n', b->rlen);
        if (nl) {
            size_t n = (size_t)(nl - b->rbuf);
            memcpy(b->reply, b->rbuf, n);
            b->reply[n] = 0;
            b->rlen -= n + 1;
            memmove(b->rbuf, nl + 1, b->rlen);
            return FMPL_SUCCESS;
        }
        if (b->rlen == sizeof b->rbuf) {
            b->broken = 1;
            base_log("boot: the launcher sent a line longer than %d bytes", PMI_WIRE_LINE_MAX);
            return FMPL_ERR_PEER;
        }
        ssize_t n = read(b->fd, b->rbuf + b->rlen, sizeof b->rbuf - b->rlen);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return boot_broken(b, "read failed", errno);
        if (n == 0)
            return boot_broken(b, "the launcher closed the connection (did it die?)", 0);
        b->rlen += (size_t)n;
    }
}

/* Sends `request` (a complete line) and reads the reply, which must be
 * cmd=<expect>; rc, when present, must be 0 unless rc_out is given, which then
 * receives it. The reply tokens stay valid until the next exchange. */
static int pmi_call(boot_t *b, const char *request, const char *expect, pmi_msg_t *reply,
                    int *rc_out)
{
    if (b->broken)
        return FMPL_ERR_PEER;
    int err = pmi_write_all(b, request, strlen(request));
    if (err)
        return err;
    err = pmi_read_line(b);
    if (err)
        return err;
    if (pmi_wire_parse(b->reply, reply) != 0 || strcmp(reply->cmd, expect) != 0) {
        base_log("boot: unexpected reply from the launcher to %.*s: '%.200s' (expected cmd=%s)",
                 (int)strcspn(request, "\n"), request, b->reply, expect);
        b->broken = 1;
        return FMPL_ERR_PEER;
    }
    const char *rc_text = pmi_wire_find(reply, "rc");
    int rc = 0;
    if (rc_text && boot_parse_int(rc_text, INT_MIN, INT_MAX, &rc) != 0)
        rc = -1;
    if (rc_out) {
        *rc_out = rc;
    } else if (rc != 0) {
        const char *msg = pmi_wire_find(reply, "msg");
        base_log("boot: the launcher refused %.*s: rc=%d %s", (int)strcspn(request, "\n"), request,
                 rc, msg ? msg : "");
        return FMPL_ERR_PEER;
    }
    return FMPL_SUCCESS;
}

/* Formats a request line from NULL-terminated key/value pairs after cmd. */
static int pmi_format(char *buf, size_t cap, const char *cmd, const char *const *kv)
{
    size_t len = 0;
    if (pmi_wire_append(buf, cap, &len, "cmd", cmd) != 0)
        return FMPL_ERR_ARG;
    for (; kv && kv[0]; kv += 2)
        if (pmi_wire_append(buf, cap, &len, kv[0], kv[1]) != 0)
            return FMPL_ERR_ARG;
    if (pmi_wire_end(buf, cap, &len) != 0)
        return FMPL_ERR_ARG;
    return FMPL_SUCCESS;
}

static int pmi_simple(boot_t *b, const char *cmd, const char *expect, pmi_msg_t *reply)
{
    char req[64];
    snprintf(req, sizeof req, "cmd=%s\n", cmd);
    return pmi_call(b, req, expect, reply, NULL);
}

/* pmi_initack's answer when fmplrun's TCP server let the connection go before judging
 * its line, which it does to the oldest waiting connections when strangers crowd its
 * port: with b->retry set, it refused the connection for that crowd, or the connection
 * ended before any reply. The caller connects again. */
#define PMI_INITACK_CROWDED 1

/* The old handshake for launchers that pass PMI_ID instead of PMI_RANK/PMI_SIZE:
 * cmd=initack pmiid=ID, answered by cmd=initack then cmd=set size=, rank=, debug=. */
static int pmi_initack(boot_t *b, int pmi_id)
{
    char req[160];
    pmi_msg_t reply;
    /* fmplrun's TCP server admits a connection only with the job's token */
    const char *token = getenv("FMPL_PMI_TOKEN");
    if (token && *token && boot_text_ok(token, 64))
        snprintf(req, sizeof req, "cmd=initack pmiid=%d token=%s\n", pmi_id, token);
    else
        snprintf(req, sizeof req, "cmd=initack pmiid=%d\n", pmi_id);
    int rc = 0;
    int err = pmi_call(b, req, "initack", &reply, &rc);
    if (err && b->retry && b->rlen == 0)
        return PMI_INITACK_CROWDED;
    if (!err && rc != 0) {
        const char *msg = pmi_wire_find(&reply, "msg");
        if (b->retry && msg && strstr(msg, "await their token"))
            return PMI_INITACK_CROWDED;
        base_log("boot: the launcher refused %.*s: rc=%d %s", (int)strcspn(req, "\n"), req, rc,
                 msg ? msg : "");
        err = FMPL_ERR_PEER;
    }
    for (int i = 0; !err && i < 3; i++) {
        err = pmi_read_line(b);
        if (err)
            break;
        const char *v;
        if (pmi_wire_parse(b->reply, &reply) != 0 || strcmp(reply.cmd, "set") != 0) {
            base_log("boot: unexpected line in the PMI initack reply: '%.200s'", b->reply);
            return FMPL_ERR_INIT;
        }
        if ((v = pmi_wire_find(&reply, "size")) && boot_parse_int(v, 1, INT_MAX, &b->size))
            err = FMPL_ERR_INIT;
        if ((v = pmi_wire_find(&reply, "rank")) && boot_parse_int(v, 0, INT_MAX, &b->rank))
            err = FMPL_ERR_INIT;
    }
    if (!err && b->rank >= b->size)
        err = FMPL_ERR_INIT;
    if (err)
        base_log("boot: the PMI initack handshake failed");
    return err ? FMPL_ERR_INIT : FMPL_SUCCESS;
}

/* Rank and size from PMI_RANK/PMI_SIZE, or *pmi_id from PMI_ID (the older handshake
 * then asks the launcher). `need` names the channel variable for messages. */
static int pmi_env_identity(boot_t *b, const char *need, int *pmi_id)
{
    const char *rank_text = getenv("PMI_RANK"), *size_text = getenv("PMI_SIZE");
    const char *id_text = getenv("PMI_ID");
    *pmi_id = -1;
    if (rank_text || size_text) {
        if (boot_parse_int(size_text, 1, INT_MAX, &b->size) != 0 ||
            boot_parse_int(rank_text, 0, b->size - 1, &b->rank) != 0) {
            base_log("boot: PMI_RANK='%s' and PMI_SIZE='%s' are not a valid rank and size",
                     rank_text ? rank_text : "", size_text ? size_text : "");
            return FMPL_ERR_INIT;
        }
    } else if (boot_parse_int(id_text, 0, INT_MAX, pmi_id) != 0) {
        base_log("boot: %s is set but neither PMI_RANK/PMI_SIZE nor PMI_ID is", need);
        return FMPL_ERR_INIT;
    }
    return FMPL_SUCCESS;
}

/* The handshake on a connected PMI channel: cmd=init (the PMI_ID handshake before it
 * when initack_first, as MPICH's simple PMI does over PMI_PORT; after it over PMI_FD),
 * then get_maxes and get_my_kvsname. */
static int pmi_handshake(boot_t *b, int pmi_id, int initack_first)
{
    pmi_msg_t reply;
    int err;
    if (pmi_id >= 0 && initack_first && (err = pmi_initack(b, pmi_id)) != 0)
        return err;
    err =
        pmi_call(b, "cmd=init pmi_version=1 pmi_subversion=1\n", "response_to_init", &reply, NULL);
    if (err) {
        base_log("boot: the launcher did not accept PMI version 1.1");
        return FMPL_ERR_INIT;
    }
    if (pmi_id >= 0 && !initack_first && (err = pmi_initack(b, pmi_id)) != 0)
        return err;

    err = pmi_simple(b, "get_maxes", "maxes", &reply);
    if (err)
        return FMPL_ERR_INIT;
    const char *v;
    b->keylen_max = BOOT_KEY_MAX;
    b->vallen_max = BOOT_VALUE_MAX;
    int n;
    if ((v = pmi_wire_find(&reply, "keylen_max")) && boot_parse_int(v, 1, INT_MAX, &n) == 0)
        b->keylen_max = BASE_MIN(n, BOOT_KEY_MAX);
    if ((v = pmi_wire_find(&reply, "vallen_max")) && boot_parse_int(v, 1, INT_MAX, &n) == 0)
        b->vallen_max = BASE_MIN(n, BOOT_VALUE_MAX);

    err = pmi_simple(b, "get_my_kvsname", "my_kvsname", &reply);
    if (err)
        return FMPL_ERR_INIT;
    v = pmi_wire_find(&reply, "kvsname");
    if (!v || !*v || strlen(v) >= BOOT_JOB_ID_MAX) {
        base_log("boot: the launcher sent no usable kvsname ('%.200s'; 1 to %d bytes expected)",
                 v ? v : "", BOOT_JOB_ID_MAX - 1);
        return FMPL_ERR_INIT;
    }
    strcpy(b->kvsname, v);
    boot_sanitise_job_id(b->kvsname, b->job_id, sizeof b->job_id);
    (void)fcntl(b->fd, F_SETFD, FD_CLOEXEC); /* programs the rank execs must not inherit it */
    return FMPL_SUCCESS;
}

static void boot_which_launcher(boot_t *b)
{
    b->kind = BOOT_PMI;
    const char *launcher = getenv("FMPL_LAUNCHER");
    b->from_fmplrun = launcher && strcmp(launcher, "fmplrun") == 0;
}

static int boot_init_pmi(boot_t *b, const char *fd_text)
{
    boot_which_launcher(b);
    if (boot_parse_int(fd_text, 0, INT_MAX, &b->fd) != 0 || fcntl(b->fd, F_GETFD) < 0) {
        base_log("boot: PMI_FD='%s' is not an open file descriptor; start the program with "
                 "fmplrun (or without any launcher to run it alone)",
                 fd_text);
        b->fd = -1;
        return FMPL_ERR_INIT;
    }
    int pmi_id;
    int err = pmi_env_identity(b, "PMI_FD", &pmi_id);
    return err ? err : pmi_handshake(b, pmi_id, 0);
}

/* Connections boot_init_pmi_port makes to PMI_PORT at most (10 ms, 20 ms ... 200 ms apart:
 * about 3 s). */
#define PMI_CONNECT_ATTEMPTS 20

/* PMI_PORT=<host>:<port>: a PMI server reached over TCP (fmplrun --hosts, Hydra's
 * -pmi-port). The host is an IPv4 address or a name; the PMI_ID handshake (or
 * PMI_RANK/PMI_SIZE) says who we are. The connection's local address is kept: it is
 * an address of this host that the launcher's host reaches (boot_local_addr). */
static int boot_init_pmi_port(boot_t *b, const char *port_text)
{
    boot_which_launcher(b);
    int pmi_id;
    int err = pmi_env_identity(b, "PMI_PORT", &pmi_id);
    if (err)
        return err;
    char host[256];
    const char *colon = strrchr(port_text, ':');
    size_t hlen = colon ? (size_t)(colon - port_text) : 0;
    int port;
    if (!colon || hlen == 0 || hlen >= sizeof host || boot_parse_int(colon + 1, 1, 65535, &port)) {
        base_log("boot: PMI_PORT='%s' is not <host>:<port>", port_text);
        return FMPL_ERR_INIT;
    }
    memcpy(host, port_text, hlen);
    host[hlen] = 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_STREAM}, *res = NULL;
    int gai = getaddrinfo(host, colon + 1, &hints, &res);
    if (gai != 0 || !res) {
        base_log("boot: PMI_PORT='%s': cannot resolve '%s': %s", port_text, host,
                 gai ? gai_strerror(gai) : "no address");
        return FMPL_ERR_INIT;
    }
    /* Strangers that crowd fmplrun's port may push our connection out before our line
     * is read (a rank descheduled between connect and send): connect again, a few
     * times, after a growing pause (PMI_INITACK_CROWDED). */
    for (int attempt = 1;; attempt++) {
        int fd = -1, why = 0;
        for (const struct addrinfo *ai = res; ai && fd < 0; ai = ai->ai_next) {
            fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
            if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) != 0) {
                why = errno;
                close(fd);
                fd = -1;
            } else if (fd < 0) {
                why = errno;
            }
        }
        if (fd < 0) {
            freeaddrinfo(res);
            base_log("boot: cannot connect to the launcher at PMI_PORT=%s: %s", port_text,
                     strerror(why));
            return FMPL_ERR_INIT;
        }
        b->fd = fd;
        b->own_fd = 1;
        b->broken = 0;
        b->rlen = 0;
        int one = 1;
        (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
        struct sockaddr_in me;
        socklen_t len = sizeof me;
        if (getsockname(fd, (struct sockaddr *)&me, &len) == 0 && me.sin_family == AF_INET)
            (void)inet_ntop(AF_INET, &me.sin_addr, b->local_addr, sizeof b->local_addr);
        if (pmi_id < 0)
            break;
        b->retry = attempt < PMI_CONNECT_ATTEMPTS;
        err = pmi_initack(b, pmi_id);
        b->retry = 0;
        if (err != PMI_INITACK_CROWDED)
            break;
        close(fd);
        b->fd = -1;
        long long ns = BASE_MIN(10000000ll << BASE_MIN(attempt - 1, 5), 200000000ll);
        struct timespec pause = {0, (long)ns};
        while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
            ;
    }
    freeaddrinfo(res);
    if (err)
        return err;
    return pmi_handshake(b, -1, 1); /* the initack is done */
}

static int boot_init_singleton(boot_t *b)
{
    b->kind = BOOT_SINGLETON;
    b->fd = -1;
    b->rank = 0;
    b->size = 1;
    b->keylen_max = BOOT_KEY_MAX;
    b->vallen_max = BOOT_VALUE_MAX;
    unsigned int salt = 0;
    if (getrandom(&salt, sizeof salt, GRND_NONBLOCK) != (ssize_t)sizeof salt)
        salt = (unsigned int)base_time_ns();
    snprintf(b->kvsname, sizeof b->kvsname, "s%ld-%08x", (long)getpid(), salt);
    boot_sanitise_job_id(b->kvsname, b->job_id, sizeof b->job_id);
    return FMPL_SUCCESS;
}

/* Started by Slurm's srun as one of several tasks, but without a PMI server (srun
 * --mpi=none, Slurm's default): each task would be a separate job of size 1. */
static int boot_slurm_without_pmi(void)
{
    const char *ntasks = getenv("SLURM_STEP_NUM_TASKS");
    int n = 0;
    if (!ntasks || !getenv("SLURM_PROCID") || boot_parse_int(ntasks, 1, INT_MAX, &n) != 0 || n < 2)
        return 0;
    base_log("boot: started by srun as one of %d tasks, but without a PMI server (PMI_FD is "
             "unset), so every task would be a job of its own: run srun --mpi=pmi2 (or set "
             "MpiDefault=pmi2 in slurm.conf)",
             n);
    return 1;
}

/* ---------------------------------------------------------------- lifetime */

int boot_init(boot_t **out)
{
    if (!out)
        return FMPL_ERR_ARG;
    *out = NULL;
    boot_t *b = calloc(1, sizeof *b);
    if (!b) {
        base_log("boot: out of memory");
        return FMPL_ERR_NOMEM;
    }
    b->fd = -1;
    const char *fd_text = getenv("PMI_FD");
    int err;
    if (fd_text) {
        err = boot_init_pmi(b, fd_text);
    } else if (getenv("PMI_PORT")) {
        err = boot_init_pmi_port(b, getenv("PMI_PORT"));
    } else if (boot_slurm_without_pmi()) {
        err = FMPL_ERR_INIT;
    } else {
        err = boot_init_singleton(b);
    }
    if (err) {
        /* The descriptor in PMI_FD is left open: it was inherited, not opened here,
         * and may not even be a PMI socket. One we connected (PMI_PORT) is closed. */
        if (b->own_fd)
            close(b->fd);
        free(b);
        return err;
    }
    base_log_set_rank(b->size > 1 ? b->rank : -1);
    *out = b;
    return FMPL_SUCCESS;
}

int boot_finalize(boot_t *b)
{
    if (!b)
        return FMPL_ERR_ARG;
    int err = FMPL_SUCCESS;
    if (b->kind == BOOT_PMI) {
        pmi_msg_t reply;
        err = pmi_simple(b, "finalize", "finalize_ack", &reply);
        close(b->fd);
    }
    base_log_set_rank(-1);
    free(b->kvs);
    free(b->node_of);
    free(b->local_ranks);
    free(b);
    return err;
}

int boot_rank(const boot_t *b)
{
    return b ? b->rank : -1;
}
int boot_size(const boot_t *b)
{
    return b ? b->size : -1;
}
const char *boot_job_id(const boot_t *b)
{
    return b ? b->job_id : NULL;
}

const char *boot_local_addr(const boot_t *b)
{
    return b && b->local_addr[0] ? b->local_addr : NULL;
}

const char *boot_backend(const boot_t *b)
{
    if (!b)
        return NULL;
    if (b->kind == BOOT_SINGLETON)
        return "singleton";
    return b->from_fmplrun ? "fmplrun" : "pmi";
}

/* ------------------------------------------------------------ key-value space */

/* The stored key "<key>.<rank>", checked against the launcher's key limit. */
static int boot_full_key(const boot_t *b, const char *key, int rank, char *out, size_t cap)
{
    if (!boot_text_ok(key, BOOT_KEY_MAX))
        return FMPL_ERR_ARG;
    int n = snprintf(out, cap, "%s.%d", key, rank);
    if (n < 0 || (size_t)n >= cap || n >= b->keylen_max)
        return FMPL_ERR_ARG;
    return FMPL_SUCCESS;
}

static boot_kv_t *boot_local_find(boot_t *b, const char *full_key)
{
    for (size_t i = 0; i < b->nkvs; i++)
        if (strcmp(b->kvs[i].key, full_key) == 0)
            return &b->kvs[i];
    return NULL;
}

static int boot_local_put(boot_t *b, const char *full_key, const char *value)
{
    boot_kv_t *kv = boot_local_find(b, full_key);
    if (!kv) {
        if (b->nkvs == b->kvs_cap) {
            size_t cap = b->kvs_cap ? 2 * b->kvs_cap : 8;
            boot_kv_t *grown = realloc(b->kvs, cap * sizeof *grown);
            if (!grown)
                return FMPL_ERR_NOMEM;
            b->kvs = grown;
            b->kvs_cap = cap;
        }
        kv = &b->kvs[b->nkvs++];
        snprintf(kv->key, sizeof kv->key, "%s", full_key);
    }
    snprintf(kv->value, sizeof kv->value, "%s", value);
    return FMPL_SUCCESS;
}

int boot_put(boot_t *b, const char *key, const char *value)
{
    if (!b || !key || !value || !boot_text_ok(value, (size_t)b->vallen_max))
        return FMPL_ERR_ARG;
    char full_key[BOOT_KEY_MAX];
    int err = boot_full_key(b, key, b->rank, full_key, sizeof full_key);
    if (err)
        return err;
    /* One request line of at most PMI_WIRE_REQUEST_MAX bytes, whatever the launcher
     * (measured for the singleton too, so that a program behaves alike everywhere). */
    char req[PMI_WIRE_REQUEST_MAX + 1]; /* with the NUL */
    const char *kv[] = {"kvsname", b->kvsname, "key", full_key, "value", value, NULL};
    if (pmi_format(req, sizeof req, "put", kv) != 0) {
        base_log("boot: the value of %s (%zu bytes) does not fit in one PMI-1 request line of "
                 "%d bytes with kvsname %s (values of up to %d bytes always fit)",
                 full_key, strlen(value), PMI_WIRE_REQUEST_MAX, b->kvsname, BOOT_VALUE_PORTABLE);
        return FMPL_ERR_ARG;
    }
    if (b->kind == BOOT_SINGLETON)
        return boot_local_put(b, full_key, value);
    pmi_msg_t reply;
    return pmi_call(b, req, "put_result", &reply, NULL);
}

int boot_get(boot_t *b, int rank, const char *key, char *value)
{
    if (!b || !key || !value)
        return FMPL_ERR_ARG;
    if (rank < 0 || rank >= b->size)
        return FMPL_ERR_RANK;
    char full_key[BOOT_KEY_MAX];
    int err = boot_full_key(b, key, rank, full_key, sizeof full_key);
    if (err)
        return err;
    if (b->kind == BOOT_SINGLETON) {
        const boot_kv_t *kv = boot_local_find(b, full_key);
        if (!kv)
            return FMPL_ERR_ARG;
        memcpy(value, kv->value, strlen(kv->value) + 1);
        return FMPL_SUCCESS;
    }

    char req[PMI_WIRE_REQUEST_MAX + 1]; /* always room: kvsname and key are bounded */
    const char *kv[] = {"kvsname", b->kvsname, "key", full_key, NULL};
    if ((err = pmi_format(req, sizeof req, "get", kv)) != 0)
        return err;
    pmi_msg_t reply;
    int rc;
    if ((err = pmi_call(b, req, "get_result", &reply, &rc)) != 0)
        return err;
    if (rc != 0)
        return FMPL_ERR_ARG; /* no such key */
    const char *v = pmi_wire_find(&reply, "value");
    if (!v)
        v = ""; /* an empty value: MPICH omits the token */
    size_t len = strlen(v);
    if (len >= BOOT_VALUE_MAX) {
        base_log("boot: the launcher returned a value of %zu bytes for %s (limit %d)", len,
                 full_key, BOOT_VALUE_MAX - 1);
        return FMPL_ERR_PEER;
    }
    memcpy(value, v, len + 1);
    return FMPL_SUCCESS;
}

int boot_fence(boot_t *b)
{
    if (!b)
        return FMPL_ERR_ARG;
    if (b->kind == BOOT_SINGLETON)
        return FMPL_SUCCESS;
    pmi_msg_t reply;
    return pmi_simple(b, "barrier_in", "barrier_out", &reply);
}

/* ------------------------------------------------------------ name service */

/* Printable ASCII, spaces allowed (the wire escapes them), 1 to BOOT_NAME_MAX - 1. */
static int boot_name_ok(const char *s)
{
    size_t n = 0;
    for (; s[n]; n++)
        if ((unsigned char)s[n] < 0x20 || (unsigned char)s[n] >= 0x7f)
            return 0;
    return n > 0 && n < BOOT_NAME_MAX;
}

/* One name-service exchange: request cmd with kv, reply cmd=<expect> whose rc is 0 on
 * success. MPICH's servers answer info=ok (or the reason); fmplrun also sends a
 * reason= token for the refusals it knows: "published" (publish of a name in use; Hydra:
 * rc=1 msg=key_already_present) and
 * "unknown" (lookup or unpublish of a name not published); a refusal without it
 * returns `refused`. */
static int boot_name_call(boot_t *b, const char *cmd, const char *expect, const char *const *kv,
                          int refused, char *port, char *why)
{
    if (why)
        why[0] = 0;
    if (b->kind == BOOT_SINGLETON) {
        if (why)
            snprintf(why, BOOT_NAME_MAX,
                     "no name service: this process was started without a launcher "
                     "(a singleton); start it with fmplrun/mpiexec");
        return FMPL_ERR_UNSUPPORTED;
    }
    char req[PMI_WIRE_REQUEST_MAX + 1];
    if (pmi_format(req, sizeof req, cmd, kv) != 0)
        return FMPL_ERR_ARG;
    pmi_msg_t reply;
    int rc, err = pmi_call(b, req, expect, &reply, &rc);
    if (err)
        return err;
    const char *info = pmi_wire_find(&reply, "info");
    const char *reason = pmi_wire_find(&reply, "reason");
    if (rc == 0 && (!info || strcmp(info, "ok") == 0)) {
        if (port) {
            const char *v = pmi_wire_find(&reply, "port");
            if (!v || !boot_name_ok(v)) {
                base_log("boot: the launcher answered %s without a usable port", cmd);
                return FMPL_ERR_PEER;
            }
            memcpy(port, v, strlen(v) + 1);
        }
        return FMPL_SUCCESS;
    }
    const char *text = pmi_wire_find(&reply, "msg"); /* Hydra's reason */
    if (info && strcmp(info, "ok") != 0)
        text = info;
    if (why)
        snprintf(why, BOOT_NAME_MAX, "%s", text ? text : reason ? reason : "refused");
    if ((reason && strcmp(reason, "published") == 0) ||
        (text && strcmp(text, "key_already_present") == 0))
        return FMPL_ERR_BUSY;
    if (reason && strcmp(reason, "unknown") == 0)
        return FMPL_ERR_ARG;
    return refused;
}

int boot_name_publish(boot_t *b, const char *service, const char *port, char *why)
{
    if (!b || !service || !port || !boot_name_ok(service) || !boot_name_ok(port))
        return FMPL_ERR_ARG;
    const char *kv[] = {"service", service, "port", port, NULL};
    return boot_name_call(b, "publish_name", "publish_result", kv, FMPL_ERR_UNSUPPORTED, NULL, why);
}

int boot_name_lookup(boot_t *b, const char *service, char *port, char *why)
{
    if (!b || !service || !port || !boot_name_ok(service))
        return FMPL_ERR_ARG;
    const char *kv[] = {"service", service, NULL};
    return boot_name_call(b, "lookup_name", "lookup_result", kv, FMPL_ERR_ARG, port, why);
}

int boot_name_unpublish(boot_t *b, const char *service, char *why)
{
    if (!b || !service || !boot_name_ok(service))
        return FMPL_ERR_ARG;
    const char *kv[] = {"service", service, NULL};
    return boot_name_call(b, "unpublish_name", "unpublish_result", kv, FMPL_ERR_ARG, NULL, why);
}

/* --------------------------------------------------------------- spawn */

/* One "name=value\n" line of a spawn block (value NULL: "name\n"); values are raw to the
 * end of the line. */
static int spawn_line(char **buf, size_t *len, size_t *cap, const char *name, const char *value)
{
    if (value && strchr(value, '\n'))
        return FMPL_ERR_ARG;
    size_t need = strlen(name) + (value ? strlen(value) : 0) + 2;
    if (*len + need + 1 > *cap) {
        size_t c = 2 * (*cap + need);
        char *n = realloc(*buf, c);
        if (!n)
            return FMPL_ERR_NOMEM;
        *buf = n;
        *cap = c;
    }
    *len += (size_t)(value ? sprintf(*buf + *len, "%s=%s\n", name, value)
                           : sprintf(*buf + *len, "%s\n", name));
    return FMPL_SUCCESS;
}

int boot_spawn(boot_t *b, int count, const char *const *cmd, char **const *argv, const int *nprocs,
               const int *nkeys, const char *const *const *key, const char *const *const *value,
               const char *preput_key, const char *preput_value, int *errcodes, char *why)
{
    if (why)
        why[0] = 0;
    if (!b || count < 1 || !cmd || !nprocs || !errcodes)
        return FMPL_ERR_ARG;
    if (b->kind == BOOT_SINGLETON) {
        if (why)
            snprintf(why, BOOT_NAME_MAX,
                     "this process was not started by a launcher (a "
                     "singleton), which could spawn; start it with "
                     "fmplrun/mpiexec");
        return FMPL_ERR_UNSUPPORTED;
    }
    char *buf = NULL, num[32], name[48];
    size_t len = 0, cap = 0;
    int err = FMPL_SUCCESS, total = 0;
    for (int c = 0; c < count && !err; c++) {
        int argc = 0;
        while (argv && argv[c] && argv[c][argc])
            argc++;
        total += nprocs[c];
        err = spawn_line(&buf, &len, &cap, "mcmd", "spawn");
        snprintf(num, sizeof num, "%d", nprocs[c]);
        err = err ? err : spawn_line(&buf, &len, &cap, "nprocs", num);
        err = err ? err : spawn_line(&buf, &len, &cap, "execname", cmd[c]);
        snprintf(num, sizeof num, "%d", count);
        err = err ? err : spawn_line(&buf, &len, &cap, "totspawns", num);
        snprintf(num, sizeof num, "%d", c + 1);
        err = err ? err : spawn_line(&buf, &len, &cap, "spawnssofar", num);
        snprintf(num, sizeof num, "%d", argc);
        err = err ? err : spawn_line(&buf, &len, &cap, "argcnt", num);
        for (int a = 0; a < argc && !err; a++) {
            snprintf(name, sizeof name, "arg%d", a + 1);
            err = spawn_line(&buf, &len, &cap, name, argv[c][a]);
        }
        err = err ? err : spawn_line(&buf, &len, &cap, "preput_num", preput_key ? "1" : "0");
        if (preput_key) {
            err = err ? err : spawn_line(&buf, &len, &cap, "preput_key_0", preput_key);
            err = err ? err : spawn_line(&buf, &len, &cap, "preput_val_0", preput_value);
        }
        int nk = nkeys ? nkeys[c] : 0;
        snprintf(num, sizeof num, "%d", nk);
        err = err ? err : spawn_line(&buf, &len, &cap, "info_num", num);
        for (int k = 0; k < nk && !err; k++) {
            snprintf(name, sizeof name, "info_key_%d", k);
            err = spawn_line(&buf, &len, &cap, name, key[c][k]);
            snprintf(name, sizeof name, "info_val_%d", k);
            err = err ? err : spawn_line(&buf, &len, &cap, name, value[c][k]);
        }
        err = err ? err : spawn_line(&buf, &len, &cap, "endcmd", NULL);
    }
    for (int i = 0; i < total; i++)
        errcodes[i] = 0;
    pmi_msg_t reply;
    int rc = 0;
    if (!err)
        err = pmi_call(b, buf, "spawn_result", &reply, &rc);
    free(buf);
    if (err)
        return err;
    const char *codes = pmi_wire_find(&reply, "errcodes");
    for (int i = 0; codes && *codes && i < total; i++) {
        errcodes[i] = atoi(codes);
        codes = strchr(codes, ',');
        codes = codes ? codes + 1 : NULL;
    }
    if (rc == 0)
        return FMPL_SUCCESS;
    const char *msg = pmi_wire_find(&reply, "msg");
    if (why)
        snprintf(why, BOOT_NAME_MAX, "%s", msg ? msg : "the launcher cannot spawn");
    for (int i = 0; i < total && !pmi_wire_find(&reply, "errcodes"); i++)
        errcodes[i] = -1;
    return FMPL_ERR_PEER;
}

int boot_appnum(boot_t *b)
{
    if (!b || b->kind == BOOT_SINGLETON)
        return 0;
    pmi_msg_t reply;
    int rc, n = 0;
    if (pmi_call(b, "cmd=get_appnum\n", "appnum", &reply, &rc) != 0 || rc != 0)
        return 0;
    const char *v = pmi_wire_find(&reply, "appnum");
    if (!v || boot_parse_int(v, 0, INT_MAX, &n) != 0)
        return 0;
    return n;
}

int boot_job_get(boot_t *b, const char *key, char *value)
{
    if (!b || !key || !value || b->kind == BOOT_SINGLETON)
        return FMPL_ERR_ARG;
    char req[PMI_WIRE_REQUEST_MAX + 1];
    const char *kv[] = {"kvsname", b->kvsname, "key", key, NULL};
    int err = pmi_format(req, sizeof req, "get", kv);
    pmi_msg_t reply;
    int rc;
    if (!err)
        err = pmi_call(b, req, "get_result", &reply, &rc);
    if (err)
        return err;
    if (rc != 0)
        return FMPL_ERR_ARG;
    const char *v = pmi_wire_find(&reply, "value");
    snprintf(value, BOOT_VALUE_MAX, "%s", v ? v : "");
    return FMPL_SUCCESS;
}

/* --------------------------------------------------------------- topology */

/* This host's identity: the launcher's name for it (FMPL_NODE) when given, else host
 * name plus the kernel's boot id, so two machines (or containers) that share a host
 * name are still told apart. */
static void boot_host_identity(char *out, size_t cap)
{
    const char *node = base_env_str("FMPL_NODE", "",
                                    "this rank's host as the launcher names it (ranks with "
                                    "the same name share memory); empty: host name + boot id");
    if (*node) {
        snprintf(out, cap, "node:%.200s", node);
        for (char *p = out; *p; p++) {
            unsigned char c = (unsigned char)*p;
            if (c <= 0x20 || c >= 0x7f || c == '=' || c == '\\')
                *p = '_';
        }
        return;
    }
    char host[256] = "localhost";
    char boot_id[64] = "";
    if (gethostname(host, sizeof host) != 0)
        strcpy(host, "localhost");
    host[sizeof host - 1] = 0;
    int fd = open("/proc/sys/kernel/random/boot_id", O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
        ssize_t n = read(fd, boot_id, sizeof boot_id - 1);
        boot_id[n > 0 ? n : 0] = 0;
        close(fd);
    }
    boot_id[strcspn(boot_id, "\n")] = 0;
    snprintf(out, cap, "%.200s/%s", host, boot_id);
    for (char *p = out; *p; p++) {
        unsigned char c = (unsigned char)*p;
        if (c <= 0x20 || c >= 0x7f || c == '=' || c == '\\')
            *p = '_';
    }
}

typedef struct boot_host_entry {
    const char *id;
    int rank;
} boot_host_entry_t;

static int boot_host_cmp(const void *x, const void *y)
{
    const boot_host_entry_t *a = x, *b = y;
    int c = strcmp(a->id, b->id);
    return c ? c : (a->rank > b->rank) - (a->rank < b->rank);
}

int boot_nodes(boot_t *b, const boot_nodes_t **out)
{
    if (!b || !out)
        return FMPL_ERR_ARG;
    if (b->nodes_ready) {
        *out = &b->nodes;
        return FMPL_SUCCESS;
    }
    int n = b->size;
    char mine[BOOT_VALUE_MAX];
    boot_host_identity(mine, sizeof mine);
    int err = boot_put(b, BOOT_HOST_KEY, mine);
    if (!err)
        err = boot_fence(b);
    if (err)
        return err;

    /* Everyone's identity, sorted by (identity, rank): equal identities are one
     * node; nodes are then numbered in order of their lowest rank. */
    char *ids = malloc((size_t)n * BOOT_VALUE_MAX);
    boot_host_entry_t *e = malloc((size_t)n * sizeof *e);
    int *group_node = malloc((size_t)n * sizeof *group_node);
    int *group_of = malloc((size_t)n * sizeof *group_of);
    int *node_of = malloc((size_t)n * sizeof *node_of);
    if (!ids || !e || !group_node || !group_of || !node_of) {
        err = FMPL_ERR_NOMEM;
        goto done;
    }
    for (int r = 0; r < n; r++) {
        char *id = ids + (size_t)r * BOOT_VALUE_MAX;
        if (r == b->rank)
            strcpy(id, mine);
        else if ((err = boot_get(b, r, BOOT_HOST_KEY, id)) != 0)
            goto done;
        e[r].id = id;
        e[r].rank = r;
    }
    qsort(e, (size_t)n, sizeof *e, boot_host_cmp);
    int ngroups = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || strcmp(e[i].id, e[i - 1].id) != 0)
            group_node[ngroups++] = -1;
        group_of[e[i].rank] = ngroups - 1;
    }
    int nnodes = 0, nlocal = 0;
    for (int r = 0; r < n; r++) {
        int g = group_of[r];
        if (group_node[g] < 0)
            group_node[g] = nnodes++;
        node_of[r] = group_node[g];
    }
    int my_node = node_of[b->rank];
    for (int r = 0; r < n; r++)
        nlocal += node_of[r] == my_node;
    int *local_ranks = malloc((size_t)nlocal * sizeof *local_ranks);
    if (!local_ranks) {
        err = FMPL_ERR_NOMEM;
        goto done;
    }
    int local_rank = 0;
    for (int r = 0, k = 0; r < n; r++) {
        if (node_of[r] != my_node)
            continue;
        if (r == b->rank)
            local_rank = k;
        local_ranks[k++] = r;
    }
    b->node_of = node_of;
    b->local_ranks = local_ranks;
    node_of = NULL;
    b->nodes = (boot_nodes_t){.nnodes = nnodes,
                              .my_node = my_node,
                              .node_of = b->node_of,
                              .nlocal = nlocal,
                              .local_rank = local_rank,
                              .local_ranks = b->local_ranks};
    b->nodes_ready = 1;
    *out = &b->nodes;
done:
    if (err == FMPL_ERR_NOMEM)
        base_log("boot: out of memory computing the node map of %d ranks", n);
    free(ids);
    free(e);
    free(group_node);
    free(group_of);
    free(node_of);
    return err;
}

/* ------------------------------------------------------------------ abort */

_Noreturn void boot_abort(boot_t *b, int exit_code, const char *msg)
{
    if (!msg)
        msg = "";
    fflush(stdout);
    fflush(stderr);
    if (b && b->kind == BOOT_PMI && !b->broken) {
        /* fmplrun prints the message itself; other launchers may not, so then we do. */
        if (!b->from_fmplrun) {
            base_log("rank %d aborts the job (exit code %d): %s", b->rank, exit_code, msg);
            /* Hydra's proxy forwards our stderr and serves the PMI socket separately,
             * and kills the job as soon as the abort arrives: without a pause the
             * message above is often lost. */
            struct timespec pause = {.tv_sec = 0, .tv_nsec = BOOT_ABORT_PAUSE_MS * 1000000L};
            while (nanosleep(&pause, &pause) != 0 && errno == EINTR)
                ;
        }
        char req[PMI_WIRE_REQUEST_MAX + 1]; /* with the NUL */
        char code[16];
        char text[PMI_WIRE_REQUEST_MAX];
        snprintf(code, sizeof code, "%d", exit_code);
        snprintf(text, sizeof text, "%s", msg);
        const char *kv[] = {"exitcode", code, "message", text, NULL};
        /* The message is cut until the line fits (escaped spaces take two bytes). */
        size_t len = strlen(text);
        while (pmi_format(req, sizeof req, "abort", kv) != 0 && len > 0)
            text[len = len * 3 / 4] = 0;
        if (pmi_format(req, sizeof req, "abort", kv) == 0)
            (void)pmi_write_all(b, req, strlen(req));
        /* fmplrun reads the abort before it looks at how we exited; other launchers
         * kill the job when they see it, or at the latest when we exit non-zero. */
    } else {
        base_log("job aborted (exit code %d): %s", exit_code, msg);
    }
    _exit(exit_code);
}
