/* dt_ref.c — the tests' naive reference for src/dt (included by the dt_* tests, not
 * compiled alone): a type is its flat type map, one (displacement, basic kind) entry per
 * basic element, built per element from the MPI definitions, with lb/ub computed per
 * instance. Pack/unpack/external32 walk the map element by element. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dt/dt.h"
#include "test_util.h"

/* Each including test uses a different part of the reference. */
#pragma GCC diagnostic ignored "-Wunused-function"

typedef struct rent {
    int64_t disp;
    int kind;
} rent_t;

typedef struct rtype {
    rent_t *m;
    int64_t n;
    int64_t lb, ub;
    int lbm, ubm, align;
} rtype_t;

static uint64_t rng_state = 88172645463325252ull;
static uint64_t rnd(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return rng_state;
}
/* uniform in [lo, hi] */
static int64_t rr(int64_t lo, int64_t hi)
{
    return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1));
}

static int ksize(int k)
{
    return dt_kind_info(k)->size;
}
static int kxsize(int k)
{
    return dt_kind_info(k)->ext_size;
}

static void ref_free(rtype_t *r)
{
    free(r->m);
    memset(r, 0, sizeof *r);
}

static void ref_push(rtype_t *r, int64_t disp, int kind)
{
    if ((r->n & (r->n - 1)) == 0) {
        r->m = realloc(r->m, (size_t)(r->n ? 2 * r->n : 1) * sizeof *r->m);
        CHECK(r->m);
    }
    r->m[r->n++] = (rent_t){disp, kind};
}

static int64_t ref_size(const rtype_t *r)
{
    int64_t s = 0;
    for (int64_t i = 0; i < r->n; i++)
        s += ksize(r->m[i].kind);
    return s;
}

static int64_t ref_xsize(const rtype_t *r)
{
    int64_t s = 0;
    for (int64_t i = 0; i < r->n; i++)
        s += kxsize(r->m[i].kind);
    return s;
}

static int64_t ref_extent(const rtype_t *r)
{
    return r->ub - r->lb;
}

static void ref_true(const rtype_t *r, int64_t *tlb, int64_t *tub)
{
    *tlb = *tub = 0;
    for (int64_t i = 0; i < r->n; i++) {
        int64_t a = r->m[i].disp, b = a + ksize(r->m[i].kind);
        if (i == 0 || a < *tlb)
            *tlb = a;
        if (i == 0 || b > *tub)
            *tub = b;
    }
}

/* Bounds accumulation, one instance at a time. */
typedef struct racc {
    int any, anyl, anyu, align;
    int64_t lb, ub, mlb, mub;
} racc_t;

static void racc_add(racc_t *a, const rtype_t *t, int64_t disp)
{
    if (t->n == 0 && !t->lbm && !t->ubm)
        return;
    int64_t l = disp + t->lb, u = disp + t->ub;
    if (!a->any || l < a->lb)
        a->lb = l;
    if (!a->any || u > a->ub)
        a->ub = u;
    a->any = 1;
    if (t->lbm && (!a->anyl || l < a->mlb))
        a->mlb = l, a->anyl = 1;
    if (t->ubm && (!a->anyu || u > a->mub))
        a->mub = u, a->anyu = 1;
    if (t->align > a->align)
        a->align = t->align;
}

static void racc_finish(const racc_t *a, rtype_t *r, int is_struct)
{
    r->lb = a->anyl ? a->mlb : a->any ? a->lb : 0;
    r->ub = a->anyu ? a->mub : a->any ? a->ub : 0;
    r->lbm = a->anyl;
    r->ubm = a->anyu;
    r->align = a->align ? a->align : 1;
    if (is_struct && !a->anyl && !a->anyu) {
        int64_t e = (r->ub - r->lb) % r->align;
        if (e < 0)
            e += r->align;
        if (e)
            r->ub += r->align - e;
    }
}

static void ref_basic(int k, rtype_t *r)
{
    memset(r, 0, sizeof *r);
    static const int pa[][3] = {
        {DT_FLOAT_INT, DT_FLOAT, DT_INT},
        {DT_DOUBLE_INT, DT_DOUBLE, DT_INT},
        {DT_LONG_INT, DT_LONG, DT_INT},
        {DT_2INT, DT_INT, DT_INT},
        {DT_SHORT_INT, DT_SHORT, DT_INT},
        {DT_LONG_DOUBLE_INT, DT_LONG_DOUBLE, DT_INT},
        {DT_F_2REAL, DT_F_REAL, DT_F_REAL},
        {DT_F_2DOUBLE_PRECISION, DT_F_DOUBLE_PRECISION, DT_F_DOUBLE_PRECISION},
        {DT_F_2INTEGER, DT_F_INTEGER, DT_F_INTEGER}};
    if (k < DT_NBASIC) {
        ref_push(r, 0, k);
    } else {
        int i = k - DT_NBASIC;
        CHECK(pa[i][0] == k);
        ref_push(r, 0, pa[i][1]);
        /* the second member sits at the first offset after the first one that is
         * aligned for it */
        int64_t o = ksize(pa[i][1]), al = dt_kind_info(pa[i][2])->align;
        o = (o + al - 1) / al * al;
        ref_push(r, o, pa[i][2]);
    }
    r->lb = 0;
    r->ub = ksize(k);
    r->align = dt_kind_info(k)->align;
}

/* Generic block list: blocks i = cnt[i] instances of t[i] at off[i] + j * extent(t[i]). */
static void ref_blocks(int64_t n, const int64_t *cnt, const int64_t *off, const rtype_t *const *t,
                       int is_struct, rtype_t *r)
{
    rtype_t x = {0};
    racc_t a = {0};
    for (int64_t i = 0; i < n; i++) {
        int64_t ext = ref_extent(t[i]);
        for (int64_t j = 0; j < cnt[i]; j++) {
            int64_t d = off[i] + j * ext;
            for (int64_t e = 0; e < t[i]->n; e++)
                ref_push(&x, d + t[i]->m[e].disp, t[i]->m[e].kind);
            racc_add(&a, t[i], d);
        }
    }
    racc_finish(&a, &x, is_struct);
    *r = x;
}

static void ref_hvector(int64_t count, int64_t bl, int64_t sb, const rtype_t *t, rtype_t *r)
{
    int64_t *cnt = malloc((size_t)(count + 1) * sizeof(int64_t) * 2), *off = cnt + count + 1;
    const rtype_t **ts = malloc((size_t)(count + 1) * sizeof *ts);
    for (int64_t i = 0; i < count; i++) {
        cnt[i] = bl;
        off[i] = i * sb;
        ts[i] = t;
    }
    ref_blocks(count, cnt, off, ts, 0, r);
    free(cnt);
    free(ts);
}

static void ref_hindexed(int64_t n, const int64_t *bl, const int64_t *offb, const rtype_t *t,
                         rtype_t *r)
{
    const rtype_t **ts = malloc((size_t)(n + 1) * sizeof *ts);
    for (int64_t i = 0; i < n; i++)
        ts[i] = t;
    ref_blocks(n, bl, offb, ts, 0, r);
    free(ts);
}

static void ref_resized(const rtype_t *t, int64_t lb, int64_t ext, rtype_t *r)
{
    rtype_t x = *t;
    int64_t cap = 1;
    while (cap < t->n)
        cap *= 2; /* ref_push grows at powers of two */
    x.m = malloc((size_t)cap * sizeof *x.m);
    if (t->n)
        memcpy(x.m, t->m, (size_t)t->n * sizeof *x.m);
    x.lb = lb;
    x.ub = lb + ext;
    x.lbm = x.ubm = 1;
    *r = x;
}

static void ref_copy(const rtype_t *t, rtype_t *r)
{
    ref_resized(t, t->lb, t->ub - t->lb, r);
    r->lbm = t->lbm;
    r->ubm = t->ubm;
}

/* ---------------------------------------------------------------- data ops */

/* The byte span [lo, hi) that count elements touch (data only). */
static void ref_span(const rtype_t *r, int64_t count, int64_t *lo, int64_t *hi)
{
    int64_t tl, tu, ext = ref_extent(r);
    ref_true(r, &tl, &tu);
    int64_t a = (count - 1) * ext;
    *lo = tl + (a < 0 ? a : 0);
    *hi = tu + (a > 0 ? a : 0);
    if (r->n == 0 || count == 0)
        *lo = *hi = 0;
}

/* A buffer covering the span with margins; *base is where displacement 0 lives. */
typedef struct rbuf {
    unsigned char *mem, *base;
    int64_t len;
} rbuf_t;

static void rbuf_alloc(rbuf_t *b, const rtype_t *r, int64_t count)
{
    int64_t lo, hi;
    ref_span(r, count, &lo, &hi);
    b->len = hi - lo + 64;
    b->mem = malloc((size_t)b->len);
    CHECK(b->mem);
    b->base = b->mem + 32 - lo;
}

static void rbuf_fill(rbuf_t *b, int pattern)
{
    for (int64_t i = 0; i < b->len; i++)
        b->mem[i] = pattern < 0 ? (unsigned char)rnd() : (unsigned char)pattern;
}

static void ref_pack(const rtype_t *r, int64_t count, const unsigned char *base, unsigned char *out)
{
    int64_t ext = ref_extent(r);
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++) {
            int s = ksize(r->m[e].kind);
            memcpy(out, base + i * ext + r->m[e].disp, (size_t)s);
            out += s;
        }
}

static void ref_unpack(const rtype_t *r, int64_t count, unsigned char *base,
                       const unsigned char *in)
{
    int64_t ext = ref_extent(r);
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++) {
            int s = ksize(r->m[e].kind);
            memcpy(base + i * ext + r->m[e].disp, in, (size_t)s);
            in += s;
        }
}

static int64_t ref_elements_in(const rtype_t *r, int64_t nbytes)
{
    int64_t n = 0, pos = 0;
    if (r->n == 0)
        return 0;
    for (;;)
        for (int64_t e = 0; e < r->n; e++) {
            pos += ksize(r->m[e].kind);
            if (pos > nbytes)
                return n;
            n++;
        }
}

static void put_be(unsigned char *o, uint64_t v, int n)
{
    for (int i = n - 1; i >= 0; i--, v >>= 8)
        o[i] = (unsigned char)(v & 0xff);
}

/* external32 of one long double, from its value (normal finite numbers and zero). */
static void ref_ld_ext(long double x, unsigned char *o)
{
    memset(o, 0, 16);
    int neg = signbit(x) != 0;
    if (x == 0) {
        o[0] = (unsigned char)(neg << 7);
        return;
    }
    int e;
    long double m = frexpl(fabsl(x), &e); /* [0.5, 1) */
    uint64_t f63 = (uint64_t)ldexpl(m * 2 - 1, 63);
    uint64_t hi = (uint64_t)neg << 63 | (uint64_t)(e - 1 + 16383) << 48 | f63 >> 15;
    put_be(o, hi, 8);
    put_be(o + 8, f63 << 49, 8);
}

static void ref_to_ext(int k, const unsigned char *p, unsigned char *o)
{
    switch (k) {
    case DT_SHORT:
    case DT_UNSIGNED_SHORT:
    case DT_INT16:
    case DT_UINT16: {
        uint16_t v;
        memcpy(&v, p, 2);
        put_be(o, v, 2);
        return;
    }
    case DT_INT:
    case DT_UNSIGNED:
    case DT_INT32:
    case DT_UINT32:
    case DT_WCHAR:
    case DT_FLOAT: {
        uint32_t v;
        memcpy(&v, p, 4);
        put_be(o, v, 4);
        return;
    }
    case DT_LONG: {
        long v;
        memcpy(&v, p, sizeof v);
        put_be(o, (uint64_t)v, 4);
        return;
    }
    case DT_UNSIGNED_LONG: {
        unsigned long v;
        memcpy(&v, p, sizeof v);
        put_be(o, (uint64_t)v, 4);
        return;
    }
    case DT_LONG_LONG:
    case DT_UNSIGNED_LONG_LONG:
    case DT_INT64:
    case DT_UINT64:
    case DT_DOUBLE:
    case DT_AINT:
    case DT_OFFSET:
    case DT_COUNT: {
        uint64_t v;
        memcpy(&v, p, 8);
        put_be(o, v, 8);
        return;
    }
    case DT_FLOAT_COMPLEX:
    case DT_CXX_FLOAT_COMPLEX:
    case DT_F_COMPLEX:
    case DT_F_COMPLEX8: {
        uint32_t v[2];
        memcpy(v, p, 8);
        put_be(o, v[0], 4);
        put_be(o + 4, v[1], 4);
        return;
    }
    case DT_DOUBLE_COMPLEX:
    case DT_CXX_DOUBLE_COMPLEX:
    case DT_F_DOUBLE_COMPLEX:
    case DT_F_COMPLEX16: {
        uint64_t v[2];
        memcpy(v, p, 16);
        put_be(o, v[0], 8);
        put_be(o + 8, v[1], 8);
        return;
    }
    case DT_LONG_DOUBLE: {
        long double v;
        memcpy(&v, p, sizeof v);
        ref_ld_ext(v, o);
        return;
    }
    case DT_LONG_DOUBLE_COMPLEX:
    case DT_CXX_LONG_DOUBLE_COMPLEX: {
        long double v[2];
        memcpy(v, p, sizeof v);
        ref_ld_ext(v[0], o);
        ref_ld_ext(v[1], o + 16);
        return;
    }
    default: {
        /* the rest: integers and reals whose external size is the native one */
        CHECK(ksize(k) == kxsize(k));
        uint64_t v = 0;
        if (ksize(k) == 1) {
            v = p[0];
        } else if (ksize(k) == 2) {
            uint16_t x;
            memcpy(&x, p, 2);
            v = x;
        } else if (ksize(k) == 4) {
            uint32_t x;
            memcpy(&x, p, 4);
            v = x;
        } else {
            CHECK(ksize(k) == 8);
            memcpy(&v, p, 8);
        }
        put_be(o, v, ksize(k));
    }
    }
}

static uint64_t get_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

/* native from external32 (not long double) */
static void ref_from_ext(int k, const unsigned char *p, unsigned char *o)
{
    int xs = kxsize(k);
    if (k == DT_LONG) {
        long v = (long)(int32_t)(uint32_t)get_be(p, 4);
        memcpy(o, &v, sizeof v);
    } else if (k == DT_UNSIGNED_LONG) {
        unsigned long v = (uint32_t)get_be(p, 4);
        memcpy(o, &v, sizeof v);
    } else if (k == DT_FLOAT_COMPLEX || k == DT_DOUBLE_COMPLEX || k == DT_CXX_FLOAT_COMPLEX ||
               k == DT_CXX_DOUBLE_COMPLEX || k == DT_F_COMPLEX || k == DT_F_DOUBLE_COMPLEX ||
               k == DT_F_COMPLEX8 || k == DT_F_COMPLEX16) {
        int h = xs / 2;
        uint64_t a = get_be(p, h), b = get_be(p + h, h);
        if (h == 4) {
            uint32_t v[2] = {(uint32_t)a, (uint32_t)b};
            memcpy(o, v, 8);
        } else {
            uint64_t v[2] = {a, b};
            memcpy(o, v, 16);
        }
    } else {
        uint64_t v = get_be(p, xs);
        if (xs == 1) {
            o[0] = (unsigned char)v;
        } else if (xs == 2) {
            uint16_t x = (uint16_t)v;
            memcpy(o, &x, 2);
        } else if (xs == 4) {
            uint32_t x = (uint32_t)v;
            memcpy(o, &x, 4);
        } else {
            memcpy(o, &v, 8);
        }
    }
}

static void ref_unpack_ext(const rtype_t *r, int64_t count, unsigned char *base,
                           const unsigned char *in)
{
    int64_t ext = ref_extent(r);
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++) {
            ref_from_ext(r->m[e].kind, in, base + i * ext + r->m[e].disp);
            in += kxsize(r->m[e].kind);
        }
}

static void ref_pack_ext(const rtype_t *r, int64_t count, const unsigned char *base,
                         unsigned char *out)
{
    int64_t ext = ref_extent(r);
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++) {
            ref_to_ext(r->m[e].kind, base + i * ext + r->m[e].disp, out);
            out += kxsize(r->m[e].kind);
        }
}

static int cmp_i64pair(const void *a, const void *b)
{
    const int64_t *x = a, *y = b;
    return x[0] < y[0] ? -1 : x[0] > y[0];
}

/* 1 when two data bytes of count elements coincide (unpacking such a type is
 * order-dependent; MPI calls receiving into it erroneous). */
static int ref_overlaps(const rtype_t *r, int64_t count)
{
    int64_t n = r->n * count, ext = ref_extent(r), k = 0;
    int64_t *iv = malloc((size_t)(2 * n + 2) * sizeof(int64_t));
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++) {
            iv[2 * k] = i * ext + r->m[e].disp;
            iv[2 * k + 1] = iv[2 * k] + ksize(r->m[e].kind);
            k++;
        }
    qsort(iv, (size_t)n, 2 * sizeof(int64_t), cmp_i64pair);
    int ov = 0;
    for (int64_t i = 1, end = n ? iv[1] : 0; i < n && !ov; i++) {
        ov = iv[2 * i] < end;
        if (iv[2 * i + 1] > end)
            end = iv[2 * i + 1];
    }
    free(iv);
    return ov;
}

/* Checks every query of t against r. */
static void check_queries(const dt_t *t, const rtype_t *r)
{
    int64_t tl, tu;
    ref_true(r, &tl, &tu);
    if (dt_size(t) != ref_size(r) || dt_lb(t) != r->lb || dt_ub(t) != r->ub ||
        dt_nelem(t) != r->n || dt_ext32_size(t) != ref_xsize(r) || dt_true_lb(t) != tl ||
        dt_true_extent(t) != tu - tl) {
        fprintf(stderr,
                "queries: size %lld/%lld lb %lld/%lld ub %lld/%lld nelem %lld/%lld "
                "true_lb %lld/%lld true_ext %lld/%lld\n",
                (long long)dt_size(t), (long long)ref_size(r), (long long)dt_lb(t),
                (long long)r->lb, (long long)dt_ub(t), (long long)r->ub, (long long)dt_nelem(t),
                (long long)r->n, (long long)dt_true_lb(t), (long long)tl,
                (long long)dt_true_extent(t), (long long)(tu - tl));
        CHECK(0);
    }
    CHECK(dt_extent(t) == r->ub - r->lb);
}

static int ref_has_kind(const rtype_t *r, int k)
{
    for (int64_t e = 0; e < r->n; e++)
        if (r->m[e].kind == k)
            return 1;
    return 0;
}

/* Everything about moving data: pack/unpack whole and in random pieces, both iterators
 * from random offsets with random chunking, elements_in, strided detection, and (when
 * the kinds allow a bitwise reference) external32. */
static void check_data(const dt_t *t, const rtype_t *r, int64_t count)
{
    int64_t size = ref_size(r) * count, xsize = ref_xsize(r) * count;
    rbuf_t b, d1, d2;
    rbuf_alloc(&b, r, count);
    rbuf_alloc(&d1, r, count);
    rbuf_alloc(&d2, r, count);
    rbuf_fill(&b, -1);
    unsigned char *want = malloc((size_t)size + 1), *got = malloc((size_t)size + 1);
    CHECK(want && got);
    ref_pack(r, count, b.base, want);

    /* whole */
    memset(got, 0xA5, (size_t)size + 1);
    CHECK_RC(dt_pack(t, count, b.base, 0, size, got), FMPL_SUCCESS);
    CHECK(memcmp(want, got, (size_t)size) == 0);
    CHECK(got[size] == 0xA5);
    /* pieces */
    memset(got, 0, (size_t)size + 1);
    for (int64_t off = 0; off < size;) {
        int64_t len = rr(1, 1 + size / 3);
        if (len > size - off)
            len = size - off;
        CHECK_RC(dt_pack(t, count, b.base, off, len, got + off), FMPL_SUCCESS);
        off += len;
    }
    CHECK(memcmp(want, got, (size_t)size) == 0);

    /* unpack whole and in pieces vs reference unpack into identical backgrounds */
    rbuf_fill(&d1, 0x5A);
    rbuf_fill(&d2, 0x5A);
    ref_unpack(r, count, d1.base, want);
    CHECK_RC(dt_unpack(t, count, d2.base, 0, size, want), FMPL_SUCCESS);
    CHECK(memcmp(d1.mem, d2.mem, (size_t)d1.len) == 0);
    rbuf_fill(&d2, 0x5A);
    for (int64_t off = 0; off < size;) {
        int64_t len = rr(1, 1 + size / 4);
        if (len > size - off)
            len = size - off;
        CHECK_RC(dt_unpack(t, count, d2.base, off, len, want + off), FMPL_SUCCESS);
        off += len;
    }
    CHECK(memcmp(d1.mem, d2.mem, (size_t)d1.len) == 0);

    /* iovec iterator from a random offset, random chunks, random re-seeks */
    for (int rep = 0; rep < 3; rep++) {
        int64_t start = size ? rr(0, size) : 0, pos = start;
        dt_iter_t it;
        CHECK_RC(dt_iter_init(&it, t, count, b.base, start), FMPL_SUCCESS);
        struct iovec seg[8];
        while (!dt_iter_done(&it)) {
            int ns;
            int64_t nb, sum = 0;
            int maxs = (int)rr(1, 8);
            int64_t maxb = rnd() % 2 ? rr(1, 40) : size;
            CHECK_RC(dt_iter_next(&it, seg, maxs, maxb, &ns, &nb), FMPL_SUCCESS);
            CHECK(ns >= 1 && ns <= maxs && nb >= 1 && nb <= maxb);
            for (int i = 0; i < ns; i++) {
                CHECK(memcmp(seg[i].iov_base, want + pos + sum, seg[i].iov_len) == 0);
                sum += (int64_t)seg[i].iov_len;
            }
            CHECK(sum == nb);
            pos += nb;
            CHECK(it.pos == pos);
            if (rnd() % 8 == 0) { /* resume somewhere else, as after a partial transfer */
                pos = rr(0, size);
                CHECK_RC(dt_iter_seek(&it, pos), FMPL_SUCCESS);
            }
        }
        CHECK(pos == size);
        int ns = -1;
        int64_t nb = -1;
        CHECK_RC(dt_iter_next(&it, seg, 8, 100, &ns, &nb), FMPL_SUCCESS);
        CHECK(ns == 0 && nb == 0);
    }
    /* strided iterator */
    {
        int64_t start = size ? rr(0, size) : 0, pos = start;
        dt_iter_t it;
        CHECK_RC(dt_iter_init(&it, t, count, b.base, start), FMPL_SUCCESS);
        dt_strided_t sd[4];
        while (!dt_iter_done(&it)) {
            int nd;
            int64_t nb, sum = 0;
            int64_t maxb = rnd() % 2 ? rr(1, 64) : size;
            CHECK_RC(dt_iter_next_strided(&it, sd, (int)rr(1, 4), maxb, &nd, &nb), FMPL_SUCCESS);
            CHECK(nd >= 1 && nb >= 1 && nb <= maxb);
            for (int i = 0; i < nd; i++)
                for (int64_t j = 0; j < sd[i].count; j++) {
                    CHECK(memcmp(sd[i].addr + j * sd[i].stride, want + pos + sum,
                                 (size_t)sd[i].blocklen) == 0);
                    sum += sd[i].blocklen;
                }
            CHECK(sum == nb);
            pos += nb;
        }
        CHECK(pos == size);
    }
    /* one strided piece for the whole stream, when the engine says so */
    dt_strided_t one;
    if (dt_get_strided(t, count, b.base, &one)) {
        CHECK(one.count * one.blocklen == size);
        for (int64_t j = 0; j < one.count; j++)
            CHECK(memcmp(one.addr + j * one.stride, want + j * one.blocklen,
                         (size_t)one.blocklen) == 0);
    }
    if (dt_is_contig(t, count) && size > 0)
        CHECK(memcmp(b.base + dt_true_lb(t), want, (size_t)size) == 0);

    /* elements in the first n bytes */
    for (int rep = 0; rep < 8; rep++) {
        int64_t n = rr(0, size + 3);
        CHECK(dt_elements_in(t, n) == ref_elements_in(r, n));
    }

    /* external32 */
    if (!ref_has_kind(r, DT_LONG_DOUBLE) && !ref_has_kind(r, DT_LONG_DOUBLE_COMPLEX) &&
        !ref_has_kind(r, DT_LONG_DOUBLE_INT) && !ref_has_kind(r, DT_CXX_LONG_DOUBLE_COMPLEX)) {
        unsigned char *xw = malloc((size_t)xsize + 1), *xg = malloc((size_t)xsize + 1);
        CHECK(xw && xg);
        ref_pack_ext(r, count, b.base, xw);
        CHECK_RC(dt_pack_external(t, count, b.base, 0, xsize, xg), FMPL_SUCCESS);
        CHECK(memcmp(xw, xg, (size_t)xsize) == 0);
        memset(xg, 0, (size_t)xsize + 1);
        for (int64_t off = 0; off < xsize;) {
            int64_t len = rr(1, 11);
            if (len > xsize - off)
                len = xsize - off;
            CHECK_RC(dt_pack_external(t, count, b.base, off, len, xg + off), FMPL_SUCCESS);
            off += len;
        }
        CHECK(memcmp(xw, xg, (size_t)xsize) == 0);
        /* unpack whole / in pieces splitting elements: re-packing gives the same stream */
        for (int mode = 0; mode < 2 && !ref_overlaps(r, count); mode++) {
            rbuf_fill(&d2, mode ? 0 : 0x77);
            if (mode == 0) {
                CHECK_RC(dt_unpack_external(t, count, d2.base, 0, xsize, xw), FMPL_SUCCESS);
            } else {
                for (int64_t off = 0; off < xsize;) {
                    int64_t len = rr(1, 7);
                    if (len > xsize - off)
                        len = xsize - off;
                    CHECK_RC(dt_unpack_external(t, count, d2.base, off, len, xw + off),
                             FMPL_SUCCESS);
                    off += len;
                }
            }
            CHECK_RC(dt_pack_external(t, count, d2.base, 0, xsize, xg), FMPL_SUCCESS);
            CHECK(memcmp(xw, xg, (size_t)xsize) == 0);
            rbuf_fill(&d1, mode ? 0 : 0x77);
            ref_unpack_ext(r, count, d1.base, xw);
            CHECK(memcmp(d1.mem, d2.mem, (size_t)d1.len) == 0);
        }
        free(xw);
        free(xg);
    }
    free(want);
    free(got);
    free(b.mem);
    free(d1.mem);
    free(d2.mem);
}
