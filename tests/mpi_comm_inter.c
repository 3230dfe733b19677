/* mpi_comm_inter: intercommunicators. WORLD splits into a low half (even ranks) and a
 * high half (odd ranks); Intercomm_create joins them (leaders: local rank 0, i.e. world
 * ranks 0 and 1, talking over WORLD with a tag); point-to-point across; remote
 * size/group; compare; dup; split; Comm_create; Intercomm_merge with both high
 * orders; error classes. Needs 2 ranks at least (one rank: only the error checks). */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int n, me;

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* Each rank sends its world rank to remote rank (local rank % remote size) and every
 * remote rank r with r % local_size == my rank sends to me: checks both. */
static void cross(MPI_Comm ic)
{
    int ls, rs, lr;
    MPI_Comm_size(ic, &ls);
    MPI_Comm_remote_size(ic, &rs);
    MPI_Comm_rank(ic, &lr);
    MPI_Group rg, wg;
    MPI_Comm_remote_group(ic, &rg);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Request rq[64];
    int in[64], nr = 0;
    for (int r = 0; r < rs; r++)
        if (r % ls == lr) {
            MPI_Irecv(&in[nr], 1, MPI_INT, r, 3, ic, &rq[nr]);
            nr++;
        }
    MPI_Send(&me, 1, MPI_INT, lr % rs, 3, ic);
    MPI_Status st[64];
    CHECK_RC(MPI_Waitall(nr, rq, st), MPI_SUCCESS);
    for (int i = 0, k = 0; i < rs; i++)
        if (i % ls == lr) {
            int w;
            MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
            CHECK(in[k] == w);
            CHECK(st[k].MPI_SOURCE == i);
            k++;
        }
    MPI_Group_free(&rg);
    MPI_Group_free(&wg);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    int k, res, flag;
    MPI_Comm ic;
    CHECK(eclass(MPI_Intercomm_merge(MPI_COMM_WORLD, 0, &ic)) == MPI_ERR_COMM);
    CHECK(eclass(MPI_Comm_remote_size(MPI_COMM_SELF, &k)) == MPI_ERR_COMM);
    if (n < 2) {
        MPI_Finalize();
        return 0;
    }
    int side = me % 2; /* 0: low (even ranks), 1: high (odd ranks) */
    MPI_Comm half;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, side, me, &half), MPI_SUCCESS);
    MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
    CHECK(eclass(MPI_Intercomm_create(half, 99, MPI_COMM_WORLD, 1 - side, 17, &ic)) ==
          MPI_ERR_RANK);
    CHECK_RC(MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, 1 - side, 17, &ic), MPI_SUCCESS);
    int lsize = (n + 1 - side) / 2, rsize = n - lsize;
    CHECK_RC(MPI_Comm_test_inter(ic, &flag), MPI_SUCCESS);
    CHECK(flag);
    MPI_Comm_size(ic, &k);
    CHECK(k == lsize);
    MPI_Comm_rank(ic, &k);
    CHECK(k == me / 2);
    CHECK_RC(MPI_Comm_remote_size(ic, &k), MPI_SUCCESS);
    CHECK(k == rsize);
    {
        MPI_Group rg, wg;
        CHECK_RC(MPI_Comm_remote_group(ic, &rg), MPI_SUCCESS);
        MPI_Comm_group(MPI_COMM_WORLD, &wg);
        for (int i = 0; i < rsize; i++) {
            int w;
            MPI_Group_translate_ranks(rg, 1, &i, wg, &w);
            CHECK(w == 2 * i + 1 - side);
        }
        MPI_Group_free(&rg);
        MPI_Group_free(&wg);
    }
    cross(ic);
    CHECK(eclass(MPI_Send(&me, 1, MPI_INT, rsize, 0, ic)) == MPI_ERR_RANK);

    /* dup: congruent, works */
    MPI_Comm icd;
    CHECK_RC(MPI_Comm_dup(ic, &icd), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_compare(ic, icd, &res), MPI_SUCCESS);
    CHECK(res == MPI_CONGRUENT);
    CHECK_RC(MPI_Comm_compare(ic, half, &res), MPI_SUCCESS);
    CHECK(res == MPI_UNEQUAL);
    cross(icd);

    /* merge, low side first; then the other order */
    MPI_Comm m;
    CHECK_RC(MPI_Intercomm_merge(ic, side, &m), MPI_SUCCESS);
    MPI_Comm_size(m, &k);
    CHECK(k == n);
    MPI_Comm_rank(m, &k);
    CHECK(k == (side ? lsize + me / 2 + (n + 1) / 2 - lsize : me / 2));
    {
        int sum = 0, in;
        MPI_Status st;
        /* ring over the merged communicator */
        int r, sz;
        MPI_Comm_rank(m, &r);
        MPI_Comm_size(m, &sz);
        CHECK_RC(MPI_Sendrecv(&r, 1, MPI_INT, (r + 1) % sz, 1, &in, 1, MPI_INT, (r - 1 + sz) % sz,
                              1, m, &st),
                 MPI_SUCCESS);
        CHECK(in == (r - 1 + sz) % sz);
        (void)sum;
    }
    MPI_Comm_free(&m);
    CHECK_RC(MPI_Intercomm_merge(icd, !side, &m), MPI_SUCCESS);
    MPI_Comm_rank(m, &k);
    CHECK(k == (side ? me / 2 : rsize + me / 2));
    MPI_Comm_free(&m);
    /* same high everywhere: some order, but consistent: the ranks are a permutation */
    CHECK_RC(MPI_Intercomm_merge(ic, 0, &m), MPI_SUCCESS);
    {
        MPI_Comm_size(m, &k);
        CHECK(k == n);
        MPI_Comm_free(&m);
    }

    /* split of the intercommunicator: colour = local rank % 2 on both sides */
    {
        MPI_Comm s;
        int lr;
        MPI_Comm_rank(ic, &lr);
        CHECK_RC(MPI_Comm_split(ic, lr % 2, -lr, &s), MPI_SUCCESS);
        int lwant = (lsize - lr % 2 + 1) / 2, rwant = (rsize - lr % 2 + 1) / 2;
        if (rwant == 0) {
            CHECK(s == MPI_COMM_NULL);
        } else {
            MPI_Comm_size(s, &k);
            CHECK(k == lwant);
            MPI_Comm_remote_size(s, &k);
            CHECK(k == rwant);
            cross(s);
            MPI_Comm_free(&s);
        }
    }
    /* Comm_create on the intercommunicator: local rank 0 of each side */
    {
        MPI_Group lg, g0;
        MPI_Comm_group(ic, &lg);
        int zero = 0;
        MPI_Group_incl(lg, 1, &zero, &g0);
        MPI_Comm c;
        CHECK_RC(MPI_Comm_create(ic, g0, &c), MPI_SUCCESS);
        if (me < 2) {
            CHECK(c != MPI_COMM_NULL);
            MPI_Comm_remote_size(c, &k);
            CHECK(k == 1);
            cross(c);
            MPI_Comm_free(&c);
        } else {
            CHECK(c == MPI_COMM_NULL);
        }
        MPI_Group_free(&g0);
        MPI_Group_free(&lg);
    }
    MPI_Comm_free(&icd);
    MPI_Comm_free(&ic);
    MPI_Comm_free(&half);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
