/* fmpl_persist.c — the native persistent collectives (fmpl_bcast_init, fmpl_allreduce_init,
 * fmpl_start, fmpl_wait, fmpl_test, fmpl_request_free), every byte checked:
 *   - bcast of 8 B, 8 KiB (the board's inline room), 8 KiB + 8 and 1 MiB + 8 (over CMA)
 *     from every root, three starts each with new data, the root's buffer unchanged;
 *   - allreduce in place of doubles (sum) and int64 (max) and a user operation, at 1, 1000
 *     and 131073 elements, three starts each;
 *   - starts mixed with blocking collectives, completed by fmpl_test polling;
 *   - twelve requests on one communicator (the first 8 get board entries, the rest run
 *     queued), started together and waited for in reverse order;
 *   - reuse: a bcast and an allreduce made, started once and freed REUSE_ROUNDS times on
 *     FMPL_COMM_WORLD, far more than its 8 board entries (the later calls take entries
 *     earlier ones freed: coll_offload.c "Persistent entries"), busy rank k = round % size
 *     sleeping after its starts and the others' waits ending within half of it in every
 *     round; inline and CMA sizes in turn; the bcast root is k, or k + 1 freeing its
 *     request as soon as its wait returns (k has not read its data yet); the two requests
 *     freed in a different order at odd ranks, a round later (after the next inits) at
 *     every third one;
 *   - a busy member: after its start rank k sleeps DELAY_MS and the others' waits must end
 *     within half of it (on a fresh communicator, whose requests take the board; with
 *     FMPL_COLL_OFFLOAD=0 or FMPL_SHM_CMA=0 only the contents are checked);
 *   - errors: every bad argument and state, a bcast whose size differs at the last rank
 *     (it fails there at every start, the others get the root's data), a handle after
 *     fmpl_request_free and after fmpl_comm_free freed a running request. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "fmpl.h"
#include "test_util.h"

#define W FMPL_COMM_WORLD
#define DELAY_MS 200
#define REUSE_ROUNDS 40
#define REUSE_DELAY_MS 100

static int rank, size;

static unsigned char bval(int salt, int root, size_t i)
{
    return (unsigned char)(salt * 31 + root * 7 + i * 13 + i / 251);
}

static void bcast_case(size_t n, int root, fmpl_comm comm)
{
    unsigned char *b = malloc(n + 1);
    CHECK(b);
    fmpl_request r;
    CHECK_RC(fmpl_bcast_init(b, n, root, comm, &r), FMPL_SUCCESS);
    for (int salt = 1; salt <= 3; salt++) {
        for (size_t i = 0; i < n; i++)
            b[i] = rank == root ? bval(salt, root, i) : 0xee;
        b[n] = 0x5a;
        CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            if (b[i] != bval(salt, root, i)) {
                fprintf(stderr, "rank %d: bcast %zu B root %d start %d: byte %zu is %#x\n", rank, n,
                        root, salt, i, b[i]);
                exit(1);
            }
        CHECK(b[n] == 0x5a);
    }
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);
    CHECK(r == FMPL_REQUEST_NULL);
    free(b);
}

static void user_max(void *inout, const void *in, size_t count)
{
    int64_t *a = inout;
    const int64_t *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] = a[i] > b[i] ? a[i] : b[i];
}

static int64_t ival(int salt, int r, size_t i)
{
    return (int64_t)((salt * 5 + r * 17 + (int)(i % 1009) * 3) % 101) - 50;
}

/* kind 0: double sum; 1: int64 max; 2: int64 user max (op). */
static void allreduce_case(size_t n, int kind, fmpl_op user)
{
    void *b = malloc(n * 8);
    CHECK(b);
    fmpl_request r;
    fmpl_type t = kind ? FMPL_INT64 : FMPL_DOUBLE;
    fmpl_op op = kind == 0 ? FMPL_SUM : kind == 1 ? FMPL_MAX : user;
    CHECK_RC(fmpl_allreduce_init(b, n, t, op, W, &r), FMPL_SUCCESS);
    for (int salt = 1; salt <= 3; salt++) {
        for (size_t i = 0; i < n; i++) {
            if (kind)
                ((int64_t *)b)[i] = ival(salt, rank, i);
            else
                ((double *)b)[i] = (double)ival(salt, rank, i);
        }
        CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
        CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
        for (size_t i = 0; i < n; i++) {
            int64_t want = kind ? INT64_MIN : 0;
            for (int q = 0; q < size; q++)
                want = kind ? (ival(salt, q, i) > want ? ival(salt, q, i) : want)
                            : want + ival(salt, q, i);
            int64_t got = kind ? ((int64_t *)b)[i] : (int64_t)((double *)b)[i];
            if (got != want) {
                fprintf(stderr,
                        "rank %d: allreduce kind %d n %zu start %d: [%zu] = %lld, not %lld\n", rank,
                        kind, n, salt, i, (long long)got, (long long)want);
                exit(1);
            }
        }
    }
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);
    free(b);
}

/* A persistent bcast started, then blocking collectives, then completed with fmpl_test. */
static void mixed_case(void)
{
    double b[64], sum = rank;
    fmpl_request r;
    CHECK_RC(fmpl_bcast_init(b, sizeof b, size - 1, W, &r), FMPL_SUCCESS);
    for (int it = 0; it < 20; it++) {
        for (int i = 0; i < 64; i++)
            b[i] = rank == size - 1 ? it * 100 + i : -1;
        CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
        sum = rank;
        CHECK_RC(fmpl_allreduce(&sum, 1, FMPL_DOUBLE, FMPL_SUM, W, NULL), FMPL_SUCCESS);
        CHECK(sum == (double)size * (size - 1) / 2);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        int flag = 0;
        for (long spins = 0; !flag; spins++) {
            CHECK_RC(fmpl_test(r, &flag), FMPL_SUCCESS);
            CHECK(spins < 100000000L);
        }
        CHECK_RC(fmpl_test(r, &flag), FMPL_ERR_NO_PENDING);
        CHECK(flag == 0);
        for (int i = 0; i < 64; i++)
            CHECK(b[i] == it * 100 + i);
    }
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);
}

/* Twelve requests on one communicator, started together, waited for in reverse order. */
static void many_case(void)
{
    enum { K = 12, N = 20000 };
    fmpl_comm c;
    CHECK_RC(fmpl_comm_create(W, 0, &c), FMPL_SUCCESS);
    double *b = malloc((size_t)K * N * sizeof *b);
    CHECK(b);
    fmpl_request r[K];
    for (int k = 0; k < K; k++) {
        double *bk = b + (size_t)k * N;
        if (k % 2)
            CHECK_RC(fmpl_bcast_init(bk, N * sizeof *b, k % size, c, &r[k]), FMPL_SUCCESS);
        else
            CHECK_RC(fmpl_allreduce_init(bk, N, FMPL_DOUBLE, FMPL_SUM, c, &r[k]), FMPL_SUCCESS);
    }
    for (int salt = 0; salt < 2; salt++) {
        for (int k = 0; k < K; k++)
            for (size_t i = 0; i < N; i++)
                b[(size_t)k * N + i] =
                    k % 2 && rank != k % size ? -1 : (double)(k + rank + salt + i % 7);
        for (int k = 0; k < K; k++)
            CHECK_RC(fmpl_start(r[k]), FMPL_SUCCESS);
        for (int k = K - 1; k >= 0; k--)
            CHECK_RC(fmpl_wait(r[k]), FMPL_SUCCESS);
        for (int k = 0; k < K; k++)
            for (size_t i = 0; i < N; i++) {
                double want =
                    k % 2 ? (double)(k + k % size + salt + i % 7)
                          : (double)size * (k + salt + i % 7) + (double)size * (size - 1) / 2;
                CHECK(b[(size_t)k * N + i] == want);
            }
    }
    for (int k = 0; k < K; k++)
        CHECK_RC(fmpl_request_free(&r[k]), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
    free(b);
}

static double now_ms(void)
{
    return fmpl_wtime() * 1e3;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* 1 when a request of n bytes on a communicator with a free board entry (a fresh one, or
 * one whose earlier requests every rank freed) runs on the offload board (which needs CMA
 * above its inline room, FMPL_COLL_SMALL). */
static int on_board(size_t n)
{
    const char *off = getenv("FMPL_COLL_OFFLOAD"), *cma = getenv("FMPL_SHM_CMA");
    return size > 1 && !(off && !strcmp(off, "0")) && (n <= 8192 || !(cma && !strcmp(cma, "0")));
}

/* Rank k sleeps after each start; the others' waits must end before half the delay. */
static void busy_case(void)
{
    int timed = on_board(32768 * sizeof(double));
    enum { N = 32768 }; /* 256 KiB of doubles: over CMA */
    fmpl_comm c;
    CHECK_RC(fmpl_comm_create(W, 0, &c), FMPL_SUCCESS);
    double *a = malloc(N * sizeof *a), *s = malloc(N * sizeof *s);
    CHECK(a && s);
    fmpl_request rb, ra;
    CHECK_RC(fmpl_bcast_init(a, N * sizeof *a, 0, c, &rb), FMPL_SUCCESS);
    CHECK_RC(fmpl_allreduce_init(s, N, FMPL_DOUBLE, FMPL_SUM, c, &ra), FMPL_SUCCESS);
    for (int k = 0; k < size; k++) {
        for (int form = 0; form < 2; form++) {
            for (size_t i = 0; i < N; i++) {
                a[i] = rank == 0 ? (double)(k * 1000 + i % 999) : -1;
                s[i] = (double)(rank + k + i % 5);
            }
            CHECK_RC(fmpl_barrier(c), FMPL_SUCCESS);
            fmpl_request r = form ? ra : rb;
            CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
            if (rank == k)
                sleep_ms(DELAY_MS);
            double t0 = now_ms();
            CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
            double waited = now_ms() - t0;
            if (timed && rank != k && waited > DELAY_MS / 2) {
                fprintf(stderr, "rank %d: %s waited %.1f ms for busy rank %d\n", rank,
                        form ? "allreduce" : "bcast", waited, k);
                exit(1);
            }
            for (size_t i = 0; i < N; i++)
                CHECK(form ? s[i] == (double)size * (k + i % 5) + (double)size * (size - 1) / 2
                           : a[i] == (double)(k * 1000 + i % 999));
        }
    }
    CHECK_RC(fmpl_request_free(&rb), FMPL_SUCCESS);
    CHECK_RC(fmpl_request_free(&ra), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
    free(a);
    free(s);
}

/* Waits for r on a rank other than busy rank k; checks the wait is short when timed. */
static void reuse_wait(fmpl_request r, int k, int t, int timed, const char *what, size_t n)
{
    double t0 = now_ms();
    CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
    double waited = now_ms() - t0;
    if (timed && rank != k && waited > REUSE_DELAY_MS / 2) {
        fprintf(stderr, "rank %d: round %d: %s of %zu B waited %.1f ms for busy rank %d\n", rank, t,
                what, n, waited, k);
        exit(1);
    }
}

/* The requests of a round, in this rank's order (r[0] the bcast, r[1] the allreduce). */
static void reuse_free(fmpl_request *r)
{
    for (int i = 0; i < 2; i++) {
        fmpl_request *q = &r[rank % 2 ? 1 - i : i];
        if (*q != FMPL_REQUEST_NULL)
            CHECK_RC(fmpl_request_free(q), FMPL_SUCCESS);
    }
}

/* Rounds of a bcast (a) and an allreduce in place (s) made, run once and freed on W (see
 * the banner). */
static void reuse_case(void)
{
    static const size_t counts[] = {1, 64, 4097, 1024}; /* doubles: 8 B .. 32 KiB + 8 */
    double *a = malloc(4097 * sizeof *a), *s = malloc(4097 * sizeof *s);
    CHECK(a && s);
    int lazy = size > 2 && rank % 3 == 2;
    fmpl_request kept[2] = {FMPL_REQUEST_NULL, FMPL_REQUEST_NULL};
    for (int t = 0; t < REUSE_ROUNDS; t++) {
        size_t n = counts[t % 4];
        int k = t % size, root = t % 2 ? (k + 1) % size : k, timed = on_board(n * sizeof *a);
        for (size_t i = 0; i < n; i++) {
            a[i] = rank == root ? (double)(t * 1000 + root * 100 + (int)(i % 97)) : -1;
            s[i] = (double)(rank + t + i % 5);
        }
        fmpl_request r[2];
        CHECK_RC(fmpl_bcast_init(a, n * sizeof *a, root, W, &r[0]), FMPL_SUCCESS);
        CHECK_RC(fmpl_allreduce_init(s, n, FMPL_DOUBLE, FMPL_SUM, W, &r[1]), FMPL_SUCCESS);
        if (lazy) /* the last round's, after this round's inits */
            reuse_free(kept);
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);
        CHECK_RC(fmpl_start(r[0]), FMPL_SUCCESS);
        CHECK_RC(fmpl_start(r[1]), FMPL_SUCCESS);
        if (rank == k) {
            if (size > 1)
                sleep_ms(REUSE_DELAY_MS);
            CHECK_RC(fmpl_wait(r[0]), FMPL_SUCCESS);
            CHECK_RC(fmpl_wait(r[1]), FMPL_SUCCESS);
        } else {
            reuse_wait(r[0], k, t, timed, "bcast", n * sizeof *a);
            if (rank == root) /* (k has not read it yet) */
                CHECK_RC(fmpl_request_free(&r[0]), FMPL_SUCCESS);
            reuse_wait(r[1], k, t, timed, "allreduce", n * sizeof *a);
        }
        for (size_t i = 0; i < n; i++) {
            CHECK(a[i] == (double)(t * 1000 + root * 100 + (int)(i % 97)));
            CHECK(s[i] == (double)size * (t + i % 5) + (double)size * (size - 1) / 2);
        }
        if (lazy) {
            kept[0] = r[0];
            kept[1] = r[1];
        } else {
            reuse_free(r);
        }
    }
    reuse_free(kept);
    free(a);
    free(s);
}

/* A bcast of n bytes, n + d at the last rank, on a fresh communicator: it fails at the
 * last rank; on the board the others get the root's data, on the mailboxes a rank below
 * the last one in the tree may fail too (its failure is passed down). */
static void mismatch_case(size_t n, long d)
{
    if (size < 2)
        return;
    fmpl_comm c;
    CHECK_RC(fmpl_comm_create(W, 0, &c), FMPL_SUCCESS);
    int last = rank == size - 1;
    size_t mine = last ? (size_t)((long)n + d) : n;
    unsigned char *b = malloc(n + (d > 0 ? (size_t)d : 0));
    CHECK(b);
    fmpl_request r;
    CHECK_RC(fmpl_bcast_init(b, mine, 0, c, &r), FMPL_SUCCESS);
    for (int salt = 1; salt <= 3; salt++) {
        for (size_t i = 0; i < mine; i++)
            b[i] = rank == 0 ? bval(salt, 0, i) : 0;
        CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
        int rc = fmpl_wait(r);
        if (last) {
            CHECK(rc == FMPL_ERR_TRUNCATE || rc == FMPL_ERR_MISMATCH);
            continue;
        }
        if (!on_board(n) && (rc == FMPL_ERR_TRUNCATE || rc == FMPL_ERR_MISMATCH))
            continue;
        CHECK_RC(rc, FMPL_SUCCESS);
        for (size_t i = 0; i < n; i++)
            CHECK(b[i] == bval(salt, 0, i));
    }
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
    free(b);
}

static void errors(void)
{
    double b[4] = {0};
    fmpl_request r, stale;
    int flag;
    CHECK_RC(fmpl_bcast_init(b, 8, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_bcast_init(b, 8, 0, 77, &r), FMPL_ERR_COMM);
    CHECK_RC(fmpl_bcast_init(b, 8, size, W, &r), FMPL_ERR_ROOT);
    CHECK_RC(fmpl_bcast_init(b, 8, -1, W, &r), FMPL_ERR_ROOT);
    CHECK_RC(fmpl_bcast_init(NULL, 8, 0, W, &r), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allreduce_init(b, 1, 99, FMPL_SUM, W, &r), FMPL_ERR_TYPE);
    CHECK_RC(fmpl_allreduce_init(b, 1, FMPL_DOUBLE, 99, W, &r), FMPL_ERR_OP);
    CHECK_RC(fmpl_allreduce_init(b, 1, FMPL_COMPLEX, FMPL_MAX, W, &r), FMPL_ERR_OP);
    CHECK_RC(fmpl_allreduce_init(NULL, 1, FMPL_DOUBLE, FMPL_SUM, W, &r), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allreduce_init(b, 1, FMPL_DOUBLE, FMPL_SUM, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_start(FMPL_REQUEST_NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_wait(FMPL_REQUEST_NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_test(FMPL_REQUEST_NULL, &flag), FMPL_ERR_ARG);
    CHECK_RC(fmpl_request_free(NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_start(12345), FMPL_ERR_ARG);

    /* states: wait and test with nothing started, start twice, free while running */
    CHECK_RC(fmpl_allreduce_init(b, 4, FMPL_DOUBLE, FMPL_SUM, W, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_test(r, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_wait(r), FMPL_ERR_NO_PENDING);
    CHECK_RC(fmpl_test(r, &flag), FMPL_ERR_NO_PENDING);
    b[0] = b[1] = b[2] = b[3] = 1;
    CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
    CHECK_RC(fmpl_start(r), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_request_free(&r), FMPL_ERR_BUSY);
    CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
    CHECK(b[0] == size && b[3] == size);
    stale = r;
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);
    CHECK_RC(fmpl_start(stale), FMPL_ERR_ARG);
    CHECK_RC(fmpl_request_free(&stale), FMPL_ERR_ARG);
    /* a new request may take the freed entry: the stale handle still names nothing */
    CHECK_RC(fmpl_bcast_init(b, 8, 0, W, &r), FMPL_SUCCESS);
    CHECK(r != stale);
    CHECK_RC(fmpl_wait(stale), FMPL_ERR_ARG);
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);

    /* a zero-size bcast completes at once, and is still a request */
    CHECK_RC(fmpl_bcast_init(NULL, 0, 0, W, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
    CHECK_RC(fmpl_wait(r), FMPL_SUCCESS);
    CHECK_RC(fmpl_request_free(&r), FMPL_SUCCESS);

    /* fmpl_comm_free ends a running request and frees it */
    fmpl_comm c;
    CHECK_RC(fmpl_comm_create(W, 0, &c), FMPL_SUCCESS);
    double v = rank;
    CHECK_RC(fmpl_allreduce_init(&v, 1, FMPL_DOUBLE, FMPL_SUM, c, &r), FMPL_SUCCESS);
    CHECK_RC(fmpl_start(r), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
    CHECK(v == (double)size * (size - 1) / 2);
    CHECK_RC(fmpl_wait(r), FMPL_ERR_ARG);

    mismatch_case(64, 64);          /* inline, larger at the last rank */
    mismatch_case(128, -64);        /* inline, smaller */
    mismatch_case(300000, 40000);   /* over CMA, larger */
    mismatch_case(300000, -100000); /* over CMA, smaller */
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_rank(W, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(W, &size), FMPL_SUCCESS);
    static const size_t bsizes[] = {8, 8192, 8200, (1u << 20) + 8};
    for (size_t si = 0; si < sizeof bsizes / sizeof bsizes[0]; si++)
        for (int root = 0; root < size; root++)
            bcast_case(bsizes[si], root, W);
    fmpl_op user;
    CHECK_RC(fmpl_op_create(user_max, &user), FMPL_SUCCESS);
    static const size_t rsizes[] = {1, 1000, 131073};
    for (size_t si = 0; si < sizeof rsizes / sizeof rsizes[0]; si++)
        for (int kind = 0; kind < 3; kind++)
            allreduce_case(rsizes[si], kind, user);
    mixed_case();
    many_case();
    busy_case();
    reuse_case();
    errors();
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_persist: ok (%d ranks)\n", size);
    return 0;
}
