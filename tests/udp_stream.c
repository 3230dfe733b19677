/* udp_stream.c — many messages of random sizes (1 B .. 1 MiB; mostly small) from each
 * rank to the next one in a ring, as puts with notification into a ring buffer at the
 * receiver, under whatever faults the environment injects (FMPL_UDP_LOSS, _DUP,
 * _REORDER). The receiver's handler checks that message k of a sender arrives exactly
 * once and in order (imm == k), at the offset and with the length the sender's
 * deterministic size sequence gives, and byte for byte intact; it returns ring space to
 * the sender with a tail-flag put of the bytes consumed (credit). Prints the udp
 * counters; with injected loss the retransmission counters must have moved (and with
 * UDP_STREAM_EXPECT_GSO set, some datagrams must have left in UDP GSO sends; with
 * UDP_STREAM_EXPECT_TWIN and 2 ranks, through the twin socket connected to the other;
 * with UDP_STREAM_EXPECT_ZCOPY, some must have left straight from the sender's buffer,
 * udp.c's ZERO-COPY). The sender scribbles over its buffer as soon as a post returns, so
 * a datagram (re)transmitted from it afterwards would arrive with the wrong bytes.
 * Usage: udp_stream [messages per sender] (default 2000). */
#include "vnic_common.h"

#define KEY_RING 2u
#define KEY_CREDIT 3u
#define RING ((size_t)4 << 20)
#define MAXMSG ((size_t)1 << 20)

typedef struct st {
    vt_t t;
    unsigned char *ring;
    volatile uint64_t credit; /* bytes the receiver consumed (written by it) */
    int src, dst;
    long count;
    long next_k;     /* next message index expected from src */
    uint64_t rx_end; /* allocation end of what we consumed */
    uint64_t rx_pos; /* receiver's replay of the sender's allocation */
    uint64_t returned;
} st_t;

static uint64_t mix(uint64_t x)
{
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ull;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

/* Size of message k from src: 90% 1..1024, 9% up to 64 KiB, 1% up to 1 MiB. */
static size_t msg_size(int src, long k)
{
    uint64_t r = mix(((uint64_t)src << 40) ^ (uint64_t)k ^ 0x1234);
    unsigned pick = (unsigned)(r % 100);
    r = mix(r);
    if (pick < 90)
        return 1 + (size_t)(r % 1024);
    if (pick < 99)
        return 1 + (size_t)(r % (64 << 10));
    return 1 + (size_t)(r % MAXMSG);
}

/* Ring placement: a message never wraps; returns its offset, advances *pos (the
 * allocation counter, which includes the skipped tail). */
static uint64_t place(uint64_t *pos, size_t size)
{
    uint64_t off = *pos % RING;
    if (off + size > RING) {
        *pos += RING - off;
        off = 0;
    }
    *pos += size;
    return off;
}

static void handler(void *arg, const vnic_notify_t *n)
{
    st_t *s = arg;
    if (n->src != s->src || (long)n->imm != s->next_k) {
        fprintf(stderr, "rank %d: message %llu from %d, expected %ld from %d\n", s->t.rank,
                (unsigned long long)n->imm, n->src, s->next_k, s->src);
        CHECK(0);
    }
    size_t size = msg_size(s->src, s->next_k);
    uint64_t off = place(&s->rx_pos, size);
    CHECK(n->key == KEY_RING && n->off == off && n->len == size);
    size_t bad = vt_check(s->ring + off, size, s->src, s->t.rank, (uint64_t)s->next_k);
    if (bad != SIZE_MAX) {
        fprintf(stderr, "rank %d: message %ld (%zu bytes) from %d: byte %zu wrong\n", s->t.rank,
                s->next_k, size, s->src, bad);
        CHECK(0);
    }
    s->rx_end = s->rx_pos;
    s->next_k++;
}

typedef struct room {
    st_t *s;
    uint64_t need;
} room_t;

static int room_ready(void *arg)
{
    room_t *r = arg;
    return __atomic_load_n(&r->s->credit, __ATOMIC_ACQUIRE) >= r->need;
}

/* Returns consumed ring space to the sender (from the main loop, not the handler). */
static void give_credit(st_t *s, int force)
{
    if (s->rx_end == s->returned || (!force && s->rx_end - s->returned < RING / 8))
        return;
    static uint64_t word;
    word = s->rx_end;
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = s->src, .flags = VNIC_F_TAIL_FLAG};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = &word;
    op.local.u.contig.len = 8;
    op.remote.key = KEY_CREDIT;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = 0;
    CHECK_RC(vnic_post(s->t.v, &op), FMPL_SUCCESS);
    s->returned = s->rx_end;
}

static int all_in(void *arg)
{
    st_t *s = arg;
    give_credit(s, 0);
    return s->next_k == s->count;
}

int main(int argc, char **argv)
{
    static st_t s;
    s.count = argc > 1 ? atol(argv[1]) : 2000;
    CHECK(s.count > 0);
    vt_init(&s.t);
    vnic_t *v = s.t.v;
    int n = s.t.size, me = s.t.rank;
    s.dst = (me + 1) % n;
    s.src = (me - 1 + n) % n;
    s.ring = malloc(RING);
    unsigned char *msg = malloc(MAXMSG);
    CHECK(s.ring && msg);
    CHECK_RC(vnic_mr_reg_key(v, KEY_RING, s.ring, RING, VNIC_ACC_REMOTE_WRITE), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_CREDIT, (void *)&s.credit, 8, VNIC_ACC_REMOTE_WRITE),
             FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, 1, handler, &s), FMPL_SUCCESS);
    vt_barrier(&s.t);

    uint64_t t0 = base_time_ns(), bytes = 0, pos = 0;
    for (long k = 0; k < s.count; k++) {
        size_t size = msg_size(me, k);
        uint64_t before = pos;
        uint64_t off = place(&pos, size);
        (void)before;
        if (pos - __atomic_load_n(&s.credit, __ATOMIC_ACQUIRE) > RING) {
            room_t r = {&s, pos - RING};
            while (!room_ready(&r)) {
                vnic_progress(v);
                give_credit(&s, 0);
            }
        }
        vt_fill(msg, size, me, s.dst, (uint64_t)k);
        vnic_op_t op = {.opcode = VNIC_OP_PUT,
                        .peer = s.dst,
                        .flags = VNIC_F_NOTIFY,
                        .chan = 1,
                        .imm = (uint64_t)k};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = msg;
        op.local.u.contig.len = size;
        op.remote.key = KEY_RING;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = off;
        CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        memset(msg, 0xa5, size); /* the put is locally complete: the buffer is ours again */
        bytes += size;
        vnic_progress(v);
        give_credit(&s, 0);
    }
    CHECK_RC(vnic_wait(v, all_in, &s, -1), FMPL_SUCCESS);
    give_credit(&s, 1);
    double secs = (double)(base_time_ns() - t0) * 1e-9;
    vt_barrier(&s.t);

    vnic_udp_stats_t us;
    int rc = vnic_udp_stats(v, &us);
    if (rc == FMPL_SUCCESS) {
        printf("rank %d: %ld messages, %.1f MB in %.2f s (%.0f MB/s); packets %llu sent, %llu "
               "retransmitted, %llu timeouts, LOSE %llu/%llu, STOP %llu, dup dropped %llu, "
               "out-of-order dropped %llu, injected loss %llu dup %llu reorder %llu, zero-copy "
               "%llu (detached %llu)\n",
               me, s.count, (double)bytes / 1e6, secs, (double)bytes / 1e6 / secs,
               (unsigned long long)us.tx_packets, (unsigned long long)us.retransmits,
               (unsigned long long)us.timeouts, (unsigned long long)us.lose_sent,
               (unsigned long long)us.lose_recv, (unsigned long long)us.stop_sent,
               (unsigned long long)us.dup_dropped, (unsigned long long)us.ooo_dropped,
               (unsigned long long)us.inj_loss, (unsigned long long)us.inj_dup,
               (unsigned long long)us.inj_reorder, (unsigned long long)us.zcopy_sent,
               (unsigned long long)us.zcopy_detached);
        const char *loss = getenv("FMPL_UDP_LOSS");
        if (n > 1 && loss && atof(loss) > 0) {
            CHECK(us.inj_loss > 0);
            CHECK(us.retransmits > 0);
        }
        /* set by tests/udp.cmake where runs of datagrams must have left with UDP GSO */
        if (n > 1 && getenv("UDP_STREAM_EXPECT_GSO"))
            CHECK(us.gso_sends > 0);
        /* ... and where the twin socket must have been connected to the other rank (with
         * more ranks, acknowledgements to the previous one may keep breaking the runs) */
        if (n == 2 && getenv("UDP_STREAM_EXPECT_TWIN"))
            CHECK(us.twin_connects > 0);
        if (n > 1 && getenv("UDP_STREAM_EXPECT_ZCOPY"))
            CHECK(us.zcopy_sent > 0);
        /* ... and where fragments of large puts must have been received in place */
        if (n > 1 && getenv("UDP_STREAM_EXPECT_PLACE")) {
            printf("rank %d: %llu datagrams received in place, %llu missed\n", me,
                   (unsigned long long)us.placed, (unsigned long long)us.place_missed);
            CHECK(us.placed > 0);
        }
        CHECK(us.bad_secret == 0 && us.bad_csum == 0 && us.malformed == 0 && us.truncated == 0);
        CHECK(us.refused == 0);
    } else {
        CHECK_RC(rc, FMPL_ERR_UNSUPPORTED);
    }
    vt_fini(&s.t);
    free(msg);
    free(s.ring);
    if (me == 0)
        printf("udp_stream: ok (%d ranks, %ld messages each)\n", n, s.count);
    return 0;
}
