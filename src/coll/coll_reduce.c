/* coll_reduce.c — reduce and allreduce.
 * Small (<= FMPL_COLL_REDUCE_TREE_MAX bytes):
 *   allreduce: recursive doubling, an A call. With p not a power of two, the first
 *     2*rem ranks (rem = p - 2^floor(log2 p)) pair up first: even r hands its vector
 *     to r+1 (A cell K) and later gets the result back (A cell K+1). Every combination
 *     puts the lower-ranked operand first, so non-commutative ops combine in rank
 *     order and every rank gets bit-identical results.
 *   reduce, commutative op: binomial tree towards the root on UP edges (relative
 *     rank c receives from c + 2^k and sends to c - 2^k at its lowest set bit);
 *   reduce, non-commutative op: the recursive doubling above, on a private copy at
 *     non-roots (their buf stays unchanged).
 * Large: two pipelined chains meet at the root: a prefix chain 0 -> 1 -> ... -> root
 *   on DOWN edge 0 carries x0 op ... op x(r), a suffix chain p-1 -> ... -> root on UP
 *   edge 0 carries x(r) op ... op x(p-1); the root computes prefix op x op suffix.
 *   Rank order is kept, so this serves non-commutative ops as well. Allreduce = this
 *   reduction to rank 0 followed by the chain broadcast. */
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

static int allreduce_rd(coll_group_t *g, char *buf, size_t count, const coll_reduce_op_t *op)
{
    const int p = g->size, r = g->rank, K = g->st->rounds;
    const size_t n = count * op->elem_size;
    const uint64_t seq = ++g->seq_a;
    const int par = (int)(seq & 1);
    int pof2 = 1;
    while (pof2 * 2 <= p)
        pof2 *= 2;
    const int rem = p - pof2;
    int newrank, rc;
    uint64_t *flag;

    if (r < 2 * rem) {
        if ((r & 1) == 0) { /* hand my vector to r+1, get the result back */
            rc = coll_put_cell(g, r + 1, coll_a_flag_off(g, K, par), buf, n, seq);
            if (rc == FMPL_SUCCESS)
                rc = coll_a_recv(g, K + 1, seq, &flag);
            if (rc != FMPL_SUCCESS)
                return rc;
            memcpy(buf, coll_cell_data(flag, n), n);
            coll_cell_clear(flag);
            return FMPL_SUCCESS;
        }
        rc = coll_a_recv(g, K, seq, &flag);
        if (rc != FMPL_SUCCESS)
            return rc;
        combine_lower(op, coll_cell_data(flag, n), buf, count, n);
        coll_cell_clear(flag);
        newrank = r / 2;
    } else {
        newrank = r - rem;
    }
    for (int k = 0, mask = 1; mask < pof2; k++, mask <<= 1) {
        int np = newrank ^ mask;
        int partner = np < rem ? 2 * np + 1 : np + rem;
        rc = coll_put_cell(g, partner, coll_a_flag_off(g, k, par), buf, n, seq);
        if (rc == FMPL_SUCCESS)
            rc = coll_a_recv(g, k, seq, &flag);
        if (rc != FMPL_SUCCESS)
            return rc;
        char *data = coll_cell_data(flag, n);
        if (np < newrank)
            combine_lower(op, data, buf, count, n);
        else
            combine(op, buf, data, count);
        coll_cell_clear(flag);
    }
    if (r < 2 * rem)
        return coll_put_cell(g, r - 1, coll_a_flag_off(g, K + 1, par), buf, n, seq);
    return FMPL_SUCCESS;
}

static int reduce_binomial(coll_group_t *g, char *buf, size_t count, const coll_reduce_op_t *op,
                           int root)
{
    const int p = g->size;
    const size_t n = count * op->elem_size;
    const int c = coll_mod(g->rank - root, p);
    char *acc = c == 0 ? buf : NULL; /* non-roots accumulate in scratch, once needed */
    for (int k = 0; k < g->rounds; k++) {
        int rc;
        if ((c >> k) & 1)
            return coll_edge_send(g, COLL_DIR_UP, k, acc ? acc : buf, n);
        if (c + (1 << k) >= p)
            continue;
        char *data;
        rc = coll_edge_recv(g, COLL_DIR_UP, k, n, &data);
        if (rc != FMPL_SUCCESS)
            return rc;
        if (!acc) {
            acc = g->st->scratch;
            memcpy(acc, buf, n);
        }
        combine(op, acc, data, count);
        rc = coll_edge_release(g, COLL_DIR_UP, k);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
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
                rc = coll_edge_send(g, COLL_DIR_DOWN, 0, mine, len);
            } else {
                rc = coll_edge_recv(g, COLL_DIR_DOWN, 0, len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                combine(op, data, mine, ec); /* prefix op x(r) */
                rc = coll_edge_send(g, COLL_DIR_DOWN, 0, data, len);
                if (rc == FMPL_SUCCESS)
                    rc = coll_edge_release(g, COLL_DIR_DOWN, 0);
            }
        } else if (r > root) { /* suffix chain, towards lower ranks */
            if (r == p - 1) {
                rc = coll_edge_send(g, COLL_DIR_UP, 0, mine, len);
            } else {
                rc = coll_edge_recv(g, COLL_DIR_UP, 0, len, &data);
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
                rc = coll_edge_send(g, COLL_DIR_UP, 0, out, len);
                if (rc == FMPL_SUCCESS)
                    rc = coll_edge_release(g, COLL_DIR_UP, 0);
            }
        } else { /* the root: prefix op x op suffix */
            if (r < p - 1) {
                rc = coll_edge_recv(g, COLL_DIR_UP, 0, len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                combine(op, mine, data, ec);
                rc = coll_edge_release(g, COLL_DIR_UP, 0);
                if (rc != FMPL_SUCCESS)
                    return rc;
            }
            if (r > 0) {
                rc = coll_edge_recv(g, COLL_DIR_DOWN, 0, len, &data);
                if (rc != FMPL_SUCCESS)
                    return rc;
                if (op->commutative)
                    combine(op, mine, data, ec);
                else
                    combine_lower(op, data, mine, ec, len);
                rc = coll_edge_release(g, COLL_DIR_DOWN, 0);
            }
        }
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int coll_reduce_impl(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op, int root)
{
    const size_t n = count * op->elem_size;
    if (n > g->st->reduce_tree_max)
        return coll_reduce_chain(g, buf, count, op, root);
    if (op->commutative)
        return reduce_binomial(g, buf, count, op, root);
    if (g->rank == root)
        return allreduce_rd(g, buf, count, op);
    memcpy(g->st->scratch, buf, n);
    return allreduce_rd(g, g->st->scratch, count, op);
}

int coll_allreduce_impl(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op)
{
    if (count * op->elem_size <= g->st->reduce_tree_max)
        return allreduce_rd(g, buf, count, op);
    int rc = coll_reduce_chain(g, buf, count, op, 0);
    if (rc != FMPL_SUCCESS)
        return rc;
    return coll_bcast_chain(g, buf, count * op->elem_size, 0);
}
