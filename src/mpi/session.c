/* session.c — MPI-4.0 sessions (chapter 11.3): MPI_Session_init / finalize, the process
 * sets and their info, MPI_Session_get_info, MPI_Group_from_session_pset. Error handlers
 * of sessions are in errors.c, MPI_Comm_create_from_group and
 * MPI_Intercomm_create_from_groups in comm.c, Session_c2f/f2c in interop.c.
 *
 * A session is a handle (FMPL_MPI_KIND_SESSION) to a small object: its error handler,
 * its hints and the thread level it provides. Sessions and the world model share one
 * runtime (env.c: mpii_runtime_acquire / release): the first MPI_Session_init or MPI_Init
 * starts it (collective over the job), the last MPI_Session_finalize or MPI_Finalize ends
 * it (collective over the job); MPI_Session_init after that end fails with MPI_ERR_OTHER.
 *
 * Process sets: "mpi://WORLD" (every process of the job) and "mpi://SELF" (this
 * process); names compare without regard to case. Their info has "mpi_size".
 *
 * Thread level: the "thread_level" hint asks for one (MPI_THREAD_SINGLE when absent);
 * the session provides at most MPI_THREAD_SERIALIZED (the library is not thread-safe: one
 * thread at a time inside it), and MPI_Session_get_info tells what it provides. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "mpi/mpi_impl.h"

static const char *const pset_names[] = {"mpi://WORLD", "mpi://SELF"};
#define NPSETS 2

static const char *const thread_names[] = {"MPI_THREAD_SINGLE", "MPI_THREAD_FUNNELED",
                                           "MPI_THREAD_SERIALIZED", "MPI_THREAD_MULTIPLE"};

/* The index of a process set name, or -1. */
static int pset_index(const char *name)
{
    for (int i = 0; name && i < NPSETS; i++)
        if (strcasecmp(name, pset_names[i]) == 0)
            return i;
    return -1;
}

/* The level a "thread_level" value asks for (MPI_THREAD_SINGLE if none or unknown). */
static int thread_level_of(MPI_Info info)
{
    if (info == MPI_INFO_NULL)
        return MPI_THREAD_SINGLE;
    char v[64];
    int len = (int)sizeof v, flag = 0;
    if (PMPI_Info_get_string(info, "thread_level", &len, v, &flag) != MPI_SUCCESS || !flag)
        return MPI_THREAD_SINGLE;
    for (int i = 0; i < 4; i++)
        if (strcasecmp(v, thread_names[i]) == 0)
            return i;
    return MPI_THREAD_SINGLE;
}

#define SESSION_ERR(h, code, fn) mpii_err(FMPL_MPI_KIND_SESSION, (h), (code), (fn))

#define GET_SESSION(ss, session, fn)                                                               \
    MPII_CHECK_INIT(fn);                                                                           \
    mpii_session_t *ss = mpii_session_get(session);                                                \
    if (!ss)                                                                                       \
    return MPII_ERR(MPI_ERR_SESSION, fn)

int PMPI_Session_init(MPI_Info info, MPI_Errhandler errhandler, MPI_Session *session)
{
    static const char fn[] = "MPI_Session_init";
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_SESSION) != MPI_SUCCESS)
        return MPII_ERRF(MPI_ERR_ARG, fn, "not a predefined or session error handler");
    if (!session)
        return mpii_err_with(errhandler, FMPL_MPI_KIND_SESSION, MPI_SESSION_NULL, MPI_ERR_ARG, fn,
                             NULL);
    mpii_session_t *ss = calloc(1, sizeof *ss);
    if (!ss)
        return mpii_err_with(errhandler, FMPL_MPI_KIND_SESSION, MPI_SESSION_NULL, MPI_ERR_NO_MEM,
                             fn, NULL);
    int rc = mpii_info_dup(info, &ss->info); /* also checks info */
    if (rc != MPI_SUCCESS) {
        free(ss);
        return mpii_err_with(errhandler, FMPL_MPI_KIND_SESSION, MPI_SESSION_NULL,
                             rc == MPI_ERR_NO_MEM ? rc : MPI_ERR_INFO, fn, NULL);
    }
    int want = thread_level_of(ss->info);
    ss->thread_level = want > MPI_THREAD_SERIALIZED ? MPI_THREAD_SERIALIZED : want;
    rc = mpii_runtime_acquire(NULL, NULL, ss->thread_level, fn);
    if (rc == MPI_SUCCESS)
        rc = PMPI_Info_set(ss->info, "thread_level", thread_names[ss->thread_level]);
    if (rc == MPI_SUCCESS) {
        ss->handle = mpii_handle_new(FMPL_MPI_KIND_SESSION, ss);
        if (ss->handle == MPI_SESSION_NULL) {
            mpii_runtime_release(fn);
            rc = MPI_ERR_NO_MEM;
        }
    }
    if (rc != MPI_SUCCESS) {
        mpii_info_free(&ss->info);
        free(ss);
        return mpii_err_with(errhandler, FMPL_MPI_KIND_SESSION, MPI_SESSION_NULL, rc, fn,
                             rc == MPI_ERR_OTHER ? "MPI has ended (the world model and every "
                                                   "session finalized): it cannot start again"
                                                 : NULL);
    }
    ss->errh = errhandler;
    mpii_errh_ref(errhandler);
    *session = ss->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_init, PMPI_Session_init)

int PMPI_Session_finalize(MPI_Session *session)
{
    static const char fn[] = "MPI_Session_finalize";
    MPII_CHECK_INIT(fn);
    if (!session)
        return MPII_ERR(MPI_ERR_ARG, fn);
    mpii_session_t *ss = mpii_session_get(*session);
    if (!ss)
        return MPII_ERR(MPI_ERR_SESSION, fn);
    mpii_handle_del(FMPL_MPI_KIND_SESSION, *session);
    mpii_errh_release(ss->errh);
    mpii_info_free(&ss->info);
    free(ss);
    *session = MPI_SESSION_NULL;
    return mpii_runtime_release(fn);
}
MPII_WEAK(MPI_Session_finalize, PMPI_Session_finalize)

/* The info argument of the pset queries: MPI_INFO_NULL or a valid info (no hints are
 * used). */
static int info_ok(MPI_Info info)
{
    return info == MPI_INFO_NULL || mpii_handle_get(FMPL_MPI_KIND_INFO, info) != NULL;
}

int PMPI_Session_get_num_psets(MPI_Session session, MPI_Info info, int *npset_names)
{
    static const char fn[] = "MPI_Session_get_num_psets";
    GET_SESSION(ss, session, fn);
    if (!npset_names)
        return SESSION_ERR(session, MPI_ERR_ARG, fn);
    if (!info_ok(info))
        return SESSION_ERR(session, MPI_ERR_INFO, fn);
    (void)ss;
    *npset_names = NPSETS;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_get_num_psets, PMPI_Session_get_num_psets)

int PMPI_Session_get_nth_pset(MPI_Session session, MPI_Info info, int n, int *pset_len,
                              char *pset_name)
{
    static const char fn[] = "MPI_Session_get_nth_pset";
    GET_SESSION(ss, session, fn);
    (void)ss;
    if (!pset_len || *pset_len < 0 || (*pset_len > 0 && !pset_name))
        return SESSION_ERR(session, MPI_ERR_ARG, fn);
    if (n < 0 || n >= NPSETS)
        return mpii_errf(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn,
                         "n = %d: the session has %d process sets", n, NPSETS);
    if (!info_ok(info))
        return SESSION_ERR(session, MPI_ERR_INFO, fn);
    int len = (int)strlen(pset_names[n]) + 1;
    if (*pset_len > 0) { /* at most *pset_len - 1 characters and the terminating null */
        int k = *pset_len < len ? *pset_len - 1 : len - 1;
        memcpy(pset_name, pset_names[n], (size_t)k);
        pset_name[k] = '\0';
    }
    *pset_len = len;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_get_nth_pset, PMPI_Session_get_nth_pset)

int PMPI_Session_get_info(MPI_Session session, MPI_Info *info_used)
{
    static const char fn[] = "MPI_Session_get_info";
    GET_SESSION(ss, session, fn);
    if (!info_used)
        return SESSION_ERR(session, MPI_ERR_ARG, fn);
    int rc = mpii_info_dup(ss->info, info_used);
    return rc != MPI_SUCCESS ? SESSION_ERR(session, rc, fn) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_get_info, PMPI_Session_get_info)

int PMPI_Session_get_pset_info(MPI_Session session, const char *pset_name, MPI_Info *info)
{
    static const char fn[] = "MPI_Session_get_pset_info";
    GET_SESSION(ss, session, fn);
    (void)ss;
    if (!info || !pset_name)
        return SESSION_ERR(session, MPI_ERR_ARG, fn);
    int i = pset_index(pset_name);
    if (i < 0)
        return mpii_errf(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn,
                         "no process set named \"%.64s\"", pset_name);
    MPI_Info out;
    int rc = mpii_info_dup(MPI_INFO_NULL, &out);
    char v[16];
    snprintf(v, sizeof v, "%d", i == 0 ? mpii.world_size : 1);
    if (rc == MPI_SUCCESS) {
        rc = PMPI_Info_set(out, "mpi_size", v);
        if (rc != MPI_SUCCESS)
            mpii_info_free(&out);
    }
    if (rc != MPI_SUCCESS)
        return SESSION_ERR(session, rc, fn);
    *info = out;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Session_get_pset_info, PMPI_Session_get_pset_info)

int PMPI_Group_from_session_pset(MPI_Session session, const char *pset_name, MPI_Group *newgroup)
{
    static const char fn[] = "MPI_Group_from_session_pset";
    GET_SESSION(ss, session, fn);
    (void)ss;
    if (!newgroup || !pset_name)
        return SESSION_ERR(session, MPI_ERR_ARG, fn);
    int i = pset_index(pset_name);
    if (i < 0)
        return mpii_errf(FMPL_MPI_KIND_SESSION, session, MPI_ERR_ARG, fn,
                         "no process set named \"%.64s\"", pset_name);
    mpii_group_t *g = mpii_group_new(i == 0 ? mpii.world_size : 1);
    if (!g)
        return SESSION_ERR(session, MPI_ERR_NO_MEM, fn);
    if (i == 0)
        for (int r = 0; r < mpii.world_size; r++)
            g->world[r] = r;
    else
        g->world[0] = mpii.world_rank;
    mpii_group_finish(g);
    int rc = mpii_group_handle(g, newgroup);
    return rc != MPI_SUCCESS ? SESSION_ERR(session, rc, fn) : MPI_SUCCESS;
}
MPII_WEAK(MPI_Group_from_session_pset, PMPI_Group_from_session_pset)
