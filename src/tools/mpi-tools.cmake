# The MPI face's tools: mpicc and mpicxx (compiler wrappers for C and C++ from one
# template, MPICH and Open MPI conventions, enough for CMake's find_package(MPI): C and
# CXX; mpic++ is another name of mpicxx) and mpiexec / mpirun (the launcher fmplrun under the
# names MPI programs expect: symlinks). Same two variants as fmplcc (fmplcc.cmake):
#   - build tree: bin/mpicc uses include/ of the source tree and lib/ of the build tree;
#   - install tree: generated at install time for the prefix `cmake --install` uses.
# Reuses FMPLCC_EXTRA_FLAGS from fmplcc.cmake (included before this file).
set(FMPLCC_VARIANT "build-tree")
set(FMPLCC_INCDIR "${CMAKE_SOURCE_DIR}/include")
set(FMPLCC_LIBDIR "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
# name:language:compiler variable:default compiler of each wrapper
foreach(w "mpicc:C:CC:cc" "mpicxx:C++:CXX:g++")
  string(REPLACE ":" ";" w "${w}")
  list(GET w 0 WRAP_NAME)
  list(GET w 1 WRAP_LANG)
  list(GET w 2 WRAP_ENV)
  list(GET w 3 WRAP_DEFAULT)
  configure_file(${CMAKE_CURRENT_LIST_DIR}/mpicc.in ${CMAKE_BINARY_DIR}/tools-gen/${WRAP_NAME} @ONLY)
  file(COPY ${CMAKE_BINARY_DIR}/tools-gen/${WRAP_NAME} DESTINATION ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                        WORLD_EXECUTE)
endforeach()
file(MAKE_DIRECTORY ${CMAKE_RUNTIME_OUTPUT_DIRECTORY})
foreach(name mpiexec mpirun)
  file(CREATE_LINK fmplrun ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/${name} SYMBOLIC)
endforeach()
file(CREATE_LINK mpicxx ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}/mpic++ SYMBOLIC)

# Install: mpi.h, the install-tree mpicc, and the two launcher names next to fmplrun.
install(FILES ${CMAKE_SOURCE_DIR}/include/mpi.h DESTINATION ${CMAKE_INSTALL_INCLUDEDIR})
file(CONFIGURE OUTPUT ${CMAKE_BINARY_DIR}/tools-gen/mpi-install-gen.cmake @ONLY CONTENT [==[
# Run by `cmake --install` (src/tools/mpi-tools.cmake).
set(prefix "${CMAKE_INSTALL_PREFIX}")
set(INCDIR "@CMAKE_INSTALL_INCLUDEDIR@")
set(LIBDIR "@CMAKE_INSTALL_LIBDIR@")
set(BINDIR "@CMAKE_INSTALL_BINDIR@")
foreach(d INCDIR LIBDIR BINDIR)
  if(NOT IS_ABSOLUTE "${${d}}")
    set(${d} "${prefix}/${${d}}")
  endif()
endforeach()
set(PROJECT_VERSION "@PROJECT_VERSION@")
set(FMPLCC_VARIANT "install-tree")
set(FMPLCC_INCDIR "${INCDIR}")
set(FMPLCC_LIBDIR "${LIBDIR}")
set(FMPLCC_EXTRA_FLAGS "@FMPLCC_EXTRA_FLAGS@")
set(FMPL_MAC_LIBS "@FMPL_MAC_LIBS@")
set(gen "@CMAKE_BINARY_DIR@/tools-gen/install")
foreach(w "mpicc:C:CC:cc" "mpicxx:C++:CXX:g++")
  string(REPLACE ":" ";" w "${w}")
  list(GET w 0 WRAP_NAME)
  list(GET w 1 WRAP_LANG)
  list(GET w 2 WRAP_ENV)
  list(GET w 3 WRAP_DEFAULT)
  configure_file("@CMAKE_CURRENT_LIST_DIR@/mpicc.in" "${gen}/${WRAP_NAME}" @ONLY)
  file(INSTALL "${gen}/${WRAP_NAME}" DESTINATION "${BINDIR}"
       FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                        WORLD_EXECUTE)
endforeach()
file(MAKE_DIRECTORY "$ENV{DESTDIR}${BINDIR}")
foreach(link "mpiexec:fmplrun" "mpirun:fmplrun" "mpic++:mpicxx")
  string(REPLACE ":" ";" link "${link}")
  list(GET link 0 name)
  list(GET link 1 target)
  message(STATUS "Installing: $ENV{DESTDIR}${BINDIR}/${name} -> ${target}")
  file(CREATE_LINK ${target} "$ENV{DESTDIR}${BINDIR}/${name}" SYMBOLIC)
endforeach()
]==])
install(SCRIPT ${CMAKE_BINARY_DIR}/tools-gen/mpi-install-gen.cmake)
