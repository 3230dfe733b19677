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
 *   - small blocks on either side (the sender's gather, the receiver's staging block:
 *     src/fmpl/p2p.c, GATHER and STAGING) against large ones, contiguous buffers and
 *     small blocks of other lengths, odd lengths around the thresholds, byte by byte:
 *     every stream byte, every gap byte and the guard bytes after the receive's span,
 *     with the send or the receive posted first, malloc'd and shared-heap buffers;
 *     truncation and shorter messages into staged receives, a message of an active
 *     message's size and an empty one; several staged receives outstanding at once;
 *     staging blocks going back to the heap (a run of large staged receives, then a
 *     large fmpl_alloc_mem);
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

/* ---- byte-level transfers between any two layouts ---- */

/* Stream byte k of rank src's messages. */
static unsigned char pat(int src, size_t k)
{
    return (unsigned char)(src * 29 + k * 7 + k / 253);
}

#define FILL 0xee /* what the bytes of a receive area hold before the message */
#define GUARD 64  /* bytes checked after a receive's span */

/* Bytes a layout spans (NULL: a contiguous buffer of n bytes). */
static size_t span_of(const fmpl_layout *l, size_t n)
{
    return !l ? n : l->rows && l->row_bytes ? (l->rows - 1) * l->ld + l->row_bytes : 0;
}

/* Stream position of byte o of a buffer laid out as l (NULL: contiguous), or SIZE_MAX for
 * a gap byte or one past the span. */
static size_t stream_pos(const fmpl_layout *l, size_t n, size_t o)
{
    if (!l)
        return o < n ? o : SIZE_MAX;
    size_t i = o / l->ld, c = o % l->ld;
    if (!l->row_bytes || i >= l->rows || c >= l->row_bytes)
        return SIZE_MAX;
    return i * l->row_bytes + c;
}

/* One message around the ring from layout ls into layout lr (NULL: the contiguous calls
 * with sn / rn bytes). order 0: the receive is posted first (irecv), then a blocking
 * send; 1: the send starts first (isend: its header is not there yet), then a blocking
 * receive; 2: both nonblocking, the receive posted first. rheap: receive buffer from the
 * shared heap. Checks both results (FMPL_ERR_TRUNCATE when the message is longer than the
 * receive), status->size, every byte of the receive's span and GUARD bytes after it. */
static void transfer(const fmpl_layout *ls, size_t sn, const fmpl_layout *lr, size_t rn, int order,
                     int rheap, int mai)
{
    size_t smsg = ls ? ls->rows * ls->row_bytes : sn, rsize = lr ? lr->rows * lr->row_bytes : rn;
    size_t sspan = span_of(ls, sn), rspan = span_of(lr, rn), n = smsg < rsize ? smsg : rsize;
    int want = smsg > rsize ? FMPL_ERR_TRUNCATE : FMPL_SUCCESS;
    unsigned char *a = malloc(sspan + 1);
    unsigned char *b = rheap ? fmpl_alloc_mem(rspan + GUARD) : malloc(rspan + GUARD);
    CHECK(a && b);
    memset(a, 0x11, sspan + 1);
    for (size_t o = 0; o < sspan; o++) {
        size_t k = stream_pos(ls, sn, o);
        if (k != SIZE_MAX)
            a[o] = pat(rank, k);
    }
    memset(b, FILL, rspan + GUARD);
    fmpl_status st;
    if (order != 1)
        CHECK_RC(lr ? fmpl_irecv_2d(b, lr, left, mai, FMPL_COMM_WORLD)
                    : fmpl_irecv(b, rn, left, mai, FMPL_COMM_WORLD),
                 FMPL_SUCCESS);
    if (order == 1) {
        CHECK_RC(ls ? fmpl_isend_2d(a, ls, right, mai, FMPL_COMM_WORLD)
                    : fmpl_isend(a, sn, right, mai, FMPL_COMM_WORLD),
                 FMPL_SUCCESS);
        CHECK_RC(lr ? fmpl_recv_2d(b, lr, left, mai, FMPL_COMM_WORLD, &st)
                    : fmpl_recv(b, rn, left, mai, FMPL_COMM_WORLD, &st),
                 want);
        CHECK_RC(fmpl_isend_wait(right, mai, FMPL_COMM_WORLD), want);
    } else if (order == 2) {
        CHECK_RC(ls ? fmpl_isend_2d(a, ls, right, mai, FMPL_COMM_WORLD)
                    : fmpl_isend(a, sn, right, mai, FMPL_COMM_WORLD),
                 FMPL_SUCCESS);
        CHECK_RC(fmpl_isend_wait(right, mai, FMPL_COMM_WORLD), want);
        CHECK_RC(fmpl_irecv_wait(left, mai, FMPL_COMM_WORLD, &st), want);
    } else {
        CHECK_RC(ls ? fmpl_send_2d(a, ls, right, mai, FMPL_COMM_WORLD)
                    : fmpl_send(a, sn, right, mai, FMPL_COMM_WORLD),
                 want);
        CHECK_RC(fmpl_irecv_wait(left, mai, FMPL_COMM_WORLD, &st), want);
    }
    CHECK(st.source == left && st.mai == mai && st.size == n && st.error == want);
    for (size_t o = 0; o < rspan + GUARD; o++) {
        size_t k = stream_pos(lr, rn, o);
        unsigned char w = k < n ? pat(left, k) : FILL;
        if (b[o] != w) {
            fprintf(stderr,
                    "rank %d: %zu x %zu (ld %zu) into %zu x %zu (ld %zu), order %d, heap %d: "
                    "byte %zu (stream %zu of %zu) is %#x, not %#x\n",
                    rank, ls ? ls->rows : 1, ls ? ls->row_bytes : sn, ls ? ls->ld : sn,
                    lr ? lr->rows : 1, lr ? lr->row_bytes : rn, lr ? lr->ld : rn, order, rheap, o,
                    k, n, b[o], w);
            exit(1);
        }
    }
    free(a);
    if (rheap)
        CHECK_RC(fmpl_free_mem(b), FMPL_SUCCESS);
    else
        free(b);
}

/* Small blocks against large ones, both ways, odd lengths, contiguous buffers, truncation,
 * shorter and tiny messages into staged receives: each in every order, malloc'd and
 * shared-heap receive buffers. */
static void mixed(void)
{
    static const fmpl_layout L[][2] = {
        /* sender, receiver; rows 0 and ld 0: contiguous, row_bytes bytes */
        {{4096, 8, 24}, {64, 512, 520}},    /* small rows into large ones */
        {{64, 512, 520}, {4096, 8, 24}},    /* large rows into small ones */
        {{700, 3, 5}, {21, 100, 101}},      /* odd lengths, rows not aligned to each other */
        {{21, 100, 101}, {700, 3, 5}},      /* ... and back */
        {{333, 7, 13}, {111, 21, 22}},      /* small on both sides, odd */
        {{1000, 1, 2}, {500, 2, 3}},        /* single bytes */
        {{129, 127, 128}, {127, 129, 130}}, /* around 128 bytes */
        {{100, 128, 200}, {200, 64, 71}},
        {{64, 255, 256}, {68, 240, 300}}, /* around the threshold (256 bytes) */
        {{63, 256, 260}, {126, 128, 130}},
        {{32, 257, 300}, {33, 256, 256}},
        {{0, 4000, 0}, {500, 8, 16}},   /* contiguous into small rows */
        {{500, 8, 16}, {0, 4000, 0}},   /* small rows into contiguous */
        {{10, 1, 3}, {0, 10, 0}},       /* an active message's size, into contiguous */
        {{300, 8, 12}, {200, 8, 12}},   /* truncated: staged receive */
        {{300, 8, 12}, {10, 200, 208}}, /* truncated: small rows into large */
        {{5, 600, 601}, {1000, 2, 5}},  /* truncated: large rows into staged */
        {{0, 3000, 0}, {100, 24, 40}},  /* truncated: contiguous into staged */
        {{100, 8, 16}, {400, 8, 16}},   /* shorter message into a staged receive */
        {{2, 4, 9}, {50, 8, 10}},       /* 8 bytes (an active message) into a staged one */
        {{0, 8, 8}, {50, 8, 10}},       /* empty message into a staged receive */
    };
    int mai = 30;
    for (size_t i = 0; i < sizeof L / sizeof L[0]; i++)
        for (int order = 0; order < 3; order++)
            for (int heap = 0; heap < 2; heap++) {
                const fmpl_layout *ls = L[i][0].rows || L[i][0].ld ? &L[i][0] : NULL;
                const fmpl_layout *lr = L[i][1].rows || L[i][1].ld ? &L[i][1] : NULL;
                transfer(ls, L[i][0].row_bytes, lr, L[i][1].row_bytes, order, heap,
                         mai + (int)(i % 8));
            }
}

/* Eight staged receives (small rows) outstanding on eight mais, the sends started in
 * reverse order, the receives waited for in another. */
static void outstanding(void)
{
    enum { K = 8, ROWS = 600, ROW = 16, LD = 40 };
    unsigned char *a = malloc((size_t)K * ROWS * LD), *b = malloc((size_t)K * ROWS * LD);
    CHECK(a && b);
    fmpl_layout l = {ROWS, ROW, LD};
    for (size_t k = 0; k < (size_t)K * ROWS * LD; k++)
        a[k] = (unsigned char)(rank + k * 3);
    memset(b, FILL, (size_t)K * ROWS * LD);
    for (int j = 0; j < K; j++)
        CHECK_RC(fmpl_irecv_2d(b + (size_t)j * ROWS * LD, &l, left, 40 + j, FMPL_COMM_WORLD),
                 FMPL_SUCCESS);
    for (int j = K - 1; j >= 0; j--)
        CHECK_RC(fmpl_isend_2d(a + (size_t)j * ROWS * LD, &l, right, 40 + j, FMPL_COMM_WORLD),
                 FMPL_SUCCESS);
    for (int j = 0; j < K; j++) {
        int w = (j * 5) % K; /* 0 5 2 7 4 1 6 3 */
        fmpl_status st;
        CHECK_RC(fmpl_irecv_wait(left, 40 + w, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK(st.size == (size_t)ROWS * ROW && st.mai == 40 + w);
    }
    for (int j = 0; j < K; j++)
        CHECK_RC(fmpl_isend_wait(right, 40 + j, FMPL_COMM_WORLD), FMPL_SUCCESS);
    for (size_t k = 0; k < (size_t)K * ROWS * LD; k++)
        CHECK(b[k] == (k % LD < ROW ? (unsigned char)(left + k * 3) : FILL));
    free(a);
    free(b);
}

/* Staging blocks go back to the heap: forty staged receives of 4 MiB (8-byte rows; they
 * would fill a 64 MiB heap many times over if kept), then an 8 MiB fmpl_alloc_mem. */
static void no_leak(void)
{
    size_t rows = (size_t)1 << 19, ld = 16;
    unsigned char *a = malloc(rows * ld), *b = malloc(rows * ld);
    CHECK(a && b);
    memset(a, rank, rows * ld);
    fmpl_layout l = {rows, 8, ld};
    for (int i = 0; i < 40; i++) {
        CHECK_RC(fmpl_irecv_2d(b, &l, left, 50, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send_2d(a, &l, right, 50, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 50, FMPL_COMM_WORLD, NULL), FMPL_SUCCESS);
    }
    CHECK(b[0] == (unsigned char)left && b[rows * ld - ld] == (unsigned char)left);
    void *big = fmpl_alloc_mem((size_t)8 << 20);
    CHECK(big);
    CHECK_RC(fmpl_free_mem(big), FMPL_SUCCESS);
    free(a);
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
    mixed();
    outstanding();
    no_leak();
    spooled();
    errors();
    CHECK_RC(fmpl_barrier(FMPL_COMM_WORLD), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_2d: ok (%d ranks)\n", size);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    return 0;
}
