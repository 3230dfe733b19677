/* allreduce_rabenseifner.c — Rabenseifner's allreduce: recursive halving reduce-scatter,
 * then recursive doubling allgather, between the p2 members coll_algo_fold_in leaves
 * (contract: algo.h). The vector is cut into p2 blocks of count / p2 elements (the first
 * count % p2 one more); in halving round k a member keeps half of its current range and
 * sends the other half to the member 2^k away, which reduces it into its own. */
#include "coll/algo/algo.h"

/* Elements of blocks [from, to). */
static int64_t span(const int64_t *cnts, int from, int to)
{
    int64_t sum = 0;
    for (int i = from; i < to; i++)
        sum += cnts[i];
    return sum;
}

/* One exchange with member peer: send at block sb, receive at block rb; ends the round. */
static void exchange(const coll_algo_t *a, const char *base, const int64_t *disps, int sb,
                     int64_t sn, char *into, int rb, int64_t rn, int peer, unsigned cell)
{
    coll_algo_recv(a, coll_algo_at(a, into, disps[rb]), rn, peer, cell);
    coll_algo_send(a, coll_algo_at(a, base, disps[sb]), sn, peer, cell);
    coll_sched_fence(a->s);
}

void coll_algo_allreduce_rabenseifner(const coll_algo_t *a, void *buf, void *tmp, int64_t count)
{
    int p2, index = coll_algo_fold_in(a, buf, tmp, count, &p2), rem = a->n - p2;
    /* (out of memory: the schedule is refused at its start) */
    int64_t *cnts = index >= 0 ? coll_sched_mem(a->s, 2 * (size_t)p2 * sizeof *cnts) : NULL;
    if (cnts) {
        int64_t *disps = cnts + p2;
        for (int i = 0; i < p2; i++) {
            cnts[i] = count / p2 + (i < count % p2);
            disps[i] = i ? disps[i - 1] + cnts[i - 1] : 0;
        }
#define MEMBER(x) ((x) < rem ? (x)*2 + 1 : (x) + rem)
        int mask = 1, send_idx = 0, recv_idx = 0, last_idx = p2;
        unsigned k = 0;
        for (; mask < p2; k++) {
            int other = index ^ mask;
            int64_t sn, rn;
            if (index < other) {
                send_idx = recv_idx + p2 / (mask * 2);
                sn = span(cnts, send_idx, last_idx);
                rn = span(cnts, recv_idx, send_idx);
            } else {
                recv_idx = send_idx + p2 / (mask * 2);
                sn = span(cnts, send_idx, recv_idx);
                rn = span(cnts, recv_idx, last_idx);
            }
            exchange(a, buf, disps, send_idx, sn, tmp, recv_idx, rn, MEMBER(other), k);
            char *mine = coll_algo_at(a, buf, disps[recv_idx]);
            coll_algo_fold(a, coll_algo_at(a, tmp, disps[recv_idx]), mine, mine, rn);
            send_idx = recv_idx;
            mask <<= 1;
            if (mask < p2)
                last_idx = recv_idx + p2 / mask;
        }
        for (mask >>= 1; mask > 0; mask >>= 1) {
            int other = index ^ mask;
            int64_t sn, rn;
            k--;
            if (index < other) {
                if (mask != p2 / 2)
                    last_idx = last_idx + p2 / (mask * 2);
                recv_idx = send_idx + p2 / (mask * 2);
                sn = span(cnts, send_idx, recv_idx);
                rn = span(cnts, recv_idx, last_idx);
            } else {
                recv_idx = send_idx - p2 / (mask * 2);
                sn = span(cnts, send_idx, last_idx);
                rn = span(cnts, recv_idx, send_idx);
            }
            exchange(a, buf, disps, send_idx, sn, buf, recv_idx, rn, MEMBER(other), k);
            if (index > other)
                send_idx = recv_idx;
        }
#undef MEMBER
    }
    coll_algo_fold_out(a, buf, count, p2);
}
