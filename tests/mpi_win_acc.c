/* mpi_win_acc.c — accumulates (src/mpi/win_atomic.c):
 *   - blocks against atomics: every rank accumulates large contiguous blocks (int64 and
 *     double sums: the kernel path on mapped windows) into every rank's window while it
 *     also runs MPI_Fetch_and_op, single-element MPI_Accumulate and MPI_Compare_and_swap
 *     increments on elements inside those blocks; the final values must be exact (no
 *     update lost between the block kernel and the element atomics); and all ranks at
 *     once on one window, half with blocks, half with MPI_Fetch_and_op in a tight loop;
 *   - stripe overlaps: blocks of doubles taking overlapping and wrapping sets of stripe
 *     locks from every rank at once, on allocated and created windows, sums exact;
 *   - every predefined op on every predefined type it is defined for (and the pairs for
 *     MAXLOC / MINLOC), contiguous and through a derived (vector) target type, with
 *     MPI_Accumulate, MPI_Get_accumulate and MPI_Raccumulate / MPI_Rget_accumulate: the
 *     target's contents and the fetched values are compared with MPI_Reduce_local applied
 *     to the same data; pairs the op is not defined on must fail with MPI_ERR_OP.
 * Run on shm, over udp and over udp with injected loss, duplication and reordering. */
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_util.h"

static int rank, size;

/* ---------------------------------------------------------------- blocks vs atomics */

#define BLOCK_N 3000 /* elements per block (24 KB: 94 granules, every stripe) */
#define ROUNDS 12

static void blocks_vs_atomics(void)
{
    MPI_Win win;
    int64_t *base;
    MPI_Aint bytes = 2 * BLOCK_N * 8;
    CHECK_RC(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win), MPI_SUCCESS);
    memset(base, 0, (size_t)bytes);
    double *dbase = (double *)(void *)(base + BLOCK_N);
    int64_t *ones = malloc(sizeof *ones * BLOCK_N);
    double *dones = malloc(sizeof *dones * BLOCK_N);
    int64_t *fetched = malloc(sizeof *fetched * BLOCK_N);
    for (int i = 0; i < BLOCK_N; i++) {
        ones[i] = 1;
        dones[i] = 1.0;
    }
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    int64_t one = 1, old = 0;
    for (int r = 0; r < ROUNDS; r++) {
        for (int k = 0; k < size; k++) {
            int t = (rank + k) % size;
            int e = (r * 37 + k * 11) % BLOCK_N; /* the element the atomics hit */
            CHECK_RC(MPI_Accumulate(ones, BLOCK_N, MPI_INT64_T, t, 0, BLOCK_N, MPI_INT64_T, MPI_SUM,
                                    win),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, t, e, MPI_SUM, win), MPI_SUCCESS);
            CHECK_RC(MPI_Accumulate(dones, BLOCK_N, MPI_DOUBLE, t, BLOCK_N, BLOCK_N, MPI_DOUBLE,
                                    MPI_SUM, win),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Accumulate(&one, 1, MPI_INT64_T, t, (e + 1) % BLOCK_N, 1, MPI_INT64_T,
                                    MPI_SUM, win),
                     MPI_SUCCESS);
            /* a compare-and-swap increment of element e + 2 */
            int64_t cur = 0, want, got;
            CHECK_RC(
                MPI_Fetch_and_op(NULL, &cur, MPI_INT64_T, t, (e + 2) % BLOCK_N, MPI_NO_OP, win),
                MPI_SUCCESS);
            CHECK_RC(MPI_Win_flush(t, win), MPI_SUCCESS);
            for (;;) {
                want = cur + 1;
                CHECK_RC(
                    MPI_Compare_and_swap(&want, &cur, &got, MPI_INT64_T, t, (e + 2) % BLOCK_N, win),
                    MPI_SUCCESS);
                CHECK_RC(MPI_Win_flush(t, win), MPI_SUCCESS);
                if (got == cur)
                    break;
                cur = got;
            }
            /* a fetching block: every value at least what this rank added so far */
            CHECK_RC(MPI_Get_accumulate(ones, BLOCK_N, MPI_INT64_T, fetched, BLOCK_N, MPI_INT64_T,
                                        t, 0, BLOCK_N, MPI_INT64_T, MPI_SUM, win),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Win_flush(t, win), MPI_SUCCESS);
            for (int i = 0; i < BLOCK_N; i++)
                CHECK(fetched[i] >= 2 * r + 1);
        }
    }
    CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    /* Expected: 2 per round and origin from the blocks, plus the atomics' hits. */
    int64_t *expect = calloc(BLOCK_N, sizeof *expect);
    for (int o = 0; o < size; o++)
        for (int r = 0; r < ROUNDS; r++)
            for (int k = 0; k < size; k++) {
                if ((o + k) % size != rank)
                    continue;
                int e = (r * 37 + k * 11) % BLOCK_N;
                expect[e]++;
                expect[(e + 1) % BLOCK_N]++;
                expect[(e + 2) % BLOCK_N]++;
            }
    for (int i = 0; i < BLOCK_N; i++) {
        if (base[i] != 2 * ROUNDS * size + expect[i])
            fprintf(stderr, "rank %d: element %d is %lld, expected %lld\n", rank, i,
                    (long long)base[i], (long long)(2 * ROUNDS * size + expect[i]));
        CHECK(base[i] == 2 * ROUNDS * size + expect[i]);
        CHECK(dbase[i] == (double)(ROUNDS * size));
    }
    free(expect);
    free(ones);
    free(dones);
    free(fetched);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

/* Everyone on rank 0's window at once: even ranks accumulate whole blocks, odd ranks run
 * MPI_Fetch_and_op on elements inside them as fast as they can (the race a block kernel
 * on plain memory would lose updates in). */
#define HAMMER_BLOCKS 300
#define HAMMER_FOPS 20000

static void hammer(void)
{
    MPI_Win win;
    int64_t *base;
    CHECK_RC(MPI_Win_allocate(BLOCK_N * 8, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
             MPI_SUCCESS);
    memset(base, 0, BLOCK_N * 8);
    int64_t *ones = malloc(sizeof *ones * BLOCK_N);
    for (int i = 0; i < BLOCK_N; i++)
        ones[i] = 1;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    int64_t one = 1, old;
    if (rank % 2 == 0)
        for (int b = 0; b < HAMMER_BLOCKS; b++)
            CHECK_RC(MPI_Accumulate(ones, BLOCK_N, MPI_INT64_T, 0, 0, BLOCK_N, MPI_INT64_T, MPI_SUM,
                                    win),
                     MPI_SUCCESS);
    else
        for (int f = 0; f < HAMMER_FOPS; f++)
            CHECK_RC(MPI_Fetch_and_op(&one, &old, MPI_INT64_T, 0, (f * 97) % BLOCK_N, MPI_SUM, win),
                     MPI_SUCCESS);
    CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    if (rank == 0) {
        int even = (size + 1) / 2, odd = size / 2;
        int64_t *expect = calloc(BLOCK_N, sizeof *expect);
        for (int f = 0; f < HAMMER_FOPS; f++)
            expect[(f * 97) % BLOCK_N] += odd;
        for (int i = 0; i < BLOCK_N; i++) {
            if (base[i] != (int64_t)even * HAMMER_BLOCKS + expect[i])
                fprintf(stderr, "hammer: element %d is %lld, expected %lld\n", i,
                        (long long)base[i], (long long)(even * HAMMER_BLOCKS + expect[i]));
            CHECK(base[i] == (int64_t)even * HAMMER_BLOCKS + expect[i]);
        }
        free(expect);
    }
    free(ones);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

/* ---------------------------------------------------------------- stripe overlaps */

/* Blocks of doubles that take different sets of stripes (a 256-byte granule each, 64
 * stripes per window, bits of one lock word): inside one granule, across two, most of
 * the stripes, every stripe, and runs that wrap from stripe 63 to stripe 0, so that
 * ranks hold overlapping prefixes of each other's masks at once. Every rank adds ones
 * with patterns shifted by its rank into every rank's window, on an MPI_Win_allocate and
 * an MPI_Win_create window, each double-checked against a replay of all the patterns. */
#define OVL_N 5000 /* doubles per window (40000 bytes: the granules wrap the stripes) */
#define OVL_ROUNDS 6
static const int ovl_pat[][2] = {
    /* {first element, elements}: 32 doubles per granule */
    {0, 8},          {40, 3},    {31, 2},      {63, 33},  {96, 31 * 32 + 5},
    {1920, 10 * 32}, {0, OVL_N}, {2048, 2100}, {1000, 7}, {4990, 10},
};
#define OVL_NPAT ((int)(sizeof ovl_pat / sizeof ovl_pat[0]))

static int ovl_pattern(int origin, int round, int k)
{
    return (origin * 3 + round * 7 + k) % OVL_NPAT;
}

static void stripe_overlaps(int create)
{
    MPI_Win win;
    double *base, *mem = NULL;
    MPI_Aint bytes = OVL_N * 8;
    if (create) {
        mem = malloc((size_t)bytes);
        base = mem;
        CHECK_RC(MPI_Win_create(base, bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &win), MPI_SUCCESS);
    } else {
        CHECK_RC(MPI_Win_allocate(bytes, 8, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
                 MPI_SUCCESS);
    }
    for (int i = 0; i < OVL_N; i++)
        base[i] = 0.0;
    double *ones = malloc(sizeof *ones * OVL_N);
    for (int i = 0; i < OVL_N; i++)
        ones[i] = 1.0;
    MPI_Barrier(MPI_COMM_WORLD);
    CHECK_RC(MPI_Win_lock_all(0, win), MPI_SUCCESS);
    for (int r = 0; r < OVL_ROUNDS; r++)
        for (int k = 0; k < size; k++) {
            int t = (rank + k) % size;
            const int *p = ovl_pat[ovl_pattern(rank, r, k)];
            CHECK_RC(
                MPI_Accumulate(ones, p[1], MPI_DOUBLE, t, p[0], p[1], MPI_DOUBLE, MPI_SUM, win),
                MPI_SUCCESS);
        }
    CHECK_RC(MPI_Win_unlock_all(win), MPI_SUCCESS);
    MPI_Barrier(MPI_COMM_WORLD);
    double *expect = calloc(OVL_N, sizeof *expect);
    for (int o = 0; o < size; o++)
        for (int r = 0; r < OVL_ROUNDS; r++)
            for (int k = 0; k < size; k++) {
                if ((o + k) % size != rank)
                    continue;
                const int *p = ovl_pat[ovl_pattern(o, r, k)];
                for (int i = 0; i < p[1]; i++)
                    expect[p[0] + i] += 1.0;
            }
    int bad = 0;
    for (int i = 0; i < OVL_N; i++)
        if (base[i] != expect[i] && bad++ < 5)
            fprintf(stderr, "stripe overlaps (%s): rank %d element %d is %g, expected %g\n",
                    create ? "create" : "allocate", rank, i, base[i], expect[i]);
    CHECK(bad == 0);
    free(expect);
    free(ones);
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
    free(mem);
}

/* ---------------------------------------------------------------- every op x type */

#define NE 37 /* elements per accumulate: odd */

enum { K_INT, K_FLOAT, K_DOUBLE, K_LDOUBLE, K_COMPLEX, K_BOOL, K_PAIR_DI, K_PAIR_II, K_PAIR_FI };

typedef struct tcase {
    MPI_Datatype t;
    int kind;
    const char *name;
} tcase_t;

static const tcase_t types[] = {
    {MPI_INT, K_INT, "int"},
    {MPI_SHORT, K_INT, "short"},
    {MPI_LONG, K_INT, "long"},
    {MPI_UNSIGNED, K_INT, "unsigned"},
    {MPI_INT8_T, K_INT, "int8"},
    {MPI_UINT16_T, K_INT, "uint16"},
    {MPI_INT64_T, K_INT, "int64"},
    {MPI_UINT64_T, K_INT, "uint64"},
    {MPI_BYTE, K_INT, "byte"},
    {MPI_FLOAT, K_FLOAT, "float"},
    {MPI_DOUBLE, K_DOUBLE, "double"},
    {MPI_LONG_DOUBLE, K_LDOUBLE, "long double"},
    {MPI_C_DOUBLE_COMPLEX, K_COMPLEX, "double complex"},
    {MPI_C_BOOL, K_BOOL, "bool"},
    {MPI_DOUBLE_INT, K_PAIR_DI, "double_int"},
    {MPI_2INT, K_PAIR_II, "2int"},
    {MPI_FLOAT_INT, K_PAIR_FI, "float_int"},
};
#define NTYPES ((int)(sizeof types / sizeof types[0]))

static const MPI_Op ops[] = {MPI_SUM,    MPI_PROD,   MPI_MAX,     MPI_MIN,  MPI_LAND,
                             MPI_LOR,    MPI_LXOR,   MPI_BAND,    MPI_BOR,  MPI_BXOR,
                             MPI_MAXLOC, MPI_MINLOC, MPI_REPLACE, MPI_NO_OP};
#define NOPS ((int)(sizeof ops / sizeof ops[0]))

static int op_index(MPI_Op op)
{
    for (int i = 0; i < NOPS; i++)
        if (ops[i] == op)
            return i;
    return -1;
}

/* Element i of a buffer of kind k: small integers (exact in every type), seeded. */
static void fill(const tcase_t *tc, void *buf, int n, int seed)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(tc->t, &lb, &ext);
    memset(buf, 0, (size_t)(ext * n));
    for (int i = 0; i < n; i++) {
        char *p = (char *)buf + i * ext;
        int64_t v = (i * 7 + seed * 13) % 11 - 3;
        switch (tc->kind) {
        case K_INT: {
            int s;
            MPI_Type_size(tc->t, &s);
            memcpy(p, &v, (size_t)s); /* little-endian: the low bytes */
            break;
        }
        case K_FLOAT: *(float *)(void *)p = (float)v; break;
        case K_DOUBLE: *(double *)(void *)p = (double)v; break;
        case K_LDOUBLE: *(long double *)(void *)p = (long double)v; break;
        case K_COMPLEX:
            ((double *)(void *)p)[0] = (double)v;
            ((double *)(void *)p)[1] = (double)(v + 1);
            break;
        case K_BOOL: *(_Bool *)(void *)p = (v & 1) != 0; break;
        case K_PAIR_DI: {
            struct {
                double v;
                int i;
            } x = {(double)v, i + seed};
            memcpy(p, &x, sizeof x);
            break;
        }
        case K_PAIR_II: {
            int x[2] = {(int)v, i + seed};
            memcpy(p, x, sizeof x);
            break;
        }
        default: {
            struct {
                float v;
                int i;
            } x = {(float)v, i + seed};
            memcpy(p, &x, sizeof x);
            break;
        }
        }
    }
}

/* Only the bytes the type describes (pairs and long double have padding). */
static int same(const tcase_t *tc, const void *a, const void *b, int n)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(tc->t, &lb, &ext);
    int s;
    MPI_Type_size(tc->t, &s);
    size_t cmp = tc->kind == K_LDOUBLE ? 10 : tc->kind == K_PAIR_DI ? 8 : (size_t)s;
    for (int i = 0; i < n; i++) {
        const char *x = (const char *)a + i * ext, *y = (const char *)b + i * ext;
        if (memcmp(x, y, cmp))
            return 0;
        if (tc->kind == K_PAIR_DI && memcmp(x + 8, y + 8, 4))
            return 0;
    }
    return 1;
}

/* One op x type in one fence epoch: rank r accumulates into rank r+1 (contiguous, at
 * element 0) and through a vector target type (every other element of the second
 * half). mode 0: MPI_Accumulate; 1: MPI_Get_accumulate; 2: the request forms. */
static void one_case(MPI_Win win, char *base, const tcase_t *tc, MPI_Op op, int mode)
{
    MPI_Aint lb, ext;
    MPI_Type_get_extent(tc->t, &lb, &ext);
    int valid = 1;
    char *in = malloc((size_t)(ext * NE)), *expect = malloc((size_t)(ext * 3 * NE));
    char *res = malloc((size_t)(ext * 2 * NE)), *prev_in = malloc((size_t)(ext * NE));
    char *oldv = malloc((size_t)(ext * 2 * NE));
    /* is the op defined on the type? MPI_Reduce_local says */
    fill(tc, in, NE, rank);
    fill(tc, expect, 3 * NE, 100);
    if (op != MPI_REPLACE && op != MPI_NO_OP) {
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
        valid = MPI_Reduce_local(in, expect, NE, tc->t, op) == MPI_SUCCESS;
        MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
    }
    fill(tc, base, 3 * NE, 100); /* the window */
    int to = (rank + 1) % size, from = (rank + size - 1) % size;
    MPI_Datatype vec;
    MPI_Type_vector(NE, 1, 2, tc->t, &vec);
    MPI_Type_commit(&vec);
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    MPI_Request rq[2];
    int rc[2];
    for (int part = 0; part < 2; part++) {
        MPI_Datatype tt = part ? vec : tc->t;
        int tcount = part ? 1 : NE;
        MPI_Aint disp = part ? NE * ext : 0; /* disp_unit 1 */
        char *r = res + part * NE * ext;
        if (mode == 0)
            rc[part] = MPI_Accumulate(in, NE, tc->t, to, disp, tcount, tt, op, win);
        else if (mode == 1)
            rc[part] =
                MPI_Get_accumulate(in, NE, tc->t, r, NE, tc->t, to, disp, tcount, tt, op, win);
        else if (part == 0)
            rc[part] = MPI_Raccumulate(in, NE, tc->t, to, disp, tcount, tt, op, win, &rq[part]);
        else
            rc[part] = MPI_Rget_accumulate(in, NE, tc->t, r, NE, tc->t, to, disp, tcount, tt, op,
                                           win, &rq[part]);
    }
    if (mode == 2)
        for (int part = 0; part < 2; part++)
            if (rc[part] == MPI_SUCCESS)
                CHECK_RC(MPI_Wait(&rq[part], MPI_STATUS_IGNORE), MPI_SUCCESS);
    CHECK_RC(MPI_Win_fence(0, win), MPI_SUCCESS);
    for (int part = 0; part < 2; part++) {
        int c = -1;
        MPI_Error_class(rc[part], &c);
        if (c != (valid ? MPI_SUCCESS : MPI_ERR_OP))
            fprintf(stderr, "rank %d: op %d on %s mode %d part %d: class %d (valid %d)\n", rank,
                    op_index(op), tc->name, mode, part, c, valid);
        CHECK(c == (valid ? MPI_SUCCESS : MPI_ERR_OP));
    }
    if (valid) {
        /* What `from` sent: its input applied to the initial contents. */
        fill(tc, prev_in, NE, from);
        fill(tc, expect, 3 * NE, 100);
        fill(tc, oldv, 2 * NE, 100);
        char *vecexp = malloc((size_t)(ext * NE)); /* the vector's elements, packed */
        for (int i = 0; i < NE; i++)
            memcpy(vecexp + i * ext, expect + (NE + 2 * i) * ext, (size_t)ext);
        if (op == MPI_REPLACE) {
            memcpy(expect, prev_in, (size_t)(ext * NE));
            memcpy(vecexp, prev_in, (size_t)(ext * NE));
        } else if (op != MPI_NO_OP) {
            CHECK_RC(MPI_Reduce_local(prev_in, expect, NE, tc->t, op), MPI_SUCCESS);
            CHECK_RC(MPI_Reduce_local(prev_in, vecexp, NE, tc->t, op), MPI_SUCCESS);
        }
        for (int i = 0; i < NE; i++)
            memcpy(expect + (NE + 2 * i) * ext, vecexp + i * ext, (size_t)ext);
        free(vecexp);
        if (!same(tc, base, expect, 3 * NE))
            fprintf(stderr, "rank %d: %s, op %d, mode %d: wrong target contents\n", rank, tc->name,
                    op_index(op), mode);
        CHECK(same(tc, base, expect, 3 * NE));
        if (mode > 0) { /* fetched: the initial contents, contiguous and the vector's */
            char *init = malloc((size_t)(ext * 3 * NE));
            fill(tc, init, 3 * NE, 100);
            for (int i = 0; i < NE; i++)
                memcpy(oldv + (NE + i) * ext, init + (NE + 2 * i) * ext, (size_t)ext);
            free(init);
            int first = mode == 2 ? NE : 0; /* mode 2: part 0 is a Raccumulate */
            int ok = same(tc, res + first * ext, oldv + first * ext, 2 * NE - first);
            if (!ok)
                fprintf(stderr, "rank %d: %s, op %d, mode %d: wrong fetched values\n", rank,
                        tc->name, op_index(op), mode);
            CHECK(ok);
        }
    }
    MPI_Type_free(&vec);
    free(in);
    free(expect);
    free(res);
    free(prev_in);
    free(oldv);
}

static void every_op_type(int modes)
{
    MPI_Win win;
    char *base;
    CHECK_RC(MPI_Win_allocate(32 * 3 * NE, 1, MPI_INFO_NULL, MPI_COMM_WORLD, &base, &win),
             MPI_SUCCESS);
    MPI_Win_set_errhandler(win, MPI_ERRORS_RETURN);
    for (int t = 0; t < NTYPES; t++)
        for (int o = 0; o < NOPS; o++)
            for (int m = 0; m < modes; m++) {
                if (ops[o] == MPI_NO_OP && m == 0)
                    continue; /* nothing to see */
                one_case(win, base, &types[t], ops[o], m);
            }
    CHECK_RC(MPI_Win_free(&win), MPI_SUCCESS);
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    blocks_vs_atomics();
    hammer();
    stripe_overlaps(0);
    stripe_overlaps(1);
    every_op_type(quick ? 2 : 3);
    MPI_Finalize();
    if (rank == 0)
        printf("mpi_win_acc: ok\n");
    return 0;
}
