/* p2p.c — sender-side-matched point-to-point (seed 000, section 2.2):
 * fmpl_send/recv/isend/irecv and their waits, the notification handlers, and the
 * progress of pending sends.
 *
 * Receive: post a header into the sender's slot (one put), then wait for the payload's
 * notification. Send: take the header (the k-th header of the slot has seq k), put the
 * payload straight into the receive buffer with a notification (up to FMPLI_SMALL_MAX
 * bytes: an active message, copied by the receiver). No queue, no search and no
 * allocation on either path once the peer state exists.
 *
 * 2-D transfers (fmpl_send_2d and co.): the receive's header carries its layout, the
 * sender knows its own, and one put moves the stream from the sender's blocks into the
 * receiver's (the vnic's iovec descriptors on both sides: CMA with both lists, or direct
 * copies into the shared heap). Small blocks go through a staging block of the receiver's
 * heap instead, filled by the sender and scattered by the receiver with local copies
 * (Small blocks, STAGING and GATHER below). */
#include <stdlib.h>
#include <string.h>

#include "fmpl/fmpl_impl.h"

static inline uint32_t fmpli_token(const fmpli_peer_t *p, uint32_t slot)
{
    return p->pid << fmpli.slot_bits | slot;
}

static inline uint32_t fmpli_any_slot(void)
{
    return fmpli.nslots - 1;
}

/* ---------------------------------------------------------------- handlers */

/* The payload of one of my receives arrived: complete it (O(1) via the token). A small
 * payload came in an active message (FMPLI_SMALL_MAX): the immediate, then the bytes. */
static void fmpli_data_arrived(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    uint64_t imm = n->imm;
    size_t len = n->len;
    const unsigned char *small = NULL;
    if (n->data) {
        if (BASE_UNLIKELY(len < 8 || len > 8 + FMPLI_SMALL_MAX)) {
            BASE_DEBUG("fmpl: malformed small payload from rank %d (%zu bytes)", n->src, len);
            return;
        }
        memcpy(&imm, n->data, 8);
        small = (const unsigned char *)n->data + 8;
        len -= 8;
        if (imm & FMPLI_IMM_STREAM) { /* the length of bytes streamed into a staging block */
            uint64_t streamed = 0;
            memcpy(&streamed, small, BASE_MIN(len, sizeof streamed));
            small = NULL;
            len = (size_t)streamed;
        }
    }
    uint32_t token = (uint32_t)imm;
    uint32_t pid = token >> fmpli.slot_bits;
    uint32_t slot = token & ((1u << fmpli.slot_bits) - 1u);
    fmpli_peer_t *p = pid < fmpli.npid ? fmpli.pid_table[pid] : NULL;
    if (BASE_UNLIKELY(!p || slot >= fmpli.nslots || p->world != n->src)) {
        BASE_DEBUG("fmpl: stray payload notification from rank %d (token %u)", n->src, token);
        return;
    }
    fmpli_recvent_t *r = &p->recv[slot];
    if (BASE_UNLIKELY(r->state != FMPLI_RECV_POSTED || (uint8_t)r->seq != (uint8_t)(imm >> 48))) {
        BASE_DEBUG("fmpl: payload notification from rank %d for no posted receive", n->src);
        return;
    }
    if (BASE_UNLIKELY(((imm & FMPLI_IMM_STREAM) && !r->stage) || len > r->size)) {
        BASE_DEBUG("fmpl: malformed payload notification from rank %d", n->src);
        return;
    }
    if (small && len && r->stage) { /* a staged receive scatters it at its reap, as any other */
        memcpy(r->stage + 1, small, len);
    } else if (small && len && r->row) {      /* the sender cut it to the posted size */
        fmpli_lay_t lay = {0, r->row, r->ld}; /* the scatter needs no row count */
        fmpli_lay_scatter(r->buf, &lay, small, len);
    } else if (small && len) {
        memcpy(r->buf, small, len);
    }
    r->streamed = (imm & FMPLI_IMM_STREAM) != 0;
    r->got = len;
    r->smai = (uint32_t)(imm >> 32) & 0xffffu;
    r->err = (imm >> 56) & 1u ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    r->state = FMPLI_RECV_DONE;
}

/* The vnic's progress hook: pending isends and spooled sends go as soon as their
 * headers are there, whoever waits (a collective's wait included). Headers land by
 * direct puts that raise no event, so this looks at them on every progress call; with
 * nothing pending it costs two loads. */
static int fmpli_hook_id; /* the vnic hook, always armed (its idle check is two loads) */

static int fmpli_progress_hook(void *arg)
{
    (void)arg;
    if (BASE_LIKELY(!fmpli.npending && !fmpli.spool.npending))
        return 0;
    return fmpli_progress_sends();
}

int fmpli_p2p_init(void)
{
    int rc = vnic_set_notify_handler(fmpli.vnic, FMPLI_CHAN_DATA, fmpli_data_arrived, NULL);
    if (rc == FMPL_SUCCESS)
        rc = vnic_hook_add(fmpli.vnic, fmpli_progress_hook, NULL, 1, &fmpli_hook_id);
    return rc;
}

/* ---------------------------------------------------------------- matching */

static inline int fmpli_slot_ready(const fmpli_peer_t *p, uint32_t slot)
{
    return __atomic_load_n(&p->row[slot].seq, __ATOMIC_ACQUIRE) == p->send[slot].seq + 1;
}

int fmpli_match_peek(const fmpli_peer_t *p, uint32_t mai)
{
    return fmpli_slot_ready(p, mai) || fmpli_slot_ready(p, fmpli_any_slot());
}

int fmpli_match_take(fmpli_peer_t *p, uint32_t mai, fmpli_hdr_t *out)
{
    uint32_t slot = mai;
    if (!fmpli_slot_ready(p, slot)) {
        slot = fmpli_any_slot();
        if (!fmpli_slot_ready(p, slot))
            return 0;
    }
    /* The receiver rewrites this slot only after our payload completed its receive. */
    *out = p->row[slot];
    p->send[slot].seq++;
    if (p->hot[0] != slot) {
        p->hot[1] = p->hot[0];
        p->hot[0] = slot;
    }
    return 1;
}

void fmpli_lay_gather(void *dst, const void *buf, const fmpli_lay_t *lay, size_t n)
{
    char *d = dst;
    for (size_t i = 0; n; i++) {
        size_t k = BASE_MIN(n, lay->row_bytes);
        memcpy(d, (const char *)buf + i * lay->ld, k);
        d += k;
        n -= k;
    }
}

void fmpli_lay_scatter(void *buf, const fmpli_lay_t *lay, const void *src, size_t n)
{
    const char *q = src;
    for (size_t i = 0; n; i++) {
        size_t k = BASE_MIN(n, lay->row_bytes);
        memcpy((char *)buf + i * lay->ld, q, k);
        q += k;
        n -= k;
    }
}

/* ---------------------------------------------------------------- small blocks */

/* Small blocks. fmpli_put_2d below moves the stream from the sender's blocks straight into
 * the receiver's with iovec lists on both sides: one copy, the right path for large
 * blocks. For small ones the pieces are what costs: on the receiver's side CMA pins the
 * target's pages once per remote iovec (~250 ns each), the shm transport's small-piece
 * put packs them with their offsets for the target's CPU, udp sends one message per
 * piece; on the sender's side the vnic's cursors cost ~15 ns a piece more than a memcpy
 * loop (4096 blocks of 8 bytes: 60 us where the loop takes 25). Local memcpys on each
 * side, through one contiguous block, cost less. bench/fmpl_blacs on a host (4096 blocks,
 * one-way us, straight -> staged): 8-byte blocks 204 -> 40, 128-byte 242 -> 132, 256-byte
 * 285 -> 214, 512-byte 485 -> 404, 1 KiB 901 -> 1229; but a staged receive scatters at
 * its wait what the straight path had already put in place (a receive posted early and
 * waited for late: 187 against 328 us at 128-byte blocks, 131 against 542 at 256), so
 * blocks of FMPLI_STAGE_ROW bytes or more go straight on a host. Over udp (other hosts,
 * FMPL_TRANSPORT=udp) every message per piece costs more than the two copies: staged
 * every time (8 KiB blocks: 9.3 ms -> 8.5).
 *
 * STAGING. A 2-D receive (whose message would not fit an active message, FMPLI_SMALL_MAX)
 * with blocks shorter than FMPLI_STAGE_ROW bytes, or from a sender that does not map this
 * process's heap, posts in place of its buffer a contiguous staging block of its own
 * shared heap (the receive's size, after a head line), with FMPLI_HDR_STAGED in its
 * header: to the sender a contiguous receive. A sender that maps the block (a rank of
 * this host, vnic_peer_ptr) streams into it: an active message with the length first
 * (FMPLI_IMM_STREAM: the receive completes), then its bytes in pieces, each gathered from
 * its blocks with local memcpys straight into the block and published in the head
 * (placed: a release store, then vnic_peer_wake). The receiver scatters into its layout,
 * with local memcpys, what has been placed while the rest is coming, when it reaps the
 * receive (fmpl_recv_2d, fmpl_irecv_wait): two cores copy at once, as in the MPI face's
 * STAGED path (src/mpi/p2p.c) where the sender packs into its own heap. Here the block is
 * the receiver's, so the sender has nothing to keep or free and no answer to wait for.
 * A sender that cannot map the block puts into it as into any contiguous buffer and the
 * receiver scatters it all at the reap: over udp there is no shared heap between hosts,
 * but the block is still the receiver's own memory under VNIC_KEY_HEAP, so that put is
 * one contiguous run of datagrams, received in place (udp.c).
 * The receiver frees the block at the reap, once every byte has been placed (or the put
 * that filled it has notified): no peer can write there any more. A receive cancelled
 * with its communicator frees it after every member has flushed its sends. Without room
 * in the heap, or larger than 1/8 of it, the receive goes straight.
 *
 * GATHER. A sender whose blocks are shorter than FMPLI_STAGE_ROW bytes and that does not
 * stream (the receive is not staged, or not mapped here) gathers them with
 * fmpli_lay_gather into a private buffer, kept for the next send, and one put sends that
 * on: into a contiguous receive, or into the receiver's large blocks. */
#define FMPLI_STAGE_ROW 256
#define FMPLI_GATHER_KEEP (4u << 20) /* largest gather buffer kept between sends */
/* Pieces of a streamed delivery: 1/16 of the message within these bounds, whole blocks. */
#define FMPLI_STREAM_PIECE_MIN 4096
#define FMPLI_STREAM_PIECE_MAX (256u << 10)

/* The staging block (its head) of a 2-D receive of size bytes with blocks of row bytes
 * from world rank src, or NULL when it is not staged (STAGING). */
static fmpli_stage_head_t *fmpli_stage_alloc(int src, size_t size, size_t row)
{
    vnic_t *v = fmpli.vnic;
    if (size <= FMPLI_SMALL_MAX || size > vnic_info(v)->heap_size / 8)
        return NULL;
    if (row >= FMPLI_STAGE_ROW && vnic_peer_ptr(v, src, VNIC_KEY_HEAP, 0, 1))
        return NULL; /* large blocks, a sender of this host: straight */
    fmpli_stage_head_t *head = vnic_mem_alloc(v, sizeof *head + size);
    if (head)
        head->placed = 0;
    return head;
}

typedef struct fmpli_stage_wait {
    const uint64_t *placed;
    uint64_t need;
} fmpli_stage_wait_t;

static int fmpli_stage_ready(void *arg)
{
    const fmpli_stage_wait_t *w = arg;
    return __atomic_load_n(w->placed, __ATOMIC_ACQUIRE) >= w->need;
}

/* Scatters the r->got bytes of staged receive r's block into its buffer's layout: as the
 * sender places them when it streams (r->streamed), else all at once. FMPL_SUCCESS, or the
 * error of the wait for the next piece (the receive stays as it is: a later call scatters
 * again from the start). */
static int fmpli_stage_scatter(const fmpli_recvent_t *r)
{
    fmpli_stage_head_t *head = r->stage;
    const char *data = (const char *)(head + 1);
    fmpli_lay_t lay = {0, r->row, r->ld}; /* the scatter needs no row count */
    size_t got = (size_t)r->got, row = (size_t)r->row;
    fmpli_stage_wait_t w = {&head->placed, 0};
    for (size_t done = 0; done < got;) {
        size_t avail = got;
        if (r->streamed) {
            uint64_t placed = __atomic_load_n(&head->placed, __ATOMIC_ACQUIRE);
            avail = (size_t)BASE_MIN(placed, (uint64_t)got);
        }
        /* whole blocks, so that done stays at a block's start */
        size_t upto = avail == got ? got : avail - avail % row;
        if (upto <= done) {
            w.need = BASE_MIN(got, done + row);
            int rc = fmpli_wait(fmpli_stage_ready, &w, -1);
            if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
                return rc;
            continue;
        }
        fmpli_lay_scatter((char *)r->buf + done / row * r->ld, &lay, data + done, upto - done);
        done = upto;
    }
    return FMPL_SUCCESS;
}

/* Gives receive r's staging block, if any, back to the heap. */
static void fmpli_stage_free(fmpli_recvent_t *r)
{
    if (!r->stage)
        return;
    vnic_mem_free(fmpli.vnic, r->stage);
    r->stage = NULL;
}

/* The gather buffer kept between sends; busy while a put reads it (a put may progress,
 * and a send that progress pushes then takes another). */
static struct {
    void *buf;
    size_t len;
    int busy;
} fmpli_gather;

/* A private buffer of n bytes for a gathered send: the kept one when it is free and, grown
 * if need be, not larger than FMPLI_GATHER_KEEP; else a fresh one. NULL: out of memory.
 * Give it back with fmpli_gather_put. */
static void *fmpli_gather_get(size_t n)
{
    if (fmpli_gather.busy || n > FMPLI_GATHER_KEEP)
        return malloc(n);
    if (fmpli_gather.len < n) {
        void *b = malloc(n);
        if (!b)
            return NULL;
        free(fmpli_gather.buf);
        fmpli_gather.buf = b;
        fmpli_gather.len = n;
    }
    fmpli_gather.busy = 1;
    return fmpli_gather.buf;
}

static void fmpli_gather_put(void *b)
{
    if (b == fmpli_gather.buf)
        fmpli_gather.busy = 0;
    else
        free(b);
}

/* The put of a 2-D delivery: len bytes from buf laid out as lay (NULL: contiguous) into
 * the receive buffer of h in its layout, as iovec lists on both sides (on the stack up
 * to FMPLI_IOV_STACK pieces a side). For large blocks; small ones: see STAGING, GATHER. */
#define FMPLI_IOV_STACK 32
static int fmpli_put_2d(vnic_op_t *op, const fmpli_hdr_t *h, const void *buf, size_t len,
                        const fmpli_lay_t *lay)
{
    size_t lrow = lay ? lay->row_bytes : len, rrow = h->row ? h->row : len;
    size_t nl = (len + lrow - 1) / lrow, nr = (len + rrow - 1) / rrow;
    struct iovec liov_stack[FMPLI_IOV_STACK], *liov = liov_stack;
    vnic_rseg_t rseg_stack[FMPLI_IOV_STACK], *rseg = rseg_stack;
    if (nl > FMPLI_IOV_STACK)
        liov = malloc(nl * sizeof *liov);
    if (nr > FMPLI_IOV_STACK)
        rseg = malloc(nr * sizeof *rseg);
    int rc = FMPL_ERR_NOMEM;
    if (liov && rseg) {
        for (size_t i = 0, left = len; i < nl; i++, left -= lrow) {
            liov[i].iov_base = (char *)(uintptr_t)buf + i * (lay ? lay->ld : 0);
            liov[i].iov_len = BASE_MIN(left, lrow);
        }
        for (size_t i = 0, left = len; i < nr; i++, left -= rrow)
            rseg[i] = (vnic_rseg_t){h->off + i * h->ld, BASE_MIN(left, rrow)};
        op->local.kind = VNIC_DESC_IOV;
        op->local.u.iov.iov = liov;
        op->local.u.iov.cnt = (int)nl;
        op->remote.kind = VNIC_DESC_IOV;
        op->remote.u.iov.seg = rseg;
        op->remote.u.iov.cnt = (int)nr;
        rc = vnic_post(fmpli.vnic, op);
    }
    if (liov != liov_stack)
        free(liov);
    if (rseg != rseg_stack)
        free(rseg);
    return rc;
}

/* The put of len contiguous bytes at buf into the contiguous receive buffer of h. */
static int fmpli_put_contig(vnic_op_t *op, const fmpli_hdr_t *h, const void *buf, size_t len)
{
    op->local.kind = VNIC_DESC_CONTIG;
    op->local.u.contig.addr = (void *)(uintptr_t)buf;
    op->local.u.contig.len = len;
    op->remote.kind = VNIC_DESC_CONTIG;
    op->remote.u.off = h->off;
    return vnic_post(fmpli.vnic, op);
}

/* GATHER: len bytes from buf laid out as lay (small blocks) gathered into a private
 * buffer and put from there into the receive buffer of h; piece by piece (fmpli_put_2d)
 * when no buffer can be had. */
static int fmpli_put_gathered(vnic_op_t *op, const fmpli_hdr_t *h, const void *buf, size_t len,
                              const fmpli_lay_t *lay)
{
    void *g = fmpli_gather_get(len);
    if (!g)
        return fmpli_put_2d(op, h, buf, len, lay);
    fmpli_lay_gather(g, buf, lay, len);
    int rc = h->row ? fmpli_put_2d(op, h, g, len, NULL) : fmpli_put_contig(op, h, g, len);
    fmpli_gather_put(g);
    return rc;
}

/* The data of the staging block that header h names at peer world, when this process
 * maps it (head included) for len bytes, else NULL. */
static char *fmpli_stage_map(int world, const fmpli_hdr_t *h, size_t len)
{
    size_t hl = sizeof(fmpli_stage_head_t);
    if (BASE_UNLIKELY(h->off < hl))
        return NULL;
    char *head = vnic_peer_ptr(fmpli.vnic, world, h->key, h->off - hl, hl + len);
    return head ? head + hl : NULL;
}

/* STAGING, streamed: the active message with op's immediate and the length, then len
 * bytes from buf laid out as lay (NULL: contiguous) stored into the staging block at dst
 * piece by piece, each published in the block's head. */
static int fmpli_put_streamed(const vnic_op_t *op, char *dst, const void *buf, size_t len,
                              const fmpli_lay_t *lay)
{
    vnic_t *v = fmpli.vnic;
    fmpli_stage_head_t *head = (fmpli_stage_head_t *)(void *)dst - 1;
    uint64_t imm = op->imm | FMPLI_IMM_STREAM, n = len;
    int rc = vnic_send_am(v, op->peer, FMPLI_CHAN_DATA, 0, &imm, 8, &n, 8);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    size_t piece = BASE_MIN(BASE_MAX(len / 16, (size_t)FMPLI_STREAM_PIECE_MIN),
                            (size_t)FMPLI_STREAM_PIECE_MAX);
    if (lay) /* whole blocks: each piece starts at a block */
        piece = BASE_MAX(piece - piece % lay->row_bytes, lay->row_bytes);
    for (size_t done = 0; done < len;) {
        size_t k = BASE_MIN(piece, len - done);
        if (lay)
            fmpli_lay_gather(dst + done, (const char *)buf + done / lay->row_bytes * lay->ld, lay,
                             k);
        else
            memcpy(dst + done, (const char *)buf + done, k);
        done += k;
        __atomic_store_n(&head->placed, (uint64_t)done, __ATOMIC_RELEASE);
        vnic_peer_wake(v, op->peer); /* if it sleeps waiting for this piece */
    }
    return FMPL_SUCCESS;
}

int fmpli_deliver(fmpli_peer_t *p, uint32_t mai, const fmpli_hdr_t *h, const void *buf, size_t size,
                  const fmpli_lay_t *lay)
{
    int trunc = size > h->size;
    size_t len = trunc ? (size_t)h->size : size;
    if (len <= FMPLI_SMALL_MAX) {
        uint64_t imm = FMPLI_IMM(h->token, mai, h->seq, trunc);
        unsigned char packed[FMPLI_SMALL_MAX];
        if (lay) { /* the receiver scatters it into its own layout */
            fmpli_lay_gather(packed, buf, lay, len);
            buf = packed;
        }
        int rc = vnic_send_am(fmpli.vnic, p->world, FMPLI_CHAN_DATA, 0, &imm, 8, buf, len);
        if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
            return rc;
        return trunc ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    }
    vnic_op_t op = {.opcode = VNIC_OP_PUT,
                    .peer = p->world,
                    .flags = VNIC_F_NOTIFY,
                    .chan = FMPLI_CHAN_DATA,
                    .imm = FMPLI_IMM(h->token, mai, h->seq, trunc)};
    op.remote.key = h->key;
    int rc;
    char *stage;
    if (BASE_UNLIKELY(h->flags & FMPLI_HDR_STAGED) && (stage = fmpli_stage_map(p->world, h, len)))
        rc = fmpli_put_streamed(&op, stage, buf, len, lay);
    else if (BASE_LIKELY(!lay && !h->row))
        rc = fmpli_put_contig(&op, h, buf, len);
    else if (lay && lay->row_bytes < FMPLI_STAGE_ROW)
        rc = fmpli_put_gathered(&op, h, buf, len, lay);
    else
        rc = fmpli_put_2d(&op, h, buf, len, lay);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    return trunc ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- registrations */

/* Receive buffers outside the heap are registered so the sender can address them. A
 * loop that receives into the same buffer again (the common case) keeps its key here:
 * the region-table line the sender validates against then stays unchanged in the
 * sender's cache instead of missing on every message. Direct-mapped, reference
 * counted: an entry in use by a posted receive is never replaced. */
#define FMPLI_RCACHE 64
typedef struct fmpli_rcent {
    const void *base;
    size_t len;
    vnic_key_t key;
    uint32_t users;
} fmpli_rcent_t;
static fmpli_rcent_t fmpli_rcache[FMPLI_RCACHE];

static int fmpli_rcache_get(void *buf, size_t size, fmpli_recvent_t *r)
{
    uint32_t i = (uint32_t)(((uintptr_t)buf >> 6) % FMPLI_RCACHE);
    fmpli_rcent_t *e = &fmpli_rcache[i];
    if (e->base == buf && e->len >= size && e->key != VNIC_KEY_INVALID) {
        e->users++;
        r->key = e->key;
        r->rcache = (uint8_t)(i + 1);
        return FMPL_SUCCESS;
    }
    vnic_key_t key;
    int rc = vnic_mr_reg(fmpli.vnic, buf, size, VNIC_ACC_REMOTE_WRITE, &key);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    r->key = key;
    r->rcache = 0;
    if (e->users == 0) { /* replace the idle entry */
        if (e->key != VNIC_KEY_INVALID)
            vnic_mr_dereg(fmpli.vnic, e->key);
        *e = (fmpli_rcent_t){buf, size, key, 1};
        r->rcache = (uint8_t)(i + 1);
    }
    return FMPL_SUCCESS;
}

static void fmpli_rcache_release(fmpli_recvent_t *r)
{
    if (r->key == VNIC_KEY_INVALID)
        return;
    if (r->rcache)
        fmpli_rcache[r->rcache - 1].users--;
    else
        vnic_mr_dereg(fmpli.vnic, r->key);
    r->key = VNIC_KEY_INVALID;
    r->rcache = 0;
}

void fmpli_rcache_flush(void)
{
    free(fmpli_gather.buf);
    fmpli_gather.buf = NULL;
    fmpli_gather.len = 0;
    for (int i = 0; i < FMPLI_RCACHE; i++) {
        if (fmpli_rcache[i].key != VNIC_KEY_INVALID)
            vnic_mr_dereg(fmpli.vnic, fmpli_rcache[i].key);
        fmpli_rcache[i] = (fmpli_rcent_t){NULL, 0, VNIC_KEY_INVALID, 0};
    }
}

/* ---------------------------------------------------------------- pending isends */

static int fmpli_pending_add(fmpli_peer_t *p, uint32_t mai)
{
    if (fmpli.npending == fmpli.pending_cap) {
        uint32_t cap = fmpli.pending_cap ? fmpli.pending_cap * 2 : 64;
        fmpli_pending_t *t = realloc(fmpli.pending, cap * sizeof *t);
        if (!t)
            return FMPL_ERR_NOMEM;
        fmpli.pending = t;
        fmpli.pending_cap = cap;
    }
    fmpli.pending[fmpli.npending] = (fmpli_pending_t){p, mai};
    p->send[mai].pend_idx = fmpli.npending++;
    return FMPL_SUCCESS;
}

static void fmpli_pending_remove(uint32_t i)
{
    fmpli_pending_t last = fmpli.pending[--fmpli.npending];
    if (i != fmpli.npending) {
        fmpli.pending[i] = last;
        last.peer->send[last.mai].pend_idx = i;
    }
}

int fmpli_progress_sends(void)
{
    if (fmpli.in_progress)
        return 0;
    fmpli.in_progress = 1;
    int done = fmpli.spool.npending ? fmpli_spool_push() : 0;
    for (uint32_t i = 0; i < fmpli.npending;) {
        fmpli_peer_t *p = fmpli.pending[i].peer;
        uint32_t mai = fmpli.pending[i].mai;
        fmpli_sendent_t *s = &p->send[mai];
        fmpli_hdr_t h;
        if (s->spooled == 0 && fmpli_match_take(p, mai, &h)) {
            fmpli_pending_remove(i);
            s->result = fmpli_deliver(p, mai, &h, s->buf, s->size, s->lay.rows ? &s->lay : NULL);
            s->state = FMPLI_SEND_DONE;
            done++;
        } else {
            i++;
        }
    }
    fmpli.in_progress = 0;
    return done;
}

/* ---------------------------------------------------------------- waiting */

int fmpli_wait(vnic_ready_fn ready, void *arg, int64_t timeout_ns)
{
    if (ready(arg))
        return FMPL_SUCCESS;
    if (timeout_ns == 0) { /* one look, no waiting (progress runs the send hook) */
        vnic_progress(fmpli.vnic);
        return ready(arg) ? FMPL_SUCCESS : FMPL_ERR_TIMEOUT;
    }
    return vnic_wait(fmpli.vnic, ready, arg, timeout_ns);
}

static int fmpli_flush_ready(void *arg)
{
    const fmpli_comm_t *c = arg;
    if (!c)
        return fmpli.npending == 0 && fmpli.spool.npending == 0;
    for (uint32_t i = 0; i < fmpli.npending; i++)
        if (fmpli.pending[i].peer->comm == c)
            return 0;
    for (const fmpli_spool_blk_t *b = fmpli.spool.head; b; b = b->next)
        if (b->peer->comm == c)
            return 0;
    return 1;
}

int fmpli_flush_sends(const fmpli_comm_t *c)
{
    return fmpli_wait(fmpli_flush_ready, (void *)(uintptr_t)c, -1);
}

void fmpli_peer_release(fmpli_peer_t *p)
{
    for (uint32_t slot = 0; slot < fmpli.nslots; slot++) {
        fmpli_recvent_t *r = &p->recv[slot];
        if (r->state != FMPLI_RECV_IDLE) {
            fmpli_rcache_release(r);
            fmpli_stage_free(r); /* every member flushed its sends: nothing comes */
        }
    }
    for (uint32_t i = 0; i < fmpli.npending;) {
        if (fmpli.pending[i].peer == p)
            fmpli_pending_remove(i);
        else
            i++;
    }
    fmpli_spool_forget_peer(p);
}

/* ---------------------------------------------------------------- argument checks */

int fmpli_p2p_check(fmpl_comm comm, const void *buf, size_t size, int rank, int mai, int any_ok,
                    fmpli_comm_t **cp)
{
    if (BASE_UNLIKELY(fmpli.status != FMPLI_ACTIVE))
        return FMPL_ERR_NOT_INIT;
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (BASE_UNLIKELY(!c))
        return FMPL_ERR_COMM;
    if (BASE_UNLIKELY(!buf && size))
        return FMPL_ERR_BUFFER;
    if (BASE_UNLIKELY((unsigned)rank >= (unsigned)c->size))
        return FMPL_ERR_RANK;
    if (BASE_UNLIKELY((unsigned)mai >= (unsigned)fmpli.mai_max && !(any_ok && mai == FMPL_TAG_ANY)))
        return FMPL_ERR_MAI;
    *cp = c;
    return FMPL_SUCCESS;
}

/* ---------------------------------------------------------------- sends */

/* How long a send waits for its header before spooling; -1: forever (synchronous). */
static int64_t fmpli_send_timeout_ns(void)
{
    if (!fmpli.spool.base || fmpli.spool.timeout_ms == FMPL_TIMEOUT_INFINITE)
        return -1;
    return (int64_t)fmpli.spool.timeout_ms * 1000000;
}

typedef struct fmpli_sendwait {
    fmpli_peer_t *p;
    uint32_t mai;
} fmpli_sendwait_t;

static int fmpli_send_ready(void *arg)
{
    const fmpli_sendwait_t *w = arg;
    return w->p->send[w->mai].spooled == 0 && fmpli_match_peek(w->p, w->mai);
}

/* A blocking send whose header is not there yet: wait for it, or spool on timeout. */
static int fmpli_send_slow(fmpli_peer_t *p, uint32_t mai, const void *buf, size_t size,
                           const fmpli_lay_t *lay)
{
    fmpli_sendent_t *s = &p->send[mai];
    fmpli_sendwait_t w = {p, mai};
    s->state = FMPLI_SEND_ACTIVE; /* progress leaves it alone; re-entry sees BUSY */
    int rc;
    for (;;) {
        rc = fmpli_wait(fmpli_send_ready, &w, fmpli_send_timeout_ns());
        if (rc == FMPL_ERR_TIMEOUT) {
            rc = fmpli_spool_add(p, mai, buf, size, lay);
            break;
        }
        if (rc != FMPL_SUCCESS)
            break;
        fmpli_hdr_t h;
        if (s->spooled == 0 && fmpli_match_take(p, mai, &h)) {
            rc = fmpli_deliver(p, mai, &h, buf, size, lay);
            break;
        }
    }
    s->state = FMPLI_SEND_IDLE;
    return rc;
}

/* What fmpl_send and fmpl_isend check first: arguments, the peer state, an idle mai. */
static inline int fmpli_send_start(const void *buf, size_t size, int dst, int mai, fmpl_comm comm,
                                   fmpli_peer_t **pp, fmpli_sendent_t **sp)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, buf, size, dst, mai, 0, &c);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    fmpli_peer_t *p = fmpli_peer_get(c, dst);
    if (BASE_UNLIKELY(!p))
        return FMPL_ERR_NOMEM;
    fmpli_sendent_t *s = &p->send[mai];
    if (BASE_UNLIKELY(s->state != FMPLI_SEND_IDLE))
        return FMPL_ERR_BUSY;
    *pp = p;
    *sp = s;
    return FMPL_SUCCESS;
}

static inline int fmpli_send_lay(const void *buf, size_t size, const fmpli_lay_t *lay, int dst,
                                 int mai, fmpl_comm comm)
{
    fmpli_peer_t *p;
    fmpli_sendent_t *s;
    int rc = fmpli_send_start(buf, size, dst, mai, comm, &p, &s);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    fmpli_hdr_t h;
    if (BASE_LIKELY(s->spooled == 0) && fmpli_match_take(p, (uint32_t)mai, &h))
        return fmpli_deliver(p, (uint32_t)mai, &h, buf, size, lay);
    return fmpli_send_slow(p, (uint32_t)mai, buf, size, lay);
}

int fmpl_send(const void *buf, size_t size, int dst, int mai, fmpl_comm comm)
{
    return fmpli_send_lay(buf, size, NULL, dst, mai, comm);
}

static int fmpli_isend_lay(const void *buf, size_t size, const fmpli_lay_t *lay, int dst, int mai,
                           fmpl_comm comm)
{
    fmpli_peer_t *p;
    fmpli_sendent_t *s;
    int rc = fmpli_send_start(buf, size, dst, mai, comm, &p, &s);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    s->buf = buf;
    s->size = size;
    s->lay = lay ? *lay : (fmpli_lay_t){0, 0, 0};
    fmpli_hdr_t h;
    if (BASE_LIKELY(s->spooled == 0) && fmpli_match_take(p, (uint32_t)mai, &h)) {
        s->result = fmpli_deliver(p, (uint32_t)mai, &h, buf, size, lay);
        s->state = FMPLI_SEND_DONE;
        return FMPL_SUCCESS;
    }
    rc = fmpli_pending_add(p, (uint32_t)mai);
    if (rc != FMPL_SUCCESS)
        return rc;
    s->state = FMPLI_SEND_PENDING;
    return FMPL_SUCCESS;
}

int fmpl_isend(const void *buf, size_t size, int dst, int mai, fmpl_comm comm)
{
    return fmpli_isend_lay(buf, size, NULL, dst, mai, comm);
}

static int fmpli_isend_done(void *arg)
{
    return ((const fmpli_sendent_t *)arg)->state == FMPLI_SEND_DONE;
}

int fmpl_isend_wait(int dst, int mai, fmpl_comm comm)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, NULL, 0, dst, mai, 0, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpli_peer_t *p = c->peers[dst];
    if (!p)
        return FMPL_ERR_NO_PENDING;
    fmpli_sendent_t *s = &p->send[mai];
    if (s->state == FMPLI_SEND_PENDING) {
        rc = fmpli_wait(fmpli_isend_done, s, fmpli_send_timeout_ns());
        if (rc == FMPL_ERR_TIMEOUT && s->state == FMPLI_SEND_PENDING) {
            /* Buffered mode: copy into the spool and complete. Without room the isend
             * stays pending and the caller may wait again. */
            fmpli_pending_remove(s->pend_idx);
            s->state = FMPLI_SEND_ACTIVE;
            rc = fmpli_spool_add(p, (uint32_t)mai, s->buf, s->size, s->lay.rows ? &s->lay : NULL);
            if (rc != FMPL_SUCCESS) {
                int arc = fmpli_pending_add(p, (uint32_t)mai);
                s->state = FMPLI_SEND_PENDING;
                return arc != FMPL_SUCCESS ? arc : rc;
            }
            s->state = FMPLI_SEND_IDLE;
            return FMPL_SUCCESS;
        }
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    if (s->state != FMPLI_SEND_DONE)
        return FMPL_ERR_NO_PENDING;
    s->state = FMPLI_SEND_IDLE;
    return s->result;
}

/* ---------------------------------------------------------------- receives */

static int fmpli_recv_done(void *arg);

/* Posts the header of a receive into the sender's slot. defer: not needed at once (an
 * irecv): the vnic may hold it for the next post to that peer (VNIC_F_DEFER; over udp the
 * next payload sent there carries it in the same datagram), and r->held/dmark tell
 * fmpli_recv_wait whether it may still be held. */
static int fmpli_recv_post(fmpli_comm_t *c, void *buf, size_t size, const fmpli_lay_t *lay, int src,
                           int mai, int defer, fmpli_peer_t **pp, fmpli_recvent_t **rp)
{
    fmpli_peer_t *p = fmpli_peer_get(c, src);
    if (BASE_UNLIKELY(!p))
        return FMPL_ERR_NOMEM;
    uint32_t slot = mai == FMPL_TAG_ANY ? fmpli_any_slot() : (uint32_t)mai;
    fmpli_recvent_t *r = &p->recv[slot];
    if (BASE_UNLIKELY(r->state != FMPLI_RECV_IDLE))
        return FMPL_ERR_BUSY;
    vnic_t *v = fmpli.vnic;
    vnic_key_t key = VNIC_KEY_HEAP;
    uint64_t off = 0;
    r->key = VNIC_KEY_INVALID;
    r->rcache = 0;
    /* the bytes the layout spans (a 2-D receive's gaps included) */
    size_t span = lay ? (lay->rows - 1) * lay->ld + lay->row_bytes : size;
    fmpli_stage_head_t *stage = NULL;
    if (size) {
        stage = lay ? fmpli_stage_alloc(p->world, size, lay->row_bytes) : NULL;
        if (stage) { /* the sender writes the stream into the block (STAGING) */
            off = vnic_mem_heap_offset(v, stage + 1);
        } else if (vnic_mem_in_heap(v, buf, span)) {
            off = vnic_mem_heap_offset(v, buf); /* zero-copy: the sender memcpys into it */
        } else {
            int rc = fmpli_rcache_get(buf, span, r);
            if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
                return rc;
            key = r->key;
        }
    }
    fmpli_hdr_t h = {.off = off,
                     .size = size,
                     .key = key,
                     .token = fmpli_token(p, slot),
                     .row = lay && !stage ? lay->row_bytes : 0,
                     .ld = lay && !stage ? lay->ld : 0,
                     .flags = stage ? FMPLI_HDR_STAGED : 0,
                     .seq = r->seq + 1};
    r->seq++;
    r->buf = buf;
    r->size = size;
    r->row = lay ? lay->row_bytes : 0;
    r->ld = lay ? lay->ld : 0;
    r->stage = stage;
    r->state = FMPLI_RECV_POSTED; /* before the put: the payload may arrive inside it */
    vnic_op_t op = {.opcode = VNIC_OP_PUT,
                    .peer = p->world,
                    .flags = VNIC_F_TAIL_FLAG | (defer ? VNIC_F_DEFER : 0u)};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = &h;
    op.local.u.contig.len = sizeof h;
    op.remote.key = p->remote_key;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = p->remote_off + (uint64_t)slot * sizeof(fmpli_hdr_t);
    int rc = vnic_post(v, &op);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS)) {
        r->seq--;
        r->state = FMPLI_RECV_IDLE;
        fmpli_rcache_release(r);
        fmpli_stage_free(r);
        return rc;
    }
    uint64_t mark = defer ? vnic_defer_mark(v) : 0;
    r->held = mark != 0;
    r->dmark = (uint32_t)mark;
    *pp = p;
    *rp = r;
    return FMPL_SUCCESS;
}

typedef struct fmpli_recv_wait {
    const fmpli_recvent_t *r;
    const fmpli_hdr_t *hot[2];
} fmpli_recv_wait_t;

/* fmpli_recv_wait's test: the receive is done. Meanwhile it prefetches the header lines
 * of the slots this process last sent on to the same peer: the peer wrote them when it
 * posted its next receives (a ping-pong posts them before it waits), and the send that
 * answers this message would otherwise wait for those lines after the message came. */
static int fmpli_recv_wait_done(void *arg)
{
    const fmpli_recv_wait_t *w = arg;
    __builtin_prefetch(w->hot[0], 0, 3);
    __builtin_prefetch(w->hot[1], 0, 3);
    return fmpli_recv_done((void *)(uintptr_t)w->r);
}

/* Waits for a posted receive r from peer p. When its own header may still be held by the
 * vnic (VNIC_F_DEFER), a plain wait sends it first; else the wait keeps other held
 * headers (posted for later receives) while it spins, so that the next payload this
 * process sends to their peer takes them along (vnic_wait_keep): in a ping-pong with
 * receives posted ahead, one datagram per message instead of two over udp. */
static int fmpli_recv_wait(const fmpli_peer_t *p, fmpli_recvent_t *r)
{
    if (fmpli_recv_done(r))
        return FMPL_SUCCESS;
    fmpli_recv_wait_t w = {r, {&p->row[p->hot[0]], &p->row[p->hot[1]]}};
    if (r->held && r->dmark == (uint32_t)vnic_defer_mark(fmpli.vnic))
        return vnic_wait(fmpli.vnic, fmpli_recv_wait_done, &w, -1);
    return vnic_wait_keep(fmpli.vnic, fmpli_recv_wait_done, &w, -1);
}

/* Finishes a completed receive: status, registration, slot state. Returns its error. */
static int fmpli_recv_reap(const fmpli_peer_t *p, fmpli_recvent_t *r, fmpl_status *status)
{
    if (r->stage) { /* STAGING: its bytes into the receive buffer */
        int rc = fmpli_stage_scatter(r);
        if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
            return rc; /* stays done with its block: fmpl_irecv_wait may finish it */
        fmpli_stage_free(r);
    }
    int err = r->err;
    if (status) {
        status->source = p->rank;
        status->mai = (int)r->smai;
        status->size = (size_t)r->got;
        status->error = err;
    }
    fmpli_rcache_release(r);
    r->state = FMPLI_RECV_IDLE;
    return err;
}

static int fmpli_recv_done(void *arg)
{
    return ((const fmpli_recvent_t *)arg)->state == FMPLI_RECV_DONE;
}

static inline int fmpli_recv_lay(void *buf, size_t size, const fmpli_lay_t *lay, int src, int mai,
                                 fmpl_comm comm, fmpl_status *status)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, buf, size, src, mai, 1, &c);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    fmpli_peer_t *p;
    fmpli_recvent_t *r;
    rc = fmpli_recv_post(c, buf, size, lay, src, mai, 0, &p, &r);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    rc = fmpli_recv_wait(p, r);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc; /* the receive stays posted; fmpl_irecv_wait may finish it */
    return fmpli_recv_reap(p, r, status);
}

int fmpl_recv(void *buf, size_t size, int src, int mai, fmpl_comm comm, fmpl_status *status)
{
    return fmpli_recv_lay(buf, size, NULL, src, mai, comm, status);
}

static int fmpli_irecv_lay(void *buf, size_t size, const fmpli_lay_t *lay, int src, int mai,
                           fmpl_comm comm)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, buf, size, src, mai, 1, &c);
    if (BASE_UNLIKELY(rc != FMPL_SUCCESS))
        return rc;
    fmpli_peer_t *p;
    fmpli_recvent_t *r;
    return fmpli_recv_post(c, buf, size, lay, src, mai, 1, &p, &r);
}

int fmpl_irecv(void *buf, size_t size, int src, int mai, fmpl_comm comm)
{
    return fmpli_irecv_lay(buf, size, NULL, src, mai, comm);
}

int fmpl_irecv_wait(int src, int mai, fmpl_comm comm, fmpl_status *status)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, NULL, 0, src, mai, 1, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpli_peer_t *p = c->peers[src];
    if (!p)
        return FMPL_ERR_NO_PENDING;
    fmpli_recvent_t *r = &p->recv[mai == FMPL_TAG_ANY ? fmpli_any_slot() : (uint32_t)mai];
    if (r->state == FMPLI_RECV_IDLE)
        return FMPL_ERR_NO_PENDING;
    rc = fmpli_recv_wait(p, r);
    if (rc != FMPL_SUCCESS)
        return rc;
    return fmpli_recv_reap(p, r, status);
}

/* ---------------------------------------------------------------- 2-D transfers */

/* Checks a user layout and reduces it: *size = its bytes; *lay = NULL when it is one
 * contiguous block (the plain calls' path), else layout itself. */
static int fmpli_layout_check(const fmpl_layout *layout, size_t *size, const fmpli_lay_t **lay)
{
    if (!layout)
        return FMPL_ERR_ARG;
    size_t rows = layout->rows, row = layout->row_bytes, ld = layout->ld;
    if (rows > 1 && ld < row)
        return FMPL_ERR_ARG;
    if (rows && row && (rows - 1 > (SIZE_MAX - row) / BASE_MAX(ld, (size_t)1)))
        return FMPL_ERR_ARG; /* the span (rows - 1) * ld + row overflows */
    *size = rows * row;
    *lay = rows > 1 && row && ld != row ? layout : NULL;
    return FMPL_SUCCESS;
}

int fmpl_send_2d(const void *buf, const fmpl_layout *layout, int dst, int mai, fmpl_comm comm)
{
    size_t size;
    const fmpli_lay_t *lay;
    int rc = fmpli_layout_check(layout, &size, &lay);
    return rc != FMPL_SUCCESS ? rc : fmpli_send_lay(buf, size, lay, dst, mai, comm);
}

int fmpl_recv_2d(void *buf, const fmpl_layout *layout, int src, int mai, fmpl_comm comm,
                 fmpl_status *status)
{
    size_t size;
    const fmpli_lay_t *lay;
    int rc = fmpli_layout_check(layout, &size, &lay);
    return rc != FMPL_SUCCESS ? rc : fmpli_recv_lay(buf, size, lay, src, mai, comm, status);
}

int fmpl_isend_2d(const void *buf, const fmpl_layout *layout, int dst, int mai, fmpl_comm comm)
{
    size_t size;
    const fmpli_lay_t *lay;
    int rc = fmpli_layout_check(layout, &size, &lay);
    return rc != FMPL_SUCCESS ? rc : fmpli_isend_lay(buf, size, lay, dst, mai, comm);
}

int fmpl_irecv_2d(void *buf, const fmpl_layout *layout, int src, int mai, fmpl_comm comm)
{
    size_t size;
    const fmpli_lay_t *lay;
    int rc = fmpli_layout_check(layout, &size, &lay);
    return rc != FMPL_SUCCESS ? rc : fmpli_irecv_lay(buf, size, lay, src, mai, comm);
}
