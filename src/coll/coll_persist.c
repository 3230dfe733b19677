/* coll_persist.c — persistent bcast and allreduce of the native API (contract: coll.h
 * "persistent calls").
 *
 * A persistent call is made once, alike on every member, and run at each start. Its run
 * is one of two schedules, chosen at init (coll_offload_take decides alike everywhere):
 *   - on the offload board (coll_offload.c): a schedule of two local steps (begin, then
 *     the until step), started in the background at once. After the start the member's
 *     CPU is not needed: the members that wait move and reduce its data;
 *   - else the algorithm of the blocking call with the same arguments (coll.c), built
 *     once, each run queued on the group (coll_group_enqueue) behind this member's earlier
 *     queued runs.
 * Both kinds of run are ordered: a blocking call on the group waits for them first
 * (coll_group_quiesce), which is what makes the native contract "starts are collective
 * in the group's call order" enough for the mailboxes. */
#include <stdlib.h>

#include "coll/coll_impl.h"

struct coll_persist {
    coll_group_t *g;
    coll_sched_t *s;   /* NULL: nothing moves (no bytes, or a group of one) */
    coll_offload_t *o; /* the board's run, or NULL (queued runs of s) */
    int active;        /* started, and not yet reaped by test or wait */
    int done, err;     /* the run is complete, with this FMPL code */
};

static coll_persist_t *persist_new(coll_group_t *g, int *rc)
{
    coll_persist_t *p = calloc(1, sizeof *p);
    if (!p)
        *rc = FMPL_ERR_NOMEM;
    else
        p->g = g;
    return p;
}

/* p with its schedule s built (NULL: *rc says why), or NULL with p freed. */
static coll_persist_t *persist_built(coll_persist_t *p, coll_sched_t *s, int *rc)
{
    if (!s) {
        free(p);
        return NULL;
    }
    p->s = s;
    *rc = FMPL_SUCCESS;
    return p;
}

/* An empty schedule for the board's steps on g (NULL: *rc set). */
static coll_sched_t *persist_board_sched(coll_group_t *g, int *rc)
{
    coll_sched_t *s = coll_group_sched(g);
    if (!s)
        *rc = FMPL_ERR_NOMEM;
    return s;
}

static int group_usable(const coll_group_t *g)
{
    return g && g->magic == COLL_GROUP_MAGIC;
}

/* The rest of an init whose arguments are checked: bcast of n bytes from root, or
 * allreduce of n elements of op (bytes in all). */
static coll_persist_t *persist_init(coll_group_t *g, int bcast, void *buf, size_t n, size_t bytes,
                                    int root, const coll_reduce_op_t *op, int *rc)
{
    coll_persist_t *p = persist_new(g, rc);
    if (!p || bytes == 0 || g->size == 1)
        return p;
    int entry;
    uint64_t seq;
    if ((!bcast && !op->commutative) || !coll_offload_take(g, bytes, 1, &entry, &seq))
        return persist_built(p,
                             bcast ? coll_sched_for_bcast(g, buf, n, root, rc)
                                   : coll_sched_for_allreduce(g, buf, n, op, rc),
                             rc);
    coll_sched_t *s = persist_board_sched(g, rc);
    if (s) {
        unsigned f = COLL_OFFLOAD_PERSISTENT | COLL_OFFLOAD_ORDERED;
        p->o = bcast ? coll_offload_bcast(s, g, entry, seq, f, buf, n, root)
                     : coll_offload_allreduce(s, g, entry, seq, f, buf, buf, n, op);
        coll_offload_steps(s, p->o, NULL); /* (o NULL: s is refused at start) */
    }
    return persist_built(p, s, rc);
}

coll_persist_t *coll_bcast_init(coll_group_t *g, void *buf, size_t size, int root, int *rc)
{
    *rc = !group_usable(g)              ? FMPL_ERR_COMM
          : root < 0 || root >= g->size ? FMPL_ERR_ROOT
          : !buf && size                ? FMPL_ERR_BUFFER
                                        : FMPL_SUCCESS;
    return *rc ? NULL : persist_init(g, 1, buf, size, size, root, NULL, rc);
}

coll_persist_t *coll_allreduce_init(coll_group_t *g, void *buf, size_t count,
                                    const coll_reduce_op_t *op, int *rc)
{
    *rc = !group_usable(g)                                    ? FMPL_ERR_COMM
          : !op || !op->fn || !op->elem_size                  ? FMPL_ERR_OP
          : !buf && count                                     ? FMPL_ERR_BUFFER
          : op->elem_size && count > SIZE_MAX / op->elem_size ? FMPL_ERR_ARG
                                                              : FMPL_SUCCESS;
    return *rc ? NULL : persist_init(g, 0, buf, count, count * op->elem_size, 0, op, rc);
}

static void persist_done(void *arg, int err)
{
    coll_persist_t *p = arg;
    p->err = err;
    p->done = 1;
}

int coll_persist_start(coll_persist_t *p)
{
    if (p->active)
        return FMPL_ERR_BUSY;
    p->done = !p->s;
    p->err = FMPL_SUCCESS;
    int rc = FMPL_SUCCESS;
    if (p->o)
        rc = coll_sched_start(p->s, 0, 1, persist_done, p) ? FMPL_ERR_NOMEM : FMPL_SUCCESS;
    else if (p->s)
        rc = coll_group_enqueue(p->g, p->s, persist_done, p);
    p->active = rc == FMPL_SUCCESS;
    return rc;
}

int coll_persist_active(const coll_persist_t *p)
{
    return p->active;
}

int coll_persist_test(coll_persist_t *p, int *err)
{
    if (!p->done) {
        if (p->o)
            coll_sched_poll(p->s);
        else
            vnic_progress(p->g->v); /* the engine's hook advances the queued runs */
    }
    if (!p->done)
        return 0;
    p->active = 0;
    *err = p->err;
    return 1;
}

static int persist_ready(void *arg)
{
    return ((const coll_persist_t *)arg)->done;
}

int coll_persist_wait(coll_persist_t *p)
{
    int rc = FMPL_SUCCESS;
    if (!p->done && p->o)
        rc = coll_sched_wait(p->s); /* advanced from this wait alone, as a blocking run */
    if (rc == FMPL_SUCCESS && !p->done)
        rc = vnic_wait(p->g->v, persist_ready, p, -1);
    if (rc != FMPL_SUCCESS)
        return rc;
    p->active = 0;
    return p->err;
}

int coll_persist_free(coll_persist_t *p)
{
    if (!p)
        return FMPL_SUCCESS;
    if (p->active)
        return FMPL_ERR_BUSY;
    coll_sched_free(p->s);
    free(p);
    return FMPL_SUCCESS;
}
