/* vnic_placement.c — where vnic_open put this rank (vnic_place), checked against what
 * the launch should give: the argument names it.
 *   own       the library bound the ranks of this host itself (a launcher that did not
 *             bind: Hydra); with no more ranks than CPUs no two share a CPU
 *   launcher  the launcher bound them (fmplrun's default, Hydra's -bind-to) and the
 *             library kept that
 *   none      nobody bound them (FMPL_BIND=none, --bind-to none): all CPUs each
 *   any       (the default) the launcher's or the library's binding, whichever applies
 *             (Slurm: its task/affinity plugin may bind or not)
 * Each rank publishes its CPUs through boot; rank 0 compares, and every rank checks
 * vnic_peer_shares_cpu against them. */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "vnic_common.h"

static void cpus_text(const cpu_set_t *set, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = 0;
    for (int c = 0; c < CPU_SETSIZE && len + 8 < size; c++)
        if (CPU_ISSET(c, set))
            len += (size_t)snprintf(buf + len, size - len, "%s%d", len ? "," : "", c);
}

int main(int argc, char **argv)
{
    CHECK(argc <= 2);
    const char *want = argc == 2 ? argv[1] : "any";
    cpu_set_t before;
    CHECK(sched_getaffinity(0, sizeof before, &before) == 0);
    vt_t t;
    vt_init(&t);
    cpu_set_t mine;
    CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0);
    const char *placement = vnic_info(t.v)->placement;
    CHECK(placement != NULL);
    printf("rank %d: %s\n", t.rank, placement);
    if (strcmp(want, "own") == 0) {
        CHECK(strstr(placement, "bound by FMPL") || t.size == 1);
        CHECK(CPU_COUNT(&mine) >= 1);
        cpu_set_t inside;
        CPU_AND(&inside, &mine, &before);
        CHECK(CPU_EQUAL(&inside, &mine)); /* only CPUs the launcher gave */
    } else if (strcmp(want, "launcher") == 0) {
        CHECK(strstr(placement, "bound by the launcher") || t.size == 1 || CPU_COUNT(&before) == 1);
        CHECK(CPU_EQUAL(&mine, &before));
    } else if (strcmp(want, "any") == 0) {
        CHECK(strstr(placement, "bound by") || strstr(placement, "nothing to spread"));
    } else {
        CHECK(strcmp(want, "none") == 0);
        CHECK(strstr(placement, "not bound"));
        CHECK(CPU_EQUAL(&mine, &before));
    }
    /* With no more ranks than CPUs, no CPU is in two ranks' sets (own and launcher). */
    char text[BOOT_VALUE_MAX];
    cpus_text(&mine, text, sizeof text);
    CHECK_RC(boot_put(t.boot, "cpus", text), FMPL_SUCCESS);
    CHECK_RC(boot_fence(t.boot), FMPL_SUCCESS);
    if (t.rank == 0 && strcmp(want, "none") != 0 && !vnic_info(t.v)->oversubscribed) {
        int count[CPU_SETSIZE] = {0};
        for (int r = 0; r < t.size; r++) {
            CHECK_RC(boot_get(t.boot, r, "cpus", text), FMPL_SUCCESS);
            for (char *p = strtok(text, ","); p; p = strtok(NULL, ","))
                CHECK(++count[atoi(p)] == 1);
        }
    }
    /* vnic_peer_shares_cpu: 1 exactly for another rank bound to this rank's one CPU (0
     * for all when FMPL_TRANSPORT=udp reaches them as if on other hosts) */
    int forced_udp = strstr(vnic_info(t.v)->transports, "udp(forced)") != NULL;
    for (int r = 0; r < t.size; r++) {
        CHECK_RC(boot_get(t.boot, r, "cpus", text), FMPL_SUCCESS);
        char me[BOOT_VALUE_MAX];
        cpus_text(&mine, me, sizeof me);
        int one = CPU_COUNT(&mine) == 1 && !strchr(text, ',');
        CHECK(vnic_peer_shares_cpu(t.v, r) ==
              (!forced_udp && r != t.rank && one && strcmp(text, me) == 0));
    }
    CHECK(!vnic_peer_shares_cpu(t.v, -1) && !vnic_peer_shares_cpu(t.v, t.size));
    vt_fini(&t);
    if (t.rank == 0)
        printf("vnic_placement: ok (%s, %d ranks)\n", want, t.size);
    return 0;
}
