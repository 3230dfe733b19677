#!/usr/bin/env bash
# shm_room_test.sh BINDIR — a job that does not fit in /dev/shm fails at start-up with a
# message saying how much room it needs, and leaves nothing behind. Runs in a private
# mount namespace with a 64 KiB tmpfs on /dev/shm (needs root, or unprivileged user
# namespaces); exits 77 (ctest: skipped) when it cannot make one.
set -u
bin=$1
if ! unshare -m true 2>/dev/null; then
    echo "shm_room_test: skipped: cannot create a mount namespace here"
    exit 77
fi
out=$(unshare -m sh -c '
    mount -t tmpfs -o size=64k tmpfs /dev/shm || exit 77
    "$1/fmplrun" -n 2 --timeout 20 "$1/fmpl_hello"
    rc=$?
    left=$(ls /dev/shm)
    [ -z "$left" ] || { echo "left in /dev/shm: $left"; exit 99; }
    exit $rc' sh "$bin" 2>&1)
rc=$?
echo "$out"
[ $rc -eq 77 ] && { echo "shm_room_test: skipped: cannot mount a tmpfs"; exit 77; }
[ $rc -ne 99 ] || { echo "FAIL: the failed job left files in /dev/shm"; exit 1; }
[ $rc -ne 0 ] || { echo "FAIL: a job that does not fit in /dev/shm succeeded"; exit 1; }
echo "$out" | grep -q "/dev/shm has .* free, the job needs" ||
    { echo "FAIL: no clear message about /dev/shm room"; exit 1; }
echo "shm_room_test: ok"
