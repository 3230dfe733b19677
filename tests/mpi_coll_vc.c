/* mpi_coll_vc.c — the large-count v-forms (MPI_Gatherv_c, Scatterv_c, Allgatherv_c,
 * Alltoallv_c, Alltoallw_c, and Reduce_scatter_c with its count array), blocking, nonblocking and
 * persistent, against the contents their int forms must give: every block checked element by
 * element. Counts differ per rank (rank r sends r + 1 ints to each peer, some ranks none) and
 * displacements leave gaps, so a count or a displacement read from the wrong array or at the wrong
 * width shows. Error path: a negative MPI_Count in a _c call is MPI_ERR_COUNT, as for the int form.
 *
 *   mpiexec -n N mpi_coll_vc */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank, size, failures;

#define CHECK(cond, ...)                                                                           \
    do {                                                                                           \
        if (!(cond)) {                                                                             \
            fprintf(stderr, "mpi_coll_vc: rank %d: ", rank);                                       \
            fprintf(stderr, __VA_ARGS__);                                                          \
            fprintf(stderr, "\n");                                                                 \
            failures++;                                                                            \
        }                                                                                          \
    } while (0)

/* How many ints rank `from` sends to each peer (rank 1 none: an empty block), and the
 * value of its i-th one for peer `to` in round `round`. */
static int count_of(int from)
{
    return from == 1 ? 0 : from + 1;
}
static int value(int from, int to, int i, int round)
{
    return 1000000 * round + 10000 * from + 100 * to + i;
}

/* Starts, waits and frees the request of a nonblocking or persistent call (form 1, 2). */
static void complete(int form, MPI_Request *req)
{
    if (form == 2)
        MPI_Start(req);
    MPI_Wait(req, MPI_STATUS_IGNORE);
    if (form == 2)
        MPI_Request_free(req);
}

/* Displacements with a gap of 3 ints after every block. */
static void layout(MPI_Count *counts, MPI_Aint *displs, int (*cnt)(int r, int me), int me)
{
    MPI_Aint at = 0;
    for (int r = 0; r < size; r++) {
        counts[r] = cnt(r, me);
        displs[r] = at;
        at += counts[r] + 3;
    }
}
static int from_r(int r, int me)
{
    (void)me;
    return count_of(r);
}
static int from_me(int r, int me)
{
    (void)r;
    return count_of(me);
}

/* Checks the blocks received from every rank r into buf (counts[r] ints at displs[r], each
 * followed by an untouched gap): value(r, to, i, round). */
static void check_blocks(const char *what, int form, const int *buf, const MPI_Count *counts,
                         const MPI_Aint *displs, int to, int round)
{
    for (int r = 0; r < size; r++) {
        for (int i = 0; i < counts[r]; i++)
            CHECK(buf[displs[r] + i] == value(r, to, i, round), "%s form %d: block %d [%d] = %d",
                  what, form, r, i, buf[displs[r] + i]);
        CHECK(buf[displs[r] + counts[r]] == -1, "%s form %d: gap after block %d written", what,
              form, r);
    }
}

static void gatherv(int form, int root, int round)
{
    MPI_Count *rc = malloc(sizeof *rc * (size_t)size);
    MPI_Aint *rd = malloc(sizeof *rd * (size_t)size);
    layout(rc, rd, from_r, rank);
    int total = (int)(rd[size - 1] + rc[size - 1] + 3);
    int *sbuf = malloc(sizeof(int) * (size_t)(count_of(rank) + 1));
    int *rbuf = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < count_of(rank); i++)
        sbuf[i] = value(rank, root, i, round);
    for (int i = 0; i < total; i++)
        rbuf[i] = -1;
    MPI_Request req;
    if (form == 0)
        MPI_Gatherv_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, root, MPI_COMM_WORLD);
    else if (form == 1)
        MPI_Igatherv_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, root, MPI_COMM_WORLD,
                       &req);
    else
        MPI_Gatherv_init_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, root,
                           MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    if (form)
        complete(form, &req);
    if (rank == root)
        check_blocks("gatherv_c", form, rbuf, rc, rd, root, round);
    free(sbuf);
    free(rbuf);
    free(rc);
    free(rd);
}

static void scatterv(int form, int root, int round)
{
    MPI_Count *sc = malloc(sizeof *sc * (size_t)size);
    MPI_Aint *sd = malloc(sizeof *sd * (size_t)size);
    layout(sc, sd, from_r, rank); /* block r: count_of(r) ints for rank r */
    int total = (int)(sd[size - 1] + sc[size - 1] + 3);
    int *sbuf = malloc(sizeof(int) * (size_t)total);
    int *rbuf = malloc(sizeof(int) * (size_t)(count_of(rank) + 1));
    for (int r = 0; r < size; r++)
        for (int i = 0; i < count_of(r); i++)
            sbuf[sd[r] + i] = value(root, r, i, round);
    for (int i = 0; i <= count_of(rank); i++)
        rbuf[i] = -1;
    MPI_Request req;
    if (form == 0)
        MPI_Scatterv_c(sbuf, sc, sd, MPI_INT, rbuf, count_of(rank), MPI_INT, root, MPI_COMM_WORLD);
    else if (form == 1)
        MPI_Iscatterv_c(sbuf, sc, sd, MPI_INT, rbuf, count_of(rank), MPI_INT, root, MPI_COMM_WORLD,
                        &req);
    else
        MPI_Scatterv_init_c(sbuf, sc, sd, MPI_INT, rbuf, count_of(rank), MPI_INT, root,
                            MPI_COMM_WORLD, MPI_INFO_NULL, &req);
    if (form)
        complete(form, &req);
    for (int i = 0; i < count_of(rank); i++)
        CHECK(rbuf[i] == value(root, rank, i, round), "scatterv_c form %d root %d: [%d] = %d", form,
              root, i, rbuf[i]);
    CHECK(rbuf[count_of(rank)] == -1, "scatterv_c form %d: wrote past the block", form);
    free(sbuf);
    free(rbuf);
    free(sc);
    free(sd);
}

static void allgatherv(int form, int round)
{
    MPI_Count *rc = malloc(sizeof *rc * (size_t)size);
    MPI_Aint *rd = malloc(sizeof *rd * (size_t)size);
    layout(rc, rd, from_r, rank);
    int total = (int)(rd[size - 1] + rc[size - 1] + 3);
    int *sbuf = malloc(sizeof(int) * (size_t)(count_of(rank) + 1));
    int *rbuf = malloc(sizeof(int) * (size_t)total);
    for (int i = 0; i < count_of(rank); i++)
        sbuf[i] = value(rank, 0, i, round);
    for (int i = 0; i < total; i++)
        rbuf[i] = -1;
    MPI_Request req;
    if (form == 0)
        MPI_Allgatherv_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD);
    else if (form == 1)
        MPI_Iallgatherv_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD,
                          &req);
    else
        MPI_Allgatherv_init_c(sbuf, count_of(rank), MPI_INT, rbuf, rc, rd, MPI_INT, MPI_COMM_WORLD,
                              MPI_INFO_NULL, &req);
    if (form)
        complete(form, &req);
    check_blocks("allgatherv_c", form, rbuf, rc, rd, 0, round);
    free(sbuf);
    free(rbuf);
    free(rc);
    free(rd);
}

/* Alltoallv_c (w 0) or alltoallw_c (w 1, byte displacements, MPI_INT for every block). */
static void alltoall(int w, int form, int round)
{
    MPI_Count *sc = malloc(sizeof *sc * (size_t)size), *rc = malloc(sizeof *rc * (size_t)size);
    MPI_Aint *sd = malloc(sizeof *sd * (size_t)size), *rd = malloc(sizeof *rd * (size_t)size);
    MPI_Datatype *types = malloc(sizeof *types * (size_t)size);
    layout(sc, sd, from_me, rank); /* to every peer: count_of(rank) ints */
    layout(rc, rd, from_r, rank);  /* from peer r: count_of(r) ints */
    int stotal = (int)(sd[size - 1] + sc[size - 1] + 3),
        rtotal = (int)(rd[size - 1] + rc[size - 1] + 3);
    int *sbuf = malloc(sizeof(int) * (size_t)stotal), *rbuf = malloc(sizeof(int) * (size_t)rtotal);
    for (int r = 0; r < size; r++) {
        types[r] = MPI_INT;
        for (int i = 0; i < sc[r]; i++)
            sbuf[sd[r] + i] = value(rank, r, i, round);
    }
    for (int i = 0; i < rtotal; i++)
        rbuf[i] = -1;
    MPI_Aint *sdb = malloc(sizeof *sdb * (size_t)size), *rdb = malloc(sizeof *rdb * (size_t)size);
    for (int r = 0; r < size; r++) {
        sdb[r] = sd[r] * (MPI_Aint)sizeof(int);
        rdb[r] = rd[r] * (MPI_Aint)sizeof(int);
    }
    MPI_Request req;
    MPI_Comm comm = MPI_COMM_WORLD;
    if (!w && form == 0)
        MPI_Alltoallv_c(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm);
    else if (!w && form == 1)
        MPI_Ialltoallv_c(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, &req);
    else if (!w)
        MPI_Alltoallv_init_c(sbuf, sc, sd, MPI_INT, rbuf, rc, rd, MPI_INT, comm, MPI_INFO_NULL,
                             &req);
    else if (form == 0)
        MPI_Alltoallw_c(sbuf, sc, sdb, types, rbuf, rc, rdb, types, comm);
    else if (form == 1)
        MPI_Ialltoallw_c(sbuf, sc, sdb, types, rbuf, rc, rdb, types, comm, &req);
    else
        MPI_Alltoallw_init_c(sbuf, sc, sdb, types, rbuf, rc, rdb, types, comm, MPI_INFO_NULL, &req);
    if (form)
        complete(form, &req);
    check_blocks(w ? "alltoallw_c" : "alltoallv_c", form, rbuf, rc, rd, rank, round);
    free(sbuf);
    free(rbuf);
    free(sc);
    free(rc);
    free(sd);
    free(rd);
    free(sdb);
    free(rdb);
    free(types);
}

/* Reduce_scatter_c: rank r gets count_of(r) sums; element i of block r sums value(q, r,
 * i, round) over every rank q. */
static void reduce_scatter(int form, int round)
{
    MPI_Count *rc = malloc(sizeof *rc * (size_t)size);
    int total = 0;
    for (int r = 0; r < size; r++) {
        rc[r] = count_of(r);
        total += count_of(r);
    }
    int *sbuf = malloc(sizeof(int) * (size_t)(total + 1)),
        *rbuf = malloc(sizeof(int) * (size_t)(count_of(rank) + 1));
    for (int r = 0, at = 0; r < size; r++)
        for (int i = 0; i < count_of(r); i++)
            sbuf[at++] = value(rank, r, i, round);
    for (int i = 0; i <= count_of(rank); i++)
        rbuf[i] = -1;
    MPI_Request req;
    if (form == 0)
        MPI_Reduce_scatter_c(sbuf, rbuf, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    else if (form == 1)
        MPI_Ireduce_scatter_c(sbuf, rbuf, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &req);
    else
        MPI_Reduce_scatter_init_c(sbuf, rbuf, rc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL,
                                  &req);
    if (form)
        complete(form, &req);
    for (int i = 0; i < count_of(rank); i++) {
        int want = 0;
        for (int q = 0; q < size; q++)
            want += value(q, rank, i, round);
        CHECK(rbuf[i] == want, "reduce_scatter_c form %d: [%d] = %d, want %d", form, i, rbuf[i],
              want);
    }
    CHECK(rbuf[count_of(rank)] == -1, "reduce_scatter_c form %d: wrote past the block", form);
    free(sbuf);
    free(rbuf);
    free(rc);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int round = 0;
    for (int form = 0; form < 3; form++) {
        for (int root = 0; root < size; root++) {
            gatherv(form, root, ++round);
            scatterv(form, root, ++round);
        }
        allgatherv(form, ++round);
        alltoall(0, form, ++round);
        alltoall(1, form, ++round);
        reduce_scatter(form, ++round);
    }
    /* Error path: a negative count in the _c arrays, at the root of a gatherv. */
    if (rank == 0) {
        MPI_Count rc[1] = {-2};
        MPI_Aint rd[1] = {0};
        int x = 0, y = 0, cls = 0;
        MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
        int err = MPI_Gatherv_c(&x, 0, MPI_INT, &y, rc, rd, MPI_INT, 0, MPI_COMM_SELF);
        MPI_Error_class(err, &cls);
        CHECK(cls == MPI_ERR_COUNT, "gatherv_c with a negative count: class %d, not MPI_ERR_COUNT",
              cls);
    }
    int all = 0;
    MPI_Allreduce(&failures, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_coll_vc: %d ranks, %d rounds: %s\n", size, round, all ? "FAILED" : "ok");
    MPI_Finalize();
    return all != 0;
}
