/* mpi_type_common.h — helpers of the mpi_type tests. */
#ifndef MPI_TYPE_COMMON_H
#define MPI_TYPE_COMMON_H
#include <mpi.h>

#include "test_util.h"

/* The error class of a return code. */
static inline int err_class(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}
#define OK(call) CHECK_RC(call, MPI_SUCCESS)

static inline void init_return(int *argc, char ***argv)
{
    OK(MPI_Init(argc, argv));
    OK(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN));
}
#endif
