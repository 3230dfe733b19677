/* file_view.c — file views (MPI-4.0 14.3) and individual file pointers (14.4.3).
 *
 * A view is (disp, etype, filetype, datarep). The filetype is flattened once, at
 * MPI_File_set_view, by the dt engine's segment iterator: one tile's data as a list of
 * (offset, length) runs in stream order, adjacent runs merged, with prefix sums of their
 * lengths. The view is then a stream of data bytes: stream byte p lies in tile
 * p / tile_size at disp + tile * tile_extent + the run holding p % tile_size (a binary
 * search over the prefix sums). mpii_view_runs walks a range of the stream and yields its
 * file runs, merging runs that touch across run and tile boundaries; nothing outside the
 * filetype's runs is ever part of an access, so the bytes in the view's holes are never
 * touched by writes.
 *
 * MPI requires etype and filetype displacements to be non-negative and monotonically
 * nondecreasing, and without overlaps in a file opened for writing; set_view checks
 * that (a violation is MPI_ERR_TYPE). Without overlaps a stream range maps to increasing
 * file offsets, which the two-phase path (file_coll.c) relies on; a read-only file's
 * view with overlaps is marked (view.overlap) and read process by process.
 *
 * Data representations: the file holds the stream in the view's representation. For
 * external32 and user representations the runs are the filetype's native layout, so the
 * representation must keep the sizes of the filetype's elements (true for every
 * fixed-size C type on LP64 Linux except long double): otherwise set_view fails with
 * MPI_ERR_UNSUPPORTED_DATAREP naming the reason. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpi/file_impl.h"

/* A base address for flattening (the dt iterator yields addresses; this one is not NULL
 * so no null-pointer arithmetic happens, and offsets are address - base). */
#define FLAT_BASE ((uintptr_t)1 << 44)

void mpii_view_free(mpii_view_t *v)
{
    free(v->runs);
    free(v->prefix);
    dt_release(v->etype_dt);
    dt_release(v->ftype_dt);
    memset(v, 0, sizeof *v);
}

/* Flattens one tile of t into runs; returns a class. */
static int view_flatten(mpii_view_t *v, dt_t *t)
{
    dt_iter_t it;
    if (dt_iter_init(&it, t, 1, (void *)FLAT_BASE, 0) != FMPL_SUCCESS)
        return MPI_ERR_TYPE;
    int64_t cap = 16, n = 0;
    mpii_frun_t *runs = malloc((size_t)cap * sizeof *runs);
    if (!runs)
        return MPI_ERR_NO_MEM;
    struct iovec seg[64];
    while (!dt_iter_done(&it)) {
        int ns = 0;
        int64_t nb = 0;
        if (dt_iter_next(&it, seg, 64, INT64_MAX / 2, &ns, &nb) != FMPL_SUCCESS || ns == 0)
            break;
        for (int i = 0; i < ns; i++) {
            if (seg[i].iov_len == 0)
                continue;
            int64_t off = (int64_t)((uintptr_t)seg[i].iov_base - FLAT_BASE);
            int64_t len = (int64_t)seg[i].iov_len;
            if (n > 0 && runs[n - 1].off + runs[n - 1].len == off) {
                runs[n - 1].len += len;
                continue;
            }
            if (n == cap) {
                cap *= 2;
                mpii_frun_t *r = realloc(runs, (size_t)cap * sizeof *r);
                if (!r) {
                    free(runs);
                    return MPI_ERR_NO_MEM;
                }
                runs = r;
            }
            runs[n].off = off;
            runs[n].len = len;
            n++;
        }
    }
    int64_t *prefix = malloc((size_t)(n ? n : 1) * sizeof *prefix);
    if (!prefix) {
        free(runs);
        return MPI_ERR_NO_MEM;
    }
    int64_t sum = 0;
    for (int64_t i = 0; i < n; i++) {
        prefix[i] = sum;
        sum += runs[i].len;
    }
    v->runs = runs;
    v->prefix = prefix;
    v->nruns = n;
    return MPI_SUCCESS;
}

enum { ORDER_OK, ORDER_OVERLAP, ORDER_BAD };

/* How one tile's runs (and the next tile, extent on) are ordered: ORDER_BAD for a
 * negative or decreasing displacement (or no data, or extent <= 0), ORDER_OVERLAP when a
 * run starts inside the one before. */
static int runs_order(const mpii_frun_t *r, int64_t n, int64_t extent)
{
    if (n == 0 || r[0].off < 0 || extent <= 0)
        return ORDER_BAD;
    int order = ORDER_OK;
    for (int64_t i = 1; i < n; i++) {
        if (r[i].off < r[i - 1].off)
            return ORDER_BAD;
        if (r[i].off < r[i - 1].off + r[i - 1].len)
            order = ORDER_OVERLAP;
    }
    if (r[n - 1].off + r[n - 1].len > extent + r[0].off) /* reaches into the next tile */
        order = ORDER_OVERLAP;
    return order;
}

int mpii_view_set(mpii_file_t *f, int64_t disp, MPI_Datatype etype, MPI_Datatype filetype,
                  const char *datarep)
{
    mpii_view_t nv;
    memset(&nv, 0, sizeof nv);
    if (disp < 0)
        return MPI_ERR_ARG;
    if (mpii_type_check_comm(etype) != MPI_SUCCESS || mpii_type_check_comm(filetype) != MPI_SUCCESS)
        return MPI_ERR_TYPE;
    dt_t *et = mpii_type_get(etype), *ft = mpii_type_get(filetype);
    if (!et || !ft)
        return MPI_ERR_TYPE;
    if (!datarep)
        return MPI_ERR_ARG;
    if (!strcmp(datarep, "native"))
        nv.rep = MPII_REP_NATIVE;
    else if (!strcmp(datarep, "internal"))
        nv.rep = MPII_REP_INTERNAL;
    else if (!strcmp(datarep, "external32"))
        nv.rep = MPII_REP_EXTERNAL32;
    else if ((nv.user_rep = mpii_datarep_find(datarep)) != NULL)
        nv.rep = MPII_REP_USER;
    else
        return MPI_ERR_UNSUPPORTED_DATAREP;
    int64_t esize = dt_size(et), fsize = dt_size(ft);
    if (esize <= 0 || fsize <= 0 || fsize % esize != 0)
        return MPI_ERR_TYPE;
    if (nv.rep == MPII_REP_EXTERNAL32 && (dt_ext32_size(ft) != fsize || dt_ext32_size(et) != esize))
        return MPI_ERR_UNSUPPORTED_DATAREP;
    if (nv.rep == MPII_REP_USER) {
        MPI_Aint e = 0;
        if (dt_kind(et) < 0 ||
            nv.user_rep->extent_fn(etype, &e, nv.user_rep->extra) != MPI_SUCCESS || e != esize)
            return MPI_ERR_UNSUPPORTED_DATAREP;
    }
    int rc = view_flatten(&nv, ft);
    if (rc != MPI_SUCCESS)
        return rc;
    nv.tile_size = fsize;
    nv.tile_extent = dt_extent(ft);
    /* non-negative and nondecreasing; overlaps only in a read-only file */
    int order = runs_order(nv.runs, nv.nruns, nv.tile_extent);
    mpii_view_t ev;
    memset(&ev, 0, sizeof ev);
    if (order != ORDER_BAD && dt_kind(et) < 0) {
        rc = view_flatten(&ev, et);
        if (rc != MPI_SUCCESS) {
            mpii_view_free(&nv);
            return rc;
        }
        order = BASE_MAX(order, runs_order(ev.runs, ev.nruns, dt_extent(et)));
        mpii_view_free(&ev);
    }
    if (order == ORDER_BAD || (order == ORDER_OVERLAP && !(f->amode & MPI_MODE_RDONLY))) {
        mpii_view_free(&nv);
        return MPI_ERR_TYPE;
    }
    nv.overlap = order == ORDER_OVERLAP;
    nv.contig = nv.nruns == 1 && nv.runs[0].len == nv.tile_extent;
    nv.disp = disp;
    nv.etype = etype;
    nv.filetype = filetype;
    nv.esize = esize;
    dt_retain(et);
    dt_retain(ft);
    nv.etype_dt = et;
    nv.ftype_dt = ft;
    snprintf(nv.repname, sizeof nv.repname, "%s", datarep);
    mpii_view_free(&f->view);
    f->view = nv;
    return MPI_SUCCESS;
}

/* The run holding tile byte `within` (0 <= within < tile_size). */
static int64_t view_run_of(const mpii_view_t *v, int64_t within)
{
    int64_t lo = 0, hi = v->nruns - 1;
    while (lo < hi) {
        int64_t mid = (lo + hi + 1) / 2;
        if (v->prefix[mid] <= within)
            lo = mid;
        else
            hi = mid - 1;
    }
    return lo;
}

int64_t mpii_view_offset(const mpii_view_t *v, int64_t pos)
{
    if (v->contig)
        return v->disp + v->runs[0].off + pos;
    int64_t tile = pos / v->tile_size, within = pos % v->tile_size;
    int64_t k = view_run_of(v, within);
    return v->disp + tile * v->tile_extent + v->runs[k].off + (within - v->prefix[k]);
}

/* The stream position of the first view byte at or after file offset off. */
static int64_t view_pos_of(const mpii_view_t *v, int64_t off)
{
    int64_t rel = off - v->disp;
    if (rel <= 0)
        return 0;
    if (v->contig)
        return rel > v->runs[0].off ? rel - v->runs[0].off : 0;
    int64_t tile = rel / v->tile_extent, r = rel % v->tile_extent;
    int64_t pos = tile * v->tile_size;
    for (int64_t i = 0; i < v->nruns; i++) { /* runs are sorted */
        if (v->runs[i].off >= r)
            break;
        pos += BASE_MIN(v->runs[i].len, r - v->runs[i].off);
    }
    return pos;
}

int mpii_view_runs(const mpii_view_t *v, int64_t pos, int64_t n, mpii_run_fn fn, void *arg)
{
    if (n <= 0)
        return 0;
    if (v->contig)
        return fn(arg, v->disp + v->runs[0].off + pos, n, pos);
    int64_t tile = pos / v->tile_size, within = pos % v->tile_size;
    int64_t k = view_run_of(v, within);
    int64_t d = within - v->prefix[k];
    int64_t cur_off = -1, cur_len = 0, cur_pos = pos, spos = pos;
    while (n > 0) {
        int64_t off = v->disp + tile * v->tile_extent + v->runs[k].off + d;
        int64_t len = BASE_MIN(n, v->runs[k].len - d);
        if (cur_len > 0 && cur_off + cur_len == off) {
            cur_len += len;
        } else {
            if (cur_len > 0) {
                int rc = fn(arg, cur_off, cur_len, cur_pos);
                if (rc)
                    return rc;
            }
            cur_off = off;
            cur_len = len;
            cur_pos = spos;
        }
        spos += len;
        n -= len;
        d = 0;
        if (++k == v->nruns) {
            k = 0;
            tile++;
        }
    }
    return cur_len > 0 ? fn(arg, cur_off, cur_len, cur_pos) : 0;
}

/* ---------------------------------------------------------------- MPI calls */

/* MPI_File_set_view: collective; resets both file pointers to 0. */
int PMPI_File_set_view(MPI_File fh, MPI_Offset disp, MPI_Datatype etype, MPI_Datatype filetype,
                       const char *datarep, MPI_Info info)
{
    static const char fn[] = "MPI_File_set_view";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    /* the I/O worker reads the view of pending requests, whose collectives come first */
    mpii_file_async_drain(f);
    int cls = MPI_SUCCESS;
    if (disp == MPI_DISPLACEMENT_CURRENT) {
        if (!(f->amode & MPI_MODE_SEQUENTIAL))
            cls = MPI_ERR_DISP;
        else {
            MPI_Offset sp = 0;
            cls = PMPI_File_get_position_shared(fh, &sp);
            if (cls == MPI_SUCCESS)
                disp = mpii_view_offset(&f->view, sp * f->view.esize);
        }
    } else if (disp < 0) {
        cls = MPI_ERR_ARG;
    }
    if (cls == MPI_SUCCESS && f->split_active)
        cls = MPI_ERR_OTHER;
    int nk;
    if (cls == MPI_SUCCESS && info != MPI_INFO_NULL &&
        PMPI_Info_get_nkeys(info, &nk) != MPI_SUCCESS)
        cls = MPI_ERR_INFO;
    if (cls == MPI_SUCCESS)
        cls = mpii_view_set(f, disp, etype, filetype, datarep);
    if (cls == MPI_SUCCESS && info != MPI_INFO_NULL)
        cls = PMPI_File_set_info(fh, info);
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, f->comm);
    if (cls == MPI_SUCCESS) {
        f->fp = 0;
        cls = mpii_file_shared_reset(f, 0);
    }
    return cls == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_FILE(fh, cls, fn);
}
MPII_WEAK(MPI_File_set_view, PMPI_File_set_view)

/* MPI_File_get_view: the datatypes come back as new handles (predefined as they are). */
int PMPI_File_get_view(MPI_File fh, MPI_Offset *disp, MPI_Datatype *etype, MPI_Datatype *filetype,
                       char *datarep)
{
    static const char fn[] = "MPI_File_get_view";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!disp || !etype || !filetype || !datarep)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    /* new handles for derived types (the user frees them), from the view's own
     * references: the handles given to set_view may have been freed since */
    MPI_Datatype e, t;
    int rc = mpii_type_handle_for(f->view.etype_dt, &e);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_FILE(fh, rc, fn);
    rc = mpii_type_handle_for(f->view.ftype_dt, &t);
    if (rc != MPI_SUCCESS) {
        if (!FMPL_MPI_DT_IS_PREDEF(e))
            PMPI_Type_free(&e);
        return MPII_ERR_FILE(fh, rc, fn);
    }
    *disp = f->view.disp;
    *etype = e;
    *filetype = t;
    snprintf(datarep, MPI_MAX_DATAREP_STRING, "%s", f->view.repname);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_view, PMPI_File_get_view)

/* The view position of the end of the file, in etypes (rounded up). */
static int view_end_etypes(mpii_file_t *f, int64_t *out)
{
    struct stat st;
    if (fstat(f->fd, &st) != 0)
        return MPI_ERR_IO;
    int64_t pos = view_pos_of(&f->view, st.st_size);
    *out = (pos + f->view.esize - 1) / f->view.esize;
    return MPI_SUCCESS;
}

int mpii_file_seek_target(mpii_file_t *f, int64_t cur, int64_t offset, int whence, int64_t *out)
{
    int64_t base = 0;
    if (whence == MPI_SEEK_SET)
        base = 0;
    else if (whence == MPI_SEEK_CUR)
        base = cur;
    else if (whence == MPI_SEEK_END) {
        int rc = view_end_etypes(f, &base);
        if (rc != MPI_SUCCESS)
            return rc;
    } else
        return MPI_ERR_ARG;
    if (base + offset < 0)
        return MPI_ERR_ARG;
    *out = base + offset;
    return MPI_SUCCESS;
}

/* MPI_File_seek: moves the individual file pointer (in etypes of the view). */
int PMPI_File_seek(MPI_File fh, MPI_Offset offset, int whence)
{
    static const char fn[] = "MPI_File_seek";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return MPII_ERR_FILE(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn);
    int64_t np;
    int rc = mpii_file_seek_target(f, f->fp, offset, whence, &np);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_FILE(fh, rc, fn);
    f->fp = np;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_seek, PMPI_File_seek)

int PMPI_File_get_position(MPI_File fh, MPI_Offset *offset)
{
    static const char fn[] = "MPI_File_get_position";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!offset)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return MPII_ERR_FILE(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn);
    *offset = f->fp;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_position, PMPI_File_get_position)

/* MPI_File_get_byte_offset: the absolute byte position of the etype at view offset. */
int PMPI_File_get_byte_offset(MPI_File fh, MPI_Offset offset, MPI_Offset *disp)
{
    static const char fn[] = "MPI_File_get_byte_offset";
    MPII_CHECK_INIT(fn);
    mpii_file_t *f = mpii_file_get(fh);
    if (!f)
        return MPII_ERR_FILE(fh, MPI_ERR_FILE, fn);
    if (!disp || offset < 0)
        return MPII_ERR_FILE(fh, MPI_ERR_ARG, fn);
    if (f->amode & MPI_MODE_SEQUENTIAL)
        return MPII_ERR_FILE(fh, MPI_ERR_UNSUPPORTED_OPERATION, fn);
    *disp = mpii_view_offset(&f->view, offset * f->view.esize);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_File_get_byte_offset, PMPI_File_get_byte_offset)
