/* tool_category.c — MPI_T categories, events and event sources (design: tool_cvar.c).
 *
 * Categories are FMPL's layers, in dependency order: base, boot, vnic, dt, coll, fmpl,
 * mpi (category i is layer i; none has subcategories). A control variable belongs to
 * the layer that reads the setting (the folder of the reading source file, recorded by
 * base_env_*), a performance variable to the layer that counts it. Variables are only
 * added, never removed, so MPI_T_category_changed's number is the count of variables:
 * it grows exactly when a category gains one.
 * Events (tool_event.c) belong to the layer that raises them. */
#include <string.h>

#include "mpi/mpi_impl.h"
#include "mpi/tool_event.h"
#include "mpi/tool_impl.h"

const char *const mpii_tool_layers[MPII_TOOL_NLAYERS] = {"base", "boot", "vnic", "dt",
                                                         "coll", "fmpl", "mpi"};

static const char *const layer_desc[MPII_TOOL_NLAYERS] = {
    "base: status codes, logging, settings, clocks, the wait back-off",
    "boot: who the peers are, the launcher's key-value space (PMI, fmplrun, singleton)",
    "vnic: the software NIC and its transports (shm within a host, udp between hosts)",
    "dt: the datatype engine",
    "coll: collective schedules, mailboxes and lanes",
    "fmpl: the native FMPL API",
    "mpi: the MPI layer (matching, eager and rendezvous, collectives)"};

/* Contract: tool_impl.h. */
int mpii_tool_layer_index(const char *layer)
{
    for (int i = 0; i < MPII_TOOL_NLAYERS; i++)
        if (strcmp(mpii_tool_layers[i], layer) == 0)
            return i;
    return -1;
}

/* Variables of category cat, the first len of them into indices (when not NULL);
 * returns how many there are. */
static int category_members(int cat, int pvars, int len, int *indices)
{
    int n = pvars ? mpii_tool_pvar_count() : mpii_tool_cvar_count(), k = 0;
    for (int i = 0; i < n; i++) {
        const char *l = pvars ? mpii_tool_pvar_layer(i) : mpii_tool_cvar_layer(i);
        if (strcmp(l, mpii_tool_layers[cat]) != 0)
            continue;
        if (indices && k < len)
            indices[k] = i;
        k++;
    }
    return k;
}

static int category_valid(int cat)
{
    return cat >= 0 && cat < MPII_TOOL_NLAYERS;
}

int PMPI_T_category_get_num(int *num_cat)
{
    MPII_TOOL_ENTER();
    if (!num_cat)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_cat = MPII_TOOL_NLAYERS;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_get_num, PMPI_T_category_get_num)

int PMPI_T_category_get_info(int cat_index, char *name, int *name_len, char *desc, int *desc_len,
                             int *num_cvars, int *num_pvars, int *num_categories)
{
    MPII_TOOL_ENTER();
    if (!category_valid(cat_index))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    mpii_tool_copy_str(mpii_tool_layers[cat_index], name, name_len);
    mpii_tool_copy_str(layer_desc[cat_index], desc, desc_len);
    if (num_cvars)
        *num_cvars = category_members(cat_index, 0, 0, NULL);
    if (num_pvars)
        *num_pvars = category_members(cat_index, 1, 0, NULL);
    if (num_categories)
        *num_categories = 0;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_get_info, PMPI_T_category_get_info)

int PMPI_T_category_get_num_events(int cat_index, int *num_events)
{
    MPII_TOOL_ENTER();
    if (!category_valid(cat_index))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!num_events)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_events = mpii_tool_event_count_in(cat_index);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_get_num_events, PMPI_T_category_get_num_events)

int PMPI_T_category_get_index(const char *name, int *cat_index)
{
    MPII_TOOL_ENTER();
    if (!name || !cat_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    int i = mpii_tool_layer_index(name);
    if (i < 0)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_NAME);
    *cat_index = i;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_get_index, PMPI_T_category_get_index)

static int category_list(int cat_index, int len, int *indices, int pvars)
{
    MPII_TOOL_ENTER();
    if (!category_valid(cat_index))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    category_members(cat_index, pvars, len, indices);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}

int PMPI_T_category_get_cvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, 0);
}
MPII_WEAK(MPI_T_category_get_cvars, PMPI_T_category_get_cvars)

int PMPI_T_category_get_pvars(int cat_index, int len, int indices[])
{
    return category_list(cat_index, len, indices, 1);
}
MPII_WEAK(MPI_T_category_get_pvars, PMPI_T_category_get_pvars)

/* No subcategories: valid calls write nothing. */
static int category_none(int cat_index, int len, int *indices)
{
    MPII_TOOL_ENTER();
    if (!category_valid(cat_index))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}

int PMPI_T_category_get_categories(int cat_index, int len, int indices[])
{
    return category_none(cat_index, len, indices);
}
MPII_WEAK(MPI_T_category_get_categories, PMPI_T_category_get_categories)

int PMPI_T_category_get_events(int cat_index, int len, int indices[])
{
    MPII_TOOL_ENTER();
    if (!category_valid(cat_index))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (len < 0 || (len > 0 && !indices))
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    mpii_tool_event_list(cat_index, len, indices);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_get_events, PMPI_T_category_get_events)

int PMPI_T_category_changed(int *update_number)
{
    MPII_TOOL_ENTER();
    if (!update_number)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *update_number = mpii_tool_cvar_count() + mpii_tool_pvar_count();
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_category_changed, PMPI_T_category_changed)
