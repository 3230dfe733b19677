/* vnic_trigger.c — triggered operations (vnic_post_triggered, vnic_trig_cancel):
 *   A. nothing moves below the threshold, everything at it (data and both counters);
 *   B. the target runs a triggered put while its owner sleeps outside the library: the data
 *      lands and the owner's lcntr has moved before the owner makes another vnic call;
 *   C. a chain (each rank forwards what arrives to the next) passes ranks that sleep;
 *   D. argument errors, capacity, cancel, a counter closed with entries armed, and an error
 *      met at execution (a refused key) counted in the lcntr's errors.
 * Run with a long FMPL_SLEEP_US, B also checks that the counter's move wakes the target that
 * sleeps in its wait (the owner's watch). argv[1] "udp": FMPL_TRANSPORT=udp, no rank runs another's
 * entries, so B and C check the data only, not who moved it when. */
#include <time.h>

#include "vnic_common.h"

#define KEY_DST 2u   /* each rank's landing buffer (private or heap) */
#define KEY_CHAIN 3u /* each rank's chain buffer */
#define KEY_BELL                                                                                   \
    4u               /* 8 heap bytes of each rank: a zero-byte put there with RCNTR moves          \
                      * the counter directly (a put carried in inbox cells moves it when the       \
                      * target next progresses) */
#define CNTR_IN 6u   /* data arrivals (RCNTR of the puts) */
#define CNTR_TRIG 7u /* the trigger of parts A and B */
#define CNTR_DONE 8u /* local completions (lcntr) */
#define CNTR_LINK 9u /* chain arrivals: also the trigger of the forward */
#define LEN 20000    /* > inline_max: a CMA or heap copy */
#define SLEEP_MS 400
#define QUICK_MS 200 /* a run by a waiting rank finishes well before SLEEP_MS */

static uint64_t now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000 + (uint64_t)ts.tv_nsec / 1000000;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000};
    while (nanosleep(&ts, &ts))
        ;
}

static unsigned char pattern(int rank, int part, size_t i)
{
    return (unsigned char)(rank * 31 + part * 7 + (int)(i % 251));
}

static void fill(unsigned char *b, int rank, int part)
{
    for (size_t i = 0; i < LEN; i++)
        b[i] = pattern(rank, part, i);
}

static int holds(const unsigned char *b, int rank, int part)
{
    for (size_t i = 0; i < LEN; i++)
        if (b[i] != pattern(rank, part, i))
            return 0;
    return 1;
}

static vnic_op_t put_op(int peer, void *src, size_t len, vnic_key_t key, uint32_t rcntr,
                        vnic_cntr_t *lcntr)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = peer, .lcntr = lcntr};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = src;
    op.local.u.contig.len = len;
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    if (rcntr != VNIC_CNTR_ANY) {
        op.flags = VNIC_F_RCNTR;
        op.rcntr = rcntr;
    }
    return op;
}

/* Shared state of the parts. */
typedef struct ctx {
    vt_t t;
    int udp;    /* no peer runs anything: check data only */
    int direct; /* a peer's put lands without this rank's CPU (CMA, or a heap buffer) */
    vnic_cntr_t *in, *trig, *done, *link;
    unsigned char *src, *dst, *chain;
} ctx_t;

/* A: every rank arms a put to the next rank at threshold 2 of its trigger counter. */
static void part_threshold(ctx_t *c)
{
    vt_t *t = &c->t;
    int next = (t->rank + 1) % t->size, prev = (t->rank + t->size - 1) % t->size;
    fill(c->src, t->rank, 1);
    memset(c->dst, 0, LEN);
    vt_barrier(t);
    vnic_op_t op = put_op(next, c->src, LEN, KEY_DST, CNTR_IN, c->done);
    CHECK_RC(vnic_post_triggered(t->v, &op, c->trig, 2), FMPL_SUCCESS);
    for (int i = 0; i < 1000; i++)
        vnic_progress(t->v);
    vnic_cntr_add(c->trig, 1);
    vt_barrier(t); /* every rank progressed with its counter at 1 */
    CHECK(vnic_cntr_read(c->done) == 0);
    CHECK(vnic_cntr_read(c->in) == 0);
    for (size_t i = 0; i < LEN; i++)
        CHECK(c->dst[i] == 0);
    vt_barrier(t);
    vnic_cntr_add(c->trig, 1);
    CHECK_RC(vnic_cntr_wait(t->v, c->done, 1, 10000000000ll), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_wait(t->v, c->in, 1, 10000000000ll), FMPL_SUCCESS);
    CHECK(holds(c->dst, prev, 1));
    CHECK(vnic_cntr_errors(c->done) == 0);
    vt_barrier(t);
    CHECK(vnic_cntr_read(c->done) == 1 && vnic_cntr_read(c->in) == 1);
}

/* B: rank 0 arms a put to rank 1 and sleeps; rank size-1 moves rank 0's trigger counter
 * (a zero-byte put with RCNTR); rank 1 waits and runs it. src: rank 0's source buffer. */
static void part_owner_away(ctx_t *c, unsigned char *src, int part)
{
    vt_t *t = &c->t;
    fill(src, t->rank, part);
    memset(c->dst, 0, LEN);
    uint64_t done = vnic_cntr_read(c->done) + 1, in = vnic_cntr_read(c->in) + 1;
    if (t->rank == 0) {
        vnic_op_t op = put_op(1, src, LEN, KEY_DST, CNTR_IN, c->done);
        CHECK_RC(vnic_post_triggered(t->v, &op, c->trig, vnic_cntr_read(c->trig) + 1),
                 FMPL_SUCCESS);
    }
    vt_barrier(t);
    if (t->rank == t->size - 1) {
        if (t->rank != 1)
            sleep_ms(50); /* rank 1 sleeps in its wait: the move must wake it */
        vnic_op_t op = put_op(0, NULL, 0, KEY_BELL, CNTR_TRIG, NULL);
        CHECK_RC(vnic_post(t->v, &op), FMPL_SUCCESS);
        if (t->rank != 1)
            sleep_ms(SLEEP_MS - 100); /* (its next barrier's puts would wake rank 1 too) */
    }
    int direct = !c->udp && (c->direct || vnic_mem_in_heap(t->v, src, LEN));
    if (t->rank == 0) {
        sleep_ms(SLEEP_MS); /* outside the library */
        if (direct)         /* rank 1 ran it: our lcntr moved without us */
            CHECK(vnic_cntr_read(c->done) == done);
        CHECK_RC(vnic_cntr_wait(t->v, c->done, done, 10000000000ll), FMPL_SUCCESS);
    } else if (t->rank == 1) {
        uint64_t t0 = now_ms();
        CHECK_RC(vnic_cntr_wait(t->v, c->in, in, 10000000000ll), FMPL_SUCCESS);
        uint64_t ms = now_ms() - t0;
        if (direct && ms >= QUICK_MS)
            fprintf(stderr, "rank 1: the triggered put took %llu ms (owner asleep %d ms)\n",
                    (unsigned long long)ms, SLEEP_MS);
        CHECK(!direct || ms < QUICK_MS);
        CHECK(holds(c->dst, 0, part));
    }
    vt_barrier(t);
}

/* C: rank 0 puts its chain buffer to rank 1; every rank i in 1..size-2 forwards what
 * arrives (its link counter, the put's RCNTR, is the trigger) to i + 1. Odd ranks sleep
 * right after arming: no two neighbours sleep, so every edge has a rank in the library. */
static void part_chain(ctx_t *c)
{
    vt_t *t = &c->t;
    int r = t->rank, last = t->size - 1;
    memset(c->chain, 0, LEN);
    if (r == 0)
        fill(c->chain, 0, 3);
    if (r > 0 && r < last) {
        vnic_op_t op = put_op(r + 1, c->chain, LEN, KEY_CHAIN, CNTR_LINK, c->done);
        CHECK_RC(vnic_post_triggered(t->v, &op, c->link, 1), FMPL_SUCCESS);
    }
    uint64_t done0 = vnic_cntr_read(c->done);
    vt_barrier(t);
    uint64_t t0 = now_ms();
    if (r == 0) {
        vnic_op_t op = put_op(1, c->chain, LEN, KEY_CHAIN, CNTR_LINK, c->done);
        CHECK_RC(vnic_post(t->v, &op), FMPL_SUCCESS);
        CHECK_RC(vnic_cntr_wait(t->v, c->done, done0 + 1, 10000000000ll), FMPL_SUCCESS);
    } else if (r % 2) {
        sleep_ms(SLEEP_MS);
        if (!c->udp && c->direct) { /* arrived, and forwarded by the next rank */
            CHECK(vnic_cntr_read(c->link) == 1);
            CHECK(r == last || vnic_cntr_read(c->done) == done0 + 1);
        }
    } else {
        CHECK_RC(vnic_cntr_wait(t->v, c->link, 1, 10000000000ll), FMPL_SUCCESS);
        if (r < last)
            CHECK_RC(vnic_cntr_wait(t->v, c->done, done0 + 1, 10000000000ll), FMPL_SUCCESS);
        uint64_t ms = now_ms() - t0;
        if (!c->udp && c->direct && ms >= QUICK_MS)
            fprintf(stderr, "rank %d: the chain took %llu ms past sleeping ranks\n", r,
                    (unsigned long long)ms);
        CHECK(c->udp || !c->direct || ms < QUICK_MS);
    }
    CHECK_RC(vnic_cntr_wait(t->v, c->link, r ? 1 : 0, 10000000000ll), FMPL_SUCCESS);
    if (r < last && r > 0)
        CHECK_RC(vnic_cntr_wait(t->v, c->done, done0 + 1, 10000000000ll), FMPL_SUCCESS);
    CHECK(holds(c->chain, 0, 3));
    vt_barrier(t);
}

/* D: errors, capacity, cancel. */
static void part_errors(ctx_t *c)
{
    vt_t *t = &c->t;
    int next = (t->rank + 1) % t->size;
    vnic_cntr_t *x, *err;
    CHECK_RC(vnic_cntr_open(t->v, VNIC_CNTR_ANY, &x), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(t->v, VNIC_CNTR_ANY, &err), FMPL_SUCCESS);
    vnic_op_t op = put_op(next, c->src, 64, KEY_DST, VNIC_CNTR_ANY, NULL);
    CHECK_RC(vnic_post_triggered(t->v, &op, NULL, 1), FMPL_ERR_ARG);
    CHECK_RC(vnic_post_triggered(NULL, &op, x, 1), FMPL_ERR_ARG);
    CHECK_RC(vnic_post_triggered(t->v, NULL, x, 1), FMPL_ERR_ARG);
    vnic_op_t bad = op;
    bad.peer = t->size;
    CHECK_RC(vnic_post_triggered(t->v, &bad, x, 1), FMPL_ERR_RANK);
    bad = op;
    bad.flags = 0x100;
    CHECK_RC(vnic_post_triggered(t->v, &bad, x, 1), FMPL_ERR_ARG);
    bad = op;
    bad.opcode = VNIC_OP_GET;
    bad.flags = VNIC_F_RCNTR; /* target counters report arrivals: puts only */
    CHECK_RC(vnic_post_triggered(t->v, &bad, x, 1), FMPL_ERR_ARG);
    CHECK_RC(vnic_trig_cancel(t->v, NULL), FMPL_ERR_ARG);

    /* capacity, then cancel: nothing of it ever runs */
    for (int i = 0; i < VNIC_TRIG_MAX; i++)
        CHECK_RC(vnic_post_triggered(t->v, &op, x, 5), FMPL_SUCCESS);
    CHECK_RC(vnic_post_triggered(t->v, &op, err, 1), FMPL_ERR_NOMEM);
    CHECK_RC(vnic_trig_cancel(t->v, x), VNIC_TRIG_MAX);
    CHECK_RC(vnic_trig_cancel(t->v, x), 0);
    vnic_cntr_add(x, 5);
    /* a counter closed with entries armed drops them: the room is back */
    for (int i = 0; i < VNIC_TRIG_MAX; i++)
        CHECK_RC(vnic_post_triggered(t->v, &op, x, 1000), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t->v, x), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(t->v, VNIC_CNTR_ANY, &x), FMPL_SUCCESS);
    CHECK_RC(vnic_post_triggered(t->v, &op, x, 1), FMPL_SUCCESS);
    CHECK_RC(vnic_trig_cancel(t->v, x), 1);

    /* cancelled puts wrote nothing */
    memset(c->dst, 0, LEN);
    vt_barrier(t);
    for (size_t i = 0; i < LEN; i++)
        CHECK(c->dst[i] == 0);
    CHECK(vnic_cntr_read(c->in) == 0);

    /* a refused key, met when the put runs: the lcntr moves and counts the error */
    vnic_op_t refused = put_op(next, c->src, LEN, 9u, CNTR_IN, err);
    CHECK_RC(vnic_post_triggered(t->v, &refused, x, 1), FMPL_SUCCESS);
    vnic_cntr_add(x, 1);
    CHECK_RC(vnic_cntr_wait(t->v, err, 1, 10000000000ll), FMPL_SUCCESS);
    if (!c->udp) /* (over udp a refused put is reported by its target only) */
        CHECK(vnic_cntr_errors(err) == 1);
    vt_barrier(t);
    if (!c->udp)
        CHECK(vnic_cntr_read(c->in) == 0);
    CHECK_RC(vnic_cntr_close(t->v, x), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t->v, err), FMPL_SUCCESS);
}

int main(int argc, char **argv)
{
    ctx_t c;
    memset(&c, 0, sizeof c);
    c.udp = argc > 1 && strcmp(argv[1], "udp") == 0;
    vt_t *t = &c.t;
    vt_init(t);
    c.direct = vnic_info(t->v)->cma;
    CHECK_RC(vnic_cntr_open(t->v, CNTR_IN, &c.in), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(t->v, CNTR_TRIG, &c.trig), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(t->v, CNTR_DONE, &c.done), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_open(t->v, CNTR_LINK, &c.link), FMPL_SUCCESS);
    c.src = malloc(LEN);
    c.dst = malloc(LEN);
    c.chain = c.direct ? malloc(LEN) : vnic_mem_alloc(t->v, LEN);
    unsigned char *hsrc = vnic_mem_alloc(t->v, LEN), *bell = vnic_mem_alloc(t->v, 8);
    CHECK(c.src && c.dst && c.chain && hsrc && bell);
    CHECK_RC(vnic_mr_reg_key(t->v, KEY_BELL, bell, 8, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t->v, KEY_DST, c.dst, LEN, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t->v, KEY_CHAIN, c.chain, LEN, VNIC_ACC_ALL), FMPL_SUCCESS);
    vt_barrier(t);

    part_threshold(&c);
    if (t->size >= 2) {
        part_owner_away(&c, c.src, 2); /* private source: the target reads it by CMA */
        part_owner_away(&c, hsrc, 4);  /* heap source: by memcpy, CMA or not */
    }
    if (t->size >= 3)
        part_chain(&c);
    /* every arrival counter back to 0 for part D */
    vt_barrier(t);
    CHECK_RC(vnic_cntr_close(t->v, c.in), FMPL_SUCCESS);
    vt_barrier(t);
    CHECK_RC(vnic_cntr_open(t->v, CNTR_IN, &c.in), FMPL_SUCCESS);
    vt_barrier(t);
    part_errors(&c);

    vt_barrier(t);
    CHECK_RC(vnic_mr_dereg(t->v, KEY_DST), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(t->v, KEY_CHAIN), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_dereg(t->v, KEY_BELL), FMPL_SUCCESS);
    vnic_mem_free(t->v, bell);
    free(c.src);
    free(c.dst);
    if (c.direct)
        free(c.chain);
    else
        vnic_mem_free(t->v, c.chain);
    vnic_mem_free(t->v, hsrc);
    CHECK_RC(vnic_cntr_close(t->v, c.in), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t->v, c.trig), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t->v, c.done), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t->v, c.link), FMPL_SUCCESS);
    vt_fini(t);
    return 0;
}
