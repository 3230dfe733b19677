/* mpi_comm_idup_basic: MPI_Comm_idup / MPI_Comm_idup_with_info (MPI-4.0 7.4.2).
 * An idup of WORLD then used (allreduce, ring); several idups outstanding at once on
 * WORLD and on the halves of a split (even / odd ranks), completed in reverse order, by
 * Test polling and by Waitall, each result checked for isolation from the others; an
 * idup on a pair of ranks pending while one of them takes part in a blocking
 * MPI_Comm_dup on the other ranks, which the second member of the pair enters only
 * after that dup (so the dup must not wait for the idup); 2100 idup / free cycles (context
 * ids do not leak); a ring of pairs, each idup'ed by its two ranks in opposite orders;
 * attributes copied at the call (a later change is not seen);
 * idup_with_info and Comm_get_info; idup of an intercommunicator (even / odd halves).
 * Works on any number of ranks (the pair and intercommunicator parts need 2 or 3). */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int n, me;

/* The comm works and is its own: allreduce of ranks, and a ring exchange with tag 7. */
static void use(MPI_Comm c)
{
    int sz, r, sum = 0;
    CHECK_RC(MPI_Comm_size(c, &sz), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(c, &r), MPI_SUCCESS);
    CHECK_RC(MPI_Allreduce(&r, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
    CHECK(sum == sz * (sz - 1) / 2);
    int in = -1;
    CHECK_RC(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % sz, 7, &in, 1, MPI_INT, (r + sz - 1) % sz, 7, c,
                          MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(in == (r + sz - 1) % sz);
}

/* Messages on comms[0..k) with the same source and tag stay on their communicator:
 * send value i % mod on comms[i] to the next rank, receive in reverse order (members list
 * each communicator at the same index modulo mod). */
static void isolated_mod(MPI_Comm *comms, int k, int mod)
{
    MPI_Request rq[16];
    int in[16], vals[16];
    for (int i = 0; i < k; i++) {
        vals[i] = i % mod;
        int sz, r;
        MPI_Comm_size(comms[i], &sz);
        MPI_Comm_rank(comms[i], &r);
        CHECK_RC(MPI_Isend(&vals[i], 1, MPI_INT, (r + 1) % sz, 5, comms[i], &rq[i]), MPI_SUCCESS);
    }
    for (int i = k - 1; i >= 0; i--) {
        int sz, r;
        MPI_Comm_size(comms[i], &sz);
        MPI_Comm_rank(comms[i], &r);
        CHECK_RC(MPI_Recv(&in[i], 1, MPI_INT, (r + sz - 1) % sz, 5, comms[i], MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
    }
    CHECK_RC(MPI_Waitall(k, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < k; i++)
        CHECK(in[i] == i % mod);
}

static void isolated(MPI_Comm *comms, int k)
{
    isolated_mod(comms, k, k);
}

static void outstanding(void)
{
    MPI_Comm half;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half), MPI_SUCCESS);
    MPI_Comm d[6];
    MPI_Request rq[6];
    /* WORLD, half, WORLD, half, half's dup made below, WORLD */
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[0], &rq[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(half, &d[1], &rq[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[2], &rq[2]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(half, &d[3], &rq[3]), MPI_SUCCESS);
    /* reverse order */
    for (int i = 3; i >= 0; i--)
        CHECK_RC(MPI_Wait(&rq[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        use(d[i]);
    MPI_Comm w[2] = {d[0], d[2]}, h[3] = {d[1], d[3], half};
    isolated(w, 2);
    isolated(h, 3);
    /* Test polling, a mix of parents (one is an idup's result) */
    CHECK_RC(MPI_Comm_idup(d[1], &d[4], &rq[4]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d[5], &rq[5]), MPI_SUCCESS);
    int flags[2] = {0, 0};
    while (!flags[0] || !flags[1])
        for (int i = 1; i >= 0; i--)
            if (!flags[i])
                CHECK_RC(MPI_Test(&rq[4 + i], &flags[i], MPI_STATUS_IGNORE), MPI_SUCCESS);
    use(d[4]);
    use(d[5]);
    MPI_Comm all[7] = {d[0], d[2], d[5], MPI_COMM_WORLD};
    isolated(all, 4);
    for (int i = 0; i < 6; i++)
        CHECK_RC(MPI_Comm_free(&d[i]), MPI_SUCCESS);
    /* Waitall over idups of many parents at once */
    MPI_Comm par[3] = {MPI_COMM_WORLD, half, MPI_COMM_SELF};
    for (int i = 0; i < 6; i++)
        CHECK_RC(MPI_Comm_idup(par[i % 3], &d[i], &rq[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(6, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 6; i++) {
        use(d[i]);
        int res;
        MPI_Comm_compare(d[i], par[i % 3], &res);
        CHECK(res == MPI_CONGRUENT);
    }
    for (int i = 0; i < 6; i++)
        CHECK_RC(MPI_Comm_free(&d[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);
}

/* Ranks 0 and 1 form pair; ranks 1.. form rest. Rank 1 starts an idup on pair, then
 * a blocking dup on rest; rank 0 starts its idup only after rank 2 (or rank 1 when
 * n == 2) has finished that dup. */
static void overlap(void)
{
    if (n < 2)
        return;
    MPI_Comm pair, rest, pd, rd = MPI_COMM_NULL;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me < 2 ? 0 : MPI_UNDEFINED, me, &pair), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me >= 1 ? 0 : MPI_UNDEFINED, me, &rest), MPI_SUCCESS);
    MPI_Request rq = MPI_REQUEST_NULL;
    int token = 42, signaller = n > 2 ? 2 : 1;
    if (me == 1)
        CHECK_RC(MPI_Comm_idup(pair, &pd, &rq), MPI_SUCCESS);
    if (me >= 1) {
        CHECK_RC(MPI_Comm_dup(rest, &rd), MPI_SUCCESS);
        use(rd);
    }
    if (me == signaller)
        CHECK_RC(MPI_Send(&token, 1, MPI_INT, 0, 11, MPI_COMM_WORLD), MPI_SUCCESS);
    if (me == 0) {
        int in = 0;
        CHECK_RC(MPI_Recv(&in, 1, MPI_INT, signaller, 11, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
        CHECK(in == token);
        CHECK_RC(MPI_Comm_idup(pair, &pd, &rq), MPI_SUCCESS);
    }
    if (me < 2) {
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        use(pd);
        MPI_Comm two[2] = {pd, pair};
        isolated(two, 2);
    }
    if (me == 1) {
        /* pd and rd share rank 1: distinct pairs */
        int a = 1, b = 2, x = 0, y = 0;
        MPI_Request q[4];
        MPI_Isend(&a, 1, MPI_INT, 1, 9, pd, &q[0]); /* pd's rank 1 is me */
        MPI_Isend(&b, 1, MPI_INT, 0, 9, rd, &q[1]); /* rd's rank 0 is me */
        MPI_Irecv(&y, 1, MPI_INT, 0, 9, rd, &q[2]);
        MPI_Irecv(&x, 1, MPI_INT, 1, 9, pd, &q[3]);
        CHECK_RC(MPI_Waitall(4, q, MPI_STATUSES_IGNORE), MPI_SUCCESS);
        CHECK(x == 1 && y == 2);
    }
    if (me < 2) {
        CHECK_RC(MPI_Comm_free(&pd), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&pair), MPI_SUCCESS);
    }
    if (me >= 1) {
        CHECK_RC(MPI_Comm_free(&rd), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_free(&rest), MPI_SUCCESS);
    }
    MPI_Barrier(MPI_COMM_WORLD);
}

/* Ring of pairs {i, i+1}: each rank idups its own pair, then the pair of its left
 * neighbour (so every pair's two idups are issued in opposite orders around the ring:
 * crossing proposals), twice over, then checks all four results. */
static void ring(void)
{
    if (n < 3)
        return;
    MPI_Comm mine = MPI_COMM_NULL, left = MPI_COMM_NULL, tmp;
    for (int i = 0; i < n; i++) {
        int in = me == i || me == (i + 1) % n;
        CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, in ? 0 : MPI_UNDEFINED, me == i ? 0 : 1, &tmp),
                 MPI_SUCCESS);
        if (me == i)
            mine = tmp;
        else if (me == (i + 1) % n)
            left = tmp;
    }
    MPI_Comm d[4];
    MPI_Request rq[4];
    for (int k = 0; k < 2; k++) {
        CHECK_RC(MPI_Comm_idup(mine, &d[2 * k], &rq[2 * k]), MPI_SUCCESS);
        CHECK_RC(MPI_Comm_idup(left, &d[2 * k + 1], &rq[2 * k + 1]), MPI_SUCCESS);
    }
    CHECK_RC(MPI_Waitall(4, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    /* (no blocking collective on them here: around the ring it would be a cycle); a
     * pair's communicators are mine on one member, left on the other */
    MPI_Comm all[6] = {d[0], d[2], mine, d[1], d[3], left};
    isolated_mod(all, 6, 3);
    for (int i = 0; i < 4; i++)
        CHECK_RC(MPI_Comm_free(&d[i]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&mine), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&left), MPI_SUCCESS);
}

static void cycles(void)
{
    /* more cycles than there are pairs (2048): a leaked pair would run out */
    for (int i = 0; i < 2100; i++) {
        MPI_Comm d;
        MPI_Request rq;
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        if (i % 500 == 0)
            use(d);
        CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    }
}

static int copies;
static int copy_fn(MPI_Comm c, int kv, void *extra, void *in, void *out, int *flag)
{
    (void)c;
    (void)kv;
    (void)extra;
    copies++;
    *(void **)out = in;
    *flag = 1;
    return MPI_SUCCESS;
}

static void attrs_and_info(void)
{
    int kv;
    static int v1 = 1, v2 = 2;
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, MPI_COMM_NULL_DELETE_FN, &kv, NULL), MPI_SUCCESS);
    MPI_Comm base, d;
    MPI_Request rq;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &base), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(base, kv, &v1), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(base, &d, &rq), MPI_SUCCESS);
    CHECK(copies == 1); /* at the call */
    CHECK_RC(MPI_Comm_set_attr(base, kv, &v2), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int *val = NULL, flag = 0;
    CHECK_RC(MPI_Comm_get_attr(d, kv, &val, &flag), MPI_SUCCESS);
    CHECK(flag && val == &v1);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);

    MPI_Info info, got;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fmpl_idup_test", "yes");
    CHECK_RC(MPI_Comm_idup_with_info(base, info, &d, &rq), MPI_SUCCESS);
    MPI_Info_free(&info); /* the new communicator has its own copy */
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    use(d);
    CHECK_RC(MPI_Comm_get_info(d, &got), MPI_SUCCESS);
    char buf[16];
    int len = sizeof buf;
    flag = 0;
    CHECK_RC(MPI_Info_get_string(got, "fmpl_idup_test", &len, buf, &flag), MPI_SUCCESS);
    CHECK(flag && strcmp(buf, "yes") == 0);
    MPI_Info_free(&got);
    CHECK_RC(MPI_Comm_get_attr(d, kv, &val, &flag), MPI_SUCCESS);
    CHECK(flag && val == &v2);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&base), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&kv), MPI_SUCCESS);

    /* argument errors */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(MPI_Comm_idup(MPI_COMM_WORLD, NULL, &rq) != MPI_SUCCESS);
    CHECK(MPI_Comm_idup(MPI_COMM_NULL, &d, &rq) != MPI_SUCCESS);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

static void inter(void)
{
    if (n < 2)
        return;
    MPI_Comm half, ic, d[2];
    MPI_Request rq[2];
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half), MPI_SUCCESS);
    CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 3, &ic), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(ic, &d[0], &rq[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(half, &d[1], &rq[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    int flag = 0, ls, rs, lr;
    CHECK_RC(MPI_Comm_test_inter(d[0], &flag), MPI_SUCCESS);
    CHECK(flag);
    MPI_Comm_size(d[0], &ls);
    MPI_Comm_remote_size(d[0], &rs);
    MPI_Comm_rank(d[0], &lr);
    CHECK(ls == (n + 1 - me % 2) / 2 && rs == n - ls);
    /* cross traffic: local rank r talks with remote rank r % rs; rank 0s exchange */
    int out = me, in = -1;
    if (lr == 0)
        CHECK_RC(
            MPI_Sendrecv(&out, 1, MPI_INT, 0, 4, &in, 1, MPI_INT, 0, 4, d[0], MPI_STATUS_IGNORE),
            MPI_SUCCESS);
    CHECK(lr != 0 || in == (me % 2 ? 0 : 1));
    /* the local group of the duplicate works: a merge of it */
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(d[0], me % 2, &m), MPI_SUCCESS);
    use(m);
    use(d[1]);
    CHECK_RC(MPI_Comm_free(&m), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&d[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&d[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&ic), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm d;
    MPI_Request rq;
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(rq == MPI_REQUEST_NULL);
    use(d);
    int res;
    MPI_Comm_compare(d, MPI_COMM_WORLD, &res);
    CHECK(res == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    outstanding();
    overlap();
    ring();
    cycles();
    attrs_and_info();
    inter();
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
