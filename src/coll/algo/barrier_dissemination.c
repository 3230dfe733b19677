/* barrier_dissemination.c — the dissemination barrier (contract: algo.h). */
#include "coll/algo/algo.h"

void coll_algo_barrier_dissemination(const coll_algo_t *a, int at_once)
{
    int n = a->n, me = a->me;
    unsigned k = 0;
    for (int d = 1; d < n; d = at_once ? d + 1 : 2 * d, k++) {
        coll_algo_recv(a, NULL, 0, coll_algo_mod(me - d, n), k);
        coll_algo_send(a, NULL, 0, coll_algo_mod(me + d, n), k);
        if (!at_once)
            coll_sched_fence(a->s);
    }
}
