#!/usr/bin/env bash
# hydra_test.sh — FMPL programs under MPICH's Hydra launcher (mpiexec.hydra), which
# serves PMI-1 over PMI_FD like our fmplrun:
#
#     hydra_test.sh run NP PROGRAM [ARGS...]   PROGRAM at NP ranks must exit 0
#     hydra_test.sh fail CASE HELPER           a failing rank ends the job (see below)
#
# Ranks start with -launcher fork (every rank on this host; no ssh needed), plus the
# options in $HYDRA_ARGS (e.g. -pmi-port: PMI over TCP, PMI_PORT + PMI_ID). A run's
# output is checked by the program itself; "run" also checks that the job left
# nothing in /dev/shm (entries are named "fmpl-<kvsname>-...", Hydra's kvsname being
# "kvs_<mpiexec pid>_..."). Cases of "fail", with HELPER = boot_launcher_helper at 3
# ranks while the others wait in a fence:
#   early   rank 1 exits with status 7: the job ends non-zero, no rank survives
#   kill    rank 1 dies of SIGKILL: the same
#   abort   rank 1 calls boot_abort(5): the job ends with status 5 and the message
# each within 30 s (the test's own timeout is a backstop for a hang).
# Exits 77 (CTest SKIP_RETURN_CODE) when mpiexec.hydra is not installed (Debian: mpich).
set -u
command -v mpiexec.hydra >/dev/null || {
    echo "SKIP: mpiexec.hydra not found (Debian: apt-get install mpich)"
    exit 77
}
TMP=$(mktemp -d)
TAG="fmplhydra-$$-$RANDOM"
trap 'rm -rf "$TMP"' EXIT
fail() {
    echo "FAIL: $*" >&2
    head -c 4000 "$TMP/out" >&2
    exit 1
}

# hydra NP ARGS...: mpiexec.hydra with a 60 s limit of its own; sets RC, ELAPSED_MS
# and PID (mpiexec's, which names the job's kvsname).
hydra() {
    local np=$1 t
    shift
    t=$(date +%s%N)
    timeout -k 5 60 bash -c 'echo $$ >"$0"; exec "$@"' "$TMP/pid" \
        mpiexec.hydra -launcher fork ${HYDRA_ARGS:-} -n "$np" "$@" >"$TMP/out" 2>&1
    RC=$?
    PID=$(cat "$TMP/pid")
    [ $RC -ne 124 ] || fail "mpiexec.hydra did not end in 60 s"
    ELAPSED_MS=$((($(date +%s%N) - t) / 1000000))
    echo "hydra: -n $np $(basename "$1") ${*:2}: exit $RC in $ELAPSED_MS ms"
}
# The job's /dev/shm entries, TEST entries (the helper's own) removed first.
shm_left() {
    rm -f /dev/shm/fmpl-kvs_"$PID"_*-test[0-9]
    ls /dev/shm | grep "^fmpl-kvs_${PID}_"
}

case ${1:-} in
run)
    [ $# -ge 3 ] || fail "usage: $0 run NP PROGRAM [ARGS...]"
    np=$2
    shift 2
    hydra "$np" "$@"
    cat "$TMP/out"
    [ $RC -eq 0 ] || fail "exit status $RC"
    left=$(shm_left)
    [ -z "$left" ] || fail "/dev/shm entries left: $left"
    ;;
fail)
    [ $# -eq 3 ] || fail "usage: $0 fail CASE HELPER"
    case $2 in
    early) hydra 3 "$3" early 1 7 "$TAG" ;;
    kill) hydra 3 "$3" kill 1 9 "$TAG" ;;
    abort) hydra 3 "$3" abort 1 5 "$TAG" ;;
    *) fail "unknown case $2" ;;
    esac
    shm_left >/dev/null
    [ $RC -ne 0 ] || fail "$2: the job exited 0"
    [ "$ELAPSED_MS" -lt 30000 ] || fail "$2: the job took $ELAPSED_MS ms to end"
    if [ "$2" = abort ]; then
        [ $RC -eq 5 ] || fail "abort: exit status $RC, expected 5"
        grep -q "rank 1 aborts the job (exit code 5): helper abort from rank 1" "$TMP/out" ||
            fail "abort: no message"
    fi
    sleep 0.2
    left=$(pgrep -f "$TAG" | tr '\n' ' ')
    [ -z "$left" ] || {
        pkill -KILL -f "$TAG"
        fail "$2: ranks survived the job: $left"
    }
    ;;
*)
    fail "usage: $0 run NP PROGRAM [ARGS...] | fail CASE HELPER"
    ;;
esac
echo PASS
