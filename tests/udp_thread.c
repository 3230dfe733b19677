/* udp_thread.c — the progress thread of the udp transport (FMPL_UDP_THREAD): a target
 * that computes (makes no library call) still serves its peers' puts, gets and atomics,
 * but never runs a handler outside the application's calls, and stream order holds
 * between what the thread executes and what the application executes.
 *
 * argv[1] "on": the thread runs (default). Rank 0 computes for COMPUTE_S without a library
 *   call; the others, meanwhile, put a pattern into rank 0, fetch-and-add a word there and
 *   get a pattern from it (both blocking: they need rank 0's answer), then put-with-notify
 *   and a plain put behind it. Rank 0 must see the puts and the sum during its computation,
 *   not the put behind the notify (it waits with it for the application); the others'
 *   blocking operations finish long before rank 0 computes no more. Then rounds where rank 0
 *   alternates computing a few periods and progressing while the others stream puts,
 *   notifies and atomics: every notification is handled once, on the application's
 *   thread, in stream order (the put before it visible, the one after it not yet), and
 *   the sums add up.
 * argv[1] "off" (FMPL_UDP_THREAD=0): the same first part, expecting the opposite: nothing
 *   arrives during the computation and the others' blocking operations wait for its end. */
#include <pthread.h>
#include <time.h>

#include "vnic_common.h"

#define KEY_DATA 2u  /* rank 0: SLICE bytes per source */
#define KEY_WORD 3u  /* rank 0: the fetch-and-add word */
#define KEY_SRC 4u   /* rank 0: the pattern others get */
#define KEY_SLOTS 5u /* rank 0: per source: [0] before-notify word, [1] after-notify word */
#define KEY_SUB 6u   /* rank 1: arrivals of ranks 1.. at the barrier without rank 0 */
#define CHAN 3u
#define SLICE 16384u
#define GETLEN 8192u
#define COMPUTE_S 3.0
#define ROUNDS 200

static struct {
    int rank, size;
    pthread_t main_thread;
    volatile int computing;
    uint64_t *slots; /* [2 * size] */
    uint64_t *handled;
    uint64_t wrong; /* handlers that saw the wrong state */
} g;

static double now_s(void)
{
    return (double)base_time_ns() * 1e-9;
}

/* A notification from src with imm = k: the put just before it (slot 0 = k) is visible,
 * the one just after it (slot 1 = k) is not yet; runs on the application's thread only. */
static void on_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    uint64_t k = n->imm;
    uint64_t before = __atomic_load_n(&g.slots[2 * n->src], __ATOMIC_ACQUIRE);
    uint64_t after = __atomic_load_n(&g.slots[2 * n->src + 1], __ATOMIC_ACQUIRE);
    if (!pthread_equal(pthread_self(), g.main_thread) || g.computing || before != k ||
        after != k - 1 || k != g.handled[n->src] + 1) {
        fprintf(stderr,
                "udp_thread: notify %llu from %d: before %llu after %llu handled %llu "
                "computing %d\n",
                (unsigned long long)k, n->src, (unsigned long long)before,
                (unsigned long long)after, (unsigned long long)g.handled[n->src], g.computing);
        g.wrong++;
    }
    g.handled[n->src] = k;
}

static int all_handled(void *arg)
{
    uint64_t k = *(uint64_t *)arg;
    for (int r = 1; r < g.size; r++)
        if (g.handled[r] < k)
            return 0;
    return 1;
}

static void put_word(vnic_t *v, uint64_t *src, uint32_t key, uint64_t off, uint32_t flags,
                     uint64_t imm)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = 0, .flags = flags, .chan = CHAN, .imm = imm};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = src;
    op.local.u.contig.len = 8;
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
}

/* Blocking fetch-and-add of 1 on word 0 of region key at peer; returns the old value. */
static uint64_t fadd_one(vnic_t *v, int peer, uint32_t key)
{
    uint64_t old = 0;
    vnic_op_t op = {.opcode = VNIC_OP_FADD, .peer = peer, .operand = 1, .result = &old};
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
    return old;
}

/* The source's k-th notify: slot 0 = k, notify k, slot 1 = k (blocking puts: the words
 * must stay valid; over udp a put is locally complete once copied). */
static void notify_round(vnic_t *v, int rank, uint64_t k)
{
    uint64_t w = k;
    put_word(v, &w, KEY_SLOTS, 16 * (uint64_t)rank, 0, 0);
    put_word(v, &w, KEY_SLOTS, 16 * (uint64_t)rank, VNIC_F_NOTIFY, k);
    put_word(v, &w, KEY_SLOTS, 16 * (uint64_t)rank + 8, 0, 0);
}

/* A barrier of ranks 1..size-1 while rank 0 computes (its thread must not be needed):
 * each adds one to a word at rank 1 and waits until all have. Requests needing a handler
 * wait with everything behind them in rank 0's receive buffer, so the notifications go
 * only once every rank's blocking operations are done. */
static void barrier_without_0(vnic_t *v, uint64_t *sub)
{
    uint64_t want = (uint64_t)g.size - 1;
    if (g.rank == 1) {
        __atomic_fetch_add(sub, 1, __ATOMIC_ACQ_REL);
        while (__atomic_load_n(sub, __ATOMIC_ACQUIRE) < want)
            vnic_progress(v);
        return;
    }
    uint64_t now = fadd_one(v, 1, KEY_SUB) + 1;
    while (now < want)
        CHECK_RC(vnic_get(v, 1, &now, 8, KEY_SUB, 0), FMPL_SUCCESS);
}

static int slices_arrived(const unsigned char *data)
{
    for (int r = 1; r < g.size; r++)
        for (size_t i = 0; i < SLICE; i++)
            if (data[(size_t)r * SLICE + i] != vt_byte(r, 0, 7, i))
                return 0;
    return 1;
}

int main(int argc, char **argv)
{
    CHECK(argc == 2 && (!strcmp(argv[1], "on") || !strcmp(argv[1], "off")));
    int on = !strcmp(argv[1], "on");
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    CHECK(t.size >= 2);
    g.rank = t.rank;
    g.size = t.size;
    g.main_thread = pthread_self();
    unsigned char *data = calloc((size_t)t.size, SLICE);
    unsigned char *src = malloc(GETLEN);
    uint64_t *word = calloc(1, 8), *sub = calloc(1, 8);
    g.slots = calloc(2 * (size_t)t.size, 8);
    g.handled = calloc((size_t)t.size, 8);
    CHECK(data && src && word && sub && g.slots && g.handled);
    vt_fill(src, GETLEN, 0, 0, 11);
    for (int r = 0; r < t.size; r++)
        g.slots[2 * r + 1] = 0; /* "after" of round 0 */
    CHECK_RC(vnic_mr_reg_key(v, KEY_DATA, data, (size_t)t.size * SLICE, VNIC_ACC_ALL),
             FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_WORD, word, 8, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_SRC, src, GETLEN, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_SLOTS, g.slots, 16 * (size_t)t.size, VNIC_ACC_ALL),
             FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(v, KEY_SUB, sub, 8, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_set_notify_handler(v, CHAN, on_notify, NULL), FMPL_SUCCESS);
    vt_barrier(&t);

    /* Part 1: rank 0 computes. */
    uint64_t k = 1;
    if (t.rank == 0) {
        g.computing = 1;
        double t0 = now_s(), seen_data = -1, seen_sum = -1;
        int after_seen = 0;
        while (now_s() - t0 < COMPUTE_S) {
            if (seen_data < 0 && slices_arrived(data))
                seen_data = now_s() - t0;
            if (seen_sum < 0 && __atomic_load_n(word, __ATOMIC_ACQUIRE) == (uint64_t)t.size - 1)
                seen_sum = now_s() - t0;
            for (int r = 1; r < t.size; r++)
                if (__atomic_load_n(&g.slots[2 * r + 1], __ATOMIC_ACQUIRE) == k)
                    after_seen = 1;
        }
        g.computing = 0;
        CHECK(!after_seen); /* behind a notification: waits for the application */
        if (on) {
            CHECK(seen_data >= 0 && seen_data < COMPUTE_S / 2);
            CHECK(seen_sum >= 0 && seen_sum < COMPUTE_S / 2);
        } else {
            CHECK(seen_data < 0 && seen_sum < 0);
        }
        CHECK_RC(vnic_wait(v, all_handled, &k, -1), FMPL_SUCCESS);
        CHECK(slices_arrived(data));
        CHECK(*word == (uint64_t)t.size - 1);
        printf("udp_thread: %s, %d ranks: puts seen after %.3f s, the sum after %.3f s of a "
               "%.1f s computation\n",
               argv[1], t.size, seen_data, seen_sum, COMPUTE_S);
    } else {
        struct timespec pause = {0, 200 * 1000000L}; /* rank 0 is computing by then */
        nanosleep(&pause, NULL);
        double t0 = now_s();
        unsigned char *mine = malloc(SLICE), *got = malloc(GETLEN);
        CHECK(mine && got);
        vt_fill(mine, SLICE, t.rank, 0, 7);
        CHECK_RC(vnic_put(v, 0, mine, SLICE, KEY_DATA, (uint64_t)t.rank * SLICE), FMPL_SUCCESS);
        CHECK(fadd_one(v, 0, KEY_WORD) < (uint64_t)t.size - 1);
        CHECK_RC(vnic_get(v, 0, got, GETLEN, KEY_SRC, 0), FMPL_SUCCESS);
        double took = now_s() - t0;
        for (size_t i = 0; i < GETLEN; i++)
            CHECK(got[i] == vt_byte(0, 0, 11, i));
        CHECK(on ? took < COMPUTE_S / 2 : took > COMPUTE_S / 2);
        barrier_without_0(v, sub);
        notify_round(v, t.rank, k);
        free(mine);
        free(got);
    }
    vt_barrier(&t);

    /* Part 2 (thread on): rank 0 alternates computing two to four thread periods and
     * progressing; the others stream notify rounds and atomics. */
    if (on) {
        const char *us = getenv("FMPL_UDP_THREAD_US");
        double period = (us ? atof(us) : 1000.0) * 1e-6;
        if (t.rank == 0) {
            uint64_t target = ROUNDS + 1, seed = 12345;
            while (!all_handled(&target)) {
                seed = seed * 6364136223846793005ull + 1442695040888963407ull;
                g.computing = 1;
                double t0 = now_s(), len = period * (2 + (double)(seed >> 62));
                while (now_s() - t0 < len)
                    ;
                g.computing = 0;
                for (int i = 0; i < 20; i++)
                    vnic_progress(v);
            }
            vnic_udp_stats_t st;
            CHECK_RC(vnic_udp_stats(v, &st), FMPL_SUCCESS);
            CHECK(st.thread_calls > 0 && st.thread_events > 0);
            printf("udp_thread: %d rounds: the thread made %llu progress calls, %llu events\n",
                   ROUNDS, (unsigned long long)st.thread_calls,
                   (unsigned long long)st.thread_events);
        } else {
            for (uint64_t r = 2; r <= ROUNDS + 1; r++) {
                if (r % 4 == 0)
                    fadd_one(v, 0, KEY_WORD);
                notify_round(v, t.rank, r);
            }
        }
        vt_barrier(&t);
        if (t.rank == 0)
            CHECK(*word == (uint64_t)(t.size - 1) * (1 + ROUNDS / 4));
    } else if (t.rank == 0) {
        vnic_udp_stats_t st;
        CHECK_RC(vnic_udp_stats(v, &st), FMPL_SUCCESS);
        CHECK(st.thread_calls == 0);
    }
    if (t.rank == 0)
        CHECK(g.wrong == 0);
    CHECK_RC(vnic_mr_dereg(v, KEY_DATA), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_WORD), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_SRC), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_SLOTS), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(v, KEY_SUB), FMPL_SUCCESS);
    vt_fini(&t);
    free(data);
    free(src);
    free(word);
    free(sub);
    free(g.slots);
    free(g.handled);
    return 0;
}
