# The exported interface of libfmpl.so (-fvisibility=hidden, include/mpi.h and fmpl.h
# mark their declarations default): the exported symbols equal the headers'
# declarations both ways, and a program calling every function of mpi.h links and runs.
add_test(NAME abi_exports
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/abi_exports.sh $<TARGET_FILE:fmpl>
                 ${CMAKE_SOURCE_DIR}/include ${CMAKE_C_COMPILER}
                 ${CMAKE_CURRENT_SOURCE_DIR}/abi_pending.txt)
add_test(NAME abi_link_every_function
         COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/abi_link.sh ${CMAKE_BINARY_DIR}/bin
                 ${CMAKE_SOURCE_DIR}/include ${CMAKE_C_COMPILER}
                 ${CMAKE_CURRENT_BINARY_DIR}/abi-work/link
                 ${CMAKE_CURRENT_SOURCE_DIR}/abi_pending.txt)
set_tests_properties(abi_exports abi_link_every_function PROPERTIES TIMEOUT 240)
