#!/bin/sh
# mpi_connect.sh FMPLRUN PROG NS NC — a server job of NS ranks and a client job of NC ranks,
# started separately, connect (tests/mpi_connect.c); both must print their OK line.
set -u
fmplrun=$1 prog=$2 ns=$3 nc=$4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
"$fmplrun" -n "$ns" --timeout 90 "$prog" server "$dir" >"$dir/out.s" 2>&1 &
ps=$!
"$fmplrun" -n "$nc" --timeout 90 "$prog" client "$dir" >"$dir/out.c" 2>&1 &
pc=$!
wait $ps
rs=$?
wait $pc
rc=$?
cat "$dir/out.s" "$dir/out.c"
[ $rs -eq 0 ] && [ $rc -eq 0 ] || { echo "FAIL: exit codes $rs $rc"; exit 1; }
grep -q '^mpi_connect server: OK$' "$dir/out.s" || { echo "FAIL: server"; exit 1; }
grep -q '^mpi_connect client: OK$' "$dir/out.c" || { echo "FAIL: client"; exit 1; }
echo PASS
