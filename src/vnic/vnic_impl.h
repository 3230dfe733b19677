/* vnic_impl.h — private to src/vnic: the generic vnic state, the transport ops table
 * (modelled on UCX uct_iface_ops and libfabric providers), the region table and
 * counter storage shared by the generic layer and the transports, the local
 * descriptor cursor, and the shared-heap allocator.
 *
 * Division of work:
 *   vnic.c  validates every argument of the public calls, owns counters, regions,
 *           notify handlers and the wait loop, and dispatches to the transport that
 *           serves a peer (shm for ranks on this host; udp for the others, or for
 *           every peer but self with FMPL_TRANSPORT=udp).
 *   udp.c   the reliable-datagram transport (seed 001), see the comment at its top.
 *   shm.c   the shared-memory transport; it also provides the memory in which the
 *           region table, the counters and the heap live (the host segment), so that
 *           peers on the host can validate keys and bump counters without the owner.
 *   heap.c  the allocator of the shared heap (metadata in private memory).
 * Nothing above the ops table assumes shared memory except the vnic_mem_* calls. */
#ifndef FMPL_VNIC_IMPL_H
#define FMPL_VNIC_IMPL_H

#include <string.h>

#include "vnic/vnic.h"

/* ------------------------------------------------------------ region table
 * One entry per key index. The table lives where peers can read it (the host
 * segment), written by its owner only; readers take a consistent snapshot with the
 * seqlock `seq` (odd while the owner rewrites the entry). A key is
 * (generation << VNIC_KEY_INDEX_BITS) | index; well-known keys (< 16) have
 * generation 0, fresh keys a generation >= 1 that changes at every reuse of the
 * index, so a stale key after dereg no longer matches `key`. */
#define VNIC_KEY_INDEX_BITS 16
#define VNIC_KEY_INDEX_MASK ((1u << VNIC_KEY_INDEX_BITS) - 1)
#define VNIC_SEG_OFF_NONE UINT64_MAX

typedef struct vnic_region {
    uint32_t seq;    /* seqlock: odd while the owner rewrites the entry */
    uint32_t key;    /* key valid for this entry, VNIC_KEY_INVALID when free */
    uint32_t access; /* VNIC_ACC_* */
    uint32_t pad;
    uint64_t base; /* owner's virtual address of the region */
    uint64_t len;
    uint64_t seg_off; /* offset of base in the host segment, VNIC_SEG_OFF_NONE if private */
} vnic_region_t;

/* Snapshot of the entry for `key` in a (possibly remote, concurrently updated) table.
 * Returns 1 and fills *out when the key is valid, 0 otherwise. Never blocks for long:
 * an entry that stays odd (owner died mid-update) is reported invalid. */
static inline int vnic_region_read(const vnic_region_t *tbl, uint32_t nregions, vnic_key_t key,
                                   vnic_region_t *out)
{
    uint32_t idx = key & VNIC_KEY_INDEX_MASK;
    if (BASE_UNLIKELY(key == VNIC_KEY_INVALID || idx >= nregions))
        return 0;
    const vnic_region_t *e = &tbl[idx];
    for (int tries = 0; tries < 100000; tries++) {
        uint32_t s1 = __atomic_load_n(&e->seq, __ATOMIC_ACQUIRE);
        if (BASE_UNLIKELY(s1 & 1)) {
            base_cpu_relax();
            continue;
        }
        out->key = __atomic_load_n(&e->key, __ATOMIC_RELAXED);
        out->access = __atomic_load_n(&e->access, __ATOMIC_RELAXED);
        out->base = __atomic_load_n(&e->base, __ATOMIC_RELAXED);
        out->len = __atomic_load_n(&e->len, __ATOMIC_RELAXED);
        out->seg_off = __atomic_load_n(&e->seg_off, __ATOMIC_RELAXED);
        __atomic_thread_fence(__ATOMIC_ACQUIRE);
        if (BASE_LIKELY(__atomic_load_n(&e->seq, __ATOMIC_RELAXED) == s1))
            return out->key == key;
    }
    return 0;
}

/* 1 when [off, off+len) lies inside a region of length rlen (overflow-safe). */
static inline int vnic_region_bounds_ok(uint64_t rlen, uint64_t off, uint64_t len)
{
    return off <= rlen && len <= rlen - off;
}

/* --------------------------------------------------------------- counters */
struct vnic_cntr {
    uint64_t *word; /* the value, in memory peers can update (host segment) */
    vnic_t *v;
    uint64_t errors; /* failed operations that named this counter as lcntr */
    uint32_t id;
};

/* Local completion of an operation that named c as lcntr (c may be NULL). */
static inline void vnic_cntr_complete(vnic_cntr_t *c, int status)
{
    if (!c)
        return;
    if (BASE_UNLIKELY(status != FMPL_SUCCESS))
        c->errors++;
    __atomic_fetch_add(c->word, 1, __ATOMIC_RELEASE);
}

/* ------------------------------------------------------------ transports */
typedef struct vnic_transport vnic_transport_t;

typedef struct vnic_transport_ops {
    const char *name;
    /* Starts op towards a peer this transport serves. The generic layer has already
     * checked the opcode, flags, descriptor shapes, that the remote descriptor covers
     * exactly `total` bytes, TAIL_FLAG's shape and the rcntr id. The transport checks
     * the key, bounds and access rights (FMPL_ERR_KEY, nothing performed) and may
     * progress to resolve back-pressure. Same completion contract as vnic_post. */
    int (*post)(vnic_transport_t *t, const vnic_op_t *op, size_t total);
    /* vnic_send_am, arguments checked by the generic layer. Optional: without it the
     * generic layer posts a VNIC_OP_SEND with a two-piece iovec. */
    int (*send_am)(vnic_transport_t *t, int peer, unsigned chan, uint64_t imm, const void *a,
                   size_t alen, const void *b, size_t blen);
    /* vnic_send_am_try, arguments checked by the generic layer: VNIC_AGAIN instead of
     * waiting for room. Required of every transport. */
    int (*send_am_try)(vnic_transport_t *t, int peer, unsigned chan, uint64_t imm, const void *a,
                       size_t alen, const void *b, size_t blen);
    /* Advances the transport; never blocks; returns the number of events handled. Sends
     * the operations held by VNIC_F_DEFER, unless v->defer_keep is set and they have been
     * held for less than the transport's bound. */
    int (*progress)(vnic_transport_t *t);
    /* Sends every operation held by VNIC_F_DEFER now (then v->defer_held = 0 and
     * v->defer_epoch moves on). Optional: NULL for a transport that never holds (shm
     * ignores the flag). Never blocks. */
    void (*flush)(vnic_transport_t *t);
    /* Sleep protocol of vnic_wait: after sleep_prepare, any delivery to this process
     * wakes it; the caller then re-checks its condition and either calls
     * sleep_cancel or sleep (which blocks at most ns unless woken, and cancels). */
    void (*sleep_prepare)(vnic_transport_t *t);
    void (*sleep_cancel)(vnic_transport_t *t);
    void (*sleep)(vnic_transport_t *t, int64_t ns);
    /* vnic_cpu_needed and vnic_cpu_release for the ranks this transport serves.
     * Optional (both or neither); cpu_needed is cheap enough for every 64th poll. */
    int (*cpu_needed)(vnic_transport_t *t);
    void (*cpu_release)(vnic_transport_t *t);
    /* Collective over the ranks this transport serves (may be NULL when delivery is
     * complete at post, as with shm): returns once every such rank has called it and
     * everything each posted to this process before its call has been delivered here,
     * serving the peers meanwhile. vnic_fence calls it before the blocking boot fence,
     * during which this process does not progress. May block. */
    int (*fence)(vnic_transport_t *t);
    /* Collective over the ranks this transport serves: completes this process's
     * in-flight operations while serving the peers', then waits (progressing) until
     * every one of them has done the same. May block. */
    int (*quiesce)(vnic_transport_t *t);
    /* Optional (NULL: no direct access): vnic_peer_ptr and vnic_peer_wake for the peers
     * this transport serves (peer checked by the generic layer). */
    void *(*peer_ptr)(vnic_transport_t *t, int peer, vnic_key_t key, uint64_t off, uint64_t len);
    void (*peer_wake)(vnic_transport_t *t, int peer);
    /* Optional (NULL: never shared): vnic_copy_shared for the peers this transport serves
     * (peer and arguments checked by the generic layer). */
    int (*copy_shared)(vnic_transport_t *t, int peer, int get, void *buf, vnic_key_t key,
                       uint64_t off, size_t len);
    /* Optional (NULL: never reachable that way): vnic_copy_alone, likewise. */
    int (*copy_alone)(vnic_transport_t *t, int peer, int get, void *buf, vnic_key_t key,
                      uint64_t off, size_t len);
    /* Releases everything; no peer accesses this process's memory any more. */
    void (*close)(vnic_transport_t *t);
} vnic_transport_ops_t;

struct vnic_transport {
    const vnic_transport_ops_t *ops;
    vnic_t *v;
};

/* ------------------------------------------------------------ shared heap */
typedef struct vnic_heap vnic_heap_t;
/* Backs [off, off+len) of the heap with memory before first use (fallocate for shm);
 * returns 0 on success, nonzero when the system has no room. */
typedef int (*vnic_heap_commit_fn)(void *arg, size_t off, size_t len);
/* Creates an allocator over [base, base+size) (size a multiple of 4096). Metadata is
 * kept in private memory. commit may be NULL (memory already backed). */
int vnic_heap_create(void *base, size_t size, vnic_heap_commit_fn commit, void *arg,
                     vnic_heap_t **out);
void vnic_heap_destroy(vnic_heap_t *h);
/* 64-byte aligned block of at least size bytes (size 0 gives a minimal block);
 * NULL when no free extent fits or commit fails. */
void *vnic_heap_alloc(vnic_heap_t *h, size_t size);
/* FMPL_ERR_BUFFER when p is not the start of a live block; NULL is accepted. */
int vnic_heap_free(vnic_heap_t *h, void *p);
/* Bytes in free extents, and the largest free extent (for tests and fmpl-info). */
size_t vnic_heap_free_bytes(const vnic_heap_t *h, size_t *largest);

/* The trigger line of each rank's area in the host segment (trigger.c, HELP AND WATCH);
 * the rank's trigger table (VNIC_TRIG_TABLE_BYTES) follows it. */
typedef struct vnic_trig_line {
    uint64_t watch; /* bit i: local rank i may run this rank's triggered operations: a move
                     * of any counter of this rank wakes it (written by this rank) */
    uint64_t help;  /* bit i: local rank i has triggered operations this rank may run (set by
                     * i, cleared by this rank before it looks at them) */
    uint64_t pad[6];
} vnic_trig_line_t;
_Static_assert(sizeof(vnic_trig_line_t) == 64, "trigger line: one cache line");
#define VNIC_TRIG_TABLE_BYTES (128 + (size_t)VNIC_TRIG_MAX * 128) /* header, entries */

/* ------------------------------------------------------------ the vnic */
struct vnic {
    boot_t *boot;
    int rank, size;
    const boot_nodes_t *nodes;
    int npeers;              /* size + processes of other jobs (vnic_peer_add) */
    int *peer_node;          /* [npeers] node of each peer (nodes->node_of, then -1: another job) */
    vnic_transport_t *local; /* serves ranks on this host (shm) */
    vnic_transport_t *remote; /* serves other hosts (udp); NULL on a single host unless forced */
    vnic_traffic_t traffic[VNIC_TRAFFIC_N]; /* vnic_traffic: [shm], [udp] */

    /* Region table (storage provided by the local transport, in the host segment). */
    vnic_region_t *regions;
    uint32_t nregions;
    uint32_t *reg_next; /* private free list of indices >= VNIC_KEY_WELL_KNOWN_MAX */
    uint32_t reg_free_head, reg_free_tail;
    uint16_t *reg_gen; /* next generation of each index */

    /* Counter storage (host segment): word of id i at cntr_mem + i * cntr_stride. */
    uint64_t *cntr_mem;
    size_t cntr_stride; /* in uint64_t */
    uint32_t ncntr;
    uint64_t *cntr_used; /* bitmap, private */
    uint32_t cntr_hint;

    /* Host segment bounds (regions inside it are reachable by peers with memcpy). */
    char *seg_base;
    size_t seg_size;

    /* Shared heap of this process. */
    char *heap_base;
    size_t heap_size;
    vnic_heap_t *heap;

    struct {
        int (*fn)(void *arg);
        void *arg;
    } hooks[VNIC_MAX_HOOKS]; /* vnic_hook_add; fn NULL: free entry */
    uint32_t hooks_armed;    /* bit i: hooks[i] is called by progress */
    int in_hook;

    vnic_notify_fn handler[VNIC_NCHAN];
    void *handler_arg[VNIC_NCHAN];
    uint8_t handler_warned[VNIC_NCHAN];

    vnic_info_t info;
    char transports[32];
    int force_udp; /* FMPL_TRANSPORT=udp: every peer but self through remote */
    /* VNIC_F_DEFER bookkeeping, written by the transport that holds (udp): operations
     * held now, and the epoch they belong to (starts at 1, +1 each time held operations
     * leave: vnic_defer_mark). defer_keep: set by vnic_wait_keep while it spins, so
     * that progress keeps them (for the transport's bound). */
    uint32_t defer_held;
    int defer_keep;
    uint64_t defer_epoch;
    uint64_t peer_failures;      /* peers a transport declared dead (vnic_wait fails then) */
    int cpu_published;           /* vnic_cpu_needed said "waiting" (vnic_cpu_release clears) */
    struct vnic_trig *trig;      /* trigger.c: this rank's table and what it knows of others' */
    vnic_trig_line_t *trig_line; /* this rank's trigger line (NULL: no shm transport) */
    int trig_active;             /* entries of this rank's table in use */
    char placement[160];         /* info.placement */
    int *local_cpu; /* [nodes->nlocal] the one CPU of each local rank, or -1 (vnic_place) */
    /* cold, last: vnic_info()->shm_paths (SHM_TUNE_WHY and the paths) */
    char shm_paths[1088];
};

/* Runs the notify handler of n->chan (called by transports at the target); without
 * a handler the notification is dropped with one warning per channel. */
void vnic_notify_dropped(vnic_t *v, const vnic_notify_t *n);
static inline void vnic_deliver_notify(vnic_t *v, const vnic_notify_t *n)
{
    uint8_t chan = n->chan;
    if (BASE_LIKELY(chan < VNIC_NCHAN && v->handler[chan]))
        v->handler[chan](v->handler_arg[chan], n);
    else
        vnic_notify_dropped(v, n);
}
/* Word of counter id of this process. */
static inline uint64_t *vnic_cntr_word(vnic_t *v, uint32_t id)
{
    return v->cntr_mem + (size_t)id * v->cntr_stride;
}

/* Opens the shared-memory transport (src/vnic/shm.c): maps the host segment, fills
 * v->regions, v->cntr_mem, v->heap*, v->seg_*, v->info fields it knows, registers the
 * heap as VNIC_KEY_HEAP, and places this rank (vnic_place, with every local rank's
 * CPUs as published in the segment). Collective over the job (boot fences). */
int vnic_shm_open(vnic_t *v, vnic_transport_t **out);
/* Where this rank runs (src/vnic/placement.c). Called once every rank of this host has
 * published the CPUs it may run on: cpus[i] for local rank i, me this rank's index.
 * Fills v->local_cpu.
 * Under FMPL_BIND=auto or core, when the launcher left every local rank the same CPUs
 * (Hydra and Slurm without binding, a remote host of fmplrun --hosts), binds this rank
 * by base_cpu_place's rule; a launcher that bound the ranks (their CPUs differ), and
 * FMPL_BIND=none, are followed. Sets v->info.oversubscribed (more local ranks than the
 * CPUs they may use together), configures the back-off for it, and writes
 * v->info.placement. Never blocks. */
void vnic_place(vnic_t *v, const cpu_set_t *const cpus[], int nlocal, int me);

/* The trigger line of rank world when it is on this host, else NULL; its table follows
 * it. Never blocks. */
vnic_trig_line_t *vnic_shm_trig_line(vnic_transport_t *shm, int world);
/* The word of counter id of rank world when it is on this host (id checked), else NULL. */
uint64_t *vnic_shm_peer_cntr(vnic_transport_t *shm, int world, uint32_t id);
/* After a store to a counter of rank world (this host): a full fence, then wakes that rank
 * and the ranks its trigger line's watch names, those that sleep. Never blocks. */
void vnic_shm_cntr_moved(vnic_transport_t *shm, int world);

/* Reads the region entry of `key` in the table of rank `world` when that rank is on this
 * host (the table lives in the host segment): 1 valid key (*out filled), 0 invalid key,
 * -1 when the rank is not served by this shm transport. Never blocks. */
int vnic_shm_peer_region(vnic_transport_t *shm, int world, vnic_key_t key, vnic_region_t *out);

/* Opens the udp transport (src/vnic/udp.c): one socket, address and secret exchanged
 * through boot. Collective over the job: every rank calls it (one boot fence inside,
 * even on a local error, so no rank is left waiting); blocks for it. Needs the storage
 * of the local transport (regions, counters) to be set up. On success *out belongs to
 * v (released by its ops->close). */
int vnic_udp_open(vnic_t *v, vnic_transport_t **out);
/* The udp transport of this process alone, for processes of other jobs (udp.c, OTHER
 * JOBS): not collective, never blocks. */
int vnic_udp_open_alone(vnic_t *v, vnic_transport_t **out);
/* Registers the process of another job at ip:port (twin: its twin socket's port, 0:
 * none) with `rank` in its job, tx and rx the keys of the pair (this process, it): see
 * udp.c OTHER JOBS. *id: its peer id (the next one, >= size; the same id again for a
 * process registered already, whose keys stay). FMPL_ERR_ARG for a bad address,
 * FMPL_ERR_INIT when OpenSSL fails. */
int vnic_udp_peer_add(vnic_transport_t *t, const char *ip, unsigned port, unsigned twin,
                      uint32_t rank, const unsigned char tx[32], const unsigned char rx[32],
                      int *id);
/* "ip:port:twinport" of this process's udp transport. */
int vnic_udp_addr(vnic_transport_t *t, char *buf, size_t len);
/* 1 when the transport's packets carry MACs (FMPL_UDP_AUTH), 0 for checksums. */
int vnic_udp_auth_on(vnic_transport_t *t);
/* Opens the udp transport for processes of other jobs when this process has none:
 * vnic_udp_open_alone (link.c, vnic.c). */
int vnic_remote_ready(vnic_t *v);
/* Copies the statistics of an open udp transport into *out. Never blocks. */
void vnic_udp_get_stats(vnic_transport_t *t, vnic_udp_stats_t *out);

/* The index among this host's ranks (nodes->local_ranks) of world rank `world`, or -1 when
 * it runs elsewhere. */
int vnic_local_index(const vnic_t *v, int world);
/* vnic_post's checks alone: FMPL_SUCCESS and the bytes moved in *total, or its error. */
int vnic_op_check(const vnic_t *v, const vnic_op_t *op, size_t *total);

/* Triggered operations (trigger.c). vnic_trig_open: after the shm transport is open, sets
 * up this rank's private state (FMPL_ERR_NOMEM). vnic_trig_close: at
 * vnic_close, before the transports quiesce: drops what is armed, waits for what a peer
 * runs now. vnic_trig_progress: one look at this rank's table (when v->trig_active) and
 * at the tables of the ranks that asked for help; returns the operations run or reaped.
 * vnic_trig_wake: a counter of this rank moved by this rank's own hand. */
int vnic_trig_open(vnic_t *v);
void vnic_trig_close(vnic_t *v);
int vnic_trig_progress(vnic_t *v);
void vnic_trig_wake(vnic_t *v);

/* Called by the transport providing storage once v->regions/nregions and
 * v->cntr_mem/ncntr are set: builds the private free lists. */
int vnic_storage_ready(vnic_t *v);

/* --------------------------------------------- local descriptor cursor */
typedef struct vnic_lcur {
    const struct iovec *iov;
    int cnt, idx;
    size_t off; /* into iov[idx] */
    struct iovec one;
} vnic_lcur_t;

/* c must not be copied afterwards (it may point into itself). */
static inline void vnic_lcur_init(vnic_lcur_t *c, const vnic_ldesc_t *d)
{
    if (d->kind == VNIC_DESC_CONTIG) {
        c->one.iov_base = d->u.contig.addr;
        c->one.iov_len = d->u.contig.len;
        c->iov = &c->one;
        c->cnt = 1;
    } else {
        c->iov = d->u.iov.iov;
        c->cnt = d->u.iov.cnt;
    }
    c->idx = 0;
    c->off = 0;
}

/* Copies the next n local bytes to dst (gather). */
static inline void vnic_lcur_gather(vnic_lcur_t *c, void *dst, size_t n)
{
    char *d = (char *)dst;
    while (n) {
        const struct iovec *e = &c->iov[c->idx];
        size_t k = BASE_MIN(n, e->iov_len - c->off);
        memcpy(d, (const char *)e->iov_base + c->off, k);
        d += k;
        n -= k;
        c->off += k;
        if (c->off == e->iov_len) {
            c->idx++;
            c->off = 0;
        }
    }
}

/* Copies n bytes from src into the next local bytes (scatter). */
static inline void vnic_lcur_scatter(vnic_lcur_t *c, const void *src, size_t n)
{
    const char *s = (const char *)src;
    while (n) {
        const struct iovec *e = &c->iov[c->idx];
        size_t k = BASE_MIN(n, e->iov_len - c->off);
        memcpy((char *)e->iov_base + c->off, s, k);
        s += k;
        n -= k;
        c->off += k;
        if (c->off == e->iov_len) {
            c->idx++;
            c->off = 0;
        }
    }
}

/* Describes up to n next local bytes as at most max iovecs (advancing the cursor);
 * returns the count, *got the bytes covered. */
static inline int vnic_lcur_slice(vnic_lcur_t *c, struct iovec *out, int max, size_t n, size_t *got)
{
    int k = 0;
    size_t g = 0;
    while (n && k < max) {
        const struct iovec *e = &c->iov[c->idx];
        size_t m = BASE_MIN(n, e->iov_len - c->off);
        if (m) {
            out[k].iov_base = (char *)e->iov_base + c->off;
            out[k].iov_len = m;
            k++;
        }
        g += m;
        n -= m;
        c->off += m;
        if (c->off == e->iov_len) {
            c->idx++;
            c->off = 0;
        }
    }
    *got = g;
    return k;
}

/* Moves the cursor to byte pos of the descriptor (from the start). */
static inline void vnic_lcur_seek(vnic_lcur_t *c, size_t pos)
{
    c->idx = 0;
    c->off = 0;
    while (c->idx < c->cnt && pos >= c->iov[c->idx].iov_len) {
        pos -= c->iov[c->idx].iov_len;
        c->idx++;
    }
    c->off = pos;
}

/* Stores the 8 bytes at src to dst (8-byte aligned) with release order: the tail
 * flag of VNIC_F_TAIL_FLAG, visible only after everything written before it. */
static inline void vnic_tail_store(void *dst, const void *src)
{
    uint64_t x;
    memcpy(&x, src, 8);
    __atomic_store_n((uint64_t *)dst, x, __ATOMIC_RELEASE);
}

#endif
