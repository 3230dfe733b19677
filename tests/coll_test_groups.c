/* coll_test_groups.c — several groups at once: odd and even ranks (ctx 1 and 2)
 * interleaved with world collectives; a reversed-order group (group rank != world
 * rank) created and freed repeatedly in the same slot with changing ctx (slot reuse
 * without handshake); a group of the lower half while the others wait; a ctx whose
 * slot is taken (FMPL_ERR_BUSY). */
#include "coll_common.h"

static int *range_members(int p, int first, int step, int *n)
{
    int *m = malloc((size_t)p * sizeof *m);
    CHECK(m);
    *n = 0;
    for (int r = first; r < p; r += step)
        m[(*n)++] = r;
    return m;
}

static void check_group_ops(coll_group_t *g, const int *members, int gsize, int grank, unsigned it)
{
    /* allreduce sum over the members' world ranks */
    uint32_t v = val_i32(members[grank], 0, it), e = 0;
    for (int r = 0; r < gsize; r++)
        e += val_i32(members[r], 0, it);
    CHECK_RC(coll_allreduce(g, &v, 1, &op_sum, NULL), FMPL_SUCCESS);
    CHECK(v == e);
    /* matrix product in group-rank order */
    mat2_t m[3], me[3];
    for (int i = 0; i < 3; i++) {
        m[i] = val_mat(members[grank], (size_t)i, it);
        me[i] = val_mat(members[0], (size_t)i, it);
        for (int r = 1; r < gsize; r++)
            me[i] = mat2_mul(me[i], val_mat(members[r], (size_t)i, it));
    }
    CHECK_RC(coll_allreduce(g, m, 3, &op_mat, NULL), FMPL_SUCCESS);
    CHECK(memcmp(m, me, sizeof m) == 0);
    int root = (int)(it % (unsigned)gsize);
    uint64_t b = grank == root ? 0xabcdef00ull + it : 0;
    CHECK_RC(coll_bcast(g, &b, sizeof b, root), FMPL_SUCCESS);
    CHECK(b == 0xabcdef00ull + it);
    int *ranks = malloc((size_t)gsize * sizeof *ranks);
    CHECK(ranks);
    CHECK_RC(coll_allgather(g, &members[grank], ranks, sizeof(int)), FMPL_SUCCESS);
    CHECK(memcmp(ranks, members, (size_t)gsize * sizeof *ranks) == 0);
    free(ranks);
    CHECK_RC(coll_barrier(g), FMPL_SUCCESS);
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    const int p = j.size, me = j.rank;
    const uint32_t ngroups = (uint32_t)coll_max_groups();
    CHECK(ngroups >= 4);

    /* odd/even groups alongside the world */
    int n_par;
    int *par = range_members(p, me % 2, 2, &n_par);
    coll_group_t *gp;
    CHECK_RC(coll_group_create(j.v, n_par, me / 2, par, 1 + (uint32_t)(me % 2), &gp), FMPL_SUCCESS);
    for (unsigned it = 0; it < 200; it++) {
        check_group_ops(gp, par, n_par, me / 2, it);
        uint32_t v = 1;
        CHECK_RC(coll_allreduce(j.world, &v, 1, &op_sum, NULL), FMPL_SUCCESS);
        CHECK(v == (uint32_t)p);
        if (it % 3 == 0)
            CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
    }

    /* a ctx whose slot is already taken on this rank */
    coll_group_t *busy;
    CHECK_RC(coll_group_create(j.v, n_par, me / 2, par, 1 + (uint32_t)(me % 2) + ngroups, &busy),
             FMPL_ERR_BUSY);
    CHECK_RC(coll_group_free(gp), FMPL_SUCCESS);
    free(par);

    /* reversed order, re-created in slot 3 with changing ctx */
    int *rev = malloc((size_t)p * sizeof *rev);
    CHECK(rev);
    for (int i = 0; i < p; i++)
        rev[i] = p - 1 - i;
    for (unsigned round = 0; round < 20; round++) {
        coll_group_t *g;
        CHECK_RC(coll_group_create(j.v, p, p - 1 - me, rev, 3 + round * ngroups, &g), FMPL_SUCCESS);
        for (unsigned it = 0; it < 5 + round % 3; it++)
            check_group_ops(g, rev, p, p - 1 - me, round * 100 + it);
        CHECK_RC(coll_group_free(g), FMPL_SUCCESS);
    }
    free(rev);

    /* the lower half only, while the upper half waits in a world barrier */
    int half = (p + 1) / 2;
    if (me < half) {
        int *low = range_members(half, 0, 1, &n_par);
        coll_group_t *g;
        CHECK_RC(coll_group_create(j.v, half, me, low, 5, &g), FMPL_SUCCESS);
        for (unsigned it = 0; it < 50; it++)
            check_group_ops(g, low, half, me, it);
        CHECK_RC(coll_group_free(g), FMPL_SUCCESS);
        free(low);
    }
    CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
    coll_job_end(&j);
    return 0;
}
