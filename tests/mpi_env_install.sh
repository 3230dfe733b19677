#!/bin/sh
# mpi_env_install.sh BUILDDIR SRC WORKDIR — `cmake --install` installs mpi.h, mpicc,
# mpicxx, mpic++, mpiexec and mpirun; the installed mpicc points into the prefix and builds an MPI
# program that runs under the installed mpiexec.
set -eu
build=$1 src=$2 work=$3
prefix="$work/prefix"
rm -rf "$work"
mkdir -p "$work"
cmake --install "$build" --prefix "$prefix" >"$work/install.log"
for f in include/mpi.h bin/mpicc bin/mpicxx bin/mpic++ bin/mpiexec bin/mpirun; do
    [ -e "$prefix/$f" ] || { echo "FAIL: $f not installed" >&2; exit 1; }
done
show=$("$prefix/bin/mpicc" -show x.c)
echo "installed mpicc -show: $show"
case $show in *"-I$prefix/include"*) ;; *) echo "FAIL: mpicc misses the prefix" >&2; exit 1 ;; esac
case $show in *"$build/lib"*) echo "FAIL: mpicc refers to the build tree" >&2; exit 1 ;; esac
"$prefix/bin/mpicc" -o "$work/prog" "$src"
"$prefix/bin/mpiexec" -n 2 --timeout 60 "$work/prog" abort >/dev/null 2>&1 && exit 1
rc=0
"$prefix/bin/mpirun" -np 2 --timeout 60 "$work/prog" abort >/dev/null 2>&1 || rc=$?
[ $rc -eq 7 ] || { echo "FAIL: installed mpirun gave $rc" >&2; exit 1; }
DESTDIR="$work/stage" cmake --install "$build" --prefix /opt/fmpl >/dev/null
grep -q "fmpl_incdir='/opt/fmpl/include'" "$work/stage/opt/fmpl/bin/mpicc" ||
    { echo "FAIL: DESTDIR install of mpicc" >&2; exit 1; }
[ -L "$work/stage/opt/fmpl/bin/mpiexec" ] || { echo "FAIL: DESTDIR mpiexec" >&2; exit 1; }
rm -rf "$work"
echo PASS
