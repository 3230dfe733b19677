/* boot.h — who am I, who are my peers, and a key-value space to exchange
 * addresses. Backends, chosen at boot_init from the environment:
 *   - PMI-1 wire protocol over PMI_FD (our fmplrun serves it; so do MPICH's Hydra
 *     and Slurm's srun --mpi=pmi2), or over a TCP connection to PMI_PORT (fmplrun
 *     --hosts, for ranks on other hosts; Hydra's -pmi-port);
 *   - singleton: no launcher, size 1, rank 0, a process-local key-value space.
 * All calls are for the process's main thread only; they block on the launcher
 * (a round trip on a socket) and are meant for start-up and rare events, never for
 * the data path. */
#ifndef FMPL_BOOT_H
#define FMPL_BOOT_H

#include <stddef.h>

#include "base/base.h"

#define BOOT_KEY_MAX 64     /* longest key, with its NUL */
#define BOOT_VALUE_MAX 1024 /* longest value, with its NUL (the PMI-1 limit) */
/* Longest value (without its NUL) boot_put accepts with every launcher: a put is one
 * PMI-1 request line of at most 1024 bytes (MPICH's simple PMI line; Slurm's srun
 * reads no more), "cmd=put kvsname=<up to 127> key=<up to 63> value=<value>\n". */
#define BOOT_VALUE_PORTABLE 800

typedef struct boot boot_t;

/* Connects to the launcher (or becomes a singleton). On success *out is the
 * handle; on failure an FMPL_ERR_* with a message already logged.
 * With PMI_FD set: PMI-1 over that socket (PMI_RANK/PMI_SIZE, or the older PMI_ID
 * handshake after cmd=init); else with PMI_PORT=<host>:<port> (IPv4 address or
 * name): PMI-1 over a TCP connection to it, the PMI_ID handshake first as MPICH's
 * simple PMI does (with FMPL_PMI_TOKEN, when set, in the initack line), or
 * PMI_RANK/PMI_SIZE; without either: singleton, except in a task of a Slurm job step of
 * several tasks (SLURM_STEP_NUM_TASKS > 1 and SLURM_PROCID set: srun without
 * --mpi=pmi2), which is refused with a message instead of running as a job of size 1.
 * Errors: FMPL_ERR_ARG (out NULL), FMPL_ERR_INIT (bad PMI environment, no connection,
 * a failed handshake, srun without PMI), FMPL_ERR_NOMEM. Blocks for a few round trips. */
int boot_init(boot_t **out);
/* Tells the launcher this rank finalised cleanly, then disconnects and frees b
 * (also on error). Blocks for one round trip. Errors: FMPL_ERR_ARG (NULL),
 * FMPL_ERR_PEER (the launcher did not acknowledge). */
int boot_finalize(boot_t *b);

/* This process's rank and the job's size; -1 for b == NULL. Never block. */
int boot_rank(const boot_t *b);
int boot_size(const boot_t *b);
/* Job identifier, unique on this host while the job runs (the PMI kvsname);
 * safe for use in file names ([A-Za-z0-9_-] only).
 * Naming convention for shared memory: every /dev/shm entry of a job is named
 * "/fmpl-" + boot_job_id() + "-..." (or exactly "/fmpl-" + boot_job_id()), and
 * fmplrun unlinks all such entries when the job ends, however it ends. Under
 * fmplrun the id is "fmpl-<launcher pid>-<8 hex>"; a singleton's is
 * "s<pid>-<8 hex>"; under another launcher, its kvsname with other characters
 * replaced by '_'. Never NULL for a valid b (NULL for b == NULL). */
const char *boot_job_id(const boot_t *b);
/* The local IPv4 address ("a.b.c.d") of the TCP connection to the launcher when it
 * came through PMI_PORT: an address of this host that the launcher's host reaches
 * (the udp transport binds it when the job spans hosts). NULL otherwise (PMI_FD,
 * singleton, b == NULL). Never blocks. */
const char *boot_local_addr(const boot_t *b);
/* Name of the backend in use: "fmplrun", "pmi", "singleton". */
const char *boot_backend(const boot_t *b);

/* Publishes key=value for every rank of the job (visible to others after the next
 * boot_fence). The key is private to this rank: the library stores it as
 * "<key>.<rank>", so ranks may use the same key names.
 * Keys and values must cross any PMI-1 server as single wire tokens: non-empty,
 * printable ASCII without space, '=' or backslash (use hex or base64url for
 * binary data); "<key>.<rank>" must fit in BOOT_KEY_MAX and the value in
 * BOOT_VALUE_MAX (both counting the NUL), and the whole request line
 * "cmd=put kvsname=<kvsname> key=<key>.<rank> value=<value>\n" in 1024 bytes (the
 * PMI-1 line limit; checked under every backend, the singleton included): values of
 * up to BOOT_VALUE_PORTABLE bytes always fit, longer ones only with short keys and
 * job names (a message says so). A put replaces the rank's earlier value
 * of the key. Blocks for one round trip to the launcher.
 * Errors: FMPL_ERR_ARG (NULL, bad or too long key or value), FMPL_ERR_PEER (the
 * launcher is gone or refused), FMPL_ERR_NOMEM (singleton). */
int boot_put(boot_t *b, const char *key, const char *value);
/* Reads the value rank `rank` published under `key` before a boot_fence that both
 * have passed. FMPL_ERR_ARG when absent. value has room for BOOT_VALUE_MAX bytes.
 * Errors: FMPL_ERR_RANK (rank outside [0, size)), FMPL_ERR_ARG (NULL argument,
 * invalid key, or no such value), FMPL_ERR_PEER (launcher gone). Blocks for one
 * round trip. */
int boot_get(boot_t *b, int rank, const char *key, char *value);
/* Collective over the job: commits puts and waits for every rank (PMI barrier).
 * Blocks until all ranks arrive; no time limit of its own (the launcher ends the
 * job if a rank dies). FMPL_ERR_ARG for NULL, FMPL_ERR_PEER when the launcher is
 * gone. */
int boot_fence(boot_t *b);

/* Node topology, known after boot_init + boot_nodes(): ranks are grouped by host,
 * identified by FMPL_NODE when the launcher sets it (fmplrun --hosts gives each rank
 * its host's name there, so ranks in separate network namespaces of one machine are
 * separate hosts), else by host name plus kernel boot id. Ranks of one host must be
 * able to share memory (/dev/shm, CMA). Collective over the job on first call. */
typedef struct boot_nodes {
    int nnodes;             /* number of distinct hosts */
    int my_node;            /* index of this rank's host */
    const int *node_of;     /* node index of each rank, [size] */
    int nlocal;             /* ranks on my host */
    int local_rank;         /* my index among them, in rank order */
    const int *local_ranks; /* world ranks on my host, ascending, [nlocal] */
} boot_nodes_t;
/* *out stays owned by b, valid until boot_finalize. Every rank must call it (one
 * put and one fence inside, then size gets). Errors: FMPL_ERR_ARG (NULL),
 * FMPL_ERR_PEER, FMPL_ERR_NOMEM. */
int boot_nodes(boot_t *b, const boot_nodes_t **out);

/* The launcher's name service (MPI_Publish_name and friends): service names mapped to
 * port names, shared by every rank the launcher serves. fmplrun keeps the table for the
 * job's lifetime; Hydra forwards to its name server; a singleton has none.
 * Service names and port names are printable ASCII (spaces allowed, no newline), 1 to
 * BOOT_NAME_MAX - 1 bytes. Each call blocks for one round trip.
 * Errors: FMPL_ERR_ARG (NULL or bad text; lookup/unpublish: the name is not published,
 * or another launcher refused), FMPL_ERR_BUSY (publish: the name is published already),
 * FMPL_ERR_UNSUPPORTED (no launcher; publish: another launcher refused), FMPL_ERR_PEER
 * (launcher gone). `why` (may be NULL, room for BOOT_NAME_MAX bytes) receives the
 * launcher's reason on failure. */
#define BOOT_NAME_MAX 256
int boot_name_publish(boot_t *b, const char *service, const char *port, char *why);
/* port has room for BOOT_NAME_MAX bytes. */
int boot_name_lookup(boot_t *b, const char *service, char *port, char *why);
int boot_name_unpublish(boot_t *b, const char *service, char *why);

/* Dynamic processes (PMI-1 spawn, MPICH's multi-line mcmd=spawn form): starts a new job
 * of the processes of `count` commands (cmd[i] with the NULL-terminated arguments
 * argv[i] (NULL: none), nprocs[i] processes and nkeys[i] info keys key[i][k] =
 * value[i][k]: fmplrun honours wdir, path and host), its key-value space holding the
 * job-level key preput_key = preput_value (boot_job_get). errcodes[sum of nprocs]: 0 per
 * started process, else an errno. Under fmplrun the new job runs on this host.
 * Errors: FMPL_ERR_UNSUPPORTED (a singleton: no launcher), FMPL_ERR_ARG (bad text),
 * FMPL_ERR_PEER (the launcher refused: why, room for BOOT_NAME_MAX bytes, says why;
 * errcodes are filled when it named the processes that failed), FMPL_ERR_NOMEM. Blocks
 * until the launcher answered. */
int boot_spawn(boot_t *b, int count, const char *const *cmd, char **const *argv, const int *nprocs,
               const int *nkeys, const char *const *const *key, const char *const *const *value,
               const char *preput_key, const char *preput_value, int *errcodes, char *why);
/* This process's application number (PMI get_appnum: the index of its command in a
 * spawn_multiple, or its executable in an MPMD launch); 0 for a singleton or a launcher
 * that does not say. */
int boot_appnum(boot_t *b);
/* A job-level key of this job's key-value space (a spawn's preput key), into value
 * (BOOT_VALUE_MAX bytes). FMPL_ERR_ARG when absent (and always for a singleton). */
int boot_job_get(boot_t *b, const char *key, char *value);

/* Ends the whole job: asks the launcher to kill every rank, prints msg. Never returns.
 * Sends cmd=abort exitcode=<exit_code> message=<msg> and _exits with exit_code at
 * once; fmplrun prints "rank R (pid P) aborted the job with exit code C: msg" and
 * ends the job with that code. b may be NULL (then it only prints and exits). */
_Noreturn void boot_abort(boot_t *b, int exit_code, const char *msg);

#endif
