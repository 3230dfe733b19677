/* fmpl_p2p.c — point-to-point data: a ring exchange (irecv from the left, send to the
 * right, wait) of sizes 0 .. 16 MiB with content checks, for every pairing of malloc'd
 * and shared-heap (fmpl_alloc_mem) buffers; messages to self; a message shorter than the
 * receive buffer (status source/mai/size, bytes past it untouched); blocking recv
 * against isend; TAG_ANY receives. Runs with any number of ranks (1: all to self). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

static unsigned char pattern(int src, size_t size, size_t i)
{
    return (unsigned char)((unsigned)src * 131u + (unsigned)size * 7u +
                           (unsigned)(i * 2654435761u >> 13));
}

static void fill(unsigned char *b, int src, size_t size)
{
    for (size_t i = 0; i < size; i++)
        b[i] = pattern(src, size, i);
}

static void check_data(const unsigned char *b, int src, size_t size)
{
    for (size_t i = 0; i < size; i++) {
        if (b[i] != pattern(src, size, i)) {
            fprintf(stderr, "data mismatch from %d, size %zu, at byte %zu\n", src, size, i);
            exit(1);
        }
    }
}

/* Buffers of `size` bytes (+64 guard bytes), malloc'd or from the shared heap. */
static unsigned char *buf_get(size_t size, int heap)
{
    unsigned char *b = heap ? fmpl_alloc_mem(size + 64) : malloc(size + 64);
    return b;
}

static void buf_put(unsigned char *b, int heap)
{
    if (heap)
        CHECK_RC(fmpl_free_mem(b), FMPL_SUCCESS);
    else
        free(b);
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    static const size_t sizes[] = {0,  1,    7,    8,          9,           63,      64,
                                   65, 1000, 4096, 65536 + 13, 1048576 + 3, 4 << 20, 16 << 20};
    int nsizes = (int)(sizeof sizes / sizeof sizes[0]);
    for (int mode = 0; mode < 4; mode++) {
        int sheap = mode & 1, rheap = (mode >> 1) & 1;
        for (int k = 0; k < nsizes; k++) {
            size_t n = sizes[k];
            if (n >= (16u << 20) && (sheap || rheap) && size > 2)
                continue; /* keep the shared heap (64 MiB per rank) for the other tests */
            unsigned char *sb = buf_get(n, sheap), *rb = buf_get(n, rheap);
            CHECK(sb && rb);
            fill(sb, rank, n);
            memset(rb, 0xEE, n + 64);
            int mai = k % 5;
            CHECK_RC(fmpl_irecv(rb, n, left, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
            CHECK_RC(fmpl_send(sb, n, right, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
            fmpl_status st;
            CHECK_RC(fmpl_irecv_wait(left, mai, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
            CHECK(st.source == left && st.mai == mai && st.size == n && st.error == FMPL_SUCCESS);
            check_data(rb, left, n);
            for (int g = 0; g < 64; g++)
                CHECK(rb[n + g] == 0xEE);
            buf_put(sb, sheap);
            buf_put(rb, rheap);
        }
    }

    /* Blocking receive against a nonblocking send, reversed ring, small and large. */
    for (int k = 0; k < 2; k++) {
        size_t n = k ? (2u << 20) + 5 : 24;
        unsigned char *sb = malloc(n), *rb = malloc(n);
        CHECK(sb && rb);
        fill(sb, rank, n);
        CHECK_RC(fmpl_isend(sb, n, left, 7, FMPL_COMM_WORLD), FMPL_SUCCESS);
        fmpl_status st;
        if (size == 1) { /* to self: the receive must be posted before the send can match */
            CHECK_RC(fmpl_recv(rb, n, right, 7, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        } else {
            CHECK_RC(fmpl_recv(rb, n, right, 7, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        }
        CHECK_RC(fmpl_isend_wait(left, 7, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK(st.source == right && st.mai == 7 && st.size == n);
        check_data(rb, right, n);
        free(sb);
        free(rb);
    }

    /* Messages to self, heap and malloc'd. */
    for (int heap = 0; heap < 2; heap++) {
        size_t n = 100000;
        unsigned char *sb = buf_get(n, heap), *rb = buf_get(n, !heap);
        CHECK(sb && rb);
        fill(sb, rank, n);
        CHECK_RC(fmpl_irecv(rb, n, rank, 3, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(sb, n, rank, 3, FMPL_COMM_WORLD), FMPL_SUCCESS);
        fmpl_status st;
        CHECK_RC(fmpl_irecv_wait(rank, 3, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK(st.source == rank && st.mai == 3 && st.size == n);
        check_data(rb, rank, n);
        buf_put(sb, heap);
        buf_put(rb, !heap);
    }

    /* A message shorter than the receive buffer: status says how much; the rest of the
     * buffer is untouched. */
    {
        unsigned char sb[100], rb[300];
        fill(sb, rank, 100);
        memset(rb, 0x5A, sizeof rb);
        CHECK_RC(fmpl_irecv(rb, sizeof rb, left, 9, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(sb, 100, right, 9, FMPL_COMM_WORLD), FMPL_SUCCESS);
        fmpl_status st;
        CHECK_RC(fmpl_irecv_wait(left, 9, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK(st.source == left && st.mai == 9 && st.size == 100 && st.error == FMPL_SUCCESS);
        check_data(rb, left, 100);
        for (size_t i = 100; i < sizeof rb; i++)
            CHECK(rb[i] == 0x5A);
    }

    /* FMPL_TAG_ANY: the status tells which mai the sender used. Then the paper's rule:
     * with an ANY and a specific receive posted, a send on a mai no specific receive uses
     * can only take the ANY header; the specific one stays for its own mai. */
    {
        int a = 0, b = 0;
        CHECK_RC(fmpl_irecv(&a, sizeof a, left, FMPL_TAG_ANY, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(&b, sizeof b, left, 3, FMPL_COMM_WORLD), FMPL_SUCCESS);
        int va = 1000 + rank, vb = 2000 + rank;
        CHECK_RC(fmpl_send(&va, sizeof va, right, 17, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&vb, sizeof vb, right, 3, FMPL_COMM_WORLD), FMPL_SUCCESS);
        fmpl_status st;
        CHECK_RC(fmpl_irecv_wait(left, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK(st.mai == 17 && st.source == left && st.size == sizeof a && a == 1000 + left);
        CHECK_RC(fmpl_irecv_wait(left, 3, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK(st.mai == 3 && b == 2000 + left);
        /* Blocking TAG_ANY receive. */
        CHECK_RC(fmpl_isend(&va, sizeof va, right, 99, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv(&a, sizeof a, left, FMPL_TAG_ANY, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(right, 99, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK(st.mai == 99 && a == 1000 + left);
    }

    /* Many messages on one (pair, mai) in sequence: the k-th send meets the k-th receive. */
    for (int i = 0; i < 200; i++) {
        int out = rank * 100000 + i, in = -1;
        CHECK_RC(fmpl_irecv(&in, sizeof in, left, 0, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&out, sizeof out, right, 0, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 0, FMPL_COMM_WORLD, FMPL_STATUS_IGNORE), FMPL_SUCCESS);
        CHECK(in == left * 100000 + i);
    }

    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_p2p: ok (%d ranks)\n", size);
    return 0;
}
