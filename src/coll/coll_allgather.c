/* coll_allgather.c — allgather of large blocks as a schedule (small ones are Bruck
 * schedules, coll_gsched.c; contract: coll_impl.h "the large-message builders"): a ring
 * on the DOWN edges between neighbours: in step t rank r passes block r-t to r+1 and
 * gets block r-1-t from r-1, each block in segments of FMPL_COLL_SEG, one segment out
 * and one in per round: a channel's messages must be consumed in order (its
 * acknowledgements say "all up to n"), so two receives on one channel never share a
 * round; the channel's two cells let the writer run one segment ahead. */
#include "coll/coll_impl.h"

int coll_build_allgather_ring(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                              size_t size)
{
    int p = g->size, r = g->rank;
    char *rb = recv;
    size_t seg = g->st->seg;
    if (!coll_sched_is_fold(s))
        return FMPL_ERR_UNSUPPORTED;
    if (size == 0)
        return FMPL_SUCCESS;
    if (send)
        coll_sched_copy(s, rb + (size_t)r * size, send, size);
    for (int t = 0; t < p - 1; t++) {
        const char *out = rb + (size_t)coll_mod(r - t, p) * size;
        char *in = rb + (size_t)coll_mod(r - 1 - t, p) * size;
        for (size_t off = 0; off < size; off += seg) {
            int64_t len = (int64_t)BASE_MIN(seg, size - off);
            coll_sched_send(s, out + off, len, 0, coll_mod(r + 1, p));
            coll_sched_recv(s, in + off, len, 0, coll_mod(r - 1, p));
            coll_sched_fence(s);
        }
    }
    return FMPL_SUCCESS;
}
