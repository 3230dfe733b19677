/* mpi_comm_mailbox.c — mailbox groups of communicators other than MPI_COMM_WORLD
 * (src/mpi/comm.c, "mailbox slots"): a communicator of two or more processes made by a
 * blocking constructor gets a coll group when its members have a free slot in common,
 * and every member decides alike; with more live communicators than slots
 * (FMPL_COLL_GROUPS) the others run their collectives over point-to-point, with the same
 * results; members free their communicators in different orders (the group's retirement
 * never waits for the others); slots are reused over many create / free cycles; split
 * communicators and persistent collectives on them. MPI_Comm_idup takes part in the same
 * scheme: several idups outstanding on one communicator and on others at once, mixed
 * with blocking dups and with frees issued in different orders on different ranks; they
 * get a group while slots are free (exactly as many as free slots when nothing else
 * competes), fall back alike when not, and their collectives (blocking and nonblocking)
 * give the right contents. White box: reads the communicator's group through the MPI
 * layer's private header. Any number of ranks. */
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "mpi/mpi_impl.h"
#include "test_util.h"

#define NCOMMS 12
#define CYCLES 300
#define NIDUP 9 /* live idups at once in the overflow part: more than FMPL_COLL_GROUPS=6 */

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

/* Waits until no group of any member is retiring (each member drives its handshakes,
 * then a barrier): the free slots are the same at every member afterwards. */
static void settle(void)
{
    while (coll_groups_retiring() > 0) {
        int f;
        CHECK_RC(MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &f, MPI_STATUS_IGNORE),
                 MPI_SUCCESS);
    }
    CHECK_RC(MPI_Barrier(MPI_COMM_WORLD), MPI_SUCCESS);
}

/* Nonblocking allreduce and bcast on c, outstanding together, contents checked. */
static void exercise_nb(MPI_Comm c, int salt)
{
    int sz, r;
    CHECK_RC(MPI_Comm_size(c, &sz), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_rank(c, &r), MPI_SUCCESS);
    long in = r + salt, sum = -1, b[2] = {-1, -1};
    if (r == sz - 1) {
        b[0] = salt;
        b[1] = salt * 3;
    }
    MPI_Request rq[2];
    CHECK_RC(MPI_Iallreduce(&in, &sum, 1, MPI_LONG, MPI_SUM, c, &rq[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Ibcast(b, 2, MPI_LONG, sz - 1, c, &rq[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(sum == (long)sz * (sz - 1) / 2 + (long)sz * salt);
    CHECK(b[0] == salt && b[1] == salt * 3);
}

/* Checks the idup'd communicators c[0..k) after their completion: the same decision at
 * every member, collectives right; returns how many have a group. */
static int check_idups(MPI_Comm *c, int k, int salt)
{
    int grouped = 0;
    for (int i = 0; i < k; i++) {
        int hg = has_group(c[i]);
        CHECK(n > 1 || !hg);
        same_everywhere(c[i], hg);
        grouped += hg;
    }
    for (int i = 0; i < k; i++) {
        exercise(c[i], salt + i);
        exercise_nb(c[i], salt + i);
    }
    return grouped;
}

/* MPI_Comm_idup and mailbox slots (see the file comment). */
static void idups(int slots)
{
    int free_slots = n > 1 ? slots - 1 : 0; /* slot 0 is the world's */
    settle();

    /* (a) Three idups outstanding on WORLD with a blocking dup among them: fewer than the
     * free slots (FMPL_COLL_GROUPS=6: 5), and at most two allocations compete at once
     * (the idups of one parent run in turn), each holding at most one slot reserved per
     * member, so a free slot in common is always left and every one gets a group. */
    MPI_Comm a[4];
    MPI_Request rq[3];
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a[0], &rq[0]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &a[1], &rq[1]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &a[3]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_idup_with_info(MPI_COMM_WORLD, MPI_INFO_NULL, &a[2], &rq[2]), MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(3, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    int ga = check_idups(a, 3, 10);
    same_everywhere(a[3], has_group(a[3]));
    if (free_slots >= 5) {
        CHECK(ga == 3);
        CHECK(has_group(a[3]));
    }

    /* (b) More idups than free slots, all outstanding (completed in reverse order by
     * Test): exactly the remaining free slots go to the first ones, the rest run on
     * point-to-point, alike at every member. */
    int used = ga + has_group(a[3]);
    MPI_Comm b[NIDUP];
    MPI_Request rb[NIDUP];
    for (int i = 0; i < NIDUP; i++)
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &b[i], &rb[i]), MPI_SUCCESS);
    for (int i = NIDUP - 1; i >= 0; i--) {
        int flag = 0;
        while (!flag)
            CHECK_RC(MPI_Test(&rb[i], &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(rb[i] == MPI_REQUEST_NULL);
    }
    int gb = check_idups(b, NIDUP, 30);
    int left = free_slots - used;
    CHECK(gb == (left < NIDUP ? left : NIDUP));
    for (int i = 0; i < NIDUP; i++)
        CHECK(has_group(b[i]) == (i < left)); /* issued in this order, run in turn */

    /* (c) Frees in per-rank orders, then idups on several parents at once (WORLD, both
     * halves of a split, a duplicate) issued in opposite orders on odd and even ranks,
     * with a blocking dup and a free among them. */
    for (int i = 0; i < 4; i++) {
        int j = (me & 1 ? 3 - i : i + me) % 4;
        CHECK_RC(MPI_Comm_free(&a[j]), MPI_SUCCESS);
    }
    for (int i = 0; i < NIDUP; i++) {
        int j = (me & 1 ? NIDUP - 1 - i : i + me) % NIDUP;
        CHECK_RC(MPI_Comm_free(&b[j]), MPI_SUCCESS);
    }
    MPI_Comm half, base, tmp;
    CHECK_RC(MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &base), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &tmp), MPI_SUCCESS);
    MPI_Comm parent[3] = {MPI_COMM_WORLD, half, base}, c[6], blk;
    MPI_Request rc6[6];
    for (int i = 0; i < 6; i++) {
        /* c[k]: the k / 3-th idup on parent k % 3 (the same order on every parent's
         * members, as MPI requires; the parents taken in opposite orders) */
        int k = i / 3 * 3 + (me & 1 ? 2 - i % 3 : i % 3);
        CHECK_RC(MPI_Comm_idup(parent[k % 3], &c[k], &rc6[k]), MPI_SUCCESS);
        if (i == 2 && (me & 1))
            CHECK_RC(MPI_Comm_free(&tmp), MPI_SUCCESS);
        if (i == 3)
            CHECK_RC(MPI_Comm_dup(half, &blk), MPI_SUCCESS);
    }
    if (!(me & 1))
        CHECK_RC(MPI_Comm_free(&tmp), MPI_SUCCESS);
    for (int i = 0; i < 6; i++) {
        int idx;
        CHECK_RC(MPI_Waitany(6, rc6, &idx, MPI_STATUS_IGNORE), MPI_SUCCESS);
        CHECK(idx >= 0 && idx < 6);
    }
    int gc = check_idups(c, 6, 50); /* how many: depends on the race of the allocations */
    same_everywhere(blk, has_group(blk));
    exercise(blk, 70);
    for (int i = 0; i < 6; i++)
        CHECK_RC(MPI_Comm_free(&c[me & 1 ? i : 5 - i]), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&blk), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&base), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free(&half), MPI_SUCCESS);

    /* (d) idup / use / free cycles: slots come back to idups too. */
    int cycled = 0;
    for (int i = 0; i < CYCLES / 3; i++) {
        MPI_Comm d;
        MPI_Request r;
        CHECK_RC(MPI_Comm_idup(MPI_COMM_WORLD, &d, &r), MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
        int hg = has_group(d), sum = 0, one = 1;
        CHECK_RC(MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, d), MPI_SUCCESS);
        CHECK(sum == n);
        if (i % 20 == 0)
            same_everywhere(d, hg);
        cycled += hg;
        CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    }
    if (n > 1)
        CHECK(cycled > CYCLES / 6);
    if (me == 0)
        printf("mpi_comm_mailbox: idups: %d of 3 + %d of %d (%d free slots left) + %d of 6 "
               "had a group, %d of %d cycles\n",
               ga, gb, NIDUP, left, gc, cycled, CYCLES / 3);
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

    idups(slots);

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
