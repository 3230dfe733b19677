/* coll_common.h — set-up shared by the coll tests: the job (boot + vnic + coll) and
 * the world group, plus the two reductions the tests check with: a wrapping sum of
 * int32 (commutative) and the product of 2x2 uint32 matrices (not commutative). */
#ifndef FMPL_COLL_COMMON_H
#define FMPL_COLL_COMMON_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "coll/coll.h"
#include "test_util.h"

typedef struct coll_job {
    boot_t *boot;
    vnic_t *v;
    int rank, size;
    coll_group_t *world;
} coll_job_t;

static inline void coll_job_start(coll_job_t *j)
{
    CHECK_RC(boot_init(&j->boot), FMPL_SUCCESS);
    CHECK_RC(vnic_open(j->boot, &j->v), FMPL_SUCCESS);
    CHECK_RC(coll_init(j->v, 0), FMPL_SUCCESS);
    j->rank = vnic_rank(j->v);
    j->size = vnic_size(j->v);
    int *members = malloc((size_t)j->size * sizeof *members);
    CHECK(members);
    for (int i = 0; i < j->size; i++)
        members[i] = i;
    CHECK_RC(coll_group_create(j->v, j->size, j->rank, members, 0, &j->world), FMPL_SUCCESS);
    free(members);
}

static inline void coll_job_end(coll_job_t *j)
{
    CHECK_RC(coll_group_free(j->world), FMPL_SUCCESS);
    coll_finalize(j->v);
    CHECK_RC(vnic_close(j->v), FMPL_SUCCESS);
    CHECK_RC(boot_finalize(j->boot), FMPL_SUCCESS);
}

/* ---- int32 wrapping sum ---- */
static void sum_i32(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    uint32_t *a = inout;
    const uint32_t *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] += b[i];
}
static const coll_reduce_op_t op_sum = {sum_i32, NULL, sizeof(uint32_t), 1};

/* Contribution of rank r to element i in test call `call`. */
static inline uint32_t val_i32(int r, size_t i, unsigned call)
{
    uint32_t x = (uint32_t)(r + 1) * 2654435761u ^ (uint32_t)i * 40503u ^ call * 97u;
    return x * (uint32_t)(i + 3);
}

/* ---- 2x2 matrix product, uint32 entries (mod 2^32) ---- */
typedef struct mat2 {
    uint32_t a, b, c, d;
} mat2_t;
static inline mat2_t mat2_mul(mat2_t x, mat2_t y)
{
    mat2_t z = {x.a * y.a + x.b * y.c, x.a * y.b + x.b * y.d, x.c * y.a + x.d * y.c,
                x.c * y.b + x.d * y.d};
    return z;
}
static void prod_mat2(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    mat2_t *a = inout;
    const mat2_t *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] = mat2_mul(a[i], b[i]);
}
static const coll_reduce_op_t op_mat = {prod_mat2, NULL, sizeof(mat2_t), 0};

static inline mat2_t val_mat(int r, size_t i, unsigned call)
{
    uint32_t s = (uint32_t)(r * 7919 + 1) ^ (uint32_t)(i * 104729u) ^ call * 31u;
    mat2_t m = {s % 5 + 1, (s >> 3) % 7, (s >> 6) % 3 + 1, (s >> 9) % 11 + 1};
    return m;
}

#endif
