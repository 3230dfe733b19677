/* p2p_part.c — MPI-4.0 partitioned point-to-point communication (chapter 4):
 * MPI_Psend_init, MPI_Precv_init, MPI_Pready(_range, _list), MPI_Parrived.
 *
 * DESIGN: a partitioned request is a persistent request of kind MPII_REQ_PART (its state,
 * struct mpii_part, hangs off r->extra) built on the library's internal traffic
 * (mpii_lib_isend_dt / irecv_dt on the communicator's library context ctx + 1), in two
 * tag spaces of that context no other traffic uses (mpi_impl.h): negative tags, bit 31 set.
 *   HELLO  tag MPII_TAG_PART_HELLO(user tag): sent once, by MPI_Psend_init (a nonblocking
 *          internal send), carrying {base, partitions, bytes per partition} of the sender.
 *          MPI_Precv_init posts one receive for it, so the engine's matching (earliest
 *          posted receive, non-overtaking per source) pairs the n-th Psend_init to
 *          (dest, tag) with the n-th Precv_init from (source, tag) on that communicator:
 *          the order of the initialization calls (MPI-4.0 4.2.1; MPICH's part/multipart
 *          checks it). The pair stays matched for every start.
 *   DATA   tag MPII_TAG_PART_DATA(base + i): send partition i, one message per ready
 *          partition, posted by MPI_Pready at once (before or after the match: an early
 *          one waits in the receiver's unexpected queue). base is a range of `partitions`
 *          ids the sender takes from a per-process counter at MPI_Psend_init (30 bits,
 *          wrapping: two pairs of one sender collide only when the ids of 2^30 partitions
 *          were handed out while the older pair is alive), so every (sender, id) names one
 *          send partition of one pair; the receiver posts one receive per send partition
 *          and round, and non-overtaking keeps the rounds apart.
 * The two sides' partitionings may differ: only the totals matter. A receive larger than
 * the send takes the send's bytes (status count; Parrived counts only the bytes that come),
 * a smaller one drains the sender's messages and completes with MPI_ERR_TRUNCATE.
 * A sender has at most MPII_PART_INFLIGHT data messages in flight (each rendezvous one
 * holds a memory registration); further ready partitions wait for the hook. Send partition i is
 * bytes [i*sb, (i+1)*sb) of the packed stream; the receiver places it straight into the user buffer
 * (contiguous type: as bytes at that offset; derived type whose element boundaries fall on sb: as
 * elements), else through a staging buffer unpacked by byte offset (dt_unpack), and then adds the
 * byte overlap to each receive partition it covers: MPI_Parrived(j) is true once receive
 * partition j has all its bytes.
 * Progress: a vnic progress hook (armed while a partitioned request is active) takes the
 * receiver's HELLO, posts its data receives, collects finished data messages and
 * completes the request once every send partition is done (hooks may post; handlers may
 * not). MPI_Parrived progresses too. MPI_Cancel of a partitioned request is refused. */
#include <stdlib.h>
#include <string.h>

#include "mpi/p2p_impl.h"

#define MPII_PART_INFLIGHT 64
#define MPII_PART_ID_SPACE 0x3FFFFFFFu /* ids 0 .. 2^30 - 2: DATA tags never are -1 */

typedef struct mpii_part_hello {
    uint64_t base, nparts, pbytes;
} mpii_part_hello_t;

typedef struct mpii_part {
    mpii_link_t link; /* active list while started and not complete */
    mpii_req_t *owner;
    mpii_comm_t *c;
    int recv;
    int nparts;      /* own partitions */
    int64_t pcount;  /* elements per own partition */
    uint64_t pbytes; /* packed bytes per own partition */
    int64_t extent;  /* of the type */
    int64_t esize;   /* packed bytes of one element */
    int matched;     /* recv: the HELLO is in; send: it is sent */
    int mismatch;    /* recv: the sender's total differs: its messages are drained (zero-byte
                      * receives, truncated) and every round completes MPI_ERR_TRUNCATE */
    int err;         /* a protocol error of the pair (sticky) */
    mpii_req_t hello_req;
    mpii_part_hello_t hello;
    /* send partitions (the sender's own; the receiver learns them from the HELLO) */
    int nsend;
    uint64_t sbytes;
    uint32_t base;
    mpii_req_t *sub;      /* [nsend] this round's data messages */
    uint8_t *state;       /* [nsend] 0 idle, 1 posted, 2 finished, 3 ready not posted */
    int inflight, queued; /* send: states 1 and 3 */
    int nfinished;
    int posted;        /* recv: this round's data receives are posted */
    uint64_t *arrived; /* recv: [nparts] bytes in of each receive partition */
    char *stage;       /* recv: staging stream when partitions cut elements */
} mpii_part_t;

static struct {
    mpii_link_t active;
    vnic_t *vnic; /* the hook's vnic (registered at first use) */
    int hook_id;
    uint32_t next_id;
    int stepping; /* inside mpii_part_step: posting may progress, which must not step again */
} part;

static int mpii_part_hook(void *arg);
static void mpii_part_release(mpii_part_t *p);

static void mpii_part_activate(mpii_part_t *p)
{
    if (part.vnic != mpii.vnic) {
        mpii_list_init(&part.active);
        if (vnic_hook_add(mpii.vnic, mpii_part_hook, NULL, 0, &part.hook_id))
            base_fatal("mpi: no progress hook left for partitioned communication");
        part.vnic = mpii.vnic;
    }
    mpii_list_push(&part.active, &p->link);
    vnic_hook_arm(mpii.vnic, part.hook_id, 1);
}

static inline mpii_part_t *mpii_part_of(mpii_req_t *r)
{
    return (mpii_part_t *)r->extra;
}

/* The type handle for an internal request: predefined ones by handle, derived ones by dt
 * only (the user may free the handle). */
static inline MPI_Datatype mpii_part_type(const mpii_req_t *r)
{
    return FMPL_MPI_DT_IS_PREDEF(r->type) ? r->type : MPI_DATATYPE_NULL;
}

/* Posts the data receive of send partition i (receiver, matched). */
static void mpii_part_post_recv(mpii_part_t *p, int i)
{
    mpii_req_t *r = p->owner;
    uint64_t off = (uint64_t)i * p->sbytes;
    int tag = MPII_TAG_PART_DATA(p->base + (uint32_t)i);
    mpii_req_t *s = &p->sub[i];
    if (p->mismatch)
        mpii_lib_irecv(p->c, NULL, 0, MPI_BYTE, r->peer, tag, s);
    else if (r->contig)
        mpii_lib_irecv(p->c, (char *)r->buf + r->lb + off, (int64_t)p->sbytes, MPI_BYTE, r->peer,
                       tag, s);
    else if (!p->stage)
        mpii_lib_irecv_dt(p->c, (char *)r->buf + (int64_t)(off / (uint64_t)p->esize) * p->extent,
                          (int64_t)(p->sbytes / (uint64_t)p->esize), mpii_part_type(r), r->dt,
                          r->peer, tag, s);
    else
        mpii_lib_irecv(p->c, p->stage + off, (int64_t)p->sbytes, MPI_BYTE, r->peer, tag, s);
    p->state[i] = 1;
}

/* Sends partition i (sender, ready). */
static void mpii_part_post_send(mpii_part_t *p, int i)
{
    mpii_req_t *r = p->owner;
    const char *b = (const char *)r->buf + (int64_t)i * p->pcount * p->extent;
    p->state[i] = 1; /* an error shows in the sub request: the request completes with it */
    p->inflight++;
    mpii_lib_isend_dt(p->c, b, p->pcount, mpii_part_type(r), r->dt, r->peer,
                      MPII_TAG_PART_DATA(p->base + (uint32_t)i), &p->sub[i]);
}

static void mpii_part_post_all(mpii_part_t *p)
{
    for (int i = 0; i < p->nsend; i++)
        mpii_part_post_recv(p, i);
    p->posted = 1;
}

/* Allocates the per-send-partition arrays (sender at init, receiver at the match). */
static int mpii_part_arrays(mpii_part_t *p)
{
    size_t n = (size_t)(p->nsend > 0 ? p->nsend : 1);
    p->sub = calloc(n, sizeof *p->sub);
    p->state = calloc(n, 1);
    return p->sub && p->state ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

/* Receiver: the HELLO is in; learns the sender's partitioning. */
static int mpii_part_match(mpii_part_t *p)
{
    mpii_req_t *r = p->owner;
    if (p->hello_req.err)
        return p->hello_req.err;
    if (p->hello_req.st.fmpl_count != (MPI_Count)sizeof p->hello)
        return MPI_ERR_OTHER;
    if (p->hello.nparts > INT32_MAX)
        return MPI_ERR_OTHER;
    p->nsend = (int)p->hello.nparts;
    p->sbytes = p->hello.pbytes;
    p->base = (uint32_t)p->hello.base;
    int rc = mpii_part_arrays(p);
    if (rc)
        return rc;
    p->matched = 1;
    if (p->nsend * p->sbytes > r->bytes) { /* drain every round, complete truncated */
        p->mismatch = 1;
        return MPI_SUCCESS;
    }
    /* Direct placement unless a send partition may cut an element of a derived type. */
    if (!r->contig && p->esize > 0 && p->sbytes % (uint64_t)p->esize != 0) {
        p->stage = malloc(r->bytes ? r->bytes : 1);
        if (!p->stage)
            return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* A data message of send partition i is finished: unpacks it from the stage when there is
 * one and counts its bytes into the receive partitions it covers. */
static void mpii_part_finish(mpii_part_t *p, int i)
{
    mpii_req_t *s = &p->sub[i];
    p->state[i] = 2;
    p->nfinished++;
    if (!p->recv)
        p->inflight--;
    if (p->mismatch)
        s->err = MPI_ERR_TRUNCATE;
    if (s->err && !p->err)
        p->err = s->err;
    if (!p->recv || p->sbytes == 0 || s->err)
        return;
    mpii_req_t *r = p->owner;
    uint64_t a = (uint64_t)i * p->sbytes, b = a + p->sbytes;
    if (p->stage)
        dt_unpack(r->dt, r->count, r->buf, (int64_t)a, (int64_t)p->sbytes, p->stage + a);
    uint64_t rb = p->pbytes;
    for (uint64_t j = a / rb; j < (uint64_t)p->nparts && j * rb < b; j++) {
        uint64_t lo = BASE_MAX(a, j * rb), hi = BASE_MIN(b, (j + 1) * rb);
        p->arrived[j] += hi - lo;
    }
}

static void mpii_part_complete(mpii_part_t *p)
{
    mpii_req_t *r = p->owner;
    mpii_list_del(&p->link);
    r->err = p->err;
    r->st.MPI_ERROR = p->err;
    r->st.fmpl_cancelled = 0;
    if (p->recv) {
        r->st.MPI_SOURCE = r->peer;
        r->st.MPI_TAG = r->tag;
        r->st.fmpl_count = p->err ? 0 : (MPI_Count)(p->nsend * p->sbytes);
    } else {
        mpii_status_empty(&r->st);
        r->st.MPI_ERROR = p->err;
    }
    mpii_req_done(r); /* may free r (and p) when the user freed it */
}

static int mpii_part_step_once(mpii_part_t *p)
{
    int n = 0;
    if (!p->owner) { /* freed, its HELLO was in flight */
        if (!p->hello_req.done)
            return 0;
        mpii_list_del(&p->link);
        mpii_part_release(p);
        return 1;
    }
    if (p->recv && !p->matched && !p->err) {
        if (!p->hello_req.done)
            return 0;
        n++;
        int rc = mpii_part_match(p);
        if (rc) {
            p->err = rc;
            mpii_part_complete(p);
            return n;
        }
    }
    if (p->recv && p->matched && !p->posted) {
        mpii_part_post_all(p);
        n++;
    }
    for (int i = 0; i < p->nsend && p->queued && p->inflight < MPII_PART_INFLIGHT; i++)
        if (p->state[i] == 3) {
            p->queued--;
            mpii_part_post_send(p, i);
            n++;
        }
    for (int i = 0; i < p->nsend; i++)
        if (p->state[i] == 1 && p->sub[i].done) {
            mpii_part_finish(p, i);
            n++;
        }
    int hello_busy = !p->recv && p->hello_req.kind && !p->hello_req.done;
    if (p->nfinished == p->nsend && (p->recv ? p->posted : 1) && !hello_busy) {
        mpii_part_complete(p);
        n++;
    }
    return n;
}

/* Advances p; returns how many things happened. Not re-entered: a receive or send it posts
 * may drive progress (a rendezvous GET waits), whose hook run would post p's receives twice. */
static int mpii_part_step(mpii_part_t *p)
{
    if (part.stepping)
        return 0;
    part.stepping = 1;
    int n = mpii_part_step_once(p); /* may free p */
    part.stepping = 0;
    return n;
}

static int mpii_part_hook(void *arg)
{
    (void)arg;
    int n = 0;
    mpii_link_t *e = part.active.next;
    while (e != &part.active) {
        mpii_link_t *next = e->next;
        n += mpii_part_step(MPII_CONTAINER(e, mpii_part_t, link));
        e = next;
    }
    if (mpii_list_empty(&part.active))
        vnic_hook_arm(mpii.vnic, part.hook_id, 0);
    return n;
}

/* Contract: p2p_impl.h. */
int mpii_part_start(mpii_req_t *r)
{
    mpii_part_t *p = mpii_part_of(r);
    r->done = 0;
    r->err = MPI_SUCCESS;
    p->nfinished = 0;
    p->posted = 0;
    p->inflight = p->queued = 0;
    p->err = 0;
    if (p->state)
        memset(p->state, 0, (size_t)(p->nsend > 0 ? p->nsend : 1));
    if (p->arrived)
        memset(p->arrived, 0, (size_t)p->nparts * sizeof *p->arrived);
    if (r->peer == MPI_PROC_NULL) { /* nothing moves; Pready still checks its arguments */
        mpii_status_empty(&r->st);
        if (p->recv)
            r->st.MPI_SOURCE = MPI_PROC_NULL, r->st.MPI_TAG = MPI_ANY_TAG;
        r->done = 1;
        return MPI_SUCCESS;
    }
    mpii_part_activate(p);
    mpii_part_step(p);
    return MPI_SUCCESS;
}

/* Contract: p2p_impl.h. */
void mpii_part_free(mpii_req_t *r)
{
    mpii_part_t *p = mpii_part_of(r);
    if (!p)
        return;
    r->extra = NULL;
    if (p->hello_req.kind && !p->hello_req.done) {
        if (p->recv) /* freed before its sender's HELLO came: withdraw the receive */
            mpii_p2p_cancel(&p->hello_req);
        if (!p->hello_req.done) { /* still in flight: the hook frees p once it is over */
            p->owner = NULL;
            mpii_part_activate(p);
            return;
        }
    }
    mpii_part_release(p);
}

static void mpii_part_release(mpii_part_t *p)
{
    free(p->sub);
    free(p->state);
    free(p->arrived);
    free(p->stage);
    free(p);
}

/* ------------------------------------------------------------------ init calls */

static int mpii_part_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype type,
                          int peer, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request,
                          int recv, const char *fname)
{
    (void)info; /* no hints are defined for partitioned communication */
    MPII_CHECK_INIT(fname);
    if (!request || partitions < 1 || count < 0 || (int64_t)count > INT64_MAX / partitions)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fname, "%s",
                              !request ? "request is NULL"
                                       : "partitions must be >= 1 and count >= 0");
    if (recv && peer == MPI_ANY_SOURCE)
        return MPII_ERRF_COMM(comm, MPI_ERR_RANK, fname, "%s",
                              "MPI_ANY_SOURCE is not allowed in partitioned communication");
    if (recv && tag == MPI_ANY_TAG)
        return MPII_ERRF_COMM(comm, MPI_ERR_TAG, fname, "%s",
                              "MPI_ANY_TAG is not allowed in partitioned communication");
    if (!recv && (uint32_t)partitions >= MPII_PART_ID_SPACE)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fname, "%s", "too many partitions");
    mpii_req_t *r = mpii_req_alloc();
    mpii_part_t *p = calloc(1, sizeof *p);
    if (!r || !p) {
        free(p);
        if (r)
            mpii_req_free(r);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    }
    int rc = mpii_p2p_args(r, buf, (int64_t)partitions * count, type, peer, tag, comm, recv);
    if (rc) {
        free(p);
        mpii_req_free(r);
        return rc == MPI_ERR_COMM ? MPII_ERR(rc, fname) : MPII_ERR_COMM(comm, rc, fname);
    }
    mpii_comm_t *c = mpii_comm_get(comm);
    r->kind = MPII_REQ_PART;
    r->persistent = 1;
    r->done = 1; /* inactive */
    r->extra = p;
    dt_retain(r->dt);
    c->refs++;
    r->cref = c;
    mpii_list_init(&p->link);
    p->owner = r;
    p->c = c;
    p->recv = recv;
    p->nparts = partitions;
    p->pcount = count;
    p->extent = dt_extent(r->dt);
    p->esize = dt_size(r->dt);
    p->pbytes = (uint64_t)count * (uint64_t)p->esize;
    rc = MPI_SUCCESS;
    if (recv) {
        p->arrived = calloc((size_t)partitions, sizeof *p->arrived);
        if (!p->arrived)
            rc = MPI_ERR_NO_MEM;
    } else {
        if (part.next_id + (uint32_t)partitions >= MPII_PART_ID_SPACE)
            part.next_id = 0;
        p->base = part.next_id;
        part.next_id += (uint32_t)partitions;
        p->nsend = partitions;
        p->sbytes = p->pbytes;
        rc = mpii_part_arrays(p);
    }
    /* The HELLO: matching in the order of the init calls. */
    if (!rc && peer != MPI_PROC_NULL && recv)
        rc = mpii_lib_irecv(c, &p->hello, (int64_t)sizeof p->hello, MPI_BYTE, peer,
                            MPII_TAG_PART_HELLO(tag), &p->hello_req);
    if (!rc && peer != MPI_PROC_NULL && !recv) {
        p->hello = (mpii_part_hello_t){p->base, (uint64_t)p->nparts, p->pbytes};
        rc = mpii_lib_isend(c, &p->hello, (int64_t)sizeof p->hello, MPI_BYTE, peer,
                            MPII_TAG_PART_HELLO(tag), &p->hello_req);
        p->matched = 1;
    }
    if (rc) {
        mpii_req_free(r);
        return MPII_ERR_COMM(comm, rc, fname);
    }
    rc = mpii_req_handle(r, request);
    return rc ? MPII_ERR_COMM(comm, rc, fname) : MPI_SUCCESS;
}

int PMPI_Psend_init(const void *buf, int partitions, MPI_Count count, MPI_Datatype datatype,
                    int dest, int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return mpii_part_init(buf, partitions, count, datatype, dest, tag, comm, info, request, 0,
                          "MPI_Psend_init");
}
MPII_WEAK(MPI_Psend_init, PMPI_Psend_init)

int PMPI_Precv_init(void *buf, int partitions, MPI_Count count, MPI_Datatype datatype, int source,
                    int tag, MPI_Comm comm, MPI_Info info, MPI_Request *request)
{
    return mpii_part_init(buf, partitions, count, datatype, source, tag, comm, info, request, 1,
                          "MPI_Precv_init");
}
MPII_WEAK(MPI_Precv_init, PMPI_Precv_init)

/* ------------------------------------------------------------------ Pready, Parrived */

/* The partitioned request behind h, active, of the wanted side; raises otherwise. */
static int mpii_part_get(MPI_Request h, int recv, mpii_req_t **out, const char *fname)
{
    mpii_req_t *r = mpii_handle_get(FMPL_MPI_KIND_REQUEST, h);
    if (!r || r->kind != MPII_REQ_PART || mpii_part_of(r)->recv != recv)
        return MPII_ERRF(MPI_ERR_REQUEST, fname, "%s",
                         recv ? "not a partitioned receive request"
                              : "not a partitioned send request");
    if (!r->active)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_OTHER, fname, "%s",
                              "the partitioned request is not active (MPI_Start it first)");
    *out = r;
    return MPI_SUCCESS;
}

/* Marks send partition i ready and sends it. */
static int mpii_part_ready_one(mpii_req_t *r, int i, const char *fname)
{
    mpii_part_t *p = mpii_part_of(r);
    if (i < 0 || i >= p->nparts)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_OTHER, fname,
                              "partition %d out of range (the request has %d)", i, p->nparts);
    if (p->state[i])
        return MPII_ERRF_COMM(r->comm, MPI_ERR_OTHER, fname,
                              "partition %d already marked ready in this round", i);
    if (r->peer == MPI_PROC_NULL) {
        p->state[i] = 2;
        return MPI_SUCCESS;
    }
    if (p->inflight < MPII_PART_INFLIGHT) {
        mpii_part_post_send(p, i);
    } else {
        p->state[i] = 3;
        p->queued++;
    }
    return MPI_SUCCESS;
}

int PMPI_Pready(int partition, MPI_Request request)
{
    MPII_CHECK_INIT("MPI_Pready");
    mpii_req_t *r;
    int rc = mpii_part_get(request, 0, &r, "MPI_Pready");
    return rc ? rc : mpii_part_ready_one(r, partition, "MPI_Pready");
}
MPII_WEAK(MPI_Pready, PMPI_Pready)

int PMPI_Pready_range(int partition_low, int partition_high, MPI_Request request)
{
    MPII_CHECK_INIT("MPI_Pready_range");
    mpii_req_t *r;
    int rc = mpii_part_get(request, 0, &r, "MPI_Pready_range");
    if (rc)
        return rc;
    if (partition_low > partition_high)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_OTHER, "MPI_Pready_range",
                              "partition_low %d > partition_high %d", partition_low,
                              partition_high);
    for (int i = partition_low; i <= partition_high; i++)
        if ((rc = mpii_part_ready_one(r, i, "MPI_Pready_range")))
            return rc;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Pready_range, PMPI_Pready_range)

int PMPI_Pready_list(int length, const int array_of_partitions[], MPI_Request request)
{
    MPII_CHECK_INIT("MPI_Pready_list");
    mpii_req_t *r;
    int rc = mpii_part_get(request, 0, &r, "MPI_Pready_list");
    if (rc)
        return rc;
    if (length < 0 || (length > 0 && !array_of_partitions))
        return MPII_ERRF_COMM(r->comm, MPI_ERR_ARG, "MPI_Pready_list", "%s",
                              "length < 0 or array_of_partitions NULL");
    for (int k = 0; k < length; k++)
        if ((rc = mpii_part_ready_one(r, array_of_partitions[k], "MPI_Pready_list")))
            return rc;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Pready_list, PMPI_Pready_list)

int PMPI_Parrived(MPI_Request request, int partition, int *flag)
{
    MPII_CHECK_INIT("MPI_Parrived");
    mpii_req_t *r;
    int rc = mpii_part_get(request, 1, &r, "MPI_Parrived");
    if (rc)
        return rc;
    mpii_part_t *p = mpii_part_of(r);
    if (!flag)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_ARG, "MPI_Parrived", "%s", "flag is NULL");
    if (partition < 0 || partition >= p->nparts)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_OTHER, "MPI_Parrived",
                              "partition %d out of range (the request has %d)", partition,
                              p->nparts);
    if (!r->done)
        mpii_progress();
    uint64_t lo = (uint64_t)partition * p->pbytes, total = p->nsend * p->sbytes;
    uint64_t need = total > lo ? BASE_MIN(p->pbytes, total - lo) : 0;
    *flag = r->done || (p->matched && p->posted && p->arrived[partition] >= need && !p->err);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Parrived, PMPI_Parrived)
