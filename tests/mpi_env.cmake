# MPI environment: init/finalize and queries, errors and handlers, info objects,
# attributes, language interoperability, sessions; MPI_Abort and fatal errors through
# mpiexec; the mpicc/mpiexec tools.
fmpl_test(mpi_env_init mpi_env_init.c RANKS 1 2 3)
fmpl_test(mpi_env_init_single mpi_env_init.c RANKS 1 2 ARGS 0)
fmpl_test(mpi_env_init_funneled mpi_env_init.c RANKS 2 ARGS 1)
fmpl_test(mpi_env_init_plain mpi_env_init.c RANKS 1 3 ARGS plain)
fmpl_test(mpi_env_errors mpi_env_errors.c RANKS 1 2 3)
fmpl_test(mpi_env_info mpi_env_info.c RANKS 1 2 4)
fmpl_test(mpi_env_attr mpi_env_attr.c RANKS 1 2 3 4)
fmpl_test(mpi_env_interop mpi_env_interop.c RANKS 1 2 3)
fmpl_test(mpi_env_session mpi_env_session.c RANKS 1 2 3 4 7)
fmpl_test(mpi_env_session_only mpi_env_session.c RANKS 1 2 3 ARGS only)

# A program the shell tests run (no test of its own).
add_executable(mpi_env_fatal mpi_env_fatal.c)
target_link_libraries(mpi_env_fatal PRIVATE fmpl_static)

set(_mpienv_expect sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_expect.sh)
add_test(NAME mpi_env_fatal
         COMMAND ${_mpienv_expect} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_env_fatal.sh
                 ${CMAKE_BINARY_DIR}/bin $<TARGET_FILE:mpi_env_fatal>)
add_test(NAME mpi_env_mpicc_show
         COMMAND ${_mpienv_expect} "^[^ ]*cc -I${CMAKE_SOURCE_DIR}/include .*-lfmpl -lpthread -lm$"
                 -- ${CMAKE_BINARY_DIR}/bin/mpicc -show -o x x.c)
add_test(NAME mpi_env_mpicc_showme
         COMMAND ${_mpienv_expect} "^-I${CMAKE_SOURCE_DIR}/include -fno-plt( -fsanitize=[a-z,]+)?$"
                 -- ${CMAKE_BINARY_DIR}/bin/mpicc -showme:compile)
# -fno-plt only for compilers known to take it (gcc and clang), and the user's -fplt wins.
add_test(NAME mpi_env_mpicc_other_cc
         COMMAND ${_mpienv_expect} "^tcc -I${CMAKE_SOURCE_DIR}/include( -fsanitize=[a-z,]+)? -c x.c$" --
                 ${CMAKE_BINARY_DIR}/bin/mpicc -show -c x.c)
set_tests_properties(mpi_env_mpicc_other_cc PROPERTIES ENVIRONMENT "MPICH_CC=tcc" TIMEOUT 20)
add_test(NAME mpi_env_mpicc_plt
         COMMAND ${_mpienv_expect} "^clang -I${CMAKE_SOURCE_DIR}/include -fno-plt .*-fplt -c x.c$" --
                 ${CMAKE_BINARY_DIR}/bin/mpicc -show -fplt -c x.c)
set_tests_properties(mpi_env_mpicc_plt PROPERTIES ENVIRONMENT "MPICH_CC=clang" TIMEOUT 20)
add_test(NAME mpi_env_mpicc_link_info
         COMMAND ${_mpienv_expect} "^[^ ]*cc -I.* -L${CMAKE_BINARY_DIR}/lib .*-lfmpl" --
                 ${CMAKE_BINARY_DIR}/bin/mpicc -link_info)
# In a sanitized build the user's project is sanitized too (FindMPI keeps only -L/-l/-Wl
# of the wrapper's link line, so the sanitizer flag has to come from the project).
set(_mpienv_user_flags "")
if(FMPL_SANITIZE)
  set(_mpienv_user_flags "-fsanitize=address,undefined")
endif()
add_test(NAME mpi_env_cmake_find_mpi
         COMMAND ${_mpienv_expect} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_env_cmake.sh
                 ${CMAKE_BINARY_DIR}/bin ${CMAKE_CURRENT_BINARY_DIR}/mpienv-work/cmake
                 "${_mpienv_user_flags}")
add_test(NAME mpi_env_install
         COMMAND ${_mpienv_expect} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_env_install.sh
                 ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/mpi_env_fatal.c
                 ${CMAKE_CURRENT_BINARY_DIR}/mpienv-work/install)
set_tests_properties(mpi_env_fatal mpi_env_cmake_find_mpi mpi_env_install PROPERTIES TIMEOUT 240)
# CC naming the wrapper itself (configure scripts set CC=mpicc): mpicc must not call itself.
add_test(NAME mpi_env_mpicc_cc_self
         COMMAND ${_mpienv_expect} "^cc -I${CMAKE_SOURCE_DIR}/include " --
                 ${CMAKE_BINARY_DIR}/bin/mpicc -show -c x.c)
set_tests_properties(mpi_env_mpicc_cc_self PROPERTIES ENVIRONMENT "CC=${CMAKE_BINARY_DIR}/bin/mpicc"
                     TIMEOUT 20)
# what an error says (detailed codes), small error paths, context ids running out
fmpl_test(mpi_err_detail mpi_err_detail.c RANKS 1 2 3 4 7)
fmpl_test(mpi_err_contexts mpi_err_detail.c RANKS 1 2 ARGS contexts TIMEOUT 300)
# a setting the user got wrong: a message naming it and exit status 78, not a crash
add_test(NAME mpi_env_settings_errors
         COMMAND ${CMAKE_SOURCE_DIR}/tests/settings_errors.sh ${FMPLRUN}
                 $<TARGET_FILE:mpi_err_detail>)
set_tests_properties(mpi_env_settings_errors PROPERTIES TIMEOUT 120)

# Name publishing through fmplrun's name service (MPI_Publish_name, _Lookup_name,
# _Unpublish_name): contents at 1-7 ranks, error classes; a singleton has no name
# service; the fatal message names the service.
fmpl_test(mpi_names mpi_names.c RANKS 1 2 3 4 7)
add_test(NAME mpi_names.singleton COMMAND ${_mpienv_expect} "^mpi_names: OK$" --
         $<TARGET_FILE:mpi_names> singleton)
add_test(NAME mpi_names_fatal
         COMMAND ${_mpienv_expect} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_names_fatal.sh
                 ${CMAKE_BINARY_DIR}/bin $<TARGET_FILE:mpi_names>)
