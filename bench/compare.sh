#!/usr/bin/env bash
# compare.sh [BUILD] — FMPL against MPICH and Open MPI on this machine, in the same run.
# compare.sh --report RAW.csv — the table and plots again from the rows of an earlier run.
#
# Installs Debian's MPICH, Open MPI and gnuplot (gnuplot-nox) with apt-get when missing,
# builds everything (the MPI programs three times from one source: bin/<prog>.fmpl with
# our mpicc, .mpich and .openmpi with the peers' wrappers), then for COMPARE_REPS rounds
# (default 3) runs, one after the other in each round:
#   1. the native API (issue 2's record): fmpl_pingpong (malloc and shared-heap buffers),
#      fmpl_coll at 2 and 4 ranks (with the persistent bcast and allreduce), fmpl_hello
#      at 16 ranks;
#   2. the MPI benchmarks, ours / MPICH / Open MPI one after the other (the order rotates
#      from round to round):
#      - mpi_pingpong at 2 ranks: ping-pong latency and bandwidth, streaming and
#        bidirectional bandwidth over COMPARE_SIZES (default 1 B .. 16 MiB, powers of 2),
#        and seed 004's sub-matrix ping-pong (MPI_Type_vector(4096, n, z+1, MPI_DOUBLE),
#        n = 1, 16, z = 256, 1024, 4096);
#      - mpi_match at 2 ranks: time per message with 1, 1024, 8192 receives posted
#        (or messages unexpected) ahead of it;
#      - mpi_incast at 4 ranks: 3 x 20000 1-KiB MPI_Isend to a rank computing 1 s, its
#        peak RSS growth and the draining time (seed 002; 60 s cap per run);
#      - mpi_coll at 2 and 4 ranks: barrier; bcast, reduce, allreduce, allgather, alltoall
#        at 8 B, 8 KiB, 1 MiB (per-rank block for allgather and alltoall); persistent bcast
#        and allreduce (MPI_Bcast_init / MPI_Allreduce_init, then MPI_Start + MPI_Wait; a
#        library without them reports "missing", shown as such);
#      - mpi_neighbor at 4 ranks: MPI_Neighbor_allgather and MPI_Neighbor_alltoall on a
#        periodic 2-D Cartesian communicator, 8 B .. 64 KiB per neighbour;
#      - mpi_offload at 4 ranks (seed 003): Ibcast, Iallreduce and the persistent bcast
#        and allreduce at 8 B, 256 KiB, 1 MiB: the delayed-rank fraction (the others'
#        completion time when one rank computes 50 ms after the start, worst rank) and
#        the overlap while computing;
#      - mpi_hello at 16 ranks (peak RSS);
#      - mpi_rma (one-sided) at 2 ranks: put/get latency (op + flush) and bandwidth 8 B ..
#        4 MiB, 8-byte fetch_and_op / compare_and_swap / accumulate, empty exclusive
#        lock/unlock, fence and PSCW, shared-window load/store ping-pong; fence and PSCW
#        again at 4 ranks. Open MPI runs them with --mca osc sm,ucx (its default one-sided
#        component, osc/rdma over vader, crashes in MPI_Win_lock on this machine);
#      - mpi_io at 2 and 4 ranks: MPI-IO collective write and read of a 64 MiB 2-D array
#        through a subarray view, independent contiguous write and read (bandwidth), in
#        COMPARE_IO_DIR (default /dev/shm; its file system is named in the report);
#      - the application proxies (bench/apps/) at 2 and 4 ranks, in their default sizes
#        and (up to the CPU count) in strong-scaling sizes (apps_strong below):
#        app_wavefront (2-D pipelined sweep, one-double messages), app_halo2d and
#        app_halo3d (Jacobi halo exchanges on Cartesian grids, derived datatypes),
#        app_transpose (MPI_Alltoall), app_bucketsort (Alltoall + Alltoallv),
#        app_particles (Sendrecv ghosts and migration, an Allreduce per step): each
#        reports a rate (higher is better) and a checksum that must agree between the
#        libraries.
# After the rounds, once per run (not per round): bench/robust.sh, many separate jobs of
# mpi_robust per library, idle and under background load (bench/load.c), reporting the
# slowest and the median job instead of a best-of figure (its ROBUST_* variables apply;
# COMPARE_ROBUST=0 skips it).
# The peers' ping-pong figures in the native table come from the same mpi_pingpong runs.
# Each program reports medians of its own repetitions; the tables show the median over
# the rounds and the ratios ours/MPICH and ours/Open MPI, then persistent / blocking
# collectives per library, the application proxies' rates (and whether their checksums
# agree), then every point of the MPI sweep, every collective and every proxy where
# ours is more than COMPARE_WORSE (default 1.25) times worse than the faster peer, then
# robust.sh's tables. The report starts with the machine: date, CPU count and model,
# kernel, library versions, load average, and the cache-line floor between CPUs 0 and 1
# (bench/cacheline) at each round and at the end.
# Cache states: on a guest whose host moves its vCPUs, that floor flips within seconds
# between ~0.03 us and 0.2-0.7 us, and every library's figures with it. So every run is
# tagged with the state before it (the last run's end) and after it: F (fast, below
# 0.1 us both times), S (slow, both) or M (mixed). The report counts the runs of each
# library in each state, and every entry of the "worse" list also gives the states of
# ours and of the faster peer's runs (one letter a round) and the factor from the runs
# in the fast state alone, when every library had one.
# Output in bench/out/: compare-<time>.csv (every row of every round), -state.csv (the
# state of every row's run), -summary.csv (the medians), -fast-summary.csv (the medians
# of the fast-state runs), .txt (the tables), and PNG plots when gnuplot works: -latency.png,
# -bandwidth.png, -submatrix.png (the MPI sweep), .png (native ratios), -mpi-ratios.png,
# -apps-ratios.png (the proxies); robust.sh's rows and tables in -robust.csv and
# -robust.txt.
set -euo pipefail
cd "$(dirname "$0")/.."
report_only=
if [ "${1:-}" = "--report" ]; then
    report_only=${2:?compare.sh --report RAW.csv}
fi
build=${1:-build}
reps=${COMPARE_REPS:-3}
robust=${COMPARE_ROBUST:-1}
worse=${COMPARE_WORSE:-1.25}
bin=$build/bin
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}
start=$SECONDS

# apt-get install of the missing packages (sudo only when not root).
install_missing() {
    local pkgs=() need_peers=
    if [ -z "$report_only" ] &&
        { ! command -v mpicc.mpich >/dev/null || ! command -v mpicc.openmpi >/dev/null; }; then
        need_peers=1
        pkgs+=(mpich libmpich-dev openmpi-bin libopenmpi-dev)
    fi
    command -v gnuplot >/dev/null || pkgs+=(gnuplot-nox)
    [ ${#pkgs[@]} -eq 0 ] && return 0
    echo "compare: installing ${pkgs[*]} (apt-get)"
    local sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    if ! { $sudo apt-get update &&
        $sudo env DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
            "${pkgs[@]}"; }; then
        if [ -n "$need_peers" ]; then
            echo "compare: could not install MPICH and Open MPI" >&2
            exit 1
        fi
        echo "compare: could not install gnuplot: no plots" >&2
    fi
}

# Powers of two from 1 B to 16 MiB.
default_sizes() {
    local s=1 out=1
    while [ $s -lt $((16 << 20)) ]; do
        s=$((s * 2))
        out=$out,$s
    done
    echo "$out"
}

# The application proxies (bench/apps/), run at 2 and 4 ranks in every round, each in
# its default size (computation dominates: what any library adds is a few per cent) and,
# at rank counts up to the CPU count, in a strong-scaling size (smaller pieces per rank,
# more of the time in MPI, as real codes run when they scale out), given here as
# arguments.
apps=(app_wavefront app_halo2d app_halo3d app_transpose app_bucketsort app_particles)
declare -A apps_strong=(
    [app_wavefront]="--ny=256 --iters=48"
    [app_halo2d]="--nx=128 --ny=128 --iters=4000"
    [app_halo3d]="--nx=32 --ny=32 --nz=32 --iters=1000"
    [app_transpose]="--n=512 --iters=40"
    [app_bucketsort]="--keys=262144 --iters=40"
    [app_particles]="--nx=48 --ny=32 --steps=400"
)

measure() {
    # 1. The peers and gnuplot.
    install_missing

    # 2. Build (re-configure so a newly installed mpicc is found).
    [ -f "$build/CMakeCache.txt" ] && cmake "$build" >/dev/null
    make --no-print-directory build BUILD="$build"
    for p in fmplrun fmpl_pingpong fmpl_coll fmpl_hello load cacheline; do
        [ -x "$bin/$p" ] || { echo "compare: $bin/$p was not built" >&2; exit 1; }
    done
    for p in mpi_pingpong mpi_coll mpi_neighbor mpi_offload mpi_hello mpi_match mpi_incast mpi_robust mpi_rma mpi_io "${apps[@]}"; do
        for impl in fmpl mpich openmpi; do
            [ -x "$bin/$p.$impl" ] || { echo "compare: $bin/$p.$impl was not built" >&2; exit 1; }
        done
    done

    mkdir -p bench/out
    local iodir=${COMPARE_IO_DIR:-/dev/shm}
    stamp=$(date +%Y%m%d-%H%M%S)
    raw=bench/out/compare-$stamp.csv
    echo "round,impl,bench,mem,np,size,metric,value" >"$raw"
    states=bench/out/compare-$stamp-state.csv
    echo "round,impl,bench,mem,np,size,metric,state" >"$states"
    prev_state=$(mktemp)
    trap 'rm -f "$prev_state"' EXIT
    # F when the cache-line floor reads below 0.1 us, else S; F on one CPU (no floor)
    cache_state() {
        [ "$(nproc)" -ge 2 ] || { echo F; return; }
        "$bin/cacheline" | awk '{ print ($(NF - 3) < 0.1 ? "F" : "S") }'
    }
    cache_state >"$prev_state"
    # The machine and its load: other tenants' work shows in the figures.
    machine=bench/out/compare-$stamp-machine.txt
    {
        echo "# $(date -u '+%Y-%m-%d %H:%M UTC'), $reps rounds; $(nproc) CPUs" \
            "($(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)," \
            "family $(lscpu 2>/dev/null | sed -n 's/^CPU family: *//p' | head -n 1)," \
            "model $(lscpu 2>/dev/null | sed -n 's/^Model: *//p' | head -n 1)), kernel $(uname -r)"
        echo "# $("$bin/fmpl-info" | head -n 1); MPICH" \
            "$(mpiexec.mpich --version | sed -n 's/^ *Version: *//p' | head -n 1);" \
            "$(mpirun.openmpi --version | head -n 1)"
        echo "# load average at the start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
        echo "# mpi_io files in $iodir ($(stat -f -c %T "$iodir" 2>/dev/null || echo unknown file system))"
    } >"$machine"

    # COMPARE_TIMEOUT (seconds, 0: none) caps one run where a library may not finish
    fmpl() { local n=$1; shift; timeout "${COMPARE_TIMEOUT:-0}" "$bin/fmplrun" --timeout 600 -n "$n" "$@"; }
    mpich() { local n=$1; shift; timeout "${COMPARE_TIMEOUT:-0}" mpiexec.mpich -n "$n" "$@"; }
    ompi() {
        local n=$1; shift
        local over=()
        [ "$n" -gt "$(nproc)" ] && over=(--oversubscribe)
        timeout "${COMPARE_TIMEOUT:-0}" mpirun.openmpi "${over[@]}" -n "$n" "$@"
    }
    # Appends the CSV rows of one run (header dropped) to the raw file, tagged with the
    # round, and their cache state to the state file (see the top): the floor read once
    # the run is over, and the one read after the run before it (a read while a run is
    # under way would slow it down).
    rows() {
        local got after before state
        got=$(grep -v '^impl,' | grep ',' | sed "s/^/$round,/" || true)
        [ -n "$got" ] || return 0
        echo "$got" >>"$raw"
        after=$(cache_state)
        before=$(cat "$prev_state")
        echo "$after" >"$prev_state"
        state=M
        [ "$before" != "$after" ] || state=$after
        echo "$got" | awk -F, -v OFS=, -v state="$state" '{ $NF = state; print }' >>"$states"
    }
    # mpi WHO NP PROG ARGS...: the MPI program PROG built for WHO (fmpl, mpich, openmpi).
    mpi() {
        local who=$1 n=$2 prog=$3
        shift 3
        case $who in
        fmpl) fmpl "$n" "$bin/$prog.fmpl" "$@" --impl=fmpl-mpi ;;
        mpich) mpich "$n" "$bin/$prog.mpich" "$@" --impl=mpich ;;
        openmpi) ompi "$n" "$bin/$prog.openmpi" "$@" --impl=openmpi ;;
        esac | rows
    }

    local sizes=${COMPARE_SIZES:-$(default_sizes)}
    local pp=(--csv "--sizes=8,1M,4M" --reps=5)
    local sweep=(--csv "--sizes=$sizes" --reps=5)
    local order=(fmpl mpich openmpi)
    echo "compare: $reps rounds, each: native ping-pong, collectives and RSS; MPI (ours, MPICH,"
    echo "  Open MPI) ping-pong/stream/bibw at sizes $sizes, sub-matrix, matching, collectives, RSS,"
    echo "  application proxies"
    for round in $(seq 1 "$reps"); do
        echo "  round $round/$reps ($((SECONDS - start)) s)"
        # the cache-line floor between the two first CPUs: on a guest whose vCPUs the host
        # moves it changes within seconds, and every library's figures with it
        [ "$(nproc)" -lt 2 ] || echo "# round $round: $("$bin/cacheline")" >>"$machine"
        fmpl 2 "$bin/fmpl_pingpong" "${pp[@]}" | rows
        fmpl 2 "$bin/fmpl_pingpong" "${pp[@]}" --mem=heap | rows
        for who in "${order[@]}"; do
            mpi "$who" 2 mpi_pingpong "${sweep[@]}"
        done
        for who in "${order[@]}"; do
            mpi "$who" 2 mpi_match --csv --depths=1,1024,8192 --reps=3
        done
        # incast (seed 002); MPICH busy-polls with 4 ranks on 2 CPUs: it may not finish
        for who in "${order[@]}"; do
            COMPARE_TIMEOUT=60 mpi "$who" 4 mpi_incast --csv --k=20000 || true
        done
        for np in 2 4; do
            fmpl $np "$bin/fmpl_coll" --csv --reps=5 \
                --mode=barrier,bcast,allreduce,bcast_persistent,allreduce_persistent | rows
            for who in "${order[@]}"; do
                mpi "$who" $np mpi_coll --csv --reps=5
            done
        done
        for who in "${order[@]}"; do
            mpi "$who" 4 mpi_neighbor --csv --reps=5
        done
        for who in "${order[@]}"; do
            mpi "$who" 4 mpi_offload --csv --reps=3
        done
        for np in 2 4; do
            for who in "${order[@]}"; do
                mpi "$who" $np mpi_io --csv --reps=5 "--dir=$iodir"
            done
        done
        fmpl 16 "$bin/fmpl_hello" | rows
        for who in "${order[@]}"; do
            mpi "$who" 16 mpi_hello
        done
        # One-sided: Open MPI with its working one-sided components (see the top).
        for who in "${order[@]}"; do
            OMPI_MCA_osc=sm,ucx mpi "$who" 2 mpi_rma --csv --reps=5
            OMPI_MCA_osc=sm,ucx mpi "$who" 4 mpi_rma --csv --reps=5 --mode=sync
        done
        for app in "${apps[@]}"; do
            for np in 2 4; do
                for who in "${order[@]}"; do
                    mpi "$who" $np "$app" --csv
                    # The strong-scaling size where every rank has a CPU (oversubscribed,
                    # MPICH's busy polling makes its thousands of small steps take minutes).
                    # shellcheck disable=SC2086 # the words of the strong-scaling size
                    [ "$np" -gt "$(nproc)" ] || mpi "$who" $np "$app" --csv ${apps_strong[$app]}
                done
            done
        done
        order=("${order[@]:1}" "${order[0]}") # the next round starts with the next library
    done
    # Robustness: once per run, after the rounds (a few minutes of its own).
    if [ "$robust" != 0 ]; then
        echo "  robustness: bench/robust.sh ($((SECONDS - start)) s)"
        # its progress here; its tables go into the report (they start at "# robust:")
        if ! ROBUST_OUT=bench/out/compare-$stamp-robust bench/robust.sh "$build" |
            awk '/^# robust:/ { quiet = 1 } !quiet { print "  " $0 }'; then
            echo "compare: bench/robust.sh failed: no robustness tables" >&2
        fi
    fi
    [ "$(nproc)" -lt 2 ] || echo "# at the end: $("$bin/cacheline")" >>"$machine"
    echo "# load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg);" \
        "measured in $((SECONDS - start)) s" >>"$machine"
    echo "compare: measured in $((SECONDS - start)) s"
}

if [ -n "$report_only" ]; then
    install_missing
    raw=$report_only
    stamp=$(basename "$raw" .csv)
    stamp=${stamp#compare-}
    mkdir -p bench/out
else
    measure
fi
out=bench/out/compare-$stamp
sum=$out-summary.csv

# 3. Medians over rounds (RSS: the mean over ranks of a round first), then the table.
# medians RAW OUT: the medians of RAW's rows, keyed impl,bench,mem,np,size,metric.
medians() {
    awk -F, 'NR > 1 {
        k = $2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7
        if ($3 == "rss") { k = $2 "|rss|" $4 "|" $5 "|" $6 "|peak_rss_mib"; s[$1 "|" k] += $8 / 1024; c[$1 "|" k]++ }
        else print k "," $8
    }
    END { for (rk in s) { split(rk, a, "|"); sub(/^[^|]*\|/, "", rk); print rk "," s[a[1] "|" rk] / c[a[1] "|" rk] } }' "$1" |
        sort -t, -k1,1 -k2,2g |
        awk -F, '
        # Median of the numbers (the same value in every round, such as a checksum, stays as
        # written); a key that only ever had "missing" (a library without that operation,
        # e.g. persistent collectives) stays "missing".
        function flush() {
            if (n) { m = same ? x[1] : n % 2 ? x[(n + 1) / 2] : (x[n / 2] + x[n / 2 + 1]) / 2; print key "," m }
            else if (miss) print key ",missing"
        }
        $1 != key { flush(); key = $1; n = 0; miss = 0; same = 1 }
        $2 == "missing" { miss = 1; next }
        { x[++n] = $2; if ($2 != x[1]) same = 0 }
        END { flush() }' | tr '|' ',' | sort >"$2"
}
medians "$raw" "$sum"
# The same over the runs in the fast cache state alone (see the top), when they were tagged.
fastsum=$out-fast-summary.csv
states=$out-state.csv
rm -f "$fastsum"
tagged=() # the report's extra inputs: the states and the fast-state medians
if [ -f "$states" ]; then
    tagged=("$states" "$fastsum")
    fastraw=$(mktemp)
    paste -d, "$raw" "$states" | awk -F, 'NR == 1 || $NF == "F"' | cut -d, -f1-8 >"$fastraw"
    medians "$fastraw" "$fastsum"
    rm -f "$fastraw"
fi

rm -f "$out-plot.dat" "$out-mpi-plot.dat" "$out-apps-plot.dat"
{
if [ -f "$out-machine.txt" ]; then
    cat "$out-machine.txt"
else
    echo "# no record of the machine ($out-machine.txt is missing): CPU model, load and versions unknown"
fi
awk -F, -v ncpu="$(nproc)" -v worse="$worse" -v plotdata="$out-plot.dat" \
    -v mpiplot="$out-mpi-plot.dat" -v appplot="$out-apps-plot.dat" -v sweepdat="$out-mpi-sweep.dat" -v subdat="$out-mpi-submatrix.dat" \
    -v fastfile="$fastsum" -v statefile="$states" '
# (the run states and the fast-state medians come first, when there are any)
FILENAME == statefile { if (FNR > 1) runstate[$2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7] = runstate[$2 "|" $3 "|" $4 "|" $5 "|" $6 "|" $7] $8; next }
FILENAME == fastfile { vf[$1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6] = $7; next }
{ v[$1 "|" $2 "|" $3 "|" $4 "|" $5 "|" $6] = $7
  if ($1 == "fmpl-mpi" || $1 == "mpich" || $1 == "openmpi") {
      if ($2 == "pingpong" || $2 == "stream" || $2 == "bibw") sizes[$5 + 0] = 1
      if ($2 ~ /^submatrix_n[0-9]+_z[0-9]+$/) sub_cases[$2 "|" $5] = 1
      if ($3 == "file") iosize[$2 "|" $4] = $5 # mpi_io: total bytes per bench and np
      # an application proxy: its problem sizes (the default and the strong-scaling one)
      if ($6 == "rate" && !(($2 "|" $4 "|" $5) in appseen)) { appseen[$2 "|" $4 "|" $5] = 1; appsize[$2 "|" $4] = appsize[$2 "|" $4] " " $5 }
  }
}
# A value: a number, "missing" (the library lacks the operation) or "" (not measured).
function get(impl, k) {
    if (usefast) return (impl "|" k) in vf ? vf[impl "|" k] : ""
    return (impl "|" k) in v ? v[impl "|" k] : ""
}
function isnum(x) { return x != "" && x != "missing" }
function num(x) { return isnum(x) ? x : "" }
function fmt(x) { return x == "" ? sprintf("%10s", "-") : x == "missing" ? sprintf("%10s", x) : sprintf("%10.3f", x) }
function ratio(a, b) { return (!isnum(a) || !isnum(b) || b == 0) ? sprintf("%9s", "-") : sprintf("%9.3g", a / b) }
function hs(n) { return n >= 1048576 && n % 1048576 == 0 ? n / 1048576 " MiB" : n >= 1024 && n % 1024 == 0 ? n / 1024 " KiB" : n " B" }
function hdr(us) { printf "%-42s %10s %10s %10s %9s %9s   %s\n", "benchmark", us, "MPICH", "Open MPI", "/MPICH", "/OpenMPI", "better" }
function nan(x) { return x == "" ? "NaN" : x }
# One table row: ours (impl us, key kours) against both peers (key kpeer).
function row(label, us, kours, kpeer, better, plotfile) {
    o = get(us, kours); m = get("mpich", kpeer); p = get("openmpi", kpeer)
    printf "%-42s %s %s %s %s %s   %s\n", label, fmt(o), fmt(m), fmt(p), ratio(o, m), ratio(o, p), better
    if (isnum(o) && isnum(m) && isnum(p))
        printf "%s\t%s\t%s\t%s\t%s\n", label, o, m, p, better > plotfile
}
function pp(label, kours, kpeer, better) { row(label, "fmpl", kours, kpeer, better, plotdata) }
function mp(label, k, better) { row(label, "fmpl-mpi", k, k, better, mpiplot) }
function ap(label, k, better) { row(label, "fmpl-mpi", k, k, better, appplot) }
# Sorts keys[1..n] numerically (insertion sort; n is small).
function nsort(keys, n,    i, j, t) {
    for (i = 2; i <= n; i++) { t = keys[i]; for (j = i - 1; j >= 1 && keys[j] + 0 > t + 0; j--) keys[j + 1] = keys[j]; keys[j + 1] = t }
}
# sub-matrix cases as "n|z|bench|size", ordered by n, then z.
function subkey(k,    a, b) { split(k, a, "|"); split(a[1], b, /[nz_]+/); return sprintf("%09d|%09d|%s|%s", b[2], b[3], a[1], a[2]) }
# How many times worse ours is than the faster peer (time: lower is better), or "".
function slowdown(k, lower,    o, m, p, best) {
    o = num(get("fmpl-mpi", k)); m = num(get("mpich", k)); p = num(get("openmpi", k))
    if (o == "" || o == 0 || (m == "" && p == "")) return ""
    if (lower) { best = m == "" ? p : p == "" ? m : (m < p ? m : p); return o / best }
    best = m == "" ? p : p == "" ? m : (m > p ? m : p); return best / o
}
# The cache states of the runs behind key k, as a note: those of ours and of the faster
# peer, one letter a round, and the factor from the fast-state runs alone when every library had
# one ("" for a report without states).
function fastnote(k, lower,    f, peer) {
    if (!(("fmpl-mpi|" k) in runstate)) return ""
    usefast = 1
    f = isnum(get("fmpl-mpi", k)) && isnum(get("mpich", k)) && isnum(get("openmpi", k)) ? slowdown(k, lower) : ""
    usefast = 0
    peer = faster(k, lower) == "MPICH" ? "mpich" : "openmpi"
    return sprintf(" (states %s / %s%s)", runstate["fmpl-mpi|" k], runstate[peer "|" k], f == "" ? "" : sprintf(", fast state %.2fx", f))
}
function faster(k, lower,    m, p) {
    m = num(get("mpich", k)); p = num(get("openmpi", k))
    if (m == "") return "Open MPI"; if (p == "") return "MPICH"
    return (lower ? m + 0 <= p + 0 : m + 0 >= p + 0) ? "MPICH" : "Open MPI"
}
END {
    print "== FMPL native API (fmpl_pingpong, fmpl_coll, fmpl_hello) against the peers running mpi_pingpong, mpi_coll, mpi_hello"
    hdr("FMPL")
    pp("latency 8 B [us]", "pingpong|malloc|2|8|latency_us", "pingpong|malloc|2|8|latency_us", "lower")
    pp("stream bw 1 MiB [GB/s]", "stream|malloc|2|1048576|bw_GBps", "stream|malloc|2|1048576|bw_GBps", "higher")
    pp("stream bw 4 MiB [GB/s]", "stream|malloc|2|4194304|bw_GBps", "stream|malloc|2|4194304|bw_GBps", "higher")
    pp("stream bw 1 MiB, heap [GB/s]", "stream|heap|2|1048576|bw_GBps", "stream|malloc|2|1048576|bw_GBps", "higher")
    pp("stream bw 4 MiB, heap [GB/s]", "stream|heap|2|4194304|bw_GBps", "stream|malloc|2|4194304|bw_GBps", "higher")
    pp("ping-pong bw 1 MiB [GB/s]", "pingpong|malloc|2|1048576|bw_GBps", "pingpong|malloc|2|1048576|bw_GBps", "higher")
    pp("ping-pong bw 4 MiB [GB/s]", "pingpong|malloc|2|4194304|bw_GBps", "pingpong|malloc|2|4194304|bw_GBps", "higher")
    for (np = 2; np <= 4; np += 2) {
        t = np > ncpu ? "*" : ""
        pp("barrier, " np " ranks" t " [us]", "barrier|malloc|" np "|0|time_us", "barrier|malloc|" np "|0|time_us", "lower")
        split("8 8192 1048576", sz, " "); split("8 B|8 KiB|1 MiB", sn, "|")
        for (i = 1; i <= 3; i++)
            pp("bcast " sn[i] ", " np " ranks" t " [us]", "bcast|malloc|" np "|" sz[i] "|time_us", "bcast|malloc|" np "|" sz[i] "|time_us", "lower")
        for (i = 1; i <= 3; i++)
            pp("allreduce " sn[i] ", " np " ranks" t " [us]", "allreduce|malloc|" np "|" sz[i] "|time_us", "allreduce|malloc|" np "|" sz[i] "|time_us", "lower")
        for (i = 1; i <= 3; i++)
            pp("persistent bcast " sn[i] ", " np " ranks" t " [us]", "bcast_persistent|malloc|" np "|" sz[i] "|time_us", "bcast_persistent|malloc|" np "|" sz[i] "|time_us", "lower")
        for (i = 1; i <= 3; i++)
            pp("persistent allreduce " sn[i] ", " np " ranks" t " [us]", "allreduce_persistent|malloc|" np "|" sz[i] "|time_us", "allreduce_persistent|malloc|" np "|" sz[i] "|time_us", "lower")
    }
    pp("peak RSS per rank, 16 ranks [MiB]", "rss|malloc|16|0|peak_rss_mib", "rss|malloc|16|0|peak_rss_mib", "lower")

    print ""
    print "== MPI: one source (mpi_pingpong, mpi_coll, mpi_hello) built with our mpicc, MPICH and Open MPI"
    hdr("FMPL-MPI")
    split("1 8 64 1024 4096 16384", ls, " ")
    for (i = 1; i <= 6; i++) mp("latency " hs(ls[i]) " [us]", "pingpong|malloc|2|" ls[i] "|latency_us", "lower")
    split("65536 1048576 4194304 16777216", bs, " ")
    for (i = 1; i <= 4; i++) mp("ping-pong bw " hs(bs[i]) " [GB/s]", "pingpong|malloc|2|" bs[i] "|bw_GBps", "higher")
    split("64 65536 1048576 4194304 16777216", ws, " ")
    for (i = 1; i <= 5; i++) mp("stream bw " hs(ws[i]) " [GB/s]", "stream|malloc|2|" ws[i] "|bw_GBps", "higher")
    for (i = 1; i <= 5; i++) mp("bibw " hs(ws[i]) " [GB/s]", "bibw|malloc|2|" ws[i] "|bw_GBps", "higher")
    ns = 0
    for (k in sub_cases) subs[++ns] = subkey(k)
    for (i = 2; i <= ns; i++) { t = subs[i]; for (j = i - 1; j >= 1 && subs[j] > t; j--) subs[j + 1] = subs[j]; subs[j + 1] = t }
    for (i = 1; i <= ns; i++) {
        split(subs[i], a, "|"); nn = a[1] + 0; zz = a[2] + 0; mm = a[4] / (8 * nn)
        mp("sub-matrix " mm "x" nn ", z=" zz " [us]", a[3] "|malloc|2|" a[4] "|latency_us", "lower")
        k = a[3] "|malloc|2|" a[4]
        printf "n=%d z=%d\t%s\t%s\t%s\t%s\t%s\t%s\n", nn, zz, nan(get("fmpl-mpi", k "|latency_us")), nan(get("mpich", k "|latency_us")),
            nan(get("openmpi", k "|latency_us")), nan(get("fmpl-mpi", k "|bw_GBps")), nan(get("mpich", k "|bw_GBps")),
            nan(get("openmpi", k "|bw_GBps")) > subdat
    }
    split("1024 8192", md, " ")
    for (i = 1; i <= 2; i++) {
        mp("matching, " md[i] " posted [ns/msg]", "match_posted|malloc|2|" md[i] "|ns_per_msg", "lower")
        mp("matching, " md[i] " unexpected [ns/msg]", "match_unexpected|malloc|2|" md[i] "|ns_per_msg", "lower")
    }
    mp("incast 3x20000x1 KiB, receiver RSS growth [MiB]", "incast|malloc|4|20000|rss_growth_MiB", "lower")
    mp("incast 3x20000x1 KiB, draining [ms]", "incast|malloc|4|20000|drain_ms", "lower")
    # mpi_coll: its bench names, and the labels (allgather and alltoall: size per block).
    split("8 8192 1048576", sz, " "); split("8 B|8 KiB|1 MiB", sn, "|")
    split("bcast bcast_persistent reduce allreduce allreduce_persistent allgather alltoall", cops, " ")
    split("bcast|persistent bcast|reduce|allreduce|persistent allreduce|allgather|alltoall", cnames, "|")
    nc = 0 # collective rows, for the "worse" list: ck[] keys, cl[] short labels
    for (np = 2; np <= 4; np += 2) {
        t = np > ncpu ? "*" : ""
        k = "barrier|malloc|" np "|0|time_us"
        mp("barrier, " np " ranks" t " [us]", k, "lower")
        ck[++nc] = k; cl[nc] = "barrier, " np " ranks" t
        for (c = 1; c <= 7; c++)
            for (i = 1; i <= 3; i++) {
                k = cops[c] "|malloc|" np "|" sz[i] "|time_us"
                mp(cnames[c] " " sn[i] (cops[c] ~ /^all(gather|toall)$/ ? "/rank" : "") ", " np " ranks" t " [us]", k, "lower")
                ck[++nc] = k; cl[nc] = cnames[c] " " sn[i] ", " np " ranks" t
            }
    }
    # mpi_neighbor: periodic 2-D Cartesian grid, 4 ranks, size per neighbour
    t = 4 > ncpu ? "*" : ""
    split("8 64 512 4096 65536", nz, " ")
    for (c = 1; c <= 2; c++)
        for (i = 1; i <= 5; i++) {
            nop = c == 1 ? "neighbor_allgather" : "neighbor_alltoall"
            k = nop "|malloc|4|" nz[i] "|time_us"
            mp(nop " " hs(nz[i]) ", 4 ranks" t " [us]", k, "lower")
            ck[++nc] = k; cl[nc] = nop " " hs(nz[i]) ", 4 ranks" t
        }
    mp("peak RSS per rank, 16 ranks [MiB]", "rss|malloc|16|0|peak_rss_mib", "lower")
    # mpi_rma: one-sided (passive target: op + MPI_Win_flush; Open MPI with osc sm,ucx).
    split("8 64 512 4096 65536 262144 1048576 4194304", rs, " ")
    for (i = 1; i <= 8; i++) mp("rma put " hs(rs[i]) " + flush [us]", "put_lat|malloc|2|" rs[i] "|latency_us", "lower")
    for (i = 1; i <= 8; i++) mp("rma get " hs(rs[i]) " + flush [us]", "get_lat|malloc|2|" rs[i] "|latency_us", "lower")
    for (i = 5; i <= 8; i++) mp("rma put bw " hs(rs[i]) " [GB/s]", "put_bw|malloc|2|" rs[i] "|bw_GBps", "higher")
    for (i = 5; i <= 8; i++) mp("rma get bw " hs(rs[i]) " [GB/s]", "get_bw|malloc|2|" rs[i] "|bw_GBps", "higher")
    mp("rma fetch_and_op 8 B + flush [us]", "fetch_and_op|malloc|2|8|latency_us", "lower")
    mp("rma compare_and_swap 8 B + flush [us]", "compare_and_swap|malloc|2|8|latency_us", "lower")
    mp("rma accumulate 8 B + flush [us]", "accumulate|malloc|2|8|latency_us", "lower")
    mp("rma lock/unlock exclusive, empty [us]", "lock_unlock|malloc|2|0|latency_us", "lower")
    for (np = 2; np <= 4; np += 2) {
        t = np > ncpu ? "*" : ""
        mp("rma fence, " np " ranks" t " [us]", "fence|malloc|" np "|0|latency_us", "lower")
        mp("rma PSCW, " np " ranks" t " [us]", "pscw|malloc|" np "|0|latency_us", "lower")
    }
    mp("rma shared-window ping-pong 8 B [us]", "shm_pingpong|malloc|2|8|latency_us", "lower")
    if (4 > ncpu) printf "* more ranks than the %d CPUs: oversubscribed\n", ncpu
    print "missing: the library has no such operation (Open MPI 4 has the persistent ones as MPIX_*_init)"

    # MPI-IO (mpi_io): bandwidth, higher is better.
    print ""
    print "== MPI-IO (mpi_io: 2-D array through a subarray view, collective; contiguous blocks, independent; file system in the header)"
    hdr("FMPL-MPI")
    split("coll_write_subarray coll_read_subarray indep_write_contig indep_read_contig", iob, " ")
    split("coll. write, subarray|coll. read, subarray|indep. write, contiguous|indep. read, contiguous", ion, "|")
    nio = 0 # rows for the "worse" list: iok[] keys, iol[] labels
    for (np = 2; np <= 4; np += 2)
        for (i = 1; i <= 4; i++) {
            if (!((iob[i] "|" np) in iosize)) continue
            t = np > ncpu ? "*" : ""
            k = iob[i] "|file|" np "|" iosize[iob[i] "|" np] "|bw_GBps"
            mp(ion[i] ", " np " ranks" t " [GB/s]", k, "higher")
            iok[++nio] = k; iol[nio] = ion[i] ", " np " ranks" t
        }
    if (nio == 0) print "(no mpi_io rows)"

    # Persistent collectives against the blocking call, per library.
    print ""
    print "== persistent / blocking (mpi_coll: MPI_Bcast_init or MPI_Allreduce_init once, then MPI_Start + MPI_Wait per call)"
    printf "%-42s %10s %10s %10s   %s\n", "time per call, persistent / blocking", "FMPL-MPI", "MPICH", "Open MPI", "better"
    split("fmpl-mpi mpich openmpi", libs, " ")
    split("bcast allreduce", pops, " ")
    for (np = 2; np <= 4; np += 2) {
        t = np > ncpu ? "*" : ""
        for (c = 1; c <= 2; c++)
            for (i = 1; i <= 3; i++) {
                line = sprintf("%-42s", pops[c] " " sn[i] ", " np " ranks" t)
                for (l = 1; l <= 3; l++) {
                    pk = get(libs[l], pops[c] "_persistent|malloc|" np "|" sz[i] "|time_us")
                    line = line " " (pk == "missing" ? fmt(pk) : sprintf("%10s", ratio(pk, get(libs[l], pops[c] "|malloc|" np "|" sz[i] "|time_us"))))
                }
                print line "   lower"
            }
    }

    # Collectives without their callers (seed 003, mpi_offload at 4 ranks).
    print ""
    print "== Offload (mpi_offload, 4 ranks: one call = a single start + wait after a barrier, slowest rank; delayed rank = completion of the others / 50 ms that one rank spends away from MPI after the start, worst rank, lower is better; overlap % while computing as long as one call takes, worst rank, higher is better)"
    hdr("FMPL-MPI")
    split("ibcast iallreduce bcast_persistent allreduce_persistent", oops, " ")
    split("8 262144 1048576", osz, " ")
    t = 4 > ncpu ? "*" : ""
    for (c = 1; c <= 4; c++)
        for (i = 1; i <= 3; i++)
            mp("one call, " oops[c] " " hs(osz[i]) t " [us]", oops[c] "|malloc|4|" osz[i] "|once_us", "lower")
    for (c = 1; c <= 4; c++)
        for (i = 1; i <= 3; i++)
            mp("delayed rank, " oops[c] " " hs(osz[i]) t, "delayed_" oops[c] "|malloc|4|" osz[i] "|delay_frac", "lower")
    for (c = 1; c <= 4; c++)
        for (i = 1; i <= 3; i++)
            mp("overlap %, " oops[c] " " hs(osz[i]) t, "overlap_" oops[c] "|malloc|4|" osz[i] "|overlap_pct", "higher")

    # The application proxies: rates (higher is better), and the checksums compared.
    print ""
    print "== Application proxies (bench/apps/app_*: the same source built three times; default and (strong)-scaling sizes; rate, higher is better)"
    hdr("FMPL-MPI")
    split("wavefront halo2d halo3d transpose bucketsort particles", apn, " ")
    split("Mcells/s|Mcells/s|Mcells/s|GB/s|Mkeys/s|Mparticle-steps/s", apu, "|")
    na = 0; cklist = "" # proxy rows, for the "worse" list: ak[] keys, al[] labels
    for (ai = 1; ai <= 6; ai++)
        for (np = 2; np <= 4; np += 2) {
            if (!((apn[ai] "|" np) in appsize)) continue
            t = np > ncpu ? "*" : ""
            nsz = split(appsize[apn[ai] "|" np], szl, " ")
            nsort(szl, nsz) # ascending: the default (the largest) is printed first
            for (si = nsz; si >= 1; si--) {
                k = apn[ai] "|malloc|" np "|" szl[si]
                lab = apn[ai] (si == nsz ? "" : " (strong)") ", " np " ranks" t
                ap(lab " [" apu[ai] "]", k "|rate", "higher")
                ak[++na] = k "|rate"; al[na] = lab
                c1 = get("fmpl-mpi", k "|checksum"); c2 = get("mpich", k "|checksum"); c3 = get("openmpi", k "|checksum")
                if (c1 != "" && ((c2 != "" && c2 != c1) || (c3 != "" && c3 != c1)))
                    cklist = cklist sprintf("\n  %s: FMPL-MPI %s, MPICH %s, Open MPI %s", lab, c1, c2 == "" ? "-" : c2, c3 == "" ? "-" : c3)
            }
        }
    if (na == 0) print "(no application proxy rows)"
    else if (cklist == "") print "checksums: the same with the three libraries at each rank count"
    else print "CHECKSUMS DIFFER between the libraries (the proxies compute the same thing with any MPI):" cklist
    # Where the proxies time goes: the share of their timed runs inside MPI calls (the rest
    # is their own computation, the same code for the three libraries), which bounds what
    # any library can gain there.
    if (na > 0) {
        print ""
        print "== Time in MPI calls on the proxies (% of the timed runs, mean over the ranks)"
        print "   ceiling: ours / better peer if our time in MPI were nil and our computation ran as fast as the better peer, 1 / (1 - its share); not for 4 ranks* (oversubscribed)"
        printf "%-42s %10s %10s %10s %10s\n", "proxy", "FMPL-MPI", "MPICH", "Open MPI", "ceiling"
        for (i = 1; i <= na; i++) {
            k = ak[i]
            rm = get("mpich", k); ro = get("openmpi", k)
            sub(/\|rate$/, "|mpi_pct", k)
            best = (ro != "" && (rm == "" || ro + 0 > rm + 0)) ? get("openmpi", k) : get("mpich", k)
            # oversubscribed (*): the share includes waiting descheduled while the other
            # rank on the CPU computes, so it bounds nothing there
            ceil = (best != "" && best + 0 < 100 && al[i] !~ /\*/) ? sprintf("%.2f", 100 / (100 - best)) : "-"
            printf "%-42s %10s %10s %10s %10s\n", al[i], fmt(get("fmpl-mpi", k)), fmt(get("mpich", k)), fmt(get("openmpi", k)), ceil
        }
    }

    # The whole MPI sweep: the plot data, and where ours is behind the faster peer.
    n = 0
    for (s in sizes) keys[++n] = s
    nsort(keys, n)
    split("pingpong|latency_us|lower|ping-pong latency;pingpong|bw_GBps|higher|ping-pong bandwidth;stream|bw_GBps|higher|stream bandwidth;bibw|bw_GBps|higher|bidirectional bandwidth", kinds, ";")
    for (i = 1; i <= n; i++) {
        line = keys[i]
        for (j = 1; j <= 4; j++) {
            split(kinds[j], kd, "|"); k = kd[1] "|malloc|2|" keys[i] "|" kd[2]
            line = line "\t" nan(get("fmpl-mpi", k)) "\t" nan(get("mpich", k)) "\t" nan(get("openmpi", k))
        }
        print line > sweepdat
    }
    printf "\nFMPL-MPI more than %gx worse than the faster peer (full MPI sweep, collectives, proxies; factor, faster peer):\n", worse
    any = 0
    for (j = 1; j <= 4; j++) {
        if (j == 2) continue # ping-pong bandwidth is the latency again
        split(kinds[j], kd, "|"); list = ""
        for (i = 1; i <= n; i++) {
            k = kd[1] "|malloc|2|" keys[i] "|" kd[2]; f = slowdown(k, kd[3] == "lower")
            if (f != "" && f > worse) list = list (list == "" ? "" : ", ") sprintf("%s %.2fx %s%s", hs(keys[i]), f, faster(k, kd[3] == "lower"), fastnote(k, kd[3] == "lower"))
        }
        if (list != "") { printf "  %s: %s\n", kd[4], list; any = 1 }
    }
    list = ""
    for (i = 1; i <= ns; i++) {
        split(subs[i], a, "|"); k = a[3] "|malloc|2|" a[4] "|latency_us"; f = slowdown(k, 1)
        if (f != "" && f > worse) list = list (list == "" ? "" : ", ") sprintf("n=%d z=%d %.2fx %s%s", a[1], a[2], f, faster(k, 1), fastnote(k, 1))
    }
    if (list != "") { printf "  sub-matrix latency: %s\n", list; any = 1 }
    list = ""
    for (i = 1; i <= nc; i++) {
        f = slowdown(ck[i], 1)
        if (f != "" && f > worse) list = list (list == "" ? "" : "; ") sprintf("%s %.2fx %s%s", cl[i], f, faster(ck[i], 1), fastnote(ck[i], 1))
    }
    if (list != "") { printf "  collectives: %s\n", list; any = 1 }
    list = ""
    for (i = 1; i <= na; i++) {
        f = slowdown(ak[i], 0)
        if (f != "" && f > worse) list = list (list == "" ? "" : "; ") sprintf("%s %.2fx %s%s", al[i], f, faster(ak[i], 0), fastnote(ak[i], 0))
    }
    if (list != "") { printf "  application proxies: %s\n", list; any = 1 }
    list = ""
    for (i = 1; i <= nio; i++) {
        f = slowdown(iok[i], 0)
        if (f != "" && f > worse) list = list (list == "" ? "" : "; ") sprintf("%s %.2fx %s%s", iol[i], f, faster(iok[i], 0), fastnote(iok[i], 0))
    }
    if (list != "") { printf "  MPI-IO: %s\n", list; any = 1 }
    if (!any) print "  none"
}' "${tagged[@]}" "$sum"
if [ -f "$states" ]; then
    echo
    echo "== cache state of the runs (see the top: F fast, S slow, M mixed; rows of each library)"
    awk -F, 'NR > 1 { n[$2 "|" $8]++; t[$2]++ }
    END { for (i in t) printf "%-10s F %d  S %d  M %d  of %d\n", i, n[i "|F"], n[i "|S"], n[i "|M"], t[i] }' \
        "$states" | sort
fi
if [ -f "$out-robust.txt" ]; then
    echo
    echo "== robustness (bench/robust.sh, once per run): separate jobs of mpi_robust per library," \
        "idle and under background load; the slowest and the median job, no best-of"
    cat "$out-robust.txt"
fi
} >"$out.txt"
cat "$out.txt"
echo
echo "ratios = ours / peer: below 1 is better for us for latency, time and memory; above 1 for bandwidth and rates"
echo "raw rows: $raw; medians: $sum; tables: $out.txt"
[ ! -f "$out-robust.csv" ] || echo "robustness rows: $out-robust.csv"

# 4. Plots.
if ! command -v gnuplot >/dev/null; then
    echo "compare: gnuplot not installed: no plots"
else
    # widest: the MPI ratios, about 80 bars since mpi_coll's extra collectives
    term="pngcairo size 1200,700 font ',10'" wide="pngcairo size 1600,800 font ',10'"
    widest="pngcairo size 2600,900 font ',10'"
    if ! gnuplot -e "set terminal pngcairo" 2>/dev/null; then
        term="png size 1200,700" wide="png size 1600,800" widest="png size 2600,900"
    fi
    sizetics='("1 B" 1, "16 B" 16, "256 B" 256, "4 KiB" 4096, "64 KiB" 65536, "1 MiB" 1048576, "16 MiB" 16777216)'
    libs=(FMPL-MPI MPICH "Open MPI")
    plots=()
    if [ -s "$out-mpi-sweep.dat" ]; then
        gnuplot <<GP
set terminal $term
set termoption noenhanced
set datafile separator "\t"
set datafile missing "NaN"
set output "$out-latency.png"
set title "MPI ping-pong latency (one-way), 2 ranks: mpi_pingpong built three times"
set logscale xy
set xtics $sizetics
set xlabel "message size"
set ylabel "latency [us]"
set key top left
set grid
plot "$out-mpi-sweep.dat" using 1:2 with linespoints title "${libs[0]}", \
     "" using 1:3 with linespoints title "${libs[1]}", \
     "" using 1:4 with linespoints title "${libs[2]}"
set output "$out-bandwidth.png"
set terminal $term
set termoption noenhanced
set multiplot layout 1,3 title "MPI bandwidth, 2 ranks (1 GB = 1e9 B)"
set ylabel "bandwidth [GB/s]"
set title "ping-pong (size / latency)"
plot "$out-mpi-sweep.dat" using 1:5 with linespoints title "${libs[0]}", \
     "" using 1:6 with linespoints title "${libs[1]}", \
     "" using 1:7 with linespoints title "${libs[2]}"
set title "streaming (window of 64)"
plot "$out-mpi-sweep.dat" using 1:8 with linespoints title "${libs[0]}", \
     "" using 1:9 with linespoints title "${libs[1]}", \
     "" using 1:10 with linespoints title "${libs[2]}"
set title "bidirectional (window of 64 each way)"
plot "$out-mpi-sweep.dat" using 1:11 with linespoints title "${libs[0]}", \
     "" using 1:12 with linespoints title "${libs[1]}", \
     "" using 1:13 with linespoints title "${libs[2]}"
unset multiplot
GP
        plots+=("$out-latency.png" "$out-bandwidth.png")
    fi
    if [ -s "$out-mpi-submatrix.dat" ]; then
        gnuplot <<GP
set terminal $term
set termoption noenhanced
set output "$out-submatrix.png"
set datafile separator "\t"
set datafile missing "NaN"
set style data histograms
set style histogram clustered
set xtics rotate by -30
set bmargin 5
set style fill solid 0.8
set grid ytics
set multiplot layout 1,2 title "Sub-matrix ping-pong: one MPI_Type_vector(4096, n, z+1, MPI_DOUBLE) each way (seed 004)"
set title "one-way latency"
set ylabel "latency [us]"
plot "$out-mpi-submatrix.dat" using 2:xtic(1) title "${libs[0]}", "" using 3 title "${libs[1]}", \
     "" using 4 title "${libs[2]}"
set title "bandwidth = 4096 * n * 8 B / latency"
set ylabel "bandwidth [GB/s]"
plot "$out-mpi-submatrix.dat" using 5:xtic(1) title "${libs[0]}", "" using 6 title "${libs[1]}", \
     "" using 7 title "${libs[2]}"
unset multiplot
GP
        plots+=("$out-submatrix.png")
    fi
    for kind in native mpi apps; do
        if [ $kind = native ]; then
            dat=$out-plot.dat png=$out.png who=FMPL size=$wide
        elif [ $kind = mpi ]; then
            dat=$out-mpi-plot.dat png=$out-mpi-ratios.png who=FMPL-MPI size=$widest
        else
            dat=$out-apps-plot.dat png=$out-apps-ratios.png who=FMPL-MPI size=$term
        fi
        [ -s "$dat" ] || continue
        gnuplot <<GP
set terminal $size
set termoption noenhanced
set output "$png"
set datafile separator "\t"
set style data histograms
set style fill solid 0.8
set logscale y
set grid ytics
set title "$who / peer, medians over rounds"
set ylabel "$who / peer (time: <1 better; bandwidth, rate: >1 better)"
set xtics rotate by -40 font ",8"
set bmargin 12
set rmargin 14
plot "$dat" using (\$2/\$3):xtic(1) title "$who/MPICH", \
     "" using (\$2/\$4) title "$who/Open MPI"
GP
        plots+=("$png")
    done
    echo "plots: ${plots[*]}"
fi
[ -n "$report_only" ] || echo "compare: done in $((SECONDS - start)) s"
