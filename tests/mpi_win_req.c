/* mpi_win_req.c — request-based RMA that completes in progress (src/mpi/win_req.c): every
 * rank issues many large MPI_Rput / MPI_Rget (contiguous and strided, some of 4 MiB) to
 * every rank at once, in one lock_all epoch, and waits for them in another order than it
 * issued them (reverse, MPI_Waitany, MPI_Testsome, MPI_Request_free + flush); contents
 * are checked on the targets and in the get buffers, and an origin buffer overwritten
 * right after its Rput completed must not show at the target. A 4 MiB Rput / Rget to a
 * target this rank reaches through the vnic must still be incomplete after its call
 * returns (it completes in progress), and MPI_Win_flush_all must complete pending
 * requests. Two flavours: MPI_Win_create over malloc'd memory (the vnic, CMA on shm) and
 * MPI_Win_allocate (mapped on shm, the vnic over udp). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size;

#define REGION (640 << 10)   /* bytes of each target's window per origin */
#define PIECES 5             /* Rputs per origin and target */
#define BIG (4 << 20)        /* the lone large request checked for asynchrony */
#define STRIDED_N (40 << 10) /* doubles moved by the strided requests */

static const int64_t piece_off[PIECES + 1] = {0, 8, 4096 + 3, 200000, 420001, REGION};

static unsigned char pattern(int origin, int target, int64_t i, int round)
{
    return (unsigned char)(origin * 37 + target * 11 + i * 7 + (i >> 9) + round * 101);
}

/* Waits for n requests in an order that is not the issue order. */
static void wait_scrambled(MPI_Request *req, int n, int how)
{
    if (how == 0) {
        for (int i = n - 1; i >= 0; i--)
            CHECK_RC(MPI_Wait(&req[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else if (how == 1) {
        for (int k = 0; k < n; k++) {
            int idx = -1;
            CHECK_RC(MPI_Waitany(n, req, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(idx >= 0 && idx < n && req[idx] == MPI_REQUEST_NULL);
        }
    } else {
        int left = n;
        int *idx = malloc(sizeof *idx * (size_t)n);
        while (left > 0) {
            int out = 0;
            CHECK_RC(MPI_Testsome(n, req, &out, idx, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            CHECK(out != MPI_UNDEFINED);
            left -= out;
        }
        free(idx);
    }
    for (int i = 0; i < n; i++)
        CHECK(req[i] == MPI_REQUEST_NULL);
}

/* A request just issued: 1 when complete (MPI_Request_get_status progresses once). */
static int done_now(MPI_Request r)
{
    int flag = -1;
    CHECK_RC(MPI_Request_get_status(r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    return flag;
}

static void run(int allocate, int udp)
{
    MPI_Aint bytes = (MPI_Aint)REGION * size + BIG + (MPI_Aint)STRIDED_N * 8;
    unsigned char *base = NULL;
    MPI_Win win;
    if (allocate) {
        CHECK_RC(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                 MPI_SUCCESS);
    } else {
        base = malloc((size_t)bytes);
        CHECK(base);
        CHECK_RC(MPI_Win_create(base, bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    }
    memset(base, 0xee, (size_t)bytes);
    MPI_Aint big_at = (MPI_Aint)REGION * size, strided_at = big_at + BIG;
    unsigned char *src = malloc((size_t)REGION * size), *back = malloc((size_t)REGION * size);
    unsigned char *big = malloc(BIG), *bigback = malloc(BIG);
    double *strided = malloc(sizeof(double) * STRIDED_N * 2),
           *sback = malloc(sizeof(double) * STRIDED_N);
    CHECK(src && back && big && bigback && strided && sback);
    for (int round = 0; round < 2; round++) {
        for (int t = 0; t < size; t++)
            for (int64_t i = 0; i < REGION; i++)
                src[(int64_t)t * REGION + i] = pattern(rank, t, i, round);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
        /* Rputs: every piece of every target's region at once. */
        int n = size * PIECES;
        MPI_Request *req = malloc(sizeof *req * (size_t)(n + 2));
        for (int k = 0; k < n; k++) {
            int t = (rank + 1 + k / PIECES) % size, p = k % PIECES;
            int64_t lo = piece_off[p], len = piece_off[p + 1] - lo;
            CHECK_RC(MPI_Rput(src + (int64_t)t * REGION + lo, (int)len, MPI_BYTE, t,
                              (MPI_Aint)rank * REGION + lo, (int)len, MPI_BYTE, win, &req[k]),
                     MPI_SUCCESS);
        }
        wait_scrambled(req, n, round);
        /* Local completion: the origin buffer may change now; the targets must not see it. */
        memset(src, 0x5a, (size_t)REGION * size);
        CHECK_RC(MPI_Win_flush_all(win), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int o = 0; o < size; o++)
            for (int64_t i = 0; i < REGION; i++)
                if (base[(int64_t)o * REGION + i] != pattern(o, rank, i, round)) {
                    fprintf(stderr, "rank %d: byte %lld from %d is %d, expected %d\n", rank,
                            (long long)i, o, base[(int64_t)o * REGION + i],
                            pattern(o, rank, i, round));
                    CHECK(0);
                }
        MPI_Barrier(MPI_COMM_WORLD);
        /* Rgets of what this rank wrote, from every target, waited for in another order. */
        memset(back, 0, (size_t)REGION * size);
        for (int k = 0; k < n; k++) {
            int t = (rank + size - 1 - k / PIECES + size) % size, p = PIECES - 1 - k % PIECES;
            int64_t lo = piece_off[p], len = piece_off[p + 1] - lo;
            CHECK_RC(MPI_Rget(back + (int64_t)t * REGION + lo, (int)len, MPI_BYTE, t,
                              (MPI_Aint)rank * REGION + lo, (int)len, MPI_BYTE, win, &req[k]),
                     MPI_SUCCESS);
        }
        wait_scrambled(req, n, 2 - round);
        for (int t = 0; t < size; t++)
            for (int64_t i = 0; i < REGION; i++)
                CHECK(back[(int64_t)t * REGION + i] == pattern(rank, t, i, round));
        /* One 4 MiB Rput to the next rank, then a strided Rput (vector origin, type freed
         * at once) to the previous; both completed by MPI_Win_flush_all. */
        int next = (rank + 1) % size, prev = (rank + size - 1) % size;
        for (int64_t i = 0; i < BIG; i++)
            big[i] = (unsigned char)(i * 13 + rank + round);
        for (int64_t i = 0; i < 2 * STRIDED_N; i++)
            strided[i] = (double)(i % 2 ? -1 : i / 2 + rank * 1000000 + round);
        MPI_Datatype vec;
        MPI_Type_vector(STRIDED_N, 1, 2, MPI_DOUBLE, &vec);
        MPI_Type_commit(&vec);
        MPI_Barrier(MPI_COMM_WORLD); /* everyone's earlier gets of big are done */
        CHECK_RC(MPI_Rput(big, BIG, MPI_BYTE, next, big_at, BIG, MPI_BYTE, win, &req[0]),
                 MPI_SUCCESS);
        int async_expected = size > 1 && (!allocate || udp);
        if (async_expected)
            CHECK(!done_now(req[0])); /* 16 steps; one progress call posts one */
        CHECK_RC(MPI_Rput(strided, 1, vec, prev, strided_at, STRIDED_N, MPI_DOUBLE, win, &req[1]),
                 MPI_SUCCESS);
        MPI_Type_free(&vec);
        CHECK_RC(MPI_Win_flush_all(win), MPI_SUCCESS);
        int flag = 0;
        CHECK_RC(MPI_Test(&req[0], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(flag && req[0] == MPI_REQUEST_NULL);
        CHECK_RC(MPI_Test(&req[1], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(flag && req[1] == MPI_REQUEST_NULL);
        MPI_Barrier(MPI_COMM_WORLD);
        for (int64_t i = 0; i < BIG; i++)
            CHECK(base[big_at + i] == (unsigned char)(i * 13 + prev + round));
        const double *sd = (const double *)(const void *)(base + strided_at);
        for (int64_t i = 0; i < STRIDED_N; i++) {
            double v;
            memcpy(&v, sd + i, sizeof v);
            CHECK(v == (double)(i + next * 1000000 + round));
        }
        MPI_Barrier(MPI_COMM_WORLD);
        /* A 4 MiB Rget from the previous rank, and a strided Rget (vector target type) of
         * what this rank put there, the first one freed with MPI_Request_free: the flush
         * completes it. */
        memset(bigback, 0, BIG);
        CHECK_RC(MPI_Rget(bigback, BIG, MPI_BYTE, prev, big_at, BIG, MPI_BYTE, win, &req[0]),
                 MPI_SUCCESS);
        if (async_expected)
            CHECK(!done_now(req[0]));
        MPI_Datatype tvec;
        MPI_Type_vector(STRIDED_N / 2, 1, 2, MPI_DOUBLE, &tvec);
        MPI_Type_commit(&tvec);
        CHECK_RC(
            MPI_Rget(sback, STRIDED_N / 2, MPI_DOUBLE, prev, strided_at, 1, tvec, win, &req[1]),
            MPI_SUCCESS);
        MPI_Type_free(&tvec);
        CHECK_RC(MPI_Request_free(&req[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&req[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int64_t i = 0; i < STRIDED_N / 2; i++)
            CHECK(sback[i] == (double)(2 * i + rank * 1000000 + round));
        CHECK_RC(MPI_Win_flush_all(win), MPI_SUCCESS);
        /* prev's big region holds what prev's prev put there */
        for (int64_t i = 0; i < BIG; i++)
            CHECK(bigback[i] == (unsigned char)(i * 13 + (prev + size - 1) % size + round));
        CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
        free(req);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    /* A request-based operation outside an epoch fails with MPI_ERR_RMA_SYNC and gives
     * no request. */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Request r = MPI_REQUEST_NULL;
    int rc = MPI_Rget(bigback, 8, MPI_BYTE, 0, 0, 8, MPI_BYTE, win, &r);
    int c = -1;
    MPI_Error_class(rc, &c);
    CHECK(c == MPI_ERR_RMA_SYNC && r == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    if (!allocate)
        free(base);
    free(src);
    free(back);
    free(big);
    free(bigback);
    free(strided);
    free(sback);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *tr = getenv("FMPL_TRANSPORT");
    int udp = tr && !strcmp(tr, "udp");
    run(0, udp);
    run(1, udp);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_win_req: ok\n");
    return 0;
}
