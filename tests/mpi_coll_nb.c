/* mpi_coll_nb.c — MPI-3 nonblocking collectives (MPI_Ibarrier … MPI_Iexscan) on
 * intracommunicators; the cases and checks are in mpi_coll_common.h (every function, every
 * root, sizes 0 / 1 / 7 / large, vector and resized-struct types with gaps, MPI_IN_PLACE
 * where allowed, exact reductions of every predefined op class, a non-commutative user
 * op, MINLOC/MAXLOC). Here: each case alone, completed with each completion function;
 * batches of cases outstanding at once on one and on two communicators, completed in
 * reverse order (Waitall, Testall, Test loops, Waitany, Testsome); overlap with
 * point-to-point traffic (wildcard receives must not match collective traffic) and with
 * blocking collectives; MPI_Ibarrier not completing before everybody entered; datatype,
 * op and communicator freed while the operation is pending; argument errors. All of it
 * on MPI_COMM_WORLD, then on a split communicator with reversed rank order. */
#include "mpi_coll_common.h"

#include <time.h>

/* every stride-th case alone */
static void test_each(int stride)
{
    for (int i = 0; i < ncases; i += stride) {
        cc_t *c = &cases[i];
        c->comm = MPI_COMM_NULL;
        cc_setup(c);
        cc_fill(c, i);
        CHECK_RC(cc_post(c), MPI_SUCCESS);
        complete1(&c->req, i);
        cc_check(c, i);
        cc_free(c);
    }
}

/* k cases outstanding at once, every other one on `other` when given */
static void test_batches(MPI_Comm other, int k, int salt)
{
    MPI_Request *r = xmalloc((size_t)k * sizeof *r);
    for (int b = 0, nb = 0; b < ncases; b += k, nb++) {
        int m = ncases - b < k ? ncases - b : k;
        for (int i = 0; i < m; i++) {
            cc_t *c = &cases[b + i];
            c->comm = other != MPI_COMM_NULL && i % 2 ? other : MPI_COMM_NULL;
            cc_setup(c);
            cc_fill(c, salt + b + i);
            CHECK_RC(cc_post(c), MPI_SUCCESS);
            r[i] = c->req;
        }
        complete_n(r, m, nb);
        for (int i = 0; i < m; i++) {
            cc_check(&cases[b + i], salt + b + i);
            cc_free(&cases[b + i]);
        }
    }
    free(r);
}

/* many small operations outstanding at once on one communicator */
static void test_many(void)
{
    enum { M = 64 };
    MPI_Request r[M];
    cc_t c[M];
    for (int i = 0; i < M; i++) {
        c[i] = i % 4 == 0   ? mk(K_BCAST, 3, i % size, i % 3, i % 3, 0, 0, 0)
               : i % 4 == 1 ? mk(K_ALLREDUCE, 5, 0, 0, 0, i % 8 == 1, RT_MAT, O_MAT)
               : i % 4 == 2 ? mk(K_ALLTOALL, 2, 0, 0, 1, 0, 0, 0)
                            : mk(K_SCAN, 4, 0, 0, 0, 0, RT_INT, O_SUM);
        cc_setup(&c[i]);
        cc_fill(&c[i], 1000 + i);
        CHECK_RC(cc_post(&c[i]), MPI_SUCCESS);
        r[i] = c[i].req;
    }
    complete_n(r, M, 0);
    for (int i = 0; i < M; i++) {
        cc_check(&c[i], 1000 + i);
        cc_free(&c[i]);
    }
}

/* point-to-point traffic around and between pending collectives: wildcard receives posted
 * before the collectives must get only the point-to-point messages */
static void test_p2p_overlap(void)
{
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    for (int it = 0; it < 12; it++) {
        enum { NP = 1000 };
        int *in1 = xmalloc(NP * sizeof(int)), *in2 = xmalloc(NP * sizeof(int));
        int *out1 = xmalloc(NP * sizeof(int)), *out2 = xmalloc(NP * sizeof(int));
        for (int j = 0; j < NP; j++)
            out1[j] = val(rank, (size_t)j, it), out2[j] = -val(rank, (size_t)j, it);
        MPI_Request r[6];
        CHECK_RC(MPI_Irecv(in1, NP, MPI_INT, MPI_ANY_SOURCE, MPI_ANY_TAG, comm, &r[0]),
                 MPI_SUCCESS);
        cc_t a = mk(K_ALLREDUCE, it % 2 ? 7 : 3000, 0, 0, 0, it % 3 == 0, RT_INT, O_SUM);
        cc_t b = mk(K_ALLTOALLV, it % 2 ? 1 : 200, 0, 1, 0, 0, 0, 0);
        cc_t c = mk(K_BCAST, 50, it % size, 2, 2, 0, 0, 0);
        cc_go(&a, it);
        CHECK_RC(MPI_Isend(out1, NP, MPI_INT, right, it, comm, &r[1]), MPI_SUCCESS);
        cc_go(&b, it);
        CHECK_RC(MPI_Irecv(in2, NP, MPI_INT, left, MPI_ANY_TAG, comm, &r[2]), MPI_SUCCESS);
        cc_go(&c, it);
        CHECK_RC(MPI_Isend(out2, NP, MPI_INT, right, it + 100, comm, &r[3]), MPI_SUCCESS);
        r[4] = a.req, r[5] = b.req;
        MPI_Request cr = c.req;
        MPI_Status st[6], s2[6];
        for (int i = 0; i < 6; i++)
            st_poison(&st[i]), st_poison(&s2[i]);
        if (it % 2) { /* the collective first, then the rest, reversed */
            complete1(&cr, it);
            MPI_Request rr[6];
            for (int i = 0; i < 6; i++)
                rr[i] = r[5 - i];
            CHECK_RC(MPI_Waitall(6, rr, s2), MPI_SUCCESS);
            for (int i = 0; i < 6; i++)
                st[i] = s2[5 - i];
        } else {
            int done = 0;
            while (!done)
                CHECK_RC(MPI_Testall(6, r, &done, st), MPI_SUCCESS);
            complete1(&cr, it + 1);
        }
        CHECK(st[0].MPI_SOURCE == left && st[0].MPI_TAG == it);
        CHECK(st[2].MPI_SOURCE == left && st[2].MPI_TAG == it + 100);
        st_check_coll(&st[4]), st_check_coll(&st[5]);
        cc_check(&a, it), cc_check(&b, it), cc_check(&c, it);
        cc_free(&a), cc_free(&b), cc_free(&c);
        for (int j = 0; j < NP; j++) {
            CHECK(in1[j] == val(left, (size_t)j, it));
            CHECK(in2[j] == -val(left, (size_t)j, it));
        }
        free(in1), free(in2), free(out1), free(out2);
    }
}

/* blocking collectives called while nonblocking ones are pending (all ranks in the same
 * order: the blocking ones match only blocking ones, in order) */
static void test_blocking_mix(void)
{
    for (int it = 0; it < 10; it++) {
        cc_t a = mk(K_ALLGATHERV, 7, 0, 1, 2, it % 2, 0, 0);
        cc_t b = mk(K_REDUCE, 7, it % size, 0, 0, it % 3 == 1, RT_DI, O_MAXLOC);
        cc_go(&a, it);
        cc_go(&b, it);
        int x = rank + it, y = -1, z = rank == (it + 1) % size ? 4242 + it : -1;
        CHECK_RC(MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, comm), MPI_SUCCESS);
        CHECK(y == size * (size - 1) / 2 + size * it);
        CHECK_RC(MPI_Bcast(&z, 1, MPI_INT, (it + 1) % size, comm), MPI_SUCCESS);
        CHECK(z == 4242 + it);
        MPI_Request r[2] = {a.req, b.req};
        complete_n(r, 2, it);
        cc_check(&a, it), cc_check(&b, it);
        cc_free(&a), cc_free(&b);
    }
}

/* MPI_Ibarrier does not complete anywhere before every rank called it: rank 0 calls it
 * only after rank size-1 has seen its own Ibarrier incomplete. */
static void test_ibarrier_sync(void)
{
    if (size < 2)
        return;
    for (int it = 0; it < 5; it++) {
        MPI_Request r;
        int flag = 0, go = 0;
        if (rank == 0) {
            CHECK_RC(MPI_Recv(&go, 1, MPI_INT, size - 1, 77, comm, MPI_STATUS_IGNORE), MPI_SUCCESS);
            CHECK_RC(MPI_Ibarrier(comm, &r), MPI_SUCCESS);
            complete1(&r, it);
        } else {
            CHECK_RC(MPI_Ibarrier(comm, &r), MPI_SUCCESS);
            if (rank == size - 1) {
                for (int k = 0; k < 100; k++) {
                    CHECK_RC(MPI_Test(&r, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
                    CHECK(!flag);
                }
                go = 1;
                CHECK_RC(MPI_Send(&go, 1, MPI_INT, 0, 77, comm), MPI_SUCCESS);
            }
            complete1(&r, it + 1);
        }
    }
}

/* the datatypes, user op and communicator of a pending operation freed before it
 * completes: "will complete normally" */
static void test_free_pending(void)
{
    MPI_Comm d;
    MPI_Datatype v, m;
    MPI_Op op;
    CHECK_RC(MPI_Comm_dup(comm, &d), MPI_SUCCESS);
    CHECK_RC(MPI_Type_vector(3, 2, 5, MPI_INT, &v), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&v), MPI_SUCCESS);
    CHECK_RC(MPI_Type_contiguous(4, MPI_LONG_LONG, &m), MPI_SUCCESS);
    CHECK_RC(MPI_Type_commit(&m), MPI_SUCCESS);
    CHECK_RC(MPI_Op_create(matop, 0, &op), MPI_SUCCESS);
    int dme, buf[13];
    MPI_Comm_rank(d, &dme);
    for (int k = 0; k < 13; k++)
        buf[k] = dme == size - 1 ? val(7, (size_t)k, 3) : GAP;
    mat_t in[9], out[10], w[9], e;
    for (int j = 0; j < 9; j++)
        rgen(RT_MAT, O_MAT, dme, (size_t)j, 5, &in[j]);
    memset(out, GUARD, sizeof out);
    MPI_Request r[2];
    CHECK_RC(MPI_Ibcast(buf, 1, v, size - 1, d, &r[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Iallreduce(in, out, 9, m, op, d, &r[1]), MPI_SUCCESS);
    MPI_Type_free(&v);
    MPI_Type_free(&m);
    MPI_Op_free(&op);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    complete_n(r, 2, 3);
    for (int k = 0; k < 13; k++) {
        int inv = k % 5 < 2 && k < 12; /* blocks of 2 ints every 5 */
        CHECK(buf[k] == (inv || dme == size - 1 ? val(7, (size_t)k, 3) : GAP));
    }
    for (int j = 0; j < 9; j++) {
        rgen(RT_MAT, O_MAT, 0, (size_t)j, 5, &w[j]);
        for (int q = 1; q < size; q++) {
            rgen(RT_MAT, O_MAT, q, (size_t)j, 5, &e);
            matmul(&w[j], &e, &w[j]);
        }
        CHECK(memcmp(&w[j], &out[j], sizeof e) == 0);
    }
    for (size_t k = 0; k < sizeof(mat_t); k++)
        CHECK(((unsigned char *)&out[9])[k] == GUARD);
}

/* thin: keep every thin-th optional case; light: only the batches on two communicators */
static void run_all(const char *what, int thin, int light)
{
    MPI_Comm_rank(comm, &rank);
    MPI_Comm_size(comm, &size);
    double t0 = MPI_Wtime();
    build_cases(thin);
    if (!light)
        PHASE(test_each(size > 4 ? 4 : 1));
    MPI_Comm rev;
    CHECK_RC(MPI_Comm_split(comm, 0, size - rank, &rev), MPI_SUCCESS);
    if (!light)
        PHASE(test_batches(MPI_COMM_NULL, 5, 100000));
    PHASE(test_batches(rev, 6, 200000));
    CHECK_RC(MPI_Comm_free(&rev), MPI_SUCCESS);
    PHASE(test_many());
    PHASE(test_p2p_overlap());
    PHASE(test_blocking_mix());
    PHASE(test_ibarrier_sync());
    PHASE(test_free_pending());
    PHASE(test_errors());
    CHECK_RC(MPI_Barrier(comm), MPI_SUCCESS);
    if (rank == 0)
        printf("%s: %s (%d ranks, %d cases) ok, %.1f s\n", prog, what, size, ncases,
               MPI_Wtime() - t0);
}

int main(int argc, char **argv)
{
    common_init(&argc, &argv, "mpi_coll_nb");
    persistent = 0;
    int wrank, wsize;
    MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
    MPI_Comm_size(MPI_COMM_WORLD, &wsize);
    comm = MPI_COMM_WORLD;
    run_all("MPI_COMM_WORLD", wsize <= 3 ? 1 : wsize <= 5 ? 2 : 4, 0);
    if (wsize > 2) { /* a split communicator, reversed order: ranks differ from world ranks */
        MPI_Comm sub;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, wrank % 2, -wrank, &sub), MPI_SUCCESS);
        comm = sub;
        int thin = wsize <= 3 ? 2 : wsize <= 5 ? 4 : 8;
        run_all(wrank % 2 ? "split odd" : "split even", thin, wsize > 3);
        MPI_Comm_free(&sub);
        comm = MPI_COMM_WORLD;
    }
    common_finalize();
    return 0;
}
