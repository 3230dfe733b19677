/* mpi_comm_mailbox.c — mailbox groups of communicators other than MPI_COMM_WORLD
 * (src/mpi/comm.c, "mailbox slots"): a communicator of two or more processes made by a
 * blocking constructor gets a coll group when its members have a free slot in common,
 * and every member decides alike; with more live communicators than slots
 * (FMPL_COLL_GROUPS) the others run their collectives over point-to-point, with the same
 * results; members free their communicators in different orders (the group's retirement
 * never waits for the others); slots are reused over many create / free cycles; split
 * communicators and persistent collectives on them. White box: reads the communicator's
 * group through the MPI layer's private header. Any number of ranks. */
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "mpi/mpi_impl.h"
#include "test_util.h"

#define NCOMMS 12
#define CYCLES 300

static int n, me;

static int has_group(MPI_Comm c)
{
    return mpii_comm_cgroup(mpii_comm_get(c)) != NULL;
}

/* Every member of c took the same path: the flags gathered over c are all equal. */
static void same_everywhere(MPI_Comm c, int flag)
{
    int sz;
    CHECK_RC(MPI_Comm_size(c, &sz), MPI_SUCCESS);
    int *all = malloc((size_t)sz * sizeof *all);
    CHECK(all);
    CHECK_RC(MPI_Allgather(&flag, 1, MPI_INT, all, 1, MPI_INT, c), MPI_SUCCESS);
    for (int i = 0; i < sz; i++)
        CHECK(all[i] == flag);
    free(all);
}

/* Barrier, bcast from every root, reduce to every root, allreduce, allgather and alltoall
 * on c, contents checked; salt tells the communicators apart. */
static void exercise(MPI_Comm c, int salt)
{
    int sz, r;
    CHECK_RC(MPI_Comm_size(c, &sz), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(c, &r), MPI_SUCCESS);
    CHECK_RC(MPI_Barrier(c), MPI_SUCCESS);
    for (int root = 0; root < sz; root++) {
        long v[3] = {0, 0, 0};
        if (r == root)
            for (int i = 0; i < 3; i++)
                v[i] = salt * 1000 + root * 10 + i;
        CHECK_RC(MPI_Bcast(v, 3, MPI_LONG, root, c), MPI_SUCCESS);
        for (int i = 0; i < 3; i++)
            CHECK(v[i] == salt * 1000 + root * 10 + i);
        long in = r + salt, out = -1;
        CHECK_RC(MPI_Reduce(&in, &out, 1, MPI_LONG, MPI_SUM, root, c), MPI_SUCCESS);
        if (r == root)
            CHECK(out == (long)sz * (sz - 1) / 2 + (long)sz * salt);
    }
    int mx = -1, in = r * 7 + salt;
    CHECK_RC(MPI_Allreduce(&in, &mx, 1, MPI_INT, MPI_MAX, c), MPI_SUCCESS);
    CHECK(mx == (sz - 1) * 7 + salt);
    int *g = malloc((size_t)sz * 2 * sizeof *g), *a = malloc((size_t)sz * 2 * sizeof *a);
    CHECK(g && a);
    int mine = salt * 100 + r;
    CHECK_RC(MPI_Allgather(&mine, 1, MPI_INT, g, 1, MPI_INT, c), MPI_SUCCESS);
    for (int i = 0; i < sz; i++)
        CHECK(g[i] == salt * 100 + i);
    for (int i = 0; i < sz; i++)
        g[i] = salt * 10000 + r * 100 + i;
    CHECK_RC(MPI_Alltoall(g, 1, MPI_INT, a, 1, MPI_INT, c), MPI_SUCCESS);
    for (int i = 0; i < sz; i++)
        CHECK(a[i] == salt * 10000 + i * 100 + r);
    free(g);
    free(a);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &n), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(MPI_COMM_WORLD, &me), MPI_SUCCESS);
    int slots = coll_max_groups();
    CHECK(slots > 0);

    /* Many live duplicates: groups while slots last, the same decision at every member. */
    MPI_Comm d[NCOMMS];
    int grouped = 0;
    for (int i = 0; i < NCOMMS; i++) {
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &d[i]), MPI_SUCCESS);
        int hg = has_group(d[i]);
        CHECK(n > 1 || !hg); /* a communicator of one process needs none */
        same_everywhere(d[i], hg);
        grouped += hg;
    }
    if (n > 1) {
        CHECK(grouped >= 1);
        CHECK(grouped <= slots - 1); /* slot 0 is the world's */
        if (slots - 1 < NCOMMS)
            CHECK(grouped < NCOMMS);
    }
    for (int k = 0; k < 2; k++)
        for (int i = 0; i < NCOMMS; i++)
            exercise(d[(i * 5 + k) % NCOMMS], i);
    /* Freed in an order of each rank's own (reversed on odd ranks, rotated by rank). */
    for (int i = 0; i < NCOMMS; i++) {
        int j = (me & 1 ? NCOMMS - 1 - i : i + me) % NCOMMS;
        CHECK_RC(MPI_Comm_free(&d[j]), MPI_SUCCESS);
        CHECK(d[j] == MPI_COMM_NULL);
    }

    /* Create / use / free cycles: slots come back (a retiring one may still be busy at
     * some member, so a cycle may go without; most must not). */
    int cycled = 0;
    for (int i = 0; i < CYCLES; i++) {
        MPI_Comm c;
        CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
        int hg = has_group(c), sum = 0, one = 1;
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, c), MPI_SUCCESS);
        CHECK(sum == n);
        if (i % 50 == 0)
            same_everywhere(c, hg);
        cycled += hg;
        CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
    }
    if (n > 1)
        CHECK(cycled > CYCLES / 2);

    /* Split into halves (disjoint: one pair, the same slot for both), then a split of a
     * split; collectives on each, persistent allreduce on a half. */
    MPI_Comm half, quarter;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, n - me, &half), MPI_SUCCESS);
    int hsz;
    CHECK_RC(MPI_Comm_size(half, &hsz), MPI_SUCCESS);
    same_everywhere(half, has_group(half));
    CHECK(hsz == 1 || has_group(half));
    exercise(half, 3);
    CHECK_RC(MPI_Comm_split(half, me % 4 < 2, me, &quarter), MPI_SUCCESS);
    same_everywhere(quarter, has_group(quarter));
    exercise(quarter, 4);
    MPI_Request pr;
    double x = 0, y = -1;
    CHECK_RC(MPI_Allreduce_init(&x, &y, 1, MPI_DOUBLE, MPI_SUM, half, MPI_INFO_NULL, &pr),
             MPI_SUCCESS);
    for (int i = 0; i < 20; i++) {
        x = me + i;
        CHECK_RC(MPI_Start(&pr), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&pr, MPI_STATUS_IGNORE), MPI_SUCCESS);
        double want = 0;
        for (int q = me % 2; q < n; q += 2)
            want += q + i;
        CHECK(y == want);
    }
    CHECK_RC(MPI_Request_free(&pr), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&quarter), MPI_SUCCESS);

    /* Left alive: MPI_Finalize retires its group. */
    MPI_Comm leaked;
    CHECK_RC(MPI_Comm_dup(half, &leaked), MPI_SUCCESS);
    exercise(leaked, 5);
    CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_comm_mailbox: ok (%d ranks, %d slots: %d of %d live duplicates had a group, "
               "%d of %d cycles)\n",
               n, slots, grouped, NCOMMS, cycled, CYCLES);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
