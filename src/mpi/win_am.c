/* win_am.c — accumulates as active messages, applied by the target (targets this rank does
 * not map: udp peers).
 *
 * Which accumulates: every MPI_Accumulate, MPI_Get_accumulate, MPI_Fetch_and_op and
 * MPI_Compare_and_swap (and R-forms) to such a target, except the single 8-byte integer
 * sums, replacements, reads and compare-and-swaps at aligned addresses, which stay one vnic
 * remote atomic (win_atomic.c). The origin packs its elements, walks the target layout with
 * the datatype engine's iterator and sends chunks of whole elements, each at most the
 * vnic's am_max: a header (win_am_hdr_t), the target pieces as (offset, length) pairs from
 * where displacement 0 lands, then the packed data (compare-and-swap: new value, then the
 * compare value). The target finds the window by the id it published at creation (a
 * registry here: ids are small integers, the same window may have different handles).
 *
 * At the target the notify handler (which must not post) copies each message into a FIFO;
 * the module's progress hook applies them in arrival order (accumulate_ordering) with
 * win_acc_run: element atomics for 8-byte integers at aligned addresses (the same atomics
 * remote vnic atomics and mapped origins use), else the op's kernel under this rank's stripe
 * locks, taken without waiting: when one is busy the FIFO waits for the next progress call
 * (the holder is a mapped origin running a kernel, or this rank itself inside an
 * accumulate: a hook never spins on it). Each chunk is answered from the hook: an ACK, or
 * RESULT with the previous values when the origin fetches.
 *
 * At the origin every chunk counts in its target's am_out until its answer is in. Remote
 * completion (MPI_Win_flush*, unlock, complete, fence) waits for am_out to drain; a fetching
 * operation completes when all its answers are in (the blocking call waits, the request of
 * MPI_Rget_accumulate completes then, in progress); MPI_Raccumulate's request completes once
 * every chunk is sent (the origin buffer is free). A vnic atomic to a target with chunks
 * outstanding waits for them first, so accumulates of one origin stay ordered.
 *
 * The target applies chunks when it progresses (any MPI call that progresses): the udp
 * progress thread serves vnic atomics, puts and gets while the application computes, but
 * runs no handler, so these wait for the target's next MPI call. */
#include <stdlib.h>
#include <string.h>

#include "mpi/p2p_impl.h"
#include "mpi/win_impl.h"

enum { WAM_ACC = 1, WAM_ACK, WAM_RESULT };

typedef struct win_am_hdr {
    uint32_t id;    /* the target's window (registry id); answers: unused */
    uint8_t kind;   /* WAM_* */
    uint8_t cas;    /* MPI_Compare_and_swap */
    uint16_t nseg;  /* target pieces that follow */
    int32_t op;     /* MPI_Op handle (predefined) */
    int32_t type;   /* MPI_Datatype handle of the element (predefined) */
    uint32_t len;   /* packed data bytes that follow (answers: previous values) */
    uint32_t key;   /* dynamic windows: the attached region */
    int64_t at;     /* where displacement 0 lands: offset in the window memory or region */
    uint64_t token; /* the origin's operation */
    uint64_t pos;   /* packed offset of this chunk in the operation */
    int32_t err;    /* answers: MPI error class of the chunk */
    uint32_t pad;
} win_am_hdr_t;

typedef struct win_am_seg {
    int64_t off;
    uint64_t len;
} win_am_seg_t;

/* An operation of this origin with answers outstanding. */
typedef struct win_amop {
    struct win_amop *next;
    uint64_t token;
    mpii_win_t *w;
    int target;
    int64_t out;     /* answers still to come */
    char *res;       /* packed previous values (fetching), or NULL */
    int err;         /* first error class */
    int waited;      /* a blocking call waits for it (and frees it) */
    mpii_req_t *req; /* MPI_Rget_accumulate: completed with it */
    void *rbuf;      /* ... and the result's layout to unpack into */
    dt_t *rt;
    int64_t rcount, bytes;
} win_amop_t;

/* A chunk that arrived here, waiting to be applied and answered. */
typedef struct win_amq {
    struct win_amq *next;
    int src; /* world rank of the origin */
    int seg_done;
    size_t len;
    char *old; /* previous values (fetching), filled as pieces are applied */
    _Alignas(16) char msg[];
} win_amq_t;

static struct {
    mpii_win_t **reg; /* id -> window */
    int nreg;
    vnic_t *vnic; /* the one handler and hook are installed on */
    int hook_id;
    win_amop_t *ops;
    uint64_t next_token;
    win_amq_t *qhead, *qtail;
} am;

static int am_hook(void *arg);

/* ---------------------------------------------------------------- origin: answers */

static void amop_finish(win_amop_t *o)
{
    win_amop_t **pp = &am.ops;
    while (*pp != o)
        pp = &(*pp)->next;
    *pp = o->next;
    if (o->req) {
        if (o->err == MPI_SUCCESS && o->res &&
            dt_unpack(o->rt, o->rcount, o->rbuf, 0, o->bytes, o->res) != FMPL_SUCCESS)
            o->err = MPI_ERR_INTERN;
        o->req->err = o->err;
        mpii_req_done(o->req);
        dt_release(o->rt);
    }
    free(o->res);
    free(o);
}

static void am_answer(const win_am_hdr_t *h, const char *data)
{
    win_amop_t *o = am.ops;
    while (o && o->token != h->token)
        o = o->next;
    if (!o)
        return; /* cannot happen: every chunk is answered once */
    if (h->err != MPI_SUCCESS && o->err == MPI_SUCCESS)
        o->err = h->err;
    if (h->kind == WAM_RESULT && o->res && h->err == MPI_SUCCESS &&
        h->pos + h->len <= (uint64_t)o->bytes)
        memcpy(o->res + h->pos, data, h->len);
    o->out--;
    win_peer_t *p = &o->w->peer[o->target];
    p->am_out--;
    o->w->am_out--;
    if (o->out == 0 && !o->waited)
        amop_finish(o);
}

/* ---------------------------------------------------------------- target: chunks */

static void am_handler(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    if (n->len < sizeof(win_am_hdr_t))
        return;
    win_am_hdr_t h;
    memcpy(&h, n->data, sizeof h);
    if (h.kind == WAM_ACK || h.kind == WAM_RESULT) {
        am_answer(&h, (const char *)n->data + sizeof h);
        return;
    }
    win_amq_t *q = malloc(sizeof *q + n->len);
    if (!q)
        abort(); /* an accumulate the origin counts on: nothing sensible remains */
    q->next = NULL;
    q->src = n->src;
    q->seg_done = 0;
    q->len = n->len;
    q->old = NULL;
    memcpy(q->msg, n->data, n->len);
    if (am.qtail)
        am.qtail->next = q;
    else
        am.qhead = q;
    am.qtail = q;
    vnic_hook_arm(mpii.vnic, am.hook_id, 1);
}

/* Applies what is left of chunk q: 0 done (answer it), 1 a stripe is busy (later). */
static int am_apply(win_amq_t *q, int *err)
{
    win_am_hdr_t h;
    memcpy(&h, q->msg, sizeof h);
    const win_am_seg_t *seg = (const win_am_seg_t *)(const void *)(q->msg + sizeof h);
    const char *data = q->msg + sizeof h + h.nseg * sizeof *seg;
    mpii_win_t *w = h.id < (uint32_t)am.nreg ? am.reg[h.id] : NULL;
    int64_t es = FMPL_MPI_DT_IS_PREDEF(h.type) ? FMPL_MPI_DT_SIZE(h.type) : 0;
    if (!w || es <= 0 || sizeof h + h.nseg * sizeof *seg + h.len > q->len) {
        *err = MPI_ERR_INTERN;
        return 0;
    }
    /* Where displacement 0 lands, and its region offset (the stripes count in those). */
    char *base;
    uint64_t roff0, limit;
    const win_peer_t *me = &w->peer[w->rank];
    if (w->flavor == MPI_WIN_FLAVOR_DYNAMIC) {
        const win_dyn_t *d =
            (const win_dyn_t *)(const void *)((char *)w->ctrl + win_dyn_off(w->size));
        uint64_t used =
            __atomic_load_n(&((win_ctrl_t *)(void *)w->ctrl)->dyn_used, __ATOMIC_ACQUIRE);
        base = NULL;
        limit = 0;
        for (uint64_t i = 0; i < used && i < WIN_DYN_MAX; i++)
            if (d[i].len && d[i].key == h.key) {
                base = (char *)(uintptr_t)d[i].base;
                limit = d[i].len;
            }
        roff0 = (uint64_t)h.at;
        if (!base) {
            *err = MPI_ERR_RMA_RANGE; /* detached meanwhile */
            return 0;
        }
    } else {
        base = (char *)w->base;
        limit = (uint64_t)w->bytes;
        roff0 = win_data_off(w, me) + (uint64_t)h.at;
    }
    int64_t pos = 0;
    for (int i = 0; i < q->seg_done; i++)
        pos += (int64_t)seg[i].len;
    for (int i = q->seg_done; i < h.nseg; i++) {
        int64_t off = h.at + seg[i].off;
        if (off < 0 || (uint64_t)off + seg[i].len > limit || seg[i].len % (uint64_t)es) {
            *err = MPI_ERR_RMA_RANGE;
            return 0;
        }
        int64_t n = (int64_t)seg[i].len / es;
        const char *in = h.cas ? data : data + pos;
        const char *cmp = h.cas ? data + es : NULL;
        int rc = win_acc_run(
            w, (MPI_Op)h.op, h.cas, (MPI_Datatype)h.type, base + off, roff0 + (uint64_t)seg[i].off,
            n, h.op == (int32_t)MPI_NO_OP ? NULL : in, cmp, q->old ? q->old + pos : NULL);
        if (rc < 0)
            return 1; /* a stripe is busy: this piece again at the next progress */
        if (rc != MPI_SUCCESS) {
            *err = rc;
            return 0;
        }
        pos += (int64_t)seg[i].len;
        q->seg_done = i + 1;
    }
    return 0;
}

static int am_hook(void *arg)
{
    (void)arg;
    int n = 0;
    while (am.qhead) {
        win_amq_t *q = am.qhead;
        win_am_hdr_t h;
        memcpy(&h, q->msg, sizeof h);
        int err = MPI_SUCCESS;
        /* the chunk's elements: the sum of its pieces (MPI_NO_OP carries no data) */
        size_t elems = 0;
        const win_am_seg_t *seg = (const win_am_seg_t *)(const void *)(q->msg + sizeof h);
        for (int i = 0; i < h.nseg && sizeof h + (size_t)(i + 1) * sizeof *seg <= q->len; i++)
            elems += seg[i].len;
        if (h.token & 1 && !q->old) { /* odd tokens fetch: room for the previous values */
            q->old = malloc(elems + 1);
            if (!q->old)
                break;
        }
        if (am_apply(q, &err))
            break; /* keep the order: everything behind waits too */
        win_am_hdr_t a = {
            .kind = q->old ? WAM_RESULT : WAM_ACK, .token = h.token, .pos = h.pos, .err = err};
        size_t olen = 0;
        if (q->old && err == MPI_SUCCESS)
            olen = elems;
        a.len = (uint32_t)olen;
        am.qhead = q->next;
        if (!am.qhead)
            am.qtail = NULL;
        /* The answer may wait for room (back-pressure progresses, handlers may queue
         * more chunks: they go behind, the list head is already past q). */
        vnic_send_am(mpii.vnic, q->src, VNIC_CHAN_MPI_RMA, 0, &a, sizeof a, q->old, olen);
        free(q->old);
        free(q);
        n++;
    }
    if (!am.qhead)
        vnic_hook_arm(mpii.vnic, am.hook_id, 0);
    return n;
}

/* ---------------------------------------------------------------- registry */

int win_am_register(mpii_win_t *w)
{
    if (am.vnic != mpii.vnic) { /* first window with this vnic (MPI may start again) */
        for (win_amq_t *q = am.qhead; q;) {
            win_amq_t *next = q->next;
            free(q->old);
            free(q);
            q = next;
        }
        am.qhead = am.qtail = NULL;
        if (vnic_set_notify_handler(mpii.vnic, VNIC_CHAN_MPI_RMA, am_handler, NULL) !=
                FMPL_SUCCESS ||
            vnic_hook_add(mpii.vnic, am_hook, NULL, 0, &am.hook_id) != FMPL_SUCCESS)
            return MPI_ERR_INTERN;
        am.vnic = mpii.vnic;
    }
    int id = 0;
    while (id < am.nreg && am.reg[id])
        id++;
    if (id == am.nreg) {
        int cap = am.nreg ? 2 * am.nreg : 16;
        mpii_win_t **r = realloc(am.reg, sizeof *r * (size_t)cap);
        if (!r)
            return MPI_ERR_NO_MEM;
        memset(r + am.nreg, 0, sizeof *r * (size_t)(cap - am.nreg));
        am.reg = r;
        am.nreg = cap;
    }
    am.reg[id] = w;
    w->am_id = id;
    return MPI_SUCCESS;
}

void win_am_unregister(mpii_win_t *w)
{
    if (w->am_id >= 0 && w->am_id < am.nreg && am.reg[w->am_id] == w)
        am.reg[w->am_id] = NULL;
    w->am_id = -1;
}

/* ---------------------------------------------------------------- origin: sending */

static int am_out_zero(void *arg)
{
    const uint32_t *n = arg;
    return *n == 0;
}

static int am_all_zero(void *arg)
{
    const mpii_win_t *w = arg;
    return w->am_out == 0;
}

int win_am_wait(mpii_win_t *w, int target)
{
    if (target >= 0) {
        if (w->peer[target].am_out)
            vnic_wait(mpii.vnic, am_out_zero, &w->peer[target].am_out, -1);
    } else if (w->am_out) {
        vnic_wait(mpii.vnic, am_all_zero, w, -1);
    }
    return MPI_SUCCESS;
}

static int amop_done(void *arg)
{
    const win_amop_t *o = arg;
    return o->out == 0;
}

int win_am_issue(mpii_win_t *w, int target, const win_target_t *tg, dt_t *tt, int64_t tcount,
                 MPI_Op op, int cas, MPI_Datatype bh, const char *packed, const char *cmp,
                 void *rbuf, dt_t *rt, int64_t rcount, MPI_Request *request)
{
    const win_peer_t *p = &w->peer[target];
    int64_t es = FMPL_MPI_DT_SIZE(bh), bytes = tcount * dt_size(tt);
    int fetch = rbuf != NULL;
    size_t am_max = vnic_info(mpii.vnic)->am_max;
    size_t hdr = sizeof(win_am_hdr_t);
    if (am_max < hdr + sizeof(win_am_seg_t) + 2 * (size_t)es)
        return MPI_ERR_INTERN;
    win_amop_t *o = calloc(1, sizeof *o);
    char *msg = malloc(am_max);
    if (!o || !msg || (fetch && !(o->res = malloc((size_t)bytes + 1)))) {
        free(msg);
        if (o)
            free(o->res);
        free(o);
        return MPI_ERR_NO_MEM;
    }
    o->token = (am.next_token += 2) | (fetch ? 1u : 0u);
    o->w = w;
    o->target = target;
    o->waited = 1; /* held while its chunks go (answers may come in meanwhile) */
    o->bytes = bytes;
    o->next = am.ops;
    am.ops = o;
    win_am_hdr_t h = {.id = p->am_id,
                      .kind = WAM_ACC,
                      .cas = (uint8_t)cas,
                      .op = (int32_t)op,
                      .type = (int32_t)bh,
                      .key = tg->key,
                      .token = o->token};
    /* where displacement 0 lands, relative to the window memory (or dynamic region) */
    h.at =
        (int64_t)tg->off - (w->flavor != MPI_WIN_FLAVOR_DYNAMIC ? (int64_t)win_data_off(w, p) : 0);
    dt_iter_t it;
    int rc = dt_iter_init(&it, tt, tcount, WIN_FAKE_BASE, 0) == FMPL_SUCCESS ? MPI_SUCCESS
                                                                             : MPI_ERR_INTERN;
    enum { MAXSEG = 64 };
    struct iovec pieces[MAXSEG];
    while (rc == MPI_SUCCESS && !dt_iter_done(&it)) {
        /* Pieces and whole elements that fit one message (and the answer, fetching): a
         * first try, then again with the room its pieces left. */
        int64_t pos = it.pos;
        size_t room = am_max - hdr;
        int maxseg = (int)BASE_MIN((size_t)MAXSEG, room / 2 / sizeof(win_am_seg_t));
        int64_t cap = fetch ? (int64_t)room / es * es : INT64_MAX; /* the answer's data */
        int ns = 0;
        int64_t nb = 0;
        for (int tries = 0; tries < 2; tries++) {
            size_t data_room = room - (tries ? (size_t)ns : 1) * sizeof(win_am_seg_t);
            int64_t want = cas ? es : !packed ? cap : (int64_t)(data_room / (size_t)es) * es;
            if (want > cap)
                want = cap;
            dt_iter_seek(&it, pos);
            dt_iter_next(&it, pieces, maxseg, want, &ns, &nb);
            size_t need = (size_t)ns * sizeof(win_am_seg_t) + (packed && !cas ? (size_t)nb : 0) +
                          (cas ? 2 * (size_t)es : 0);
            if (need <= room)
                break;
            if (tries) {
                ns = 0; /* cannot happen: fewer bytes never need more pieces */
                break;
            }
        }
        win_am_seg_t *seg = (win_am_seg_t *)(void *)(msg + hdr);
        for (int i = 0; i < ns; i++) {
            seg[i].off = (int64_t)((char *)pieces[i].iov_base - WIN_FAKE_BASE);
            seg[i].len = pieces[i].iov_len;
        }
        h.nseg = (uint16_t)ns;
        h.pos = (uint64_t)pos;
        char *data = msg + hdr + (size_t)ns * sizeof *seg;
        if (cas) {
            memcpy(data, packed, (size_t)es);
            memcpy(data + es, cmp, (size_t)es);
            h.len = (uint32_t)(2 * es);
        } else if (packed) {
            memcpy(data, packed + pos, (size_t)nb);
            h.len = (uint32_t)nb;
        } else {
            h.len = 0;
        }
        memcpy(msg, &h, hdr);
        o->out++;
        w->peer[target].am_out++;
        w->am_out++;
        int r = vnic_send_am(mpii.vnic, tg->world, VNIC_CHAN_MPI_RMA, 0, msg,
                             hdr + (size_t)ns * sizeof *seg + h.len, NULL, 0);
        if (r != FMPL_SUCCESS) {
            o->out--;
            w->peer[target].am_out--;
            w->am_out--;
            rc = mpii_err_from_fmpl(r);
        }
    }
    free(msg);
    if (rc != MPI_SUCCESS || (fetch && !request)) {
        /* wait for what went (an error leaves nothing half-counted) */
        vnic_wait(mpii.vnic, amop_done, o, -1);
        if (rc == MPI_SUCCESS)
            rc = o->err;
        if (rc == MPI_SUCCESS && fetch &&
            dt_unpack(rt, rcount, rbuf, 0, bytes, o->res) != FMPL_SUCCESS)
            rc = MPI_ERR_INTERN;
        amop_finish(o);
        return rc == MPI_SUCCESS && request ? win_request_done(request) : rc;
    }
    if (fetch) { /* MPI_Rget_accumulate: its request completes with the last answer */
        mpii_req_t *r = mpii_req_alloc();
        if (r) {
            r->kind = MPII_REQ_GREQ;
            r->comm = MPI_COMM_WORLD;
            r->active = 1;
            rc = mpii_req_handle(r, request);
        }
        if (!r || rc != MPI_SUCCESS) { /* no request: complete the operation here */
            vnic_wait(mpii.vnic, amop_done, o, -1);
            amop_finish(o);
            return r ? rc : MPI_ERR_NO_MEM;
        }
        o->req = r;
        o->rbuf = rbuf;
        o->rt = rt;
        o->rcount = rcount;
        dt_retain(rt);
    }
    o->waited = 0;
    if (o->out == 0) /* every answer already in (progress inside the sends) */
        amop_finish(o);
    /* MPI_Raccumulate: locally complete once sent */
    return request && !fetch ? win_request_done(request) : MPI_SUCCESS;
}
