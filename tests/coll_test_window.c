/* coll_test_window.c — group schedules that send each peer many more messages per run
 * than a mailbox edge has cells, so that writers keep waiting for their readers'
 * acknowledgements in the middle of a run: on the shared channels (tiny and small: every
 * member sends every other one a stream, interleaved with the other peers' streams so
 * that a reader often takes a peer's message n + 1 in the sweep that found n not there
 * yet) and on an acknowledged lane (both tiers, a ring). Every message of every run is
 * checked, so a writer that overwrote a cell still unread (an acknowledgement that ran
 * ahead of what its reader had freed) shows as wrong data or as a run that never ends.
 * Every pair of members must be joined by a mailbox edge (2^k apart either way): 2, 3, 4,
 * 5 and 7 members are. */
#include "coll_common.h"

#include "vnic/vnic.h"

enum { RUNS = 40 };

static uint8_t byte_of(int from, int to, int msg, int run, size_t i)
{
    return (uint8_t)(from * 37 + to * 11 + msg * 7 + run * 3 + (int)i * 13 + 1);
}

typedef struct flood {
    coll_sched_t *s;
    int lane;          /* 1: a ring on a lane (cell index 0: from the left, 1: from the right) */
    int msgs;          /* per peer and run */
    size_t len;        /* bytes a message */
    int npeers;        /* peers sent to (and received from) */
    int peer[64];      /* group ranks */
    int cell[64];      /* lane: cell index of my messages at peer i (its reader's view) */
    int rcell[64];     /* lane: cell index my messages from peer i arrive in */
    uint8_t *out, *in; /* [npeers][msgs][len] */
} flood_t;

/* Lays out what a run moves: receives first (message m of every peer before message
 * m + 1 of any), then the sends in the same interleaving. */
static void flood_build(flood_t *f)
{
    size_t per = (size_t)f->msgs * f->len, all = (size_t)f->npeers * per;
    f->out = malloc(all);
    f->in = malloc(all);
    CHECK(f->out && f->in);
    for (int m = 0; m < f->msgs; m++)
        for (int i = 0; i < f->npeers; i++)
            CHECK_RC(coll_sched_recv(f->s, f->in + i * per + (size_t)m * f->len, (int64_t)f->len,
                                     f->lane ? (uintptr_t)f->rcell[i] : 0, f->peer[i]),
                     0);
    for (int m = 0; m < f->msgs; m++)
        for (int i = 0; i < f->npeers; i++)
            CHECK_RC(coll_sched_send(f->s, f->out + i * per + (size_t)m * f->len, (int64_t)f->len,
                                     f->lane ? (uintptr_t)f->cell[i] : 0, f->peer[i]),
                     0);
}

typedef struct run_wait {
    coll_sched_t *s;
    int err;
} run_wait_t;

static int run_ready(void *arg)
{
    run_wait_t *w = arg;
    return coll_sched_advance(w->s, &w->err);
}

/* One blocking run of f, then every message checked. */
static void flood_run(coll_job_t *j, flood_t *f, int run)
{
    size_t per = (size_t)f->msgs * f->len;
    for (int i = 0; i < f->npeers; i++)
        for (int m = 0; m < f->msgs; m++)
            for (size_t b = 0; b < f->len; b++)
                f->out[i * per + (size_t)m * f->len + b] = byte_of(j->rank, f->peer[i], m, run, b);
    memset(f->in, 0, (size_t)f->npeers * per);
    CHECK_RC(coll_sched_start(f->s, 0, 0, NULL, NULL), 0);
    run_wait_t w = {f->s, 0};
    CHECK_RC(vnic_wait(j->v, run_ready, &w, -1), FMPL_SUCCESS);
    CHECK_RC(w.err, FMPL_SUCCESS);
    for (int i = 0; i < f->npeers; i++)
        for (int m = 0; m < f->msgs; m++)
            for (size_t b = 0; b < f->len; b++)
                if (f->in[i * per + (size_t)m * f->len + b] !=
                    byte_of(f->peer[i], j->rank, m, run, b)) {
                    fprintf(
                        stderr,
                        "rank %d run %d: message %d of %d from %d (%zu bytes), byte %zu wrong\n",
                        j->rank, run, m, f->msgs, f->peer[i], f->len, b);
                    exit(1);
                }
}

static void flood_free(flood_t *f)
{
    coll_sched_free(f->s);
    free(f->out);
    free(f->in);
}

/* Every other member, on the shared channels: msgs messages of len bytes to each. */
static void all_peers(coll_job_t *j, size_t len, int msgs)
{
    flood_t f = {.s = coll_group_sched(j->world), .msgs = msgs, .len = len};
    CHECK(f.s);
    for (int d = 1; d < j->size; d++)
        f.peer[f.npeers++] = (j->rank + d) % j->size;
    flood_build(&f);
    for (int run = 0; run < RUNS; run++)
        flood_run(j, &f, run);
    flood_free(&f);
}

static void and_u64(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    uint64_t *a = inout;
    const uint64_t *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] &= b[i];
}
static const coll_reduce_op_t op_and = {and_u64, NULL, sizeof(uint64_t), 1};

/* A ring on a lane: msgs messages of len bytes to each neighbour. */
static void lane_ring(coll_job_t *j, size_t len, int msgs)
{
    flood_t f = {.s = coll_lane_sched(j->world, 0), .lane = 1, .msgs = msgs, .len = len};
    CHECK(f.s);
    int p = j->size;
    f.npeers = 2;
    f.peer[0] = (j->rank + 1) % p; /* I am its left: its cell 0 */
    f.cell[0] = 0;
    f.rcell[0] = 1; /* what it sends me, its left, arrives in my cell 1 (from the right) */
    f.peer[1] = (j->rank + p - 1) % p;
    f.cell[1] = 1;
    f.rcell[1] = 0;
    flood_build(&f);
    uint64_t offered = coll_lanes_offer(j->world, 0, 64), agreed = offered;
    CHECK_RC(coll_allreduce(j->world, &agreed, 1, &op_and, NULL), FMPL_SUCCESS);
    CHECK(agreed != 0);
    CHECK(coll_lanes_settle(j->world, offered, agreed, f.s) >= 0);
    for (int run = 0; run < RUNS; run++)
        flood_run(j, &f, run);
    flood_free(&f);
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    if (j.size > 1) {
        int depth = (int)coll_group_depth(j.world);
        size_t small = coll_group_small(j.world);
        all_peers(&j, 200, 3 * 64); /* tiny channels: 64 cells */
        all_peers(&j, small, 3 * depth);
        all_peers(&j, small / 2 + 1, 2 * depth + 1);
        size_t room = coll_lane_cell_room(j.world);
        if (room) {
            lane_ring(&j, room, 3 * 64);         /* small lane cells: 64 */
            lane_ring(&j, room + 1, 3 * 16 + 1); /* big ones: 16 (or 4) */
        }
    }
    CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
    coll_job_end(&j);
    return 0;
}
