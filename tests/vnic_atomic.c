/* vnic_atomic.c — 64-bit remote atomics under contention, on a private target word
 * (executed by the target from a cell) and on a shared-heap word (done directly by
 * the initiators): every rank fetch-adds the same word N times (exact total, each
 * initiator sees increasing old values), blocking and pipelined through lcntr; a
 * compare-swap lock protecting a non-atomic counter updated with get + put; swap. */
#include "vnic_common.h"

#define KEY_WORDS 2u
#define N_ADD 300
#define N_LOCK 60
#define BATCH 16

static uint64_t *words_of(vt_t *t, int kind, uint64_t *priv, uint64_t *heap)
{
    (void)t;
    return kind == 0 ? priv : heap;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    uint64_t *priv = aligned_alloc(64, 64), *heap = vnic_mem_alloc(v, 64);
    CHECK(priv && heap);
    memset(priv, 0, 64);
    memset(heap, 0, 64);
    CHECK_RC(vnic_mr_reg_key(v, KEY_WORDS, priv, 64, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_WORDS + 1, heap, 64, VNIC_ACC_ALL), FMPL_SUCCESS);
    vnic_cntr_t *lc;
    CHECK_RC(vnic_cntr_open(v, VNIC_CNTR_ANY, &lc), FMPL_SUCCESS);
    uint64_t done = 0;
    vt_barrier(&t);

    for (int kind = 0; kind < 2; kind++) {
        vnic_key_t key = KEY_WORDS + (vnic_key_t)kind;
        /* fetch-add: every rank adds to word 0 of every rank */
        for (int d = 0; d < t.size; d++) {
            int target = (t.rank + d) % t.size;
            uint64_t prev = 0;
            for (int i = 0; i < N_ADD / 2; i++) {
                uint64_t old = UINT64_MAX;
                CHECK_RC(vnic_atomic(v, VNIC_OP_FADD, target, key, 0, 1, 0, &old), FMPL_SUCCESS);
                CHECK(old != UINT64_MAX && (i == 0 || old > prev));
                prev = old;
            }
            /* pipelined: BATCH in flight, completion through lcntr */
            uint64_t res[BATCH];
            for (int i = 0; i < N_ADD / 2; i += BATCH) {
                int n = BASE_MIN(BATCH, N_ADD / 2 - i);
                for (int k = 0; k < n; k++) {
                    res[k] = UINT64_MAX;
                    vnic_op_t op = {.opcode = VNIC_OP_FADD,
                                    .peer = target,
                                    .operand = 1,
                                    .result = &res[k],
                                    .lcntr = lc};
                    op.remote.key = key;
                    op.remote.kind = VNIC_DESC_CONTIG;
                    op.remote.u.off = 0;
                    CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
                }
                done += (uint64_t)n;
                CHECK_RC(vnic_cntr_wait(v, lc, done, -1), FMPL_SUCCESS);
                for (int k = 0; k < n; k++) {
                    CHECK(res[k] != UINT64_MAX && res[k] > prev);
                    prev = res[k];
                }
            }
        }
        vt_barrier(&t);
        uint64_t *w = words_of(&t, kind, priv, heap);
        CHECK(w[0] == (uint64_t)t.size * N_ADD);
        CHECK(vnic_cntr_errors(lc) == 0);

        /* compare-swap lock at rank 0 (word 1) around a plain counter (word 2) */
        for (int i = 0; i < N_LOCK; i++) {
            uint64_t old;
            do {
                CHECK_RC(vnic_atomic(v, VNIC_OP_CSWAP, 0, key, 8, (uint64_t)t.rank + 1, 0, &old),
                         FMPL_SUCCESS);
                if (old)
                    vnic_progress(v);
            } while (old != 0);
            uint64_t cnt;
            CHECK_RC(vnic_get(v, 0, &cnt, 8, key, 16), FMPL_SUCCESS);
            cnt++;
            CHECK_RC(vnic_put(v, 0, &cnt, 8, key, 16), FMPL_SUCCESS);
            CHECK_RC(vnic_atomic(v, VNIC_OP_SWAP, 0, key, 8, 0, 0, &old), FMPL_SUCCESS);
            CHECK(old == (uint64_t)t.rank + 1);
        }
        vt_barrier(&t);
        if (t.rank == 0)
            CHECK(w[1] == 0 && w[2] == (uint64_t)t.size * N_LOCK);
        /* a failing compare-swap leaves the word alone and reports its value */
        uint64_t old = 0;
        CHECK_RC(vnic_atomic(v, VNIC_OP_CSWAP, (t.rank + 1) % t.size, key, 0, 7, 12345, &old),
                 FMPL_SUCCESS);
        CHECK(old == (uint64_t)t.size * N_ADD);
        /* result NULL is allowed */
        CHECK_RC(vnic_atomic(v, VNIC_OP_FADD, (t.rank + 1) % t.size, key, 24, 3, 0, NULL),
                 FMPL_SUCCESS);
        vt_barrier(&t);
        CHECK(w[0] == (uint64_t)t.size * N_ADD && w[3] == 3);
    }
    CHECK_RC(vnic_cntr_close(v, lc), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_WORDS), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_WORDS + 1), FMPL_SUCCESS);
    vt_fini(&t);
    free(priv);
    if (t.rank == 0)
        printf("vnic_atomic: ok (%d ranks)\n", t.size);
    return 0;
}
