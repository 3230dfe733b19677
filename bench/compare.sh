#!/usr/bin/env bash
# compare.sh [BUILD] — FMPL against MPICH and Open MPI on this machine, in the same run.
# compare.sh --report RAW.csv — the table again from the rows of an earlier run.
#
# Installs Debian's MPICH and Open MPI with apt-get when missing, builds everything
# (the peers' programs with mpicc.mpich / mpicc.openmpi), then for COMPARE_REPS rounds
# (default 3) runs, alternating ours / MPICH / Open MPI:
#   ping-pong latency 8 B and bandwidth 1 MiB, 4 MiB (ping-pong and streaming), 2 ranks;
#   barrier, bcast and allreduce at 8 B, 8 KiB, 1 MiB, with 2 and 4 ranks;
#   peak RSS per rank of a trivial program (init, barrier, finalize) at 16 ranks.
# Each program already reports medians of its own repetitions; the table shows the
# median over the rounds and the ratios ours/MPICH and ours/Open MPI.
# Output: bench/out/compare-<time>.csv (every row of every round) and -summary.csv,
# plus a PNG of the ratios when gnuplot is installed.
set -euo pipefail
cd "$(dirname "$0")/.."
report_only=
if [ "${1:-}" = "--report" ]; then
    report_only=${2:?compare.sh --report RAW.csv}
fi
build=${1:-build}
reps=${COMPARE_REPS:-3}
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}

measure() {
    # 1. The peers.
    if ! command -v mpicc.mpich >/dev/null || ! command -v mpicc.openmpi >/dev/null; then
        echo "compare: installing MPICH and Open MPI (apt-get)"
        sudo=
        [ "$(id -u)" -eq 0 ] || sudo=sudo
        $sudo apt-get update
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            mpich libmpich-dev openmpi-bin libopenmpi-dev
    fi

    # 2. Build (re-configure so a newly installed mpicc is found).
    [ -f "$build/CMakeCache.txt" ] && cmake "$build" >/dev/null
    make --no-print-directory build BUILD="$build"
    for p in fmplrun fmpl_pingpong fmpl_coll fmpl_hello mpi_pingpong.mpich mpi_pingpong.openmpi \
        mpi_coll.mpich mpi_coll.openmpi mpi_hello.mpich mpi_hello.openmpi; do
        [ -x "$bin/$p" ] || { echo "compare: $bin/$p was not built" >&2; exit 1; }
    done

    mkdir -p bench/out
    stamp=$(date +%Y%m%d-%H%M%S)
    raw=bench/out/compare-$stamp.csv
    sum=bench/out/compare-$stamp-summary.csv
    echo "round,impl,bench,mem,np,size,metric,value" >"$raw"

    fmpl() { local n=$1; shift; "$bin/fmplrun" --timeout 600 -n "$n" "$@"; }
    mpich() { local n=$1; shift; mpiexec.mpich -n "$n" "$@"; }
    ompi() {
        local n=$1; shift
        local over=()
        [ "$n" -gt "$(nproc)" ] && over=(--oversubscribe)
        mpirun.openmpi "${over[@]}" -n "$n" "$@"
    }
    # Appends the CSV rows of one run (header dropped) to the raw file, tagged with the round.
    rows() { grep -v '^impl,' | grep ',' | sed "s/^/$round,/" >>"$raw"; }

    pp=(--csv "--sizes=8,1M,4M" --reps=5)
    echo "compare: $reps rounds, each: ping-pong, collectives at 2 and 4 ranks, RSS at 16 ranks"
    for round in $(seq 1 "$reps"); do
        echo "  round $round/$reps"
        fmpl 2 "$bin/fmpl_pingpong" "${pp[@]}" | rows
        fmpl 2 "$bin/fmpl_pingpong" "${pp[@]}" --mem=heap | rows
        mpich 2 "$bin/mpi_pingpong.mpich" "${pp[@]}" --impl=mpich | rows
        ompi 2 "$bin/mpi_pingpong.openmpi" "${pp[@]}" --impl=openmpi | rows
        for np in 2 4; do
            fmpl $np "$bin/fmpl_coll" --csv --reps=5 | rows
            mpich $np "$bin/mpi_coll.mpich" --csv --reps=5 --impl=mpich | rows
            ompi $np "$bin/mpi_coll.openmpi" --csv --reps=5 --impl=openmpi | rows
        done
        fmpl 16 "$bin/fmpl_hello" | rows
        mpich 16 "$bin/mpi_hello.mpich" --impl=mpich | rows
        ompi 16 "$bin/mpi_hello.openmpi" --impl=openmpi | rows
    done
}

if [ -n "$report_only" ]; then
    raw=$report_only
    stamp=$(basename "$raw" .csv)
    stamp=${stamp#compare-}
    mkdir -p bench/out
    sum=bench/out/compare-$stamp-summary.csv
else
    measure
fi

# 3. Medians over rounds (RSS: the mean over ranks of a round first), then the table.
# Key: impl|bench|mem|np|size|metric.
awk -F, 'NR > 1 {
    k = $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7
    if ($3 == "rss") { k = $2 "|rss|" $4 "|" $5 "|" $6 "|peak_rss_mib"; s[$1 "|" k] += $8 / 1024; c[$1 "|" k]++ }
    else print k "," $8
}
END { for (rk in s) { split(rk, a, "|"); sub(/^[^|]*\|/, "", rk); print rk "," s[a[1] "|" rk] / c[a[1] "|" rk] } }' "$raw" |
    sort -t, -k1,1 -k2,2g |
    awk -F, '
    function flush() { if (n) { m = n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2; print key "," m } }
    $1 != key { flush(); key = $1; n = 0 }
    { x[++n] = $2 }
    END { flush() }' | tr '|' ',' | sort >"$sum"

awk -F, -v ncpu="$(nproc)" -v plotdata="bench/out/compare-$stamp-plot.dat" '
{ v[$1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6] = $7 }
function get(impl, k) { return (impl "|" k) in v ? v[impl "|" k] : "" }
function fmt(x) { return x == "" ? sprintf("%10s", "-") : sprintf("%10.3f", x) }
function ratio(a, b) { return (a == "" || b == "" || b == 0) ? sprintf("%9s", "-") : sprintf("%9.3g", a / b) }
function row(label, kours, kpeer, better) {
    o = get("fmpl", kours); m = get("mpich", kpeer); p = get("openmpi", kpeer)
    printf "%-34s %s %s %s %s %s   %s\n", label, fmt(o), fmt(m), fmt(p), ratio(o, m), ratio(o, p), better
    if (o != "" && m != "" && p != "")
        printf "%s,%s,%s,%s,%s\n", label, o, m, p, better > plotdata
}
END {
    printf "%-34s %10s %10s %10s %9s %9s   %s\n", "benchmark", "FMPL", "MPICH", "Open MPI", "/MPICH", "/OpenMPI", "better"
    row("latency 8 B [us]", "pingpong|malloc|2|8|latency_us", "pingpong|malloc|2|8|latency_us", "lower")
    row("stream bw 1 MiB [GB/s]", "stream|malloc|2|1048576|bw_GBps", "stream|malloc|2|1048576|bw_GBps", "higher")
    row("stream bw 4 MiB [GB/s]", "stream|malloc|2|4194304|bw_GBps", "stream|malloc|2|4194304|bw_GBps", "higher")
    row("stream bw 1 MiB, heap [GB/s]", "stream|heap|2|1048576|bw_GBps", "stream|malloc|2|1048576|bw_GBps", "higher")
    row("stream bw 4 MiB, heap [GB/s]", "stream|heap|2|4194304|bw_GBps", "stream|malloc|2|4194304|bw_GBps", "higher")
    row("ping-pong bw 1 MiB [GB/s]", "pingpong|malloc|2|1048576|bw_GBps", "pingpong|malloc|2|1048576|bw_GBps", "higher")
    row("ping-pong bw 4 MiB [GB/s]", "pingpong|malloc|2|4194304|bw_GBps", "pingpong|malloc|2|4194304|bw_GBps", "higher")
    for (np = 2; np <= 4; np += 2) {
        t = np > ncpu ? "*" : ""
        row("barrier, " np " ranks" t " [us]", "barrier|malloc|" np "|0|time_us", "barrier|malloc|" np "|0|time_us", "lower")
        split("8 8192 1048576", sz, " "); split("8 B|8 KiB|1 MiB", sn, "|")
        for (i = 1; i <= 3; i++)
            row("bcast " sn[i] ", " np " ranks" t " [us]", "bcast|malloc|" np "|" sz[i] "|time_us", "bcast|malloc|" np "|" sz[i] "|time_us", "lower")
        for (i = 1; i <= 3; i++)
            row("allreduce " sn[i] ", " np " ranks" t " [us]", "allreduce|malloc|" np "|" sz[i] "|time_us", "allreduce|malloc|" np "|" sz[i] "|time_us", "lower")
    }
    row("peak RSS per rank, 16 ranks [MiB]", "rss|malloc|16|0|peak_rss_mib", "rss|malloc|16|0|peak_rss_mib", "lower")
    if (4 > ncpu) printf "* more ranks than the %d CPUs: oversubscribed\n", ncpu
}' "$sum" >"bench/out/compare-$stamp.txt"
cat "bench/out/compare-$stamp.txt"
echo
echo "ratios = FMPL / peer: below 1 is better for FMPL for latency, time and memory; above 1 for bandwidth"
echo "raw rows: $raw; medians: $sum"

if command -v gnuplot >/dev/null && [ -s "bench/out/compare-$stamp-plot.dat" ]; then
    gnuplot <<GP
set terminal pngcairo size 1200,700
set output "bench/out/compare-$stamp.png"
set datafile separator ","
set style data histograms
set style fill solid 0.8
set logscale y
set ylabel "FMPL / peer (time: <1 better; bandwidth: >1 better)"
set xtics rotate by -40
plot "bench/out/compare-$stamp-plot.dat" using (\$2/\$3):xtic(1) title "FMPL/MPICH", \
     "" using (\$2/\$4) title "FMPL/Open MPI"
GP
    echo "plot: bench/out/compare-$stamp.png"
fi
