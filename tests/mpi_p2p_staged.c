/* mpi_p2p_staged.c — non-contiguous rendezvous sends staged in the sender's shared heap
 * (p2p.c, STAGED): the receiver unpacks while the sender packs.
 *
 * A ring (each rank sends to the right, receives from the left; one rank: itself) of
 * doubles with different layouts on the two sides: a vector of stride 3 sent, received
 * into a vector of stride 2, an indexed type and contiguous memory, from just above the
 * eager limit to beyond what a staging block may take (1/8 of the heap: those go the
 * private way); gaps must stay untouched. Once with MPI_Isend, once with MPI_Irecv first
 * and a blocking MPI_Send (above 512 KiB those stage through a ring the sender refills as
 * the receiver drains it, while each rank also drains its left neighbour's ring; odd
 * ranks post late, so the RTS waits unexpected). Then: a truncated staged receive
 * (MPI_ERR_TRUNCATE, the bytes that fit delivered, the next message intact; for a ring
 * send too, whose sender stops when the receiver ends early), a staged
 * send cancelled before it is matched, and 12 staged sends in flight received in
 * reverse order (all unexpected first), and 8 blocking ring sends in a row into a type that
 * is slow to unpack. Run also with a 24 MiB heap (FMPL_SHM_HEAP), most
 * of it the collectives': the larger sends and the later ones in flight find no room
 * and take the private path; and over udp, where none is staged. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define GAP (-7.0)

static int rank, size, left, right;

static double val(int src, int salt, long i)
{
    return (double)src * 1e9 + (double)salt * 1e6 + (double)i;
}

/* Sends n doubles as a vector of stride 3; receives them as layout `rl`
 * (0 contiguous, 1 vector of stride 2, 2 indexed: blocks of 3 with gaps of 1). blocking:
 * MPI_Irecv (late on odd ranks), MPI_Send, MPI_Wait; else MPI_Isend, MPI_Recv, MPI_Wait. */
static void ring(long n, int rl, int salt, int blocking)
{
    double *s = malloc(sizeof(double) * (size_t)(3 * n + 1));
    double *r = malloc(sizeof(double) * (size_t)(2 * n + 4));
    CHECK(s && r);
    for (long i = 0; i < 3 * n; i++)
        s[i] = i % 3 ? GAP : val(rank, salt, i / 3);
    for (long i = 0; i < 2 * n + 4; i++)
        r[i] = GAP;
    MPI_Datatype st, rt = MPI_DATATYPE_NULL;
    CHECK_RC(MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&st), MPI_SUCCESS);
    int *bl = NULL, *dp = NULL;
    if (rl == 1)
        CHECK_RC(MPI_Type_vector((int)n, 1, 2, MPI_DOUBLE, &rt), MPI_SUCCESS);
    if (rl == 2) { /* n is a multiple of 3 here */
        long nb = n / 3;
        bl = malloc(sizeof(int) * (size_t)nb);
        dp = malloc(sizeof(int) * (size_t)nb);
        CHECK(bl && dp);
        for (long b = 0; b < nb; b++) {
            bl[b] = 3;
            dp[b] = (int)(4 * b);
        }
        CHECK_RC(MPI_Type_indexed((int)nb, bl, dp, MPI_DOUBLE, &rt), MPI_SUCCESS);
    }
    if (rt != MPI_DATATYPE_NULL)
        CHECK_RC(MPI_Type_commit(&rt), MPI_SUCCESS);
    MPI_Request q;
    MPI_Status status;
    int rcount = rt == MPI_DATATYPE_NULL ? (int)n : 1;
    MPI_Datatype rtype = rt == MPI_DATATYPE_NULL ? MPI_DOUBLE : rt;
    if (blocking) {
        if (rank % 2)
            usleep(20000); /* the RTS from the left arrives first */
        CHECK_RC(MPI_Irecv(r, rcount, rtype, left, salt, MPI_COMM_WORLD, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Send(s, 1, st, right, salt, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, &status), MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Isend(s, 1, st, right, salt, MPI_COMM_WORLD, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Recv(r, rcount, rtype, left, salt, MPI_COMM_WORLD, &status), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    int cnt = -1;
    CHECK_RC(MPI_Get_count(&status, MPI_DOUBLE, &cnt), MPI_SUCCESS);
    CHECK(cnt == (int)n);
    long span = rl == 0 ? n : rl == 1 ? 2 * n : n / 3 * 4;
    long k = 0;
    for (long i = 0; i < 2 * n + 4; i++) {
        int data = i < span && (rl == 0 || (rl == 1 && i % 2 == 0) || (rl == 2 && i % 4 != 3));
        double want = data ? val(left, salt, k++) : GAP;
        if (r[i] != want) {
            fprintf(stderr, "rank %d: n %ld layout %d: element %ld is %g, not %g\n", rank, n, rl, i,
                    r[i], want);
            exit(1);
        }
    }
    CHECK(k == n);
    MPI_Type_free(&st);
    if (rt != MPI_DATATYPE_NULL)
        MPI_Type_free(&rt);
    free(bl);
    free(dp);
    free(s);
    free(r);
}

/* A staged message into a receive of half its size, then an intact one. blocking: a
 * blocking send of 1 MiB (a ring) into a receive posted first. */
static void truncate_then_intact(int blocking)
{
    long n = blocking ? 131072 : 16384; /* 1 MiB or 128 KiB of doubles */
    double *s = malloc(sizeof(double) * (size_t)(3 * n)), *r = malloc(sizeof(double) * (size_t)n);
    CHECK(s && r);
    for (long i = 0; i < 3 * n; i++)
        s[i] = val(rank, 99, i / 3);
    MPI_Datatype st;
    CHECK_RC(MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&st), MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    for (int round = 0; round < 2; round++) {
        MPI_Request q;
        for (long i = 0; i < n; i++)
            r[i] = GAP;
        long want = round == 0 ? n / 2 : n;
        MPI_Status status;
        int rc;
        if (blocking) {
            CHECK_RC(MPI_Irecv(r, (int)want, MPI_DOUBLE, left, 40 + round, MPI_COMM_WORLD, &q),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Send(s, 1, st, right, 40 + round, MPI_COMM_WORLD), MPI_SUCCESS);
            rc = MPI_Wait(&q, &status);
        } else {
            CHECK_RC(MPI_Isend(s, 1, st, right, 40 + round, MPI_COMM_WORLD, &q), MPI_SUCCESS);
            rc = MPI_Recv(r, (int)want, MPI_DOUBLE, left, 40 + round, MPI_COMM_WORLD, &status);
        }
        int cls;
        MPI_Error_class(rc, &cls);
        CHECK(cls == (round == 0 ? MPI_ERR_TRUNCATE : MPI_SUCCESS));
        for (long i = 0; i < n; i++)
            CHECK(r[i] == (i < want ? val(left, 99, i) : GAP));
        if (!blocking)
            CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    MPI_Type_free(&st);
    free(s);
    free(r);
}

/* A staged send cancelled before anyone posts its receive: cancelled, never received. */
static void cancel_unmatched(void)
{
    long n = 8192;
    double *s = calloc((size_t)(3 * n), sizeof(double));
    CHECK(s);
    MPI_Datatype st;
    CHECK_RC(MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&st), MPI_SUCCESS);
    MPI_Request q;
    CHECK_RC(MPI_Isend(s, 1, st, right, 77, MPI_COMM_WORLD, &q), MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&q), MPI_SUCCESS);
    MPI_Status status;
    CHECK_RC(MPI_Wait(&q, &status), MPI_SUCCESS);
    int cancelled = 0;
    MPI_Test_cancelled(&status, &cancelled);
    CHECK(cancelled);
    MPI_Barrier(MPI_COMM_WORLD);
    int flag = 1;
    CHECK_RC(MPI_Iprobe(left, 77, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(!flag);
    MPI_Type_free(&st);
    free(s);
}

/* 12 staged sends of 1 MiB in flight, received in reverse order. */
static void many_in_flight(void)
{
    enum { K = 12 };
    long n = 131072; /* 1 MiB each */
    double *s = malloc(sizeof(double) * (size_t)(3 * n * K)),
           *r = malloc(sizeof(double) * (size_t)(n * K));
    CHECK(s && r);
    MPI_Datatype st;
    CHECK_RC(MPI_Type_vector((int)n, 1, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&st), MPI_SUCCESS);
    MPI_Request q[K];
    for (int k = 0; k < K; k++) {
        for (long i = 0; i < 3 * n; i++)
            s[3 * n * k + i] = val(rank, k, i / 3);
        CHECK_RC(MPI_Isend(s + 3 * n * k, 1, st, right, 100 + k, MPI_COMM_WORLD, &q[k]),
                 MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD); /* every message is unexpected by now (or on its way) */
    for (int k = K - 1; k >= 0; k--)
        CHECK_RC(MPI_Recv(r + n * k, (int)n, MPI_DOUBLE, left, 100 + k, MPI_COMM_WORLD,
                          MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(K, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int k = 0; k < K; k++)
        for (long i = 0; i < n; i++)
            CHECK(r[n * k + i] == val(left, k, i));
    MPI_Type_free(&st);
    free(s);
    free(r);
}

/* 8 blocking ring sends of 3 MiB in a row to the right, from blocks of 64 doubles (quick to
 * pack) into an indexed type of single doubles (slow to unpack): the sender often waits
 * for room, and its pieces are cut to the room the receiver has made. */
static void blocking_in_a_row(void)
{
    enum { K = 8 };
    long n = 393216;
    double *s = malloc(sizeof(double) * (size_t)(n + n / 64)),
           *r = malloc(sizeof(double) * (size_t)(2 * n));
    int *dp = malloc(sizeof(int) * (size_t)n);
    CHECK(s && r && dp);
    for (long i = 0; i < n; i++)
        dp[i] = (int)(2 * i);
    MPI_Datatype st, rt;
    CHECK_RC(MPI_Type_vector((int)(n / 64), 64, 65, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&st), MPI_SUCCESS);
    CHECK_RC(MPI_Type_create_indexed_block((int)n, 1, dp, MPI_DOUBLE, &rt), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&rt), MPI_SUCCESS);
    for (int k = 0; k < K; k++) {
        for (long i = 0; i < n + n / 64; i++)
            s[i] = i % 65 == 64 ? GAP : val(rank, 200 + k, i - i / 65);
        for (long i = 0; i < 2 * n; i++)
            r[i] = GAP;
        MPI_Request q;
        CHECK_RC(MPI_Irecv(r, 1, rt, left, 200 + k, MPI_COMM_WORLD, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Send(s, 1, st, right, 200 + k, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (long i = 0; i < 2 * n; i++)
            if (r[i] != (i % 2 ? GAP : val(left, 200 + k, i / 2))) {
                fprintf(stderr, "rank %d: message %d: element %ld is %g\n", rank, k, i, r[i]);
                exit(1);
            }
    }
    MPI_Type_free(&st);
    MPI_Type_free(&rt);
    free(s);
    free(r);
    free(dp);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    /* from above the eager limit to 12 MiB (beyond 1/8 of the default 64 MiB heap) */
    static const long sizes[] = {600, 3 * 1024, 3 * 8192, 3 * 65536, 3 * 262144, 3 * 524288};
    int salt = 1;
    for (int blocking = 0; blocking < 2; blocking++)
        for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
            for (int rl = 0; rl < 3; rl++)
                ring(sizes[i], rl, salt++, blocking);
    truncate_then_intact(0);
    truncate_then_intact(1);
    blocking_in_a_row();
    cancel_unmatched();
    many_in_flight();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_p2p_staged: %d ranks ok\n", size);
    MPI_Finalize();
    return 0;
}
