/* mpi_connect.c — MPI_Open_port / Comm_accept / Comm_connect / Comm_join /
 * Comm_disconnect between two separately started jobs (src/mpi/dpm.c). Run as two jobs
 * of any sizes, "server" and "client", that meet through files in DIR (separately
 * started jobs have separate launchers, hence no common name service): the server opens a
 * port and accepts, the client connects. Over the intercommunicator: messages from every
 * process to every process of the other job (8 B, 1000 B and 300 KB: eager and
 * rendezvous, contents checked), a broadcast from the server's rank 0, then
 * MPI_Intercomm_merge (the client high: ranks and a sum checked) and disconnect. Then
 * rank 0 of each job joins over a TCP connection of its own (MPI_Comm_join) and they
 * exchange a message. Error paths: connect to a closed port and to a malformed name ->
 * MPI_ERR_PORT, accept and close of a port not open here -> MPI_ERR_PORT; the client's
 * root first connects to a second port of the server that nobody accepts on (MPI_ERR_PORT
 * after the info key timeout, 1 s, then after FMPL_PORT_TIMEOUT_MS, which the script sets
 * to 2 s, the messages naming which), then
 * to the real port with a wrong token (MPI_ERR_PORT, "wrong token"; the server's accept
 * refuses that connection and takes the next one); join over fd -1 -> MPI_ERR_ARG. Also,
 * within one job of two or more ranks ("self" mode, DIR unused): join of ranks 0 and 1
 * (the remote process is one of this job's: its world rank, over shm). With a third
 * argument "authmismatch" (the script starts the two jobs with different FMPL_UDP_AUTH),
 * only the rank 0s join, and both fail with MPI_ERR_OTHER naming FMPL_UDP_AUTH.
 * "timeout" mode, within one job of two or more ranks (as MPICH's
 * errors/spawn/connect_timeout): the odd ranks connect together to a port the even ranks
 * opened and never accept on, first without info (every member gets MPI_ERR_PORT after
 * the wait of the setting SETTING, MS ms, which the message names with its value), then
 * with the info key timeout = 1 (after 1 s, the message naming the key).
 * Usage: mpi_connect server|client|self DIR [authmismatch]
 *        mpi_connect timeout SETTING MS */
#include <arpa/inet.h>
#include <mpi.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define CHECK(x)                                                                                   \
    do {                                                                                           \
        if (!(x)) {                                                                                \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, #x);                  \
            MPI_Abort(MPI_COMM_WORLD, 1);                                                          \
        }                                                                                          \
    } while (0)

static const char *dir;

static void put_file(const char *name, const char *text)
{
    char tmp[512], path[512];
    snprintf(tmp, sizeof tmp, "%s/.%s", dir, name);
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(tmp, "w");
    CHECK(f);
    fputs(text, f);
    CHECK(fclose(f) == 0 && rename(tmp, path) == 0);
}

static void get_file(const char *name, char *out, int len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    for (int i = 0; i < 60000; i++) {
        FILE *f = fopen(path, "r");
        if (f) {
            CHECK(fgets(out, len, f));
            fclose(f);
            return;
        }
        usleep(1000);
    }
    CHECK(0);
}

static unsigned char pattern(int from_job, int from, int to, size_t i)
{
    return (unsigned char)(from_job * 131 + from * 31 + to * 7 + i * 13 + (i >> 8));
}

/* Every process of each side sends to every process of the other, sizes 8, 1000, 300000. */
static void exchange(MPI_Comm inter, int job)
{
    int rank, rsize;
    MPI_Comm_rank(inter, &rank);
    MPI_Comm_remote_size(inter, &rsize);
    static const size_t sizes[3] = {8, 1000, 300000};
    for (int k = 0; k < 3; k++) {
        size_t n = sizes[k];
        unsigned char *out = malloc(n * (size_t)rsize), *in = malloc(n * (size_t)rsize);
        MPI_Request *rq = malloc(2 * (size_t)rsize * sizeof *rq);
        CHECK(out && in && rq);
        for (int r = 0; r < rsize; r++) {
            for (size_t i = 0; i < n; i++)
                out[(size_t)r * n + i] = pattern(job, rank, r, i);
            CHECK(MPI_Irecv(in + (size_t)r * n, (int)n, MPI_BYTE, r, k, inter, &rq[r]) ==
                  MPI_SUCCESS);
            CHECK(MPI_Isend(out + (size_t)r * n, (int)n, MPI_BYTE, r, k, inter, &rq[rsize + r]) ==
                  MPI_SUCCESS);
        }
        CHECK(MPI_Waitall(2 * rsize, rq, MPI_STATUSES_IGNORE) == MPI_SUCCESS);
        for (int r = 0; r < rsize; r++)
            for (size_t i = 0; i < n; i++)
                CHECK(in[(size_t)r * n + i] == pattern(!job, r, rank, i));
        free(out);
        free(in);
        free(rq);
    }
}

static void check_inter(MPI_Comm inter, int job, int size)
{
    int flag, rsize, rank;
    CHECK(MPI_Comm_test_inter(inter, &flag) == MPI_SUCCESS && flag);
    MPI_Comm_remote_size(inter, &rsize);
    MPI_Comm_rank(inter, &rank);
    exchange(inter, job);
    /* broadcast from the server's rank 0 */
    int v = job == 0 && rank == 0 ? 4242 : -1;
    int root = job == 0 ? (rank == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
    CHECK(MPI_Bcast(&v, 1, MPI_INT, root, inter) == MPI_SUCCESS);
    CHECK(job == 0 ? v == (rank == 0 ? 4242 : -1) : v == 4242);
    /* merge: the server low */
    MPI_Comm merged;
    CHECK(MPI_Intercomm_merge(inter, job == 1, &merged) == MPI_SUCCESS);
    int msize, mrank;
    MPI_Comm_size(merged, &msize);
    MPI_Comm_rank(merged, &mrank);
    CHECK(msize == size + rsize);
    CHECK(mrank == (job == 0 ? rank : rsize + rank));
    int x = mrank * mrank + 1, sum = 0;
    CHECK(MPI_Allreduce(&x, &sum, 1, MPI_INT, MPI_SUM, merged) == MPI_SUCCESS);
    int want = 0;
    for (int i = 0; i < msize; i++)
        want += i * i + 1;
    CHECK(sum == want);
    MPI_Comm_free(&merged);
}

/* rank 0 of each side: a TCP connection of its own, then MPI_Comm_join over it; its port
 * goes through the file `name`, or (NULL) from rank 0 to rank 1 of this job */
static void join_pair(int listener, const char *name, MPI_Comm *inter, int expect_fail)
{
    int fd;
    if (listener) {
        int l = socket(AF_INET, SOCK_STREAM, 0);
        struct sockaddr_in sa = {.sin_family = AF_INET};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t sl = sizeof sa;
        CHECK(l >= 0 && bind(l, (struct sockaddr *)&sa, sizeof sa) == 0 && listen(l, 1) == 0);
        CHECK(getsockname(l, (struct sockaddr *)&sa, &sl) == 0);
        char text[32];
        snprintf(text, sizeof text, "%u", ntohs(sa.sin_port));
        if (name)
            put_file(name, text);
        else
            MPI_Send(text, sizeof text, MPI_CHAR, 1, 9, MPI_COMM_WORLD);
        fd = accept(l, NULL, NULL);
        close(l);
    } else {
        char text[32];
        if (name)
            get_file(name, text, sizeof text);
        else
            MPI_Recv(text, sizeof text, MPI_CHAR, 0, 9, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)atoi(text))};
        sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        fd = socket(AF_INET, SOCK_STREAM, 0);
        CHECK(fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof sa) == 0);
    }
    CHECK(fd >= 0);
    if (expect_fail) {
        int rc = MPI_Comm_join(fd, inter), cls, len;
        char msg[MPI_MAX_ERROR_STRING];
        MPI_Error_class(rc, &cls);
        MPI_Error_string(rc, msg, &len);
        printf("join with another FMPL_UDP_AUTH: %s\n", msg);
        CHECK(cls == MPI_ERR_OTHER && *inter == MPI_COMM_NULL && strstr(msg, "FMPL_UDP_AUTH"));
        close(fd);
        return;
    }
    CHECK(MPI_Comm_join(fd, inter) == MPI_SUCCESS);
    close(fd);
    int rsize, size;
    MPI_Comm_remote_size(*inter, &rsize);
    MPI_Comm_size(*inter, &size);
    CHECK(rsize == 1 && size == 1);
    char msg[32], got[32];
    snprintf(msg, sizeof msg, "join from %s", listener ? "listener" : "connector");
    CHECK(MPI_Sendrecv(msg, sizeof msg, MPI_CHAR, 0, 5, got, sizeof got, MPI_CHAR, 0, 5, *inter,
                       MPI_STATUS_IGNORE) == MPI_SUCCESS);
    CHECK(strcmp(got, listener ? "join from connector" : "join from listener") == 0);
    CHECK(MPI_Comm_disconnect(inter) == MPI_SUCCESS && *inter == MPI_COMM_NULL);
}

/* One connect of the odd ranks to port, which nobody accepts on: every member returns
 * MPI_ERR_PORT, no communicator, a message with `want`, after wait_ms (less 5%, at most
 * 4 s more: a loaded machine). */
static void connect_fails(const char *port, MPI_Info info, MPI_Comm group, const char *want,
                          int wait_ms)
{
    MPI_Comm inter = MPI_COMM_WORLD;
    char msg[MPI_MAX_ERROR_STRING];
    int cls, len, rank;
    MPI_Comm_rank(group, &rank);
    double t0 = MPI_Wtime();
    int rc = MPI_Comm_connect(port, info, 0, group, &inter);
    double waited = MPI_Wtime() - t0;
    MPI_Error_class(rc, &cls);
    MPI_Error_string(rc, msg, &len);
    if (rank == 0)
        printf("connect (%.1f s): %s\n", waited, msg);
    CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
    CHECK(strstr(msg, "no MPI_Comm_accept on it within") && strstr(msg, want));
    CHECK(waited >= 0.95 * wait_ms / 1000 && waited < wait_ms / 1000.0 + 4);
}

/* "timeout" mode (see the header): setting=value is what the message must name. */
static void connect_timeout(const char *setting, int ms)
{
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm group;
    CHECK(MPI_Comm_split(MPI_COMM_WORLD, rank % 2, rank, &group) == MPI_SUCCESS);
    MPI_Comm_set_errhandler(group, MPI_ERRORS_RETURN);
    char port[MPI_MAX_PORT_NAME] = "";
    if (rank == 0)
        CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
    CHECK(MPI_Bcast(port, MPI_MAX_PORT_NAME, MPI_CHAR, 0, MPI_COMM_WORLD) == MPI_SUCCESS);
    if (rank % 2) {
        char want[96];
        /* the setting in seconds (MPICH's) or milliseconds (ours) */
        if (strncmp(setting, "MPIR_CVAR_", 10) == 0)
            snprintf(want, sizeof want, "within %d ms (%s=%d)", ms, setting, ms / 1000);
        else
            snprintf(want, sizeof want, "within %d ms (%s=%d)", ms, setting, ms);
        connect_fails(port, MPI_INFO_NULL, group, want, ms);
        MPI_Info info;
        MPI_Info_create(&info);
        MPI_Info_set(info, "timeout", "1");
        connect_fails(port, info, group, "within 1000 ms (the info key timeout=1)", 1000);
        MPI_Info_free(&info);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        CHECK(MPI_Close_port(port) == MPI_SUCCESS);
        printf("mpi_connect timeout: OK\n");
    }
    MPI_Comm_free(&group);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    CHECK(argc == 3 || argc == 4);
    dir = argv[2];
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Comm_set_errhandler(MPI_COMM_SELF, MPI_ERRORS_RETURN);
    MPI_Comm inter;
    if (strcmp(argv[1], "self") == 0) {
        CHECK(size >= 2);
        if (rank < 2)
            join_pair(rank == 0, NULL, &inter, 0);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("mpi_connect: OK\n");
        MPI_Finalize();
        return 0;
    }
    if (strcmp(argv[1], "timeout") == 0) {
        CHECK(argc == 4 && size >= 2);
        connect_timeout(argv[2], atoi(argv[3]));
        MPI_Finalize();
        return 0;
    }
    int job = strcmp(argv[1], "client") == 0;
    CHECK(job || strcmp(argv[1], "server") == 0);
    if (argc == 4) {
        CHECK(strcmp(argv[3], "authmismatch") == 0);
        if (rank == 0)
            join_pair(job == 0, "join", &inter, 1);
        MPI_Barrier(MPI_COMM_WORLD);
        if (rank == 0)
            printf("mpi_connect %s: OK\n", argv[1]);
        MPI_Finalize();
        return 0;
    }

    /* error paths */
    char port[MPI_MAX_PORT_NAME], closed[MPI_MAX_PORT_NAME];
    int cls;
    CHECK(MPI_Open_port(MPI_INFO_NULL, closed) == MPI_SUCCESS);
    CHECK(strncmp(closed, "fmpl-port:", 10) == 0);
    CHECK(MPI_Close_port(closed) == MPI_SUCCESS);
    int rc = MPI_Close_port(closed);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    rc = MPI_Comm_connect(closed, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
    rc = MPI_Comm_connect("fmpl-port:nonsense", MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    rc = MPI_Comm_accept(closed, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT);
    /* a failure at the root reaches every member */
    rc = MPI_Comm_connect(closed, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
    rc = MPI_Comm_join(-1, &inter);
    MPI_Error_class(rc, &cls);
    CHECK(cls == MPI_ERR_ARG && inter == MPI_COMM_NULL);
    char msg[MPI_MAX_ERROR_STRING];
    int len;

    char idle[MPI_MAX_PORT_NAME];
    if (job == 0) {
        if (rank == 0) {
            CHECK(MPI_Open_port(MPI_INFO_NULL, port) == MPI_SUCCESS);
            CHECK(MPI_Open_port(MPI_INFO_NULL, idle) == MPI_SUCCESS);
            CHECK(strcmp(port, idle) != 0);
            put_file("idle", idle);
            put_file("port", port);
        }
        CHECK(MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_WORLD, &inter) == MPI_SUCCESS);
        if (rank == 0) {
            CHECK(MPI_Close_port(port) == MPI_SUCCESS);
            CHECK(MPI_Close_port(idle) == MPI_SUCCESS);
        }
    } else {
        if (rank == size - 1) {
            /* a port nobody accepts on: the connect gives up after FMPL_PORT_TIMEOUT_MS */
            get_file("idle", idle, sizeof idle);
            /* the info key "timeout" (seconds) overrides the setting */
            MPI_Info tinfo;
            MPI_Info_create(&tinfo);
            MPI_Info_set(tinfo, "timeout", "1");
            double t1 = MPI_Wtime();
            rc = MPI_Comm_connect(idle, tinfo, 0, MPI_COMM_SELF, &inter);
            double waited1 = MPI_Wtime() - t1;
            MPI_Info_free(&tinfo);
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("connect with info timeout=1 (%.1f s): %s\n", waited1, msg);
            CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL && strstr(msg, "info key timeout"));
            CHECK(waited1 >= 0.9 && waited1 < 1.9);
            double t0 = MPI_Wtime();
            rc = MPI_Comm_connect(idle, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            double waited = MPI_Wtime() - t0;
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("connect to a port without accept (%.1f s): %s\n", waited, msg);
            CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL);
            CHECK(strstr(msg, "FMPL_PORT_TIMEOUT_MS") && waited >= 1.9 && waited < 30);
            /* the real port with a wrong token */
            get_file("port", port, sizeof port);
            char *tok = strrchr(port, ':');
            CHECK(tok && strlen(tok + 1) == 32);
            char wrong[MPI_MAX_PORT_NAME];
            snprintf(wrong, sizeof wrong, "%s", port);
            wrong[strlen(wrong) - 1] = port[strlen(port) - 1] == '0' ? '1' : '0';
            rc = MPI_Comm_connect(wrong, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter);
            MPI_Error_class(rc, &cls);
            MPI_Error_string(rc, msg, &len);
            printf("connect with a wrong token: %s\n", msg);
            CHECK(cls == MPI_ERR_PORT && inter == MPI_COMM_NULL && strstr(msg, "wrong token"));
        }
        CHECK(MPI_Comm_connect(port, MPI_INFO_NULL, size - 1, MPI_COMM_WORLD, &inter) ==
              MPI_SUCCESS);
    }
    check_inter(inter, job, size);
    CHECK(MPI_Comm_disconnect(&inter) == MPI_SUCCESS && inter == MPI_COMM_NULL);
    if (rank == 0)
        join_pair(job == 0, "join", &inter, 0);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        printf("mpi_connect %s: OK\n", argv[1]);
    MPI_Finalize();
    return 0;
}
