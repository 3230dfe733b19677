#!/usr/bin/env bash
# tests/mpich/list.sh FOLDER [SRCDIR] — run in a configured test/mpi build directory
# (SRCDIR: the source test/mpi, default: the one build.sh recorded): prints the tests
# of FOLDER's testlists (testlist, testlist.dtp, testlist.cvar: the configured copy in
# the build directory, else the source's), one a
# line: "PROGRAM NP KEY OPTIONS...", where KEY names the test uniquely within the folder
# (the program, then its arg=/env=/mpiexecarg= options joined by commas) and OPTIONS are
# the testlist's key=value options. Sub-folders named in a testlist are followed
# (their programs come out as sub/prog). Comments and empty lines are dropped.
# MPICH_TESTLISTS picks the list files (default "testlist testlist.dtp"; testlist.cvar
# only repeats programs with MPICH's MPIR_CVAR_* algorithm switches, see notes.md).
set -euo pipefail
folder=${1:?usage: list.sh FOLDER [SRCDIR]}
srcdir=${2:-$(cat .fmpl-srcdir 2>/dev/null || echo .)}
walk() {
    local dir=$1 prefix=$2 f l
    for f in ${MPICH_TESTLISTS:-testlist testlist.dtp}; do
        if [ -f "$dir/$f" ]; then
            l=$dir/$f
        elif [ -f "$srcdir/$dir/$f" ]; then
            l=$srcdir/$dir/$f
        else
            continue
        fi
        while read -r prog np rest; do
            case $prog in '' | '#'* | '!'* | @*) continue ;; esac
            if [ -d "$dir/$prog" ] || [ -d "$srcdir/$dir/$prog" ]; then
                walk "$dir/$prog" "$prefix$prog/"
                continue
            fi
            [ -n "$np" ] || np=1
            key=$prefix$prog
            for o in $rest; do
                case $o in arg=* | env=* | mpiexecarg=*) key="$key,$o" ;; esac
            done
            echo "$prefix$prog $np $key $rest"
        done <"$l"
    done
}
walk "$folder" ""
