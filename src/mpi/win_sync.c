/* win_sync.c — synchronization of one-sided windows: fence, post/start/complete/wait/test,
 * lock/unlock (shared and exclusive), lock_all/unlock_all, the flushes and MPI_Win_sync.
 *
 * Completion. A direct access (load, store, CPU atomic on mapped memory) is complete when
 * it returns: a store is in this CPU's store buffer, which drains to memory in order and
 * without help, so every later store (a message, a lock word, a flag) and every atomic of
 * this rank reaches the target after it. What is left is store -> load order: a later
 * load of this rank may still pass the store (the Dekker pattern: put X, flush, get Y on
 * one rank; put Y, flush, get X on the other; both must not read the old values). So a
 * put on mapped memory sets w->stores, and the full fence it owes (win_store_fence) runs
 * before this rank's next get, accumulate or atomic on the window, at the end of the
 * epoch (unlock, unlock_all, fence, complete) and in MPI_Win_sync, the call the unified
 * model asks of a rank before its plain loads of window memory; MPI_Win_flush and
 * MPI_Win_flush_all only order the stores before later stores (a release fence: nothing
 * on x86-64). A flush after direct puts is therefore free, and put + flush is a store. A vnic put
 * is locally complete at return; this rank marks its target dirty, and remote completion (flush,
 * unlock, complete, fence) is one blocking atomic on the target's sync word (win_peer_quiesce),
 * which the target serves after every earlier operation of this origin (shm cells and the udp
 * stream are in order). Gets and atomics posted without waiting count on the window's counter
 * (win_wait_local).
 *
 * Locks. A window lock is a word in the target's control block: WIN_LOCK_EXCL for an
 * exclusive holder, +1 per shared holder. Exclusive: compare-and-swap 0 -> EXCL; shared:
 * fetch-and-add 1, backed out while an exclusive holder is in. On this host these are CPU
 * atomics on the mapped word, otherwise vnic atomics that the target's udp progress
 * thread serves: no message to the target's CPU either way. MPI_Win_lock takes the word
 * at the first operation to the target (an empty epoch costs nothing), except on the
 * calling rank itself and on shared windows, where loads and stores need it at once.
 * MPI_Win_lock_all takes nothing up front: each target's shared lock is taken at the first
 * operation to it, and unlock_all releases only those (O(1) in the number of ranks).
 *
 * PSCW. Word pscw[r] of a rank's control block is written by rank r alone, whole, with
 * its two counts towards this rank: the exposure epochs it posted to this rank (low 32
 * bits) and the access epochs to this rank it completed (high 32 bits); comparisons
 * allow for wrapping. MPI_Win_post counts an exposure epoch for each origin and writes
 * the word; MPI_Win_wait waits until each origin's completed count reached what was
 * posted to it. MPI_Win_start counts an access epoch for each target and returns (MPI
 * allows it not to wait): the first operation to a target waits until the target's
 * posted count reached the epoch (win_access_begin), so a target that is not accessed
 * costs no wait at all, and an empty epoch synchronizes once (complete -> wait), not
 * twice. MPI_Win_complete makes the epoch's operations complete at each target, then
 * writes the word. An origin that completes epochs before their posts (it accessed
 * nothing) is ahead by whole epochs only, which the target's waits then find done; the
 * counts being per origin, no origin's early epoch stands in for another's. A shared
 * window's start waits at once: loads and stores into a peer's memory pass no call.
 *
 * Fence: remote completion of this rank's operations, then a barrier on the window's
 * communicator, between two full memory fences. */
#include <stdlib.h>
#include <string.h>

#include "mpi/win_impl.h"

#define GET_WIN(w, h, fname)                                                                       \
    MPII_CHECK_INIT(fname);                                                                        \
    mpii_win_t *w = mpii_win_get(h);                                                               \
    if (!w)                                                                                        \
    return WIN_ERR(h, MPI_ERR_WIN, fname)

static uint64_t amo_local(vnic_opcode_t op, uint64_t *p, uint64_t operand, uint64_t compare)
{
    switch (op) {
    case VNIC_OP_FADD: return __atomic_fetch_add(p, operand, __ATOMIC_SEQ_CST);
    case VNIC_OP_SWAP: return __atomic_exchange_n(p, operand, __ATOMIC_SEQ_CST);
    default: {
        uint64_t c = compare;
        __atomic_compare_exchange_n(p, &c, operand, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        return c;
    }
    }
}

uint64_t win_ctrl_atomic(mpii_win_t *w, int target, vnic_opcode_t op, uint64_t off,
                         uint64_t operand, uint64_t compare, int *rc)
{
    win_peer_t *p = &w->peer[target];
    *rc = MPI_SUCCESS;
    if (p->ctrl)
        return amo_local(op, (uint64_t *)(void *)((char *)p->ctrl + off), operand, compare);
    uint64_t old = 0;
    int r = vnic_atomic(mpii.vnic, op, w->c->group->world[target], VNIC_KEY_HEAP, p->ctrl_off + off,
                        operand, compare, &old);
    if (r != FMPL_SUCCESS)
        *rc = mpii_err_from_fmpl(r);
    return old;
}

/* A signal to target: fetch-and-add on its control block, then (mapped) a wake-up in case
 * it sleeps in vnic_wait for exactly this word. */
static int win_ctrl_signal(mpii_win_t *w, int target, uint64_t off, uint64_t delta)
{
    int rc;
    win_ctrl_atomic(w, target, VNIC_OP_FADD, off, delta, 0, &rc);
    if (w->peer[target].ctrl && target != w->rank)
        vnic_peer_wake(mpii.vnic, w->c->group->world[target]);
    return rc;
}

/* Spins politely: progress (this rank may be the one others wait for), then yield. */
static void win_backoff(unsigned *spins)
{
    mpii_progress();
    base_poll_pause(spins);
}

static void touch(mpii_win_t *w, int target)
{
    win_peer_t *p = &w->peer[target];
    if (p->flags & WIN_PF_TOUCHED)
        return;
    if (w->ntouched == w->captouched) {
        int cap = w->captouched ? 2 * w->captouched : 8;
        int *t = realloc(w->touched, sizeof *t * (size_t)cap);
        if (!t)
            abort(); /* a few ints: out of memory here is not recoverable */
        w->touched = t;
        w->captouched = cap;
    }
    w->touched[w->ntouched++] = target;
    p->flags |= WIN_PF_TOUCHED;
}

void win_mark_dirty(mpii_win_t *w, int target)
{
    touch(w, target);
    w->peer[target].flags |= WIN_PF_DIRTY;
}

int win_wait_local(mpii_win_t *w)
{
    if (w->am_out)
        win_am_wait(w, -1);
    if (w->nreqs) {
        int rc = win_req_drain(w, -1);
        if (rc != MPI_SUCCESS)
            return rc;
    }
    if (w->inflight == 0)
        return MPI_SUCCESS;
    int rc = vnic_cntr_wait(mpii.vnic, w->cntr, w->inflight, -1);
    if (rc != FMPL_SUCCESS)
        return mpii_err_from_fmpl(rc);
    if (vnic_cntr_errors(w->cntr))
        return MPI_ERR_RMA_RANGE;
    return MPI_SUCCESS;
}

/* Remote completion of this rank's vnic puts to target. */
static int win_peer_quiesce(mpii_win_t *w, int target)
{
    win_peer_t *p = &w->peer[target];
    if (!(p->flags & WIN_PF_DIRTY))
        return MPI_SUCCESS;
    p->flags &= (uint8_t)~WIN_PF_DIRTY;
    uint64_t old;
    int rc = vnic_atomic(mpii.vnic, VNIC_OP_FADD, w->c->group->world[target], p->sync_key, 0, 0, 0,
                         &old);
    return rc == FMPL_SUCCESS ? MPI_SUCCESS : mpii_err_from_fmpl(rc);
}

/* Remote completion of everything this rank issued to target, but for the full fence
 * after its plain stores (MPI_Win_flush leaves that owed; see "Completion"). */
static int win_complete_target(mpii_win_t *w, int target)
{
    int rc = win_wait_local(w);
    if (rc == MPI_SUCCESS)
        rc = win_peer_quiesce(w, target);
    return rc;
}

/* The same for every touched rank. */
static int win_complete_touched(mpii_win_t *w)
{
    int rc = win_wait_local(w);
    for (int i = 0; i < w->ntouched && rc == MPI_SUCCESS; i++)
        rc = win_peer_quiesce(w, w->touched[i]);
    return rc;
}

int win_flush_target(mpii_win_t *w, int target)
{
    int rc = win_complete_target(w, target);
    win_store_fence(w);
    return rc;
}

static int win_flush_touched(mpii_win_t *w)
{
    int rc = win_complete_touched(w);
    win_store_fence(w);
    return rc;
}

/* Forgets the touched ranks that hold nothing any more. */
static void touched_compact(mpii_win_t *w)
{
    int n = 0;
    for (int i = 0; i < w->ntouched; i++) {
        win_peer_t *p = &w->peer[w->touched[i]];
        if (p->flags & (WIN_PF_DIRTY | WIN_PF_LOCKALL))
            w->touched[n++] = w->touched[i];
        else
            p->flags &= (uint8_t)~WIN_PF_TOUCHED;
    }
    w->ntouched = n;
}

/* ---------------------------------------------------------------- lock words */

typedef struct word_wait {
    const uint64_t *word;
    uint64_t busy; /* the bits that must be clear */
} word_wait_t;

static int lock_word_free(void *arg)
{
    const word_wait_t *ww = arg;
    return (__atomic_load_n(ww->word, __ATOMIC_ACQUIRE) & ww->busy) == 0;
}

/* Waits until the target's lock word may be free: a vnic_wait on the mapped word (the
 * releaser wakes this rank; re-checked at least every millisecond), else polling with
 * progress. */
static void lock_wait(mpii_win_t *w, int target, uint64_t busy, unsigned *spins)
{
    const uint64_t *ctrl = w->peer[target].ctrl;
    if (ctrl) {
        word_wait_t ww = {.word = ctrl, .busy = busy};
        vnic_wait(mpii.vnic, lock_word_free, &ww, 1000000);
    } else {
        win_backoff(spins);
    }
}

static int lock_acquire(mpii_win_t *w, int target, int type)
{
    int rc;
    unsigned spins = 0;
    if (type == MPI_LOCK_EXCLUSIVE) {
        while (win_ctrl_atomic(w, target, VNIC_OP_CSWAP, 0, WIN_LOCK_EXCL, 0, &rc) != 0) {
            if (rc != MPI_SUCCESS)
                return rc;
            lock_wait(w, target, ~0ull, &spins);
        }
        return rc;
    }
    for (;;) {
        uint64_t old = win_ctrl_atomic(w, target, VNIC_OP_FADD, 0, 1, 0, &rc);
        if (rc != MPI_SUCCESS || !(old & WIN_LOCK_EXCL))
            return rc;
        win_ctrl_signal(w, target, 0, (uint64_t)-1); /* an exclusive waiter may want it */
        do {
            lock_wait(w, target, WIN_LOCK_EXCL, &spins);
            old = win_ctrl_atomic(w, target, VNIC_OP_FADD, 0, 0, 0, &rc);
        } while (rc == MPI_SUCCESS && (old & WIN_LOCK_EXCL));
    }
}

static int lock_release(mpii_win_t *w, int target, int type)
{
    uint64_t delta = type == MPI_LOCK_EXCLUSIVE ? (uint64_t)0 - WIN_LOCK_EXCL : (uint64_t)-1;
    return win_ctrl_signal(w, target, 0, delta);
}

/* ---------------------------------------------------------------- PSCW words */

/* 1 when count (32 bits, wrapping) reached want. */
static inline int pscw_reached(uint32_t count, uint32_t want)
{
    return (int32_t)(count - want) >= 0;
}

static inline uint64_t pscw_word(const mpii_win_t *w, int rank)
{
    return __atomic_load_n(
        (const uint64_t *)(const void *)((const char *)w->ctrl + win_pscw_off(rank)),
        __ATOMIC_ACQUIRE);
}

/* Writes this rank's word in target's control block: its exposure epochs posted to the
 * target and its access epochs to the target completed (the open one is not). */
static int pscw_publish(mpii_win_t *w, int target)
{
    win_peer_t *p = &w->peer[target];
    uint32_t done = p->acc_epochs - ((p->flags & (WIN_PF_START | WIN_PF_STARTING)) ? 1u : 0u);
    uint64_t value = (uint64_t)done << 32 | p->exp_epochs;
    if (p->ctrl) {
        __atomic_store_n((uint64_t *)(void *)((char *)p->ctrl + win_pscw_off(w->rank)), value,
                         __ATOMIC_RELEASE);
        if (target != w->rank)
            vnic_peer_wake(mpii.vnic, w->c->group->world[target]);
        return MPI_SUCCESS;
    }
    int rc;
    win_ctrl_atomic(w, target, VNIC_OP_SWAP, win_pscw_off(w->rank), value, 0, &rc);
    return rc;
}

typedef struct pscw_wait {
    const mpii_win_t *w;
    int target;
} pscw_wait_t;

static int pscw_posted(void *arg)
{
    const pscw_wait_t *pw = arg;
    return pscw_reached((uint32_t)pscw_word(pw->w, pw->target), pw->w->peer[pw->target].acc_epochs);
}

/* Waits until target posted the exposure epoch of this rank's current access epoch. */
static void pscw_post_wait(mpii_win_t *w, int target)
{
    pscw_wait_t pw = {w, target};
    vnic_wait(mpii.vnic, pscw_posted, &pw, -1);
}

/* 1 once every origin of the open exposure epoch completed its access epoch. */
static int pscw_completed(void *arg)
{
    const mpii_win_t *w = arg;
    for (int i = 0; i < w->npost; i++) {
        int o = w->post_list[i];
        if (!pscw_reached((uint32_t)(pscw_word(w, o) >> 32), w->peer[o].exp_epochs))
            return 0;
    }
    return 1;
}

int win_access_begin(mpii_win_t *w, int target)
{
    win_peer_t *p = &w->peer[target];
    if (w->lock_all) {
        if (!(p->flags & WIN_PF_LOCKALL) && !w->lock_all_nocheck) {
            int rc = lock_acquire(w, target, MPI_LOCK_SHARED);
            if (rc != MPI_SUCCESS)
                return rc;
            touch(w, target);
            p->flags |= WIN_PF_LOCKALL;
        }
        return MPI_SUCCESS;
    }
    if (p->flags & WIN_PF_LOCKED) {
        if (!(p->flags & WIN_PF_ACQUIRED)) {
            int rc = lock_acquire(w, target, p->lock_type);
            if (rc != MPI_SUCCESS)
                return rc;
            p->flags |= WIN_PF_ACQUIRED;
        }
        return MPI_SUCCESS;
    }
    if (w->fence || (w->started && (p->flags & WIN_PF_START)))
        return MPI_SUCCESS;
    if (w->started && (p->flags & WIN_PF_STARTING)) {
        pscw_post_wait(w, target);
        p->flags = (uint8_t)((p->flags & ~WIN_PF_STARTING) | WIN_PF_START);
        return MPI_SUCCESS;
    }
    return MPI_ERR_RMA_SYNC;
}

/* ---------------------------------------------------------------- fence */

int PMPI_Win_fence(int assert, MPI_Win win)
{
    static const char fname[] = "MPI_Win_fence";
    GET_WIN(w, win, fname);
    if (w->started || w->posted || win_nlocked(w) || w->lock_all)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname,
                        "a PSCW or passive-target epoch is open on the window");
    int rc = win_flush_touched(w);
    touched_compact(w);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(win, rc, fname);
    rc = PMPI_Barrier(w->comm);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(win, rc, fname);
    w->fence = !(assert &MPI_MODE_NOSUCCEED);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_fence, PMPI_Win_fence)

/* ---------------------------------------------------------------- PSCW */

/* The ranks in the window of a group's members: out[n], or an error class. */
static int group_ranks(mpii_win_t *w, MPI_Group group, int **out, int *n)
{
    mpii_group_t *g = mpii_group_get(group);
    if (!g)
        return MPI_ERR_GROUP;
    int *r = malloc(sizeof *r * (size_t)(g->size ? g->size : 1));
    if (!r)
        return MPI_ERR_NO_MEM;
    for (int i = 0; i < g->size; i++) {
        r[i] = -1;
        for (int j = 0; j < w->size; j++)
            if (w->c->group->world[j] == g->world[i]) {
                r[i] = j;
                break;
            }
        if (r[i] < 0) {
            free(r);
            return MPI_ERR_GROUP;
        }
    }
    *out = r;
    *n = g->size;
    return MPI_SUCCESS;
}

int PMPI_Win_post(MPI_Group group, int assert, MPI_Win win)
{
    static const char fname[] = "MPI_Win_post";
    GET_WIN(w, win, fname);
    if (w->posted || w->lock_all || win_nlocked(w))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "an exposure or lock epoch is open");
    int *r, n, rc = group_ranks(w, group, &r, &n);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(win, rc, fname);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->posted = 1;
    free(w->post_list);
    w->post_list = r;
    w->npost = n;
    for (int i = 0; i < n; i++)
        w->peer[r[i]].exp_epochs++;
    for (int i = 0; i < n && rc == MPI_SUCCESS && !(assert &MPI_MODE_NOCHECK); i++)
        rc = pscw_publish(w, r[i]);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_post, PMPI_Win_post)

int PMPI_Win_start(MPI_Group group, int assert, MPI_Win win)
{
    static const char fname[] = "MPI_Win_start";
    GET_WIN(w, win, fname);
    if (w->started || w->lock_all || win_nlocked(w))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "an access epoch is open");
    int *r, n, rc = group_ranks(w, group, &r, &n);
    if (rc != MPI_SUCCESS)
        return WIN_ERR(win, rc, fname);
    w->fence = 0; /* as in MPI_Win_lock */
    for (int i = 0; i < n; i++) {
        win_peer_t *p = &w->peer[r[i]];
        p->acc_epochs++;
        if (assert & MPI_MODE_NOCHECK) {
            p->flags |= WIN_PF_START;
        } else if (w->flavor == MPI_WIN_FLAVOR_SHARED) {
            pscw_post_wait(w, r[i]);
            p->flags |= WIN_PF_START;
        } else {
            p->flags |= WIN_PF_STARTING; /* the post is awaited at the first operation */
        }
    }
    free(w->start_list);
    w->start_list = r;
    w->nstart = n;
    w->started = 1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_start, PMPI_Win_start)

int PMPI_Win_complete(MPI_Win win)
{
    static const char fname[] = "MPI_Win_complete";
    GET_WIN(w, win, fname);
    if (!w->started)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no MPI_Win_start epoch is open");
    int rc = win_wait_local(w);
    for (int i = 0; i < w->nstart && rc == MPI_SUCCESS; i++) {
        int t = w->start_list[i];
        win_peer_t *p = &w->peer[t];
        if (p->flags & WIN_PF_START) /* (a STARTING target was issued nothing) */
            rc = win_flush_target(w, t);
        p->flags &= (uint8_t) ~(WIN_PF_START | WIN_PF_STARTING);
        if (rc == MPI_SUCCESS)
            rc = pscw_publish(w, t);
    }
    touched_compact(w);
    w->started = 0;
    w->nstart = 0;
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_complete, PMPI_Win_complete)

int PMPI_Win_wait(MPI_Win win)
{
    static const char fname[] = "MPI_Win_wait";
    GET_WIN(w, win, fname);
    if (!w->posted)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no MPI_Win_post epoch is open");
    vnic_wait(mpii.vnic, pscw_completed, w, -1);
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    w->posted = 0;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_wait, PMPI_Win_wait)

int PMPI_Win_test(MPI_Win win, int *flag)
{
    static const char fname[] = "MPI_Win_test";
    GET_WIN(w, win, fname);
    if (!flag)
        return WIN_ERR(win, MPI_ERR_ARG, fname);
    if (!w->posted)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no MPI_Win_post epoch is open");
    mpii_progress();
    *flag = pscw_completed(w);
    if (*flag) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        w->posted = 0;
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_test, PMPI_Win_test)

/* ---------------------------------------------------------------- passive target */

static BASE_NOINLINE int win_lock_full(int lock_type, int rank, int assert, MPI_Win win)
{
    static const char fname[] = "MPI_Win_lock";
    GET_WIN(w, win, fname);
    if (lock_type != MPI_LOCK_SHARED && lock_type != MPI_LOCK_EXCLUSIVE)
        return WIN_ERRF(win, MPI_ERR_LOCKTYPE, fname, "lock type %d", lock_type);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    win_peer_t *p = &w->peer[rank];
    if (w->lock_all || (p->flags & WIN_PF_LOCKED))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname,
                        "rank %d is already locked by this process in this window", rank);
    if (w->started || w->posted)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "a PSCW epoch is open on the window");
    w->fence = 0; /* a fence followed by a lock opened no epoch: RMA after unlock is erroneous */
    p->flags |= WIN_PF_LOCKED;
    p->lock_type = (uint8_t)lock_type;
    w->nlock_opened++;
    if (assert & MPI_MODE_NOCHECK) {
        p->flags |= WIN_PF_ACQUIRED | WIN_PF_NOCHECK;
        return MPI_SUCCESS;
    }
    if (rank == w->rank || w->flavor == MPI_WIN_FLAVOR_SHARED) {
        int rc = lock_acquire(w, rank, lock_type);
        if (rc != MPI_SUCCESS)
            return WIN_ERR(win, rc, fname);
        p->flags |= WIN_PF_ACQUIRED;
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
    }
    return MPI_SUCCESS;
}

/* The window of h (win_last, then the handle table when MPI is active), else NULL or
 * win_none (the full paths raise the error). */
static inline mpii_win_t *win_lookup(MPI_Win h)
{
    mpii_win_t *w = __atomic_load_n(&win_last, __ATOMIC_RELAXED);
    if (BASE_LIKELY(w->handle == h))
        return w;
    w = BASE_LIKELY(mpii.state == MPII_ACTIVE) ? mpii_win_get(h) : NULL;
    if (w)
        __atomic_store_n(&win_last, w, __ATOMIC_RELAXED);
    return w;
}

/* MPI_Win_lock and MPI_Win_unlock of another rank of a window that is not shared are
 * bookkeeping alone while nothing is issued in the epoch (the lock word is taken at the
 * first operation). That case is inlined here, with no call and no saved register, and
 * its stores are constants and arguments: the peer's flags go from none to WIN_PF_LOCKED
 * and back, and w->fast_locked from 0 to rank + 1 and back (one such epoch at a time;
 * others are counted by the full paths), so a lock/unlock pair has no chain from one
 * call's store through the next call's load (only branches read the loads). Everything
 * else takes the full paths. */
int PMPI_Win_lock(int lock_type, int rank, int assert, MPI_Win win)
{
    mpii_win_t *w = win_lookup(win);
    if (BASE_LIKELY(w && (unsigned)rank < (unsigned)w->size && rank != w->rank && !assert &&
                    (lock_type == MPI_LOCK_SHARED || lock_type == MPI_LOCK_EXCLUSIVE) &&
                    !w->lock_full && !w->fast_locked)) {
        win_peer_t *p = &w->peer[rank];
        if (BASE_LIKELY(p->flags == 0)) {
            w->fence = 0;
            p->flags = WIN_PF_LOCKED;
            p->lock_type = (uint8_t)lock_type;
            w->fast_locked = rank + 1;
            return MPI_SUCCESS;
        }
    }
    return win_lock_full(lock_type, rank, assert, win);
}
MPII_WEAK(MPI_Win_lock, PMPI_Win_lock)

static BASE_NOINLINE int win_unlock_full(int rank, MPI_Win win)
{
    static const char fname[] = "MPI_Win_unlock";
    GET_WIN(w, win, fname);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    win_peer_t *p = &w->peer[rank];
    if (!(p->flags & WIN_PF_LOCKED))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "rank %d is not locked", rank);
    /* Not acquired: nothing was issued to it in this epoch (the first operation takes it). */
    int rc = p->flags & WIN_PF_ACQUIRED ? win_flush_target(w, rank) : MPI_SUCCESS;
    if (rc == MPI_SUCCESS && (p->flags & WIN_PF_ACQUIRED) && !(p->flags & WIN_PF_NOCHECK))
        rc = lock_release(w, rank, p->lock_type);
    p->flags &= (uint8_t) ~(WIN_PF_LOCKED | WIN_PF_ACQUIRED | WIN_PF_NOCHECK);
    if (w->fast_locked == rank + 1)
        w->fast_locked = 0;
    else
        w->nlock_closed++;
    if (w->ntouched)
        touched_compact(w);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}

int PMPI_Win_unlock(int rank, MPI_Win win)
{
    mpii_win_t *w = win_lookup(win);
    if (BASE_LIKELY(w && (unsigned)rank < (unsigned)w->size && w->fast_locked == rank + 1 &&
                    !w->ntouched)) {
        win_peer_t *p = &w->peer[rank];
        if (BASE_LIKELY(p->flags == WIN_PF_LOCKED)) {
            p->flags = 0;
            w->fast_locked = 0;
            return MPI_SUCCESS;
        }
    }
    return win_unlock_full(rank, win);
}
MPII_WEAK(MPI_Win_unlock, PMPI_Win_unlock)

int PMPI_Win_lock_all(int assert, MPI_Win win)
{
    static const char fname[] = "MPI_Win_lock_all";
    GET_WIN(w, win, fname);
    if (w->lock_all || win_nlocked(w))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "a lock epoch is already open");
    if (w->started || w->posted)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "a PSCW epoch is open on the window");
    w->fence = 0;
    w->lock_all = 1;
    w->lock_all_nocheck = (assert &MPI_MODE_NOCHECK) != 0;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_lock_all, PMPI_Win_lock_all)

int PMPI_Win_unlock_all(MPI_Win win)
{
    static const char fname[] = "MPI_Win_unlock_all";
    GET_WIN(w, win, fname);
    if (!w->lock_all)
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no MPI_Win_lock_all epoch is open");
    int rc = win_flush_touched(w);
    for (int i = 0; i < w->ntouched; i++) {
        int t = w->touched[i];
        if (w->peer[t].flags & WIN_PF_LOCKALL) {
            int r2 = lock_release(w, t, MPI_LOCK_SHARED);
            if (rc == MPI_SUCCESS)
                rc = r2;
            w->peer[t].flags &= (uint8_t)~WIN_PF_LOCKALL;
        }
    }
    touched_compact(w);
    w->lock_all = 0;
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_unlock_all, PMPI_Win_unlock_all)

static int passive_on(mpii_win_t *w, int rank)
{
    return w->lock_all || (w->peer[rank].flags & WIN_PF_LOCKED);
}

int PMPI_Win_flush(int rank, MPI_Win win)
{
    static const char fname[] = "MPI_Win_flush";
    GET_WIN(w, win, fname);
    /* The common case inline: a passive epoch on rank, nothing in flight that needs
     * waiting for, no vnic puts to complete there; only this rank's stores to order. */
    if (BASE_LIKELY((unsigned)rank < (unsigned)w->size)) {
        unsigned f = w->peer[rank].flags;
        if (BASE_LIKELY(!(f & WIN_PF_DIRTY) && (w->lock_all || (f & WIN_PF_LOCKED)) &&
                        !(w->am_out | w->inflight) && !w->nreqs)) {
            __atomic_thread_fence(__ATOMIC_RELEASE);
            return MPI_SUCCESS;
        }
    }
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    if (!passive_on(w, rank))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch on rank %d", rank);
    int rc = win_complete_target(w, rank);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_flush, PMPI_Win_flush)

int PMPI_Win_flush_local(int rank, MPI_Win win)
{
    static const char fname[] = "MPI_Win_flush_local";
    GET_WIN(w, win, fname);
    if (rank == MPI_PROC_NULL)
        return MPI_SUCCESS;
    if (rank < 0 || rank >= w->size)
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    if (!passive_on(w, rank))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch on rank %d", rank);
    int rc = win_wait_local(w);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_flush_local, PMPI_Win_flush_local)

int PMPI_Win_flush_all(MPI_Win win)
{
    static const char fname[] = "MPI_Win_flush_all";
    GET_WIN(w, win, fname);
    if (!w->lock_all && !win_nlocked(w))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch is open");
    int rc = win_complete_touched(w);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    touched_compact(w);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_flush_all, PMPI_Win_flush_all)

int PMPI_Win_flush_local_all(MPI_Win win)
{
    static const char fname[] = "MPI_Win_flush_local_all";
    GET_WIN(w, win, fname);
    if (!w->lock_all && !win_nlocked(w))
        return WIN_ERRF(win, MPI_ERR_RMA_SYNC, fname, "no passive-target epoch is open");
    int rc = win_wait_local(w);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}
MPII_WEAK(MPI_Win_flush_local_all, PMPI_Win_flush_local_all)

int PMPI_Win_sync(MPI_Win win)
{
    GET_WIN(w, win, "MPI_Win_sync");
    (void)w;
    __atomic_thread_fence(__ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Win_sync, PMPI_Win_sync)
