/* file_async.c — the nonblocking data access calls (MPI_File_iread*, iwrite*, including
 * the collective and shared-pointer ones) and the split collectives (*_begin / *_end):
 * the transfer runs while the caller computes and completes in MPI_Test / MPI_Wait (or
 * the _end call).
 *
 * Mechanism: one I/O worker thread per process (started at the first nonblocking call,
 * joined at MPI_Finalize) takes jobs from a FIFO queue and does their file side only:
 * mpii_file_stream_indep (file_io.c), i.e. the view's runs, pread/pwrite, data sieving,
 * atomic mode's fcntl locks. It touches nothing of the library but the job, the file's
 * descriptor and its view (which MPI_File_set_view and MPI_File_close, both required to
 * wait for pending requests, do not change before the file's jobs are drained: see
 * mpii_file_async_drain). Everything else stays on the calling thread, as the rest of
 * the MPI layer expects: the memory side (packing a write's stream at the call,
 * unpacking a read's at completion, datarep conversions) and the request.
 *
 * Completion fits the progress model: a vnic progress hook, armed while jobs are
 * outstanding, finds the jobs the worker finished (an atomic count says when to look)
 * and completes their requests; so MPI_Test, MPI_Wait and every other wait complete
 * them. The worker wakes the process when it sleeps in vnic_wait (vnic_peer_wake on
 * itself; over the udp transport alone the sleep ends after FMPL_SLEEP_US instead).
 * POSIX AIO was not chosen: glibc implements it with threads anyway, without our view
 * runs or locks; io_uring needs liburing and a recent kernel.
 *
 * The requests are generalized requests (request.c) whose errors are raised on the
 * file's error handler (mpii_req_t.errobj), as MPI-4.0 14.7 says for I/O. Argument
 * errors of an independent call are raised at the call; errors of the transfer (a full
 * disk, EFBIG, EIO...) at completion, with the status counting the bytes that moved.
 * MPI_Cancel cancels a job the worker has not started (the status then says cancelled,
 * nothing moved; a shared or individual file pointer keeps its update, which the
 * standard makes at the call); a job already running, and a collective one, completes
 * normally.
 *
 * Collective calls (iread_all, iwrite_all, iread_at_all, the split collectives): the
 * call is local, as a nonblocking collective's initiation is. Each process checks its
 * arguments and queues its own part of the transfer (no two-phase exchange, which would
 * need every process at once; the bytes written and read are the same). When its part
 * is done, it contributes its class (the argument check's, else the transfer's) to an
 * MPI_Iallreduce (MAX) on the file's communicator, and the request completes when that
 * agreement is in. The agreements start in the background, so a blocking collective
 * call on the same file first waits for the file's pending requests
 * (mpii_file_async_drain): its own collectives never interleave with theirs. So, as
 * with the blocking collectives: when the request completes on
 * one process, every process's part is done (a read_all after a completed write_all
 * sees its data), and the class is the same on every process. A process with bad
 * arguments transfers nothing (the others' parts are not undone: the call fails on every
 * process with the largest class, the statuses count what each process moved).
 *
 * Individual file pointers move by the amount requested at the call (MPI-4.0 14.4.3). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/file_impl.h"
#include "mpi/p2p_impl.h"
#include "mpi/tool_event.h"

enum { JOB_QUEUED = 0, JOB_RUNNING, JOB_DONE, JOB_CANCELLED };

typedef struct aio_job {
    struct aio_job *qnext;       /* the worker's queue */
    struct aio_job *prev, *next; /* the outstanding list (calling thread) */
    mpii_file_t *f;
    int write, coll, cancellable;
    int64_t pos, n; /* stream bytes [pos, pos + n) of the view */
    char *stream;   /* the user buffer or a packed copy (owned) */
    int owned;
    void *buf;
    int64_t count;
    MPI_Datatype type; /* the caller's, or a duplicate of a derived one (type_dup) */
    int type_dup;
    int state;         /* JOB_*: the worker moves QUEUED -> RUNNING -> DONE */
    int io_cls;        /* the transfer's class (worker) */
    int64_t io_done;   /* stream bytes moved (worker) */
    MPI_Request agree; /* collective: the agreement (agree_start) */
    int agree_cls;     /* its buffer */
    int agree_started;
    mpii_req_t *req; /* the user's request */
    MPI_Status st;   /* the outcome, for the query function */
    int rc;
} aio_job_t;

static struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    aio_job_t *head, *tail; /* queue (mu) */
    int stop;               /* (mu) */
    int started;
    pthread_t thread;
    int ndone;            /* jobs finished by the worker, not yet seen (atomic) */
    aio_job_t out;        /* outstanding jobs: sentinel of a circular list */
    int nout;             /* outstanding jobs */
    int ncoll;            /* of which collective */
    int hook_id, hook_on; /* the progress hook (registered at the first job) */
} aio = {.mu = PTHREAD_MUTEX_INITIALIZER, .cv = PTHREAD_COND_INITIALIZER};

/* ---------------------------------------------------------------- the worker */

static void *aio_worker(void *arg)
{
    (void)arg;
    int me = vnic_rank(mpii.vnic);
    for (;;) {
        pthread_mutex_lock(&aio.mu);
        while (!aio.head && !aio.stop)
            pthread_cond_wait(&aio.cv, &aio.mu);
        aio_job_t *j = aio.head;
        if (!j) {
            pthread_mutex_unlock(&aio.mu);
            return NULL;
        }
        aio.head = j->qnext;
        if (!aio.head)
            aio.tail = NULL;
        __atomic_store_n(&j->state, JOB_RUNNING, __ATOMIC_RELAXED);
        pthread_mutex_unlock(&aio.mu);
        j->io_cls = mpii_file_stream_indep(j->f, j->write, j->pos, j->stream, j->n, &j->io_done);
        __atomic_store_n(&j->state, JOB_DONE, __ATOMIC_RELEASE);
        __atomic_fetch_add(&aio.ndone, 1, __ATOMIC_SEQ_CST);
        vnic_peer_wake(mpii.vnic, me); /* the calling thread may sleep in vnic_wait */
    }
}

/* ---------------------------------------------------------------- completion */

static int job_query(void *extra, MPI_Status *status)
{
    aio_job_t *j = extra;
    *status = j->st;
    status->MPI_ERROR = j->rc;
    return j->rc;
}

static int job_free(void *extra)
{
    free(extra);
    return MPI_SUCCESS;
}

static void out_del(aio_job_t *j)
{
    j->prev->next = j->next;
    j->next->prev = j->prev;
    j->prev = j->next = j;
    if (--aio.nout == 0 && aio.hook_on)
        vnic_hook_arm(mpii.vnic, aio.hook_id, 0);
}

/* The calling thread's end of a job (done or cancelled): the memory side, the status,
 * the request. */
static void job_finish(aio_job_t *j, int cancelled)
{
    out_del(j);
    int cls = j->coll ? j->agree_cls : j->io_cls;
    int64_t moved = cancelled ? 0 : j->io_done;
    if (j->coll)
        aio.ncoll--;
    if (j->write) {
        if (j->owned)
            free(j->stream);
    } else if (j->owned) {
        int c2 = mpii_file_stream_in_done(j->f, j->buf, j->count, j->type, moved, j->stream, 1);
        if (cls == MPI_SUCCESS)
            cls = c2;
    }
    j->stream = NULL;
    memset(&j->st, 0, sizeof j->st);
    mpii_file_status(j->f, &j->st, j->type, moved);
    j->st.fmpl_cancelled = cancelled;
    j->rc = cls;
    if (MPII_EVENT_ON(MPII_EV_IO_DONE)) {
        mpii_ev_io_done_t e = {j->write, cls, moved, j->pos};
        mpii_tool_event_raise(MPII_EV_IO_DONE, &e);
    }
    if (j->type_dup)
        PMPI_Type_free(&j->type);
    j->type_dup = 0;
    mpii_req_done(j->req);
}

/* A collective job's agreement: an Iallreduce (MAX) of its class (the argument check's,
 * or else the transfer's) over the file's communicator (when it cannot start, the job
 * completes with MPI_ERR_INTERN). */
static void agree_start(aio_job_t *j)
{
    j->agree_started = 1;
    j->agree_cls = j->io_cls;
    if (PMPI_Iallreduce(MPI_IN_PLACE, &j->agree_cls, 1, MPI_INT, MPI_MAX, j->f->comm, &j->agree) ==
        MPI_SUCCESS)
        return;
    j->agree = MPI_REQUEST_NULL;
    j->agree_cls = MPI_ERR_INTERN;
}

/* 1 when j can complete: transferred, and a collective's agreement is in. */
static int job_ready(aio_job_t *j)
{
    if (__atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != JOB_DONE)
        return 0;
    if (!j->coll || j->agree == MPI_REQUEST_NULL)
        return 1;
    mpii_req_t *r = mpii_handle_get(FMPL_MPI_KIND_REQUEST, j->agree);
    if (r && !r->done)
        return 0;
    if (PMPI_Wait(&j->agree, MPI_STATUS_IGNORE) != MPI_SUCCESS && j->agree_cls == MPI_SUCCESS)
        j->agree_cls = MPI_ERR_INTERN;
    return 1;
}

/* Completes the jobs that are ready. Collective jobs start their agreements in the order
 * they were called (the order of the outstanding list), each once its own transfer is
 * done: every process then starts the collectives on a file in the same order, and the
 * one FIFO worker finishes transfers in that order too. */
static int aio_hook(void *arg)
{
    (void)arg;
    if (aio.ncoll == 0 && __atomic_load_n(&aio.ndone, __ATOMIC_ACQUIRE) == 0)
        return 0;
    (void)__atomic_exchange_n(&aio.ndone, 0, __ATOMIC_SEQ_CST); /* reads the worker's adds */
    int n = 0, blocked = 0;
    for (aio_job_t *j = aio.out.next, *next; j != &aio.out; j = next) {
        next = j->next;
        if (j->coll && !j->agree_started) {
            if (blocked || __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) != JOB_DONE) {
                blocked = 1;
                continue;
            }
            agree_start(j);
            n++;
        }
        if (job_ready(j)) {
            job_finish(j, 0);
            n++;
        }
    }
    return n;
}

static int job_cancel(void *extra, int complete)
{
    aio_job_t *j = extra;
    if (complete || !j->cancellable)
        return MPI_SUCCESS;
    pthread_mutex_lock(&aio.mu);
    int taken = __atomic_load_n(&j->state, __ATOMIC_ACQUIRE) == JOB_QUEUED;
    if (taken) {
        aio_job_t **p = &aio.head, *last = NULL;
        while (*p && *p != j) {
            last = *p;
            p = &(*p)->qnext;
        }
        if (*p) {
            *p = j->qnext;
            if (aio.tail == j)
                aio.tail = last;
        }
        __atomic_store_n(&j->state, JOB_CANCELLED, __ATOMIC_RELAXED);
    }
    pthread_mutex_unlock(&aio.mu);
    if (taken) {
        j->io_cls = MPI_SUCCESS;
        job_finish(j, 1);
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- start */

static int aio_setup(void)
{
    if (!aio.hook_on) {
        aio.out.prev = aio.out.next = &aio.out;
        if (vnic_hook_add(mpii.vnic, aio_hook, NULL, 0, &aio.hook_id) != FMPL_SUCCESS)
            return MPI_ERR_INTERN;
        aio.hook_on = 1;
    }
    if (!aio.started) {
        aio.stop = 0;
        if (pthread_create(&aio.thread, NULL, aio_worker, NULL) != 0)
            return MPI_ERR_NO_MEM;
        aio.started = 1;
    }
    return MPI_SUCCESS;
}

int mpii_file_async_start(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                          MPI_Datatype type, int coll, int lcls, int cancellable,
                          MPI_Request *request)
{
    if (!coll && lcls != MPI_SUCCESS)
        return lcls;
    int rc = aio_setup();
    if (rc != MPI_SUCCESS)
        return rc;
    aio_job_t *j = calloc(1, sizeof *j);
    if (!j)
        return MPI_ERR_NO_MEM;
    j->f = f;
    j->write = write;
    j->coll = coll;
    j->cancellable = cancellable && !coll;
    j->pos = pos;
    j->buf = buf;
    j->count = count;
    j->type = type;
    j->agree = MPI_REQUEST_NULL;
    int cls = lcls;
    if (cls == MPI_SUCCESS)
        j->n = mpii_file_data_size(f, type, count, &cls);
    if (cls == MPI_SUCCESS) {
        if (write)
            cls = mpii_file_stream_out(f, buf, count, type, j->n, (const char **)&j->stream,
                                       &j->owned);
        else
            cls = mpii_file_stream_in_buf(f, buf, count, type, j->n, &j->stream, &j->owned);
    }
    if (cls == MPI_SUCCESS && !FMPL_MPI_DT_IS_PREDEF(type)) {
        /* the caller may free its datatype before the request completes */
        cls = PMPI_Type_dup(type, &j->type) == MPI_SUCCESS ? MPI_SUCCESS : MPI_ERR_NO_MEM;
        j->type_dup = cls == MPI_SUCCESS;
        if (cls != MPI_SUCCESS)
            j->type = type;
    }
    if (cls != MPI_SUCCESS && !coll) {
        if (j->owned)
            free(j->stream);
        free(j);
        return cls;
    }
    MPI_Request h;
    rc = PMPI_Grequest_start(job_query, job_free, job_cancel, j, &h);
    if (rc != MPI_SUCCESS) {
        if (j->owned)
            free(j->stream);
        if (j->type_dup)
            PMPI_Type_free(&j->type);
        free(j);
        return rc;
    }
    j->req = mpii_handle_get(FMPL_MPI_KIND_REQUEST, h);
    j->req->errobj = f->handle;
    j->prev = aio.out.prev;
    j->next = &aio.out;
    aio.out.prev->next = j;
    aio.out.prev = j;
    if (aio.nout++ == 0)
        vnic_hook_arm(mpii.vnic, aio.hook_id, 1);
    aio.ncoll += coll;
    if (cls != MPI_SUCCESS || j->n == 0) {
        /* nothing to transfer (or a collective whose arguments failed here) */
        j->io_cls = cls;
        j->state = JOB_DONE;
        __atomic_fetch_add(&aio.ndone, 1, __ATOMIC_SEQ_CST);
    } else {
        pthread_mutex_lock(&aio.mu);
        if (aio.tail)
            aio.tail->qnext = j;
        else
            aio.head = j;
        aio.tail = j;
        pthread_cond_signal(&aio.cv);
        pthread_mutex_unlock(&aio.mu);
    }
    *request = h;
    return MPI_SUCCESS;
}

int mpii_file_async_finish(MPI_Request *request, MPI_Status *status)
{
    mpii_req_t *r = mpii_handle_get(FMPL_MPI_KIND_REQUEST, *request);
    if (!r)
        return MPI_ERR_REQUEST;
    mpii_req_wait(r);
    aio_job_t *j = r->extra;
    if (status && status != MPI_STATUS_IGNORE)
        *status = j->st;
    int rc = j->rc;
    r->errobj = 0;
    PMPI_Request_free(request); /* complete: frees the job */
    return rc;
}

/* ---------------------------------------------------------------- drain, finalize */

typedef struct drain_arg {
    const mpii_file_t *f;
} drain_arg_t;

static int drain_ready(void *arg)
{
    const drain_arg_t *d = arg;
    for (aio_job_t *j = aio.out.next; j != &aio.out; j = j->next)
        if (j->f == d->f)
            return 0;
    return 1;
}

void mpii_file_async_drain(const mpii_file_t *f)
{
    if (!aio.hook_on || aio.nout == 0)
        return;
    drain_arg_t d = {f};
    vnic_wait(mpii.vnic, drain_ready, &d, -1);
}

void mpii_file_async_finalize(void)
{
    if (aio.started) {
        pthread_mutex_lock(&aio.mu);
        aio.stop = 1;
        pthread_cond_broadcast(&aio.cv);
        pthread_mutex_unlock(&aio.mu);
        pthread_join(aio.thread, NULL);
        aio.started = 0;
    }
    if (aio.hook_on) {
        vnic_hook_remove(mpii.vnic, aio.hook_id);
        aio.hook_on = 0;
    }
    aio.nout = aio.ncoll = 0;
    aio.ndone = 0;
    aio.head = aio.tail = NULL;
}
