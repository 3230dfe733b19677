#!/usr/bin/env bash
# coll_mismatch_fatal.sh FMPLRUN PROGRAM — broadcasts whose ranks disagree on the size
# (pipelined chains: a root longer or shorter by whole segments, by a part of one, or by
# more than a segment count can tell; sizes that take different channels or algorithms)
# end the job under the default error handler,
# with a message that names the call and the cause, at 2, 3, 4 and 7 ranks; none hangs
# (fmplrun --timeout would say so). PROGRAM is mpi_coll_mismatch ("fatal ROOT OTHER").
set -u
fmplrun=$1
prog=$2
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for np in 2 3 4 7; do
    # the first five: chains of different lengths; then sizes on two sides of the tiny /
    # small channel boundary (248 B), of FMPL_COLL_BCAST_TREE_MAX (8 KiB: a binomial tree
    # on a small channel against a chain on the big one), or of both
    for sizes in "400000 100000" "100000 400000" "131072 196608" "100000 110000" "70000 65536" \
        "40 4000" "4000 40" "4000 20000" "20000 4000" "40 20000" "20000 40" "8192 8200"; do
        # shellcheck disable=SC2086
        "$fmplrun" -n "$np" --timeout 60 "$prog" fatal $sizes >"$out" 2>&1
        rc=$?
        what="np $np, bcast of $sizes bytes (root, others)"
        if [ "$rc" -eq 0 ]; then
            echo "FAIL: $what: the job succeeded"
            cat "$out"
            fail=1
        elif ! grep -qF "MPI_Bcast" "$out" || ! grep -qF "disagree on the collective's size" "$out"; then
            echo "FAIL: $what: no message naming MPI_Bcast and the size:"
            cat "$out"
            fail=1
        elif grep -qiE "timeout|timed out|signal|core dumped" "$out"; then
            echo "FAIL: $what: hung or crashed:"
            cat "$out"
            fail=1
        fi
    done
done
[ "$fail" -eq 0 ] && echo "all mismatched broadcasts ended the job with the message"
exit "$fail"
