#!/usr/bin/env bash
# vnic_tune_test.sh BINDIR WORKDIR — the cache of vnic_shm_tune's choice (src/vnic/shm_tune.c):
# a missing, corrupt, stale (other key or version) or tampered (checksum) file is ignored,
# a trial runs and rewrites it; a valid one is used as it is; FMPL_SHM_GET_PATH and
# FMPL_SHM_PIPELINE win over it and leave it alone; ranks that outnumber their CPUs share
# only long transfers, without reading or writing it; fmpl-info says which. Each job also checks its
# data (vnic_tune), at 2 and 3 ranks (3 only where that does not outnumber the CPUs).
# Times nothing.
set -u
bin=$1
work=$2
rm -rf "$work"
mkdir -p "$work"
cache=$work/shm-tune
export FMPL_SHM_TUNE_CACHE=$cache
# a trial is cached however much its runs differ (tests run on busy machines)
export FMPL_SHM_TUNE_SPREAD=1000000
fails=0

fail() {
    echo "FAIL: $*"
    fails=$((fails + 1))
}

# 3 ranks where the CPUs allow it without outnumbering them, else 2
np3=3
[ "$(nproc)" -ge 3 ] || np3=2

# run NP [VAR=value...]: runs vnic_tune, prints its "paths:" line (under $pin, a command
# prefix such as taskset, when set)
pin=
run() {
    local np=$1
    shift
    local out
    out=$(env "$@" $pin "$bin/fmplrun" -n "$np" --timeout 120 "$bin/vnic_tune" 2>&1)
    local rc=$?
    [ $rc -eq 0 ] || fail "vnic_tune -n $np $* exited $rc: $out"
    echo "$out" | grep '^paths:'
}

valid() { # the file is what a trial writes: header, key, choice, figures, checksum
    [ -f "$cache" ] && head -1 "$cache" | grep -qx 'fmpl-shm-tune 1' &&
        grep -qE '^get (pipeline|cma|shared)$' "$cache" && grep -qE '^check [0-9a-f]{16}$' "$cache"
}

expect_measured() { # $1: the paths line; $2: what happened before
    echo "$1" | grep -q "measured at start-up" || fail "$2: not measured: $1"
    valid || fail "$2: cache not rewritten: $(cat "$cache" 2>&1)"
}

expect_cached() {
    echo "$1" | grep -q "from the cache file $cache" || fail "$2: cache not used: $1"
}

# 1. no file: a trial, then the file is used (2 and 3 ranks)
rm -f "$cache"
expect_measured "$(run 2)" "no cache file"
good=$(cat "$cache")
expect_cached "$(run 2)" "valid cache"
expect_cached "$(run $np3)" "valid cache, $np3 ranks"
[ "$(cat "$cache")" = "$good" ] || fail "a valid cache file was rewritten"

# 2. corrupt: garbage, an empty file, a truncated one
printf 'garbage\n\x01\x02' >"$cache"
expect_measured "$(run 2)" "garbage"
: >"$cache"
expect_measured "$(run $np3)" "empty file"
head -c 40 <<<"$good" >"$cache"
expect_measured "$(run 2)" "truncated file"

# 3. stale: another host key, another format version
sed 's/^key .*/key Some Other CPU|0.0.0|64/' <<<"$good" >"$cache"
expect_measured "$(run 2)" "other key"
grep -q '^key Some Other CPU' "$cache" && fail "the stale key stayed"
sed 's/^fmpl-shm-tune 1$/fmpl-shm-tune 0/' <<<"$good" >"$cache"
expect_measured "$(run 2)" "old version"

# 4. tampered: a choice edited without its checksum
if grep -q '^get shared$' <<<"$good"; then other=cma; else other=shared; fi
sed "s/^get .*/get $other/" <<<"$good" >"$cache"
expect_measured "$(run 2)" "bad checksum"

# 5. the environment wins, and leaves the file alone
printf '%s\n' "$good" >"$cache"
before=$(cat "$cache")
for p in pipeline cma shared; do
    line=$(run 2 FMPL_SHM_GET_PATH=$p)
    echo "$line" | grep -q "gets $p, .*set by FMPL_SHM_GET_PATH=$p" ||
        fail "FMPL_SHM_GET_PATH=$p not in force: $line"
done
line=$(run $np3 FMPL_SHM_PIPELINE=0)
echo "$line" | grep -q "gets cma, puts cma; set by FMPL_SHM_PIPELINE=0" ||
    fail "FMPL_SHM_PIPELINE=0 not in force: $line"
line=$(run 2 FMPL_SHM_PIPELINE=1)
echo "$line" | grep -q "gets pipeline, puts pipeline; set by FMPL_SHM_PIPELINE=1" ||
    fail "FMPL_SHM_PIPELINE=1 not in force: $line"
line=$(run 2 FMPL_SHM_CMA=0)
echo "$line" | grep -q "gets pipeline, puts pipeline; pipeline only: CMA disabled by FMPL_SHM_CMA=0" ||
    fail "FMPL_SHM_CMA=0 not in force: $line"
[ "$(cat "$cache")" = "$before" ] || fail "a run with the paths set rewrote the cache"

# 6. no cache at all
line=$(run 2 FMPL_SHM_TUNE_CACHE=none)
echo "$line" | grep -q "measured at start-up.*not cached" || fail "FMPL_SHM_TUNE_CACHE=none: $line"

# 7. more ranks than CPUs (two on one CPU): shared from 256 KiB, CMA alone below, the
# cache file neither read nor written (a valid one, then none), the environment still
# wins
pin="taskset -c 0"
printf '%s\n' "$good" >"$cache"
line=$(run 2)
echo "$line" | grep -q "gets shared, puts shared; shared from 256 KiB, CMA alone below, not measured: this host's 2 ranks outnumber their CPUs" ||
    fail "2 ranks on 1 CPU, valid cache: $line"
[ "$(cat "$cache")" = "$good" ] || fail "2 ranks on 1 CPU: the cache file was rewritten"
rm -f "$cache"
line=$(run 2)
echo "$line" | grep -q "gets shared, puts shared; shared from 256 KiB, CMA alone below, not measured" ||
    fail "2 ranks on 1 CPU, no cache: $line"
[ ! -e "$cache" ] || fail "2 ranks on 1 CPU: a cache file was written"
line=$(run 2 FMPL_SHM_SHARED_MIN=4096)
echo "$line" | grep -q "gets shared, .*not measured.*(FMPL_SHM_SHARED_MIN=4096 set: it stands)" ||
    fail "2 ranks on 1 CPU, FMPL_SHM_SHARED_MIN=4096 not in force: $line"
line=$(run 2 FMPL_SHM_GET_PATH=shared)
echo "$line" | grep -q "gets shared, .*set by FMPL_SHM_GET_PATH=shared" ||
    fail "2 ranks on 1 CPU, FMPL_SHM_GET_PATH=shared not in force: $line"
pin=
printf '%s\n' "$good" >"$cache"

# 8. fmpl-info says what was chosen and why
info=$("$bin/fmplrun" -n 2 --timeout 60 "$bin/fmpl-info" 2>&1)
echo "$info" | grep -q "large transfers on a host .*from the cache file $cache" ||
    fail "fmpl-info does not show the cached choice: $info"
info=$(FMPL_SHM_GET_PATH=cma "$bin/fmpl-info" 2>&1)
echo "$info" | grep -q "large transfers on a host .*set by FMPL_SHM_GET_PATH=cma" ||
    fail "fmpl-info does not show the setting: $info"

[ $fails -eq 0 ] || { echo "vnic_tune_test: $fails failures"; exit 1; }
echo "vnic_tune_test: ok"
