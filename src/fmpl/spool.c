/* spool.c — buffered mode by timeout (seed 000, 3.2.1): fmpl_sendbuf_set/check.
 *
 * A send that waited timeout_ms for its receive header is copied into the spool and
 * completes. The spool is a first-fit allocator of 64-byte-aligned blocks inside the
 * user's buffer; each block starts with a one-line descriptor (fmpli_spool_blk_t) and
 * holds one message. Spooled messages form a list in send order; a push walks it and
 * delivers each message whose header has arrived, straight from the spool into the
 * receive buffer. Messages on the same (peer, mai) keep their order: once one of them
 * finds no header in a pass, the later ones are skipped in that pass.
 *
 * Pushes run inside every progress of the library (fmpli_progress_sends, also called
 * by the handler of arriving headers, so even collectives push the spool). */
#include <string.h>

#include "fmpl/fmpl_impl.h"

#define FMPLI_SPOOL_HDR sizeof(fmpli_spool_blk_t)

/* First fit, merging free neighbours on the way; NULL when nothing fits. */
static fmpli_spool_blk_t *fmpli_spool_alloc(size_t size)
{
    fmpli_spool_t *sp = &fmpli.spool;
    if (size > sp->len)
        return NULL;
    size_t need = FMPLI_SPOOL_HDR + BASE_ALIGN_UP(size, BASE_CACHE_LINE);
    char *end = sp->base + sp->len;
    for (char *q = sp->base; q < end;) {
        fmpli_spool_blk_t *b = (fmpli_spool_blk_t *)q;
        if (!b->used) {
            while (q + b->bsize < end) {
                fmpli_spool_blk_t *next = (fmpli_spool_blk_t *)(q + b->bsize);
                if (next->used)
                    break;
                b->bsize += next->bsize;
            }
            if (b->bsize >= need) {
                if (b->bsize - need >= FMPLI_SPOOL_HDR) {
                    fmpli_spool_blk_t *rest = (fmpli_spool_blk_t *)(q + need);
                    rest->bsize = b->bsize - need;
                    rest->used = 0;
                    b->bsize = need;
                }
                b->used = 1;
                return b;
            }
        }
        q += b->bsize;
    }
    return NULL;
}

int fmpli_spool_add(fmpli_peer_t *p, uint32_t mai, const void *buf, size_t size,
                    const fmpli_lay_t *lay)
{
    fmpli_spool_t *sp = &fmpli.spool;
    if (!sp->base)
        return FMPL_ERR_SPOOL;
    fmpli_spool_blk_t *b = fmpli_spool_alloc(size);
    if (!b) { /* deliveries that are due may free room */
        fmpli_progress_sends();
        b = fmpli_spool_alloc(size);
        if (!b)
            return FMPL_ERR_SPOOL;
    }
    b->mai = mai;
    b->peer = p;
    b->size = size;
    b->next = NULL;
    if (lay)
        fmpli_lay_gather(b + 1, buf, lay, size);
    else if (size)
        memcpy(b + 1, buf, size);
    if (sp->tail)
        sp->tail->next = b;
    else
        sp->head = b;
    sp->tail = b;
    sp->npending++;
    p->send[mai].spooled++;
    /* The header may have arrived since the send last looked. */
    fmpli_progress_sends();
    return FMPL_SUCCESS;
}

int fmpli_spool_push(void)
{
    fmpli_spool_t *sp = &fmpli.spool;
    uint32_t pass = ++sp->pass;
    int n = 0;
    fmpli_spool_blk_t **link = &sp->head, *prev = NULL;
    while (*link) {
        fmpli_spool_blk_t *b = *link;
        fmpli_sendent_t *s = &b->peer->send[b->mai];
        fmpli_hdr_t h;
        if (s->spool_pass != pass && fmpli_match_take(b->peer, b->mai, &h)) {
            *link = b->next;
            if (sp->tail == b)
                sp->tail = prev;
            int rc = fmpli_deliver(b->peer, b->mai, &h, b + 1, b->size, NULL);
            if (rc != FMPL_SUCCESS && rc != FMPL_ERR_TRUNCATE)
                base_log("fmpl: spooled send to rank %d (mai %u) failed: %s", b->peer->rank, b->mai,
                         base_strerror(rc));
            s->spooled--;
            sp->npending--;
            sp->delivered++;
            b->used = 0;
            n++;
        } else {
            s->spool_pass = pass; /* later messages on this (peer, mai) wait their turn */
            prev = b;
            link = &b->next;
        }
    }
    return n;
}

void fmpli_spool_forget_peer(const fmpli_peer_t *p)
{
    fmpli_spool_t *sp = &fmpli.spool;
    fmpli_spool_blk_t **link = &sp->head, *prev = NULL;
    while (*link) {
        fmpli_spool_blk_t *b = *link;
        if (b->peer == p) {
            *link = b->next;
            if (sp->tail == b)
                sp->tail = prev;
            sp->npending--;
            b->used = 0;
        } else {
            prev = b;
            link = &b->next;
        }
    }
}

static int fmpli_spool_empty(void *arg)
{
    (void)arg;
    return fmpli.spool.npending == 0;
}

int fmpl_sendbuf_set(void *buf, size_t size, int timeout_ms)
{
    FMPLI_CHECK_INIT();
    if (timeout_ms < 0 && timeout_ms != FMPL_TIMEOUT_INFINITE)
        return FMPL_ERR_ARG;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    char *base = NULL;
    size_t len = 0;
    if (buf && size) {
        uintptr_t a = BASE_ALIGN_UP((uintptr_t)buf, BASE_CACHE_LINE);
        size_t lost = (size_t)(a - (uintptr_t)buf);
        if (size <= lost || size - lost < 2 * FMPLI_SPOOL_HDR)
            return FMPL_ERR_BUFFER; /* too small to hold even an empty message */
        base = (char *)a;
        len = (size - lost) & ~(size_t)(BASE_CACHE_LINE - 1);
    }
    /* The old spool's messages reach their receivers before it is given back. */
    int rc = fmpli_wait(fmpli_spool_empty, NULL, -1);
    if (rc != FMPL_SUCCESS)
        return rc;
    fmpli_spool_t *sp = &fmpli.spool;
    sp->base = base;
    sp->len = len;
    sp->user_buf = base ? buf : NULL;
    sp->timeout_ms = timeout_ms;
    sp->head = sp->tail = NULL;
    if (base) {
        fmpli_spool_blk_t *b = (fmpli_spool_blk_t *)base;
        b->bsize = len;
        b->used = 0;
    }
    return FMPL_SUCCESS;
}

int fmpl_sendbuf_check(int *nsent, int *npending)
{
    FMPLI_CHECK_INIT();
    vnic_progress(fmpli.vnic);
    fmpli_progress_sends();
    fmpli_spool_t *sp = &fmpli.spool;
    uint64_t sent = sp->delivered - sp->delivered_seen;
    sp->delivered_seen = sp->delivered;
    if (nsent)
        *nsent = sent > INT32_MAX ? INT32_MAX : (int)sent;
    if (npending)
        *npending = (int)sp->npending;
    return FMPL_SUCCESS;
}
