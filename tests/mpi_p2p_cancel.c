/* mpi_p2p_cancel.c — MPI_Cancel of sends (MPI-4.0 3.8.4), every rank sending to its right
 * neighbour (itself with one rank), eager and rendezvous sizes, for Isend, Issend, Ibsend,
 * Send_init and Bsend_init:
 *   A: cancelled before the receiver posts anything: MPI_Test_cancelled true; the receiver
 *      never sees the message, and later messages with the same tag arrive in order; a
 *      buffered send's block is free again (the attached buffer holds one message only);
 *   B: the receive was posted before the message arrived (matched): the cancel fails, the
 *      send completes normally and the data arrives;
 *   C: the receiver took the message with MPI_Mprobe: the cancel fails, MPI_Mrecv gets it;
 *   D: MPI_Cancel then MPI_Request_free: the message never shows up at the receiver;
 *   E: of three small Isends with one envelope, after a blocking send with it (which
 *      carries no cancel token when eager), the middle one is cancelled: the others
 *      arrive in order and it never does (the token names one message of its pair). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size, left, right;
static MPI_Status *volatile statuses_ignore;

enum { M_ISEND, M_ISSEND, M_IBSEND, M_PSEND, M_PBSEND, M_COUNT };
static const char *mode_name[] = {"Isend", "Issend", "Ibsend", "Send_init", "Bsend_init"};

static int val(int src, int salt, int i)
{
    return src * 1000003 + salt * 7919 + i;
}
static void fill(int *b, int n, int src, int salt)
{
    for (int i = 0; i < n; i++)
        b[i] = val(src, salt, i);
}
static void check(const int *b, int n, int src, int salt, int line)
{
    for (int i = 0; i < n; i++)
        if (b[i] != val(src, salt, i)) {
            fprintf(stderr, "rank %d line %d: element %d of %d from %d (salt %d) wrong\n", rank,
                    line, i, n, src, salt);
            exit(1);
        }
}

/* Starts a send of mode m; persistent modes give an active persistent request. */
static void start(int m, const int *b, int n, int tag, MPI_Request *q)
{
    switch (m) {
    case M_ISEND: CHECK_RC(MPI_Isend(b, n, MPI_INT, right, tag, MPI_COMM_WORLD, q), 0); break;
    case M_ISSEND: CHECK_RC(MPI_Issend(b, n, MPI_INT, right, tag, MPI_COMM_WORLD, q), 0); break;
    case M_IBSEND: CHECK_RC(MPI_Ibsend(b, n, MPI_INT, right, tag, MPI_COMM_WORLD, q), 0); break;
    case M_PSEND:
        CHECK_RC(MPI_Send_init(b, n, MPI_INT, right, tag, MPI_COMM_WORLD, q), 0);
        CHECK_RC(MPI_Start(q), 0);
        break;
    default:
        CHECK_RC(MPI_Bsend_init(b, n, MPI_INT, right, tag, MPI_COMM_WORLD, q), 0);
        CHECK_RC(MPI_Start(q), 0);
        break;
    }
}

/* Completes q (Wait, or a Test loop), returns MPI_Test_cancelled; frees persistent ones. */
static int finish(MPI_Request *q, int m, int by_test)
{
    MPI_Status st;
    if (by_test) {
        int flag = 0;
        while (!flag)
            CHECK_RC(MPI_Test(q, &flag, &st), MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Wait(q, &st), MPI_SUCCESS);
    }
    int c = -1;
    CHECK_RC(MPI_Test_cancelled(&st, &c), MPI_SUCCESS);
    if (m == M_PSEND || m == M_PBSEND) {
        CHECK(*q != MPI_REQUEST_NULL); /* inactive, still there */
        CHECK_RC(MPI_Request_free(q), MPI_SUCCESS);
    }
    CHECK(*q == MPI_REQUEST_NULL);
    return c;
}

/* Detach (which waits until the blocks of sent buffered messages are free: the receiver
 * may still be reading the last one) and attach again. */
static void rebuffer(int buffered)
{
    if (!buffered)
        return;
    void *ab;
    int asz;
    CHECK_RC(MPI_Buffer_detach(&ab, &asz), MPI_SUCCESS);
    CHECK_RC(MPI_Buffer_attach(ab, asz), MPI_SUCCESS);
}

static void round_(int m, int n, int base)
{
    int *s = malloc(sizeof(int) * (size_t)n), *r = malloc(sizeof(int) * (size_t)n);
    CHECK(s && r);
    int buffered = m == M_IBSEND || m == M_PBSEND;
    void *bbuf = NULL;
    int bsize = (int)sizeof(int) * n + MPI_BSEND_OVERHEAD; /* room for one message */
    if (buffered) {
        bbuf = malloc((size_t)bsize);
        CHECK(bbuf);
        CHECK_RC(MPI_Buffer_attach(bbuf, bsize), MPI_SUCCESS);
    }
    MPI_Request q;
    MPI_Status st;

    /* A: nobody posts a receive for tag base before the cancel has completed */
    fill(s, n, rank, 1);
    start(m, s, n, base, &q);
    if (buffered)
        fill(s, n, rank, 99); /* the buffered copy is what would go */
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS); /* twice is harmless */
    if (finish(&q, m, m == M_PSEND) != 1) {
        fprintf(stderr, "rank %d: %s of %d ints not cancelled\n", rank, mode_name[m], n);
        exit(1);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* two more with the same tag: they arrive, in order; a buffered one uses the block the
     * cancelled message had */
    MPI_Request q2[2];
    int k = val(rank, 2, n);
    fill(s, n, rank, 3);
    if (buffered)
        CHECK_RC(MPI_Bsend(s, n, MPI_INT, right, base, MPI_COMM_WORLD), MPI_SUCCESS);
    else
        CHECK_RC(MPI_Isend(s, n, MPI_INT, right, base, MPI_COMM_WORLD, &q2[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Isend(&k, 1, MPI_INT, right, base, MPI_COMM_WORLD, &q2[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Recv(r, n, MPI_INT, left, base, MPI_COMM_WORLD, &st), MPI_SUCCESS);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == n);
    check(r, n, left, 3, __LINE__);
    int kk = -1;
    CHECK_RC(MPI_Recv(&kk, 1, MPI_INT, left, base, MPI_COMM_WORLD, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(kk == val(left, 2, n));
    if (buffered)
        q2[0] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Waitall(2, q2, statuses_ignore), MPI_SUCCESS);
    rebuffer(buffered);
    MPI_Barrier(MPI_COMM_WORLD);

    /* B: the receive is posted before the message arrives */
    MPI_Request rq;
    CHECK_RC(MPI_Irecv(r, n, MPI_INT, left, base + 1, MPI_COMM_WORLD, &rq), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    fill(s, n, rank, 4);
    start(m, s, n, base + 1, &q);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    check(r, n, left, 4, __LINE__);
    CHECK(finish(&q, m, 0) == 0);
    MPI_Barrier(MPI_COMM_WORLD);

    rebuffer(buffered);
    /* C: the receiver takes the message with MPI_Mprobe before the cancel */
    fill(s, n, rank, 5);
    start(m, s, n, base + 2, &q);
    MPI_Message msg;
    CHECK_RC(MPI_Mprobe(left, base + 2, MPI_COMM_WORLD, &msg, &st), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    CHECK_RC(MPI_Mrecv(r, n, MPI_INT, &msg, &st), MPI_SUCCESS);
    check(r, n, left, 5, __LINE__);
    CHECK(finish(&q, m, 0) == 0);
    MPI_Barrier(MPI_COMM_WORLD);

    rebuffer(buffered);
    /* D: cancel, then free the request: the message never appears at the receiver; a
     * later message on the same pair tells when the cancel has been handled there */
    fill(s, n, rank, 6);
    start(m, s, n, base + 3, &q);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    if (m == M_PSEND || m == M_PBSEND) /* a persistent request is freed once inactive */
        CHECK(finish(&q, m, 0) == 1);
    else
        CHECK_RC(MPI_Request_free(&q), MPI_SUCCESS);
    int tok = -1;
    CHECK_RC(MPI_Sendrecv(&rank, 1, MPI_INT, right, base + 4, &tok, 1, MPI_INT, left, base + 4,
                          MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(tok == left);
    int flag = 1;
    CHECK_RC(MPI_Iprobe(left, base + 3, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(!flag);
    MPI_Barrier(MPI_COMM_WORLD);

    if (buffered) {
        void *ab;
        int asz;
        CHECK_RC(MPI_Buffer_detach(&ab, &asz), MPI_SUCCESS);
        CHECK(ab == bbuf && asz == bsize);
        free(bbuf);
    }
    free(s);
    free(r);
}

static void middle(int tag)
{
    int v[4] = {val(rank, 5, 0), val(rank, 5, 1), val(rank, 5, 2), val(rank, 5, 3)};
    int first = -1;
    MPI_Request rq, q[3];
    MPI_Status st;
    CHECK_RC(MPI_Irecv(&first, 1, MPI_INT, left, tag, MPI_COMM_WORLD, &rq), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD); /* the blocking send below is matched at once */
    CHECK_RC(MPI_Send(&v[0], 1, MPI_INT, right, tag, MPI_COMM_WORLD), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK_RC(MPI_Isend(&v[i + 1], 1, MPI_INT, right, tag, MPI_COMM_WORLD, &q[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&q[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q[1], &st), MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&st, &cancelled);
    CHECK(cancelled);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(first == val(left, 5, 0));
    for (int i = 2; i <= 3; i++) {
        int got = -1;
        CHECK_RC(MPI_Recv(&got, 1, MPI_INT, left, tag, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        if (got != val(left, 5, i == 2 ? 1 : 3)) {
            fprintf(stderr, "rank %d: message %d from %d is %d, expected %d\n", rank, i, left, got,
                    val(left, 5, i == 2 ? 1 : 3));
            exit(1);
        }
    }
    q[1] = MPI_REQUEST_NULL;
    CHECK_RC(MPI_Waitall(3, q, statuses_ignore), MPI_SUCCESS);
    int flag = 1;
    CHECK_RC(MPI_Iprobe(left, tag, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(!flag);
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
    int tag = 100;
    for (int m = 0; m < M_COUNT; m++)
        for (int n = 1; n <= 100000; n *= 100) { /* 4 bytes .. 400 KB */
            round_(m, n, tag);
            tag += 10;
        }
    middle(tag);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_p2p_cancel: ok (%d ranks)\n", size);
    return 0;
}
