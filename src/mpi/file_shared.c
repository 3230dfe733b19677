/* file_shared.c — the shared file pointer (MPI-4.0 14.4.4), ordered collective access
 * and split collectives (14.4.5).
 *
 * The shared pointer is one 64-bit counter (in etypes of the current view) in the vnic
 * shared heap of rank 0 of the file's communicator, registered with a fresh key that
 * MPI_File_open broadcasts. MPI_File_read_shared / write_shared claim their etypes with
 * a remote fetch-and-add on it (vnic_atomic VNIC_OP_FADD; within a host the transport
 * executes it on the mapping, without rank 0's CPU), then transfer independently at
 * the position they got. Rank 0 itself adds with a local atomic on the same memory.
 *
 * Ordered calls (read_ordered / write_ordered): one allgather of every process's etype
 * count gives each its place in rank order; rank 0 claims the sum with one fetch-and-add
 * and broadcasts the old value; then the collective path (file_coll.c) moves the data,
 * each process at base + the counts of the ranks before it.
 *
 * seek_shared / set_view reset the counter collectively: a barrier, rank 0 stores, a
 * barrier (no process claims meanwhile, as the standard requires these calls to be
 * collective).
 *
 * Split collectives (*_begin / *_end): the begin call starts a nonblocking collective
 * transfer (file_async.c; an ordered one claims its place first) and keeps its request
 * for the end call, which waits for it; one split collective may be active per file at
 * a time (another begin before the end is MPI_ERR_OTHER, as is an end without a
 * begin). The nonblocking shared-pointer calls claim their etypes at the call and
 * transfer in the background. */
#include <stdlib.h>
#include <string.h>

#include "mpi/file_impl.h"

int mpii_file_shared_open(mpii_file_t *f)
{
    mpii_comm_t *c = mpii_comm_get(f->comm);
    f->shared_owner = c->group->world[0];
    uint64_t key = 0; /* 0: rank 0 failed */
    if (f->rank == 0) {
        f->shared_cell = vnic_mem_alloc(mpii.vnic, 64);
        vnic_key_t k = VNIC_KEY_INVALID;
        if (f->shared_cell) {
            *f->shared_cell = 0;
            if (vnic_mr_reg(mpii.vnic, f->shared_cell, 8, VNIC_ACC_ALL, &k) != FMPL_SUCCESS) {
                vnic_mem_free(mpii.vnic, f->shared_cell);
                f->shared_cell = NULL;
                k = VNIC_KEY_INVALID;
            }
        }
        key = k;
    }
    PMPI_Bcast(&key, 1, MPI_UINT64_T, 0, f->comm);
    f->shared_key = (vnic_key_t)key;
    return key == VNIC_KEY_INVALID ? MPI_ERR_NO_MEM : MPI_SUCCESS;
}

void mpii_file_shared_close(mpii_file_t *f)
{
    if (f->rank == 0 && f->shared_cell) {
        vnic_mr_dereg(mpii.vnic, f->shared_key);
        vnic_mem_free(mpii.vnic, f->shared_cell);
    }
    f->shared_cell = NULL;
    f->shared_key = VNIC_KEY_INVALID;
}

/* Adds etypes to the shared pointer; *old gets its value before. Returns a class. */
static int shared_fetch_add(mpii_file_t *f, int64_t etypes, int64_t *old)
{
    uint64_t v = 0;
    if (f->rank == 0) {
        v = __atomic_fetch_add(f->shared_cell, (uint64_t)etypes, __ATOMIC_SEQ_CST);
    } else {
        int rc = vnic_atomic(mpii.vnic, VNIC_OP_FADD, f->shared_owner, f->shared_key, 0,
                             (uint64_t)etypes, 0, &v);
        if (rc != FMPL_SUCCESS)
            return mpii_err_from_fmpl(rc);
    }
    *old = (int64_t)v;
    return MPI_SUCCESS;
}

int mpii_file_shared_reset(mpii_file_t *f, int64_t value)
{
    PMPI_Barrier(f->comm);
    if (f->rank == 0)
        __atomic_store_n(f->shared_cell, (uint64_t)value, __ATOMIC_SEQ_CST);
    PMPI_Barrier(f->comm);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- calls */

/* The checks of a shared-pointer access; returns a class. */
static int shared_check(mpii_file_t *f, int write, MPI_Datatype type, int64_t count, int64_t *n)
{
    int cls;
    *n = mpii_file_data_size(f, type, count, &cls);
    if (cls != MPI_SUCCESS)
        return cls;
    if (write && (f->amode & MPI_MODE_RDONLY))
        return MPI_ERR_READ_ONLY;
    if (!write && (f->amode & MPI_MODE_WRONLY))
        return MPI_ERR_ACCESS;
    return MPI_SUCCESS;
}

static int shared_access(MPI_File fh, const char *fn, int write, void *buf, int64_t count,
                         MPI_Datatype type, MPI_Status *status)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    int64_t n = 0, old = 0, done = 0;
    int cls = shared_check(f, write, type, count, &n);
    if (cls == MPI_SUCCESS && n > 0)
        cls = shared_fetch_add(f, n / f->view.esize, &old);
    if (cls == MPI_SUCCESS)
        cls = mpii_file_indep(f, write, old * f->view.esize, buf, count, type, &done);
    mpii_file_status(f, status, type, done);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

/* An ordered call's place: one allgather of the etype counts, rank 0 claims the sum
 * (collective). *cls: this process's check in, MPI_ERR_INTERN added when the claim
 * failed; returns the view byte position of this process's part. */
static int64_t ordered_position(mpii_file_t *f, int64_t n, int *cls)
{
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int64_t mine = *cls == MPI_SUCCESS ? n / f->view.esize : 0;
    int64_t *all = malloc((size_t)f->size * sizeof *all);
    int64_t before = 0, total = 0;
    if (!all) {
        *cls = MPI_ERR_NO_MEM;
        return 0;
    }
    PMPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, f->comm);
    for (int i = 0; i < f->size; i++) {
        if (i < f->rank)
            before += all[i];
        total += all[i];
    }
    free(all);
    int64_t base = 0;
    if (f->rank == 0 && shared_fetch_add(f, total, &base) != MPI_SUCCESS)
        base = -1;
    PMPI_Bcast(&base, 1, MPI_INT64_T, 0, f->comm);
    if (base < 0 && *cls == MPI_SUCCESS)
        *cls = MPI_ERR_INTERN;
    return (base + before) * f->view.esize;
}

static int ordered_access(MPI_File fh, const char *fn, int write, void *buf, int64_t count,
                          MPI_Datatype type, MPI_Status *status)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    int64_t n = 0, done = 0;
    int cls = shared_check(f, write, type, count, &n);
    int64_t pos = ordered_position(f, n, &cls);
    cls = mpii_file_coll(f, write, pos, buf, count, type, cls, &done);
    mpii_file_status(f, status, type, done);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

/* The nonblocking shared-pointer calls: the claim now, the transfer in the background. */
static int ishared_access(MPI_File fh, const char *fn, int write, void *buf, int64_t count,
                          MPI_Datatype type, MPI_Request *request)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!request)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    int64_t n = 0, old = 0;
    int cls = shared_check(f, write, type, count, &n);
    if (cls == MPI_SUCCESS && n > 0)
        cls = shared_fetch_add(f, n / f->view.esize, &old);
    if (cls == MPI_SUCCESS)
        cls = mpii_file_async_start(f, write, old * f->view.esize, buf, count, type, 0, cls, 1,
                                    request);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

#define FILE_SHARED(name, body, write, ctype, cnt_t, last_t)                                       \
    int PMPI_File_##name(MPI_File fh, ctype buf, cnt_t count, MPI_Datatype datatype, last_t last)  \
    {                                                                                              \
        return body(fh, "MPI_File_" #name, write, (void *)buf, count, datatype, last);             \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

FILE_SHARED(read_shared, shared_access, 0, void *, int, MPI_Status *)
FILE_SHARED(read_shared_c, shared_access, 0, void *, MPI_Count, MPI_Status *)
FILE_SHARED(write_shared, shared_access, 1, const void *, int, MPI_Status *)
FILE_SHARED(write_shared_c, shared_access, 1, const void *, MPI_Count, MPI_Status *)
FILE_SHARED(iread_shared, ishared_access, 0, void *, int, MPI_Request *)
FILE_SHARED(iread_shared_c, ishared_access, 0, void *, MPI_Count, MPI_Request *)
FILE_SHARED(iwrite_shared, ishared_access, 1, const void *, int, MPI_Request *)
FILE_SHARED(iwrite_shared_c, ishared_access, 1, const void *, MPI_Count, MPI_Request *)
FILE_SHARED(read_ordered, ordered_access, 0, void *, int, MPI_Status *)
FILE_SHARED(read_ordered_c, ordered_access, 0, void *, MPI_Count, MPI_Status *)
FILE_SHARED(write_ordered, ordered_access, 1, const void *, int, MPI_Status *)
FILE_SHARED(write_ordered_c, ordered_access, 1, const void *, MPI_Count, MPI_Status *)

/* MPI_File_seek_shared: collective, the same offset and whence everywhere. */
int PMPI_File_seek_shared(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek_shared";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int64_t v[4] = {offset, -offset, whence, -(int64_t)whence};
    PMPI_Allreduce(MPI_IN_PLACE, v, 4, MPI_INT64_T, MPI_MAX, f->comm);
    int cls = v[0] != -v[1] || v[2] != -v[3] ? MPI_ERR_NOT_SAME : MPI_SUCCESS;
    if (cls == MPI_SUCCESS && (f->amode & MPI_MODE_SEQUENTIAL))
        cls = MPI_ERR_UNSUPPORTED_OPERATION;
    PMPI_Barrier(f->comm);
    int64_t target = 0;
    if (cls == MPI_SUCCESS && f->rank == 0) {
        int64_t cur = (int64_t)__atomic_load_n(f->shared_cell, __ATOMIC_SEQ_CST);
        cls = mpii_file_seek_target(f, cur, offset, whence, &target);
        if (cls == MPI_SUCCESS)
            __atomic_store_n(f->shared_cell, (uint64_t)target, __ATOMIC_SEQ_CST);
    }
    PMPI_Bcast(&cls, 1, MPI_INT, 0, f->comm);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}
MPII_WEAK(MPI_File_seek_shared, PMPI_File_seek_shared)

/* MPI_File_get_position_shared: the shared pointer, in etypes. */
int PMPI_File_get_position_shared(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position_shared";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!offset)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    int64_t v = 0;
    int cls = shared_fetch_add(f, 0, &v);
    if (cls != MPI_SUCCESS)
        return MPII_ERR_FILE(fh, cls, fn);
    *offset = v;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_position_shared, PMPI_File_get_position_shared)

/* ---------------------------------------------------------------- split collectives */

static int split_begin(MPI_File fh, const char *fn, int write, int kind, MPI_Offset offset,
                       void *buf, int64_t count, MPI_Datatype type)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (f->split_active)
        return MPII_ERRF_FILE(fh, MPI_ERR_OTHER, fn, "a split collective is already active");
    MPI_Request req = MPI_REQUEST_NULL;
    int rc;
    if (kind == 2) {
        int64_t n = 0;
        int cls = shared_check(f, write, type, count, &n);
        int64_t pos = ordered_position(f, n, &cls);
        rc = mpii_file_async_start(f, write, pos, buf, count, type, 1, cls, 0, &req);
        if (rc != MPI_SUCCESS)
            rc = MPII_ERR_FILE(fh, rc, fn);
    } else {
        rc = mpii_file_iaccess(fh, fn, write, kind == 0 ? MPII_AT_OFFSET : MPII_AT_INDIVIDUAL, 1,
                               offset, buf, count, type, &req);
    }
    if (rc == MPI_SUCCESS) {
        f->split_active = 1;
        f->split_req = req;
    }
    return rc;
}

static int split_end(MPI_File fh, const char *fn, MPI_Status *status)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!f->split_active)
        return MPII_ERRF_FILE(fh, MPI_ERR_OTHER, fn, "no split collective is active");
    f->split_active = 0;
    int cls = mpii_file_async_finish(&f->split_req, status ? status : MPI_STATUS_IGNORE);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

#define FILE_SPLIT_AT(name, write, ctype, cnt_t)                                                   \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, ctype buf, cnt_t count,                   \
                         MPI_Datatype datatype)                                                    \
    {                                                                                              \
        return split_begin(fh, "MPI_File_" #name, write, 0, offset, (void *)buf, count, datatype); \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)
#define FILE_SPLIT(name, write, kind, ctype, cnt_t)                                                \
    int PMPI_File_##name(MPI_File fh, ctype buf, cnt_t count, MPI_Datatype datatype)               \
    {                                                                                              \
        return split_begin(fh, "MPI_File_" #name, write, kind, 0, (void *)buf, count, datatype);   \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)
#define FILE_SPLIT_END(name, ctype)                                                                \
    int PMPI_File_##name(MPI_File fh, ctype buf, MPI_Status *status)                               \
    {                                                                                              \
        (void)buf;                                                                                 \
        return split_end(fh, "MPI_File_" #name, status);                                           \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

FILE_SPLIT_AT(read_at_all_begin, 0, void *, int)
FILE_SPLIT_AT(read_at_all_begin_c, 0, void *, MPI_Count)
FILE_SPLIT_AT(write_at_all_begin, 1, const void *, int)
FILE_SPLIT_AT(write_at_all_begin_c, 1, const void *, MPI_Count)
FILE_SPLIT(read_all_begin, 0, 1, void *, int)
FILE_SPLIT(read_all_begin_c, 0, 1, void *, MPI_Count)
FILE_SPLIT(write_all_begin, 1, 1, const void *, int)
FILE_SPLIT(write_all_begin_c, 1, 1, const void *, MPI_Count)
FILE_SPLIT(read_ordered_begin, 0, 2, void *, int)
FILE_SPLIT(read_ordered_begin_c, 0, 2, void *, MPI_Count)
FILE_SPLIT(write_ordered_begin, 1, 2, const void *, int)
FILE_SPLIT(write_ordered_begin_c, 1, 2, const void *, MPI_Count)
FILE_SPLIT_END(read_at_all_end, void *)
FILE_SPLIT_END(write_at_all_end, const void *)
FILE_SPLIT_END(read_all_end, void *)
FILE_SPLIT_END(write_all_end, const void *)
FILE_SPLIT_END(read_ordered_end, void *)
FILE_SPLIT_END(write_ordered_end, const void *)
