/* shm_tune.h — the paths large transfers between ranks of one host take, and the
 * contract between the transport that carries them (shm.c) and the start-up choice that
 * picks them from what this machine does (shm_tune.c).
 *
 * A large blocking GET from another local rank's private memory can go three ways:
 *   - PIPELINE: the target copies 64 KiB-class chunks into its bounce buffers while the
 *     initiator copies them out (two cores, two copies; the best on the AMD EPYC machines
 *     where CMA's per-page cost is high);
 *   - CMA: the initiator alone, one process_vm_readv (one core, one copy);
 *   - SHARED: both at once, one copy each: the range is cut into pieces that the
 *     initiator reads with process_vm_readv and the target writes with process_vm_writev,
 *     whoever is free taking the next piece (two cores, one copy; about twice CMA on the
 *     Intel Xeon guest where memcpy of a cache-sized block beats the pipeline's handshake).
 * Large PUTs to private memory mirror the choice: SHARED when gets are (the initiator
 * writes pieces with process_vm_writev, the target reads others with process_vm_readv),
 * else the pipeline or CMA alone (put_pipeline, which the get scores also decide).
 *
 * Which one wins depends on the machine, so shm_tune.c measures them once per host
 * (a trial between local ranks 0 and 1 at start-up, cached in a file keyed by CPU model,
 * kernel and CPU count) and local rank 0 publishes the choice in the segment header for
 * every rank of the host. The initiator alone decides the path of its transfers (the
 * target serves whatever cell arrives), so a rank whose own environment forces a path
 * stays correct even when the others differ. */
#ifndef FMPL_VNIC_SHM_TUNE_H
#define FMPL_VNIC_SHM_TUNE_H

#include <stdint.h>

#include "vnic/vnic_impl.h"

enum { SHM_GET_PIPELINE = 0, SHM_GET_CMA = 1, SHM_GET_SHARED = 2, SHM_GET_NPATHS = 3 };

/* The choice in force at one rank. */
typedef struct shm_paths {
    int get;            /* SHM_GET_* for large blocking gets */
    int put_pipeline;   /* 1: large puts through the bounce pipeline; 0: CMA alone */
    uint32_t share_min; /* shared gets and puts from at least this many bytes (0: as set) */
} shm_paths_t;

#define SHM_TUNE_WHY 1024

/* Host-wide words in the segment header, written by local rank 0 (the key by local
 * rank 1), read by every local rank. */
typedef struct shm_tune_area {
    uint32_t state; /* SHM_TUNE_* below, stored with release (rank 0; KEY_READY: rank 1) */
    uint32_t key;   /* the trial buffer registered by local rank 1 */
    int32_t get, put_pipeline;
    uint32_t share_min;
    char why[SHM_TUNE_WHY]; /* how the choice was made, for fmpl-info */
} shm_tune_area_t;

enum { SHM_TUNE_DECIDING = 0, SHM_TUNE_TRIAL = 1, SHM_TUNE_KEY_READY = 2, SHM_TUNE_DECIDED = 3 };

/* Provided by shm.c. */
shm_tune_area_t *vnic_shm_tune_area(vnic_transport_t *shm);
int vnic_shm_local_index(vnic_transport_t *shm); /* this rank's index on the host */
int vnic_shm_cma(vnic_transport_t *shm);         /* CMA works between every local pair */
void vnic_shm_paths(vnic_transport_t *shm, shm_paths_t *out);
void vnic_shm_set_paths(vnic_transport_t *shm, const shm_paths_t *paths);
void vnic_shm_wake_all(vnic_transport_t *shm); /* wakes every sleeping local rank */
/* 1 once local rank `world` has handled every cell this rank sent it. */
int vnic_shm_consumed(vnic_transport_t *shm, int world);

/* Provided by shm_tune.c: called by every rank of the job once its transports are open
 * (vnic_open); returns when this rank's paths are set (the built-in ones if a local peer
 * failed meanwhile: the job is ending then). */
void vnic_shm_tune(vnic_t *v);

/* Name of a get path ("pipeline", "cma", "shared"). */
const char *vnic_shm_path_name(int get);

#endif
