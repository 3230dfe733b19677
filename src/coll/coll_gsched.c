/* coll_gsched.c — schedules over a group's mailboxes (contract: coll.h, "group
 * schedules"): the transport that carries a schedule's transfers through the group's
 * acknowledged edges (coll_impl.h), and the small-message algorithms of the group's
 * collectives built as schedules.
 *
 * The transport. A transfer of at most COLL_SMALL bytes between group ranks a and
 * b = a + 2^k (mod p) travels on small channel (DOWN, k) of b; between a and b = a - 2^k
 * on (UP, k) of b (smallest such k, DOWN first: both ends compute the same channel); one
 * of at most COLL_TINY_ROOM bytes on the tiny channel of the same edge.
 * Larger ones (up to COLL_SEG) go between neighbours on the big channel. Uses of a
 * channel are numbered when a run starts (reserve), in the order the schedules were
 * started and their transfers added, which MPI's and our collective ordering rules make
 * the same on both ends; so several runs may be in flight on one group at once. A send
 * whose cell still holds the use `depth` before it (not yet acknowledged) is deferred:
 * test puts it once the acknowledgement is in. A receive completes when its cell's flag
 * carries its number: test copies the payload out, clears the flag and acknowledges.
 * Errors are FMPL codes.
 *
 * The all-call transport (coll_group_sched_a), for blocking runs of calls in which no
 * member can finish before every member has entered (barrier, allreduce, allgather):
 * transfers go to the A cells (coll_impl.h), cell index = the transfer's type word, with
 * the parity of the group's A sequence number, which each run advances (begin); no
 * acknowledgements, so one line crosses per message. Safe only when such runs never
 * overlap on a group: blocking ones, and the final barrier of coll_group_free.
 *
 * The fold transport (coll_group_sched_fold, coll_impl.h "fold schedules"): the channel
 * transport, plus transfers that combine a message with this rank's operand in its
 * cell on arrival, and forward a kept cell without copying it (the large reductions of
 * coll_reduce.c; the ring of coll_allgather.c uses its plain transfers). */
#include <stdlib.h>

#include "coll/coll_impl.h"

/* The context of a lane schedule (coll.h "lanes"): freed with the schedule. What a transfer
 * needs is worked out once, when the lane is bound (lane_bind), not at every run. */
typedef struct coll_lane {
    coll_group_t *g;  /* NULL once the group is gone */
    coll_state_t *st; /* the lanes' owner (the process) */
    int lane;         /* -1 until bound */
    unsigned gen;     /* bound: this binding's number (never 0), see lane_start */
    int all_call;
    uint64_t run; /* runs begun since bound: the flag of an all-call run's messages */
    int cells;    /* K + 2 cell indices */
    /* bound: per tier, the bytes from one cell to the next, and the mask taking a
     * message number to its cell (depth - 1; all-call: 1, the parity) */
    size_t stride[2];
    uint64_t mask[2];
    /* acknowledged: a run's messages per (tier, cell index), sent [tier * cells + idx] and
     * received [2 * cells + tier * cells + idx] (counted at the first run: lane_start) */
    uint64_t *nums;
    /* acknowledged: what is freed of my incoming (tier, cell index), COLL_LANE_FREED words
     * at (tier * cells + idx) * COLL_LANE_FREED (coll_freed; cleared when bound) */
    uint64_t *freed;
    uint64_t *sent; /* bound: this lane's row of st->lane_sent ([tier * cells + idx]) */
    /* bound: [tier * cells + idx] slot-relative offset of the flag of cell 0 of (tier,
     * idx), then [2 * cells + tier * cells + idx] that of its ack line */
    size_t off[];
} coll_lane_t;

/* The state of one transfer of a schedule on the mailboxes, kept from run to run: the
 * same for every transport of this file (channels, A cells, lanes, folds). */
typedef struct transfer {
    coll_group_t *g;
    coll_lane_t *ln; /* lane transfers: */
    size_t flag_off; /* slot offset of the cell flag (the peer's or mine) */
    size_t ack_off;  /* slot offset of the ack line (mine, or the writer's) */
    size_t cell0;    /* slot offset of the flag of the transfer's first cell (lanes, channels) */
    unsigned gen;    /* lanes: the binding cell0 was worked out for (ln->gen) */
    char *slot;      /* lane sends: the peer's slot as mapped here, or NULL (coll_put_cell) */
    size_t numi;     /* acknowledged lanes: the transfer's count in ln->nums, and its */
    uint64_t lane_j; /* place among those transfers of a run (lane_start) */
    size_t stride;   /* channels: bytes from one cell to the next */
    uint64_t depth;  /* channels: cells, and the acknowledgement interval */
    uint64_t ack_every;
    uint64_t *freed; /* receives: the record of the edge's freed messages (coll_freed) */
    char *buf;
    size_t len;
    uint64_t mark_len; /* the length its flag's mark gives (coll_flag): len, or a stream's */
    uint64_t stream;   /* channel transfers: a stream's total (COLL_XFER_STREAM), or 0 */
    uint64_t seq;
    uint64_t poison; /* sends: COLL_SEQ_POISON when the run had failed before (coll_flag) */
    int dir, ch, peer, send, pending; /* lanes: dir is the tier, ch the cell index */
    unsigned idle;                    /* channel receives: tests that found nothing */
    int routed;                       /* channel transfers: dir and ch are worked out */
    int read_once;                    /* sends: read once by the reader (coll_put_segment) */
    coll_fold_t *fold;                /* fold schedules: the transfer's fold, or NULL */
} transfer_t;

/* Channel carrying len bytes from group rank `from` to `to` (big: on the big channel
 * whatever len): 0 and (*dir, *ch), or -1 (no channel joins them, or len does not fit). */
static int chan_route(const coll_group_t *g, int from, int to, size_t len, int big, int *dir,
                      int *ch)
{
    const coll_state_t *st = g->st;
    int p = g->size;
    if (len > st->small || big) {
        if (len > st->seg)
            return -1;
        *ch = coll_big(st);
        *dir = coll_mod(from + 1, p) == to ? COLL_DIR_DOWN : COLL_DIR_UP;
        return coll_mod(*dir == COLL_DIR_DOWN ? from + 1 : from - 1, p) == to ? 0 : -1;
    }
    for (int dd = 0; dd < COLL_NDIR; dd++)
        for (int kk = 0; kk < g->rounds; kk++)
            if (coll_mod(dd == COLL_DIR_DOWN ? from + (1 << kk) : from - (1 << kk), p) == to) {
                *dir = dd;
                *ch = len <= COLL_TINY_ROOM ? coll_tiny(st, kk) : kk;
                return 0;
            }
    return -1;
}

/* The channel is worked out at the transfer's first run and kept in its request state
 * (x->routed): a transfer's peer and length never change. */
static uint64_t chan_reserve(void *ctx, int send, int peer, int64_t count, uintptr_t type,
                             void *req)
{
    coll_group_t *g = ctx;
    transfer_t *x = req;
    if (BASE_UNLIKELY(!x->routed)) {
        if (peer < 0 || peer >= g->size || count < 0 ||
            chan_route(g, send ? g->rank : peer, send ? peer : g->rank, (size_t)count,
                       type != COLL_FOLD && (type & COLL_XFER_BIG), &x->dir, &x->ch))
            return 0;
        x->stream = type != COLL_FOLD && (type & COLL_XFER_STREAM)
                        ? (uint64_t)(type & (COLL_XFER_STREAM - 1))
                        : 0;
        const coll_state_t *st = g->st;
        x->cell0 = coll_chan_flag_off(st, x->dir, x->ch, 1);
        x->stride = coll_chan_stride(st, x->ch);
        x->depth = (uint64_t)coll_chan_depth(st, x->ch);
        x->ack_every = (uint64_t)coll_chan_ack_every(st, x->ch);
        x->ack_off = coll_ack_off(st, x->dir, x->ch);
        x->freed = send ? NULL : coll_chan_freed(g, x->dir, x->ch);
        x->routed = 1;
    }
    return send ? ++g->sent[x->dir][x->ch] : ++g->rcvd[x->dir][x->ch];
}

/* The common fields of a transfer's state (not yet pending). */
static void transfer_fill(transfer_t *x, coll_group_t *g, void *buf, int64_t count, int peer,
                          uint64_t seq, int send)
{
    x->g = g;
    x->buf = buf;
    x->len = (size_t)count;
    x->mark_len = x->stream ? x->stream : (uint64_t)count;
    x->seq = seq;
    x->peer = peer;
    x->send = send;
    x->pending = 0;
    x->idle = 0;
}

/* Gives up my incoming channel (dir, ch) from group rank writer: its uses are out of step
 * (the two ends reserved different counts of messages on it) and cannot be put back. Its
 * receives fail at once from now on (chan_test), and the writer's sends too, once they read
 * COLL_ACK_BROKEN in its acknowledgement word; so no later collective waits on it or takes
 * a stale message from it, and poison carries the failure on to the ranks below. */
static void chan_give_up(coll_group_t *g, int dir, int ch, int writer)
{
    if (g->broken[dir][ch])
        return;
    g->broken[dir][ch] = 1;
    coll_put_word(g, writer, coll_ack_off(g->st, dir, ch), COLL_ACK_BROKEN);
}

/* The verdict on a received flag f (coll_flag_check): *err. A stream's first segment that
 * says the sender's total differs (not merely poison from a failure above) gives the
 * channel up: the counts of segments may differ. */
static void transfer_verdict(transfer_t *x, uint64_t f, int *err)
{
    *err = coll_flag_check(f, x->mark_len);
    if (BASE_UNLIKELY(*err) && x->stream && coll_flag_check(f & ~COLL_SEQ_POISON, x->mark_len))
        chan_give_up(x->g, x->dir, x->ch, x->peer);
}

/* Receives x from the cell whose flag is `flag` when it carries x's number: copies the
 * payload out and frees the cell. 1 when done (*err: the verdict), 0 when not there yet. */
static int transfer_take(transfer_t *x, uint64_t *flag, int *err)
{
    uint64_t f = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    if ((f & COLL_FLAG_SEQ) < x->seq)
        return 0;
    transfer_verdict(x, f, err);
    if (x->len)
        coll_copy(x->buf, coll_cell_data(flag, x->len), x->len);
    coll_cell_clear(flag);
    return 1;
}

/* Message n of my incoming channel (dir, ch), written by group rank writer, is consumed
 * and its cell cleared: records it, and acknowledges what is then due (coll_freed). */
static int chan_freed(coll_group_t *g, int dir, int ch, int writer, uint64_t n)
{
    const coll_state_t *st = g->st;
    uint64_t ack = coll_freed(coll_chan_freed(g, dir, ch), (uint64_t)coll_chan_depth(st, ch),
                              (uint64_t)coll_chan_ack_every(st, ch), n);
    return ack ? coll_put_word(g, writer, coll_ack_off(st, dir, ch), ack) : FMPL_SUCCESS;
}

static int chan_start(void *ctx, void *buf, int64_t count, int peer, uint64_t seq, void *req,
                      int send)
{
    coll_group_t *g = ctx;
    transfer_t *x = req;
    x->poison = seq & COLL_SEQ_POISON;
    seq &= ~COLL_SEQ_POISON;
    transfer_fill(x, g, buf, count, peer, seq, send);
    if (!seq)                 /* (chan_reserve routed it otherwise) */
        return FMPL_ERR_RANK; /* no channel carries it: the builder's mistake */
    x->flag_off = x->cell0 + (size_t)((seq - 1) % x->depth) * x->stride;
    x->pending = 1;
    return FMPL_SUCCESS;
}

/* Every how many empty tests a channel receive looks at the sender's other channels. */
#define CHAN_ELSEWHERE_EVERY 1024

/* Whether receive x waits in vain: its sender put a message this rank has not reserved
 * on another channel to this rank (tiny, small or big, as chan_route routes other lengths),
 * settled (coll_impl.h: everything it sent before is visible), and x's own message is
 * still not there. Then the sender took the other channel for this collective: the ranks
 * disagree on its size. Looked at only after CHAN_ELSEWHERE_EVERY empty tests. 0, or 1 and
 * the other channel (*odir, *och), the message's number there (*on) and its flag (*of). */
static int chan_elsewhere(const transfer_t *x, const uint64_t *own, int *odir, int *och,
                          uint64_t *on, uint64_t *of)
{
    const coll_group_t *g = x->g;
    const coll_state_t *st = g->st;
    const size_t lens[3] = {1, COLL_TINY_ROOM + 1, 1};
    for (int k = 0; k < 3; k++) {
        int dir, ch;
        if ((k == 1 && lens[k] > st->small) ||
            chan_route(g, x->peer, g->rank, lens[k], k == 2, &dir, &ch) ||
            (dir == x->dir && ch == x->ch))
            continue;
        uint64_t n = g->rcvd[dir][ch] + 1;
        const uint64_t *flag = (const uint64_t *)(g->area + coll_chan_flag_off(st, dir, ch, n));
        uint64_t f = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
        if ((f & COLL_FLAG_SEQ) >= n && (f & COLL_FLAG_SETTLED) &&
            (__atomic_load_n(own, __ATOMIC_ACQUIRE) & COLL_FLAG_SEQ) < x->seq) {
            *odir = dir;
            *och = ch;
            *on = n;
            *of = f;
            return 1;
        }
    }
    return 0;
}

/* Receive x's sender took channel (dir, ch) (message n there, flag f) for this
 * collective (chan_elsewhere): the verdict, *err from the length marks (FMPL_ERR_TRUNCATE
 * when the sender's is longer); x is complete, and the run goes on with the error (its
 * later sends carry the poison to the ranks below). A single message on a tiny or small
 * channel, where x is not a stream's segment, is taken off that channel (freed,
 * acknowledged when due, and counted as received there) and x's number is given back to
 * its own channel, which the sender never used for it: both channels are in step again
 * for the next collective. A stream on either side (a chain's segments) cannot be put
 * back in step: both channels are given up (chan_give_up). */
static int chan_mismatch(transfer_t *x, int dir, int ch, uint64_t n, uint64_t f, int *err)
{
    coll_group_t *g = x->g;
    const coll_state_t *st = g->st;
    *err = coll_flag_check(f, x->mark_len);
    if (!*err)
        *err = FMPL_ERR_MISMATCH;
    x->pending = 0;
    if (x->stream || ch == coll_big(st)) {
        chan_give_up(g, dir, ch, x->peer);
        chan_give_up(g, x->dir, x->ch, x->peer);
        return 1;
    }
    coll_cell_clear((uint64_t *)(g->area + coll_chan_flag_off(st, dir, ch, n)));
    g->rcvd[dir][ch] = n;
    chan_freed(g, dir, ch, x->peer, n);
    if (g->rcvd[x->dir][x->ch] == x->seq)
        g->rcvd[x->dir][x->ch]--;
    return 1;
}

/* Moves x on; 1 when complete (*err set), 0 when still waiting. */
static int chan_test(void *req, int *err)
{
    transfer_t *x = req;
    if (!x->pending)
        return 1;
    coll_group_t *g = x->g;
    int done = 1;
    if (x->send) {
        const uint64_t *ackp = (const uint64_t *)(g->area + x->ack_off);
        uint64_t ack = __atomic_load_n(ackp, __ATOMIC_ACQUIRE);
        if (BASE_UNLIKELY(ack == COLL_ACK_BROKEN)) { /* its reader gave it up (chan_give_up) */
            *err = FMPL_ERR_MISMATCH;
            x->pending = 0;
            return 1;
        }
        if (x->seq > x->depth && ack < x->seq - x->depth)
            return 0;
        uint64_t settled = g->chan_runs == 1 ? COLL_FLAG_SETTLED : 0;
        uint64_t flag = coll_flag(x->seq | x->poison | settled, x->mark_len);
        *err = x->read_once ? coll_put_segment(g, x->peer, x->flag_off, x->buf, x->len, flag)
                            : coll_put_cell(g, x->peer, x->flag_off, x->buf, x->len, flag);
    } else {
        if (BASE_UNLIKELY(g->broken[x->dir][x->ch])) {
            *err = FMPL_ERR_MISMATCH;
            x->pending = 0;
            return 1;
        }
        uint64_t *own = (uint64_t *)(g->area + x->flag_off);
        done = transfer_take(x, own, err);
        if (!done) {
            int odir, och;
            uint64_t on, of;
            if (BASE_LIKELY(++x->idle % CHAN_ELSEWHERE_EVERY) ||
                !chan_elsewhere(x, own, &odir, &och, &on, &of))
                return 0;
            return chan_mismatch(x, odir, och, on, of, err);
        }
        uint64_t ack = coll_freed(x->freed, x->depth, x->ack_every, x->seq);
        if (ack && !g->broken[x->dir][x->ch]) { /* (a given-up channel keeps its mark) */
            int rc = coll_put_word(g, x->peer, x->ack_off, ack);
            if (!*err)
                *err = rc;
        }
    }
    x->pending = 0;
    return done;
}

static int chan_isend(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)type;
    (void)tag;
    ((transfer_t *)req)->read_once = 1; /* (plain schedules: every receive copies out) */
    int rc = chan_start(ctx, (void *)(uintptr_t)buf, count, peer, seq, req, 1);
    int err = 0;
    if (rc == FMPL_SUCCESS && chan_test(req, &err)) /* put now when the cell is free */
        rc = err;
    return rc;
}

static int chan_irecv(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)type;
    (void)tag;
    return chan_start(ctx, buf, count, peer, seq, req, 0);
}

static void chan_begin(void *ctx)
{
    ((coll_group_t *)ctx)->chan_runs++;
}

static void chan_end(void *ctx)
{
    ((coll_group_t *)ctx)->chan_runs--;
}

/* ---- the all-call transport ---- */

static void acell_begin(void *ctx)
{
    ((coll_group_t *)ctx)->seq_a++;
}

static uint64_t acell_reserve(void *ctx, int send, int peer, int64_t count, uintptr_t type,
                              void *req)
{
    (void)send;
    (void)type;
    (void)req;
    coll_group_t *g = ctx;
    return peer >= 0 && peer < g->size && count >= 0 && (size_t)count <= g->st->small ? g->seq_a
                                                                                      : 0;
}

static int acell_start(void *ctx, void *buf, int64_t count, uintptr_t cell, int peer, uint64_t seq,
                       void *req, int send)
{
    coll_group_t *g = ctx;
    transfer_t *x = req;
    x->poison = seq & COLL_SEQ_POISON;
    seq &= ~COLL_SEQ_POISON;
    transfer_fill(x, g, buf, count, peer, seq, send);
    x->ch = (int)cell;
    if (!seq || cell > (uintptr_t)g->st->rounds + 1)
        return FMPL_ERR_ARG;
    x->pending = 1;
    return FMPL_SUCCESS;
}

static int acell_test(void *req, int *err)
{
    transfer_t *x = req;
    if (!x->pending)
        return 1;
    coll_group_t *g = x->g;
    if (x->send) {
        *err = coll_put_cell(g, x->peer, coll_a_flag_off(g, x->ch, (int)(x->seq & 1)), x->buf,
                             x->len, coll_flag(x->seq | x->poison, x->len));
    } else if (!transfer_take(x, coll_a_flag(g, x->ch, (int)(x->seq & 1)), err)) {
        return 0;
    }
    x->pending = 0;
    return 1;
}

static int acell_isend(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer, int tag,
                       uint64_t seq, void *req)
{
    (void)tag;
    int rc = acell_start(ctx, (void *)(uintptr_t)buf, count, type, peer, seq, req, 1);
    int err = 0;
    if (rc == FMPL_SUCCESS && acell_test(req, &err))
        rc = err;
    return rc;
}

static int acell_irecv(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                       uint64_t seq, void *req)
{
    (void)tag;
    return acell_start(ctx, buf, count, type, peer, seq, req, 0);
}

/* ---- the lane transport ---- */

enum { LANE_FREE = 0, LANE_OFFERED, LANE_TAKEN };

static void lane_begin(void *ctx)
{
    ((coll_lane_t *)ctx)->run++;
}

/* (message numbers go to cells by a mask, acknowledgements every depth/4-th) */
_Static_assert((COLL_LANE_DEPTH & (COLL_LANE_DEPTH - 1)) == 0 && COLL_LANE_DEPTH >= 4 &&
                   (COLL_LANE_BIG_DEPTH & (COLL_LANE_BIG_DEPTH - 1)) == 0 &&
                   (COLL_LANE_BIG_DEPTH_MIN & (COLL_LANE_BIG_DEPTH_MIN - 1)) == 0 &&
                   COLL_LANE_BIG_DEPTH_MIN >= 4 && COLL_LANE_BIG_DEPTH >= COLL_LANE_BIG_DEPTH_MIN,
               "lane depths must be powers of two, at least 4");

/* The words of a lane edge's record of freed messages (coll_freed): both tiers alike. */
#define COLL_LANE_FREED COLL_FREED_WORDS(COLL_LANE_DEPTH)
_Static_assert(COLL_LANE_BIG_DEPTH <= COLL_LANE_DEPTH, "a lane record holds either tier's depth");

/* Everything a transfer of ln needs that depends on its lane only (ln->lane bound, ln->g
 * live). */
static void lane_bind(coll_lane_t *ln)
{
    const coll_state_t *st = ln->st;
    int lane = ln->lane, cells = ln->cells;
    uint64_t slot = ln->g->area_off;
    for (int tier = 0; tier < 2; tier++) {
        ln->stride[tier] = tier ? st->small_stride : st->lane_stride;
        /* all-call: two cells by parity are enough (and stay warm in the caches);
         * acknowledged: the whole depth, so a writer can run ahead */
        ln->mask[tier] = ln->all_call ? 1 : (uint64_t)coll_lane_depth(st, tier) - 1;
        for (int i = 0; i < cells; i++) {
            /* slot-relative, like every other mailbox offset (the lanes lie after the
             * slots) */
            ln->off[tier * cells + i] =
                (ln->all_call && tier == 0 ? coll_lane_flag_off(st, lane, 0, 0, 2 * (uint64_t)i)
                                           : coll_lane_flag_off(st, lane, tier, i, 0)) -
                slot;
            ln->off[(2 + tier) * cells + i] = coll_lane_ack_off(st, lane, tier, i) - slot;
        }
    }
    ln->sent = coll_lane_sent(st, lane, 0, 0);
    memset(ln->nums, 0, 4 * (size_t)cells * sizeof *ln->nums);
    memset(ln->freed, 0, 2 * (size_t)cells * COLL_LANE_FREED * sizeof *ln->freed);
    static unsigned gens;
    ln->gen = ++gens ? gens : ++gens;
}

/* The number of a lane's message. An all-call lane numbers a run's messages by the run
 * (ln->run, which begin advanced). An acknowledged one numbers the messages of each
 * (tier, cell index) since binding in the order the transfers were added, alike at both
 * ends (a lane serves one schedule, a reader has one writer per cell index), so a run may
 * send several through one cell index (a chain's segments): the first run counts them
 * (the transfer's place j among them, their number m in ln->nums), run r's is then
 * (r - 1) m + j, with no reservation at each start. */
static int lane_start(void *ctx, void *buf, int64_t count, uintptr_t cell, int peer, void *req,
                      int send)
{
    coll_lane_t *ln = ctx;
    transfer_t *x = req;
    coll_group_t *g = ln->g;
    if (BASE_LIKELY(x->gen == ln->gen && x->ln == ln && g)) {
        /* run n > 1 of this transfer on this binding: the request state (one per transfer,
         * kept across runs) holds all but the cell of the message */
        uint64_t seq =
            ln->all_call ? ln->run : (ln->run - 1) * ln->nums[x->numi] + (uint64_t)x->lane_j;
        x->seq = seq;
        x->flag_off = x->cell0 + (size_t)(seq & ln->mask[x->dir]) * ln->stride[x->dir];
        x->pending = 1;
        return FMPL_SUCCESS;
    }
    if (!g || ln->lane < 0 || peer < 0 || peer >= g->size || count < 0 ||
        (size_t)count > g->st->small)
        return FMPL_ERR_RANK; /* unbound lane, or the builder's mistake */
    if (cell >= (uintptr_t)ln->cells)
        return FMPL_ERR_ARG;
    int tier = (size_t)count > g->st->lane_room;
    size_t i = (size_t)tier * (size_t)ln->cells + cell;
    uint64_t seq = ln->run;
    if (!ln->all_call) { /* (the first run since binding: ln->run is 1) */
        x->numi = (send ? 0 : 2 * (size_t)ln->cells) + i;
        x->lane_j = ++ln->nums[x->numi];
        seq = x->lane_j;
    }
    transfer_fill(x, g, buf, count, peer, seq, send);
    x->ln = ln;
    x->ch = (int)cell;
    x->dir = tier;
    x->cell0 = ln->off[i];
    x->gen = ln->gen;
    x->slot = send ? coll_peer_slot(g, peer) : NULL;
    x->flag_off = ln->off[i] + (size_t)(seq & ln->mask[tier]) * ln->stride[tier];
    x->ack_off = ln->off[2 * (size_t)ln->cells + i];
    x->pending = 1;
    return FMPL_SUCCESS;
}

/* Acknowledged mode (not all-call): the reader acknowledges every depth/4-th message of a
 * (tier, cell index) once it and all before it are freed (coll_freed); a writer writes message n
 * once message n - depth of those cells is acknowledged (covered: if it waits, the reader consumes
 * all it wrote, up to n - 1, and has acknowledged at least n - depth/4 >= n - depth). All-call:
 * only the two cells of the run's parity are used, free by the parity argument (as the A cells). */
static int lane_test(void *req, int *err)
{
    transfer_t *x = req;
    if (!x->pending)
        return 1;
    coll_group_t *g = x->g;
    coll_lane_t *ln = x->ln;
    int tier = x->dir;
    uint64_t n = x->seq;
    if (x->send) {
        if (!ln->all_call) {
            uint64_t depth = ln->mask[tier] + 1;
            const uint64_t *ack = (const uint64_t *)(g->area + x->ack_off);
            if (n > depth && __atomic_load_n(ack, __ATOMIC_ACQUIRE) < n - depth)
                return 0;
            ln->sent[tier * ln->cells + x->ch] = n;
        }
        uint64_t flag = coll_flag(n | x->poison, x->len);
        if (BASE_LIKELY(x->slot))
            coll_store_cell(g, x->peer, x->slot + x->flag_off, x->buf, x->len, flag);
        else
            *err = coll_put_cell(g, x->peer, x->flag_off, x->buf, x->len, flag);
    } else {
        if (!transfer_take(x, (uint64_t *)(g->area + x->flag_off), err))
            return 0;
        if (!ln->all_call) { /* every depth/4-th, of the freed prefix */
            uint64_t depth = ln->mask[tier] + 1,
                     ack =
                         coll_freed(ln->freed + (x->numi - 2 * (size_t)ln->cells) * COLL_LANE_FREED,
                                    depth, depth / 4, n);
            if (ack) {
                int rc = coll_put_word(g, x->peer, x->ack_off, ack);
                if (!*err)
                    *err = rc;
            }
        }
    }
    x->pending = 0;
    return 1;
}

static int lane_isend(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)tag;
    int rc = lane_start(ctx, (void *)(uintptr_t)buf, count, type, peer, req, 1);
    ((transfer_t *)req)->poison = seq & COLL_SEQ_POISON;
    int err = 0;
    if (rc == FMPL_SUCCESS && lane_test(req, &err))
        rc = err;
    return rc;
}

static int lane_irecv(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)tag;
    (void)seq;
    return lane_start(ctx, buf, count, type, peer, req, 0);
}

/* Two tables with the same functions: which one a schedule has tells the builders
 * whether it is all-call. */
static const coll_sched_ops_t lane_ops = {.req_size = sizeof(transfer_t),
                                          .begin = lane_begin,
                                          .isend = lane_isend,
                                          .irecv = lane_irecv,
                                          .test = lane_test};
static const coll_sched_ops_t lane_all_call_ops = {.req_size = sizeof(transfer_t),
                                                   .begin = lane_begin,
                                                   .isend = lane_isend,
                                                   .irecv = lane_irecv,
                                                   .test = lane_test};

static void lane_release(void *obj)
{
    coll_lane_t *ln = obj;
    if (ln->lane >= 0) {
        ln->st->lane_state[ln->lane] = LANE_FREE;
        ln->st->lane_owner[ln->lane] = NULL;
    }
    free(ln);
}

coll_sched_t *coll_lane_sched(coll_group_t *g, int all_call)
{
    if (!g || g->magic != COLL_GROUP_MAGIC || !g->st->lanes)
        return NULL;
    int cells = g->st->rounds + 2;
    coll_lane_t *ln =
        calloc(1, sizeof *ln + 4 * (size_t)cells * (sizeof ln->off[0] + sizeof ln->nums[0]) +
                      2 * (size_t)cells * COLL_LANE_FREED * sizeof ln->freed[0]);
    if (!ln)
        return NULL;
    ln->nums = (uint64_t *)(ln->off + 4 * (size_t)cells);
    ln->freed = ln->nums + 4 * (size_t)cells;
    ln->cells = cells;
    ln->g = g;
    ln->st = g->st;
    ln->lane = -1;
    ln->all_call = all_call;
    coll_sched_t *s = coll_sched_new(g->v, all_call ? &lane_all_call_ops : &lane_ops, ln);
    if (!s) {
        free(ln);
        return NULL;
    }
    if (coll_sched_hold(s, lane_release, ln)) { /* (which released ln) */
        coll_sched_free(s);
        return NULL;
    }
    return s;
}

size_t coll_lane_room(const coll_group_t *g)
{
    return g->st->lanes ? g->st->small : 0;
}

/* 1 when every acknowledgement of lane's last use has come back (its ack lines may be
 * reset: nothing more will arrive): that of the last message a reader acknowledges, the
 * last multiple of the tier's interval sent. */
static int lane_drained(const coll_state_t *st, int lane)
{
    for (int tier = 0; tier < 2; tier++)
        for (int i = 0; i < st->rounds + 2; i++) {
            uint64_t last = *coll_lane_sent(st, lane, tier, i);
            const uint64_t *ack =
                (const uint64_t *)(st->area + coll_lane_ack_off(st, lane, tier, i));
            if (__atomic_load_n(ack, __ATOMIC_ACQUIRE) <
                last - last % coll_lane_ack_every(st, tier))
                return 0;
        }
    return 1;
}

/* Forgets lane's last use (drained: nothing more will arrive). */
static void lane_reset(coll_state_t *st, int lane)
{
    for (int tier = 0; tier < 2; tier++)
        for (int i = 0; i < st->rounds + 2; i++) {
            *coll_lane_sent(st, lane, tier, i) = 0;
            __atomic_store_n((uint64_t *)(st->area + coll_lane_ack_off(st, lane, tier, i)), 0,
                             __ATOMIC_RELAXED);
        }
    st->lane_group[lane] = NULL;
}

uint64_t coll_lanes_offer(coll_group_t *g, unsigned first, int n)
{
    coll_state_t *st = g->st;
    uint64_t mask = 0;
    for (int i = 0; i < n && i < st->lanes; i++) {
        int l = (int)((first + (unsigned)i) % (unsigned)st->lanes);
        if (st->lane_state[l] == LANE_FREE && lane_drained(st, l)) {
            st->lane_state[l] = LANE_OFFERED;
            mask |= 1ull << l;
        }
    }
    return mask;
}

int coll_lanes_settle(coll_group_t *g, uint64_t offered, uint64_t agreed, coll_sched_t *s)
{
    coll_state_t *st = g->st;
    agreed &= offered;
    int lane = agreed ? __builtin_ctzll(agreed) : -1;
    for (int l = 0; l < st->lanes; l++)
        if ((offered >> l) & 1)
            st->lane_state[l] = LANE_FREE;
    const coll_sched_ops_t *ops = coll_sched_ops(s);
    if (lane < 0 || (ops != &lane_ops && ops != &lane_all_call_ops))
        return -1;
    coll_lane_t *ln = coll_sched_ctx_of(s);
    lane_reset(st, lane); /* drained when offered */
    st->lane_state[lane] = LANE_TAKEN;
    st->lane_owner[lane] = ln;
    st->lane_group[lane] = g;
    ln->lane = lane;
    ln->run = 0;
    lane_bind(ln);
    return lane;
}

int coll_lanes_drained(coll_group_t *g)
{
    coll_state_t *st = g->st;
    int all = 1;
    for (int l = 0; l < st->lanes; l++) {
        if (st->lane_group[l] != g)
            continue;
        if (lane_drained(st, l))
            lane_reset(st, l);
        else
            all = 0;
    }
    return all;
}

void coll_lanes_orphan(coll_group_t *g)
{
    coll_state_t *st = g->st;
    for (int l = 0; l < st->lanes; l++) {
        if (st->lane_owner[l] && st->lane_owner[l]->g == g)
            st->lane_owner[l]->g = NULL;
        if (st->lane_group[l] == g) /* not drained (a failed free) */
            st->lane_group[l] = NULL;
    }
}

static const coll_sched_ops_t acell_ops = {.req_size = sizeof(transfer_t),
                                           .begin = acell_begin,
                                           .reserve = acell_reserve,
                                           .isend = acell_isend,
                                           .irecv = acell_irecv,
                                           .test = acell_test};

static const coll_sched_ops_t chan_ops = {.req_size = sizeof(transfer_t),
                                          .begin = chan_begin,
                                          .end = chan_end,
                                          .reserve = chan_reserve,
                                          .isend = chan_isend,
                                          .irecv = chan_irecv,
                                          .test = chan_test};

/* ---- the fold transport (coll_impl.h "fold schedules"): the channels plus folds ---- */

/* Frees my cell (flag) of message seq of channel (dir, ch), written by group rank writer,
 * and acknowledges what is due (as chan_test's receive). */
static int fold_release(coll_group_t *g, uint64_t *flag, uint64_t seq, int dir, int ch, int writer)
{
    coll_cell_clear(flag);
    return chan_freed(g, dir, ch, writer, seq);
}

static int fold_test(void *req, int *err)
{
    transfer_t *x = req;
    coll_fold_t *f = x->fold;
    if (!x->pending || !f)
        return chan_test(req, err);
    coll_group_t *g = x->g;
    if (x->send) { /* forward the kept message from its cell, then free the cell */
        x->buf = coll_cell_data(f->flag, x->len);
        if (!chan_test(req, err))
            return 0;
        int rc = fold_release(g, f->flag, f->seq, f->dir, f->ch, f->writer);
        if (!*err)
            *err = rc;
        return 1;
    }
    uint64_t *flag = (uint64_t *)(g->area + x->flag_off);
    uint64_t fv = __atomic_load_n(flag, __ATOMIC_ACQUIRE);
    if ((fv & COLL_FLAG_SEQ) < x->seq)
        return 0;
    char *msg = coll_cell_data(flag, x->len);
    x->pending = 0;
    *err = coll_flag_check(fv, x->mark_len); /* (a fold is never a stream's segment) */
    switch (f->mode) {
    case COLL_FOLD_INTO: f->fn(f->mine, msg, f->count, f->arg); break;
    case COLL_FOLD_LOWER:
        f->fn(msg, f->mine, f->count, f->arg);
        memcpy(f->mine, msg, x->len);
        break;
    default: /* KEEP: the cell stays mine until the forward */
        f->fn(msg, f->mine, f->count, f->arg);
        f->flag = flag;
        f->seq = x->seq;
        f->dir = x->dir;
        f->ch = x->ch;
        f->writer = x->peer;
        return 1;
    }
    int rc = fold_release(g, flag, x->seq, x->dir, x->ch, x->peer);
    if (!*err)
        *err = rc;
    return 1;
}

static int fold_isend(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)tag;
    coll_fold_t *f = type == COLL_FOLD ? (coll_fold_t *)(uintptr_t)buf : NULL;
    transfer_t *x = req;
    x->fold = f;
    x->read_once = !f; /* this rank's own data (a kept cell's forward: cached stores) */
    int rc = chan_start(ctx, f ? NULL : (void *)(uintptr_t)buf, count, peer, seq, req, 1);
    int err = 0;
    if (rc == FMPL_SUCCESS && fold_test(req, &err)) /* put now when the cell is free */
        rc = err;
    return rc;
}

static int fold_irecv(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                      uint64_t seq, void *req)
{
    (void)tag;
    transfer_t *x = req;
    x->fold = type == COLL_FOLD ? buf : NULL;
    return chan_start(ctx, x->fold ? NULL : buf, count, peer, seq, req, 0);
}

static const coll_sched_ops_t fold_ops = {.req_size = sizeof(transfer_t),
                                          .begin = chan_begin,
                                          .end = chan_end,
                                          .reserve = chan_reserve,
                                          .isend = fold_isend,
                                          .irecv = fold_irecv,
                                          .test = fold_test};

coll_sched_t *coll_group_sched_fold(coll_group_t *g)
{
    if (!g || g->magic != COLL_GROUP_MAGIC)
        return NULL;
    return coll_sched_new(g->v, &fold_ops, g);
}

int coll_sched_is_fold(const coll_sched_t *s)
{
    return coll_sched_ops(s) == &fold_ops;
}

coll_sched_t *coll_group_sched(coll_group_t *g)
{
    if (!g || g->magic != COLL_GROUP_MAGIC)
        return NULL;
    return coll_sched_new(g->v, &chan_ops, g);
}

coll_sched_t *coll_group_sched_a(coll_group_t *g)
{
    if (!g || g->magic != COLL_GROUP_MAGIC)
        return NULL;
    return coll_sched_new(g->v, &acell_ops, g);
}

int coll_sched_is_group(const coll_sched_t *s)
{
    const coll_sched_ops_t *o = coll_sched_ops(s);
    return o == &chan_ops || o == &acell_ops || o == &lane_ops || o == &lane_all_call_ops ||
           o == &fold_ops;
}

/* 1 when s runs on all-call cells (the A cells, or an all-call lane). */
static int uses_all_call(const coll_sched_t *s)
{
    const coll_sched_ops_t *o = coll_sched_ops(s);
    return o == &acell_ops || o == &lane_all_call_ops;
}
/* 1 when s runs on a lane (all-call or acknowledged). */
static int uses_lane(const coll_sched_t *s)
{
    const coll_sched_ops_t *o = coll_sched_ops(s);
    return o == &lane_ops || o == &lane_all_call_ops;
}
/* 1 when an all-call schedule of g can send every member a message of n bytes in one
 * round: one cell per other member (p - 1 <= K + 2), n within a cell. */
static int fits_one_round(const coll_sched_t *s, const coll_group_t *g, size_t n)
{
    return uses_all_call(s) && g->size - 1 <= g->st->rounds + 2 && n <= g->st->small;
}

size_t coll_group_small(const coll_group_t *g)
{
    return g->st->small;
}

size_t coll_group_depth(const coll_group_t *g)
{
    return (size_t)g->st->depth;
}

/* ------------------------------------------------------------------ local steps */

typedef struct copy_args {
    void *dst;
    const void *src;
    size_t n;
} copy_args_t;

static int copy_step(const void *a)
{
    const copy_args_t *x = a;
    memmove(x->dst, x->src, x->n);
    return FMPL_SUCCESS;
}

/* Adds "copy n bytes from src to dst" (nothing when they are the same). */
static void add_copy(coll_sched_t *s, void *dst, const void *src, size_t n)
{
    if (dst == src || n == 0)
        return;
    copy_args_t a = {dst, src, n};
    coll_sched_call(s, copy_step, &a, sizeof a);
}

typedef struct reduce_args {
    coll_reduce_fn fn;
    void *arg;
    void *inout;
    const void *in;
    size_t count;
} reduce_args_t;

static int reduce_step(const void *a)
{
    const reduce_args_t *x = a;
    x->fn(x->inout, x->in, x->count, x->arg);
    return FMPL_SUCCESS;
}

void coll_sched_copy(coll_sched_t *s, void *dst, const void *src, size_t n)
{
    add_copy(s, dst, src, n);
}

/* Adds "inout = inout (op) in". */
static void add_reduce(coll_sched_t *s, const coll_reduce_op_t *op, void *inout, const void *in,
                       size_t count)
{
    reduce_args_t a = {op->fn, op->arg, inout, in, count};
    coll_sched_call(s, reduce_step, &a, sizeof a);
}

/* ------------------------------------------------------------------ algorithms */

/* The group as the algorithms' carrier (algo.h): byte counts, the cells they name, and
 * reductions by the group's op (inout = inout (op) in: the result lands in `lower`). */
static void carrier_copy(const coll_algo_t *a, void *dst, const void *src, int64_t n)
{
    add_copy(a->s, dst, src, (size_t)n);
}

static void *carrier_scratch(const coll_algo_t *a, int64_t n)
{
    return coll_sched_mem(a->s, (size_t)(n > 0 ? n : 1));
}

static void carrier_reduce(const coll_algo_t *a, const void *lower, const void *upper, void *into,
                           int64_t n)
{
    const coll_reduce_op_t *op = a->carrier;
    add_reduce(a->s, op, into, into == lower ? upper : lower, (size_t)n / op->elem_size);
}

static const coll_algo_ops_t carrier_ops = {carrier_copy, carrier_scratch, carrier_reduce};

/* Contract: coll_impl.h. */
coll_algo_t coll_group_algo(coll_sched_t *s, const coll_group_t *g, const coll_reduce_op_t *op)
{
    return (coll_algo_t){.s = s,
                         .ops = &carrier_ops,
                         .n = g->size,
                         .me = g->rank,
                         .cells = 1,
                         .spare = (unsigned)g->st->rounds,
                         .extent = 1,
                         .commutative = !op || op->commutative,
                         .carrier = op};
}

/* The all-call barrier's steps: step i sends an empty message on A cell i to the member
 * barrier_dist(i) ahead and takes one from the member as far behind. Few members (one cell
 * per other member, as fits_one_round): every step at once, d = i + 1, so nobody waits for a
 * relay through a descheduled member (*at_once = 1). Otherwise dissemination, d = 2^i, each
 * step taken before the next is sent. Returns the number of steps. */
static int barrier_steps(const coll_group_t *g, int *at_once)
{
    int p = g->size, n = 0;
    *at_once = p - 1 <= g->st->rounds + 2;
    if (*at_once)
        return p - 1;
    for (int d = 1; d < p; d *= 2)
        n++;
    return n;
}

static int barrier_dist(int i, int at_once)
{
    return at_once ? i + 1 : 1 << i;
}

int coll_build_barrier(coll_sched_t *s, coll_group_t *g)
{
    int at_once;
    barrier_steps(g, &at_once);
    coll_algo_t a = coll_group_algo(s, g, NULL);
    coll_algo_barrier_dissemination(&a, at_once);
    return FMPL_SUCCESS;
}

/* Takes step i's message of A-call seq (parity par): waits for it, gives its verdict and
 * frees the cell, as transfer_take does for a schedule's receive. */
static int barrier_take(coll_group_t *g, int i, int par, uint64_t seq)
{
    uint64_t *flag = coll_a_flag(g, i, par);
    int rc = coll_wait_flag(g, flag, seq);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = coll_flag_check(__atomic_load_n(flag, __ATOMIC_ACQUIRE), 0);
    coll_cell_clear(flag);
    return rc;
}

int coll_barrier_run(coll_group_t *g)
{
    int p = g->size, r = g->rank, at_once, n = barrier_steps(g, &at_once), err = FMPL_SUCCESS;
    uint64_t seq = ++g->seq_a; /* one A-call, as a schedule's run (acell_begin) */
    int par = (int)(seq & 1), taken = 0;
    for (int i = 0; i < n; i++) {
        /* a failure so far poisons the later messages, as a schedule's sends do */
        uint64_t flag = coll_flag(seq | (err ? COLL_SEQ_POISON : 0), 0);
        int rc = coll_put_word(g, coll_mod(r + barrier_dist(i, at_once), p),
                               coll_a_flag_off(g, i, par), flag);
        if (rc != FMPL_SUCCESS)
            return rc;
        for (; taken <= i && (!at_once || i == n - 1); taken++) {
            rc = barrier_take(g, taken, par, seq);
            if (rc != FMPL_SUCCESS && err == FMPL_SUCCESS)
                err = rc;
        }
    }
    return err;
}

/* Binomial tree (algo.h): every transfer is 2^k apart, on cell k (a rank receives once
 * and sends to each child at a different distance: one writer per cell index and reader,
 * as lanes need). */
static void build_bcast_binomial(coll_sched_t *s, coll_group_t *g, char *buf, size_t size, int root)
{
    coll_algo_t a = coll_group_algo(s, g, NULL);
    coll_algo_bcast_binomial(&a, buf, (int64_t)size, root);
}

/* Pipelined chain root -> root+1 -> ... in segments of seg bytes (the big channel of DOWN
 * edge 0, every segment, the first marked with the size: coll_impl.h, COLL_XFER_STREAM;
 * on a lane cell index 0): a rank forwards segment i while it receives segment i+1. */
static void build_bcast_chain(coll_sched_t *s, coll_group_t *g, char *buf, size_t size, int root,
                              size_t seg)
{
    int p = g->size, c = coll_mod(g->rank - root, p);
    int left = coll_mod(g->rank - 1, p), right = coll_mod(g->rank + 1, p);
    size_t nseg = (size + seg - 1) / seg;
    int lane = uses_lane(s);
    uintptr_t big = lane ? 0 : COLL_XFER_BIG, first = lane ? 0 : big | COLL_XFER_STREAM | size;
#define SEG(i) buf + (i)*seg, (int64_t)BASE_MIN(seg, size - (i)*seg), (i) ? big : first
    if (c == 0) {
        for (size_t i = 0; i < nseg; i++)
            coll_sched_send(s, SEG(i), right);
        return;
    }
    for (size_t i = 0; i <= nseg; i++) {
        if (i > 0 && c != p - 1)
            coll_sched_send(s, SEG(i - 1), right);
        if (i < nseg)
            coll_sched_recv(s, SEG(i), left);
        coll_sched_fence(s);
    }
#undef SEG
}

int coll_build_bcast(coll_sched_t *s, coll_group_t *g, void *buf, size_t size, int root)
{
    if (size == 0 || g->size == 1)
        return FMPL_SUCCESS;
    if (uses_lane(s)) { /* a lane has no big cells: its segments are its cells of COLL_SMALL */
        if (size <= g->st->small)
            build_bcast_binomial(s, g, buf, size, root);
        else
            build_bcast_chain(s, g, buf, size, root, g->st->small);
        return FMPL_SUCCESS;
    }
    coll_bcast_plan_t plan = coll_loggp_group_plan(g->st, size, g->size); /* alike everywhere */
    if (plan.chain)
        build_bcast_chain(s, g, buf, size, root, plan.seg);
    else
        build_bcast_binomial(s, g, buf, size, root);
    return FMPL_SUCCESS;
}

/* Binomial tree (algo.h); a non-commutative op's result goes from rank 0 to the root
 * along DOWN edges (lane cell K = rounds: each rank sends and receives it at most once). */
int coll_build_reduce(coll_sched_t *s, coll_group_t *g, const void *in, void *out, size_t count,
                      const coll_reduce_op_t *op, int root)
{
    if (count == 0)
        return FMPL_SUCCESS;
    coll_algo_t a = coll_group_algo(s, g, op);
    coll_algo_reduce_binomial(&a, in, out, (int64_t)(count * op->elem_size), root);
    return FMPL_SUCCESS;
}

int coll_build_allreduce(coll_sched_t *s, coll_group_t *g, const void *in, void *out, size_t count,
                         const coll_reduce_op_t *op)
{
    int p = g->size, r = g->rank;
    size_t n = count * op->elem_size;
    if (n == 0)
        return FMPL_SUCCESS;
    add_copy(s, out, in, n);
    if (p == 1)
        return FMPL_SUCCESS;
    int acall = uses_all_call(s);
    if (p > 2 && fits_one_round(s, g, n)) {
        /* Few members: one round, every vector to every member (A cell d - 1 to the one d
         * ahead), then each folds all of them in rank order (the same bits everywhere). */
        char *all = coll_sched_mem(s, (size_t)p * n);
        if (!all)
            return FMPL_ERR_NOMEM;
        add_copy(s, all + (size_t)r * n, out, n);
        for (int d = 1; d < p; d++) {
            int from = coll_mod(r - d, p);
            coll_sched_recv(s, all + (size_t)from * n, (int64_t)n, (uintptr_t)d - 1, from);
            coll_sched_send(s, out, (int64_t)n, (uintptr_t)d - 1, coll_mod(r + d, p));
        }
        coll_sched_fence(s);
        add_copy(s, out, all, n);
        for (int q = 1; q < p; q++)
            add_reduce(s, op, out, all + (size_t)q * n, count); /* out holds the lower ranks */
        return FMPL_SUCCESS;
    }
    if ((p & (p - 1)) && !acall) { /* channels: reduce to 0, binomial bcast from 0 */
        int rc = coll_build_reduce(s, g, out, out, count, op, 0);
        coll_sched_fence(s);
        build_bcast_binomial(s, g, out, n, 0);
        return rc;
    }
    /* Recursive doubling (algo.h); with p not a power of two (A cells only) the pairing
     * takes A cells K and K + 1 (K = rounds). */
    coll_algo_t a = coll_group_algo(s, g, op);
    coll_algo_allreduce_recdbl(&a, out, coll_sched_mem(s, n), (int64_t)n);
    return FMPL_SUCCESS;
}

/* Blocks a member sends in Bruck's round of distance d: allgather min(d, p - d), alltoall
 * those of the p indices with bit d. */
static size_t bruck_blocks(int p, int d, int alltoall)
{
    if (!alltoall)
        return (size_t)BASE_MIN(d, p - d);
    size_t c = 0;
    for (int i = 0; i < p; i++)
        c += (i & d) != 0;
    return c;
}

/* 1 when Bruck's rounds of size-byte blocks fit all-call cells of `room` bytes: every
 * round's message at most FMPL_COLL_ALLGATHER_BRUCK_MAX, and all rounds' pieces (a
 * message takes ceil(bytes / room) cells) at most the K+2 cells of a run. */
static int bruck_fits(const coll_group_t *g, size_t room, size_t size, int alltoall)
{
    size_t cells = 0;
    for (int d = 1; d < g->size; d <<= 1) {
        size_t m = bruck_blocks(g->size, d, alltoall) * size;
        if (m > g->st->allgather_bruck_max)
            return 0;
        cells += (m + room - 1) / room;
    }
    return room && cells <= (size_t)g->st->rounds + 2;
}

int coll_allgather_bruck_fits(const coll_group_t *g, size_t size)
{
    return bruck_fits(g, g->st->small, size, 0);
}

int coll_allgather_lane_fits(const coll_group_t *g, size_t size)
{
    return bruck_fits(g, coll_lane_room(g), size, 0);
}

/* 1 when a one-round alltoall fits the all-call cells: one cell a source. */
static int alltoall_direct(const coll_group_t *g, size_t size)
{
    return g->size - 1 <= g->st->rounds + 2 && size <= g->st->small;
}

int coll_alltoall_fits(const coll_group_t *g, size_t size)
{
    return alltoall_direct(g, size) || bruck_fits(g, g->st->small, size, 1);
}

/* Adds one round's exchange of len bytes (received from `from` into in, sent from out to
 * `to`) on all-call cells *cell, *cell + 1, ...: one piece of at most a cell's room each. */
static void ga_exchange(coll_sched_t *s, coll_group_t *g, char *in, const char *out, size_t len,
                        int from, int to, int *cell)
{
    size_t room = uses_lane(s) ? g->st->lane_room : g->st->small;
    for (size_t off = 0; off < len; off += room, (*cell)++) {
        int64_t n = (int64_t)BASE_MIN(room, len - off);
        coll_sched_recv(s, in + off, n, (uintptr_t)*cell, from);
        coll_sched_send(s, out + off, n, (uintptr_t)*cell, to);
    }
}

int coll_build_allgather(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                         size_t size)
{
    int p = g->size, r = g->rank;
    char *rb = recv;
    if (size == 0)
        return FMPL_SUCCESS;
    if (send)
        add_copy(s, rb + (size_t)r * size, send, size);
    if (!uses_all_call(s) ||
        !(uses_lane(s) ? coll_allgather_lane_fits(g, size) : coll_allgather_bruck_fits(g, size)))
        return FMPL_ERR_UNSUPPORTED;
    if (p > 2 && fits_one_round(s, g, size)) { /* few members: one round, as allreduce's */
        for (int d = 1; d < p; d++) {
            int from = coll_mod(r - d, p);
            coll_sched_recv(s, rb + (size_t)from * size, (int64_t)size, (uintptr_t)d - 1, from);
            coll_sched_send(s, rb + (size_t)r * size, (int64_t)size, (uintptr_t)d - 1,
                            coll_mod(r + d, p));
        }
        return FMPL_SUCCESS;
    }
    /* Bruck: round k sends the blocks held, r .. r+cnt-1, to r - 2^k and gets as many from
     * r + 2^k, staged in a scratch copy (they may wrap around the end). */
    char *out = coll_sched_mem(s, (size_t)p * size), *in = coll_sched_mem(s, (size_t)p * size);
    if (!out || !in)
        return FMPL_ERR_NOMEM;
    int cell = 0;
    for (int d = 1; d < p; d <<= 1) {
        int cnt = BASE_MIN(d, p - d), run1 = BASE_MIN(cnt, p - r);
        int from = coll_mod(r + d, p), in1 = BASE_MIN(cnt, p - from);
        add_copy(s, out, rb + (size_t)r * size, (size_t)run1 * size);
        add_copy(s, out + (size_t)run1 * size, rb, (size_t)(cnt - run1) * size);
        ga_exchange(s, g, in, out, (size_t)cnt * size, from, coll_mod(r - d, p), &cell);
        coll_sched_fence(s);
        add_copy(s, rb + (size_t)from * size, in, (size_t)in1 * size);
        add_copy(s, rb, in + (size_t)in1 * size, (size_t)(cnt - in1) * size);
    }
    return FMPL_SUCCESS;
}

/* ---- alltoall (Bruck) ---- */

typedef struct bruck_args {
    char *a, *b;
    size_t size;
    int p, d, r, dir; /* dir: 1 pack a -> b, 0 unpack b -> a; 2 rotate in, 3 rotate out */
} bruck_args_t;

/* The block moves of Bruck's alltoall on blocks of `size` bytes. */
static int bruck_step(const void *v)
{
    const bruck_args_t *x = v;
    size_t n = x->size;
    int p = x->p;
    switch (x->dir) {
    case 2: /* a[i] = b[(i + r) % p]: b is the send buffer */
        memcpy(x->a, x->b + (size_t)x->r * n, (size_t)(p - x->r) * n);
        memcpy(x->a + (size_t)(p - x->r) * n, x->b, (size_t)x->r * n);
        break;
    case 3: /* b[(r - i) % p] = a[i]: b is the receive buffer */
        for (int i = 0; i < p; i++)
            memcpy(x->b + (size_t)coll_mod(x->r - i, p) * n, x->a + (size_t)i * n, n);
        break;
    default:
        for (int i = 0, j = 0; i < p; i++)
            if (i & x->d) {
                if (x->dir)
                    memcpy(x->b + (size_t)j * n, x->a + (size_t)i * n, n);
                else
                    memcpy(x->a + (size_t)i * n, x->b + (size_t)j * n, n);
                j++;
            }
    }
    return FMPL_SUCCESS;
}

int coll_build_alltoall(coll_sched_t *s, coll_group_t *g, const void *send, void *recv, size_t size)
{
    int p = g->size, r = g->rank;
    if (size == 0)
        return FMPL_SUCCESS;
    if (!uses_all_call(s) || uses_lane(s) || !coll_alltoall_fits(g, size))
        return FMPL_ERR_UNSUPPORTED;
    const char *sb = send;
    char *rb = recv;
    if (alltoall_direct(g, size)) {
        /* One round (few members): each block straight to its member, A cell d - 1 for the
         * block of the member d ahead: no member waits for a relay (on an oversubscribed
         * host, a relay is a context switch). */
        add_copy(s, rb + (size_t)r * size, sb + (size_t)r * size, size);
        for (int d = 1; d < p; d++) {
            int from = coll_mod(r - d, p), to = coll_mod(r + d, p);
            coll_sched_recv(s, rb + (size_t)from * size, (int64_t)size, (uintptr_t)d - 1, from);
            coll_sched_send(s, sb + (size_t)to * size, (int64_t)size, (uintptr_t)d - 1, to);
        }
        return FMPL_SUCCESS;
    }
    /* Bruck: rotate so block i goes to rank r + i; round k sends the blocks whose index
     * has bit k to r + 2^k (A cell k) and takes as many from r - 2^k into the same
     * places; at the end block i came from rank r - i. */
    size_t half = 0; /* the most bytes of a round */
    for (int d = 1; d < p; d <<= 1)
        half = BASE_MAX(half, bruck_blocks(p, d, 1) * size);
    char *tmp = coll_sched_mem(s, (size_t)p * size), *out = coll_sched_mem(s, half),
         *in = coll_sched_mem(s, half);
    if (!tmp || !out || !in)
        return FMPL_ERR_NOMEM;
    bruck_args_t a = {tmp, (char *)(uintptr_t)send, size, p, 0, r, 2};
    coll_sched_call(s, bruck_step, &a, sizeof a);
    int cell = 0;
    for (int d = 1; d < p; d <<= 1) {
        bruck_args_t pk = {tmp, out, size, p, d, r, 1}, un = {tmp, in, size, p, d, r, 0};
        coll_sched_call(s, bruck_step, &pk, sizeof pk);
        ga_exchange(s, g, in, out, bruck_blocks(p, d, 1) * size, coll_mod(r - d, p),
                    coll_mod(r + d, p), &cell);
        coll_sched_fence(s);
        coll_sched_call(s, bruck_step, &un, sizeof un);
    }
    bruck_args_t fin = {tmp, recv, size, p, 0, r, 3};
    coll_sched_call(s, bruck_step, &fin, sizeof fin);
    return FMPL_SUCCESS;
}
