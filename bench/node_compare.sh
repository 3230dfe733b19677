#!/usr/bin/env bash
# node_compare.sh [BUILD] — node-aware MPI collectives (src/mpi/coll_node.c) against the
# flat algorithms on a job spanning two "hosts" of this machine: fmplrun --hosts a:2,b:2
# (NODE_COMPARE_HOSTS, NODE_COMPARE_NP) with tests/fake_launcher.sh, so ranks of one host
# share memory and the two hosts talk udp. Runs mpi_coll.fmpl (barrier, bcast, reduce,
# allreduce, ... at 8 B, 8 KiB, 1 MiB) on MPI_COMM_WORLD (--mode=world) and on a
# duplicate of it with FMPL_COLL_GROUPS=1 (--mode=dup: no mailboxes, everything over
# point-to-point, as on a communicator beyond the mailbox slots) under
# FMPL_MPI_NODE_AWARE=0 (flat), 1 (default) and 2 (node-aware everywhere),
# NODE_COMPARE_REPS rounds (default 3) alternating the settings; prints the median time
# per call of each and the ratios node-aware / flat. Open MPI cannot be run on this
# layout here (it would need two hosts, or containers it can reach; its node-aware
# collectives key on the host name).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${NODE_COMPARE_REPS:-3}
hosts=${NODE_COMPARE_HOSTS:-a:2,b:2}
np=${NODE_COMPARE_NP:-4}
bin=$build/bin
for p in fmplrun mpi_coll.fmpl; do
    [ -x "$bin/$p" ] || { echo "node_compare: $bin/$p missing (build first)" >&2; exit 1; }
done
tmp=$(mktemp /tmp/node_compare.XXXXXX)
trap 'rm -f "$tmp"' EXIT
echo "# node_compare: $(date -u '+%Y-%m-%d %H:%M UTC'); $(nproc) CPUs ($(awk -F': ' '/model name/ { print $2; exit }' /proc/cpuinfo)), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "# fmplrun -n $np --hosts $hosts (fake launcher), mpi_coll.fmpl --csv --reps=5, medians of $reps rounds [us]"
for _ in $(seq "$reps"); do
    for mode in world dup; do
        nas="0 1 2"
        [ $mode = dup ] && nas="0 1" # no mailboxes: 2 is 1
        for na in $nas; do
            groups=16
            [ $mode = dup ] && groups=1
            FMPL_COLL_GROUPS=$groups FMPL_MPI_NODE_AWARE=$na timeout 600 "$bin/fmplrun" -n "$np" --hosts "$hosts" \
                --launcher "sh tests/fake_launcher.sh" --pmi-addr 127.0.0.1 \
                "$bin/mpi_coll.fmpl" --csv --reps=5 --mode=$mode |
                awk -F, -v m="$mode" -v na="$na" 'NR > 1 && $6 == "time_us" { print m, na, $2, $5, $7 }' >> "$tmp"
        done
    done
done
awk '
function med(key,   n, i, j, t, a) {
    n = split(vals[key], a, " ")
    for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j - 1] + 0 > a[j] + 0; j--) { t = a[j]; a[j] = a[j - 1]; a[j - 1] = t }
    return n ? a[int((n + 1) / 2)] : "nan"
}
{ k = $1 " " $2 " " $3 " " $4; vals[k] = vals[k] " " $5; if (!($3 " " $4 in seen)) { seen[$3 " " $4] = 1; order[++no] = $3 " " $4 } }
END {
    printf "%-22s %8s | %10s %10s %10s %7s %7s | %10s %10s %7s\n", "operation", "size", "world:flat", "world:1", "world:2", "1/flat", "2/flat", "dup:flat", "dup:node", "ratio"
    for (i = 1; i <= no; i++) {
        split(order[i], f, " ")
        wf = med("world 0 " order[i]); w1 = med("world 1 " order[i]); w2 = med("world 2 " order[i])
        df = med("dup 0 " order[i]); d1 = med("dup 1 " order[i])
        printf "%-22s %8s | %10.2f %10.2f %10.2f %7.2f %7.2f | %10.2f %10.2f %7.2f\n", f[1], f[2], wf, w1, w2, w1 / wf, w2 / wf, df, d1, d1 / df
    }
}' "$tmp"
