#!/bin/sh
# abi_exports.sh LIB INCDIR CC PENDING — libfmpl.so's exported symbols against the public headers,
# both ways: every function (and object) include/mpi.h and include/fmpl.h declare is
# defined and exported by LIB, and LIB exports nothing else (no internal symbol a
# program's own could collide with). On failure the names are listed, the missing ones
# grouped by chapter. PENDING (tests/abi_pending.txt) names the functions not defined yet:
# they are left out, and one of them defined after all fails the test (the list is kept
# true).
set -u
lib=$1 inc=$2 cc=$3 pending=$4
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
export LC_ALL=C

# Declared: statements of the preprocessed headers that are not typedefs; the name is the
# identifier before the first '(' (a function) or the last one (an extern object).
printf '#include <mpi.h>\n#include <fmpl.h>\n' | $cc -E -P -I"$inc" -x c - |
    tr '\n' ' ' | tr ';' '\n' | sed 's/^ *//' | grep -v '^typedef' |
    grep -v '^$' | sed -n -E \
        -e 's/^[^(]*[^A-Za-z0-9_](P?MPIX?_[A-Za-z0-9_]+|fmpl_[A-Za-z0-9_]+) *\(.*/\1/p' \
        -e 's/^extern [^(]*[^A-Za-z0-9_](P?MPIX?_[A-Za-z0-9_]+|fmpl_[A-Za-z0-9_]+) *(\[[^]]*\])? *$/\1/p' |
    sort -u >"$work/declared.all"
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]//g' "$pending" |
    sed -e 'p' -e 's/^/P/' | sort -u >"$work/pending"
comm -23 "$work/declared.all" "$work/pending" >"$work/declared"
# Exported: the defined dynamic symbols (functions, weak aliases, objects).
nm -D --defined-only "$lib" | awk 'NF >= 3 { print $3 }' | sed 's/@.*//' | sort -u >"$work/exported"
comm -23 "$work/declared" "$work/exported" >"$work/missing"
comm -13 "$work/declared" "$work/exported" >"$work/extra"
nd=$(wc -l <"$work/declared")
ne=$(wc -l <"$work/exported")
echo "declared in mpi.h + fmpl.h: $nd; exported by $(basename "$lib"): $ne"
[ "$nd" -gt 1000 ] || { echo "FAIL: too few declarations found ($nd): the parse is broken"; exit 1; }
status=0
comm -12 "$work/pending" "$work/exported" >"$work/done"
if [ -s "$work/done" ]; then
    echo "FAIL: functions on $(basename "$pending") are defined now: take them off the list"
    sed 's/^/  defined: /' "$work/done"
    status=1
fi
echo "not defined yet (on $(basename "$pending")): $(wc -l <"$work/pending")"
if [ -s "$work/extra" ]; then
    echo "FAIL: $(wc -l <"$work/extra") exported symbols are not declared in the public headers:"
    sed 's/^/  extra: /' "$work/extra"
    status=1
fi
if [ -s "$work/missing" ]; then
    echo "FAIL: $(wc -l <"$work/missing") functions declared in the public headers are not defined:"
    # by chapter, MPI_ and PMPI_ together
    sed 's/^PMPI_/MPI_/' "$work/missing" | sort -u | awk '
        /^MPI_T_/ { g = "tool interface (MPI_T)"; }
        /^MPI_File_|^MPI_Register_datarep/ { g = "MPI-IO"; }
        /^MPI_Win_|^MPI_Put|^MPI_Get$|^MPI_Get_c$|^MPI_Rput|^MPI_Rget|^MPI_Accumulate|^MPI_Raccumulate|^MPI_Get_accumulate|^MPI_Rget_accumulate|^MPI_Fetch_and_op|^MPI_Compare_and_swap|^MPI_Alloc_mem|^MPI_Free_mem/ { g = "one-sided"; }
        /^MPI_Psend_init|^MPI_Precv_init|^MPI_Pready|^MPI_Parrived/ { g = "partitioned communication"; }
        /^MPI_Comm_spawn|^MPI_Comm_get_parent|^MPI_Open_port|^MPI_Close_port|^MPI_Comm_accept|^MPI_Comm_connect|^MPI_Comm_join|^MPI_Comm_disconnect|^MPI_Publish_name|^MPI_Lookup_name|^MPI_Unpublish_name/ { g = "dynamic processes"; }
        { if (g == "") g = "other"; print g ": " $0 " (and PMPI_)"; g = ""; }' | sort |
        sed 's/^/  missing: /'
    status=1
fi
[ $status -eq 0 ] && echo PASS
exit $status
