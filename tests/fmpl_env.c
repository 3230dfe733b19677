/* fmpl_env.c — the life cycle: every call before fmpl_init and after fmpl_finalize
 * returns FMPL_ERR_NOT_INIT; fmpl_init twice (or after finalize) returns FMPL_ERR_INIT;
 * the clock moves forward; error strings; shared-heap memory. */
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

static void user_sum(void *inout, const void *in, size_t count)
{
    (void)inout;
    (void)in;
    (void)count;
}

/* Every call that can report FMPL_ERR_NOT_INIT does. */
static void check_not_init(void)
{
    int i = 0, n = 0, p = 0;
    char b[8] = {0};
    fmpl_comm c = 5;
    fmpl_op op;
    fmpl_status st;
    CHECK_RC(fmpl_finalize(), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &i), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &i), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, 0, &c), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_comm_free(&c), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_send(b, 1, 0, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_recv(b, 1, 0, 0, FMPL_COMM_WORLD, &st), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_isend(b, 1, 0, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_irecv(b, 1, 0, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_isend_wait(0, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_irecv_wait(0, 0, FMPL_COMM_WORLD, &st), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_sendbuf_set(NULL, 0, 0), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_sendbuf_check(&n, &p), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_send_any(b, 1, 0, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_recv_any(b, 1, 0, FMPL_COMM_WORLD, &st), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_bcast(b, 1, 0, FMPL_COMM_WORLD), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_reduce(b, 1, FMPL_INT32, FMPL_SUM, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_allreduce(b, 1, FMPL_INT32, FMPL_SUM, FMPL_COMM_WORLD, NULL), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_op_create(user_sum, &op), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_free_mem(b), FMPL_ERR_NOT_INIT);
    CHECK(fmpl_alloc_mem(64) == NULL);
    CHECK(c == 5); /* outputs untouched */
}

int main(int argc, char **argv)
{
    check_not_init();
    /* The clock and messages work without the library. */
    double t0 = fmpl_wtime();
    CHECK(t0 > 0);
    CHECK(strcmp(fmpl_error_string(FMPL_SUCCESS), "success") == 0);
    for (int code = -3; code < FMPL_ERR_LAST + 3; code++)
        CHECK(fmpl_error_string(code) != NULL && fmpl_error_string(code)[0] != 0);
    CHECK(strcmp(fmpl_error_string(FMPL_ERR_NOT_INIT), fmpl_error_string(FMPL_ERR_INIT)) != 0);

    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_ERR_INIT);
    CHECK_RC(fmpl_init(NULL, NULL), FMPL_ERR_INIT);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    CHECK(size >= 1 && rank >= 0 && rank < size);
    double t1 = fmpl_wtime();
    CHECK(t1 >= t0);
    /* Shared-heap memory: usable, 64-byte aligned, reusable. */
    for (int i = 0; i < 100; i++) {
        char *m = fmpl_alloc_mem(4096 + (size_t)i);
        CHECK(m != NULL && ((size_t)m & 63) == 0);
        memset(m, i, 4096);
        CHECK_RC(fmpl_free_mem(m), FMPL_SUCCESS);
    }
    /* A sum over all ranks proves the job is wired up. */
    int v = rank + 1;
    CHECK_RC(fmpl_allreduce(&v, 1, FMPL_INT32, FMPL_SUM, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    CHECK(v == size * (size + 1) / 2);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);

    check_not_init();
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_ERR_INIT); /* no second life */
    check_not_init();
    if (rank == 0)
        printf("fmpl_env: ok (%d ranks)\n", size);
    return 0;
}
