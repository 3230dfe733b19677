/* mpi_coll_pq.c — large persistent and nonblocking bcasts on the mailboxes
 * (coll_impl.h "Mailbox (group) schedules"; src/mpi/coll_sched.c), contents checked bit
 * for bit (integer sums, exact):
 *   - on a communicator asserting mpi_assert_strict_persistent_collective_ordering:
 *     persistent bcasts above a lane's room (a pipelined one of several FMPL_COLL_SEG
 *     segments, one between FMPL_COLL_SMALL and FMPL_COLL_SEG), lane-sized bcast and
 *     allreduce, a barrier, each restarted many times as queued group runs, several
 *     outstanding at once, interleaved (in the same order on every rank, as asserted)
 *     with large and small MPI_Ibcast, blocking bcasts and allreduces, roots changing
 *     every start, completed in an order of each rank's own (Waitall, Wait backwards,
 *     Test polling);
 *   - on a communicator without the assertion: large and lane-sized persistent bcasts
 *     started in a different order on every rank (MPI-4.0 allows it; MPICH's
 *     coll/p_order), with a blocking bcast before the starts on some ranks and after
 *     them on the others: they must not share the mailbox queue;
 *   - a 1 MiB MPI_Ibcast completed by MPI_Test loops alone (background progress);
 *   - the assertion "false" (default behaviour), and error paths: MPI_Start of an active
 *     request, an invalid root at *_init and at MPI_Ibcast, MPI_Start of a queued
 *     persistent request whose communicator was freed; an active queued request freed.
 * Run also with FMPL_COLL_LANES=0 (every persistent call queued) and a small
 * FMPL_COLL_SEG (many pipeline segments). Argument: [iterations]. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size;

static int64_t val(int salt, int who, int i)
{
    return (int64_t)salt * 1000003 + (int64_t)who * 7919 + i;
}

/* A bcast buffer of n int64: the root's filled for salt, the others' poisoned. */
static void bc_fill(int64_t *b, int n, int root, int salt)
{
    for (int i = 0; i < n; i++)
        b[i] = rank == root ? val(salt, root, i) : -1;
}

static void bc_check(const int64_t *b, int n, int root, int salt, const char *what)
{
    for (int i = 0; i < n; i++)
        if (b[i] != val(salt, root, i)) {
            fprintf(stderr, "rank %d: %s (n %d, root %d, salt %d): [%d] = %lld, want %lld\n", rank,
                    what, n, root, salt, i, (long long)b[i], (long long)val(salt, root, i));
            CHECK(0);
        }
}

/* Completes n requests in an order of this rank's own (salt varies it). */
static void complete(MPI_Request *r, int n, int salt)
{
    switch ((rank + salt) % 3) {
    case 0: CHECK_RC(MPI_Waitall(n, r, MPI_STATUSES_IGNORE), MPI_SUCCESS); break;
    case 1:
        for (int k = n - 1; k >= 0; k--)
            CHECK_RC(MPI_Wait(&r[k], MPI_STATUS_IGNORE), MPI_SUCCESS);
        break;
    default:
        for (int left = n; left > 0;) {
            left = 0;
            for (int k = 0; k < n; k++) {
                int flag = 0;
                CHECK_RC(MPI_Test(&r[k], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                left += !flag;
            }
        }
    }
}

enum { BIG = 40000, MID = 1500, LANE = 100, NBBIG = 30000, BLK = 2500, RED = 64 };

/* Phase 1: the asserting communicator. Persistent requests: three bcasts of BIG with
 * different roots (a request's root is fixed at init) taking turns, bcast MID, bcast
 * LANE, allreduce RED, barrier; the MPI_Ibcast roots change every iteration. */
static void strict_phase(MPI_Comm comm, int iters)
{
    enum { NBIGR = 3 };
    int64_t *big[NBIGR], *mid = malloc(MID * sizeof(int64_t)),
                         *lane = malloc(LANE * sizeof(int64_t));
    int64_t *nbbig = malloc(NBBIG * sizeof(int64_t)), *blk = malloc(BLK * sizeof(int64_t));
    int64_t small[3], rin[RED], rout[RED];
    CHECK(mid && lane && nbbig && blk);
    MPI_Request pbig[NBIGR], pmid, plane, pred, pbar;
    for (int k = 0; k < NBIGR; k++) {
        big[k] = malloc(BIG * sizeof(int64_t));
        CHECK(big[k] != NULL);
        CHECK_RC(MPI_Bcast_init(big[k], BIG, MPI_INT64_T, (k * 2 + 1) % size, comm, MPI_INFO_NULL,
                                &pbig[k]),
                 MPI_SUCCESS);
    }
    int rmid = size - 1, rlane = size / 2;
    CHECK_RC(MPI_Bcast_init(mid, MID, MPI_INT64_T, rmid, comm, MPI_INFO_NULL, &pmid), MPI_SUCCESS);
    CHECK_RC(MPI_Bcast_init(lane, LANE, MPI_INT64_T, rlane, comm, MPI_INFO_NULL, &plane),
             MPI_SUCCESS);
    CHECK_RC(MPI_Allreduce_init(rin, rout, RED, MPI_INT64_T, MPI_SUM, comm, MPI_INFO_NULL, &pred),
             MPI_SUCCESS);
    CHECK_RC(MPI_Barrier_init(comm, MPI_INFO_NULL, &pbar), MPI_SUCCESS);
    for (int it = 0; it < iters; it++) {
        int salt = 1000 + it * 10, kb = it % NBIGR, rb = (kb * 2 + 1) % size;
        int rs = it % size, rn = (it + 1) % size, rk = (it * 3) % size;
        bc_fill(big[kb], BIG, rb, salt);
        bc_fill(mid, MID, rmid, salt + 1);
        bc_fill(lane, LANE, rlane, salt + 2);
        bc_fill(small, 3, rs, salt + 3);
        bc_fill(nbbig, NBBIG, rn, salt + 4);
        for (int i = 0; i < RED; i++)
            rin[i] = val(salt + 5, rank, i);
        MPI_Request r[8];
        int n = 0;
        /* the same call order on every rank (asserted), mixing the forms */
        CHECK_RC(MPI_Start(&pbig[kb]), MPI_SUCCESS);
        r[n++] = pbig[kb];
        CHECK_RC(MPI_Ibcast(small, 3, MPI_INT64_T, rs, comm, &r[n++]), MPI_SUCCESS);
        CHECK_RC(MPI_Start(&pmid), MPI_SUCCESS);
        r[n++] = pmid;
        if (it % 2 == 0) { /* a blocking bcast with all of that in flight */
            bc_fill(blk, BLK, rk, salt + 6);
            CHECK_RC(MPI_Bcast(blk, BLK, MPI_INT64_T, rk, comm), MPI_SUCCESS);
            bc_check(blk, BLK, rk, salt + 6, "blocking bcast");
        }
        CHECK_RC(MPI_Ibcast(nbbig, NBBIG, MPI_INT64_T, rn, comm, &r[n++]), MPI_SUCCESS);
        CHECK_RC(MPI_Start(&plane), MPI_SUCCESS);
        r[n++] = plane;
        CHECK_RC(MPI_Start(&pred), MPI_SUCCESS);
        r[n++] = pred;
        CHECK_RC(MPI_Start(&pbar), MPI_SUCCESS);
        r[n++] = pbar;
        if (it % 3 == 1) { /* a blocking allreduce (all-call cells) behind them */
            int64_t x = rank + it, s = 0;
            CHECK_RC(MPI_Allreduce(&x, &s, 1, MPI_INT64_T, MPI_SUM, comm), MPI_SUCCESS);
            CHECK(s == (int64_t)size * (size - 1) / 2 + (int64_t)size * it);
        }
        complete(r, n, it);
        bc_check(big[kb], BIG, rb, salt, "persistent big bcast");
        bc_check(mid, MID, rmid, salt + 1, "persistent mid bcast");
        bc_check(lane, LANE, rlane, salt + 2, "persistent lane bcast");
        bc_check(small, 3, rs, salt + 3, "small ibcast");
        bc_check(nbbig, NBBIG, rn, salt + 4, "big ibcast");
        for (int i = 0; i < RED; i++) {
            int64_t want = 0;
            for (int q = 0; q < size; q++)
                want += val(salt + 5, q, i);
            CHECK(rout[i] == want);
        }
    }
    /* error path: a second MPI_Start of an active (queued) request */
    bc_fill(big[0], BIG, 1 % size, 77);
    CHECK_RC(MPI_Start(&pbig[0]), MPI_SUCCESS);
    CHECK_CLASS(MPI_Start(&pbig[0]), MPI_ERR_REQUEST);
    CHECK_RC(MPI_Wait(&pbig[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
    bc_check(big[0], BIG, 1 % size, 77, "restart after error");
    /* an active queued request freed: it completes in the background, and a blocking
     * call behind it (which waits for the queue here) sees its data in place */
    int r1 = 3 % size;
    bc_fill(big[1], BIG, r1, 88);
    CHECK_RC(MPI_Start(&pbig[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&pbig[1]), MPI_SUCCESS);
    CHECK(pbig[1] == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    bc_check(big[1], BIG, r1, 88, "freed active request");
    for (int k = 0; k < NBIGR; k++) {
        if (pbig[k] != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Request_free(&pbig[k]), MPI_SUCCESS);
        free(big[k]);
    }
    CHECK_RC(MPI_Request_free(&pmid), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&plane), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&pred), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&pbar), MPI_SUCCESS);
    free(mid);
    free(lane);
    free(nbbig);
    free(blk);
}

/* Phase 2: no assertion (or "false"): each rank starts the requests in its own order. */
static void unordered_phase(MPI_Comm comm, int iters)
{
    enum { NP = 4 };
    static const int len[NP] = {BIG, MID, LANE, BIG / 3};
    int64_t *b[NP], *blk = malloc(BLK * sizeof(int64_t));
    MPI_Request p[NP];
    CHECK(blk != NULL);
    for (int k = 0; k < NP; k++) {
        b[k] = malloc((size_t)len[k] * sizeof(int64_t));
        CHECK(b[k] != NULL);
        CHECK_RC(
            MPI_Bcast_init(b[k], len[k], MPI_INT64_T, (k + 1) % size, comm, MPI_INFO_NULL, &p[k]),
            MPI_SUCCESS);
    }
    for (int it = 0; it < iters; it++) {
        int salt = 5000 + it * 10, rk = it % size;
        for (int k = 0; k < NP; k++)
            bc_fill(b[k], len[k], (k + 1) % size, salt + k);
        bc_fill(blk, BLK, rk, salt + 9);
        if (rank % 2) /* odd ranks: the blocking bcast before the starts */
            CHECK_RC(MPI_Bcast(blk, BLK, MPI_INT64_T, rk, comm), MPI_SUCCESS);
        for (int j = 0; j < NP; j++) {
            int k = (rank % 2 ? NP - 1 - j : j + rank + it) % NP;
            CHECK_RC(MPI_Start(&p[k]), MPI_SUCCESS);
        }
        if (rank % 2 == 0)
            CHECK_RC(MPI_Bcast(blk, BLK, MPI_INT64_T, rk, comm), MPI_SUCCESS);
        MPI_Request r[NP];
        for (int k = 0; k < NP; k++)
            r[k] = p[(k + rank) % NP];
        complete(r, NP, it);
        for (int k = 0; k < NP; k++)
            bc_check(b[k], len[k], (k + 1) % size, salt + k, "unordered persistent bcast");
        bc_check(blk, BLK, rk, salt + 9, "blocking bcast beside unordered starts");
    }
    for (int k = 0; k < NP; k++) {
        CHECK_RC(MPI_Request_free(&p[k]), MPI_SUCCESS);
        free(b[k]);
    }
    free(blk);
}

/* Phase 3: a 1 MiB MPI_Ibcast completed by MPI_Test loops alone, every root. */
static void test_loop_phase(MPI_Comm comm)
{
    enum { N = (1 << 20) / 8 };
    int64_t *b = malloc(N * sizeof(int64_t));
    CHECK(b != NULL);
    for (int root = 0; root < size; root++) {
        bc_fill(b, N, root, 9000 + root);
        MPI_Request r;
        CHECK_RC(MPI_Ibcast(b, N, MPI_INT64_T, root, comm, &r), MPI_SUCCESS);
        long polls = 0;
        for (int flag = 0; !flag; polls++) {
            CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(polls < 2000000000L);
        }
        CHECK(r == MPI_REQUEST_NULL);
        bc_check(b, N, root, 9000 + root, "1 MiB ibcast by MPI_Test");
    }
    free(b);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int iters = argc > 1 ? atoi(argv[1]) : 40;
    MPI_Info info;
    MPI_Comm strict, plain, nostrict;
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "true"),
             MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &strict), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &plain), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &nostrict), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "mpi_assert_strict_persistent_collective_ordering", "false"),
             MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_info(nostrict, info), MPI_SUCCESS);
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(strict, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);

    strict_phase(strict, iters);
    unordered_phase(plain, iters / 2);
    unordered_phase(nostrict, iters / 4 + 1);
    test_loop_phase(strict);
    test_loop_phase(plain);

    /* error paths: an invalid root at init and at MPI_Ibcast (nothing queued) */
    int64_t x = 1;
    MPI_Request r = MPI_REQUEST_NULL;
    CHECK_CLASS(MPI_Bcast_init(&x, 1, MPI_INT64_T, size, strict, MPI_INFO_NULL, &r), MPI_ERR_ROOT);
    CHECK_CLASS(MPI_Ibcast(&x, 1, MPI_INT64_T, -1, strict, &r), MPI_ERR_ROOT);
    /* the communicator still works after the refused calls */
    x = rank == 0 ? 4242 : 0;
    CHECK_RC(MPI_Bcast(&x, 1, MPI_INT64_T, 0, strict), MPI_SUCCESS);
    CHECK(x == 4242);

    /* a queued persistent bcast (too big for a lane) whose communicator was freed: its
     * mailbox group is retired, MPI_Start refuses it (MPI_ERR_COMM); freeing it works */
    if (size > 1) {
        int64_t *b = malloc(BIG * sizeof(int64_t));
        CHECK(b != NULL);
        MPI_Comm tmp;
        CHECK_RC(MPI_Comm_dup(strict, &tmp), MPI_SUCCESS); /* (hints are copied) */
        CHECK_RC(MPI_Bcast_init(b, BIG, MPI_INT64_T, 0, tmp, MPI_INFO_NULL, &r), MPI_SUCCESS);
        bc_fill(b, BIG, 0, 31);
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        bc_check(b, BIG, 0, 31, "queued bcast on a duplicate");
        CHECK_RC(MPI_Comm_free(&tmp), MPI_SUCCESS);
        CHECK_CLASS(MPI_Start(&r), MPI_ERR_COMM);
        CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
        free(b);
    }

    CHECK_RC(MPI_Comm_free(&strict), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&plain), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&nostrict), MPI_SUCCESS);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_coll_pq: ok (%d ranks)\n", size);
    return 0;
}
