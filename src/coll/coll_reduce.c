/* coll_reduce.c — reduction of large vectors (small ones are tree / recursive-doubling
 * schedules, coll_gsched.c): two pipelined chains meet at the root: a prefix chain
 * 0 -> 1 -> ... -> root on DOWN edge 0 carries x0 op ... op x(r), a suffix chain
 * p-1 -> ... -> root on UP edge 0 carries x(r) op ... op x(p-1); the root computes
 * prefix op x op suffix. Rank order is kept, so this serves non-commutative ops as well.
 * Allreduce of a large vector = this reduction to rank 0 followed by the chain
 * broadcast schedule (coll.c). */
#include "coll/coll_impl.h"

static inline void combine(const coll_reduce_op_t *op, void *inout, const void *in, size_t count)
{
    op->fn(inout, in, count, op->arg);
}

/* buf = lower op buf, where lower is a cell of mine (overwritten). */
static inline void combine_lower(const coll_reduce_op_t *op, char *lower, char *buf, size_t count,
                                 size_t n)
{
    combine(op, lower, buf, count);
    memcpy(buf, lower, n);
}

int coll_reduce_chain(coll_group_t *g, char *buf, size_t count, const coll_reduce_op_t *op,
                      int root)
{
    const int p = g->size, r = g->rank;
    const size_t es = op->elem_size;
    if (es > g->st->seg)
        return FMPL_ERR_UNSUPPORTED;
    const size_t seg_elems = g->st->seg / es;
    for (size_t e0 = 0; e0 < count; e0 += seg_elems) {
        const size_t ec = BASE_MIN(seg_elems, count - e0);
        const size_t len = ec * es;
        char *mine = buf + e0 * es;
        char *data;
        int rc = FMPL_SUCCESS;
        if (r < root) { /* prefix chain, towards higher ranks */
            if (r == 0) {
                rc = coll_edge_send(g, COLL_DIR_DOWN, coll_big(g->st), mine, len);
            } else {
                rc = coll_edge_recv(g, COLL_DIR_DOWN, coll_big(g->st), len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                combine(op, data, mine, ec); /* prefix op x(r) */
                rc = coll_edge_send(g, COLL_DIR_DOWN, coll_big(g->st), data, len);
                if (rc == FMPL_SUCCESS)
                    rc = coll_edge_release(g, COLL_DIR_DOWN, coll_big(g->st));
            }
        } else if (r > root) { /* suffix chain, towards lower ranks */
            if (r == p - 1) {
                rc = coll_edge_send(g, COLL_DIR_UP, coll_big(g->st), mine, len);
            } else {
                rc = coll_edge_recv(g, COLL_DIR_UP, coll_big(g->st), len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                char *out = data;
                if (op->commutative) {
                    combine(op, data, mine, ec);
                } else {
                    out = g->st->scratch;
                    memcpy(out, mine, len);
                    combine(op, out, data, ec); /* x(r) op suffix */
                }
                rc = coll_edge_send(g, COLL_DIR_UP, coll_big(g->st), out, len);
                if (rc == FMPL_SUCCESS)
                    rc = coll_edge_release(g, COLL_DIR_UP, coll_big(g->st));
            }
        } else { /* the root: prefix op x op suffix */
            if (r < p - 1) {
                rc = coll_edge_recv(g, COLL_DIR_UP, coll_big(g->st), len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                combine(op, mine, data, ec);
                rc = coll_edge_release(g, COLL_DIR_UP, coll_big(g->st));
                if (rc != FMPL_SUCCESS)
                    return rc;
            }
            if (r > 0) {
                rc = coll_edge_recv(g, COLL_DIR_DOWN, coll_big(g->st), len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                if (op->commutative)
                    combine(op, mine, data, ec);
                else
                    combine_lower(op, data, mine, ec, len);
                rc = coll_edge_release(g, COLL_DIR_DOWN, coll_big(g->st));
            }
        }
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}
