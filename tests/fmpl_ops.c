/* fmpl_ops.c — unit test of the reduction kernels (src/fmpl/ops.c): every type x op with
 * known results, AMAX/AMIN sign keeping and tie rules, complex |re|+|im|, unsupported
 * pairs, bad type/op codes, user operations (singleton, no launcher). */
#include <float.h>
#include <stdint.h>
#include <string.h>

#include "fmpl.h"
#include "fmpl/ops.h"
#include "test_util.h"

static coll_reduce_op_t get(fmpl_type t, fmpl_op o)
{
    coll_reduce_op_t r;
    CHECK_RC(fmpli_op_lookup(t, o, &r), FMPL_SUCCESS);
    CHECK(r.fn != NULL && r.commutative == 1);
    return r;
}

static void apply(fmpl_type t, fmpl_op o, void *a, const void *b, size_t n)
{
    coll_reduce_op_t r = get(t, o);
    r.fn(a, b, n, r.arg);
}

static void user_prod(void *inout, const void *in, size_t count)
{
    double *a = inout;
    const double *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] *= b[i];
}

int main(int argc, char **argv)
{
    size_t sz;
    /* Element sizes and bad codes. */
    CHECK_RC(fmpli_type_size(FMPL_INT32, &sz), FMPL_SUCCESS);
    CHECK(sz == 4);
    CHECK_RC(fmpli_type_size(FMPL_INT64, &sz), FMPL_SUCCESS);
    CHECK(sz == 8);
    CHECK_RC(fmpli_type_size(FMPL_FLOAT, &sz), FMPL_SUCCESS);
    CHECK(sz == 4);
    CHECK_RC(fmpli_type_size(FMPL_DOUBLE, &sz), FMPL_SUCCESS);
    CHECK(sz == 8);
    CHECK_RC(fmpli_type_size(FMPL_COMPLEX, &sz), FMPL_SUCCESS);
    CHECK(sz == 8);
    CHECK_RC(fmpli_type_size(FMPL_DOUBLE_COMPLEX, &sz), FMPL_SUCCESS);
    CHECK(sz == 16);
    coll_reduce_op_t r;
    CHECK_RC(fmpli_type_size(0, &sz), FMPL_ERR_TYPE);
    CHECK_RC(fmpli_type_size(7, NULL), FMPL_ERR_TYPE);
    CHECK_RC(fmpli_op_lookup(0, FMPL_SUM, &r), FMPL_ERR_TYPE);
    CHECK_RC(fmpli_op_lookup(99, FMPL_SUM, &r), FMPL_ERR_TYPE);
    CHECK_RC(fmpli_op_lookup(FMPL_INT32, 0, &r), FMPL_ERR_OP);
    CHECK_RC(fmpli_op_lookup(FMPL_INT32, 6, &r), FMPL_ERR_OP);
    CHECK_RC(fmpli_op_lookup(FMPL_INT32, FMPLI_OP_USER_BASE, &r), FMPL_ERR_OP); /* none yet */
    /* Complex numbers have no order. */
    CHECK_RC(fmpli_op_lookup(FMPL_COMPLEX, FMPL_MAX, &r), FMPL_ERR_OP);
    CHECK_RC(fmpli_op_lookup(FMPL_DOUBLE_COMPLEX, FMPL_MIN, &r), FMPL_ERR_OP);
    /* Every other pair exists, with the right element size. */
    for (fmpl_type t = FMPL_INT32; t <= FMPL_DOUBLE_COMPLEX; t++)
        for (fmpl_op o = FMPL_SUM; o <= FMPL_AMIN; o++) {
            int cplx = t == FMPL_COMPLEX || t == FMPL_DOUBLE_COMPLEX;
            if (cplx && (o == FMPL_MAX || o == FMPL_MIN))
                continue;
            coll_reduce_op_t q = get(t, o);
            CHECK_RC(fmpli_type_size(t, &sz), FMPL_SUCCESS);
            CHECK(q.elem_size == sz);
        }

    /* int32: sum, max, min, amax/amin keep the sign; ties go to the greater value;
     * INT32_MIN has the largest magnitude. */
    {
        int32_t a[6] = {1, -5, 7, -3, 3, INT32_MIN};
        int32_t b[6] = {2, 4, -9, 3, -3, INT32_MAX};
        int32_t x[6];
        memcpy(x, a, sizeof a);
        apply(FMPL_INT32, FMPL_SUM, x, b, 5);
        CHECK(x[0] == 3 && x[1] == -1 && x[2] == -2 && x[3] == 0 && x[4] == 0);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT32, FMPL_MAX, x, b, 6);
        CHECK(x[0] == 2 && x[1] == 4 && x[2] == 7 && x[3] == 3 && x[4] == 3 && x[5] == INT32_MAX);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT32, FMPL_MIN, x, b, 6);
        CHECK(x[0] == 1 && x[1] == -5 && x[2] == -9 && x[3] == -3 && x[4] == -3 &&
              x[5] == INT32_MIN);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT32, FMPL_AMAX, x, b, 6);
        CHECK(x[0] == 2 && x[1] == -5 && x[2] == -9 && x[3] == 3 && x[4] == 3 && x[5] == INT32_MIN);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT32, FMPL_AMIN, x, b, 6);
        CHECK(x[0] == 1 && x[1] == 4 && x[2] == 7 && x[3] == 3 && x[4] == 3 && x[5] == INT32_MAX);
        /* Commutativity on ties: b (op) a gives the same. */
        int32_t y[2] = {3, -3}, z[2] = {-3, 3};
        apply(FMPL_INT32, FMPL_AMAX, y, z, 2);
        CHECK(y[0] == 3 && y[1] == 3);
    }
    /* int64 */
    {
        int64_t a[3] = {INT64_C(1) << 40, -7, 0}, b[3] = {5, 6, INT64_MIN};
        int64_t x[3];
        memcpy(x, a, sizeof a);
        apply(FMPL_INT64, FMPL_SUM, x, b, 2);
        CHECK(x[0] == (INT64_C(1) << 40) + 5 && x[1] == -1);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT64, FMPL_MAX, x, b, 3);
        CHECK(x[0] == INT64_C(1) << 40 && x[1] == 6 && x[2] == 0);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT64, FMPL_MIN, x, b, 3);
        CHECK(x[0] == 5 && x[1] == -7 && x[2] == INT64_MIN);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT64, FMPL_AMAX, x, b, 3);
        CHECK(x[0] == INT64_C(1) << 40 && x[1] == -7 && x[2] == INT64_MIN);
        memcpy(x, a, sizeof a);
        apply(FMPL_INT64, FMPL_AMIN, x, b, 3);
        CHECK(x[0] == 5 && x[1] == 6 && x[2] == 0);
    }
    /* float and double */
    {
        float a[4] = {1.5f, -2.0f, 0.25f, -4.0f}, b[4] = {-3.0f, 2.0f, -0.5f, 1.0f}, x[4];
        memcpy(x, a, sizeof a);
        apply(FMPL_FLOAT, FMPL_SUM, x, b, 4);
        CHECK(x[0] == -1.5f && x[1] == 0.0f && x[2] == -0.25f && x[3] == -3.0f);
        memcpy(x, a, sizeof a);
        apply(FMPL_FLOAT, FMPL_MAX, x, b, 4);
        CHECK(x[0] == 1.5f && x[1] == 2.0f && x[2] == 0.25f && x[3] == 1.0f);
        memcpy(x, a, sizeof a);
        apply(FMPL_FLOAT, FMPL_MIN, x, b, 4);
        CHECK(x[0] == -3.0f && x[1] == -2.0f && x[2] == -0.5f && x[3] == -4.0f);
        memcpy(x, a, sizeof a);
        apply(FMPL_FLOAT, FMPL_AMAX, x, b, 4);
        CHECK(x[0] == -3.0f && x[1] == 2.0f && x[2] == -0.5f && x[3] == -4.0f);
        memcpy(x, a, sizeof a);
        apply(FMPL_FLOAT, FMPL_AMIN, x, b, 4);
        CHECK(x[0] == 1.5f && x[1] == 2.0f && x[2] == 0.25f && x[3] == 1.0f);

        double c[3] = {1e300, -1e-300, -7.0}, d[3] = {-1e301, 1e-301, 7.0}, y[3];
        memcpy(y, c, sizeof c);
        apply(FMPL_DOUBLE, FMPL_SUM, y, d, 3);
        CHECK(y[2] == 0.0);
        memcpy(y, c, sizeof c);
        apply(FMPL_DOUBLE, FMPL_MAX, y, d, 3);
        CHECK(y[0] == 1e300 && y[1] == 1e-301 && y[2] == 7.0);
        memcpy(y, c, sizeof c);
        apply(FMPL_DOUBLE, FMPL_MIN, y, d, 3);
        CHECK(y[0] == -1e301 && y[1] == -1e-300 && y[2] == -7.0);
        memcpy(y, c, sizeof c);
        apply(FMPL_DOUBLE, FMPL_AMAX, y, d, 3);
        CHECK(y[0] == -1e301 && y[1] == -1e-300 && y[2] == 7.0);
        memcpy(y, c, sizeof c);
        apply(FMPL_DOUBLE, FMPL_AMIN, y, d, 3);
        CHECK(y[0] == 1e300 && y[1] == 1e-301 && y[2] == 7.0);
    }
    /* complex: magnitude |re| + |im|; sign (both parts) kept. */
    {
        float a[6] = {1, 2, -3, 0, 0.5f, 0.5f}, b[6] = {-2, -2, 1, 1, -0.5f, -0.5f}, x[6];
        memcpy(x, a, sizeof a);
        apply(FMPL_COMPLEX, FMPL_SUM, x, b, 3);
        CHECK(x[0] == -1 && x[1] == 0 && x[2] == -2 && x[3] == 1 && x[4] == 0 && x[5] == 0);
        memcpy(x, a, sizeof a);
        apply(FMPL_COMPLEX, FMPL_AMAX, x, b, 3);
        /* |1|+|2|=3 < 4; |-3|+0=3 > 2; tie 1 == 1 -> greater real part (0.5). */
        CHECK(x[0] == -2 && x[1] == -2 && x[2] == -3 && x[3] == 0 && x[4] == 0.5f && x[5] == 0.5f);
        memcpy(x, a, sizeof a);
        apply(FMPL_COMPLEX, FMPL_AMIN, x, b, 3);
        CHECK(x[0] == 1 && x[1] == 2 && x[2] == 1 && x[3] == 1 && x[4] == 0.5f && x[5] == 0.5f);
        /* |re| + |im| differs from the modulus: (3,0) has modulus 3 but (2,2) has
         * modulus 2.83 and |re|+|im| = 4, so BLACS's rule picks (2,2). */
        double c[2] = {3, 0}, d[2] = {2, 2};
        apply(FMPL_DOUBLE_COMPLEX, FMPL_AMAX, c, d, 1);
        CHECK(c[0] == 2 && c[1] == 2);
        double e[4] = {1, -1, 4, 4}, f[4] = {0.5, 0.25, -1, -1};
        apply(FMPL_DOUBLE_COMPLEX, FMPL_SUM, e, f, 2);
        CHECK(e[0] == 1.5 && e[1] == -0.75 && e[2] == 3 && e[3] == 3);
        double g[2] = {1, -1}, h[2] = {0.5, 0.25};
        apply(FMPL_DOUBLE_COMPLEX, FMPL_AMIN, g, h, 1);
        CHECK(g[0] == 0.5 && g[1] == 0.25);
    }
    /* count 0 touches nothing. */
    {
        int32_t a = 5, b = 6;
        apply(FMPL_INT32, FMPL_SUM, &a, &b, 0);
        CHECK(a == 5);
    }

    /* User operations need the library (singleton here). */
    fmpl_op uop;
    CHECK_RC(fmpl_op_create(user_prod, &uop), FMPL_ERR_NOT_INIT);
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    CHECK_RC(fmpl_op_create(NULL, &uop), FMPL_ERR_ARG);
    CHECK_RC(fmpl_op_create(user_prod, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_op_create(user_prod, &uop), FMPL_SUCCESS);
    CHECK(uop >= FMPLI_OP_USER_BASE);
    {
        double a[3] = {2, 3, -1}, b[3] = {4, 0.5, 6};
        apply(FMPL_DOUBLE, uop, a, b, 3);
        CHECK(a[0] == 8 && a[1] == 1.5 && a[2] == -6);
        /* Through the public reduction, singleton: the result is the input. */
        double v[2] = {1.25, -2};
        CHECK_RC(fmpl_allreduce(v, 2, FMPL_DOUBLE, uop, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
        CHECK(v[0] == 1.25 && v[1] == -2);
    }
    /* The table has a bound; running out is FMPL_ERR_NOMEM. */
    int made = 1, rc;
    fmpl_op extra;
    while ((rc = fmpl_op_create(user_prod, &extra)) == FMPL_SUCCESS)
        made++;
    CHECK(rc == FMPL_ERR_NOMEM && made == FMPLI_OP_USER_MAX);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    printf("fmpl_ops: ok\n");
    return 0;
}
