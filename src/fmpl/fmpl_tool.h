/* fmpl_tool.h — what the project's own tools (fmpl-info) may ask the native layer
 * beyond fmpl.h. Not installed; not for applications. */
#ifndef FMPL_TOOL_H
#define FMPL_TOOL_H

#include "boot/boot.h"
#include "coll/coll.h"
#include "vnic/vnic.h"

/* The vnic and the bootstrap fmpl_init opened; NULL before fmpl_init and after
 * fmpl_finalize. Owned by the library. Never blocks. */
vnic_t *fmpl_tool_vnic(void);
boot_t *fmpl_tool_boot(void);
/* The collective group of FMPL_COMM_WORLD (coll.h): the MPI layer runs MPI_COMM_WORLD's
 * mailbox collectives on it (the two worlds have the same members in the same order,
 * and their collectives are never interleaved differently on two members). NULL before
 * fmpl_init and after fmpl_finalize. Never blocks. */
coll_group_t *fmpl_tool_world_group(void);

#endif
