/* coll_allgather.c — allgather of equal blocks.
 * Small (every round's message <= FMPL_COLL_ALLGATHER_BRUCK_MAX): Bruck's algorithm,
 * an A call: in round k rank r sends the blocks it holds, r .. r+min(2^k, p-2^k)-1,
 * to r - 2^k and receives as many from r + 2^k; ceil(log2 p) rounds for any p, the
 * blocks written straight to their final place (no rotation).
 * Large: a ring on DOWN edge 0: in step s rank r passes block r-s to r+1 and gets
 * block r-1-s from r-1, each block in segments of FMPL_COLL_SEG. */
#include "coll/coll_impl.h"

static size_t bruck_max_message(int p, size_t size)
{
    size_t m = 0;
    for (long long d = 1; d < p; d <<= 1)
        m = BASE_MAX(m, (size_t)BASE_MIN(d, p - d) * size);
    return m;
}

static int allgather_bruck(coll_group_t *g, char *recv, size_t size)
{
    int p = g->size, r = g->rank;
    uint64_t seq = ++g->seq_a;
    for (int k = 0; (1 << k) < p; k++) {
        int d = 1 << k;
        int cnt = BASE_MIN(d, p - d);
        /* my first cnt blocks, r .. r+cnt-1 (mod p): at most two runs in recv */
        int run1 = BASE_MIN(cnt, p - r);
        int rc = coll_put_cell2(g, coll_mod(r - d, p), coll_a_flag_off(g, k, (int)(seq & 1)),
                                recv + (size_t)r * size, (size_t)run1 * size, recv,
                                (size_t)(cnt - run1) * size, seq);
        if (rc != FMPL_SUCCESS)
            return rc;
        uint64_t *flag;
        rc = coll_a_recv(g, k, seq, &flag);
        if (rc != FMPL_SUCCESS)
            return rc;
        const char *data = coll_cell_data(flag, (size_t)cnt * size);
        int from = coll_mod(r + d, p);
        int in1 = BASE_MIN(cnt, p - from);
        memcpy(recv + (size_t)from * size, data, (size_t)in1 * size);
        memcpy(recv, data + (size_t)in1 * size, (size_t)(cnt - in1) * size);
        coll_cell_clear(flag);
    }
    return FMPL_SUCCESS;
}

static int allgather_ring(coll_group_t *g, char *recv, size_t size)
{
    int p = g->size, r = g->rank;
    size_t seg = g->st->seg;
    for (int s = 0; s < p - 1; s++) {
        char *out = recv + (size_t)coll_mod(r - s, p) * size;
        char *in = recv + (size_t)coll_mod(r - 1 - s, p) * size;
        for (size_t off = 0; off < size; off += seg) {
            size_t len = BASE_MIN(seg, size - off);
            char *data;
            int rc = coll_edge_send(g, COLL_DIR_DOWN, 0, out + off, len);
            if (rc == FMPL_SUCCESS)
                rc = coll_edge_recv(g, COLL_DIR_DOWN, 0, len, &data);
            if (rc != FMPL_SUCCESS)
                return rc;
            memcpy(in + off, data, len);
            rc = coll_edge_release(g, COLL_DIR_DOWN, 0);
            if (rc != FMPL_SUCCESS)
                return rc;
        }
    }
    return FMPL_SUCCESS;
}

int coll_allgather_impl(coll_group_t *g, void *recv, size_t size)
{
    if (bruck_max_message(g->size, size) <= g->st->allgather_bruck_max)
        return allgather_bruck(g, recv, size);
    return allgather_ring(g, recv, size);
}
