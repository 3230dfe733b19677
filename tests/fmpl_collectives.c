/* fmpl_collectives.c — the public collectives with content checks: barrier; bcast of
 * sizes 0 .. 4 MiB from every root; reduce and allreduce for every type x op (complex
 * MAX/MIN refused) from every root, with and without a work buffer; a user operation;
 * large reductions (several segments) with the user operation and a double sum, every
 * root; every bad argument and its code. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fmpl.h"
#include "test_util.h"

#define COUNT 1000

static void user_max(void *inout, const void *in, size_t count)
{
    int64_t *a = inout;
    const int64_t *b = in;
    for (size_t i = 0; i < count; i++)
        a[i] = (a[i] > b[i] ? a[i] : b[i]);
}

/* Rank r's value at index i: small integers, exact in every type. Signs vary so that
 * AMAX/AMIN differ from MAX/MIN. */
static double val(int r, size_t i)
{
    double v = (double)((r * 7 + (int)i * 3) % 23 - 11);
    return v == 0 ? 0.5 : v; /* no zeros: distinct magnitudes matter less */
}

static double expect(int size, fmpl_op op, size_t i)
{
    double acc = val(0, i);
    for (int r = 1; r < size; r++) {
        double v = val(r, i), aa = acc < 0 ? -acc : acc, av = v < 0 ? -v : v;
        switch (op) {
        case FMPL_SUM: acc += v; break;
        case FMPL_MAX: acc = v > acc ? v : acc; break;
        case FMPL_MIN: acc = v < acc ? v : acc; break;
        case FMPL_AMAX: acc = (av > aa || (av == aa && v > acc)) ? v : acc; break;
        case FMPL_AMIN: acc = (av < aa || (av == aa && v > acc)) ? v : acc; break;
        }
    }
    return acc;
}

static void put(void *b, fmpl_type t, size_t i, double v)
{
    switch (t) {
    case FMPL_INT32: ((int32_t *)b)[i] = (int32_t)(v == 0.5 ? 1 : v); break;
    case FMPL_INT64: ((int64_t *)b)[i] = (int64_t)(v == 0.5 ? 1 : v); break;
    case FMPL_FLOAT: ((float *)b)[i] = (float)v; break;
    case FMPL_DOUBLE: ((double *)b)[i] = v; break;
    case FMPL_COMPLEX: ((float *)b)[2 * i] = (float)v, ((float *)b)[2 * i + 1] = 0; break;
    case FMPL_DOUBLE_COMPLEX: ((double *)b)[2 * i] = v, ((double *)b)[2 * i + 1] = 0; break;
    }
}

static double get(const void *b, fmpl_type t, size_t i)
{
    switch (t) {
    case FMPL_INT32: return ((const int32_t *)b)[i];
    case FMPL_INT64: return (double)((const int64_t *)b)[i];
    case FMPL_FLOAT: return ((const float *)b)[i];
    case FMPL_DOUBLE: return ((const double *)b)[i];
    case FMPL_COMPLEX: return ((const float *)b)[2 * i];
    default: return ((const double *)b)[2 * i];
    }
}

int main(int argc, char **argv)
{
    CHECK_RC(fmpl_init(&argc, &argv), FMPL_SUCCESS);
    int rank, size;
    CHECK_RC(fmpl_comm_rank(FMPL_COMM_WORLD, &rank), FMPL_SUCCESS);
    CHECK_RC(fmpl_comm_size(FMPL_COMM_WORLD, &size), FMPL_SUCCESS);
    const fmpl_comm W = FMPL_COMM_WORLD;
    int x = 0;

    /* ---- bad arguments ---- */
    CHECK_RC(fmpl_barrier(3), FMPL_ERR_COMM);
    CHECK_RC(fmpl_bcast(&x, 4, 0, FMPL_COMM_NULL), FMPL_ERR_COMM);
    CHECK_RC(fmpl_bcast(NULL, 4, 0, W), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_bcast(&x, 4, size, W), FMPL_ERR_ROOT);
    CHECK_RC(fmpl_bcast(&x, 4, -1, W), FMPL_ERR_ROOT);
    CHECK_RC(fmpl_reduce(&x, 1, 0, FMPL_SUM, 0, W, NULL), FMPL_ERR_TYPE);
    CHECK_RC(fmpl_reduce(&x, 1, 7, FMPL_SUM, 0, W, NULL), FMPL_ERR_TYPE);
    CHECK_RC(fmpl_reduce(&x, 1, FMPL_INT32, 0, 0, W, NULL), FMPL_ERR_OP);
    CHECK_RC(fmpl_reduce(&x, 1, FMPL_INT32, 6, 0, W, NULL), FMPL_ERR_OP);
    CHECK_RC(fmpl_reduce(&x, 1, FMPL_COMPLEX, FMPL_MAX, 0, W, NULL), FMPL_ERR_OP);
    CHECK_RC(fmpl_reduce(&x, 1, FMPL_INT32, FMPL_SUM, size, W, NULL), FMPL_ERR_ROOT);
    CHECK_RC(fmpl_reduce(NULL, 1, FMPL_INT32, FMPL_SUM, 0, W, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_reduce(&x, 1, FMPL_INT32, FMPL_SUM, 0, 99, NULL), FMPL_ERR_COMM);
    CHECK_RC(fmpl_reduce(&x, SIZE_MAX / 2, FMPL_INT32, FMPL_SUM, 0, W, NULL), FMPL_ERR_ARG);
    CHECK_RC(fmpl_allreduce(&x, 1, -3, FMPL_SUM, W, NULL), FMPL_ERR_TYPE);
    CHECK_RC(fmpl_allreduce(&x, 1, FMPL_DOUBLE_COMPLEX, FMPL_MIN, W, NULL), FMPL_ERR_OP);
    CHECK_RC(fmpl_allreduce(&x, 1, FMPL_INT32, 1000, W, NULL), FMPL_ERR_OP);
    CHECK_RC(fmpl_allreduce(NULL, 2, FMPL_INT32, FMPL_SUM, W, NULL), FMPL_ERR_BUFFER);
    CHECK_RC(fmpl_allreduce(&x, 1, FMPL_INT32, FMPL_SUM, -1, NULL), FMPL_ERR_COMM);

    /* ---- barrier ---- */
    for (int i = 0; i < 20; i++)
        CHECK_RC(fmpl_barrier(W), FMPL_SUCCESS);

    /* ---- bcast ---- */
    static const size_t bsz[] = {0, 1, 8, 100, 4096, 65537, 1 << 20, 4 << 20};
    unsigned char *bb = malloc(4 << 20);
    CHECK(bb);
    for (size_t k = 0; k < sizeof bsz / sizeof bsz[0]; k++) {
        for (int root = 0; root < size; root++) {
            size_t n = bsz[k];
            for (size_t i = 0; i < n; i++)
                bb[i] = rank == root ? (unsigned char)(i * 5 + root + k) : 0;
            CHECK_RC(fmpl_bcast(bb, n, root, W), FMPL_SUCCESS);
            for (size_t i = 0; i < n; i++)
                CHECK(bb[i] == (unsigned char)(i * 5 + root + k));
            if (n >= (1 << 20))
                break; /* large sizes: one root is enough */
        }
    }
    free(bb);

    /* ---- reduce / allreduce: every type x op ---- */
    unsigned char *buf = malloc(COUNT * 16), *work = malloc(COUNT * 16);
    CHECK(buf && work);
    for (fmpl_type t = FMPL_INT32; t <= FMPL_DOUBLE_COMPLEX; t++) {
        for (fmpl_op op = FMPL_SUM; op <= FMPL_AMIN; op++) {
            int cplx = t == FMPL_COMPLEX || t == FMPL_DOUBLE_COMPLEX;
            if (cplx && (op == FMPL_MAX || op == FMPL_MIN))
                continue;
            int isint = t == FMPL_INT32 || t == FMPL_INT64;
            for (int all = 0; all < 2; all++) {
                int root = (int)(t + op) % size;
                for (size_t i = 0; i < COUNT; i++)
                    put(buf, t, i, val(rank, i));
                void *wk = (t + op + all) % 2 ? work : NULL;
                if (all)
                    CHECK_RC(fmpl_allreduce(buf, COUNT, t, op, W, wk), FMPL_SUCCESS);
                else
                    CHECK_RC(fmpl_reduce(buf, COUNT, t, op, root, W, wk), FMPL_SUCCESS);
                if (all || rank == root) {
                    for (size_t i = 0; i < COUNT; i++) {
                        double e = expect(size, op, i);
                        if (isint) { /* integers used 1 for 0.5: recompute in that domain */
                            double acc = 0;
                            for (int r = 0; r < size; r++) {
                                double v = val(r, i) == 0.5 ? 1 : val(r, i);
                                double aa = acc < 0 ? -acc : acc, av = v < 0 ? -v : v;
                                if (r == 0)
                                    acc = v;
                                else if (op == FMPL_SUM)
                                    acc += v;
                                else if (op == FMPL_MAX)
                                    acc = v > acc ? v : acc;
                                else if (op == FMPL_MIN)
                                    acc = v < acc ? v : acc;
                                else if (op == FMPL_AMAX)
                                    acc = (av > aa || (av == aa && v > acc)) ? v : acc;
                                else
                                    acc = (av < aa || (av == aa && v > acc)) ? v : acc;
                            }
                            e = acc;
                        }
                        if (get(buf, t, i) != e) {
                            fprintf(stderr, "type %d op %d all %d: [%zu] = %g, expected %g\n", t,
                                    op, all, i, get(buf, t, i), e);
                            exit(1);
                        }
                    }
                } else {
                    for (size_t i = 0; i < COUNT; i++) /* non-roots: buf unchanged */
                        CHECK(get(buf, t, i) == (isint && val(rank, i) == 0.5 ? 1 : val(rank, i)));
                }
            }
        }
    }

    /* ---- a user operation ---- */
    fmpl_op uop;
    CHECK_RC(fmpl_op_create(user_max, &uop), FMPL_SUCCESS);
    int64_t u[3] = {rank, -rank, 5};
    CHECK_RC(fmpl_allreduce(u, 3, FMPL_INT64, uop, W, NULL), FMPL_SUCCESS);
    CHECK(u[0] == size - 1 && u[1] == 0 && u[2] == 5);

    /* ---- large reductions (pipelined chain schedules, several segments of the default
     * 64 KiB plus a partial one): the user operation on int64 and a double sum, from
     * every root and as allreduce; non-roots keep their data ---- */
    const size_t big = 3 * 65536 / 8 + 5;
    int64_t *lb = malloc(big * sizeof *lb);
    CHECK(lb);
    for (int dbl = 0; dbl < 2; dbl++) {
        for (int root = -1; root < size; root++) {
            for (size_t i = 0; i < big; i++) {
                int64_t v = (int64_t)((i * 31 + (size_t)rank * 17 + (size_t)root) % 1009) - 500;
                if (dbl)
                    ((double *)lb)[i] = (double)v;
                else
                    lb[i] = v;
            }
            fmpl_type t = dbl ? FMPL_DOUBLE : FMPL_INT64;
            fmpl_op o = dbl ? FMPL_SUM : uop;
            if (root < 0)
                CHECK_RC(fmpl_allreduce(lb, big, t, o, W, NULL), FMPL_SUCCESS);
            else
                CHECK_RC(fmpl_reduce(lb, big, t, o, root, W, NULL), FMPL_SUCCESS);
            for (size_t i = 0; i < big; i++) {
                int64_t e = INT64_MIN, sum = 0;
                for (int r = 0; r < size; r++) {
                    if (root >= 0 && r != rank && rank != root)
                        continue; /* a non-root: its own value */
                    int64_t v = (int64_t)((i * 31 + (size_t)r * 17 + (size_t)root) % 1009) - 500;
                    e = v > e ? v : e;
                    sum += v;
                }
                if (dbl ? ((double *)lb)[i] != (double)sum : lb[i] != e) {
                    fprintf(stderr, "rank %d: large %s root %d: element %zu wrong\n", rank,
                            dbl ? "double sum" : "user op", root, i);
                    exit(1);
                }
            }
        }
    }
    free(lb);
    /* count 0 is a no-op that still synchronises correctly */
    CHECK_RC(fmpl_allreduce(NULL, 0, FMPL_INT32, FMPL_SUM, W, NULL), FMPL_SUCCESS);

    free(buf);
    free(work);
    CHECK_RC(fmpl_finalize(), FMPL_SUCCESS);
    if (rank == 0)
        printf("fmpl_collectives: ok (%d ranks)\n", size);
    return 0;
}
