/* dt_pack.c — hand-run micro-benchmark of the datatype engine (not a test).
 * Seed 004's sub-matrix: an m x n block of a matrix of doubles with rows of z + 1,
 * i.e. MPI_Type_vector(m, n, z + 1, MPI_DOUBLE), n = 1 and n = 16. Prints pack and
 * unpack GB/s (packed bytes per second) next to memcpy of the same number of bytes,
 * a naive per-element loop, and the typed copy into a second sub-matrix.
 * Usage: dt_pack [m (default 4096)] [reps (default 20)] [n (default: 1 and 16)] */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "dt/dt.h"

static double best_gbs(int64_t bytes, uint64_t ns)
{
    return (double)bytes / (double)ns;
}

static volatile double sink;

int main(int argc, char **argv)
{
    int64_t m = argc > 1 ? atoll(argv[1]) : 4096;
    int reps = argc > 2 ? atoi(argv[2]) : 20;
    int64_t zs[] = {256, 1024, 4096}, ns[] = {1, 16};
    if (argc > 3) /* one block length instead of seed 004's two */
        ns[0] = ns[1] = atoll(argv[3]);
    printf("%6s %3s %5s %10s | %8s %8s %8s %8s %8s | %s\n", "m", "n", "z", "bytes", "pack",
           "unpack", "copy", "naive", "memcpy", "GB/s (best of reps)");
    for (size_t zi = 0; zi < sizeof zs / sizeof zs[0]; zi++)
        for (size_t ni = 0; ni < (argc > 3 ? 1 : sizeof ns / sizeof ns[0]); ni++) {
            int64_t z = zs[zi], n = ns[ni], ld = z + 1;
            if (n > z)
                continue;
            size_t mat = (size_t)(m * ld) * sizeof(double);
            double *a = malloc(mat), *b = malloc(mat);
            int64_t bytes = m * n * 8;
            char *packed = malloc((size_t)bytes), *packed2 = malloc((size_t)bytes);
            if (!a || !b || !packed || !packed2) {
                fprintf(stderr, "out of memory\n");
                return 1;
            }
            for (int64_t i = 0; i < m * ld; i++)
                a[i] = (double)i;
            memset(b, 0, mat);
            memset(packed, 0, (size_t)bytes);
            memset(packed2, 1, (size_t)bytes);
            dt_t *t;
            if (dt_vector(m, n, ld, dt_basic(DT_DOUBLE), &t) || dt_commit(t))
                return 1;
            uint64_t bp = UINT64_MAX, bu = UINT64_MAX, bc = UINT64_MAX, bn = UINT64_MAX,
                     bm = UINT64_MAX;
            for (int r = 0; r < reps; r++) {
                uint64_t t0 = base_time_ns();
                dt_pack(t, 1, a, 0, bytes, packed);
                uint64_t t1 = base_time_ns();
                dt_unpack(t, 1, b, 0, bytes, packed);
                uint64_t t2 = base_time_ns();
                dt_copy(t, 1, a, t, 1, b, 0, bytes);
                uint64_t t3 = base_time_ns();
                double *o = (double *)packed2;
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++)
                        *o++ = a[i * ld + j];
                uint64_t t4 = base_time_ns();
                memcpy(packed2, packed, (size_t)bytes);
                uint64_t t5 = base_time_ns();
                bp = BASE_MIN(bp, t1 - t0);
                bu = BASE_MIN(bu, t2 - t1);
                bc = BASE_MIN(bc, t3 - t2);
                bn = BASE_MIN(bn, t4 - t3);
                bm = BASE_MIN(bm, t5 - t4);
                sink = ((double *)packed2)[r % (bytes / 8)];
            }
            if (memcmp(packed, packed2, (size_t)bytes) != 0 || b[ld + n - 1] != a[ld + n - 1]) {
                fprintf(stderr, "mismatch\n");
                return 1;
            }
            printf("%6lld %3lld %5lld %10lld | %8.2f %8.2f %8.2f %8.2f %8.2f | pack = %.2f x "
                   "memcpy, %.2f x naive\n",
                   (long long)m, (long long)n, (long long)z, (long long)bytes, best_gbs(bytes, bp),
                   best_gbs(bytes, bu), best_gbs(bytes, bc), best_gbs(bytes, bn),
                   best_gbs(bytes, bm), (double)bm / (double)bp, (double)bn / (double)bp);
            dt_free(t);
            free(a);
            free(b);
            free(packed);
            free(packed2);
        }
    return 0;
}
