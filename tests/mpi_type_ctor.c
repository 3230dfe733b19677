/* mpi_type_ctor.c — every datatype constructor: size, extent, true extent, envelope,
 * contents; predefined types (sizes, names); names, dup, free, match_size, addresses;
 * error classes. */
#include <stddef.h>
#include <string.h>

#include "mpi_type_common.h"

static void check_shape(MPI_Datatype t, MPI_Count size, MPI_Aint lb, MPI_Aint extent, MPI_Aint tlb,
                        MPI_Aint textent)
{
    int s;
    MPI_Count sc, lbc, exc;
    MPI_Aint l, e;
    OK(MPI_Type_size(t, &s));
    CHECK(s == size);
    OK(MPI_Type_size_c(t, &sc));
    CHECK(sc == size);
    OK(MPI_Type_size_x(t, &sc));
    CHECK(sc == size);
    OK(MPI_Type_get_extent(t, &l, &e));
    CHECK(l == lb && e == extent);
    OK(MPI_Type_get_extent_c(t, &lbc, &exc));
    CHECK(lbc == lb && exc == extent);
    OK(MPI_Type_get_extent_x(t, &lbc, &exc));
    CHECK(lbc == lb && exc == extent);
    OK(MPI_Type_get_true_extent(t, &l, &e));
    CHECK(l == tlb && e == textent);
    OK(MPI_Type_get_true_extent_c(t, &lbc, &exc));
    CHECK(lbc == tlb && exc == textent);
    OK(MPI_Type_get_true_extent_x(t, &lbc, &exc));
    CHECK(lbc == tlb && exc == textent);
}

/* Envelope and contents equal the expected arrays; returned derived types are freed. */
static void check_contents(MPI_Datatype t, int comb, int ni, const int *ints, int na,
                           const MPI_Aint *aints, int nt, const MPI_Datatype *types)
{
    int gi, ga, gt, gc;
    OK(MPI_Type_get_envelope(t, &gi, &ga, &gt, &gc));
    CHECK(gc == comb && gi == ni && ga == na && gt == nt);
    int ri[64];
    MPI_Aint ra[64];
    MPI_Datatype rt[16];
    OK(MPI_Type_get_contents(t, 64, 64, 16, ri, ra, rt));
    for (int i = 0; i < ni; i++)
        CHECK(ri[i] == ints[i]);
    for (int i = 0; i < na; i++)
        CHECK(ra[i] == aints[i]);
    for (int i = 0; i < nt; i++) {
        int ci, ca, ct, cc;
        OK(MPI_Type_get_envelope(rt[i], &ci, &ca, &ct, &cc));
        if (cc == MPI_COMBINER_NAMED) {
            CHECK(rt[i] == types[i]);
        } else { /* a new handle: the same layout, freed by us */
            CHECK(rt[i] != types[i]);
            MPI_Count s1, s2;
            OK(MPI_Type_size_c(rt[i], &s1));
            OK(MPI_Type_size_c(types[i], &s2));
            CHECK(s1 == s2);
            OK(MPI_Type_free(&rt[i]));
        }
    }
    if (ni > 0) /* too small an array */
        CHECK_CLASS(MPI_Type_get_contents(t, ni - 1, 64, 16, ri, ra, rt), MPI_ERR_ARG);
}

static void predefined(void)
{
    static const struct {
        MPI_Datatype t;
        const char *name;
        int size, extent;
    } p[] = {
        {MPI_CHAR, "MPI_CHAR", 1, 1},
        {MPI_SIGNED_CHAR, "MPI_SIGNED_CHAR", 1, 1},
        {MPI_UNSIGNED_CHAR, "MPI_UNSIGNED_CHAR", 1, 1},
        {MPI_BYTE, "MPI_BYTE", 1, 1},
        {MPI_WCHAR, "MPI_WCHAR", sizeof(wchar_t), sizeof(wchar_t)},
        {MPI_SHORT, "MPI_SHORT", 2, 2},
        {MPI_UNSIGNED_SHORT, "MPI_UNSIGNED_SHORT", 2, 2},
        {MPI_INT, "MPI_INT", 4, 4},
        {MPI_UNSIGNED, "MPI_UNSIGNED", 4, 4},
        {MPI_LONG, "MPI_LONG", sizeof(long), sizeof(long)},
        {MPI_UNSIGNED_LONG, "MPI_UNSIGNED_LONG", sizeof(long), sizeof(long)},
        {MPI_LONG_LONG, "MPI_LONG_LONG_INT", 8, 8}, /* one handle: the primary name */
        {MPI_UNSIGNED_LONG_LONG, "MPI_UNSIGNED_LONG_LONG", 8, 8},
        {MPI_FLOAT, "MPI_FLOAT", 4, 4},
        {MPI_DOUBLE, "MPI_DOUBLE", 8, 8},
        {MPI_LONG_DOUBLE, "MPI_LONG_DOUBLE", sizeof(long double), sizeof(long double)},
        {MPI_INT8_T, "MPI_INT8_T", 1, 1},
        {MPI_INT16_T, "MPI_INT16_T", 2, 2},
        {MPI_INT32_T, "MPI_INT32_T", 4, 4},
        {MPI_INT64_T, "MPI_INT64_T", 8, 8},
        {MPI_UINT8_T, "MPI_UINT8_T", 1, 1},
        {MPI_UINT16_T, "MPI_UINT16_T", 2, 2},
        {MPI_UINT32_T, "MPI_UINT32_T", 4, 4},
        {MPI_UINT64_T, "MPI_UINT64_T", 8, 8},
        {MPI_C_BOOL, "MPI_C_BOOL", 1, 1},
        {MPI_C_FLOAT_COMPLEX, "MPI_C_COMPLEX", 8, 8},
        {MPI_C_DOUBLE_COMPLEX, "MPI_C_DOUBLE_COMPLEX", 16, 16},
        {MPI_C_LONG_DOUBLE_COMPLEX, "MPI_C_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double),
         2 * sizeof(long double)},
        {MPI_AINT, "MPI_AINT", 8, 8},
        {MPI_OFFSET, "MPI_OFFSET", 8, 8},
        {MPI_COUNT, "MPI_COUNT", 8, 8},
        {MPI_PACKED, "MPI_PACKED", 1, 1},
        {MPI_FLOAT_INT, "MPI_FLOAT_INT", 8, 8},
        {MPI_DOUBLE_INT, "MPI_DOUBLE_INT", 12, 16},
        {MPI_LONG_INT, "MPI_LONG_INT", sizeof(long) + 4, sizeof(struct fmpl_mpi_long_int_)},
        {MPI_2INT, "MPI_2INT", 8, 8},
        {MPI_SHORT_INT, "MPI_SHORT_INT", 6, 8},
        {MPI_LONG_DOUBLE_INT, "MPI_LONG_DOUBLE_INT", sizeof(long double) + 4,
         sizeof(struct fmpl_mpi_long_double_int_)},
        {MPI_CXX_BOOL, "MPI_CXX_BOOL", 1, 1},
        {MPI_CXX_FLOAT_COMPLEX, "MPI_CXX_FLOAT_COMPLEX", 8, 8},
        {MPI_CXX_DOUBLE_COMPLEX, "MPI_CXX_DOUBLE_COMPLEX", 16, 16},
        {MPI_CXX_LONG_DOUBLE_COMPLEX, "MPI_CXX_LONG_DOUBLE_COMPLEX", 2 * sizeof(long double),
         2 * sizeof(long double)},
        {MPI_INTEGER, "MPI_INTEGER", 4, 4},
        {MPI_REAL, "MPI_REAL", 4, 4},
        {MPI_DOUBLE_PRECISION, "MPI_DOUBLE_PRECISION", 8, 8},
        {MPI_COMPLEX, "MPI_COMPLEX", 8, 8},
        {MPI_DOUBLE_COMPLEX, "MPI_DOUBLE_COMPLEX", 16, 16},
        {MPI_LOGICAL, "MPI_LOGICAL", 4, 4},
        {MPI_CHARACTER, "MPI_CHARACTER", 1, 1},
        {MPI_2INTEGER, "MPI_2INTEGER", 8, 8},
        {MPI_2REAL, "MPI_2REAL", 8, 8},
        {MPI_2DOUBLE_PRECISION, "MPI_2DOUBLE_PRECISION", 16, 16},
        {MPI_INTEGER1, "MPI_INTEGER1", 1, 1},
        {MPI_INTEGER2, "MPI_INTEGER2", 2, 2},
        {MPI_INTEGER4, "MPI_INTEGER4", 4, 4},
        {MPI_INTEGER8, "MPI_INTEGER8", 8, 8},
        {MPI_REAL4, "MPI_REAL4", 4, 4},
        {MPI_REAL8, "MPI_REAL8", 8, 8},
        {MPI_COMPLEX8, "MPI_COMPLEX8", 8, 8},
        {MPI_COMPLEX16, "MPI_COMPLEX16", 16, 16},
    };
    for (size_t i = 0; i < sizeof p / sizeof p[0]; i++) {
        int size, len, ni, na, nt, comb;
        MPI_Aint lb, ext;
        char name[MPI_MAX_OBJECT_NAME];
        OK(MPI_Type_size(p[i].t, &size));
        OK(MPI_Type_get_extent(p[i].t, &lb, &ext));
        OK(MPI_Type_get_name(p[i].t, name, &len));
        if (size != p[i].size || lb != 0 || ext != p[i].extent || strcmp(name, p[i].name) ||
            len != (int)strlen(p[i].name)) {
            fprintf(stderr, "%s: size %d extent %ld name %s\n", p[i].name, size, (long)ext, name);
            CHECK(0);
        }
        OK(MPI_Type_get_envelope(p[i].t, &ni, &na, &nt, &comb));
        CHECK(comb == MPI_COMBINER_NAMED && ni == 0 && na == 0 && nt == 0);
        int ri[1];
        MPI_Aint ra[1];
        MPI_Datatype rt[1];
        CHECK_CLASS(MPI_Type_get_contents(p[i].t, 1, 1, 1, ri, ra, rt), MPI_ERR_TYPE);
        MPI_Datatype c = p[i].t;
        CHECK_CLASS(MPI_Type_free(&c), MPI_ERR_TYPE);
        OK(MPI_Type_commit(&c)); /* committing a predefined type is harmless */
    }
    /* optional Fortran types dt does not provide still have their names */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    OK(MPI_Type_get_name(MPI_REAL16, name, &len));
    CHECK(strcmp(name, "MPI_REAL16") == 0);
    /* synonyms */
    CHECK(MPI_C_COMPLEX == MPI_C_FLOAT_COMPLEX && MPI_LONG_LONG_INT == MPI_LONG_LONG);
    /* renaming a predefined type, then back */
    OK(MPI_Type_set_name(MPI_INT, "my int"));
    OK(MPI_Type_get_name(MPI_INT, name, &len));
    CHECK(strcmp(name, "my int") == 0 && len == 6);
    OK(MPI_Type_set_name(MPI_INT, "MPI_INT"));
}

static void constructors(void)
{
    MPI_Datatype t, t2;

    OK(MPI_Type_contiguous(3, MPI_INT, &t));
    check_shape(t, 12, 0, 12, 0, 12);
    check_contents(t, MPI_COMBINER_CONTIGUOUS, 1, (int[]){3}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));
    CHECK(t == MPI_DATATYPE_NULL);

    MPI_Datatype vec;
    OK(MPI_Type_vector(3, 2, 4, MPI_INT, &vec));
    check_shape(vec, 24, 0, 40, 0, 40);
    check_contents(vec, MPI_COMBINER_VECTOR, 3, (int[]){3, 2, 4}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_INT});
    /* negative stride: elements below the start */
    OK(MPI_Type_vector(2, 1, -3, MPI_INT, &t));
    check_shape(t, 8, -12, 16, -12, 16);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hvector(2, 3, 100, MPI_DOUBLE, &t));
    check_shape(t, 48, 0, 124, 0, 124);
    check_contents(t, MPI_COMBINER_HVECTOR, 2, (int[]){2, 3}, 1, (MPI_Aint[]){100}, 1,
                   (MPI_Datatype[]){MPI_DOUBLE});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_indexed(2, (int[]){1, 2}, (int[]){4, 0}, MPI_INT, &t));
    check_shape(t, 12, 0, 20, 0, 20);
    check_contents(t, MPI_COMBINER_INDEXED, 5, (int[]){2, 1, 2, 4, 0}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hindexed(2, (int[]){1, 1}, (MPI_Aint[]){8, -8}, MPI_DOUBLE, &t));
    check_shape(t, 16, -8, 24, -8, 24);
    check_contents(t, MPI_COMBINER_HINDEXED, 3, (int[]){2, 1, 1}, 2, (MPI_Aint[]){8, -8}, 1,
                   (MPI_Datatype[]){MPI_DOUBLE});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_indexed_block(3, 2, (int[]){0, 5, 10}, MPI_SHORT, &t));
    check_shape(t, 12, 0, 24, 0, 24);
    check_contents(t, MPI_COMBINER_INDEXED_BLOCK, 5, (int[]){3, 2, 0, 5, 10}, 0, NULL, 1,
                   (MPI_Datatype[]){MPI_SHORT});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hindexed_block(2, 1, (MPI_Aint[]){4, 20}, MPI_INT, &t));
    check_shape(t, 8, 4, 20, 4, 20);
    check_contents(t, MPI_COMBINER_HINDEXED_BLOCK, 2, (int[]){2, 1}, 2, (MPI_Aint[]){4, 20}, 1,
                   (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));

    /* struct {int; double; char[2]} padded to the alignment of double */
    OK(MPI_Type_create_struct(3, (int[]){1, 1, 2}, (MPI_Aint[]){0, 8, 16},
                              (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR}, &t));
    check_shape(t, 14, 0, 24, 0, 18);
    check_contents(t, MPI_COMBINER_STRUCT, 4, (int[]){3, 1, 1, 2}, 3, (MPI_Aint[]){0, 8, 16}, 3,
                   (MPI_Datatype[]){MPI_INT, MPI_DOUBLE, MPI_CHAR});
    /* a struct holding a derived type: get_contents gives a new handle for it */
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 64}, (MPI_Datatype[]){vec, MPI_INT},
                              &t2));
    check_shape(t2, 28, 0, 68, 0, 68);
    check_contents(t2, MPI_COMBINER_STRUCT, 3, (int[]){2, 1, 1}, 2, (MPI_Aint[]){0, 64}, 2,
                   (MPI_Datatype[]){vec, MPI_INT});
    OK(MPI_Type_free(&t2));
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_subarray(2, (int[]){4, 6}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_C,
                                MPI_INT, &t));
    check_shape(t, 24, 0, 96, 32, 36);
    check_contents(t, MPI_COMBINER_SUBARRAY, 8, (int[]){2, 4, 6, 2, 3, 1, 2, MPI_ORDER_C}, 0, NULL,
                   1, (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_subarray(2, (int[]){4, 6}, (int[]){2, 3}, (int[]){1, 2}, MPI_ORDER_FORTRAN,
                                MPI_INT, &t));
    /* Fortran order: first index fastest; elements (1..2, 2..4) at i + 4 j */
    check_shape(t, 24, 0, 96, (1 + 4 * 2) * 4, ((2 + 4 * 4) - (1 + 4 * 2) + 1) * 4);
    check_contents(t, MPI_COMBINER_SUBARRAY, 8, (int[]){2, 4, 6, 2, 3, 1, 2, MPI_ORDER_FORTRAN}, 0,
                   NULL, 1, (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_darray(
        4, 1, 2, (int[]){4, 4}, (int[]){MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC},
        (int[]){MPI_DISTRIBUTE_DFLT_DARG, 1}, (int[]){2, 2}, MPI_ORDER_C, MPI_INT, &t));
    /* rank 1 = coords (0, 1): rows 0-1, columns 1 and 3: ints 1, 3, 5, 7 */
    check_shape(t, 16, 0, 64, 4, 28);
    check_contents(t, MPI_COMBINER_DARRAY, 12,
                   (int[]){4, 1, 2, 4, 4, MPI_DISTRIBUTE_BLOCK, MPI_DISTRIBUTE_CYCLIC,
                           MPI_DISTRIBUTE_DFLT_DARG, 1, 2, 2, MPI_ORDER_C},
                   0, NULL, 1, (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_resized(MPI_INT, -4, 16, &t));
    check_shape(t, 4, -4, 16, 0, 4);
    check_contents(t, MPI_COMBINER_RESIZED, 0, NULL, 2, (MPI_Aint[]){-4, 16}, 1,
                   (MPI_Datatype[]){MPI_INT});
    OK(MPI_Type_free(&t));

    /* dup: same layout, combiner DUP, committed state kept */
    OK(MPI_Type_commit(&vec));
    OK(MPI_Type_dup(vec, &t));
    check_shape(t, 24, 0, 40, 0, 40);
    check_contents(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){vec});
    int buf[16] = {0}, pos = 0;
    char packed[64];
    OK(MPI_Pack(buf, 1, t, packed, sizeof packed, &pos, MPI_COMM_WORLD)); /* committed */
    OK(MPI_Type_free(&t));
    OK(MPI_Type_dup(MPI_DOUBLE, &t));
    check_contents(t, MPI_COMBINER_DUP, 0, NULL, 0, NULL, 1, (MPI_Datatype[]){MPI_DOUBLE});
    OK(MPI_Type_free(&t));

    /* a type stays usable after the type it was built from is freed */
    MPI_Datatype v2;
    OK(MPI_Type_vector(2, 1, 2, MPI_INT, &v2));
    OK(MPI_Type_contiguous(2, v2, &t));
    OK(MPI_Type_free(&v2));
    OK(MPI_Type_commit(&t));
    int src[8] = {1, 2, 3, 4, 5, 6, 7, 8}, out[4];
    pos = 0;
    OK(MPI_Pack(src, 1, t, out, sizeof out, &pos, MPI_COMM_WORLD));
    CHECK(pos == 16 && out[0] == 1 && out[1] == 3 && out[2] == 4 && out[3] == 6); /* extent 12 */
    OK(MPI_Type_free(&t));

    /* names of derived types */
    char name[MPI_MAX_OBJECT_NAME];
    int len = -1;
    OK(MPI_Type_get_name(vec, name, &len));
    CHECK(len == 0 && name[0] == 0);
    OK(MPI_Type_set_name(vec, "columns"));
    OK(MPI_Type_get_name(vec, name, &len));
    CHECK(len == 7 && strcmp(name, "columns") == 0);
    OK(MPI_Type_free(&vec));
}

static void large_count(void)
{
    MPI_Datatype t;
    MPI_Count ni, na, nl, nt;
    int comb;
    OK(MPI_Type_contiguous_c(5, MPI_INT, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nt, &comb));
    CHECK(comb == MPI_COMBINER_CONTIGUOUS && ni == 0 && na == 0 && nl == 1 && nt == 1);
    int ri[4];
    MPI_Aint ra[4];
    MPI_Count rl[8];
    MPI_Datatype rt[2];
    OK(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ri, ra, rl, rt));
    CHECK(rl[0] == 5 && rt[0] == MPI_INT);
    int i1, i2, i3; /* the classic variant shows the same in ints */
    OK(MPI_Type_get_envelope(t, &i1, &i2, &i3, &comb));
    CHECK(i1 == 1 && i2 == 0 && i3 == 1);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_subarray_c(2, (MPI_Count[]){4, 6}, (MPI_Count[]){2, 3}, (MPI_Count[]){1, 2},
                                  MPI_ORDER_C, MPI_INT, &t));
    check_shape(t, 24, 0, 96, 32, 36);
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nt, &comb));
    CHECK(comb == MPI_COMBINER_SUBARRAY && ni == 2 && na == 0 && nl == 6 && nt == 1);
    OK(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ri, ra, rl, rt));
    CHECK(ri[0] == 2 && ri[1] == MPI_ORDER_C && rl[0] == 4 && rl[1] == 6 && rl[2] == 2 &&
          rl[3] == 3 && rl[4] == 1 && rl[5] == 2);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_hvector_c(2, 3, 100, MPI_DOUBLE, &t));
    OK(MPI_Type_get_envelope_c(t, &ni, &na, &nl, &nt, &comb));
    CHECK(comb == MPI_COMBINER_HVECTOR && ni == 0 && na == 0 && nl == 3);
    OK(MPI_Type_get_contents_c(t, 4, 4, 8, 2, ri, ra, rl, rt));
    CHECK(rl[0] == 2 && rl[1] == 3 && rl[2] == 100);
    OK(MPI_Type_free(&t));

    OK(MPI_Type_create_struct_c(2, (MPI_Count[]){1, 2}, (MPI_Count[]){0, 8},
                                (MPI_Datatype[]){MPI_DOUBLE, MPI_INT}, &t));
    check_shape(t, 16, 0, 16, 0, 16);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_vector_c(2, 2, 3, MPI_INT, &t));
    check_shape(t, 16, 0, 20, 0, 20);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_indexed_c(2, (MPI_Count[]){1, 2}, (MPI_Count[]){4, 0}, MPI_INT, &t));
    check_shape(t, 12, 0, 20, 0, 20);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_hindexed_c(1, (MPI_Count[]){2}, (MPI_Count[]){8}, MPI_INT, &t));
    check_shape(t, 8, 8, 8, 8, 8);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_indexed_block_c(2, 1, (MPI_Count[]){0, 3}, MPI_INT, &t));
    check_shape(t, 8, 0, 16, 0, 16);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_hindexed_block_c(2, 1, (MPI_Count[]){0, 12}, MPI_INT, &t));
    check_shape(t, 8, 0, 16, 0, 16);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_resized_c(MPI_INT, 0, 8, &t));
    check_shape(t, 4, 0, 8, 0, 4);
    OK(MPI_Type_free(&t));
    OK(MPI_Type_create_darray_c(1, 0, 1, (MPI_Count[]){5}, (int[]){MPI_DISTRIBUTE_BLOCK},
                                (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){1}, MPI_ORDER_C, MPI_INT,
                                &t));
    check_shape(t, 20, 0, 20, 0, 20);
    OK(MPI_Type_free(&t));
}

static void misc(void)
{
    MPI_Datatype t;
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &t));
    CHECK(t == MPI_INTEGER4);
    OK(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 8, &t));
    CHECK(t == MPI_INTEGER8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &t));
    CHECK(t == MPI_REAL8);
    OK(MPI_Type_match_size(MPI_TYPECLASS_REAL, 4, &t));
    CHECK(t == MPI_REAL4);
    OK(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 16, &t));
    CHECK(t == MPI_COMPLEX16);
    CHECK_CLASS(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_match_size(99, 4, &t), MPI_ERR_ARG);

    double d[4];
    MPI_Aint a0, a2;
    OK(MPI_Get_address(&d[0], &a0));
    OK(MPI_Get_address(&d[2], &a2));
    CHECK(MPI_Aint_diff(a2, a0) == 16);
    CHECK(MPI_Aint_add(a0, 16) == a2);
    CHECK(a0 == (MPI_Aint)(uintptr_t)&d[0]);
}

static void errors(void)
{
    MPI_Datatype t = MPI_DATATYPE_NULL, bad = MPI_DATATYPE_NULL;
    CHECK_CLASS(MPI_Type_contiguous(-1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_contiguous(1, MPI_DATATYPE_NULL, &t), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(1, 12345, &t), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(1, MPI_COMM_WORLD, &t), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_contiguous(1, MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_vector(-2, 1, 1, MPI_INT, &t), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Type_vector(2, -1, 1, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_indexed(2, (int[]){1, -1}, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_indexed(2, NULL, (int[]){0, 1}, MPI_INT, &t), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                                       (MPI_Datatype[]){MPI_INT, MPI_DATATYPE_NULL}, &t),
                MPI_ERR_TYPE);
    CHECK_CLASS(
        MPI_Type_create_subarray(1, (int[]){4}, (int[]){3}, (int[]){2}, MPI_ORDER_C, MPI_INT, &t),
        MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_subarray(1, (int[]){4}, (int[]){3}, (int[]){0}, 77, MPI_INT, &t),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_darray(2, 2, 1, (int[]){4}, (int[]){MPI_DISTRIBUTE_BLOCK},
                                       (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2}, MPI_ORDER_C,
                                       MPI_INT, &t),
                MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_create_darray(2, 0, 1, (int[]){4}, (int[]){42},
                                       (int[]){MPI_DISTRIBUTE_DFLT_DARG}, (int[]){2}, MPI_ORDER_C,
                                       MPI_INT, &t),
                MPI_ERR_ARG);
    CHECK(t == MPI_DATATYPE_NULL); /* untouched by failed constructors */
    int s;
    CHECK_CLASS(MPI_Type_size(MPI_DATATYPE_NULL, &s), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_size(MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Type_commit(&bad), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_free(&bad), MPI_ERR_TYPE);
    /* freed handles are invalid */
    OK(MPI_Type_contiguous(2, MPI_INT, &t));
    MPI_Datatype copy = t;
    OK(MPI_Type_free(&t));
    CHECK_CLASS(MPI_Type_size(copy, &s), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_free(&copy), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Type_set_name(MPI_INT, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Get_address(&s, NULL), MPI_ERR_ARG);
}

int main(int argc, char **argv)
{
    init_return(&argc, &argv);
    predefined();
    constructors();
    large_count();
    misc();
    errors();
    OK(MPI_Finalize());
    printf("mpi_type_ctor: ok\n");
    return 0;
}
