# MPI blocking collectives on intracommunicators (src/mpi/coll_basic.c, coll_reduce.c):
# every function and root, in place, derived types, sizes 0..100000, exact reductions,
# non-commutative order, errors; also with every message through rendezvous.
fmpl_test(mpi_coll mpi_coll.c RANKS 1 2 3 4 5 7 8 TIMEOUT 300)
fmpl_test(mpi_coll_rndv mpi_coll.c RANKS 3 4 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 300)
# The large-count v-forms (gatherv_c ... alltoallw_c, reduce_scatter_c), blocking,
# nonblocking and persistent, with uneven, empty and gapped blocks checked element by
# element (their 64-bit count arrays), and a negative count.
fmpl_test(mpi_coll_vc mpi_coll_vc.c RANKS 1 2 3 4 7 TIMEOUT 120)
# MPI_I* nonblocking and MPI-4.0 persistent (*_init + MPI_Start) collectives on
# intracommunicators (cases and checks shared in mpi_coll_common.h): every function and
# root, in place, derived types, sizes 0 / 1 / 7 / 100000, exact reductions, a
# non-commutative op, many outstanding on one and two communicators, overlap with
# point-to-point, repeated starts, MPI_Startall, MPI_Request_free, errors.
fmpl_test(mpi_coll_nb mpi_coll_nb.c RANKS 1 2 3 4 5 8 TIMEOUT 300)
fmpl_test(mpi_coll_persist mpi_coll_persist.c RANKS 1 2 3 4 5 8 TIMEOUT 300)
# The same without lanes (point-to-point only), and with one small lane that most
# requests fail to get.
fmpl_test(mpi_coll_persist_nolanes mpi_coll_persist.c RANKS 3 4 ENV FMPL_COLL_LANES=0
          TIMEOUT 300)
fmpl_test(mpi_coll_persist_onelane mpi_coll_persist.c RANKS 2 5
          ENV FMPL_COLL_LANES=1 FMPL_COLL_LANE_BYTES=64 TIMEOUT 300)
# Persistent collectives on lanes (coll.h "lanes"): more live requests than lanes, start,
# completion and free orders that differ between ranks, lanes reused, exact contents.
fmpl_test(mpi_coll_lanes mpi_coll_lanes.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_coll_lanes_few mpi_coll_lanes.c RANKS 3 4 ENV FMPL_COLL_LANES=3 TIMEOUT 120)
# MPI collectives on intercommunicators (src/mpi/coll_inter.c): every function in its
# blocking, nonblocking and persistent forms, every root, unequal groups, exact contents.
fmpl_test(mpi_coll_inter_basic mpi_coll_inter_basic.c RANKS 2 3 4 5 8 TIMEOUT 300)
# MPI collectives on intercommunicators, blocking and nonblocking: every root of each
# group, unequal groups, one-way and count-0 calls, derived types, non-commutative op.
fmpl_test(mpi_coll_inter mpi_coll_inter.c RANKS 2 3 4 5 8 TIMEOUT 120)
# Node-aware collectives (src/mpi/coll_node.c) on jobs spanning several fake hosts
# (fmplrun --hosts with tests/fake_launcher.sh: shared memory inside a host, udp between
# hosts): contents bit for bit, every root, in place, derived types, non-commutative op,
# three forms, and the exact number of cross-node datagrams of each node-aware shape;
# with FMPL_MPI_NODE_AWARE=1 (default; and with FMPL_COLL_GROUPS=1, where only
# MPI_COMM_WORLD has mailboxes), =2 (also over the mailbox calls) and
# =0 (flat: contents only). Layouts: 2 nodes of 1, 2+1, 2+2, 3+2+2, 1+3+1, and 1+1
# filled round-robin by 4 ranks (nodes not contiguous: non-commutative ops stay flat).
add_executable(mpi_coll_node mpi_coll_node.c)
target_link_libraries(mpi_coll_node PRIVATE fmpl_static)
target_include_directories(mpi_coll_node PRIVATE ${CMAKE_SOURCE_DIR}/tests)
foreach(layout "2:a,b" "3:a:2,b" "4:a:2,b:2" "7:a:3,b:2,c:2" "5:a,b:3,c" "4:a,b")
  string(REPLACE ":" ";" parts "${layout}")
  list(GET parts 0 np)
  string(REGEX REPLACE "^[0-9]+:" "" hosts "${layout}")
  string(REGEX REPLACE "[:,]" "_" tag "${hosts}")
  foreach(mode 1 p2p 2 0)
    set(tn mpi_coll_node.np${np}.${tag})
    set(args)
    # The test counts the udp messages of each call exactly. A receiver returns eager
    # credit (p2p.c, CREDIT) once it owes a quarter of its budget, and where that message
    # falls depends on which earlier sends went eagerly: with the largest budget it never
    # falls inside the run.
    set(env FMPL_MPI_NODE_AWARE=${mode} FMPL_EAGER_BUDGET=1099511627776)
    if(mode STREQUAL "p2p") # only MPI_COMM_WORLD has mailboxes
      set(tn ${tn}.p2p)
      set(args --quick)
      list(TRANSFORM env REPLACE "=p2p$" "=1")
      list(APPEND env FMPL_COLL_GROUPS=1)
    elseif(mode EQUAL 0)
      set(tn ${tn}.flat)
      set(args --quick)
    elseif(mode EQUAL 2)
      set(tn ${tn}.all)
      set(args --quick)
    endif()
    add_test(NAME ${tn}
             COMMAND ${FMPLRUN} -n ${np} --timeout 300 --hosts ${hosts} --launcher
                     "sh ${CMAKE_CURRENT_SOURCE_DIR}/fake_launcher.sh" --pmi-addr 127.0.0.1
                     $<TARGET_FILE:mpi_coll_node> ${args})
    set_tests_properties(${tn} PROPERTIES TIMEOUT 300 ENVIRONMENT "${env}")
  endforeach()
endforeach()
# The whole blocking-collective suite (every function, derived types, sizes to 100000,
# errors) on 7 ranks over 3 fake hosts: its communicators run the default mix of mailbox
# and node-aware collectives.
add_test(NAME mpi_coll.hosts.np7
         COMMAND ${FMPLRUN} -n 7 --timeout 300 --hosts a:3,b:2,c:2 --launcher
                 "sh ${CMAKE_CURRENT_SOURCE_DIR}/fake_launcher.sh" --pmi-addr 127.0.0.1
                 $<TARGET_FILE:mpi_coll>)
set_tests_properties(mpi_coll.hosts.np7 PROPERTIES TIMEOUT 300)
# Nonblocking collectives on the mailboxes (coll.h "queued runs"): 100
# outstanding Ibarriers, many mixed calls outstanding with blocking and persistent ones
# between them, completion by Wait and by Test, an active request freed, exact contents.
fmpl_test(mpi_coll_nbq mpi_coll_nbq.c RANKS 1 2 3 4 5 7 8 TIMEOUT 300)
# Large persistent bcasts as queued mailbox runs (communicator asserting
# mpi_assert_strict_persistent_collective_ordering) and large MPI_Ibcast, interleaved
# with blocking and small nonblocking calls, restarted many times; persistent bcasts
# started in each rank's own order without the assertion; MPI_Test loops; error paths.
# Also without lanes (every persistent call queued) and with small pipeline segments.
fmpl_test(mpi_coll_pq mpi_coll_pq.c RANKS 1 2 3 4 7 TIMEOUT 300)
fmpl_test(mpi_coll_pq_nolanes mpi_coll_pq.c RANKS 2 3 4 ENV FMPL_COLL_LANES=0 ARGS 20
          TIMEOUT 300)
fmpl_test(mpi_coll_pq_smallseg mpi_coll_pq.c RANKS 3 4 ENV FMPL_COLL_SEG=4096 ARGS 20
          TIMEOUT 300)
# erroneous collectives: aliasing, mismatched sizes; FMPL_MPI_CHECK=1 compares arguments
fmpl_test(mpi_coll_mismatch mpi_coll_mismatch.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_coll_mismatch_check mpi_coll_mismatch.c RANKS 2 3 4 7 ENV FMPL_MPI_CHECK=1
          ARGS check TIMEOUT 120)
# large mismatched broadcasts under the default handler: the job ends, with the message
add_test(NAME mpi_coll_mismatch_fatal
         COMMAND ${CMAKE_SOURCE_DIR}/tests/coll_mismatch_fatal.sh ${FMPLRUN}
                 $<TARGET_FILE:mpi_coll_mismatch>)
set_tests_properties(mpi_coll_mismatch_fatal PROPERTIES TIMEOUT 600)
# sizes that put some ranks on the mailboxes and others on point-to-point: the watch on
# blocking runs ends the job, also under MPI_ERRORS_RETURN
add_test(NAME mpi_coll_carrier_mismatch
         COMMAND ${CMAKE_SOURCE_DIR}/tests/coll_carrier_mismatch.sh ${FMPLRUN}
                 $<TARGET_FILE:mpi_coll_mismatch>)
set_tests_properties(mpi_coll_carrier_mismatch PROPERTIES TIMEOUT 600)
# Offloaded bcast/allreduce (coll.h "offloaded runs"): the others finish while one rank
# sleeps after its start; without CMA only the inline sizes are offloaded; turned off, only
# the contents are checked.
fmpl_test(mpi_coll_offload mpi_coll_offload.c RANKS 1 2 3 4 7 TIMEOUT 300)
fmpl_test(mpi_coll_offload_nocma mpi_coll_offload.c RANKS 3 ENV FMPL_SHM_CMA=0 ARGS plain
          TIMEOUT 300)
fmpl_test(mpi_coll_offload_off mpi_coll_offload.c RANKS 2 ENV FMPL_COLL_OFFLOAD=0 TIMEOUT 300)
