/* mpi_io_shared.c — the shared file pointer, ordered and split collectives, atomic mode,
 * file queries:
 *   - write_shared: every rank appends K blocks tagged with its rank and sequence; the
 *     file then holds each block exactly once, with no gaps, and the shared pointer is at
 *     the end (get_position_shared);
 *   - write_ordered / read_ordered: blocks of rank-dependent length land in rank order;
 *   - seek_shared, iwrite_shared / iread_shared;
 *   - split collectives (write_at_all_begin/end, read_all_begin/end, write_ordered_begin);
 *     a second begin while one is active fails;
 *   - atomic mode: set/get_atomicity; overlapping writes leave one writer's whole block;
 *   - get_amode, get_group, get_info hints, get_type_extent, preallocate, get_size, sync,
 *     MPI_MODE_DELETE_ON_CLOSE, MPI_File_c2f/f2c, MPI_Register_datarep. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

enum { K = 5, B = 8 }; /* blocks per rank, ints per block */

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static int ext_fn(MPI_Datatype t, MPI_Aint *extent, void *extra)
{
    (void)extra;
    MPI_Aint lb;
    return MPI_Type_get_extent(t, &lb, extent);
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
    char path[512];
    snprintf(path, sizeof path, "%s/fmpl-io-shared-%d", dir, id);

    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_WORLD, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    CHECK(MPI_File_f2c(MPI_File_c2f(fh)) == fh);
    int amode;
    CHECK_RC(MPI_File_get_amode(fh, &amode), MPI_SUCCESS);
    CHECK(amode == (MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE));
    MPI_Group g, wg;
    int res;
    CHECK_RC(MPI_File_get_group(fh, &g), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    MPI_Info used;
    CHECK_RC(MPI_File_get_info(fh, &used), MPI_SUCCESS);
    char v[MPI_MAX_INFO_VAL];
    int flag;
    MPI_Info_get(used, "cb_buffer_size", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && atoi(v) > 0);
    MPI_Info_get(used, "cb_nodes", MPI_MAX_INFO_VAL - 1, v, &flag);
    CHECK(flag && atoi(v) >= 1);
    MPI_Info_free(&used);
    MPI_Aint ext;
    CHECK_RC(MPI_File_get_type_extent(fh, MPI_DOUBLE, &ext), MPI_SUCCESS);
    CHECK(ext == sizeof(double));

    /* write_shared */
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "native", MPI_INFO_NULL), MPI_SUCCESS);
    for (int k = 0; k < K; k++) {
        int blk[B];
        for (int i = 0; i < B; i++)
            blk[i] = rank * 100 + k;
        if (k == K - 1) {
            MPI_Request rq;
            CHECK_RC(MPI_File_iwrite_shared(fh, blk, B, MPI_INT, &rq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        } else
            CHECK_RC(MPI_File_write_shared(fh, blk, B, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    }
    CHECK_RC(MPI_File_sync(fh), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Offset sp;
    CHECK_RC(MPI_File_get_position_shared(fh, &sp), MPI_SUCCESS);
    CHECK(sp == (MPI_Offset)size * K * B);
    int n = size * K * B;
    int *all = malloc(sizeof(int) * (size_t)n);
    CHECK_RC(MPI_File_read_at(fh, 0, all, n, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int *seen = calloc((size_t)size * K, sizeof *seen);
    for (int b = 0; b < size * K; b++) {
        int t = all[b * B];
        for (int i = 1; i < B; i++)
            CHECK(all[b * B + i] == t);
        CHECK(t / 100 < size && t % 100 < K);
        seen[(t / 100) * K + t % 100]++;
    }
    for (int i = 0; i < size * K; i++)
        CHECK(seen[i] == 1);
    /* read_shared after seek_shared: everyone reads one block, together all of them */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    int blk[B];
    CHECK_RC(MPI_File_read_shared(fh, blk, B, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int first = blk[0], any = 0;
    for (int b = 0; b < size; b++)
        any |= all[b * B] == first;
    CHECK(any);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_get_position_shared(fh, &sp), MPI_SUCCESS);
    CHECK(sp == (MPI_Offset)size * B);

    /* ordered: rank r writes r + 1 ints of value r after the shared pointer at 0 */
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    int mine[64];
    for (int i = 0; i <= rank; i++)
        mine[i] = rank;
    CHECK_RC(MPI_File_write_ordered(fh, mine, rank + 1, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    int tri = size * (size + 1) / 2;
    CHECK_RC(MPI_File_get_position_shared(fh, &sp), MPI_SUCCESS);
    CHECK(sp == tri);
    CHECK_RC(MPI_File_read_at_all(fh, 0, all, tri, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int r = 0, at = 0; r < size; r++)
        for (int i = 0; i <= r; i++)
            CHECK(all[at++] == r);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    memset(mine, -1, sizeof mine);
    MPI_Status st;
    CHECK_RC(MPI_File_read_ordered(fh, mine, rank + 1, MPI_INT, &st), MPI_SUCCESS);
    for (int i = 0; i <= rank; i++)
        CHECK(mine[i] == rank);
    int cnt;
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == rank + 1);

    /* split collectives */
    int sb[4] = {rank, rank, rank, rank};
    CHECK_RC(MPI_File_write_at_all_begin(fh, 1000 + 4 * rank, sb, 4, MPI_INT), MPI_SUCCESS);
    CHECK(cls(MPI_File_read_all_begin(fh, sb, 4, MPI_INT)) == MPI_ERR_OTHER);
    CHECK_RC(MPI_File_write_at_all_end(fh, sb, &st), MPI_SUCCESS);
    MPI_Get_count(&st, MPI_INT, &cnt);
    CHECK(cnt == 4);
    CHECK(cls(MPI_File_write_at_all_end(fh, sb, &st)) == MPI_ERR_OTHER);
    CHECK_RC(MPI_File_seek(fh, 1000 + 4 * ((rank + 1) % size), MPI_SEEK_SET), MPI_SUCCESS);
    int rb[4] = {-1, -1, -1, -1};
    CHECK_RC(MPI_File_read_all_begin(fh, rb, 4, MPI_INT), MPI_SUCCESS);
    CHECK_RC(MPI_File_read_all_end(fh, rb, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 0; i < 4; i++)
        CHECK(rb[i] == (rank + 1) % size);
    CHECK_RC(MPI_File_seek_shared(fh, 0, MPI_SEEK_SET), MPI_SUCCESS);
    CHECK_RC(MPI_File_write_ordered_begin(fh, sb, 1, MPI_INT), MPI_SUCCESS);
    CHECK_RC(MPI_File_write_ordered_end(fh, sb, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_File_read_at_all(fh, 0, all, size, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int r = 0; r < size; r++)
        CHECK(all[r] == r);

    /* atomic mode: all ranks write the same 4 KiB at once; one writer's block wins whole */
    CHECK_RC(MPI_File_set_atomicity(fh, 1), MPI_SUCCESS);
    CHECK_RC(MPI_File_get_atomicity(fh, &flag), MPI_SUCCESS);
    CHECK(flag == 1);
    int big[1024];
    for (int i = 0; i < 1024; i++)
        big[i] = rank;
    CHECK_RC(MPI_File_write_at(fh, 0, big, 1024, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_File_read_at(fh, 0, big, 1024, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    for (int i = 1; i < 1024; i++)
        CHECK(big[i] == big[0]);
    CHECK_RC(MPI_File_set_atomicity(fh, 0), MPI_SUCCESS);

    /* sizes */
    CHECK_RC(MPI_File_preallocate(fh, 1 << 16), MPI_SUCCESS);
    MPI_Offset sz;
    CHECK_RC(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz >= (1 << 16));
    CHECK_RC(MPI_File_set_size(fh, 100), MPI_SUCCESS);
    CHECK_RC(MPI_File_get_size(fh, &sz), MPI_SUCCESS);
    CHECK(sz == 100);

    /* a registered representation without conversion: the bytes are native */
    int rc = MPI_Register_datarep("fmpl-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                  ext_fn, NULL);
    CHECK(rc == MPI_SUCCESS);
    CHECK(cls(MPI_Register_datarep("fmpl-test-rep", MPI_CONVERSION_FN_NULL, MPI_CONVERSION_FN_NULL,
                                   ext_fn, NULL)) == MPI_ERR_DUP_DATAREP);
    CHECK_RC(MPI_File_set_view(fh, 0, MPI_INT, MPI_INT, "fmpl-test-rep", MPI_INFO_NULL),
             MPI_SUCCESS);
    int x = 4242 + rank;
    CHECK_RC(MPI_File_write_at_all(fh, rank, &x, 1, MPI_INT, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_File_read_at_all(fh, (rank + 1) % size, &x, 1, MPI_INT, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(x == 4242 + (rank + 1) % size);

    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    CHECK(fh == MPI_FILE_NULL);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK(access(path, F_OK) != 0); /* deleted on close */
    free(all);
    free(seen);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_io_shared: ok\n");
    return 0;
}
