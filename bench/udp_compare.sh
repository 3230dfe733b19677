#!/usr/bin/env bash
# udp_compare.sh [BUILD] — FMPL's udp transport (FMPL_TRANSPORT=udp, loopback) against
# Open MPI's TCP path on loopback, in the same run, alternating, UDP_COMPARE_REPS rounds
# (default 3): 8-byte one-way latency and 1 MiB ping-pong and streaming bandwidth
# (fmpl_pingpong and mpi_pingpong.openmpi, same output format), and FMPL at 1% injected
# loss (FMPL_UDP_LOSS=0.01). Prints the median of the rounds and the ratios the udp
# transport aims at: latency <= 0.6x Open MPI TCP, 1 MiB bandwidth >= 0.8x, and at 1%
# loss >= 50% of the loss-free bandwidth. Needs mpirun.openmpi (apt-get install
# openmpi-bin libopenmpi-dev) and a build with bench/ (make).
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
reps=${UDP_COMPARE_REPS:-3}
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
for p in "$bin/fmpl_pingpong" "$bin/fmplrun" "$bin/mpi_pingpong.openmpi"; do
    [ -x "$p" ] || { echo "udp_compare: $p missing (build first; Open MPI: mpicc.openmpi)" >&2; exit 1; }
done
command -v mpirun.openmpi >/dev/null || { echo "udp_compare: mpirun.openmpi missing" >&2; exit 1; }

# row NAME OUTPUT -> "lat pp stream" of 8 B (lat) and 1 MiB (pp, stream)
parse() {
    awk '$1 == "8" && $2 == "B" { lat = $3 } $1 == "1" && $2 == "MiB" { pp = $4; st = $5 }
         END { print lat, pp, st }'
}
args="--sizes=8,1048576 --reps=5"
: > /tmp/udp_compare.$$
for r in $(seq "$reps"); do
    o=$(timeout 300 mpirun.openmpi --mca btl tcp,self --mca btl_tcp_if_include lo -n 2 \
        "$bin/mpi_pingpong.openmpi" $args | parse)
    echo "ompi_tcp $o" >> /tmp/udp_compare.$$
    o=$(FMPL_TRANSPORT=udp timeout 300 "$bin/fmplrun" -n 2 "$bin/fmpl_pingpong" $args | parse)
    echo "fmpl_udp $o" >> /tmp/udp_compare.$$
    o=$(FMPL_TRANSPORT=udp FMPL_UDP_LOSS=0.01 timeout 300 "$bin/fmplrun" -n 2 \
        "$bin/fmpl_pingpong" $args | parse)
    echo "fmpl_udp_loss1 $o" >> /tmp/udp_compare.$$
done
echo "# rounds (name, 8 B one-way latency us, 1 MiB ping-pong GB/s, 1 MiB stream GB/s):"
cat /tmp/udp_compare.$$
awk '
function med(a, n,   i, j, t) { for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++)
    if (a[j] < a[i]) { t = a[i]; a[i] = a[j]; a[j] = t } return a[int((n + 1) / 2)] }
{ n[$1]++; L[$1, n[$1]] = $2; P[$1, n[$1]] = $3; S[$1, n[$1]] = $4 }
END {
    split("ompi_tcp fmpl_udp fmpl_udp_loss1", names, " ")
    for (k = 1; k <= 3; k++) { m = names[k]; c = n[m]
        for (i = 1; i <= c; i++) { l[i] = L[m, i]; p[i] = P[m, i]; s[i] = S[m, i] }
        lat[m] = med(l, c); pp[m] = med(p, c); st[m] = med(s, c)
        printf "%-16s latency %9.3f us   pp %7.3f GB/s   stream %7.3f GB/s\n", m, lat[m], pp[m], st[m] }
    printf "ratios: latency udp/ompi_tcp %.2f (target <= 0.6); 1 MiB stream udp/ompi_tcp %.2f, ping-pong %.2f (target >= 0.8); 1%% loss / loss-free stream %.2f (target >= 0.5)\n",
        lat["fmpl_udp"] / lat["ompi_tcp"], st["fmpl_udp"] / st["ompi_tcp"], pp["fmpl_udp"] / pp["ompi_tcp"],
        st["fmpl_udp_loss1"] / st["fmpl_udp"]
}' /tmp/udp_compare.$$
rm -f /tmp/udp_compare.$$
