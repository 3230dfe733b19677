/* bcast_binomial.c — the binomial-tree broadcast (contract: algo.h). */
#include "coll/algo/algo.h"

void coll_algo_bcast_binomial(const coll_algo_t *a, void *buf, int64_t count, int root)
{
    int n = a->n, rel = coll_algo_mod(a->me - root, n), mask = 1;
    unsigned k = 0;
    for (; mask < n; mask <<= 1, k++)
        if (rel & mask) {
            coll_algo_recv(a, buf, count, coll_algo_mod(a->me - mask, n), k);
            coll_sched_fence(a->s);
            break;
        }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < n)
            coll_algo_send(a, buf, count, coll_algo_mod(a->me + mask, n),
                           (unsigned)__builtin_ctz((unsigned)mask));
}
