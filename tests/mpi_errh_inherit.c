/* mpi_errh_inherit.c — which error handler an error goes to (tests/mpich/notes.md, the
 * errors/comm/comm_split_nullarg and its kin and errors/attr/keyvalmis entries):
 *   - a duplicate keeps the handler its parent had when it was made: changing
 *     MPI_COMM_WORLD's handler afterwards does not reach it (MPI-4.0 9.3; MPICH instead
 *     falls back to MPI_COMM_WORLD's current handler);
 *   - a NULL newcomm to MPI_Comm_split, _split_type, _create and _create_group is
 *     MPI_ERR_ARG, raised on the input communicator;
 *   - attribute errors on a window (a keyval of another kind) go to the window's handler,
 *     not to MPI_COMM_WORLD's.
 * User handlers count their calls, so each check sees which handler ran. */
#include <stdio.h>

#include "mpi.h"
#include "test_util.h"

static int calls_a, calls_b, calls_w, last_class;

static void note(int *code, int *counter)
{
    (*counter)++;
    MPI_Error_class(*code, &last_class);
}
static void handler_a(MPI_Comm *c, int *code, ...)
{
    (void)c;
    note(code, &calls_a);
}
static void handler_b(MPI_Comm *c, int *code, ...)
{
    (void)c;
    note(code, &calls_b);
}
static void handler_w(MPI_Win *w, int *code, ...)
{
    (void)w;
    note(code, &calls_w);
}

static int cls(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Errhandler ea, eb, ew;
    CHECK_RC(MPI_Comm_create_errhandler(handler_a, &ea), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_errhandler(handler_b, &eb), MPI_SUCCESS);
    CHECK_RC(MPI_Win_create_errhandler(handler_w, &ew), MPI_SUCCESS);

    /* the duplicate keeps handler A after MPI_COMM_WORLD moves to B */
    MPI_Comm d1, out = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, ea), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d1), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, eb), MPI_SUCCESS);
    CHECK(cls(MPI_Comm_split(d1, rank % 2, rank, NULL)) == MPI_ERR_ARG);
    CHECK(calls_a == 1 && calls_b == 0 && last_class == MPI_ERR_ARG);
    CHECK(cls(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, NULL)) == MPI_ERR_ARG);
    CHECK(calls_a == 1 && calls_b == 1);
    MPI_Errhandler got;
    CHECK_RC(MPI_Comm_get_errhandler(d1, &got), MPI_SUCCESS);
    CHECK(got == ea);
    MPI_Errhandler_free(&got);

    /* MPI_ERRORS_RETURN inherited; MPI_COMM_WORLD fatal afterwards does not matter */
    MPI_Comm d2;
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d2), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL), MPI_SUCCESS);
    MPI_Group g;
    CHECK_RC(MPI_Comm_group(d2, &g), MPI_SUCCESS);
    CHECK(cls(MPI_Comm_split(d2, 0, rank, NULL)) == MPI_ERR_ARG);
    CHECK(cls(MPI_Comm_split_type(d2, MPI_COMM_TYPE_SHARED, rank, MPI_INFO_NULL, NULL)) ==
          MPI_ERR_ARG);
    CHECK(cls(MPI_Comm_create(d2, g, NULL)) == MPI_ERR_ARG);
    CHECK(cls(MPI_Comm_create_group(d2, g, 0, NULL)) == MPI_ERR_ARG);
    /* and the calls still work with a real argument */
    CHECK_RC(MPI_Comm_create(d2, g, &out), MPI_SUCCESS);
    int cmp;
    CHECK_RC(MPI_Comm_compare(out, d2, &cmp), MPI_SUCCESS);
    CHECK(cmp == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_free(&out), MPI_SUCCESS);
    CHECK(calls_a == 1 && calls_b == 1);

    /* window attribute errors go to the window's handler */
    int buf = rank, ck, tk, wk;
    MPI_Win win;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &ck, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, MPI_TYPE_NULL_DELETE_FN, &tk, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, d2, &win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(win, ew), MPI_SUCCESS);
    CHECK(cls(MPI_Win_set_attr(win, ck, NULL)) == MPI_ERR_KEYVAL);
    CHECK(calls_w == 1 && last_class == MPI_ERR_KEYVAL);
    void *val;
    int flag;
    CHECK(cls(MPI_Win_get_attr(win, tk, &val, &flag)) == MPI_ERR_KEYVAL);
    CHECK(cls(MPI_Win_delete_attr(win, ck)) == MPI_ERR_KEYVAL);
    CHECK(calls_w == 3);
    CHECK_RC(MPI_Win_set_attr(win, wk, &buf), MPI_SUCCESS);
    CHECK_RC(MPI_Win_get_attr(win, wk, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == &buf);
    CHECK(calls_a == 1 && calls_b == 1 && calls_w == 3);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&ck), MPI_SUCCESS);
    CHECK_RC(MPI_Type_free_keyval(&tk), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free_keyval(&wk), MPI_SUCCESS);

    CHECK_RC(MPI_Group_free(&g), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&d1), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&d2), MPI_SUCCESS);
    MPI_Errhandler_free(&ea);
    MPI_Errhandler_free(&eb);
    MPI_Errhandler_free(&ew);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_errh_inherit: OK\n");
    return 0;
}
