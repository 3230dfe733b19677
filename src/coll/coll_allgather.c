/* coll_allgather.c — allgather of large blocks (small ones are Bruck schedules,
 * coll_gsched.c): a ring on DOWN edge 0: in step s rank r passes block r-s to r+1 and
 * gets block r-1-s from r-1, each block in segments of FMPL_COLL_SEG. */
#include "coll/coll_impl.h"

int coll_allgather_ring(coll_group_t *g, char *recv, size_t size)
{
    int p = g->size, r = g->rank;
    size_t seg = g->st->seg;
    for (int s = 0; s < p - 1; s++) {
        char *out = recv + (size_t)coll_mod(r - s, p) * size;
        char *in = recv + (size_t)coll_mod(r - 1 - s, p) * size;
        for (size_t off = 0; off < size; off += seg) {
            size_t len = BASE_MIN(seg, size - off);
            char *data;
            int rc = coll_edge_send(g, COLL_DIR_DOWN, coll_big(g->st), out + off, len);
            if (rc == FMPL_SUCCESS)
                rc = coll_edge_recv(g, COLL_DIR_DOWN, coll_big(g->st), len, &data);
            if (rc != FMPL_SUCCESS)
                return rc;
            memcpy(in + off, data, len);
            rc = coll_edge_release(g, COLL_DIR_DOWN, coll_big(g->st));
            if (rc != FMPL_SUCCESS)
                return rc;
        }
    }
    return FMPL_SUCCESS;
}
