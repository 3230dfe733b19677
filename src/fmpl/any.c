/* any.c — the any-source domain (seed 000, 2.4): fmpl_send_any / fmpl_recv_any.
 *
 * Receiver-side matching with seed 002's receive-buffer acquisition, so memory is
 * bounded by N slots however many ranks send. Each rank owns, in its heap under the
 * well-known key FMPLI_KEY_ANY:
 *     offset   0  SendCNT  (senders fetch-add it for a ticket)
 *     offset  64  RecvCNT  (tickets below it have been consumed; published by the owner)
 *     offset 128  ack word (target of rendezvous acknowledgements for MY sends)
 *     offset 192  RecvQueue[N], slots of slot_size bytes: a 64-byte header + inline data
 * A sender takes ticket = FADD(SendCNT, 1), waits until ticket < RecvCNT + N (re-reading
 * RecvCNT with an atomic fetch-add of 0, which cannot tear), then puts its header and
 * payload into slot ticket % N with a notification (imm = ticket). Payloads larger than
 * the slot go by rendezvous: the header names the sender's buffer, the receiver gets
 * the data with vnic_get and acknowledges with a notifying put to the sender's ack
 * word; the sender waits for that acknowledgement.
 *
 * The receiver's handler appends the slot to an arrival list; fmpl_recv_any takes the
 * first arrival with its communicator and mai. Messages of one sender arrive in send
 * order (notifications from one initiator are delivered in posting order). RecvCNT only
 * advances over consumed slots in ticket order, so a message left unmatched holds its
 * slot: with N unmatched messages, further senders wait (flow control, no overflow).
 * Every rank must use the same FMPL_ANY_SLOTS. */
#include <sched.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmpl/fmpl_impl.h"

#define FMPLI_ANY_OFF_SENDCNT 0
#define FMPLI_ANY_OFF_RECVCNT 64
#define FMPLI_ANY_OFF_ACK 128
#define FMPLI_ANY_OFF_SLOTS 192
#define FMPLI_ANY_ACK (1ull << 63)

typedef struct fmpli_any_hdr {
    uint64_t size; /* message bytes */
    uint64_t ticket;
    uint64_t rdv_off; /* rendezvous: the sender's buffer (key, offset) */
    uint64_t rdv_seq; /* rendezvous: the sender's sequence, echoed in the ack */
    uint32_t rdv_key; /* VNIC_KEY_INVALID: the payload follows the header inline */
    uint32_t mai;
    uint32_t ctx;      /* communicator context id */
    int32_t src_rank;  /* sender's rank in the communicator */
    int32_t src_world; /* sender's world rank */
    uint32_t pad[3];
} fmpli_any_hdr_t;
_Static_assert(sizeof(fmpli_any_hdr_t) == 64, "any-source header is one cache line");

static inline fmpli_any_hdr_t *fmpli_any_slot_hdr(uint32_t s)
{
    return (fmpli_any_hdr_t *)(fmpli.any.area + FMPLI_ANY_OFF_SLOTS +
                               (size_t)s * fmpli.any.slot_size);
}

/* Arrival of a message in my queue, or the acknowledgement of my rendezvous send. */
static void fmpli_any_notify(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    fmpli_any_t *a = &fmpli.any;
    if (n->imm & FMPLI_ANY_ACK) {
        a->ack_seq = (n->imm & ~FMPLI_ANY_ACK) >> 8;
        a->ack_err = (int)(n->imm & 0xffu);
        return;
    }
    if (BASE_UNLIKELY(a->narrived >= a->nslots)) {
        base_log("fmpl: any-source arrival from rank %d beyond %u slots (FMPL_ANY_SLOTS differs "
                 "between ranks?)",
                 n->src, a->nslots);
        return;
    }
    a->arrived[a->narrived++] = (uint32_t)(n->imm % a->nslots);
    a->arrivals++;
}

int fmpli_any_init(void)
{
    fmpli_any_t *a = &fmpli.any;
    a->nslots = (uint32_t)base_env_int("FMPL_ANY_SLOTS", 64, 1, 65536,
                                       "receive slots of the any-source queue (same on all ranks)");
    size_t inl = (size_t)base_env_int("FMPL_ANY_INLINE", 960, 0, 1 << 20,
                                      "largest fmpl_send_any payload carried in a slot");
    a->slot_size = BASE_ALIGN_UP(sizeof(fmpli_any_hdr_t) + inl, BASE_CACHE_LINE);
    a->inline_max = a->slot_size - sizeof(fmpli_any_hdr_t);
    a->area_len = FMPLI_ANY_OFF_SLOTS + (size_t)a->nslots * a->slot_size;
    a->area = vnic_mem_alloc(fmpli.vnic, a->area_len);
    a->arrived = malloc(a->nslots * sizeof *a->arrived);
    a->consumed = calloc(a->nslots, 1);
    if (!a->area || !a->arrived || !a->consumed) {
        base_log("fmpl: no room for the any-source queue (%zu bytes of shared heap)", a->area_len);
        return FMPL_ERR_NOMEM;
    }
    memset(a->area, 0, a->area_len);
    int rc = vnic_mr_reg_key(fmpli.vnic, FMPLI_KEY_ANY, a->area, a->area_len,
                             VNIC_ACC_REMOTE_WRITE | VNIC_ACC_REMOTE_ATOMIC);
    if (rc != FMPL_SUCCESS)
        return rc;
    return vnic_set_notify_handler(fmpli.vnic, FMPLI_CHAN_ANY, fmpli_any_notify, NULL);
}

void fmpli_any_finalize(void)
{
    fmpli_any_t *a = &fmpli.any;
    if (fmpli.vnic) {
        vnic_set_notify_handler(fmpli.vnic, FMPLI_CHAN_ANY, NULL, NULL);
        if (a->area) {
            vnic_mr_dereg(fmpli.vnic, FMPLI_KEY_ANY);
            vnic_mem_free(fmpli.vnic, a->area);
        }
    }
    free(a->arrived);
    free(a->consumed);
    free(a->room);
    memset(a, 0, sizeof *a);
}

/* One step of a polling wait that has no local event to sleep on. */
static void fmpli_any_backoff(base_backoff_t *b)
{
    vnic_progress(fmpli.vnic);
    if (fmpli.npending || fmpli.spool.npending)
        fmpli_progress_sends();
    switch (base_backoff_next(b)) {
    case BASE_BACKOFF_SPIN: base_cpu_relax(); break;
    case BASE_BACKOFF_YIELD_IF_NEEDED:
        if (vnic_cpu_needed(fmpli.vnic))
            sched_yield();
        break;
    case BASE_BACKOFF_YIELD: sched_yield(); break;
    case BASE_BACKOFF_SLEEP: {
        int64_t ns = base_backoff_sleep_ns();
        struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
        nanosleep(&ts, NULL);
        break;
    }
    }
}

/* Waits until slot `ticket` of rank `world`'s queue is free. */
static int fmpli_any_wait_room(int world, uint64_t ticket)
{
    fmpli_any_t *a = &fmpli.any;
    base_backoff_t b;
    base_backoff_init(&b);
    while (ticket >= a->room[world] + a->nslots) {
        uint64_t cnt;
        int rc = vnic_atomic(fmpli.vnic, VNIC_OP_FADD, world, FMPLI_KEY_ANY, FMPLI_ANY_OFF_RECVCNT,
                             0, 0, &cnt);
        if (rc != FMPL_SUCCESS)
            return rc;
        a->room[world] = cnt;
        if (ticket < cnt + a->nslots)
            break;
        fmpli_any_backoff(&b);
    }
    vnic_cpu_release(fmpli.vnic);
    return FMPL_SUCCESS;
}

static int fmpli_any_acked(void *arg)
{
    return fmpli.any.ack_seq == *(const uint64_t *)arg;
}

int fmpl_send_any(const void *buf, size_t size, int dst, int mai, fmpl_comm comm)
{
    fmpli_comm_t *c;
    int rc = fmpli_p2p_check(comm, buf, size, dst, mai, 0, &c);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpli_any_t *a = &fmpli.any;
    vnic_t *v = fmpli.vnic;
    if (!a->room) {
        a->room = calloc((size_t)fmpli.size, sizeof *a->room);
        if (!a->room)
            return FMPL_ERR_NOMEM;
    }
    int world = c->members[dst];
    uint64_t ticket;
    rc = vnic_atomic(v, VNIC_OP_FADD, world, FMPLI_KEY_ANY, FMPLI_ANY_OFF_SENDCNT, 1, 0, &ticket);
    if (rc != FMPL_SUCCESS)
        return rc;
    rc = fmpli_any_wait_room(world, ticket);
    if (rc != FMPL_SUCCESS)
        return rc; /* the ticket is lost: the receiver's queue stalls at it */

    fmpli_any_hdr_t h = {.size = size,
                         .ticket = ticket,
                         .mai = (uint32_t)mai,
                         .ctx = c->ctx,
                         .src_rank = c->rank,
                         .src_world = fmpli.rank};
    int rendezvous = size > a->inline_max;
    if (rendezvous) {
        if (vnic_mem_in_heap(v, buf, size)) {
            h.rdv_key = VNIC_KEY_HEAP;
            h.rdv_off = vnic_mem_heap_offset(v, buf);
        } else {
            rc = vnic_mr_reg(v, (void *)(uintptr_t)buf, size, VNIC_ACC_REMOTE_READ, &h.rdv_key);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
        h.rdv_seq = ++a->rdv_seq;
    }
    struct iovec iov[2] = {{&h, sizeof h}, {(void *)(uintptr_t)buf, rendezvous ? 0 : size}};
    vnic_op_t op = {.opcode = VNIC_OP_PUT,
                    .peer = world,
                    .flags = VNIC_F_NOTIFY,
                    .chan = FMPLI_CHAN_ANY,
                    .imm = ticket};
    op.local.kind = VNIC_DESC_IOV;
    op.local.u.iov.iov = iov;
    op.local.u.iov.cnt = iov[1].iov_len ? 2 : 1;
    op.remote.key = FMPLI_KEY_ANY;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = FMPLI_ANY_OFF_SLOTS + (ticket % a->nslots) * a->slot_size;
    rc = vnic_post(v, &op);
    if (rendezvous) {
        if (rc == FMPL_SUCCESS)
            rc = fmpli_wait(fmpli_any_acked, &h.rdv_seq, -1);
        if (rc == FMPL_SUCCESS)
            rc = a->ack_err;
        if (h.rdv_key != VNIC_KEY_HEAP)
            vnic_mr_dereg(v, h.rdv_key);
    }
    return rc;
}

/* Marks slot s consumed and advances RecvCNT over the consumed prefix. */
static void fmpli_any_release(uint32_t s)
{
    fmpli_any_t *a = &fmpli.any;
    a->consumed[s] = 1;
    uint64_t cnt = a->recv_cnt;
    while (a->consumed[cnt % a->nslots]) {
        a->consumed[cnt % a->nslots] = 0;
        cnt++;
    }
    if (cnt != a->recv_cnt) {
        a->recv_cnt = cnt;
        __atomic_store_n((uint64_t *)(a->area + FMPLI_ANY_OFF_RECVCNT), cnt, __ATOMIC_RELEASE);
    }
}

/* Copies the message of slot s into buf (or fetches it, for a rendezvous). */
static int fmpli_any_take(uint32_t s, void *buf, size_t size, fmpl_status *status)
{
    const fmpli_any_hdr_t *h = fmpli_any_slot_hdr(s);
    size_t n = h->size > size ? size : (size_t)h->size;
    int err = h->size > size ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    int rc = FMPL_SUCCESS;
    if (h->rdv_key == VNIC_KEY_INVALID) {
        if (n)
            memcpy(buf, h + 1, n);
    } else {
        if (n)
            rc = vnic_get(fmpli.vnic, h->src_world, buf, n, h->rdv_key, h->rdv_off);
        if (rc != FMPL_SUCCESS)
            err = rc;
        uint64_t word = h->rdv_seq;
        vnic_op_t op = {.opcode = VNIC_OP_PUT,
                        .peer = h->src_world,
                        .flags = VNIC_F_NOTIFY,
                        .chan = FMPLI_CHAN_ANY,
                        .imm = FMPLI_ANY_ACK | h->rdv_seq << 8 | (uint64_t)(err & 0xff)};
        op.local.kind = VNIC_DESC_CONTIG;
        op.local.u.contig.addr = &word;
        op.local.u.contig.len = sizeof word;
        op.remote.key = FMPLI_KEY_ANY;
        op.remote.kind = VNIC_DESC_CONTIG;
        op.remote.u.off = FMPLI_ANY_OFF_ACK;
        rc = vnic_post(fmpli.vnic, &op);
        if (rc != FMPL_SUCCESS)
            base_log("fmpl_recv_any: acknowledging rank %d failed: %s", h->src_world,
                     base_strerror(rc));
    }
    if (status) {
        status->source = h->src_rank;
        status->mai = (int)h->mai;
        status->size = n;
        status->error = err;
    }
    fmpli_any_release(s);
    return err;
}

static int fmpli_any_arrived(void *arg)
{
    return fmpli.any.arrivals != *(const uint64_t *)arg;
}

int fmpl_recv_any(void *buf, size_t size, int mai, fmpl_comm comm, fmpl_status *status)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    if ((unsigned)mai >= (unsigned)fmpli.mai_max && mai != FMPL_TAG_ANY)
        return FMPL_ERR_MAI;
    fmpli_any_t *a = &fmpli.any;
    for (;;) {
        uint64_t seen = a->arrivals;
        for (uint32_t i = 0; i < a->narrived; i++) {
            uint32_t s = a->arrived[i];
            const fmpli_any_hdr_t *h = fmpli_any_slot_hdr(s);
            if (h->ctx != c->ctx || (mai != FMPL_TAG_ANY && h->mai != (uint32_t)mai))
                continue;
            memmove(&a->arrived[i], &a->arrived[i + 1], (a->narrived - i - 1) * sizeof *a->arrived);
            a->narrived--;
            return fmpli_any_take(s, buf, size, status);
        }
        int rc = fmpli_wait(fmpli_any_arrived, &seen, -1);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
}
