#!/bin/sh
# mpi_names_fatal.sh BINDIR PROG — a name-service error under MPI_ERRORS_ARE_FATAL ends
# the job with a message that names the call, the class and the service (PROG is
# tests/mpi_names.c).
set -u
bin=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }

"$bin/mpiexec" -n 2 --timeout 60 "$prog" fatal >"$out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "fatal lookup: job exited with $rc"
grep -q "FMPL MPI error in MPI_Lookup_name: .*: no service named 'no such service' is published" "$out" ||
    fail "no message naming the service"
echo PASS
