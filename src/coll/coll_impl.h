/* coll_impl.h — private to src/coll: the collective area, the group handle, and the
 * mailbox ("cell") primitives every algorithm is written with.
 *
 * The collective area. coll_init allocates, on every rank, one block of shared heap
 * with the same layout everywhere and registers it under the well-known key
 * COLL_KEY, so a peer addresses any part of it by offset alone (a vnic_fence after the
 * registration makes sure every rank's area exists before anyone writes). It holds
 * COLL_GROUPS group slots; a group uses slot ctx % groups.
 *
 * A slot holds mailboxes ("cells") in four families:
 *   A    (all-dependent): used by the final barrier of coll_group_free, in which no
 *        rank can finish before every rank has entered. Double buffered by the parity
 *        of the group's A sequence number: when a writer is in A-call n, it finished
 *        A-call n-1, so every rank entered n-1 and consumed all of A-call n-2's cells,
 *        which is the previous use of this parity. No acknowledgements. Cells A[k] for
 *        rounds k < K (and two spare ones).
 *   DOWN (fixed writer): the cells of channel (DOWN, k) of rank r are written only by
 *        group rank r - 2^k (mod size); UP: those of (UP, k) only by r + 2^k. Every
 *        transfer of the algorithms follows one of these edges, so each cell has
 *        exactly one writer and one reader in the group whatever the root. Channel k
 *        < K ("small") has FMPL_COLL_DEPTH cells of COLL_SMALL bytes used in turn;
 *        channel K ("big", between neighbours, distance 1) has two cells of COLL_SEG
 *        bytes for pipeline segments; channel K+1+k ("tiny", distance 2^k) has
 *        COLL_TINY_DEPTH (64) cells of COLL_TINY_ROOM (248) bytes. Uses of a channel
 *        are numbered; the reader acknowledges every depth/4-th (every one on the big
 *        channel) in the writer's ack line (dir, channel), once it has freed every use up
 *        to it (coll_freed: it may free them out of order), and the writer waits for use
 *        n - depth to be acknowledged before use n, so a writer runs up to `depth`
 *        messages ahead of its reader (what lets a broadcast root go on while its
 *        children wait for a core).
 *
 *   LANES (one schedule each, not in a slot): see coll.h "lanes" and the layout below;
 *        a lane is taken only after an agreement in which this rank took part, and its
 *        ack lines are cleared then (and its acknowledgements drained when its group is
 *        freed).
 *
 * A cell is [payload room][8-byte flag]; a message of len bytes lands right-aligned
 * against the flag, so payload and flag form one contiguous put (VNIC_F_TAIL_FLAG
 * makes the flag visible last). A flag carries the sequence number of its use (never
 * 0); the reader sets it back to 0 once it has consumed the message (before it
 * acknowledges an edge), and a writer acknowledges its ack lines back to 0 when the
 * group is freed. So a slot is all zeros between groups, and a new group can take it
 * without any handshake (coll_group_free explains why early writers are safe).
 * A large segment is sent as two puts that carry VNIC_F_RCNTR (payload, then flag):
 * the vnic delivers them in order.
 *
 * Every line written by a peer (each cell's last line, each ack line) is written by
 * one process only and sits on its own cache line. */
#ifndef FMPL_COLL_IMPL_H
#define FMPL_COLL_IMPL_H

#include <stdint.h>
#include <string.h>

#include "coll/algo/algo.h"
#include "coll/coll.h"

#define COLL_MAX_ROUNDS 32                   /* rounds of a log2 algorithm: any int group size */
#define COLL_NCHAN (2 * COLL_MAX_ROUNDS + 1) /* channels per direction: small, big, tiny */
#define COLL_GROUP_MAGIC 0x636f6c6cu
#define COLL_LANES_MAX 64 /* FMPL_COLL_LANES at most (a lane mask is 64 bits) */
/* Offload board entries (layout below, "The offload board"). */
#define COLL_BOARD_NB 4
#define COLL_BOARD_PERSIST 8
#define COLL_BOARD_PERSIST_ROOM 4
#define COLL_BOARD_ENTRIES (COLL_BOARD_NB + COLL_BOARD_PERSIST)

enum { COLL_DIR_DOWN = 0, COLL_DIR_UP = 1, COLL_NDIR = 2 };
#define COLL_LOGGP_SETTINGS 6 /* FMPL_COLL_LOGGP_L, _O, _GAP, _G, _S, _GFAR */

/* Process-wide collective state (one per process, made by coll_init). */
typedef struct coll_state {
    vnic_t *v;
    int world_rank, world_size;
    int rounds;          /* K = ceil(log2(world size)), at least 1 */
    size_t small;        /* payload room of a small cell (COLL_SMALL) */
    size_t seg;          /* payload room of a segment cell (COLL_SEG) */
    int stream;          /* FMPL_COLL_STREAM: coll_put_segment's non-temporal stores */
    size_t small_stride; /* bytes of a small cell, flag included, line aligned */
    size_t seg_stride;   /* bytes of a segment cell */
    int depth;           /* cells of a small channel (FMPL_COLL_DEPTH) */
    int ngroups;         /* group slots */
    size_t slot_size;    /* bytes of one slot */
    size_t area_size;
    char *area;               /* this process's area (shared heap), registered as COLL_KEY */
    vnic_cntr_t *order_cntr;  /* target of VNIC_F_RCNTR (ordering of segment puts) */
    unsigned char *slot_used; /* [ngroups] */
    char *outbox;             /* private staging of one small message plus its flag */
    /* Algorithm thresholds (bytes), see coll.h. */
    size_t bcast_tree_max;
    size_t reduce_tree_max;
    size_t allgather_bruck_max;
    int seg_set, bcast_tree_set; /* FMPL_COLL_SEG, FMPL_COLL_BCAST_TREE_MAX set by the user */
    int loggp_on;                /* FMPL_COLL_LOGGP: plan bcast with the model */
    coll_loggp_t loggp;          /* the model's parameters, agreed at coll_init */
    double loggp_set[COLL_LOGGP_SETTINGS]; /* FMPL_COLL_LOGGP_{L,O,GAP,G,S,GFAR}: > 0 replaces */
    int lanes;                             /* lanes of this process (FMPL_COLL_LANES) */
    size_t lane_room;   /* payload room of a small lane cell (FMPL_COLL_LANE_BYTES) */
    size_t lane_stride; /* bytes of a small lane cell, flag included, line aligned */
    int lane_big_depth; /* big lane cells per cell index (coll_init: COLL_LANE_BIG_DEPTH) */
    size_t lanes_off;   /* offset of the lanes in the area (after the group slots) */
    /* Lanes (coll_gsched.c): state of each, the schedule bound to a taken one and the group
     * it was taken for, and per (lane, tier, cell) the last acknowledged-mode message
     * written ((lane * 2 + tier) * (K+2) + cell). */
    uint8_t lane_state[COLL_LANES_MAX];
    struct coll_lane *lane_owner[COLL_LANES_MAX];
    struct coll_group *lane_group[COLL_LANES_MAX];
    uint64_t *lane_sent;
} coll_state_t;

/* What identifies a blocking call for the group's schedule cache (compared bytewise: no
 * padding). */
typedef struct coll_gkey {
    int kind, root;
    size_t n, elem;
    const void *in;
    void *out;
    coll_reduce_fn fn;
    void *arg;
    int commutative, pad;
} coll_gkey_t;
#define COLL_GCACHE 4 /* schedules of blocking calls kept per group */

struct coll_group {
    uint32_t magic;
    coll_state_t *st;
    vnic_t *v;
    int size, rank;
    int rounds; /* ceil(log2(size)) */
    uint32_t ctx;
    int slot;
    int *members;                         /* world rank of each group rank */
    char *area;                           /* this rank's slot */
    uint64_t area_off;                    /* offset of the slot in every rank's area */
    uint64_t seq_a;                       /* A-calls made */
    uint64_t sent[COLL_NDIR][COLL_NCHAN]; /* uses of my outgoing channel (dir, ch) */
    uint64_t rcvd[COLL_NDIR][COLL_NCHAN]; /* uses of my incoming channel (dir, ch) */
    /* my incoming channels given up after a mismatch put them out of step (chan_give_up):
     * their receives fail at once, their writer's sends too (COLL_ACK_BROKEN) */
    uint8_t broken[COLL_NDIR][COLL_NCHAN];
    /* what of my incoming channels is freed (coll_freed): COLL_FREED_WORDS(depth) words
     * per channel (dir, ch), at (dir * coll_nchan + ch) * g->freed_words */
    uint64_t *freed;
    size_t freed_words;
    int chan_runs;                 /* runs of channel transfers under way (chan_begin) */
    coll_gkey_t gkey[COLL_GCACHE]; /* the schedule cache (coll.c) */
    coll_sched_t *gsched[COLL_GCACHE];
    int gnext;
    /* Each member's slot as mapped here (vnic_peer_ptr), for direct stores; NULL: through
     * vnic_post; COLL_PEER_UNKNOWN until first used (coll_xfer.c). */
    char **peer_slot;
    /* Background runs queued by coll_group_enqueue, in call order (coll.c): the head
     * runs once started (q_started), the others wait for it; q_starting: queue_next is
     * starting runs (a run's completion then starts no other); q_popped: runs taken off
     * the queue so far. */
    struct coll_qrun *q_head, *q_tail;
    int q_started, q_starting;
    uint64_t q_popped;
    /* The offload board (coll_offload.c): -1 not looked at yet, 0 unusable, 1 usable
     * (every member's slot mapped here); offloaded calls so far (nonblocking, persistent);
     * the entries this member has published in (cleared at retirement). Per persistent
     * entry: the call that took it here last, and that call's state, whose schedule's free
     * releases the entry (NULL once released; orphaned at retirement). */
    int board_ok;
    uint64_t board_nb;
    uint64_t board_calls;
    uint32_t board_span[COLL_BOARD_ENTRIES]; /* bytes of each entry written (0: unused) */
    uint64_t board_call[COLL_BOARD_PERSIST];
    struct coll_offload *board_hold[COLL_BOARD_PERSIST];
    int offload_live; /* offloaded runs of this member under way (coll_group_quiesce) */
};
#define COLL_PEER_UNKNOWN ((char *)1)

/* ----------------------------------------------------------------- layout */

/* Channels of a direction: k < K small (distance 2^k, st->depth cells of COLL_SMALL), K
 * the big one (distance 1, two COLL_SEG cells), K+1+k tiny (distance 2^k,
 * COLL_TINY_DEPTH cells of COLL_TINY_ROOM bytes: small messages get a deep channel, so a
 * writer, e.g. a broadcast root on an oversubscribed host, runs far ahead of readers
 * waiting for a core). A reader acknowledges every coll_chan_ack_every-th use only; a
 * writer waits for use n - depth to be acknowledged before use n (covered: if it waits,
 * its reader consumes all it wrote, up to n - 1, and has acknowledged at least
 * n - every >= n - depth). */
#define COLL_TINY_ROOM 248
#define COLL_TINY_STRIDE 256
#define COLL_TINY_DEPTH 64
static inline int coll_big(const coll_state_t *st)
{
    return st->rounds;
}
static inline int coll_tiny(const coll_state_t *st, int k)
{
    return st->rounds + 1 + k;
}
static inline int coll_chan_depth(const coll_state_t *st, int ch)
{
    return ch < st->rounds ? st->depth : ch == st->rounds ? 2 : COLL_TINY_DEPTH;
}
static inline int coll_chan_ack_every(const coll_state_t *st, int ch)
{
    return ch == st->rounds ? 1 : BASE_MAX(1, coll_chan_depth(st, ch) / 4);
}
static inline size_t coll_chan_stride(const coll_state_t *st, int ch)
{
    return ch < st->rounds    ? st->small_stride
           : ch == st->rounds ? st->seg_stride
                              : COLL_TINY_STRIDE;
}
/* Group-rank distance of channel ch. */
static inline int coll_chan_dist(const coll_state_t *st, int ch)
{
    return ch < st->rounds ? 1 << ch : ch == st->rounds ? 1 : 1 << (ch - st->rounds - 1);
}
/* Channels per direction. */
static inline int coll_nchan(const coll_state_t *st)
{
    return 2 * st->rounds + 1;
}

/* Offset, inside a slot, of ack line (dir, ch) (written by the reader of my channel). */
static inline size_t coll_ack_off(const coll_state_t *st, int dir, int ch)
{
    return ((size_t)dir * (size_t)coll_nchan(st) + (size_t)ch) * BASE_CACHE_LINE;
}

/* Offset inside a slot of A cell `idx` (0..K+1), parity par. */
static inline size_t coll_a_off(const coll_state_t *st, int idx, int par)
{
    size_t base = 2 * (size_t)coll_nchan(st) * BASE_CACHE_LINE;
    return base + ((size_t)idx * 2 + (size_t)par) * st->small_stride;
}

/* Offset inside a slot of cell idx (0..depth-1) of channel (dir, ch). */
static inline size_t coll_chan_off(const coll_state_t *st, int dir, int ch, int idx)
{
    size_t base = coll_a_off(st, st->rounds + 2, 0), K = (size_t)st->rounds;
    size_t smalls = K * (size_t)st->depth * st->small_stride;
    size_t per_dir = 2 * st->seg_stride + smalls + K * COLL_TINY_DEPTH * COLL_TINY_STRIDE;
    base += (size_t)dir * per_dir;
    if (ch == st->rounds)
        return base + (size_t)idx * st->seg_stride;
    if (ch > st->rounds)
        return base + 2 * st->seg_stride + smalls +
               ((size_t)(ch - st->rounds - 1) * COLL_TINY_DEPTH + (size_t)idx) * COLL_TINY_STRIDE;
    return base + 2 * st->seg_stride +
           ((size_t)ch * (size_t)st->depth + (size_t)idx) * st->small_stride;
}

/* Offset inside a slot of the flag of use n (>= 1) of channel (dir, ch). */
static inline size_t coll_chan_flag_off(const coll_state_t *st, int dir, int ch, uint64_t n)
{
    int idx = (int)((n - 1) % (uint64_t)coll_chan_depth(st, ch));
    return coll_chan_off(st, dir, ch, idx) + coll_chan_stride(st, ch) - 8;
}

/* Lanes: one set per process, after the group slots (a lane serves one schedule, of any
 * group, at a time). Lane L holds, for each of K+2 cell indices, COLL_LANE_DEPTH small
 * cells (lane_stride bytes: tier 0, messages up to lane_room) and st->lane_big_depth big
 * ones (small_stride: tier 1, up to COLL_SMALL): COLL_LANE_BIG_DEPTH, or
 * COLL_LANE_BIG_DEPTH_MIN where the area would not fit the shared heap with that many
 * (coll_init: a choice every rank makes alike); message n of (tier, index) is in cell
 * n % depth of them. Then 2 (K+2) ack lines (tier, index), written by the reader of this
 * rank's messages of that tier and index, every depth/4-th message. Offsets from the
 * area's start (slot-relative ones: minus the group's slot offset). */
#define COLL_LANE_DEPTH 64
#define COLL_LANE_BIG_DEPTH 16
#define COLL_LANE_BIG_DEPTH_MIN 4
static inline int coll_lane_depth(const coll_state_t *st, int tier)
{
    return tier ? st->lane_big_depth : COLL_LANE_DEPTH;
}
static inline uint64_t coll_lane_ack_every(const coll_state_t *st, int tier)
{
    return (uint64_t)coll_lane_depth(st, tier) / 4;
}
static inline size_t coll_lane_cells(const coll_state_t *st)
{
    return (size_t)(st->rounds + 2) *
           (COLL_LANE_DEPTH * st->lane_stride + (size_t)st->lane_big_depth * st->small_stride);
}
static inline size_t coll_lane_size(const coll_state_t *st)
{
    return coll_lane_cells(st) + 2 * (size_t)(st->rounds + 2) * BASE_CACHE_LINE;
}
static inline size_t coll_lane_off(const coll_state_t *st, int lane)
{
    return st->lanes_off + (size_t)lane * coll_lane_size(st);
}
static inline size_t coll_lane_flag_off(const coll_state_t *st, int lane, int tier, int idx,
                                        uint64_t n)
{
    size_t base = coll_lane_off(st, lane), stride = st->lane_stride;
    size_t cell = (size_t)idx * (size_t)coll_lane_depth(st, tier) +
                  (size_t)(n % (uint64_t)coll_lane_depth(st, tier));
    if (tier) {
        base += (size_t)(st->rounds + 2) * COLL_LANE_DEPTH * st->lane_stride;
        stride = st->small_stride;
    }
    return base + (cell + 1) * stride - 8;
}
static inline size_t coll_lane_ack_off(const coll_state_t *st, int lane, int tier, int idx)
{
    return coll_lane_off(st, lane) + coll_lane_cells(st) +
           ((size_t)tier * (size_t)(st->rounds + 2) + (size_t)idx) * BASE_CACHE_LINE;
}
static inline uint64_t *coll_lane_sent(const coll_state_t *st, int lane, int tier, int idx)
{
    return &st->lane_sent[((size_t)lane * 2 + (size_t)tier) * (size_t)(st->rounds + 2) +
                          (size_t)idx];
}

/* The offload board (coll_offload.c): after the channels of a slot, COLL_BOARD_ENTRIES
 * entries of one record each: a header line written by the record's member alone, a line
 * of claim words any member updates with atomics, then inline data: st->small bytes for
 * the COLL_BOARD_NB entries that nonblocking offloaded calls take in turn, and
 * COLL_BOARD_PERSIST_ROOM times that for the COLL_BOARD_PERSIST entries that persistent
 * calls hold from init to free (their instances take turns in it; a freed entry goes to a
 * later call by the rule in coll_offload.c, "Persistent entries"). */
typedef struct coll_board_rec {
    /* line 0, the member's: */
    uint64_t seq;             /* instance whose fields below are valid (stored last) */
    uint64_t done;            /* instance this member is through with (coll_offload.c) */
    uint64_t size;            /* bytes of the instance */
    uint32_t key_in, key_out; /* its registered buffers (CMA forms) */
    uint64_t call;            /* persistent: the call whose words these are (stored last) */
    uint64_t released;        /* persistent: the last call here whose request was freed */
    uint64_t pad0[2];
    /* line 1, claims: (instance << 32) | count */
    uint64_t fill;       /* bcast: pieces of this member's copy taken */
    uint64_t fill_done;  /* bcast: pieces of this member's copy made */
    uint64_t chunk_next; /* allreduce, member 0's: chunks taken */
    uint64_t chunk_done; /* allreduce, member 0's: chunks finished */
    uint64_t failed;     /* the instance a copy failed in (member 0's, the root's) */
    uint64_t verdict;    /* persistent, member 0's: (owner call << 32) | last refused call */
    uint64_t pad1[2];
} coll_board_rec_t;
_Static_assert(sizeof(coll_board_rec_t) == 2 * BASE_CACHE_LINE, "two lines");
/* Inline data bytes of entry e. */
static inline size_t coll_board_room(const coll_state_t *st, int entry)
{
    size_t room = BASE_ALIGN_UP(st->small + 8, BASE_CACHE_LINE); /* a message and its flag */
    return entry < COLL_BOARD_NB ? room : COLL_BOARD_PERSIST_ROOM * room;
}
static inline size_t coll_board_off(const coll_state_t *st, int entry)
{
    size_t rec = sizeof(coll_board_rec_t), nb = BASE_MIN(entry, COLL_BOARD_NB);
    return coll_chan_off(st, COLL_NDIR, 0, 0) + (size_t)entry * rec + nb * coll_board_room(st, 0) +
           (size_t)(entry - (int)nb) * coll_board_room(st, COLL_BOARD_NB);
}

/* The path records (coll_path.c): after the board, COLL_PATH_RING words written by the
 * slot's member alone. */
#define COLL_PATH_RING 64
static inline size_t coll_path_off(const coll_state_t *st)
{
    return coll_board_off(st, COLL_BOARD_ENTRIES);
}

static inline size_t coll_slot_size(const coll_state_t *st)
{
    return coll_path_off(st) + COLL_PATH_RING * sizeof(uint64_t);
}

/* Where rank 0 publishes the LogGP parameters it read (coll_loggp.c "Agreement"): after
 * the lanes, at the end of the area. */
static inline size_t coll_loggp_off(const coll_state_t *st)
{
    return coll_lane_off(st, st->lanes);
}
/* The bcast plan of a group of `ranks` members under st's parameters and settings
 * (coll.h, coll_bcast_plan). */
coll_bcast_plan_t coll_loggp_group_plan(const coll_state_t *st, size_t bytes, int ranks);

/* ------------------------------------------------------------ group ranks */

static inline int coll_mod(int a, int p)
{
    a %= p;
    return a < 0 ? a + p : a;
}

/* Writer of my incoming channel (dir, ch) and reader of my outgoing channel (dir, ch). */
static inline int coll_edge_writer(const coll_group_t *g, int dir, int ch)
{
    int d = coll_chan_dist(g->st, ch);
    return coll_mod(dir == COLL_DIR_DOWN ? g->rank - d : g->rank + d, g->size);
}
static inline int coll_edge_reader(const coll_group_t *g, int dir, int ch)
{
    int d = coll_chan_dist(g->st, ch);
    return coll_mod(dir == COLL_DIR_DOWN ? g->rank + d : g->rank - d, g->size);
}

/* ------------------------------------------------------------- primitives
 * (coll_xfer.c). All return FMPL_SUCCESS or the vnic's error. */

/* coll_barrier on a group of two or more: the steps of coll_build_barrier's all-call
 * schedule (the same A-cell messages, so either end may be a schedule's run), made
 * directly. Blocks in vnic_wait; FMPL_ERR_TRUNCATE or _MISMATCH when a member's message says
 * it is in another collective, or the vnic's error. */
int coll_barrier_run(coll_group_t *g);
/* Waits until the 8-byte flag at `flag` (in this rank's area) reaches value. */
int coll_wait_flag(coll_group_t *g, const uint64_t *flag, uint64_t value);

/* peer's slot as mapped in this process (vnic_peer_ptr, looked up at first use), or NULL
 * (stores go through vnic_post). */
static inline char *coll_peer_slot(coll_group_t *g, int peer)
{
    char *p = g->peer_slot[peer];
    if (BASE_UNLIKELY(p == COLL_PEER_UNKNOWN))
        p = g->peer_slot[peer] = vnic_peer_ptr(g->v, g->members[peer], COLL_KEY, g->area_off,
                                               g->st->area_size - g->area_off); /* + lanes */
    return p;
}

/* memcpy for a cell's payload: the common 8-byte one without a call. */
static inline void coll_copy(void *dst, const void *src, size_t n)
{
    if (n == 8)
        __builtin_memcpy(dst, src, 8);
    else
        memcpy(dst, src, n);
}

/* A cell's flag word: the message's number (bits 0-46, what readers wait for), the
 * settled bit (47, COLL_FLAG_SETTLED: see below), the sender's length mark (bits 48-62) and the
 * poison bit (63, COLL_SEQ_POISON: the sender's run had failed before this send). The mark is the
 * byte count below 2^14 and 2^14 + a 14-bit fold of it above. A reader compares the mark with the
 * length it expects: ranks that disagree on a collective's size then fail with FMPL_ERR_TRUNCATE
 * (the sender's is longer, both exact) or FMPL_ERR_MISMATCH instead of taking the wrong
 * bytes without a word, and poison passes a failure on down a tree. A stream of
 * segments (a pipelined chain) marks its first segment with the stream's total instead
 * (COLL_XFER_STREAM), so a reader that expects another total stops at once rather than
 * waiting for segments that never come. Sizes that put the two ends on different
 * channels (tiny, small, big) or algorithms (binomial tree, chain) are told apart by
 * the settled bit: a channel message carries it when its sender had no other run of
 * channel transfers on the group (coll_group_t.chan_runs), so every message the sender
 * sent before it, on any channel, is visible once it is. A receiver that waits on one
 * channel and finds on another channel of the same sender a settled message it has not
 * reserved (the sender took that channel for this very collective) fails with
 * FMPL_ERR_MISMATCH instead of waiting for ever (coll_gsched.c, chan_elsewhere). Where the
 * two ends cannot be put back in step (a stream on either side: the counts of messages
 * differ), the reader gives the channel up (chan_give_up): from then on both ends fail every
 * transfer on it at once, and poison carries that on. What is left to FMPL_MPI_CHECK: a
 * receiver whose expected sender sends it nothing. Ranks whose sizes put some on these
 * mailboxes and others on the MPI face's point-to-point schedules see none of each other's
 * messages either: there the MPI face's watch on blocking runs ends the job (the path
 * records, coll.h; src/mpi/coll_impl.h, "The watch on a blocking run"). */
/* The acknowledgement word of a channel its reader gave up (chan_give_up): never a count. */
#define COLL_ACK_BROKEN UINT64_MAX
#define COLL_FLAG_SEQ ((UINT64_C(1) << 47) - 1)
#define COLL_FLAG_SETTLED (UINT64_C(1) << 47)
#define COLL_FLAG_EXACT UINT64_C(0x4000)

static inline uint64_t coll_flag_mark(uint64_t len)
{
    if (len < COLL_FLAG_EXACT)
        return len;
    return COLL_FLAG_EXACT | ((len ^ len >> 14 ^ len >> 28 ^ len >> 42) & (COLL_FLAG_EXACT - 1));
}

/* The flag of message seq of len bytes (seq may carry COLL_SEQ_POISON). */
static inline uint64_t coll_flag(uint64_t seq, uint64_t len)
{
    return seq | coll_flag_mark(len) << 48;
}

/* 0, or the FMPL error of a message whose flag is f taken by a transfer of len bytes. */
static inline int coll_flag_check(uint64_t f, uint64_t len)
{
    uint64_t want = coll_flag(0, len), got = f & ~(COLL_FLAG_SEQ | COLL_FLAG_SETTLED);
    if (BASE_LIKELY(got == want))
        return FMPL_SUCCESS;
    return got > want && got < COLL_FLAG_EXACT << 48 ? FMPL_ERR_TRUNCATE : FMPL_ERR_MISMATCH;
}

/* Type-word bits of a channel transfer (coll_group_sched, the fold schedules): route it
 * on the big channel whatever its length (so both ends of a stream of segments use one
 * channel even when their lengths differ), and "the first segment of a stream of n
 * bytes" (its mark is n: COLL_XFER_STREAM | n). The lanes take cell indices instead. */
#define COLL_XFER_BIG ((uintptr_t)1 << 62)
#define COLL_XFER_STREAM ((uintptr_t)1 << 61)

/* Stores len bytes of data, then the flag, into the cell whose flag is at `end` in group
 * rank peer's slot as mapped here (coll_peer_slot), and wakes peer if it sleeps. */
static inline void coll_store_cell(coll_group_t *g, int peer, char *end, const void *data,
                                   size_t len, uint64_t flag)
{
    if (len)
        coll_copy(end - len, data, len);
    __atomic_store_n((uint64_t *)end, flag, __ATOMIC_RELEASE);
    vnic_peer_wake(g->v, g->members[peer]);
}

/* Puts len bytes (<= the target cell's room) plus the flag value into the cell that
 * ends at flag offset `flag_off` (slot-relative) of group rank `peer`. Small messages
 * are staged with their flag in the outbox and travel as one tail-flag put; larger
 * ones as two ordered puts straight from data. data may be NULL when len is 0. */
int coll_put_cell(coll_group_t *g, int peer, uint64_t flag_off, const void *data, size_t len,
                  uint64_t flag);
/* coll_put_cell for a message its reader reads once (copies it out of the cell, or folds
 * it into its own data or into the cell): a large one to a slot mapped here is written
 * with non-temporal stores when FMPL_COLL_STREAM is on, so the writer neither fetches the
 * cell's lines from the reader's cache (where its last use left them) nor keeps them.
 * Measured on an AMD EPYC guest whose two vCPUs sometimes share no cache, at 2 ranks: a
 * 1 MiB bcast chain took 490 us with cached stores and 65 with these; the native 1 MiB
 * allreduce (two chains) 940-990 / 146-156 us in that state, 238-274 / 149-173 when the
 * vCPUs share a cache (docs/performance.md). */
int coll_put_segment(coll_group_t *g, int peer, uint64_t flag_off, const void *data, size_t len,
                     uint64_t flag);

/* Like coll_put_cell for an A cell: payload gathered from two pieces (either may be
 * empty), always through the outbox (len1 + len2 <= COLL_SMALL). */
int coll_put_cell2(coll_group_t *g, int peer, uint64_t flag_off, const void *d1, size_t l1,
                   const void *d2, size_t l2, uint64_t flag);

/* Puts the 8-byte value into line `line_off` (slot-relative) of group rank peer. */
int coll_put_word(coll_group_t *g, int peer, uint64_t line_off, uint64_t value);

/* ---- A cells ---- */
static inline uint64_t *coll_a_flag(coll_group_t *g, int idx, int par)
{
    return (uint64_t *)(g->area + coll_a_off(g->st, idx, par) + g->st->small_stride - 8);
}
static inline uint64_t coll_a_flag_off(const coll_group_t *g, int idx, int par)
{
    return coll_a_off(g->st, idx, par) + g->st->small_stride - 8;
}
/* Start of a len-byte message in my cell whose flag is `flag`. */
static inline char *coll_cell_data(uint64_t *flag, size_t len)
{
    return (char *)flag - len;
}
/* Marks a consumed cell free (the reader's last access to it). */
static inline void coll_cell_clear(uint64_t *flag)
{
    __atomic_store_n(flag, 0, __ATOMIC_RELEASE);
}
/* The reader's side of an acknowledged edge (a channel; a lane's tier and cell index).
 * An acknowledgement of n tells the writer that every message up to n is consumed and its
 * cell free: the writer then puts message n + depth into n's cell. But a reader frees its
 * messages out of order at times: a schedule tests every receive of a round in turn, so
 * it takes message n + 1 in the sweep that found n not there yet, and a fold keeps its
 * cell until it forwards it. So a reader acknowledges only the longest prefix freed. Its
 * record w: w[0] is the message up to which every one is freed, and bit n % depth of
 * w[1..] marks message n freed beyond that (at most depth - 1 of them: the writer writes
 * n only once n - depth is acknowledged, so every message written lies within depth of
 * w[0], on distinct bits). Acknowledging the message freed, as readers did before, let a
 * writer that sends a peer more than depth/2 messages per call overwrite a cell still
 * unread: the reader then took message n + depth for n, and waited for ever for
 * n + depth (a 4-rank neighbour alltoall of 64 KiB blocks hung). */
#define COLL_FREED_WORDS(depth) (1 + ((size_t)(depth) + 63) / 64)

/* Message n of an edge of `depth` cells, acknowledged every `every`, is freed (w: the
 * edge's record, COLL_FREED_WORDS(depth) words). The acknowledgement now due, or 0: the
 * last multiple of `every` that the freed prefix reached, when it passed one. */
static inline uint64_t coll_freed(uint64_t *w, uint64_t depth, uint64_t every, uint64_t n)
{
    uint64_t upto = w[0];
    if (BASE_UNLIKELY(n != upto + 1)) {
        if (n > upto) { /* (n <= upto: freed twice, after a mismatch; nothing new) */
            uint64_t i = n % depth;
            w[1 + i / 64] |= UINT64_C(1) << (i % 64);
        }
        return 0;
    }
    for (;;) { /* n is freed: absorb the messages after it freed before it */
        uint64_t i = (n + 1) % depth, bit = UINT64_C(1) << (i % 64);
        if (BASE_LIKELY(!(w[1 + i / 64] & bit)))
            break;
        w[1 + i / 64] &= ~bit;
        n++;
    }
    w[0] = n;
    return n / every > upto / every ? n - n % every : 0;
}

/* The record of my incoming channel (dir, ch) (coll_freed). */
static inline uint64_t *coll_chan_freed(coll_group_t *g, int dir, int ch)
{
    return g->freed + ((size_t)dir * (size_t)coll_nchan(g->st) + (size_t)ch) * g->freed_words;
}

/* Waits for A cell (idx, parity of seq) to carry seq; returns its flag. */
int coll_a_recv(coll_group_t *g, int idx, uint64_t seq, uint64_t **flag);

/* ---- channels ---- */
/* 1 when the last use of each of my outgoing channels that its reader acknowledges has
 * been acknowledged; my ack lines are then cleared (no more acknowledgements can come).
 * 0: not yet. Never blocks. */
int coll_edges_drained(coll_group_t *g);
/* The same for g's lanes (coll_gsched.c): 1 when every acknowledgement of their last
 * uses is in (each drained lane's ack lines are cleared and it leaves g). Never blocks. */
int coll_lanes_drained(coll_group_t *g);
/* Detaches the lane schedules still bound to g's lanes from g (g is being freed: their
 * release must not touch it). */
void coll_lanes_orphan(coll_group_t *g);
/* A new group schedule of the algorithm the blocking call with these arguments runs
 * (coll.c): bcast of size bytes of buf from root; allreduce of count elements of op in buf,
 * in place. For a member of 2 or more and a size above 0. NULL: out of memory or the
 * builder failed (*rc: FMPL_ERR_NOMEM or the builder's code). */
coll_sched_t *coll_sched_for_bcast(coll_group_t *g, void *buf, size_t size, int root, int *rc);
coll_sched_t *coll_sched_for_allreduce(coll_group_t *g, void *buf, size_t count,
                                       const coll_reduce_op_t *op, int *rc);

/* Clears this member's records of g's offload board that it published in, and the
 * headers of the persistent entries (retirement, after the final barrier: no member reads
 * them any more); a persistent request freed later releases nothing (its state is
 * orphaned). */
void coll_board_clear(coll_group_t *g);
/* Clears this member's path records (coll_path.c), when its group is freed. */
void coll_path_clear(coll_group_t *g);

/* ---- fold schedules (coll_gsched.c): the large reductions ----
 * A schedule over g's channels like coll_group_sched's, whose transfers may also combine
 * a message with this rank's operand straight in its cell, without a copy: a transfer
 * whose type word is COLL_FOLD gets a coll_fold_t (in the schedule's memory) as its
 * buffer; any other type word is a plain transfer of its buffer. A receive with a fold,
 * once the message msg (count elements) is in its cell:
 *   COLL_FOLD_INTO   mine = mine (op) msg, then frees the cell;
 *   COLL_FOLD_LOWER  mine = msg (op) mine (msg holds the lower ranks; the cell serves as
 *                    scratch, then is copied to mine), then frees the cell;
 *   COLL_FOLD_KEEP   msg = msg (op) mine in the cell, which stays this rank's: a later
 *                    send with the same fold forwards it from the cell (no copy) to its
 *                    peer and then frees it (so the send's count is the receive's).
 * The cell of a kept message is held until its forward is written, so its writer gets
 * at most one message further ahead on that channel (the big channel has two cells).
 * Each run overwrites the run state (the kept message) of its folds. As on every channel
 * schedule, two receives on one channel never share a round: a channel's messages are
 * consumed in order (its acknowledgements mean "all up to n"). */
#define COLL_FOLD UINTPTR_MAX
enum { COLL_FOLD_INTO = 1, COLL_FOLD_LOWER, COLL_FOLD_KEEP };
typedef struct coll_fold {
    coll_reduce_fn fn; /* the reduction and its argument */
    void *arg;
    char *mine;   /* this rank's operand (INTO, LOWER: also the result) */
    size_t count; /* elements of the message */
    int mode;     /* COLL_FOLD_* */
    /* run state of a kept message: its flag in my slot, number, channel and writer */
    int dir, ch, writer;
    uint64_t *flag;
    uint64_t seq;
} coll_fold_t;

/* An empty fold schedule on g; NULL: g not a live group, or out of memory. */
coll_sched_t *coll_group_sched_fold(coll_group_t *g);
/* 1 when s was made by coll_group_sched_fold. */
int coll_sched_is_fold(const coll_sched_t *s);

/* ---- the large-message builders (coll_reduce.c, coll_allgather.c) ----
 * Same contracts as coll_build_reduce / coll_build_allreduce / coll_build_allgather
 * (coll.h), for any size; FMPL_ERR_UNSUPPORTED when an element is larger than
 * FMPL_COLL_SEG or s is not of the kind named. Segments of at most FMPL_COLL_SEG
 * bytes (whole elements) flow between neighbours on the big channel (the last, shorter
 * one may take a small or tiny channel: the transport picks by length). */

/* Reduction to root (fold schedule): two pipelined chains meet at the root, a prefix
 * chain 0 -> 1 -> ... -> root (DOWN) carrying x0 op ... op x(r) and a suffix chain
 * p-1 -> ... -> root (UP) carrying x(r) op ... op x(p-1); each middle rank folds its
 * segment into the one it got, in the cell, and forwards it from there, while it gets
 * the next (KEEP; the non-commutative suffix folds into a copy of its own segment
 * instead); the root folds suffix then prefix into out, segment by segment, in that
 * order every run (so its bits do not depend on arrival order). Rank order is kept. */
int coll_build_reduce_chain(coll_sched_t *s, coll_group_t *g, const void *in, void *out,
                            size_t count, const coll_reduce_op_t *op, int root);
/* Allreduce (fold schedule): coll_build_reduce_chain to rank 0, then coll_build_bcast of
 * the result from rank 0 (a pipelined chain of segments unless small). */
int coll_build_allreduce_chain(coll_sched_t *s, coll_group_t *g, const void *in, void *out,
                               size_t count, const coll_reduce_op_t *op);
/* Ring allgather (fold schedule, plain transfers): in step t = 0 .. p-2, rank r
 * passes block r-t to r+1 and gets block r-1-t from r-1, segment by segment
 * (one segment each way per round). */
/* The group as the carrier of the algorithms (algo.h) that build into g's schedule s:
 * byte counts, the cells they name, op the reduction (NULL: none). */
coll_algo_t coll_group_algo(coll_sched_t *s, const coll_group_t *g, const coll_reduce_op_t *op);
int coll_build_allgather_ring(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                              size_t size);

#endif
