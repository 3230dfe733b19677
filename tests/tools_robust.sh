#!/bin/sh
# tools_robust.sh FMPLRUN PROGRAM REPS ITERS
# Runs bench/mpi_robust (our build, PROGRAM = bin/mpi_robust.fmpl) at 2 ranks with --csv
# and checks its rows, not its figures: the CSV header, then for each of robust_pingpong
# (size 8), robust_barrier (size 0) and robust_allreduce (size 8) exactly REPS rep_us rows
# and one median_us row, every value a positive number, and nothing else. Prints PASS.
set -u
fmplrun=$1 prog=$2 reps=$3 iters=$4
out=$(mktemp)
trap 'rm -f "$out"' EXIT
"$fmplrun" --timeout 100 -n 2 "$prog" --csv --impl=fmpl-mpi "--reps=$reps" "--iters=$iters" >"$out"
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: mpi_robust exited with status $rc" >&2; exit 1; }
awk -F, -v reps="$reps" '
NR == 1 { if ($0 != "impl,bench,mem,np,size,metric,value") { print "FAIL: header: " $0; bad = 1 }; next }
{
    size["robust_pingpong"] = 8; size["robust_barrier"] = 0; size["robust_allreduce"] = 8
    if (NF != 7 || $1 != "fmpl-mpi" || !($2 in size) || $3 != "malloc" || $4 != 2 || $5 != size[$2] ||
        ($6 != "rep_us" && $6 != "median_us") || $7 !~ /^[0-9]+(\.[0-9]+)?$/ || $7 + 0 <= 0) {
        print "FAIL: unexpected row: " $0; bad = 1; next
    }
    n[$2 "," $6]++
}
END {
    split("robust_pingpong robust_barrier robust_allreduce", b, " ")
    for (i = 1; i <= 3; i++) {
        if (n[b[i] ",rep_us"] != reps) { printf "FAIL: %d %s rep_us rows, not %d\n", n[b[i] ",rep_us"], b[i], reps; bad = 1 }
        if (n[b[i] ",median_us"] != 1) { printf "FAIL: %d %s median_us rows, not 1\n", n[b[i] ",median_us"], b[i]; bad = 1 }
    }
    exit bad
}' "$out" >&2 || exit 1
echo PASS
