/* coll_reduce.c — reduction of large vectors as fold schedules (small ones are tree /
 * recursive-doubling schedules, coll_gsched.c; contracts: coll_impl.h "the large-message
 * builders"). Two pipelined chains meet at the root: a prefix chain 0 -> 1 -> ... -> root
 * carries x0 op ... op x(r), a suffix chain p-1 -> ... -> root carries x(r) op ... op
 * x(p-1); the root computes prefix op x op suffix. Rank order is kept, so this serves
 * non-commutative ops as well. Allreduce of a large vector = this reduction to rank 0
 * followed by the broadcast from rank 0, in one schedule. */
#include "coll/coll_impl.h"

/* The segmentation of count elements of es bytes: segments of `per` elements (the last
 * one shorter). */
typedef struct chain_segs {
    size_t per, count, es, n;
} chain_segs_t;

static inline size_t seg_off(const chain_segs_t *c, size_t i)
{
    return i * c->per * c->es;
}
static inline size_t seg_elems(const chain_segs_t *c, size_t i)
{
    return BASE_MIN(c->per, c->count - i * c->per);
}

/* Fills fold f for segment i of `mine`. */
static void fold_set(coll_fold_t *f, const coll_reduce_op_t *op, const chain_segs_t *c, size_t i,
                     char *mine, int mode)
{
    memset(f, 0, sizeof *f);
    f->fn = op->fn;
    f->arg = op->arg;
    f->mine = mine;
    f->count = seg_elems(c, i);
    f->mode = mode;
}

/* The root: folds the suffix segment i (from root+1) into out in round i, the prefix
 * segment (from root-1) one round later when both chains exist: per segment the suffix
 * always goes first. */
static int build_root(coll_sched_t *s, coll_group_t *g, const chain_segs_t *c, char *out,
                      const coll_reduce_op_t *op)
{
    const int r = g->rank;
    const int up = r < g->size - 1; /* a suffix chain comes in */
    const int down = r > 0;         /* a prefix chain comes in */
    const int lag = up;
    coll_fold_t *fu = up ? coll_sched_mem(s, c->n * sizeof *fu) : NULL;
    coll_fold_t *fd = down ? coll_sched_mem(s, c->n * sizeof *fd) : NULL;
    if ((up && !fu) || (down && !fd))
        return FMPL_ERR_NOMEM;
    for (size_t i = 0; i < c->n + (size_t)lag; i++) {
        if (up && i < c->n) {
            fold_set(&fu[i], op, c, i, out + seg_off(c, i), COLL_FOLD_INTO);
            coll_sched_recv(s, &fu[i], (int64_t)(seg_elems(c, i) * c->es), COLL_FOLD, r + 1);
        }
        if (down && i >= (size_t)lag) {
            size_t j = i - (size_t)lag;
            fold_set(&fd[j], op, c, j, out + seg_off(c, j),
                     op->commutative ? COLL_FOLD_INTO : COLL_FOLD_LOWER);
            coll_sched_recv(s, &fd[j], (int64_t)(seg_elems(c, j) * c->es), COLL_FOLD, r - 1);
        }
        coll_sched_fence(s);
    }
    return FMPL_SUCCESS;
}

/* A rank inside a chain: gets segment i from `from` while it forwards segment i-1,
 * combined with its own, to `to`. */
static int build_link(coll_sched_t *s, const chain_segs_t *c, const char *in, int from, int to,
                      int lower_first, const coll_reduce_op_t *op)
{
    if (lower_first) { /* msg op mine, in the cell, forwarded from there */
        coll_fold_t *f = coll_sched_mem(s, c->n * sizeof *f);
        if (!f)
            return FMPL_ERR_NOMEM;
        for (size_t i = 0; i <= c->n; i++) {
            if (i > 0)
                coll_sched_send(s, &f[i - 1], (int64_t)(seg_elems(c, i - 1) * c->es), COLL_FOLD,
                                to);
            if (i < c->n) {
                fold_set(&f[i], op, c, i, (char *)(uintptr_t)in + seg_off(c, i), COLL_FOLD_KEEP);
                coll_sched_recv(s, &f[i], (int64_t)(seg_elems(c, i) * c->es), COLL_FOLD, from);
            }
            coll_sched_fence(s);
        }
        return FMPL_SUCCESS;
    }
    /* mine op msg (non-commutative suffix): into a copy of mine, two segments' room */
    size_t room = c->per * c->es;
    char *tmp = coll_sched_mem(s, 2 * room);
    coll_fold_t *f = coll_sched_mem(s, c->n * sizeof *f);
    if (!tmp || !f)
        return FMPL_ERR_NOMEM;
    for (size_t i = 0; i <= c->n; i++) {
        char *t = tmp + (i % 2) * room;
        if (i < c->n) /* its last use, segment i-2, went out in the previous round */
            coll_sched_copy(s, t, in + seg_off(c, i), seg_elems(c, i) * c->es);
        if (i > 0)
            coll_sched_send(s, tmp + ((i - 1) % 2) * room, (int64_t)(seg_elems(c, i - 1) * c->es),
                            0, to);
        if (i < c->n) {
            fold_set(&f[i], op, c, i, t, COLL_FOLD_INTO);
            coll_sched_recv(s, &f[i], (int64_t)(seg_elems(c, i) * c->es), COLL_FOLD, from);
        }
        coll_sched_fence(s);
    }
    return FMPL_SUCCESS;
}

int coll_build_reduce_chain(coll_sched_t *s, coll_group_t *g, const void *in, void *out,
                            size_t count, const coll_reduce_op_t *op, int root)
{
    const int p = g->size, r = g->rank;
    const size_t es = op->elem_size;
    if (!coll_sched_is_fold(s) || es > g->st->seg)
        return FMPL_ERR_UNSUPPORTED;
    if (count == 0)
        return FMPL_SUCCESS;
    if (r == root)
        coll_sched_copy(s, out, in, count * es);
    if (p == 1)
        return FMPL_SUCCESS;
    chain_segs_t c = {g->st->seg / es, count, es, 0};
    c.n = (count + c.per - 1) / c.per;
    if (r == root)
        return build_root(s, g, &c, out, op);
    int to = r < root ? r + 1 : r - 1;
    if (r == 0 || r == p - 1) { /* a chain's start: a segment a round */
        for (size_t i = 0; i < c.n; i++) {
            coll_sched_send(s, (const char *)in + seg_off(&c, i), (int64_t)(seg_elems(&c, i) * es),
                            0, to);
            coll_sched_fence(s);
        }
        return FMPL_SUCCESS;
    }
    int from = r < root ? r - 1 : r + 1;
    return build_link(s, &c, in, from, to, r < root || op->commutative, op);
}

int coll_build_allreduce_chain(coll_sched_t *s, coll_group_t *g, const void *in, void *out,
                               size_t count, const coll_reduce_op_t *op)
{
    int rc = coll_build_reduce_chain(s, g, in, out, count, op, 0);
    if (rc != FMPL_SUCCESS || count == 0)
        return rc;
    coll_sched_fence(s);
    return coll_build_bcast(s, g, out, count * op->elem_size, 0);
}
