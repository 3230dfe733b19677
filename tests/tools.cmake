# Tools: fmplcc, fmpl-info, make install (pkg-config + installed fmplcc), and the
# bench programs in a tiny configuration so they keep working.
# tools_expect.sh PATTERN... -- CMD: passes when CMD exits 0 and each pattern matches a line.
set(TOOLS_WORK ${CMAKE_CURRENT_BINARY_DIR}/tools-work)
set(TOOLS_EXPECT sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_expect.sh)

add_test(NAME tools_fmplcc_show
         COMMAND ${TOOLS_EXPECT} "-I${CMAKE_SOURCE_DIR}/include .*-lfmpl -lpthread -lm" --
                 ${CMAKE_BINARY_DIR}/bin/fmplcc -show -o x x.c)

add_test(NAME tools_fmplcc
         COMMAND ${TOOLS_EXPECT} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_fmplcc.sh
                 ${CMAKE_BINARY_DIR}/bin ${CMAKE_CURRENT_SOURCE_DIR}/tools_hello.c
                 ${TOOLS_WORK}/fmplcc ${CMAKE_SOURCE_DIR}/README.md)
add_test(NAME tools_install
         COMMAND ${TOOLS_EXPECT} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_install.sh
                 ${CMAKE_BINARY_DIR} ${CMAKE_CURRENT_SOURCE_DIR}/tools_hello.c
                 ${TOOLS_WORK}/install)

# Every FMPL_* variable the sources read is in the README's table.
add_test(NAME tools_readme_env
         COMMAND ${TOOLS_EXPECT} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_readme_env.sh
                 ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/README.md)

add_test(NAME tools_fmpl_info
         COMMAND ${TOOLS_EXPECT} "^FMPL [0-9]+\\.[0-9]+\\.[0-9]+$" "^Transports:"
                 "^  active +[a-z]" "CMA" "matching areas per peer +[0-9]+" "FMPL_MAI_MAX"
                 -- $<TARGET_FILE:fmpl-info>)
add_test(NAME tools_fmpl_info_version
         COMMAND ${TOOLS_EXPECT} "^FMPL [0-9]+\\.[0-9]+\\.[0-9]+$" --
                 $<TARGET_FILE:fmpl-info> --version)
# A setting given in the environment is listed with its value and source.
add_test(NAME tools_fmpl_info_env
         COMMAND ${TOOLS_EXPECT} "FMPL_MAI_MAX +77 +env" -- $<TARGET_FILE:fmpl-info> --settings)
set_tests_properties(tools_fmpl_info_env PROPERTIES ENVIRONMENT "FMPL_MAI_MAX=77")
# FMPL_SHM_CMA=0 switches CMA off, and fmpl-info says so.
add_test(NAME tools_fmpl_info_nocma
         COMMAND ${TOOLS_EXPECT} "CMA.*no, disabled by FMPL_SHM_CMA=0" --
                 $<TARGET_FILE:fmpl-info>)
set_tests_properties(tools_fmpl_info_nocma PROPERTIES ENVIRONMENT "FMPL_SHM_CMA=0")

# The bench programs, tiny: they check their results, so this is a correctness test.
if(EXISTS ${CMAKE_SOURCE_DIR}/bench/CMakeLists.txt)
  set(_run ${FMPLRUN} --timeout 100)
  add_test(NAME tools_bench_demo
           COMMAND ${TOOLS_EXPECT} "^PASS: 4 ranks" -- ${_run} -n 4 $<TARGET_FILE:fmpl_demo>)
  add_test(NAME tools_bench_pingpong
           COMMAND ${TOOLS_EXPECT} "^fmpl,stream,malloc,2,65536,bw_GBps," --
                   ${_run} -n 2 $<TARGET_FILE:fmpl_pingpong> --quick --reps=1 --max=64K --csv)
  add_test(NAME tools_bench_pingpong_heap
           COMMAND ${TOOLS_EXPECT} "^ +64 KiB" -- ${_run} -n 2 $<TARGET_FILE:fmpl_pingpong>
                   --quick --reps=1 --max=64K --mem=heap --mode=blocking)
  add_test(NAME tools_bench_prepost
           COMMAND ${TOOLS_EXPECT} "posting gap, 50th receive" -- ${_run} -n 2
                   $<TARGET_FILE:fmpl_prepost> --quick --reps=1 --mode=50)
  add_test(NAME tools_bench_coll
           COMMAND ${TOOLS_EXPECT} "^ +allreduce +8 KiB" -- ${_run} -n 3
                   $<TARGET_FILE:fmpl_coll> --quick --reps=1 --max=8K)
  add_test(NAME tools_bench_coll_persistent
           COMMAND ${TOOLS_EXPECT} "^ +allreduce_persistent +8 KiB" -- ${_run} -n 3
                   $<TARGET_FILE:fmpl_coll> --quick --reps=1 --max=8K
                   --mode=bcast_persistent,allreduce_persistent)
  add_test(NAME tools_bench_hello
           COMMAND ${TOOLS_EXPECT} "^fmpl,rss,malloc,2,0,peak_rss_kib,[0-9]+$" -- ${_run} -n 2
                   $<TARGET_FILE:fmpl_hello>)
  # mpi_rma's strided puts and gets (MPI_Win_create windows, vector target types): it
  # checks the contents and that the gaps stay untouched.
  add_test(NAME tools_bench_rma_strided
           COMMAND ${TOOLS_EXPECT} "^ +strided_get +4 KiB" -- ${_run} -n 2
                   ${CMAKE_BINARY_DIR}/bin/mpi_rma.fmpl --mode=strided --quick --reps=1
                   --sizes=8,100,4K)
  # fmpl_blacs (the native 2-D transfers against pack + send + unpack): it checks the data.
  add_test(NAME tools_bench_blacs
           COMMAND ${TOOLS_EXPECT} "^fmpl,blacs_pack,malloc,2,m3_n5_z7,latency_us," -- ${_run}
                   -n 2 $<TARGET_FILE:fmpl_blacs> --csv --quick --reps=1 --m=3 --n=5 --z=7)
  # mpi_offload (seed 003's delayed rank and overlap): it checks every result once.
  add_test(NAME tools_bench_offload
           COMMAND ${TOOLS_EXPECT} "^ *overlap_allreduce_persistent +64 KiB" -- ${_run} -n 3
                   ${CMAKE_BINARY_DIR}/bin/mpi_offload.fmpl --reps=1 --sizes=8,64K --delay=2)
  # mpi_coll_large (large bcast, allreduce, allgather): it checks every result once.
  add_test(NAME tools_bench_coll_large
           COMMAND ${TOOLS_EXPECT} "^mpi,allgather,malloc,3,1048576,time_us," -- ${_run} -n 3
                   ${CMAKE_BINARY_DIR}/bin/mpi_coll_large.fmpl --csv --reps=1 --sizes=64K,1M)
  # the machine's cache-line floor (bench/cacheline), no library
  add_test(NAME tools_bench_cacheline
           COMMAND ${TOOLS_EXPECT} "^cacheline,0,1,one_way_us,[0-9.]+$" --
                   $<TARGET_FILE:cacheline> --csv --trips=1000)
  # mpi_robust (bench/robust.sh's job), our build, tiny: the rows it prints, not the figures.
  add_test(NAME tools_bench_robust
           COMMAND ${TOOLS_EXPECT} "^PASS$" -- sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_robust.sh
                   ${FMPLRUN} ${CMAKE_BINARY_DIR}/bin/mpi_robust.fmpl 3 200)
endif()

get_property(_tools_tests DIRECTORY PROPERTY TESTS)
foreach(t ${_tools_tests})
  if(t MATCHES "^tools_")
    set_tests_properties(${t} PROPERTIES TIMEOUT 180)
  endif()
endforeach()
