/* coll_test_repeat.c — thousands of small collectives back to back, mixing every
 * kind (A calls and acknowledged edges), rotating roots, with a large one now and
 * then: flag reuse and double buffering under run-ahead; every result checked. */
#include "coll_common.h"

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    const int p = j.size;
    size_t big = 100000;
    unsigned char *bbuf = malloc(big);
    uint32_t *gath = malloc((size_t)p * sizeof *gath);
    CHECK(bbuf && gath);
    for (unsigned it = 0; it < 3000; it++) {
        int root = (int)(it % (unsigned)p);
        /* allreduce of 8 bytes */
        uint32_t v[2] = {val_i32(j.rank, 0, it), val_i32(j.rank, 1, it)}, e[2] = {0, 0};
        for (int r = 0; r < p; r++) {
            e[0] += val_i32(r, 0, it);
            e[1] += val_i32(r, 1, it);
        }
        CHECK_RC(coll_allreduce(j.world, v, 2, &op_sum, NULL), FMPL_SUCCESS);
        CHECK(v[0] == e[0] && v[1] == e[1]);
        /* bcast of 8 bytes, rotating root: the root may run ahead */
        uint64_t b = j.rank == root ? 0x1234567800000000ull + it : 0;
        CHECK_RC(coll_bcast(j.world, &b, sizeof b, root), FMPL_SUCCESS);
        CHECK(b == 0x1234567800000000ull + it);
        /* reduce with the matrix product: leaves may run ahead */
        mat2_t m = val_mat(j.rank, 5, it), me = val_mat(0, 5, it);
        for (int r = 1; r < p; r++)
            me = mat2_mul(me, val_mat(r, 5, it));
        CHECK_RC(coll_reduce(j.world, &m, 1, &op_mat, (root + 1) % p, NULL), FMPL_SUCCESS);
        if (j.rank == (root + 1) % p)
            CHECK(memcmp(&m, &me, sizeof m) == 0);
        else {
            mat2_t own = val_mat(j.rank, 5, it);
            CHECK(memcmp(&m, &own, sizeof m) == 0); /* non-roots' buf unchanged */
        }
        if (it % 7 == 0)
            CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
        if (it % 5 == 0) {
            uint32_t mine = val_i32(j.rank, 9, it);
            CHECK_RC(coll_allgather(j.world, &mine, gath, sizeof mine), FMPL_SUCCESS);
            for (int r = 0; r < p; r++)
                CHECK(gath[r] == val_i32(r, 9, it));
        }
        if (it % 250 == 0) { /* a pipelined one in between */
            for (size_t i = 0; i < big; i++)
                bbuf[i] = j.rank == root ? (unsigned char)(i + it) : 0;
            CHECK_RC(coll_bcast(j.world, bbuf, big, root), FMPL_SUCCESS);
            for (size_t i = 0; i < big; i++)
                CHECK(bbuf[i] == (unsigned char)(i + it));
        }
    }
    free(bbuf);
    free(gath);
    coll_job_end(&j);
    return 0;
}
