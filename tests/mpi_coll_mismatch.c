/* mpi_coll_mismatch.c — erroneous collectives fail instead of hanging or taking wrong
 * bytes: a send buffer inside the receive buffer (every rank sees its own), ranks that
 * disagree on a collective's size (the ranks that can see it fail: mailbox length marks
 * passed down trees, point-to-point sizes), and with FMPL_MPI_CHECK=1 (argument "check")
 * every rank fails alike on sizes, roots, ops and type signatures (blocking, nonblocking
 * and persistent calls, the latter at every start), sizes on both sides of the mailbox /
 * point-to-point boundary included. After each erroneous call a correct collective still
 * gives the right answer.
 *
 * `mpi_coll_mismatch fatal ROOT OTHER`: a bcast of ROOT bytes at the root and OTHER at the
 * others, under MPI_ERRORS_ARE_FATAL: the rank that sees the difference ends the job
 * (tests/coll_mismatch_fatal.sh checks the message); exits 0 if nobody saw it.
 * `mpi_coll_mismatch carrier OP ROOT OTHER fatal|return`: one collective of ROOT bytes at
 * rank 0 and OTHER at the others, under that handler (tests/coll_carrier_mismatch.sh). */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int rank, size, checking;

static int class_of(int rc)
{
    int cls = -1;
    CHECK_RC(MPI_Error_class(rc, &cls), MPI_SUCCESS);
    return cls;
}

/* A correct allreduce after an erroneous call: the communicator still works. */
static void still_works(const char *after)
{
    int64_t in[3] = {rank, 1, 2 * rank}, out[3];
    int rc = MPI_Allreduce(in, out, 3, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD);
    int64_t sum = (int64_t)size * (size - 1) / 2;
    if (rc != MPI_SUCCESS || out[0] != sum || out[1] != size || out[2] != 2 * sum) {
        fprintf(stderr, "rank %d: allreduce after %s: rc %d, got %lld %lld %lld\n", rank, after, rc,
                (long long)out[0], (long long)out[1], (long long)out[2]);
        exit(1);
    }
}

/* Every rank's send block lies inside its receive buffer: every rank fails. */
static void aliasing(void)
{
    int *buf = calloc((size_t)size * 4, sizeof *buf);
    CHECK_CLASS(MPI_Allgather(&buf[rank], 1, MPI_INT, buf, 1, MPI_INT, MPI_COMM_WORLD),
                MPI_ERR_BUFFER);
    int *counts = malloc((size_t)size * sizeof *counts),
        *displs = malloc((size_t)size * sizeof *displs);
    for (int i = 0; i < size; i++) {
        counts[i] = 1;
        displs[i] = i;
    }
    CHECK_CLASS(
        MPI_Allgatherv(&buf[rank], 1, MPI_INT, buf, counts, displs, MPI_INT, MPI_COMM_WORLD),
        MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Allreduce(buf + 1, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    CHECK_CLASS(MPI_Scan(buf, buf + 1, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    /* the root's receive buffer holds its send buffer */
    CHECK_CLASS(MPI_Gather(buf + 1, 1, MPI_INT, buf, 2, MPI_INT, 0, MPI_COMM_SELF), MPI_ERR_BUFFER);
    /* interleaved layouts are legal: evens sent, gathered into the odds of a vector */
    if (size == 1) {
        int a[8] = {1, 0, 2, 0, 3, 0, 4, 0};
        MPI_Datatype even;
        CHECK_RC(MPI_Type_vector(4, 1, 2, MPI_INT, &even), MPI_SUCCESS);
        CHECK_RC(MPI_Type_commit(&even), MPI_SUCCESS);
        CHECK_RC(MPI_Allgather(a, 1, even, a + 1, 1, even, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(a[1] == 1 && a[3] == 2 && a[5] == 3 && a[7] == 4);
        CHECK_RC(MPI_Type_free(&even), MPI_SUCCESS);
    }
    /* a user error message names the call and the argument */
    char s[MPI_MAX_ERROR_STRING];
    int len, rc = MPI_Allreduce(buf + 1, buf, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK_RC(MPI_Error_string(rc, s, &len), MPI_SUCCESS);
    CHECK(strstr(s, "MPI_Allreduce") != NULL);
    free(counts);
    free(displs);
    free(buf);
    still_works("aliasing");
}

/* The ranks disagree on a bcast's length: the root sends 1 int, the others expect 10
 * (short) or the reverse (long). Without checking, each rank that receives the wrong
 * length fails (mailboxes: length marks, passed on down the tree); with checking, every
 * rank fails. */
static void bcast_length(void)
{
    int buf[10] = {0};
    for (int longer = 0; longer < 2; longer++) {
        int n = (rank == 0) == longer ? 10 : 1;
        int rc = MPI_Bcast(buf, n, MPI_INT, 0, MPI_COMM_WORLD);
        if (size == 1)
            CHECK(rc == MPI_SUCCESS);
        else if (rank != 0 || checking)
            CHECK(rc != MPI_SUCCESS);
        /* (a rank below one that saw it in the tree fails with MPI_ERR_COUNT) */
        if (rc != MPI_SUCCESS && rank != 0 && !checking)
            CHECK(class_of(rc) == MPI_ERR_COUNT || (longer && class_of(rc) == MPI_ERR_TRUNCATE));
        still_works("bcast of mismatched length");
    }
}

/* The same across the boundary of the tiny and the small channels (248 B): the root sends
 * 40 B where the others expect 4000 B, or the reverse. The sender's message is on another
 * channel than the one its receiver waits on; the receiver finds it there and fails
 * (MPI_ERR_TRUNCATE when the root's is longer, else MPI_ERR_COUNT; the ranks below it in
 * the tree fail with MPI_ERR_COUNT), nobody hangs, and both channels stay in step. */
static void bcast_channels(void)
{
    static char buf[4000];
    char s[MPI_MAX_ERROR_STRING];
    for (int longer = 0; longer < 2; longer++) {
        int n = (rank == 0) == longer ? 4000 : 40;
        int rc = MPI_Bcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD);
        if (size == 1 || (rank == 0 && !checking))
            CHECK(rc == MPI_SUCCESS);
        else
            CHECK(rc != MPI_SUCCESS);
        if (rc != MPI_SUCCESS && !checking) {
            CHECK(class_of(rc) == MPI_ERR_COUNT || (longer && class_of(rc) == MPI_ERR_TRUNCATE));
            int len;
            CHECK_RC(MPI_Error_string(rc, s, &len), MPI_SUCCESS);
            CHECK(strstr(s, "MPI_Bcast") && strstr(s, "disagree on the collective's size"));
        }
        still_works("bcast across the tiny/small boundary");
        /* and a correct bcast of either size still delivers the root's bytes */
        for (int k = 0; k < 2; k++) {
            int m = k ? 4000 : 40;
            memset(buf, rank == 0 ? 0x5a : 0, (size_t)m);
            CHECK_RC(MPI_Bcast(buf, m, MPI_BYTE, 0, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK(buf[0] == 0x5a && buf[m - 1] == 0x5a);
        }
    }
}

/* The same mismatch (40 B at the root, 4000 B elsewhere, and the reverse) in a nonblocking
 * bcast and in a persistent one started three times: every rank below the root fails at
 * every start, the ranks below a failed one too (its sends carry no data), and no start
 * hangs. A persistent collective's later starts may take a lane, whose transfers are
 * chosen by each rank's own sizes: the members must not agree on one after a start that
 * failed anywhere. */
static void mismatch_verdict(int rc, int longer)
{
    if (size == 1 || (rank == 0 && !checking))
        CHECK(rc == MPI_SUCCESS);
    else if (checking) /* every rank: the one that saw it its class, the others NOT_SAME */
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE || class_of(rc) == MPI_ERR_COUNT ||
              class_of(rc) == MPI_ERR_NOT_SAME);
    else
        CHECK(class_of(rc) == MPI_ERR_COUNT || (longer && class_of(rc) == MPI_ERR_TRUNCATE));
}

static void bcast_nonblocking(void)
{
    static char buf[4000];
    for (int longer = 0; longer < 2; longer++) {
        int n = (rank == 0) == longer ? 4000 : 40;
        MPI_Request r;
        CHECK_RC(MPI_Ibcast(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
        mismatch_verdict(MPI_Wait(&r, MPI_STATUS_IGNORE), longer);
        still_works("ibcast of mismatched length");
        CHECK_RC(MPI_Bcast_init(buf, n, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                 MPI_SUCCESS);
        for (int start = 0; start < 3; start++) {
            memset(buf, rank == 0 ? 0x33 + start : 0, sizeof buf);
            CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
            mismatch_verdict(MPI_Wait(&r, MPI_STATUS_IGNORE), longer);
            still_works("persistent bcast of mismatched length");
        }
        CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
        /* a correct persistent bcast afterwards takes its lane and delivers */
        CHECK_RC(MPI_Bcast_init(buf, 4000, MPI_BYTE, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
                 MPI_SUCCESS);
        for (int start = 0; start < 5; start++) {
            memset(buf, rank == 0 ? 0x40 + start : 0, sizeof buf);
            CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(buf[0] == 0x40 + start && buf[3999] == 0x40 + start);
        }
        CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    }
}

/* A bcast large enough to go in segments (a chain at 2 ranks, scatter and ring above):
 * 1 MiB at the root and 512 KiB elsewhere, and the reverse, on a duplicate of
 * MPI_COMM_WORLD. The counts of segments differ, so where a rank sees it the edge cannot
 * be put back in step, and its reader gives it up. Nobody hangs, and (without checking)
 * the rank below the root fails; small collectives on the communicator still work; a
 * later large bcast on it fails on the given-up edges at once instead of waiting or
 * taking stale segments; MPI_COMM_WORLD is untouched. */
static void bcast_segments(void)
{
    const int big = 1 << 20, small = 1 << 19;
    char *buf = malloc((size_t)big);
    CHECK(buf != NULL);
    for (int longer = 0; longer < 2 && size > 1; longer++) {
        MPI_Comm comm;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &comm), MPI_SUCCESS);
        int rc = MPI_Bcast(buf, (rank == 0) == longer ? big : small, MPI_BYTE, 0, comm);
        if (rank == 1 || checking)
            CHECK(rc != MPI_SUCCESS);
        int64_t one = 1, sum = 0;
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT64_T, MPI_SUM, comm), MPI_SUCCESS);
        CHECK(sum == size);
        memset(buf, rank == 0 ? 0x77 : 0, (size_t)big);
        rc = MPI_Bcast(buf, big, MPI_BYTE, 0, comm);
        if (rank == 1 && !checking)
            CHECK(rc != MPI_SUCCESS);
        if (rc == MPI_SUCCESS)
            CHECK(buf[0] == 0x77 && buf[big - 1] == 0x77);
        CHECK_RC(MPI_Comm_free(&comm), MPI_SUCCESS);
        still_works("bcast of mismatched segments");
        memset(buf, rank == 0 ? 0x78 : 0, (size_t)big);
        CHECK_RC(MPI_Bcast(buf, big, MPI_BYTE, 0, MPI_COMM_WORLD), MPI_SUCCESS);
        CHECK(buf[0] == 0x78 && buf[big / 2] == 0x78 && buf[big - 1] == 0x78);
    }
    free(buf);
}

/* Rank 0 sends 1 int to every block of 10 (allgather) or 2 x 10 (alltoall): it fails,
 * and nobody hangs. */
static void block_length(void)
{
    int *send = calloc(20 * (size_t)size, sizeof *send),
        *recv = calloc(20 * (size_t)size, sizeof *recv);
    int rc = MPI_Allgather(send, rank == 0 ? 1 : 10, MPI_INT, recv, 10, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0 && size > 1 && !checking)
        CHECK(class_of(rc) == MPI_ERR_COUNT);
    if (checking && size > 1)
        CHECK(rc != MPI_SUCCESS);
    still_works("allgather of mismatched length");
    rc = MPI_Alltoall(send, rank == 0 ? 20 : 10, MPI_INT, recv, 10, MPI_INT, MPI_COMM_WORLD);
    if (rank == 0 && size > 1 && !checking)
        CHECK(class_of(rc) == MPI_ERR_TRUNCATE);
    if (checking && size > 1)
        CHECK(rc != MPI_SUCCESS);
    still_works("alltoall of mismatched length");
    free(send);
    free(recv);
}

/* Collective op (0 allreduce, 1 reduce, 2 allgather, 3 alltoall, 4 bcast; root 0) of
 * root_n bytes at rank 0 and other_n at the others (a and b hold size MiB each). */
static int carrier_call(int op, long root_n, long other_n, char *a, char *b)
{
    int n = (int)(rank == 0 ? root_n : other_n);
    switch (op) {
    case 0: return MPI_Allreduce(a, b, n / 8, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    case 1: return MPI_Reduce(a, b, n / 8, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    case 2: return MPI_Allgather(a, n, MPI_BYTE, b, n, MPI_BYTE, MPI_COMM_WORLD);
    case 3: return MPI_Alltoall(a, n / size, MPI_BYTE, b, n / size, MPI_BYTE, MPI_COMM_WORLD);
    default: return MPI_Bcast(a, n, MPI_BYTE, 0, MPI_COMM_WORLD);
    }
}

/* `mpi_coll_mismatch carrier OP ROOT OTHER [return]`: one call of carrier_call, then a
 * barrier; returns the call's code (exits 0 when nothing noticed). */
static int carrier(int op, long root_n, long other_n)
{
    char *a = calloc((size_t)size << 20, 1), *b = calloc((size_t)size << 20, 1);
    CHECK(a != NULL && b != NULL);
    int rc = carrier_call(op, root_n, other_n, a, b);
    MPI_Barrier(MPI_COMM_WORLD);
    free(a);
    free(b);
    return rc;
}

/* Sizes on two sides of the mailbox / point-to-point boundary: rank 0 small (mailboxes)
 * and the others large (point-to-point), and the reverse, in allreduce, reduce, allgather
 * and alltoall. Each side waits on a transport the other never uses: without checking,
 * the watch on blocking runs ends the job (tests/coll_carrier_mismatch.sh); with it
 * every rank fails and the communicator still works. */
static void cross_transport(void)
{
    static const long pairs[][2] = {{40, 16384}, {16384, 40}, {8, 1 << 20}, {1 << 20, 8}};
    char *a = calloc((size_t)size << 20, 1), *b = calloc((size_t)size << 20, 1);
    CHECK(a != NULL && b != NULL);
    for (int op = 0; op < 4; op++)
        for (size_t i = 0; i < sizeof pairs / sizeof pairs[0]; i++) {
            int rc = carrier_call(op, pairs[i][0], pairs[i][1], a, b);
            if (rc == MPI_SUCCESS ||
                (class_of(rc) != MPI_ERR_COUNT && class_of(rc) != MPI_ERR_TRUNCATE &&
                 class_of(rc) != MPI_ERR_NOT_SAME)) {
                fprintf(stderr, "rank %d: op %d at %ld / %ld bytes: rc %d\n", rank, op, pairs[i][0],
                        pairs[i][1], rc);
                exit(1);
            }
            still_works("a collective across the mailbox / point-to-point boundary");
        }
    free(a);
    free(b);
}

/* Only the checking mode sees these: every rank fails, the rank that found the
 * difference with its class, the others with MPI_ERR_NOT_SAME. */
static void checked_only(void)
{
    int a[4] = {1, 2, 3, 4}, b[4];
    if (size == 1)
        return;
    /* another root */
    int rc = MPI_Bcast(a, 4, MPI_INT, rank == 1 ? 1 : 0, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_ROOT || class_of(rc) == MPI_ERR_NOT_SAME);
    still_works("bcast with another root");
    /* another op */
    rc = MPI_Allreduce(a, b, 4, MPI_INT, rank == size - 1 ? MPI_MAX : MPI_SUM, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_OP || class_of(rc) == MPI_ERR_NOT_SAME);
    still_works("allreduce with another op");
    /* the same bytes, other basic types */
    rc = MPI_Allreduce(a, b, 4, rank == 0 ? MPI_FLOAT : MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_TYPE || class_of(rc) == MPI_ERR_NOT_SAME);
    still_works("allreduce with another type");
    /* a gatherv whose root expects another count from the last rank */
    int *counts = malloc((size_t)size * sizeof *counts),
        *displs = malloc((size_t)size * sizeof *displs);
    int *all = calloc(4 * (size_t)size, sizeof *all);
    for (int i = 0; i < size; i++) {
        counts[i] = i == size - 1 ? 3 : 4;
        displs[i] = 4 * i;
    }
    rc = MPI_Gatherv(a, 4, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE || class_of(rc) == MPI_ERR_NOT_SAME);
    if (rank == 0) { /* the root saw it itself */
        char s[MPI_MAX_ERROR_STRING];
        int len;
        CHECK_RC(MPI_Error_string(rc, s, &len), MPI_SUCCESS);
        CHECK(strstr(s, "MPI_Gatherv") && strstr(s, "FMPL_MPI_CHECK") && strstr(s, "16 bytes"));
    }
    still_works("gatherv with another count");
    /* different collectives */
    rc = rank == 0 ? MPI_Barrier(MPI_COMM_WORLD)
                   : MPI_Allreduce(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(class_of(rc) == MPI_ERR_NOT_SAME);
    still_works("different collectives");
    /* nonblocking and persistent calls: their check runs before them, at every start */
    MPI_Request r;
    CHECK_RC(MPI_Ibcast(a, 4, MPI_INT, rank == 1 ? 1 : 0, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_ROOT || class_of(rc) == MPI_ERR_NOT_SAME);
    CHECK(r == MPI_REQUEST_NULL);
    still_works("ibcast with another root");
    CHECK_RC(MPI_Igatherv(a, 4, MPI_INT, all, counts, displs, MPI_INT, 0, MPI_COMM_WORLD, &r),
             MPI_SUCCESS);
    rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
    CHECK(class_of(rc) == MPI_ERR_TRUNCATE || class_of(rc) == MPI_ERR_NOT_SAME);
    still_works("igatherv with another count");
    CHECK_RC(MPI_Allreduce_init(a, b, 4, MPI_INT, rank == size - 1 ? MPI_MAX : MPI_SUM,
                                MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    for (int start = 0; start < 3; start++) {
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        rc = MPI_Wait(&r, MPI_STATUS_IGNORE);
        CHECK(class_of(rc) == MPI_ERR_OP || class_of(rc) == MPI_ERR_NOT_SAME);
        still_works("persistent allreduce with another op");
    }
    CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    /* and correct ones pass their checks and deliver */
    CHECK_RC(MPI_Allreduce_init(a, b, 4, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r),
             MPI_SUCCESS);
    for (int start = 0; start < 3; start++) {
        a[0] = rank + start;
        CHECK_RC(MPI_Start(&r), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(b[0] == size * (size - 1) / 2 + size * start && b[3] == 4 * size);
    }
    CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK_RC(MPI_Ibcast(a, 4, MPI_INT, size - 1, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(a[0] == size - 1 + 2 && a[3] == 4);
    free(counts);
    free(displs);
    free(all);
}

/* A bcast whose root sends root_n bytes where the others expect other_n, with the
 * default error handler: a pipelined chain's first segment carries the size, so the
 * first rank below the root fails at once, whichever side is longer. */
static void fatal_bcast(long root_n, long other_n)
{
    char *buf = calloc((size_t)(root_n > other_n ? root_n : other_n), 1);
    CHECK(buf != NULL);
    MPI_Bcast(buf, (int)(rank == 0 ? root_n : other_n), MPI_BYTE, 0, MPI_COMM_WORLD);
    MPI_Barrier(MPI_COMM_WORLD);
    free(buf);
}

int main(int argc, char **argv)
{
    checking = argc > 1 && strcmp(argv[1], "check") == 0;
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);
    if (argc > 3 && strcmp(argv[1], "fatal") == 0) {
        fatal_bcast(atol(argv[2]), atol(argv[3]));
        CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
        return 0;
    }
    if (argc > 4 && strcmp(argv[1], "carrier") == 0) {
        if (argc > 5 && strcmp(argv[5], "return") == 0) /* ("fatal": the default) */
            CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
        int rc = carrier(atoi(argv[2]), atol(argv[3]), atol(argv[4]));
        fprintf(stderr, "rank %d: the call returned %d\n", rank, rc);
        CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
        return 0;
    }
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN), MPI_SUCCESS);
    aliasing();
    bcast_length();
    bcast_channels();
    block_length();
    bcast_nonblocking();
    bcast_segments();
    if (checking && size > 1) {
        checked_only();
        cross_transport();
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
