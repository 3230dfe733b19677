/* runtime.c — bring-up and teardown of the engine beneath both faces (runtime.h). */
#include "runtime/runtime.h"

#include <stdlib.h>

static struct {
    int state; /* RT_NEVER, RT_OPEN, RT_CLOSED */
    boot_t *boot;
    vnic_t *vnic;
    coll_group_t *world;
} rt;

enum { RT_NEVER = 0, RT_OPEN, RT_CLOSED };

int runtime_startup_rc(int rc)
{
    return rc == FMPL_ERR_KEY ? FMPL_ERR_PEER : rc;
}

/* Undoes a partial runtime_open: closes whatever was opened. */
static void runtime_unwind(int coll_up)
{
    if (coll_up)
        coll_finalize(rt.vnic);
    if (rt.vnic)
        vnic_close(rt.vnic);
    if (rt.boot)
        boot_finalize(rt.boot);
    rt.vnic = NULL;
    rt.boot = NULL;
}

int runtime_open(size_t heap_per_rank)
{
    if (rt.state != RT_NEVER)
        return FMPL_ERR_INIT;
    int rc = boot_init(&rt.boot);
    if (rc != FMPL_SUCCESS) {
        rt.boot = NULL;
        return rc;
    }
    rc = vnic_open(rt.boot, &rt.vnic);
    if (rc != FMPL_SUCCESS) {
        rt.vnic = NULL;
        runtime_unwind(0);
        return rc;
    }
    int size = vnic_size(rt.vnic), rank = vnic_rank(rt.vnic);
    base_log_set_rank(rank);
    rc = coll_init(rt.vnic, (size_t)size * heap_per_rank);
    if (rc != FMPL_SUCCESS) {
        runtime_unwind(0);
        return runtime_startup_rc(rc);
    }
    int *members = malloc((size_t)size * sizeof *members);
    if (!members) {
        runtime_unwind(1);
        return FMPL_ERR_NOMEM;
    }
    for (int r = 0; r < size; r++)
        members[r] = r;
    rc = coll_group_create(rt.vnic, size, rank, members, 0, &rt.world);
    free(members);
    if (rc != FMPL_SUCCESS) {
        rt.world = NULL;
        runtime_unwind(1);
        return rc;
    }
    rt.state = RT_OPEN;
    return FMPL_SUCCESS;
}

int runtime_close(void)
{
    if (rt.state != RT_OPEN)
        return FMPL_ERR_NOT_INIT;
    int rc = coll_group_free(rt.world);
    coll_finalize(rt.vnic);
    int vrc = vnic_close(rt.vnic);
    int brc = boot_finalize(rt.boot);
    rt.world = NULL;
    rt.vnic = NULL;
    rt.boot = NULL;
    rt.state = RT_CLOSED;
    if (rc == FMPL_SUCCESS)
        rc = vrc;
    if (rc == FMPL_SUCCESS)
        rc = brc;
    return rc;
}

void runtime_abandon(void)
{
    if (rt.state != RT_OPEN)
        return;
    coll_group_drop(rt.world);
    rt.world = NULL;
    runtime_unwind(1);
    rt.state = RT_CLOSED;
}

boot_t *runtime_boot(void)
{
    return rt.state == RT_OPEN ? rt.boot : NULL;
}

vnic_t *runtime_vnic(void)
{
    return rt.state == RT_OPEN ? rt.vnic : NULL;
}

coll_group_t *runtime_world_group(void)
{
    return rt.state == RT_OPEN ? rt.world : NULL;
}
