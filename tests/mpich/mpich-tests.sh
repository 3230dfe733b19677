#!/usr/bin/env bash
# tests/mpich/mpich-tests.sh BUILD — what `make mpich-tests` runs: fetch MPICH's test
# suite (fetch.sh), build its folders with BUILD/bin/mpicc (build.sh), run them with
# BUILD/bin/mpiexec (run.sh) and judge the results against the pass lists (check.sh).
# Output in BUILD/mpich/ (results.txt, logs/, build-<folder>.log).
# Environment (make passes its variables of the same names):
#   MPICH_FOLDERS  folders to build and run (default: pt2pt datatype init comm coll errors topo rma io mpi_t part
#                  attr errhan group info)
#   MPICH_SUBSET   all (default): every test of the folders; listed: only the tests on
#                  the pass lists; quick: those less the slow ones in long.txt (what CI
#                  runs, to stay within its time budget)
#   MPICC, MPIEXEC the wrapper and launcher (default: BUILD/bin/mpicc, BUILD/bin/mpiexec;
#                  e.g. mpicc.mpich and mpiexec.mpich to check the harness itself)
#   and those of fetch.sh, build.sh and run.sh (FMPL_MPICH_CACHE, MPICH_JOBS, MPICH_TIMEOUT,
#   MPICH_PARALLEL, MPICH_MEM_GB, MPICH_NP_MAX).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
mpicc=${MPICC:-$build/bin/mpicc}
mpiexec=${MPIEXEC:-$build/bin/mpiexec}
read -r -a folders <<<"${MPICH_FOLDERS:-pt2pt datatype init comm coll errors topo rma io mpi_t part attr errhan group info}"
subset=${MPICH_SUBSET:-all}
for t in "$mpicc" "$mpiexec"; do
    if ! command -v "$t" >/dev/null; then
        echo "mpich-tests: $t is missing: the MPI layer (mpicc, mpiexec) is not built yet;" \
            "nothing to test. Build it with 'make', or pass MPICC= and MPIEXEC=." >&2
        exit 1
    fi
done
out=$build/mpich
[ -n "${MPICC:-}" ] && out=$build/mpich-$(basename "$mpicc")
start=$(date +%s)
"$here/fetch.sh" >/dev/null
"$here/build.sh" "$mpicc" "$out" "${folders[@]}"
if [ "$subset" = listed ] || [ "$subset" = quick ]; then
    only=$out/passlist-all.txt
    for f in "${folders[@]}"; do
        [ -f "$here/passlist-$f.txt" ] || continue
        sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e "s|^[[:space:]]*|$f/|" \
            -e 's/[[:space:]]\+/ /g' -e 's/ $//' "$here/passlist-$f.txt"
    done >"$only"
    if [ "$subset" = quick ]; then
        grep -vxF -f <(sed -e '/^#/d' "$here/long.txt") "$only" >"$only.tmp" || true
        mv "$only.tmp" "$only"
    fi
    echo "mpich-tests: running the $(wc -l <"$only") tests of the pass lists only (MPICH_SUBSET=$subset)"
    MPICH_ONLY=$only "$here/run.sh" "$mpiexec" "$out" "${folders[@]}"
else
    "$here/run.sh" "$mpiexec" "$out" "${folders[@]}"
fi
echo "mpich-tests: $(($(date +%s) - start)) s in all"
[ "$subset" = quick ] && export MPICH_LEFT_OUT=$here/long.txt
MPICH_FOLDERS="${folders[*]}" "$here/check.sh" "$out/results.txt" "$here"
