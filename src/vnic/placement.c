/* placement.c — where this rank runs: the library's side of CPU binding (vnic_place).
 *
 * Two ranks on one CPU cost every message a context switch (a 2-rank ping-pong takes
 * ~4 us instead of ~0.2), and an unbound job may run its whole life that way when the
 * scheduler puts both ranks on one CPU. So every rank of a host gets CPUs of its own:
 *  - fmplrun binds the ranks it forks itself (--bind-to, FMPL_BIND) by
 *    base_cpu_place's rule;
 *  - ranks that another launcher started (Hydra, Slurm, the launcher of fmplrun
 *    --hosts) bind themselves here by the same rule, when the launcher left every
 *    rank of the host the same CPUs. When their CPUs differ, the launcher bound them:
 *    its placement stands.
 * Whatever the placement, the host is oversubscribed when its ranks outnumber the CPUs
 * they may use together (the union of their sets: a rank bound to one CPU alone does
 * not make the host oversubscribed). */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "vnic/vnic_impl.h"

void vnic_place(vnic_t *v, const cpu_set_t *const cpus[], int nlocal, int me)
{
    const char *mode = base_env_str("FMPL_BIND", "auto",
                                    "where each rank of a host runs: auto (a domain of whole "
                                    "cores each, one CPU each when ranks outnumber cores), "
                                    "core (one CPU each), none (the scheduler decides); "
                                    "fmplrun --bind-to sets it, and a launcher that bound the "
                                    "ranks is followed");
    int one_cpu = strcmp(mode, "core") == 0;
    if (!one_cpu && strcmp(mode, "auto") != 0 && strcmp(mode, "none") != 0)
        base_setting_fail("FMPL_BIND=%s: expected auto, core or none", mode);
    cpu_set_t all;
    CPU_ZERO(&all);
    int same = 1;
    for (int i = 0; i < nlocal; i++) {
        CPU_OR(&all, &all, cpus[i]);
        same &= CPU_EQUAL(cpus[i], cpus[0]);
    }
    int ncpus = CPU_COUNT(&all);
    char list[96];
    const char *who;
    if (ncpus == 0) {
        who = "unknown (sched_getaffinity failed)";
    } else if (!same) {
        who = "bound by the launcher";
    } else if (nlocal < 2 || ncpus < 2) {
        who = "not bound (nothing to spread)";
    } else if (strcmp(mode, "none") == 0) {
        who = "not bound (FMPL_BIND=none)";
    } else {
        cpu_set_t mine;
        if (base_cpu_place(cpus[me], nlocal, me, one_cpu, &mine) > 0 &&
            sched_setaffinity(0, sizeof mine, &mine) == 0) {
            who = one_cpu ? "bound by FMPL (FMPL_BIND=core)" : "bound by FMPL (FMPL_BIND=auto)";
        } else {
            base_log("vnic: cannot bind to the CPUs FMPL_BIND=%s chose (%s); running unbound", mode,
                     strerror(errno));
            who = "not bound (sched_setaffinity failed)";
        }
    }
    /* Each local rank's one CPU, where its placement is one CPU (vnic_peer_shares_cpu):
     * the launcher's binding as published, or the one the rule above gives it. */
    int bound = ncpus > 0 && (!same || (nlocal >= 2 && ncpus >= 2 && strcmp(mode, "none") != 0));
    for (int i = 0; i < nlocal && v->local_cpu; i++) {
        cpu_set_t set = *cpus[i];
        if (same && (!bound || base_cpu_place(cpus[i], nlocal, i, one_cpu, &set) <= 0))
            CPU_ZERO(&set);
        v->local_cpu[i] = -1;
        for (int c = 0; CPU_COUNT(&set) == 1 && c < CPU_SETSIZE; c++)
            if (CPU_ISSET(c, &set))
                v->local_cpu[i] = c;
    }
    cpu_set_t now;
    if (sched_getaffinity(0, sizeof now, &now) != 0)
        CPU_ZERO(&now);
    base_cpu_text(&now, list, sizeof list);
    snprintf(v->placement, sizeof v->placement, "CPUs %s, %s; %d rank%s on this host's %d CPU%s",
             list[0] ? list : "?", who, nlocal, nlocal == 1 ? "" : "s", ncpus,
             ncpus == 1 ? "" : "s");
    v->info.placement = v->placement;
    v->info.oversubscribed = ncpus > 0 && nlocal > ncpus;
    base_backoff_configure(v->info.oversubscribed, nlocal);
}
