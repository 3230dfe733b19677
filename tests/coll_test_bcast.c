/* coll_test_bcast.c — coll_bcast for every root and sizes 0 .. 4 MiB+5 (tree, chain,
 * partial last segment), contents checked byte for byte, buffers from malloc and from
 * the shared heap. */
#include "coll_common.h"

static const size_t sizes[] = {0, 1, 8, 1000, 2048, 2049, 65536 + 13, (4u << 20) + 5};

static unsigned char pattern(int root, size_t i, unsigned call)
{
    return (unsigned char)(i * 131u + (i >> 8) * 17u + (unsigned)root * 7u + call * 13u);
}

static void run(coll_job_t *j, unsigned char *buf, unsigned *call)
{
    int p = j->size;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t s = sizes[si];
        for (int root = 0; root < p; root++) {
            /* the largest size: a few roots only, to keep the test fast */
            if (s > (1u << 20) && root != 0 && root != p - 1 && root != p / 2)
                continue;
            for (size_t i = 0; i < s + 8; i++)
                buf[i] = j->rank == root && i < s ? pattern(root, i, *call) : 0xEE;
            CHECK_RC(coll_bcast(j->world, buf, s, root), FMPL_SUCCESS);
            for (size_t i = 0; i < s; i++)
                if (buf[i] != pattern(root, i, *call)) {
                    fprintf(stderr, "rank %d: size %zu root %d: byte %zu is %u, expected %u\n",
                            j->rank, s, root, i, buf[i], pattern(root, i, *call));
                    exit(1);
                }
            for (size_t i = s; i < s + 8; i++)
                CHECK(buf[i] == 0xEE); /* nothing written past the end */
            (*call)++;
        }
    }
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    size_t max = (4u << 20) + 5 + 8;
    unsigned call = 0;
    unsigned char *buf = malloc(max);
    CHECK(buf);
    run(&j, buf, &call);
    free(buf);
    unsigned char *hbuf = vnic_mem_alloc(j.v, max);
    if (hbuf) { /* same from the shared heap (the vnic may take another path) */
        run(&j, hbuf, &call);
        vnic_mem_free(j.v, hbuf);
    }
    coll_job_end(&j);
    return 0;
}
