/* boot.h — who am I, who are my peers, and a key-value space to exchange
 * addresses. Backends, chosen at boot_init from the environment:
 *   - PMI-1 wire protocol over PMI_FD (our fmplrun serves it; so do MPICH's Hydra
 *     and Slurm's srun --mpi=pmi2), later also PMI_PORT;
 *   - singleton: no launcher, size 1, rank 0, a process-local key-value space.
 * All calls are for the process's main thread only; they block on the launcher
 * (a round trip on a socket) and are meant for start-up and rare events, never for
 * the data path. */
#ifndef FMPL_BOOT_H
#define FMPL_BOOT_H

#include <stddef.h>

#include "base/base.h"

#define BOOT_KEY_MAX 64    /* longest key, with its NUL */
#define BOOT_VALUE_MAX 1024 /* longest value, with its NUL (the PMI-1 limit) */

typedef struct boot boot_t;

/* Connects to the launcher (or becomes a singleton). On success *out is the
 * handle; on failure an FMPL_ERR_* with a message already logged. */
int boot_init(boot_t **out);
/* Tells the launcher this rank finalised cleanly, then disconnects and frees. */
int boot_finalize(boot_t *b);

int boot_rank(const boot_t *b);
int boot_size(const boot_t *b);
/* Job identifier, unique on this host while the job runs (the PMI kvsname);
 * safe for use in file names ([A-Za-z0-9_-] only). */
const char *boot_job_id(const boot_t *b);
/* Name of the backend in use: "fmplrun", "pmi", "singleton". */
const char *boot_backend(const boot_t *b);

/* Publishes key=value for every rank of the job (visible to others after the next
 * boot_fence). The key is private to this rank: the library stores it as
 * "<key>.<rank>", so ranks may use the same key names. */
int boot_put(boot_t *b, const char *key, const char *value);
/* Reads the value rank `rank` published under `key` before a boot_fence that both
 * have passed. FMPL_ERR_ARG when absent. value has room for BOOT_VALUE_MAX bytes. */
int boot_get(boot_t *b, int rank, const char *key, char *value);
/* Collective over the job: commits puts and waits for every rank (PMI barrier). */
int boot_fence(boot_t *b);

/* Node topology, known after boot_init + boot_nodes(): ranks are grouped by host
 * (identified by hostname plus boot id). Collective over the job on first call. */
typedef struct boot_nodes {
    int nnodes;          /* number of distinct hosts */
    int my_node;         /* index of this rank's host */
    const int *node_of;  /* node index of each rank, [size] */
    int nlocal;          /* ranks on my host */
    int local_rank;      /* my index among them, in rank order */
    const int *local_ranks; /* world ranks on my host, ascending, [nlocal] */
} boot_nodes_t;
int boot_nodes(boot_t *b, const boot_nodes_t **out);

/* Ends the whole job: asks the launcher to kill every rank, prints msg. Never returns. */
_Noreturn void boot_abort(boot_t *b, int exit_code, const char *msg);

#endif
