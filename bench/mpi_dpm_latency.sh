#!/bin/sh
# mpi_dpm_latency.sh [BUILD] [ENV...] — runs bench/mpi_dpm_latency: a job of 2 ranks (the
# intra-job pair), then a server job and a client job of 1 rank each started separately
# (across); prints both one-way latencies. ENV (VAR=value...) goes to every job.
set -u
build=${1:-build}
[ $# -gt 0 ] && shift
env "$@" "$build/bin/fmplrun" -n 2 "$build/bin/mpi_dpm_latency" intra || exit 1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
env "$@" "$build/bin/fmplrun" -n 1 "$build/bin/mpi_dpm_latency" server "$dir" &
ps=$!
env "$@" "$build/bin/fmplrun" -n 1 "$build/bin/mpi_dpm_latency" client "$dir"
rc=$?
wait $ps || exit 1
exit $rc
