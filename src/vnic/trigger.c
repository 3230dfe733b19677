/* trigger.c — triggered operations (vnic.h, "triggered operations"; seed 003).
 *
 * TABLE. Each rank keeps a header and VNIC_TRIG_MAX entries of two cache lines in its shm
 * area, after its trigger line (vnic_trig_line_t), so the ranks of its host read and claim
 * entries with plain loads and compare-and-swaps. An entry's state word is generation << 8 | FREE,
 * ARMED, CLAIMED or DONE. The owner writes an entry's fields only while it is FREE (no one else
 * touches it then), then stores ARMED with release order. A runner takes an ARMED entry with a
 * compare-and-swap of the whole word to CLAIMED, so a look at an entry that was reaped and
 * armed again since (the next generation) never takes it; after that the entry is the
 * runner's until it stores DONE (a target) or FREE (the owner).
 *   - The owner (trig_own, in its progress): an armed entry whose counter reached its
 *     threshold is posted with vnic_post from the owner's private copy of the operation,
 *     then freed. A DONE entry is reaped: its buffer deregistered, and for a failure the
 *     error counted and lcntr moved (vnic_cntr_complete: the error count is private).
 *   - The target (trig_help, in its progress), for a peer-runnable entry: validates its
 *     own region, copies with vnic_copy_alone (memcpy from the owner's heap, or CMA),
 *     applies RCNTR to its own counter, moves the owner's lcntr on success, stores DONE with
 *     the status, and wakes the owner and whoever watches the counters it moved. A target
 *     that cannot reach the buffer (VNIC_AGAIN: no CMA) hands the entry back to the owner
 *     (target -1, ARMED again).
 * An operation of a chain (bcast: each rank forwards to the next once its data is in)
 * therefore runs while either of its two ends is in the library: a rank that computes
 * stalls the chain only if its neighbour on the edge computes too.
 *
 * HELP AND WATCH. Arming a peer-runnable entry for target t sets t's bit in the owner's
 * watch (every move of one of the owner's counters wakes t: shm's direct counter updates,
 * vnic_cntr_add, a runner's moves) and the owner's bit in t's help; the header's `armed`
 * word marks the entries to look at. A target clears its help word before it looks, and
 * sets a bit again when that owner still holds an armed entry for it, so a post that races
 * with the look is never missed. The owner recomputes its watch from its armed entries as
 * it reaps. Bits are local indices; ranks at index 64 and up run their own entries only. */
#include <stdlib.h>
#include <string.h>

#include "vnic/vnic_impl.h"

enum { TRIG_FREE = 0, TRIG_ARMED = 1, TRIG_CLAIMED = 2, TRIG_DONE = 3 };
#define TRIG_STATE(w) ((unsigned)((w)&0xffu))
#define TRIG_GEN(w) ((w) & ~(uint64_t)0xffu)
#define TRIG_NONE UINT32_MAX
#define TRIG_LOCAL_MAX 64

/* The shared part of an entry: written by the owner while FREE, read by runners. */
typedef struct trig_entry {
    uint64_t state;
    uint64_t threshold;
    uint32_t cntr;   /* the owner's trigger counter id */
    uint32_t lcntr;  /* the owner's completion counter id, or TRIG_NONE */
    int32_t target;  /* world rank that may run it besides the owner, or -1 */
    uint32_t opcode; /* PUT or GET (peer-runnable entries) */
    uint32_t flags;  /* 0 or VNIC_F_RCNTR */
    uint32_t rcntr;
    uint32_t lkey; /* the owner's registration of its buffer (0: no bytes) */
    uint32_t rkey; /* the target's region */
    uint64_t roff;
    uint64_t len;
    int32_t status; /* DONE: FMPL_SUCCESS or the error */
    uint32_t pad0;
    char pad[56];
} trig_entry_t;
_Static_assert(sizeof(trig_entry_t) == 128, "trigger entry: two cache lines");

typedef struct trig_header {
    uint64_t armed; /* bit i: entry i may be armed for a target (the owner writes it) */
    char pad[120];
} trig_header_t;
_Static_assert(sizeof(trig_header_t) + VNIC_TRIG_MAX * sizeof(trig_entry_t) ==
                   VNIC_TRIG_TABLE_BYTES,
               "the trigger table fills the room shm.c leaves for it");

/* The owner's private part of an entry. */
typedef struct trig_priv {
    vnic_op_t op;      /* the operation, its arrays pointing at the copies below */
    struct iovec *iov; /* copy of a local IOV descriptor's array */
    vnic_rseg_t *seg;  /* copy of a remote IOV descriptor's array */
    vnic_cntr_t *cntr; /* the trigger counter */
    vnic_key_t lkey;   /* registration for the target (0: none) */
    int target_local;  /* the target's local index, or -1 */
} trig_priv_t;

struct vnic_trig {
    trig_header_t *hdr; /* in this rank's heap; the entries follow it */
    trig_entry_t *table;
    uint64_t used; /* bit i: entry i armed, claimed or done */
    uint64_t gen;  /* next generation (multiple of 256) */
    int me_local;  /* this rank's local index, or -1 (not below TRIG_LOCAL_MAX) */
    int in_progress;
    trig_priv_t priv[VNIC_TRIG_MAX];
};

static inline trig_entry_t *trig_entries(trig_header_t *h)
{
    return (trig_entry_t *)(void *)(h + 1);
}

/* The table that follows a trigger line. */
static inline trig_header_t *trig_table_of(vnic_trig_line_t *line)
{
    return (trig_header_t *)(void *)(line + 1);
}

int vnic_trig_open(vnic_t *v)
{
    v->trig_line = vnic_shm_trig_line(v->local, v->rank);
    struct vnic_trig *T = v->trig_line ? calloc(1, sizeof *T) : NULL;
    if (!T)
        return FMPL_ERR_NOMEM;
    T->hdr = trig_table_of(v->trig_line);
    memset(T->hdr, 0, VNIC_TRIG_TABLE_BYTES);
    T->table = trig_entries(T->hdr);
    T->gen = 256;
    T->me_local = v->nodes->local_rank < TRIG_LOCAL_MAX ? v->nodes->local_rank : -1;
    v->trig = T;
    return FMPL_SUCCESS;
}

/* The local index of world rank w that may run an entry of this rank's, or -1. */
static int trig_target_local(vnic_t *v, const vnic_op_t *op)
{
    struct vnic_trig *T = v->trig;
    if (!T || T->me_local < 0 || v->force_udp || op->peer == v->rank ||
        (op->opcode != VNIC_OP_PUT && op->opcode != VNIC_OP_GET) ||
        op->local.kind != VNIC_DESC_CONTIG || op->remote.kind != VNIC_DESC_CONTIG ||
        (op->flags & ~(uint32_t)VNIC_F_RCNTR) || !vnic_shm_trig_line(v->local, op->peer))
        return -1;
    int j = vnic_local_index(v, op->peer);
    return j < TRIG_LOCAL_MAX ? j : -1;
}

/* Copies op's descriptor arrays into p (so the caller's may go). */
static int trig_copy_arrays(trig_priv_t *p)
{
    vnic_op_t *op = &p->op;
    if (op->local.kind == VNIC_DESC_IOV && op->local.u.iov.cnt > 0) {
        size_t n = (size_t)op->local.u.iov.cnt * sizeof *p->iov;
        if (!(p->iov = malloc(n)))
            return FMPL_ERR_NOMEM;
        memcpy(p->iov, op->local.u.iov.iov, n);
        op->local.u.iov.iov = p->iov;
    }
    if (op->remote.kind == VNIC_DESC_IOV && op->remote.u.iov.cnt > 0) {
        size_t n = (size_t)op->remote.u.iov.cnt * sizeof *p->seg;
        if (!(p->seg = malloc(n)))
            return FMPL_ERR_NOMEM;
        memcpy(p->seg, op->remote.u.iov.seg, n);
        op->remote.u.iov.seg = p->seg;
    }
    return FMPL_SUCCESS;
}

/* Frees entry i (claimed by this rank, or DONE): its registration and copies; fail: the
 * operation's error, completed through its lcntr. */
static void trig_release(vnic_t *v, struct vnic_trig *T, int i, int fail)
{
    trig_priv_t *p = &T->priv[i];
    if (p->lkey)
        vnic_mr_dereg(v, p->lkey);
    if (fail)
        vnic_cntr_complete(p->op.lcntr, fail);
    free(p->iov);
    free(p->seg);
    memset(p, 0, sizeof *p);
    __atomic_store_n(&T->table[i].state, T->gen | TRIG_FREE, __ATOMIC_RELEASE);
    T->gen += 256;
    T->used &= ~(1ull << i);
    v->trig_active--;
}

int vnic_post_triggered(vnic_t *v, const vnic_op_t *op, vnic_cntr_t *cntr, uint64_t threshold)
{
    size_t total;
    int rc = vnic_op_check(v, op, &total);
    if (rc)
        return rc;
    if (!cntr || cntr->v != v)
        return FMPL_ERR_ARG;
    struct vnic_trig *T = v->trig;
    if (!T)
        return FMPL_ERR_UNSUPPORTED;
    if (T->used == ~0ull)
        return FMPL_ERR_NOMEM;
    int i = __builtin_ctzll(~T->used);
    trig_priv_t *p = &T->priv[i];
    memset(p, 0, sizeof *p);
    p->op = *op;
    p->cntr = cntr;
    p->target_local = trig_target_local(v, op);
    if ((rc = trig_copy_arrays(p))) {
        free(p->iov);
        memset(p, 0, sizeof *p);
        return rc;
    }
    if (p->target_local >= 0 && total &&
        vnic_mr_reg(v, op->local.u.contig.addr, total,
                    op->opcode == VNIC_OP_PUT ? VNIC_ACC_REMOTE_READ : VNIC_ACC_REMOTE_WRITE,
                    &p->lkey))
        p->target_local = -1; /* no key left: this rank runs it */
    trig_entry_t *e = &T->table[i];
    /* (the three words a target reads before it claims: atomic, as it may look at a stale
     * generation while they change; the others it reads after its claim) */
    __atomic_store_n(&e->threshold, threshold, __ATOMIC_RELAXED);
    __atomic_store_n(&e->cntr, cntr->id, __ATOMIC_RELAXED);
    __atomic_store_n(&e->target, p->target_local >= 0 ? op->peer : -1, __ATOMIC_RELAXED);
    e->lcntr = op->lcntr ? op->lcntr->id : TRIG_NONE;
    e->opcode = (uint32_t)op->opcode;
    e->flags = op->flags;
    e->rcntr = op->rcntr;
    e->lkey = p->lkey;
    e->rkey = op->remote.key;
    e->roff = op->remote.kind == VNIC_DESC_CONTIG ? op->remote.u.off : 0;
    e->len = total;
    e->status = FMPL_SUCCESS;
    __atomic_store_n(&e->state, T->gen | TRIG_ARMED, __ATOMIC_RELEASE);
    T->used |= 1ull << i;
    v->trig_active++;
    if (p->target_local >= 0) {
        int t = p->target_local;
        __atomic_fetch_or(&T->hdr->armed, 1ull << i, __ATOMIC_RELEASE);
        __atomic_fetch_or(&v->trig_line->watch, 1ull << t, __ATOMIC_RELAXED);
        __atomic_fetch_or(&vnic_shm_trig_line(v->local, op->peer)->help, 1ull << T->me_local,
                          __ATOMIC_SEQ_CST);
        vnic_peer_wake(v, op->peer); /* a target asleep may run it now */
    }
    return FMPL_SUCCESS;
}

/* This rank's entries: runs the armed ones whose threshold is reached, reaps those a
 * target ran. Recomputes the watch. */
static int trig_own(vnic_t *v, struct vnic_trig *T)
{
    int n = 0;
    uint64_t watch = 0, armed = 0;
    for (uint64_t u = T->used; u; u &= u - 1) {
        int i = __builtin_ctzll(u);
        trig_entry_t *e = &T->table[i];
        trig_priv_t *p = &T->priv[i];
        uint64_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
        switch (TRIG_STATE(st)) {
        case TRIG_ARMED:
            if (vnic_cntr_read(p->cntr) >= e->threshold &&
                __atomic_compare_exchange_n(&e->state, &st, TRIG_GEN(st) | TRIG_CLAIMED, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                int rc = vnic_post(v, &p->op);
                trig_release(v, T, i, rc);
                n++;
            } else if (TRIG_STATE(st) == TRIG_ARMED &&
                       __atomic_load_n(&e->target, __ATOMIC_RELAXED) >= 0) {
                watch |= 1ull << p->target_local;
                armed |= 1ull << i;
            }
            break;
        case TRIG_DONE:
            trig_release(v, T, i, __atomic_load_n(&e->status, __ATOMIC_RELAXED));
            n++;
            break;
        default: break; /* CLAIMED: its target runs it now */
        }
    }
    if (__atomic_load_n(&v->trig_line->watch, __ATOMIC_RELAXED) != watch)
        __atomic_store_n(&v->trig_line->watch, watch, __ATOMIC_RELAXED);
    if (__atomic_load_n(&T->hdr->armed, __ATOMIC_RELAXED) != armed)
        __atomic_store_n(&T->hdr->armed, armed, __ATOMIC_RELAXED);
    return n;
}

/* Runs entry e of world rank owner here, its target (claimed). Returns its status, or
 * VNIC_AGAIN when this rank cannot reach the owner's buffer. */
static int trig_run(vnic_t *v, int owner, const trig_entry_t *e)
{
    int put = e->opcode == VNIC_OP_PUT;
    vnic_region_t r;
    if (!vnic_region_read(v->regions, v->nregions, e->rkey, &r) ||
        !(r.access & (put ? VNIC_ACC_REMOTE_WRITE : VNIC_ACC_REMOTE_READ)) ||
        !vnic_region_bounds_ok(r.len, e->roff, e->len))
        return FMPL_ERR_KEY;
    if (e->len) {
        void *mine = (char *)(uintptr_t)r.base + e->roff;
        int rc = vnic_copy_alone(v, owner, put, mine, e->lkey, 0, (size_t)e->len);
        if (rc)
            return rc;
    }
    if (put && (e->flags & VNIC_F_RCNTR)) {
        __atomic_fetch_add(vnic_cntr_word(v, e->rcntr), 1, __ATOMIC_SEQ_CST);
        vnic_shm_cntr_moved(v->local, v->rank);
    }
    return FMPL_SUCCESS;
}

/* The entries other ranks of this host armed for this one (its help word). */
static int trig_help(vnic_t *v, uint64_t help)
{
    int n = 0;
    for (; help; help &= help - 1) {
        int j = __builtin_ctzll(help);
        if (j >= v->nodes->nlocal)
            break; /* (no such rank: a stray bit) */
        int owner = v->nodes->local_ranks[j];
        trig_header_t *h = trig_table_of(vnic_shm_trig_line(v->local, owner));
        trig_entry_t *tab = trig_entries(h);
        int mine = 0;
        uint64_t armed = __atomic_load_n(&h->armed, __ATOMIC_ACQUIRE);
        for (; armed; armed &= armed - 1) {
            trig_entry_t *e = &tab[__builtin_ctzll(armed)];
            uint64_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
            if (TRIG_STATE(st) != TRIG_ARMED ||
                __atomic_load_n(&e->target, __ATOMIC_RELAXED) != v->rank)
                continue;
            uint64_t *cw =
                vnic_shm_peer_cntr(v->local, owner, __atomic_load_n(&e->cntr, __ATOMIC_RELAXED));
            if (!cw || __atomic_load_n(cw, __ATOMIC_ACQUIRE) <
                           __atomic_load_n(&e->threshold, __ATOMIC_RELAXED)) {
                mine = 1;
                continue;
            }
            if (!__atomic_compare_exchange_n(&e->state, &st, TRIG_GEN(st) | TRIG_CLAIMED, 0,
                                             __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE))
                continue;
            int rc = trig_run(v, owner, e);
            if (rc == VNIC_AGAIN) { /* the owner runs it */
                __atomic_store_n(&e->target, -1, __ATOMIC_RELAXED);
                __atomic_store_n(&e->state, TRIG_GEN(st) | TRIG_ARMED, __ATOMIC_RELEASE);
                vnic_peer_wake(v, owner);
                continue;
            }
            if (rc == FMPL_SUCCESS && e->lcntr != TRIG_NONE) {
                uint64_t *lw = vnic_shm_peer_cntr(v->local, owner, e->lcntr);
                if (lw)
                    __atomic_fetch_add(lw, 1, __ATOMIC_RELEASE);
            }
            e->status = rc;
            __atomic_store_n(&e->state, TRIG_GEN(st) | TRIG_DONE, __ATOMIC_RELEASE);
            vnic_shm_cntr_moved(v->local, owner);
            n++;
        }
        if (mine)
            __atomic_fetch_or(&v->trig_line->help, 1ull << j, __ATOMIC_RELAXED);
    }
    return n;
}

int vnic_trig_progress(vnic_t *v)
{
    struct vnic_trig *T = v->trig;
    if (!T || T->in_progress)
        return 0;
    T->in_progress = 1; /* vnic_post may progress (back-pressure): no nested look */
    int n = 0;
    if (__atomic_load_n(&v->trig_line->help, __ATOMIC_RELAXED))
        n += trig_help(v, __atomic_exchange_n(&v->trig_line->help, 0, __ATOMIC_ACQ_REL));
    if (v->trig_active)
        n += trig_own(v, T);
    T->in_progress = 0;
    return n;
}

void vnic_trig_wake(vnic_t *v)
{
    if (v->trig_line && __atomic_load_n(&v->trig_line->watch, __ATOMIC_RELAXED))
        vnic_shm_cntr_moved(v->local, v->rank);
}

typedef struct trig_settled {
    const trig_entry_t *e;
} trig_settled_t;

static int trig_not_claimed(void *arg)
{
    const trig_entry_t *e = ((trig_settled_t *)arg)->e;
    return TRIG_STATE(__atomic_load_n(&e->state, __ATOMIC_ACQUIRE)) != TRIG_CLAIMED;
}

/* Drops the entries on cntr (every entry: cntr NULL) that nobody runs, waits for those a
 * target runs now and reaps them. Returns the number dropped. */
static int trig_drop(vnic_t *v, vnic_cntr_t *cntr)
{
    struct vnic_trig *T = v->trig;
    int dropped = 0;
    for (uint64_t u = T ? T->used : 0; u; u &= u - 1) {
        int i = __builtin_ctzll(u);
        if (cntr && T->priv[i].cntr != cntr)
            continue;
        trig_entry_t *e = &T->table[i];
        trig_settled_t w = {e};
        for (;;) {
            uint64_t st = __atomic_load_n(&e->state, __ATOMIC_ACQUIRE);
            if (TRIG_STATE(st) == TRIG_DONE) {
                trig_release(v, T, i, e->status);
                break;
            }
            if (TRIG_STATE(st) == TRIG_ARMED &&
                __atomic_compare_exchange_n(&e->state, &st, TRIG_GEN(st) | TRIG_CLAIMED, 0,
                                            __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
                trig_release(v, T, i, 0);
                dropped++;
                break;
            }
            /* a target runs it now (or hands it back: ARMED again) */
            T->in_progress++; /* the wait's progress must not reap the entry under us */
            int rc = vnic_wait(v, trig_not_claimed, &w, -1);
            T->in_progress--;
            if (rc) { /* the target died with it: nobody finishes it */
                trig_release(v, T, i, 0);
                break;
            }
        }
    }
    return dropped;
}

int vnic_trig_cancel(vnic_t *v, vnic_cntr_t *cntr)
{
    if (!v || !cntr || cntr->v != v)
        return FMPL_ERR_ARG;
    return trig_drop(v, cntr);
}

void vnic_trig_close(vnic_t *v)
{
    struct vnic_trig *T = v->trig;
    if (!T)
        return;
    trig_drop(v, NULL);
    __atomic_store_n(&T->hdr->armed, 0, __ATOMIC_RELEASE);
    __atomic_store_n(&v->trig_line->watch, 0, __ATOMIC_RELAXED);
    v->trig = NULL;
    free(T);
}
