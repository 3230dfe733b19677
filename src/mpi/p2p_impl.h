/* p2p_impl.h — private to the MPI point-to-point engine (p2p.c, request.c).
 *
 * PROTOCOL (vnic channel VNIC_CHAN_MPI_P2P, active messages = VNIC_OP_SEND):
 *   EAGER  {hdr} + packed payload (size <= eager_max; the size is the message length
 *          minus the 16-byte header, so an 8-byte message fits one 64-byte inbox cell);
 *          flag SYNC: the receiver answers ACK(imm) once it matched (MPI_Ssend),
 *          imm = the sender's request token;
 *   RTS    {hdr, size, key, off}: the payload stays in the sender's registered memory (the
 *          user buffer when contiguous, else a packed copy); the receiver, once
 *          matched, reads it with vnic GET (single copy) and answers FIN(imm);
 *   ACK / FIN {hdr}: complete the sender's request named by imm.
 *   CANCEL {hdr (ctx, src, tag of the message), token}: MPI_Cancel of a send, imm = the
 *          sender's request; the receiver removes the message from its unexpected queue
 *          when it is still there (not matched, not taken by MPI_Mprobe) and answers
 *          CANCEL_OK(imm), else CANCEL_FAIL(imm) (then ACK / FIN come as usual, possibly
 *          before the answer). The token names the message among the sender's: the
 *          request's address for SYNC eager and RTS (alive until ACK / FIN, so unique
 *          among the unmatched ones); for the other eager messages that may be
 *          cancelled (their request completes at once and may be reused), the count of
 *          such messages from this sender to this receiver, with bit 63 set
 *          (MPII_TOKEN_EAGER). That count does not travel: such a message is flagged
 *          MPII_AMF_COUNTED and the receiver counts them as they arrive (messages of a
 *          pair arrive in sending order), so it carries no immediate and a small one
 *          may take the vnic's fastbox.
 * Receiver-side matching per context id (struct mpii_match): posted receives in hash
 * buckets by (source, tag) plus a wildcard list, unexpected messages in buckets plus
 * one arrival-order list; every entry carries a sequence number so that the earliest
 * posted receive matches (and unexpected messages are consumed in arrival order, which
 * is per-source sending order: non-overtaking).
 * Handlers run inside vnic progress and never post: answers (ACK, FIN) and the GETs of
 * matched RTS are queued and posted by the progress hook (vnic.h: a SEND handler that
 * posts could deadlock with full inboxes). */
#ifndef FMPL_MPI_P2P_IMPL_H
#define FMPL_MPI_P2P_IMPL_H

#include "mpi/mpi_impl.h"

typedef struct mpii_link {
    struct mpii_link *prev, *next;
} mpii_link_t;

static inline void mpii_list_init(mpii_link_t *h)
{
    h->prev = h->next = h;
}
static inline int mpii_list_empty(const mpii_link_t *h)
{
    return h->next == h;
}
static inline void mpii_list_push(mpii_link_t *h, mpii_link_t *e)
{
    e->prev = h->prev;
    e->next = h;
    h->prev->next = e;
    h->prev = e;
}
static inline void mpii_list_del(mpii_link_t *e)
{
    e->prev->next = e->next;
    e->next->prev = e->prev;
    e->prev = e->next = e;
}
#define MPII_CONTAINER(p, type, member) ((type *)(void *)((char *)(p)-offsetof(type, member)))

enum {
    MPII_AM_EAGER = 1,
    MPII_AM_RTS,
    MPII_AM_ACK,
    MPII_AM_FIN,
    MPII_AM_CANCEL,
    MPII_AM_CANCEL_OK,
    MPII_AM_CANCEL_FAIL,
    MPII_AM_CREDIT /* imm: bytes of eager charge the receiver matched (p2p.c, CREDIT) */
};
#define MPII_TOKEN_EAGER (UINT64_C(1) << 63)
enum {
    MPII_AMF_SYNC = 1,   /* eager: acknowledge when matched (synchronous mode) */
    MPII_AMF_STAGED = 2, /* RTS: the packed stream is being staged in the sender's shared
                          * heap, its progress in the line before it (p2p.c, STAGED) */
    MPII_AMF_COUNTED = 4 /* eager: its token is the pair's count (CANCEL above) */
};

typedef struct mpii_hdr {
    uint32_t ctx;
    int32_t src; /* sender's rank in its (local) group */
    int32_t tag;
    uint8_t kind, flags;
    uint16_t pad;
} mpii_hdr_t;
_Static_assert(sizeof(mpii_hdr_t) == 16, "eager header: 16 bytes");

typedef struct mpii_rts {
    mpii_hdr_t h;
    uint64_t size; /* payload bytes (packed stream) */
    uint32_t key;
    uint32_t pad;
    uint64_t off;
} mpii_rts_t;

/* An unexpected message (also the object behind an MPI_Message). */
typedef struct mpii_umsg {
    mpii_link_t bl, gl; /* bucket, arrival order */
    uint64_t seq;
    int src, tag, kind, flags;
    int src_world;
    uint64_t size, token;
    vnic_key_t key;
    uint64_t off;
    char *data; /* eager payload (pooled buffer of class cls) */
    int cls;
    int comm; /* MPI_Message: the communicator handle it was probed on */
} mpii_umsg_t;

/* Buckets of a context's queues: MPII_NBUCKET0 at first, x4 whenever the entries in
 * buckets exceed twice their number (up to MPII_NBUCKET_MAX): a bucket walk stays
 * short with thousands of posted or unexpected messages. */
#define MPII_NBUCKET0 16
#define MPII_NBUCKET_MAX (1u << 16)

struct mpii_match {
    uint32_t ctx;
    uint32_t nbucket;         /* a power of two */
    uint32_t nposted, nunexp; /* entries in posted[] and unexp[] (pwild not counted) */
    uint64_t pseq, useq;
    mpii_link_t *posted, *unexp; /* [nbucket] */
    mpii_link_t pwild, uall;
};
typedef struct mpii_match mpii_match_t;

/* MPII_REQ_COMPOUND: MPI_Isendrecv(_replace) (p2p_compound.c): part[0] the send, part[1]
 * the receive, internal requests whose completion (mpii_req_done) counts down the parent's
 * npending; the parent completes with the receive's status. */
/* MPII_REQ_COLL: a nonblocking or persistent collective (coll_sched.c): sched is its
 * schedule (owned; NULL for a nonblocking one that borrowed a cached schedule), tag the tag of a
 * persistent one, plane (owned, may be NULL) its lane schedule and the agreement on a lane; an
 * MPI_Comm_idup has sched NULL (comm.c runs its schedules and completes it). */
/* MPII_REQ_PART: a partitioned send or receive (p2p_part.c), its state behind extra. */
enum {
    MPII_REQ_SEND = 1,
    MPII_REQ_RECV,
    MPII_REQ_GREQ,
    MPII_REQ_COMPOUND,
    MPII_REQ_COLL,
    MPII_REQ_PART
};
enum { MPII_MODE_STD = 0, MPII_MODE_SYNC, MPII_MODE_BUF, MPII_MODE_READY };

/* A request is a head that every request uses and a tail of fields that only some
 * paths write (rendezvous, buffered sends, parts of a compound, collectives, generalized
 * and partitioned requests). mpii_req_alloc zeroes the head only: a small eager send or
 * receive never touches the tail's lines, which the zeroing of the whole request was
 * most of the cost of allocating (docs/performance.md, "Request head and tail"). A free
 * request's tail is all zeros: mpii_req_free zeroes it when the request used it, that is
 * when its kind is neither SEND nor RECV, or when a path that writes tail fields of a
 * SEND or RECV set tail_used (mpii_req_tail). Reads of tail fields need nothing. */
typedef struct mpii_req {
    mpii_link_t link; /* posted queue, hook queue, or free list */
    uint64_t seq;
    int handle; /* MPI_REQUEST_NULL for the library's internal requests */
    uint8_t kind, mode, persistent, active;
    uint8_t user_freed, posted, internal;
    uint8_t named;          /* internal send that MPI_Cancel may still name (a user Bsend's) */
    uint8_t cancel_pending; /* send: CANCEL sent, answer not yet in */
    uint8_t may_defer;      /* send: waits in the deferred queue rather than in the vnic
                             * when the receiver has no room (user nonblocking sends) */
    uint8_t deferred;       /* send: in the deferred queue (p2p_defer.c) */
    uint8_t tail_used;      /* a SEND or RECV wrote tail fields (mpii_req_tail) */
    volatile int done;
    int err;           /* MPI error class of the completed operation */
    int comm;          /* communicator handle (errors) */
    mpii_comm_t *cref; /* user requests: a reference that keeps the communicator (and
                        * its context id) alive until the request is freed */
    /* arguments (buf..lb: set together by mpii_req_set_buf) */
    void *buf;
    int64_t count;
    MPI_Datatype type;
    dt_t *dt;
    uint64_t bytes; /* count * size of type: the packed stream */
    int64_t lb;     /* true lower bound of type: where contiguous data starts */
    int contig;     /* count elements of type are one contiguous block at buf + lb */
    int peer, tag;  /* rank in comm (or ANY/PROC_NULL); tag (or ANY) */
    int peer_world;
    int myrank;
    uint32_t ctx;
    mpii_match_t *m;
    MPI_Status st;
    /* send side, cancellation: the message's token (0: nothing sent) */
    uint64_t s_token;

    /* ---- the tail (see above) ---- */
    /* send side, rendezvous: registration and packed copy (or bsend block) */
    vnic_key_t key;
    void *tmp;
    uint8_t tmp_bsend;  /* tmp is a block of the attached Bsend buffer */
    uint8_t tmp_heap;   /* tmp is a block of the shared heap (a staged send) */
    uint8_t stage_ring; /* a staged send may go through a ring (p2p.c, STAGED): its
                         * caller waits for it (a blocking send) */
    uint8_t pumping;    /* in the queue of ring sends with bytes left to pack */
    uint64_t staged;    /* a staged send: bytes of its stream packed so far */
    /* send side, cancellation: ACK / FIN seen while a cancel was pending; buffered mode:
     * bsub is the internal rendezvous send of a Bsend/Ibsend request (alive until its
     * FIN), bowner the user request it belongs to (each clears the other's pointer when
     * it goes) */
    int fin_seen;
    struct mpii_req *bsub, *bowner;
    /* compound (MPII_REQ_COMPOUND) and its parts */
    struct mpii_req *parent, *part[2];
    int npending;
    /* receive side, matched RTS waiting for the hook's GET */
    uint64_t r_size, r_token, r_off;
    vnic_key_t r_key;
    int r_world;
    int r_staged; /* the RTS had MPII_AMF_STAGED */
    /* collective */
    coll_sched_t *sched;
    struct mpii_plane *plane; /* a persistent one that may run on a lane (coll_sched.c) */
    coll_sched_t *run;        /* the one background run whose end completes it, or NULL */
    coll_sched_t *check;      /* FMPL_MPI_CHECK: run first at every start (coll_verify.c) */
    int check_tag;
    int cslot; /* a nonblocking one running a schedule of the communicator's cache (sched
                * NULL): its slot + 1, marked busy until the run ends; else 0 */
    /* generalized */
    MPI_Grequest_query_function *query_fn;
    MPI_Grequest_free_function *free_fn;
    MPI_Grequest_cancel_function *cancel_fn;
    void *extra;
    int errobj; /* handle whose error handler reports the completion's error (a file's
                 * for MPI-IO requests); 0: the communicator's (MPI_COMM_WORLD's for
                 * generalized requests) */
} mpii_req_t;
#define MPII_REQ_TAIL offsetof(mpii_req_t, key)

/* r, a SEND or RECV, is about to write fields of its tail: they are zeroed at its free. */
static inline mpii_req_t *mpii_req_tail(mpii_req_t *r)
{
    r->tail_used = 1;
    return r;
}

/* Sets r's buffer arguments; dt is the dt of type (mpii_type_comm_dt). Predefined
 * types take their size from the handle (no dt call on the fast path). */
static inline void mpii_req_set_buf(mpii_req_t *r, const void *buf, int64_t count,
                                    MPI_Datatype type, dt_t *dt)
{
    r->buf = (void *)(uintptr_t)buf;
    r->count = count;
    r->type = type;
    r->dt = dt;
    if (BASE_LIKELY(FMPL_MPI_DT_IS_PREDEF(type))) {
        r->bytes = (uint64_t)count * (uint64_t)FMPL_MPI_DT_SIZE(type);
        r->lb = 0;
        r->contig = count <= 1 || FMPL_MPI_DT_PAD(type) == 0;
    } else {
        r->bytes = (uint64_t)count * (uint64_t)dt_size(dt);
        r->lb = dt_true_lb(dt);
        r->contig = dt_is_contig(dt, count);
    }
}

/* ---- request.c */
mpii_req_t *mpii_req_alloc(void); /* zeroed, from the pool; NULL: out of memory */
extern mpii_link_t mpii_req_pool; /* the free requests (request.c; next NULL before the first) */
/* Takes the first request of the pool, which is not empty, and zeroes its head (the
 * tail is zero: mpii_req_free). */
static inline mpii_req_t *mpii_req_pop(void)
{
    mpii_link_t *e = mpii_req_pool.next;
    mpii_list_del(e);
    mpii_req_t *r = MPII_CONTAINER(e, mpii_req_t, link);
    base_zero(r, MPII_REQ_TAIL);
    r->handle = MPI_REQUEST_NULL;
    mpii_list_init(&r->link);
    return r;
}
/* mpii_req_alloc with its common case inlined, for MPI_Isend and MPI_Irecv (mpii_inb). */
static inline mpii_req_t *mpii_req_take(void)
{
#ifndef FMPL_CHECKED /* (mpii_req_alloc checks the tail) */
    if (BASE_LIKELY(mpii_req_pool.next && mpii_req_pool.next != &mpii_req_pool))
        return mpii_req_pop();
#endif
    return mpii_req_alloc();
}
void mpii_req_free(mpii_req_t *r);
/* Gives r a user handle in *h; MPI_ERR_NO_MEM (r freed) when the table is full. */
static inline int mpii_req_handle(mpii_req_t *r, MPI_Request *h)
{
    int x = mpii_handle_new(FMPL_MPI_KIND_REQUEST, r);
    if (BASE_UNLIKELY(x == MPI_REQUEST_NULL)) {
        mpii_req_free(r);
        return MPI_ERR_NO_MEM;
    }
    r->handle = x;
    *h = x;
    return MPI_SUCCESS;
}
/* Marks r complete (from the engine): frees it at once when the user already freed it. */
void mpii_req_done_more(mpii_req_t *r);
static inline void mpii_req_done(mpii_req_t *r)
{
    r->done = 1;
    if (BASE_UNLIKELY(r->user_freed || r->parent))
        mpii_req_done_more(r);
}
/* Waits (progressing) until r->done. */
void mpii_req_wait(mpii_req_t *r);
/* An empty status (MPI-4.0 3.7.3). */
void mpii_status_empty(MPI_Status *st);
/* Releases a request pool and tables at finalize. */
void mpii_req_finalize(void);

/* ---- p2p.c */
/* Starts the operation described by r's arguments (send or receive; persistent Start
 * and the I-calls). Returns an MPI error class; r completes later (mpii_req_done). */
int mpii_p2p_start(mpii_req_t *r);
/* Cancels r (MPI-4.0 3.8.4): an unmatched receive completes as cancelled at once; a send
 * (also a completed eager or buffered one, which then becomes incomplete again until the
 * answer) asks its receiver with CANCEL and completes cancelled or normally when the
 * answer is in. Anything else: nothing happens. */
void mpii_p2p_cancel(mpii_req_t *r);

/* ---- deferred sends (p2p_defer.c): a send the receiver has no room for waits here,
 * in posting order per receiver, instead of blocking its caller (MPI_Isend returns at
 * once, seed 002). Application thread only. */
#define MPII_AGAIN (-1) /* mpii_send_post: no room at the receiver, nothing sent */
/* Sends r's message (eager data or RTS); with `try`, MPII_AGAIN rather than waiting for
 * room. Else an MPI error class (r not completed) or MPI_SUCCESS (p2p.c). */
int mpii_send_post(mpii_req_t *r, int try);
/* Queues send r behind the others to its receiver (counted in mpii_sends_pending). */
void mpii_defer_add(mpii_req_t *r);
/* Takes deferred send r out of the queue unsent (MPI_Cancel). */
void mpii_defer_remove(mpii_req_t *r);
/* Waits (progressing) until no send to world rank `world` is deferred. */
void mpii_defer_drain(int world);
/* Sends what the receivers have room for now, in order; the number sent. */
int mpii_defer_work(void);
extern uint32_t mpii_defer_total; /* deferred sends in all */
/* The number of sends to world rank `world` that are deferred. */
uint32_t mpii_defer_count_of(int world);
static inline uint32_t mpii_defer_count(int world)
{
    return BASE_UNLIKELY(mpii_defer_total) ? mpii_defer_count_of(world) : 0;
}
/* Frees the queue's table (at MPI_Finalize, once no send is pending). */
void mpii_defer_finalize(void);
/* Arms the progress hook of p2p.c (which calls mpii_defer_work). */
void mpii_p2p_hook_arm(void);
/* Checks the arguments of a send (recv 0) or receive (recv 1) and fills r's (kind, buffer,
 * count, type, peer, tag, comm, ctx, matching state; r->dt not retained). Returns an MPI
 * error class, not raised: MPI_ERR_COMM for an invalid comm (raise it on no object). */
int mpii_p2p_args(mpii_req_t *r, const void *buf, int64_t count, MPI_Datatype type, int peer,
                  int tag, MPI_Comm comm, int recv);

/* Raises class rc, which mpii_p2p_args returned for these arguments, with a message that
 * names the argument and its value; returns the code the handler leaves. */
int mpii_p2p_args_fail(int rc, const void *buf, int64_t count, MPI_Datatype type, int peer, int tag,
                       MPI_Comm comm, int recv, const char *fname);

/* ---- p2p_compound.c */
/* A part of a compound request completed (from mpii_req_done). */
void mpii_compound_part_done(mpii_req_t *parent);
/* MPI_Cancel of a compound request. */
void mpii_compound_cancel(mpii_req_t *r);
/* Frees the parts and the temporary buffer of a compound request (from mpii_req_free). */
void mpii_compound_free(mpii_req_t *r);
/* Number of sends in flight (finalize and Buffer_detach wait for them). */
extern int mpii_sends_pending;

/* ---- p2p_part.c */
/* Starts a partitioned request (MPI_Start); returns an MPI error class. */
int mpii_part_start(mpii_req_t *r);
/* Frees a partitioned request's state (from mpii_req_free). */
void mpii_part_free(mpii_req_t *r);

/* ---- p2p.c: the library's typed nonblocking traffic (collectives)
 * mpii_lib_isend / mpii_lib_irecv start a send / receive of count elements of type
 * (valid, committed or predefined) on c's library context ctx + 1 with tag (0..MPII_TAG_UB)
 * to / from rank dst / src of c (MPI_PROC_NULL: completes at once, nothing moves). The
 * request r is the caller's memory (e.g. its stack), filled here; it must stay in place
 * until complete. They return an MPI error class; on error r is already complete with
 * r->err set, so a following mpii_lib_waitall is still safe. mpii_lib_waitall waits (with
 * progress) for all n requests of rs and returns the first error class among them
 * (MPI_ERR_TRUNCATE for a receive too small), MPI_SUCCESS otherwise. */
int mpii_lib_isend(mpii_comm_t *c, const void *buf, int64_t count, MPI_Datatype type, int dst,
                   int tag, mpii_req_t *r);
int mpii_lib_irecv(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, int src, int tag,
                   mpii_req_t *r);
int mpii_lib_waitall(mpii_req_t *rs, int n);
/* The same with the type given as its dt (type: its handle, or MPI_DATATYPE_NULL for a
 * derived type whose handle may be gone; the caller keeps dt alive until completion). */
int mpii_lib_isend_dt(mpii_comm_t *c, const void *buf, int64_t count, MPI_Datatype type, dt_t *dt,
                      int dst, int tag, mpii_req_t *r);
int mpii_lib_irecv_dt(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, dt_t *dt,
                      int src, int tag, mpii_req_t *r);

#endif
