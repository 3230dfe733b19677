/* tool_cvar.c — the MPI tool information interface (MPI-4.0 chapter 15): its
 * initialisation, and the control variables.
 *
 * Design of MPI_T in FMPL (tool_cvar.c, tool_pvar.c, tool_category.c):
 * - MPI_T_init_thread / MPI_T_finalize count nested calls and work before MPI_Init and
 *   after MPI_Finalize; the interface needs nothing of the runtime. Every MPI_T call
 *   takes one process-wide mutex (MPI_THREAD_MULTIPLE is provided); MPI_T functions
 *   return their error codes and never call error handlers (MPI-4.0 15.3.10).
 * - Control variables are the FMPL settings themselves: base's records of every setting
 *   read through base_env_* (name, meaning, value in force, range, reading layer), the
 *   same records fmpl-info prints. Variable i is record i: records are appended in the
 *   order the settings are first read and never move, so an index keeps its meaning and
 *   MPI_T_cvar_get_num grows as layers start (a layer reads its settings when it starts,
 *   some at their first use: the collective thresholds at the first collective; the
 *   standard allows the number of variables to grow). Before MPI_Init only the settings
 *   already read exist.
 *   Integer settings are MPI_INT when their range fits an int, else MPI_COUNT; booleans
 *   MPI_INT with the enumeration {false, true}; strings MPI_CHAR (count: the record's 64
 *   bytes). A setting its layer declared writable (base_env_writable: the back-off
 *   times, FMPL_MPI_EAGER_MAX, the MPI collective thresholds) has scope
 *   MPI_T_SCOPE_LOCAL, or MPI_T_SCOPE_ALL_EQ when every rank must hold the same value
 *   (the program writes it everywhere, between collectives); the others are
 *   MPI_T_SCOPE_READONLY and refuse writes with MPI_T_ERR_CVAR_SET_NEVER. A write is
 *   range-checked (MPI_T_ERR_INVALID) and applied through the layer's own function.
 * - Performance variables (tool_pvar.c) are the engine's plain counters, read on demand;
 *   sessions and handles keep their own start/stop offsets, so nothing in the engine
 *   knows whether a tool listens.
 * - Categories (tool_category.c) are the layers: base, boot, vnic, dt, coll, fmpl, mpi.
 *   A setting's layer is the folder of the source file that reads it; a performance
 *   variable's is the layer that counts it. No events and no event sources: the event
 *   calls answer MPI_T_ERR_INVALID_INDEX / _HANDLE as for any unknown index or handle.
 * Handles (cvar handles, pvar sessions and handles) are heap objects on per-kind lists;
 * a handle argument is valid only when found on its list, so a stale or foreign one is
 * refused (MPI_T_ERR_INVALID_HANDLE / _SESSION), never dereferenced. */
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "mpi/mpi_impl.h"
#include "mpi/tool_event.h"
#include "mpi/tool_impl.h"

static pthread_mutex_t tool_lock = PTHREAD_MUTEX_INITIALIZER;
static int tool_nesting; /* MPI_T_init_thread calls not yet finalized */

struct fmpl_mpi_t_cvar_handle_s {
    struct fmpl_mpi_t_cvar_handle_s *next;
    int index;
};
static struct fmpl_mpi_t_cvar_handle_s *cvar_handles;

/* Contract: tool_impl.h. Called with tool_lock held by the entry points. */
int mpii_tool_active(void)
{
    return tool_nesting > 0;
}

/* Contract: tool_impl.h. */
void mpii_tool_lock(void)
{
    pthread_mutex_lock(&tool_lock);
}
void mpii_tool_unlock(void)
{
    pthread_mutex_unlock(&tool_lock);
}

/* Contract: tool_impl.h. */
void mpii_tool_copy_str(const char *text, char *buf, int *len)
{
    if (!len)
        return;
    size_t n = strlen(text);
    if (!buf || *len <= 0) {
        *len = (int)BASE_MIN(n + 1, (size_t)INT_MAX);
        return;
    }
    size_t w = BASE_MIN(n, (size_t)*len - 1);
    memcpy(buf, text, w);
    buf[w] = '\0';
    *len = (int)w + 1;
}

/* ------------------------------------------------------------------ init / finalize */

int PMPI_T_init_thread(int required, int *provided)
{
    if (required < MPI_THREAD_SINGLE || required > MPI_THREAD_MULTIPLE)
        return MPI_T_ERR_INVALID;
    pthread_mutex_lock(&tool_lock);
    if (tool_nesting == INT_MAX) {
        pthread_mutex_unlock(&tool_lock);
        return MPI_T_ERR_CANNOT_INIT;
    }
    tool_nesting++;
    pthread_mutex_unlock(&tool_lock);
    if (provided)
        *provided = required; /* every level: each call holds tool_lock */
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_T_init_thread, PMPI_T_init_thread)

int PMPI_T_finalize(void)
{
    mpii_tool_lock();
    int active = mpii_tool_active();
    mpii_tool_unlock();
    if (active)
        mpii_tool_event_deliver(); /* what the event handles buffered */
    MPII_TOOL_ENTER();
    if (--tool_nesting == 0) {
        while (cvar_handles) {
            struct fmpl_mpi_t_cvar_handle_s *h = cvar_handles;
            cvar_handles = h->next;
            free(h);
        }
        mpii_tool_pvar_finalize();
        mpii_tool_event_finalize();
    }
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_finalize, PMPI_T_finalize)

/* ------------------------------------------------------------------ control variables */

/* Contract: tool_impl.h. */
int mpii_tool_cvar_count(void)
{
    return base_env_count();
}

const char *mpii_tool_cvar_layer(int i)
{
    const base_setting_t *s = base_env_at(i);
    return s ? s->layer : "";
}

static MPI_Datatype cvar_type(const base_setting_t *s)
{
    if (s->kind == BASE_SETTING_STR)
        return MPI_CHAR;
    if (s->kind == BASE_SETTING_BOOL || (s->min >= INT_MIN && s->max <= INT_MAX))
        return MPI_INT;
    return MPI_COUNT;
}

static int cvar_scope(const base_setting_t *s)
{
    if (!s->apply)
        return MPI_T_SCOPE_READONLY;
    return s->all_equal ? MPI_T_SCOPE_ALL_EQ : MPI_T_SCOPE_LOCAL;
}

int PMPI_T_cvar_get_num(int *num_cvar)
{
    MPII_TOOL_ENTER();
    if (!num_cvar)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    *num_cvar = base_env_count();
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_cvar_get_num, PMPI_T_cvar_get_num)

int PMPI_T_cvar_get_info(int cvar_index, char *name, int *name_len, int *verbosity,
                         MPI_Datatype *datatype, MPI_T_enum *enumtype, char *desc, int *desc_len,
                         int *bind, int *scope)
{
    MPII_TOOL_ENTER();
    const base_setting_t *s = base_env_at(cvar_index);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    mpii_tool_copy_str(s->name, name, name_len);
    mpii_tool_copy_str(s->what ? s->what : "", desc, desc_len);
    if (verbosity)
        *verbosity = s->apply ? MPI_T_VERBOSITY_TUNER_BASIC : MPI_T_VERBOSITY_USER_BASIC;
    if (datatype)
        *datatype = cvar_type(s);
    if (enumtype)
        *enumtype = s->kind == BASE_SETTING_BOOL ? &mpii_tool_enum_bool : MPI_T_ENUM_NULL;
    if (bind)
        *bind = MPI_T_BIND_NO_OBJECT;
    if (scope)
        *scope = cvar_scope(s);
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_cvar_get_info, PMPI_T_cvar_get_info)

int PMPI_T_cvar_get_index(const char *name, int *cvar_index)
{
    MPII_TOOL_ENTER();
    if (!name || !cvar_index)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    int n = base_env_count();
    for (int i = 0; i < n; i++)
        if (strcmp(base_env_at(i)->name, name) == 0) {
            *cvar_index = i;
            MPII_TOOL_RETURN(MPI_SUCCESS);
        }
    MPII_TOOL_RETURN(MPI_T_ERR_INVALID_NAME);
}
MPII_WEAK(MPI_T_cvar_get_index, PMPI_T_cvar_get_index)

int PMPI_T_cvar_handle_alloc(int cvar_index, void *obj_handle, MPI_T_cvar_handle *handle,
                             int *count)
{
    (void)obj_handle; /* every variable binds to no object */
    MPII_TOOL_ENTER();
    const base_setting_t *s = base_env_at(cvar_index);
    if (!s)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_INDEX);
    if (!handle || !count)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_cvar_handle_s *h = malloc(sizeof *h);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_MEMORY);
    h->index = cvar_index;
    h->next = cvar_handles;
    cvar_handles = h;
    *handle = h;
    *count = s->kind == BASE_SETTING_STR ? (int)sizeof s->value : 1;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_cvar_handle_alloc, PMPI_T_cvar_handle_alloc)

/* The live handle h, unlinked when unlink; NULL when h is not one. */
static struct fmpl_mpi_t_cvar_handle_s *cvar_handle_find(MPI_T_cvar_handle h, int unlink)
{
    for (struct fmpl_mpi_t_cvar_handle_s **p = &cvar_handles; *p; p = &(*p)->next)
        if (*p == h) {
            if (unlink)
                *p = h->next;
            return h;
        }
    return NULL;
}

int PMPI_T_cvar_handle_free(MPI_T_cvar_handle *handle)
{
    MPII_TOOL_ENTER();
    if (!handle)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    struct fmpl_mpi_t_cvar_handle_s *h = cvar_handle_find(*handle, 1);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    free(h);
    *handle = MPI_T_CVAR_HANDLE_NULL;
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_cvar_handle_free, PMPI_T_cvar_handle_free)

int PMPI_T_cvar_read(MPI_T_cvar_handle handle, void *buf)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_cvar_handle_s *h = cvar_handle_find(handle, 0);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    const base_setting_t *s = base_env_at(h->index);
    char text[sizeof s->value];
    memcpy(text, s->value, sizeof text); /* a concurrent write rewrites it */
    text[sizeof text - 1] = '\0';
    MPI_Datatype t = cvar_type(s);
    if (t == MPI_CHAR) {
        memcpy(buf, text, strlen(text) + 1);
    } else {
        long long v = strtoll(text, NULL, 10);
        if (t == MPI_INT)
            *(int *)buf = (int)v;
        else
            *(MPI_Count *)buf = v;
    }
    MPII_TOOL_RETURN(MPI_SUCCESS);
}
MPII_WEAK(MPI_T_cvar_read, PMPI_T_cvar_read)

int PMPI_T_cvar_write(MPI_T_cvar_handle handle, const void *buf)
{
    MPII_TOOL_ENTER();
    struct fmpl_mpi_t_cvar_handle_s *h = cvar_handle_find(handle, 0);
    if (!h)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID_HANDLE);
    if (!buf)
        MPII_TOOL_RETURN(MPI_T_ERR_INVALID);
    const base_setting_t *s = base_env_at(h->index);
    if (!s->apply)
        MPII_TOOL_RETURN(MPI_T_ERR_CVAR_SET_NEVER);
    long long v = cvar_type(s) == MPI_INT ? *(const int *)buf : *(const MPI_Count *)buf;
    int rc = base_env_write(h->index, v);
    MPII_TOOL_RETURN(rc == FMPL_SUCCESS           ? MPI_SUCCESS
                     : rc == FMPL_ERR_UNSUPPORTED ? MPI_T_ERR_CVAR_SET_NEVER
                                                  : MPI_T_ERR_INVALID);
}
MPII_WEAK(MPI_T_cvar_write, PMPI_T_cvar_write)
