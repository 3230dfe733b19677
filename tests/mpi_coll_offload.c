/* mpi_coll_offload.c — nonblocking and persistent bcast and allreduce finish on the other
 * ranks while one rank is busy outside MPI after its start (the offload board, coll.h
 * "offloaded runs"), with every byte checked.
 *
 * For each size (inline: 8 B, 8 KiB; over CMA: 256 KiB, 1 MiB + 8 B, odd so the last
 * chunk is short), each form (MPI_Ibcast, MPI_Bcast_init, MPI_Iallreduce with and without
 * MPI_IN_PLACE, MPI_Allreduce_init; the root is rank 0) and each busy rank k in turn: every rank
 * starts, rank k sleeps DELAY ms, the others wait and time their wait (a barrier before each start,
 * so that the busy rank's previous sleep does not delay its start). Without the board
 * (FMPL_COLL_OFFLOAD=0, or argument "plain" where the run cannot offload: FMPL_SHM_CMA=0 above the
 * inline room) only the contents are checked; else every other rank's wait must end before half the
 * delay. Results are checked on every rank, including the busy one, and the bcast root's
 * buffer is checked unchanged. Error path: a persistent bcast whose size differs at one
 * rank (inline and over CMA, larger and smaller than the root's, on a duplicate of
 * MPI_COMM_WORLD, whose board entries are all free) fails there (MPI_ERR_COUNT or
 * MPI_ERR_TRUNCATE) at every start and nowhere else, and the others' data is right.
 * Reuse (reuse_case): a persistent bcast and allreduce made, started once and freed
 * REUSE_ROUNDS times on one communicator, far more than its 8 persistent board entries, so
 * the later calls run on entries earlier ones freed (coll_offload.c "Persistent entries"):
 * busy rank k = round % size sleeps REUSE_DELAY_MS after its starts and the others' waits
 * must end before half of it in every round (on the board: the late rounds too); sizes cycle
 * through inline and CMA ones; the bcast root is k in even rounds, and k + 1 in odd ones,
 * where it frees its request as soon as its wait returns, while k has yet to read its data;
 * the ranks free the two requests in different orders, and every third rank frees a round's
 * requests only after the next round's inits. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mpi.h"
#include "test_util.h"

#define DELAY_MS 200
#define REUSE_ROUNDS 40
#define REUSE_DELAY_MS 100

static int rank, size, timed, plain;

/* 1 when a call of n bytes runs on the offload board: not with FMPL_COLL_OFFLOAD=0, and
 * above the 8 KiB inline room the board needs CMA ("plain" runs have none). */
static int on_board(size_t n)
{
    const char *off = getenv("FMPL_COLL_OFFLOAD");
    return size > 1 && !(off && !strcmp(off, "0")) && !(plain && n > 8192);
}

static void sleep_ms(int ms)
{
    struct timespec t = {ms / 1000, (long)(ms % 1000) * 1000000L};
    while (nanosleep(&t, &t) != 0) {
    }
}

static double val(int salt, int who, size_t i)
{
    return (double)salt * 1e6 + (double)who * 1000.0 + (double)(i % 997);
}

/* Waits for r; rank k first sleeps. Checks the others' wait is short. */
static void finish(MPI_Request *r, int k, const char *what, size_t n)
{
    if (rank == k)
        sleep_ms(DELAY_MS);
    double t0 = MPI_Wtime();
    CHECK_RC(MPI_Wait(r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    double waited = (MPI_Wtime() - t0) * 1e3;
    if (timed && rank != k && waited > DELAY_MS / 2) {
        fprintf(stderr, "rank %d: %s of %zu B waited %.1f ms for busy rank %d\n", rank, what, n,
                waited, k);
        CHECK(0);
    }
}

/* The root is rank 0: busy in turn like every rank. pb: the persistent bcast of n doubles
 * at buf, made once per size (as programs do), or NULL for MPI_Ibcast. */
static void bcast_case(double *buf, size_t n, int k, MPI_Request *pb, int salt)
{
    for (int start = 0; start < (pb ? 2 : 1); start++) {
        for (size_t i = 0; i < n; i++)
            buf[i] = rank == 0 ? val(salt + start, 0, i) : -1.0;
        MPI_Request r;
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS); /* all start together */
        if (pb)
            CHECK_RC(MPI_Start(pb), MPI_SUCCESS);
        else
            CHECK_RC(MPI_Ibcast(buf, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        finish(pb ? pb : &r, k, pb ? "persistent bcast" : "ibcast", n * 8);
        for (size_t i = 0; i < n; i++)
            CHECK(buf[i] == val(salt + start, 0, i));
    }
}

/* form 0: Iallreduce, 1: Iallreduce in place, 2: the persistent pa (two starts). */
static void allreduce_case(double *in, double *out, size_t n, int k, int form, MPI_Request *pa,
                           int salt)
{
    for (int start = 0; start < (form == 2 ? 2 : 1); start++) {
        for (size_t i = 0; i < n; i++) {
            in[i] = val(salt + start, rank, i);
            out[i] = form == 1 ? in[i] : -1.0;
        }
        MPI_Request r;
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        if (form == 2)
            CHECK_RC(MPI_Start(pa), MPI_SUCCESS);
        else
            CHECK_RC(MPI_Iallreduce(form == 1 ? MPI_IN_PLACE : in, out, (int)n, MPI_DOUBLE, MPI_SUM,
                                    MPI_COMM_WORLD, &r),
                     MPI_SUCCESS);
        finish(form == 2 ? pa : &r, k, form == 2 ? "persistent allreduce" : "iallreduce", n * 8);
        for (size_t i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < size; q++)
                want += val(salt + start, q, i);
            CHECK(out[i] == want);
            if (form != 1)
                CHECK(in[i] == val(salt + start, rank, i));
        }
    }
}

/* A persistent bcast on comm of n doubles, n + d at the last rank: it fails there at every
 * start, the others succeed with the root's data, and comm still works. */
static void mismatch_case(MPI_Comm comm, int n, int d)
{
    int board = on_board((size_t)n * 8);
    int odd = rank == size - 1, mine = odd ? n + d : n;
    double *buf = calloc((size_t)(n + (d > 0 ? d : 0)), sizeof *buf);
    CHECK(buf);
    MPI_Request r;
    CHECK_RC(MPI_Bcast_init(buf, mine, MPI_DOUBLE, 0, comm, MPI_INFO_NULL, &r), MPI_SUCCESS);
    for (int start = 0; start < 3; start++) {
        for (int i = 0; i < mine; i++)
            buf[i] = rank == 0 ? val(start, 0, (size_t)i) : -1.0;
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        int rc = MPI_Wait(&r, MPI_STATUS_IGNORE), cls = -1;
        MPI_Error_class(rc, &cls);
        if (odd) {
            CHECK(cls == MPI_ERR_COUNT || cls == MPI_ERR_TRUNCATE);
            continue;
        }
        if (!board && (cls == MPI_ERR_COUNT || cls == MPI_ERR_TRUNCATE))
            continue; /* the mailboxes pass a failure down the tree */
        CHECK(rc == MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            CHECK(buf[i] == val(start, 0, (size_t)i));
    }
    CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    int one = 1, sum = 0;
    CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
    CHECK(sum == size);
    free(buf);
}

/* Waits for r (not MPI_REQUEST_NULL) on a rank other than busy rank k; checks the wait is
 * short when timed. */
static void reuse_wait(MPI_Request *r, int k, int t, int timed, const char *what, int n)
{
    double t0 = MPI_Wtime();
    CHECK_RC(MPI_Wait(r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    double waited = (MPI_Wtime() - t0) * 1e3;
    if (timed && rank != k && waited > REUSE_DELAY_MS / 2) {
        fprintf(stderr,
                "rank %d: round %d: persistent %s of %d doubles waited %.1f ms for busy "
                "rank %d\n",
                rank, t, what, n, waited, k);
        CHECK(0);
    }
}

/* The requests of a round, in this rank's order (r[0] the bcast, r[1] the allreduce). */
static void reuse_free(MPI_Request *r)
{
    for (int i = 0; i < 2; i++) {
        MPI_Request *q = &r[rank % 2 ? 1 - i : i];
        if (*q != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Request_free(q), MPI_SUCCESS);
    }
}

/* Rounds of a persistent bcast (a) and allreduce (b into b + n, or in place) made, run once
 * and freed on MPI_COMM_WORLD; see the banner. */
static void reuse_case(double *a, double *b)
{
    static const int counts[] = {1, 64, 4097, 1024}; /* 8 B, 512 B, 32 KiB + 8, 8 KiB */
    int lazy = size > 2 && rank % 3 == 2;
    MPI_Request kept[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    for (int t = 0; t < REUSE_ROUNDS; t++) {
        int n = counts[t % 4], k = t % size, root = t % 2 ? (k + 1) % size : k, salt = 1000 + t;
        int in_place = t % 3 == 0, timed = on_board((size_t)n * 8);
        double *in = b, *out = in_place ? b : b + n;
        for (int i = 0; i < n; i++) {
            a[i] = rank == root ? val(salt, root, (size_t)i) : -1.0;
            in[i] = val(salt, rank, (size_t)i);
            if (!in_place)
                out[i] = -1.0;
        }
        MPI_Request r[2];
        CHECK_RC(MPI_Bcast_init(a, n, MPI_DOUBLE, root, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]),
                 MPI_SUCCESS);
        CHECK_RC(MPI_Allreduce_init(in_place ? MPI_IN_PLACE : in, out, n, MPI_DOUBLE, MPI_SUM,
                                    MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]),
                 MPI_SUCCESS);
        if (lazy) /* the last round's, after this round's inits */
            reuse_free(kept);
        CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS); /* all start together */
        CHECK_RC(MPI_Start(&r[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Start(&r[1]), MPI_SUCCESS);
        if (rank == k) {
            if (size > 1)
                sleep_ms(REUSE_DELAY_MS);
            CHECK_RC(MPI_Wait(&r[0], MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&r[1], MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else {
            reuse_wait(&r[0], k, t, timed, "bcast", n);
            if (rank == root) /* (k has not read it yet) */
                CHECK_RC(MPI_Request_free(&r[0]), MPI_SUCCESS);
            reuse_wait(&r[1], k, t, timed, "allreduce", n);
        }
        for (int i = 0; i < n; i++) {
            double want = 0;
            for (int q = 0; q < size; q++)
                want += val(salt, q, (size_t)i);
            CHECK(a[i] == val(salt, root, (size_t)i));
            CHECK(out[i] == want);
            if (!in_place)
                CHECK(in[i] == val(salt, rank, (size_t)i));
        }
        if (lazy) {
            kept[0] = r[0];
            kept[1] = r[1];
        } else {
            reuse_free(r);
        }
    }
    reuse_free(kept);
}

static void mismatch_cases(void)
{
    if (size < 2)
        return;
    MPI_Comm comm;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    mismatch_case(comm, 32, 32);        /* inline, larger at the last rank */
    mismatch_case(comm, 64, -32);       /* inline, smaller */
    mismatch_case(comm, 65536, 8192);   /* over CMA (512 KiB), larger */
    mismatch_case(comm, 65536, -16384); /* over CMA, smaller */
    CHECK_RC(MPI_Comm_free(&comm), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    plain = argc > 1 && !strcmp(argv[1], "plain");
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    static const size_t sizes[] = {1, 1024, 32768, 131073};
    size_t nmax = sizes[3];
    double *a = malloc(nmax * sizeof *a), *b = malloc(nmax * sizeof *b);
    CHECK(a && b);
    int salt = 1;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t n = sizes[si];
        timed = on_board(n * 8);
        MPI_Request pb, pa;
        CHECK_RC(MPI_Bcast_init(a, (int)n, MPI_DOUBLE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &pb),
                 MPI_SUCCESS);
        CHECK_RC(MPI_Allreduce_init(a, b, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &pa),
                 MPI_SUCCESS);
        for (int k = 0; k < size; k++) {
            bcast_case(a, n, k, NULL, salt++);
            bcast_case(a, n, k, &pb, salt += 2);
            for (int form = 0; form < 3; form++)
                allreduce_case(a, b, n, k, form, &pa, salt += 2);
        }
        CHECK_RC(MPI_Request_free(&pb), MPI_SUCCESS);
        CHECK_RC(MPI_Request_free(&pa), MPI_SUCCESS);
    }
    reuse_case(a, b);
    mismatch_cases();
    free(a);
    free(b);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_coll_offload: ok (%d ranks)\n", size);
    return 0;
}
