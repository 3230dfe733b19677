/* mpi_dpm_latency — 8-byte ping-pong latency across an intercommunicator between two
 * separately started jobs (MPI_Comm_accept/connect: udp between the jobs, authenticated
 * with the pair's keys, src/vnic/link.c) against the same ping-pong inside one job
 * (MPI_COMM_WORLD of a job of two: shm, or udp with FMPL_TRANSPORT=udp). FMPL only (the
 * port name goes through a file; bench/mpi_dpm_latency.sh starts the jobs). Every job has
 * only the processes that ping-pong (no idle rank competing for the cores).
 *
 *   fmplrun -n 2 mpi_dpm_latency intra
 *   fmplrun -n 1 mpi_dpm_latency server DIR [ITERS] & fmplrun -n 1 mpi_dpm_latency client DIR
 *
 * Timed: rank 0 {MPI_Send; MPI_Recv} of 8 bytes, the other side {MPI_Recv; MPI_Send},
 * ITERS times (default 20000) after 1000 warm-up rounds; one-way latency = elapsed / (2
 * ITERS); the median of 5 repetitions is printed (contents checked on every message). */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void fail(const char *what)
{
    fprintf(stderr, "mpi_dpm_latency: %s\n", what);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* One-way latency in microseconds (median of 5) between `me` and `peer` of comm; the
 * pinger (first) reports. */
static double pingpong(MPI_Comm comm, int peer, int first, int iters)
{
    double rep[5];
    for (int r = 0; r < 5; r++) {
        int warm = r == 0 ? 1000 : 0;
        double t0 = 0;
        for (int i = -warm; i < iters; i++) {
            if (i == 0)
                t0 = MPI_Wtime();
            unsigned long long out = (unsigned long long)i * 2654435761u + (unsigned)r, in = 0;
            if (first) {
                MPI_Send(&out, 1, MPI_UNSIGNED_LONG_LONG, peer, 1, comm);
                MPI_Recv(&in, 1, MPI_UNSIGNED_LONG_LONG, peer, 1, comm, MPI_STATUS_IGNORE);
            } else {
                MPI_Recv(&in, 1, MPI_UNSIGNED_LONG_LONG, peer, 1, comm, MPI_STATUS_IGNORE);
                MPI_Send(&out, 1, MPI_UNSIGNED_LONG_LONG, peer, 1, comm);
            }
            if (in != out)
                fail("wrong contents");
        }
        rep[r] = (MPI_Wtime() - t0) / (2.0 * iters) * 1e6;
    }
    qsort(rep, 5, sizeof rep[0], cmp);
    return rep[2];
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    if (argc < 2 || (strcmp(argv[1], "intra") && argc < 3))
        fail("usage: mpi_dpm_latency intra [-] [ITERS] | server|client DIR [ITERS]");
    int server = strcmp(argv[1], "server") == 0, rank, size;
    int iters = argc > 3 ? atoi(argv[3]) : 20000;
    char path[512], tmp[520], port[MPI_MAX_PORT_NAME];
    snprintf(path, sizeof path, "%s/port", argc > 2 ? argv[2] : ".");
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Comm inter;
    if (strcmp(argv[1], "intra") == 0) {
        if (size != 2)
            fail("the intra job has 2 ranks");
        double intra = pingpong(MPI_COMM_WORLD, !rank, rank == 0, iters);
        if (rank == 0)
            printf("inside one job (MPI_COMM_WORLD, %s): %.2f us one-way\n",
                   getenv("FMPL_TRANSPORT") ? getenv("FMPL_TRANSPORT") : "auto", intra);
    } else if (server) {
        {
            MPI_Open_port(MPI_INFO_NULL, port);
            snprintf(tmp, sizeof tmp, "%s.tmp", path);
            FILE *f = fopen(tmp, "w");
            if (!f || fputs(port, f) < 0 || fclose(f) || rename(tmp, path))
                fail("cannot write the port file");
            if (MPI_Comm_accept(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) != MPI_SUCCESS)
                fail("accept");
            double across = pingpong(inter, 0, 1, iters);
            printf("across jobs (connect/accept intercommunicator, udp): %.2f us one-way\n",
                   across);
            MPI_Comm_disconnect(&inter);
            MPI_Close_port(port);
        }
    } else {
        FILE *f = NULL;
        for (int i = 0; i < 60000 && !(f = fopen(path, "r")); i++)
            usleep(1000);
        if (!f || !fgets(port, sizeof port, f))
            fail("no port file");
        fclose(f);
        if (MPI_Comm_connect(port, MPI_INFO_NULL, 0, MPI_COMM_SELF, &inter) != MPI_SUCCESS)
            fail("connect");
        pingpong(inter, 0, 0, iters);
        MPI_Comm_disconnect(&inter);
    }
    MPI_Finalize();
    return 0;
}
