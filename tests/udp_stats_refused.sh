#!/bin/sh
# udp_stats_refused.sh FMPLRUN UDP_FORGE — FMPL_UDP_STATS=1 prints the packets each rank
# refused (foreign, corrupt or forged, replayed, stale, truncated, malformed): udp_forge's
# rank 0 (the attacked one) shows its forged 15, and nonzero foreign and replayed counts;
# rank 1 (never attacked) shows zeros.
set -u
fmplrun=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
FMPL_TRANSPORT=udp FMPL_UDP_STATS=1 timeout 60 "$fmplrun" -n 2 --timeout 30 "$prog" >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -eq 0 ] || { echo "FAIL: udp_forge exited with status $rc" >&2; exit 1; }
grep -Eq 'rank 0: .*refused: foreign [1-9][0-9]*, corrupt or forged 15, replayed [1-9][0-9]*, stale [0-9]+, truncated 0, malformed 0' "$out" ||
    { echo "FAIL: rank 0's refused counters missing or wrong" >&2; exit 1; }
grep -Eq 'rank 1: .*refused: foreign 0, corrupt or forged 0, replayed 0, stale [0-9]+, truncated 0, malformed 0' "$out" ||
    { echo "FAIL: rank 1's refused counters missing or wrong" >&2; exit 1; }
echo "PASS"
