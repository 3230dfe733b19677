/* udp_defer.c — VNIC_F_DEFER: operations the transport may hold for the next post to the
 * same peer (over udp: one datagram, a bundle of several messages). Pairs of ranks
 * (2k, 2k+1) exchange tail-flag puts and notifications; every phase checks the data and
 * its order at the target, and that nothing stays held past an entry into the library:
 *   join      a deferred put, then a notifying put to the same peer: one datagram;
 *   progress  a deferred put stays off the wire until vnic_progress;
 *   flush     ... until vnic_flush;
 *   other     ... until a post to another peer (3 ranks or more);
 *   wait      a deferred put the peer must see before it answers, then vnic_wait for the
 *             answer; and the same with vnic_wait_keep (held up to FMPL_UDP_DEFER_US);
 *   many      100 deferred puts, then a notification that must find them all;
 *   am        a deferred active message, then a notifying put: handler order kept;
 *   fence     a deferred put, then vnic_fence: over udp visible at the target after it;
 *   close     a deferred put as the last operation before vnic_close.
 * Counter checks (datagrams, bundles, held posts) run over udp when UDP_DEFER_EXACT=1 (no
 * fault injection); the delivery checks run always (also over shm, which ignores the
 * flag, and under injected loss, duplication and reordering). */
#include "vnic_common.h"

#define KEY_LAND 2u
#define NW 128 /* words per source rank in the landing area */
#define CHAN 2

typedef struct ctx {
    vt_t t;
    volatile uint64_t *land; /* [size][NW] */
    int udp, exact;
    /* notifications: the last imm per source, and a count of order violations */
    volatile uint64_t last_imm[64];
    volatile uint64_t am_seen[64];
    int bad;
} ctx_t;

static ctx_t C;

static volatile uint64_t *slot(int src, int k)
{
    return &C.land[(size_t)src * NW + (size_t)k];
}

/* Checks, at a notification with imm = (phase << 32 | n), that the n words the same
 * source put before it (deferred) are all there. */
static void on_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    uint64_t phase = n->imm >> 32, cnt = n->imm & 0xffffffffu;
    if (n->key == VNIC_KEY_INVALID) { /* the deferred active message */
        if (n->len != 8 || !n->data) {
            C.bad++;
            return;
        }
        uint64_t x;
        memcpy(&x, n->data, 8);
        C.am_seen[n->src] = x;
        return;
    }
    for (uint64_t k = 0; k < cnt; k++)
        if (*slot(n->src, (int)k) != (phase << 32 | (k + 1))) {
            fprintf(stderr, "rank %d: phase %llu: word %llu from %d missing at notification\n",
                    C.t.rank, (unsigned long long)phase, (unsigned long long)k, n->src);
            C.bad++;
        }
    if (phase == 7 && C.am_seen[n->src] != 0x7a7a) { /* the AM came first */
        fprintf(stderr, "rank %d: notification before the deferred active message\n", C.t.rank);
        C.bad++;
    }
    __atomic_store_n(&C.last_imm[n->src], n->imm, __ATOMIC_RELEASE);
}

static void put8(int peer, uint64_t *val, int k, uint32_t flags, uint64_t imm)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = peer, .flags = flags, .chan = CHAN, .imm = imm};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = val;
    op.local.u.contig.len = 8;
    op.remote.key = KEY_LAND;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = ((uint64_t)C.t.rank * NW + (uint64_t)k) * 8;
    CHECK_RC(vnic_post(C.t.v, &op), FMPL_SUCCESS);
}

/* A deferred tail-flag put of (phase << 32 | k + 1) into word k at peer. */
static void put_deferred(int peer, uint64_t phase, int k)
{
    uint64_t val = phase << 32 | (uint64_t)(k + 1);
    put8(peer, &val, k, VNIC_F_TAIL_FLAG | VNIC_F_DEFER, 0);
}

/* A notifying put (word NW-1) announcing the n deferred words before it. */
static void put_notify(int peer, uint64_t phase, uint64_t n)
{
    uint64_t val = phase << 32 | n;
    put8(peer, &val, NW - 1, VNIC_F_NOTIFY, phase << 32 | n);
}

typedef struct want {
    volatile uint64_t *w;
    uint64_t v;
} want_t;

static int want_ready(void *arg)
{
    const want_t *x = arg;
    return __atomic_load_n(x->w, __ATOMIC_ACQUIRE) == x->v;
}

static void wait_word(volatile uint64_t *w, uint64_t v)
{
    want_t x = {w, v};
    CHECK_RC(vnic_wait(C.t.v, want_ready, &x, -1), FMPL_SUCCESS);
}

static void wait_notify(int src, uint64_t imm)
{
    want_t x = {&C.last_imm[src], imm};
    CHECK_RC(vnic_wait(C.t.v, want_ready, &x, -1), FMPL_SUCCESS);
}

static vnic_udp_stats_t stats(void)
{
    vnic_udp_stats_t s;
    memset(&s, 0, sizeof s);
    if (C.udp)
        CHECK_RC(vnic_udp_stats(C.t.v, &s), FMPL_SUCCESS);
    return s;
}

int main(void)
{
    vt_t *t = &C.t;
    vt_init(t);
    vnic_t *v = t->v;
    CHECK(t->size <= 64);
    const char *ex = getenv("UDP_DEFER_EXACT");
    vnic_udp_stats_t s0;
    C.udp = vnic_udp_stats(v, &s0) == FMPL_SUCCESS;
    C.exact = C.udp && ex && atoi(ex) == 1;
    if (ex && atoi(ex) == 1 && t->size > 1)
        CHECK(C.udp); /* the exact variant runs over udp */
    size_t bytes = (size_t)t->size * NW * 8;
    C.land = aligned_alloc(64, BASE_ALIGN_UP(bytes, 64));
    CHECK(C.land);
    memset((void *)C.land, 0, bytes);
    CHECK_RC(vnic_mr_reg_key(v, KEY_LAND, (void *)C.land, bytes, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN, on_notify, NULL), FMPL_SUCCESS);

    /* error paths: DEFER is for puts and active messages only */
    {
        uint64_t x = 0, res;
        vnic_op_t op = {.opcode = VNIC_OP_GET, .peer = t->rank, .flags = VNIC_F_DEFER};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = &x;
        op.local.u.contig.len = 8;
        op.remote.key = KEY_LAND;
        op.remote.kind = VNIC_DESC_CONTIG;
        CHECK_RC(vnic_post(v, &op), FMPL_ERR_ARG);
        vnic_op_t amo = {.opcode = VNIC_OP_FADD,
                         .peer = t->rank,
                         .flags = VNIC_F_DEFER,
                         .operand = 1,
                         .result = &res};
        amo.remote.key = KEY_LAND;
        amo.remote.kind = VNIC_DESC_CONTIG;
        CHECK_RC(vnic_post(v, &amo), FMPL_ERR_ARG);
        vnic_op_t big = {.opcode = VNIC_OP_PUT, .peer = t->rank, .flags = 16};
        big.local.kind = VNIC_DESC_CONTIG;
        big.local.u.contig.addr = &x;
        big.local.u.contig.len = 8;
        big.remote.key = KEY_LAND;
        big.remote.kind = VNIC_DESC_CONTIG;
        CHECK_RC(vnic_post(v, &big), FMPL_ERR_ARG); /* unknown flag */
        CHECK_RC(vnic_wait_keep(NULL, want_ready, NULL, 0), FMPL_ERR_ARG);
        CHECK(vnic_defer_mark(NULL) == 0);
        vnic_flush(NULL); /* no effect, no crash */
        /* to self (served by shm): the flag changes nothing, the put is done at return */
        x = 0x5e1f;
        op.opcode = VNIC_OP_PUT;
        op.flags = VNIC_F_DEFER;
        op.remote.u.off = ((uint64_t)t->rank * NW + 5) * 8;
        CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        CHECK(*slot(t->rank, 5) == 0x5e1f);
        CHECK(vnic_defer_mark(v) == 0);
        *slot(t->rank, 5) = 0;
    }
    vt_barrier(t);

    int peer = t->rank ^ 1;
    int sender = !(t->rank & 1) && peer < t->size; /* even rank of a full pair */
    int receiver = (t->rank & 1) != 0;

    /* join: a deferred put and the next post to the same peer leave as one datagram */
    if (sender) {
        vnic_udp_stats_t a = stats();
        put_deferred(peer, 1, 0);
        if (C.udp) {
            CHECK(vnic_defer_mark(v) != 0);
            vnic_udp_stats_t h = stats();
            CHECK(h.data_sent == a.data_sent && h.deferred == a.deferred + 1);
        }
        put_notify(peer, 1, 1);
        CHECK(vnic_defer_mark(v) == 0);
        vnic_udp_stats_t b = stats();
        if (C.exact) {
            CHECK(b.tx_packets == a.tx_packets + 1);
            CHECK(b.data_sent == a.data_sent + 2);
            CHECK(b.bundles_sent == a.bundles_sent + 1 && b.bundled_sent == a.bundled_sent + 1);
            CHECK(b.deferred_joined == a.deferred_joined + 1);
        }
    } else if (receiver) {
        wait_notify(peer, 1ull << 32 | 1);
        if (C.exact) {
            vnic_udp_stats_t b = stats();
            CHECK(b.bundled_recv >= 1);
        }
    }
    vt_barrier(t);

    /* progress, then flush: held until that entry */
    for (int how = 0; how < 2; how++) {
        uint64_t phase = 2 + (uint64_t)how;
        if (sender) {
            vnic_udp_stats_t a = stats();
            put_deferred(peer, phase, 0);
            uint64_t mark = vnic_defer_mark(v);
            CHECK(C.udp ? mark != 0 : mark == 0);
            vnic_udp_stats_t h = stats();
            CHECK(h.data_sent == a.data_sent); /* not on the wire yet */
            if (how == 0)
                vnic_progress(v);
            else
                vnic_flush(v);
            CHECK(vnic_defer_mark(v) == 0);
            vnic_udp_stats_t b = stats();
            if (C.udp)
                CHECK(b.data_sent == a.data_sent + 1 && b.deferred_joined == a.deferred_joined);
            if (C.exact)
                CHECK(b.tx_packets >= a.tx_packets + 1);
        } else if (receiver) {
            wait_word(slot(peer, 0), phase << 32 | 1);
        }
        vt_barrier(t);
    }

    /* other: a post to another peer sends what is held for the first one */
    if (t->size >= 3 && t->rank == 0) {
        vnic_udp_stats_t a = stats();
        put_deferred(1, 4, 0);
        uint64_t one = 4ull << 32 | 1;
        put8(2, &one, 0, VNIC_F_TAIL_FLAG, 0);
        CHECK(vnic_defer_mark(v) == 0);
        vnic_udp_stats_t b = stats();
        if (C.udp)
            CHECK(b.data_sent == a.data_sent + 2 && b.deferred_joined == a.deferred_joined);
        if (C.exact)
            CHECK(b.tx_packets == a.tx_packets + 2 && b.bundles_sent == a.bundles_sent);
    } else if (t->size >= 3 && (t->rank == 1 || t->rank == 2)) {
        wait_word(slot(0, 0), 4ull << 32 | 1);
    }
    vt_barrier(t);

    /* wait and wait_keep: the peer answers only once it saw the deferred put */
    for (int keep = 0; keep < 2; keep++) {
        uint64_t phase = 5 + (uint64_t)keep;
        if (sender) {
            put_deferred(peer, phase, 0);
            want_t x = {slot(peer, 0), phase << 32 | 2};
            if (keep)
                CHECK_RC(vnic_wait_keep(v, want_ready, &x, -1), FMPL_SUCCESS);
            else
                CHECK_RC(vnic_wait(v, want_ready, &x, -1), FMPL_SUCCESS);
        } else if (receiver) {
            wait_word(slot(peer, 0), phase << 32 | 1);
            uint64_t ans = phase << 32 | 2;
            put8(peer, &ans, 0, VNIC_F_TAIL_FLAG, 0);
        }
        vt_barrier(t);
    }

    /* am: a deferred active message, then a notifying put (handler order kept) */
    if (sender) {
        uint64_t x = 0x7a7a;
        vnic_op_t op = {
            .opcode = VNIC_OP_SEND, .peer = peer, .flags = VNIC_F_DEFER, .chan = CHAN, .imm = 0};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = &x;
        op.local.u.contig.len = 8;
        vnic_udp_stats_t a = stats();
        CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        put_notify(peer, 7, 0);
        vnic_udp_stats_t b = stats();
        if (C.exact)
            CHECK(b.tx_packets == a.tx_packets + 1 && b.bundled_sent == a.bundled_sent + 1);
    } else if (receiver) {
        wait_notify(peer, 7ull << 32);
        CHECK(C.am_seen[peer] == 0x7a7a);
    }
    vt_barrier(t);

    /* many: 100 deferred puts held together, then one notification that must find them */
    if (sender) {
        vnic_udp_stats_t a = stats();
        for (int k = 0; k < 100; k++)
            put_deferred(peer, 8, k);
        vnic_udp_stats_t h = stats();
        if (C.udp)
            CHECK(h.deferred == a.deferred + 100 && h.data_sent == a.data_sent);
        put_notify(peer, 8, 100);
        vnic_udp_stats_t b = stats();
        if (C.udp)
            CHECK(b.deferred_joined == a.deferred_joined + 100);
        vt_barrier(t);
        b = stats();
        /* 101 messages of 120 bytes leave 17 to a datagram, as the window allows */
        if (C.exact && b.bundled_sent < a.bundled_sent + 50) {
            fprintf(stderr, "rank %d: 101 messages, %llu bundled\n", t->rank,
                    (unsigned long long)(b.bundled_sent - a.bundled_sent));
            CHECK(0);
        }
    } else {
        if (receiver)
            wait_notify(peer, 8ull << 32 | 100);
        vt_barrier(t);
    }

    /* fence: what was held before vnic_fence is visible at its target after it */
    if (sender)
        put_deferred(peer, 9, 0);
    CHECK_RC(vnic_fence(v), FMPL_SUCCESS);
    if (receiver && C.udp) /* (shm: puts to private memory land at the target's progress) */
        CHECK(*slot(peer, 0) == (9ull << 32 | 1));
    else if (receiver)
        wait_word(slot(peer, 0), 9ull << 32 | 1);
    vt_barrier(t);
    CHECK(C.bad == 0);

    /* close: a deferred put is the last operation before vnic_close */
    vt_barrier(t);
    CHECK_RC(vnic_cntr_close(v, t->bar), FMPL_SUCCESS);
    if (sender)
        put_deferred(peer, 10, 0);
    if (receiver)
        wait_word(slot(peer, 0), 10ull << 32 | 1);
    if (t->rank == 0 && C.udp) {
        vnic_udp_stats_t b = stats();
        printf("udp_defer: %d ranks: datagrams sent %llu, bundles %llu (+%llu messages), "
               "deferred %llu (joined %llu)\n",
               t->size, (unsigned long long)b.tx_packets, (unsigned long long)b.bundles_sent,
               (unsigned long long)b.bundled_sent, (unsigned long long)b.deferred,
               (unsigned long long)b.deferred_joined);
    }
    CHECK_RC(vnic_close(v), FMPL_SUCCESS);
    CHECK(C.bad == 0);
    free((void *)C.land);
    free((void *)t->slots);
    CHECK_RC(boot_finalize(t->boot), FMPL_SUCCESS);
    return 0;
}
