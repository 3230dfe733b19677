/* mpi_io — MPI-IO bandwidth: collective write and read of a 2-D array through a subarray
 * view, and independent contiguous writes and reads. Builds against any MPI (ours,
 * MPICH and Open MPI, whose MPI-IO is ROMIO).
 *
 *   mpiexec -n N mpi_io [--csv] [--impl=NAME] [--dir=DIR] [--mib=64] [--reps=5]
 *
 * subarray: a global G x G array of doubles (G x G x 8 bytes ~ --mib MiB), block-
 *   distributed over an MPI_Dims_create(N, 2) grid; each rank's block is its
 *   MPI_Type_create_subarray filetype. coll_write_subarray times MPI_File_write_all of
 *   every rank's block, coll_read_subarray MPI_File_read_all of it back (verified after
 *   the timing).
 * contiguous: each rank writes (indep_write_contig) and reads (indep_read_contig) its own
 *   contiguous --mib/N MiB with one MPI_File_write_at / read_at.
 * Time of one operation: after a barrier, from the first rank's start to the last rank's
 * return (the ranks' clocks must agree: one host); the file is overwritten in place each
 * repetition (its pages exist after the first); bandwidth = bytes of all ranks / median
 * time. The file lives in --dir
 * (default /dev/shm when writable, else /tmp); the first output line names the file
 * system (statfs) — tmpfs measures the library's data path, not a disk.
 * CSV rows: impl,bench,mem(=file),np,size(=total bytes),metric(=bw_GBps),value. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/vfs.h>
#include <unistd.h>

static int rank, size;

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

static const char *fs_name(const char *dir)
{
    struct statfs s;
    if (statfs(dir, &s) != 0)
        return "unknown";
    switch ((unsigned long)s.f_type) {
    case 0x01021994UL: return "tmpfs";
    case 0xEF53UL: return "ext4";
    case 0x58465342UL: return "xfs";
    case 0x9123683EUL: return "btrfs";
    case 0x794c7630UL: return "overlayfs";
    case 0x6969UL: return "nfs";
    default: return "other";
    }
}

/* This rank's part of n over p parts: start and length. */
static void part(long n, int p, int i, long *start, long *len)
{
    long b = n / p, extra = n % p;
    *len = b + (i < extra);
    *start = i * b + (i < extra ? i : extra);
}

/* The operation's span: from the first rank's start t0 to the last rank's return. Ranks
 * that outnumber the CPUs leave the barrier at different times; the slowest rank's own
 * time would then miss the ranks that ran before or after it, and the bandwidth would
 * exceed what the CPUs can copy. The ranks of one host share MPI_Wtime's clock. */
static double timed_end(double t0)
{
    double t[2] = {-t0, MPI_Wtime()}, m[2];
    MPI_Allreduce(t, m, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    return m[1] + m[0];
}

static void report(int csv, const char *impl, const char *bench, long bytes, double secs,
                   const char *fs)
{
    if (rank != 0)
        return;
    double gbps = bytes / secs / 1e9;
    if (csv)
        printf("%s,%s,file,%d,%ld,bw_GBps,%.4f\n", impl, bench, size, bytes, gbps);
    else
        printf("%-22s %3d ranks %8.1f MiB on %-6s %8.3f GB/s\n", bench, size, bytes / 1048576.0, fs,
               gbps);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int csv = 0, reps = 5;
    long mib = 64;
    const char *impl = "mpi";
    const char *dir = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--csv"))
            csv = 1;
        else if (!strncmp(argv[i], "--impl=", 7))
            impl = argv[i] + 7;
        else if (!strncmp(argv[i], "--dir=", 6))
            dir = argv[i] + 6;
        else if (!strncmp(argv[i], "--mib=", 6))
            mib = atol(argv[i] + 6);
        else if (!strncmp(argv[i], "--reps=", 7))
            reps = atoi(argv[i] + 7);
    }
    if (reps < 1)
        reps = 1;
    const char *fs = fs_name(dir);
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char path[512];
    snprintf(path, sizeof path, "%s/mpi_io-%d", dir, id);
    if (rank == 0) {
        if (csv)
            printf("impl,bench,mem,np,size,metric,value\n");
        else
            printf("# mpi_io: %s, files in %s (%s)\n", impl, dir, fs);
    }

    /* the subarray case */
    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2];
    MPI_Dims_create(size, 2, dims);
    MPI_Comm cart;
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 0, &cart);
    MPI_Cart_coords(cart, rank, 2, coords);
    long g = 16;
    while ((g + 16) * (g + 16) * 8 <= mib * 1048576L)
        g += 16;
    long r0, nr, c0, nc;
    part(g, dims[0], coords[0], &r0, &nr);
    part(g, dims[1], coords[1], &c0, &nc);
    int gs[2] = {(int)g, (int)g}, ss[2] = {(int)nr, (int)nc}, st[2] = {(int)r0, (int)c0};
    MPI_Datatype view;
    MPI_Type_create_subarray(2, gs, ss, st, MPI_ORDER_C, MPI_DOUBLE, &view);
    MPI_Type_commit(&view);
    double *block = malloc(sizeof(double) * (size_t)(nr * nc + 1));
    for (long i = 0; i < nr; i++)
        for (long j = 0; j < nc; j++)
            block[i * nc + j] = (double)((r0 + i) * g + c0 + j);
    MPI_File fh;
    if (MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh) !=
        MPI_SUCCESS) {
        if (rank == 0)
            fprintf(stderr, "mpi_io: cannot open %s\n", path);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    MPI_File_set_view(fh, 0, MPI_DOUBLE, view, "native", MPI_INFO_NULL);
    double *tw = malloc(sizeof(double) * (size_t)(reps + 1));
    double *tr = malloc(sizeof(double) * (size_t)(reps + 1));
    for (int r = 0; r <= reps; r++) { /* round 0: warm-up (creates the file's pages) */
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_write_at_all(fh, 0, block, (int)(nr * nc), MPI_DOUBLE, MPI_STATUS_IGNORE);
        double t = timed_end(t0);
        if (r)
            tw[r - 1] = t;
    }
    memset(block, 0, sizeof(double) * (size_t)(nr * nc));
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_read_at_all(fh, 0, block, (int)(nr * nc), MPI_DOUBLE, MPI_STATUS_IGNORE);
        double t = timed_end(t0);
        if (r)
            tr[r - 1] = t;
    }
    long bad = 0;
    for (long i = 0; i < nr; i++)
        for (long j = 0; j < nc; j++)
            bad += block[i * nc + j] != (double)((r0 + i) * g + c0 + j);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "mpi_io: %ld wrong values read back through the subarray view\n", bad);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    report(csv, impl, "coll_write_subarray", g * g * 8, median(tw, reps), fs);
    report(csv, impl, "coll_read_subarray", g * g * 8, median(tr, reps), fs);
    free(block);
    MPI_Type_free(&view);
    MPI_Comm_free(&cart);

    /* the contiguous case */
    MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL);
    long total = mib * 1048576L, off, len;
    part(total, size, rank, &off, &len);
    char *buf = malloc((size_t)len + 1);
    for (long i = 0; i < len; i++)
        buf[i] = (char)(off + i);
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_write_at(fh, off, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
        double t = timed_end(t0);
        if (r)
            tw[r - 1] = t;
    }
    memset(buf, 0, (size_t)len);
    for (int r = 0; r <= reps; r++) {
        MPI_Barrier(MPI_COMM_WORLD);
        double t0 = MPI_Wtime();
        MPI_File_read_at(fh, off, buf, (int)len, MPI_BYTE, MPI_STATUS_IGNORE);
        double t = timed_end(t0);
        if (r)
            tr[r - 1] = t;
    }
    bad = 0;
    for (long i = 0; i < len; i++)
        bad += buf[i] != (char)(off + i);
    MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (bad) {
        if (rank == 0)
            fprintf(stderr, "mpi_io: %ld wrong bytes read back contiguously\n", bad);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    report(csv, impl, "indep_write_contig", total, median(tw, reps), fs);
    report(csv, impl, "indep_read_contig", total, median(tr, reps), fs);
    free(buf);
    free(tw);
    free(tr);
    MPI_File_close(&fh);
    if (rank == 0)
        MPI_File_delete(path, MPI_INFO_NULL);
    MPI_Finalize();
    return 0;
}
