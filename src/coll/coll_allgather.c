/* coll_allgather.c — allgather of large blocks as a schedule (small ones are Bruck
 * schedules, coll_gsched.c; contract: coll_impl.h "the large-message builders"): the
 * ring (algo/allgather_ring.c) on the DOWN edges between neighbours, each block in
 * segments of FMPL_COLL_SEG, one segment out and one in per round: a channel's messages
 * must be consumed in order (its acknowledgements say "all up to n"), so two receives on
 * one channel never share a round; the channel's two cells let the writer run one
 * segment ahead. */
#include "coll/coll_impl.h"

int coll_build_allgather_ring(coll_sched_t *s, coll_group_t *g, const void *send, void *recv,
                              size_t size)
{
    int r = g->rank;
    char *rb = recv;
    size_t seg = g->st->seg;
    if (!coll_sched_is_fold(s))
        return FMPL_ERR_UNSUPPORTED;
    if (size == 0)
        return FMPL_SUCCESS;
    if (send)
        coll_sched_copy(s, rb + (size_t)r * size, send, size);
    coll_algo_t a = coll_group_algo(s, g, NULL);
    coll_algo_allgather_ring(&a, rb, NULL, NULL, NULL, (int64_t)size, (int64_t)seg);
    return FMPL_SUCCESS;
}
