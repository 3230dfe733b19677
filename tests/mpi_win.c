/* mpi_win.c — one-sided communication (src/mpi/win*.c): every creation flavour (create,
 * allocate, allocate_shared contiguous and noncontig, dynamic) x every synchronization
 * (fence, PSCW, lock shared/exclusive, lock_all) x put / get / accumulate / get_accumulate
 * / fetch_and_op / compare_and_swap / R-forms, contents checked on every rank; a 76-byte
 * window with disp_unit 4 (ints and misaligned doubles); derived origin and target types;
 * concurrent accumulates from all ranks on the same elements (exact sums, several types);
 * attributes, names, group, info, error handlers; each error class. With argument
 * "compute", also a passive epoch that completes while the target computes for a second
 * without calling MPI (meant for FMPL_TRANSPORT=udp, served by the progress thread). */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "test_util.h"

static int rank, size;

enum { F_CREATE, F_ALLOCATE, F_SHARED, F_SHARED_NC, F_DYNAMIC, F_N };
enum { S_FENCE, S_PSCW, S_LOCK_EXCL, S_LOCK_SHARED, S_LOCK_ALL, S_N };

#define N 19 /* ints per rank: odd on purpose */

static int cls(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

typedef struct win_case {
    MPI_Win win;
    int *buf;       /* this rank's N ints */
    void *mem;      /* to free (create / dynamic) */
    MPI_Aint *addr; /* dynamic: every rank's address of buf */
} win_case_t;

/* Makes a window of N ints per rank (disp_unit 4), zeroed; 0 when the flavour cannot be
 * made here (shared memory across hosts or over udp: MPI_ERR_RMA_SHARED checked). */
static int make_win(int flavor, win_case_t *wc)
{
    memset(wc, 0, sizeof *wc);
    MPI_Info info = MPI_INFO_NULL;
    int rc;
    switch (flavor) {
    case F_CREATE:
        wc->mem = wc->buf = calloc(N, sizeof(int));
        CHECK_RC(MPI_Win_create(wc->buf, N * sizeof(int), sizeof(int), MPI_INFO_NULL,
                                MPI_COMM_WORLD, &wc->win),
                 MPI_SUCCESS);
        break;
    case F_ALLOCATE:
        CHECK_RC(MPI_Win_allocate(N * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD,
                                  &wc->buf, &wc->win),
                 MPI_SUCCESS);
        break;
    case F_SHARED:
    case F_SHARED_NC:
        if (flavor == F_SHARED_NC) {
            MPI_Info_create(&info);
            MPI_Info_set(info, "alloc_shared_noncontig", "true");
        }
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        rc = MPI_Win_allocate_shared(N * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &wc->buf,
                                     &wc->win);
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
        if (info != MPI_INFO_NULL)
            MPI_Info_free(&info);
        if (rc != MPI_SUCCESS) {
            CHECK(cls(rc) == MPI_ERR_RMA_SHARED);
            CHECK(wc->win == MPI_WIN_NULL);
            return 0;
        }
        break;
    case F_DYNAMIC:
        CHECK_RC(MPI_Win_create_dynamic(MPI_INFO_NULL, MPI_COMM_WORLD, &wc->win), MPI_SUCCESS);
        wc->mem = wc->buf = calloc(N, sizeof(int));
        CHECK_RC(MPI_Win_attach(wc->win, wc->buf, N * sizeof(int)), MPI_SUCCESS);
        wc->addr = malloc(sizeof(MPI_Aint) * (size_t)size);
        MPI_Aint mine;
        MPI_Get_address(wc->buf, &mine);
        MPI_Allgather(&mine, 1, MPI_AINT, wc->addr, 1, MPI_AINT, MPI_COMM_WORLD);
        break;
    }
    int *flavor_attr, flag;
    CHECK_RC(MPI_Win_get_attr(wc->win, MPI_WIN_CREATE_FLAVOR, &flavor_attr, &flag), MPI_SUCCESS);
    CHECK(flag);
    static const int expect[F_N] = {MPI_WIN_FLAVOR_CREATE, MPI_WIN_FLAVOR_ALLOCATE,
                                    MPI_WIN_FLAVOR_SHARED, MPI_WIN_FLAVOR_SHARED,
                                    MPI_WIN_FLAVOR_DYNAMIC};
    CHECK(*flavor_attr == expect[flavor]);
    memset(wc->buf, 0, N * sizeof(int));
    MPI_Barrier(MPI_COMM_WORLD);
    return 1;
}

static void free_win(win_case_t *wc)
{
    if (wc->addr)
        CHECK_RC(MPI_Win_detach(wc->win, wc->buf), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&wc->win), MPI_SUCCESS);
    CHECK(wc->win == MPI_WIN_NULL);
    free(wc->mem);
    free(wc->addr);
}

static MPI_Aint disp_of(const win_case_t *wc, int target, int idx)
{
    return wc->addr ? wc->addr[target] + idx * (MPI_Aint)sizeof(int) : idx;
}

/* Opens / closes an access epoch on target (and exposure for the active modes). */
static void epoch_open(int sync, MPI_Win win, int target, MPI_Group world)
{
    switch (sync) {
    case S_FENCE: MPI_Win_fence(0, win); break;
    case S_PSCW: {
        /* everybody exposes to everybody */
        MPI_Win_post(world, 0, win);
        MPI_Win_start(world, 0, win);
        break;
    }
    case S_LOCK_EXCL: MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win); break;
    case S_LOCK_SHARED: MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win); break;
    case S_LOCK_ALL: MPI_Win_lock_all(0, win); break;
    }
}

static void epoch_close(int sync, MPI_Win win, int target)
{
    switch (sync) {
    case S_FENCE: MPI_Win_fence(0, win); break;
    case S_PSCW:
        MPI_Win_complete(win);
        MPI_Win_wait(win);
        break;
    case S_LOCK_EXCL:
    case S_LOCK_SHARED: MPI_Win_unlock(target, win); break;
    case S_LOCK_ALL: MPI_Win_unlock_all(win); break;
    }
    if (sync != S_FENCE && sync != S_PSCW)
        MPI_Barrier(MPI_COMM_WORLD); /* passive: the target reads after everyone is done */
}

/* Reads this rank's window memory after an epoch (passive targets sync their view). */
static void local_view(int sync, MPI_Win win)
{
    if (sync != S_FENCE && sync != S_PSCW) {
        MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
        MPI_Win_sync(win);
        MPI_Win_unlock(rank, win);
    }
}

static void run_case(int flavor, int sync, MPI_Group world)
{
    win_case_t wc;
    if (!make_win(flavor, &wc))
        return;
    MPI_Win win = wc.win;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;

    /* 1. put N ints to the right neighbour */
    int src[N], got[N];
    for (int i = 0; i < N; i++)
        src[i] = rank * 1000 + i * 7 + flavor * 100000 + sync;
    epoch_open(sync, win, right, world);
    CHECK_RC(MPI_Put(src, N, MPI_INT, right, disp_of(&wc, right, 0), N, MPI_INT, win), MPI_SUCCESS);
    epoch_close(sync, win, right);
    local_view(sync, win);
    for (int i = 0; i < N; i++)
        CHECK(wc.buf[i] == left * 1000 + i * 7 + flavor * 100000 + sync);

    /* 2. get them back from the left neighbour (reads what the left's left put) */
    memset(got, 0, sizeof got);
    epoch_open(sync, win, left, world);
    CHECK_RC(MPI_Get(got, N, MPI_INT, left, disp_of(&wc, left, 0), N, MPI_INT, win), MPI_SUCCESS);
    epoch_close(sync, win, left);
    int ll = (left + size - 1) % size;
    for (int i = 0; i < N; i++)
        CHECK(got[i] == ll * 1000 + i * 7 + flavor * 100000 + sync);

    /* 3. every rank accumulates into every rank's element 3 (sum) and element 5 (max) */
    epoch_open(sync, win, 0, world);
    if (sync == S_FENCE || sync == S_PSCW || sync == S_LOCK_ALL) {
        for (int t = 0; t < size; t++) {
            int one = rank + 1, mx = rank * 3;
            CHECK_RC(
                MPI_Accumulate(&one, 1, MPI_INT, t, disp_of(&wc, t, 3), 1, MPI_INT, MPI_SUM, win),
                MPI_SUCCESS);
            CHECK_RC(
                MPI_Accumulate(&mx, 1, MPI_INT, t, disp_of(&wc, t, 5), 1, MPI_INT, MPI_MAX, win),
                MPI_SUCCESS);
        }
        epoch_close(sync, win, 0);
    } else {
        epoch_close(sync, win, 0);
        for (int t = 0; t < size; t++) {
            int one = rank + 1, mx = rank * 3;
            epoch_open(sync, win, t, world);
            CHECK_RC(
                MPI_Accumulate(&one, 1, MPI_INT, t, disp_of(&wc, t, 3), 1, MPI_INT, MPI_SUM, win),
                MPI_SUCCESS);
            CHECK_RC(
                MPI_Accumulate(&mx, 1, MPI_INT, t, disp_of(&wc, t, 5), 1, MPI_INT, MPI_MAX, win),
                MPI_SUCCESS);
            MPI_Win_unlock(t, win);
        }
        MPI_Barrier(MPI_COMM_WORLD);
    }
    local_view(sync, win);
    int base3 = left * 1000 + 3 * 7 + flavor * 100000 + sync;
    int base5 = left * 1000 + 5 * 7 + flavor * 100000 + sync;
    CHECK(wc.buf[3] == base3 + size * (size + 1) / 2);
    CHECK(wc.buf[5] == (base5 > (size - 1) * 3 ? base5 : (size - 1) * 3));

    /* 4. fetch_and_op and compare_and_swap on element 0 of rank 0: each rank adds
     *    rank + 1 and gets distinct old values; then one CAS succeeds */
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win);
        wc.buf[0] = 0;
        wc.buf[1] = -1;
        MPI_Win_unlock(0, win);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    int add = rank + 1, old = -5;
    epoch_open(sync, win, 0, world);
    CHECK_RC(MPI_Fetch_and_op(&add, &old, MPI_INT, 0, disp_of(&wc, 0, 0), MPI_SUM, win),
             MPI_SUCCESS);
    epoch_close(sync, win, 0);
    int *olds = malloc(sizeof(int) * (size_t)size);
    MPI_Allgather(&old, 1, MPI_INT, olds, 1, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < size; i++)
        for (int j = i + 1; j < size; j++)
            CHECK(olds[i] != olds[j]);
    for (int i = 0; i < size; i++)
        CHECK(olds[i] >= 0 && olds[i] <= size * (size + 1) / 2 - 1);
    free(olds);
    int want = -1, mine = rank, prev = -9;
    epoch_open(sync, win, 0, world);
    CHECK_RC(MPI_Compare_and_swap(&mine, &want, &prev, MPI_INT, 0, disp_of(&wc, 0, 1), win),
             MPI_SUCCESS);
    epoch_close(sync, win, 0);
    int winners = prev == -1, total = 0;
    MPI_Allreduce(&winners, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    CHECK(total == 1);
    if (rank == 0) {
        local_view(S_LOCK_ALL, win);
        CHECK(wc.buf[0] == size * (size + 1) / 2);
        CHECK(wc.buf[1] >= 0 && wc.buf[1] < size);
    }

    /* 5. get_accumulate (replace) and the request forms on the right neighbour */
    MPI_Barrier(MPI_COMM_WORLD);
    int v2[2] = {rank + 11, rank + 12}, r2[2] = {0, 0}, r3[2] = {0, 0};
    MPI_Request rq[4];
    epoch_open(sync, win, right, world);
    CHECK_RC(MPI_Get_accumulate(v2, 2, MPI_INT, r2, 2, MPI_INT, right, disp_of(&wc, right, 10), 2,
                                MPI_INT, MPI_REPLACE, win),
             MPI_SUCCESS);
    CHECK_RC(MPI_Rput(v2, 2, MPI_INT, right, disp_of(&wc, right, 12), 2, MPI_INT, win, &rq[0]),
             MPI_SUCCESS);
    CHECK_RC(MPI_Raccumulate(v2, 2, MPI_INT, right, disp_of(&wc, right, 14), 2, MPI_INT, MPI_SUM,
                             win, &rq[1]),
             MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, rq, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_Rget(r3, 2, MPI_INT, right, disp_of(&wc, right, 12), 2, MPI_INT, win, &rq[2]),
             MPI_SUCCESS);
    int r4 = 0;
    CHECK_RC(MPI_Rget_accumulate(NULL, 0, MPI_INT, &r4, 1, MPI_INT, right, disp_of(&wc, right, 14),
                                 1, MPI_INT, MPI_NO_OP, win, &rq[3]),
             MPI_SUCCESS);
    CHECK_RC(MPI_Waitall(2, rq + 2, MPI_STATUSES_IGNORE), MPI_SUCCESS);
    CHECK(r3[0] == rank + 11 && r3[1] == rank + 12);
    epoch_close(sync, win, right);
    CHECK(r2[0] == rank * 1000 + 10 * 7 + flavor * 100000 + sync);
    CHECK(r4 == rank * 1000 + 14 * 7 + flavor * 100000 + sync + rank + 11);
    local_view(sync, win);
    CHECK(wc.buf[10] == left + 11 && wc.buf[11] == left + 12);
    CHECK(wc.buf[15] == left * 1000 + 15 * 7 + flavor * 100000 + sync + left + 12);

    MPI_Barrier(MPI_COMM_WORLD);
    free_win(&wc);
}

/* A 76-byte window with disp_unit 4: fetch_and_op on every int position from every rank,
 * and double accumulates at byte offsets 4 and 12 (not 8-byte aligned). */
static void odd_window(void)
{
    MPI_Win win;
    int *base;
    CHECK_RC(MPI_Win_allocate(76, 4, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_SUCCESS);
    MPI_Aint *sz;
    int *du, flag;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_SIZE, &sz, &flag), MPI_SUCCESS);
    CHECK(flag && *sz == 76);
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_DISP_UNIT, &du, &flag), MPI_SUCCESS);
    CHECK(flag && *du == 4);
    void *b;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_BASE, &b, &flag), MPI_SUCCESS);
    CHECK(flag && b == base);
    memset(base, 0, 76);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int t = size - 1;
    for (int i = 0; i < 19; i++) {
        int add = i + 1, old;
        CHECK_RC(MPI_Fetch_and_op(&add, &old, MPI_INT, t, i, MPI_SUM, win), MPI_SUCCESS);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        for (int i = 0; i < 19; i++)
            CHECK(base[i] == (i + 1) * size);
        memset(base, 0, 76);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    double d = 0.5 * (rank + 1);
    MPI_Win_lock_all(0, win);
    CHECK_RC(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 1, 1, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    CHECK_RC(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 3, 1, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    MPI_Win_flush(t, win);
    /* the last double of the window ends at byte 76 exactly */
    CHECK_RC(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 17, 1, MPI_DOUBLE, MPI_SUM, win), MPI_SUCCESS);
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == t) {
        double x, y, z;
        memcpy(&x, (char *)base + 4, 8);
        memcpy(&y, (char *)base + 12, 8);
        memcpy(&z, (char *)base + 68, 8);
        double want = 0.5 * size * (size + 1) / 2;
        CHECK(x == want && y == want && z == want);
    }
    /* one past the end: MPI_ERR_RMA_RANGE, nothing written */
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    MPI_Win_lock(MPI_LOCK_SHARED, t, 0, win);
    CHECK(cls(MPI_Accumulate(&d, 1, MPI_DOUBLE, t, 18, 1, MPI_DOUBLE, MPI_SUM, win)) ==
          MPI_ERR_RMA_RANGE);
    CHECK(cls(MPI_Put(&d, 1, MPI_INT, t, 19, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
    CHECK(cls(MPI_Get(&d, 1, MPI_INT, t, -1, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
    MPI_Win_unlock(t, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

/* Concurrent accumulates from every rank on the same elements: exact results. */
static void concurrent(void)
{
    enum { ITER = 300, M = 8 };
    MPI_Win win;
    char *base;
    const MPI_Aint bytes = 1024;
    CHECK_RC(MPI_Win_allocate(bytes, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_SUCCESS);
    memset(base, 0, (size_t)bytes);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock_all(0, win);
    int64_t one64[M];
    double oned[M];
    short ones[M];
    long double onel[M];
    for (int i = 0; i < M; i++) {
        one64[i] = 1;
        oned[i] = 1.0;
        ones[i] = 1;
        onel[i] = 1.0L;
    }
    for (int it = 0; it < ITER; it++) {
        for (int t = 0; t < size; t++) {
            CHECK_RC(MPI_Accumulate(one64, M, MPI_INT64_T, t, 0, M, MPI_INT64_T, MPI_SUM, win),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Accumulate(oned, M, MPI_DOUBLE, t, 128, M, MPI_DOUBLE, MPI_SUM, win),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Accumulate(ones, M, MPI_SHORT, t, 256, M, MPI_SHORT, MPI_SUM, win),
                     MPI_SUCCESS);
            CHECK_RC(
                MPI_Accumulate(onel, 2, MPI_LONG_DOUBLE, t, 512, 2, MPI_LONG_DOUBLE, MPI_SUM, win),
                MPI_SUCCESS);
        }
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_lock(MPI_LOCK_SHARED, rank, 0, win);
    for (int i = 0; i < M; i++) {
        int64_t a;
        double b;
        short c;
        memcpy(&a, base + 8 * i, 8);
        memcpy(&b, base + 128 + 8 * i, 8);
        memcpy(&c, base + 256 + 2 * i, 2);
        CHECK(a == (int64_t)ITER * size);
        CHECK(b == (double)ITER * size);
        CHECK(c == (short)(ITER * size));
    }
    for (int i = 0; i < 2; i++) {
        long double l;
        memcpy(&l, base + 512 + sizeof(long double) * (size_t)i, sizeof l);
        CHECK(l == (long double)ITER * size);
    }
    MPI_Win_unlock(rank, win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

/* Derived types on both sides: a vector origin into an indexed target, and back. */
static void derived(void)
{
    enum { M = 64 };
    MPI_Win win;
    int *base;
    CHECK_RC(
        MPI_Win_allocate(M * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
        MPI_SUCCESS);
    for (int i = 0; i < M; i++)
        base[i] = -1;
    /* the same with user memory (vnic path when not in the shared heap) */
    int *ubuf = malloc(M * sizeof(int));
    for (int i = 0; i < M; i++)
        ubuf[i] = -1;
    MPI_Win uwin;
    CHECK_RC(
        MPI_Win_create(ubuf, M * sizeof(int), sizeof(int), MPI_INFO_NULL, MPI_COMM_WORLD, &uwin),
        MPI_SUCCESS);
    MPI_Datatype vec, idx;
    MPI_Type_vector(5, 2, 3, MPI_INT, &vec); /* 10 ints out of 14 */
    MPI_Type_commit(&vec);
    int bl[3] = {3, 4, 3}, dp[3] = {1, 20, 40};
    MPI_Type_indexed(3, bl, dp, MPI_INT, &idx);
    MPI_Type_commit(&idx);
    int src[14], back[14];
    for (int i = 0; i < 14; i++)
        src[i] = 100 * rank + i;
    int right = (rank + 1) % size, left = (rank + size - 1) % size;
    MPI_Win ws[2] = {win, uwin};
    int *bs[2] = {base, ubuf};
    for (int k = 0; k < 2; k++) {
        MPI_Win_fence(0, ws[k]);
        CHECK_RC(MPI_Put(src, 1, vec, right, 2, 1, idx, ws[k]), MPI_SUCCESS);
        MPI_Win_fence(0, ws[k]);
        /* left's src at vector positions 0,1,3,4,6,7,9,10,12,13 -> idx positions */
        int vpos[10] = {0, 1, 3, 4, 6, 7, 9, 10, 12, 13};
        int tpos[10] = {3, 4, 5, 22, 23, 24, 25, 42, 43, 44};
        for (int i = 0; i < 10; i++)
            CHECK(bs[k][tpos[i]] == 100 * left + vpos[i]);
        memset(back, 0, sizeof back);
        CHECK_RC(MPI_Get(back, 1, vec, right, 2, 1, idx, ws[k]), MPI_SUCCESS);
        MPI_Win_fence(0, ws[k]);
        for (int i = 0; i < 10; i++)
            CHECK(back[vpos[i]] == 100 * rank + vpos[i]);
        /* accumulate with the same pair of types: every element + 1000 */
        int add[14];
        for (int i = 0; i < 14; i++)
            add[i] = 1000;
        CHECK_RC(MPI_Accumulate(add, 1, vec, right, 2, 1, idx, MPI_SUM, ws[k]), MPI_SUCCESS);
        MPI_Win_fence(0, ws[k]);
        for (int i = 0; i < 10; i++)
            CHECK(bs[k][tpos[i]] == 100 * left + vpos[i] + 1000);
        MPI_Win_fence(MPI_MODE_NOSUCCEED, ws[k]);
    }
    MPI_Type_free(&vec);
    MPI_Type_free(&idx);
    CHECK_RC(MPI_Win_free(&uwin), MPI_SUCCESS);
    free(ubuf);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

static int errh_calls, errh_last;
static void win_errh(MPI_Win *w, int *code, ...)
{
    (void)w;
    errh_calls++;
    errh_last = *code;
}

static int user_op_fn_called;
static void user_op_fn(void *in, void *inout, int *len, MPI_Datatype *t)
{
    (void)in;
    (void)inout;
    (void)len;
    (void)t;
    user_op_fn_called++;
}

static int delete_calls;
static int del_fn(MPI_Win w, int kv, void *val, void *extra)
{
    (void)w;
    (void)kv;
    (void)val;
    (void)extra;
    delete_calls++;
    return MPI_SUCCESS;
}

/* Properties and every error class. */
static void properties_and_errors(void)
{
    MPI_Win win;
    int *base;
    MPI_Info info;
    MPI_Info_create(&info);
    MPI_Info_set(info, "no_locks", "false");
    MPI_Info_set(info, "some_unknown_key", "whatever");
    CHECK_RC(MPI_Win_allocate(4 * sizeof(int), sizeof(int), info, MPI_COMM_WORLD, &base, &win),
             MPI_SUCCESS);
    MPI_Info_free(&info);
    /* name */
    char name[MPI_MAX_OBJECT_NAME];
    int len;
    CHECK_RC(MPI_Win_get_name(win, name, &len), MPI_SUCCESS);
    CHECK(len == 0);
    CHECK_RC(MPI_Win_set_name(win, "my window"), MPI_SUCCESS);
    CHECK_RC(MPI_Win_get_name(win, name, &len), MPI_SUCCESS);
    CHECK(len == 9 && !strcmp(name, "my window"));
    /* group */
    MPI_Group g, wg;
    int res;
    CHECK_RC(MPI_Win_get_group(win, &g), MPI_SUCCESS);
    MPI_Comm_group(MPI_COMM_WORLD, &wg);
    MPI_Group_compare(g, wg, &res);
    CHECK(res == MPI_IDENT);
    MPI_Group_free(&g);
    MPI_Group_free(&wg);
    /* info */
    MPI_Info used;
    char val[64];
    int flag;
    CHECK_RC(MPI_Win_get_info(win, &used), MPI_SUCCESS);
    MPI_Info_get(used, "accumulate_ordering", 63, val, &flag);
    CHECK(flag && !strcmp(val, "rar,raw,war,waw"));
    MPI_Info_get(used, "no_locks", 63, val, &flag);
    CHECK(flag && !strcmp(val, "false"));
    MPI_Info_free(&used);
    /* model */
    int *model;
    CHECK_RC(MPI_Win_get_attr(win, MPI_WIN_MODEL, &model, &flag), MPI_SUCCESS);
    CHECK(flag && *model == MPI_WIN_UNIFIED);
    /* user keyval */
    int kv;
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, del_fn, &kv, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_attr(win, kv, (void *)(intptr_t)42), MPI_SUCCESS);
    void *got;
    CHECK_RC(MPI_Win_get_attr(win, kv, &got, &flag), MPI_SUCCESS);
    CHECK(flag && (intptr_t)got == 42);
    /* error handlers */
    MPI_Errhandler eh, cur;
    CHECK_RC(MPI_Win_create_errhandler(win_errh, &eh), MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(win, eh), MPI_SUCCESS);
    CHECK_RC(MPI_Win_get_errhandler(win, &cur), MPI_SUCCESS);
    CHECK(cur == eh);
    MPI_Errhandler_free(&cur);
    CHECK_RC(MPI_Win_call_errhandler(win, MPI_ERR_OTHER), MPI_SUCCESS);
    CHECK(errh_calls == 1 && errh_last == MPI_ERR_OTHER);
    int x = 1, y = 0;
    /* outside an epoch: MPI_ERR_RMA_SYNC, through the window's handler */
    MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, win);
    CHECK(errh_calls == 2 && cls(errh_last) == MPI_ERR_RMA_SYNC);
    MPI_Errhandler_free(&eh);
    CHECK_RC(MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK(cls(MPI_Get(&y, 1, MPI_INT, 0, 0, 1, MPI_INT, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_unlock(0, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_complete(win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_wait(win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_flush(0, win)) == MPI_ERR_RMA_SYNC);
    /* nested lock epochs: a synchronization error (MPICH's errors/rma/win_sync_lock_pt) */
    CHECK_RC(MPI_Win_lock(MPI_LOCK_SHARED, 0, 0, win), MPI_SUCCESS);
    CHECK(cls(MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 0, 0, win)) == MPI_ERR_RMA_SYNC);
    CHECK(cls(MPI_Win_lock_all(0, win)) == MPI_ERR_RMA_SYNC);
    /* range, op, type, rank */
    CHECK(cls(MPI_Put(&x, 1, MPI_INT, 0, 4, 1, MPI_INT, win)) == MPI_ERR_RMA_RANGE);
    CHECK(cls(MPI_Put(&x, 2, MPI_SHORT, 0, 3, 1, MPI_INT, win)) == MPI_SUCCESS);
    CHECK(cls(MPI_Put(&x, 1, MPI_INT, size, 0, 1, MPI_INT, win)) == MPI_ERR_RANK);
    MPI_Op uop;
    MPI_Op_create(user_op_fn, 1, &uop);
    CHECK(cls(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, uop, win)) == MPI_ERR_OP);
    CHECK(user_op_fn_called == 0);
    MPI_Op_free(&uop);
    double dd = 1;
    CHECK(cls(MPI_Accumulate(&dd, 1, MPI_DOUBLE, 0, 0, 1, MPI_DOUBLE, MPI_BAND, win)) ==
          MPI_ERR_OP);
    CHECK(cls(MPI_Accumulate(&x, 1, MPI_INT, 0, 0, 1, MPI_FLOAT, MPI_SUM, win)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Compare_and_swap(&dd, &dd, &dd, MPI_DOUBLE, 0, 0, win)) == MPI_ERR_TYPE);
    CHECK(cls(MPI_Put(&x, 1, MPI_DATATYPE_NULL, 0, 0, 1, MPI_INT, win)) == MPI_ERR_TYPE);
    struct {
        int i;
        double d;
    } mixed_buf;
    MPI_Datatype mixed, types[2] = {MPI_INT, MPI_DOUBLE};
    int bls[2] = {1, 1};
    MPI_Aint disps[2] = {0, 8};
    MPI_Type_create_struct(2, bls, disps, types, &mixed);
    MPI_Type_commit(&mixed);
    CHECK(cls(MPI_Accumulate(&mixed_buf, 1, mixed, 0, 0, 1, mixed, MPI_REPLACE, win)) ==
          MPI_ERR_TYPE);
    MPI_Type_free(&mixed);
    CHECK(cls(MPI_Win_shared_query(win, 0, &(MPI_Aint){0}, &x, &got)) == MPI_ERR_RMA_FLAVOR);
    CHECK_RC(MPI_Win_unlock(0, win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    CHECK(delete_calls == 1);
    CHECK_RC(MPI_Win_free_keyval(&kv), MPI_SUCCESS);
    /* a freed window is an invalid window */
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    MPI_Win stale = win;
    CHECK(cls(MPI_Put(&x, 1, MPI_INT, 0, 0, 1, MPI_INT, stale)) == MPI_ERR_WIN);
    CHECK(cls(MPI_Win_fence(0, MPI_WIN_NULL)) == MPI_ERR_WIN);
    CHECK(cls(MPI_Win_free(&(MPI_Win){(MPI_Win)0x12345})) == MPI_ERR_WIN);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

/* Shared windows: load/store ping through the mapping, query of every rank. */
static void shared_loadstore(void)
{
    MPI_Win win;
    int *mine;
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    int rc = MPI_Win_allocate_shared((rank + 1) * (MPI_Aint)sizeof(int), sizeof(int), MPI_INFO_NULL,
                                     MPI_COMM_WORLD, &mine, &win);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    if (rc != MPI_SUCCESS) {
        CHECK(cls(rc) == MPI_ERR_RMA_SHARED);
        return;
    }
    for (int i = 0; i <= rank; i++)
        mine[i] = rank * 10 + i;
    MPI_Win_lock_all(0, win);
    MPI_Win_sync(win);
    MPI_Barrier(MPI_COMM_WORLD);
    MPI_Win_sync(win);
    int *prev_end = NULL;
    for (int r = 0; r < size; r++) {
        MPI_Aint sz;
        int du;
        int *p;
        CHECK_RC(MPI_Win_shared_query(win, r, &sz, &du, &p), MPI_SUCCESS);
        CHECK(sz == (r + 1) * (MPI_Aint)sizeof(int) && du == sizeof(int));
        if (prev_end)
            CHECK(p == prev_end); /* contiguous by default */
        prev_end = p + r + 1;
        for (int i = 0; i <= r; i++)
            CHECK(p[i] == r * 10 + i);
    }
    MPI_Win_unlock_all(win);
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* Rank 0 runs passive epochs on rank 1 while rank 1 computes for a second, out of MPI. */
static void compute_target(void)
{
    if (size < 2)
        return;
    MPI_Win win;
    int64_t *base;
    CHECK_RC(MPI_Win_allocate(64, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_SUCCESS);
    memset(base, 0, 64);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1) {
        double t0 = now();
        double sink = 0;
        while (now() - t0 < 1.0)
            sink += 1.0;
        CHECK(sink > 0);
    } else if (rank == 0) {
        double t0 = now();
        int64_t v = 77, old, one = 1;
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
        MPI_Put(&v, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
        MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 1, 1, MPI_SUM, win);
        MPI_Accumulate(&one, 1, MPI_INT64_T, 1, 2, 1, MPI_INT64_T, MPI_SUM, win);
        MPI_Win_unlock(1, win);
        MPI_Win_lock(MPI_LOCK_SHARED, 1, 0, win);
        int64_t back = 0;
        MPI_Get(&back, 1, MPI_INT64_T, 1, 0, 1, MPI_INT64_T, win);
        MPI_Win_unlock(1, win);
        double dt = now() - t0;
        CHECK(back == 77 && old == 0);
        if (dt > 0.7)
            fprintf(stderr, "passive epoch took %.3f s while the target computed\n", dt);
        CHECK(dt < 0.7);
    }
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 1)
        CHECK(base[0] == 77 && base[1] == 1 && base[2] == 1);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Group world;
    MPI_Comm_group(MPI_COMM_WORLD, &world);
    for (int f = 0; f < F_N; f++)
        for (int s = 0; s < S_N; s++)
            run_case(f, s, world);
    MPI_Group_free(&world);
    odd_window();
    concurrent();
    derived();
    shared_loadstore();
    properties_and_errors();
    if (argc > 1 && !strcmp(argv[1], "compute"))
        compute_target();
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_win: ok (%d flavours x %d synchronizations)\n", F_N, S_N);
    return 0;
}
