/* coll_test_allgather.c — coll_allgather with block sizes 0 .. 1 MiB (Bruck and
 * ring), in place (send NULL) and from a separate send buffer; every block checked. */
#include "coll_common.h"

static unsigned char pattern(int r, size_t i, unsigned call)
{
    return (unsigned char)(i * 29u + (i >> 9) * 3u + (unsigned)r * 101u + call * 7u + 1);
}

int main(void)
{
    coll_job_t j;
    coll_job_start(&j);
    const int p = j.size;
    const size_t sizes[] = {0, 1, 8, 13, 1000, 65536 + 13, ((4u << 20) + 5) / (size_t)p};
    size_t max = sizes[sizeof sizes / sizeof sizes[0] - 1];
    max = max > 65536 + 13 ? max : 65536 + 13;
    unsigned char *recv = malloc(max * (size_t)p + 8), *send = malloc(max);
    CHECK(recv && send);
    unsigned call = 0;
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
        size_t s = sizes[si];
        for (int in_place = 0; in_place < 2; in_place++, call++) {
            memset(recv, 0xEE, s * (size_t)p + 8);
            unsigned char *mine = in_place ? recv + (size_t)j.rank * s : send;
            for (size_t i = 0; i < s; i++)
                mine[i] = pattern(j.rank, i, call);
            CHECK_RC(coll_allgather(j.world, in_place ? NULL : send, recv, s), FMPL_SUCCESS);
            for (int r = 0; r < p; r++)
                for (size_t i = 0; i < s; i++)
                    if (recv[(size_t)r * s + i] != pattern(r, i, call)) {
                        fprintf(stderr, "rank %d: block size %zu: block %d byte %zu wrong\n",
                                j.rank, s, r, i);
                        exit(1);
                    }
            for (size_t i = 0; i < 8; i++)
                CHECK(recv[s * (size_t)p + i] == 0xEE);
        }
    }
    free(recv);
    free(send);
    coll_job_end(&j);
    return 0;
}
