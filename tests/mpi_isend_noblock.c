/* mpi_isend_noblock.c — MPI_Isend returns at once when the receiver has no room
 * (deferred sends, src/mpi/p2p_defer.c), and what waits keeps MPI's order.
 *
 * Every rank but 0 sends to rank 0, which sleeps outside MPI for SLEEP_S first: NMSG
 * Isends of 400 bytes (7 inbox cells each: the senders fill rank 0's inbox many times
 * over), among them a rendezvous-size one, a non-contiguous one (a vector type, packed
 * when it finally goes), an Issend and a persistent send; then one more Isend that is
 * cancelled while it waits (it must come back cancelled and never arrive), then a
 * blocking MPI_Send, which must arrive after all the deferred ones. The Isend loop must
 * take less than a third of the sleep (it waited for the sleeper before). Rank 0 checks
 * every message's tag (posting order per sender) and contents, and that nothing else
 * arrives. With one rank, the rank sends to itself (its own inbox fills the same way). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define NMSG 300
#define SMALL 400   /* bytes */
#define LARGE 65536 /* bytes: rendezvous */
#define NVEC 50     /* doubles of the vector message (every second one of 2 * NVEC) */
#define SLEEP_S 1.5
#define I_LARGE (NMSG / 3)
#define I_VECTOR (NMSG / 2)
#define I_SYNC (2 * NMSG / 3)
#define I_PERSIST (5 * NMSG / 6)
#define TAG_CANCEL (NMSG + 7)
#define TAG_END NMSG

static int rank, size;
/* the sender's state between posting and completing */
static MPI_Datatype vec;
static unsigned char **bufs;
static MPI_Request *reqs, persist;
static double *strided;

static unsigned char byte_of(int src, int i, size_t k)
{
    return (unsigned char)(src * 131 + i * 7 + (int)k);
}

static size_t len_of(int i)
{
    return i == I_LARGE ? LARGE : i == I_VECTOR ? NVEC * sizeof(double) : SMALL;
}

/* Posts everything (see the top); returns without waiting for the sends. */
static void sender_post(int dst)
{
    CHECK_RC(MPI_Type_vector(NVEC, 1, 2, MPI_DOUBLE, &vec), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&vec), MPI_SUCCESS);
    bufs = malloc(NMSG * sizeof *bufs);
    reqs = malloc((NMSG + 1) * sizeof *reqs);
    CHECK(bufs && reqs);
    strided = malloc(2 * NVEC * sizeof(double));
    CHECK(strided);
    for (int i = 0; i < NMSG; i++) {
        size_t n = len_of(i);
        bufs[i] = malloc(n);
        CHECK(bufs[i]);
        for (size_t k = 0; k < n; k++)
            bufs[i][k] = byte_of(rank, i, k);
    }
    /* the vector message: its packed stream is bufs[I_VECTOR] */
    for (int j = 0; j < NVEC; j++) {
        memcpy(&strided[2 * j], bufs[I_VECTOR] + j * sizeof(double), sizeof(double));
        strided[2 * j + 1] = -1.0;
    }
    CHECK_RC(
        MPI_Send_init(bufs[I_PERSIST], SMALL, MPI_BYTE, dst, I_PERSIST, MPI_COMM_WORLD, &persist),
        MPI_SUCCESS);
    double t0 = MPI_Wtime();
    for (int i = 0; i < NMSG; i++) {
        if (i == I_VECTOR)
            CHECK_RC(MPI_Isend(strided, 1, vec, dst, i, MPI_COMM_WORLD, &reqs[i]), MPI_SUCCESS);
        else if (i == I_SYNC)
            CHECK_RC(MPI_Issend(bufs[i], SMALL, MPI_BYTE, dst, i, MPI_COMM_WORLD, &reqs[i]),
                     MPI_SUCCESS);
        else if (i == I_PERSIST) {
            CHECK_RC(MPI_Start(&persist), MPI_SUCCESS);
            reqs[i] = MPI_REQUEST_NULL;
        } else
            CHECK_RC(MPI_Isend(bufs[i], (int)len_of(i), MPI_BYTE, dst, i, MPI_COMM_WORLD, &reqs[i]),
                     MPI_SUCCESS);
    }
    static unsigned char never[SMALL];
    CHECK_RC(MPI_Isend(never, SMALL, MPI_BYTE, dst, TAG_CANCEL, MPI_COMM_WORLD, &reqs[NMSG]),
             MPI_SUCCESS);
    double posted = MPI_Wtime() - t0;
    if (size > 1 && posted > SLEEP_S / 3) {
        fprintf(stderr, "rank %d: %d Isends to a sleeping rank took %.3f s (they must not wait)\n",
                rank, NMSG + 1, posted);
        exit(1);
    }
    /* Waiting behind a full inbox: cancelled for sure, and it never reaches rank 0. */
    CHECK_RC(MPI_Cancel(&reqs[NMSG]), MPI_SUCCESS);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&reqs[NMSG], &st), MPI_SUCCESS);
    int cancelled = 0;
    CHECK_RC(MPI_Test_cancelled(&st, &cancelled), MPI_SUCCESS);
    if (!cancelled) {
        fprintf(stderr, "rank %d: a send waiting for room was not cancelled\n", rank);
        exit(1);
    }
    int end = rank;
    CHECK_RC(MPI_Send(&end, 1, MPI_INT, dst, TAG_END, MPI_COMM_WORLD), MPI_SUCCESS);
}

/* Completes the sends (the rendezvous and synchronous ones once received). */
static void sender_finish(void)
{
    CHECK_RC(MPI_Waitall(NMSG, reqs, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&persist, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&persist), MPI_SUCCESS);
    for (int i = 0; i < NMSG; i++)
        free(bufs[i]);
    free(bufs);
    free(reqs);
    free(strided);
    CHECK_RC(MPI_Type_free(&vec), MPI_SUCCESS);
}

/* Receives one sender's messages in posting order, checking each. */
static void receive_from(int src)
{
    unsigned char *buf = malloc(LARGE);
    CHECK(buf);
    for (int i = 0; i <= NMSG; i++) {
        MPI_Status st;
        CHECK_RC(MPI_Recv(buf, LARGE, MPI_BYTE, src, MPI_ANY_TAG, MPI_COMM_WORLD, &st),
                 MPI_SUCCESS);
        int n = 0;
        CHECK_RC(MPI_Get_count(&st, MPI_BYTE, &n), MPI_SUCCESS);
        if (st.MPI_TAG != i) {
            fprintf(stderr, "rank 0: message %d from %d has tag %d (order lost)\n", i, src,
                    st.MPI_TAG);
            exit(1);
        }
        if (i == TAG_END) {
            CHECK(n == (int)sizeof(int) && *(int *)(void *)buf == src);
            break;
        }
        CHECK((size_t)n == len_of(i));
        for (size_t k = 0; k < (size_t)n; k++)
            if (buf[k] != byte_of(src, i, k)) {
                fprintf(stderr, "rank 0: message %d from %d, byte %zu: %u, not %u\n", i, src, k,
                        buf[k], byte_of(src, i, k));
                exit(1);
            }
    }
    free(buf);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Barrier(MPI_COMM_WORLD);
    if (size == 1) {
        sender_post(0);
        receive_from(0);
        sender_finish();
    } else if (rank == 0) {
        usleep((useconds_t)(SLEEP_S * 1e6)); /* computing: no MPI call */
        for (int src = 1; src < size; src++)
            receive_from(src);
    } else {
        sender_post(0);
        sender_finish();
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) { /* the cancelled messages never arrived */
        int flag = 1;
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(!flag);
        printf("mpi_isend_noblock: %d ranks ok\n", size);
    }
    MPI_Finalize();
    return 0;
}
