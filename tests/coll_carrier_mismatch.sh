#!/usr/bin/env bash
# coll_carrier_mismatch.sh FMPLRUN PROGRAM — collectives whose ranks disagree on the size
# (rank 0 at 40 B or 8 B, the others at 16 KiB or 1 MiB, and the reverse; allreduce,
# reduce, allgather, alltoall, bcast; 2, 3, 4 and 7 ranks) end the job within seconds with
# a message that names the call, under the default error handler; none hangs (fmplrun
# --timeout would say so). Where the sizes put some ranks on the shared mailboxes and
# others on point-to-point messages (the message says so; at least MIN_CARRIER cases),
# the job ends under MPI_ERRORS_RETURN too (coll_impl.h in src/mpi, "The watch on a
# blocking run"). Under MPI_ERRORS_RETURN every other case ends within seconds as well:
# every rank returns (some with an error), or a rank left waiting by one that failed
# ends the job. PROGRAM is mpi_coll_mismatch ("carrier OP ROOT OTHER fatal|return").
set -u
fmplrun=$1
prog=$2
min_carrier=16
fail=0
carrier=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
names=(MPI_Allreduce MPI_Reduce MPI_Allgather MPI_Alltoall MPI_Bcast)
carrier_text="runs this call over"
# run NP OP SIZES MODE: 0 when the job ended in time with a message naming the call
run() {
    local start rc took what
    start=$(date +%s)
    # shellcheck disable=SC2086
    "$fmplrun" -n "$1" --timeout 30 "$prog" carrier "$2" $3 "$4" \
        >"$out" 2>&1
    rc=$?
    took=$(($(date +%s) - start))
    what="np $1, ${names[$2]} of $3 bytes (rank 0, others), $4"
    if grep -qiE "timeout|timed out|signal|core dumped" "$out" || [ "$took" -gt 10 ]; then
        echo "FAIL: $what: hung or crashed (${took} s):"
    elif [ "$rc" -eq 0 ] && [ "$4" = return ] && grep -qE "the call returned [1-9]" "$out"; then
        return 0 # every rank returned, one at least with an error
    elif [ "$rc" -eq 0 ]; then
        echo "FAIL: $what: the job succeeded"
    elif ! grep -qF "${names[$2]}" "$out" ||
        ! grep -qE "give different sizes|disagree on the collective's size|failed this call" "$out"; then
        echo "FAIL: $what: no message naming ${names[$2]} and the sizes:"
    else
        return 0
    fi
    cat "$out"
    return 1
}
for np in 2 3 4 7; do
    for op in 0 1 2 3 4; do
        for sizes in "40 16384" "16384 40" "8 1048576" "1048576 8"; do
            run "$np" "$op" "$sizes" fatal || fail=1
            split=0
            grep -qF "$carrier_text" "$out" && split=1 && carrier=$((carrier + 1))
            run "$np" "$op" "$sizes" return || fail=1
            if [ "$split" -eq 1 ] && ! grep -qF "$carrier_text" "$out"; then
                echo "FAIL: np $np op $op $sizes: no carrier message under MPI_ERRORS_RETURN"
                cat "$out"
                fail=1
            fi
        done
    done
done
echo "$carrier cases put the ranks on different carriers"
if [ "$carrier" -lt "$min_carrier" ]; then
    echo "FAIL: fewer than $min_carrier cases across the carriers: the sizes no longer test it"
    fail=1
fi
[ "$fail" -eq 0 ] && echo "every mismatched collective ended the job with the message"
exit "$fail"
