/* win_atomic.c — accumulates on windows: MPI_Accumulate, MPI_Get_accumulate,
 * MPI_Fetch_and_op, MPI_Compare_and_swap and their request-based and _c forms.
 *
 * MPI makes accumulates atomic per basic element against each other (same predefined
 * type). Which mechanism guarantees it depends on the element and the window, never on
 * the origin, so that all origins agree at every location:
 *   - direct windows (every rank maps every rank's memory, win.c): elements of 4 or 8
 *     bytes (not the MINLOC/MAXLOC pairs) at aligned addresses are one CPU atomic each:
 *     fetch-add for integer sums, exchange for MPI_REPLACE, a load for MPI_NO_OP,
 *     compare-exchange for MPI_Compare_and_swap, and a compare-exchange loop around the
 *     op's kernel otherwise (max, band, float sums ...). A single-element
 *     MPI_Fetch_and_op on an int64 is one `lock xadd` on the target's memory;
 *   - other windows (udp peers, private memory): 8-byte integer elements at 8-byte
 *     aligned addresses are atomics: CPU atomics from origins that map the target, vnic
 *     remote atomics (FADD, SWAP, CSWAP, posted back to back and completed together; a
 *     CSWAP loop for other ops) from origins that map its control block only, and
 *     element atomics run by the target itself for active messages (below);
 *   - everything else (floating types off direct windows, pairs, long double, complex
 *     double, other sizes, misaligned elements) takes the target's stripe locks: bits
 *     of one word in its control block, one per 256-byte granule modulo WIN_STRIPES, taken in
 *     increasing order (no deadlock), then read, apply the op's kernel, write back, make
 *     the write complete at the target, and release. Never one lock per window:
 *     accumulates on different granules proceed in parallel.
 * Targets whose control block this rank does not map (udp peers) get active messages
 * instead (win_am.c): the target applies them with win_acc_run, which follows the same
 * two rules (element atomics for aligned 8-byte integers, its own stripes otherwise);
 * only a single aligned 8-byte integer sum, replacement, read or compare-and-swap stays
 * one vnic remote atomic there (served while the target computes).
 * Origin and target datatypes may be derived from one predefined type; the origin (and
 * the result) are brought to a native array of that type with dt_copy, the target is
 * walked by the datatype engine's segment iterator.
 *
 * Block accumulates (direct windows, a contiguous run of at least WIN_ACC_BLOCK_MIN
 * aligned 4- or 8-byte elements, not compare-and-swap): one CPU atomic per element caps
 * a large accumulate near 1 GB/s (and a compare-exchange loop per float far below), so
 * the origin takes the target's stripe locks covering the run and applies the op's
 * kernel to the whole block (vectorized, plain loads and stores). Block holders exclude
 * each other by the stripes. The single-element atomics (MPI_Fetch_and_op,
 * MPI_Compare_and_swap, small accumulates) take no stripe: they stay one CPU instruction.
 * What keeps a plain kernel from losing an atomic's update is a per-stripe announcement
 * in the target's control block:
 *   - an atomic on an element of stripe s first checks bit s of amo_ready (one load of a
 *     read-mostly line). Clear, it sets bit s of amo_pending (seq_cst fetch-or), then
 *     waits until stripe word s is seen free once, then sets bit s of amo_ready (a rank
 *     that finds bit s already pending waits for amo_ready instead);
 *   - a block holder takes its stripes (seq_cst compare-and-swap), then reads amo_pending
 *     (seq_cst) and updates each 256-byte granule whose stripe bit is set element by
 *     element with atomics (the same ones the atomics' path uses), the others with the
 *     kernel.
 * Both sides write one word then read the other's (Dekker): in the total order of seq_cst
 * operations either the holder's read sees the pending bit (it uses atomics on that
 * stripe), or its stripe acquisition precedes the announcement, and then the announcer
 * sees the stripe taken and waits until that holder released it (its plain stores are
 * then visible, release/acquire on the stripe word). Holders that come later all see
 * the bit. So no atomic ever runs on a granule while a kernel updates it with plain
 * stores. The bits stay set for the window's life: a stripe that has seen atomics keeps
 * element atomics for blocks (the other 63 keep the kernel). Other windows (udp peers)
 * never run the kernel on 8-byte integers (remote atomics there bypass the stripes). */
#include <stdlib.h>
#include <string.h>

#include "mpi/win_impl.h"

enum { ACC_PLAIN = 0, ACC_CAS = 1 };

#define WIN_ACC_BLOCK_MIN 8 /* elements from which a direct accumulate takes the stripes */

typedef struct acc {
    mpii_win_t *w;
    int target;
    win_target_t tg;
    MPI_Op op;
    int kind; /* ACC_PLAIN / ACC_CAS */
    MPI_Datatype bh;
    dt_t *bdt;
    int esize, eext, cls;
    mpii_kernel_t k;
    int kid;
    int sum_int;
    int fsum;        /* MPI_SUM on a 4- or 8-byte float type (elem_fsum) */
    int bit_int;     /* 1, 2, 3: MPI_BAND, MPI_BOR, MPI_BXOR on an integer type */
    int64_t n;       /* basic elements accessed */
    const char *in;  /* n native origin elements (NULL for MPI_NO_OP) */
    char *res;       /* n native result elements, or NULL */
    const char *cmp; /* MPI_Compare_and_swap: the compare value */
} acc_t;

/* The predefined kind every basic element of t has: >= 0, -1 when mixed, -2 when none. */
static int base_kind(const dt_t *t)
{
    int k = dt_kind(t);
    if (k >= 0)
        return k;
    int nt = 0;
    dt_t *const *types = NULL;
    if (dt_get_contents(t, NULL, NULL, NULL, NULL, NULL, &nt, &types) != FMPL_SUCCESS)
        return -1;
    int kind = -2;
    for (int i = 0; i < nt; i++) {
        int c = base_kind(types[i]);
        if (c == -1)
            return -1;
        if (c == -2)
            continue;
        if (kind == -2)
            kind = c;
        else if (kind != c)
            return -1;
    }
    return kind;
}

/* The predefined handle of a datatype's base kind, or MPI_DATATYPE_NULL. */
static MPI_Datatype base_handle(MPI_Datatype h, dt_t *t)
{
    if (FMPL_MPI_DT_IS_PREDEF(h))
        return h;
    int k = base_kind(t);
    if (k < 0)
        return MPI_DATATYPE_NULL;
    dt_t *b = dt_basic(k);
    for (int id = 1; id <= FMPL_MPI_DTID_MAX; id++)
        if (mpii_type_fast[id].dt == b && mpii_type_fast[id].h != MPI_DATATYPE_NULL)
            return mpii_type_fast[id].h;
    return MPI_DATATYPE_NULL;
}

/* The op's side of a: element type bh (predefined), kernel, atomics' flavour. */
static int acc_prepare(acc_t *a, MPI_Op op, int kind, MPI_Datatype bh)
{
    a->op = op;
    a->kind = kind;
    a->bh = bh;
    a->bdt = mpii_type_get(bh);
    if (!a->bdt)
        return MPI_ERR_TYPE;
    a->esize = FMPL_MPI_DT_SIZE(bh);
    a->eext = (int)dt_extent(a->bdt);
    /* MPI_CHAR accumulates as the small integer it is (as MPICH does). */
    MPI_Datatype kh =
        FMPL_MPI_DT_CLASS(bh) == FMPL_MPI_DTC_CHAR && a->esize == 1 ? MPI_SIGNED_CHAR : bh;
    a->cls = FMPL_MPI_DT_CLASS(kh);
    if (op != MPI_NO_OP && op != MPI_REPLACE && kind == ACC_PLAIN) {
        if (mpii_op_apply(op, NULL, NULL, 0, kh) != MPI_SUCCESS)
            return MPI_ERR_OP;
        a->k = mpii_op_kernel(op, kh, &a->kid);
        if (!a->k)
            return MPI_ERR_OP;
    }
    int integer = a->cls == FMPL_MPI_DTC_C_INTEGER || a->cls == FMPL_MPI_DTC_F_INTEGER ||
                  a->cls == FMPL_MPI_DTC_MULTILANG || a->cls == FMPL_MPI_DTC_BYTE;
    a->sum_int = op == MPI_SUM && integer;
    a->fsum = op == MPI_SUM && kind == ACC_PLAIN && a->cls == FMPL_MPI_DTC_FLOAT &&
              (a->esize == 4 || a->esize == 8) && a->eext == a->esize;
    if (integer)
        a->bit_int = op == MPI_BAND ? 1 : op == MPI_BOR ? 2 : op == MPI_BXOR ? 3 : 0;
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- element atomics */

#define CPU_ELEM(T)                                                                                \
    do {                                                                                           \
        T *p = (T *)(void *)addr, old, nv;                                                         \
        if (a->op == MPI_NO_OP) {                                                                  \
            old = __atomic_load_n(p, __ATOMIC_SEQ_CST);                                            \
        } else if (a->kind == ACC_CAS) {                                                           \
            memcpy(&nv, in, sizeof nv);                                                            \
            memcpy(&old, a->cmp, sizeof old);                                                      \
            __atomic_compare_exchange_n(p, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);       \
        } else if (a->op == MPI_REPLACE) {                                                         \
            memcpy(&nv, in, sizeof nv);                                                            \
            old = __atomic_exchange_n(p, nv, __ATOMIC_SEQ_CST);                                    \
        } else if (a->sum_int) {                                                                   \
            memcpy(&nv, in, sizeof nv);                                                            \
            old = __atomic_fetch_add(p, nv, __ATOMIC_SEQ_CST);                                     \
        } else if (a->bit_int) {                                                                   \
            memcpy(&nv, in, sizeof nv);                                                            \
            old = a->bit_int == 1   ? __atomic_fetch_and(p, nv, __ATOMIC_SEQ_CST)                  \
                  : a->bit_int == 2 ? __atomic_fetch_or(p, nv, __ATOMIC_SEQ_CST)                   \
                                    : __atomic_fetch_xor(p, nv, __ATOMIC_SEQ_CST);                 \
        } else {                                                                                   \
            old = __atomic_load_n(p, __ATOMIC_RELAXED);                                            \
            do {                                                                                   \
                nv = old;                                                                          \
                a->k(a->kid, in, &nv, 1);                                                          \
            } while (                                                                              \
                !__atomic_compare_exchange_n(p, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED)); \
        }                                                                                          \
        if (res)                                                                                   \
            memcpy(res, &old, sizeof old);                                                         \
    } while (0)

static void elem_cpu(const acc_t *a, char *addr, const char *in, char *res)
{
    switch (a->esize) {
    case 1: CPU_ELEM(uint8_t); break;
    case 2: CPU_ELEM(uint16_t); break;
    case 4: CPU_ELEM(uint32_t); break;
    default: CPU_ELEM(uint64_t); break;
    }
}

/* One 8-byte integer element by vnic remote atomics at region offset off; the old value
 * goes to *old. Sums, replacements and reads are posted without waiting (they complete on
 * the window's counter: the caller waits once for all); other ops run a blocking
 * compare-and-swap loop. */
static int elem_vnic(const acc_t *a, uint64_t off, const char *in, uint64_t *old)
{
    vnic_t *v = mpii.vnic;
    uint64_t operand = 0, cmp = 0;
    if (in)
        memcpy(&operand, in, 8);
    int rc;
    vnic_key_t key = a->tg.key;
    int world = a->tg.world;
    if (a->op == MPI_NO_OP || a->op == MPI_REPLACE || (a->sum_int && a->kind != ACC_CAS)) {
        vnic_op_t op = {.opcode = a->op == MPI_REPLACE ? VNIC_OP_SWAP : VNIC_OP_FADD,
                        .peer = world,
                        .operand = a->op == MPI_NO_OP ? 0 : operand,
                        .result = old,
                        .lcntr = a->w->cntr};
        if (a->kind == ACC_CAS) {
            op.opcode = VNIC_OP_CSWAP;
            memcpy(&op.compare, a->cmp, 8);
        }
        op.remote.key = key;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = off;
        rc = vnic_post(v, &op);
        if (rc == FMPL_SUCCESS)
            a->w->inflight++;
    } else if (a->kind == ACC_CAS) {
        memcpy(&cmp, a->cmp, 8);
        rc = vnic_atomic(v, VNIC_OP_CSWAP, world, key, off, operand, cmp, old);
    } else {
        rc = vnic_atomic(v, VNIC_OP_FADD, world, key, off, 0, 0, old);
        while (rc == FMPL_SUCCESS) {
            uint64_t nv = *old, prev = 0;
            a->k(a->kid, in, &nv, 1);
            rc = vnic_atomic(v, VNIC_OP_CSWAP, world, key, off, nv, *old, &prev);
            if (rc != FMPL_SUCCESS || prev == *old)
                break;
            *old = prev;
        }
    }
    if (rc != FMPL_SUCCESS)
        return rc == FMPL_ERR_KEY ? MPI_ERR_RMA_RANGE : mpii_err_from_fmpl(rc);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- stripe locks */

static uint64_t stripe_mask(uint64_t lo, uint64_t hi)
{
    uint64_t g0 = lo >> WIN_STRIPE_SHIFT, g1 = (hi - 1) >> WIN_STRIPE_SHIFT;
    if (g1 - g0 + 1 >= WIN_STRIPES)
        return ~0ull;
    uint64_t m = 0;
    for (uint64_t g = g0; g <= g1; g++)
        m |= 1ull << (g % WIN_STRIPES);
    return m;
}

/* The stripe locks are the bits of one word of the target's control block, so that a
 * block accumulate covering every stripe takes them with one compare-and-swap and drops
 * them with one fetch-and-add (64 words, one atomic each, cost a 64 KiB accumulate as much
 * as its arithmetic). Acquisition stays ordered as with one lock per stripe: the free bits
 * of the mask below its lowest busy one are taken together, then the rest once that one
 * is free, so two ranks never wait for each other. */
static int stripes_take(mpii_win_t *w, int target, uint64_t mask)
{
    const uint64_t off = offsetof(win_ctrl_t, stripes);
    uint64_t held = 0, seen = 0; /* seen: the word as last read (0 is the first guess) */
    unsigned spins = 0;
    int rc = MPI_SUCCESS;
    while (held != mask) {
        uint64_t want = mask & ~held, busy = want & seen;
        uint64_t take = busy ? want & ((busy & (0 - busy)) - 1) : want;
        if (!take) { /* the next stripe in order is busy: read the word again later */
            mpii_progress();
            base_poll_pause(&spins);
            const uint64_t *mapped = w->peer[target].ctrl;
            seen = mapped ? __atomic_load_n(&((const win_ctrl_t *)(const void *)mapped)->stripes,
                                            __ATOMIC_ACQUIRE)
                          : win_ctrl_atomic(w, target, VNIC_OP_FADD, off, 0, 0, &rc);
            if (rc != MPI_SUCCESS)
                break;
            continue;
        }
        uint64_t was = win_ctrl_atomic(w, target, VNIC_OP_CSWAP, off, seen | take, seen, &rc);
        if (rc != MPI_SUCCESS)
            break;
        if (was == seen) {
            held |= take;
            seen |= take;
        } else {
            seen = was;
        }
    }
    if (rc != MPI_SUCCESS && held)
        win_ctrl_atomic(w, target, VNIC_OP_FADD, off, 0 - held, 0, &rc);
    return rc;
}

/* The held bits are set, so subtracting them clears exactly them. */
static void stripes_drop(mpii_win_t *w, int target, uint64_t mask)
{
    int rc;
    win_ctrl_atomic(w, target, VNIC_OP_FADD, offsetof(win_ctrl_t, stripes), 0 - mask, 0, &rc);
}

/* ---------------------------------------------------------------- block accumulates */

/* The stripe of the granule at region offset off (as stripe_mask counts them). */
static inline int stripe_of(uint64_t off)
{
    return (int)((off >> WIN_STRIPE_SHIFT) % WIN_STRIPES);
}

/* Before element atomics on stripe `bit` of a direct window's target (c: its control block):
 * announces them (amo_pending), then waits until the stripe has been seen free once, so
 * that a block holder that took it before the announcement (and may run the kernel on
 * plain memory) is gone; later holders see the bit and use atomics. amo_ready says the
 * wait is over (the common case: one load). */
static void amo_enable_slow(win_ctrl_t *c, uint64_t bit)
{
    uint64_t was = __atomic_fetch_or(&c->amo_pending, bit, __ATOMIC_SEQ_CST);
    unsigned spins = 0;
    if (was & bit) { /* another rank announced it: wait for its drain */
        while (!(__atomic_load_n(&c->amo_ready, __ATOMIC_ACQUIRE) & bit))
            base_poll_pause(&spins);
        return;
    }
    while (__atomic_load_n(&c->stripes, __ATOMIC_SEQ_CST) & bit)
        base_poll_pause(&spins);
    __atomic_fetch_or(&c->amo_ready, bit, __ATOMIC_SEQ_CST);
}

static inline void amo_enable(const win_peer_t *p, uint64_t off)
{
    win_ctrl_t *c = (win_ctrl_t *)(void *)p->ctrl;
    uint64_t bit = 1ull << stripe_of(off);
    if (BASE_UNLIKELY(!(__atomic_load_n(&c->amo_ready, __ATOMIC_ACQUIRE) & bit)))
        amo_enable_slow(c, bit);
}

/* A float or double sum on one element: a compare-exchange loop, inline (elem_cpu's
 * general loop calls the op's kernel per attempt). */
static inline void elem_fsum(char *t, const char *in, char *res, int es)
{
    if (es == 8) {
        uint64_t *q = (uint64_t *)(void *)t, old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;
        double add, d;
        memcpy(&add, in, 8);
        do {
            memcpy(&d, &old, 8);
            d += add;
            memcpy(&nv, &d, 8);
        } while (!__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        if (res)
            memcpy(res, &old, 8);
    } else {
        uint32_t *q = (uint32_t *)(void *)t, old = __atomic_load_n(q, __ATOMIC_RELAXED), nv;
        float add, d;
        memcpy(&add, in, 4);
        do {
            memcpy(&d, &old, 4);
            d += add;
            memcpy(&nv, &d, 4);
        } while (!__atomic_compare_exchange_n(q, &old, nv, 0, __ATOMIC_SEQ_CST, __ATOMIC_RELAXED));
        if (res)
            memcpy(res, &old, 4);
    }
}

static void acc_elements_cpu(const acc_t *a, char *addr, const char *in, char *res, int64_t n)
{
    if (a->fsum) {
        for (int64_t e = 0; e < n; e++)
            elem_fsum(addr + e * a->esize, in + e * a->esize, res ? res + e * a->esize : NULL,
                      a->esize);
        return;
    }
    for (int64_t e = 0; e < n; e++)
        elem_cpu(a, addr + e * a->esize, in ? in + e * a->esize : NULL,
                 res ? res + e * a->esize : NULL);
}

/* n contiguous aligned elements at addr (region offset off) of a direct window: the stripes
 * covering them are taken, then each 256-byte granule is updated with the op's kernel on
 * plain memory when its stripe has never seen element atomics (amo_pending clear), else
 * element by element with atomics. */
static int acc_block(acc_t *a, char *addr, uint64_t off)
{
    mpii_win_t *w = a->w;
    int64_t bytes = a->n * a->esize;
    win_ctrl_t *c = (win_ctrl_t *)(void *)w->peer[a->target].ctrl;
    uint64_t mask = stripe_mask(off, off + (uint64_t)bytes);
    int rc = stripes_take(w, a->target, mask);
    if (rc != MPI_SUCCESS) {
        stripes_drop(w, a->target, mask);
        return rc;
    }
    uint64_t atomic = __atomic_load_n(&c->amo_pending, __ATOMIC_SEQ_CST);
    const uint64_t granule = 1u << WIN_STRIPE_SHIFT;
    for (int64_t pos = 0; pos < bytes;) {
        /* up to the end of this granule (element sizes divide 256, offsets are aligned) */
        uint64_t o = off + (uint64_t)pos;
        int64_t len = (int64_t)(granule - o % granule);
        if (!(atomic >> stripe_of(o) & 1)) /* plain granules: merge the run */
            while (pos + len < bytes && !(atomic >> stripe_of(o + (uint64_t)len) & 1))
                len += (int64_t)granule;
        if (len > bytes - pos)
            len = bytes - pos;
        len &= ~(int64_t)(a->esize - 1); /* 4 or 8 here: no division (40 cycles each) */
        if (len == 0)
            len = a->esize;
        int64_t ne = len >> (a->esize == 8 ? 3 : 2);
        char *t = addr + pos;
        const char *in = a->in ? a->in + pos : NULL;
        char *res = a->res ? a->res + pos : NULL;
        if (atomic >> stripe_of(o) & 1) {
            acc_elements_cpu(a, t, in, res, ne);
        } else {
            if (res)
                memcpy(res, t, (size_t)len);
            if (a->op == MPI_REPLACE)
                memmove(t, in, (size_t)len);
            else if (a->op != MPI_NO_OP)
                a->k(a->kid, in, t, ne);
        }
        pos += len;
    }
    stripes_drop(w, a->target, mask);
    return MPI_SUCCESS;
}

/* Read-modify-write of the n elements at (tg, tt, tcount) under the stripe locks:
 * in[i] / res[i] are the native origin / result elements. */
static int acc_striped(acc_t *a, const win_target_t *tg, dt_t *tt, int64_t tcount, const char *in,
                       char *res, int64_t n)
{
    mpii_win_t *w = a->w;
    int64_t bytes = n * a->esize;
    int64_t tlb = dt_true_lb(tt), text = dt_true_extent(tt), ext = dt_extent(tt);
    int64_t shift = (tcount - 1) * ext;
    int64_t lo = tlb + (shift < 0 ? shift : 0), hi = tlb + text + (shift > 0 ? shift : 0);
    uint64_t mask = stripe_mask(tg->off + (uint64_t)lo, tg->off + (uint64_t)hi);
    if (tg->ptr && a->eext == a->esize && dt_is_contig(tt, tcount)) {
        /* Mapped and contiguous: the op's kernel runs on the target's memory itself. */
        char *t = tg->ptr + tlb;
        int rc = stripes_take(w, a->target, mask);
        if (rc == MPI_SUCCESS) {
            if (res)
                memcpy(res, t, (size_t)bytes);
            if (a->kind == ACC_CAS) {
                if (memcmp(t, a->cmp, (size_t)a->esize) == 0)
                    memcpy(t, in, (size_t)a->esize);
            } else if (a->op == MPI_REPLACE) {
                memmove(t, in, (size_t)bytes);
            } else if (a->op != MPI_NO_OP) {
                a->k(a->kid, in, t, n);
            }
        }
        if (mask)
            stripes_drop(w, a->target, mask);
        return rc;
    }
    char *native = malloc((size_t)(n * a->eext) + (tg->ptr ? 0 : (size_t)bytes) + 1);
    if (!native)
        return MPI_ERR_NO_MEM;
    char *packed = native + n * a->eext;
    int rc = stripes_take(w, a->target, mask);
    if (rc == MPI_SUCCESS) {
        if (tg->ptr) {
            if (dt_copy(tt, tcount, tg->ptr, a->bdt, n, native, 0, bytes) != FMPL_SUCCESS)
                rc = MPI_ERR_INTERN;
        } else {
            rc = win_transfer(w, a->target, VNIC_OP_GET, packed, dt_basic(DT_BYTE), bytes, tg, tt,
                              tcount, 1);
            if (rc == MPI_SUCCESS && dt_unpack(a->bdt, n, native, 0, bytes, packed) != FMPL_SUCCESS)
                rc = MPI_ERR_INTERN;
        }
    }
    int write = a->op != MPI_NO_OP;
    if (rc == MPI_SUCCESS) {
        if (res)
            memcpy(res, native, (size_t)(n * a->eext));
        if (a->kind == ACC_CAS)
            write = memcmp(native, a->cmp, (size_t)a->esize) == 0;
        if (!write)
            ;
        else if (a->op == MPI_REPLACE || a->kind == ACC_CAS)
            memcpy(native, in, (size_t)(n * a->eext));
        else
            a->k(a->kid, in, native, n);
    }
    if (rc == MPI_SUCCESS && write) {
        if (tg->ptr) {
            if (dt_copy(a->bdt, n, native, tt, tcount, tg->ptr, 0, bytes) != FMPL_SUCCESS)
                rc = MPI_ERR_INTERN;
        } else if (dt_pack(a->bdt, n, native, 0, bytes, packed) != FMPL_SUCCESS) {
            rc = MPI_ERR_INTERN;
        } else {
            rc = win_transfer(w, a->target, VNIC_OP_PUT, packed, dt_basic(DT_BYTE), bytes, tg, tt,
                              tcount, 1);
            /* The write must be complete at the target before the stripes go. */
            if (rc == MPI_SUCCESS)
                rc = win_flush_target(w, a->target);
        }
    }
    if (mask)
        stripes_drop(w, a->target, mask);
    free(native);
    return rc;
}

/* Elements one by one with atomics (falling back to the stripes for misaligned ones). */
static int acc_elements(acc_t *a, dt_t *tt, int64_t tcount)
{
    /* Fast path: contiguous elements in mapped memory (e.g. one MPI_INT64_T); large
     * blocks of a direct window take the stripes and run the op's kernel. */
    if (a->tg.ptr && dt_is_contig(tt, tcount)) {
        char *addr = a->tg.ptr + dt_true_lb(tt);
        if (((uintptr_t)addr & (uintptr_t)(a->esize - 1)) == 0) { /* 4 or 8: no division */
            uint64_t off = a->tg.off + (uint64_t)dt_true_lb(tt);
            if (a->w->direct && a->kind != ACC_CAS && a->n >= WIN_ACC_BLOCK_MIN)
                return acc_block(a, addr, off);
            if (a->w->direct) /* fewer than WIN_ACC_BLOCK_MIN elements, or one CAS */
                for (int64_t e = 0; e < a->n; e++)
                    amo_enable(&a->w->peer[a->target], off + (uint64_t)(e * a->esize));
            acc_elements_cpu(a, addr, a->in, a->res, a->n);
            return MPI_SUCCESS;
        }
    }
    dt_iter_t it;
    char *base = a->tg.ptr ? a->tg.ptr : WIN_FAKE_BASE;
    if (dt_iter_init(&it, tt, tcount, base, 0) != FMPL_SUCCESS)
        return MPI_ERR_INTERN;
    /* vnic elements: old values land in scratch[e] (posted operations complete later) */
    uint64_t *scratch = NULL;
    uint8_t *via = NULL;
    if (!a->tg.ptr) {
        scratch = malloc(sizeof *scratch * (size_t)a->n);
        via = calloc((size_t)a->n, 1);
        if (!scratch || !via) {
            free(scratch);
            free(via);
            return MPI_ERR_NO_MEM;
        }
    }
    struct iovec seg[64];
    int64_t e = 0;
    int rc = MPI_SUCCESS;
    while (rc == MPI_SUCCESS && !dt_iter_done(&it)) {
        int ns = 0;
        int64_t nb = 0;
        dt_iter_next(&it, seg, 64, INT64_MAX / 2, &ns, &nb);
        if (ns == 0) {
            rc = MPI_ERR_INTERN;
            break;
        }
        for (int s = 0; s < ns && rc == MPI_SUCCESS; s++) {
            char *addr = seg[s].iov_base;
            for (size_t j = 0; j < seg[s].iov_len && rc == MPI_SUCCESS;
                 j += (size_t)a->esize, e++, addr += a->esize) {
                const char *in = a->in ? a->in + e * a->esize : NULL;
                char *res = a->res ? a->res + e * a->esize : NULL;
                if (a->tg.ptr && (uintptr_t)addr % (uintptr_t)a->esize == 0) {
                    if (a->w->direct)
                        amo_enable(&a->w->peer[a->target],
                                   a->tg.off + (uint64_t)(addr - a->tg.ptr));
                    elem_cpu(a, addr, in, res);
                    continue;
                }
                uint64_t off = a->tg.off + (uint64_t)(addr - base);
                if (!a->tg.ptr && a->tg.aligned8 && off % 8 == 0) {
                    via[e] = 1;
                    rc = elem_vnic(a, off, in, &scratch[e]);
                } else {
                    win_target_t one = a->tg;
                    one.off = off;
                    one.ptr = a->tg.ptr ? addr : NULL;
                    rc = acc_striped(a, &one, a->bdt, 1, in, res, 1);
                }
            }
        }
    }
    if (scratch) {
        int r2 = win_wait_local(a->w);
        if (rc == MPI_SUCCESS)
            rc = r2;
        for (int64_t i = 0; rc == MPI_SUCCESS && a->res && i < a->n; i++)
            if (via[i])
                memcpy(a->res + i * 8, &scratch[i], 8);
    }
    free(scratch);
    free(via);
    return rc;
}

/* ---------------------------------------------------------------- at the target */

/* Takes the stripes of mask on this rank's own control block without waiting: 1 when all
 * are taken (one compare-and-swap), 0 (none taken) when one is busy. */
static int stripes_try(uint64_t *ctrl, uint64_t mask)
{
    win_ctrl_t *c = (win_ctrl_t *)(void *)ctrl;
    uint64_t seen = __atomic_load_n(&c->stripes, __ATOMIC_RELAXED);
    while (!(seen & mask))
        if (__atomic_compare_exchange_n(&c->stripes, &seen, seen | mask, 0, __ATOMIC_SEQ_CST,
                                        __ATOMIC_RELAXED))
            return 1;
    return 0;
}

int win_acc_run(mpii_win_t *w, MPI_Op op, int cas, MPI_Datatype bh, char *addr, uint64_t roff,
                int64_t n, const char *in, const char *cmp, char *old)
{
    acc_t a = {.w = w, .target = w->rank};
    int rc = acc_prepare(&a, op, cas ? ACC_CAS : ACC_PLAIN, bh);
    if (rc != MPI_SUCCESS)
        return rc;
    a.cmp = cmp;
    int64_t es = a.esize, bytes = n * es;
    int integer = a.cls == FMPL_MPI_DTC_C_INTEGER || a.cls == FMPL_MPI_DTC_F_INTEGER ||
                  a.cls == FMPL_MPI_DTC_MULTILANG || a.cls == FMPL_MPI_DTC_BYTE ||
                  a.cls == FMPL_MPI_DTC_LOGICAL;
    if (es == 8 && integer && a.eext == 8 && (uintptr_t)addr % 8 == 0) {
        /* the elements vnic remote atomics and mapped origins update with atomics */
        acc_elements_cpu(&a, addr, in, old, n);
        return MPI_SUCCESS;
    }
    uint64_t mask = stripe_mask(roff, roff + (uint64_t)bytes);
    if (!stripes_try(w->ctrl, mask))
        return -1;
    if (a.eext == es) {
        if (old)
            memcpy(old, addr, (size_t)bytes);
        if (cas) {
            if (memcmp(addr, cmp, (size_t)es) == 0)
                memcpy(addr, in, (size_t)es);
        } else if (op == MPI_REPLACE) {
            memmove(addr, in, (size_t)bytes);
        } else if (op != MPI_NO_OP) {
            a.k(a.kid, in, addr, n);
        }
    } else { /* padded elements (pairs, long double): one at a time through native copies */
        _Alignas(16) unsigned char tin[64], tio[64];
        for (int64_t e = 0; e < n && es <= 64; e++) {
            memcpy(tio, addr + e * es, (size_t)es);
            if (old)
                memcpy(old + e * es, tio, (size_t)es);
            if (op == MPI_NO_OP)
                continue;
            memcpy(tin, in + e * es, (size_t)es);
            if (op == MPI_REPLACE || cas)
                memcpy(tio, tin, (size_t)es);
            else
                a.k(a.kid, tin, tio, 1);
            memcpy(addr + e * es, tio, (size_t)es);
        }
    }
    __atomic_fetch_and(&((win_ctrl_t *)(void *)w->ctrl)->stripes, ~mask, __ATOMIC_SEQ_CST);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- fast paths */

/* One element of a 4- or 8-byte integer type in a direct window, op SUM / REPLACE /
 * NO_OP (cas: compare-and-swap): one CPU atomic, the same one the full path would use.
 * 1 when done, 0 when the full path must run. */
static inline int acc_fast(const void *in, const void *cmp, void *res, MPI_Datatype type,
                           int target, MPI_Aint disp, MPI_Op op, MPI_Win win, int cas)
{
    int es = win_fast_type(type), c = FMPL_MPI_DT_CLASS(type);
    mpii_win_t *w;
    int fsum = c == FMPL_MPI_DTC_FLOAT && op == MPI_SUM && !cas && in;
    if (BASE_UNLIKELY((es != 8 && es != 4) || mpii.state != MPII_ACTIVE ||
                      (c != FMPL_MPI_DTC_C_INTEGER && c != FMPL_MPI_DTC_F_INTEGER &&
                       c != FMPL_MPI_DTC_MULTILANG && !fsum) ||
                      (op != MPI_SUM && op != MPI_REPLACE && op != MPI_NO_OP)))
        return 0;
    char *t = win_fast_addr(win, target, disp, es, &w);
    if (BASE_UNLIKELY(!t || !w->direct || ((uintptr_t)t & (uintptr_t)(es - 1))))
        return 0;
    win_store_fence(w);
    const win_peer_t *p = &w->peer[target];
    amo_enable(p, win_direct_off(w, p, t));
    if (fsum) {
        elem_fsum(t, in, res, es);
        return 1;
    }
    if (es == 8) {
        uint64_t *p = (uint64_t *)(void *)t, v = 0, old;
        if (in)
            memcpy(&v, in, 8);
        if (cas) {
            memcpy(&old, cmp, 8);
            __atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        } else if (op == MPI_SUM) {
            old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        } else if (op == MPI_REPLACE) {
            old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        } else {
            old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
        }
        if (res)
            memcpy(res, &old, 8);
    } else {
        uint32_t *p = (uint32_t *)(void *)t, v = 0, old;
        if (in)
            memcpy(&v, in, 4);
        if (cas) {
            memcpy(&old, cmp, 4);
            __atomic_compare_exchange_n(p, &old, v, 0, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
        } else if (op == MPI_SUM) {
            old = __atomic_fetch_add(p, v, __ATOMIC_SEQ_CST);
        } else if (op == MPI_REPLACE) {
            old = __atomic_exchange_n(p, v, __ATOMIC_SEQ_CST);
        } else {
            old = __atomic_load_n(p, __ATOMIC_SEQ_CST);
        }
        if (res)
            memcpy(res, &old, 4);
    }
    return 1;
}

/* MPI_Accumulate of count (>= WIN_ACC_BLOCK_MIN) contiguous 4- or 8-byte integer or
 * float elements, MPI_SUM or MPI_REPLACE, origin and target of one predefined type, on a
 * direct window at an aligned address: acc_block straight away, without acc's datatype
 * walk and checks (which cost more than the kernel for a few hundred bytes). The MPI
 * result code, or -1 when the full path must run. */
static inline int acc_block_fast(const void *in, int count, MPI_Datatype type, int target,
                                 MPI_Aint disp, MPI_Op op, MPI_Win win)
{
    int es = win_fast_type(type), c = FMPL_MPI_DT_CLASS(type);
    int integer =
        c == FMPL_MPI_DTC_C_INTEGER || c == FMPL_MPI_DTC_F_INTEGER || c == FMPL_MPI_DTC_MULTILANG;
    if (BASE_UNLIKELY((es != 8 && es != 4) || count < WIN_ACC_BLOCK_MIN ||
                      mpii.state != MPII_ACTIVE || (op != MPI_SUM && op != MPI_REPLACE) ||
                      (!integer && c != FMPL_MPI_DTC_FLOAT)))
        return -1;
    mpii_win_t *w;
    char *t = win_fast_addr(win, target, disp, (int64_t)count * es, &w);
    if (BASE_UNLIKELY(!t || !w->direct || ((uintptr_t)t & (uintptr_t)(es - 1))))
        return -1;
    acc_t a = {.w = w,
               .target = target,
               .op = op,
               .kind = ACC_PLAIN,
               .bh = type,
               .esize = es,
               .eext = es,
               .cls = c,
               .n = count,
               .in = in};
    if (op == MPI_SUM) {
        a.k = mpii_op_kernel(op, type, &a.kid);
        if (!a.k)
            return -1;
        a.sum_int = integer;
        a.fsum = !integer;
    }
    win_store_fence(w);
    const win_peer_t *p = &w->peer[target];
    int rc = acc_block(&a, t, win_direct_off(w, p, t));
    w->stores = 1;
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, "MPI_Accumulate");
}

/* The accumulate as active messages: the origin elements packed, then win_am_issue. */
static int acc_am(acc_t *a, dt_t *ot, int64_t ocount, const void *obuf, const void *cbuf, dt_t *tt,
                  int64_t tcount, void *rbuf, dt_t *rt, int64_t rcount, MPI_Request *request,
                  const char *fname)
{
    int64_t bytes = a->n * a->esize;
    const char *packed = NULL;
    char *tmp = NULL;
    if (a->kind == ACC_CAS) {
        packed = obuf; /* predefined integers: packed already */
    } else if (ot) {
        if (dt_is_contig(ot, ocount) && !FMPL_MPI_DT_PAD(a->bh)) {
            packed = (const char *)obuf + dt_true_lb(ot);
        } else {
            tmp = malloc((size_t)bytes);
            if (!tmp)
                return WIN_ERR(a->w->handle, MPI_ERR_NO_MEM, fname);
            if (dt_pack(ot, ocount, obuf, 0, bytes, tmp) != FMPL_SUCCESS) {
                free(tmp);
                return WIN_ERR(a->w->handle, MPI_ERR_INTERN, fname);
            }
            packed = tmp;
        }
    }
    int rc = win_am_issue(a->w, a->target, &a->tg, tt, tcount, a->op, a->kind == ACC_CAS, a->bh,
                          packed, cbuf, rt ? rbuf : NULL, rt, rcount, request);
    free(tmp);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(a->w->handle, rc, fname);
}

/* ---------------------------------------------------------------- the common path */

static int acc(int kind, const void *obuf, MPI_Count ocount, MPI_Datatype otype, const void *cbuf,
               void *rbuf, MPI_Count rcount, MPI_Datatype rtype, int target, MPI_Aint disp,
               MPI_Count tcount, MPI_Datatype ttype, MPI_Op op, MPI_Win win, int fetch,
               MPI_Request *request, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_win_t *w = mpii_win_get(win);
    if (BASE_UNLIKELY(!w))
        return WIN_ERR(win, MPI_ERR_WIN, fname);
    if (request)
        *request = MPI_REQUEST_NULL;
    acc_t a = {.w = w, .target = target, .op = op, .kind = kind};
    mpii_op_t *o = mpii_op_get(op);
    if (!o || o->fn || o->fn_c)
        return WIN_ERRF(win, MPI_ERR_OP, fname, "%s",
                        o ? "accumulates take predefined operations only" : "invalid operation");
    if (ocount < 0 || tcount < 0 || rcount < 0)
        return WIN_ERR(win, MPI_ERR_COUNT, fname);
    dt_t *tt = mpii_type_comm_dt(ttype);
    dt_t *ot = op == MPI_NO_OP ? NULL : mpii_type_comm_dt(otype);
    dt_t *rt = fetch ? mpii_type_comm_dt(rtype) : NULL;
    if (!tt || (op != MPI_NO_OP && !ot) || (fetch && !rt))
        return WIN_ERR(win, MPI_ERR_TYPE, fname);
    if (target == MPI_PROC_NULL)
        return request ? win_request_done(request) : MPI_SUCCESS;
    if (target < 0 || target >= w->size)
        return WIN_ERR(win, MPI_ERR_RANK, fname);
    if (tcount * dt_size(tt) == 0 && (!ot || ocount * dt_size(ot) == 0) &&
        (!rt || rcount * dt_size(rt) == 0))
        return request ? win_request_done(request) : MPI_SUCCESS; /* nothing moves */
    int rc;
    a.bh = base_handle(ttype, tt);
    int kt = base_kind(tt);
    if (a.bh == MPI_DATATYPE_NULL || (ot && base_kind(ot) != kt) || (rt && base_kind(rt) != kt))
        return WIN_ERRF(win, MPI_ERR_TYPE, fname,
                        "origin, result and target types must be built from one predefined type");
    rc = acc_prepare(&a, op, kind, a.bh);
    if (rc != MPI_SUCCESS)
        return rc == MPI_ERR_OP ? WIN_ERRF(win, rc, fname,
                                           "the operation is not defined on "
                                           "this type")
                                : WIN_ERR(win, rc, fname);
    int64_t tbytes = tcount * dt_size(tt);
    if ((ot && ocount * dt_size(ot) != tbytes) || (rt && rcount * dt_size(rt) != tbytes))
        return WIN_ERRF(win, MPI_ERR_TYPE, fname, "origin, result and target sizes differ");
    rc = win_access_begin(w, target);
    if (rc != MPI_SUCCESS)
        return WIN_ERRF(win, rc, fname, "%s",
                        rc == MPI_ERR_RMA_SYNC ? "no epoch gives access to the target" : "");
    win_store_fence(w);
    rc = win_target_resolve(w, target, disp, tt, tcount, &a.tg);
    if (rc != MPI_SUCCESS)
        return WIN_ERRF(win, rc, fname, "displacement %ld, %lld elements: outside rank %d's window",
                        (long)disp, (long long)tcount, target);
    a.n = !a.esize                         ? 0
          : (a.esize & (a.esize - 1)) == 0 ? tbytes >> __builtin_ctz((unsigned)a.esize)
                                           : tbytes / a.esize;
    if (a.n == 0)
        return request ? win_request_done(request) : MPI_SUCCESS;
    if (a.tg.ptr)
        w->stores = 1; /* the kernel paths store plainly (conservative for the others) */
    if (!w->peer[target].ctrl) {
        /* A target this rank does not map (udp): one vnic atomic for a single aligned
         * 8-byte integer sum / replace / read / compare-and-swap, else active messages
         * (win_am.c), after the chunks still outstanding there (ordering). */
        int integer8 = a.esize == 8 && a.eext == 8 &&
                       (a.cls == FMPL_MPI_DTC_C_INTEGER || a.cls == FMPL_MPI_DTC_F_INTEGER ||
                        a.cls == FMPL_MPI_DTC_MULTILANG || a.cls == FMPL_MPI_DTC_BYTE ||
                        a.cls == FMPL_MPI_DTC_LOGICAL);
        uint64_t off = a.tg.off + (uint64_t)dt_true_lb(tt);
        if (!(integer8 && a.n == 1 && a.tg.aligned8 && off % 8 == 0 &&
              (kind == ACC_CAS || a.sum_int || op == MPI_REPLACE || op == MPI_NO_OP)))
            return acc_am(&a, ot, ocount, obuf, cbuf, tt, tcount, rbuf, rt, rcount, request, fname);
        if (w->peer[target].am_out)
            win_am_wait(w, target);
    }
    /* Native origin and result arrays. */
    char *tmp_in = NULL, *tmp_res = NULL;
    size_t nat = (size_t)(a.n * a.eext);
    if (ot) {
        if (FMPL_MPI_DT_IS_PREDEF(otype) || dt_is_contig(ot, ocount)) {
            a.in = (const char *)obuf + (FMPL_MPI_DT_IS_PREDEF(otype) ? 0 : dt_true_lb(ot));
            if (!FMPL_MPI_DT_IS_PREDEF(otype) && FMPL_MPI_DT_PAD(a.bh))
                a.in = NULL;
        }
        if (!a.in) {
            tmp_in = malloc(nat);
            if (!tmp_in || dt_copy(ot, ocount, obuf, a.bdt, a.n, tmp_in, 0, tbytes) != FMPL_SUCCESS)
                rc = MPI_ERR_NO_MEM;
            a.in = tmp_in;
        }
    }
    a.cmp = cbuf;
    if (rc == MPI_SUCCESS && rt) {
        if (FMPL_MPI_DT_IS_PREDEF(rtype)) {
            a.res = rbuf;
        } else {
            tmp_res = malloc(nat);
            if (!tmp_res)
                rc = MPI_ERR_NO_MEM;
            a.res = tmp_res;
        }
    }
    if (rc == MPI_SUCCESS) {
        int pair = a.cls == FMPL_MPI_DTC_PAIR || FMPL_MPI_DT_PAD(a.bh) != 0;
        int integer = a.cls == FMPL_MPI_DTC_C_INTEGER || a.cls == FMPL_MPI_DTC_F_INTEGER ||
                      a.cls == FMPL_MPI_DTC_MULTILANG || a.cls == FMPL_MPI_DTC_BYTE ||
                      a.cls == FMPL_MPI_DTC_LOGICAL;
        int atomic_elems =
            !pair && (w->direct ? (a.esize == 4 || a.esize == 8) : a.esize == 8 && integer);
        if (atomic_elems && w->direct && !a.tg.ptr)
            atomic_elems = 0; /* cannot happen: direct windows map everything */
        if (atomic_elems)
            rc = acc_elements(&a, tt, tcount);
        else
            rc = acc_striped(&a, &a.tg, tt, tcount, a.in, a.res, a.n);
    }
    if (rc == MPI_SUCCESS && tmp_res &&
        dt_copy(a.bdt, a.n, tmp_res, rt, rcount, rbuf, 0, tbytes) != FMPL_SUCCESS)
        rc = MPI_ERR_INTERN;
    free(tmp_in);
    free(tmp_res);
    if (rc == MPI_SUCCESS && request)
        rc = win_request_done(request);
    return rc == MPI_SUCCESS ? rc : WIN_ERR(win, rc, fname);
}

int PMPI_Accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                    int target_rank, MPI_Aint target_disp, int target_count,
                    MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    if (origin_count == 1 && target_count == 1 && origin_datatype == target_datatype &&
        op != MPI_NO_OP &&
        acc_fast(origin_addr, NULL, NULL, origin_datatype, target_rank, target_disp, op, win, 0))
        return MPI_SUCCESS;
    if (origin_count == target_count && origin_datatype == target_datatype) {
        int rc = acc_block_fast(origin_addr, origin_count, origin_datatype, target_rank,
                                target_disp, op, win);
        if (rc >= 0)
            return rc;
    }
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, NULL, 0,
               MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op, win,
               0, NULL, "MPI_Accumulate");
}
MPII_WEAK(MPI_Accumulate, PMPI_Accumulate)

int PMPI_Accumulate_c(const void *origin_addr, MPI_Count origin_count, MPI_Datatype origin_datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Count target_count,
                      MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, NULL, 0,
               MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op, win,
               0, NULL, "MPI_Accumulate_c");
}
MPII_WEAK(MPI_Accumulate_c, PMPI_Accumulate_c)

int PMPI_Raccumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                     int target_rank, MPI_Aint target_disp, int target_count,
                     MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Raccumulate");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Raccumulate");
    }
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, NULL, 0,
               MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op, win,
               0, request, "MPI_Raccumulate");
}
MPII_WEAK(MPI_Raccumulate, PMPI_Raccumulate)

int PMPI_Raccumulate_c(const void *origin_addr, MPI_Count origin_count,
                       MPI_Datatype origin_datatype, int target_rank, MPI_Aint target_disp,
                       MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op, MPI_Win win,
                       MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Raccumulate_c");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Raccumulate_c");
    }
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, NULL, 0,
               MPI_DATATYPE_NULL, target_rank, target_disp, target_count, target_datatype, op, win,
               0, request, "MPI_Raccumulate_c");
}
MPII_WEAK(MPI_Raccumulate_c, PMPI_Raccumulate_c)

int PMPI_Get_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                        void *result_addr, int result_count, MPI_Datatype result_datatype,
                        int target_rank, MPI_Aint target_disp, int target_count,
                        MPI_Datatype target_datatype, MPI_Op op, MPI_Win win)
{
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, result_addr,
               result_count, result_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, 1, NULL, "MPI_Get_accumulate");
}
MPII_WEAK(MPI_Get_accumulate, PMPI_Get_accumulate)

int PMPI_Get_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                          MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                          MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                          MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                          MPI_Win win)
{
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, result_addr,
               result_count, result_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, 1, NULL, "MPI_Get_accumulate_c");
}
MPII_WEAK(MPI_Get_accumulate_c, PMPI_Get_accumulate_c)

int PMPI_Rget_accumulate(const void *origin_addr, int origin_count, MPI_Datatype origin_datatype,
                         void *result_addr, int result_count, MPI_Datatype result_datatype,
                         int target_rank, MPI_Aint target_disp, int target_count,
                         MPI_Datatype target_datatype, MPI_Op op, MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rget_accumulate");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rget_accumulate");
    }
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, result_addr,
               result_count, result_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, 1, request, "MPI_Rget_accumulate");
}
MPII_WEAK(MPI_Rget_accumulate, PMPI_Rget_accumulate)

int PMPI_Rget_accumulate_c(const void *origin_addr, MPI_Count origin_count,
                           MPI_Datatype origin_datatype, void *result_addr, MPI_Count result_count,
                           MPI_Datatype result_datatype, int target_rank, MPI_Aint target_disp,
                           MPI_Count target_count, MPI_Datatype target_datatype, MPI_Op op,
                           MPI_Win win, MPI_Request *request)
{
    if (!request) {
        MPII_CHECK_INIT("MPI_Rget_accumulate_c");
        return WIN_ERR(win, MPI_ERR_ARG, "MPI_Rget_accumulate_c");
    }
    return acc(ACC_PLAIN, origin_addr, origin_count, origin_datatype, NULL, result_addr,
               result_count, result_datatype, target_rank, target_disp, target_count,
               target_datatype, op, win, 1, request, "MPI_Rget_accumulate_c");
}
MPII_WEAK(MPI_Rget_accumulate_c, PMPI_Rget_accumulate_c)

int PMPI_Fetch_and_op(const void *origin_addr, void *result_addr, MPI_Datatype datatype,
                      int target_rank, MPI_Aint target_disp, MPI_Op op, MPI_Win win)
{
    static const char fname[] = "MPI_Fetch_and_op";
    if (result_addr && (origin_addr || op == MPI_NO_OP) &&
        acc_fast(op == MPI_NO_OP ? NULL : origin_addr, NULL, result_addr, datatype, target_rank,
                 target_disp, op, win, 0))
        return MPI_SUCCESS;
    if (!FMPL_MPI_DT_IS_PREDEF(datatype)) {
        MPII_CHECK_INIT(fname);
        return WIN_ERRF(win, MPI_ERR_TYPE, fname, "MPI_Fetch_and_op takes a predefined type");
    }
    return acc(ACC_PLAIN, origin_addr, 1, datatype, NULL, result_addr, 1, datatype, target_rank,
               target_disp, 1, datatype, op, win, 1, NULL, fname);
}
MPII_WEAK(MPI_Fetch_and_op, PMPI_Fetch_and_op)

int PMPI_Compare_and_swap(const void *origin_addr, const void *compare_addr, void *result_addr,
                          MPI_Datatype datatype, int target_rank, MPI_Aint target_disp, MPI_Win win)
{
    static const char fname[] = "MPI_Compare_and_swap";
    if (origin_addr && compare_addr && result_addr &&
        acc_fast(origin_addr, compare_addr, result_addr, datatype, target_rank, target_disp,
                 MPI_REPLACE, win, 1))
        return MPI_SUCCESS;
    int cls = FMPL_MPI_DT_IS_PREDEF(datatype) ? FMPL_MPI_DT_CLASS(datatype) : -1;
    /* MPI-4.0 names integer, logical, multi-language and byte types; character types
     * (C's char is an integer type too) compare as bytes, as in MPICH (cas_type_check). */
    if (cls != FMPL_MPI_DTC_C_INTEGER && cls != FMPL_MPI_DTC_F_INTEGER &&
        cls != FMPL_MPI_DTC_LOGICAL && cls != FMPL_MPI_DTC_MULTILANG && cls != FMPL_MPI_DTC_BYTE &&
        cls != FMPL_MPI_DTC_CHAR) {
        MPII_CHECK_INIT(fname);
        return WIN_ERRF(win, MPI_ERR_TYPE, fname,
                        "MPI_Compare_and_swap takes an integer, character, logical or byte type");
    }
    return acc(ACC_CAS, origin_addr, 1, datatype, compare_addr, result_addr, 1, datatype,
               target_rank, target_disp, 1, datatype, MPI_REPLACE, win, 1, NULL, fname);
}
MPII_WEAK(MPI_Compare_and_swap, PMPI_Compare_and_swap)
