/* dt_unit.c — deterministic tests of src/dt: predefined kinds and pairs, the MPI
 * standard's own constructor examples (vector, indexed, struct, subarray, darray) with
 * hand-computed type maps, lb/ub/resized, zero counts, negative strides, normalisation
 * (contiguity, strided descriptors), external32 byte order, element counts,
 * signatures, contents, reference counting and error codes. */
#include <complex.h>
#include <wchar.h>

#include "dt_ref.c"

static dt_t *B(int k)
{
    return dt_basic(k);
}

/* t must have exactly the type map {(disp[i], kind[i])}, with lb and ub. */
static void expect_map(const dt_t *t, int n, const int64_t *disp, const int *kind, int64_t lb,
                       int64_t ub)
{
    rtype_t r = {0};
    for (int i = 0; i < n; i++)
        ref_push(&r, disp[i], kind[i]);
    r.lb = lb;
    r.ub = ub;
    check_queries(t, &r);
    check_data(t, &r, 1);
    check_data(t, &r, 3);
    ref_free(&r);
}

static void test_kinds(void)
{
    static const int ext32[DT_NBASIC] = {[DT_CHAR] = 1,
                                         [DT_SIGNED_CHAR] = 1,
                                         [DT_UNSIGNED_CHAR] = 1,
                                         [DT_SHORT] = 2,
                                         [DT_UNSIGNED_SHORT] = 2,
                                         [DT_INT] = 4,
                                         [DT_UNSIGNED] = 4,
                                         [DT_LONG] = 4,
                                         [DT_UNSIGNED_LONG] = 4,
                                         [DT_LONG_LONG] = 8,
                                         [DT_UNSIGNED_LONG_LONG] = 8,
                                         [DT_FLOAT] = 4,
                                         [DT_DOUBLE] = 8,
                                         [DT_LONG_DOUBLE] = 16,
                                         [DT_WCHAR] = 4,
                                         [DT_INT8] = 1,
                                         [DT_INT16] = 2,
                                         [DT_INT32] = 4,
                                         [DT_INT64] = 8,
                                         [DT_UINT8] = 1,
                                         [DT_UINT16] = 2,
                                         [DT_UINT32] = 4,
                                         [DT_UINT64] = 8,
                                         [DT_BOOL] = 1,
                                         [DT_FLOAT_COMPLEX] = 8,
                                         [DT_DOUBLE_COMPLEX] = 16,
                                         [DT_LONG_DOUBLE_COMPLEX] = 32,
                                         [DT_BYTE] = 1,
                                         [DT_PACKED] = 1,
                                         [DT_AINT] = 8,
                                         [DT_OFFSET] = 8,
                                         [DT_COUNT] = 8,
                                         [DT_CXX_BOOL] = 1,
                                         [DT_CXX_FLOAT_COMPLEX] = 8,
                                         [DT_CXX_DOUBLE_COMPLEX] = 16,
                                         [DT_CXX_LONG_DOUBLE_COMPLEX] = 32,
                                         [DT_F_CHARACTER] = 1,
                                         [DT_F_LOGICAL] = 4,
                                         [DT_F_INTEGER] = 4,
                                         [DT_F_REAL] = 4,
                                         [DT_F_DOUBLE_PRECISION] = 8,
                                         [DT_F_COMPLEX] = 8,
                                         [DT_F_DOUBLE_COMPLEX] = 16,
                                         [DT_F_INTEGER1] = 1,
                                         [DT_F_INTEGER2] = 2,
                                         [DT_F_INTEGER4] = 4,
                                         [DT_F_INTEGER8] = 8,
                                         [DT_F_REAL4] = 4,
                                         [DT_F_REAL8] = 8,
                                         [DT_F_COMPLEX8] = 8,
                                         [DT_F_COMPLEX16] = 16};
    for (int k = 0; k < DT_NBASIC; k++) {
        dt_t *t = B(k);
        CHECK(t && dt_kind(t) == k && dt_is_committed(t));
        CHECK(dt_size(t) == dt_kind_info(k)->size && dt_extent(t) == dt_size(t));
        CHECK(dt_lb(t) == 0 && dt_true_lb(t) == 0 && dt_nelem(t) == 1);
        CHECK(dt_ext32_size(t) == ext32[k]);
        CHECK(dt_is_contig(t, 5));
        CHECK_RC(dt_free(t), FMPL_ERR_TYPE);
    }
    CHECK(dt_size(B(DT_LONG_DOUBLE)) == sizeof(long double));
    CHECK(dt_size(B(DT_WCHAR)) == sizeof(wchar_t));
    CHECK(dt_size(B(DT_BOOL)) == sizeof(_Bool));
    CHECK(dt_size(B(DT_LONG_DOUBLE_COMPLEX)) == sizeof(long double _Complex));
    CHECK(dt_align(B(DT_DOUBLE)) == _Alignof(double));
    /* pairs: the compiler's struct layouts */
    struct {
        int k;
        int64_t size, extent, second;
    } pairs[] = {
        {DT_FLOAT_INT, sizeof(float) + sizeof(int), sizeof(struct {
             float a;
             int b;
         }),
         4},
        {DT_DOUBLE_INT, 12, sizeof(struct {
             double a;
             int b;
         }),
         8},
        {DT_LONG_INT, sizeof(long) + 4, sizeof(struct {
             long a;
             int b;
         }),
         sizeof(long)},
        {DT_2INT, 8, 8, 4},
        {DT_SHORT_INT, 6, sizeof(struct {
             short a;
             int b;
         }),
         4},
        {DT_LONG_DOUBLE_INT, sizeof(long double) + 4, sizeof(struct {
             long double a;
             int b;
         }),
         sizeof(long double)},
        {DT_F_2REAL, 8, 8, 4},
        {DT_F_2DOUBLE_PRECISION, 16, 16, 8},
        {DT_F_2INTEGER, 8, 8, 4},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        dt_t *t = B(pairs[i].k);
        CHECK(dt_kind(t) == pairs[i].k && dt_nelem(t) == 2);
        CHECK(dt_size(t) == pairs[i].size && dt_extent(t) == pairs[i].extent);
        CHECK(dt_extent(t) == dt_kind_info(pairs[i].k)->size);
        rtype_t r;
        ref_basic(pairs[i].k, &r);
        CHECK(r.m[1].disp == pairs[i].second);
        CHECK(dt_true_extent(t) == r.m[1].disp + ksize(r.m[1].kind));
        check_queries(t, &r);
        check_data(t, &r, 4);
        ref_free(&r);
    }
    CHECK(dt_basic(-1) == NULL && dt_basic(DT_NKINDS) == NULL);
    CHECK(dt_kind_info(DT_NKINDS) == NULL && dt_kind_info(-1) == NULL);
    CHECK(strcmp(dt_kind_info(DT_UNSIGNED_LONG_LONG)->name, "unsigned long long") == 0);
}

/* The examples of the MPI standard (chapter "Datatypes"). */
static void test_standard_examples(void)
{
    /* oldtype {(double, 0), (char, 8)}, extent 16 */
    dt_t *dc, *t;
    int64_t bl[3] = {1, 1}, dp[3] = {0, 8};
    dt_t *ty[3] = {B(DT_DOUBLE), B(DT_CHAR)};
    CHECK_RC(dt_struct(2, bl, dp, ty, &dc), FMPL_SUCCESS);
    CHECK(dt_size(dc) == 9 && dt_extent(dc) == 16 && dt_lb(dc) == 0);
    {
        int64_t d[] = {0, 8};
        int k[] = {DT_DOUBLE, DT_CHAR};
        expect_map(dc, 2, d, k, 0, 16);
    }
    /* MPI_Type_contiguous(3, oldtype) */
    CHECK_RC(dt_contiguous(3, dc, &t), FMPL_SUCCESS);
    {
        int64_t d[] = {0, 8, 16, 24, 32, 40};
        int k[] = {DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR};
        expect_map(t, 6, d, k, 0, 48);
    }
    dt_free(t);
    /* MPI_Type_vector(2, 3, 4, oldtype) */
    CHECK_RC(dt_vector(2, 3, 4, dc, &t), FMPL_SUCCESS);
    {
        int64_t d[] = {0, 8, 16, 24, 32, 40, 64, 72, 80, 88, 96, 104};
        int k[12];
        for (int i = 0; i < 12; i++)
            k[i] = i % 2 ? DT_CHAR : DT_DOUBLE;
        expect_map(t, 12, d, k, 0, 112);
    }
    dt_free(t);
    /* MPI_Type_vector(3, 1, -2, oldtype) */
    CHECK_RC(dt_vector(3, 1, -2, dc, &t), FMPL_SUCCESS);
    {
        int64_t d[] = {0, 8, -32, -24, -64, -56};
        int k[] = {DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR};
        expect_map(t, 6, d, k, -64, 16);
    }
    dt_free(t);
    /* MPI_Type_create_hvector(2, 3, 4, oldtype) (4 bytes) */
    CHECK_RC(dt_hvector(2, 3, 4, dc, &t), FMPL_SUCCESS);
    {
        int64_t d[] = {0, 8, 16, 24, 32, 40, 4, 12, 20, 28, 36, 44};
        int k[12];
        for (int i = 0; i < 12; i++)
            k[i] = i % 2 ? DT_CHAR : DT_DOUBLE;
        expect_map(t, 12, d, k, 0, 52);
    }
    dt_free(t);
    /* MPI_Type_indexed(2, {3, 1}, {4, 0}, oldtype) */
    {
        int64_t b2[] = {3, 1}, d2[] = {4, 0};
        CHECK_RC(dt_indexed(2, b2, d2, dc, &t), FMPL_SUCCESS);
        int64_t d[] = {64, 72, 80, 88, 96, 104, 0, 8};
        int k[] = {DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR, DT_DOUBLE, DT_CHAR};
        expect_map(t, 8, d, k, 0, 112);
        dt_free(t);
    }
    /* MPI_Type_create_struct(3, {2, 1, 3}, {0, 16, 26}, {float, oldtype, char}) */
    {
        int64_t b3[] = {2, 1, 3}, d3[] = {0, 16, 26};
        dt_t *t3[] = {B(DT_FLOAT), dc, B(DT_CHAR)};
        CHECK_RC(dt_struct(3, b3, d3, t3, &t), FMPL_SUCCESS);
        int64_t d[] = {0, 4, 16, 24, 26, 27, 28};
        int k[] = {DT_FLOAT, DT_FLOAT, DT_DOUBLE, DT_CHAR, DT_CHAR, DT_CHAR, DT_CHAR};
        expect_map(t, 7, d, k, 0, 32); /* ub 29 padded to the double alignment */
        CHECK(dt_true_extent(t) == 29);
        dt_free(t);
    }
    dt_free(dc);
}

static void test_bounds(void)
{
    dt_t *r, *c, *s, *v;
    /* resized int: lb -4, extent 12 */
    CHECK_RC(dt_resized(B(DT_INT), -4, 12, &r), FMPL_SUCCESS);
    CHECK(dt_lb(r) == -4 && dt_ub(r) == 8 && dt_extent(r) == 12 && dt_true_lb(r) == 0);
    CHECK(!dt_is_contig(r, 2) && dt_is_contig(r, 1));
    CHECK_RC(dt_contiguous(3, r, &c), FMPL_SUCCESS);
    {
        int64_t d[] = {0, 12, 24};
        int k[] = {DT_INT, DT_INT, DT_INT};
        expect_map(c, 3, d, k, -4, 32);
        CHECK(dt_true_lb(c) == 0 && dt_true_extent(c) == 28);
    }
    /* markers stick: a struct containing the resized type takes lb/ub from them and
     * is not padded */
    {
        int64_t bl[] = {1, 1}, dp[] = {0, 40};
        dt_t *ty[] = {c, B(DT_CHAR)};
        CHECK_RC(dt_struct(2, bl, dp, ty, &s), FMPL_SUCCESS);
        CHECK(dt_lb(s) == -4 && dt_ub(s) == 32 && dt_true_extent(s) == 41);
        dt_free(s);
    }
    /* struct {char; double} with no markers: extent padded to 16 */
    {
        int64_t bl[] = {1, 1}, dp[] = {0, 8};
        dt_t *ty[] = {B(DT_CHAR), B(DT_DOUBLE)};
        CHECK_RC(dt_struct(2, bl, dp, ty, &s), FMPL_SUCCESS);
        CHECK(dt_extent(s) == 16 && dt_size(s) == 9);
        dt_free(s);
    }
    /* negative extent via resized, negative displacements */
    CHECK_RC(dt_resized(B(DT_DOUBLE), 0, -8, &v), FMPL_SUCCESS);
    dt_t *nv;
    CHECK_RC(dt_contiguous(4, v, &nv), FMPL_SUCCESS);
    {
        int64_t d[] = {0, -8, -16, -24};
        int k[] = {DT_DOUBLE, DT_DOUBLE, DT_DOUBLE, DT_DOUBLE};
        expect_map(nv, 4, d, k, -24, -8); /* per instance: ub = max(disp + ub) */
    }
    dt_free(nv);
    dt_free(v);
    {
        int64_t bl[] = {2, 1}, dp[] = {-3, -10};
        CHECK_RC(dt_indexed(2, bl, dp, B(DT_SHORT), &v), FMPL_SUCCESS);
        int64_t d[] = {-6, -4, -20};
        int k[] = {DT_SHORT, DT_SHORT, DT_SHORT};
        expect_map(v, 3, d, k, -20, -2);
        dt_free(v);
    }
    dt_free(c);
    dt_free(r);
    /* zero counts */
    dt_t *z;
    CHECK_RC(dt_contiguous(0, B(DT_INT), &z), FMPL_SUCCESS);
    CHECK(dt_size(z) == 0 && dt_extent(z) == 0 && dt_nelem(z) == 0 && dt_is_contig(z, 9));
    CHECK_RC(dt_pack(z, 5, NULL, 0, 0, NULL), FMPL_SUCCESS);
    dt_iter_t it;
    CHECK_RC(dt_iter_init(&it, z, 3, NULL, 0), FMPL_SUCCESS);
    CHECK(dt_iter_done(&it));
    dt_t *zz;
    CHECK_RC(dt_vector(3, 2, 2, z, &zz), FMPL_SUCCESS);
    CHECK(dt_size(zz) == 0 && dt_extent(zz) == 0);
    dt_free(zz);
    CHECK_RC(dt_vector(0, 2, 2, B(DT_INT), &zz), FMPL_SUCCESS);
    CHECK(dt_size(zz) == 0 && dt_extent(zz) == 0);
    dt_free(zz);
    {
        int64_t bl[] = {0, 0}, dp[] = {8, 16};
        dt_t *ty[] = {B(DT_INT), B(DT_DOUBLE)};
        CHECK_RC(dt_struct(2, bl, dp, ty, &zz), FMPL_SUCCESS);
        CHECK(dt_size(zz) == 0 && dt_lb(zz) == 0 && dt_ub(zz) == 0);
        dt_free(zz);
        CHECK_RC(dt_struct(0, NULL, NULL, NULL, &zz), FMPL_SUCCESS);
        CHECK(dt_size(zz) == 0 && dt_extent(zz) == 0);
        dt_free(zz);
    }
    /* an empty type with markers keeps them */
    CHECK_RC(dt_resized(z, -2, 10, &zz), FMPL_SUCCESS);
    dt_t *zc;
    CHECK_RC(dt_contiguous(3, zz, &zc), FMPL_SUCCESS);
    CHECK(dt_size(zc) == 0 && dt_lb(zc) == -2 && dt_ub(zc) == 28);
    dt_free(zc);
    dt_free(zz);
    dt_free(z);
}

static void test_subarray_darray(void)
{
    dt_t *t;
    /* C order: a 4x5 int array, the 2x3 block at (1, 2) */
    int64_t sz[] = {4, 5}, sub[] = {2, 3}, st[] = {1, 2};
    CHECK_RC(dt_subarray(2, sz, sub, st, DT_ORDER_C, B(DT_INT), &t), FMPL_SUCCESS);
    {
        int64_t d[] = {7 * 4, 8 * 4, 9 * 4, 12 * 4, 13 * 4, 14 * 4};
        int k[] = {DT_INT, DT_INT, DT_INT, DT_INT, DT_INT, DT_INT};
        expect_map(t, 6, d, k, 0, 80);
    }
    dt_free(t);
    /* Fortran order: first index fastest, element (i, j) at i + 4 j */
    CHECK_RC(dt_subarray(2, sz, sub, st, DT_ORDER_FORTRAN, B(DT_INT), &t), FMPL_SUCCESS);
    {
        int64_t d[] = {9 * 4, 10 * 4, 13 * 4, 14 * 4, 17 * 4, 18 * 4};
        int k[] = {DT_INT, DT_INT, DT_INT, DT_INT, DT_INT, DT_INT};
        expect_map(t, 6, d, k, 0, 80);
    }
    dt_free(t);
    /* 3-D C order of doubles, 2x2x2 at (1,1,1) in 3x3x3: each row is a 2-double block */
    int64_t s3[] = {3, 3, 3}, u3[] = {2, 2, 2}, o3[] = {1, 1, 1};
    CHECK_RC(dt_subarray(3, s3, u3, o3, DT_ORDER_C, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    {
        int64_t d[8];
        int k[8], n = 0;
        for (int a = 1; a < 3; a++)
            for (int b = 1; b < 3; b++)
                for (int c = 1; c < 3; c++) {
                    d[n] = (a * 9 + b * 3 + c) * 8;
                    k[n++] = DT_DOUBLE;
                }
        expect_map(t, 8, d, k, 0, 27 * 8);
    }
    dt_free(t);
    /* darray: 6 ints cyclic(2) over 3 processes, rank 1 owns 2 and 3 */
    int dist[2] = {DT_DISTRIBUTE_CYCLIC, DT_DISTRIBUTE_CYCLIC};
    int64_t g1[] = {6}, a1[] = {2}, p1[] = {3};
    CHECK_RC(dt_darray(3, 1, 1, g1, dist, a1, p1, DT_ORDER_C, B(DT_INT), &t), FMPL_SUCCESS);
    {
        int64_t d[] = {8, 12};
        int k[] = {DT_INT, DT_INT};
        expect_map(t, 2, d, k, 0, 24);
    }
    dt_free(t);
    /* 7 ints block-distributed over 3 (default darg 3): rank 2 owns only 6 */
    int bdist[2] = {DT_DISTRIBUTE_BLOCK, DT_DISTRIBUTE_BLOCK};
    int64_t g7[] = {7}, dflt[] = {DT_DISTRIBUTE_DFLT_DARG, DT_DISTRIBUTE_DFLT_DARG};
    CHECK_RC(dt_darray(3, 2, 1, g7, bdist, dflt, p1, DT_ORDER_C, B(DT_INT), &t), FMPL_SUCCESS);
    {
        int64_t d[] = {24};
        int k[] = {DT_INT};
        expect_map(t, 1, d, k, 0, 28);
    }
    dt_free(t);
    /* 4x4 block x block over a 2x2 grid: rank 3 = coordinates (1, 1) */
    int64_t g2[] = {4, 4}, p2[] = {2, 2};
    CHECK_RC(dt_darray(4, 3, 2, g2, bdist, dflt, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_SUCCESS);
    {
        int64_t d[] = {40, 44, 56, 60};
        int k[] = {DT_INT, DT_INT, DT_INT, DT_INT};
        expect_map(t, 4, d, k, 0, 64);
    }
    dt_free(t);
    /* Fortran order, rank 1 = (0, 1): dim 0 indices 0..1, dim 1 indices 2..3 */
    CHECK_RC(dt_darray(4, 1, 2, g2, bdist, dflt, p2, DT_ORDER_FORTRAN, B(DT_INT), &t),
             FMPL_SUCCESS);
    {
        int64_t d[] = {32, 36, 48, 52};
        int k[] = {DT_INT, DT_INT, DT_INT, DT_INT};
        expect_map(t, 4, d, k, 0, 64);
    }
    dt_free(t);
    /* errors */
    int64_t bad[] = {4, 6};
    CHECK_RC(dt_subarray(2, sz, bad, st, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_subarray(0, sz, sub, st, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_subarray(2, sz, sub, st, 7, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_subarray(2, sz, sub, st, DT_ORDER_C, NULL, &t), FMPL_ERR_TYPE);
    CHECK_RC(dt_darray(4, 4, 2, g2, bdist, dflt, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_darray(3, 0, 2, g2, bdist, dflt, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    int64_t small[] = {1, 1};
    CHECK_RC(dt_darray(4, 0, 2, g2, bdist, small, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    int ndist[2] = {DT_DISTRIBUTE_NONE, DT_DISTRIBUTE_BLOCK};
    CHECK_RC(dt_darray(4, 0, 2, g2, ndist, dflt, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
    int xdist[2] = {9, 0};
    CHECK_RC(dt_darray(4, 0, 2, g2, xdist, dflt, p2, DT_ORDER_C, B(DT_INT), &t), FMPL_ERR_ARG);
}

static void test_normalisation(void)
{
    double buf[4096];
    for (int i = 0; i < 4096; i++)
        buf[i] = i;
    dt_t *t, *u;
    dt_strided_t s;
    /* a vector whose stride equals its block length is one contiguous run */
    CHECK_RC(dt_vector(4, 2, 2, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    CHECK(dt_is_contig(t, 1) && dt_is_contig(t, 3));
    dt_free(t);
    /* struct {int; float} packed, contiguous of it: contiguous */
    {
        int64_t bl[] = {1, 1}, dp[] = {0, 4};
        dt_t *ty[] = {B(DT_INT), B(DT_FLOAT)};
        CHECK_RC(dt_struct(2, bl, dp, ty, &t), FMPL_SUCCESS);
        CHECK(dt_is_contig(t, 10));
        CHECK_RC(dt_contiguous(7, t, &u), FMPL_SUCCESS);
        CHECK(dt_is_contig(u, 2) && dt_nelem(u) == 14);
        dt_free(u);
        dt_free(t);
    }
    /* the seed-004 sub-matrix: vector(m, 1, z+1, double) is one strided descriptor */
    CHECK_RC(dt_vector(100, 1, 33, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    CHECK(dt_get_strided(t, 1, buf, &s));
    CHECK(s.addr == (char *)buf && s.blocklen == 8 && s.stride == 33 * 8 && s.count == 100);
    dt_free(t);
    CHECK_RC(dt_vector(100, 16, 33, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    CHECK(dt_get_strided(t, 1, buf, &s));
    CHECK(s.blocklen == 128 && s.stride == 33 * 8 && s.count == 100);
    dt_free(t);
    /* indexed with a constant stride becomes a vector */
    {
        int64_t bl[] = {2, 2, 2}, dp[] = {1, 6, 11};
        CHECK_RC(dt_indexed(3, bl, dp, B(DT_DOUBLE), &t), FMPL_SUCCESS);
        CHECK(dt_get_strided(t, 1, buf, &s));
        CHECK(s.addr == (char *)(buf + 1) && s.blocklen == 16 && s.stride == 40 && s.count == 3);
        dt_free(t);
    }
    /* vector of vectors tiling evenly folds into one vector: count 12 */
    CHECK_RC(dt_vector(3, 1, 2, B(DT_INT), &t), FMPL_SUCCESS);
    CHECK_RC(dt_resized(t, 0, 24, &u), FMPL_SUCCESS);
    dt_t *w;
    CHECK_RC(dt_contiguous(4, u, &w), FMPL_SUCCESS);
    CHECK(dt_get_strided(w, 1, buf, &s));
    CHECK(s.blocklen == 4 && s.stride == 8 && s.count == 12);
    CHECK(dt_get_strided(u, 4, buf, &s) && s.count == 12);
    dt_free(w);
    dt_free(u);
    dt_free(t);
    /* negative stride */
    CHECK_RC(dt_vector(3, 1, -2, B(DT_INT), &t), FMPL_SUCCESS);
    CHECK(dt_lb(t) == -16 && dt_ub(t) == 4 && dt_true_lb(t) == -16);
    CHECK(dt_get_strided(t, 1, (char *)buf + 64, &s));
    CHECK(s.addr == (char *)buf + 64 && s.stride == -8 && s.count == 3);
    dt_free(t);
    /* a long vector streams as few strided descriptors however it is chunked */
    CHECK_RC(dt_vector(1000, 1, 3, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    dt_iter_t it;
    CHECK_RC(dt_iter_init(&it, t, 1, buf, 800), FMPL_SUCCESS);
    dt_strided_t sd[4];
    int nd;
    int64_t nb;
    CHECK_RC(dt_iter_next_strided(&it, sd, 4, 1 << 20, &nd, &nb), FMPL_SUCCESS);
    CHECK(nd == 1 && nb == 8000 - 800 && sd[0].count == 900 && sd[0].addr == (char *)(buf + 300));
    dt_free(t);
}

static void test_external(void)
{
    unsigned char o[64];
    int i = 0x01020304;
    CHECK_RC(dt_pack_external(B(DT_INT), 1, &i, 0, 4, o), FMPL_SUCCESS);
    CHECK(o[0] == 1 && o[1] == 2 && o[2] == 3 && o[3] == 4);
    double d = 1.0;
    CHECK_RC(dt_pack_external(B(DT_DOUBLE), 1, &d, 0, 8, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x3F && o[1] == 0xF0 && o[7] == 0);
    float f = -2.0f;
    CHECK_RC(dt_pack_external(B(DT_FLOAT), 1, &f, 0, 4, o), FMPL_SUCCESS);
    CHECK(o[0] == 0xC0 && o[1] == 0 && o[3] == 0);
    long l = -2;
    CHECK_RC(dt_pack_external(B(DT_LONG), 1, &l, 0, 4, o), FMPL_SUCCESS);
    CHECK(o[0] == 0xFF && o[1] == 0xFF && o[2] == 0xFF && o[3] == 0xFE);
    l = 0;
    CHECK_RC(dt_unpack_external(B(DT_LONG), 1, &l, 0, 4, o), FMPL_SUCCESS);
    CHECK(l == -2);
    unsigned long ul = 0;
    CHECK_RC(dt_unpack_external(B(DT_UNSIGNED_LONG), 1, &ul, 0, 4, o), FMPL_SUCCESS);
    CHECK(ul == 0xFFFFFFFEul);
    short sh = 0x0A0B;
    CHECK_RC(dt_pack_external(B(DT_SHORT), 1, &sh, 0, 2, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x0A && o[1] == 0x0B);
    int64_t q = 0x0102030405060708ll;
    CHECK_RC(dt_pack_external(B(DT_INT64), 1, &q, 0, 8, o), FMPL_SUCCESS);
    CHECK(o[0] == 1 && o[7] == 8);
    double _Complex z = 1.0 - 2.0 * I;
    CHECK_RC(dt_pack_external(B(DT_DOUBLE_COMPLEX), 1, &z, 0, 16, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x3F && o[1] == 0xF0 && o[8] == 0xC0 && o[9] == 0x00);
    wchar_t wc = 0x263A;
    CHECK_RC(dt_pack_external(B(DT_WCHAR), 1, &wc, 0, 4, o), FMPL_SUCCESS);
    CHECK(o[0] == 0 && o[1] == 0 && o[2] == 0x26 && o[3] == 0x3A);
    _Bool bo = 1;
    CHECK_RC(dt_pack_external(B(DT_BOOL), 1, &bo, 0, 1, o), FMPL_SUCCESS);
    CHECK(o[0] == 1);
    /* long double: IEEE binary128, big-endian; 1.0 = 3FFF 0000 ... */
    long double ld[] = {1.0L, -3.5L, 0.0L, 1e300L * 1e300L, 1.0L / 3, -1e-4000L, 12345.678L};
    for (size_t k = 0; k < sizeof ld / sizeof ld[0]; k++) {
        unsigned char want[16];
        ref_ld_ext(ld[k], want);
        CHECK_RC(dt_pack_external(B(DT_LONG_DOUBLE), 1, &ld[k], 0, 16, o), FMPL_SUCCESS);
        CHECK(memcmp(o, want, 16) == 0);
        long double back = 7;
        CHECK_RC(dt_unpack_external(B(DT_LONG_DOUBLE), 1, &back, 0, 16, o), FMPL_SUCCESS);
        CHECK(back == ld[k]);
        /* in pieces splitting the element */
        back = 9;
        CHECK_RC(dt_unpack_external(B(DT_LONG_DOUBLE), 1, &back, 0, 5, o), FMPL_SUCCESS);
        CHECK_RC(dt_unpack_external(B(DT_LONG_DOUBLE), 1, &back, 5, 11, o + 5), FMPL_SUCCESS);
        CHECK(back == ld[k]);
    }
    ref_ld_ext(1.0L, o + 32);
    CHECK(o[32] == 0x3F && o[33] == 0xFF && o[34] == 0 && o[47] == 0);
    long double _Complex lz = 2.0L + 0.5L * I;
    CHECK_RC(dt_pack_external(B(DT_LONG_DOUBLE_COMPLEX), 1, &lz, 0, 32, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x40 && o[1] == 0x00 && o[16] == 0x3F && o[17] == 0xFE);
    long double _Complex lz2 = 0;
    CHECK_RC(dt_unpack_external(B(DT_LONG_DOUBLE_COMPLEX), 1, &lz2, 0, 32, o), FMPL_SUCCESS);
    CHECK(lz2 == lz);
    /* pair: double_int is 12 external bytes, no padding */
    struct {
        double a;
        int b;
    } di = {1.0, 0x01020304};
    CHECK(dt_ext32_size(B(DT_DOUBLE_INT)) == 12);
    CHECK_RC(dt_pack_external(B(DT_DOUBLE_INT), 1, &di, 0, 12, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x3F && o[8] == 1 && o[11] == 4);
    /* long_double_int */
    struct {
        long double a;
        int b;
    } ldi = {1.0L, 5}, ldi2 = {0, 0};
    CHECK_RC(dt_pack_external(B(DT_LONG_DOUBLE_INT), 1, &ldi, 0, 20, o), FMPL_SUCCESS);
    CHECK(o[0] == 0x3F && o[1] == 0xFF && o[19] == 5);
    CHECK_RC(dt_unpack_external(B(DT_LONG_DOUBLE_INT), 1, &ldi2, 0, 20, o), FMPL_SUCCESS);
    CHECK(ldi2.a == 1.0L && ldi2.b == 5);
    /* errors */
    CHECK_RC(dt_pack_external(B(DT_INT), 1, &i, 0, 5, o), FMPL_ERR_ARG);
    CHECK_RC(dt_pack_external(NULL, 1, &i, 0, 4, o), FMPL_ERR_TYPE);
}

static void test_queries(void)
{
    dt_t *t, *u;
    /* elements in the first n bytes (MPI_Get_elements) */
    CHECK_RC(dt_contiguous(3, B(DT_DOUBLE_INT), &t), FMPL_SUCCESS);
    CHECK(dt_nelem(t) == 6 && dt_size(t) == 36);
    CHECK(dt_elements_in(t, 0) == 0 && dt_elements_in(t, 7) == 0 && dt_elements_in(t, 8) == 1);
    CHECK(dt_elements_in(t, 12) == 2 && dt_elements_in(t, 13) == 2 && dt_elements_in(t, 20) == 3);
    CHECK(dt_elements_in(t, 36) == 6 && dt_elements_in(t, 72) == 12 && dt_elements_in(t, -1) == -1);
    dt_free(t);
    /* signatures */
    dt_sig_t a, b;
    CHECK_RC(dt_contiguous(6, B(DT_DOUBLE), &t), FMPL_SUCCESS);
    CHECK_RC(dt_vector(2, 3, 5, B(DT_DOUBLE), &u), FMPL_SUCCESS);
    dt_signature(t, 2, &a);
    dt_signature(u, 2, &b);
    CHECK(dt_sig_equal(&a, &b));
    dt_signature(B(DT_DOUBLE), 12, &b);
    CHECK(dt_sig_equal(&a, &b));
    dt_signature(B(DT_DOUBLE), 11, &b);
    CHECK(!dt_sig_equal(&a, &b));
    dt_signature(B(DT_INT64), 12, &b);
    CHECK(!dt_sig_equal(&a, &b));
    dt_free(t);
    dt_free(u);
    dt_signature(B(DT_2INT), 3, &a);
    dt_signature(B(DT_INT), 6, &b);
    CHECK(dt_sig_equal(&a, &b));
    {
        int64_t bl[] = {1, 1}, dp[] = {0, 8};
        dt_t *t1[] = {B(DT_INT), B(DT_DOUBLE)}, *t2[] = {B(DT_DOUBLE), B(DT_INT)};
        int64_t dp2[] = {0, 8};
        CHECK_RC(dt_struct(2, bl, dp, t1, &t), FMPL_SUCCESS);
        CHECK_RC(dt_struct(2, bl, dp2, t2, &u), FMPL_SUCCESS);
        dt_signature(t, 1, &a);
        dt_signature(u, 1, &b);
        CHECK(!dt_sig_equal(&a, &b));
        dt_signature(B(DT_DOUBLE_INT), 1, &a);
        CHECK(dt_sig_equal(&a, &b));
        dt_free(t);
        dt_free(u);
    }
    /* contents */
    dt_combiner_t c;
    int ni, na, nt;
    const int64_t *ints, *aints;
    dt_t *const *types;
    CHECK_RC(dt_vector(5, 2, 7, B(DT_FLOAT), &t), FMPL_SUCCESS);
    CHECK_RC(dt_get_contents(t, &c, &ni, &ints, &na, &aints, &nt, &types), FMPL_SUCCESS);
    CHECK(c == DT_COMBINER_VECTOR && ni == 3 && na == 0 && nt == 1);
    CHECK(ints[0] == 5 && ints[1] == 2 && ints[2] == 7 && types[0] == B(DT_FLOAT));
    {
        int64_t bl[] = {1, 3}, dp[] = {16, -8};
        CHECK_RC(dt_hindexed(2, bl, dp, t, &u), FMPL_SUCCESS);
        CHECK_RC(dt_get_contents(u, &c, &ni, &ints, &na, &aints, &nt, &types), FMPL_SUCCESS);
        CHECK(c == DT_COMBINER_HINDEXED && ni == 3 && na == 2 && nt == 1 && types[0] == t);
        CHECK(ints[0] == 2 && ints[2] == 3 && aints[0] == 16 && aints[1] == -8);
    }
    CHECK_RC(dt_get_contents(B(DT_INT), &c, &ni, NULL, &na, NULL, &nt, NULL), FMPL_SUCCESS);
    CHECK(c == DT_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0);
    /* reference counting: t freed by the user stays alive inside u */
    CHECK_RC(dt_free(t), FMPL_SUCCESS);
    CHECK_RC(dt_get_contents(u, NULL, NULL, NULL, NULL, NULL, NULL, &types), FMPL_SUCCESS);
    CHECK(dt_size(types[0]) == 40 && dt_extent(types[0]) == (4 * 7 + 2) * 4);
    dt_t *dup;
    CHECK_RC(dt_commit(u), FMPL_SUCCESS);
    CHECK_RC(dt_dup(u, &dup), FMPL_SUCCESS);
    CHECK(dt_is_committed(dup) && dt_size(dup) == dt_size(u) && dt_lb(dup) == dt_lb(u));
    dt_retain(u); /* an in-flight operation */
    CHECK_RC(dt_free(u), FMPL_SUCCESS);
    float src[512], dst[512];
    for (int i = 0; i < 512; i++)
        src[i] = (float)i;
    CHECK_RC(dt_pack(u, 1, src + 100, 0, dt_size(u), dst), FMPL_SUCCESS);
    CHECK(dst[0] == 104.0f && dst[1] == 105.0f && dst[2] == 111.0f && dst[10] == 98.0f);
    dt_release(u);
    CHECK_RC(dt_pack(dup, 1, src + 100, 0, dt_size(dup), dst), FMPL_SUCCESS);
    CHECK(dst[0] == 104.0f && dst[10] == 98.0f && dst[39] == 98.0f + 2 * 30 + 7 * 4 + 1);
    CHECK_RC(dt_get_contents(dup, &c, NULL, NULL, NULL, NULL, &nt, &types), FMPL_SUCCESS);
    CHECK(c == DT_COMBINER_DUP && nt == 1);
    dt_free(dup);
    dt_retain(B(DT_INT));
    dt_release(B(DT_INT));
    dt_release(NULL);
    CHECK_RC(dt_free(NULL), FMPL_ERR_TYPE);
}

static void test_errors(void)
{
    dt_t *t = NULL;
    int64_t one = 1, neg = -1, zero = 0;
    CHECK_RC(dt_contiguous(-1, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_contiguous(1, NULL, &t), FMPL_ERR_TYPE);
    CHECK_RC(dt_contiguous(1, B(DT_INT), NULL), FMPL_ERR_ARG);
    CHECK_RC(dt_vector(1, -1, 1, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_hvector(-2, 1, 1, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_indexed(1, &neg, &zero, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_indexed(1, NULL, &zero, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_hindexed(1, &one, NULL, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_indexed_block(1, -1, &zero, B(DT_INT), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_hindexed_block(-1, 1, &zero, B(DT_INT), &t), FMPL_ERR_ARG);
    dt_t *nt[1] = {NULL};
    CHECK_RC(dt_struct(1, &one, &zero, nt, &t), FMPL_ERR_TYPE);
    nt[0] = B(DT_INT);
    CHECK_RC(dt_struct(1, &neg, &zero, nt, &t), FMPL_ERR_ARG);
    CHECK_RC(dt_struct(1, &one, &zero, NULL, &t), FMPL_ERR_ARG);
    CHECK_RC(dt_resized(NULL, 0, 4, &t), FMPL_ERR_TYPE);
    CHECK_RC(dt_dup(NULL, &t), FMPL_ERR_TYPE);
    CHECK_RC(dt_commit(NULL), FMPL_ERR_TYPE);
    /* sizes beyond 64 bits */
    int64_t huge = INT64_MAX / 4;
    CHECK_RC(dt_contiguous(huge, B(DT_DOUBLE), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_vector(3, 2, huge, B(DT_DOUBLE), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_hindexed(1, &huge, &zero, B(DT_DOUBLE), &t), FMPL_ERR_ARG);
    CHECK_RC(dt_indexed(1, &one, &huge, B(DT_DOUBLE), &t), FMPL_ERR_ARG);
    int64_t two[2] = {INT64_MAX / 8 - 1, INT64_MAX / 8 - 1}, dz[2] = {0, 0};
    dt_t *dd[2] = {B(DT_DOUBLE), B(DT_DOUBLE)};
    CHECK_RC(dt_struct(2, two, dz, dd, &t), FMPL_ERR_ARG);
    CHECK(t == NULL);
    int buf[8] = {0}, out[8];
    CHECK_RC(dt_pack(B(DT_INT), 2, buf, 4, 5, out), FMPL_ERR_ARG);
    CHECK_RC(dt_pack(B(DT_INT), 2, buf, -1, 1, out), FMPL_ERR_ARG);
    CHECK_RC(dt_pack(B(DT_INT), -1, buf, 0, 0, out), FMPL_ERR_ARG);
    CHECK_RC(dt_pack(B(DT_INT), 2, buf, 0, 4, NULL), FMPL_ERR_ARG); /* no stream */
    {
        /* A NULL base with absolute displacements (MPI_BOTTOM): the offsets are addresses. */
        int src[3] = {11, 22, 33}, got[2] = {0, 0}, back[3] = {0, 0, 0};
        int64_t bl[2] = {1, 1},
                abs_src[2] = {(int64_t)(intptr_t)&src[2], (int64_t)(intptr_t)&src[0]};
        dt_t *abs_t;
        CHECK_RC(dt_hindexed(2, bl, abs_src, B(DT_INT), &abs_t), FMPL_SUCCESS);
        CHECK_RC(dt_pack(abs_t, 1, NULL, 0, 8, got), FMPL_SUCCESS);
        CHECK(got[0] == 33 && got[1] == 11);
        int64_t abs_back[2] = {(int64_t)(intptr_t)&back[1], (int64_t)(intptr_t)&back[2]};
        dt_t *abs_r;
        CHECK_RC(dt_hindexed(2, bl, abs_back, B(DT_INT), &abs_r), FMPL_SUCCESS);
        CHECK_RC(dt_copy(abs_t, 1, NULL, abs_r, 1, NULL, 0, 8), FMPL_SUCCESS);
        CHECK(back[0] == 0 && back[1] == 33 && back[2] == 11);
        dt_iter_t ai;
        CHECK_RC(dt_iter_init(&ai, abs_t, 1, NULL, 0), FMPL_SUCCESS);
        dt_release(abs_t);
        dt_release(abs_r);
    }
    CHECK_RC(dt_unpack(NULL, 2, buf, 0, 4, out), FMPL_ERR_TYPE);
    CHECK_RC(dt_copy(B(DT_INT), 2, buf, B(DT_INT), 1, out, 0, 8), FMPL_ERR_ARG);
    CHECK_RC(dt_copy(B(DT_INT), 2, buf, NULL, 1, out, 0, 8), FMPL_ERR_TYPE);
    dt_iter_t it;
    CHECK_RC(dt_iter_init(&it, B(DT_INT), 2, buf, 9), FMPL_ERR_ARG);
    CHECK_RC(dt_iter_init(&it, NULL, 2, buf, 0), FMPL_ERR_TYPE);
    CHECK_RC(dt_iter_init(&it, B(DT_INT), 2, buf, 0), FMPL_SUCCESS);
    struct iovec v[2];
    int n;
    int64_t nb;
    CHECK_RC(dt_iter_next(&it, v, 0, 8, &n, &nb), FMPL_ERR_ARG);
    CHECK_RC(dt_iter_next(&it, v, 2, 0, &n, &nb), FMPL_ERR_ARG);
    CHECK_RC(dt_iter_seek(&it, 9), FMPL_ERR_ARG);
    CHECK_RC(dt_iter_next(&it, v, 2, 6, &n, &nb), FMPL_SUCCESS);
    CHECK(n == 1 && nb == 6 && v[0].iov_base == (void *)buf);
}

int main(void)
{
    test_kinds();
    test_standard_examples();
    test_bounds();
    test_subarray_darray();
    test_normalisation();
    test_external();
    test_queries();
    test_errors();
    printf("dt_unit: OK\n");
    return 0;
}
