/* udp.c — the reliable-datagram transport of the vnic (seed 001, GigaE PM, in user space
 * over one UDP socket). Serves ranks on other hosts, or every peer but self with
 * FMPL_TRANSPORT=udp (how one machine exercises it).
 *
 * CHANNEL. One socket per process (bound to FMPL_UDP_ADDR on an ephemeral port), all
 * peers multiplexed on it (plus a send-only twin socket, see SYSTEM CALLS). The addresses
 * ("ip:port:twinport") and the job key (rank 0's, see AUTHENTICATION) are published through
 * boot. Buffers belong to the channel, not to peers:
 *   - the send pool: FMPL_UDP_SNDBUF bytes, a quarter in 2 KiB slots for small messages
 *     (when the MTU exceeds 8 KiB), the rest in MTU-sized slots; every message waiting
 *     for transmission or acknowledgement sits in one slot, chained in a FIFO per peer
 *     (SBuf(r, i) of the paper);
 *   - the receive buffer: FMPL_UDP_RCVBUF bytes, a ring of in-order messages accepted
 *     (and acknowledged) but not yet executed; plus two batches of receive entries (an
 *     MTU each, 64 KiB with GRO).
 * Per peer: udp_peer_t, 96 bytes, created on first contact (plus an 8-byte pointer in a
 * table of all ranks); the address of a peer is the one it registered in boot (read for
 * every rank at start-up in jobs of up to UDP_ADDR_PREFETCH ranks, else on first contact).
 *
 * PROTOCOL (the paper's appendix; names as there). Every DATA packet is one message
 * with seq = MsgIdSent+1 on the (sender, receiver) stream. The sender transmits
 * message j while j <= MsgIdAcked + N (N = FMPL_UDP_WINDOW) and the receiver has not
 * said STOP. The receiver accepts only seq == MsgIdRecv + 1:
 *   - accepted: MsgIdRecv += 1; acknowledged cumulatively, by the `ack` field every
 *     packet to the sender carries (piggyback), or by an ACK packet once N/4 messages
 *     or UDP_ACK_BYTES are unacknowledged, or FMPL_UDP_ACK_DELAY_US after the first, or before
 * sleeping;
 *   - seq > MsgIdRecv + 1 (a gap): dropped; LOSE(MsgIdRecv) once per gap, and the
 *     sender goes back: it frees what LOSE acknowledges and retransmits from
 *     MsgIdRecv + 1 (go-back-N: the receiver keeps no out-of-order data);
 *   - seq <= MsgIdRecv: a duplicate, dropped and acknowledged again;
 *   - in order but the receive buffer is full: dropped, STOP(MsgIdRecv); the sender
 *     frees up to it and stops. Once the buffer is at most half full, GO(MsgIdRecv+1)
 *     goes to every stopped sender, which resumes from there.
 * Window: N is the most a peer may have unacknowledged (FMPL_UDP_WINDOW: 64, or 1 MiB of
 * datagrams when that is more: 665 at the 1572-byte MTU); the window in force (cwnd)
 * halves at each go-back or timeout (not below min(N/4, 16)) and grows by one per
 * message acknowledged. Retransmission: when the oldest unacknowledged message of a peer waits
 * longer than RTO << backoff (RTO = max(T, 2 x smoothed round trip) <= 4 T, T =
 * FMPL_UDP_RTO_US; backoff +1 per expiry up to 6, reset by an acknowledgement),
 * the sender goes back to it (a stopped sender sends that one message as a probe, which
 * the receiver answers with STOP or accepts). A peer silent for FMPL_UDP_PEER_TIMEOUT_MS
 * while messages to it are unacknowledged is declared dead (see vnic.h).
 *
 * OPERATIONS, executed by the target on arrival (in its vnic_progress), in stream order:
 *   PUT: fragments of at most MTU - 104 bytes, each (key, off, len) bounds-checked at
 *        the target; TAIL_FLAG, RCNTR and NOTIFY ride on the last fragment (ordering
 *        of the stream gives "data visible first"). For a peer on this host the
 *        initiator also checks the key in the peer's region table (host segment), so
 *        refused puts return FMPL_ERR_KEY as with shm; for other hosts see vnic.h.
 *   GET: GETREQ messages carry the remote segments; the target streams GETRESP
 *        messages (data read at transmission time: ZERO-COPY) through its own stream back; the
 *        initiator scatters them and completes lcntr when all bytes are in.
 *   FADD/CSWAP/SWAP: AMO executed with __atomic at the target, AMORESP returns the old
 *        value. SEND: one AM message (am_max = MTU - 104, at most shm's).
 * Local completion: a put or send is locally complete once copied into the send pool
 * (lcntr then), a get or atomic when its response is in.
 * Responses (GETRESP, AMORESP) are executed as soon as they arrive; requests (PUT, AM,
 * AMO, GETREQ) directly when the receive buffer is empty and no handler is running,
 * else they wait there in order. Handlers (NOTIFY, AM) run at nesting depth 0 only:
 * progress called inside a handler receives, acknowledges and completes responses, but
 * queues requests.
 *
 * SYSTEM CALLS (measured on the 2-core KVM guest of docs/performance.md: a loopback
 * sendto costs ~2.5 us, a recv ~0.4 us, a recv that finds nothing ~0.2 us; recvmmsg
 * and sendmmsg cost ~0.35 and ~0.15 us more when they move one datagram). Sending: a
 * lone datagram goes with sendto; several to one peer (a window opening, the fragments
 * of a put or of a get's answer, appended together and transmitted every `tx_batch`)
 * go as one UDP GSO send per run of equal-sized datagrams when at least two fit in
 * 64 KiB (FMPL_UDP_GSO; the MTU between hosts), else with sendmmsg. The peer that got
 * the last 16 transmissions in a row is served by a second socket connect()ed to it
 * (udp_twin, FMPL_UDP_CONNECTED: no route lookup per send); its datagrams carry
 * UDP_HF_TWIN, so receivers never learn that socket's port as the sender's address. Receiving: one
 * datagram per recvmsg while traffic is sparse (a ping-pong: exactly one send and one
 * receive per message, the acknowledgement riding on the reply), batches of recvmmsg
 * once eight progress calls in a row found data; with UDP GRO an entry holds a run of
 * datagrams of one sender, split here at its segment size. One clock read serves a
 * whole progress or post call (udp_now).
 * BUNDLES AND HELD POSTS. Consecutive small messages to one peer that leave in one udp_kick
 * go as one datagram of at most min(MTU, 2 KiB) (udp_kick_bundle; wire format: udp_part),
 * each with its own header, sequence number and checksum: the protocol above is unchanged
 * (a lost bundle is a run of lost messages), the receiver handles the packets one by one.
 * A post with VNIC_F_DEFER (fmpl_irecv's receive header) of a message that fits a bundle is
 * appended to its peer's stream but held (held_peer, held_seq: udp_kick stops there) until
 * the next message appended to that peer (udp_append: they leave together, one datagram
 * instead of two), or until any other entry: a post to another peer, progress (but see
 * vnic_wait_keep: held up to FMPL_UDP_DEFER_US while the wait spins), vnic_flush,
 * sleep_prepare, fence and close (udp_send_done). At most one peer holds at a time.
 * WAITING (vnic_wait): spins on vnic_progress, i.e. non-blocking receives, for
 * FMPL_SPIN_US (yielding at every poll for FMPL_YIELD_US instead when ranks outnumber
 * cores: base_backoff), then sleeps
 * in ppoll on the socket until a datagram or the next retransmission deadline
 * (udp_sleep), after sending the acknowledgements it holds (udp_sleep_prepare). Waking
 * a sleeping process costs tens of microseconds on a VM, hence the spin first.
 *
 * PROGRESS THREAD (FMPL_UDP_THREAD, on by default; the paper's NIC firmware): a target
 * serves its peers while its application computes. The application takes a lock in every
 * entry point of the ops table (udp_enter; entries nested in a handler only count) and
 * counts its entries. The thread sleeps FMPL_UDP_THREAD_US at a time; once a whole period
 * passed without an entry it takes the lock (trylock only) and runs progress calls in
 * which requests needing a handler (NOTIFY, AM) are not executed: they, and everything
 * behind them in the receive buffer (one FIFO for all peers), wait for the application's
 * next call, so stream order and "handlers on the application's thread" hold. Between
 * calls it sends the acknowledgements it holds and sleeps in ppoll on the socket (or
 * until a retransmission deadline), until the application enters again. While the
 * application is inside, the thread only wakes once per period (it never competes for
 * the socket then); the cost is that lock (one atomic exchange per entry: udp_lock_take).
 *
 * ZERO-COPY (FMPL_UDP_ZCOPY_MIN, 512 KiB by default). A contiguous put of at least that
 * many bytes, posted outside a handler, with datagrams too large for GSO (the loopback
 * MTU), does not copy its payload into the send pool: each slot holds the two headers and
 * points into the caller's buffer (slot_ext); the datagram leaves as sendmsg of two pieces
 * and its tag is computed over both (udp_auth_seal2: GMAC, or with FMPL_UDP_AUTH=off the
 * checksum, udp_csum2). Retransmissions read
 * the buffer again, so the post does not return while a datagram of it is
 * unacknowledged: the last one asks for an immediate ACK (UDP_HF_ACK), and the post
 * waits for it while acknowledgements keep coming (UDP_ZCOPY_IDLE_NS), two
 * retransmission timeouts at most; what is still unacknowledged then (a receiver that
 * computes, a loss being repaired, a failed wait) is copied into its slot (an MTU-sized
 * one: udp_zcopy_detach) before the post returns. Locally complete at return, as any put.
 * A GET's answer (GETRESP) whose fragment one segment of the region fills, at least
 * min(FMPL_UDP_ZCOPY_MIN, payload per datagram) bytes, is sent the same way from the
 * region (nobody waits: the slot is freed when acknowledged). Each transmission reads
 * the region again, after checking that its key still holds the bytes (slot_zkey,
 * udp_zcopy_recheck): a region deregistered meanwhile turns the message into the error
 * answer FMPL_ERR_KEY instead of a read of freed memory (in the MPI rendezvous the
 * initiator's FIN carries the acknowledgement of every answer, so it never happens
 * there). A get racing with writes to its source may see bytes of either (as over shm).
 * Measured on the 2-core guest: the sender's copy was ~40% of its time in a 1 MiB stream
 * (docs/performance.md). Zero-copy messages never join a bundle. With FMPL_UDP_AUTH=off
 * too (the checksum is computed over the two pieces: udp_csum2).
 *
 * RECEIVE IN PLACE (FMPL_UDP_PLACE, on by default). In a 1 MiB stream the receiver is the
 * side with more work (the kernel's copy, the tag, then its own copy from the receive
 * entry into the destination: ~10% of its profile, perf on the 2-core guest). So after
 * accepting and executing a fragment of a
 * contiguous put (UDP_PUT_RUN: every fragment carries the put's extent in a, b) whose
 * next fragment is surely a whole datagram's payload and not the last one, or an answer
 * to a get (GETRESP) with at least a datagram's payload still to come into a contiguous
 * stretch of the local buffer, the receiver expects that peer's next message
 * (place_peer, place_seq...). Its next reception (udp_rx_place, one recvmsg per
 * datagram) then takes the headers into the receive entry and the payload straight
 * into the destination; when the datagram is the expected message (udp_place_match), it
 * is checked in full (address, tag over the two pieces: udp_auth_check2, replay window,
 * sequence) and executed from there with no copy. Any other datagram (another peer's,
 * an acknowledgement, a duplicate, a forgery, a wrong tag) is copied back behind its
 * headers and handled as usual: the bytes it left in the destination lie in the range
 * that the same put or get writes later with authenticated data, before it completes
 * (go-back-N delivers every later fragment in order), and never cover a tail flag or a
 * byte outside that operation. So a forged datagram can delay an operation, as a lost one
 * does, and leave bytes for a while where the operation has yet to write. The expectation is
 * re-checked at each reception (region still registered, request still open, nothing queued in the
 * receive buffer, no handler running, the peer's next sequence number) and dropped when anything
 * else is accepted from that peer. After a miss the next UDP_PLACE_COOL expectations are not taken
 * (interleaved streams of several peers would otherwise miss at every datagram and pay a copy
 * each). Ranks of this job only (a process of another job is parsed differently), not with GRO
 * (entries of several datagrams), not with datagrams under UDP_PLACE_MIN (the MTU between hosts). A
 * get whose target fails it (FMPL_ERR_KEY) leaves its buffer undefined, as on every error. Measured
 * (A/B of FMPL_UDP_PLACE, load ~13, 4 alternating rounds, medians): 1 MiB stream native 4.53
 * -> 4.83 GB/s, MPI face 4.40 -> 4.76.
 *
 * AUTHENTICATION (threat model: udp_auth.h). Rank 0 draws a 32-byte job key
 * (udp_auth_keygen) at every start and publishes it through boot (the PMI key-value space
 * of whichever launcher started the job: fmplrun, Hydra, Slurm), with its FMPL_UDP_AUTH
 * setting; every rank reads both after the fence and refuses to start when its own
 * setting differs. The key never travels in a packet. Every packet carries a tag
 * (udp_auth.h: AES-256-GMAC over everything after the tag, nonce (src, dst, ctr), ctr
 * counting the transmissions to that peer), so a receiver takes a packet, data or
 * control alike (ACK, LOSE, STOP, GO, BYE), in this order only when:
 *   - its structure is valid (udp_parse): else counted truncated or malformed;
 *   - its datagram came from the address the claimed sender registered (its main port,
 *     or its twin's port when UDP_HF_TWIN): else counted in bad_secret (foreign);
 *   - its tag is right: else counted in bad_csum (forged or corrupted);
 *   - its ctr is fresh in the sender's replay window (udp_wire.h): else counted in
 *     replayed (a copy of an earlier datagram: a replay, an injected duplicate, the 2nd
 *     and 3rd BYE).
 * Only then may it change state (peer's address and liveness, acknowledgements, STOP,
 * BYE...). Processes of other jobs go through the same checks with the keys of their
 * pair instead of the job key (see OTHER JOBS; the keys and why: link.c).
 * FMPL_UDP_AUTH=off replaces the tag by a keyed checksum (no MAC), for trusted fabrics
 * and benchmarks; the address and replay checks stay.
 *
 * FAULTS. Truncated, foreign, forged, corrupted, replayed or malformed datagrams are
 * counted and dropped (see AUTHENTICATION). Loss,
 * duplication, reordering and delay are injected on transmission with a seeded PRNG
 * (FMPL_UDP_LOSS, _DUP, _REORDER, _DELAY_US, _SEED); they disable batching (one sendto
 * per datagram). FMPL_UDP_STATS=1 prints the counters at close.
 *
 * FENCE AND CLOSE. A rank blocked in a boot fence neither retransmits nor acknowledges,
 * so vnic_fence first runs udp_fence: DONE(epoch) to every peer, serve until every
 * peer's DONE(epoch) arrived and everything sent is acknowledged, then final ACKs.
 * Close: quiesce (wait for this rank's gets and atomics), the same with DONE(close), then
 * BYE (three copies: it carries the last acknowledgement, in case the ACK of a peer's
 * DONE was lost). A peer whose DONE arrived and which stays silent for
 * FMPL_UDP_LINGER_MS while messages to it are unacknowledged has left (it had everything
 * of ours before its DONE): we stop waiting for its acknowledgement.
 *
 * KNOWN LIMITS. A put that a target on another host refuses is only logged and counted
 * there (vnic.h). A send slot holds one message, so the slot count bounds the messages
 * in flight. A blocking fmpl_recv costs two datagrams per message (its header leaves at
 * once, the payload follows); only receives posted ahead with fmpl_irecv share the
 * payload's datagram (BUNDLES AND HELD POSTS). The twin socket is a second descriptor
 * per process. A process sleeping on its socket does not wake for a shm delivery from a
 * rank of its host: it sees it when the poll times out (FMPL_SLEEP_US; vnic.c). IPv4
 * only. */

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/udp.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "vnic/udp_auth.h"
#include "vnic/udp_wire.h"
#include "vnic/vnic_impl.h"

#ifndef UDP_SEGMENT
#define UDP_SEGMENT 103 /* linux/udp.h: GSO segment size (cmsg, IPPROTO_UDP level) */
#endif
#ifndef UDP_GRO
#define UDP_GRO 104 /* linux/udp.h: receive coalesced datagrams with their segment size */
#endif

#define UDP_NIL UINT32_MAX
#define UDP_BATCH 16
#define UDP_LEVELS 2 /* receive batches: depth 0, and progress nested in a handler */
#define UDP_BACKOFF_MAX 6
#define UDP_RESERVE 4 /* send slots kept for responses (AMORESP, DONE) */
#define UDP_HOLD 32   /* datagrams held back by reorder/delay injection */
#define UDP_BYE_COPIES 3
#define UDP_SMALL 2048      /* bytes of a small send slot (headers + up to 1960 bytes) */
#define UDP_GSO_MAX 65536   /* bytes of one GSO send or GRO entry (IPv4: 65507 of payload) */
#define UDP_GSO_SEGS 64     /* datagrams per GSO send at most (the kernel's limit) */
#define UDP_TWIN_RUN 16     /* transmissions in a row to one peer that earn it the twin */
#define UDP_BURST_STREAK 8  /* progress calls in a row that received: recvmmsg from then on */
#define UDP_BUNDLE_MAX 2048 /* bytes of a datagram that bundles several small messages */
/* Bytes of datagrams one recvmmsg takes at most in a burst: 2 at the loopback MTU, 16 at
 * 1572 bytes. A 1 MiB stream of 65000-byte datagrams, under load ~10, 4 alternating runs
 * each: 16 per call 4.83-4.96 GB/s, 2 per call 4.85-5.10 (the native API); the MPI
 * face's 4.32-4.60 and 4.57-4.89. */
#define UDP_RX_BURST_BYTES (128u << 10)
/* A zero-copy put's wait for its acknowledgement (udp_zcopy_finish) gives up when none
 * came for this long: a receiver that checks and copies ~12 us per 64 KiB datagram lags
 * a 1 MiB burst by up to ~100 us, and acknowledges every 256 KiB (UDP_ACK_BYTES). */
#define UDP_ZCOPY_IDLE_NS 100000
#define UDP_PLACE_COOL 8 /* RECEIVE IN PLACE: expectations skipped after a miss */
/* RECEIVE IN PLACE only with datagrams of at least this much payload: one recvmsg per
 * datagram costs ~0.4 us more than its share of a recvmmsg batch, which a copy of 1.4 KiB
 * (the MTU between hosts) does not save, a copy of 16 KiB or more does. */
#define UDP_PLACE_MIN 16384
#define UDP_ADDR_PREFETCH 256 /* jobs up to this size read every address at start-up */
/* An ACK once this many bytes are unacknowledged (or N/4 messages): at the loopback MTU,
 * every 4 datagrams of 64 KiB rather than every 16, so that the time a receiver spends
 * checking the tags of a 1 MiB burst (~0.2 ms) does not hold back its acknowledgement
 * past the sender's retransmission timeout; small messages are unaffected. */
#define UDP_ACK_BYTES (256u << 10)

enum {
    PF_STOPPED = 1,   /* the peer said STOP: do not transmit */
    PF_STOP_SENT = 2, /* we said STOP: drop its DATA until we say GO */
    PF_ACK_DUE = 4,   /* accepted messages not yet acknowledged */
    PF_LOSE_SENT = 8, /* LOSE sent for the current gap */
    PF_DONE = 16,     /* its DONE arrived (vnic_close) */
    PF_GONE = 32,     /* it left (BYE) */
    PF_DEAD = 64,     /* silent past the deadline */
    PF_ACTIVE = 128,  /* in the active list (timers) */
    PF_ACK_NOW = 256  /* acknowledge at the end of this progress call */
};

/* Per-peer state: 96 bytes (the protocol's 64, then the authentication's). Sequence
 * numbers compare modulo 2^32. */
typedef struct udp_peer {
    uint32_t head, tail, txnext; /* slots: oldest unacked, newest, next to transmit */
    uint32_t next_seq;           /* seq of the next message queued to it */
    uint32_t acked;              /* MsgIdAcked: it has everything up to here */
    uint32_t recv;               /* MsgIdRecv: we have everything from it up to here */
    uint32_t ip;                 /* network order, 0 until known */
    uint16_t port;               /* network order */
    uint16_t flags;              /* PF_* */
    uint8_t backoff;
    uint8_t fence_rx;    /* epoch (mod 256) of the last FENCE message it sent us */
    uint16_t cwnd;       /* window in force, 1..N: halved at each go-back, +1 per ACK (AIMD) */
    uint32_t rx_unacked; /* accepted since our last acknowledgement to it */
    uint64_t timer_ns;   /* retransmission deadline of its oldest unacked message, 0: none */
    uint64_t ack_ns;     /* delayed-ACK deadline, 0: none */
    uint64_t heard_ns;   /* last packet from it (or start of waiting for one) */
    uint64_t tx_ctr;     /* transmissions to it so far (the nonce of the next is + 1) */
    uint64_t rx_top;     /* replay window of its transmissions (udp_replay_fresh) */
    uint64_t rx_bits;
    uint16_t twin_port;        /* network order: the port its twin socket sends from, 0: none */
    uint16_t link;             /* 0: a rank of this job (the job key); else a process of another
                                * job, 1 + its index in udp_t.foreign (OTHER JOBS: its keys) */
    uint32_t rx_unacked_bytes; /* bytes of the messages counted in rx_unacked */
} udp_peer_t;
_Static_assert(sizeof(udp_peer_t) == 96, "per-peer state is 96 bytes");

typedef struct udp_req {
    uint16_t gen;
    uint8_t busy, kind; /* UDP_OP_GETREQ or UDP_OP_AMO */
    int peer;
    int status;
    int *done, *statusp; /* blocking post */
    vnic_cntr_t *lcntr;
    uint64_t *result;
    size_t total, got;
    struct iovec *iov; /* the local descriptor (a private copy for iovec kinds) */
    int iovcnt;
    struct iovec one;
    uint32_t next_free;
} udp_req_t;

/* A GET being answered: streamed as send slots allow. */
typedef struct udp_job {
    struct udp_job *next;
    int peer;
    uint32_t reqid;
    vnic_key_t key;
    uint64_t pos; /* initiator position of the next byte */
    uint64_t end; /* position after the request's last byte */
    int nseg, seg_i;
    uint64_t seg_pos;
    vnic_rseg_t seg[];
} udp_job_t;

typedef struct udp_hold {
    uint64_t due_ns;
    uint32_t ip;
    uint16_t port;
    uint16_t used;
    size_t len;
    char *buf;
} udp_hold_t;

/* A process of another job (OTHER JOBS): its rank there, and the keys of the pair (this
 * process, it): tx seals what we send it, rx checks what it sends us. */
typedef struct udp_foreign {
    uint32_t rank;
    udp_auth_t tx, rx;
} udp_foreign_t;

typedef struct udp {
    vnic_transport_t base;
    vnic_t *v;
    int rank, size;
    int fd;
    udp_auth_t auth; /* the job key's tags (FMPL_UDP_AUTH) */
    uint32_t my_ip;
    uint16_t my_port, my_twin_port;
    size_t mtu;        /* datagram bytes */
    size_t data_max;   /* payload bytes per DATA packet (mtu - headers) */
    uint32_t window;   /* N */
    uint32_t cwnd_min; /* floor of a peer's window after losses: min(N/4, 16) */
    uint32_t ack_every;
    uint64_t rto_ns, ack_delay_ns, peer_timeout_ns, close_linger_ns;
    int exec_budget; /* requests executed per progress call, 0: no limit */

    udp_peer_t **peer;      /* [npeers], NULL until first contact */
    int npeers;             /* size + the processes of other jobs registered */
    udp_foreign_t *foreign; /* [npeers - size]: peer ids >= size (OTHER JOBS) */
    int alone;              /* opened for this process alone: no peer of this job */
    udp_peer_t *peer_mem;
    int peer_mem_left;
    udp_peer_t **slabs; /* blocks of 64 peer states */
    int nslabs, slabs_cap;
    int *active; /* peers with timers or pending acks [npeers] */
    int nactive;
    uint64_t next_scan_ns;

    /* send pool */
    char *pool;
    uint32_t nslots; /* small slots [0, nsmall), then MTU-sized ones */
    uint32_t nsmall; /* slots of UDP_SMALL bytes (small messages: a quarter of the pool) */
    uint32_t nfree[2], free_head[2]; /* per class: 0 small, 1 MTU-sized */
    uint32_t *slot_next;
    uint32_t *slot_len;
    uint64_t *slot_sent;   /* time of the last transmission */
    const char **slot_ext; /* ZERO-COPY: the payload's address in the caller's buffer (the
                            * slot holds the headers only until udp_zcopy_detach); NULL:
                            * the payload follows the headers in the slot */
    uint8_t *slot_ackreq;  /* 1: the last datagram of a zero-copy put (UDP_HF_ACK) */
    vnic_key_t *slot_zkey; /* a zero-copy GETRESP: the region slot_ext points into (checked
                            * again at every transmission), VNIC_KEY_INVALID: a put's */
    size_t zcopy_min;      /* FMPL_UDP_ZCOPY_MIN: zero-copy puts from this many bytes (0: none) */
    /* RECEIVE IN PLACE (FMPL_UDP_PLACE): the next message of place_peer (sequence number
     * place_seq) is expected to be a fragment of kind place_kind writing place_off
     * onwards (a PUT: at offset place_off of region place_key; a GETRESP: at position
     * place_off of the request with id place_key); place_peer -1: no expectation */
    int place_on;
    int place_cool; /* expectations to skip (after a miss) */
    int place_peer;
    uint32_t place_seq;
    uint8_t place_kind;
    uint32_t place_key;
    uint64_t place_off;
    uint64_t srtt_ns; /* smoothed round trip (first transmissions only, Karn) */
    uint64_t rto_cur; /* retransmission timeout in force: max(T, 2 srtt), <= 4 T */

    /* receive buffer: ring of {u32 len, u32 src, data[len]} 8-aligned */
    char *rq;
    size_t rq_cap, rq_head, rq_tail, rq_used;
    uint32_t rq_count;
    int stopped_peers; /* peers we said STOP to */

    /* receive batches */
    char *rxbuf[UDP_LEVELS];
    struct mmsghdr rxmsg[UDP_LEVELS][UDP_BATCH];
    struct iovec rxiov[UDP_LEVELS][UDP_BATCH];
    struct sockaddr_in rxaddr[UDP_LEVELS][UDP_BATCH];
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(int))];
    } rxctl[UDP_LEVELS][UDP_BATCH];         /* UDP_GRO: the segment size of an entry */
    uint32_t rxseg[UDP_LEVELS][UDP_BATCH];  /* segment size of entry i (its length: one) */
    size_t rx_slot;                         /* bytes per entry: the MTU, 64 KiB with GRO */
    int rx_n[UDP_LEVELS], rx_i[UDP_LEVELS]; /* entries received, next entry */
    size_t rx_off[UDP_LEVELS];              /* next datagram's offset in entry rx_i */
    int gso;                                /* datagrams per UDP_SEGMENT send, 0: no GSO */
    int tx_batch; /* fragments of a put or get answer appended per transmission */
    int sockbuf;  /* FMPL_UDP_SOCKBUF */
    int twin_on;  /* FMPL_UDP_CONNECTED (and no fault injection) */
    int twin_fd;  /* socket connect()ed to twin_peer (see udp_twin), -1 until needed */
    int twin_peer, run_peer, run_len;
    int gro;       /* UDP_GRO is on: entries may hold several */
    int rx_burst;  /* receiving with recvmmsg (see udp_rx) */
    int rx_batch;  /* entries per recvmmsg (UDP_RX_BURST_BYTES) */
    int rx_streak; /* progress calls in a row that received a datagram */
    int depth;     /* handlers running */
    int executed;  /* requests executed in this progress call */

    /* outstanding gets/atomics */
    udp_req_t *req;
    uint32_t nreq, req_free, req_busy;
    udp_job_t *jobs, *jobs_tail;
    int njobs, max_jobs;

    /* fault injection */
    double loss, dup, reorder;
    uint64_t delay_ns;
    int inject;
    uint64_t rng;
    udp_hold_t hold[UDP_HOLD];
    int nhold;

    /* VNIC_F_DEFER: the messages of held_peer from seq held_seq on (the tail of its
     * stream) are held, not transmitted, since held_ns (-1: none); at most one peer holds
     * (a post to another flushes). defer_post: the post in progress may be held. */
    int held_peer;
    uint32_t held_seq;
    uint64_t held_ns;
    uint64_t defer_ns; /* FMPL_UDP_DEFER_US: longest hold inside vnic_wait_keep */
    int defer_post;
    size_t bundle_cap; /* bytes of a bundle datagram: min(MTU, UDP_BUNDLE_MAX) */
    uint64_t bundle[UDP_BUNDLE_MAX / 8];

    uint64_t now_ns; /* the time, read once per progress or post call (udp_now); 0: unread */
    int closing;
    int print_stats;     /* FMPL_UDP_STATS: counters on stderr at close */
    uint8_t fence_epoch; /* vnic_fence calls so far (mod 256) */
    vnic_udp_stats_t st;
    /* test hook vnic_udp_capture: packets accepted from cap_src kept while cap_want */
    int cap_src, cap_want, cap_n;
    char *cap_buf; /* VNIC_UDP_CAPTURE x VNIC_UDP_CAPTURE_BYTES */
    uint32_t cap_len[VNIC_UDP_CAPTURE];

    /* progress thread (see PROGRESS THREAD): lock guards everything above while the
     * thread runs; the application takes it in every entry point (udp_enter) */
    int thr_on;           /* the thread was started (FMPL_UDP_THREAD) */
    int thr_serving;      /* set while the thread runs a progress call: no handlers */
    int app_depth;        /* entry points of the application nested (handlers post) */
    uint64_t app_entries; /* entries of the application so far (the thread reads it) */
    int thr_stop;         /* udp_close asks the thread to end */
    uint64_t thr_idle_ns; /* FMPL_UDP_THREAD_US: absence before the thread serves */
    pthread_t thr;
    int lock; /* 1 while held (udp_lock_take): by the application or the thread */
} udp_t;

/* ------------------------------------------------------------ helpers */

static inline int seq_lt(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) < 0;
}
static inline int seq_le(uint32_t a, uint32_t b)
{
    return (int32_t)(a - b) <= 0;
}

static inline char *udp_slot(udp_t *s, uint32_t i)
{
    if (i < s->nsmall)
        return s->pool + (size_t)i * UDP_SMALL;
    return s->pool + (size_t)s->nsmall * UDP_SMALL + (size_t)(i - s->nsmall) * s->mtu;
}
static inline udp_hdr_t *udp_slot_hdr(udp_t *s, uint32_t i)
{
    return (udp_hdr_t *)(void *)udp_slot(s, i);
}
static inline udp_op_t *udp_slot_op(udp_t *s, uint32_t i)
{
    return (udp_op_t *)(void *)(udp_slot(s, i) + sizeof(udp_hdr_t));
}

/* The time for this progress or post call: one clock read serves every packet it handles
 * (entry points clear the cache: udp_progress, udp_post, udp_send_done). */
static inline uint64_t udp_now(udp_t *s)
{
    if (!s->now_ns)
        s->now_ns = base_time_ns();
    return s->now_ns;
}

static double udp_rand(udp_t *s)
{
    uint64_t x = s->rng;
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    s->rng = x;
    return (double)(x >> 11) * (1.0 / 9007199254740992.0);
}

/* The rank a peer answers to in its own job: the peer id for this job's ranks. */
static inline uint32_t udp_wire_rank(const udp_t *s, int rank)
{
    return BASE_LIKELY(rank < s->size) ? (uint32_t)rank : s->foreign[rank - s->size].rank;
}

static void udp_activate(udp_t *s, int rank, udp_peer_t *p)
{
    if (p->flags & PF_ACTIVE)
        return;
    p->flags |= PF_ACTIVE;
    s->active[s->nactive++] = rank;
}

/* Per-peer state, created on first contact. */
static udp_peer_t *udp_peer_of(udp_t *s, int rank)
{
    udp_peer_t *p = s->peer[rank];
    if (BASE_LIKELY(p))
        return p;
    if (!s->peer_mem_left) {
        if (s->nslabs == s->slabs_cap) {
            s->slabs_cap = s->slabs_cap ? 2 * s->slabs_cap : 4;
            s->slabs = realloc(s->slabs, (size_t)s->slabs_cap * sizeof *s->slabs);
            if (!s->slabs)
                base_fatal("vnic/udp: out of memory for peer state");
        }
        s->peer_mem = calloc(64, sizeof *s->peer_mem);
        if (!s->peer_mem)
            base_fatal("vnic/udp: out of memory for peer state");
        s->slabs[s->nslabs++] = s->peer_mem;
        s->peer_mem_left = 64;
    }
    p = s->peer_mem++;
    s->peer_mem_left--;
    p->head = p->tail = p->txnext = UDP_NIL;
    p->next_seq = 1;
    p->cwnd = (uint16_t)s->window;
    s->peer[rank] = p;
    s->st.peers++;
    s->st.peer_state_bytes += sizeof *p;
    return p;
}

/* Looks up the address of a peer that has not spoken yet (boot KV; blocking, once). */
static int udp_peer_addr(udp_t *s, int rank, udp_peer_t *p)
{
    if (p->ip)
        return FMPL_SUCCESS;
    char val[BOOT_VALUE_MAX];
    int rc = boot_get(s->v->boot, rank, "vnic.udp", val);
    if (rc) {
        base_log("vnic/udp: no address published by rank %d", rank);
        return rc;
    }
    char ip[64];
    unsigned port, twin;
    struct in_addr a;
    if (sscanf(val, "%63[0-9.]:%u:%u", ip, &port, &twin) != 3 || port > 65535 || twin > 65535 ||
        inet_aton(ip, &a) == 0) {
        base_log("vnic/udp: malformed address '%s' of rank %d", val, rank);
        return FMPL_ERR_PEER;
    }
    p->ip = a.s_addr;
    p->port = htons((uint16_t)port);
    p->twin_port = htons((uint16_t)twin);
    return FMPL_SUCCESS;
}

/* ------------------------------------------------------------ system calls */

/* The socket calls of the data path, without glibc's cancellation wrappers: with the
 * progress thread the process is multithreaded, and glibc then brackets every
 * cancellation point (recvmsg, sendto...) with two atomic updates of the thread's
 * cancellation state (~5% of an 8-byte ping-pong's samples; a non-blocking recvmsg
 * costs ~40-70 ns less through syscall() here). The library never cancels threads. */
static inline ssize_t udp_sys_sendto(int fd, const void *buf, size_t len,
                                     const struct sockaddr_in *sa)
{
    return syscall(SYS_sendto, fd, buf, len, 0, sa, sa ? sizeof *sa : 0);
}

static inline ssize_t udp_sys_sendmsg(int fd, const struct msghdr *mh)
{
    return syscall(SYS_sendmsg, fd, mh, 0);
}

static inline int udp_sys_sendmmsg(int fd, struct mmsghdr *mm, unsigned n)
{
    return (int)syscall(SYS_sendmmsg, fd, mm, n, 0);
}

static inline ssize_t udp_sys_recvmsg(int fd, struct msghdr *mh, int flags)
{
    return syscall(SYS_recvmsg, fd, mh, flags);
}

/* recvfrom rather than recvmsg where no control message is wanted: the kernel then
 * copies no msghdr and imports no iovec from user space (~11% of an 8-byte ping-pong's
 * samples went to copy_msghdr_from_user, most of them in polls that find nothing). With
 * MSG_TRUNC the result is the datagram's length even when larger than len. */
static inline ssize_t udp_sys_recvfrom(int fd, void *buf, size_t len, int flags,
                                       struct sockaddr_in *from)
{
    socklen_t alen = sizeof *from;
    return syscall(SYS_recvfrom, fd, buf, len, flags | MSG_TRUNC, from, &alen);
}

static inline int udp_sys_recvmmsg(int fd, struct mmsghdr *mm, unsigned n, int flags)
{
    return (int)syscall(SYS_recvmmsg, fd, mm, n, flags, NULL);
}

/* ------------------------------------------------------------ transmission */

/* Sends one datagram on fd, to sa (NULL: fd is connected). */
static void udp_send1(udp_t *s, int fd, const struct sockaddr_in *sa, const void *pkt, size_t len)
{
    for (;;) {
        ssize_t r = udp_sys_sendto(fd, pkt, len, sa);
        if (r >= 0 || errno != EINTR)
            break;
    }
    /* A datagram the kernel refuses (ENOBUFS, EAGAIN, an ICMP error) is a loss like any
     * other. */
    s->st.tx_packets++;
    s->st.tx_bytes += len;
}

static void udp_sendto(udp_t *s, uint32_t ip, uint16_t port, const void *pkt, size_t len)
{
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = port};
    sa.sin_addr.s_addr = ip;
    udp_send1(s, s->fd, &sa, pkt, len);
}

/* Creates the twin socket (bound at start-up, so that its port is published with the
 * address and receivers can check it); on failure sends stay on the main socket. */
static void udp_twin_open(udp_t *s)
{
    s->twin_fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    struct sockaddr_in me = {.sin_family = AF_INET, .sin_port = 0};
    me.sin_addr.s_addr = s->my_ip;
    socklen_t ml = sizeof me;
    if (s->twin_fd < 0 || bind(s->twin_fd, (struct sockaddr *)&me, sizeof me) != 0 ||
        getsockname(s->twin_fd, (struct sockaddr *)&me, &ml) != 0) {
        base_log("vnic/udp: no twin socket (%s): sends stay on the main one", strerror(errno));
        s->twin_on = 0;
        return;
    }
    if (setsockopt(s->twin_fd, SOL_SOCKET, SO_SNDBUFFORCE, &s->sockbuf, sizeof s->sockbuf))
        setsockopt(s->twin_fd, SOL_SOCKET, SO_SNDBUF, &s->sockbuf, sizeof s->sockbuf);
    s->my_twin_port = me.sin_port;
}

/* The keys that seal what we send to p. */
static inline udp_auth_t *udp_tx_auth(udp_t *s, const udp_peer_t *p)
{
    return BASE_LIKELY(!p->link) ? &s->auth : &s->foreign[p->link - 1].tx;
}

/* Writes the tag of the packet of len bytes at h, to peer p, with the next transmission
 * counter (every transmission gets its own: see udp_wire.h). */
static inline void udp_seal(udp_t *s, udp_peer_t *p, udp_hdr_t *h, size_t len)
{
    h->ctr = ++p->tx_ctr;
    if (BASE_UNLIKELY(udp_auth_seal(udp_tx_auth(s, p), h, len) != 0))
        base_fatal("vnic/udp: could not compute a packet's tag (src %u, dst %u, counter %llu: "
                   "the nonce takes ranks below 2^24 and counters below 2^48)",
                   (unsigned)h->src, (unsigned)h->dst, (unsigned long long)h->ctr);
}

/* A zero-copy GETRESP whose region was deregistered (or shrunk) since it was first sent
 * becomes the error answer FMPL_ERR_KEY for the bytes it covered: never read memory the
 * application may have freed. (The initiator, which normally acknowledged everything
 * before the target could learn the get was done, drops it as a duplicate.) */
static void udp_zcopy_recheck(udp_t *s, uint32_t i)
{
    udp_op_t *o = udp_slot_op(s, i);
    size_t len = s->slot_len[i] - UDP_HDRS;
    vnic_region_t r;
    if (vnic_region_read(s->v->regions, s->v->nregions, s->slot_zkey[i], &r) &&
        (r.access & VNIC_ACC_REMOTE_READ) && (const char *)(uintptr_t)r.base <= s->slot_ext[i] &&
        (size_t)(s->slot_ext[i] - (const char *)(uintptr_t)r.base) + len <= r.len)
        return;
    o->a = (uint64_t)(int64_t)FMPL_ERR_KEY;
    o->len = 0;
    udp_slot_hdr(s, i)->len = sizeof *o;
    s->slot_len[i] = UDP_HDRS;
    s->slot_ext[i] = NULL;
    s->slot_zkey[i] = VNIC_KEY_INVALID;
}

/* udp_seal for the message in slot i, whose payload may be outside it (ZERO-COPY). */
static inline void udp_seal_slot(udp_t *s, udp_peer_t *p, uint32_t i)
{
    udp_hdr_t *h = udp_slot_hdr(s, i);
    if (BASE_UNLIKELY(s->slot_zkey[i] != VNIC_KEY_INVALID))
        udp_zcopy_recheck(s, i);
    if (BASE_LIKELY(!s->slot_ext[i])) {
        udp_seal(s, p, h, s->slot_len[i]);
        return;
    }
    h->ctr = ++p->tx_ctr;
    if (BASE_UNLIKELY(udp_auth_seal2(udp_tx_auth(s, p), h, UDP_HDRS, s->slot_ext[i],
                                     s->slot_len[i] - UDP_HDRS) != 0))
        base_fatal("vnic/udp: could not compute a zero-copy packet's tag (src %u, dst %u, "
                   "counter %llu)",
                   (unsigned)h->src, (unsigned)h->dst, (unsigned long long)h->ctr);
}

/* Whether the datagrams to `rank` go through the twin socket, connect()ed to it (a
 * loopback send on a connected socket skips the route lookup: ~0.35 us less here): the
 * peer that received the last UDP_TWIN_RUN transmissions in a row, once it has sent us
 * something, gets it, and keeps it until another one does. Never with fault injection. */
static int udp_twin(udp_t *s, int rank, const udp_peer_t *p)
{
    if (!s->twin_on)
        return 0;
    if (BASE_LIKELY(rank == s->twin_peer))
        return 1;
    if (rank != s->run_peer) {
        s->run_peer = rank;
        s->run_len = 0;
    }
    /* only a peer that has sent us something (an acknowledgement or data) surely knows
     * our receiving address: a twin's datagrams never teach it */
    if (++s->run_len < UDP_TWIN_RUN || !p->ip || (!p->acked && !p->recv))
        return 0;
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = p->port};
    sa.sin_addr.s_addr = p->ip;
    if (connect(s->twin_fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
        base_log("vnic/udp: twin socket: connect: %s: sends stay on the main one", strerror(errno));
        s->twin_on = 0;
        s->twin_peer = -1;
        return 0;
    }
    s->twin_peer = rank;
    s->st.twin_connects++;
    return 1;
}

static void udp_hold_flush(udp_t *s, uint64_t now, int all)
{
    for (int i = 0; s->nhold && i < UDP_HOLD; i++) {
        udp_hold_t *h = &s->hold[i];
        if (!h->used || (!all && h->due_ns > now))
            continue;
        udp_sendto(s, h->ip, h->port, h->buf, h->len);
        h->used = 0;
        s->nhold--;
    }
}

/* Sends one datagram, through the fault injector when it is on. */
static void udp_tx(udp_t *s, udp_peer_t *p, const void *pkt, size_t len)
{
    if (BASE_LIKELY(!s->inject)) {
        udp_sendto(s, p->ip, p->port, pkt, len);
        return;
    }
    uint64_t now = base_time_ns();
    if (s->loss > 0 && udp_rand(s) < s->loss) {
        s->st.inj_loss++;
        udp_hold_flush(s, now, 0);
        return;
    }
    int copies = s->dup > 0 && udp_rand(s) < s->dup ? 2 : 1;
    if (copies == 2)
        s->st.inj_dup++;
    int held = 0;
    int hold_reorder = s->reorder > 0 && udp_rand(s) < s->reorder;
    if ((hold_reorder || s->delay_ns) && s->nhold < UDP_HOLD) {
        for (int i = 0; i < UDP_HOLD; i++) {
            udp_hold_t *h = &s->hold[i];
            if (h->used)
                continue;
            if (!h->buf && !(h->buf = malloc(s->mtu)))
                break;
            memcpy(h->buf, pkt, len);
            h->len = len;
            h->ip = p->ip;
            h->port = p->port;
            h->used = 1;
            /* reordered: released after the next datagram; delayed: up to delay_ns */
            h->due_ns = s->delay_ns ? now + (uint64_t)((double)s->delay_ns * udp_rand(s)) : now;
            s->nhold++;
            held = 1;
            if (hold_reorder)
                s->st.inj_reorder++;
            else
                s->st.inj_delay++;
            break;
        }
    }
    if (!held)
        udp_sendto(s, p->ip, p->port, pkt, len);
    if (copies == 2)
        udp_sendto(s, p->ip, p->port, pkt, len);
    if (!held)
        udp_hold_flush(s, now, 0);
}

/* Sends the message in slot i alone through udp_tx (the fault injector): a zero-copy
 * one gathered into a datagram first (injection and probes only). */
static void udp_tx_slot(udp_t *s, udp_peer_t *p, uint32_t i)
{
    udp_hdr_t *h = udp_slot_hdr(s, i);
    if (BASE_LIKELY(!s->slot_ext[i])) {
        udp_tx(s, p, h, s->slot_len[i]);
        return;
    }
    char *d = udp_slot(s, i); /* an MTU-sized slot (udp_put takes one): room for it all */
    memcpy(d + UDP_HDRS, s->slot_ext[i], s->slot_len[i] - UDP_HDRS);
    udp_tx(s, p, d, s->slot_len[i]);
}

/* Sends a zero-copy message (headers in the slot, payload in the caller's buffer) as
 * one datagram of two pieces. */
static void udp_send_zcopy(udp_t *s, int fd, const struct sockaddr_in *sa, const void *hdrs,
                           const void *payload, size_t len)
{
    struct iovec iov[2] = {{(void *)(uintptr_t)hdrs, UDP_HDRS}, {(void *)(uintptr_t)payload, len}};
    struct msghdr mh = {.msg_name = (void *)(uintptr_t)sa,
                        .msg_namelen = sa ? sizeof *sa : 0,
                        .msg_iov = iov,
                        .msg_iovlen = 2};
    for (;;) {
        ssize_t r = udp_sys_sendmsg(fd, &mh);
        if (r >= 0 || errno != EINTR)
            break; /* refused: a loss like any other */
    }
    s->st.tx_packets++;
    s->st.tx_bytes += UDP_HDRS + len;
}

/* Sends a control packet (ACK, LOSE, STOP, GO, BYE) with argument k. */
static void udp_ctrl(udp_t *s, int rank, udp_peer_t *p, uint8_t type, uint32_t k)
{
    udp_hdr_t h;
    memset(&h, 0, sizeof h);
    h.type = type;
    h.version = UDP_WIRE_VERSION;
    h.src = (uint32_t)s->rank;
    h.dst = udp_wire_rank(s, rank);
    h.ack = k;
    if (udp_twin(s, rank, p)) {
        h.flags = UDP_HF_TWIN;
        udp_seal(s, p, &h, sizeof h);
        udp_send1(s, s->twin_fd, NULL, &h, sizeof h);
    } else {
        udp_seal(s, p, &h, sizeof h);
        udp_tx(s, p, &h, sizeof h);
    }
    if (type == UDP_T_ACK || type == UDP_T_STOP || type == UDP_T_GO || type == UDP_T_LOSE) {
        p->flags &= (uint16_t) ~(PF_ACK_DUE | PF_ACK_NOW);
        p->rx_unacked = 0;
        p->rx_unacked_bytes = 0;
        p->ack_ns = 0;
    }
    switch (type) {
    case UDP_T_ACK: s->st.acks_sent++; break;
    case UDP_T_LOSE: s->st.lose_sent++; break;
    case UDP_T_STOP: s->st.stop_sent++; break;
    case UDP_T_GO: s->st.go_sent++; break;
    default: break;
    }
}

/* Sends n prepared datagrams with sendmmsg (what the socket refuses is lost like a
 * dropped packet: retransmission covers it) and counts them. */
static void udp_send_mmsg(udp_t *s, int fd, const struct sockaddr_in *sa, const struct iovec *iov,
                          int n)
{
    struct mmsghdr mm[UDP_BATCH];
    for (int b = 0; b < n; b += UDP_BATCH) {
        int m = BASE_MIN(UDP_BATCH, n - b);
        for (int j = 0; j < m; j++) {
            memset(&mm[j].msg_hdr, 0, sizeof mm[j].msg_hdr);
            mm[j].msg_hdr.msg_name = (void *)sa;
            mm[j].msg_hdr.msg_namelen = sa ? sizeof *sa : 0;
            mm[j].msg_hdr.msg_iov = (struct iovec *)&iov[b + j];
            mm[j].msg_hdr.msg_iovlen = 1;
        }
        int k = 0;
        while (k < m) {
            int r = udp_sys_sendmmsg(fd, mm + k, (unsigned)(m - k));
            if (r <= 0) {
                if (r < 0 && errno == EINTR)
                    continue;
                break;
            }
            k += r;
        }
        for (int j = 0; j < m; j++)
            s->st.tx_bytes += iov[b + j].iov_len;
        s->st.tx_packets += (uint64_t)m;
    }
}

/* Sends datagrams iov[0..n) (each <= the first's size) to one address as one UDP_SEGMENT
 * send: the kernel cuts the data at the first's size. 0 when the kernel refuses GSO. */
static int udp_send_gso(udp_t *s, int fd, const struct sockaddr_in *sa, const struct iovec *iov,
                        int n, size_t total)
{
    union {
        struct cmsghdr align;
        char buf[CMSG_SPACE(sizeof(uint16_t))];
    } ctl;
    memset(&ctl, 0, sizeof ctl);
    struct msghdr mh = {.msg_name = (void *)sa,
                        .msg_namelen = sa ? sizeof *sa : 0,
                        .msg_iov = (struct iovec *)iov,
                        .msg_iovlen = (size_t)n,
                        .msg_control = ctl.buf,
                        .msg_controllen = sizeof ctl.buf};
    struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
    c->cmsg_level = IPPROTO_UDP;
    c->cmsg_type = UDP_SEGMENT;
    c->cmsg_len = CMSG_LEN(sizeof(uint16_t));
    uint16_t seg = (uint16_t)iov[0].iov_len;
    memcpy(CMSG_DATA(c), &seg, sizeof seg);
    for (;;) {
        if (udp_sys_sendmsg(fd, &mh) >= 0)
            break;
        if (errno == EINTR)
            continue;
        /* EMSGSIZE: segments larger than the route's MTU (e.g. the 1556-byte default over
         * a 1500-byte veth), which plain sends get fragmented */
        if (errno == EINVAL || errno == EIO || errno == ENOPROTOOPT || errno == EOPNOTSUPP ||
            errno == EMSGSIZE) {
            base_log("vnic/udp: the kernel refuses UDP GSO (%s): batches go with sendmmsg",
                     strerror(errno));
            s->gso = 0;
            return 0;
        }
        break; /* ENOBUFS, EAGAIN: lost like any datagram */
    }
    s->st.tx_packets += (uint64_t)n;
    s->st.tx_bytes += total;
    s->st.gso_sends++;
    return 1;
}

/* Sends n prepared datagrams to one peer: one alone with sendto (cheaper than a batch of
 * one); with GSO, each run of datagrams of one size (the last of a run may be shorter, a
 * run at most 64 KiB) as one UDP_SEGMENT send; the rest with sendmmsg. */
static void udp_send_many(udp_t *s, int fd, const struct sockaddr_in *sa, const struct iovec *iov,
                          int n)
{
    int k = 0;
    while (s->gso && n - k >= 2) {
        size_t seg = iov[k].iov_len, total = 0;
        int m = 0;
        while (k + m < n && m < s->gso && iov[k + m].iov_len <= seg &&
               total + iov[k + m].iov_len <= UDP_GSO_MAX - 29) {
            total += iov[k + m].iov_len;
            if (iov[k + m++].iov_len < seg)
                break; /* a shorter one ends the run */
        }
        if (m < 2) {
            udp_send1(s, fd, sa, iov[k].iov_base, iov[k].iov_len);
            k++;
            continue;
        }
        if (!udp_send_gso(s, fd, sa, iov + k, m, total))
            break;
        k += m;
    }
    if (n - k == 1)
        udp_send1(s, fd, sa, iov[k].iov_base, iov[k].iov_len);
    else if (n - k > 1)
        udp_send_mmsg(s, fd, sa, iov + k, n - k);
}

/* 1 when message i of peer `rank` may be transmitted now: inside the window, and not
 * held by VNIC_F_DEFER. */
static inline int udp_sendable(const udp_t *s, int rank, const udp_peer_t *p, uint32_t i)
{
    const udp_hdr_t *h = udp_slot_hdr((udp_t *)s, i);
    if ((uint32_t)(h->seq - p->acked) > p->cwnd)
        return 0;
    return BASE_LIKELY(rank != s->held_peer) || seq_lt(h->seq, s->held_seq);
}

/* Readies message i (p->txnext) for transmission with header flags hf: counters, the
 * piggybacked acknowledgement, the checksum, the timer; advances p->txnext. */
static inline void udp_tx_prep(udp_t *s, udp_peer_t *p, uint32_t i, uint16_t hf, uint64_t now)
{
    udp_hdr_t *h = udp_slot_hdr(s, i);
    if (h->sent) {
        s->st.retransmits++;
        h->sent = 2; /* retransmitted: no round-trip sample (the receiver ignores it) */
    } else {
        s->st.data_sent++;
        h->sent = 1;
    }
    s->slot_sent[i] = now;
    h->ack = p->recv;
    h->flags = (uint16_t)(hf | (BASE_UNLIKELY(s->slot_ackreq[i]) ? UDP_HF_ACK : 0));
    udp_seal_slot(s, p, i);
    p->txnext = s->slot_next[i];
    if (!p->timer_ns)
        p->timer_ns = now + (s->rto_cur << p->backoff);
}

/* 1 when message j may join a bundle of `used` bytes (never a zero-copy one: its payload
 * is not in its slot; the next part starts at the next
 * multiple of 8). */
static inline int udp_bundle_fits(const udp_t *s, int rank, const udp_peer_t *p, size_t used,
                                  uint32_t j)
{
    return j != UDP_NIL && BASE_ALIGN_UP(used, 8) + s->slot_len[j] <= s->bundle_cap &&
           !s->slot_ext[j] && udp_sendable(s, rank, p, j);
}

/* Sends p->txnext and the messages after it that fit (at least two: the caller checked)
 * as one datagram: copies of their packets, each but the last with UDP_HF_MORE. */
static void udp_kick_bundle(udp_t *s, int rank, udp_peer_t *p, uint16_t hf, uint64_t now, int fd,
                            const struct sockaddr_in *sa)
{
    char *b = (char *)s->bundle;
    size_t used = 0;
    uint32_t i = p->txnext;
    for (int k = 0;; k++) {
        size_t len = s->slot_len[i];
        uint32_t j = s->slot_next[i];
        int more = udp_bundle_fits(s, rank, p, used + len, j);
        udp_tx_prep(s, p, i, (uint16_t)(hf | (more ? UDP_HF_MORE : 0)), now);
        memcpy(b + used, udp_slot_hdr(s, i), len);
        used += len;
        if (k)
            s->st.bundled_sent++;
        if (!more)
            break;
        size_t at = BASE_ALIGN_UP(used, 8);
        memset(b + used, 0, at - used);
        used = at;
        i = j;
    }
    s->st.bundles_sent++;
    if (s->inject)
        udp_tx(s, p, b, used);
    else
        udp_send1(s, fd, sa, b, used);
}

/* Transmits messages of peer `rank` allowed by the window and not held (VNIC_F_DEFER):
 * runs of small ones that fit in bundle_cap bytes as one datagram (udp_kick_bundle), the
 * others batched (see udp_send_many); one by one through the fault injector when it is
 * on. */
static void udp_kick(udp_t *s, int rank, udp_peer_t *p)
{
    if (p->txnext == UDP_NIL || (p->flags & (PF_STOPPED | PF_DEAD | PF_GONE)))
        return;
    struct iovec iov[UDP_GSO_SEGS];
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = p->port};
    sa.sin_addr.s_addr = p->ip;
    int n = 0, twin = -1; /* decided at the first datagram */
    uint64_t now = 0;
    while (p->txnext != UDP_NIL) {
        uint32_t i = p->txnext;
        if (!udp_sendable(s, rank, p, i))
            break;
        if (!now)
            now = udp_now(s);
        if (twin < 0)
            twin = udp_twin(s, rank, p);
        uint16_t hf = twin ? UDP_HF_TWIN : 0;
        if (s->slot_len[i] < s->bundle_cap && !s->slot_ext[i] &&
            udp_bundle_fits(s, rank, p, s->slot_len[i], s->slot_next[i])) {
            if (n) /* what was batched before leaves first (stream order) */
                udp_send_many(s, twin ? s->twin_fd : s->fd, twin ? NULL : &sa, iov, n);
            n = 0;
            udp_kick_bundle(s, rank, p, hf, now, twin ? s->twin_fd : s->fd, twin ? NULL : &sa);
            continue;
        }
        udp_tx_prep(s, p, i, hf, now);
        udp_hdr_t *h = udp_slot_hdr(s, i);
        if (s->inject) {
            udp_tx_slot(s, p, i);
        } else if (BASE_UNLIKELY(s->slot_ext[i] != NULL)) {
            if (n) /* what was batched before leaves first (stream order) */
                udp_send_many(s, twin ? s->twin_fd : s->fd, twin ? NULL : &sa, iov, n);
            n = 0;
            udp_send_zcopy(s, twin ? s->twin_fd : s->fd, twin ? NULL : &sa, h, s->slot_ext[i],
                           s->slot_len[i] - UDP_HDRS);
        } else {
            iov[n].iov_base = h;
            iov[n].iov_len = s->slot_len[i];
            if (++n == UDP_GSO_SEGS) {
                udp_send_many(s, twin ? s->twin_fd : s->fd, twin ? NULL : &sa, iov, n);
                n = 0;
            }
        }
    }
    if (n)
        udp_send_many(s, twin ? s->twin_fd : s->fd, twin ? NULL : &sa, iov, n);
    if (twin >= 0) { /* every DATA packet carried our acknowledgement */
        p->flags &= (uint16_t) ~(PF_ACK_DUE | PF_ACK_NOW);
        p->rx_unacked = 0;
        p->rx_unacked_bytes = 0;
        p->ack_ns = 0;
    }
    udp_activate(s, rank, p);
}

/* The held messages (VNIC_F_DEFER) become ordinary unsent ones, transmitted by the next
 * udp_kick of their peer. */
static void udp_unhold(udp_t *s)
{
    s->held_peer = -1;
    s->v->defer_held = 0;
    s->v->defer_epoch++;
}

/* Transmits the held messages now (with whatever else of their peer the window allows). */
static void udp_flush_deferred(udp_t *s)
{
    int rank = s->held_peer;
    if (rank < 0)
        return;
    udp_unhold(s);
    udp_kick(s, rank, s->peer[rank]);
}

static void udp_slot_put_back(udp_t *s, uint32_t i);

/* Frees the messages of p acknowledged up to k (MsgIdAcked <- k). */
static void udp_acked(udp_t *s, udp_peer_t *p, uint32_t k)
{
    if (!seq_lt(p->acked, k) || !seq_lt(k, p->next_seq))
        return; /* nothing new, or beyond what we sent (stale or bogus) */
    uint64_t now = udp_now(s);
    while (p->head != UDP_NIL && seq_le(udp_slot_hdr(s, p->head)->seq, k)) {
        uint32_t i = p->head;
        udp_hdr_t *h = udp_slot_hdr(s, i);
        if (h->seq == k && h->sent == 1 && now > s->slot_sent[i]) {
            uint64_t sample = now - s->slot_sent[i];
            s->srtt_ns = s->srtt_ns ? (7 * s->srtt_ns + sample) / 8 : sample;
            s->rto_cur = BASE_MIN(BASE_MAX(s->rto_ns, 2 * s->srtt_ns), 4 * s->rto_ns);
        }
        if (p->txnext == i)
            p->txnext = s->slot_next[i];
        p->head = s->slot_next[i];
        udp_slot_put_back(s, i);
    }
    if (p->head == UDP_NIL)
        p->tail = p->txnext = UDP_NIL;
    /* slow start: +1 per message acknowledged, up to N */
    p->cwnd = (uint16_t)BASE_MIN((uint32_t)s->window, (uint32_t)p->cwnd + (k - p->acked));
    p->acked = k;
    p->backoff = 0;
    /* the timer runs while a transmitted message is unacknowledged (not for messages
     * still held, VNIC_F_DEFER, or waiting for the window: udp_kick starts it) */
    p->timer_ns = p->head != UDP_NIL ? now + s->rto_cur : 0;
}

/* Go back N: retransmit from the oldest unacknowledged message, with the peer's window
 * halved (not below cwnd_min): repeated losses slow the sender down. */
static void udp_go_back(udp_t *s, int rank, udp_peer_t *p)
{
    p->cwnd = (uint16_t)BASE_MAX(p->cwnd / 2, s->cwnd_min);
    p->txnext = p->head;
    p->timer_ns = 0;
    udp_kick(s, rank, p);
}

/* Appends the message built in slot i (op header and payload filled, len = datagram
 * bytes) to peer's stream, without transmitting it (udp_kick does). Ends a hold of the
 * peer's messages unless the post in progress may be held too. */
static void udp_append(udp_t *s, udp_peer_t *p, uint32_t i, int rank, size_t len)
{
    if (BASE_UNLIKELY(rank == s->held_peer) && !s->defer_post) {
        /* the messages held for this peer (VNIC_F_DEFER) leave with this one, in one
         * datagram when they fit */
        s->st.deferred_joined += s->v->defer_held;
        udp_unhold(s);
    }
    udp_hdr_t *h = udp_slot_hdr(s, i);
    memset(h, 0, sizeof *h);
    h->type = UDP_T_DATA;
    h->version = UDP_WIRE_VERSION;
    h->src = (uint32_t)s->rank;
    h->dst = udp_wire_rank(s, rank);
    h->seq = p->next_seq++;
    h->len = (uint32_t)(len - sizeof *h);
    s->st.data_posted++;
    s->slot_len[i] = (uint32_t)len;
    s->slot_next[i] = UDP_NIL;
    if (p->tail == UDP_NIL) {
        p->head = i;
        uint64_t now = udp_now(s);
        if (now > p->heard_ns)
            p->heard_ns = now; /* the silence deadline counts from here */
    } else {
        s->slot_next[p->tail] = i;
    }
    p->tail = i;
    if (p->txnext == UDP_NIL)
        p->txnext = i;
}

/* udp_append, then transmits what the window allows. */
static void udp_enqueue(udp_t *s, int rank, udp_peer_t *p, uint32_t i, size_t len)
{
    udp_append(s, p, i, rank, len);
    udp_kick(s, rank, p);
}

/* ------------------------------------------------------------ send slots */

typedef struct udp_room {
    udp_t *s;
    udp_peer_t *p;
    uint32_t keep;
    size_t need;
} udp_room_t;

/* Class of slot that holds `need` datagram bytes and has more than `keep` free, or -1.
 * A small message takes a large slot when the small ones are all taken. */
static inline int udp_room_class(udp_t *s, size_t need, uint32_t keep)
{
    if (need <= UDP_SMALL && s->nfree[0] > keep)
        return 0;
    return s->nfree[1] > keep ? 1 : -1;
}

static int udp_room_ready(void *arg)
{
    udp_room_t *r = arg;
    return udp_room_class(r->s, r->need, r->keep) >= 0 ||
           (r->p && (r->p->flags & (PF_DEAD | PF_GONE)));
}

/* Takes a free send slot for a datagram of `need` bytes, waiting (progressing) when the
 * pool has none. keep: slots of the class that must stay free (the response reserve).
 * FMPL_ERR_PEER when p dies meanwhile. */
static int udp_slot_take(udp_t *s, udp_peer_t *p, uint32_t keep, size_t need, uint32_t *out)
{
    int c = udp_room_class(s, need, keep);
    if (BASE_UNLIKELY(c < 0)) {
        udp_room_t r = {s, p, keep, need};
        int rc = vnic_wait(s->v, udp_room_ready, &r, -1);
        if (p && (p->flags & (PF_DEAD | PF_GONE)))
            return FMPL_ERR_PEER;
        if (rc)
            return rc;
        c = udp_room_class(s, need, keep);
    }
    if (p && (p->flags & (PF_DEAD | PF_GONE)))
        return FMPL_ERR_PEER;
    uint32_t i = s->free_head[c];
    s->free_head[c] = s->slot_next[i];
    s->nfree[c]--;
    *out = i;
    return FMPL_SUCCESS;
}

static void udp_slot_put_back(udp_t *s, uint32_t i)
{
    s->slot_ext[i] = NULL;
    s->slot_ackreq[i] = 0;
    s->slot_zkey[i] = VNIC_KEY_INVALID;
    int c = i >= s->nsmall;
    s->slot_next[i] = s->free_head[c];
    s->free_head[c] = i;
    s->nfree[c]++;
}

/* ------------------------------------------------------------ requests */

typedef struct udp_flag {
    int *flag;
} udp_flag_t;

static int udp_flag_ready(void *arg)
{
    return __atomic_load_n(((udp_flag_t *)arg)->flag, __ATOMIC_ACQUIRE);
}

static int udp_req_free_ready(void *arg)
{
    udp_t *s = arg;
    return s->req_free != UDP_NIL;
}

static int udp_req_take(udp_t *s, uint32_t *out)
{
    if (BASE_UNLIKELY(s->req_free == UDP_NIL)) {
        int rc = vnic_wait(s->v, udp_req_free_ready, s, -1);
        if (rc)
            return rc;
    }
    uint32_t i = s->req_free;
    udp_req_t *r = &s->req[i];
    s->req_free = r->next_free;
    r->busy = 1;
    r->gen++;
    r->status = FMPL_SUCCESS;
    r->got = 0;
    r->iov = NULL;
    r->done = r->statusp = NULL;
    s->req_busy++;
    *out = i;
    return FMPL_SUCCESS;
}

static inline uint32_t udp_reqid(udp_t *s, uint32_t i)
{
    return (uint32_t)s->req[i].gen << 16 | i;
}

static void udp_req_finish(udp_t *s, uint32_t i, int status)
{
    udp_req_t *r = &s->req[i];
    if (status && !r->status)
        r->status = status;
    if (r->iov != &r->one)
        free(r->iov);
    r->iov = NULL;
    r->busy = 0;
    s->req_busy--;
    vnic_cntr_complete(r->lcntr, r->status);
    if (r->done) {
        *r->statusp = r->status;
        __atomic_store_n(r->done, 1, __ATOMIC_RELEASE);
    }
    r->next_free = s->req_free;
    s->req_free = i;
}

static udp_req_t *udp_req_lookup(udp_t *s, uint32_t id, int src, uint8_t kind, uint32_t *idx)
{
    uint32_t i = id & 0xffff;
    if (i >= s->nreq)
        return NULL;
    udp_req_t *r = &s->req[i];
    if (!r->busy || r->gen != (uint16_t)(id >> 16) || r->peer != src || r->kind != kind)
        return NULL;
    *idx = i;
    return r;
}

/* ------------------------------------------------------------ peer death */

static void udp_peer_dead(udp_t *s, int rank, udp_peer_t *p, const char *why)
{
    if (p->flags & PF_DEAD)
        return;
    p->flags |= PF_DEAD;
    s->st.peer_deaths++;
    if (s->held_peer == rank)
        udp_unhold(s);
    base_log("vnic/udp: rank %d %s: its operations fail with FMPL_ERR_PEER (stream: acked %u, "
             "sent up to %u, received %u, flags %#x)",
             rank, why, p->acked, p->next_seq - 1, p->recv, p->flags);
    while (p->head != UDP_NIL) {
        uint32_t i = p->head;
        p->head = s->slot_next[i];
        udp_slot_put_back(s, i);
    }
    p->tail = p->txnext = UDP_NIL;
    p->timer_ns = 0;
    for (uint32_t i = 0; i < s->nreq; i++)
        if (s->req[i].busy && s->req[i].peer == rank)
            udp_req_finish(s, i, FMPL_ERR_PEER);
    for (udp_job_t **jp = &s->jobs; *jp;) {
        udp_job_t *j = *jp;
        if (j->peer == rank) {
            *jp = j->next;
            s->njobs--;
            free(j);
        } else {
            jp = &j->next;
        }
    }
    s->jobs_tail = NULL;
    for (udp_job_t *j = s->jobs; j; j = j->next)
        s->jobs_tail = j;
    __atomic_fetch_add(&s->v->peer_failures, 1, __ATOMIC_RELAXED);
}

/* ------------------------------------------------------------ target side */

static int udp_region(udp_t *s, vnic_key_t key, uint64_t off, uint64_t len, unsigned access,
                      vnic_region_t *r)
{
    return vnic_region_read(s->v->regions, s->v->nregions, key, r) && (r->access & access) &&
           vnic_region_bounds_ok(r->len, off, len);
}

static void udp_refused(udp_t *s, int src, const udp_op_t *o, const char *what)
{
    s->st.refused++;
    if (s->st.refused <= 10)
        base_log("vnic/udp: %s from rank %d refused: key %#x offset %llu length %u not valid "
                 "here",
                 what, src, o->key, (unsigned long long)o->off, o->len);
}

static void udp_notify(udp_t *s, const vnic_notify_t *n)
{
    s->depth++;
    vnic_deliver_notify(s->v, n);
    s->depth--;
}

static void udp_exec_put(udp_t *s, int src, const udp_op_t *o, const char *data)
{
    vnic_region_t r;
    uint32_t fl = o->flags;
    if (udp_region(s, o->key, o->off, o->len, VNIC_ACC_REMOTE_WRITE, &r) &&
        (!(fl & VNIC_F_TAIL_FLAG) || (o->len >= 8 && (r.base + o->off + o->len) % 8 == 0))) {
        char *dst = (char *)(uintptr_t)r.base + o->off;
        if (fl & VNIC_F_TAIL_FLAG) {
            memcpy(dst, data, o->len - 8);
            vnic_tail_store(dst + o->len - 8, data + o->len - 8);
        } else if (o->len && dst != data) { /* equal: received in place */
            memcpy(dst, data, o->len);
        }
    } else {
        udp_refused(s, src, o, "put");
        return;
    }
    if ((fl & VNIC_F_RCNTR) && o->aux < s->v->ncntr)
        __atomic_fetch_add(vnic_cntr_word(s->v, o->aux), 1, __ATOMIC_RELEASE);
    if (fl & VNIC_F_NOTIFY) {
        vnic_notify_t nt = {.src = src,
                            .chan = o->chan,
                            .imm = o->imm,
                            .key = o->key,
                            .off = o->a,
                            .len = (size_t)o->b};
        udp_notify(s, &nt);
    }
}

static uint64_t udp_amo_exec(uint8_t opcode, uint64_t *w, uint64_t operand, uint64_t compare)
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

/* 1 when the request can be executed now (resources for its answer exist). */
static int udp_can_exec(udp_t *s, const udp_op_t *o)
{
    /* handlers run on the application's thread only; they and everything after them in
     * the receive buffer wait for its next entry */
    if (BASE_UNLIKELY(s->thr_serving) &&
        (o->kind == UDP_OP_AM || (o->kind == UDP_OP_PUT && (o->flags & VNIC_F_NOTIFY))))
        return 0;
    if (o->kind == UDP_OP_AMO)
        return udp_room_class(s, UDP_HDRS, 0) >= 0;
    if (o->kind == UDP_OP_GETREQ)
        return s->njobs < s->max_jobs;
    return 1;
}

static void udp_exec(udp_t *s, int src, const udp_op_t *o, const char *data)
{
    s->executed++;
    switch (o->kind) {
    case UDP_OP_PUT: udp_exec_put(s, src, o, data); break;
    case UDP_OP_AM: {
        vnic_notify_t nt = {.src = src,
                            .chan = o->chan,
                            .imm = o->imm,
                            .key = VNIC_KEY_INVALID,
                            .len = o->len,
                            .data = data};
        udp_notify(s, &nt);
        break;
    }
    case UDP_OP_AMO: {
        udp_peer_t *p = udp_peer_of(s, src);
        if (p->flags & (PF_DEAD | PF_GONE))
            break;
        vnic_region_t r;
        uint64_t old = 0;
        int st = FMPL_SUCCESS;
        if (o->amo >= VNIC_OP_FADD && o->amo <= VNIC_OP_SWAP &&
            udp_region(s, o->key, o->off, 8, VNIC_ACC_REMOTE_ATOMIC, &r) &&
            (r.base + o->off) % 8 == 0) {
            old = udp_amo_exec(o->amo, (uint64_t *)(uintptr_t)(r.base + o->off), o->imm, o->a);
        } else {
            udp_refused(s, src, o, "atomic");
            st = FMPL_ERR_KEY;
        }
        uint32_t i;
        if (udp_slot_take(s, p, 0, UDP_HDRS, &i))
            break;
        udp_op_t *ro = udp_slot_op(s, i);
        memset(ro, 0, sizeof *ro);
        ro->kind = UDP_OP_AMORESP;
        ro->aux = o->aux;
        ro->a = old;
        ro->b = (uint64_t)(int64_t)st;
        udp_enqueue(s, src, p, i, UDP_HDRS);
        break;
    }
    case UDP_OP_GETREQ: {
        int nseg = (int)(o->len / 16);
        udp_job_t *j = malloc(sizeof *j + (size_t)nseg * sizeof(vnic_rseg_t));
        if (!j)
            base_fatal("vnic/udp: out of memory for a get");
        j->next = NULL;
        j->peer = src;
        j->reqid = o->aux;
        j->key = o->key;
        j->pos = o->b;
        j->end = o->b;
        j->nseg = nseg;
        j->seg_i = 0;
        j->seg_pos = 0;
        for (int k = 0; k < nseg; k++) {
            uint64_t w[2];
            memcpy(w, data + 16 * k, 16);
            j->seg[k].off = w[0];
            j->seg[k].len = (size_t)w[1];
            j->end += w[1];
        }
        if (s->jobs_tail)
            s->jobs_tail->next = j;
        else
            s->jobs = j;
        s->jobs_tail = j;
        s->njobs++;
        break;
    }
    default: break;
    }
}

/* Streams GET responses while send slots are free (keeping the reserve). */
static int udp_jobs_run(udp_t *s)
{
    int n = 0, pending = 0, last = -1; /* responses appended to `last`, not yet sent */
    while (s->jobs) {
        udp_job_t *j = s->jobs;
        udp_peer_t *p = udp_peer_of(s, j->peer);
        if (pending && (j->peer != last || pending >= s->tx_batch)) {
            udp_kick(s, last, s->peer[last]);
            pending = 0;
        }
        size_t need = UDP_HDRS + (size_t)BASE_MIN((uint64_t)s->data_max, j->end - j->pos);
        if (udp_room_class(s, need, UDP_RESERVE) < 0)
            break;
        uint32_t i;
        if (udp_slot_take(s, p, UDP_RESERVE, need, &i))
            goto drop;
        udp_op_t *ro = udp_slot_op(s, i);
        memset(ro, 0, sizeof *ro);
        ro->kind = UDP_OP_GETRESP;
        ro->aux = j->reqid;
        ro->off = j->pos;
        char *dst = (char *)(ro + 1);
        size_t room = need - UDP_HDRS, len = 0;
        int st = FMPL_SUCCESS;
        /* ZERO-COPY: a fragment that one segment fills, from the region itself */
        int zc = s->zcopy_min && room >= BASE_MIN(s->zcopy_min, s->data_max) && !s->gso;
        while (room && j->seg_i < j->nseg) {
            vnic_rseg_t *g = &j->seg[j->seg_i];
            if (j->seg_pos == g->len) {
                j->seg_i++;
                j->seg_pos = 0;
                continue;
            }
            size_t k = BASE_MIN(room, g->len - j->seg_pos);
            vnic_region_t r;
            if (!udp_region(s, j->key, g->off + j->seg_pos, k, VNIC_ACC_REMOTE_READ, &r)) {
                udp_op_t tmp = {.key = j->key, .off = g->off, .len = (uint32_t)g->len};
                udp_refused(s, j->peer, &tmp, "get");
                st = FMPL_ERR_KEY;
                break;
            }
            const char *from = (const char *)(uintptr_t)r.base + g->off + j->seg_pos;
            if (zc && !len && k == room) { /* the whole fragment from one segment */
                s->slot_ext[i] = from;
                s->slot_zkey[i] = j->key;
                s->st.zcopy_sent++;
            } else {
                memcpy(dst + len, from, k);
            }
            len += k;
            room -= k;
            j->seg_pos += k;
        }
        ro->len = (uint32_t)len;
        if (st) {
            /* the error covers everything left of this request */
            ro->len = 0;
            len = 0;
            ro->a = (uint64_t)(int64_t)st;
            ro->b = j->end - j->pos;
            j->pos = j->end;
        } else {
            ro->b = len;
            j->pos += len;
        }
        udp_append(s, p, i, j->peer, UDP_HDRS + len);
        last = j->peer;
        pending++;
        n++;
        if (j->pos < j->end)
            continue;
    drop:
        s->jobs = j->next;
        if (!s->jobs)
            s->jobs_tail = NULL;
        s->njobs--;
        free(j);
    }
    if (pending)
        udp_kick(s, last, s->peer[last]);
    return n;
}

/* Responses: completions at the initiator, executed on arrival at any depth. */
/* RECEIVE IN PLACE: expects the next message of peer src (sequence number seq) to be a
 * fragment of kind writing from off on (key: the region of a PUT, the request id of a
 * GETRESP), when that is on and may be taken now: a rank of this job (whose datagrams
 * udp_rx_packet parses from their headers alone), not while cooling after a miss. */
static void udp_place_expect(udp_t *s, int src, uint32_t seq, uint8_t kind, uint32_t key,
                             uint64_t off)
{
    if (!s->place_on || s->gro || src >= s->size)
        return;
    if (BASE_UNLIKELY(s->place_cool)) {
        s->place_cool--;
        return;
    }
    s->place_peer = src;
    s->place_seq = seq;
    s->place_kind = kind;
    s->place_key = key;
    s->place_off = off;
}

static void udp_response(udp_t *s, int src, const udp_op_t *o, const char *data)
{
    uint32_t idx;
    if (o->kind == UDP_OP_AMORESP) {
        udp_req_t *r = udp_req_lookup(s, o->aux, src, UDP_OP_AMO, &idx);
        if (!r) {
            s->st.stale++;
            return;
        }
        int st = (int)(int64_t)o->b;
        if (!st && r->result)
            *r->result = o->a;
        udp_req_finish(s, idx, st);
        return;
    }
    udp_req_t *r = udp_req_lookup(s, o->aux, src, UDP_OP_GETREQ, &idx);
    if (!r || o->off + o->b > r->total || o->len > o->b) {
        s->st.stale++;
        return;
    }
    int st = (int)(int64_t)o->a;
    if (st) {
        if (!r->status)
            r->status = st;
    } else if (o->len) {
        vnic_lcur_t lc = {.iov = r->iov, .cnt = r->iovcnt};
        vnic_lcur_seek(&lc, o->off);
        if (lc.idx >= lc.cnt || (const char *)lc.iov[lc.idx].iov_base + lc.off != data)
            vnic_lcur_scatter(&lc, data, o->len); /* else received in place */
    }
    r->got += o->b;
    if (r->got >= r->total) {
        udp_req_finish(s, idx, FMPL_SUCCESS);
        return;
    }
    if (!st && o->len && o->off + o->b + s->data_max <= r->total) /* the next answer */
        udp_place_expect(s, src, s->peer[src]->recv + 1, UDP_OP_GETRESP, o->aux, o->off + o->b);
}

/* RECEIVE IN PLACE: after PUT fragment o of peer src was accepted and executed, expect
 * its next fragment in place when that one surely is a whole datagram's payload of the
 * same contiguous put (UDP_PUT_RUN) and not its last (which may carry the tail flag):
 * every byte of [next, next + data_max) is then written by this put's later fragments. */
static void udp_place_expect_put(udp_t *s, int src, const udp_peer_t *p, const udp_op_t *o)
{
    uint64_t next = o->off + o->len, end = o->a + o->b;
    if (o->amo == UDP_PUT_RUN && end >= o->a && next >= o->off && next >= o->a &&
        end - next >= s->data_max + 8)
        udp_place_expect(s, src, p->recv + 1, UDP_OP_PUT, o->key, next);
}

/* RECEIVE IN PLACE: where the expected message would write its payload (data_max bytes
 * from there are free for it to land: see the top of this file), or NULL when the
 * expectation does not hold now (it is then dropped). Checked at every reception: the
 * region or request may have gone since. */
static char *udp_place_dst(udp_t *s)
{
    int src = s->place_peer;
    const udp_peer_t *p = s->peer[src];
    if (s->depth || s->rq_count || (s->exec_budget && s->executed >= s->exec_budget) || !p ||
        p->recv + 1 != s->place_seq || (p->flags & (PF_STOP_SENT | PF_DEAD | PF_GONE)))
        return NULL;
    if (s->place_kind == UDP_OP_PUT) {
        vnic_region_t r;
        if (!udp_region(s, s->place_key, s->place_off, s->data_max, VNIC_ACC_REMOTE_WRITE, &r))
            return NULL;
        return (char *)(uintptr_t)r.base + s->place_off;
    }
    uint32_t idx;
    udp_req_t *r = udp_req_lookup(s, s->place_key, src, UDP_OP_GETREQ, &idx);
    if (!r || r->status || s->place_off + s->data_max > r->total)
        return NULL;
    vnic_lcur_t lc = {.iov = r->iov, .cnt = r->iovcnt};
    vnic_lcur_seek(&lc, s->place_off);
    if (lc.idx >= lc.cnt || lc.iov[lc.idx].iov_len - lc.off < s->data_max)
        return NULL;
    return (char *)lc.iov[lc.idx].iov_base + lc.off;
}

/* ------------------------------------------------------------ receive buffer */

static inline size_t udp_rq_entry(size_t len)
{
    return BASE_ALIGN_UP(8 + len, 8);
}

/* Room for a message of len bytes (op header + payload). */
static int udp_rq_room(udp_t *s, size_t len)
{
    size_t need = udp_rq_entry(len);
    if (s->rq_used == 0)
        return need <= s->rq_cap;
    if (s->rq_tail >= s->rq_head) {
        if (s->rq_cap - s->rq_tail >= need)
            return 1;
        return s->rq_head > need; /* wrap (strictly: tail never meets head) */
    }
    return s->rq_head - s->rq_tail > need;
}

static void udp_rq_push(udp_t *s, int src, const udp_op_t *o, const void *data)
{
    size_t len = sizeof *o + o->len, need = udp_rq_entry(len);
    if (s->rq_used == 0)
        s->rq_head = s->rq_tail = 0;
    if (s->rq_tail >= s->rq_head && s->rq_cap - s->rq_tail < need) {
        if (s->rq_cap - s->rq_tail >= 4) {
            uint32_t mark = UINT32_MAX;
            memcpy(s->rq + s->rq_tail, &mark, 4);
        }
        s->rq_used += s->rq_cap - s->rq_tail;
        s->rq_tail = 0;
    }
    char *e = s->rq + s->rq_tail;
    uint32_t l32 = (uint32_t)len, s32 = (uint32_t)src;
    memcpy(e, &l32, 4);
    memcpy(e + 4, &s32, 4);
    memcpy(e + 8, o, sizeof *o);
    if (o->len)
        memcpy(e + 8 + sizeof *o, data, o->len);
    s->rq_tail += need;
    s->rq_used += need;
    s->rq_count++;
    s->st.queued++;
}

/* Executes queued requests in order (depth 0 only). */
static int udp_rq_run(udp_t *s)
{
    int n = 0;
    while (s->rq_count && !s->depth) {
        if (s->exec_budget && s->executed >= s->exec_budget)
            break;
        if (s->rq_cap - s->rq_head < 8) {
            s->rq_used -= s->rq_cap - s->rq_head;
            s->rq_head = 0;
        }
        uint32_t len;
        memcpy(&len, s->rq + s->rq_head, 4);
        if (len == UINT32_MAX) {
            s->rq_used -= s->rq_cap - s->rq_head;
            s->rq_head = 0;
            continue;
        }
        uint32_t src;
        memcpy(&src, s->rq + s->rq_head + 4, 4);
        udp_op_t o;
        memcpy(&o, s->rq + s->rq_head + 8, sizeof o);
        if (!udp_can_exec(s, &o))
            break;
        /* the entry stays in place (nested progress only appends) until executed */
        udp_exec(s, (int)src, &o, s->rq + s->rq_head + 8 + sizeof o);
        size_t need = udp_rq_entry(len);
        s->rq_head += need;
        s->rq_used -= need;
        s->rq_count--;
        if (s->rq_head == s->rq_cap)
            s->rq_head = 0;
        n++;
    }
    if (!s->rq_count)
        s->rq_used = s->rq_head = s->rq_tail = 0;
    /* GO once the buffer is at most half full */
    if (s->stopped_peers && s->rq_used <= s->rq_cap / 2) {
        for (int k = 0; k < s->nactive; k++) {
            int rank = s->active[k];
            udp_peer_t *p = s->peer[rank];
            if (p->flags & PF_STOP_SENT) {
                p->flags &= (uint16_t)~PF_STOP_SENT;
                s->stopped_peers--;
                udp_ctrl(s, rank, p, UDP_T_GO, p->recv + 1);
            }
        }
    }
    return n;
}

/* ------------------------------------------------------------ receive */

static void udp_rx_data(udp_t *s, int src, udp_peer_t *p, const udp_parsed_t *m)
{
    uint32_t seq = m->h.seq;
    if (seq_le(seq, p->recv)) {
        s->st.dup_dropped++;
        p->flags |= PF_ACK_DUE | PF_ACK_NOW; /* our ACK may have been lost */
        udp_activate(s, src, p);
        return;
    }
    if (seq != p->recv + 1) {
        s->st.ooo_dropped++;
        /* one LOSE per gap; a retransmitted packet beyond the gap means the sender went
         * back and lost the head again: that is a new gap */
        if (!(p->flags & PF_LOSE_SENT) || m->h.sent == 2) {
            p->flags |= PF_LOSE_SENT;
            udp_ctrl(s, src, p, UDP_T_LOSE, p->recv);
        }
        return;
    }
    const udp_op_t *o = &m->op;
    int response = o->kind == UDP_OP_GETRESP || o->kind == UDP_OP_AMORESP || o->kind == UDP_OP_DONE;
    int direct = response || (!s->depth && !s->rq_count && udp_can_exec(s, o) &&
                              (!s->exec_budget || s->executed < s->exec_budget));
    if (!direct) {
        if ((p->flags & PF_STOP_SENT) || !udp_rq_room(s, sizeof *o + o->len)) {
            s->st.full_dropped++;
            if (!(p->flags & PF_STOP_SENT)) {
                p->flags |= PF_STOP_SENT;
                s->stopped_peers++;
            }
            udp_ctrl(s, src, p, UDP_T_STOP, p->recv);
            udp_activate(s, src, p);
            return;
        }
    }
    /* accepted */
    p->recv = seq;
    p->flags &= (uint16_t)~PF_LOSE_SENT;
    p->flags |= PF_ACK_DUE;
    p->rx_unacked_bytes += m->h.len;
    if (++p->rx_unacked >= s->ack_every || p->rx_unacked_bytes >= UDP_ACK_BYTES ||
        (m->h.flags & UDP_HF_ACK))
        p->flags |= PF_ACK_NOW;
    else if (!p->ack_ns)
        p->ack_ns = udp_now(s) + s->ack_delay_ns;
    udp_activate(s, src, p);
    if (o->kind == UDP_OP_DONE) {
        if (o->a == UINT64_MAX)
            p->flags |= PF_DONE;
        else
            p->fence_rx = (uint8_t)o->a;
        return;
    }
    if (response) {
        if (src == s->place_peer)
            s->place_peer = -1; /* used up; udp_response may set the next one */
        udp_response(s, src, o, m->payload);
        return;
    }
    if (src == s->place_peer)
        s->place_peer = -1; /* its expectation is used up; a new one is set below */
    if (direct) {
        udp_exec(s, src, o, m->payload);
        if (o->kind == UDP_OP_PUT)
            udp_place_expect_put(s, src, p, o);
    } else {
        udp_rq_push(s, src, o, m->payload);
    }
}

/* The peer id of the registered process of another job (OTHER JOBS) that sent a packet
 * with header h from `from` (its main port, or its twin's with UDP_HF_TWIN), -1: none. A
 * linear scan, paid only by traffic between jobs. */
static int udp_foreign_of(const udp_t *s, const udp_hdr_t *h, const struct sockaddr_in *from)
{
    for (int i = 0; i < s->npeers - s->size; i++) {
        const udp_peer_t *p = s->peer[s->size + i];
        if (s->foreign[i].rank == h->src && p->ip == from->sin_addr.s_addr &&
            from->sin_port == ((h->flags & UDP_HF_TWIN) ? p->twin_port : p->port))
            return s->size + i;
    }
    return -1;
}

/* Handles one packet (a datagram, or a part of a bundle: first = 0 for the parts after
 * the first, which are counted in bundled_recv rather than rx_packets). ext: NULL, or
 * (RECEIVE IN PLACE) a DATA packet whose first UDP_HDRS bytes are at buf and the rest at
 * ext. */
static void udp_rx_packet(udp_t *s, const char *buf, const char *ext, size_t n,
                          const struct sockaddr_in *from, int first)
{
    if (BASE_LIKELY(first))
        s->st.rx_packets++;
    else
        s->st.bundled_recv++;
    s->st.rx_bytes += n;
    udp_parsed_t m;
    int rc = BASE_LIKELY(!s->alone)
                 ? udp_parse(buf, n, (uint32_t)s->rank, (uint32_t)s->size, s->data_max, &m)
                 : UDP_PARSE_MALFORMED;
    int src = -1; /* the sender's peer id, once its address is checked */
    udp_peer_t *p = NULL;
    if (BASE_UNLIKELY(ext != NULL)) { /* the parser reads the headers only */
        if (rc == UDP_PARSE_OK && m.h.type == UDP_T_DATA)
            m.payload = ext;
        else
            rc = UDP_PARSE_MALFORMED; /* udp_rx_place matched a DATA packet: never here */
    }
    if (BASE_LIKELY(rc == UDP_PARSE_OK)) {
        src = (int)m.h.src;
        p = s->peer[src];
        if (BASE_UNLIKELY(!p || !p->ip)) {
            /* first contact of a peer whose address was not read at start-up: from boot,
             * which only the application's thread may call (the progress thread leaves the
             * datagram to the sender's retransmission) */
            if (s->thr_serving) {
                s->st.unverified++;
                return;
            }
            p = udp_peer_of(s, src);
            if (udp_peer_addr(s, src, p) != FMPL_SUCCESS)
                src = -1;
        }
        if (src >= 0 &&
            BASE_UNLIKELY(from->sin_addr.s_addr != p->ip ||
                          from->sin_port != ((m.h.flags & UDP_HF_TWIN) ? p->twin_port : p->port)))
            src = -1; /* not from the address the claimed sender registered */
    }
    if (BASE_UNLIKELY(src < 0) && !ext && s->npeers > s->size &&
        udp_parse_other(buf, n, (uint32_t)s->rank, s->data_max, &m) == UDP_PARSE_OK) {
        rc = UDP_PARSE_OK; /* well formed for another job: foreign unless registered */
        src = udp_foreign_of(s, &m.h, from);
        p = src >= 0 ? s->peer[src] : NULL;
    }
    if (BASE_UNLIKELY(src < 0)) {
        switch (rc) {
        case UDP_PARSE_OK: s->st.bad_secret++; return; /* from an address of no peer */
        case UDP_PARSE_SHORT: s->st.truncated++; return;
        default: s->st.malformed++; return;
        }
    }
    udp_auth_t *auth = BASE_LIKELY(!p->link) ? &s->auth : &s->foreign[p->link - 1].rx;
    if (BASE_UNLIKELY(ext ? !udp_auth_check2(auth, buf, UDP_HDRS, ext, n - UDP_HDRS)
                          : !udp_auth_check(auth, buf, n))) {
        s->st.bad_csum++; /* forged or corrupted */
        return;
    }
    if (BASE_UNLIKELY(!udp_replay_fresh(p->rx_top, p->rx_bits, m.h.ctr))) {
        s->st.replayed++;
        return;
    }
    udp_replay_mark(&p->rx_top, &p->rx_bits, m.h.ctr);
    if (BASE_UNLIKELY(s->cap_want) && src == s->cap_src && n <= VNIC_UDP_CAPTURE_BYTES) {
        char *c = s->cap_buf + (size_t)s->cap_n * VNIC_UDP_CAPTURE_BYTES;
        memcpy(c, buf, ext ? UDP_HDRS : n);
        if (ext)
            memcpy(c + UDP_HDRS, ext, n - UDP_HDRS);
        s->cap_len[s->cap_n++] = (uint32_t)n;
        s->cap_want--;
    }
    if (p->flags & (PF_DEAD | PF_GONE)) {
        s->st.stale++;
        return;
    }
    p->heard_ns = udp_now(s);
    int rank = src;
    /* every packet acknowledges the reverse stream cumulatively */
    switch (m.h.type) {
    case UDP_T_DATA: {
        uint32_t before = p->acked;
        udp_acked(s, p, m.h.ack);
        if ((p->flags & PF_STOPPED) && p->acked != before) {
            p->flags &= (uint16_t)~PF_STOPPED; /* see UDP_T_ACK */
            p->txnext = p->head;
        }
        udp_rx_data(s, src, p, &m);
        udp_kick(s, rank, p);
        break;
    }
    case UDP_T_ACK: {
        s->st.acks_recv++;
        uint32_t before = p->acked;
        udp_acked(s, p, m.h.ack);
        if ((p->flags & PF_STOPPED) && p->acked != before) {
            /* it accepted our probe after its STOP (which set acked): it has room again,
             * as if its GO had come (the GO may have been lost) */
            p->flags &= (uint16_t)~PF_STOPPED;
            udp_go_back(s, rank, p);
        } else {
            udp_kick(s, rank, p);
        }
        break;
    }
    case UDP_T_LOSE:
        s->st.lose_recv++;
        udp_acked(s, p, m.h.ack);
        if (!(p->flags & PF_STOPPED) && p->head != UDP_NIL) {
            /* LOSEs of one burst (the receiver saw several gaps of one window) ask for
             * what the first one already resent: go back only when the oldest message was
             * not sent again within the last 20 us. Resending more is cheaper than waiting
             * for the timer on a fast network (the receiver drops the duplicates). */
            uint32_t i = p->head;
            uint64_t now = base_time_ns();
            if (udp_slot_hdr(s, i)->sent && now - s->slot_sent[i] < 20000u)
                s->st.lose_ignored++;
            else
                udp_go_back(s, rank, p);
        }
        break;
    case UDP_T_STOP:
        s->st.stop_recv++;
        udp_acked(s, p, m.h.ack);
        p->flags |= PF_STOPPED;
        p->txnext = p->head;
        if (p->head != UDP_NIL && !p->timer_ns)
            p->timer_ns = p->heard_ns + (s->rto_cur << p->backoff);
        break;
    case UDP_T_GO:
        s->st.go_recv++;
        udp_acked(s, p, m.h.ack - 1);
        p->flags &= (uint16_t)~PF_STOPPED;
        udp_go_back(s, rank, p);
        break;
    case UDP_T_BYE:
        udp_acked(s, p, m.h.ack);
        p->flags |= PF_GONE | PF_DONE;
        if (s->held_peer == rank)
            udp_unhold(s);
        while (p->head != UDP_NIL) {
            uint32_t i = p->head;
            p->head = s->slot_next[i];
            udp_slot_put_back(s, i);
        }
        p->tail = p->txnext = UDP_NIL;
        p->timer_ns = 0;
        break;
    default: break;
    }
}

/* The segment size of a received entry: UDP_GRO's control message, else its length. */
static uint32_t udp_rx_segsize(const struct msghdr *mh, size_t len)
{
    for (struct cmsghdr *c = CMSG_FIRSTHDR((struct msghdr *)mh); c;
         c = CMSG_NXTHDR((struct msghdr *)mh, c))
        if (c->cmsg_level == SOL_UDP && c->cmsg_type == UDP_GRO &&
            c->cmsg_len >= CMSG_LEN(sizeof(int))) {
            int g;
            memcpy(&g, CMSG_DATA(c), sizeof g);
            if (g > 0 && (size_t)g < len)
                return (uint32_t)g;
        }
    return (uint32_t)len;
}

/* Handles the datagrams left at level lvl: entry by entry, in an entry coalesced by GRO
 * segment (datagram) by segment, and in a bundle packet by packet (udp_part). The
 * position advances before a packet is handled, so a progress call nested in a handler
 * continues with the next one (stream order). */
static int udp_rx_drain(udp_t *s, int lvl)
{
    int n = 0;
    while (s->rx_i[lvl] < s->rx_n[lvl]) {
        int i = s->rx_i[lvl];
        size_t len = s->rxmsg[lvl][i].msg_len, off = s->rx_off[lvl];
        size_t seg = s->rxseg[lvl][i];
        if (!len || !seg) { /* a truncated or empty entry (counted by udp_rx_took) */
            s->rx_i[lvl]++;
            s->rx_off[lvl] = 0;
            continue;
        }
        size_t dg = off - off % seg, dg_end = BASE_MIN(dg + seg, len), next;
        const char *pkt = s->rxbuf[lvl] + (size_t)i * s->rx_slot + off;
        size_t k = udp_part(pkt, dg_end - off, &next);
        if (off + next >= len) {
            s->rx_i[lvl]++;
            s->rx_off[lvl] = 0;
        } else {
            s->rx_off[lvl] = off + next;
        }
        udp_rx_packet(s, pkt, NULL, k, &s->rxaddr[lvl][i], off == dg);
        n++;
    }
    s->rx_n[lvl] = s->rx_i[lvl] = 0;
    s->rx_off[lvl] = 0;
    return n;
}

/* Prepares entry i of level lvl for a receive call. */
static inline void udp_rx_arm(udp_t *s, int lvl, int i)
{
    struct msghdr *mh = &s->rxmsg[lvl][i].msg_hdr;
    mh->msg_namelen = sizeof s->rxaddr[lvl][i];
    mh->msg_flags = 0;
    if (s->gro) {
        mh->msg_control = s->rxctl[lvl][i].buf;
        mh->msg_controllen = sizeof s->rxctl[lvl][i].buf;
    }
}

/* Checks a received entry: truncated (or empty) ones are counted and emptied; records its
 * segment size. */
static void udp_rx_took(udp_t *s, int lvl, int i)
{
    struct mmsghdr *m = &s->rxmsg[lvl][i];
    if ((m->msg_hdr.msg_flags & MSG_TRUNC) || !m->msg_len) {
        s->st.rx_packets++;
        s->st.truncated++;
        m->msg_len = 0;
    }
    s->rxseg[lvl][i] = s->gro ? udp_rx_segsize(&m->msg_hdr, m->msg_len) : m->msg_len;
}

/* RECEIVE IN PLACE: 1 when the datagram of n bytes whose headers are at hb is the
 * expected message (a quick look: udp_rx_packet then validates it in full). */
static int udp_place_match(const udp_t *s, const char *hb, size_t n)
{
    udp_hdr_t h;
    udp_op_t o;
    memcpy(&h, hb, sizeof h);
    memcpy(&o, hb + sizeof h, sizeof o);
    return h.type == UDP_T_DATA && h.src == udp_wire_rank(s, s->place_peer) &&
           h.seq == s->place_seq && h.len == n - sizeof h && !(h.flags & UDP_HF_MORE) &&
           o.kind == s->place_kind && o.len == n - UDP_HDRS && o.off == s->place_off &&
           (s->place_kind == UDP_OP_PUT ? o.key == s->place_key && !o.flags
                                        : o.aux == s->place_key && !o.a && o.b == o.len);
}

/* RECEIVE IN PLACE (see the top of this file): receives one datagram with its first
 * UDP_HDRS bytes into the batch's first entry and the rest straight where the expected
 * message writes its payload. The expected message is then handled from there (no copy);
 * any other datagram is copied back behind its headers and handled as usual, the bytes it
 * left at the destination being overwritten later by the expected ones. -1: no
 * expectation holds (receive as usual), else the datagrams handled (0: none waiting). */
static int udp_rx_place(udp_t *s)
{
    char *dst = udp_place_dst(s);
    if (!dst) {
        s->place_peer = -1;
        return -1;
    }
    char *hb = s->rxbuf[0];
    struct sockaddr_in *from = &s->rxaddr[0][0];
    struct iovec iov[2] = {{hb, UDP_HDRS}, {dst, s->data_max}};
    struct msghdr mh = {
        .msg_name = from, .msg_namelen = sizeof *from, .msg_iov = iov, .msg_iovlen = 2};
    ssize_t r = udp_sys_recvmsg(s->fd, &mh, MSG_DONTWAIT);
    if (r < 0)
        return 0;
    size_t n = (size_t)r;
    if (!(mh.msg_flags & MSG_TRUNC) && n > UDP_HDRS && udp_place_match(s, hb, n)) {
        s->st.placed++;
        udp_rx_packet(s, hb, dst, n, from, 1);
        return 1;
    }
    if (n > UDP_HDRS) { /* (acknowledgements fit in hb: no copy, no miss) */
        memcpy(hb + UDP_HDRS, dst, n - UDP_HDRS);
        s->st.place_missed++;
        /* streams of several peers interleaved would miss at every datagram: after a
         * miss, the next UDP_PLACE_COOL expectations are not taken */
        s->place_peer = -1;
        s->place_cool = UDP_PLACE_COOL;
    }
    s->rxmsg[0][0].msg_len = (unsigned)n;
    s->rxmsg[0][0].msg_hdr.msg_flags = mh.msg_flags;
    udp_rx_took(s, 0, 0);
    s->rx_n[0] = 1;
    s->rx_i[0] = 0;
    return udp_rx_drain(s, 0);
}

/* Receives and handles datagrams: first what an outer call left in its batch, then new
 * datagrams (level = handler depth). Outside a burst, one entry with recvmsg (a
 * recvmmsg that finds one datagram costs ~0.35 us more on this class of machine, and a
 * poll that finds none ~0.08 us more): the waiting caller sees its message sooner. Eight
 * progress calls in a row that found a datagram start a burst: batches of rx_batch with
 * recvmmsg until the socket is empty or max_batches * UDP_BATCH entries were read (the
 * same count whatever rx_batch: a slow receiver's queue must still fill up to its STOP,
 * not leave the datagrams to the kernel's drops); a batch of at most one ends it. With
 * UDP_GRO an entry may hold several datagrams of one sender (up to 64 KiB). */
static int udp_rx(udp_t *s, int max_batches)
{
    int n = 0;
    max_batches = max_batches * UDP_BATCH / s->rx_batch;
    for (int lvl = 0; lvl < UDP_LEVELS; lvl++)
        if (s->rx_i[lvl] < s->rx_n[lvl])
            n += udp_rx_drain(s, lvl);
    int lvl = s->depth < UDP_LEVELS ? s->depth : UDP_LEVELS - 1;
    if (s->rx_i[lvl] < s->rx_n[lvl])
        return n; /* deeper nesting than batches: leave the socket for later */
    if (s->place_peer >= 0 && !lvl) {
        /* RECEIVE IN PLACE: while messages keep matching, as many as a burst takes */
        for (int k = 0; k < max_batches * s->rx_batch && s->place_peer >= 0; k++) {
            int r = udp_rx_place(s);
            if (r < 0)
                break;
            if (!r)
                return n;
            n += r;
        }
        if (s->place_peer >= 0)
            return n;
    }
    if (!s->rx_burst) {
        ssize_t r;
        if (BASE_LIKELY(!s->gro)) { /* no segment size to read: recvfrom */
            r = udp_sys_recvfrom(s->fd, s->rxiov[lvl][0].iov_base, s->rx_slot, MSG_DONTWAIT,
                                 &s->rxaddr[lvl][0]);
            s->rxmsg[lvl][0].msg_hdr.msg_flags = r > (ssize_t)s->rx_slot ? MSG_TRUNC : 0;
            if (r > (ssize_t)s->rx_slot)
                r = (ssize_t)s->rx_slot;
        } else {
            udp_rx_arm(s, lvl, 0);
            r = udp_sys_recvmsg(s->fd, &s->rxmsg[lvl][0].msg_hdr, MSG_DONTWAIT);
        }
        if (r < 0) {
            s->rx_streak = 0;
            return n;
        }
        if (++s->rx_streak >= UDP_BURST_STREAK)
            s->rx_burst = 1;
        s->rxmsg[lvl][0].msg_len = (unsigned)r;
        udp_rx_took(s, lvl, 0);
        s->rx_n[lvl] = 1;
        s->rx_i[lvl] = 0;
        return n + udp_rx_drain(s, lvl);
    }
    for (int b = 0; b < max_batches; b++) {
        for (int i = 0; i < s->rx_batch; i++)
            udp_rx_arm(s, lvl, i);
        int r = udp_sys_recvmmsg(s->fd, s->rxmsg[lvl], (unsigned)s->rx_batch, MSG_DONTWAIT);
        if (b == 0 && r <= 1)
            s->rx_burst = s->rx_streak = 0;
        if (r <= 0)
            break;
        for (int i = 0; i < r; i++)
            udp_rx_took(s, lvl, i);
        s->rx_n[lvl] = r;
        s->rx_i[lvl] = 0;
        n += udp_rx_drain(s, lvl);
        if (r < s->rx_batch)
            break;
    }
    return n;
}

/* ------------------------------------------------------------ timers */

static int udp_timers(udp_t *s, uint64_t now)
{
    int n = 0;
    for (int k = 0; k < s->nactive;) {
        int rank = s->active[k];
        udp_peer_t *p = s->peer[rank];
        if ((p->flags & PF_ACK_DUE) && ((p->flags & PF_ACK_NOW) || (p->ack_ns && now >= p->ack_ns)))
            udp_ctrl(s, rank, p, UDP_T_ACK, p->recv);
        if (p->head != UDP_NIL && !(p->flags & (PF_DEAD | PF_GONE))) {
            uint64_t silent = now > p->heard_ns ? now - p->heard_ns : 0;
            if (silent > s->peer_timeout_ns) {
                udp_peer_dead(s, rank, p, "stopped answering (FMPL_UDP_PEER_TIMEOUT_MS)");
            } else if (p->timer_ns && now >= p->timer_ns) {
                s->st.timeouts++;
                if (p->backoff < UDP_BACKOFF_MAX)
                    p->backoff++;
                p->timer_ns = now + (s->rto_cur << p->backoff);
                if (p->flags & PF_STOPPED) {
                    /* probe: the oldest message alone; STOP again or accepted */
                    uint32_t i = p->head;
                    udp_hdr_t *h = udp_slot_hdr(s, i);
                    h->ack = p->recv;
                    h->flags = 0;
                    udp_seal_slot(s, p, i);
                    udp_tx_slot(s, p, i);
                    s->st.retransmits++;
                } else {
                    p->cwnd = (uint16_t)BASE_MAX(p->cwnd / 2, s->cwnd_min);
                    p->txnext = p->head;
                    uint64_t keep = p->timer_ns;
                    udp_kick(s, rank, p);
                    p->timer_ns = keep;
                }
                n++;
            }
        }
        if (p->head == UDP_NIL && !(p->flags & (PF_ACK_DUE | PF_STOP_SENT))) {
            p->flags &= (uint16_t)~PF_ACTIVE;
            p->timer_ns = 0;
            s->active[k] = s->active[--s->nactive];
            continue;
        }
        k++;
    }
    return n;
}

/* Sends the acknowledgements due now (PF_ACK_NOW), or all pending ones when all. */
static void udp_flush_acks(udp_t *s, int all)
{
    for (int k = 0; k < s->nactive; k++) {
        int rank = s->active[k];
        udp_peer_t *p = s->peer[rank];
        if ((p->flags & PF_ACK_DUE) && (all || (p->flags & PF_ACK_NOW)))
            udp_ctrl(s, rank, p, UDP_T_ACK, p->recv);
    }
}

static int udp_progress(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    s->executed = 0;
    s->now_ns = 0;
    int defer_post = s->defer_post; /* a post waiting for a slot: answers are not held */
    s->defer_post = 0;
    /* held messages (VNIC_F_DEFER) leave, unless a vnic_wait_keep spins and they are young */
    if (BASE_UNLIKELY(s->held_peer >= 0) &&
        (!s->v->defer_keep || udp_now(s) - s->held_ns >= s->defer_ns))
        udp_flush_deferred(s);
    int n = udp_rx(s, 4);
    if (s->rq_count)
        n += udp_rq_run(s);
    if (s->jobs)
        n += udp_jobs_run(s);
    if (s->nactive) {
        uint64_t now = udp_now(s);
        if (now >= s->next_scan_ns) {
            n += udp_timers(s, now);
            s->next_scan_ns = now + BASE_MIN(s->ack_delay_ns, s->rto_cur / 4);
        } else {
            udp_flush_acks(s, 0);
        }
    }
    if (s->nhold)
        udp_hold_flush(s, base_time_ns(), 0);
    s->defer_post = defer_post;
    s->now_ns = 0;
    return n;
}

/* ------------------------------------------------------------ initiator side */

/* Pre-validation for peers on this host (their region table is in the host segment):
 * FMPL_ERR_KEY like shm. Peers elsewhere: validated at the target only. */
static int udp_prevalidate(udp_t *s, const vnic_op_t *op, size_t total)
{
    vnic_region_t r;
    int k = vnic_shm_peer_region(s->v->local, op->peer, op->remote.key, &r);
    if (k < 0)
        return FMPL_SUCCESS;
    if (!k)
        return FMPL_ERR_KEY;
    unsigned need = op->opcode == VNIC_OP_PUT   ? VNIC_ACC_REMOTE_WRITE
                    : op->opcode == VNIC_OP_GET ? VNIC_ACC_REMOTE_READ
                                                : VNIC_ACC_REMOTE_ATOMIC;
    if (!(r.access & need))
        return FMPL_ERR_KEY;
    if (op->opcode != VNIC_OP_PUT && op->opcode != VNIC_OP_GET)
        return vnic_region_bounds_ok(r.len, op->remote.u.off, 8)
                   ? ((r.base + op->remote.u.off) % 8 ? FMPL_ERR_ARG : FMPL_SUCCESS)
                   : FMPL_ERR_KEY;
    if (op->remote.kind == VNIC_DESC_CONTIG) {
        if (!vnic_region_bounds_ok(r.len, op->remote.u.off, total))
            return FMPL_ERR_KEY;
        if ((op->flags & VNIC_F_TAIL_FLAG) && (r.base + op->remote.u.off + total) % 8)
            return FMPL_ERR_ARG;
        return FMPL_SUCCESS;
    }
    for (int i = 0; i < op->remote.u.iov.cnt; i++)
        if (!vnic_region_bounds_ok(r.len, op->remote.u.iov.seg[i].off, op->remote.u.iov.seg[i].len))
            return FMPL_ERR_KEY;
    return FMPL_SUCCESS;
}

/* The end of a post to `rank` (its messages appended): transmits them, or, for a post
 * that may be held (s->defer_post), holds them at the tail of the peer's stream until
 * the next post to it or another entry flushes them. */
static void udp_kick_or_hold(udp_t *s, int rank, udp_peer_t *p)
{
    if (!s->defer_post) {
        udp_kick(s, rank, p);
        return;
    }
    if (s->held_peer != rank) { /* the first held message (udp_post flushed any other) */
        s->held_peer = rank;
        s->held_seq = udp_slot_hdr(s, p->tail)->seq;
        s->held_ns = udp_now(s);
    }
    s->v->defer_held++;
    s->st.deferred++;
    udp_kick(s, rank, p); /* what precedes the held messages, if the window allows */
}

/* ZERO-COPY: p's messages whose payload is still in the caller's buffer get a copy of
 * it in their slot (an MTU-sized one, or a small one that holds it), so the caller may
 * reuse the buffer while they wait for their acknowledgement. */
static void udp_zcopy_detach(udp_t *s, udp_peer_t *p)
{
    for (uint32_t i = p->head; i != UDP_NIL; i = s->slot_next[i])
        if (BASE_UNLIKELY(s->slot_ext[i] != NULL) && s->slot_zkey[i] == VNIC_KEY_INVALID) {
            memcpy(udp_slot(s, i) + UDP_HDRS, s->slot_ext[i], s->slot_len[i] - UDP_HDRS);
            s->slot_ext[i] = NULL;
            s->st.zcopy_detached++;
        }
}

typedef struct udp_ackwait {
    udp_peer_t *p;
    uint32_t seq;
} udp_ackwait_t;

static int udp_ackwait_ready(void *arg)
{
    const udp_ackwait_t *w = arg;
    return seq_le(w->seq, w->p->acked) || (w->p->flags & (PF_DEAD | PF_GONE));
}

/* The end of a zero-copy put whose last message has sequence number seq: waits until p
 * acknowledged it, as long as its acknowledgements advance (each step within
 * UDP_ZCOPY_IDLE_NS, all within two retransmission timeouts), then detaches what is still
 * unacknowledged (a receiver that computes, a loss being repaired, an error of the
 * wait), so that nothing refers to the caller's buffer once the put returns. */
static void udp_zcopy_finish(udp_t *s, udp_peer_t *p, uint32_t seq)
{
    udp_ackwait_t w = {p, seq};
    uint64_t end = base_time_ns() + 2 * s->rto_cur;
    while (!udp_ackwait_ready(&w)) {
        uint32_t seen = p->acked;
        int rc = vnic_wait(s->v, udp_ackwait_ready, &w, UDP_ZCOPY_IDLE_NS);
        if (rc != FMPL_ERR_TIMEOUT || p->acked == seen || base_time_ns() >= end)
            break;
    }
    udp_zcopy_detach(s, p);
}

static int udp_put(udp_t *s, udp_peer_t *p, const vnic_op_t *op, size_t total)
{
    /* ZERO-COPY (see the top of this file): a large contiguous put at depth 0, datagrams
     * of the loopback MTU (no GSO) */
    const char *zsrc = NULL;
    uint32_t zlast = 0;
    if (BASE_UNLIKELY(s->zcopy_min && total >= s->zcopy_min) &&
        op->local.kind == VNIC_DESC_CONTIG && !s->defer_post && !s->depth && !s->gso)
        zsrc = op->local.u.contig.addr;
    size_t zpos = 0;
    vnic_lcur_t lc;
    vnic_lcur_init(&lc, &op->local);
    vnic_rseg_t one;
    const vnic_rseg_t *seg = &one;
    int nseg = 1;
    if (op->remote.kind == VNIC_DESC_CONTIG) {
        one.off = op->remote.u.off;
        one.len = total;
    } else {
        seg = op->remote.u.iov.seg;
        nseg = op->remote.u.iov.cnt;
    }
    uint32_t eff = op->flags & (VNIC_F_NOTIFY | VNIC_F_RCNTR | VNIC_F_TAIL_FLAG);
    uint64_t off0 = nseg ? seg[0].off : 0;
    int last_seg = nseg - 1;
    while (last_seg >= 0 && !seg[last_seg].len)
        last_seg--;
    if (last_seg < 0) { /* nothing to write: only effects, as one empty fragment */
        if (!eff) {
            vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
            return FMPL_SUCCESS;
        }
        last_seg = 0;
    }
    int pending = 0; /* fragments appended, not yet transmitted (batches for GSO) */
    for (int g = 0; g <= last_seg; g++) {
        uint64_t pos = 0;
        size_t glen = nseg ? seg[g].len : 0;
        do {
            size_t rem = glen - pos, k = BASE_MIN(s->data_max, rem);
            if ((eff & VNIC_F_TAIL_FLAG) && rem > k && rem - k < 8)
                k -= 8; /* the last fragment keeps >= 8 bytes for the tail flag */
            if (!k && g != last_seg)
                break;
            uint32_t i;
            if (pending && udp_room_class(s, UDP_HDRS + k, UDP_RESERVE) < 0) {
                udp_kick(s, op->peer, p); /* before waiting for slots */
                pending = 0;
            }
            int rc = udp_slot_take(s, p, UDP_RESERVE, UDP_HDRS + k, &i);
            if (rc) {
                if (pending)
                    udp_kick(s, op->peer, p); /* what is in the stream leaves as before */
                if (zsrc)
                    udp_zcopy_detach(s, p);
                vnic_cntr_complete(op->lcntr, rc);
                return rc;
            }
            udp_op_t *o = udp_slot_op(s, i);
            memset(o, 0, sizeof *o);
            o->kind = UDP_OP_PUT;
            o->key = op->remote.key;
            o->off = (nseg ? seg[g].off : off0) + pos;
            o->len = (uint32_t)k;
            if (op->remote.kind == VNIC_DESC_CONTIG) { /* RECEIVE IN PLACE: the run's extent */
                o->amo = UDP_PUT_RUN;
                o->a = off0;
                o->b = total;
            }
            if (zsrc && k) {
                s->slot_ext[i] = zsrc + zpos;
                zpos += k;
                s->st.zcopy_sent++;
            } else {
                vnic_lcur_gather(&lc, o + 1, k);
            }
            pos += k;
            if (g == last_seg && pos == glen) {
                s->slot_ackreq[i] = zsrc != NULL; /* the receiver acknowledges it at once */
                o->flags = (uint8_t)eff;
                o->chan = op->chan;
                o->aux = op->rcntr;
                o->imm = op->imm;
                o->a = off0;
                o->b = total;
            }
            udp_append(s, p, i, op->peer, UDP_HDRS + k);
            zlast = udp_slot_hdr(s, i)->seq;
            if (++pending >= s->tx_batch && !s->defer_post) {
                udp_kick(s, op->peer, p);
                pending = 0;
            }
        } while (pos < glen);
    }
    if (pending)
        udp_kick_or_hold(s, op->peer, p);
    if (zsrc)
        udp_zcopy_finish(s, p, zlast);
    vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
    return FMPL_SUCCESS;
}

static int udp_wait_req(udp_t *s, int *done, int *status)
{
    udp_flag_t f = {done};
    int rc = vnic_wait(s->v, udp_flag_ready, &f, -1);
    if (__atomic_load_n(done, __ATOMIC_ACQUIRE))
        return *status;
    return rc ? rc : FMPL_ERR_INTERNAL;
}

static int udp_get(udp_t *s, udp_peer_t *p, const vnic_op_t *op, size_t total)
{
    if (total == 0) {
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    uint32_t ri;
    int rc = udp_req_take(s, &ri);
    if (rc)
        return rc;
    udp_req_t *r = &s->req[ri];
    int done = 0, status = FMPL_SUCCESS;
    r->kind = UDP_OP_GETREQ;
    r->peer = op->peer;
    r->lcntr = op->lcntr;
    r->result = NULL;
    r->total = total;
    if (op->local.kind == VNIC_DESC_CONTIG) {
        r->one.iov_base = op->local.u.contig.addr;
        r->one.iov_len = op->local.u.contig.len;
        r->iov = &r->one;
        r->iovcnt = 1;
    } else {
        r->iovcnt = op->local.u.iov.cnt;
        r->iov = malloc((size_t)r->iovcnt * sizeof(struct iovec));
        if (!r->iov) {
            r->iov = &r->one;
            r->lcntr = NULL;
            udp_req_finish(s, ri, FMPL_ERR_NOMEM);
            return FMPL_ERR_NOMEM;
        }
        memcpy(r->iov, op->local.u.iov.iov, (size_t)r->iovcnt * sizeof(struct iovec));
    }
    if (!op->lcntr) {
        r->done = &done;
        r->statusp = &status;
    }
    uint32_t id = udp_reqid(s, ri);
    vnic_rseg_t one = {op->remote.u.off, total};
    const vnic_rseg_t *seg = &one;
    int nseg = 1;
    if (op->remote.kind == VNIC_DESC_IOV) {
        seg = op->remote.u.iov.seg;
        nseg = op->remote.u.iov.cnt;
    }
    size_t per = s->data_max / 16;
    uint64_t pos = 0;
    for (int g = 0; g < nseg;) {
        int cnt = (int)BASE_MIN(per, (size_t)(nseg - g));
        uint32_t i;
        rc = udp_slot_take(s, p, UDP_RESERVE, UDP_HDRS + 16 * (size_t)cnt, &i);
        if (rc)
            break; /* the peer died: the request was failed with it */
        udp_op_t *o = udp_slot_op(s, i);
        memset(o, 0, sizeof *o);
        o->kind = UDP_OP_GETREQ;
        o->key = op->remote.key;
        o->aux = id;
        o->b = pos;
        o->len = (uint32_t)(16 * cnt);
        char *d = (char *)(o + 1);
        for (int k = 0; k < cnt; k++) {
            uint64_t w[2] = {seg[g + k].off, seg[g + k].len};
            memcpy(d + 16 * k, w, 16);
            pos += seg[g + k].len;
        }
        udp_enqueue(s, op->peer, p, i, UDP_HDRS + o->len);
        g += cnt;
    }
    if (op->lcntr)
        return FMPL_SUCCESS;
    return udp_wait_req(s, &done, &status);
}

static int udp_atomic(udp_t *s, udp_peer_t *p, const vnic_op_t *op)
{
    uint32_t ri;
    int rc = udp_req_take(s, &ri);
    if (rc)
        return rc;
    udp_req_t *r = &s->req[ri];
    int done = 0, status = FMPL_SUCCESS;
    r->kind = UDP_OP_AMO;
    r->peer = op->peer;
    r->lcntr = op->lcntr;
    r->result = op->result;
    r->total = 8;
    r->iov = &r->one;
    if (!op->lcntr) {
        r->done = &done;
        r->statusp = &status;
    }
    uint32_t i;
    rc = udp_slot_take(s, p, UDP_RESERVE, UDP_HDRS, &i);
    if (!rc) {
        udp_op_t *o = udp_slot_op(s, i);
        memset(o, 0, sizeof *o);
        o->kind = UDP_OP_AMO;
        o->amo = (uint8_t)op->opcode;
        o->key = op->remote.key;
        o->off = op->remote.u.off;
        o->aux = udp_reqid(s, ri);
        o->imm = op->operand;
        o->a = op->compare;
        udp_enqueue(s, op->peer, p, i, UDP_HDRS);
    }
    if (op->lcntr)
        return FMPL_SUCCESS;
    return udp_wait_req(s, &done, &status);
}

static int udp_post_op(udp_t *s, const vnic_op_t *op, size_t total)
{
    udp_peer_t *p = udp_peer_of(s, op->peer);
    if (BASE_UNLIKELY(p->flags & (PF_DEAD | PF_GONE)))
        return FMPL_ERR_PEER;
    if (BASE_UNLIKELY(!p->ip)) {
        int rc = udp_peer_addr(s, op->peer, p);
        if (rc)
            return rc;
    }
    if (op->opcode == VNIC_OP_SEND) {
        if (total > s->data_max)
            return FMPL_ERR_TRUNCATE;
        uint32_t i;
        int rc = udp_slot_take(s, p, UDP_RESERVE, UDP_HDRS + total, &i);
        if (rc)
            return rc;
        udp_op_t *o = udp_slot_op(s, i);
        memset(o, 0, sizeof *o);
        o->kind = UDP_OP_AM;
        o->chan = op->chan;
        o->imm = op->imm;
        o->len = (uint32_t)total;
        vnic_lcur_t lc;
        vnic_lcur_init(&lc, &op->local);
        vnic_lcur_gather(&lc, o + 1, total);
        udp_append(s, p, i, op->peer, UDP_HDRS + total);
        udp_kick_or_hold(s, op->peer, p);
        vnic_cntr_complete(op->lcntr, FMPL_SUCCESS);
        return FMPL_SUCCESS;
    }
    int rc = udp_prevalidate(s, op, total);
    if (rc)
        return rc;
    switch (op->opcode) {
    case VNIC_OP_PUT: return udp_put(s, p, op, total);
    case VNIC_OP_GET: return udp_get(s, p, op, total);
    default: return udp_atomic(s, p, op);
    }
}

static int udp_post(vnic_transport_t *tr, const vnic_op_t *op, size_t total)
{
    udp_t *s = (udp_t *)tr;
    s->now_ns = 0;
    /* VNIC_F_DEFER: a small put or active message may wait for the next post to its peer
     * (fmpl_irecv's receive header: the next payload to that peer takes it along) */
    int defer = (op->flags & VNIC_F_DEFER) && total + UDP_HDRS < s->bundle_cap && s->defer_ns;
    /* a post to another peer: the held messages leave first (to the same peer: they leave
     * with this post's messages, see udp_append, unless this one is held too) */
    if (BASE_UNLIKELY(s->held_peer >= 0) && s->held_peer != op->peer)
        udp_flush_deferred(s);
    int outer = s->defer_post; /* a post from a handler inside a post's wait for a slot */
    s->defer_post = defer;
    int rc = udp_post_op(s, op, total);
    s->defer_post = outer;
    s->now_ns = 0;
    return rc;
}

/* Transport entry (vnic_flush): sends the messages held by VNIC_F_DEFER. */
static void udp_flush(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    s->now_ns = 0;
    udp_flush_deferred(s);
    s->now_ns = 0;
}

/* ------------------------------------------------------------ sleeping */

static void udp_sleep_prepare(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    /* nothing stays held while this process sleeps (VNIC_F_DEFER) */
    s->now_ns = 0;
    udp_flush_deferred(s);
    s->now_ns = 0;
    /* the peers must not wait for acknowledgements we are sitting on */
    udp_flush_acks(s, 1);
    if (s->nhold)
        udp_hold_flush(s, 0, 1);
}

static void udp_sleep_cancel(vnic_transport_t *tr)
{
    (void)tr;
}

/* ns, or less when a retransmission deadline comes sooner. */
static int64_t udp_sleep_ns(udp_t *s, int64_t ns)
{
    uint64_t now = base_time_ns();
    for (int k = 0; k < s->nactive; k++) {
        udp_peer_t *p = s->peer[s->active[k]];
        if (p->timer_ns) {
            int64_t d = p->timer_ns > now ? (int64_t)(p->timer_ns - now) : 0;
            if (d < ns)
                ns = d;
        }
    }
    return ns;
}

/* Blocks in ppoll on the socket for ns (> 0) at most, or until a datagram arrives. */
static void udp_poll_socket(udp_t *s, int64_t ns)
{
    struct pollfd pf = {.fd = s->fd, .events = POLLIN};
    struct timespec ts = {.tv_sec = ns / 1000000000, .tv_nsec = ns % 1000000000};
    ppoll(&pf, 1, &ts, NULL);
}

/* Blocks on the socket for at most ns, or until the next retransmission deadline. */
static void udp_sleep(vnic_transport_t *tr, int64_t ns)
{
    udp_t *s = (udp_t *)tr;
    ns = udp_sleep_ns(s, ns);
    if (s->jobs || s->rq_count || ns <= 0)
        return;
    udp_poll_socket(s, ns);
}

/* ------------------------------------------------------------ progress thread */

/* Entry and exit of every operation the generic layer calls (the ops table): with the
 * thread on, the application holds the lock while inside the transport (nested entries,
 * from a handler that posts, only count) and marks each entry for the thread. */
/* The lock between the application and the thread: an exchange to take it, a plain
 * release store to give it back. A pthread mutex costs two atomic operations per entry
 * (its unlock alone was ~4% of an 8-byte ping-pong's samples, the application polling
 * through udp_op_progress); the thread holds the lock only for one progress call, so
 * the application spins (yielding after a while) rather than sleeping on it. */
static inline int udp_lock_try(udp_t *s)
{
    return !__atomic_exchange_n(&s->lock, 1, __ATOMIC_ACQUIRE);
}

static inline void udp_lock_take(udp_t *s)
{
    for (unsigned spins = 0; !udp_lock_try(s);)
        while (__atomic_load_n(&s->lock, __ATOMIC_RELAXED)) {
            if (++spins < 256)
                base_cpu_relax();
            else
                sched_yield(); /* the holder may have lost its CPU */
        }
}

static inline void udp_lock_give(udp_t *s)
{
    __atomic_store_n(&s->lock, 0, __ATOMIC_RELEASE);
}

static inline void udp_enter(udp_t *s)
{
    if (!s->thr_on)
        return;
    /* counted before the lock is taken: the thread, which serves while the count stays
     * the same, then stops taking the lock back after each of its progress calls */
    __atomic_store_n(&s->app_entries, s->app_entries + 1, __ATOMIC_RELAXED);
    if (s->app_depth++ == 0)
        udp_lock_take(s);
}

static inline void udp_leave(udp_t *s)
{
    if (s->thr_on && --s->app_depth == 0)
        udp_lock_give(s);
}

/* The thread: sleeps FMPL_UDP_THREAD_US at a time and, when the application has not
 * entered the transport for a whole period (it computes, or waits elsewhere), serves in
 * its place: progress calls in which requests needing a handler wait (udp_can_exec),
 * acknowledgements sent before each sleep, sleeping on the socket in between, until the
 * application comes back (an entry, or the lock taken). */
static void *udp_thread_main(void *arg)
{
    udp_t *s = arg;
    uint64_t seen = __atomic_load_n(&s->app_entries, __ATOMIC_RELAXED);
    struct timespec idle = {.tv_sec = (time_t)(s->thr_idle_ns / 1000000000),
                            .tv_nsec = (long)(s->thr_idle_ns % 1000000000)};
    while (!__atomic_load_n(&s->thr_stop, __ATOMIC_ACQUIRE)) {
        nanosleep(&idle, NULL);
        uint64_t e = __atomic_load_n(&s->app_entries, __ATOMIC_RELAXED);
        if (e != seen) {
            seen = e;
            continue;
        }
        while (!__atomic_load_n(&s->thr_stop, __ATOMIC_ACQUIRE) &&
               __atomic_load_n(&s->app_entries, __ATOMIC_RELAXED) == seen && udp_lock_try(s)) {
            s->thr_serving = 1;
            int n = udp_progress(&s->base);
            s->st.thread_calls++;
            s->st.thread_events += (uint64_t)n;
            int64_t ns = 0;
            if (n == 0) {
                udp_sleep_prepare(&s->base);
                ns = udp_sleep_ns(s, (int64_t)s->thr_idle_ns);
            }
            s->thr_serving = 0;
            udp_lock_give(s);
            if (ns > 0)
                udp_poll_socket(s, ns);
        }
    }
    return NULL;
}

/* Starts the thread with every signal blocked (they stay the application's). */
static int udp_thread_start(udp_t *s)
{
    s->lock = 0;
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    int rc = pthread_create(&s->thr, NULL, udp_thread_main, s);
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (rc) {
        base_log("vnic/udp: cannot start the progress thread (%s); set FMPL_UDP_THREAD=0 to "
                 "run without it",
                 strerror(rc));
        return FMPL_ERR_NOMEM;
    }
    s->thr_on = 1;
    return FMPL_SUCCESS;
}

static void udp_thread_stop(udp_t *s)
{
    if (!s->thr_on)
        return;
    __atomic_store_n(&s->thr_stop, 1, __ATOMIC_RELEASE);
    pthread_join(s->thr, NULL);
    s->thr_on = 0;
}

static int udp_op_post(vnic_transport_t *tr, const vnic_op_t *op, size_t total)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    int rc = udp_post(tr, op, total);
    udp_leave(s);
    return rc;
}

/* vnic_send_am_try: the SEND of vnic_send_am, posted only when a send slot is free now
 * (udp_slot_take would otherwise wait for the peer's acknowledgements). */
static int udp_op_send_am_try(vnic_transport_t *tr, int peer, unsigned chan, uint64_t imm,
                              const void *a, size_t alen, const void *b, size_t blen)
{
    udp_t *s = (udp_t *)tr;
    struct iovec iov[2] = {{(void *)(uintptr_t)a, alen}, {(void *)(uintptr_t)b, blen}};
    vnic_op_t op = {.opcode = VNIC_OP_SEND, .peer = peer, .chan = (uint8_t)chan, .imm = imm};
    op.local.kind = VNIC_DESC_IOV;
    op.local.u.iov.iov = iov;
    op.local.u.iov.cnt = blen ? 2 : 1;
    udp_enter(s);
    int rc = udp_room_class(s, UDP_HDRS + alen + blen, UDP_RESERVE) < 0
                 ? VNIC_AGAIN
                 : udp_post(tr, &op, alen + blen);
    udp_leave(s);
    return rc;
}

static void udp_op_flush(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    udp_flush(tr);
    udp_leave(s);
}

static int udp_op_progress(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    int n = udp_progress(tr);
    udp_leave(s);
    return n;
}

static void udp_op_sleep_prepare(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    udp_sleep_prepare(tr);
    udp_leave(s);
}

/* The application holds the lock while it sleeps on the socket: it serves what arrives. */
static void udp_op_sleep(vnic_transport_t *tr, int64_t ns)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    udp_sleep(tr, ns);
    udp_leave(s);
}

/* ------------------------------------------------------------ fence and close */

static inline int udp_serves(udp_t *s, int r)
{
    return r != s->rank && (s->v->force_udp || s->v->nodes->node_of[r] != s->v->nodes->my_node);
}

static int udp_reqs_idle(void *arg)
{
    udp_t *s = arg;
    return s->req_busy == 0;
}

/* Sends the DONE message (a = epoch, UINT64_MAX for close) to every peer served. */
static int udp_send_done(udp_t *s, uint64_t a)
{
    int rc = FMPL_SUCCESS;
    s->now_ns = 0;
    udp_flush_deferred(s); /* everything posted before the fence or close leaves before DONE */
    for (int r = 0; r < s->size; r++) {
        if (!udp_serves(s, r))
            continue;
        udp_peer_t *p = udp_peer_of(s, r);
        if (p->flags & (PF_DEAD | PF_GONE))
            continue;
        int rc2 = udp_peer_addr(s, r, p);
        uint32_t i;
        if (!rc2)
            rc2 = udp_slot_take(s, p, 0, UDP_HDRS, &i);
        if (rc2) {
            if (!rc)
                rc = rc2;
            continue;
        }
        udp_op_t *o = udp_slot_op(s, i);
        memset(o, 0, sizeof *o);
        o->kind = UDP_OP_DONE;
        o->a = a;
        udp_enqueue(s, r, p, i, UDP_HDRS);
    }
    s->now_ns = 0;
    return rc;
}

/* Our messages to p need no more waiting: all acknowledged, or p is gone, or p sent its
 * DONE (so it had everything of ours before it) and has been silent for the linger
 * time, i.e. it left before our last acknowledgement from it arrived. */
static int udp_delivered(udp_t *s, udp_peer_t *p, int arrived)
{
    if (p->head == UDP_NIL || (p->flags & (PF_GONE | PF_DEAD)))
        return 1;
    return arrived && base_time_ns() - p->heard_ns > s->close_linger_ns;
}

static int udp_fence_done(void *arg)
{
    udp_t *s = arg;
    if (s->rq_count || s->jobs)
        return 0;
    for (int r = 0; r < s->size; r++) {
        if (!udp_serves(s, r))
            continue;
        udp_peer_t *p = s->peer[r];
        if (!p || (p->flags & (PF_DEAD | PF_GONE)))
            continue;
        int arrived = p->fence_rx == s->fence_epoch;
        if (!arrived || !udp_delivered(s, p, arrived))
            return 0;
    }
    return 1;
}

/* Every peer's DONE is in, and everything we sent is delivered. */
static int udp_all_done(void *arg)
{
    udp_t *s = arg;
    if (s->rq_count || s->jobs)
        return 0;
    for (int r = s->size; r < s->npeers; r++) { /* other jobs: our messages delivered */
        udp_peer_t *p = s->peer[r];
        if (p && !udp_delivered(s, p, 0))
            return 0;
    }
    for (int r = 0; r < s->size; r++) {
        if (!udp_serves(s, r))
            continue;
        udp_peer_t *p = s->peer[r];
        if (!p || (p->flags & PF_DEAD))
            continue;
        int arrived = (p->flags & PF_DONE) != 0;
        if (!arrived || !udp_delivered(s, p, arrived))
            return 0;
    }
    return 1;
}

/* Final acknowledgements (copies: one may be lost), so peers waiting for the ACK of
 * their DONE need not linger. */
static void udp_final_acks(udp_t *s, uint8_t type)
{
    for (int c = 0; c < UDP_BYE_COPIES; c++)
        for (int r = 0; r < s->npeers; r++) {
            udp_peer_t *p = s->peer[r];
            if (p && p->ip && (r >= s->size || udp_serves(s, r)) &&
                !(p->flags & (PF_DEAD | PF_GONE)))
                udp_ctrl(s, r, p, type, p->recv);
        }
    udp_hold_flush(s, 0, 1);
}

static int udp_fence(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    s->fence_epoch++;
    int rc = udp_send_done(s, s->fence_epoch);
    int rc2 = vnic_wait(s->v, udp_fence_done, s, -1);
    udp_final_acks(s, UDP_T_ACK);
    udp_leave(s);
    return rc ? rc : rc2;
}

/* Stops the progress thread first: from here on only the application serves. */
static int udp_quiesce(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_thread_stop(s);
    int rc = vnic_wait(s->v, udp_reqs_idle, s, -1);
    s->closing = 1;
    int rc2 = udp_send_done(s, UINT64_MAX);
    if (!rc)
        rc = rc2;
    rc2 = vnic_wait(s->v, udp_all_done, s, -1);
    if (!rc)
        rc = rc2;
    udp_final_acks(s, UDP_T_BYE);
    return rc;
}

static void udp_free(udp_t *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->twin_fd >= 0)
        close(s->twin_fd);
    udp_auth_fini(&s->auth);
    for (int i = 0; i < s->npeers - s->size; i++) {
        udp_auth_fini(&s->foreign[i].tx);
        udp_auth_fini(&s->foreign[i].rx);
    }
    free(s->foreign);
    free(s->cap_buf);
    free(s->pool);
    free(s->slot_next);
    free(s->slot_len);
    free(s->slot_sent);
    free(s->slot_ext);
    free(s->slot_ackreq);
    free(s->slot_zkey);
    free(s->rq);
    for (int l = 0; l < UDP_LEVELS; l++)
        free(s->rxbuf[l]);
    for (uint32_t i = 0; s->req && i < s->nreq; i++)
        if (s->req[i].busy && s->req[i].iov != &s->req[i].one)
            free(s->req[i].iov);
    free(s->req);
    while (s->jobs) {
        udp_job_t *j = s->jobs;
        s->jobs = j->next;
        free(j);
    }
    for (int i = 0; i < UDP_HOLD; i++)
        free(s->hold[i].buf);
    for (int k = 0; k < s->nslabs; k++)
        free(s->slabs[k]);
    free(s->slabs);
    free(s->peer);
    free(s->active);
    free(s);
}

static void udp_close(vnic_transport_t *tr)
{
    udp_t *s = (udp_t *)tr;
    udp_thread_stop(s);
    if (s->print_stats) {
        const vnic_udp_stats_t *t = &s->st;
        fprintf(
            stderr,
            "vnic/udp: rank %d: datagrams sent %llu (data %llu, retransmitted %llu, acks "
            "%llu) received %llu; timeouts %llu; LOSE %llu/%llu (ignored %llu); STOP %llu/%llu; "
            "dropped: dup %llu, out-of-order %llu, buffer full %llu; queued %llu; refused "
            "%llu; injected loss %llu dup %llu reorder %llu; mtu %u; gso sends %llu; twin connects "
            "%llu; zero-copy %llu (detached %llu); in place %llu (missed %llu); bundles %llu "
            "(+%llu messages, %llu received); "
            "deferred %llu (joined %llu); "
            "progress thread calls %llu events %llu; refused: foreign %llu, corrupt or forged "
            "%llu, replayed %llu, stale %llu, truncated %llu, malformed %llu, unverified %llu; "
            "auth %s\n",
            s->rank, (unsigned long long)t->tx_packets, (unsigned long long)t->data_sent,
            (unsigned long long)t->retransmits, (unsigned long long)t->acks_sent,
            (unsigned long long)t->rx_packets, (unsigned long long)t->timeouts,
            (unsigned long long)t->lose_sent, (unsigned long long)t->lose_recv,
            (unsigned long long)t->lose_ignored, (unsigned long long)t->stop_sent,
            (unsigned long long)t->stop_recv, (unsigned long long)t->dup_dropped,
            (unsigned long long)t->ooo_dropped, (unsigned long long)t->full_dropped,
            (unsigned long long)t->queued, (unsigned long long)t->refused,
            (unsigned long long)t->inj_loss, (unsigned long long)t->inj_dup,
            (unsigned long long)t->inj_reorder, t->mtu, (unsigned long long)t->gso_sends,
            (unsigned long long)t->twin_connects, (unsigned long long)t->zcopy_sent,
            (unsigned long long)t->zcopy_detached, (unsigned long long)t->placed,
            (unsigned long long)t->place_missed, (unsigned long long)t->bundles_sent,
            (unsigned long long)t->bundled_sent, (unsigned long long)t->bundled_recv,
            (unsigned long long)t->deferred, (unsigned long long)t->deferred_joined,
            (unsigned long long)t->thread_calls, (unsigned long long)t->thread_events,
            (unsigned long long)t->bad_secret, (unsigned long long)t->bad_csum,
            (unsigned long long)t->replayed, (unsigned long long)t->stale,
            (unsigned long long)t->truncated, (unsigned long long)t->malformed,
            (unsigned long long)t->unverified, s->auth.on ? "on" : "off");
    }
    udp_free(s);
}

static const vnic_transport_ops_t udp_ops = {
    .name = "udp",
    .post = udp_op_post,
    .send_am_try = udp_op_send_am_try,
    .progress = udp_op_progress,
    .flush = udp_op_flush,
    .sleep_prepare = udp_op_sleep_prepare,
    .sleep_cancel = udp_sleep_cancel,
    .sleep = udp_op_sleep,
    .fence = udp_fence,
    .quiesce = udp_quiesce,
    .close = udp_close,
};

void vnic_udp_get_stats(vnic_transport_t *tr, vnic_udp_stats_t *out)
{
    udp_t *s = (udp_t *)tr;
    udp_enter(s);
    *out = s->st;
    udp_leave(s);
}

/* ------------------------------------------------------------ test hooks (vnic.h) */

int vnic_udp_capture(vnic_t *v, int src, int count)
{
    if (!v || count < 0 || count > VNIC_UDP_CAPTURE)
        return FMPL_ERR_ARG;
    if (!v->remote)
        return FMPL_ERR_UNSUPPORTED;
    udp_t *s = (udp_t *)v->remote;
    if (src < 0 || src >= s->npeers)
        return FMPL_ERR_RANK;
    udp_enter(s);
    if (!s->cap_buf)
        s->cap_buf = malloc((size_t)VNIC_UDP_CAPTURE * VNIC_UDP_CAPTURE_BYTES);
    int rc = s->cap_buf ? FMPL_SUCCESS : FMPL_ERR_NOMEM;
    if (!rc) {
        s->cap_src = src;
        s->cap_n = 0;
        s->cap_want = count;
    }
    udp_leave(s);
    return rc;
}

int vnic_udp_captured(vnic_t *v, int i, void *buf, size_t cap, size_t *len)
{
    if (!v || !buf || !len)
        return FMPL_ERR_ARG;
    if (!v->remote)
        return FMPL_ERR_UNSUPPORTED;
    udp_t *s = (udp_t *)v->remote;
    udp_enter(s);
    int rc = FMPL_ERR_ARG;
    if (i >= 0 && i < s->cap_n && s->cap_len[i] <= cap) {
        memcpy(buf, s->cap_buf + (size_t)i * VNIC_UDP_CAPTURE_BYTES, s->cap_len[i]);
        *len = s->cap_len[i];
        rc = FMPL_SUCCESS;
    }
    udp_leave(s);
    return rc;
}

int vnic_udp_inject(vnic_t *v, int rank, int twin, const void *pkt, size_t len)
{
    if (!v || !pkt)
        return FMPL_ERR_ARG;
    if (!v->remote)
        return FMPL_ERR_UNSUPPORTED;
    udp_t *s = (udp_t *)v->remote;
    if (rank < 0 || rank >= s->npeers || rank == s->rank)
        return FMPL_ERR_RANK;
    udp_enter(s);
    udp_peer_t *p = udp_peer_of(s, rank);
    int rc = udp_peer_addr(s, rank, p);
    int fd = twin ? s->twin_fd : s->fd;
    if (!rc && fd < 0)
        rc = FMPL_ERR_UNSUPPORTED;
    if (!rc) {
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = p->port};
        sa.sin_addr.s_addr = p->ip;
        if (sendto(fd, pkt, len, 0, (const struct sockaddr *)&sa, sizeof sa) != (ssize_t)len)
            rc = FMPL_ERR_SYS;
    }
    udp_leave(s);
    return rc;
}

/* ------------------------------------------------------------ open */

/* The address to bind: FMPL_UDP_ADDR, else loopback when the job is on one host (or
 * forced), else the local address of the TCP connection to the launcher (PMI_PORT:
 * by construction an address the launcher's host reaches), else the first IPv4
 * address of this host's name. */
static int udp_bind_addr(udp_t *s, const char *want, struct in_addr *out)
{
    if (strcmp(want, "auto") != 0) {
        if (inet_aton(want, out) == 0) {
            base_log("vnic/udp: FMPL_UDP_ADDR=%s is not an IPv4 address", want);
            return FMPL_ERR_ARG;
        }
        return FMPL_SUCCESS;
    }
    if (s->v->nodes->nnodes == 1) {
        out->s_addr = htonl(INADDR_LOOPBACK);
        return FMPL_SUCCESS;
    }
    const char *pmi_local = boot_local_addr(s->v->boot);
    if (pmi_local && inet_aton(pmi_local, out) != 0)
        return FMPL_SUCCESS;
    char host[256];
    if (gethostname(host, sizeof host) != 0)
        return FMPL_ERR_SYS;
    host[sizeof host - 1] = 0;
    struct addrinfo hints = {.ai_family = AF_INET, .ai_socktype = SOCK_DGRAM}, *res = NULL;
    if (getaddrinfo(host, NULL, &hints, &res) != 0 || !res) {
        base_log("vnic/udp: cannot resolve this host's name '%s': set FMPL_UDP_ADDR", host);
        return FMPL_ERR_SYS;
    }
    *out = ((struct sockaddr_in *)(void *)res->ai_addr)->sin_addr;
    freeaddrinfo(res);
    if ((ntohl(out->s_addr) >> 24) == 127) {
        base_log("vnic/udp: this host's name resolves to a loopback address but the job spans "
                 "%d hosts: set FMPL_UDP_ADDR to this host's address on the cluster network",
                 s->v->nodes->nnodes);
        return FMPL_ERR_SYS;
    }
    return FMPL_SUCCESS;
}

/* A probability setting (a decimal number in [0, 1]); malformed is fatal. */
static double udp_env_prob(const char *name, const char *what)
{
    const char *t = base_env_str(name, "0", what);
    char *end;
    errno = 0;
    double x = strtod(t, &end);
    if (errno || end == t || *end || !(x >= 0.0 && x <= 1.0))
        base_setting_fail("%s=%s: expected a probability between 0 and 1", name, t);
    return x;
}

static int udp_setup(udp_t *s)
{
    vnic_t *v = s->v;
    long long mtu_def = v->nodes->nnodes == 1 ? 65000 : 1468 + (long long)UDP_HDRS;
    s->mtu = (size_t)base_env_int("FMPL_UDP_MTU", mtu_def, 1200, 65507,
                                  "largest UDP datagram the udp transport sends, headers "
                                  "included (104 bytes)");
    s->mtu = BASE_ALIGN_UP(s->mtu, 8);
    if (s->mtu > 65504)
        s->mtu = 65504;
    s->data_max = s->mtu - UDP_HDRS;
    /* GSO: a run of full datagrams to one peer leaves in one send of up to 64 KiB, which
     * the kernel (or the NIC) cuts; GRO: the receiver takes such runs whole. Pays when
     * at least two datagrams fit in 64 KiB (the MTU between hosts). */
    int gso = (int)base_env_int("FMPL_UDP_GSO", 1, 0, 1,
                                "1: send runs of datagrams to one peer with UDP GSO and "
                                "receive them with UDP GRO when the MTU lets two or more "
                                "fit in 64 KiB; 0: one datagram per send (sendto/sendmmsg)");
    s->gso = gso ? (int)BASE_MIN((size_t)UDP_GSO_SEGS, (UDP_GSO_MAX - 29) / s->mtu) : 0;
    if (s->gso < 2)
        s->gso = 0;
    s->gro = s->gso != 0;
    s->tx_batch = s->gso ? s->gso : 1;
    long long sndbuf = base_env_int("FMPL_UDP_SNDBUF", 4 << 20, 64 << 10, 1ll << 32,
                                    "bytes of the udp channel's send buffer (all peers)");
    long long rcvbuf = base_env_int("FMPL_UDP_RCVBUF", 1 << 20, 0, 1ll << 32,
                                    "bytes of the udp channel's receive buffer (all peers)");
    /* N: 64 messages, or 1 MiB of datagrams when more (small MTUs: 665 at 1572 bytes) */
    long long win_def = BASE_MAX(64ll, (1ll << 20) / (long long)s->mtu);
    s->window = (uint32_t)base_env_int("FMPL_UDP_WINDOW", win_def, 1, 65535,
                                       "unacknowledged messages per receiver (N of go-back-N; "
                                       "default 64, or 1 MiB / MTU when more)");
    s->rto_ns = (uint64_t)base_env_int("FMPL_UDP_RTO_US", 250, 10, 10000000,
                                       "retransmission timeout floor T in microseconds "
                                       "(timeout max(T, 2 x round trip) <= 4 T, doubling per "
                                       "expiry up to 64 x)") *
                1000;
    s->ack_delay_ns = (uint64_t)base_env_int("FMPL_UDP_ACK_DELAY_US", 50, 0, 1000000,
                                             "microseconds an acknowledgement may wait for a "
                                             "packet to ride on") *
                      1000;
    s->peer_timeout_ns = (uint64_t)base_env_int("FMPL_UDP_PEER_TIMEOUT_MS", 30000, 1, 86400000,
                                                "milliseconds a peer may stay silent while "
                                                "messages to it are unacknowledged") *
                         1000000;
    s->zcopy_min = (size_t)base_env_int("FMPL_UDP_ZCOPY_MIN", 512 << 10, 0, 1ll << 40,
                                        "bytes from which a contiguous put leaves straight "
                                        "from the caller's buffer (0: never; see ZERO-COPY)");
    s->place_on = (int)base_env_int("FMPL_UDP_PLACE", 1, 0, 1,
                                    "1: the payload of the next fragment of a large put or "
                                    "get answer is received straight into its destination "
                                    "(see RECEIVE IN PLACE); 0: through the receive batch");
    if (s->data_max < UDP_PLACE_MIN)
        s->place_on = 0; /* small datagrams: a recvmmsg batch costs less than the copies */
    s->place_peer = -1;
    s->exec_budget = (int)base_env_int("FMPL_UDP_EXEC_BUDGET", 0, 0, 1 << 30,
                                       "requests a vnic_progress call executes at most "
                                       "(0: no limit); the rest wait in the receive buffer");
    s->nreq = (uint32_t)base_env_int("FMPL_UDP_REQS", 1024, 16, 65536,
                                     "gets and atomics in flight per process (udp)");
    s->max_jobs = (int)base_env_int("FMPL_UDP_GET_JOBS", 256, 1, 1 << 20,
                                    "gets this process answers at once (udp)");
    s->loss =
        udp_env_prob("FMPL_UDP_LOSS", "injected loss: probability that a datagram is dropped on "
                                      "transmission (0..1)");
    s->dup = udp_env_prob("FMPL_UDP_DUP", "injected duplication: probability that a datagram "
                                          "is sent twice (0..1)");
    s->reorder = udp_env_prob("FMPL_UDP_REORDER",
                              "injected reordering: probability that a datagram is held back "
                              "behind the next one (0..1)");
    s->delay_ns = (uint64_t)base_env_int("FMPL_UDP_DELAY_US", 0, 0, 10000000,
                                         "injected delay: every datagram held up to this many "
                                         "microseconds (uniform)") *
                  1000;
    long long seed = base_env_int("FMPL_UDP_SEED", 1, 0, 1ll << 62,
                                  "seed of the fault injector (mixed with the rank)");
    s->inject = s->loss > 0 || s->dup > 0 || s->reorder > 0 || s->delay_ns;
    s->rng = ((uint64_t)seed + 1) * 0x9e3779b97f4a7c15ull ^ ((uint64_t)s->rank << 32 | 0x5bd1e995);
    if (!s->rng)
        s->rng = 1;
    s->close_linger_ns = (uint64_t)base_env_int("FMPL_UDP_LINGER_MS", 200, 1, 3600000,
                                                "milliseconds a rank that sent its DONE (fence, "
                                                "close) may stay silent before the others stop "
                                                "waiting for its last acknowledgement") *
                         1000000;
    s->auth.on = base_env_bool("FMPL_UDP_AUTH", 1,
                               "on: every udp packet carries a MAC keyed with the job key "
                               "(AES-256-GMAC), forged and replayed ones are refused; off: a "
                               "checksum only, for trusted fabrics and benchmarks (every rank "
                               "must agree)");
    s->print_stats = (int)base_env_int("FMPL_UDP_STATS", 0, 0, 1,
                                       "1: each process prints its udp counters on stderr when "
                                       "it closes");
    s->thr_on = (int)base_env_int("FMPL_UDP_THREAD", 1, 0, 1,
                                  "1: a progress thread serves the peers (executes their "
                                  "puts, gets and atomics) while the application stays out "
                                  "of the library; 0: only the application's calls do");
    s->thr_idle_ns = (uint64_t)base_env_int("FMPL_UDP_THREAD_US", 1000, 10, 1000000,
                                            "microseconds the application must stay out of "
                                            "the transport before the progress thread serves "
                                            "(also its polling period)") *
                     1000;
    s->defer_ns = (uint64_t)base_env_int("FMPL_UDP_DEFER_US", 20, 0, 1000000,
                                         "microseconds a small operation posted with "
                                         "VNIC_F_DEFER (fmpl_irecv's receive header) may stay "
                                         "held while its process spins in a wait, for the next "
                                         "post to its peer to take it along in one datagram "
                                         "(0: never held)") *
                  1000;
    s->bundle_cap = BASE_MIN(s->mtu, (size_t)UDP_BUNDLE_MAX);
    s->ack_every = BASE_MAX(1u, s->window / 4);
    s->cwnd_min = BASE_MAX(1u, BASE_MIN(s->window / 4, 16u));

    /* a quarter of the pool in small slots (when the MTU is large enough to matter),
     * the rest in MTU-sized ones; each class keeps room for the response reserve */
    size_t small_bytes = s->mtu > 4 * UDP_SMALL ? (size_t)sndbuf / 4 : 0;
    s->nsmall = (uint32_t)(small_bytes / UDP_SMALL);
    if (s->nsmall && s->nsmall < 2 * UDP_RESERVE + 2)
        s->nsmall = 2 * UDP_RESERVE + 2;
    uint32_t nlarge =
        (uint32_t)BASE_MAX(((size_t)sndbuf - small_bytes) / s->mtu, (size_t)2 * UDP_RESERVE + 2);
    s->nslots = s->nsmall + nlarge;
    s->pool = malloc((size_t)s->nsmall * UDP_SMALL + (size_t)nlarge * s->mtu);
    s->slot_next = malloc(s->nslots * sizeof *s->slot_next);
    s->slot_len = calloc(s->nslots, sizeof *s->slot_len);
    s->slot_sent = calloc(s->nslots, sizeof *s->slot_sent);
    s->slot_ext = calloc(s->nslots, sizeof *s->slot_ext);
    s->slot_ackreq = calloc(s->nslots, sizeof *s->slot_ackreq);
    s->slot_zkey = calloc(s->nslots, sizeof *s->slot_zkey); /* VNIC_KEY_INVALID is 0 */
    s->rto_cur = s->rto_ns;
    s->rq_cap = BASE_ALIGN_UP((size_t)rcvbuf, 8);
    s->rq = s->rq_cap ? malloc(s->rq_cap) : NULL;
    s->npeers = s->size;
    s->peer = calloc((size_t)s->size, sizeof *s->peer);
    s->active = malloc((size_t)s->size * sizeof *s->active);
    s->req = calloc(s->nreq, sizeof *s->req);
    if (!s->pool || !s->slot_next || !s->slot_len || !s->slot_sent || !s->slot_ext ||
        !s->slot_ackreq || !s->slot_zkey || (s->rq_cap && !s->rq) || !s->peer || !s->active ||
        !s->req)
        return FMPL_ERR_NOMEM;
    s->free_head[0] = s->free_head[1] = UDP_NIL;
    for (uint32_t i = s->nslots; i-- > 0;)
        udp_slot_put_back(s, i);
    for (uint32_t i = 0; i < s->nreq; i++)
        s->req[i].next_free = i + 1 < s->nreq ? i + 1 : UDP_NIL;
    s->req_free = 0;
    s->rx_slot = s->gro ? BASE_MAX(s->mtu, (size_t)UDP_GSO_MAX) : s->mtu;
    /* a burst's batch holds at most UDP_RX_BURST_BYTES of datagrams (GRO entries aside),
     * so that what the kernel copied is still in this core's cache when its tag is
     * checked and its payload copied out */
    s->rx_batch = s->gro ? UDP_BATCH
                         : (int)BASE_MIN((size_t)UDP_BATCH,
                                         BASE_MAX((size_t)2, UDP_RX_BURST_BYTES / s->rx_slot));
    for (int l = 0; l < UDP_LEVELS; l++) {
        s->rxbuf[l] = malloc((size_t)UDP_BATCH * s->rx_slot);
        if (!s->rxbuf[l])
            return FMPL_ERR_NOMEM;
        for (int i = 0; i < UDP_BATCH; i++) {
            s->rxiov[l][i].iov_base = s->rxbuf[l] + (size_t)i * s->rx_slot;
            s->rxiov[l][i].iov_len = s->rx_slot;
            memset(&s->rxmsg[l][i], 0, sizeof s->rxmsg[l][i]);
            s->rxmsg[l][i].msg_hdr.msg_iov = &s->rxiov[l][i];
            s->rxmsg[l][i].msg_hdr.msg_iovlen = 1;
            s->rxmsg[l][i].msg_hdr.msg_name = &s->rxaddr[l][i];
            s->rxmsg[l][i].msg_hdr.msg_namelen = sizeof s->rxaddr[l][i];
        }
    }
    s->st.sndbuf_bytes = (uint64_t)s->nsmall * UDP_SMALL + (uint64_t)nlarge * s->mtu;
    s->st.rcvbuf_bytes = s->rq_cap;
    s->st.mtu = (uint32_t)s->mtu;

    const char *want = base_env_str("FMPL_UDP_ADDR", "auto",
                                    "IPv4 address the udp socket binds (auto: 127.0.0.1 on one "
                                    "host, else the local address of the PMI_PORT "
                                    "connection, else the address of the host name)");
    struct in_addr a;
    int rc = udp_bind_addr(s, want, &a);
    if (rc)
        return rc;
    s->fd = socket(AF_INET, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (s->fd < 0) {
        base_log("vnic/udp: socket: %s", strerror(errno));
        return FMPL_ERR_SYS;
    }
    int sb = (int)base_env_int("FMPL_UDP_SOCKBUF", 4 << 20, 64 << 10, 1 << 30,
                               "kernel socket buffer bytes requested (SO_SNDBUF/SO_RCVBUF)");
    s->sockbuf = sb;
    s->twin_on = (int)base_env_int("FMPL_UDP_CONNECTED", 1, 0, 1,
                                   "1: the peer this process sends to most (16 transmissions "
                                   "in a row) gets a second socket connect()ed to it, which "
                                   "sends cheaper; 0: every datagram leaves by the one socket") &&
                 !s->inject;
    if (setsockopt(s->fd, SOL_SOCKET, SO_RCVBUFFORCE, &sb, sizeof sb) != 0)
        setsockopt(s->fd, SOL_SOCKET, SO_RCVBUF, &sb, sizeof sb);
    if (setsockopt(s->fd, SOL_SOCKET, SO_SNDBUFFORCE, &sb, sizeof sb) != 0)
        setsockopt(s->fd, SOL_SOCKET, SO_SNDBUF, &sb, sizeof sb);
    if (s->gro) {
        int one = 1;
        if (setsockopt(s->fd, IPPROTO_UDP, UDP_GRO, &one, sizeof one) != 0)
            s->gro = 0; /* an old kernel: entries are single datagrams */
    }
    struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr = a, .sin_port = 0};
    socklen_t sl = sizeof sa;
    if (bind(s->fd, (struct sockaddr *)&sa, sizeof sa) != 0 ||
        getsockname(s->fd, (struct sockaddr *)&sa, &sl) != 0) {
        base_log("vnic/udp: bind to %s: %s", inet_ntoa(a), strerror(errno));
        return FMPL_ERR_SYS;
    }
    s->my_ip = sa.sin_addr.s_addr;
    s->my_port = sa.sin_port;
    s->st.port = ntohs(sa.sin_port);
    if (s->twin_on)
        udp_twin_open(s);
    return FMPL_SUCCESS;
}

/* The boot value of the job key: "on:" or "off:" (rank 0's FMPL_UDP_AUTH), then the key
 * in hex. */
static void udp_key_format(char *val, const unsigned char key[UDP_KEY_BYTES], int on)
{
    int k = snprintf(val, BOOT_VALUE_MAX, "%s:", on ? "on" : "off");
    for (int i = 0; i < UDP_KEY_BYTES; i++)
        k += snprintf(val + k, (size_t)(BOOT_VALUE_MAX - k), "%02x", key[i]);
}

/* Reads rank 0's key and setting; keys this transport's tags with it. */
static int udp_key_read(udp_t *s)
{
    char val[BOOT_VALUE_MAX], mode[8];
    unsigned char key[UDP_KEY_BYTES];
    int rc = boot_get(s->v->boot, 0, "vnic.udp.key", val);
    int n = 0;
    if (rc || sscanf(val, "%7[a-z]:%n", mode, &n) != 1 || !n ||
        strlen(val + n) != 2 * UDP_KEY_BYTES) {
        base_log("vnic/udp: the job key was not published by rank 0");
        return rc ? rc : FMPL_ERR_INIT;
    }
    for (int i = 0; i < UDP_KEY_BYTES; i++) {
        unsigned b;
        if (sscanf(val + n + 2 * i, "%2x", &b) != 1) {
            base_log("vnic/udp: malformed job key from rank 0");
            return FMPL_ERR_INIT;
        }
        key[i] = (unsigned char)b;
    }
    int on = !strcmp(mode, "on");
    if (on != s->auth.on) {
        base_log("vnic/udp: FMPL_UDP_AUTH is %s on rank %d but %s on rank 0: every rank must "
                 "use the same setting",
                 s->auth.on ? "on" : "off", s->rank, on ? "on" : "off");
        return FMPL_ERR_INIT;
    }
    if (on && (uint64_t)s->size > UDP_NONCE_RANKS) {
        base_log("vnic/udp: FMPL_UDP_AUTH=on supports jobs of at most %u ranks over udp (the "
                 "packet nonce holds 24-bit ranks), this one has %d",
                 UDP_NONCE_RANKS, s->size);
        return FMPL_ERR_INIT;
    }
    rc = udp_auth_init(&s->auth, key, on);
    memset(key, 0, sizeof key);
    if (rc) {
        base_log("vnic/udp: could not set up AES-256-GCM for the packets' tags (OpenSSL, "
                 "libsodium)");
        return FMPL_ERR_INIT;
    }
    s->v->info.udp_mac =
        on ? udp_auth_choice() : "keyed checksum, no MAC (FMPL_UDP_AUTH=off: trusted fabrics only)";
    return FMPL_SUCCESS;
}

/* OTHER JOBS (dynamic processes: MPI_Comm_spawn, connect/accept, join; src/vnic/link.c).
 * A process of another job is registered as a peer id >= size (vnic_udp_peer_add) with
 * its address (main and twin ports), its rank in its job, and the two keys of the pair
 * (this process, it) that link.c derived from the secret the two jobs agreed when they
 * connected: tx seals our packets to it, rx checks its packets to us (udp_foreign_t;
 * udp_peer_t.link says which). Our packets to it carry our rank as src and its rank as
 * dst. A packet that fails this job's checks (structure with this job's ranks, the
 * claimed sender's registered address) is matched against the registered processes by
 * source address and src (udp_foreign_of: a linear scan, paid only by traffic between
 * jobs), then checked like any other packet, in the same order and with the same
 * counters (see AUTHENTICATION): tag with the pair's rx key (bad_csum), replay window
 * of that peer (replayed); an unregistered sender is foreign (bad_secret) and its
 * datagram dropped (it retransmits until this process registered it too). This job's
 * key never seals a packet to another job, and no packet of another job is checked with
 * it. The protocol is the same; fence leaves such peers out, close waits until they have
 * acknowledged what we sent (or are gone or dead) and says BYE to them. A job whose ranks
 * share one host has no udp transport: the first registration opens one for this process
 * alone (vnic_udp_open_alone; `alone`: it accepts no packet as this job's), so that job's
 * traffic among itself stays on shm, untouched. FMPL_UDP_AUTH applies to these peers too
 * (off: the pair's keys seed checksums); link.c refuses to link two jobs that disagree on
 * it. The datagram size is that of the job (65000 bytes on one host): two jobs on one
 * host agree; a multi-host job (1556) cannot receive a single-host job's large datagrams
 * (a spawn runs on this host only, so parent and children agree). */
int vnic_udp_peer_add(vnic_transport_t *tr, const char *ip, unsigned port, unsigned twin,
                      uint32_t rank, const unsigned char tx[UDP_KEY_BYTES],
                      const unsigned char rx[UDP_KEY_BYTES], int *id)
{
    udp_t *s = (udp_t *)tr;
    struct in_addr a;
    if (port == 0 || port > 65535 || twin > 65535 || inet_aton(ip, &a) == 0)
        return FMPL_ERR_ARG;
    udp_enter(s);
    for (int i = 0; i < s->npeers - s->size; i++) {
        const udp_peer_t *p = s->peer[s->size + i];
        if (p->ip == a.s_addr && p->port == htons((uint16_t)port) && s->foreign[i].rank == rank) {
            *id = s->size + i; /* registered by an earlier link: its keys stay */
            udp_leave(s);
            return FMPL_SUCCESS;
        }
    }
    int n = s->npeers + 1, nf = n - s->size;
    if (nf > UINT16_MAX) {
        udp_leave(s);
        return FMPL_ERR_NOMEM;
    }
    udp_peer_t **peer = realloc(s->peer, (size_t)n * sizeof *peer);
    if (peer)
        s->peer = peer;
    int *active = realloc(s->active, (size_t)n * sizeof *active);
    if (active)
        s->active = active;
    udp_foreign_t *f = realloc(s->foreign, (size_t)nf * sizeof *f);
    if (f)
        s->foreign = f;
    if (!peer || !active || !f) {
        udp_leave(s);
        return FMPL_ERR_NOMEM;
    }
    f = &s->foreign[nf - 1];
    f->rank = rank;
    if (udp_auth_init(&f->tx, tx, s->auth.on) != 0 || udp_auth_init(&f->rx, rx, s->auth.on) != 0) {
        udp_auth_fini(&f->tx);
        udp_leave(s);
        return FMPL_ERR_INIT;
    }
    s->peer[s->npeers] = NULL;
    udp_peer_t *p = udp_peer_of(s, s->npeers);
    p->ip = a.s_addr;
    p->port = htons((uint16_t)port);
    p->twin_port = htons((uint16_t)twin);
    p->link = (uint16_t)nf;
    p->heard_ns = base_time_ns();
    *id = s->npeers++;
    udp_leave(s);
    return FMPL_SUCCESS;
}

int vnic_udp_addr(vnic_transport_t *tr, char *buf, size_t len)
{
    udp_t *s = (udp_t *)tr;
    struct in_addr me = {.s_addr = s->my_ip};
    int n =
        snprintf(buf, len, "%s:%u:%u", inet_ntoa(me), ntohs(s->my_port), ntohs(s->my_twin_port));
    return n > 0 && (size_t)n < len ? FMPL_SUCCESS : FMPL_ERR_TRUNCATE;
}

int vnic_udp_auth_on(vnic_transport_t *tr)
{
    return ((udp_t *)tr)->auth.on;
}

static udp_t *udp_new(vnic_t *v)
{
    udp_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->base.ops = &udp_ops;
    s->base.v = v;
    s->v = v;
    s->fd = -1;
    s->twin_fd = -1;
    s->twin_peer = s->run_peer = -1;
    s->held_peer = -1;
    s->rank = v->rank;
    s->size = v->size;
    return s;
}

int vnic_udp_open_alone(vnic_t *v, vnic_transport_t **out)
{
    udp_t *s = udp_new(v);
    if (!s)
        return FMPL_ERR_NOMEM;
    s->alone = 1;
    int err = udp_setup(s);
    /* a key of its own, which seals nothing (no peer of this job is served here) */
    unsigned char key[UDP_KEY_BYTES];
    if (!err && (udp_auth_keygen(key) != 0 || udp_auth_init(&s->auth, key, s->auth.on) != 0))
        err = FMPL_ERR_INIT;
    memset(key, 0, sizeof key);
    if (!err && s->thr_on) {
        s->thr_on = 0;
        err = udp_thread_start(s);
    }
    if (err) {
        udp_free(s);
        return err;
    }
    *out = &s->base;
    return FMPL_SUCCESS;
}

int vnic_udp_open(vnic_t *v, vnic_transport_t **out)
{
    udp_t *s = udp_new(v);
    if (!s)
        return FMPL_ERR_NOMEM;
    int err = udp_setup(s);
    /* publish the addresses (and, rank 0, the key), fence, read the key */
    char val[BOOT_VALUE_MAX];
    struct in_addr me = {.s_addr = s->my_ip};
    snprintf(val, sizeof val, "%s:%u:%u", inet_ntoa(me), ntohs(s->my_port), ntohs(s->my_twin_port));
    int rc = boot_put(v->boot, "vnic.udp", err ? "-" : val);
    if (!err)
        err = rc;
    if (v->rank == 0) {
        unsigned char key[UDP_KEY_BYTES];
        if (udp_auth_keygen(key) != 0) {
            base_log("vnic/udp: no random bytes for the job key (OpenSSL RAND_bytes failed)");
            snprintf(val, sizeof val, "-");
            if (!err)
                err = FMPL_ERR_SYS;
        } else {
            udp_key_format(val, key, s->auth.on);
        }
        rc = boot_put(v->boot, "vnic.udp.key", val);
        if (!err)
            err = rc;
    }
    rc = boot_fence(v->boot);
    if (!err)
        err = rc;
    if (!err)
        err = udp_key_read(s);
    for (int r = 0; !err && s->size <= UDP_ADDR_PREFETCH && r < s->size; r++)
        if (r != s->rank && udp_serves(s, r))
            err = udp_peer_addr(s, r, udp_peer_of(s, r));
    if (!err && s->thr_on) {
        s->thr_on = 0; /* udp_thread_start sets it once the thread runs */
        err = udp_thread_start(s);
    }
    if (err) {
        udp_free(s);
        return err;
    }
    *out = &s->base;
    return FMPL_SUCCESS;
}
