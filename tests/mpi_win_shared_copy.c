/* mpi_win_shared_copy — large puts and gets on MPI_Win_allocate windows, which the target
 * copies in part while it waits in the library (vnic_copy_shared).
 *
 * Each rank in turn is the origin; the others wait in MPI_Barrier, so the target can take
 * pieces. Sizes straddle the sharing threshold and the piece size, at unaligned
 * displacements; MPI_Put, MPI_Get, MPI_Rput and MPI_Rget. Every byte of the target's
 * window is checked after each put (bytes outside the put untouched) and every byte
 * fetched by a get. Then a put to a target that computes outside MPI must complete at
 * once (the origin copies alone), and a put to self. All of it again on an
 * MPI_Win_create window over malloc'd memory (vnic puts and gets, shared when the host's
 * gets are). With argument "served", the targets of the allocated window must have
 * copied some bytes (MPI_T pvar vnic_shm_served), unless the host forbids CMA (the test
 * probes it). */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* process_vm_readv */
#endif
#include <mpi.h>
#include <stdint.h>
#include <string.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

#include "test_util.h"

#define WIN (4u << 20)

static unsigned char pat(int origin, size_t size, size_t i)
{
    return (unsigned char)(origin * 131 + size * 7 + i * 13 + (i >> 12));
}

/* The bytes this rank copied for others since the handle was started (vnic_shm_served). */
static unsigned long long served(MPI_T_pvar_session s, MPI_T_pvar_handle h)
{
    unsigned long long v = 0;
    CHECK_RC(MPI_T_pvar_read(s, h, &v), MPI_SUCCESS);
    return v;
}

/* 1 when every rank can read its neighbour's memory with CMA, as the targets' part of a
 * shared copy needs (a host may forbid it: then no target serves, rightly). */
static int cma_works(int rank, int n)
{
    long word = 42 + rank, me[2] = {(long)getpid(), (long)(uintptr_t)&word}, peer[2], got = 0;
    MPI_Sendrecv(me, 2, MPI_LONG, (rank + 1) % n, 0, peer, 2, MPI_LONG, (rank + n - 1) % n, 0,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    struct iovec l = {&got, sizeof got}, r = {(void *)(uintptr_t)peer[1], sizeof got};
    int ok = process_vm_readv((pid_t)peer[0], &l, 1, &r, 1, 0) == (ssize_t)sizeof got &&
             got == 42 + (rank + n - 1) % n,
        all = 0;
    MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_LAND, MPI_COMM_WORLD); /* (word read by then) */
    return all;
}

int main(int argc, char **argv)
{
    int provided;
    MPI_Init(&argc, &argv);
    CHECK_RC(MPI_T_init_thread(MPI_THREAD_SINGLE, &provided), MPI_SUCCESS);
    const char *cma = getenv("FMPL_SHM_CMA");
    int cma_off = cma && !strcmp(cma, "0"); /* the library shares nothing then */
    int want_served = argc > 1 && strcmp(argv[1], "served") == 0 && !cma_off;
    int rank, n;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    unsigned char *mem, *buf = malloc(WIN), *back = malloc(WIN);
    CHECK(buf && back);
    MPI_T_pvar_session ps;
    MPI_T_pvar_handle ph;
    int idx, count;
    CHECK_RC(MPI_T_pvar_get_index("vnic_shm_served", MPI_T_PVAR_CLASS_COUNTER, &idx), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_create(&ps), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_handle_alloc(ps, idx, NULL, &ph, &count), MPI_SUCCESS);
    CHECK(count == 1);
    CHECK_RC(MPI_T_pvar_start(ps, ph), MPI_SUCCESS);
    unsigned long long mine = 0;
    /* kind 0: MPI_Win_allocate (the shared heap: shared when large); 1: MPI_Win_create
     * over malloc'd memory (vnic puts and gets: shared when the host's gets are) */
    for (int kind = 0; kind < 2; kind++) {
        MPI_Win win;
        if (kind == 0) {
            CHECK_RC(MPI_Win_allocate(WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &mem, &win),
                     MPI_SUCCESS);
        } else {
            CHECK((mem = malloc(WIN)) != NULL);
            CHECK_RC(MPI_Win_create(mem, WIN, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
        }
        const size_t sizes[] = {4096,
                                200 << 10,
                                256 << 10,
                                (256 << 10) + 8,
                                (512 << 10) - 8,
                                512 << 10, /* FMPL_SHM_SHARED_HEAP_MIN's default */
                                (1 << 20) + 24,
                                (3 << 20) + 4096 + 40};
        const MPI_Aint disps[] = {0, 8, 4096 + 24};
        int nsz = (int)(sizeof sizes / sizeof sizes[0]);
        for (int form = 0; form < 2; form++) { /* 0: MPI_Put/Get, 1: MPI_Rput/Rget */
            for (int si = 0; si < nsz; si++) {
                size_t size = sizes[si];
                MPI_Aint disp = disps[si % 3];
                for (int o = 0; o < n; o++) {
                    int target = (o + 1) % n;
                    memset(mem, 0xee, WIN); /* every rank's whole window */
                    MPI_Win_sync(win);
                    if (rank == o) /* (before the barrier: the target then waits in the next) */
                        for (size_t i = 0; i < size; i++)
                            buf[i] = pat(o, size, i);
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (rank == o) {
                        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, target, 0, win);
                        if (form == 0) {
                            CHECK_RC(MPI_Put(buf, (int)size, MPI_BYTE, target, disp, (int)size,
                                             MPI_BYTE, win),
                                     MPI_SUCCESS);
                        } else {
                            MPI_Request r;
                            CHECK_RC(MPI_Rput(buf, (int)size, MPI_BYTE, target, disp, (int)size,
                                              MPI_BYTE, win, &r),
                                     MPI_SUCCESS);
                            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
                        }
                        memset(buf, 0, size); /* the put is complete: the buffer is free */
                        MPI_Win_unlock(target, win);
                    }
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (rank == target) {
                        MPI_Win_sync(win);
                        for (size_t i = 0; i < WIN; i++) {
                            int in = i >= (size_t)disp && i < (size_t)disp + size;
                            unsigned char want = in ? pat(o, size, i - (size_t)disp) : 0xee;
                            if (mem[i] != want) {
                                fprintf(stderr,
                                        "rank %d: byte %zu of the window is %u, not %u "
                                        "(put of %zu bytes at %ld from rank %d, form %d)\n",
                                        rank, i, mem[i], want, size, (long)disp, o, form);
                                CHECK(0);
                            }
                        }
                    }
                    MPI_Barrier(MPI_COMM_WORLD);
                    if (rank == o) { /* and back, from the target's window */
                        memset(back, 0x11, size + 64);
                        MPI_Win_lock(MPI_LOCK_SHARED, target, 0, win);
                        if (form == 0) {
                            CHECK_RC(MPI_Get(back, (int)size, MPI_BYTE, target, disp, (int)size,
                                             MPI_BYTE, win),
                                     MPI_SUCCESS);
                        } else {
                            MPI_Request r;
                            CHECK_RC(MPI_Rget(back, (int)size, MPI_BYTE, target, disp, (int)size,
                                              MPI_BYTE, win, &r),
                                     MPI_SUCCESS);
                            CHECK_RC(MPI_Wait(&r, MPI_STATUS_IGNORE), MPI_SUCCESS);
                        }
                        MPI_Win_unlock(target, win);
                        for (size_t i = 0; i < size + 64; i++) {
                            unsigned char want = i < size ? pat(o, size, i) : 0x11;
                            if (back[i] != want) {
                                fprintf(stderr, "rank %d: byte %zu of a get of %zu is %u, not %u\n",
                                        rank, i, size, back[i], want);
                                CHECK(0);
                            }
                        }
                    }
                    MPI_Barrier(MPI_COMM_WORLD);
                }
            }
        }
        /* A target that computes outside MPI for 0.3 s: the origin's 3 MiB put does not wait
         * for it. */
        if (n > 1) {
            if (rank == 1) {
                struct timespec d = {0, 300 * 1000 * 1000};
                nanosleep(&d, NULL);
            } else if (rank == 0) {
                for (size_t i = 0; i < (3u << 20); i++)
                    buf[i] = pat(9, 3, i);
                MPI_Win_lock(MPI_LOCK_EXCLUSIVE, 1, 0, win);
                double t = MPI_Wtime();
                CHECK_RC(MPI_Put(buf, 3 << 20, MPI_BYTE, 1, 64, 3 << 20, MPI_BYTE, win),
                         MPI_SUCCESS);
                t = MPI_Wtime() - t;
                MPI_Win_unlock(1, win);
                /* (without CMA a put to private memory needs the target: the pipeline) */
                if (t > 0.25 && (kind == 0 || !cma_off)) {
                    fprintf(stderr, "a 3 MiB put took %.3f s while its target computed\n", t);
                    CHECK(0);
                }
            }
            MPI_Barrier(MPI_COMM_WORLD);
            if (rank == 1) {
                MPI_Win_sync(win);
                for (size_t i = 0; i < (3u << 20); i++)
                    CHECK(mem[64 + i] == pat(9, 3, i));
            }
        }
        /* To self: no sharing, the same bytes. */
        for (size_t i = 0; i < (1u << 20); i++)
            buf[i] = pat(rank, 1, i);
        MPI_Win_lock(MPI_LOCK_EXCLUSIVE, rank, 0, win);
        CHECK_RC(MPI_Put(buf, 1 << 20, MPI_BYTE, rank, 8, 1 << 20, MPI_BYTE, win), MPI_SUCCESS);
        MPI_Win_unlock(rank, win);
        for (size_t i = 0; i < (1u << 20); i++)
            CHECK(mem[8 + i] == pat(rank, 1, i));

        if (kind == 0)
            mine = served(ps, ph);
        CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
        if (kind == 1)
            free(mem);
    }
    unsigned long long all = 0;
    CHECK_RC(MPI_T_pvar_handle_free(ps, &ph), MPI_SUCCESS);
    CHECK_RC(MPI_T_pvar_session_free(&ps), MPI_SUCCESS);
    MPI_Allreduce(&mine, &all, 1, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0)
        printf("bytes copied by waiting targets: %llu\n", all);
    if (want_served && n > 1 && all == 0 && cma_works(rank, n)) {
        if (rank == 0)
            fprintf(stderr, "no target took part in any large copy (vnic_shm_served is 0)\n");
        CHECK(0);
    }
    free(buf);
    free(back);
    CHECK_RC(MPI_T_finalize(), MPI_SUCCESS);
    MPI_Finalize();
    printf("%s", rank == 0 ? "mpi_win_shared_copy: ok\n" : "");
    return 0;
}
