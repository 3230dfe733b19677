/* mpi_win_order.c — store -> load order after MPI_Win_flush on mapped windows
 * (src/mpi/win_sync.c, "Completion"): a flush after direct puts leaves the full fence
 * owed, and the rank's next get, fetching atomic or accumulate must pay it first.
 *
 * The Dekker pattern, in a lock_all epoch on an MPI_Win_allocate window: ranks pair up
 * (2k, 2k + 1; an odd rank out only serves as a home). In round i both ranks of a pair meet
 * (each puts i into a meeting word of the other and polls its own), then each puts i into
 * its word, flushes (MPI_Win_flush or MPI_Win_flush_all by turns) and reads its
 * partner's word (MPI_Get, MPI_Fetch_and_op with MPI_NO_OP or MPI_Get_accumulate with
 * MPI_NO_OP by turns) and flushes. The flush completed each put at its target before the
 * read, so the two reads cannot both return an older round: the test fails if they do.
 * The words live in the partner's window (read back from one's own) and, from 3 ranks on,
 * both on a third rank. At the end every word holds the last round, checked by each home.
 */
#include <mpi.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

#define ROUNDS 3000
#define SLOTS 16 /* int64 words per window: [0, 8) Dekker words, [8, 16) meeting words */

static int rank, size;

/* Where a rank's words are: it writes (wrank, wslot), its partner writes (rrank, rslot). */
typedef struct place {
    int wrank, wslot, rrank, rslot;
} place_t;

static int64_t read_word(MPI_Win win, int how, int target, int slot)
{
    int64_t v = -1;
    if (how == 0) {
        CHECK_RC(MPI_Get(&v, 1, MPI_INT64_T, target, slot, 1, MPI_INT64_T, win), MPI_SUCCESS);
    } else if (how == 1) {
        CHECK_RC(MPI_Fetch_and_op(NULL, &v, MPI_INT64_T, target, slot, MPI_NO_OP, win),
                 MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Get_accumulate(NULL, 0, MPI_INT64_T, &v, 1, MPI_INT64_T, target, slot, 1,
                                    MPI_INT64_T, MPI_NO_OP, win),
                 MPI_SUCCESS);
    }
    CHECK_RC(MPI_Win_flush(target, win), MPI_SUCCESS);
    return v;
}

/* Both ranks of the pair in round i: put i into the partner's meeting word, poll one's
 * own (this rank's meeting word at slot 8 + side in its own window). */
static void meet(MPI_Win win, int partner, int side, int64_t i)
{
    CHECK_RC(MPI_Put(&i, 1, MPI_INT64_T, partner, 8 + (1 - side), 1, MPI_INT64_T, win),
             MPI_SUCCESS);
    CHECK_RC(MPI_Win_flush(partner, win), MPI_SUCCESS);
    unsigned spins = 0;
    while (read_word(win, 1, rank, 8 + side) < i)
        if (++spins % 64 == 0)
            sched_yield();
}

static void dekker(MPI_Win win, int partner, int side, place_t pl)
{
    int64_t *seen = malloc(sizeof *seen * (ROUNDS + 1));
    for (int64_t i = 1; i <= ROUNDS; i++) {
        meet(win, partner, side, i);
        CHECK_RC(MPI_Put(&i, 1, MPI_INT64_T, pl.wrank, pl.wslot, 1, MPI_INT64_T, win), MPI_SUCCESS);
        if ((i / 3) % 2)
            CHECK_RC(MPI_Win_flush_all(win), MPI_SUCCESS);
        else
            CHECK_RC(MPI_Win_flush(pl.wrank, win), MPI_SUCCESS);
        int64_t v = read_word(win, (int)(i % 3), pl.rrank, pl.rslot);
        CHECK(v >= i - 1 && v <= i);
        seen[i] = v;
    }
    /* The partner's record: in no round may both have read an older value. */
    int64_t *theirs = malloc(sizeof *theirs * (ROUNDS + 1));
    CHECK_RC(MPI_Sendrecv(seen, ROUNDS + 1, MPI_INT64_T, partner, 0, theirs, ROUNDS + 1,
                          MPI_INT64_T, partner, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    for (int64_t i = 1; i <= ROUNDS; i++) {
        if (seen[i] < i && theirs[i] < i) {
            fprintf(stderr, "rank %d: round %lld: both ranks read the older value\n", rank,
                    (long long)i);
            exit(1);
        }
    }
    free(seen);
    free(theirs);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int64_t *base;
    MPI_Win win;
    CHECK_RC(MPI_Win_allocate(SLOTS * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
             MPI_SUCCESS);
    int paired = rank < size - size % 2, side = rank % 2, partner = rank ^ 1;
    int pair = rank / 2, npairs = size / 2;
    for (int home = 0; home < (size >= 3 ? 2 : 1); home++) {
        memset(base, 0, SLOTS * 8);
        MPI_Barrier(MPI_COMM_WORLD);
        CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
        place_t pl;
        if (home == 0) { /* each word in the window of the rank that reads it */
            pl = (place_t){partner, 0, rank, 0};
        } else { /* both on the rank after the pair: pair p's words at 2p, 2p + 1 */
            int c = (2 * pair + 2) % size;
            pl = (place_t){c, 2 * pair + side, c, 2 * pair + 1 - side};
        }
        if (paired)
            dekker(win, partner, side, pl);
        CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
        /* Contents: every word written here holds the last round. */
        CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win), MPI_SUCCESS);
        for (int s = 0; s < SLOTS; s++) {
            int64_t want = 0;
            if (home == 0 && paired && s == 0)
                want = ROUNDS;
            if (home == 1 && s < 2 * npairs && (2 * (s / 2) + 2) % size == rank)
                want = ROUNDS;
            if (paired && s == 8 + side)
                want = ROUNDS;
            CHECK(base[s] == want);
        }
        CHECK_RC(MPI_Win_unlock(rank, win), MPI_SUCCESS);
        MPI_Barrier(MPI_COMM_WORLD);
    }
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_win_order: %d ranks, %d rounds per placement: OK\n", size, ROUNDS);
    MPI_Finalize();
    return 0;
}
