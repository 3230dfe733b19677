/* mpi_part.c — MPI-4.0 partitioned communication (src/mpi/p2p_part.c): a ring (each rank
 * sends to its right, receives from its left) with equal and different partition counts
 * on both sides, eager and rendezvous sizes, zero bytes, derived types on either side
 * (placed directly and through the staging stream), several starts of one pair, Pready in
 * shuffled order and through Pready_range / Pready_list, Parrived polled by the receiver
 * (each partition's contents checked as soon as it says so; false before the sender
 * marked it), all-to-one with Startall and Waitany / Testall, two pairs on one
 * (peer, tag) matched in init order, a receive larger than the send, and the error paths. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size, left, right;

static int val(int src, int round, int i)
{
    return src * 1000003 + round * 7919 + i;
}

/* A permutation of 0..n-1 that depends on seed. */
static void shuffle(int *p, int n, unsigned seed)
{
    for (int i = 0; i < n; i++)
        p[i] = i;
    for (int i = n - 1; i > 0; i--) {
        seed = seed * 1103515245u + 12345u;
        int j = (int)((seed >> 8) % (unsigned)(i + 1));
        int t = p[i];
        p[i] = p[j];
        p[j] = t;
    }
}

/* Marks every partition of s ready: one by one in shuffled order, by ranges or by a list. */
static void ready_all(MPI_Request s, int np, int how, unsigned seed)
{
    int *p = malloc(sizeof(int) * (size_t)np);
    CHECK(p);
    shuffle(p, np, seed);
    if (how == 0) {
        for (int i = 0; i < np; i++)
            CHECK_RC(MPI_Pready(p[i], s), MPI_SUCCESS);
    } else if (how == 1) {
        int mid = np / 2;
        if (mid < np - 1)
            CHECK_RC(MPI_Pready_range(mid + 1, np - 1, s), MPI_SUCCESS);
        CHECK_RC(MPI_Pready_range(0, mid, s), MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Pready_list(np, p, s), MPI_SUCCESS);
    }
    free(p);
}

/* Ring of ints: sp partitions x sc ints sent, rp x rc received (sp * sc == rp * rc). */
static void test_ring(int sp, int sc, int rp, int rc, int rounds)
{
    int n = sp * sc;
    int *sb = malloc(sizeof(int) * (size_t)(n + 1)), *rb = malloc(sizeof(int) * (size_t)(n + 1));
    CHECK(sb && rb);
    memset(sb, 0, sizeof(int) * (size_t)(n + 1));
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(sb, sp, sc, MPI_INT, right, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(rb, rp, rc, MPI_INT, left, 3, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    int *seen = malloc(sizeof(int) * (size_t)rp);
    CHECK(seen);
    for (int round = 0; round < rounds; round++) {
        for (int i = 0; i < n; i++)
            sb[i] = val(rank, round, i);
        for (int i = 0; i <= n; i++)
            rb[i] = -7;
        MPI_Request both[2] = {r, s};
        CHECK_RC(MPI_Startall(2, both), MPI_SUCCESS);
        ready_all(s, sp, round % 3, (unsigned)(rank * 31 + round));
        /* Poll every receive partition; check its contents once it has arrived. */
        memset(seen, 0, sizeof(int) * (size_t)rp);
        int left_to_see = rp;
        while (left_to_see) {
            for (int j = 0; j < rp; j++) {
                if (seen[j])
                    continue;
                int flag = -1;
                CHECK_RC(MPI_Parrived(r, j, &flag), MPI_SUCCESS);
                CHECK(flag == 0 || flag == 1);
                if (flag) {
                    for (int k = j * rc; k < (j + 1) * rc; k++)
                        CHECK(rb[k] == val(left, round, k));
                    seen[j] = 1;
                    left_to_see--;
                }
            }
        }
        MPI_Status st[2];
        CHECK_RC(MPI_Waitall(2, both, st), MPI_SUCCESS);
        CHECK(both[0] == r && both[1] == s); /* persistent: the handles stay */
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == 3);
        int cnt = -1;
        MPI_Get_count(&st[0], MPI_INT, &cnt);
        CHECK(cnt == n);
        for (int i = 0; i < n; i++)
            CHECK(rb[i] == val(left, round, i));
        CHECK(rb[n] == -7);
        /* Parrived after completion is erroneous: the request is inactive. */
    }
    CHECK_RC(MPI_Request_free(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL);
    free(seen);
    free(sb);
    free(rb);
}

/* Parrived is false for a partition the sender has not marked ready. */
static void test_parrived_order(void)
{
    int sb[8] = {0}, rb[8];
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(sb, 2, 4, MPI_INT, right, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(rb, 2, 4, MPI_INT, left, 4, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 8; i++) {
            sb[i] = val(rank, round, i);
            rb[i] = -1;
        }
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        int flag = 1;
        CHECK_RC(MPI_Parrived(r, 0, &flag), MPI_SUCCESS); /* before the sender started */
        CHECK(flag == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
        CHECK_RC(MPI_Pready(1, s), MPI_SUCCESS);
        do
            CHECK_RC(MPI_Parrived(r, 1, &flag), MPI_SUCCESS);
        while (!flag);
        for (int i = 4; i < 8; i++)
            CHECK(rb[i] == val(left, round, i));
        CHECK_RC(MPI_Parrived(r, 0, &flag), MPI_SUCCESS);
        CHECK(flag == 0);
        int done = 1;
        CHECK_RC(MPI_Test(&r, &done, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(done == 0);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Pready(0, s), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < 8; i++)
            CHECK(rb[i] == val(left, round, i));
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

/* Derived types: the receiver takes 30 ints into every other int (resized type: direct
 * placement) or into vectors of 3 ints whose elements the send partitions cut (staging);
 * the sender sends from a strided vector type too. Gaps stay untouched. */
static void test_derived(void)
{
    enum { N = 30 };
    int sb[2 * N] = {0}, rb[2 * N + 8];
    MPI_Datatype every_other, vec3, svec;
    MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    MPI_Type_vector(3, 1, 2, MPI_INT, &vec3); /* 12 bytes, extent 5 ints */
    MPI_Type_create_resized(vec3, 0, 6 * (MPI_Aint)sizeof(int), &svec);
    MPI_Type_commit(&vec3);
    MPI_Type_commit(&svec); /* 3 ints at 0, 2, 4 of every 6 */
    for (int variant = 0; variant < 3; variant++) {
        MPI_Request s, r;
        if (variant == 2) /* sender: 10 elements of svec = 30 ints in 5 partitions */
            CHECK_RC(MPI_Psend_init(sb, 5, 2, svec, right, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                     MPI_SUCCESS);
        else /* 15 partitions of 2 ints: cut vec3's elements */
            CHECK_RC(
                MPI_Psend_init(sb, 15, 2, MPI_INT, right, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
                MPI_SUCCESS);
        if (variant == 0)
            CHECK_RC(
                MPI_Precv_init(rb, 5, 6, every_other, left, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                MPI_SUCCESS);
        else
            CHECK_RC(MPI_Precv_init(rb, 2, 5, vec3, left, 6, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                     MPI_SUCCESS);
        MPI_Type_free(&every_other); /* the requests keep the types */
        MPI_Type_create_resized(MPI_INT, 0, 2 * (MPI_Aint)sizeof(int), &every_other);
        MPI_Type_commit(&every_other);
        for (int round = 0; round < 2; round++) {
            /* the logical send stream: element k of the 30 */
            for (int i = 0; i < 2 * N; i++)
                sb[i] = -3;
            for (int k = 0; k < N; k++) {
                int at = variant == 2 ? (k / 3) * 6 + (k % 3) * 2 : k;
                sb[at] = val(rank, round + variant * 10, k);
            }
            for (int i = 0; i < 2 * N + 8; i++)
                rb[i] = -5;
            CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
            CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
            ready_all(s, variant == 2 ? 5 : 15, round, (unsigned)(variant + round + rank));
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
            int expect_filled[2 * N + 8];
            memset(expect_filled, 0, sizeof expect_filled);
            for (int k = 0; k < N; k++) {
                int at = variant == 0 ? 2 * k : (k / 3) * 5 + (k % 3) * 2;
                CHECK(rb[at] == val(left, round + variant * 10, k));
                expect_filled[at] = 1;
            }
            for (int i = 0; i < 2 * N + 8; i++)
                if (!expect_filled[i])
                    CHECK(rb[i] == -5);
        }
        MPI_Request_free(&s);
        MPI_Request_free(&r);
    }
    MPI_Type_free(&every_other);
    MPI_Type_free(&vec3);
    MPI_Type_free(&svec);
}

/* Every rank sends to rank 0 (rank 0 to itself as well); rank 0 starts all receives with
 * Startall and completes them with Waitany / Testall. */
static void test_all_to_one(void)
{
    enum { NP = 4, CNT = 250 };
    int sb[NP * CNT] = {0};
    int *rb = NULL;
    MPI_Request s, *rr = NULL;
    CHECK_RC(MPI_Psend_init(sb, NP, CNT, MPI_INT, 0, 9, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    if (rank == 0) {
        rb = malloc(sizeof(int) * (size_t)(NP * CNT * size));
        rr = malloc(sizeof(MPI_Request) * (size_t)size);
        CHECK(rb && rr);
        for (int p = 0; p < size; p++) /* receivers partitioned differently: 10 x 100 */
            CHECK_RC(MPI_Precv_init(rb + p * NP * CNT, 10, NP * CNT / 10, MPI_INT, p, 9,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &rr[p]),
                     MPI_SUCCESS);
    }
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < NP * CNT; i++)
            sb[i] = val(rank, round, i);
        if (rank == 0) {
            for (int i = 0; i < NP * CNT * size; i++)
                rb[i] = -1;
            CHECK_RC(MPI_Startall(size, rr), MPI_SUCCESS);
        }
        CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
        ready_all(s, NP, round, (unsigned)(rank + round));
        if (rank == 0) {
            if (round % 2 == 0) {
                for (int k = 0; k < size; k++) {
                    int idx = -1;
                    MPI_Status st;
                    CHECK_RC(MPI_Waitany(size, rr, &idx, &st), MPI_SUCCESS);
                    CHECK(idx >= 0 && idx < size && st.MPI_SOURCE == idx && st.MPI_TAG == 9);
                }
                int idx = 0;
                CHECK_RC(MPI_Waitany(size, rr, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
                CHECK(idx == MPI_UNDEFINED); /* all inactive */
            } else {
                int flag = 0;
                while (!flag)
                    CHECK_RC(MPI_Testall(size, rr, &flag, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            }
            for (int p = 0; p < size; p++)
                for (int i = 0; i < NP * CNT; i++)
                    CHECK(rb[p * NP * CNT + i] == val(p, round, i));
        }
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    MPI_Request_free(&s);
    if (rank == 0) {
        for (int p = 0; p < size; p++)
            MPI_Request_free(&rr[p]);
        free(rr);
        free(rb);
    }
}

/* Two pairs on one (peer, tag): matched in the order of their init calls (MPI-4.0 4.2.1),
 * whatever the order of the starts: the receiver starts them in the other order. */
static void test_two_pairs(void)
{
    int a[6] = {0}, b[6] = {0}, ra[6], rb[6];
    MPI_Request sa, sbq, qb, qa;
    CHECK_RC(MPI_Psend_init(a, 3, 2, MPI_INT, right, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &sa),
             MPI_SUCCESS);
    CHECK_RC(MPI_Psend_init(b, 2, 3, MPI_INT, right, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &sbq),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(rb, 6, 1, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &qb),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(ra, 1, 6, MPI_INT, left, 2, MPI_COMM_WORLD, MPI_INFO_NULL, &qa),
             MPI_SUCCESS);
    for (int round = 0; round < 3; round++) {
        for (int i = 0; i < 6; i++) {
            a[i] = val(rank, round, i);
            b[i] = -val(rank, round, i);
            ra[i] = rb[i] = 0;
        }
        if (round == 0) { /* receiver: qa (inited second) started first */
            CHECK_RC(MPI_Start(&qa), MPI_SUCCESS);
            CHECK_RC(MPI_Start(&qb), MPI_SUCCESS);
            CHECK_RC(MPI_Start(&sa), MPI_SUCCESS);
            CHECK_RC(MPI_Start(&sbq), MPI_SUCCESS);
        } else { /* later starts in any order: the pairs stay */
            MPI_Request all[4] = {sbq, qb, sa, qa};
            CHECK_RC(MPI_Startall(4, all), MPI_SUCCESS);
        }
        CHECK_RC(MPI_Pready_range(0, 1, sbq), MPI_SUCCESS);
        CHECK_RC(MPI_Pready_range(0, 2, sa), MPI_SUCCESS);
        MPI_Request all[4] = {sa, sbq, qa, qb};
        int done = 0;
        while (done < 4) {
            int outcount = 0, idx[4];
            CHECK_RC(MPI_Waitsome(4, all, &outcount, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            CHECK(outcount >= 1);
            done += outcount;
        }
        for (int i = 0; i < 6; i++) {
            CHECK(rb[i] == val(left, round, i)); /* qb (first init) <- sa (first init) */
            CHECK(ra[i] == -val(left, round, i));
        }
    }
    MPI_Request_free(&sa);
    MPI_Request_free(&sbq);
    MPI_Request_free(&qa);
    MPI_Request_free(&qb);
}

/* A receive larger than the send: takes the send's bytes, the rest stays untouched. */
static void test_larger_recv(void)
{
    int x[6] = {0}, y[12];
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(x, 2, 3, MPI_INT, right, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(y, 4, 3, MPI_INT, left, 12, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < 6; i++)
            x[i] = val(rank, round, i);
        for (int i = 0; i < 12; i++)
            y[i] = -9;
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
        CHECK_RC(MPI_Pready_list(2, (int[]){1, 0}, s), MPI_SUCCESS);
        for (int j = 0; j < 4; j++) {
            int flag = 0;
            while (!flag)
                CHECK_RC(MPI_Parrived(r, j, &flag), MPI_SUCCESS);
        }
        MPI_Status st;
        CHECK_RC(MPI_Wait(&r, &st), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 6);
        for (int i = 0; i < 12; i++)
            CHECK(y[i] == (i < 6 ? val(left, round, i) : -9));
    }
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void test_proc_null(void)
{
    int x[4] = {1, 2, 3, 4}, y[4] = {0, 0, 0, 0};
    MPI_Request s, r;
    CHECK_RC(MPI_Psend_init(x, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(y, 2, 2, MPI_INT, MPI_PROC_NULL, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
    CHECK_RC(MPI_Pready_range(0, 1, s), MPI_SUCCESS);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&r, &st), MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL);
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(y[0] == 0 && y[3] == 0);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
}

static void test_errors(void)
{
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec, b[8] = {0}, rbuf[8];
#define ERRCLASS(call, cls)                                                                        \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        MPI_Error_class(rc_, &ec);                                                                 \
        CHECK(rc_ != MPI_SUCCESS && ec == (cls));                                                  \
    } while (0)
    MPI_Request s = MPI_REQUEST_NULL, r = MPI_REQUEST_NULL;
    ERRCLASS(MPI_Psend_init(b, 0, 2, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_ERR_ARG);
    ERRCLASS(MPI_Psend_init(b, 2, 2, MPI_INT, right, 1, MPI_COMM_NULL, MPI_INFO_NULL, &s),
             MPI_ERR_COMM);
    ERRCLASS(MPI_Psend_init(b, 2, 2, MPI_INT, size, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_ERR_RANK);
    ERRCLASS(MPI_Precv_init(b, 2, 2, MPI_INT, MPI_ANY_SOURCE, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_ERR_RANK);
    ERRCLASS(MPI_Precv_init(b, 2, 2, MPI_INT, left, MPI_ANY_TAG, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_ERR_TAG);
    CHECK(s == MPI_REQUEST_NULL && r == MPI_REQUEST_NULL);

    CHECK_RC(MPI_Psend_init(b, 4, 2, MPI_INT, right, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(rbuf, 4, 2, MPI_INT, left, 1, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    int flag;
    ERRCLASS(MPI_Pready(0, s), MPI_ERR_OTHER);          /* not active */
    ERRCLASS(MPI_Parrived(r, 0, &flag), MPI_ERR_OTHER); /* not active */
    CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
    ERRCLASS(MPI_Start(&s), MPI_ERR_REQUEST);             /* already active */
    ERRCLASS(MPI_Pready(0, r), MPI_ERR_REQUEST);          /* a receive */
    ERRCLASS(MPI_Parrived(s, 0, &flag), MPI_ERR_REQUEST); /* a send */
    ERRCLASS(MPI_Parrived(r, 4, &flag), MPI_ERR_OTHER);
    ERRCLASS(MPI_Parrived(r, -1, &flag), MPI_ERR_OTHER);
    ERRCLASS(MPI_Pready(4, s), MPI_ERR_OTHER);
    ERRCLASS(MPI_Pready(-1, s), MPI_ERR_OTHER);
    ERRCLASS(MPI_Pready_range(2, 1, s), MPI_ERR_OTHER);
    ERRCLASS(MPI_Pready_list(-1, NULL, s), MPI_ERR_ARG);
    ERRCLASS(MPI_Cancel(&r), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Pready(2, s), MPI_SUCCESS);
    ERRCLASS(MPI_Pready(2, s), MPI_ERR_OTHER); /* twice */
    int twice[2] = {3, 3};
    ERRCLASS(MPI_Pready_list(2, twice, s), MPI_ERR_OTHER); /* 3 marked, then twice */
    ERRCLASS(MPI_Pready_range(0, 3, s), MPI_ERR_OTHER);    /* 0, 1 marked, then 2 again */
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    ERRCLASS(MPI_Pready(0, s), MPI_ERR_OTHER); /* inactive again */
    ERRCLASS(MPI_Pready(0, MPI_REQUEST_NULL), MPI_ERR_REQUEST);
    MPI_Request_free(&s);
    MPI_Request_free(&r);

    /* Totals that differ: the receive completes with MPI_ERR_TRUNCATE. */
    CHECK_RC(MPI_Psend_init(b, 2, 3, MPI_INT, right, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &s),
             MPI_SUCCESS);
    CHECK_RC(MPI_Precv_init(rbuf, 2, 2, MPI_INT, left, 8, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    CHECK_RC(MPI_Start(&s), MPI_SUCCESS);
    CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
    CHECK_RC(MPI_Pready_range(0, 1, s), MPI_SUCCESS);
    MPI_Status st;
    ERRCLASS(MPI_Wait(&r, &st), MPI_ERR_TRUNCATE);
    CHECK_RC(MPI_Wait(&s, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Request_free(&s);
    MPI_Request_free(&r);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
#undef ERRCLASS
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    test_ring(4, 8, 4, 8, 3);         /* equal partitions */
    test_ring(4, 8, 2, 16, 3);        /* fewer receive partitions */
    test_ring(3, 8, 8, 3, 3);         /* cut across each other */
    test_ring(1, 60000, 12, 5000, 2); /* one large send partition (rendezvous) */
    test_ring(16, 4096, 4, 16384, 2);
    test_ring(5, 0, 2, 0, 2);     /* zero bytes */
    test_ring(300, 3, 45, 20, 2); /* more partitions than the sender keeps in flight */
    test_parrived_order();
    test_derived();
    test_all_to_one();
    test_two_pairs();
    test_larger_recv();
    test_proc_null();
    test_errors();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_part: ok (%d ranks)\n", size);
    MPI_Finalize();
    return 0;
}
