/* vnic.h — the software NIC: the one interface every upper layer talks to.
 *
 * A vnic gives each process registered memory regions that peers reach by
 * (peer, key, offset); one-sided put/get with contiguous or iovec descriptors on
 * both sides; 64-bit remote atomics; local completion counters; target-side
 * counters and notifications; and progress. Transports (shm between the ranks of a
 * host, udp between hosts) implement it behind one ops table (vnic_impl.h); callers
 * never see which one serves a peer.
 *
 * Threading: one thread at a time per vnic (the caller serialises). Handlers run
 * inside vnic_progress() on the calling thread; they must not block or post
 * blocking work, but may post operations. Peers' operations may also execute while
 * this process is outside every vnic call: shm peers perform their puts, gets and
 * atomics themselves, and the udp transport's progress thread (FMPL_UDP_THREAD)
 * executes those of udp peers when the process has stayed out of the transport for
 * FMPL_UDP_THREAD_US; a notification, an active message and everything after them
 * wait for the process's next call.
 *
 * Ordering: operations from one initiator to one target that carry
 * VNIC_F_NOTIFY or VNIC_F_RCNTR are delivered (their notification runs, their
 * counter moves) in posting order, each after its own data is visible at the
 * target. Plain puts have no ordering guarantee against each other.
 *
 * Transports: shm serves ranks on this host, udp the ranks on other hosts; with
 * FMPL_TRANSPORT=udp every peer but self goes through udp. Over udp a put to a rank
 * on another host is validated by the target only: a refused one still returns
 * FMPL_SUCCESS at the initiator (the target logs and counts it, see
 * vnic_udp_stats); gets and atomics report FMPL_ERR_KEY as usual. A peer silent for
 * FMPL_UDP_PEER_TIMEOUT_MS while operations to it are unacknowledged is declared
 * dead: those operations fail with FMPL_ERR_PEER, later posts to it too, and every
 * vnic_wait in progress or started later returns FMPL_ERR_PEER.
 *
 * Extension point kept open for a later issue without changing callers: a third
 * descriptor kind, VNIC_DESC_STRIDED, on both sides (seed 004). */
#ifndef FMPL_VNIC_H
#define FMPL_VNIC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/uio.h>

#include "base/base.h"
#include "boot/boot.h"

typedef struct vnic vnic_t;

/* ---------------------------------------------------------------- lifetime */

/* Opens the vnic of this process: sets up the transports, exchanges addresses
 * through boot (collective over the job), registers the shared heap as
 * VNIC_KEY_HEAP. Blocks until every rank has done the same. */
int vnic_open(boot_t *boot, vnic_t **out);
/* Collective over the job: waits for in-flight operations, tears down. */
int vnic_close(vnic_t *v);
/* Job-wide barrier through the bootstrap: returns once every rank of the job has called
 * it, and (udp) once everything every rank posted to this one before its call has been
 * delivered here. A launcher round trip (milliseconds) during which this rank does not
 * progress: for start-up and teardown only, e.g. so a region that a layer registers on
 * every rank exists before any peer addresses it. Use it rather than boot_fence once
 * operations have been posted: over udp a rank blocked in boot_fence neither
 * retransmits nor acknowledges. Collective over the job; blocks. */
int vnic_fence(vnic_t *v);

int vnic_rank(const vnic_t *v);
int vnic_size(const vnic_t *v);
/* Ranks grouped by host, as boot_nodes() gives them. */
const boot_nodes_t *vnic_nodes(const vnic_t *v);

/* Processes of other jobs (dynamic processes; src/vnic/link.c). Two jobs first agree on a
 * link: vnic_link_agree runs, at one process of each side, a key exchange over a
 * connected stream socket (X25519, the port's token mixed in, both sides proving they
 * derived the same secret); the link (a 32-byte secret) then goes to the other members
 * of each side through the job's own channels. vnic_addr writes this process's address
 * (a string of at most VNIC_ADDR_MAX bytes) for another job; vnic_peer_add registers the
 * process of such an address, under a link, as a peer of this vnic and gives its peer
 * id: its rank when it belongs to this job (link unused), else a new id >= vnic_size
 * (the same one on a second call, whose link is then ignored: the first one's keys
 * stay), served by the udp transport (udp.c, OTHER JOBS) with keys of its own for the
 * pair (this process, it) derived from the link, which a job on one host opens for this
 * process at the first call of either. Both sides register each other before they
 * exchange anything (a datagram of an unregistered process is dropped and sent again).
 * Such peers take part in operations only: not in vnic_fence, nor in vnic_nodes.
 * vnic_close waits until they acknowledged everything this process sent them. Errors:
 * FMPL_ERR_ARG (malformed address), FMPL_ERR_TRUNCATE (len), the transport's. */
#define VNIC_ADDR_MAX 256
#define VNIC_LINK_BYTES 32
#define VNIC_LINK_TOKEN_MAX 64 /* bytes of a token's text, with its terminating 0 */
typedef struct vnic_link {
    unsigned char secret[VNIC_LINK_BYTES];
} vnic_link_t;
/* A fresh random token (32 hex digits: 128 bits) to put in a port's name. */
int vnic_link_token(char token[VNIC_LINK_TOKEN_MAX]);
/* The key exchange over the connected stream socket fd, the same call on both sides
 * (symmetric: no roles). token: the port's token, which both sides must know (NULL:
 * none, MPI_Comm_join); timeout_ms (> 0): the most this waits for the other side. The
 * socket's flags are left alone. Errors: FMPL_ERR_PEER (the other side is not an FMPL
 * process, knows another token, or the stream broke or was tampered with),
 * FMPL_ERR_TIMEOUT, FMPL_ERR_MISMATCH (FMPL_UDP_AUTH differs between the two jobs),
 * FMPL_ERR_INIT (OpenSSL failed); why (whylen bytes) then says which. */
int vnic_link_agree(vnic_t *v, int fd, const char *token, int timeout_ms, vnic_link_t *link,
                    char *why, size_t whylen);
int vnic_addr(vnic_t *v, char *buf, size_t len);
int vnic_peer_add(vnic_t *v, const char *addr, const vnic_link_t *link, int *peer);
/* One more than the largest peer id: vnic_size plus the processes of other jobs. */
int vnic_npeers(const vnic_t *v);

typedef struct vnic_info {
    const char *transports; /* e.g. "shm" or "shm,udp" */
    int cma;                /* 1 when process_vm_readv/writev works and is enabled */
    size_t inline_max;      /* largest payload carried inline in a cell */
    size_t am_max;          /* largest VNIC_OP_SEND payload */
    size_t heap_size;       /* bytes of shared heap per rank */
    int oversubscribed;     /* more ranks on this host than CPUs they may run on */
    const char *placement;  /* where this rank runs and who decided (vnic_place) */
    const char *shm_paths;  /* paths of large local transfers, and why (shm_tune.c) */
    size_t share_min;       /* smallest vnic_copy_shared that may be shared (SIZE_MAX: none) */
    const char *udp_mac;    /* how udp packets are tagged, and why (udp_auth.c), or NULL
                             * without udp */
} vnic_info_t;
const vnic_info_t *vnic_info(const vnic_t *v);
/* 1 when peer is another rank of this host and the two are each bound to one CPU, the
 * same one (the launcher's binding, or vnic_open's): they never run at once, and what
 * one writes the other reads from the same caches. 0 otherwise (either not bound to a
 * single CPU, other CPUs, another host, FMPL_TRANSPORT=udp). Never blocks. */
int vnic_peer_shares_cpu(const vnic_t *v, int peer);

/* ----------------------------------------------------------------- memory */

/* Shared heap: memory that peers on the same host reach with plain memcpy.
 * Returns NULL when the heap is exhausted. Alignment: 64 bytes. */
void *vnic_mem_alloc(vnic_t *v, size_t size);
/* FMPL_ERR_BUFFER when p did not come from vnic_mem_alloc. NULL is accepted. */
int vnic_mem_free(vnic_t *v, void *p);
/* Bytes of this process's shared heap held by live blocks (heap size less the free
 * extents; 0 without a heap): for messages that say how much heap a need takes. */
size_t vnic_mem_heap_used(const vnic_t *v);
/* 1 when [p, p+len) lies inside this process's shared heap. */
int vnic_mem_in_heap(const vnic_t *v, const void *p, size_t len);
/* Offset of p inside this process's heap (valid only when vnic_mem_in_heap). */
uint64_t vnic_mem_heap_offset(const vnic_t *v, const void *p);

/* Registered memory regions. A key names one region of one process; peers address
 * it as (peer, key, offset) and every access is checked against the region's
 * bounds and access rights by the transport. */
typedef uint32_t vnic_key_t;
#define VNIC_KEY_INVALID 0u
#define VNIC_KEY_HEAP 1u            /* the shared heap of every rank, offset 0 = heap start */
#define VNIC_KEY_WELL_KNOWN_MAX 16u /* keys 1..15: same meaning on every rank */
/* Well-known keys taken by upper layers (add yours here, one line each):
 *   4   coll: each rank's collective area (coll.h COLL_KEY; counter id 4 too)
 *   12  fmpl: the COMM_WORLD matching area (sender-side matching slots)
 *   13  fmpl: the any-source receive queue (RecvQueue[N], SendCNT, RecvCNT) */
#define VNIC_KEY_FMPL_MATCH_WORLD 12u
#define VNIC_KEY_FMPL_ANY 13u

enum {
    VNIC_ACC_REMOTE_READ = 1,
    VNIC_ACC_REMOTE_WRITE = 2,
    VNIC_ACC_REMOTE_ATOMIC = 4,
    VNIC_ACC_ALL = 7
};

/* Registers [base, base+len) with a fresh key. Cheap (no system call): meant to be
 * done per receive buffer. FMPL_ERR_NOMEM when the key table is full. */
int vnic_mr_reg(vnic_t *v, void *base, size_t len, unsigned access, vnic_key_t *key);
/* Registers with a well-known key (2..15) that every rank uses for the same
 * purpose, so peers need no key exchange. FMPL_ERR_BUSY when taken. */
int vnic_mr_reg_key(vnic_t *v, vnic_key_t key, void *base, size_t len, unsigned access);
/* Removes a registration; later remote accesses with the key fail with FMPL_ERR_KEY. */
int vnic_mr_dereg(vnic_t *v, vnic_key_t key);

/* ---------------------------------------------------------------- counters
 * A counter is a 64-bit value owned by one process. It counts completions: local
 * ones (op.lcntr) and, at a target, arrivals (op.rcntr). Counters live in memory
 * the transport can update without the owner's CPU where it can (shm), so an
 * arrival moves the counter even while the owner computes. */
typedef struct vnic_cntr vnic_cntr_t;
#define VNIC_CNTR_ANY UINT32_MAX
/* Opens a counter at 0. id: VNIC_CNTR_ANY for a fresh one, or a well-known id
 * (< 16) that every rank opens for the same purpose. */
int vnic_cntr_open(vnic_t *v, uint32_t id, vnic_cntr_t **out);
int vnic_cntr_close(vnic_t *v, vnic_cntr_t *c);
uint32_t vnic_cntr_id(const vnic_cntr_t *c);
uint64_t vnic_cntr_read(const vnic_cntr_t *c);  /* acquire load; never blocks */
void vnic_cntr_add(vnic_cntr_t *c, uint64_t n); /* local increment */
/* Errors seen by operations that named this counter as lcntr (e.g. FMPL_ERR_KEY). */
uint64_t vnic_cntr_errors(const vnic_cntr_t *c);

/* ------------------------------------------------------------- operations */

typedef enum {
    VNIC_OP_PUT,   /* local -> remote */
    VNIC_OP_GET,   /* remote -> local */
    VNIC_OP_FADD,  /* *result = remote; remote += operand */
    VNIC_OP_CSWAP, /* *result = remote; if remote == compare: remote = operand */
    VNIC_OP_SWAP,  /* *result = remote; remote = operand */
    VNIC_OP_SEND,  /* active message: the local payload (at most vnic_info()->am_max bytes)
                    * goes to the target's notify handler of `chan` with `imm`, which sees
                    * it in vnic_notify_t.data (valid only during the call). No remote
                    * region: `remote` is ignored. In posting order per initiator and
                    * target, also with respect to puts carrying NOTIFY/RCNTR. Locally
                    * complete at return. flags: 0 or VNIC_F_NOTIFY (implied); larger
                    * than am_max: FMPL_ERR_TRUNCATE. data points into the target's
                    * inbox, which stays taken while the handler runs: a handler may post,
                    * but one that posts to a peer whose inbox is full waits with this
                    * rank's inbox held, and two ranks doing so to each other deadlock; so
                    * handlers that answer many messages queue the answers and post them
                    * from the progress hook (the MPI layer does). */
} vnic_opcode_t;

typedef enum {
    VNIC_DESC_CONTIG, /* one buffer */
    VNIC_DESC_IOV,    /* a list of buffers, gathered/scattered in order */
    /* VNIC_DESC_STRIDED reserved (seed 004) */
} vnic_desc_kind_t;

/* Local side of a transfer. */
typedef struct vnic_ldesc {
    vnic_desc_kind_t kind;
    union {
        struct {
            void *addr;
            size_t len;
        } contig;
        struct {
            const struct iovec *iov;
            int cnt;
        } iov;
    } u;
} vnic_ldesc_t;

typedef struct vnic_rseg {
    uint64_t off;
    size_t len;
} vnic_rseg_t;

/* Remote side of a transfer: offsets inside the peer's region `key`. */
typedef struct vnic_rdesc {
    vnic_key_t key;
    vnic_desc_kind_t kind;
    union {
        uint64_t off; /* CONTIG: length is the local descriptor's total length */
        struct {
            const vnic_rseg_t *seg;
            int cnt;
        } iov;
    } u;
} vnic_rdesc_t;

enum {
    VNIC_F_NOTIFY = 1,    /* run the target's notify handler for `chan` once data is visible */
    VNIC_F_RCNTR = 2,     /* add 1 to the target's counter `rcntr` once data is visible */
    VNIC_F_TAIL_FLAG = 4, /* PUT, CONTIG both sides, len >= 8, remote end 8-byte aligned: the
                           * last 8 bytes become visible (release order) only after all the
                           * others, so the target may poll them as a ready flag */
    VNIC_F_DEFER = 8,     /* PUT and SEND only (else FMPL_ERR_ARG): not urgent. The transport
                           * may hold the operation (udp: a small one, in the open datagram
                           * to its peer) so that it leaves in one datagram with the next
                           * operation posted to the same peer. Held operations leave, in
                           * posting order and before anything posted after them, at the
                           * latest when this process next posts to another peer, calls
                           * vnic_progress, vnic_wait, vnic_flush, vnic_fence or vnic_close,
                           * or, inside vnic_wait_keep, when they have been held for
                           * FMPL_UDP_DEFER_US or the wait stops spinning. Until then they
                           * are not on the wire: a process that leaves the library after
                           * posting one holds it until its next vnic call. Completion,
                           * ordering, delivery and errors are those of the same operation
                           * without the flag (a put is still locally complete at return);
                           * only the moment of transmission moves. shm ignores it. */
};

/* One operation. The struct is read during vnic_post only; descriptors' arrays
 * (iov, seg) likewise. The local buffers must stay untouched until lcntr moves
 * (or, with lcntr NULL, until vnic_post returns FMPL_SUCCESS: then the operation
 * is locally complete at return). */
typedef struct vnic_op {
    vnic_opcode_t opcode;
    int peer;                  /* world rank of the target */
    uint32_t flags;            /* VNIC_F_* */
    vnic_ldesc_t local;        /* PUT/GET payload; for atomics unused */
    vnic_rdesc_t remote;       /* where at the target; atomics: CONTIG, 8-byte aligned */
    uint64_t operand, compare; /* atomics */
    uint64_t *result;          /* atomics: old value, written before lcntr moves */
    vnic_cntr_t *lcntr;        /* local completion counter, +1 when done (may be NULL) */
    uint32_t rcntr;            /* VNIC_F_RCNTR: target counter id */
    uint8_t chan;              /* VNIC_F_NOTIFY: handler channel at the target */
    uint64_t imm;              /* VNIC_F_NOTIFY: immediate data handed to the handler */
} vnic_op_t;

/* Starts an operation. Returns FMPL_SUCCESS when started (with lcntr NULL: when
 * already complete locally), or an error with nothing performed (bad peer, bad
 * descriptor, remote key or bounds refused -> FMPL_ERR_KEY). Does not block except
 * for transport back-pressure, which it resolves by progressing. */
int vnic_post(vnic_t *v, const vnic_op_t *op);

/* ---------------------------------------------------- triggered operations
 * Deferred work (seed 003; the semantics of libfabric's FI_TRIGGER and of Portals 4's
 * triggered operations): vnic_post_triggered takes an operation as vnic_post does and
 * performs it once counter cntr of this process reads at least threshold (at once when
 * it does already), as vnic_post would at that moment; it completes through op->lcntr.
 *
 * Who performs it:
 *   - this process, inside any vnic_progress (so inside every vnic_wait) that finds the
 *     threshold reached;
 *   - or, for a PEER-RUNNABLE operation, the target itself inside its own vnic_progress or
 *     vnic_wait, while this process computes outside the library: a PUT or GET, contiguous
 *     on both sides, flags 0 or (PUT) VNIC_F_RCNTR, to another rank of this host served by
 *     shm (a local index below 64). A move of any counter of this process wakes such a
 *     target that sleeps (by a peer's operation, vnic_cntr_add, or a triggered operation
 *     another rank ran); a move by the udp progress thread does not, and the target then
 *     looks when its sleep ends (FMPL_SLEEP_US).
 * Exactly one of them performs each operation (a compare-and-swap on its entry).
 *
 * Memory: the struct and its arrays are copied at the call; the local buffers belong to
 * the operation until op->lcntr moves (a triggered operation needs an lcntr or a
 * cancel to be known done). A peer-runnable operation's local buffer is registered by
 * this call (remote reads for a PUT's source, remote writes for a GET's destination) until
 * it completes: its target copies it with a memcpy (shared heap) or CMA, and validates its
 * own region (key, bounds, access) itself.
 * Completion and errors: the argument checks of vnic_post run at this call (same errors,
 * nothing armed). An error met when the operation is performed (a refused key, a CMA copy
 * the kernel denies) completes it as a failure: op->lcntr moves and vnic_cntr_errors counts
 * it, once this process has progressed after it. A target that cannot reach the local
 * buffer (no CMA) leaves the operation to this process.
 * Order: none among triggered operations, nor against later posts; chain them with
 * counters (one operation's RCNTR or lcntr is the next one's trigger).
 * Capacity: VNIC_TRIG_MAX operations armed or running per process (FMPL_ERR_NOMEM beyond).
 * Threading: as vnic_post. Never blocks (a registration, a few stores). */
#define VNIC_TRIG_MAX 64
int vnic_post_triggered(vnic_t *v, const vnic_op_t *op, vnic_cntr_t *cntr, uint64_t threshold);
/* Drops every operation armed on cntr that nobody has started, and waits (progressing)
 * for those a peer performs right now. Returns the number dropped (their lcntr does not
 * move), or FMPL_ERR_ARG. */
int vnic_trig_cancel(vnic_t *v, vnic_cntr_t *cntr);

/* Direct access (like UCX's rkey_ptr): the address in this process of the len bytes at
 * off of peer's region key, when this process can store there itself (the peer shares
 * this host through the shm transport, the region lies in its mapped heap segment and
 * allows remote writes), else NULL (other hosts, FMPL_TRANSPORT=udp, private memory,
 * bad key or bounds). Plain stores through the address are puts that no other vnic
 * operation orders against; the caller makes them count (wakes the peer if it sleeps in
 * vnic_wait) with vnic_peer_wake after its last store. Never blocks; the address stays
 * valid until the peer deregisters the region. */
void *vnic_peer_ptr(vnic_t *v, int peer, vnic_key_t key, uint64_t off, uint64_t len);
/* After direct stores to peer's memory: a full fence, then a wake-up of the peer if it
 * sleeps. Never blocks. peer may be this process: another thread of it (an I/O worker)
 * wakes its vnic_wait so that a progress hook sees the thread's work (over shm; a wait
 * that sleeps on the udp socket ends after FMPL_SLEEP_US instead). */
void vnic_peer_wake(vnic_t *v, int peer);
/* A large contiguous copy between buf and peer's memory (key, off), where that memory is
 * also mapped here (vnic_peer_ptr): a put (get 0: buf to peer) or a get. The peer copies
 * part of it with its own CPU when it is inside the library (polling or waiting), so two
 * cores copy at once; a peer busy elsewhere leaves it all to this rank. Blocks until every
 * byte is in place (complete at both ends at return; the caller orders it against other
 * operations as it would its own stores or loads). Returns FMPL_SUCCESS, VNIC_AGAIN with
 * nothing copied when sharing would not pay (below FMPL_SHM_SHARED_HEAP_MIN, no CMA, a
 * nested call, no mapping, a transport without it: the caller copies), or an error
 * (FMPL_ERR_PEER: the peer died; FMPL_ERR_KEY). Never progresses other operations. */
int vnic_copy_shared(vnic_t *v, int peer, int get, void *buf, vnic_key_t key, uint64_t off,
                     size_t len);
/* A contiguous copy between buf and peer's registered memory (key, off) made by this
 * process's CPU alone, whether or not the peer is inside the library: a memcpy where the
 * region is mapped here (this process, or the shared heap of a peer on this host), else
 * one process_vm_readv / writev (CMA). For work that one process does on behalf of
 * another that is busy elsewhere (offloaded collectives, coll.h). Blocks for the copy
 * only; complete at both ends at return (the caller wakes a peer that waits for it with
 * vnic_peer_wake). get 1: peer's memory to buf (the region must allow remote reads), 0:
 * buf to peer's (remote writes). Returns FMPL_SUCCESS; VNIC_AGAIN with nothing copied when
 * the peer's private memory cannot be reached this way (another host, FMPL_TRANSPORT=udp,
 * CMA denied); FMPL_ERR_KEY (key, bounds or access refused); FMPL_ERR_SYS (the kernel
 * refused the copy: the peer's process is gone, or an address is not mapped). Never
 * progresses. */
int vnic_copy_alone(vnic_t *v, int peer, int get, void *buf, vnic_key_t key, uint64_t off,
                    size_t len);

/* Active message of two contiguous pieces (a header a[alen] then a body b[blen]):
 * the short form of vnic_post with VNIC_OP_SEND, no counters, for latency-critical
 * small messages. Same delivery and ordering as a posted SEND (the handler of chan
 * at peer gets the concatenation, imm). alen + blen <= vnic_info()->am_max, else
 * FMPL_ERR_TRUNCATE; FMPL_ERR_RANK (peer), FMPL_ERR_ARG (chan), FMPL_ERR_BUFFER (a NULL
 * piece with a length); a or b may be NULL when its length is 0. Locally complete on
 * return (the caller may reuse a and b). Does not block except for back-pressure,
 * which it resolves by progressing (handlers may run). */
int vnic_send_am(vnic_t *v, int peer, unsigned chan, uint64_t imm, const void *a, size_t alen,
                 const void *b, size_t blen);

/* vnic_send_am that never waits: VNIC_AGAIN, with nothing sent and nothing progressed,
 * when the message would first have to wait for room (shm: the receiver's inbox is
 * full; udp: this process's send slots are all taken by messages the peer has not
 * acknowledged). Otherwise exactly vnic_send_am. Seed 002's bounded receive memory
 * without a blocked sender: the caller keeps the message and tries again after
 * progressing (the MPI layer's deferred sends, p2p_defer.c). */
#define VNIC_AGAIN (-1)
int vnic_send_am_try(vnic_t *v, int peer, unsigned chan, uint64_t imm, const void *a, size_t alen,
                     const void *b, size_t blen);

/* Convenience: a blocking contiguous put/get/atomic (post + wait for lcntr). */
int vnic_put(vnic_t *v, int peer, const void *buf, size_t len, vnic_key_t key, uint64_t off);
int vnic_get(vnic_t *v, int peer, void *buf, size_t len, vnic_key_t key, uint64_t off);
int vnic_atomic(vnic_t *v, vnic_opcode_t opcode, int peer, vnic_key_t key, uint64_t off,
                uint64_t operand, uint64_t compare, uint64_t *result);

/* Notification received at a target for an op with VNIC_F_NOTIFY. */
typedef struct vnic_notify {
    int src; /* initiator's world rank */
    uint8_t chan;
    uint64_t imm;
    vnic_key_t key; /* where the data landed (VNIC_KEY_INVALID for VNIC_OP_SEND) */
    uint64_t off;
    size_t len;
    const void *data; /* VNIC_OP_SEND: the payload, valid during the handler; else NULL */
} vnic_notify_t;
typedef void (*vnic_notify_fn)(void *arg, const vnic_notify_t *n);
/* Installs the handler of channel chan (0..VNIC_NCHAN-1); NULL removes it. */
#define VNIC_NCHAN 8
/* Channels taken by upper layers (add yours here):
 *   4  mpi: one-sided accumulates and their answers (src/mpi/win_am.c)
 *   5  fmpl: payload of a matched send arrived (receiver completes its receive)
 *   7  fmpl: any-source domain (message arrival, rendezvous acknowledgement) */
#define VNIC_CHAN_MPI_RMA 4 /* MPI one-sided: accumulates applied by the target */
#define VNIC_CHAN_FMPL_DATA 5
#define VNIC_CHAN_MPI_P2P 6
#define VNIC_CHAN_FMPL_ANY 7
int vnic_set_notify_handler(vnic_t *v, uint8_t chan, vnic_notify_fn fn, void *arg);

/* ---------------------------------------------------------------- progress */

/* Progress hooks: fn(arg) runs inside every vnic_progress (so inside every vnic_wait,
 * whoever waits) while its hook is armed, after the transports, and returns how many
 * events it handled. For upper-layer work that no arrival triggers, e.g. sends waiting
 * for a receive header that lands by a direct put, or answers a notify handler queued
 * (handlers must not post). A hook must not block and may post operations; no hook is
 * entered from inside a hook (a wait inside one progresses the transports only).
 * vnic_hook_add registers fn (at most VNIC_MAX_HOOKS per vnic, called in the order
 * added) and returns its id in *id; vnic_hook_arm turns it on or off (a disarmed hook
 * costs nothing: arm it when work is queued, disarm it when drained); vnic_hook_remove
 * drops it. */
#define VNIC_MAX_HOOKS 8
int vnic_hook_add(vnic_t *v, int (*fn)(void *arg), void *arg, int armed, int *id);
void vnic_hook_arm(vnic_t *v, int id, int armed);
void vnic_hook_remove(vnic_t *v, int id);

/* 1 when another rank of this host needs this process's CPU now: it is runnable here,
 * queued behind us (it waits in the library but has not run for a while, or, outside
 * the library, the kernel says so; see shm.c, "Who needs this CPU"). The back-off's
 * BASE_BACKOFF_YIELD_IF_NEEDED yields only then; in doubt it answers 0 (spin).
 * Publishes this rank's CPU and "waiting" for the others' checks: a caller that loops
 * on it calls vnic_cpu_release when its wait ends (vnic_wait does). Never blocks;
 * cheap enough for every 64th poll. */
int vnic_cpu_needed(vnic_t *v);
/* Withdraws the "waiting" vnic_cpu_needed published. Never blocks. */
void vnic_cpu_release(vnic_t *v);

/* Advances the transports: executes arrived operations, runs handlers, continues
 * pipelined transfers, sends operations held by VNIC_F_DEFER (except inside
 * vnic_wait_keep, see there). Never blocks. Returns the number of events handled. */
int vnic_progress(vnic_t *v);

/* Waits until ready(arg) returns nonzero, progressing meanwhile, with the back-off
 * policy of base (spin, sleep; yield at once when oversubscribed). A sleeping
 * process is woken by any arrival for it. timeout_ns < 0: no limit; on expiry
 * returns FMPL_ERR_TIMEOUT. ready() must be cheap and must not block. Operations held
 * by VNIC_F_DEFER leave at its start (vnic_wait_keep keeps them a while). */
typedef int (*vnic_ready_fn)(void *arg);
int vnic_wait(vnic_t *v, vnic_ready_fn ready, void *arg, int64_t timeout_ns);

/* vnic_wait that keeps operations held by VNIC_F_DEFER while it spins, so that the next
 * post to their peer after the wait can take them along in one datagram (the native
 * ping-pong: the receive header posted for the next message leaves with the next
 * payload). They leave anyway once the oldest has been held for FMPL_UDP_DEFER_US, and
 * before the wait yields or sleeps. Only for a caller whose ready() does not depend on
 * its own held operations (see vnic_defer_mark): a peer that needs one of them to make
 * the awaited progress waits up to FMPL_UDP_DEFER_US longer. Same results as vnic_wait. */
int vnic_wait_keep(vnic_t *v, vnic_ready_fn ready, void *arg, int64_t timeout_ns);

/* Sends every operation held by VNIC_F_DEFER now, in posting order. Never blocks. */
void vnic_flush(vnic_t *v);

/* 0 when no operation is held by VNIC_F_DEFER; else a number that stays the same until
 * the held operations leave (they all leave together) and never comes back. Read right
 * after posting with VNIC_F_DEFER: while vnic_defer_mark still returns that nonzero
 * value, the operation may be held (a wait for its effect calls vnic_flush or plain
 * vnic_wait first); once it differs, the operation is on the wire. Never blocks. */
uint64_t vnic_defer_mark(const vnic_t *v);

/* Waits until c reaches at least value (vnic_wait on the counter). */
int vnic_cntr_wait(vnic_t *v, vnic_cntr_t *c, uint64_t value, int64_t timeout_ns);

/* ------------------------------------------------------------ udp statistics */

/* Counters of the udp transport (src/vnic/udp.c) of this process, for tests, fmpl-info
 * and benchmarks. All counts since vnic_open. */
typedef struct vnic_udp_stats {
    uint64_t tx_packets, rx_packets; /* datagrams sent (incl. retransmissions) / received */
    uint64_t tx_bytes, rx_bytes;
    uint64_t data_sent;            /* DATA packets handed to the socket, first transmissions */
    uint64_t data_posted;          /* DATA messages queued, sent yet or not (a message that the
                                    * window holds leaves later: data_sent lags) */
    uint64_t retransmits;          /* DATA packets sent again (timeout, LOSE, GO) */
    uint64_t timeouts;             /* retransmission timer expiries (each doubles the timer) */
    uint64_t acks_sent, acks_recv; /* standalone ACK packets */
    uint64_t lose_sent, lose_recv; /* LOSE: a gap seen by the receiver */
    uint64_t lose_ignored;         /* LOSE asking for what a go-back already resent */
    uint64_t stop_sent, stop_recv; /* STOP: the receive buffer was full */
    uint64_t go_sent, go_recv;     /* GO: room again */
    uint64_t dup_dropped;          /* DATA already received (duplicate or go-back) */
    uint64_t ooo_dropped;          /* DATA after a gap (go-back-N keeps no out-of-order data) */
    uint64_t full_dropped;         /* DATA dropped because the receive buffer was full */
    uint64_t queued;               /* messages that waited in the receive buffer */
    uint64_t bad_secret;           /* packets refused as foreign: not from the address the
                                    * claimed sender registered (another job, a forger) */
    uint64_t bad_csum;             /* packets refused: wrong tag (forged or corrupted) */
    uint64_t replayed;             /* packets refused: transmission counter seen before */
    uint64_t unverified;           /* first contacts the progress thread left for later */
    uint64_t truncated, malformed; /* datagrams refused: too short, fields out of range */
    uint64_t stale;                /* from a departed or dead peer, or stale responses */
    uint64_t refused;              /* operations refused at this target (key, bounds, access) */
    uint64_t gso_sends;            /* UDP_SEGMENT sends (each several datagrams) */
    uint64_t bundles_sent;         /* datagrams that carried several messages */
    uint64_t bundled_sent;         /* messages sent inside another's datagram (one less each) */
    uint64_t bundled_recv;         /* messages received inside another's datagram */
    uint64_t deferred;             /* posts held by VNIC_F_DEFER */
    uint64_t deferred_joined;      /* of those, left with a later post to the same peer */
    uint64_t twin_connects;        /* connect()s of the twin socket to a new peer */
    uint64_t zcopy_sent;           /* DATA packets whose payload stayed in the caller's buffer
                                    * (or the region) at posting: zero-copy */
    uint64_t zcopy_detached;       /* of those, copied into the send pool before acknowledged */
    uint64_t placed;               /* DATA packets received straight into their destination
                                    * (udp.c's RECEIVE IN PLACE) */
    uint64_t place_missed;         /* datagrams received into an expected destination that
                                    * were not the expected message (copied back) */
    uint64_t inj_loss, inj_dup, inj_reorder, inj_delay; /* faults injected (FMPL_UDP_*) */
    uint64_t peer_deaths;      /* peers declared dead (FMPL_UDP_PEER_TIMEOUT_MS) */
    uint64_t thread_calls;     /* progress calls of the progress thread (FMPL_UDP_THREAD) */
    uint64_t thread_events;    /* events (datagrams, requests executed...) those calls handled */
    uint64_t peers;            /* peers contacted (per-peer state created) */
    uint64_t peer_state_bytes; /* bytes of per-peer state, all peers */
    uint64_t sndbuf_bytes, rcvbuf_bytes; /* the channel's send and receive buffers */
    uint32_t mtu;                        /* largest datagram sent */
    uint16_t port;                       /* this process's UDP port */
} vnic_udp_stats_t;
/* Fills *out. Never blocks. FMPL_ERR_UNSUPPORTED when this vnic has no udp transport,
 * FMPL_ERR_ARG for NULL. */
int vnic_udp_stats(const vnic_t *v, vnic_udp_stats_t *out);

/* Test hooks of the udp transport's packet authentication (tests/udp_forge.c plays an
 * on-path attacker with them). vnic_udp_capture: copies of the next `count` (at most
 * VNIC_UDP_CAPTURE) packets of at most VNIC_UDP_CAPTURE_BYTES bytes accepted from rank
 * src are kept (a new call forgets the previous ones); vnic_udp_captured: packet i of
 * them (its bytes into buf, at most cap; *len its length), FMPL_ERR_ARG when not (yet)
 * captured. vnic_udp_inject: sends len raw bytes to the address rank registered, from
 * this process's main socket (twin = 0) or its twin socket (twin = 1): what an attacker
 * who spoofs this process's address can send. FMPL_ERR_UNSUPPORTED without a udp
 * transport (or twin socket). */
#define VNIC_UDP_CAPTURE 8
#define VNIC_UDP_CAPTURE_BYTES 2048
int vnic_udp_capture(vnic_t *v, int src, int count);
int vnic_udp_captured(vnic_t *v, int i, void *buf, size_t cap, size_t *len);
int vnic_udp_inject(vnic_t *v, int rank, int twin, const void *pkt, size_t len);

/* Operations this process posted per transport since vnic_open (MPI_T's performance
 * variables): puts, gets, atomics and active messages, and their payload bytes (8 for
 * an atomic). Plain per-process counters: with several threads posting at once a count
 * may miss an increment. */
typedef struct vnic_traffic {
    uint64_t ops, bytes;
    uint64_t served; /* bytes this process copied for peers' shared copies (shm) */
} vnic_traffic_t;
enum { VNIC_TRAFFIC_SHM = 0, VNIC_TRAFFIC_UDP = 1, VNIC_TRAFFIC_N };
/* Fills out[VNIC_TRAFFIC_N]. Never blocks. FMPL_ERR_ARG for NULL. */
int vnic_traffic(const vnic_t *v, vnic_traffic_t out[VNIC_TRAFFIC_N]);

#endif
