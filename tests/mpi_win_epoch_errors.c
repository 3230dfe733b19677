/* mpi_win_epoch_errors.c — one-sided synchronization errors and compare-and-swap types,
 * as MPICH's errors/rma folder checks them:
 *   - a second MPI_Win_lock on a locked target, or MPI_Win_lock_all inside a lock epoch
 *     (or the other way round), is MPI_ERR_RMA_SYNC (win_sync_lock_pt);
 *   - a fence followed by a lock epoch opened no fence epoch: after the unlock, an RMA call
 *     is MPI_ERR_RMA_SYNC until the next fence (win_sync_lock_fence); the same after a
 *     lock_all epoch and after a PSCW access epoch;
 *   - MPI_Compare_and_swap takes character types (MPI_CHAR) as it takes integers, and
 *     rejects floating point with MPI_ERR_TYPE (cas_type_check).
 * Data moved in the legal epochs is checked. Every rank's window holds 100 + rank. */
#include <stdio.h>

#include "mpi.h"
#include "test_util.h"

static int cls(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int right = (rank + 1) % size;
    int buf = 100 + rank, got = -1;
    MPI_Win win;
    CHECK_RC(MPI_Win_create(&buf, sizeof buf, sizeof buf, MPI_INFO_NULL, MPI_COMM_WORLD, &win),
             MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);

    /* nested lock epochs */
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, win), MPI_SUCCESS);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, right, 0, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_lock_all(0, win)) == MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(right, win), MPI_SUCCESS); /* the first epoch is intact */
    CHECK(got == 100 + right);
    CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_SHARED, right, 0, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_lock_all(0, win)) == MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);

    /* fence, then a lock epoch: no fence epoch afterwards */
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    got = -1;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, right, MPI_MODE_NOCHECK, win), MPI_SUCCESS);
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(right, win), MPI_SUCCESS);
    CHECK(got == 100 + right);
    CHECK(cls(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Put(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    /* a fence epoch with traffic in it still works */
    got = -1;
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    CHECK(got == 100 + right);
    /* the same with lock_all */
    CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    CHECK(cls(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    /* and with a PSCW access epoch (every rank exposes to its left neighbour) */
    MPI_Group world, g_right, g_left;
    int left = (rank + size - 1) % size;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    MPI_Group_incl(world, 1, &right, &g_right);
    MPI_Group_incl(world, 1, &left, &g_left);
    CHECK_RC(MPI_Win_post(g_left, 0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_start(g_right, 0, win), MPI_SUCCESS);
    got = -1;
    CHECK_RC(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_complete(win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_wait(win), MPI_SUCCESS);
    CHECK(got == 100 + right);
    CHECK(cls(MPI_Get(&got, 1, MPI_INT, right, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    MPI_Group_free(&g_right);
    MPI_Group_free(&g_left);
    MPI_Group_free(&world);
    CHECK_RC(MPI_Win_fence(MPI_MODE_NOSUCCEED, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);

    /* compare-and-swap on characters: every rank swaps rank 0's 'a' for its letter in
     * turn; exactly one succeeds, and the others see its letter */
    char cbuf = 'a', mine = (char)('b' + rank % 20), cmp = 'a', old = 0;
    CHECK_RC(MPI_Win_create(&cbuf, 1, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Compare_and_swap(&mine, &cmp, &old, MPI_CHAR, 0, 0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    int won = old == 'a', winners = 0;
    CHECK_RC(MPI_Allreduce(&won, &winners, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(winners == 1);
    /* every rank fetches the final letter: the winner's, which the losers saw */
    char final = 0;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Get(&final, 1, MPI_CHAR, 0, 0, 1, MPI_CHAR, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    CHECK(final >= 'b' && final < 'b' + 20);
    CHECK(won ? final == mine : old == final);
    float f = 1.0f, fc = 1.0f, fo;
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    CHECK(cls(MPI_Compare_and_swap(&f, &fc, &fo, MPI_FLOAT, 0, 0, win)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Compare_and_swap(&f, &fc, &fo, MPI_DOUBLE, 0, 0, win)) == MPI_ERR_TYPE);
    CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);

    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_win_epoch_errors: OK\n");
    return 0;
}
