/* fmpl_impl.h — private state of the native API layer (src/fmpl), shared by its files.
 *
 * Point-to-point uses sender-side matching (seed 000). For every communicator each rank
 * owns a matching area in its shared heap: one row per peer, one 64-byte slot per
 * matching-area index (mai) plus one slot for FMPL_TAG_ANY. A receive writes a header
 * {receive buffer key, offset, size, layout, flags, token, seq} into the SENDER's slot
 * with one vnic put (VNIC_F_TAIL_FLAG: the seq word lands last). The sender recognises
 * the k-th header of a slot by seq == k; it only reads the slot, so each line is written
 * by one process.
 * Sends still waiting for their header are pushed by a vnic progress hook, so they go
 * whoever waits (a collective included). The payload goes straight into
 * the receive buffer with a notifying put whose immediate value carries the receiver's
 * token, so the receiver's handler finds the receive in O(1).
 *
 * Nothing here is thread-safe: the API is used by one thread (fmpl.h). */
#ifndef FMPL_IMPL_H
#define FMPL_IMPL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "boot/boot.h"
#include "coll/coll.h"
#include "fmpl.h"
#include "vnic/vnic.h"

/* Live communicators per process; also the number of context ids (ctx). */
#define FMPLI_COMM_MAX 256
#define FMPLI_CTX_WORDS (FMPLI_COMM_MAX / 64)

/* vnic notification channels and well-known keys used by this layer (listed in vnic.h). */
#define FMPLI_CHAN_DATA VNIC_CHAN_FMPL_DATA /* payload of a matched send arrived */
#define FMPLI_CHAN_ANY VNIC_CHAN_FMPL_ANY   /* any-source domain: arrival or rendezvous ack */
#define FMPLI_KEY_MATCH_WORLD VNIC_KEY_FMPL_MATCH_WORLD
#define FMPLI_KEY_ANY VNIC_KEY_FMPL_ANY

/* One matching slot: a receive header, written by the receiver into the sender's area.
 * One line each, so a receiver writing the header of one mai never takes the line of
 * another mai from under a sender reading it. */
typedef struct fmpli_hdr {
    uint64_t off;   /* offset of the receive buffer inside region `key` */
    uint64_t size;  /* bytes the receive buffer holds */
    uint32_t key;   /* vnic key of the receive buffer at the receiver */
    uint32_t token; /* receiver's completion token (echoed in the payload's imm) */
    uint64_t row;   /* a 2-D receive (fmpl_recv_2d): bytes per block; 0: one block */
    uint64_t ld;    /* a 2-D receive: bytes from one block's start to the next */
    uint64_t flags; /* FMPLI_HDR_STAGED or 0 */
    uint64_t pad;
    uint64_t seq; /* k for the k-th header of this slot; written last */
} fmpli_hdr_t;
_Static_assert(sizeof(fmpli_hdr_t) == 64, "a matching slot is one cache line");
/* fmpli_hdr_t.flags: the receive buffer is a staging block of the receiver's heap (p2p.c,
 * STAGING), with its head line just before off. */
#define FMPLI_HDR_STAGED 1u

/* The head line of a staging block (p2p.c, STAGING); the receive's bytes follow. */
typedef struct fmpli_stage_head {
    uint64_t placed; /* bytes of the stream stored so far (streamed delivery), by the sender */
    uint64_t pad[7];
} fmpli_stage_head_t;
_Static_assert(sizeof(fmpli_stage_head_t) == 64, "a staging block's head is one line");

/* A sender's or receiver's layout (fmpl_layout) after fmpli_layout_check: rows blocks of
 * row bytes, ld apart; NULL where the calls take one: one contiguous block. */
typedef fmpl_layout fmpli_lay_t;

/* Payloads of at most this many bytes travel inside an active message on the data
 * channel (the immediate below, then the bytes), which the receiver copies into its
 * buffer: with the immediate they fill one fastbox message (24 bytes, vnic/shm.c), one
 * cache-line transfer instead of an inbox cell and its counters. Larger ones are put
 * straight into the receive buffer. */
#define FMPLI_SMALL_MAX 16

/* Payload notification immediate: token | sender's mai << 32 | seq low byte << 48 |
 * truncated << 56 | FMPLI_IMM_STREAM. */
#define FMPLI_IMM(token, mai, seq, trunc)                                                          \
    ((uint64_t)(token) | (uint64_t)(mai) << 32 | ((uint64_t)(seq)&0xffu) << 48 |                   \
     (uint64_t)(trunc) << 56)
/* In the immediate of an active message on the data channel: the payload is being stored
 * into the receive's staging block by the sender itself (p2p.c, STAGING); the message
 * carries its length. */
#define FMPLI_IMM_STREAM (1ull << 57)

enum { FMPLI_SEND_IDLE, FMPLI_SEND_ACTIVE, FMPLI_SEND_PENDING, FMPLI_SEND_DONE };
enum { FMPLI_RECV_IDLE, FMPLI_RECV_POSTED, FMPLI_RECV_DONE };

/* Sender-side state of one (peer, slot). */
typedef struct fmpli_sendent {
    uint64_t seq;    /* headers consumed from this slot */
    const void *buf; /* pending isend: its buffer, size and layout (lay.rows 0: none) */
    size_t size;
    fmpli_lay_t lay;
    uint32_t state;      /* FMPLI_SEND_* */
    int32_t result;      /* completed isend: its result, returned by fmpl_isend_wait */
    uint32_t pend_idx;   /* PENDING: index in fmpli.pending */
    uint32_t spooled;    /* spooled messages on this (peer, mai) not yet delivered */
    uint32_t spool_pass; /* last spool pass in which a message here found no header */
} fmpli_sendent_t;

/* Receiver-side state of one (peer, slot). */
typedef struct fmpli_recvent {
    uint64_t seq;     /* headers posted on this slot */
    void *buf;        /* the receive buffer (a small payload is copied there) */
    uint64_t row, ld; /* its layout (row 0: one block); its header's unless staged */
    /* a staged 2-D receive: its staging block (p2p.c, STAGING), else NULL */
    fmpli_stage_head_t *stage;
    uint64_t size;    /* bytes the receive buffer holds */
    uint64_t got;     /* bytes arrived */
    vnic_key_t key;   /* registration of the receive buffer to release, or VNIC_KEY_INVALID */
    uint32_t smai;    /* the mai the sender used */
    uint8_t state;    /* FMPLI_RECV_* */
    uint8_t err;      /* FMPL_SUCCESS or FMPL_ERR_TRUNCATE */
    uint8_t rcache;   /* 1 + the registration-cache entry that holds key, or 0 (own key) */
    uint8_t held;     /* the header was held by the vnic (VNIC_F_DEFER) at its post ... */
    uint32_t dmark;   /* ... with this vnic_defer_mark (low bits): held while it is unchanged */
    uint8_t streamed; /* staged: the sender streams into the block (p2p.c, STAGING) */
} fmpli_recvent_t;

struct fmpli_comm;

/* Per (communicator, peer) state, created on first use. */
typedef struct fmpli_peer {
    struct fmpli_comm *comm;
    int rank;               /* the peer's rank in comm */
    int world;              /* its world rank */
    uint32_t pid;           /* index in fmpli.pid_table; token = pid << slot_bits | slot */
    vnic_key_t remote_key;  /* the peer's matching area for comm */
    uint64_t remote_off;    /* offset of my row inside it */
    const fmpli_hdr_t *row; /* my row for this peer: headers it writes */
    fmpli_sendent_t *send;  /* [nslots] */
    fmpli_recvent_t *recv;  /* [nslots] */
    uint32_t hot[2];        /* the slots of my last two sends to it (p2p.c, fmpli_recv_wait) */
} fmpli_peer_t;

/* A communicator. Handle = index in fmpli.comms. */
typedef struct fmpli_comm {
    int live;
    int size, rank;
    uint32_t ctx; /* context id, agreed by the members */
    int *members; /* world rank of each member, [size] */
    coll_group_t *group;
    void *area; /* my matching area, [size] rows of row_stride bytes */
    size_t area_len;
    vnic_key_t area_key;  /* its key (well-known for COMM_WORLD) */
    vnic_key_t *keys;     /* each member's area key, [size] */
    fmpli_peer_t **peers; /* [size], NULL until used */
} fmpli_comm_t;

/* The send spool of buffered mode: blocks inside the user's buffer. */
typedef struct fmpli_spool_blk {
    size_t bsize; /* bytes of the block, header included (multiple of 64) */
    uint32_t used;
    uint32_t mai;                 /* used: the message's mai */
    struct fmpli_spool_blk *next; /* used: next spooled message, in send order */
    fmpli_peer_t *peer;           /* used: destination */
    size_t size;                  /* used: message bytes, stored after the header */
    uint64_t pad[3];
} fmpli_spool_blk_t;
_Static_assert(sizeof(fmpli_spool_blk_t) == 64, "a spool block header is one cache line");

typedef struct fmpli_spool {
    char *base; /* 64-byte aligned start inside the user buffer; NULL: no spool */
    size_t len; /* usable bytes (multiple of 64) */
    void *user_buf;
    int timeout_ms; /* FMPL_TIMEOUT_INFINITE: synchronous mode */
    fmpli_spool_blk_t *head, *tail;
    uint32_t npending;       /* spooled messages not yet delivered */
    uint32_t pass;           /* push passes, ever (for fmpli_sendent_t.spool_pass) */
    uint64_t delivered;      /* spooled messages delivered, ever */
    uint64_t delivered_seen; /* value at the previous fmpl_sendbuf_check */
} fmpli_spool_t;

/* The any-source domain (receiver-side matching, seed 002's buffer acquisition). */
typedef struct fmpli_any {
    char *area; /* counters and slots, in my heap, key FMPLI_KEY_ANY */
    size_t area_len;
    uint32_t nslots;   /* N: FMPL_ANY_SLOTS */
    size_t slot_size;  /* header + inline payload, multiple of 64 */
    size_t inline_max; /* largest payload carried in a slot */
    uint32_t *arrived; /* slots holding unmatched messages, in arrival order, [N] */
    uint32_t narrived;
    uint64_t arrivals; /* messages arrived, ever */
    uint8_t *consumed; /* [N]: slot read, waiting for RecvCNT to pass it */
    uint64_t recv_cnt; /* my RecvCNT (published in the area) */
    uint64_t *room;    /* per world rank: last RecvCNT read from it, lazily allocated */
    uint64_t rdv_seq;  /* my rendezvous sends, ever */
    uint64_t ack_seq;  /* last rendezvous acknowledged by a receiver */
    int ack_err;
} fmpli_any_t;

typedef struct fmpli_pending {
    fmpli_peer_t *peer;
    uint32_t mai;
} fmpli_pending_t;

enum { FMPLI_NEVER = 0, FMPLI_ACTIVE = 1, FMPLI_FINALIZED = 2 };

typedef struct fmpli_state {
    int status; /* FMPLI_NEVER, FMPLI_ACTIVE, FMPLI_FINALIZED */
    boot_t *boot;
    vnic_t *vnic;
    int rank, size;
    int mai_max;        /* FMPL_MAI_MAX */
    uint32_t nslots;    /* mai_max + 1: the last slot of a row is FMPL_TAG_ANY's */
    unsigned slot_bits; /* bits of a token holding the slot */
    size_t row_stride;  /* bytes per row of a matching area (64-byte multiple) */
    fmpli_comm_t comms[FMPLI_COMM_MAX];
    uint64_t ctx_used[FMPLI_CTX_WORDS];
    int16_t ctx_comm[FMPLI_COMM_MAX]; /* ctx -> handle, -1 when none */
    fmpli_peer_t **pid_table;         /* token -> peer */
    uint32_t npid, pid_cap, pid_free; /* pid_free: head of the free list (UINT32_MAX: none) */
    uint32_t *pid_next;               /* free-list links, [pid_cap] */
    fmpli_pending_t *pending;         /* isends waiting for their header */
    uint32_t npending, pending_cap;
    int in_progress; /* fmpli_progress_sends is running */
    fmpli_spool_t spool;
    fmpli_any_t any;
} fmpli_state_t;

extern fmpli_state_t fmpli;

/* Returns FMPL_ERR_NOT_INIT unless the library is initialised. */
#define FMPLI_CHECK_INIT()                                                                         \
    do {                                                                                           \
        if (BASE_UNLIKELY(fmpli.status != FMPLI_ACTIVE))                                           \
            return FMPL_ERR_NOT_INIT;                                                              \
    } while (0)

/* The communicator of a handle, or NULL when the handle names no live communicator. */
static inline fmpli_comm_t *fmpli_comm_get(fmpl_comm h)
{
    if (BASE_UNLIKELY(h < 0 || h >= FMPLI_COMM_MAX || !fmpli.comms[h].live))
        return NULL;
    return &fmpli.comms[h];
}

/* ---- persist.c ---- */
/* Waits for the running persistent requests of comm (FMPL_COMM_NULL: of every
 * communicator, and the request table goes) and frees them: their handles name nothing
 * any more. FMPL_SUCCESS, or the error of a wait that failed (that request stays). */
int fmpli_persist_free_comm(fmpl_comm comm);

/* ---- comm.c ---- */
/* Creates COMM_WORLD (ctx 0, well-known area key). Called once by fmpl_init. */
int fmpli_comm_world_init(void);
/* Frees every communicator (sub-communicators in ctx order, then WORLD): collective. */
void fmpli_comm_all_free(void);
/* The peer state of rank `rank` of c, created on first use; NULL when out of memory. */
fmpli_peer_t *fmpli_peer_create(fmpli_comm_t *c, int rank);
static inline fmpli_peer_t *fmpli_peer_get(fmpli_comm_t *c, int rank)
{
    fmpli_peer_t *p = c->peers[rank];
    return BASE_LIKELY(p != NULL) ? p : fmpli_peer_create(c, rank);
}

/* ---- p2p.c ---- */
/* Installs the notify handlers of the p2p channels. */
int fmpli_p2p_init(void);
/* Takes the header a send on (p, mai) may consume: the specific slot first, then the
 * any slot. Copies it to *out and advances the expected seq. 1 when taken, else 0. */
int fmpli_match_take(fmpli_peer_t *p, uint32_t mai, fmpli_hdr_t *out);
/* 1 when a header for a send on (p, mai) is present (nothing consumed). */
int fmpli_match_peek(const fmpli_peer_t *p, uint32_t mai);
/* Writes min(size, h->size) bytes of buf (laid out as lay, NULL: contiguous) into the
 * receive buffer named by h, in its layout, with the completion notification.
 * FMPL_ERR_TRUNCATE when size > h->size. Never blocks on peers. */
int fmpli_deliver(fmpli_peer_t *p, uint32_t mai, const fmpli_hdr_t *h, const void *buf, size_t size,
                  const fmpli_lay_t *lay);
/* Copies the first n bytes of the stream of buf laid out as lay into dst (gather), or
 * of src into buf laid out as lay (scatter). */
void fmpli_lay_gather(void *dst, const void *buf, const fmpli_lay_t *lay, size_t n);
void fmpli_lay_scatter(void *buf, const fmpli_lay_t *lay, const void *src, size_t n);
/* Pushes pending isends and spooled sends whose headers have arrived. Re-entry safe
 * (a nested call returns 0). Returns how many it completed. */
int fmpli_progress_sends(void);
/* Waits until ready(arg), progressing pending sends meanwhile; timeout_ns < 0: none.
 * FMPL_ERR_TIMEOUT on expiry, or the vnic's error. */
int fmpli_wait(vnic_ready_fn ready, void *arg, int64_t timeout_ns);
/* Waits until every pending isend and spooled send of comm c (NULL: of all
 * communicators) has been delivered. */
int fmpli_flush_sends(const fmpli_comm_t *c);
/* Cancels posted receives and forgets the state of peer p (communicator being freed). */
void fmpli_peer_release(fmpli_peer_t *p);
/* Validates the arguments common to the point-to-point calls (init, comm, buffer, rank,
 * mai); on success *cp is the communicator. any_ok: FMPL_TAG_ANY is a valid mai. */
int fmpli_p2p_check(fmpl_comm comm, const void *buf, size_t size, int rank, int mai, int any_ok,
                    struct fmpli_comm **cp);
/* Drops the registrations the receive-buffer registration cache keeps (finalize). */
void fmpli_rcache_flush(void);

/* ---- spool.c ---- */
/* Copies the size bytes of buf (laid out as lay, NULL: contiguous) into the spool as a
 * send on (p, mai); FMPL_ERR_SPOOL when there is no room (nothing sent). */
int fmpli_spool_add(fmpli_peer_t *p, uint32_t mai, const void *buf, size_t size,
                    const fmpli_lay_t *lay);
/* Delivers spooled sends whose headers arrived; returns how many. Called by
 * fmpli_progress_sends only. */
int fmpli_spool_push(void);
/* Drops the spooled messages to p (its communicator is being freed). */
void fmpli_spool_forget_peer(const fmpli_peer_t *p);

/* ---- any.c ---- */
/* Sets up the any-source area and handler (settings FMPL_ANY_SLOTS, FMPL_ANY_INLINE). */
int fmpli_any_init(void);
void fmpli_any_finalize(void);

#endif
