/* udp_zcopy.c — zero-copy puts of the udp transport (udp.c's ZERO-COPY): a large
 * contiguous put leaves from the caller's buffer and returns once acknowledged, or, when
 * the acknowledgements stall, after copying what is unacknowledged into the send pool.
 * Either way the caller may scribble over its buffer as soon as the put returns, and the
 * target must still get the right bytes (retransmissions included, under injected loss).
 *
 * Round "ring": every rank puts SIZE bytes (not a multiple of the datagram payload) to
 * the next one while all are in the library; the data must arrive intact and, with more
 * than one rank, some datagrams must have left zero-copy.
 * Round "asleep": rank 0 alone puts to rank 1 while rank 1 waits outside the library (for
 * a file rank 0 creates once the put returned): the put must return, and rank 1 must find
 * the bytes rank 0 had in its buffer at the time of the post. With FMPL_UDP_THREAD=0 no
 * acknowledgement can come meanwhile, so the put must have copied what was
 * unacknowledged (zcopy_detached moves); with the progress thread, which answers once
 * rank 1 stayed out of the library FMPL_UDP_THREAD_US, either may happen. */
#include <time.h>
#include <unistd.h>

#include "vnic_common.h"

#define KEY_IN 2u
#define SIZE (((size_t)1 << 20) + 4093)
#define ROUNDS 3

static void touch(const char *path)
{
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    fclose(f);
}

static void put(vt_t *t, int peer, unsigned char *buf)
{
    CHECK_RC(vnic_put(t->v, peer, buf, SIZE, KEY_IN, 0), FMPL_SUCCESS);
    memset(buf, 0xa5, SIZE); /* locally complete: ours again */
}

static void check_in(const vt_t *t, const unsigned char *in, int src, uint64_t salt)
{
    size_t bad = vt_check(in, SIZE, src, t->rank, salt);
    if (bad != SIZE_MAX) {
        fprintf(stderr, "rank %d: from %d (salt %llu): byte %zu wrong\n", t->rank, src,
                (unsigned long long)salt, bad);
        CHECK(0);
    }
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    int me = t.rank, n = t.size;
    unsigned char *in = malloc(SIZE), *out = malloc(SIZE);
    CHECK(in && out);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_IN, in, SIZE, VNIC_ACC_REMOTE_WRITE | VNIC_ACC_REMOTE_READ),
             FMPL_SUCCESS);
    vnic_udp_stats_t s0, s1, s2;
    int udp = vnic_udp_stats(t.v, &s0) == FMPL_SUCCESS;
    vt_barrier(&t);

    for (int r = 0; r < ROUNDS && n > 1; r++) {
        int next = (me + 1) % n, prev = (me - 1 + n) % n;
        vt_fill(out, SIZE, me, next, (uint64_t)r);
        put(&t, next, out);
        vt_barrier(&t);
        check_in(&t, in, prev, (uint64_t)r);
        vt_barrier(&t); /* checked before the next round overwrites */
    }
    if (udp) {
        CHECK_RC(vnic_udp_stats(t.v, &s1), FMPL_SUCCESS);
        printf("rank %d: ring: zero-copy %llu (detached %llu), retransmitted %llu\n", me,
               (unsigned long long)(s1.zcopy_sent - s0.zcopy_sent),
               (unsigned long long)(s1.zcopy_detached - s0.zcopy_detached),
               (unsigned long long)(s1.retransmits - s0.retransmits));
        if (n > 1)
            CHECK(s1.zcopy_sent > s0.zcopy_sent);
    }

    if (n > 1) {
        /* rank 1 stays out of the library from "asleep" to "done": files named after
         * fmplrun, the parent of both */
        char asleep[64], done[64];
        snprintf(asleep, sizeof asleep, "/tmp/udp_zcopy.%ld.asleep", (long)getppid());
        snprintf(done, sizeof done, "/tmp/udp_zcopy.%ld.done", (long)getppid());
        if (me == 0) {
            vt_fill(out, SIZE, 0, 1, 99);
            while (access(asleep, F_OK) != 0) /* progressing: rank 1's get needs an answer */
                vnic_progress(t.v);
            uint64_t t0 = base_time_ns();
            put(&t, 1, out);
            uint64_t took = base_time_ns() - t0;
            touch(done);
            printf("rank 0: put to a rank outside the library returned after %.0f us\n",
                   (double)took / 1e3);
            const char *thread = getenv("FMPL_UDP_THREAD");
            if (udp) {
                CHECK_RC(vnic_udp_stats(t.v, &s2), FMPL_SUCCESS);
                printf("rank 0: zero-copy %llu, detached %llu, acks received %llu\n",
                       (unsigned long long)(s2.zcopy_sent - s1.zcopy_sent),
                       (unsigned long long)(s2.zcopy_detached - s1.zcopy_detached),
                       (unsigned long long)(s2.acks_recv - s1.acks_recv));
                CHECK(s2.zcopy_sent > s1.zcopy_sent);
                if (thread && !strcmp(thread, "0")) /* nobody could acknowledge */
                    CHECK(s2.zcopy_detached > s1.zcopy_detached);
            }
        } else if (me == 1) {
            /* a get from rank 0 is answered after everything we sent it before (stream
             * order): rank 0 has our barrier messages and leaves the barrier without us */
            uint64_t word;
            CHECK_RC(vnic_get(t.v, 0, &word, sizeof word, KEY_IN, 0), FMPL_SUCCESS);
            touch(asleep);
            struct timespec ts = {0, 1000000};
            for (int k = 0; access(done, F_OK) != 0; k++) {
                CHECK(k < 120000); /* 2 minutes */
                nanosleep(&ts, NULL);
            }
            unlink(asleep);
            unlink(done);
        }
        vt_barrier(&t);
        if (me == 1)
            check_in(&t, in, 0, 99);
        vt_barrier(&t);
    }

    CHECK_RC(vnic_mr_dereg(t.v, KEY_IN), FMPL_SUCCESS);
    vt_fini(&t);
    free(in);
    free(out);
    if (me == 0)
        printf("udp_zcopy: ok (%d ranks)\n", n);
    return 0;
}
