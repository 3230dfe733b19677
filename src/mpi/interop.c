/* interop.c — language interoperability (MPI-4.0 19.3.4 and 19.3.5): handle conversion
 * between C and Fortran, and status conversion between the C, Fortran (INTEGER array)
 * and Fortran 2008 (MPI_F08_status) forms.
 *
 * Handles: every FMPL handle is an int (include/mpi.h), and so is MPI_Fint, so the
 * Fortran handle of an object is its C handle: X_c2f and X_f2c are the identity. A valid
 * handle converts to a valid handle of the same object, a null handle to the null handle,
 * and an invalid one to an invalid one, as 19.3.4 requires; they raise no error.
 *
 * Status: the Fortran status is MPI_F_STATUS_SIZE (6) INTEGERs: MPI_SOURCE, MPI_TAG,
 * MPI_ERROR (MPI_F_SOURCE, MPI_F_TAG, MPI_F_ERROR), then the cancelled flag and the
 * received byte count as two 32-bit halves (low, high); MPI_F08_status holds the same
 * six values. Conversions of MPI_STATUS_IGNORE / MPI_F_STATUS_IGNORE /
 * MPI_F08_STATUS_IGNORE (or NULL) fail with MPI_ERR_ARG (19.3.5: not allowed). */
#include <stdint.h>
#include <string.h>

#include "mpi/mpi_impl.h"

#define MPII_HANDLE_CONV(NAME, CTYPE)                                                              \
    MPI_Fint PMPI_##NAME##_c2f(CTYPE h)                                                            \
    {                                                                                              \
        return (MPI_Fint)h;                                                                        \
    }                                                                                              \
    MPII_WEAK(MPI_##NAME##_c2f, PMPI_##NAME##_c2f)                                                 \
    CTYPE PMPI_##NAME##_f2c(MPI_Fint h)                                                            \
    {                                                                                              \
        return (CTYPE)h;                                                                           \
    }                                                                                              \
    MPII_WEAK(MPI_##NAME##_f2c, PMPI_##NAME##_f2c)

MPII_HANDLE_CONV(Comm, MPI_Comm)
MPII_HANDLE_CONV(Errhandler, MPI_Errhandler)
MPII_HANDLE_CONV(File, MPI_File)
MPII_HANDLE_CONV(Group, MPI_Group)
MPII_HANDLE_CONV(Info, MPI_Info)
MPII_HANDLE_CONV(Message, MPI_Message)
MPII_HANDLE_CONV(Op, MPI_Op)
MPII_HANDLE_CONV(Request, MPI_Request)
MPII_HANDLE_CONV(Session, MPI_Session)
MPII_HANDLE_CONV(Type, MPI_Datatype)
MPII_HANDLE_CONV(Win, MPI_Win)

/* The six Fortran values of a C status, and back. */
static void mpii_status_to6(const MPI_Status *c, MPI_Fint f[6])
{
    uint64_t n = (uint64_t)c->fmpl_count;
    f[0] = c->MPI_SOURCE;
    f[1] = c->MPI_TAG;
    f[2] = c->MPI_ERROR;
    f[3] = c->fmpl_cancelled;
    f[4] = (MPI_Fint)(uint32_t)(n & 0xffffffffu);
    f[5] = (MPI_Fint)(uint32_t)(n >> 32);
}

static void mpii_status_from6(const MPI_Fint f[6], MPI_Status *c)
{
    c->MPI_SOURCE = f[0];
    c->MPI_TAG = f[1];
    c->MPI_ERROR = f[2];
    c->fmpl_cancelled = f[3];
    c->fmpl_count = (MPI_Count)(((uint64_t)(uint32_t)f[5] << 32) | (uint32_t)f[4]);
}

static void mpii_f08_to6(const MPI_F08_status *s, MPI_Fint f[6])
{
    f[0] = s->MPI_SOURCE;
    f[1] = s->MPI_TAG;
    f[2] = s->MPI_ERROR;
    memcpy(f + 3, s->fmpl_internal, sizeof s->fmpl_internal);
}

static void mpii_f08_from6(const MPI_Fint f[6], MPI_F08_status *s)
{
    s->MPI_SOURCE = f[0];
    s->MPI_TAG = f[1];
    s->MPI_ERROR = f[2];
    memcpy(s->fmpl_internal, f + 3, sizeof s->fmpl_internal);
}

_Static_assert(MPI_F_STATUS_SIZE == 6 && MPI_F_SOURCE == 0 && MPI_F_TAG == 1 && MPI_F_ERROR == 2,
               "Fortran status layout");

static int mpii_c_ok(const MPI_Status *c)
{
    return c && c != MPI_STATUS_IGNORE && c != MPI_STATUSES_IGNORE;
}
static int mpii_f_ok(const MPI_Fint *f)
{
    return f && f != MPI_F_STATUS_IGNORE && f != MPI_F_STATUSES_IGNORE;
}
static int mpii_f08_ok(const MPI_F08_status *s)
{
    return s && s != MPI_F08_STATUS_IGNORE && s != MPI_F08_STATUSES_IGNORE;
}

int PMPI_Status_c2f(const MPI_Status *c_status, MPI_Fint *f_status)
{
    if (!mpii_c_ok(c_status) || !mpii_f_ok(f_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_c2f");
    mpii_status_to6(c_status, f_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_c2f, PMPI_Status_c2f)

int PMPI_Status_f2c(const MPI_Fint *f_status, MPI_Status *c_status)
{
    if (!mpii_f_ok(f_status) || !mpii_c_ok(c_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_f2c");
    mpii_status_from6(f_status, c_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_f2c, PMPI_Status_f2c)

int PMPI_Status_c2f08(const MPI_Status *c_status, MPI_F08_status *f08_status)
{
    if (!mpii_c_ok(c_status) || !mpii_f08_ok(f08_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_c2f08");
    MPI_Fint f[6];
    mpii_status_to6(c_status, f);
    mpii_f08_from6(f, f08_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_c2f08, PMPI_Status_c2f08)

int PMPI_Status_f082c(const MPI_F08_status *f08_status, MPI_Status *c_status)
{
    if (!mpii_f08_ok(f08_status) || !mpii_c_ok(c_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_f082c");
    MPI_Fint f[6];
    mpii_f08_to6(f08_status, f);
    mpii_status_from6(f, c_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_f082c, PMPI_Status_f082c)

int PMPI_Status_f2f08(const MPI_Fint *f_status, MPI_F08_status *f08_status)
{
    if (!mpii_f_ok(f_status) || !mpii_f08_ok(f08_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_f2f08");
    mpii_f08_from6(f_status, f08_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_f2f08, PMPI_Status_f2f08)

int PMPI_Status_f082f(const MPI_F08_status *f08_status, MPI_Fint *f_status)
{
    if (!mpii_f08_ok(f08_status) || !mpii_f_ok(f_status))
        return MPII_ERR(MPI_ERR_ARG, "MPI_Status_f082f");
    mpii_f08_to6(f08_status, f_status);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Status_f082f, PMPI_Status_f082f)
