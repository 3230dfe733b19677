/* allgather_ring.c — the ring allgather's passing steps (contract: algo.h). */
#include "coll/algo/algo.h"

void coll_algo_allgather_ring(const coll_algo_t *a, void *buf, const void *own,
                              const int64_t *counts, const int64_t *displs, int64_t count,
                              int64_t seg)
{
    int n = a->n, me = a->me, right = coll_algo_mod(me + 1, n), left = coll_algo_mod(me - 1, n);
    char *mine = coll_algo_at(a, buf, counts ? displs[me] : me * count);
    int64_t mn = counts ? counts[me] : count;
    if (own && n == 1)
        a->ops->copy(a, mine, own, mn);
    for (int t = 0; t < n - 1; t++) {
        int sb = coll_algo_mod(me - t, n), rb = coll_algo_mod(me - 1 - t, n);
        int64_t sn = counts ? counts[sb] : count, rn = counts ? counts[rb] : count;
        const char *out =
            t == 0 && own ? own : coll_algo_at(a, buf, counts ? displs[sb] : sb * count);
        char *in = coll_algo_at(a, buf, counts ? displs[rb] : rb * count);
        int64_t piece = seg > 0 ? seg : (sn > rn ? sn : rn);
        int64_t off = 0;
        do { /* whole blocks: one round, empty ones included */
            if (off < rn || off == 0)
                coll_algo_recv(a, in + off * a->extent, rn - off < piece ? rn - off : piece, left,
                               0);
            if (off < sn || off == 0)
                coll_algo_send(a, out + off * a->extent, sn - off < piece ? sn - off : piece, right,
                               0);
            if (t == 0 && own && off == 0)
                a->ops->copy(a, mine, own, mn);
            coll_sched_fence(a->s);
            off += piece;
        } while (off < sn || off < rn);
    }
}
