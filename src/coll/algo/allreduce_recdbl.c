/* allreduce_recdbl.c — allreduce by recursive doubling, with the pairing of the members
 * past a power of two that Rabenseifner's algorithm shares (contract: algo.h). */
#include "coll/algo/algo.h"

int coll_algo_fold_in(const coll_algo_t *a, void *buf, void *tmp, int64_t count, int *p2)
{
    int n = a->n, me = a->me, q = 1;
    while (q * 2 <= n)
        q *= 2;
    *p2 = q;
    int rem = n - q;
    if (me >= 2 * rem)
        return me - rem;
    if (!(me & 1)) {
        coll_algo_send(a, buf, count, me + 1, a->spare);
        coll_sched_fence(a->s);
        return -1;
    }
    coll_algo_recv(a, tmp, count, me - 1, a->spare);
    coll_sched_fence(a->s);
    void *res = coll_algo_fold(a, tmp, buf, buf, count); /* me - 1's operand is the lower */
    a->ops->copy(a, buf, res, count);
    return me / 2;
}

void coll_algo_fold_out(const coll_algo_t *a, void *buf, int64_t count, int p2)
{
    int me = a->me;
    if (me >= 2 * (a->n - p2))
        return;
    if (me & 1)
        coll_algo_send(a, buf, count, me - 1, a->spare + 1);
    else
        coll_algo_recv(a, buf, count, me + 1, a->spare + 1);
}

void coll_algo_allreduce_recdbl(const coll_algo_t *a, void *buf, void *tmp, int64_t count)
{
    int p2, index = coll_algo_fold_in(a, buf, tmp, count, &p2), rem = a->n - p2;
    unsigned k = 0;
    for (int mask = 1; index >= 0 && mask < p2; mask <<= 1, k++) {
        int partner = index ^ mask, peer = partner < rem ? 2 * partner + 1 : partner + rem;
        coll_algo_recv(a, tmp, count, peer, k);
        coll_algo_send(a, buf, count, peer, k);
        coll_sched_fence(a->s);
        void *res = peer > a->me ? coll_algo_fold(a, buf, tmp, buf, count)
                                 : coll_algo_fold(a, tmp, buf, buf, count);
        a->ops->copy(a, buf, res, count);
    }
    coll_algo_fold_out(a, buf, count, p2);
}
