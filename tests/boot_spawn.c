/* boot_spawn.c — fmplrun's PMI-1 spawn command (cmd=spawn in MPICH's multi-line form,
 * mcmd=spawn ... endcmd), spoken on the raw PMI_FD socket as MPICH's simple PMI client
 * does:
 *
 *     boot_spawn parent DIR   rank 0 spawns two commands (2 + 1 processes of this program,
 *                             "child" mode) with arguments, preput keys and the info keys
 *                             wdir and path; checks errcodes and what each child wrote
 *                             to DIR; then the refused requests (missing program, a
 *                             wdir that does not exist, another host, nprocs 0 and too
 *                             many, bad totspawns) with their messages, after which the
 *                             job goes on; every rank passes a last barrier
 *     boot_spawn die DIR      rank 0 spawns one child that exits with status 3 before
 *                             finalize (tests/boot_spawn.sh checks fmplrun's message)
 *     boot_spawn child ...    (spawned) checks its rank, size, appnum, kvsname, preput
 *                             key, arguments and directory, exchanges keys with its
 *                             siblings through its own key-value space and barrier,
 *                             writes DIR/child-<rank>, finalizes
 * Prints "boot_spawn: OK" on rank 0 of the parent. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

static int pmi_fd = -1;
static char reply[8192];

static void pmi_send(const char *text)
{
    size_t len = strlen(text);
    while (len) {
        ssize_t n = write(pmi_fd, text, len);
        CHECK(n > 0);
        text += n;
        len -= (size_t)n;
    }
}

/* Reads one reply line into `reply` (without its newline). */
static void pmi_read(void)
{
    size_t len = 0;
    for (;;) {
        CHECK(len + 1 < sizeof reply);
        ssize_t n = read(pmi_fd, reply + len, 1);
        CHECK(n == 1);
        if (reply[len] == '\n')
            break;
        len++;
    }
    reply[len] = 0;
}

static void pmi_call(const char *request)
{
    pmi_send(request);
    pmi_read();
}

/* The value of " key=" in the reply (up to the next space), copied to out. */
static int reply_get(const char *key, char *out, size_t cap)
{
    char pat[64];
    snprintf(pat, sizeof pat, " %s=", key);
    const char *p = strstr(reply, pat);
    if (!p)
        return 0;
    p += strlen(pat);
    size_t n = strcspn(p, " ");
    CHECK(n < cap);
    memcpy(out, p, n);
    out[n] = 0;
    return 1;
}

static void pmi_init(char *kvsname, size_t cap)
{
    const char *fd = getenv("PMI_FD");
    CHECK(fd);
    pmi_fd = atoi(fd);
    pmi_call("cmd=init pmi_version=1 pmi_subversion=1\n");
    CHECK(strncmp(reply, "cmd=response_to_init ", 21) == 0 && strstr(reply, " rc=0"));
    pmi_call("cmd=get_my_kvsname\n");
    CHECK(reply_get("kvsname", kvsname, cap));
}

static void pmi_finalize(void)
{
    pmi_call("cmd=finalize\n");
    CHECK(strncmp(reply, "cmd=finalize_ack", 16) == 0);
}

/* ---------------------------------------------------------------- child */

static int child(int argc, char **argv)
{
    /* argv: child APP DIR PARENT_KVS EXTRA */
    CHECK(argc == 6);
    char kvs[256], val[1024], cmd[2048];
    pmi_init(kvs, sizeof kvs);
    int rank = atoi(getenv("PMI_RANK")), size = atoi(getenv("PMI_SIZE"));
    CHECK(size == 3);
    const char *app = argv[2], *dir = argv[3], *parent_kvs = argv[4];
    /* its own job: kvsname <parent>-s<k> */
    CHECK(strncmp(kvs, parent_kvs, strlen(parent_kvs)) == 0 && kvs[strlen(parent_kvs)] == '-');
    pmi_call("cmd=get_appnum\n");
    CHECK(reply_get("appnum", val, sizeof val));
    CHECK(atoi(val) == (rank < 2 ? 0 : 1));
    CHECK(strcmp(app, rank < 2 ? "A" : "B") == 0);
    CHECK(strcmp(argv[5], rank < 2 ? "arg with spaces=and equals" : "x") == 0);
    char cwd[PATH_MAX];
    CHECK(getcwd(cwd, sizeof cwd));
    if (rank < 2) /* info wdir */
        CHECK(strcmp(cwd, dir) == 0);
    /* the preput key, in its own key-value space */
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=PARENT_PORT\n", kvs);
    pmi_call(cmd);
    CHECK(strstr(reply, " rc=0") && reply_get("value", val, sizeof val));
    CHECK(strcmp(val, "port-of-the-parent") == 0);
    /* a /dev/shm entry named after its job: fmplrun removes it at the end */
    snprintf(val, sizeof val, "/fmpl-%s-test%d", kvs, rank);
    int fd = shm_open(val, O_CREAT | O_RDWR, 0600);
    CHECK(fd >= 0);
    close(fd);
    /* keys and a barrier among the children only */
    snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=c%d value=v%d-%s\n", kvs, rank, rank, app);
    pmi_call(cmd);
    CHECK(strstr(reply, "cmd=put_result") && strstr(reply, " rc=0"));
    pmi_call("cmd=barrier_in\n");
    CHECK(strncmp(reply, "cmd=barrier_out", 15) == 0);
    for (int r = 0; r < size; r++) {
        snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=c%d\n", kvs, r);
        pmi_call(cmd);
        char want[64];
        snprintf(want, sizeof want, "v%d-%s", r, r < 2 ? "A" : "B");
        CHECK(reply_get("value", val, sizeof val) && strcmp(val, want) == 0);
    }
    /* the name service is one for every job: the parent's name is seen here */
    pmi_call("cmd=lookup_name service=parent\\ service\n");
    CHECK(strstr(reply, " rc=0") && reply_get("port", val, sizeof val));
    CHECK(strcmp(val, "parent-port") == 0);
    /* the parent's keys are not in its space */
    snprintf(cmd, sizeof cmd, "cmd=get kvsname=%s key=parent-key\n", kvs);
    pmi_call(cmd);
    CHECK(strstr(reply, " rc=-1"));
    char path[PATH_MAX + 32], tmp[PATH_MAX + 32];
    snprintf(tmp, sizeof tmp, "%s/.child-%d", dir, rank);
    snprintf(path, sizeof path, "%s/child-%d", dir, rank);
    FILE *f = fopen(tmp, "w");
    CHECK(f);
    fprintf(f, "ok %d %s\n", rank, app);
    CHECK(fclose(f) == 0);
    CHECK(rename(tmp, path) == 0);
    pmi_call("cmd=barrier_in\n");
    pmi_finalize();
    return 0;
}

/* --------------------------------------------------------------- parent */

/* Sends one spawn request (blocks already formatted) and reads spawn_result. */
static void spawn(const char *blocks)
{
    pmi_send(blocks);
    pmi_read();
    CHECK(strncmp(reply, "cmd=spawn_result ", 17) == 0);
}

static void expect_refused(const char *blocks, const char *msg_part, const char *errcodes)
{
    spawn(blocks);
    char val[2048];
    CHECK(reply_get("rc", val, sizeof val) && strcmp(val, "-1") == 0);
    if (!strstr(reply, msg_part)) {
        fprintf(stderr, "reply '%s' lacks '%s'\n", reply, msg_part);
        exit(1);
    }
    if (errcodes)
        CHECK(reply_get("errcodes", val, sizeof val) && strcmp(val, errcodes) == 0);
    else
        CHECK(!strstr(reply, " errcodes="));
}

static int parent(int argc, char **argv, int die)
{
    CHECK(argc == 3);
    const char *dir = argv[2];
    char kvs[256], self[PATH_MAX], blocks[32768], cmd[1024];
    pmi_init(kvs, sizeof kvs);
    int rank = atoi(getenv("PMI_RANK"));
    CHECK(realpath("/proc/self/exe", self));
    snprintf(cmd, sizeof cmd, "cmd=put kvsname=%s key=parent-key value=1\n", kvs);
    pmi_call(cmd);
    if (rank != 0) {
        pmi_call("cmd=barrier_in\n");
        pmi_finalize();
        return 0;
    }
    if (die) {
        snprintf(blocks, sizeof blocks,
                 "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=1\nspawnssofar=1\nargcnt=1\n"
                 "arg1=exit3\npreput_num=0\ninfo_num=0\nendcmd\n",
                 self);
        spawn(blocks);
        CHECK(strstr(reply, " rc=0"));
        pause(); /* fmplrun ends the job when the child exits before finalize */
        return 1;
    }

    /* fmplrun's name service, raw: publish, refusals with their reasons */
    pmi_call("cmd=publish_name service=parent\\ service port=parent-port\n");
    CHECK(strcmp(reply, "cmd=publish_result rc=0 info=ok") == 0);
    pmi_call("cmd=publish_name service=parent\\ service port=other\n");
    CHECK(strstr(reply, "cmd=publish_result rc=1 ") && strstr(reply, " reason=published"));
    CHECK(strstr(reply, "info=the\\ service\\ name\\ 'parent\\ service'\\ is\\ published"));
    pmi_call("cmd=publish_name service=x\n");
    CHECK(strstr(reply, " rc=1 ") && strstr(reply, " reason=invalid"));
    pmi_call("cmd=lookup_name\n");
    CHECK(strstr(reply, "cmd=lookup_result rc=1 ") && strstr(reply, " reason=invalid"));
    pmi_call("cmd=unpublish_name service=nothing\n");
    CHECK(strstr(reply, "cmd=unpublish_result rc=1 ") && strstr(reply, " reason=unknown"));
    CHECK(strstr(reply, "no\\ service\\ named\\ 'nothing'\\ is\\ published"));

    /* two commands: 2 processes in DIR (wdir), 1 found through info path */
    char exe_dir[PATH_MAX];
    snprintf(exe_dir, sizeof exe_dir, "%s", self);
    *strrchr(exe_dir, '/') = 0;
    const char *base = strrchr(self, '/') + 1;
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=2\nexecname=%s\ntotspawns=2\nspawnssofar=1\nargcnt=5\n"
             "arg1=child\narg2=A\narg3=%s\narg4=%s\narg5=arg with spaces=and equals\n"
             "preput_num=1\npreput_key_0=PARENT_PORT\npreput_val_0=port-of-the-parent\n"
             "info_num=2\ninfo_key_0=wdir\ninfo_val_0=%s\ninfo_key_1=soft\ninfo_val_1=1:2\n"
             "endcmd\n"
             "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=2\nspawnssofar=2\nargcnt=5\n"
             "arg1=child\narg2=B\narg3=%s\narg4=%s\narg5=x\n"
             "preput_num=1\npreput_key_0=PARENT_PORT\npreput_val_0=port-of-the-parent\n"
             "info_num=2\ninfo_key_0=path\ninfo_val_0=%s\ninfo_key_1=host\ninfo_val_1=localhost\n"
             "endcmd\n",
             self, dir, kvs, dir, base, dir, kvs, exe_dir);
    spawn(blocks);
    char val[2048];
    CHECK(reply_get("rc", val, sizeof val) && strcmp(val, "0") == 0);
    CHECK(reply_get("errcodes", val, sizeof val) && strcmp(val, "0,0,0") == 0);
    for (int r = 0; r < 3; r++) { /* each child reports, within 30 s */
        char path[PATH_MAX + 32], line[64], want[64];
        snprintf(path, sizeof path, "%s/child-%d", dir, r);
        FILE *f = NULL;
        for (int i = 0; i < 3000 && !(f = fopen(path, "r")); i++)
            nanosleep(&(struct timespec){0, 10000000}, NULL);
        CHECK(f);
        CHECK(fgets(line, sizeof line, f));
        fclose(f);
        snprintf(want, sizeof want, "ok %d %s\n", r, r < 2 ? "A" : "B");
        CHECK(strcmp(line, want) == 0);
    }

    /* refused requests: nothing starts, the job goes on */
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=2\nexecname=/nonexistent/program\ntotspawns=1\n"
             "spawnssofar=1\nargcnt=0\npreput_num=0\ninfo_num=0\nendcmd\n");
    expect_refused(blocks, "msg=cannot\\ run\\ '/nonexistent/program':\\ No\\ such\\ file", "2,2");
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=1\nspawnssofar=1\nargcnt=0\n"
             "preput_num=0\ninfo_num=1\ninfo_key_0=wdir\ninfo_val_0=/nonexistent/dir\nendcmd\n",
             self);
    expect_refused(blocks, "(wdir\\ /nonexistent/dir):\\ No\\ such\\ file", "2");
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=1\nspawnssofar=1\nargcnt=0\n"
             "preput_num=0\ninfo_num=1\ninfo_key_0=host\ninfo_val_0=elsewhere.invalid\nendcmd\n",
             self);
    expect_refused(blocks, "info\\ host=elsewhere.invalid\\ is\\ not\\ this\\ host", NULL);
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=0\nexecname=%s\ntotspawns=1\nspawnssofar=1\nendcmd\n", self);
    expect_refused(blocks, "processes\\ may\\ still\\ be\\ spawned", NULL);
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=100000\nexecname=%s\ntotspawns=1\nspawnssofar=1\nendcmd\n", self);
    expect_refused(blocks, "nprocs=100000:", NULL);
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=1\nexecname=%s\ntotspawns=1\nspawnssofar=2\nendcmd\n", self);
    expect_refused(blocks, "bad\\ totspawns\\ or\\ spawnssofar", NULL);

    /* at most 256 spawns per job (3 so far, 2 of them failed): the 257th is refused */
    snprintf(blocks, sizeof blocks,
             "mcmd=spawn\nnprocs=1\nexecname=/nonexistent/program\ntotspawns=1\n"
             "spawnssofar=1\nendcmd\n");
    for (int i = 3; i < 256; i++)
        expect_refused(blocks, "msg=cannot\\ run\\ '/nonexistent/program'", "2");
    expect_refused(blocks, "fmplrun\\ starts\\ at\\ most\\ 256\\ spawns\\ per\\ job", NULL);
    pmi_call("cmd=unpublish_name service=parent\\ service\n");
    CHECK(strcmp(reply, "cmd=unpublish_result rc=0 info=ok") == 0);
    pmi_call("cmd=barrier_in\n"); /* the parent's own barrier still works */
    CHECK(strncmp(reply, "cmd=barrier_out", 15) == 0);
    pmi_finalize();
    printf("boot_spawn: OK\n");
    return 0;
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child(argc, argv);
    if (argc > 1 && strcmp(argv[1], "exit3") == 0) {
        char kvs[256];
        pmi_init(kvs, sizeof kvs);
        return 3;
    }
    if (argc > 1 && strcmp(argv[1], "parent") == 0)
        return parent(argc, argv, 0);
    if (argc > 1 && strcmp(argv[1], "die") == 0)
        return parent(argc, argv, 1);
    fprintf(stderr, "usage: %s parent|die DIR\n", argv[0]);
    return 2;
}
