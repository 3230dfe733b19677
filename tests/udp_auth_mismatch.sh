#!/bin/sh
# udp_auth_mismatch.sh FMPLRUN PROGRAM — ranks that disagree on FMPL_UDP_AUTH (rank 1 off,
# rank 0 on) refuse to start, with a message naming the setting and both values; the
# job fails quickly instead of hanging on packets the other side refuses.
set -u
fmplrun=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# shellcheck disable=SC2016
FMPL_TRANSPORT=udp timeout 60 "$fmplrun" -n 2 --timeout 30 sh -c \
    'if [ "$PMI_RANK" = 1 ]; then FMPL_UDP_AUTH=off; export FMPL_UDP_AUTH; fi; exec "$0"' \
    "$prog" >"$out" 2>&1
rc=$?
cat "$out"
[ $rc -ne 0 ] || { echo "FAIL: the job succeeded with mismatched FMPL_UDP_AUTH" >&2; exit 1; }
[ $rc -ne 124 ] || { echo "FAIL: the job hung" >&2; exit 1; }
grep -q "FMPL_UDP_AUTH is off on rank 1 but on on rank 0: every rank must use the same setting" \
    "$out" || { echo "FAIL: no message naming the mismatch" >&2; exit 1; }
echo "PASS"
