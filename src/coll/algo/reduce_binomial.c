/* reduce_binomial.c — the binomial-tree reduction (contract: algo.h). */
#include "coll/algo/algo.h"

/* The result goes from member 0 on to root: directly, or, with cells (members 2^k apart
 * only), along 0, 2^a, 2^a + 2^b, ... (the set bits of root, lowest first), each hop on
 * cell spare (every member sends and receives on it at most once). */
static void forward(const coll_algo_t *a, const void *result, void *out, int64_t count, int root)
{
    int me = a->me;
    if (!a->cells) {
        if (me == 0) {
            coll_algo_send(a, result, count, root, a->spare);
        } else if (me == root) {
            coll_sched_fence(a->s); /* our operand (perhaps out itself) has left */
            coll_algo_recv(a, out, count, 0, a->spare);
        }
        return;
    }
    void *hop = NULL;
    for (int k = 0, from = 0; (1 << k) <= root; k++) {
        if (!(root & (1 << k)))
            continue;
        int to = from + (1 << k);
        if (me == from) {
            coll_algo_send(a, from == 0 ? result : hop, count, to, a->spare);
        } else if (me == to) {
            if (to != root)
                hop = a->ops->scratch(a, count);
            coll_algo_recv(a, to == root ? out : hop, count, from, a->spare);
        }
        coll_sched_fence(a->s);
        from = to;
    }
}

void coll_algo_reduce_binomial(const coll_algo_t *a, const void *in, void *out, int64_t count,
                               int root)
{
    int n = a->n, me = a->me, vroot = a->commutative ? root : 0;
    int rel = coll_algo_mod(me - vroot, n);
    void *acc = (void *)in, *tmp = NULL;
    unsigned k = 0;
    for (int mask = 1; mask < n; mask <<= 1, k++) {
        if (rel & mask) {
            coll_algo_send(a, acc, count, coll_algo_mod(me - mask, n), k);
            coll_sched_fence(a->s);
            break;
        }
        if (rel + mask >= n)
            continue;
        if (!tmp) { /* a subtree's partial result: in out at a commutative root */
            tmp = a->ops->scratch(a, count);
            acc = me == root && a->commutative ? out : a->ops->scratch(a, count);
            a->ops->copy(a, acc, in, count);
        }
        coll_algo_recv(a, tmp, count, coll_algo_mod(me + mask, n), k);
        coll_sched_fence(a->s);
        /* acc holds the lower members' operands (a subtree covers consecutive ones) */
        void *res = coll_algo_fold(a, acc, tmp, acc, count);
        if (res != acc) {
            tmp = acc;
            acc = res;
        }
    }
    if (vroot == root) {
        if (me == root)
            a->ops->copy(a, out, acc, count);
        return;
    }
    forward(a, acc, out, count, root);
}
