/* mpi_type_op.c — MPI_Reduce_local for every predefined op on each type class (exact
 * results), the op x class matrix of MPI-4.0 6.9.2, MINLOC/MAXLOC ties, user ops
 * (non-commutative, derived types, large count), error classes. */
#include <complex.h>
#include <string.h>

#include "mpi_type_common.h"

static void exact(void)
{
    int a[3] = {5, -2, 7}, b[3] = {3, 4, 7};
#define RED(op, T, in, io, n, ty) OK(MPI_Reduce_local(in, io, n, ty, op));
    int r[3];
    memcpy(r, b, sizeof r);
    RED(MPI_MAX, int, a, r, 3, MPI_INT);
    CHECK(r[0] == 5 && r[1] == 4 && r[2] == 7);
    memcpy(r, b, sizeof r);
    RED(MPI_MIN, int, a, r, 3, MPI_INT);
    CHECK(r[0] == 3 && r[1] == -2 && r[2] == 7);
    memcpy(r, b, sizeof r);
    RED(MPI_SUM, int, a, r, 3, MPI_INT);
    CHECK(r[0] == 8 && r[1] == 2 && r[2] == 14);
    memcpy(r, b, sizeof r);
    RED(MPI_PROD, int, a, r, 3, MPI_INT);
    CHECK(r[0] == 15 && r[1] == -8 && r[2] == 49);

    unsigned u[2] = {0xF0F0, 0x0FF0}, v[2] = {0xFF00, 0x00FF}, w[2];
    memcpy(w, v, sizeof w);
    RED(MPI_BAND, unsigned, u, w, 2, MPI_UNSIGNED);
    CHECK(w[0] == 0xF000 && w[1] == 0x00F0);
    memcpy(w, v, sizeof w);
    RED(MPI_BOR, unsigned, u, w, 2, MPI_UNSIGNED);
    CHECK(w[0] == 0xFFF0 && w[1] == 0x0FFF);
    memcpy(w, v, sizeof w);
    RED(MPI_BXOR, unsigned, u, w, 2, MPI_UNSIGNED);
    CHECK(w[0] == 0x0FF0 && w[1] == 0x0F0F);

    int la[4] = {0, 0, 3, 3}, lb[4] = {0, -1, 0, 2}, lr[4];
    memcpy(lr, lb, sizeof lr);
    RED(MPI_LAND, int, la, lr, 4, MPI_INT);
    CHECK(lr[0] == 0 && lr[1] == 0 && lr[2] == 0 && lr[3] == 1);
    memcpy(lr, lb, sizeof lr);
    RED(MPI_LOR, int, la, lr, 4, MPI_INT);
    CHECK(lr[0] == 0 && lr[1] == 1 && lr[2] == 1 && lr[3] == 1);
    memcpy(lr, lb, sizeof lr);
    RED(MPI_LXOR, int, la, lr, 4, MPI_INT);
    CHECK(lr[0] == 0 && lr[1] == 1 && lr[2] == 1 && lr[3] == 0);

    _Bool ba[2] = {1, 0}, bb[2] = {1, 1};
    RED(MPI_LXOR, _Bool, ba, bb, 2, MPI_C_BOOL);
    CHECK(bb[0] == 0 && bb[1] == 1);
    int32_t fa[2] = {1, 0}, fb[2] = {1, 1}; /* Fortran LOGICAL */
    RED(MPI_LAND, int32_t, fa, fb, 2, MPI_LOGICAL);
    CHECK(fb[0] == 1 && fb[1] == 0);

    double da[2] = {1.5, -2.25}, db[2] = {0.25, 4.0};
    RED(MPI_SUM, double, da, db, 2, MPI_DOUBLE);
    CHECK(db[0] == 1.75 && db[1] == 1.75);
    RED(MPI_PROD, double, da, db, 2, MPI_DOUBLE);
    CHECK(db[0] == 2.625 && db[1] == -3.9375);
    long double xa = 3.0L, xb = 2.0L;
    RED(MPI_MAX, long double, &xa, &xb, 1, MPI_LONG_DOUBLE);
    CHECK(xb == 3.0L);
    float ra = 1.0f, rb = -1.0f;
    RED(MPI_MIN, float, &ra, &rb, 1, MPI_REAL);
    CHECK(rb == -1.0f);

    double _Complex ca = 1.0 + 2.0 * I, cb = 3.0 - 1.0 * I;
    RED(MPI_PROD, double _Complex, &ca, &cb, 1, MPI_C_DOUBLE_COMPLEX);
    CHECK(creal(cb) == 5.0 && cimag(cb) == 5.0);
    float _Complex fca = 1.0f + 1.0f * I, fcb = 2.0f + 3.0f * I;
    RED(MPI_SUM, float _Complex, &fca, &fcb, 1, MPI_COMPLEX);
    CHECK(crealf(fcb) == 3.0f && cimagf(fcb) == 4.0f);

    unsigned char ya = 0x0F, yb = 0x3C;
    RED(MPI_BXOR, unsigned char, &ya, &yb, 1, MPI_BYTE);
    CHECK(yb == 0x33);
    MPI_Aint aa = 10, ab = 32;
    RED(MPI_SUM, MPI_Aint, &aa, &ab, 1, MPI_AINT);
    CHECK(ab == 42);
    MPI_Count qa = 6, qb = 3;
    RED(MPI_BAND, MPI_Count, &qa, &qb, 1, MPI_COUNT);
    CHECK(qb == 2);
    int64_t ia = -5, ib = 9;
    RED(MPI_MIN, int64_t, &ia, &ib, 1, MPI_INTEGER8);
    CHECK(ib == -5);

    /* large-count variant */
    int big_a[2] = {1, 2}, big_b[2] = {10, 20};
    OK(MPI_Reduce_local_c(big_a, big_b, 2, MPI_INT, MPI_SUM));
    CHECK(big_b[0] == 11 && big_b[1] == 22);
#undef RED
}

static void loc(void)
{
    struct {
        double v;
        int i;
    } a[4] = {{1.0, 3}, {2.0, 5}, {4.0, 9}, {4.0, 1}},
      b[4] = {{1.0, 2}, {3.0, 1}, {4.0, 7}, {0.5, 0}}, r[4];
    memcpy(r, b, sizeof r);
    OK(MPI_Reduce_local(a, r, 4, MPI_DOUBLE_INT, MPI_MINLOC));
    CHECK(r[0].v == 1.0 && r[0].i == 2); /* tie: lower index */
    CHECK(r[1].v == 2.0 && r[1].i == 5);
    CHECK(r[2].v == 4.0 && r[2].i == 7);
    CHECK(r[3].v == 0.5 && r[3].i == 0);
    memcpy(r, b, sizeof r);
    OK(MPI_Reduce_local(a, r, 4, MPI_DOUBLE_INT, MPI_MAXLOC));
    CHECK(r[0].v == 1.0 && r[0].i == 2);
    CHECK(r[1].v == 3.0 && r[1].i == 1);
    CHECK(r[2].v == 4.0 && r[2].i == 7);
    CHECK(r[3].v == 4.0 && r[3].i == 1);

    int p[2] = {7, 4}, q[2] = {7, 2};
    OK(MPI_Reduce_local(p, q, 1, MPI_2INT, MPI_MAXLOC));
    CHECK(q[0] == 7 && q[1] == 2);
    struct {
        short v;
        int i;
    } sa = {-3, 8}, sb = {2, 1};
    OK(MPI_Reduce_local(&sa, &sb, 1, MPI_SHORT_INT, MPI_MINLOC));
    CHECK(sb.v == -3 && sb.i == 8);
    float fr[2] = {2.0f, 5.0f}, fs[2] = {2.0f, 3.0f};
    OK(MPI_Reduce_local(fr, fs, 1, MPI_2REAL, MPI_MINLOC));
    CHECK(fs[0] == 2.0f && fs[1] == 3.0f);
}

/* The op x type matrix of MPI-4.0 6.9.2, checked on one element each. */
static void matrix(void)
{
    enum { CI = 1, FI = 2, FL = 4, LO = 8, CX = 16, BY = 32, ML = 64, PR = 128, OT = 256 };
    static const struct {
        MPI_Datatype t;
        int cls;
    } types[] = {
        {MPI_INT, CI},
        {MPI_UNSIGNED_CHAR, CI},
        {MPI_SIGNED_CHAR, CI},
        {MPI_LONG_LONG, CI},
        {MPI_UINT16_T, CI},
        {MPI_INTEGER, FI},
        {MPI_INTEGER2, FI},
        {MPI_FLOAT, FL},
        {MPI_DOUBLE, FL},
        {MPI_LONG_DOUBLE, FL},
        {MPI_DOUBLE_PRECISION, FL},
        {MPI_REAL8, FL},
        {MPI_C_BOOL, LO},
        {MPI_CXX_BOOL, LO},
        {MPI_LOGICAL, LO},
        {MPI_C_FLOAT_COMPLEX, CX},
        {MPI_CXX_DOUBLE_COMPLEX, CX},
        {MPI_DOUBLE_COMPLEX, CX},
        {MPI_COMPLEX8, CX},
        {MPI_BYTE, BY},
        {MPI_AINT, ML},
        {MPI_OFFSET, ML},
        {MPI_COUNT, ML},
        {MPI_FLOAT_INT, PR},
        {MPI_LONG_DOUBLE_INT, PR},
        {MPI_2INTEGER, PR},
        {MPI_2DOUBLE_PRECISION, PR},
        {MPI_CHAR, OT},
        {MPI_WCHAR, OT},
        {MPI_PACKED, OT},
        {MPI_CHARACTER, OT},
    };
    static const struct {
        MPI_Op op;
        int allowed;
    } ops[] = {
        {MPI_MAX, CI | FI | FL | ML},
        {MPI_MIN, CI | FI | FL | ML},
        {MPI_SUM, CI | FI | FL | CX | ML},
        {MPI_PROD, CI | FI | FL | CX | ML},
        {MPI_LAND, CI | LO | ML}, /* ML: an extension, as MPICH */
        {MPI_LOR, CI | LO | ML},
        {MPI_LXOR, CI | LO | ML},
        {MPI_BAND, CI | FI | BY | ML},
        {MPI_BOR, CI | FI | BY | ML},
        {MPI_BXOR, CI | FI | BY | ML},
        {MPI_MINLOC, PR},
        {MPI_MAXLOC, PR},
    };
    for (size_t o = 0; o < sizeof ops / sizeof ops[0]; o++)
        for (size_t t = 0; t < sizeof types / sizeof types[0]; t++) {
            _Alignas(16) char in[64] = {0}, io[64] = {0};
            int rc = MPI_Reduce_local(in, io, 1, types[t].t, ops[o].op);
            int want = (ops[o].allowed & types[t].cls) ? MPI_SUCCESS : MPI_ERR_OP;
            if (err_class(rc) != want) {
                fprintf(stderr, "op %zu type %zu: got %d want %d\n", o, t, rc, want);
                CHECK(0);
            }
        }
}

static int calls;
static MPI_Datatype seen;
/* non-commutative: io = in * 10 + io on pairs of ints */
static void concat(void *in, void *io, int *len, MPI_Datatype *dt)
{
    calls++;
    seen = *dt;
    int *a = in, *b = io;
    for (int i = 0; i < 2 * *len; i++)
        b[i] = a[i] * 10 + b[i];
}
static void concat_c(void *in, void *io, MPI_Count *len, MPI_Datatype *dt)
{
    calls++;
    seen = *dt;
    int *a = in, *b = io;
    for (MPI_Count i = 0; i < *len; i++)
        b[i] = a[i] * 10 + b[i];
}

static void user(void)
{
    MPI_Op op;
    int commute = -1;
    OK(MPI_Op_create(concat, 0, &op));
    OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 0);
    OK(MPI_Op_commutative(MPI_SUM, &commute));
    CHECK(commute == 1);
    MPI_Datatype two;
    OK(MPI_Type_contiguous(2, MPI_INT, &two));
    OK(MPI_Type_commit(&two));
    int a[4] = {1, 2, 3, 4}, b[4] = {5, 6, 7, 8};
    OK(MPI_Reduce_local(a, b, 2, two, op));
    CHECK(calls == 1 && seen == two);
    CHECK(b[0] == 15 && b[1] == 26 && b[2] == 37 && b[3] == 48);
    /* a predefined op on a derived type is not allowed */
    CHECK_CLASS(MPI_Reduce_local(a, b, 2, two, MPI_SUM), MPI_ERR_OP);
    OK(MPI_Op_free(&op));
    CHECK(op == MPI_OP_NULL);
    OK(MPI_Type_free(&two));

    OK(MPI_Op_create_c(concat_c, 1, &op));
    OK(MPI_Op_commutative(op, &commute));
    CHECK(commute == 1);
    OK(MPI_Reduce_local_c(a, b, 3, MPI_INT, op));
    CHECK(calls == 2 && seen == MPI_INT && b[0] == 25 && b[2] == 67 && b[3] == 48);
    MPI_Op copy = op;
    OK(MPI_Op_free(&op));
    CHECK_CLASS(MPI_Reduce_local(a, b, 1, MPI_INT, copy), MPI_ERR_OP);
}

static void errors(void)
{
    int a = 1, b = 2;
    MPI_Op op = MPI_SUM;
    CHECK_CLASS(MPI_Op_free(&op), MPI_ERR_OP);
    op = MPI_OP_NULL;
    CHECK_CLASS(MPI_Op_free(&op), MPI_ERR_OP);
    CHECK_CLASS(MPI_Op_create(NULL, 1, &op), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_OP_NULL), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_REPLACE), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, 1, MPI_INT, MPI_NO_OP), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, 1, MPI_INT, 777), MPI_ERR_OP);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, -1, MPI_INT, MPI_SUM), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Reduce_local(&a, &b, 1, MPI_DATATYPE_NULL, MPI_SUM), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Reduce_local(MPI_IN_PLACE, &b, 1, MPI_INT, MPI_SUM), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Op_commutative(MPI_OP_NULL, &a), MPI_ERR_OP);
    OK(MPI_Reduce_local(NULL, NULL, 0, MPI_INT, MPI_SUM)); /* nothing to do */
    CHECK(b == 2);
}

int main(int argc, char **argv)
{
    init_return(&argc, &argv);
    exact();
    loc();
    matrix();
    user();
    errors();
    OK(MPI_Finalize());
    printf("mpi_type_op: ok\n");
    return 0;
}
