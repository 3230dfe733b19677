/* mpi_coll_persist.c — MPI-4.0 persistent collectives (MPI_Barrier_init …
 * MPI_Exscan_init, then MPI_Start / MPI_Startall, completion, MPI_Request_free) on
 * intracommunicators; the cases and checks are in mpi_coll_common.h (every function,
 * every root, sizes 0 / 1 / 7 / large, vector and resized-struct types with gaps,
 * MPI_IN_PLACE where allowed, exact reductions of every predefined op class, a
 * non-commutative user op, MINLOC/MAXLOC). Here: each case initialized once and started
 * several times with different buffer contents, checked after every start; waiting on /
 * testing an inactive request gives the empty status and leaves the request; MPI_Startall
 * over batches of requests on one and on two communicators, and each rank starting them
 * in its own order (MPI-4.0 6.13: the order of starts may differ between processes),
 * completed in reverse order with the completion functions; MPI_Request_free of inactive
 * requests, started or never started; an info object; overlap with point-to-point
 * traffic, MPI_I* and blocking collectives; argument errors of the *_init calls. All of it
 * on MPI_COMM_WORLD, then on a split communicator with reversed rank order. */
#include "mpi_coll_common.h"

/* An inactive persistent request: the completion functions return at once with the empty
 * status and leave it as it is (MPI-4.0 3.7.3, 3.7.5). */
static void check_inactive(MPI_Request *r)
{
    MPI_Request keep = *r;
    MPI_Status st;
    int flag = 0, idx = 0, outc = 0;
    st_poison(&st);
    CHECK_RC(MPI_Wait(r, &st), MPI_SUCCESS);
    st_check_empty(&st);
    st_poison(&st);
    CHECK_RC(MPI_Test(r, &flag, &st), MPI_SUCCESS);
    CHECK(flag);
    st_check_empty(&st);
    st_poison(&st), flag = 0;
    CHECK_RC(MPI_Request_get_status(*r, &flag, &st), MPI_SUCCESS);
    CHECK(flag);
    st_check_empty(&st);
    if (!MPICH_BUGS) { /* MPICH 4.0.2 reports the inactive request as completed */
        st_poison(&st);
        CHECK_RC(MPI_Waitany(1, r, &idx, &st), MPI_SUCCESS);
        CHECK(idx == MPI_UNDEFINED);
        st_check_empty(&st);
        st_poison(&st), flag = 0;
        CHECK_RC(MPI_Testany(1, r, &idx, &flag, &st), MPI_SUCCESS);
        CHECK(flag && idx == MPI_UNDEFINED);
        st_check_empty(&st);
        CHECK_RC(MPI_Testsome(1, r, &outc, &idx, &st), MPI_SUCCESS);
        CHECK(outc == MPI_UNDEFINED);
    }
    st_poison(&st);
    CHECK_RC(MPI_Waitall(1, r, &st), MPI_SUCCESS);
    st_check_empty(&st);
    CHECK(*r == keep);
}

/* every stride-th case alone: initialized, started `starts` times with new data, freed */
static void test_each(int stride, int starts)
{
    for (int i = 0; i < ncases; i += stride) {
        cc_t *c = &cases[i];
        c->comm = MPI_COMM_NULL;
        cc_setup(c);
        cc_fill(c, -1);
        CHECK_RC(cc_post(c), MPI_SUCCESS);
        CHECK(c->req != MPI_REQUEST_NULL);
        if (i % 5 == 0 && !MPICH_BUGS) /* MPICH 4.0.2 hangs on a never-started request */
            check_inactive(&c->req);
        for (int it = 0; it < starts; it++) {
            int salt = i * 7 + it;
            cc_fill(c, salt);
            CHECK_RC(MPI_Start(&c->req), MPI_SUCCESS);
            complete1(&c->req, i + it);
            cc_check(c, salt);
        }
        if (i % 5 == 1)
            check_inactive(&c->req);
        CHECK_RC(MPI_Request_free(&c->req), MPI_SUCCESS);
        CHECK(c->req == MPI_REQUEST_NULL);
        cc_free(c);
    }
}

/* start requests: MPI_Startall, or MPI_Start one by one in an order that differs between
 * ranks (odd ranks backwards) */
static void start_n(MPI_Request *r, int m, int how)
{
    if (how % 3 == 0) {
        CHECK_RC(MPI_Startall(m, r), MPI_SUCCESS);
    } else if (how % 3 == 1) {
        for (int i = 0; i < m; i++)
            CHECK_RC(MPI_Start(&r[rank % 2 ? m - 1 - i : i]), MPI_SUCCESS);
    } else { /* Startall over a rank-dependent rotation */
        MPI_Request *q = xmalloc((size_t)m * sizeof *q);
        for (int i = 0; i < m; i++)
            q[i] = r[(i + rank) % m];
        CHECK_RC(MPI_Startall(m, q), MPI_SUCCESS);
        for (int i = 0; i < m; i++)
            CHECK(q[i] == r[(i + rank) % m]);
        free(q);
    }
}

/* batches of k persistent requests, every other one on `other` when given: initialized
 * together, started together `starts` times, freed */
static void test_startall(MPI_Comm other, int k, int starts, int salt0)
{
    MPI_Request *r = xmalloc((size_t)k * sizeof *r);
    for (int b = 0, nb = 0; b < ncases; b += k, nb++) {
        int m = ncases - b < k ? ncases - b : k;
        for (int i = 0; i < m; i++) {
            cc_t *c = &cases[b + i];
            c->comm = other != MPI_COMM_NULL && i % 2 ? other : MPI_COMM_NULL;
            cc_setup(c);
            cc_fill(c, -1);
            CHECK_RC(cc_post(c), MPI_SUCCESS);
            r[i] = c->req;
        }
        for (int it = 0; it < starts; it++) {
            int salt = salt0 + b * 5 + it;
            for (int i = 0; i < m; i++)
                cc_fill(&cases[b + i], salt + i);
            start_n(r, m, nb + it);
            complete_n(r, m, nb + 2 * it);
            for (int i = 0; i < m; i++) {
                CHECK(r[i] == cases[b + i].req);
                cc_check(&cases[b + i], salt + i);
            }
        }
        for (int i = 0; i < m; i++) {
            CHECK_RC(MPI_Request_free(&r[m - 1 - i]), MPI_SUCCESS);
            CHECK(r[m - 1 - i] == MPI_REQUEST_NULL);
            cc_free(&cases[b + i]);
        }
    }
    free(r);
}

/* MPI_Request_free of requests never started, among started ones; an info object, freed
 * right after the *_init calls */
static void test_free_unstarted(void)
{
    MPI_Info info;
    CHECK_RC(MPI_Info_create(&info), MPI_SUCCESS);
    CHECK_RC(MPI_Info_set(info, "fmpl_test_hint", "yes"), MPI_SUCCESS);
    for (int it = 0; it < 4; it++) {
        cc_t c[4] = {mk(K_ALLREDUCE, 7, 0, 0, 0, it % 2, RT_MAT, O_MAT),
                     mk(K_SCATTERV, 7, it % size, 1, 2, 0, 0, 0),
                     mk(K_EXSCAN, 7, 0, 0, 0, 0, RT_INT, O_BXOR),
                     mk(K_BARRIER, 0, 0, 0, 0, 0, 0, 0)};
        cinfo = it % 2 ? info : MPI_INFO_NULL;
        for (int i = 0; i < 4; i++) {
            cc_setup(&c[i]);
            cc_fill(&c[i], -1);
            CHECK_RC(cc_post(&c[i]), MPI_SUCCESS);
        }
        cinfo = MPI_INFO_NULL;
        /* free the it-th and the (it+2)-th without starting them */
        int f1 = it % 4, f2 = (it + 2) % 4;
        CHECK_RC(MPI_Request_free(&c[f1].req), MPI_SUCCESS);
        CHECK(c[f1].req == MPI_REQUEST_NULL);
        for (int rep = 0; rep < 2; rep++)
            for (int i = 0; i < 4; i++)
                if (i != f1 && i != f2) {
                    cc_fill(&c[i], it * 10 + rep);
                    CHECK_RC(MPI_Start(&c[i].req), MPI_SUCCESS);
                    complete1(&c[i].req, it + rep);
                    cc_check(&c[i], it * 10 + rep);
                }
        for (int i = 0; i < 4; i++) {
            if (i != f1)
                CHECK_RC(MPI_Request_free(&c[i].req), MPI_SUCCESS);
            CHECK(c[i].req == MPI_REQUEST_NULL);
            cc_free(&c[i]);
        }
    }
    CHECK_RC(MPI_Info_free(&info), MPI_SUCCESS);
}

/* persistent collectives active together with point-to-point traffic (a wildcard receive
 * posted first must get the point-to-point message), an MPI_I* collective and blocking
 * collectives */
static void test_overlap(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    cc_t a = mk(K_ALLREDUCE, 3000, 0, 0, 0, 1, RT_INT, O_SUM);
    cc_t b = mk(K_ALLTOALLV, 100, 0, 1, 0, 0, 0, 0);
    cc_t g = mk(K_GATHERV, 7, size - 1, 2, 0, 0, 0, 0);
    cc_setup(&a), cc_setup(&b), cc_setup(&g);
    cc_fill(&a, -1), cc_fill(&b, -1), cc_fill(&g, -1);
    CHECK_RC(cc_post(&a), MPI_SUCCESS);
    CHECK_RC(cc_post(&b), MPI_SUCCESS);
    CHECK_RC(cc_post(&g), MPI_SUCCESS);
    for (int it = 0; it < 10; it++) {
        enum { NP = 500 };
        int in[NP], out[NP];
        for (int j = 0; j < NP; j++)
            out[j] = val(rank, (size_t)j, it);
        MPI_Request r[5];
        MPI_Status st[5];
        for (int i = 0; i < 5; i++)
            st_poison(&st[i]);
        CHECK_RC(MPI_Irecv(in, NP, MPI_INT, MPICH_BUGS ? left : MPI_ANY_SOURCE,
                           MPICH_BUGS ? it : MPI_ANY_TAG, comm, &r[0]),
                 MPI_SUCCESS);
        cc_fill(&a, it), cc_fill(&b, it), cc_fill(&g, it);
        r[1] = a.req, r[2] = b.req;
        start_n(&r[1], 2, it);
        CHECK_RC(MPI_Isend(out, NP, MPI_INT, right, it, comm, &r[3]), MPI_SUCCESS);
        /* an MPI_I* collective and a blocking one while they are active */
        persistent = 0;
        cc_t nb = mk(K_ALLGATHERV, 7, 0, 0, 2, it % 2, 0, 0);
        cc_go(&nb, it);
        persistent = 1;
        int x = rank, y = -1;
        CHECK_RC(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_MAX, comm), MPI_SUCCESS);
        CHECK(y == size - 1);
        CHECK_RC(MPI_Start(&g.req), MPI_SUCCESS);
        r[4] = g.req;
        if (it % 2) {
            CHECK_RC(MPI_Waitall(5, r, st), MPI_SUCCESS);
        } else {
            int done = 0;
            while (!done)
                CHECK_RC(testall_(5, r, &done, st), MPI_SUCCESS);
        }
        CHECK(r[0] == MPI_REQUEST_NULL && r[3] == MPI_REQUEST_NULL);
        CHECK(r[1] == a.req && r[2] == b.req && r[4] == g.req);
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == it);
        st_check_coll(&st[1]), st_check_coll(&st[2]), st_check_coll(&st[4]);
        CHECK_RC(MPI_Wait(&nb.req, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(nb.req == MPI_REQUEST_NULL);
        cc_check(&a, it), cc_check(&b, it), cc_check(&g, it), cc_check(&nb, it);
        cc_free(&nb);
        for (int j = 0; j < NP; j++)
            CHECK(in[j] == val(left, (size_t)j, it));
    }
    CHECK_RC(MPI_Request_free(&a.req), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&g.req), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&b.req), MPI_SUCCESS);
    cc_free(&a), cc_free(&b), cc_free(&g);
}

/* thin: keep every thin-th optional case; light: only the batches on two communicators */
static void run_all(const char *what, int thin, int light)
{
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double t0 = MPI_Wtime();
    build_cases(thin);
    if (!light)
        PHASE(test_each(size > 4 ? 6 : size > 2 ? 2 : 1, size > 4 ? 2 : 3));
    MPI_Comm rev;
    CHECK_RC(MPI_Comm_split(comm, 0, size - rank, &rev), MPI_SUCCESS);
    if (!light && size <= 4) /* (time: with more, only the two-communicator batches) */
        PHASE(test_startall(MPI_COMM_NULL, 5, 2, 100000));
    PHASE(test_startall(rev, 6, 2, 200000));
    CHECK_RC(MPI_Comm_free(&rev), MPI_SUCCESS);
    PHASE(test_free_unstarted());
    PHASE(test_overlap());
    PHASE(test_errors());
    CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    if (rank == 0)
        printf("%s: %s (%d ranks, %d cases) ok, %.1f s\n", prog, what, size, ncases,
               MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    common_init(&argc, &argv, "mpi_coll_persist");
    persistent = 1;
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    comm = MPI_COMM_WORLD;
    run_all("MPI_COMM_WORLD", wsize <= 3 ? 1 : wsize <= 5 ? 2 : 4, 0);
    if (wsize > 2 && wsize <= 5) { /* a split communicator, reversed order (time: not at 8) */
        MPI_Comm sub;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &sub), MPI_SUCCESS);
        comm = sub;
        run_all(wrank % 2 ? "split odd" : "split even", wsize <= 3 ? 2 : 4, wsize > 3);
        MPI_Comm_free(&sub);
        comm = MPI_COMM_WORLD;
    }
    common_finalize();
    return 0;
}
