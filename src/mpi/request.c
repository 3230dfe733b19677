/* request.c — MPI requests: a pool of request objects behind FMPL_MPI_KIND_REQUEST
 * handles; completion (Wait/Test and their any/all/some forms), Request_free,
 * Request_get_status, Cancel, persistent Start/Startall and generalized requests.
 *
 * A collective's request is completed by its schedule's run. MPI_Wait on it takes the run
 * off the schedule engine's progress hook and advances it alone (coll_sched_wait: one
 * advance per poll, as a blocking call's); MPI_Waitall / Waitany / Waitsome / Testall
 * leave the runs to the hook and only read the requests' done flags: the hook walks just
 * the running runs, and advancing them from the wait's check instead cost more
 * instructions per poll for no gain (docs/performance.md, "MPI_Comm_idup with
 * mailboxes"). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

#define MPII_REQ_SLAB 64

mpii_link_t mpii_req_pool;
static struct {
    void **slabs;
    int nslabs;
    int init;
} rq;

#ifdef FMPL_CHECKED
/* The checked build (FMPL_SANITIZE) proves the rule of mpii_req_t's tail: a path that
 * wrote a SEND's or RECV's tail without mpii_req_tail left it nonzero in the free list. */
static void tail_check(const mpii_req_t *r)
{
    const unsigned char *p = (const unsigned char *)r;
    for (size_t i = MPII_REQ_TAIL; i < sizeof *r; i++)
        if (p[i]) {
            fprintf(stderr,
                    "fmpl: internal error: byte %zu of a free request is %d, not 0 (a SEND "
                    "or RECV wrote its tail without mpii_req_tail)\n",
                    i, p[i]);
            abort();
        }
}
#endif

mpii_req_t *mpii_req_alloc(void)
{
    if (BASE_UNLIKELY(!rq.init)) {
        mpii_list_init(&mpii_req_pool);
        rq.init = 1;
    }
    if (BASE_UNLIKELY(mpii_list_empty(&mpii_req_pool))) {
        /* line-aligned: the head's zeroing touches no line of the tail beyond the one
         * they share */
        mpii_req_t *slab = aligned_alloc(BASE_CACHE_LINE, MPII_REQ_SLAB * sizeof *slab);
        void **s = realloc(rq.slabs, (size_t)(rq.nslabs + 1) * sizeof *s);
        if (!slab || !s) {
            free(slab);
            if (s)
                rq.slabs = s;
            return NULL;
        }
        memset(slab, 0, MPII_REQ_SLAB * sizeof *slab);
        rq.slabs = s;
        rq.slabs[rq.nslabs++] = slab;
        for (int i = 0; i < MPII_REQ_SLAB; i++)
            mpii_list_push(&mpii_req_pool, &slab[i].link);
    }
#ifdef FMPL_CHECKED
    tail_check(MPII_CONTAINER(mpii_req_pool.next, mpii_req_t, link));
#endif
    return mpii_req_pop();
}

void mpii_req_free(mpii_req_t *r)
{
    if (r->kind == MPII_REQ_COMPOUND)
        mpii_compound_free(r);
    if (r->kind == MPII_REQ_COLL)
        mpii_sched_req_free(r);
    if (r->kind == MPII_REQ_PART)
        mpii_part_free(r);
    if (r->bsub)
        r->bsub->bowner = NULL;
    if (r->bowner)
        r->bowner->bsub = NULL;
    if (r->handle != MPI_REQUEST_NULL)
        mpii_handle_del(FMPL_MPI_KIND_REQUEST, r->handle);
    if (r->kind != MPII_REQ_GREQ && !FMPL_MPI_DT_IS_PREDEF(r->type)) /* (those are immortal) */
        dt_release(r->dt);
    r->dt = NULL;
    if (r->cref) { /* a user request keeps its communicator alive (MPI_Comm_free) */
        mpii_comm_release(r->cref);
        r->cref = NULL;
    }
    r->handle = MPI_REQUEST_NULL;
    if (r->tail_used || (r->kind != MPII_REQ_SEND && r->kind != MPII_REQ_RECV))
        base_zero((char *)r + MPII_REQ_TAIL, sizeof *r - MPII_REQ_TAIL);
    mpii_list_push(&mpii_req_pool, &r->link);
}

/* mpii_req_done's rare part: the user freed r already, or r is part of a compound. */
void mpii_req_done_more(mpii_req_t *r)
{
    mpii_req_t *parent = r->parent; /* a part of a compound request */
    if (r->user_freed) {
        if (r->kind == MPII_REQ_GREQ && r->free_fn)
            r->free_fn(r->extra);
        mpii_req_free(r);
    }
    if (parent)
        mpii_compound_part_done(parent);
}

static int mpii_req_ready(void *arg)
{
    mpii_req_t *r = arg;
    if (r->run && !r->done) /* a collective: move its schedule on directly */
        coll_sched_poll(r->run);
    return r->done;
}

void mpii_req_wait(mpii_req_t *r)
{
    if (r->done)
        return;
    if (r->run && coll_sched_wait(r->run) == 0 && r->done)
        return; /* a collective's run, polled by this wait alone */
    vnic_wait(mpii.vnic, mpii_req_ready, r, -1);
}

void mpii_status_empty(MPI_Status *st)
{
    st->MPI_SOURCE = MPI_ANY_SOURCE;
    st->MPI_TAG = MPI_ANY_TAG;
    st->MPI_ERROR = MPI_SUCCESS;
    st->fmpl_cancelled = 0;
    st->fmpl_count = 0;
}

void mpii_req_finalize(void)
{
    for (int i = 0; i < rq.nslabs; i++)
        free(rq.slabs[i]);
    free(rq.slabs);
    memset(&rq, 0, sizeof rq);
    memset(&mpii_req_pool, 0, sizeof mpii_req_pool);
}

/* ------------------------------------------------------------------ completion */

static inline mpii_req_t *mpii_req_get(MPI_Request h)
{
    return (mpii_req_t *)mpii_handle_get(FMPL_MPI_KIND_REQUEST, h);
}

/* 1 when the request in *h takes part in a completion call (not null, not inactive). */
static inline int mpii_req_live(const mpii_req_t *r)
{
    return r && (!r->persistent || r->active);
}

static inline void mpii_put_status(MPI_Status *out, const MPI_Status *st)
{
    if (out != MPI_STATUS_IGNORE && out != MPI_STATUSES_IGNORE) {
        out->MPI_SOURCE = st->MPI_SOURCE;
        out->MPI_TAG = st->MPI_TAG;
        out->fmpl_cancelled = st->fmpl_cancelled;
        out->fmpl_count = st->fmpl_count;
    }
}

/* Completes the finished request behind *h for the user: status out, request freed or
 * made inactive, *h updated. Returns the operation's error class. */
static int mpii_req_collect(MPI_Request *h, mpii_req_t *r, MPI_Status *status)
{
    int err = r->err;
    if (r->kind == MPII_REQ_GREQ) {
        MPI_Status st;
        mpii_status_empty(&st);
        if (r->query_fn)
            err = r->query_fn(r->extra, &st);
        mpii_put_status(status, &st);
        if (status != MPI_STATUS_IGNORE && status != MPI_STATUSES_IGNORE)
            status->MPI_ERROR = st.MPI_ERROR;
        if (err == MPI_SUCCESS && r->free_fn)
            err = r->free_fn(r->extra);
        else if (r->free_fn)
            r->free_fn(r->extra);
        mpii_req_free(r);
        *h = MPI_REQUEST_NULL;
        return err;
    }
    mpii_put_status(status, &r->st);
    if (r->persistent) {
        r->active = 0;
    } else {
        mpii_req_free(r);
        *h = MPI_REQUEST_NULL;
    }
    return err;
}

static void mpii_status_out_empty(MPI_Status *status)
{
    if (status != MPI_STATUS_IGNORE && status != MPI_STATUSES_IGNORE) {
        int e = status->MPI_ERROR;
        mpii_status_empty(status);
        status->MPI_ERROR = e;
    }
}

/* The handle whose error handler reports r's error: a communicator, or a file for an
 * MPI-IO request (file_async.c). */
static int mpii_req_errcomm(const mpii_req_t *r)
{
    if (r->errobj)
        return r->errobj;
    return r->kind == MPII_REQ_GREQ ? MPI_COMM_WORLD : r->comm;
}
/* Raises code on the object mpii_req_errcomm named (its kind is in the handle). */
#define MPII_ERR_REQOBJ(h, code, fname) mpii_err(FMPL_MPI_HANDLE_KIND(h), (h), (code), (fname))

int PMPI_Wait(MPI_Request *request, MPI_Status *status)
{
    MPII_CHECK_INIT("MPI_Wait");
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Wait");
    if (*request == MPI_REQUEST_NULL) {
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    mpii_req_t *r = mpii_req_get(*request);
    if (!r)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Wait");
    if (!mpii_req_live(r)) {
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    mpii_req_wait(r);
    int comm = mpii_req_errcomm(r);
    int err = mpii_req_collect(request, r, status);
    return err ? MPII_ERR_REQOBJ(comm, err, "MPI_Wait") : MPI_SUCCESS;
}
MPII_WEAK(MPI_Wait, PMPI_Wait)

int PMPI_Test(MPI_Request *request, int *flag, MPI_Status *status)
{
    MPII_CHECK_INIT("MPI_Test");
    if (!request || !flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Test");
    if (*request == MPI_REQUEST_NULL) {
        *flag = 1;
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    mpii_req_t *r = mpii_req_get(*request);
    if (!r)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Test");
    if (!mpii_req_live(r)) {
        *flag = 1;
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->done)
        mpii_progress();
    *flag = r->done;
    if (!r->done)
        return MPI_SUCCESS;
    int comm = mpii_req_errcomm(r);
    int err = mpii_req_collect(request, r, status);
    return err ? MPII_ERR_REQOBJ(comm, err, "MPI_Test") : MPI_SUCCESS;
}
MPII_WEAK(MPI_Test, PMPI_Test)

/* Validates an array of requests for fname: MPI_SUCCESS, or the error raised (what is wrong
 * named: MPI_ERR_COUNT, MPI_ERR_ARG for a NULL array, MPI_ERR_REQUEST). */
static int mpii_reqs_check(int count, const MPI_Request reqs[], const char *fname)
{
    if (count < 0)
        return MPII_ERRF(MPI_ERR_COUNT, fname, "count %d < 0", count);
    if (count > 0 && !reqs)
        return MPII_ERRF(MPI_ERR_ARG, fname, "array of requests NULL with count %d", count);
    for (int i = 0; i < count; i++)
        if (reqs[i] != MPI_REQUEST_NULL && !mpii_req_get(reqs[i]))
            return MPII_ERRF(MPI_ERR_REQUEST, fname, "requests[%d] = %#x is not a request", i,
                             (unsigned)reqs[i]);
    return MPI_SUCCESS;
}

typedef struct mpii_any {
    int count;
    MPI_Request *reqs;
    int found; /* index of a done live request, -1 none; -2: no live request at all */
} mpii_any_t;

static int mpii_any_ready(void *arg)
{
    mpii_any_t *a = arg;
    int live = 0;
    for (int i = 0; i < a->count; i++) {
        mpii_req_t *r = mpii_req_get(a->reqs[i]);
        if (!mpii_req_live(r))
            continue;
        live = 1;
        if (r->done) {
            a->found = i;
            return 1;
        }
    }
    a->found = live ? -1 : -2;
    return !live;
}

static int mpii_anyone(int count, MPI_Request reqs[], int *index, int *flag, MPI_Status *status,
                       int block, const char *fname)
{
    MPII_CHECK_INIT(fname);
    int rc = mpii_reqs_check(count, reqs, fname);
    if (rc)
        return rc;
    if (!index || (!block && !flag))
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_any_t a = {count, reqs, -1};
    if (block) {
        vnic_wait(mpii.vnic, mpii_any_ready, &a, -1);
    } else if (!mpii_any_ready(&a)) {
        mpii_progress();
        mpii_any_ready(&a);
    }
    if (a.found == -2) {
        if (flag)
            *flag = 1;
        *index = MPI_UNDEFINED;
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    if (a.found < 0) {
        *flag = 0;
        *index = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    if (flag)
        *flag = 1;
    *index = a.found;
    mpii_req_t *r = mpii_req_get(reqs[a.found]);
    int comm = mpii_req_errcomm(r);
    int err = mpii_req_collect(&reqs[a.found], r, status);
    return err ? MPII_ERR_REQOBJ(comm, err, fname) : MPI_SUCCESS;
}

int PMPI_Waitany(int count, MPI_Request array_of_requests[], int *index, MPI_Status *status)
{
    return mpii_anyone(count, array_of_requests, index, NULL, status, 1, "MPI_Waitany");
}
MPII_WEAK(MPI_Waitany, PMPI_Waitany)

int PMPI_Testany(int count, MPI_Request array_of_requests[], int *index, int *flag,
                 MPI_Status *status)
{
    return mpii_anyone(count, array_of_requests, index, flag, status, 0, "MPI_Testany");
}
MPII_WEAK(MPI_Testany, PMPI_Testany)

typedef struct mpii_all {
    int count;
    MPI_Request *reqs;
    int first; /* requests below it are done (a done request stays done until collected) */
} mpii_all_t;

/* 1 when every request of a is done. Each poll resumes at the first one not yet seen
 * done: a window of n requests completing in order costs n checks in all, not n^2. */
static int mpii_all_ready(void *arg)
{
    mpii_all_t *a = arg;
    for (int i = a->first; i < a->count; i++) {
        mpii_req_t *r = mpii_req_get(a->reqs[i]);
        if (mpii_req_live(r) && !r->done) {
            a->first = i;
            return 0;
        }
    }
    a->first = a->count;
    return 1;
}

/* Status i of an array argument. MPI_STATUS_IGNORE passed for the array (erroneous, but
 * common, and MPICH and Open MPI define the two alike) is taken as MPI_STATUSES_IGNORE. */
static inline MPI_Status *mpii_status_at(MPI_Status *arr, int i)
{
    return arr == MPI_STATUSES_IGNORE || arr == MPI_STATUS_IGNORE ? MPI_STATUS_IGNORE : &arr[i];
}

/* Collects every done request of reqs (all of them for Waitall/Testall); the error rules
 * of MPI-4.0 3.7.5: on any error, MPI_ERR_IN_STATUS with each status's MPI_ERROR set. */
static int mpii_collect_all(int count, MPI_Request reqs[], MPI_Status *sts, const char *fname)
{
    int any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < count; i++) {
        MPI_Status *st = mpii_status_at(sts, i);
        mpii_req_t *r = reqs[i] == MPI_REQUEST_NULL ? NULL : mpii_req_get(reqs[i]);
        int err = MPI_SUCCESS;
        if (!mpii_req_live(r)) {
            mpii_status_out_empty(st);
        } else {
            int c = mpii_req_errcomm(r);
            err = mpii_req_collect(&reqs[i], r, st);
            if (err && !any_err) {
                any_err = 1;
                comm = c;
            }
        }
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
    }
    return any_err ? MPII_ERR_REQOBJ(comm, MPI_ERR_IN_STATUS, fname) : MPI_SUCCESS;
}

int PMPI_Waitall(int count, MPI_Request array_of_requests[], MPI_Status array_of_statuses[])
{
    MPII_CHECK_INIT("MPI_Waitall");
    int rc = mpii_reqs_check(count, array_of_requests, "MPI_Waitall");
    if (rc)
        return rc;
    mpii_all_t a = {count, array_of_requests, 0};
    vnic_wait(mpii.vnic, mpii_all_ready, &a, -1);
    return mpii_collect_all(count, array_of_requests, array_of_statuses, "MPI_Waitall");
}
MPII_WEAK(MPI_Waitall, PMPI_Waitall)

int PMPI_Testall(int count, MPI_Request array_of_requests[], int *flag,
                 MPI_Status array_of_statuses[])
{
    MPII_CHECK_INIT("MPI_Testall");
    int rc = mpii_reqs_check(count, array_of_requests, "MPI_Testall");
    if (rc)
        return rc;
    if (!flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Testall");
    mpii_all_t a = {count, array_of_requests, 0};
    if (!mpii_all_ready(&a))
        mpii_progress();
    *flag = mpii_all_ready(&a);
    if (!*flag)
        return MPI_SUCCESS;
    return mpii_collect_all(count, array_of_requests, array_of_statuses, "MPI_Testall");
}
MPII_WEAK(MPI_Testall, PMPI_Testall)

static int mpii_some(int incount, MPI_Request reqs[], int *outcount, int indices[], MPI_Status *sts,
                     int block, const char *fname)
{
    MPII_CHECK_INIT(fname);
    int rc = mpii_reqs_check(incount, reqs, fname);
    if (rc)
        return rc;
    if (!outcount || (incount > 0 && !indices))
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_any_t a = {incount, reqs, -1};
    if (block)
        vnic_wait(mpii.vnic, mpii_any_ready, &a, -1);
    else if (!mpii_any_ready(&a)) {
        mpii_progress();
        mpii_any_ready(&a);
    }
    if (a.found == -2) {
        *outcount = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int n = 0, any_err = 0, comm = MPI_COMM_WORLD;
    for (int i = 0; i < incount; i++) {
        mpii_req_t *r = mpii_req_get(reqs[i]);
        if (!mpii_req_live(r) || !r->done)
            continue;
        MPI_Status *st = mpii_status_at(sts, n);
        int c = mpii_req_errcomm(r);
        int err = mpii_req_collect(&reqs[i], r, st);
        if (st != MPI_STATUS_IGNORE)
            st->MPI_ERROR = err;
        if (err && !any_err) {
            any_err = 1;
            comm = c;
        }
        indices[n++] = i;
    }
    *outcount = n;
    return any_err ? MPII_ERR_REQOBJ(comm, MPI_ERR_IN_STATUS, fname) : MPI_SUCCESS;
}

int PMPI_Waitsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return mpii_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 1,
                     "MPI_Waitsome");
}
MPII_WEAK(MPI_Waitsome, PMPI_Waitsome)

int PMPI_Testsome(int incount, MPI_Request array_of_requests[], int *outcount,
                  int array_of_indices[], MPI_Status array_of_statuses[])
{
    return mpii_some(incount, array_of_requests, outcount, array_of_indices, array_of_statuses, 0,
                     "MPI_Testsome");
}
MPII_WEAK(MPI_Testsome, PMPI_Testsome)

int PMPI_Request_get_status(MPI_Request request, int *flag, MPI_Status *status)
{
    MPII_CHECK_INIT("MPI_Request_get_status");
    if (!flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Request_get_status");
    mpii_req_t *r = request == MPI_REQUEST_NULL ? NULL : mpii_req_get(request);
    if (request != MPI_REQUEST_NULL && !r)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Request_get_status");
    if (!mpii_req_live(r)) {
        *flag = 1;
        mpii_status_out_empty(status);
        return MPI_SUCCESS;
    }
    if (!r->done)
        mpii_progress();
    *flag = r->done;
    if (!r->done)
        return MPI_SUCCESS;
    if (r->kind == MPII_REQ_GREQ) {
        MPI_Status st;
        mpii_status_empty(&st);
        int err = r->query_fn ? r->query_fn(r->extra, &st) : MPI_SUCCESS;
        mpii_put_status(status, &st);
        return err ? MPII_ERR_REQOBJ(mpii_req_errcomm(r), err, "MPI_Request_get_status")
                   : MPI_SUCCESS;
    }
    mpii_put_status(status, &r->st);
    return r->err ? MPII_ERR_COMM(r->comm, r->err, "MPI_Request_get_status") : MPI_SUCCESS;
}
MPII_WEAK(MPI_Request_get_status, PMPI_Request_get_status)

int PMPI_Request_free(MPI_Request *request)
{
    MPII_CHECK_INIT("MPI_Request_free");
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Request_free");
    mpii_req_t *r = mpii_req_get(*request);
    if (!r)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Request_free");
    *request = MPI_REQUEST_NULL;
    if (r->kind == MPII_REQ_GREQ && !r->done) {
        r->user_freed = 1; /* the handle stays valid for MPI_Grequest_complete */
        return MPI_SUCCESS;
    }
    mpii_handle_del(FMPL_MPI_KIND_REQUEST, r->handle);
    r->handle = MPI_REQUEST_NULL;
    if (r->persistent && !r->active) {
        mpii_req_free(r);
        return MPI_SUCCESS;
    }
    if (r->done) {
        if (r->kind == MPII_REQ_GREQ && r->free_fn)
            r->free_fn(r->extra);
        mpii_req_free(r);
        return MPI_SUCCESS;
    }
    r->user_freed = 1; /* completes in the background, freed then */
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Request_free, PMPI_Request_free)

int PMPI_Cancel(MPI_Request *request)
{
    MPII_CHECK_INIT("MPI_Cancel");
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Cancel");
    mpii_req_t *r = mpii_req_get(*request);
    if (!r)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == MPII_REQ_GREQ) {
        if (r->cancel_fn)
            return r->cancel_fn(r->extra, r->done);
        return MPI_SUCCESS;
    }
    if (!mpii_req_live(r))
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Cancel");
    if (r->kind == MPII_REQ_COLL) /* MPI-4.0 3.8.4: collectives cannot be cancelled */
        return MPII_ERRF_COMM(r->comm, MPI_ERR_REQUEST, "MPI_Cancel", "%s",
                              "a collective operation cannot be cancelled");
    if (r->kind == MPII_REQ_PART)
        return MPII_ERRF_COMM(r->comm, MPI_ERR_REQUEST, "MPI_Cancel", "%s",
                              "cancelling a partitioned operation is not supported");
    /* Receives not yet matched are cancelled at once; a send is cancelled when its
     * receiver has not matched it yet (it answers; MPI_Wait / MPI_Test then tell which). */
    if (r->kind == MPII_REQ_COMPOUND)
        mpii_compound_cancel(r);
    else
        mpii_p2p_cancel(r);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cancel, PMPI_Cancel)

/* ------------------------------------------------------------------ persistent */

int PMPI_Start(MPI_Request *request)
{
    MPII_CHECK_INIT("MPI_Start");
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Start");
    mpii_req_t *r = mpii_req_get(*request);
    if (!r || !r->persistent || r->active)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Start");
    r->active = 1;
    int rc = r->kind == MPII_REQ_COLL   ? mpii_sched_start(r)
             : r->kind == MPII_REQ_PART ? mpii_part_start(r)
                                        : mpii_p2p_start(r);
    if (rc) {
        r->active = 0;
        r->done = 1;
        return MPII_ERR_COMM(r->comm, rc, "MPI_Start");
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Start, PMPI_Start)

int PMPI_Startall(int count, MPI_Request array_of_requests[])
{
    MPII_CHECK_INIT("MPI_Startall");
    if (count < 0 || (count > 0 && !array_of_requests))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Startall");
    for (int i = 0; i < count; i++) {
        mpii_req_t *r = mpii_req_get(array_of_requests[i]);
        if (!r || !r->persistent || r->active)
            return MPII_ERR(MPI_ERR_REQUEST, "MPI_Startall");
    }
    for (int i = 0; i < count; i++) {
        int rc = PMPI_Start(&array_of_requests[i]);
        if (rc)
            return rc;
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Startall, PMPI_Startall)

/* ------------------------------------------------------------------ generalized */

int PMPI_Grequest_start(MPI_Grequest_query_function *query_fn, MPI_Grequest_free_function *free_fn,
                        MPI_Grequest_cancel_function *cancel_fn, void *extra_state,
                        MPI_Request *request)
{
    MPII_CHECK_INIT("MPI_Grequest_start");
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Grequest_start");
    mpii_req_t *r = mpii_req_alloc();
    if (!r)
        return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Grequest_start");
    r->kind = MPII_REQ_GREQ;
    r->comm = MPI_COMM_WORLD;
    r->query_fn = query_fn;
    r->free_fn = free_fn;
    r->cancel_fn = cancel_fn;
    r->extra = extra_state;
    r->active = 1;
    int rc = mpii_req_handle(r, request);
    return rc ? MPII_ERR(rc, "MPI_Grequest_start") : MPI_SUCCESS;
}
MPII_WEAK(MPI_Grequest_start, PMPI_Grequest_start)

int PMPI_Grequest_complete(MPI_Request request)
{
    MPII_CHECK_INIT("MPI_Grequest_complete");
    mpii_req_t *r = mpii_req_get(request);
    if (!r || r->kind != MPII_REQ_GREQ || r->done)
        return MPII_ERR(MPI_ERR_REQUEST, "MPI_Grequest_complete");
    mpii_req_done(r);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Grequest_complete, PMPI_Grequest_complete)
