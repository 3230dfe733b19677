/* fmpl_comm.c — communicators: comm_create with several keys and FMPL_UNDEFINED (sizes,
 * ranks in parent order), point-to-point, any-source and collectives on the
 * sub-communicators, a communicator made from a sub-communicator, freeing (WORLD and
 * stale handles refused), context ids recycled over many create/free rounds, bad keys. */
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    fmpl_comm c = 12345, d;
    fmpl_status st;

    /* ---- bad arguments ---- */
    CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, -5, &c), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, 0, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_comm_create(77, 0, &c), FMPL_ERR_COMM);
    CHECK_RC(fmpl_comm_create(FMPL_COMM_NULL, 0, &c), FMPL_ERR_COMM);
    CHECK(c == 12345);
    fmpl_comm w = FMPL_COMM_WORLD;
    CHECK_RC(fmpl_comm_free(&w), FMPL_ERR_COMM);
    CHECK(w == FMPL_COMM_WORLD);
    CHECK_RC(fmpl_comm_free(NULL), FMPL_ERR_ARG);
    fmpl_comm bogus = 200;
    CHECK_RC(fmpl_comm_free(&bogus), FMPL_ERR_COMM);

    /* ---- split by rank % 3; rank 1 stays out ---- */
    int key = rank == 1 ? FMPL_UNDEFINED : rank % 3;
    CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, key, &c), FMPL_SUCCESS);
    if (key == FMPL_UNDEFINED) {
        CHECK(c == FMPL_COMM_NULL);
        CHECK_RC(fmpl_barrier(c), FMPL_ERR_COMM);
    } else {
        int cr, cs, expect_size = 0, expect_rank = 0;
        for (int r = 0; r < size; r++) {
            int k = r == 1 ? FMPL_UNDEFINED : r % 3;
            if (k == key) {
                if (r < rank)
                    expect_rank++;
                expect_size++;
            }
        }
        CHECK_RC(fmpl_comm_rank(c, &cr), FMPL_SUCCESS);
        CHECK_RC(fmpl_comm_size(c, &cs), FMPL_SUCCESS);
        CHECK(cr == expect_rank && cs == expect_size && c != FMPL_COMM_WORLD);
        /* Membership: the sum of world ranks over the communicator. */
        long sum = rank, expect_sum = 0;
        for (int r = 0; r < size; r++)
            if ((r == 1 ? FMPL_UNDEFINED : r % 3) == key)
                expect_sum += r;
        CHECK_RC(fmpl_allreduce(&sum, 1, FMPL_INT64, FMPL_SUM, c, NULL), FMPL_SUCCESS);
        CHECK(sum == expect_sum);
        /* Ring p2p in the sub-communicator, ranks are sub-communicator ranks. */
        int right = (cr + 1) % cs, left = (cr + cs - 1) % cs;
        long in = -1, out = 1000L * rank + 7;
        CHECK_RC(fmpl_irecv(&in, sizeof in, left, 2, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&out, sizeof out, right, 2, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 2, c, &st), FMPL_SUCCESS);
        CHECK(st.source == left && st.mai == 2);
        long lw = in / 1000; /* the left neighbour's world rank */
        CHECK(in == 1000L * lw + 7 && (lw == 1 ? FMPL_UNDEFINED : (int)(lw % 3)) == key);
        CHECK_RC(fmpl_send(&out, sizeof out, cs, 2, c), FMPL_ERR_RANK);
        /* Truncation and busy areas behave as in WORLD. */
        int a = -1, va = 1;
        char big[16] = {0};
        CHECK_RC(fmpl_irecv(&a, sizeof a, left, 4, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(&a, sizeof a, left, 4, c), FMPL_ERR_BUSY);
        CHECK_RC(fmpl_send(big, sizeof big, right, 4, c), FMPL_ERR_TRUNCATE);
        CHECK_RC(fmpl_irecv_wait(left, 4, c, &st), FMPL_ERR_TRUNCATE);
        CHECK(st.size == sizeof a);
        CHECK_RC(fmpl_irecv(&a, sizeof a, left, 4, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&va, sizeof va, right, 4, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 4, c, &st), FMPL_SUCCESS);
        CHECK(a == 1);
        /* Any-source on the sub-communicator: the sender's rank is its rank in c. */
        int x = 100 + cr, y = -1;
        CHECK_RC(fmpl_send_any(&x, sizeof x, right, 1, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_recv_any(&y, sizeof y, 1, c, &st), FMPL_SUCCESS);
        CHECK(y == 100 + left && st.source == left);
        /* Broadcast from the last rank. */
        int bv = cr == cs - 1 ? 4242 : 0;
        CHECK_RC(fmpl_bcast(&bv, sizeof bv, cs - 1, c), FMPL_SUCCESS);
        CHECK(bv == 4242);
        CHECK_RC(fmpl_bcast(&bv, sizeof bv, cs, c), FMPL_ERR_ROOT);

        /* ---- a communicator from the sub-communicator: halves ---- */
        CHECK_RC(fmpl_comm_create(c, cr < cs / 2 ? 0 : 1, &d), FMPL_SUCCESS);
        int dr, ds;
        CHECK_RC(fmpl_comm_rank(d, &dr), FMPL_SUCCESS);
        CHECK_RC(fmpl_comm_size(d, &ds), FMPL_SUCCESS);
        CHECK(ds == (cr < cs / 2 ? cs / 2 : cs - cs / 2));
        CHECK(dr == (cr < cs / 2 ? cr : cr - cs / 2));
        int one = 1;
        CHECK_RC(fmpl_allreduce(&one, 1, FMPL_INT32, FMPL_SUM, d, NULL), FMPL_SUCCESS);
        CHECK(one == ds);
        CHECK_RC(fmpl_comm_free(&d), FMPL_SUCCESS);
        CHECK(d == FMPL_COMM_NULL);
        CHECK_RC(fmpl_comm_free(&c), FMPL_SUCCESS);
        CHECK(c == FMPL_COMM_NULL);
    }
    /* A freed handle is refused. */
    fmpl_comm stale = 1;
    int dummy;
    CHECK_RC(fmpl_comm_size(stale, &dummy), FMPL_ERR_COMM);

    /* ---- everyone the same key: a copy of WORLD; p2p with the same mai as WORLD ---- */
    CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, 7, &c), FMPL_SUCCESS);
    {
        int cs, cr;
        CHECK_RC(fmpl_comm_size(c, &cs), FMPL_SUCCESS);
        CHECK_RC(fmpl_comm_rank(c, &cr), FMPL_SUCCESS);
        CHECK(cs == size && cr == rank);
        int right = (rank + 1) % size, left = (rank + size - 1) % size;
        int in1 = -1, in2 = -1, o1 = 10 + rank, o2 = 20 + rank;
        CHECK_RC(fmpl_irecv(&in1, sizeof in1, left, 0, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv(&in2, sizeof in2, left, 0, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&o2, sizeof o2, right, 0, FMPL_COMM_WORLD), FMPL_SUCCESS);
        CHECK_RC(fmpl_send(&o1, sizeof o1, right, 0, c), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 0, FMPL_COMM_WORLD, &st), FMPL_SUCCESS);
        CHECK_RC(fmpl_irecv_wait(left, 0, c, &st), FMPL_SUCCESS);
        CHECK(in1 == 10 + left && in2 == 20 + left);
    }
    /* ---- context ids are recycled: many more create/free rounds than contexts ---- */
    for (int i = 0; i < 300; i++) {
        CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, (rank + i) % 2, &d), FMPL_SUCCESS);
        CHECK(d != FMPL_COMM_NULL);
        if (i % 50 == 0) {
            int v = 1;
            CHECK_RC(fmpl_allreduce(&v, 1, FMPL_INT32, FMPL_SUM, d, NULL), FMPL_SUCCESS);
            int ds;
            CHECK_RC(fmpl_comm_size(d, &ds), FMPL_SUCCESS);
            CHECK(v == ds);
        }
        CHECK_RC(fmpl_comm_free(&d), FMPL_SUCCESS);
    }
    /* ---- as many live communicators as there are collective slots, then a clear error;
     * collectives on all of them interleaved (each has its own slot) ---- */
    {
        enum { MAXC = 64 };
        fmpl_comm live[MAXC];
        int n = 0, rc;
        while ((rc = fmpl_comm_create(FMPL_COMM_WORLD, 0, &live[n])) == FMPL_SUCCESS) {
            CHECK(live[n] != FMPL_COMM_NULL);
            CHECK(++n < MAXC);
        }
        CHECK_RC(rc, FMPL_ERR_NOMEM);
        CHECK(n >= 8); /* FMPL_COLL_GROUPS (16 by default) minus WORLD and c */
        for (int round = 0; round < 3; round++)
            for (int i = 0; i < n; i++) {
                int v = i + round;
                CHECK_RC(fmpl_allreduce(&v, 1, FMPL_INT32, FMPL_SUM, live[i], NULL), FMPL_SUCCESS);
                CHECK(v == (i + round) * size);
            }
        for (int i = 0; i < n; i++)
            CHECK_RC(fmpl_comm_free(&live[i]), FMPL_SUCCESS);
        CHECK_RC(fmpl_comm_create(FMPL_COMM_WORLD, 0, &d), FMPL_SUCCESS);
        CHECK_RC(fmpl_comm_free(&d), FMPL_SUCCESS);
    }
    /* c is left for fmpl_finalize to free. */
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_comm: ok (%d ranks)\n", size);
    return 0;
}
