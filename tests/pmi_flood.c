/* pmi_flood — strangers that try to hold fmplrun's PMI port (tests/launcher_test.sh,
 * case pmi_flood):
 *
 *     pmi_flood PORT NIDLE READY_FILE
 *
 * Opens NIDLE idle connections to 127.0.0.1:PORT, 40% of them from source address
 * 127.0.0.1 (where the ranks come from: more than one address may hold) and the rest
 * spread over 127.0.0.2, .4, .5 and .6 (together more than every address may hold),
 * plus one slow-loris
 * client from 127.0.0.3 that sends a valid-looking initack line one byte every 200 ms
 * and never finishes it. Every idle connection the server closes is opened again
 * 50 ms later, so the flood keeps its pressure until the listening socket is gone
 * (connect refused: every rank got through). Creates READY_FILE once the first NIDLE
 * connections are up. Prints, when the port closes (or after 60 s):
 *     idle closed C
 *     slowloris closed after T ms        (or "slowloris never closed")
 * and exits 0, or 1 when the flood could not start. */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define MAX_IDLE 1000

/* The source address of idle connection i. */
static const char *source_of(int i, int nidle)
{
    static const char *const others[] = {"127.0.0.2", "127.0.0.4", "127.0.0.5", "127.0.0.6"};
    return i < nidle * 2 / 5 ? "127.0.0.1" : others[i % 4];
}

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

/* A blocking connect from source address `from` to 127.0.0.1:port; the descriptor,
 * -2 when refused (nobody listens any more), -1 on another error. */
static int connect_from(const char *from, int port)
{
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    struct sockaddr_in src = {.sin_family = AF_INET}, dst = {.sin_family = AF_INET};
    inet_pton(AF_INET, from, &src.sin_addr);
    inet_pton(AF_INET, "127.0.0.1", &dst.sin_addr);
    dst.sin_port = htons((uint16_t)port);
    if (bind(fd, (struct sockaddr *)&src, sizeof src) != 0) {
        close(fd);
        return -1;
    }
    if (connect(fd, (struct sockaddr *)&dst, sizeof dst) != 0) {
        int refused = errno == ECONNREFUSED;
        close(fd);
        return refused ? -2 : -1;
    }
    return fd;
}

/* 1 when the server closed fd (end of file or reset); reads and drops its replies. */
static int closed_by_server(int fd)
{
    char buf[512];
    for (;;) {
        ssize_t n = recv(fd, buf, sizeof buf, MSG_DONTWAIT);
        if (n > 0)
            continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
            return 0;
        if (n < 0 && errno == EINTR)
            continue;
        return 1;
    }
}

int main(int argc, char **argv)
{
    if (argc != 4) {
        fprintf(stderr, "usage: %s PORT NIDLE READY_FILE\n", argv[0]);
        return 1;
    }
    int port = atoi(argv[1]), nidle = atoi(argv[2]);
    if (port <= 0 || nidle < 1 || nidle > MAX_IDLE) {
        fprintf(stderr, "pmi_flood: bad port or count\n");
        return 1;
    }
    static int fd[MAX_IDLE];
    static uint64_t reopen_at[MAX_IDLE];
    for (int i = 0; i < nidle; i++) {
        fd[i] = connect_from(source_of(i, nidle), port);
        if (fd[i] < 0) {
            fprintf(stderr, "pmi_flood: connection %d failed\n", i);
            return 1;
        }
    }
    int loris = connect_from("127.0.0.3", port);
    if (loris < 0) {
        fprintf(stderr, "pmi_flood: the slow-loris connection failed\n");
        return 1;
    }
    uint64_t loris_start = now_ms(), loris_closed = 0, loris_next = loris_start;
    const char *loris_line = "cmd=initack pmiid=0 token=0123456789abcdef0123456789abcdef";
    size_t loris_sent = 0;
    int ready = open(argv[3], O_CREAT | O_WRONLY | O_CLOEXEC, 0600);
    if (ready < 0) {
        perror("pmi_flood: ready file");
        return 1;
    }
    close(ready);

    long idle_closed = 0;
    int port_gone = 0;
    uint64_t end = now_ms() + 60000;
    while (!port_gone && now_ms() < end) {
        uint64_t now = now_ms();
        if (!loris_closed) {
            if (closed_by_server(loris)) {
                loris_closed = now;
                close(loris);
            } else if (now >= loris_next && loris_line[loris_sent]) {
                ssize_t w = send(loris, loris_line + loris_sent, 1, MSG_NOSIGNAL);
                if (w == 1)
                    loris_sent++;
                loris_next = now + 200;
            }
        }
        for (int i = 0; i < nidle && !port_gone; i++) {
            if (fd[i] >= 0 && closed_by_server(fd[i])) {
                close(fd[i]);
                fd[i] = -1;
                idle_closed++;
                reopen_at[i] = now + 50;
            } else if (fd[i] < 0 && now >= reopen_at[i]) {
                fd[i] = connect_from(source_of(i, nidle), port);
                if (fd[i] == -2)
                    port_gone = 1;
                reopen_at[i] = now + 50;
            }
        }
        poll(NULL, 0, 10);
    }
    printf("idle closed %ld\n", idle_closed);
    if (loris_closed)
        printf("slowloris closed after %llu ms\n",
               (unsigned long long)(loris_closed - loris_start));
    else
        printf("slowloris never closed\n");
    return 0;
}
