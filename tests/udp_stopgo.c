/* udp_stopgo.c — a slow receiver: every rank but 0 streams puts with a target counter
 * into its own area at rank 0, which progresses only every 100 us and executes at most
 * one request per progress call (FMPL_UDP_EXEC_BUDGET=1) into a small receive buffer
 * (FMPL_UDP_RCVBUF). The buffer fills: rank 0 must have said STOP and later GO, the
 * senders must have heard STOP, and every byte must arrive intact. */
#include <time.h>

#include "vnic_common.h"

#define KEY_AREA 2u
#define CNTR 5u
#define MSG 4096
#define M 300

static void nap_us(long us)
{
    struct timespec ts = {0, us * 1000L};
    nanosleep(&ts, NULL);
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    int n = t.size;
    size_t area = (size_t)n * M * MSG;
    unsigned char *buf = calloc(1, area);
    unsigned char *msg = malloc(MSG);
    CHECK(buf && msg);
    CHECK_RC(vnic_mr_reg_key(v, KEY_AREA, buf, area, VNIC_ACC_REMOTE_WRITE), FMPL_SUCCESS);
    vnic_cntr_t *c;
    CHECK_RC(vnic_cntr_open(v, CNTR, &c), FMPL_SUCCESS);
    vt_barrier(&t);
    if (t.rank != 0) {
        for (int k = 0; k < M; k++) {
            vt_fill(msg, MSG, t.rank, 0, (uint64_t)k);
            vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = 0, .flags = VNIC_F_RCNTR, .rcntr = CNTR};
            op.local.kind = VNIC_DESC_CONTIG;
            op.local.u.contig.addr = msg;
            op.local.u.contig.len = MSG;
            op.remote.key = KEY_AREA;
            op.remote.kind = VNIC_DESC_CONTIG;
            op.remote.u.off = ((uint64_t)t.rank * M + (uint64_t)k) * MSG;
            CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        }
    } else {
        uint64_t want = (uint64_t)(n - 1) * M;
        while (vnic_cntr_read(c) < want) {
            vnic_progress(v);
            nap_us(100);
        }
        for (int r = 1; r < n; r++)
            for (int k = 0; k < M; k++) {
                size_t bad =
                    vt_check(buf + ((size_t)r * M + (size_t)k) * MSG, MSG, r, 0, (uint64_t)k);
                if (bad != SIZE_MAX) {
                    fprintf(stderr, "message %d from %d: byte %zu wrong\n", k, r, bad);
                    CHECK(0);
                }
            }
    }
    vt_barrier(&t);
    vnic_udp_stats_t us;
    CHECK_RC(vnic_udp_stats(v, &us), FMPL_SUCCESS);
    printf("rank %d: STOP sent %llu received %llu, GO sent %llu received %llu, full dropped "
           "%llu, queued %llu, retransmits %llu\n",
           t.rank, (unsigned long long)us.stop_sent, (unsigned long long)us.stop_recv,
           (unsigned long long)us.go_sent, (unsigned long long)us.go_recv,
           (unsigned long long)us.full_dropped, (unsigned long long)us.queued,
           (unsigned long long)us.retransmits);
    if (n > 1) {
        if (t.rank == 0)
            CHECK(us.stop_sent > 0 && us.go_sent > 0 && us.queued > 0 && us.full_dropped > 0);
        else if (n == 2)
            CHECK(us.stop_recv > 0);
    }
    CHECK_RC(vnic_cntr_close(v, c), FMPL_SUCCESS);
    vt_fini(&t);
    free(buf);
    free(msg);
    if (t.rank == 0)
        printf("udp_stopgo: ok (%d ranks)\n", n);
    return 0;
}
