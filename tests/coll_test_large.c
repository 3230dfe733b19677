/* coll_test_large.c — the large-message collectives (the pipelined schedules:
 * two-chain reduce, chain allreduce, ring allgather), checked bit for bit: several
 * segments, sizes that are not a multiple of the segment nor of the element, elements
 * (12 bytes) that do not divide the segment, every root, a commutative and a
 * non-commutative operation and one of 1-byte elements, runs repeated with new data
 * (the cached schedule runs again), schedules evicted and rebuilt, non-roots' buffers
 * and the bytes after every buffer unchanged; an element larger than a segment refused.
 * Argument "quick": fewer sizes (udp). */
#include "coll_common.h"

/* ---- 12-byte elements: a vector of three uint32 (sum, commutative) and an upper
 * triangular 2x2 matrix [[a, b], [0, c]] (product, not commutative) ---- */
typedef struct tri {
    uint32_t a, b, c;
} tri_t;

static void sum_tri(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    tri_t *x = inout;
    const tri_t *y = in;
    for (size_t i = 0; i < count; i++) {
        x[i].a += y[i].a;
        x[i].b += y[i].b;
        x[i].c += y[i].c;
    }
}

static tri_t tri_mul(tri_t x, tri_t y)
{
    tri_t z = {x.a * y.a, x.a * y.b + x.b * y.c, x.c * y.c};
    return z;
}

static void prod_tri(void *inout, const void *in, size_t count, void *arg)
{
    (void)arg;
    tri_t *x = inout;
    const tri_t *y = in;
    for (size_t i = 0; i < count; i++)
        x[i] = tri_mul(x[i], y[i]);
}

/* 1-byte elements: wrapping byte sum (with its argument as an offset check). */
static void sum_u8(void *inout, const void *in, size_t count, void *arg)
{
    CHECK(arg == (void *)&sum_u8);
    unsigned char *x = inout;
    const unsigned char *y = in;
    for (size_t i = 0; i < count; i++)
        x[i] = (unsigned char)(x[i] + y[i]);
}

static const coll_reduce_op_t op_tsum = {sum_tri, NULL, sizeof(tri_t), 1};
static const coll_reduce_op_t op_tprod = {prod_tri, NULL, sizeof(tri_t), 0};
static const coll_reduce_op_t op_bsum = {sum_u8, (void *)&sum_u8, 1, 1};

/* Rank r's element i in call `call` (bytes of an element from one 32-bit hash). */
static uint32_t hash(int r, size_t i, unsigned call, unsigned k)
{
    uint32_t x = (uint32_t)(r + 1) * 2654435761u ^ (uint32_t)i * 40503u ^ call * 97u ^ k * 7919u;
    x ^= x >> 15;
    return x * 2246822519u + (uint32_t)i;
}

static void fill(void *buf, const coll_reduce_op_t *op, int r, size_t count, unsigned call)
{
    if (op->elem_size == 1) {
        for (size_t i = 0; i < count; i++)
            ((unsigned char *)buf)[i] = (unsigned char)hash(r, i, call, 0);
        return;
    }
    tri_t *t = buf;
    for (size_t i = 0; i < count; i++) {
        t[i].a = hash(r, i, call, 1) | 1; /* odd: products do not die out */
        t[i].b = hash(r, i, call, 2);
        t[i].c = hash(r, i, call, 3) | 1;
    }
}

/* The result, combined in rank order 0, 1, ..., p-1. */
static void expected(void *want, void *tmp, const coll_reduce_op_t *op, int p, size_t count,
                     unsigned call)
{
    fill(want, op, 0, count, call);
    for (int r = 1; r < p; r++) {
        fill(tmp, op, r, count, call);
        op->fn(want, tmp, count, op->arg);
    }
}

#define GUARD 64

static void check_bytes(const void *got, const void *want, size_t n, const char *what, int rank,
                        size_t count, int root)
{
    if (memcmp(got, want, n) == 0)
        return;
    size_t i = 0;
    while (((const unsigned char *)got)[i] == ((const unsigned char *)want)[i])
        i++;
    fprintf(stderr, "rank %d: %s count %zu root %d: first wrong byte %zu of %zu\n", rank, what,
            count, root, i, n);
    exit(1);
}

static void check_guard(const unsigned char *g, int rank, const char *what)
{
    for (int i = 0; i < GUARD; i++)
        if (g[i] != 0xA5) {
            fprintf(stderr, "rank %d: %s wrote past the end of its buffer\n", rank, what);
            exit(1);
        }
}

/* reduce at every root (root -1: allreduce), twice each with new data. */
static void test_reduce(coll_job_t *j, const coll_reduce_op_t *op, size_t count, unsigned *call,
                        unsigned char *buf, unsigned char *want, unsigned char *tmp)
{
    int p = j->size;
    size_t n = count * op->elem_size;
    for (int root = -1; root < p; root++) {
        for (int rep = 0; rep < 2; rep++, (*call)++) {
            expected(want, tmp, op, p, count, *call);
            fill(buf, op, j->rank, count, *call);
            memset(buf + n, 0xA5, GUARD);
            if (root < 0)
                CHECK_RC(coll_allreduce(j->world, buf, count, op, NULL), FMPL_SUCCESS);
            else
                CHECK_RC(coll_reduce(j->world, buf, count, op, root, NULL), FMPL_SUCCESS);
            if (root >= 0 && root != j->rank) /* unchanged */
                fill(want, op, j->rank, count, *call);
            check_bytes(buf, want, n, root < 0 ? "allreduce" : "reduce", j->rank, count, root);
            check_guard(buf + n, j->rank, "reduce");
        }
    }
}

static unsigned char pat(int r, size_t i, unsigned call)
{
    return (unsigned char)(hash(r, i, call, 4) >> 7);
}

/* allgather of size-byte blocks, in place and from a separate buffer, twice each. */
static void test_allgather(coll_job_t *j, size_t size, unsigned *call, unsigned char *recv,
                           unsigned char *send)
{
    int p = j->size;
    for (int in_place = 0; in_place < 2; in_place++) {
        for (int rep = 0; rep < 2; rep++, (*call)++) {
            memset(recv, 0x5A, size * (size_t)p);
            memset(recv + size * (size_t)p, 0xA5, GUARD);
            unsigned char *mine = in_place ? recv + (size_t)j->rank * size : send;
            for (size_t i = 0; i < size; i++)
                mine[i] = pat(j->rank, i, *call);
            CHECK_RC(coll_allgather(j->world, in_place ? NULL : send, recv, size), FMPL_SUCCESS);
            for (int r = 0; r < p; r++)
                for (size_t i = 0; i < size; i++)
                    if (recv[(size_t)r * size + i] != pat(r, i, *call)) {
                        fprintf(stderr, "rank %d: allgather of %zu: block %d byte %zu wrong\n",
                                j->rank, size, r, i);
                        exit(1);
                    }
            check_guard(recv + size * (size_t)p, j->rank, "allgather");
        }
    }
}

int main(int argc, char **argv)
{
    int quick = argc > 1 && !strcmp(argv[1], "quick");
    coll_job_t j;
    coll_job_start(&j);
    /* The segment (FMPL_COLL_SEG, default 64 KiB) as the library sees it. */
    const char *e = getenv("FMPL_COLL_SEG");
    size_t seg = e ? (size_t)atol(e) : 65536;
    size_t tseg = seg / sizeof(tri_t); /* 12-byte elements per segment */
    const size_t tri_counts[] = {tseg + 1, 3 * tseg + 7, tseg, 2 * tseg - 1};
    const size_t byte_counts[] = {2 * seg + 3, seg + 1, 5 * seg - 3};
    const size_t gather_sizes[] = {seg + 1, 3 * seg + 5, 2 * seg - 1};
    size_t nt = quick ? 2 : 4, nb = quick ? 1 : 3, ng = quick ? 1 : 3;

    size_t max = 5 * seg * (size_t)j.size + 12 * tseg;
    unsigned char *buf = malloc(max + GUARD), *want = malloc(max), *tmp = malloc(max);
    CHECK(buf && want && tmp);
    unsigned call = 0;
    for (size_t i = 0; i < nt; i++) {
        test_reduce(&j, &op_tprod, tri_counts[i], &call, buf, want, tmp);
        test_reduce(&j, &op_tsum, tri_counts[i], &call, buf, want, tmp);
    }
    for (size_t i = 0; i < nb; i++)
        test_reduce(&j, &op_bsum, byte_counts[i], &call, buf, want, tmp);
    for (size_t i = 0; i < ng; i++)
        test_allgather(&j, gather_sizes[i], &call, buf, want);
    /* An element larger than a segment: refused on every member (nothing is sent), the
     * buffer untouched; then the group still works. */
    coll_reduce_op_t op_huge = {sum_u8, (void *)&sum_u8, seg + 8, 1};
    int want_rc = j.size == 1 ? FMPL_SUCCESS : FMPL_ERR_UNSUPPORTED;
    memset(buf, 0x33, seg + 8);
    CHECK_RC(coll_reduce(j.world, buf, 1, &op_huge, j.size - 1, NULL), want_rc);
    CHECK_RC(coll_allreduce(j.world, buf, 1, &op_huge, NULL), want_rc);
    for (size_t i = 0; i < seg + 8; i++)
        CHECK(buf[i] == 0x33);
    /* Interleaved calls of several cached schedules (more than the cache holds). */
    for (int rep = 0; rep < 3; rep++) {
        test_reduce(&j, &op_tprod, tri_counts[0], &call, buf, want, tmp);
        test_allgather(&j, gather_sizes[0], &call, buf, want);
        test_reduce(&j, &op_bsum, byte_counts[0], &call, buf, want, tmp);
    }
    free(buf);
    free(want);
    free(tmp);
    coll_job_end(&j);
    if (j.rank == 0)
        printf("coll_test_large: ok (%d ranks, segment %zu)\n", j.size, seg);
    return 0;
}
