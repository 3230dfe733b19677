/* dt.c — basic kinds, the layout tree (building and normalising), constructors,
 * reference counting and queries. Data movement is in dt_walk.c. */
#include <complex.h>
#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <wchar.h>

#include "dt/dt_impl.h"

#define BASE_MIN_(a, b) ((a) < (b) ? (a) : (b))
#define BASE_MAX_(a, b) ((a) > (b) ? (a) : (b))

/* ------------------------------------------------------------------ kinds */

#define K(name, T, ext)                                                                            \
    {                                                                                              \
        name, (int)sizeof(T), (int)_Alignof(T), ext                                                \
    }
struct pfi {
    float a;
    int b;
};
struct pdi {
    double a;
    int b;
};
struct pli {
    long a;
    int b;
};
struct p2i {
    int a;
    int b;
};
struct psi {
    short a;
    int b;
};
struct pldi {
    long double a;
    int b;
};
struct p2f {
    float a, b;
};
struct p2d {
    double a, b;
};

const dt_kind_info_t dt_kinds_[DT_NKINDS] = {
    [DT_CHAR] = K("char", char, 1),
    [DT_SIGNED_CHAR] = K("signed char", signed char, 1),
    [DT_UNSIGNED_CHAR] = K("unsigned char", unsigned char, 1),
    [DT_SHORT] = K("short", short, 2),
    [DT_UNSIGNED_SHORT] = K("unsigned short", unsigned short, 2),
    [DT_INT] = K("int", int, 4),
    [DT_UNSIGNED] = K("unsigned", unsigned, 4),
    [DT_LONG] = K("long", long, 4),
    [DT_UNSIGNED_LONG] = K("unsigned long", unsigned long, 4),
    [DT_LONG_LONG] = K("long long", long long, 8),
    [DT_UNSIGNED_LONG_LONG] = K("unsigned long long", unsigned long long, 8),
    [DT_FLOAT] = K("float", float, 4),
    [DT_DOUBLE] = K("double", double, 8),
    [DT_LONG_DOUBLE] = K("long double", long double, 16),
    [DT_WCHAR] = K("wchar_t", wchar_t, 4),
    [DT_INT8] = K("int8_t", int8_t, 1),
    [DT_INT16] = K("int16_t", int16_t, 2),
    [DT_INT32] = K("int32_t", int32_t, 4),
    [DT_INT64] = K("int64_t", int64_t, 8),
    [DT_UINT8] = K("uint8_t", uint8_t, 1),
    [DT_UINT16] = K("uint16_t", uint16_t, 2),
    [DT_UINT32] = K("uint32_t", uint32_t, 4),
    [DT_UINT64] = K("uint64_t", uint64_t, 8),
    [DT_BOOL] = K("_Bool", _Bool, 1),
    [DT_FLOAT_COMPLEX] = K("float _Complex", float _Complex, 8),
    [DT_DOUBLE_COMPLEX] = K("double _Complex", double _Complex, 16),
    [DT_LONG_DOUBLE_COMPLEX] = K("long double _Complex", long double _Complex, 32),
    [DT_BYTE] = K("byte", unsigned char, 1),
    [DT_PACKED] = K("packed", unsigned char, 1),
    [DT_AINT] = K("aint", intptr_t, 8),
    [DT_OFFSET] = K("offset", int64_t, 8),
    [DT_COUNT] = K("count", int64_t, 8),
    [DT_CXX_BOOL] = K("c++ bool", _Bool, 1),
    [DT_CXX_FLOAT_COMPLEX] = K("c++ float complex", float _Complex, 8),
    [DT_CXX_DOUBLE_COMPLEX] = K("c++ double complex", double _Complex, 16),
    [DT_CXX_LONG_DOUBLE_COMPLEX] = K("c++ long double complex", long double _Complex, 32),
    [DT_F_CHARACTER] = K("CHARACTER", char, 1),
    [DT_F_LOGICAL] = K("LOGICAL", int32_t, 4),
    [DT_F_INTEGER] = K("INTEGER", int32_t, 4),
    [DT_F_REAL] = K("REAL", float, 4),
    [DT_F_DOUBLE_PRECISION] = K("DOUBLE PRECISION", double, 8),
    [DT_F_COMPLEX] = K("COMPLEX", float _Complex, 8),
    [DT_F_DOUBLE_COMPLEX] = K("DOUBLE COMPLEX", double _Complex, 16),
    [DT_F_INTEGER1] = K("INTEGER*1", int8_t, 1),
    [DT_F_INTEGER2] = K("INTEGER*2", int16_t, 2),
    [DT_F_INTEGER4] = K("INTEGER*4", int32_t, 4),
    [DT_F_INTEGER8] = K("INTEGER*8", int64_t, 8),
    [DT_F_REAL4] = K("REAL*4", float, 4),
    [DT_F_REAL8] = K("REAL*8", double, 8),
    [DT_F_COMPLEX8] = K("COMPLEX*8", float _Complex, 8),
    [DT_F_COMPLEX16] = K("COMPLEX*16", double _Complex, 16),
    [DT_FLOAT_INT] = K("float_int", struct pfi, 8),
    [DT_DOUBLE_INT] = K("double_int", struct pdi, 12),
    [DT_LONG_INT] = K("long_int", struct pli, 8),
    [DT_2INT] = K("2int", struct p2i, 8),
    [DT_SHORT_INT] = K("short_int", struct psi, 6),
    [DT_LONG_DOUBLE_INT] = K("long_double_int", struct pldi, 20),
    [DT_F_2REAL] = K("2REAL", struct p2f, 8),
    [DT_F_2DOUBLE_PRECISION] = K("2DOUBLE PRECISION", struct p2d, 16),
    [DT_F_2INTEGER] = K("2INTEGER", struct p2i, 8),
};
#undef K

const dt_kind_info_t *dt_kind_info(int k)
{
    if (k < 0 || k >= DT_NKINDS)
        return NULL;
    return &dt_kinds_[k];
}

/* ------------------------------------------------------- signature hashes */

#define HP ((1ull << 61) - 1)
#define HB 0x1F3D5B79A3C7E4Bull

static uint64_t hmul(uint64_t a, uint64_t b)
{
    __uint128_t x = (__uint128_t)a * b;
    uint64_t lo = (uint64_t)(x & HP), hi = (uint64_t)(x >> 61);
    uint64_t r = lo + hi;
    while (r >= HP)
        r -= HP;
    return r;
}

static uint64_t hadd(uint64_t a, uint64_t b)
{
    uint64_t r = a + b;
    return r >= HP ? r - HP : r;
}

static uint64_t hpow(uint64_t b, int64_t n)
{
    uint64_t r = 1;
    while (n > 0) {
        if (n & 1)
            r = hmul(r, b);
        b = hmul(b, b);
        n >>= 1;
    }
    return r;
}

uint64_t dt_hash_concat(uint64_t h1, uint64_t h2, int64_t n2)
{
    return hadd(hmul(h1, hpow(HB, n2)), h2);
}

uint64_t dt_hash_repeat(uint64_t h, int64_t n, int64_t count)
{
    uint64_t x = hpow(HB, n), s = 0, p = 1, bs = 1, bp = x;
    while (count > 0) {
        if (count & 1) {
            s = hadd(s, hmul(p, bs));
            p = hmul(p, bp);
        }
        bs = hadd(bs, hmul(bp, bs));
        bp = hmul(bp, bp);
        count >>= 1;
    }
    return hmul(h, s);
}

static uint64_t kind_hash(int k)
{
    return ((uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull) % HP;
}

/* ------------------------------------------------------------------ nodes */

static dt_node_t unit_leaf[DT_NBASIC]; /* one element of each basic kind, immortal */

static void node_retain(dt_node_t *n)
{
    if (n && atomic_load_explicit(&n->refs, memory_order_relaxed) >= 0)
        atomic_fetch_add_explicit(&n->refs, 1, memory_order_relaxed);
}

static void node_release(dt_node_t *n)
{
    if (!n || atomic_load_explicit(&n->refs, memory_order_relaxed) < 0)
        return;
    if (atomic_fetch_sub_explicit(&n->refs, 1, memory_order_acq_rel) != 1)
        return;
    switch (n->type) {
    case DT_N_LEAF: node_release(n->u.leaf.orig); break;
    case DT_N_VEC: node_release(n->u.vec.child); break;
    case DT_N_IDX:
        if (n->u.idx.kids) {
            for (int64_t b = 0; b < n->u.idx.n; b++)
                node_release(n->u.idx.kids[b]);
        } else {
            node_release(n->u.idx.child);
        }
        free(n->u.idx.off); /* one allocation holds every array */
        break;
    }
    free(n);
}

static dt_node_t *node_new(int type)
{
    dt_node_t *n = calloc(1, sizeof *n);
    if (n) {
        atomic_init(&n->refs, 1);
        n->type = type;
    }
    return n;
}

static dt_node_t *leaf_hom(int kind, int64_t nel, int64_t disp)
{
    if (nel == 1 && disp == 0) {
        node_retain(&unit_leaf[kind]);
        return &unit_leaf[kind];
    }
    dt_node_t *n = node_new(DT_N_LEAF);
    if (!n)
        return NULL;
    n->kind = kind;
    n->disp = disp;
    n->size[0] = nel * dt_kinds_[kind].size;
    n->size[1] = nel * dt_kinds_[kind].ext_size;
    n->nelem = nel;
    n->hash = dt_hash_repeat(kind_hash(kind), 1, nel);
    return n;
}

/* A mixed leaf over orig (borrowed), whose data starts at orig-instance offset 0. */
static dt_node_t *leaf_mixed(dt_node_t *orig, int64_t disp)
{
    dt_node_t *n = node_new(DT_N_LEAF);
    if (!n)
        return NULL;
    n->kind = DT_MIXED;
    n->disp = disp;
    n->size[0] = orig->size[0];
    n->size[1] = orig->size[1];
    n->nelem = orig->nelem;
    n->hash = orig->hash;
    node_retain(orig);
    n->u.leaf.orig = orig;
    return n;
}

static dt_node_t *vec_new(int64_t count, int64_t stride, dt_node_t *child, int64_t disp)
{
    dt_node_t *n = node_new(DT_N_VEC);
    if (!n)
        return NULL;
    n->disp = disp;
    n->size[0] = count * child->size[0];
    n->size[1] = count * child->size[1];
    n->nelem = count * child->nelem;
    n->hash = dt_hash_repeat(child->hash, child->nelem, count);
    n->u.vec.count = count;
    n->u.vec.stride = stride;
    node_retain(child);
    n->u.vec.child = child;
    return n;
}

static int is_dense_leaf(const dt_node_t *n, int64_t cnt, int64_t kext)
{
    return n->type == DT_N_LEAF && (cnt == 1 || kext == n->size[0]);
}

static int same_kid(const dt_node_t *a, const dt_node_t *b)
{
    if (a == b)
        return 1;
    return a->type == DT_N_LEAF && b->type == DT_N_LEAF && a->kind >= 0 && a->kind == b->kind &&
           a->nelem == b->nelem && a->disp == b->disp;
}

/* A copy of n (borrowed) displaced by d more bytes. */
static dt_node_t *shift(dt_node_t *n, int64_t d)
{
    if (d == 0) {
        node_retain(n);
        return n;
    }
    if (n->type == DT_N_LEAF && n->kind >= 0)
        return leaf_hom(n->kind, n->nelem, n->disp + d);
    dt_node_t *c = node_new(n->type);
    if (!c)
        return NULL;
    *c = *n;
    atomic_init(&c->refs, 1);
    c->disp = n->disp + d;
    if (n->type == DT_N_LEAF) {
        node_retain(n->u.leaf.orig);
    } else if (n->type == DT_N_VEC) {
        node_retain(n->u.vec.child);
    } else {
        int64_t nb = n->u.idx.n, words = 2 * nb + 2 * (nb + 1) + (n->u.idx.kids ? 2 * nb : 0);
        int64_t *mem = malloc((size_t)words * sizeof(int64_t));
        if (!mem) {
            free(c);
            return NULL;
        }
        memcpy(mem, n->u.idx.off, (size_t)words * sizeof(int64_t));
        c->u.idx.off = mem;
        c->u.idx.cnt = mem + nb;
        c->u.idx.psum[0] = mem + 2 * nb;
        c->u.idx.psum[1] = mem + 3 * nb + 1;
        if (n->u.idx.kids) {
            c->u.idx.kexts = mem + 4 * nb + 2;
            c->u.idx.kids = (dt_node_t **)(mem + 5 * nb + 2);
            for (int64_t b = 0; b < nb; b++)
                node_retain(c->u.idx.kids[b]);
        } else {
            node_retain(c->u.idx.child);
        }
    }
    return c;
}

/* cnt instances of kid (borrowed) at i * stride: the normalised node (new reference). */
static dt_node_t *rep(int64_t cnt, int64_t stride, dt_node_t *kid)
{
    if (cnt == 1) {
        node_retain(kid);
        return kid;
    }
    if (kid->type == DT_N_LEAF && stride == kid->size[0]) {
        if (kid->kind >= 0)
            return leaf_hom(kid->kind, kid->nelem * cnt, kid->disp);
        dt_node_t *k0 = shift(kid, -kid->disp);
        dt_node_t *v = k0 ? vec_new(cnt, stride, k0, 0) : NULL;
        dt_node_t *l = v ? leaf_mixed(v, kid->disp) : NULL;
        node_release(k0);
        node_release(v);
        return l;
    }
    if (kid->type == DT_N_VEC && kid->u.vec.count * kid->u.vec.stride == stride)
        return vec_new(cnt * kid->u.vec.count, kid->u.vec.stride, kid->u.vec.child, kid->disp);
    return vec_new(cnt, stride, kid, 0);
}

typedef struct ent {
    int64_t off, cnt;
    dt_node_t *kid; /* borrowed (or owned through the builder's list) */
    int64_t kext;
} ent_t;

/* An IDX node over e[0..n) as given (no normalisation). */
static dt_node_t *idx_new(const ent_t *e, int64_t n)
{
    int shared = 1;
    for (int64_t b = 1; b < n && shared; b++)
        shared = same_kid(e[b].kid, e[0].kid) && e[b].kext == e[0].kext;
    dt_node_t *x = node_new(DT_N_IDX);
    int64_t words = 2 * n + 2 * (n + 1) + (shared ? 0 : 2 * n);
    int64_t *mem = malloc((size_t)words * sizeof(int64_t));
    if (!x || !mem) {
        free(x);
        free(mem);
        return NULL;
    }
    x->u.idx.n = n;
    x->u.idx.off = mem;
    x->u.idx.cnt = mem + n;
    x->u.idx.psum[0] = mem + 2 * n;
    x->u.idx.psum[1] = mem + 3 * n + 1;
    if (shared) {
        x->u.idx.child = e[0].kid;
        x->u.idx.cext = e[0].kext;
        node_retain(e[0].kid);
    } else {
        x->u.idx.kexts = mem + 4 * n + 2;
        x->u.idx.kids = (dt_node_t **)(mem + 5 * n + 2);
    }
    int64_t s0 = 0, s1 = 0, nel = 0;
    uint64_t h = 0;
    for (int64_t b = 0; b < n; b++) {
        x->u.idx.off[b] = e[b].off;
        x->u.idx.cnt[b] = e[b].cnt;
        x->u.idx.psum[0][b] = s0;
        x->u.idx.psum[1][b] = s1;
        if (!shared) {
            x->u.idx.kids[b] = e[b].kid;
            x->u.idx.kexts[b] = e[b].kext;
            node_retain(e[b].kid);
        }
        const dt_node_t *k = e[b].kid;
        s0 += e[b].cnt * k->size[0];
        s1 += e[b].cnt * k->size[1];
        int64_t bn = e[b].cnt * k->nelem;
        h = dt_hash_concat(h, dt_hash_repeat(k->hash, k->nelem, e[b].cnt), bn);
        nel += bn;
    }
    x->u.idx.psum[0][n] = s0;
    x->u.idx.psum[1][n] = s1;
    x->size[0] = s0;
    x->size[1] = s1;
    x->nelem = nel;
    x->hash = h;
    return x;
}

/* Builds the normalised node of the block list e[0..n) (modified in place). Returns
 * FMPL_SUCCESS with *out NULL when the list holds no data. */
static int build_list(ent_t *e, int64_t n, dt_node_t **out)
{
    dt_node_t **owned = NULL;
    int64_t nowned = 0, m = 0;
    int rc = FMPL_SUCCESS;
    *out = NULL;
    /* canonical form, dropping empty blocks */
    for (int64_t i = 0; i < n; i++) {
        ent_t x = e[i];
        if (x.cnt == 0 || x.kid == NULL || x.kid->size[0] == 0)
            continue;
        if (x.kid->type == DT_N_LEAF && x.kid->kind >= 0 && is_dense_leaf(x.kid, x.cnt, x.kext)) {
            x.off += x.kid->disp;
            x.cnt *= x.kid->nelem;
            x.kext = dt_kinds_[x.kid->kind].size;
            x.kid = &unit_leaf[x.kid->kind];
        }
        /* merge with the previous block when it continues it */
        if (m > 0) {
            ent_t *p = &e[m - 1];
            if (same_kid(p->kid, x.kid) && p->kext == x.kext &&
                p->off + p->cnt * p->kext == x.off) {
                p->cnt += x.cnt;
                continue;
            }
        }
        e[m++] = x;
    }
    n = m;
    /* runs of adjacent dense leaves of different kinds become one mixed leaf */
    m = 0;
    for (int64_t i = 0; i < n;) {
        int64_t j = i + 1;
        if (is_dense_leaf(e[i].kid, e[i].cnt, e[i].kext)) {
            int64_t end = e[i].off + e[i].kid->disp + e[i].cnt * e[i].kid->size[0];
            while (j < n && is_dense_leaf(e[j].kid, e[j].cnt, e[j].kext) &&
                   e[j].off + e[j].kid->disp == end) {
                end += e[j].cnt * e[j].kid->size[0];
                j++;
            }
        }
        if (j - i >= 2) {
            int64_t start = e[i].off + e[i].kid->disp;
            for (int64_t k = i; k < j; k++)
                e[k].off -= start;
            dt_node_t *orig = idx_new(e + i, j - i);
            dt_node_t *l = orig ? leaf_mixed(orig, 0) : NULL;
            node_release(orig);
            dt_node_t **no = l ? realloc(owned, (size_t)(nowned + 1) * sizeof *owned) : NULL;
            if (!no) {
                node_release(l);
                rc = FMPL_ERR_NOMEM;
                goto done;
            }
            owned = no;
            owned[nowned++] = l;
            e[m++] = (ent_t){start, 1, l, l->size[0]};
        } else {
            e[m++] = e[i];
        }
        i = j;
    }
    n = m;
    if (n == 0)
        goto done;
    int regular = 1;
    for (int64_t b = 1; b < n && regular; b++)
        regular = same_kid(e[b].kid, e[0].kid) && e[b].kext == e[0].kext && e[b].cnt == e[0].cnt &&
                  e[b].off - e[b - 1].off == e[1].off - e[0].off;
    if (regular) {
        dt_node_t *r = rep(e[0].cnt, e[0].kext, e[0].kid);
        dt_node_t *v = r && n > 1 ? rep(n, e[1].off - e[0].off, r) : r;
        if (v != r)
            node_release(r);
        *out = v ? shift(v, e[0].off) : NULL;
        node_release(v);
    } else {
        *out = idx_new(e, n);
    }
    if (!*out)
        rc = FMPL_ERR_NOMEM;
done:
    for (int64_t i = 0; i < nowned; i++)
        node_release(owned[i]);
    free(owned);
    return rc;
}

/* ------------------------------------------------------------------ types */

static pthread_once_t predef_once = PTHREAD_ONCE_INIT;
static dt_t predef[DT_NKINDS];

static void type_free(dt_t *t)
{
    node_release(t->root);
    for (int i = 0; i < t->ntypes; i++)
        dt_release(t->types[i]);
    free(t->ints);
    free(t->aints);
    free(t->types);
    free(t);
}

void dt_retain(dt_t *t)
{
    if (t && !t->predef)
        atomic_fetch_add_explicit(&t->refs, 1, memory_order_relaxed);
}

void dt_release(dt_t *t)
{
    if (!t || t->predef)
        return;
    if (atomic_fetch_sub_explicit(&t->refs, 1, memory_order_acq_rel) == 1)
        type_free(t);
}

int dt_free(dt_t *t)
{
    if (!t || t->predef)
        return FMPL_ERR_TYPE;
    dt_release(t);
    return FMPL_SUCCESS;
}

static dt_t *type_new(void)
{
    dt_t *t = calloc(1, sizeof *t);
    if (t) {
        atomic_init(&t->refs, 1);
        t->kind = -1;
    }
    return t;
}

/* Fills size/nelem/hash from the root. */
static void type_set_root(dt_t *t, dt_node_t *root)
{
    t->root = root;
    t->size = root ? root->size[0] : 0;
    t->ext_size = root ? root->size[1] : 0;
    t->nelem = root ? root->nelem : 0;
    t->hash = root ? root->hash : 0;
}

static int set_contents(dt_t *t, dt_combiner_t c, int ni, const int64_t *ints, int na,
                        const int64_t *aints, int nt, dt_t *const *types)
{
    t->combiner = c;
    if (ni > 0 && !(t->ints = malloc((size_t)ni * sizeof(int64_t))))
        return FMPL_ERR_NOMEM;
    if (na > 0 && !(t->aints = malloc((size_t)na * sizeof(int64_t))))
        return FMPL_ERR_NOMEM;
    if (nt > 0 && !(t->types = malloc((size_t)nt * sizeof(dt_t *))))
        return FMPL_ERR_NOMEM;
    if (ni > 0)
        memcpy(t->ints, ints, (size_t)ni * sizeof(int64_t));
    if (na > 0)
        memcpy(t->aints, aints, (size_t)na * sizeof(int64_t));
    for (int i = 0; i < nt; i++) {
        t->types[i] = types[i];
        dt_retain(types[i]);
    }
    t->nints = ni;
    t->naints = na;
    t->ntypes = nt;
    return FMPL_SUCCESS;
}

static void clear_contents(dt_t *t)
{
    for (int i = 0; i < t->ntypes; i++)
        dt_release(t->types[i]);
    free(t->ints);
    free(t->aints);
    free(t->types);
    t->ints = t->aints = NULL;
    t->types = NULL;
    t->nints = t->naints = t->ntypes = 0;
}

/* Bounds accumulator: blocks of c1 x c2 instances of a type at disp + i*s1 + j*s2. */
typedef struct bnd {
    int any, anyl, anyu, data, align;
    int64_t lb, ub, mlb, mub, tlb, tub;
} bnd_t;

static void bnd_add(bnd_t *b, const dt_t *t, int64_t disp, int64_t c1, int64_t s1, int64_t c2,
                    int64_t s2)
{
    if (c1 <= 0 || c2 <= 0 || (t->size == 0 && !t->lbm && !t->ubm))
        return;
    int64_t a = (c1 - 1) * s1, c = (c2 - 1) * s2;
    int64_t lo = BASE_MIN_(a, 0) + BASE_MIN_(c, 0), hi = BASE_MAX_(a, 0) + BASE_MAX_(c, 0);
    int64_t l = disp + t->lb + lo, u = disp + t->ub + hi;
    if (!b->any || l < b->lb)
        b->lb = l;
    if (!b->any || u > b->ub)
        b->ub = u;
    b->any = 1;
    if (t->lbm && (!b->anyl || l < b->mlb)) {
        b->mlb = l;
        b->anyl = 1;
    }
    if (t->ubm && (!b->anyu || u > b->mub)) {
        b->mub = u;
        b->anyu = 1;
    }
    if (t->size > 0) {
        int64_t tl = disp + t->true_lb + lo, tu = disp + t->true_ub + hi;
        if (!b->data || tl < b->tlb)
            b->tlb = tl;
        if (!b->data || tu > b->tub)
            b->tub = tu;
        b->data = 1;
    }
    if (t->align > b->align)
        b->align = t->align;
}

static void bnd_finish(const bnd_t *b, dt_t *t, int is_struct)
{
    t->lb = b->anyl ? b->mlb : b->any ? b->lb : 0;
    t->ub = b->anyu ? b->mub : b->any ? b->ub : 0;
    t->lbm = b->anyl;
    t->ubm = b->anyu;
    t->true_lb = b->data ? b->tlb : 0;
    t->true_ub = b->data ? b->tub : 0;
    t->align = b->align ? b->align : 1;
    if (is_struct && !b->anyl && !b->anyu && t->align > 1) {
        int64_t ext = t->ub - t->lb, eps = ext % t->align;
        if (eps < 0)
            eps += t->align;
        if (eps)
            t->ub += t->align - eps;
    }
}

/* count x blocklen instances of old, block i at i * sb bytes. */
static int vec_type(int64_t count, int64_t bl, int64_t sb, dt_t *old, dt_t **out)
{
    int64_t n, sz, span;
    if (__builtin_mul_overflow(count, bl, &n) || __builtin_mul_overflow(n, old->size, &sz) ||
        __builtin_mul_overflow(n, old->ext_size, &sz) || __builtin_mul_overflow(count, sb, &span) ||
        __builtin_mul_overflow(bl, old->ub - old->lb, &span))
        return FMPL_ERR_ARG; /* the type would not fit in 64-bit sizes and offsets */
    dt_t *t = type_new();
    if (!t)
        return FMPL_ERR_NOMEM;
    dt_node_t *root = NULL;
    if (count > 0 && bl > 0 && old->root) {
        dt_node_t *in = rep(bl, old->ub - old->lb, old->root);
        root = in ? rep(count, sb, in) : NULL;
        node_release(in);
        if (!root) {
            free(t);
            return FMPL_ERR_NOMEM;
        }
    }
    type_set_root(t, root);
    bnd_t b = {0};
    bnd_add(&b, old, 0, bl, old->ub - old->lb, count, sb);
    bnd_finish(&b, t, 0);
    *out = t;
    return FMPL_SUCCESS;
}

/* Blocks: cnt[i] instances of types[i] (or old) at off[i] bytes. */
static int list_type(int64_t n, const int64_t *cnt, const int64_t *off, dt_t *const *types,
                     dt_t *old, int is_struct, dt_t **out)
{
    ent_t *e = malloc((size_t)(n > 0 ? n : 1) * sizeof *e);
    dt_t *t = type_new();
    if (!e || !t) {
        free(e);
        free(t);
        return FMPL_ERR_NOMEM;
    }
    bnd_t b = {0};
    int64_t total = 0;
    for (int64_t i = 0; i < n; i++) {
        dt_t *ty = types ? types[i] : old;
        int64_t bsz, bext, unit = BASE_MAX_(ty->size, ty->ext_size);
        if (__builtin_mul_overflow(cnt[i], unit, &bsz) ||
            __builtin_add_overflow(total, bsz, &total) ||
            __builtin_mul_overflow(cnt[i], ty->ub - ty->lb, &bext)) {
            free(e);
            free(t);
            return FMPL_ERR_ARG;
        }
        e[i] = (ent_t){off[i], cnt[i], ty->root, ty->ub - ty->lb};
        bnd_add(&b, ty, off[i], cnt[i], ty->ub - ty->lb, 1, 0);
    }
    dt_node_t *root;
    int rc = build_list(e, n, &root);
    free(e);
    if (rc) {
        free(t);
        return rc;
    }
    type_set_root(t, root);
    bnd_finish(&b, t, is_struct);
    *out = t;
    return FMPL_SUCCESS;
}

static int finish(int rc, dt_t *t, dt_combiner_t c, int ni, const int64_t *ints, int na,
                  const int64_t *aints, int nt, dt_t *const *types, dt_t **out)
{
    if (rc)
        return rc;
    rc = set_contents(t, c, ni, ints, na, aints, nt, types);
    if (rc) {
        type_free(t);
        return rc;
    }
    *out = t;
    return FMPL_SUCCESS;
}

#define CHECK_OUT(old)                                                                             \
    do {                                                                                           \
        if (!out)                                                                                  \
            return FMPL_ERR_ARG;                                                                   \
        if (!(old))                                                                                \
            return FMPL_ERR_TYPE;                                                                  \
    } while (0)

int dt_contiguous(int64_t count, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (count < 0)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = vec_type(count, 1, old->ub - old->lb, old, &t);
    return finish(rc, t, DT_COMBINER_CONTIGUOUS, 1, &count, 0, NULL, 1, &old, out);
}

int dt_vector(int64_t count, int64_t blocklen, int64_t stride, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (count < 0 || blocklen < 0)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int64_t sb;
    if (__builtin_mul_overflow(stride, old->ub - old->lb, &sb))
        return FMPL_ERR_ARG;
    int rc = vec_type(count, blocklen, sb, old, &t);
    int64_t ints[3] = {count, blocklen, stride};
    return finish(rc, t, DT_COMBINER_VECTOR, 3, ints, 0, NULL, 1, &old, out);
}

int dt_hvector(int64_t count, int64_t blocklen, int64_t stride_bytes, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (count < 0 || blocklen < 0)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = vec_type(count, blocklen, stride_bytes, old, &t);
    int64_t ints[2] = {count, blocklen};
    return finish(rc, t, DT_COMBINER_HVECTOR, 2, ints, 1, &stride_bytes, 1, &old, out);
}

/* Shared by the four indexed forms: blens (or one blocklen), disps scaled by mul. */
static int indexed_common(int64_t count, const int64_t *blens, int64_t blocklen,
                          const int64_t *disps, int64_t mul, dt_t *old, dt_t **t)
{
    if (count < 0 || (count > 0 && (!disps || (!blens && blocklen < 0))))
        return FMPL_ERR_ARG;
    for (int64_t i = 0; blens && i < count; i++)
        if (blens[i] < 0)
            return FMPL_ERR_ARG;
    int64_t *cnt = malloc((size_t)(2 * count + 1) * sizeof(int64_t));
    if (!cnt)
        return FMPL_ERR_NOMEM;
    int64_t *off = cnt + count;
    for (int64_t i = 0; i < count; i++) {
        cnt[i] = blens ? blens[i] : blocklen;
        if (__builtin_mul_overflow(disps[i], mul, &off[i])) {
            free(cnt);
            return FMPL_ERR_ARG;
        }
    }
    int rc = list_type(count, cnt, off, NULL, old, 0, t);
    free(cnt);
    return rc;
}

/* ints/aints arrays for the contents of the indexed forms. */
static int64_t *concat3(int64_t a, const int64_t *x, int64_t nx, const int64_t *y, int64_t ny)
{
    int64_t *r = malloc((size_t)(1 + nx + ny) * sizeof(int64_t));
    if (!r)
        return NULL;
    r[0] = a;
    if (nx)
        memcpy(r + 1, x, (size_t)nx * sizeof(int64_t));
    if (ny)
        memcpy(r + 1 + nx, y, (size_t)ny * sizeof(int64_t));
    return r;
}

int dt_indexed(int64_t count, const int64_t *blocklens, const int64_t *disps, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (count > 0 && !blocklens)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = indexed_common(count, blocklens, 0, disps, old->ub - old->lb, old, &t);
    if (rc)
        return rc;
    int64_t *ints = concat3(count, blocklens, count, disps, count);
    if (!ints) {
        type_free(t);
        return FMPL_ERR_NOMEM;
    }
    rc = finish(rc, t, DT_COMBINER_INDEXED, (int)(1 + 2 * count), ints, 0, NULL, 1, &old, out);
    free(ints);
    return rc;
}

int dt_hindexed(int64_t count, const int64_t *blocklens, const int64_t *disps_bytes, dt_t *old,
                dt_t **out)
{
    CHECK_OUT(old);
    if (count > 0 && !blocklens)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = indexed_common(count, blocklens, 0, disps_bytes, 1, old, &t);
    if (rc)
        return rc;
    int64_t *ints = concat3(count, blocklens, count, NULL, 0);
    if (!ints) {
        type_free(t);
        return FMPL_ERR_NOMEM;
    }
    rc = finish(rc, t, DT_COMBINER_HINDEXED, (int)(1 + count), ints, (int)count, disps_bytes, 1,
                &old, out);
    free(ints);
    return rc;
}

int dt_indexed_block(int64_t count, int64_t blocklen, const int64_t *disps, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (blocklen < 0)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = indexed_common(count, NULL, blocklen, disps, old->ub - old->lb, old, &t);
    if (rc)
        return rc;
    int64_t *ints = concat3(count, &blocklen, 1, disps, count);
    if (!ints) {
        type_free(t);
        return FMPL_ERR_NOMEM;
    }
    rc = finish(rc, t, DT_COMBINER_INDEXED_BLOCK, (int)(2 + count), ints, 0, NULL, 1, &old, out);
    free(ints);
    return rc;
}

int dt_hindexed_block(int64_t count, int64_t blocklen, const int64_t *disps_bytes, dt_t *old,
                      dt_t **out)
{
    CHECK_OUT(old);
    if (blocklen < 0)
        return FMPL_ERR_ARG;
    dt_t *t = NULL;
    int rc = indexed_common(count, NULL, blocklen, disps_bytes, 1, old, &t);
    int64_t ints[2] = {count, blocklen};
    return finish(rc, t, DT_COMBINER_HINDEXED_BLOCK, 2, ints, (int)count, disps_bytes, 1, &old,
                  out);
}

int dt_struct(int64_t count, const int64_t *blocklens, const int64_t *disps_bytes,
              dt_t *const *types, dt_t **out)
{
    if (!out || count < 0 || (count > 0 && (!blocklens || !disps_bytes || !types)))
        return FMPL_ERR_ARG;
    for (int64_t i = 0; i < count; i++) {
        if (!types[i])
            return FMPL_ERR_TYPE;
        if (blocklens[i] < 0)
            return FMPL_ERR_ARG;
    }
    dt_t *t = NULL;
    int rc = list_type(count, blocklens, disps_bytes, types, NULL, 1, &t);
    if (rc)
        return rc;
    int64_t *ints = concat3(count, blocklens, count, NULL, 0);
    if (!ints) {
        type_free(t);
        return FMPL_ERR_NOMEM;
    }
    rc = finish(rc, t, DT_COMBINER_STRUCT, (int)(1 + count), ints, (int)count, disps_bytes,
                (int)count, types, out);
    free(ints);
    return rc;
}

/* A copy of old's layout (shared root) with fresh contents. */
static dt_t *type_clone(const dt_t *old)
{
    dt_t *t = type_new();
    if (!t)
        return NULL;
    node_retain(old->root);
    t->root = old->root;
    t->size = old->size;
    t->ext_size = old->ext_size;
    t->nelem = old->nelem;
    t->hash = old->hash;
    t->lb = old->lb;
    t->ub = old->ub;
    t->lbm = old->lbm;
    t->ubm = old->ubm;
    t->true_lb = old->true_lb;
    t->true_ub = old->true_ub;
    t->align = old->align;
    return t;
}

int dt_resized(dt_t *old, int64_t lb, int64_t extent, dt_t **out)
{
    CHECK_OUT(old);
    dt_t *t = type_clone(old);
    if (!t)
        return FMPL_ERR_NOMEM;
    t->lb = lb;
    t->ub = lb + extent;
    t->lbm = t->ubm = 1;
    int64_t a[2] = {lb, extent};
    return finish(FMPL_SUCCESS, t, DT_COMBINER_RESIZED, 0, NULL, 2, a, 1, &old, out);
}

int dt_dup(dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    dt_t *t = type_clone(old);
    if (!t)
        return FMPL_ERR_NOMEM;
    t->committed = old->committed;
    return finish(FMPL_SUCCESS, t, DT_COMBINER_DUP, 0, NULL, 0, NULL, 1, &old, out);
}

/* Replaces the contents of an internally built type by the user's constructor. */
static int recontent(dt_t *t, dt_combiner_t c, int ni, const int64_t *ints, dt_t *old, dt_t **out)
{
    clear_contents(t);
    int rc = set_contents(t, c, ni, ints, 0, NULL, 1, &old);
    if (rc) {
        type_free(t);
        return rc;
    }
    *out = t;
    return FMPL_SUCCESS;
}

int dt_subarray(int ndims, const int64_t *sizes, const int64_t *subsizes, const int64_t *starts,
                int order, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (ndims < 1 || !sizes || !subsizes || !starts ||
        (order != DT_ORDER_C && order != DT_ORDER_FORTRAN))
        return FMPL_ERR_ARG;
    for (int d = 0; d < ndims; d++)
        if (sizes[d] < 1 || subsizes[d] < 0 || starts[d] < 0 || starts[d] + subsizes[d] > sizes[d])
            return FMPL_ERR_ARG;
    /* The standard's recursion, fastest dimension first: Subarray(1) = resized(lb 0,
     * extent size * ex) of subsize copies of the previous type at start * ex. */
    dt_t *cur = old;
    dt_retain(cur);
    for (int i = 0; i < ndims; i++) {
        int d = order == DT_ORDER_FORTRAN ? i : ndims - 1 - i;
        int64_t ex = cur->ub - cur->lb, disp = starts[d] * ex;
        dt_t *h, *r;
        int rc = dt_hindexed(1, &subsizes[d], &disp, cur, &h);
        if (!rc) {
            rc = dt_resized(h, 0, sizes[d] * ex, &r);
            dt_release(h);
        }
        dt_release(cur);
        if (rc)
            return rc;
        cur = r;
    }
    int64_t *ints = malloc((size_t)(2 + 3 * ndims) * sizeof(int64_t));
    if (!ints) {
        dt_release(cur);
        return FMPL_ERR_NOMEM;
    }
    ints[0] = ndims;
    memcpy(ints + 1, sizes, (size_t)ndims * sizeof(int64_t));
    memcpy(ints + 1 + ndims, subsizes, (size_t)ndims * sizeof(int64_t));
    memcpy(ints + 1 + 2 * ndims, starts, (size_t)ndims * sizeof(int64_t));
    ints[1 + 3 * ndims] = order;
    int rc = recontent(cur, DT_COMBINER_SUBARRAY, 2 + 3 * ndims, ints, old, out);
    free(ints);
    return rc;
}

/* The standard's cyclic(darg, gsize, r, psize, oldtype) (BLOCK and NONE map onto it). */
static int darray_cyclic(int64_t darg, int64_t gsize, int64_t r, int64_t psize, dt_t *old,
                         dt_t **out)
{
    int64_t ex = old->ub - old->lb;
    int64_t nblocks = (gsize + darg - 1) / darg, count = nblocks / psize;
    if (r < nblocks - count * psize)
        count++;
    int64_t last, in_last = gsize % (psize * darg);
    if (in_last == 0) {
        last = darg;
    } else {
        last = in_last - darg * r;
        if (last > darg)
            last = darg;
        if (last <= 0)
            last = darg;
    }
    dt_t *data = NULL;
    int rc;
    if (count == 0) {
        rc = dt_contiguous(0, old, &data);
    } else {
        dt_t *v;
        rc = dt_hvector(count - 1, darg, psize * darg * ex, old, &v);
        if (rc)
            return rc;
        int64_t bl[2] = {1, last};
        int64_t disp[2] = {r * darg * ex, r * darg * ex + (count - 1) * psize * darg * ex};
        dt_t *ty[2] = {v, old};
        rc = dt_struct(2, bl, disp, ty, &data);
        dt_release(v);
    }
    if (rc)
        return rc;
    rc = dt_resized(data, 0, gsize * ex, out);
    dt_release(data);
    return rc;
}

int dt_darray(int size, int rank, int ndims, const int64_t *gsizes, const int *distribs,
              const int64_t *dargs, const int64_t *psizes, int order, dt_t *old, dt_t **out)
{
    CHECK_OUT(old);
    if (size < 1 || rank < 0 || rank >= size || ndims < 1 || !gsizes || !distribs || !dargs ||
        !psizes || (order != DT_ORDER_C && order != DT_ORDER_FORTRAN))
        return FMPL_ERR_ARG;
    int64_t prod = 1;
    for (int d = 0; d < ndims; d++) {
        if (gsizes[d] < 1 || psizes[d] < 1)
            return FMPL_ERR_ARG;
        if (dargs[d] != DT_DISTRIBUTE_DFLT_DARG && dargs[d] < 1)
            return FMPL_ERR_ARG;
        switch (distribs[d]) {
        case DT_DISTRIBUTE_BLOCK:
            if (dargs[d] != DT_DISTRIBUTE_DFLT_DARG && dargs[d] * psizes[d] < gsizes[d])
                return FMPL_ERR_ARG;
            break;
        case DT_DISTRIBUTE_CYCLIC: break;
        case DT_DISTRIBUTE_NONE:
            if (psizes[d] != 1)
                return FMPL_ERR_ARG;
            break;
        default: return FMPL_ERR_ARG;
        }
        prod *= psizes[d];
    }
    if (prod != size)
        return FMPL_ERR_ARG;
    /* coordinates of rank in the row-major process grid */
    int64_t *coord = malloc((size_t)ndims * sizeof(int64_t));
    if (!coord)
        return FMPL_ERR_NOMEM;
    for (int d = ndims - 1, rr = rank; d >= 0; d--) {
        coord[d] = rr % psizes[d];
        rr = (int)(rr / psizes[d]);
    }
    dt_t *cur = old;
    dt_retain(cur);
    int rc = FMPL_SUCCESS;
    for (int i = 0; i < ndims && !rc; i++) {
        int d = order == DT_ORDER_FORTRAN ? i : ndims - 1 - i;
        int64_t darg = dargs[d], r = coord[d], ps = psizes[d];
        switch (distribs[d]) {
        case DT_DISTRIBUTE_BLOCK:
            if (darg == DT_DISTRIBUTE_DFLT_DARG)
                darg = (gsizes[d] + ps - 1) / ps;
            break;
        case DT_DISTRIBUTE_CYCLIC:
            if (darg == DT_DISTRIBUTE_DFLT_DARG)
                darg = 1;
            break;
        default: darg = gsizes[d]; break;
        }
        dt_t *nt;
        rc = darray_cyclic(darg, gsizes[d], r, ps, cur, &nt);
        dt_release(cur);
        cur = rc ? NULL : nt;
    }
    free(coord);
    if (rc)
        return rc;
    int n = 4 + 4 * ndims;
    int64_t *ints = malloc((size_t)n * sizeof(int64_t));
    if (!ints) {
        dt_release(cur);
        return FMPL_ERR_NOMEM;
    }
    ints[0] = size;
    ints[1] = rank;
    ints[2] = ndims;
    for (int d = 0; d < ndims; d++) {
        ints[3 + d] = gsizes[d];
        ints[3 + ndims + d] = distribs[d];
        ints[3 + 2 * ndims + d] = dargs[d];
        ints[3 + 3 * ndims + d] = psizes[d];
    }
    ints[3 + 4 * ndims] = order;
    rc = recontent(cur, DT_COMBINER_DARRAY, n, ints, old, out);
    free(ints);
    return rc;
}

int dt_commit(dt_t *t)
{
    if (!t)
        return FMPL_ERR_TYPE;
    if (!t->predef)
        t->committed = 1;
    return FMPL_SUCCESS;
}

int dt_is_committed(const dt_t *t)
{
    return t ? t->committed : 0;
}

/* ------------------------------------------------------------- predefined */

static void predef_init(void)
{
    for (int k = 0; k < DT_NBASIC; k++) {
        dt_node_t *n = &unit_leaf[k];
        atomic_init(&n->refs, -1);
        n->type = DT_N_LEAF;
        n->kind = k;
        n->size[0] = dt_kinds_[k].size;
        n->size[1] = dt_kinds_[k].ext_size;
        n->nelem = 1;
        n->hash = kind_hash(k);
        dt_t *t = &predef[k];
        atomic_init(&t->refs, -1);
        t->predef = 1;
        t->committed = 1;
        t->kind = k;
        t->align = dt_kinds_[k].align;
        type_set_root(t, n);
        t->ub = t->true_ub = dt_kinds_[k].size;
        t->combiner = DT_COMBINER_NAMED;
    }
    static const struct {
        int kind, a, b;
        int64_t offb;
    } pairs[] = {
        {DT_FLOAT_INT, DT_FLOAT, DT_INT, offsetof(struct pfi, b)},
        {DT_DOUBLE_INT, DT_DOUBLE, DT_INT, offsetof(struct pdi, b)},
        {DT_LONG_INT, DT_LONG, DT_INT, offsetof(struct pli, b)},
        {DT_2INT, DT_INT, DT_INT, offsetof(struct p2i, b)},
        {DT_SHORT_INT, DT_SHORT, DT_INT, offsetof(struct psi, b)},
        {DT_LONG_DOUBLE_INT, DT_LONG_DOUBLE, DT_INT, offsetof(struct pldi, b)},
        {DT_F_2REAL, DT_F_REAL, DT_F_REAL, offsetof(struct p2f, b)},
        {DT_F_2DOUBLE_PRECISION, DT_F_DOUBLE_PRECISION, DT_F_DOUBLE_PRECISION,
         offsetof(struct p2d, b)},
        {DT_F_2INTEGER, DT_F_INTEGER, DT_F_INTEGER, offsetof(struct p2i, b)},
    };
    for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
        int64_t bl[2] = {1, 1}, disp[2] = {0, pairs[i].offb};
        dt_t *ty[2] = {&predef[pairs[i].a], &predef[pairs[i].b]}, *s;
        if (dt_struct(2, bl, disp, ty, &s))
            abort(); /* out of memory at start-up */
        int k = pairs[i].kind;
        dt_t *t = &predef[k];
        *t = *s;
        free(s);
        clear_contents(t);
        atomic_init(&t->refs, -1);
        t->predef = 1;
        t->committed = 1;
        t->kind = k;
        t->lb = 0;
        t->ub = dt_kinds_[k].size; /* sizeof the C struct, trailing padding included */
        t->lbm = t->ubm = 0;
        t->align = dt_kinds_[k].align;
        t->combiner = DT_COMBINER_NAMED;
    }
}

dt_t *dt_basic(int k)
{
    if (k < 0 || k >= DT_NKINDS)
        return NULL;
    pthread_once(&predef_once, predef_init);
    return &predef[k];
}

/* ---------------------------------------------------------------- queries */

int64_t dt_size(const dt_t *t)
{
    return t ? t->size : 0;
}
int64_t dt_extent(const dt_t *t)
{
    return t ? t->ub - t->lb : 0;
}
int64_t dt_lb(const dt_t *t)
{
    return t ? t->lb : 0;
}
int64_t dt_ub(const dt_t *t)
{
    return t ? t->ub : 0;
}
int64_t dt_true_lb(const dt_t *t)
{
    return t ? t->true_lb : 0;
}
int64_t dt_true_extent(const dt_t *t)
{
    return t ? t->true_ub - t->true_lb : 0;
}
int64_t dt_nelem(const dt_t *t)
{
    return t ? t->nelem : 0;
}
int64_t dt_ext32_size(const dt_t *t)
{
    return t ? t->ext_size : 0;
}
int dt_align(const dt_t *t)
{
    return t ? t->align : 1;
}
int dt_kind(const dt_t *t)
{
    return t ? t->kind : -1;
}

int dt_is_contig(const dt_t *t, int64_t count)
{
    if (!t || count < 0)
        return 0;
    if (count == 0 || t->size == 0)
        return 1;
    if (t->root->type != DT_N_LEAF)
        return 0;
    return count == 1 || t->ub - t->lb == t->size;
}

static int64_t elems_rep(const dt_node_t *n, int64_t nbytes);

static int64_t elems_one(const dt_node_t *n, int64_t b) /* b < n->size[0] */
{
    switch (n->type) {
    case DT_N_LEAF:
        if (n->kind >= 0)
            return b / dt_kinds_[n->kind].size;
        return elems_one(n->u.leaf.orig, b);
    case DT_N_VEC: return elems_rep(n->u.vec.child, b);
    default: {
        int64_t r = 0;
        for (int64_t i = 0; i < n->u.idx.n; i++) {
            const dt_node_t *k = n->u.idx.kids ? n->u.idx.kids[i] : n->u.idx.child;
            int64_t bs = n->u.idx.cnt[i] * k->size[0];
            if (b < bs)
                return r + elems_rep(k, b);
            r += n->u.idx.cnt[i] * k->nelem;
            b -= bs;
        }
        return r;
    }
    }
}

static int64_t elems_rep(const dt_node_t *n, int64_t nbytes)
{
    int64_t full = nbytes / n->size[0], rest = nbytes - full * n->size[0];
    return full * n->nelem + (rest ? elems_one(n, rest) : 0);
}

int64_t dt_elements_in(const dt_t *t, int64_t nbytes)
{
    if (!t || nbytes < 0)
        return -1;
    if (!t->root)
        return 0;
    return elems_rep(t->root, nbytes);
}

void dt_signature(const dt_t *t, int64_t count, dt_sig_t *out)
{
    if (!t || count < 0) {
        *out = (dt_sig_t){0, 0, 0};
        return;
    }
    out->hash = dt_hash_repeat(t->hash, t->nelem, count);
    out->nelem = t->nelem * count;
    out->size = t->size * count;
}

int dt_sig_equal(const dt_sig_t *a, const dt_sig_t *b)
{
    return a->hash == b->hash && a->nelem == b->nelem && a->size == b->size;
}

int dt_get_contents(const dt_t *t, dt_combiner_t *combiner, int *nints, const int64_t **ints,
                    int *naints, const int64_t **aints, int *ntypes, dt_t *const **types)
{
    if (!t)
        return FMPL_ERR_TYPE;
    if (combiner)
        *combiner = t->combiner;
    if (nints)
        *nints = t->nints;
    if (ints)
        *ints = t->ints;
    if (naints)
        *naints = t->naints;
    if (aints)
        *aints = t->aints;
    if (ntypes)
        *ntypes = t->ntypes;
    if (types)
        *types = t->types;
    return FMPL_SUCCESS;
}
