#!/usr/bin/env bash
# settings_errors.sh FMPLRUN PROGRAM — a setting the user got wrong ends the job with a
# message that names the setting, its value and what it must be, and an exit status
# (78, EX_CONFIG), never abort() (which fmplrun would report as a crash, signal 6).
set -u
fmplrun=$1
prog=$2
fail=0
out=$(mktemp)
trap 'rm -f "$out"' EXIT
# run "ENV=VALUE[ ENV=VALUE...]" "expected text"...: the job (NP ranks, default 2) fails,
# says every text, and crashes nowhere
expect() {
    local setting=$1
    shift
    # shellcheck disable=SC2086 # several settings, split at blanks
    env $setting "$fmplrun" -n "${NP:-2}" --timeout 60 "$prog" >"$out" 2>&1
    local rc=$?
    if [ "$rc" -eq 0 ]; then
        echo "FAIL: $setting: the job succeeded"
        fail=1
    fi
    for want in "$@"; do
        if ! grep -qF -- "$want" "$out"; then
            echo "FAIL: $setting: no \"$want\" in:"
            cat "$out"
            fail=1
        fi
    done
    if grep -qiE "signal|core dumped|crash" "$out"; then
        echo "FAIL: $setting: looks like a crash:"
        cat "$out"
        fail=1
    fi
}
expect FMPL_SHM_HEAP=abc "FMPL_SHM_HEAP=abc is not a number" "exited with status 78"
expect FMPL_SHM_HEAP=12Q "FMPL_SHM_HEAP=12Q: unexpected 'Q'" "exited with status 78"
expect FMPL_SHM_HEAP=0 "FMPL_SHM_HEAP=0 is out of range [1048576," "exited with status 78"
expect FMPL_SHM_FASTBOX=maybe "FMPL_SHM_FASTBOX=maybe is not a boolean" "exited with status 78"
expect FMPL_TRANSPORT=carrier-pigeon "FMPL_TRANSPORT=carrier-pigeon: expected auto or udp"
expect FMPL_COLL_LOGGP_L=-5 "FMPL_COLL_LOGGP_L=-5 is out of range [0, 100000000]" \
    "exited with status 78"
expect FMPL_COLL_LOGGP_G=fast "FMPL_COLL_LOGGP_G=fast is not a number" "exited with status 78"
expect FMPL_COLL_LOGGP=sometimes "FMPL_COLL_LOGGP=sometimes is not a boolean" \
    "exited with status 78"
expect FMPL_SHM_HEAP=1M "FMPL_SHM_HEAP=1048576" "and the world's matching area" \
    "raise FMPL_SHM_HEAP to at least" "the engine did not start"
# the FMPL_SHM_HEAP it asks for is enough: the job then starts
starts_with_asked() { # VARS...: the environment besides the FMPL_SHM_HEAP asked for in $out
    heap=$(grep -oE 'raise FMPL_SHM_HEAP to at least [0-9]+M' "$out" | head -n 1 |
        grep -oE '[0-9]+M$')
    if [ -z "$heap" ]; then
        echo "FAIL: no size asked for"
        fail=1
    elif ! env FMPL_SHM_HEAP="$heap" "$@" "$fmplrun" -n "${NP:-2}" --timeout 60 "$prog" \
        >"$out" 2>&1; then
        echo "FAIL: FMPL_SHM_HEAP=$heap, the size asked for, is not enough:"
        cat "$out"
        fail=1
    fi
}
starts_with_asked
# the matching area of MPI_COMM_WORLD: 4 ranks x 65536 headers of 64 bytes = 16M on top of the
# collective mailboxes' (the text names both settings, their values and the sizes); the
# FMPL_SHM_HEAP it asks for is enough: the job then starts
NP=4 expect "FMPL_SHM_HEAP=24M FMPL_MAI_MAX=65535" \
    "the matching area of a communicator of 4 ranks needs 16777216 bytes" \
    "(4 ranks x 4194304 bytes for FMPL_MAI_MAX=65535)" "of FMPL_SHM_HEAP=25165824 are in use" \
    "raise FMPL_SHM_HEAP to at least" "or lower FMPL_MAI_MAX" "the engine did not start"
# the ranks that fail only because a peer gave up say so, not what their access to the
# peer's area ran into: the real cause is the only one told
if grep -qF "remote access denied" "$out"; then
    echo "FAIL: follow-on \"remote access denied\" besides the real cause:"
    cat "$out"
    fail=1
fi
NP=4 starts_with_asked FMPL_MAI_MAX=65535
exit $fail
