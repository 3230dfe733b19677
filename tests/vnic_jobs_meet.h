/* vnic_jobs_meet.h — how the vnic tests of two separately started jobs ("a" and "b") meet
 * (tests/vnic_jobs.c, tests/udp_forge_jobs.c): through files in a directory, and a link
 * agreed by the two rank 0s over TCP (vnic_link_agree), with its error paths:
 *   - a local socket pair whose other end never answers: FMPL_ERR_TIMEOUT in time;
 *   - b's rank 0 first connects and sends junk (a: "not an FMPL process"), then connects
 *     with a wrong token (both: FMPL_ERR_PEER, "wrong token"), then with the right one;
 *     a's rank 0 accepts each in turn.
 * The rank 0s write the link secret to <role>.link (the test's stand-in for the job's own
 * channel); every rank reads its job's, and checks that the other job's is the same. */
#ifndef FMPL_TEST_VNIC_JOBS_MEET_H
#define FMPL_TEST_VNIC_JOBS_MEET_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include "vnic_common.h"

static void meet_write(const char *dir, const char *name, const char *text)
{
    char tmp[512], path[512];
    snprintf(tmp, sizeof tmp, "%s/.%s.tmp", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    CHECK(f);
    fputs(text, f);
    CHECK(fclose(f) == 0);
    CHECK(rename(tmp, path) == 0);
}

static void meet_read(const char *dir, const char *name, char *out, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int tries = 0;; tries++) {
        FILE *f = fopen(path, "r");
        if (f) {
            CHECK(fgets(out, (int)len, f));
            fclose(f);
            return;
        }
        CHECK(tries < 60000); /* 60 s */
        usleep(1000);
    }
}

static void meet_hex(const vnic_link_t *l, char *out)
{
    for (int i = 0; i < VNIC_LINK_BYTES; i++)
        snprintf(out + 2 * i, 3, "%02x", l->secret[i]);
}

static int meet_connect(unsigned port)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    CHECK(fd >= 0);
    CHECK(connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    return fd;
}

/* Agrees the link of jobs a (role 0) and b (role 1); every rank gets it in *link. */
static void meet_link(vt_t *t, const char *dir, int role, vnic_link_t *link)
{
    char why[256], text[256], token[VNIC_LINK_TOKEN_MAX];
    if (t->rank == 0 && role == 0) {
        /* a silent other side: a timeout, in time */
        int sp[2];
        CHECK(socketpair(AF_UNIX, SOCK_STREAM, 0, sp) == 0);
        uint64_t t0 = base_time_ns();
        CHECK_RC(vnic_link_agree(t->v, sp[0], "x", 200, link, why, sizeof why), FMPL_ERR_TIMEOUT);
        CHECK(base_time_ns() - t0 < 5000000000ull && strstr(why, "in time"));
        CHECK_RC(vnic_link_agree(t->v, -1, "x", 200, link, why, sizeof why), FMPL_ERR_ARG);
        close(sp[0]);
        close(sp[1]);

        CHECK_RC(vnic_link_token(token), FMPL_SUCCESS);
        CHECK(strlen(token) == 32);
        int lfd = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof sa;
        CHECK(lfd >= 0 && bind(lfd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
              listen(lfd, 4) == 0 && getsockname(lfd, (struct sockaddr *)&sa, &sl) == 0);
        snprintf(text, sizeof text, "%u %s", ntohs(sa.sin_port), token);
        meet_write(dir, "a.port", text);
        for (int attempt = 0; attempt < 3; attempt++) {
            int fd = accept(lfd, NULL, NULL);
            CHECK(fd >= 0);
            int rc = vnic_link_agree(t->v, fd, token, 30000, link, why, sizeof why);
            if (attempt == 0)
                CHECK(rc == FMPL_ERR_PEER && strstr(why, "not an FMPL process"));
            else if (attempt == 1)
                CHECK(rc == FMPL_ERR_PEER && strstr(why, "wrong token"));
            else
                CHECK_RC(rc, FMPL_SUCCESS);
            close(fd);
        }
        close(lfd);
    } else if (t->rank == 0) {
        unsigned port;
        meet_read(dir, "a.port", text, sizeof text);
        CHECK(sscanf(text, "%u %63s", &port, token) == 2);
        int fd = meet_connect(port);
        char junk[49];
        memset(junk, 'j', sizeof junk);
        CHECK(write(fd, junk, sizeof junk) == (ssize_t)sizeof junk);
        char back[64];
        CHECK(read(fd, back, sizeof back) >= 0); /* its hello, then it closes */
        close(fd);
        fd = meet_connect(port);
        CHECK_RC(vnic_link_agree(t->v, fd, "0123456789abcdef0123456789abcdef", 30000, link, why,
                                 sizeof why),
                 FMPL_ERR_PEER);
        CHECK(strstr(why, "wrong token"));
        close(fd);
        fd = meet_connect(port);
        CHECK_RC(vnic_link_agree(t->v, fd, token, 30000, link, why, sizeof why), FMPL_SUCCESS);
        close(fd);
    }
    char name[32], mine[2 * VNIC_LINK_BYTES + 1], other[2 * VNIC_LINK_BYTES + 1];
    if (t->rank == 0) {
        meet_hex(link, mine);
        snprintf(name, sizeof name, "%s.link", role ? "b" : "a");
        meet_write(dir, name, mine);
    }
    snprintf(name, sizeof name, "%s.link", role ? "b" : "a");
    meet_read(dir, name, mine, sizeof mine);
    snprintf(name, sizeof name, "%s.link", role ? "a" : "b");
    meet_read(dir, name, other, sizeof other);
    CHECK(strlen(mine) == 2 * VNIC_LINK_BYTES && strcmp(mine, other) == 0);
    for (int i = 0; i < VNIC_LINK_BYTES; i++) {
        unsigned b;
        CHECK(sscanf(mine + 2 * i, "%2x", &b) == 1);
        link->secret[i] = (unsigned char)b;
    }
}

#endif
