/* mpi_coll_inter_basic.c — MPI collectives on intercommunicators (src/mpi/coll_inter.c):
 * every collective MPI defines on them, blocking, nonblocking and persistent (started
 * twice), with contents checked exactly: every root of each group for the rooted ones
 * (MPI_ROOT / MPI_PROC_NULL / remote rank; the MPI_PROC_NULL members' buffers must stay
 * untouched), the other group's data for the rest, large counts through the rendezvous
 * and the large-bcast path, v-forms with gaps between the blocks, Alltoallw with a type
 * per peer, a non-commutative user op checked for rank order, Barrier's ordering (timed).
 * Two intercommunicators over WORLD with unequal groups: the first k ranks against the
 * rest, and the last k ranks against the rest (k = size / 3, at least 1). Needs 2 ranks. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

static MPI_Comm ic;       /* the intercommunicator under test */
static int mg, og;        /* my group's id (0/1) and the other group's */
static int L, R, me;      /* local size, remote size, local rank */
static int mode;          /* 0 blocking, 1 nonblocking, 2 persistent */
static MPI_Datatype pair; /* 2 contiguous ints */
static MPI_Op affine;     /* non-commutative: composition of x -> m x + c (mod 1009) */

#define SENT (-99)

/* The j-th int contributed by rank r of group g (salt: which test). */
static int val(int g, int r, int64_t j, int salt)
{
    return (int)(((int64_t)g * 500009 + (int64_t)r * 7919 + j * 31 + (int64_t)salt * 131) % 100003);
}

static void fill(int *b, int64_t n, int v)
{
    for (int64_t i = 0; i < n; i++)
        b[i] = v;
}

static int *ialloc(int64_t n)
{
    int *b = malloc((size_t)(n > 0 ? n : 1) * sizeof *b);
    CHECK(b);
    fill(b, n, SENT);
    return b;
}

#define ICHECK(got, want)                                                                          \
    do {                                                                                           \
        int g_ = (got), w_ = (want);                                                               \
        if (g_ != w_) {                                                                            \
            fprintf(stderr, "group %d rank %d mode %d: %s line %d: got %d want %d\n", mg, me,      \
                    mode, __func__, __LINE__, g_, w_);                                             \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* Runs one collective in the current mode: B the blocking call, I the nonblocking one and
 * P the persistent init (both on the request rq); CLEAR runs before every run. */
#define RUN(CLEAR, B, I, P)                                                                        \
    do {                                                                                           \
        MPI_Request rq = MPI_REQUEST_NULL;                                                         \
        CLEAR;                                                                                     \
        if (mode == 0) {                                                                           \
            CHECK_RC(B, MPI_SUCCESS);                                                              \
        } else if (mode == 1) {                                                                    \
            CHECK_RC(I, MPI_SUCCESS);                                                              \
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);                               \
        } else {                                                                                   \
            CHECK_RC(P, MPI_SUCCESS);                                                              \
            for (int k_ = 0; k_ < 2; k_++) {                                                       \
                CLEAR;                                                                             \
                CHECK_RC(MPI_Start(&rq), MPI_SUCCESS);                                             \
                CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);                           \
            }                                                                                      \
            CHECK_RC(MPI_Request_free(&rq), MPI_SUCCESS);                                          \
        }                                                                                          \
    } while (0)

/* The root argument of this process when rank rr of group g is the root. */
static int root_arg(int g, int rr)
{
    if (g == og)
        return rr;
    return me == rr ? MPI_ROOT : MPI_PROC_NULL;
}

/* ------------------------------------------------------------------ barrier */

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* One group enters late; nobody of the other may leave before it entered. */
static void t_barrier(void)
{
    for (int slow = 0; slow < 2; slow++) {
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        double t0 = MPI_Wtime();
        if (mg == slow)
            sleep_ms(200);
        RUN((void)0, MPI_Barrier(ic), MPI_Ibarrier(ic, &rq),
            MPI_Barrier_init(ic, MPI_INFO_NULL, &rq));
        if (mg != slow)
            CHECK(MPI_Wtime() - t0 >= 0.1);
    }
}

/* ------------------------------------------------------------------ rooted */

static void t_bcast(int64_t n)
{
    int *b = ialloc(n);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            if (root == MPI_ROOT)
                for (int64_t j = 0; j < n; j++)
                    b[j] = val(g, rr, j, 1);
            RUN(if (root != MPI_ROOT) fill(b, n, SENT), MPI_Bcast(b, (int)n, MPI_INT, root, ic),
                MPI_Ibcast(b, (int)n, MPI_INT, root, ic, &rq),
                MPI_Bcast_init(b, (int)n, MPI_INT, root, ic, MPI_INFO_NULL, &rq));
            for (int64_t j = 0; j < n; j++)
                ICHECK(b[j], root == MPI_PROC_NULL ? SENT : val(g, rr, j, 1));
        }
    free(b);
}

static void t_gather(int64_t n)
{
    int *sb = ialloc(n), *rb = ialloc(n * (L > R ? L : R));
    for (int64_t j = 0; j < n; j++)
        sb[j] = val(mg, me, j, 2);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            RUN(fill(rb, n * R, SENT),
                MPI_Gather(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic),
                MPI_Igather(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic, &rq),
                MPI_Gather_init(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic, MPI_INFO_NULL,
                                &rq));
            for (int i = 0; i < R; i++)
                for (int64_t j = 0; j < n; j++)
                    ICHECK(rb[i * n + j], root == MPI_ROOT ? val(og, i, j, 2) : SENT);
        }
    free(sb);
    free(rb);
}

static void t_scatter(int64_t n)
{
    int *sb = ialloc(n * R), *rb = ialloc(n);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            for (int i = 0; i < R; i++)
                for (int64_t j = 0; j < n; j++)
                    sb[i * n + j] = val(mg, me, i * n + j, 3);
            RUN(fill(rb, n, SENT), MPI_Scatter(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic),
                MPI_Iscatter(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic, &rq),
                MPI_Scatter_init(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, root, ic, MPI_INFO_NULL,
                                 &rq));
            for (int64_t j = 0; j < n; j++)
                ICHECK(rb[j], g == og ? val(og, rr, me * n + j, 3) : SENT);
        }
    free(sb);
    free(rb);
}

/* v-forms: remote rank i's block has (i % 3) * n + 1 elements, at gaps of 2. */
static int cnt(int i, int n)
{
    return (i % 3) * n + 1;
}

static void t_gatherv(int n)
{
    int *counts = malloc((size_t)R * sizeof *counts), *displs = malloc((size_t)R * sizeof *displs);
    CHECK(counts && displs);
    int total = 0;
    for (int i = 0; i < R; i++) {
        counts[i] = cnt(i, n);
        displs[i] = total + 2;
        total += counts[i] + 2;
    }
    int *sb = ialloc(cnt(me, n)), *rb = ialloc(total);
    for (int j = 0; j < cnt(me, n); j++)
        sb[j] = val(mg, me, j, 4);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            RUN(fill(rb, total, SENT),
                MPI_Gatherv(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, root, ic),
                MPI_Igatherv(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, root, ic, &rq),
                MPI_Gatherv_init(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, root, ic,
                                 MPI_INFO_NULL, &rq));
            for (int i = 0, k = 0; i < R; i++) {
                for (; k < displs[i]; k++)
                    ICHECK(rb[k], SENT);
                for (int j = 0; j < counts[i]; j++, k++)
                    ICHECK(rb[k], root == MPI_ROOT ? val(og, i, j, 4) : SENT);
            }
        }
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

static void t_scatterv(int n)
{
    int *counts = malloc((size_t)R * sizeof *counts), *displs = malloc((size_t)R * sizeof *displs);
    CHECK(counts && displs);
    int total = 0;
    for (int i = 0; i < R; i++) {
        counts[i] = cnt(i, n);
        displs[i] = total + 1;
        total += counts[i] + 1;
    }
    int *sb = ialloc(total), *rb = ialloc(cnt(me, n) + 1);
    for (int k = 0; k < total; k++)
        sb[k] = val(mg, me, k, 5);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            /* the receiver's displs: what the sender (remote root, same layout over its
             * remote group = my group) used */
            int d = 0;
            for (int i = 0; i < me; i++)
                d += cnt(i, n) + 1;
            RUN(fill(rb, cnt(me, n) + 1, SENT),
                MPI_Scatterv(sb, counts, displs, MPI_INT, rb, cnt(me, n), MPI_INT, root, ic),
                MPI_Iscatterv(sb, counts, displs, MPI_INT, rb, cnt(me, n), MPI_INT, root, ic, &rq),
                MPI_Scatterv_init(sb, counts, displs, MPI_INT, rb, cnt(me, n), MPI_INT, root, ic,
                                  MPI_INFO_NULL, &rq));
            for (int j = 0; j < cnt(me, n); j++)
                ICHECK(rb[j], g == og ? val(og, rr, d + 1 + j, 5) : SENT);
            ICHECK(rb[cnt(me, n)], SENT);
        }
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

/* ------------------------------------------------------------------ all-to-all kinds */

static void t_allgather(int64_t n)
{
    int *sb = ialloc(n), *rb = ialloc(n * R);
    for (int64_t j = 0; j < n; j++)
        sb[j] = val(mg, me, j, 6);
    RUN(fill(rb, n * R, SENT), MPI_Allgather(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic),
        MPI_Iallgather(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic, &rq),
        MPI_Allgather_init(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic, MPI_INFO_NULL, &rq));
    for (int i = 0; i < R; i++)
        for (int64_t j = 0; j < n; j++)
            ICHECK(rb[i * n + j], val(og, i, j, 6));
    free(sb);
    free(rb);
}

/* gaps = 0: the blocks one after the other (bcast in place); else gaps between them
 * (the packed path). */
static void t_allgatherv(int n, int gaps)
{
    int *counts = malloc((size_t)R * sizeof *counts), *displs = malloc((size_t)R * sizeof *displs);
    CHECK(counts && displs);
    int total = 0;
    for (int i = 0; i < R; i++) {
        counts[i] = cnt(i, n);
        displs[i] = total + gaps;
        total += counts[i] + gaps;
    }
    int *sb = ialloc(cnt(me, n)), *rb = ialloc(total);
    for (int j = 0; j < cnt(me, n); j++)
        sb[j] = val(mg, me, j, 7);
    RUN(fill(rb, total, SENT),
        MPI_Allgatherv(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, ic),
        MPI_Iallgatherv(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, ic, &rq),
        MPI_Allgatherv_init(sb, cnt(me, n), MPI_INT, rb, counts, displs, MPI_INT, ic, MPI_INFO_NULL,
                            &rq));
    for (int i = 0, k = 0; i < R; i++) {
        for (; k < displs[i]; k++)
            ICHECK(rb[k], SENT);
        for (int j = 0; j < counts[i]; j++, k++)
            ICHECK(rb[k], val(og, i, j, 7));
    }
    free(sb);
    free(rb);
    free(counts);
    free(displs);
}

static void t_alltoall(int64_t n)
{
    int *sb = ialloc(n * R), *rb = ialloc(n * R);
    for (int i = 0; i < R; i++) /* block i to remote rank i */
        for (int64_t j = 0; j < n; j++)
            sb[i * n + j] = val(mg, me, i * 100000 + j, 8);
    RUN(fill(rb, n * R, SENT), MPI_Alltoall(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic),
        MPI_Ialltoall(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic, &rq),
        MPI_Alltoall_init(sb, (int)n, MPI_INT, rb, (int)n, MPI_INT, ic, MPI_INFO_NULL, &rq));
    for (int i = 0; i < R; i++)
        for (int64_t j = 0; j < n; j++)
            ICHECK(rb[i * n + j], val(og, i, me * 100000 + j, 8));
    free(sb);
    free(rb);
}

/* Elements sender s (its local rank) sends to receiver d (a rank of the other group). */
static int a2acnt(int s, int d, int n)
{
    return ((s * 2 + d) % 4) * n;
}

/* w = 0: Alltoallv on ints; w = 1: Alltoallw, received as pairs from odd remote ranks. */
static void t_alltoallvw(int n, int w)
{
    int *sc = malloc(4 * (size_t)R * sizeof *sc), *sd = sc + R, *rc = sc + 2 * R, *rd = sc + 3 * R;
    MPI_Datatype *st = malloc(2 * (size_t)R * sizeof *st), *rt = st + R;
    CHECK(sc && st);
    int stot = 0, rtot = 0;
    for (int i = 0; i < R; i++) {
        sc[i] = a2acnt(me, i, n);
        sd[i] = stot + 1;
        stot += sc[i] + 1;
        rc[i] = a2acnt(i, me, n);
        rd[i] = rtot + 3;
        rtot += rc[i] + 3;
        st[i] = MPI_INT;
        rt[i] = w && i % 2 ? pair : MPI_INT;
    }
    int *sb = ialloc(stot), *rb = ialloc(rtot);
    for (int i = 0; i < R; i++)
        for (int j = 0; j < sc[i]; j++)
            sb[sd[i] + j] = val(mg, me, i * 100000 + j, 9);
    if (!w) {
        RUN(fill(rb, rtot, SENT), MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic),
            MPI_Ialltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, &rq),
            MPI_Alltoallv_init(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, ic, MPI_INFO_NULL, &rq));
    } else {
        /* byte displacements; counts in each peer's type (a2acnt is even when n is) */
        int *scw = malloc(4 * (size_t)R * sizeof *scw), *sdw = scw + R, *rcw = scw + 2 * R,
            *rdw = scw + 3 * R;
        CHECK(scw);
        for (int i = 0; i < R; i++) {
            scw[i] = sc[i];
            sdw[i] = sd[i] * (int)sizeof(int);
            rcw[i] = rt[i] == pair ? rc[i] / 2 : rc[i];
            rdw[i] = rd[i] * (int)sizeof(int);
        }
        RUN(fill(rb, rtot, SENT), MPI_Alltoallw(sb, scw, sdw, st, rb, rcw, rdw, rt, ic),
            MPI_Ialltoallw(sb, scw, sdw, st, rb, rcw, rdw, rt, ic, &rq),
            MPI_Alltoallw_init(sb, scw, sdw, st, rb, rcw, rdw, rt, ic, MPI_INFO_NULL, &rq));
        free(scw);
    }
    for (int i = 0, k = 0; i < R; i++) {
        for (; k < rd[i]; k++)
            ICHECK(rb[k], SENT);
        for (int j = 0; j < rc[i]; j++, k++)
            ICHECK(rb[k], val(og, i, me * 100000 + j, 9));
    }
    free(sb);
    free(rb);
    free(sc);
    free(st);
}

/* ------------------------------------------------------------------ reductions */

/* inout = in o inout, x -> m x + c as pairs (m, c): first in, then inout. */
static void affine_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)t;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < *len; i++) {
        int ma = a[2 * i], ca = a[2 * i + 1], mb = b[2 * i], cb = b[2 * i + 1];
        b[2 * i] = ma * mb % 1009;
        b[2 * i + 1] = (mb * ca + cb) % 1009;
    }
}

/* The element j of group g's rank r for the affine op. */
static void aff_elem(int g, int r, int64_t j, int *m, int *c)
{
    *m = val(g, r, j, 10) % 1008 + 1;
    *c = val(g, r, j, 11) % 1009;
}

/* Expected reduction of group g (size gs): sum, or the affine fold in rank order. */
static void expect(int g, int gs, int64_t j, int aff, int *e0, int *e1)
{
    if (!aff) {
        int64_t s = 0;
        for (int r = 0; r < gs; r++)
            s += val(g, r, j, 12);
        *e0 = (int)s;
        *e1 = 0;
        return;
    }
    int m = 1, c = 0;
    for (int r = 0; r < gs; r++) { /* acc then element r */
        int mr, cr;
        aff_elem(g, r, j, &mr, &cr);
        c = (mr * c + cr) % 1009;
        m = m * mr % 1009;
    }
    *e0 = m;
    *e1 = c;
}

/* n elements: ints (sum) or pairs (affine); each process's operand. */
static int *operand(int64_t n, int aff)
{
    int *b = ialloc(2 * n);
    for (int64_t j = 0; j < n; j++)
        if (aff)
            aff_elem(mg, me, j, &b[2 * j], &b[2 * j + 1]);
        else
            b[j] = val(mg, me, j, 12);
    return b;
}

static void check_red(const int *b, int64_t off, int64_t n, int aff)
{
    for (int64_t j = 0; j < n; j++) {
        int e0, e1;
        expect(og, R, off + j, aff, &e0, &e1);
        ICHECK(b[aff ? 2 * j : j], e0);
        if (aff)
            ICHECK(b[2 * j + 1], e1);
    }
}

static void t_reduce(int64_t n, int aff)
{
    MPI_Datatype t = aff ? pair : MPI_INT;
    MPI_Op op = aff ? affine : MPI_SUM;
    int *sb = operand(n, aff), *rb = ialloc(2 * n);
    for (int g = 0; g < 2; g++)
        for (int rr = 0; rr < (g == mg ? L : R); rr++) {
            int root = root_arg(g, rr);
            RUN(fill(rb, 2 * n, SENT), MPI_Reduce(sb, rb, (int)n, t, op, root, ic),
                MPI_Ireduce(sb, rb, (int)n, t, op, root, ic, &rq),
                MPI_Reduce_init(sb, rb, (int)n, t, op, root, ic, MPI_INFO_NULL, &rq));
            if (root == MPI_ROOT)
                check_red(rb, 0, n, aff);
            else
                for (int64_t j = 0; j < 2 * n; j++)
                    ICHECK(rb[j], SENT);
        }
    free(sb);
    free(rb);
}

static void t_allreduce(int64_t n, int aff)
{
    MPI_Datatype t = aff ? pair : MPI_INT;
    MPI_Op op = aff ? affine : MPI_SUM;
    int *sb = operand(n, aff), *rb = ialloc(2 * n);
    RUN(fill(rb, 2 * n, SENT), MPI_Allreduce(sb, rb, (int)n, t, op, ic),
        MPI_Iallreduce(sb, rb, (int)n, t, op, ic, &rq),
        MPI_Allreduce_init(sb, rb, (int)n, t, op, ic, MPI_INFO_NULL, &rq));
    check_red(rb, 0, n, aff);
    free(sb);
    free(rb);
}

/* Both groups' send vectors have L * R * k elements: Reduce_scatter_block gives each
 * local rank R * k of them; Reduce_scatter splits them unevenly. */
static void t_reduce_scatter(int k, int aff, int block)
{
    MPI_Datatype t = aff ? pair : MPI_INT;
    MPI_Op op = aff ? affine : MPI_SUM;
    int64_t total = (int64_t)L * R * k, off = 0, rest = total;
    int *counts = malloc((size_t)L * sizeof *counts);
    CHECK(counts);
    for (int i = 0; i < L; i++) { /* uneven: R * k +- 1, the last one what remains */
        counts[i] = block ? R * k : i < L - 1 ? R * k + (i % 2 ? -1 : 1) : (int)rest;
        rest -= counts[i];
        if (i < me)
            off += counts[i];
    }
    int *sb = operand(total, aff), *rb = ialloc(2 * (int64_t)counts[me]);
    if (block)
        RUN(fill(rb, 2 * (int64_t)counts[me], SENT),
            MPI_Reduce_scatter_block(sb, rb, R * k, t, op, ic),
            MPI_Ireduce_scatter_block(sb, rb, R * k, t, op, ic, &rq),
            MPI_Reduce_scatter_block_init(sb, rb, R * k, t, op, ic, MPI_INFO_NULL, &rq));
    else
        RUN(fill(rb, 2 * (int64_t)counts[me], SENT), MPI_Reduce_scatter(sb, rb, counts, t, op, ic),
            MPI_Ireduce_scatter(sb, rb, counts, t, op, ic, &rq),
            MPI_Reduce_scatter_init(sb, rb, counts, t, op, ic, MPI_INFO_NULL, &rq));
    check_red(rb, off, counts[me], aff);
    free(sb);
    free(rb);
    free(counts);
}

/* ------------------------------------------------------------------ errors */

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* Local checks only (nothing is sent when a call fails). */
static void t_errors(void)
{
    int a[4] = {0}, b[4] = {0}, cs[64] = {0}, ds[64] = {0};
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_RETURN);
    CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, R, ic)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, -5, ic)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, R + 1, ic)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -7, ic)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, 0, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Scatter(a, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Allgatherv(MPI_IN_PLACE, 1, MPI_INT, b, cs, ds, MPI_INT, ic)) ==
          MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Alltoall(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, ic)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Reduce_scatter_block(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, ic)) ==
          MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, ic)) == MPI_ERR_COMM);
    CHECK(eclass(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, ic)) == MPI_ERR_COMM);
    MPI_Request rq;
    CHECK(eclass(MPI_Iscan(a, b, 1, MPI_INT, MPI_SUM, ic, &rq)) == MPI_ERR_COMM);
    CHECK(eclass(MPI_Bcast(a, -1, MPI_INT, 0, ic)) == MPI_ERR_COUNT);
    /* MPI_PROC_NULL: nothing is significant but root */
    CHECK_RC(MPI_Bcast(NULL, 5, MPI_INT, MPI_PROC_NULL, ic), MPI_SUCCESS);
    CHECK_RC(MPI_Gatherv(NULL, 5, MPI_INT, NULL, NULL, NULL, MPI_INT, MPI_PROC_NULL, ic),
             MPI_SUCCESS);
    MPI_Comm_set_errhandler(ic, MPI_ERRORS_ARE_FATAL);
}

/* ------------------------------------------------------------------ driver */

static void run_all(void)
{
    t_errors();
    for (mode = 0; mode < 3; mode++) {
        t_barrier();
        t_bcast(1);
        t_bcast(0);
        t_bcast(30000); /* rendezvous; the large-bcast path in local groups of 3+ */
        t_gather(1);
        t_gather(5000);
        t_scatter(1);
        t_scatter(5000);
        t_gatherv(3);
        t_gatherv(3000);
        t_scatterv(3);
        t_scatterv(3000);
        t_allgather(0);
        t_allgather(2);
        t_allgather(5000);
        t_allgatherv(4, 0);
        t_allgatherv(4, 3);
        t_allgatherv(4000, 5);
        t_alltoall(1);
        t_alltoall(3000);
        t_alltoallvw(2, 0);
        t_alltoallvw(2000, 0);
        t_alltoallvw(2, 1);
        t_alltoallvw(2000, 1);
        for (int aff = 0; aff < 2; aff++) {
            t_reduce(1, aff);
            t_reduce(3000, aff);
            t_allreduce(1, aff);
            t_allreduce(10000, aff);
            t_reduce_scatter(2, aff, 1);
            t_reduce_scatter(1000, aff, 1);
            t_reduce_scatter(2, aff, 0);
            t_reduce_scatter(1000, aff, 0);
        }
    }
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK(wsize >= 2);
    MPI_Type_contiguous(2, MPI_INT, &pair);
    MPI_Type_commit(&pair);
    MPI_Op_create(affine_fn, 0, &affine);
    int k = wsize / 3 > 0 ? wsize / 3 : 1;
    for (int variant = 0; variant < 2; variant++) {
        /* variant 0: ranks [0, k) against the rest; 1: ranks [wsize - k, wsize) */
        int small = variant ? wrank >= wsize - k : wrank < k;
        MPI_Comm half;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, small, wrank, &half), MPI_SUCCESS);
        int other_leader = variant ? (small ? 0 : wsize - k) : (small ? k : 0);
        CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, other_leader, 5, &ic), MPI_SUCCESS);
        mg = small;
        og = !small;
        MPI_Comm_size(ic, &L);
        MPI_Comm_remote_size(ic, &R);
        MPI_Comm_rank(ic, &me);
        run_all();
        CHECK_RC(MPI_Comm_free(&ic), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);
    }
    MPI_Op_free(&affine);
    MPI_Type_free(&pair);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (wrank == 0)
        printf("mpi_coll_inter_basic: ok\n");
    return 0;
}
