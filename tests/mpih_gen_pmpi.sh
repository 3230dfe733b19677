#!/bin/bash
# Regenerates section 9 (PMPI_ prototypes) of include/mpi.h from section 8
# (MPI_ prototypes).  Usage: bash tests/mpih_gen_pmpi.sh [path/to/mpi.h]
#   --print   only print the generated block (mpih_check.sh compares it).
set -euo pipefail
print=0
if [ "${1:-}" = "--print" ]; then print=1; shift; fi
hdr=${1:-$(dirname "$0")/../include/mpi.h}

gen() {
    sed -n '/^\/\* BEGIN MPI PROTOTYPES \*\/$/,/^\/\* END MPI PROTOTYPES \*\/$/p' "$hdr" |
        sed -e '1d;$d' |
        sed -E 's/(^|[^A-Za-z0-9_])MPI_([A-Za-z0-9_]+)\(/\1PMPI_\2(/'
}

if [ $print = 1 ]; then gen; exit 0; fi

tmp=$(mktemp)
trap 'rm -f "$tmp" "$tmp.block"' EXIT
gen > "$tmp.block"
awk -v blockfile="$tmp.block" '
    /^\/\* BEGIN PMPI PROTOTYPES \*\/$/ {
        print; while ((getline line < blockfile) > 0) print line; skip = 1; next }
    /^\/\* END PMPI PROTOTYPES \*\/$/ { skip = 0 }
    !skip { print }' "$hdr" > "$tmp"
cat "$tmp" > "$hdr"
echo "regenerated PMPI block: $(grep -c 'PMPI_' "$tmp.block") prototypes"
