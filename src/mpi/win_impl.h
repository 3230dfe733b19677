/* win_impl.h — private to the window files of src/mpi (win.c creation, win_rma.c put/get,
 * win_atomic.c accumulates, win_sync.c synchronization): the window object and the few
 * calls they share.
 *
 * A window is a thin layer over the vnic. Every rank of the window owns
 *   - its window memory, reached by peers as (rank, data_key, data_off): the shared heap
 *     (VNIC_KEY_HEAP) for MPI_Win_allocate / allocate_shared, or a registration of the
 *     user's memory for MPI_Win_create, or per-attachment registrations (dynamic);
 *   - a control block (win_ctrl_t + PSCW words) in its shared heap, reached as
 *     (rank, VNIC_KEY_HEAP, ctrl_off): the window lock word, the accumulate stripe locks
 *     (one word, a bit per stripe), one PSCW word per rank (win_sync.c), and (dynamic
 *     windows) the table of attached regions;
 *   - a private 8-byte sync word registered with its own key: an atomic on it travels in
 *     the same ordered stream as this origin's earlier puts (shm cells, the udp stream),
 *     so its answer proves those puts complete at the target (win_peer_quiesce).
 * Peers on this host map heap memory, so `data` / `ctrl` hold direct addresses and
 * operations become loads, stores and CPU atomics; otherwise they are vnic operations,
 * which the udp progress thread serves while the target computes.
 *
 * Memory: the window object is O(1) plus one win_peer_t (64 bytes) per rank here and
 * one 8-byte PSCW word per rank in the control block. */
#ifndef FMPL_MPI_WIN_IMPL_H
#define FMPL_MPI_WIN_IMPL_H

#include "mpi/mpi_impl.h"

#define WIN_STRIPES 64             /* accumulate stripe locks per rank and window */
#define WIN_STRIPE_SHIFT 8         /* a stripe covers 256-byte granules (mod WIN_STRIPES) */
#define WIN_DYN_MAX 1024           /* attached regions per rank (dynamic windows) */
#define WIN_LOCK_EXCL (1ull << 40) /* lock word: exclusive holder; low bits: shared count */

/* The fixed head of a control block (then pscw[size], then the dynamic table). */
typedef struct win_ctrl {
    uint64_t lock;     /* window lock word */
    uint64_t dyn_gen;  /* dynamic: bumped at every attach / detach */
    uint64_t dyn_used; /* dynamic: table entries [0, dyn_used) may be in use */
    uint64_t pad[5];
    uint64_t stripes; /* accumulate stripe locks: bit i set while stripe i is taken */
    uint64_t pad1[7];
    /* direct windows: bit i set when element atomics may run on stripe i (win_atomic.c,
     * "Block accumulates"): amo_pending first, amo_ready once no block holder in plain
     * mode can be left there */
    uint64_t amo_pending, amo_ready;
    uint64_t pad2[6];
} win_ctrl_t;

/* One attached region of a dynamic window (in the owner's control block). */
typedef struct win_dyn {
    uint64_t base, len; /* len 0: free entry */
    uint64_t key;
    uint64_t pad;
} win_dyn_t;

enum {
    WIN_PF_START = 1,     /* in the access group of the current MPI_Win_start, post seen */
    WIN_PF_LOCKALL = 2,   /* shared lock taken during this lock_all epoch */
    WIN_PF_DIRTY = 4,     /* vnic puts posted since the last remote completion */
    WIN_PF_STARTING = 8,  /* in that group, its post not seen yet (becomes WIN_PF_START) */
    WIN_PF_LOCKED = 16,   /* MPI_Win_lock epoch open on it */
    WIN_PF_ACQUIRED = 32, /* ... and the lock word taken (lazily, at the first use) */
    WIN_PF_TOUCHED = 64,  /* in the window's `touched` list */
    WIN_PF_NOCHECK = 128, /* MPI_Win_lock with MPI_MODE_NOCHECK: held without the word */
};

typedef struct win_peer {
    char *data;        /* direct address of its window memory, or NULL (vnic operations) */
    uint64_t *ctrl;    /* direct address of its control block, or NULL */
    uint64_t ctrl_off; /* its control block in its heap */
    int64_t size;      /* bytes */
    int32_t disp_unit;
    uint32_t data_key; /* region of its memory; VNIC_KEY_HEAP: at ctrl_off + ctrl bytes */
    uint32_t sync_key;
    uint32_t acc_epochs; /* PSCW access epochs to it begun (MPI_Win_start) */
    uint32_t exp_epochs; /* PSCW exposure epochs to it posted (MPI_Win_post) */
    uint32_t am_id;      /* its window in its win_am.c registry */
    uint32_t am_out;     /* accumulate chunks sent to it (win_am.c), answers not yet in */
    uint8_t flags;       /* WIN_PF_* */
    uint8_t lock_type;   /* MPI_LOCK_SHARED / EXCLUSIVE while WIN_PF_LOCKED */
    uint8_t aligned8;    /* its window memory starts 8-byte aligned (remote atomics) */
} win_peer_t;
_Static_assert(sizeof(win_peer_t) <= 64, "a window costs at most 64 bytes per rank here");

typedef struct mpii_win {
    int handle;
    int flavor;     /* MPI_WIN_FLAVOR_* */
    MPI_Comm comm;  /* the window's own duplicate of the user's communicator */
    mpii_comm_t *c; /* its object */
    int rank, size; /* in comm */
    void *base;     /* this rank's memory (MPI_WIN_BASE) */
    MPI_Aint bytes; /* MPI_WIN_SIZE */
    int disp_unit;  /* MPI_WIN_DISP_UNIT */
    int errh;
    MPI_Info info; /* hints as given (MPI_Win_get_info), never MPI_INFO_NULL */
    char name[MPI_MAX_OBJECT_NAME];
    mpii_attr_t *attrs;
    int direct;       /* every rank reaches every rank's memory with loads and stores */
    win_peer_t *peer; /* [size] */
    uint64_t *ctrl;   /* this rank's control block */
    uint64_t ctrl_bytes;
    size_t share_min; /* smallest direct copy shared with the target (vnic_info) */
    void *mem;        /* what this rank allocated for the window (freed with it) */
    int mem_heap;     /* mem came from the shared heap */
    vnic_key_t data_key, sync_key;
    uint64_t *sync_word;
    /* epochs */
    int fence; /* a fence opened an access/exposure epoch */
    /* What sends MPI_Win_lock to its full path (win_sync.c), a byte each, tested as one
     * word (never stored as one: a wide load over a recent narrow store would stall) */
    union {
        struct {
            uint8_t started;  /* MPI_Win_start: access epoch on the WIN_PF_START(ING) ranks */
            uint8_t posted;   /* MPI_Win_post: exposure epoch open, to post_list */
            uint8_t lock_all; /* MPI_Win_lock_all epoch open */
            uint8_t shared;   /* flavor MPI_WIN_FLAVOR_SHARED */
        };
        uint32_t lock_full;
    };
    int *start_list, nstart;
    int *post_list, npost;
    /* MPI_Win_lock epochs: the one the inlined path opened (its rank + 1, else 0), and
     * the others, opened and closed (win_nlocked; win_sync.c). The inlined pair stores
     * constants and arguments only, so it carries no chain from one call to the next. */
    int fast_locked;
    unsigned nlock_opened, nlock_closed;
    int lock_all_nocheck;
    int *touched, ntouched, captouched; /* ranks with WIN_PF_LOCKALL or WIN_PF_DIRTY */
    vnic_cntr_t *cntr;                  /* local completion of this rank's vnic gets and atomics */
    uint64_t inflight;                  /* operations posted on cntr */
    int accumulate_ordering_none;
    int stores;      /* plain stores into mapped window memory whose full fence is owed */
    int nreqs;       /* win_req.c: requests issued on it and not yet complete */
    int am_id;       /* win_am.c: its id in this rank's registry (-1: none) */
    uint64_t am_out; /* win_am.c: chunks sent, answers not yet in (every target) */
} mpii_win_t;

/* MPI_Win_lock epochs open on w. */
static inline unsigned win_nlocked(const mpii_win_t *w)
{
    return w->nlock_opened - w->nlock_closed + (w->fast_locked != 0);
}

/* The window MPI_Win_lock and MPI_Win_unlock looked up last (win_sync.c), so that a loop
 * on one window skips the handle table and the check that MPI is active: never NULL,
 * win_none (handle 0, which no window has; size 0, which no inlined path accepts) when
 * there is none. win_destroy and mpii_win_finalize point it back at win_none. Read and
 * written with relaxed atomics (any thread). */
extern mpii_win_t *win_last;
extern mpii_win_t win_none;

/* The window behind a handle, or NULL. */
static inline mpii_win_t *mpii_win_get(MPI_Win h)
{
    return (mpii_win_t *)mpii_handle_get(FMPL_MPI_KIND_WIN, h);
}
#define WIN_ERR(w, code, fname) mpii_err(FMPL_MPI_KIND_WIN, (w), (code), (fname))
#define WIN_ERRF(w, code, fname, ...)                                                              \
    mpii_errf(FMPL_MPI_KIND_WIN, (w), (code), (fname), __VA_ARGS__)

/* 1 when this rank may access the peer now without taking anything (lock held, fence or
 * PSCW epoch): the fast paths' test; 0 sends them to the full path. */
static inline int win_access_ready(const mpii_win_t *w, const win_peer_t *p)
{
    return (p->flags & (WIN_PF_LOCKALL | WIN_PF_ACQUIRED)) || w->fence ||
           (w->started && (p->flags & WIN_PF_START));
}

/* The direct address of bytes [disp * disp_unit, + bytes) of target's memory when the fast
 * paths may use it: a live window, target in range and mapped, an epoch covering it, the
 * range inside its window; else NULL (the full path decides, and raises the errors). */
/* Where peer p's window memory starts in its region p->data_key: after its control block
 * in its shared heap, or at 0 of a region of its own. */
static inline uint64_t win_data_off(const mpii_win_t *w, const win_peer_t *p)
{
    return p->data_key == VNIC_KEY_HEAP ? p->ctrl_off + w->ctrl_bytes : 0;
}
/* The region offset of the direct address t in target p's window memory. */
static inline uint64_t win_direct_off(const mpii_win_t *w, const win_peer_t *p, const char *t)
{
    return win_data_off(w, p) + (uint64_t)(t - p->data);
}

static inline char *win_fast_addr(MPI_Win win, int target, MPI_Aint disp, int64_t bytes,
                                  mpii_win_t **wout)
{
    mpii_win_t *w = (mpii_win_t *)mpii_handle_get(FMPL_MPI_KIND_WIN, win);
    if (BASE_UNLIKELY(!w || (unsigned)target >= (unsigned)w->size))
        return NULL;
    const win_peer_t *p = &w->peer[target];
    int64_t at;
    if (BASE_UNLIKELY(!p->data || !win_access_ready(w, p) || disp < 0 ||
                      __builtin_mul_overflow((int64_t)disp, (int64_t)p->disp_unit, &at) ||
                      at > p->size - bytes))
        return NULL;
    *wout = w;
    return p->data + at;
}

/* The full fence that orders this rank's plain stores into mapped window memory before
 * its later loads, when some are owed (win_sync.c, "Completion"): at the end of an epoch
 * and before every get, accumulate or atomic. */
static inline void win_store_fence(mpii_win_t *w)
{
    if (BASE_UNLIKELY(w->stores)) {
        __atomic_thread_fence(__ATOMIC_SEQ_CST);
        w->stores = 0;
    }
}

/* A predefined type whose elements are packed (size == extent) and valid: its size, else 0. */
static inline int win_fast_type(MPI_Datatype t)
{
    if (!FMPL_MPI_DT_IS_PREDEF(t) || FMPL_MPI_DT_PAD(t))
        return 0;
    unsigned id = (unsigned)FMPL_MPI_DT_ID(t);
    return id <= FMPL_MPI_DTID_MAX && mpii_type_fast[id].h == t ? FMPL_MPI_DT_SIZE(t) : 0;
}

/* Offset of the PSCW word of rank `rank` and of the dynamic table in a control block. */
static inline uint64_t win_pscw_off(int rank)
{
    return sizeof(win_ctrl_t) + 8u * (uint64_t)rank;
}
static inline uint64_t win_dyn_off(int size)
{
    return sizeof(win_ctrl_t) + 8u * (uint64_t)size;
}

/* ---- win_sync.c */
/* MPI_SUCCESS when this rank may access `target` now (an epoch covers it), taking the
 * lazily acquired lock of a lock / lock_all epoch; else MPI_ERR_RMA_SYNC. */
int win_access_begin(mpii_win_t *w, int target);
/* Remote completion of everything this rank issued to target (win_peer_quiesce when it
 * posted vnic puts there). */
int win_flush_target(mpii_win_t *w, int target);
/* Remote atomic on a word of peer's control block (direct CPU atomic when mapped). */
uint64_t win_ctrl_atomic(mpii_win_t *w, int target, vnic_opcode_t op, uint64_t off,
                         uint64_t operand, uint64_t compare, int *rc);
/* Waits for this rank's vnic gets / atomics in flight (local completion). */
int win_wait_local(mpii_win_t *w);
/* Marks target as having vnic puts not yet known complete. */
void win_mark_dirty(mpii_win_t *w, int target);

/* ---- win_rma.c */
/* Where a target access lands: checks [disp * disp_unit + layout) against the target's
 * window (MPI_ERR_RMA_RANGE) and resolves dynamic windows; *key / *off / *ptr give the
 * target memory (ptr non-NULL: direct). */
typedef struct win_target {
    int world;
    vnic_key_t key;
    uint64_t off; /* where displacement 0 of the target type lands, in region key */
    char *ptr;    /* direct address of that place, or NULL */
    int aligned8; /* the region's base is 8-byte aligned (vnic atomics) */
} win_target_t;
int win_target_resolve(mpii_win_t *w, int target, MPI_Aint disp, dt_t *t, int64_t count,
                       win_target_t *out);
/* Moves bytes between a local layout (ot, ocount at obuf) and the target's (tt, tcount at
 * tg); opcode VNIC_OP_PUT or VNIC_OP_GET. Blocking when block is set (gets complete). */
int win_transfer(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                 int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount, int block);
/* The same on a mapped target (tg->ptr): memmove or dt_copy, complete at return. */
int win_copy_direct(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                    int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount);
/* A contiguous put (get 0) or get of bytes between o and t, a mapped address in another
 * rank's window memory, copied in part by that rank's CPU (vnic_copy_shared): 1 when
 * done, 0 when the caller must copy (too small, or the vnic declined). */
int win_copy_shared(mpii_win_t *w, int target, int get, void *o, char *t, size_t bytes);
static inline int win_copy_big(mpii_win_t *w, int target, int get, void *o, char *t, size_t bytes)
{
    return BASE_UNLIKELY(bytes >= w->share_min) && target != w->rank &&
           win_copy_shared(w, target, get, o, t, bytes);
}
/* A vnic transfer posted piece by piece (win_transfer in one go; the request-based forms
 * a budget at a time, the rest from progress): both layouts walked from `pos` on. */
#define WIN_IOV_MAX 512 /* pieces per vnic operation (the arrays below: 24 KiB) */
typedef struct win_xfer {
    int target;
    vnic_opcode_t opcode;
    win_target_t tg;
    void *obuf;
    dt_t *ot, *tt; /* borrowed: the caller keeps them alive */
    int64_t ocount, tcount;
    int64_t bytes, pos; /* total; posted so far */
    int contig;         /* both sides contiguous: no iterators */
    dt_iter_t oi, ti;
    vnic_cntr_t *lcntr; /* given to every vnic operation (NULL: complete at post) */
    uint64_t posted;    /* vnic operations posted */
    struct iovec liov[WIN_IOV_MAX], tiov[WIN_IOV_MAX];
    vnic_rseg_t rseg[WIN_IOV_MAX];
} win_xfer_t;
int win_xfer_init(win_xfer_t *x, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                  int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount,
                  vnic_cntr_t *lcntr);
/* Posts the next pieces, at least one and about budget bytes (INT64_MAX: all). */
int win_xfer_step(mpii_win_t *w, win_xfer_t *x, int64_t budget);
/* A completed request (operations complete at issue, MPI_PROC_NULL, nothing to move). */
int win_request_done(MPI_Request *request);

/* ---- win_atomic.c: at the target */
/* Applies a received accumulate to n packed elements at addr of this rank's window memory
 * (roff: their region offset, as origins count stripes): element atomics for aligned
 * 8-byte integers, else the op's kernel under this rank's stripe locks taken without
 * waiting. in / cmp / old: packed (in NULL for MPI_NO_OP; old NULL: not wanted). Returns
 * MPI_SUCCESS, an error class, or -1 when a stripe is busy (nothing done). */
int win_acc_run(mpii_win_t *w, MPI_Op op, int cas, MPI_Datatype bh, char *addr, uint64_t roff,
                int64_t n, const char *in, const char *cmp, char *old);

/* ---- win_am.c: accumulates as active messages to targets this rank does not map */
/* Gives w an id in this rank's registry (and installs the handler); at creation. */
int win_am_register(mpii_win_t *w);
void win_am_unregister(mpii_win_t *w);
/* Sends the accumulate of the packed origin elements (NULL: MPI_NO_OP) onto the target
 * layout (tt, tcount at tg); cas: compare-and-swap with cmp. rbuf non-NULL: fetching,
 * previous values unpacked into (rt, rcount at rbuf). request NULL: a fetching call returns
 * with the values in; else the request completes in progress (MPI_Raccumulate: at once). */
int win_am_issue(mpii_win_t *w, int target, const win_target_t *tg, dt_t *tt, int64_t tcount,
                 MPI_Op op, int cas, MPI_Datatype bh, const char *packed, const char *cmp,
                 void *rbuf, dt_t *rt, int64_t rcount, MPI_Request *request);
/* Waits until every chunk sent to target (-1: to any rank) is answered: applied there. */
int win_am_wait(mpii_win_t *w, int target);

/* ---- win_req.c: request-based operations that are not complete when issued */
/* MPI_Rput / MPI_Rget on a target reached through the vnic: posts the first budget of
 * the transfer and returns a request that progress (or a flush) completes. */
int win_req_transfer(mpii_win_t *w, int target, vnic_opcode_t opcode, void *obuf, dt_t *ot,
                     int64_t ocount, const win_target_t *tg, dt_t *tt, int64_t tcount,
                     MPI_Request *request);
/* Completes (posts the rest of, and waits for) every pending request of w; target >= 0:
 * only those to target. Returns the first error class among them. */
int win_req_drain(mpii_win_t *w, int target);
/* Stream position helper shared by win_rma.c and win_atomic.c: the fake base that target
 * layouts are walked from (offsets = address - base). */
#define WIN_FAKE_BASE ((char *)(uintptr_t)(1ull << 46))

#endif
