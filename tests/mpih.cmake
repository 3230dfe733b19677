# mpih: mechanical checks of include/mpi.h (C/C++ builds, PMPI_ twins,
# predefined handles and constants, the MPI-4.0 function list).
add_test(NAME mpih_check COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/mpih_check.sh ${CMAKE_SOURCE_DIR}/include)
set_tests_properties(mpih_check PROPERTIES TIMEOUT 300)
