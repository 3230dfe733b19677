/* coll_sched.c — the MPI collectives' use of the schedule engine (coll.h): the transport
 * (the library's point-to-point on ctx + 1 of the communicator each transfer was added
 * with: the engine's context word is an mpii_comm_t), the local steps (typed copy,
 * reduction), the three ways of running a schedule (blocking, nonblocking, persistent)
 * and the cache of blocking schedules (contract: coll_impl.h). */
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi/coll_impl.h"

/* ------------------------------------------------------------------ types
 * A schedule names a datatype by a word: a predefined type (immortal) by its handle
 * shifted left, a derived one by its dt with the low bit set, the schedule holding a
 * reference (coll_sched_hold), so MPI_Type_free while a collective is pending or
 * between starts of a persistent one is harmless. */

static void held_dt_release(void *t)
{
    dt_release(t);
}

uintptr_t mpii_sched_type(coll_sched_t *s, MPI_Datatype type)
{
    if (FMPL_MPI_DT_IS_PREDEF(type))
        return (uintptr_t)(unsigned)type << 1;
    dt_t *t = mpii_type_get(type);
    if (!t) /* checked at entry: cannot happen */
        return (uintptr_t)(unsigned)MPI_DATATYPE_NULL << 1;
    dt_retain(t);
    coll_sched_hold(s, held_dt_release, t);
    return (uintptr_t)t | 1;
}

/* The handle (MPI_DATATYPE_NULL for a derived type) and the dt of a type word. */
static inline MPI_Datatype type_word_handle(uintptr_t w)
{
    return w & 1 ? MPI_DATATYPE_NULL : (MPI_Datatype)(unsigned)(w >> 1);
}
static inline dt_t *type_word_dt(uintptr_t w)
{
    return w & 1 ? (dt_t *)(w & ~(uintptr_t)1) : mpii_type_get(type_word_handle(w));
}

/* ------------------------------------------------------------------ transport */

/* A send of a run that had failed before (COLL_SEQ_POISON) carries no data: its receiver,
 * which expects the exact size (transport_test), fails too, instead of taking this rank's
 * unfilled buffer for the result; so a failure passes on down a tree. */
static int transport_isend(void *ctx, const void *buf, int64_t count, uintptr_t type, int peer,
                           int tag, uint64_t seq, void *req)
{
    if (BASE_UNLIKELY(seq & COLL_SEQ_POISON))
        count = 0;
    return mpii_lib_isend_dt(ctx, buf, count, type_word_handle(type), type_word_dt(type), peer, tag,
                             req);
}

static int transport_irecv(void *ctx, void *buf, int64_t count, uintptr_t type, int peer, int tag,
                           uint64_t seq, void *req)
{
    (void)seq;
    return mpii_lib_irecv_dt(ctx, buf, count, type_word_handle(type), type_word_dt(type), peer, tag,
                             req);
}

/* A collective's messages have the exact size both ends compute from their arguments;
 * a shorter one means the ranks disagree on the collective's size (a longer one is
 * already MPI_ERR_TRUNCATE). */
static int transport_test(void *req, int *err)
{
    mpii_req_t *r = req;
    if (!r->done)
        return 0;
    *err = r->err;
    if (!r->err && r->kind == MPII_REQ_RECV && (uint64_t)r->st.fmpl_count != r->bytes &&
        r->peer != MPI_PROC_NULL)
        *err = MPI_ERR_COUNT;
    return 1;
}

static const coll_sched_ops_t transport_ops = {.req_size = sizeof(mpii_req_t),
                                               .isend = transport_isend,
                                               .irecv = transport_irecv,
                                               .test = transport_test};

mpii_coll_tune_t mpii_coll_tune;

/* MPI_T writes of the thresholds (every rank alike, between collectives: MPI_T scope
 * ALL_EQ); the cached schedules built under the old value are not used again. */
static int tune_set_bcast_large(long long v)
{
    mpii_coll_tune.bcast_large = v;
    mpii_coll_tune.gen++;
    return FMPL_SUCCESS;
}

static int tune_set_allreduce_large(long long v)
{
    mpii_coll_tune.allreduce_large = v;
    mpii_coll_tune.gen++;
    return FMPL_SUCCESS;
}

static void tune_read(void)
{
    mpii_coll_tune.bcast_large =
        base_env_int("FMPL_MPI_BCAST_LARGE", 64 * 1024, 0, INT64_MAX / 2,
                     "bytes from which MPI_Bcast on 3 or more ranks is scatter + ring allgather");
    mpii_coll_tune.allreduce_large =
        base_env_int("FMPL_MPI_ALLREDUCE_LARGE", 32 * 1024, 0, INT64_MAX / 2,
                     "bytes from which a commutative MPI_Allreduce is reduce-scatter + allgather");
    mpii_coll_tune.a2a_window = (int)base_env_int("FMPL_MPI_A2A_WINDOW", 32, 1, 1 << 20,
                                                  "exchanges in flight per round of MPI_Alltoall");
    base_env_writable("FMPL_MPI_BCAST_LARGE", tune_set_bcast_large, 1);
    base_env_writable("FMPL_MPI_ALLREDUCE_LARGE", tune_set_allreduce_large, 1);
}

int mpii_coll_tune_init(void)
{
    tune_read();
    return MPI_SUCCESS;
}

coll_sched_t *mpii_sched_new(mpii_comm_t *c)
{
    if (BASE_UNLIKELY(!mpii_coll_tune.a2a_window))
        tune_read();
    return coll_sched_new(mpii.vnic, &transport_ops, c);
}

void mpii_sched_comm(coll_sched_t *s, mpii_comm_t *c)
{
    coll_sched_ctx(s, c);
}

void mpii_sched_send(coll_sched_t *s, const void *buf, int64_t count, MPI_Datatype type, int peer)
{
    coll_sched_send(s, buf, count, mpii_sched_type(s, type), peer);
}

void mpii_sched_recv(coll_sched_t *s, void *buf, int64_t count, MPI_Datatype type, int peer)
{
    coll_sched_recv(s, buf, count, mpii_sched_type(s, type), peer);
}

void mpii_sched_fence(coll_sched_t *s)
{
    coll_sched_fence(s);
}

void mpii_sched_and(coll_sched_t *s, mpii_comm_t *c, uint64_t *in, uint64_t *out)
{
    mpii_algo_t m;
    const coll_algo_t *a = mpii_sched_algo(&m, s, NULL, c->size, c->rank, MPI_UINT64_T, MPI_BAND);
    coll_algo_reduce_binomial(a, in, out, 1, 0);
    mpii_sched_fence(s);
    coll_algo_bcast_binomial(a, out, 1, 0);
    mpii_sched_fence(s);
}

/* ------------------------------------------------------------------ local steps */

typedef struct typed_copy_args {
    const void *sbuf;
    void *rbuf;
    int64_t scount, rcount;
    uintptr_t stype, rtype; /* type words */
} typed_copy_args_t;

static int typed_copy_step(const void *a)
{
    const typed_copy_args_t *x = a;
    dt_t *st = type_word_dt(x->stype), *rt = type_word_dt(x->rtype);
    int64_t sn = x->scount * dt_size(st), rn = x->rcount * dt_size(rt);
    int64_t n = sn < rn ? sn : rn;
    if (n > 0 && dt_copy(st, x->scount, x->sbuf, rt, x->rcount, x->rbuf, 0, n) != 0)
        return MPI_ERR_ARG;
    /* a collective's own block has one size at both ends in a correct call */
    return sn > rn ? MPI_ERR_TRUNCATE : sn < rn ? MPI_ERR_COUNT : MPI_SUCCESS;
}

void mpii_sched_copy(coll_sched_t *s, const void *sbuf, int64_t scount, MPI_Datatype stype,
                     void *rbuf, int64_t rcount, MPI_Datatype rtype)
{
    typed_copy_args_t a = {
        sbuf, rbuf, scount, rcount, mpii_sched_type(s, stype), mpii_sched_type(s, rtype)};
    coll_sched_call(s, typed_copy_step, &a, sizeof a);
}

static void held_op_release(void *o)
{
    mpii_op_release(o);
}

typedef struct op_reduce_args {
    const void *in;
    void *inout;
    int64_t count;
    mpii_op_t *o; /* held */
    uintptr_t type;
    MPI_Datatype handle; /* the caller's handle, for a user op */
    MPI_Op op;
} op_reduce_args_t;

/* A user op gets the caller's datatype handle, not type_word_handle()'s MPI_DATATYPE_NULL of a
 * derived type word (MPICH's coll/nonblocking2 asks its op for the extent of the type it
 * was given). Only the dt is held, not the handle: if the caller freed the type while a
 * nonblocking reduction is pending, its op gets the freed handle. */
static int op_reduce_step(const void *a)
{
    const op_reduce_args_t *x = a;
    return mpii_op_apply_obj(x->o, x->op, x->in, x->inout, x->count, x->handle,
                             type_word_dt(x->type));
}

void mpii_sched_reduce(coll_sched_t *s, MPI_Op op, const void *in, void *inout, int64_t count,
                       MPI_Datatype type)
{
    mpii_op_t *o = mpii_op_get(op); /* checked at entry */
    o->refs++;
    coll_sched_hold(s, held_op_release, o);
    op_reduce_args_t a = {in, inout, count, o, mpii_sched_type(s, type), type, op};
    coll_sched_call(s, op_reduce_step, &a, sizeof a);
}

void *mpii_sched_bytes(coll_sched_t *s, int64_t n)
{
    return coll_sched_mem(s, (size_t)(n > 0 ? n : 1));
}

void *mpii_sched_tmp(coll_sched_t *s, MPI_Datatype type, int64_t count)
{
    dt_t *t = mpii_type_get(type);
    int64_t lo = 0, hi = 1;
    if (t && count > 0) {
        int64_t ext = dt_extent(t), last = (count - 1) * ext;
        /* the whole extent too: kernels may touch a pair type's trailing padding */
        int64_t tlo = dt_true_lb(t), thi = tlo + dt_true_extent(t);
        lo = (dt_lb(t) < tlo ? dt_lb(t) : tlo) + (last < 0 ? last : 0);
        hi = (dt_ub(t) > thi ? dt_ub(t) : thi) + (last > 0 ? last : 0);
        if (hi <= lo)
            hi = lo + 1;
    }
    char *m = coll_sched_mem(s, (size_t)(hi - lo));
    return m ? m - lo : NULL;
}

/* ------------------------------------------------------------------ algorithms' carrier */

static const mpii_algo_t *algo_of(const coll_algo_t *a)
{
    return (const mpii_algo_t *)(const void *)a;
}

static void algo_copy(const coll_algo_t *a, void *dst, const void *src, int64_t count)
{
    if (dst != src)
        mpii_sched_copy(a->s, src, count, algo_of(a)->type, dst, count, algo_of(a)->type);
}

static void *algo_scratch(const coll_algo_t *a, int64_t count)
{
    return mpii_sched_tmp(a->s, algo_of(a)->type, count);
}

/* MPI_Reduce_local's order: the result lands in the second operand. */
static void algo_reduce(const coll_algo_t *a, const void *lower, const void *upper, void *into,
                        int64_t count)
{
    const mpii_algo_t *m = algo_of(a);
    /* into == lower: a commutative op */
    mpii_sched_reduce(a->s, m->op, into == upper ? lower : upper, into, count, m->type);
}

static const coll_algo_ops_t algo_ops = {algo_copy, algo_scratch, algo_reduce};

const coll_algo_t *mpii_sched_algo(mpii_algo_t *m, coll_sched_t *s, const int *rk, int n, int me,
                                   MPI_Datatype type, MPI_Op op)
{
    mpii_op_t *o = op == MPI_OP_NULL ? NULL : mpii_op_get(op);
    m->a = (coll_algo_t){.s = s,
                         .ops = &algo_ops,
                         .ranks = rk,
                         .n = n,
                         .me = me,
                         .word = mpii_sched_type(s, type),
                         .extent = mpii_coll_ext(type),
                         .commutative = !o || o->commute,
                         .into_upper = 1};
    m->type = type;
    m->op = op;
    return &m->a;
}

/* ------------------------------------------------------------------ mailbox schedules */

#define STRICT_ORDER_KEY "mpi_assert_strict_persistent_collective_ordering"

int mpii_coll_strict_order(const mpii_comm_t *c)
{
    char v[8];
    int flag = 0;
    if (c->info == MPI_INFO_NULL ||
        PMPI_Info_get(c->info, STRICT_ORDER_KEY, (int)sizeof v - 1, v, &flag) != MPI_SUCCESS ||
        !flag)
        return 0;
    return !strcasecmp(v, "true");
}

int mpii_mailbox_fits(mpii_comm_t *c, const mpii_cmode_t *m, MPI_Datatype type, int64_t count,
                      size_t max)
{
    if (!mpii_comm_cgroup(c) || !FMPL_MPI_DT_IS_PREDEF(type) || FMPL_MPI_DT_PAD(type) != 0)
        return 0;
    if (m->kind != MPII_CM_BLOCK && mpii_verify_setting())
        return 0; /* a checked call starts when its check ends (coll_verify.c) */
    uint64_t n = (uint64_t)count * (uint64_t)FMPL_MPI_DT_SIZE(type);
    if (n > max)
        return 0;
    if (m->kind == MPII_CM_BLOCK || m->kind == MPII_CM_NB)
        return MPII_MAILBOX_RUN;
    if (m->kind != MPII_CM_PERSIST)
        return 0;
    /* A lane takes what the call's mailbox builder does (n <= max: bcast any size, as a
     * chain through the lane's big cells above them; the reductions up to
     * FMPL_COLL_SMALL); ordering asserted, only what its small cells take (a writer runs
     * 64 messages ahead there; the big cells are slower than a queued run on the
     * 16-deep channels). */
    int strict = mpii_coll_strict_order(c);
    int fit = coll_lane_room(c->cgroup) && (!strict || n <= coll_lane_cell_room(c->cgroup))
                  ? MPII_MAILBOX_LANE
                  : 0;
    return fit | (strict ? MPII_MAILBOX_QUEUE : 0);
}

typedef struct mailbox_op_state {
    MPI_Op op;
    MPI_Datatype type;
    mpii_kernel_t k; /* resolved once (NULL: through mpii_op_apply) */
    int id;
} mailbox_op_state_t;

static void mailbox_reduce_fn(void *inout, const void *in, size_t count, void *arg)
{
    const mailbox_op_state_t *o = arg; /* op and type checked at entry */
    if (BASE_LIKELY(o->k != NULL))
        o->k(o->id, in, inout, (int64_t)count);
    else
        mpii_op_apply(o->op, in, inout, (MPI_Count)count, o->type);
}

coll_reduce_op_t mpii_mailbox_op(coll_sched_t *s, MPI_Op op, MPI_Datatype type)
{
    mailbox_op_state_t *o = coll_sched_mem(s, sizeof *o); /* NULL: s is refused at start */
    if (o) {
        o->op = op;
        o->type = type;
        o->k = mpii_op_kernel(op, type, &o->id);
    }
    coll_reduce_op_t r = {mailbox_reduce_fn, o, (size_t)FMPL_MPI_DT_SIZE(type),
                          mpii_op_get(op)->commute};
    return r;
}

/* ------------------------------------------------------------------ offloaded runs */

int mpii_offload_take(mpii_comm_t *c, const mpii_cmode_t *m, int64_t bytes, int *entry,
                      uint64_t *seq)
{
    return m->kind != MPII_CM_BLOCK && c->cgroup && !c->rgroup && bytes > 0 &&
           coll_offload_take(c->cgroup, (size_t)bytes, m->kind == MPII_CM_PERSIST, entry, seq);
}

unsigned mpii_offload_flags(const mpii_comm_t *c, const mpii_cmode_t *m)
{
    if (m->kind != MPII_CM_PERSIST)
        return COLL_OFFLOAD_ORDERED;
    return COLL_OFFLOAD_PERSISTENT | (mpii_coll_strict_order(c) ? COLL_OFFLOAD_ORDERED : 0);
}

int mpii_offload_steps(coll_sched_t *s, coll_offload_t *o)
{
    return coll_offload_steps(s, o, mpii_err_from_fmpl) ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

/* ------------------------------------------------------------------ cache */

#define CACHE_SLOTS 8 /* blocking schedules kept per communicator */

typedef struct mpii_ccache {
    int next; /* slot replaced next */
    int last; /* slot of the latest hit: looked at first */
    mpii_ckey_t key[CACHE_SLOTS];
    coll_sched_t *s[CACHE_SLOTS];
    /* the slot's schedule is queued or running for a nonblocking call (which borrowed it:
     * a blocking call waits for the queue before it runs or replaces anything) */
    unsigned char busy[CACHE_SLOTS];
    int note[CACHE_SLOTS];     /* the slot's (collective, algorithm) note: tool_impl.h */
    unsigned gen[CACHE_SLOTS]; /* mpii_coll_tune.gen when built: another one is a miss */
} mpii_ccache_t;

mpii_coll_stats_t mpii_coll_stats;
_Static_assert(MPII_TOOL_COLL(MPII_CK_EXSCAN) == MPII_TOOL_NCOLL - 1, "tool_impl.h's count");

/* Counts a run of cached schedule s by its slot's note. */
static void cache_count(mpii_comm_t *c, const coll_sched_t *s)
{
    const mpii_ccache_t *cc = c->ccache;
    for (int n = 0, i = cc ? cc->last : 0; cc && n < CACHE_SLOTS; n++, i = (i + 1) % CACHE_SLOTS)
        if (cc->s[i] == s) {
            mpii_coll_count(cc->note[i]);
            return;
        }
}

const mpii_ckey_t *mpii_sched_key(const mpii_cmode_t *m, const mpii_ckey_t *k)
{
    if (!k || m->kind != MPII_CM_BLOCK)
        return NULL;
    /* (fields a call does not use are 0, which is no handle) */
    if ((k->stype && !FMPL_MPI_DT_IS_PREDEF(k->stype)) ||
        (k->rtype && !FMPL_MPI_DT_IS_PREDEF(k->rtype)))
        return NULL;
    if (k->op) { /* invalid (the checks will say so), or a user op: its handle may be freed
                  * and reused */
        const mpii_op_t *o = mpii_op_get(k->op);
        if (!o || o->fn || o->fn_c)
            return NULL;
    }
    return k;
}

/* The slot of key k in c's cache (looked for from the latest hit on: a loop of one
 * collective finds it at once), or -1. */
static int cache_find(mpii_comm_t *c, const mpii_ckey_t *k)
{
    mpii_ccache_t *cc = c->ccache;
    if (!k || !cc)
        return -1;
    for (int n = 0, i = cc->last; n < CACHE_SLOTS; n++, i = (i + 1) % CACHE_SLOTS)
        if (cc->s[i] && cc->key[i].kind == k->kind && cc->gen[i] == mpii_coll_tune.gen &&
            !memcmp(&cc->key[i], k, sizeof *k)) {
            cc->last = i;
            return i;
        }
    return -1;
}

coll_sched_t *mpii_sched_lookup(mpii_comm_t *c, const mpii_ckey_t *k)
{
    int i = cache_find(c, k);
    return i >= 0 ? c->ccache->s[i] : NULL;
}

int mpii_sched_borrow(mpii_comm_t *c, const mpii_ckey_t *k, coll_sched_t **s)
{
    mpii_cmode_t mb = {.kind = MPII_CM_BLOCK};
    int i = cache_find(c, mpii_sched_key(&mb, k));
    if (i < 0 || c->ccache->busy[i] || !coll_sched_is_group(c->ccache->s[i]))
        return 0;
    c->ccache->busy[i] = 1;
    *s = c->ccache->s[i];
    return i + 1;
}

/* Keeps s under k in c's cache (s not in it yet), replacing a schedule no nonblocking
 * call is using: returns its slot, or -1 (no room: s is not taken). */
static int cache_take_slot(mpii_comm_t *c, const mpii_ckey_t *k, coll_sched_t *s)
{
    if (mpii_verify_setting() || (!c->ccache && !(c->ccache = calloc(1, sizeof *c->ccache))))
        return -1;
    mpii_ccache_t *cc = c->ccache;
    int i = cc->next;
    for (int n = 0; cc->busy[i]; n++) {
        if (n == CACHE_SLOTS)
            return -1;
        i = (i + 1) % CACHE_SLOTS;
    }
    cc->next = (i + 1) % CACHE_SLOTS;
    coll_sched_free(cc->s[i]);
    cc->key[i] = *k;
    cc->s[i] = s;
    cc->note[i] = 0;
    cc->gen[i] = mpii_coll_tune.gen;
    return i;
}

/* The same, freeing s when there is no room. */
static void cache_put(mpii_comm_t *c, const mpii_ckey_t *k, coll_sched_t *s, int note)
{
    int i = cache_take_slot(c, k, s);
    if (i < 0)
        coll_sched_free(s);
    else
        c->ccache->note[i] = note;
}

void mpii_sched_cache_free(mpii_comm_t *c)
{
    if (!c->ccache)
        return;
    for (int i = 0; i < CACHE_SLOTS; i++)
        coll_sched_free(c->ccache->s[i]);
    free(c->ccache);
    c->ccache = NULL;
}

/* ------------------------------------------------------------------ running */

typedef struct block_wait {
    coll_sched_t *s;
    int err, done;
    mpii_coll_watch_t watch; /* blocking runs (run_block) */
} block_wait_t;

/* Done, or (blocking runs) due for the watch's check. */
static int block_wait_ready(void *arg)
{
    block_wait_t *w = arg;
    if (coll_sched_advance(w->s, &w->err))
        return w->done = 1;
    return mpii_coll_watch_due(&w->watch);
}

/* Contract: coll_impl.h. */
int mpii_sched_run_tagged(coll_sched_t *s, int tag)
{
    block_wait_t w = {s, 0, 0, {0}};
    int rc = MPI_ERR_NO_MEM;
    if (s && !coll_sched_start(s, tag, 0, NULL, NULL)) {
        rc = coll_sched_advance(s, &w.err) ? FMPL_SUCCESS
                                           : vnic_wait(mpii.vnic, block_wait_ready, &w, -1);
        rc = rc == FMPL_SUCCESS ? w.err : mpii_err_from_fmpl(rc);
    }
    coll_sched_free(s);
    return rc;
}

/* A background run finished (err: an MPI class): the request completes with an empty
 * status. */
static void run_done(void *arg, int err)
{
    mpii_req_t *r = arg;
    r->run = NULL;
    if (r->cslot) { /* a borrowed cached schedule goes back */
        r->cref->ccache->busy[r->cslot - 1] = 0;
        r->cslot = 0;
    }
    r->err = err;
    mpii_status_empty(&r->st);
    r->st.MPI_ERROR = err;
    mpii_req_done(r);
}
/* The same for a group schedule's run (err: an FMPL code). */
static void run_group_done(void *arg, int err)
{
    run_done(arg, err ? mpii_err_from_fmpl(err) : MPI_SUCCESS);
}

/* ------------------------------------------------------------------ lanes
 * (coll_impl.h "Lanes"). A request's plane: the lane schedule, and while no lane is
 * settled the agreement, a point-to-point schedule on tag atag: offer (local step), AND
 * of the offers (reduce to 0 + binomial bcast), settle (local step). It runs after each
 * of the first starts' own runs (plane_run_done); the request completes when both have, so
 * at the next start every member knows the same outcome. */

enum { PLANE_TRY = 0, PLANE_ON, PLANE_OFF };
#define PLANE_TRIES 3 /* starts that try to agree on a lane */

typedef struct mpii_plane {
    coll_sched_t *lane, *agree;
    coll_group_t *g;
    uint64_t offer, agreed;
    unsigned seq; /* the request's number among the communicator's that agree on lanes */
    int state, tries, atag;
    int pending, err; /* schedules of this start still running; first error */
} mpii_plane_t;

static int plane_offer_step(const void *a)
{
    mpii_plane_t *pl = *(mpii_plane_t *const *)a;
    /* one candidate: the k-th such request on the communicator asks for lane k, then k + 7,
     * k + 14 (modulo the lanes), so that up to FMPL_COLL_LANES requests agreeing at once
     * (started in any order) never compete for a lane */
    unsigned first = pl->seq + (unsigned)pl->tries * 7;
    pl->offer = pl->lane && !pl->err ? coll_lanes_offer(pl->g, first, 1) : 0;
    return MPI_SUCCESS;
}

static int plane_settle_step(const void *a)
{
    mpii_plane_t *pl = *(mpii_plane_t *const *)a;
    int lane = pl->lane ? coll_lanes_settle(pl->g, pl->offer, pl->agreed, pl->lane) : -1;
    pl->state = lane >= 0 ? PLANE_ON : ++pl->tries >= PLANE_TRIES ? PLANE_OFF : PLANE_TRY;
    return MPI_SUCCESS;
}

/* One of the schedules of a start that also agrees finished (err: an MPI class; arg: the
 * request). */
static void plane_part_done(void *arg, int err)
{
    mpii_req_t *r = arg;
    mpii_plane_t *pl = r->plane;
    if (err && !pl->err)
        pl->err = err;
    if (--pl->pending == 0)
        run_done(r, pl->err);
}
/* The start's own run finished (err: an MPI class): the agreement begins, so that a
 * member whose run failed offers no lane (plane_offer_step). A lane's transfers are chosen
 * by this member's sizes alone; members that disagree on the collective's size must stay
 * on the schedules whose transports see it, or the next start would wait for ever. */
static void plane_run_done(void *arg, int err)
{
    mpii_req_t *r = arg;
    mpii_plane_t *pl = r->plane;
    if (err && !pl->err)
        pl->err = err;
    if (coll_sched_start(pl->agree, pl->atag, 1, plane_part_done, r))
        plane_part_done(r, MPI_ERR_NO_MEM); /* the run completes the request, with the error */
    plane_part_done(r, err);
}
static void plane_group_run_done(void *arg, int err)
{
    plane_run_done(arg, err ? mpii_err_from_fmpl(err) : MPI_SUCCESS);
}

/* Starts a run of r's own schedule in the background: a group schedule queued on the
 * group (done gets FMPL codes then: group_done), a point-to-point one at once (done).
 * Returns 0, or nonzero when nothing was started. */
static int run_launch(mpii_req_t *r, void (*done)(void *, int), void (*group_done)(void *, int))
{
    if (coll_sched_is_group(r->sched))
        return coll_group_enqueue(r->cref->cgroup, r->sched, group_done, r);
    return coll_sched_start(r->sched, r->tag, 1, done, r);
}

static void plane_free(mpii_plane_t *pl)
{
    if (!pl)
        return;
    coll_sched_free(pl->lane);
    coll_sched_free(pl->agree);
    free(pl);
}

/* Attaches to r (persistent, on c) a plane around lane schedule `lane` (may be NULL: this
 * member then offers nothing). MPI_ERR_NO_MEM: r keeps none, lane is freed. */
static int plane_attach(mpii_req_t *r, mpii_comm_t *c, coll_sched_t *lane)
{
    mpii_plane_t *pl = calloc(1, sizeof *pl);
    coll_sched_t *a = pl ? mpii_sched_new(c) : NULL;
    if (!a) {
        free(pl);
        coll_sched_free(lane);
        return MPI_ERR_NO_MEM;
    }
    pl->lane = lane;
    pl->agree = a;
    pl->g = c->cgroup;
    pl->atag = mpii_coll_tag(c);
    pl->seq = c->lane_seq++;
    coll_sched_call(a, plane_offer_step, &pl, sizeof pl);
    mpii_sched_and(a, c, &pl->offer, &pl->agreed);
    coll_sched_call(a, plane_settle_step, &pl, sizeof pl);
    r->plane = pl;
    return MPI_SUCCESS;
}

void mpii_lane_mode(mpii_cmode_t *ml, const mpii_cmode_t *m, coll_sched_t *s, int rc)
{
    *ml = *m;
    if (s && rc) {
        coll_sched_free(s);
        s = NULL;
    }
    ml->lane = s;
    ml->lane_ok = 1;
}

/* Starts r's own run (and the lane agreement while one is tried). */
static int run_start_own(mpii_req_t *r)
{
    mpii_plane_t *pl = r->plane;
    int rc;
    if (pl && pl->state == PLANE_ON) {
        r->run = pl->lane;
        rc = coll_sched_start(pl->lane, r->tag, 1, run_group_done, r);
    } else if (pl && pl->state == PLANE_TRY) {
        pl->pending = 2;
        pl->err = MPI_SUCCESS;
        rc = run_launch(r, plane_run_done, plane_group_run_done);
    } else {
        r->run = r->sched;
        rc = run_launch(r, run_done, run_group_done);
    }
    if (rc) {
        r->run = NULL;
        r->done = 1;
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

/* The check schedule of r finished (err: an MPI class): the members disagree (the
 * request completes with the error on every member), or r's own run starts. */
static void run_check_done(void *arg, int err)
{
    mpii_req_t *r = arg;
    r->run = NULL; /* (run_start_own names the run that follows, where it has one) */
    if (err || run_start_own(r))
        run_done(r, err ? err : MPI_ERR_NO_MEM);
}

int mpii_sched_start(mpii_req_t *r)
{
    if (coll_sched_is_group(r->sched) && !r->cref->cgroup)
        return MPI_ERR_COMM; /* MPI_Comm_free retired the group its runs queue on */
    r->done = 0;
    r->err = MPI_SUCCESS;
    if (!r->check)
        return run_start_own(r);
    r->run = r->check;
    if (coll_sched_start(r->check, r->check_tag, 1, run_check_done, r)) {
        r->run = NULL;
        r->done = 1;
        return MPI_ERR_NO_MEM;
    }
    return MPI_SUCCESS;
}

void mpii_sched_req_free(mpii_req_t *r)
{
    coll_sched_free(r->check);
    r->check = NULL;
    coll_sched_free(r->sched);
    r->sched = NULL;
    plane_free(r->plane);
    r->plane = NULL;
}

/* A blocking run of s; then s goes into the cache under k (not NULL), or is freed (k NULL
 * and not cached), or stays where it is (cached). */
static int run_block(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const char *fname, int cached,
                     const mpii_ckey_t *k, int note)
{
    int qrc;
    if (c->cgroup && (qrc = coll_group_quiesce(c->cgroup))) {
        /* the nonblocking mailbox runs queued before it first (coll.h "queued runs") */
        if (!cached)
            coll_sched_free(s);
        return MPII_ERR_COMM(comm, mpii_err_from_fmpl(qrc), fname);
    }
    int tag = mpii_coll_tag(c), group = coll_sched_is_group(s);
    block_wait_t w = {s, 0, 0, {0}};
    mpii_coll_watch_start(&w.watch, c, tag, group);
    if (coll_sched_start(s, tag, 0, NULL, NULL)) {
        if (!cached)
            coll_sched_free(s);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fname);
    }
    w.done = coll_sched_advance(s, &w.err);
    while (!w.done) {
        int rc = vnic_wait(mpii.vnic, block_wait_ready, &w, -1);
        if (rc != FMPL_SUCCESS) /* a dead peer: the run can never end */
            return MPII_ERR_COMM(comm, mpii_err_from_fmpl(rc), fname);
        if (!w.done) /* back for the watch */
            mpii_coll_watch_check(&w.watch, fname);
    }
    if (!cached) {
        if (k)
            cache_put(c, k, s, note);
        else
            coll_sched_free(s);
    }
    if (!w.err)
        return MPI_SUCCESS;
    mpii_coll_watch_failed(&w.watch);
    return group ? mpii_mailbox_fail(comm, w.err, fname) : MPII_ERR_COMM(comm, w.err, fname);
}

int mpii_mailbox_fail(MPI_Comm comm, int fmpl_rc, const char *fname)
{
    int rc = mpii_err_from_fmpl(fmpl_rc);
    /* a length mark differed (coll_impl.h, coll_flag) */
    if (fmpl_rc == FMPL_ERR_MISMATCH || fmpl_rc == FMPL_ERR_TRUNCATE)
        return MPII_ERRF_COMM(comm, rc, fname,
                              "a message from another rank has another length than this "
                              "rank's arguments give: the ranks disagree on the collective's "
                              "size (FMPL_MPI_CHECK=1 names the rank and the sizes)");
    return MPII_ERR_COMM(comm, rc, fname);
}

int mpii_sched_run_cached(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const char *fname)
{
    mpii_coll_take_note(); /* the entry's path note: this schedule has its own */
    cache_count(c, s);
    return run_block(c, comm, s, fname, 1, NULL, 0);
}

/* A nonblocking call's request over group schedule s, queued on c's group: s owned by the
 * request (cslot 0), or borrowed from slot cslot - 1 of the cache (freed by nobody here).
 * Returns an MPI class (the request is gone then). */
static int run_queued(mpii_comm_t *c, coll_sched_t *s, const mpii_cmode_t *m, int cslot)
{
    mpii_req_t *r = mpii_req_alloc();
    if (!r) {
        if (cslot)
            c->ccache->busy[cslot - 1] = 0;
        else
            coll_sched_free(s);
        return MPI_ERR_NO_MEM;
    }
    r->kind = MPII_REQ_COLL;
    r->sched = cslot ? NULL : s;
    r->cslot = cslot;
    r->comm = c->handle;
    c->refs++;
    r->cref = c;
    r->tag = mpii_coll_tag(c);
    mpii_status_empty(&r->st);
    int rc = mpii_req_handle(r, m->req); /* (frees r, and an owned s, on failure) */
    if (rc != MPI_SUCCESS) {
        if (cslot)
            c->ccache->busy[cslot - 1] = 0;
        return rc;
    }
    r->run = s;
    int qrc = coll_group_enqueue(c->cgroup, s, run_group_done, r);
    if (qrc) {
        r->run = NULL;
        r->done = 1;
        if (r->cslot)
            c->ccache->busy[r->cslot - 1] = 0;
        r->cslot = 0;
        PMPI_Request_free(m->req);
        return mpii_err_from_fmpl(qrc);
    }
    return MPI_SUCCESS;
}

int mpii_sched_run_borrowed(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                            int cslot)
{
    mpii_coll_take_note();
    mpii_coll_count(c->ccache->note[cslot - 1]);
    int rc = m->req ? run_queued(c, s, m, cslot) : MPI_ERR_ARG;
    if (rc && !m->req)
        c->ccache->busy[cslot - 1] = 0;
    return rc ? MPII_ERR_COMM(comm, rc, m->fname) : MPI_SUCCESS;
}

int mpii_sched_run_nb(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                      const mpii_ckey_t *kb, int build_err)
{
    mpii_cmode_t mb = {.kind = MPII_CM_BLOCK};
    const mpii_ckey_t *k = mpii_sched_key(&mb, kb);
    if (!s || build_err || !m->req || !k)
        return mpii_sched_run(c, comm, s, m, NULL, build_err);
    int i = cache_take_slot(c, k, s); /* cached, and borrowed at once */
    if (i < 0)
        return mpii_sched_run(c, comm, s, m, NULL, build_err);
    c->ccache->busy[i] = 1;
    c->ccache->note[i] = mpii_coll_take_note();
    return mpii_sched_run_borrowed(c, comm, s, m, i + 1);
}

int mpii_sched_run(mpii_comm_t *c, MPI_Comm comm, coll_sched_t *s, const mpii_cmode_t *m,
                   const mpii_ckey_t *k, int build_err)
{
    int note = mpii_coll_take_note(), check_tag;
    coll_sched_t *check = mpii_verify_take(c, &check_tag);
    if (!s || build_err || m->kind == MPII_CM_BLOCK || !m->req) {
        coll_sched_free(check); /* (blocking calls are checked at once) */
        check = NULL;
    }
    if (!s || build_err) {
        coll_sched_free(s);
        coll_sched_free(m->lane);
        return MPII_ERR_COMM(comm, s ? build_err : MPI_ERR_NO_MEM, m->fname);
    }
    if (m->kind == MPII_CM_NB)
        mpii_coll_count(note); /* persistent ones: not per start */
    if (m->kind == MPII_CM_BLOCK) {
        mpii_coll_count(note);
        return run_block(c, comm, s, m->fname, 0, k, note);
    }
    if (!m->req) {
        coll_sched_free(s);
        coll_sched_free(m->lane);
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, m->fname);
    }
    if (m->kind == MPII_CM_NB && coll_sched_is_group(s)) { /* after the ones queued before */
        coll_sched_free(check); /* (checked calls take no group schedule: mpii_mailbox_fits) */
        int rc = run_queued(c, s, m, 0);
        return rc ? MPII_ERR_COMM(comm, rc, m->fname) : MPI_SUCCESS;
    }
    mpii_req_t *r = mpii_req_alloc();
    if (!r) {
        coll_sched_free(check);
        coll_sched_free(s);
        coll_sched_free(m->lane);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, m->fname);
    }
    r->kind = MPII_REQ_COLL;
    r->sched = s;
    r->check = check;
    r->check_tag = check_tag;
    r->comm = c->handle;
    c->refs++;
    r->cref = c;
    r->tag = mpii_coll_tag(c);
    mpii_status_empty(&r->st);
    int rc;
    if (m->kind == MPII_CM_PERSIST) {
        r->persistent = 1;
        r->done = 1;
        rc = m->lane_ok ? plane_attach(r, c, m->lane) : MPI_SUCCESS;
        if (rc == MPI_SUCCESS)
            rc = mpii_req_handle(r, m->req);
        else
            mpii_req_free(r);
    } else {
        rc = mpii_req_handle(r, m->req);
        if (rc == MPI_SUCCESS && mpii_sched_start(r) != MPI_SUCCESS) {
            PMPI_Request_free(m->req);
            rc = MPI_ERR_NO_MEM;
        }
    }
    return rc ? MPII_ERR_COMM(comm, rc, m->fname) : MPI_SUCCESS;
}
