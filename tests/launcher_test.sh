#!/usr/bin/env bash
# launcher_test.sh — behaviour of fmplrun when ranks fail, hang, abort or print.
#
#     launcher_test.sh FMPLRUN HELPER CASE
#
# HELPER is tests/boot_launcher_helper.c. Every case checks fmplrun's exit status
# and message, that no process of the job survives (pgrep on a tag unique to this
# run, passed as an argument to every rank) and that no /dev/shm entry of the job
# is left (each rank creates /dev/shm/fmpl-<job id>-test<rank>; the job id is
# "fmpl-<fmplrun pid>-<hex>"). Time limits are generous upper bounds so the tests
# do not depend on the machine's load; fmplrun's own grace period is 0.5 s.
set -u
FMPLRUN=$1
HELPER=$2
CASE=$3
TAG="fmpltest-$CASE-$$-$RANDOM"
TMP=$(mktemp -d)
trap 'pkill -KILL -f "$TAG" 2>/dev/null; rm -rf "$TMP"' EXIT

fail() {
    echo "FAIL [$CASE]: $*" >&2
    echo "--- stdout:" >&2
    head -c 4000 "$TMP/out" >&2 2>/dev/null
    echo "--- stderr:" >&2
    head -c 4000 "$TMP/err" >&2 2>/dev/null
    exit 1
}

now_ms() { echo $(($(date +%s%N) / 1000000)); }

# run ARGS...: runs fmplrun in the background; sets RC, PID, ELAPSED_MS.
run() {
    local t0
    t0=$(now_ms)
    "$FMPLRUN" "$@" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait "$PID"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
}

expect_rc() { [ "$RC" -eq "$1" ] || fail "exit status $RC, expected $1"; }
expect_err() { grep -qE -- "$1" "$TMP/err" || fail "stderr lacks /$1/"; }
expect_fast() { [ "$ELAPSED_MS" -lt "$1" ] || fail "took ${ELAPSED_MS} ms (limit $1 ms)"; }

shm_left() { ls /dev/shm 2>/dev/null | grep -c "^fmpl-fmpl-$1-" ; }

expect_clean() {
    local left
    left=$(pgrep -f "$TAG" | tr '\n' ' ')
    [ -z "$left" ] || fail "processes survived the job: $left"
    [ "$(shm_left "$PID")" -eq 0 ] || fail "/dev/shm entries left: $(ls /dev/shm | grep "^fmpl-fmpl-$PID-")"
}

# listen_port PID: the TCP port PID listens on (from /proc/net/tcp), or nothing.
listen_port() {
    local ino hex
    for ino in $(ls -l "/proc/$1/fd" 2>/dev/null | grep -oE 'socket:\[[0-9]+\]' | tr -dc '0-9\n'); do
        hex=$(awk -v ino="$ino" '$10 == ino && $4 == "0A" { split($2, a, ":"); print a[2] }' /proc/net/tcp)
        [ -n "$hex" ] && { echo $((16#$hex)); return; }
    done
}

# wait_for COUNT CMD...: polls CMD's output (a number) until it reaches COUNT, at most 10 s.
wait_for() {
    local want=$1 i
    shift
    for i in $(seq 1 200); do
        [ "$("$@")" -ge "$want" ] && return 0
        sleep 0.05
    done
    fail "timed out waiting for $* to reach $want"
}

case "$CASE" in
kill)
    run -n 4 "$HELPER" kill 2 9 "$TAG"
    expect_rc 137
    expect_err "^fmplrun: rank 2 \(pid [0-9]+\) was killed by signal 9 \(Killed\)$"
    expect_fast 5000
    expect_clean
    run -n 3 "$HELPER" kill 0 11 "$TAG"
    expect_rc 139
    expect_err "^fmplrun: rank 0 \(pid [0-9]+\) was killed by signal 11 "
    expect_fast 5000
    expect_clean
    ;;
early)
    run -n 3 "$HELPER" early 1 0 "$TAG"
    [ "$RC" -ne 0 ] || fail "exit status 0 for a rank that exited before finalize"
    expect_err "^fmplrun: rank 1 \(pid [0-9]+\) exited with status 0 before calling fmpl_finalize$"
    expect_fast 5000
    expect_clean
    run -n 2 "$HELPER" early 1 5 "$TAG"
    expect_rc 5
    expect_err "^fmplrun: rank 1 \(pid [0-9]+\) exited with status 5 before calling fmpl_finalize$"
    expect_clean
    ;;
status)
    run -n 3 "$HELPER" status 2 3 "$TAG"
    expect_rc 3
    grep -q "^fmplrun:" "$TMP/err" && fail "a clean exit with status 3 after finalize was reported as a failure"
    expect_clean
    run -n 3 "$HELPER" ok 0 0 "$TAG"
    expect_rc 0
    [ -s "$TMP/err" ] && fail "unexpected stderr output from a clean job"
    expect_clean
    ;;
timeout)
    run -n 2 --timeout 1 "$HELPER" hang 0 0 "$TAG"
    expect_rc 124
    expect_err "^fmplrun: job timed out after 1 seconds, killing 2 ranks$"
    expect_fast 6000
    expect_clean
    ;;
abort)
    run -n 3 "$HELPER" abort 1 7 "$TAG"
    expect_rc 7
    expect_err "^fmplrun: rank 1 \(pid [0-9]+\) aborted the job with exit code 7: helper abort from rank 1$"
    expect_fast 5000
    expect_clean
    ;;
tag)
    run -n 3 --tag-output "$HELPER" print 0 0 "$TAG"
    expect_rc 0
    for r in 0 1 2; do
        n=$(grep -cE "^\[$r\] rank $r line [0-9]+ x+$" "$TMP/out")
        [ "$n" -eq 200 ] || fail "rank $r: $n well-formed stdout lines, expected 200"
        n=$(grep -cE "^\[$r\] rank $r error [0-9]+$" "$TMP/err")
        [ "$n" -eq 50 ] || fail "rank $r: $n well-formed stderr lines, expected 50"
    done
    [ "$(wc -l <"$TMP/out")" -eq 600 ] || fail "stdout has $(wc -l <"$TMP/out") lines, expected 600"
    # every line of rank r in order 0..199
    for r in 0 1 2; do
        grep "^\[$r\] " "$TMP/out" | awk -v r="$r" '{ if ($5 != NR - 1) { exit 1 } }' ||
            fail "rank $r: lines out of order"
    done
    expect_clean
    # Without --tag-output the ranks write straight to the inherited stdout (their
    # stdio buffers may split lines): all bytes arrive, unprefixed. One rank's
    # output is what the helper prints alone, as a singleton.
    "$HELPER" print 0 0 "$TAG" >"$TMP/single" 2>/dev/null &
    single_pid=$!
    wait "$single_pid" || fail "the helper fails as a singleton"
    rm -f /dev/shm/fmpl-s"$single_pid"-*
    run -n 2 "$HELPER" print 0 0 "$TAG"
    expect_rc 0
    [ "$(wc -c <"$TMP/out")" -eq $((2 * $(wc -c <"$TMP/single"))) ] ||
        fail "without --tag-output: $(wc -c <"$TMP/out") bytes, expected 2 x $(wc -c <"$TMP/single")"
    grep -q "^\[" "$TMP/out" && fail "without --tag-output, lines are prefixed"
    expect_clean
    ;;
signal)
    "$FMPLRUN" -n 3 "$HELPER" hang 0 0 "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait_for 3 shm_left "$PID"
    t0=$(now_ms)
    kill -TERM "$PID"
    wait "$PID"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    expect_rc 143
    expect_err "^fmplrun: received signal 15 \(Terminated\), ending the job$"
    expect_fast 5000
    expect_clean
    ;;
sigkill)
    # fmplrun itself killed: the ranks die with it (PR_SET_PDEATHSIG); nobody is left
    # to clean /dev/shm, so this test removes the entries itself.
    "$FMPLRUN" -n 3 "$HELPER" hang 0 0 "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait_for 3 shm_left "$PID"
    kill -KILL "$PID"
    wait "$PID" 2>/dev/null
    gone=0
    for i in $(seq 1 100); do
        if [ -z "$(pgrep -f "$TAG")" ]; then
            gone=1
            break
        fi
        sleep 0.05
    done
    rm -f /dev/shm/fmpl-fmpl-"$PID"-*
    [ "$gone" -eq 1 ] || fail "ranks survived a SIGKILLed fmplrun: $(pgrep -f "$TAG" | tr '\n' ' ')"
    ;;
exec)
    run -n 2 /nonexistent/fmpl-program "$TAG"
    expect_rc 127
    expect_err "^fmplrun: cannot run '/nonexistent/fmpl-program': No such file or directory$"
    expect_clean
    ;;
usage)
    run --help
    expect_rc 0
    grep -q "^Usage: fmplrun -n N" "$TMP/out" || fail "--help prints no usage"
    run --version
    expect_rc 0
    grep -qE "^fmplrun \(FMPL\) [0-9]+\.[0-9]+\.[0-9]+$" "$TMP/out" || fail "--version"
    run -n 0 "$HELPER" ok 0 0 "$TAG"
    expect_rc 2
    expect_err "rank count"
    run -n 2
    expect_rc 2
    expect_err "no program"
    run --bogus-option -n 2 true
    expect_rc 2
    expect_err "unknown option"
    run -np 2 "$HELPER" ok 0 0 "$TAG"
    expect_rc 0
    expect_clean
    run -n 3 true # a program that never speaks PMI
    expect_rc 0
    run -n 2 false
    expect_rc 1
    expect_err "exited with status 1"
    ;;
startup)
    run -n 16 "$HELPER" ok 0 0 "$TAG"
    expect_rc 0
    echo "16 ranks: init, 2 fences, finalize in ${ELAPSED_MS} ms"
    expect_fast 5000
    expect_clean
    ;;
hosts_usage)
    # --hosts, --launcher, --pmi-addr: bad input is refused at once, nothing starts
    for bad in "" "a,,b" "a," ",a" "a:0" "a:x" "a:" "a b" "a/b" "a,a:2"; do
        run -n 2 --hosts "$bad" "$HELPER" ok 0 0 "$TAG"
        expect_rc 2
        expect_err "^fmplrun: --hosts"
        expect_fast 2000
    done
    expect_err "listed twice"
    run -n 2 --hosts "a b" true
    expect_err "bad host name 'a b'"
    run -n 2 --hosts "a:0" true
    expect_err "needs a slot count >= 1"
    run -n 2 --launcher ssh "$HELPER" ok 0 0 "$TAG"
    expect_rc 2
    expect_err "^fmplrun: --launcher needs --hosts"
    run -n 2 --hosts a --launcher " " "$HELPER" ok 0 0 "$TAG"
    expect_rc 2
    expect_err "^fmplrun: --launcher needs a command"
    run -n 2 --pmi-addr not-an-address "$HELPER" ok 0 0 "$TAG"
    expect_rc 2
    expect_err "^fmplrun: --pmi-addr needs an IPv4 address"
    run -n 2 --hosts a --hosts b true
    expect_rc 2
    expect_err "given twice"
    expect_clean
    ;;
hosts_run)
    # Every "host" is this machine, reached through tests/fake_launcher.sh; PMI over
    # TCP on 127.0.0.1; localhost's ranks are forked directly.
    FAKE="sh $(dirname "$0")/fake_launcher.sh"
    BOOT_BASIC=$(dirname "$HELPER")/boot_basic
    run -n 5 --hosts h1,h2:3 --launcher "$FAKE" --pmi-addr 127.0.0.1 "$BOOT_BASIC"
    expect_rc 0
    grep -q "^boot_basic: 5 ranks OK$" "$TMP/out" || fail "boot_basic failed across 2 hosts"
    run -n 3 --hosts localhost,h2 --launcher "$FAKE" --pmi-addr 127.0.0.1 --tag-output \
        "$HELPER" print 0 0 "$TAG"
    expect_rc 0
    for r in 0 1 2; do
        n=$(grep -cE "^\[$r\] rank $r line [0-9]+ x+$" "$TMP/out")
        [ "$n" -eq 200 ] || fail "--hosts: rank $r: $n stdout lines, expected 200"
    done
    expect_clean
    run -n 3 --hosts localhost:2,h2 --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" kill 2 9 "$TAG"
    expect_rc 137
    expect_err "^fmplrun: rank 2 \(host h2, launcher pid [0-9]+\) was killed by signal 9 \(Killed\)$"
    expect_fast 5000
    expect_clean
    run -n 3 --hosts localhost:2,h2 --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" kill 0 9 "$TAG"
    expect_rc 137
    expect_err "^fmplrun: rank 0 \(pid [0-9]+, host localhost\) was killed by signal 9 \(Killed\)$"
    expect_clean
    run -n 2 --hosts localhost,h2 --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" abort 1 7 "$TAG"
    expect_rc 7
    expect_err "^fmplrun: rank 1 \(host h2, launcher pid [0-9]+\) aborted the job with exit code 7: helper abort from rank 1$"
    expect_clean
    # every host is this one: no launcher, and the PMI port on 127.0.0.1 by default
    run -n 3 --hosts localhost:2 "$BOOT_BASIC"
    expect_rc 0
    grep -q "^boot_basic: 3 ranks OK$" "$TMP/out" || fail "boot_basic failed with --hosts localhost:2"
    # PMI over TCP on this host alone
    run -n 3 --pmi-addr 127.0.0.1 "$HELPER" ok 0 0 "$TAG"
    expect_rc 0
    expect_clean
    run -n 2 --pmi-addr 127.0.0.1 "$BOOT_BASIC"
    expect_rc 0
    # An ssh-like launcher gets every word quoted for the remote shell: a fake ssh
    # that drops the host and hands the rest to sh as one line, as ssh does.
    printf '#!/bin/sh\nshift\nexec sh -c "$*"\n' >"$TMP/ssh"
    chmod +x "$TMP/ssh"
    run -n 2 --hosts h1,h2 --launcher "$TMP/ssh" --pmi-addr 127.0.0.1 \
        printf '%s|\n' "a b" "it's" '$HOME' '*'
    expect_rc 0
    printf 'a b|\nit'"'"'s|\n$HOME|\n*|\n' >"$TMP/want"
    cat "$TMP/want" "$TMP/want" | cmp -s - "$TMP/out" || fail "arguments mangled by the ssh quoting"
    ;;
hosts_fail)
    FAKE="sh $(dirname "$0")/fake_launcher.sh"
    run -n 2 --hosts localhost,h2 --launcher /nonexistent/launcher --pmi-addr 127.0.0.1 \
        "$HELPER" ok 0 0 "$TAG"
    expect_rc 127
    expect_err "^fmplrun: cannot run the launcher '/nonexistent/launcher' \(for host h2\): No such file or directory$"
    expect_fast 5000
    expect_clean
    run -n 3 --hosts localhost,h2 --launcher false --pmi-addr 127.0.0.1 "$HELPER" ok 0 0 "$TAG"
    expect_rc 1
    expect_err "^fmplrun: rank 1 \(host h2, launcher pid [0-9]+\): the launcher exited with status 1 before the rank connected to fmplrun"
    expect_fast 5000
    expect_clean
    run -n 2 --hosts localhost,bad-host --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" ok 0 0 "$TAG"
    expect_rc 255
    expect_err "^fake_launcher: unknown host bad-host$"
    expect_err "^fmplrun: rank 1 \(host bad-host, launcher pid [0-9]+\): the launcher exited with status 255 before the rank connected"
    expect_fast 5000
    expect_clean
    # the default launcher (ssh) on a host that does not exist (when ssh is installed
    # and the resolver answers at once that the name does not exist)
    t0=$(now_ms)
    timeout 5 getent hosts no-such-host.invalid >/dev/null
    dns=$?
    if command -v ssh >/dev/null && [ "$dns" -eq 2 ] && [ $(($(now_ms) - t0)) -lt 2000 ]; then
        run -n 2 --hosts localhost,no-such-host.invalid --pmi-addr 127.0.0.1 "$HELPER" ok 0 0 "$TAG"
        expect_rc 255
        expect_err "^fmplrun: rank 1 \(host no-such-host.invalid, launcher pid [0-9]+\): the launcher exited with status 255 before the rank connected"
        expect_fast 30000
        expect_clean
    else
        echo "(no ssh here, or a slow resolver: the default launcher's unknown-host case is not run)"
    fi
    # A rank that dies while its launcher stays: the lost PMI connection ends the job.
    run -n 2 --hosts localhost,orphan-h --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" kill 1 9 "$TAG"
    expect_rc 1
    expect_err "^fmplrun: rank 1 \(host orphan-h, launcher pid [0-9]+\) closed its PMI connection before calling fmpl_finalize$"
    expect_fast 5000
    expect_clean
    # A stranger on the PMI port (no token) is refused and the job is not disturbed:
    # rank 1's launcher waits for $TMP/go, so the port is still open meanwhile.
    export FAKE_LAUNCHER_GO="$TMP/go"
    "$FMPLRUN" -n 2 --hosts localhost,slow-h --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$HELPER" ok 0 0 "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait_for 1 shm_left "$PID"
    port=$(listen_port "$PID")
    [ -n "$port" ] || fail "cannot find fmplrun's PMI port in /proc/net/tcp"
    exec 3<>"/dev/tcp/127.0.0.1/$port" || fail "cannot connect to fmplrun's PMI port $port"
    printf 'cmd=initack pmiid=1\n' >&3
    read -r -t 5 reply <&3
    exec 3<&-
    [ "$reply" = 'cmd=initack rc=-1 msg=wrong\ or\ missing\ token\ (FMPL_PMI_TOKEN)' ] ||
        fail "a connection without the token got '$reply'"
    touch "$TMP/go"
    wait "$PID"
    RC=$?
    expect_rc 0
    expect_err "^fmplrun: refused a PMI connection from 127.0.0.1:[0-9]+: wrong or missing token"
    expect_clean
    ;;
pmi_flood)
    # 100 idle connections (40 from 127.0.0.1, where the ranks come from, more than one
    # address may hold; 60 from four other addresses, more than all may hold together)
    # and a slow-loris client hold the PMI port of a 4-rank job whose ranks
    # wait (fake launcher, host slow*) until the flood is up and has run 4 s (past the
    # 3 s deadline: every stranger was closed at least once and came back). The job
    # must start and pass; the slow-loris client must be closed by the deadline.
    FAKE="sh $(dirname "$0")/fake_launcher.sh"
    BOOT_BASIC=$(dirname "$HELPER")/boot_basic
    FLOOD=$(dirname "$HELPER")/pmi_flood
    export FAKE_LAUNCHER_GO="$TMP/go"
    "$FMPLRUN" -n 4 --hosts slow1,slow2,slow3,slow4 --launcher "$FAKE" --pmi-addr 127.0.0.1 \
        "$BOOT_BASIC" "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    port=""
    for i in $(seq 1 200); do
        port=$(listen_port "$PID")
        [ -n "$port" ] && break
        sleep 0.05
    done
    [ -n "$port" ] || fail "cannot find fmplrun's PMI port in /proc/net/tcp"
    "$FLOOD" "$port" 100 "$TMP/ready" >"$TMP/flood" 2>&1 &
    FPID=$!
    for i in $(seq 1 200); do [ -e "$TMP/ready" ] && break; sleep 0.05; done
    [ -e "$TMP/ready" ] || fail "the flood did not start: $(cat "$TMP/flood")"
    sleep 4
    t0=$(now_ms)
    touch "$TMP/go"
    wait "$PID"
    RC=$?
    ELAPSED_MS=$(($(now_ms) - t0))
    wait "$FPID" || fail "pmi_flood failed: $(cat "$TMP/flood")"
    expect_rc 0
    grep -q "^boot_basic: 4 ranks OK$" "$TMP/out" || fail "boot_basic did not pass under the flood"
    expect_fast 15000
    ms=$(sed -n 's/^slowloris closed after \([0-9]*\) ms$/\1/p' "$TMP/flood")
    [ -n "$ms" ] || fail "the slow-loris client was never closed: $(cat "$TMP/flood")"
    [ "$ms" -ge 2500 ] && [ "$ms" -le 6000 ] || fail "the slow-loris client was closed after $ms ms, expected ~3000"
    closed=$(sed -n 's/^idle closed \([0-9]*\)$/\1/p' "$TMP/flood")
    [ "${closed:-0}" -ge 100 ] || fail "only ${closed:-0} idle connections were closed: $(cat "$TMP/flood")"
    expect_err "^fmplrun: refused a PMI connection from 127\.0\.0\.[123]:[0-9]+: no initack line with the token within 3 s$"
    expect_err "^fmplrun: refused a PMI connection from 127\.0\.0\.1:[0-9]+: too many connections from this address await their token$"
    expect_err "^fmplrun: refused a PMI connection from 127\.0\.0\.[0-9]+:[0-9]+: too many connections await their token$"
    expect_err "^fmplrun: refused [0-9]+ more PMI connections \((no token in time|too many connections waiting( from one address)?)\)$"
    n=$(grep -c "^fmplrun: refused a PMI connection" "$TMP/err")
    [ "$n" -le 20 ] || fail "$n refusals reported one by one (at most 5 of each kind expected)"
    grep -q "lost the launcher" "$TMP/err" && fail "a rank lost its PMI connection"
    expect_clean
    ;;
stopped)
    # A rank stopped by SIGSTOP: after FMPL_STOPPED_WARN seconds fmplrun names it, and
    # --timeout's message names it again; a rank stopped and continued at once is not
    # reported.
    export FMPL_STOPPED_WARN=1
    "$FMPLRUN" -n 3 --timeout 5 "$HELPER" hang 0 0 "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait_for 3 shm_left "$PID" # every rank is past boot_init and its first fence
    rank_pid() {
        local p
        for p in $(pgrep -f "$TAG"); do
            tr '\0' '\n' <"/proc/$p/environ" 2>/dev/null | grep -qx "PMI_RANK=$1" && echo "$p"
        done
    }
    p0=$(rank_pid 0)
    p2=$(rank_pid 2)
    [ -n "$p0" ] && [ -n "$p2" ] || fail "cannot find the ranks' processes"
    kill -STOP "$p0"
    sleep 0.2
    kill -CONT "$p0"
    kill -STOP "$p2"
    wait "$PID"
    RC=$?
    expect_rc 124
    expect_err "^fmplrun: rank 2 \(pid $p2\) has been stopped by signal 19 \(Stopped \(signal\)\) for [1-9][0-9]*\.[0-9] s; the job cannot progress until it continues \(kill -CONT $p2\)$"
    expect_err "^fmplrun: job timed out after 5 seconds, killing 3 ranks; stopped: rank 2 \(pid $p2\) by signal 19 \(Stopped \(signal\)\) for [0-9]+\.[0-9] s$"
    grep -q "rank 0 .*stopped" "$TMP/err" && fail "rank 0, continued at once, was reported as stopped"
    [ "$(grep -c "has been stopped" "$TMP/err")" -eq 1 ] || fail "the stop was reported more than once"
    expect_clean
    # FMPL_STOPPED_WARN=0: no report, but --timeout still names the stopped rank
    export FMPL_STOPPED_WARN=0
    "$FMPLRUN" -n 2 --timeout 3 "$HELPER" hang 0 0 "$TAG" >"$TMP/out" 2>"$TMP/err" &
    PID=$!
    wait_for 2 shm_left "$PID"
    p1=$(rank_pid 1)
    kill -STOP "$p1"
    wait "$PID"
    RC=$?
    expect_rc 124
    grep -q "has been stopped" "$TMP/err" && fail "FMPL_STOPPED_WARN=0 still reported the stop"
    expect_err "^fmplrun: job timed out after 3 seconds, killing 2 ranks; stopped: rank 1 \(pid $p1\) by signal 19"
    expect_clean
    # a malformed value is refused before anything starts
    for bad in abc -1 1x; do
        FMPL_STOPPED_WARN=$bad run -n 2 "$HELPER" ok 0 0 "$TAG"
        expect_rc 2
        expect_err "^fmplrun: FMPL_STOPPED_WARN='$bad' is not a number of seconds >= 0$"
    done
    unset FMPL_STOPPED_WARN
    ;;
bind)
    # --bind-to (default FMPL_BIND, else auto): core binds rank r of this host to the
    # r-th CPU we may use (round robin); auto gives every rank CPUs of its own (round
    # robin when the ranks outnumber the CPUs); none leaves every rank our CPUs. Each
    # rank learns the mode in FMPL_BIND.
    expand() { # a Cpus_allowed_list (0-1,4) as words
        local part out=""
        for part in ${1//,/ }; do
            if [[ $part == *-* ]]; then out="$out $(seq -s ' ' "${part%-*}" "${part#*-}")"; else out="$out $part"; fi
        done
        echo $out
    }
    mine=$(awk '/^Cpus_allowed_list/ {print $2}' /proc/self/status)
    read -r -a cpus <<<"$(expand "$mine")"
    ncpu=${#cpus[@]}
    probe='echo "$PMI_RANK $(awk "/^Cpus_allowed_list/ {print \$2}" /proc/self/status) ${FMPL_BIND:-unset}"'
    check_bound() { # N MODE: every rank on one CPU, round robin
        local r want
        for ((r = 0; r < $1; r++)); do
            want="$r ${cpus[$((r % ncpu))]} $2"
            grep -qx "$want" "$TMP/out" || fail "rank $r: expected '$want' (bound)"
        done
    }
    check_free() { # N MODE: every rank on all our CPUs
        local r
        for ((r = 0; r < $1; r++)); do
            grep -qx "$r $mine $2" "$TMP/out" || fail "rank $r: expected '$r $mine $2' (unbound)"
        done
    }
    run --bind-to core -n 3 sh -c "$probe"
    expect_rc 0
    check_bound 3 core
    run --bind-to=none -n 3 sh -c "$probe"
    expect_rc 0
    check_free 3 none
    FMPL_BIND=none run -n 2 sh -c "$probe"
    expect_rc 0
    check_free 2 none
    run -n $((ncpu + 1)) sh -c "$probe"
    expect_rc 0
    if [ "$ncpu" -gt 1 ]; then check_bound $((ncpu + 1)) auto; else check_free 2 auto; fi
    run -n 1 sh -c "$probe" # one rank: all our CPUs are its own
    expect_rc 0
    check_free 1 auto
    run --bind-to auto -n "$ncpu" sh -c "$probe"
    expect_rc 0
    if [ "$ncpu" -gt 1 ]; then
        # CPUs of its own each: no CPU in two ranks' lists (whole cores, one per rank here)
        lists=$(cut -d ' ' -f 2 "$TMP/out" | while read -r l; do expand "$l"; done | tr ' ' '\n')
        [ "$(echo "$lists" | sort | uniq -d | wc -l)" -eq 0 ] || fail "ranks share a CPU: $(cat "$TMP/out")"
        [ "$(echo "$lists" | wc -l)" -ge "$ncpu" ] || fail "ranks lack CPUs: $(cat "$TMP/out")"
    else
        check_free 1 auto
    fi
    run --bind-to socket -n 2 sh -c "$probe"
    expect_rc 2
    expect_err "^fmplrun: --bind-to needs core, none or auto, got 'socket'$"
    FMPL_BIND=sometimes run -n 2 sh -c "$probe"
    expect_rc 2
    expect_err "^fmplrun: FMPL_BIND=sometimes: expected core, none or auto$"
    ;;
*)
    fail "unknown case"
    ;;
esac
echo "PASS [$CASE]"
