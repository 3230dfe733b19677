/* coll_offload.c — broadcast and allreduce that the other members of a host's group finish
 * without a member that is busy elsewhere (contract: coll.h "offloaded runs").
 *
 * The board. Each member has, in its group slot, COLL_BOARD_ENTRIES records
 * (coll_board_rec_t, coll_impl.h). A call uses one entry on every member; its runs are
 * instances 1, 2, ... of that entry (a nonblocking call: instance seq of entry
 * n % COLL_BOARD_NB for the group's n-th such call; a persistent one: its entry's next
 * instance at each start). A run on member r:
 *   1. waits until every member is done with the entry's previous instance (its `done`
 *      word), so nothing of that instance is still read from r's record or buffers;
 *   2. publishes, with release order: its operand in the record's inline data (up to the
 *      board's room, FMPL_COLL_SMALL) or its buffers registered with the vnic (keys), its
 *      size, then the instance in the header's `seq`; a persistent call's inline data
 *      also in the flag word that ends the instance's slot, which is all its readers look
 *      at after the first start (its size never changes: the header line stays in the
 *      writer's cache);
 *   3. does its part, and what parts of the others it finds undone (below);
 *   4. deregisters its buffers, stores `done` = the instance and wakes the members; with
 *      depth D > 1 (below) only every D/2-th instance: a member then waits in step 1 at
 *      most for instances that every member finishes without it (all were published, and
 *      a member finishing s - 1 has stored a `done` of at least s - D/2).
 * After step 2 the member's CPU is not needed any more: whoever waits does the rest, with
 * plain loads from the records and vnic_copy_alone (a memcpy from a peer's shared heap, or
 * one CMA call) on the published buffers.
 *
 * Depth: a persistent call's inline instances take turns in its record (up to
 * OFF_DEPTH_MAX of them), so a member runs up to D instances ahead of the slowest.
 * bcast, inline: the root copies its buffer into its record and is through; every other
 * member copies it out when it gets there (and publishes nothing). Nobody waits for
 * anyone but the root.
 * bcast over CMA: every member's copy of the root's buffer is cut into pieces (a segment,
 * FMPL_COLL_SEG, or a sixteenth of the message if that is larger). The member reads
 * pieces of the root's buffer into its own, and the root, which must not return before
 * every copy is made (its buffer is the source), writes pieces into the member's buffer:
 * both take the next piece from the member's `fill` word and count it in its `fill_done`
 * once made, so two cores copy at once and the copy is made whoever gets there.
 * allreduce, inline: every member folds all records' operands in rank order into its own
 * buffer. Nobody waits for anyone's CPU.
 * allreduce over CMA: the result is cut into chunks (FMPL_COLL_SEG bytes, whole
 * elements); a waiting member takes the next chunk from member 0's `chunk_next`, reads
 * that chunk of every member's operand, folds them in rank order, and writes the result
 * into every member's buffer, then counts it in member 0's `chunk_done`. A run is over
 * when all chunks are done. Each chunk of every operand is read by one member only, before
 * that member writes the chunk's result, so in == out (MPI_IN_PLACE) is safe; every
 * member gets the bits one member computed.
 * A failed copy marks the instance in the root's (bcast) or member 0's (allreduce)
 * `failed` word, so every member reports the error instead of waiting for ever.
 * Sizes that differ (an erroneous program) are seen in the headers before any data is
 * read: a bcast member whose size is not the root's fails (FMPL_ERR_TRUNCATE when the
 * root's is longer, else FMPL_ERR_MISMATCH) and the root, which does not fill it, succeeds;
 * an allreduce fails on every member. Nobody hangs, and a persistent call keeps failing
 * at every start.
 * Persistent entries. A call holds its entry from its init until its request is freed
 * (the schedule holding its state, off_new), then the entry may go to a later call of the
 * same group. Members make the calls in the same order, so they number them alike (call
 * k: the group's k-th persistent call that gets this far in coll_offload_take), but they
 * free requests in any order and at any time, so what a member sees of the others' frees
 * at its init differs from member to member. The rule:
 *   - at its free, a member stores the call in its record's `released` (its last run is
 *     over: it reads nothing of the entry's records or the call's buffers any more, and
 *     writes nothing there; with release order);
 *   - member 0's record of each persistent entry has a verdict word, (owner << 32) |
 *     refused: the call that holds the entry (0: none yet) and the latest call that was
 *     refused it;
 *   - call k looks at the entries in order and takes the first whose verdict for k is
 *     yes; when none is, it takes none and runs on the other paths. The verdict for
 *     (entry, k) is decided by whichever member looks first, from what it sees then: yes
 *     when every member's `released` is the owner (every member is done with the old
 *     call: nobody reads or writes a word of it any more), else no; it is recorded with
 *     one compare-and-swap, owner = k or refused = k, before anyone acts on it (a member
 *     that loses the race reads the winner's). A member that looks later reads it: owner
 *     k is yes; owner above k, or refused at k or above, is no. (Had k been given the
 *     entry, no later call could own it before this member freed k, which it has not even
 *     inited; and a member that looked at the entry for a later call had looked at it for
 *     k first, having been refused the same entries before it as this member was: so it
 *     recorded a refusal of k.) Frees only change what the first looker sees, never a
 *     recorded verdict, so every member takes the same entry, or falls back, for the same
 *     call. Nobody waits at init; call numbers past 2^32 - 1 are not offloaded (alike).
 *   - a member that takes an entry for k clears its own record of it (all but `released`
 *     and the verdict: no member reads or writes the old call's words any more) and then
 *     stores `call` = k, with release order. Before a member sees `call` = k in a peer's
 *     record it takes nothing in it for k's (its header still holds the old call's
 *     instances): so k's instances count from 1 again, and no stale seq, done, flag or
 *     claim word passes for one of k's. The first run of k waits for that as for the
 *     peer's start, which follows its init.
 * A request that is never freed keeps its entry; a call that finds all 8 held runs on the
 * other paths, on every member alike.
 * Progress: the until step runs at every advance of the owner's schedule, i.e. whenever
 * the owner enters the library; a member sleeping in vnic_wait is woken (vnic_peer_wake)
 * by whoever changes a word it waits for. A blocking collective on the group first waits
 * for this member's ordered offloaded runs (coll_group_quiesce), as for its queued ones. */
#include <string.h>

#include "coll/coll_impl.h"

enum { OFF_BCAST, OFF_ALLREDUCE };
enum { PH_REUSE, PH_RUN, PH_OVER };

struct coll_offload {
    coll_group_t *g;
    int kind, entry, persistent, ordered, root;
    uint64_t call; /* a persistent entry's: the call (0 a nonblocking entry's) */
    int joined;    /* every member's record of the entry holds this call's words */
    uint64_t seq;  /* instance of the run under way (or of the last one) */
    const void *in;
    void *out; /* bcast: in = out = the buffer */
    size_t size, count;
    size_t chunk;    /* allreduce over CMA: bytes of a chunk; bcast over CMA: of a piece */
    uint64_t depth;  /* instances of a persistent call's inline data in its record, in turn */
    uint64_t stride; /* bytes between them */
    uint64_t seen;   /* every member was done with this instance at the last look */
    coll_reduce_op_t op;
    char *acc, *tmp; /* allreduce over CMA: a chunk each */
    int phase, err;
    int sized; /* persistent inline: the sizes were compared at the first start; -1 differ */
    vnic_key_t key_in, key_out;
};

/* Settings (read once). */
static int off_enabled = -1;

static void off_settings(void)
{
    if (off_enabled >= 0)
        return;
    off_enabled = (int)base_env_int("FMPL_COLL_OFFLOAD", 1, 0, 1,
                                    "nonblocking and persistent bcast/allreduce on one host "
                                    "finish without a member busy elsewhere (1), or not (0)");
}

static inline coll_board_rec_t *board_rec(coll_group_t *g, int member, int entry)
{
    char *slot = member == g->rank ? g->area : coll_peer_slot(g, member);
    return (coll_board_rec_t *)(void *)(slot + coll_board_off(g->st, entry));
}

static inline coll_board_rec_t *off_rec(const coll_offload_t *o, int member)
{
    return board_rec(o->g, member, o->entry);
}

/* The inline data of instance o->seq in record r, and its flag (the instance, stored
 * last): one line for a small message, read with one miss. */
static inline char *off_data(const coll_offload_t *o, coll_board_rec_t *r)
{
    return (char *)(r + 1) + o->seq % o->depth * o->stride;
}
static inline uint64_t *off_flag(const coll_offload_t *o, coll_board_rec_t *r)
{
    return (uint64_t *)(void *)(off_data(o, r) + o->stride - 8);
}

static inline uint64_t off_load(const uint64_t *w)
{
    return __atomic_load_n(w, __ATOMIC_ACQUIRE);
}

static void off_wake_all(const coll_offload_t *o)
{
    for (int j = 0; j < o->g->size; j++)
        if (j != o->g->rank)
            vnic_peer_wake(o->g->v, o->g->members[j]);
}

static int off_inline(const coll_offload_t *o)
{
    return o->size <= o->g->st->small;
}

/* ---- persistent entries: which call takes which (the rule in the banner) */

#define OFF_CALLS_MAX 0xffffffffu /* call numbers fill half of a verdict word */

/* The verdict for (entry, call): 1 the call takes the entry. Recorded by this member when
 * it is the first to look. */
static int board_verdict(coll_group_t *g, int entry, uint64_t call)
{
    uint64_t *word = &board_rec(g, 0, entry)->verdict;
    uint64_t cur = __atomic_load_n(word, __ATOMIC_ACQUIRE);
    for (;;) {
        uint64_t owner = cur >> 32, refused = cur & 0xffffffffu;
        if (owner == call)
            return 1;
        if (owner > call || refused >= call)
            return 0;
        int all = 1;
        for (int j = 0; j < g->size && all; j++)
            all = __atomic_load_n(&board_rec(g, j, entry)->released, __ATOMIC_ACQUIRE) == owner;
        uint64_t next = all ? call << 32 | refused : owner << 32 | call;
        if (__atomic_compare_exchange_n(word, &cur, next, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return all;
    }
}

/* This member takes entry for call: clears its record of the old call's words, then says
 * whose they are. */
static void board_join(coll_group_t *g, int entry, uint64_t call)
{
    coll_board_rec_t *me = board_rec(g, g->rank, entry);
    uint32_t *span = &g->board_span[entry];
    me->seq = me->done = me->size = 0;
    me->key_in = me->key_out = 0;
    me->fill = me->fill_done = me->chunk_next = me->chunk_done = me->failed = 0;
    if (*span > sizeof *me)
        memset(me + 1, 0, *span - sizeof *me);
    *span = (uint32_t)BASE_MAX(*span, sizeof *me);
    g->board_call[entry - COLL_BOARD_NB] = call;
    __atomic_store_n(&me->call, call, __ATOMIC_RELEASE);
}

/* This member is through with a persistent entry's call: the entry goes back, as far as
 * this member is concerned. */
static void board_released(coll_group_t *g, int entry, uint64_t call)
{
    g->board_hold[entry - COLL_BOARD_NB] = NULL;
    __atomic_store_n(&board_rec(g, g->rank, entry)->released, call, __ATOMIC_RELEASE);
}

/* The schedule holding o, a persistent entry's call, is being freed (after its last run
 * here; coll_sched_free releases before it frees the schedule's memory). */
static void board_release(void *obj)
{
    coll_offload_t *o = obj;
    if (o->g) /* (NULL: orphaned, the group retired) */
        board_released(o->g, o->entry, o->call);
}

static int board_take_persistent(coll_group_t *g, int *entry)
{
    if (g->board_calls >= OFF_CALLS_MAX)
        return 0;
    uint64_t call = ++g->board_calls;
    for (int e = COLL_BOARD_NB; e < COLL_BOARD_ENTRIES; e++)
        if (board_verdict(g, e, call)) {
            board_join(g, e, call);
            *entry = e;
            return 1;
        }
    return 0;
}

int coll_offload_take(coll_group_t *g, size_t size, int persistent, int *entry, uint64_t *seq)
{
    off_settings();
    if (!g || g->magic != COLL_GROUP_MAGIC || g->size < 2 || !off_enabled)
        return 0;
    if (g->board_ok < 0) {
        g->board_ok = 1;
        for (int j = 0; j < g->size; j++)
            if (j != g->rank && !coll_peer_slot(g, j))
                g->board_ok = 0;
    }
    if (!g->board_ok || (size > g->st->small && !vnic_info(g->v)->cma))
        return 0;
    if (persistent) {
        if (!board_take_persistent(g, entry))
            return 0;
        *seq = 0;
    } else {
        uint64_t n = g->board_nb++;
        *entry = (int)(n % COLL_BOARD_NB);
        *seq = n / COLL_BOARD_NB + 1;
    }
    return 1;
}

static coll_offload_t *off_new(coll_sched_t *s, coll_group_t *g, int kind, int entry, uint64_t seq,
                               unsigned flags)
{
    coll_offload_t *o = coll_sched_mem(s, sizeof *o);
    int persistent_entry = entry >= COLL_BOARD_NB;
    uint64_t call = persistent_entry ? g->board_call[entry - COLL_BOARD_NB] : 0;
    if (!o) { /* s is refused at start: this member is through with the call */
        if (persistent_entry)
            board_released(g, entry, call);
        return NULL;
    }
    memset(o, 0, sizeof *o);
    o->g = g;
    o->kind = kind;
    o->entry = entry;
    o->seq = seq;
    o->persistent = !!(flags & COLL_OFFLOAD_PERSISTENT);
    o->ordered = !!(flags & COLL_OFFLOAD_ORDERED);
    o->phase = PH_OVER;
    o->depth = 1;
    o->call = call;
    o->joined = !persistent_entry;
    if (persistent_entry) { /* released when s is freed (failed: at once, s is refused) */
        g->board_hold[entry - COLL_BOARD_NB] = o;
        coll_sched_hold(s, board_release, o);
    }
    return o;
}

/* A persistent call's inline instances take turns in its record, so that a member runs up
 * to OFF_DEPTH_MAX instances ahead of the slowest before it waits (a broadcast root of
 * small messages, as on a mailbox channel): each in a slot of its size and flag, whole
 * lines. A nonblocking call's entry holds one instance, published by the header's `seq`
 * alone (calls of any size share the entry, so no flag may sit where an earlier call's
 * data was); the entries themselves take turns (COLL_BOARD_NB). */
#define OFF_DEPTH_MAX 16
static void off_set_depth(coll_offload_t *o)
{
    size_t room = coll_board_room(o->g->st, o->entry);
    o->stride = room;
    if (o->persistent && off_inline(o)) {
        o->stride = BASE_ALIGN_UP(o->size + 8, BASE_CACHE_LINE);
        o->depth = BASE_MIN(OFF_DEPTH_MAX, room / o->stride);
    }
}

coll_offload_t *coll_offload_bcast(coll_sched_t *s, coll_group_t *g, int entry, uint64_t seq,
                                   unsigned flags, void *buf, size_t size, int root)
{
    coll_offload_t *o = off_new(s, g, OFF_BCAST, entry, seq, flags);
    if (o) {
        o->in = o->out = buf;
        o->size = size;
        o->root = root;
        off_set_depth(o);
        size_t sixteenth = BASE_ALIGN_UP(size / 16, (size_t)4096); /* whole pages */
        o->chunk = BASE_MAX(g->st->seg, sixteenth);
    }
    return o;
}

coll_offload_t *coll_offload_allreduce(coll_sched_t *s, coll_group_t *g, int entry, uint64_t seq,
                                       unsigned flags, const void *in, void *out, size_t count,
                                       const coll_reduce_op_t *op)
{
    coll_offload_t *o = off_new(s, g, OFF_ALLREDUCE, entry, seq, flags);
    if (!o)
        return NULL;
    o->in = in;
    o->out = out;
    o->count = count;
    o->op = *op;
    o->size = count * op->elem_size;
    off_set_depth(o);
    if (!off_inline(o)) {
        o->chunk = g->st->seg - g->st->seg % op->elem_size;
        o->acc = coll_sched_mem(s, BASE_MIN(o->chunk, o->size));
        o->tmp = coll_sched_mem(s, BASE_MIN(o->chunk, o->size));
    }
    return o;
}

static int off_begin(coll_offload_t *o)
{
    o->g->offload_live += o->ordered;
    o->seq += o->persistent;
    o->phase = PH_REUSE;
    o->err = 0;
    o->key_in = o->key_out = VNIC_KEY_INVALID;
    return 0;
}

/* ---- tagged words: (instance << 32) | count, taken with compare-and-swap */

/* Takes one of n units of instance seq counted in *w: its index, or -1 when all are
 * taken. A word still tagged with an earlier instance counts as 0 (that instance is over
 * at every member before any member takes a unit of this one). */
static int64_t off_take(uint64_t *w, uint64_t seq, uint64_t n)
{
    uint64_t cur = off_load(w);
    for (;;) {
        uint64_t next;
        if (cur >> 32 != seq)
            next = seq << 32 | 1;
        else if ((cur & 0xffffffffu) >= n)
            return -1;
        else
            next = cur + 1;
        if (__atomic_compare_exchange_n(w, &cur, next, 0, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
            return (int64_t)(next & 0xffffffffu) - 1;
    }
}

static int off_count_is(const uint64_t *w, uint64_t seq, uint64_t n)
{
    return off_load(w) == (seq << 32 | n);
}

static void off_fail(coll_offload_t *o, int owner, int rc)
{
    if (!o->err)
        o->err = rc;
    __atomic_store_n(&off_rec(o, owner)->failed, o->seq, __ATOMIC_RELEASE);
}

/* ---- phases */

/* Whether member j's record of a persistent entry holds this call's words (it has
 * taken the entry for it: "Persistent entries"); before, nothing in it is this call's. */
static int off_joined(coll_offload_t *o, int j)
{
    return o->joined || off_load(&off_rec(o, j)->call) == o->call;
}

static int off_all_joined(coll_offload_t *o)
{
    for (int j = 0; j < o->g->size && !o->joined; j++)
        if (!off_joined(o, j))
            return 0;
    o->joined = 1;
    return 1;
}

/* Step 1: every member is done with the instance whose place this one takes. */
static int off_reusable(coll_offload_t *o)
{
    uint64_t need = o->seq > o->depth ? o->seq - o->depth : 0, low = UINT64_MAX;
    if (o->seen >= need)
        return 1;
    if (!off_all_joined(o)) /* (a member that has not has done none of it) */
        return 0;
    for (int j = 0; j < o->g->size; j++) {
        uint64_t d = off_load(&off_rec(o, j)->done); /* (once: BASE_MIN reads twice) */
        low = BASE_MIN(low, d);
    }
    o->seen = low;
    return low >= need;
}

static int off_register(coll_offload_t *o, const void *buf, unsigned access, vnic_key_t *key)
{
    return vnic_mr_reg(o->g->v, (void *)(uintptr_t)buf, BASE_MAX(o->size, (size_t)1), access, key);
}

static int off_persistent_inline(const coll_offload_t *o)
{
    return o->persistent && off_inline(o);
}

/* Step 2. */
static int off_publish(coll_offload_t *o)
{
    coll_board_rec_t *me = off_rec(o, o->g->rank);
    int root = o->kind == OFF_BCAST && o->g->rank == o->root, rc = FMPL_SUCCESS;
    uint32_t *span = &o->g->board_span[o->entry];
    *span = (uint32_t)BASE_MAX(*span, sizeof *me);
    if (off_inline(o)) {
        if (o->kind == OFF_ALLREDUCE || root) {
            memcpy(off_data(o, me), o->in, o->size);
            *span = (uint32_t)BASE_MAX(*span, sizeof *me + o->depth * o->stride);
        }
    } else if (o->kind == OFF_ALLREDUCE && o->in == o->out) {
        rc = off_register(o, o->out, VNIC_ACC_REMOTE_READ | VNIC_ACC_REMOTE_WRITE, &o->key_out);
        o->key_in = o->key_out;
    } else {
        if (o->kind == OFF_ALLREDUCE || root)
            rc = off_register(o, o->in, VNIC_ACC_REMOTE_READ, &o->key_in);
        if (!rc && (o->kind == OFF_ALLREDUCE || !root))
            rc = off_register(o, o->out, VNIC_ACC_REMOTE_WRITE, &o->key_out);
    }
    me->size = o->size;
    me->key_in = o->key_in;
    me->key_out = o->key_out;
    __atomic_store_n(&me->seq, o->seq, __ATOMIC_RELEASE);
    if (off_persistent_inline(o) && (o->kind == OFF_ALLREDUCE || root))
        __atomic_store_n(off_flag(o, me), o->seq, __ATOMIC_RELEASE);
    off_wake_all(o);
    return rc;
}

/* Whether member j's size is this member's: 1 yes, -1 no, 0 not known yet (j has not
 * published). A persistent inline call compares once (its slots' places depend on the
 * size, so before it looks at a slot). */
static int off_same_size(coll_offload_t *o, int j)
{
    if (off_persistent_inline(o) && o->sized)
        return o->sized;
    if (!off_joined(o, j)) /* (first: its seq may still be the old call's) */
        return 0;
    coll_board_rec_t *r = off_rec(o, j);
    if (off_load(&r->seq) < o->seq)
        return 0;
    return r->size == o->size ? 1 : -1;
}

/* 1 once member j has published this instance, with this member's size; -1 with another
 * size; 0 not yet. */
static int off_published(coll_offload_t *o, int j)
{
    int same = off_same_size(o, j);
    if (same <= 0 || !off_persistent_inline(o))
        return same;
    return off_load(off_flag(o, off_rec(o, j))) == o->seq;
}

/* The same for every member (allreduce); a persistent call remembers the verdict. */
static int off_all_published(coll_offload_t *o)
{
    int all = 1;
    for (int j = 0; j < o->g->size; j++) {
        int pub = off_published(o, j);
        if (pub < 0) {
            o->sized = off_persistent_inline(o) ? -1 : 0;
            return -1;
        }
        all &= pub;
    }
    if (all && off_persistent_inline(o))
        o->sized = 1;
    return all;
}

/* Copies between buf and member j's published buffer (key) at off: get 1 reads it. */
static int off_copy(coll_offload_t *o, int j, int get, void *buf, vnic_key_t key, uint64_t off,
                    size_t len)
{
    if (j == o->g->rank) {
        char *mine = (char *)(uintptr_t)(get ? o->in : o->out) + off;
        memmove(get ? buf : mine, get ? mine : buf, len);
        return FMPL_SUCCESS;
    }
    int rc = vnic_copy_alone(o->g->v, o->g->members[j], get, buf, key, off, len);
    return rc == VNIC_AGAIN ? FMPL_ERR_UNSUPPORTED : rc;
}

/* bcast over CMA: makes pieces of member j's copy while any are left (j reads the root's
 * buffer, or the root writes j's). 1 once every piece is made (by anyone). */
static int off_fill(coll_offload_t *o, int j)
{
    coll_board_rec_t *rj = off_rec(o, j);
    uint64_t n = (o->size + o->chunk - 1) / o->chunk;
    int64_t k;
    while ((k = off_take(&rj->fill, o->seq, n)) >= 0) {
        uint64_t off = (uint64_t)k * o->chunk;
        size_t len = BASE_MIN(o->chunk, o->size - off);
        int rc;
        if (o->g->rank == o->root)
            rc = off_copy(o, j, 0, (char *)(uintptr_t)o->in + off, rj->key_out, off, len);
        else
            rc = off_copy(o, o->root, 1, (char *)o->out + off, off_rec(o, o->root)->key_in, off,
                          len);
        if (rc != FMPL_SUCCESS)
            off_fail(o, o->root, rc); /* counted as made all the same: nobody waits for ever */
        if (off_take(&rj->fill_done, o->seq, n) == (int64_t)n - 1) /* the other may wait */
            vnic_peer_wake(o->g->v, o->g->members[j == o->g->rank ? o->root : j]);
    }
    return off_count_is(&rj->fill_done, o->seq, n);
}

/* A bcast member whose size is not the root's fails; the root leaves its copy alone. */
static int off_bcast_mismatch(coll_offload_t *o)
{
    o->err = off_rec(o, o->root)->size > o->size ? FMPL_ERR_TRUNCATE : FMPL_ERR_MISMATCH;
    if (o->persistent)
        o->sized = -1;
    return 1;
}

/* Step 3, bcast: 1 when this member's part is over. */
static int off_bcast(coll_offload_t *o)
{
    int me = o->g->rank, root = o->root;
    if (me != root) {
        if (o->sized < 0)
            return off_bcast_mismatch(o);
        int pub = off_published(o, root);
        if (pub < 0)
            return off_bcast_mismatch(o);
        if (!pub)
            return 0;
        if (o->persistent)
            o->sized = 1;
        if (!off_inline(o))
            return off_fill(o, me);
        memcpy(o->out, off_data(o, off_rec(o, root)), o->size);
        return 1;
    }
    if (off_inline(o))
        return 1;
    int all = 1;
    for (int j = 0; j < o->g->size; j++) {
        if (j == root)
            continue;
        int same = off_same_size(o, j); /* (a member of another size fails by itself) */
        if (same == 0 || (same > 0 && !off_fill(o, j)))
            all = 0;
    }
    return all;
}

/* One chunk of the allreduce over CMA: read and fold every member's operand, write the
 * result into every member's buffer. */
static void off_chunk(coll_offload_t *o, uint64_t c)
{
    uint64_t off = c * o->chunk;
    size_t len = BASE_MIN(o->chunk, o->size - off), n = len / o->op.elem_size;
    int p = o->g->size, rc = off_copy(o, 0, 1, o->acc, off_rec(o, 0)->key_in, off, len);
    for (int j = 1; j < p && !rc; j++) {
        rc = off_copy(o, j, 1, o->tmp, off_rec(o, j)->key_in, off, len);
        if (!rc)
            o->op.fn(o->acc, o->tmp, n, o->op.arg);
    }
    for (int j = 0; j < p && !rc; j++)
        rc = off_copy(o, j, 0, o->acc, off_rec(o, j)->key_out, off, len);
    if (rc)
        off_fail(o, 0, rc);
}

/* Step 3, allreduce. */
static int off_allreduce(coll_offload_t *o)
{
    int pub = o->sized < 0 ? -1 : off_all_published(o);
    if (pub < 0) {
        o->err = FMPL_ERR_MISMATCH;
        return 1;
    }
    if (!pub)
        return 0;
    int p = o->g->size;
    if (off_inline(o)) {
        size_t n = o->count;
        memmove(o->out, off_data(o, off_rec(o, 0)), o->size);
        for (int j = 1; j < p; j++)
            o->op.fn(o->out, off_data(o, off_rec(o, j)), n, o->op.arg);
        return 1;
    }
    coll_board_rec_t *r0 = off_rec(o, 0);
    uint64_t nchunks = (o->size + o->chunk - 1) / o->chunk;
    int64_t c;
    while ((c = off_take(&r0->chunk_next, o->seq, nchunks)) >= 0) {
        off_chunk(o, (uint64_t)c);
        if (off_take(&r0->chunk_done, o->seq, nchunks) == (int64_t)nchunks - 1)
            off_wake_all(o);
    }
    return off_count_is(&r0->chunk_done, o->seq, nchunks);
}

static int off_step(coll_offload_t *o)
{
    if (o->phase == PH_OVER)
        return o->err;
    if (o->phase == PH_REUSE) {
        if (!off_reusable(o))
            return COLL_STEP_AGAIN;
        int rc = off_publish(o);
        if (rc)
            o->err = rc; /* published all the same: the others must not wait for ever */
        o->phase = PH_RUN;
    }
    if (!(o->kind == OFF_BCAST ? off_bcast(o) : off_allreduce(o)))
        return COLL_STEP_AGAIN;
    int owner = o->kind == OFF_BCAST ? o->root : 0;
    if (!o->err && off_load(&off_rec(o, owner)->failed) == o->seq)
        o->err = FMPL_ERR_SYS;
    if (o->key_in != VNIC_KEY_INVALID)
        vnic_mr_dereg(o->g->v, o->key_in);
    if (o->key_out != VNIC_KEY_INVALID && o->key_out != o->key_in)
        vnic_mr_dereg(o->g->v, o->key_out);
    if (o->depth == 1 || o->seq % (o->depth / 2) == 0) {
        uint32_t *span = &o->g->board_span[o->entry];
        *span = (uint32_t)BASE_MAX(*span, sizeof(coll_board_rec_t));
        __atomic_store_n(&off_rec(o, o->g->rank)->done, o->seq, __ATOMIC_RELEASE);
        off_wake_all(o);
    }
    o->phase = PH_OVER;
    o->g->offload_live -= o->ordered;
    return o->err;
}

typedef struct off_args {
    coll_offload_t *o;
    int (*map)(int);
} off_args_t;

static int off_begin_step(const void *a)
{
    return off_begin(((const off_args_t *)a)->o);
}

static int off_run_step(const void *a)
{
    const off_args_t *x = a;
    int rc = off_step(x->o);
    return rc == COLL_STEP_AGAIN || rc == FMPL_SUCCESS || !x->map ? rc : x->map(rc);
}

int coll_offload_steps(coll_sched_t *s, coll_offload_t *o, int (*map)(int fmpl_code))
{
    if (!o)
        return FMPL_ERR_NOMEM;
    off_args_t a = {o, map};
    coll_sched_call(s, off_begin_step, &a, sizeof a);
    coll_sched_until(s, off_run_step, &a, sizeof a);
    return FMPL_SUCCESS;
}

void coll_board_clear(coll_group_t *g)
{
    for (int e = 0; e < COLL_BOARD_ENTRIES; e++) {
        size_t span = g->board_span[e];
        if (e >= COLL_BOARD_NB) /* (a verdict, a release: written by the others, or unseen) */
            span = BASE_MAX(span, sizeof(coll_board_rec_t));
        if (span)
            memset(g->area + coll_board_off(g->st, e), 0, span);
        g->board_span[e] = 0;
    }
    for (int i = 0; i < COLL_BOARD_PERSIST; i++)
        if (g->board_hold[i]) {
            g->board_hold[i]->g = NULL;
            g->board_hold[i] = NULL;
        }
}
