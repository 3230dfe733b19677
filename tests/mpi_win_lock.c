/* mpi_win_lock.c — MPI_Win_lock and MPI_Win_unlock around their inlined paths
 * (src/mpi/win_sync.c: one empty epoch at a time is bookkeeping, found through the window
 * looked up last; everything else takes the full paths):
 *   1. two lock epochs open at once (the second takes the full path), closed in either
 *      order, empty or with a put and a get checked; while any is open MPI_Win_fence is
 *      MPI_ERR_RMA_SYNC, and once both are closed it succeeds;
 *   2. bad ranks: MPI_ERR_RANK for -2 and the size, MPI_PROC_NULL a no-op, an unlock of an
 *      unlocked rank MPI_ERR_RMA_SYNC, a lock of a locked one too;
 *   3. two windows by turns, each epoch's put landing in its own window;
 *   4. a freed window's handle, just used: MPI_ERR_WIN, and a new window works.
 * Every rank locks its right neighbours; each window holds (rank, slot) values. */
#include <stdio.h>

#include "mpi.h"
#include "test_util.h"

static int rank, size;

static int cls(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static MPI_Win new_win(int **buf)
{
    MPI_Win win;
    CHECK_RC(
        MPI_Win_allocate(4 * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, buf, &win),
        MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        (*buf)[i] = 1000 * rank + i;
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

/* A put of v into `slot` of target and a get of slot 0 (checked), flushed. */
static void put_get(MPI_Win win, int target, int slot, int v)
{
    int got = -1;
    CHECK_RC(MPI_Put(&v, 1, MPI_INT, target, slot, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, target, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_flush(target, win), MPI_SUCCESS);
    CHECK(got == 1000 * target);
}

/* (from 2 ranks: at 2, b is this rank itself, which the full path always takes) */
static void two_epochs(MPI_Win win, int *buf)
{
    int a = (rank + 1) % size, b = (rank + 2) % size;
    for (int ops = 0; ops < 2; ops++)
        for (int order = 0; order < 2; order++) {
            CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, win), MPI_SUCCESS);
            CHECK(cls(MPI_Win_fence(0, win)) == MPI_ERR_RMA_SYNC);
            CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, b, 0, win), MPI_SUCCESS);
            if (ops) { /* (each slot has one writer) */
                put_get(win, a, 3, 7 + order);
                put_get(win, b, 1, 17 + order);
            }
            CHECK_RC(MPI_Win_unlock(order ? b : a, win), MPI_SUCCESS);
            CHECK(cls(MPI_Win_fence(0, win)) == MPI_ERR_RMA_SYNC);
            CHECK(cls(MPI_Win_unlock(order ? b : a, win)) == MPI_ERR_RMA_SYNC);
            CHECK_RC(MPI_Win_unlock(order ? a : b, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
            if (ops)
                CHECK(buf[3] == 7 + order && buf[1] == 17 + order);
            MPI_Barrier(MPI_COMM_WORLD); /* (before the next round's puts) */
        }
}

static void bad_ranks(MPI_Win win)
{
    int a = (rank + 1) % size;
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, -2, 0, win)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, size, 0, win)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Win_unlock(-2, win)) == MPI_ERR_RANK);
    CHECK(cls(MPI_Win_unlock(size, win)) == MPI_ERR_RANK);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, MPI_PROC_NULL, 0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(MPI_PROC_NULL, win), MPI_SUCCESS); /* (no epoch open) */
    CHECK(cls(MPI_Win_unlock(a, win)) == MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a, 0, win), MPI_SUCCESS);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_unlock(-2, win)) == MPI_ERR_RANK);
    CHECK_RC(MPI_Win_unlock(a, win), MPI_SUCCESS);
    CHECK(cls(MPI_Win_unlock(a, win)) == MPI_ERR_RMA_SYNC);
}

static void two_windows(MPI_Win w1, int *b1, MPI_Win w2, int *b2)
{
    int a = (rank + 1) % size;
    for (int i = 0; i < 100; i++) {
        MPI_Win w = i % 2 ? w2 : w1;
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a, 0, w), MPI_SUCCESS);
        CHECK_RC(MPI_Win_unlock(a, w), MPI_SUCCESS); /* empty: the inlined pair */
        CHECK_RC(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, a, 0, w), MPI_SUCCESS);
        int v = i % 2 ? 20000 + i : 10000 + i;
        CHECK_RC(MPI_Put(&v, 1, MPI_INT, a, 2, 1, MPI_INT, w), MPI_SUCCESS);
        CHECK_RC(MPI_Win_unlock(a, w), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(b1[2] == 10098 && b2[2] == 20099);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int *b1, *b2;
    MPI_Win w1 = new_win(&b1), w2 = new_win(&b2);
    if (size > 1)
        two_epochs(w1, b1);
    bad_ranks(w1);
    two_windows(w1, b1, w2, b2);
    MPI_Barrier(MPI_COMM_WORLD);
    /* the window the lock looked up last, freed: its handle is no window any more */
    int a = (rank + 1) % size;
    MPI_Win stale = w2;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, w2), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(a, w2), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&w2), MPI_SUCCESS);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, stale)) == MPI_ERR_WIN);
    CHECK(cls(MPI_Win_unlock(a, stale)) == MPI_ERR_WIN);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, a, 0, w1), MPI_SUCCESS);
    put_get(w1, a, 3, 9);
    CHECK_RC(MPI_Win_unlock(a, w1), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&w1), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_win_lock: ok\n");
    MPI_Finalize();
    return 0;
}
