/* tool_category.c — MPI_T categories, events and event sources (design: tool_cvar.c).
 *
 * Categories are FMPL's layers, in dependency order: base, boot, vnic, dt, coll, fmpl,
 * mpi (category i is layer i; none has subcategories). A control variable belongs to
 * the layer that reads the setting (the folder of the reading source file, recorded by
 * base_env_*), a performance variable to the layer that counts it. Variables are only
 * added, never removed, so MPI_T_category_changed's number is the count of variables:
 * it grows exactly when a category gains one.
 * FMPL defines no events and no event sources: MPI_T_event_get_num and
 * MPI_T_source_get_num give 0, and the calls naming an event, a source, a registration
 * or an event instance answer as for an unknown one (MPI_T_ERR_INVALID_INDEX, _NAME,
 * _HANDLE), since none can exist. */
#include <string.h>

#include "mpi/mpi_impl.h"
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
    *num_events = 0;
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

/* No subcategories and no events: valid calls write nothing. */
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
    return category_none(cat_index, len, indices);
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

/* ------------------------------------------------------------------ events (none) */

/* The answer of a call naming an event, source, registration or instance: code when
 * MPI_T is initialized. */
static int tool_none(int code)
{
    MPII_TOOL_ENTER();
    MPII_TOOL_RETURN(code);
}

int PMPI_T_event_get_num(int *num_events)
{
    MPII_TOOL_ENTER();
    if (!num_events)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_events = 0;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_event_get_num, PMPI_T_event_get_num)

int PMPI_T_event_get_info(int event_index, char *name, int *name_len, int *verbosity,
                          MPI_Datatype array_of_datatypes[], MPI_Aint array_of_displacements[],
                          int *num_elements, MPI_T_enum *enumtype, MPI_Info *info, char *desc,
                          int *desc_len, int *bind)
{
    (void)event_index, (void)name, (void)name_len, (void)verbosity, (void)array_of_datatypes;
    (void)array_of_displacements, (void)num_elements, (void)enumtype, (void)info, (void)desc;
    (void)desc_len, (void)bind;
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}
MPII_WEAK(MPI_T_event_get_info, PMPI_T_event_get_info)

int PMPI_T_event_get_index(const char *name, int *event_index)
{
    MPII_TOOL_ENTER();
    if (!name || !event_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    MPII_TOOL_RETURN(MPI_T_ERR_INVALID_NAME);
}
MPII_WEAK(MPI_T_event_get_index, PMPI_T_event_get_index)

int PMPI_T_event_handle_alloc(int event_index, void *obj_handle, MPI_Info info,
                              MPI_T_event_registration *event_registration)
{
    (void)event_index, (void)obj_handle, (void)info, (void)event_registration;
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}
MPII_WEAK(MPI_T_event_handle_alloc, PMPI_T_event_handle_alloc)

int PMPI_T_event_handle_set_info(MPI_T_event_registration event_registration, MPI_Info info)
{
    (void)event_registration, (void)info;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_handle_set_info, PMPI_T_event_handle_set_info)

int PMPI_T_event_handle_get_info(MPI_T_event_registration event_registration, MPI_Info *info_used)
{
    (void)event_registration, (void)info_used;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_handle_get_info, PMPI_T_event_handle_get_info)

int PMPI_T_event_register_callback(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info, void *user_data,
                                   MPI_T_event_cb_function *event_cb_function)
{
    (void)event_registration, (void)cb_safety, (void)info, (void)user_data;
    (void)event_cb_function;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_register_callback, PMPI_T_event_register_callback)

int PMPI_T_event_callback_set_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info info)
{
    (void)event_registration, (void)cb_safety, (void)info;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_callback_set_info, PMPI_T_event_callback_set_info)

int PMPI_T_event_callback_get_info(MPI_T_event_registration event_registration,
                                   MPI_T_cb_safety cb_safety, MPI_Info *info_used)
{
    (void)event_registration, (void)cb_safety, (void)info_used;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_callback_get_info, PMPI_T_event_callback_get_info)

int PMPI_T_event_handle_free(MPI_T_event_registration event_registration, void *user_data,
                             MPI_T_event_free_cb_function *free_cb_function)
{
    (void)event_registration, (void)user_data, (void)free_cb_function;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_handle_free, PMPI_T_event_handle_free)

int PMPI_T_event_set_dropped_handler(MPI_T_event_registration event_registration,
                                     MPI_T_event_dropped_cb_function *dropped_cb_function)
{
    (void)event_registration, (void)dropped_cb_function;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_set_dropped_handler, PMPI_T_event_set_dropped_handler)

int PMPI_T_event_read(MPI_T_event_instance event_instance, int element_index, void *buffer)
{
    (void)event_instance, (void)element_index, (void)buffer;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_read, PMPI_T_event_read)

int PMPI_T_event_copy(MPI_T_event_instance event_instance, void *buffer)
{
    (void)event_instance, (void)buffer;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_copy, PMPI_T_event_copy)

int PMPI_T_event_get_timestamp(MPI_T_event_instance event_instance, MPI_Count *event_timestamp)
{
    (void)event_instance, (void)event_timestamp;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_get_timestamp, PMPI_T_event_get_timestamp)

int PMPI_T_event_get_source(MPI_T_event_instance event_instance, int *source_index)
{
    (void)event_instance, (void)source_index;
    return tool_none(MPI_T_ERR_INVALID_HANDLE);
}
MPII_WEAK(MPI_T_event_get_source, PMPI_T_event_get_source)

int PMPI_T_source_get_num(int *num_sources)
{
    MPII_TOOL_ENTER();
    if (!num_sources)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_sources = 0;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_source_get_num, PMPI_T_source_get_num)

int PMPI_T_source_get_info(int source_index, char *name, int *name_len, char *desc, int *desc_len,
                           MPI_T_source_order *ordering, MPI_Count *ticks_per_second,
                           MPI_Count *max_ticks, MPI_Info *info)
{
    (void)source_index, (void)name, (void)name_len, (void)desc, (void)desc_len, (void)ordering;
    (void)ticks_per_second, (void)max_ticks, (void)info;
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}
MPII_WEAK(MPI_T_source_get_info, PMPI_T_source_get_info)

int PMPI_T_source_get_timestamp(int source_index, MPI_Count *timestamp)
{
    (void)source_index, (void)timestamp;
    return tool_none(MPI_T_ERR_INVALID_INDEX);
}
MPII_WEAK(MPI_T_source_get_timestamp, PMPI_T_source_get_timestamp)
