#!/usr/bin/env bash
# robust.sh [BUILD] — how FMPL's small-message latency holds up against MPICH's and Open
# MPI's, job after job, idle and under background load (issue 13, item 3).
#
# Best-of-N figures hide what users see: latency that collapses under other tenants' work,
# and whole jobs that run many times slower than others because of where the scheduler
# put their ranks. So this runs many separate jobs of bench/mpi_robust.c (ROBUST_NP ranks,
# default 2; each job: ROBUST_REPS repetitions of ROBUST_ITERS iterations of an 8-byte
# ping-pong, a barrier and an 8-byte allreduce; the job's figure is the median of its
# repetitions) and
# reports the slowest job and the median job, never the best.
#
# For each condition of ROBUST_CONDITIONS (default "idle busy1 bursty2"):
#   idle     no load started (other tenants' work on a shared machine aside);
#   busyN    N processes of bench/load.c --busy (one busy loop each);
#   burstyN  N processes of load --bursty=ROBUST_BURST (default 5,5: 5 ms busy, 5 ms
#            asleep);
# it starts the load, runs ROBUST_JOBS jobs (default 8) per library, interleaved job by job
# (ours, MPICH, Open MPI, ours, ...) so that all three see the same conditions, and stops
# the load. Ours runs under BUILD/bin/fmplrun, MPICH's under mpiexec.mpich, Open MPI's
# under mpirun.openmpi, each with its default options (placement and binding included:
# that is what users get). Every job runs under `timeout ROBUST_TIMEOUT` (default 120 s);
# a job that times out counts as slower than any finished job and is reported as such,
# a job that fails is reported and left out of the figures.
#
# Then, per condition, a table: for each library and benchmark the slowest job's median
# and the median job's median (the median over jobs), the slowest / median spread, and
# the ratios ours/MPICH, ours/Open MPI and ours / the better peer of the slowest-job and
# the median-job figures; the jobs' medians in job order follow.
#
# Variables: ROBUST_JOBS (8), ROBUST_NP (2: the ranks per job; more than the CPUs
# oversubscribes the host, as CI's test runs do), ROBUST_REPS (10), ROBUST_ITERS (20000), ROBUST_CONDITIONS
# ("idle busy1 bursty2"), ROBUST_BURST (5,5), ROBUST_TIMEOUT (120 s), ROBUST_OUT (output
# path without extension; default bench/out/robust-<time>). The default run (72 jobs)
# should take 1.5-2 minutes on the quiet 2-CPU development VM (one job per library and
# condition took 11 s), and takes up to about 10 under heavy load from other tenants
# (578 s measured at load average 8-17, one job timing out).
# Output: ROBUST_OUT.csv, the raw rows condition,job,impl,bench,mem,np,size,metric,value
# (mpi_robust's rows, plus per job bench=robust_job rows: metric status = ok, timeout or
# failed, metric wall_s = the job's wall time); ROBUST_OUT.txt, a header with the date,
# CPU model, CPU count, kernel, library versions and load average, then the tables.
# Needs a build with the peers' programs (make BUILD=build with mpicc.mpich and
# mpicc.openmpi installed, or make compare); a peer whose program or launcher is missing
# is skipped with a warning.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
bin=$build/bin
jobs=${ROBUST_JOBS:-8}
np=${ROBUST_NP:-2}
reps=${ROBUST_REPS:-10}
iters=${ROBUST_ITERS:-20000}
conditions=${ROBUST_CONDITIONS:-idle busy1 bursty2}
burst=${ROBUST_BURST:-5,5}
job_timeout=${ROBUST_TIMEOUT:-120}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# as in compare.sh (Open MPI's default single-copy mechanism may not work in a container)
export OMPI_MCA_btl_vader_single_copy_mechanism=${OMPI_MCA_btl_vader_single_copy_mechanism:-cma}
start=$SECONDS

for v in ROBUST_JOBS="$jobs" ROBUST_NP="$np" ROBUST_REPS="$reps" ROBUST_ITERS="$iters" ROBUST_TIMEOUT="$job_timeout"; do
    [[ ${v#*=} =~ ^[1-9][0-9]*$ ]] ||
        { echo "robust: ${v%%=*} must be a positive integer, not '${v#*=}'" >&2; exit 2; }
done
[ "$np" -ge 2 ] || { echo "robust: ROBUST_NP must be at least 2, not $np" >&2; exit 2; }
[[ $burst =~ ^[0-9]+(\.[0-9]+)?,[0-9]+(\.[0-9]+)?$ ]] ||
    { echo "robust: ROBUST_BURST must be BUSY_MS,SLEEP_MS, not '$burst'" >&2; exit 2; }
for c in $conditions; do
    [[ $c =~ ^(idle|busy[1-9][0-9]*|bursty[1-9][0-9]*)$ ]] ||
        { echo "robust: unknown condition '$c' (idle, busyN, burstyN)" >&2; exit 2; }
done
for p in fmplrun load mpi_robust.fmpl fmpl-info; do
    [ -x "$bin/$p" ] || { echo "robust: $bin/$p was not built (make BUILD=$build)" >&2; exit 1; }
done
# The libraries, in the order their jobs alternate.
impls=(fmpl-mpi)
for peer in mpich openmpi; do
    launcher=mpiexec.mpich
    [ $peer = openmpi ] && launcher=mpirun.openmpi
    if [ -x "$bin/mpi_robust.$peer" ] && command -v $launcher >/dev/null; then
        impls+=("$peer")
    else
        echo "robust: $bin/mpi_robust.$peer or $launcher missing: $peer skipped" >&2
    fi
done

# Load processes and the running job are always stopped, whatever ends the script.
load_pids=()
job_pid=
tmp=$(mktemp -d)
stop_load() {
    if [ ${#load_pids[@]} -gt 0 ]; then
        kill "${load_pids[@]}" 2>/dev/null || true
        wait "${load_pids[@]}" 2>/dev/null || true
        load_pids=()
    fi
}
cleanup() {
    # timeout passes the signal on to the job's whole process group
    [ -z "$job_pid" ] || { kill -TERM "$job_pid" 2>/dev/null || true; wait "$job_pid" 2>/dev/null || true; }
    stop_load
    rm -rf "$tmp"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# start_load CONDITION: the load processes of a condition, in the background. Each also
# ends after an upper bound of the condition's time, and with this script (load.c).
start_load() {
    local c=$1 n=0 args=() cap
    case $c in
    busy*) n=${c#busy} args=(--busy) ;;
    bursty*) n=${c#bursty} args=("--bursty=$burst") ;;
    esac
    cap=$((jobs * ${#impls[@]} * (job_timeout + 15) + 60))
    for _ in $(seq 1 "$n"); do
        "$bin/load" "${args[@]}" "--seconds=$cap" &
        load_pids+=($!)
    done
    [ "$n" -eq 0 ] || sleep 0.5 # let the load get going
}

describe() {
    case $1 in
    idle) echo "no load started" ;;
    busy1) echo "1 busy loop (load --busy)" ;;
    busy*) echo "${1#busy} busy loops (load --busy)" ;;
    bursty1) echo "1 bursty load (load --bursty=$burst: ms busy,ms asleep)" ;;
    bursty*) echo "${1#bursty} bursty loads (load --bursty=$burst: ms busy,ms asleep)" ;;
    esac
}

mkdir -p bench/out
out=${ROBUST_OUT:-bench/out/robust-$(date +%Y%m%d-%H%M%S)}
raw=$out.csv
echo "condition,job,impl,bench,mem,np,size,metric,value" >"$raw"
header=$tmp/header
{
    echo "# robust: $(date -u '+%Y-%m-%d %H:%M UTC'); CPU $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -n 1)" \
        "(family $(lscpu 2>/dev/null | sed -n 's/^CPU family: *//p' | head -n 1)," \
        "model $(lscpu 2>/dev/null | sed -n 's/^Model: *//p' | head -n 1)), $(nproc) CPUs; kernel $(uname -r)"
    echo "# $("$bin/fmpl-info" | head -n 1); MPICH" \
        "$(mpiexec.mpich --version 2>/dev/null | sed -n 's/^ *Version: *//p' | head -n 1);" \
        "$(mpirun.openmpi --version 2>/dev/null | head -n 1)"
    echo "# $jobs jobs per library and condition, $np ranks, $reps repetitions of $iters iterations" \
        "per job; job timeout $job_timeout s; libraries: ${impls[*]}"
    echo "# load average at the start: $(cut -d ' ' -f 1-3 /proc/loadavg)"
} >"$header"
notes=$tmp/conditions # condition|description|load average before its load|seconds

# run_job IMPL CONDITION JOB: one job, its rows appended to the raw file; sets `word`, for
# the progress line (the wall time, or timeout / failed). Runs in this shell, not in a
# command substitution, so that the traps see job_pid.
run_job() {
    local who=$1 c=$2 j=$3 rc t0 t1 status wall
    local args=(--csv "--reps=$reps" "--iters=$iters" "--impl=$who")
    local cmd
    case $who in
    fmpl-mpi) cmd=("$bin/fmplrun" -n "$np" "$bin/mpi_robust.fmpl") ;;
    mpich) cmd=(mpiexec.mpich -n "$np" "$bin/mpi_robust.mpich") ;;
    openmpi) cmd=(mpirun.openmpi --oversubscribe -n "$np" "$bin/mpi_robust.openmpi") ;;
    esac
    t0=$(date +%s%N)
    # In the background, so that a signal to this script is handled while the job runs.
    timeout -k 10 "$job_timeout" "${cmd[@]}" "${args[@]}" >"$tmp/out" 2>"$tmp/err" </dev/null &
    job_pid=$!
    if wait "$job_pid"; then rc=0; else rc=$?; fi
    job_pid=
    t1=$(date +%s%N)
    wall=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", (b - a) / 1e9 }')
    status=ok
    if [ $rc -eq 124 ] || [ $rc -eq 137 ]; then
        status=timeout
    elif [ $rc -ne 0 ] || [ "$(grep -c ',median_us,' "$tmp/out")" -lt 3 ]; then
        status=failed
        echo "robust: $who, $c, job $j: exit status $rc; its last lines:" >&2
        { tail -n 5 "$tmp/err"; tail -n 3 "$tmp/out"; } | sed 's/^/    /' >&2
    fi
    grep -v '^impl,' "$tmp/out" | grep ',' | sed "s/^/$c,$j,/" >>"$raw" || true
    echo "$c,$j,$who,robust_job,-,2,0,status,$status" >>"$raw"
    echo "$c,$j,$who,robust_job,-,2,0,wall_s,$wall" >>"$raw"
    if [ $status = ok ]; then word=$(printf '%s %.2fs' "$who" "$wall"); else word="$who $status"; fi
}

echo "robust: conditions $conditions; $jobs jobs each of ${impls[*]} ($np ranks, $reps x $iters iterations)"
for c in $conditions; do
    c_start=$SECONDS
    c_load=$(cut -d ' ' -f 1-3 /proc/loadavg)
    start_load "$c"
    for j in $(seq 1 "$jobs"); do
        line="  $c job $j/$jobs:"
        for who in "${impls[@]}"; do
            run_job "$who" "$c" "$j"
            line="$line $word"
        done
        echo "$line"
    done
    stop_load
    echo "$c|$(describe "$c")|$c_load|$((SECONDS - c_start))" >>"$notes"
done
echo "# load average at the end: $(cut -d ' ' -f 1-3 /proc/loadavg); measured in $((SECONDS - start)) s" >>"$header"

# The tables. Timed-out jobs are +inf (slower than anything measured), failed ones left out.
{
cat "$header"
awk -F, -v impls="${impls[*]}" -v timeout_s="$job_timeout" -v jobs="$jobs" -v reps="$reps" -v iters="$iters" '
BEGIN { INF = 1e300; nl = split(impls, lib, " ")
        label["fmpl-mpi"] = "FMPL-MPI"; label["mpich"] = "MPICH"; label["openmpi"] = "Open MPI"
        nb = split("pingpong barrier allreduce", bench, " ")
        bname["pingpong"] = "pingpong 8 B, one-way"; bname["barrier"] = "barrier"; bname["allreduce"] = "allreduce 8 B" }
FNR == NR { split($0, a, "|"); nc++; cond[nc] = a[1]; desc[nc] = a[2]; cload[nc] = a[3]; csec[nc] = a[4]; next }
FNR == 1 { next }
$8 == "status" { st[$1 "|" $3 "|" $2] = $9; next }
$8 == "median_us" { sub(/^robust_/, "", $4); med[$1 "|" $3 "|" $4 "|" $2] = $9 }
function isnum(x) { return x != "" && x < INF }
function fmt(x) { return x == "" ? sprintf("%10s", "-") : x >= INF ? sprintf("%10s", "timeout") : sprintf("%10.3f", x) }
function ratio(a, b) {
    if (a == "" || b == "") return sprintf("%9s", "-")
    if (a >= INF || b >= INF) return sprintf("%9s", "t/o")
    return b == 0 ? sprintf("%9s", "-") : sprintf("%9.3g", a / b)
}
# figures of one condition, library and benchmark: slow[] and mid[] (INF for a timeout)
function figures(c, l, b,    j, n, v, s, x, i, k, t) {
    n = 0
    for (j = 1; j <= jobs; j++) {
        s = st[c "|" l "|" j]
        if (s == "timeout") v[++n] = INF
        else if (s == "ok" && (c "|" l "|" b "|" j) in med) v[++n] = med[c "|" l "|" b "|" j] + 0
    }
    for (i = 2; i <= n; i++) { t = v[i]; for (k = i - 1; k >= 1 && v[k] > t; k--) v[k + 1] = v[k]; v[k + 1] = t }
    if (n == 0) { slow[l] = ""; mid[l] = ""; return }
    slow[l] = v[n]
    if (n % 2) mid[l] = v[(n + 1) / 2]
    else mid[l] = (v[n / 2] >= INF || v[n / 2 + 1] >= INF) ? INF : (v[n / 2] + v[n / 2 + 1]) / 2
}
# ours against both peers and the better of them (the lower figure; a peer that timed out
# is the worse one)
function row(name, stat, f,    line, better, m, p, i) {
    m = f["mpich"]; p = f["openmpi"]
    better = m == "" ? p : p == "" ? m : (m + 0 <= p + 0 ? m : p)
    line = sprintf("%-24s %-16s", name, stat)
    for (i = 1; i <= nl; i++) line = line " " fmt(f[lib[i]])
    printf "%s %s %s %s\n", line, ratio(f["fmpl-mpi"], m), ratio(f["fmpl-mpi"], p), ratio(f["fmpl-mpi"], better)
}
END {
    for (ci = 1; ci <= nc; ci++) {
        c = cond[ci]
        printf "\n== %s: %s; load average before it %s; %d s\n", c, desc[ci], cload[ci], csec[ci]
        line = sprintf("%-24s %-16s", "benchmark [us]", "job")
        for (i = 1; i <= nl; i++) line = line sprintf(" %10s", label[lib[i]])
        printf "%s %9s %9s %9s\n", line, "/MPICH", "/OpenMPI", "/better"
        for (bi = 1; bi <= nb; bi++) {
            b = bench[bi]
            delete slow; delete mid
            for (i = 1; i <= nl; i++) figures(c, lib[i], b)
            row(bname[b], "slowest", slow)
            row("", "median", mid)
            line = sprintf("%-24s %-16s", "", "slowest/median")
            for (i = 1; i <= nl; i++) {
                l = lib[i]
                line = line (isnum(slow[l]) && isnum(mid[l]) && mid[l] > 0 ? sprintf(" %9.2fx", slow[l] / mid[l]) : sprintf(" %10s", "-"))
            }
            print line
        }
        line = "jobs:"
        for (i = 1; i <= nl; i++) {
            l = lib[i]; ok = 0; to = ""; bad = ""
            for (j = 1; j <= jobs; j++) {
                s = st[c "|" l "|" j]
                if (s == "ok") ok++
                else if (s == "timeout") to = to (to == "" ? "" : ",") j
                else bad = bad (bad == "" ? "" : ",") j
            }
            line = line sprintf(" %s %d/%d ok%s%s%s", label[l], ok, jobs, to == "" ? "" : ", timed out (>" timeout_s " s): job " to,
                bad == "" ? "" : ", failed: job " bad, i < nl ? ";" : "")
        }
        print line
        print "job medians in job order [us]:"
        for (bi = 1; bi <= nb; bi++)
            for (i = 1; i <= nl; i++) {
                l = lib[i]; line = sprintf("  %-10s %-9s", bench[bi], label[l])
                for (j = 1; j <= jobs; j++) {
                    s = st[c "|" l "|" j]; k = c "|" l "|" bench[bi] "|" j
                    line = line " " (s == "timeout" ? "timeout" : s == "ok" && k in med ? sprintf("%.3g", med[k]) : "failed")
                }
                print line
            }
    }
    print ""
    print "slowest / median: the slowest and the median of the jobs'"'"' figures (a job'"'"'s figure: the median of its"
    print reps " repetitions of " iters " iterations; the median of an even number of jobs: the mean of the middle"
    print "two); ratios ours / peer, below 1 better for us; /better: ours / the"
    print "better peer; timeout: the job did not finish in " timeout_s " s (slower than any finished job); t/o: a ratio"
    print "involving a timed-out figure; -: no figure (library skipped, or every job failed)"
}' "$notes" "$raw"
} >"$out.txt"
cat "$out.txt"
echo "raw rows: $raw; tables: $out.txt"
