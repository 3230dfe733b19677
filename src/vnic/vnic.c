/* vnic.c — the generic layer of the software NIC: argument checks, dispatch to the
 * transport serving a peer, counters, region registration, notify handlers, the
 * wait loop and the convenience calls. See vnic_impl.h for the division of work. */
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "vnic/shm_tune.h"
#include "vnic/udp_wire.h"
#include "vnic/vnic_impl.h"

/* ---------------------------------------------------------------- lifetime */

static void vnic_free_state(vnic_t *v)
{
    free(v->peer_node);
    free(v->local_cpu);
    free(v->reg_next);
    free(v->reg_gen);
    free(v->cntr_used);
    free(v);
}

/* Sets up the private free list of region indices (storage is the transport's). */
static int vnic_regions_setup(vnic_t *v)
{
    v->reg_next = calloc(v->nregions, sizeof *v->reg_next);
    v->reg_gen = calloc(v->nregions, sizeof *v->reg_gen);
    v->cntr_used = calloc((v->ncntr + 63) / 64, sizeof *v->cntr_used);
    if (!v->reg_next || !v->reg_gen || !v->cntr_used)
        return FMPL_ERR_NOMEM;
    v->reg_free_head = v->reg_free_tail = UINT32_MAX;
    for (uint32_t i = VNIC_KEY_WELL_KNOWN_MAX; i < v->nregions; i++) {
        v->reg_gen[i] = 1;
        v->reg_next[i] = UINT32_MAX;
        if (v->reg_free_tail == UINT32_MAX)
            v->reg_free_head = i;
        else
            v->reg_next[v->reg_free_tail] = i;
        v->reg_free_tail = i;
    }
    v->cntr_hint = VNIC_KEY_WELL_KNOWN_MAX;
    return FMPL_SUCCESS;
}

int vnic_open(boot_t *boot, vnic_t **out)
{
    if (!boot || !out)
        return FMPL_ERR_ARG;
    *out = NULL;
    vnic_t *v = calloc(1, sizeof *v);
    if (!v)
        return FMPL_ERR_NOMEM;
    v->boot = boot;
    v->defer_epoch = 1;
    v->rank = boot_rank(boot);
    v->size = boot_size(boot);
    base_log_set_rank(v->rank);
    int rc = boot_nodes(boot, &v->nodes);
    if (!rc) {
        v->npeers = v->size;
        v->peer_node = malloc((size_t)v->size * sizeof *v->peer_node);
        v->local_cpu = malloc((size_t)v->nodes->nlocal * sizeof *v->local_cpu);
        if (v->peer_node && v->local_cpu) {
            memcpy(v->peer_node, v->nodes->node_of, (size_t)v->size * sizeof *v->peer_node);
            for (int i = 0; i < v->nodes->nlocal; i++)
                v->local_cpu[i] = -1;
        } else {
            rc = FMPL_ERR_NOMEM;
        }
    }
    if (rc) {
        free(v->peer_node);
        free(v->local_cpu);
        free(v);
        return rc;
    }
    /* The shm transport provides the storage of regions and counters and calls back
     * vnic_regions_setup (through vnic_mr_reg_key) only after v->regions is set. */
    rc = vnic_shm_open(v, &v->local);
    if (rc) {
        vnic_free_state(v);
        return rc;
    }
    rc = vnic_trig_open(v);
    if (rc) {
        v->local->ops->close(v->local);
        vnic_heap_destroy(v->heap);
        vnic_free_state(v);
        return rc;
    }
    /* FMPL_TRANSPORT: auto = shm on this host, udp to other hosts; udp = every peer but
     * self through udp (the udp transport's tests on one machine). */
    const char *tr = base_env_str("FMPL_TRANSPORT", "auto",
                                  "auto: shm within a host, udp between hosts; udp: udp for "
                                  "every peer but self");
    if (strcmp(tr, "udp") == 0)
        v->force_udp = 1;
    else if (strcmp(tr, "auto") != 0)
        base_setting_fail("FMPL_TRANSPORT=%s: expected auto or udp", tr);
    if (v->force_udp || v->nodes->nnodes > 1) {
        rc = vnic_udp_open(v, &v->remote);
        if (rc) {
            /* no quiesce: it waits for every local rank, and the others may have
             * succeeded; the caller fails and the launcher ends the job */
            vnic_trig_close(v);
            v->local->ops->close(v->local);
            vnic_heap_destroy(v->heap);
            vnic_free_state(v);
            return rc;
        }
        /* an active message is one datagram */
        vnic_udp_stats_t st;
        vnic_udp_get_stats(v->remote, &st);
        size_t am = st.mtu - UDP_HDRS;
        if (am < v->info.am_max)
            v->info.am_max = am;
    }
    snprintf(v->transports, sizeof v->transports, "%s%s", v->local->ops->name,
             v->remote ? (v->force_udp ? ",udp(forced)" : ",udp") : "");
    v->info.transports = v->transports;
    /* The paths of large transfers on this host: measured or cached (every transport is
     * up: the trial's gets progress like any other wait). */
    vnic_shm_tune(v);
    *out = v;
    return FMPL_SUCCESS;
}

int vnic_storage_ready(vnic_t *v)
{
    return vnic_regions_setup(v);
}

int vnic_close(vnic_t *v)
{
    if (!v)
        return FMPL_ERR_ARG;
    int rc = FMPL_SUCCESS;
    vnic_trig_close(v);
    if (v->remote)
        rc = v->remote->ops->quiesce(v->remote);
    if (v->local) {
        int lrc = v->local->ops->quiesce(v->local);
        if (!rc)
            rc = lrc;
    }
    int frc = boot_fence(v->boot); /* every host quiesced before anyone unmaps */
    if (!rc)
        rc = frc;
    if (v->remote)
        v->remote->ops->close(v->remote);
    if (v->local)
        v->local->ops->close(v->local);
    vnic_heap_destroy(v->heap);
    vnic_free_state(v);
    return rc;
}

int vnic_rank(const vnic_t *v)
{
    return v ? v->rank : -1;
}
int vnic_size(const vnic_t *v)
{
    return v ? v->size : 0;
}
const boot_nodes_t *vnic_nodes(const vnic_t *v)
{
    return v ? v->nodes : NULL;
}
const vnic_info_t *vnic_info(const vnic_t *v)
{
    return v ? &v->info : NULL;
}

int vnic_local_index(const vnic_t *v, int world)
{
    const boot_nodes_t *nd = v->nodes;
    int lo = 0, hi = nd->nlocal - 1;
    while (lo <= hi) { /* local_ranks is ascending */
        int mid = (lo + hi) / 2;
        if (nd->local_ranks[mid] == world)
            return mid;
        if (nd->local_ranks[mid] < world)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -1;
}

int vnic_peer_shares_cpu(const vnic_t *v, int peer)
{
    if (!v || peer < 0 || peer >= v->size || peer == v->rank || v->force_udp)
        return 0;
    int j = vnic_local_index(v, peer), me = v->local_cpu[v->nodes->local_rank];
    return j >= 0 && me >= 0 && v->local_cpu[j] == me;
}

/* ----------------------------------------------------------------- memory */

void *vnic_mem_alloc(vnic_t *v, size_t size)
{
    if (!v || !v->heap)
        return NULL;
    return vnic_heap_alloc(v->heap, size);
}

int vnic_mem_free(vnic_t *v, void *p)
{
    if (!v)
        return FMPL_ERR_ARG;
    if (!p)
        return FMPL_SUCCESS;
    if (!v->heap)
        return FMPL_ERR_BUFFER;
    return vnic_heap_free(v->heap, p);
}

size_t vnic_mem_heap_used(const vnic_t *v)
{
    if (!v || !v->heap)
        return 0;
    return v->heap_size - vnic_heap_free_bytes(v->heap, NULL);
}

int vnic_mem_in_heap(const vnic_t *v, const void *p, size_t len)
{
    if (!v || !p || !v->heap_base)
        return 0;
    const char *c = (const char *)p;
    return c >= v->heap_base && (size_t)(c - v->heap_base) <= v->heap_size &&
           len <= v->heap_size - (size_t)(c - v->heap_base);
}

uint64_t vnic_mem_heap_offset(const vnic_t *v, const void *p)
{
    return (uint64_t)((const char *)p - v->heap_base);
}

/* ---------------------------------------------------------------- regions */

/* Writes entry idx under its seqlock (owner only). */
static void vnic_region_write(vnic_t *v, uint32_t idx, vnic_key_t key, void *base, size_t len,
                              unsigned access)
{
    vnic_region_t *e = &v->regions[idx];
    uint32_t s = __atomic_load_n(&e->seq, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, s + 1, __ATOMIC_RELAXED);
    __atomic_thread_fence(__ATOMIC_RELEASE);
    uint64_t seg_off = VNIC_SEG_OFF_NONE;
    char *b = (char *)base;
    if (key != VNIC_KEY_INVALID && v->seg_base && b >= v->seg_base &&
        (size_t)(b - v->seg_base) <= v->seg_size && len <= v->seg_size - (size_t)(b - v->seg_base))
        seg_off = (uint64_t)(b - v->seg_base);
    __atomic_store_n(&e->key, key, __ATOMIC_RELAXED);
    __atomic_store_n(&e->access, access, __ATOMIC_RELAXED);
    __atomic_store_n(&e->base, (uint64_t)(uintptr_t)base, __ATOMIC_RELAXED);
    __atomic_store_n(&e->len, (uint64_t)len, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seg_off, seg_off, __ATOMIC_RELAXED);
    __atomic_store_n(&e->seq, s + 2, __ATOMIC_RELEASE);
}

static int vnic_mr_check(vnic_t *v, void *base, size_t len, unsigned access)
{
    if (!v || !v->regions)
        return FMPL_ERR_ARG;
    if (!base && len)
        return FMPL_ERR_BUFFER;
    if (access & ~(unsigned)VNIC_ACC_ALL)
        return FMPL_ERR_ARG;
    if ((uintptr_t)base + len < (uintptr_t)base)
        return FMPL_ERR_BUFFER;
    return FMPL_SUCCESS;
}

int vnic_mr_reg(vnic_t *v, void *base, size_t len, unsigned access, vnic_key_t *key)
{
    int rc = vnic_mr_check(v, base, len, access);
    if (rc)
        return rc;
    if (!key)
        return FMPL_ERR_ARG;
    uint32_t idx = v->reg_free_head;
    if (idx == UINT32_MAX)
        return FMPL_ERR_NOMEM;
    v->reg_free_head = v->reg_next[idx];
    if (v->reg_free_head == UINT32_MAX)
        v->reg_free_tail = UINT32_MAX;
    uint32_t gen = v->reg_gen[idx];
    v->reg_gen[idx] = (uint16_t)(gen == UINT16_MAX ? 1 : gen + 1);
    vnic_key_t k = (gen << VNIC_KEY_INDEX_BITS) | idx;
    vnic_region_write(v, idx, k, base, len, access);
    *key = k;
    return FMPL_SUCCESS;
}

int vnic_mr_reg_key(vnic_t *v, vnic_key_t key, void *base, size_t len, unsigned access)
{
    int rc = vnic_mr_check(v, base, len, access);
    if (rc)
        return rc;
    if (key == VNIC_KEY_INVALID || key >= VNIC_KEY_WELL_KNOWN_MAX)
        return FMPL_ERR_KEY;
    if (__atomic_load_n(&v->regions[key].key, __ATOMIC_RELAXED) != VNIC_KEY_INVALID)
        return FMPL_ERR_BUSY;
    vnic_region_write(v, key, key, base, len, access);
    return FMPL_SUCCESS;
}

int vnic_mr_dereg(vnic_t *v, vnic_key_t key)
{
    if (!v || !v->regions)
        return FMPL_ERR_ARG;
    uint32_t idx = key & VNIC_KEY_INDEX_MASK;
    if (key == VNIC_KEY_INVALID || idx >= v->nregions ||
        __atomic_load_n(&v->regions[idx].key, __ATOMIC_RELAXED) != key)
        return FMPL_ERR_KEY;
    vnic_region_write(v, idx, VNIC_KEY_INVALID, NULL, 0, 0);
    if (idx >= VNIC_KEY_WELL_KNOWN_MAX) { /* FIFO reuse: generations wrap as late as possible */
        v->reg_next[idx] = UINT32_MAX;
        if (v->reg_free_tail == UINT32_MAX)
            v->reg_free_head = idx;
        else
            v->reg_next[v->reg_free_tail] = idx;
        v->reg_free_tail = idx;
    }
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- counters */

int vnic_cntr_open(vnic_t *v, uint32_t id, vnic_cntr_t **out)
{
    if (!v || !out || !v->cntr_mem)
        return FMPL_ERR_ARG;
    *out = NULL;
    if (id == VNIC_CNTR_ANY) {
        uint32_t n = v->ncntr - VNIC_KEY_WELL_KNOWN_MAX;
        for (uint32_t k = 0; k < n; k++) {
            uint32_t i = VNIC_KEY_WELL_KNOWN_MAX + (v->cntr_hint - VNIC_KEY_WELL_KNOWN_MAX + k) % n;
            if (!(v->cntr_used[i / 64] & (1ull << (i % 64)))) {
                id = i;
                v->cntr_hint = i + 1 < v->ncntr ? i + 1 : VNIC_KEY_WELL_KNOWN_MAX;
                break;
            }
        }
        if (id == VNIC_CNTR_ANY)
            return FMPL_ERR_NOMEM;
    } else if (id >= VNIC_KEY_WELL_KNOWN_MAX) {
        return FMPL_ERR_ARG;
    } else if (v->cntr_used[id / 64] & (1ull << (id % 64))) {
        return FMPL_ERR_BUSY;
    }
    vnic_cntr_t *c = calloc(1, sizeof *c);
    if (!c)
        return FMPL_ERR_NOMEM;
    c->id = id;
    c->v = v;
    c->word = vnic_cntr_word(v, id);
    v->cntr_used[id / 64] |= 1ull << (id % 64);
    *out = c;
    return FMPL_SUCCESS;
}

int vnic_cntr_close(vnic_t *v, vnic_cntr_t *c)
{
    if (!v || !c || c->id >= v->ncntr || !(v->cntr_used[c->id / 64] & (1ull << (c->id % 64))))
        return FMPL_ERR_ARG;
    vnic_trig_cancel(v, c); /* nothing stays armed on a counter that goes */
    /* Counters start at 0 when opened: they are zeroed on close (not on open) so that
     * arrivals for a well-known counter that precede its open are not lost. */
    __atomic_store_n(c->word, 0, __ATOMIC_RELAXED);
    v->cntr_used[c->id / 64] &= ~(1ull << (c->id % 64));
    free(c);
    return FMPL_SUCCESS;
}

uint32_t vnic_cntr_id(const vnic_cntr_t *c)
{
    return c ? c->id : VNIC_CNTR_ANY;
}
uint64_t vnic_cntr_read(const vnic_cntr_t *c)
{
    return c ? __atomic_load_n(c->word, __ATOMIC_ACQUIRE) : 0;
}
void vnic_cntr_add(vnic_cntr_t *c, uint64_t n)
{
    if (!c)
        return;
    __atomic_fetch_add(c->word, n, __ATOMIC_SEQ_CST);
    vnic_trig_wake(c->v); /* targets that may run triggered operations on it */
}
uint64_t vnic_cntr_errors(const vnic_cntr_t *c)
{
    return c ? c->errors : 0;
}

/* ------------------------------------------------------------- operations */

/* Total bytes of a local descriptor, or an error. */
static inline int vnic_ldesc_len(const vnic_ldesc_t *d, size_t *total)
{
    if (BASE_LIKELY(d->kind == VNIC_DESC_CONTIG)) {
        if (BASE_UNLIKELY(!d->u.contig.addr && d->u.contig.len))
            return FMPL_ERR_BUFFER;
        *total = d->u.contig.len;
        return FMPL_SUCCESS;
    }
    if (d->kind != VNIC_DESC_IOV || d->u.iov.cnt < 0 || (d->u.iov.cnt && !d->u.iov.iov))
        return FMPL_ERR_ARG;
    size_t t = 0;
    for (int i = 0; i < d->u.iov.cnt; i++) {
        const struct iovec *e = &d->u.iov.iov[i];
        if (!e->iov_base && e->iov_len)
            return FMPL_ERR_BUFFER;
        if (t + e->iov_len < t)
            return FMPL_ERR_ARG;
        t += e->iov_len;
    }
    *total = t;
    return FMPL_SUCCESS;
}

/* The remote descriptor covers exactly total bytes. */
static inline int vnic_rdesc_check(const vnic_rdesc_t *d, size_t total)
{
    if (BASE_UNLIKELY(d->key == VNIC_KEY_INVALID))
        return FMPL_ERR_KEY;
    if (BASE_LIKELY(d->kind == VNIC_DESC_CONTIG))
        return FMPL_SUCCESS;
    if (d->kind != VNIC_DESC_IOV || d->u.iov.cnt < 0 || (d->u.iov.cnt && !d->u.iov.seg))
        return FMPL_ERR_ARG;
    size_t t = 0;
    for (int i = 0; i < d->u.iov.cnt; i++) {
        if (t + d->u.iov.seg[i].len < t)
            return FMPL_ERR_ARG;
        t += d->u.iov.seg[i].len;
    }
    return t == total ? FMPL_SUCCESS : FMPL_ERR_ARG;
}

static inline vnic_transport_t *vnic_transport_of(const vnic_t *v, int peer)
{
    if (BASE_UNLIKELY(v->force_udp))
        return peer == v->rank ? v->local : v->remote;
    return v->peer_node[peer] == v->nodes->my_node ? v->local : v->remote;
}

/* One operation of `bytes` posted through t (vnic_traffic). */
static inline void vnic_traffic_count(vnic_t *v, const vnic_transport_t *t, size_t bytes)
{
    vnic_traffic_t *c = &v->traffic[t == v->local ? VNIC_TRAFFIC_SHM : VNIC_TRAFFIC_UDP];
    c->ops++;
    c->bytes += bytes;
}

int vnic_traffic(const vnic_t *v, vnic_traffic_t out[VNIC_TRAFFIC_N])
{
    if (!v || !out)
        return FMPL_ERR_ARG;
    memcpy(out, v->traffic, sizeof v->traffic);
    return FMPL_SUCCESS;
}

void *vnic_peer_ptr(vnic_t *v, int peer, vnic_key_t key, uint64_t off, uint64_t len)
{
    if (!v || (unsigned)peer >= (unsigned)v->npeers)
        return NULL;
    vnic_transport_t *t = vnic_transport_of(v, peer);
    return t && t->ops->peer_ptr ? t->ops->peer_ptr(t, peer, key, off, len) : NULL;
}

void vnic_peer_wake(vnic_t *v, int peer)
{
    if (!v || (unsigned)peer >= (unsigned)v->npeers)
        return;
    vnic_transport_t *t = vnic_transport_of(v, peer);
    if (t && t->ops->peer_wake)
        t->ops->peer_wake(t, peer);
}

/* vnic_copy_shared (alone 0) and vnic_copy_alone (1): the checks, then the transport's. */
static int vnic_copy(vnic_t *v, int peer, int get, void *buf, vnic_key_t key, uint64_t off,
                     size_t len, int alone)
{
    if (!v || (unsigned)peer >= (unsigned)v->npeers || (!buf && len))
        return FMPL_ERR_ARG;
    vnic_transport_t *t = vnic_transport_of(v, peer);
    if (!t)
        return VNIC_AGAIN;
    int (*copy)(vnic_transport_t *, int, int, void *, vnic_key_t, uint64_t, size_t) =
        alone ? t->ops->copy_alone : t->ops->copy_shared;
    return copy ? copy(t, peer, get, buf, key, off, len) : VNIC_AGAIN;
}

int vnic_copy_shared(vnic_t *v, int peer, int get, void *buf, vnic_key_t key, uint64_t off,
                     size_t len)
{
    return vnic_copy(v, peer, get, buf, key, off, len, 0);
}

int vnic_copy_alone(vnic_t *v, int peer, int get, void *buf, vnic_key_t key, uint64_t off,
                    size_t len)
{
    return vnic_copy(v, peer, get, buf, key, off, len, 1);
}

/* The checks of vnic_post (and of vnic_post_triggered, at its post): *total gets the
 * bytes the operation moves. */
static inline int vnic_op_check_inline(const vnic_t *v, const vnic_op_t *op, size_t *total_out)
{
    if (BASE_UNLIKELY(!v || !op))
        return FMPL_ERR_ARG;
    if (BASE_UNLIKELY((unsigned)op->peer >= (unsigned)v->npeers))
        return FMPL_ERR_RANK;
    if (BASE_UNLIKELY(op->flags &
                      ~(uint32_t)(VNIC_F_NOTIFY | VNIC_F_RCNTR | VNIC_F_TAIL_FLAG | VNIC_F_DEFER)))
        return FMPL_ERR_ARG;
    size_t total = 8;
    int rc;
    switch (op->opcode) {
    case VNIC_OP_PUT:
    case VNIC_OP_GET:
        rc = vnic_ldesc_len(&op->local, &total);
        if (BASE_UNLIKELY(rc))
            return rc;
        rc = vnic_rdesc_check(&op->remote, total);
        if (BASE_UNLIKELY(rc))
            return rc;
        if (op->flags) {
            /* Notifications and target counters report arrivals of data, and deferring
             * is for operations nobody waits on: PUT only. */
            if (op->opcode != VNIC_OP_PUT)
                return FMPL_ERR_ARG;
            if ((op->flags & VNIC_F_TAIL_FLAG) &&
                (op->local.kind != VNIC_DESC_CONTIG || op->remote.kind != VNIC_DESC_CONTIG ||
                 total < 8 || (op->remote.u.off + total) % 8))
                return FMPL_ERR_ARG;
        }
        break;
    case VNIC_OP_FADD:
    case VNIC_OP_CSWAP:
    case VNIC_OP_SWAP:
        if (op->flags)
            return FMPL_ERR_ARG;
        if (op->remote.key == VNIC_KEY_INVALID)
            return FMPL_ERR_KEY;
        if (op->remote.kind != VNIC_DESC_CONTIG || op->remote.u.off % 8)
            return FMPL_ERR_ARG;
        break;
    case VNIC_OP_SEND:
        /* Active message: the payload goes to the handler of `chan`; no remote region,
         * no target counter, no tail flag (VNIC_F_NOTIFY is implied and accepted). */
        rc = vnic_ldesc_len(&op->local, &total);
        if (BASE_UNLIKELY(rc))
            return rc;
        if (BASE_UNLIKELY(op->flags & ~(uint32_t)(VNIC_F_NOTIFY | VNIC_F_DEFER)))
            return FMPL_ERR_ARG;
        if (BASE_UNLIKELY(total > v->info.am_max))
            return FMPL_ERR_TRUNCATE;
        if (BASE_UNLIKELY(op->chan >= VNIC_NCHAN))
            return FMPL_ERR_ARG;
        break;
    default: return FMPL_ERR_ARG;
    }
    if (BASE_UNLIKELY((op->flags & VNIC_F_RCNTR) && op->rcntr >= v->ncntr))
        return FMPL_ERR_ARG;
    if (BASE_UNLIKELY((op->flags & VNIC_F_NOTIFY) && op->chan >= VNIC_NCHAN))
        return FMPL_ERR_ARG;
    *total_out = total;
    return FMPL_SUCCESS;
}

int vnic_op_check(const vnic_t *v, const vnic_op_t *op, size_t *total)
{
    return vnic_op_check_inline(v, op, total);
}

int vnic_post(vnic_t *v, const vnic_op_t *op)
{
    size_t total;
    int rc = vnic_op_check_inline(v, op, &total);
    if (BASE_UNLIKELY(rc))
        return rc;
    vnic_transport_t *t = vnic_transport_of(v, op->peer);
    if (BASE_UNLIKELY(!t)) {
        base_log("vnic: no transport reaches rank %d (another host) in this build", op->peer);
        return FMPL_ERR_UNSUPPORTED;
    }
    rc = t->ops->post(t, op, total);
    if (BASE_LIKELY(rc == FMPL_SUCCESS))
        vnic_traffic_count(v, t, total);
    return rc;
}

/* vnic_send_am through vnic_post, for transports without a send_am op. */
static BASE_NOINLINE int vnic_send_am_posted(vnic_t *v, int peer, unsigned chan, uint64_t imm,
                                             const void *a, size_t alen, const void *b, size_t blen)
{
    struct iovec iov[2] = {{(void *)(uintptr_t)a, alen}, {(void *)(uintptr_t)b, blen}};
    vnic_op_t op = {.opcode = VNIC_OP_SEND, .peer = peer, .chan = (uint8_t)chan, .imm = imm};
    op.local.kind = VNIC_DESC_IOV;
    op.local.u.iov.iov = iov;
    op.local.u.iov.cnt = blen ? 2 : 1;
    return vnic_post(v, &op);
}

/* The argument checks of vnic_send_am and vnic_send_am_try. */
static inline int vnic_send_am_check(const vnic_t *v, int peer, unsigned chan, const void *a,
                                     size_t alen, const void *b, size_t blen)
{
    if (BASE_UNLIKELY(!v || chan >= VNIC_NCHAN))
        return FMPL_ERR_ARG;
    if (BASE_UNLIKELY((unsigned)peer >= (unsigned)v->npeers))
        return FMPL_ERR_RANK;
    if (BASE_UNLIKELY((alen && !a) || (blen && !b)))
        return FMPL_ERR_BUFFER;
    if (BASE_UNLIKELY(alen > v->info.am_max || blen > v->info.am_max - alen))
        return FMPL_ERR_TRUNCATE;
    return FMPL_SUCCESS;
}

int vnic_send_am_try(vnic_t *v, int peer, unsigned chan, uint64_t imm, const void *a, size_t alen,
                     const void *b, size_t blen)
{
    int rc = vnic_send_am_check(v, peer, chan, a, alen, b, blen);
    if (BASE_UNLIKELY(rc))
        return rc;
    vnic_transport_t *t = vnic_transport_of(v, peer);
    if (BASE_UNLIKELY(!t)) {
        base_log("vnic: no transport reaches rank %d (another host) in this build", peer);
        return FMPL_ERR_UNSUPPORTED;
    }
    rc = t->ops->send_am_try(t, peer, chan, imm, a, alen, b, blen);
    if (BASE_LIKELY(rc == FMPL_SUCCESS))
        vnic_traffic_count(v, t, alen + blen);
    return rc;
}

int vnic_send_am(vnic_t *v, int peer, unsigned chan, uint64_t imm, const void *a, size_t alen,
                 const void *b, size_t blen)
{
    int rc = vnic_send_am_check(v, peer, chan, a, alen, b, blen);
    if (BASE_UNLIKELY(rc))
        return rc;
    vnic_transport_t *t = vnic_transport_of(v, peer);
    if (BASE_LIKELY(t && t->ops->send_am)) {
        rc = t->ops->send_am(t, peer, chan, imm, a, alen, b, blen);
        if (BASE_LIKELY(rc == FMPL_SUCCESS))
            vnic_traffic_count(v, t, alen + blen);
        return rc;
    }
    return vnic_send_am_posted(v, peer, chan, imm, a, alen, b, blen);
}

int vnic_put(vnic_t *v, int peer, const void *buf, size_t len, vnic_key_t key, uint64_t off)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = peer};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = (void *)(uintptr_t)buf;
    op.local.u.contig.len = len;
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    return vnic_post(v, &op);
}

int vnic_get(vnic_t *v, int peer, void *buf, size_t len, vnic_key_t key, uint64_t off)
{
    vnic_op_t op = {.opcode = VNIC_OP_GET, .peer = peer};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = buf;
    op.local.u.contig.len = len;
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    return vnic_post(v, &op);
}

int vnic_atomic(vnic_t *v, vnic_opcode_t opcode, int peer, vnic_key_t key, uint64_t off,
                uint64_t operand, uint64_t compare, uint64_t *result)
{
    if (opcode != VNIC_OP_FADD && opcode != VNIC_OP_CSWAP && opcode != VNIC_OP_SWAP)
        return FMPL_ERR_ARG;
    vnic_op_t op = {
        .opcode = opcode, .peer = peer, .operand = operand, .compare = compare, .result = result};
    op.remote.key = key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = off;
    return vnic_post(v, &op);
}

int vnic_udp_stats(const vnic_t *v, vnic_udp_stats_t *out)
{
    if (!v || !out)
        return FMPL_ERR_ARG;
    if (!v->remote)
        return FMPL_ERR_UNSUPPORTED;
    vnic_udp_get_stats(v->remote, out);
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- notify */

int vnic_set_notify_handler(vnic_t *v, uint8_t chan, vnic_notify_fn fn, void *arg)
{
    if (!v || chan >= VNIC_NCHAN)
        return FMPL_ERR_ARG;
    v->handler[chan] = fn;
    v->handler_arg[chan] = arg;
    return FMPL_SUCCESS;
}

void vnic_notify_dropped(vnic_t *v, const vnic_notify_t *n)
{
    uint8_t chan = n->chan;
    if (chan < VNIC_NCHAN && !v->handler_warned[chan]) {
        v->handler_warned[chan] = 1;
        base_log("vnic: notification on channel %u from rank %d dropped: no handler installed",
                 chan, n->src);
    }
}

/* ---------------------------------------------------------------- progress */

int vnic_fence(vnic_t *v)
{
    if (!v)
        return FMPL_ERR_ARG;
    /* A transport that delivers after the post (udp) first lets every peer's traffic
     * to this process arrive: the boot fence does not progress. */
    int rc = FMPL_SUCCESS;
    if (v->remote && v->remote->ops->fence)
        rc = v->remote->ops->fence(v->remote);
    int frc = boot_fence(v->boot);
    return rc ? rc : frc;
}

/* One round of progress: transports, then the armed hooks (not from inside a hook). */
static inline int vnic_progress_round(vnic_t *v)
{
    int n = v->local->ops->progress(v->local);
    if (v->remote)
        n += v->remote->ops->progress(v->remote);
    if (BASE_UNLIKELY(v->trig_active) ||
        (v->trig_line && BASE_UNLIKELY(__atomic_load_n(&v->trig_line->help, __ATOMIC_RELAXED))))
        n += vnic_trig_progress(v);
    uint32_t armed = v->hooks_armed;
    if (armed && !v->in_hook) {
        v->in_hook = 1;
        do {
            int i = __builtin_ctz(armed);
            armed &= armed - 1;
            n += v->hooks[i].fn(v->hooks[i].arg);
        } while (armed);
        v->in_hook = 0;
    }
    return n;
}

int vnic_progress(vnic_t *v)
{
    if (BASE_UNLIKELY(!v))
        return 0;
    return vnic_progress_round(v);
}

int vnic_cpu_needed(vnic_t *v)
{
    if (!v || !v->local->ops->cpu_needed)
        return 0;
    v->cpu_published = 1;
    return v->local->ops->cpu_needed(v->local);
}

void vnic_cpu_release(vnic_t *v)
{
    if (v && v->cpu_published) {
        v->cpu_published = 0;
        v->local->ops->cpu_release(v->local);
    }
}

int vnic_hook_add(vnic_t *v, int (*fn)(void *arg), void *arg, int armed, int *id)
{
    if (!v || !fn || !id)
        return FMPL_ERR_ARG;
    for (int i = 0; i < VNIC_MAX_HOOKS; i++)
        if (!v->hooks[i].fn) {
            v->hooks[i].fn = fn;
            v->hooks[i].arg = arg;
            *id = i;
            vnic_hook_arm(v, i, armed);
            return FMPL_SUCCESS;
        }
    return FMPL_ERR_NOMEM;
}

void vnic_hook_arm(vnic_t *v, int id, int armed)
{
    if (!v || id < 0 || id >= VNIC_MAX_HOOKS || !v->hooks[id].fn)
        return;
    if (armed)
        v->hooks_armed |= 1u << id;
    else
        v->hooks_armed &= ~(1u << id);
}

void vnic_hook_remove(vnic_t *v, int id)
{
    if (!v || id < 0 || id >= VNIC_MAX_HOOKS)
        return;
    v->hooks_armed &= ~(1u << id);
    v->hooks[id].fn = NULL;
    v->hooks[id].arg = NULL;
}

void vnic_flush(vnic_t *v)
{
    if (BASE_UNLIKELY(!v))
        return;
    if (v->defer_held && v->remote && v->remote->ops->flush)
        v->remote->ops->flush(v->remote);
}

uint64_t vnic_defer_mark(const vnic_t *v)
{
    return v && v->defer_held ? v->defer_epoch : 0;
}

/* vnic_wait and vnic_wait_keep. keep: operations held by VNIC_F_DEFER stay held while
 * the wait spins (v->defer_keep tells the transports' progress; they still leave after
 * the transport's bound); they leave before it yields or sleeps. A round of progress
 * that handled something (a peer's get, put or atomic served, an arrival) starts the
 * back-off over: a rank that serves a stream of one-sided requests while it waits (a
 * passive target in a barrier) keeps polling instead of paying a wake-up per request
 * (udp: 8-byte get + flush ~14-26 us -> ~6.5 us at load 14); an idle wait still sleeps
 * after FMPL_SPIN_US. */
static int vnic_wait_impl(vnic_t *v, vnic_ready_fn ready, void *arg, int64_t timeout_ns, int keep)
{
    if (!v || !ready)
        return FMPL_ERR_ARG;
    if (BASE_UNLIKELY(v->defer_held) && !keep)
        vnic_flush(v);
    if (ready(arg))
        return FMPL_SUCCESS;
    if (keep == 1 && v->defer_held) {
        v->defer_keep = 1;
        int rc = vnic_wait_impl(v, ready, arg, timeout_ns, 2);
        v->defer_keep = 0;
        return rc;
    }
    base_backoff_t bo;
    base_backoff_init(&bo);
    uint64_t deadline = timeout_ns >= 0 ? base_time_ns() + (uint64_t)timeout_ns : UINT64_MAX;
    vnic_transport_t *t = v->local, *r = v->remote;
    for (;;) {
        if (vnic_progress_round(v) > 0)
            base_backoff_init(&bo);
        if (ready(arg))
            return FMPL_SUCCESS;
        /* a peer declared dead: what we wait for may never come */
        if (BASE_UNLIKELY(__atomic_load_n(&v->peer_failures, __ATOMIC_RELAXED) != 0))
            return FMPL_ERR_PEER;
        base_backoff_action_t a = base_backoff_next(&bo);
        if (a == BASE_BACKOFF_YIELD_IF_NEEDED) {
            if (vnic_cpu_needed(v))
                sched_yield();
            a = BASE_BACKOFF_SPIN;
        }
        if (a == BASE_BACKOFF_SPIN) {
            /* pause costs ~50 ns on this class of CPU (AMD EPYC): in the first
             * ~10 us of a wait (where a reply normally arrives) it would delay noticing
             * the arrival; afterwards one every 16 polls. */
            if (bo.polls > 1024 && (bo.polls & 15) == 0)
                base_cpu_relax();
            if (timeout_ns >= 0 && (bo.polls & 63) == 0 && base_time_ns() >= deadline)
                return FMPL_ERR_TIMEOUT;
            continue;
        }
        if (BASE_UNLIKELY(keep) && v->defer_keep) {
            /* no more spinning: nothing stays held while this process gives the CPU away */
            v->defer_keep = 0;
            vnic_flush(v);
        }
        uint64_t now = base_time_ns();
        if (now >= deadline)
            return FMPL_ERR_TIMEOUT;
        if (a == BASE_BACKOFF_YIELD) {
            sched_yield();
            continue;
        }
        /* Sleep: announce, re-check (a delivery after the announcement wakes us),
         * then block until woken or the safety period ends. */
        t->ops->sleep_prepare(t);
        if (r)
            r->ops->sleep_prepare(r);
        if (vnic_progress(v) > 0 || ready(arg)) {
            t->ops->sleep_cancel(t);
            if (r)
                r->ops->sleep_cancel(r);
            if (ready(arg))
                return FMPL_SUCCESS;
            continue;
        }
        int64_t ns = base_backoff_sleep_ns();
        if (deadline != UINT64_MAX && (int64_t)(deadline - now) < ns)
            ns = (int64_t)(deadline - now);
        if (r) {
            /* Sleep on the socket (and the retransmission timers). A shm delivery from a
             * rank of this host only futex-wakes: it is seen when the poll times out
             * (at most FMPL_SLEEP_US); with FMPL_TRANSPORT=udp there is none. */
            r->ops->sleep(r, ns);
            t->ops->sleep_cancel(t);
        } else {
            t->ops->sleep(t, ns);
        }
    }
}

int vnic_wait(vnic_t *v, vnic_ready_fn ready, void *arg, int64_t timeout_ns)
{
    int rc = vnic_wait_impl(v, ready, arg, timeout_ns, 0);
    if (BASE_UNLIKELY(v && v->cpu_published))
        vnic_cpu_release(v);
    return rc;
}

int vnic_wait_keep(vnic_t *v, vnic_ready_fn ready, void *arg, int64_t timeout_ns)
{
    int rc = vnic_wait_impl(v, ready, arg, timeout_ns, 1);
    if (BASE_UNLIKELY(v && v->cpu_published))
        vnic_cpu_release(v);
    return rc;
}

typedef struct vnic_cntr_target {
    const vnic_cntr_t *c;
    uint64_t value;
} vnic_cntr_target_t;

static int vnic_cntr_reached(void *arg)
{
    const vnic_cntr_target_t *w = arg;
    return __atomic_load_n(w->c->word, __ATOMIC_ACQUIRE) >= w->value;
}

int vnic_cntr_wait(vnic_t *v, vnic_cntr_t *c, uint64_t value, int64_t timeout_ns)
{
    if (!v || !c)
        return FMPL_ERR_ARG;
    if (BASE_LIKELY(__atomic_load_n(c->word, __ATOMIC_ACQUIRE) >= value))
        return FMPL_SUCCESS;
    vnic_cntr_target_t w = {c, value};
    return vnic_wait(v, vnic_cntr_reached, &w, timeout_ns);
}
