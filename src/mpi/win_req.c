/* win_req.c — request-based one-sided operations that are not complete when issued.
 *
 * MPI_Rput, MPI_Rget (and the accumulates of win_atomic.c that travel to the target) on
 * a target this rank does not map: the transfer is a win_xfer_t posted piece by piece.
 * The call posts the first WIN_REQ_STEP bytes and returns; a vnic progress hook (armed
 * while requests are pending) posts one more step of each pending request per progress
 * call and completes a request once all of it is posted and its own vnic counter says
 * every piece completed locally (a put: its data left the origin buffer; a get: its data
 * arrived). So MPI_Test / MPI_Wait on the request, and any other progress, move it on;
 * many requests overlap, and they complete in any order.
 *
 * Each pending request owns a vnic counter (opened at issue, closed at completion; vnic
 * counters complete out of order across peers, so a shared one could not tell which
 * request finished). Requests complete at issue (mapped targets: one memcpy; transfers of
 * at most WIN_REQ_STEP bytes whose pieces complete at post) never become pending.
 *
 * Flushes: win_flush_target / win_wait_local (win_sync.c) call win_req_drain first, which
 * posts what is left of the window's pending requests and waits for their counters, then
 * completes them: MPI_Win_flush*, unlock, complete and fence complete R-operations too,
 * and the request handle then only reports completion. MPI_Win_free drains as well. The
 * hook keeps off while a drain runs (its posts and waits progress), so nothing frees a
 * request under the drain. */
#include <stdlib.h>
#include <string.h>

#include "mpi/p2p_impl.h"
#include "mpi/win_impl.h"

#define WIN_REQ_STEP (256 << 10) /* bytes posted per step */

typedef struct win_req {
    struct win_req *next;
    mpii_win_t *w;
    mpii_req_t *r;
    win_xfer_t x;
    vnic_cntr_t *c;
    uint64_t c_base, e_base; /* counter value and errors at issue */
    int err;                 /* first error class seen */
} win_req_t;

static struct {
    win_req_t *head; /* pending requests, every window */
    vnic_t *hook_vnic;
    int hook_id;
    int draining; /* win_req_drain runs: the hook (progress inside its waits) keeps off */
} wr;

static int req_hook(void *arg);

static int hook_arm(int on)
{
    if (wr.hook_vnic != mpii.vnic) { /* first use with this vnic (MPI may start again) */
        if (vnic_hook_add(mpii.vnic, req_hook, NULL, 0, &wr.hook_id) != FMPL_SUCCESS)
            return MPI_ERR_INTERN;
        wr.hook_vnic = mpii.vnic;
    }
    vnic_hook_arm(mpii.vnic, wr.hook_id, on);
    return MPI_SUCCESS;
}

/* 1 when everything of q is posted (or posting failed) and what was posted is locally
 * complete (the counter is never closed under an operation still using it). */
static int req_ready(const win_req_t *q)
{
    return (q->x.pos >= q->x.bytes || q->err != MPI_SUCCESS) &&
           vnic_cntr_read(q->c) >= q->c_base + q->x.posted;
}

/* Completes q (ready): error class, request done, counter closed. Returns the class. */
static int req_finish(win_req_t *q)
{
    if (q->err == MPI_SUCCESS && vnic_cntr_errors(q->c) != q->e_base)
        q->err = MPI_ERR_RMA_RANGE;
    win_req_t **pp = &wr.head;
    while (*pp != q)
        pp = &(*pp)->next;
    *pp = q->next;
    q->w->nreqs--;
    q->r->err = q->err;
    mpii_req_done(q->r);
    vnic_cntr_close(mpii.vnic, q->c);
    dt_release(q->x.ot);
    dt_release(q->x.tt);
    int err = q->err;
    free(q);
    if (!wr.head)
        hook_arm(0);
    return err;
}

static int req_hook(void *arg)
{
    (void)arg;
    if (wr.draining)
        return 0;
    int n = 0;
    win_req_t *q = wr.head;
    while (q) {
        win_req_t *next = q->next;
        if (q->err == MPI_SUCCESS && q->x.pos < q->x.bytes) {
            q->err = win_xfer_step(q->w, &q->x, WIN_REQ_STEP);
            n++;
        }
        if (req_ready(q)) {
            req_finish(q);
            n++;
        }
        q = next;
    }
    return n;
}

int win_req_transfer(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                     int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount,
                     MPI_Request *request)
{
    int64_t bytes = ocount * dt_size(ot);
    if (bytes == 0)
        return win_request_done(request);
    if (tg->ptr) {
        w->stores |= opcode == VNIC_OP_PUT;
        int rc = win_copy_direct(w, target, opcode, obuf, ot, ocount, tg, tt, tcount);
        return rc == MPI_SUCCESS ? win_request_done(request) : rc;
    }
    win_req_t *q = calloc(1, sizeof *q);
    mpii_req_t *r = mpii_req_alloc();
    if (!q || !r || vnic_cntr_open(mpii.vnic, VNIC_CNTR_ANY, &q->c) != FMPL_SUCCESS) {
        free(q);
        if (r)
            mpii_req_free(r);
        /* Out of memory or of vnic counters (FMPL_SHM_COUNTERS): the operation completes
         * here instead, which MPI allows. */
        int rc = win_transfer(w, target, opcode, obuf, ot, ocount, tg, tt, tcount, 1);
        return rc == MPI_SUCCESS ? win_request_done(request) : rc;
    }
    q->c_base = vnic_cntr_read(q->c);
    q->e_base = vnic_cntr_errors(q->c);
    int rc = win_xfer_init(&q->x, target, opcode, obuf, ot, ocount, tg, tt, tcount, q->c);
    if (rc == MPI_SUCCESS)
        rc = win_xfer_step(w, &q->x, WIN_REQ_STEP);
    if (rc != MPI_SUCCESS) {
        /* pieces already posted complete on q->c: wait for them before it goes */
        vnic_cntr_wait(mpii.vnic, q->c, q->c_base + q->x.posted, -1);
        vnic_cntr_close(mpii.vnic, q->c);
        free(q);
        mpii_req_free(r);
        return rc;
    }
    r->kind = MPII_REQ_GREQ;
    r->comm = MPI_COMM_WORLD;
    r->active = 1;
    if (req_ready(q) && vnic_cntr_errors(q->c) == q->e_base) {
        vnic_cntr_close(mpii.vnic, q->c);
        free(q);
        r->done = 1;
        return mpii_req_handle(r, request);
    }
    rc = mpii_req_handle(r, request);
    if (rc != MPI_SUCCESS) { /* r freed: finish the transfer here */
        q->r = NULL;
        while (q->x.pos < q->x.bytes && win_xfer_step(w, &q->x, INT64_MAX) == MPI_SUCCESS)
            ;
        vnic_cntr_wait(mpii.vnic, q->c, q->c_base + q->x.posted, -1);
        vnic_cntr_close(mpii.vnic, q->c);
        free(q);
        return rc;
    }
    q->w = w;
    q->r = r;
    dt_retain(ot); /* the user may free the types before the request completes */
    dt_retain(tt);
    q->next = wr.head;
    wr.head = q;
    w->nreqs++;
    if (hook_arm(1) != MPI_SUCCESS) /* no progress hook left: complete it now */
        return win_req_drain(w, target);
    return MPI_SUCCESS;
}

int win_req_drain(mpii_win_t *w, int target)
{
    int rc = MPI_SUCCESS;
    if (w->nreqs == 0 || wr.draining)
        return rc;
    wr.draining = 1;
    win_req_t *q = wr.head;
    while (q) {
        win_req_t *next = q->next;
        if (q->w == w && (target < 0 || q->x.target == target)) {
            while (q->err == MPI_SUCCESS && q->x.pos < q->x.bytes)
                q->err = win_xfer_step(w, &q->x, INT64_MAX);
            if (q->err == MPI_SUCCESS) {
                int r2 = vnic_cntr_wait(mpii.vnic, q->c, q->c_base + q->x.posted, -1);
                if (r2 != FMPL_SUCCESS)
                    q->err = mpii_err_from_fmpl(r2);
            }
            if (q->err != MPI_SUCCESS) /* what was posted must finish before the counter goes */
                vnic_cntr_wait(mpii.vnic, q->c, q->c_base + q->x.posted, -1);
            int err = req_finish(q);
            if (rc == MPI_SUCCESS && err != MPI_SUCCESS)
                rc = err;
            next = wr.head; /* req_finish may have changed the list: start over */
        }
        q = next;
    }
    wr.draining = 0;
    return rc;
}
