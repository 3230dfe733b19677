/* boot_pmi_wire — the PMI-1 client against a scripted fake launcher, without
 * fmplrun: the exact request lines boot sends (the format MPICH's simple PMI and
 * Hydra use), Hydra's and Slurm's reply lines, the old PMI_ID handshake, PMI over a TCP
 * port (PMI_PORT, with fmplrun's token; connecting again when pushed out by a crowd),
 * escaped values, the 1024-byte request line
 * limit (Slurm reads no more), a launcher that vanishes (FMPL_ERR_PEER, no hang), bad
 * environments, and the wire helpers themselves. Runs without a launcher (RANKS 0). */
#include <arpa/inet.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "boot/boot.h"
#include "boot/pmi_wire.h"
#include "test_util.h"

typedef struct step {
    const char *expect; /* the request line, without '\n' */
    const char *reply;  /* the reply (may be several lines), or NULL to close */
} step_t;

static _Noreturn void play(int fd, const step_t *script);

/* The fake launcher: a child process that plays `script` on its socket end. */
static pid_t fake_launcher(int fd, const step_t *script)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid)
        return pid;
    play(fd, script);
}

/* The same behind a TCP port (PMI_PORT): the child accepts one connection on the
 * listening socket lfd and plays `script` on it. */
static pid_t fake_tcp_launcher(int lfd, const step_t *script)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid)
        return pid;
    int fd = accept(lfd, NULL, NULL);
    if (fd < 0)
        _exit(1);
    play(fd, script);
}

/* Plays `script` on fd: 0 when it ran to its end (or to a step that vanishes), 1 when
 * the client sent something else or went away. */
static int play_steps(int fd, const step_t *script)
{
    char buf[PMI_WIRE_LINE_MAX];
    size_t len = 0;
    for (const step_t *s = script; s->expect; s++) {
        char *nl;
        while (!(nl = memchr(buf, '\n', len))) {
            ssize_t n = read(fd, buf + len, sizeof buf - len);
            if (n <= 0) {
                fprintf(stderr, "fake launcher: connection closed, expected '%s'\n", s->expect);
                return 1;
            }
            len += (size_t)n;
        }
        *nl = 0;
        if (strcmp(buf, s->expect) != 0) {
            fprintf(stderr, "fake launcher: got '%s'\n              expected '%s'\n", buf,
                    s->expect);
            return 1;
        }
        len -= (size_t)(nl + 1 - buf);
        memmove(buf, nl + 1, len);
        if (!s->reply)
            return 0; /* vanish */
        if (write(fd, s->reply, strlen(s->reply)) != (ssize_t)strlen(s->reply))
            return 1;
    }
    return 0;
}

static _Noreturn void play(int fd, const step_t *script)
{
    _exit(play_steps(fd, script));
}

/* Behind a TCP port, a launcher that serves n connections in turn, scripts[i] on the
 * i-th (each closed at its script's end), and then fails (exit 2) if another one comes
 * within 300 ms. */
static pid_t fake_tcp_launcher_seq(int lfd, const step_t *const *scripts, int n)
{
    pid_t pid = fork();
    CHECK(pid >= 0);
    if (pid)
        return pid;
    for (int i = 0; i < n; i++) {
        int fd = accept(lfd, NULL, NULL);
        if (fd < 0 || play_steps(fd, scripts[i]))
            _exit(1);
        close(fd);
    }
    struct pollfd pf = {.fd = lfd, .events = POLLIN};
    _exit(poll(&pf, 1, 300) == 0 ? 0 : 2);
}

static int fake_init(const step_t *script, const char *rank, const char *size, const char *id,
                     boot_t **b, pid_t *pid)
{
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    *pid = fake_launcher(sv[1], script);
    close(sv[1]);
    char num[16];
    snprintf(num, sizeof num, "%d", sv[0]);
    setenv("PMI_FD", num, 1);
    unsetenv("FMPL_LAUNCHER");
    if (rank)
        setenv("PMI_RANK", rank, 1);
    else
        unsetenv("PMI_RANK");
    if (size)
        setenv("PMI_SIZE", size, 1);
    else
        unsetenv("PMI_SIZE");
    if (id)
        setenv("PMI_ID", id, 1);
    else
        unsetenv("PMI_ID");
    int rc = boot_init(b);
    if (rc != FMPL_SUCCESS)
        close(sv[0]);
    return rc;
}

static void fake_done(pid_t pid)
{
    int status;
    CHECK(waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

#define INIT_REQ "cmd=init pmi_version=1 pmi_subversion=1"
#define INIT_REPLY "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=0\n"
#define MAXES "cmd=maxes kvsname_max=256 keylen_max=64 vallen_max=1024\n"

/* A whole job as rank 1 of 2 under a Hydra-like launcher. */
static void test_hydra_session(void)
{
    static const step_t script[] = {
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=kvs_4242.0:x\n"},
        {"cmd=put kvsname=kvs_4242.0:x key=addr.1 value=00ff-Aa_z",
         "cmd=put_result rc=0 msg=success\n"},
        {"cmd=barrier_in", "cmd=barrier_out\n"},
        {"cmd=get kvsname=kvs_4242.0:x key=addr.0", "cmd=get_result rc=0 msg=success value=cafe\n"},
        {"cmd=get kvsname=kvs_4242.0:x key=addr.0",
         "cmd=get_result rc=0 msg=success value=with\\ escaped\\ space\\\\\n"},
        {"cmd=get kvsname=kvs_4242.0:x key=missing.0",
         "cmd=get_result rc=-1 msg=key_missing.0_not_found value=unknown\n"},
        {"cmd=finalize", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    CHECK_RC(fake_init(script, "1", "2", NULL, &b, &pid), FMPL_SUCCESS);
    CHECK(boot_rank(b) == 1 && boot_size(b) == 2);
    CHECK(strcmp(boot_backend(b), "pmi") == 0);
    CHECK(strcmp(boot_job_id(b), "kvs_4242_0_x") == 0);
    CHECK_RC(boot_put(b, "addr", "00ff-Aa_z"), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    char value[BOOT_VALUE_MAX];
    CHECK_RC(boot_get(b, 0, "addr", value), FMPL_SUCCESS);
    CHECK(strcmp(value, "cafe") == 0);
    CHECK_RC(boot_get(b, 0, "addr", value), FMPL_SUCCESS);
    CHECK(strcmp(value, "with escaped space\\") == 0);
    CHECK_RC(boot_get(b, 0, "missing", value), FMPL_ERR_ARG);
    CHECK_RC(boot_get(b, 2, "addr", value), FMPL_ERR_RANK); /* no round trip */
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    fake_done(pid);
}

/* A job as rank 1 of 3 under Slurm's srun --mpi=pmi2 (its PMI-1 replies: rc first,
 * no msg, rc=1 and no value for a missing key). Slurm takes each request from one
 * read of at most 1024 bytes: a put line of exactly 1024 bytes (with its '\n') goes
 * out whole; one byte more is refused with FMPL_ERR_ARG before anything is sent. */
static void test_slurm_session(void)
{
    /* the value that fills the line: 1024 less the '\n' and what precedes the value */
    enum { FIT = PMI_WIRE_REQUEST_MAX - 1 - (sizeof "cmd=put kvsname=77.0 key=fit.1 value=" - 1) };
    static char fit[FIT + 2], put_fit[PMI_WIRE_REQUEST_MAX + 1], get_reply[PMI_WIRE_LINE_MAX];
    for (int i = 0; i < FIT + 1; i++)
        fit[i] = "0123456789abcdef"[i % 16];
    fit[FIT + 1] = 0;
    snprintf(put_fit, sizeof put_fit, "cmd=put kvsname=77.0 key=fit.1 value=%.*s", FIT, fit);
    CHECK(strlen(put_fit) + 1 == PMI_WIRE_REQUEST_MAX);
    snprintf(get_reply, sizeof get_reply, "cmd=get_result rc=0 value=%.*s\n", FIT, fit);
    const step_t script[] = {
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", "cmd=maxes rc=0 kvsname_max=256 keylen_max=64 vallen_max=1024\n"},
        {"cmd=get_my_kvsname", "cmd=my_kvsname rc=0 kvsname=77.0\n"},
        {put_fit, "cmd=put_result rc=0\n"},
        {"cmd=barrier_in", "cmd=barrier_out rc=0\n"},
        {"cmd=get kvsname=77.0 key=fit.2", get_reply},
        {"cmd=get kvsname=77.0 key=other.0", "cmd=get_result rc=1\n"},
        {"cmd=finalize", "cmd=finalize_ack rc=0\n"},
        {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    CHECK_RC(fake_init(script, "1", "3", NULL, &b, &pid), FMPL_SUCCESS);
    CHECK(boot_rank(b) == 1 && boot_size(b) == 3);
    CHECK(strcmp(boot_job_id(b), "77_0") == 0);
    CHECK_RC(boot_put(b, "fit", fit), FMPL_ERR_ARG); /* FIT + 1 bytes: not sent */
    fit[FIT] = 0;
    CHECK_RC(boot_put(b, "fit", fit), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    char value[BOOT_VALUE_MAX];
    CHECK_RC(boot_get(b, 2, "fit", value), FMPL_SUCCESS);
    CHECK(strcmp(value, fit) == 0);
    CHECK_RC(boot_get(b, 0, "other", value), FMPL_ERR_ARG);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    fake_done(pid);

    /* A kvsname of 128 bytes or more is refused at init (a put line must have room). */
    static char long_kvs[128 + 64];
    snprintf(long_kvs, sizeof long_kvs, "cmd=my_kvsname rc=0 kvsname=%0128d\n", 0);
    const step_t too_long[] = {{INIT_REQ, INIT_REPLY},
                               {"cmd=get_maxes", MAXES},
                               {"cmd=get_my_kvsname", long_kvs},
                               {NULL, NULL}};
    CHECK_RC(fake_init(too_long, "0", "1", NULL, &b, &pid), FMPL_ERR_INIT);
    fake_done(pid);
}

/* boot_abort with a message longer than a request line (spaces escaped): the line
 * that reaches the launcher is at most 1024 bytes, begins with the exit code and a
 * prefix of the message, and the rank exits with the code. */
static void test_abort_line(void)
{
    static char msg[3000];
    for (size_t i = 0; i + 1 < sizeof msg; i++)
        msg[i] = i % 5 == 4 ? ' ' : (char)('a' + i % 26);
    int sv[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    pid_t rank = fork();
    CHECK(rank >= 0);
    if (rank == 0) {
        close(sv[1]);
        char num[16];
        snprintf(num, sizeof num, "%d", sv[0]);
        setenv("PMI_FD", num, 1);
        setenv("PMI_RANK", "0", 1);
        setenv("PMI_SIZE", "2", 1);
        unsetenv("PMI_ID");
        unsetenv("FMPL_LAUNCHER");
        boot_t *b;
        CHECK_RC(boot_init(&b), FMPL_SUCCESS);
        boot_abort(b, 9, msg);
    }
    close(sv[0]);
    static const char *const replies[] = {INIT_REPLY, MAXES, "cmd=my_kvsname kvsname=k9\n"};
    char line[PMI_WIRE_LINE_MAX];
    for (int step = 0; step < 4; step++) {
        size_t len = 0;
        char c = 0;
        while (len + 1 < sizeof line && read(sv[1], &c, 1) == 1 && c != '\n')
            line[len++] = c;
        CHECK(c == '\n');
        line[len] = 0;
        if (step < 3) {
            CHECK(write(sv[1], replies[step], strlen(replies[step])) ==
                  (ssize_t)strlen(replies[step]));
            continue;
        }
        CHECK(len + 1 <= PMI_WIRE_REQUEST_MAX && len + 1 > PMI_WIRE_REQUEST_MAX / 2);
        pmi_msg_t m;
        CHECK(pmi_wire_parse(line, &m) == 0 && strcmp(m.cmd, "abort") == 0);
        CHECK(strcmp(pmi_wire_find(&m, "exitcode"), "9") == 0);
        const char *text = pmi_wire_find(&m, "message");
        CHECK(text && strlen(text) > 100 && strncmp(text, msg, strlen(text)) == 0);
    }
    int status;
    CHECK(waitpid(rank, &status, 0) == rank);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 9);
    close(sv[1]);
}

/* The older handshake: PMI_ID instead of PMI_RANK/PMI_SIZE. */
static void test_initack(void)
{
    static const step_t script[] = {
        {INIT_REQ, INIT_REPLY},
        {"cmd=initack pmiid=3", "cmd=initack\ncmd=set size=5\ncmd=set rank=3\ncmd=set debug=0\n"},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=k1\n"},
        {"cmd=finalize", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    CHECK_RC(fake_init(script, NULL, NULL, "3", &b, &pid), FMPL_SUCCESS);
    CHECK(boot_rank(b) == 3 && boot_size(b) == 5);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    fake_done(pid);
}

/* PMI_PORT: a TCP connection, the PMI_ID handshake before cmd=init (MPICH's order
 * over a port) carrying fmplrun's token, and the connection's local address. */
static void test_pmi_port(void)
{
    static const step_t script[] = {
        {"cmd=initack pmiid=2 token=tok123",
         "cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n"},
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=fmpl-1-2\n"},
        {"cmd=put kvsname=fmpl-1-2 key=k.2 value=v", "cmd=put_result rc=0 msg=success\n"},
        {"cmd=finalize", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    static const step_t refused[] = {
        {"cmd=initack pmiid=2", "cmd=initack rc=-1 msg=wrong\\ or\\ missing\\ token\n"},
        {NULL, NULL}};
    for (int round = 0; round < 2; round++) {
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
        socklen_t sl = sizeof sa;
        CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
              listen(lfd, 4) == 0 && getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
        pid_t pid = fake_tcp_launcher(lfd, round == 0 ? script : refused);
        close(lfd);
        char port[64];
        snprintf(port, sizeof port, "localhost:%u", (unsigned)ntohs(sa.sin_port));
        unsetenv("PMI_FD");
        unsetenv("PMI_RANK");
        unsetenv("PMI_SIZE");
        setenv("PMI_PORT", port, 1);
        setenv("PMI_ID", "2", 1);
        setenv("FMPL_LAUNCHER", "fmplrun", 1);
        if (round == 0)
            setenv("FMPL_PMI_TOKEN", "tok123", 1);
        else
            unsetenv("FMPL_PMI_TOKEN");
        boot_t *b = NULL;
        if (round == 0) {
            CHECK_RC(boot_init(&b), FMPL_SUCCESS);
            CHECK(boot_rank(b) == 2 && boot_size(b) == 4);
            CHECK(strcmp(boot_backend(b), "fmplrun") == 0);
            CHECK(boot_local_addr(b) && strcmp(boot_local_addr(b), "127.0.0.1") == 0);
            CHECK(strcmp(boot_job_id(b), "fmpl-1-2") == 0);
            CHECK_RC(boot_put(b, "k", "v"), FMPL_SUCCESS);
            CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
        } else {
            CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
            CHECK(b == NULL);
        }
        fake_done(pid);
    }
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("FMPL_LAUNCHER");
    unsetenv("FMPL_PMI_TOKEN");
    CHECK(boot_local_addr(NULL) == NULL);
}

/* A listening socket on 127.0.0.1 and its "localhost:port" for PMI_PORT. */
static int listen_local(char *port, size_t cap)
{
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(lfd, 4) == 0 &&
          getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    snprintf(port, cap, "localhost:%u", (unsigned)ntohs(sa.sin_port));
    return lfd;
}

/* PMI_PORT while strangers crowd fmplrun's port: fmplrun lets the connection go before
 * reading its line (it refuses it for the crowd, or it just closes), and the rank
 * connects again; a refusal for another reason (a wrong token) is final, with no new
 * connection. */
static void test_pmi_port_crowded(void)
{
    static const step_t crowd[] = {
        {"cmd=initack pmiid=2 token=tok123",
         "cmd=initack rc=-1 msg=too\\ many\\ connections\\ await\\ their\\ token\n"},
        {NULL, NULL}};
    static const step_t dropped[] = {{"cmd=initack pmiid=2 token=tok123", NULL}, {NULL, NULL}};
    static const step_t admitted[] = {
        {"cmd=initack pmiid=2 token=tok123",
         "cmd=initack rc=0\ncmd=set size=4\ncmd=set rank=2\ncmd=set debug=0\n"},
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=fmpl-1-3\n"},
        {"cmd=finalize", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    static const step_t wrong[] = {{"cmd=initack pmiid=2 token=tok123",
                                    "cmd=initack rc=-1 msg=wrong\\ or\\ missing\\ token\n"},
                                   {NULL, NULL}};
    static const step_t *const retried[] = {crowd, dropped, crowd, admitted};
    static const step_t *const final[] = {wrong};
    unsetenv("PMI_FD");
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    setenv("PMI_ID", "2", 1);
    setenv("FMPL_LAUNCHER", "fmplrun", 1);
    setenv("FMPL_PMI_TOKEN", "tok123", 1);
    for (int round = 0; round < 2; round++) {
        char port[64];
        int lfd = listen_local(port, sizeof port);
        pid_t pid = round == 0 ? fake_tcp_launcher_seq(lfd, retried, 4)
                               : fake_tcp_launcher_seq(lfd, final, 1);
        setenv("PMI_PORT", port, 1);
        boot_t *b = NULL;
        if (round == 0) {
            CHECK_RC(boot_init(&b), FMPL_SUCCESS);
            CHECK(boot_rank(b) == 2 && boot_size(b) == 4);
            CHECK(strcmp(boot_job_id(b), "fmpl-1-3") == 0);
            CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
        } else {
            CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
            CHECK(b == NULL);
        }
        fake_done(pid);
        close(lfd);
    }
    unsetenv("PMI_PORT");
    unsetenv("PMI_ID");
    unsetenv("FMPL_LAUNCHER");
    unsetenv("FMPL_PMI_TOKEN");
}

/* The launcher vanishes in the middle of a fence: FMPL_ERR_PEER, then every
 * further call fails at once. */
static void test_launcher_vanishes(void)
{
    static const step_t script[] = {{INIT_REQ, INIT_REPLY},
                                    {"cmd=get_maxes", MAXES},
                                    {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=k2\n"},
                                    {"cmd=barrier_in", NULL},
                                    {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    CHECK_RC(fake_init(script, "0", "2", NULL, &b, &pid), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_ERR_PEER);
    fake_done(pid);
    CHECK_RC(boot_put(b, "k", "v"), FMPL_ERR_PEER);
    char value[BOOT_VALUE_MAX];
    CHECK_RC(boot_get(b, 1, "k", value), FMPL_ERR_PEER);
    CHECK_RC(boot_fence(b), FMPL_ERR_PEER);
    CHECK_RC(boot_finalize(b), FMPL_ERR_PEER);
}

/* The launcher refuses PMI 1.1, or answers nonsense. */
static void test_refusals(void)
{
    static const step_t refuse[] = {
        {INIT_REQ, "cmd=response_to_init pmi_version=1 pmi_subversion=1 rc=-1\n"}, {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    CHECK_RC(fake_init(refuse, "0", "1", NULL, &b, &pid), FMPL_ERR_INIT);
    fake_done(pid);
    static const step_t nonsense[] = {{INIT_REQ, "hello there\n"}, {NULL, NULL}};
    CHECK_RC(fake_init(nonsense, "0", "1", NULL, &b, &pid), FMPL_ERR_INIT);
    fake_done(pid);
    static const step_t put_refused[] = {
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=k3\n"},
        {"cmd=put kvsname=k3 key=a.0 value=b", "cmd=put_result rc=-1 msg=duplicate\n"},
        {"cmd=finalize", "cmd=finalize_ack\n"},
        {NULL, NULL}};
    CHECK_RC(fake_init(put_refused, "0", "1", NULL, &b, &pid), FMPL_SUCCESS);
    CHECK_RC(boot_put(b, "a", "b"), FMPL_ERR_PEER);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    fake_done(pid);
}

/* The name service: the exact request lines, fmplrun's replies (reason= published /
 * unknown), Hydra's (msg=key_already_present, service_not_found), a refusal without a
 * known reason, a lookup reply without its port, and the singleton's refusal. */
static void test_name_service(void)
{
    static const step_t script[] = {
        {INIT_REQ, INIT_REPLY},
        {"cmd=get_maxes", MAXES},
        {"cmd=get_my_kvsname", "cmd=my_kvsname kvsname=k9\n"},
        {"cmd=publish_name service=my\\ service port=tcp://a\\ b",
         "cmd=publish_result rc=0 info=ok\n"},
        {"cmd=lookup_name service=my\\ service",
         "cmd=lookup_result rc=0 info=ok port=tcp://a\\ b\n"},
        {"cmd=publish_name service=s port=p",
         "cmd=publish_result rc=1 info=in\\ use reason=published\n"},
        {"cmd=publish_name service=s port=p",
         "cmd=publish_result info=ok rc=1 msg=key_already_present\n"},
        {"cmd=publish_name service=s port=p", "cmd=publish_result rc=1 info=no_name_server\n"},
        {"cmd=lookup_name service=t", "cmd=lookup_result rc=1 info=gone reason=unknown\n"},
        {"cmd=lookup_name service=t", "cmd=lookup_result rc=1 msg=service_not_found\n"},
        {"cmd=unpublish_name service=t", "cmd=unpublish_result rc=1 info=gone reason=unknown\n"},
        {"cmd=unpublish_name service=my\\ service", "cmd=unpublish_result rc=0 info=ok\n"},
        {"cmd=lookup_name service=u", "cmd=lookup_result rc=0 info=ok\n"},
        {NULL, NULL}};
    boot_t *b;
    pid_t pid;
    char port[BOOT_NAME_MAX], why[BOOT_NAME_MAX];
    CHECK_RC(fake_init(script, "0", "1", NULL, &b, &pid), FMPL_SUCCESS);
    CHECK_RC(boot_name_publish(b, "my service", "tcp://a b", why), FMPL_SUCCESS);
    CHECK_RC(boot_name_lookup(b, "my service", port, why), FMPL_SUCCESS);
    CHECK(strcmp(port, "tcp://a b") == 0);
    CHECK_RC(boot_name_publish(b, "s", "p", why), FMPL_ERR_BUSY);
    CHECK(strcmp(why, "in use") == 0);
    CHECK_RC(boot_name_publish(b, "s", "p", why), FMPL_ERR_BUSY);
    CHECK(strcmp(why, "key_already_present") == 0);
    CHECK_RC(boot_name_publish(b, "s", "p", why), FMPL_ERR_UNSUPPORTED);
    CHECK(strcmp(why, "no_name_server") == 0);
    CHECK_RC(boot_name_lookup(b, "t", port, why), FMPL_ERR_ARG);
    CHECK(strcmp(why, "gone") == 0);
    CHECK_RC(boot_name_lookup(b, "t", port, why), FMPL_ERR_ARG);
    CHECK(strcmp(why, "service_not_found") == 0);
    CHECK_RC(boot_name_unpublish(b, "t", why), FMPL_ERR_ARG);
    CHECK_RC(boot_name_unpublish(b, "my service", NULL), FMPL_SUCCESS);
    CHECK_RC(boot_name_lookup(b, "u", port, why), FMPL_ERR_PEER); /* no port in the reply */
    /* bad names never reach the launcher */
    CHECK_RC(boot_name_publish(b, "", "p", why), FMPL_ERR_ARG);
    CHECK_RC(boot_name_publish(b, "a\nb", "p", why), FMPL_ERR_ARG);
    CHECK_RC(boot_name_publish(b, "s", NULL, why), FMPL_ERR_ARG);
    CHECK_RC(boot_name_lookup(b, "s", NULL, why), FMPL_ERR_ARG);
    CHECK_RC(boot_name_unpublish(NULL, "s", why), FMPL_ERR_ARG);
    char long_name[BOOT_NAME_MAX + 1];
    memset(long_name, 'x', BOOT_NAME_MAX);
    long_name[BOOT_NAME_MAX] = 0;
    CHECK_RC(boot_name_lookup(b, long_name, port, why), FMPL_ERR_ARG);
    fake_done(pid);                            /* the script ended: every line was as expected */
    CHECK_RC(boot_finalize(b), FMPL_ERR_PEER); /* the fake launcher is gone */
}

/* A singleton has no name service, and says why. */
static void test_name_service_singleton(void)
{
    unsetenv("PMI_FD");
    unsetenv("PMI_PORT");
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    unsetenv("PMI_ID");
    boot_t *b;
    char port[BOOT_NAME_MAX], why[BOOT_NAME_MAX];
    CHECK_RC(boot_init(&b), FMPL_SUCCESS);
    CHECK(strcmp(boot_backend(b), "singleton") == 0);
    CHECK_RC(boot_name_publish(b, "s", "p", why), FMPL_ERR_UNSUPPORTED);
    CHECK(strstr(why, "no name service") && strstr(why, "singleton"));
    CHECK_RC(boot_name_lookup(b, "s", port, why), FMPL_ERR_UNSUPPORTED);
    CHECK_RC(boot_name_unpublish(b, "s", why), FMPL_ERR_UNSUPPORTED);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
}

static void test_bad_environment(void)
{
    boot_t *b = NULL;
    unsetenv("PMI_ID");
    setenv("PMI_RANK", "0", 1);
    setenv("PMI_SIZE", "1", 1);
    setenv("PMI_FD", "not-a-number", 1);
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    setenv("PMI_FD", "987", 1); /* not open */
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    setenv("PMI_FD", "2", 1);
    setenv("PMI_RANK", "1", 1); /* rank >= size */
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    setenv("PMI_RANK", "-1", 1);
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    unsetenv("PMI_RANK");
    unsetenv("PMI_SIZE");
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT); /* neither rank/size nor PMI_ID */
    CHECK(b == NULL);
    unsetenv("PMI_FD");
    setenv("PMI_ID", "0", 1);
    static const char *const bad_ports[] = {"nocolon", ":99", "127.0.0.1:", "127.0.0.1:0",
                                            "127.0.0.1:65536"};
    for (size_t i = 0; i < sizeof bad_ports / sizeof bad_ports[0]; i++) {
        setenv("PMI_PORT", bad_ports[i], 1);
        CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    }
    /* nobody listens there (a port we had and closed) */
    int lfd = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t sl = sizeof sa;
    CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
          getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
    close(lfd);
    char port[64];
    snprintf(port, sizeof port, "127.0.0.1:%u", (unsigned)ntohs(sa.sin_port));
    setenv("PMI_PORT", port, 1);
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    unsetenv("PMI_ID");
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT); /* PMI_PORT without PMI_ID or PMI_RANK */
    unsetenv("PMI_PORT");
    /* a task of a 4-task srun step without PMI (srun --mpi=none): refused */
    setenv("SLURM_STEP_NUM_TASKS", "4", 1);
    setenv("SLURM_PROCID", "2", 1);
    CHECK_RC(boot_init(&b), FMPL_ERR_INIT);
    CHECK(b == NULL);
    setenv("SLURM_STEP_NUM_TASKS", "1", 1); /* a step of one task: a singleton */
    CHECK_RC(boot_init(&b), FMPL_SUCCESS);
    CHECK(boot_size(b) == 1 && strcmp(boot_backend(b), "singleton") == 0);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
    unsetenv("SLURM_STEP_NUM_TASKS");
    unsetenv("SLURM_PROCID");
    CHECK_RC(boot_init(&b), FMPL_SUCCESS); /* singleton */
    CHECK(strcmp(boot_backend(b), "singleton") == 0);
    CHECK(boot_job_id(b)[0] == 's');
    char value[BOOT_VALUE_MAX];
    CHECK_RC(boot_get(b, 0, "k", value), FMPL_ERR_ARG);
    CHECK_RC(boot_put(b, "k", "v1"), FMPL_SUCCESS);
    CHECK_RC(boot_put(b, "k", "v2"), FMPL_SUCCESS);
    CHECK_RC(boot_fence(b), FMPL_SUCCESS);
    CHECK_RC(boot_get(b, 0, "k", value), FMPL_SUCCESS);
    CHECK(strcmp(value, "v2") == 0);
    CHECK_RC(boot_get(b, 1, "k", value), FMPL_ERR_RANK);
    CHECK_RC(boot_finalize(b), FMPL_SUCCESS);
}

static void test_wire_helpers(void)
{
    char line[] = "cmd=get_result rc=0  msg=success value=a\\ b\\\\c bare";
    pmi_msg_t msg;
    CHECK(pmi_wire_parse(line, &msg) == 0);
    CHECK(strcmp(msg.cmd, "get_result") == 0);
    CHECK(strcmp(pmi_wire_find(&msg, "rc"), "0") == 0);
    CHECK(strcmp(pmi_wire_find(&msg, "value"), "a b\\c") == 0);
    CHECK(pmi_wire_find(&msg, "bare") == NULL && pmi_wire_find(&msg, "nope") == NULL);
    char bad[] = "put key=x";
    CHECK(pmi_wire_parse(bad, &msg) == -1);

    char buf[64];
    size_t len = 0;
    CHECK(pmi_wire_append(buf, sizeof buf, &len, "cmd", "abort") == 0);
    CHECK(pmi_wire_append(buf, sizeof buf, &len, "message", "a b\\c\nd") == 0);
    CHECK(pmi_wire_end(buf, sizeof buf, &len) == 0);
    CHECK(strcmp(buf, "cmd=abort message=a\\ b\\\\c\\ d\n") == 0 && len == strlen(buf));
    /* round trip */
    buf[len - 1] = 0;
    CHECK(pmi_wire_parse(buf, &msg) == 0);
    CHECK(strcmp(pmi_wire_find(&msg, "message"), "a b\\c d") == 0);
    /* no room: -1 and the buffer keeps its old contents */
    char small[16];
    len = 0;
    CHECK(pmi_wire_append(small, sizeof small, &len, "cmd", "put") == 0);
    CHECK(pmi_wire_append(small, sizeof small, &len, "value", "0123456789") == -1);
    CHECK(len == 7 && strcmp(small, "cmd=put") == 0);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    test_wire_helpers();
    test_hydra_session();
    test_slurm_session();
    test_abort_line();
    test_initack();
    test_pmi_port();
    test_pmi_port_crowded();
    test_launcher_vanishes();
    test_refusals();
    test_name_service();
    test_name_service_singleton();
    test_bad_environment();
    printf("boot_pmi_wire: OK\n");
    return 0;
}
