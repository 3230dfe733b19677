/* mpi_io_errors.c — MPI-IO error classes and file error handlers:
 *   missing file -> MPI_ERR_NO_SUCH_FILE (open and delete); no permission ->
 *   MPI_ERR_ACCESS (a mode-000 file, or for root a sysfs file opened for writing); a write
 *   to a read-only file -> MPI_ERR_READ_ONLY; a read of a write-only one ->
 *   MPI_ERR_ACCESS; bad amode -> MPI_ERR_AMODE; existing file with MPI_MODE_EXCL ->
 *   MPI_ERR_FILE_EXISTS; bad views -> MPI_ERR_ARG / MPI_ERR_TYPE /
 *   MPI_ERR_UNSUPPORTED_DATAREP; full disk (/dev/full) -> MPI_ERR_NO_SPACE; the file-size
 *   limit (RLIMIT_FSIZE, SIGXFSZ ignored) -> MPI_ERR_NO_SPACE with the status counting
 *   exactly the bytes that reached the file; seeking a sequential file ->
 *   MPI_ERR_UNSUPPORTED_OPERATION; an invalid handle -> MPI_ERR_FILE.
 * Handlers: files default to MPI_ERRORS_RETURN; a user handler set on a file is called
 * with the file and the code; one set on MPI_FILE_NULL serves MPI_File_open errors;
 * MPI_File_call_errhandler runs it. */
#include <mpi.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "test_util.h"

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static int handler_calls, handler_code;
static MPI_File handler_file;

static void on_error(MPI_File *fh, int *code, ...)
{
    handler_calls++;
    handler_code = *code;
    handler_file = *fh;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = getenv("FMPL_IO_DIR");
    if (!dir)
        dir = getenv("TMPDIR");
    if (!dir)
        dir = "/tmp";
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    char path[512], missing[512], locked[512];
    snprintf(path, sizeof path, "%s/fmpl-io-err-%d", dir, id);
    snprintf(missing, sizeof missing, "%s/fmpl-io-missing-%d", dir, id);
    snprintf(locked, sizeof locked, "%s/fmpl-io-locked-%d", dir, id);

    MPI_File fh = MPI_FILE_NULL;
    MPI_Errhandler eh;
    CHECK_RC(MPI_File_get_errhandler(MPI_FILE_NULL, &eh), MPI_SUCCESS);
    CHECK(eh == MPI_ERRORS_RETURN);

    /* missing file */
    CHECK(cls(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(fh == MPI_FILE_NULL);
    CHECK(cls(MPI_File_delete(missing, MPI_INFO_NULL)) == MPI_ERR_NO_SUCH_FILE);
    /* bad amode */
    CHECK(cls(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_WRONLY, MPI_INFO_NULL,
                            &fh)) == MPI_ERR_AMODE);
    CHECK(cls(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY | MPI_MODE_CREATE, MPI_INFO_NULL,
                            &fh)) == MPI_ERR_AMODE);

    /* permission */
    const char *noperm = NULL;
    if (geteuid() != 0) {
        if (rank == 0) {
            FILE *f = fopen(locked, "w");
            CHECK(f);
            fclose(f);
            chmod(locked, 0);
        }
        noperm = locked;
    } else if (access("/sys/kernel/notes", F_OK) == 0) {
        noperm = "/sys/kernel/notes"; /* read-only even for root */
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (noperm)
        CHECK(cls(MPI_File_open(MPI_COMM_WORLD, noperm, MPI_MODE_WRONLY, MPI_INFO_NULL, &fh)) ==
              MPI_ERR_ACCESS);
    else if (rank == 0)
        printf("mpi_io_errors: no file without permission found, MPI_ERR_ACCESS on open not "
               "checked\n");
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0 && geteuid() != 0)
        unlink(locked);

    /* create, then EXCL on the existing file */
    CHECK_RC(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    int buf[16] = {0};
    /* read in write-only mode */
    CHECK(cls(MPI_File_read_at(fh, 0, buf, 4, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_ACCESS);
    CHECK_RC(MPI_File_write_at(fh, rank * 16, buf, 16, MPI_BYTE, MPI_STATUS_IGNORE), MPI_SUCCESS);
    /* bad views */
    CHECK(cls(MPI_File_set_view(fh, -1, MPI_INT, MPI_INT, "native", MPI_INFO_NULL)) == MPI_ERR_ARG);
    MPI_Datatype three;
    MPI_Type_contiguous(3, MPI_BYTE, &three);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL)) == MPI_ERR_TYPE);
    MPI_Type_commit(&three);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, three, "native", MPI_INFO_NULL)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, MPI_DATATYPE_NULL, "native", MPI_INFO_NULL)) ==
          MPI_ERR_TYPE);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "no-such-rep", MPI_INFO_NULL)) ==
          MPI_ERR_UNSUPPORTED_DATAREP);
    /* a filetype whose displacements decrease */
    int bl[2] = {1, 1}, dp[2] = {4, 0};
    MPI_Datatype backwards;
    MPI_Type_indexed(2, bl, dp, MPI_INT, &backwards);
    MPI_Type_commit(&backwards);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, backwards, "native", MPI_INFO_NULL)) ==
          MPI_ERR_TYPE);
    MPI_Type_free(&backwards);
    /* overlapping regions: not in a file open for writing */
    int obl[2] = {3, 1}, odp[2] = {0, 1};
    MPI_Datatype overlap;
    MPI_Type_indexed(2, obl, odp, MPI_INT, &overlap);
    MPI_Type_commit(&overlap);
    CHECK(cls(MPI_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL)) == MPI_ERR_TYPE);
    /* a type that is not a whole number of etypes */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK(cls(MPI_File_write_at(fh, 0, buf, 1, three, MPI_STATUS_IGNORE)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_File_write_at(fh, -1, buf, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_ARG);
    CHECK(cls(MPI_File_write_at(fh, 0, buf, -1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_COUNT);
    /* the collective form fails everywhere when one process's arguments are bad */
    CHECK(cls(MPI_File_write_at_all(fh, 0, buf, rank == size - 1 ? -1 : 1, MPI_INT,
                                    MPI_STATUS_IGNORE)) != MPI_SUCCESS);
    MPI_Type_free(&three);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(cls(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_EXCL | MPI_MODE_RDWR,
                            MPI_INFO_NULL, &fh)) == MPI_ERR_FILE_EXISTS);

    /* read-only */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    if (rank == 0) {
        int ramp[16];
        for (int i = 0; i < 16; i++)
            ramp[i] = i;
        CHECK_RC(MPI_File_write_at(fh, 0, ramp, 16, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    /* overlapping regions are fine for reading: ints 0 1 2 1 | 3 4 5 4 (extent 3 ints) */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, overlap, "native", MPI_INFO_NULL), MPI_SUCCESS);
    int ov[8];
    CHECK_RC(MPI_File_read_at_all(fh, 0, ov, 8, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(ov[0] == 0 && ov[1] == 1 && ov[2] == 2 && ov[3] == 1);
    CHECK(ov[4] == 3 && ov[5] == 4 && ov[6] == 5 && ov[7] == 4);
    MPI_Type_free(&overlap);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    CHECK(cls(MPI_File_write_at(fh, 0, buf, 4, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(cls(MPI_File_write_all(fh, buf, 4, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(cls(MPI_File_write_shared(fh, buf, 4, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(cls(MPI_File_set_size(fh, 0)) == MPI_ERR_READ_ONLY);
    /* a user handler on the file */
    MPI_Errhandler mine;
    CHECK_RC(MPI_File_create_errhandler(on_error, &mine), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_errhandler(fh, mine), MPI_SUCCESS);
    CHECK(cls(MPI_File_write_at(fh, 0, buf, 4, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_READ_ONLY);
    CHECK(handler_calls == 1 && handler_file == fh && cls(handler_code) == MPI_ERR_READ_ONLY);
    CHECK_RC(MPI_File_call_errhandler(fh, MPI_ERR_IO), MPI_SUCCESS);
    CHECK(handler_calls == 2 && handler_code == MPI_ERR_IO);
    MPI_Errhandler got;
    CHECK_RC(MPI_File_get_errhandler(fh, &got), MPI_SUCCESS);
    CHECK(got == mine);
    MPI_Errhandler_free(&got);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    /* on MPI_FILE_NULL: serves open */
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, mine), MPI_SUCCESS);
    handler_calls = 0;
    CHECK(cls(MPI_File_open(MPI_COMM_WORLD, missing, MPI_MODE_RDONLY, MPI_INFO_NULL, &fh)) ==
          MPI_ERR_NO_SUCH_FILE);
    CHECK(handler_calls == 1 && handler_file == MPI_FILE_NULL);
    CHECK_RC(MPI_File_set_errhandler(MPI_FILE_NULL, MPI_ERRORS_RETURN), MPI_SUCCESS);
    MPI_Errhandler_free(&mine);
    /* invalid handle */
    MPI_File bogus = (MPI_File)12345;
    CHECK(cls(MPI_File_write_at(bogus, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE)) == MPI_ERR_FILE);

    /* sequential: no seeking, no explicit offsets */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_WRONLY | MPI_MODE_SEQUENTIAL,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    CHECK(cls(MPI_File_seek(fh, 0, MPI_SEEK_SET)) == MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK(cls(MPI_File_write_at(fh, 0, buf, 1, MPI_INT, MPI_STATUS_IGNORE)) ==
          MPI_ERR_UNSUPPORTED_OPERATION);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);

    /* full disk: /dev/full (every process opens it; each write fails) */
    if (access("/dev/full", W_OK) == 0) {
        CHECK_RC(MPI_File_open(MPI_COMM_WORLD, "/dev/full", MPI_MODE_WRONLY, MPI_INFO_NULL, &fh),
                 MPI_SUCCESS);
        MPI_Status st;
        CHECK(cls(MPI_File_write_at(fh, 0, buf, 16, MPI_INT, &st)) == MPI_ERR_NO_SPACE);
        int cnt = -1;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == 0);
        CHECK(cls(MPI_File_write_at_all(fh, 0, buf, 16, MPI_INT, MPI_STATUS_IGNORE)) ==
              MPI_ERR_NO_SPACE);
        CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    }

    /* the file-size limit: a write that crosses it stops there and says so */
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_RDWR, MPI_INFO_NULL, &fh), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_size(fh, 0), MPI_SUCCESS);
    if (rank == 0) {
        signal(SIGXFSZ, SIG_IGN);
        struct rlimit old, lim = {4096, 4096};
        getrlimit(RLIMIT_FSIZE, &old);
        lim.rlim_max = old.rlim_max;
        CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
        char big[8192];
        memset(big, 7, sizeof big);
        MPI_Status st;
        CHECK(cls(MPI_File_write_at(fh, 0, big, 8192, MPI_BYTE, &st)) == MPI_ERR_NO_SPACE);
        int cnt = -1;
        MPI_Get_count(&st, MPI_BYTE, &cnt);
        CHECK(cnt == 4096);
        CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
        MPI_Offset sz;
        CHECK_RC(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
        CHECK(sz == 4096);
    }
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_io_errors: ok\n");
    return 0;
}
