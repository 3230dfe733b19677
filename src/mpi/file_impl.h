/* file_impl.h — private to the MPI-IO part of src/mpi (file*.c): the file object and the
 * calls its files share.
 *
 * MPI-IO is our own, over POSIX (no ROMIO):
 *   file.c         open/close/delete, size, info hints, amode, group, error handlers,
 *                  atomicity, sync, data representations (native, internal, external32 and
 *                  MPI_Register_datarep), MPI_File_get_type_extent;
 *   file_view.c    views: the filetype flattened once into (offset, length) runs of one
 *                  tile, the mapping from view byte positions to file runs, individual
 *                  file pointers (seek, get_position, get_byte_offset);
 *   file_io.c      the data path of one process: the memory side (pack/unpack or the user
 *                  buffer itself, datarep conversion), pread/pwrite of the runs, atomic
 *                  mode's byte-range locks; independent and nonblocking calls;
 *   file_coll.c    collective calls: two-phase collective buffering;
 *   file_shared.c  the shared file pointer (a fetch-and-add counter on the vnic), ordered
 *                  and split collective calls;
 *   file_async.c   nonblocking calls and split collectives: an I/O worker thread, the
 *                  requests completed by a progress hook.
 *
 * Positions: a view is a stream of data bytes (the filetype's packed bytes, tile after
 * tile); the file pointers count etypes of that stream. An access of count x datatype at
 * view byte position `pos` covers stream bytes [pos, pos + count * size_in_file), where
 * size_in_file is the datatype's size in the view's data representation.
 *
 * Threading: as the rest of the MPI layer (one thread at a time inside the library),
 * plus file_async.c's I/O worker thread, which runs mpii_file_stream_indep on its jobs
 * and nothing else. */
#ifndef FMPL_MPI_FILE_IMPL_H
#define FMPL_MPI_FILE_IMPL_H

#include <stdint.h>

#include "mpi/mpi_impl.h"

/* One run of file bytes. */
typedef struct mpii_frun {
    int64_t off;
    int64_t len;
} mpii_frun_t;

/* Data representations. */
enum { MPII_REP_NATIVE = 0, MPII_REP_INTERNAL, MPII_REP_EXTERNAL32, MPII_REP_USER };

typedef struct mpii_datarep {
    char name[MPI_MAX_DATAREP_STRING];
    MPI_Datarep_conversion_function *read_fn, *write_fn;
    MPI_Datarep_conversion_function_c *read_fn_c, *write_fn_c;
    MPI_Datarep_extent_function *extent_fn;
    void *extra;
} mpii_datarep_t;

typedef struct mpii_view {
    int64_t disp;       /* bytes */
    MPI_Datatype etype; /* handles as given (derived ones kept alive by dt refs) */
    MPI_Datatype filetype;
    dt_t *etype_dt, *ftype_dt; /* references held by the view */
    int64_t esize;             /* etype size in the file's representation (bytes, >= 1) */
    int64_t tile_size;         /* data bytes of one filetype tile (in file representation) */
    int64_t tile_extent;       /* bytes of file one tile spans */
    mpii_frun_t *runs;         /* [nruns] one tile's runs, offsets from the tile's start */
    int64_t *prefix;           /* [nruns] data bytes before run i */
    int64_t nruns;
    int overlap; /* 1: runs overlap (allowed read-only): no two-phase */
    int contig;  /* 1: the view is one contiguous byte stream from disp + runs[0].off */
    int rep;     /* MPII_REP_* */
    const mpii_datarep_t *user_rep; /* MPII_REP_USER */
    char repname[MPI_MAX_DATAREP_STRING];
} mpii_view_t;

typedef struct mpii_file {
    int handle;
    int fd;
    MPI_Comm comm; /* a duplicate of the open's communicator */
    int rank, size;
    int amode;
    char *path;
    int errh;      /* MPI_Errhandler (a reference) */
    MPI_Info info; /* the hints in use (ours) plus the user's keys */
    int atomic;
    /* hints */
    int cb_nodes; /* aggregators (0: one per host) */
    int64_t cb_buffer_size;
    int cb_read, cb_write; /* 1 enable, 0 disable, 2 automatic */
    int *aggregators;      /* [naggr] ranks of comm that aggregate (file_coll.c) */
    char *cb_buf;          /* an aggregator's window buffer, kept between calls */
    int64_t cb_buf_size;
    int naggr;
    mpii_view_t view;
    int64_t fp; /* individual file pointer, in etypes */
    /* shared file pointer (file_shared.c) */
    uint64_t *shared_cell; /* rank 0: the counter, in the vnic heap */
    int shared_owner;      /* world rank of rank 0 (the vnic peer) */
    vnic_key_t shared_key; /* rank 0's key of the counter */
    /* split collective in progress (file_shared.c): its request (file_async.c) */
    int split_active;
    MPI_Request split_req;
} mpii_file_t;

/* The file behind a handle, or NULL. */
static inline mpii_file_t *mpii_file_get(MPI_File h)
{
    return (mpii_file_t *)mpii_handle_get(FMPL_MPI_KIND_FILE, h);
}
/* Raises code on file fh (its handler; MPI_FILE_NULL's default for no file). */
#define MPII_ERR_FILE(fh, code, fname) mpii_err(FMPL_MPI_KIND_FILE, (fh), (code), (fname))
#define MPII_ERRF_FILE(fh, code, fname, ...)                                                       \
    mpii_errf(FMPL_MPI_KIND_FILE, (fh), (code), (fname), __VA_ARGS__)

/* (file.c) The MPI error class of an errno value of a file operation. */
int mpii_file_errno_class(int err);
/* (file.c) The data representation registered under name, or NULL. */
const mpii_datarep_t *mpii_datarep_find(const char *name);

/* (file_view.c) Sets f's view (no checks of collective agreement); returns a class. */
int mpii_view_set(mpii_file_t *f, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype,
                  const char *datarep);
void mpii_view_free(mpii_view_t *v);
/* The file offset of view byte position pos (pos at a data byte of the stream). */
int64_t mpii_view_offset(const mpii_view_t *v, int64_t pos);
/* Calls fn(arg, file_off, len, stream_pos) for the file runs of stream bytes
 * [pos, pos + n) in stream order, adjacent runs coalesced; stops and returns fn's value
 * when it is not 0. */
typedef int (*mpii_run_fn)(void *arg, int64_t off, int64_t len, int64_t spos);
int mpii_view_runs(const mpii_view_t *v, int64_t pos, int64_t n, mpii_run_fn fn, void *arg);

/* (file_io.c) The bytes `count` x datatype occupy in the file (in the view's
 * representation), or -1 with *cls set. */
int64_t mpii_file_data_size(const mpii_file_t *f, MPI_Datatype type, int64_t count, int *cls);
/* The stream of a write: *stream points to `n` bytes of count x type from buf in the
 * view's representation (the user buffer itself when it is already so; *owned then 0,
 * else a malloc'd copy the caller frees). Returns a class. */
int mpii_file_stream_out(const mpii_file_t *f, const void *buf, int64_t count, MPI_Datatype type,
                         int64_t n, const char **stream, int *owned);
/* A read's stream: a buffer for n bytes (the user buffer when the bytes can land there
 * directly: *owned 0), and the conversion into buf of its first got bytes afterwards. */
int mpii_file_stream_in_buf(const mpii_file_t *f, void *buf, int64_t count, MPI_Datatype type,
                            int64_t n, char **stream, int *owned);
int mpii_file_stream_in_done(const mpii_file_t *f, void *buf, int64_t count, MPI_Datatype type,
                             int64_t got, char *stream, int owned);
/* Independent transfer of stream bytes [pos, pos + n) to/from stream (byte 0 of stream
 * is view position pos): the runs, data sieving for reads, locks in atomic mode. */
int mpii_file_stream_indep(mpii_file_t *f, int write, int64_t pos, char *stream, int64_t n,
                           int64_t *done);
/* Independent access of count x type at view byte position pos; *done = stream bytes
 * transferred. Returns a class (not raised). */
int mpii_file_indep(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                    MPI_Datatype type, int64_t *done);
/* pread/pwrite of all of [off, off+len) (retrying short transfers); a read stops at EOF;
 * *got / *wrote (may be NULL for writes) count the bytes moved, also on an error.
 * Returns a class. */
int mpii_file_pwrite_all(mpii_file_t *f, const char *p, int64_t len, int64_t off, int64_t *wrote);
int mpii_file_pread_all(mpii_file_t *f, char *p, int64_t len, int64_t off, int64_t *got);
/* Atomic mode: an fcntl lock over [off, off+len) (type F_RDLCK / F_WRLCK / F_UNLCK). */
int mpii_file_lock(mpii_file_t *f, int type, int64_t off, int64_t len);
/* Fills status for n stream bytes of type transferred (memory bytes in the count). */
void mpii_file_status(const mpii_file_t *f, MPI_Status *status, MPI_Datatype type, int64_t n);
/* (file_async.c) Starts the nonblocking transfer of count x type at view byte position
 * pos; *request completes when it is done (errors raised on f's handler). Independent
 * (coll 0): lcls is the caller's argument check, returned as it is when not
 * MPI_SUCCESS (the caller raises it). Collective (coll 1): lcls goes into the agreement,
 * never returned. cancellable: MPI_Cancel may take it back before it starts. Returns a
 * class (not raised). */
int mpii_file_async_start(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                          MPI_Datatype type, int coll, int lcls, int cancellable,
                          MPI_Request *request);
/* Waits for such a request, frees it and returns its class (not raised); *status its
 * status (may be MPI_STATUS_IGNORE). For the split collectives' _end. */
int mpii_file_async_finish(MPI_Request *request, MPI_Status *status);
/* Waits until every request on f has completed (MPI_File_close, set_view). */
void mpii_file_async_drain(const mpii_file_t *f);
/* Stops the worker (MPI_Finalize). */
void mpii_file_async_finalize(void);

/* (file_coll.c) Collective access at view byte position pos (each process its own pos);
 * lcls: this process's argument check (not MPI_SUCCESS: it takes part and the call fails
 * everywhere). *done as mpii_file_indep. Returns a class, the same on every process. */
int mpii_file_coll(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                   MPI_Datatype type, int lcls, int64_t *done);
/* Picks the aggregators at open (collective). */
int mpii_file_aggr_setup(mpii_file_t *f);

/* (file_io.c) The body of every data access call on fh: where is AT_OFFSET (offset in
 * etypes) or AT_INDIVIDUAL; coll 1 for the collective forms. Raises errors. */
enum { MPII_AT_OFFSET, MPII_AT_INDIVIDUAL };
int mpii_file_access(MPI_File fh, const char *fn, int write, int where, int coll, MPI_Offset offset,
                     void *buf, int64_t count, MPI_Datatype type, MPI_Status *status);
/* Its nonblocking form (request) and, request NULL with coll 1, a split collective's
 * begin (the request kept in f->split_req). */
int mpii_file_iaccess(MPI_File fh, const char *fn, int write, int where, int coll,
                      MPI_Offset offset, void *buf, int64_t count, MPI_Datatype type,
                      MPI_Request *request);
/* (file_view.c) The pointer position seek(offset, whence) gives from cur (etypes). */
int mpii_file_seek_target(mpii_file_t *f, int64_t cur, int64_t offset, int whence, int64_t *out);

/* (file_shared.c) The shared pointer's counter at open / close (collective). */
int mpii_file_shared_open(mpii_file_t *f);
void mpii_file_shared_close(mpii_file_t *f);
/* Sets the shared pointer to value (etypes) on every process (collective). */
int mpii_file_shared_reset(mpii_file_t *f, int64_t value);

#endif
