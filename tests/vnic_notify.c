/* vnic_notify.c — target counters and notifications: the handler sees the right
 * src/chan/imm/key/off/len with the data already visible, and per-initiator order
 * holds across paths (inline cells, direct heap puts, CMA or bounce, RCNTR-only direct
 * increments that must not overtake earlier cells); TAIL_FLAG: the target polls the
 * last 8 bytes and finds everything before them written, on every path. */
#include <sched.h>

#include "vnic_common.h"

#define KEY_PRIV 2u
#define KEY_HEAP 3u
#define NOPS 64
#define SLOT 8192 /* > inline_max: big ops take the CMA / bounce path */
#define CHAN 1

typedef struct state {
    vt_t *t;
    unsigned char *priv, *heap;
    vnic_cntr_t **per_src; /* counter moved by RCNTR ops from each source */
    int *next;             /* next notified op index expected from each source */
    int notified;
} state_t;

static int op_kind(int i)
{
    return i % 5;
}
static int op_has_rcntr(int i)
{
    int k = op_kind(i);
    return k == 0 || k == 2 || k == 3;
}
static int op_has_notify(int i)
{
    int k = op_kind(i);
    return k == 1 || k == 2;
}
static size_t op_len(int i)
{
    static const size_t lens[5] = {40, 24, SLOT, 1000, 64};
    return lens[op_kind(i)] - (size_t)(i % 3);
}
static int op_private(int i)
{
    int k = op_kind(i);
    return k == 0 || k == 2 || k == 4;
}
static uint64_t op_off(const state_t *s, int src, int i)
{
    return ((uint64_t)src * NOPS + (uint64_t)i) * SLOT + (uint64_t)(i % 5);
    (void)s;
}
/* number of RCNTR ops among ops 0..i of a source */
static uint64_t rcntr_upto(int i)
{
    uint64_t n = 0;
    for (int k = 0; k <= i; k++)
        n += (uint64_t)op_has_rcntr(k);
    return n;
}

static void handler(void *arg, const vnic_notify_t *n)
{
    state_t *s = arg;
    CHECK(n->chan == CHAN && n->src >= 0 && n->src < s->t->size);
    int i = (int)(n->imm & 0xffff);
    CHECK((int)(n->imm >> 16) == n->src);
    CHECK(i == s->next[n->src]); /* in posting order, none lost */
    CHECK(op_has_notify(i));
    CHECK(n->key == (op_private(i) ? KEY_PRIV : KEY_HEAP));
    CHECK(n->off == op_off(s, n->src, i) && n->len == op_len(i));
    /* the counter moved for every earlier RCNTR op (and this one's), no later one */
    CHECK(vnic_cntr_read(s->per_src[n->src]) == rcntr_upto(i));
    const unsigned char *base = op_private(i) ? s->priv : s->heap;
    CHECK(vt_check(base + n->off, n->len, n->src, s->t->rank, (uint64_t)i) == SIZE_MAX);
    /* find the next notifying op */
    int k = i + 1;
    while (k < NOPS && !op_has_notify(k))
        k++;
    s->next[n->src] = k;
    s->notified++;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    state_t s = {.t = &t};
    size_t rsz = BASE_MAX((size_t)t.size * NOPS * SLOT, (size_t)(1 << 20)) + 64;
    s.priv = malloc(rsz);
    s.heap = vnic_mem_alloc(v, rsz);
    CHECK(s.priv && s.heap);
    CHECK_RC(vnic_mr_reg_key(v, KEY_PRIV, s.priv, rsz, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_HEAP, s.heap, rsz, VNIC_ACC_ALL), FMPL_SUCCESS);
    s.per_src = calloc((size_t)t.size, sizeof *s.per_src);
    s.next = calloc((size_t)t.size, sizeof *s.next);
    for (int r = 0; r < t.size; r++) {
        CHECK_RC(vnic_cntr_open(v, VNIC_CNTR_ANY, &s.per_src[r]), FMPL_SUCCESS);
        CHECK(vnic_cntr_id(s.per_src[r]) == 16u + (uint32_t)r); /* same ids on every rank */
        s.next[r] = 1;                                          /* op 1 is the first notifying op */
    }
    CHECK_RC(vnic_set_notify_handler(v, CHAN, handler, &s), FMPL_SUCCESS);
    vt_barrier(&t);

    /* Every rank sends NOPS ops to every rank (itself included), interleaved. */
    unsigned char *src = malloc(SLOT);
    for (int i = 0; i < NOPS; i++) {
        for (int d = 0; d < t.size; d++) {
            int target = (t.rank + d) % t.size;
            size_t len = op_len(i);
            vt_fill(src, len, t.rank, target, (uint64_t)i);
            vnic_op_t op = {.opcode = VNIC_OP_PUT,
                            .peer = target,
                            .chan = CHAN,
                            .imm = ((uint64_t)t.rank << 16) | (uint64_t)i,
                            .rcntr = 16u + (uint32_t)t.rank};
            op.flags =
                (op_has_rcntr(i) ? VNIC_F_RCNTR : 0) | (op_has_notify(i) ? VNIC_F_NOTIFY : 0);
            op.local.kind = VNIC_DESC_CONTIG;
            op.local.u.contig.addr = src;
            op.local.u.contig.len = len;
            op.remote.key = op_private(i) ? KEY_PRIV : KEY_HEAP;
            op.remote.kind = VNIC_DESC_CONTIG;
            op.remote.u.off = op_off(&s, t.rank, i);
            CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
            vnic_progress(v);
        }
    }
    /* wait for everything aimed at me */
    for (int r = 0; r < t.size; r++)
        CHECK_RC(vnic_cntr_wait(v, s.per_src[r], rcntr_upto(NOPS - 1), -1), FMPL_SUCCESS);
    vt_barrier(&t);
    int per_src_notify = 0;
    for (int i = 0; i < NOPS; i++)
        per_src_notify += op_has_notify(i);
    CHECK(s.notified == per_src_notify * t.size);
    for (int r = 0; r < t.size; r++)
        for (int i = 0; i < NOPS; i++) {
            const unsigned char *base = op_private(i) ? s.priv : s.heap;
            CHECK(vt_check(base + op_off(&s, r, i), op_len(i), r, t.rank, (uint64_t)i) == SIZE_MAX);
        }

    /* TAIL_FLAG: the target polls the last word, then everything before it is there. */
    static const size_t tails[] = {8, 64, 4096, 100000, (1 << 20) + 8};
    unsigned char *big = malloc((1 << 20) + 16);
    for (int kind = 0; kind < 2; kind++) {
        unsigned char *mine = kind == 0 ? s.priv : s.heap;
        for (size_t ti = 0; ti < sizeof tails / sizeof tails[0]; ti++) {
            size_t len = tails[ti];
            for (int d = 0; d < t.size; d++) {
                int target = (t.rank + d) % t.size, from = (t.rank - d + t.size) % t.size;
                memset(mine, 0, len);
                vt_barrier(&t);
                uint64_t salt = 1000 + ti;
                vt_fill(big, len, t.rank, target, salt);
                uint64_t flag = 0x8000000000000000ull | ((uint64_t)t.rank << 32) | ti;
                memcpy(big + len - 8, &flag, 8);
                vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = target, .flags = VNIC_F_TAIL_FLAG};
                op.local.kind = VNIC_DESC_CONTIG;
                op.local.u.contig.addr = big;
                op.local.u.contig.len = len;
                op.remote.key = kind == 0 ? KEY_PRIV : KEY_HEAP;
                op.remote.kind = VNIC_DESC_CONTIG;
                op.remote.u.off = 0;
                CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
                /* poll my own tail word, progressing */
                uint64_t *tail = (uint64_t *)(void *)(mine + len - 8);
                uint64_t want = 0x8000000000000000ull | ((uint64_t)from << 32) | ti;
                base_backoff_t bo;
                base_backoff_init(&bo);
                while (__atomic_load_n(tail, __ATOMIC_ACQUIRE) != want) {
                    vnic_progress(v);
                    if (base_backoff_next(&bo) != BASE_BACKOFF_SPIN)
                        sched_yield();
                }
                CHECK(vt_check(mine, len - 8, from, t.rank, salt) == SIZE_MAX);
                vt_barrier(&t);
            }
        }
    }
    free(big);
    free(src);
    for (int r = 0; r < t.size; r++)
        CHECK_RC(vnic_cntr_close(v, s.per_src[r]), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN, NULL, NULL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_PRIV), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_HEAP), FMPL_SUCCESS);
    CHECK_RC(vnic_mem_free(v, s.heap), FMPL_SUCCESS);
    free(s.priv);
    free(s.per_src);
    free(s.next);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_notify: ok (%d ranks)\n", t.size);
    return 0;
}
