/* algo.c — what the algorithms share (contract: algo.h). */
#include "coll/algo/algo.h"

void *coll_algo_fold(const coll_algo_t *a, void *lower, void *upper, void *want, int64_t count)
{
    void *into = want;
    if (!a->commutative && (want == upper) != (a->into_upper != 0))
        into = want == upper ? lower : upper;
    a->ops->reduce(a, lower, upper, into, count);
    return into;
}
