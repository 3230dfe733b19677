/* coll_test_barrier.c — coll_barrier really separates phases: in round t every rank
 * adds 1 to a counter of every rank with a remote fetch-add, then passes a barrier
 * and must find its counter at exactly p*(t+1); a second barrier closes the round.
 * The counter is registered under key 15 (free in this test: no fmpl layer runs). */
#include "coll_common.h"

#define TEST_KEY 15u

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    uint64_t *ctr = vnic_mem_alloc(j.v, 64);
    CHECK(ctr);
    *ctr = 0;
    CHECK_RC(vnic_mr_reg_key(j.v, TEST_KEY, ctr, 64, VNIC_ACC_ALL), FMPL_SUCCESS);
    CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
    for (uint64_t t = 0; t < 300; t++) {
        for (int i = 0; i < j.size; i++) {
            int peer = (j.rank + i) % j.size;
            uint64_t old;
            CHECK_RC(vnic_atomic(j.v, VNIC_OP_FADD, peer, TEST_KEY, 0, 1, 0, &old), FMPL_SUCCESS);
        }
        CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
        uint64_t now = __atomic_load_n(ctr, __ATOMIC_ACQUIRE);
        if (now != (uint64_t)j.size * (t + 1)) {
            fprintf(stderr, "rank %d round %llu: counter %llu, expected %llu\n", j.rank,
                    (unsigned long long)t, (unsigned long long)now,
                    (unsigned long long)((uint64_t)j.size * (t + 1)));
            exit(1);
        }
        CHECK_RC(coll_barrier(j.world), FMPL_SUCCESS);
    }
    CHECK_RC(vnic_mr_dereg(j.v, TEST_KEY), FMPL_SUCCESS);
    vnic_mem_free(j.v, ctr);
    coll_job_end(&j);
    return 0;
}
