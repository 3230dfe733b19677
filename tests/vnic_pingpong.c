/* vnic_pingpong.c — latency and bandwidth sanity check of the vnic between ranks 0
 * and 1 (run by hand: fmplrun -n 2 vnic_pingpong [iterations]; as a test it runs a
 * few iterations and checks data only, never timings).
 *   latency: 8-byte ping-pong, each side polling the tail flag of its landing buffer:
 *     heap  — the peer's put lands directly in my shared heap (no target CPU);
 *     cell  — the put travels inline in a cell to private memory (target progress);
 *     notify — the same with a notification handler as the completion.
 *   bandwidth: a stream of puts of one size, then a counter put, ack'ed back:
 *     private memory (CMA, or bounce buffers with FMPL_SHM_CMA=0) and shared heap. */
#include <sched.h>

#include "vnic_common.h"

#define KEY_LAND 2u
#define KEY_HLAND 3u

static volatile uint64_t notified;
static void on_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    notified = n->imm;
}

static void put_tail(vnic_t *v, int peer, uint64_t *val, vnic_key_t key, uint64_t off,
                     uint32_t flags, uint64_t imm)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = peer, .flags = flags, .imm = imm, .chan = 2};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = val;
    op.local.u.contig.len = 8;
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
}

static void wait_word(vnic_t *v, volatile uint64_t *w, uint64_t want, int progress)
{
    base_backoff_t bo;
    base_backoff_init(&bo);
    while (*w != want) {
        if (progress)
            vnic_progress(v);
        if (base_backoff_next(&bo) != BASE_BACKOFF_SPIN)
            sched_yield();
        else
            base_cpu_relax();
    }
    __atomic_thread_fence(__ATOMIC_ACQUIRE);
}

int main(int argc, char **argv)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    long iters = argc > 1 ? atol(argv[1]) : 100000;
    if (iters < 1)
        iters = 1;
    const size_t maxbw = 4 << 20;
    uint64_t *land = aligned_alloc(64, 64);
    uint64_t *hland = vnic_mem_alloc(v, 64);
    unsigned char *bbuf = malloc(maxbw), *bsrc = malloc(maxbw), *hb = vnic_mem_alloc(v, maxbw);
    CHECK(land && hland && bbuf && bsrc && hb);
    memset(land, 0, 64);
    memset(hland, 0, 64);
    memset(bbuf, 0, maxbw);
    CHECK_RC(vnic_mr_reg_key(v, KEY_LAND, land, 64, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_HLAND, hland, 64, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, 4, bbuf, maxbw, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, 5, hb, maxbw, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, 2, on_notify, NULL), FMPL_SUCCESS);
    vnic_cntr_t *bwc;
    CHECK_RC(vnic_cntr_open(v, 6, &bwc), FMPL_SUCCESS);
    vt_barrier(&t);
    if (t.size < 2 || t.rank > 1) {
        if (t.rank == 0)
            printf("vnic_pingpong: needs 2 ranks (ranks > 1 idle)\n");
        CHECK_RC(vnic_cntr_close(v, bwc), FMPL_SUCCESS);
        vt_fini(&t);
        free(land);
        free(bbuf);
        free(bsrc);
        return 0;
    }
    int peer = 1 - t.rank;
    if (t.rank == 0)
        printf("vnic_pingpong: cma %d inline_max %zu oversubscribed %d\n", vnic_info(v)->cma,
               vnic_info(v)->inline_max, vnic_info(v)->oversubscribed);

    /* latency. Over udp nothing lands without the target's progress, not even in the
     * heap: every mode progresses then. */
    vnic_udp_stats_t ust;
    int udp = vnic_udp_stats(v, &ust) == FMPL_SUCCESS;
    static const char *names[] = {"heap (direct)", "cell (private)", "cell + notify"};
    for (int mode = 0; mode < 3; mode++) {
        vnic_key_t key = mode == 0 ? KEY_HLAND : KEY_LAND;
        volatile uint64_t *mine = mode == 0 ? hland : land;
        uint32_t flags = mode == 2 ? VNIC_F_NOTIFY : VNIC_F_TAIL_FLAG;
        long warm = iters / 10 + 1, total = iters + warm;
        uint64_t t0 = 0;
        for (long i = 1; i <= total; i++) {
            if (i == warm + 1)
                t0 = base_time_ns();
            uint64_t val = (uint64_t)i | ((uint64_t)mode << 56);
            if (t.rank == 0) {
                put_tail(v, peer, &val, key, 0, flags, val);
                if (mode == 2)
                    wait_word(v, &notified, val, 1);
                else
                    wait_word(v, mine, val, mode != 0 || udp);
            } else {
                if (mode == 2)
                    wait_word(v, &notified, val, 1);
                else
                    wait_word(v, mine, val, mode != 0 || udp);
                put_tail(v, peer, &val, key, 0, flags, val);
            }
        }
        double us = (double)(base_time_ns() - t0) / 1e3 / (double)iters / 2;
        if (t.rank == 0)
            printf("  latency 8 B one-way, %-15s %8.3f us\n", names[mode], us);
        /* Cleared before the barrier, not after: the peer's first notification of the
         * next mode may arrive while this rank still progresses inside it. */
        notified = 0;
        vt_barrier(&t);
    }

    /* bandwidth: rank 0 streams, rank 1 acks each batch */
    static const size_t bw_sizes[] = {65536, 1 << 20, 4 << 20};
    for (int kind = 0; kind < 2; kind++) {
        for (size_t si = 0; si < 3; si++) {
            size_t sz = bw_sizes[si];
            long reps = BASE_MAX(2L, (long)((iters / 100 + 2) * (1 << 20) / (long)sz));
            if (iters < 1000)
                reps = 2;
            vt_fill(bsrc, sz, 0, 1, sz);
            vt_barrier(&t);
            uint64_t t0 = base_time_ns();
            for (long r = 0; r < reps; r++) {
                if (t.rank == 0) {
                    vnic_op_t op = {
                        .opcode = VNIC_OP_PUT, .peer = 1, .flags = VNIC_F_RCNTR, .rcntr = 6};
                    op.local.kind = VNIC_DESC_CONTIG;
                    op.local.u.contig.addr = bsrc;
                    op.local.u.contig.len = sz;
                    op.remote.key = kind == 0 ? 4 : 5;
                    op.remote.kind = VNIC_DESC_CONTIG;
                    CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
                    CHECK_RC(vnic_cntr_wait(v, bwc, (uint64_t)r + 1, -1), FMPL_SUCCESS);
                } else {
                    CHECK_RC(vnic_cntr_wait(v, bwc, (uint64_t)r + 1, -1), FMPL_SUCCESS);
                    CHECK_RC(vnic_put(v, 0, NULL, 0, 4, 0), FMPL_SUCCESS);
                    vnic_op_t ack = {
                        .opcode = VNIC_OP_PUT, .peer = 0, .flags = VNIC_F_RCNTR, .rcntr = 6};
                    ack.local.kind = VNIC_DESC_CONTIG;
                    ack.remote.key = 4;
                    ack.remote.kind = VNIC_DESC_CONTIG;
                    CHECK_RC(vnic_post(v, &ack), FMPL_SUCCESS);
                }
            }
            double secs = (double)(base_time_ns() - t0) * 1e-9;
            if (t.rank == 1)
                CHECK(vt_check(kind == 0 ? bbuf : hb, sz, 0, 1, sz) == SIZE_MAX);
            if (t.rank == 0)
                printf("  bandwidth %-8s %8zu B: %7.2f GB/s (put + ack, %ld reps)\n",
                       kind == 0 ? "private" : "heap", sz, (double)sz * (double)reps / secs / 1e9,
                       reps);
            vt_barrier(&t);
            vnic_cntr_close(v, bwc);
            CHECK_RC(vnic_cntr_open(v, 6, &bwc), FMPL_SUCCESS);
            vt_barrier(&t);
        }
    }
    CHECK_RC(vnic_cntr_close(v, bwc), FMPL_SUCCESS);
    vt_fini(&t);
    free(land);
    free(bbuf);
    free(bsrc);
    return 0;
}
