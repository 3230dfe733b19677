/* mpi_env_fatal.c — argv[1] "abort": rank 1 (or 0 alone) calls MPI_Abort(WORLD, 7)
 * while the others wait; "fatal": an invalid communicator under the default
 * MPI_ERRORS_ARE_FATAL; "before": an MPI call before MPI_Init. Every mode must end the
 * whole job (run by mpi_env_fatal.sh through mpiexec). */
#include <string.h>
#include <unistd.h>

#include "mpi.h"

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "abort";
    int rank = 0, size = 1, flag;
    if (strcmp(mode, "before") == 0) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        return 0; /* not reached */
    }
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (rank == (size > 1 ? 1 : 0)) {
        if (strcmp(mode, "abort") == 0)
            MPI_Abort(MPI_COMM_WORLD, 7);
        else
            MPI_Comm_get_attr(MPI_COMM_NULL, MPI_TAG_UB, &flag, &flag);
        return 0; /* not reached */
    }
    for (;;)
        pause(); /* the launcher ends us */
}
