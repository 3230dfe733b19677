/* op.c — MPI reduction operations (see mpi_impl.h): the predefined ops and their
 * kernels on every type MPI-4.0 section 6.9.2 allows (and, as MPICH, the logical ops on
 * the multi-language types), user ops, MPI_Reduce_local, and
 * mpii_op_apply, the kernel call of the collectives.
 *
 * Predefined ops are static objects behind the fixed indices 1..14 (no init needed);
 * user ops live in the FMPL_MPI_KIND_OP table. Predefined ops dispatch on the type id
 * carried in a predefined datatype handle; on a derived datatype only user ops (and
 * MPI_REPLACE / MPI_NO_OP) apply. */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/coll_impl.h"

enum { OP_NPREDEF = 15 }; /* indices 1..14 */
#define PRE                                                                                        \
    {                                                                                              \
        .refs = 1, .commute = 1                                                                    \
    }
static mpii_op_t preops[OP_NPREDEF] = {
    [1] = PRE, [2] = PRE, [3] = PRE,  [4] = PRE,  [5] = PRE,  [6] = PRE,  [7] = PRE,
    [8] = PRE, [9] = PRE, [10] = PRE, [11] = PRE, [12] = PRE, [13] = PRE, [14] = PRE,
};
#undef PRE

#define OPX(h) FMPL_MPI_HANDLE_INDEX(h)

mpii_op_t *mpii_op_get(MPI_Op h)
{
    if (FMPL_MPI_HANDLE_KIND(h) != FMPL_MPI_KIND_OP)
        return NULL;
    int i = OPX(h);
    if (i > 0 && i < OP_NPREDEF)
        return &preops[i];
    if (i < FMPL_MPI_PREDEF_MAX)
        return NULL;
    return mpii_handle_get(FMPL_MPI_KIND_OP, h);
}

void mpii_op_release(mpii_op_t *o)
{
    if (o && !(o >= preops && o < preops + OP_NPREDEF) && --o->refs == 0)
        free(o);
}

int mpii_ops_init(void)
{
    for (int i = 1; i < OP_NPREDEF; i++)
        preops[i] = (mpii_op_t){.refs = 1, .commute = 1};
    return MPI_SUCCESS;
}

static void free_one(int h, void *obj, void *arg)
{
    (void)arg;
    mpii_handle_del(FMPL_MPI_KIND_OP, h);
    mpii_op_release(obj);
}

void mpii_ops_finalize(void)
{
    mpii_handle_foreach(FMPL_MPI_KIND_OP, free_one, NULL);
}

/* ------------------------------------------------------------ type lists
 * X(id suffix of FMPL_MPI_DTID_, C type) per MPI-4.0 6.9.2 class. */
#define L_CINT(X)                                                                                  \
    X(SIGNED_CHAR, signed char)                                                                    \
    X(UNSIGNED_CHAR, unsigned char)                                                                \
    X(SHORT, short)                                                                                \
    X(UNSIGNED_SHORT, unsigned short)                                                              \
    X(INT, int)                                                                                    \
    X(UNSIGNED, unsigned)                                                                          \
    X(LONG, long)                                                                                  \
    X(UNSIGNED_LONG, unsigned long)                                                                \
    X(LONG_LONG_INT, long long)                                                                    \
    X(UNSIGNED_LONG_LONG, unsigned long long)                                                      \
    X(INT8_T, int8_t)                                                                              \
    X(INT16_T, int16_t)                                                                            \
    X(INT32_T, int32_t)                                                                            \
    X(INT64_T, int64_t)                                                                            \
    X(UINT8_T, uint8_t)                                                                            \
    X(UINT16_T, uint16_t)                                                                          \
    X(UINT32_T, uint32_t)                                                                          \
    X(UINT64_T, uint64_t)
#define L_FINT(X)                                                                                  \
    X(INTEGER, int32_t)                                                                            \
    X(INTEGER1, int8_t)                                                                            \
    X(INTEGER2, int16_t)                                                                           \
    X(INTEGER4, int32_t)                                                                           \
    X(INTEGER8, int64_t)
#define L_MULTI(X)                                                                                 \
    X(AINT, MPI_Aint)                                                                              \
    X(OFFSET, MPI_Offset)                                                                          \
    X(COUNT, MPI_Count)
#define L_FLOAT(X)                                                                                 \
    X(FLOAT, float)                                                                                \
    X(DOUBLE, double)                                                                              \
    X(LONG_DOUBLE, long double)                                                                    \
    X(REAL, float)                                                                                 \
    X(DOUBLE_PRECISION, double)                                                                    \
    X(REAL4, float)                                                                                \
    X(REAL8, double)
#define L_COMPLEX(X)                                                                               \
    X(C_FLOAT_COMPLEX, float _Complex)                                                             \
    X(C_DOUBLE_COMPLEX, double _Complex)                                                           \
    X(C_LONG_DOUBLE_COMPLEX, long double _Complex)                                                 \
    X(CXX_FLOAT_COMPLEX, float _Complex)                                                           \
    X(CXX_DOUBLE_COMPLEX, double _Complex)                                                         \
    X(CXX_LONG_DOUBLE_COMPLEX, long double _Complex)                                               \
    X(COMPLEX, float _Complex)                                                                     \
    X(DOUBLE_COMPLEX, double _Complex)                                                             \
    X(COMPLEX8, float _Complex)                                                                    \
    X(COMPLEX16, double _Complex)
#define L_LOGICAL(X)                                                                               \
    X(C_BOOL, _Bool)                                                                               \
    X(CXX_BOOL, _Bool)                                                                             \
    X(LOGICAL, int32_t)
#define L_BYTE(X) X(BYTE, unsigned char)
/* pair types: X(id, value type, index type) */
#define L_PAIR(X)                                                                                  \
    X(FLOAT_INT, float, int)                                                                       \
    X(DOUBLE_INT, double, int)                                                                     \
    X(LONG_INT, long, int)                                                                         \
    X(2INT, int, int)                                                                              \
    X(SHORT_INT, short, int)                                                                       \
    X(LONG_DOUBLE_INT, long double, int)                                                           \
    X(2INTEGER, int32_t, int32_t)                                                                  \
    X(2REAL, float, float)                                                                         \
    X(2DOUBLE_PRECISION, double, double)

/* ------------------------------------------------------------ kernels
 * inout[i] = in[i] op inout[i]; MPI_ERR_OP when the type is not in the op's classes.
 * Either buffer may be misaligned for T (an accumulate at any target displacement, a
 * packed stream): then each element goes through an aligned copy. */
#define LOOP(T, STMT)                                                                              \
    {                                                                                              \
        if ((((uintptr_t)in | (uintptr_t)io) & (_Alignof(T) - 1)) == 0) {                          \
            const T *a = in;                                                                       \
            T *b = io;                                                                             \
            for (int64_t i = 0; i < n; i++) {                                                      \
                STMT;                                                                              \
            }                                                                                      \
            return MPI_SUCCESS;                                                                    \
        }                                                                                          \
        for (int64_t k = 0; k < n; k++) {                                                          \
            T a[1], b[1];                                                                          \
            const int64_t i = 0;                                                                   \
            memcpy(a, (const char *)in + k * (int64_t)sizeof(T), sizeof(T));                       \
            memcpy(b, (char *)io + k * (int64_t)sizeof(T), sizeof(T));                             \
            STMT;                                                                                  \
            memcpy((char *)io + k * (int64_t)sizeof(T), b, sizeof(T));                             \
        }                                                                                          \
        return MPI_SUCCESS;                                                                        \
    }

/* gcc's -O2 vectorizes no loop whose trip count is unknown (its very-cheap cost model), so
 * the kernels ask for it: 1.5-2x on a 64 KiB - 1 MiB MPI_SUM of doubles (accumulates,
 * reductions). clang vectorizes them at -O2 already. */
#if defined(__GNUC__) && !defined(__clang__)
#define KERNEL_VECTORIZE __attribute__((optimize("tree-vectorize", "vect-cost-model=dynamic")))
#else
#define KERNEL_VECTORIZE
#endif
/* The arithmetic kernels (sum, product, max, min: reductions and accumulates of numbers)
 * are built three times, for the baseline x86-64 (SSE2, 16-byte vectors), AVX2 and
 * AVX-512, the loader picking the one the CPU runs (ifunc): a 64 KiB MPI_SUM accumulate
 * of doubles went from 3.3 to 2.6 us on an AVX-512 Xeon (Open MPI's AVX op component:
 * 2.8), a 4 KiB one from 0.23 to 0.16. gcc only: clang exports the resolver it makes. */
#if defined(__x86_64__) && defined(__ELF__) && defined(__GNUC__) && !defined(__clang__)
#define KERNEL_CLONES __attribute__((target_clones("avx512f", "avx2", "default")))
#else
#define KERNEL_CLONES
#endif

#define KERNEL(NAME, ATTR, ...)                                                                    \
    KERNEL_VECTORIZE ATTR static int NAME(int id, const void *in, void *io, int64_t n)             \
    {                                                                                              \
        switch (id) {                                                                              \
            __VA_ARGS__                                                                            \
        default: return MPI_ERR_OP;                                                                \
        }                                                                                          \
    }

/* clang-format off */
#define C_MAX(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, if (a[i] > b[i]) b[i] = a[i])
#define C_MIN(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, if (a[i] < b[i]) b[i] = a[i])
#define C_SUM(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] + b[i]))
#define C_PROD(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] * b[i]))
#define C_LAND(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] && b[i]))
#define C_LOR(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] || b[i]))
#define C_LXOR(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(!a[i] != !b[i]))
#define C_BAND(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] & b[i]))
#define C_BOR(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] | b[i]))
#define C_BXOR(ID, T) case FMPL_MPI_DTID_##ID: LOOP(T, b[i] = (T)(a[i] ^ b[i]))
/* clang-format on */
/* the standard's rule: the lower index wins a tie */
#define C_MINLOC(ID, V, I)                                                                         \
    case FMPL_MPI_DTID_##ID: {                                                                     \
        typedef struct {                                                                           \
            V v;                                                                                   \
            I i;                                                                                   \
        } pair_t;                                                                                  \
        LOOP(pair_t, if (a[i].v < b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i)) b[i] = a[i])    \
    }
#define C_MAXLOC(ID, V, I)                                                                         \
    case FMPL_MPI_DTID_##ID: {                                                                     \
        typedef struct {                                                                           \
            V v;                                                                                   \
            I i;                                                                                   \
        } pair_t;                                                                                  \
        LOOP(pair_t, if (a[i].v > b[i].v || (a[i].v == b[i].v && a[i].i < b[i].i)) b[i] = a[i])    \
    }

KERNEL(k_max, KERNEL_CLONES, L_CINT(C_MAX) L_FINT(C_MAX) L_FLOAT(C_MAX) L_MULTI(C_MAX))
KERNEL(k_min, KERNEL_CLONES, L_CINT(C_MIN) L_FINT(C_MIN) L_FLOAT(C_MIN) L_MULTI(C_MIN))
KERNEL(k_sum, KERNEL_CLONES,
       L_CINT(C_SUM) L_FINT(C_SUM) L_FLOAT(C_SUM) L_COMPLEX(C_SUM) L_MULTI(C_SUM))
KERNEL(k_prod, KERNEL_CLONES,
       L_CINT(C_PROD) L_FINT(C_PROD) L_FLOAT(C_PROD) L_COMPLEX(C_PROD) L_MULTI(C_PROD))
/* The logical ops also take the multi-language types (MPI_AINT, MPI_OFFSET, MPI_COUNT),
 * which are C integers: 6.9.2 does not list them for MPI_LAND/LOR/LXOR (such a call is
 * erroneous, so defining it is allowed), MPICH accepts them and its test suite
 * (coll/allred) uses them. */
KERNEL(k_land, , L_CINT(C_LAND) L_LOGICAL(C_LAND) L_MULTI(C_LAND))
KERNEL(k_lor, , L_CINT(C_LOR) L_LOGICAL(C_LOR) L_MULTI(C_LOR))
KERNEL(k_lxor, , L_CINT(C_LXOR) L_LOGICAL(C_LXOR) L_MULTI(C_LXOR))
KERNEL(k_band, , L_CINT(C_BAND) L_FINT(C_BAND) L_BYTE(C_BAND) L_MULTI(C_BAND))
KERNEL(k_bor, , L_CINT(C_BOR) L_FINT(C_BOR) L_BYTE(C_BOR) L_MULTI(C_BOR))
KERNEL(k_bxor, , L_CINT(C_BXOR) L_FINT(C_BXOR) L_BYTE(C_BXOR) L_MULTI(C_BXOR))
KERNEL(k_minloc, , L_PAIR(C_MINLOC))
KERNEL(k_maxloc, , L_PAIR(C_MAXLOC))

typedef int (*kernel_t)(int id, const void *in, void *io, int64_t n);
static const kernel_t kernels[OP_NPREDEF] = {
    [1] = k_max, [2] = k_min, [3] = k_sum,  [4] = k_prod,  [5] = k_land,    [6] = k_band,
    [7] = k_lor, [8] = k_bor, [9] = k_lxor, [10] = k_bxor, [11] = k_minloc, [12] = k_maxloc,
};

int mpii_op_apply(MPI_Op op, const void *in, void *inout, MPI_Count count, MPI_Datatype type)
{
    mpii_op_t *o = mpii_op_get(op);
    if (!o)
        return MPI_ERR_OP;
    dt_t *t = mpii_type_get(type);
    if (!t)
        return MPI_ERR_TYPE;
    return mpii_op_apply_obj(o, op, in, inout, count, type, t);
}

int mpii_op_apply_obj(mpii_op_t *o, MPI_Op op, const void *in, void *inout, MPI_Count count,
                      MPI_Datatype type, dt_t *t)
{
    if (count < 0)
        return MPI_ERR_COUNT;
    int i = OPX(op);
    if (o->fn || o->fn_c) { /* user op: any type, passed through */
        if (count == 0)
            return MPI_SUCCESS;
        MPI_Datatype ty = type;
        if (o->fn_c) {
            MPI_Count len = count;
            o->fn_c((void *)in, inout, &len, &ty);
            return MPI_SUCCESS;
        }
        int64_t ext = dt_extent(t);
        for (int64_t done = 0; done < count;) {
            int len = count - done > INT_MAX ? INT_MAX : (int)(count - done);
            o->fn((char *)(uintptr_t)in + done * ext, (char *)inout + done * ext, &len, &ty);
            done += len;
        }
        return MPI_SUCCESS;
    }
    if (op == MPI_NO_OP)
        return MPI_SUCCESS;
    if (op == MPI_REPLACE) {
        if (count == 0 || in == inout)
            return MPI_SUCCESS;
        int64_t len = count * dt_size(t);
        int rc = dt_copy(t, count, in, t, count, inout, 0, len);
        return rc ? MPI_ERR_ARG : MPI_SUCCESS;
    }
    if (!FMPL_MPI_DT_IS_PREDEF(type)) /* predefined ops work on predefined types only */
        return MPI_ERR_OP;
    int rc = kernels[i](FMPL_MPI_DT_ID(type), in, inout, count);
    return rc;
}

mpii_kernel_t mpii_op_kernel(MPI_Op op, MPI_Datatype type, int *id)
{
    mpii_op_t *o = mpii_op_get(op);
    int i = OPX(op);
    if (!o || o->fn || o->fn_c || op == MPI_NO_OP || op == MPI_REPLACE || i <= 0 ||
        i >= OP_NPREDEF || !kernels[i] || !FMPL_MPI_DT_IS_PREDEF(type))
        return NULL;
    *id = FMPL_MPI_DT_ID(type);
    return kernels[i];
}

/* ------------------------------------------------------------ MPI functions */

static int op_create(MPI_User_function *fn, MPI_User_function_c *fn_c, int commute, MPI_Op *op,
                     const char *fname)
{
    MPII_CHECK_INIT(fname);
    if ((!fn && !fn_c) || !op)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_op_t *o = calloc(1, sizeof *o);
    if (!o)
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    *o = (mpii_op_t){.refs = 1, .commute = commute != 0, .fn = fn, .fn_c = fn_c};
    int h = mpii_handle_new(FMPL_MPI_KIND_OP, o);
    if (OPX(h) == 0) {
        free(o);
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    }
    *op = h;
    return MPI_SUCCESS;
}

/* MPI_Op_create: a user op (commute != 0: commutative). MPI_ERR_ARG for NULL
 * arguments. */
int PMPI_Op_create(MPI_User_function *user_fn, int commute, MPI_Op *op)
{
    return op_create(user_fn, NULL, commute, op, "MPI_Op_create");
}
MPII_WEAK(MPI_Op_create, PMPI_Op_create)

/* MPI_Op_create_c: the same with a large-count user function. */
int PMPI_Op_create_c(MPI_User_function_c *user_fn, int commute, MPI_Op *op)
{
    return op_create(NULL, user_fn, commute, op, "MPI_Op_create_c");
}
MPII_WEAK(MPI_Op_create_c, PMPI_Op_create_c)

/* MPI_Op_free: frees a user op (operations in flight keep it until they complete) and
 * sets *op to MPI_OP_NULL. MPI_ERR_OP for predefined or invalid ops. */
int PMPI_Op_free(MPI_Op *op)
{
    static const char fname[] = "MPI_Op_free";
    MPII_CHECK_INIT(fname);
    if (!op)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_op_t *o = mpii_op_get(*op);
    if (!o || OPX(*op) < FMPL_MPI_PREDEF_MAX)
        return MPII_ERR(MPI_ERR_OP, fname);
    mpii_handle_del(FMPL_MPI_KIND_OP, *op);
    mpii_op_release(o);
    *op = MPI_OP_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Op_free, PMPI_Op_free)

/* MPI_Op_commutative: 1 for predefined ops and commutative user ops. */
int PMPI_Op_commutative(MPI_Op op, int *commute)
{
    static const char fname[] = "MPI_Op_commutative";
    MPII_CHECK_INIT(fname);
    mpii_op_t *o = mpii_op_get(op);
    if (!o)
        return MPII_ERR(MPI_ERR_OP, fname);
    if (!commute)
        return MPII_ERR(MPI_ERR_ARG, fname);
    *commute = o->commute;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Op_commutative, PMPI_Op_commutative)

static int reduce_local(const void *inbuf, void *inoutbuf, int64_t count, MPI_Datatype datatype,
                        MPI_Op op, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (count < 0)
        return MPII_ERR(MPI_ERR_COUNT, fname);
    if (mpii_type_check_comm(datatype))
        return MPII_ERR(MPI_ERR_TYPE, fname);
    if (!mpii_op_get(op) || op == MPI_REPLACE || op == MPI_NO_OP)
        return MPII_ERR(MPI_ERR_OP, fname);
    if (count > 0 && (inbuf == MPI_IN_PLACE || inoutbuf == MPI_IN_PLACE ||
                      (FMPL_MPI_DT_IS_PREDEF(datatype) && (!inbuf || !inoutbuf))))
        return MPII_ERR(MPI_ERR_BUFFER, fname);
    if (mpii_coll_alias(inbuf, count, datatype, inoutbuf, count, datatype)) {
        mpii_coll_why_clear(); /* (its own words) */
        return MPII_ERRF(MPI_ERR_BUFFER, fname, "%s", "inbuf and inoutbuf overlap");
    }
    int rc = mpii_op_apply(op, inbuf, inoutbuf, count, datatype);
    return rc ? MPII_ERR(rc, fname) : MPI_SUCCESS;
}

/* MPI_Reduce_local: inoutbuf[i] = inbuf[i] op inoutbuf[i]. MPI_ERR_OP for an op/type
 * pair MPI-4.0 6.9.2 forbids, MPI_REPLACE and MPI_NO_OP. */
int PMPI_Reduce_local(const void *inbuf, void *inoutbuf, int count, MPI_Datatype datatype,
                      MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local");
}
MPII_WEAK(MPI_Reduce_local, PMPI_Reduce_local)

/* MPI_Reduce_local_c: the same with a large count. */
int PMPI_Reduce_local_c(const void *inbuf, void *inoutbuf, MPI_Count count, MPI_Datatype datatype,
                        MPI_Op op)
{
    return reduce_local(inbuf, inoutbuf, count, datatype, op, "MPI_Reduce_local_c");
}
MPII_WEAK(MPI_Reduce_local_c, PMPI_Reduce_local_c)
