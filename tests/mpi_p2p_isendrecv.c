/* mpi_p2p_isendrecv.c — MPI_Isendrecv / MPI_Isendrecv_replace (and their _c forms): ring
 * exchanges with content checks from 0 bytes to rendezvous sizes, replace with a derived
 * datatype (gaps untouched), MPI_PROC_NULL on either side (a chain), completion through
 * Test / Waitany / Waitall / Request_free, cancellation (unmatched: cancelled, later
 * messages still match in order; matched: completes with the data) and argument errors. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size, left, right;
/* MPI_STATUSES_IGNORE through a volatile pointer: gcc's -Wstringop-overflow otherwise
 * flags the page-zero sentinel passed for an array parameter. */
static MPI_Status *volatile statuses_ignore;

static int val(int src, int salt, int i)
{
    return src * 1000003 + salt * 7919 + i;
}

/* Ring: every rank sends n ints to the right and receives n from the left. */
static void test_ring(int n, int large_count)
{
    int *s = malloc(sizeof(int) * (size_t)(n + 1)), *r = malloc(sizeof(int) * (size_t)(n + 1));
    CHECK(s && r);
    for (int i = 0; i < n; i++)
        s[i] = val(rank, n, i);
    for (int i = 0; i <= n; i++)
        r[i] = -7;
    MPI_Request q;
    if (large_count)
        CHECK_RC(
            MPI_Isendrecv_c(s, n, MPI_INT, right, 11, r, n, MPI_INT, left, 11, MPI_COMM_WORLD, &q),
            MPI_SUCCESS);
    else
        CHECK_RC(
            MPI_Isendrecv(s, n, MPI_INT, right, 11, r, n, MPI_INT, left, 11, MPI_COMM_WORLD, &q),
            MPI_SUCCESS);
    MPI_Status st;
    st.MPI_ERROR = 12345;
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    CHECK(q == MPI_REQUEST_NULL);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 11);
    int cnt, c;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == n);
    MPI_Test_cancelled(&st, &c);
    CHECK(!c);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == val(left, n, i));
    CHECK(r[n] == -7);
    free(s);
    free(r);
}

/* Replace with a vector type: every other int of 2n; the gaps must stay untouched. */
static void test_replace(int n, int large_count)
{
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(n, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&vec), MPI_SUCCESS);
    int *b = malloc(sizeof(int) * (size_t)(2 * n + 1));
    CHECK(b);
    for (int i = 0; i < n; i++) {
        b[2 * i] = val(rank, 3, i);
        b[2 * i + 1] = -1000 - i;
    }
    MPI_Request q;
    if (large_count)
        CHECK_RC(MPI_Isendrecv_replace_c(b, 1, vec, right, 12, left, 12, MPI_COMM_WORLD, &q),
                 MPI_SUCCESS);
    else
        CHECK_RC(MPI_Isendrecv_replace(b, 1, vec, right, 12, left, 12, MPI_COMM_WORLD, &q),
                 MPI_SUCCESS);
    /* the type may go at once: the operation keeps what it needs */
    CHECK_RC(MPI_Type_free(&vec), MPI_SUCCESS);
    /* the buffer may be overwritten as soon as the receive lands: what goes is the copy */
    MPI_Status st;
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == left && st.MPI_TAG == 12);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == n);
    for (int i = 0; i < n; i++) {
        CHECK(b[2 * i] == val(left, 3, i));
        CHECK(b[2 * i + 1] == -1000 - i);
    }
    free(b);
}

/* A chain 0 -> 1 -> ... -> size-1 with MPI_PROC_NULL at both ends (one rank: both). */
static void test_proc_null(void)
{
    int to = rank + 1 < size ? rank + 1 : MPI_PROC_NULL;
    int from = rank > 0 ? rank - 1 : MPI_PROC_NULL;
    int s[4] = {val(rank, 1, 0), val(rank, 1, 1), val(rank, 1, 2), val(rank, 1, 3)};
    int r[4] = {-1, -1, -1, -1};
    MPI_Request q;
    CHECK_RC(MPI_Isendrecv(s, 4, MPI_INT, to, 13, r, 4, MPI_INT, from, 13, MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    if (from == MPI_PROC_NULL) {
        CHECK(st.MPI_SOURCE == MPI_PROC_NULL && st.MPI_TAG == MPI_ANY_TAG && cnt == 0);
        CHECK(r[0] == -1 && r[3] == -1);
    } else {
        CHECK(st.MPI_SOURCE == from && st.MPI_TAG == 13 && cnt == 4);
        for (int i = 0; i < 4; i++)
            CHECK(r[i] == val(from, 1, i));
    }
    /* replace, both sides PROC_NULL: nothing moves */
    CHECK_RC(MPI_Isendrecv_replace(s, 4, MPI_INT, MPI_PROC_NULL, 1, MPI_PROC_NULL, 1,
                                   MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    CHECK(st.MPI_SOURCE == MPI_PROC_NULL && s[2] == val(rank, 1, 2));
    /* replace along the chain */
    CHECK_RC(MPI_Isendrecv_replace(s, 4, MPI_INT, to, 14, from, 14, MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        CHECK(s[i] == (from == MPI_PROC_NULL ? val(rank, 1, i) : val(from, 1, i)));
}

/* Completion through Test, Waitany/Waitall next to plain requests, and Request_free. */
static void test_completion(void)
{
    int n = 100000; /* rendezvous */
    int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
    int *r2 = malloc(sizeof(int) * (size_t)n);
    CHECK(s && r && r2);
    for (int i = 0; i < n; i++)
        s[i] = val(rank, 5, i);
    /* Test until done; the peer posts its part only after a barrier, so the first tests
     * must say "not yet" (the receive part cannot have completed) */
    MPI_Request q;
    int flag = 1;
    CHECK_RC(MPI_Isendrecv(s, n, MPI_INT, right, 15, r, n, MPI_INT, left, 16, MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    for (int i = 0; i < 20; i++) {
        CHECK_RC(MPI_Test(&q, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(!flag);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Request q2[2];
    CHECK_RC(MPI_Irecv(r2, n, MPI_INT, left, 15, MPI_COMM_WORLD, &q2[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Isend(s, n, MPI_INT, right, 16, MPI_COMM_WORLD, &q2[1]), MPI_SUCCESS);
    MPI_Status st;
    while (!flag)
        CHECK_RC(MPI_Test(&q, &flag, &st), MPI_SUCCESS);
    CHECK(q == MPI_REQUEST_NULL && st.MPI_SOURCE == left && st.MPI_TAG == 16);
    CHECK_RC(MPI_Waitall(2, q2, statuses_ignore), MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == val(left, 5, i) && r2[i] == val(left, 5, i));
    /* Waitany among plain requests */
    MPI_Request qs[3];
    memset(r, 0, sizeof(int) * (size_t)n);
    CHECK_RC(MPI_Irecv(r2, 1, MPI_INT, left, 17, MPI_COMM_WORLD, &qs[0]), MPI_SUCCESS);
    CHECK_RC(
        MPI_Isendrecv(s, n, MPI_INT, right, 18, r, n, MPI_INT, left, 18, MPI_COMM_WORLD, &qs[1]),
        MPI_SUCCESS);
    qs[2] = MPI_REQUEST_NULL;
    int idx, seen = 0;
    MPI_Request q17;
    CHECK_RC(MPI_Isend(s, 1, MPI_INT, right, 17, MPI_COMM_WORLD, &q17), MPI_SUCCESS);
    for (int k = 0; k < 2; k++) { /* either may come first */
        CHECK_RC(MPI_Waitany(3, qs, &idx, &st), MPI_SUCCESS);
        CHECK((idx == 0 || idx == 1) && !(seen & (1 << idx)) && qs[idx] == MPI_REQUEST_NULL);
        seen |= 1 << idx;
        CHECK(st.MPI_SOURCE == left && st.MPI_TAG == (idx ? 18 : 17));
    }
    CHECK_RC(MPI_Waitany(3, qs, &idx, &st), MPI_SUCCESS);
    CHECK(idx == MPI_UNDEFINED);
    CHECK_RC(MPI_Wait(&q17, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(r2[0] == val(left, 5, 0));
    for (int i = 0; i < n; i++)
        CHECK(r[i] == val(left, 5, i));
    /* Request_free before completion: the operation still completes */
    memset(r, 0, sizeof(int) * (size_t)n);
    CHECK_RC(MPI_Isendrecv(s, n, MPI_INT, right, 19, r, n, MPI_INT, left, 19, MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&q), MPI_SUCCESS);
    CHECK(q == MPI_REQUEST_NULL);
    /* a later message on the same pair and tag matches the next receive (non-overtaking:
     * the freed request's receive took the first one) */
    int tok = -1;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, 19, &tok, 1, MPI_INT, left, 19, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(tok == left);
    MPI_Barrier(MPI_COMM_WORLD);
    for (int i = 0; i < n; i++)
        CHECK(r[i] == val(left, 5, i));
    free(s);
    free(r);
    free(r2);
}

/* Cancel: unmatched on both sides (tags nobody uses at this point) -> cancelled; the
 * peer then sends on those tags and the messages arrive in order, the cancelled one
 * never. Matched -> not cancelled, with the data. */
static void test_cancel(void)
{
    for (int n = 1; n <= 100000; n = n == 1 ? 100000 : 100001) {
        int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
        CHECK(s && r);
        for (int i = 0; i < n; i++) {
            s[i] = val(rank, 9, i);
            r[i] = -3;
        }
        MPI_Request q;
        CHECK_RC(
            MPI_Isendrecv(s, n, MPI_INT, right, 20, r, n, MPI_INT, left, 21, MPI_COMM_WORLD, &q),
            MPI_SUCCESS);
        CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
        MPI_Status st;
        CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
        int c;
        MPI_Test_cancelled(&st, &c);
        CHECK(c);
        CHECK(r[0] == -3 && r[n - 1] == -3);
        MPI_Barrier(MPI_COMM_WORLD);
        /* the right neighbour must not see the cancelled tag-20 message: it gets ours */
        int k = val(rank, 77, n);
        MPI_Request sq[2];
        CHECK_RC(MPI_Isend(&k, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &sq[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Isend(&n, 1, MPI_INT, right, 20, MPI_COMM_WORLD, &sq[1]), MPI_SUCCESS);
        int got[2] = {0, 0};
        CHECK_RC(MPI_Recv(&got[0], 1, MPI_INT, left, 20, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 1 && got[0] == val(left, 77, n));
        CHECK_RC(MPI_Recv(&got[1], 1, MPI_INT, left, 20, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(got[1] == n);
        CHECK_RC(MPI_Waitall(2, sq, statuses_ignore), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        int flag;
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, 20, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(!flag);
        /* the receive part matches at once (the message is there): the cancel does not
         * happen, the send part goes on and the peer receives it */
        MPI_Request q1;
        CHECK_RC(MPI_Isend(s, n, MPI_INT, right, 22, MPI_COMM_WORLD, &q1), MPI_SUCCESS);
        CHECK_RC(MPI_Probe(left, 22, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK_RC(
            MPI_Isendrecv(s, n, MPI_INT, right, 23, r, n, MPI_INT, left, 22, MPI_COMM_WORLD, &q),
            MPI_SUCCESS);
        CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
        int *r3 = malloc(sizeof(int) * (size_t)n);
        CHECK(r3);
        CHECK_RC(MPI_Recv(r3, n, MPI_INT, left, 23, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
        MPI_Test_cancelled(&st, &c);
        CHECK(!c && st.MPI_SOURCE == left && st.MPI_TAG == 22);
        CHECK_RC(MPI_Wait(&q1, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            CHECK(r[i] == val(left, 9, i) && r3[i] == val(left, 9, i));
        free(r3);
        free(s);
        free(r);
        MPI_Barrier(MPI_COMM_WORLD);
    }
}

/* Cancel with MPI_PROC_NULL on one side: the request is then just the other part. */
static void test_cancel_proc_null(void)
{
    int x = val(rank, 4, 0), y = -1, c;
    MPI_Request q;
    MPI_Status st;
    /* receive only (nobody sends tag 24): cancelled */
    CHECK_RC(MPI_Isendrecv(&x, 1, MPI_INT, MPI_PROC_NULL, 24, &y, 1, MPI_INT, left, 24,
                           MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &c);
    CHECK(c && y == -1);
    /* send only (nobody receives tag 25 before the cancel): cancelled, never delivered */
    CHECK_RC(MPI_Isendrecv(&x, 1, MPI_INT, right, 25, &y, 1, MPI_INT, MPI_PROC_NULL, 25,
                           MPI_COMM_WORLD, &q),
             MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    MPI_Test_cancelled(&st, &c);
    CHECK(c && st.MPI_SOURCE == MPI_PROC_NULL);
    int tok = -1, flag = 1;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, 26, &tok, 1, MPI_INT, left, 26, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK_RC(MPI_Iprobe(left, 25, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(tok == left && !flag);
    MPI_Barrier(MPI_COMM_WORLD);
}

static void test_errors(void)
{
    int b[4] = {0, 0, 0, 0};
    MPI_Request q = MPI_REQUEST_NULL;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int ec;
#define ERRCLASS(call, cls)                                                                        \
    do {                                                                                           \
        int rc_ = (call);                                                                          \
        MPI_Error_class(rc_, &ec);                                                                 \
        CHECK(rc_ != MPI_SUCCESS && ec == (cls));                                                  \
        CHECK(q == MPI_REQUEST_NULL);                                                              \
    } while (0)
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, 1, b, 1, MPI_INT, left, 1, MPI_COMM_NULL, &q),
             MPI_ERR_COMM);
    ERRCLASS(MPI_Isendrecv(b, -1, MPI_INT, right, 1, b, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_COUNT);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, 1, b, -2, MPI_INT, left, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_COUNT);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_DATATYPE_NULL, right, 1, b, 1, MPI_INT, left, 1,
                           MPI_COMM_WORLD, &q),
             MPI_ERR_TYPE);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, size, 1, b, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_RANK);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, 1, b, 1, MPI_INT, -5, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_RANK);
    /* MPI_ANY_SOURCE is a receive-side value only */
    ERRCLASS(
        MPI_Isendrecv(b, 1, MPI_INT, MPI_ANY_SOURCE, 1, b, 1, MPI_INT, left, 1, MPI_COMM_WORLD, &q),
        MPI_ERR_RANK);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, MPI_ANY_TAG, b, 1, MPI_INT, left, 1,
                           MPI_COMM_WORLD, &q),
             MPI_ERR_TAG);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, 1, b, 1, MPI_INT, left, -3, MPI_COMM_WORLD, &q),
             MPI_ERR_TAG);
    ERRCLASS(MPI_Isendrecv(b, 1, MPI_INT, right, 1, b, 1, MPI_INT, left, 1, MPI_COMM_WORLD, NULL),
             MPI_ERR_ARG);
    ERRCLASS(MPI_Isendrecv_replace(b, -1, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_COUNT);
    ERRCLASS(MPI_Isendrecv_replace(NULL, 2, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, &q),
             MPI_ERR_BUFFER);
    ERRCLASS(MPI_Isendrecv_replace(b, 1, MPI_INT, right, 1, left, 1, MPI_COMM_WORLD, NULL),
             MPI_ERR_ARG);
    ERRCLASS(MPI_Isendrecv_replace_c(b, 1, MPI_INT, right, 1, left,
                                     0x40000000 /* above MPI_TAG_UB */, MPI_COMM_WORLD, &q),
             MPI_ERR_TAG);
    /* truncation: reported at completion, through the request */
    MPI_Request t;
    CHECK_RC(MPI_Isendrecv(b, 4, MPI_INT, right, 30, b, 2, MPI_INT, left, 30, MPI_COMM_WORLD, &t),
             MPI_SUCCESS);
    MPI_Status st;
    int rc = MPI_Wait(&t, &st);
    MPI_Error_class(rc, &ec);
    CHECK(ec == MPI_ERR_TRUNCATE);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Barrier(MPI_COMM_WORLD);
}

int main(int argc, char **argv)
{
    statuses_ignore = MPI_STATUSES_IGNORE;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    for (int n = 0; n <= (1 << 20); n = n ? n * 8 : 1) {
        test_ring(n, 0);
        test_ring(n, 1);
        test_replace(n ? n : 1, n & 1);
    }
    test_ring(1013, 0); /* around the eager limit in bytes */
    test_ring(1014, 0);
    test_proc_null();
    test_completion();
    test_cancel();
    test_cancel_proc_null();
    test_errors();
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_p2p_isendrecv: ok (%d ranks)\n", size);
    return 0;
}
