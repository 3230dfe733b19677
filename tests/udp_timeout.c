/* udp_timeout.c — a silent peer: rank 1 stops progressing (it sleeps, without a progress thread:
 * FMPL_UDP_THREAD=0). Rank 0's get from it must
 * fail with FMPL_ERR_PEER once FMPL_UDP_PEER_TIMEOUT_MS (set small by the test) has passed, not
 * hang; later posts to rank 1 and later waits fail the same way, and the death is counted. Every
 * rank then closes (FMPL_ERR_PEER or success) without hanging. */
#include <time.h>

#include "vnic_common.h"

#define KEY_BOX 2u

static int never(void *arg)
{
    (void)arg;
    return 0;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    CHECK(t.size >= 2);
    uint64_t box[8] = {1, 2, 3, 4, 5, 6, 7, 8}, got[8];
    CHECK_RC(vnic_mr_reg_key(v, KEY_BOX, box, sizeof box, VNIC_ACC_ALL), FMPL_SUCCESS);
    vt_barrier(&t);
    uint64_t tb = base_time_ns(); /* rank 1 may fall silent from here */
    const char *ms = getenv("FMPL_UDP_PEER_TIMEOUT_MS");
    CHECK(ms);
    double limit = atof(ms) * 1e-3;
    if (t.rank == 1) {
        struct timespec ts = {(time_t)(limit * 4) + 1, 0};
        nanosleep(&ts, NULL); /* silent: no progress */
    } else if (t.rank == 0) {
        /* give rank 1 time to leave the barrier (where it would still answer) */
        struct timespec ts = {0, 200 * 1000000L};
        nanosleep(&ts, NULL);
        uint64_t t0 = base_time_ns();
        int rc = vnic_get(v, 1, got, sizeof got, KEY_BOX, 0);
        double secs = (double)(base_time_ns() - t0) * 1e-9;
        CHECK_RC(rc, FMPL_ERR_PEER);
        /* silence counts from the last packet heard (the barrier at the latest) */
        CHECK((double)(base_time_ns() - tb) * 1e-9 >= limit * 0.9 && secs < limit * 3 + 1);
        CHECK_RC(vnic_put(v, 1, got, 8, KEY_BOX, 0), FMPL_ERR_PEER);
        CHECK_RC(vnic_wait(v, never, NULL, -1), FMPL_ERR_PEER);
        vnic_udp_stats_t us;
        CHECK_RC(vnic_udp_stats(v, &us), FMPL_SUCCESS);
        CHECK(us.peer_deaths >= 1); /* ranks > 1 left too, maybe before acknowledging */
        printf("udp_timeout: ok (%d ranks): the get failed after %.2f s\n", t.size, secs);
    }
    /* Teardown with a dead peer: close fails with FMPL_ERR_PEER where a peer was declared
     * dead (rank 1 itself declares rank 0 dead once it wakes: rank 0 waits in the boot
     * fence of its close), but everything is released. */
    CHECK_RC(vnic_cntr_close(v, t.bar), FMPL_SUCCESS);
    int rc = vnic_close(v);
    CHECK(rc == FMPL_SUCCESS || rc == FMPL_ERR_PEER);
    free((void *)t.slots);
    CHECK_RC(boot_finalize(t.boot), FMPL_SUCCESS);
    return 0;
}
