/* win_rma.c — MPI_Put and MPI_Get (and MPI_Rput, MPI_Rget, the _c forms) on windows.
 *
 * Addressing: the origin knows every rank's window size and disp_unit (win.c), so it checks
 * the whole byte range of an access, [disp * disp_unit + true lb, ... + true extent of
 * target_count elements), against the target's window before anything moves: outside ->
 * MPI_ERR_RMA_RANGE, nothing written. Dynamic windows: the displacement is an address;
 * the origin reads the target's table of attached regions (its control block: a load on
 * this host, one vnic get otherwise) and the access must lie inside one region.
 *
 * Moving the data (win_transfer): a direct target (mapped memory) is one memcpy for
 * contiguous layouts (from FMPL_SHM_SHARED_HEAP_MIN bytes on, to another rank, a shared
 * copy: that rank copies pieces too while it waits in the library, vnic_copy_shared),
 * else dt_copy between the two layouts. Otherwise the vnic moves it:
 * one contiguous op, or iovec descriptors on both sides built by the datatype engine's
 * segment iterator in chunks of up to WIN_IOV_MAX pieces, so strided and indexed layouts
 * go without a pack. Puts are locally complete at return and mark the target dirty
 * (win_sync.c completes them remotely); gets count on the window's counter unless the
 * caller needs the data at once. Puts are posted with VNIC_F_DEFER: over udp a small one
 * may wait in the open datagram to its target for the next operation there, so that a
 * burst of small puts, or a put and the flush's atomic after it, leave in one datagram
 * (the transport sends it at the latest at this rank's next call into the library).
 *
 * The request-based forms on a mapped target complete at issue (one memcpy); on other
 * targets the transfer is posted in steps and completed by progress (win_req.c). */
#include <string.h>

#include "mpi/p2p_impl.h"
#include "mpi/win_impl.h"

/* Byte range [lo, hi) of count elements of t relative to their origin. */
static void layout_range(dt_t *t, int64_t count, int64_t *lo, int64_t *hi)
{
    int64_t tlb = dt_true_lb(t), tex = dt_true_extent(t), ext = dt_extent(t);
    int64_t shift = (count - 1) * ext;
    *lo = tlb + (shift < 0 ? shift : 0);
    *hi = tlb + tex + (shift > 0 ? shift : 0);
}

int win_target_resolve(mpii_win_t *w, int target, MPI_Aint disp, dt_t *t, int64_t count,
                       win_target_t *out)
{
    win_peer_t *p = &w->peer[target];
    out->world = w->c->group->world[target];
    int64_t lo = 0, hi = 0;
    int empty = count == 0 || dt_size(t) == 0;
    if (!empty)
        layout_range(t, count, &lo, &hi);
    if (w->flavor != MPI_WIN_FLAVOR_DYNAMIC) {
        __int128 at = (__int128)disp * p->disp_unit;
        if (!empty && (at + lo < 0 || at + hi > p->size))
            return MPI_ERR_RMA_RANGE;
        int64_t a = (int64_t)at;
        out->key = p->data_key;
        out->off = win_data_off(w, p) + (uint64_t)a;
        out->ptr = p->data ? p->data + a : NULL;
        out->aligned8 = p->aligned8;
        return MPI_SUCCESS;
    }
    if (empty) {
        out->key = VNIC_KEY_INVALID;
        out->off = 0;
        out->ptr = NULL;
        out->aligned8 = 0;
        return MPI_SUCCESS;
    }
    /* The target's table of attached regions: mapped, or read 64 entries at a time. */
    uint64_t toff = win_dyn_off(w->size), used = 0;
    const win_dyn_t *mapped = NULL;
    if (p->ctrl) {
        used = __atomic_load_n(&((const win_ctrl_t *)(const void *)p->ctrl)->dyn_used,
                               __ATOMIC_ACQUIRE);
        mapped = (const win_dyn_t *)(const void *)((const char *)p->ctrl + toff);
    } else {
        int rc = vnic_get(mpii.vnic, out->world, &used, sizeof used, VNIC_KEY_HEAP,
                          p->ctrl_off + offsetof(win_ctrl_t, dyn_used));
        if (rc != FMPL_SUCCESS)
            return mpii_err_from_fmpl(rc);
    }
    if (used > WIN_DYN_MAX)
        used = WIN_DYN_MAX;
    __int128 s = (__int128)(uint64_t)disp + lo, e = (__int128)(uint64_t)disp + hi;
    win_dyn_t chunk[64];
    for (uint64_t i0 = 0; i0 < used; i0 += 64) {
        uint64_t n = used - i0 < 64 ? used - i0 : 64;
        const win_dyn_t *d = chunk;
        if (mapped) {
            d = mapped + i0;
        } else {
            int rc = vnic_get(mpii.vnic, out->world, chunk, n * sizeof *chunk, VNIC_KEY_HEAP,
                              p->ctrl_off + toff + i0 * sizeof *chunk);
            if (rc != FMPL_SUCCESS)
                return mpii_err_from_fmpl(rc);
        }
        for (uint64_t i = 0; i < n; i++) {
            uint64_t len = __atomic_load_n(&d[i].len, __ATOMIC_ACQUIRE);
            if (len && s >= (__int128)d[i].base && e <= (__int128)d[i].base + len) {
                out->key = (vnic_key_t)d[i].key;
                out->off = (uint64_t)disp - d[i].base;
                out->ptr = NULL;
                out->aligned8 = d[i].base % 8 == 0;
                return MPI_SUCCESS;
            }
        }
    }
    return MPI_ERR_RMA_RANGE;
}

/* Trims iov[0..*n) to its first len bytes. */
static void iov_trim(struct iovec *iov, int *n, int64_t len)
{
    int i = 0;
    for (; i < *n && len > 0; i++) {
        if ((int64_t)iov[i].iov_len >= len) {
            iov[i].iov_len = (size_t)len;
            len = 0;
        } else {
            len -= (int64_t)iov[i].iov_len;
        }
    }
    *n = i;
}

int win_xfer_init(win_xfer_t *x, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                  int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount,
                  vnic_cntr_t *lcntr)
{
    memset(x, 0, sizeof *x);
    x->target = target;
    x->opcode = opcode;
    x->tg = *tg;
    x->obuf = obuf;
    x->ot = ot;
    x->tt = tt;
    x->ocount = ocount;
    x->tcount = tcount;
    x->bytes = ocount * dt_size(ot);
    x->lcntr = lcntr;
    x->contig = dt_is_contig(ot, ocount) && dt_is_contig(tt, tcount);
    if (x->bytes == 0 || x->contig)
        return MPI_SUCCESS;
    if (dt_iter_init(&x->oi, ot, ocount, obuf, 0) != FMPL_SUCCESS ||
        dt_iter_init(&x->ti, tt, tcount, WIN_FAKE_BASE, 0) != FMPL_SUCCESS)
        return MPI_ERR_INTERN;
    return MPI_SUCCESS;
}

int win_xfer_step(mpii_win_t *w, win_xfer_t *x, int64_t budget)
{
    vnic_t *v = mpii.vnic;
    vnic_op_t op = {.opcode = x->opcode, .peer = x->tg.world, .lcntr = x->lcntr};
    if (x->opcode == VNIC_OP_PUT)
        op.flags = VNIC_F_DEFER; /* small ones leave with the next operation to the target */
    op.remote.key = x->tg.key;
    int64_t moved = 0;
    while (x->pos < x->bytes && moved < budget) {
        int64_t len = x->bytes - x->pos;
        if (len > budget - moved)
            len = budget - moved;
        if (x->contig) {
            op.local.kind = VNIC_DESC_CONTIG;
            op.local.u.contig.addr = (char *)x->obuf + dt_true_lb(x->ot) + x->pos;
            op.local.u.contig.len = (size_t)len;
            op.remote.kind = VNIC_DESC_CONTIG;
            op.remote.u.off = x->tg.off + (uint64_t)dt_true_lb(x->tt) + (uint64_t)x->pos;
        } else {
            int no = 0, nt = 0;
            int64_t ob = 0, tb = 0, opos = x->oi.pos;
            dt_iter_next(&x->oi, x->liov, WIN_IOV_MAX, len, &no, &ob);
            dt_iter_next(&x->ti, x->tiov, WIN_IOV_MAX, ob, &nt, &tb);
            if (no == 0 || nt == 0)
                return MPI_ERR_INTERN;
            if (tb < ob) { /* the target side ran out of pieces first */
                iov_trim(x->liov, &no, tb);
                dt_iter_seek(&x->oi, opos + tb);
            }
            for (int i = 0; i < nt; i++) {
                x->rseg[i].off =
                    x->tg.off + (uint64_t)((char *)x->tiov[i].iov_base - WIN_FAKE_BASE);
                x->rseg[i].len = x->tiov[i].iov_len;
            }
            len = tb;
            op.local.kind = VNIC_DESC_IOV;
            op.local.u.iov.iov = x->liov;
            op.local.u.iov.cnt = no;
            op.remote.kind = VNIC_DESC_IOV;
            op.remote.u.iov.seg = x->rseg;
            op.remote.u.iov.cnt = nt;
        }
        int rc = vnic_post(v, &op);
        if (rc != FMPL_SUCCESS)
            return rc == FMPL_ERR_KEY ? MPI_ERR_RMA_RANGE : mpii_err_from_fmpl(rc);
        x->pos += len;
        moved += len;
        x->posted++;
        if (x->opcode == VNIC_OP_PUT)
            win_mark_dirty(w, x->target);
    }
    return MPI_SUCCESS;
}

int win_transfer(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                 int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount, int block)
{
    int64_t bytes = ocount * dt_size(ot);
    if (bytes == 0)
        return MPI_SUCCESS;
    if (tg->ptr) {
        w->stores |= opcode == VNIC_OP_PUT;
        return win_copy_direct(w, target, opcode, obuf, ot, ocount, tg, tt, tcount);
    }
    win_xfer_t x;
    int rc = win_xfer_init(&x, target, opcode, obuf, ot, ocount, tg, tt, tcount,
                           opcode == VNIC_OP_GET && !block ? w->cntr : NULL);
    if (rc == MPI_SUCCESS)
        rc = win_xfer_step(w, &x, INT64_MAX);
    if (x.lcntr)
        w->inflight += x.posted;
    return rc;
}

int win_copy_shared(mpii_win_t *w, int target, int get, void *o, char *t, size_t bytes)
{
    if ((char *)o < t + bytes && t < (char *)o + bytes)
        return 0; /* pieces copied apart are no memmove of overlapping ranges */
    const win_peer_t *p = &w->peer[target];
    int rc = vnic_copy_shared(mpii.vnic, w->c->group->world[target], get, o, p->data_key,
                              win_direct_off(w, p, t), bytes);
    /* declined, or failed (a dead target): the caller's memmove does it all again */
    return rc == FMPL_SUCCESS;
}

int win_copy_direct(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                    int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount)
{
    int64_t bytes = ocount * dt_size(ot);
    if (dt_is_contig(ot, ocount) && dt_is_contig(tt, tcount)) {
        char *o = (char *)obuf + dt_true_lb(ot), *t = tg->ptr + dt_true_lb(tt);
        if (win_copy_big(w, target, opcode == VNIC_OP_GET, o, t, (size_t)bytes))
            return MPI_SUCCESS;
        if (opcode == VNIC_OP_PUT)
            memmove(t, o, (size_t)bytes);
        else
            memmove(o, t, (size_t)bytes);
        return MPI_SUCCESS;
    }
    int rc = opcode == VNIC_OP_PUT ? dt_copy(ot, ocount, obuf, tt, tcount, tg->ptr, 0, bytes)
                                   : dt_copy(tt, tcount, tg->ptr, ot, ocount, obuf, 0, bytes);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS : MPI_ERR_INTERN;
}

int win_request_done(MPI_Request *request)
{
    mpii_req_t *r = mpii_req_alloc();
    if (!r)
        return MPI_ERR_NO_MEM;
    r->kind = MPII_REQ_GREQ;
    r->comm = MPI_COMM_WORLD;
    r->active = 1;
    r->done = 1;
    return mpii_req_handle(r, request);
}

/* Put or get of a predefined type to mapped memory inside an epoch: one copy. 1 when done,
 * 0 when the full path must run. Inlined into MPI_Put / MPI_Get so that the common case is
 * one call from the application: the checks are the minimum that keeps every error to the
 * full path (win_fast_type and win_fast_addr refuse anything they cannot vouch for). */
static inline __attribute__((always_inline)) int rma_fast(int get, void *obuf, int ocount,
                                                          MPI_Datatype otype, int target,
                                                          MPI_Aint disp, int tcount,
                                                          MPI_Datatype ttype, MPI_Win win)
{
    if (BASE_UNLIKELY(otype != ttype || ocount != tcount || ocount < 0 ||
                      mpii.state != MPII_ACTIVE))
        return 0;
    int es = win_fast_type(otype);
    if (BASE_UNLIKELY(!es))
        return 0;
    int64_t bytes = (int64_t)ocount * es;
    mpii_win_t *w;
    char *t = win_fast_addr(win, target, disp, bytes, &w);
    if (BASE_UNLIKELY(!t))
        return 0;
    if (get)
        win_store_fence(w);
    char *dst = get ? obuf : t;
    const char *src = get ? t : obuf;
    if (bytes == 8) { /* one word: no library call */
        uint64_t v;
        memcpy(&v, src, 8);
        memcpy(dst, &v, 8);
    } else if (!win_copy_big(w, target, get, obuf, t, (size_t)bytes)) {
        memmove(dst, src, (size_t)bytes);
    }
    if (!get)
        w->stores = 1;
    return 1;
}

/* Put or get: checks, epoch, range, transfer. request non-NULL: the R-form. */
static BASE_NOINLINE int rma(vnic_opcode_t opcode, void *obuf, MPI_Count ocount, MPI_Datatype otype,
                             int target, MPI_Aint disp, MPI_Count tcount, MPI_Datatype ttype,
                             MPI_Win win, MPI_Request *request, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_win_t *w = mpii_win_get(win);
    if (BASE_UNLIKELY(!w))
        return WIN_ERR(win, MPI_ERR_WIN, fname);
    if (request)
        *request = MPI_REQUEST_NULL;
    if (BASE_UNLIKELY(ocount < 0 || tcount < 0))
        return WIN_ERR(win, MPI_ERR_COUNT, fname);
    dt_t *ot = mpii_type_comm_dt(otype), *tt = mpii_type_comm_dt(ttype);
    if (BASE_UNLIKELY(!ot || !tt))
        return WIN_ERR(win, MPI_ERR_TYPE, fname);
    if (BASE_UNLIKELY(target == MPI_PROC_NULL))
        return request ? win_request_done(request) : MPI_SUCCESS;
    if (BASE_UNLIKELY(target < 0 || target >= w->size))
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    if (BASE_UNLIKELY(ocount * dt_size(ot) != tcount * dt_size(tt)))
        return WIN_ERRF(win, MPI_ERR_TYPE, fname,
                        "origin (%lld bytes) and target (%lld bytes) do not match",
                        (long long)(ocount * dt_size(ot)), (long long)(tcount * dt_size(tt)));
    int rc = win_access_begin(w, target);
    if (BASE_UNLIKELY(rc != MPI_SUCCESS))
        return WIN_ERRF(win, rc, fname, "%s",
                        rc == MPI_ERR_RMA_SYNC ? "no epoch gives access to the target" : "");
    if (opcode == VNIC_OP_GET)
        win_store_fence(w);
    win_target_t tg;
    rc = win_target_resolve(w, target, disp, tt, tcount, &tg);
    if (BASE_UNLIKELY(rc != MPI_SUCCESS))
        return WIN_ERRF(win, rc, fname, "displacement %ld, %lld elements: outside rank %d's window",
                        (long)disp, (long long)tcount, target);
    if (request)
        rc = win_req_transfer(w, target, opcode, obuf, ot, ocount, &tg, tt, tcount, request);
    else
        rc = win_transfer(w, target, opcode, obuf, ot, ocount, &tg, tt, tcount, 0);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}

int PMPI_Put(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
             int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
             MPI_Win win)
{
    if (BASE_LIKELY(rma_fast(0, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype,
                             target_rank, target_disp, target_count, target_datatype, win)))
        return MPI_SUCCESS;
    return rma(VNIC_OP_PUT, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype,
               target_rank, target_disp, target_count, target_datatype, win, NULL, "MPI_Put");
}
MPII_WEAK(MPI_Put, PMPI_Put)

int PMPI_Put_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    return rma(VNIC_OP_PUT, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype,
               target_rank, target_disp, target_count, target_datatype, win, NULL, "MPI_Put_c");
}
MPII_WEAK(MPI_Put_c, PMPI_Put_c)

int PMPI_Get(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
             MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win)
{
    if (BASE_LIKELY(rma_fast(1, origin_addr, origin_count, origin_datatype, target_rank,
                             target_disp, target_count, target_datatype, win)))
        return MPI_SUCCESS;
    return rma(VNIC_OP_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, NULL, "MPI_Get");
}
MPII_WEAK(MPI_Get, PMPI_Get)

int PMPI_Get_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
               int target_rank, MPI_Aint target_disp, MPI_Count target_count,
               MPI_Datatype target_datatype, MPI_Win win)
{
    return rma(VNIC_OP_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, NULL, "MPI_Get_c");
}
MPII_WEAK(MPI_Get_c, PMPI_Get_c)

int PMPI_Rput(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
              int target_rank, MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype,
              MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rput");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rput");
    }
    return rma(VNIC_OP_PUT, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype,
               target_rank, target_disp, target_count, target_datatype, win, request, "MPI_Rput");
}
MPII_WEAK(MPI_Rput, PMPI_Rput)

int PMPI_Rput_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rput_c");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rput_c");
    }
    return rma(VNIC_OP_PUT, (void *)(uintptr_t)origin_addr, origin_count, origin_datatype,
               target_rank, target_disp, target_count, target_datatype, win, request, "MPI_Rput_c");
}
MPII_WEAK(MPI_Rput_c, PMPI_Rput_c)

int PMPI_Rget(void *origin_addr, int origin_count, MPI_Datatype origin_datatype, int target_rank,
              MPI_Aint target_disp, int target_count, MPI_Datatype target_datatype, MPI_Win win,
              MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rget");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rget");
    }
    return rma(VNIC_OP_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, request, "MPI_Rget");
}
MPII_WEAK(MPI_Rget, PMPI_Rget)

int PMPI_Rget_c(void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                MPI_Datatype target_datatype, MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rget_c");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rget_c");
    }
    return rma(VNIC_OP_GET, origin_addr, origin_count, origin_datatype, target_rank, target_disp,
               target_count, target_datatype, win, request, "MPI_Rget_c");
}
MPII_WEAK(MPI_Rget_c, PMPI_Rget_c)
