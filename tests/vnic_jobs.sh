#!/bin/sh
# vnic_jobs.sh FMPLRUN PROG NA NB [ENV...] — two separately started jobs of NA and NB
# ranks reach each other through the udp transport (tests/vnic_jobs.c,
# tests/udp_forge_jobs.c); both must end with every rank's OK line ("PROG a rank R: OK").
set -u
fmplrun=$1 prog=$2 na=$3 nb=$4
name=$(basename "$prog")
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
env "$@" "$fmplrun" -n "$na" --timeout 90 "$prog" a "$dir" >"$dir/out.a" 2>&1 &
pa=$!
env "$@" "$fmplrun" -n "$nb" --timeout 90 "$prog" b "$dir" >"$dir/out.b" 2>&1 &
pb=$!
wait $pa
ra=$?
wait $pb
rb=$?
cat "$dir/out.a" "$dir/out.b"
[ $ra -eq 0 ] && [ $rb -eq 0 ] || { echo "FAIL: exit codes $ra $rb"; exit 1; }
[ "$(grep -c "^$name a rank [0-9]*: OK\$" "$dir/out.a")" -eq "$na" ] || { echo "FAIL: a"; exit 1; }
[ "$(grep -c "^$name b rank [0-9]*: OK\$" "$dir/out.b")" -eq "$nb" ] || { echo "FAIL: b"; exit 1; }
echo PASS
