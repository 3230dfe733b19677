/* fmpl_2d.c — the native 2-D transfers (fmpl_send_2d, fmpl_recv_2d, fmpl_isend_2d,
 * fmpl_irecv_2d), around a ring (send right, receive from the left; one rank: to itself):
 *   - sub-matrices of column-major matrices of doubles, odd shapes (1 x 1 .. 513 x 67,
 *     sender and receiver with different leading dimensions), small (the active-message
 *     path) and large (puts with iovec lists on both sides), malloc'd and shared-heap
 *     receive buffers: every element of the sub-matrix checked, every gap element and the
 *     bytes after the matrix untouched;
 *   - layouts of different shapes on the two sides (4 x 8 into 2 x 16 bytes, 2-D into
 *     contiguous and contiguous into 2-D);
 *   - truncation (a 2-D send longer than the 2-D receive: both get FMPL_ERR_TRUNCATE,
 *     nothing written past the receive's blocks);
 *   - isend_2d / irecv_2d posted ahead, and a 2-D send spooled in buffered mode
 *     (gathered into the spool, delivered into the receiver's layout);
 *   - argument errors: NULL layout, ld < row_bytes, a span that overflows. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

static int rank, size, left, right;

static double val(int src, size_t i, size_t j)
{
    return (double)src * 1e6 + (double)i * 1000.0 + (double)j + 0.25;
}

/* One sub-matrix transfer: m x n doubles from a matrix with leading dimension lds to one
 * with ldr (in elements), at offset (1, 2) of each matrix; rheap: receive buffer from
 * the shared heap; nb: irecv_2d posted first + isend_2d. */
static void submatrix(size_t m, size_t n, size_t lds, size_t ldr, int rheap, int nb, int mai)
{
    size_t scols = n + 3, rcols = n + 3;
    double *a = malloc(lds * scols * sizeof *a);
    size_t rbytes = (ldr * rcols + 8) * sizeof(double);
    double *b = rheap ? fmpl_alloc_mem(rbytes) : malloc(rbytes);
    CHECK(a && b);
    for (size_t j = 0; j < scols; j++)
        for (size_t i = 0; i < lds; i++)
            a[j * lds + i] = val(rank, i, j);
    for (size_t k = 0; k < ldr * rcols + 8; k++)
        b[k] = -1.0;
    fmpl_layout ls = {n, m * sizeof(double), lds * sizeof(double)};
    fmpl_layout lr = {n, m * sizeof(double), ldr * sizeof(double)};
    const double *sa = a + 2 * lds + 1; /* element (1, 2) */
    double *rb = b + 2 * ldr + 1;
    fmpl_status st;
    if (nb) {
        CHECK_RC(fmpl_irecv_2d(rb, &lr, left, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_2d(sa, &ls, right, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(right, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, mai, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
    } else {
        CHECK_RC(fmpl_irecv_2d(rb, &lr, left, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send_2d(sa, &ls, right, mai, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, mai, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
    }
    CHECK(st.source == left && st.mai == mai && st.size == m * n * sizeof(double));
    for (size_t j = 0; j < rcols; j++)
        for (size_t i = 0; i < ldr; i++) {
            int inside = j >= 2 && j < 2 + n && i >= 1 && i < 1 + m;
            double want = inside ? val(left, i, j) : -1.0; /* same offsets on both sides */
            if (b[j * ldr + i] != want) {
                fprintf(stderr,
                        "rank %d: %zu x %zu (lds %zu, ldr %zu, heap %d, nb %d): element (%zu, "
                        "%zu) is %g, not %g\n",
                        rank, m, n, lds, ldr, rheap, nb, i, j, b[j * ldr + i], want);
                exit(1);
            }
        }
    for (size_t k = ldr * rcols; k < ldr * rcols + 8; k++)
        CHECK(b[k] == -1.0);
    free(a);
    if (rheap)
        CHECK_RC(fmpl_free_mem(b), FMPL_SUCCESS);
    else
        free(b);
}

/* Bytes 0..31 as 4 blocks of 8 (ld 12) sent into 2 blocks of 16 (ld 20); 2-D into
 * contiguous; contiguous into 2-D. */
static void shapes(void)
{
    unsigned char src[64], dst[64];
    for (int i = 0; i < 64; i++)
        src[i] = (unsigned char)(rank * 50 + i);
    fmpl_layout s48 = {4, 8, 12}, r216 = {2, 16, 20};
    memset(dst, 0, sizeof dst);
    CHECK_RC(fmpl_irecv_2d(dst, &r216, left, 7, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_send_2d(src, &s48, right, 7, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 7, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    for (int k = 0; k < 32; k++) { /* stream byte k: source block k/8, byte k%8 */
        int at = (k / 16) * 20 + k % 16;
        CHECK(dst[at] == (unsigned char)(left * 50 + (k / 8) * 12 + k % 8));
    }
    CHECK(dst[16] == 0 && dst[17] == 0 && dst[36] == 0);

    memset(dst, 0, sizeof dst); /* 2-D into contiguous */
    CHECK_RC(fmpl_irecv(dst, 32, left, 8, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_send_2d(src, &s48, right, 8, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 8, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    for (int k = 0; k < 32; k++)
        CHECK(dst[k] == (unsigned char)(left * 50 + (k / 8) * 12 + k % 8));

    memset(dst, 0, sizeof dst); /* contiguous into 2-D */
    CHECK_RC(fmpl_irecv_2d(dst, &s48, left, 9, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_send(src, 32, right, 9, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 9, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    for (int k = 0; k < 32; k++)
        CHECK(dst[(k / 8) * 12 + k % 8] == (unsigned char)(left * 50 + k));
    CHECK(dst[8] == 0 && dst[11] == 0 && dst[44] == 0);
}

/* A 2-D send of 3 x 4000 doubles into a 2-D receive of 2 x 4000: truncated on both sides,
 * the receive's two blocks written, its gaps and what follows not. */
static void truncation(void)
{
    size_t m = 4000, ld = 4100;
    double *a = malloc(3 * ld * sizeof *a), *b = malloc(3 * ld * sizeof *b);
    CHECK(a && b);
    for (size_t k = 0; k < 3 * ld; k++) {
        a[k] = (double)(rank * 100000 + (int)k);
        b[k] = -2.0;
    }
    fmpl_layout ls = {3, m * sizeof(double), ld * sizeof(double)};
    fmpl_layout lr = {2, m * sizeof(double), ld * sizeof(double)};
    fmpl_status st;
    CHECK_RC(fmpl_irecv_2d(b, &lr, left, 10, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_send_2d(a, &ls, right, 10, FMPL_COMM_WORLD), FMPL_ERR_TRUNCATE);
    CHECK_RC(fmpl_irecv_wait(left, 10, FMPL_COMM_WORLD, &st), FMPL_ERR_TRUNCATE);
    CHECK(st.size == 2 * m * sizeof(double) && st.error == FMPL_ERR_TRUNCATE);
    for (size_t k = 0; k < 3 * ld; k++) {
        int inside = k % ld < m && k / ld < 2;
        CHECK(b[k] == (inside ? (double)(left * 100000 + (int)k) : -2.0));
    }
    free(a);
    free(b);
}

/* Buffered mode: the send goes into the spool before the receive exists. */
static void spooled(void)
{
    static char spool[1 << 16];
    CHECK_RC(fmpl_sendbuf_set(spool, sizeof spool, 0), FMPL_SUCCESS);
    size_t m = 100, n = 20, ld = 130;
    double *a = malloc(ld * n * sizeof *a), *b = malloc(ld * n * sizeof *b);
    CHECK(a && b);
    for (size_t k = 0; k < ld * n; k++) {
        a[k] = (double)(rank * 7 + (int)k);
        b[k] = -3.0;
    }
    fmpl_layout l = {n, m * sizeof(double), ld * sizeof(double)};
    CHECK_RC(fmpl_send_2d(a, &l, right, 11, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS); /* the sends are spooled now */
    fmpl_status st;
    CHECK_RC(fmpl_recv_2d(b, &l, left, 11, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
    CHECK(st.size == m * n * sizeof(double));
    for (size_t k = 0; k < ld * n; k++)
        CHECK(b[k] == (k % ld < m ? (double)(left * 7 + (int)k) : -3.0));
    CHECK_RC(fmpl_sendbuf_set(NULL, 0, FMPL_TIMEOUT_INFINITE), FMPL_SUCCESS);
    free(a);
    free(b);
}

static void errors(void)
{
    double x[16];
    fmpl_layout bad_ld = {2, 64, 8}, huge = {SIZE_MAX / 2, 8, 16}, empty = {0, 8, 8};
    CHECK_RC(fmpl_send_2d(x, NULL, right, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG);
    CHECK_RC(fmpl_recv_2d(x, NULL, left, 0, FMPL_COMM_WORLD, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_send_2d(x, &bad_ld, right, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG);
    CHECK_RC(fmpl_irecv_2d(x, &bad_ld, left, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG);
    CHECK_RC(fmpl_isend_2d(x, &huge, right, 0, FMPL_COMM_WORLD), FMPL_ERR_ARG);
    fmpl_layout ok = {2, 8, 16};
    CHECK_RC(fmpl_send_2d(NULL, &ok, right, 0, FMPL_COMM_WORLD), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_send_2d(x, &ok, size, 0, FMPL_COMM_WORLD), FMPL_ERR_RANK);
    /* an empty layout is an empty message */
    fmpl_status st;
    CHECK_RC(fmpl_irecv_2d(x, &empty, left, 12, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_send_2d(x, &empty, right, 12, FMPL_COMM_WORLD), FMPL_SUCCESS);
    CHECK_RC(fmpl_irecv_wait(left, 12, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
    CHECK(st.size == 0);
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    right = (rank + 1) % size;
    left = (rank + size - 1) % size;
    static const size_t shape[][4] = {
        /* m, n, lds, ldr */
        {1, 1, 5, 7},        {2, 1, 3, 9},          {1, 2, 4, 4},     {3, 5, 3, 8},
        {7, 3, 11, 9},       {64, 1, 64, 65},       {33, 17, 40, 35}, {129, 65, 129, 200},
        {513, 67, 600, 514}, {1000, 40, 1000, 1000}};
    int mai = 0;
    for (size_t k = 0; k < sizeof shape / sizeof shape[0]; k++)
        for (int heap = 0; heap < 2; heap++)
            for (int nb = 0; nb < 2; nb++)
                submatrix(shape[k][0], shape[k][1], shape[k][2] + 3, shape[k][3] + 3, heap, nb,
                          mai++ % 6);
    shapes();
    truncation();
    spooled();
    errors();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_2d: ok (%d ranks)\n", size);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    return 0;
}
