/* vnic_cpu.c — vnic_cpu_shared: each rank notes its CPU when it asks; pinned to one CPU,
 * every rank sees another there; pinned to different CPUs (2 ranks, 2 CPUs or more),
 * none does. */
#include <sched.h>

#include "vnic_common.h"

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
}

int main(void)
{
    vt_t t;
    vt_init(&t);
    cpu_set_t mine;
    CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0);
    int first = -1, second = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &mine)) {
            if (first < 0)
                first = c;
            else if (second < 0)
                second = c;
        }
    if (t.size == 1) {
        CHECK(!vnic_cpu_shared(t.v)); /* alone on the host */
    } else {
        pin(first);
        vnic_cpu_shared(t.v); /* note the CPU */
        vt_barrier(&t);
        CHECK(vnic_cpu_shared(t.v));
        vt_barrier(&t);
        if (t.size == 2 && second >= 0) {
            pin(t.rank == 0 ? first : second);
            vnic_cpu_shared(t.v);
            vt_barrier(&t);
            CHECK(!vnic_cpu_shared(t.v));
            vt_barrier(&t);
        }
    }
    CHECK(sched_setaffinity(0, sizeof mine, &mine) == 0);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_cpu: ok (%d ranks)\n", t.size);
    return 0;
}
