#!/usr/bin/env bash
# run-demo.sh BUILD — what `make run` does after building: a 4-rank demo on this host
# (ring of messages, broadcast, allreduce), then the quick native benchmarks (seconds)
# summed up in one table. No configuration: fmplrun starts the ranks here.
# The full CSV lands in bench/out/quick-<time>.csv; `make compare` measures against
# MPICH and Open MPI in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin
for p in fmplrun fmpl-info fmpl_demo fmpl_pingpong fmpl_prepost fmpl_coll; do
    [ -x "$bin/$p" ] || { echo "run-demo: $bin/$p is missing: run 'make' first" >&2; exit 1; }
done
run=("$bin/fmplrun" --timeout 120)
ncpu=$(nproc)

echo "== FMPL on $(hostname): $("$bin/fmpl-info" --version), $ncpu CPUs"
"$bin/fmpl-info" | sed -n '/^Transports:/,/^Settings/p' | sed '$d'
echo
echo "== Demo: fmplrun -n 4 $bin/fmpl_demo"
"${run[@]}" -n 4 "$bin/fmpl_demo"
echo

mkdir -p bench/out
csv=bench/out/quick-$(date +%Y%m%d-%H%M%S).csv
echo "== Quick benchmarks (a few seconds; a shared machine drifts: see 'make compare' for ratios)"
{
    "${run[@]}" -n 2 "$bin/fmpl_pingpong" --quick --csv
    "${run[@]}" -n 2 "$bin/fmpl_pingpong" --quick --csv --mem=heap | tail -n +2
    "${run[@]}" -n 2 "$bin/fmpl_prepost" --quick --csv | tail -n +2
    "${run[@]}" -n 2 "$bin/fmpl_coll" --quick --csv | tail -n +2
    "${run[@]}" -n 4 "$bin/fmpl_coll" --quick --csv | tail -n +2
} >"$csv"

# One table from the CSV rows: impl,bench,mem,np,size,metric,value
awk -F, -v ncpu="$ncpu" '
NR > 1 { v[$2 "|" $3 "|" $4 "|" $5 "|" $6] = $7 }
function get(k) { return (k in v) ? sprintf("%10.3f", v[k]) : sprintf("%10s", "-") }
function row(label, kmalloc, kheap) { printf "  %-46s %s %s\n", label, get(kmalloc), get(kheap) }
function coll(op, size, label) {
    printf "  %-46s %s %s\n", label, get(op "|malloc|2|" size "|time_us"), get(op "|malloc|4|" size "|time_us")
}
END {
    printf "  %-46s %10s %10s\n", "point-to-point, ranks 0 and 1", "malloc", "heap"
    split("1 8 8192", ls, " ")
    for (i = 1; i <= 3; i++)
        row(sprintf("latency %-6s one-way, pre-posted [us]", ls[i] >= 1024 ? ls[i] / 1024 " KiB" : ls[i] " B"),
            "pingpong|malloc|2|" ls[i] "|latency_us", "pingpong|heap|2|" ls[i] "|latency_us")
    split("65536 1048576 4194304 16777216", bs, " ")
    for (i = 1; i <= 4; i++) {
        sz = bs[i] >= 1048576 ? bs[i] / 1048576 " MiB" : bs[i] / 1024 " KiB"
        row(sprintf("ping-pong bandwidth %-7s [GB/s]", sz), "pingpong|malloc|2|" bs[i] "|bw_GBps",
            "pingpong|heap|2|" bs[i] "|bw_GBps")
    }
    for (i = 1; i <= 4; i++) {
        sz = bs[i] >= 1048576 ? bs[i] / 1048576 " MiB" : bs[i] / 1024 " KiB"
        row(sprintf("streaming bandwidth %-7s [GB/s]", sz), "stream|malloc|2|" bs[i] "|bw_GBps",
            "stream|heap|2|" bs[i] "|bw_GBps")
    }
    printf "\n  %-46s %10s\n", "600 pre-posted receives (seed 000, table 2)", ""
    row("posting gap, 1st receive [us]", "prepost|malloc|2|4|post_first_us", "-")
    row("posting gap, 600th receive [us]", "prepost|malloc|2|4|post_last_us", "-")
    row("send latency, 600 outstanding [us]", "prepost|malloc|2|4|latency_outstanding_us", "-")
    printf "\n  %-46s %10s %10s\n", "collectives [us]", "2 ranks", "4 ranks" (4 > ncpu ? "*" : "")
    coll("barrier", 0, "barrier")
    coll("bcast", 8, "bcast 8 B")
    coll("bcast", 8192, "bcast 8 KiB")
    coll("bcast", 1048576, "bcast 1 MiB")
    coll("allreduce", 8, "allreduce 8 B (double, sum)")
    coll("allreduce", 8192, "allreduce 8 KiB")
    coll("allreduce", 1048576, "allreduce 1 MiB")
    if (4 > ncpu)
        printf "  * %d CPUs: 4 ranks are oversubscribed (waiting ranks yield the core)\n", ncpu
}' "$csv"
echo
echo "(medians; full CSV: $csv; details: each program prints its own table without --csv)"
