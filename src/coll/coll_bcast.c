/* coll_bcast.c — broadcast.
 * Small (<= FMPL_COLL_BCAST_TREE_MAX): binomial tree in ranks relative to the root;
 * relative rank c receives from c - 2^k (k = lowest set bit of c) on DOWN edge k and
 * sends to c + 2^j, j < k, largest subtree first, forwarding straight from its cell.
 * Large: a pipelined chain root -> root+1 -> ... on DOWN edge 0, in segments of
 * FMPL_COLL_SEG, double buffered: a rank forwards segment i to its successor while
 * its predecessor already fills segment i+1. */
#include "coll/coll_impl.h"

static int bcast_binomial(coll_group_t *g, char *buf, size_t size, int root)
{
    int c = coll_mod(g->rank - root, g->size);
    int top = g->rounds;
    const char *src = buf;
    int rc;
    if (c != 0) {
        top = __builtin_ctz((unsigned)c);
        char *data;
        rc = coll_edge_recv(g, COLL_DIR_DOWN, top, size, &data);
        if (rc != FMPL_SUCCESS)
            return rc;
        src = data;
    }
    for (int k = top - 1; k >= 0; k--) {
        if (c + (1 << k) >= g->size)
            continue;
        rc = coll_edge_send(g, COLL_DIR_DOWN, k, src, size);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    if (c == 0)
        return FMPL_SUCCESS;
    memcpy(buf, src, size);
    return coll_edge_release(g, COLL_DIR_DOWN, top);
}

int coll_bcast_chain(coll_group_t *g, char *buf, size_t size, int root)
{
    int c = coll_mod(g->rank - root, g->size);
    int last = c == g->size - 1;
    size_t seg = g->st->seg;
    for (size_t off = 0; off < size; off += seg) {
        size_t len = BASE_MIN(seg, size - off);
        int rc;
        if (c == 0) {
            rc = coll_edge_send(g, COLL_DIR_DOWN, 0, buf + off, len);
            if (rc != FMPL_SUCCESS)
                return rc;
            continue;
        }
        char *data;
        rc = coll_edge_recv(g, COLL_DIR_DOWN, 0, len, &data);
        if (rc == FMPL_SUCCESS && !last)
            rc = coll_edge_send(g, COLL_DIR_DOWN, 0, data, len);
        if (rc != FMPL_SUCCESS)
            return rc;
        memcpy(buf + off, data, len);
        rc = coll_edge_release(g, COLL_DIR_DOWN, 0);
        if (rc != FMPL_SUCCESS)
            return rc;
    }
    return FMPL_SUCCESS;
}

int coll_bcast_impl(coll_group_t *g, void *buf, size_t size, int root)
{
    if (size <= g->st->bcast_tree_max)
        return bcast_binomial(g, buf, size, root);
    return coll_bcast_chain(g, buf, size, root);
}
