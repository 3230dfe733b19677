/* vnic_wait.c — waiting: a timeout expires with FMPL_ERR_TIMEOUT; rank 0 waits long
 * enough to fall asleep (spin, yield, then futex) and is woken by data: first by
 * counter increments of puts that arrive after the senders slept 30 ms, then by a
 * plain put of a flag into its shared heap (woken by the delivery, not the timeout),
 * and it used little CPU meanwhile. */
#include <sys/resource.h>
#include <time.h>

#include "vnic_common.h"

#define KEY_BOX 2u

static double cpu_seconds(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_stime.tv_sec +
           ((double)ru.ru_utime.tv_usec + (double)ru.ru_stime.tv_usec) * 1e-6;
}

static void nap_ms(int ms)
{
    struct timespec ts = {ms / 1000, (long)(ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int flag_set(void *arg)
{
    return __atomic_load_n((uint64_t *)arg, __ATOMIC_ACQUIRE) != 0;
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    vnic_t *v = t.v;
    uint64_t box[64] = {0};
    uint64_t *hflag = vnic_mem_alloc(v, 64);
    CHECK(hflag);
    *hflag = 0;
    CHECK_RC(vnic_mr_reg_key(v, KEY_BOX, box, sizeof box, VNIC_ACC_ALL), FMPL_SUCCESS);
    vnic_cntr_t *c;
    CHECK_RC(vnic_cntr_open(v, 4, &c), FMPL_SUCCESS);

    /* timeout */
    uint64_t t0 = base_time_ns();
    CHECK_RC(vnic_cntr_wait(v, c, 1, 20 * 1000000LL), FMPL_ERR_TIMEOUT);
    CHECK(base_time_ns() - t0 >= 20 * 1000000ull);
    CHECK_RC(vnic_wait(v, flag_set, hflag, 0), FMPL_ERR_TIMEOUT);
    vt_barrier(&t);

    for (int round = 0; round < 2; round++) {
        if (t.rank == 0) {
            double c0 = cpu_seconds();
            t0 = base_time_ns();
            CHECK_RC(vnic_cntr_wait(v, c, (uint64_t)(t.size - 1) * (uint64_t)(round + 1), -1),
                     FMPL_SUCCESS);
            double wall = (double)(base_time_ns() - t0) * 1e-9, cpu = cpu_seconds() - c0;
            for (int r = 1; r < t.size; r++)
                CHECK(box[r] == (uint64_t)r * 1000 + (uint64_t)round);
            /* Asleep most of the time: spinning and yielding last ~2 ms. Checked only
             * when the wait itself was long (this rank may arrive late under load). */
            if (t.size > 1 && wall >= 0.02)
                CHECK(cpu < 0.8 * wall);
        } else {
            nap_ms(30);
            uint64_t val = (uint64_t)t.rank * 1000 + (uint64_t)round;
            vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = 0, .flags = VNIC_F_RCNTR, .rcntr = 4};
            op.local.kind = VNIC_DESC_CONTIG;
            op.local.u.contig.addr = &val;
            op.local.u.contig.len = 8;
            op.remote.key = KEY_BOX;
            op.remote.kind = VNIC_DESC_CONTIG;
            op.remote.u.off = (uint64_t)t.rank * 8;
            CHECK_RC(vnic_post(v, &op), FMPL_SUCCESS);
        }
        vt_barrier(&t);
    }

    /* a plain put into rank 0's shared heap wakes it */
    char val[BOOT_VALUE_MAX];
    snprintf(val, sizeof val, "%llu", (unsigned long long)vnic_mem_heap_offset(v, hflag));
    CHECK_RC(boot_put(t.boot, "hflag", val), FMPL_SUCCESS);
    CHECK_RC(vnic_fence(t.v), FMPL_SUCCESS);
    if (t.size > 1) {
        if (t.rank == 0) {
            t0 = base_time_ns();
            CHECK_RC(vnic_wait(v, flag_set, hflag, 10ll * 1000000000), FMPL_SUCCESS);
            CHECK(*hflag == 77);
        } else if (t.rank == t.size - 1) {
            CHECK_RC(boot_get(t.boot, 0, "hflag", val), FMPL_SUCCESS);
            nap_ms(30);
            uint64_t x = 77;
            CHECK_RC(vnic_put(v, 0, &x, 8, VNIC_KEY_HEAP, strtoull(val, NULL, 10)), FMPL_SUCCESS);
        }
    }
    CHECK_RC(vnic_cntr_close(v, c), FMPL_SUCCESS);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_wait: ok (%d ranks)\n", t.size);
    return 0;
}
