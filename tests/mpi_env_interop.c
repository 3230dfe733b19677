/* mpi_env_interop.c — language interoperability: every X_c2f / X_f2c pair gives back the
 * same object (used through the converted handle: a communicator, a datatype, an op, a
 * request, a message taken by MPI_Mprobe and received through the converted handle),
 * null handles stay null; status conversions C <-> Fortran <-> Fortran 2008 keep source,
 * tag, error, count (also above 2^31 elements) and the cancelled flag; the IGNORE
 * sentinels are rejected with MPI_ERR_ARG. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>

#include "test_util.h"

static int rank, size;

static void test_handles(void)
{
    /* communicator: use the converted one */
    MPI_Comm dup;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &dup), MPI_SUCCESS);
    MPI_Fint fc = MPI_Comm_c2f(dup);
    MPI_Comm back = MPI_Comm_f2c(fc);
    int res, r2;
    CHECK_RC(MPI_Comm_compare(back, dup, &res), MPI_SUCCESS);
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Comm_rank(back, &r2), MPI_SUCCESS);
    CHECK(r2 == rank);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_NULL)) == MPI_COMM_NULL);
    CHECK(MPI_Comm_f2c(MPI_Comm_c2f(MPI_COMM_WORLD)) == MPI_COMM_WORLD);
    /* group */
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(back, &g), MPI_SUCCESS);
    MPI_Group g2 = MPI_Group_f2c(MPI_Group_c2f(g));
    int gs;
    CHECK_RC(MPI_Group_size(g2, &gs), MPI_SUCCESS);
    CHECK(gs == size);
    CHECK_RC(MPI_Group_free(&g2), MPI_SUCCESS); /* frees g: the same object */
    CHECK(MPI_Group_f2c(MPI_Group_c2f(MPI_GROUP_NULL)) == MPI_GROUP_NULL);
    /* datatype */
    MPI_Datatype v;
    CHECK_RC(MPI_Type_vector(3, 2, 5, MPI_INT, &v), MPI_SUCCESS);
    MPI_Datatype v2 = MPI_Type_f2c(MPI_Type_c2f(v));
    CHECK_RC(MPI_Type_commit(&v2), MPI_SUCCESS);
    int ts;
    CHECK_RC(MPI_Type_size(v2, &ts), MPI_SUCCESS);
    CHECK(ts == 6 * (int)sizeof(int));
    CHECK_RC(MPI_Type_free(&v2), MPI_SUCCESS); /* frees v: the same object */
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DOUBLE)) == MPI_DOUBLE);
    CHECK(MPI_Type_f2c(MPI_Type_c2f(MPI_DATATYPE_NULL)) == MPI_DATATYPE_NULL);
    /* op, errhandler, info, win/file/session null handles */
    int in = 3, out = 4;
    CHECK_RC(MPI_Reduce_local(&in, &out, 1, MPI_INT, MPI_Op_f2c(MPI_Op_c2f(MPI_PROD))),
             MPI_SUCCESS);
    CHECK(out == 12);
    CHECK(MPI_Op_f2c(MPI_Op_c2f(MPI_OP_NULL)) == MPI_OP_NULL);
    CHECK_RC(
        MPI_Comm_set_errhandler(back, MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRORS_RETURN))),
        MPI_SUCCESS);
    int ec;
    MPI_Error_class(MPI_Send(&in, -1, MPI_INT, 0, 0, back), &ec);
    CHECK(ec == MPI_ERR_COUNT);
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(MPI_Info_f2c(MPI_Info_c2f(info)), "k", "v"), MPI_SUCCESS);
    char val[8];
    int flag;
    CHECK_RC(MPI_Info_get(info, "k", 7, val, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(val, "v") == 0);
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);
    CHECK(MPI_Win_f2c(MPI_Win_c2f(MPI_WIN_NULL)) == MPI_WIN_NULL);
    CHECK(MPI_File_f2c(MPI_File_c2f(MPI_FILE_NULL)) == MPI_FILE_NULL);
    CHECK(MPI_Session_f2c(MPI_Session_c2f(MPI_SESSION_NULL)) == MPI_SESSION_NULL);
    CHECK(MPI_Errhandler_f2c(MPI_Errhandler_c2f(MPI_ERRHANDLER_NULL)) == MPI_ERRHANDLER_NULL);
    CHECK(MPI_Info_f2c(MPI_Info_c2f(MPI_INFO_NULL)) == MPI_INFO_NULL);

    /* request and message: a ring message, probed, received through converted handles */
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    int x = 1000 + rank, y = -1;
    MPI_Request q;
    CHECK_RC(MPI_Isend(&x, 1, MPI_INT, right, 7, back, &q), MPI_SUCCESS);
    MPI_Message m;
    MPI_Status st;
    CHECK_RC(MPI_Mprobe(left, 7, back, &m, &st), MPI_SUCCESS);
    MPI_Message m2 = MPI_Message_f2c(MPI_Message_c2f(m));
    CHECK_RC(MPI_Mrecv(&y, 1, MPI_INT, &m2, &st), MPI_SUCCESS);
    CHECK(y == 1000 + left && m2 == MPI_MESSAGE_NULL);
    MPI_Request q2 = MPI_Request_f2c(MPI_Request_c2f(q));
    CHECK_RC(MPI_Wait(&q2, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(q2 == MPI_REQUEST_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NULL)) == MPI_MESSAGE_NULL);
    CHECK(MPI_Message_f2c(MPI_Message_c2f(MPI_MESSAGE_NO_PROC)) == MPI_MESSAGE_NO_PROC);
    CHECK(MPI_Request_f2c(MPI_Request_c2f(MPI_REQUEST_NULL)) == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Comm_free(&dup), MPI_SUCCESS);
}

static void test_status(void)
{
    MPI_Status c, c2;
    memset(&c, 0, sizeof c);
    c.MPI_SOURCE = 3;
    c.MPI_TAG = 77;
    c.MPI_ERROR = MPI_ERR_TRUNCATE;
    CHECK_RC(MPI_Status_set_elements_x(&c, MPI_DOUBLE, (MPI_Count)3 << 31), MPI_SUCCESS);
    CHECK_RC(MPI_Status_set_cancelled(&c, 1), MPI_SUCCESS);
    MPI_Fint f[MPI_F_STATUS_SIZE], f2[MPI_F_STATUS_SIZE];
    CHECK_RC(MPI_Status_c2f(&c, f), MPI_SUCCESS);
    CHECK(f[MPI_F_SOURCE] == 3 && f[MPI_F_TAG] == 77 && f[MPI_F_ERROR] == MPI_ERR_TRUNCATE);
    MPI_F08_status f08;
    CHECK_RC(MPI_Status_f2f08(f, &f08), MPI_SUCCESS);
    CHECK(f08.MPI_SOURCE == 3 && f08.MPI_TAG == 77 && f08.MPI_ERROR == MPI_ERR_TRUNCATE);
    CHECK_RC(MPI_Status_f082f(&f08, f2), MPI_SUCCESS);
    CHECK(memcmp(f, f2, sizeof f) == 0);
    memset(&c2, 0, sizeof c2);
    CHECK_RC(MPI_Status_f082c(&f08, &c2), MPI_SUCCESS);
    MPI_Count n;
    int flag;
    CHECK_RC(MPI_Get_elements_x(&c2, MPI_DOUBLE, &n), MPI_SUCCESS);
    CHECK(n == (MPI_Count)3 << 31);
    CHECK_RC(MPI_Test_cancelled(&c2, &flag), MPI_SUCCESS);
    CHECK(flag && c2.MPI_SOURCE == 3 && c2.MPI_TAG == 77 && c2.MPI_ERROR == MPI_ERR_TRUNCATE);
    memset(&c2, 0, sizeof c2);
    CHECK_RC(MPI_Status_f2c(f, &c2), MPI_SUCCESS);
    CHECK_RC(MPI_Get_elements_x(&c2, MPI_DOUBLE, &n), MPI_SUCCESS);
    CHECK(n == (MPI_Count)3 << 31 && c2.MPI_TAG == 77);
    MPI_F08_status g08;
    CHECK_RC(MPI_Status_c2f08(&c, &g08), MPI_SUCCESS);
    CHECK(memcmp(&g08, &f08, sizeof g08) == 0);
    /* the IGNORE sentinels are not statuses */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec;
    MPI_Error_class(MPI_Status_c2f(MPI_STATUS_IGNORE, f), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Error_class(MPI_Status_f2c(MPI_F_STATUS_IGNORE, &c2), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Error_class(MPI_Status_c2f08(&c, MPI_F08_STATUS_IGNORE), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Error_class(MPI_Status_f082c(NULL, &c2), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Error_class(MPI_Status_f2f08(f, NULL), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Error_class(MPI_Status_f082f(&f08, MPI_F_STATUS_IGNORE), &ec);
    CHECK(ec == MPI_ERR_ARG);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    test_handles();
    test_status();
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_env_interop: ok (%d ranks)\n", size);
    return 0;
}
