/* mpi_tool_event.c — MPI_T events and sources (src/mpi/tool_event.c):
 * - the catalogue: 4 events in category "mpi", names <-> indices, element types and
 *   displacements, one ordered nanosecond source;
 * - mpi_unexpected_message: each rank sends tags 5, 6, 7 (8, 16, 24 bytes) to the next
 *   rank, which probes the last first (so all three queue as unexpected); a callback at
 *   MPI_T_CB_REQUIRE_MPI_RESTRICTED (preferred to the THREAD_SAFE one also registered)
 *   reads every element (MPI_T_event_read and _copy agree), the source index, the
 *   timestamps (non-decreasing, between two readings of the source's clock);
 * - mpi_rendezvous_send (1 MiB to the next rank), mpi_coll_algorithm (MPI_Allreduce),
 *   mpi_io_done (MPI_File_iwrite_at);
 * - buffering: a handle with only a MPI_T_CB_REQUIRE_NONE callback and a buffer of 2
 *   gets nothing while 5 events happen; the next MPI_T event call reports 3 dropped to
 *   the dropped handler, then delivers the first 2 with cb_safety NONE;
 * - handle_free calls the free callback; after it no callback runs;
 * - errors: bad indices (MPI_T_ERR_INVALID_INDEX), bad handles and an instance used
 *   after its callback (MPI_T_ERR_INVALID_HANDLE), bad arguments (MPI_T_ERR_INVALID),
 *   calls outside MPI_T_init_thread/finalize (MPI_T_ERR_NOT_INITIALIZED). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "test_util.h"

typedef struct unexp_rec { /* the documented layout of mpi_unexpected_message */
    int32_t source, tag;
    uint32_t context, pad;
    uint64_t bytes;
} unexp_rec_t;

enum { MAXREC = 64 };
static struct {
    unexp_rec_t read, copy;
    MPI_Count ts;
    int source, safety;
} rec[MAXREC];
static int nrec, thread_safe_calls, bad_element_rc, none_tags[8], nnone, none_safety = -1;
static MPI_Count dropped_count;
static int dropped_calls, free_calls;
static MPI_T_event_instance stale;

static void on_unexpected(MPI_T_event_instance ei, MPI_T_event_registration reg,
                          MPI_T_cb_safety safety, void *user)
{
    (void)reg;
    CHECK(user == (void *)&rec);
    if (nrec == MAXREC)
        return;
    unexp_rec_t *r = &rec[nrec].read;
    CHECK_RC(MPI_T_event_read(ei, 0, &r->source), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(ei, 1, &r->tag), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(ei, 2, &r->context), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_read(ei, 3, &r->bytes), MPI_SUCCESS);
    r->pad = 0;
    CHECK_RC(MPI_T_event_copy(ei, &rec[nrec].copy), MPI_SUCCESS);
    rec[nrec].copy.pad = 0;
    CHECK_RC(MPI_T_event_get_timestamp(ei, &rec[nrec].ts), MPI_SUCCESS);
    CHECK_RC(MPI_T_event_get_source(ei, &rec[nrec].source), MPI_SUCCESS);
    bad_element_rc = MPI_T_event_read(ei, 4, r);
    rec[nrec].safety = safety;
    stale = ei;
    nrec++;
}

static void on_unexpected_ts(MPI_T_event_instance ei, MPI_T_event_registration reg,
                             MPI_T_cb_safety safety, void *user)
{
    (void)ei, (void)reg, (void)safety, (void)user;
    thread_safe_calls++;
}

static void on_none(MPI_T_event_instance ei, MPI_T_event_registration reg, MPI_T_cb_safety safety,
                    void *user)
{
    (void)reg, (void)user;
    int tag = -1;
    CHECK_RC(MPI_T_event_read(ei, 1, &tag), MPI_SUCCESS);
    if (nnone < 8)
        none_tags[nnone] = tag;
    nnone++;
    none_safety = safety;
}

static void on_dropped(MPI_Count count, MPI_T_event_registration reg, int source,
                       MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)user;
    CHECK(source == 0 && safety == MPI_T_CB_REQUIRE_NONE && nnone == 0);
    dropped_count += count;
    dropped_calls++;
}

static void on_free(MPI_T_event_registration reg, MPI_T_cb_safety safety, void *user)
{
    (void)reg, (void)safety;
    CHECK(user == (void *)&free_calls);
    free_calls++;
}

/* Generic recorder of the first element pair of the other events. */
static int64_t got[3][4];
static int ngot[3];
static void on_other(MPI_T_event_instance ei, MPI_T_event_registration reg, MPI_T_cb_safety safety,
                     void *user)
{
    (void)reg, (void)safety;
    int which = (int)(intptr_t)user;
    unsigned char buf[64];
    CHECK_RC(MPI_T_event_copy(ei, buf), MPI_SUCCESS);
    if (which == 0) { /* rendezvous {int32 dest, int32 tag, uint64 bytes} */
        int32_t d, t;
        uint64_t b;
        memcpy(&d, buf, 4), memcpy(&t, buf + 4, 4), memcpy(&b, buf + 8, 8);
        if (t == 9) {
            got[0][0] = d, got[0][1] = t, got[0][2] = (int64_t)b;
            ngot[0]++;
        }
    } else if (which == 1) { /* coll {int32 collective, int32 algorithm} */
        int32_t c, a;
        memcpy(&c, buf, 4), memcpy(&a, buf + 4, 4);
        if (c == 7) {
            got[1][0] = c, got[1][1] = a;
            ngot[1]++;
        }
    } else { /* io {int32 write, int32 error, int64 bytes, int64 position} */
        int32_t w, e;
        int64_t b, p;
        memcpy(&w, buf, 4), memcpy(&e, buf + 4, 4), memcpy(&b, buf + 8, 8), memcpy(&p, buf + 16, 8);
        got[2][0] = w, got[2][1] = e, got[2][2] = b, got[2][3] = p;
        ngot[2]++;
    }
}

static int event_index(const char *name)
{
    int i = -1;
    CHECK_RC(MPI_T_event_get_index(name, &i), MPI_SUCCESS);
    return i;
}

/* Each rank sends n small messages (tags first.., 8 bytes more each) to the next rank and
 * receives the previous rank's, probing the last first: all queue as unexpected. */
static void unexpected_round(int rank, int size, int first, int n)
{
    int next = (rank + 1) % size, prev = (rank + size - 1) % size;
    char out[8][64], in[64];
    MPI_Request rq[8];
    for (int i = 0; i < n; i++) {
        memset(out[i], first + i, sizeof out[i]);
        MPI_Isend(out[i], 8 * (i + 1), MPI_CHAR, next, first + i, MPI_COMM_WORLD, &rq[i]);
    }
    MPI_Status st;
    MPI_Probe(prev, first + n - 1, MPI_COMM_WORLD, &st);
    for (int i = 0; i < n; i++) {
        MPI_Recv(in, 64, MPI_CHAR, prev, first + i, MPI_COMM_WORLD, &st);
        CHECK(in[0] == (char)(first + i));
    }
    MPI_Waitall(n, rq, MPI_STATUSES_IGNORE);
}

int main(int argc, char **argv)
{
    int provided, n;
    CHECK_RC(MPI_T_event_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);

    /* the catalogue */
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS);
    CHECK(n == 4);
    const char *names[4] = {"mpi_unexpected_message", "mpi_rendezvous_send", "mpi_coll_algorithm",
                            "mpi_io_done"};
    const int nelems[4] = {4, 3, 2, 4};
    for (int e = 0; e < 4; e++) {
        char name[64], desc[512];
        int nl = sizeof name, dl = sizeof desc, verb, ne = 4, bind;
        MPI_Datatype types[4];
        MPI_Aint displs[4];
        MPI_T_enum en;
        MPI_Info info;
        CHECK_RC(MPI_T_event_get_info(e, name, &nl, &verb, types, displs, &ne, &en, &info, desc,
                                      &dl, &bind),
                 MPI_SUCCESS);
        CHECK(strcmp(name, names[e]) == 0 && ne == nelems[e] && dl > 20);
        CHECK(bind == MPI_T_BIND_NO_OBJECT && en == MPI_T_ENUM_NULL);
        CHECK(displs[0] == 0 && displs[1] == 4);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        CHECK(event_index(names[e]) == e);
    }
    {
        int ne = 4;
        MPI_Datatype types[4];
        MPI_Aint displs[4];
        CHECK_RC(MPI_T_event_get_info(0, NULL, NULL, NULL, types, displs, &ne, NULL, NULL, NULL,
                                      NULL, NULL),
                 MPI_SUCCESS);
        CHECK(types[0] == MPI_INT32_T && types[3] == MPI_UINT64_T && displs[2] == 8 &&
              displs[3] == 16);
    }
    int cat = -1, cne = 0, cev[8];
    CHECK_RC(MPI_T_category_get_index("mpi", &cat), MPI_SUCCESS);
    CHECK_RC(MPI_T_category_get_num_events(cat, &cne), MPI_SUCCESS);
    CHECK(cne == 4);
    CHECK_RC(MPI_T_category_get_events(cat, 8, cev), MPI_SUCCESS);
    CHECK(cev[0] == 0 && cev[3] == 3);
    CHECK_RC(MPI_T_source_get_num(&n), MPI_SUCCESS);
    CHECK(n == 1);
    {
        char name[64];
        int nl = sizeof name;
        MPI_T_source_order order;
        MPI_Count tps, maxt;
        CHECK_RC(MPI_T_source_get_info(0, name, &nl, NULL, NULL, &order, &tps, &maxt, NULL),
                 MPI_SUCCESS);
        CHECK(strcmp(name, "fmpl_clock") == 0 && order == MPI_T_SOURCE_ORDERED &&
              tps == 1000000000 && maxt > 0);
    }

    /* errors */
    MPI_T_event_registration reg, bogus = (MPI_T_event_registration)(void *)&nrec;
    CHECK_RC(
        MPI_T_event_get_info(-1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
        MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_handle_alloc(4, NULL, MPI_INFO_NULL, &reg), MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, MPI_INFO_NULL, NULL), MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_get_index(NULL, &n), MPI_T_ERR_INVALID);
    CHECK_RC(
        MPI_T_event_register_callback(bogus, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_none),
        MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_set_dropped_handler(bogus, on_dropped), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_handle_free(bogus, NULL, NULL), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_source_get_info(1, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL),
             MPI_T_ERR_INVALID_INDEX);
    CHECK_RC(MPI_T_source_get_timestamp(-1, NULL), MPI_T_ERR_INVALID_INDEX);

    /* mpi_unexpected_message, delivered at once */
    CHECK_RC(
        MPI_T_event_handle_alloc(event_index("mpi_unexpected_message"), NULL, MPI_INFO_NULL, &reg),
        MPI_SUCCESS);
    CHECK_RC(MPI_T_event_register_callback(reg, 7, MPI_INFO_NULL, NULL, on_unexpected),
             MPI_T_ERR_INVALID);
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_THREAD_SAFE, MPI_INFO_NULL, NULL,
                                           on_unexpected_ts),
             MPI_SUCCESS);
    CHECK_RC(MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_MPI_RESTRICTED, MPI_INFO_NULL,
                                           &rec, on_unexpected),
             MPI_SUCCESS);
    MPI_Count t0, t1; /* before the barrier: a faster neighbour sends right after it */
    CHECK_RC(MPI_T_source_get_timestamp(0, &t0), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    unexpected_round(rank, size, 5, 3);
    CHECK_RC(MPI_T_source_get_timestamp(0, &t1), MPI_SUCCESS);
    int prev = (rank + size - 1) % size, k = 0;
    uint32_t ctx = 0;
    MPI_Count last = t0;
    for (int i = 0; i < nrec; i++) {
        const unexp_rec_t *r = &rec[i].read;
        CHECK(memcmp(r, &rec[i].copy, sizeof *r) == 0);
        CHECK(rec[i].source == 0 && rec[i].safety == MPI_T_CB_REQUIRE_MPI_RESTRICTED);
        CHECK(rec[i].ts >= last && rec[i].ts <= t1);
        last = rec[i].ts;
        /* ours (the barrier's own messages use other tags, sizes and context) */
        if (r->tag >= 5 && r->tag <= 7 && r->source == prev &&
            r->bytes == (uint64_t)(8 * (r->tag - 4)) && rec[i].ts >= t0) {
            CHECK(r->tag == 5 + k);
            if (k == 0)
                ctx = r->context;
            CHECK(r->context == ctx);
            k++;
        }
    }
    CHECK(k == 3 && thread_safe_calls == 0);
    CHECK(bad_element_rc == MPI_T_ERR_INVALID_INDEX);
    int dummy;
    CHECK_RC(MPI_T_event_read(stale, 0, &dummy), MPI_T_ERR_INVALID_HANDLE);
    CHECK_RC(MPI_T_event_get_timestamp(stale, &t0), MPI_T_ERR_INVALID_HANDLE);

    /* the other events */
    MPI_T_event_registration ro[3];
    const char *other[3] = {"mpi_rendezvous_send", "mpi_coll_algorithm", "mpi_io_done"};
    for (int i = 0; i < 3; i++) {
        CHECK_RC(MPI_T_event_handle_alloc(event_index(other[i]), NULL, MPI_INFO_NULL, &ro[i]),
                 MPI_SUCCESS);
        CHECK_RC(MPI_T_event_register_callback(ro[i], MPI_T_CB_REQUIRE_ASYNC_SIGNAL_SAFE,
                                               MPI_INFO_NULL, (void *)(intptr_t)i, on_other),
                 MPI_SUCCESS);
    }
    enum { BIG = 1 << 20 };
    static char big_out[BIG], big_in[BIG];
    memset(big_out, rank + 1, BIG);
    MPI_Sendrecv(big_out, BIG, MPI_CHAR, (rank + 1) % size, 9, big_in, BIG, MPI_CHAR, prev, 9,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    CHECK(big_in[BIG - 1] == (char)(prev + 1));
    CHECK(ngot[0] == 1 && got[0][0] == (rank + 1) % size && got[0][2] == BIG);
    int one = 1, sum = 0;
    MPI_Allreduce(&one, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(sum == size);
    CHECK(ngot[1] >= 1 && got[1][0] == 7 && got[1][1] > 0);
    char path[256];
    snprintf(path, sizeof path, "/tmp/fmpl-tool-event-%d-%d", (int)getpid(), rank);
    MPI_File fh;
    CHECK_RC(MPI_File_open(MPI_COMM_SELF, path,
                           MPI_MODE_CREATE | MPI_MODE_RDWR | MPI_MODE_DELETE_ON_CLOSE,
                           MPI_INFO_NULL, &fh),
             MPI_SUCCESS);
    MPI_Request rq;
    CHECK_RC(MPI_File_iwrite_at(fh, 40, big_out, 100, MPI_CHAR, &rq), MPI_SUCCESS);
    CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK(ngot[2] == 1 && got[2][0] == 1 && got[2][1] == MPI_SUCCESS && got[2][2] == 100 &&
          got[2][3] == 40);
    CHECK_RC(MPI_File_close(&fh), MPI_SUCCESS);
    for (int i = 0; i < 3; i++)
        CHECK_RC(MPI_T_event_handle_free(ro[i], NULL, NULL), MPI_SUCCESS);

    /* free: the free callback, and no more callbacks */
    CHECK_RC(MPI_T_event_handle_free(reg, &free_calls, on_free), MPI_SUCCESS);
    CHECK(free_calls == 1);
    int before = nrec;
    MPI_Barrier(MPI_COMM_WORLD);
    unexpected_round(rank, size, 5, 3);
    CHECK(nrec == before);
    CHECK_RC(
        MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_none),
        MPI_T_ERR_INVALID_HANDLE);

    /* buffered delivery and dropped events (the barrier, after every rank allocated its
     * handle, goes through the collective mailboxes: no unexpected message) */
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "fmpl_event_buffer", "2");
    CHECK_RC(MPI_T_event_handle_alloc(0, NULL, info, &reg), MPI_SUCCESS);
    MPI_Info_free(&info);
    CHECK_RC(MPI_T_event_handle_get_info(reg, &info), MPI_SUCCESS);
    char v[16];
    int flag = 0;
    MPI_Info_get(info, "fmpl_event_buffer", 15, v, &flag);
    CHECK(flag && strcmp(v, "2") == 0);
    MPI_Info_free(&info);
    CHECK_RC(
        MPI_T_event_register_callback(reg, MPI_T_CB_REQUIRE_NONE, MPI_INFO_NULL, NULL, on_none),
        MPI_SUCCESS);
    CHECK_RC(MPI_T_event_set_dropped_handler(reg, on_dropped), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    unexpected_round(rank, size, 20, 5);
    CHECK(nnone == 0 && dropped_calls == 0);        /* nothing delivered inside the library */
    CHECK_RC(MPI_T_event_get_num(&n), MPI_SUCCESS); /* a delivery point */
    CHECK(dropped_calls == 1 && dropped_count == 3);
    CHECK(nnone == 2 && none_tags[0] == 20 && none_tags[1] == 21);
    CHECK(none_safety == MPI_T_CB_REQUIRE_NONE);
    CHECK_RC(MPI_T_event_handle_free(reg, NULL, NULL), MPI_SUCCESS);

    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Finalize();
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    CHECK_RC(MPI_T_source_get_num(&n), MPI_T_ERR_NOT_INITIALIZED);
    return 0;
}
