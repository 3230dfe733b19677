/* vnic_am.c — active messages (VNIC_OP_SEND): the handler of the channel sees src, chan,
 * imm, len and the payload (every length 0..am_max, so payloads that wrap around the
 * target's cell ring too; contiguous and iovec local descriptors); per-initiator order
 * holds together with notifying puts (inline, direct heap and large private ones); a
 * handler may post (a reply from inside the handler, while inboxes have room: the
 * payload's cells stay held during the handler); argument checks in vnic_post. */
#include "vnic_common.h"

#define KEY_PRIV 2u
#define CHAN_AM 2
#define CHAN_REPLY 3
#define NOPS 300
#define BIG 20000 /* > inline_max: CMA or bounce path */

typedef struct state {
    vt_t *t;
    size_t am_max;
    unsigned char *priv; /* [size][2][BIG]: slots of the small and large puts */
    int *next;           /* next op index expected from each source */
    int got, replies;
} state_t;

/* Op i from a source: kind 0..2 are active messages of various lengths, 3 a small
 * notifying put, 4 a large notifying put. */
static int op_kind(int i)
{
    return i % 5;
}
static size_t op_len(const state_t *s, int i)
{
    switch (op_kind(i)) {
    case 0: return (size_t)(i * 7) % 40;                /* one cell or two */
    case 1: return (size_t)(i * 131) % (s->am_max + 1); /* anything up to am_max */
    case 2: return s->am_max - (size_t)(i % 3);
    case 3: return 48;
    default: return BIG - (size_t)(i % 7);
    }
}

/* Where op i (a put) from src lands: one slot per kind and source, reused every 5 ops
 * (the sender's barrier after each small put separates the reuses). */
static uint64_t op_off(int src, int i)
{
    return ((uint64_t)src * 2 + (uint64_t)(op_kind(i) == 3)) * BIG;
}

static void handler(void *arg, const vnic_notify_t *n)
{
    state_t *s = arg;
    int src = n->src;
    CHECK(src >= 0 && src < s->t->size && n->chan == CHAN_AM);
    int i = (int)(n->imm & 0xffffff);
    CHECK((int)(n->imm >> 24) == src);
    if (i < NOPS) {
        CHECK(i == s->next[src]); /* posting order across AMs and notifying puts */
        s->next[src]++;
    }
    size_t len = op_len(s, i);
    CHECK(n->len == len);
    if (op_kind(i) <= 2) {
        CHECK(n->key == VNIC_KEY_INVALID);
        CHECK(n->data != NULL || len == 0);
        CHECK(vt_check(n->data, len, src, s->t->rank, (uint64_t)i) == SIZE_MAX);
        if (i >= NOPS) { /* reply phase: reply from inside the handler */
            vnic_op_t op = {.opcode = VNIC_OP_SEND, .peer = src, .chan = CHAN_REPLY, .imm = 77};
            op.local.kind = VNIC_DESC_CONTIG;
            op.local.u.contig.addr = (void *)(uintptr_t)n->data;
            op.local.u.contig.len = len < 16 ? len : 16;
            CHECK_RC(vnic_post(s->t->v, &op), FMPL_SUCCESS);
        }
    } else {
        CHECK(n->key == KEY_PRIV && n->data == NULL);
        CHECK(n->off == op_off(src, i));
        size_t bad_ = vt_check(s->priv + n->off, len, src, s->t->rank, (uint64_t)i);
        if (bad_ != SIZE_MAX)
            fprintf(stderr, "rank %d: op %d from %d len %zu bad at %zu\n", s->t->rank, i, src, len,
                    bad_);
        CHECK(bad_ == SIZE_MAX);
    }
    s->got++;
}

static void reply_handler(void *arg, const vnic_notify_t *n)
{
    state_t *s = arg;
    CHECK(n->chan == CHAN_REPLY && n->imm == 77 && n->len <= 16);
    s->replies++;
}

/* Progress hooks: called only while armed, in the order added, never nested; a hook
 * may disarm itself; at most VNIC_MAX_HOOKS. */
static int hook_calls[VNIC_MAX_HOOKS], hook_seq, hook_order[2];
static vnic_t *hook_v;
static int hook_fn(void *arg)
{
    int i = (int)(intptr_t)arg;
    hook_calls[i]++;
    if (i < 2)
        hook_order[i] = ++hook_seq;
    vnic_progress(hook_v); /* not re-entered */
    if (i == 1 && hook_calls[1] == 3)
        vnic_hook_arm(hook_v, 1, 0); /* disarms itself */
    return 0;
}

static void test_hooks(vnic_t *v)
{
    int id[VNIC_MAX_HOOKS + 1];
    hook_v = v;
    for (int i = 0; i < VNIC_MAX_HOOKS; i++) {
        CHECK_RC(vnic_hook_add(v, hook_fn, (void *)(intptr_t)i, 0, &id[i]), FMPL_SUCCESS);
        CHECK(id[i] == i);
    }
    CHECK_RC(vnic_hook_add(v, hook_fn, NULL, 0, &id[VNIC_MAX_HOOKS]), FMPL_ERR_NOMEM);
    CHECK_RC(vnic_hook_add(v, NULL, NULL, 0, &id[0]), FMPL_ERR_ARG);
    vnic_progress(v);
    for (int i = 0; i < VNIC_MAX_HOOKS; i++)
        CHECK(hook_calls[i] == 0); /* disarmed: never called */
    vnic_hook_arm(v, 1, 1);
    vnic_hook_arm(v, 0, 1);
    vnic_progress(v);
    CHECK(hook_calls[0] == 1 && hook_calls[1] == 1 && hook_order[0] < hook_order[1]);
    for (int k = 0; k < 5; k++)
        vnic_progress(v);
    CHECK(hook_calls[0] == 6 && hook_calls[1] == 3); /* 1 disarmed itself at its 3rd call */
    for (int i = 0; i < VNIC_MAX_HOOKS; i++)
        vnic_hook_remove(v, id[i]);
    vnic_progress(v);
    CHECK(hook_calls[0] == 6 && hook_calls[2] == 0);
    vnic_hook_arm(v, 0, 1); /* removed: arming does nothing */
    vnic_progress(v);
    CHECK(hook_calls[0] == 6);
}

typedef struct wait_arg {
    state_t *s;
    int want, want_replies;
} wait_arg_t;

static int all_in(void *arg)
{
    wait_arg_t *w = arg;
    return w->s->got >= w->want && w->s->replies >= w->want_replies;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    state_t s = {.t = &t};
    s.am_max = vnic_info(v)->am_max;
    CHECK(s.am_max >= 1024 && s.am_max >= vnic_info(v)->inline_max);
    s.priv = malloc((size_t)t.size * 2 * BIG);
    s.next = calloc((size_t)t.size, sizeof *s.next);
    CHECK(s.priv && s.next);
    CHECK_RC(vnic_mr_reg_key(v, KEY_PRIV, s.priv, (size_t)t.size * 2 * BIG, VNIC_ACC_ALL),
             FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN_AM, handler, &s), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN_REPLY, reply_handler, &s), FMPL_SUCCESS);

    /* argument checks */
    unsigned char *buf = malloc(BIG);
    vnic_op_t bad = {.opcode = VNIC_OP_SEND, .peer = 0, .chan = CHAN_AM};
    bad.local.kind = VNIC_DESC_CONTIG;
    bad.local.u.contig.addr = buf;
    bad.local.u.contig.len = s.am_max + 1;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_TRUNCATE);
    bad.local.u.contig.len = 8;
    bad.flags = VNIC_F_RCNTR;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
    bad.flags = VNIC_F_TAIL_FLAG;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
    bad.flags = 0;
    bad.chan = VNIC_NCHAN;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_ARG);
    bad.chan = CHAN_AM;
    bad.peer = t.size;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_RANK);
    bad.peer = 0;
    bad.local.u.contig.addr = NULL;
    CHECK_RC(vnic_post(v, &bad), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_send_am(v, 0, CHAN_AM, 0, buf, s.am_max, buf, 1), FMPL_ERR_TRUNCATE);
    CHECK_RC(vnic_send_am(v, t.size, CHAN_AM, 0, buf, 8, NULL, 0), FMPL_ERR_RANK);
    CHECK_RC(vnic_send_am(v, -1, CHAN_AM, 0, buf, 8, NULL, 0), FMPL_ERR_RANK);
    CHECK_RC(vnic_send_am(v, 0, VNIC_NCHAN, 0, buf, 8, NULL, 0), FMPL_ERR_ARG);
    CHECK_RC(vnic_send_am(v, 0, CHAN_AM, 0, NULL, 8, NULL, 0), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_send_am(v, 0, CHAN_AM, 0, buf, 8, NULL, 1), FMPL_ERR_BUFFER);
    CHECK_RC(vnic_send_am(NULL, 0, CHAN_AM, 0, buf, 8, NULL, 0), FMPL_ERR_ARG);
    test_hooks(v);
    vt_barrier(&t);

    /* Every rank sends NOPS ops to every rank (itself included), interleaved. */
    int my_replies = 0;
    for (int i = 0; i < NOPS; i++) {
        for (int d = 0; d < t.size; d++) {
            int target = (t.rank + d) % t.size;
            size_t len = op_len(&s, i);
            vt_fill(buf, len, t.rank, target, (uint64_t)i);
            vnic_op_t op = {.opcode = VNIC_OP_SEND,
                            .peer = target,
                            .chan = CHAN_AM,
                            .imm = ((uint64_t)t.rank << 24) | (uint64_t)i};
            struct iovec iov[3];
            if (op_kind(i) <= 2 && i % 4 == 2) { /* the two-piece short form */
                size_t k = len / 3;
                CHECK_RC(vnic_send_am(v, target, CHAN_AM, op.imm, buf, k, buf + k, len - k),
                         FMPL_SUCCESS);
                vnic_progress(v);
                continue;
            }
            if (op_kind(i) <= 2) {
                if (i % 2 && len >= 2) { /* iovec local descriptor, 3 pieces */
                    iov[0].iov_base = buf;
                    iov[0].iov_len = 1;
                    iov[1].iov_base = buf + 1;
                    iov[1].iov_len = 0;
                    iov[2].iov_base = buf + 1;
                    iov[2].iov_len = len - 1;
                    op.local.kind = VNIC_DESC_IOV;
                    op.local.u.iov.iov = iov;
                    op.local.u.iov.cnt = 3;
                } else {
                    op.local.kind = VNIC_DESC_CONTIG;
                    op.local.u.contig.addr = buf;
                    op.local.u.contig.len = len;
                }
                op.flags = i % 3 == 0 ? VNIC_F_NOTIFY : 0;
            } else {
                op.opcode = VNIC_OP_PUT;
                op.flags = VNIC_F_NOTIFY;
                op.local.kind = VNIC_DESC_CONTIG;
                op.local.u.contig.addr = buf;
                op.local.u.contig.len = len;
                op.remote.key = KEY_PRIV;
                op.remote.kind = VNIC_DESC_CONTIG;
                op.remote.u.off = op_off(t.rank, i);
            }
            CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
            vnic_progress(v);
        }
        if (op_kind(i) == 3) /* the previous puts' handlers ran before slots are reused */
            vt_barrier(&t);
    }
    wait_arg_t w = {&s, NOPS * t.size, 0};
    CHECK_RC(vnic_wait(v, all_in, &w, -1), FMPL_SUCCESS);
    for (int r = 0; r < t.size; r++)
        CHECK(s.next[r] == NOPS);
    vt_barrier(&t);

    /* Reply phase: one AM to every rank, each answered from inside the handler. */
    for (int d = 0; d < t.size; d++) {
        int target = (t.rank + d) % t.size, i = NOPS + 1 + 5 * d;
        size_t len = op_len(&s, i);
        vt_fill(buf, len, t.rank, target, (uint64_t)i);
        vnic_op_t op = {.opcode = VNIC_OP_SEND,
                        .peer = target,
                        .chan = CHAN_AM,
                        .imm = ((uint64_t)t.rank << 24) | (uint64_t)i};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = buf;
        op.local.u.contig.len = len;
        CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        my_replies++;
    }
    w.want = (NOPS + 1) * t.size;
    w.want_replies = my_replies;
    CHECK_RC(vnic_wait(v, all_in, &w, -1), FMPL_SUCCESS);
    vt_barrier(&t);
    CHECK(s.replies == t.size && s.got == (NOPS + 1) * t.size);

    CHECK_RC(vnic_set_notify_handler(v, CHAN_AM, NULL, NULL), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN_REPLY, NULL, NULL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_PRIV), FMPL_SUCCESS);
    free(buf);
    free(s.priv);
    free(s.next);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_am: ok (%d ranks, am_max %zu)\n", t.size, s.am_max);
    return 0;
}
