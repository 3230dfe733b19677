/* coll_barrier.c — dissemination barrier: in round k, rank r raises the flag of A cell
 * k at rank r + 2^k and waits for its own, raised by r - 2^k; ceil(log2 p) rounds for
 * any p. An A call: the flags' parity alternates with the group's A sequence. */
#include "coll/coll_impl.h"

int coll_barrier_impl(coll_group_t *g)
{
    uint64_t seq = ++g->seq_a;
    int par = (int)(seq & 1);
    for (int k = 0; k < g->rounds; k++) {
        int rc = coll_put_word(g, coll_mod(g->rank + (1 << k), g->size), coll_a_flag_off(g, k, par),
                               seq);
        if (rc != FMPL_SUCCESS)
            return rc;
        uint64_t *flag;
        rc = coll_a_recv(g, k, seq, &flag);
        if (rc != FMPL_SUCCESS)
            return rc;
        coll_cell_clear(flag);
    }
    return FMPL_SUCCESS;
}
