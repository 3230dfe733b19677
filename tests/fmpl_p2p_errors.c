/* fmpl_p2p_errors.c — every bad argument of the point-to-point and any-source calls and
 * its code; truncation on both sides with nothing written past the receive buffer;
 * busy matching areas; waits with nothing pending; status contents. Ranks pair up in
 * a ring (1 rank: with itself). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size, maimax = 1024;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    char b[64];
    fmpl_status st;
    const fmpl_comm W = FMPL_COMM_WORLD;

    /* ---- bad arguments, one at a time ---- */
    CHECK_RC(fmpl_comm_rank(W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_size(W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_rank(5, &rank), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_NULL, &size), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_rank(100000, &rank), FMPL_ERR_COMM);
    /* send / isend / send_any */
    CHECK_RC(fmpl_send(NULL, 8, right, 0, W), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_send(b, 8, size, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_send(b, 8, -1, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_send(b, 8, right, maimax, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_send(b, 8, right, -2, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_send(b, 8, right, FMPL_TAG_ANY, W), FMPL_ERR_MAI); /* ANY: receives only */
    CHECK_RC(fmpl_send(b, 8, right, 0, 17), FMPL_ERR_COMM);
    CHECK_RC(fmpl_send(b, 8, right, 0, -5), FMPL_ERR_COMM);
    CHECK_RC(fmpl_isend(NULL, 1, right, 0, W), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_isend(b, 8, size + 3, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_isend(b, 8, right, 5000, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_isend(b, 8, right, FMPL_TAG_ANY, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_isend(b, 8, right, 0, FMPL_COMM_NULL), FMPL_ERR_COMM);
    CHECK_RC(fmpl_send_any(NULL, 3, right, 0, W), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_send_any(b, 3, size, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_send_any(b, 3, right, maimax, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_send_any(b, 3, right, FMPL_TAG_ANY, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_send_any(b, 3, right, 0, 3), FMPL_ERR_COMM);
    /* recv / irecv / recv_any */
    CHECK_RC(fmpl_recv(NULL, 8, left, 0, W, &st), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_recv(b, 8, size, 0, W, &st), FMPL_ERR_RANK);
    CHECK_RC(fmpl_recv(b, 8, left, maimax, W, &st), FMPL_ERR_MAI);
    CHECK_RC(fmpl_recv(b, 8, left, -7, W, &st), FMPL_ERR_MAI);
    CHECK_RC(fmpl_recv(b, 8, left, 0, 9, &st), FMPL_ERR_COMM);
    CHECK_RC(fmpl_irecv(NULL, 8, left, 0, W), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_irecv(b, 8, -1, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_irecv(b, 8, left, 1 << 20, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_irecv(b, 8, left, 0, 255), FMPL_ERR_COMM);
    CHECK_RC(fmpl_recv_any(NULL, 8, 0, W, &st), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_recv_any(b, 8, maimax, W, &st), FMPL_ERR_MAI);
    CHECK_RC(fmpl_recv_any(b, 8, -3, W, &st), FMPL_ERR_MAI);
    CHECK_RC(fmpl_recv_any(b, 8, 0, 44, &st), FMPL_ERR_COMM);
    /* waits */
    CHECK_RC(fmpl_isend_wait(size, 0, W), FMPL_ERR_RANK);
    CHECK_RC(fmpl_isend_wait(right, maimax, W), FMPL_ERR_MAI);
    CHECK_RC(fmpl_isend_wait(right, 0, 12), FMPL_ERR_COMM);
    CHECK_RC(fmpl_irecv_wait(-1, 0, W, &st), FMPL_ERR_RANK);
    CHECK_RC(fmpl_irecv_wait(left, -9, W, &st), FMPL_ERR_MAI);
    CHECK_RC(fmpl_irecv_wait(left, 0, 12, &st), FMPL_ERR_COMM);
    /* nothing pending (also on a peer never used) */
    CHECK_RC(fmpl_isend_wait(right, 0, W), FMPL_ERR_NO_PENDING);
    CHECK_RC(fmpl_irecv_wait(left, 0, W, &st), FMPL_ERR_NO_PENDING);
    CHECK_RC(fmpl_irecv_wait(left, FMPL_TAG_ANY, W, &st), FMPL_ERR_NO_PENDING);
    /* NULL buffer with size 0 is fine: a zero-byte message. */
    CHECK_RC(fmpl_irecv(NULL, 0, left, 1, W), FMPL_SUCCESS);
    CHECK_RC(fmpl_send(NULL, 0, right, 1, W), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 1, W, &st), FMPL_SUCCESS);
    CHECK(st.size == 0 && st.source == left && st.mai == 1 && st.error == FMPL_SUCCESS);
    /* Status may be ignored. */
    CHECK_RC(fmpl_irecv(b, 8, left, 1, W), FMPL_SUCCESS);
    CHECK_RC(fmpl_send("abcdefg", 8, right, 1, W), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 1, W, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
    CHECK(strcmp(b, "abcdefg") == 0);
    /* Messages of error codes. */
    CHECK(strcmp(fmpl_error_string(FMPL_ERR_BUSY), fmpl_error_string(FMPL_ERR_TRUNCATE)) != 0);
    CHECK(fmpl_error_string(-1) != NULL && fmpl_error_string(1000) != NULL);

    /* ---- busy matching areas ---- */
    {
        int x = 0, y = 0, v = rank;
        CHECK_RC(fmpl_irecv(&x, sizeof x, left, 4, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(&y, sizeof y, left, 4, W), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_recv(&y, sizeof y, left, 4, W, &st), FMPL_ERR_BUSY);
        /* A second isend on the same (pair, mai) while the first is in flight (its
         * receive not yet posted: mai 6 is never received before the barrier). */
        CHECK_RC(fmpl_isend(&v, sizeof v, right, 6, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend(&v, sizeof v, right, 6, W), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_send(&v, sizeof v, right, 6, W), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        int z = -1;
        CHECK_RC(fmpl_irecv(&z, sizeof z, left, 6, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(right, 6, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(right, 6, W), FMPL_ERR_NO_PENDING);
        CHECK_RC(fmpl_irecv_wait(left, 6, W, &st), FMPL_SUCCESS);
        CHECK(z == left);
        /* The ANY slot is a separate area (posted only now: a pending send on any mai
         * may take an ANY header). */
        CHECK_RC(fmpl_irecv(&y, sizeof y, left, FMPL_TAG_ANY, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(&y, sizeof y, left, FMPL_TAG_ANY, W), FMPL_ERR_BUSY);
        /* Finish the two receives left posted (mai 4, ANY). */
        int v4 = 40 + rank, v5 = 50 + rank;
        CHECK_RC(fmpl_send(&v4, sizeof v4, right, 4, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&v5, sizeof v5, right, 5, W), FMPL_SUCCESS); /* takes the ANY slot */
        CHECK_RC(fmpl_irecv_wait(left, 4, W, &st), FMPL_SUCCESS);
        CHECK(x == 40 + left && st.mai == 4);
        CHECK_RC(fmpl_irecv_wait(left, FMPL_TAG_ANY, W, &st), FMPL_SUCCESS);
        CHECK(y == 50 + left && st.mai == 5);
    }

    /* ---- truncation on both sides, MPI style: the first `size` bytes arrive, nothing
     * past the buffer is written, sender and receiver get FMPL_ERR_TRUNCATE ---- */
    for (int k = 0; k < 2; k++) {
        size_t rs = k ? 1000000 : 10, ss = k ? 3000000 : 50;
        unsigned char *rb = malloc(rs + 4096), *sb = malloc(ss);
        CHECK(rb && sb);
        for (size_t i = 0; i < ss; i++)
            sb[i] = (unsigned char)(i * 7 + rank);
        memset(rb, 0xC3, rs + 4096);
        CHECK_RC(fmpl_irecv(rb, rs, left, 8, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(sb, ss, right, 8, W), FMPL_ERR_TRUNCATE);
        CHECK_RC(fmpl_irecv_wait(left, 8, W, &st), FMPL_ERR_TRUNCATE);
        CHECK(st.error == FMPL_ERR_TRUNCATE && st.size == rs && st.source == left && st.mai == 8);
        for (size_t i = 0; i < rs; i++)
            CHECK(rb[i] == (unsigned char)(i * 7 + left));
        for (size_t i = rs; i < rs + 4096; i++)
            CHECK(rb[i] == 0xC3);
        /* Blocking recv and isend: same outcome. */
        memset(rb, 0xC3, rs + 4096);
        CHECK_RC(fmpl_isend(sb, ss, right, 8, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(rb, rs, left, 8, W, &st), FMPL_ERR_TRUNCATE);
        CHECK_RC(fmpl_isend_wait(right, 8, W), FMPL_ERR_TRUNCATE);
        CHECK(st.size == rs && rb[rs] == 0xC3 &&
              rb[rs - 1] == (unsigned char)((rs - 1) * 7 + left));
        /* The area is usable again afterwards. */
        int a = 0, c = 77 + rank;
        CHECK_RC(fmpl_irecv(&a, sizeof a, left, 8, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&c, sizeof c, right, 8, W), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 8, W, &st), FMPL_SUCCESS);
        CHECK(a == 77 + left);
        free(rb);
        free(sb);
    }

    /* ---- memory ---- */
    CHECK_RC(fmpl_free_mem(NULL), FMPL_SUCCESS);
    CHECK_RC(fmpl_free_mem(b), FMPL_ERR_BUFFER);
    void *h = fmpl_alloc_mem(1000);
    CHECK(h != NULL && ((uintptr_t)h & 63) == 0);
    CHECK_RC(fmpl_free_mem(h), FMPL_SUCCESS);
    CHECK(fmpl_alloc_mem((size_t)1 << 50) == NULL); /* beyond the heap */

    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_p2p_errors: ok (%d ranks)\n", size);
    return 0;
}
