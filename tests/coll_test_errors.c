/* coll_test_errors.c — every argument check of coll.h and its code; the group stays
 * usable after each refused call. */
#include "coll_common.h"

static void bad_fn(void *inout, const void *in, size_t count, void *arg)
{
    (void)inout, (void)in, (void)count, (void)arg;
}

int main(void)
{
    coll_job_t j;
    int me0 = 0;
    coll_group_t *g = NULL;
    /* before coll_init */
    CHECK_RC(coll_group_create(NULL, 1, 0, &me0, 9, &g), FMPL_ERR_ARG);
    CHECK(coll_max_groups() == 0);
    coll_job_start(&j);
    const int p = j.size, me = j.rank;
    CHECK_RC(coll_init(j.v, 0), FMPL_ERR_INIT);
    CHECK_RC(coll_init(NULL, 0), FMPL_ERR_ARG);

    /* group creation */
    int *m = malloc((size_t)p * sizeof *m);
    CHECK(m);
    for (int i = 0; i < p; i++)
        m[i] = i;
    CHECK_RC(coll_group_create(j.v, p, me, NULL, 9, &g), FMPL_ERR_ARG);
    CHECK_RC(coll_group_create(j.v, p, me, m, 9, NULL), FMPL_ERR_ARG);
    CHECK_RC(coll_group_create(j.v, 0, 0, m, 9, &g), FMPL_ERR_ARG);
    CHECK_RC(coll_group_create(j.v, p, -1, m, 9, &g), FMPL_ERR_RANK);
    CHECK_RC(coll_group_create(j.v, p, p, m, 9, &g), FMPL_ERR_RANK);
    if (p > 1)
        CHECK_RC(coll_group_create(j.v, p, (me + 1) % p, m, 9, &g), FMPL_ERR_RANK);
    CHECK_RC(coll_group_create(j.v, p + 1, me, m, 9, &g), FMPL_ERR_ARG);
    if (p > 1) {
        int saved = m[(me + 1) % p];
        m[(me + 1) % p] = me; /* duplicate */
        CHECK_RC(coll_group_create(j.v, p, me, m, 9, &g), FMPL_ERR_ARG);
        m[(me + 1) % p] = p; /* outside the job */
        CHECK_RC(coll_group_create(j.v, p, me, m, 9, &g), FMPL_ERR_ARG);
        m[(me + 1) % p] = saved;
    }
    CHECK_RC(coll_group_create(j.v, p, me, m, (uint32_t)coll_max_groups(), &g), FMPL_ERR_BUSY);
    CHECK_RC(coll_group_free(NULL), FMPL_ERR_COMM);

    /* collectives */
    coll_group_t *w = j.world;
    char buf[64] = {0};
    CHECK_RC(coll_barrier(NULL), FMPL_ERR_COMM);
    CHECK_RC(coll_bcast(NULL, buf, 8, 0), FMPL_ERR_COMM);
    CHECK_RC(coll_bcast(w, buf, 8, -1), FMPL_ERR_ROOT);
    CHECK_RC(coll_bcast(w, buf, 8, p), FMPL_ERR_ROOT);
    CHECK_RC(coll_bcast(w, NULL, 8, 0), FMPL_ERR_BUFFER);
    CHECK_RC(coll_bcast(w, NULL, 0, 0), FMPL_SUCCESS);
    coll_reduce_op_t no_fn = {NULL, NULL, 4, 1}, no_size = {bad_fn, NULL, 0, 1},
                     huge = {bad_fn, NULL, SIZE_MAX / 2, 1};
    CHECK_RC(coll_reduce(NULL, buf, 1, &op_sum, 0, NULL), FMPL_ERR_COMM);
    CHECK_RC(coll_reduce(w, buf, 1, NULL, 0, NULL), FMPL_ERR_OP);
    CHECK_RC(coll_reduce(w, buf, 1, &no_fn, 0, NULL), FMPL_ERR_OP);
    CHECK_RC(coll_reduce(w, buf, 1, &no_size, 0, NULL), FMPL_ERR_OP);
    CHECK_RC(coll_reduce(w, buf, 1, &op_sum, p, NULL), FMPL_ERR_ROOT);
    CHECK_RC(coll_reduce(w, buf, 1, &op_sum, -1, NULL), FMPL_ERR_ROOT);
    CHECK_RC(coll_reduce(w, NULL, 1, &op_sum, 0, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(coll_reduce(w, buf, 3, &huge, 0, NULL), FMPL_ERR_ARG);
    CHECK_RC(coll_allreduce(NULL, buf, 1, &op_sum, NULL), FMPL_ERR_COMM);
    CHECK_RC(coll_allreduce(w, buf, 1, NULL, NULL), FMPL_ERR_OP);
    CHECK_RC(coll_allreduce(w, NULL, 2, &op_sum, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(coll_allreduce(w, buf, 3, &huge, NULL), FMPL_ERR_ARG);
    CHECK_RC(coll_allgather(NULL, buf, buf, 1), FMPL_ERR_COMM);
    CHECK_RC(coll_allgather(w, buf, NULL, 1), FMPL_ERR_BUFFER);
    CHECK_RC(coll_allgather(w, buf, buf, SIZE_MAX / 2 + 1), p > 1 ? FMPL_ERR_ARG : FMPL_SUCCESS);
    /* count 0 is valid everywhere, even with NULL buffers */
    CHECK_RC(coll_reduce(w, NULL, 0, &op_sum, p - 1, NULL), FMPL_SUCCESS);
    CHECK_RC(coll_allreduce(w, NULL, 0, &op_mat, NULL), FMPL_SUCCESS);
    CHECK_RC(coll_allgather(w, NULL, NULL, 0), FMPL_SUCCESS);

    /* still usable */
    uint32_t v = 2;
    CHECK_RC(coll_allreduce(w, &v, 1, &op_sum, NULL), FMPL_SUCCESS);
    CHECK(v == 2u * (uint32_t)p);
    free(m);
    coll_job_end(&j);
    return 0;
}
