/* mpi_coll_nbq.c — nonblocking collectives on MPI_COMM_WORLD's mailboxes (coll.h "queued
 * runs"; src/mpi/coll_sched.c): small MPI_Ibarrier, MPI_Ibcast, MPI_Ireduce and
 * MPI_Iallreduce run as group schedules queued in call order, one at a time per rank,
 * while blocking collectives wait for the queue. Here, contents checked bit for bit
 * (integer sums, exact):
 *   - 100 MPI_Ibarrier outstanding, then MPI_Waitall;
 *   - many mixed calls outstanding (every root, sizes on both sides of the mailbox limit,
 *     so some run over point-to-point beside them), completed in an order of each rank's
 *     own (MPI_Wait from the last, or MPI_Test polling);
 *   - blocking collectives (mailbox and point-to-point ones) called while nonblocking
 *     ones are in flight, and persistent ones started between them;
 *   - the same arguments call after call (the communicator's cached schedule borrowed,
 *     also from a blocking call, and by one of two outstanding Ibarriers only);
 *   - a request freed while active (completes in the background);
 *   - MPI_Ibcast whose ranks use different datatypes of one signature (packed path).
 * Argument: [rounds]. */
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

static int64_t sum_of(int salt, int i)
{
    int64_t s = 0;
    for (int q = 0; q < size; q++)
        s += val(salt, q, i);
    return s;
}

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_NKINDS };

typedef struct op {
    int kind, root, n, salt;
    int64_t *in, *out;
    MPI_Request r;
} op_t;

/* n int64 elements; sizes up to 2000 (16000 bytes: above the 8 KiB mailbox limit) */
static void op_post(op_t *o, int kind, int root, int n, int salt)
{
    o->kind = kind;
    o->root = root;
    o->n = n;
    o->salt = salt;
    o->in = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    o->out = malloc((size_t)(n > 0 ? n : 1) * sizeof(int64_t));
    CHECK(o->in && o->out);
    for (int i = 0; i < n; i++) {
        o->in[i] = val(salt, rank, i);
        o->out[i] = kind == K_BCAST && rank == root ? val(salt, root, i) : -1;
    }
    int rc;
    switch (kind) {
    case K_BARRIER: rc = MPI_Ibarrier(MPI_COMM_WORLD, &o->r); break;
    case K_BCAST: rc = MPI_Ibcast(o->out, n, MPI_INT64_T, root, MPI_COMM_WORLD, &o->r); break;
    case K_REDUCE:
        rc = MPI_Ireduce(o->in, o->out, n, MPI_INT64_T, MPI_SUM, root, MPI_COMM_WORLD, &o->r);
        break;
    default:
        if (salt % 2) { /* in place */
            memcpy(o->out, o->in, (size_t)n * sizeof(int64_t));
            rc = MPI_Iallreduce(MPI_IN_PLACE, o->out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD,
                                &o->r);
        } else {
            rc = MPI_Iallreduce(o->in, o->out, n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &o->r);
        }
    }
    CHECK_RC(rc, MPI_SUCCESS);
}

static void op_check(op_t *o)
{
    for (int i = 0; i < o->n; i++) {
        int64_t want = -1;
        if (o->kind == K_BCAST)
            want = val(o->salt, o->root, i);
        else if (o->kind == K_ALLREDUCE || (o->kind == K_REDUCE && rank == o->root))
            want = sum_of(o->salt, i);
        if (o->out[i] != want)
            fprintf(stderr, "rank %d kind %d root %d n %d salt %d: out[%d] = %lld, want %lld\n",
                    rank, o->kind, o->root, o->n, o->salt, i, (long long)o->out[i],
                    (long long)want);
        CHECK(o->out[i] == want);
    }
    free(o->in);
    free(o->out);
}

static void many_barriers(void)
{
    enum { NB = 100 };
    MPI_Request r[NB];
    for (int i = 0; i < NB; i++)
        CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &r[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(NB, r, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < NB; i++)
        CHECK(r[i] == MPI_REQUEST_NULL);
    /* a barrier that orders: rank 0 enters late, nobody leaves before it entered (one
     * host: MPI_Wtime is the same clock in every process) */
    double t0 = MPI_Wtime(), entered = 0;
    if (rank == 0) {
        while (MPI_Wtime() - t0 < 0.02) {
        }
        entered = MPI_Wtime();
    }
    MPI_Request b;
    CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &b), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&b, MPI_STATUS_IGNORE), MPI_SUCCESS);
    double left = MPI_Wtime();
    CHECK_RC(MPI_Bcast(&entered, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD), MPI_SUCCESS);
    CHECK(left >= entered);
}

/* nops mixed calls outstanding, completed in an order of each rank's own; blocking and
 * persistent collectives in between. */
static void mixed(int round, int nops)
{
    op_t *o = calloc((size_t)nops, sizeof *o);
    CHECK(o != NULL);
    int64_t pin = rank, pout = 0;
    MPI_Request preq;
    CHECK_RC(MPI_Allreduce_init(&pin, &pout, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                &preq),
             MPI_SUCCESS);
    for (int k = 0; k < nops; k++) {
        int kind = (k + round) % K_NKINDS, root = (k * 3 + round) % size;
        int n = k % 7 == 6 ? 1500 + k : 1 + (k * 13 + round) % 300; /* some above 8 KiB */
        op_post(&o[k], kind, root, n, round * 1000 + k);
        if (k % 9 == 4) { /* a blocking collective while these are in flight */
            int64_t x = rank + k, s = 0;
            CHECK_RC(MPI_Allreduce(&x, &s, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK(s == (int64_t)size * (size - 1) / 2 + (int64_t)size * k);
        }
        if (k % 9 == 7) {
            int64_t b[3] = {-1, -1, -1};
            if (rank == k % size)
                for (int i = 0; i < 3; i++)
                    b[i] = val(k, rank, i);
            CHECK_RC(MPI_Bcast(b, 3, MPI_INT64_T, k % size, MPI_COMM_WORLD), MPI_SUCCESS);
            for (int i = 0; i < 3; i++)
                CHECK(b[i] == val(k, k % size, i));
            CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
        }
        if (k % 11 == 5) { /* a point-to-point blocking collective */
            int64_t *all = malloc((size_t)size * sizeof *all), mine = val(k, rank, 0);
            CHECK(all != NULL);
            CHECK_RC(MPI_Allgather(&mine, 1, MPI_INT64_T, all, 1, MPI_INT64_T, MPI_COMM_WORLD),
                     MPI_SUCCESS);
            for (int q = 0; q < size; q++)
                CHECK(all[q] == val(k, q, 0));
            free(all);
        }
        if (k % 13 == 3) { /* a persistent one (a lane, after its first start) */
            pin = rank + k;
            CHECK_RC(MPI_Start(&preq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&preq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK(pout == (int64_t)size * (size - 1) / 2 + (int64_t)size * k);
        }
    }
    if (round % 2) { /* from the last one back */
        for (int k = nops - 1; k >= 0; k--)
            CHECK_RC(MPI_Wait(&o[(k + rank) % nops].r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    } else { /* MPI_Test polling only, in a rank-dependent order */
        int left = nops;
        while (left > 0)
            for (int k = 0; k < nops; k++) {
                op_t *x = &o[(k * 7 + rank) % nops];
                if (x->r == MPI_REQUEST_NULL)
                    continue;
                int flag = 0;
                CHECK_RC(MPI_Test(&x->r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                left -= flag;
            }
    }
    for (int k = 0; k < nops; k++)
        op_check(&o[k]);
    CHECK_RC(MPI_Request_free(&preq), MPI_SUCCESS);
    free(o);
}

/* An active request freed: it completes in the background; the next calls still work. */
static void freed_active(void)
{
    int64_t in = rank + 1, out = -1;
    MPI_Request r;
    CHECK_RC(MPI_Iallreduce(&in, &out, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&r), MPI_SUCCESS);
    CHECK(r == MPI_REQUEST_NULL);
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS); /* after the freed one, here too */
    CHECK(out == (int64_t)size * (size + 1) / 2);
}

/* Ibcast of 40 ints: contiguous at even ranks, a vector (every other int) at odd ones. */
static void typed_bcast(void)
{
    int buf[80], root = size - 1;
    MPI_Datatype vec;
    CHECK_RC(MPI_Type_vector(40, 1, 2, MPI_INT, &vec), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&vec), MPI_SUCCESS);
    for (int i = 0; i < 80; i++)
        buf[i] = rank == root ? 5000 + i : -7;
    MPI_Request r;
    if (rank % 2)
        CHECK_RC(MPI_Ibcast(buf, 1, vec, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    else
        CHECK_RC(MPI_Ibcast(buf, 40, MPI_INT, root, MPI_COMM_WORLD, &r), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 80; i++) {
        /* the stream the root sent: element j is 5000 + 2j from an odd root (vector), 5000
         * + j from an even one; it lands at 2j (odd ranks) or j (even ranks) */
        int want = -7;
        if (rank == root)
            want = 5000 + i;
        else if (rank % 2 ? i % 2 == 0 : i < 40) {
            int j = rank % 2 ? i / 2 : i;
            want = root % 2 ? 5000 + 2 * j : 5000 + j;
        }
        if (buf[i] != want)
            fprintf(stderr, "rank %d: buf[%d] = %d, want %d\n", rank, i, buf[i], want);
        CHECK(buf[i] == want);
    }
    CHECK_RC(MPI_Type_free(&vec), MPI_SUCCESS);
}

/* The same arguments call after call: nonblocking calls then run (borrow) the schedule the
 * communicator cached for them, or for a blocking call of the same arguments; two
 * outstanding Ibarriers cannot both borrow it. */
static void same_args(int iters)
{
    int64_t a[5], b[5], x[3];
    for (int it = 0; it < iters; it++) {
        int root = it % size;
        for (int i = 0; i < 5; i++) {
            a[i] = val(it, rank, i);
            b[i] = -1;
        }
        for (int i = 0; i < 3; i++)
            x[i] = rank == root ? val(it + 1, root, i) : -1;
        MPI_Request r[4];
        CHECK_RC(MPI_Ibcast(x, 3, MPI_INT64_T, root, MPI_COMM_WORLD, &r[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Iallreduce(a, b, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD, &r[1]), MPI_SUCCESS);
        CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &r[2]), MPI_SUCCESS);
        CHECK_RC(MPI_Ibarrier(MPI_COMM_WORLD, &r[3]), MPI_SUCCESS);
        for (int k = 3; k >= 0; k--)
            CHECK_RC(MPI_Wait(&r[k], MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < 5; i++)
            CHECK(b[i] == sum_of(it, i));
        for (int i = 0; i < 3; i++)
            CHECK(x[i] == val(it + 1, root, i));
        if (it % 3 == 2) { /* the blocking form of the same call, from the same cache */
            for (int i = 0; i < 5; i++)
                b[i] = -1;
            CHECK_RC(MPI_Allreduce(a, b, 5, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
            for (int i = 0; i < 5; i++)
                CHECK(b[i] == sum_of(it, i));
        }
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 4;
    many_barriers();
    for (int round = 0; round < rounds; round++)
        mixed(round, 60);
    same_args(50);
    freed_active();
    typed_bcast();
    many_barriers();
    MPI_Finalize();
    return 0;
}
