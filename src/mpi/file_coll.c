/* file_coll.c — collective data access (MPI-4.0 14.4.3-5): two-phase collective
 * buffering.
 *
 * Every process first works out its own access (the runs of its stream range through
 * its view, file_view.c) and one allgather shares each process's class and byte range
 * [lo, hi). A local error anywhere (bad arguments, no memory) fails the call on every
 * process with the largest class, so no process is left waiting in a collective.
 *
 * When the ranges do not interleave (each process's bytes lie apart from the others'),
 * collective buffering has nothing to merge: each process does its own large pread /
 * pwrite (file_io.c), in parallel. When they interleave (and romio_cb_read / write are
 * not "disable"; "enable" forces two-phase), the two phases are:
 *
 *   1. The range [min lo, max hi) is cut into one contiguous file domain per aggregator
 *      (one process per host by default, the cb_nodes hint otherwise; chosen at open by
 *      mpii_file_aggr_setup). Each domain is handled in rounds of cb_buffer_size bytes.
 *   2. Per round, the processes tell each aggregator which pieces (offset, length) of its
 *      window they access (an alltoall of counts and an alltoallv of the pieces), then
 *      the data moves through the collective engine (alltoallv, large-count form): for a
 *      write from the processes' streams to the aggregators, which place it in a window
 *      buffer and write the union of the pieces with one pwrite per maximal contiguous
 *      extent (never a byte outside the pieces: no read-modify-write, so holes between
 *      the processes' views are left alone); for a read the aggregator reads the span of
 *      the pieces with one pread and sends each process its pieces.
 *
 * A process's pieces for one aggregator and round are consecutive in its stream (views
 * are monotone), so the stream itself is the alltoallv buffer, without copies. On the
 * aggregator, when each source's pieces form one extent and the extents do not overlap,
 * the data is received into (or sent from) the window buffer directly; otherwise it goes
 * through a staging buffer and memcpy.
 *
 * The aggregator's window buffer (cb_buffer_size bytes) is kept with the file from one
 * collective call to the next, so its pages are not faulted in again each time.
 *
 * Atomic mode: each aggregator holds an fcntl lock over its window while it writes. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "mpi/file_impl.h"

/* ---------------------------------------------------------------- aggregators */

int mpii_file_aggr_setup(mpii_file_t *f)
{
    MPI_Comm node;
    int rc = PMPI_Comm_split_type(f->comm, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
    if (rc != MPI_SUCCESS)
        return rc;
    int nrank;
    PMPI_Comm_rank(node, &nrank);
    PMPI_Comm_free(&node);
    int *leader = malloc((size_t)f->size * sizeof *leader);
    f->aggregators = malloc((size_t)f->size * sizeof *f->aggregators);
    if (!leader || !f->aggregators) {
        free(leader);
        return MPI_ERR_NO_MEM;
    }
    int me = nrank == 0;
    PMPI_Allgather(&me, 1, MPI_INT, leader, 1, MPI_INT, f->comm);
    int want = f->cb_nodes, n = 0;
    for (int i = 0; i < f->size && (!want || n < want); i++)
        if (leader[i])
            f->aggregators[n++] = i;
    for (int i = 0; i < f->size && want && n < want; i++)
        if (!leader[i])
            f->aggregators[n++] = i;
    /* keep rank order */
    for (int i = 1; i < n; i++)
        for (int j = i; j > 0 && f->aggregators[j - 1] > f->aggregators[j]; j--) {
            int t = f->aggregators[j];
            f->aggregators[j] = f->aggregators[j - 1];
            f->aggregators[j - 1] = t;
        }
    f->naggr = n;
    free(leader);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- this process's runs */

typedef struct access {
    mpii_frun_t *r;
    int64_t *spos; /* stream position of each run, relative to the access start */
    int64_t n, cap;
    int64_t base; /* the access's view position */
} access_t;

static int access_add(void *arg, int64_t off, int64_t len, int64_t spos)
{
    access_t *a = arg;
    if (a->n == a->cap) {
        int64_t cap = a->cap ? a->cap * 2 : 64;
        mpii_frun_t *r = realloc(a->r, (size_t)cap * sizeof *r);
        if (!r)
            return MPI_ERR_NO_MEM;
        a->r = r;
        int64_t *s = realloc(a->spos, (size_t)cap * sizeof *s);
        if (!s)
            return MPI_ERR_NO_MEM;
        a->spos = s;
        a->cap = cap;
    }
    a->r[a->n].off = off;
    a->r[a->n].len = len;
    a->spos[a->n] = spos - a->base;
    a->n++;
    return 0;
}

/* The pieces of this process's runs inside [ws, we), starting the search at *cursor (runs
 * before it end at or before ws). Returns the piece count, the bytes and the stream
 * position of the first byte; writes the pieces to out when not NULL. */
static int64_t window_pieces(const access_t *a, int64_t *cursor, int64_t ws, int64_t we,
                             int64_t *bytes, int64_t *spos0, int64_t *out)
{
    int64_t i = *cursor, np = 0;
    *bytes = 0;
    *spos0 = 0;
    while (i < a->n && a->r[i].off + a->r[i].len <= ws)
        i++;
    *cursor = i;
    for (; i < a->n && a->r[i].off < we; i++) {
        int64_t s = BASE_MAX(a->r[i].off, ws), e = BASE_MIN(a->r[i].off + a->r[i].len, we);
        if (e <= s)
            continue;
        if (np == 0)
            *spos0 = a->spos[i] + (s - a->r[i].off);
        if (out) {
            out[2 * np] = s;
            out[2 * np + 1] = e - s;
        }
        np++;
        *bytes += e - s;
    }
    return np;
}

/* ---------------------------------------------------------------- two-phase */

typedef struct piece_ref {
    int64_t off, len;
    int64_t at; /* where its data is in the receive/send buffer */
} piece_ref_t;

static int piece_cmp(const void *x, const void *y)
{
    const piece_ref_t *a = x, *b = y;
    return a->off < b->off ? -1 : a->off > b->off;
}

typedef struct twophase {
    mpii_file_t *f;
    int write;
    const access_t *a;
    char *stream;
    int64_t gmin, dsize, cb;
    int64_t *cursor; /* [naggr] */
    int my_aggr;     /* index of this process among the aggregators, or -1 */
    char *wbuf, *stage;
    int64_t stage_cap;
    /* per-round exchange buffers */
    int64_t *cnt_out, *cnt_in;  /* [2 * size]: pieces, bytes */
    MPI_Count *scount, *rcount; /* [size] */
    MPI_Aint *sdisp, *rdisp;    /* [size] */
    int64_t *meta_out, *meta_in;
    int64_t meta_out_cap, meta_in_cap;
    piece_ref_t *refs;
    int64_t refs_cap;
} twophase_t;

static int grow(void **p, int64_t *cap, int64_t need, size_t each)
{
    if (need <= *cap)
        return 0;
    int64_t c = BASE_MAX(need, *cap * 2);
    void *q = realloc(*p, (size_t)c * each);
    if (!q)
        return MPI_ERR_NO_MEM;
    *p = q;
    *cap = c;
    return 0;
}

/* The window of aggregator index ai in round r. */
static void window_of(const twophase_t *t, int ai, int64_t r, int64_t gmax, int64_t *ws,
                      int64_t *we)
{
    int64_t ds = t->gmin + ai * t->dsize, de = BASE_MIN(gmax, ds + t->dsize);
    *ws = BASE_MIN(de, ds + r * t->cb);
    *we = BASE_MIN(de, *ws + t->cb);
}

/* One round. Returns a local class (the caller agrees at the end). */
static int twophase_round(twophase_t *t, int64_t r, int64_t gmax)
{
    mpii_file_t *f = t->f;
    int p = f->size, na = f->naggr, cls = MPI_SUCCESS;
    /* what this process has for each aggregator in this round */
    memset(t->cnt_out, 0, 2 * (size_t)p * sizeof *t->cnt_out);
    int64_t meta_total = 0;
    int64_t *spos0 = calloc((size_t)na, sizeof *spos0);
    if (!spos0)
        return MPI_ERR_NO_MEM; /* fatal for the round: the caller aborts the job's call */
    for (int ai = 0; ai < na; ai++) {
        int64_t ws, we, bytes, c = t->cursor[ai];
        window_of(t, ai, r, gmax, &ws, &we);
        int64_t np = ws < we ? window_pieces(t->a, &c, ws, we, &bytes, &spos0[ai], NULL) : 0;
        if (np == 0)
            bytes = 0;
        t->cnt_out[2 * f->aggregators[ai]] = np;
        t->cnt_out[2 * f->aggregators[ai] + 1] = bytes;
        meta_total += 2 * np;
    }
    if (grow((void **)&t->meta_out, &t->meta_out_cap, meta_total + 1, sizeof(int64_t))) {
        free(spos0);
        return MPI_ERR_NO_MEM;
    }
    int64_t at = 0;
    for (int ai = 0; ai < na; ai++) {
        int64_t ws, we, bytes, s0;
        window_of(t, ai, r, gmax, &ws, &we);
        int dst = f->aggregators[ai];
        t->sdisp[dst] = (MPI_Aint)(at * (int64_t)sizeof(int64_t));
        if (t->cnt_out[2 * dst])
            window_pieces(t->a, &t->cursor[ai], ws, we, &bytes, &s0, t->meta_out + at);
        at += 2 * t->cnt_out[2 * dst];
    }
    PMPI_Alltoall(t->cnt_out, 2, MPI_INT64_T, t->cnt_in, 2, MPI_INT64_T, f->comm);
    /* the pieces go to the aggregators */
    int64_t meta_in_total = 0;
    for (int i = 0; i < p; i++) {
        t->scount[i] = (MPI_Count)(2 * t->cnt_out[2 * i] * (int64_t)sizeof(int64_t));
        if (!t->cnt_out[2 * i])
            t->sdisp[i] = 0;
        t->rcount[i] = (MPI_Count)(2 * t->cnt_in[2 * i] * (int64_t)sizeof(int64_t));
        t->rdisp[i] = (MPI_Aint)(meta_in_total * (int64_t)sizeof(int64_t));
        meta_in_total += 2 * t->cnt_in[2 * i];
    }
    if (grow((void **)&t->meta_in, &t->meta_in_cap, meta_in_total + 1, sizeof(int64_t)))
        cls = MPI_ERR_NO_MEM; /* still take part in the exchange below */
    PMPI_Alltoallv_c(t->meta_out, t->scount, t->sdisp, MPI_BYTE,
                     cls ? t->meta_out : (void *)t->meta_in, t->rcount, t->rdisp, MPI_BYTE,
                     f->comm);
    /* aggregator: where each source's data goes in (write) or comes from (read) */
    int64_t ws = 0, we = 0, total_in = 0, npieces = meta_in_total / 2;
    int direct = 1;
    char *abuf = NULL; /* the aggregator's exchange buffer: wbuf (direct) or stage */
    if (t->my_aggr >= 0) {
        window_of(t, t->my_aggr, r, gmax, &ws, &we);
        if (cls == MPI_SUCCESS &&
            grow((void **)&t->refs, &t->refs_cap, npieces + 1, sizeof(piece_ref_t)))
            cls = MPI_ERR_NO_MEM;
        int64_t k = 0;
        for (int src = 0; src < p && cls == MPI_SUCCESS; src++) {
            int64_t np = t->cnt_in[2 * src], first = k;
            const int64_t *m = t->meta_in + t->rdisp[src] / (MPI_Aint)sizeof(int64_t);
            for (int64_t j = 0; j < np; j++, k++) {
                t->refs[k].off = m[2 * j];
                t->refs[k].len = m[2 * j + 1];
                t->refs[k].at = total_in;
                total_in += m[2 * j + 1];
                if (j > 0 && m[2 * j] != m[2 * j - 2] + m[2 * j - 1])
                    direct = 0;
            }
            (void)first;
        }
        if (cls == MPI_SUCCESS) {
            qsort(t->refs, (size_t)npieces, sizeof *t->refs, piece_cmp);
            for (int64_t k2 = 1; k2 < npieces && direct; k2++)
                if (t->refs[k2].off < t->refs[k2 - 1].off + t->refs[k2 - 1].len)
                    direct = 0; /* overlapping pieces */
            if (!direct && grow((void **)&t->stage, &t->stage_cap, total_in + 1, 1))
                cls = MPI_ERR_NO_MEM;
            abuf = direct ? t->wbuf : t->stage;
        }
    }
    /* data displacements */
    for (int i = 0; i < p; i++) {
        t->rcount[i] = t->scount[i] = 0;
        t->rdisp[i] = t->sdisp[i] = 0;
    }
    for (int ai = 0; ai < na; ai++) {
        int dst = f->aggregators[ai];
        if (t->write) {
            t->scount[dst] = (MPI_Count)t->cnt_out[2 * dst + 1];
            t->sdisp[dst] = (MPI_Aint)spos0[ai];
        } else {
            t->rcount[dst] = (MPI_Count)t->cnt_out[2 * dst + 1];
            t->rdisp[dst] = (MPI_Aint)spos0[ai];
        }
    }
    free(spos0);
    if (t->my_aggr >= 0 && cls == MPI_SUCCESS) {
        int64_t acc = 0;
        const int64_t *m = t->meta_in;
        for (int src = 0; src < p; src++) {
            int64_t np = t->cnt_in[2 * src];
            int64_t disp = np ? (direct ? m[0] - ws : acc) : 0;
            if (t->write) {
                t->rcount[src] = (MPI_Count)t->cnt_in[2 * src + 1];
                t->rdisp[src] = (MPI_Aint)disp;
            } else {
                t->scount[src] = (MPI_Count)t->cnt_in[2 * src + 1];
                t->sdisp[src] = (MPI_Aint)disp;
            }
            acc += t->cnt_in[2 * src + 1];
            m += 2 * np;
        }
    }
    if (t->my_aggr >= 0 && cls != MPI_SUCCESS) { /* take part, move nothing of ours */
        for (int i = 0; i < p; i++) {
            if (t->write)
                t->rcount[i] = 0;
            else
                t->scount[i] = 0;
        }
    }
    /* a read: the aggregator reads the span of its pieces first */
    if (!t->write && t->my_aggr >= 0 && cls == MPI_SUCCESS && npieces > 0) {
        int64_t lo = t->refs[0].off, hi = lo;
        for (int64_t k = 0; k < npieces; k++)
            hi = BASE_MAX(hi, t->refs[k].off + t->refs[k].len);
        int64_t got = 0;
        if (f->atomic)
            mpii_file_lock(f, F_RDLCK, lo, hi - lo);
        cls = mpii_file_pread_all(f, t->wbuf + (lo - ws), hi - lo, lo, &got);
        if (f->atomic)
            mpii_file_lock(f, F_UNLCK, lo, hi - lo);
        if (got < hi - lo)
            memset(t->wbuf + (lo - ws) + got, 0, (size_t)(hi - lo - got));
        if (!direct) /* gather each source's pieces in order */
            for (int64_t k = 0; k < npieces; k++)
                memcpy(t->stage + t->refs[k].at, t->wbuf + (t->refs[k].off - ws),
                       (size_t)t->refs[k].len);
    }
    if (t->write)
        PMPI_Alltoallv_c(t->stream, t->scount, t->sdisp, MPI_BYTE, abuf ? abuf : t->stream,
                         t->rcount, t->rdisp, MPI_BYTE, f->comm);
    else
        PMPI_Alltoallv_c(abuf ? abuf : t->stream, t->scount, t->sdisp, MPI_BYTE, t->stream,
                         t->rcount, t->rdisp, MPI_BYTE, f->comm);
    /* a write: the aggregator writes the union of the pieces */
    if (t->write && t->my_aggr >= 0 && cls == MPI_SUCCESS && npieces > 0) {
        if (!direct)
            for (int64_t k = 0; k < npieces; k++)
                memcpy(t->wbuf + (t->refs[k].off - ws), t->stage + t->refs[k].at,
                       (size_t)t->refs[k].len);
        int64_t lo = t->refs[0].off, hi = lo;
        for (int64_t k = 0; k < npieces; k++)
            hi = BASE_MAX(hi, t->refs[k].off + t->refs[k].len);
        if (f->atomic)
            mpii_file_lock(f, F_WRLCK, lo, hi - lo);
        int64_t s = t->refs[0].off, e = s + t->refs[0].len;
        for (int64_t k = 1; k <= npieces && cls == MPI_SUCCESS; k++) {
            if (k < npieces && t->refs[k].off <= e) {
                e = BASE_MAX(e, t->refs[k].off + t->refs[k].len);
                continue;
            }
            cls = mpii_file_pwrite_all(f, t->wbuf + (s - ws), e - s, s, NULL);
            if (k < npieces) {
                s = t->refs[k].off;
                e = s + t->refs[k].len;
            }
        }
        if (f->atomic)
            mpii_file_lock(f, F_UNLCK, lo, hi - lo);
    }
    return cls;
}

static int twophase(mpii_file_t *f, int write, const access_t *a, char *stream, int64_t gmin,
                    int64_t gmax)
{
    int p = f->size, na = f->naggr;
    twophase_t t;
    memset(&t, 0, sizeof t);
    t.f = f;
    t.write = write;
    t.a = a;
    t.stream = stream;
    t.gmin = gmin;
    t.dsize = (gmax - gmin + na - 1) / na;
    if (t.dsize > 4096) /* domains start at page boundaries where they can */
        t.dsize = (t.dsize + 4095) / 4096 * 4096;
    t.cb = BASE_MIN(f->cb_buffer_size, t.dsize);
    t.my_aggr = -1;
    for (int i = 0; i < na; i++)
        if (f->aggregators[i] == f->rank)
            t.my_aggr = i;
    int cls = MPI_SUCCESS;
    t.cursor = calloc((size_t)na, sizeof *t.cursor);
    t.cnt_out = calloc(2 * (size_t)p, sizeof *t.cnt_out);
    t.cnt_in = calloc(2 * (size_t)p, sizeof *t.cnt_in);
    t.scount = calloc((size_t)p, sizeof *t.scount);
    t.rcount = calloc((size_t)p, sizeof *t.rcount);
    t.sdisp = calloc((size_t)p, sizeof *t.sdisp);
    t.rdisp = calloc((size_t)p, sizeof *t.rdisp);
    if (t.my_aggr >= 0) { /* the window buffer stays with the file for the next call */
        if (f->cb_buf_size < t.cb) {
            free(f->cb_buf);
            f->cb_buf = malloc((size_t)t.cb);
            f->cb_buf_size = f->cb_buf ? t.cb : 0;
        }
        t.wbuf = f->cb_buf;
    }
    if (!t.cursor || !t.cnt_out || !t.cnt_in || !t.scount || !t.rcount || !t.sdisp || !t.rdisp ||
        (t.my_aggr >= 0 && !t.wbuf))
        cls = MPI_ERR_NO_MEM;
    PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, f->comm);
    int64_t rounds = t.dsize > 0 ? (t.dsize + t.cb - 1) / t.cb : 0;
    for (int64_t r = 0; r < rounds && cls == MPI_SUCCESS; r++) {
        int rc = twophase_round(&t, r, gmax);
        if (rc != MPI_SUCCESS)
            cls = rc;
    }
    free(t.cursor);
    free(t.cnt_out);
    free(t.cnt_in);
    free(t.scount);
    free(t.rcount);
    free(t.sdisp);
    free(t.rdisp);
    free(t.stage);
    free(t.meta_out);
    free(t.meta_in);
    free(t.refs);
    return cls;
}

/* ---------------------------------------------------------------- the collective call */

/* Stream bytes of the access that lie before the end of the file (a read's count). */
static int64_t bytes_before_eof(const access_t *a, int64_t fsize)
{
    int64_t got = 0;
    for (int64_t i = 0; i < a->n; i++) {
        if (a->r[i].off + a->r[i].len <= fsize) {
            got += a->r[i].len;
            continue;
        }
        if (a->r[i].off < fsize)
            got += fsize - a->r[i].off;
        break;
    }
    return got;
}

static int range_cmp(const void *x, const void *y)
{
    const int64_t *a = x, *b = y;
    return a[1] < b[1] ? -1 : a[1] > b[1];
}

int mpii_file_coll(mpii_file_t *f, int write, int64_t pos, void *buf, int64_t count,
                   MPI_Datatype type, int lcls, int64_t *done)
{
    mpii_file_async_drain(f); /* its collectives before ours (file_async.c) */
    int cls = lcls;
    *done = 0;
    int64_t n = 0;
    if (cls == MPI_SUCCESS)
        n = mpii_file_data_size(f, type, count, &cls);
    char *stream = NULL;
    int owned = 0;
    access_t a;
    memset(&a, 0, sizeof a);
    a.base = pos;
    if (cls == MPI_SUCCESS) {
        if (write)
            cls = mpii_file_stream_out(f, buf, count, type, n, (const char **)&stream, &owned);
        else
            cls = mpii_file_stream_in_buf(f, buf, count, type, n, &stream, &owned);
    }
    if (cls == MPI_SUCCESS && n > 0) {
        int rc = mpii_view_runs(&f->view, pos, n, access_add, &a);
        if (rc)
            cls = rc;
    }
    /* share {class, lo, hi, rank} */
    int p = f->size;
    int64_t mine[4] = {cls, INT64_MAX, INT64_MIN, f->view.overlap};
    for (int64_t i = 0; cls == MPI_SUCCESS && i < a.n; i++) {
        mine[1] = BASE_MIN(mine[1], a.r[i].off);
        mine[2] = BASE_MAX(mine[2], a.r[i].off + a.r[i].len);
    }
    int64_t *all = malloc(4 * (size_t)p * sizeof *all);
    int rc = all ? PMPI_Allgather(mine, 4, MPI_INT64_T, all, 4, MPI_INT64_T, f->comm)
                 : PMPI_Allreduce(MPI_IN_PLACE, mine, 1, MPI_INT64_T, MPI_MAX, f->comm);
    int agreed = all ? MPI_SUCCESS : (int)(mine[0] ? mine[0] : MPI_ERR_NO_MEM);
    if (rc != MPI_SUCCESS)
        agreed = rc;
    int64_t gmin = INT64_MAX, gmax = INT64_MIN;
    int interleaved = 0, overlap = 0;
    if (all && agreed == MPI_SUCCESS) {
        for (int i = 0; i < p; i++) {
            overlap |= all[4 * i + 3] != 0;
            if (all[4 * i] != MPI_SUCCESS && (agreed == MPI_SUCCESS || all[4 * i] > agreed))
                agreed = (int)all[4 * i];
            if (all[4 * i + 1] < all[4 * i + 2]) {
                gmin = BASE_MIN(gmin, all[4 * i + 1]);
                gmax = BASE_MAX(gmax, all[4 * i + 2]);
            }
        }
        /* interleaved: sorted by lo, some range starts before the previous one ends */
        qsort(all, (size_t)p, 4 * sizeof *all, range_cmp);
        int64_t end = INT64_MIN;
        for (int i = 0; i < p; i++) {
            if (all[4 * i + 1] >= all[4 * i + 2])
                continue;
            if (all[4 * i + 1] < end)
                interleaved = 1;
            end = BASE_MAX(end, all[4 * i + 2]);
        }
    }
    free(all);
    if (agreed == MPI_SUCCESS && gmin < gmax) {
        int mode = write ? f->cb_write : f->cb_read;
        int fsize_known = 0;
        int64_t fsize = 0;
        if (!write) {
            struct stat st;
            fsize_known = fstat(f->fd, &st) == 0;
            fsize = fsize_known ? (int64_t)st.st_size : 0;
        }
        if (!overlap && (mode == 1 || (mode == 2 && interleaved))) {
            cls = twophase(f, write, &a, stream, gmin, gmax);
            *done = write ? (cls == MPI_SUCCESS ? n : 0) : bytes_before_eof(&a, fsize);
        } else {
            cls = mpii_file_stream_indep(f, write, pos, stream, n, done);
        }
        PMPI_Allreduce(MPI_IN_PLACE, &cls, 1, MPI_INT, MPI_MAX, f->comm);
    } else {
        cls = agreed;
    }
    if (write) {
        if (owned)
            free(stream);
    } else if (stream) {
        int c2 = mpii_file_stream_in_done(f, buf, count, type, *done, stream, owned);
        if (cls == MPI_SUCCESS)
            cls = c2;
    }
    free(a.r);
    free(a.spos);
    return cls;
}
