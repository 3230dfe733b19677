/* dt_walk.c — data movement over the layout tree: one recursive walker serves pack,
 * unpack, external32 conversion and the segment iterators. It processes the byte range
 * [lo, hi) of the packed stream of a run of node instances, descending only into the
 * instances that range touches, so any piece at any offset costs O(depth * log blocks)
 * to reach. Leaves reach `run`: count blocks of blen bytes at addr + i * stride. */
#include <float.h>
#include <string.h>

#include "dt/dt_impl.h"

enum { W_PACK, W_UNPACK, W_IOV, W_STRIDED, W_XPACK, W_XUNPACK };

typedef struct wctx {
    int op, x; /* x: 0 native sizes, 1 external32 sizes */
    char *s;   /* stream cursor (pack / unpack) */
    struct iovec *iov;
    dt_strided_t *sd;
    int n, max;
    int64_t done; /* emit modes: stream bytes covered by what was emitted */
} wctx_t;

#define BASE_MIN_(a, b) ((a) < (b) ? (a) : (b))
#define MIN_(a, b) ((a) < (b) ? (a) : (b))
#define MAX_(a, b) ((a) > (b) ? (a) : (b))

/* ---------------------------------------------------------------- copies */

static inline void pack_blocks(char *restrict d, const char *restrict s, int64_t blen,
                               int64_t stride, int64_t count)
{
    switch (blen) {
    case 1:
        for (int64_t i = 0; i < count; i++)
            d[i] = s[i * stride];
        return;
    case 2:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + 2 * i, s + i * stride, 2);
        return;
    case 4:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + 4 * i, s + i * stride, 4);
        return;
    case 8: {
        int64_t i = 0;
        for (; i + 4 <= count; i += 4) {
            uint64_t a, b, c, e;
            memcpy(&a, s + i * stride, 8);
            memcpy(&b, s + (i + 1) * stride, 8);
            memcpy(&c, s + (i + 2) * stride, 8);
            memcpy(&e, s + (i + 3) * stride, 8);
            memcpy(d + 8 * i, &a, 8);
            memcpy(d + 8 * i + 8, &b, 8);
            memcpy(d + 8 * i + 16, &c, 8);
            memcpy(d + 8 * i + 24, &e, 8);
        }
        for (; i < count; i++)
            memcpy(d + 8 * i, s + i * stride, 8);
        return;
    }
    case 16:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + 16 * i, s + i * stride, 16);
        return;
    case 32:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + 32 * i, s + i * stride, 32);
        return;
    default:
        if (blen % 32 == 0 && blen <= 1024) { /* fixed-size chunks, inlined */
            for (int64_t i = 0; i < count; i++)
                for (int64_t o = 0; o < blen; o += 32)
                    memcpy(d + blen * i + o, s + i * stride + o, 32);
            return;
        }
        for (int64_t i = 0; i < count; i++)
            memcpy(d + blen * i, s + i * stride, (size_t)blen);
    }
}

static inline void unpack_blocks(char *restrict d, const char *restrict s, int64_t blen,
                                 int64_t stride, int64_t count)
{
    switch (blen) {
    case 1:
        for (int64_t i = 0; i < count; i++)
            d[i * stride] = s[i];
        return;
    case 2:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * stride, s + 2 * i, 2);
        return;
    case 4:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * stride, s + 4 * i, 4);
        return;
    case 8: {
        int64_t i = 0;
        for (; i + 4 <= count; i += 4) {
            uint64_t a, b, c, e;
            memcpy(&a, s + 8 * i, 8);
            memcpy(&b, s + 8 * i + 8, 8);
            memcpy(&c, s + 8 * i + 16, 8);
            memcpy(&e, s + 8 * i + 24, 8);
            memcpy(d + i * stride, &a, 8);
            memcpy(d + (i + 1) * stride, &b, 8);
            memcpy(d + (i + 2) * stride, &c, 8);
            memcpy(d + (i + 3) * stride, &e, 8);
        }
        for (; i < count; i++)
            memcpy(d + i * stride, s + 8 * i, 8);
        return;
    }
    case 16:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * stride, s + 16 * i, 16);
        return;
    case 32:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * stride, s + 32 * i, 32);
        return;
    default:
        if (blen % 32 == 0 && blen <= 1024) {
            for (int64_t i = 0; i < count; i++)
                for (int64_t o = 0; o < blen; o += 32)
                    memcpy(d + i * stride + o, s + blen * i + o, 32);
            return;
        }
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * stride, s + blen * i, (size_t)blen);
    }
}

/* ------------------------------------------------------------- emitting */

static int emit_iov(wctx_t *c, char *addr, int64_t blen, int64_t stride, int64_t count)
{
    for (int64_t i = 0; i < count; i++, addr += stride) {
        if (c->n > 0) {
            struct iovec *l = &c->iov[c->n - 1];
            if ((char *)l->iov_base + l->iov_len == addr) {
                l->iov_len += (size_t)blen;
                c->done += blen;
                continue;
            }
        }
        if (c->n == c->max)
            return 1;
        c->iov[c->n].iov_base = addr;
        c->iov[c->n].iov_len = (size_t)blen;
        c->n++;
        c->done += blen;
    }
    return 0;
}

static int emit_strided(wctx_t *c, char *addr, int64_t blen, int64_t stride, int64_t count)
{
    if (count == 1)
        stride = blen;
    if (c->n > 0) {
        dt_strided_t *l = &c->sd[c->n - 1];
        if (l->count == 1 && count == 1 && l->addr + l->blocklen == addr) {
            l->blocklen += blen;
            l->stride = l->blocklen;
            c->done += blen;
            return 0;
        }
        if (l->blocklen == blen && l->count > 1 && (count == 1 || stride == l->stride) &&
            l->addr + l->count * l->stride == addr) {
            l->count += count;
            c->done += blen * count;
            return 0;
        }
        if (l->count == 1 && l->blocklen == blen && (count == 1 || addr - l->addr == stride) &&
            addr != l->addr) {
            l->stride = addr - l->addr;
            l->count += count;
            c->done += blen * count;
            return 0;
        }
    }
    if (c->n == c->max)
        return 1;
    c->sd[c->n++] = (dt_strided_t){addr, blen, stride, count};
    c->done += blen * count;
    return 0;
}

/* count blocks of blen bytes at addr + i * stride, in stream order. 1: stop. */
static inline int run(wctx_t *c, char *addr, int64_t blen, int64_t stride, int64_t count)
{
    switch (c->op) {
    case W_PACK:
        if (count == 1)
            memcpy(c->s, addr, (size_t)blen);
        else
            pack_blocks(c->s, addr, blen, stride, count);
        c->s += blen * count;
        return 0;
    case W_UNPACK:
        if (count == 1)
            memcpy(addr, c->s, (size_t)blen);
        else
            unpack_blocks(addr, c->s, blen, stride, count);
        c->s += blen * count;
        return 0;
    case W_IOV: return emit_iov(c, addr, blen, stride, count);
    default: return emit_strided(c, addr, blen, stride, count);
    }
}

/* ------------------------------------------------------------ external32 */

static inline void bswap_copy(unsigned char *d, const unsigned char *s, int n)
{
#if __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    for (int i = 0; i < n; i++)
        d[i] = s[n - 1 - i];
#else
    memcpy(d, s, (size_t)n);
#endif
}

static void be_put(unsigned char *d, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        d[i] = (unsigned char)v;
}

static uint64_t be_get(const unsigned char *s, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | s[i];
    return v;
}

/* long double <-> IEEE binary128, bitwise (truncating extra precision). */
static void ld_to_ext(unsigned char *d, const unsigned char *s)
{
#if LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t m;
    uint16_t se;
    memcpy(&m, s, 8);
    memcpy(&se, s + 8, 2);
    uint64_t f = m & ~(1ull << 63);
    be_put(d, (uint64_t)se << 48 | f >> 15, 8);
    be_put(d + 8, f << 49, 8);
#elif LDBL_MANT_DIG == 113
    bswap_copy(d, s, 16);
#else
    /* other formats: not IEEE quad; carried as raw bytes */
    memset(d, 0, 16);
    bswap_copy(d + 16 - sizeof(long double), s, (int)sizeof(long double));
#endif
}

static void ld_from_ext(unsigned char *d, const unsigned char *s)
{
#if LDBL_MANT_DIG == 64 && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
    uint64_t hi = be_get(s, 8), lo = be_get(s + 8, 8);
    uint16_t se = (uint16_t)(hi >> 48);
    uint64_t m = (hi & 0xFFFFFFFFFFFFull) << 15 | lo >> 49;
    if (se & 0x7FFF)
        m |= 1ull << 63;
    memset(d, 0, sizeof(long double));
    memcpy(d, &m, 8);
    memcpy(d + 8, &se, 2);
#elif LDBL_MANT_DIG == 113
    bswap_copy(d, s, 16);
#else
    bswap_copy(d, s + 16 - sizeof(long double), (int)sizeof(long double));
#endif
}

static void to_ext(int k, const unsigned char *nat, unsigned char *ext)
{
    int es = dt_kinds_[k].size, xs = dt_kinds_[k].ext_size;
    switch (k) {
    case DT_LONG_DOUBLE: ld_to_ext(ext, nat); return;
    case DT_LONG_DOUBLE_COMPLEX:
    case DT_CXX_LONG_DOUBLE_COMPLEX:
        ld_to_ext(ext, nat);
        ld_to_ext(ext + 16, nat + es / 2);
        return;
    case DT_FLOAT_COMPLEX:
    case DT_DOUBLE_COMPLEX:
    case DT_CXX_FLOAT_COMPLEX:
    case DT_CXX_DOUBLE_COMPLEX:
    case DT_F_COMPLEX:
    case DT_F_DOUBLE_COMPLEX:
    case DT_F_COMPLEX8:
    case DT_F_COMPLEX16:
        bswap_copy(ext, nat, es / 2);
        bswap_copy(ext + es / 2, nat + es / 2, es / 2);
        return;
    case DT_LONG:
    case DT_UNSIGNED_LONG:
    case DT_AINT:
        if (es != xs) {
            uint64_t v;
            if (k == DT_LONG) {
                long x;
                memcpy(&x, nat, sizeof x);
                v = (uint64_t)(int64_t)x;
            } else if (k == DT_UNSIGNED_LONG) {
                unsigned long x;
                memcpy(&x, nat, sizeof x);
                v = x;
            } else {
                intptr_t x;
                memcpy(&x, nat, sizeof x);
                v = (uint64_t)(int64_t)x;
            }
            be_put(ext, v, xs);
            return;
        }
        /* fall through */
    default: bswap_copy(ext, nat, es);
    }
}

static void from_ext(int k, const unsigned char *ext, unsigned char *nat)
{
    int es = dt_kinds_[k].size, xs = dt_kinds_[k].ext_size;
    switch (k) {
    case DT_LONG_DOUBLE: ld_from_ext(nat, ext); return;
    case DT_LONG_DOUBLE_COMPLEX:
    case DT_CXX_LONG_DOUBLE_COMPLEX:
        ld_from_ext(nat, ext);
        ld_from_ext(nat + es / 2, ext + 16);
        return;
    case DT_FLOAT_COMPLEX:
    case DT_DOUBLE_COMPLEX:
    case DT_CXX_FLOAT_COMPLEX:
    case DT_CXX_DOUBLE_COMPLEX:
    case DT_F_COMPLEX:
    case DT_F_DOUBLE_COMPLEX:
    case DT_F_COMPLEX8:
    case DT_F_COMPLEX16:
        bswap_copy(nat, ext, es / 2);
        bswap_copy(nat + es / 2, ext + es / 2, es / 2);
        return;
    case DT_LONG:
    case DT_UNSIGNED_LONG:
    case DT_AINT:
        if (es != xs) {
            uint64_t v = be_get(ext, xs);
            if (k != DT_UNSIGNED_LONG && xs < 8 && (v >> (8 * xs - 1)) & 1)
                v |= ~0ull << (8 * xs); /* sign extension */
            if (k == DT_LONG) {
                long x = (long)(int64_t)v;
                memcpy(nat, &x, sizeof x);
            } else if (k == DT_UNSIGNED_LONG) {
                unsigned long x = (unsigned long)v;
                memcpy(nat, &x, sizeof x);
            } else {
                intptr_t x = (intptr_t)(int64_t)v;
                memcpy(nat, &x, sizeof x);
            }
            return;
        }
        /* fall through */
    default: bswap_copy(nat, ext, es);
    }
}

/* External bytes [lo, hi) of a homogeneous leaf of kind k at a; partial elements are
 * converted whole through a scratch element (unpack: read-modify-write). */
static int conv(wctx_t *c, int k, char *a, int64_t lo, int64_t hi)
{
    int64_t es = dt_kinds_[k].size, xs = dt_kinds_[k].ext_size;
    unsigned char tmp[32];
    for (int64_t j = lo / xs; j * xs < hi; j++) {
        int64_t elo = j * xs, from = MAX_(lo, elo) - elo, to = MIN_(hi, elo + xs) - elo;
        unsigned char *nat = (unsigned char *)a + j * es;
        if (c->op == W_XPACK) {
            if (from == 0 && to == xs) {
                to_ext(k, nat, (unsigned char *)c->s);
            } else {
                to_ext(k, nat, tmp);
                memcpy(c->s, tmp + from, (size_t)(to - from));
            }
        } else {
            if (from == 0 && to == xs) {
                from_ext(k, (unsigned char *)c->s, nat);
            } else {
                to_ext(k, nat, tmp);
                memcpy(tmp + from, c->s, (size_t)(to - from));
                from_ext(k, tmp, nat);
            }
        }
        c->s += to - from;
    }
    return 0;
}

/* ---------------------------------------------------------------- walker */

static int walk(wctx_t *c, const dt_node_t *n, char *base, int64_t ext, int64_t lo, int64_t hi);

/* Bytes [lo, hi) (0 <= lo < hi <= size) of the instance of n whose data starts at a. */
static int one(wctx_t *c, const dt_node_t *n, char *a, int64_t lo, int64_t hi)
{
    switch (n->type) {
    case DT_N_LEAF:
        if (!c->x)
            return run(c, a + lo, hi - lo, 0, 1);
        if (n->kind < 0)
            return walk(c, n->u.leaf.orig, a, 0, lo, hi);
        return conv(c, n->kind, a, lo, hi);
    case DT_N_VEC: return walk(c, n->u.vec.child, a, n->u.vec.stride, lo, hi);
    default: {
        const int64_t *ps = n->u.idx.psum[c->x];
        int64_t nb = n->u.idx.n, l = 0, r = nb - 1;
        while (l < r) {
            int64_t m = (l + r + 1) / 2;
            if (ps[m] <= lo)
                l = m;
            else
                r = m - 1;
        }
        for (int64_t b = l; b < nb && ps[b] < hi; b++) {
            const dt_node_t *kid = n->u.idx.kids ? n->u.idx.kids[b] : n->u.idx.child;
            int64_t kext = n->u.idx.kids ? n->u.idx.kexts[b] : n->u.idx.cext;
            int64_t blo = MAX_(lo - ps[b], 0), bhi = MIN_(hi, ps[b + 1]) - ps[b];
            if (bhi > blo && walk(c, kid, a + n->u.idx.off[b], kext, blo, bhi))
                return 1;
        }
        return 0;
    }
    }
}

/* Bytes [lo, hi) of the stream of instances of n, instance i at base + i * ext. */
static int walk(wctx_t *c, const dt_node_t *n, char *base, int64_t ext, int64_t lo, int64_t hi)
{
    int64_t sz = n->size[c->x], i = lo / sz, off = lo - i * sz;
    char *a = base + i * ext + n->disp;
    if (n->type == DT_N_LEAF && !c->x) {
        if (ext == sz)
            return run(c, a + off, hi - lo, 0, 1);
        if (off) {
            int64_t e = MIN_(sz, off + hi - lo);
            if (run(c, a + off, e - off, 0, 1))
                return 1;
            lo += e - off;
            a += ext;
        }
        int64_t full = (hi - lo) / sz;
        if (full) {
            if (run(c, a, sz, ext, full))
                return 1;
            a += full * ext;
            lo += full * sz;
        }
        return lo < hi ? run(c, a, hi - lo, 0, 1) : 0;
    }
    while (lo < hi) {
        int64_t e = MIN_(sz, off + (hi - lo));
        if (one(c, n, a, off, e))
            return 1;
        lo += e - off;
        off = 0;
        a += ext;
    }
    return 0;
}

static int check_range(const dt_t *t, int64_t count, const void *buf, int64_t off, int64_t len,
                       const void *stream, int x)
{
    if (!t)
        return FMPL_ERR_TYPE;
    int64_t total = count * (x ? t->ext_size : t->size);
    if (count < 0 || off < 0 || len < 0 || off > total || len > total - off)
        return FMPL_ERR_ARG;
    (void)buf; /* NULL is a valid base: MPI_BOTTOM with absolute displacements */
    if (len > 0 && !stream)
        return FMPL_ERR_ARG;
    return FMPL_SUCCESS;
}

static void walk_type(wctx_t *c, const dt_t *t, const void *buf, int64_t lo, int64_t hi)
{
    if (lo < hi)
        walk(c, t->root, (char *)buf, t->ub - t->lb, lo, hi);
}

int dt_pack(const dt_t *t, int64_t count, const void *buf, int64_t off, int64_t len, void *stream)
{
    int rc = check_range(t, count, buf, off, len, stream, 0);
    if (rc || len == 0)
        return rc;
    if (dt_is_contig(t, count)) {
        memcpy(stream, (const char *)buf + t->root->disp + off, (size_t)len);
        return FMPL_SUCCESS;
    }
    wctx_t c = {.op = W_PACK, .s = stream};
    walk_type(&c, t, buf, off, off + len);
    return FMPL_SUCCESS;
}

int dt_unpack(const dt_t *t, int64_t count, void *buf, int64_t off, int64_t len, const void *stream)
{
    int rc = check_range(t, count, buf, off, len, stream, 0);
    if (rc || len == 0)
        return rc;
    if (dt_is_contig(t, count)) {
        memcpy((char *)buf + t->root->disp + off, stream, (size_t)len);
        return FMPL_SUCCESS;
    }
    wctx_t c = {.op = W_UNPACK, .s = (char *)stream};
    walk_type(&c, t, buf, off, off + len);
    return FMPL_SUCCESS;
}

int dt_pack_external(const dt_t *t, int64_t count, const void *buf, int64_t off, int64_t len,
                     void *stream)
{
    int rc = check_range(t, count, buf, off, len, stream, 1);
    if (rc || len == 0)
        return rc;
    wctx_t c = {.op = W_XPACK, .x = 1, .s = stream};
    walk_type(&c, t, buf, off, off + len);
    return FMPL_SUCCESS;
}

int dt_unpack_external(const dt_t *t, int64_t count, void *buf, int64_t off, int64_t len,
                       const void *stream)
{
    int rc = check_range(t, count, buf, off, len, stream, 1);
    if (rc || len == 0)
        return rc;
    wctx_t c = {.op = W_XUNPACK, .x = 1, .s = (char *)stream};
    walk_type(&c, t, buf, off, off + len);
    return FMPL_SUCCESS;
}

/* -------------------------------------------------------------- iterator */

int dt_iter_init(dt_iter_t *it, const dt_t *t, int64_t count, const void *buf, int64_t off)
{
    if (!t)
        return FMPL_ERR_TYPE;
    if (!it || count < 0 || off < 0 || off > count * t->size)
        return FMPL_ERR_ARG;
    it->t = t;
    it->count = count;
    it->buf = (char *)buf;
    it->pos = off;
    it->end = count * t->size;
    return FMPL_SUCCESS;
}

int dt_iter_seek(dt_iter_t *it, int64_t off)
{
    if (!it || off < 0 || off > it->end)
        return FMPL_ERR_ARG;
    it->pos = off;
    return FMPL_SUCCESS;
}

static int iter_next(dt_iter_t *it, wctx_t *c, int max, int64_t maxbytes, int *n, int64_t *nbytes)
{
    if (!it || max < 1 || maxbytes < 1 || !n || !nbytes)
        return FMPL_ERR_ARG;
    c->max = max;
    int64_t hi = it->pos + MIN_(maxbytes, it->end - it->pos);
    walk_type(c, it->t, it->buf, it->pos, hi);
    it->pos += c->done;
    *n = c->n;
    *nbytes = c->done;
    return FMPL_SUCCESS;
}

int dt_iter_next(dt_iter_t *it, struct iovec *segs, int maxsegs, int64_t maxbytes, int *nsegs,
                 int64_t *nbytes)
{
    if (!segs)
        return FMPL_ERR_ARG;
    wctx_t c = {.op = W_IOV, .iov = segs};
    return iter_next(it, &c, maxsegs, maxbytes, nsegs, nbytes);
}

int dt_iter_next_strided(dt_iter_t *it, dt_strided_t *d, int maxd, int64_t maxbytes, int *nd,
                         int64_t *nbytes)
{
    if (!d)
        return FMPL_ERR_ARG;
    wctx_t c = {.op = W_STRIDED, .sd = d};
    return iter_next(it, &c, maxd, maxbytes, nd, nbytes);
}

int dt_get_strided(const dt_t *t, int64_t count, const void *buf, dt_strided_t *out)
{
    if (!t || !out || count < 0 || count * t->size == 0)
        return 0;
    dt_strided_t d;
    wctx_t c = {.op = W_STRIDED, .sd = &d, .max = 1};
    walk_type(&c, t, buf, 0, count * t->size);
    if (c.n != 1 || c.done != count * t->size)
        return 0;
    *out = d;
    return 1;
}

/* ------------------------------------------------------------ typed copy */

#define COPY_DESC 32

/* A cursor over strided descriptors: descriptor i, block k, byte o inside the block. */
typedef struct scur {
    const dt_strided_t *d;
    int i;
    int64_t k, o;
} scur_t;

static inline char *scur_ptr(const scur_t *c)
{
    return c->d[c->i].addr + c->k * c->d[c->i].stride + c->o;
}

static inline void scur_advance(scur_t *c, int64_t bytes)
{
    const dt_strided_t *d = &c->d[c->i];
    c->o += bytes;
    if (c->o == d->blocklen) {
        c->o = 0;
        if (++c->k == d->count) {
            c->k = 0;
            c->i++;
        }
    }
}

/* count blocks of blen bytes, source stride ss, destination stride ds. */
static void copy_blocks(char *restrict d, int64_t ds, const char *restrict s, int64_t ss,
                        int64_t blen, int64_t count)
{
    switch (blen) {
    case 4:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * ds, s + i * ss, 4);
        return;
    case 8:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * ds, s + i * ss, 8);
        return;
    case 16:
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * ds, s + i * ss, 16);
        return;
    default:
        if (blen % 32 == 0 && blen <= 1024) {
            for (int64_t i = 0; i < count; i++)
                for (int64_t o = 0; o < blen; o += 32)
                    memcpy(d + i * ds + o, s + i * ss + o, 32);
            return;
        }
        for (int64_t i = 0; i < count; i++)
            memcpy(d + i * ds, s + i * ss, (size_t)blen);
    }
}

/* Moves n bytes from the source descriptors to the destination descriptors. */
static void copy_strided(scur_t *sc, scur_t *dc, int64_t n)
{
    while (n > 0) {
        const dt_strided_t *sd = &sc->d[sc->i], *dd = &dc->d[dc->i];
        if (sc->o == 0 && dc->o == 0 && sd->blocklen == dd->blocklen) {
            /* whole blocks of equal length on both sides: one strided loop */
            int64_t blocks = BASE_MIN_(sd->count - sc->k, dd->count - dc->k);
            blocks = BASE_MIN_(blocks, n / sd->blocklen);
            if (blocks > 0) {
                copy_blocks(scur_ptr(dc), dd->stride, scur_ptr(sc), sd->stride, sd->blocklen,
                            blocks);
                int64_t b = blocks * sd->blocklen;
                n -= b;
                sc->k += blocks;
                dc->k += blocks;
                if (sc->k == sd->count) {
                    sc->k = 0;
                    sc->i++;
                }
                if (dc->k == dd->count) {
                    dc->k = 0;
                    dc->i++;
                }
                continue;
            }
        }
        int64_t piece = BASE_MIN_(sd->blocklen - sc->o, dd->blocklen - dc->o);
        piece = BASE_MIN_(piece, n);
        memcpy(scur_ptr(dc), scur_ptr(sc), (size_t)piece);
        scur_advance(sc, piece);
        scur_advance(dc, piece);
        n -= piece;
    }
}

int dt_copy(const dt_t *st, int64_t scount, const void *sbuf, const dt_t *rt, int64_t rcount,
            void *rbuf, int64_t off, int64_t len)
{
    if (!st || !rt)
        return FMPL_ERR_TYPE;
    /* Both sides are typed buffers, either may be NULL (MPI_BOTTOM): only ranges checked. */
    static const char any_stream;
    int rc = check_range(st, scount, sbuf, off, len, &any_stream, 0);
    if (!rc)
        rc = check_range(rt, rcount, rbuf, off, len, &any_stream, 0);
    if (rc || len == 0)
        return rc;
    if (dt_is_contig(st, scount))
        return dt_unpack(rt, rcount, rbuf, off, len, (const char *)sbuf + st->root->disp + off);
    if (dt_is_contig(rt, rcount))
        return dt_pack(st, scount, sbuf, off, len, (char *)rbuf + rt->root->disp + off);
    /* Both sides non-contiguous: stream both layouts as strided descriptors, a bounded
     * window at a time, and copy between them. */
    dt_iter_t si = {0}, ri = {0};
    dt_iter_init(&si, st, scount, sbuf, off);
    dt_iter_init(&ri, rt, rcount, rbuf, off);
    dt_strided_t sv[COPY_DESC], rv[COPY_DESC];
    while (len > 0) {
        int ns = 0, nr = 0;
        int64_t bs = 0, br = 0;
        dt_iter_next_strided(&si, sv, COPY_DESC, BASE_MIN_(len, (int64_t)1 << 22), &ns, &bs);
        dt_iter_next_strided(&ri, rv, COPY_DESC, bs, &nr, &br);
        if (br < bs)
            si.pos -= bs - br;
        scur_t sc = {sv, 0, 0, 0}, dc = {rv, 0, 0, 0};
        copy_strided(&sc, &dc, br);
        len -= br;
    }
    return FMPL_SUCCESS;
}
