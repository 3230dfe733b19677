/* fmpl_any.c — the any-source domain: incast (every rank sends many messages to rank 0,
 * more than the receive slots, mixing inline and rendezvous sizes) with contents and
 * per-sender order checked; receive by a specific mai; truncation (inline: receiver only;
 * rendezvous: both sides); messages to self; separation from fmpl_send/recv. */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

#define NMSG 40
#define BIG 5000 /* above the default inline limit (960): rendezvous */

static size_t msg_size(int i)
{
    return i % 5 == 4 ? BIG + (size_t)i : 8 + (size_t)i;
}

static unsigned char pat(int src, int i, size_t k)
{
    return (unsigned char)(src * 37 + i * 11 + (int)k);
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    const fmpl_comm W = FMPL_COMM_WORLD;
    fmpl_status st;
    unsigned char *buf = malloc(2 * BIG + 64);
    CHECK(buf);

    /* ---- incast ---- */
    if (rank != 0) {
        for (int i = 0; i < NMSG; i++) {
            size_t n = msg_size(i);
            for (size_t k = 0; k < n; k++)
                buf[k] = pat(rank, i, k);
            CHECK_RC(fmpl_send_any(buf, n, 0, i % 3, W), FMPL_SUCCESS);
        }
    } else {
        int *next = calloc((size_t)size, sizeof *next);
        CHECK(next);
        for (int got = 0; got < (size - 1) * NMSG; got++) {
            memset(buf, 0, 2 * BIG);
            CHECK_RC(fmpl_recv_any(buf, 2 * BIG, FMPL_TAG_ANY, W, &st), FMPL_SUCCESS);
            int s = st.source, i = next[s]++;
            CHECK(s > 0 && s < size && i < NMSG); /* one sender's messages in order */
            CHECK(st.size == msg_size(i) && st.mai == i % 3 && st.error == FMPL_SUCCESS);
            for (size_t k = 0; k < st.size; k++)
                CHECK(buf[k] == pat(s, i, k));
            CHECK(buf[st.size] == 0);
        }
        for (int s = 1; s < size; s++)
            CHECK(next[s] == NMSG);
        free(next);
    }
    CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* ---- a specific mai takes the first message with that mai, not the first to arrive ---- */
    if (size > 1) {
        if (rank == 1) {
            int a = 5, b = 6;
            CHECK_RC(fmpl_send_any(&a, sizeof a, 0, 5, W), FMPL_SUCCESS);
            CHECK_RC(fmpl_send_any(&b, sizeof b, 0, 6, W), FMPL_SUCCESS);
        } else if (rank == 0) {
            int x = 0;
            CHECK_RC(fmpl_recv_any(&x, sizeof x, 6, W, &st), FMPL_SUCCESS);
            CHECK(x == 6 && st.mai == 6 && st.source == 1 && st.size == sizeof x);
            CHECK_RC(fmpl_recv_any(&x, sizeof x, 5, W, &st), FMPL_SUCCESS);
            CHECK(x == 5 && st.mai == 5 && st.source == 1);
        }
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
    }

    /* ---- truncation ---- */
    if (size > 1) {
        if (rank == 1) {
            for (size_t k = 0; k < BIG; k++)
                buf[k] = (unsigned char)k;
            CHECK_RC(fmpl_send_any(buf, 100, 0, 1, W), FMPL_SUCCESS);      /* inline: eager */
            CHECK_RC(fmpl_send_any(buf, BIG, 0, 2, W), FMPL_ERR_TRUNCATE); /* rendezvous */
        } else if (rank == 0) {
            unsigned char r[1000 + 16];
            memset(r, 0xAB, sizeof r);
            CHECK_RC(fmpl_recv_any(r, 10, 1, W, &st), FMPL_ERR_TRUNCATE);
            CHECK(st.size == 10 && st.error == FMPL_ERR_TRUNCATE && r[9] == 9 && r[10] == 0xAB);
            memset(r, 0xAB, sizeof r);
            CHECK_RC(fmpl_recv_any(r, 1000, 2, W, &st), FMPL_ERR_TRUNCATE);
            CHECK(st.size == 1000 && r[999] == (unsigned char)999 && r[1000] == 0xAB);
        }
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
    }

    /* ---- to self (inline sizes: a blocking rendezvous to oneself cannot complete) ---- */
    for (int i = 0; i < 3; i++) {
        int v = 1000 * rank + i;
        CHECK_RC(fmpl_send_any(&v, sizeof v, rank, 9, W), FMPL_SUCCESS);
    }
    for (int i = 0; i < 3; i++) {
        int v = -1;
        CHECK_RC(fmpl_recv_any(&v, sizeof v, 9, W, &st), FMPL_SUCCESS);
        CHECK(v == 1000 * rank + i && st.source == rank);
    }

    /* ---- separate domains: a send_any is not seen by recv, and a recv header does not
     * attract send_any; both complete in their own domain ---- */
    {
        int p = (rank + 1) % size, q = (rank + size - 1) % size;
        int a = 1, b = 2, x = 0, y = 0;
        CHECK_RC(fmpl_irecv(&x, sizeof x, q, 3, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_send_any(&a, sizeof a, p, 3, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&b, sizeof b, p, 3, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv_any(&y, sizeof y, 3, W, &st), FMPL_SUCCESS);
        CHECK(y == 1 && st.source == q);
        CHECK_RC(fmpl_irecv_wait(q, 3, W, &st), FMPL_SUCCESS);
        CHECK(x == 2);
    }

    free(buf);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_any: ok (%d ranks)\n", size);
    return 0;
}
