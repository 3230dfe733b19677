/* mpi_match — cost of MPI matching with long queues: how the time per message grows
 * with the number of receives already posted (or messages already unexpected) that do
 * not match it. Builds against any MPI (ours, MPICH, Open MPI).
 *
 *   mpiexec -n 2 mpi_match [--csv] [--impl=NAME] [--depths=1,16,256,4096,16384] [--reps=N]
 *
 * posted: rank 1 posts D receives with tags 1..D (from rank 0), then rank 0 sends tags
 *   D..1 (the last posted matches first: a list walk would touch all D); time per
 *   message on rank 1 from its "go" to the last completion (one latency amortised).
 * unexpected: rank 0 sends D messages with tags 1..D, a handshake, then rank 1 receives
 *   them in reverse tag order; time per receive on rank 1.
 * Both: 8-byte messages, medians of --reps repetitions. CSV rows as the other MPI
 * benchmarks: impl,bench,mem,np,size(=depth),metric,value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int rank;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
    qsort(v, (size_t)n, sizeof *v, cmp_double);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* Seconds per message, measured on rank 1 (0 elsewhere). */
static double posted(int depth, double *buf, MPI_Request *rq, MPI_Status *st)
{
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        for (int i = 0; i < depth; i++)
            MPI_Irecv(&buf[i], 1, MPI_DOUBLE, 0, i + 1, MPI_COMM_WORLD, &rq[i]);
        double t0 = MPI_Wtime();
        MPI_Send(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD); /* posted: go */
        MPI_Waitall(depth, rq, st); /* (MPICH's header warns on MPI_STATUSES_IGNORE) */
        t = (MPI_Wtime() - t0) / depth;
    } else if (rank == 0) {
        MPI_Recv(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int i = depth; i >= 1; i--) {
            double v = i;
            MPI_Send(&v, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
        }
    }
    return t;
}

static double unexpected(int depth, double *buf)
{
    double t = 0;
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        for (int i = 1; i <= depth; i++) {
            double v = i;
            MPI_Send(&v, 1, MPI_DOUBLE, 1, i, MPI_COMM_WORLD);
        }
        MPI_Send(NULL, 0, MPI_BYTE, 1, 0, MPI_COMM_WORLD); /* all sent */
    } else if (rank == 1) {
        MPI_Recv(NULL, 0, MPI_BYTE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        double t0 = MPI_Wtime();
        for (int i = depth; i >= 1; i--)
            MPI_Recv(&buf[i - 1], 1, MPI_DOUBLE, 0, i, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        t = (MPI_Wtime() - t0) / depth;
    }
    return t;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int csv = 0, reps = 5;
    const char *impl = "mpi", *depths = "1,16,256,4096,16384";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strncmp(argv[i], "--impl=", 7))
            impl = argv[i] + 7;
        else if (!strncmp(argv[i], "--depths=", 9))
            depths = argv[i] + 9;
        else if (!strncmp(argv[i], "--reps=", 7))
            reps = atoi(argv[i] + 7);
    }
    if (size < 2 || reps < 1) {
        if (rank == 0)
            fprintf(stderr, "mpi_match: needs 2 ranks and --reps >= 1\n");
        MPI_Finalize();
        return 1;
    }
    if (rank == 0) {
        if (csv)
            printf("impl,bench,mem,np,size,metric,value\n");
        else
            printf("%8s %14s %14s   (ns per message, medians of %d)\n", "depth", "posted",
                   "unexpected", reps);
    }
    char *list = strdup(depths);
    for (char *tok = strtok(list, ","); tok; tok = strtok(NULL, ",")) {
        int d = atoi(tok);
        if (d < 1)
            continue;
        double *buf = malloc((size_t)d * sizeof *buf);
        MPI_Request *rq = malloc((size_t)d * sizeof *rq);
        MPI_Status *st = malloc((size_t)d * sizeof *st);
        double *tp = malloc((size_t)reps * sizeof *tp), *tu = malloc((size_t)reps * sizeof *tu);
        if (!buf || !rq || !st || !tp || !tu)
            MPI_Abort(MPI_COMM_WORLD, 1);
        posted(d, buf, rq, st); /* warm-up */
        for (int r = 0; r < reps; r++) {
            tp[r] = posted(d, buf, rq, st);
            tu[r] = unexpected(d, buf);
        }
        for (int i = 0; rank == 1 && i < d; i++) /* contents of the last round */
            if (buf[i] != i + 1) {
                fprintf(stderr, "mpi_match: wrong message for tag %d\n", i + 1);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        double res[2] = {median(tp, reps) * 1e9, median(tu, reps) * 1e9};
        /* rank 1 measured; rank 0 prints */
        if (rank == 1)
            MPI_Send(res, 2, MPI_DOUBLE, 0, 99, MPI_COMM_WORLD);
        else if (rank == 0)
            MPI_Recv(res, 2, MPI_DOUBLE, 1, 99, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        if (rank == 0 && csv) {
            printf("%s,match_posted,malloc,%d,%d,ns_per_msg,%.2f\n", impl, size, d, res[0]);
            printf("%s,match_unexpected,malloc,%d,%d,ns_per_msg,%.2f\n", impl, size, d, res[1]);
        } else if (rank == 0) {
            printf("%8d %14.1f %14.1f\n", d, res[0], res[1]);
        }
        free(buf);
        free(rq);
        free(st);
        free(tp);
        free(tu);
    }
    free(list);
    MPI_Finalize();
    return 0;
}
