/* mpi_spawn.c — MPI_Comm_spawn, MPI_Comm_spawn_multiple, MPI_Comm_get_parent (src/mpi/
 * spawn.c) under fmplrun. The parents (any number of ranks) spawn N children of this
 * program ("child" mode) with arguments; over the intercommunicator every parent and
 * every child exchange messages both ways (8 B and 200 KB, contents checked), then
 * MPI_Intercomm_merge (children high: ranks and a sum checked) and disconnect; the
 * children check their own MPI_COMM_WORLD (size N, an allreduce), their arguments and
 * that the parent communicator is an intercommunicator with the parents as remote
 * group. Then spawn_multiple of two commands (1 + 2 children in one world of 3, their
 * arguments and MPI_APPNUM 0 and 1 checked), and a missing program -> MPI_ERR_SPAWN on every parent
 * with MPI_ERR_SPAWN in each errcode. A parent's get_parent is MPI_COMM_NULL. Usage: mpi_spawn N
 * (the parents) | mpi_spawn child TAG N */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x);                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

#define BIG 200000

static unsigned char pattern(int side, int from, int to, size_t i)
{
    return (unsigned char)(side * 101 + from * 37 + to * 11 + i * 7 + (i >> 9));
}

/* side 0: parents, 1: children */
static void talk(MPI_Comm inter, int side)
{
    int rank, size, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_size(inter, &size);
    MPI_Comm_remote_size(inter, &rsize);
    unsigned char *out = malloc(BIG), *in = malloc(BIG);
    CHECK(out && in);
    for (int r = 0; r < rsize; r++) {
        for (int k = 0; k < 2; k++) {
            size_t n = k ? BIG : 8;
            for (size_t i = 0; i < n; i++)
                out[i] = pattern(side, rank, r, i);
            /* the parents send first, the children receive first */
            for (int step = 0; step < 2; step++) {
                if (step == side)
                    CHECK(MPI_Send(out, (int)n, MPI_BYTE, r, k, inter) == MPI_SUCCESS);
                else {
                    MPI_Status st;
                    CHECK(MPI_Recv(in, (int)n, MPI_BYTE, r, k, inter, &st) == MPI_SUCCESS);
                    CHECK(st.MPI_SOURCE == r && st.MPI_TAG == k);
                    for (size_t i = 0; i < n; i++)
                        CHECK(in[i] == pattern(!side, r, rank, i));
                }
            }
        }
    }
    free(out);
    free(in);
    MPI_Comm merged;
    CHECK(MPI_Intercomm_merge(inter, side, &merged) == MPI_SUCCESS);
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(msize == size + rsize && mrank == (side ? rsize + rank : rank));
    int x = 3 * mrank + 1, sum = 0, want = 0;
    CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS);
    for (int i = 0; i < msize; i++)
        want += 3 * i + 1;
    CHECK(sum == want);
    CHECK(MPI_Comm_free(&merged) == MPI_SUCCESS);
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS && inter == MPI_COMM_NULL);
}

static int child(int argc, char **argv)
{
    MPI_Comm parent;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent != MPI_COMM_NULL);
    CHECK(argc == 4);
    int multi = strcmp(argv[2], "multi") == 0;
    int n = multi ? 3 : atoi(argv[3]), size, rank, flag, *appnum;
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK(size == n);
    int one = 1, total = 0;
    CHECK(MPI_Allreduce(&one, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD) == MPI_SUCCESS);
    CHECK(total == n);
    CHECK(MPI_Comm_test_inter(parent, &flag) == MPI_SUCCESS && flag);
    CHECK(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &appnum, &flag) == MPI_SUCCESS);
    if (multi) {
        /* one world of 3: command 0 ("multi 1") is rank 0, command 1 ("multi 2") ranks 1-2 */
        CHECK(flag && *appnum == (rank == 0 ? 0 : 1) && atoi(argv[3]) == (rank == 0 ? 1 : 2));
    }
    /* report to the parents: tag, size (multi: the first rank of each command) */
    if (rank == 0 || (multi && rank == 1)) {
        int info[2] = {multi ? 1000 + atoi(argv[3]) : atoi(argv[2]), size};
        CHECK(MPI_Send(info, 2, MPI_INT, 0, 99, parent) == MPI_SUCCESS);
    }
    if (multi) {
        CHECK(MPI_Comm_disconnect(&parent) == MPI_SUCCESS);
    } else {
        talk(parent, 1);
    }
    MPI_Comm p2;
    MPI_Comm_get_parent(&p2);
    CHECK(p2 == MPI_COMM_NULL);
    MPI_Finalize();
    return 0;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc > 1 && strcmp(argv[1], "child") == 0)
        return child(argc, argv);
    CHECK(argc == 2);
    if (strcmp(argv[1], "singleton") == 0) { /* no launcher: nothing can spawn */
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        MPI_Comm inter;
        int code = 0, cls;
        int rc = MPI_Comm_spawn(argv[0], MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter,
                                &code);
        MPI_Error_class(rc, &cls);
        CHECK(cls == MPI_ERR_SPAWN && code == MPI_ERR_SPAWN && inter == MPI_COMM_NULL);
        printf("mpi_spawn: OK\n");
        MPI_Finalize();
        return 0;
    }
    int nmax = atoi(argv[1]), rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm parent;
    CHECK(MPI_Comm_get_parent(&parent) == MPI_SUCCESS && parent == MPI_COMM_NULL);
    for (int n = 1; n <= nmax; n++) {
        char tag[16], cnt[16];
        snprintf(tag, sizeof tag, "%d", n);
        snprintf(cnt, sizeof cnt, "%d", n);
        char *args[] = {"child", tag, cnt, NULL};
        int codes[8] = {-1, -1, -1, -1, -1, -1, -1, -1};
        MPI_Comm inter;
        CHECK(MPI_Comm_spawn(argv[0], args, n, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter,
                             codes) == MPI_SUCCESS);
        for (int i = 0; i < n; i++)
            CHECK(codes[i] == MPI_SUCCESS);
        CHECK(codes[n] == -1);
        int rsize;
        MPI_Comm_remote_size(inter, &rsize);
        CHECK(rsize == n);
        if (rank == 0) {
            int info[2];
            CHECK(MPI_Recv(info, 2, MPI_INT, 0, 99, inter, MPI_STATUS_IGNORE) == MPI_SUCCESS);
            CHECK(info[0] == n && info[1] == n);
        }
        talk(inter, 0);
    }
    /* two commands: 1 + 2 processes */
    char *cmds[2] = {argv[0], argv[0]};
    char *a1[] = {"child", "multi", "1", NULL}, *a2[] = {"child", "multi", "2", NULL};
    char **argvs[2] = {a1, a2};
    int np[2] = {1, 2}, codes[3];
    MPI_Info infos[2] = {MPI_INFO_NULL, MPI_INFO_NULL};
    MPI_Comm inter;
    CHECK(MPI_Comm_spawn_multiple(2, cmds, argvs, np, infos, 0, MPI_COMM_WORLD, &inter, codes) ==
          MPI_SUCCESS);
    CHECK(codes[0] == 0 && codes[1] == 0 && codes[2] == 0);
    int rsize;
    MPI_Comm_remote_size(inter, &rsize);
    CHECK(rsize == 3);
    if (rank == 0) {
        /* the first process of each command reports: remote ranks 0 and 1 */
        int got = 0;
        for (int k = 0; k < 2; k++) {
            int info[2];
            MPI_Status st;
            CHECK(MPI_Recv(info, 2, MPI_INT, MPI_ANY_SOURCE, 99, inter, &st) == MPI_SUCCESS);
            CHECK(info[0] == 1000 + (st.MPI_SOURCE == 0 ? 1 : 2) && info[1] == 3);
            CHECK(st.MPI_SOURCE == 0 || st.MPI_SOURCE == 1);
            got |= 1 << st.MPI_SOURCE;
        }
        CHECK(got == 3);
    }
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS);

    /* a program that does not exist */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int bad[2] = {0, 0}, cls;
    int rc = MPI_Comm_spawn("/nonexistent/fmpl-program", MPI_ARGV_NULL, 2, MPI_INFO_NULL, 0,
                            MPI_COMM_WORLD, &inter, bad);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_SPAWN && inter == MPI_COMM_NULL);
    CHECK(bad[0] == MPI_ERR_SPAWN && bad[1] == MPI_ERR_SPAWN);
    char msg[MPI_MAX_ERROR_STRING];
    int len;
    MPI_Error_string(rc, msg, &len);
    if (rank == 0)
        printf("spawn of a missing program: %s\n", msg);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_spawn: OK\n");
    MPI_Finalize();
    return 0;
}
