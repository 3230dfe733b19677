#!/usr/bin/env bash
# slurm_test.sh — FMPL programs under Slurm's srun --mpi=pmi2 (which serves PMI-1 on
# the same socket) on a private one-node Slurm cluster started for the test:
#
#     slurm_test.sh BOOT_BASIC HELPER MPI_PROGRAM...
#
# Starts munged, slurmctld and slurmd from a configuration generated in a temporary
# directory (which also holds their key, state, spool and logs; the daemons listen on
# loopback ports chosen at random), waits until the node is idle, then runs with
# srun --mpi=pmi2: BOOT_BASIC at 1, 2 and 3 tasks (its own checks: rank, size,
# key-value exchange, the longest PMI-1 put line, one node), each MPI_PROGRAM at 2 and
# 3 tasks over shared memory and at 3 over udp (content checks; its
# "NAME: ... N ranks ... ok" line), BOOT_BASIC without --mpi=pmi2 (refused with a
# message), and HELPER (boot_launcher_helper) with a rank that exits early and one
# that aborts (the job ends non-zero, soon). Checks exit codes, output, and that no
# job left anything in /dev/shm. The daemons are stopped at the end, however the
# script ends (even by SIGKILL: see daemon()).
# Exits 77 (CTest SKIP_RETURN_CODE) when Slurm or munge is not installed (Debian:
# slurmctld slurmd slurm-client munge) or the script does not run as root (slurmd
# launches tasks as their owner, which needs root).
set -u
SKIP=77
skip() {
    echo "SKIP: $*"
    exit $SKIP
}
[ $# -ge 2 ] || {
    echo "usage: $0 BOOT_BASIC HELPER MPI_PROGRAM..." >&2
    exit 2
}
BOOT_BASIC=$1
HELPER=$2
shift 2
for tool in slurmctld slurmd srun sinfo scancel munged setpriv; do
    command -v $tool >/dev/null ||
        skip "$tool not found: install Slurm (Debian: apt-get install slurmctld slurmd slurm-client munge)"
done
[ "$(id -u)" -eq 0 ] || skip "a private Slurm cluster needs root (slurmd), and this runs as $(id -un)"

TMP=$(mktemp -d /tmp/fmpl-slurm.XXXXXX)
chmod 711 "$TMP" # munged wants its socket directory searchable by all
pids=()
cleanup() {
    local p
    # a step still running (the script was interrupted): cancel it while slurmctld lives
    [ ${#pids[@]} -lt 3 ] || scancel --quiet --user=root 2>/dev/null
    for p in "${pids[@]}"; do
        kill -TERM "$p" 2>/dev/null
    done
    for p in "${pids[@]}"; do
        for _ in $(seq 1 50); do
            kill -0 "$p" 2>/dev/null || break
            sleep 0.1
        done
        kill -KILL "$p" 2>/dev/null
        wait "$p" 2>/dev/null
    done
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM
# daemon PROGRAM ARGS...: runs in the foreground of a background job, and is killed
# when this script dies, even by SIGKILL (a CTest timeout), which no trap can catch
# (a job step running then is left to its own end, and so is TMP).
daemon() { exec setpriv --pdeathsig KILL "$@"; }

fail() {
    echo "FAIL: $*" >&2
    for f in out slurmctld.log slurmd.log munged.log; do
        [ -s "$TMP/$f" ] && {
            echo "--- $f (last 30 lines):" >&2
            tail -n 30 "$TMP/$f" >&2
        }
    done
    exit 1
}

host=$(hostname -s)
# slurmctld on port, slurmd on port + 1: two ports nothing uses now (any state in
# /proc/net/tcp{,6}, local or remote: a cautious test)
port_busy() { grep -q "$(printf ':%04X ' "$1")" /proc/net/tcp /proc/net/tcp6 2>/dev/null; }
for _ in $(seq 1 50); do
    port=$((20000 + RANDOM % 20000))
    port_busy $port || port_busy $((port + 1)) || break
done
# Job ids start at a random number: the kvsname is "<job id>.<step id>", so names in
# /dev/shm ("fmpl-<job id>_0-...") differ from any earlier run's.
first_job=$((1000 + RANDOM * 1000 + RANDOM % 1000))
job=$((first_job - 1))

# munge: its own key, socket, log and seed in TMP.
dd if=/dev/urandom of="$TMP/munge.key" bs=1024 count=1 status=none
chmod 400 "$TMP/munge.key"
daemon munged --key-file="$TMP/munge.key" --socket="$TMP/munge.sock" --pid-file="$TMP/munged.pid" \
    --log-file="$TMP/munged.log" --seed-file="$TMP/munged.seed" -F 2>>"$TMP/munged.log" &
pids+=($!)

mkdir -p "$TMP/state" "$TMP/spool"
export SLURM_CONF=$TMP/slurm.conf
cat >"$SLURM_CONF" <<EOF
ClusterName=fmpltest
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$port
SlurmdPort=$((port + 1))
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=$TMP/munge.sock
CredType=cred/munge
StateSaveLocation=$TMP/state
SlurmdSpoolDir=$TMP/spool
SlurmctldPidFile=$TMP/slurmctld.pid
SlurmdPidFile=$TMP/slurmd.pid
SlurmctldLogFile=$TMP/slurmctld.log
SlurmdLogFile=$TMP/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/builtin
MpiDefault=none
ReturnToService=2
FirstJobId=$first_job
MailProg=/bin/true
NodeName=$host NodeAddr=127.0.0.1 CPUs=$(nproc) State=UNKNOWN
PartitionName=test Nodes=$host Default=YES MaxTime=10 State=UP OverSubscribe=FORCE:8
EOF

for _ in $(seq 1 50); do
    [ -S "$TMP/munge.sock" ] && break
    sleep 0.1
done
[ -S "$TMP/munge.sock" ] || fail "munged did not start"

t0=$(date +%s)
daemon slurmctld -D -c -f "$SLURM_CONF" >"$TMP/slurmctld.out" 2>&1 &
pids+=($!)
daemon slurmd -D -f "$SLURM_CONF" -N "$host" >"$TMP/slurmd.out" 2>&1 &
pids+=($!)
state=
for _ in $(seq 1 300); do
    state=$(sinfo -h -n "$host" -o %T 2>/dev/null)
    [ "$state" = idle ] && break
    sleep 0.1
done
[ "$state" = idle ] || fail "the node did not become idle in 30 s (state '$state')"
echo "slurm: node $host idle after $(($(date +%s) - t0)) s"

# run NAME EXPECTED_RC SRUN_ARGS...: srun with a time limit (one job per call, ids in
# sequence); sets RC, ELAPSED_MS and job.
run() {
    local name=$1 want=$2 t
    shift 2
    t=$(date +%s%N)
    job=$((job + 1))
    timeout 60 srun --mpi=pmi2 --overcommit --time=2 "$@" >"$TMP/out" 2>&1
    RC=$?
    ELAPSED_MS=$((($(date +%s%N) - t) / 1000000))
    echo "slurm: $name: exit $RC in $ELAPSED_MS ms"
    [ $RC -ne 124 ] || fail "$name: srun did not end in 60 s"
    case $want in
    0) [ $RC -eq 0 ] || fail "$name: exit status $RC, expected 0" ;;
    nonzero) [ $RC -ne 0 ] || fail "$name: exit status 0, expected a failure" ;;
    esac
}

for n in 1 2 3; do
    run "boot_basic -n $n" 0 -n $n "$BOOT_BASIC"
    grep -q "^boot_basic: $n ranks OK$" "$TMP/out" || fail "boot_basic -n $n: no OK line"
done
for prog in "$@"; do
    name=$(basename "$prog")
    for n in 2 3 3udp; do
        # 3udp: 3 tasks, every peer through the udp transport (srun passes the environment)
        export FMPL_TRANSPORT=auto
        [ $n != 3udp ] || { n=3 && export FMPL_TRANSPORT=udp; }
        run "$name -n $n ($FMPL_TRANSPORT)" 0 -n $n "$prog"
        grep -E "^$name: " "$TMP/out" | grep "\b$n ranks\b" | grep -qw ok ||
            fail "$name -n $n: no '$name: ... $n ranks ... ok' line"
    done
done
# ... and the environment does reach the tasks: a bad value is refused by each.
FMPL_TRANSPORT=bogus run "$(basename "$1") -n 2 (bogus transport)" nonzero -n 2 "$1"
grep -q "FMPL_TRANSPORT=bogus: expected auto or udp" "$TMP/out" ||
    fail "FMPL_TRANSPORT=bogus: no message from the tasks"
unset FMPL_TRANSPORT
# Without --mpi=pmi2 (srun's default --mpi=none here) the tasks have no PMI server:
# each refuses to start alone and says what to do.
run "boot_basic -n 2 --mpi=none" nonzero -n 2 --mpi=none "$BOOT_BASIC"
grep -q "without a PMI server.*srun --mpi=pmi2" "$TMP/out" || fail "--mpi=none: no message"
# A rank that exits with status 7 while the others wait in a fence: with
# --kill-on-bad-exit srun ends the job at once (without it Slurm lets the others wait
# on, until the time limit: Slurm's choice, documented in README). Then a rank that
# aborts through PMI (cmd=abort): Slurm cancels the step.
run "helper early -n 3" nonzero -n 3 --kill-on-bad-exit=1 "$HELPER" early 1 7 slurmtest
[ "$ELAPSED_MS" -lt 30000 ] || fail "helper early: took $ELAPSED_MS ms"
grep -q "exit code 7" "$TMP/out" || fail "helper early: srun did not report exit code 7"
run "helper abort -n 3" nonzero -n 3 "$HELPER" abort 1 5 slurmtest
[ "$ELAPSED_MS" -lt 30000 ] || fail "helper abort: took $ELAPSED_MS ms"
grep -q "rank 1 aborts the job (exit code 5): helper abort from rank 1" "$TMP/out" ||
    fail "helper abort: no message"
# No /dev/shm entry of any job is left but the helper's own test files (which the
# helper leaves for fmplrun to remove; srun does not).
for j in $(seq "$first_job" "$job"); do
    rm -f /dev/shm/fmpl-"$j"_0-test[0-9]
    left=$(ls /dev/shm | grep "^fmpl-${j}_0-")
    [ -z "$left" ] || fail "job $j left /dev/shm entries: $left"
done
echo "slurm: all jobs done $(($(date +%s) - t0)) s after the daemons started"
echo PASS
