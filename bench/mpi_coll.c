/* mpi_coll — MPI collectives, the MPI counterpart of fmpl_coll (barrier, bcast, allreduce)
 * plus reduce, allgather, alltoall and the persistent (MPI-4.0) bcast and allreduce, in the
 * same output format. One source, built with our mpicc, MPICH's and Open MPI's.
 *
 *   mpiexec -n 2 mpi_coll [--csv] [--quick] [--impl=NAME] [--reps=N] [--max=B]
 *                         [--mode=world|dup|idup|pairs|opairs|nb]
 *
 * --mode=dup runs every operation on a duplicate of MPI_COMM_WORLD instead of
 * MPI_COMM_WORLD itself (in FMPL it gets mailboxes of its own while slots last; with
 * FMPL_COLL_GROUPS=1 it has none and every call runs over point-to-point); --mode=idup
 * the same on a duplicate made by MPI_Comm_idup + MPI_Wait.
 *
 * Operations (root 0 where there is one), each at 8 B, 8 KiB and 1 MiB (--max caps them):
 *   barrier                MPI_Barrier (size 0 in the CSV rows)
 *   bcast                  MPI_Bcast of size bytes (MPI_BYTE)
 *   bcast_persistent       the same through MPI_Bcast_init once, then MPI_Start + MPI_Wait
 *   reduce                 MPI_Reduce, size bytes of MPI_DOUBLE, MPI_SUM, separate buffers
 *   allreduce              MPI_Allreduce, MPI_IN_PLACE, size bytes of MPI_DOUBLE, MPI_SUM
 *   allreduce_persistent   the same through MPI_Allreduce_init once, then Start + Wait
 *   allgather              MPI_Allgather of MPI_DOUBLE: size is the per-rank block, each
 *                          rank contributes size bytes and receives nranks * size
 *   alltoall               MPI_Alltoall of MPI_DOUBLE: size is the per-rank block, each
 *                          rank sends size bytes to every rank (nranks * size in total)
 * The persistent rows are "missing" (the value column says so, never a number) when the
 * library has no persistent collectives: see BENCH_PCOLL below.
 *
 * What is timed: each rank times a loop of `iters` back-to-back calls and divides by
 * iters; a repetition's figure is the slowest rank's; the table shows the median over
 * --reps repetitions; iters is calibrated to about 0.1 s per repetition (0.04 s with
 * --quick), identical on every rank. Results are checked once per operation and size
 * before timing (reduce at the root; allgather and alltoall every element of every
 * block; the persistent requests twice, to check a restart too).
 *
 * --mode=pairs: blocking against persistent, alternating in one process: bcast,
 * bcast_persistent, allreduce and allreduce_persistent at 8 B (and 8 KiB, 1 MiB up to
 * --max), both persistent requests made once; every repetition times the four in turn
 * (the persistent one of a pair first in odd repetitions), so each pair sees the same
 * machine state. Rows: the medians as above, plus "<op>_ratio" rows with the median over
 * repetitions of persistent / blocking (a dimensionless number in the value column,
 * metric "ratio"). --mode=opairs: the same on a duplicate of MPI_COMM_WORLD made with the
 * info assertion mpi_assert_strict_persistent_collective_ordering = true (MPI-4.1: the
 * program starts persistent collectives in the same order on every rank; FMPL then runs
 * the persistent calls that get no lane as queued mailbox runs). --mode=nb: the same for blocking
 * against nonblocking (MPI_I* + MPI_Wait per call): barrier / ibarrier, bcast / ibcast, allreduce /
 * iallreduce (MPI_IN_PLACE), ratio rows ibarrier_ratio, ibcast_ratio, iallreduce_ratio. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* sched_getaffinity */
#endif
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_util.h"

#include "bench_pcoll.h"

enum {
    OP_BARRIER,
    OP_BCAST,
    OP_BCAST_P,
    OP_REDUCE,
    OP_ALLREDUCE,
    OP_ALLREDUCE_P,
    OP_ALLGATHER,
    OP_ALLTOALL,
    OP_COUNT, /* the operations of the default run; the modes' own ones follow */
    OP_IBARRIER = OP_COUNT,
    OP_IBCAST,
    OP_IALLREDUCE,
    OP_ALL
};
/* The bench column of the CSV rows (compare.sh keys on these). */
static const char *op_name[OP_ALL] = {
    "barrier",   "bcast",    "bcast_persistent", "reduce", "allreduce", "allreduce_persistent",
    "allgather", "alltoall", "ibarrier",         "ibcast", "iallreduce"};
static int rank, nranks;
static MPI_Comm comm = MPI_COMM_WORLD; /* --mode=dup: a duplicate */
/* sbuf: reduce's, allgather's and alltoall's send side; rbuf: their receive side, and
 * bcast's and allreduce's (in place) only buffer. nranks * 1 MiB each. */
static double *sbuf, *rbuf;
/* The persistent request of the current OP_*_P operation and size. */
static MPI_Request preq = MPI_REQUEST_NULL;

static int is_persistent(int op)
{
    return op == OP_BCAST_P || op == OP_ALLREDUCE_P;
}

/* iters calls of op with n bytes (per block for allgather and alltoall). */
static void run(int op, size_t n, int iters)
{
    int cnt = (int)(n / sizeof(double));
    MPI_Request nreq;
    for (int i = 0; i < iters; i++) {
        switch (op) {
        case OP_BARRIER: MPI_Barrier(comm); break;
        case OP_BCAST: MPI_Bcast(rbuf, (int)n, MPI_BYTE, 0, comm); break;
        case OP_REDUCE: MPI_Reduce(sbuf, rbuf, cnt, MPI_DOUBLE, MPI_SUM, 0, comm); break;
        case OP_ALLREDUCE: MPI_Allreduce(MPI_IN_PLACE, rbuf, cnt, MPI_DOUBLE, MPI_SUM, comm); break;
        case OP_ALLGATHER: MPI_Allgather(sbuf, cnt, MPI_DOUBLE, rbuf, cnt, MPI_DOUBLE, comm); break;
        case OP_ALLTOALL: MPI_Alltoall(sbuf, cnt, MPI_DOUBLE, rbuf, cnt, MPI_DOUBLE, comm); break;
        case OP_IBARRIER:
            MPI_Ibarrier(comm, &nreq);
            MPI_Wait(&nreq, MPI_STATUS_IGNORE);
            break;
        case OP_IBCAST:
            MPI_Ibcast(rbuf, (int)n, MPI_BYTE, 0, comm, &nreq);
            MPI_Wait(&nreq, MPI_STATUS_IGNORE);
            break;
        case OP_IALLREDUCE:
            MPI_Iallreduce(MPI_IN_PLACE, rbuf, cnt, MPI_DOUBLE, MPI_SUM, comm, &nreq);
            MPI_Wait(&nreq, MPI_STATUS_IGNORE);
            break;
        default: /* OP_BCAST_P, OP_ALLREDUCE_P */
            MPI_Start(&preq);
            MPI_Wait(&preq, MPI_STATUS_IGNORE);
        }
    }
}

/* Slowest rank's time per call, seconds (the same on every rank). */
static double timed(int op, size_t n, int iters)
{
    MPI_Barrier(comm);
    double t0 = MPI_Wtime();
    run(op, n, iters);
    double t = (MPI_Wtime() - t0) / iters;
    MPI_Allreduce(MPI_IN_PLACE, &t, 1, MPI_DOUBLE, MPI_MAX, comm);
    return t;
}

/* Calls per timed loop so one lasts about target seconds, the same on every rank: loops of
 * doubling length until one lasts target / 8, then scaled. (A fixed 3-call estimate is too
 * short for calls whose cost only shows once queues fill, such as eager bcasts on
 * oversubscribed cores: it asked for loops of seconds.) */
static int calibrate(int op, size_t n, double target)
{
    int iters = 1;
    double t = timed(op, n, iters);
    while (t * iters < target / 8 && iters < 100000) {
        iters *= 2;
        t = timed(op, n, iters);
    }
    double it = t > 0 ? target / t : 100000;
    return it < 3 ? 3 : it > 100000 ? 100000 : (int)it;
}

/* The persistent request of op at n bytes, into preq; collective. Returns 0 when every
 * rank has one, -1 when the library has no persistent collectives or one rank's call
 * failed (then no rank keeps a request). */
static int pcoll_init(int op, size_t n)
{
#if BENCH_PCOLL
    int cnt = (int)(n / sizeof(double));
    /* A library that declares the call but refuses it must not end the run. */
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    int rc = op == OP_BCAST_P
                 ? bench_bcast_init(rbuf, (int)n, MPI_BYTE, 0, comm, MPI_INFO_NULL, &preq)
                 : bench_allreduce_init(MPI_IN_PLACE, rbuf, cnt, MPI_DOUBLE, MPI_SUM, comm,
                                        MPI_INFO_NULL, &preq);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_ARE_FATAL);
    int ok = rc == MPI_SUCCESS, all_ok = 0;
    MPI_Allreduce(&ok, &all_ok, 1, MPI_INT, MPI_MIN, comm);
    if (all_ok)
        return 0;
    if (ok)
        MPI_Request_free(&preq);
    preq = MPI_REQUEST_NULL;
    return -1;
#else
    (void)op;
    (void)n;
    return -1;
#endif
}

/* Element i of the block that rank src sends to rank dst (allgather: dst 0), distinct
 * over the whole exchange and exact in a double; seed tells two checks apart. */
static double block_val(int src, int dst, size_t cnt, size_t i, int seed)
{
    return (double)(((size_t)seed * (size_t)nranks + (size_t)src) * (size_t)nranks + (size_t)dst) *
               (double)cnt +
           (double)i;
}

static void fail(int op, size_t n, size_t i, double got, double want)
{
    fprintf(stderr, "mpi_coll: rank %d: %s of %zu bytes: element %zu is %g, not %g\n", rank,
            op_name[op], n, i, got, want);
    MPI_Abort(MPI_COMM_WORLD, 1);
}

/* One call of op at n bytes on known contents, the result compared with what it must be
 * (the receive side is spoiled first, so stale data does not pass). */
static void check(int op, size_t n, int seed)
{
    size_t cnt = n / sizeof(double), all = cnt * (size_t)nranks;
    if (op == OP_BARRIER || op == OP_IBARRIER)
        return;
    for (size_t i = 0; i < all; i++)
        rbuf[i] = -1.0;
    for (size_t i = 0; i < cnt; i++) {
        switch (op) {
        case OP_BCAST:
        case OP_IBCAST:
        case OP_BCAST_P: rbuf[i] = rank == 0 ? (double)i + seed : -1.0; break;
        case OP_REDUCE: sbuf[i] = (double)(rank + 1 + seed) * (double)(i % 5 + 1); break;
        case OP_ALLREDUCE:
        case OP_IALLREDUCE:
        case OP_ALLREDUCE_P: rbuf[i] = (double)(rank + 1 + seed) * (double)(i % 5 + 1); break;
        case OP_ALLGATHER: sbuf[i] = block_val(rank, 0, cnt, i, seed); break;
        default: /* OP_ALLTOALL */
            for (int d = 0; d < nranks; d++)
                sbuf[(size_t)d * cnt + i] = block_val(rank, d, cnt, i, seed);
        }
    }
    run(op, n, 1);
    /* sum over ranks r of (r + 1 + seed) = nranks * (nranks + 1) / 2 + nranks * seed */
    double sum = (double)nranks * (nranks + 1) / 2 + (double)nranks * seed;
    switch (op) {
    case OP_BCAST:
    case OP_IBCAST:
    case OP_BCAST_P:
        for (size_t i = 0; i < cnt; i++)
            if (rbuf[i] != (double)i + seed)
                fail(op, n, i, rbuf[i], (double)i + seed);
        break;
    case OP_REDUCE:
    case OP_ALLREDUCE:
    case OP_IALLREDUCE:
    case OP_ALLREDUCE_P:
        if (op == OP_REDUCE && rank != 0)
            break; /* only the root has the result */
        for (size_t i = 0; i < cnt; i++)
            if (rbuf[i] != sum * (double)(i % 5 + 1))
                fail(op, n, i, rbuf[i], sum * (double)(i % 5 + 1));
        break;
    default: /* OP_ALLGATHER, OP_ALLTOALL: block s comes from rank s */
        for (int s = 0; s < nranks; s++)
            for (size_t i = 0; i < cnt; i++) {
                double want = block_val(s, op == OP_ALLGATHER ? 0 : rank, cnt, i, seed);
                if (rbuf[(size_t)s * cnt + i] != want)
                    fail(op, n, (size_t)s * cnt + i, rbuf[(size_t)s * cnt + i], want);
            }
    }
    /* Zeros for the timed loops: repeated in-place sums stay finite. */
    memset(sbuf, 0, all * sizeof(double));
    memset(rbuf, 0, all * sizeof(double));
}

/* One output line: the time in microseconds, or "missing" when t < 0. */
static void report(const bench_opts_t *o, const char *impl, int op, size_t n, double t)
{
    size_t sz = op == OP_BARRIER || op == OP_IBARRIER ? 0 : n;
    if (o->csv) {
        if (t < 0)
            printf("%s,%s,malloc,%d,%zu,time_us,missing\n", impl, op_name[op], nranks, sz);
        else
            printf("%s,%s,malloc,%d,%zu,time_us,%.4f\n", impl, op_name[op], nranks, sz, t);
    } else {
        char s[32];
        const char *size =
            op == OP_BARRIER || op == OP_IBARRIER ? "-" : bench_size_str(n, s, sizeof s);
        if (t < 0)
            printf("%20s %10s %14s\n", op_name[op], size, "missing");
        else
            printf("%20s %10s %14.3f\n", op_name[op], size, t);
    }
    fflush(stdout);
}

/* --mode=pairs and --mode=nb (see the top): np pairs of operations (ops[2j] the blocking
 * one, ops[2j+1] the other), each pair timed in turn in every repetition; the rows, then
 * one "<other>_ratio" row per pair (median over repetitions of other / blocking). The
 * barriers are timed once (size 0). */
static void run_pairs(const bench_opts_t *o, const char *impl, const size_t *sizes, int nsizes,
                      double target, const int *ops, int np)
{
    enum { MAXOPS = 6 };
    int nops = 2 * np;
    for (int si = 0; si < nsizes; si++) {
        size_t n = sizes[si];
        if (n > o->max)
            continue;
        MPI_Request req[MAXOPS];
        int iters[MAXOPS], use[MAXOPS];
        double *t[MAXOPS];
        for (int k = 0; k < nops; k++) {
            req[k] = MPI_REQUEST_NULL;
            /* a barrier (size 0) only with the first size */
            use[k] = !(ops[k & ~1] == OP_BARRIER && si > 0);
            t[k] = calloc((size_t)o->reps, sizeof *t[k]);
            if (!t[k])
                MPI_Abort(MPI_COMM_WORLD, 1);
            if (!use[k])
                continue;
            if (is_persistent(ops[k])) {
                if (pcoll_init(ops[k], n) != 0) {
                    if (rank == 0)
                        fprintf(stderr, "mpi_coll: no persistent collectives (%s)\n", impl);
                    MPI_Abort(MPI_COMM_WORLD, 2);
                }
                req[k] = preq;
                check(ops[k], n, 0);
                check(ops[k], n, 1);
            } else {
                check(ops[k], n, 0);
            }
            iters[k] = calibrate(ops[k], n, target);
        }
        for (int r = 0; r < o->reps; r++)
            for (int j = 0; j < nops; j++) {
                int k = r % 2 ? j ^ 1 : j; /* odd rounds: the other one of a pair first */
                if (!use[k])
                    continue;
                preq = req[k];
                t[k][r] = timed(ops[k], n, iters[k]);
            }
        int nr = o->reps;
        double *ratio = calloc((size_t)nr * (size_t)np, sizeof(double));
        if (!ratio)
            MPI_Abort(MPI_COMM_WORLD, 1);
        for (int j = 0; j < np; j++)
            for (int r = 0; r < nr; r++)
                ratio[j * nr + r] = t[2 * j + 1][r] / t[2 * j][r];
        for (int k = 0; k < nops; k++) {
            if (rank == 0 && use[k])
                report(o, impl, ops[k], n, bench_median(t[k], o->reps) * 1e6);
            if (req[k] != MPI_REQUEST_NULL)
                MPI_Request_free(&req[k]);
            free(t[k]);
        }
        preq = MPI_REQUEST_NULL;
        for (int j = 0; j < np && rank == 0; j++) {
            if (!use[2 * j])
                continue;
            char name[64];
            snprintf(name, sizeof name, "%s_ratio", op_name[ops[2 * j + 1]]);
            size_t sz = ops[2 * j] == OP_BARRIER ? 0 : n;
            double m = bench_median(ratio + j * nr, nr);
            if (o->csv)
                printf("%s,%s,malloc,%d,%zu,ratio,%.4f\n", impl, name, nranks, sz, m);
            else
                printf("%20s %10zu %14.3f  (/ %s, median of %d rounds)\n", name, sz, m,
                       op_name[ops[2 * j]], nr);
        }
        free(ratio);
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    bench_opts_t o = {.max = 1u << 20};
    if (bench_parse(argc, argv, &o,
                    "[--csv] [--quick] [--impl=NAME] [--reps=N] [--max=B] "
                    "[--mode=world|dup|idup|pairs|opairs|nb]"))
        MPI_Abort(MPI_COMM_WORLD, 2);
    int opairs = o.mode && !strcmp(o.mode, "opairs");
    int pairs = opairs || (o.mode && !strcmp(o.mode, "pairs"));
    int nb = o.mode && !strcmp(o.mode, "nb"), dup = o.mode && !strcmp(o.mode, "dup");
    int idup = o.mode && !strcmp(o.mode, "idup");
    if (o.mode && !pairs && !nb && !dup && !idup && strcmp(o.mode, "world")) {
        fprintf(stderr, "mpi_coll: --mode must be world, dup, idup, pairs, opairs or nb\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (dup)
        MPI_Comm_dup(MPI_COMM_WORLD, &comm);
    if (idup) {
        MPI_Request r;
        MPI_Comm_idup(MPI_COMM_WORLD, &comm, &r);
        MPI_Wait(&r, MPI_STATUS_IGNORE);
    }
    if (opairs) { /* the MPI-4.1 assertion; libraries that do not know it ignore it, and
                   * those whose MPI_MAX_INFO_KEY is shorter (Open MPI 4: 36) do not get
                   * it: a plain duplicate */
        static const char key[] = "mpi_assert_strict_persistent_collective_ordering";
        MPI_Info info;
        MPI_Info_create(&info);
        if (sizeof key - 1 <= MPI_MAX_INFO_KEY)
            MPI_Info_set(info, key, "true");
        MPI_Comm_dup_with_info(MPI_COMM_WORLD, info, &comm);
        MPI_Info_free(&info);
    }
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &nranks);
    static const size_t sizes[] = {8, 8192, 1u << 20};
    size_t bytes = (size_t)nranks << 20;
    sbuf = malloc(bytes);
    rbuf = malloc(bytes);
    double *reps = calloc((size_t)o.reps, sizeof *reps);
    if (!sbuf || !rbuf || !reps)
        MPI_Abort(MPI_COMM_WORLD, 1);
    memset(sbuf, 0, bytes);
    memset(rbuf, 0, bytes);
    const char *impl = o.impl ? o.impl : "mpi";
    double target = o.quick ? 0.04 : 0.1;
    if (rank == 0) {
        if (o.csv) {
            printf("impl,bench,mem,np,size,metric,value\n");
        } else {
            printf("# %s: MPI collectives, %d ranks; time per call = slowest rank's mean over a "
                   "loop, median of %d repetitions; allgather and alltoall: size per block\n",
                   impl, nranks, o.reps);
            if (!BENCH_PCOLL)
                printf("# no persistent collectives (MPI_Bcast_init, MPI_Allreduce_init) in "
                       "this build: those rows are missing\n");
            bench_oversubscribed_note(nranks, o.csv);
            printf("%20s %10s %14s\n", "operation", "size", "time [us]");
        }
        fflush(stdout);
    }
    static const int pcoll_pairs[] = {OP_BCAST, OP_BCAST_P, OP_ALLREDUCE, OP_ALLREDUCE_P};
    static const int nb_pairs[] = {OP_BARRIER, OP_IBARRIER,  OP_BCAST,
                                   OP_IBCAST,  OP_ALLREDUCE, OP_IALLREDUCE};
    if (pairs && !BENCH_PCOLL) {
        if (rank == 0)
            fprintf(stderr, "mpi_coll: --mode=pairs needs persistent collectives (%s)\n", impl);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    if (pairs)
        run_pairs(&o, impl, sizes, (int)(sizeof sizes / sizeof sizes[0]), target, pcoll_pairs, 2);
    if (nb)
        run_pairs(&o, impl, sizes, (int)(sizeof sizes / sizeof sizes[0]), target, nb_pairs, 3);
    for (int op = 0; op < (pairs || nb ? 0 : OP_COUNT); op++) {
        for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
            size_t n = sizes[si];
            if (n > o.max)
                continue;
            if (op == OP_BARRIER && si > 0)
                break;
            if (is_persistent(op) && pcoll_init(op, n) != 0) {
                if (rank == 0)
                    report(&o, impl, op, n, -1.0);
                continue;
            }
            check(op, n, 0);
            if (is_persistent(op))
                check(op, n, 1); /* the same request again: a restart gives fresh results */
            int iters = calibrate(op, n, target);
            for (int r = 0; r < o.reps; r++)
                reps[r] = timed(op, n, iters);
            if (is_persistent(op))
                MPI_Request_free(&preq);
            if (rank == 0)
                report(&o, impl, op, n, bench_median(reps, o.reps) * 1e6);
        }
    }
    free(reps);
    free(rbuf);
    free(sbuf);
    if (comm != MPI_COMM_WORLD)
        MPI_Comm_free(&comm);
    MPI_Finalize();
    return 0;
}
