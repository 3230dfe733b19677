#!/bin/sh
# mpi_cxx.sh BINDIR WORKDIR [USERFLAGS] — C++: mpicxx and mpic++ compile with g++ (or
# $CXX) and the flags of mpicc; CMake's find_package(MPI COMPONENTS CXX) finds
# MPI::MPI_CXX through mpicxx; the C++ program (topologies, neighbourhood collectives,
# C++ containers) builds both ways and runs on 3 ranks.
# USERFLAGS: compile and link flags of the user's project (the sanitizer, when ours is).
set -eu
bin=$1 work=$2 userflags=${3:-}
rm -rf "$work"
mkdir -p "$work/src"
# the same flags as mpicc, another compiler
cc_show=$("$bin/mpicc" -show x)
cxx_show=$(env -u MPICH_CXX -u OMPI_CXX -u FMPL_CXX CXX='' "$bin/mpicxx" -show x)
if [ "${cxx_show%% *}" != g++ ] || [ "${cxx_show#* }" != "${cc_show#* }" ]; then
    echo "FAIL: mpicxx -show: $cxx_show / mpicc -show: $cc_show" >&2
    exit 1
fi
[ "$("$bin/mpic++" -show x)" = "$("$bin/mpicxx" -show x)" ] || { echo "FAIL: mpic++" >&2; exit 1; }
cat >"$work/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(mpicxxhello CXX)
find_package(MPI REQUIRED COMPONENTS CXX)
message(STATUS "MPI_CXX_VERSION=${MPI_CXX_VERSION}")
add_executable(hello hello.cpp)
target_link_libraries(hello PRIVATE MPI::MPI_CXX)
CM
cat >"$work/src/hello.cpp" <<'CPP'
#include <mpi.h>
#include <cstdio>
#include <vector>
int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    int rank, size;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    int dims[1] = {size}, periods[1] = {1};
    MPI_Comm ring;
    MPI_Cart_create(MPI_COMM_WORLD, 1, dims, periods, 0, &ring);
    std::vector<int> out{rank * 10, rank * 10 + 1}, in(2, -1);
    MPI_Neighbor_alltoall(out.data(), 1, MPI_INT, in.data(), 1, MPI_INT, ring);
    int left = (rank + size - 1) % size, right = (rank + 1) % size;
    bool ok = in[0] == left * 10 + 1 && in[1] == right * 10;
    MPI_Comm_free(&ring);
    std::printf("c++ rank %d of %d %s\n", rank, size, ok ? "ok" : "WRONG");
    MPI_Finalize();
    return ok ? 0 : 1;
}
CPP
# 1. the wrapper directly
# shellcheck disable=SC2086 # the words of the user's flags
"$bin/mpicxx" $userflags -o "$work/direct" "$work/src/hello.cpp"
n=$("$bin/mpiexec" -n 3 --timeout 60 "$work/direct" | grep -c "of 3 ok")
[ "$n" -eq 3 ] || { echo "FAIL: mpicxx program: $n good ranks" >&2; exit 1; }
# 2. CMake
cmake -S "$work/src" -B "$work/build" -DMPI_CXX_COMPILER="$bin/mpicxx" \
    -DCMAKE_CXX_FLAGS="$userflags" -DCMAKE_EXE_LINKER_FLAGS="$userflags" \
    -DMPIEXEC_EXECUTABLE="$bin/mpiexec" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; echo "FAIL: configure" >&2; exit 1; }
cat "$work/configure.log"
grep -q "MPI_CXX_VERSION=4.0" "$work/configure.log" || { echo "FAIL: MPI version" >&2; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; echo "FAIL: build" >&2; exit 1; }
n=$("$bin/mpiexec" -n 3 --timeout 60 "$work/build/hello" | grep -c "of 3 ok")
[ "$n" -eq 3 ] || { echo "FAIL: cmake program: $n good ranks" >&2; exit 1; }
rm -rf "$work"
echo PASS
