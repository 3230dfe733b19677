#!/bin/sh
# mpi_env_cmake.sh BINDIR WORKDIR [USERFLAGS] — CMake's find_package(MPI) finds our mpicc
# and mpiexec, builds an MPI program with them, and the program runs on 2 ranks.
# USERFLAGS: compile and link flags of the user's project (the sanitizer, when ours is).
set -eu
bin=$1 work=$2 userflags=${3:-}
rm -rf "$work"
mkdir -p "$work/src"
cat >"$work/src/CMakeLists.txt" <<'CM'
cmake_minimum_required(VERSION 3.18)
project(mpihello C)
find_package(MPI REQUIRED COMPONENTS C)
message(STATUS "MPI_C_VERSION=${MPI_C_VERSION}")
message(STATUS "MPIEXEC_EXECUTABLE=${MPIEXEC_EXECUTABLE}")
add_executable(hello hello.c)
target_link_libraries(hello PRIVATE MPI::MPI_C)
CM
cat >"$work/src/hello.c" <<'C'
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv)
{
    int rank, size, v, sv;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    MPI_Get_version(&v, &sv);
    printf("hello from %d of %d (MPI %d.%d)\n", rank, size, v, sv);
    MPI_Finalize();
    return 0;
}
C
cmake -S "$work/src" -B "$work/build" -DMPI_C_COMPILER="$bin/mpicc" \
    -DCMAKE_C_FLAGS="$userflags" -DCMAKE_EXE_LINKER_FLAGS="$userflags" \
    -DMPIEXEC_EXECUTABLE="$bin/mpiexec" >"$work/configure.log" 2>&1 ||
    { cat "$work/configure.log"; echo "FAIL: configure" >&2; exit 1; }
cat "$work/configure.log"
grep -q "MPI_C_VERSION=4.0" "$work/configure.log" || { echo "FAIL: MPI version" >&2; exit 1; }
cmake --build "$work/build" >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; echo "FAIL: build" >&2; exit 1; }
n=$("$bin/mpiexec" -n 2 --timeout 60 "$work/build/hello" | grep -c "of 2 (MPI 4.0)")
[ "$n" -eq 2 ] || { echo "FAIL: $n good ranks" >&2; exit 1; }
rm -rf "$work"
echo PASS
