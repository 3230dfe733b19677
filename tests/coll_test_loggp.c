/* coll_test_loggp.c — the LogGP-planned bcast (src/coll/coll_loggp.c):
 *  - the model's pure functions: times grow with bytes and ranks, the best segment lies in
 *    its bounds and beats every other segment tried, the tree is chosen for tiny messages
 *    and the chain for huge ones, no tree above tree_max;
 *  - the cache file: a written line reads back, other transports' lines stay;
 *  - every rank agreed rank 0's parameters, and coll_bcast_plan is the model's plan;
 *  - coll_bcast at odd sizes with the segments the model chose, every root, contents
 *    checked (ctest runs it with parameters that make the model pick small, large and
 *    middle segments: tests/coll.cmake). */
#include <math.h>
#include <stdio.h>
#include <unistd.h>

#include "coll_common.h"

static const coll_loggp_t params[] = {
    {250.0, 60.0, 60.0, 0.08, 0.0, 2000.0, 2}, /* the built-in ones' shape */
    {1000.0, 5000.0, 5000.0, 0.01, 0.03, 0.0, 64},
    {50.0, 10.0, 10.0, 2.0, 3.0, 500.0, 1},
};

static void check_model(const coll_loggp_t *m)
{
    size_t seg_max = 65536;
    for (int p = 2; p <= 9; p++) {
        double tree_prev = 0, best_prev = 0;
        for (size_t b = 1; b <= (8u << 20); b = b * 3 + 1) {
            /* more bytes or ranks, more time (the chain's in as many segments: one more
             * segment may make more bytes faster) */
            double tree = coll_loggp_tree(m, b, p), chain = coll_loggp_chain(m, b, p, b / 4 + 1);
            CHECK(tree > 0 && chain > 0);
            CHECK(tree >= tree_prev);
            CHECK(coll_loggp_chain(m, b + 3, p, (b + 3) / 4 + 1) >= chain);
            CHECK(coll_loggp_tree(m, b, p + 1) >= tree);
            CHECK(coll_loggp_chain(m, b, p + 1, b / 4 + 1) >= chain);
            tree_prev = tree;
            size_t best = coll_loggp_best_seg(m, b, p, seg_max);
            CHECK(best % 64 == 0 && best <= seg_max);
            CHECK(best >= BASE_MIN((size_t)COLL_LOGGP_SEG_MIN, BASE_ALIGN_UP(b, 64)));
            double t = coll_loggp_chain(m, b, p, best);
            CHECK(t >= best_prev); /* at its best segment too */
            best_prev = t;
            for (size_t s = 1024; s <= seg_max; s += 1024 + s / 4)
                CHECK(t <= coll_loggp_chain(m, b, p, s) * (1 + 1e-12));
            coll_bcast_plan_t plan = coll_loggp_plan(m, b, p, 8192, seg_max);
            CHECK(plan.predicted > 0);
            CHECK(b <= 8192 || plan.chain); /* the tree only where its cells hold it */
            if (b <= COLL_LOGGP_TREE_MIN)
                CHECK(!plan.chain);
            else
                CHECK(plan.predicted <= t * (1 + 1e-9));
            if (plan.chain)
                CHECK(plan.seg == best);
            CHECK(coll_loggp_plan(m, b, p, 0, seg_max).chain);
        }
        CHECK(!coll_loggp_plan(m, 8, p, 8192, seg_max).chain);        /* tiny: tree */
        CHECK(coll_loggp_plan(m, 64u << 20, p, 8192, seg_max).chain); /* huge: chain */
    }
    /* G far: the bytes past COLL_LOGGP_NEAR cost it, the others G */
    coll_loggp_t near = *m;
    near.per_byte_far = 0;
    for (int p = 2; p <= 5; p++) {
        size_t b = COLL_LOGGP_NEAR;
        CHECK(coll_loggp_chain(m, b, p, 65536) == coll_loggp_chain(&near, b, p, 65536));
        double gain = m->per_byte_far > m->per_byte ? 1 : m->per_byte_far < m->per_byte ? -1 : 0;
        double d = coll_loggp_chain(m, 4 * b, p, 65536) - coll_loggp_chain(&near, 4 * b, p, 65536);
        CHECK(gain * d > 0 || (gain == 0 && d == 0) || m->per_byte_far == 0);
    }
    CHECK(coll_loggp_tree(m, 100, 1) == 0 && coll_loggp_chain(m, 100, 1, 64) == 0);
    CHECK(coll_loggp_tree(m, 0, 4) == 0 && coll_loggp_chain(m, 0, 4, 64) == 0);
}

/* Write, read back, keep other transports' lines (a file of this rank's own). */
static void check_cache(int rank)
{
    char path[256], got[1024];
    snprintf(path, sizeof path, "/tmp/fmpl-loggp-test-%ld-%d", (long)getpid(), rank);
    CHECK(setenv("FMPL_COLL_LOGGP_CACHE", path, 1) == 0);
    coll_loggp_t m = params[0], r;
    CHECK(!coll_loggp_cache_read("shm", &r)); /* no file yet */
    CHECK_RC(coll_loggp_cache_write("shm", &m, got, sizeof got), FMPL_SUCCESS);
    CHECK(!strcmp(got, path));
    CHECK(coll_loggp_cache_read("shm", &r));
    CHECK(fabs(r.latency - m.latency) < 0.1 && fabs(r.overhead - m.overhead) < 0.1 &&
          fabs(r.gap - m.gap) < 0.1 && fabs(r.per_byte - m.per_byte) < 1e-4 &&
          fabs(r.switch_cost - m.switch_cost) < 0.1 && r.cpus == m.cpus);
    CHECK(!coll_loggp_cache_read("udp", &r));
    coll_loggp_t u = params[1];
    CHECK_RC(coll_loggp_cache_write("udp", &u, got, sizeof got), FMPL_SUCCESS);
    CHECK(coll_loggp_cache_read("udp", &r) && r.cpus == u.cpus &&
          fabs(r.per_byte_far - u.per_byte_far) < 1e-4);
    CHECK(coll_loggp_cache_read("shm", &r) && r.cpus == m.cpus); /* still there */
    FILE *f = fopen(path, "w"); /* a damaged file counts for nothing */
    CHECK(f);
    fputs("fmpl-loggp 2 shm nan\n", f);
    fclose(f);
    CHECK(!coll_loggp_cache_read("shm", &r));
    unlink(path);
    CHECK(setenv("FMPL_COLL_LOGGP_CACHE", "none", 1) == 0);
    CHECK(!coll_loggp_cache_read("shm", &r));
    CHECK_RC(coll_loggp_cache_write("shm", &m, got, sizeof got), FMPL_ERR_ARG);
}

static const size_t sizes[] = {1,     7,      8191,           8193,          12345,
                               65537, 100003, (1u << 20) + 3, (3u << 20) + 5};

static unsigned char pattern(int root, size_t i, unsigned call)
{
    return (unsigned char)(i * 151u + (i >> 9) * 29u + (unsigned)root * 5u + call * 11u);
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    for (size_t i = 0; i < sizeof params / sizeof params[0]; i++)
        check_model(&params[i]);
    check_model(coll_loggp_builtin());
    check_model(coll_loggp_agreed());

    /* every rank has rank 0's parameters */
    coll_loggp_t mine = *coll_loggp_agreed();
    coll_loggp_t *all = calloc((size_t)j.size, sizeof *all);
    CHECK(all);
    CHECK_RC(coll_allgather(j.world, &mine, all, sizeof mine), FMPL_SUCCESS);
    for (int r = 0; r < j.size; r++)
        CHECK(!memcmp(&all[r], &all[0], sizeof mine));
    free(all);

    int fixed = getenv("FMPL_COLL_LOGGP") && !strcmp(getenv("FMPL_COLL_LOGGP"), "0");
    size_t max = (3u << 20) + 5 + 8;
    unsigned char *buf = malloc(max);
    CHECK(buf);
    unsigned call = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t s = sizes[si];
        coll_bcast_plan_t plan = coll_bcast_plan(s, j.size);
        coll_bcast_plan_t model = coll_loggp_plan(&mine, s, j.size, 8192, 65536);
        if (fixed) /* the fixed rules: tree up to FMPL_COLL_SMALL, FMPL_COLL_SEG segments */
            CHECK(plan.chain == (s > 8192) && plan.seg == 65536);
        else
            CHECK(plan.chain == model.chain && (!plan.chain || plan.seg == model.seg));
        if (j.rank == 0 && s == sizes[5])
            printf("np %d: %zu B: %s %zu, predicted %.1f us\n", j.size, s,
                   plan.chain ? "chain" : "tree", plan.seg, plan.predicted / 1e3);
        for (int root = 0; root < j.size; root++) {
            if (s > (1u << 20) && root != j.size - 1)
                continue;
            for (size_t i = 0; i < s + 8; i++)
                buf[i] = j.rank == root && i < s ? pattern(root, i, call) : 0xEE;
            CHECK_RC(coll_bcast(j.world, buf, s, root), FMPL_SUCCESS);
            for (size_t i = 0; i < s; i++)
                if (buf[i] != pattern(root, i, call)) {
                    fprintf(stderr, "rank %d: size %zu root %d: byte %zu is %u, expected %u\n",
                            j.rank, s, root, i, buf[i], pattern(root, i, call));
                    exit(1);
                }
            for (size_t i = s; i < s + 8; i++)
                CHECK(buf[i] == 0xEE);
            call++;
        }
    }
    free(buf);
    check_cache(j.rank);
    coll_job_end(&j);
    return 0;
}
