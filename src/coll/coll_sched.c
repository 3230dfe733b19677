/* coll_sched.c — the schedule engine (contract: coll.h, "schedules"): steps kept in
 * one array, rounds as end indices into it, transfer requests in one block sized for
 * the largest round, and a list of the schedules the progress hook advances. */
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"

/* STEP_UNTIL (coll_sched_until) counts as a transfer: it has a request slot, whose first
 * int names its step while it is pending (busy 2). */
enum { STEP_SEND = 1, STEP_RECV, STEP_CALL, STEP_UNTIL };

typedef struct coll_step {
    int kind;
    int peer;
    uint64_t seq; /* the transport's reservation for this run (ops->reserve) */
    union {
        struct {
            void *buf;
            int64_t count;
            uintptr_t type;
            void *ctx; /* the transport context of this transfer */
        } x;
        struct {
            coll_step_fn fn;
            uint64_t args[COLL_STEP_ARGS / 8];
        } c;
    } u;
} coll_step_t;

struct coll_sched {
    vnic_t *v;
    const coll_sched_ops_t *ops;
    void *ctx; /* context of the transfers added next (coll_sched_ctx) */
    coll_step_t *steps;
    int nsteps, capsteps;
    int *round_end;  /* round i is steps [round_end[i-1], round_end[i]) */
    int *round_xend; /* and transfers [round_xend[i-1], round_xend[i]) */
    int nrounds, caprounds, capxend;
    int nxfers; /* transfers added: transfer k has request state k */
    void **mem; /* owned temporaries */
    int nmem, capmem;
    struct coll_hold {
        void (*release)(void *);
        void *obj;
    } * holds; /* references released at free */
    int nholds, capholds;
    char *reqs;          /* nxfers request states, req_stride bytes each, kept across runs */
    unsigned char *busy; /* [nxfers]: request k is in flight */
    size_t req_stride;
    /* run state */
    int broken; /* a build step ran out of memory: never started */
    int sealed; /* started once: the last round is closed and the requests exist */
    int running, background, posted;
    int advancing; /* inside coll_sched_advance (a transfer's progress may come back) */
    int listed;    /* on the background list (the hook advances it) */
    int round, pending, err, tag;
    int scan;          /* the round's first transfer that may still be in flight */
    uint64_t progress; /* transfers completed, all runs (coll_sched_progress) */
    void (*done)(void *, int);
    void *done_arg;
    coll_sched_t *prev, *next; /* background list */
};

/* Schedules the hook advances, and the hook. */
static struct {
    coll_sched_t *head;
    vnic_t *v;
    int hook_id, hooked;
    int in_hook; /* bg_hook is walking the list: coll_sched_poll leaves it alone */
} bg;

static int grow(void **arr, int *cap, int need, size_t elem)
{
    if (need <= *cap)
        return 0;
    int n = *cap ? *cap * 2 : 8;
    while (n < need)
        n *= 2;
    void *p = realloc(*arr, (size_t)n * elem);
    if (!p)
        return -1;
    *arr = p;
    *cap = n;
    return 0;
}

coll_sched_t *coll_sched_new(vnic_t *v, const coll_sched_ops_t *ops, void *ctx)
{
    coll_sched_t *s = calloc(1, sizeof *s);
    if (!s)
        return NULL;
    s->v = v;
    s->ops = ops;
    s->ctx = ctx;
    s->req_stride = BASE_ALIGN_UP(BASE_MAX(ops->req_size, (size_t)8), 16);
    return s;
}

static void bg_remove(coll_sched_t *s)
{
    s->listed = 0;
    if (s->prev)
        s->prev->next = s->next;
    else
        bg.head = s->next;
    if (s->next)
        s->next->prev = s->prev;
    s->prev = s->next = NULL;
    if (!bg.head && bg.hooked)
        vnic_hook_arm(bg.v, bg.hook_id, 0);
}

void coll_sched_free(coll_sched_t *s)
{
    if (!s)
        return;
    if (s->listed)
        bg_remove(s);
    for (int i = 0; i < s->nholds; i++) /* (first: an object may live in s's memory) */
        s->holds[i].release(s->holds[i].obj);
    free(s->holds);
    for (int i = 0; i < s->nmem; i++)
        free(s->mem[i]);
    free(s->mem);
    free(s->steps);
    free(s->round_end);
    free(s->round_xend);
    free(s->reqs);
    free(s->busy);
    free(s);
}

static coll_step_t *add_step(coll_sched_t *s, int kind)
{
    if (grow((void **)&s->steps, &s->capsteps, s->nsteps + 1, sizeof *s->steps)) {
        s->broken = 1;
        return NULL;
    }
    coll_step_t *st = &s->steps[s->nsteps++];
    memset(st, 0, sizeof *st);
    st->kind = kind;
    return st;
}

static int add_xfer(coll_sched_t *s, int kind, void *buf, int64_t count, uintptr_t type, int peer)
{
    coll_step_t *st = add_step(s, kind);
    if (!st)
        return -1;
    st->peer = peer;
    st->u.x.buf = buf;
    st->u.x.count = count;
    st->u.x.type = type;
    st->u.x.ctx = s->ctx;
    s->nxfers++;
    return 0;
}

int coll_sched_send(coll_sched_t *s, const void *buf, int64_t count, uintptr_t type, int peer)
{
    return add_xfer(s, STEP_SEND, (void *)(uintptr_t)buf, count, type, peer);
}

int coll_sched_recv(coll_sched_t *s, void *buf, int64_t count, uintptr_t type, int peer)
{
    return add_xfer(s, STEP_RECV, buf, count, type, peer);
}

void coll_sched_ctx(coll_sched_t *s, void *ctx)
{
    s->ctx = ctx;
}

static int add_call(coll_sched_t *s, int kind, coll_step_fn fn, const void *args, size_t len)
{
    if (len > COLL_STEP_ARGS) {
        s->broken = 1;
        return -1;
    }
    coll_step_t *st = add_step(s, kind);
    if (!st)
        return -1;
    st->u.c.fn = fn;
    memcpy(st->u.c.args, args, len);
    s->nxfers += kind == STEP_UNTIL;
    return 0;
}

int coll_sched_call(coll_sched_t *s, coll_step_fn fn, const void *args, size_t len)
{
    return add_call(s, STEP_CALL, fn, args, len);
}

int coll_sched_until(coll_sched_t *s, coll_step_fn fn, const void *args, size_t len)
{
    return add_call(s, STEP_UNTIL, fn, args, len);
}

int coll_sched_fence(coll_sched_t *s)
{
    int start = s->nrounds ? s->round_end[s->nrounds - 1] : 0;
    if (s->nsteps == start)
        return 0;
    if (grow((void **)&s->round_end, &s->caprounds, s->nrounds + 1, sizeof *s->round_end) ||
        grow((void **)&s->round_xend, &s->capxend, s->nrounds + 1, sizeof *s->round_xend)) {
        s->broken = 1;
        return -1;
    }
    s->round_xend[s->nrounds] = s->nxfers;
    s->round_end[s->nrounds++] = s->nsteps;
    return 0;
}

void *coll_sched_mem(coll_sched_t *s, size_t n)
{
    void *p = NULL;
    if (grow((void **)&s->mem, &s->capmem, s->nmem + 1, sizeof *s->mem) ||
        posix_memalign(&p, 64, BASE_MAX(n, (size_t)1))) {
        s->broken = 1;
        return NULL;
    }
    s->mem[s->nmem++] = p;
    return p;
}

int coll_sched_hold(coll_sched_t *s, void (*release)(void *), void *obj)
{
    if (grow((void **)&s->holds, &s->capholds, s->nholds + 1, sizeof *s->holds)) {
        release(obj); /* the caller's reference goes: nothing will run */
        s->broken = 1;
        return -1;
    }
    s->holds[s->nholds].release = release;
    s->holds[s->nholds++].obj = obj;
    return 0;
}

const coll_sched_ops_t *coll_sched_ops(const coll_sched_t *s)
{
    return s->ops;
}

void *coll_sched_ctx_of(const coll_sched_t *s)
{
    return s->ctx;
}

static void note_err(coll_sched_t *s, int rc)
{
    if (rc && !s->err)
        s->err = rc;
}

/* Runs the local steps and posts the transfers of the current round. */
static void post_round(coll_sched_t *s)
{
    int lo = s->round ? s->round_end[s->round - 1] : 0, hi = s->round_end[s->round];
    int k = s->round ? s->round_xend[s->round - 1] : 0;
    s->scan = k;
    for (int i = lo; i < hi; i++) {
        coll_step_t *st = &s->steps[i];
        if (st->kind == STEP_CALL) {
            note_err(s, st->u.c.fn(st->u.c.args));
            continue;
        }
        void *req = s->reqs + (size_t)k * s->req_stride;
        if (st->kind == STEP_UNTIL) {
            int rc = st->u.c.fn(st->u.c.args);
            if (rc == COLL_STEP_AGAIN) {
                *(int *)req = i;
                s->busy[k] = 2;
                s->pending++;
            } else {
                note_err(s, rc);
            }
            k++;
            continue;
        }
        int rc =
            st->kind == STEP_SEND
                ? s->ops->isend(st->u.x.ctx, st->u.x.buf, st->u.x.count, st->u.x.type, st->peer,
                                s->tag, st->seq | (s->err ? COLL_SEQ_POISON : 0), req)
                : s->ops->irecv(st->u.x.ctx, st->u.x.buf, st->u.x.count, st->u.x.type, st->peer,
                                s->tag, st->seq, req);
        s->busy[k] = !rc;
        s->pending += !rc;
        note_err(s, rc);
        k++;
    }
    s->posted = 1;
}

static int sched_advance(coll_sched_t *s, int *err);

int coll_sched_advance(coll_sched_t *s, int *err)
{
    if (s->advancing) /* re-entered through a transfer's progress: the outer call goes on */
        return 0;
    s->advancing = 1;
    int done = sched_advance(s, err);
    s->advancing = 0;
    return done;
}

static int sched_advance(coll_sched_t *s, int *err)
{
    while (s->round < s->nrounds) {
        if (!s->posted)
            post_round(s);
        if (s->pending) {
            int hi = s->round_xend[s->round];
            while (!s->busy[s->scan]) /* (one is: pending) */
                s->scan++;
            for (int k = s->scan; k < hi; k++) {
                int e = 0;
                void *req = s->reqs + (size_t)k * s->req_stride;
                if (s->busy[k] == 2) {
                    coll_step_t *st = &s->steps[*(int *)req];
                    if ((e = st->u.c.fn(st->u.c.args)) == COLL_STEP_AGAIN)
                        continue;
                } else if (!s->busy[k] || !s->ops->test(req, &e)) {
                    continue;
                }
                s->busy[k] = 0;
                s->pending--;
                s->progress++;
                note_err(s, e);
            }
            if (s->pending)
                return 0;
        }
        s->round++;
        s->posted = 0;
    }
    s->running = 0;
    if (s->ops->end)
        s->ops->end(s->ctx);
    *err = s->err;
    return 1;
}

uint64_t coll_sched_progress(const coll_sched_t *s)
{
    return s->progress;
}

static void bg_insert(coll_sched_t *s)
{
    if (!bg.head)
        vnic_hook_arm(bg.v, bg.hook_id, 1);
    s->next = bg.head;
    if (bg.head)
        bg.head->prev = s;
    bg.head = s;
    s->listed = 1;
}

static int bg_hook(void *arg)
{
    (void)arg;
    int n = 0;
    bg.in_hook++;
    for (coll_sched_t *s = bg.head, *next; s; s = next) {
        next = s->next;
        int err;
        if (coll_sched_advance(s, &err)) {
            bg_remove(s);
            n++;
            if (s->done)
                s->done(s->done_arg, err); /* may free s */
        }
    }
    bg.in_hook--;
    return n;
}

int coll_sched_start(coll_sched_t *s, int tag, int background, void (*done)(void *, int),
                     void *done_arg)
{
    if (BASE_UNLIKELY(!s->sealed)) { /* the first start: building is over */
        if (coll_sched_fence(s) || s->broken)
            return -1;
        if (!s->reqs && s->nxfers) {
            s->reqs = calloc((size_t)s->nxfers, s->req_stride);
            s->busy = calloc((size_t)s->nxfers, 1);
            if (!s->reqs || !s->busy)
                return -1;
        }
        s->sealed = 1;
    }
    if (background && !bg.hooked) {
        if (vnic_hook_add(s->v, bg_hook, NULL, 0, &bg.hook_id))
            return -1;
        bg.v = s->v;
        bg.hooked = 1;
    }
    if (s->ops->begin)
        s->ops->begin(s->ctx);
    if (s->ops->reserve)
        for (int i = 0, k = 0; i < s->nsteps; i++) {
            coll_step_t *st = &s->steps[i];
            if (st->kind == STEP_SEND || st->kind == STEP_RECV)
                st->seq =
                    s->ops->reserve(st->u.x.ctx, st->kind == STEP_SEND, st->peer, st->u.x.count,
                                    st->u.x.type, s->reqs + (size_t)k * s->req_stride);
            k += st->kind != STEP_CALL;
        }
    s->running = 1;
    s->background = background;
    s->round = 0;
    s->posted = 0;
    s->pending = 0;
    s->err = 0;
    s->tag = tag;
    s->done = done;
    s->done_arg = done_arg;
    if (!background)
        return 0;
    int err;
    if (coll_sched_advance(s, &err)) { /* nothing to wait for */
        if (done)
            done(done_arg, err);
        return 0;
    }
    bg_insert(s);
    return 0;
}

int coll_sched_poll(coll_sched_t *s)
{
    if (!s->running || !s->background || bg.in_hook) /* (the hook holds a list position) */
        return !s->running;
    int err;
    if (!coll_sched_advance(s, &err))
        return 0;
    if (s->listed)
        bg_remove(s);
    if (s->done)
        s->done(s->done_arg, err); /* may free s */
    return 1;
}

typedef struct sched_wait {
    coll_sched_t *s;
    int err;
} sched_wait_t;

static int sched_wait_ready(void *arg)
{
    sched_wait_t *w = arg;
    return coll_sched_advance(w->s, &w->err);
}

int coll_sched_wait(coll_sched_t *s)
{
    if (!s->running || !s->background || bg.in_hook)
        return 0;
    if (s->listed) /* polled here alone: the hook would only advance it a second time */
        bg_remove(s);
    sched_wait_t w = {s, 0};
    if (!coll_sched_advance(s, &w.err)) {
        int rc = vnic_wait(s->v, sched_wait_ready, &w, -1);
        if (rc != FMPL_SUCCESS) { /* (a dead peer) the hook takes it back */
            bg_insert(s);
            return rc;
        }
    }
    if (s->done)
        s->done(s->done_arg, w.err); /* may free s */
    return 0;
}

void coll_sched_shutdown(vnic_t *v)
{
    if (bg.hooked && bg.v == v)
        vnic_hook_remove(v, bg.hook_id);
    memset(&bg, 0, sizeof bg);
}
