/* coll_xfer.c — the mailbox primitives of the collectives: flag waits, cell puts, and
 * the drain of the acknowledged edges (see coll_impl.h for the area layout; the edges'
 * transfers are the group schedules' transport, coll_gsched.c). */
#include "coll/coll_impl.h"

typedef struct flag_wait {
    const uint64_t *flag;
    uint64_t value;
} flag_wait_t;

static int flag_reached(void *arg)
{
    const flag_wait_t *w = arg;
    return __atomic_load_n(w->flag, __ATOMIC_ACQUIRE) >= w->value;
}

int coll_wait_flag(coll_group_t *g, const uint64_t *flag, uint64_t value)
{
    if (BASE_LIKELY(__atomic_load_n(flag, __ATOMIC_ACQUIRE) >= value))
        return FMPL_SUCCESS;
    flag_wait_t w = {flag, value};
    return vnic_wait(g->v, flag_reached, &w, -1);
}

static int put_contig(coll_group_t *g, int peer, void *local, size_t len, uint64_t remote_off,
                      uint32_t flags)
{
    vnic_op_t op;
    memset(&op, 0, sizeof op);
    op.opcode = VNIC_OP_PUT;
    op.peer = g->members[peer];
    op.flags = flags;
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = local;
    op.local.u.contig.len = len;
    op.remote.key = COLL_KEY;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = g->area_off + remote_off;
    if (flags & VNIC_F_RCNTR)
        op.rcntr = COLL_ORDER_CNTR;
    return vnic_post(g->v, &op);
}

int coll_put_cell2(coll_group_t *g, int peer, uint64_t flag_off, const void *d1, size_t l1,
                   const void *d2, size_t l2, uint64_t flag)
{
    coll_state_t *st = g->st;
    size_t len = l1 + l2;
    char *slot = coll_peer_slot(g, peer);
    if (slot) { /* the same tail-flag put, as direct stores */
        char *end = slot + flag_off;
        if (l1)
            coll_copy(end - len, d1, l1);
        coll_store_cell(g, peer, end, d2, l2, flag);
        return FMPL_SUCCESS;
    }
    char *end = st->outbox + st->small; /* the flag's place in the outbox */
    if (l1)
        memcpy(end - len, d1, l1);
    if (l2)
        memcpy(end - l2, d2, l2);
    memcpy(end, &flag, sizeof flag);
    return put_contig(g, peer, end - len, len + 8, flag_off - len, VNIC_F_TAIL_FLAG);
}

int coll_put_cell(coll_group_t *g, int peer, uint64_t flag_off, const void *data, size_t len,
                  uint64_t flag)
{
    if (len <= g->st->small)
        return coll_put_cell2(g, peer, flag_off, data, len, NULL, 0, flag);
    /* Large: payload, then flag, both ordered by VNIC_F_RCNTR. */
    int rc = put_contig(g, peer, (void *)data, len, flag_off - len, VNIC_F_RCNTR);
    if (rc != FMPL_SUCCESS)
        return rc;
    return put_contig(g, peer, &flag, 8, flag_off, VNIC_F_RCNTR | VNIC_F_TAIL_FLAG);
}

int coll_put_segment(coll_group_t *g, int peer, uint64_t flag_off, const void *data, size_t len,
                     uint64_t flag)
{
    char *slot = len > g->st->small && g->st->stream ? coll_peer_slot(g, peer) : NULL;
    if (!slot)
        return coll_put_cell(g, peer, flag_off, data, len, flag);
    char *end = slot + flag_off;
    base_copy_stream(end - len, data, len); /* (fenced: the payload is visible first) */
    coll_store_cell(g, peer, end, NULL, 0, flag);
    return FMPL_SUCCESS;
}

int coll_put_word(coll_group_t *g, int peer, uint64_t line_off, uint64_t value)
{
    char *slot = coll_peer_slot(g, peer);
    if (slot) {
        __atomic_store_n((uint64_t *)(slot + line_off), value, __ATOMIC_RELEASE);
        vnic_peer_wake(g->v, g->members[peer]);
        return FMPL_SUCCESS;
    }
    return put_contig(g, peer, &value, 8, line_off, VNIC_F_TAIL_FLAG);
}

/* ------------------------------------------------------------------ channels */

int coll_edges_drained(coll_group_t *g)
{
    int nch = coll_nchan(g->st);
    for (int dir = 0; dir < COLL_NDIR; dir++)
        for (int ch = 0; ch < nch; ch++) {
            /* the last acknowledged use: the last multiple of the ack interval */
            uint64_t n = g->sent[dir][ch], last = n - n % (uint64_t)coll_chan_ack_every(g->st, ch);
            const uint64_t *ack = (const uint64_t *)(g->area + coll_ack_off(g->st, dir, ch));
            if (last && __atomic_load_n(ack, __ATOMIC_ACQUIRE) < last)
                return 0;
        }
    for (int dir = 0; dir < COLL_NDIR; dir++)
        for (int ch = 0; ch < nch; ch++)
            __atomic_store_n((uint64_t *)(g->area + coll_ack_off(g->st, dir, ch)), 0,
                             __ATOMIC_RELAXED);
    return 1;
}

int coll_a_recv(coll_group_t *g, int idx, uint64_t seq, uint64_t **flag)
{
    *flag = coll_a_flag(g, idx, (int)(seq & 1));
    return coll_wait_flag(g, *flag, seq);
}
