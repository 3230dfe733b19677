#!/usr/bin/env bash
# tests/mpich/build.sh MPICC OUTDIR [FOLDER...] — configure MPICH's test suite (test/mpi,
# fetched by fetch.sh) out of tree in OUTDIR with the MPI compiler wrapper MPICC, and
# build the helper libraries and the test programs of FOLDER... (default: pt2pt
# datatype init comm coll topo). A program that fails to compile does not stop the build:
# OUTDIR/build-<folder>.log has the compiler output and OUTDIR/built.txt lists
# "folder program yes|no" for every program of the folders' testlists.
# Environment: FMPL_MPICH_CACHE (source cache, see fetch.sh), MPICH_JOBS (default 2: the
# machine is shared), MPICH_CONFIGURE_EXTRA (more configure arguments).
set -euo pipefail
if [ $# -lt 2 ]; then
    echo "usage: $0 MPICC OUTDIR [FOLDER...]" >&2
    exit 2
fi
here=$(cd "$(dirname "$0")" && pwd)
mpicc=$1
outdir=$2
shift 2
folders=("$@")
[ ${#folders[@]} -gt 0 ] || folders=(pt2pt datatype init comm coll errors topo rma io mpi_t part attr errhan group info)
jobs=${MPICH_JOBS:-2}
export FMPL_CC=${FMPL_CC:-cc}
case $mpicc in
    */*) mpicc=$(cd "$(dirname "$mpicc")" && pwd)/$(basename "$mpicc") ;;
    *) mpicc=$(command -v "$mpicc") ;;
esac
[ -x "$mpicc" ] || { echo "build.sh: no MPI compiler wrapper $1" >&2; exit 1; }
src=$("$here/fetch.sh" | tail -n 1)
mkdir -p "$outdir"
outdir=$(cd "$outdir" && pwd)
cd "$outdir"

# Reconfigure when the wrapper or the options change.
opts=(--disable-fortran --disable-cxx --enable-strictmpi
    --disable-ft-tests --disable-checkpointing --disable-perftest
    --disable-checkfaults --disable-large-tests --with-pm=none
    ${MPICH_CONFIGURE_EXTRA:-})
stamp="CC=$mpicc ${opts[*]}"
if [ ! -f config.status ] || [ "$(cat .fmpl-configured 2>/dev/null)" != "$stamp" ]; then
    echo "build.sh: configuring $src with $mpicc" >&2
    # configure exports CC=MPICC; our wrapper falls back to $CC for the compiler when
    # FMPL_CC is unset (it would run itself forever), so FMPL_CC names the real one.
    if ! FMPL_CC=${FMPL_CC:-cc} CC=$mpicc MPICC=$mpicc "$src/configure" "${opts[@]}" >configure.log 2>&1; then
        tail -n 30 configure.log >&2
        echo "build.sh: configure failed (see $outdir/configure.log)" >&2
        exit 1
    fi
    echo "$stamp" >.fmpl-configured
fi
echo "$src" >.fmpl-srcdir

# The helper libraries: util (mtest) and dtpools. Their failure is fatal: no test links.
echo "build.sh: building the helper libraries" >&2
# dtpools (the generated datatype tests' library) calls MPI_Type_hvector and
# MPI_Type_hindexed, removed in MPI-3.0: it gets their MPI-2 names, same arguments.
compat="-DMPI_Type_hvector=MPI_Type_create_hvector -DMPI_Type_hindexed=MPI_Type_create_hindexed"
for d in util dtpools; do
    extra=()
    if [ "$d" = dtpools ]; then
        extra=("DEFS=-DHAVE_CONFIG_H $compat")
        [ "$(cat dtpools/.fmpl-compat 2>/dev/null)" = "$compat" ] || make -C dtpools clean >/dev/null 2>&1 || true
    fi
    if ! make -C "$d" -j "$jobs" "${extra[@]}" >"build-$d.log" 2>&1; then
        tail -n 30 "build-$d.log" >&2
        echo "build.sh: the helper library in $d does not build (see $outdir/build-$d.log)" >&2
        exit 1
    fi
done
echo "$compat" >dtpools/.fmpl-compat

# Each folder: make -k builds what it can.
: >built.txt
for f in "${folders[@]}"; do
    echo "build.sh: building $f" >&2
    t0=$(date +%s)
    make -C "$f" -k -j "$jobs" >"build-$f.log" 2>&1 || true
    # io's i_* programs sit behind BUILD_MPIX_TESTS (off with --enable-strictmpi) from
    # when MPI_File_iread_all & co were MPIX; they are MPI-3.1 now: build them too.
    if [ "$f" = io ]; then
        make -C io -k -j "$jobs" $(sed -n 's/^[[:space:]]*\(i_[a-z0-9_]*\).*/\1/p' \
            "$src/io/Makefile.am" | sort -u) >>"build-$f.log" 2>&1 || true
    fi
    n=0
    ok=0
    for p in $("$here/list.sh" "$f" | awk '{print $1}' | sort -u); do
        n=$((n + 1))
        if [ -x "$f/$p" ]; then
            echo "$f $p yes" >>built.txt
            ok=$((ok + 1))
        else
            echo "$f $p no" >>built.txt
        fi
    done
    echo "build.sh: $f: $ok of $n programs built ($(($(date +%s) - t0)) s)" >&2
done
