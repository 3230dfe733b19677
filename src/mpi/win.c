/* win.c — one-sided windows: not implemented yet (a later issue brings RMA on the vnic).
 * Creating a window fails with MPI_ERR_UNSUPPORTED_OPERATION through the communicator's
 * error handler, after the arguments are checked as the standard asks; freeing one can
 * only meet an invalid handle. The rest of the window interface is not defined, so a
 * program that uses it fails to link rather than at run time. */
#include "mpi/mpi_impl.h"

int PMPI_Win_create(void *base, MPI_Aint size, int disp_unit, MPI_Info info, MPI_Comm comm,
                    MPI_Win *win)
{
    static const char fname[] = "MPI_Win_create";
    (void)base;
    MPII_CHECK_INIT(fname);
    if (!mpii_comm_get(comm))
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fname);
    if (!win)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fname);
    *win = MPI_WIN_NULL;
    if (size < 0)
        return MPII_ERR_COMM(comm, MPI_ERR_SIZE, fname);
    if (disp_unit <= 0)
        return MPII_ERR_COMM(comm, MPI_ERR_DISP, fname);
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPII_ERR_COMM(comm, MPI_ERR_INFO, fname);
    return MPII_ERRF_COMM(comm, MPI_ERR_UNSUPPORTED_OPERATION, fname,
                          "one-sided windows are not implemented yet in FMPL");
}
MPII_WEAK(MPI_Win_create, PMPI_Win_create)

int PMPI_Win_free(MPI_Win *win)
{
    static const char fname[] = "MPI_Win_free";
    MPII_CHECK_INIT(fname);
    if (!win)
        return MPII_ERR(MPI_ERR_ARG, fname);
    /* No window can exist: every handle is invalid. */
    return MPII_ERRF(MPI_ERR_WIN, fname, "no such window (windows are not implemented yet)");
}
MPII_WEAK(MPI_Win_free, PMPI_Win_free)
