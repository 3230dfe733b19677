/* spawn.c — MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent (MPI-4.0 11.8).
 *
 * The root opens a port (dpm.c) and asks the launcher to start the children as a new job
 * (boot_spawn: the PMI-1 spawn command, which fmplrun serves), with the port name as the
 * job-level key PARENT_ROOT_PORT_NAME. The children's MPI_Init finds that key
 * (boot_job_get) and their MPI_COMM_WORLD connects to the port (root 0); the parents'
 * comm accepts there, so the result on both sides is dpm.c's intercommunicator: the
 * children's MPI_Comm_get_parent. The children run on this host (fmplrun spawns only
 * there); their own traffic is on their shm, parent<->child traffic over udp.
 *
 * Errors: a launcher that cannot spawn (a singleton; Hydra or Slurm refusing the
 * command), a program that cannot be started, or any other refusal -> MPI_ERR_SPAWN on
 * every member of comm with the launcher's reason (naming the errno of the process that
 * could not start), array_of_errcodes holding MPI_ERR_SPAWN for every process (fmplrun
 * starts all or nothing: none of them runs). Info keys are passed to the launcher as they are
 * (fmplrun honours wdir, path and host). Bad arguments at the root -> the usual classes, on every
 * member. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

#define PARENT_KEY "PARENT_ROOT_PORT_NAME"

static MPI_Comm spawn_parent = MPI_COMM_NULL;

int mpii_spawn_parent_connect(void)
{
    char port[BOOT_VALUE_MAX];
    if (boot_job_get(mpii.boot, PARENT_KEY, port) != FMPL_SUCCESS)
        return MPI_SUCCESS; /* not spawned */
    int rc = PMPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &spawn_parent);
    if (rc == MPI_SUCCESS)
        PMPI_Comm_set_name(spawn_parent, "MPI_COMM_PARENT");
    return rc;
}

int PMPI_Comm_get_parent(MPI_Comm *parent)
{
    MPII_CHECK_INIT("MPI_Comm_get_parent");
    if (!parent)
        return MPII_ERRF(MPI_ERR_ARG, "MPI_Comm_get_parent", "parent is NULL");
    /* a disconnected or freed parent reads as MPI_COMM_NULL */
    if (spawn_parent != MPI_COMM_NULL && !mpii_comm_get(spawn_parent))
        spawn_parent = MPI_COMM_NULL;
    *parent = spawn_parent;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Comm_get_parent, PMPI_Comm_get_parent)

/* The info keys of one command as two arrays (owned by the caller: free both). */
static int info_arrays(MPI_Info info, int *n, char ***keys, char ***vals)
{
    *n = 0;
    *keys = *vals = NULL;
    if (info == MPI_INFO_NULL)
        return MPI_SUCCESS;
    int nk;
    int rc = PMPI_Info_get_nkeys(info, &nk);
    if (rc != MPI_SUCCESS)
        return MPI_ERR_INFO;
    *keys = calloc((size_t)nk + 1, sizeof **keys);
    *vals = calloc((size_t)nk + 1, sizeof **vals);
    if (!*keys || !*vals)
        return MPI_ERR_NO_MEM;
    for (int k = 0; k < nk; k++) {
        char key[MPI_MAX_INFO_KEY + 1];
        int len, flag;
        if (PMPI_Info_get_nthkey(info, k, key) != MPI_SUCCESS ||
            PMPI_Info_get_valuelen(info, key, &len, &flag) != MPI_SUCCESS || !flag)
            return MPI_ERR_INFO;
        (*keys)[k] = strdup(key);
        (*vals)[k] = malloc((size_t)len + 1);
        if (!(*keys)[k] || !(*vals)[k])
            return MPI_ERR_NO_MEM;
        if (PMPI_Info_get(info, key, len + 1, (*vals)[k], &flag) != MPI_SUCCESS)
            return MPI_ERR_INFO;
        *n = k + 1;
    }
    return MPI_SUCCESS;
}

static void info_arrays_free(int n, char **keys, char **vals)
{
    for (int k = 0; k < n; k++) {
        free(keys ? keys[k] : NULL);
        free(vals ? vals[k] : NULL);
    }
    free(keys);
    free(vals);
}

/* The root's part: checks, port, launch. Returns MPI_SUCCESS or the class; why gets the
 * reason; errcodes[total] filled. */
static int spawn_root(int count, char *cmds[], char ***argvs, const int maxprocs[],
                      const MPI_Info infos[], char *port, int *errcodes, int total, char *why)
{
    for (int c = 0; c < count; c++)
        if (!cmds || !cmds[c] || !cmds[c][0]) {
            snprintf(why, BOOT_NAME_MAX, "command %d is NULL or empty", c);
            return MPI_ERR_ARG;
        }
    int rc = PMPI_Open_port(MPI_INFO_NULL, port);
    if (rc != MPI_SUCCESS) {
        snprintf(why, BOOT_NAME_MAX, "cannot open a port for the children");
        return MPI_ERR_SPAWN;
    }
    int *nkeys = calloc((size_t)count, sizeof *nkeys);
    char ***keys = calloc((size_t)count, sizeof *keys),
         ***vals = calloc((size_t)count, sizeof *vals);
    rc = nkeys && keys && vals ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int c = 0; c < count && rc == MPI_SUCCESS; c++)
        rc = info_arrays(infos ? infos[c] : MPI_INFO_NULL, &nkeys[c], &keys[c], &vals[c]);
    if (rc != MPI_SUCCESS)
        snprintf(why, BOOT_NAME_MAX, "cannot read the info of a command");
    int err = FMPL_SUCCESS;
    if (rc == MPI_SUCCESS) {
        char **const *av = argvs;
        err = boot_spawn(mpii.boot, count, (const char *const *)cmds, av, maxprocs, nkeys,
                         (const char *const *const *)keys, (const char *const *const *)vals,
                         PARENT_KEY, port, errcodes, why);
        if (err != FMPL_SUCCESS) {
            /* every process fails with the request (none runs): the class in each */
            rc = MPI_ERR_SPAWN;
            for (int i = 0; i < total; i++)
                errcodes[i] = MPI_ERR_SPAWN;
        }
    }
    for (int c = 0; c < count && keys && vals && nkeys; c++)
        info_arrays_free(nkeys[c], keys[c], vals[c]);
    free(nkeys);
    free(keys);
    free(vals);
    if (rc != MPI_SUCCESS)
        PMPI_Close_port(port);
    return rc;
}

int PMPI_Comm_spawn_multiple(int count, char *array_of_commands[], char ***array_of_argv,
                             const int array_of_maxprocs[], const MPI_Info array_of_info[],
                             int root, MPI_Comm comm, MPI_Comm *intercomm, int *array_of_errcodes)
{
    static const char fn[] = "MPI_Comm_spawn_multiple";
    MPII_CHECK_INIT(fn);
    mpii_comm_t *l = mpii_comm_get(comm);
    int rc = mpii_dpm_root_args(l, root, intercomm, fn, comm);
    if (rc != MPI_SUCCESS)
        return rc;
    *intercomm = MPI_COMM_NULL;
    /* the root's arguments count; it tells the others the total and the outcome */
    struct {
        int32_t rc, total;
        char why[BOOT_NAME_MAX];
    } res = {MPI_SUCCESS, 0, ""};
    int *codes = NULL;
    char port[MPI_MAX_PORT_NAME] = "";
    if (l->rank == root) {
        if (count < 1 || !array_of_maxprocs) {
            res.rc = MPI_ERR_ARG;
            snprintf(res.why, sizeof res.why, "count must be at least 1");
        }
        for (int c = 0; c < count && res.rc == MPI_SUCCESS; c++) {
            if (array_of_maxprocs[c] < 1 || array_of_maxprocs[c] > 4096) {
                res.rc = MPI_ERR_ARG;
                snprintf(res.why, sizeof res.why, "maxprocs of command %d is %d", c,
                         array_of_maxprocs[c]);
            }
            res.total += array_of_maxprocs[c];
        }
        if (res.rc == MPI_SUCCESS && !(codes = calloc((size_t)res.total, sizeof *codes)))
            res.rc = MPI_ERR_NO_MEM;
        if (res.rc == MPI_SUCCESS)
            res.rc = spawn_root(count, array_of_commands, array_of_argv, array_of_maxprocs,
                                array_of_info, port, codes, res.total, res.why);
    }
    rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, &res, sizeof res, root, MPII_TAG_LIBCOLL);
    if (rc == MPI_SUCCESS && l->rank != root && res.total > 0 &&
        !(codes = calloc((size_t)res.total, sizeof *codes)))
        rc = MPI_ERR_NO_MEM;
    if (rc == MPI_SUCCESS && res.total > 0)
        rc = mpii_lib_bcast_tag(l, NULL, l->size, l->rank, codes, (size_t)res.total * sizeof *codes,
                                root, MPII_TAG_LIBCOLL);
    if (rc == MPI_SUCCESS && array_of_errcodes != MPI_ERRCODES_IGNORE && array_of_errcodes)
        memcpy(array_of_errcodes, codes, (size_t)res.total * sizeof *codes);
    free(codes);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    if (res.rc != MPI_SUCCESS)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, res.rc, fn, "%s", res.why);
    rc = PMPI_Comm_accept(port, MPI_INFO_NULL, root, comm, intercomm);
    if (l->rank == root)
        PMPI_Close_port(port);
    return rc;
}
MPII_WEAK(MPI_Comm_spawn_multiple, PMPI_Comm_spawn_multiple)

int PMPI_Comm_spawn(const char *command, char *argv[], int maxprocs, MPI_Info info, int root,
                    MPI_Comm comm, MPI_Comm *intercomm, int *array_of_errcodes)
{
    char *cmds[1] = {(char *)(uintptr_t)command};
    char **argvs[1] = {argv == MPI_ARGV_NULL ? NULL : argv};
    return PMPI_Comm_spawn_multiple(1, cmds, argvs, &maxprocs, &info, root, comm, intercomm,
                                    array_of_errcodes);
}
MPII_WEAK(MPI_Comm_spawn, PMPI_Comm_spawn)
