/* clang-format off */
/* mpih_values.c -- run-time checks of the constants in include/mpi.h.
 * Built as C (gcc, clang; -std=c99/c11) and as C++ (g++, clang++) by
 * tests/mpih_check.sh; every build prints the same digest of all handle
 * values (checked by the script), then "PASS" or the failures.
 * With -DMPIH_REFS_ONLY it is compiled only (not linked): it then also takes
 * the addresses of every MPI_/PMPI_ function and predefined callback. */
#include <mpi.h>
#include <stdio.h>
#include <stdint.h>
#include <string.h>

#ifdef __cplusplus
#include <complex>
typedef bool t_bool;
typedef std::complex<float> t_fcomplex;
typedef std::complex<double> t_dcomplex;
typedef std::complex<long double> t_ldcomplex;
#else
typedef _Bool t_bool;
typedef float _Complex t_fcomplex;
typedef double _Complex t_dcomplex;
typedef long double _Complex t_ldcomplex;
#endif

static int failures;
#define FAIL(...) do { printf("FAIL: " __VA_ARGS__); printf("\n"); failures++; } while (0)

/* ---- predefined datatypes and the C type each stands for ---- */
#define C_TYPES(X) \
    X(MPI_CHAR, char) X(MPI_SIGNED_CHAR, signed char) X(MPI_UNSIGNED_CHAR, unsigned char) \
    X(MPI_BYTE, unsigned char) X(MPI_WCHAR, wchar_t) X(MPI_SHORT, short) \
    X(MPI_UNSIGNED_SHORT, unsigned short) X(MPI_INT, int) X(MPI_UNSIGNED, unsigned) \
    X(MPI_LONG, long) X(MPI_UNSIGNED_LONG, unsigned long) X(MPI_LONG_LONG_INT, long long) \
    X(MPI_UNSIGNED_LONG_LONG, unsigned long long) X(MPI_FLOAT, float) X(MPI_DOUBLE, double) \
    X(MPI_LONG_DOUBLE, long double) X(MPI_INT8_T, int8_t) X(MPI_INT16_T, int16_t) \
    X(MPI_INT32_T, int32_t) X(MPI_INT64_T, int64_t) X(MPI_UINT8_T, uint8_t) \
    X(MPI_UINT16_T, uint16_t) X(MPI_UINT32_T, uint32_t) X(MPI_UINT64_T, uint64_t) \
    X(MPI_C_BOOL, t_bool) X(MPI_C_FLOAT_COMPLEX, t_fcomplex) X(MPI_C_DOUBLE_COMPLEX, t_dcomplex) \
    X(MPI_C_LONG_DOUBLE_COMPLEX, t_ldcomplex) X(MPI_AINT, MPI_Aint) X(MPI_OFFSET, MPI_Offset) \
    X(MPI_COUNT, MPI_Count) X(MPI_PACKED, unsigned char) \
    X(MPI_CXX_BOOL, t_bool) X(MPI_CXX_FLOAT_COMPLEX, t_fcomplex) \
    X(MPI_CXX_DOUBLE_COMPLEX, t_dcomplex) X(MPI_CXX_LONG_DOUBLE_COMPLEX, t_ldcomplex) \
    X(MPI_INTEGER, int32_t) X(MPI_REAL, float) X(MPI_DOUBLE_PRECISION, double) \
    X(MPI_COMPLEX, t_fcomplex) X(MPI_DOUBLE_COMPLEX, t_dcomplex) X(MPI_LOGICAL, int32_t) \
    X(MPI_CHARACTER, char) X(MPI_INTEGER1, int8_t) X(MPI_INTEGER2, int16_t) \
    X(MPI_INTEGER4, int32_t) X(MPI_INTEGER8, int64_t) X(MPI_INTEGER16, f_int16) \
    X(MPI_REAL2, int16_t) X(MPI_REAL4, float) X(MPI_REAL8, double) X(MPI_REAL16, f_real16) \
    X(MPI_COMPLEX4, f_complex4) X(MPI_COMPLEX8, t_fcomplex) X(MPI_COMPLEX16, t_dcomplex) \
    X(MPI_COMPLEX32, f_complex32) X(MPI_2INTEGER, f_2int) X(MPI_2REAL, f_2real) \
    X(MPI_2DOUBLE_PRECISION, f_2dp)
/* Fortran storage units without a C twin */
typedef struct { int64_t a, b; } f_int16;
typedef struct { int64_t a, b; } f_real16;
typedef struct { int16_t re, im; } f_complex4;
typedef struct { f_real16 re, im; } f_complex32;
typedef struct { int32_t v, i; } f_2int;
typedef struct { float v, i; } f_2real;
typedef struct { double v, i; } f_2dp;

/* pair types: value type; size = sizeof(V)+sizeof(int), extent = sizeof struct */
typedef struct { float v; int i; } p_float_int;
typedef struct { double v; int i; } p_double_int;
typedef struct { long v; int i; } p_long_int;
typedef struct { int v; int i; } p_2int;
typedef struct { short v; int i; } p_short_int;
typedef struct { long double v; int i; } p_long_double_int;
#define PAIR_TYPES(X) \
    X(MPI_FLOAT_INT, float, p_float_int) X(MPI_DOUBLE_INT, double, p_double_int) \
    X(MPI_LONG_INT, long, p_long_int) X(MPI_2INT, int, p_2int) \
    X(MPI_SHORT_INT, short, p_short_int) X(MPI_LONG_DOUBLE_INT, long double, p_long_double_int)

#define ERROR_CLASSES(X) \
    X(MPI_SUCCESS) X(MPI_ERR_BUFFER) X(MPI_ERR_COUNT) X(MPI_ERR_TYPE) X(MPI_ERR_TAG) X(MPI_ERR_COMM) \
    X(MPI_ERR_RANK) X(MPI_ERR_REQUEST) X(MPI_ERR_ROOT) X(MPI_ERR_GROUP) X(MPI_ERR_OP) \
    X(MPI_ERR_TOPOLOGY) X(MPI_ERR_DIMS) X(MPI_ERR_ARG) X(MPI_ERR_UNKNOWN) X(MPI_ERR_TRUNCATE) \
    X(MPI_ERR_OTHER) X(MPI_ERR_INTERN) X(MPI_ERR_PENDING) X(MPI_ERR_IN_STATUS) X(MPI_ERR_ACCESS) \
    X(MPI_ERR_AMODE) X(MPI_ERR_ASSERT) X(MPI_ERR_BAD_FILE) X(MPI_ERR_BASE) X(MPI_ERR_CONVERSION) \
    X(MPI_ERR_DISP) X(MPI_ERR_DUP_DATAREP) X(MPI_ERR_FILE_EXISTS) X(MPI_ERR_FILE_IN_USE) \
    X(MPI_ERR_FILE) X(MPI_ERR_INFO_KEY) X(MPI_ERR_INFO_NOKEY) X(MPI_ERR_INFO_VALUE) X(MPI_ERR_INFO) \
    X(MPI_ERR_IO) X(MPI_ERR_KEYVAL) X(MPI_ERR_LOCKTYPE) X(MPI_ERR_NAME) X(MPI_ERR_NO_MEM) \
    X(MPI_ERR_NOT_SAME) X(MPI_ERR_NO_SPACE) X(MPI_ERR_NO_SUCH_FILE) X(MPI_ERR_PORT) \
    X(MPI_ERR_PROC_ABORTED) X(MPI_ERR_QUOTA) X(MPI_ERR_READ_ONLY) X(MPI_ERR_RMA_ATTACH) \
    X(MPI_ERR_RMA_CONFLICT) X(MPI_ERR_RMA_RANGE) X(MPI_ERR_RMA_SHARED) X(MPI_ERR_RMA_SYNC) \
    X(MPI_ERR_RMA_FLAVOR) X(MPI_ERR_SERVICE) X(MPI_ERR_SESSION) X(MPI_ERR_SIZE) X(MPI_ERR_SPAWN) \
    X(MPI_ERR_UNSUPPORTED_DATAREP) X(MPI_ERR_UNSUPPORTED_OPERATION) X(MPI_ERR_VALUE_TOO_LARGE) \
    X(MPI_ERR_WIN) X(MPI_T_ERR_CANNOT_INIT) X(MPI_T_ERR_NOT_ACCESSIBLE) \
    X(MPI_T_ERR_NOT_INITIALIZED) X(MPI_T_ERR_NOT_SUPPORTED) X(MPI_T_ERR_MEMORY) X(MPI_T_ERR_INVALID) \
    X(MPI_T_ERR_INVALID_INDEX) X(MPI_T_ERR_INVALID_ITEM) X(MPI_T_ERR_INVALID_SESSION) \
    X(MPI_T_ERR_INVALID_HANDLE) X(MPI_T_ERR_INVALID_NAME) X(MPI_T_ERR_OUT_OF_HANDLES) \
    X(MPI_T_ERR_OUT_OF_SESSIONS) X(MPI_T_ERR_CVAR_SET_NOT_NOW) X(MPI_T_ERR_CVAR_SET_NEVER) \
    X(MPI_T_ERR_PVAR_NO_WRITE) X(MPI_T_ERR_PVAR_NO_STARTSTOP) X(MPI_T_ERR_PVAR_NO_ATOMIC) \
    X(MPI_ERR_LASTCODE)

/* null handles and the kind each belongs to */
#define NULL_HANDLES(X) \
    X(MPI_COMM_NULL, FMPL_MPI_KIND_COMM) X(MPI_GROUP_NULL, FMPL_MPI_KIND_GROUP) \
    X(MPI_DATATYPE_NULL, FMPL_MPI_KIND_DATATYPE) X(MPI_OP_NULL, FMPL_MPI_KIND_OP) \
    X(MPI_REQUEST_NULL, FMPL_MPI_KIND_REQUEST) X(MPI_ERRHANDLER_NULL, FMPL_MPI_KIND_ERRHANDLER) \
    X(MPI_INFO_NULL, FMPL_MPI_KIND_INFO) X(MPI_WIN_NULL, FMPL_MPI_KIND_WIN) \
    X(MPI_FILE_NULL, FMPL_MPI_KIND_FILE) X(MPI_MESSAGE_NULL, FMPL_MPI_KIND_MESSAGE) \
    X(MPI_SESSION_NULL, FMPL_MPI_KIND_SESSION) X(MPI_KEYVAL_INVALID, FMPL_MPI_KIND_KEYVAL)

/* other predefined handles (and keyvals) with their kind */
#define OTHER_HANDLES(X) \
    X(MPI_COMM_WORLD, FMPL_MPI_KIND_COMM) X(MPI_COMM_SELF, FMPL_MPI_KIND_COMM) \
    X(MPI_GROUP_EMPTY, FMPL_MPI_KIND_GROUP) X(MPI_MAX, FMPL_MPI_KIND_OP) X(MPI_MIN, FMPL_MPI_KIND_OP) \
    X(MPI_SUM, FMPL_MPI_KIND_OP) X(MPI_PROD, FMPL_MPI_KIND_OP) X(MPI_LAND, FMPL_MPI_KIND_OP) \
    X(MPI_BAND, FMPL_MPI_KIND_OP) X(MPI_LOR, FMPL_MPI_KIND_OP) X(MPI_BOR, FMPL_MPI_KIND_OP) \
    X(MPI_LXOR, FMPL_MPI_KIND_OP) X(MPI_BXOR, FMPL_MPI_KIND_OP) X(MPI_MINLOC, FMPL_MPI_KIND_OP) \
    X(MPI_MAXLOC, FMPL_MPI_KIND_OP) X(MPI_REPLACE, FMPL_MPI_KIND_OP) X(MPI_NO_OP, FMPL_MPI_KIND_OP) \
    X(MPI_ERRORS_ARE_FATAL, FMPL_MPI_KIND_ERRHANDLER) X(MPI_ERRORS_RETURN, FMPL_MPI_KIND_ERRHANDLER) \
    X(MPI_ERRORS_ABORT, FMPL_MPI_KIND_ERRHANDLER) X(MPI_INFO_ENV, FMPL_MPI_KIND_INFO) \
    X(MPI_MESSAGE_NO_PROC, FMPL_MPI_KIND_MESSAGE) \
    X(MPI_TAG_UB, FMPL_MPI_KIND_KEYVAL) X(MPI_HOST, FMPL_MPI_KIND_KEYVAL) X(MPI_IO, FMPL_MPI_KIND_KEYVAL) \
    X(MPI_WTIME_IS_GLOBAL, FMPL_MPI_KIND_KEYVAL) X(MPI_UNIVERSE_SIZE, FMPL_MPI_KIND_KEYVAL) \
    X(MPI_LASTUSEDCODE, FMPL_MPI_KIND_KEYVAL) X(MPI_APPNUM, FMPL_MPI_KIND_KEYVAL) \
    X(MPI_WIN_BASE, FMPL_MPI_KIND_KEYVAL) X(MPI_WIN_SIZE, FMPL_MPI_KIND_KEYVAL) \
    X(MPI_WIN_DISP_UNIT, FMPL_MPI_KIND_KEYVAL) X(MPI_WIN_CREATE_FLAVOR, FMPL_MPI_KIND_KEYVAL) \
    X(MPI_WIN_MODEL, FMPL_MPI_KIND_KEYVAL)

/* integer constants: groups whose members must be distinct from each other */
#define GROUPS(X) \
    X(rank_special, MPI_PROC_NULL, MPI_ANY_SOURCE, MPI_ROOT, MPI_UNDEFINED) \
    X(tag_special, MPI_ANY_TAG, MPI_UNDEFINED) \
    X(thread, MPI_THREAD_SINGLE, MPI_THREAD_FUNNELED, MPI_THREAD_SERIALIZED, MPI_THREAD_MULTIPLE) \
    X(compare, MPI_IDENT, MPI_CONGRUENT, MPI_SIMILAR, MPI_UNEQUAL, MPI_UNDEFINED) \
    X(topo, MPI_GRAPH, MPI_CART, MPI_DIST_GRAPH, MPI_UNDEFINED) \
    X(split_type, MPI_COMM_TYPE_SHARED, MPI_COMM_TYPE_HW_GUIDED, MPI_COMM_TYPE_HW_UNGUIDED, MPI_UNDEFINED) \
    X(combiner, MPI_COMBINER_NAMED, MPI_COMBINER_DUP, MPI_COMBINER_CONTIGUOUS, MPI_COMBINER_VECTOR, \
      MPI_COMBINER_HVECTOR, MPI_COMBINER_INDEXED, MPI_COMBINER_HINDEXED, MPI_COMBINER_INDEXED_BLOCK, \
      MPI_COMBINER_HINDEXED_BLOCK, MPI_COMBINER_STRUCT, MPI_COMBINER_SUBARRAY, MPI_COMBINER_DARRAY, \
      MPI_COMBINER_F90_REAL, MPI_COMBINER_F90_COMPLEX, MPI_COMBINER_F90_INTEGER, MPI_COMBINER_RESIZED) \
    X(order, MPI_ORDER_C, MPI_ORDER_FORTRAN) \
    X(distribute, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC, MPI_DISTRIBUTE_NONE, MPI_DISTRIBUTE_DFLT_DARG) \
    X(typeclass, MPI_TYPECLASS_INTEGER, MPI_TYPECLASS_REAL, MPI_TYPECLASS_COMPLEX) \
    X(lock, MPI_LOCK_EXCLUSIVE, MPI_LOCK_SHARED) \
    X(mode_bits, MPI_MODE_NOCHECK, MPI_MODE_NOSTORE, MPI_MODE_NOPUT, MPI_MODE_NOPRECEDE, \
      MPI_MODE_NOSUCCEED, MPI_MODE_RDONLY, MPI_MODE_RDWR, MPI_MODE_WRONLY, MPI_MODE_CREATE, \
      MPI_MODE_EXCL, MPI_MODE_DELETE_ON_CLOSE, MPI_MODE_UNIQUE_OPEN, MPI_MODE_SEQUENTIAL, \
      MPI_MODE_APPEND) \
    X(flavor, MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE, MPI_WIN_FLAVOR_DYNAMIC, MPI_WIN_FLAVOR_SHARED) \
    X(model, MPI_WIN_SEPARATE, MPI_WIN_UNIFIED) \
    X(seek, MPI_SEEK_SET, MPI_SEEK_CUR, MPI_SEEK_END) \
    X(f_status, MPI_F_SOURCE, MPI_F_TAG, MPI_F_ERROR) \
    X(t_verbosity, MPI_T_VERBOSITY_USER_BASIC, MPI_T_VERBOSITY_USER_DETAIL, MPI_T_VERBOSITY_USER_ALL, \
      MPI_T_VERBOSITY_TUNER_BASIC, MPI_T_VERBOSITY_TUNER_DETAIL, MPI_T_VERBOSITY_TUNER_ALL, \
      MPI_T_VERBOSITY_MPIDEV_BASIC, MPI_T_VERBOSITY_MPIDEV_DETAIL, MPI_T_VERBOSITY_MPIDEV_ALL) \
    X(t_bind, MPI_T_BIND_NO_OBJECT, MPI_T_BIND_MPI_COMM, MPI_T_BIND_MPI_DATATYPE, \
      MPI_T_BIND_MPI_ERRHANDLER, MPI_T_BIND_MPI_FILE, MPI_T_BIND_MPI_GROUP, MPI_T_BIND_MPI_OP, \
      MPI_T_BIND_MPI_REQUEST, MPI_T_BIND_MPI_WIN, MPI_T_BIND_MPI_MESSAGE, MPI_T_BIND_MPI_INFO, \
      MPI_T_BIND_MPI_SESSION) \
    X(t_scope, MPI_T_SCOPE_CONSTANT, MPI_T_SCOPE_READONLY, MPI_T_SCOPE_LOCAL, MPI_T_SCOPE_GROUP, \
      MPI_T_SCOPE_GROUP_EQ, MPI_T_SCOPE_ALL, MPI_T_SCOPE_ALL_EQ) \
    X(t_pvar_class, MPI_T_PVAR_CLASS_STATE, MPI_T_PVAR_CLASS_LEVEL, MPI_T_PVAR_CLASS_SIZE, \
      MPI_T_PVAR_CLASS_PERCENTAGE, MPI_T_PVAR_CLASS_HIGHWATERMARK, MPI_T_PVAR_CLASS_LOWWATERMARK, \
      MPI_T_PVAR_CLASS_COUNTER, MPI_T_PVAR_CLASS_AGGREGATE, MPI_T_PVAR_CLASS_TIMER, \
      MPI_T_PVAR_CLASS_GENERIC) \
    X(t_cb_safety, MPI_T_CB_REQUIRE_NONE, MPI_T_CB_REQUIRE_MPI_RESTRICTED, \
      MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE) \
    X(t_source_order, MPI_T_SOURCE_ORDERED, MPI_T_SOURCE_UNORDERED)

/* positive limits */
#define LIMITS(X) \
    X(MPI_MAX_PROCESSOR_NAME) X(MPI_MAX_ERROR_STRING) X(MPI_MAX_OBJECT_NAME) X(MPI_MAX_INFO_KEY) \
    X(MPI_MAX_INFO_VAL) X(MPI_MAX_LIBRARY_VERSION_STRING) X(MPI_MAX_PORT_NAME) \
    X(MPI_MAX_DATAREP_STRING) X(MPI_MAX_PSET_NAME_LEN) X(MPI_MAX_STRINGTAG_LEN) \
    X(MPI_BSEND_OVERHEAD) X(MPI_F_STATUS_SIZE) X(MPI_VERSION)

/* sentinel pointers, all distinct (as addresses) */
#define SENTINELS(X) \
    X(MPI_BOTTOM) X(MPI_IN_PLACE) X(MPI_STATUS_IGNORE) X(MPI_STATUSES_IGNORE) X(MPI_UNWEIGHTED) \
    X(MPI_WEIGHTS_EMPTY) X(MPI_ARGV_NULL) X(MPI_ARGVS_NULL) X(MPI_ERRCODES_IGNORE) \
    X(MPI_F_STATUS_IGNORE) X(MPI_F_STATUSES_IGNORE) X(MPI_F08_STATUS_IGNORE) \
    X(MPI_F08_STATUSES_IGNORE) X(MPI_T_PVAR_ALL_HANDLES)

/* handle values usable in static initializers (the standard requires it) */
static const MPI_Datatype static_types[] = { MPI_INT, MPI_DOUBLE_INT, MPI_C_BOOL };
static const MPI_Comm static_comm = MPI_COMM_WORLD;

static unsigned long digest = 5381;
static void mix(const char *name, long long v)
{
    const char *p;
    for (p = name; *p; p++) digest = digest * 33 + (unsigned char)*p;
    digest = digest * 33 + (unsigned long)v;
    printf("%s = %lld\n", name, v);
}

static int distinct(const char *what, const long long *v, const char *const *names, int n)
{
    int i, j, ok = 1;
    for (i = 0; i < n; i++)
        for (j = i + 1; j < n; j++)
            if (v[i] == v[j]) {
                FAIL("%s: %s == %s (%lld)", what, names[i], names[j], v[i]);
                ok = 0;
            }
    return ok;
}

#define NAME_OF(h) #h,
#define VALUE_OF(h) (long long)(h),
#define NAME2_OF(h, x) #h,
#define VALUE2_OF(h, x) (long long)(h),
#define NAME3_OF(h, x, y) #h,
#define VALUE3_OF(h, x, y) (long long)(h),

static void check_datatypes(void)
{
    static const char *const names[] = { C_TYPES(NAME2_OF) PAIR_TYPES(NAME3_OF) "MPI_DATATYPE_NULL" };
    const long long v[] = { C_TYPES(VALUE2_OF) PAIR_TYPES(VALUE3_OF) (long long)MPI_DATATYPE_NULL };
    int n = (int)(sizeof v / sizeof v[0]), i, ids[256];
    distinct("datatypes", v, names, n);
    memset(ids, 0, sizeof ids);
    for (i = 0; i < n - 1; i++) {
        int h = (int)v[i];
        mix(names[i], v[i]);
        if (!FMPL_MPI_DT_IS_PREDEF(h)) FAIL("%s: not a predefined datatype handle", names[i]);
        if (FMPL_MPI_DT_ID(h) < 1 || FMPL_MPI_DT_ID(h) > FMPL_MPI_DTID_MAX)
            FAIL("%s: basic id %d out of range", names[i], FMPL_MPI_DT_ID(h));
        else if (ids[FMPL_MPI_DT_ID(h)]++)
            FAIL("%s: basic id %d used twice", names[i], FMPL_MPI_DT_ID(h));
        if (FMPL_MPI_DT_CLASS(h) == FMPL_MPI_DTC_NONE) FAIL("%s: no type class", names[i]);
        if (h == MPI_DATATYPE_NULL) FAIL("%s == MPI_DATATYPE_NULL", names[i]);
    }
    if (FMPL_MPI_DT_IS_PREDEF(MPI_DATATYPE_NULL)) FAIL("MPI_DATATYPE_NULL looks predefined");
    if (FMPL_MPI_HANDLE_KIND(MPI_DATATYPE_NULL) != FMPL_MPI_KIND_DATATYPE) FAIL("MPI_DATATYPE_NULL kind");
#define CHECK_SIZE(h, T) \
    if (FMPL_MPI_DT_SIZE(h) != (int)sizeof(T) || FMPL_MPI_DT_EXTENT(h) != (int)sizeof(T)) \
        FAIL("%s: encoded size %d extent %d, sizeof(" #T ") = %d", #h, FMPL_MPI_DT_SIZE(h), \
             FMPL_MPI_DT_EXTENT(h), (int)sizeof(T));
    C_TYPES(CHECK_SIZE)
#define CHECK_PAIR(h, V, S) \
    if (FMPL_MPI_DT_SIZE(h) != (int)(sizeof(V) + sizeof(int)) || FMPL_MPI_DT_EXTENT(h) != (int)sizeof(S) || \
        FMPL_MPI_DT_CLASS(h) != FMPL_MPI_DTC_PAIR) \
        FAIL("%s: encoded size %d extent %d, want %d and %d", #h, FMPL_MPI_DT_SIZE(h), \
             FMPL_MPI_DT_EXTENT(h), (int)(sizeof(V) + sizeof(int)), (int)sizeof(S));
    PAIR_TYPES(CHECK_PAIR)
    /* synonyms */
    if (MPI_LONG_LONG != MPI_LONG_LONG_INT) FAIL("MPI_LONG_LONG is not MPI_LONG_LONG_INT");
    if (MPI_C_COMPLEX != MPI_C_FLOAT_COMPLEX) FAIL("MPI_C_COMPLEX is not MPI_C_FLOAT_COMPLEX");
    /* classes the library relies on */
    if (FMPL_MPI_DT_CLASS(MPI_INT) != FMPL_MPI_DTC_C_INTEGER || FMPL_MPI_DT_CLASS(MPI_DOUBLE) != FMPL_MPI_DTC_FLOAT ||
        FMPL_MPI_DT_CLASS(MPI_BYTE) != FMPL_MPI_DTC_BYTE || FMPL_MPI_DT_CLASS(MPI_C_BOOL) != FMPL_MPI_DTC_LOGICAL ||
        FMPL_MPI_DT_CLASS(MPI_C_DOUBLE_COMPLEX) != FMPL_MPI_DTC_COMPLEX ||
        FMPL_MPI_DT_CLASS(MPI_COUNT) != FMPL_MPI_DTC_MULTILANG || FMPL_MPI_DT_CLASS(MPI_CHAR) != FMPL_MPI_DTC_CHAR)
        FAIL("datatype classes");
    if (!FMPL_MPI_DT_IS_FORTRAN(MPI_INTEGER) || FMPL_MPI_DT_IS_FORTRAN(MPI_INT)) FAIL("Fortran bit");
    if (static_types[1] != MPI_DOUBLE_INT || static_comm != MPI_COMM_WORLD) FAIL("static initializers");
}

static void check_errors(void)
{
    static const char *const names[] = { ERROR_CLASSES(NAME_OF) };
    const long long v[] = { ERROR_CLASSES(VALUE_OF) };
    int n = (int)(sizeof v / sizeof v[0]), i;
    distinct("error classes", v, names, n);
    for (i = 0; i < n; i++) {
        mix(names[i], v[i]);
        if (v[i] < 0 || v[i] > MPI_ERR_LASTCODE) FAIL("%s = %lld outside 0..MPI_ERR_LASTCODE", names[i], v[i]);
    }
    if (MPI_SUCCESS != 0) FAIL("MPI_SUCCESS != 0");
}

static void check_handles(void)
{
    static const char *const nn[] = { NULL_HANDLES(NAME2_OF) };
    const long long nv[] = { NULL_HANDLES(VALUE2_OF) };
    static const char *const on[] = { NULL_HANDLES(NAME2_OF) OTHER_HANDLES(NAME2_OF) };
    const long long ov[] = { NULL_HANDLES(VALUE2_OF) OTHER_HANDLES(VALUE2_OF) };
    int i;
    distinct("null handles", nv, nn, (int)(sizeof nv / sizeof nv[0]));
    distinct("handles", ov, on, (int)(sizeof ov / sizeof ov[0]));
#define CHECK_NULL(h, k) mix(#h, h); \
    if (FMPL_MPI_HANDLE_KIND(h) != (k) || FMPL_MPI_HANDLE_INDEX(h) != 0 || (h) <= 0) FAIL("%s: kind/index", #h);
    NULL_HANDLES(CHECK_NULL)
#define CHECK_OTHER(h, k) mix(#h, h); \
    if (FMPL_MPI_HANDLE_KIND(h) != (k) || FMPL_MPI_HANDLE_INDEX(h) == 0 || \
        FMPL_MPI_HANDLE_INDEX(h) >= FMPL_MPI_PREDEF_MAX) FAIL("%s: kind/index", #h);
    OTHER_HANDLES(CHECK_OTHER)
    for (i = 0; i < (int)(sizeof nv / sizeof nv[0]); i++)
        if (FMPL_MPI_DT_IS_PREDEF((int)nv[i])) FAIL("%s decodes as a predefined datatype", nn[i]);
}

#define GROUP_CHECK(g, ...) { \
    static const char *const names[] = { GROUP_NAMES_(__VA_ARGS__) }; \
    const long long v[] = { __VA_ARGS__ }; \
    int i_; (void)names; \
    distinct(#g, v, names, (int)(sizeof v / sizeof v[0])); \
    for (i_ = 0; i_ < (int)(sizeof v / sizeof v[0]); i_++) mix(#g, v[i_]); }
#define GROUP_NAMES_(...) #__VA_ARGS__

static void check_constants(void)
{
    GROUPS(GROUP_CHECK)
#define CHECK_LIMIT(c) mix(#c, c); if ((c) <= 0) FAIL("%s <= 0", #c);
    LIMITS(CHECK_LIMIT)
    if (!(MPI_THREAD_SINGLE < MPI_THREAD_FUNNELED && MPI_THREAD_FUNNELED < MPI_THREAD_SERIALIZED &&
          MPI_THREAD_SERIALIZED < MPI_THREAD_MULTIPLE)) FAIL("thread levels not monotonic");
    if (MPI_ANY_TAG >= 0 || MPI_PROC_NULL >= 0 || MPI_ANY_SOURCE >= 0 || MPI_ROOT >= 0 || MPI_UNDEFINED >= 0)
        FAIL("special ranks/tags must be negative");
    if (MPI_VERSION != 4 && MPI_VERSION != 3) FAIL("MPI_VERSION");
    mix("MPI_SUBVERSION", MPI_SUBVERSION);
    if ((int)sizeof(MPI_Aint) != (int)sizeof(void *) || sizeof(MPI_Aint) != sizeof(ptrdiff_t) ||
        sizeof(MPI_Offset) != 8 || sizeof(MPI_Count) != 8 || sizeof(MPI_Fint) != sizeof(int))
        FAIL("scalar type sizes");
    if ((int)(sizeof(MPI_Status) / sizeof(int)) != MPI_F_STATUS_SIZE) FAIL("MPI_F_STATUS_SIZE");
    {
        MPI_Status st;
        st.MPI_SOURCE = 1; st.MPI_TAG = 2; st.MPI_ERROR = MPI_SUCCESS;
        if (st.MPI_SOURCE + st.MPI_TAG != 3) FAIL("MPI_Status fields");
    }
}

static void check_sentinels(void)
{
#define SNAME(p) #p,
#define SVALUE(p) (long long)(uintptr_t)(p),
    static const char *const names[] = { SENTINELS(SNAME) };
    const long long v[] = { SENTINELS(SVALUE) };
    int n = (int)(sizeof v / sizeof v[0]), i;
    distinct("sentinel pointers", v, names, n);
    for (i = 0; i < n; i++) {
        mix(names[i], v[i]);
        if (v[i] < 0 || v[i] >= 4096) FAIL("%s: not inside page zero", names[i]);
        if (i > 0 && v[i] == 0) FAIL("%s is NULL", names[i]);
    }
    if (MPI_BOTTOM != (void *)0) FAIL("MPI_BOTTOM must be address 0");
    if (MPI_T_ENUM_NULL != 0 || MPI_T_CVAR_HANDLE_NULL != 0 || MPI_T_PVAR_HANDLE_NULL != 0 ||
        MPI_T_PVAR_SESSION_NULL != 0) FAIL("MPI_T null handles");
    if (MPI_CONVERSION_FN_NULL != 0 || MPI_CONVERSION_FN_NULL_C != 0) FAIL("MPI_CONVERSION_FN_NULL");
}

#ifdef MPIH_REFS_ONLY
/* Compile-only: every callback typedef is usable and every predefined
 * callback has the right type (the library defines them). */
void *mpih_callback_refs(void);
void *mpih_callback_refs(void)
{
    static MPI_Comm_copy_attr_function *cc[] = { MPI_COMM_NULL_COPY_FN, MPI_COMM_DUP_FN };
    static MPI_Comm_delete_attr_function *cd = MPI_COMM_NULL_DELETE_FN;
    static MPI_Type_copy_attr_function *tc[] = { MPI_TYPE_NULL_COPY_FN, MPI_TYPE_DUP_FN };
    static MPI_Type_delete_attr_function *td = MPI_TYPE_NULL_DELETE_FN;
    static MPI_Win_copy_attr_function *wc[] = { MPI_WIN_NULL_COPY_FN, MPI_WIN_DUP_FN };
    static MPI_Win_delete_attr_function *wd = MPI_WIN_NULL_DELETE_FN;
    static MPI_Copy_function *oc[] = { MPI_NULL_COPY_FN, MPI_DUP_FN };
    static MPI_Delete_function *od = MPI_NULL_DELETE_FN;
    static MPI_Datarep_conversion_function *dc = MPI_CONVERSION_FN_NULL;
    static MPI_Datarep_conversion_function_c *dcc = MPI_CONVERSION_FN_NULL_C;
    static MPI_User_function *uf; static MPI_User_function_c *ufc;
    static MPI_Comm_errhandler_function *ce; static MPI_Win_errhandler_function *we;
    static MPI_File_errhandler_function *fe; static MPI_Session_errhandler_function *se;
    static MPI_Comm_errhandler_fn *ce2; static MPI_Win_errhandler_fn *we2; static MPI_File_errhandler_fn *fe2;
    static MPI_Handler_function *hf;
    static MPI_Grequest_query_function *gq; static MPI_Grequest_free_function *gf;
    static MPI_Grequest_cancel_function *gc; static MPI_Datarep_extent_function *de;
    static MPI_T_event_cb_function *ecb; static MPI_T_event_free_cb_function *efc;
    static MPI_T_event_dropped_cb_function *edc;
    static MPI_T_enum te; static MPI_T_cvar_handle tch; static MPI_T_pvar_handle tph;
    static MPI_T_pvar_session tps; static MPI_T_event_instance tei; static MPI_T_event_registration ter;
    static MPI_F08_status f08;
    static void *all[40];
    int k = 0;
    all[k++] = (void *)cc; all[k++] = (void *)&cd; all[k++] = (void *)tc; all[k++] = (void *)&td;
    all[k++] = (void *)wc; all[k++] = (void *)&wd; all[k++] = (void *)oc; all[k++] = (void *)&od;
    all[k++] = (void *)&dc; all[k++] = (void *)&dcc; all[k++] = (void *)&uf; all[k++] = (void *)&ufc;
    all[k++] = (void *)&ce; all[k++] = (void *)&we; all[k++] = (void *)&fe; all[k++] = (void *)&se;
    all[k++] = (void *)&ce2; all[k++] = (void *)&we2; all[k++] = (void *)&fe2; all[k++] = (void *)&hf;
    all[k++] = (void *)&gq; all[k++] = (void *)&gf; all[k++] = (void *)&gc; all[k++] = (void *)&de;
    all[k++] = (void *)&ecb; all[k++] = (void *)&efc; all[k++] = (void *)&edc; all[k++] = (void *)&te;
    all[k++] = (void *)&tch; all[k++] = (void *)&tph; all[k++] = (void *)&tps; all[k++] = (void *)&tei;
    all[k++] = (void *)&ter; all[k++] = (void *)&f08;
    return all[k - 1];
}
void mpih_run_checks(void);
void mpih_run_checks(void)
{
    check_datatypes(); check_errors(); check_handles(); check_constants(); check_sentinels();
}
#include "mpih_funcrefs.h" /* generated by mpih_check.sh: &MPI_x and &PMPI_x for every function */
#else
int main(void)
{
    check_datatypes();
    check_errors();
    check_handles();
    check_constants();
    check_sentinels();
    printf("digest %lu\n", digest);
    if (failures) { printf("%d failures\n", failures); return 1; }
    printf("PASS\n");
    return 0;
}
#endif
