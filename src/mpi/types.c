/* types.c — MPI datatypes on the dt engine (see mpi_impl.h).
 *
 * Predefined datatypes are not objects: their handle encodes an id, and a static table
 * maps the id to dt's predefined type and to the MPI name. Derived datatypes are
 * mpii_type_t objects in the FMPL_MPI_KIND_DATATYPE table; each holds one reference to
 * its dt type. MPI_Type_free drops the handle and that reference; operations in flight
 * hold their own dt references, so the layout outlives the handle.
 *
 * Also here: pack/unpack (native and external32), Get_count/Get_elements and the status
 * setters, Get_address and the Aint arithmetic, Type_match_size. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

_Static_assert(sizeof(MPI_Aint) == sizeof(int64_t), "MPI_Aint must be 64-bit");
_Static_assert(sizeof(MPI_Count) == sizeof(int64_t), "MPI_Count must be 64-bit");

/* ------------------------------------------------------------ predefined table */

typedef struct predef {
    MPI_Datatype h;
    int kind; /* dt kind, -1 when dt does not have it */
    const char *name;
} predef_t;

#define P(ID, H, K) [FMPL_MPI_DTID_##ID] = {H, K, #H}
static const predef_t predef[FMPL_MPI_DTID_MAX + 1] = {
    P(CHAR, MPI_CHAR, DT_CHAR),
    P(SIGNED_CHAR, MPI_SIGNED_CHAR, DT_SIGNED_CHAR),
    P(UNSIGNED_CHAR, MPI_UNSIGNED_CHAR, DT_UNSIGNED_CHAR),
    P(BYTE, MPI_BYTE, DT_BYTE),
    P(WCHAR, MPI_WCHAR, DT_WCHAR),
    P(SHORT, MPI_SHORT, DT_SHORT),
    P(UNSIGNED_SHORT, MPI_UNSIGNED_SHORT, DT_UNSIGNED_SHORT),
    P(INT, MPI_INT, DT_INT),
    P(UNSIGNED, MPI_UNSIGNED, DT_UNSIGNED),
    P(LONG, MPI_LONG, DT_LONG),
    P(UNSIGNED_LONG, MPI_UNSIGNED_LONG, DT_UNSIGNED_LONG),
    /* Synonyms share one handle, named by the primary name (MPICH's typename test expects
     * MPI_LONG_LONG_INT and MPI_C_COMPLEX, and accepts them for the synonyms) */
    [FMPL_MPI_DTID_LONG_LONG_INT] = {MPI_LONG_LONG_INT, DT_LONG_LONG, "MPI_LONG_LONG_INT"},
    P(UNSIGNED_LONG_LONG, MPI_UNSIGNED_LONG_LONG, DT_UNSIGNED_LONG_LONG),
    P(FLOAT, MPI_FLOAT, DT_FLOAT),
    P(DOUBLE, MPI_DOUBLE, DT_DOUBLE),
    P(LONG_DOUBLE, MPI_LONG_DOUBLE, DT_LONG_DOUBLE),
    P(INT8_T, MPI_INT8_T, DT_INT8),
    P(INT16_T, MPI_INT16_T, DT_INT16),
    P(INT32_T, MPI_INT32_T, DT_INT32),
    P(INT64_T, MPI_INT64_T, DT_INT64),
    P(UINT8_T, MPI_UINT8_T, DT_UINT8),
    P(UINT16_T, MPI_UINT16_T, DT_UINT16),
    P(UINT32_T, MPI_UINT32_T, DT_UINT32),
    P(UINT64_T, MPI_UINT64_T, DT_UINT64),
    P(C_BOOL, MPI_C_BOOL, DT_BOOL),
    [FMPL_MPI_DTID_C_FLOAT_COMPLEX] = {MPI_C_FLOAT_COMPLEX, DT_FLOAT_COMPLEX, "MPI_C_COMPLEX"},
    P(C_DOUBLE_COMPLEX, MPI_C_DOUBLE_COMPLEX, DT_DOUBLE_COMPLEX),
    P(C_LONG_DOUBLE_COMPLEX, MPI_C_LONG_DOUBLE_COMPLEX, DT_LONG_DOUBLE_COMPLEX),
    P(AINT, MPI_AINT, DT_AINT),
    P(OFFSET, MPI_OFFSET, DT_OFFSET),
    P(COUNT, MPI_COUNT, DT_COUNT),
    P(PACKED, MPI_PACKED, DT_PACKED),
    P(FLOAT_INT, MPI_FLOAT_INT, DT_FLOAT_INT),
    P(DOUBLE_INT, MPI_DOUBLE_INT, DT_DOUBLE_INT),
    P(LONG_INT, MPI_LONG_INT, DT_LONG_INT),
    P(2INT, MPI_2INT, DT_2INT),
    P(SHORT_INT, MPI_SHORT_INT, DT_SHORT_INT),
    P(LONG_DOUBLE_INT, MPI_LONG_DOUBLE_INT, DT_LONG_DOUBLE_INT),
    P(CXX_BOOL, MPI_CXX_BOOL, DT_CXX_BOOL),
    P(CXX_FLOAT_COMPLEX, MPI_CXX_FLOAT_COMPLEX, DT_CXX_FLOAT_COMPLEX),
    P(CXX_DOUBLE_COMPLEX, MPI_CXX_DOUBLE_COMPLEX, DT_CXX_DOUBLE_COMPLEX),
    P(CXX_LONG_DOUBLE_COMPLEX, MPI_CXX_LONG_DOUBLE_COMPLEX, DT_CXX_LONG_DOUBLE_COMPLEX),
    P(INTEGER, MPI_INTEGER, DT_F_INTEGER),
    P(REAL, MPI_REAL, DT_F_REAL),
    P(DOUBLE_PRECISION, MPI_DOUBLE_PRECISION, DT_F_DOUBLE_PRECISION),
    P(COMPLEX, MPI_COMPLEX, DT_F_COMPLEX),
    P(DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX, DT_F_DOUBLE_COMPLEX),
    P(LOGICAL, MPI_LOGICAL, DT_F_LOGICAL),
    P(CHARACTER, MPI_CHARACTER, DT_F_CHARACTER),
    P(2INTEGER, MPI_2INTEGER, DT_F_2INTEGER),
    P(2REAL, MPI_2REAL, DT_F_2REAL),
    P(2DOUBLE_PRECISION, MPI_2DOUBLE_PRECISION, DT_F_2DOUBLE_PRECISION),
    P(INTEGER1, MPI_INTEGER1, DT_F_INTEGER1),
    P(INTEGER2, MPI_INTEGER2, DT_F_INTEGER2),
    P(INTEGER4, MPI_INTEGER4, DT_F_INTEGER4),
    P(INTEGER8, MPI_INTEGER8, DT_F_INTEGER8),
    P(INTEGER16, MPI_INTEGER16, -1), /* optional types dt does not provide */
    P(REAL2, MPI_REAL2, -1),
    P(REAL4, MPI_REAL4, DT_F_REAL4),
    P(REAL8, MPI_REAL8, DT_F_REAL8),
    P(REAL16, MPI_REAL16, -1),
    P(COMPLEX4, MPI_COMPLEX4, -1),
    P(COMPLEX8, MPI_COMPLEX8, DT_F_COMPLEX8),
    P(COMPLEX16, MPI_COMPLEX16, DT_F_COMPLEX16),
    P(COMPLEX32, MPI_COMPLEX32, -1),
};
#undef P

/* Names set by MPI_Type_set_name on predefined types (when predef_named). */
static char predef_name[FMPL_MPI_DTID_MAX + 1][MPI_MAX_OBJECT_NAME];
static char predef_named[FMPL_MPI_DTID_MAX + 1];
/* Attributes cached on predefined types. */
static mpii_attr_t *predef_attrs[FMPL_MPI_DTID_MAX + 1];
/* dt kind -> predefined handle (for get_contents). */
static MPI_Datatype kind_handle[DT_NKINDS];

/* The table id of a predefined handle, 0 when h is not one (or not one dt knows). */
static int predef_id(MPI_Datatype h)
{
    if (!FMPL_MPI_DT_IS_PREDEF(h))
        return 0;
    int id = FMPL_MPI_DT_ID(h);
    if (id < 1 || id > FMPL_MPI_DTID_MAX || predef[id].h != h || predef[id].kind < 0)
        return 0;
    return id;
}

static int is_sentinel(const void *p)
{
    return (uintptr_t)p - 1 < 4095;
}

static int fmpl2mpi(int rc)
{
    switch (rc) {
    case FMPL_SUCCESS: return MPI_SUCCESS;
    case FMPL_ERR_ARG: return MPI_ERR_ARG;
    case FMPL_ERR_TYPE: return MPI_ERR_TYPE;
    case FMPL_ERR_NOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_INTERN;
    }
}

/* ------------------------------------------------------------ layer calls */

mpii_type_fast_t mpii_type_fast[FMPL_MPI_DTID_MAX + 1];

int mpii_types_init(void)
{
    memset(mpii_type_fast, 0, sizeof mpii_type_fast);
    for (int id = 1; id <= FMPL_MPI_DTID_MAX; id++)
        if (predef[id].h != MPI_DATATYPE_NULL && predef[id].kind >= 0)
            mpii_type_fast[id] = (mpii_type_fast_t){predef[id].h, dt_basic(predef[id].kind)};
    memset(predef_name, 0, sizeof predef_name);
    memset(predef_named, 0, sizeof predef_named);
    memset(predef_attrs, 0, sizeof predef_attrs);
    for (int k = 0; k < DT_NKINDS; k++)
        kind_handle[k] = MPI_DATATYPE_NULL;
    for (int id = 1; id <= FMPL_MPI_DTID_MAX; id++)
        if (predef[id].kind >= 0)
            kind_handle[predef[id].kind] = predef[id].h;
    return MPI_SUCCESS;
}

static void type_release(mpii_type_t *o)
{
    if (--o->refs > 0)
        return;
    dt_release(o->dt);
    free(o);
}

static void free_one(int h, void *obj, void *arg)
{
    (void)arg;
    mpii_type_t *o = obj;
    mpii_attr_delete_all(FMPL_MPI_KIND_DATATYPE, h, &o->attrs);
    mpii_handle_del(FMPL_MPI_KIND_DATATYPE, h);
    type_release(o);
}

void mpii_types_finalize(void)
{
    mpii_type_f90_reset();
    mpii_handle_foreach(FMPL_MPI_KIND_DATATYPE, free_one, NULL);
    for (int id = 1; id <= FMPL_MPI_DTID_MAX; id++)
        if (predef_attrs[id])
            mpii_attr_delete_all(FMPL_MPI_KIND_DATATYPE, predef[id].h, &predef_attrs[id]);
}

dt_t *mpii_type_get(MPI_Datatype h)
{
    if (FMPL_MPI_DT_IS_PREDEF(h)) { /* the table filled at init (no dt_basic call) */
        unsigned id = (unsigned)FMPL_MPI_DT_ID(h);
        if (id <= FMPL_MPI_DTID_MAX && mpii_type_fast[id].h == h)
            return mpii_type_fast[id].dt;
    }
    int id = predef_id(h);
    if (id)
        return dt_basic(predef[id].kind);
    mpii_type_t *o = mpii_handle_get(FMPL_MPI_KIND_DATATYPE, h);
    return o ? o->dt : NULL;
}

mpii_type_t *mpii_type_obj(MPI_Datatype h)
{
    return mpii_handle_get(FMPL_MPI_KIND_DATATYPE, h);
}

dt_t *mpii_type_comm_derived(MPI_Datatype h)
{
    mpii_type_t *o = mpii_type_obj(h);
    return o && o->committed ? o->dt : NULL;
}

int mpii_type_check_comm(MPI_Datatype h)
{
    if (predef_id(h))
        return MPI_SUCCESS;
    mpii_type_t *o = mpii_type_obj(h);
    return o && o->committed ? MPI_SUCCESS : MPI_ERR_TYPE;
}

mpii_attr_t **mpii_type_attrs(MPI_Datatype h)
{
    int id = predef_id(h);
    if (id)
        return &predef_attrs[id];
    mpii_type_t *o = mpii_type_obj(h);
    return o ? &o->attrs : NULL;
}

/* Wraps dt (whose reference it takes) in a new handle. */
static int type_new(dt_t *dt, int large, MPI_Datatype *out)
{
    mpii_type_t *o = calloc(1, sizeof *o);
    if (!o) {
        dt_release(dt);
        return MPI_ERR_NO_MEM;
    }
    o->refs = 1;
    o->dt = dt;
    o->committed = dt_is_committed(dt);
    o->large = large;
    int h = mpii_handle_new(FMPL_MPI_KIND_DATATYPE, o);
    if (FMPL_MPI_HANDLE_INDEX(h) == 0 || FMPL_MPI_DT_IS_PREDEF(h)) {
        if (FMPL_MPI_HANDLE_INDEX(h))
            mpii_handle_del(FMPL_MPI_KIND_DATATYPE, h);
        dt_release(dt);
        free(o);
        return MPI_ERR_NO_MEM;
    }
    o->handle = h;
    *out = h;
    return MPI_SUCCESS;
}

/* The handle for a dt type met inside another (get_contents): the predefined handle,
 * or a new handle holding a new reference. */
static int type_handle_for(dt_t *t, MPI_Datatype *out)
{
    int k = dt_kind(t);
    if (k >= 0) {
        *out = kind_handle[k];
        return *out == MPI_DATATYPE_NULL ? MPI_ERR_INTERN : MPI_SUCCESS;
    }
    dt_retain(t);
    return type_new(t, 0, out);
}

/* ------------------------------------------------------------ constructors */

/* Copies n integers of any integer type into a new int64 array (never NULL on success). */
#define WIDEN(dst, src, n)                                                                         \
    do {                                                                                           \
        (dst) = malloc(sizeof(int64_t) * (size_t)((n) > 0 ? (n) : 1));                             \
        if (dst)                                                                                   \
            for (int64_t i_ = 0; i_ < (int64_t)(n); i_++)                                          \
                (dst)[i_] = (int64_t)(src)[i_];                                                    \
    } while (0)

/* The count and newtype checks of every constructor for fname: MPI_SUCCESS, or the error
 * raised with what is wrong named. */
static int ctor_args(int64_t count, MPI_Datatype *newtype, const char *fname)
{
    if (!newtype)
        return MPII_ERR_NULL(MPI_COMM_NULL, "newtype", fname);
    if (count < 0)
        return MPII_ERRF(MPI_ERR_COUNT, fname, "count %lld < 0", (long long)count);
    return MPI_SUCCESS;
}

/* Common argument checks of a constructor on `old` for fname: MPI_SUCCESS (and *t), or the
 * error raised with what is wrong named. */
static int ctor_check(int64_t count, MPI_Datatype old, MPI_Datatype *newtype, dt_t **t,
                      const char *fname)
{
    int rc = ctor_args(count, newtype, fname);
    if (rc)
        return rc;
    *t = mpii_type_get(old);
    return *t ? MPI_SUCCESS : mpii_err_handle(0, 0, MPI_ERR_TYPE, fname, "oldtype", old);
}

/* Finishes a constructor: dt's result rc and type out become a handle or an error. */
static int ctor_done(int rc, dt_t *out, int large, MPI_Datatype *newtype, const char *fname)
{
    if (rc)
        return MPII_ERR(fmpl2mpi(rc), fname);
    rc = type_new(out, large, newtype);
    return rc ? MPII_ERR(rc, fname) : MPI_SUCCESS;
}

static int contiguous(int64_t count, MPI_Datatype old, MPI_Datatype *newtype, int large,
                      const char *fname)
{
    MPII_CHECK_INIT(fname);
    dt_t *t, *out = NULL;
    int rc = ctor_check(count, old, newtype, &t, fname);
    if (rc)
        return rc;
    rc = dt_contiguous(count, t, &out); /* before ctor_done reads out */
    return ctor_done(rc, out, large, newtype, fname);
}

int PMPI_Type_contiguous(int count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, newtype, 0, "MPI_Type_contiguous");
}
MPII_WEAK(MPI_Type_contiguous, PMPI_Type_contiguous)

int PMPI_Type_contiguous_c(MPI_Count count, MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return contiguous(count, oldtype, newtype, 1, "MPI_Type_contiguous_c");
}
MPII_WEAK(MPI_Type_contiguous_c, PMPI_Type_contiguous_c)

static int vector(int64_t count, int64_t blen, int64_t stride, int bytes, MPI_Datatype old,
                  MPI_Datatype *newtype, int large, const char *fname)
{
    MPII_CHECK_INIT(fname);
    dt_t *t, *out = NULL;
    int rc = ctor_check(count, old, newtype, &t, fname);
    if (rc)
        return rc;
    if (blen < 0)
        return MPII_ERRF(MPI_ERR_ARG, fname, "blocklength %lld < 0", (long long)blen);
    rc = bytes ? dt_hvector(count, blen, stride, t, &out) : dt_vector(count, blen, stride, t, &out);
    return ctor_done(rc, out, large, newtype, fname);
}

int PMPI_Type_vector(int count, int blocklength, int stride, MPI_Datatype oldtype,
                     MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 0, oldtype, newtype, 0, "MPI_Type_vector");
}
MPII_WEAK(MPI_Type_vector, PMPI_Type_vector)

int PMPI_Type_vector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                       MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 0, oldtype, newtype, 1, "MPI_Type_vector_c");
}
MPII_WEAK(MPI_Type_vector_c, PMPI_Type_vector_c)

int PMPI_Type_create_hvector(int count, int blocklength, MPI_Aint stride, MPI_Datatype oldtype,
                             MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 1, oldtype, newtype, 0, "MPI_Type_create_hvector");
}
MPII_WEAK(MPI_Type_create_hvector, PMPI_Type_create_hvector)

int PMPI_Type_create_hvector_c(MPI_Count count, MPI_Count blocklength, MPI_Count stride,
                               MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    return vector(count, blocklength, stride, 1, oldtype, newtype, 1, "MPI_Type_create_hvector_c");
}
MPII_WEAK(MPI_Type_create_hvector_c, PMPI_Type_create_hvector_c)

enum { K_INDEXED, K_HINDEXED, K_INDEXED_BLOCK, K_HINDEXED_BLOCK, K_STRUCT };

/* The indexed family and struct on widened arrays (bl: per-block lengths or, for the
 * _BLOCK kinds, bl[0] the common one). */
static int indexed(int kind, int64_t count, const int64_t *bl, const int64_t *disp,
                   MPI_Datatype old, const MPI_Datatype *types, MPI_Datatype *newtype, int large,
                   const char *fname)
{
    dt_t *t = NULL, *out = NULL, **tv = NULL;
    int rc;
    if (kind == K_STRUCT) {
        if ((rc = ctor_args(count, newtype, fname)))
            return rc;
        if (count > 0 && !types)
            return MPII_ERRF(MPI_ERR_ARG, fname, "array_of_types NULL with count %lld",
                             (long long)count);
    } else if ((rc = ctor_check(count, old, newtype, &t, fname))) {
        return rc;
    }
    int64_t nbl = (kind == K_INDEXED_BLOCK || kind == K_HINDEXED_BLOCK) ? 1 : count;
    for (int64_t i = 0; i < nbl; i++)
        if (bl[i] < 0)
            return MPII_ERRF(MPI_ERR_ARG, fname, "blocklengths[%lld] = %lld < 0", (long long)i,
                             (long long)bl[i]);
    if (kind == K_STRUCT) {
        tv = malloc(sizeof *tv * (size_t)(count > 0 ? count : 1));
        if (!tv)
            return MPII_ERR(MPI_ERR_NO_MEM, fname);
        for (int64_t i = 0; i < count; i++)
            if (!(tv[i] = mpii_type_get(types[i]))) {
                free(tv);
                char arg[48];
                snprintf(arg, sizeof arg, "array_of_types[%lld]", (long long)i);
                return mpii_err_handle(0, 0, MPI_ERR_TYPE, fname, arg, types[i]);
            }
    }
    switch (kind) {
    case K_INDEXED: rc = dt_indexed(count, bl, disp, t, &out); break;
    case K_HINDEXED: rc = dt_hindexed(count, bl, disp, t, &out); break;
    case K_INDEXED_BLOCK: rc = dt_indexed_block(count, bl[0], disp, t, &out); break;
    case K_HINDEXED_BLOCK: rc = dt_hindexed_block(count, bl[0], disp, t, &out); break;
    default: rc = dt_struct(count, bl, disp, tv, &out); break;
    }
    free(tv);
    return ctor_done(rc, out, large, newtype, fname);
}

/* Widens the int-typed arrays of an indexed-family call and runs it. BLT/DT: element
 * types of the blocklength and displacement arrays; NBL: number of blocklengths. */
#define INDEXED_CALL(kind, count, blp, nbl, dispp, old, types, newtype, large, fname)              \
    do {                                                                                           \
        MPII_CHECK_INIT(fname);                                                                    \
        if ((count) > 0 && !(blp))                                                                 \
            return MPII_ERRF(MPI_ERR_ARG, fname, "blocklengths NULL with count %lld",              \
                             (long long)(count));                                                  \
        if ((count) > 0 && !(dispp))                                                               \
            return MPII_ERRF(MPI_ERR_ARG, fname, "displacements NULL with count %lld",             \
                             (long long)(count));                                                  \
        if ((count) < 0)                                                                           \
            return MPII_ERRF(MPI_ERR_COUNT, fname, "count %lld < 0", (long long)(count));          \
        int64_t *bl_, *dp_;                                                                        \
        WIDEN(bl_, blp, nbl);                                                                      \
        WIDEN(dp_, dispp, count);                                                                  \
        int rc_ = MPI_ERR_NO_MEM;                                                                  \
        if (bl_ && dp_)                                                                            \
            rc_ = indexed(kind, count, bl_, dp_, old, types, newtype, large, fname);               \
        else                                                                                       \
            rc_ = MPII_ERR(rc_, fname);                                                            \
        free(bl_);                                                                                 \
        free(dp_);                                                                                 \
        return rc_;                                                                                \
    } while (0)

int PMPI_Type_indexed(int count, const int array_of_blocklengths[],
                      const int array_of_displacements[], MPI_Datatype oldtype,
                      MPI_Datatype *newtype)
{
    INDEXED_CALL(K_INDEXED, count, array_of_blocklengths, count, array_of_displacements, oldtype,
                 NULL, newtype, 0, "MPI_Type_indexed");
}
MPII_WEAK(MPI_Type_indexed, PMPI_Type_indexed)

int PMPI_Type_indexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                        const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                        MPI_Datatype *newtype)
{
    INDEXED_CALL(K_INDEXED, count, array_of_blocklengths, count, array_of_displacements, oldtype,
                 NULL, newtype, 1, "MPI_Type_indexed_c");
}
MPII_WEAK(MPI_Type_indexed_c, PMPI_Type_indexed_c)

int PMPI_Type_create_hindexed(int count, const int array_of_blocklengths[],
                              const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    INDEXED_CALL(K_HINDEXED, count, array_of_blocklengths, count, array_of_displacements, oldtype,
                 NULL, newtype, 0, "MPI_Type_create_hindexed");
}
MPII_WEAK(MPI_Type_create_hindexed, PMPI_Type_create_hindexed)

int PMPI_Type_create_hindexed_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                                const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    INDEXED_CALL(K_HINDEXED, count, array_of_blocklengths, count, array_of_displacements, oldtype,
                 NULL, newtype, 1, "MPI_Type_create_hindexed_c");
}
MPII_WEAK(MPI_Type_create_hindexed_c, PMPI_Type_create_hindexed_c)

int PMPI_Type_create_indexed_block(int count, int blocklength, const int array_of_displacements[],
                                   MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const int *blp = &blocklength;
    INDEXED_CALL(K_INDEXED_BLOCK, count, blp, 1, array_of_displacements, oldtype, NULL, newtype, 0,
                 "MPI_Type_create_indexed_block");
}
MPII_WEAK(MPI_Type_create_indexed_block, PMPI_Type_create_indexed_block)

int PMPI_Type_create_indexed_block_c(MPI_Count count, MPI_Count blocklength,
                                     const MPI_Count array_of_displacements[], MPI_Datatype oldtype,
                                     MPI_Datatype *newtype)
{
    const MPI_Count *blp = &blocklength;
    INDEXED_CALL(K_INDEXED_BLOCK, count, blp, 1, array_of_displacements, oldtype, NULL, newtype, 1,
                 "MPI_Type_create_indexed_block_c");
}
MPII_WEAK(MPI_Type_create_indexed_block_c, PMPI_Type_create_indexed_block_c)

int PMPI_Type_create_hindexed_block(int count, int blocklength,
                                    const MPI_Aint array_of_displacements[], MPI_Datatype oldtype,
                                    MPI_Datatype *newtype)
{
    const int *blp = &blocklength;
    INDEXED_CALL(K_HINDEXED_BLOCK, count, blp, 1, array_of_displacements, oldtype, NULL, newtype, 0,
                 "MPI_Type_create_hindexed_block");
}
MPII_WEAK(MPI_Type_create_hindexed_block, PMPI_Type_create_hindexed_block)

int PMPI_Type_create_hindexed_block_c(MPI_Count count, MPI_Count blocklength,
                                      const MPI_Count array_of_displacements[],
                                      MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    const MPI_Count *blp = &blocklength;
    INDEXED_CALL(K_HINDEXED_BLOCK, count, blp, 1, array_of_displacements, oldtype, NULL, newtype, 1,
                 "MPI_Type_create_hindexed_block_c");
}
MPII_WEAK(MPI_Type_create_hindexed_block_c, PMPI_Type_create_hindexed_block_c)

int PMPI_Type_create_struct(int count, const int array_of_blocklengths[],
                            const MPI_Aint array_of_displacements[],
                            const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    INDEXED_CALL(K_STRUCT, count, array_of_blocklengths, count, array_of_displacements,
                 MPI_DATATYPE_NULL, array_of_types, newtype, 0, "MPI_Type_create_struct");
}
MPII_WEAK(MPI_Type_create_struct, PMPI_Type_create_struct)

int PMPI_Type_create_struct_c(MPI_Count count, const MPI_Count array_of_blocklengths[],
                              const MPI_Count array_of_displacements[],
                              const MPI_Datatype array_of_types[], MPI_Datatype *newtype)
{
    INDEXED_CALL(K_STRUCT, count, array_of_blocklengths, count, array_of_displacements,
                 MPI_DATATYPE_NULL, array_of_types, newtype, 1, "MPI_Type_create_struct_c");
}
MPII_WEAK(MPI_Type_create_struct_c, PMPI_Type_create_struct_c)

/* The order argument of subarray and darray for fname: MPI_SUCCESS and *o its DT_ORDER_*,
 * or the error raised. */
static int order_arg(int order, const char *fname, int *o)
{
    *o = order == MPI_ORDER_C ? DT_ORDER_C : order == MPI_ORDER_FORTRAN ? DT_ORDER_FORTRAN : -1;
    return *o >= 0 ? MPI_SUCCESS
                   : MPII_ERRF(MPI_ERR_ARG, fname,
                               "order %d is not MPI_ORDER_C or MPI_ORDER_FORTRAN", order);
}

static int subarray(int ndims, const int64_t *sizes, const int64_t *subsizes, const int64_t *starts,
                    int order, MPI_Datatype old, MPI_Datatype *newtype, int large,
                    const char *fname)
{
    dt_t *t, *out = NULL;
    int o, rc = ctor_check(0, old, newtype, &t, fname);
    if (rc || (rc = order_arg(order, fname, &o)))
        return rc;
    for (int i = 0; i < ndims; i++) {
        long long sz = sizes[i], sub = subsizes[i], st = starts[i];
        if (sz < 1)
            return MPII_ERRF(MPI_ERR_ARG, fname, "sizes[%d] = %lld < 1", i, sz);
        if (sub < 0)
            return MPII_ERRF(MPI_ERR_ARG, fname, "subsizes[%d] = %lld < 0", i, sub);
        if (sub > sz)
            return MPII_ERRF(MPI_ERR_ARG, fname, "subsizes[%d] = %lld > sizes[%d] = %lld", i, sub,
                             i, sz);
        if (st < 0)
            return MPII_ERRF(MPI_ERR_ARG, fname, "starts[%d] = %lld < 0", i, st);
        if (st + sub > sz)
            return MPII_ERRF(MPI_ERR_ARG, fname,
                             "starts[%d] = %lld + subsizes[%d] = %lld > sizes[%d] = %lld", i, st, i,
                             sub, i, sz);
    }
    rc = dt_subarray(ndims, sizes, subsizes, starts, o, t, &out);
    return ctor_done(rc, out, large, newtype, fname);
}

#define SUBARRAY_CALL(ndims, sz, sub, st, order, old, newtype, large, fname)                       \
    do {                                                                                           \
        MPII_CHECK_INIT(fname);                                                                    \
        if ((ndims) < 1)                                                                           \
            return MPII_ERRF(MPI_ERR_ARG, fname, "ndims %d < 1", (ndims));                         \
        if (!(sz) || !(sub) || !(st))                                                              \
            return MPII_ERR_NULL(MPI_COMM_NULL,                                                    \
                                 !(sz)    ? "array_of_sizes"                                       \
                                 : !(sub) ? "array_of_subsizes"                                    \
                                          : "array_of_starts",                                     \
                                 fname);                                                           \
        int64_t *a_, *b_, *c_;                                                                     \
        WIDEN(a_, sz, ndims);                                                                      \
        WIDEN(b_, sub, ndims);                                                                     \
        WIDEN(c_, st, ndims);                                                                      \
        int rc_ = (a_ && b_ && c_)                                                                 \
                      ? subarray(ndims, a_, b_, c_, order, old, newtype, large, fname)             \
                      : MPII_ERR(MPI_ERR_NO_MEM, fname);                                           \
        free(a_);                                                                                  \
        free(b_);                                                                                  \
        free(c_);                                                                                  \
        return rc_;                                                                                \
    } while (0)

int PMPI_Type_create_subarray(int ndims, const int array_of_sizes[], const int array_of_subsizes[],
                              const int array_of_starts[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    SUBARRAY_CALL(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
                  newtype, 0, "MPI_Type_create_subarray");
}
MPII_WEAK(MPI_Type_create_subarray, PMPI_Type_create_subarray)

int PMPI_Type_create_subarray_c(int ndims, const MPI_Count array_of_sizes[],
                                const MPI_Count array_of_subsizes[],
                                const MPI_Count array_of_starts[], int order, MPI_Datatype oldtype,
                                MPI_Datatype *newtype)
{
    SUBARRAY_CALL(ndims, array_of_sizes, array_of_subsizes, array_of_starts, order, oldtype,
                  newtype, 1, "MPI_Type_create_subarray_c");
}
MPII_WEAK(MPI_Type_create_subarray_c, PMPI_Type_create_subarray_c)

static int darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
                  const int *dargs, const int *psizes, int order, MPI_Datatype old,
                  MPI_Datatype *newtype, int large, const char *fname)
{
    MPII_CHECK_INIT(fname);
    dt_t *t, *out = NULL;
    int o, rc = ctor_check(0, old, newtype, &t, fname);
    if (rc || (rc = order_arg(order, fname, &o)))
        return rc;
    if (size < 1)
        return MPII_ERRF(MPI_ERR_ARG, fname, "size %d < 1", size);
    if (rank < 0 || rank >= size)
        return MPII_ERRF(MPI_ERR_ARG, fname, "rank %d is not in 0..%d", rank, size - 1);
    if (ndims < 1)
        return MPII_ERRF(MPI_ERR_ARG, fname, "ndims %d < 1", ndims);
    if (!gsizes || !distribs || !dargs || !psizes)
        return MPII_ERR_NULL(MPI_COMM_NULL,
                             !gsizes     ? "array_of_gsizes"
                             : !distribs ? "array_of_distribs"
                             : !dargs    ? "array_of_dargs"
                                         : "array_of_psizes",
                             fname);
    long long prod = 1;
    for (int i = 0; i < ndims; i++) {
        long long g = gsizes[i];
        int p = psizes[i], d = dargs[i], dflt = d == MPI_DISTRIBUTE_DFLT_DARG;
        if (g < 1)
            return MPII_ERRF(MPI_ERR_ARG, fname, "gsizes[%d] = %lld < 1", i, g);
        if (p < 1)
            return MPII_ERRF(MPI_ERR_ARG, fname, "psizes[%d] = %d < 1", i, p);
        if (!dflt && d < 1)
            return MPII_ERRF(MPI_ERR_ARG, fname,
                             "dargs[%d] = %d < 1 and not MPI_DISTRIBUTE_DFLT_DARG", i, d);
        if (distribs[i] == MPI_DISTRIBUTE_BLOCK && !dflt && (long long)d * p < g)
            return MPII_ERRF(MPI_ERR_ARG, fname,
                             "dargs[%d] = %d * psizes[%d] = %d < gsizes[%d] = %lld: a block "
                             "distribution must cover the dimension",
                             i, d, i, p, i, g);
        if (distribs[i] == MPI_DISTRIBUTE_NONE && p != 1)
            return MPII_ERRF(MPI_ERR_ARG, fname,
                             "psizes[%d] = %d with distribs[%d] MPI_DISTRIBUTE_NONE (must be 1)", i,
                             p, i);
        if (distribs[i] != MPI_DISTRIBUTE_BLOCK && distribs[i] != MPI_DISTRIBUTE_CYCLIC &&
            distribs[i] != MPI_DISTRIBUTE_NONE)
            return MPII_ERRF(MPI_ERR_ARG, fname,
                             "distribs[%d] = %d is not MPI_DISTRIBUTE_BLOCK, _CYCLIC or _NONE", i,
                             distribs[i]);
        if (prod <= size) /* (past size: wrong already, and no overflow) */
            prod *= p;
    }
    if (prod > size)
        return MPII_ERRF(MPI_ERR_ARG, fname, "the product of psizes exceeds size %d", size);
    if (prod < size)
        return MPII_ERRF(MPI_ERR_ARG, fname, "the product of psizes, %lld, is not size %d", prod,
                         size);
    int *dis = malloc(sizeof *dis * (size_t)ndims);
    int64_t *dar = malloc(sizeof *dar * (size_t)ndims), *ps = malloc(sizeof *ps * (size_t)ndims);
    if (!dis || !dar || !ps)
        rc = MPI_ERR_NO_MEM;
    for (int i = 0; !rc && i < ndims; i++) {
        dis[i] = distribs[i] == MPI_DISTRIBUTE_BLOCK    ? DT_DISTRIBUTE_BLOCK
                 : distribs[i] == MPI_DISTRIBUTE_CYCLIC ? DT_DISTRIBUTE_CYCLIC
                                                        : DT_DISTRIBUTE_NONE;
        dar[i] = dargs[i] == MPI_DISTRIBUTE_DFLT_DARG ? DT_DISTRIBUTE_DFLT_DARG : dargs[i];
        ps[i] = psizes[i];
    }
    if (!rc)
        rc = fmpl2mpi(dt_darray(size, rank, ndims, gsizes, dis, dar, ps, o, t, &out));
    free(dis);
    free(dar);
    free(ps);
    if (rc)
        return MPII_ERR(rc, fname);
    return ctor_done(0, out, large, newtype, fname);
}

int PMPI_Type_create_darray(int size, int rank, int ndims, const int array_of_gsizes[],
                            const int array_of_distribs[], const int array_of_dargs[],
                            const int array_of_psizes[], int order, MPI_Datatype oldtype,
                            MPI_Datatype *newtype)
{
    int64_t *g = NULL;
    if (ndims > 0 && array_of_gsizes) {
        WIDEN(g, array_of_gsizes, ndims);
        if (!g)
            return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Type_create_darray");
    }
    int rc = darray(size, rank, ndims, g, array_of_distribs, array_of_dargs, array_of_psizes, order,
                    oldtype, newtype, 0, "MPI_Type_create_darray");
    free(g);
    return rc;
}
MPII_WEAK(MPI_Type_create_darray, PMPI_Type_create_darray)

int PMPI_Type_create_darray_c(int size, int rank, int ndims, const MPI_Count array_of_gsizes[],
                              const int array_of_distribs[], const int array_of_dargs[],
                              const int array_of_psizes[], int order, MPI_Datatype oldtype,
                              MPI_Datatype *newtype)
{
    int64_t *g = NULL;
    if (ndims > 0 && array_of_gsizes) {
        WIDEN(g, array_of_gsizes, ndims);
        if (!g)
            return MPII_ERR(MPI_ERR_NO_MEM, "MPI_Type_create_darray_c");
    }
    int rc = darray(size, rank, ndims, g, array_of_distribs, array_of_dargs, array_of_psizes, order,
                    oldtype, newtype, 1, "MPI_Type_create_darray_c");
    free(g);
    return rc;
}
MPII_WEAK(MPI_Type_create_darray_c, PMPI_Type_create_darray_c)

static int resized(MPI_Datatype old, int64_t lb, int64_t extent, MPI_Datatype *newtype, int large,
                   const char *fname)
{
    MPII_CHECK_INIT(fname);
    dt_t *t, *out = NULL;
    int rc = ctor_check(0, old, newtype, &t, fname);
    if (rc)
        return rc;
    rc = dt_resized(t, lb, extent, &out);
    return ctor_done(rc, out, large, newtype, fname);
}

int PMPI_Type_create_resized(MPI_Datatype oldtype, MPI_Aint lb, MPI_Aint extent,
                             MPI_Datatype *newtype)
{
    return resized(oldtype, lb, extent, newtype, 0, "MPI_Type_create_resized");
}
MPII_WEAK(MPI_Type_create_resized, PMPI_Type_create_resized)

int PMPI_Type_create_resized_c(MPI_Datatype oldtype, MPI_Count lb, MPI_Count extent,
                               MPI_Datatype *newtype)
{
    return resized(oldtype, lb, extent, newtype, 1, "MPI_Type_create_resized_c");
}
MPII_WEAK(MPI_Type_create_resized_c, PMPI_Type_create_resized_c)

int PMPI_Type_dup(MPI_Datatype oldtype, MPI_Datatype *newtype)
{
    static const char fname[] = "MPI_Type_dup";
    MPII_CHECK_INIT(fname);
    dt_t *t, *out = NULL;
    int rc = ctor_check(0, oldtype, newtype, &t, fname);
    if (rc)
        return rc;
    if ((rc = dt_dup(t, &out)))
        return MPII_ERR(fmpl2mpi(rc), fname);
    MPI_Datatype h;
    mpii_type_t *old = mpii_type_obj(oldtype);
    if ((rc = type_new(out, old ? old->large : 0, &h)))
        return MPII_ERR(rc, fname);
    mpii_type_t *o = mpii_type_obj(h);
    if (old)
        o->committed = old->committed;
    mpii_attr_t **attrs = mpii_type_attrs(oldtype);
    if (attrs && *attrs) {
        rc = mpii_attr_copy(FMPL_MPI_KIND_DATATYPE, oldtype, *attrs, h, &o->attrs);
        if (rc) {
            mpii_handle_del(FMPL_MPI_KIND_DATATYPE, h);
            type_release(o);
            return MPII_ERR(rc, fname);
        }
    }
    *newtype = h;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_dup, PMPI_Type_dup)

int PMPI_Type_commit(MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_commit";
    MPII_CHECK_INIT(fname);
    if (!datatype)
        return MPII_ERR_NULL(MPI_COMM_NULL, "datatype", fname);
    if (predef_id(*datatype))
        return MPI_SUCCESS;
    mpii_type_t *o = mpii_type_obj(*datatype);
    if (!o)
        return mpii_err_handle(0, 0, MPI_ERR_TYPE, fname, "*datatype", *datatype);
    dt_commit(o->dt);
    o->committed = 1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_commit, PMPI_Type_commit)

int PMPI_Type_free(MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_free";
    MPII_CHECK_INIT(fname);
    if (!datatype)
        return MPII_ERR_NULL(MPI_COMM_NULL, "datatype", fname);
    mpii_type_t *o = mpii_type_obj(*datatype);
    if (!o && predef_id(*datatype))
        return MPII_ERRF(MPI_ERR_TYPE, fname, "*datatype %#x is a predefined datatype",
                         (unsigned)*datatype);
    if (!o)
        return mpii_err_handle(0, 0, MPI_ERR_TYPE, fname, "*datatype", *datatype);
    int f90_comb, f90_n, f90[2];
    if (mpii_type_f90_contents(*datatype, &f90_comb, &f90_n, f90))
        return MPII_ERRF(MPI_ERR_TYPE, fname,
                         "*datatype %#x is of MPI_Type_create_f90_*, a predefined datatype",
                         (unsigned)*datatype);
    if (o->attrs) {
        int rc = mpii_attr_delete_all(FMPL_MPI_KIND_DATATYPE, *datatype, &o->attrs);
        if (rc)
            return MPII_ERR(rc, fname);
    }
    mpii_handle_del(FMPL_MPI_KIND_DATATYPE, *datatype);
    type_release(o);
    *datatype = MPI_DATATYPE_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_free, PMPI_Type_free)

/* ------------------------------------------------------------ queries */

/* Checks init and the handle; *t receives the type. */
#define QUERY_PROLOGUE(fname, h, t)                                                                \
    MPII_CHECK_INIT(fname);                                                                        \
    dt_t *t = mpii_type_get(h);                                                                    \
    if (!t)                                                                                        \
        return MPII_ERR(MPI_ERR_TYPE, fname);

int PMPI_Type_size(MPI_Datatype datatype, int *size)
{
    if (BASE_LIKELY(mpii.state == MPII_ACTIVE && size && FMPL_MPI_DT_IS_PREDEF(datatype) &&
                    mpii_type_comm_dt(datatype))) { /* the size is in the handle */
        *size = FMPL_MPI_DT_SIZE(datatype);
        return MPI_SUCCESS;
    }
    QUERY_PROLOGUE("MPI_Type_size", datatype, t);
    if (!size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Type_size");
    int64_t s = dt_size(t);
    *size = s > INT_MAX ? MPI_UNDEFINED : (int)s;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_size, PMPI_Type_size)

int PMPI_Type_size_c(MPI_Datatype datatype, MPI_Count *size)
{
    QUERY_PROLOGUE("MPI_Type_size_c", datatype, t);
    if (!size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Type_size_c");
    *size = dt_size(t);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_size_c, PMPI_Type_size_c)

int PMPI_Type_size_x(MPI_Datatype datatype, MPI_Count *size)
{
    QUERY_PROLOGUE("MPI_Type_size_x", datatype, t);
    if (!size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Type_size_x");
    *size = dt_size(t);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_size_x, PMPI_Type_size_x)

#define EXTENT_FN(NAME, T, LBF, EXTF)                                                              \
    int P##NAME(MPI_Datatype datatype, T *lb, T *extent)                                           \
    {                                                                                              \
        QUERY_PROLOGUE(#NAME, datatype, t);                                                        \
        if (!lb || !extent)                                                                        \
            return MPII_ERR(MPI_ERR_ARG, #NAME);                                                   \
        *lb = (T)LBF(t);                                                                           \
        *extent = (T)EXTF(t);                                                                      \
        return MPI_SUCCESS;                                                                        \
    }                                                                                              \
    MPII_WEAK(NAME, P##NAME)

EXTENT_FN(MPI_Type_get_extent, MPI_Aint, dt_lb, dt_extent)
EXTENT_FN(MPI_Type_get_extent_c, MPI_Count, dt_lb, dt_extent)
EXTENT_FN(MPI_Type_get_extent_x, MPI_Count, dt_lb, dt_extent)
EXTENT_FN(MPI_Type_get_true_extent, MPI_Aint, dt_true_lb, dt_true_extent)
EXTENT_FN(MPI_Type_get_true_extent_c, MPI_Count, dt_true_lb, dt_true_extent)
EXTENT_FN(MPI_Type_get_true_extent_x, MPI_Count, dt_true_lb, dt_true_extent)

/* ------------------------------------------------------------ envelope / contents */

static const int combiner_mpi[] = {
    [DT_COMBINER_NAMED] = MPI_COMBINER_NAMED,
    [DT_COMBINER_DUP] = MPI_COMBINER_DUP,
    [DT_COMBINER_CONTIGUOUS] = MPI_COMBINER_CONTIGUOUS,
    [DT_COMBINER_VECTOR] = MPI_COMBINER_VECTOR,
    [DT_COMBINER_HVECTOR] = MPI_COMBINER_HVECTOR,
    [DT_COMBINER_INDEXED] = MPI_COMBINER_INDEXED,
    [DT_COMBINER_HINDEXED] = MPI_COMBINER_HINDEXED,
    [DT_COMBINER_INDEXED_BLOCK] = MPI_COMBINER_INDEXED_BLOCK,
    [DT_COMBINER_HINDEXED_BLOCK] = MPI_COMBINER_HINDEXED_BLOCK,
    [DT_COMBINER_STRUCT] = MPI_COMBINER_STRUCT,
    [DT_COMBINER_SUBARRAY] = MPI_COMBINER_SUBARRAY,
    [DT_COMBINER_DARRAY] = MPI_COMBINER_DARRAY,
    [DT_COMBINER_RESIZED] = MPI_COMBINER_RESIZED,
};

/* A decoded derived type in the MPI layout: classic (large == 0) or large-count. */
typedef struct decoded {
    int combiner;
    int64_t ni, na, nl, nt;
    int64_t *ints, *aints, *larges; /* malloc'd (never NULL after success) */
    dt_t *const *types;             /* borrowed from dt */
} decoded_t;

static void decoded_free(decoded_t *d)
{
    free(d->ints);
    free(d->aints);
    free(d->larges);
}

static int decode(const dt_t *t, int large, decoded_t *d)
{
    dt_combiner_t c;
    int ni, na, nt;
    const int64_t *ints, *aints;
    memset(d, 0, sizeof *d);
    if (dt_get_contents(t, &c, &ni, &ints, &na, &aints, &nt, &d->types))
        return MPI_ERR_TYPE;
    d->combiner = combiner_mpi[c];
    d->nt = nt;
    d->ints = malloc(sizeof(int64_t) * (size_t)(ni + 1));
    d->aints = malloc(sizeof(int64_t) * (size_t)(na + 1));
    d->larges = malloc(sizeof(int64_t) * (size_t)(ni + na + 1));
    if (!d->ints || !d->aints || !d->larges) {
        decoded_free(d);
        return MPI_ERR_NO_MEM;
    }
    if (ni)
        memcpy(d->ints, ints, sizeof(int64_t) * (size_t)ni);
    /* MPI's encodings of order, distributions and default dargs */
    if (c == DT_COMBINER_SUBARRAY) {
        d->ints[ni - 1] = d->ints[ni - 1] == DT_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    } else if (c == DT_COMBINER_DARRAY) {
        int64_t nd = d->ints[2];
        for (int64_t i = 0; i < nd; i++) {
            int64_t *dis = &d->ints[3 + nd + i], *dar = &d->ints[3 + 2 * nd + i];
            *dis = *dis == DT_DISTRIBUTE_BLOCK    ? MPI_DISTRIBUTE_BLOCK
                   : *dis == DT_DISTRIBUTE_CYCLIC ? MPI_DISTRIBUTE_CYCLIC
                                                  : MPI_DISTRIBUTE_NONE;
            if (*dar == DT_DISTRIBUTE_DFLT_DARG)
                *dar = MPI_DISTRIBUTE_DFLT_DARG;
        }
        d->ints[ni - 1] = d->ints[ni - 1] == DT_ORDER_C ? MPI_ORDER_C : MPI_ORDER_FORTRAN;
    }
    if (!large) {
        d->ni = ni;
        d->na = na;
        if (na)
            memcpy(d->aints, aints, sizeof(int64_t) * (size_t)na);
        return MPI_SUCCESS;
    }
    int64_t *I = d->ints;
    if (c == DT_COMBINER_SUBARRAY) { /* ints {ndims, order}, large {sizes, subsizes, starts} */
        int64_t nd = I[0];
        memcpy(d->larges, I + 1, sizeof(int64_t) * (size_t)(3 * nd));
        d->nl = 3 * nd;
        I[1] = I[ni - 1];
        d->ni = 2;
    } else if (c == DT_COMBINER_DARRAY) { /* large {gsizes}, the rest in ints */
        int64_t nd = I[2];
        memcpy(d->larges, I + 3, sizeof(int64_t) * (size_t)nd);
        d->nl = nd;
        memmove(I + 3, I + 3 + nd, sizeof(int64_t) * (size_t)(ni - 3 - nd));
        d->ni = ni - nd;
    } else { /* every count and displacement is a large count */
        if (ni)
            memcpy(d->larges, I, sizeof(int64_t) * (size_t)ni);
        if (na)
            memcpy(d->larges + ni, aints, sizeof(int64_t) * (size_t)na);
        d->nl = ni + na;
    }
    return MPI_SUCCESS;
}

/* MPI_ERR_TYPE for datatype argument h, which is not a datatype, explained for the caller's
 * raise (mpii_err_note). */
static int bad_datatype(MPI_Datatype h)
{
    char d[128];
    mpii_bad_handle_text(d, sizeof d, MPI_ERR_TYPE, "datatype", h);
    mpii_err_note(MPI_ERR_TYPE, "%s", d);
    return MPI_ERR_TYPE;
}

static int envelope(MPI_Datatype h, int large_api, int64_t *ni, int64_t *na, int64_t *nl,
                    int64_t *nt, int *combiner)
{
    dt_t *t = mpii_type_get(h);
    if (!t)
        return bad_datatype(h);
    if (predef_id(h)) {
        *ni = *na = *nl = *nt = 0;
        *combiner = MPI_COMBINER_NAMED;
        return MPI_SUCCESS;
    }
    int f90[2], n90;
    if (mpii_type_f90_contents(h, combiner, &n90, f90)) {
        *ni = n90;
        *na = *nl = *nt = 0;
        return MPI_SUCCESS;
    }
    mpii_type_t *o = mpii_type_obj(h);
    decoded_t d;
    int rc = decode(t, large_api && o->large, &d);
    if (rc)
        return rc;
    *ni = d.ni;
    *na = d.na;
    *nl = d.nl;
    *nt = d.nt;
    *combiner = d.combiner;
    decoded_free(&d);
    return MPI_SUCCESS;
}

int PMPI_Type_get_envelope(MPI_Datatype datatype, int *num_integers, int *num_addresses,
                           int *num_datatypes, int *combiner)
{
    static const char fname[] = "MPI_Type_get_envelope";
    MPII_CHECK_INIT(fname);
    if (!num_integers || !num_addresses || !num_datatypes || !combiner)
        return MPII_ERR_NULL(MPI_COMM_NULL,
                             !num_integers    ? "num_integers"
                             : !num_addresses ? "num_addresses"
                             : !num_datatypes ? "num_datatypes"
                                              : "combiner",
                             fname);
    int64_t ni, na, nl, nt;
    int rc = envelope(datatype, 0, &ni, &na, &nl, &nt, combiner);
    if (!rc && (ni > INT_MAX || na > INT_MAX || nt > INT_MAX))
        return MPII_ERRF(MPI_ERR_TYPE, fname,
                         "datatype %#x has more than INT_MAX entries: use MPI_Type_get_envelope_c",
                         (unsigned)datatype);
    if (rc)
        return MPII_ERR(rc, fname);
    *num_integers = (int)ni;
    *num_addresses = (int)na;
    *num_datatypes = (int)nt;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_get_envelope, PMPI_Type_get_envelope)

int PMPI_Type_get_envelope_c(MPI_Datatype datatype, MPI_Count *num_integers,
                             MPI_Count *num_addresses, MPI_Count *num_large_counts,
                             MPI_Count *num_datatypes, int *combiner)
{
    static const char fname[] = "MPI_Type_get_envelope_c";
    MPII_CHECK_INIT(fname);
    if (!num_integers || !num_addresses || !num_large_counts || !num_datatypes || !combiner)
        return MPII_ERR_NULL(MPI_COMM_NULL,
                             !num_integers       ? "num_integers"
                             : !num_addresses    ? "num_addresses"
                             : !num_large_counts ? "num_large_counts"
                             : !num_datatypes    ? "num_datatypes"
                                                 : "combiner",
                             fname);
    int64_t ni, na, nl, nt;
    int rc = envelope(datatype, 1, &ni, &na, &nl, &nt, combiner);
    if (rc)
        return MPII_ERR(rc, fname);
    *num_integers = ni;
    *num_addresses = na;
    *num_large_counts = nl;
    *num_datatypes = nt;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_get_envelope_c, PMPI_Type_get_envelope_c)

/* Fills the caller's arrays from a derived type's decoding. */
static int contents(MPI_Datatype h, int large_api, int64_t maxi, int64_t maxa, int64_t maxl,
                    int64_t maxt, int *ints, MPI_Aint *aints, MPI_Count *larges,
                    MPI_Datatype *types)
{
    dt_t *t = mpii_type_get(h);
    if (!t)
        return bad_datatype(h);
    if (predef_id(h)) { /* MPI_COMBINER_NAMED has no contents */
        mpii_err_note(MPI_ERR_TYPE, "datatype %#x is predefined: it has no contents", (unsigned)h);
        return MPI_ERR_TYPE;
    }
    int f90[2], n90, comb;
    if (mpii_type_f90_contents(h, &comb, &n90, f90)) {
        if (maxi < n90 || !ints) {
            mpii_err_note(MPI_ERR_ARG, "max_integers %lld or array_of_integers %p for %d integers",
                          (long long)maxi, (void *)ints, n90);
            return MPI_ERR_ARG;
        }
        for (int i = 0; i < n90; i++)
            ints[i] = f90[i];
        return MPI_SUCCESS;
    }
    mpii_type_t *o = mpii_type_obj(h);
    decoded_t d;
    int rc = decode(t, large_api && o->large, &d);
    if (rc)
        return rc;
    /* each kind of entry: how many there are, the room and the array given */
    const struct {
        const char *max, *array;
        int64_t n, room;
        const void *p;
    } k[] = {{"max_integers", "array_of_integers", d.ni, maxi, ints},
             {"max_addresses", "array_of_addresses", d.na, maxa, aints},
             {"max_large_counts", "array_of_large_counts", d.nl, maxl, larges},
             {"max_datatypes", "array_of_datatypes", d.nt, maxt, types}};
    for (size_t i = 0; !rc && i < sizeof k / sizeof *k; i++) {
        if (k[i].room < k[i].n)
            mpii_err_note(rc = MPI_ERR_ARG, "%s %lld < %lld, the datatype's number of them",
                          k[i].max, (long long)k[i].room, (long long)k[i].n);
        else if (k[i].n && !k[i].p)
            mpii_err_note(rc = MPI_ERR_ARG, "%s NULL for %lld entries", k[i].array,
                          (long long)k[i].n);
    }
    for (int64_t i = 0; !rc && i < d.ni; i++) {
        if (d.ints[i] > INT_MAX || d.ints[i] < INT_MIN) /* needs the large-count variant */
            mpii_err_note(rc = MPI_ERR_TYPE,
                          "integer %lld of datatype %#x exceeds int: use MPI_Type_get_contents_c",
                          (long long)i, (unsigned)h);
    }
    if (!rc) {
        for (int64_t i = 0; i < d.ni; i++)
            ints[i] = (int)d.ints[i];
        for (int64_t i = 0; i < d.na; i++)
            aints[i] = (MPI_Aint)d.aints[i];
        for (int64_t i = 0; i < d.nl; i++)
            larges[i] = (MPI_Count)d.larges[i];
        for (int64_t i = 0; i < d.nt && !rc; i++) {
            rc = type_handle_for(d.types[i], &types[i]);
            if (rc) /* give back the handles made so far */
                for (int64_t j = 0; j < i; j++)
                    if (mpii_type_obj(types[j]))
                        PMPI_Type_free(&types[j]);
        }
    }
    decoded_free(&d);
    return rc;
}

int PMPI_Type_get_contents(MPI_Datatype datatype, int max_integers, int max_addresses,
                           int max_datatypes, int array_of_integers[],
                           MPI_Aint array_of_addresses[], MPI_Datatype array_of_datatypes[])
{
    static const char fname[] = "MPI_Type_get_contents";
    MPII_CHECK_INIT(fname);
    int rc = contents(datatype, 0, max_integers, max_addresses, 0, max_datatypes, array_of_integers,
                      array_of_addresses, NULL, array_of_datatypes);
    return rc ? MPII_ERR(rc, fname) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_get_contents, PMPI_Type_get_contents)

int PMPI_Type_get_contents_c(MPI_Datatype datatype, MPI_Count max_integers, MPI_Count max_addresses,
                             MPI_Count max_large_counts, MPI_Count max_datatypes,
                             int array_of_integers[], MPI_Aint array_of_addresses[],
                             MPI_Count array_of_large_counts[], MPI_Datatype array_of_datatypes[])
{
    static const char fname[] = "MPI_Type_get_contents_c";
    MPII_CHECK_INIT(fname);
    int rc =
        contents(datatype, 1, max_integers, max_addresses, max_large_counts, max_datatypes,
                 array_of_integers, array_of_addresses, array_of_large_counts, array_of_datatypes);
    return rc ? MPII_ERR(rc, fname) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_get_contents_c, PMPI_Type_get_contents_c)

/* ------------------------------------------------------------ names */

int PMPI_Type_set_name(MPI_Datatype datatype, const char *type_name)
{
    static const char fname[] = "MPI_Type_set_name";
    MPII_CHECK_INIT(fname);
    if (!type_name)
        return MPII_ERR(MPI_ERR_ARG, fname);
    int id = predef_id(datatype);
    mpii_type_t *o = id ? NULL : mpii_type_obj(datatype);
    if (!id && !o)
        return MPII_ERR(MPI_ERR_TYPE, fname);
    char *dst = id ? predef_name[id] : o->name;
    size_t n = strnlen(type_name, MPI_MAX_OBJECT_NAME - 1);
    memcpy(dst, type_name, n);
    dst[n] = 0;
    if (id)
        predef_named[id] = 1;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_set_name, PMPI_Type_set_name)

int PMPI_Type_get_name(MPI_Datatype datatype, char *type_name, int *resultlen)
{
    static const char fname[] = "MPI_Type_get_name";
    MPII_CHECK_INIT(fname);
    if (!type_name || !resultlen)
        return MPII_ERR(MPI_ERR_ARG, fname);
    const char *src;
    int id = FMPL_MPI_DT_IS_PREDEF(datatype) ? FMPL_MPI_DT_ID(datatype) : 0;
    if (id >= 1 && id <= FMPL_MPI_DTID_MAX && predef[id].h == datatype) {
        /* every predefined type has its name, also those dt does not provide */
        src = predef_named[id] ? predef_name[id] : predef[id].name;
    } else {
        mpii_type_t *o = mpii_type_obj(datatype);
        if (!o)
            return MPII_ERR(MPI_ERR_TYPE, fname);
        src = o->name;
    }
    size_t n = strnlen(src, MPI_MAX_OBJECT_NAME - 1);
    memcpy(type_name, src, n);
    type_name[n] = 0;
    *resultlen = (int)n;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Type_get_name, PMPI_Type_get_name)

int PMPI_Type_match_size(int typeclass, int size, MPI_Datatype *datatype)
{
    static const char fname[] = "MPI_Type_match_size";
    MPII_CHECK_INIT(fname);
    if (!datatype)
        return MPII_ERR(MPI_ERR_ARG, fname);
    static const MPI_Datatype cand[3][6] = {
        {MPI_INTEGER1, MPI_INTEGER2, MPI_INTEGER4, MPI_INTEGER8, MPI_INTEGER16, MPI_DATATYPE_NULL},
        {MPI_REAL2, MPI_REAL4, MPI_REAL8, MPI_REAL16, MPI_LONG_DOUBLE, MPI_DATATYPE_NULL},
        {MPI_COMPLEX4, MPI_COMPLEX8, MPI_COMPLEX16, MPI_COMPLEX32, MPI_C_LONG_DOUBLE_COMPLEX,
         MPI_DATATYPE_NULL},
    };
    if (typeclass < MPI_TYPECLASS_INTEGER || typeclass > MPI_TYPECLASS_COMPLEX)
        return MPII_ERR(MPI_ERR_ARG, fname);
    for (const MPI_Datatype *c = cand[typeclass - 1]; *c != MPI_DATATYPE_NULL; c++)
        if (predef_id(*c) && FMPL_MPI_DT_SIZE(*c) == size) {
            *datatype = *c;
            return MPI_SUCCESS;
        }
    return MPII_ERR(MPI_ERR_ARG, fname);
}
MPII_WEAK(MPI_Type_match_size, PMPI_Type_match_size)

/* ------------------------------------------------------------ addresses */

int PMPI_Get_address(const void *location, MPI_Aint *address)
{
    if (!address)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Get_address");
    *address = (MPI_Aint)(uintptr_t)location;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_address, PMPI_Get_address)

MPI_Aint PMPI_Aint_add(MPI_Aint base, MPI_Aint disp)
{
    return (MPI_Aint)((uintptr_t)base + (uintptr_t)disp);
}
MPII_WEAK(MPI_Aint_add, PMPI_Aint_add)

MPI_Aint PMPI_Aint_diff(MPI_Aint addr1, MPI_Aint addr2)
{
    return (MPI_Aint)((uintptr_t)addr1 - (uintptr_t)addr2);
}
MPII_WEAK(MPI_Aint_diff, PMPI_Aint_diff)

/* ------------------------------------------------------------ pack / unpack */

/* external: 0 native, 1 external32. comm: checked when external == 0. */
static int pack(int external, const void *inbuf, int64_t incount, MPI_Datatype datatype,
                void *outbuf, int64_t outsize, int64_t *position, MPI_Comm comm, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!external && !mpii_comm_get(comm))
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fname);
#define FAIL(code) return external ? MPII_ERR(code, fname) : MPII_ERR_COMM(comm, code, fname)
    if (incount < 0)
        FAIL(MPI_ERR_COUNT);
    if (mpii_type_check_comm(datatype))
        FAIL(MPI_ERR_TYPE);
    dt_t *t = mpii_type_get(datatype);
    if (!position || outsize < 0 || *position < 0 || *position > outsize)
        FAIL(MPI_ERR_ARG);
    int64_t need;
    if (__builtin_mul_overflow(incount, external ? dt_ext32_size(t) : dt_size(t), &need))
        FAIL(MPI_ERR_COUNT);
    if (need > outsize - *position)
        FAIL(MPI_ERR_ARG); /* outbuf too small */
    if (need == 0)
        return MPI_SUCCESS;
    if (!outbuf)
        FAIL(MPI_ERR_BUFFER);
    /* inbuf may be MPI_BOTTOM (NULL) with absolute displacements: dt takes it as is. */
    char *out = (char *)outbuf + *position;
    int rc = external ? dt_pack_external(t, incount, inbuf, 0, need, out)
                      : dt_pack(t, incount, inbuf, 0, need, out);
    if (rc)
        FAIL(fmpl2mpi(rc));
    *position += need;
    return MPI_SUCCESS;
}

static int unpack(int external, const void *inbuf, int64_t insize, int64_t *position, void *outbuf,
                  int64_t outcount, MPI_Datatype datatype, MPI_Comm comm, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!external && !mpii_comm_get(comm))
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fname);
    if (outcount < 0)
        FAIL(MPI_ERR_COUNT);
    if (mpii_type_check_comm(datatype))
        FAIL(MPI_ERR_TYPE);
    dt_t *t = mpii_type_get(datatype);
    if (!position || insize < 0 || *position < 0 || *position > insize)
        FAIL(MPI_ERR_ARG);
    int64_t need;
    if (__builtin_mul_overflow(outcount, external ? dt_ext32_size(t) : dt_size(t), &need))
        FAIL(MPI_ERR_COUNT);
    if (need > insize - *position)
        FAIL(MPI_ERR_TRUNCATE); /* the packed data ends before outcount elements */
    if (need == 0)
        return MPI_SUCCESS;
    if (!inbuf)
        FAIL(MPI_ERR_BUFFER);
    const char *in = (const char *)inbuf + *position; /* outbuf may be MPI_BOTTOM */
    int rc = external ? dt_unpack_external(t, outcount, outbuf, 0, need, in)
                      : dt_unpack(t, outcount, outbuf, 0, need, in);
    if (rc)
        FAIL(fmpl2mpi(rc));
    *position += need;
    return MPI_SUCCESS;
}

int PMPI_Pack(const void *inbuf, int incount, MPI_Datatype datatype, void *outbuf, int outsize,
              int *position, MPI_Comm comm)
{
    int64_t pos = position ? *position : 0;
    int rc = pack(0, inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL, comm,
                  "MPI_Pack");
    if (!rc)
        *position = (int)pos; /* <= outsize */
    return rc;
}
MPII_WEAK(MPI_Pack, PMPI_Pack)

int PMPI_Pack_c(const void *inbuf, MPI_Count incount, MPI_Datatype datatype, void *outbuf,
                MPI_Count outsize, MPI_Count *position, MPI_Comm comm)
{
    int64_t pos = position ? *position : 0;
    int rc = pack(0, inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL, comm,
                  "MPI_Pack_c");
    if (!rc)
        *position = pos;
    return rc;
}
MPII_WEAK(MPI_Pack_c, PMPI_Pack_c)

int PMPI_Unpack(const void *inbuf, int insize, int *position, void *outbuf, int outcount,
                MPI_Datatype datatype, MPI_Comm comm)
{
    int64_t pos = position ? *position : 0;
    int rc = unpack(0, inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype, comm,
                    "MPI_Unpack");
    if (!rc)
        *position = (int)pos;
    return rc;
}
MPII_WEAK(MPI_Unpack, PMPI_Unpack)

int PMPI_Unpack_c(const void *inbuf, MPI_Count insize, MPI_Count *position, void *outbuf,
                  MPI_Count outcount, MPI_Datatype datatype, MPI_Comm comm)
{
    int64_t pos = position ? *position : 0;
    int rc = unpack(0, inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype, comm,
                    "MPI_Unpack_c");
    if (!rc)
        *position = pos;
    return rc;
}
MPII_WEAK(MPI_Unpack_c, PMPI_Unpack_c)

/* Pack_size / Pack_external_size: incount elements' packed bytes in *size. */
static int pack_size(int external, int64_t incount, MPI_Datatype datatype, MPI_Comm comm,
                     int64_t *size, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!external && !mpii_comm_get(comm))
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fname);
    if (incount < 0)
        FAIL(MPI_ERR_COUNT);
    dt_t *t = mpii_type_get(datatype);
    if (!t)
        FAIL(MPI_ERR_TYPE);
    if (__builtin_mul_overflow(incount, external ? dt_ext32_size(t) : dt_size(t), size))
        FAIL(MPI_ERR_COUNT);
    return MPI_SUCCESS;
}

int PMPI_Pack_size(int incount, MPI_Datatype datatype, MPI_Comm comm, int *size)
{
    int64_t s;
    int rc = pack_size(0, incount, datatype, comm, &s, "MPI_Pack_size");
    if (rc)
        return rc;
    if (!size)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Pack_size");
    if (s > INT_MAX)
        return MPII_ERR_COMM(comm, MPI_ERR_VALUE_TOO_LARGE, "MPI_Pack_size");
    *size = (int)s;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Pack_size, PMPI_Pack_size)

int PMPI_Pack_size_c(MPI_Count incount, MPI_Datatype datatype, MPI_Comm comm, MPI_Count *size)
{
    int64_t s;
    int rc = pack_size(0, incount, datatype, comm, &s, "MPI_Pack_size_c");
    if (rc)
        return rc;
    if (!size)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Pack_size_c");
    *size = s;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Pack_size_c, PMPI_Pack_size_c)
#undef FAIL

/* "external32" is the only data representation Pack_external knows. */
static int datarep_ok(const char *datarep)
{
    return datarep && strcmp(datarep, "external32") == 0;
}

int PMPI_Pack_external(const char datarep[], const void *inbuf, int incount, MPI_Datatype datatype,
                       void *outbuf, MPI_Aint outsize, MPI_Aint *position)
{
    if (!datarep_ok(datarep))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Pack_external");
    int64_t pos = position ? *position : 0;
    int rc = pack(1, inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL,
                  MPI_COMM_NULL, "MPI_Pack_external");
    if (!rc)
        *position = (MPI_Aint)pos;
    return rc;
}
MPII_WEAK(MPI_Pack_external, PMPI_Pack_external)

int PMPI_Pack_external_c(const char datarep[], const void *inbuf, MPI_Count incount,
                         MPI_Datatype datatype, void *outbuf, MPI_Count outsize,
                         MPI_Count *position)
{
    if (!datarep_ok(datarep))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Pack_external_c");
    int64_t pos = position ? *position : 0;
    int rc = pack(1, inbuf, incount, datatype, outbuf, outsize, position ? &pos : NULL,
                  MPI_COMM_NULL, "MPI_Pack_external_c");
    if (!rc)
        *position = pos;
    return rc;
}
MPII_WEAK(MPI_Pack_external_c, PMPI_Pack_external_c)

int PMPI_Unpack_external(const char datarep[], const void *inbuf, MPI_Aint insize,
                         MPI_Aint *position, void *outbuf, int outcount, MPI_Datatype datatype)
{
    if (!datarep_ok(datarep))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Unpack_external");
    int64_t pos = position ? *position : 0;
    int rc = unpack(1, inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype,
                    MPI_COMM_NULL, "MPI_Unpack_external");
    if (!rc)
        *position = (MPI_Aint)pos;
    return rc;
}
MPII_WEAK(MPI_Unpack_external, PMPI_Unpack_external)

int PMPI_Unpack_external_c(const char datarep[], const void *inbuf, MPI_Count insize,
                           MPI_Count *position, void *outbuf, MPI_Count outcount,
                           MPI_Datatype datatype)
{
    if (!datarep_ok(datarep))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Unpack_external_c");
    int64_t pos = position ? *position : 0;
    int rc = unpack(1, inbuf, insize, position ? &pos : NULL, outbuf, outcount, datatype,
                    MPI_COMM_NULL, "MPI_Unpack_external_c");
    if (!rc)
        *position = pos;
    return rc;
}
MPII_WEAK(MPI_Unpack_external_c, PMPI_Unpack_external_c)

int PMPI_Pack_external_size(const char datarep[], int incount, MPI_Datatype datatype,
                            MPI_Aint *size)
{
    if (!datarep_ok(datarep) || !size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Pack_external_size");
    int64_t s;
    int rc = pack_size(1, incount, datatype, MPI_COMM_NULL, &s, "MPI_Pack_external_size");
    if (!rc)
        *size = (MPI_Aint)s;
    return rc;
}
MPII_WEAK(MPI_Pack_external_size, PMPI_Pack_external_size)

int PMPI_Pack_external_size_c(const char datarep[], MPI_Count incount, MPI_Datatype datatype,
                              MPI_Count *size)
{
    if (!datarep_ok(datarep) || !size)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Pack_external_size_c");
    int64_t s;
    int rc = pack_size(1, incount, datatype, MPI_COMM_NULL, &s, "MPI_Pack_external_size_c");
    if (!rc)
        *size = s;
    return rc;
}
MPII_WEAK(MPI_Pack_external_size_c, PMPI_Pack_external_size_c)

/* ------------------------------------------------------------ status: counts */

#define STATUS_PROLOGUE(fname, status, datatype, t, out)                                           \
    MPII_CHECK_INIT(fname);                                                                        \
    if (!(status) || is_sentinel(status) || !(out))                                                \
        return MPII_ERR(MPI_ERR_ARG, fname);                                                       \
    dt_t *t = mpii_type_get(datatype);                                                             \
    if (!t)                                                                                        \
        return MPII_ERR(MPI_ERR_TYPE, fname);

/* Whole elements of t in the status's byte count, or MPI_UNDEFINED. */
static int64_t count_of(const dt_t *t, const MPI_Status *st)
{
    int64_t s = dt_size(t), b = st->fmpl_count;
    if (s == 0)
        return 0;
    return b % s ? MPI_UNDEFINED : b / s;
}

/* Basic elements in the status's byte count, or MPI_UNDEFINED when it ends inside one. */
static int64_t elements_of(const dt_t *t, const MPI_Status *st)
{
    int64_t b = st->fmpl_count;
    if (dt_size(t) == 0 || b <= 0)
        return 0;
    int64_t e = dt_elements_in(t, b);
    return e == dt_elements_in(t, b - 1) ? MPI_UNDEFINED : e;
}

int PMPI_Get_count(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    STATUS_PROLOGUE("MPI_Get_count", status, datatype, t, count);
    int64_t c = count_of(t, status);
    *count = c > INT_MAX ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_count, PMPI_Get_count)

int PMPI_Get_count_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    STATUS_PROLOGUE("MPI_Get_count_c", status, datatype, t, count);
    *count = count_of(t, status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_count_c, PMPI_Get_count_c)

int PMPI_Get_elements(const MPI_Status *status, MPI_Datatype datatype, int *count)
{
    STATUS_PROLOGUE("MPI_Get_elements", status, datatype, t, count);
    int64_t c = elements_of(t, status);
    *count = c > INT_MAX ? MPI_UNDEFINED : (int)c;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_elements, PMPI_Get_elements)

int PMPI_Get_elements_c(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    STATUS_PROLOGUE("MPI_Get_elements_c", status, datatype, t, count);
    *count = elements_of(t, status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_elements_c, PMPI_Get_elements_c)

int PMPI_Get_elements_x(const MPI_Status *status, MPI_Datatype datatype, MPI_Count *count)
{
    STATUS_PROLOGUE("MPI_Get_elements_x", status, datatype, t, count);
    *count = elements_of(t, status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_elements_x, PMPI_Get_elements_x)

/* Sets the byte count so that Get_elements(t) gives count (and Get_count the matching
 * number of whole elements). */
static int set_elements(MPI_Status *status, MPI_Datatype datatype, int64_t count, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!status || is_sentinel(status))
        return MPII_ERR(MPI_ERR_ARG, fname);
    if (count < 0)
        return MPII_ERR(MPI_ERR_COUNT, fname);
    dt_t *t = mpii_type_get(datatype);
    if (!t)
        return MPII_ERR(MPI_ERR_TYPE, fname);
    int64_t ne = dt_nelem(t), s = dt_size(t);
    if (ne == 0) {
        if (count)
            return MPII_ERR(MPI_ERR_COUNT, fname);
        status->fmpl_count = 0;
        return MPI_SUCCESS;
    }
    int64_t full = count / ne, rem = count % ne, lo = 0, hi = s;
    while (lo < hi) { /* the fewest bytes holding rem basic elements */
        int64_t mid = lo + (hi - lo) / 2;
        if (dt_elements_in(t, mid) >= rem)
            hi = mid;
        else
            lo = mid + 1;
    }
    int64_t b;
    if (__builtin_mul_overflow(full, s, &b) || __builtin_add_overflow(b, lo, &b))
        return MPII_ERR(MPI_ERR_COUNT, fname);
    status->fmpl_count = b;
    return MPI_SUCCESS;
}

int PMPI_Status_set_elements(MPI_Status *status, MPI_Datatype datatype, int count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements");
}
MPII_WEAK(MPI_Status_set_elements, PMPI_Status_set_elements)

int PMPI_Status_set_elements_x(MPI_Status *status, MPI_Datatype datatype, MPI_Count count)
{
    return set_elements(status, datatype, count, "MPI_Status_set_elements_x");
}
MPII_WEAK(MPI_Status_set_elements_x, PMPI_Status_set_elements_x)

int PMPI_Status_set_cancelled(MPI_Status *status, int flag)
{
    MPII_CHECK_INIT("MPI_Status_set_cancelled");
    if (!status || is_sentinel(status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_set_cancelled");
    status->fmpl_cancelled = flag != 0;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_set_cancelled, PMPI_Status_set_cancelled)

int PMPI_Test_cancelled(const MPI_Status *status, int *flag)
{
    MPII_CHECK_INIT("MPI_Test_cancelled");
    if (!status || is_sentinel(status) || !flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Test_cancelled");
    *flag = status->fmpl_cancelled != 0;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Test_cancelled, PMPI_Test_cancelled)

/* (mpi_impl.h) A handle for the type t: its predefined handle, or a new handle holding a
 * new reference (MPI_File_get_view's etype and filetype). */
int mpii_type_handle_for(dt_t *t, MPI_Datatype *out)
{
    return type_handle_for(t, out);
}
