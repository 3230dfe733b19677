/* mpi_io_views.c — MPI-IO data through views: each case writes through one view and
 * reads back through another, with the contents checked byte for byte.
 *   1. A global R x C int array, column blocks per rank (subarray filetype: the views
 *      interleave, so collective writes take the two-phase path), written with
 *      MPI_File_write_all; read back by row blocks (another subarray) with read_at_all,
 *      and whole by rank 0 with a plain contiguous read.
 *   2. The same with collective buffering forced on, two aggregators (cb_nodes) and a
 *      4 KiB cb_buffer_size (many rounds), then forced off (romio_cb_write=disable).
 *   3. Holes: the file is filled with 0xAB, then every rank writes through a vector view
 *      that skips every other int; the holes must still be 0xAB.
 *   4. A noncontiguous memory type (vector) through a contiguous view, individual file
 *      pointers (seek / get_position / get_byte_offset), nonblocking iwrite_at_all /
 *      iread_all.
 *   5. external32: the bytes in the file are big-endian.
 * The file lives in $FMPL_IO_DIR, else $TMPDIR, else /tmp. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

#define R 37 /* rows: not a multiple of any rank count */
#define C 64 /* columns: a multiple of 1, 2, 4; 3 and 7 get uneven blocks */

static int rank, size;
static char path[512];

static int val(int r, int c)
{
    return r * 1000 + c + 1;
}

/* This rank's block of n split over size: [*start, *start + *len). */
static void block(int n, int *start, int *len)
{
    int b = n / size, extra = n % size;
    *len = b + (rank < extra);
    *start = rank * b + (rank < extra ? rank : extra);
}

static void check_whole(MPI_File fh)
{
    /* rank 0 reads all with the default view semantics after resetting the view */
    if (rank == 0) {
        int *all = malloc(sizeof(int) * R * C);
        MPI_Status st;
        CHECK_RC(MPI_File_read_at(fh, 0, all, R * C, MPI_INT, &st), MPI_SUCCESS);
        int cnt;
        MPI_Get_count(&st, MPI_INT, &cnt);
        CHECK(cnt == R * C);
        for (int r = 0; r < R; r++)
            for (int c = 0; c < C; c++)
                CHECK(all[r * C + c] == val(r, c));
        free(all);
    }
}

static void case_columns_rows(MPI_Info info)
{
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, info, &fh),
             MPI_SUCCESS);
    CHECK_RC(MPI_File_set_size(fh, 0), MPI_SUCCESS);
    int c0, nc;
    block(C, &c0, &nc);
    int sizes[2] = {R, C}, sub[2] = {R, nc}, starts[2] = {0, c0};
    MPI_Datatype colview;
    MPI_Type_create_subarray(2, sizes, sub, starts, MPI_ORDER_C, MPI_INT, &colview);
    MPI_Type_commit(&colview);
    int *mine = malloc(sizeof(int) * (R * nc + 1));
    for (int r = 0; r < R; r++)
        for (int c = 0; c < nc; c++)
            mine[r * nc + c] = val(r, c0 + c);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, colview, "native", MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Status st;
    CHECK_RC(MPI_File_write_all(fh, mine, R * nc, MPI_INT, &st), MPI_SUCCESS);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == R * nc);
    MPI_Offset pos;
    CHECK_RC(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == R * nc);
    /* read back by rows, through another view */
    int r0, nr;
    block(R, &r0, &nr);
    int sub2[2] = {nr, C}, starts2[2] = {r0, 0};
    MPI_Datatype rowview;
    MPI_Type_create_subarray(2, sizes, sub2, starts2, MPI_ORDER_C, MPI_INT, &rowview);
    MPI_Type_commit(&rowview);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, rowview, "native", MPI_INFO_NULL), MPI_SUCCESS);
    int *rows = malloc(sizeof(int) * (nr * C + 1));
    memset(rows, 0, sizeof(int) * (nr * C + 1));
    CHECK_RC(MPI_File_read_at_all(fh, 0, rows, nr * C, MPI_INT, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == nr * C);
    for (int r = 0; r < nr; r++)
        for (int c = 0; c < C; c++)
            CHECK(rows[r * C + c] == val(r0 + r, c));
    /* and the columns again, collectively through the column view */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, colview, "native", MPI_INFO_NULL), MPI_SUCCESS);
    memset(mine, 0, sizeof(int) * R * nc);
    CHECK_RC(MPI_File_read_all(fh, mine, R * nc, MPI_INT, &st), MPI_SUCCESS);
    for (int r = 0; r < R; r++)
        for (int c = 0; c < nc; c++)
            CHECK(mine[r * nc + c] == val(r, c0 + c));
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    check_whole(fh);
    MPI_Type_free(&colview);
    MPI_Type_free(&rowview);
    free(mine);
    free(rows);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
}

static void case_holes(void)
{
    MPI_File fh;
    CHECK_RC(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    CHECK_RC(MPI_File_set_size(fh, 0), MPI_SUCCESS);
    enum { N = 50 };          /* ints per rank written */
    int total = 2 * N * size; /* ints in the file */
    if (rank == 0) {
        char *fill = malloc((size_t)total * sizeof(int));
        memset(fill, 0xAB, (size_t)total * sizeof(int));
        CHECK_RC(
            MPI_File_write_at(fh, 0, fill, total * (int)sizeof(int), MPI_BYTE, MPI_STATUS_IGNORE),
            MPI_SUCCESS);
        free(fill);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    /* rank k writes ints k*2, k*2 + 2*size, ... : int j of rank k at 2*(j*size + k) */
    MPI_Datatype ft, ftr;
    MPI_Type_vector(1, 1, 1, MPI_INT, &ft);
    MPI_Type_create_resized(ft, 0, (MPI_Aint)(2 * size * sizeof(int)), &ftr);
    MPI_Type_commit(&ftr);
    int buf[N];
    for (int j = 0; j < N; j++)
        buf[j] = val(rank, j);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)(2 * rank * sizeof(int)), MPI_INT, ftr, "native",
                               MPI_INFO_NULL),
             MPI_SUCCESS);
    /* the view keeps the filetype alive after the user frees it; get_view gives a new one */
    MPI_Type_free(&ftr);
    MPI_Offset vd;
    MPI_Datatype ve, vf;
    char rep[MPI_MAX_DATAREP_STRING];
    CHECK_RC(MPI_File_get_view(fh, &vd, &ve, &vf, rep), MPI_SUCCESS);
    MPI_Aint lb, ext;
    MPI_Type_get_extent(vf, &lb, &ext);
    CHECK(vd == (MPI_Offset)(2 * rank * sizeof(int)) && ve == MPI_INT && lb == 0 &&
          ext == (MPI_Aint)(2 * size * sizeof(int)) && strcmp(rep, "native") == 0);
    CHECK_RC(MPI_Type_free(&vf), MPI_SUCCESS);
    CHECK_RC(MPI_File_write_all(fh, buf, N, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    int *all = malloc((size_t)total * sizeof(int));
    CHECK_RC(MPI_File_read_at(fh, 0, all, total, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int hole;
    memset(&hole, 0xAB, sizeof hole);
    for (int i = 0; i < total; i++) {
        if (i % 2)
            CHECK(all[i] == hole);
        else
            CHECK(all[i] == val((i / 2) % size, (i / 2) / size));
    }
    free(all);
    MPI_Type_free(&ft);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
}

static void case_memtype_pointers(void)
{
    MPI_File fh;
    CHECK_RC(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    CHECK_RC(MPI_File_set_size(fh, 0), MPI_SUCCESS);
    /* memory: every third double of 3*M; file: contiguous M doubles per rank */
    enum { M = 40 };
    double mem[3 * M];
    for (int i = 0; i < 3 * M; i++)
        mem[i] = i % 3 ? -1.0 : rank * 1000.0 + i / 3;
    MPI_Datatype every3;
    MPI_Type_vector(M, 1, 3, MPI_DOUBLE, &every3);
    MPI_Type_commit(&every3);
    CHECK_RC(MPI_File_set_view(fh, (MPI_Offset)(rank * M * sizeof(double)), MPI_DOUBLE, MPI_DOUBLE,
                               "native", MPI_INFO_NULL),
             MPI_SUCCESS);
    MPI_Request req;
    CHECK_RC(MPI_File_iwrite_at_all(fh, 0, mem, 1, every3, &req), MPI_SUCCESS);
    MPI_Status st;
    CHECK_RC(MPI_Wait(&req, &st), MPI_SUCCESS);
    int cnt;
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == M);
    /* individual pointer */
    CHECK_RC(MPI_File_seek(fh, 5, MPI_SEEK_SET), MPI_SUCCESS);
    MPI_Offset pos, byte;
    CHECK_RC(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == 5);
    CHECK_RC(MPI_File_get_byte_offset(fh, pos, &byte), MPI_SUCCESS);
    CHECK(byte == (MPI_Offset)((rank * M + 5) * sizeof(double)));
    double back[M];
    CHECK_RC(MPI_File_iread_all(fh, back, M - 5, MPI_DOUBLE, &req), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&req, &st), MPI_SUCCESS);
    for (int i = 0; i < M - 5; i++)
        CHECK(back[i] == rank * 1000.0 + 5 + i);
    CHECK_RC(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == M);
    CHECK_RC(MPI_File_seek(fh, -3, MPI_SEEK_CUR), MPI_SUCCESS);
    CHECK_RC(MPI_File_read(fh, back, 3, MPI_DOUBLE, &st), MPI_SUCCESS);
    CHECK(back[0] == rank * 1000.0 + M - 3);
    /* read into the strided memory type: the gaps stay untouched */
    double mem2[3 * M];
    for (int i = 0; i < 3 * M; i++)
        mem2[i] = -7.0;
    CHECK_RC(MPI_File_read_at(fh, 0, mem2, 1, every3, &st), MPI_SUCCESS);
    for (int i = 0; i < 3 * M; i++)
        CHECK(mem2[i] == (i % 3 ? -7.0 : rank * 1000.0 + i / 3));
    /* reading past the end: count 0 */
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_DOUBLE, MPI_DOUBLE, "native", MPI_INFO_NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_File_seek(fh, 0, MPI_SEEK_END), MPI_SUCCESS);
    CHECK_RC(MPI_File_get_position(fh, &pos), MPI_SUCCESS);
    CHECK(pos == size * M);
    CHECK_RC(MPI_File_read(fh, back, 2, MPI_DOUBLE, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_DOUBLE, &cnt);
    CHECK(cnt == 0);
    MPI_Type_free(&every3);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
}

static void case_external32(void)
{
    MPI_File fh;
    CHECK_RC(
        MPI_File_open(MPI_COMM_WORLD, path, MPI_MODE_CREATE | MPI_MODE_RDWR, MPI_INFO_NULL, &fh),
        MPI_SUCCESS);
    CHECK_RC(MPI_File_set_size(fh, 0), MPI_SUCCESS);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "external32", MPI_INFO_NULL), MPI_SUCCESS);
    int v[2] = {0x01020304 + rank, -2};
    CHECK_RC(MPI_File_write_at_all(fh, 2 * rank, v, 2, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    char rep[MPI_MAX_DATAREP_STRING];
    MPI_Offset disp;
    MPI_Datatype et, ft;
    CHECK_RC(MPI_File_get_view(fh, &disp, &et, &ft, rep), MPI_SUCCESS);
    CHECK(strcmp(rep, "external32") == 0 && et == MPI_INT && ft == MPI_INT && disp == 0);
    int back[2];
    CHECK_RC(MPI_File_read_at(fh, 2 * rank, back, 2, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(back[0] == v[0] && back[1] == v[1]);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_BYTE, MPI_BYTE, "native", MPI_INFO_NULL), MPI_SUCCESS);
    unsigned char raw[8];
    CHECK_RC(MPI_File_read_at(fh, 8 * rank, raw, 8, MPI_BYTE, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(raw[0] == 1 && raw[1] == 2 && raw[2] == 3 && raw[3] == 4 + rank);
    CHECK(raw[4] == 0xff && raw[7] == 0xfe);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    const char *dir = getenv("FMPL_IO_DIR");
    if (!dir)
        dir = getenv("TMPDIR");
    if (!dir)
        dir = "/tmp";
    int id = (int)getpid();
    MPI_Bcast(&id, 1, MPI_INT, 0, MPI_COMM_WORLD);
    snprintf(path, sizeof path, "%s/fmpl-io-views-%d", dir, id);

    case_columns_rows(MPI_INFO_NULL);
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "romio_cb_write", "enable");
    MPI_Info_set(info, "romio_cb_read", "enable");
    MPI_Info_set(info, "cb_nodes", "2");
    MPI_Info_set(info, "cb_buffer_size", "4096");
    MPI_Info_set(info, "some_unknown_hint", "ignored");
    case_columns_rows(info);
    MPI_Info_set(info, "romio_cb_write", "disable");
    MPI_Info_set(info, "romio_cb_read", "disable");
    case_columns_rows(info);
    MPI_Info_free(&info);
    case_holes();
    case_memtype_pointers();
    case_external32();
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0)
        CHECK_RC(MPI_File_delete(path, MPI_INFO_NULL), MPI_SUCCESS);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_io_views: ok\n");
    return 0;
}
