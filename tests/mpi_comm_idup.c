/* mpi_comm_idup.c — MPI_Comm_idup / MPI_Comm_idup_with_info (MPI-4.0 7.4.2): the new
 * communicator after completion (congruent to its parent, collective and point-to-point
 * on it, its own context: messages never cross between communicators); several idups
 * outstanding at once on one communicator and on others (WORLD, halves, SELF, a dup),
 * completed by Waitall, by a Test loop in reverse order, by Waitany; idups overlapping a
 * blocking MPI_Comm_dup on the same communicator and on communicators sharing members,
 * issued in different orders on different ranks (the context-id agreement must neither
 * deadlock nor hand out a used id); idup_with_info and MPI_Comm_get_info; attributes
 * copied as if by MPI_Comm_dup at the time of the idup call (changes to the parent after
 * the call are not seen, MPI_COMM_NULL_COPY_FN ones not copied, the delete callback
 * runs on free); the parent freed while its idup is pending; idup of an
 * intercommunicator; many idup / free cycles (more context ids in all than an
 * implementation has, so a leak shows). Works from 1 rank. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int me, n;

#define EXPECT(got, want)                                                                          \
    do {                                                                                           \
        long got_ = (long)(got), want_ = (long)(want);                                             \
        if (got_ != want_) {                                                                       \
            fprintf(stderr, "rank %d of %d: %s line %d: %s is %ld, want %ld\n", me, n, __func__,   \
                    __LINE__, #got, got_, want_);                                                  \
            exit(1);                                                                               \
        }                                                                                          \
    } while (0)

/* c is a working duplicate of intracommunicator parent: congruent, same rank and size,
 * an allreduce and a ring exchange on it. */
static void check_dup(MPI_Comm c, MPI_Comm parent, int salt)
{
    int res, r, s, pr, ps, flag;
    CHECK(c != MPI_COMM_NULL && c != parent);
    CHECK_RC(MPI_Comm_compare(parent, c, &res), MPI_SUCCESS);
    EXPECT(res, MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_test_inter(c, &flag), MPI_SUCCESS);
    EXPECT(flag, 0);
    MPI_Comm_rank(c, &r);
    MPI_Comm_size(c, &s);
    MPI_Comm_rank(parent, &pr);
    MPI_Comm_size(parent, &ps);
    EXPECT(r, pr);
    EXPECT(s, ps);
    int v = r * 1000 + salt, sum;
    CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    EXPECT(sum, 1000 * s * (s - 1) / 2 + salt * s);
    int in = -1;
    MPI_Status st;
    CHECK_RC(
        MPI_Sendrecv(&v, 1, MPI_INT, (r + 1) % s, 7, &in, 1, MPI_INT, (r + s - 1) % s, 7, c, &st),
        MPI_SUCCESS);
    EXPECT(in, ((r + s - 1) % s) * 1000 + salt);
    EXPECT(st.MPI_SOURCE, (r + s - 1) % s);
}

/* The k communicators cs (intracommunicators, any mix) have distinct contexts: on each,
 * every rank sends its index to its right neighbour with the same tag, all at once; the
 * receives, from the left neighbour, are posted in reverse order and must each get the
 * index of their own communicator. */
static void check_isolated(int k, const MPI_Comm *cs)
{
    MPI_Request *rq = malloc(2 * (size_t)k * sizeof *rq);
    int *in = malloc((size_t)k * sizeof *in), *out = malloc((size_t)k * sizeof *out);
    CHECK(rq && in && out);
    for (int i = 0; i < k; i++) {
        int r, s;
        MPI_Comm_rank(cs[i], &r);
        MPI_Comm_size(cs[i], &s);
        out[i] = i;
        CHECK_RC(MPI_Isend(&out[i], 1, MPI_INT, (r + 1) % s, 11, cs[i], &rq[k + i]), MPI_SUCCESS);
    }
    for (int i = k - 1; i >= 0; i--) {
        int r, s;
        MPI_Comm_rank(cs[i], &r);
        MPI_Comm_size(cs[i], &s);
        in[i] = -1;
        CHECK_RC(MPI_Irecv(&in[i], 1, MPI_INT, (r + s - 1) % s, 11, cs[i], &rq[i]), MPI_SUCCESS);
    }
    MPI_Status *st = malloc(2 * (size_t)k * sizeof *st);
    CHECK(st);
    CHECK_RC(MPI_Waitall(2 * k, rq, st), MPI_SUCCESS);
    for (int i = 0; i < k; i++)
        EXPECT(in[i], i);
    free(st);
    free(rq);
    free(in);
    free(out);
}

static void free_all(int k, MPI_Comm *cs)
{
    for (int i = 0; i < k; i++) {
        CHECK_RC(MPI_Comm_free(&cs[i]), MPI_SUCCESS);
        CHECK(cs[i] == MPI_COMM_NULL);
    }
}

/* ------------------------------------------------------------------ basic */

static void test_basic(void)
{
    MPI_Comm c, cs;
    MPI_Request rq, rs;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &c, &rq), MPI_SUCCESS);
    CHECK(rq != MPI_REQUEST_NULL);
    /* other traffic on the parent meanwhile: a collective (issued after the idup by every
     * rank) and point-to-point */
    int v = me, sum;
    CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD), MPI_SUCCESS);
    EXPECT(sum, n * (n - 1) / 2);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    CHECK(rq == MPI_REQUEST_NULL);
    check_dup(c, MPI_COMM_WORLD, 1);
    /* a message on c does not match a receive on WORLD: send on both, same tag and
     * peer; receive on WORLD first */
    {
        int a = 100 + me, b = 200 + me, ia = -1, ib = -1, right = (me + 1) % n,
            left = (me + n - 1) % n;
        MPI_Request q[4];
        MPI_Isend(&a, 1, MPI_INT, right, 3, c, &q[0]);
        MPI_Isend(&b, 1, MPI_INT, right, 3, MPI_COMM_WORLD, &q[1]);
        MPI_Irecv(&ib, 1, MPI_INT, left, 3, MPI_COMM_WORLD, &q[2]);
        MPI_Irecv(&ia, 1, MPI_INT, left, 3, c, &q[3]);
        MPI_Status sts[4];
        CHECK_RC(MPI_Waitall(4, q, sts), MPI_SUCCESS);
        EXPECT(ia, 100 + left);
        EXPECT(ib, 200 + left);
    }
    /* SELF */
    CHECK_RC(MPI_Comm_idup(MPI_COMM_SELF, &cs, &rs), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rs, &st), MPI_SUCCESS);
    check_dup(cs, MPI_COMM_SELF, 2);
    /* a duplicate of the duplicate */
    MPI_Comm cc;
    CHECK_RC(MPI_Comm_idup(c, &cc, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    check_dup(cc, c, 3);
    check_dup(cc, MPI_COMM_WORLD, 4);
    MPI_Comm all[4] = {MPI_COMM_WORLD, c, cs, cc};
    check_isolated(4, all);
    free_all(3, all + 1);
}

/* ------------------------------------------------------------------ many outstanding */

#define NOUT 9
/* Starts idups: 4 of WORLD, 2 of the half, 1 of SELF, 2 of d (a dup of WORLD). */
static void start_many(MPI_Comm half, MPI_Comm d, MPI_Comm *out, MPI_Comm *parent, MPI_Request *rq)
{
    MPI_Comm src[NOUT] = {MPI_COMM_WORLD, half, MPI_COMM_WORLD, d, MPI_COMM_SELF, MPI_COMM_WORLD,
                          half,           d,    MPI_COMM_WORLD};
    for (int i = 0; i < NOUT; i++) {
        parent[i] = src[i];
        CHECK_RC(MPI_Comm_idup(src[i], &out[i], &rq[i]), MPI_SUCCESS);
    }
}
static void check_many(MPI_Comm *out, MPI_Comm *parent, MPI_Comm half, MPI_Comm d)
{
    for (int i = 0; i < NOUT; i++)
        check_dup(out[i], parent[i], 10 + i);
    MPI_Comm all[NOUT + 4];
    memcpy(all, out, sizeof(MPI_Comm) * NOUT);
    all[NOUT] = MPI_COMM_WORLD;
    all[NOUT + 1] = half;
    all[NOUT + 2] = d;
    all[NOUT + 3] = MPI_COMM_SELF;
    check_isolated(NOUT + 4, all);
    free_all(NOUT, out);
}

static void test_many(MPI_Comm half)
{
    MPI_Comm d, out[NOUT], parent[NOUT];
    MPI_Request rq[NOUT];
    MPI_Status st[NOUT];
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);

    /* Waitall */
    start_many(half, d, out, parent, rq);
    CHECK_RC(MPI_Waitall(NOUT, rq, st), MPI_SUCCESS);
    for (int i = 0; i < NOUT; i++)
        CHECK(rq[i] == MPI_REQUEST_NULL);
    check_many(out, parent, half, d);

    /* Test loop, last first; the halves' ranks alternate the scan direction */
    start_many(half, d, out, parent, rq);
    for (int left = NOUT, spins = 0; left > 0; spins++) {
        for (int k = 0; k < NOUT; k++) {
            int i = me % 2 ? k : NOUT - 1 - k, flag;
            if (rq[i] == MPI_REQUEST_NULL)
                continue;
            CHECK_RC(MPI_Test(&rq[i], &flag, &st[0]), MPI_SUCCESS);
            if (flag) {
                CHECK(rq[i] == MPI_REQUEST_NULL);
                left--;
            }
        }
        CHECK(spins < 100000000);
    }
    check_many(out, parent, half, d);

    /* Waitany, then Testall for the rest */
    start_many(half, d, out, parent, rq);
    for (int k = 0; k < NOUT / 2; k++) {
        int idx;
        CHECK_RC(MPI_Waitany(NOUT, rq, &idx, &st[0]), MPI_SUCCESS);
        CHECK(idx >= 0 && idx < NOUT && rq[idx] == MPI_REQUEST_NULL);
    }
    for (int flag = 0; !flag;)
        CHECK_RC(MPI_Testall(NOUT, rq, &flag, st), MPI_SUCCESS);
    check_many(out, parent, half, d);

    /* the parent used by a blocking collective and by another idup while pending */
    {
        MPI_Comm a, b;
        MPI_Request q[2];
        CHECK_RC(MPI_Comm_idup(d, &a, &q[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Barrier(d), MPI_SUCCESS);
        int v = 1, sum;
        CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, d), MPI_SUCCESS);
        EXPECT(sum, n);
        CHECK_RC(MPI_Comm_idup(d, &b, &q[1]), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q[1], &st[1]), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q[0], &st[0]), MPI_SUCCESS);
        check_dup(a, d, 30);
        check_dup(b, d, 31);
        MPI_Comm all[3] = {d, a, b};
        check_isolated(3, all);
        free_all(2, all + 1);
    }
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ overlap with dup */

static void test_overlap(MPI_Comm half, MPI_Comm pair)
{
    MPI_Status st[2];
    int color = me % 2;
    /* idup of WORLD, then a blocking dup of the half (whose members are all in WORLD),
     * then the wait */
    {
        MPI_Comm a, b;
        MPI_Request q;
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_dup(half, &b), MPI_SUCCESS);
        check_dup(b, half, 40);
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, MPI_COMM_WORLD, 41);
        MPI_Comm all[4] = {MPI_COMM_WORLD, half, a, b};
        check_isolated(4, all);
        free_all(2, all + 2);
    }
    /* the same, but one half does the blocking dup first and the other the idup first */
    {
        MPI_Comm a, b;
        MPI_Request q;
        if (color == 0) {
            CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q), MPI_SUCCESS);
            CHECK_RC(MPI_Comm_dup(half, &b), MPI_SUCCESS);
        } else {
            CHECK_RC(MPI_Comm_dup(half, &b), MPI_SUCCESS);
            CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q), MPI_SUCCESS);
        }
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, MPI_COMM_WORLD, 42);
        check_dup(b, half, 43);
        MPI_Comm all[4] = {MPI_COMM_WORLD, half, a, b};
        check_isolated(4, all);
        free_all(2, all + 2);
    }
    /* idup of the half, then a blocking dup of WORLD (needs the other half too) */
    {
        MPI_Comm a, b;
        MPI_Request q;
        CHECK_RC(MPI_Comm_idup(half, &a, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &b), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, half, 44);
        check_dup(b, MPI_COMM_WORLD, 45);
        MPI_Comm all[4] = {MPI_COMM_WORLD, half, a, b};
        check_isolated(4, all);
        free_all(2, all + 2);
    }
    /* idup of WORLD, then a blocking dup of WORLD itself, then the wait */
    {
        MPI_Comm a, b;
        MPI_Request q;
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &b), MPI_SUCCESS);
        check_dup(b, MPI_COMM_WORLD, 46);
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, MPI_COMM_WORLD, 47);
        MPI_Comm all[3] = {MPI_COMM_WORLD, a, b};
        check_isolated(3, all);
        free_all(2, all + 1);
    }
    /* crossed: the halves start idups of WORLD and of the half in opposite orders */
    {
        MPI_Comm a, b;
        MPI_Request q[2];
        if (color == 0) {
            CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q[0]), MPI_SUCCESS);
            CHECK_RC(MPI_Comm_idup(half, &b, &q[1]), MPI_SUCCESS);
        } else {
            CHECK_RC(MPI_Comm_idup(half, &b, &q[1]), MPI_SUCCESS);
            CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a, &q[0]), MPI_SUCCESS);
        }
        CHECK_RC(MPI_Waitall(2, q, st), MPI_SUCCESS);
        check_dup(a, MPI_COMM_WORLD, 48);
        check_dup(b, half, 49);
        MPI_Comm all[4] = {MPI_COMM_WORLD, half, a, b};
        check_isolated(4, all);
        free_all(2, all + 2);
    }
    /* overlapping memberships: pair = {2k, 2k+1}, half = same parity: idup of the pair,
     * blocking dup of the half, blocking split of WORLD, then the wait; and the reverse
     * (idup of the half, dup of the pair) */
    {
        MPI_Comm a, b, c;
        MPI_Request q;
        CHECK_RC(MPI_Comm_idup(pair, &a, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_dup(half, &b), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, 0, -me, &c), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, pair, 50);
        check_dup(b, half, 51);
        int r;
        MPI_Comm_rank(c, &r);
        EXPECT(r, n - 1 - me);
        MPI_Comm all[6] = {pair, half, MPI_COMM_WORLD, a, b, c};
        check_isolated(6, all);
        free_all(3, all + 3);
        CHECK_RC(MPI_Comm_idup(half, &a, &q), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_dup(pair, &b), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&q, &st[0]), MPI_SUCCESS);
        check_dup(a, half, 52);
        check_dup(b, pair, 53);
        MPI_Comm all2[4] = {pair, half, a, b};
        check_isolated(4, all2);
        free_all(2, all2 + 2);
    }
}

/* ------------------------------------------------------------------ info */

static void test_info(MPI_Comm half)
{
    MPI_Info in, out;
    MPI_Comm c, c2;
    MPI_Request q[2];
    MPI_Status st[2];
    char v[32];
    int len, flag;
    MPI_Info_create(&in);
    MPI_Info_set(in, "mpi_assert_no_any_tag", "true");
    CHECK_RC(MPI_Comm_idup_with_info(MPI_COMM_WORLD, in, &c, &q[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup_with_info(half, in, &c2, &q[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, q, st), MPI_SUCCESS);
    MPI_Info_free(&in);
    check_dup(c, MPI_COMM_WORLD, 60);
    check_dup(c2, half, 61);
    CHECK_RC(MPI_Comm_get_info(c, &out), MPI_SUCCESS);
    len = sizeof v;
    CHECK_RC(MPI_Info_get_string(out, "mpi_assert_no_any_tag", &len, v, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(v, "true") == 0);
    MPI_Info_free(&out);
    /* MPI_INFO_NULL: no hints given; and idup of a communicator with a hint */
    MPI_Comm c3, c4;
    CHECK_RC(MPI_Comm_idup_with_info(c, MPI_INFO_NULL, &c3, &q[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(c, &c4, &q[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, q, st), MPI_SUCCESS);
    check_dup(c3, MPI_COMM_WORLD, 62);
    check_dup(c4, c, 63);
    CHECK_RC(MPI_Comm_get_info(c3, &out), MPI_SUCCESS);
    CHECK(out != MPI_INFO_NULL);
    MPI_Info_free(&out);
    MPI_Comm all[5] = {c, c2, c3, c4, MPI_COMM_WORLD};
    check_isolated(5, all);
    free_all(4, all);
}

/* ------------------------------------------------------------------ attributes */

static int ncopy, ndel;
static int copy_fn(MPI_Comm oldcomm, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)oldcomm;
    (void)keyval;
    EXPECT((intptr_t)extra, 77);
    ncopy++;
    *(void **)out = (void *)((intptr_t)in + 1);
    *flag = 1;
    return MPI_SUCCESS;
}
static int del_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    (void)val;
    EXPECT((intptr_t)extra, 77);
    ndel++;
    return MPI_SUCCESS;
}

static intptr_t get_attr(MPI_Comm c, int kv, int *flag)
{
    void *v = NULL;
    CHECK_RC(MPI_Comm_get_attr(c, kv, &v, flag), MPI_SUCCESS);
    return *flag ? (intptr_t)v : -1;
}

static void test_attr(void)
{
    int kcopy, knocopy, klate, flag;
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, del_fn, &kcopy, (void *)(intptr_t)77), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, del_fn, &knocopy, (void *)(intptr_t)77),
             MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, del_fn, &klate, (void *)(intptr_t)77), MPI_SUCCESS);
    MPI_Comm d, x, y;
    MPI_Request q[2];
    MPI_Status st[2];
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(d, kcopy, (void *)(intptr_t)10), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(d, knocopy, (void *)(intptr_t)20), MPI_SUCCESS);
    ncopy = ndel = 0;
    CHECK_RC(MPI_Comm_idup(d, &x, &q[0]), MPI_SUCCESS);
    /* MPI-4.0 7.4.2: as if MPI_Comm_dup ran at the call: later changes are not copied */
    CHECK_RC(MPI_Comm_set_attr(d, kcopy, (void *)(intptr_t)30), MPI_SUCCESS); /* deletes 10 */
    CHECK_RC(MPI_Comm_set_attr(d, klate, (void *)(intptr_t)40), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_delete_attr(d, knocopy), MPI_SUCCESS);
    EXPECT(ndel, 2);
    CHECK_RC(MPI_Wait(&q[0], &st[0]), MPI_SUCCESS);
    EXPECT(ncopy, 1); /* kcopy only: done by now, whenever it ran */
    check_dup(x, d, 70);
    EXPECT(get_attr(x, kcopy, &flag), 11);
    EXPECT(flag, 1);
    get_attr(x, knocopy, &flag);
    EXPECT(flag, 0);
    get_attr(x, klate, &flag);
    EXPECT(flag, 0);
    EXPECT(get_attr(d, kcopy, &flag), 30);
    EXPECT(get_attr(d, klate, &flag), 40);
    get_attr(d, knocopy, &flag);
    EXPECT(flag, 0);
    /* an idup of the copy: copies of copies; and of d again with both attributes */
    ncopy = 0;
    CHECK_RC(MPI_Comm_idup(x, &y, &q[0]), MPI_SUCCESS);
    MPI_Comm z;
    CHECK_RC(MPI_Comm_idup(d, &z, &q[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, q, st), MPI_SUCCESS);
    EXPECT(ncopy, 3);
    EXPECT(get_attr(y, kcopy, &flag), 12);
    EXPECT(get_attr(z, kcopy, &flag), 31);
    EXPECT(get_attr(z, klate, &flag), 41);
    ndel = 0;
    CHECK_RC(MPI_Comm_free(&x), MPI_SUCCESS);
    EXPECT(ndel, 1);
    CHECK_RC(MPI_Comm_free(&y), MPI_SUCCESS);
    EXPECT(ndel, 2);
    CHECK_RC(MPI_Comm_free(&z), MPI_SUCCESS);
    EXPECT(ndel, 4);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    EXPECT(ndel, 6);
    MPI_Comm_free_keyval(&kcopy);
    MPI_Comm_free_keyval(&knocopy);
    MPI_Comm_free_keyval(&klate);
}

/* ------------------------------------------------------------------ parent freed */

static void test_parent_freed(void)
{
    /* MPI-4.0 7.4.3 (MPI_Comm_free): pending operations complete normally */
    MPI_Comm d, x;
    MPI_Request q;
    MPI_Status st;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(d, &x, &q), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&q, &st), MPI_SUCCESS);
    check_dup(x, MPI_COMM_WORLD, 80);
    MPI_Comm all[2] = {MPI_COMM_WORLD, x};
    check_isolated(2, all);
    CHECK_RC(MPI_Comm_free(&x), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ intercommunicator */

/* The k intercommunicators ics, all with the groups of ic below (local: my parity of
 * WORLD, remote: the other), work and have distinct contexts: on each at once, every rank
 * sends (index + 1) * 1000 + its world rank to remote rank (local rank % remote size),
 * same tag; receives posted in reverse order. */
static void cross(int k, const MPI_Comm *ics)
{
    int ls, rs, lr;
    MPI_Comm_size(ics[0], &ls);
    MPI_Comm_remote_size(ics[0], &rs);
    MPI_Comm_rank(ics[0], &lr);
    CHECK(k <= 4 && rs <= 64);
    MPI_Request rq[4 * 65];
    int in[4][64], out[4], nr = 0;
    for (int c = k - 1; c >= 0; c--)
        for (int r = 0; r < rs; r++)
            if (r % ls == lr) {
                in[c][r] = -1;
                MPI_Irecv(&in[c][r], 1, MPI_INT, r, 1, ics[c], &rq[nr++]);
            }
    for (int c = 0; c < k; c++) {
        out[c] = (c + 1) * 1000 + me;
        MPI_Isend(&out[c], 1, MPI_INT, lr % rs, 1, ics[c], &rq[nr++]);
    }
    MPI_Status st[4 * 65];
    CHECK_RC(MPI_Waitall(nr, rq, st), MPI_SUCCESS);
    for (int c = 0; c < k; c++)
        for (int r = 0; r < rs; r++)
            if (r % ls == lr) /* remote rank r is world rank 2r + the other parity */
                EXPECT(in[c][r], (c + 1) * 1000 + 2 * r + 1 - me % 2);
}

static void test_inter(MPI_Comm half)
{
    if (n < 2)
        return;
    int side = me % 2, flag, res, k;
    MPI_Comm ic, a, b, c;
    MPI_Request q[3];
    MPI_Status st[3];
    CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 5, &ic), MPI_SUCCESS);
    MPI_Info in;
    MPI_Info_create(&in);
    MPI_Info_set(in, "mpi_assert_no_any_source", "true");
    CHECK_RC(MPI_Comm_idup(ic, &a, &q[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(half, &b, &q[1]), MPI_SUCCESS); /* the local group, meanwhile */
    CHECK_RC(MPI_Comm_idup_with_info(ic, in, &c, &q[2]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(3, q, st), MPI_SUCCESS);
    MPI_Info_free(&in);
    MPI_Comm ics[2] = {a, c};
    for (int i = 0; i < 2; i++) {
        CHECK_RC(MPI_Comm_test_inter(ics[i], &flag), MPI_SUCCESS);
        EXPECT(flag, 1);
        CHECK_RC(MPI_Comm_compare(ic, ics[i], &res), MPI_SUCCESS);
        EXPECT(res, MPI_CONGRUENT);
        MPI_Comm_remote_size(ics[i], &k);
        EXPECT(k, n / 2 + (side == 0 ? 0 : n % 2));
        MPI_Comm_size(ics[i], &k);
        EXPECT(k, (n + 1 - side) / 2);
        MPI_Comm_rank(ics[i], &k);
        EXPECT(k, me / 2);
    }
    check_dup(b, half, 90);
    /* all three intercommunicators at once, same tag: no crossing */
    MPI_Comm all[3] = {ic, a, c};
    cross(3, all);
    /* merge of an idup'ed intercommunicator works */
    {
        MPI_Comm m;
        CHECK_RC(MPI_Intercomm_merge(a, side, &m), MPI_SUCCESS);
        MPI_Comm_size(m, &k);
        EXPECT(k, n);
        int v = 1, sum;
        CHECK_RC(MPI_Allreduce(&v, &sum, 1, MPI_INT, MPI_SUM, m), MPI_SUCCESS);
        EXPECT(sum, n);
        CHECK_RC(MPI_Comm_free(&m), MPI_SUCCESS);
    }
    CHECK_RC(MPI_Comm_free(&a), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&b), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&ic), MPI_SUCCESS);
}

/* ------------------------------------------------------------------ cycles */

/* idup / free cycles, to catch context ids that are not returned: `cycles` times 3
 * communicators (WORLD, the half, SELF; default 100, the first argument sets it: 700
 * make 2100 context ids in all, more than FMPL's 2048 or MPICH's, so a leak of one per
 * idup fails, but take MPICH oversubscribed over a minute), then 2100 idups of SELF
 * (local, cheap) in batches of 3. */
static void test_cycles(MPI_Comm half, int cycles)
{
    for (int i = 0; i < cycles; i++) {
        MPI_Comm c[3];
        MPI_Request q[3];
        MPI_Status st[3];
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &c[0], &q[0]), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_idup(half, &c[1], &q[1]), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_idup(MPI_COMM_SELF, &c[2], &q[2]), MPI_SUCCESS);
        if (i % 2) {
            CHECK_RC(MPI_Waitall(3, q, st), MPI_SUCCESS);
        } else {
            for (int k = 2; k >= 0; k--)
                CHECK_RC(MPI_Wait(&q[k], &st[k]), MPI_SUCCESS);
        }
        if (i % 100 == 99) {
            check_dup(c[0], MPI_COMM_WORLD, i);
            MPI_Comm all[5] = {c[0], c[1], c[2], MPI_COMM_WORLD, half};
            check_isolated(5, all);
        }
        free_all(3, c);
    }
    for (int i = 0; i < 700; i++) {
        MPI_Comm c[3];
        MPI_Request q[3];
        MPI_Status st[3];
        for (int k = 0; k < 3; k++)
            CHECK_RC(MPI_Comm_idup(MPI_COMM_SELF, &c[k], &q[k]), MPI_SUCCESS);
        CHECK_RC(MPI_Waitall(3, q, st), MPI_SUCCESS);
        if (i % 100 == 99) {
            MPI_Comm all[4] = {c[0], c[1], c[2], MPI_COMM_SELF};
            check_isolated(4, all);
        }
        free_all(3, c);
    }
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
    check_dup(c, MPI_COMM_WORLD, 99);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    CHECK(n <= 64);
    MPI_Comm half, pair;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me / 2, me, &pair), MPI_SUCCESS);
    double t[8];
    int nt = 0;
    t[nt++] = MPI_Wtime();
    test_basic();
    t[nt++] = MPI_Wtime();
    test_many(half);
    t[nt++] = MPI_Wtime();
    test_overlap(half, pair);
    t[nt++] = MPI_Wtime();
    test_info(half);
    test_attr();
    test_parent_freed();
    test_inter(half);
    t[nt++] = MPI_Wtime();
    test_cycles(half, argc > 1 ? atoi(argv[1]) : 100);
    t[nt++] = MPI_Wtime();
    CHECK_RC(MPI_Comm_free(&pair), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_comm_idup: ok at %d ranks (basic %.2f s, many %.2f, overlap %.2f, "
               "info/attr/inter %.2f, cycles %.2f)\n",
               n, t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3], t[5] - t[4]);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
