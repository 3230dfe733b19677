/* vnic_fastbox.c — small active messages with imm 0 between ranks that exchange them
 * often travel through the pair's fastbox line (shm.c); everything else through the
 * inbox. Per-initiator order must hold across both paths: every rank sends every rank
 * NOPS operations mixing fastbox-eligible AMs (0..24 bytes, imm 0), larger AMs, AMs
 * with an immediate, notifying puts (inline and large) and heap puts with a target
 * counter, in bursts and one at a time, with pauses in which the target does not
 * progress; the handler checks the operation index carried in each payload and the
 * payload itself. Then a ping-pong between pairs (the fastbox's own pattern). */
#include <unistd.h>

#include "vnic_common.h"

#define KEY_PRIV 2u
#define CHAN 2
#define NOPS 4000
#define BIG 9000
#define CNTR 14u

typedef struct state {
    vt_t *t;
    unsigned char *priv; /* [size][BIG] */
    int *next;           /* next op index expected from each source */
    int got;
    int pp_got; /* ping-pong messages */
} state_t;

/* Kind of op i (from any source): 0 a fastbox-eligible AM of 4..24 bytes (the first 4
 * carry the index), 1 an AM of 100 bytes, 2 an AM with an immediate, 3 a notifying
 * inline put, 4 a large notifying put (index in the immediate), 5 a heap put with a
 * target counter (no handler: counted, not in the order check). */
static int op_kind(int i)
{
    int r = i % 9;
    return r < 3 ? 0 : r - 2 < 5 ? r - 2 : 5;
}
static size_t am_len(int i)
{
    return op_kind(i) == 0 ? 4 + (size_t)(i % 21) : 100;
}

static void handler(void *arg, const vnic_notify_t *n)
{
    state_t *s = arg;
    int src = n->src;
    CHECK(src >= 0 && src < s->t->size && n->chan == CHAN);
    int i;
    if (n->data) { /* an active message: the index leads the payload */
        CHECK(n->len >= 4);
        memcpy(&i, n->data, 4);
        if (i < 0) { /* ping-pong */
            s->pp_got++;
            return;
        }
        CHECK(n->imm == (op_kind(i) == 2 ? (uint64_t)i + 1 : 0));
        CHECK(n->len == am_len(i));
        CHECK(vt_check((const unsigned char *)n->data + 4, n->len - 4, src, s->t->rank,
                       (uint64_t)i) == SIZE_MAX);
    } else { /* a notifying put: the index is the immediate */
        i = (int)n->imm;
        CHECK(n->key == KEY_PRIV);
        size_t len = op_kind(i) == 3 ? 40 : BIG;
        CHECK(n->len == len);
        CHECK(vt_check(s->priv + (size_t)src * BIG, len, src, s->t->rank, (uint64_t)i) == SIZE_MAX);
    }
    CHECK(i == s->next[src]); /* posting order, whichever path each one took */
    do
        s->next[src]++;
    while (op_kind(s->next[src]) == 5);
    s->got++;
}

typedef struct wait_arg {
    state_t *s;
    int want, want_pp;
} wait_arg_t;

static int all_in(void *arg)
{
    wait_arg_t *w = arg;
    return w->s->got >= w->want && w->s->pp_got >= w->want_pp;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    state_t s = {.t = &t};
    s.priv = calloc((size_t)t.size, BIG);
    s.next = calloc((size_t)t.size, sizeof *s.next);
    unsigned char *buf = malloc(BIG);
    uint64_t *heap = vnic_mem_alloc(v, (size_t)t.size * 64);
    CHECK(s.priv && s.next && buf && heap);
    CHECK_RC(vnic_mr_reg_key(v, KEY_PRIV, s.priv, (size_t)t.size * BIG, VNIC_ACC_ALL),
             FMPL_SUCCESS);
    vnic_cntr_t *cntr;
    CHECK_RC(vnic_cntr_open(v, CNTR, &cntr), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN, handler, &s), FMPL_SUCCESS);
    vt_barrier(&t);

    int heap_puts = 0;
    for (int i = 0; i < NOPS; i++) {
        for (int d = 0; d < t.size; d++) {
            int target = (t.rank + d) % t.size;
            int k = op_kind(i);
            if (k <= 2) { /* active messages */
                size_t len = am_len(i);
                memcpy(buf, &i, 4);
                vt_fill(buf + 4, len - 4, t.rank, target, (uint64_t)i);
                CHECK_RC(vnic_send_am(v, target, CHAN, k == 2 ? (uint64_t)i + 1 : 0, buf, 4,
                                      buf + 4, len - 4),
                         FMPL_SUCCESS);
            } else if (k <= 4) { /* notifying puts */
                size_t len = k == 3 ? 40 : BIG;
                vt_fill(buf, len, t.rank, target, (uint64_t)i);
                vnic_op_t op = {.opcode = VNIC_OP_PUT,
                                .peer = target,
                                .flags = VNIC_F_NOTIFY,
                                .chan = CHAN,
                                .imm = (uint64_t)i};
                op.local.kind = VNIC_DESC_CONTIG;
                op.local.u.contig.addr = buf;
                op.local.u.contig.len = len;
                op.remote.key = KEY_PRIV;
                op.remote.kind = VNIC_DESC_CONTIG;
                op.remote.u.off = (uint64_t)t.rank * BIG;
                CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
                /* the slot is reused by the next put: wait for this one's handler */
                vt_barrier(&t);
            } else { /* heap put with a target counter: no index, not in the order check */
                uint64_t word = (uint64_t)i;
                vnic_op_t op = {
                    .opcode = VNIC_OP_PUT, .peer = target, .flags = VNIC_F_RCNTR, .rcntr = CNTR};
                op.local.kind = VNIC_DESC_CONTIG;
                op.local.u.contig.addr = &word;
                op.local.u.contig.len = 8;
                op.remote.key = VNIC_KEY_HEAP;
                op.remote.kind = VNIC_DESC_CONTIG;
                op.remote.u.off = (uint64_t)((uintptr_t)&heap[t.rank * 8] - (uintptr_t)heap);
                CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
                heap_puts++;
            }
        }
        if (i % 97 == 0) /* a pause: targets' fastboxes stay full for a while */
            usleep(200);
        else if (i % 5 == 0)
            vnic_progress(v);
    }
    int handled = 0;
    for (int i = 0; i < NOPS; i++)
        handled += op_kind(i) != 5;
    wait_arg_t w = {&s, handled * t.size, 0};
    CHECK_RC(vnic_wait(v, all_in, &w, -1), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_wait(v, cntr, (uint64_t)heap_puts, -1), FMPL_SUCCESS);
    for (int r = 0; r < t.size; r++)
        CHECK(s.next[r] >= NOPS); /* past the last index */
    vt_barrier(&t);

    /* Ping-pong between pairs (0-1, 2-3, ...), 8-byte AMs with imm 0. */
    int peer = t.rank ^ 1, rounds = 20000;
    if (peer < t.size) {
        int me_first = t.rank < peer;
        for (int r = 0; r < rounds; r++) {
            int neg = -1 - r;
            memcpy(buf, &neg, 4);
            if (me_first) {
                CHECK_RC(vnic_send_am(v, peer, CHAN, 0, buf, 8, NULL, 0), FMPL_SUCCESS);
                w = (wait_arg_t){&s, 0, r + 1};
                CHECK_RC(vnic_wait(v, all_in, &w, -1), FMPL_SUCCESS);
            } else {
                w = (wait_arg_t){&s, 0, r + 1};
                CHECK_RC(vnic_wait(v, all_in, &w, -1), FMPL_SUCCESS);
                CHECK_RC(vnic_send_am(v, peer, CHAN, 0, buf, 8, NULL, 0), FMPL_SUCCESS);
            }
        }
        CHECK(s.pp_got == rounds);
    }
    vt_barrier(&t);
    CHECK_RC(vnic_set_notify_handler(v, CHAN, NULL, NULL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_PRIV), FMPL_SUCCESS);
    CHECK_RC(vnic_mem_free(v, heap), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(v, cntr), FMPL_SUCCESS);
    free(buf);
    free(s.priv);
    free(s.next);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_fastbox: ok (%d ranks)\n", t.size);
    return 0;
}
