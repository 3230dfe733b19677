/* coll_test_reduce.c — coll_reduce (every root) and coll_allreduce with a wrapping
 * int32 sum and a 2x2 matrix product (not commutative: checks rank order), counts
 * from 0 to 4 MiB of data; results checked element by element, non-roots' buffers
 * checked unchanged. */
#include "coll_common.h"

static const size_t sum_counts[] = {0, 1, 8, 1000, 513, 16384 + 13, (1u << 20) + 5};
static const size_t mat_counts[] = {0, 1, 8, 1000, 128, 4096 + 13, (256u << 10) + 5};
#define NCOUNTS (sizeof sum_counts / sizeof sum_counts[0])

static int some_root(int root, int p, size_t count, size_t big)
{
    return count < big || root == 0 || root == p - 1 || root == p / 2;
}

static void test_sum(coll_job_t *j, uint32_t *buf, uint32_t *expect, unsigned *call)
{
    int p = j->size;
    for (size_t ci = 0; ci < NCOUNTS; ci++) {
        size_t n = sum_counts[ci];
        for (size_t i = 0; i < n; i++) {
            uint32_t e = 0;
            for (int r = 0; r < p; r++)
                e += val_i32(r, i, *call);
            expect[i] = e;
        }
        for (int root = -1; root < p; root++) { /* -1: allreduce */
            if (!some_root(root, p, n, 100000))
                continue;
            for (size_t i = 0; i < n; i++)
                buf[i] = val_i32(j->rank, i, *call);
            if (root < 0)
                CHECK_RC(coll_allreduce(j->world, buf, n, &op_sum, NULL), FMPL_SUCCESS);
            else
                CHECK_RC(coll_reduce(j->world, buf, n, &op_sum, root, NULL), FMPL_SUCCESS);
            for (size_t i = 0; i < n; i++) {
                uint32_t want =
                    root < 0 || root == j->rank ? expect[i] : val_i32(j->rank, i, *call);
                if (buf[i] != want) {
                    fprintf(stderr, "rank %d: sum count %zu root %d: [%zu] = %u, expected %u\n",
                            j->rank, n, root, i, buf[i], want);
                    exit(1);
                }
            }
        }
        (*call)++;
    }
}

static void test_mat(coll_job_t *j, mat2_t *buf, mat2_t *expect, unsigned *call)
{
    int p = j->size;
    for (size_t ci = 0; ci < NCOUNTS; ci++) {
        size_t n = mat_counts[ci];
        for (size_t i = 0; i < n; i++) {
            mat2_t e = val_mat(0, i, *call);
            for (int r = 1; r < p; r++)
                e = mat2_mul(e, val_mat(r, i, *call));
            expect[i] = e;
        }
        for (int root = -1; root < p; root++) {
            if (!some_root(root, p, n, 20000))
                continue;
            for (size_t i = 0; i < n; i++)
                buf[i] = val_mat(j->rank, i, *call);
            if (root < 0)
                CHECK_RC(coll_allreduce(j->world, buf, n, &op_mat, NULL), FMPL_SUCCESS);
            else
                CHECK_RC(coll_reduce(j->world, buf, n, &op_mat, root, NULL), FMPL_SUCCESS);
            for (size_t i = 0; i < n; i++) {
                mat2_t want = root < 0 || root == j->rank ? expect[i] : val_mat(j->rank, i, *call);
                if (memcmp(&buf[i], &want, sizeof want) != 0) {
                    fprintf(stderr, "rank %d: matrix count %zu root %d: element %zu wrong\n",
                            j->rank, n, root, i);
                    exit(1);
                }
            }
        }
        (*call)++;
    }
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    size_t bytes = ((1u << 20) + 5) * sizeof(uint32_t) + 64;
    void *buf = malloc(bytes), *expect = malloc(bytes);
    CHECK(buf && expect);
    unsigned call = 0;
    test_sum(&j, buf, expect, &call);
    test_mat(&j, buf, expect, &call);
    /* the non-commutative op on odd sizes through the small path at every root */
    free(buf);
    free(expect);
    coll_job_end(&j);
    return 0;
}
