/* mpi_comm_group: every group operation, results checked against hand-computed
 * member lists (world ranks), plus the error classes of bad arguments. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int n, me;

/* The world ranks of g's members in order (via translate_ranks into WORLD's group). */
static void members(MPI_Group g, int *out, int *size)
{
    MPI_Group w;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &w), MPI_SUCCESS);
    CHECK_RC(MPI_Group_size(g, size), MPI_SUCCESS);
    int r[64];
    for (int i = 0; i < *size; i++)
        r[i] = i;
    CHECK_RC(MPI_Group_translate_ranks(g, *size, r, w, out), MPI_SUCCESS);
    CHECK_RC(MPI_Group_free(&w), MPI_SUCCESS);
}

static void expect(MPI_Group g, const int *want, int wn)
{
    int got[64], gn;
    members(g, got, &gn);
    CHECK(gn == wn);
    for (int i = 0; i < wn; i++)
        CHECK(got[i] == want[i]);
    int rank, exp = MPI_UNDEFINED;
    for (int i = 0; i < wn; i++)
        if (want[i] == me)
            exp = i;
    CHECK_RC(MPI_Group_rank(g, &rank), MPI_SUCCESS);
    CHECK(rank == exp);
}

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Group w, s, g, h, u;
    int want[64], k, res;
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &w), MPI_SUCCESS);
    for (int i = 0; i < n; i++)
        want[i] = i;
    expect(w, want, n);
    CHECK_RC(MPI_Comm_group(MPI_COMM_SELF, &s), MPI_SUCCESS);
    expect(s, &me, 1);

    /* incl: reversed odd ranks */
    int ranks[64];
    k = 0;
    for (int i = n - 1; i >= 0; i--)
        if (i % 2)
            ranks[k++] = i;
    CHECK_RC(MPI_Group_incl(w, k, ranks, &g), MPI_SUCCESS);
    expect(g, ranks, k);
    /* excl of the same: the evens in order */
    CHECK_RC(MPI_Group_excl(w, k, ranks, &h), MPI_SUCCESS);
    int ev[64], ne = 0;
    for (int i = 0; i < n; i += 2)
        ev[ne++] = i;
    expect(h, ev, ne);
    /* union(odds reversed, evens) = odds reversed then evens */
    CHECK_RC(MPI_Group_union(g, h, &u), MPI_SUCCESS);
    memcpy(want, ranks, (size_t)k * sizeof(int));
    memcpy(want + k, ev, (size_t)ne * sizeof(int));
    expect(u, want, n);
    CHECK_RC(MPI_Group_compare(u, w, &res), MPI_SUCCESS);
    CHECK(res == (n <= 1 ? MPI_IDENT : MPI_SIMILAR));
    CHECK_RC(MPI_Group_compare(w, w, &res), MPI_SUCCESS);
    CHECK(res == MPI_IDENT);
    CHECK_RC(MPI_Group_compare(g, h, &res), MPI_SUCCESS);
    CHECK(res == MPI_UNEQUAL);
    CHECK_RC(MPI_Group_free(&u), MPI_SUCCESS);
    CHECK(u == MPI_GROUP_NULL);
    /* intersection(world, odds reversed): odds in world order */
    CHECK_RC(MPI_Group_intersection(w, g, &u), MPI_SUCCESS);
    int od[64], no = 0;
    for (int i = 1; i < n; i += 2)
        od[no++] = i;
    expect(u, od, no);
    MPI_Group_free(&u);
    /* intersection of disjoint groups is MPI_GROUP_EMPTY */
    CHECK_RC(MPI_Group_intersection(g, h, &u), MPI_SUCCESS);
    CHECK(u == MPI_GROUP_EMPTY);
    CHECK_RC(MPI_Group_size(u, &k), MPI_SUCCESS);
    CHECK(k == 0);
    CHECK_RC(MPI_Group_rank(u, &k), MPI_SUCCESS);
    CHECK(k == MPI_UNDEFINED);
    CHECK_RC(MPI_Group_free(&u), MPI_SUCCESS);
    /* difference(world, evens) = odds ascending; difference(evens, world) empty */
    CHECK_RC(MPI_Group_difference(w, h, &u), MPI_SUCCESS);
    expect(u, od, no);
    MPI_Group_free(&u);
    CHECK_RC(MPI_Group_difference(h, w, &u), MPI_SUCCESS);
    CHECK(u == MPI_GROUP_EMPTY);
    /* translate: PROC_NULL stays, non-members UNDEFINED */
    {
        int r1[3] = {MPI_PROC_NULL, 0, n - 1}, r2[3];
        CHECK_RC(MPI_Group_translate_ranks(w, 3, r1, h, r2), MPI_SUCCESS);
        CHECK(r2[0] == MPI_PROC_NULL);
        CHECK(r2[1] == 0);
        CHECK(r2[2] == ((n - 1) % 2 ? MPI_UNDEFINED : (n - 1) / 2));
    }
    /* range_incl: (n-1, 0, -2) then nothing else; range_excl (0, n-1, 3) */
    {
        int rg[2][3] = {{n - 1, 0, -2}, {0, 0, 1}};
        int nr = (n - 1) % 2 ? 2 : 1; /* 0 is in the first range when n-1 is even */
        k = 0;
        for (int i = n - 1; i >= 0; i -= 2)
            want[k++] = i;
        if (nr == 2)
            want[k++] = 0;
        CHECK_RC(MPI_Group_range_incl(w, nr, rg, &u), MPI_SUCCESS);
        expect(u, want, k);
        MPI_Group_free(&u);
        int rx[1][3] = {{0, n - 1, 3}};
        k = 0;
        for (int i = 0; i < n; i++)
            if (i % 3)
                want[k++] = i;
        CHECK_RC(MPI_Group_range_excl(w, 1, rx, &u), MPI_SUCCESS);
        expect(u, want, k);
        MPI_Group_free(&u);
    }
    /* incl of nothing is MPI_GROUP_EMPTY; excl of nothing is the same group */
    CHECK_RC(MPI_Group_incl(w, 0, NULL, &u), MPI_SUCCESS);
    CHECK(u == MPI_GROUP_EMPTY);
    CHECK_RC(MPI_Group_excl(w, 0, NULL, &u), MPI_SUCCESS);
    CHECK_RC(MPI_Group_compare(u, w, &res), MPI_SUCCESS);
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&u);

    /* errors */
    {
        int bad[2] = {0, n};
        CHECK(eclass(MPI_Group_incl(w, 2, bad, &u)) == MPI_ERR_RANK);
        int dup[2] = {0, 0};
        CHECK(eclass(MPI_Group_incl(w, 2, dup, &u)) == MPI_ERR_RANK);
        CHECK(eclass(MPI_Group_excl(w, 2, dup, &u)) == MPI_ERR_RANK);
        CHECK(eclass(MPI_Group_incl(w, -1, bad, &u)) == MPI_ERR_ARG);
        CHECK(eclass(MPI_Group_size(MPI_GROUP_NULL, &k)) == MPI_ERR_GROUP);
        CHECK(eclass(MPI_Group_rank(12345, &k)) == MPI_ERR_GROUP);
        CHECK(eclass(MPI_Group_union(w, MPI_GROUP_NULL, &u)) == MPI_ERR_GROUP);
        int r1 = n, r2;
        CHECK(eclass(MPI_Group_translate_ranks(w, 1, &r1, s, &r2)) == MPI_ERR_RANK);
        int rz[1][3] = {{0, 0, 0}};
        CHECK(eclass(MPI_Group_range_incl(w, 1, rz, &u)) == MPI_ERR_ARG);
        int ro[1][3] = {{0, n, 1}};
        CHECK(eclass(MPI_Group_range_incl(w, 1, ro, &u)) == MPI_ERR_RANK);
        if (n >= 2) {
            int rr[2][3] = {{0, 1, 1}, {1, 1, 1}};
            CHECK(eclass(MPI_Group_range_excl(w, 2, rr, &u)) == MPI_ERR_RANK);
        }
        MPI_Group nul = MPI_GROUP_NULL;
        CHECK(eclass(MPI_Group_free(&nul)) == MPI_ERR_GROUP);
    }
    /* a freed group handle is invalid; the comm's group lives on */
    MPI_Group w2 = w;
    CHECK_RC(MPI_Group_free(&w), MPI_SUCCESS);
    CHECK(eclass(MPI_Group_size(w2, &k)) == MPI_ERR_GROUP);
    CHECK_RC(MPI_Comm_group(MPI_COMM_WORLD, &w), MPI_SUCCESS);
    CHECK_RC(MPI_Group_size(w, &k), MPI_SUCCESS);
    CHECK(k == n);
    MPI_Group_free(&w);
    MPI_Group_free(&s);
    MPI_Group_free(&g);
    MPI_Group_free(&h);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
