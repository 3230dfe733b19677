/* mpi_p2p_match.c — matching with thousands of posted and unexpected messages (the
 * queues grow their hash tables while full): every message reaches the receive the
 * standard says it must, in order for equal (source, tag), contents checked.
 * Ranks pair up (0-1, 2-3, ...); an odd last rank talks to itself. */
#include <mpi.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define N 6000 /* distinct tags */
#define DUP 5  /* tag DTAG is used DUP extra times: those must match in posting order */
#define DTAG ((10 * 7919) % N) /* sent 11th in the scrambled order, posted before growth */

static int64_t value(int tag, int k)
{
    return (int64_t)tag * 1000003 + k;
}

static MPI_Comm sync_comm; /* a duplicate: the handshake must not match a wildcard */

/* Handshake so that the partner's receives are posted (or its sends queued) first. */
static void sync_pair(int peer)
{
    int x = 0, y;
    CHECK_RC(MPI_Sendrecv(&x, 1, MPI_INT, peer, 0, &y, 1, MPI_INT, peer, 0, sync_comm,
                          MPI_STATUS_IGNORE),
             MPI_SUCCESS);
}

/* Receives posted first: N distinct tags, DUP more with tag DTAG, and a wildcard-tag
 * receive posted last; the sender sends in reverse tag order. */
static void posted_phase(int me, int peer, int recv_side)
{
    int n = N + DUP + 1;
    int64_t *got = calloc((size_t)n, sizeof *got);
    MPI_Request *rq = malloc((size_t)n * sizeof *rq);
    CHECK(got && rq);
    if (recv_side) {
        /* The copies of tag DTAG are posted early: the tables grow after them. */
        for (int t = 0; t < N; t++) {
            CHECK_RC(MPI_Irecv(&got[t], 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &rq[t]),
                     MPI_SUCCESS);
            for (int k = 0; t == DTAG && k < DUP; k++)
                CHECK_RC(
                    MPI_Irecv(&got[N + k], 1, MPI_INT64_T, peer, DTAG, MPI_COMM_WORLD, &rq[N + k]),
                    MPI_SUCCESS);
        }
        CHECK_RC(MPI_Irecv(&got[N + DUP], 1, MPI_INT64_T, peer, MPI_ANY_TAG, MPI_COMM_WORLD,
                           &rq[N + DUP]),
                 MPI_SUCCESS);
    }
    if (peer != me)
        sync_pair(peer);
    if (!recv_side || peer == me) {
        for (int t = N - 1; t >= 0; t--) {
            int64_t v = value(t, 0);
            CHECK_RC(MPI_Send(&v, 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        for (int k = 1; k <= DUP; k++) {
            int64_t v = value(DTAG, k);
            CHECK_RC(MPI_Send(&v, 1, MPI_INT64_T, peer, DTAG, MPI_COMM_WORLD), MPI_SUCCESS);
        }
        int64_t v = value(N + 1, 0);
        CHECK_RC(MPI_Send(&v, 1, MPI_INT64_T, peer, N + 1, MPI_COMM_WORLD), MPI_SUCCESS);
    }
    if (recv_side) {
        MPI_Status *st = malloc((size_t)n * sizeof *st);
        CHECK(st);
        CHECK_RC(MPI_Waitall(n, rq, st), MPI_SUCCESS);
        for (int t = 0; t < N; t++)
            CHECK(got[t] == value(t, 0) && st[t].MPI_TAG == t);
        for (int k = 0; k < DUP; k++) /* earliest posted gets the earliest sent */
            CHECK(got[N + k] == value(DTAG, k + 1));
        CHECK(got[N + DUP] == value(N + 1, 0) && st[N + DUP].MPI_TAG == N + 1);
        free(st);
    }
    free(got);
    free(rq);
}

/* Messages sent first (unexpected at the receiver), received in a scrambled order by
 * tag; tag DTAG's copies must come out in sending order, an ANY_TAG receive takes the
 * earliest remaining message. */
static void unexpected_phase(int me, int peer, int recv_side)
{
    if (!recv_side || peer == me) {
        for (int i = 0; i < N; i++) {
            int t = (int)(((int64_t)i * 7919) % N);
            int64_t v = value(t, 0);
            CHECK_RC(MPI_Send(&v, 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD), MPI_SUCCESS);
            for (int k = 1; t == DTAG && k <= DUP; k++) { /* early: the tables grow after */
                v = value(DTAG, k);
                CHECK_RC(MPI_Send(&v, 1, MPI_INT64_T, peer, DTAG, MPI_COMM_WORLD), MPI_SUCCESS);
            }
        }
    }
    if (peer != me)
        sync_pair(peer);
    if (recv_side) {
        /* Everything sent before the handshake has arrived (per-pair order). */
        MPI_Status st;
        int flag = 0;
        int64_t v;
        /* ANY_TAG: the first message sent (tag 0). */
        CHECK_RC(MPI_Recv(&v, 1, MPI_INT64_T, peer, MPI_ANY_TAG, MPI_COMM_WORLD, &st), MPI_SUCCESS);
        CHECK(st.MPI_TAG == 0 && v == value(0, 0));
        for (int t = N - 1; t >= 1; t--) {
            CHECK_RC(MPI_Recv(&v, 1, MPI_INT64_T, peer, t, MPI_COMM_WORLD, &st), MPI_SUCCESS);
            CHECK(st.MPI_TAG == t && v == value(t, 0));
            if (t == DTAG)
                for (int k = 1; k <= DUP; k++) {
                    CHECK_RC(MPI_Recv(&v, 1, MPI_INT64_T, peer, DTAG, MPI_COMM_WORLD, &st),
                             MPI_SUCCESS);
                    CHECK(v == value(DTAG, k));
                }
        }
        CHECK_RC(MPI_Iprobe(peer, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, &st), MPI_SUCCESS);
        CHECK(!flag);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int me, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &sync_comm), MPI_SUCCESS);
    int peer = me ^ 1;
    if (peer >= size)
        peer = me;
    for (int round = 0; round < 2; round++) {
        /* Both directions: each rank of a pair is receiver once (alone: always). */
        int even = (me & 1) == round;
        posted_phase(me, peer, peer == me || even);
        unexpected_phase(me, peer, peer == me || !even);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Comm_free(&sync_comm);
    MPI_Finalize();
    return 0;
}
