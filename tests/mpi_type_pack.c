/* mpi_type_pack.c — Pack/Unpack round trips of nested types, Pack_size bounds,
 * MPI_BOTTOM, external32 byte order, Get_count/Get_elements with partial elements, the
 * status setters; error classes. */
#include <stdint.h>
#include <string.h>

#include "mpi_type_common.h"

typedef struct {
    double v[3]; /* v[0] and v[2] are sent (vector) */
    int pad;
    int k[2];
} rec_t;

static void nested(void)
{
    /* rec: struct { vector(2, 1, 2, double) at 0, 2 ints at offsetof(k) }, resized to
     * sizeof(rec_t); then a contiguous of 2 of those, sent 3 times */
    MPI_Datatype vec, rec, recr, pair;
    OK(MPI_Type_vector(2, 1, 2, MPI_DOUBLE, &vec));
    OK(MPI_Type_create_struct(2, (int[]){1, 2}, (MPI_Aint[]){0, offsetof(rec_t, k)},
                              (MPI_Datatype[]){vec, MPI_INT}, &rec));
    OK(MPI_Type_create_resized(rec, 0, sizeof(rec_t), &recr));
    OK(MPI_Type_contiguous(2, recr, &pair));
    OK(MPI_Type_commit(&pair));
    int size;
    OK(MPI_Type_size(pair, &size));
    CHECK(size == 2 * (16 + 8));

    /* not committed: Pack refuses it */
    char tmp[64];
    int pos = 0;
    CHECK_CLASS(MPI_Pack(tmp, 1, rec, tmp, 64, &pos, MPI_COMM_WORLD), MPI_ERR_TYPE);

    rec_t in[6], out[6];
    for (int i = 0; i < 6; i++) {
        for (int j = 0; j < 3; j++)
            in[i].v[j] = i * 10 + j + 0.5;
        in[i].pad = -1;
        in[i].k[0] = 100 + i;
        in[i].k[1] = 200 + i;
    }
    int psize;
    OK(MPI_Pack_size(3, pair, MPI_COMM_WORLD, &psize));
    CHECK(psize >= 3 * size);
    char buf[1024];
    pos = 0;
    OK(MPI_Pack(in, 3, pair, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 3 * size);
    /* a second item after it: the position carries on */
    short s = 7;
    OK(MPI_Pack(&s, 1, MPI_SHORT, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 3 * size + 2);
    /* the packed stream is the type map in order */
    double d0;
    int k0;
    memcpy(&d0, buf + 8, sizeof d0);
    memcpy(&k0, buf + 16, sizeof k0);
    CHECK(d0 == in[0].v[2] && k0 == in[0].k[0]);

    memset(out, 0, sizeof out);
    int upos = 0;
    OK(MPI_Unpack(buf, pos, &upos, out, 3, pair, MPI_COMM_WORLD));
    short s2 = 0;
    OK(MPI_Unpack(buf, pos, &upos, &s2, 1, MPI_SHORT, MPI_COMM_WORLD));
    CHECK(upos == pos && s2 == 7);
    for (int i = 0; i < 6; i++) {
        CHECK(out[i].v[0] == in[i].v[0] && out[i].v[2] == in[i].v[2]);
        CHECK(out[i].v[1] == 0 && out[i].pad == 0); /* holes untouched */
        CHECK(out[i].k[0] == in[i].k[0] && out[i].k[1] == in[i].k[1]);
    }

    /* large-count variants */
    MPI_Count cpos = 0, csize;
    OK(MPI_Pack_size_c(3, pair, MPI_COMM_WORLD, &csize));
    CHECK(csize == psize);
    OK(MPI_Pack_c(in, 3, pair, buf, sizeof buf, &cpos, MPI_COMM_WORLD));
    CHECK(cpos == 3 * size);
    memset(out, 0, sizeof out);
    MPI_Count cupos = 0;
    OK(MPI_Unpack_c(buf, cpos, &cupos, out, 3, pair, MPI_COMM_WORLD));
    CHECK(cupos == cpos && out[5].k[1] == 205 && out[5].v[2] == in[5].v[2]);

    /* errors: no room, short input, bad arguments */
    pos = 0;
    CHECK_CLASS(MPI_Pack(in, 3, pair, buf, 3 * size - 1, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);
    CHECK(pos == 0);
    upos = 0;
    CHECK_CLASS(MPI_Unpack(buf, 3 * size - 1, &upos, out, 3, pair, MPI_COMM_WORLD),
                MPI_ERR_TRUNCATE);
    CHECK_CLASS(MPI_Pack(in, -1, pair, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_COUNT);
    CHECK_CLASS(MPI_Pack(in, 1, MPI_DATATYPE_NULL, buf, sizeof buf, &pos, MPI_COMM_WORLD),
                MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Pack(in, 1, pair, buf, sizeof buf, &pos, MPI_COMM_NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Pack_size(-1, pair, MPI_COMM_WORLD, &psize), MPI_ERR_COUNT);
    pos = -1;
    CHECK_CLASS(MPI_Pack(in, 1, pair, buf, sizeof buf, &pos, MPI_COMM_WORLD), MPI_ERR_ARG);

    OK(MPI_Type_free(&pair));
    OK(MPI_Type_free(&recr));
    OK(MPI_Type_free(&rec));
    OK(MPI_Type_free(&vec));
}

static void bottom(void)
{
    /* absolute addresses with MPI_BOTTOM */
    static int a = 11;
    double b = 2.5;
    MPI_Aint addr[2];
    OK(MPI_Get_address(&a, &addr[0]));
    OK(MPI_Get_address(&b, &addr[1]));
    MPI_Datatype t;
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, addr, (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t));
    OK(MPI_Type_commit(&t));
    char buf[32];
    int pos = 0;
    OK(MPI_Pack(MPI_BOTTOM, 1, t, buf, sizeof buf, &pos, MPI_COMM_WORLD));
    CHECK(pos == 12);
    a = 0;
    b = 0;
    pos = 0;
    OK(MPI_Unpack(buf, 12, &pos, MPI_BOTTOM, 1, t, MPI_COMM_WORLD));
    CHECK(a == 11 && b == 2.5);
    OK(MPI_Type_free(&t));
}

static void external32(void)
{
    int32_t i = 0x01020304;
    double d = 1.0;
    unsigned char buf[64];
    MPI_Aint pos = 0, size;
    OK(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, sizeof buf, &pos));
    OK(MPI_Pack_external("external32", &d, 1, MPI_DOUBLE, buf, sizeof buf, &pos));
    CHECK(pos == 12);
    CHECK(buf[0] == 1 && buf[1] == 2 && buf[2] == 3 && buf[3] == 4); /* big-endian */
    CHECK(buf[4] == 0x3F && buf[5] == 0xF0 && buf[6] == 0 && buf[11] == 0);
    OK(MPI_Pack_external_size("external32", 3, MPI_INT, &size));
    CHECK(size == 12);
    OK(MPI_Pack_external_size("external32", 1, MPI_LONG_DOUBLE, &size));
    CHECK(size == 16);
    OK(MPI_Pack_external_size("external32", 2, MPI_DOUBLE_INT, &size));
    CHECK(size == 24);
    int32_t i2 = 0;
    double d2 = 0;
    MPI_Aint upos = 0;
    OK(MPI_Unpack_external("external32", buf, pos, &upos, &i2, 1, MPI_INT));
    OK(MPI_Unpack_external("external32", buf, pos, &upos, &d2, 1, MPI_DOUBLE));
    CHECK(i2 == i && d2 == d && upos == 12);

    /* a derived type round trip, large-count variants */
    short sv[6] = {1, -2, 3, -4, 5, -6}, sv2[6] = {0};
    MPI_Datatype v;
    OK(MPI_Type_vector(3, 1, 2, MPI_SHORT, &v));
    OK(MPI_Type_commit(&v));
    MPI_Count cpos = 0, csize, cupos = 0;
    OK(MPI_Pack_external_size_c("external32", 1, v, &csize));
    CHECK(csize == 6);
    OK(MPI_Pack_external_c("external32", sv, 1, v, buf, sizeof buf, &cpos));
    CHECK(cpos == 6 && buf[0] == 0 && buf[1] == 1 && buf[2] == 0 && buf[3] == 3);
    OK(MPI_Unpack_external_c("external32", buf, cpos, &cupos, sv2, 1, v));
    CHECK(sv2[0] == 1 && sv2[1] == 0 && sv2[2] == 3 && sv2[4] == 5 && sv2[5] == 0);
    OK(MPI_Type_free(&v));

    pos = 0;
    CHECK_CLASS(MPI_Pack_external("native", &i, 1, MPI_INT, buf, sizeof buf, &pos), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pack_external_size("internal", 1, MPI_INT, &size), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Pack_external("external32", &i, 1, MPI_INT, buf, 3, &pos), MPI_ERR_ARG);
    upos = 0;
    CHECK_CLASS(MPI_Unpack_external("external32", buf, 2, &upos, &i2, 1, MPI_INT),
                MPI_ERR_TRUNCATE);
}

static void counts(void)
{
    MPI_Status st;
    memset(&st, 0, sizeof st);
    int c;
    MPI_Count cc;
    OK(MPI_Status_set_elements(&st, MPI_INT, 5));
    OK(MPI_Get_count(&st, MPI_INT, &c));
    CHECK(c == 5);
    OK(MPI_Get_elements(&st, MPI_INT, &c));
    CHECK(c == 5);
    OK(MPI_Get_count(&st, MPI_SHORT, &c));
    CHECK(c == 10);
    OK(MPI_Get_count(&st, MPI_DOUBLE, &c)); /* 20 bytes: not whole doubles */
    CHECK(c == MPI_UNDEFINED);
    OK(MPI_Get_elements(&st, MPI_DOUBLE, &c));
    CHECK(c == MPI_UNDEFINED);

    /* struct {int; double}: size 12, 2 basic elements */
    MPI_Datatype t;
    OK(MPI_Type_create_struct(2, (int[]){1, 1}, (MPI_Aint[]){0, 8},
                              (MPI_Datatype[]){MPI_INT, MPI_DOUBLE}, &t));
    OK(MPI_Type_commit(&t));
    OK(MPI_Status_set_elements(&st, t, 3)); /* one whole element and an int */
    OK(MPI_Get_count(&st, t, &c));
    CHECK(c == MPI_UNDEFINED);
    OK(MPI_Get_elements(&st, t, &c));
    CHECK(c == 3);
    OK(MPI_Get_elements_x(&st, t, &cc));
    CHECK(cc == 3);
    OK(MPI_Get_count(&st, MPI_INT, &c)); /* 16 bytes */
    CHECK(c == 4);
    OK(MPI_Status_set_elements_x(&st, t, 4));
    OK(MPI_Get_count(&st, t, &c));
    CHECK(c == 2);
    OK(MPI_Get_count_c(&st, t, &cc));
    CHECK(cc == 2);
    OK(MPI_Get_elements_c(&st, t, &cc));
    CHECK(cc == 4);
    OK(MPI_Status_set_elements(&st, MPI_BYTE, 14)); /* int + 10 bytes: a partial double */
    OK(MPI_Get_elements(&st, t, &c));
    CHECK(c == MPI_UNDEFINED);
    OK(MPI_Get_count(&st, t, &c));
    CHECK(c == MPI_UNDEFINED);
    OK(MPI_Status_set_elements(&st, MPI_BYTE, 0));
    OK(MPI_Get_elements(&st, t, &c));
    CHECK(c == 0);
    OK(MPI_Get_count(&st, t, &c));
    CHECK(c == 0);
    OK(MPI_Type_free(&t));

    /* a zero-size type counts 0 */
    MPI_Datatype z;
    OK(MPI_Type_contiguous(0, MPI_INT, &z));
    OK(MPI_Type_commit(&z));
    OK(MPI_Status_set_elements(&st, MPI_BYTE, 8));
    OK(MPI_Get_count(&st, z, &c));
    CHECK(c == 0);
    OK(MPI_Type_free(&z));

    /* cancelled flag */
    int flag = 1;
    OK(MPI_Status_set_cancelled(&st, 0));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 0);
    OK(MPI_Status_set_cancelled(&st, 1));
    OK(MPI_Test_cancelled(&st, &flag));
    CHECK(flag == 1);

    CHECK_CLASS(MPI_Get_count(&st, MPI_DATATYPE_NULL, &c), MPI_ERR_TYPE);
    CHECK_CLASS(MPI_Get_count(MPI_STATUS_IGNORE, MPI_INT, &c), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Status_set_elements(&st, MPI_INT, -1), MPI_ERR_COUNT);
}

int main(int argc, char **argv)
{
    init_return(&argc, &argv);
    nested();
    bottom();
    external32();
    counts();
    OK(MPI_Finalize());
    printf("mpi_type_pack: ok\n");
    return 0;
}
