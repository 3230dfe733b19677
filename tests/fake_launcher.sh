#!/bin/sh
# fake_launcher.sh HOST COMMAND... — stands in for ssh in the launcher tests
# (tests/launcher_test.sh, fmplrun --hosts ... --launcher "sh fake_launcher.sh"): every
# "host" is this machine.
#   bad*     says the host is unknown and exits 255, as ssh does
#   orphan*  starts COMMAND in the background and outlives it (a launcher that does
#            not report the rank's death: fmplrun must notice the lost PMI connection)
#   slow*    waits until the file $FAKE_LAUNCHER_GO exists, then runs COMMAND
#   other    runs COMMAND in its place
host=$1
shift
case "$host" in
bad*)
    echo "fake_launcher: unknown host $host" >&2
    exit 255
    ;;
orphan*)
    "$@" &
    sleep 30
    exit 0
    ;;
slow*)
    while [ ! -e "$FAKE_LAUNCHER_GO" ]; do sleep 0.05; done
    exec "$@"
    ;;
*)
    exec "$@"
    ;;
esac
