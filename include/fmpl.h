/* fmpl.h — the native FMPL API (seed 000): sender-side-matched zero-copy
 * point-to-point over remote memory operations, buffered mode by timeout, an
 * any-source domain, communicators and collectives.
 *
 * Every function returns FMPL_SUCCESS or an FMPL_ERR_* code (fmpl_errors.h);
 * fmpl_error_string() gives its message. Functions are called by one thread. */
#ifndef FMPL_H
#define FMPL_H

#include <stddef.h>

#include "fmpl_errors.h"

#ifdef __cplusplus
extern "C" {
#endif
/* The library is built with -fvisibility=hidden: what this header declares is its
 * exported interface (tests/abi_exports.sh checks the two match). */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

#define FMPL_VERSION_MAJOR 0
#define FMPL_VERSION_MINOR 1
#define FMPL_VERSION_PATCH 0
#define FMPL_VERSION_STRING "0.1.0"

typedef int fmpl_comm;
typedef int fmpl_type;
typedef int fmpl_op;

#define FMPL_COMM_WORLD ((fmpl_comm)0)
#define FMPL_COMM_NULL ((fmpl_comm)-1)
#define FMPL_UNDEFINED (-32766)
#define FMPL_TAG_ANY (-1)          /* receive: match a send with any matching-area index */
#define FMPL_TIMEOUT_INFINITE (-1) /* fmpl_sendbuf_set: synchronous mode */

/* What a receive got. */
typedef struct fmpl_status {
    int source;  /* rank of the sender in the communicator */
    int mai;     /* matching-area index the sender used */
    size_t size; /* bytes received */
    int error;   /* FMPL_SUCCESS or the error of this receive */
} fmpl_status;
#define FMPL_STATUS_IGNORE ((fmpl_status *)0)

/* Reduction datatypes. */
enum {
    FMPL_INT32 = 1,
    FMPL_INT64 = 2,
    FMPL_FLOAT = 3,
    FMPL_DOUBLE = 4,
    FMPL_COMPLEX = 5,       /* two floats: real, imaginary */
    FMPL_DOUBLE_COMPLEX = 6 /* two doubles: real, imaginary */
};

/* Reduction operations. AMAX/AMIN pick the element of largest/smallest absolute
 * value (for complex: |re| + |im|, as BLACS does) and keep its sign. */
enum { FMPL_SUM = 1, FMPL_MAX = 2, FMPL_MIN = 3, FMPL_AMAX = 4, FMPL_AMIN = 5 };

/* ---- environment ---- */
/* Starts the library: connects to the launcher (fmplrun, a PMI launcher) or, started
 * alone, becomes a singleton of size 1; opens the software NIC; creates FMPL_COMM_WORLD.
 * Collective over the job: blocks until every rank has called it. argc/argv may be
 * NULL (they are not modified). Settings are read from the environment (FMPL_MAI_MAX,
 * FMPL_ANY_SLOTS, FMPL_ANY_INLINE, ...; see fmpl-info). Returns FMPL_ERR_INIT when
 * called a second time (also after fmpl_finalize: the library cannot be restarted), and
 * FMPL_ERR_PEER when another rank's start-up failed (that rank logs why). */
int fmpl_init(int *argc, char ***argv);
/* Ends the library. Collective over the job. Blocks until every spooled and pending
 * send of this rank has been received, then synchronises all ranks, frees every
 * communicator and closes. Afterwards every call returns FMPL_ERR_NOT_INIT. */
int fmpl_finalize(void);
/* Seconds since an arbitrary fixed point (monotonic clock). Works without fmpl_init. */
double fmpl_wtime(void);
/* The message of a code; never NULL, for any int. Works without fmpl_init. */
const char *fmpl_error_string(int code);

/* ---- communicators ----
 * Every call taking a communicator returns FMPL_ERR_COMM for a handle that names no
 * live communicator (FMPL_COMM_NULL, freed, out of range). */
/* This rank's rank / the number of ranks in comm. Local. FMPL_ERR_ARG for NULL. */
int fmpl_comm_rank(fmpl_comm comm, int *rank);
int fmpl_comm_size(fmpl_comm comm, int *size);
/* Collective over parent: ranks giving the same key >= 0 form one communicator,
 * ordered by their rank in parent; key FMPL_UNDEFINED gives FMPL_COMM_NULL; any other
 * negative key is FMPL_ERR_ARG (returned before communicating: the other ranks would
 * wait). Each new communicator has its own matching areas, any-source traffic and
 * collectives, independent of parent's. FMPL_ERR_NOMEM when 256 communicators are
 * live at a member or the shared heap has no room for the matching area. */
int fmpl_comm_create(fmpl_comm parent, int key, fmpl_comm *newcomm);
/* Frees *comm and sets it to FMPL_COMM_NULL. FMPL_COMM_WORLD cannot be freed
 * (FMPL_ERR_COMM). Collective over the members of *comm: first waits until this rank's
 * pending and spooled sends on it have been received; receives still posted on it are
 * cancelled. */
int fmpl_comm_free(fmpl_comm *comm);

/* ---- point-to-point (sender-side matching) ----
 * A receive writes its header into the sender's matching area slot (dst, mai);
 * a send waits for that header, then writes the data straight into the receive
 * buffer. A (pair, mai) carries one message at a time: reusing it while a send or
 * receive on it is in flight returns FMPL_ERR_BUSY (an isend stays in flight until
 * fmpl_isend_wait, an irecv until fmpl_irecv_wait). Matching-area indices run
 * from 0 to FMPL_MAI_MAX-1 (environment, default 1024). On one (pair, mai) the k-th
 * send meets the k-th receive; messages to oneself work like any other.
 *
 * FMPL_TAG_ANY (receives only) posts into the sender's separate "any" slot; a send
 * whose own slot holds no header takes it (status->mai tells which mai it used). As in
 * the paper there is no FIFO relation between TAG_ANY and specific receives: with a
 * receive on mai 0 and a TAG_ANY receive posted, a send on mai 0 takes the mai-0 header
 * if it is there when it looks, else the ANY one, whatever the posting order.
 *
 * A message shorter than the receive buffer is fine (status->size says how much came).
 * A longer one is truncated as in MPI: the first `size` bytes of the receive buffer are
 * written, nothing past it, and both the send and the receive return
 * FMPL_ERR_TRUNCATE (status->size = the receive buffer's size). A spooled send already
 * returned FMPL_SUCCESS, so then only the receiver learns of the truncation.
 *
 * Argument errors, checked in this order: FMPL_ERR_NOT_INIT, FMPL_ERR_COMM,
 * FMPL_ERR_BUFFER (NULL with size > 0), FMPL_ERR_RANK, FMPL_ERR_MAI. */
/* Blocks until the payload has been written into the receive buffer, or (buffered mode,
 * fmpl_sendbuf_set) until it was copied into the spool after timeout_ms;
 * FMPL_ERR_SPOOL when the spool has no room: nothing was sent. */
int fmpl_send(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
/* Blocks until the message has arrived. status may be FMPL_STATUS_IGNORE. Buffers from
 * fmpl_alloc_mem are written by the sender with a plain memcpy (zero copy). */
int fmpl_recv(void *buf, size_t size, int src, int mai, fmpl_comm comm, fmpl_status *status);
/* Starts a send; buf must stay untouched until fmpl_isend_wait. Sends immediately when
 * the receive is posted, else the library's progress (inside any fmpl call) sends it
 * when the header arrives. Delivery errors are returned by fmpl_isend_wait. */
int fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
/* Posts a receive (writes its header into the sender's slot) and returns. Costs the
 * same whatever the number of receives already posted (no queue). */
int fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_comm comm);
/* Blocks until the isend on (dst, mai) is done and returns its result
 * (FMPL_ERR_NO_PENDING when there is none). In buffered mode it spools the message
 * after timeout_ms; without spool room it returns FMPL_ERR_SPOOL and the isend stays
 * pending. */
int fmpl_isend_wait(int dst, int mai, fmpl_comm comm);
/* Blocks until the irecv on (src, mai) has its message, fills status, returns the
 * receive's result (FMPL_ERR_NO_PENDING when none is posted). */
int fmpl_irecv_wait(int src, int mai, fmpl_comm comm, fmpl_status *status);

/* 2-D transfers (seed 000's BLACS use): a layout is `rows` blocks of `row_bytes` bytes,
 * block i at buf + i * ld (ld >= row_bytes when rows > 1). For the m x n sub-matrix at
 * a of a column-major matrix of e-byte elements with leading dimension lda:
 * {.rows = n, .row_bytes = m * e, .ld = lda * e}. The message is the blocks' bytes in
 * order, so a 2-D send meets any receive on its (pair, mai), 2-D or contiguous, and the
 * layouts may differ in shape (a 4 x 8 send fills a 2 x 16 receive): the data moves
 * from the sender's layout straight into the receiver's, with no pack and no unpack.
 * Where many small pieces would cost more (receive blocks under 256 bytes; any 2-D
 * receive from a sender on another host or over udp), the receive takes, while posted,
 * a block of the shared heap as large as itself: the sender copies its blocks there
 * and the receiver copies them into its layout when it waits for the receive
 * (fmpl_recv_2d, fmpl_irecv_wait), while the sender is still copying: one copy on each
 * side. Without room in the heap the data moves straight.
 * Everything else is as for fmpl_send/recv/isend/irecv (truncation past the receive's
 * rows * row_bytes, fmpl_isend_wait and fmpl_irecv_wait, buffered mode: a spooled 2-D
 * send is gathered into the spool). FMPL_ERR_ARG: layout NULL, ld < row_bytes with more
 * than one row, or rows * ld overflowing; the other errors as for the contiguous calls. */
typedef struct fmpl_layout {
    size_t rows, row_bytes, ld;
} fmpl_layout;
int fmpl_send_2d(const void *buf, const fmpl_layout *layout, int dst, int mai, fmpl_comm comm);
int fmpl_recv_2d(void *buf, const fmpl_layout *layout, int src, int mai, fmpl_comm comm,
                 fmpl_status *status);
int fmpl_isend_2d(const void *buf, const fmpl_layout *layout, int dst, int mai, fmpl_comm comm);
int fmpl_irecv_2d(void *buf, const fmpl_layout *layout, int src, int mai, fmpl_comm comm);

/* Buffered mode by timeout: a send waits timeout_ms for its receive, then copies
 * the data into this spool buffer and completes. timeout_ms 0 = buffer at once when the
 * receive is not posted; FMPL_TIMEOUT_INFINITE = synchronous mode (the default).
 * buf NULL/size 0 removes the spool (after flushing it) and sends are synchronous again.
 * The buffer belongs to the library until removed; each spooled message uses its size
 * rounded up to 64 bytes plus a 64-byte descriptor. Replacing or removing a spool
 * blocks until its messages have been received. Spooled messages are sent by the
 * progress inside every fmpl call (collectives included), by fmpl_sendbuf_check and at
 * fmpl_finalize, straight from the spool into the receive buffer.
 * FMPL_ERR_ARG: negative timeout other than INFINITE; FMPL_ERR_BUFFER: NULL with size
 * > 0, or a buffer too small for any message (< 128 bytes after alignment). */
int fmpl_sendbuf_set(void *buf, size_t size, int timeout_ms);
/* Sends spooled messages whose receives have appeared, without blocking; *nsent = how
 * many spooled messages were delivered since the previous call (by this call or by
 * progress in other calls), *npending = how many still wait. Either pointer may be
 * NULL. */
int fmpl_sendbuf_check(int *nsent, int *npending);

/* Any-source domain: receiver-side matching, separate from fmpl_send/recv (a message
 * sent with one is never received by the other). Each rank has FMPL_ANY_SLOTS (default
 * 64, same on every rank) receive slots whatever the number of senders; a sender takes a
 * slot with a remote fetch-add and waits while all are taken. Messages from one sender
 * are received in send order. */
/* Blocks until the message is in a slot of dst (payload <= FMPL_ANY_INLINE bytes,
 * default 960: eager), or, for larger payloads, until dst's fmpl_recv_any has fetched
 * it (rendezvous; then a truncation is reported here too). mai: 0..FMPL_MAI_MAX-1. A
 * rendezvous-sized send_any to oneself cannot complete (no receive can run meanwhile). */
int fmpl_send_any(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
/* Blocks until a message with this mai (FMPL_TAG_ANY: any) from any rank of comm has
 * arrived, in arrival order; status->source is the sender's rank in comm. A longer
 * message is truncated to size bytes (FMPL_ERR_TRUNCATE). */
int fmpl_recv_any(void *buf, size_t size, int mai, fmpl_comm comm, fmpl_status *status);

/* ---- collectives ----
 * Collective over comm: every member calls them in the same order with the same root,
 * size/count, type and op. They block until this rank's part is done. Errors:
 * FMPL_ERR_COMM, FMPL_ERR_BUFFER (NULL with size/count > 0), FMPL_ERR_ROOT,
 * FMPL_ERR_TYPE, FMPL_ERR_OP (MAX/MIN are not defined on complex types). */
int fmpl_barrier(fmpl_comm comm);
/* root's size bytes of buf end up in every member's buf. */
int fmpl_bcast(void *buf, size_t size, int root, fmpl_comm comm);
/* buf (count elements of type) combined with op over the members: the result lands in
 * root's buf (reduce; the others' buf is unchanged) or in everyone's (allreduce).
 * work: scratch of count elements, or NULL (the library allocates). AMAX/AMIN ties
 * (equal magnitude, different value) go to the greater value, so every rank gets the
 * same result. */
int fmpl_reduce(void *buf, size_t count, fmpl_type type, fmpl_op op, int root, fmpl_comm comm,
                void *work);
int fmpl_allreduce(void *buf, size_t count, fmpl_type type, fmpl_op op, fmpl_comm comm, void *work);
/* ---- persistent collectives (seed 003) ----
 * A request made once by fmpl_bcast_init or fmpl_allreduce_init runs its collective at
 * every fmpl_start; fmpl_wait or fmpl_test completes the run. The arguments are those of
 * fmpl_bcast and fmpl_allreduce (allreduce works in place, in buf, with no work buffer).
 * Init is collective over comm like the blocking calls (every member, in the same order,
 * with the same root, size, count, type and op) and does not communicate. Starts are
 * collective too: every member starts comm's requests in the same order, and blocking
 * collectives on comm keep their place in that order (a blocking collective first
 * completes this rank's runs started before it). From a start until the run completes,
 * buf belongs to the library.
 * On one host, once a member has started a run, the others complete it without that
 * member's CPU: the members that wait read and write its buffer (the first 8 requests of
 * a communicator; the others run the blocking calls' algorithms in the background,
 * advanced inside every fmpl call).
 * Errors: those of the blocking calls; FMPL_ERR_ARG for req or flag NULL, or a handle that
 * names no live request (FMPL_REQUEST_NULL, freed, freed with its communicator);
 * FMPL_ERR_BUSY for fmpl_start or fmpl_request_free of a request whose run has not
 * completed; FMPL_ERR_NO_PENDING for fmpl_wait or fmpl_test with no run to complete.
 * fmpl_wait and fmpl_test return the run's error: FMPL_ERR_TRUNCATE or FMPL_ERR_MISMATCH
 * at a member whose size is not the root's (bcast) or the others' (allreduce).
 * fmpl_comm_free and fmpl_finalize wait for the runs of the communicator's requests and
 * free them. */
typedef int fmpl_request;
#define FMPL_REQUEST_NULL ((fmpl_request)-1)
int fmpl_bcast_init(void *buf, size_t size, int root, fmpl_comm comm, fmpl_request *req);
int fmpl_allreduce_init(void *buf, size_t count, fmpl_type type, fmpl_op op, fmpl_comm comm,
                        fmpl_request *req);
/* Starts a run. Never blocks. */
int fmpl_start(fmpl_request req);
/* Blocks until the run is complete. */
int fmpl_wait(fmpl_request req);
/* Never blocks: *flag = 1 when the run is complete (then as fmpl_wait), else 0. */
int fmpl_test(fmpl_request req, int *flag);
/* Frees *req and sets it to FMPL_REQUEST_NULL. Local. */
int fmpl_request_free(fmpl_request *req);

/* A user reduction: fn(inout, in, count) combines count elements of the reduce
 * type, inout[i] = inout[i] (op) in[i]. Must be associative and commutative. Usable with
 * any type. FMPL_ERR_ARG for NULL arguments; FMPL_ERR_NOMEM after 64 operations. */
int fmpl_op_create(void (*fn)(void *inout, const void *in, size_t count), fmpl_op *op);

/* ---- memory ---- */
/* Memory in the shared heap: peers on this host reach it with plain memcpy, so
 * messages to and from it are single copy without system calls. NULL when the heap
 * (FMPL_SHM_HEAP bytes per rank) is exhausted or before fmpl_init. */
void *fmpl_alloc_mem(size_t size);
/* Returns memory from fmpl_alloc_mem; NULL is accepted; FMPL_ERR_BUFFER for any other
 * pointer. */
int fmpl_free_mem(void *ptr);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif
#endif
