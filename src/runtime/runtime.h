/* runtime.h — the engine beneath both faces: the bootstrap (boot.h), the software NIC
 * (vnic.h), the collective area (coll_init) and the job's world group (the collective
 * group of every rank in rank order, slot 0), brought up once per process and taken down
 * once. The native API (fmpl_init) opens it; the MPI face and our tools borrow its
 * handles through the accessors below.
 *
 * Threading: runtime_open and runtime_close run on one thread, with no other call into
 * the layers below in flight; the accessors may be called from any thread and never
 * block.
 * Ownership: the runtime owns the boot handle, the vnic and the world group. Callers use
 * them between runtime_open and runtime_close and never close or free them.
 * Lifetime: once per process. A failed runtime_open leaves nothing open, and may be
 * retried; after runtime_close the runtime cannot open again (the launcher's PMI session
 * ended with it). */
#ifndef FMPL_RUNTIME_H
#define FMPL_RUNTIME_H

#include <stddef.h>

#include "boot/boot.h"
#include "coll/coll.h"
#include "vnic/vnic.h"

/* Collective over the job; blocks. Connects to the launcher (boot_init), opens the vnic,
 * sets up the collective area leaving heap_per_rank bytes of the shared heap per rank of
 * the job for the caller's own areas (coll_init's heap_after), and creates the world
 * group with ctx 0. Returns FMPL_SUCCESS, FMPL_ERR_INIT (already open, or closed
 * before), FMPL_ERR_PEER (another rank's start-up failed first: its message says why),
 * or the failing layer's code (logged by that layer). */
int runtime_open(size_t heap_per_rank);
/* Collective over the job; blocks. Frees the world group (every member's), releases the
 * collective area, closes the vnic and the bootstrap, and returns the first error of
 * those steps. The callers' own groups must be freed before. FMPL_ERR_NOT_INIT when the
 * runtime is not open. */
int runtime_close(void);

/* Undoes runtime_open on this rank alone, after a later start-up step of the caller
 * failed here: nothing collective (the world group is dropped, coll_group_drop), so the
 * ranks waiting on this one see its areas go away (FMPL_ERR_PEER) instead of waiting for
 * it. The runtime cannot open again. Nothing when it is not open. */
void runtime_abandon(void);

/* The code a start-up step that failed talking to a peer reports: access refused to a
 * peer's area, registered before the step began, means the peer gave up (its own
 * start-up failed and it took its areas back), so FMPL_ERR_KEY becomes FMPL_ERR_PEER (and
 * the peer's own message says why); other codes are returned as they are. */
int runtime_startup_rc(int rc);

/* The handles, or NULL while the runtime is not open. Both faces' world communicators
 * run their mailbox collectives on the world group (FMPL_COMM_WORLD and MPI_COMM_WORLD have
 * the same members in the same order, and their collectives are never interleaved
 * differently on two members). */
boot_t *runtime_boot(void);
vnic_t *runtime_vnic(void);
coll_group_t *runtime_world_group(void);

#endif
