#!/bin/sh
# abi_link.sh BINDIR INCDIR CC WORKDIR PENDING [USERFLAGS] — link completeness: a program
# that takes the address of every function include/mpi.h declares (MPI_ and PMPI_), but
# those PENDING names as not defined yet (tests/abi_pending.txt), links against
# libfmpl.so with our mpicc and runs. On failure the functions the linker
# could not find are listed.
set -u
bin=$1 inc=$2 cc=$3 work=$4 pending=$5 userflags=${6:-}
rm -rf "$work"
mkdir -p "$work"
export LC_ALL=C
printf '#include <mpi.h>\n' | $cc -E -P -I"$inc" -x c - | tr '\n' ' ' | tr ';' '\n' |
    sed 's/^ *//' | grep -v '^typedef' | sed -n -E \
        's/^[^(]*[^A-Za-z0-9_](P?MPIX?_[A-Za-z0-9_]+) *\(.*/\1/p' | sort -u >"$work/declared"
sed -e 's/#.*//' -e '/^[[:space:]]*$/d' -e 's/[[:space:]]//g' "$pending" |
    sed -e 'p' -e 's/^/P/' | sort -u >"$work/pending"
comm -23 "$work/declared" "$work/pending" >"$work/functions"
n=$(wc -l <"$work/functions")
[ "$n" -gt 1000 ] || { echo "FAIL: too few declarations found ($n): the parse is broken"; exit 1; }
{
    echo '#include <mpi.h>'
    echo '#include <stdio.h>'
    echo 'typedef void (*fn_t)(void);'
    echo 'static fn_t const every[] = {'
    sed 's/.*/    (fn_t)\&&,/' "$work/functions"
    echo '};'
    echo 'int main(int argc, char **argv)'
    echo '{'
    echo '    int n = 0;'
    echo '    MPI_Init(&argc, &argv);'
    echo '    for (size_t i = 0; i < sizeof every / sizeof every[0]; i++)'
    echo '        n += every[i] != NULL;'
    printf '%s\n' '    printf("linked %d functions\n", n);'
    echo '    MPI_Finalize();'
    echo '    return 0;'
    echo '}'
} >"$work/every.c"
# shellcheck disable=SC2086
if ! FMPL_CC="$cc" "$bin/mpicc" $userflags -o "$work/every" "$work/every.c" >"$work/link.log" 2>&1; then
    grep -o "undefined reference to \`[A-Za-z0-9_]*'" "$work/link.log" | sed "s/.*\`//; s/'//" |
        sort -u >"$work/undefined"
    if [ -s "$work/undefined" ]; then
        echo "FAIL: $(wc -l <"$work/undefined") of $n functions of mpi.h do not link:"
        sed 's/^/  undefined: /' "$work/undefined"
    else
        cat "$work/link.log"
        echo "FAIL: the program does not build"
    fi
    exit 1
fi
out=$("$bin/fmplrun" -n 1 --timeout 60 "$work/every") || { echo "FAIL: the program does not run"; exit 1; }
echo "$out"
[ "$out" = "linked $n functions" ] || { echo "FAIL: wrong count"; exit 1; }
rm -rf "$work"
echo PASS
