/* mpi_coll_common.h — what mpi_coll_nb.c (MPI_I* collectives) and mpi_coll_persist.c
 * (MPI-4.0 persistent collectives, *_init + MPI_Start) share: one description of a
 * collective call ("case": kind, count, root, layouts, in place, type and op) that is set
 * up, filled with data (a salt makes every start's data different), posted in the
 * nonblocking or the persistent form, and checked; the list of cases (every intracomm
 * collective, every root, sizes 0 / 1 / 7 / large, contiguous, vector-with-gaps and
 * resized-struct layouts, MPI_IN_PLACE wherever the standard allows it, exact
 * reductions, a non-commutative user op); completion helpers that check what the standard
 * defines of the status; and the argument-error checks with MPI_ERRORS_RETURN.
 *
 * Data movement uses ints. An "element" is two logical ints and is laid out as (layout
 * 0) two MPI_INTs, (1) `vec`: a vector type, ints at int offsets 0 and 2 of a 3-int
 * extent, or (2) `st`: a struct type, ints at offsets 0 and 3, resized to a 5-int extent.
 * Whatever the layout does not cover must stay GAP. Every check compares the whole
 * receive buffer with an expected image, so gaps and guard ints are checked too. */
#ifndef MPI_COLL_COMMON_H
#define MPI_COLL_COMMON_H

#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size;      /* in the communicator under test */
static MPI_Comm comm;       /* the communicator under test */
static int persistent;      /* 1: MPI_*_init + MPI_Start; 0: MPI_I* */
static MPI_Info cinfo;      /* info given to the *_init calls */
static const char *prog;    /* for messages */
static MPI_Datatype lt[3];  /* layouts: MPI_INT, vec, st */
static MPI_Datatype mat_t_; /* 4 long long */
static MPI_Op matop_;       /* 2x2 matrix product mod P, not commutative */
static const int eints[3] = {2, 3, 5}, off2[3] = {1, 2, 3};

/* Known bugs of MPICH 4.0.2, which these tests were validated with (FMPL's mpi.h does not
 * define MPICH_VERSION): with one process, (i)allgatherv ignores the receive
 * displacement; MPI_Ialltoallw / MPI_Alltoallw_init in place with derived datatypes
 * deliver wrong data. Under MPICH those configurations are replaced by plain ones.
 * Persistent collective requests: MPI_Wait on one never started hangs; MPI_Waitany /
 * Testany / Testsome report an inactive one as completed (instead of ignoring it like
 * a null request); MPI_Testall fails with MPI_ERR_IN_STATUS (all statuses
 * MPI_SUCCESS) when it completes one. Those checks are left out under MPICH, or worked
 * around (completed requests taken out of the array; MPI_Waitall for MPI_Testall).
 * MPI_Gather_init, MPI_Scatter_init and MPI_Allgather_init deliver wrong data even in
 * the simplest cases (and seem to corrupt memory): left out of the persistent run under
 * MPICH (their v forms work). A wildcard receive posted before persistent collectives
 * are started takes their traffic (seen with one process; they hang): under MPICH the
 * receive of that test names its source and tag. Argument errors: MPI_Ibcast /
 * MPI_Bcast_init with MPI_IN_PLACE is not detected; a negative count in the reductions
 * crashes its error path: both left out under MPICH. */
#ifdef MPICH_VERSION
#define MPICH_BUGS 1
#else
#define MPICH_BUGS 0
#endif

#define GAP (-7)
#define BIG 50000     /* elements (2 ints) of the large data-movement cases: 100000 ints */
#define BIGRED 100000 /* elements of the large reductions (100000 doubles) */
#define GUARD 0xA5

static void *xmalloc(size_t n)
{
    void *p = malloc(n ? n : 1);
    CHECK(p);
    return p;
}
/* int position of logical int j of a run of elements in layout L */
static inline size_t pos(int L, size_t j)
{
    return (j / 2) * (size_t)eints[L] + (j % 2) * (size_t)off2[L];
}
/* MPI count of m elements in layout L */
static inline int lcnt(int L, int m)
{
    return L ? m : 2 * m;
}
/* the data: small distinct ints */
static inline int val(int r, size_t j, int salt)
{
    return (int)(((size_t)r * 7919u + j * 31u + (size_t)salt * 131u) % 100003u);
}
/* element counts that differ between ranks (v forms): n, n/2, n+1 by t % 3 */
static inline int cnt3(int t, int n)
{
    return n == 0 ? 0 : t % 3 == 0 ? n : t % 3 == 1 ? n / 2 : n + 1;
}

/* ------------------------------------------------------------------ reductions: types */

typedef struct {
    double v;
    int i;
} di_t;
typedef struct {
    int v, i;
} ii_t;
#define P 1000003LL
typedef struct {
    long long a[4];
} mat_t;

enum { RT_INT, RT_DBL, RT_2INT, RT_DI, RT_MAT, NRT };
static const size_t resz[NRT] = {sizeof(int), sizeof(double), sizeof(ii_t), sizeof(di_t),
                                 sizeof(mat_t)};
enum {
    O_SUM,
    O_PROD,
    O_MAX,
    O_MIN,
    O_BAND,
    O_BOR,
    O_BXOR,
    O_LAND,
    O_LOR,
    O_LXOR,
    O_MINLOC,
    O_MAXLOC,
    O_MAT,
    NOPS
};
static const char *const opname[NOPS] = {"sum",    "prod",   "max",   "min", "band",
                                         "bor",    "bxor",   "land",  "lor", "lxor",
                                         "minloc", "maxloc", "matmul"};
/* every (type, op) pair tested; all exact */
static const int rcombos[][2] = {{RT_INT, O_SUM},   {RT_INT, O_PROD},    {RT_INT, O_MAX},
                                 {RT_INT, O_MIN},   {RT_INT, O_BAND},    {RT_INT, O_BOR},
                                 {RT_INT, O_BXOR},  {RT_INT, O_LAND},    {RT_INT, O_LOR},
                                 {RT_INT, O_LXOR},  {RT_DBL, O_SUM},     {RT_DBL, O_MAX},
                                 {RT_DBL, O_MIN},   {RT_2INT, O_MINLOC}, {RT_2INT, O_MAXLOC},
                                 {RT_DI, O_MINLOC}, {RT_DI, O_MAXLOC},   {RT_MAT, O_MAT}};
#define NRCOMBOS ((int)(sizeof rcombos / sizeof rcombos[0]))

static inline MPI_Datatype rtype(int rt)
{
    switch (rt) {
    case RT_INT: return MPI_INT;
    case RT_DBL: return MPI_DOUBLE;
    case RT_2INT: return MPI_2INT;
    case RT_DI: return MPI_DOUBLE_INT;
    default: return mat_t_;
    }
}
static inline MPI_Op rop(int op)
{
    switch (op) {
    case O_SUM: return MPI_SUM;
    case O_PROD: return MPI_PROD;
    case O_MAX: return MPI_MAX;
    case O_MIN: return MPI_MIN;
    case O_BAND: return MPI_BAND;
    case O_BOR: return MPI_BOR;
    case O_BXOR: return MPI_BXOR;
    case O_LAND: return MPI_LAND;
    case O_LOR: return MPI_LOR;
    case O_LXOR: return MPI_LXOR;
    case O_MINLOC: return MPI_MINLOC;
    case O_MAXLOC: return MPI_MAXLOC;
    default: return matop_;
    }
}

static inline void matmul(const mat_t *x, const mat_t *y, mat_t *z)
{
    mat_t r;
    r.a[0] = (x->a[0] * y->a[0] + x->a[1] * y->a[2]) % P;
    r.a[1] = (x->a[0] * y->a[1] + x->a[1] * y->a[3]) % P;
    r.a[2] = (x->a[2] * y->a[0] + x->a[3] * y->a[2]) % P;
    r.a[3] = (x->a[2] * y->a[1] + x->a[3] * y->a[3]) % P;
    *z = r;
}
static inline void matop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        matmul(&a[i], &b[i], &b[i]); /* inout = in * inout: in holds the lower ranks */
}

/* element j of rank r's input for (rt, op) */
static inline void rgen(int rt, int op, int r, size_t j, int salt, void *e)
{
    long long x = val(r, j, salt) - 50000;
    switch (op) {
    case O_PROD: {
        static const int f[4] = {2, 1, -1, 1};
        x = f[((size_t)r + j + (size_t)salt) % 4];
        break;
    }
    case O_BAND:
    case O_BOR:
    case O_BXOR: x = (long long)(((uint32_t)val(r, j, salt) * 2654435761u) >> 1); break;
    case O_LAND:
    case O_LOR:
    case O_LXOR: {
        static const int f[5] = {0, 1, 5, -3, 1};
        x = f[((size_t)r * 7 + j + (size_t)salt) % 5];
        if (op == O_LAND && ((size_t)r + j) % 3)
            x = x ? x : 2; /* mostly true, so that LAND is not always false */
        break;
    }
    case O_MINLOC:
    case O_MAXLOC: x = ((size_t)r * 37 + j * 11 + (size_t)salt) % 13; break; /* ties */
    default: break;
    }
    switch (rt) {
    case RT_INT: *(int *)e = (int)x; break;
    case RT_DBL: *(double *)e = (double)x; break;
    case RT_2INT: ((ii_t *)e)->v = (int)x, ((ii_t *)e)->i = 100 + r; break;
    case RT_DI: ((di_t *)e)->v = (double)x, ((di_t *)e)->i = 100 + r; break;
    default: {
        mat_t m = {{(r + 2 + salt) % P, (long long)(j % 5) + 1, (long long)r * 3 + 1,
                    (long long)((j + (size_t)salt) % 7)}};
        *(mat_t *)e = m;
    }
    }
}
/* acc = acc op x (acc holds the lower ranks) */
static inline void rcomb(int rt, int op, void *acc, const void *x)
{
    if (rt == RT_MAT) {
        matmul(acc, x, acc);
        return;
    }
    if (rt == RT_2INT || rt == RT_DI) {
        double a = rt == RT_DI ? ((di_t *)acc)->v : ((ii_t *)acc)->v;
        double b = rt == RT_DI ? ((const di_t *)x)->v : ((const ii_t *)x)->v;
        int ai = rt == RT_DI ? ((di_t *)acc)->i : ((ii_t *)acc)->i;
        int bi = rt == RT_DI ? ((const di_t *)x)->i : ((const ii_t *)x)->i;
        int take = op == O_MINLOC ? b < a : b > a;
        if (take || (a == b && bi < ai)) {
            if (rt == RT_DI)
                *(di_t *)acc = *(const di_t *)x;
            else
                *(ii_t *)acc = *(const ii_t *)x;
        }
        return;
    }
    if (rt == RT_DBL) {
        double *a = acc, b = *(const double *)x;
        *a = op == O_SUM ? *a + b : op == O_MAX ? (b > *a ? b : *a) : (b < *a ? b : *a);
        return;
    }
    int *a = acc, b = *(const int *)x;
    switch (op) {
    case O_SUM: *a += b; break;
    case O_PROD: *a *= b; break;
    case O_MAX: *a = b > *a ? b : *a; break;
    case O_MIN: *a = b < *a ? b : *a; break;
    case O_BAND: *a &= b; break;
    case O_BOR: *a |= b; break;
    case O_BXOR: *a ^= b; break;
    case O_LAND: *a = *a && b; break;
    case O_LOR: *a = *a || b; break;
    default: *a = !*a != !b; break;
    }
}
/* got == want, bit for bit on the defined fields (logical ops: same truth value) */
static inline int req_(int rt, int op, const void *got, const void *want)
{
    switch (rt) {
    case RT_INT:
        if (op == O_LAND || op == O_LOR || op == O_LXOR)
            return !*(const int *)got == !*(const int *)want;
        return *(const int *)got == *(const int *)want;
    case RT_DBL: return memcmp(got, want, sizeof(double)) == 0;
    case RT_2INT:
        return ((const ii_t *)got)->v == ((const ii_t *)want)->v &&
               ((const ii_t *)got)->i == ((const ii_t *)want)->i;
    case RT_DI:
        return memcmp(&((const di_t *)got)->v, &((const di_t *)want)->v, sizeof(double)) == 0 &&
               ((const di_t *)got)->i == ((const di_t *)want)->i;
    default: return memcmp(got, want, sizeof(mat_t)) == 0;
    }
}

/* ------------------------------------------------------------------ cases */

enum {
    K_BARRIER,
    K_BCAST,
    K_GATHER,
    K_GATHERV,
    K_SCATTER,
    K_SCATTERV,
    K_ALLGATHER,
    K_ALLGATHERV,
    K_ALLTOALL,
    K_ALLTOALLV,
    K_ALLTOALLW,
    K_REDUCE,
    K_ALLREDUCE,
    K_REDUCE_SCATTER,
    K_REDUCE_SCATTER_BLOCK,
    K_SCAN,
    K_EXSCAN,
    NKINDS
};
static const char *const kname[NKINDS] = {
    "barrier",   "bcast",     "gather",     "gatherv",        "scatter",
    "scatterv",  "allgather", "allgatherv", "alltoall",       "alltoallv",
    "alltoallw", "reduce",    "allreduce",  "reduce_scatter", "reduce_scatter_block",
    "scan",      "exscan"};
/* see MPICH_BUGS */
static inline int mpich_broken_init(int kind)
{
    return kind == K_GATHER || kind == K_SCATTER || kind == K_ALLGATHER;
}

static inline int is_red(int kind)
{
    return kind >= K_REDUCE;
}

typedef struct { /* m elements in layout L at int offset off */
    int m, L;
    size_t off;
} blk_t;

typedef struct cc {
    /* parameters */
    int kind, n, root, ip, sv, rv, rt, op;
    MPI_Comm comm; /* MPI_COMM_NULL: the communicator under test */
    /* set up */
    int me, sz;
    blk_t *sbk, *rbk; /* data movement: blocks of the send / receive buffer */
    int nsb, nrb;
    size_t sbytes, rbytes;
    void *sb, *rb, *want;
    int *cnt; /* counts and displacements: 4 * sz */
    MPI_Datatype *ty;
    size_t rN, rR, roff; /* reductions: input / result elements, result's global offset */
    MPI_Request req;
} cc_t;

static inline void cc_desc(const cc_t *c, char *buf, size_t len)
{
    if (is_red(c->kind))
        snprintf(buf, len, "%s n=%d root=%d ip=%d rt=%d op=%s", kname[c->kind], c->n, c->root,
                 c->ip, c->rt, opname[c->op]);
    else
        snprintf(buf, len, "%s n=%d root=%d ip=%d layouts=%d,%d", kname[c->kind], c->n, c->root,
                 c->ip, c->sv, c->rv);
}
static void cc_fail(const cc_t *c, int salt, const char *what, size_t at)
{
    char d[200];
    cc_desc(c, d, sizeof d);
    fprintf(stderr, "%s: rank %d/%d (%s): %s salt %d: %s at %zu\n", prog, c->me, c->sz,
            persistent ? "persistent" : "nonblocking", d, salt, what, at);
    exit(1);
}

/* place blocks: in order, back to back (rev 0), or in reverse order with a one-element
 * gap before each (rev 1); returns the ints the buffer needs (with one element spare) */
static size_t place(blk_t *b, int nb, int rev)
{
    size_t at = 0, maxe = 2;
    for (int k = 0; k < nb; k++) {
        int i = rev ? nb - 1 - k : k;
        if (rev)
            at += (size_t)eints[b[i].L];
        b[i].off = at;
        at += (size_t)b[i].m * (size_t)eints[b[i].L];
        if ((size_t)eints[b[i].L] > maxe)
            maxe = (size_t)eints[b[i].L];
    }
    return at + maxe;
}
/* v-form displacement of a block, in extents of its layout's type */
static inline int bdisp(const blk_t *b)
{
    return (int)(b->L ? b->off / (size_t)eints[b->L] : b->off);
}
static void fill_blk(int *buf, const blk_t *b, int who, int salt)
{
    for (size_t j = 0; j < 2 * (size_t)b->m; j++)
        buf[b->off + pos(b->L, j)] = val(who, j, salt);
}
static void gaps(int *buf, size_t bytes)
{
    for (size_t k = 0; k < bytes / sizeof(int); k++)
        buf[k] = GAP;
}
static inline int a2a_cnt(const cc_t *c, int from, int to)
{
    if (c->kind == K_ALLTOALL)
        return c->n;
    return c->ip ? cnt3(from + to, c->n) : cnt3(from + 2 * to, c->n);
}

static void cc_setup(cc_t *c)
{
    if (c->comm == MPI_COMM_NULL)
        c->comm = comm;
    MPI_Comm_rank(c->comm, &c->me);
    MPI_Comm_size(c->comm, &c->sz);
    int me = c->me, sz = c->sz, n = c->n;
    c->nsb = c->nrb = 0;
    c->sbk = xmalloc((size_t)sz * sizeof(blk_t));
    c->rbk = xmalloc((size_t)sz * sizeof(blk_t));
    c->cnt = xmalloc(4 * (size_t)sz * sizeof(int));
    c->ty = xmalloc(2 * (size_t)sz * sizeof(MPI_Datatype));
    c->sbytes = c->rbytes = 0;
    c->req = MPI_REQUEST_NULL;
    int vary = c->kind == K_GATHERV || c->kind == K_SCATTERV || c->kind == K_ALLGATHERV;
    switch (c->kind) {
    case K_BARRIER: break;
    case K_BCAST:
        c->nrb = 1;
        c->rbk[0] = (blk_t){n, c->sv, 0};
        c->rbytes = place(c->rbk, 1, 0) * sizeof(int);
        break;
    case K_GATHER:
    case K_GATHERV:
    case K_ALLGATHER:
    case K_ALLGATHERV:
        c->nsb = 1;
        c->sbk[0] = (blk_t){vary ? cnt3(me, n) : n, c->sv, 0};
        c->sbytes = place(c->sbk, 1, 0) * sizeof(int);
        c->nrb = sz;
        for (int i = 0; i < sz; i++)
            c->rbk[i] = (blk_t){vary ? cnt3(i, n) : n, c->rv, 0};
        c->rbytes = place(c->rbk, sz, vary && !(MPICH_BUGS && sz == 1)) * sizeof(int);
        if ((c->kind == K_GATHER || c->kind == K_GATHERV) && me != c->root)
            c->rbytes = 0; /* recvbuf only significant at the root: pass NULL */
        break;
    case K_SCATTER:
    case K_SCATTERV:
        c->nsb = sz;
        for (int i = 0; i < sz; i++)
            c->sbk[i] = (blk_t){vary ? cnt3(i, n) : n, c->sv, 0};
        c->sbytes = place(c->sbk, sz, vary) * sizeof(int);
        if (me != c->root)
            c->sbytes = 0; /* sendbuf only significant at the root: pass NULL */
        c->nrb = 1;
        c->rbk[0] = (blk_t){vary ? cnt3(me, n) : n, c->rv, 0};
        c->rbytes = place(c->rbk, 1, 0) * sizeof(int);
        break;
    case K_ALLTOALL:
    case K_ALLTOALLV:
    case K_ALLTOALLW:
        c->nsb = c->nrb = sz;
        for (int i = 0; i < sz; i++) {
            int w = c->kind == K_ALLTOALLW && !c->ip;
            c->sbk[i] = (blk_t){a2a_cnt(c, me, i), w ? (me + i) % 3 : c->sv, 0};
            c->rbk[i] = (blk_t){a2a_cnt(c, i, me), w ? (2 * i + me) % 3 : c->rv, 0};
            if (c->kind == K_ALLTOALLW && c->ip) /* in place: one layout per peer */
                c->rbk[i].L = MPICH_BUGS ? 0 : (i + me) % 3;
        }
        c->sbytes = c->ip ? 0 : place(c->sbk, sz, c->kind != K_ALLTOALL) * sizeof(int);
        c->rbytes = place(c->rbk, sz, c->kind != K_ALLTOALL) * sizeof(int);
        break;
    default: { /* reductions */
        size_t es = resz[c->rt];
        c->rN = c->rR = (size_t)n;
        c->roff = 0;
        if (c->kind == K_REDUCE_SCATTER_BLOCK) {
            c->rN = (size_t)n * (size_t)sz;
            c->roff = (size_t)n * (size_t)me;
        } else if (c->kind == K_REDUCE_SCATTER) {
            c->rN = 0;
            for (int i = 0; i < sz; i++) {
                if (i == me)
                    c->roff = c->rN;
                c->cnt[i] = cnt3(i, n);
                c->rN += (size_t)c->cnt[i];
            }
            c->rR = (size_t)cnt3(me, n);
        }
        int ipme = c->ip && (c->kind != K_REDUCE || me == c->root);
        c->sbytes = ipme ? 0 : c->rN * es;
        if (ipme)
            c->rbytes = c->rN * es;
        else if (c->kind != K_REDUCE || me == c->root)
            c->rbytes = (c->rR + 1) * es; /* one guard element */
        else
            c->rbytes = 0; /* recvbuf only significant at the root: pass NULL */
    }
    }
    c->sb = c->sbytes ? xmalloc(c->sbytes) : NULL;
    c->rb = c->rbytes ? xmalloc(c->rbytes) : NULL;
    c->want = c->rbytes ? xmalloc(c->rbytes) : NULL;
    /* count / displacement / type arrays (the v and w forms) */
    int *sc = c->cnt, *sd = c->cnt + sz, *rc = c->cnt + 2 * sz, *rd = c->cnt + 3 * sz;
    if (!is_red(c->kind))
        for (int i = 0; i < sz; i++) {
            if (i < c->nsb) {
                sc[i] = lcnt(c->sbk[i].L, c->sbk[i].m);
                sd[i] =
                    c->kind == K_ALLTOALLW ? (int)(c->sbk[i].off * sizeof(int)) : bdisp(&c->sbk[i]);
                c->ty[i] = lt[c->sbk[i].L];
            }
            if (i < c->nrb) {
                rc[i] = lcnt(c->rbk[i].L, c->rbk[i].m);
                rd[i] =
                    c->kind == K_ALLTOALLW ? (int)(c->rbk[i].off * sizeof(int)) : bdisp(&c->rbk[i]);
                c->ty[sz + i] = lt[c->rbk[i].L];
            }
        }
}

static void cc_free(cc_t *c)
{
    free(c->sbk);
    free(c->rbk);
    free(c->cnt);
    free(c->ty);
    free(c->sb);
    free(c->rb);
    free(c->want);
    c->sb = c->rb = c->want = NULL;
}

/* Fill the buffers for one start: inputs from salt, outputs GAP (or guard bytes). */
static void cc_fill(cc_t *c, int salt)
{
    int me = c->me, sz = c->sz, root = c->root;
    int *sb = c->sb, *rb = c->rb;
    if (c->sb && !is_red(c->kind))
        gaps(sb, c->sbytes);
    if (c->rb && !is_red(c->kind))
        gaps(rb, c->rbytes);
    switch (c->kind) {
    case K_BARRIER: break;
    case K_BCAST:
        if (me == root)
            fill_blk(rb, &c->rbk[0], root, salt);
        break;
    case K_GATHER:
    case K_GATHERV:
    case K_ALLGATHER:
    case K_ALLGATHERV:
        fill_blk(sb, &c->sbk[0], me, salt);
        if (c->ip && rb)
            fill_blk(rb, &c->rbk[me], me, salt);
        break;
    case K_SCATTER:
    case K_SCATTERV:
        if (sb)
            for (int i = 0; i < sz; i++)
                fill_blk(sb, &c->sbk[i], i, salt);
        break;
    case K_ALLTOALL:
    case K_ALLTOALLV:
    case K_ALLTOALLW:
        for (int i = 0; i < sz; i++)
            fill_blk(c->ip ? rb : sb, c->ip ? &c->rbk[i] : &c->sbk[i], me * sz + i, salt);
        break;
    default: {
        size_t es = resz[c->rt];
        char *s = c->sb ? c->sb : c->rb;
        for (size_t j = 0; s && j < c->rN; j++)
            rgen(c->rt, c->op, me, j, salt, s + j * es);
        if (c->sb && c->rb)
            memset(c->rb, GUARD, c->rbytes);
    }
    }
}

static void cc_check(cc_t *c, int salt)
{
    int me = c->me, sz = c->sz;
    if (c->kind == K_BARRIER)
        return;
    if (is_red(c->kind)) {
        int upto = c->kind == K_SCAN ? me + 1 : c->kind == K_EXSCAN ? me : sz;
        size_t es = resz[c->rt];
        char *rb = c->rb, e[sizeof(mat_t)], w[sizeof(mat_t)];
        if (!rb)
            return;
        if (upto > 0)
            for (size_t j = 0; j < c->rR; j++) {
                rgen(c->rt, c->op, 0, c->roff + j, salt, w);
                for (int r = 1; r < upto; r++) {
                    rgen(c->rt, c->op, r, c->roff + j, salt, e);
                    rcomb(c->rt, c->op, w, e);
                }
                if (!req_(c->rt, c->op, rb + j * es, w))
                    cc_fail(c, salt, "wrong result element", j);
            }
        if (c->sb) /* the guard element after the result */
            for (size_t k = c->rR * es; k < c->rbytes; k++)
                if ((unsigned char)rb[k] != GUARD)
                    cc_fail(c, salt, "guard byte overwritten", k);
        return;
    }
    int *want = c->want, *got = c->rb;
    if (!got)
        return;
    gaps(want, c->rbytes);
    switch (c->kind) {
    case K_BCAST: fill_blk(want, &c->rbk[0], c->root, salt); break;
    case K_GATHER:
    case K_GATHERV:
    case K_ALLGATHER:
    case K_ALLGATHERV:
        for (int i = 0; i < sz; i++)
            fill_blk(want, &c->rbk[i], i, salt);
        break;
    case K_SCATTER:
    case K_SCATTERV: fill_blk(want, &c->rbk[0], me, salt); break;
    default:
        for (int i = 0; i < sz; i++)
            fill_blk(want, &c->rbk[i], i * sz + me, salt);
    }
    size_t nints = c->rbytes / sizeof(int);
    if (c->ip && me == c->root && (c->kind == K_SCATTER || c->kind == K_SCATTERV)) {
        /* recvbuf was MPI_IN_PLACE: rb untouched (all GAP), sb unchanged */
        for (size_t k = 0; k < nints; k++)
            if (((int *)c->rb)[k] != GAP)
                cc_fail(c, salt, "in-place scatter wrote the unused recvbuf", k);
        for (int i = 0; i < sz; i++)
            for (size_t j = 0; j < 2 * (size_t)c->sbk[i].m; j++)
                if (((int *)c->sb)[c->sbk[i].off + pos(c->sbk[i].L, j)] != val(i, j, salt))
                    cc_fail(c, salt, "in-place scatter changed the root's sendbuf", j);
        return;
    }
    for (size_t k = 0; k < nints; k++)
        if (got[k] != want[k]) {
            fprintf(stderr, "%s: rank %d: int %zu got %d want %d\n", prog, me, k, got[k], want[k]);
            cc_fail(c, salt, "wrong receive buffer", k);
        }
}

/* Post the case: the MPI_I* call, or the MPI_*_init call (then MPI_Start is needed). */
#define POST(ifn, pfn, ...)                                                                        \
    (persistent ? pfn(__VA_ARGS__, cinfo, &c->req) : ifn(__VA_ARGS__, &c->req))

static int cc_post(cc_t *c)
{
    int sz = c->sz, root = c->root, me = c->me;
    int *sc = c->cnt, *sd = c->cnt + sz, *rc = c->cnt + 2 * sz, *rd = c->cnt + 3 * sz;
    MPI_Datatype *st = c->ty, *rt = c->ty + sz, svt = lt[c->sv], rvt = lt[c->rv];
    MPI_Comm cm = c->comm;
    void *sb = c->sb, *rb = c->rb;
    int sn = lcnt(c->sv, c->n), rn = lcnt(c->rv, c->n);
    switch (c->kind) {
    case K_BARRIER: return POST(MPI_Ibarrier, MPI_Barrier_init, cm);
    case K_BCAST: return POST(MPI_Ibcast, MPI_Bcast_init, rb, rn, svt, root, cm);
    case K_GATHER:
        return POST(MPI_Igather, MPI_Gather_init, c->ip && me == root ? MPI_IN_PLACE : sb, sn, svt,
                    rb, rn, rvt, root, cm);
    case K_GATHERV:
        return POST(MPI_Igatherv, MPI_Gatherv_init, c->ip && me == root ? MPI_IN_PLACE : sb, sc[0],
                    st[0], rb, me == root ? rc : NULL, me == root ? rd : NULL, rvt, root, cm);
    case K_SCATTER:
        return POST(MPI_Iscatter, MPI_Scatter_init, sb, sn, svt,
                    c->ip && me == root ? MPI_IN_PLACE : rb, rn, rvt, root, cm);
    case K_SCATTERV:
        return POST(MPI_Iscatterv, MPI_Scatterv_init, sb, me == root ? sc : NULL,
                    me == root ? sd : NULL, svt, c->ip && me == root ? MPI_IN_PLACE : rb, rc[0],
                    rt[0], root, cm);
    case K_ALLGATHER:
        return POST(MPI_Iallgather, MPI_Allgather_init, c->ip ? MPI_IN_PLACE : sb, sn, svt, rb, rn,
                    rvt, cm);
    case K_ALLGATHERV:
        return POST(MPI_Iallgatherv, MPI_Allgatherv_init, c->ip ? MPI_IN_PLACE : sb, sc[0], st[0],
                    rb, rc, rd, rvt, cm);
    case K_ALLTOALL:
        return POST(MPI_Ialltoall, MPI_Alltoall_init, c->ip ? MPI_IN_PLACE : sb, sn, svt, rb, rn,
                    rvt, cm);
    case K_ALLTOALLV:
        return POST(MPI_Ialltoallv, MPI_Alltoallv_init, c->ip ? MPI_IN_PLACE : sb,
                    c->ip ? NULL : sc, c->ip ? NULL : sd, svt, rb, rc, rd, rvt, cm);
    case K_ALLTOALLW:
        return POST(MPI_Ialltoallw, MPI_Alltoallw_init, c->ip ? MPI_IN_PLACE : sb,
                    c->ip ? NULL : sc, c->ip ? NULL : sd, c->ip ? NULL : st, rb, rc, rd, rt, cm);
    default: break;
    }
    MPI_Datatype t = rtype(c->rt);
    MPI_Op op = rop(c->op);
    /* MPI_IN_PLACE only where asked for (a count-0 case has no send buffer: NULL) */
    const void *s = c->ip && (c->kind != K_REDUCE || me == root) ? MPI_IN_PLACE : c->sb;
    int n = c->n;
    switch (c->kind) {
    case K_REDUCE: return POST(MPI_Ireduce, MPI_Reduce_init, s, rb, n, t, op, root, cm);
    case K_ALLREDUCE: return POST(MPI_Iallreduce, MPI_Allreduce_init, s, rb, n, t, op, cm);
    case K_REDUCE_SCATTER:
        return POST(MPI_Ireduce_scatter, MPI_Reduce_scatter_init, s, rb, c->cnt, t, op, cm);
    case K_REDUCE_SCATTER_BLOCK:
        return POST(MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, s, rb, n, t, op, cm);
    case K_SCAN: return POST(MPI_Iscan, MPI_Scan_init, s, rb, n, t, op, cm);
    default: return POST(MPI_Iexscan, MPI_Exscan_init, s, rb, n, t, op, cm);
    }
}

/* set up, fill and post (and start, when persistent) */
static void cc_go(cc_t *c, int salt)
{
    cc_setup(c);
    cc_fill(c, salt);
    CHECK_RC(cc_post(c), MPI_SUCCESS);
    if (persistent)
        CHECK_RC(MPI_Start(&c->req), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ the list of cases */

static cc_t *cases;
static int ncases, capcases;

static cc_t mk(int kind, int n, int root, int sv, int rv, int ip, int rt, int op)
{
    cc_t c;
    memset(&c, 0, sizeof c);
    c.kind = kind, c.n = n, c.root = root, c.sv = sv, c.rv = rv, c.ip = ip, c.rt = rt, c.op = op;
    c.comm = MPI_COMM_NULL; /* the communicator under test */
    c.req = MPI_REQUEST_NULL;
    return c;
}
static int thin_, thin_ctr;
/* add a case; one that is not `must` is kept only every thin_-th time */
static void add(int must, int kind, int n, int root, int sv, int rv, int ip, int rt, int op)
{
    if (!must && thin_ctr++ % thin_)
        return;
    if (ncases == capcases) {
        capcases = capcases ? 2 * capcases : 256;
        cases = realloc(cases, (size_t)capcases * sizeof *cases);
        CHECK(cases);
    }
    cases[ncases++] = mk(kind, n, root, sv, rv, ip, rt, op);
}

/* Every collective: sizes 0, 1, 7 and large; every root for the small sizes, the first
 * and last for the large; layouts and in place as the call allows; for the reductions
 * every (type, op) pair at 7 elements, a few at the other sizes. With thin > 1 only
 * every thin-th of the optional cases is kept (to bound the run time with many
 * processes); kept always: each function at each size with roots 0 and size-1, plain
 * and in place, and every (type, op) pair with at least one reduction function. */
static void build_cases(int thin)
{
    static const int ns[4] = {0, 1, 7, -1};
    static const int lay7[][2] = {{0, 0}, {1, 0}, {0, 1}, {2, 0}, {1, 2}, {0, 2}};
    static const int laybig[][2] = {{0, 0}, {2, 1}};
    int big_a2a = size > 4 ? BIG / 4 : BIG;
    ncases = 0;
    thin_ = thin > 1 ? thin : 1;
    thin_ctr = 0;
    for (int i = 0; i < 3; i++)
        add(1, K_BARRIER, 0, 0, 0, 0, 0, 0, 0);
    for (int kind = K_BCAST; kind <= K_ALLTOALLW; kind++)
        for (int s = 0; s < 4 && !(persistent && MPICH_BUGS && mpich_broken_init(kind)); s++) {
            int a2a = kind >= K_ALLTOALL, rooted = kind <= K_SCATTERV;
            int n = ns[s] >= 0 ? ns[s] : a2a ? big_a2a : BIG;
            int nl = s == 2 ? 6 : s == 3 ? 2 : 1;
            if (kind == K_ALLTOALLW && nl > 1)
                nl = 2; /* its layouts differ per peer anyway */
            for (int root = 0; root < (rooted ? size : 1); root++) {
                int edge = root == 0 || root == size - 1;
                if (s == 3 && !edge)
                    continue;
                for (int l = 0; l < nl; l++) {
                    int sv = s == 3 ? laybig[l][0] : lay7[l][0];
                    int rv = s == 3 ? laybig[l][1] : lay7[l][1];
                    if (kind == K_BCAST && s == 2 && l > 2)
                        break;
                    if (kind == K_BCAST)
                        sv = rv = l;
                    add(edge && (l == 0 || s == 3 || (kind + root + l) % 3 == 0), kind, n, root, sv,
                        rv, 0, 0, 0);
                }
                if (kind == K_BCAST) /* MPI_IN_PLACE is not allowed for bcast */
                    continue;
                for (int L = 0; L < (s == 2 ? 3 : 1); L++)
                    add(edge && L == (kind + root) % 3 % (s == 2 ? 3 : 1), kind, n, root, L, L, 1,
                        0, 0);
            }
        }
    for (int kind = K_REDUCE; kind <= K_EXSCAN; kind++)
        for (int s = 0; s < 4; s++)
            for (int ci = 0; ci < NRCOMBOS; ci++) {
                int rt = rcombos[ci][0], op = rcombos[ci][1];
                int n = ns[s];
                if (s != 2 && !((rt == RT_INT && op == O_SUM) || rt == RT_MAT ||
                                (rt == RT_DI && op == O_MAXLOC) || (rt == RT_DBL && op == O_SUM)))
                    continue;
                if (s == 3 && !(rt == RT_DBL || rt == RT_MAT))
                    continue;
                if (s == 3)
                    n = rt == RT_MAT ? 5000 : BIGRED;
                if (s == 3 && (kind == K_REDUCE_SCATTER || kind == K_REDUCE_SCATTER_BLOCK))
                    n = n / size; /* the whole vector stays n */
                for (int root = 0; root < (kind == K_REDUCE ? size : 1); root++) {
                    int edge = root == 0 || root == size - 1;
                    if (s == 3 && !edge)
                        continue;
                    for (int ip = 0; ip < 2; ip++)
                        add(edge && (s == 3 || rt == RT_MAT || (ci + kind + ip) % 6 == 0), kind, n,
                            root, 0, 0, ip, rt, op);
                }
            }
}

/* ------------------------------------------------------------------ completion */

/* Before a completion call: fields the call should overwrite, or leave alone. */
static inline void st_poison(MPI_Status *st)
{
    memset(st, 0x5b, sizeof *st);
    st->MPI_SOURCE = st->MPI_TAG = st->MPI_ERROR = -99;
}
/* What MPI-4.0 defines of the status of a completed collective request: MPI_SOURCE and
 * MPI_TAG are undefined (6.12); MPI_ERROR is not set by single completions (3.2.5) and
 * is MPI_SUCCESS or left alone by multiple ones that return MPI_SUCCESS. Nothing else
 * (MPICH leaves the whole status alone, so not even MPI_Test_cancelled is defined). */
static inline void st_check_coll(const MPI_Status *st)
{
    CHECK(st->MPI_ERROR == -99 || st->MPI_ERROR == MPI_SUCCESS);
}
/* The empty status (3.7.3): what waiting on MPI_REQUEST_NULL or an inactive persistent
 * request gives. */
static inline void st_check_empty(const MPI_Status *st)
{
    CHECK(st->MPI_SOURCE == MPI_ANY_SOURCE);
    CHECK(st->MPI_TAG == MPI_ANY_TAG);
    CHECK(st->MPI_ERROR == MPI_SUCCESS || st->MPI_ERROR == -99);
    int k = -1, fl = 1;
    CHECK_RC(MPI_Get_count(st, MPI_INT, &k), MPI_SUCCESS);
    CHECK(k == 0);
    CHECK_RC(MPI_Test_cancelled(st, &fl), MPI_SUCCESS);
    CHECK(fl == 0);
}
/* After a completion: an MPI_I* request is freed; a persistent one stays, inactive. */
static inline void req_done(MPI_Request r, MPI_Request before)
{
    if (persistent)
        CHECK(r == before && r != MPI_REQUEST_NULL);
    else
        CHECK(r == MPI_REQUEST_NULL);
}

/* MPI_Testall (MPI_Waitall for MPICH's persistent requests, see MPICH_BUGS) */
static inline int testall_(int n, MPI_Request *r, int *flag, MPI_Status *st)
{
    if (persistent && MPICH_BUGS) {
        *flag = 1;
        return MPI_Waitall(n, r, st);
    }
    return MPI_Testall(n, r, flag, st);
}

/* Complete one request, the way `how` says (several completion functions). */
static void complete1(MPI_Request *r, int how)
{
    MPI_Status st;
    MPI_Request before = *r;
    int flag = 0, idx = -1, outc = 0;
    st_poison(&st);
    switch (how % 7) {
    case 0: CHECK_RC(MPI_Wait(r, &st), MPI_SUCCESS); break;
    case 1:
        while (!flag)
            CHECK_RC(MPI_Test(r, &flag, &st), MPI_SUCCESS);
        break;
    case 2: CHECK_RC(MPI_Waitall(1, r, &st), MPI_SUCCESS); break;
    case 3:
        CHECK_RC(MPI_Waitany(1, r, &idx, &st), MPI_SUCCESS);
        CHECK(idx == 0);
        break;
    case 4:
        while (!flag)
            CHECK_RC(testall_(1, r, &flag, &st), MPI_SUCCESS);
        break;
    case 5:
        CHECK_RC(MPI_Waitsome(1, r, &outc, &idx, &st), MPI_SUCCESS);
        CHECK(outc == 1 && idx == 0);
        break;
    default:
        while (!flag) { /* MPI_Request_get_status does not free; then MPI_Wait */
            CHECK_RC(MPI_Request_get_status(*r, &flag, &st), MPI_SUCCESS);
            CHECK(*r == before);
        }
        st_check_coll(&st);
        st_poison(&st);
        CHECK_RC(MPI_Wait(r, &st), MPI_SUCCESS);
    }
    st_check_coll(&st);
    req_done(*r, before);
}

/* Complete n requests: Waitall over the reversed array, Testall, MPI_Test on each (last
 * posted first), Waitany or Testsome until all are done. Inactive persistent requests
 * count as null ones in Waitany / Testsome. */
static void complete_n(MPI_Request *r, int n, int how)
{
    MPI_Request *rr = xmalloc((size_t)n * sizeof *rr), *before = xmalloc((size_t)n * sizeof *rr);
    MPI_Status *st = xmalloc((size_t)n * sizeof *st);
    int *idx = xmalloc((size_t)n * sizeof *idx), *done = xmalloc((size_t)n * sizeof *done);
    for (int i = 0; i < n; i++) {
        rr[i] = before[i] = r[n - 1 - i];
        st_poison(&st[i]);
        done[i] = 0;
    }
    int flag = 0, left = n, outc = 0, k = -1;
    switch (how % 5) {
    case 0:
        CHECK_RC(MPI_Waitall(n, rr, st), MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            st_check_coll(&st[i]);
        break;
    case 1:
        while (!flag)
            CHECK_RC(testall_(n, rr, &flag, st), MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            st_check_coll(&st[i]);
        break;
    case 2:
        while (left)
            for (int i = 0; i < n; i++)
                if (!done[i]) {
                    CHECK_RC(MPI_Test(&rr[i], &flag, &st[i]), MPI_SUCCESS);
                    if (flag) {
                        done[i] = 1, left--;
                        st_check_coll(&st[i]);
                    }
                }
        break;
    case 3:
        while (left) {
            MPI_Status s1;
            st_poison(&s1);
            CHECK_RC(MPI_Waitany(n, rr, &k, &s1), MPI_SUCCESS);
            CHECK(k >= 0 && k < n && !done[k]);
            done[k] = 1, left--;
            st_check_coll(&s1);
            if (persistent && MPICH_BUGS)
                rr[k] = MPI_REQUEST_NULL;
        }
        break;
    default:
        while (left) {
            CHECK_RC(MPI_Testsome(n, rr, &outc, idx, st), MPI_SUCCESS);
            CHECK(outc != MPI_UNDEFINED && outc >= 0 && outc <= left);
            for (int i = 0; i < outc; i++) {
                CHECK(idx[i] >= 0 && idx[i] < n && !done[idx[i]]);
                done[idx[i]] = 1;
                st_check_coll(&st[i]);
                st_poison(&st[i]);
                if (persistent && MPICH_BUGS)
                    rr[idx[i]] = MPI_REQUEST_NULL;
            }
            left -= outc;
        }
    }
    for (int i = 0; i < n; i++) {
        if (persistent && MPICH_BUGS && rr[i] == MPI_REQUEST_NULL)
            rr[i] = before[i];
        req_done(rr[i], before[i]);
        r[n - 1 - i] = rr[i];
    }
    free(rr);
    free(before);
    free(st);
    free(idx);
    free(done);
}

/* ------------------------------------------------------------------ argument errors */

static int eclass(int rc)
{
    int c = -1;
    MPI_Error_class(rc, &c);
    return c;
}
/* The call must fail. MPI-4.0 names the class of an invalid root (MPI_ERR_ROOT), count
 * (MPI_ERR_COUNT), buffer (MPI_ERR_BUFFER), op, type, comm, but leaves implementations
 * free: any error passes; a class other than the suggested one is reported once. */
static void errchk(int rc, int suggested, const char *what, int line)
{
    if (rc == MPI_SUCCESS) {
        fprintf(stderr, "%s: rank %d: line %d: %s (%s): no error\n", prog, rank, line, what,
                persistent ? "persistent" : "nonblocking");
        exit(1);
    }
    int cl = eclass(rc);
    CHECK(cl > MPI_SUCCESS && cl <= MPI_ERR_LASTCODE);
    if (cl != suggested && rank == 0 && comm == MPI_COMM_WORLD)
        printf("%s: note: %s (%s) returned class %d, the standard suggests %d\n", prog, what,
               persistent ? "persistent" : "nonblocking", cl, suggested);
}
#define ERR(call, cls) errchk(call, cls, #call, __LINE__)
/* the form under test of a collective, into request r */
#define NB(ifn, pfn, ...) (persistent ? pfn(__VA_ARGS__, cinfo, &r) : ifn(__VA_ARGS__, &r))

static void test_errors(void)
{
    MPI_Request r;
    int a[8] = {0}, b[8] = {0};
    int *cnt = xmalloc((size_t)size * sizeof(int)), *dsp = xmalloc((size_t)size * sizeof(int));
    for (int i = 0; i < size; i++)
        cnt[i] = 1, dsp[i] = 0;
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    /* invalid roots: MPI_ERR_ROOT (MPI_PROC_NULL / MPI_ROOT are for intercommunicators) */
    ERR(NB(MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, size, comm), MPI_ERR_ROOT);
    ERR(NB(MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, -1, comm), MPI_ERR_ROOT);
    ERR(NB(MPI_Ibcast, MPI_Bcast_init, a, 1, MPI_INT, MPI_PROC_NULL, comm), MPI_ERR_ROOT);
    ERR(NB(MPI_Igather, MPI_Gather_init, a, 1, MPI_INT, b, 1, MPI_INT, size + 1, comm),
        MPI_ERR_ROOT);
    ERR(NB(MPI_Igatherv, MPI_Gatherv_init, a, 1, MPI_INT, b, cnt, dsp, MPI_INT, -3, comm),
        MPI_ERR_ROOT);
    ERR(NB(MPI_Iscatter, MPI_Scatter_init, a, 1, MPI_INT, b, 1, MPI_INT, size, comm), MPI_ERR_ROOT);
    ERR(NB(MPI_Iscatterv, MPI_Scatterv_init, a, cnt, dsp, MPI_INT, b, 1, MPI_INT, -5, comm),
        MPI_ERR_ROOT);
    ERR(NB(MPI_Ireduce, MPI_Reduce_init, a, b, 1, MPI_INT, MPI_SUM, size, comm), MPI_ERR_ROOT);
    /* negative counts: MPI_ERR_COUNT */
    ERR(NB(MPI_Ibcast, MPI_Bcast_init, a, -1, MPI_INT, 0, comm), MPI_ERR_COUNT);
    if (!MPICH_BUGS) { /* MPICH 4.0.2: stack smashing in its error path of the reductions */
        ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, b, -1, MPI_INT, MPI_SUM, comm),
            MPI_ERR_COUNT);
        ERR(NB(MPI_Iscan, MPI_Scan_init, a, b, -2, MPI_INT, MPI_SUM, comm), MPI_ERR_COUNT);
        ERR(NB(MPI_Ireduce_scatter_block, MPI_Reduce_scatter_block_init, a, b, -1, MPI_INT, MPI_SUM,
               comm),
            MPI_ERR_COUNT);
    }
    ERR(NB(MPI_Ialltoall, MPI_Alltoall_init, a, -1, MPI_INT, b, -1, MPI_INT, comm), MPI_ERR_COUNT);
    ERR(NB(MPI_Iallgather, MPI_Allgather_init, a, -1, MPI_INT, b, -1, MPI_INT, comm),
        MPI_ERR_COUNT);
    cnt[size - 1] = -1;
    ERR(NB(MPI_Ireduce_scatter, MPI_Reduce_scatter_init, a, b, cnt, MPI_INT, MPI_SUM, comm),
        MPI_ERR_COUNT);
    cnt[size - 1] = 1;
    /* MPI_IN_PLACE where the standard does not allow it: MPI_ERR_BUFFER. Never as recvbuf
     * of the all-to-all and all-reduce forms; not at all for bcast. (As sendbuf it is
     * allowed for alltoall / alltoallv / alltoallw since MPI-2.2: tested as cases.) */
    if (!MPICH_BUGS) /* MPICH 4.0.2 does not check it (and crashes) */
        ERR(NB(MPI_Ibcast, MPI_Bcast_init, MPI_IN_PLACE, 1, MPI_INT, 0, comm), MPI_ERR_BUFFER);
    ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, MPI_IN_PLACE, 1, MPI_INT, MPI_SUM, comm),
        MPI_ERR_BUFFER);
    ERR(NB(MPI_Ialltoall, MPI_Alltoall_init, a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, comm),
        MPI_ERR_BUFFER);
    /* the same buffer as sendbuf and recvbuf (aliasing; MPI_IN_PLACE is the way) */
    ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, a, 1, MPI_INT, MPI_SUM, comm), MPI_ERR_BUFFER);
    /* ops and types */
    ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, b, 1, MPI_INT, MPI_OP_NULL, comm), MPI_ERR_OP);
    ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, b, 1, MPI_DOUBLE, MPI_BAND, comm), MPI_ERR_OP);
    ERR(NB(MPI_Iexscan, MPI_Exscan_init, a, b, 1, MPI_INT, MPI_OP_NULL, comm), MPI_ERR_OP);
    ERR(NB(MPI_Iallreduce, MPI_Allreduce_init, a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, comm),
        MPI_ERR_TYPE);
    ERR(NB(MPI_Ialltoall, MPI_Alltoall_init, a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm),
        MPI_ERR_TYPE);
    if (comm == MPI_COMM_WORLD) { /* raised on MPI_COMM_WORLD's handler */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        if (persistent)
            ERR(MPI_Barrier_init(MPI_COMM_NULL, cinfo, &r), MPI_ERR_COMM);
        else
            ERR(MPI_Ibarrier(MPI_COMM_NULL, &r), MPI_ERR_COMM);
    }
    /* the communicator still works */
    a[0] = rank + 1;
    r = MPI_REQUEST_NULL;
    CHECK_RC(NB(MPI_Iallreduce, MPI_Allreduce_init, a, b, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
    if (persistent)
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(b[0] == size * (size + 1) / 2);
    if (persistent)
        CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    free(cnt);
    free(dsp);
}

/* run a test; with MPI_COLL_TIMES set in the environment, rank 0 prints its time */
#define PHASE(call)                                                                                \
    do {                                                                                           \
        double t_ = MPI_Wtime();                                                                   \
        call;                                                                                      \
        if (rank == 0 && getenv("MPI_COLL_TIMES"))                                                 \
            printf("%s: %d ranks: %s %.2f s\n", prog, size, #call, MPI_Wtime() - t_);              \
    } while (0)

/* ------------------------------------------------------------------ set-up */

static void common_init(int *argc, char ***argv, const char *name)
{
    prog = name;
    CHECK_RC(MPI_Init(argc, argv), MPI_SUCCESS);
    cinfo = MPI_INFO_NULL;
    MPI_Datatype v, s;
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &v), MPI_SUCCESS);
    CHECK_RC(MPI_Type_create_resized(v, 0, 3 * sizeof(int), &lt[1]), MPI_SUCCESS);
    MPI_Type_free(&v);
    int bl[2] = {1, 1};
    MPI_Aint dp[2] = {0, 3 * sizeof(int)};
    MPI_Datatype ty[2] = {MPI_INT, MPI_INT};
    CHECK_RC(MPI_Type_create_struct(2, bl, dp, ty, &s), MPI_SUCCESS);
    CHECK_RC(MPI_Type_create_resized(s, 0, 5 * sizeof(int), &lt[2]), MPI_SUCCESS);
    MPI_Type_free(&s);
    lt[0] = MPI_INT;
    CHECK_RC(MPI_Type_commit(&lt[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&lt[2]), MPI_SUCCESS);
    CHECK_RC(MPI_Type_contiguous(4, MPI_LONG_LONG, &mat_t_), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&mat_t_), MPI_SUCCESS);
    CHECK_RC(MPI_Op_create(matop, 0, &matop_), MPI_SUCCESS);
    comm = MPI_COMM_WORLD;
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
}

static void common_finalize(void)
{
    MPI_Type_free(&lt[1]);
    MPI_Type_free(&lt[2]);
    MPI_Type_free(&mat_t_);
    MPI_Op_free(&matop_);
    free(cases);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
}

#endif
