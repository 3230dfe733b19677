/* env.c — the MPI environment (MPI-4.0 chapters 9 and 11): MPI_Init / Init_thread /
 * Finalize and their queries, MPI_Abort, clocks, processor name, versions, memory from the
 * shared heap, MPI_Pcontrol.
 *
 * MPI_Init runs fmpl_init (the runtime: boot, vnic, collective area, world group; then the
 * native layer), takes the runtime's handles (runtime.h), then the parts of the layer in
 * the order of mpi_impl.h: errhandlers, MPI_INFO_ENV, keyvals (this part), datatypes,
 * ops, communicators, point-to-point. MPI_Finalize deletes the attributes of
 * MPI_COMM_SELF (then MPI_COMM_WORLD) first, as MPI-4.0 11.2.2 requires, then finalizes
 * the parts in reverse (point-to-point first: it completes pending communication) and
 * ends with fmpl_finalize (collective over the job).
 *
 * The world model and sessions (MPI-4.0 11.3, session.c) share that runtime: it starts
 * with the first of MPI_Init / MPI_Session_init and ends with the last of MPI_Finalize /
 * MPI_Session_finalize (mpii_runtime_acquire / mpii_runtime_release count its users), so
 * they coexist in any order. Its end is collective over the job, and it cannot start
 * again after that (fmpl and the launcher's PMI session end with it).
 * MPI_Initialized / MPI_Finalized tell about the world model only. */
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "fmpl.h"
#include "mpi/file_impl.h"
#include "mpi/mpi_impl.h"
#include "runtime/runtime.h"

mpii_state_t mpii;
static int mpii_was_initialized; /* MPI_Initialized stays true after MPI_Finalize */
static int world_state;          /* the world model: MPII_BEFORE, MPII_ACTIVE, MPII_FINALIZED */
static int runtime_users;        /* the world model while active, plus each live session */
static int *init_argc;           /* MPI_Init's arguments, for MPI_INFO_ENV */
static char ***init_argv;

static int env_info_init(void)
{
    return mpii_info_init(init_argc, init_argv);
}

/* Starts the runtime (the first user). */
static int runtime_start(int *argc, char ***argv, int required, const char *fname)
{
    int rc = fmpl_init(argc, argv);
    if (rc == FMPL_ERR_PEER) /* another rank failed first: its message is the one to read */
        return MPII_ERRF(mpii_err_from_fmpl(rc), fname,
                         "the engine did not start because another rank's start-up failed; "
                         "that rank's message says why");
    if (rc != FMPL_SUCCESS)
        return MPII_ERRF(mpii_err_from_fmpl(rc), fname,
                         "the engine did not start (%s); the lines before this one say why",
                         fmpl_error_string(rc));
    mpii.vnic = runtime_vnic();
    mpii.boot = runtime_boot();
    mpii.world_rank = boot_rank(mpii.boot);
    mpii.world_size = boot_size(mpii.boot);
    mpii.thread_level = required < MPI_THREAD_SINGLE       ? MPI_THREAD_SINGLE
                        : required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                                                           : required;
    mpii.main_thread = (uint64_t)pthread_self();
    init_argc = argc;
    init_argv = argv;
    /* Active from here on: the parts below may call MPI functions. */
    mpii.state = MPII_ACTIVE;

    struct {
        int (*fn)(void);
        const char *what;
    } parts[] = {
        {mpii_errors_init, "error handlers"}, {env_info_init, "MPI_INFO_ENV"},
        {mpii_attr_init, "keyvals"},          {mpii_types_init, "datatypes"},
        {mpii_ops_init, "operations"},        {mpii_comm_init, "communicators"},
        {mpii_p2p_init, "point-to-point"},    {mpii_coll_tune_init, "collective thresholds"},
    };
    for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++) {
        rc = parts[i].fn();
        if (rc == MPI_SUCCESS && parts[i].fn == mpii_comm_init)
            mpii_comm_get(MPI_COMM_WORLD)->cgroup = runtime_world_group();
        if (rc != MPI_SUCCESS) {
            /* Other ranks may be waiting in a collective step of init: end the job. */
            char msg[256];
            snprintf(msg, sizeof msg,
                     "FMPL MPI error in %s: initialising the %s failed (error "
                     "class %d)",
                     fname, parts[i].what, rc);
            boot_abort(mpii.boot, 1, msg);
        }
    }
    return MPI_SUCCESS;
}

int mpii_runtime_acquire(int *argc, char ***argv, int required, const char *fname)
{
    if (mpii.state == MPII_ACTIVE) {
        runtime_users++;
        return MPI_SUCCESS;
    }
    if (mpii.state == MPII_FINALIZED)
        return MPI_ERR_OTHER; /* not raised: the caller knows which handler applies */
    int rc = runtime_start(argc, argv, required, fname);
    if (rc == MPI_SUCCESS)
        runtime_users = 1;
    return rc;
}

int mpii_runtime_release(const char *fname)
{
    if (--runtime_users > 0)
        return MPI_SUCCESS;
    int grc = mpii_comm_groups_finalize();
    mpii_file_async_finalize();
    mpii_p2p_finalize();
    coll_sched_shutdown(mpii.vnic);
    mpii_comm_finalize();
    mpii_ops_finalize();
    mpii_types_finalize();
    mpii_attr_finalize();
    mpii_info_finalize();
    mpii_win_finalize();
    mpii_errors_finalize();
    int rc = fmpl_finalize();
    mpii.state = MPII_FINALIZED;
    mpii.vnic = NULL;
    mpii.boot = NULL;
    if (rc != FMPL_SUCCESS)
        return MPII_ERRF(mpii_err_from_fmpl(rc), fname, "fmpl_finalize: %s", fmpl_error_string(rc));
    if (grc != MPI_SUCCESS)
        return MPII_ERRF(grc, fname, "freeing the mailbox groups of communicators left alive");
    return MPI_SUCCESS;
}

/* MPI_Init / MPI_Init_thread: starts the world model. */
static int env_init(int *argc, char ***argv, int required, const char *fname)
{
    if (world_state != MPII_BEFORE)
        return MPII_ERRF(MPI_ERR_OTHER, fname,
                         world_state == MPII_ACTIVE ? "MPI is already initialized"
                                                    : "MPI cannot be initialized again after "
                                                      "MPI_Finalize");
    init_argc = argc;
    init_argv = argv;
    int rc = mpii_runtime_acquire(argc, argv, required, fname);
    if (rc != MPI_SUCCESS)
        return MPII_ERRF(rc, fname, "MPI cannot start again after the last session ended it");
    mpii.thread_level = required < MPI_THREAD_SINGLE       ? MPI_THREAD_SINGLE
                        : required > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED
                                                           : required;
    world_state = MPII_ACTIVE;
    mpii_was_initialized = 1;
    rc = mpii_spawn_parent_connect();
    if (rc != MPI_SUCCESS)
        return MPII_ERRF(rc, fname, "a spawned job cannot connect to its parents");
    return MPI_SUCCESS;
}

/* MPI_Init: starts MPI (MPI_THREAD_SINGLE). Collective over the job. */
int PMPI_Init(int *argc, char ***argv)
{
    return env_init(argc, argv, MPI_THREAD_SINGLE, "MPI_Init");
}
MPII_WEAK(MPI_Init, PMPI_Init)

/* MPI_Init_thread: *provided = min(required, MPI_THREAD_SERIALIZED) — the library is
 * not thread-safe, so it never claims MPI_THREAD_MULTIPLE. */
int PMPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
    if (!provided)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Init_thread");
    int rc = env_init(argc, argv, required, "MPI_Init_thread");
    if (rc == MPI_SUCCESS)
        *provided = mpii.thread_level;
    return rc;
}
MPII_WEAK(MPI_Init_thread, PMPI_Init_thread)

/* MPI_Finalize: deletes COMM_SELF's then COMM_WORLD's attributes, completes pending
 * communication, frees the layer and ends fmpl. Collective over the job. */
int PMPI_Finalize(void)
{
    MPII_CHECK_INIT("MPI_Finalize");
    if (world_state != MPII_ACTIVE)
        return MPII_ERRF(MPI_ERR_OTHER, "MPI_Finalize", "MPI_Init was not called");
    static const MPI_Comm first[] = {MPI_COMM_SELF, MPI_COMM_WORLD};
    for (int i = 0; i < 2; i++) {
        mpii_comm_t *c = mpii_comm_get(first[i]);
        if (c) {
            int rc = mpii_attr_delete_all(FMPL_MPI_KIND_COMM, first[i], &c->attrs);
            if (rc != MPI_SUCCESS)
                return MPII_ERRF_COMM(first[i], rc, "MPI_Finalize",
                                      "an attribute delete callback failed");
        }
    }
    world_state = MPII_FINALIZED;
    return mpii_runtime_release("MPI_Finalize");
}
MPII_WEAK(MPI_Finalize, PMPI_Finalize)

/* MPI_Initialized: 1 once MPI_Init has completed (also after MPI_Finalize). Any time. */
int PMPI_Initialized(int *flag)
{
    if (!flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Initialized");
    *flag = mpii_was_initialized;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Initialized, PMPI_Initialized)

/* MPI_Finalized: 1 once MPI_Finalize has completed. Any time. */
int PMPI_Finalized(int *flag)
{
    if (!flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Finalized");
    *flag = world_state == MPII_FINALIZED;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Finalized, PMPI_Finalized)

/* MPI_Query_thread: the thread level MPI_Init/Init_thread provided. */
int PMPI_Query_thread(int *provided)
{
    MPII_CHECK_INIT("MPI_Query_thread");
    if (!provided)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Query_thread");
    *provided = mpii.thread_level;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Query_thread, PMPI_Query_thread)

/* MPI_Is_thread_main: 1 when called by the thread that called MPI_Init. */
int PMPI_Is_thread_main(int *flag)
{
    MPII_CHECK_INIT("MPI_Is_thread_main");
    if (!flag)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Is_thread_main");
    *flag = pthread_equal((pthread_t)mpii.main_thread, pthread_self()) != 0;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Is_thread_main, PMPI_Is_thread_main)

/* MPI_Abort: ends every process of the job (whatever comm is) through the launcher, with
 * exit status errorcode (1 when outside 0..255). Never returns. */
int PMPI_Abort(MPI_Comm comm, int errorcode)
{
    char msg[160];
    const char *cname = comm == MPI_COMM_WORLD  ? "MPI_COMM_WORLD"
                        : comm == MPI_COMM_SELF ? "MPI_COMM_SELF"
                                                : "a communicator";
    snprintf(msg, sizeof msg, "MPI_Abort(%s, %d) called by rank %d", cname, errorcode,
             mpii.world_rank);
    boot_abort(mpii.boot, errorcode >= 0 && errorcode <= 255 ? errorcode : 1, msg);
}
MPII_WEAK(MPI_Abort, PMPI_Abort)

/* MPI_Wtime: seconds since a fixed point in the past (monotonic clock, not global). */
double PMPI_Wtime(void)
{
    return fmpl_wtime();
}
MPII_WEAK(MPI_Wtime, PMPI_Wtime)

/* MPI_Wtick: the resolution of MPI_Wtime in seconds. */
double PMPI_Wtick(void)
{
    struct timespec ts;
    if (clock_getres(CLOCK_MONOTONIC, &ts) != 0 || (ts.tv_sec == 0 && ts.tv_nsec == 0))
        return 1e-9;
    return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}
MPII_WEAK(MPI_Wtick, PMPI_Wtick)

/* MPI_Get_processor_name: the host name; *resultlen its length. */
int PMPI_Get_processor_name(char *name, int *resultlen)
{
    MPII_CHECK_INIT("MPI_Get_processor_name");
    if (!name || !resultlen)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Get_processor_name");
    if (gethostname(name, MPI_MAX_PROCESSOR_NAME) != 0)
        snprintf(name, MPI_MAX_PROCESSOR_NAME, "localhost");
    name[MPI_MAX_PROCESSOR_NAME - 1] = 0;
    *resultlen = (int)strlen(name);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_processor_name, PMPI_Get_processor_name)

/* MPI_Get_version: MPI_VERSION.MPI_SUBVERSION. Any time. */
int PMPI_Get_version(int *version, int *subversion)
{
    if (!version || !subversion)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Get_version");
    *version = MPI_VERSION;
    *subversion = MPI_SUBVERSION;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_version, PMPI_Get_version)

/* MPI_Get_library_version: "FMPL x.y.z ...". Any time. */
int PMPI_Get_library_version(char *version, int *resultlen)
{
    if (!version || !resultlen)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Get_library_version");
    int n = snprintf(version, MPI_MAX_LIBRARY_VERSION_STRING,
                     "FMPL %s (MPI %d.%d C interface; shared-memory transport; "
                     "thread level up to MPI_THREAD_SERIALIZED)",
                     FMPL_VERSION_STRING, MPI_VERSION, MPI_SUBVERSION);
    *resultlen = BASE_MIN(n, MPI_MAX_LIBRARY_VERSION_STRING - 1);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Get_library_version, PMPI_Get_library_version)

/* MPI_Alloc_mem: memory from the shared heap (peers on this host reach it with a plain
 * copy). MPI_ERR_NO_MEM when the heap (FMPL_SHM_HEAP per rank) is exhausted. */
int PMPI_Alloc_mem(MPI_Aint size, MPI_Info info, void *baseptr)
{
    MPII_CHECK_INIT("MPI_Alloc_mem");
    if (size < 0)
        return MPII_ERRF(MPI_ERR_SIZE, "MPI_Alloc_mem", "negative size %ld", (long)size);
    if (info != MPI_INFO_NULL && !mpii_handle_get(FMPL_MPI_KIND_INFO, info))
        return MPII_ERR(MPI_ERR_INFO, "MPI_Alloc_mem");
    if (!baseptr)
        return MPII_ERR(MPI_ERR_ARG, "MPI_Alloc_mem");
    void *p = fmpl_alloc_mem(size ? (size_t)size : 1);
    if (!p)
        return MPII_ERRF(MPI_ERR_NO_MEM, "MPI_Alloc_mem",
                         "%ld bytes do not fit in the shared heap (FMPL_SHM_HEAP)", (long)size);
    *(void **)baseptr = p;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Alloc_mem, PMPI_Alloc_mem)

/* MPI_Free_mem: returns memory of MPI_Alloc_mem (NULL accepted); MPI_ERR_BASE for any
 * other pointer. */
int PMPI_Free_mem(void *base)
{
    MPII_CHECK_INIT("MPI_Free_mem");
    if (fmpl_free_mem(base) != FMPL_SUCCESS)
        return MPII_ERRF(MPI_ERR_BASE, "MPI_Free_mem", "pointer not from MPI_Alloc_mem");
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Free_mem, PMPI_Free_mem)

/* MPI_Pcontrol: profiling control; the library itself does nothing with it. */
int PMPI_Pcontrol(const int level, ...)
{
    (void)level;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Pcontrol, PMPI_Pcontrol)
