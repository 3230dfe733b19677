#!/usr/bin/env bash
# tests/mpich/run.sh MPIEXEC OUTDIR FOLDER... — run the MPICH test programs that
# build.sh built in OUTDIR, folder by folder, as their testlists say: each test is
# `MPIEXEC -n NP ./prog args...` in OUTDIR/FOLDER with the testlist's env= settings.
# A test passes when its output has a "No Errors" line and the job exits 0 (the
# suite's convention); resultTest=TestStatus/TestErrFatal tests pass when the job
# exits non-zero on its own (the launcher, not our kill, ended it).
# Writes OUTDIR/results.txt: "folder/KEY NP STATUS SECONDS" per test (KEY: list.sh),
# STATUS one of pass, fail, timeout, nobuild, skip; output of each test in
# OUTDIR/logs/FOLDER/. Prints a count per folder. Exit 0 (judging is check.sh's job).
# Environment:
#   MPICH_TIMEOUT   seconds per test (default 180, MPICH's runtests default: its big
#                   dtpools tests spend 30 s checking their own buffers on this host;
#                   a larger timeLimit= in the testlist wins); the launcher gets it as
#                   MPIEXEC_TIMEOUT, and the job is killed (process group, SIGTERM then
#                   SIGKILL) 15 s after it. The 10 slowest tests are printed at the end.
#   MPICH_PARALLEL  tests at a time (default 2)
#   MPICH_ALONE_NP  a test of this many ranks or more runs with no other test beside it
#                   (default: 4 per CPU)
#   MPICH_ONLY      a file of "folder/KEY NP" lines (e.g. the pass lists): run only those
#   MPICH_MEM_GB    skip tests whose mem= needs more GB (default 4)
#   MPICH_NP_MAX    run tests that ask for more ranks with this many (default: no cap)
#   MPICH_NONSTRICT globs of folder/program run although marked strict=false (default
#                   "coll/p_*": MPI-4.0's persistent collectives, marked only because
#                   they began as MPICH extensions); other strict=false tests use
#                   functions MPI-3.0 removed and are skipped, as MPICH's runtests does
#                   with --enable-strictmpi
set -euo pipefail
if [ $# -lt 3 ]; then
    echo "usage: $0 MPIEXEC OUTDIR FOLDER..." >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mpiexec=$1
outdir=$(cd "$2" && pwd)
shift 2
case $mpiexec in
    */*) mpiexec=$(cd "$(dirname "$mpiexec")" && pwd)/$(basename "$mpiexec") ;;
    *) mpiexec=$(command -v "$mpiexec") || { echo "run.sh: no $1" >&2; exit 1; } ;;
esac
export FMPL_MPICH_MPIEXEC=$mpiexec FMPL_MPICH_OUTDIR=$outdir
export MPICH_TIMEOUT=${MPICH_TIMEOUT:-180} MPICH_MEM_GB=${MPICH_MEM_GB:-4}
export MPICH_NP_MAX=${MPICH_NP_MAX:-0} MPICH_NONSTRICT=${MPICH_NONSTRICT-coll/p_*}
par=${MPICH_PARALLEL:-2}
export MPICH_ALONE_NP=${MPICH_ALONE_NP:-$((4 * $(nproc)))}
results=$outdir/results.txt
: >"$results.tmp"

# One test: the arguments are "folder prog np key options...".
run1() {
    local folder=$1 prog=$2 np=$3 key=$4
    shift 4
    local args=() envs=() margs=() rtest='' tlimit='' mem='' o
    for o in "$@"; do
        case $o in
            arg=*) args+=("${o#arg=}") ;;
            env=*) envs+=("${o#env=}") ;;
            mpiexecarg=*) margs+=("${o#mpiexecarg=}") ;;
            resultTest=*) rtest=${o#resultTest=} ;;
            timeLimit=*) tlimit=${o#timeLimit=} ;;
            mem=*) mem=${o#mem=} ;;
            strict=[Ff][Aa][Ll][Ss][Ee])
                local g ok=0
                for g in $MPICH_NONSTRICT; do
                    # shellcheck disable=SC2053
                    [[ $folder/$prog == $g ]] && ok=1
                done
                if [ $ok -eq 0 ]; then
                    local log=$FMPL_MPICH_OUTDIR/logs/$folder/$(echo "$key" | tr '/ ' '__').np$np.log
                    mkdir -p "$(dirname "$log")"
                    echo "skipped: strict=false (not MPI-standard; see MPICH_NONSTRICT)" >"$log"
                    echo "$folder/$key $np skip 0" >>"$FMPL_MPICH_OUTDIR/results.txt.tmp"
                    return 0
                fi
                ;;
        esac
    done
    local res=$FMPL_MPICH_OUTDIR/results.txt.tmp
    local dir=$FMPL_MPICH_OUTDIR/$folder
    local log=$FMPL_MPICH_OUTDIR/logs/$folder/$(echo "$key" | tr '/ ' '__').np$np.log
    mkdir -p "$(dirname "$log")"
    if [ -n "$mem" ] && awk -v m="$mem" -v l="$MPICH_MEM_GB" 'BEGIN { exit !(m > l) }'; then
        echo "skipped: needs ${mem} GB (MPICH_MEM_GB=$MPICH_MEM_GB)" >"$log"
        echo "$folder/$key $np skip 0" >>"$res"
        return 0
    fi
    if [ ! -x "$dir/$prog" ]; then
        echo "not built (see build-$folder.log)" >"$log"
        echo "$folder/$key $np nobuild 0" >>"$res"
        return 0
    fi
    local t=$MPICH_TIMEOUT run_np=$np
    if [ -n "$tlimit" ] && [ "$tlimit" -gt "$t" ] 2>/dev/null; then t=$tlimit; fi
    if [ -n "$tlimit" ] && [ -n "$rtest" ]; then t=$tlimit; fi
    if [ "$MPICH_NP_MAX" -gt 0 ] && [ "$np" -gt "$MPICH_NP_MAX" ]; then run_np=$MPICH_NP_MAX; fi
    # A test of MPICH_ALONE_NP ranks or more runs alone: two such jobs at once on a small
    # host oversubscribe it many times over, and their time limits assume they do not.
    local lockfd lockmode=-s
    [ "$run_np" -ge "$MPICH_ALONE_NP" ] && lockmode=-x
    exec {lockfd}>>"$FMPL_MPICH_OUTDIR/run.lock"
    flock "$lockmode" "$lockfd"
    local t0 t1 rc
    t0=$(date +%s.%N)
    set +e
    # io's programs share file names (testfile, test.ord) in their working directory: each
    # runs in a directory of its own there, so tests running at the same time do not clash.
    local wd=$dir
    if [ "$folder" = io ]; then
        wd=$dir/run.$(printf '%s' "$key" | tr -c 'A-Za-z0-9_.' '_')
        mkdir -p "$wd"
    fi
    (
        cd "$wd" && exec env "${envs[@]}" MPIEXEC_TIMEOUT="$t" \
            timeout -k 5 $((t + 15)) "$FMPL_MPICH_MPIEXEC" -n "$run_np" "${margs[@]}" \
            "$(cd "$dir" && pwd)/$prog" "${args[@]}"
    ) >"$log" 2>&1 </dev/null
    rc=$?
    set -e
    t1=$(date +%s.%N)
    exec {lockfd}>&-
    local secs status
    secs=$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.1f", b - a }')
    echo "exit status $rc after $secs s: $FMPL_MPICH_MPIEXEC -n $run_np ${margs[*]} ./$prog ${args[*]} (env: ${envs[*]})" >>"$log"
    if [ -n "$rtest" ]; then
        # The launcher must end these itself (exit status 124 from fmplrun's own
        # timeout is fine); only our kill, 15 s later, is a timeout.
        if awk -v s="$secs" -v t="$t" 'BEGIN { exit !(s >= t + 14) }'; then
            status=timeout
        elif [ $rc -ne 0 ]; then status=pass; else status=fail; fi
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ] || awk -v s="$secs" -v t="$t" 'BEGIN { exit !(s >= t) }'; then
        status=timeout
    elif [ $rc -eq 0 ] && grep -Eq '^\s*No [Ee]rrors\s*$' "$log"; then
        status=pass
    else
        status=fail
    fi
    echo "$folder/$key $np $status $secs" >>"$res"
}
export -f run1

mkdir -p "$outdir/logs"
only=${MPICH_ONLY:-}
start=$(date +%s)
for folder in "$@"; do
    (cd "$outdir" && "$here/list.sh" "$folder") | while read -r prog np key rest; do
        if [ -n "$only" ] && ! grep -qxF "$folder/$key $np" "$only"; then continue; fi
        printf '%s\0' "$folder $prog $np $key $rest"
    done
done | xargs -0 -r -P "$par" -n 1 bash -c 'set -f; run1 $1' run1 || true
sort -k1,1 -k2,2n "$results.tmp" >"$results"
rm -f "$results.tmp"
for folder in "$@"; do
    awk -v f="$folder" 'index($1, f "/") == 1 { n++; s[$3]++ }
        END { printf "run.sh: %-9s %4d tests: %d pass, %d fail, %d timeout, %d nobuild, %d skip\n", f, n, s["pass"], s["fail"], s["timeout"], s["nobuild"], s["skip"] }' "$results"
done
echo "run.sh: slowest tests (seconds):"
# (awk reads to the end: with head, sort could die of SIGPIPE and pipefail end the run)
sort -k4,4gr "$results" | awk 'NR <= 10 { printf "run.sh:   %7.1f  %s (%s ranks, %s)\n", $4, $1, $2, $3 }'
echo "run.sh: $(wc -l <"$results") tests in $(($(date +%s) - start)) s; results in $results"
