/* vnic_cpu.c — vnic_cpu_needed: a rank is told to yield its CPU only when another rank
 * of the host is runnable on that CPU and queued behind it.
 *  A. rank 1 waits in vnic_cntr_wait on rank 0's CPU: rank 0, running, sees it needed;
 *  B. rank 1 computes outside the library on rank 0's CPU: the kernel says it is
 *     queued there, so it is needed;
 *  C. rank 1 sleeps (outside the library) on rank 0's CPU: never needed;
 *  D. rank 1 waits, then computes, on a CPU of its own: never needed.
 * At 2 ranks (at 3 and more on this machine the host is oversubscribed: waits then
 * yield at every poll and publish nothing); with more, vnic_info's oversubscribed
 * says whether the ranks outnumber the CPUs they may use together. */
#include <sched.h>
#include <time.h>
#include <unistd.h>

#include "vnic_common.h"

#define KEY_WORD 13u
#define CNTR_GO 14u

static void pin(int cpu)
{
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    CHECK(sched_setaffinity(0, sizeof set, &set) == 0);
}

/* Busy for ns nanoseconds, without library calls. */
static void compute(uint64_t ns)
{
    uint64_t t0 = base_time_ns();
    while (base_time_ns() - t0 < ns)
        ;
}

/* How often vnic_cpu_needed said 1 in `ns` of asking (with some compute between). */
static int needed_during(vt_t *t, uint64_t ns, int stop_at_first)
{
    int yes = 0;
    uint64_t t0 = base_time_ns();
    while (base_time_ns() - t0 < ns) {
        yes += vnic_cpu_needed(t->v);
        if (yes && stop_at_first)
            break;
        compute(2000);
    }
    vnic_cpu_release(t->v);
    return yes;
}

/* Rank 0 lets rank 1's vnic_cntr_wait end: a put that moves its CNTR_GO counter. */
static void go(vt_t *t, uint64_t *word)
{
    vnic_op_t op = {.opcode = VNIC_OP_PUT, .peer = 1, .flags = VNIC_F_RCNTR, .rcntr = CNTR_GO};
    op.local.kind = VNIC_DESC_CONTIG;
    op.local.u.contig.addr = word;
    op.local.u.contig.len = 8;
    op.remote.key = KEY_WORD;
    op.remote.kind = VNIC_DESC_CONTIG;
    op.remote.u.off = 0;
    CHECK_RC(vnic_post(t->v, &op), FMPL_SUCCESS);
}

int main(void)
{
    /* waits spin (rather than sleep) for as long as the cases take */
    setenv("FMPL_SPIN_US", "10000000", 1);
    vt_t t;
    vt_init(&t);
    uint64_t word = 0;
    vnic_cntr_t *cgo;
    CHECK_RC(vnic_cntr_open(t.v, CNTR_GO, &cgo), FMPL_SUCCESS);
    CHECK_RC(vnic_mr_reg_key(t.v, KEY_WORD, &word, sizeof word, VNIC_ACC_ALL), FMPL_SUCCESS);
    vt_barrier(&t);
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
    uint64_t go_count = 0;
    if (t.size == 1) {
        CHECK(needed_during(&t, 1000000, 0) == 0); /* alone on the host */
    } else if (t.size > 2) {
        cpu_set_t all; /* this test runs unbound: every rank has all the CPUs */
        CHECK(sched_getaffinity(0, sizeof all, &all) == 0);
        CHECK(vnic_info(t.v)->oversubscribed == (t.size > CPU_COUNT(&all)));
    } else {
        pin(first);
        vt_barrier(&t);
        /* A: rank 1 waits, queued behind rank 0 */
        if (t.rank == 1) {
            CHECK_RC(vnic_cntr_wait(t.v, cgo, ++go_count, -1), FMPL_SUCCESS);
        } else if (t.rank == 0) {
            usleep(2000); /* rank 1 runs into its wait meanwhile */
            CHECK(needed_during(&t, 2000000000ull, 1) == 1);
            go(&t, &word);
        }
        vt_barrier(&t);
        /* B: rank 1 computes outside the library, queued behind rank 0 */
        if (t.rank == 1) {
            vnic_cpu_needed(t.v);  /* publishes this CPU ... */
            vnic_cpu_release(t.v); /* ... and "not waiting" */
            compute(400000000);
        } else if (t.rank == 0) {
            usleep(20000);
            CHECK(needed_during(&t, 300000000, 1) == 1);
        }
        vt_barrier(&t);
        /* C: rank 1 sleeps outside the library */
        if (t.rank == 1) {
            vnic_cpu_needed(t.v);
            vnic_cpu_release(t.v);
            usleep(300000);
        } else if (t.rank == 0) {
            usleep(20000);
            CHECK(needed_during(&t, 100000000, 0) == 0);
        }
        vt_barrier(&t);
    }
    if (t.size == 2 && second >= 0) {
        /* D: a CPU each */
        pin(t.rank == 0 ? first : second);
        vt_barrier(&t);
        if (t.rank == 1) {
            CHECK_RC(vnic_cntr_wait(t.v, cgo, ++go_count, -1), FMPL_SUCCESS);
            compute(100000000);
        } else {
            usleep(20000);
            CHECK(needed_during(&t, 50000000, 0) == 0);
            go(&t, &word);
            usleep(20000);
            CHECK(needed_during(&t, 50000000, 0) == 0);
        }
        vt_barrier(&t);
    }
    CHECK(sched_setaffinity(0, sizeof mine, &mine) == 0);
    CHECK_RC(vnic_mr_dereg(t.v, KEY_WORD), FMPL_SUCCESS);
    CHECK_RC(vnic_cntr_close(t.v, cgo), FMPL_SUCCESS);
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_cpu: ok (%d ranks)\n", t.size);
    return 0;
}
