/* dt_random.c — randomized nested datatypes against the per-element reference
 * (dt_ref.c): every constructor nested up to four deep with negative strides and
 * displacements, resized bounds and zero counts; pack/unpack whole and in random pieces,
 * both iterators resumed at random offsets, external32, element counts; subarray and
 * darray against per-element index arithmetic for every rank; typed copy between two
 * layouts with the same signature. Arguments: number of random types (default 5000), random seed.
 */
#include "dt_ref.c"

static const int gen_kinds[] = {DT_CHAR,
                                DT_SHORT,
                                DT_INT,
                                DT_DOUBLE,
                                DT_FLOAT,
                                DT_LONG,
                                DT_FLOAT_INT,
                                DT_DOUBLE_INT,
                                DT_SHORT_INT,
                                DT_2INT,
                                DT_LONG_DOUBLE,
                                DT_FLOAT_COMPLEX,
                                DT_BOOL,
                                DT_INT64,
                                DT_UNSIGNED_LONG,
                                DT_WCHAR,
                                DT_LONG_INT,
                                DT_DOUBLE_COMPLEX,
                                DT_UINT16,
                                DT_LONG_DOUBLE_INT,
                                DT_F_2DOUBLE_PRECISION,
                                DT_F_COMPLEX,
                                DT_CXX_DOUBLE_COMPLEX,
                                DT_F_2REAL,
                                DT_F_INTEGER8,
                                DT_CXX_LONG_DOUBLE_COMPLEX};
#define NGEN_KINDS ((int)(sizeof gen_kinds / sizeof gen_kinds[0]))

static void ref_subarray(int nd, const int64_t *sz, const int64_t *sub, const int64_t *st,
                         int order, const rtype_t *t, rtype_t *r)
{
    rtype_t x = {0};
    int64_t ext = ref_extent(t), total = 1, idx[8] = {0}, nsub = 1;
    for (int d = 0; d < nd; d++) {
        total *= sz[d];
        nsub *= sub[d];
    }
    for (int64_t k = 0; k < nsub; k++) {
        /* idx = k-th tuple, fastest dimension varying fastest */
        int64_t q = k, lin = 0, mult = 1;
        for (int i = 0; i < nd; i++) {
            int d = order == DT_ORDER_FORTRAN ? i : nd - 1 - i;
            idx[d] = q % sub[d];
            q /= sub[d];
            lin += (st[d] + idx[d]) * mult;
            mult *= sz[d];
        }
        for (int64_t e = 0; e < t->n; e++)
            ref_push(&x, lin * ext + t->m[e].disp, t->m[e].kind);
    }
    x.lb = 0;
    x.ub = total * ext;
    x.lbm = x.ubm = 1;
    x.align = t->align;
    *r = x;
}

static void ref_darray(int rank, int nd, const int64_t *gs, const int *dist, const int64_t *darg,
                       const int64_t *ps, int order, const rtype_t *t, rtype_t *r)
{
    rtype_t x = {0};
    int64_t ext = ref_extent(t), total = 1, coord[8];
    for (int d = nd - 1, q = rank; d >= 0; d--) {
        coord[d] = q % ps[d];
        q /= (int)ps[d];
    }
    for (int d = 0; d < nd; d++)
        total *= gs[d];
    for (int64_t lin = 0; lin < total; lin++) {
        int64_t q = lin;
        int mine = 1;
        for (int i = 0; i < nd; i++) {
            int d = order == DT_ORDER_FORTRAN ? i : nd - 1 - i;
            int64_t g = q % gs[d], owner;
            q /= gs[d];
            if (dist[d] == DT_DISTRIBUTE_BLOCK) {
                int64_t b =
                    darg[d] == DT_DISTRIBUTE_DFLT_DARG ? (gs[d] + ps[d] - 1) / ps[d] : darg[d];
                owner = g / b;
            } else if (dist[d] == DT_DISTRIBUTE_CYCLIC) {
                int64_t b = darg[d] == DT_DISTRIBUTE_DFLT_DARG ? 1 : darg[d];
                owner = (g / b) % ps[d];
            } else {
                owner = 0;
            }
            mine &= owner == coord[d];
        }
        if (mine)
            for (int64_t e = 0; e < t->n; e++)
                ref_push(&x, lin * ext + t->m[e].disp, t->m[e].kind);
    }
    x.lb = 0;
    x.ub = total * ext;
    x.lbm = x.ubm = 1;
    x.align = t->align;
    *r = x;
}

static int only_kind = -1; /* >= 0: generate types of this one basic kind only */

static void gen(int depth, dt_t **t, rtype_t *r)
{
    int c = depth <= 0 || rnd() % 5 == 0 ? 0 : (int)rr(1, 11);
    if (c == 8 && only_kind >= 0)
        c = 5;
    if (c == 0) {
        int k = only_kind >= 0 ? only_kind : gen_kinds[rr(0, NGEN_KINDS - 1)];
        *t = dt_basic(k);
        ref_basic(k, r);
        return;
    }
    dt_t *ct;
    rtype_t cr;
    gen(depth - 1, &ct, &cr);
    int64_t ext = ref_extent(&cr);
    int64_t n = rr(0, 4), bl[8], dp[8], cnt = rnd() % 4 ? rr(0, 4) : rr(5, 40), b = rr(0, 3);
    for (int i = 0; i < 8; i++) {
        bl[i] = rr(0, 3);
        dp[i] = rr(-6, 6);
    }
    switch (c) {
    case 1:
        CHECK_RC(dt_contiguous(cnt, ct, t), FMPL_SUCCESS);
        ref_hvector(cnt, 1, ext, &cr, r);
        break;
    case 2: {
        int64_t s = rr(-5, 5);
        CHECK_RC(dt_vector(cnt, b, s, ct, t), FMPL_SUCCESS);
        ref_hvector(cnt, b, s * ext, &cr, r);
        break;
    }
    case 3: {
        int64_t s = rr(-80, 80);
        CHECK_RC(dt_hvector(cnt, b, s, ct, t), FMPL_SUCCESS);
        ref_hvector(cnt, b, s, &cr, r);
        break;
    }
    case 4:
    case 6: {
        int64_t db[8];
        for (int i = 0; i < n; i++)
            db[i] = dp[i] * ext;
        if (c == 4) {
            CHECK_RC(dt_indexed(n, bl, dp, ct, t), FMPL_SUCCESS);
        } else {
            CHECK_RC(dt_indexed_block(n, b, dp, ct, t), FMPL_SUCCESS);
            for (int i = 0; i < n; i++)
                bl[i] = b;
        }
        ref_hindexed(n, bl, db, &cr, r);
        break;
    }
    case 5:
    case 7: {
        if (rnd() % 2) /* constant stride: should become a vector */
            for (int i = 0; i < n; i++)
                dp[i] = 5 + i * 24, bl[i] = 2;
        else
            for (int i = 0; i < n; i++)
                dp[i] *= 13;
        if (c == 5) {
            CHECK_RC(dt_hindexed(n, bl, dp, ct, t), FMPL_SUCCESS);
        } else {
            CHECK_RC(dt_hindexed_block(n, b, dp, ct, t), FMPL_SUCCESS);
            for (int i = 0; i < n; i++)
                bl[i] = b;
        }
        ref_hindexed(n, bl, dp, &cr, r);
        break;
    }
    case 8: {
        dt_t *ts[4] = {ct};
        rtype_t rs[4] = {cr};
        const rtype_t *rp[4] = {&rs[0]};
        int m = (int)rr(1, 4);
        int64_t off = 0;
        for (int i = 1; i < m; i++) {
            gen(depth - 1, &ts[i], &rs[i]);
            rp[i] = &rs[i];
        }
        for (int i = 0; i < m; i++) { /* ascending, sometimes packed, sometimes gapped */
            dp[i] = rnd() % 3 ? off : off + rr(-8, 16);
            off = dp[i] + bl[i] * ref_extent(&rs[i]);
        }
        CHECK_RC(dt_struct(m, bl, dp, ts, t), FMPL_SUCCESS);
        ref_blocks(m, bl, dp, rp, 1, r);
        for (int i = 1; i < m; i++) {
            dt_release(ts[i]);
            ref_free(&rs[i]);
        }
        break;
    }
    case 9: {
        int64_t lb = rr(-16, 16), e = rr(-8, 64);
        CHECK_RC(dt_resized(ct, lb, e, t), FMPL_SUCCESS);
        ref_resized(&cr, lb, e, r);
        break;
    }
    case 10: {
        int nd = (int)rr(1, 3), order = (int)rr(0, 1);
        int64_t sz[3], sub[3], st[3];
        for (int d = 0; d < nd; d++) {
            sz[d] = rr(1, 4);
            sub[d] = rr(0, sz[d]);
            st[d] = rr(0, sz[d] - sub[d]);
        }
        CHECK_RC(dt_subarray(nd, sz, sub, st, order, ct, t), FMPL_SUCCESS);
        ref_subarray(nd, sz, sub, st, order, &cr, r);
        break;
    }
    default:
        CHECK_RC(dt_dup(ct, t), FMPL_SUCCESS);
        ref_copy(&cr, r);
        break;
    }
    /* the child may go now: the new type keeps what it needs */
    dt_release(ct);
    ref_free(&cr);
    if (r->n > 3000) { /* keep reference maps small */
        dt_release(*t);
        ref_free(r);
        gen(depth - 1, t, r);
    }
}

/* B: the same signature as count x (t, r), but as a struct of single basic elements at
 * fresh ascending displacements with random gaps. */
static void same_sig(const rtype_t *r, int64_t count, dt_t **t, rtype_t *out)
{
    int64_t n = r->n * count, k = 0, off = rr(-20, 20);
    int64_t *bl = malloc((size_t)(2 * n + 1) * sizeof(int64_t)), *dp = bl + n;
    dt_t **ts = malloc((size_t)(n + 1) * sizeof *ts);
    rtype_t *rs = malloc((size_t)(n + 1) * sizeof *rs);
    const rtype_t **rp = malloc((size_t)(n + 1) * sizeof *rp);
    for (int64_t i = 0; i < count; i++)
        for (int64_t e = 0; e < r->n; e++, k++) {
            int kd = r->m[e].kind;
            bl[k] = 1;
            dp[k] = off;
            off += ksize(kd) + (rnd() % 2 ? 0 : rr(0, 9));
            ts[k] = dt_basic(kd);
            ref_basic(kd, &rs[k]);
            rp[k] = &rs[k];
        }
    CHECK_RC(dt_struct(n, bl, dp, ts, t), FMPL_SUCCESS);
    ref_blocks(n, bl, dp, rp, 1, out);
    for (int64_t i = 0; i < n; i++)
        ref_free(&rs[i]);
    free(bl);
    free(ts);
    free(rs);
    free(rp);
}

static void check_copy(const dt_t *a, const rtype_t *ra, int64_t ca)
{
    dt_t *b;
    rtype_t rb;
    same_sig(ra, ca, &b, &rb);
    dt_sig_t sa, sb;
    dt_signature(a, ca, &sa);
    dt_signature(b, 1, &sb);
    CHECK(dt_sig_equal(&sa, &sb));
    check_queries(b, &rb);
    int64_t size = ref_size(ra) * ca;
    rbuf_t src, d1, d2;
    rbuf_alloc(&src, ra, ca);
    rbuf_alloc(&d1, &rb, 1);
    rbuf_alloc(&d2, &rb, 1);
    rbuf_fill(&src, -1);
    unsigned char *stream = malloc((size_t)size + 1);
    ref_pack(ra, ca, src.base, stream);
    rbuf_fill(&d1, 0x3C);
    ref_unpack(&rb, 1, d1.base, stream);
    for (int dir = 0; dir < 2; dir++) {
        rbuf_fill(&d2, 0x3C);
        if (dir == 0) {
            CHECK_RC(dt_copy(a, ca, src.base, b, 1, d2.base, 0, size), FMPL_SUCCESS);
        } else {
            for (int64_t off = 0; off < size;) {
                int64_t len = rr(1, 1 + size / 3);
                if (len > size - off)
                    len = size - off;
                CHECK_RC(dt_copy(a, ca, src.base, b, 1, d2.base, off, len), FMPL_SUCCESS);
                off += len;
            }
        }
        CHECK(memcmp(d1.mem, d2.mem, (size_t)d1.len) == 0);
    }
    /* and back: b -> a (a may overlap itself; compare against the reference order) */
    if (!ref_overlaps(ra, ca)) {
        rbuf_t s2;
        rbuf_alloc(&s2, ra, ca);
        rbuf_fill(&s2, 0x11);
        rbuf_fill(&src, 0x11);
        ref_unpack(ra, ca, src.base, stream);
        CHECK_RC(dt_copy(b, 1, d1.base, a, ca, s2.base, 0, size), FMPL_SUCCESS);
        CHECK(memcmp(src.mem, s2.mem, (size_t)src.len) == 0);
        free(s2.mem);
    }
    /* a different signature (one kind changed) gives a different summary */
    if (rb.n > 0) {
        int64_t e = rr(0, rb.n - 1);
        int k = rb.m[e].kind, k2 = k == DT_INT ? DT_FLOAT : DT_INT;
        dt_t *one[2] = {dt_basic(k), dt_basic(k2)}, *x, *y;
        int64_t bl = 1, dp = 0;
        CHECK_RC(dt_struct(1, &bl, &dp, &one[0], &x), FMPL_SUCCESS);
        CHECK_RC(dt_struct(1, &bl, &dp, &one[1], &y), FMPL_SUCCESS);
        dt_sig_t s1, s2;
        dt_signature(x, 1, &s1);
        dt_signature(y, 1, &s2);
        CHECK(!dt_sig_equal(&s1, &s2) || k == k2);
        dt_free(x);
        dt_free(y);
    }
    free(stream);
    free(src.mem);
    free(d1.mem);
    free(d2.mem);
    ref_free(&rb);
    dt_free(b);
}

static void random_darrays(int reps)
{
    for (int rep = 0; rep < reps; rep++) {
        int nd = (int)rr(1, 3), order = (int)rr(0, 1), dist[3];
        int64_t gs[3], ps[3], darg[3], size = 1;
        int bad = 0;
        for (int d = 0; d < nd; d++) {
            gs[d] = rr(1, 7);
            dist[d] = (int)rr(0, 2);
            ps[d] = dist[d] == DT_DISTRIBUTE_NONE ? 1 : rr(1, 3);
            darg[d] = rnd() % 2 ? DT_DISTRIBUTE_DFLT_DARG : rr(1, 4);
            if (dist[d] == DT_DISTRIBUTE_BLOCK && darg[d] > 0 && darg[d] * ps[d] < gs[d])
                bad = 1;
            size *= ps[d];
        }
        int k = gen_kinds[rr(0, NGEN_KINDS - 1)];
        rtype_t rk;
        ref_basic(k, &rk);
        int64_t *owned = calloc((size_t)rk.n * 400, sizeof(int64_t));
        int64_t total_elems = 0;
        for (int rank = 0; rank < size; rank++) {
            dt_t *t;
            int rc = dt_darray((int)size, rank, nd, gs, dist, darg, ps, order, dt_basic(k), &t);
            if (bad) {
                CHECK(rc == FMPL_ERR_ARG);
                continue;
            }
            CHECK_RC(rc, FMPL_SUCCESS);
            rtype_t r;
            ref_darray(rank, nd, gs, dist, darg, ps, order, &rk, &r);
            check_queries(t, &r);
            check_data(t, &r, rr(1, 2));
            total_elems += r.n;
            dt_combiner_t comb;
            int ni;
            CHECK_RC(dt_get_contents(t, &comb, &ni, NULL, NULL, NULL, NULL, NULL), FMPL_SUCCESS);
            CHECK(comb == DT_COMBINER_DARRAY && ni == 4 + 4 * nd);
            ref_free(&r);
            dt_free(t);
        }
        if (!bad) { /* the ranks partition the array */
            int64_t g = 1;
            for (int d = 0; d < nd; d++)
                g *= gs[d];
            CHECK(total_elems == g * rk.n);
        }
        free(owned);
        ref_free(&rk);
    }
}

int main(int argc, char **argv)
{
    int n = argc > 1 ? atoi(argv[1]) : 5000;
    if (argc > 2)
        rng_state = strtoull(argv[2], NULL, 0);
    for (int i = 0; i < n; i++) {
        dt_t *t;
        rtype_t r;
        only_kind = i % 5 == 4 ? gen_kinds[rr(0, NGEN_KINDS - 1)] : -1;
        gen((int)rr(1, 5), &t, &r);
        if (rnd() % 2)
            CHECK_RC(dt_commit(t), FMPL_SUCCESS);
        check_queries(t, &r);
        int64_t count = rr(0, 3);
        if (ref_size(&r) * count <= 200000)
            check_data(t, &r, count);
        if (r.n * count <= 2000)
            check_copy(t, &r, count);
        ref_free(&r);
        dt_release(t);
    }
    random_darrays(300);
    printf("dt_random: %d random types OK\n", n);
    return 0;
}
