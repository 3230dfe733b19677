/* mpi_io_async.c — MPI-IO's nonblocking calls and split collectives are asynchronous
 * (src/mpi/file_async.c), proved by ordering, not by time: a helper process (forked by
 * rank 0 before MPI_Init) holds an fcntl write lock over the whole file while the ranks,
 * in atomic mode, start their transfers. A transfer done inside the call would wait for
 * the lock forever (the test would time out); so the call returning, and MPI_Test and
 * MPI_Request_get_status answering "not done" while the lock is held, show the transfer
 * runs after the call. Then the lock goes and the requests complete, with contents
 * checked:
 *   - iwrite_at (independent), iwrite_at_all (collective: after its completion every
 *     rank's part is visible to a read by another rank), a blocking read_at_all while an
 *     iwrite_at_all is pending, iread_at, write_all_begin/end;
 *   - MPI_Cancel of a queued transfer (cancelled, nothing written) and of a running one
 *     (completes normally);
 *   - iwrite_shared / iread_shared, a derived datatype freed before completion,
 *     MPI_Request_free of a pending write (MPI_File_close waits for it);
 * Errors, through the file's error handler (a counting handler checks the file handle):
 *   - at the call: a negative offset (MPI_ERR_ARG), a write to a read-only file
 *     (MPI_ERR_READ_ONLY);
 *   - at completion, on every rank: iwrite_at_all on a read-only file, iread_at_all
 *     with a bad offset on rank 0 only (MPI_ERR_ARG everywhere);
 *   - at completion, from the transfer: a write past RLIMIT_FSIZE (EFBIG ->
 *     MPI_ERR_NO_SPACE), the status counting 0 bytes. */
#include <fcntl.h>
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_util.h"

enum { N = 4096 }; /* ints per rank's block */

/* ---- the lock holder (rank 0's child) */
static int to_child = -1, from_child = -1;
static pid_t child;

static void holder(int in, int out)
{
    char cmd[600];
    int fd = -1;
    for (;;) {
        if (read(in, cmd, sizeof cmd) != (ssize_t)sizeof cmd)
            _exit(0);
        if (cmd[0] == 'L') {
            fd = open(cmd + 1, O_RDWR);
            struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET, .l_start = 0, .l_len = 0};
            if (fd < 0 || fcntl(fd, F_SETLKW, &fl) != 0)
                _exit(2);
        } else if (cmd[0] == 'U') {
            close(fd); /* drops the lock */
            fd = -1;
        } else {
            _exit(0);
        }
        if (write(out, "k", 1) != 1)
            _exit(3);
    }
}

static void child_cmd(char c, const char *path)
{
    char cmd[600];
    memset(cmd, 0, sizeof cmd);
    cmd[0] = c;
    if (path)
        snprintf(cmd + 1, sizeof cmd - 1, "%s", path);
    CHECK(write(to_child, cmd, sizeof cmd) == (ssize_t)sizeof cmd);
    if (c != 'Q') {
        char k;
        CHECK(read(from_child, &k, 1) == 1 && k == 'k');
    }
}

/* Rank 0's child locks (or unlocks) the whole file once every rank called this (so
 * every earlier transfer is over); every rank returns after it did. */
static void lock_file(int rank, const char *path, int on)
{
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        child_cmd(on ? 'L' : 'U', path);
    MPI_Barrier(MPI_COMM_WORLD);
}

/* ---- the counting error handler */
static int handler_calls, handler_class;
static MPI_File handler_file;

static void count_errors(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_file = *fh;
    MPI_Error_class(*code, &handler_class);
}

static int cls(int rc)
{
    int c = MPI_SUCCESS;
    if (rc != MPI_SUCCESS)
        MPI_Error_class(rc, &c);
    return c;
}

static void pending(MPI_Request *rq)
{
    int flag = -1;
    CHECK_RC(MPI_Test(rq, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(flag == 0 && *rq != MPI_REQUEST_NULL);
    flag = -1;
    CHECK_RC(MPI_Request_get_status(*rq, &flag, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(flag == 0);
}

static void fill(int *b, int n, int tag)
{
    for (int i = 0; i < n; i++)
        b[i] = tag * 1000003 + i;
}

static int check_fill(const int *b, int n, int tag)
{
    for (int i = 0; i < n; i++)
        if (b[i] != tag * 1000003 + i)
            return 0;
    return 1;
}

/* The ints at [off, off + n) of the file, read with POSIX calls. */
static void raw_read(const char *path, int64_t off, int *b, int n)
{
    int fd = open(path, O_RDONLY);
    CHECK(fd >= 0);
    memset(b, 0, (size_t)n * sizeof *b);
    CHECK(pread(fd, b, (size_t)n * sizeof *b, off * (int64_t)sizeof *b) >= 0);
    close(fd);
}

/* A block past everything the test writes before step 4 (zeros) and never written by
 * the blocking collective of step 2b. */
static int64_t far_block(int size, int rank)
{
    return (int64_t)(3 * size + rank) * N;
}

static int all_zero(const int *b, int n)
{
    for (int i = 0; i < n; i++)
        if (b[i])
            return 0;
    return 1;
}

int main(int argc, char **argv)
{
    /* the lock holder: forked before MPI_Init, so it shares nothing with the library */
    int p1[2], p2[2];
    CHECK(pipe(p1) == 0 && pipe(p2) == 0);
    const char *rank_env = getenv("PMI_RANK");
    int want_child = !rank_env || atoi(rank_env) == 0;
    if (want_child) {
        child = fork();
        CHECK(child >= 0);
        if (child == 0) {
            if (getenv("PMI_FD")) /* the launcher's connection is the rank's, not ours */
                close(atoi(getenv("PMI_FD")));
            close(p1[1]);
            close(p2[0]);
            holder(p1[0], p2[1]);
        }
    }
    close(p1[0]);
    close(p2[1]);
    to_child = p1[1];
    from_child = p2[0];

    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int have_child = want_child;
    MPI_Bcast(&have_child, 1, MPI_INT, 0, MPI_COMM_WORLD);
    CHECK(have_child == 1); /* rank 0 found itself rank 0 before MPI_Init */
    const char *dir = getenv("TMPDIR");
    if (!dir)
        dir = "/tmp";
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char path[512];
    snprintf(path, sizeof path, "%s/fmpl-io-async-%d", dir, id);

    MPI_Errhandler eh;
    CHECK_RC(MPI_File_create_errhandler(count_errors, &eh), MPI_SUCCESS);
    MPI_File fh;
    CHECK_RC(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    CHECK_RC(MPI_File_set_errhandler(fh, eh), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
    int *buf = malloc(N * sizeof *buf), *back = malloc(N * sizeof *back);
    CHECK(buf && back);
    MPI_Status st;
    int count, flag;
    const int64_t me = (int64_t)rank * N, next = (int64_t)((rank + 1) % size) * N;

    /* 1. independent iwrite_at: pending while locked, then complete with its data */
    MPI_Request rq;
    fill(buf, N, 1 + rank);
    lock_file(rank, path, 1);
    CHECK_RC(MPI_File_iwrite_at(fh, me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    pending(&rq);
    raw_read(path, me, back, N);
    CHECK(all_zero(back, N)); /* nothing reached the file yet */
    MPI_Barrier(MPI_COMM_WORLD);
    lock_file(rank, path, 0);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    CHECK(rq == MPI_REQUEST_NULL);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N);
    raw_read(path, me, back, N);
    CHECK(check_fill(back, N, 1 + rank));

    /* 2. collective iwrite_at_all: pending everywhere while locked; once it completes,
     * every rank's part is in the file (read by the next rank) */
    fill(buf, N, 100 + rank);
    lock_file(rank, path, 1);
    CHECK_RC(MPI_File_iwrite_at_all(fh, me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    pending(&rq);
    MPI_Barrier(MPI_COMM_WORLD);
    lock_file(rank, path, 0);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N);
    raw_read(path, next, back, N);
    CHECK(check_fill(back, N, 100 + (rank + 1) % size));

    /* 2b. a blocking collective on the file while a nonblocking one is pending: each
     * completes with its own data (after every rank checked step 2's) */
    MPI_Barrier(MPI_COMM_WORLD);
    fill(buf, N, 150 + rank);
    CHECK_RC(MPI_File_iwrite_at_all(fh, me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    memset(back, 0, N * sizeof *back);
    CHECK_RC(MPI_File_read_at_all(fh, far_block(size, rank), back, N, MPI_INT, &st), MPI_SUCCESS);
    CHECK(all_zero(back, N));
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    raw_read(path, next, back, N);
    CHECK(check_fill(back, N, 150 + (rank + 1) % size));
    MPI_Barrier(MPI_COMM_WORLD);
    fill(buf, N, 100 + rank); /* step 3 reads step 2's contents back */
    CHECK_RC(MPI_File_write_at_all(fh, me, buf, N, MPI_INT, &st), MPI_SUCCESS);

    /* 3. iread_at waits for the lock too, then reads what the holder's owner wrote */
    lock_file(rank, path, 1);
    memset(back, 0, N * sizeof *back);
    CHECK_RC(MPI_File_iread_at(fh, next, back, N, MPI_INT, &rq), MPI_SUCCESS);
    pending(&rq);
    CHECK(all_zero(back, N));
    MPI_Barrier(MPI_COMM_WORLD);
    lock_file(rank, path, 0);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N && check_fill(back, N, 100 + (rank + 1) % size));

    /* 4. cancel: B queued behind A (A waits for the lock) is cancelled and writes
     * nothing; cancelling A, already running, does not stop it */
    int *bufb = malloc(N * sizeof *bufb);
    CHECK(bufb);
    fill(buf, N, 200 + rank);
    fill(bufb, N, 300 + rank);
    const int64_t far = (int64_t)(size + rank) * N; /* B's block, never written before */
    lock_file(rank, path, 1);
    MPI_Request ra, rb;
    CHECK_RC(MPI_File_iwrite_at(fh, me, buf, N, MPI_INT, &ra), MPI_SUCCESS);
    CHECK_RC(MPI_File_iwrite_at(fh, far, bufb, N, MPI_INT, &rb), MPI_SUCCESS);
    CHECK_RC(MPI_Cancel(&rb), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rb, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Test_cancelled(&st, &flag), MPI_SUCCESS);
    CHECK(flag == 1);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0);
    pending(&ra);
    MPI_Barrier(MPI_COMM_WORLD); /* every worker holds or waits for A's lock */
    CHECK_RC(MPI_Cancel(&ra), MPI_SUCCESS);
    lock_file(rank, path, 0);
    CHECK_RC(MPI_Wait(&ra, &st), MPI_SUCCESS);
    CHECK_RC(MPI_Test_cancelled(&st, &flag), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    /* A may have been queued still (then cancelled) or running (then complete) */
    raw_read(path, me, back, N);
    CHECK((flag == 0 && count == N && check_fill(back, N, 200 + rank)) ||
          (flag == 1 && count == 0 && check_fill(back, N, 100 + rank)));
    raw_read(path, far, back, N);
    CHECK(all_zero(back, N));

    /* 5. split collective: begin returns while locked; end completes it */
    fill(buf, N, 400 + rank);
    CHECK_RC(MPI_File_seek(fh, me, MPI_SEEK_SET), MPI_SUCCESS);
    lock_file(rank, path, 1);
    CHECK_RC(MPI_File_write_all_begin(fh, buf, N, MPI_INT), MPI_SUCCESS);
    raw_read(path, me, back, N);
    CHECK(!check_fill(back, N, 400 + rank));
    MPI_Barrier(MPI_COMM_WORLD);
    lock_file(rank, path, 0);
    CHECK_RC(MPI_File_write_all_end(fh, buf, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == N);
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == me + N);
    CHECK_RC(MPI_File_seek(fh, next, MPI_SEEK_SET), MPI_SUCCESS);
    memset(back, 0, N * sizeof *back);
    CHECK_RC(MPI_File_read_all_begin(fh, back, N, MPI_INT), MPI_SUCCESS);
    CHECK_RC(MPI_File_read_all_end(fh, back, &st), MPI_SUCCESS);
    CHECK(check_fill(back, N, 400 + (rank + 1) % size));
    CHECK_RC(MPI_File_set_atomicity(fh, 0), MPI_SUCCESS);

    /* 6. shared pointer: each rank's block exactly once */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    fill(buf, 64, 500 + rank);
    CHECK_RC(MPI_File_iwrite_shared(fh, buf, 64, MPI_INT, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 64);
    MPI_Barrier(MPI_COMM_WORLD);
    int *whole = malloc((size_t)size * 64 * sizeof *whole);
    CHECK(whole);
    CHECK_RC(MPI_File_read_at(fh, 0, whole, size * 64, MPI_INT, &st), MPI_SUCCESS);
    int seen = 0;
    for (int b = 0; b < size; b++) {
        int r = whole[b * 64] / 1000003 - 500;
        CHECK(r >= 0 && r < size && !(seen & (1 << r)) && check_fill(whole + b * 64, 64, 500 + r));
        seen |= 1 << r;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    memset(back, 0, 64 * sizeof *back);
    CHECK_RC(MPI_File_iread_shared(fh, back, 64, MPI_INT, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    CHECK(back[0] / 1000003 >= 500 && check_fill(back, 64, back[0] / 1000003));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 7. a derived type freed before completion: every other int of 2 * 64 (past the
     * blocks of step 6) */
    MPI_Datatype vec;
    MPI_Type_vector(64, 1, 2, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int strided[128];
    for (int i = 0; i < 128; i++)
        strided[i] = -1;
    CHECK_RC(MPI_File_iread_at(fh, next + 1024, strided, 1, vec, &rq), MPI_SUCCESS);
    MPI_Type_free(&vec);
    CHECK_RC(MPI_Wait(&rq, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 64);
    for (int i = 0; i < 64; i++)
        CHECK(strided[2 * i] == (400 + (rank + 1) % size) * 1000003 + 1024 + i &&
              strided[2 * i + 1] == -1);

    /* 8. errors at the call, through the file's handler */
    handler_calls = 0;
    CHECK(cls(MPI_File_iwrite_at(fh, -1, buf, 1, MPI_INT, &rq)) == MPI_ERR_ARG);
    CHECK(handler_calls == 1 && handler_file == fh && handler_class == MPI_ERR_ARG);
    CHECK(cls(MPI_File_iread_at(fh, 0, buf, 1, MPI_INT, NULL)) == MPI_ERR_ARG);
    CHECK(handler_calls == 2);

    /* 9. an error of the transfer at completion: past RLIMIT_FSIZE */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    lim = old;
    lim.rlim_cur = 1 << 20;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    handler_calls = 0;
    CHECK_RC(MPI_File_iwrite_at(fh, (2 << 20) / 4 + me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    int wrc = MPI_Wait(&rq, &st);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    CHECK(cls(wrc) == MPI_ERR_NO_SPACE);
    CHECK(handler_calls == 1 && handler_file == fh && handler_class == MPI_ERR_NO_SPACE);
    MPI_Get_count(&st, MPI_INT, &count);
    CHECK(count == 0);

    /* 10. a collective call whose arguments fail on rank 0 only fails everywhere, at
     * completion */
    handler_calls = 0;
    CHECK_RC(MPI_File_iread_at_all(fh, rank == 0 ? -1 : me, back, N, MPI_INT, &rq), MPI_SUCCESS);
    CHECK(cls(MPI_Wait(&rq, &st)) == MPI_ERR_ARG);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_ARG);

    /* 11. MPI_Request_free of a pending write: close waits for it */
    fill(buf, N, 600 + rank);
    CHECK_RC(MPI_File_iwrite_at(fh, me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Request_free(&rq), MPI_SUCCESS);
    CHECK(rq == MPI_REQUEST_NULL);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    raw_read(path, me, back, N);
    CHECK(check_fill(back, N, 600 + rank));
    MPI_Barrier(MPI_COMM_WORLD);

    /* 12. read-only file: iwrite_at fails at the call, iwrite_at_all at completion on
     * every rank */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_errhandler(fh, eh), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    handler_calls = 0;
    CHECK(cls(MPI_File_iwrite_at(fh, me, buf, N, MPI_INT, &rq)) == MPI_ERR_READ_ONLY);
    CHECK(handler_calls == 1 && handler_class == MPI_ERR_READ_ONLY);
    CHECK_RC(MPI_File_iwrite_at_all(fh, me, buf, N, MPI_INT, &rq), MPI_SUCCESS);
    CHECK(cls(MPI_Wait(&rq, &st)) == MPI_ERR_READ_ONLY);
    CHECK(handler_calls == 2 && handler_file == fh && handler_class == MPI_ERR_READ_ONLY);
    raw_read(path, me, back, N);
    CHECK(check_fill(back, N, 600 + rank));
    CHECK(cls(MPI_File_write_all_begin(fh, buf, N, MPI_INT)) == MPI_SUCCESS);
    CHECK(cls(MPI_File_write_all_end(fh, buf, &st)) == MPI_ERR_READ_ONLY);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);

    if (rank == 0) {
        child_cmd('Q', NULL);
        int ws;
        CHECK(waitpid(child, &ws, 0) == child && WIFEXITED(ws) && WEXITSTATUS(ws) == 0);
        unlink(path);
    }
    MPI_Errhandler_free(&eh);
    free(buf);
    free(bufb);
    free(back);
    free(whole);
    MPI_Finalize();
    return 0;
}
