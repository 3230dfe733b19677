/* mpi_coll.c — blocking MPI collectives on intracommunicators (src/mpi/coll_basic.c,
 * coll_reduce.c): every function, every root, in place and not, contiguous and vector
 * datatypes on either side (the gaps of the vector layout must stay untouched), 0 / 1 /
 * 1000 / 100000 elements; exact sums/max/prod on ints and integral doubles, a
 * non-commutative user op (2x2 matrix product mod a prime, on a derived type) checked for
 * rank order, MAXLOC/MINLOC on MPI_DOUBLE_INT; error classes with MPI_ERRORS_RETURN; many
 * back-to-back mixed calls; the same on a split communicator. Also nonblocking and
 * persistent calls whose derived datatype and user op are freed right after the call
 * (MPI allows it: the operation keeps them until it completes). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int wrank, wsize;
static MPI_Comm comm; /* the communicator under test */
static int rank, size;
static MPI_Datatype vec; /* 2 ints at int offsets 0 and 2, extent 3 ints */

#define GAP (-7)
static const size_t sizes[] = {0, 1, 1000, 100000}; /* elements of 2 ints */
#define NSIZES (sizeof sizes / sizeof sizes[0])

/* Logical int j of a buffer in layout v (0: MPI_INT, 1: vec) sits at int pos(v, j). */
static size_t pos(int v, size_t j)
{
    return v ? (j / 2) * 3 + (j % 2) * 2 : j;
}
static int *lalloc(int v, size_t nlog)
{
    size_t m = v ? nlog / 2 * 3 : nlog;
    int *b = malloc((m ? m : 1) * sizeof *b);
    CHECK(b);
    for (size_t i = 0; i < m; i++)
        b[i] = GAP;
    return b;
}
static MPI_Datatype ltype(int v)
{
    return v ? vec : MPI_INT;
}
/* count of n 2-int elements in layout v */
static int lcount(int v, size_t n)
{
    return (int)(v ? n : 2 * n);
}
static void lgaps(int v, const int *b, size_t nlog)
{
    if (v)
        for (size_t k = 0; k < nlog / 2; k++)
            CHECK(b[k * 3 + 1] == GAP);
}
static int val(int r, size_t j, int salt)
{
    return (int)(((size_t)r * 7919u + j * 31u + (size_t)salt * 131u) % 100003u);
}
#define LCHECK(v, b, j, want)                                                                      \
    do {                                                                                           \
        int got_ = (b)[pos((v), (j))], want_ = (want);                                             \
        if (got_ != want_) {                                                                       \
            fprintf(stderr, "rank %d: %s line %d: int %zu got %d want %d\n", rank, __func__,       \
                    __LINE__, (size_t)(j), got_, want_);                                           \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

static int roots_for(size_t n, int k)
{ /* the k-th root to try, -1 when done: all roots, or 0 and size-1 for big sizes */
    if (n < 100000)
        return k < size ? k : -1;
    return k == 0 ? 0 : k == 1 && size > 1 ? size - 1 : -1;
}

static const int combos[3][2] = {{0, 0}, {1, 0}, {0, 1}};

/* ------------------------------------------------------------------ data movement */

static void test_barrier(void)
{
    for (int i = 0; i < 20; i++)
        CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
}

/* v = 2: the layout differs between ranks (MPI_INT at even ranks, vec at odd ones; the
 * signatures match), so the ranks must choose one algorithm whatever their types. */
static void test_bcast(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int k = 0, root; (root = roots_for(sizes[s], k)) >= 0; k++)
            for (int v0 = 0; v0 < 3; v0++) {
                int v = v0 == 2 ? rank % 2 : v0;
                size_t n = sizes[s], nl = 2 * n;
                int *b = lalloc(v, nl);
                if (rank == root)
                    for (size_t j = 0; j < nl; j++)
                        b[pos(v, j)] = val(root, j, 1);
                CHECK_RC(MPI_Bcast(b, lcount(v, n), ltype(v), root, comm), MPI_SUCCESS);
                for (size_t j = 0; j < nl; j++)
                    LCHECK(v, b, j, val(root, j, 1));
                lgaps(v, b, nl);
                free(b);
            }
}

static void test_gather(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int k = 0, root; (root = roots_for(sizes[s], k)) >= 0; k++)
            for (int c = 0; c < 3; c++)
                for (int ip = 0; ip < 2; ip++) {
                    int sv = combos[c][0], rv = combos[c][1];
                    if (ip && sv != rv)
                        continue;
                    size_t n = sizes[s], nl = 2 * n, tot = nl * (size_t)size;
                    int *sb = lalloc(sv, nl), *rb = rank == root ? lalloc(rv, tot) : NULL;
                    for (size_t j = 0; j < nl; j++)
                        sb[pos(sv, j)] = val(rank, j, 2);
                    const void *send = sb;
                    if (ip && rank == root) {
                        for (size_t j = 0; j < nl; j++)
                            rb[pos(rv, (size_t)root * nl + j)] = val(rank, j, 2);
                        send = MPI_IN_PLACE;
                    }
                    if (c == 2 && s == 1) { /* Gatherv with the v form, same layout */
                        int *cnt = malloc((size_t)size * sizeof *cnt),
                            *dsp = malloc((size_t)size * sizeof *dsp);
                        for (int i = 0; i < size; i++) {
                            cnt[i] = lcount(rv, n);
                            dsp[i] = i * lcount(rv, n);
                        }
                        CHECK_RC(MPI_Gatherv(send, lcount(sv, n), ltype(sv), rb, cnt, dsp,
                                             ltype(rv), root, comm),
                                 MPI_SUCCESS);
                        free(cnt);
                        free(dsp);
                    } else {
                        CHECK_RC(MPI_Gather(send, lcount(sv, n), ltype(sv), rb, lcount(rv, n),
                                            ltype(rv), root, comm),
                                 MPI_SUCCESS);
                    }
                    if (rank == root) {
                        for (int i = 0; i < size; i++)
                            for (size_t j = 0; j < nl; j++)
                                LCHECK(rv, rb, (size_t)i * nl + j, val(i, j, 2));
                        lgaps(rv, rb, tot);
                    }
                    free(sb);
                    free(rb);
                }
}

/* Gatherv / Scatterv with varying counts (rank i: i % 3 elements... times m) and
 * reversed displacements. */
static void test_gatherv_scatterv(void)
{
    for (int m = 0; m < 3; m++) {
        size_t unit = m == 0 ? 1 : m == 1 ? 100 : 5000;
        int *cnt = malloc((size_t)size * sizeof *cnt), *dsp = malloc((size_t)size * sizeof *dsp);
        int tot = 0;
        for (int i = size - 1; i >= 0; i--) {
            cnt[i] = (int)((size_t)(i % 3) * unit * 2);
            dsp[i] = tot;
            tot += cnt[i] + 2;
        }
        for (int root = 0; root < size; root++)
            for (int v = 0; v < 2; v++) {
                int mine = cnt[rank];
                int *sb = malloc(((size_t)mine + 1) * sizeof *sb);
                for (int j = 0; j < mine; j++)
                    sb[j] = val(rank, (size_t)j, 3);
                int *rb = lalloc(v, (size_t)tot + 2);
                int *vc = malloc((size_t)size * sizeof *vc),
                    *vd = malloc((size_t)size * sizeof *vd);
                for (int i = 0; i < size; i++) { /* in elements of the receive type */
                    vc[i] = v ? cnt[i] / 2 : cnt[i];
                    vd[i] = v ? dsp[i] / 2 : dsp[i];
                }
                CHECK_RC(MPI_Gatherv(sb, mine, MPI_INT, rb, vc, vd, ltype(v), root, comm),
                         MPI_SUCCESS);
                if (rank == root) {
                    for (int i = 0; i < size; i++)
                        for (int j = 0; j < cnt[i]; j++)
                            LCHECK(v, rb, (size_t)dsp[i] + (size_t)j, val(i, (size_t)j, 3));
                    lgaps(v, rb, (size_t)tot);
                }
                /* scatter it back from the root's buffer */
                int *back = malloc(((size_t)mine + 1) * sizeof *back);
                CHECK_RC(MPI_Scatterv(rb, vc, vd, ltype(v), back, mine, MPI_INT, root, comm),
                         MPI_SUCCESS);
                for (int j = 0; j < mine; j++)
                    CHECK(back[j] == val(rank, (size_t)j, 3));
                free(back);
                free(sb);
                free(rb);
                free(vc);
                free(vd);
            }
        /* Scatterv with defined content everywhere */
        for (int root = 0; root < size; root++) {
            int *sb = NULL;
            if (rank == root) {
                sb = lalloc(0, (size_t)tot + 2);
                for (int i = 0; i < size; i++)
                    for (int j = 0; j < cnt[i]; j++)
                        sb[dsp[i] + j] = val(i, (size_t)j, 4);
            }
            int mine = cnt[rank];
            int *rb = lalloc(1, (size_t)mine);
            CHECK_RC(MPI_Scatterv(sb, cnt, dsp, MPI_INT, rb, mine / 2, vec, root, comm),
                     MPI_SUCCESS);
            for (int j = 0; j < mine; j++)
                LCHECK(1, rb, (size_t)j, val(rank, (size_t)j, 4));
            lgaps(1, rb, (size_t)mine);
            free(sb);
            free(rb);
        }
        free(cnt);
        free(dsp);
    }
}

static void test_scatter(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int k = 0, root; (root = roots_for(sizes[s], k)) >= 0; k++)
            for (int c = 0; c < 3; c++)
                for (int ip = 0; ip < 2; ip++) {
                    int sv = combos[c][0], rv = combos[c][1];
                    if (ip && sv != rv)
                        continue;
                    size_t n = sizes[s], nl = 2 * n, tot = nl * (size_t)size;
                    int *sb = rank == root ? lalloc(sv, tot) : NULL, *rb = lalloc(rv, nl);
                    if (rank == root)
                        for (int i = 0; i < size; i++)
                            for (size_t j = 0; j < nl; j++)
                                sb[pos(sv, (size_t)i * nl + j)] = val(i, j, 5);
                    void *recv = ip && rank == root ? MPI_IN_PLACE : rb;
                    CHECK_RC(MPI_Scatter(sb, lcount(sv, n), ltype(sv), recv, lcount(rv, n),
                                         ltype(rv), root, comm),
                             MPI_SUCCESS);
                    if (recv != MPI_IN_PLACE) {
                        for (size_t j = 0; j < nl; j++)
                            LCHECK(rv, rb, j, val(rank, j, 5));
                        lgaps(rv, rb, nl);
                    } else {
                        for (int i = 0; i < size; i++)
                            for (size_t j = 0; j < nl; j++)
                                LCHECK(sv, sb, (size_t)i * nl + j, val(i, j, 5));
                    }
                    free(sb);
                    free(rb);
                }
}

/* c = 3: the layout differs between ranks (as in test_bcast). */
static void test_allgather(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int c = 0; c < 4; c++)
            for (int ip = 0; ip < 2; ip++) {
                int sv = c < 3 ? combos[c][0] : rank % 2, rv = c < 3 ? combos[c][1] : rank % 2;
                if (ip && sv != rv)
                    continue;
                size_t n = sizes[s], nl = 2 * n, tot = nl * (size_t)size;
                int *sb = lalloc(sv, nl), *rb = lalloc(rv, tot);
                for (size_t j = 0; j < nl; j++)
                    sb[pos(sv, j)] = val(rank, j, 6);
                const void *send = sb;
                if (ip) {
                    for (size_t j = 0; j < nl; j++)
                        rb[pos(rv, (size_t)rank * nl + j)] = val(rank, j, 6);
                    send = MPI_IN_PLACE;
                }
                if (c == 1 && ip == 0) {
                    int *cnt = malloc((size_t)size * sizeof *cnt),
                        *dsp = malloc((size_t)size * sizeof *dsp);
                    for (int i = 0; i < size; i++) {
                        cnt[i] = lcount(rv, n);
                        dsp[i] = i * lcount(rv, n);
                    }
                    CHECK_RC(MPI_Allgatherv(send, lcount(sv, n), ltype(sv), rb, cnt, dsp, ltype(rv),
                                            comm),
                             MPI_SUCCESS);
                    free(cnt);
                    free(dsp);
                } else {
                    CHECK_RC(MPI_Allgather(send, lcount(sv, n), ltype(sv), rb, lcount(rv, n),
                                           ltype(rv), comm),
                             MPI_SUCCESS);
                }
                for (int i = 0; i < size; i++)
                    for (size_t j = 0; j < nl; j++)
                        LCHECK(rv, rb, (size_t)i * nl + j, val(i, j, 6));
                lgaps(rv, rb, tot);
                free(sb);
                free(rb);
            }
}

/* Allgatherv with varying counts and in place. */
static void test_allgatherv(void)
{
    int *cnt = malloc((size_t)size * sizeof *cnt), *dsp = malloc((size_t)size * sizeof *dsp);
    int tot = 0;
    for (int i = 0; i < size; i++) {
        cnt[i] = (i % 4) * 37;
        dsp[i] = tot + 3;
        tot += cnt[i] + 3;
    }
    for (int ip = 0; ip < 2; ip++) {
        int *rb = lalloc(0, (size_t)tot);
        int *sb = malloc(((size_t)cnt[rank] + 1) * sizeof *sb);
        for (int j = 0; j < cnt[rank]; j++)
            sb[j] = rb[dsp[rank] + j] = val(rank, (size_t)j, 7);
        CHECK_RC(
            MPI_Allgatherv(ip ? MPI_IN_PLACE : sb, cnt[rank], MPI_INT, rb, cnt, dsp, MPI_INT, comm),
            MPI_SUCCESS);
        for (int i = 0; i < size; i++) {
            for (int j = 0; j < cnt[i]; j++)
                CHECK(rb[dsp[i] + j] == val(i, (size_t)j, 7));
            CHECK(rb[dsp[i] - 1] == GAP);
        }
        free(rb);
        free(sb);
    }
    free(cnt);
    free(dsp);
}

static void test_alltoall(void)
{
    for (size_t s = 0; s < NSIZES; s++)
        for (int c = 0; c < 3; c++)
            for (int ip = 0; ip < 2; ip++) {
                int sv = combos[c][0], rv = combos[c][1];
                if (ip && sv != rv)
                    continue;
                size_t n = sizes[s], nl = 2 * n, tot = nl * (size_t)size;
                if (n == 100000 && size > 4)
                    n = 20000, nl = 2 * n, tot = nl * (size_t)size;
                int *sb = lalloc(sv, tot), *rb = lalloc(rv, tot);
                /* block for rank i holds val(rank * size + i, j) */
                for (int i = 0; i < size; i++)
                    for (size_t j = 0; j < nl; j++) {
                        int x = val(rank * size + i, j, 8);
                        sb[pos(sv, (size_t)i * nl + j)] = x;
                        if (ip)
                            rb[pos(rv, (size_t)i * nl + j)] = x;
                    }
                const void *send = ip ? MPI_IN_PLACE : sb;
                if (c == 1 && !ip) { /* the v form with counts of the type */
                    int *a = malloc(4 * (size_t)size * sizeof *a);
                    for (int i = 0; i < size; i++) {
                        a[i] = lcount(sv, n);
                        a[size + i] = i * lcount(sv, n);
                        a[2 * size + i] = lcount(rv, n);
                        a[3 * size + i] = i * lcount(rv, n);
                    }
                    CHECK_RC(MPI_Alltoallv(send, a, a + size, ltype(sv), rb, a + 2 * size,
                                           a + 3 * size, ltype(rv), comm),
                             MPI_SUCCESS);
                    free(a);
                } else if (c == 2 && !ip) { /* the w form */
                    int *a = malloc(4 * (size_t)size * sizeof *a);
                    MPI_Datatype *t = malloc(2 * (size_t)size * sizeof *t);
                    MPI_Aint lb, se, re;
                    MPI_Type_get_extent(ltype(sv), &lb, &se);
                    MPI_Type_get_extent(ltype(rv), &lb, &re);
                    for (int i = 0; i < size; i++) {
                        a[i] = lcount(sv, n);
                        a[size + i] = (int)(i * lcount(sv, n) * se);
                        a[2 * size + i] = lcount(rv, n);
                        a[3 * size + i] = (int)(i * lcount(rv, n) * re);
                        t[i] = ltype(sv);
                        t[size + i] = ltype(rv);
                    }
                    CHECK_RC(MPI_Alltoallw(send, a, a + size, t, rb, a + 2 * size, a + 3 * size,
                                           t + size, comm),
                             MPI_SUCCESS);
                    free(a);
                    free(t);
                } else {
                    CHECK_RC(MPI_Alltoall(send, lcount(sv, n), ltype(sv), rb, lcount(rv, n),
                                          ltype(rv), comm),
                             MPI_SUCCESS);
                }
                for (int i = 0; i < size; i++)
                    for (size_t j = 0; j < nl; j++)
                        LCHECK(rv, rb, (size_t)i * nl + j, val(i * size + rank, j, 8));
                lgaps(rv, rb, tot);
                free(sb);
                free(rb);
            }
}

/* Alltoallv with varying counts, in place and not. */
static void test_alltoallv(void)
{
    int *sc = malloc((size_t)size * sizeof(int)), *sd = malloc((size_t)size * sizeof(int));
    int *rc = malloc((size_t)size * sizeof(int)), *rd = malloc((size_t)size * sizeof(int));
    int stot = 0, rtot = 0;
    for (int i = 0; i < size; i++) { /* rank a sends (a + 2 * b) % 5 * 11 ints to b */
        sc[i] = (rank + 2 * i) % 5 * 11;
        rc[i] = (i + 2 * rank) % 5 * 11;
        sd[i] = stot;
        rd[i] = rtot + 1;
        stot += sc[i];
        rtot += rc[i] + 1;
    }
    for (int ip = 0; ip < 2; ip++) {
        int *sb = malloc(((size_t)stot + 1) * sizeof *sb), *rb = lalloc(0, (size_t)rtot + 1);
        for (int i = 0; i < size; i++)
            for (int j = 0; j < sc[i]; j++)
                sb[sd[i] + j] = val(rank * size + i, (size_t)j, 9);
        if (ip) { /* in place: symmetric counts (a sends b what b sends a) */
            int *c2 = malloc((size_t)size * sizeof(int)), *d2 = malloc((size_t)size * sizeof(int));
            free(rb);
            rb = lalloc(0, (size_t)size * 30);
            for (int i = 0; i < size; i++) {
                c2[i] = ((rank + i) % 4) * 9;
                d2[i] = i * 30 + 1;
                for (int j = 0; j < c2[i]; j++)
                    rb[d2[i] + j] = val(rank * size + i, (size_t)j, 9);
            }
            CHECK_RC(MPI_Alltoallv(MPI_IN_PLACE, NULL, NULL, MPI_INT, rb, c2, d2, MPI_INT, comm),
                     MPI_SUCCESS);
            for (int i = 0; i < size; i++) {
                for (int j = 0; j < c2[i]; j++)
                    CHECK(rb[d2[i] + j] == val(i * size + rank, (size_t)j, 9));
                CHECK(rb[d2[i] - 1] == GAP);
            }
            free(c2);
            free(d2);
        } else {
            CHECK_RC(MPI_Alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, comm), MPI_SUCCESS);
            for (int i = 0; i < size; i++) {
                for (int j = 0; j < rc[i]; j++)
                    CHECK(rb[rd[i] + j] == val(i * size + rank, (size_t)j, 9));
                CHECK(rb[rd[i] - 1] == GAP);
            }
        }
        free(sb);
        free(rb);
    }
    free(sc);
    free(sd);
    free(rc);
    free(rd);
}

/* ------------------------------------------------------------------ reductions */

static long long ref_int(int op, size_t j, int salt, int upto)
{ /* reduction over ranks 0..upto-1 of ival */
    long long acc = 0;
    for (int r = 0; r < upto; r++) {
        long long x =
            op == 2 ? ((r + (int)j + salt) % 3 == 0 ? 2 : 1) : (long long)(val(r, j, salt) - 50000);
        if (r == 0)
            acc = x;
        else if (op == 0)
            acc += x;
        else if (op == 1)
            acc = x > acc ? x : acc;
        else
            acc *= x;
    }
    return acc;
}
static int ival(int op, int r, size_t j, int salt)
{
    return op == 2 ? ((r + (int)j + salt) % 3 == 0 ? 2 : 1) : val(r, j, salt) - 50000;
}
static const MPI_Op iops[3] = {MPI_SUM, MPI_MAX, MPI_PROD};

/* kind: 0 reduce, 1 allreduce, 2 scan, 3 exscan, 4 reduce_scatter_block, 5 reduce_scatter */
static void test_reductions(void)
{
    static const size_t rsz[] = {0, 1, 1000, 100000};
    for (size_t s = 0; s < 4; s++)
        for (int op = 0; op < 3; op++)
            for (int dbl = 0; dbl < 2; dbl++)
                for (int kind = 0; kind < 6; kind++)
                    for (int ip = 0; ip < 2; ip++) {
                        size_t n = rsz[s];
                        if (kind >= 4 && n == 100000)
                            n = 4000;
                        size_t tot = kind >= 4 ? n * (size_t)size : n;
                        int salt = (int)(s * 10 + (size_t)op);
                        MPI_Datatype t = dbl ? MPI_DOUBLE : MPI_INT;
                        size_t es = dbl ? sizeof(double) : sizeof(int);
                        char *sb = malloc(tot * es + 8), *rb = malloc(tot * es + 8);
                        for (size_t j = 0; j < tot; j++) {
                            int x = ival(op, rank, j, salt);
                            if (dbl)
                                ((double *)(void *)sb)[j] = x;
                            else
                                ((int *)(void *)sb)[j] = x;
                        }
                        memcpy(rb, sb, tot * es);
                        const void *send = ip ? MPI_IN_PLACE : sb;
                        int nroots = kind == 0 ? (n == 100000 ? 1 : size) : 1;
                        for (int root = 0; root < nroots; root++) {
                            if (kind == 0 && n == 100000)
                                root = size - 1;
                            if (root > 0)
                                memcpy(rb, sb, tot * es);
                            int rc;
                            switch (kind) {
                            case 0:
                                rc = MPI_Reduce(ip && rank == root ? MPI_IN_PLACE : sb, rb, (int)n,
                                                t, iops[op], root, comm);
                                break;
                            case 1: rc = MPI_Allreduce(send, rb, (int)n, t, iops[op], comm); break;
                            case 2: rc = MPI_Scan(send, rb, (int)n, t, iops[op], comm); break;
                            case 3: rc = MPI_Exscan(send, rb, (int)n, t, iops[op], comm); break;
                            case 4:
                                rc = MPI_Reduce_scatter_block(send, rb, (int)n, t, iops[op], comm);
                                break;
                            default: {
                                int *cnt = malloc((size_t)size * sizeof *cnt);
                                for (int i = 0; i < size; i++)
                                    cnt[i] = (int)n;
                                rc = MPI_Reduce_scatter(send, rb, cnt, t, iops[op], comm);
                                free(cnt);
                            }
                            }
                            CHECK_RC(rc, MPI_SUCCESS);
                            int upto = kind == 2 ? rank + 1 : kind == 3 ? rank : size;
                            int check = !(kind == 0 && rank != root) && upto > 0;
                            size_t off = kind >= 4 ? (size_t)rank * n : 0;
                            for (size_t j = 0; check && j < n; j++) {
                                long long want = ref_int(op, j + off, salt, upto);
                                double got = dbl ? ((double *)(void *)rb)[j]
                                                 : (double)((int *)(void *)rb)[j];
                                if (got != (double)want) {
                                    fprintf(stderr,
                                            "rank %d: kind %d op %d dbl %d ip %d n %zu root %d: "
                                            "elem %zu got %g want %lld\n",
                                            rank, kind, op, dbl, ip, n, root, j, got, want);
                                    exit(1);
                                }
                            }
                        }
                        free(sb);
                        free(rb);
                    }
}

/* 2x2 matrices mod P, product in rank order: non-commutative, on a derived type. */
#define P 1000003LL
typedef struct {
    long long a[4];
} mat_t;
static void matmul(const mat_t *x, const mat_t *y, mat_t *z)
{
    mat_t r;
    r.a[0] = (x->a[0] * y->a[0] + x->a[1] * y->a[2]) % P;
    r.a[1] = (x->a[0] * y->a[1] + x->a[1] * y->a[3]) % P;
    r.a[2] = (x->a[2] * y->a[0] + x->a[3] * y->a[2]) % P;
    r.a[3] = (x->a[2] * y->a[1] + x->a[3] * y->a[3]) % P;
    *z = r;
}
static void matop(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    mat_t *a = in, *b = inout;
    for (int i = 0; i < *len; i++)
        matmul(&a[i], &b[i], &b[i]); /* inout = in * inout */
}
static mat_t matof(int r, size_t j)
{
    mat_t m = {{(r + 2) % P, (long long)(j % 5) + 1, (long long)r * 3 + 1, (long long)(j % 7)}};
    return m;
}

static void test_noncommutative(void)
{
    MPI_Datatype mt;
    MPI_Op op;
    CHECK_RC(MPI_Type_contiguous(4, MPI_LONG_LONG, &mt), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&mt), MPI_SUCCESS);
    CHECK_RC(MPI_Op_create(matop, 0, &op), MPI_SUCCESS);
    static const size_t ns[] = {1, 3, 5000};
    for (int k = 0; k < 3; k++) {
        size_t n = ns[k];
        mat_t *sb = malloc(n * (size_t)size * sizeof *sb),
              *rb = malloc(n * (size_t)size * sizeof *rb);
        mat_t *want = malloc(n * (size_t)size * sizeof *want);
        for (size_t j = 0; j < n * (size_t)size; j++)
            sb[j] = matof(rank, j);
        for (int kind = 0; kind < 5; kind++)
            for (int root = 0; root < (kind == 0 ? size : 1); root++) {
                int upto = kind == 2 ? rank + 1 : kind == 3 ? rank : size;
                size_t cnt = kind == 4 ? n : n, off = kind == 4 ? (size_t)rank * n : 0;
                for (size_t j = 0; j < cnt; j++) {
                    want[j] = matof(0, j + off);
                    for (int r = 1; r < upto; r++) {
                        mat_t m = matof(r, j + off);
                        matmul(&want[j], &m, &want[j]);
                    }
                }
                memcpy(rb, sb, n * (size_t)size * sizeof *rb);
                switch (kind) {
                case 0:
                    CHECK_RC(MPI_Reduce(root % 2 && rank == root ? MPI_IN_PLACE : sb, rb, (int)n,
                                        mt, op, root, comm),
                             MPI_SUCCESS);
                    break;
                case 1:
                    CHECK_RC(MPI_Allreduce(MPI_IN_PLACE, rb, (int)n, mt, op, comm), MPI_SUCCESS);
                    break;
                case 2: CHECK_RC(MPI_Scan(sb, rb, (int)n, mt, op, comm), MPI_SUCCESS); break;
                case 3: CHECK_RC(MPI_Exscan(sb, rb, (int)n, mt, op, comm), MPI_SUCCESS); break;
                default:
                    CHECK_RC(MPI_Reduce_scatter_block(sb, rb, (int)n, mt, op, comm), MPI_SUCCESS);
                }
                if ((kind == 0 && rank != root) || upto == 0)
                    continue;
                for (size_t j = 0; j < cnt; j++)
                    for (int e = 0; e < 4; e++)
                        if (rb[j].a[e] != want[j].a[e]) {
                            fprintf(stderr, "rank %d: matrix kind %d n %zu root %d elem %zu\n",
                                    rank, kind, n, root, j);
                            exit(1);
                        }
            }
        free(sb);
        free(rb);
        free(want);
    }
    MPI_Op_free(&op);
    MPI_Type_free(&mt);
}

static void test_loc(void)
{
    struct {
        double v;
        int i;
    } in[100], out[100];
    for (int j = 0; j < 100; j++) {
        in[j].v = (double)((rank * 37 + j * 11) % 13); /* ties: lowest index wins */
        in[j].i = rank;
    }
    CHECK_RC(MPI_Allreduce(in, out, 100, MPI_DOUBLE_INT, MPI_MAXLOC, comm), MPI_SUCCESS);
    for (int j = 0; j < 100; j++) {
        double best = -1;
        int bi = -1;
        for (int r = 0; r < size; r++) {
            double x = (double)((r * 37 + j * 11) % 13);
            if (x > best)
                best = x, bi = r;
        }
        CHECK(out[j].v == best && out[j].i == bi);
    }
    CHECK_RC(MPI_Reduce(in, out, 100, MPI_DOUBLE_INT, MPI_MINLOC, size - 1, comm), MPI_SUCCESS);
    if (rank == size - 1)
        for (int j = 0; j < 100; j++) {
            double best = 1e9;
            int bi = -1;
            for (int r = 0; r < size; r++) {
                double x = (double)((r * 37 + j * 11) % 13);
                if (x < best)
                    best = x, bi = r;
            }
            CHECK(out[j].v == best && out[j].i == bi);
        }
}

/* ------------------------------------------------------------------ errors, mixing */

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int a[4] = {0}, b[4] = {0};
    CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, size, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, -1, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, MPI_PROC_NULL, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Reduce(a, b, 1, MPI_INT, MPI_SUM, size, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Gather(a, 1, MPI_INT, b, 1, MPI_INT, -2, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Scatter(a, 1, MPI_INT, b, 1, MPI_INT, size + 3, comm)) == MPI_ERR_ROOT);
    CHECK(eclass(MPI_Allreduce(a, b, 1, MPI_INT, MPI_OP_NULL, comm)) == MPI_ERR_OP);
    CHECK(eclass(MPI_Allreduce(a, b, 1, MPI_INT, MPI_REPLACE, comm)) == MPI_ERR_OP);
    CHECK(eclass(MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_BAND, comm)) == MPI_ERR_OP);
    CHECK(eclass(MPI_Allreduce(a, b, 1, MPI_DATATYPE_NULL, MPI_SUM, comm)) == MPI_ERR_TYPE);
    CHECK(eclass(MPI_Allreduce(a, b, -1, MPI_INT, MPI_SUM, comm)) == MPI_ERR_COUNT);
    CHECK(eclass(MPI_Allreduce(a, a, 1, MPI_INT, MPI_SUM, comm)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Bcast(a, -1, MPI_INT, 0, comm)) == MPI_ERR_COUNT);
    CHECK(eclass(MPI_Bcast(MPI_IN_PLACE, 1, MPI_INT, 0, comm)) == MPI_ERR_BUFFER);
    CHECK(eclass(MPI_Allgather(a, 1, MPI_INT, b, -1, MPI_INT, comm)) == MPI_ERR_COUNT);
    CHECK(eclass(MPI_Alltoall(a, 1, MPI_DATATYPE_NULL, b, 1, MPI_INT, comm)) == MPI_ERR_TYPE);
    CHECK(eclass(MPI_Scan(a, b, 1, MPI_INT, MPI_OP_NULL, comm)) == MPI_ERR_OP);
    if (comm == MPI_COMM_WORLD) /* raised on MPI_COMM_WORLD's handler */
        CHECK(eclass(MPI_Barrier(MPI_COMM_NULL)) == MPI_ERR_COMM);
    MPI_Datatype ct;
    MPI_Type_contiguous(2, MPI_INT, &ct);
    CHECK(eclass(MPI_Bcast(a, 1, ct, 0, comm)) == MPI_ERR_TYPE); /* not committed */
    MPI_Type_commit(&ct);
    CHECK(eclass(MPI_Allreduce(a, b, 1, ct, MPI_SUM, comm)) == MPI_ERR_OP); /* derived */
    MPI_Type_free(&ct);
    /* still usable after the errors */
    a[0] = rank;
    CHECK_RC(MPI_Allreduce(a, b, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
    CHECK(b[0] == size * (size - 1) / 2);
    if (size >= 2 && comm == MPI_COMM_WORLD) {
        MPI_Comm half, inter;
        CHECK_RC(MPI_Comm_split(comm, rank % 2, rank, &half), MPI_SUCCESS);
        CHECK_RC(MPI_Intercomm_create(half, 0, comm, rank % 2 ? 0 : 1, 77, &inter), MPI_SUCCESS);
        MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
        /* (intercommunicator collectives: mpi_coll_inter_basic.c; here their checks) */
        CHECK_RC(MPI_Barrier(inter), MPI_SUCCESS);
        CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, -5, inter)) == MPI_ERR_ROOT);
        CHECK(eclass(MPI_Bcast(a, 1, MPI_INT, size, inter)) == MPI_ERR_ROOT);
        CHECK(eclass(MPI_Allreduce(MPI_IN_PLACE, b, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_BUFFER);
        CHECK(eclass(MPI_Allgather(MPI_IN_PLACE, 1, MPI_INT, b, 1, MPI_INT, inter)) ==
              MPI_ERR_BUFFER);
        CHECK(eclass(MPI_Scan(a, b, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Exscan(a, b, 1, MPI_INT, MPI_SUM, inter)) == MPI_ERR_COMM);
        MPI_Comm_free(&inter);
        MPI_Comm_free(&half);
    }
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
}

static void test_mixed(void)
{
    unsigned seed = 12345;
    for (int it = 0; it < 300; it++) {
        seed = seed * 1103515245u + 12345u;
        int what = (int)((seed >> 16) % 5), root = (int)((seed >> 8) % (unsigned)size);
        int n = (int)((seed >> 4) % 50) + (it % 7 == 0 ? 20000 : 0);
        int *a = malloc(((size_t)n * (size_t)size + 1) * sizeof *a);
        int *b = malloc(((size_t)n * (size_t)size + 1) * sizeof *b);
        for (int j = 0; j < n * size; j++)
            a[j] = val(rank, (size_t)j, it);
        switch (what) {
        case 0:
            CHECK_RC(MPI_Bcast(a, n, MPI_INT, root, comm), MPI_SUCCESS);
            for (int j = 0; j < n; j++)
                CHECK(a[j] == val(root, (size_t)j, it));
            break;
        case 1:
            CHECK_RC(MPI_Allreduce(a, b, n, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
            for (int j = 0; j < n; j++)
                CHECK(b[j] == (int)ref_int(0, (size_t)j, it, size) + 50000 * size);
            break;
        case 2:
            CHECK_RC(MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, comm), MPI_SUCCESS);
            for (int i = 0; i < size; i++)
                for (int j = 0; j < n; j++)
                    CHECK(b[i * n + j] == val(i, (size_t)(rank * n + j), it));
            break;
        case 3: CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS); break;
        default:
            CHECK_RC(MPI_Reduce(a, b, n, MPI_INT, MPI_MAX, root, comm), MPI_SUCCESS);
            if (rank == root)
                for (int j = 0; j < n; j++) {
                    int m = val(0, (size_t)j, it);
                    for (int r = 1; r < size; r++)
                        m = val(r, (size_t)j, it) > m ? val(r, (size_t)j, it) : m;
                    CHECK(b[j] == m);
                }
        }
        free(a);
        free(b);
    }
}

/* inout += in on pairs of ints (a derived type of 2 ints) */
static void pairsum(void *in, void *inout, int *len, MPI_Datatype *dt)
{
    (void)dt;
    const int *a = in;
    int *b = inout;
    for (int i = 0; i < 2 * *len; i++)
        b[i] += a[i];
}

/* Nonblocking and persistent collectives with their derived type and user op freed
 * before they run: the handles must stay valid for them (and only for them). */
static void test_freed_handles(void)
{
    enum { N = 5 };
    int sb[2 * N], rb[2 * N], g[64 * 2 * N];
    CHECK(size <= 64);
    for (int i = 0; i < 2 * N; i++)
        sb[i] = rank * 100 + i;
    for (int pers = 0; pers < 2; pers++) {
        MPI_Datatype two, dup;
        MPI_Op op;
        MPI_Request req[2];
        CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &two), MPI_SUCCESS);
        CHECK_RC(MPI_Type_commit(&two), MPI_SUCCESS);
        CHECK_RC(MPI_Type_dup(MPI_INT, &dup), MPI_SUCCESS);
        CHECK_RC(MPI_Op_create(pairsum, 1, &op), MPI_SUCCESS);
        if (pers) {
            CHECK_RC(MPI_Allreduce_init(sb, rb, N, two, op, comm, MPI_INFO_NULL, &req[0]),
                     MPI_SUCCESS);
            CHECK_RC(
                MPI_Gather_init(sb, 2 * N, MPI_INT, g, 2 * N, dup, 0, comm, MPI_INFO_NULL, &req[1]),
                MPI_SUCCESS);
        }
        MPI_Datatype two_h = two;
        CHECK_RC(MPI_Type_free(&two), MPI_SUCCESS);
        CHECK_RC(MPI_Op_free(&op), MPI_SUCCESS);
        CHECK(two == MPI_DATATYPE_NULL && op == MPI_OP_NULL);
        /* freed for the user: a second free is an error, not a double release */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        CHECK(MPI_Type_free(&two_h) != MPI_SUCCESS);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        for (int round = 0; round < 2; round++) {
            memset(rb, 0, sizeof rb);
            memset(g, 0, sizeof g);
            if (pers) {
                CHECK_RC(MPI_Startall(2, req), MPI_SUCCESS);
            } else if (round == 0) {
                /* a fresh type and op for the nonblocking form, freed before the wait */
                CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &two), MPI_SUCCESS);
                CHECK_RC(MPI_Type_commit(&two), MPI_SUCCESS);
                CHECK_RC(MPI_Op_create(pairsum, 1, &op), MPI_SUCCESS);
                CHECK_RC(MPI_Iallreduce(sb, rb, N, two, op, comm, &req[0]), MPI_SUCCESS);
                CHECK_RC(MPI_Igather(sb, 2 * N, MPI_INT, g, 2 * N, dup, 0, comm, &req[1]),
                         MPI_SUCCESS);
                CHECK_RC(MPI_Type_free(&two), MPI_SUCCESS);
                CHECK_RC(MPI_Op_free(&op), MPI_SUCCESS);
                CHECK_RC(MPI_Type_free(&dup), MPI_SUCCESS);
            } else {
                break;
            }
            CHECK_RC(MPI_Waitall(2, req, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            for (int i = 0; i < 2 * N; i++)
                CHECK(rb[i] == 100 * size * (size - 1) / 2 + size * i);
            if (rank == 0)
                for (int r = 0; r < size; r++)
                    for (int i = 0; i < 2 * N; i++)
                        CHECK(g[r * 2 * N + i] == r * 100 + i);
        }
        if (pers) {
            CHECK_RC(MPI_Request_free(&req[0]), MPI_SUCCESS);
            CHECK_RC(MPI_Request_free(&req[1]), MPI_SUCCESS);
            CHECK_RC(MPI_Type_free(&dup), MPI_SUCCESS);
        }
    }
}

static void run_all(const char *what)
{
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    test_barrier();
    test_bcast();
    test_gather();
    test_scatter();
    test_gatherv_scatterv();
    test_allgather();
    test_allgatherv();
    test_alltoall();
    test_alltoallv();
    test_reductions();
    test_noncommutative();
    test_loc();
    test_errors();
    test_mixed();
    test_freed_handles();
    CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_coll: %s (%d ranks) ok\n", what, size);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    CHECK_RC(MPI_Type_vector(2, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    MPI_Datatype v2;
    CHECK_RC(MPI_Type_create_resized(vec, 0, 3 * sizeof(int), &v2), MPI_SUCCESS);
    MPI_Type_free(&vec);
    vec = v2;
    CHECK_RC(MPI_Type_commit(&vec), MPI_SUCCESS);
    comm = MPI_COMM_WORLD;
    run_all("MPI_COMM_WORLD");
    /* a split communicator, reversed order: ranks differ from world ranks */
    if (wsize > 2) {
        MPI_Comm sub;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &sub), MPI_SUCCESS);
        comm = sub;
        run_all(wrank % 2 ? "split odd" : "split even");
        MPI_Comm_free(&sub);
    }
    MPI_Type_free(&vec);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
