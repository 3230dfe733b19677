# MPI communicators, groups and Cartesian topologies (src/mpi/comm.c, group.c, topo.c,
# libcoll.c).
fmpl_test(mpi_comm_group mpi_comm_group.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_comm_basic mpi_comm_basic.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_comm_cart mpi_comm_cart.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_comm_inter mpi_comm_inter.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_comm_idup_basic mpi_comm_idup_basic.c RANKS 1 2 3 4 7 TIMEOUT 60)
# MPI_Comm_idup / idup_with_info: use after completion, many outstanding, overlap with
# blocking dups on communicators sharing members, info, attributes, intercommunicators;
# 700 idup/free cycles of WORLD, a half and SELF (2100 context ids: a leak fails).
fmpl_test(mpi_comm_idup mpi_comm_idup.c RANKS 1 2 3 4 7 ARGS 700 TIMEOUT 120)
# Mailbox groups of communicators other than WORLD: the same decision at every member,
# more live communicators than slots (FMPL_COLL_GROUPS=6: the rest over point-to-point),
# frees in per-rank orders, slot reuse over 300 cycles, splits, persistent collectives,
# a communicator left to MPI_Finalize; MPI_Comm_idup in the same scheme (several
# outstanding, mixed with blocking dups and frees in per-rank orders, exact group counts
# when nothing competes, idup/free cycles) (over udp: tests/udp.cmake).
fmpl_test(mpi_comm_mailbox mpi_comm_mailbox.c RANKS 1 2 3 4 7 ENV FMPL_COLL_GROUPS=6 TIMEOUT 120)

# Connecting jobs (src/mpi/dpm.c): two separately started jobs of S and C ranks accept /
# connect through a port, exchange, broadcast, merge, disconnect and join; error paths.
add_executable(mpi_connect mpi_connect.c)
target_link_libraries(mpi_connect PRIVATE fmpl_static)
foreach(pair 1_1 2_1 1_3 3_2 4_7)
  string(REPLACE "_" ";" nn ${pair})
  list(GET nn 0 ns)
  list(GET nn 1 nc)
  add_test(NAME mpi_connect.${pair} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_connect.sh
           ${FMPLRUN} $<TARGET_FILE:mpi_connect> ${ns} ${nc})
  set_tests_properties(mpi_connect.${pair} PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS")
endforeach()
fmpl_test(mpi_connect_self mpi_connect.c RANKS 2 3 ARGS self none)
# The same with every peer over udp (FMPL_TRANSPORT=udp), with FMPL_UDP_AUTH=off in both
# jobs (keyed checksums between the jobs too), and with jobs that disagree on it (their
# join fails on both sides, naming the setting).
function(mpi_connect_variant vname ns nc)
  add_test(NAME mpi_connect_${vname}.${ns}_${nc} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/mpi_connect.sh
           ${FMPLRUN} $<TARGET_FILE:mpi_connect> ${ns} ${nc} ${ARGN})
  set_tests_properties(mpi_connect_${vname}.${ns}_${nc} PROPERTIES TIMEOUT 120
                       PASS_REGULAR_EXPRESSION "PASS")
endfunction()
mpi_connect_variant(udp 2 3 FMPL_TRANSPORT=udp)
mpi_connect_variant(authoff 2 1 FMPL_UDP_AUTH=off)
mpi_connect_variant(authoff_udp 1 2 FMPL_TRANSPORT=udp FMPL_UDP_AUTH=off)
add_test(NAME mpi_connect_authmismatch COMMAND env MISMATCH=1 sh
         ${CMAKE_CURRENT_SOURCE_DIR}/mpi_connect.sh ${FMPLRUN} $<TARGET_FILE:mpi_connect> 1 2)
set_tests_properties(mpi_connect_authmismatch PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS")
# A connect nobody accepts (MPICH's errors/spawn/connect_timeout_no_accept): MPI_ERR_PORT on
# every member of the connecting group after the wait that MPICH's
# MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT asks for (2 s), or FMPL_PORT_TIMEOUT_MS (1.5 s) when both
# are set, then after the info key timeout (1 s); the messages name the setting and its value.
foreach(n 2 5)
  add_test(NAME mpi_connect_timeout.np${n} COMMAND ${FMPLRUN} -n ${n} --timeout 60
           $<TARGET_FILE:mpi_connect> timeout MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT 2000)
  set_tests_properties(mpi_connect_timeout.np${n} PROPERTIES TIMEOUT 60
    ENVIRONMENT "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT=2" PASS_REGULAR_EXPRESSION "timeout: OK")
endforeach()
add_test(NAME mpi_connect_timeout_both COMMAND ${FMPLRUN} -n 2 --timeout 60
         $<TARGET_FILE:mpi_connect> timeout FMPL_PORT_TIMEOUT_MS 1500)
set_tests_properties(mpi_connect_timeout_both PROPERTIES TIMEOUT 60
  ENVIRONMENT "MPIR_CVAR_CH4_COMM_CONNECT_TIMEOUT=2;FMPL_PORT_TIMEOUT_MS=1500"
  PASS_REGULAR_EXPRESSION "timeout: OK")

# Spawning (src/mpi/spawn.c): 1, 2 and 3 parents spawn 1, 2, 3 children, talk both ways,
# merge, disconnect; spawn_multiple of two commands; a missing program -> MPI_ERR_SPAWN
# (over udp: tests/udp.cmake).
fmpl_test(mpi_spawn mpi_spawn.c RANKS 1 2 3 ARGS 3 TIMEOUT 120)
fmpl_test(mpi_spawn_singleton mpi_spawn.c ARGS singleton)
set_tests_properties(mpi_spawn_singleton PROPERTIES PASS_REGULAR_EXPRESSION "mpi_spawn: OK")
