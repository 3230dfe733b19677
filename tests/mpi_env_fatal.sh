#!/bin/sh
# mpi_env_fatal.sh BINDIR PROG — MPI_Abort and fatal errors end the whole job through
# mpiexec, with the code and a message.
set -u
bin=$1 prog=$2
out=$(mktemp)
trap 'rm -f "$out"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }

# MPI_Abort(MPI_COMM_WORLD, 7) on rank 1 of 3: the job ends with status 7.
"$bin/mpiexec" -n 3 --timeout 60 "$prog" abort >"$out" 2>&1
rc=$?
[ $rc -eq 7 ] || fail "MPI_Abort job exited with $rc, expected 7"
grep -q "MPI_Abort(MPI_COMM_WORLD, 7)" "$out" || fail "no MPI_Abort message"

# mpirun is the same launcher; a singleton MPI_Abort works too.
"$bin/mpirun" -np 1 --timeout 60 "$prog" abort >"$out" 2>&1
rc=$?
[ $rc -eq 7 ] || fail "mpirun -np 1 MPI_Abort exited with $rc, expected 7"
"$prog" abort >"$out" 2>&1
rc=$?
[ $rc -eq 7 ] || fail "singleton MPI_Abort exited with $rc, expected 7"

# An error under the default MPI_ERRORS_ARE_FATAL ends the job with a message.
"$bin/mpiexec" -n 3 --timeout 60 "$prog" fatal >"$out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "fatal error: job exited with $rc"
grep -q "FMPL MPI error in MPI_Comm_get_attr: invalid communicator" "$out" ||
    fail "no fatal error message"

# A call before MPI_Init is fatal too.
"$bin/mpiexec" -n 2 --timeout 60 "$prog" before >"$out" 2>&1
rc=$?
[ $rc -ne 0 ] && [ $rc -ne 124 ] || fail "call before MPI_Init: job exited with $rc"
grep -q "FMPL MPI error in MPI_Comm_set_errhandler" "$out" || fail "no message before init"
echo PASS
