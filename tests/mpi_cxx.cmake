# C++: the mpicxx / mpic++ wrappers (src/tools/mpicc.in, mpi-tools.cmake), CMake's
# MPI::MPI_CXX, and a C++ program calling the MPI face.
set(_mpicxx_user_flags "")
if(FMPL_SANITIZE)
  set(_mpicxx_user_flags "-fsanitize=address,undefined")
endif()
add_test(NAME mpi_cxx_wrapper_cmake
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_expect.sh "^PASS$" -- sh
                 ${CMAKE_CURRENT_SOURCE_DIR}/mpi_cxx.sh ${CMAKE_BINARY_DIR}/bin
                 ${CMAKE_CURRENT_BINARY_DIR}/mpicxx-work "${_mpicxx_user_flags}")
set_tests_properties(mpi_cxx_wrapper_cmake PROPERTIES TIMEOUT 240)
