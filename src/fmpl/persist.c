/* persist.c — persistent collectives of the native API (fmpl_bcast_init,
 * fmpl_allreduce_init, fmpl_start, fmpl_wait, fmpl_test, fmpl_request_free): argument
 * checks and request handles over the coll layer's persistent calls (coll.h "persistent
 * calls", which also runs them on the offload board).
 *
 * A handle is (generation << 16) | index into the request table, so a freed handle (and
 * a stale copy of it) names no request even after its entry is reused; a communicator's
 * requests are freed with it (fmpl_comm_free, fmpl_finalize), after their runs end. */
#include <stdlib.h>

#include "fmpl/fmpl_impl.h"
#include "fmpl/ops.h"

#define PERSIST_MAX 65536 /* requests live at once */

typedef struct persist_entry {
    coll_persist_t *p; /* NULL: free */
    fmpl_comm comm;
    uint16_t gen; /* of the entry's current (or next) request, 1..32767 */
} persist_entry_t;

static struct {
    persist_entry_t *e;
    int n; /* entries allocated */
} persist;

static persist_entry_t *persist_get(fmpl_request h)
{
    int i = h & 0xffff;
    if (h < 0 || i >= persist.n || !persist.e[i].p || persist.e[i].gen != (h >> 16))
        return NULL;
    return &persist.e[i];
}

/* Stores p (of comm) in a free entry: its handle in *req, or FMPL_ERR_NOMEM (p freed). */
static int persist_add(coll_persist_t *p, fmpl_comm comm, fmpl_request *req)
{
    int i = 0;
    while (i < persist.n && persist.e[i].p)
        i++;
    if (i == persist.n) {
        int n = persist.n ? 2 * persist.n : 16;
        persist_entry_t *e = n <= PERSIST_MAX ? realloc(persist.e, (size_t)n * sizeof *e) : NULL;
        if (!e) {
            coll_persist_free(p);
            return FMPL_ERR_NOMEM;
        }
        for (int j = persist.n; j < n; j++)
            e[j] = (persist_entry_t){NULL, FMPL_COMM_NULL, 1};
        persist.e = e;
        persist.n = n;
    }
    persist.e[i].p = p;
    persist.e[i].comm = comm;
    *req = (fmpl_request)(persist.e[i].gen << 16 | i);
    return FMPL_SUCCESS;
}

static void persist_drop(persist_entry_t *e)
{
    coll_persist_free(e->p);
    e->p = NULL;
    e->gen = (uint16_t)(e->gen % 32767 + 1);
}

/* The checks every init makes first: *c the communicator of comm. */
static int persist_check(fmpl_comm comm, const fmpl_request *req, fmpli_comm_t **c)
{
    FMPLI_CHECK_INIT();
    *c = fmpli_comm_get(comm);
    return !*c ? FMPL_ERR_COMM : !req ? FMPL_ERR_ARG : FMPL_SUCCESS;
}

int fmpl_bcast_init(void *buf, size_t size, int root, fmpl_comm comm, fmpl_request *req)
{
    fmpli_comm_t *c;
    int rc = persist_check(comm, req, &c);
    coll_persist_t *p = rc ? NULL : coll_bcast_init(c->group, buf, size, root, &rc);
    return p ? persist_add(p, comm, req) : rc;
}

int fmpl_allreduce_init(void *buf, size_t count, fmpl_type type, fmpl_op op, fmpl_comm comm,
                        fmpl_request *req)
{
    fmpli_comm_t *c;
    coll_reduce_op_t rop;
    int rc = persist_check(comm, req, &c);
    if (rc == FMPL_SUCCESS)
        rc = fmpli_op_lookup(type, op, &rop); /* FMPL_ERR_TYPE, FMPL_ERR_OP */
    coll_persist_t *p = rc ? NULL : coll_allreduce_init(c->group, buf, count, &rop, &rc);
    return p ? persist_add(p, comm, req) : rc;
}

int fmpl_start(fmpl_request req)
{
    FMPLI_CHECK_INIT();
    persist_entry_t *e = persist_get(req);
    return e ? coll_persist_start(e->p) : FMPL_ERR_ARG;
}

int fmpl_wait(fmpl_request req)
{
    FMPLI_CHECK_INIT();
    persist_entry_t *e = persist_get(req);
    if (!e)
        return FMPL_ERR_ARG;
    return coll_persist_active(e->p) ? coll_persist_wait(e->p) : FMPL_ERR_NO_PENDING;
}

int fmpl_test(fmpl_request req, int *flag)
{
    FMPLI_CHECK_INIT();
    persist_entry_t *e = persist_get(req);
    if (!e || !flag)
        return FMPL_ERR_ARG;
    *flag = 0;
    if (!coll_persist_active(e->p))
        return FMPL_ERR_NO_PENDING;
    int err = FMPL_SUCCESS;
    *flag = coll_persist_test(e->p, &err);
    return err;
}

int fmpl_request_free(fmpl_request *req)
{
    FMPLI_CHECK_INIT();
    persist_entry_t *e = req ? persist_get(*req) : NULL;
    if (!e)
        return FMPL_ERR_ARG;
    if (coll_persist_active(e->p))
        return FMPL_ERR_BUSY;
    persist_drop(e);
    *req = FMPL_REQUEST_NULL;
    return FMPL_SUCCESS;
}

int fmpli_persist_free_comm(fmpl_comm comm)
{
    int rc = FMPL_SUCCESS;
    for (int i = 0; i < persist.n; i++) {
        persist_entry_t *e = &persist.e[i];
        if (!e->p || (comm != FMPL_COMM_NULL && e->comm != comm))
            continue;
        /* a run's own error was the program's to wait for; a failed wait is ours */
        int wrc = coll_persist_active(e->p) ? coll_persist_wait(e->p) : FMPL_SUCCESS;
        if (coll_persist_active(e->p)) {
            if (rc == FMPL_SUCCESS)
                rc = wrc;
            continue;
        }
        persist_drop(e);
    }
    if (comm == FMPL_COMM_NULL) {
        free(persist.e);
        persist.e = NULL;
        persist.n = 0;
    }
    return rc;
}
