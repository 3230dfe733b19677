/* mpi_coll_lanes.c — persistent collectives on the mailbox lanes of MPI_COMM_WORLD's
 * group (coll.h "lanes"; src/mpi/coll_sched.c): after its first start a persistent
 * barrier / bcast / reduce / allreduce of at most FMPL_COLL_LANE_BYTES runs on a lane the
 * members agreed on. Here: more live requests than lanes (FMPL_COLL_LANES, 16 by default;
 * the others stay on point-to-point), each rank starting them in its own order and
 * completing them in another, several starts with different contents checked bit for bit
 * (integer sums, so exact), then freed in an order and at a time that differ between
 * ranks (half of them before the next round's *_init calls on even ranks only), so the
 * next round agrees on lanes while members hold different ones; a non-commutative user op
 * (never on a lane) beside them; and the same requests running while a blocking
 * collective on the same communicator runs between starts; then a few requests started
 * 300 times each, so that every cell ring of their lanes wraps around many times.
 * Argument: [rounds]. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

enum { K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_NKINDS };
#define NREQ 24
#define MAXN 200 /* int64 elements: up to 1600 bytes, both tiers of a lane (248 / 8 KiB) */

typedef struct preq {
    int kind, root, n;
    int64_t in[MAXN], out[MAXN];
    MPI_Request r;
} preq_t;

static int rank, size;

static int64_t val(int salt, int who, int i)
{
    return (int64_t)salt * 1000003 + (int64_t)who * 7919 + i;
}

static void pr_init(preq_t *p, int k, int round)
{
    p->kind = k % K_NKINDS;
    p->root = (k + round) % size;
    p->n = 1 + (k * 37 + round * 11) % MAXN;
    int rc = MPI_SUCCESS;
    switch (p->kind) {
    case K_BARRIER: rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p->r); break;
    case K_BCAST:
        rc = MPI_Bcast_init(p->out, p->n, MPI_INT64_T, p->root, MPI_COMM_WORLD, MPI_INFO_NULL,
                            &p->r);
        break;
    case K_REDUCE:
        rc = MPI_Reduce_init(p->in, p->out, p->n, MPI_INT64_T, MPI_SUM, p->root, MPI_COMM_WORLD,
                             MPI_INFO_NULL, &p->r);
        break;
    default:
        rc = MPI_Allreduce_init(p->in, p->out, p->n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &p->r);
    }
    CHECK_RC(rc, MPI_SUCCESS);
}

static void pr_fill(preq_t *p, int salt)
{
    for (int i = 0; i < MAXN; i++) {
        p->in[i] = val(salt, rank, i);
        p->out[i] = p->kind == K_BCAST && rank == p->root && i < p->n ? val(salt, p->root, i) : -1;
    }
}

static void pr_check(const preq_t *p, int salt)
{
    for (int i = 0; i < MAXN; i++) {
        int64_t want = -1;
        if (i < p->n) {
            if (p->kind == K_BCAST) {
                want = val(salt, p->root, i);
            } else if (p->kind == K_ALLREDUCE || (p->kind == K_REDUCE && rank == p->root)) {
                want = 0;
                for (int q = 0; q < size; q++)
                    want += val(salt, q, i);
            }
        }
        if (p->out[i] != want)
            fprintf(stderr, "rank %d kind %d root %d n %d: out[%d] = %lld, want %lld\n", rank,
                    p->kind, p->root, p->n, i, (long long)p->out[i], (long long)want);
        CHECK(p->out[i] == want);
    }
}

/* A non-commutative (associative) op on pairs: composition of affine maps x -> a x + b,
 * (a1, b1) o (a2, b2) = (a1 a2, b1 a2 + b2) mod 2^64, combined in rank order. */
static void noncomm(void *in, void *inout, int *len, MPI_Datatype *type)
{
    (void)type;
    uint64_t *x = in, *y = inout;
    for (int i = 0; i < *len; i++) {
        uint64_t a = x[2 * i] * y[2 * i], b = x[2 * i + 1] * y[2 * i] + y[2 * i + 1];
        y[2 * i] = a;
        y[2 * i + 1] = b;
    }
}

/* Few requests started many times (each rank in its own order), so that every lane cell
 * ring wraps around many times (64 small cells, 4 big ones: acknowledgements every 16th /
 * every message): bcast of 8 B and of 1000 B, reduce and allreduce of 8 B, and a barrier;
 * contents checked after every start. */
static void long_runs(int starts)
{
    enum { NL = 5 };
    preq_t *p = calloc(NL, sizeof *p);
    CHECK(p != NULL);
    static const int kind[NL] = {K_BARRIER, K_BCAST, K_REDUCE, K_ALLREDUCE, K_BCAST};
    static const int n[NL] = {1, 1, 1, 1, 125}; /* 125 int64: the big cells of a lane */
    for (int k = 0; k < NL; k++) {
        p[k].kind = kind[k];
        p[k].n = n[k];
        p[k].root = k == 1 ? size - 1 : k == 2 ? size / 2 : 0;
    }
    for (int k = 0; k < NL; k++) {
        int rc = MPI_SUCCESS;
        switch (p[k].kind) {
        case K_BARRIER: rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, &p[k].r); break;
        case K_BCAST:
            rc = MPI_Bcast_init(p[k].out, p[k].n, MPI_INT64_T, p[k].root, MPI_COMM_WORLD,
                                MPI_INFO_NULL, &p[k].r);
            break;
        case K_REDUCE:
            rc = MPI_Reduce_init(p[k].in, p[k].out, p[k].n, MPI_INT64_T, MPI_SUM, p[k].root,
                                 MPI_COMM_WORLD, MPI_INFO_NULL, &p[k].r);
            break;
        default:
            rc = MPI_Allreduce_init(p[k].in, p[k].out, p[k].n, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD,
                                    MPI_INFO_NULL, &p[k].r);
        }
        CHECK_RC(rc, MPI_SUCCESS);
    }
    for (int it = 0; it < starts; it++) {
        MPI_Request all[NL];
        for (int k = 0; k < NL; k++)
            pr_fill(&p[k], 7000 + it * NL + k);
        for (int j = 0; j < NL; j++) {
            int k = (j + rank + it) % NL;
            CHECK_RC(MPI_Start(&p[k].r), MPI_SUCCESS);
        }
        for (int k = 0; k < NL; k++)
            all[k] = p[(NL - 1 - k + rank) % NL].r;
        CHECK_RC(MPI_Waitall(NL, all, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        for (int k = 0; k < NL; k++)
            pr_check(&p[k], 7000 + it * NL + k);
    }
    for (int k = 0; k < NL; k++)
        CHECK_RC(MPI_Request_free(&p[k].r), MPI_SUCCESS);
    free(p);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int rounds = argc > 1 ? atoi(argv[1]) : 4, starts = 5;
    preq_t *cur = calloc(NREQ, sizeof *cur), *old = calloc(NREQ, sizeof *old);
    CHECK(cur && old);
    for (int k = 0; k < NREQ; k++)
        old[k].r = MPI_REQUEST_NULL;
    MPI_Op op;
    MPI_Datatype pair;
    CHECK_RC(MPI_Op_create(noncomm, 0, &op), MPI_SUCCESS);
    CHECK_RC(MPI_Type_contiguous(2, MPI_UINT64_T, &pair), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&pair), MPI_SUCCESS);
    uint64_t nin[2], nout[2];
    MPI_Request nreq;
    for (int round = 0; round < rounds; round++) {
        /* last round's requests: each rank frees its own half now (even ranks the even
         * ones, odd ranks every third), the rest after the first start of this round */
        for (int k = 0; k < NREQ; k++)
            if (old[k].r != MPI_REQUEST_NULL && (rank % 2 ? k % 3 == 0 : k % 2 == 0))
                CHECK_RC(MPI_Request_free(&old[k].r), MPI_SUCCESS);
        for (int k = 0; k < NREQ; k++)
            pr_init(&cur[k], k, round);
        CHECK_RC(MPI_Reduce_init(nin, nout, 1, pair, op, 0, MPI_COMM_WORLD, MPI_INFO_NULL, &nreq),
                 MPI_SUCCESS);
        for (int it = 0; it < starts; it++) {
            int salt = round * 100 + it;
            MPI_Request all[NREQ + 1];
            for (int k = 0; k < NREQ; k++)
                pr_fill(&cur[k], salt + k);
            nin[0] = (uint64_t)rank + 1 + (uint64_t)salt;
            nin[1] = 2 * (uint64_t)rank + 3;
            for (int j = 0; j < NREQ; j++) { /* each rank its own start order */
                int k = (rank % 2 ? NREQ - 1 - j : j + rank * 5) % NREQ;
                CHECK_RC(MPI_Start(&cur[k].r), MPI_SUCCESS);
            }
            CHECK_RC(MPI_Start(&nreq), MPI_SUCCESS);
            for (int k = 0; k < NREQ; k++) /* and its own completion order */
                all[k] = cur[(k * 7 + rank) % NREQ].r;
            all[NREQ] = nreq;
            CHECK_RC(MPI_Waitall(NREQ + 1, all, MPI_STATUSES_IGNORE), MPI_SUCCESS);
            for (int k = 0; k < NREQ; k++)
                pr_check(&cur[k], salt + k);
            if (rank == 0) { /* r0 o r1 o ... in rank order */
                uint64_t a = 1 + (uint64_t)salt, b = 3;
                for (int q = 1; q < size; q++) {
                    uint64_t qa = (uint64_t)q + 1 + (uint64_t)salt, qb = 2 * (uint64_t)q + 3;
                    b = b * qa + qb;
                    a = a * qa;
                }
                CHECK(nout[0] == a && nout[1] == b);
            }
            int64_t x = rank, sum = 0; /* a blocking collective between starts */
            CHECK_RC(MPI_Allreduce(&x, &sum, 1, MPI_INT64_T, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
            CHECK(sum == (int64_t)size * (size - 1) / 2);
            for (int k = 0; it == 0 && k < NREQ; k++)
                if (old[k].r != MPI_REQUEST_NULL)
                    CHECK_RC(MPI_Request_free(&old[k].r), MPI_SUCCESS);
        }
        CHECK_RC(MPI_Request_free(&nreq), MPI_SUCCESS);
        preq_t *t = old;
        old = cur;
        cur = t;
    }
    for (int k = 0; k < NREQ; k++)
        if (old[k].r != MPI_REQUEST_NULL)
            CHECK_RC(MPI_Request_free(&old[k].r), MPI_SUCCESS);
    long_runs(300);
    CHECK_RC(MPI_Op_free(&op), MPI_SUCCESS);
    CHECK_RC(MPI_Type_free(&pair), MPI_SUCCESS);
    free(cur);
    free(old);
    MPI_Finalize();
    return 0;
}
