/* p2p.c — the MPI point-to-point engine: matching, eager and rendezvous protocols on
 * vnic active messages, and the send/receive/probe calls (protocol in p2p_impl.h). */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/p2p_impl.h"
#include "mpi/tool_impl.h"

/* The eager credit between this process and one other, both directions. */
typedef struct mpii_credit {
    uint64_t used; /* as sender: charge of our eager messages it has not matched yet */
    uint64_t owed; /* as receiver: charge of its eager messages we matched, not yet returned */
    /* MPII_AMF_COUNTED messages: ours to it (as sender), its that arrived (as receiver) */
    uint64_t counted, counted_in;
} mpii_credit_t;

typedef struct mpii_todo {
    mpii_link_t link;
    int peer;
    uint8_t kind;
    uint64_t token;
} mpii_todo_t;

#define NCLS 3

static struct {
    size_t eager_max;
    size_t eager_init;      /* eager_max at init: the most it may become again (MPI_T) */
    size_t stage_max;       /* FMPL_MPI_STAGE_MAX: contiguous rendezvous sends staged */
    size_t stage_cpu_max;   /* FMPL_MPI_STAGE_CPU_MAX: the same to a rank on this CPU */
    char *packbuf;          /* [eager_max] packing of non-contiguous eager sends */
    int packbuf_busy;       /* a send from packbuf waits for inbox room: a send started
                             * meanwhile (by a progress hook: a collective schedule)
                             * packs into a temporary instead */
    mpii_match_t **matches; /* by context id */
    uint32_t nmatches;
    mpii_link_t getq;  /* receives matched to an RTS, waiting for the hook's GET */
    mpii_link_t pumpq; /* ring sends with bytes left to pack (STAGED) */
    mpii_link_t todoq; /* ACK / FIN to post */
    mpii_link_t todo_free;
    size_t cls_size[NCLS];
    void *cls_free[NCLS]; /* free payload buffers (first word: next) */
    mpii_link_t umsg_free;
    int hook_id; /* mpii_hook's vnic hook, armed while work is queued */
    int up;
    /* eager credit (CREDIT below): by world rank, grown on demand */
    mpii_credit_t *credit;
    int ncredit;
    uint64_t credit_max; /* bytes of eager charge one sender may have at one receiver */
} p2p;

int mpii_sends_pending;
mpii_p2p_stats_t mpii_p2p_stats;

/* ------------------------------------------------------------------ matching */

static inline unsigned mpii_bucket(const mpii_match_t *m, int src, int tag)
{
    uint32_t x = (uint32_t)src * 0x9e3779b1u ^ (uint32_t)tag * 0x85ebca6bu;
    return (x ^ (x >> 15)) & (m->nbucket - 1);
}

/* Bucket arrays of n lists, initialised; NULL when out of memory. */
static mpii_link_t *mpii_buckets_new(uint32_t n)
{
    mpii_link_t *b = malloc((size_t)n * sizeof *b);
    for (uint32_t i = 0; b && i < n; i++)
        mpii_list_init(&b[i]);
    return b;
}

/* Moves the entries of old[nold] (objects of `type` linked through `member`, keyed by
 * their SRC and TAG fields) into the buckets nb of m, keeping each bucket's order:
 * entries with the same (source, tag) share a bucket before and after. */
#define MPII_REHASH(m, old, nold, nb, type, member, SRC, TAG)                                      \
    for (uint32_t i_ = 0; i_ < (nold); i_++)                                                       \
        while (!mpii_list_empty(&(old)[i_])) {                                                     \
            mpii_link_t *e_ = (old)[i_].next;                                                      \
            type *x_ = MPII_CONTAINER(e_, type, member);                                           \
            mpii_list_del(e_);                                                                     \
            mpii_list_push(&(nb)[mpii_bucket((m), x_->SRC, x_->TAG)], e_);                         \
        }

/* Grows m's buckets x4 (mpii_match_grow's slow path). */
static BASE_NOINLINE void mpii_match_rehash(mpii_match_t *m)
{
    uint32_t nold = m->nbucket, n = nold * 4;
    mpii_link_t *p = mpii_buckets_new(n), *u = mpii_buckets_new(n);
    if (!p || !u) { /* keep the small table: slower, still correct */
        free(p);
        free(u);
        return;
    }
    mpii_link_t *oldp = m->posted, *oldu = m->unexp;
    m->nbucket = n;
    MPII_REHASH(m, oldp, nold, p, mpii_req_t, link, peer, tag)
    MPII_REHASH(m, oldu, nold, u, mpii_umsg_t, bl, src, tag)
    free(oldp);
    free(oldu);
    m->posted = p;
    m->unexp = u;
}

/* Grows m's buckets when their entries exceed twice their number. */
static inline void mpii_match_grow(mpii_match_t *m)
{
    if (BASE_UNLIKELY(m->nposted + m->nunexp > 2 * m->nbucket && m->nbucket < MPII_NBUCKET_MAX))
        mpii_match_rehash(m);
}

/* Creates the matching state of ctx (mpii_match_of's slow path). */
static BASE_NOINLINE mpii_match_t *mpii_match_new(uint32_t ctx)
{
    if (ctx >= p2p.nmatches) {
        uint32_t n = p2p.nmatches ? p2p.nmatches : 16;
        while (n <= ctx)
            n *= 2;
        mpii_match_t **m = realloc(p2p.matches, n * sizeof *m);
        if (!m)
            base_fatal("mpi: out of memory for matching state");
        memset(m + p2p.nmatches, 0, (n - p2p.nmatches) * sizeof *m);
        p2p.matches = m;
        p2p.nmatches = n;
    }
    mpii_match_t *m = calloc(1, sizeof *m);
    if (!m)
        base_fatal("mpi: out of memory for matching state");
    m->ctx = ctx;
    m->nbucket = MPII_NBUCKET0;
    m->posted = mpii_buckets_new(m->nbucket);
    m->unexp = mpii_buckets_new(m->nbucket);
    if (!m->posted || !m->unexp)
        base_fatal("mpi: out of memory for matching state");
    mpii_list_init(&m->pwild);
    mpii_list_init(&m->uall);
    p2p.matches[ctx] = m;
    return m;
}

static inline mpii_match_t *mpii_match_of(uint32_t ctx)
{
    if (BASE_LIKELY(ctx < p2p.nmatches && p2p.matches[ctx]))
        return p2p.matches[ctx];
    return mpii_match_new(ctx);
}

static inline mpii_match_t *mpii_comm_match(mpii_comm_t *c)
{
    if (BASE_UNLIKELY(!c->match))
        c->match = mpii_match_of(c->ctx);
    return c->match;
}

static inline int mpii_matches(int want_src, int want_tag, int src, int tag)
{
    return (want_src == MPI_ANY_SOURCE || want_src == src) &&
           (want_tag == MPI_ANY_TAG || want_tag == tag);
}

/* The earliest posted receive that matches (src, tag), unlinked; NULL when none. */
static mpii_req_t *mpii_posted_take(mpii_match_t *m, int src, int tag)
{
    mpii_req_t *best = NULL;
    mpii_link_t *h = &m->posted[mpii_bucket(m, src, tag)];
    for (mpii_link_t *e = h->next; e != h; e = e->next) {
        mpii_req_t *r = MPII_CONTAINER(e, mpii_req_t, link);
        if (r->peer == src && r->tag == tag) {
            best = r;
            break;
        }
    }
    for (mpii_link_t *e = m->pwild.next; e != &m->pwild; e = e->next) {
        mpii_req_t *r = MPII_CONTAINER(e, mpii_req_t, link);
        if (best && r->seq > best->seq)
            break;
        if (mpii_matches(r->peer, r->tag, src, tag)) {
            best = r;
            break;
        }
    }
    if (best) {
        mpii_list_del(&best->link);
        best->posted = 0;
        if (best->peer != MPI_ANY_SOURCE && best->tag != MPI_ANY_TAG)
            m->nposted--;
    }
    return best;
}

/* The earliest unexpected message matching (src, tag) (wildcards allowed), or NULL. */
static mpii_umsg_t *mpii_unexp_find(mpii_match_t *m, int src, int tag)
{
    if (src != MPI_ANY_SOURCE && tag != MPI_ANY_TAG) {
        mpii_link_t *h = &m->unexp[mpii_bucket(m, src, tag)];
        for (mpii_link_t *e = h->next; e != h; e = e->next) {
            mpii_umsg_t *u = MPII_CONTAINER(e, mpii_umsg_t, bl);
            if (u->src == src && u->tag == tag)
                return u;
        }
        return NULL;
    }
    for (mpii_link_t *e = m->uall.next; e != &m->uall; e = e->next) {
        mpii_umsg_t *u = MPII_CONTAINER(e, mpii_umsg_t, gl);
        if (mpii_matches(src, tag, u->src, u->tag))
            return u;
    }
    return NULL;
}

static void mpii_post_recv(mpii_match_t *m, mpii_req_t *r)
{
    r->seq = ++m->pseq;
    r->posted = 1;
    if (r->peer == MPI_ANY_SOURCE || r->tag == MPI_ANY_TAG) {
        mpii_list_push(&m->pwild, &r->link);
    } else {
        mpii_list_push(&m->posted[mpii_bucket(m, r->peer, r->tag)], &r->link);
        m->nposted++;
        mpii_match_grow(m);
    }
}

/* ------------------------------------------------------------------ pools */

static int mpii_cls_of(size_t n)
{
    for (int i = 0; i < NCLS; i++)
        if (n <= p2p.cls_size[i])
            return i;
    return -1;
}

static char *mpii_buf_get(int cls)
{
    void *b = p2p.cls_free[cls];
    if (BASE_LIKELY(b)) {
        memcpy(&p2p.cls_free[cls], b, sizeof(void *));
        return b;
    }
    b = malloc(BASE_MAX(p2p.cls_size[cls], sizeof(void *)));
    if (!b)
        base_fatal("mpi: out of memory for an unexpected message");
    return b;
}

static void mpii_buf_put(int cls, char *b)
{
    memcpy(b, &p2p.cls_free[cls], sizeof(void *));
    p2p.cls_free[cls] = b;
}

static mpii_umsg_t *mpii_umsg_get(void)
{
    if (!mpii_list_empty(&p2p.umsg_free)) {
        mpii_link_t *e = p2p.umsg_free.next;
        mpii_list_del(e);
        mpii_umsg_t *u = MPII_CONTAINER(e, mpii_umsg_t, bl);
        memset(u, 0, sizeof *u);
        return u;
    }
    mpii_umsg_t *u = calloc(1, sizeof *u);
    if (!u)
        base_fatal("mpi: out of memory for an unexpected message");
    return u;
}

static void mpii_umsg_put(mpii_umsg_t *u)
{
    if (u->data)
        mpii_buf_put(u->cls, u->data);
    u->data = NULL;
    mpii_list_push(&p2p.umsg_free, &u->bl);
}

/* The MPI hook is armed only while it has work (answers or GETs queued by handlers):
 * an idle poll does not call it. */
static inline void mpii_hook_arm(void)
{
    vnic_hook_arm(mpii.vnic, p2p.hook_id, 1);
}

void mpii_p2p_hook_arm(void)
{
    mpii_hook_arm();
}

static void mpii_todo_add(int peer, uint8_t kind, uint64_t token)
{
    mpii_todo_t *t;
    if (!mpii_list_empty(&p2p.todo_free)) {
        t = MPII_CONTAINER(p2p.todo_free.next, mpii_todo_t, link);
        mpii_list_del(&t->link);
    } else if (!(t = malloc(sizeof *t))) {
        base_fatal("mpi: out of memory");
    }
    t->peer = peer;
    t->kind = kind;
    t->token = token;
    mpii_list_push(&p2p.todoq, &t->link);
    mpii_hook_arm();
}

/* ------------------------------------------------------------------ packing buffers
 * Rendezvous packs non-contiguous sends and reads non-contiguous receives through
 * private buffers. Large mallocs are fresh mmaps (page faults on every message), so
 * freed buffers are kept: up to MPII_TMP_KEEP of them, MPII_TMP_BYTES in all. Each
 * block has a header with its capacity (a power of two, at least 4 KiB). */
#define MPII_TMP_KEEP 8
#define MPII_TMP_BYTES ((size_t)64 << 20)

typedef struct mpii_tmp {
    size_t cap;
    uint64_t pad[7]; /* 64-byte header: the data stays cache-line aligned */
} mpii_tmp_t;

static struct {
    mpii_tmp_t *keep[MPII_TMP_KEEP];
    int n;
    size_t bytes;
} tmpc;

/* A buffer of at least n bytes, or NULL. */
static void *mpii_tmp_get(size_t n)
{
    int best = -1;
    for (int i = 0; i < tmpc.n; i++)
        if (tmpc.keep[i]->cap >= n && (best < 0 || tmpc.keep[i]->cap < tmpc.keep[best]->cap))
            best = i;
    mpii_tmp_t *t;
    if (best >= 0) {
        t = tmpc.keep[best];
        tmpc.keep[best] = tmpc.keep[--tmpc.n];
        tmpc.bytes -= t->cap;
    } else {
        size_t cap = 4096;
        while (cap < n)
            cap *= 2;
        if (!(t = malloc(sizeof *t + cap)))
            return NULL;
        t->cap = cap;
    }
    return t + 1;
}

/* Returns a buffer of mpii_tmp_get (NULL accepted): kept, or freed when the cache is
 * full (the smallest kept one makes room for a larger one). */
static void mpii_tmp_put(void *p)
{
    if (!p)
        return;
    mpii_tmp_t *t = (mpii_tmp_t *)p - 1;
    if (t->cap > MPII_TMP_BYTES) {
        free(t);
        return;
    }
    while (tmpc.n && (tmpc.n == MPII_TMP_KEEP || tmpc.bytes + t->cap > MPII_TMP_BYTES)) {
        int small = 0;
        for (int i = 1; i < tmpc.n; i++)
            if (tmpc.keep[i]->cap < tmpc.keep[small]->cap)
                small = i;
        if (tmpc.keep[small]->cap >= t->cap) {
            free(t);
            return;
        }
        tmpc.bytes -= tmpc.keep[small]->cap;
        free(tmpc.keep[small]);
        tmpc.keep[small] = tmpc.keep[--tmpc.n];
    }
    tmpc.keep[tmpc.n++] = t;
    tmpc.bytes += t->cap;
}

static void mpii_tmp_finalize(void)
{
    while (tmpc.n)
        free(tmpc.keep[--tmpc.n]);
    tmpc.bytes = 0;
}

/* ------------------------------------------------------------------ wire */

static inline void mpii_stats_eager(uint64_t bytes)
{
    mpii_p2p_stats.eager_sent++;
    mpii_p2p_stats.eager_bytes += bytes;
}

static inline int mpii_am(int peer, const void *a, size_t alen, const void *b, size_t blen,
                          uint64_t token)
{
    int rc = vnic_send_am(mpii.vnic, peer, VNIC_CHAN_MPI_P2P, token, a, alen, b, blen);
    return BASE_LIKELY(!rc) ? MPI_SUCCESS : mpii_err_from_fmpl(rc);
}

/* mpii_am, or with `try` MPII_AGAIN instead of waiting for room at the receiver. */
static inline int mpii_am_or(int peer, const void *a, size_t alen, const void *b, size_t blen,
                             uint64_t token, int try)
{
    if (!try)
        return mpii_am(peer, a, alen, b, blen, token);
    int rc = vnic_send_am_try(mpii.vnic, peer, VNIC_CHAN_MPI_P2P, token, a, alen, b, blen);
    return BASE_LIKELY(!rc) ? MPI_SUCCESS : rc == VNIC_AGAIN ? MPII_AGAIN : mpii_err_from_fmpl(rc);
}

static int mpii_ctl(int peer, uint8_t kind, uint64_t token)
{
    mpii_hdr_t h = {.kind = kind};
    return mpii_am(peer, &h, sizeof h, NULL, 0, token);
}

/* CREDIT (seed 002: receive memory bounded by the receiver, not by the senders). A
 * sender may have at most p2p.credit_max bytes of eager charge (payload plus
 * MPII_CREDIT_ENVELOPE per message) at one receiver that the receiver has not matched.
 * Beyond that it sends the message as an RTS: only the envelope travels, the payload
 * stays in the sender's buffer until the receiver has a receive for it and reads it.
 * So a receiver that computes while senders flood it holds at most credit_max of
 * payload per sender (FMPL_EAGER_BUDGET shared out), plus an envelope per message;
 * MPI_Isend still returns at once, and any receive the receiver posts can match (an
 * RTS is matched like an eager message: no send waits behind another). Only the sends
 * that may defer (the user's nonblocking and persistent ones) are held to their credit:
 * a blocking send charges it too but goes eagerly, as programs that send before the
 * matching receive is posted (unsafe, but common) expect. The receiver
 * returns the charge of the eager messages it matched in CREDIT(imm = bytes) once it
 * owes a quarter of credit_max. An RTS needs a staging block in the heap or a
 * registration; with neither left, a short message goes eagerly after all (overdraft:
 * the bound gives way before progress does). */
#define MPII_CREDIT_ENVELOPE 64

static BASE_NOINLINE mpii_credit_t *mpii_credit_grow(int world)
{
    int n = BASE_MAX(world + 1, BASE_MAX(2 * p2p.ncredit, 64));
    mpii_credit_t *c = realloc(p2p.credit, (size_t)n * sizeof *c);
    if (!c)
        base_fatal("mpi: out of memory for the eager credit table (%d peers)", n);
    memset(c + p2p.ncredit, 0, (size_t)(n - p2p.ncredit) * sizeof *c);
    p2p.credit = c;
    p2p.ncredit = n;
    return &c[world];
}

static inline mpii_credit_t *mpii_credit_of(int world)
{
    return BASE_LIKELY(world < p2p.ncredit) ? &p2p.credit[world] : mpii_credit_grow(world);
}

/* 1 when an eager message of `bytes` to world rank `world` fits its credit. A message
 * to oneself always does: its memory is the sender's own, and a blocking send to
 * oneself before the receive (common, if unsafe) must not wait for that receive. */
static inline int mpii_credit_ok(int world, uint64_t bytes)
{
    return mpii_credit_of(world)->used + bytes + MPII_CREDIT_ENVELOPE <= p2p.credit_max ||
           world == mpii.world_rank;
}

static inline void mpii_credit_take(int world, uint64_t bytes)
{
    mpii_credit_of(world)->used += bytes + MPII_CREDIT_ENVELOPE;
}

static void mpii_todo_add(int peer, uint8_t kind, uint64_t token);

/* This process matched (or a cancel removed) an eager message of `bytes` from world. */
static void mpii_credit_return(int world, uint64_t bytes, int in_handler)
{
    mpii_credit_t *c = mpii_credit_of(world);
    c->owed += bytes + MPII_CREDIT_ENVELOPE;
    if (c->owed < p2p.credit_max / 4)
        return;
    uint64_t n = c->owed;
    c->owed = 0;
    if (in_handler)
        mpii_todo_add(world, MPII_AM_CREDIT, n);
    else
        mpii_ctl(world, MPII_AM_CREDIT, n);
}

/* 1 when a message of size bytes, shorter than r's buffer, ends inside a basic element of
 * r's type: the type signatures cannot match (MPI-4.0 3.3.1), e.g. 3 chars received as
 * ints. One modulo for predefined types; a walk of the type only for short messages of
 * derived ones. */
static int mpii_recv_splits_element(const mpii_req_t *r, uint64_t size)
{
    const dt_t *t = r->dt;
    if (!t || size == 0 || dt_size(t) <= 1)
        return 0;
    if (dt_nelem(t) == 1)
        return size % (uint64_t)dt_size(t) != 0;
    return dt_elements_in(t, (int64_t)size) == dt_elements_in(t, (int64_t)size - 1);
}

static void mpii_recv_status(mpii_req_t *r, int src, int tag, uint64_t size)
{
    uint64_t cap = r->bytes;
    r->st.MPI_SOURCE = src;
    r->st.MPI_TAG = tag;
    r->st.MPI_ERROR = MPI_SUCCESS;
    r->st.fmpl_cancelled = 0;
    r->st.fmpl_count = (MPI_Count)BASE_MIN(size, cap);
    r->err = MPI_SUCCESS;
    if (BASE_UNLIKELY(size != cap))
        r->err = size > cap                          ? MPI_ERR_TRUNCATE
                 : mpii_recv_splits_element(r, size) ? MPI_ERR_TYPE
                                                     : MPI_SUCCESS;
}

/* Unpacks n bytes of packed stream into r's buffer. */
static void mpii_recv_unpack(mpii_req_t *r, const void *data, uint64_t n)
{
    if (!n)
        return;
    if (BASE_LIKELY(r->contig && n == 8)) /* the common small case without a libc call */
        memcpy((char *)r->buf + r->lb, data, 8);
    else if (BASE_LIKELY(r->contig))
        memcpy((char *)r->buf + r->lb, data, n);
    else
        dt_unpack(r->dt, r->count, r->buf, 0, (int64_t)n, data);
}

/* Bytes of packed stream read and unpacked at a time by a non-contiguous rendezvous
 * receive. */
#define MPII_UNPACK_PIECE (1u << 20)

/* STAGED (seed 004 on a host: both sides' layouts, no copy in between). A non-contiguous
 * rendezvous send to a rank that maps this process's shared heap packs its stream into
 * a heap block and sends the RTS first: the block's head (mpii_stage_head_t) counts the
 * bytes packed so far (release stores, one per piece), the stream follows. The
 * receiver unpacks straight from the mapping what is packed while the sender packs the
 * rest: two cores, two passes over memory, overlapped (the private path runs three in
 * a row: pack, read, unpack).
 * A nonblocking send packs it all within the send call, so the receiver never waits
 * for the sender's later progress; its block holds the whole stream and takes at most
 * 1/8 of the heap (without room the send takes the private path).
 * A blocking send longer than MPII_STAGE_RING packs through a ring of that size instead:
 * its caller stays in the library until the FIN anyway, so it packs a piece whenever
 * the receiver has unpacked one (counted in the head's second line), from the p2p
 * progress hook (the queue p2p.pumpq) and from any staged receive it waits in. The ring
 * stays in the caches, where a whole-stream block of several MiB goes to memory and back
 * (measured: bench/mpi_pingpong --submatrix, docs/performance.md).
 * The block goes back to the heap with the FIN. */
#define MPII_STAGE_HDR 128
#define MPII_STAGE_PIECE_MIN 4096
#define MPII_STAGE_PIECE_MAX (256u << 10)
#define MPII_STAGE_RING (512u << 10)
#define MPII_STAGE_RING_PIECE (MPII_STAGE_RING / 4)

typedef struct mpii_stage_head {
    uint64_t packed; /* sender: bytes of the stream packed so far */
    uint64_t ring;   /* sender, before the RTS: bytes of data space (ring < size: a ring) */
    char line0[48];
    uint64_t consumed; /* receiver, ring only: bytes of the stream unpacked so far */
    char line1[56];
} mpii_stage_head_t;
_Static_assert(sizeof(mpii_stage_head_t) == MPII_STAGE_HDR, "staging head: two lines");

typedef struct mpii_stage_wait {
    const uint64_t *packed;
    uint64_t done;
} mpii_stage_wait_t;

static int mpii_stage_room_any(void);
static int mpii_stage_pump_all(void);

static int mpii_stage_ready(void *arg)
{
    const mpii_stage_wait_t *w = arg;
    return __atomic_load_n(w->packed, __ATOMIC_ACQUIRE) > w->done || mpii_stage_room_any();
}

/* Receives a staged stream of n bytes (STAGED above). */
static int mpii_recv_staged(mpii_req_t *r, uint64_t n)
{
    uint64_t at = r->r_off - MPII_STAGE_HDR;
    mpii_stage_head_t *head =
        vnic_peer_ptr(mpii.vnic, r->r_world, VNIC_KEY_HEAP, at, MPII_STAGE_HDR);
    uint64_t ring = head ? head->ring : 0;
    if (!ring || !vnic_peer_ptr(mpii.vnic, r->r_world, VNIC_KEY_HEAP, at, MPII_STAGE_HDR + ring))
        return FMPL_ERR_KEY;
    const char *data = (const char *)head + MPII_STAGE_HDR;
    mpii_stage_wait_t w = {&head->packed, 0};
    while (w.done < n) {
        uint64_t avail = __atomic_load_n(w.packed, __ATOMIC_ACQUIRE);
        if (avail <= w.done) {
            if (mpii_stage_pump_all()) /* ours may be what the sender waits for */
                continue;
            int rc = vnic_wait(mpii.vnic, mpii_stage_ready, &w, -1);
            if (rc)
                return rc;
            continue;
        }
        uint64_t pos = w.done % ring, k = BASE_MIN(BASE_MIN(avail, n) - w.done, ring - pos);
        if (r->contig)
            memcpy((char *)r->buf + r->lb + w.done, data + pos, k);
        else
            dt_unpack(r->dt, r->count, r->buf, (int64_t)w.done, (int64_t)k, data + pos);
        w.done += k;
        if (ring < r->r_size) {
            __atomic_store_n(&head->consumed, w.done, __ATOMIC_RELEASE);
            vnic_peer_wake(mpii.vnic, r->r_world); /* if it sleeps waiting for room */
        }
    }
    return FMPL_SUCCESS;
}

/* Reads the rendezvous payload of a matched receive (status already set), then FIN. */
static void mpii_recv_get(mpii_req_t *r)
{
    uint64_t n = (uint64_t)r->st.fmpl_count;
    int rc = FMPL_SUCCESS;
    if (n && r->r_staged) {
        rc = mpii_recv_staged(r, n);
    } else if (n && r->contig) {
        rc = vnic_get(mpii.vnic, r->r_world, (char *)r->buf + r->lb, n, r->r_key, r->r_off);
    } else if (n) {
        /* Non-contiguous receive: read the packed stream in pieces into a private
         * buffer and unpack each (one large read beats a read per scattered segment). */
        size_t piece = (size_t)BASE_MIN(n, (uint64_t)MPII_UNPACK_PIECE);
        char *tmp = mpii_tmp_get(piece);
        if (!tmp)
            rc = FMPL_ERR_NOMEM;
        for (uint64_t done = 0; tmp && done < n && !rc;) {
            size_t k = (size_t)BASE_MIN(n - done, (uint64_t)piece);
            rc = vnic_get(mpii.vnic, r->r_world, tmp, k, r->r_key, r->r_off + done);
            if (!rc)
                dt_unpack(r->dt, r->count, r->buf, (int64_t)done, (int64_t)k, tmp);
            done += k;
        }
        mpii_tmp_put(tmp);
    }
    if (rc && r->err == MPI_SUCCESS)
        r->err = mpii_err_from_fmpl(rc);
    mpii_ctl(r->r_world, MPII_AM_FIN, r->r_token);
}

/* Delivers an incoming message (header h of `size` payload bytes, from world rank
 * `world`) to the matched receive r: eager data is unpacked now; a rendezvous (h is
 * then the head of an mpii_rts_t) is read now, or, inside a handler, queued for the
 * progress hook. */
static void mpii_deliver(mpii_req_t *r, const mpii_hdr_t *h, uint64_t size, int world,
                         uint64_t token, const void *payload, int in_handler)
{
    mpii_recv_status(r, h->src, h->tag, size);
    if (h->kind == MPII_AM_EAGER) {
        mpii_recv_unpack(r, payload, (uint64_t)r->st.fmpl_count);
        mpii_credit_return(world, size, in_handler);
        if (h->flags & MPII_AMF_SYNC) {
            if (in_handler)
                mpii_todo_add(world, MPII_AM_ACK, token);
            else
                mpii_ctl(world, MPII_AM_ACK, token);
        }
        mpii_req_done(r);
        return;
    }
    const mpii_rts_t *rts = (const mpii_rts_t *)(const void *)h;
    mpii_req_tail(r)->r_world = world;
    r->r_token = token;
    r->r_key = rts->key;
    r->r_off = rts->off;
    r->r_size = size;
    r->r_staged = (h->flags & MPII_AMF_STAGED) != 0;
    if (in_handler) {
        mpii_list_push(&p2p.getq, &r->link);
        mpii_hook_arm();
        return;
    }
    mpii_recv_get(r);
    mpii_req_done(r);
}

static void mpii_send_finish(mpii_req_t *r);
static void mpii_bsend_release(void *p);
static int mpii_bsend_go(mpii_req_t *r);
static void mpii_cancel_am(const mpii_hdr_t *h, const vnic_notify_t *n);

static void mpii_am_handler(void *arg, const vnic_notify_t *n)
{
    (void)arg;
    mpii_hdr_t h;
    if (BASE_UNLIKELY(n->len < sizeof h))
        base_fatal("mpi: short message from rank %d", n->src);
    memcpy(&h, n->data, sizeof h);
    if (h.kind == MPII_AM_ACK || h.kind == MPII_AM_FIN) {
        mpii_req_t *r = (mpii_req_t *)(uintptr_t)n->imm;
        if (BASE_UNLIKELY(r->cancel_pending))
            mpii_req_tail(r)->fin_seen = 1; /* completes when the answer to its CANCEL arrives */
        else
            mpii_send_finish(r);
        return;
    }
    if (h.kind == MPII_AM_CREDIT) {
        mpii_credit_t *c = mpii_credit_of(n->src);
        c->used -= BASE_MIN(c->used, n->imm);
        return;
    }
    if (BASE_UNLIKELY(h.kind >= MPII_AM_CANCEL)) {
        mpii_cancel_am(&h, n);
        return;
    }
    uint64_t token = n->imm;
    if (h.flags & MPII_AMF_COUNTED) /* an eager message's token: the pair's count */
        token = MPII_TOKEN_EAGER | ++mpii_credit_of(n->src)->counted_in;
    mpii_match_t *m = mpii_match_of(h.ctx);
    const char *payload = (const char *)n->data + sizeof h;
    uint64_t size = n->len - sizeof h;
    mpii_rts_t rts;
    if (h.kind == MPII_AM_RTS) {
        if (BASE_UNLIKELY(n->len < sizeof rts))
            base_fatal("mpi: short message from rank %d", n->src);
        memcpy(&rts, n->data, sizeof rts);
        size = rts.size;
    }
    mpii_req_t *r = mpii_posted_take(m, h.src, h.tag);
    if (r) {
        mpii_deliver(r, h.kind == MPII_AM_RTS ? &rts.h : &h, size, n->src, token, payload, 1);
        return;
    }
    mpii_umsg_t *u = mpii_umsg_get();
    u->seq = ++m->useq;
    u->src = h.src;
    u->tag = h.tag;
    u->kind = h.kind;
    u->flags = h.flags;
    u->src_world = n->src;
    u->size = size;
    u->token = token;
    if (h.kind == MPII_AM_RTS) {
        u->key = rts.key;
        u->off = rts.off;
    } else if (size) {
        u->cls = mpii_cls_of(size);
        u->data = mpii_buf_get(u->cls);
        memcpy(u->data, payload, size);
    }
    mpii_list_push(&m->unexp[mpii_bucket(m, h.src, h.tag)], &u->bl);
    mpii_list_push(&m->uall, &u->gl);
    m->nunexp++;
    mpii_stats_unexp_push();
    if (MPII_EVENT_ON(MPII_EV_UNEXPECTED)) {
        mpii_ev_unexpected_t e = {h.src, h.tag, h.ctx, 0, size};
        mpii_tool_event_raise(MPII_EV_UNEXPECTED, &e);
    }
    mpii_match_grow(m);
}

/* Receives unexpected message u (unlinked) into r (outside handlers). */
static void mpii_recv_unexp(mpii_req_t *r, mpii_umsg_t *u)
{
    mpii_rts_t rts = {
        .h = {.src = u->src, .tag = u->tag, .kind = (uint8_t)u->kind, .flags = (uint8_t)u->flags},
        .size = u->size,
        .key = u->key,
        .off = u->off};
    mpii_deliver(r, &rts.h, u->size, u->src_world, u->token, u->data, 0);
    mpii_umsg_put(u);
}

static void mpii_unexp_unlink(mpii_match_t *m, mpii_umsg_t *u)
{
    m->nunexp--;
    mpii_p2p_stats.unexp_len--;
    mpii_list_del(&u->bl);
    mpii_list_del(&u->gl);
}

/* Posts the queued answers and the GETs of matched rendezvous. */
static int mpii_hook_work(void)
{
    int n = 0;
    while (!mpii_list_empty(&p2p.todoq)) {
        mpii_todo_t *t = MPII_CONTAINER(p2p.todoq.next, mpii_todo_t, link);
        mpii_list_del(&t->link);
        mpii_ctl(t->peer, t->kind, t->token);
        mpii_list_push(&p2p.todo_free, &t->link);
        n++;
    }
    while (!mpii_list_empty(&p2p.getq)) {
        mpii_req_t *r = MPII_CONTAINER(p2p.getq.next, mpii_req_t, link);
        mpii_list_del(&r->link);
        mpii_recv_get(r);
        mpii_req_done(r);
        n++;
    }
    return n + mpii_stage_pump_all() + mpii_defer_work();
}

/* The progress hook while armed: the queued work; disarms itself once it is done. */
static int mpii_hook(void *arg)
{
    (void)arg;
    int n = mpii_hook_work();
    if (mpii_list_empty(&p2p.todoq) && mpii_list_empty(&p2p.getq) && mpii_list_empty(&p2p.pumpq) &&
        !mpii_defer_total)
        vnic_hook_arm(mpii.vnic, p2p.hook_id, 0);
    return n;
}

/* ------------------------------------------------------------------ send side */

/* Releases what send r holds for its rendezvous (registration, packed copy). */
static void mpii_send_release(mpii_req_t *r)
{
    if (r->pumping) { /* a ring send the receiver ended early (a shorter receive) */
        mpii_list_del(&r->link);
        r->pumping = 0;
    }
    if (r->key != VNIC_KEY_INVALID) {
        vnic_mr_dereg(mpii.vnic, r->key);
        r->key = VNIC_KEY_INVALID;
    }
    if (r->tmp) {
        if (r->tmp_bsend)
            mpii_bsend_release(r->tmp);
        else if (r->tmp_heap)
            vnic_mem_free(mpii.vnic, r->tmp);
        else
            mpii_tmp_put(r->tmp);
        r->tmp = NULL;
        r->tmp_heap = 0;
    }
}

/* A heap block for staging the bytes of send r (STAGED), or NULL: the receiver does
 * not map this heap, the message is too large for it, or the heap is full. */
static char *mpii_stage_alloc(mpii_req_t *r, uint64_t bytes)
{
    const vnic_info_t *vi = vnic_info(mpii.vnic);
    uint64_t space = r->stage_ring && bytes > MPII_STAGE_RING ? MPII_STAGE_RING : bytes;
    if (space > vi->heap_size / 8 || !vnic_peer_ptr(mpii.vnic, r->peer_world, VNIC_KEY_HEAP, 0, 1))
        return NULL;
    char *blk = vnic_mem_alloc(mpii.vnic, MPII_STAGE_HDR + (size_t)space);
    if (blk) {
        mpii_stage_head_t *head = (mpii_stage_head_t *)(void *)blk;
        head->packed = 0;
        head->ring = space;
        head->consumed = 0;
        r->staged = 0;
    }
    return blk;
}

/* Bytes ring send r may pack now: its ring less what the receiver has not unpacked
 * (its counter loaded once). */
static inline uint64_t mpii_stage_room(const mpii_req_t *r)
{
    const mpii_stage_head_t *head = r->tmp;
    return head->ring - (r->staged - __atomic_load_n(&head->consumed, __ATOMIC_ACQUIRE));
}

/* Packs what send r may of its stream into its staging block, piece by piece,
 * publishing each: all of it, or in a ring what the receiver has room for. Returns the
 * bytes packed. */
static uint64_t mpii_stage_pack(mpii_req_t *r)
{
    mpii_stage_head_t *head = r->tmp;
    char *data = (char *)r->tmp + MPII_STAGE_HDR;
    uint64_t bytes = r->bytes, ring = head->ring, from = r->staged;
    uint64_t piece = ring < bytes ? MPII_STAGE_RING_PIECE
                                  : BASE_MIN(BASE_MAX(bytes / 16, (uint64_t)MPII_STAGE_PIECE_MIN),
                                             (uint64_t)MPII_STAGE_PIECE_MAX);
    while (r->staged < bytes) {
        uint64_t off = r->staged, pos = off % ring;
        uint64_t k = BASE_MIN(piece, BASE_MIN(bytes - off, ring - pos));
        if (ring < bytes) {
            uint64_t room = mpii_stage_room(r); /* a call: BASE_MIN evaluates twice */
            k = BASE_MIN(k, room);
        }
        if (!k)
            break;
        dt_pack(r->dt, r->count, r->buf, (int64_t)off, (int64_t)k, data + pos);
        r->staged = off + k;
        __atomic_store_n(&head->packed, r->staged, __ATOMIC_RELEASE);
        vnic_peer_wake(mpii.vnic, r->peer_world); /* if it sleeps waiting for this */
    }
    return r->staged - from;
}

/* The ring sends with bytes left to pack (STAGED): packs what each may. Returns 1 when
 * it packed something. */
static int mpii_stage_pump_all(void)
{
    uint64_t n = 0;
    for (mpii_link_t *e = p2p.pumpq.next, *next; e != &p2p.pumpq; e = next) {
        next = e->next;
        mpii_req_t *r = MPII_CONTAINER(e, mpii_req_t, link);
        n += mpii_stage_pack(r);
        if (r->staged == r->bytes) {
            mpii_list_del(&r->link);
            r->pumping = 0;
        }
    }
    return n > 0;
}

/* 1 when a ring send has room to pack into. */
static int mpii_stage_room_any(void)
{
    for (mpii_link_t *e = p2p.pumpq.next; e != &p2p.pumpq; e = e->next) {
        if (mpii_stage_room(MPII_CONTAINER(e, mpii_req_t, link)))
            return 1;
    }
    return 0;
}

static void mpii_send_finish(mpii_req_t *r)
{
    if (r->bowner) {
        r->bowner->bsub = NULL;
        r->bowner = NULL;
    }
    mpii_send_release(r);
    mpii_sends_pending--;
    mpii_req_done(r);
}

/* An eager send packed into `pack` (NULL: none) has left it. */
static inline void mpii_pack_done(char *pack)
{
    if (pack == p2p.packbuf)
        p2p.packbuf_busy = 0;
    else if (pack)
        mpii_tmp_put(pack);
}

/* Sends r's bytes at src eagerly in standard or ready mode (r->mode not SYNC), and
 * completes r once they left. A send MPI_Cancel may name (a user's request, a user
 * Bsend's internal send, a part of MPI_Isendrecv) has a token: the pair's count, which
 * the receiver keeps too, so the message carries no immediate (and a small one may take
 * the vnic fastbox); the library's own sends have none. */
static BASE_INLINE int mpii_send_eager(mpii_req_t *r, const void *src, uint64_t bytes, int try)
{
    mpii_hdr_t h = {.ctx = r->ctx, .src = r->myrank, .tag = r->tag, .kind = MPII_AM_EAGER};
    mpii_credit_t *cr = mpii_credit_of(r->peer_world);
    uint64_t token = 0;
    if (!r->internal || r->named || r->parent) {
        h.flags = MPII_AMF_COUNTED;
        token = MPII_TOKEN_EAGER | (cr->counted + 1);
    }
    int rc = mpii_am_or(r->peer_world, &h, sizeof h, src, bytes, 0, try);
    if (BASE_LIKELY(rc == MPI_SUCCESS)) {
        r->s_token = token;
        r->st.fmpl_count = (MPI_Count)bytes;
        cr->counted += token != 0;
        mpii_credit_take(r->peer_world, bytes);
        mpii_stats_eager(bytes);
        mpii_req_done(r);
    }
    return rc;
}

/* Contract: p2p_impl.h. Sends with r's arguments (peer_world, myrank, ctx, tag,
 * buf/count/dt, mode). */
int mpii_send_post(mpii_req_t *r, int try)
{
    uint64_t bytes = r->bytes;
    mpii_hdr_t h = {.ctx = r->ctx, .src = r->myrank, .tag = r->tag, .kind = MPII_AM_EAGER};
    r->st.fmpl_count = (MPI_Count)bytes;
    int contig = r->contig, overdraft = 0;
eager:
    if (bytes <= p2p.eager_max &&
        (overdraft || !r->may_defer || mpii_credit_ok(r->peer_world, bytes))) {
        const void *src = bytes ? (const char *)r->buf + r->lb : NULL;
        char *pack = NULL;
        if (!contig && bytes) {
            pack = p2p.packbuf_busy ? mpii_tmp_get(bytes) : p2p.packbuf;
            if (!pack)
                return MPI_ERR_NO_MEM;
            dt_pack(r->dt, r->count, r->buf, 0, (int64_t)bytes, pack);
            src = pack;
            if (pack == p2p.packbuf)
                p2p.packbuf_busy = 1;
        }
        if (r->mode == MPII_MODE_SYNC) {
            h.flags = MPII_AMF_SYNC;
            mpii_sends_pending++;
            r->s_token = (uint64_t)(uintptr_t)r;
            int rc = mpii_am_or(r->peer_world, &h, sizeof h, src, bytes, r->s_token, try);
            mpii_pack_done(pack);
            if (rc) {
                mpii_sends_pending--;
            } else {
                mpii_credit_take(r->peer_world, bytes);
                mpii_stats_eager(bytes);
            }
            return rc;
        }
        int rc = mpii_send_eager(r, src, bytes, try);
        mpii_pack_done(pack);
        return rc;
    }
    /* Rendezvous: the receiver reads from registered memory, or from the heap block a
     * non-contiguous send, a short one beyond its credit (CREDIT), or a contiguous one of
     * at most p2p.stage_max bytes (p2p.stage_cpu_max to a rank bound to this rank's CPU)
     * is staged in (STAGED): a copy, but no registration per message, and the whole
     * message leaves with the send call. */
    mpii_req_tail(r);
    void *base;
    if (contig && (r->tmp_bsend || (bytes > p2p.eager_max && bytes > p2p.stage_max &&
                                    (bytes > p2p.stage_cpu_max ||
                                     !vnic_peer_shares_cpu(mpii.vnic, r->peer_world))))) {
        base = (char *)r->buf + r->lb;
    } else if (r->tmp) { /* bsend: packed in the attached buffer; or an earlier try's */
        base = r->tmp_heap ? (char *)r->tmp + MPII_STAGE_HDR : r->tmp;
    } else if ((r->tmp = mpii_stage_alloc(r, bytes))) {
        r->tmp_heap = 1;
        base = (char *)r->tmp + MPII_STAGE_HDR;
    } else if (contig) {
        base = (char *)r->buf + r->lb;
    } else {
        r->tmp = mpii_tmp_get(bytes);
        if (!r->tmp)
            return MPI_ERR_NO_MEM;
        dt_pack(r->dt, r->count, r->buf, 0, (int64_t)bytes, r->tmp);
        base = r->tmp;
    }
    int rc;
    if (!r->tmp_heap && r->key == VNIC_KEY_INVALID) { /* a deferred retry keeps it */
        rc = vnic_mr_reg(mpii.vnic, base, bytes, VNIC_ACC_REMOTE_READ, &r->key);
        while (rc == FMPL_ERR_NOMEM) { /* every registration in use: they come back with FINs */
            if (bytes <= p2p.eager_max && !r->tmp_bsend) {
                /* Overdraft: a short message beyond its credit goes eagerly after all
                 * rather than wait for a registration, which could wait for the
                 * receiver to match messages queued behind this one (CREDIT). */
                mpii_tmp_put(r->tmp);
                r->tmp = NULL;
                overdraft = 1;
                goto eager;
            }
            if (try)
                return MPII_AGAIN; /* deferred; an earlier try's copy stays in r->tmp */
            vnic_progress(mpii.vnic);
            rc = vnic_mr_reg(mpii.vnic, base, bytes, VNIC_ACC_REMOTE_READ, &r->key);
        }
        if (rc) {
            if (!r->tmp_bsend) {
                mpii_tmp_put(r->tmp);
                r->tmp = NULL;
            }
            return mpii_err_from_fmpl(rc);
        }
    }
    mpii_rts_t rts = {.h = h, .size = bytes, .key = r->key, .off = 0};
    rts.h.kind = MPII_AM_RTS;
    if (r->tmp_heap) {
        rts.h.flags |= MPII_AMF_STAGED;
        rts.key = VNIC_KEY_HEAP;
        rts.off = vnic_mem_heap_offset(mpii.vnic, base);
    }
    mpii_sends_pending++;
    r->s_token = (uint64_t)(uintptr_t)r;
    rc = mpii_am_or(r->peer_world, &rts, sizeof rts, NULL, 0, (uint64_t)(uintptr_t)r, try);
    if (rc == MPII_AGAIN) {
        mpii_sends_pending--; /* the registration and packed copy wait for the retry */
    } else if (!rc) {
        mpii_p2p_stats.rndv_sent++;
        mpii_p2p_stats.rndv_bytes += bytes;
        if (MPII_EVENT_ON(MPII_EV_RENDEZVOUS)) {
            mpii_ev_rendezvous_t e = {r->peer_world, h.tag, bytes};
            mpii_tool_event_raise(MPII_EV_RENDEZVOUS, &e);
        }
        if (r->tmp_heap && (mpii_stage_pack(r), r->staged < bytes)) {
            r->pumping = 1; /* a ring: the rest as the receiver makes room */
            mpii_list_push(&p2p.pumpq, &r->link);
            mpii_hook_arm();
        }
    } else {
        mpii_sends_pending++; /* mpii_send_finish drops it again */
        mpii_send_finish(r);
        mpii_sends_pending--;
    }
    return rc;
}

/* Sends r now, or defers it (p2p_defer.c) when it may wait and its receiver has no
 * room, or when earlier sends to that receiver wait. */
static inline int mpii_send_go(mpii_req_t *r)
{
    if (BASE_UNLIKELY(mpii_defer_count(r->peer_world))) {
        if (r->may_defer) {
            mpii_defer_add(r);
            return MPI_SUCCESS;
        }
        mpii_defer_drain(r->peer_world); /* the deferred ones go first */
    }
    int rc;
    uint64_t bytes = r->bytes;
    if (BASE_LIKELY(r->contig && r->mode != MPII_MODE_SYNC && bytes <= p2p.eager_max &&
                    (!r->may_defer || mpii_credit_ok(r->peer_world, bytes))))
        rc = mpii_send_eager(r, bytes ? (const char *)r->buf + r->lb : NULL, bytes, r->may_defer);
    else
        rc = mpii_send_post(r, r->may_defer);
    if (BASE_UNLIKELY(rc == MPII_AGAIN)) {
        mpii_defer_add(r);
        return MPI_SUCCESS;
    }
    return rc;
}

/* ------------------------------------------------------------------ argument checks */

/* Checks the common arguments; fills r (and *cp: the communicator). On error returns the
 * class (not raised). peer: dest (send) or source (recv). Inlined into mpii_inb (see
 * there); the other callers call mpii_args. */
static BASE_INLINE int mpii_args_inline(mpii_req_t *r, const void *buf, int64_t count,
                                        MPI_Datatype type, int peer, int tag, MPI_Comm comm,
                                        int recv, mpii_comm_t **cp)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    if (BASE_UNLIKELY(!c))
        return MPI_ERR_COMM;
    *cp = c;
    if (BASE_UNLIKELY(count < 0))
        return MPI_ERR_COUNT;
    dt_t *dt = mpii_type_comm_dt(type);
    if (BASE_UNLIKELY(!dt))
        return MPI_ERR_TYPE;
    if (BASE_UNLIKELY(!buf && count > 0 && peer != MPI_PROC_NULL && FMPL_MPI_DT_IS_PREDEF(type) &&
                      FMPL_MPI_DT_SIZE(type) > 0))
        return MPI_ERR_BUFFER;
    if (BASE_UNLIKELY(recv ? (tag < 0 && tag != MPI_ANY_TAG) || tag > MPII_TAG_UB
                           : tag < 0 || tag > MPII_TAG_UB))
        return MPI_ERR_TAG;
    const mpii_group_t *peers = c->rgroup ? c->rgroup : c->group;
    if (BASE_UNLIKELY(peer >= peers->size ||
                      (peer < 0 && peer != MPI_PROC_NULL && !(recv && peer == MPI_ANY_SOURCE))))
        return MPI_ERR_RANK;
    mpii_req_set_buf(r, buf, count, type, dt);
    r->peer = peer;
    r->tag = tag;
    r->comm = comm;
    r->ctx = c->ctx;
    r->myrank = c->rank;
    r->peer_world = peer >= 0 ? peers->world[peer] : -1;
    r->m = mpii_comm_match(c);
    r->kind = recv ? MPII_REQ_RECV : MPII_REQ_SEND;
    return MPI_SUCCESS;
}

static BASE_NOINLINE int mpii_args(mpii_req_t *r, const void *buf, int64_t count, MPI_Datatype type,
                                   int peer, int tag, MPI_Comm comm, int recv, mpii_comm_t **cp)
{
    return mpii_args_inline(r, buf, count, type, peer, tag, comm, recv, cp);
}

/* Contract: p2p_impl.h. */
int mpii_p2p_args_fail(int rc, const void *buf, int64_t count, MPI_Datatype type, int peer, int tag,
                       MPI_Comm comm, int recv, const char *fname)
{
    mpii_comm_t *c = mpii_comm_get(comm);
    const mpii_group_t *peers = c ? (c->rgroup ? c->rgroup : c->group) : NULL;
    switch (rc) {
    case MPI_ERR_COMM:
        return MPII_ERRF(rc, fname, "communicator handle %#x is not a valid communicator",
                         (unsigned)comm);
    case MPI_ERR_COUNT: return MPII_ERRF_COMM(comm, rc, fname, "count %lld < 0", (long long)count);
    case MPI_ERR_TYPE:
        return MPII_ERRF_COMM(comm, rc, fname,
                              "datatype handle %#x is not a valid committed datatype",
                              (unsigned)type);
    case MPI_ERR_BUFFER:
        return MPII_ERRF_COMM(comm, rc, fname, "buffer %p with count %lld", buf, (long long)count);
    case MPI_ERR_TAG:
        return MPII_ERRF_COMM(comm, rc, fname, "tag %d is not in 0..%d%s", tag, MPII_TAG_UB,
                              recv ? " or MPI_ANY_TAG" : "");
    case MPI_ERR_RANK:
        return MPII_ERRF_COMM(comm, rc, fname, "%s %d is not in 0..%d%s%s",
                              recv ? "source" : "destination", peer, peers ? peers->size - 1 : -1,
                              c && c->rgroup ? " (the remote group)" : "",
                              recv ? ", MPI_ANY_SOURCE or MPI_PROC_NULL" : " or MPI_PROC_NULL");
    default: return MPII_ERR_COMM(comm, rc, fname);
    }
}

static int mpii_proc_null_done(mpii_req_t *r)
{
    mpii_status_empty(&r->st);
    r->st.MPI_SOURCE = MPI_PROC_NULL;
    r->st.MPI_TAG = MPI_ANY_TAG;
    r->err = MPI_SUCCESS;
    mpii_req_done(r);
    return MPI_SUCCESS;
}

/* Starts a receive with r's arguments. */
static int mpii_recv_go(mpii_req_t *r)
{
    mpii_umsg_t *u = mpii_unexp_find(r->m, r->peer, r->tag);
    if (u) {
        mpii_unexp_unlink(r->m, u);
        mpii_recv_unexp(r, u);
        return MPI_SUCCESS;
    }
    mpii_post_recv(r->m, r);
    return MPI_SUCCESS;
}

int mpii_p2p_args(mpii_req_t *r, const void *buf, int64_t count, MPI_Datatype type, int peer,
                  int tag, MPI_Comm comm, int recv)
{
    mpii_comm_t *c;
    return mpii_args(r, buf, count, type, peer, tag, comm, recv, &c);
}

/* Starts r, whose state of an earlier run is clear (a new request's: the pool zeroes it;
 * a persistent one's: mpii_p2p_start clears it). */
static inline int mpii_p2p_go(mpii_req_t *r)
{
    if (r->peer == MPI_PROC_NULL)
        return mpii_proc_null_done(r);
    if (r->kind == MPII_REQ_RECV)
        return mpii_recv_go(r);
    if (r->mode == MPII_MODE_BUF)
        return mpii_bsend_go(r);
    return mpii_send_go(r);
}

int mpii_p2p_start(mpii_req_t *r)
{
    r->done = 0;
    r->err = MPI_SUCCESS;
    r->st.fmpl_cancelled = 0;
    r->s_token = 0;
    r->fin_seen = 0;
    r->cancel_pending = 0;
    if (r->bsub) { /* a buffered send restarted while its previous message is in flight */
        r->bsub->bowner = NULL;
        r->bsub = NULL;
    }
    return mpii_p2p_go(r);
}

/* ------------------------------------------------------------------ cancellation */

/* Asks the receiver of send r to remove its message (r has sent one, s_token != 0). */
static void mpii_cancel_post(mpii_req_t *r)
{
    mpii_hdr_t h = {.ctx = r->ctx, .src = r->myrank, .tag = r->tag, .kind = MPII_AM_CANCEL};
    r->cancel_pending = 1;
    int rc = mpii_am(r->peer_world, &h, sizeof h, &r->s_token, sizeof r->s_token,
                     (uint64_t)(uintptr_t)r);
    if (rc) /* could not ask: the send goes on as if the receiver had said no */
        r->cancel_pending = 0;
}

void mpii_p2p_cancel(mpii_req_t *r)
{
    if (r->kind == MPII_REQ_RECV && r->posted && !r->done) {
        mpii_list_del(&r->link);
        r->posted = 0;
        if (r->peer != MPI_ANY_SOURCE && r->tag != MPI_ANY_TAG)
            r->m->nposted--;
        r->st.fmpl_cancelled = 1;
        r->st.fmpl_count = 0;
        r->err = MPI_SUCCESS;
        mpii_req_done(r);
        return;
    }
    if (r->kind != MPII_REQ_SEND || r->cancel_pending || r->st.fmpl_cancelled)
        return;
    if (r->bsub) { /* Bsend/Ibsend in rendezvous: cancel the internal send for it */
        mpii_req_t *s = r->bsub;
        if (s->cancel_pending || s->done)
            return;
        mpii_cancel_post(s);
        if (s->cancel_pending) {
            r->cancel_pending = 1; /* completes with the answer to s's CANCEL */
            r->done = 0;
        }
        return;
    }
    if (r->deferred) { /* not sent yet: it never will be */
        mpii_defer_remove(r);
        mpii_send_release(r);
        r->st.fmpl_cancelled = 1;
        r->st.fmpl_count = 0;
        mpii_req_done(r);
        return;
    }
    if (!r->s_token)
        return; /* nothing sent (MPI_PROC_NULL) */
    if (r->s_token & MPII_TOKEN_EAGER) {
        /* locally complete already: incomplete again until the answer arrives */
        mpii_cancel_post(r);
        if (r->cancel_pending) {
            r->done = 0;
            mpii_sends_pending++;
        }
    } else if (!r->done) {
        mpii_cancel_post(r); /* SYNC eager or RTS, waiting for ACK / FIN */
    }
}

/* The answer to the CANCEL of send r: ok 1 when the receiver removed the message. */
static void mpii_cancel_answer(mpii_req_t *r, int ok)
{
    mpii_req_t *owner = r->bowner;
    r->cancel_pending = 0;
    if (ok) {
        r->st.fmpl_cancelled = 1;
        r->st.fmpl_count = 0;
    }
    if (r->s_token & MPII_TOKEN_EAGER) {
        mpii_sends_pending--;
        mpii_req_done(r);
    } else if (ok || r->fin_seen) {
        mpii_send_finish(r); /* no ACK / FIN will come (ok) or it came already */
    }
    if (owner && owner->cancel_pending) { /* the Bsend/Ibsend request r was sent for */
        owner->cancel_pending = 0;
        if (ok) {
            owner->st.fmpl_cancelled = 1;
            owner->st.fmpl_count = 0;
        }
        mpii_req_done(owner);
    }
}

/* CANCEL (receiver side) and its answers (sender side), in the handler: answers are
 * queued for the progress hook. */
static void mpii_cancel_am(const mpii_hdr_t *h, const vnic_notify_t *n)
{
    if (h->kind != MPII_AM_CANCEL) {
        mpii_cancel_answer((mpii_req_t *)(uintptr_t)n->imm, h->kind == MPII_AM_CANCEL_OK);
        return;
    }
    uint64_t token;
    if (BASE_UNLIKELY(n->len < sizeof *h + sizeof token))
        base_fatal("mpi: short cancel request from rank %d", n->src);
    memcpy(&token, (const char *)n->data + sizeof *h, sizeof token);
    mpii_match_t *m = mpii_match_of(h->ctx);
    mpii_link_t *b = &m->unexp[mpii_bucket(m, h->src, h->tag)];
    int ok = 0;
    for (mpii_link_t *e = b->next; e != b; e = e->next) {
        mpii_umsg_t *u = MPII_CONTAINER(e, mpii_umsg_t, bl);
        if (u->token == token && u->src_world == n->src && u->src == h->src && u->tag == h->tag) {
            mpii_unexp_unlink(m, u);
            if (u->kind == MPII_AM_EAGER)
                mpii_credit_return(n->src, u->size, 1);
            mpii_umsg_put(u);
            ok = 1;
            break;
        }
    }
    mpii_todo_add(n->src, ok ? MPII_AM_CANCEL_OK : MPII_AM_CANCEL_FAIL, n->imm);
}

/* ------------------------------------------------------------------ buffered mode */

/* A block: this header at a 16-byte aligned address, then the packed message. The
 * alignment wastes at most 15 bytes before the header, so a block never takes more than
 * MPI_BSEND_OVERHEAD bytes besides its message (MPI-4.0 3.6.1: a buffer of size + overhead
 * per message is enough). */
typedef struct mpii_bblk {
    struct mpii_bblk *next; /* in address order */
    size_t size;            /* bytes from this header to the end of the message */
} mpii_bblk_t;
_Static_assert(sizeof(mpii_bblk_t) + 15 <= MPI_BSEND_OVERHEAD, "bsend header");

static struct {
    char *base;
    size_t size;
    mpii_bblk_t *used; /* allocated blocks in address order */
    int nused;
} bsend;

static void *mpii_bsend_alloc(size_t n)
{
    size_t need = n + sizeof(mpii_bblk_t);
    char *end = bsend.base + bsend.size;
    char *at = bsend.base;
    mpii_bblk_t **pp = &bsend.used;
    for (;;) {
        char *lim = *pp ? (char *)*pp : end;
        char *h = (char *)BASE_ALIGN_UP((uintptr_t)at, 16);
        if (lim >= h && (size_t)(lim - h) >= need) {
            at = h;
            break;
        }
        if (!*pp)
            return NULL;
        at = (char *)*pp + (*pp)->size;
        pp = &(*pp)->next;
    }
    mpii_bblk_t *b = (mpii_bblk_t *)(void *)at;
    b->size = need;
    b->next = *pp;
    *pp = b;
    bsend.nused++;
    return b + 1;
}

static void mpii_bsend_release(void *p)
{
    mpii_bblk_t *b = (mpii_bblk_t *)p - 1;
    for (mpii_bblk_t **pp = &bsend.used; *pp; pp = &(*pp)->next)
        if (*pp == b) {
            *pp = b->next;
            bsend.nused--;
            return;
        }
}

static int mpii_bsend_go(mpii_req_t *r)
{
    uint64_t bytes = r->bytes;
    void *blk = bsend.base ? mpii_bsend_alloc(bytes) : NULL;
    if (!blk)
        return MPI_ERR_BUFFER;
    if (bytes)
        dt_pack(r->dt, r->count, r->buf, 0, (int64_t)bytes, blk);
    /* An internal send request from the packed copy; the user's request completes now. */
    mpii_req_t *s = mpii_req_alloc();
    if (!s) {
        mpii_bsend_release(blk);
        return MPI_ERR_NO_MEM;
    }
    s->kind = MPII_REQ_SEND;
    s->internal = 1;
    s->user_freed = 1;
    mpii_req_set_buf(s, blk, (int64_t)bytes, MPI_BYTE, dt_basic(DT_BYTE));
    s->peer = r->peer;
    s->peer_world = r->peer_world;
    s->tag = r->tag;
    s->ctx = r->ctx;
    s->myrank = r->myrank;
    s->comm = r->comm;
    s->mode = MPII_MODE_STD;
    s->named = !r->internal;
    int rc = mpii_send_go(s);
    if (bytes <= p2p.eager_max || rc) {
        mpii_bsend_release(blk); /* eager: locally complete, the block is free again */
        if (rc)
            mpii_req_free(s);
        else
            r->s_token = s->s_token; /* r cancels the eager message itself */
    } else {
        mpii_req_tail(s)->tmp = blk;
        s->tmp_bsend = 1;
        if (!r->internal) { /* MPI_Cancel of r cancels s */
            mpii_req_tail(r)->bsub = s;
            s->bowner = r;
        }
    }
    if (rc)
        return rc;
    r->st.fmpl_count = (MPI_Count)bytes;
    mpii_req_done(r);
    return MPI_SUCCESS;
}

static int mpii_bsend_idle(void *arg)
{
    (void)arg;
    return bsend.nused == 0;
}

static int mpii_buffer_attach(void *buffer, MPI_Count size, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (size < 0 || (!buffer && size > 0))
        return MPII_ERR(MPI_ERR_ARG, fname);
    if (bsend.base)
        return MPII_ERR(MPI_ERR_BUFFER, fname);
    bsend.base = buffer ? buffer : (char *)&bsend; /* size 0: attached, no room */
    bsend.size = (size_t)size;
    bsend.used = NULL;
    bsend.nused = 0;
    return MPI_SUCCESS;
}

int PMPI_Buffer_attach_c(void *buffer, MPI_Count size)
{
    return mpii_buffer_attach(buffer, size, "MPI_Buffer_attach_c");
}
MPII_WEAK(MPI_Buffer_attach_c, PMPI_Buffer_attach_c)

int PMPI_Buffer_attach(void *buffer, int size)
{
    return mpii_buffer_attach(buffer, size, "MPI_Buffer_attach");
}
MPII_WEAK(MPI_Buffer_attach, PMPI_Buffer_attach)

static int mpii_buffer_detach(void *buffer_addr, MPI_Count *size, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!buffer_addr || !size)
        return MPII_ERR(MPI_ERR_ARG, fname);
    if (!bsend.base)
        return MPII_ERR(MPI_ERR_BUFFER, fname);
    vnic_wait(mpii.vnic, mpii_bsend_idle, NULL, -1);
    void *b = bsend.base == (char *)&bsend ? NULL : bsend.base;
    memcpy(buffer_addr, &b, sizeof b);
    *size = (MPI_Count)bsend.size;
    bsend.base = NULL;
    bsend.size = 0;
    return MPI_SUCCESS;
}
int PMPI_Buffer_detach_c(void *buffer_addr, MPI_Count *size)
{
    return mpii_buffer_detach(buffer_addr, size, "MPI_Buffer_detach_c");
}
MPII_WEAK(MPI_Buffer_detach_c, PMPI_Buffer_detach_c)

int PMPI_Buffer_detach(void *buffer_addr, int *size)
{
    if (!size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Buffer_detach");
    MPI_Count n;
    int rc = mpii_buffer_detach(buffer_addr, &n, "MPI_Buffer_detach");
    if (rc == MPI_SUCCESS)
        *size = n > INT_MAX ? INT_MAX : (int)n;
    return rc;
}
MPII_WEAK(MPI_Buffer_detach, PMPI_Buffer_detach)

/* ------------------------------------------------------------------ init */

static int mpii_eager_max_set(long long v)
{
    if (v < 0 || (uint64_t)v > p2p.eager_init)
        return FMPL_ERR_ARG;
    p2p.eager_max = (size_t)v;
    return FMPL_SUCCESS;
}

int mpii_p2p_init(void)
{
    const vnic_info_t *vi = vnic_info(mpii.vnic);
    size_t am = vi->am_max - sizeof(mpii_hdr_t);
    long long e = base_env_int("FMPL_MPI_EAGER_MAX", (long long)am, 0, (long long)am,
                               "largest MPI message sent eagerly in active messages (bytes); "
                               "larger ones use rendezvous (the receiver reads the sender's "
                               "buffer, single copy)");
    p2p.eager_max = (size_t)e;
    p2p.eager_init = p2p.eager_max;
    /* A sender's choice alone (the receiver follows each message's kind): MPI_T may lower
     * it and raise it again up to its start value, which sized the pack buffer and the
     * receivers' payload buffers. */
    base_env_writable("FMPL_MPI_EAGER_MAX", mpii_eager_max_set, 0);
    /* Measured on the AMD EPYC guest (docs/performance.md, "Contiguous rendezvous sends
     * staged"): up to 16 KiB the two memcpys beat a CMA read (a system call that pins the
     * sender's pages), 2 ranks 1.7-2.1 against 3.0-3.7 us; above, the copies across cores
     * lose. Between two ranks bound to one CPU nothing crosses cores: at 4 ranks on 2 CPUs
     * staging 64 KiB blocks to the rank on the same CPU made MPI_Neighbor_alltoall 55-69 us
     * against 80-102 by CMA alone (staging every block: 41-46 us in half the jobs, 155-195
     * in the others). */
    p2p.stage_max = (size_t)base_env_int(
        "FMPL_MPI_STAGE_MAX", 16 << 10, 0, 1ll << 30,
        "largest contiguous MPI rendezvous message a sender copies into its shared heap for the "
        "receiver to copy out (two memcpys, no registration; the send is done once copied); "
        "larger ones are read from the sender's buffer (single copy)");
    p2p.stage_cpu_max = (size_t)base_env_int(
        "FMPL_MPI_STAGE_CPU_MAX", 256 << 10, 0, 1ll << 30,
        "FMPL_MPI_STAGE_MAX for a receiver bound to the one CPU this rank is bound to (ranks "
        "outnumbering CPUs): what it copies out is in that CPU's caches");
    p2p.packbuf = malloc(BASE_MAX(p2p.eager_max, (size_t)1));
    if (!p2p.packbuf)
        return MPI_ERR_NO_MEM;
    long long budget =
        base_env_int("FMPL_EAGER_BUDGET", 2ll << 20, 0, 1ll << 40,
                     "bytes of eager messages a receiver keeps for senders before it matches "
                     "them, shared out among the other ranks (at least 4 eager messages' worth "
                     "each); a sender beyond its share sends the envelope alone and the "
                     "receiver reads the payload once matched (seed 002)");
    int others = BASE_MAX(mpii.world_size - 1, 1);
    p2p.credit_max = BASE_MAX((uint64_t)budget / (uint64_t)others,
                              4 * ((uint64_t)p2p.eager_max + MPII_CREDIT_ENVELOPE));
    mpii_credit_grow(mpii.world_size);
    p2p.cls_size[0] = 64;
    p2p.cls_size[1] = 1024;
    p2p.cls_size[2] = BASE_MAX(p2p.eager_max, (size_t)1024);
    mpii_list_init(&p2p.getq);
    mpii_list_init(&p2p.pumpq);
    mpii_list_init(&p2p.todoq);
    mpii_list_init(&p2p.todo_free);
    mpii_list_init(&p2p.umsg_free);
    int rc = vnic_set_notify_handler(mpii.vnic, VNIC_CHAN_MPI_P2P, mpii_am_handler, NULL);
    if (!rc)
        rc = vnic_hook_add(mpii.vnic, mpii_hook, NULL, 0, &p2p.hook_id);
    /* No rank sends before every rank has its handler (a notification on a channel
     * without handler is dropped). */
    if (!rc)
        rc = vnic_fence(mpii.vnic);
    p2p.up = 1;
    return rc ? mpii_err_from_fmpl(rc) : MPI_SUCCESS;
}

static int mpii_sends_idle(void *arg)
{
    (void)arg;
    return mpii_sends_pending == 0 && mpii_list_empty(&p2p.todoq);
}

void mpii_p2p_finalize(void)
{
    if (!p2p.up)
        return;
    /* A barrier first: a rank may still ask another to cancel a send (MPI_Cancel then
     * MPI_Request_free), and that one must still be there to answer. */
    mpii_comm_t *world = mpii_comm_get(MPI_COMM_WORLD);
    if (world && world->size > 1) {
        uint64_t w = 0;
        mpii_lib_allreduce_band(world, &w, 1);
    }
    vnic_wait(mpii.vnic, mpii_sends_idle, NULL, -1);
    vnic_hook_remove(mpii.vnic, p2p.hook_id);
    vnic_set_notify_handler(mpii.vnic, VNIC_CHAN_MPI_P2P, NULL, NULL);
    for (uint32_t i = 0; i < p2p.nmatches; i++) {
        mpii_match_t *m = p2p.matches[i];
        if (!m)
            continue;
        while (!mpii_list_empty(&m->uall)) {
            mpii_umsg_t *u = MPII_CONTAINER(m->uall.next, mpii_umsg_t, gl);
            mpii_unexp_unlink(m, u);
            if (u->data)
                mpii_buf_put(u->cls, u->data);
            free(u);
        }
        free(m->posted);
        free(m->unexp);
        free(m);
    }
    free(p2p.matches);
    while (!mpii_list_empty(&p2p.umsg_free)) {
        mpii_link_t *e = p2p.umsg_free.next;
        mpii_list_del(e);
        mpii_umsg_t *u = MPII_CONTAINER(e, mpii_umsg_t, bl);
        free(u);
    }
    while (!mpii_list_empty(&p2p.todo_free)) {
        mpii_link_t *e = p2p.todo_free.next;
        mpii_list_del(e);
        free(MPII_CONTAINER(e, mpii_todo_t, link));
    }
    for (int c = 0; c < NCLS; c++)
        while (p2p.cls_free[c]) {
            void *b = p2p.cls_free[c];
            memcpy(&p2p.cls_free[c], b, sizeof(void *));
            free(b);
        }
    free(p2p.packbuf);
    free(p2p.credit);
    p2p.credit = NULL;
    p2p.ncredit = 0;
    mpii_defer_finalize();
    mpii_tmp_finalize();
    mpii_req_finalize();
    memset(&p2p, 0, sizeof p2p);
}

int mpii_progress(void)
{
    return vnic_progress(mpii.vnic);
}

/* ------------------------------------------------------------------ blocking calls */

static int mpii_send_blocking(const void *buf, int64_t count, MPI_Datatype type, int dest, int tag,
                              MPI_Comm comm, int mode, const char *fname)
{
    MPII_CHECK_INIT(fname);
    /* Fast path: a standard-mode send of a predefined type that goes eagerly is
     * locally complete once the message is in the target's inbox: no request. Every
     * check of mpii_args is made here too (anything unusual takes the general path). */
    mpii_comm_t *fc = mpii_comm_get(comm);
    if (BASE_LIKELY(fc && mode == MPII_MODE_STD && FMPL_MPI_DT_IS_PREDEF(type) && count >= 0 &&
                    (uint64_t)count <= p2p.eager_max && tag >= 0 && tag <= MPII_TAG_UB &&
                    !fc->rgroup && dest >= 0 && dest < fc->group->size && mpii_type_comm_dt(type) &&
                    (buf || !count))) {
        uint64_t bytes = (uint64_t)count * (uint64_t)FMPL_MPI_DT_SIZE(type);
        int world = fc->group->world[dest];
        if (BASE_LIKELY(bytes <= p2p.eager_max && (count <= 1 || FMPL_MPI_DT_PAD(type) == 0))) {
            mpii_hdr_t h = {.ctx = fc->ctx, .src = fc->rank, .tag = tag, .kind = MPII_AM_EAGER};
            if (BASE_UNLIKELY(mpii_defer_count(world)))
                mpii_defer_drain(world); /* after the deferred sends to it */
            int rc = mpii_am(world, &h, sizeof h, buf, bytes, 0);
            if (BASE_UNLIKELY(rc))
                return MPII_ERR_COMM(comm, rc, fname);
            mpii_credit_take(world, bytes);
            mpii_stats_eager(bytes);
            return MPI_SUCCESS;
        }
    }
    mpii_req_t r;
    base_zero(&r, sizeof r);
    mpii_comm_t *c;
    int rc = mpii_args(&r, buf, count, type, dest, tag, comm, 0, &c);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, buf, count, type, dest, tag, comm, 0, fname);
    if (dest == MPI_PROC_NULL)
        return MPI_SUCCESS;
    r.mode = (uint8_t)mode;
    r.internal = 1;
    r.stage_ring = mode != MPII_MODE_BUF; /* this call waits for the FIN: a ring may do */
    rc = mode == MPII_MODE_BUF ? mpii_bsend_go(&r) : mpii_send_go(&r);
    if (BASE_UNLIKELY(rc))
        return MPII_ERR_COMM(comm, rc, fname);
    mpii_req_wait(&r);
    return MPI_SUCCESS;
}

int PMPI_Send_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_STD, "MPI_Send_c");
}
MPII_WEAK(MPI_Send_c, PMPI_Send_c)

int PMPI_Send(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_STD, "MPI_Send");
}
MPII_WEAK(MPI_Send, PMPI_Send)

int PMPI_Rsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_STD, "MPI_Rsend_c");
}
MPII_WEAK(MPI_Rsend_c, PMPI_Rsend_c)

int PMPI_Rsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_STD, "MPI_Rsend");
}
MPII_WEAK(MPI_Rsend, PMPI_Rsend)

int PMPI_Ssend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_SYNC, "MPI_Ssend_c");
}
MPII_WEAK(MPI_Ssend_c, PMPI_Ssend_c)

int PMPI_Ssend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_SYNC, "MPI_Ssend");
}
MPII_WEAK(MPI_Ssend, PMPI_Ssend)

int PMPI_Bsend_c(const void *buf, MPI_Count count, MPI_Datatype datatype, int dest, int tag,
                 MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_BUF, "MPI_Bsend_c");
}
MPII_WEAK(MPI_Bsend_c, PMPI_Bsend_c)

int PMPI_Bsend(const void *buf, int count, MPI_Datatype datatype, int dest, int tag, MPI_Comm comm)
{
    return mpii_send_blocking(buf, count, datatype, dest, tag, comm, MPII_MODE_BUF, "MPI_Bsend");
}
MPII_WEAK(MPI_Bsend, PMPI_Bsend)

static inline void mpii_status_out(MPI_Status *status, const MPI_Status *st)
{
    if (status != MPI_STATUS_IGNORE && status != MPI_STATUSES_IGNORE) {
        status->MPI_SOURCE = st->MPI_SOURCE;
        status->MPI_TAG = st->MPI_TAG;
        status->fmpl_cancelled = st->fmpl_cancelled;
        status->fmpl_count = st->fmpl_count;
    }
}

static int mpii_recv_blocking(void *buf, int64_t count, MPI_Datatype type, int source, int tag,
                              MPI_Comm comm, MPI_Status *status, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_req_t r;
    base_zero(&r, sizeof r);
    mpii_comm_t *c;
    int rc = mpii_args(&r, buf, count, type, source, tag, comm, 1, &c);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, buf, count, type, source, tag, comm, 1, fname);
    r.internal = 1;
    if (source == MPI_PROC_NULL) {
        mpii_proc_null_done(&r);
    } else {
        mpii_recv_go(&r);
        mpii_req_wait(&r);
    }
    mpii_status_out(status, &r.st);
    return r.err ? MPII_ERR_COMM(comm, r.err, fname) : MPI_SUCCESS;
}

int PMPI_Recv_c(void *buf, MPI_Count count, MPI_Datatype datatype, int source, int tag,
                MPI_Comm comm, MPI_Status *status)
{
    return mpii_recv_blocking(buf, count, datatype, source, tag, comm, status, "MPI_Recv_c");
}
MPII_WEAK(MPI_Recv_c, PMPI_Recv_c)

int PMPI_Recv(void *buf, int count, MPI_Datatype datatype, int source, int tag, MPI_Comm comm,
              MPI_Status *status)
{
    return mpii_recv_blocking(buf, count, datatype, source, tag, comm, status, "MPI_Recv");
}
MPII_WEAK(MPI_Recv, PMPI_Recv)

/* ------------------------------------------------------------------ nonblocking */

/* Creates a request (persistent or started at once). Inlined into MPI_Isend and
 * MPI_Irecv, whose constant arguments then drop the other forms' branches: a stream of
 * small nonblocking messages is bound by the stores and calls of each one
 * (docs/performance.md, "Small nonblocking streams"); the other forms call
 * mpii_inb_call. */
static BASE_INLINE int mpii_inb(const void *buf, int64_t count, MPI_Datatype type, int peer,
                                int tag, MPI_Comm comm, int recv, int mode, int persistent,
                                MPI_Request *request, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (BASE_UNLIKELY(!request))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    mpii_req_t *r = mpii_req_take();
    if (!r)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    mpii_comm_t *c;
    int rc = mpii_args_inline(r, buf, count, type, peer, tag, comm, recv, &c);
    if (BASE_UNLIKELY(rc)) {
        mpii_req_free(r);
        return mpii_p2p_args_fail(rc, buf, count, type, peer, tag, comm, recv, fname);
    }
    r->mode = (uint8_t)mode;
    r->persistent = (uint8_t)persistent;
    r->may_defer = !recv; /* MPI_Isend returns at once, room or not */
    if (!FMPL_MPI_DT_IS_PREDEF(type))
        dt_retain(r->dt);
    c->refs++;
    r->cref = c;
    rc = mpii_req_handle(r, request);
    if (rc)
        return MPII_ERR_COMM(comm, rc, fname);
    if (persistent) {
        r->done = 1; /* inactive */
        return MPI_SUCCESS;
    }
    r->active = 1;
    rc = mpii_p2p_go(r);
    if (BASE_UNLIKELY(rc)) {
        r->active = 0;
        PMPI_Request_free(request);
        return MPII_ERR_COMM(comm, rc, fname);
    }
    return MPI_SUCCESS;
}

static BASE_NOINLINE int mpii_inb_call(const void *buf, int64_t count, MPI_Datatype type, int peer,
                                       int tag, MPI_Comm comm, int recv, int mode, int persistent,
                                       MPI_Request *request, const char *fname)
{
    return mpii_inb(buf, count, type, peer, tag, comm, recv, mode, persistent, request, fname);
}

#define MPII_INB_WITH(FN, NAME, CNT, CONSTQ, RECV, MODE, PERS)                                     \
    int PMPI_##NAME(CONSTQ void *buf, CNT count, MPI_Datatype datatype, int peer, int tag,         \
                    MPI_Comm comm, MPI_Request *request)                                           \
    {                                                                                              \
        return FN(buf, count, datatype, peer, tag, comm, RECV, MODE, PERS, request, "MPI_" #NAME); \
    }                                                                                              \
    MPII_WEAK(MPI_##NAME, PMPI_##NAME)
#define MPII_INB(...) MPII_INB_WITH(mpii_inb_call, __VA_ARGS__)

/* Nonblocking and persistent forms (contract: MPI-4.0 3.7 and 3.9). */
MPII_INB_WITH(mpii_inb, Isend, int, const, 0, MPII_MODE_STD, 0)
MPII_INB(Isend_c, MPI_Count, const, 0, MPII_MODE_STD, 0)
MPII_INB(Issend, int, const, 0, MPII_MODE_SYNC, 0)
MPII_INB(Issend_c, MPI_Count, const, 0, MPII_MODE_SYNC, 0)
MPII_INB(Irsend, int, const, 0, MPII_MODE_STD, 0)
MPII_INB(Irsend_c, MPI_Count, const, 0, MPII_MODE_STD, 0)
MPII_INB(Ibsend, int, const, 0, MPII_MODE_BUF, 0)
MPII_INB(Ibsend_c, MPI_Count, const, 0, MPII_MODE_BUF, 0)
MPII_INB_WITH(mpii_inb, Irecv, int, , 1, MPII_MODE_STD, 0)
MPII_INB(Irecv_c, MPI_Count, , 1, MPII_MODE_STD, 0)
MPII_INB(Send_init, int, const, 0, MPII_MODE_STD, 1)
MPII_INB(Send_init_c, MPI_Count, const, 0, MPII_MODE_STD, 1)
MPII_INB(Ssend_init, int, const, 0, MPII_MODE_SYNC, 1)
MPII_INB(Ssend_init_c, MPI_Count, const, 0, MPII_MODE_SYNC, 1)
MPII_INB(Rsend_init, int, const, 0, MPII_MODE_STD, 1)
MPII_INB(Rsend_init_c, MPI_Count, const, 0, MPII_MODE_STD, 1)
MPII_INB(Bsend_init, int, const, 0, MPII_MODE_BUF, 1)
MPII_INB(Bsend_init_c, MPI_Count, const, 0, MPII_MODE_BUF, 1)
MPII_INB(Recv_init, int, , 1, MPII_MODE_STD, 1)
MPII_INB(Recv_init_c, MPI_Count, , 1, MPII_MODE_STD, 1)

/* ------------------------------------------------------------------ sendrecv */

static int mpii_sendrecv(const void *sbuf, int64_t scount, MPI_Datatype stype, int dest, int stag,
                         void *rbuf, int64_t rcount, MPI_Datatype rtype, int source, int rtag,
                         MPI_Comm comm, MPI_Status *status, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_req_t s, r;
    memset(&s, 0, sizeof s);
    base_zero(&r, sizeof r);
    mpii_comm_t *c;
    int rc = mpii_args(&r, rbuf, rcount, rtype, source, rtag, comm, 1, &c);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, rbuf, rcount, rtype, source, rtag, comm, 1, fname);
    rc = mpii_args(&s, sbuf, scount, stype, dest, stag, comm, 0, &c);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, sbuf, scount, stype, dest, stag, comm, 0, fname);
    r.internal = s.internal = 1;
    mpii_p2p_start(&r);
    rc = mpii_p2p_start(&s);
    if (rc) {
        mpii_p2p_cancel(&r);
        mpii_req_wait(&r);
        return MPII_ERR_COMM(comm, rc, fname);
    }
    mpii_req_wait(&s);
    mpii_req_wait(&r);
    mpii_status_out(status, &r.st);
    return r.err ? MPII_ERR_COMM(comm, r.err, fname) : MPI_SUCCESS;
}

int PMPI_Sendrecv_c(const void *sendbuf, MPI_Count sendcount, MPI_Datatype sendtype, int dest,
                    int sendtag, void *recvbuf, MPI_Count recvcount, MPI_Datatype recvtype,
                    int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mpii_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, "MPI_Sendrecv_c");
}
MPII_WEAK(MPI_Sendrecv_c, PMPI_Sendrecv_c)

int PMPI_Sendrecv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, int dest, int sendtag,
                  void *recvbuf, int recvcount, MPI_Datatype recvtype, int source, int recvtag,
                  MPI_Comm comm, MPI_Status *status)
{
    return mpii_sendrecv(sendbuf, sendcount, sendtype, dest, sendtag, recvbuf, recvcount, recvtype,
                         source, recvtag, comm, status, "MPI_Sendrecv");
}
MPII_WEAK(MPI_Sendrecv, PMPI_Sendrecv)

static int mpii_sendrecv_replace(void *buf, int64_t count, MPI_Datatype type, int dest, int stag,
                                 int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
    const char *fname = "MPI_Sendrecv_replace";
    MPII_CHECK_INIT(fname);
    mpii_req_t s;
    memset(&s, 0, sizeof s);
    mpii_comm_t *c;
    int rc = mpii_args(&s, buf, count, type, dest, stag, comm, 0, &c);
    if (BASE_UNLIKELY(rc))
        return mpii_p2p_args_fail(rc, buf, count, type, dest, stag, comm, 0, fname);
    /* Pack the outgoing message, then send it from the copy while receiving in place. */
    uint64_t bytes = (uint64_t)count * (uint64_t)dt_size(s.dt);
    void *copy = malloc(BASE_MAX(bytes, (uint64_t)1));
    if (!copy)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    if (bytes)
        dt_pack(s.dt, count, buf, 0, (int64_t)bytes, copy);
    rc = mpii_sendrecv(copy, (int64_t)bytes, MPI_BYTE, dest, stag, buf, count, type, source, rtag,
                       comm, status, fname);
    free(copy);
    return rc;
}

int PMPI_Sendrecv_replace_c(void *buf, MPI_Count count, MPI_Datatype datatype, int dest,
                            int sendtag, int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mpii_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                 status);
}
MPII_WEAK(MPI_Sendrecv_replace_c, PMPI_Sendrecv_replace_c)

int PMPI_Sendrecv_replace(void *buf, int count, MPI_Datatype datatype, int dest, int sendtag,
                          int source, int recvtag, MPI_Comm comm, MPI_Status *status)
{
    return mpii_sendrecv_replace(buf, count, datatype, dest, sendtag, source, recvtag, comm,
                                 status);
}
MPII_WEAK(MPI_Sendrecv_replace, PMPI_Sendrecv_replace)

/* ------------------------------------------------------------------ probe */

typedef struct mpii_probe {
    mpii_match_t *m;
    int src, tag;
    mpii_umsg_t *u;
} mpii_probe_t;

static int mpii_probe_ready(void *arg)
{
    mpii_probe_t *p = arg;
    p->u = mpii_unexp_find(p->m, p->src, p->tag);
    return p->u != NULL;
}

static void mpii_probe_status(MPI_Status *status, const mpii_umsg_t *u)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    status->MPI_SOURCE = u->src;
    status->MPI_TAG = u->tag;
    status->fmpl_cancelled = 0;
    status->fmpl_count = (MPI_Count)u->size;
}

static void mpii_proc_null_status(MPI_Status *status)
{
    if (status == MPI_STATUS_IGNORE)
        return;
    int e = status->MPI_ERROR; /* a probe leaves MPI_ERROR alone */
    mpii_status_empty(status);
    status->MPI_ERROR = e;
    status->MPI_SOURCE = MPI_PROC_NULL;
    status->MPI_TAG = MPI_ANY_TAG;
}

/* Probes (blocking or not); with message: takes the message out (Mprobe). */
static int mpii_probe(int source, int tag, MPI_Comm comm, int *flag, int want_msg,
                      MPI_Message *message, MPI_Status *status, int block, const char *fname)
{
    MPII_CHECK_INIT(fname);
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR(MPI_ERR_COMM, fname);
    int n = c->rgroup ? c->rgroup->size : c->size;
    if (source >= n || (source < 0 && source != MPI_ANY_SOURCE && source != MPI_PROC_NULL))
        return MPII_ERR_COMM(comm, MPI_ERR_RANK, fname);
    if ((tag < 0 && tag != MPI_ANY_TAG) || tag > MPII_TAG_UB)
        return MPII_ERR_COMM(comm, MPI_ERR_TAG, fname);
    if ((!block && !flag) || (want_msg && !message))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    if (source == MPI_PROC_NULL) {
        if (flag)
            *flag = 1;
        if (want_msg)
            *message = MPI_MESSAGE_NO_PROC;
        mpii_proc_null_status(status);
        return MPI_SUCCESS;
    }
    mpii_probe_t p = {mpii_comm_match(c), source, tag, NULL};
    if (block) {
        vnic_wait(mpii.vnic, mpii_probe_ready, &p, -1);
    } else {
        mpii_progress();
        mpii_probe_ready(&p);
        *flag = p.u != NULL;
        if (!p.u) {
            if (want_msg)
                *message = MPI_MESSAGE_NULL;
            return MPI_SUCCESS;
        }
    }
    mpii_probe_status(status, p.u);
    if (want_msg) {
        mpii_unexp_unlink(p.m, p.u);
        p.u->comm = comm;
        int h = mpii_handle_new(FMPL_MPI_KIND_MESSAGE, p.u);
        if (h == MPI_MESSAGE_NULL) {
            mpii_umsg_put(p.u);
            return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
        }
        *message = h;
    }
    return MPI_SUCCESS;
}

int PMPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
    return mpii_probe(source, tag, comm, flag, 0, NULL, status, 0, "MPI_Iprobe");
}
MPII_WEAK(MPI_Iprobe, PMPI_Iprobe)

int PMPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
    return mpii_probe(source, tag, comm, NULL, 0, NULL, status, 1, "MPI_Probe");
}
MPII_WEAK(MPI_Probe, PMPI_Probe)

int PMPI_Improbe(int source, int tag, MPI_Comm comm, int *flag, MPI_Message *message,
                 MPI_Status *status)
{
    return mpii_probe(source, tag, comm, flag, 1, message, status, 0, "MPI_Improbe");
}
MPII_WEAK(MPI_Improbe, PMPI_Improbe)

int PMPI_Mprobe(int source, int tag, MPI_Comm comm, MPI_Message *message, MPI_Status *status)
{
    return mpii_probe(source, tag, comm, NULL, 1, message, status, 1, "MPI_Mprobe");
}
MPII_WEAK(MPI_Mprobe, PMPI_Mprobe)

/* Receives a matched message into a fresh request r (completed on return). */
static int mpii_mrecv(void *buf, int64_t count, MPI_Datatype type, MPI_Message *message,
                      mpii_req_t *r, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!message)
        return MPII_ERR(MPI_ERR_ARG, fname);
    if (*message == MPI_MESSAGE_NO_PROC) {
        r->kind = MPII_REQ_RECV;
        r->comm = MPI_COMM_WORLD;
        mpii_proc_null_done(r);
        *message = MPI_MESSAGE_NULL;
        return MPI_SUCCESS;
    }
    mpii_umsg_t *u = mpii_handle_get(FMPL_MPI_KIND_MESSAGE, *message);
    if (!u)
        return MPII_ERR(MPI_ERR_REQUEST, fname);
    if (count < 0)
        return MPII_ERR_COMM(u->comm, MPI_ERR_COUNT, fname);
    dt_t *dt = mpii_type_comm_dt(type);
    if (!dt)
        return MPII_ERR_COMM(u->comm, MPI_ERR_TYPE, fname);
    r->kind = MPII_REQ_RECV;
    mpii_req_set_buf(r, buf, count, type, dt);
    r->comm = u->comm;
    r->peer = u->src;
    r->tag = u->tag;
    mpii_handle_del(FMPL_MPI_KIND_MESSAGE, *message);
    *message = MPI_MESSAGE_NULL;
    mpii_recv_unexp(r, u);
    return MPI_SUCCESS;
}

static int mpii_mrecv_blocking(void *buf, MPI_Count count, MPI_Datatype datatype,
                               MPI_Message *message, MPI_Status *status, const char *fname)
{
    mpii_req_t r;
    base_zero(&r, sizeof r);
    r.internal = 1;
    int rc = mpii_mrecv(buf, count, datatype, message, &r, fname);
    if (rc)
        return rc;
    mpii_status_out(status, &r.st);
    return r.err ? MPII_ERR_COMM(r.comm, r.err, fname) : MPI_SUCCESS;
}

int PMPI_Mrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                 MPI_Status *status)
{
    return mpii_mrecv_blocking(buf, count, datatype, message, status, "MPI_Mrecv_c");
}
MPII_WEAK(MPI_Mrecv_c, PMPI_Mrecv_c)

int PMPI_Mrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
               MPI_Status *status)
{
    return mpii_mrecv_blocking(buf, count, datatype, message, status, "MPI_Mrecv");
}
MPII_WEAK(MPI_Mrecv, PMPI_Mrecv)

static int mpii_imrecv(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                       MPI_Request *request, const char *fname)
{
    if (!request)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_req_t *r = mpii_req_alloc();
    if (!r)
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    r->active = 1;
    int rc = mpii_mrecv(buf, count, datatype, message, r, fname);
    if (rc) {
        mpii_req_free(r);
        return rc;
    }
    r->dt = NULL; /* complete: nothing to keep alive */
    rc = mpii_req_handle(r, request);
    return rc ? MPII_ERR(rc, fname) : MPI_SUCCESS;
}

int PMPI_Imrecv_c(void *buf, MPI_Count count, MPI_Datatype datatype, MPI_Message *message,
                  MPI_Request *request)
{
    return mpii_imrecv(buf, count, datatype, message, request, "MPI_Imrecv_c");
}
MPII_WEAK(MPI_Imrecv_c, PMPI_Imrecv_c)

int PMPI_Imrecv(void *buf, int count, MPI_Datatype datatype, MPI_Message *message,
                MPI_Request *request)
{
    return mpii_imrecv(buf, count, datatype, message, request, "MPI_Imrecv");
}
MPII_WEAK(MPI_Imrecv, PMPI_Imrecv)

/* ------------------------------------------------------------------ library traffic */

int mpii_lib_send(mpii_comm_t *c, const void *buf, size_t len, int dst, int tag)
{
    mpii_req_t r;
    base_zero(&r, sizeof r);
    r.kind = MPII_REQ_SEND;
    r.internal = 1;
    mpii_req_set_buf(&r, buf, (int64_t)len, MPI_BYTE, dt_basic(DT_BYTE));
    r.peer = dst;
    r.tag = tag;
    r.comm = c->handle;
    r.ctx = c->ctx + 1;
    r.myrank = c->rank;
    r.peer_world = mpii_comm_peer_world(c, dst);
    int rc = mpii_send_go(&r);
    if (rc)
        return rc;
    mpii_req_wait(&r);
    return MPI_SUCCESS;
}

int mpii_lib_recv(mpii_comm_t *c, void *buf, size_t len, int src, int tag)
{
    mpii_req_t r;
    base_zero(&r, sizeof r);
    r.kind = MPII_REQ_RECV;
    r.internal = 1;
    mpii_req_set_buf(&r, buf, (int64_t)len, MPI_BYTE, dt_basic(DT_BYTE));
    r.peer = src;
    r.tag = tag;
    r.comm = c->handle;
    r.ctx = c->ctx + 1;
    r.m = mpii_match_of(c->ctx + 1);
    mpii_recv_go(&r);
    mpii_req_wait(&r);
    return r.err;
}

/* Fills an internal request on c's library context (the caller owns r). */
static void mpii_lib_req(mpii_req_t *r, mpii_comm_t *c, const void *buf, int64_t count,
                         MPI_Datatype type, dt_t *dt, int peer, int tag, int kind)
{
    base_zero(r, sizeof *r);
    r->kind = (uint8_t)kind;
    r->internal = 1;
    mpii_req_set_buf(r, buf, count, type, dt);
    r->peer = peer;
    r->tag = tag;
    r->comm = c->handle;
    r->ctx = c->ctx + 1;
    r->myrank = c->rank;
    r->peer_world = peer >= 0 ? mpii_comm_peer_world(c, peer) : -1;
    if (kind == MPII_REQ_RECV)
        r->m = mpii_match_of(c->ctx + 1);
}

/* Contract: p2p_impl.h (library traffic). */
int mpii_lib_isend_dt(mpii_comm_t *c, const void *buf, int64_t count, MPI_Datatype type, dt_t *dt,
                      int dst, int tag, mpii_req_t *r)
{
    mpii_lib_req(r, c, buf, count, type, dt, dst, tag, MPII_REQ_SEND);
    if (dst == MPI_PROC_NULL || !r->dt) {
        r->done = 1;
        r->err = r->dt ? MPI_SUCCESS : MPI_ERR_TYPE;
        return r->err;
    }
    int rc = mpii_send_go(r);
    if (rc) {
        r->done = 1;
        r->err = rc;
    }
    return rc;
}

/* Contract: p2p_impl.h (library traffic). */
int mpii_lib_irecv_dt(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, dt_t *dt,
                      int src, int tag, mpii_req_t *r)
{
    mpii_lib_req(r, c, buf, count, type, dt, src, tag, MPII_REQ_RECV);
    if (src == MPI_PROC_NULL || !r->dt) {
        r->done = 1;
        r->err = r->dt ? MPI_SUCCESS : MPI_ERR_TYPE;
        return r->err;
    }
    return mpii_recv_go(r);
}

/* Contract: p2p_impl.h (library traffic). */
int mpii_lib_isend(mpii_comm_t *c, const void *buf, int64_t count, MPI_Datatype type, int dst,
                   int tag, mpii_req_t *r)
{
    return mpii_lib_isend_dt(c, buf, count, type, mpii_type_get(type), dst, tag, r);
}

/* Contract: p2p_impl.h (library traffic). */
int mpii_lib_irecv(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, int src, int tag,
                   mpii_req_t *r)
{
    return mpii_lib_irecv_dt(c, buf, count, type, mpii_type_get(type), src, tag, r);
}

/* Contract: p2p_impl.h (library traffic). */
int mpii_lib_waitall(mpii_req_t *rs, int n)
{
    int err = MPI_SUCCESS;
    for (int i = 0; i < n; i++) {
        mpii_req_wait(&rs[i]);
        if (err == MPI_SUCCESS && rs[i].err != MPI_SUCCESS)
            err = rs[i].err;
    }
    return err;
}
