/* mpi_win_pscw.c — post/start/complete/wait (src/mpi/win_sync.c, "PSCW"): MPI_Win_start
 * returns without waiting for the posts, the first operation to a target waits for its
 * post, and each origin's completed epochs are counted apart.
 *
 *   1. late posts: rank 0 sleeps, then stores a fresh value into its window and exposes
 *      it to every other rank (to itself alone at 1 rank); each origin gets that value
 *      (so it waited for the post before its get) and puts its own, which rank 0 finds
 *      after MPI_Win_wait. Three rounds.
 *   2. an origin ahead: rank 1 runs EPOCHS empty epochs to rank 0 at once, while every
 *      other origin sleeps in each epoch before its put. Rank 0's wait of each epoch must
 *      find every slow origin's put of that epoch: rank 1's early epochs must not stand
 *      in for theirs.
 *   3. groups wider than the accesses: every rank exposes to and starts on all others but
 *      puts only to its right neighbour, EPOCHS epochs back to back, each checked.
 * On windows from MPI_Win_allocate, MPI_Win_create and MPI_Win_allocate_shared (whose
 * start waits at once), and over udp (tests/mpi_win.cmake). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "test_util.h"

#define EPOCHS 40

static int rank, size;

enum { W_ALLOCATE, W_CREATE, W_SHARED, W_KINDS };
static const char *kind_name[W_KINDS] = {"allocate", "create", "allocate_shared"};

/* A window of `slots` int64 per rank, zeroed, of the given kind (*mem: what to free). */
static MPI_Win make_win(int kind, int slots, int64_t **buf, void **mem)
{
    MPI_Win win;
    MPI_Aint bytes = (MPI_Aint)slots * (MPI_Aint)sizeof(int64_t);
    *mem = NULL;
    if (kind == W_ALLOCATE) {
        CHECK_RC(MPI_Win_allocate(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, buf, &win),
                 MPI_SUCCESS);
    } else if (kind == W_CREATE) {
        *mem = calloc((size_t)slots, sizeof(int64_t));
        CHECK(*mem);
        *buf = *mem;
        CHECK_RC(MPI_Win_create(*buf, bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, &win),
                 MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Win_allocate_shared(bytes, sizeof(int64_t), MPI_INFO_NULL, MPI_COMM_WORLD, buf,
                                         &win),
                 MPI_SUCCESS);
    }
    for (int i = 0; i < slots; i++)
        (*buf)[i] = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    return win;
}

/* The group of world ranks [lo, hi) without `skip` (-1: none). */
static MPI_Group range_group(int lo, int hi, int skip)
{
    MPI_Group world, g;
    int ranks[64], n = 0;
    CHECK(size <= 64);
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int r = lo; r < hi; r++)
        if (r != skip)
            ranks[n++] = r;
    CHECK_RC(MPI_Group_incl(world, n, ranks, &g), MPI_SUCCESS);
    MPI_Group_free(&world);
    return g;
}

static void late_posts(int kind)
{
    int64_t *buf;
    void *mem;
    MPI_Win win = make_win(kind, size + 1, &buf, &mem);
    /* the origins: every other rank, or rank 0 itself when alone */
    MPI_Group origins = size > 1 ? range_group(1, size, -1) : range_group(0, 1, -1);
    MPI_Group target = range_group(0, 1, -1);
    for (int round = 0; round < 3; round++) {
        if (rank == 0) {
            usleep(20000); /* an origin that did not wait would read the last round's value */
            buf[0] = 1000 + round;
            CHECK_RC(MPI_Win_post(origins, 0, win), MPI_SUCCESS);
        }
        if (rank != 0 || size == 1) {
            int64_t got = -1, mine = rank * 100 + round;
            CHECK_RC(MPI_Win_start(target, 0, win), MPI_SUCCESS);
            CHECK_RC(MPI_Get(&got, 1, MPI_INT64_T, 0, 0, 1, MPI_INT64_T, win), MPI_SUCCESS);
            CHECK_RC(MPI_Put(&mine, 1, MPI_INT64_T, 0, 1 + rank, 1, MPI_INT64_T, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_complete(win), MPI_SUCCESS);
            if (got != 1000 + round) {
                fprintf(stderr, "rank %d (%s): round %d got %lld before the post, not %d\n", rank,
                        kind_name[kind], round, (long long)got, 1000 + round);
                CHECK(0);
            }
        }
        if (rank == 0) {
            CHECK_RC(MPI_Win_wait(win), MPI_SUCCESS);
            for (int o = size > 1 ? 1 : 0; o < size; o++)
                CHECK(buf[1 + o] == o * 100 + round);
        }
    }
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    free(mem);
}

static void origin_ahead(int kind)
{
    int64_t *buf;
    void *mem;
    MPI_Win win = make_win(kind, size + 1, &buf, &mem);
    MPI_Group origins = range_group(1, size, -1), target = range_group(0, 1, -1);
    for (int e = 0; e < EPOCHS; e++) {
        if (rank == 0) {
            CHECK_RC(MPI_Win_post(origins, 0, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_wait(win), MPI_SUCCESS);
            for (int o = 2; o < size; o++)
                if (buf[1 + o] != o * 1000 + e) {
                    fprintf(stderr, "rank 0 (%s): epoch %d ended with %lld from rank %d, not %d\n",
                            kind_name[kind], e, (long long)buf[1 + o], o, o * 1000 + e);
                    CHECK(0);
                }
        } else if (rank == 1) {
            CHECK_RC(MPI_Win_start(target, 0, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_complete(win), MPI_SUCCESS);
        } else {
            int64_t v = rank * 1000 + e;
            CHECK_RC(MPI_Win_start(target, 0, win), MPI_SUCCESS);
            usleep(2000);
            CHECK_RC(MPI_Put(&v, 1, MPI_INT64_T, 0, 1 + rank, 1, MPI_INT64_T, win), MPI_SUCCESS);
            CHECK_RC(MPI_Win_complete(win), MPI_SUCCESS);
        }
    }
    MPI_Group_free(&origins);
    MPI_Group_free(&target);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    free(mem);
}

static void wide_groups(int kind)
{
    int64_t *buf;
    void *mem;
    MPI_Win win = make_win(kind, 2, &buf, &mem);
    MPI_Group others = range_group(0, size, rank);
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int e = 0; e < EPOCHS; e++) {
        int64_t v = rank * 7 + e;
        CHECK_RC(MPI_Win_post(others, 0, win), MPI_SUCCESS);
        CHECK_RC(MPI_Win_start(others, 0, win), MPI_SUCCESS);
        CHECK_RC(MPI_Put(&v, 1, MPI_INT64_T, right, 1, 1, MPI_INT64_T, win), MPI_SUCCESS);
        CHECK_RC(MPI_Win_complete(win), MPI_SUCCESS);
        CHECK_RC(MPI_Win_wait(win), MPI_SUCCESS);
        CHECK(buf[1] == left * 7 + e);
    }
    MPI_Group_free(&others);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    free(mem);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int udp = getenv("FMPL_TRANSPORT") && getenv("FMPL_TRANSPORT")[0] == 'u';
    for (int kind = 0; kind < W_KINDS; kind++) {
        if (kind == W_SHARED && udp)
            continue; /* (a shared window needs one host's memory) */
        late_posts(kind);
        if (size > 1) {
            origin_ahead(kind);
            wide_groups(kind);
        }
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_win_pscw: ok\n");
    MPI_Finalize();
    return 0;
}
