/* vnic_common.h — helpers of the vnic tests: start-up and a barrier made of vnic
 * operations (zero-byte puts with a target counter), so waiting ranks keep
 * progressing (a boot fence would not, and inline puts need the target's progress). */
#ifndef FMPL_TEST_VNIC_COMMON_H
#define FMPL_TEST_VNIC_COMMON_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"
#include "vnic/vnic.h"

#define VT_BARRIER_CNTR 15u /* well-known counter reserved for the test barrier */
#define VT_BARRIER_KEY 14u  /* well-known region: one epoch word per source rank */

typedef struct vt {
    boot_t *boot;
    vnic_t *v;
    int rank, size;
    vnic_cntr_t *bar;
    uint64_t epoch;
    volatile uint64_t *slots; /* [size]: the last barrier epoch each rank announced here */
} vt_t;

static inline void vt_init(vt_t *t)
{
    memset(t, 0, sizeof *t);
    CHECK_RC(boot_init(&t->boot), FMPL_SUCCESS);
    CHECK_RC(vnic_open(t->boot, &t->v), FMPL_SUCCESS);
    t->rank = vnic_rank(t->v);
    t->size = vnic_size(t->v);
    CHECK_RC(vnic_cntr_open(t->v, VT_BARRIER_CNTR, &t->bar), FMPL_SUCCESS);
    t->slots = calloc((size_t)t->size, sizeof *t->slots);
    CHECK(t->slots);
    CHECK_RC(
        vnic_mr_reg_key(t->v, VT_BARRIER_KEY, (void *)t->slots, (size_t)t->size * 8, VNIC_ACC_ALL),
        FMPL_SUCCESS);
    CHECK_RC(boot_fence(t->boot), FMPL_SUCCESS); /* every barrier counter exists */
}

/* One round: every rank has sent its operations issued before it (a target counter
 * moves only after the same initiator's earlier puts are visible at that target).
 * Each rank's announcement also lands in its own epoch word at the target: the counter
 * alone is cumulative, so a round could be completed by a fast rank's next-round
 * announcement while a slow one's is still in flight (seen over udp with injected
 * loss); the words name who has arrived. */
static inline int vt_slots_ready(void *arg)
{
    vt_t *t = arg;
    for (int i = 0; i < t->size; i++)
        if (__atomic_load_n(&t->slots[i], __ATOMIC_ACQUIRE) < t->epoch)
            return 0;
    return vnic_cntr_read(t->bar) >= t->epoch * (uint64_t)t->size;
}

static inline void vt_barrier_round(vt_t *t)
{
    t->epoch++;
    for (int i = 0; i < t->size; i++) {
        int peer = (t->rank + i) % t->size;
        vnic_op_t op = {.opcode = VNIC_OP_PUT,
                        .peer = peer,
                        .flags = VNIC_F_RCNTR | VNIC_F_TAIL_FLAG,
                        .rcntr = VT_BARRIER_CNTR};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = &t->epoch;
        op.local.u.contig.len = 8;
        op.remote.key = VT_BARRIER_KEY;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = 8 * (uint64_t)t->rank;
        CHECK_RC(vnic_post(t->v, &op), FMPL_SUCCESS);
    }
    CHECK_RC(vnic_wait(t->v, vt_slots_ready, t, -1), FMPL_SUCCESS);
}

/* Two rounds: on return, every put issued by any rank before the barrier is visible
 * at its target (after round one each rank has seen the puts aimed at it). */
static inline void vt_barrier(vt_t *t)
{
    vt_barrier_round(t);
    vt_barrier_round(t);
}

static inline void vt_fini(vt_t *t)
{
    vt_barrier(t);
    CHECK_RC(vnic_cntr_close(t->v, t->bar), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(t->v, VT_BARRIER_KEY), FMPL_SUCCESS);
    CHECK_RC(vnic_close(t->v), FMPL_SUCCESS);
    free((void *)t->slots);
    CHECK_RC(boot_finalize(t->boot), FMPL_SUCCESS);
}

/* Deterministic pattern: byte i of a message from src to dst with a salt. */
static inline uint64_t vt_word(int src, int dst, uint64_t salt, size_t w)
{
    uint64_t x = (uint64_t)w * 0x9e3779b97f4a7c15ull ^ ((uint64_t)src << 48) ^
                 ((uint64_t)dst << 32) ^ (salt * 0xbf58476d1ce4e5b9ull);
    x ^= x >> 29;
    x *= 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static inline unsigned char vt_byte(int src, int dst, uint64_t salt, size_t i)
{
    return (unsigned char)(vt_word(src, dst, salt, i / 8) >> (8 * (i % 8)));
}

static inline void vt_fill(unsigned char *p, size_t n, int src, int dst, uint64_t salt)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = vt_word(src, dst, salt, i / 8);
        memcpy(p + i, &x, 8);
    }
    for (; i < n; i++)
        p[i] = vt_byte(src, dst, salt, i);
}

/* Index of the first wrong byte, or SIZE_MAX. */
static inline size_t vt_check(const unsigned char *p, size_t n, int src, int dst, uint64_t salt)
{
    size_t i = 0;
    for (; i + 8 <= n; i += 8) {
        uint64_t x = vt_word(src, dst, salt, i / 8);
        if (memcmp(p + i, &x, 8))
            break;
    }
    for (; i < n; i++)
        if (p[i] != vt_byte(src, dst, salt, i))
            return i;
    return SIZE_MAX;
}

#endif
