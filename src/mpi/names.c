/* names.c — MPI name publishing (MPI-4.0 section 11.10.3): MPI_Publish_name,
 * MPI_Lookup_name, MPI_Unpublish_name, through the launcher's name service (boot.h,
 * boot_name_*). Under fmplrun the names live in fmplrun's table and every rank of the
 * job sees them as soon as the publishing call returned; they last until unpublished
 * or the job ends (MPI leaves the scope of names to the implementation). Under Hydra
 * they go to its name service; a singleton has none, and says so.
 *
 * Errors: a name published already -> MPI_ERR_SERVICE (publish); lookup of a name not
 * published -> MPI_ERR_NAME; unpublish of a name not published -> MPI_ERR_SERVICE; NULL
 * or empty names, names with control characters or of MPI_MAX_PORT_NAME bytes or more ->
 * MPI_ERR_ARG; an invalid info -> MPI_ERR_INFO; no name service -> MPI_ERR_UNSUPPORTED_
 * OPERATION. The detail (which name, what the launcher said) goes with the error. No
 * info key is interpreted (the standard defines none). */
#include <string.h>

#include "mpi/mpi_impl.h"

/* 1 for a service or port name boot can carry and MPI_Lookup_name can return. */
static int name_ok(const char *s)
{
    if (!s)
        return 0;
    size_t n = strlen(s);
    if (n == 0 || n >= MPI_MAX_PORT_NAME || n >= BOOT_NAME_MAX)
        return 0;
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)s[i] < 0x20 || (unsigned char)s[i] >= 0x7f)
            return 0;
    return 1;
}

/* The common argument checks; MPI_SUCCESS or the error already raised. */
static int names_check(MPI_Info info, const char *service, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPII_ERRF(MPI_ERR_INFO, fname, "info is not a valid info object");
    if (!name_ok(service))
        return MPII_ERRF(MPI_ERR_ARG, fname, "service_name must be 1 to %d printable characters",
                         MPI_MAX_PORT_NAME - 1);
    return MPI_SUCCESS;
}

int PMPI_Publish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *fname = "MPI_Publish_name";
    int rc = names_check(info, service_name, fname);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!name_ok(port_name))
        return MPII_ERRF(MPI_ERR_ARG, fname, "port_name must be 1 to %d printable characters",
                         MPI_MAX_PORT_NAME - 1);
    char why[BOOT_NAME_MAX];
    int err = boot_name_publish(mpii.boot, service_name, port_name, why);
    if (err == FMPL_SUCCESS)
        return MPI_SUCCESS;
    if (err == FMPL_ERR_BUSY)
        return MPII_ERRF(MPI_ERR_SERVICE, fname, "service '%s' is published already", service_name);
    if (err == FMPL_ERR_UNSUPPORTED)
        return MPII_ERRF(MPI_ERR_UNSUPPORTED_OPERATION, fname, "cannot publish '%s': %s",
                         service_name, why);
    return MPII_ERRF(mpii_err_from_fmpl(err), fname, "cannot publish '%s': %s", service_name,
                     why[0] ? why : base_strerror(err));
}
MPII_WEAK(MPI_Publish_name, PMPI_Publish_name)

int PMPI_Lookup_name(const char *service_name, MPI_Info info, char *port_name)
{
    const char *fname = "MPI_Lookup_name";
    int rc = names_check(info, service_name, fname);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!port_name)
        return MPII_ERRF(MPI_ERR_ARG, fname, "port_name is NULL");
    char port[BOOT_NAME_MAX], why[BOOT_NAME_MAX];
    int err = boot_name_lookup(mpii.boot, service_name, port, why);
    if (err == FMPL_SUCCESS) {
        if (strlen(port) >= MPI_MAX_PORT_NAME)
            return MPII_ERRF(MPI_ERR_NAME, fname, "the port of '%s' is longer than %d bytes",
                             service_name, MPI_MAX_PORT_NAME - 1);
        memcpy(port_name, port, strlen(port) + 1);
        return MPI_SUCCESS;
    }
    if (err == FMPL_ERR_ARG)
        return MPII_ERRF(MPI_ERR_NAME, fname, "%s",
                         why[0] ? why : "no such service name is published");
    if (err == FMPL_ERR_UNSUPPORTED)
        return MPII_ERRF(MPI_ERR_UNSUPPORTED_OPERATION, fname, "cannot look up '%s': %s",
                         service_name, why);
    return MPII_ERRF(mpii_err_from_fmpl(err), fname, "cannot look up '%s': %s", service_name,
                     base_strerror(err));
}
MPII_WEAK(MPI_Lookup_name, PMPI_Lookup_name)

int PMPI_Unpublish_name(const char *service_name, MPI_Info info, const char *port_name)
{
    const char *fname = "MPI_Unpublish_name";
    int rc = names_check(info, service_name, fname);
    if (rc != MPI_SUCCESS)
        return rc;
    if (!port_name)
        return MPII_ERRF(MPI_ERR_ARG, fname, "port_name is NULL");
    char why[BOOT_NAME_MAX];
    int err = boot_name_unpublish(mpii.boot, service_name, why);
    if (err == FMPL_SUCCESS)
        return MPI_SUCCESS;
    if (err == FMPL_ERR_ARG)
        return MPII_ERRF(MPI_ERR_SERVICE, fname, "%s",
                         why[0] ? why : "no such service name is published");
    if (err == FMPL_ERR_UNSUPPORTED)
        return MPII_ERRF(MPI_ERR_UNSUPPORTED_OPERATION, fname, "cannot unpublish '%s': %s",
                         service_name, why);
    return MPII_ERRF(mpii_err_from_fmpl(err), fname, "cannot unpublish '%s': %s", service_name,
                     base_strerror(err));
}
MPII_WEAK(MPI_Unpublish_name, PMPI_Unpublish_name)
