/* file_io.c — the data path of one process (MPI-4.0 14.4): memory side, pread/pwrite of
 * the view's runs, atomic mode, and the data access calls with explicit offsets and
 * individual file pointers, blocking and nonblocking (the shared-pointer, ordered and
 * split forms are in file_shared.c; the collective exchange in file_coll.c).
 *
 * Memory side: an access moves a "stream", the bytes of count x datatype in the view's
 * representation. A contiguous native datatype is its own stream (the user buffer goes
 * to pread/pwrite directly); otherwise the data is packed into (or unpacked from) one
 * temporary stream by the dt engine: dt_pack/dt_unpack for native and internal,
 * dt_pack_external/dt_unpack_external for external32, the user's conversion functions
 * for a representation from MPI_Register_datarep (NULL functions: native bytes).
 *
 * File side: mpii_view_runs yields the file runs of the stream range. Writes are one
 * pwrite per run (retried until complete), so bytes in the view's holes are never
 * written; a run that cannot be written completely (ENOSPC, EFBIG, EIO...) ends the
 * access with its class and the status counts the bytes that did reach the file. Reads
 * gather runs that lie close together (gaps below SIEVE_GAP, spans up to SIEVE_MAX) into
 * one pread of the span (data sieving) and copy the runs out; a read stops at the end of
 * the file, and the status counts what was read.
 *
 * Atomic mode (MPI_File_set_atomicity): each independent access holds an fcntl byte-range
 * lock (shared for reads, exclusive for writes) over the span of its runs, so concurrent
 * accesses that overlap are serialised; collective writes lock each aggregator's range.
 *
 * Nonblocking calls (MPI_File_iread* / iwrite*) check their arguments here and hand the
 * transfer to file_async.c's I/O worker. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mpi/file_impl.h"

#define SIEVE_GAP (64 << 10)
#define SIEVE_MAX (4 << 20)

/* ---------------------------------------------------------------- memory side */

int64_t mpii_file_data_size(const mpii_file_t *f, MPI_Datatype type, int64_t count, int *cls)
{
    if (count < 0) {
        *cls = MPI_ERR_COUNT;
        return -1;
    }
    if (mpii_type_check_comm(type) != MPI_SUCCESS) {
        *cls = MPI_ERR_TYPE;
        return -1;
    }
    dt_t *t = mpii_type_get(type);
    int64_t each = f->view.rep == MPII_REP_EXTERNAL32 ? dt_ext32_size(t) : dt_size(t);
    int64_t n = count * each;
    if (n % f->view.esize != 0) {
        *cls = MPI_ERR_TYPE; /* not a whole number of etypes */
        return -1;
    }
    *cls = MPI_SUCCESS;
    return n;
}

static int user_convert(const mpii_file_t *f, int write, void *ubuf, MPI_Datatype type,
                        int64_t count, void *fbuf)
{
    const mpii_datarep_t *d = f->view.user_rep;
    if (write ? d->write_fn_c : d->read_fn_c)
        return (write ? d->write_fn_c : d->read_fn_c)(ubuf, type, count, fbuf, 0, d->extra);
    MPI_Datarep_conversion_function *fn = write ? d->write_fn : d->read_fn;
    if (count > INT32_MAX)
        return MPI_ERR_COUNT;
    return fn(ubuf, type, (int)count, fbuf, 0, d->extra);
}

/* 1 when the stream of count x type is the user buffer's bytes as they are. */
static int stream_is_buffer(const mpii_file_t *f, dt_t *t, int64_t count)
{
    if (f->view.rep == MPII_REP_EXTERNAL32)
        return 0;
    if (f->view.rep == MPII_REP_USER &&
        (f->view.user_rep->read_fn || f->view.user_rep->read_fn_c || f->view.user_rep->write_fn ||
         f->view.user_rep->write_fn_c))
        return 0;
    return dt_is_contig(t, count);
}

int mpii_file_stream_out(const mpii_file_t *f, const void *buf, int64_t count, MPI_Datatype type,
                         int64_t n, const char **stream, int *owned)
{
    dt_t *t = mpii_type_get(type);
    *owned = 0;
    if (n == 0) {
        *stream = buf;
        return MPI_SUCCESS;
    }
    if (stream_is_buffer(f, t, count)) {
        *stream = (const char *)buf + dt_true_lb(t);
        return MPI_SUCCESS;
    }
    char *s = malloc((size_t)n);
    if (!s)
        return MPI_ERR_NO_MEM;
    int rc = FMPL_SUCCESS;
    if (f->view.rep == MPII_REP_EXTERNAL32)
        rc = dt_pack_external(t, count, buf, 0, n, s);
    else if (f->view.rep == MPII_REP_USER &&
             (f->view.user_rep->write_fn || f->view.user_rep->write_fn_c)) {
        int urc = user_convert(f, 1, (void *)buf, type, count, s);
        if (urc != MPI_SUCCESS) {
            free(s);
            return MPI_ERR_CONVERSION;
        }
    } else
        rc = dt_pack(t, count, buf, 0, n, s);
    if (rc != FMPL_SUCCESS) {
        free(s);
        return mpii_err_from_fmpl(rc);
    }
    *stream = s;
    *owned = 1;
    return MPI_SUCCESS;
}

int mpii_file_stream_in_buf(const mpii_file_t *f, void *buf, int64_t count, MPI_Datatype type,
                            int64_t n, char **stream, int *owned)
{
    dt_t *t = mpii_type_get(type);
    *owned = 0;
    if (n == 0) {
        *stream = buf;
        return MPI_SUCCESS;
    }
    if (stream_is_buffer(f, t, count)) {
        *stream = (char *)buf + dt_true_lb(t);
        return MPI_SUCCESS;
    }
    *stream = malloc((size_t)n);
    if (!*stream)
        return MPI_ERR_NO_MEM;
    *owned = 1;
    return MPI_SUCCESS;
}

int mpii_file_stream_in_done(const mpii_file_t *f, void *buf, int64_t count, MPI_Datatype type,
                             int64_t got, char *stream, int owned)
{
    if (!owned)
        return MPI_SUCCESS;
    dt_t *t = mpii_type_get(type);
    int rc = FMPL_SUCCESS, cls = MPI_SUCCESS;
    if (got > 0) {
        if (f->view.rep == MPII_REP_EXTERNAL32)
            rc = dt_unpack_external(t, count, buf, 0, got, stream);
        else if (f->view.rep == MPII_REP_USER &&
                 (f->view.user_rep->read_fn || f->view.user_rep->read_fn_c)) {
            int64_t each = dt_size(t);
            if (each > 0 && user_convert(f, 0, buf, type, got / each, stream) != MPI_SUCCESS)
                cls = MPI_ERR_CONVERSION;
        } else
            rc = dt_unpack(t, count, buf, 0, got, stream);
    }
    free(stream);
    return rc != FMPL_SUCCESS ? mpii_err_from_fmpl(rc) : cls;
}

/* ---------------------------------------------------------------- file side */

int mpii_file_pwrite_all(mpii_file_t *f, const char *p, int64_t len, int64_t off, int64_t *wrote)
{
    int64_t dummy;
    if (!wrote)
        wrote = &dummy;
    *wrote = 0;
    while (len > 0) {
        ssize_t w = pwrite(f->fd, p, (size_t)BASE_MIN(len, (int64_t)1 << 30), off);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return mpii_file_errno_class(errno);
        }
        if (w == 0)
            return MPI_ERR_NO_SPACE;
        p += w;
        off += w;
        len -= w;
        *wrote += w;
    }
    return MPI_SUCCESS;
}

int mpii_file_pread_all(mpii_file_t *f, char *p, int64_t len, int64_t off, int64_t *got)
{
    *got = 0;
    while (len > 0) {
        ssize_t r = pread(f->fd, p, (size_t)BASE_MIN(len, (int64_t)1 << 30), off);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            return mpii_file_errno_class(errno);
        }
        if (r == 0)
            break; /* end of file */
        p += r;
        off += r;
        len -= r;
        *got += r;
    }
    return MPI_SUCCESS;
}

int mpii_file_lock(mpii_file_t *f, int type, int64_t off, int64_t len)
{
    struct flock fl = {.l_type = (short)type, .l_whence = SEEK_SET, .l_start = off, .l_len = len};
    while (fcntl(f->fd, F_SETLKW, &fl) != 0) {
        if (errno != EINTR)
            return mpii_file_errno_class(errno);
    }
    return MPI_SUCCESS;
}

/* The runs of an access, collected. */
typedef struct run_list {
    mpii_frun_t *r;
    int64_t *spos;
    int64_t n, cap;
} run_list_t;

static int run_collect(void *arg, int64_t off, int64_t len, int64_t spos)
{
    run_list_t *l = arg;
    if (l->n == l->cap) {
        int64_t cap = l->cap ? l->cap * 2 : 64;
        mpii_frun_t *r = realloc(l->r, (size_t)cap * sizeof *r);
        if (!r)
            return MPI_ERR_NO_MEM;
        l->r = r;
        int64_t *s = realloc(l->spos, (size_t)cap * sizeof *s);
        if (!s)
            return MPI_ERR_NO_MEM;
        l->spos = s;
        l->cap = cap;
    }
    l->r[l->n].off = off;
    l->r[l->n].len = len;
    l->spos[l->n] = spos;
    l->n++;
    return 0;
}

/* Reads runs [i, j) (close together) with one pread of their span into the stream. */
static int sieve_read(mpii_file_t *f, const run_list_t *l, int64_t i, int64_t j, char *stream,
                      int64_t pos, char *sieve, int64_t *done, int *eof)
{
    int64_t start = l->r[i].off, end = l->r[j - 1].off + l->r[j - 1].len, got = 0;
    int rc = mpii_file_pread_all(f, sieve, end - start, start, &got);
    if (rc != MPI_SUCCESS)
        return rc;
    for (int64_t k = i; k < j; k++) {
        int64_t rel = l->r[k].off - start;
        int64_t avail = BASE_MAX((int64_t)0, BASE_MIN(l->r[k].len, got - rel));
        memcpy(stream + (l->spos[k] - pos), sieve + rel, (size_t)avail);
        *done += avail;
        if (avail < l->r[k].len) {
            *eof = 1;
            break;
        }
    }
    return MPI_SUCCESS;
}

int mpii_file_stream_indep(mpii_file_t *f, int write, int64_t pos, char *stream, int64_t n,
                           int64_t *done)
{
    *done = 0;
    if (n == 0)
        return MPI_SUCCESS;
    run_list_t l = {0};
    int rc = mpii_view_runs(&f->view, pos, n, run_collect, &l);
    if (rc != 0) {
        free(l.r);
        free(l.spos);
        return rc;
    }
    int64_t lo = INT64_MAX, hi = 0;
    for (int64_t i = 0; i < l.n; i++) {
        lo = BASE_MIN(lo, l.r[i].off);
        hi = BASE_MAX(hi, l.r[i].off + l.r[i].len);
    }
    if (f->atomic && (rc = mpii_file_lock(f, write ? F_WRLCK : F_RDLCK, lo, hi - lo)) != 0) {
        free(l.r);
        free(l.spos);
        return rc;
    }
    char *sieve = NULL;
    int eof = 0;
    for (int64_t i = 0; i < l.n && rc == MPI_SUCCESS && !eof;) {
        if (write) {
            int64_t wrote = 0;
            rc =
                mpii_file_pwrite_all(f, stream + (l.spos[i] - pos), l.r[i].len, l.r[i].off, &wrote);
            *done += wrote;
            i++;
            continue;
        }
        /* reads: a group of runs close together */
        int64_t j = i + 1;
        while (j < l.n && l.r[j].off >= l.r[j - 1].off + l.r[j - 1].len &&
               l.r[j].off - (l.r[j - 1].off + l.r[j - 1].len) <= SIEVE_GAP &&
               l.r[j].off + l.r[j].len - l.r[i].off <= SIEVE_MAX)
            j++;
        if (j - i == 1) {
            int64_t got = 0;
            rc = mpii_file_pread_all(f, stream + (l.spos[i] - pos), l.r[i].len, l.r[i].off, &got);
            *done += got;
            eof = got < l.r[i].len;
        } else {
            if (!sieve && !(sieve = malloc(SIEVE_MAX)))
                rc = MPI_ERR_NO_MEM;
            else
                rc = sieve_read(f, &l, i, j, stream, pos, sieve, done, &eof);
        }
        i = j;
    }
    free(sieve);
    if (f->atomic)
        mpii_file_lock(f, F_UNLCK, lo, hi - lo);
    free(l.r);
    free(l.spos);
    return rc;
}

int mpii_file_indep(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                    MPI_Datatype type, int64_t *done)
{
    int cls;
    *done = 0;
    int64_t n = mpii_file_data_size(f, type, count, &cls);
    if (n < 0)
        return cls;
    char *stream;
    int owned;
    if (write)
        cls = mpii_file_stream_out(f, buf, count, type, n, (const char **)&stream, &owned);
    else
        cls = mpii_file_stream_in_buf(f, buf, count, type, n, &stream, &owned);
    if (cls != MPI_SUCCESS)
        return cls;
    cls = mpii_file_stream_indep(f, write, pos, stream, n, done);
    if (write) {
        if (owned)
            free(stream);
    } else {
        int c2 = mpii_file_stream_in_done(f, buf, count, type, *done, stream, owned);
        if (cls == MPI_SUCCESS)
            cls = c2;
    }
    return cls;
}

void mpii_file_status(const mpii_file_t *f, MPI_Status *status, MPI_Datatype type, int64_t n)
{
    if (status == MPI_STATUS_IGNORE || !status)
        return;
    dt_t *t = mpii_type_get(type);
    int64_t mem = n;
    if (t && f->view.rep == MPII_REP_EXTERNAL32 && dt_ext32_size(t) > 0)
        mem = n / dt_ext32_size(t) * dt_size(t) +
              BASE_MIN(n % dt_ext32_size(t), dt_size(t)); /* whole elements, then the rest */
    status->MPI_SOURCE = MPI_ANY_SOURCE;
    status->MPI_TAG = MPI_ANY_TAG;
    status->MPI_ERROR = MPI_SUCCESS;
    status->fmpl_cancelled = 0;
    status->fmpl_count = mem;
}

/* ---------------------------------------------------------------- the access calls */

#define AT_OFFSET MPII_AT_OFFSET
#define AT_INDIVIDUAL MPII_AT_INDIVIDUAL

/* The checks of every access call: *n the stream bytes; returns a class. */
static int access_check(const mpii_file_t *f, int write, int where, MPI_Offset offset,
                        int64_t count, MPI_Datatype type, int64_t *n)
{
    int cls = MPI_SUCCESS;
    *n = mpii_file_data_size(f, type, count, &cls);
    if (cls == MPI_SUCCESS && write && (f->amode & MPI_MODE_RDONLY))
        cls = MPI_ERR_READ_ONLY;
    else if (cls == MPI_SUCCESS && !write && (f->amode & MPI_MODE_WRONLY))
        cls = MPI_ERR_ACCESS;
    else if (cls == MPI_SUCCESS && (f->amode & MPI_MODE_SEQUENTIAL))
        cls = MPI_ERR_UNSUPPORTED_OPERATION;
    else if (cls == MPI_SUCCESS && where == AT_OFFSET && offset < 0)
        cls = MPI_ERR_ARG;
    return cls;
}

/* The common body of read/write at an explicit offset or the individual pointer,
 * independent or collective. offset in etypes (AT_OFFSET). */
int mpii_file_access(MPI_File fh, const char *fn, int write, int where, int coll, MPI_Offset offset,
                     void *buf, int64_t count, MPI_Datatype type, MPI_Status *status)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    int64_t n;
    int cls = access_check(f, write, where, offset, count, type, &n);
    int64_t pos = cls == MPI_SUCCESS ? (where == AT_OFFSET ? offset : f->fp) * f->view.esize : 0;
    int64_t done = 0;
    if (coll)
        cls = mpii_file_coll(f, write, pos, buf, count, type, cls, &done);
    else if (cls == MPI_SUCCESS)
        cls = mpii_file_indep(f, write, pos, buf, count, type, &done);
    if (where == AT_INDIVIDUAL && n > 0)
        f->fp += done / f->view.esize;
    mpii_file_status(f, status, type, done);
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}

int mpii_file_iaccess(MPI_File fh, const char *fn, int write, int where, int coll,
                      MPI_Offset offset, void *buf, int64_t count, MPI_Datatype type,
                      MPI_Request *request)
{
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!request)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    int64_t n;
    int cls = access_check(f, write, where, offset, count, type, &n);
    int64_t pos = cls == MPI_SUCCESS ? (where == AT_OFFSET ? offset : f->fp) * f->view.esize : 0;
    if (where == AT_INDIVIDUAL && cls == MPI_SUCCESS)
        f->fp += n / f->view.esize; /* the amount requested, at the call */
    int rc = mpii_file_async_start(f, write, pos, buf, count, type, coll, cls, 1, request);
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, rc, fn);
}

#define FILE_AT(name, write, coll, ctype, cnt_t)                                                   \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, ctype buf, cnt_t count,                   \
                         MPI_Datatype datatype, MPI_Status *status)                                \
    {                                                                                              \
        return mpii_file_access(fh, "MPI_File_" #name, write, AT_OFFSET, coll, offset,             \
                                (void *)buf, count, datatype, status);                             \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

#define FILE_IND(name, write, coll, ctype, cnt_t)                                                  \
    int PMPI_File_##name(MPI_File fh, ctype buf, cnt_t count, MPI_Datatype datatype,               \
                         MPI_Status *status)                                                       \
    {                                                                                              \
        return mpii_file_access(fh, "MPI_File_" #name, write, AT_INDIVIDUAL, coll, 0, (void *)buf, \
                                count, datatype, status);                                          \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

#define FILE_IAT(name, write, coll, ctype, cnt_t)                                                  \
    int PMPI_File_##name(MPI_File fh, MPI_Offset offset, ctype buf, cnt_t count,                   \
                         MPI_Datatype datatype, MPI_Request *request)                              \
    {                                                                                              \
        return mpii_file_iaccess(fh, "MPI_File_" #name, write, AT_OFFSET, coll, offset,            \
                                 (void *)buf, count, datatype, request);                           \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

#define FILE_IIND(name, write, coll, ctype, cnt_t)                                                 \
    int PMPI_File_##name(MPI_File fh, ctype buf, cnt_t count, MPI_Datatype datatype,               \
                         MPI_Request *request)                                                     \
    {                                                                                              \
        return mpii_file_iaccess(fh, "MPI_File_" #name, write, AT_INDIVIDUAL, coll, 0,             \
                                 (void *)buf, count, datatype, request);                           \
    }                                                                                              \
    MPII_WEAK(MPI_File_##name, PMPI_File_##name)

FILE_AT(read_at, 0, 0, void *, int)
FILE_AT(read_at_c, 0, 0, void *, MPI_Count)
FILE_AT(write_at, 1, 0, const void *, int)
FILE_AT(write_at_c, 1, 0, const void *, MPI_Count)
FILE_AT(read_at_all, 0, 1, void *, int)
FILE_AT(read_at_all_c, 0, 1, void *, MPI_Count)
FILE_AT(write_at_all, 1, 1, const void *, int)
FILE_AT(write_at_all_c, 1, 1, const void *, MPI_Count)
FILE_IND(read, 0, 0, void *, int)
FILE_IND(read_c, 0, 0, void *, MPI_Count)
FILE_IND(write, 1, 0, const void *, int)
FILE_IND(write_c, 1, 0, const void *, MPI_Count)
FILE_IND(read_all, 0, 1, void *, int)
FILE_IND(read_all_c, 0, 1, void *, MPI_Count)
FILE_IND(write_all, 1, 1, const void *, int)
FILE_IND(write_all_c, 1, 1, const void *, MPI_Count)
FILE_IAT(iread_at, 0, 0, void *, int)
FILE_IAT(iread_at_c, 0, 0, void *, MPI_Count)
FILE_IAT(iwrite_at, 1, 0, const void *, int)
FILE_IAT(iwrite_at_c, 1, 0, const void *, MPI_Count)
FILE_IAT(iread_at_all, 0, 1, void *, int)
FILE_IAT(iread_at_all_c, 0, 1, void *, MPI_Count)
FILE_IAT(iwrite_at_all, 1, 1, const void *, int)
FILE_IAT(iwrite_at_all_c, 1, 1, const void *, MPI_Count)
FILE_IIND(iread, 0, 0, void *, int)
FILE_IIND(iread_c, 0, 0, void *, MPI_Count)
FILE_IIND(iwrite, 1, 0, const void *, int)
FILE_IIND(iwrite_c, 1, 0, const void *, MPI_Count)
FILE_IIND(iread_all, 0, 1, void *, int)
FILE_IIND(iread_all_c, 0, 1, void *, MPI_Count)
FILE_IIND(iwrite_all, 1, 1, const void *, int)
FILE_IIND(iwrite_all_c, 1, 1, const void *, MPI_Count)
