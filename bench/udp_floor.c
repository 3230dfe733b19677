/* udp_floor.c — the floor under a large ping-pong over UDP on loopback, without any
 * library: two forked processes, each bound to its own CPU, send each other a message of
 * --size bytes as datagrams of --dgram bytes (connected sockets, send per datagram,
 * non-blocking recv polled into the destination, no header, no tag, no acknowledgement).
 * What the kernel's UDP path costs on this machine is the most any UDP transport can get
 * there; bench/udp_compare.sh compares FMPL's udp transport, and Open MPI's TCP path,
 * against the same message size (docs/performance.md).
 *
 * usage: udp_floor [--size=B] [--dgram=B] [--iters=N] [--port=P]
 * Prints the one-way time (half a round trip, averaged over N after 100 untimed ones) and
 * the bandwidth, 1 GB = 1e9 B. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void die(const char *what)
{
    fprintf(stderr, "udp_floor: %s: %s\n", what, strerror(errno));
    exit(1);
}

/* A socket on 127.0.0.1:port connected to 127.0.0.1:peer_port. */
static int channel(int port, int peer_port)
{
    int s = socket(AF_INET, SOCK_DGRAM, 0), big = 8 << 20;
    if (s < 0)
        die("socket");
    setsockopt(s, SOL_SOCKET, SO_RCVBUF, &big, sizeof big);
    setsockopt(s, SOL_SOCKET, SO_SNDBUF, &big, sizeof big);
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    a.sin_port = htons((uint16_t)port);
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0)
        die("bind");
    a.sin_port = htons((uint16_t)peer_port);
    if (connect(s, (struct sockaddr *)&a, sizeof a) != 0)
        die("connect");
    return s;
}

static void move(int s, char *buf, size_t size, size_t dgram, int sending)
{
    for (size_t at = 0; at < size; at += dgram) {
        size_t n = size - at < dgram ? size - at : dgram;
        if (sending) {
            while (send(s, buf + at, n, 0) < 0)
                if (errno != ENOBUFS && errno != EAGAIN && errno != EINTR)
                    die("send");
        } else {
            double since = 0;
            for (unsigned polls = 1; recv(s, buf + at, n, MSG_DONTWAIT) < 0; polls++) {
                if (errno != EAGAIN && errno != EINTR)
                    die("recv");
                if (polls % 65536 != 0)
                    continue;
                if (since == 0) {
                    since = now();
                } else if (now() - since > 2) {
                    fprintf(stderr, "udp_floor: no datagram for 2 s: one was lost (a receive "
                                    "buffer overflowed?); try a smaller --size\n");
                    exit(1);
                }
            }
        }
    }
}

int main(int argc, char **argv)
{
    size_t size = 1 << 20, dgram = 65000;
    long iters = 2000;
    int port = 47000;
    for (int i = 1; i < argc; i++) {
        if (!strncmp(argv[i], "--size=", 7))
            size = strtoul(argv[i] + 7, NULL, 0);
        else if (!strncmp(argv[i], "--dgram=", 8))
            dgram = strtoul(argv[i] + 8, NULL, 0);
        else if (!strncmp(argv[i], "--iters=", 8))
            iters = strtol(argv[i] + 8, NULL, 0);
        else if (!strncmp(argv[i], "--port=", 7))
            port = atoi(argv[i] + 7);
        else {
            fprintf(stderr, "usage: udp_floor [--size=B] [--dgram=B] [--iters=N] [--port=P]\n");
            return 2;
        }
    }
    if (size == 0 || dgram == 0 || dgram > 65507 || iters < 1 || port < 1024 || port > 65534) {
        fprintf(stderr, "udp_floor: --size and --dgram (at most 65507) must be positive, "
                        "--iters at least 1, --port in 1024..65534\n");
        return 2;
    }
    pid_t child = fork();
    if (child < 0)
        die("fork");
    int me = child == 0;
    int s = channel(port + me, port + 1 - me);
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    CPU_SET(me, &cpus);
    sched_setaffinity(0, sizeof cpus, &cpus); /* (one CPU: the scheduler's choice) */
    char *buf = malloc(size);
    if (!buf)
        die("malloc");
    memset(buf, me, size);
    usleep(100000); /* both sockets bound before the first datagram */
    double t0 = 0;
    for (long i = 0; i < iters + 100; i++) {
        if (i == 100)
            t0 = now();
        move(s, buf, size, dgram, me == 0);
        move(s, buf, size, dgram, me != 0);
    }
    if (me) {
        close(s);
        return 0;
    }
    double t = (now() - t0) / (double)iters / 2;
    int status = 0;
    waitpid(child, &status, 0);
    printf("udp_floor: %zu B in datagrams of %zu B: one-way %.2f us, %.2f GB/s\n", size, dgram,
           t * 1e6, (double)size / t / 1e9);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}
