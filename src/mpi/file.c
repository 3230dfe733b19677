/* file.c — MPI-IO files (MPI-4.0 chapter 14.2): open, close, delete, size, preallocate,
 * sync, amode, group, info hints, error handlers, atomicity, data representations and
 * MPI_File_get_type_extent. The parts are listed in file_impl.h.
 *
 * Open is collective: rank 0 of the communicator opens first (with O_CREAT / O_EXCL as the
 * amode says), the others then open the file it made; one allreduce agrees on the outcome
 * (the largest error class wins), so a failure on any process fails the open everywhere
 * and every descriptor opened is closed again. The file keeps a duplicate of the
 * communicator for its collectives and the view (file_view.c), the aggregators
 * (file_coll.c) and the shared pointer's counter (file_shared.c).
 *
 * Hints (info): cb_nodes (aggregators, default one per host), cb_buffer_size (bytes each
 * aggregator moves per round, default 16 MiB), romio_cb_read / romio_cb_write (enable,
 * disable, automatic: collective buffering on or off). Other keys are kept in the
 * info MPI_File_get_info returns but ignored.
 *
 * Errors go to the file's handler (MPI_ERRORS_RETURN unless changed); open and delete,
 * which have no file yet, use MPI_FILE_NULL's handler (the default for new files too).
 * errno values map to classes in mpii_file_errno_class. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "mpi/file_impl.h"

/* The handler of MPI_FILE_NULL: errors of open/delete, and new files inherit it. */
static MPI_Errhandler file_default_errh = MPI_ERRORS_RETURN;

int mpii_file_errh(MPI_File h)
{
    mpii_file_t *f = mpii_file_get(h);
    return f ? f->errh : file_default_errh;
}

int mpii_file_errno_class(int err)
{
    switch (err) {
    case 0: return MPI_SUCCESS;
    case ENOENT: return MPI_ERR_NO_SUCH_FILE;
    case EACCES:
    case EPERM: return MPI_ERR_ACCESS;
    case EEXIST: return MPI_ERR_FILE_EXISTS;
    case EROFS: return MPI_ERR_READ_ONLY;
    case ENOSPC:
    case EFBIG: return MPI_ERR_NO_SPACE;
    case EDQUOT: return MPI_ERR_QUOTA;
    case ENAMETOOLONG:
    case ENOTDIR:
    case EISDIR:
    case ELOOP: return MPI_ERR_BAD_FILE;
    case ETXTBSY:
    case EBUSY: return MPI_ERR_FILE_IN_USE;
    case ENOMEM: return MPI_ERR_NO_MEM;
    default: return MPI_ERR_IO;
    }
}

/* ---------------------------------------------------------------- data representations */

#define DATAREP_MAX 16
static mpii_datarep_t datareps[DATAREP_MAX];
static int ndatareps;

const mpii_datarep_t *mpii_datarep_find(const char *name)
{
    for (int i = 0; i < ndatareps; i++)
        if (strcmp(datareps[i].name, name) == 0)
            return &datareps[i];
    return NULL;
}

static int datarep_register(const char *name, MPI_Datarep_conversion_function *rd,
                            MPI_Datarep_conversion_function *wr,
                            MPI_Datarep_conversion_function_c *rd_c,
                            MPI_Datarep_conversion_function_c *wr_c,
                            MPI_Datarep_extent_function *ext, void *extra, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!name || !*name || strlen(name) >= MPI_MAX_DATAREP_STRING)
        return MPII_ERRF_FILE(MPI_FILE_NULL, MPI_ERR_ARG, fname, "invalid datarep name");
    if (!ext)
        return MPII_ERRF_FILE(MPI_FILE_NULL, MPI_ERR_ARG, fname, "no extent function");
    if (!strcmp(name, "native") || !strcmp(name, "internal") || !strcmp(name, "external32") ||
        mpii_datarep_find(name))
        return MPII_ERRF_FILE(MPI_FILE_NULL, MPI_ERR_DUP_DATAREP, fname, "%s", name);
    if (ndatareps == DATAREP_MAX)
        return MPII_ERRF_FILE(MPI_FILE_NULL, MPI_ERR_NO_MEM, fname,
                              "at most %d data representations", DATAREP_MAX);
    mpii_datarep_t *d = &datareps[ndatareps++];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->read_fn = rd;
    d->write_fn = wr;
    d->read_fn_c = rd_c;
    d->write_fn_c = wr_c;
    d->extent_fn = ext;
    d->extra = extra;
    return MPI_SUCCESS;
}

/* MPI_Register_datarep: a named representation with conversion functions (NULL: the
 * bytes are native) and a file-extent function. */
int PMPI_Register_datarep(const char *datarep, MPI_Datarep_conversion_function *read_conversion_fn,
                          MPI_Datarep_conversion_function *write_conversion_fn,
                          MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return datarep_register(datarep, read_conversion_fn, write_conversion_fn, NULL, NULL,
                            dtype_file_extent_fn, extra_state, "MPI_Register_datarep");
}
MPII_WEAK(MPI_Register_datarep, PMPI_Register_datarep)

int PMPI_Register_datarep_c(const char *datarep,
                            MPI_Datarep_conversion_function_c *read_conversion_fn,
                            MPI_Datarep_conversion_function_c *write_conversion_fn,
                            MPI_Datarep_extent_function *dtype_file_extent_fn, void *extra_state)
{
    return datarep_register(datarep, NULL, NULL, read_conversion_fn, write_conversion_fn,
                            dtype_file_extent_fn, extra_state, "MPI_Register_datarep_c");
}
MPII_WEAK(MPI_Register_datarep_c, PMPI_Register_datarep_c)

/* ---------------------------------------------------------------- hints */

static void info_set_int(MPI_Info info, const char *key, int64_t v)
{
    char s[32];
    snprintf(s, sizeof s, "%lld", (long long)v);
    PMPI_Info_set(info, key, s);
}

static const char *cb_mode_name(int m)
{
    return m == 1 ? "enable" : m == 0 ? "disable" : "automatic";
}

/* Reads our hints from info into f (unknown keys and bad values are ignored) and keeps
 * every key of info in f->info with ours at their values in use. */
static int hints_apply(mpii_file_t *f, MPI_Info info)
{
    char v[MPI_MAX_INFO_VAL + 1];
    int flag = 0;
    if (info != MPI_INFO_NULL) {
        int nkeys = 0;
        if (PMPI_Info_get_nkeys(info, &nkeys) != MPI_SUCCESS)
            return MPI_ERR_INFO;
        for (int i = 0; i < nkeys; i++) {
            char key[MPI_MAX_INFO_KEY + 1];
            PMPI_Info_get_nthkey(info, i, key);
            PMPI_Info_get(info, key, MPI_MAX_INFO_VAL, v, &flag);
            if (!flag)
                continue;
            PMPI_Info_set(f->info, key, v);
            char *end = NULL;
            if (!strcmp(key, "cb_nodes")) {
                long long n = strtoll(v, &end, 10);
                if (end != v && !*end && n > 0)
                    f->cb_nodes = (int)BASE_MIN(n, (long long)f->size);
            } else if (!strcmp(key, "cb_buffer_size")) {
                long long n = strtoll(v, &end, 10);
                if (end != v && !*end && n >= 4096)
                    f->cb_buffer_size = n;
            } else if (!strcmp(key, "romio_cb_read") || !strcmp(key, "romio_cb_write")) {
                int m = !strcmp(v, "enable") ? 1 : !strcmp(v, "disable") ? 0 : 2;
                if (key[9] == 'r')
                    f->cb_read = m;
                else
                    f->cb_write = m;
            }
        }
    }
    info_set_int(f->info, "cb_buffer_size", f->cb_buffer_size);
    info_set_int(f->info, "cb_nodes", f->naggr ? f->naggr : f->cb_nodes);
    PMPI_Info_set(f->info, "romio_cb_read", cb_mode_name(f->cb_read));
    PMPI_Info_set(f->info, "romio_cb_write", cb_mode_name(f->cb_write));
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- open, close */

static int amode_check(int amode)
{
    int acc = (amode & MPI_MODE_RDONLY ? 1 : 0) + (amode & MPI_MODE_RDWR ? 1 : 0) +
              (amode & MPI_MODE_WRONLY ? 1 : 0);
    if (acc != 1)
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDONLY) && (amode & (MPI_MODE_CREATE | MPI_MODE_EXCL)))
        return MPI_ERR_AMODE;
    if ((amode & MPI_MODE_RDWR) && (amode & MPI_MODE_SEQUENTIAL))
        return MPI_ERR_AMODE;
    int known = MPI_MODE_RDONLY | MPI_MODE_RDWR | MPI_MODE_WRONLY | MPI_MODE_CREATE |
                MPI_MODE_EXCL | MPI_MODE_DELETE_ON_CLOSE | MPI_MODE_UNIQUE_OPEN |
                MPI_MODE_SEQUENTIAL | MPI_MODE_APPEND;
    return amode & ~known ? MPI_ERR_AMODE : MPI_SUCCESS;
}

static int open_flags(int amode, int creator)
{
    int fl = amode & MPI_MODE_RDONLY ? O_RDONLY : amode & MPI_MODE_WRONLY ? O_WRONLY : O_RDWR;
    if (creator && (amode & MPI_MODE_CREATE))
        fl |= O_CREAT;
    if (creator && (amode & MPI_MODE_EXCL))
        fl |= O_EXCL;
    return fl | O_CLOEXEC;
}

static void file_free(mpii_file_t *f)
{
    if (f->fd >= 0)
        close(f->fd);
    mpii_view_free(&f->view);
    if (f->info != MPI_INFO_NULL)
        PMPI_Info_free(&f->info);
    if (f->comm != MPI_COMM_NULL)
        PMPI_Comm_free(&f->comm);
    mpii_errh_release(f->errh);
    free(f->aggregators);
    free(f->cb_buf);
    free(f->path);
    free(f);
}

/* MPI_File_open: collective over comm (an intracommunicator). */
int PMPI_File_open(MPI_Comm comm, const char *filename, int amode, MPI_Info info, MPI_File *fh)
{
    static const char fn[] = "MPI_File_open";
    MPII_CHECK_INIT(fn);
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fn);
    if (c->rgroup)
        return MPII_ERRF_FILE(MPI_FILE_NULL, MPI_ERR_COMM, fn, "an intercommunicator");
    if (!fh)
        return MPII_ERR_FILE(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    if (info != MPI_INFO_NULL) {
        int nk;
        if (PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS)
            return MPII_ERR_FILE(MPI_FILE_NULL, MPI_ERR_INFO, fn);
    }
    int local = filename && *filename ? amode_check(amode) : MPI_ERR_BAD_FILE;
    /* strip a ROMIO-style "fs:" prefix (ufs:, nfs:, ...) */
    const char *path = filename;
    if (path) {
        const char *colon = strchr(path, ':');
        if (colon && colon - path >= 2 && !memchr(path, '/', (size_t)(colon - path)))
            path = colon + 1;
    }
    mpii_file_t *f = calloc(1, sizeof *f);
    if (!f)
        local = MPI_ERR_NO_MEM;
    else {
        f->fd = -1;
        f->comm = MPI_COMM_NULL;
        f->info = MPI_INFO_NULL;
        f->errh = file_default_errh;
        mpii_errh_ref(f->errh);
    }
    MPI_Comm dup = MPI_COMM_NULL;
    int rc = PMPI_Comm_dup(comm, &dup);
    if (rc != MPI_SUCCESS) {
        if (f)
            file_free(f);
        return MPII_ERR_FILE(MPI_FILE_NULL, rc, fn);
    }
    if (f) {
        f->comm = dup;
        PMPI_Comm_rank(dup, &f->rank);
        PMPI_Comm_size(dup, &f->size);
    } else {
        PMPI_Comm_free(&dup);
    }
    int rank, size;
    PMPI_Comm_rank(comm, &rank);
    PMPI_Comm_size(comm, &size);
    /* agree on amode first: {class, amode, -amode} maxed */
    int agree[3] = {local, amode, -amode};
    PMPI_Allreduce(MPI_IN_PLACE, agree, 3, MPI_INT, MPI_MAX, comm);
    if (agree[0] == MPI_SUCCESS && agree[1] != -agree[2])
        agree[0] = MPI_ERR_NOT_SAME;
    if (agree[0] != MPI_SUCCESS) {
        if (f)
            file_free(f);
        return MPII_ERR_FILE(MPI_FILE_NULL, agree[0], fn);
    }
    /* rank 0 first (it creates), then the others */
    int cls = MPI_SUCCESS;
    if (rank == 0) {
        f->fd = open(path, open_flags(amode, 1), 0666);
        cls = f->fd < 0 ? mpii_file_errno_class(errno) : MPI_SUCCESS;
    }
    PMPI_Bcast(&cls, 1, MPI_INT, 0, comm);
    if (cls == MPI_SUCCESS && rank != 0) {
        f->fd = open(path, open_flags(amode, 0), 0666);
        cls = f->fd < 0 ? mpii_file_errno_class(errno) : MPI_SUCCESS;
    }
    if (cls == MPI_SUCCESS) {
        struct stat st;
        if (fstat(f->fd, &st) == 0 && S_ISDIR(st.st_mode))
            cls = MPI_ERR_BAD_FILE;
    }
    if (cls == MPI_SUCCESS) {
        f->path = strdup(path);
        f->amode = amode;
        f->cb_buffer_size = 16 << 20;
        f->cb_read = f->cb_write = 2;
        if (!f->path || PMPI_Info_create(&f->info) != MPI_SUCCESS)
            cls = MPI_ERR_NO_MEM;
        else
            cls = hints_apply(f, info);
    }
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, comm);
    if (cls == MPI_SUCCESS)
        cls = mpii_file_aggr_setup(f);
    if (cls == MPI_SUCCESS) {
        hints_apply(f, MPI_INFO_NULL);
        cls = mpii_view_set(f, 0, MPI_BYTE, MPI_BYTE, "native");
    }
    if (cls == MPI_SUCCESS)
        cls = mpii_file_shared_open(f);
    if (cls == MPI_SUCCESS) {
        f->handle = mpii_handle_new(FMPL_MPI_KIND_FILE, f);
        if (f->handle == MPI_FILE_NULL)
            cls = MPI_ERR_NO_MEM;
    }
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, comm);
    if (cls != MPI_SUCCESS) {
        if (f->handle && f->handle != MPI_FILE_NULL)
            mpii_handle_del(FMPL_MPI_KIND_FILE, f->handle);
        mpii_file_shared_close(f);
        file_free(f);
        return MPII_ERR_FILE(MPI_FILE_NULL, cls, fn);
    }
    if (amode & MPI_MODE_APPEND) {
        struct stat st;
        int64_t end = fstat(f->fd, &st) == 0 ? (int64_t)st.st_size : 0;
        f->fp = end;
        if (f->rank == 0)
            *f->shared_cell = (uint64_t)end;
        PMPI_Barrier(f->comm);
    }
    *fh = f->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_open, PMPI_File_open)

/* MPI_File_close: collective; MPI_MODE_DELETE_ON_CLOSE removes the file after every
 * process closed it. */
int PMPI_File_close(MPI_File *fh)
{
    static const char fn[] = "MPI_File_close";
    MPII_CHECK_INIT(fn);
    if (!fh)
        return MPII_ERR_FILE(MPI_FILE_NULL, MPI_ERR_ARG, fn);
    mpii_file_t *f = mpii_file_get(*fh);
    if (!f)
        return MPII_ERR_FILE(*fh, MPI_ERR_FILE, fn);
    int cls = MPI_SUCCESS;
    if (f->split_active) { /* an end is missing: erroneous; the transfer is finished */
        cls = MPI_ERR_OTHER;
        mpii_file_async_finish(&f->split_req, MPI_STATUS_IGNORE);
        f->split_active = 0;
    }
    mpii_file_async_drain(f); /* pending requests (erroneous too) end before the close */
    if (f->fd >= 0 && close(f->fd) != 0 && cls == MPI_SUCCESS)
        cls = mpii_file_errno_class(errno);
    f->fd = -1;
    PMPI_Barrier(f->comm);
    if ((f->amode & MPI_MODE_DELETE_ON_CLOSE) && f->rank == 0)
        unlink(f->path);
    mpii_file_shared_close(f);
    int h = f->handle;
    if (cls != MPI_SUCCESS)
        cls = MPII_ERR_FILE(h, cls, fn);
    mpii_handle_del(FMPL_MPI_KIND_FILE, h);
    file_free(f);
    *fh = MPI_FILE_NULL;
    return cls;
}
MPII_WEAK(MPI_File_close, PMPI_File_close)

/* MPI_File_delete: removes the file (not collective). */
int PMPI_File_delete(const char *filename, MPI_Info info)
{
    static const char fn[] = "MPI_File_delete";
    MPII_CHECK_INIT(fn);
    (void)info;
    if (!filename || !*filename)
        return MPII_ERR_FILE(MPI_FILE_NULL, MPI_ERR_BAD_FILE, fn);
    const char *path = filename;
    const char *colon = strchr(path, ':');
    if (colon && colon - path >= 2 && !memchr(path, '/', (size_t)(colon - path)))
        path = colon + 1;
    if (unlink(path) != 0)
        return MPII_ERRF_FILE(MPI_FILE_NULL, mpii_file_errno_class(errno), fn, "%s: %s", path,
                              strerror(errno));
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_delete, PMPI_File_delete)

/* ---------------------------------------------------------------- size, sync */

/* The file of fh for function fn, or NULL after raising MPI_ERR_FILE into *rc. */
static mpii_file_t *file_arg(MPI_File fh, const char *fn, int *rc)
{
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        *rc = MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    return f;
}

static int file_resize(MPI_File fh, MPI_Offset size, int grow_only, const char *fn)
{
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int cls = MPI_SUCCESS;
    if (size < 0)
        cls = MPI_ERR_ARG;
    else if (f->amode & MPI_MODE_RDONLY)
        cls = MPI_ERR_READ_ONLY;
    else if (f->amode & MPI_MODE_SEQUENTIAL)
        cls = MPI_ERR_UNSUPPORTED_OPERATION;
    /* the same size everywhere: {size, -size} maxed */
    int64_t agree[2] = {size, -size};
    PMPI_Allreduce(MPI_IN_PLACE, agree, 2, MPI_INT64_T, MPI_MAX, f->comm);
    if (cls == MPI_SUCCESS && agree[0] != -agree[1])
        cls = MPI_ERR_NOT_SAME;
    if (cls == MPI_SUCCESS && f->rank == 0) {
        struct stat st;
        if (fstat(f->fd, &st) != 0)
            cls = mpii_file_errno_class(errno);
        else if (grow_only) {
            if ((int64_t)st.st_size < size) {
                int e = posix_fallocate(f->fd, 0, size);
                if (e == EOPNOTSUPP || e == EINVAL)
                    e = ftruncate(f->fd, size) == 0 ? 0 : errno;
                cls = mpii_file_errno_class(e);
            }
        } else if (ftruncate(f->fd, size) != 0)
            cls = mpii_file_errno_class(errno);
    }
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, f->comm);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

/* MPI_File_set_size: truncates or extends (collective, the same size everywhere). */
int PMPI_File_set_size(MPI_File fh, MPI_Offset size)
{
    return file_resize(fh, size, 0, "MPI_File_set_size");
}
MPII_WEAK(MPI_File_set_size, PMPI_File_set_size)

/* MPI_File_preallocate: makes sure the first size bytes have storage (never shrinks). */
int PMPI_File_preallocate(MPI_File fh, MPI_Offset size)
{
    return file_resize(fh, size, 1, "MPI_File_preallocate");
}
MPII_WEAK(MPI_File_preallocate, PMPI_File_preallocate)

/* MPI_File_get_size: the current size in bytes. */
int PMPI_File_get_size(MPI_File fh, MPI_Offset *size)
{
    static const char fn[] = "MPI_File_get_size";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    if (!size)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return MPII_ERR_FILE(fh, mpii_file_errno_class(errno), fn);
    *size = st.st_size;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_size, PMPI_File_get_size)

/* MPI_File_sync: flushes this process's writes to storage (collective). */
int PMPI_File_sync(MPI_File fh)
{
    static const char fn[] = "MPI_File_sync";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int cls = f->amode & MPI_MODE_RDONLY ? MPI_ERR_READ_ONLY : MPI_SUCCESS;
    if (cls == MPI_SUCCESS && fsync(f->fd) != 0 && errno != EINVAL && errno != EROFS)
        cls = mpii_file_errno_class(errno);
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, f->comm);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}
MPII_WEAK(MPI_File_sync, PMPI_File_sync)

/* ---------------------------------------------------------------- queries */

int PMPI_File_get_group(MPI_File fh, MPI_Group *group)
{
    static const char fn[] = "MPI_File_get_group";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    if (!group)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    rc = PMPI_Comm_group(f->comm, group);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_FILE(fh, rc, fn);
}
MPII_WEAK(MPI_File_get_group, PMPI_File_get_group)

int PMPI_File_get_amode(MPI_File fh, int *amode)
{
    static const char fn[] = "MPI_File_get_amode";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    if (!amode)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    *amode = f->amode;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_amode, PMPI_File_get_amode)

/* MPI_File_set_info: collective; new hints take effect (cb_nodes only at open). */
int PMPI_File_set_info(MPI_File fh, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_info";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int nk;
    if (info != MPI_INFO_NULL && PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS)
        return MPII_ERR_FILE(fh, MPI_ERR_INFO, fn);
    int cb_nodes = f->cb_nodes;
    rc = hints_apply(f, info);
    f->cb_nodes = cb_nodes;
    hints_apply(f, MPI_INFO_NULL);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_FILE(fh, rc, fn);
}
MPII_WEAK(MPI_File_set_info, PMPI_File_set_info)

/* MPI_File_get_info: a new info with the hints in use. */
int PMPI_File_get_info(MPI_File fh, MPI_Info *info_used)
{
    static const char fn[] = "MPI_File_get_info";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    if (!info_used)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    rc = PMPI_Info_dup(f->info, info_used);
    return rc == MPI_SUCCESS ? rc : MPII_ERR_FILE(fh, rc, fn);
}
MPII_WEAK(MPI_File_get_info, PMPI_File_get_info)

/* MPI_File_set_atomicity: collective; atomic mode locks the byte ranges of each access. */
int PMPI_File_set_atomicity(MPI_File fh, int flag)
{
    static const char fn[] = "MPI_File_set_atomicity";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int v[2] = {flag ? 1 : 0, flag ? -1 : 0};
    PMPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_INT, MPI_MAX, f->comm);
    if (v[0] != -v[1])
        return MPII_ERR_FILE(fh, MPI_ERR_NOT_SAME, fn);
    f->atomic = v[0];
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_set_atomicity, PMPI_File_set_atomicity)

int PMPI_File_get_atomicity(MPI_File fh, int *flag)
{
    static const char fn[] = "MPI_File_get_atomicity";
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    if (!flag)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    *flag = f->atomic;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_atomicity, PMPI_File_get_atomicity)

/* MPI_File_get_type_extent: the extent of datatype in the file's current representation
 * (native/internal: the memory extent; external32: external32 sizes of its elements laid
 * out as in memory; a user representation: its extent function for predefined types). */
static int type_extent(MPI_File fh, MPI_Datatype type, int64_t *ext, const char *fn)
{
    MPII_CHECK_INIT(fn);
    int rc;
    mpii_file_t *f = file_arg(fh, fn, &rc);
    if (!f)
        return rc;
    dt_t *t = mpii_type_get(type);
    if (!t)
        return MPII_ERR_FILE(fh, MPI_ERR_TYPE, fn);
    if (!ext)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    if (f->view.rep == MPII_REP_USER) {
        MPI_Aint e = 0;
        if (dt_kind(t) < 0)
            return MPII_ERRF_FILE(fh, MPI_ERR_UNSUPPORTED_DATAREP, fn,
                                  "derived types with a user data representation");
        rc = f->view.user_rep->extent_fn(type, &e, f->view.user_rep->extra);
        if (rc != MPI_SUCCESS)
            return MPII_ERR_FILE(fh, rc, fn);
        *ext = e;
    } else if (f->view.rep == MPII_REP_EXTERNAL32 && dt_size(t) > 0) {
        *ext = dt_extent(t) * dt_ext32_size(t) / dt_size(t);
    } else {
        *ext = dt_extent(t);
    }
    return MPI_SUCCESS;
}

int PMPI_File_get_type_extent(MPI_File fh, MPI_Datatype datatype, MPI_Aint *extent)
{
    int64_t e = 0;
    int rc = type_extent(fh, datatype, extent ? &e : NULL, "MPI_File_get_type_extent");
    if (rc == MPI_SUCCESS)
        *extent = (MPI_Aint)e;
    return rc;
}
MPII_WEAK(MPI_File_get_type_extent, PMPI_File_get_type_extent)

int PMPI_File_get_type_extent_c(MPI_File fh, MPI_Datatype datatype, MPI_Count *extent)
{
    int64_t e = 0;
    int rc = type_extent(fh, datatype, extent ? &e : NULL, "MPI_File_get_type_extent_c");
    if (rc == MPI_SUCCESS)
        *extent = e;
    return rc;
}
MPII_WEAK(MPI_File_get_type_extent_c, PMPI_File_get_type_extent_c)

/* ---------------------------------------------------------------- error handlers */

/* MPI_File_set_errhandler: on a file, or on MPI_FILE_NULL (the default for open/delete
 * errors and for files opened later). */
int PMPI_File_set_errhandler(MPI_File file, MPI_Errhandler errhandler)
{
    static const char fn[] = "MPI_File_set_errhandler";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(file);
    if (!f && file != MPI_FILE_NULL)
        return MPII_ERR_FILE(file, MPI_ERR_FILE, fn);
    if (mpii_errh_check(errhandler, FMPL_MPI_KIND_FILE) != MPI_SUCCESS)
        return MPII_ERRF_FILE(file, MPI_ERR_ARG, fn, "not a predefined or file error handler");
    mpii_errh_ref(errhandler);
    int *slot = f ? &f->errh : &file_default_errh;
    int old = *slot;
    *slot = errhandler;
    mpii_errh_release(old);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_set_errhandler, PMPI_File_set_errhandler)

/* MPI_File_get_errhandler: a new reference to the handler of file (or MPI_FILE_NULL's). */
int PMPI_File_get_errhandler(MPI_File file, MPI_Errhandler *errhandler)
{
    static const char fn[] = "MPI_File_get_errhandler";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(file);
    if (!f && file != MPI_FILE_NULL)
        return MPII_ERR_FILE(file, MPI_ERR_FILE, fn);
    if (!errhandler)
        return MPII_ERR_FILE(file, MPI_ERR_ARG, fn);
    *errhandler = f ? f->errh : file_default_errh;
    mpii_errh_ref(*errhandler);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_errhandler, PMPI_File_get_errhandler)

/* MPI_File_call_errhandler: runs the handler of fh with errorcode. */
int PMPI_File_call_errhandler(MPI_File fh, int errorcode)
{
    static const char fn[] = "MPI_File_call_errhandler";
    MPII_CHECK_INIT(fn);
    if (!mpii_file_get(fh)) /* MPI_FILE_NULL included: no file to call it on */
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    (void)mpii_err_call(FMPL_MPI_KIND_FILE, fh, errorcode, fn);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_call_errhandler, PMPI_File_call_errhandler)
