/* fmpl_coalesce.c — native point-to-point with receive headers that the vnic may hold
 * (fmpl_irecv posts them with VNIC_F_DEFER; over udp the next payload to that peer takes
 * them along in one datagram). Pairs of ranks (2k, 2k+1); every message's contents are
 * checked:
 *   prepost   the ping-pong of bench/fmpl_pingpong.c (each side keeps its next receive
 *             posted one message ahead, on two mais per direction): with
 *             FMPL_COALESCE_EXACT=1 (udp, 2 ranks, holds that outlast any round trip) the
 *             datagrams that carry messages must be about one per ping-pong message, not
 *             two (payload + header);
 *   blocking  fmpl_send / fmpl_recv (the header is needed at once: never held);
 *   exchange  both sides irecv, send, irecv_wait (each send waits for the other's header);
 *   crossed   the sender needs a header the receiver holds while it waits for another
 *             message: it leaves after FMPL_UDP_DEFER_US or when the wait stops spinning;
 *   outside   irecv, then time outside the library, then irecv_wait (the header leaves
 *             at the latest there), while the peer's send waits for it.
 * Usage: fmpl_coalesce [iterations] (default 2000). */
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmpl.h"
#include "runtime/runtime.h"
#include "test_util.h"

#define W FMPL_COMM_WORLD
#define MAI_PING 10 /* and 11 */
#define MAI_PONG 12 /* and 13 */

static int rank, peer;

static uint64_t val(int from, long i, int kind)
{
    return (uint64_t)from << 48 | (uint64_t)kind << 40 | (uint64_t)i;
}

static void expect(uint64_t got, int from, long i, int kind)
{
    if (got != val(from, i, kind)) {
        fprintf(stderr, "rank %d: message %ld (kind %d) from %d: %#llx, expected %#llx\n", rank, i,
                kind, from, (unsigned long long)got, (unsigned long long)val(from, i, kind));
        CHECK(0);
    }
}

/* Datagrams that carried messages (first transmissions): all sent minus control packets
 * and retransmissions. */
static uint64_t data_datagrams(const vnic_udp_stats_t *s)
{
    return s->tx_packets - s->acks_sent - s->lose_sent - s->stop_sent - s->go_sent - s->retransmits;
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int size;
    CHECK_RC(fmpl_comm_rank(W, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(W, &size), FMPL_SUCCESS);
    long iters = argc > 1 ? atol(argv[1]) : 2000;
    if (iters < 2)
        iters = 2;
    peer = rank ^ 1;
    int active = peer < size, first = !(rank & 1);
    vnic_t *v = runtime_vnic();
    CHECK(v);
    vnic_udp_stats_t s0, s1;
    int udp = vnic_udp_stats(v, &s0) == FMPL_SUCCESS;
    const char *ex = getenv("FMPL_COALESCE_EXACT");
    int exact = ex && atoi(ex) == 1;
    if (exact)
        CHECK(udp && size == 2);
    uint64_t sbuf = 0, rbuf[2] = {0, 0};

    /* prepost: the benchmark's loop */
    if (active) {
        if (first)
            CHECK_RC(fmpl_irecv(&rbuf[0], 8, peer, MAI_PONG, W), FMPL_SUCCESS);
        else {
            CHECK_RC(fmpl_irecv(&rbuf[0], 8, peer, MAI_PING, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_irecv(&rbuf[1], 8, peer, MAI_PING + 1, W), FMPL_SUCCESS);
        }
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
    if (udp)
        CHECK_RC(vnic_udp_stats(v, &s0), FMPL_SUCCESS);
    for (long i = 0; active && i < iters; i++) {
        int m = (int)(i % 2);
        if (first) {
            sbuf = val(rank, i, 1);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, MAI_PING + m, W), FMPL_SUCCESS);
            if (i + 1 < iters)
                CHECK_RC(fmpl_irecv(&rbuf[1 - m], 8, peer, MAI_PONG + 1 - m, W), FMPL_SUCCESS);
            fmpl_status st;
            CHECK_RC(fmpl_irecv_wait(peer, MAI_PONG + m, W, &st), FMPL_SUCCESS);
            CHECK(st.source == peer && st.mai == MAI_PONG + m && st.size == 8);
            expect(rbuf[m], peer, i, 2);
        } else {
            CHECK_RC(fmpl_irecv_wait(peer, MAI_PING + m, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(rbuf[m], peer, i, 1);
            sbuf = val(rank, i, 2);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, MAI_PONG + m, W), FMPL_SUCCESS);
            if (i + 2 < iters)
                CHECK_RC(fmpl_irecv(&rbuf[m], 8, peer, MAI_PING + m, W), FMPL_SUCCESS);
        }
    }
    if (udp && active) {
        CHECK_RC(vnic_udp_stats(v, &s1), FMPL_SUCCESS);
        uint64_t msgs = s1.data_sent - s0.data_sent;
        uint64_t dgrams = data_datagrams(&s1) - data_datagrams(&s0);
        printf("fmpl_coalesce: rank %d: %ld ping-pong messages sent: %llu udp messages in %llu "
               "datagrams (%llu bundled, %llu retransmitted)\n",
               rank, iters, (unsigned long long)msgs, (unsigned long long)dgrams,
               (unsigned long long)(s1.bundled_sent - s0.bundled_sent),
               (unsigned long long)(s1.retransmits - s0.retransmits));
        /* a payload and a receive header per message (the last ones: none) */
        CHECK(msgs >= 2 * (uint64_t)iters - 2 && msgs <= 2 * (uint64_t)iters + 2);
        if (exact) /* one datagram per message, not two (slack: holds that expired) */
            CHECK(dgrams <= (uint64_t)iters + (uint64_t)iters / 8 + 16);
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* blocking */
    for (long i = 0; active && i < iters / 4; i++) {
        if (first) {
            sbuf = val(rank, i, 3);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, 1, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_recv(&rbuf[0], 8, peer, 2, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(rbuf[0], peer, i, 4);
        } else {
            CHECK_RC(fmpl_recv(&rbuf[0], 8, peer, 1, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(rbuf[0], peer, i, 3);
            sbuf = val(rank, i, 4);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, 2, W), FMPL_SUCCESS);
        }
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* exchange */
    for (long i = 0; active && i < iters / 4; i++) {
        CHECK_RC(fmpl_irecv(&rbuf[0], 8, peer, 3, W), FMPL_SUCCESS);
        sbuf = val(rank, i, 5);
        CHECK_RC(fmpl_send(&sbuf, 8, peer, 3, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(peer, 3, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
        expect(rbuf[0], peer, i, 5);
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* crossed: A's header leaves with X, B's is held while the first rank waits for A;
     * the second rank sends B (which needs that header) before A */
    for (long i = 0; active && i < 20; i++) {
        if (first) {
            CHECK_RC(fmpl_irecv(&rbuf[0], 8, peer, 4, W), FMPL_SUCCESS); /* A */
            sbuf = val(rank, i, 6);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, 5, W), FMPL_SUCCESS);     /* X */
            CHECK_RC(fmpl_irecv(&rbuf[1], 8, peer, 6, W), FMPL_SUCCESS); /* B */
            CHECK_RC(fmpl_irecv_wait(peer, 4, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            CHECK_RC(fmpl_irecv_wait(peer, 6, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(rbuf[0], peer, i, 7);
            expect(rbuf[1], peer, i, 8);
        } else {
            uint64_t x = 0, a = val(rank, i, 7), b = val(rank, i, 8);
            CHECK_RC(fmpl_recv(&x, 8, peer, 5, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(x, peer, i, 6);
            CHECK_RC(fmpl_send(&b, 8, peer, 6, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(&a, 8, peer, 4, W), FMPL_SUCCESS);
        }
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* outside: the header may stay held while this rank is outside the library */
    for (long i = 0; active && i < 5; i++) {
        if (first) {
            CHECK_RC(fmpl_irecv(&rbuf[0], 8, peer, 7, W), FMPL_SUCCESS);
            struct timespec ts = {0, 2000000};
            nanosleep(&ts, NULL);
            CHECK_RC(fmpl_irecv_wait(peer, 7, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
            expect(rbuf[0], peer, i, 9);
        } else {
            sbuf = val(rank, i, 9);
            CHECK_RC(fmpl_send(&sbuf, 8, peer, 7, W), FMPL_SUCCESS);
        }
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    return 0;
}
