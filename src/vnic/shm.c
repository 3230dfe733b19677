/* shm.c — the shared-memory transport of the vnic (ranks on the same host).
 *
 * SEGMENT. One per host and vnic_open, created by the lowest local rank as
 * /dev/shm/fmpl-<job id>-<node> (O_EXCL, mode 0600), announced through boot, mapped
 * by every local rank, then unlinked after the second boot fence, so a crash leaves
 * nothing behind. Before creating it, statvfs("/dev/shm") must show room for the
 * fixed part of every rank, which is fallocate()d at once (FMPL_ERR_NOMEM, never a
 * later SIGBUS). The per-rank heap is reserved in the file but sparse: heap.c
 * fallocate()s its pages when a block first covers them.
 *
 *   [header page][area of local rank 0][area 1]...
 *   area = ctrl | wake | SendCNT | RecvCNT | fastbox[nlocal] | cells[K] | reply[R] | bounce
 * state[B] | bounce data[B][chunk] | counters[C] | region table | share line | trigger line
 * and table (trigger.c) | heap.
 * Each hot field sits on its own cache line; a line is written by one process at a time
 * (cells and bounce chunks change hands, they are never written by two at once).
 *
 * INBOX (seed 002, receive-buffer acquisition). The receiver owns cells[K] (64-byte
 * lines), SendCNT and RecvCNT. A sender takes n tickets (an n-cell message) with a
 * compare-and-swap on SendCNT, and only when they fit: SendCNT + n <= RecvCNT + K
 * (RecvCNT cached per peer, re-read only when the inbox looks full). Seed 002 takes the
 * ticket first (fetch-add) and then waits for room; here the wait comes first, holding
 * no ticket, because the receiver consumes in ticket order: a held ticket stops it, and
 * a send made by the wait's own progress (hooks and handlers may send) would then wait
 * behind it forever. While waiting the sender progresses its own inbox, so two ranks
 * flooding each other cannot deadlock. It writes payload and header, and publishes the message by
 * storing ticket+1 into the first cell's seq word. The receiver consumes in ticket order, so each
 * initiator's messages stay in order; it resets the seq word of continuation cells (payload could
 * otherwise alias a future ticket) and publishes RecvCNT after applying each message's
 * effects. Memory: K cells per rank whatever the number of senders.
 * Cell: seq, type, ncells, flags, chan, src, key, off, len, rcntr, imm: 40 bytes, then
 * 24 payload bytes (8-byte put with notification = one cell); continuation cells carry
 * 64 payload bytes each.
 *
 * PATHS for an op towards local rank p and its region r (validated by the initiator
 * against p's region table, which lives in the segment: key, generation, bounds,
 * access; refused ops return FMPL_ERR_KEY and touch nothing):
 *   - p is self, or r lies inside the segment (the shared heap): the initiator does the
 *     work itself (memcpy, __atomic ops on the mapping): one-sided, no target CPU;
 *   - PUT to private memory, <= inline_max: payload inline in cells; the target's
 *     progress re-validates, copies, applies TAIL_FLAG, RCNTR, NOTIFY;
 *   - PUT/GET to private memory beyond that: one copy with process_vm_writev/readv
 *     (CMA, probed at start-up; FMPL_SHM_CMA=0 disables it), or, when CMA is denied,
 *     through the initiator's bounce chunks: PUT copies each chunk into a free chunk and
 *     sends a cell, the target copies out and frees it (post returns once every chunk
 *     is staged); GET requests chunks that the target fills, completed asynchronously
 *     by the initiator's progress (lcntr); a blocking GET may also be SHARED: initiator
 *     and target copy pieces with CMA at once (shm_share_run). Which of these large
 *     transfers take is the host's choice, measured or cached (shm_tune.h, shm_tune.c);
 *   - many small remote pieces (strided or indexed layouts) to private memory: a PUT
 *     packs them with their offsets into bounce chunks (SHM_BPUTV, the target scatters
 *     them), a GET reads the span around a dense group of them with one CMA and
 *     scatters it locally (CMA pins the target's pages once per remote iovec);
 *   - atomics on private memory: a cell executed by the target, the old value returned
 *     into one of the initiator's reply lines (completion through lcntr);
 *   - SEND (active message, <= am_max, FMPL_SHM_AM_MAX): an AM message whose payload
 *     fills the cells like an inline put; the target hands the handler of `chan` a
 *     pointer into its own cells (or, when the payload wraps around the ring, into a
 *     private copy). The cells stay held (RecvCNT not published past them, even by
 *     progress nested in the handler) until the handler returns; continuation cells
 *     are released only then.
 * FASTBOX. Each pair of local ranks shares one cache line (in the lower rank's area),
 * half written by each. Once a rank has handled SHM_FB_ARM small active messages (at
 * most 24 bytes, imm 0) from a peer, it polls that peer's half (at most
 * SHM_FB_ACTIVE_MAX peers) and says so in its own half; the peer then sends such
 * messages there instead of the inbox when its previous one was consumed: payload, the
 * count of its inbox messages so far, then the sequence word. In a ping-pong both
 * directions live in one line, one transfer per message (a queue needs a line per
 * direction; on this machine's slow state 200 vs 300 ns). Order with the inbox: a
 * fastbox message is delivered only after the sender's earlier inbox messages
 * (counts), and before its later ones: before the receiver handles a cell from a
 * sender whose fastbox it polls, it delivers the message waiting there if the counts
 * say it came first (so a stream of small messages never waits for the receiver: the
 * next one simply takes the inbox while the fastbox is full, and after a look that found
 * it full the next SHM_FB_SKIP ones go there without a look: each look reads the line the
 * receiver acknowledges in). A ring of fastbox lines per pair, tried for streams, lost
 * more in ping-pongs than it gained (docs/performance.md, 2026-11-29). No effect is applied
 * directly while the sender's fastbox message is unconsumed. The receiver
 * acknowledges in its own half, lazily: on its next message there, or at its next
 * progress call (an early write would pull the line from the sender, which polls it).
 * FMPL_SHM_FASTBOX=0 keeps everything in the inbox.
 *
 * ORDERING per initiator and target: cells are handled in ticket order. An effect
 * (RCNTR) of a direct op is applied directly (an atomic add on the target's counter,
 * no target CPU) only when none of this initiator's earlier cells to that target is
 * still unconsumed; otherwise it follows them as an EFFECT cell. Notifications always
 * travel in cells. So an op with RCNTR/NOTIFY takes effect after the data of every
 * earlier put from the same initiator to the same target is visible (plain puts
 * included): "put data, then put-with-notify" needs no fence.
 *
 * WAKE-UPS. A waiting rank stores 1 in its wake word, re-checks, and futex-waits on
 * it. Whoever delivers something (a cell, a direct put, an atomic, a counter
 * increment, a reply, a freed chunk) reads the word after its delivery and, only when
 * it is set, clears it and calls futex_wake: no system call while the target is awake.
 * Every delivery but the two of the small-message path does a full fence first. An
 * inbox cell and a fastbox message are published with a plain release store instead
 * (a full fence per message, waiting for the line to leave the store buffer, was ~40%
 * of a small message's cost in a stream), so a sender may read the word before its
 * store is visible and miss a rank that announces its sleep just then; shm_sleep
 * covers that window: a short first sleep, a look, then the long one. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include "vnic/shm_tune.h"
#include "vnic/vnic_impl.h"

#define SHM_MAGIC 0x314d48534c504d46ull /* "FMPLSHM1" */
#define SHM_LINE 64
#define SHM_CELL_DATA 24
#define SHM_NREPLY 64
#define SHM_HEADER_SIZE 4096
#define SHM_PAGE 4096

enum {
    SHM_PUT = 1,
    SHM_EFFECT,
    SHM_ATOMIC,
    SHM_BPUT,
    SHM_BGET,
    SHM_AM,
    SHM_SGET,
    SHM_BPUTV,
    SHM_SPUT
};

typedef struct shm_cell {
    uint32_t seq; /* ticket + 1 of the message's first cell, stored last (release) */
    uint8_t type, ncells, flags, chan;
    uint32_t src; /* initiator's world rank */
    uint32_t key;
    uint64_t off;
    uint32_t len;
    uint32_t rcntr;
    uint64_t imm;
    union {
        uint8_t data[SHM_CELL_DATA];
        struct {
            uint64_t operand, compare;
            uint32_t slot, slotseq;
        } amo;
        struct {
            uint32_t slot, slotseq;
        } bounce;
    } u;
} shm_cell_t;
_Static_assert(sizeof(shm_cell_t) == SHM_LINE, "a cell is one cache line");
_Static_assert(offsetof(shm_cell_t, src) == offsetof(shm_cell_t, type) + 4 &&
                   __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
               "shm_send_am_or writes type, ncells, flags, chan and src as one word");

/* What a rank publishes when it waits (shm_cpu_needed), on a line of its own. */
typedef struct shm_presence {
    int32_t cpu;       /* the CPU it ran on at its last check, -1 before */
    uint32_t waiting;  /* 1 from its first check in a wait until the wait ends */
    uint64_t stamp_ns; /* base_time_ns() at its last check */
} BASE_ALIGNED shm_presence_t;

typedef struct shm_ctrl {
    int32_t pid;
    int32_t cma_ok;
    uint64_t probe_addr, probe_value;
    cpu_set_t cpus; /* the CPUs it could run on at start-up (vnic_place) */
    shm_presence_t presence;
} BASE_ALIGNED shm_ctrl_t;

typedef struct shm_line32 {
    uint32_t word;
} BASE_ALIGNED shm_line32_t;

typedef struct shm_line64 {
    uint64_t value;
} BASE_ALIGNED shm_line64_t;

/* SHARED COPY (see shm_share_run): the initiator's line that both sides take pieces
 * from. claim = seq << 32 | pieces handed out; a piece is taken by a compare-and-swap
 * that also checks the seq, so a target answering late (the initiator finished alone
 * and started another get) takes nothing. */
typedef struct shm_share {
    uint64_t claim;
    uint64_t done;  /* bytes the target has copied (release after each piece) */
    int32_t status; /* the target's error, stored before its last done */
} BASE_ALIGNED shm_share_t;

/* A completion line written by a target for one of this rank's requests. */
typedef struct shm_reply {
    uint32_t seq;
    int32_t status;
    uint64_t value;
} BASE_ALIGNED shm_reply_t;

/* Offsets inside an area; the same on every rank (the creator's choice, read from
 * the header by the others). */
typedef struct shm_layout {
    uint32_t cells, nbounce, ncntr, nregions;
    uint64_t chunk, inline_max, am_max, heap_size;
    uint64_t off_ctrl, off_wake, off_sendcnt, off_recvcnt, off_fbox, off_cells, off_reply,
        off_bstate, off_bdata, off_cntr, off_regions, off_share, off_trig, off_heap, area_size,
        seg_size;
} shm_layout_t;

typedef struct shm_header {
    uint64_t magic;
    uint32_t nlocal, pad;
    shm_layout_t lay;
    BASE_ALIGNED uint64_t closing;     /* ranks that entered vnic_close */
    BASE_ALIGNED shm_tune_area_t tune; /* the host's choice of paths (shm_tune.c) */
} shm_header_t;
_Static_assert(sizeof(shm_header_t) <= SHM_HEADER_SIZE, "the header fits its page");

/* FASTBOX (see the design comment): one line per pair of local ranks, in the area
 * of the lower one; half h[0] is written by the lower rank, h[1] by the higher. */
#define SHM_FB_DATA 24      /* payload bytes of a fastbox message */
#define SHM_FB_ACTIVE_MAX 4 /* peers whose fastbox a rank polls */
#define SHM_FB_ARM 8        /* small active messages from a peer before it is polled */
#define SHM_FB_POLLING 0x8000u
/* Small messages that go to the inbox without a look at the fastbox after a look found it
 * unusable: in a stream the fastbox is mostly still full, and each look reads the line
 * the receiver writes its acknowledgements into, one line transfer a message. */
#define SHM_FB_SKIP 8

typedef struct shm_fb_half {
    uint32_t ctl; /* seq (bits 0..14, 1..0x7fff) | len << 16 | chan << 24; stored last */
    uint16_t ack; /* SHM_FB_POLLING: the writer polls the other half; bits 0..14: the
                   * last seq it consumed from the other half */
    uint16_t ibx; /* the writer's inbox messages to the other rank before this one */
    uint8_t data[SHM_FB_DATA];
} shm_fb_half_t;
_Static_assert(sizeof(shm_fb_half_t) * 2 == SHM_LINE, "a fastbox is one cache line");

typedef struct shm_peer {
    char *area;
    uint64_t recvcnt_cache; /* last RecvCNT seen at this peer */
    uint64_t sent_end;      /* ticket after my last cell to it */
    int pid;
    int world;
    /* fastbox of the pair (NULL for myself) */
    shm_fb_half_t *fb_mine, *fb_theirs;
    uint16_t fb_sent;   /* last seq I published in my half (0: none) */
    uint16_t fb_acked;  /* last seq of mine the peer acknowledged (cached) */
    uint16_t fb_seen;   /* last seq I consumed from its half */
    uint16_t ibx_sent;  /* my inbox messages to it */
    uint16_t ibx_got;   /* its inbox messages I handled */
    uint16_t small_got; /* its small active messages (until SHM_FB_ARM) */
    uint8_t fb_polled;  /* I poll its half */
    uint8_t ack_due;    /* fb_seen not yet published in my half's ack */
    uint8_t fb_skip;    /* small messages to send by the inbox before the next look */
} shm_peer_t;

typedef struct shm_bget shm_bget_t;

/* Private state of one of my reply lines / bounce chunks while a request uses it. */
typedef struct shm_slot {
    int busy;
    uint32_t seq;
    /* reply lines (atomics) */
    uint64_t *result;
    vnic_cntr_t *lcntr;
    int *done, *status;
    /* bounce chunks: PUT (target copies out) or GET (target fills) */
    shm_bget_t *get;
    size_t pos, len;
} shm_slot_t;

/* A GET through bounce chunks (no CMA), advanced by progress. */
struct shm_bget {
    shm_bget_t *next;
    shm_peer_t *peer;
    vnic_key_t key;
    struct iovec *iov;
    int iovcnt;
    vnic_rseg_t *seg;
    int segcnt, seg_idx;
    uint64_t seg_pos;
    size_t total, issued, done;
    int status, finished, waited; /* waited: post blocks on it and frees it */
    vnic_cntr_t *lcntr;
};

typedef struct shm {
    vnic_transport_t base;
    vnic_t *v;
    int rank, me, nlocal;
    uint64_t kernel_asked_ns; /* shm_cpu_needed's last look at /proc */
    int fd;
    char *seg;
    size_t seg_size;
    shm_header_t *hdr;
    shm_layout_t lay;
    uint32_t K, kmask;
    size_t inline_max;
    int cma;
    int share_busy;      /* my share line serves a copy (a nested one is not shared) */
    int64_t stall_ns;    /* FMPL_SHM_STALL_US: a pipelined put turns to CMA after this */
    size_t get_pipe_min; /* FMPL_SHM_GET_PIPELINE_MIN: smallest pipelined blocking GET */
    int32_t *local_of;   /* world rank -> local index, -1 elsewhere */
    shm_peer_t *peers;
    shm_peer_t *self;
    char *area; /* mine */
    shm_cell_t *cells;
    uint32_t *wake;
    uint64_t *recvcnt;
    uint64_t head; /* next ticket to consume */
    shm_slot_t reply[SHM_NREPLY];
    uint32_t reply_seq, reply_next;
    int reply_busy;
    shm_slot_t *bounce;
    uint32_t bounce_seq, bounce_next;
    int bounce_busy;
    shm_bget_t *bget_head, *bget_tail;
    int bget_issuing; /* shm_bget_issue running (not re-entered) */
    int am_depth;     /* SEND handlers running (nested progress holds RecvCNT) */
    shm_peer_t *fb_active[SHM_FB_ACTIVE_MAX]; /* peers whose fastbox I poll */
    int fb_nactive;
    int fb_acks_due; /* fb_active peers with ack_due */
    int fb_max;      /* FMPL_SHM_FASTBOX: SHM_FB_ACTIVE_MAX, or 0 */
    char *am_buf;    /* [am_max]: copy of a wrapped payload at depth 0 */
    size_t am_max;
    char name[128];
    /* Large transfers only, after the fields of the small-message path (whose layout
     * the latency was measured with). */
    shm_paths_t paths;       /* large puts and gets (shm_tune.h), set by vnic_shm_tune */
    size_t share_piece;      /* FMPL_SHM_SHARED_PIECE: largest piece of a shared get/put */
    size_t share_min;        /* FMPL_SHM_SHARED_MIN: smallest shared get/put */
    size_t share_heap_min;   /* FMPL_SHM_SHARED_HEAP_MIN: smallest shared heap copy */
    size_t share_heap_piece; /* FMPL_SHM_SHARED_HEAP_PIECE */
    uint32_t share_seq;      /* seq of my last shared copy */
    char *span;              /* [SHM_SPAN_MAX] staging of span reads (shm_cma_get_segs), lazily */
} shm_t;

/* ------------------------------------------------------------ addressing */

static inline shm_cell_t *shm_cells_of(const shm_t *s, char *area)
{
    return (shm_cell_t *)(area + s->lay.off_cells);
}
static inline uint64_t *shm_sendcnt_of(const shm_t *s, char *area)
{
    return &((shm_line64_t *)(area + s->lay.off_sendcnt))->value;
}
static inline uint64_t *shm_recvcnt_of(const shm_t *s, char *area)
{
    return &((shm_line64_t *)(area + s->lay.off_recvcnt))->value;
}
static inline uint32_t *shm_wake_of(const shm_t *s, char *area)
{
    return &((shm_line32_t *)(area + s->lay.off_wake))->word;
}
static inline uint64_t *shm_cntr_of(const shm_t *s, char *area, uint32_t id)
{
    return &((shm_line64_t *)(area + s->lay.off_cntr))[id].value;
}
static inline shm_reply_t *shm_reply_of(const shm_t *s, char *area, uint32_t i)
{
    return &((shm_reply_t *)(area + s->lay.off_reply))[i];
}
static inline shm_reply_t *shm_bstate_of(const shm_t *s, char *area, uint32_t i)
{
    return &((shm_reply_t *)(area + s->lay.off_bstate))[i];
}
static inline char *shm_bdata_of(const shm_t *s, char *area, uint32_t i)
{
    return area + s->lay.off_bdata + (size_t)i * s->lay.chunk;
}
static inline const vnic_region_t *shm_regions_of(const shm_t *s, char *area)
{
    return (const vnic_region_t *)(area + s->lay.off_regions);
}
static inline shm_ctrl_t *shm_ctrl_of(const shm_t *s, char *area)
{
    return (shm_ctrl_t *)(area + s->lay.off_ctrl);
}
static inline vnic_trig_line_t *shm_trig_of(const shm_t *s, char *area)
{
    return (vnic_trig_line_t *)(area + s->lay.off_trig);
}
static inline shm_share_t *shm_share_of(const shm_t *s, char *area)
{
    return (shm_share_t *)(area + s->lay.off_share);
}

/* Wakes the owner of area if it sleeps. The caller has made its delivery visible and
 * executed a full fence (a seq_cst store or read-modify-write, or the fence below). */
static inline void shm_wake_area(const shm_t *s, char *area)
{
    uint32_t *w = shm_wake_of(s, area);
    if (BASE_UNLIKELY(__atomic_load_n(w, __ATOMIC_SEQ_CST))) {
        __atomic_store_n(w, 0, __ATOMIC_RELAXED);
        base_futex_wake(w, INT_MAX);
    }
}

static inline void shm_fence_wake(const shm_t *s, shm_peer_t *p)
{
    if (p == s->self)
        return;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    shm_wake_area(s, p->area);
}

/* After a counter of the rank owning area moved (seq_cst before): wakes the local ranks
 * that may run that rank's triggered operations (trigger.c, its trigger line's watch). */
static inline void shm_wake_watchers(const shm_t *s, char *area)
{
    uint64_t w = __atomic_load_n(&shm_trig_of(s, area)->watch, __ATOMIC_RELAXED);
    while (BASE_UNLIKELY(w)) {
        int i = __builtin_ctzll(w);
        w &= w - 1;
        if (i < s->nlocal && s->peers[i].area != s->area)
            shm_wake_area(s, s->peers[i].area);
    }
}

/* ------------------------------------------------------------ cell ring */

/* Address and length of the contiguous ring piece holding payload bytes
 * [pos, pos+n) of the message whose first cell has ticket t. */
static inline size_t shm_ring_piece(shm_cell_t *cells, uint32_t K, uint64_t t, size_t pos, size_t n,
                                    char **ptr)
{
    if (pos < SHM_CELL_DATA) {
        *ptr = (char *)cells[t & (K - 1)].u.data + pos;
        return BASE_MIN(n, SHM_CELL_DATA - pos);
    }
    size_t q = pos - SHM_CELL_DATA;
    uint32_t idx = (uint32_t)((t + 1 + q / SHM_LINE) & (K - 1));
    size_t within = q % SHM_LINE;
    *ptr = (char *)&cells[idx] + within;
    return BASE_MIN(n, (size_t)(K - idx) * SHM_LINE - within);
}

static void shm_ring_fill(shm_cell_t *cells, uint32_t K, uint64_t t, vnic_lcur_t *lc, size_t len)
{
    for (size_t pos = 0; pos < len;) {
        char *p;
        size_t k = shm_ring_piece(cells, K, t, pos, len - pos, &p);
        vnic_lcur_gather(lc, p, k);
        pos += k;
    }
}

static void shm_ring_read(shm_cell_t *cells, uint32_t K, uint64_t t, size_t pos, char *dst,
                          size_t len)
{
    size_t end = pos + len;
    while (pos < end) {
        char *p;
        size_t k = shm_ring_piece(cells, K, t, pos, end - pos, &p);
        memcpy(dst, p, k);
        dst += k;
        pos += k;
    }
}

typedef struct shm_room {
    shm_t *s;
    shm_peer_t *p;
    uint64_t need; /* cells wanted */
} shm_room_t;

/* Room for r->need more cells after every ticket taken so far. */
static int shm_room_ready(void *arg)
{
    shm_room_t *r = arg;
    r->p->recvcnt_cache = __atomic_load_n(shm_recvcnt_of(r->s, r->p->area), __ATOMIC_ACQUIRE);
    uint64_t taken = __atomic_load_n(shm_sendcnt_of(r->s, r->p->area), __ATOMIC_RELAXED);
    return taken + r->need <= r->p->recvcnt_cache + r->s->K;
}

/* Cells taken by a message of len payload bytes. */
static inline uint32_t shm_ncells(size_t len)
{
    return len <= SHM_CELL_DATA ? 1
                                : 1 + (uint32_t)((len - SHM_CELL_DATA + SHM_LINE - 1) / SHM_LINE);
}

/* Copies n <= SHM_LINE bytes inline (a libc call costs more than the copy). The empty
 * asm makes d opaque to the optimiser at each step: without it gcc and clang see the
 * loop as a memcpy of n & ~7 bytes and call libc after all (~35 instructions a call). */
static inline void shm_copy_small(void *dst, const void *src, size_t n)
{
    char *d = dst;
    const char *p = src;
    for (; n >= 8; n -= 8, d += 8, p += 8) {
        memcpy(d, p, 8);
        __asm__("" : "+r"(d));
    }
    if (n >= 4) {
        memcpy(d, p, 4);
        d += 4;
        p += 4;
        n -= 4;
    }
    while (n--)
        *d++ = *p++;
}

/* ---- fastbox (design comment at the top) */

static void shm_fb_publish_acks(shm_t *s);

static inline uint16_t shm_fb_next(uint16_t seq)
{
    return seq == 0x7fff ? 1 : (uint16_t)(seq + 1);
}

/* 1 when p has consumed my last fastbox message (refreshes the cache). */
static inline int shm_fb_idle(shm_peer_t *p)
{
    if (BASE_LIKELY(p->fb_acked == p->fb_sent))
        return 1;
    p->fb_acked = __atomic_load_n(&p->fb_theirs->ack, __ATOMIC_ACQUIRE) & 0x7fff;
    return p->fb_acked == p->fb_sent;
}

/* Sends a small active message (imm 0) through p's fastbox if p polls it and my
 * previous one there is consumed; 0 when it cannot (use the inbox). */
static inline int shm_fb_send(shm_t *s, shm_peer_t *p, unsigned chan, const void *a, size_t alen,
                              const void *b, size_t blen)
{
    uint16_t ack = __atomic_load_n(&p->fb_theirs->ack, __ATOMIC_ACQUIRE);
    if (!(ack & SHM_FB_POLLING) || (ack & 0x7fff) != p->fb_sent)
        return 0;
    shm_fb_half_t *h = p->fb_mine;
    shm_copy_small(h->data, a, alen);
    shm_copy_small(h->data + alen, b, blen);
    h->ibx = p->ibx_sent;
    if (p->ack_due) { /* the acknowledgement rides along (one line transfer for both) */
        __atomic_store_n(&h->ack, (uint16_t)(SHM_FB_POLLING | p->fb_seen), __ATOMIC_RELAXED);
        p->ack_due = 0;
        s->fb_acks_due--;
    }
    uint16_t seq = shm_fb_next(p->fb_sent);
    /* release, no fence before the wake-word read: see WAKE-UPS and shm_sleep */
    __atomic_store_n(&h->ctl, (uint32_t)seq | (uint32_t)(alen + blen) << 16 | (uint32_t)chan << 24,
                     __ATOMIC_RELEASE);
    p->fb_sent = seq;
    p->fb_acked = ack & 0x7fff;
    shm_wake_area(s, p->area);
    return 1;
}

/* Takes n consecutive tickets of p's inbox and returns the first. Reserves them only
 * when they fit: the receiver consumes in ticket order, so a ticket held while waiting
 * would stop it at that ticket, and if the wait's progress sends again (a hook or
 * handler may), the later ticket waits for room behind our own unwritten one:
 * deadlock. So wait holding nothing, then take the tickets with a compare-and-swap. */
#define SHM_NO_TICKET UINT64_MAX

/* Takes n tickets (see INBOX), waiting for room unless `try`: then SHM_NO_TICKET when
 * there is none. */
static inline uint64_t shm_tickets_or(shm_t *s, shm_peer_t *p, uint32_t n, int try)
{
    uint64_t *sendcnt = shm_sendcnt_of(s, p->area);
    uint64_t t = __atomic_load_n(sendcnt, __ATOMIC_RELAXED);
    for (;;) {
        if (BASE_UNLIKELY(t + n > p->recvcnt_cache + s->K)) {
            shm_room_t r = {s, p, n};
            if (!shm_room_ready(&r)) {
                if (try)
                    return SHM_NO_TICKET;
                vnic_wait(s->v, shm_room_ready, &r, -1);
            }
            t = __atomic_load_n(sendcnt, __ATOMIC_RELAXED);
            continue;
        }
        if (BASE_LIKELY(__atomic_compare_exchange_n(sendcnt, &t, t + n, 0, __ATOMIC_RELAXED,
                                                    __ATOMIC_RELAXED)))
            return t;
    }
}

static inline uint64_t shm_tickets(shm_t *s, shm_peer_t *p, uint32_t n)
{
    return shm_tickets_or(s, p, n, 0);
}

/* Publishes the message whose first cell c has ticket t and n cells (payload and
 * header written), then wakes a receiver that sleeps (no fence between: see WAKE-UPS
 * at the top and shm_sleep). */
static inline void shm_publish(shm_t *s, shm_peer_t *p, shm_cell_t *c, uint64_t t, uint32_t n)
{
    __atomic_store_n(&c->seq, (uint32_t)(t + 1), __ATOMIC_RELEASE);
    p->sent_end = t + n;
    p->ibx_sent++;
    if (p != s->self)
        shm_wake_area(s, p->area);
}

/* Sends one message: hdr's fields from type on (the caller sets len; seq and ncells
 * are set here). With lc, hdr->len payload bytes are gathered from lc; without, the
 * message has no payload and hdr->u carries parameters. */
static void shm_send(shm_t *s, shm_peer_t *p, shm_cell_t *hdr, vnic_lcur_t *lc)
{
    size_t len = lc ? hdr->len : 0;
    uint32_t n = shm_ncells(len);
    shm_cell_t *cells = shm_cells_of(s, p->area);
    uint64_t t = shm_tickets(s, p, n);
    if (len)
        shm_ring_fill(cells, s->K, t, lc, len);
    shm_cell_t *c = &cells[t & s->kmask];
    hdr->ncells = (uint8_t)n;
    memcpy((char *)c + 4, (char *)hdr + 4, lc ? 36 : SHM_LINE - 4);
    shm_publish(s, p, c, t, n);
}

/* vnic_send_am: an AM message built in place (no header copy, no descriptor walk);
 * a payload of at most SHM_CELL_DATA bytes is one cell, one cache line. With `try`
 * (vnic_send_am_try): VNIC_AGAIN instead of waiting for room. */
static inline int shm_send_am_or(shm_t *s, int peer, unsigned chan, uint64_t imm, const void *a,
                                 size_t alen, const void *b, size_t blen, int try)
{
    shm_peer_t *p = &s->peers[s->local_of[peer]];
    size_t len = alen + blen;
    if (len <= SHM_FB_DATA && imm == 0 && p->fb_mine) {
        if (BASE_LIKELY(!p->fb_skip)) {
            if (shm_fb_send(s, p, chan, a, alen, b, blen))
                return FMPL_SUCCESS;
            p->fb_skip = SHM_FB_SKIP;
        } else {
            p->fb_skip--;
        }
    }
    if (BASE_UNLIKELY(s->fb_acks_due)) /* no reply rides on the fastbox: acknowledge now */
        shm_fb_publish_acks(s);
    uint32_t n = shm_ncells(len);
    shm_cell_t *cells = shm_cells_of(s, p->area);
    uint64_t t = shm_tickets_or(s, p, n, try);
    if (BASE_UNLIKELY(t == SHM_NO_TICKET))
        return VNIC_AGAIN;
    shm_cell_t *c = &cells[t & s->kmask];
    if (BASE_LIKELY(n == 1)) {
        shm_copy_small(c->u.data, a, alen);
        shm_copy_small(c->u.data + alen, b, blen);
    } else if (n == 2) { /* a header and a small payload: gathered, then two pieces */
        char tmp[SHM_CELL_DATA + SHM_LINE];
        shm_copy_small(tmp, a, alen);
        shm_copy_small(tmp + alen, b, blen);
        shm_copy_small(c->u.data, tmp, SHM_CELL_DATA);
        shm_copy_small(&cells[(t + 1) & s->kmask], tmp + SHM_CELL_DATA, len - SHM_CELL_DATA);
    } else {
        char *dst;
        for (size_t pos = 0; pos < len;) {
            size_t k = shm_ring_piece(cells, s->K, t, pos, len - pos, &dst);
            for (size_t done = 0; done < k;) { /* the piece may span the a/b boundary */
                size_t q = pos + done;
                size_t m = q < alen ? BASE_MIN(k - done, alen - q) : k - done;
                memcpy(dst + done, q < alen ? (const char *)a + q : (const char *)b + (q - alen),
                       m);
                done += m;
            }
            pos += k;
        }
    }
    /* type, ncells, flags, chan and src in one store: a stream's sender is bound by its
     * stores (docs/performance.md, "Small nonblocking streams") */
    uint64_t head = SHM_AM | (uint64_t)n << 8 | (uint64_t)VNIC_F_NOTIFY << 16 |
                    (uint64_t)(uint8_t)chan << 24 | (uint64_t)(uint32_t)s->rank << 32;
    memcpy((char *)c + offsetof(shm_cell_t, type), &head, sizeof head);
    c->len = (uint32_t)len;
    c->imm = imm;
    shm_publish(s, p, c, t, n);
    return FMPL_SUCCESS;
}

static int shm_send_am(vnic_transport_t *tr, int peer, unsigned chan, uint64_t imm, const void *a,
                       size_t alen, const void *b, size_t blen)
{
    return shm_send_am_or((shm_t *)tr, peer, chan, imm, a, alen, b, blen, 0);
}

static int shm_send_am_try(vnic_transport_t *tr, int peer, unsigned chan, uint64_t imm,
                           const void *a, size_t alen, const void *b, size_t blen)
{
    return shm_send_am_or((shm_t *)tr, peer, chan, imm, a, alen, b, blen, 1);
}

/* 1 when one of my cells to p may still be unconsumed (its data not yet written or
 * its effects not yet applied). */
static inline int shm_ordered_pending(shm_t *s, shm_peer_t *p)
{
    if (BASE_UNLIKELY(!shm_fb_idle(p)))
        return 1;
    if (BASE_LIKELY(p->sent_end <= p->recvcnt_cache))
        return 0;
    p->recvcnt_cache = __atomic_load_n(shm_recvcnt_of(s, p->area), __ATOMIC_ACQUIRE);
    return p->sent_end > p->recvcnt_cache;
}

/* Effects of a PUT whose data the initiator wrote itself (direct or CMA). */
static void shm_direct_effects(shm_t *s, shm_peer_t *p, const vnic_op_t *op, uint64_t off,
                               size_t len)
{
    uint32_t fl = op->flags & (VNIC_F_NOTIFY | VNIC_F_RCNTR);
    if (!fl) {
        shm_fence_wake(s, p);
        return;
    }
    if ((fl & VNIC_F_NOTIFY) || shm_ordered_pending(s, p)) {
        shm_cell_t h;
        memset(&h, 0, sizeof h);
        h.type = SHM_EFFECT;
        h.flags = (uint8_t)fl;
        h.chan = op->chan;
        h.src = (uint32_t)s->rank;
        h.key = op->remote.key;
        h.off = off;
        h.rcntr = op->rcntr;
        h.imm = op->imm;
        uint64_t l = len; /* reported to the handler (64 bits: in the parameter area) */
        memcpy(h.u.data, &l, 8);
        shm_send(s, p, &h, NULL);
        return;
    }
    __atomic_fetch_add(shm_cntr_of(s, p->area, op->rcntr), 1, __ATOMIC_SEQ_CST);
    if (p != s->self)
        shm_wake_area(s, p->area);
    shm_wake_watchers(s, p->area);
}

/* ------------------------------------------------------------ CMA */

/* Iovecs per side of one process_vm_readv/writev call (the kernel takes up to IOV_MAX):
 * a strided layout of small pieces then costs one system call per this many pieces. */
enum { SHM_CMA_IOV = 256 };

/* Drops the first k bytes of iov[*i..n). */
static void shm_iov_advance(struct iovec *iov, int *i, int n, size_t k)
{
    while (k && *i < n) {
        size_t m = BASE_MIN(k, iov[*i].iov_len);
        iov[*i].iov_base = (char *)iov[*i].iov_base + m;
        iov[*i].iov_len -= m;
        k -= m;
        if (!iov[*i].iov_len)
            ++*i;
    }
}

/* Moves the bytes of the peer's segments seg[0..nseg) at base (the first one from byte
 * `skip` on; at most limit bytes in all) between them and the local cursor: both sides
 * as iovec lists, SHM_CMA_IOV pieces a side per system call. */
static int shm_cma_segs(shm_peer_t *p, int write, vnic_lcur_t *lc, uint64_t base,
                        const vnic_rseg_t *seg, int nseg, size_t skip, size_t limit)
{
    struct iovec liov[SHM_CMA_IOV], riov[SHM_CMA_IOV];
    int si = 0;
    size_t spos = skip;
    while (limit && si < nseg) {
        /* The next remote pieces, then as many local ones as cover them. */
        int nr = 0;
        size_t want = 0;
        for (int i = si; i < nseg && nr < SHM_CMA_IOV && want < limit; i++) {
            size_t from = i == si ? spos : 0, m = BASE_MIN(seg[i].len - from, limit - want);
            if (!m)
                continue;
            riov[nr].iov_base = (void *)(uintptr_t)(base + seg[i].off + from);
            riov[nr++].iov_len = m;
            want += m;
        }
        if (!want)
            break;
        size_t got;
        int nl = vnic_lcur_slice(lc, liov, SHM_CMA_IOV, want, &got);
        for (size_t k = got; si < nseg;) { /* the remote cursor moves by what is covered */
            size_t m = BASE_MIN(seg[si].len - spos, k);
            k -= m;
            spos += m;
            if (spos < seg[si].len)
                break;
            si++;
            spos = 0;
        }
        limit -= got;
        int li = 0, ri = 0;
        for (size_t left = got; left;) {
            ssize_t r = write ? process_vm_writev(p->pid, liov + li, (unsigned long)(nl - li),
                                                  riov + ri, (unsigned long)(nr - ri), 0)
                              : process_vm_readv(p->pid, liov + li, (unsigned long)(nl - li),
                                                 riov + ri, (unsigned long)(nr - ri), 0);
            if (r < 0 && errno == EINTR)
                continue;
            if (r <= 0) {
                base_log("vnic/shm: process_vm_%sv to rank %d failed: %s", write ? "write" : "read",
                         p->world, r < 0 ? strerror(errno) : "no progress");
                return FMPL_ERR_SYS;
            }
            size_t k = BASE_MIN((size_t)r, left);
            left -= k;
            shm_iov_advance(liov, &li, nl, k);
            shm_iov_advance(riov, &ri, nr, k); /* riov may reach past got: the call stops */
        }
        if (!got)
            return FMPL_ERR_ARG; /* the local descriptor is shorter than the remote one */
    }
    return FMPL_SUCCESS;
}

/* Moves len bytes between the local cursor and raddr in peer's address space. */
static int shm_cma(shm_peer_t *p, int write, vnic_lcur_t *lc, uint64_t raddr, size_t len)
{
    vnic_rseg_t one = {raddr, len};
    return shm_cma_segs(p, write, lc, 0, &one, 1, 0, len);
}

/* Moves len bytes between my address local and the peer's raddr. */
static int shm_cma_range(shm_peer_t *p, int write, void *local, uint64_t raddr, size_t len)
{
    struct iovec one = {local, len};
    vnic_lcur_t lc = {.iov = &one, .cnt = 1};
    return shm_cma(p, write, &lc, raddr, len);
}

/* Span reads. process_vm_readv pins the pages of each remote iovec apart, about 0.4 us a
 * piece here, so a GET of many small pieces (a strided or indexed target layout) reads
 * the span around a dense group of them in one piece into a staging buffer and copies
 * the pieces out of it; sparse or large pieces go as iovecs. Only gets do this: a put
 * cannot write the gaps between its pieces. */
enum {
    SHM_SPAN_MAX = 256 << 10, /* bytes of one span read */
    SHM_SPAN_PIECE = 2048,    /* get pieces averaging less take span reads... */
    SHM_SPAN_DENSITY = 4      /* ...when the span is at most this many times their bytes */
};

static int shm_cma_get_segs(shm_t *s, shm_peer_t *p, vnic_lcur_t *lc, uint64_t base,
                            const vnic_rseg_t *seg, int nseg)
{
    for (int i = 0; i < nseg;) {
        /* The group seg[i..j): the pieces that follow in [lo, lo + SHM_SPAN_MAX) */
        uint64_t lo = seg[i].off, hi = lo;
        size_t bytes = 0;
        int j = i;
        for (; j < nseg && seg[j].off >= lo && seg[j].off + seg[j].len <= lo + SHM_SPAN_MAX; j++) {
            hi = BASE_MAX(hi, seg[j].off + seg[j].len);
            bytes += seg[j].len;
        }
        int dense = j - i > 1 && bytes < (size_t)(j - i) * SHM_SPAN_PIECE &&
                    hi - lo <= (uint64_t)bytes * SHM_SPAN_DENSITY;
        if (dense && !s->span && !(s->span = malloc(SHM_SPAN_MAX)))
            dense = 0;
        if (!dense) {
            j = BASE_MAX(j, i + 1);
            int rc = shm_cma_segs(p, 0, lc, base, seg + i, j - i, 0, SIZE_MAX);
            if (rc)
                return rc;
            i = j;
            continue;
        }
        int rc = shm_cma_range(p, 0, s->span, base + lo, hi - lo);
        if (rc)
            return rc;
        for (; i < j; i++)
            vnic_lcur_scatter(lc, s->span + (seg[i].off - lo), seg[i].len);
    }
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ shared copies */

/* Peer p's region key checked for access and bounds [off, off + len): r is filled, and
 * *mapped is the bytes' address here where this process maps them (p is this process, or
 * the region lies in p's shared heap), else NULL (p's private memory). 0, or -1 refused. */
static int shm_peer_region(shm_t *s, shm_peer_t *p, vnic_key_t key, uint64_t off, uint64_t len,
                           unsigned access, vnic_region_t *r, char **mapped)
{
    if (!vnic_region_read(shm_regions_of(s, p->area), s->lay.nregions, key, r) ||
        !(r->access & access) || !vnic_region_bounds_ok(r->len, off, len))
        return -1;
    *mapped = NULL;
    if (p == s->self)
        *mapped = (char *)(uintptr_t)r->base + off;
    else if (r->seg_off != VNIC_SEG_OFF_NONE && r->seg_off <= s->seg_size &&
             r->len <= s->seg_size - r->seg_off)
        *mapped = s->seg + r->seg_off + off;
    return 0;
}

static void *shm_peer_ptr(vnic_transport_t *tr, int peer, vnic_key_t key, uint64_t off,
                          uint64_t len);

/* Takes the next piece of copy seq from share line sh: returns its length (0 when none is
 * left, or when the line has moved on to another copy) and its offset in *at. */
static size_t shm_share_take(shm_share_t *sh, uint32_t seq, uint64_t total, uint64_t piece,
                             uint64_t *at)
{
    uint64_t w = __atomic_load_n(&sh->claim, __ATOMIC_ACQUIRE);
    for (;;) {
        uint64_t pos = (w & 0xffffffffu) * piece;
        if ((uint32_t)(w >> 32) != seq || pos >= total)
            return 0;
        if (__atomic_compare_exchange_n(&sh->claim, &w, w + 1, 0, __ATOMIC_ACQ_REL,
                                        __ATOMIC_ACQUIRE)) {
            *at = pos;
            return (size_t)BASE_MIN(piece, total - pos);
        }
    }
}

/* 1 while copy seq has pieces left to take. */
static int shm_share_open(shm_share_t *sh, uint32_t seq, uint64_t total, uint64_t piece)
{
    uint64_t w = __atomic_load_n(&sh->claim, __ATOMIC_ACQUIRE);
    return (uint32_t)(w >> 32) == seq && (w & 0xffffffffu) * piece < total;
}

/* Target side of a shared copy (cell h from src): moves the pieces it takes between its
 * region and the initiator's buffer (h.imm) with CMA: writes them there for a get
 * (SHM_SGET), reads them from there for a put (SHM_SPUT). Pieces it cannot copy (a region
 * gone since the initiator checked it) still count as done, with the error. */
static void shm_share_serve(shm_t *s, shm_peer_t *src, const shm_cell_t *h, int ok,
                            const vnic_region_t *r)
{
    shm_share_t *sh = shm_share_of(s, src->area);
    uint64_t piece = h->u.bounce.slot, at;
    int write = h->type == SHM_SGET;
    size_t k;
    while ((k = shm_share_take(sh, h->u.bounce.slotseq, h->len, piece, &at))) {
        int rc =
            ok ? shm_cma_range(src, write, (char *)(uintptr_t)r->base + h->off + at, h->imm + at, k)
               : FMPL_ERR_KEY;
        if (rc)
            __atomic_store_n(&sh->status, rc, __ATOMIC_RELAXED);
        __atomic_fetch_add(&sh->done, k, __ATOMIC_RELEASE);
        s->v->traffic[VNIC_TRAFFIC_SHM].served += k;
    }
}

/* A blocking copy of one contiguous range between this rank's buf and p's region (key,
 * off), shared with p: a get (SHM_SGET) or a put (SHM_SPUT). This rank copies pieces
 * while p, told by a cell, copies others with CMA; whoever is free takes the next piece.
 * This rank's pieces are a memcpy when the region is mapped here (`mapped`: its address,
 * the shared heap) and otherwise a CMA read or write at raddr. Each byte is copied
 * once, and two cores copy at once; a target that is busy elsewhere just leaves every
 * piece to this rank (no stall to wait out, unlike the pipeline). This rank does not
 * progress meanwhile: it waits for nothing but the target's piece in hand, which needs
 * nothing from it; so the share line serves one copy at a time. */
static int shm_share_run(shm_t *s, shm_peer_t *p, int type, vnic_key_t key, uint64_t off, char *buf,
                         char *mapped, uint64_t raddr, size_t total, uint64_t piece_max)
{
    if (s->fb_acks_due) /* the copies below do not progress */
        shm_fb_publish_acks(s);
    shm_share_t *sh = shm_share_of(s, s->area);
    uint32_t seq = ++s->share_seq;
    if (seq == 0)
        seq = ++s->share_seq;
    /* Halves up to piece_max: few system calls (each pins its pages anew), yet a late
     * target still finds work (measured on the Xeon guest: 256 KiB pieces beat 128 KiB by
     * 10-30% from 1 MiB on for CMA gets, and a 256 KiB get is best cut in two). */
    uint64_t piece =
        BASE_MIN(piece_max, BASE_ALIGN_UP(((uint64_t)total + 1) / 2, (uint64_t)SHM_PAGE));
    s->share_busy = 1;
    __atomic_store_n(&sh->done, 0, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->status, FMPL_SUCCESS, __ATOMIC_RELAXED);
    __atomic_store_n(&sh->claim, (uint64_t)seq << 32, __ATOMIC_RELEASE);
    shm_cell_t h;
    memset(&h, 0, sizeof h);
    h.type = (uint8_t)type;
    h.src = (uint32_t)s->rank;
    h.key = key;
    h.off = off;
    h.len = (uint32_t)total;
    h.imm = (uint64_t)(uintptr_t)buf;
    h.u.bounce.slot = (uint32_t)piece;
    h.u.bounce.slotseq = seq;
    shm_send(s, p, &h, NULL);
    size_t mine = 0, k;
    uint64_t at;
    int rc = FMPL_SUCCESS;
    while ((k = shm_share_take(sh, seq, total, piece, &at))) {
        if (mapped && type == SHM_SPUT)
            memcpy(mapped + at, buf + at, k);
        else if (mapped)
            memcpy(buf + at, mapped + at, k);
        else if (rc == FMPL_SUCCESS)
            rc = shm_cma_range(p, type == SHM_SPUT, buf + at, raddr + at, k);
        mine += k;
    }
    /* The target's pieces in hand: one copy each. After a while, yield if it is queued
     * on this CPU (vnic_cpu_needed); check that it lives now and then (it would never
     * finish otherwise). */
    uint64_t need = total - mine;
    for (uint64_t polls = 1; __atomic_load_n(&sh->done, __ATOMIC_ACQUIRE) != need; polls++) {
        base_cpu_relax();
        if (polls < 4096 || polls % 64 != 0)
            continue;
        if (vnic_cpu_needed(s->v))
            sched_yield();
        if (polls % 65536 == 0 && kill(p->pid, 0) != 0 && errno == ESRCH) {
            rc = FMPL_ERR_PEER;
            break;
        }
    }
    vnic_cpu_release(s->v);
    if (rc == FMPL_SUCCESS)
        rc = __atomic_load_n(&sh->status, __ATOMIC_RELAXED);
    s->share_busy = 0;
    return rc;
}

/* vnic_copy_shared: large contiguous copies to and from a local peer's shared heap. */
static int shm_copy_shared(vnic_transport_t *tr, int peer, int get, void *buf, vnic_key_t key,
                           uint64_t off, size_t len)
{
    shm_t *s = (shm_t *)tr;
    if (!s->cma || s->share_busy || len < s->share_heap_min || len > UINT32_MAX ||
        s->local_of[peer] < 0)
        return VNIC_AGAIN;
    shm_peer_t *p = &s->peers[s->local_of[peer]];
    char *mapped = p == s->self ? NULL : shm_peer_ptr(tr, peer, key, off, len);
    if (!mapped)
        return VNIC_AGAIN;
    return shm_share_run(s, p, get ? SHM_SGET : SHM_SPUT, key, off, buf, mapped, 0, len,
                         s->share_heap_piece);
}

/* vnic_copy_alone: the region's mapping here (self, shared heap), else CMA. */
static int shm_copy_alone(vnic_transport_t *tr, int peer, int get, void *buf, vnic_key_t key,
                          uint64_t off, size_t len)
{
    shm_t *s = (shm_t *)tr;
    if (s->local_of[peer] < 0)
        return VNIC_AGAIN;
    shm_peer_t *p = &s->peers[s->local_of[peer]];
    vnic_region_t r;
    char *mapped;
    if (shm_peer_region(s, p, key, off, len, get ? VNIC_ACC_REMOTE_READ : VNIC_ACC_REMOTE_WRITE, &r,
                        &mapped))
        return FMPL_ERR_KEY;
    if (mapped) {
        if (len)
            memmove(get ? buf : mapped, get ? mapped : buf, len);
        return FMPL_SUCCESS;
    }
    if (!s->cma)
        return VNIC_AGAIN;
    return len ? shm_cma_range(p, !get, buf, r.base + off, len) : FMPL_SUCCESS;
}

/* ------------------------------------------------------------ slots */

typedef struct shm_flag {
    int *flag;
} shm_flag_t;

static int shm_flag_ready(void *arg)
{
    return __atomic_load_n(((shm_flag_t *)arg)->flag, __ATOMIC_ACQUIRE);
}

static int shm_reply_free_ready(void *arg)
{
    return ((shm_t *)arg)->reply_busy < SHM_NREPLY;
}

static int shm_bounce_free_ready(void *arg)
{
    shm_t *s = arg;
    return s->bounce_busy < (int)s->lay.nbounce;
}

static uint32_t shm_reply_acquire(shm_t *s)
{
    if (BASE_UNLIKELY(s->reply_busy == SHM_NREPLY))
        vnic_wait(s->v, shm_reply_free_ready, s, -1);
    for (;;) {
        uint32_t i = s->reply_next++ % SHM_NREPLY;
        if (!s->reply[i].busy) {
            s->reply[i].busy = 1;
            s->reply[i].seq = ++s->reply_seq;
            s->reply_busy++;
            return i;
        }
    }
}

static uint32_t shm_bounce_acquire(shm_t *s)
{
    if (s->bounce_busy == (int)s->lay.nbounce)
        vnic_wait(s->v, shm_bounce_free_ready, s, -1);
    for (;;) {
        uint32_t i = s->bounce_next++ % s->lay.nbounce;
        if (!s->bounce[i].busy) {
            s->bounce[i].busy = 1;
            s->bounce[i].seq = ++s->bounce_seq;
            s->bounce[i].get = NULL;
            s->bounce_busy++;
            return i;
        }
    }
}

/* ------------------------------------------------------------ bounce GET */

/* Requests chunks for the GETs in the list while bounce chunks are free. Not
 * re-entered: the sends below may wait for inbox room, and the progress in that wait
 * (which frees chunks and would issue again) must not issue the same range twice; a
 * GET's range is claimed before its request goes out. */
static void shm_bget_issue(shm_t *s)
{
    if (s->bget_issuing)
        return;
    s->bget_issuing = 1;
    for (shm_bget_t *g = s->bget_head; g; g = g->next) {
        while (g->issued < g->total && s->bounce_busy < (int)s->lay.nbounce) {
            while (g->seg[g->seg_idx].len == g->seg_pos) {
                g->seg_idx++;
                g->seg_pos = 0;
            }
            size_t k = BASE_MIN(s->lay.chunk, g->seg[g->seg_idx].len - g->seg_pos);
            uint32_t slot = shm_bounce_acquire(s);
            shm_slot_t *sl = &s->bounce[slot];
            sl->get = g;
            sl->pos = g->issued;
            sl->len = k;
            shm_cell_t h;
            memset(&h, 0, sizeof h);
            h.type = SHM_BGET;
            h.src = (uint32_t)s->rank;
            h.key = g->key;
            h.off = g->seg[g->seg_idx].off + g->seg_pos;
            h.u.bounce.slot = slot;
            h.u.bounce.slotseq = sl->seq;
            h.len = (uint32_t)k;
            g->issued += k;
            g->seg_pos += k;
            shm_send(s, g->peer, &h, NULL);
        }
    }
    s->bget_issuing = 0;
}

static void shm_bget_unlink(shm_t *s, shm_bget_t *g)
{
    shm_bget_t **pp = &s->bget_head, *prev = NULL;
    while (*pp && *pp != g) {
        prev = *pp;
        pp = &(*pp)->next;
    }
    if (*pp) {
        *pp = g->next;
        if (s->bget_tail == g)
            s->bget_tail = prev;
    }
}

/* Completes my reply lines and bounce chunks the targets have answered. */
static int shm_poll_slots(shm_t *s)
{
    int n = 0;
    for (uint32_t i = 0; s->reply_busy && i < SHM_NREPLY; i++) {
        shm_slot_t *sl = &s->reply[i];
        shm_reply_t *r = shm_reply_of(s, s->area, i);
        if (!sl->busy || __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != sl->seq)
            continue;
        int status = r->status;
        if (sl->result && status == FMPL_SUCCESS)
            *sl->result = r->value;
        sl->busy = 0;
        s->reply_busy--;
        vnic_cntr_complete(sl->lcntr, status);
        if (sl->done) {
            *sl->status = status;
            __atomic_store_n(sl->done, 1, __ATOMIC_RELEASE);
        }
        n++;
    }
    int freed = 0;
    for (uint32_t i = 0; s->bounce_busy && i < s->lay.nbounce; i++) {
        shm_slot_t *sl = &s->bounce[i];
        shm_reply_t *r = shm_bstate_of(s, s->area, i);
        if (!sl->busy || __atomic_load_n(&r->seq, __ATOMIC_ACQUIRE) != sl->seq)
            continue;
        shm_bget_t *g = sl->get;
        if (g) {
            if (r->status != FMPL_SUCCESS) {
                g->status = r->status;
            } else {
                vnic_lcur_t lc = {.iov = g->iov, .cnt = g->iovcnt};
                vnic_lcur_seek(&lc, sl->pos);
                vnic_lcur_scatter(&lc, shm_bdata_of(s, s->area, i), sl->len);
            }
            g->done += sl->len;
        }
        sl->busy = 0;
        s->bounce_busy--;
        freed++;
        n++;
        if (g && g->done == g->total) {
            shm_bget_unlink(s, g);
            vnic_cntr_complete(g->lcntr, g->status);
            if (g->waited)
                __atomic_store_n(&g->finished, 1, __ATOMIC_RELEASE);
            else
                free(g);
        }
    }
    if (freed && s->bget_head)
        shm_bget_issue(s);
    return n;
}

/* ------------------------------------------------------------ target side */

static inline int shm_check_region(shm_t *s, vnic_key_t key, uint64_t off, uint64_t len,
                                   unsigned access, vnic_region_t *r)
{
    return vnic_region_read(shm_regions_of(s, s->area), s->lay.nregions, key, r) &&
           (r->access & access) && vnic_region_bounds_ok(r->len, off, len);
}

static shm_peer_t *shm_src_peer(shm_t *s, uint32_t src)
{
    if (src >= (uint32_t)s->v->size || s->local_of[src] < 0)
        return NULL;
    return &s->peers[s->local_of[src]];
}

static void shm_refused(shm_t *s, const shm_cell_t *h, const char *what)
{
    base_log("vnic/shm: %s from rank %u refused: key %#x offset %llu length %u not valid here "
             "(deregistered while in flight?)",
             what, h->src, h->key, (unsigned long long)h->off, h->len);
    (void)s;
}

/* Gathered bounce puts (SHM_BPUTV): many small pieces in one chunk. The chunk holds their
 * data packed from its start (h.len bytes) and their table, h.off entries of
 * vnic_rseg_t, from its end down: entry k at chunk + chunk size - (k + 1) * 16. */
enum {
    SHM_GATHER_PIECE = 8192, /* put pieces averaging less go gathered... */
    SHM_GATHER_SEGS = 8      /* ...and so does a small put (inline_max) of this many */
};
static inline vnic_rseg_t *shm_bputv_entry(shm_t *s, char *chunk, uint64_t k)
{
    return (vnic_rseg_t *)(void *)(chunk + s->lay.chunk - (k + 1) * sizeof(vnic_rseg_t));
}

/* Target: writes the pieces of gathered put h, all or (a region check failing) none. */
static int shm_bputv_apply(shm_t *s, const shm_cell_t *h, char *chunk)
{
    uint64_t n = h->off, lo = UINT64_MAX, hi = 0, sum = 0;
    for (uint64_t k = 0; k < n; k++) {
        const vnic_rseg_t *e = shm_bputv_entry(s, chunk, k);
        if (e->len > h->len || e->off > UINT64_MAX - e->len)
            return 0;
        lo = BASE_MIN(lo, e->off);
        hi = BASE_MAX(hi, e->off + e->len);
        sum += e->len;
    }
    vnic_region_t r;
    if (sum != h->len || !n ||
        !shm_check_region(s, h->key, lo, hi - lo, VNIC_ACC_REMOTE_WRITE, &r)) {
        shm_refused(s, h, "gathered bounce put");
        return 0;
    }
    const char *src = chunk;
    for (uint64_t k = 0; k < n; k++) {
        const vnic_rseg_t *e = shm_bputv_entry(s, chunk, k);
        memcpy((char *)(uintptr_t)r.base + e->off, src, e->len);
        src += e->len;
    }
    return 1;
}

/* Initiator: fills chunk with the next pieces of seg[*i..nseg) from byte *pos of seg[*i]
 * on (cutting the last one at the chunk's end); returns the entries, *data their bytes. */
static uint64_t shm_bputv_fill(shm_t *s, char *chunk, vnic_lcur_t *lc, const vnic_rseg_t *seg,
                               int nseg, int *i, uint64_t *pos, size_t *data)
{
    uint64_t n = 0;
    size_t used = 0;
    for (; *i < nseg; ++*i, *pos = 0) {
        size_t table = (n + 1) * sizeof(vnic_rseg_t);
        if (table + used >= s->lay.chunk)
            break;
        size_t room = s->lay.chunk - used - table, m = BASE_MIN(seg[*i].len - *pos, room);
        if (!m)
            continue;
        vnic_rseg_t *e = shm_bputv_entry(s, chunk, n++);
        e->off = seg[*i].off + *pos;
        e->len = m;
        vnic_lcur_gather(lc, chunk + used, m);
        used += m;
        *pos += m;
        if (*pos < seg[*i].len)
            break; /* the chunk is full */
    }
    *data = used;
    return n;
}

static uint64_t shm_amo_exec(uint8_t opcode, uint64_t *w, uint64_t operand, uint64_t compare)
{
    switch (opcode) {
    case VNIC_OP_FADD: return __atomic_fetch_add(w, operand, __ATOMIC_SEQ_CST);
    case VNIC_OP_SWAP: return __atomic_exchange_n(w, operand, __ATOMIC_SEQ_CST);
    default: {
        uint64_t old = compare;
        __atomic_compare_exchange_n(w, &old, operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return old;
    }
    }
}

/* Counts a small active message from p; the SHM_FB_ARM-th makes this rank poll p's
 * fastbox (while fewer than SHM_FB_ACTIVE_MAX are polled) and tells p so. */
static void shm_fb_arm(shm_t *s, shm_peer_t *p)
{
    if (p == s->self || ++p->small_got < SHM_FB_ARM || s->fb_nactive >= s->fb_max)
        return;
    p->fb_polled = 1;
    s->fb_active[s->fb_nactive++] = p;
    __atomic_store_n(&p->fb_mine->ack, (uint16_t)(SHM_FB_POLLING | p->fb_seen), __ATOMIC_RELEASE);
}

/* Publishes the acknowledgements still due (from an earlier progress call). */
static BASE_NOINLINE void shm_fb_publish_acks(shm_t *s)
{
    for (int i = 0; i < s->fb_nactive; i++) {
        shm_peer_t *p = s->fb_active[i];
        if (!p->ack_due)
            continue;
        p->ack_due = 0;
        /* seq_cst: a full fence before the wake-word read (p may sleep waiting for it) */
        __atomic_store_n(&p->fb_mine->ack, (uint16_t)(SHM_FB_POLLING | p->fb_seen),
                         __ATOMIC_SEQ_CST);
        shm_wake_area(s, p->area);
    }
    s->fb_acks_due = 0;
}

/* 1 when p's fastbox holds a message I have not consumed. */
static inline int shm_fb_ready(const shm_peer_t *p)
{
    return (__atomic_load_n(&p->fb_theirs->ctl, __ATOMIC_ACQUIRE) & 0x7fff) ==
           shm_fb_next(p->fb_seen);
}

/* Delivers the message in p's fastbox once every inbox message p sent before it has
 * been handled; acknowledges it first (its payload is copied out), so p may reuse the
 * half at once. Returns 1 when delivered. */
static int shm_fb_deliver(shm_t *s, shm_peer_t *p)
{
    const shm_fb_half_t *h = p->fb_theirs;
    uint32_t ctl = __atomic_load_n(&h->ctl, __ATOMIC_ACQUIRE);
    if ((uint16_t)__atomic_load_n(&h->ibx, __ATOMIC_RELAXED) != p->ibx_got)
        return 0; /* the inbox has earlier messages from p: they go first */
    uint32_t len = (ctl >> 16) & 0xff;
    if (BASE_UNLIKELY(len > SHM_FB_DATA))
        base_fatal("vnic/shm: corrupt fastbox message (length %u) from rank %d", len, p->world);
    uint8_t data[SHM_FB_DATA];
    memcpy(data, h->data, SHM_FB_DATA);
    p->fb_seen = (uint16_t)(ctl & 0x7fff);
    /* The acknowledgement waits for a reply to carry it, or for the next progress
     * call (shm_fb_publish_acks): written now, it would pull the line away from p,
     * which polls it, and the reply would have to fetch it back. */
    if (!p->ack_due) {
        p->ack_due = 1;
        s->fb_acks_due++;
    }
    vnic_notify_t nt = {.src = p->world,
                        .chan = (uint8_t)(ctl >> 24),
                        .imm = 0,
                        .key = VNIC_KEY_INVALID,
                        .len = len,
                        .data = data};
    vnic_deliver_notify(s->v, &nt); /* holds no cells: the payload is a copy */
    return 1;
}

/* Handles the message at ticket `head` (published), consuming its cells. */
static void shm_handle(shm_t *s, shm_cell_t *c, uint64_t head)
{
    shm_cell_t h;
    memcpy(&h, c, sizeof h);
    uint32_t n = h.ncells;
    if (BASE_UNLIKELY(n == 0 || n > s->K / 2))
        base_fatal("vnic/shm: corrupt inbox cell (ncells %u) from rank %u", n, h.src);
    shm_peer_t *sp = shm_src_peer(s, h.src);
    if (BASE_LIKELY(sp != NULL)) {
        sp->ibx_got++; /* orders its fastbox messages after this one */
        if (BASE_UNLIKELY(!sp->fb_polled) && h.type == SHM_AM && h.len <= SHM_FB_DATA && !h.imm)
            shm_fb_arm(s, sp);
    }
    vnic_region_t r;
    uint64_t nlen = h.len; /* length reported to a notify handler */
    switch (h.type) {
    case SHM_PUT:
        if (shm_check_region(s, h.key, h.off, h.len, VNIC_ACC_REMOTE_WRITE, &r) &&
            (!(h.flags & VNIC_F_TAIL_FLAG) || (h.len >= 8 && (r.base + h.off + h.len) % 8 == 0))) {
            char *dst = (char *)(uintptr_t)r.base + h.off;
            size_t body = h.len - ((h.flags & VNIC_F_TAIL_FLAG) ? 8 : 0);
            shm_ring_read(s->cells, s->K, head, 0, dst, body);
            if (h.flags & VNIC_F_TAIL_FLAG) {
                char tail[8];
                shm_ring_read(s->cells, s->K, head, body, tail, 8);
                vnic_tail_store(dst + body, tail);
            }
        } else {
            shm_refused(s, &h, "put");
            h.flags = 0;
        }
        break;
    case SHM_EFFECT: memcpy(&nlen, h.u.data, 8); break;
    case SHM_AM: {
        /* Payload at ring position 0: in place when contiguous, else a private copy.
         * The handler runs with the cells held; they are released after it. */
        if (BASE_UNLIKELY(h.len > s->am_max))
            base_fatal("vnic/shm: corrupt active message (length %u) from rank %u", h.len, h.src);
        const void *data;
        char *tmp = NULL;
        if ((head & s->kmask) + n <= s->K) {
            data = c->u.data; /* the cells follow each other: one piece */
        } else {
            tmp = s->am_depth ? malloc(h.len) : s->am_buf;
            if (!tmp)
                base_fatal("vnic/shm: out of memory for an active message");
            shm_ring_read(s->cells, s->K, head, 0, tmp, h.len);
            data = tmp;
        }
        s->head = head + n;
        vnic_notify_t nt = {.src = (int)h.src,
                            .chan = h.chan,
                            .imm = h.imm,
                            .key = VNIC_KEY_INVALID,
                            .len = h.len,
                            .data = data};
        s->am_depth++;
        vnic_deliver_notify(s->v, &nt);
        s->am_depth--;
        if (tmp && tmp != s->am_buf)
            free(tmp);
        for (uint32_t i = 1; i < n; i++)
            __atomic_store_n(&s->cells[(head + i) & s->kmask].seq, (uint32_t)(head + i + 1),
                             __ATOMIC_RELAXED);
        if (!s->am_depth)
            __atomic_store_n(s->recvcnt, s->head, __ATOMIC_RELEASE);
        return;
    }
    case SHM_ATOMIC: {
        shm_peer_t *src = shm_src_peer(s, h.src);
        if (!src || h.u.amo.slot >= SHM_NREPLY)
            base_fatal("vnic/shm: corrupt atomic request from rank %u", h.src);
        int st = FMPL_SUCCESS;
        uint64_t old = 0;
        if (shm_check_region(s, h.key, h.off, 8, VNIC_ACC_REMOTE_ATOMIC, &r) &&
            (r.base + h.off) % 8 == 0)
            old = shm_amo_exec(h.chan, (uint64_t *)(uintptr_t)(r.base + h.off), h.u.amo.operand,
                               h.u.amo.compare);
        else
            st = FMPL_ERR_KEY;
        shm_reply_t *rp = shm_reply_of(s, src->area, h.u.amo.slot);
        rp->value = old;
        rp->status = st;
        __atomic_store_n(&rp->seq, h.u.amo.slotseq, __ATOMIC_SEQ_CST);
        if (src != s->self)
            shm_wake_area(s, src->area);
        h.flags = 0;
        break;
    }
    case SHM_BPUT:
    case SHM_BPUTV:
    case SHM_BGET: {
        shm_peer_t *src = shm_src_peer(s, h.src);
        uint64_t len = h.len;
        if (!src || h.u.bounce.slot >= s->lay.nbounce || len > s->lay.chunk ||
            (h.type == SHM_BPUTV && h.off > (s->lay.chunk - len) / sizeof(vnic_rseg_t)))
            base_fatal("vnic/shm: corrupt bounce request from rank %u", h.src);
        char *chunk = shm_bdata_of(s, src->area, h.u.bounce.slot);
        int st = FMPL_SUCCESS;
        if (h.type == SHM_BPUTV) {
            if (!shm_bputv_apply(s, &h, chunk))
                st = FMPL_ERR_KEY;
        } else if (h.type == SHM_BPUT &&
                   shm_check_region(s, h.key, h.off, len, VNIC_ACC_REMOTE_WRITE, &r) &&
                   (!(h.flags & VNIC_F_TAIL_FLAG) ||
                    (len >= 8 && (r.base + h.off + len) % 8 == 0))) {
            char *dst = (char *)(uintptr_t)r.base + h.off;
            if (h.flags & VNIC_F_TAIL_FLAG) {
                memcpy(dst, chunk, len - 8);
                vnic_tail_store(dst + len - 8, chunk + len - 8);
            } else {
                memcpy(dst, chunk, len);
            }
        } else if (h.type == SHM_BGET &&
                   shm_check_region(s, h.key, h.off, len, VNIC_ACC_REMOTE_READ, &r)) {
            memcpy(chunk, (char *)(uintptr_t)r.base + h.off, len);
        } else {
            shm_refused(s, &h, h.type == SHM_BGET ? "bounce get" : "bounce put");
            st = FMPL_ERR_KEY;
        }
        shm_reply_t *bs = shm_bstate_of(s, src->area, h.u.bounce.slot);
        bs->status = st;
        __atomic_store_n(&bs->seq, h.u.bounce.slotseq, __ATOMIC_SEQ_CST);
        if (src != s->self)
            shm_wake_area(s, src->area);
        h.flags &= (uint8_t)~VNIC_F_TAIL_FLAG;
        if (st)
            h.flags = 0;
        break;
    }
    case SHM_SGET:
    case SHM_SPUT: {
        shm_peer_t *src = shm_src_peer(s, h.src);
        const char *what = h.type == SHM_SGET ? "shared get" : "shared put";
        if (!src || src == s->self || h.u.bounce.slot < SHM_PAGE)
            base_fatal("vnic/shm: corrupt %s from rank %u", what, h.src);
        /* A late request (the initiator took every piece) is dropped unchecked: its
         * region may be gone by now. */
        if (shm_share_open(shm_share_of(s, src->area), h.u.bounce.slotseq, h.len,
                           h.u.bounce.slot)) {
            int ok = shm_check_region(
                s, h.key, h.off, h.len,
                h.type == SHM_SGET ? VNIC_ACC_REMOTE_READ : VNIC_ACC_REMOTE_WRITE, &r);
            if (!ok)
                shm_refused(s, &h, what);
            shm_share_serve(s, src, &h, ok, &r);
        }
        h.flags = 0;
        break;
    }
    default: base_fatal("vnic/shm: corrupt inbox cell (type %u) from rank %u", h.type, h.src);
    }
    /* Release the cells: continuation cells get a stale seq (their payload might
     * otherwise look like a future ticket). */
    for (uint32_t i = 1; i < n; i++)
        __atomic_store_n(&s->cells[(head + i) & s->kmask].seq, (uint32_t)(head + i + 1),
                         __ATOMIC_RELAXED);
    s->head = head + n;
    if (h.flags & VNIC_F_RCNTR) {
        if (h.rcntr < s->lay.ncntr)
            __atomic_fetch_add(shm_cntr_of(s, s->area, h.rcntr), 1, __ATOMIC_RELEASE);
    }
    if (h.flags & VNIC_F_NOTIFY) {
        vnic_notify_t nt = {.src = (int)h.src,
                            .chan = h.chan,
                            .imm = h.imm,
                            .key = h.key,
                            .off = h.off,
                            .len = (size_t)nlen};
        vnic_deliver_notify(s->v, &nt);
    }
    if (BASE_LIKELY(!s->am_depth))
        __atomic_store_n(s->recvcnt, s->head, __ATOMIC_RELEASE);
}

/* The work of shm_progress (kept out of line: an idle poll should not pay for the
 * registers the handlers need). */
static BASE_NOINLINE int shm_progress_work(shm_t *s)
{
    int n = 0;
    for (;;) {
        uint64_t head = s->head;
        shm_cell_t *c = &s->cells[head & s->kmask];
        if (__atomic_load_n(&c->seq, __ATOMIC_ACQUIRE) != (uint32_t)(head + 1))
            break;
        if (s->fb_nactive) {
            /* A fastbox message its sender wrote before this cell goes first (its ibx
             * count is then ours: shm_fb_deliver checks). Its handler may progress, so
             * look at the head again afterwards. */
            shm_peer_t *sp = shm_src_peer(s, c->src);
            if (sp && sp->fb_polled && shm_fb_ready(sp) && shm_fb_deliver(s, sp)) {
                n++;
                continue;
            }
        }
        shm_handle(s, c, head);
        n++;
    }
    for (int i = 0; i < s->fb_nactive; i++)
        if (shm_fb_ready(s->fb_active[i]))
            n += shm_fb_deliver(s, s->fb_active[i]);
    if (BASE_UNLIKELY(s->reply_busy | s->bounce_busy))
        n += shm_poll_slots(s);
    return n;
}

static int shm_progress(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    if (BASE_UNLIKELY(s->fb_acks_due))
        shm_fb_publish_acks(s);
    uint64_t head = s->head;
    if (BASE_LIKELY(__atomic_load_n(&s->cells[head & s->kmask].seq, __ATOMIC_ACQUIRE) !=
                        (uint32_t)(head + 1) &&
                    !(s->reply_busy | s->bounce_busy))) {
        int i = 0;
        while (i < s->fb_nactive && !shm_fb_ready(s->fb_active[i]))
            i++;
        if (BASE_LIKELY(i == s->fb_nactive))
            return 0;
    }
    return shm_progress_work(s);
}

/* ------------------------------------------------------------ initiator side */

/* The end of a put whose bytes all but a tail flag word are in place at the target (by
 * CMA): the tail flag travels last in a cell (an atomic store there, after those bytes),
 * else the effects follow in an EFFECT cell. lc stands at the tail; h is the put's
 * header. Completes op locally. */
static int shm_put_finish(shm_t *s, shm_peer_t *p, const vnic_op_t *op, shm_cell_t *h,
                          vnic_lcur_t *lc, uint64_t off0, size_t total)
{
    if (op->flags & VNIC_F_TAIL_FLAG) {
        h->type = SHM_PUT;
        h->flags = (uint8_t)(op->flags & (VNIC_F_NOTIFY | VNIC_F_RCNTR | VNIC_F_TAIL_FLAG));
        h->off = off0 + total - 8;
        h->len = 8;
        shm_send(s, p, h, lc);
    } else {
        shm_direct_effects(s, p, op, off0, total);
    }
    vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
    return FMPL_SUCCESS;
}

static int shm_put(shm_t *s, shm_peer_t *p, const vnic_op_t *op, size_t total,
                   const vnic_region_t *r, char *rbase, const vnic_rseg_t *seg, int nseg)
{
    vnic_lcur_t lc;
    vnic_lcur_init(&lc, &op->local);
    uint32_t fl = op->flags & (VNIC_F_NOTIFY | VNIC_F_RCNTR | VNIC_F_TAIL_FLAG); /* not DEFER */
    uint64_t off0 = nseg ? seg[0].off : 0;
    if ((fl & VNIC_F_TAIL_FLAG) && (r->base + off0 + total) % 8)
        return FMPL_ERR_ARG;
    if (rbase) { /* direct: self, or the region is in the segment */
        for (int i = 0; i < nseg; i++) {
            char *dst = rbase + seg[i].off;
            if (fl & VNIC_F_TAIL_FLAG) {
                const char *src = op->local.u.contig.addr;
                memcpy(dst, src, total - 8);
                vnic_tail_store(dst + total - 8, src + total - 8);
            } else {
                vnic_lcur_gather(&lc, dst, seg[i].len);
            }
        }
        shm_direct_effects(s, p, op, off0, total);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    shm_cell_t h;
    memset(&h, 0, sizeof h);
    h.type = SHM_PUT;
    h.chan = op->chan;
    h.src = (uint32_t)s->rank;
    h.key = op->remote.key;
    h.rcntr = op->rcntr;
    h.imm = op->imm;
    uint32_t eff = fl & (VNIC_F_NOTIFY | VNIC_F_RCNTR);
    /* Small pieces (a strided or indexed target layout) go gathered, many to a bounce
     * chunk, whatever the path: CMA would pin the target's pages once per piece, and
     * inline cells would cost one message per piece. */
    int gathered = nseg > 1 && total < (size_t)nseg * SHM_GATHER_PIECE && !(fl & VNIC_F_TAIL_FLAG);
    if (total <= s->inline_max && !(gathered && nseg >= SHM_GATHER_SEGS)) {
        /* One message per remote segment; effects ride on the last one, or follow in an
         * EFFECT cell when there are several (the notification describes the whole op). */
        int separate = nseg > 1 && eff;
        for (int i = 0; i < nseg; i++) {
            int last = i == nseg - 1;
            if (!seg[i].len && !(last && eff && !separate))
                continue;
            h.flags = (uint8_t)(last && !separate ? fl : 0);
            h.off = seg[i].off;
            h.len = (uint32_t)seg[i].len;
            shm_send(s, p, &h, &lc);
        }
        if (separate)
            shm_direct_effects(s, p, op, off0, total);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    /* Shared, when the host's large gets are (shm_tune.h): this rank writes pieces with
     * CMA while the target, told by a cell, reads others (the shared get's two copies at
     * once, the other way round); a target busy elsewhere leaves it all to this rank. */
    size_t bulk = (fl & VNIC_F_TAIL_FLAG) ? total - 8 : total;
    if (s->paths.get == SHM_GET_SHARED && s->cma && !gathered && nseg == 1 && !s->share_busy &&
        op->local.kind == VNIC_DESC_CONTIG && bulk >= s->share_min && bulk <= UINT32_MAX) {
        int rc = shm_share_run(s, p, SHM_SPUT, op->remote.key, off0, op->local.u.contig.addr, NULL,
                               r->base + off0, bulk, s->share_piece);
        if (rc) {
            vnic_cntr_complete(op->lcntr, rc);
            return rc;
        }
        vnic_lcur_seek(&lc, bulk);
        return shm_put_finish(s, p, op, &h, &lc, off0, total);
    }
    /* Pipeline: chunks staged in this rank's bounce buffers and copied out by the target,
     * both cores copying at once (on this class of machine 3-4x CMA's bandwidth). When the
     * target stops draining (it computes, or is descheduled), CMA writes the rest without
     * its help. Without the pipeline: CMA from the start, except for gathered pieces. */
    size_t chunk = s->lay.chunk;
    int i = 0;
    uint64_t pos = 0;
    if (gathered || s->paths.put_pipeline || !s->cma) {
        for (;;) {
            while (i < nseg && pos == seg[i].len)
                i++, pos = 0;
            if (i == nseg)
                break;
            if (s->cma && s->bounce_busy == (int)s->lay.nbounce &&
                vnic_wait(s->v, shm_bounce_free_ready, s, s->stall_ns) == FMPL_ERR_TIMEOUT)
                goto cma_rest;
            uint32_t slot = shm_bounce_acquire(s);
            char *b = shm_bdata_of(s, s->area, slot);
            if (gathered) {
                size_t k;
                h.type = SHM_BPUTV;
                h.off = shm_bputv_fill(s, b, &lc, seg, nseg, &i, &pos, &k);
                h.flags = 0;
                h.len = (uint32_t)k;
            } else {
                size_t rem = seg[i].len - pos, k = BASE_MIN(chunk, rem);
                if (rem > k && rem - k < 8)
                    k -= 8; /* keep the last chunk >= 8 bytes for the tail flag */
                vnic_lcur_gather(&lc, b, k);
                h.type = SHM_BPUT;
                h.off = seg[i].off + pos;
                h.flags = (uint8_t)((fl & VNIC_F_TAIL_FLAG) && k == rem ? VNIC_F_TAIL_FLAG : 0);
                h.len = (uint32_t)k;
                pos += k;
            }
            h.u.bounce.slot = slot;
            h.u.bounce.slotseq = s->bounce[slot].seq;
            shm_send(s, p, &h, NULL);
        }
        if (eff)
            shm_direct_effects(s, p, op, off0, total);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
cma_rest:;
    /* CMA for what the pipeline did not stage (all of it without the pipeline). */
    size_t done = pos;
    for (int j = 0; j < i; j++)
        done += seg[j].len;
    int rc = FMPL_SUCCESS;
    if (done < bulk)
        rc = shm_cma_segs(p, 1, &lc, r->base, seg + i, nseg - i, pos, bulk - done);
    if (rc) {
        vnic_cntr_complete(op->lcntr, rc);
        return rc;
    }
    return shm_put_finish(s, p, op, &h, &lc, off0, total);
}

/* Ends a stalled blocking bounce GET g (one remote segment at raddr) with CMA: the
 * chunks requested but not answered, and what was not requested yet. The target may
 * still fill those chunks later: their slots forget g and are just freed then. */
static int shm_bget_takeover(shm_t *s, shm_bget_t *g, uint64_t raddr)
{
    if (s->fb_acks_due) /* the CMA reads below do not progress */
        shm_fb_publish_acks(s);
    shm_bget_unlink(s, g);
    int rc = g->status;
    for (uint32_t i = 0; i < s->lay.nbounce; i++) {
        shm_slot_t *sl = &s->bounce[i];
        if (!sl->busy || sl->get != g)
            continue;
        sl->get = NULL;
        if (rc == FMPL_SUCCESS) {
            vnic_lcur_t lc = {.iov = g->iov, .cnt = g->iovcnt};
            vnic_lcur_seek(&lc, sl->pos);
            rc = shm_cma(g->peer, 0, &lc, raddr + sl->pos, sl->len);
        }
    }
    if (rc == FMPL_SUCCESS && g->issued < g->total) {
        vnic_lcur_t lc = {.iov = g->iov, .cnt = g->iovcnt};
        vnic_lcur_seek(&lc, g->issued);
        rc = shm_cma(g->peer, 0, &lc, raddr + g->issued, g->total - g->issued);
    }
    free(g);
    return rc;
}

static int shm_get(shm_t *s, shm_peer_t *p, const vnic_op_t *op, size_t total,
                   const vnic_region_t *r, char *rbase, const vnic_rseg_t *seg, int nseg)
{
    vnic_lcur_t lc;
    vnic_lcur_init(&lc, &op->local);
    if (rbase || total == 0) {
        for (int i = 0; rbase && i < nseg; i++)
            vnic_lcur_scatter(&lc, rbase + seg[i].off, seg[i].len);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    /* A blocking GET of one remote segment takes the host's get path (shm_tune.h):
     * SHARED from `share_min` bytes on into a contiguous buffer; PIPELINE from
     * `get_pipe_min` bytes on (the target fills chunks while this rank copies out; a
     * target that stops answering for stall_ns leaves the rest to CMA). Other GETs use
     * CMA when it works. */
    int blocking = !op->lcntr && nseg == 1;
    if (s->paths.get == SHM_GET_SHARED && s->cma && blocking && !s->share_busy &&
        op->local.kind == VNIC_DESC_CONTIG && total >= s->share_min && total <= UINT32_MAX) {
        int rc = shm_share_run(s, p, SHM_SGET, op->remote.key, seg[0].off, op->local.u.contig.addr,
                               NULL, r->base + seg[0].off, total, s->share_piece);
        vnic_cntr_complete(op->lcntr, rc);
        return rc;
    }
    int piped = s->paths.get == SHM_GET_PIPELINE && blocking && total >= s->get_pipe_min;
    if (s->cma && !piped) {
        int rc = shm_cma_get_segs(s, p, &lc, r->base, seg, nseg);
        vnic_cntr_complete(op->lcntr, rc);
        return rc;
    }
    /* Bounce chunks filled by the target, completed by progress. */
    int iovcnt = op->local.kind == VNIC_DESC_CONTIG ? 1 : op->local.u.iov.cnt;
    shm_bget_t *g = calloc(1, sizeof *g + (size_t)iovcnt * sizeof(struct iovec) +
                                  (size_t)nseg * sizeof(vnic_rseg_t));
    if (!g)
        return FMPL_ERR_NOMEM;
    g->iov = (struct iovec *)(g + 1);
    g->seg = (vnic_rseg_t *)(g->iov + iovcnt);
    if (op->local.kind == VNIC_DESC_CONTIG) {
        g->iov[0].iov_base = op->local.u.contig.addr;
        g->iov[0].iov_len = op->local.u.contig.len;
    } else {
        memcpy(g->iov, op->local.u.iov.iov, (size_t)iovcnt * sizeof(struct iovec));
    }
    memcpy(g->seg, seg, (size_t)nseg * sizeof *seg);
    g->iovcnt = iovcnt;
    g->segcnt = nseg;
    g->peer = p;
    g->key = op->remote.key;
    g->total = total;
    g->lcntr = op->lcntr;
    g->waited = op->lcntr == NULL;
    if (s->bget_tail)
        s->bget_tail->next = g;
    else
        s->bget_head = g;
    s->bget_tail = g;
    shm_bget_issue(s);
    if (!g->waited)
        return FMPL_SUCCESS;
    shm_flag_t f = {&g->finished};
    if (!s->cma) {
        vnic_wait(s->v, shm_flag_ready, &f, -1);
    } else {
        /* No chunk answered for stall_ns (the target computes, or our chunks are
         * all held by other transfers): read the rest ourselves. */
        size_t seen = g->done;
        while (vnic_wait(s->v, shm_flag_ready, &f, s->stall_ns) == FMPL_ERR_TIMEOUT) {
            if (g->done == seen)
                return shm_bget_takeover(s, g, r->base + seg[0].off);
            seen = g->done;
        }
    }
    int rc = g->status;
    free(g);
    return rc;
}

static int shm_atomic(shm_t *s, shm_peer_t *p, const vnic_op_t *op, const vnic_region_t *r,
                      char *rbase)
{
    uint64_t off = op->remote.u.off;
    if ((r->base + off) % 8)
        return FMPL_ERR_ARG;
    if (rbase) {
        uint64_t old = shm_amo_exec((uint8_t)op->opcode, (uint64_t *)(void *)(rbase + off),
                                    op->operand, op->compare);
        if (p != s->self)
            shm_wake_area(s, p->area); /* the atomic was a full fence */
        if (op->result)
            *op->result = old;
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    int done = 0, status = FMPL_SUCCESS;
    uint32_t slot = shm_reply_acquire(s);
    shm_slot_t *sl = &s->reply[slot];
    sl->result = op->result;
    sl->lcntr = op->lcntr;
    sl->done = op->lcntr ? NULL : &done;
    sl->status = op->lcntr ? NULL : &status;
    shm_cell_t h;
    memset(&h, 0, sizeof h);
    h.type = SHM_ATOMIC;
    h.chan = (uint8_t)op->opcode;
    h.src = (uint32_t)s->rank;
    h.key = op->remote.key;
    h.off = off;
    h.len = 8;
    h.u.amo.operand = op->operand;
    h.u.amo.compare = op->compare;
    h.u.amo.slot = slot;
    h.u.amo.slotseq = sl->seq;
    shm_send(s, p, &h, NULL);
    if (op->lcntr)
        return FMPL_SUCCESS;
    shm_flag_t f = {&done};
    vnic_wait(s->v, shm_flag_ready, &f, -1);
    return status;
}

static int shm_post(vnic_transport_t *tr, const vnic_op_t *op, size_t total)
{
    shm_t *s = (shm_t *)tr;
    shm_peer_t *p = &s->peers[s->local_of[op->peer]];
    if (BASE_UNLIKELY(s->fb_acks_due)) /* no reply rides on the fastbox: acknowledge now */
        shm_fb_publish_acks(s);
    if (op->opcode == VNIC_OP_SEND) {
        shm_cell_t h;
        memset(&h, 0, sizeof h);
        h.type = SHM_AM;
        h.flags = VNIC_F_NOTIFY;
        h.chan = op->chan;
        h.src = (uint32_t)s->rank;
        h.len = (uint32_t)total;
        h.imm = op->imm;
        vnic_lcur_t lc;
        vnic_lcur_init(&lc, &op->local);
        shm_send(s, p, &h, &lc);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    vnic_region_t r;
    if (BASE_UNLIKELY(
            !vnic_region_read(shm_regions_of(s, p->area), s->lay.nregions, op->remote.key, &r)))
        return FMPL_ERR_KEY;
    unsigned need = op->opcode == VNIC_OP_PUT   ? VNIC_ACC_REMOTE_WRITE
                    : op->opcode == VNIC_OP_GET ? VNIC_ACC_REMOTE_READ
                                                : VNIC_ACC_REMOTE_ATOMIC;
    if (BASE_UNLIKELY(!(r.access & need)))
        return FMPL_ERR_KEY;
    vnic_rseg_t one;
    const vnic_rseg_t *seg = &one;
    int nseg = 1;
    if (BASE_LIKELY(op->remote.kind == VNIC_DESC_CONTIG)) {
        one.off = op->remote.u.off;
        one.len = total;
    } else {
        seg = op->remote.u.iov.seg;
        nseg = op->remote.u.iov.cnt;
    }
    for (int i = 0; i < nseg; i++)
        if (BASE_UNLIKELY(!vnic_region_bounds_ok(r.len, seg[i].off, seg[i].len)))
            return FMPL_ERR_KEY;
    char *rbase = NULL;
    if (p == s->self)
        rbase = (char *)(uintptr_t)r.base;
    else if (r.seg_off != VNIC_SEG_OFF_NONE && r.seg_off <= s->seg_size &&
             r.len <= s->seg_size - r.seg_off)
        rbase = s->seg + r.seg_off;
    switch (op->opcode) {
    case VNIC_OP_PUT: return shm_put(s, p, op, total, &r, rbase, seg, nseg);
    case VNIC_OP_GET: return shm_get(s, p, op, total, &r, rbase, seg, nseg);
    default:
        if (!vnic_region_bounds_ok(r.len, op->remote.u.off, 8))
            return FMPL_ERR_KEY;
        return shm_atomic(s, p, op, &r, rbase);
    }
}

static void *shm_peer_ptr(vnic_transport_t *tr, int peer, vnic_key_t key, uint64_t off,
                          uint64_t len)
{
    shm_t *s = (shm_t *)tr;
    if (s->local_of[peer] < 0)
        return NULL;
    vnic_region_t r;
    char *mapped;
    return shm_peer_region(s, &s->peers[s->local_of[peer]], key, off, len, VNIC_ACC_REMOTE_WRITE,
                           &r, &mapped)
               ? NULL
               : mapped;
}

static void shm_peer_wake(vnic_transport_t *tr, int peer)
{
    shm_t *s = (shm_t *)tr;
    if (s->local_of[peer] < 0)
        return;
    /* this process too (vnic_peer_wake): another thread of it wakes its wait */
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    shm_wake_area(s, s->peers[s->local_of[peer]].area);
}

int vnic_shm_peer_region(vnic_transport_t *tr, int world, vnic_key_t key, vnic_region_t *out)
{
    shm_t *s = (shm_t *)tr;
    if (!s || world < 0 || world >= s->v->size || s->local_of[world] < 0)
        return -1;
    return vnic_region_read(shm_regions_of(s, s->peers[s->local_of[world]].area), s->lay.nregions,
                            key, out);
}

vnic_trig_line_t *vnic_shm_trig_line(vnic_transport_t *tr, int world)
{
    shm_t *s = (shm_t *)tr;
    if (!s || world < 0 || world >= s->v->size || s->local_of[world] < 0)
        return NULL;
    return shm_trig_of(s, s->peers[s->local_of[world]].area);
}

uint64_t *vnic_shm_peer_cntr(vnic_transport_t *tr, int world, uint32_t id)
{
    shm_t *s = (shm_t *)tr;
    if (!s || world < 0 || world >= s->v->size || s->local_of[world] < 0 || id >= s->lay.ncntr)
        return NULL;
    return shm_cntr_of(s, s->peers[s->local_of[world]].area, id);
}

void vnic_shm_cntr_moved(vnic_transport_t *tr, int world)
{
    shm_t *s = (shm_t *)tr;
    if (!s || world < 0 || world >= s->v->size || s->local_of[world] < 0)
        return;
    char *area = s->peers[s->local_of[world]].area;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (area != s->area)
        shm_wake_area(s, area);
    shm_wake_watchers(s, area);
}

/* ------------------------------------------------------------ sleeping */

static void shm_sleep_prepare(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    __atomic_store_n(s->wake, 1, __ATOMIC_SEQ_CST);
}

static void shm_sleep_cancel(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    __atomic_store_n(s->wake, 0, __ATOMIC_RELAXED);
}

/* The first sleep after an announcement: long enough to be cheap, short enough that a
 * missed wake-up costs little (see shm_sleep). */
#define SHM_SLEEP_FIRST_NS 20000

/* 1 when an inbox cell or a polled fastbox message waits to be handled. */
static int shm_arrived(shm_t *s)
{
    if (__atomic_load_n(&s->cells[s->head & s->kmask].seq, __ATOMIC_ACQUIRE) ==
        (uint32_t)(s->head + 1))
        return 1;
    for (int i = 0; i < s->fb_nactive; i++)
        if (shm_fb_ready(s->fb_active[i]))
            return 1;
    return 0;
}

/* A sender that published a cell or a fastbox message while this rank announced its
 * sleep may have read the wake word before its store was visible here, and not woken us
 * (WAKE-UPS at the top); its store is visible well within SHM_SLEEP_FIRST_NS. So sleep
 * that long first, look, and only then sleep the rest: a sender that comes later reads
 * the 1 announced long before and wakes us. */
static void shm_sleep(vnic_transport_t *tr, int64_t ns)
{
    shm_t *s = (shm_t *)tr;
    int64_t first = BASE_MIN(ns, (int64_t)SHM_SLEEP_FIRST_NS);
    base_futex_wait(s->wake, 1, first);
    if (ns > first && __atomic_load_n(s->wake, __ATOMIC_ACQUIRE) == 1 && !shm_arrived(s))
        base_futex_wait(s->wake, 1, ns - first);
    __atomic_store_n(s->wake, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ close */

static int shm_idle_ready(void *arg)
{
    shm_t *s = arg;
    return !s->reply_busy && !s->bounce_busy && !s->bget_head;
}

static int shm_all_closing(void *arg)
{
    shm_t *s = arg;
    return __atomic_load_n(&s->hdr->closing, __ATOMIC_ACQUIRE) >= (uint64_t)s->nlocal;
}

static int shm_quiesce(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    int rc = vnic_wait(s->v, shm_idle_ready, s, -1);
    __atomic_fetch_add(&s->hdr->closing, 1, __ATOMIC_SEQ_CST);
    for (int i = 0; i < s->nlocal; i++)
        if (&s->peers[i] != s->self)
            shm_wake_area(s, s->peers[i].area);
    int rc2 = vnic_wait(s->v, shm_all_closing, s, -1);
    vnic_progress(s->v);
    return rc ? rc : rc2;
}

static void shm_unmap(shm_t *s)
{
    if (s->seg)
        munmap(s->seg, s->seg_size);
    if (s->fd >= 0)
        close(s->fd);
    free(s->local_of);
    free(s->peers);
    free(s->bounce);
    free(s->am_buf);
    free(s->span);
    while (s->bget_head) {
        shm_bget_t *g = s->bget_head;
        s->bget_head = g->next;
        free(g);
    }
    free(s);
}

static void shm_close(vnic_transport_t *tr)
{
    shm_unmap((shm_t *)tr);
}

/* ------------------------------------------------------------ who needs this CPU
 *
 * A waiting rank yields its CPU only to a rank of this host that is runnable on it
 * (queued behind us), never to unrelated processes. At each check (every 64th poll of
 * a wait, after its first 2 us) a rank publishes its CPU, "waiting" and the time, then
 * looks at the other local ranks that published the same CPU:
 *  - asleep (its wake word set): it does not need a CPU;
 *  - waiting: it cannot be running on our CPU while we do, so it is queued here, unless
 *    it moved to another CPU and runs there: then it re-publishes within its next 64
 *    polls. So: yield when its stamp is older than SHM_PRESENCE_STALE_NS;
 *  - outside a wait (computing, or in short waits that publish nothing): what it
 *    published may be stale. Ask the kernel (/proc/<pid>/stat: state R, last CPU
 *    ours), at most every SHM_KERNEL_ASK_NS per rank, since it costs a few us.
 * Anything unknown answers "not needed": spin. */
#define SHM_PRESENCE_STALE_NS 4000
#define SHM_KERNEL_ASK_NS 50000

/* 1 when the kernel says process pid is runnable and was last on cpu. */
static int shm_kernel_says_queued(int pid, int cpu)
{
    char path[48], buf[512];
    snprintf(path, sizeof path, "/proc/%d/stat", pid);
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0)
        return 0;
    buf[n] = 0;
    /* "pid (comm) state ppid ...": the command may hold spaces and parentheses; the
     * fields after the last ')' are plain. processor is field 39, the 37th after it. */
    char *p = strrchr(buf, ')');
    if (!p || p[1] != ' ' || p[2] != 'R')
        return 0;
    p += 2;
    for (int field = 3; field < 39 && p; field++) {
        p = strchr(p, ' ');
        if (p)
            p++;
    }
    return p && atoi(p) == cpu;
}

static int shm_cpu_needed(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    int cpu = sched_getcpu();
    if (cpu < 0)
        return 0;
    uint64_t now = base_time_ns();
    shm_presence_t *me = &shm_ctrl_of(s, s->area)->presence;
    __atomic_store_n(&me->cpu, cpu, __ATOMIC_RELAXED);
    __atomic_store_n(&me->stamp_ns, now, __ATOMIC_RELAXED);
    __atomic_store_n(&me->waiting, 1, __ATOMIC_RELAXED);
    for (int i = 0; i < s->nlocal; i++) {
        shm_peer_t *p = &s->peers[i];
        const shm_presence_t *o = &shm_ctrl_of(s, p->area)->presence;
        if (p == s->self || __atomic_load_n(&o->cpu, __ATOMIC_RELAXED) != cpu ||
            __atomic_load_n(shm_wake_of(s, p->area), __ATOMIC_RELAXED))
            continue;
        if (__atomic_load_n(&o->waiting, __ATOMIC_RELAXED)) {
            if (now - __atomic_load_n(&o->stamp_ns, __ATOMIC_RELAXED) > SHM_PRESENCE_STALE_NS)
                return 1;
        } else if (now - s->kernel_asked_ns >= SHM_KERNEL_ASK_NS) {
            s->kernel_asked_ns = now;
            if (shm_kernel_says_queued(p->pid, cpu))
                return 1;
        }
    }
    return 0;
}

static void shm_cpu_release(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    __atomic_store_n(&shm_ctrl_of(s, s->area)->presence.waiting, 0, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ tuning (shm_tune.h) */

shm_tune_area_t *vnic_shm_tune_area(vnic_transport_t *tr)
{
    return &((shm_t *)tr)->hdr->tune;
}

int vnic_shm_local_index(vnic_transport_t *tr)
{
    return ((shm_t *)tr)->me;
}

int vnic_shm_cma(vnic_transport_t *tr)
{
    return ((shm_t *)tr)->cma;
}

void vnic_shm_paths(vnic_transport_t *tr, shm_paths_t *out)
{
    *out = ((shm_t *)tr)->paths;
}

void vnic_shm_set_paths(vnic_transport_t *tr, const shm_paths_t *paths)
{
    shm_t *s = (shm_t *)tr;
    s->paths = *paths;
    if (paths->share_min > s->share_min)
        s->share_min = paths->share_min;
    if (!s->cma) /* without CMA only the pipeline moves data */
        s->paths.get = SHM_GET_PIPELINE, s->paths.put_pipeline = 1;
}

int vnic_shm_consumed(vnic_transport_t *tr, int world)
{
    shm_t *s = (shm_t *)tr;
    shm_peer_t *p = &s->peers[s->local_of[world]];
    return __atomic_load_n(shm_recvcnt_of(s, p->area), __ATOMIC_ACQUIRE) >= p->sent_end;
}

void vnic_shm_wake_all(vnic_transport_t *tr)
{
    shm_t *s = (shm_t *)tr;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    for (int i = 0; i < s->nlocal; i++)
        if (&s->peers[i] != s->self)
            shm_wake_area(s, s->peers[i].area);
}

static const vnic_transport_ops_t shm_ops = {
    .name = "shm",
    .post = shm_post,
    .send_am = shm_send_am,
    .send_am_try = shm_send_am_try,
    .progress = shm_progress,
    .sleep_prepare = shm_sleep_prepare,
    .sleep_cancel = shm_sleep_cancel,
    .sleep = shm_sleep,
    .cpu_needed = shm_cpu_needed,
    .cpu_release = shm_cpu_release,
    .quiesce = shm_quiesce,
    .peer_ptr = shm_peer_ptr,
    .copy_shared = shm_copy_shared,
    .copy_alone = shm_copy_alone,
    .peer_wake = shm_peer_wake,
    .close = shm_close,
};

/* ------------------------------------------------------------ open */

static uint64_t shm_probe_word; /* read by a peer through CMA to probe it */

static void shm_layout_compute(shm_layout_t *L, uint32_t cells, uint32_t nbounce, uint64_t chunk,
                               uint32_t ncntr, uint32_t nregions, uint64_t heap,
                               uint64_t inline_max, uint64_t am_max, int nlocal)
{
    memset(L, 0, sizeof *L);
    L->cells = cells;
    L->nbounce = nbounce;
    L->chunk = chunk;
    L->ncntr = ncntr;
    L->nregions = nregions;
    L->heap_size = heap;
    L->inline_max = inline_max;
    L->am_max = am_max;
    uint64_t o = 0;
    L->off_ctrl = o, o += sizeof(shm_ctrl_t);
    L->off_wake = o, o += SHM_LINE;
    L->off_sendcnt = o, o += SHM_LINE;
    L->off_recvcnt = o, o += SHM_LINE;
    L->off_fbox = o, o += (uint64_t)nlocal * SHM_LINE;
    L->off_cells = o, o += (uint64_t)cells * SHM_LINE;
    L->off_reply = o, o += (uint64_t)SHM_NREPLY * SHM_LINE;
    L->off_bstate = o, o += (uint64_t)nbounce * SHM_LINE;
    L->off_bdata = o, o += (uint64_t)nbounce * chunk;
    L->off_cntr = o, o += (uint64_t)ncntr * SHM_LINE;
    L->off_regions = o, o += (uint64_t)nregions * sizeof(vnic_region_t);
    /* the share line last: the hot lines above keep their offsets */
    o = BASE_ALIGN_UP(o, SHM_LINE);
    L->off_share = o, o += SHM_LINE;
    L->off_trig = o, o += SHM_LINE + VNIC_TRIG_TABLE_BYTES; /* trigger line and table */
    o = BASE_ALIGN_UP(o, SHM_PAGE);
    L->off_heap = o, o += heap;
    L->area_size = o;
    L->seg_size = SHM_HEADER_SIZE + (uint64_t)nlocal * L->area_size;
}

static char *shm_area(shm_t *s, int i)
{
    return s->seg + SHM_HEADER_SIZE + (size_t)i * s->lay.area_size;
}

/* Creator: checks room, creates, sizes, backs the fixed parts, maps, writes the header. */
static int shm_create(shm_t *s)
{
    uint64_t fixed = SHM_HEADER_SIZE + (uint64_t)s->nlocal * s->lay.off_heap;
    struct statvfs st;
    if (statvfs("/dev/shm", &st) == 0) {
        uint64_t avail = (uint64_t)st.f_bavail * st.f_frsize;
        if (avail < fixed + (fixed >> 3)) {
            base_log("vnic/shm: /dev/shm has %llu KiB free, the job needs %llu KiB for %d "
                     "ranks on this host (free space in /dev/shm, or lower FMPL_SHM_CELLS, "
                     "FMPL_SHM_BOUNCE_CHUNK, FMPL_SHM_REGIONS)",
                     (unsigned long long)(avail >> 10), (unsigned long long)(fixed >> 10),
                     s->nlocal);
            return FMPL_ERR_NOMEM;
        }
    }
    s->fd = shm_open(s->name, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (s->fd < 0) {
        base_log("vnic/shm: shm_open(%s): %s", s->name, strerror(errno));
        return FMPL_ERR_SYS;
    }
    int rc = FMPL_SUCCESS;
    if (ftruncate(s->fd, (off_t)s->lay.seg_size) != 0) {
        base_log("vnic/shm: ftruncate(%s, %llu): %s", s->name, (unsigned long long)s->lay.seg_size,
                 strerror(errno));
        rc = FMPL_ERR_SYS;
    }
    for (int i = 0; !rc && i <= s->nlocal; i++) {
        off_t off = i == 0 ? 0 : (off_t)(SHM_HEADER_SIZE + (uint64_t)(i - 1) * s->lay.area_size);
        off_t len = i == 0 ? SHM_HEADER_SIZE : (off_t)s->lay.off_heap;
        int e = posix_fallocate(s->fd, off, len);
        if (e) {
            base_log("vnic/shm: no room in /dev/shm for the job's shared memory (%s)", strerror(e));
            rc = e == ENOSPC ? FMPL_ERR_NOMEM : FMPL_ERR_SYS;
        }
    }
    if (!rc) {
        s->seg = mmap(NULL, s->lay.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
        if (s->seg == MAP_FAILED) {
            s->seg = NULL;
            base_log("vnic/shm: mmap of %llu bytes: %s", (unsigned long long)s->lay.seg_size,
                     strerror(errno));
            rc = FMPL_ERR_NOMEM;
        }
    }
    if (rc) {
        close(s->fd);
        s->fd = -1;
        shm_unlink(s->name);
        return rc;
    }
    s->seg_size = s->lay.seg_size;
    s->hdr = (shm_header_t *)s->seg;
    s->hdr->nlocal = (uint32_t)s->nlocal;
    s->hdr->lay = s->lay;
    __atomic_store_n(&s->hdr->magic, SHM_MAGIC, __ATOMIC_RELEASE);
    return FMPL_SUCCESS;
}

static int shm_attach(shm_t *s)
{
    s->fd = shm_open(s->name, O_RDWR, 0600);
    if (s->fd < 0) {
        base_log("vnic/shm: shm_open(%s): %s", s->name, strerror(errno));
        return FMPL_ERR_SYS;
    }
    struct stat st;
    shm_header_t h;
    if (fstat(s->fd, &st) != 0 || (size_t)st.st_size < sizeof h ||
        pread(s->fd, &h, sizeof h, 0) != (ssize_t)sizeof h || h.magic != SHM_MAGIC ||
        h.nlocal != (uint32_t)s->nlocal || h.lay.seg_size != (uint64_t)st.st_size) {
        base_log("vnic/shm: segment %s is not this job's", s->name);
        return FMPL_ERR_SYS;
    }
    s->lay = h.lay;
    s->seg = mmap(NULL, s->lay.seg_size, PROT_READ | PROT_WRITE, MAP_SHARED, s->fd, 0);
    if (s->seg == MAP_FAILED) {
        s->seg = NULL;
        base_log("vnic/shm: mmap of %llu bytes: %s", (unsigned long long)s->lay.seg_size,
                 strerror(errno));
        return FMPL_ERR_NOMEM;
    }
    s->seg_size = s->lay.seg_size;
    s->hdr = (shm_header_t *)s->seg;
    return FMPL_SUCCESS;
}

static int shm_heap_commit(void *arg, size_t off, size_t len)
{
    shm_t *s = arg;
    off_t at = (off_t)(s->area - s->seg) + (off_t)s->lay.off_heap + (off_t)off;
    int e = posix_fallocate(s->fd, at, (off_t)len);
    return e == 0 || e == EOPNOTSUPP ? 0 : -1;
}

/* Sets up this rank's side once the segment is mapped (before the second fence). */
static int shm_setup_local(shm_t *s)
{
    vnic_t *v = s->v;
    s->K = s->lay.cells;
    s->kmask = s->K - 1;
    s->inline_max = s->lay.inline_max;
    s->am_max = s->lay.am_max;
    s->am_buf = malloc(s->am_max ? s->am_max : 1);
    if (!s->am_buf)
        return FMPL_ERR_NOMEM;
    s->peers = calloc((size_t)s->nlocal, sizeof *s->peers);
    s->bounce = calloc(s->lay.nbounce, sizeof *s->bounce);
    if (!s->peers || !s->bounce)
        return FMPL_ERR_NOMEM;
    for (int i = 0; i < s->nlocal; i++) {
        s->peers[i].area = shm_area(s, i);
        s->peers[i].world = v->nodes->local_ranks[i];
        if (i != s->me) {
            int lo = BASE_MIN(i, s->me), hi = BASE_MAX(i, s->me);
            shm_fb_half_t *line = (shm_fb_half_t *)(void *)(shm_area(s, lo) + s->lay.off_fbox +
                                                            (uint64_t)hi * SHM_LINE);
            s->peers[i].fb_mine = &line[s->me == lo ? 0 : 1];
            s->peers[i].fb_theirs = &line[s->me == lo ? 1 : 0];
        }
    }
    s->self = &s->peers[s->me];
    s->area = s->self->area;
    s->cells = shm_cells_of(s, s->area);
    s->wake = shm_wake_of(s, s->area);
    s->recvcnt = shm_recvcnt_of(s, s->area);
    shm_ctrl_t *ctrl = shm_ctrl_of(s, s->area);
    ctrl->pid = (int32_t)getpid();
    ctrl->presence.cpu = -1;
    if (sched_getaffinity(0, sizeof ctrl->cpus, &ctrl->cpus) != 0)
        CPU_ZERO(&ctrl->cpus); /* unknown: vnic_place leaves placement alone */
    shm_probe_word = SHM_MAGIC ^ ((uint64_t)getpid() << 20) ^ base_time_ns();
    ctrl->probe_addr = (uint64_t)(uintptr_t)&shm_probe_word;
    ctrl->probe_value = shm_probe_word;

    v->regions = (vnic_region_t *)(void *)(s->area + s->lay.off_regions);
    v->nregions = s->lay.nregions;
    v->cntr_mem = shm_cntr_of(s, s->area, 0);
    v->cntr_stride = SHM_LINE / sizeof(uint64_t);
    v->ncntr = s->lay.ncntr;
    v->seg_base = s->seg;
    v->seg_size = s->seg_size;
    int rc = vnic_storage_ready(v);
    if (rc)
        return rc;
    v->heap_base = s->area + s->lay.off_heap;
    v->heap_size = s->lay.heap_size;
    rc = vnic_heap_create(v->heap_base, v->heap_size, shm_heap_commit, s, &v->heap);
    if (rc)
        return rc;
    return vnic_mr_reg_key(v, VNIC_KEY_HEAP, v->heap_base, v->heap_size, VNIC_ACC_ALL);
}

/* Reads a peer's probe word through CMA: 1 when the kernel allows it. */
static int shm_probe_cma(shm_t *s)
{
    shm_peer_t *p = &s->peers[(s->me + 1) % s->nlocal];
    shm_ctrl_t *ctrl = shm_ctrl_of(s, p->area);
    uint64_t got = 0;
    struct iovec l = {&got, sizeof got};
    struct iovec r = {(void *)(uintptr_t)ctrl->probe_addr, sizeof got};
    ssize_t n = process_vm_readv(ctrl->pid, &l, 1, &r, 1, 0);
    if (n != (ssize_t)sizeof got || got != ctrl->probe_value) {
        BASE_DEBUG("vnic/shm: CMA to rank %d unavailable (%s): using bounce buffers", p->world,
                   n < 0 ? strerror(errno) : "wrong data");
        return 0;
    }
    return 1;
}

int vnic_shm_open(vnic_t *v, vnic_transport_t **out)
{
    long long heap = base_env_int("FMPL_SHM_HEAP", 64ll << 20, 1ll << 20, 1ll << 40,
                                  "bytes of shared heap per rank (fmpl_alloc_mem, MPI_Alloc_mem); "
                                  "reserved sparse, backed on allocation");
    long long cells = base_env_int("FMPL_SHM_CELLS", 512, 64, 1 << 20,
                                   "64-byte cells in each rank's inbox (a power of two)");
    long long inl = base_env_int("FMPL_SHM_INLINE_MAX", 4096, 0, 1 << 20,
                                 "largest put to private memory carried inline in inbox cells; "
                                 "larger ones use CMA or bounce buffers");
    /* Active messages up to 8 KiB plus a line for the caller's own header, so an 8 KiB MPI
     * message is eager. Through the cells it costs 2.5 us one way against 2.8 by
     * rendezvous (RTS, CMA read, FIN), and a stream of them runs at 5.7 GB/s against 4.3
     * (docs/performance.md). Puts stay inline only up to FMPL_SHM_INLINE_MAX: an inline
     * put waits for the target's progress, a CMA put does not. */
    long long am = base_env_int("FMPL_SHM_AM_MAX", 8192 + SHM_LINE, 1024, 1 << 20,
                                "largest active message carried in inbox cells (bytes, the "
                                "caller's header included; at most what half the inbox holds): "
                                "the MPI face sends messages up to this size less its 16-byte "
                                "header eagerly");
    int cma = base_env_bool("FMPL_SHM_CMA", 1,
                            "use process_vm_readv/writev for large transfers (0: bounce buffers)");
    int fastbox = base_env_bool("FMPL_SHM_FASTBOX", 1,
                                "small active messages between two ranks that exchange them "
                                "often use a cache line shared by the pair (0: inbox only)");
    int pipeline = base_env_bool(
        "FMPL_SHM_PIPELINE", 1,
        "large puts (and gets) to private memory go through the two-core bounce pipeline while "
        "the target drains it (0: single-copy CMA); unset: chosen by measurement (fmpl-info)");
    long long stall_us = base_env_int("FMPL_SHM_STALL_US", 50, 0, 10000000,
                                      "microseconds a pipelined put (get) waits for a target "
                                      "that does not drain (fill) chunks before CMA takes over");
    long long get_pipe_min = base_env_int(
        "FMPL_SHM_GET_PIPELINE_MIN", 0, 0, LLONG_MAX,
        "smallest blocking get from private memory that goes through the two-core pipeline "
        "(the target fills bounce chunks; smaller ones, and all with FMPL_SHM_PIPELINE=0, use "
        "CMA)");
    long long share_piece = base_env_int("FMPL_SHM_SHARED_PIECE", 256 << 10, SHM_PAGE, 1 << 30,
                                         "largest piece of a shared get or put (initiator and "
                                         "target each copy pieces with CMA; a small one is cut "
                                         "in two)");
    long long share_min =
        base_env_int("FMPL_SHM_SHARED_MIN", 64 << 10, 0, LLONG_MAX,
                     "smallest blocking get, or put to private memory, that the target "
                     "shares when the get path is shared (smaller ones use CMA alone); "
                     "unset, at least 256 KiB when ranks outnumber CPUs");
    long long share_heap_min = base_env_int(
        "FMPL_SHM_SHARED_HEAP_MIN", 512 << 10, 0, LLONG_MAX,
        "smallest copy to or from a local peer's shared heap (an MPI_Win_allocate window) that "
        "the peer shares, when it waits inside the library (smaller ones: one memcpy)");
    long long share_heap_piece = base_env_int(
        "FMPL_SHM_SHARED_HEAP_PIECE", 128 << 10, SHM_PAGE, 1 << 30,
        "largest piece of a shared copy to or from a shared heap (this rank copies with "
        "memcpy, the peer with CMA)");
    long long chunk = base_env_int("FMPL_SHM_BOUNCE_CHUNK", 64 << 10, 4096, 64 << 20,
                                   "bytes per bounce-buffer chunk (the pipeline)");
    long long nbounce = base_env_int("FMPL_SHM_BOUNCE_CHUNKS", 4, 1, 64,
                                     "bounce-buffer chunks per rank (pipelining depth)");
    long long nreg = base_env_int("FMPL_SHM_REGIONS", 4096, 64, 1 << VNIC_KEY_INDEX_BITS,
                                  "entries in each rank's registered-region table");
    long long ncntr =
        base_env_int("FMPL_SHM_COUNTERS", 1024, 64, 1 << 20, "completion counters per rank");
    if (cells & (cells - 1))
        base_setting_fail("FMPL_SHM_CELLS=%lld is not a power of two", cells);
    /* A message uses at most min(K/2, 255) cells. */
    long long maxcells = BASE_MIN(cells / 2, 255);
    inl = BASE_MIN(inl, SHM_CELL_DATA + (maxcells - 1) * SHM_LINE);
    am = BASE_MIN(am, SHM_CELL_DATA + (maxcells - 1) * SHM_LINE);
    heap = (long long)BASE_ALIGN_UP((size_t)heap, SHM_PAGE);
    chunk = (long long)BASE_ALIGN_UP((size_t)chunk, SHM_LINE);

    shm_t *s = calloc(1, sizeof *s);
    if (!s)
        return FMPL_ERR_NOMEM;
    s->base.ops = &shm_ops;
    s->base.v = v;
    s->v = v;
    s->fd = -1;
    s->rank = v->rank;
    s->nlocal = v->nodes->nlocal;
    s->me = v->nodes->local_rank;
    s->local_of = malloc((size_t)v->size * sizeof *s->local_of);
    if (!s->local_of) {
        free(s);
        return FMPL_ERR_NOMEM;
    }
    for (int i = 0; i < v->size; i++)
        s->local_of[i] = -1;
    for (int i = 0; i < s->nlocal; i++)
        s->local_of[v->nodes->local_ranks[i]] = i;
    snprintf(s->name, sizeof s->name, "/fmpl-%s-%d", boot_job_id(v->boot), v->nodes->my_node);

    int err = FMPL_SUCCESS, rc;
    if (s->me == 0) {
        shm_layout_compute(&s->lay, (uint32_t)cells, (uint32_t)nbounce, (uint64_t)chunk,
                           (uint32_t)ncntr, (uint32_t)nreg, (uint64_t)heap, (uint64_t)inl,
                           (uint64_t)am, s->nlocal);
        err = shm_create(s);
        rc = boot_put(v->boot, "vnic.shm", err ? "-" : s->name);
        if (!err)
            err = rc;
    }
    rc = boot_fence(v->boot);
    if (!err)
        err = rc;
    if (s->me != 0 && !err) {
        char val[BOOT_VALUE_MAX];
        rc = boot_get(v->boot, v->nodes->local_ranks[0], "vnic.shm", val);
        if (rc || strcmp(val, s->name) != 0) {
            base_log("vnic/shm: the shared segment of this host was not created (see rank %d)",
                     v->nodes->local_ranks[0]);
            err = rc ? rc : FMPL_ERR_SYS;
        } else {
            err = shm_attach(s);
        }
    }
    if (!err)
        err = shm_setup_local(s);
    rc = boot_fence(v->boot); /* everyone has mapped: the name can go */
    if (!err)
        err = rc;
    if (s->me == 0 && s->seg)
        shm_unlink(s->name);
    if (!err) {
        const cpu_set_t **cpus = malloc((size_t)s->nlocal * sizeof *cpus);
        if (!cpus)
            err = FMPL_ERR_NOMEM;
        for (int i = 0; cpus && i < s->nlocal; i++)
            cpus[i] = &shm_ctrl_of(s, s->peers[i].area)->cpus;
        if (cpus)
            vnic_place(v, cpus, s->nlocal, s->me);
        free(cpus);
    }
    if (!err) {
        int ok = cma && shm_probe_cma(s);
        shm_ctrl_of(s, s->area)->cma_ok = ok;
    }
    rc = boot_fence(v->boot);
    if (!err)
        err = rc;
    if (err) {
        vnic_heap_destroy(v->heap);
        v->heap = NULL;
        v->regions = NULL;
        v->cntr_mem = NULL;
        shm_unmap(s);
        return err;
    }
    s->cma = 1;
    /* Until vnic_shm_tune measures (or reads) the host's choice: the settings, else
     * the pipeline as tuned on the AMD EPYC machines. */
    s->paths.get = pipeline || !cma ? SHM_GET_PIPELINE : SHM_GET_CMA;
    s->paths.put_pipeline = pipeline || !cma;
    s->share_piece = (size_t)BASE_ALIGN_UP((size_t)share_piece, SHM_PAGE);
    s->share_min = (size_t)share_min;
    s->share_heap_min = (size_t)share_heap_min;
    s->share_heap_piece = (size_t)BASE_ALIGN_UP((size_t)share_heap_piece, SHM_PAGE);
    s->stall_ns = stall_us * 1000;
    s->get_pipe_min = (size_t)get_pipe_min;
    s->fb_max = fastbox ? SHM_FB_ACTIVE_MAX : 0;
    for (int i = 0; i < s->nlocal; i++) {
        shm_ctrl_t *c = shm_ctrl_of(s, s->peers[i].area);
        s->peers[i].pid = c->pid;
        s->cma &= c->cma_ok;
    }
    v->info.cma = s->cma;
    v->info.inline_max = s->inline_max;
    v->info.am_max = s->am_max;
    v->info.heap_size = s->lay.heap_size;
    v->info.share_min = s->cma ? s->share_heap_min : SIZE_MAX;
    *out = &s->base;
    return FMPL_SUCCESS;
}
