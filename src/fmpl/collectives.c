/* collectives.c — fmpl_barrier/bcast/reduce/allreduce/op_create: argument checks, then
 * the coll layer on the communicator's group. Pending and spooled sends keep moving
 * while a collective waits: the handler of arriving receive headers pushes them. */
#include "fmpl/fmpl_impl.h"
#include "fmpl/ops.h"

int fmpl_barrier(fmpl_comm comm)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    return coll_barrier(c->group);
}

int fmpl_bcast(void *buf, size_t size, int root, fmpl_comm comm)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    if (!buf && size)
        return FMPL_ERR_BUFFER;
    if ((unsigned)root >= (unsigned)c->size)
        return FMPL_ERR_ROOT;
    return coll_bcast(c->group, buf, size, root);
}

/* Checks the arguments of a reduction and finds its kernel. */
static int fmpli_reduce_check(const void *buf, size_t count, fmpl_type type, fmpl_op op,
                              fmpl_comm comm, fmpli_comm_t **cp, coll_reduce_op_t *rop)
{
    FMPLI_CHECK_INIT();
    fmpli_comm_t *c = fmpli_comm_get(comm);
    if (!c)
        return FMPL_ERR_COMM;
    int rc = fmpli_op_lookup(type, op, rop); /* FMPL_ERR_TYPE, FMPL_ERR_OP */
    if (rc != FMPL_SUCCESS)
        return rc;
    if (!buf && count)
        return FMPL_ERR_BUFFER;
    if (count > SIZE_MAX / rop->elem_size)
        return FMPL_ERR_ARG;
    *cp = c;
    return FMPL_SUCCESS;
}

int fmpl_reduce(void *buf, size_t count, fmpl_type type, fmpl_op op, int root, fmpl_comm comm,
                void *work)
{
    fmpli_comm_t *c;
    coll_reduce_op_t rop;
    int rc = fmpli_reduce_check(buf, count, type, op, comm, &c, &rop);
    if (rc != FMPL_SUCCESS)
        return rc;
    if ((unsigned)root >= (unsigned)c->size)
        return FMPL_ERR_ROOT;
    return coll_reduce(c->group, buf, count, &rop, root, work);
}

int fmpl_allreduce(void *buf, size_t count, fmpl_type type, fmpl_op op, fmpl_comm comm, void *work)
{
    fmpli_comm_t *c;
    coll_reduce_op_t rop;
    int rc = fmpli_reduce_check(buf, count, type, op, comm, &c, &rop);
    if (rc != FMPL_SUCCESS)
        return rc;
    return coll_allreduce(c->group, buf, count, &rop, work);
}

int fmpl_op_create(void (*fn)(void *inout, const void *in, size_t count), fmpl_op *op)
{
    FMPLI_CHECK_INIT();
    return fmpli_op_user_create(fn, op);
}
