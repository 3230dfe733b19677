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
#define FMPL_TAG_ANY (-1)             /* receive: match a send with any matching-area index */
#define FMPL_TIMEOUT_INFINITE (-1)    /* fmpl_sendbuf_set: synchronous mode */

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
    FMPL_COMPLEX = 5,        /* two floats: real, imaginary */
    FMPL_DOUBLE_COMPLEX = 6  /* two doubles: real, imaginary */
};

/* Reduction operations. AMAX/AMIN pick the element of largest/smallest absolute
 * value (for complex: |re| + |im|, as BLACS does) and keep its sign. */
enum {
    FMPL_SUM = 1,
    FMPL_MAX = 2,
    FMPL_MIN = 3,
    FMPL_AMAX = 4,
    FMPL_AMIN = 5
};

/* ---- environment ---- */
int fmpl_init(int *argc, char ***argv);
int fmpl_finalize(void);
double fmpl_wtime(void);
const char *fmpl_error_string(int code);

/* ---- communicators ---- */
int fmpl_comm_rank(fmpl_comm comm, int *rank);
int fmpl_comm_size(fmpl_comm comm, int *size);
/* Collective over parent: ranks giving the same key >= 0 form one communicator,
 * ordered by their rank in parent; key FMPL_UNDEFINED gives FMPL_COMM_NULL. */
int fmpl_comm_create(fmpl_comm parent, int key, fmpl_comm *newcomm);
/* Frees *comm and sets it to FMPL_COMM_NULL. FMPL_COMM_WORLD cannot be freed. */
int fmpl_comm_free(fmpl_comm *comm);

/* ---- point-to-point (sender-side matching) ----
 * A receive writes its header into the sender's matching area slot (dst, mai);
 * a send waits for that header, then writes the data straight into the receive
 * buffer. A (pair, mai) carries one message at a time: reusing it while a send or
 * receive on it is in flight returns FMPL_ERR_BUSY. Matching-area indices run
 * from 0 to FMPL_MAI_MAX-1 (environment, default 1024). */
int fmpl_send(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
int fmpl_recv(void *buf, size_t size, int src, int mai, fmpl_comm comm, fmpl_status *status);
int fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
int fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_comm comm);
int fmpl_isend_wait(int dst, int mai, fmpl_comm comm);
int fmpl_irecv_wait(int src, int mai, fmpl_comm comm, fmpl_status *status);

/* Buffered mode by timeout: a send waits timeout_ms for its receive, then copies
 * the data into this spool buffer and completes. timeout_ms 0 = always buffer;
 * FMPL_TIMEOUT_INFINITE = synchronous mode (the default). buf NULL/size 0 removes
 * the spool (after flushing it). The buffer belongs to the library until removed. */
int fmpl_sendbuf_set(void *buf, size_t size, int timeout_ms);
/* Sends spooled messages whose receives have appeared; *nsent = how many it sent
 * now, *npending = how many still wait. Either pointer may be NULL. */
int fmpl_sendbuf_check(int *nsent, int *npending);

/* Any-source domain: receiver-side matching, separate from fmpl_send/recv. */
int fmpl_send_any(const void *buf, size_t size, int dst, int mai, fmpl_comm comm);
int fmpl_recv_any(void *buf, size_t size, int mai, fmpl_comm comm, fmpl_status *status);

/* ---- collectives ---- */
int fmpl_barrier(fmpl_comm comm);
int fmpl_bcast(void *buf, size_t size, int root, fmpl_comm comm);
/* work: scratch of count elements, or NULL (the library allocates). */
int fmpl_reduce(void *buf, size_t count, fmpl_type type, fmpl_op op, int root, fmpl_comm comm,
                void *work);
int fmpl_allreduce(void *buf, size_t count, fmpl_type type, fmpl_op op, fmpl_comm comm,
                   void *work);
/* A user reduction: fn(inout, in, count) combines count elements of the reduce
 * type, inout[i] = inout[i] (op) in[i]. Must be associative and commutative. */
int fmpl_op_create(void (*fn)(void *inout, const void *in, size_t count), fmpl_op *op);

/* ---- memory ---- */
/* Memory in the shared heap: peers on this host reach it with plain memcpy, so
 * messages to and from it are single copy without system calls. NULL when the heap
 * (FMPL_SHM_HEAP bytes per rank) is exhausted or before fmpl_init. */
void *fmpl_alloc_mem(size_t size);
int fmpl_free_mem(void *ptr);

#ifdef __cplusplus
}
#endif
#endif
