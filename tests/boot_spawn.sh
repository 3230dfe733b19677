#!/bin/sh
# boot_spawn.sh FMPLRUN PROG — fmplrun's PMI-1 spawn command (tests/boot_spawn.c): a
# 2-rank job spawns 3 processes in two commands and is refused six bad requests; then
# a spawned process that exits before finalize ends the whole job, named as such. No
# process and no /dev/shm entry of either job is left.
set -u
fmplrun=$1 prog=$2
dir=$(mktemp -d)
out=$dir/out
trap 'rm -rf "$dir"' EXIT
fail() { echo "FAIL: $*" >&2; cat "$out" >&2; exit 1; }
dir=$(cd "$dir" && pwd -P)

"$fmplrun" -n 2 --timeout 60 "$prog" parent "$dir" >"$out" 2>&1 &
pid=$!
wait $pid
rc=$?
[ $rc -eq 0 ] || fail "spawning job exited with $rc"
grep -q "^boot_spawn: OK$" "$out" || fail "no OK line"
[ "$(ls "$dir" | grep -c '^child-')" -eq 3 ] || fail "not 3 children's reports"
ls /dev/shm | grep -q "^fmpl-fmpl-$pid-" && fail "/dev/shm entries of the job are left"

"$fmplrun" -n 1 --timeout 60 "$prog" die "$dir" >"$out" 2>&1 &
pid=$!
wait $pid
rc=$?
[ $rc -eq 3 ] || fail "job whose spawned process exited 3 ended with $rc"
grep -Eq "^fmplrun: rank 0 of spawned job 1 \(pid [0-9]+\) exited with status 3 before calling fmpl_finalize$" "$out" ||
    fail "no message naming the spawned process"
pgrep -f "$prog die" >/dev/null && fail "processes of the job are left"
echo PASS
