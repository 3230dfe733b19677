/* ops.c — reduction kernels (see ops.h for the semantics of each operation). */
#include "fmpl/ops.h"

#include <stdint.h>

typedef struct fmpli_cfloat {
    float re, im;
} fmpli_cfloat;
typedef struct fmpli_cdouble {
    double re, im;
} fmpli_cdouble;

/* ---- magnitudes ---- */
static inline uint32_t mag_i32(int32_t x)
{
    return x < 0 ? 0u - (uint32_t)x : (uint32_t)x;
}
static inline uint64_t mag_i64(int64_t x)
{
    return x < 0 ? 0u - (uint64_t)x : (uint64_t)x;
}
static inline float mag_f(float x)
{
    return x < 0 ? -x : x;
}
static inline double mag_d(double x)
{
    return x < 0 ? -x : x;
}

/* ---- real kernels ---- */
#define FMPLI_REAL_KERNELS(name, T, MAG)                                                           \
    static void name##_sum(void *inout, const void *in, size_t n, void *arg)                       \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            a[i] = (T)(a[i] + b[i]);                                                               \
    }                                                                                              \
    static void name##_max(void *inout, const void *in, size_t n, void *arg)                       \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            if (b[i] > a[i])                                                                       \
                a[i] = b[i];                                                                       \
    }                                                                                              \
    static void name##_min(void *inout, const void *in, size_t n, void *arg)                       \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++)                                                             \
            if (b[i] < a[i])                                                                       \
                a[i] = b[i];                                                                       \
    }                                                                                              \
    static void name##_amax(void *inout, const void *in, size_t n, void *arg)                      \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (MAG(b[i]) > MAG(a[i]) || (MAG(b[i]) == MAG(a[i]) && b[i] > a[i]))                  \
                a[i] = b[i];                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void name##_amin(void *inout, const void *in, size_t n, void *arg)                      \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            if (MAG(b[i]) < MAG(a[i]) || (MAG(b[i]) == MAG(a[i]) && b[i] > a[i]))                  \
                a[i] = b[i];                                                                       \
        }                                                                                          \
    }

FMPLI_REAL_KERNELS(i32, int32_t, mag_i32)
FMPLI_REAL_KERNELS(i64, int64_t, mag_i64)
FMPLI_REAL_KERNELS(flt, float, mag_f)
FMPLI_REAL_KERNELS(dbl, double, mag_d)

/* ---- complex kernels: magnitude |re| + |im| (BLACS) ---- */
#define FMPLI_COMPLEX_KERNELS(name, T, R, MAG)                                                     \
    static void name##_sum(void *inout, const void *in, size_t n, void *arg)                       \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            a[i].re += b[i].re;                                                                    \
            a[i].im += b[i].im;                                                                    \
        }                                                                                          \
    }                                                                                              \
    /* 1 when b beats a on a magnitude tie: greater real part, then greater imaginary. */          \
    static inline int name##_tie(const T *a, const T *b)                                           \
    {                                                                                              \
        return b->re > a->re || (b->re == a->re && b->im > a->im);                                 \
    }                                                                                              \
    static void name##_amax(void *inout, const void *in, size_t n, void *arg)                      \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            R ma = MAG(a[i].re) + MAG(a[i].im);                                                    \
            R mb = MAG(b[i].re) + MAG(b[i].im);                                                    \
            if (mb > ma || (mb == ma && name##_tie(&a[i], &b[i])))                                 \
                a[i] = b[i];                                                                       \
        }                                                                                          \
    }                                                                                              \
    static void name##_amin(void *inout, const void *in, size_t n, void *arg)                      \
    {                                                                                              \
        (void)arg;                                                                                 \
        T *a = inout;                                                                              \
        const T *b = in;                                                                           \
        for (size_t i = 0; i < n; i++) {                                                           \
            R ma = MAG(a[i].re) + MAG(a[i].im);                                                    \
            R mb = MAG(b[i].re) + MAG(b[i].im);                                                    \
            if (mb < ma || (mb == ma && name##_tie(&a[i], &b[i])))                                 \
                a[i] = b[i];                                                                       \
        }                                                                                          \
    }

FMPLI_COMPLEX_KERNELS(cflt, fmpli_cfloat, float, mag_f)
FMPLI_COMPLEX_KERNELS(cdbl, fmpli_cdouble, double, mag_d)

/* ---- tables ---- */

typedef struct fmpli_type_info {
    size_t size;
    coll_reduce_fn fn[6]; /* indexed by fmpl_op (1..5); NULL: unsupported */
} fmpli_type_info_t;

static const fmpli_type_info_t fmpli_types[7] = {
    [FMPL_INT32] = {sizeof(int32_t), {NULL, i32_sum, i32_max, i32_min, i32_amax, i32_amin}},
    [FMPL_INT64] = {sizeof(int64_t), {NULL, i64_sum, i64_max, i64_min, i64_amax, i64_amin}},
    [FMPL_FLOAT] = {sizeof(float), {NULL, flt_sum, flt_max, flt_min, flt_amax, flt_amin}},
    [FMPL_DOUBLE] = {sizeof(double), {NULL, dbl_sum, dbl_max, dbl_min, dbl_amax, dbl_amin}},
    [FMPL_COMPLEX] = {sizeof(fmpli_cfloat), {NULL, cflt_sum, NULL, NULL, cflt_amax, cflt_amin}},
    [FMPL_DOUBLE_COMPLEX] = {sizeof(fmpli_cdouble),
                             {NULL, cdbl_sum, NULL, NULL, cdbl_amax, cdbl_amin}},
};

typedef struct fmpli_user_op {
    void (*fn)(void *inout, const void *in, size_t count);
} fmpli_user_op_t;

static fmpli_user_op_t fmpli_user_ops[FMPLI_OP_USER_MAX];
static int fmpli_nuser_ops;

static void fmpli_user_apply(void *inout, const void *in, size_t count, void *arg)
{
    const fmpli_user_op_t *u = arg;
    u->fn(inout, in, count);
}

int fmpli_type_size(fmpl_type type, size_t *size)
{
    if (type < FMPL_INT32 || type > FMPL_DOUBLE_COMPLEX)
        return FMPL_ERR_TYPE;
    if (size)
        *size = fmpli_types[type].size;
    return FMPL_SUCCESS;
}

int fmpli_op_lookup(fmpl_type type, fmpl_op op, coll_reduce_op_t *out)
{
    if (type < FMPL_INT32 || type > FMPL_DOUBLE_COMPLEX)
        return FMPL_ERR_TYPE;
    const fmpli_type_info_t *t = &fmpli_types[type];
    if (op >= FMPLI_OP_USER_BASE && op < FMPLI_OP_USER_BASE + fmpli_nuser_ops) {
        out->fn = fmpli_user_apply;
        out->arg = &fmpli_user_ops[op - FMPLI_OP_USER_BASE];
    } else if (op >= FMPL_SUM && op <= FMPL_AMIN && t->fn[op]) {
        out->fn = t->fn[op];
        out->arg = NULL;
    } else {
        return FMPL_ERR_OP;
    }
    out->elem_size = t->size;
    out->commutative = 1;
    return FMPL_SUCCESS;
}

int fmpli_op_user_create(void (*fn)(void *inout, const void *in, size_t count), fmpl_op *op)
{
    if (!fn || !op)
        return FMPL_ERR_ARG;
    if (fmpli_nuser_ops >= FMPLI_OP_USER_MAX)
        return FMPL_ERR_NOMEM;
    fmpli_user_ops[fmpli_nuser_ops].fn = fn;
    *op = FMPLI_OP_USER_BASE + fmpli_nuser_ops++;
    return FMPL_SUCCESS;
}
