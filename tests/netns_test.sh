#!/usr/bin/env bash
# netns_test.sh BINDIR — a two-host job on one machine: two network namespaces joined
# by a veth pair stand for two hosts, and fmplrun --hosts starts the ranks in both
# (--launcher "ip netns exec {host}", PMI over TCP across the veth pair).
#
# Needs root and iproute2 (`ip`); otherwise, or when `ip netns add` fails (no
# permission in a container), it prints why and exits 77, which CTest reports as
# skipped. It creates namespaces fmplA-<pid> and fmplB-<pid>, a veth pair fmpl0/fmpl1
# created inside them (the root namespace's interfaces are never touched), the
# addresses 10.213.77.1/24 (A) and 10.213.77.2/24 (B) and loopback in each; it
# deletes both namespaces on exit, however it exits.
#
# Then, with fmplrun running inside A:
#   - 2 ranks, one per namespace (both started through the launcher), and 3 ranks,
#     2 in A (this host's name: forked directly) + 1 in B;
#   - programs: netns_check (node map of 2 nodes, every rank's udp address on the
#     veth subnet with one address per node, 64 KiB puts between all ranks checked,
#     udp counters moved), boot_basic (FMPL_NODE decides the node map), vnic_rma,
#     fmpl_p2p and the MPI program mpi_p2p;
#   - the default --pmi-addr (the route toward B's address, B named by its address);
#   - a launcher that fails (a namespace that does not exist): a clear error, no hang.
set -u
BIN=$1
SUBNET=10.213.77
ADDR_A=$SUBNET.1
NSA=fmplA-$$
NSB=fmplB-$$
TMP=$(mktemp -d)

skip() {
    echo "SKIP: $*"
    exit 77
}
fail() {
    echo "FAIL: $*" >&2
    echo "--- stdout:" >&2
    tail -c 3000 "$TMP/out" >&2 2>/dev/null
    echo "--- stderr:" >&2
    tail -c 3000 "$TMP/err" >&2 2>/dev/null
    exit 1
}
cleanup() {
    ip netns del "$NSA" 2>/dev/null
    ip netns del "$NSB" 2>/dev/null
    rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 1' INT TERM HUP

[ "$(id -u)" -eq 0 ] || skip "not root: creating network namespaces needs root (run as root to test fmplrun --hosts across two namespaces)"
command -v ip >/dev/null || skip "the ip command is not installed (Debian: apt-get install iproute2)"
ip netns add "$NSA" 2>"$TMP/err" || skip "ip netns add failed (no permission here?): $(cat "$TMP/err")"
ip netns add "$NSB" 2>"$TMP/err" || skip "ip netns add failed: $(cat "$TMP/err")"
ip -n "$NSA" link add fmpl0 type veth peer name fmpl1 netns "$NSB" 2>"$TMP/err" ||
    skip "cannot create a veth pair between the namespaces: $(cat "$TMP/err")"
ip -n "$NSA" addr add "$ADDR_A/24" dev fmpl0 || fail "ip addr add in $NSA"
ip -n "$NSB" addr add "$SUBNET.2/24" dev fmpl1 || fail "ip addr add in $NSB"
for ns in "$NSA" "$NSB"; do
    ip -n "$ns" link set lo up || fail "lo up in $ns"
done
ip -n "$NSA" link set fmpl0 up || fail "fmpl0 up"
ip -n "$NSB" link set fmpl1 up || fail "fmpl1 up"
echo "namespaces $NSA ($ADDR_A) and $NSB ($SUBNET.2) joined by a veth pair"

# This host's name, under which fmplrun (in A) forks ranks directly.
LOCAL=$(uname -n)
[[ "$LOCAL" =~ ^[A-Za-z0-9._-]+$ ]] || fail "this host's name '$LOCAL' is not usable in --hosts"

# job NRANKS HOSTS PROGRAM ARGS...: fmplrun inside A; sets RC.
job() {
    local n=$1 hosts=$2
    shift 2
    echo "run: ip netns exec $NSA fmplrun -n $n --hosts $hosts --launcher 'ip netns exec {host}' --pmi-addr $ADDR_A $(basename "$1") ${*:2}"
    # ip netns exec execs fmplrun in its place: $! is fmplrun's pid, in its job id
    ip netns exec "$NSA" "$BIN/fmplrun" -n "$n" --hosts "$hosts" --launcher "ip netns exec {host}" \
        --pmi-addr "$ADDR_A" --timeout 240 "$@" >"$TMP/out" 2>"$TMP/err" &
    local pid=$!
    wait "$pid"
    RC=$?
    if ls /dev/shm | grep -q "^fmpl-fmpl-$pid-"; then
        fail "/dev/shm entries left by the job: $(ls /dev/shm | grep "^fmpl-fmpl-$pid-" | tr '\n' ' ')"
    fi
}

for layout in "2 $NSA,$NSB" "3 $LOCAL:2,$NSB"; do
    read -r n hosts <<<"$layout"
    job "$n" "$hosts" "$BIN/netns_check" 2 "$SUBNET."
    [ "$RC" -eq 0 ] || fail "netns_check on $hosts exited with $RC"
    [ "$(grep -c "^netns_check: rank [0-9]* of $n on node" "$TMP/out")" -eq "$n" ] ||
        fail "netns_check: not every rank reported"
    grep "^netns_check:" "$TMP/out"
    for prog in boot_basic vnic_rma fmpl_p2p mpi_p2p; do
        job "$n" "$hosts" "$BIN/$prog"
        [ "$RC" -eq 0 ] || fail "$prog with $n ranks on $hosts exited with $RC"
    done
done

# Without --pmi-addr: host B named by its address, so fmplrun (in A) finds the
# address it listens on from the route toward B (10.213.77.1), through a launcher
# script that maps the address to B's namespace.
printf '#!/bin/sh\n[ "$1" = "%s" ] || { echo "nslaunch: unknown host $1" >&2; exit 255; }\nshift\nexec ip netns exec %s "$@"\n' \
    "$SUBNET.2" "$NSB" >"$TMP/nslaunch"
echo "run: ip netns exec $NSA fmplrun -n 3 --hosts $LOCAL:2,$SUBNET.2 --launcher 'sh nslaunch' netns_check 2 $SUBNET."
ip netns exec "$NSA" "$BIN/fmplrun" -n 3 --hosts "$LOCAL:2,$SUBNET.2" --launcher "sh $TMP/nslaunch" \
    --timeout 240 "$BIN/netns_check" 2 "$SUBNET." >"$TMP/out" 2>"$TMP/err"
RC=$?
[ "$RC" -eq 0 ] || fail "netns_check with the default --pmi-addr exited with $RC"
grep "^netns_check:" "$TMP/out"

# The launcher fails for one host: the job ends with the launcher's status and says so.
job 2 "$LOCAL,fmpl-no-such-ns-$$" "$BIN/boot_basic"
[ "$RC" -ne 0 ] || fail "a job with an unreachable host succeeded"
grep -qE "^fmplrun: rank 1 \(host fmpl-no-such-ns-$$, launcher pid [0-9]+\): the launcher exited with status [0-9]+ before the rank connected" "$TMP/err" ||
    fail "no clear message for a launcher that fails"
echo "unreachable host: exit status $RC, $(grep '^fmplrun:' "$TMP/err")"
echo "PASS"
