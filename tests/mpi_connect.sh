#!/bin/sh
# mpi_connect.sh FMPLRUN PROG NS NC [ENV...] — a server job of NS ranks and a client job of
# NC ranks, started separately, connect (tests/mpi_connect.c); both must print their OK
# line. ENV (VAR=value...) goes to both jobs, FMPL_PORT_TIMEOUT_MS=2000 first; with
# MISMATCH=1 in the environment, the server runs with FMPL_UDP_AUTH=on, the client with
# off, and both run the "authmismatch" mode.
set -u
fmplrun=$1 prog=$2 ns=$3 nc=$4
shift 4
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
senv= cenv= mode=
if [ "${MISMATCH:-0}" = 1 ]; then
    senv=FMPL_UDP_AUTH=on cenv=FMPL_UDP_AUTH=off mode=authmismatch
fi
env FMPL_PORT_TIMEOUT_MS=2000 "$@" $senv "$fmplrun" -n "$ns" --timeout 90 "$prog" server "$dir" $mode >"$dir/out.s" 2>&1 &
ps=$!
env FMPL_PORT_TIMEOUT_MS=2000 "$@" $cenv "$fmplrun" -n "$nc" --timeout 90 "$prog" client "$dir" $mode >"$dir/out.c" 2>&1 &
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
