/* mpi_win_unsupported.c — windows are not implemented yet: creating one fails with
 * MPI_ERR_UNSUPPORTED_OPERATION (after the argument checks), leaves MPI_WIN_NULL, and
 * freeing fails with MPI_ERR_WIN; the program goes on normally. */
#include <mpi.h>
#include <stdio.h>

#include "test_util.h"

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int buf[4], rank;
    MPI_Win win = (MPI_Win)12345;
    CHECK(cls(MPI_Win_create(buf, sizeof buf, sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &win)) ==
          MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(win == MPI_WIN_NULL);
    CHECK(cls(MPI_Win_create(buf, -1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win)) == MPI_ERR_SIZE);
    CHECK(cls(MPI_Win_create(buf, 4, 0, MPI_INFO_NULL, MPI_COMM_WORLD, &win)) == MPI_ERR_DISP);
    CHECK(cls(MPI_Win_create(buf, 4, 1, MPI_INFO_NULL, MPI_COMM_NULL, &win)) == MPI_ERR_COMM);
    CHECK(cls(MPI_Win_free(&win)) == MPI_ERR_WIN);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_win_unsupported: ok\n");
    return 0;
}
