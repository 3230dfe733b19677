# udp: the reliable-datagram transport (src/vnic/udp.c), exercised on one machine with
# FMPL_TRANSPORT=udp (every peer but self over udp on 127.0.0.1). Faults are injected
# inside the transport with a seed (FMPL_UDP_LOSS, _DUP, _REORDER).
set(UDP_ENV FMPL_TRANSPORT=udp FMPL_UDP_PEER_TIMEOUT_MS=30000)
set(UDP_FAULTS ${UDP_ENV} FMPL_UDP_LOSS=0.1 FMPL_UDP_DUP=0.05 FMPL_UDP_REORDER=0.05
    FMPL_UDP_SEED=7)

# udp_variant(NAME TARGET RANKS n... ENV k=v... [ARGS ...] [TIMEOUT s]): runs an existing
# test program (defined in another tests/<area>.cmake) under a udp environment.
function(udp_variant name target)
  cmake_parse_arguments(U "" "TIMEOUT" "RANKS;ENV;ARGS" ${ARGN})
  if(NOT U_TIMEOUT)
    set(U_TIMEOUT 120)
  endif()
  foreach(n ${U_RANKS})
    add_test(NAME ${name}.np${n} COMMAND ${FMPLRUN} -n ${n} --timeout ${U_TIMEOUT}
             $<TARGET_FILE:${target}> ${U_ARGS})
    set_tests_properties(${name}.np${n} PROPERTIES TIMEOUT ${U_TIMEOUT} ENVIRONMENT "${U_ENV}")
  endforeach()
endfunction()

# The vnic tests over udp, without and with faults: puts/gets (contiguous and iovec,
# 0 B to 4 MiB), refused operations, atomics, notifications, waiting (sleeping on the
# socket), active messages.
foreach(t vnic_rma vnic_errors vnic_atomic vnic_notify vnic_wait vnic_am)
  udp_variant(udp_${t} ${t} RANKS 2 3 4 7 ENV ${UDP_ENV})
  udp_variant(udp_${t}_faults ${t} RANKS 3 ENV ${UDP_FAULTS})
endforeach()
udp_variant(udp_vnic_rma_mtu1468_faults vnic_rma RANKS 2 ENV ${UDP_FAULTS} FMPL_UDP_MTU=1556)
# The MTU between hosts without faults: runs of datagrams leave with UDP GSO and arrive
# coalesced by UDP GRO (split by the receiver); and the same with both off.
udp_variant(udp_vnic_rma_mtu1468 vnic_rma RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_MTU=1556)
udp_variant(udp_vnic_rma_mtu1468_nogso vnic_rma RANKS 2 ENV ${UDP_ENV} FMPL_UDP_MTU=1556
            FMPL_UDP_GSO=0)

# Ordered, exactly-once, intact delivery of messages of random sizes (1 B .. 1 MiB).
fmpl_test(udp_stream udp_stream.c RANKS 1 2 3 4 7 ENV ${UDP_ENV} ARGS 2000 TIMEOUT 120)
udp_variant(udp_stream_faults udp_stream RANKS 2 3 4 7 ENV ${UDP_FAULTS} ARGS 2000)
udp_variant(udp_stream_faults_mtu1468 udp_stream RANKS 3 ENV ${UDP_FAULTS} FMPL_UDP_MTU=1556
            ARGS 1000)
udp_variant(udp_stream_mtu1468 udp_stream RANKS 2 4 ENV ${UDP_ENV} FMPL_UDP_MTU=1556
            UDP_STREAM_EXPECT_GSO=1 UDP_STREAM_EXPECT_TWIN=1 ARGS 2000)
# Every datagram by the one socket (no twin socket connect()ed to a busy peer).
udp_variant(udp_stream_unconnected udp_stream RANKS 3 ENV ${UDP_ENV} FMPL_UDP_CONNECTED=0
            ARGS 2000)
udp_variant(udp_vnic_rma_unconnected vnic_rma RANKS 3 ENV ${UDP_ENV} FMPL_UDP_CONNECTED=0)
# The paper's experiment, scaled: 100 000 messages per sender at 10% loss.
udp_variant(udp_stream_100k udp_stream RANKS 2 ENV ${UDP_FAULTS} ARGS 100000 TIMEOUT 300)
# Zero-copy puts (udp.c's ZERO-COPY, here from 1 KiB on): retransmitted from the sender's
# buffer until acknowledged, copied into the send pool when the wait for that is cut
# short; the sender scribbles over its buffer once a post returns. Without faults, at 1%
# loss, and at 10% loss with duplication and reordering.
udp_variant(udp_stream_zcopy udp_stream RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_ZCOPY_MIN=1024
            UDP_STREAM_EXPECT_ZCOPY=1)
udp_variant(udp_stream_zcopy_loss1 udp_stream RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_LOSS=0.01
            FMPL_UDP_SEED=11 FMPL_UDP_ZCOPY_MIN=1024 UDP_STREAM_EXPECT_ZCOPY=1)
udp_variant(udp_stream_zcopy_faults udp_stream RANKS 2 3 ENV ${UDP_FAULTS} FMPL_UDP_ZCOPY_MIN=1024
            UDP_STREAM_EXPECT_ZCOPY=1)
# Zero-copy puts at the default threshold: a ring of 1 MiB puts, then one to a rank that
# sleeps outside the library (the put returns after copying what is unacknowledged), with
# and without the progress thread, at 1% and at 10% loss (with duplication and reordering).
fmpl_test(udp_zcopy udp_zcopy.c RANKS 1 2 3 ENV ${UDP_ENV} TIMEOUT 60)
udp_variant(udp_zcopy_nothread udp_zcopy RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_THREAD=0 TIMEOUT 60)
udp_variant(udp_zcopy_loss1 udp_zcopy RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_LOSS=0.01 FMPL_UDP_SEED=3
            FMPL_UDP_THREAD=0 TIMEOUT 60)
udp_variant(udp_zcopy_faults udp_zcopy RANKS 2 3 ENV ${UDP_FAULTS} FMPL_UDP_THREAD=0 TIMEOUT 60)
udp_variant(udp_zcopy_faults_thread udp_zcopy RANKS 3 ENV ${UDP_FAULTS} TIMEOUT 60)
# VNIC_F_DEFER: held operations leave with the next post to their peer (one datagram, a
# bundle) or at the next entry into the library (progress, flush, a post to another peer,
# wait, wait_keep, fence, close); order and delivery at the target checked in each case,
# datagram counts without faults, order under injected faults, and over shm (flag ignored).
fmpl_test(udp_defer udp_defer.c RANKS 1 2 3 4 7 ENV ${UDP_ENV} UDP_DEFER_EXACT=1 TIMEOUT 60)
udp_variant(udp_defer_faults udp_defer RANKS 2 3 7 ENV ${UDP_FAULTS} TIMEOUT 120)
udp_variant(udp_defer_shm udp_defer RANKS 1 2 3 ENV FMPL_TRANSPORT=auto TIMEOUT 60)
# A slow receiver: STOP and GO.
fmpl_test(udp_stopgo udp_stopgo.c RANKS 2 3 4 7
          ENV ${UDP_ENV} FMPL_UDP_EXEC_BUDGET=1 FMPL_UDP_RCVBUF=65536 TIMEOUT 120)
udp_variant(udp_stopgo_faults udp_stopgo RANKS 3
            ENV ${UDP_FAULTS} FMPL_UDP_EXEC_BUDGET=1 FMPL_UDP_RCVBUF=65536)
# Datagrams from outside the job are refused and counted.
fmpl_test(udp_foreign udp_foreign.c RANKS 2 3 4 7 ENV ${UDP_ENV} TIMEOUT 60)
# An on-path attacker: every packet type forged from a sniffed datagram, and replays,
# from the sender's own address and from an ordinary socket, refused and counted; the
# job completes. With authentication on (MAC) and off (checksum, address and replay
# checks stay).
fmpl_test(udp_forge udp_forge.c RANKS 2 3 4 7 ENV ${UDP_ENV} TIMEOUT 60)
udp_variant(udp_forge_authoff udp_forge RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_AUTH=off TIMEOUT 60)
# Ranks that disagree on FMPL_UDP_AUTH refuse to start, saying so.
add_test(NAME udp_auth_mismatch COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/udp_auth_mismatch.sh
         ${FMPLRUN} $<TARGET_FILE:udp_forge>)
set_tests_properties(udp_auth_mismatch PROPERTIES TIMEOUT 90)
# FMPL_UDP_STATS=1 prints the refused packets (foreign, forged, replayed...).
add_test(NAME udp_stats_refused COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/udp_stats_refused.sh
         ${FMPLRUN} $<TARGET_FILE:udp_forge>)
set_tests_properties(udp_stats_refused PROPERTIES TIMEOUT 90)
# The progress thread: a computing target serves puts, gets and atomics but runs no
# handler; stream order between thread and application; without the thread nothing
# moves while the target computes. With faults: the thread retransmits and answers LOSE.
fmpl_test(udp_thread udp_thread.c RANKS 2 3 4 7 ENV ${UDP_ENV} ARGS on TIMEOUT 120)
udp_variant(udp_thread_faults udp_thread RANKS 3 ENV ${UDP_FAULTS} ARGS on)
udp_variant(udp_thread_off udp_thread RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_THREAD=0 ARGS off)
# A silent peer makes operations fail with FMPL_ERR_PEER, no hang.
fmpl_test(udp_timeout udp_timeout.c RANKS 2 3 ENV FMPL_TRANSPORT=udp FMPL_UDP_PEER_TIMEOUT_MS=500 FMPL_UDP_THREAD=0
          TIMEOUT 60)

# The native API and the MPI face over udp (a representative subset; the full suites
# run by hand: FMPL_TRANSPORT=udp ctest).
foreach(t fmpl_p2p fmpl_2d fmpl_any fmpl_comm fmpl_collectives fmpl_spool fmpl_preposted)
  udp_variant(udp_${t} ${t} RANKS 2 3 4 ENV ${UDP_ENV})
endforeach()
udp_variant(udp_fmpl_p2p_faults fmpl_p2p RANKS 3 ENV ${UDP_FAULTS})
# Zero-copy puts and get answers (from 1 KiB on) with faults: the native API, the vnic's
# puts and gets (contents checked), the MPI face's rendezvous (its gets), at 1% and 10% loss.
udp_variant(udp_fmpl_p2p_zcopy_faults fmpl_p2p RANKS 2 3 ENV ${UDP_FAULTS} FMPL_UDP_ZCOPY_MIN=1024)
udp_variant(udp_vnic_rma_zcopy_faults vnic_rma RANKS 2 3 ENV ${UDP_FAULTS} FMPL_UDP_ZCOPY_MIN=1024)
udp_variant(udp_vnic_rma_zcopy_loss1 vnic_rma RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_LOSS=0.01
            FMPL_UDP_SEED=5 FMPL_UDP_ZCOPY_MIN=1024)
udp_variant(udp_mpi_p2p_rndv_zcopy_faults mpi_p2p RANKS 2 3 ENV ${UDP_FAULTS} FMPL_MPI_EAGER_MAX=0
            FMPL_UDP_ZCOPY_MIN=1024 TIMEOUT 300)
# RECEIVE IN PLACE (udp.c): fragments of large contiguous puts and get answers received
# straight into their destination (counted: some must be), contents and the bytes around
# each destination checked; under faults (misses: duplicates, reordering, losses land in
# the destination first and are copied back); with authentication off (the checksum over
# two pieces, on receipt and for zero-copy sends); and with it switched off.
udp_variant(udp_stream_place udp_stream RANKS 2 3 ENV ${UDP_ENV} UDP_STREAM_EXPECT_PLACE=1)
udp_variant(udp_stream_place_faults udp_stream RANKS 2 3 ENV ${UDP_FAULTS}
            UDP_STREAM_EXPECT_PLACE=1)
udp_variant(udp_stream_place_authoff udp_stream RANKS 2 3 ENV ${UDP_ENV} FMPL_UDP_AUTH=off
            FMPL_UDP_ZCOPY_MIN=1024 UDP_STREAM_EXPECT_ZCOPY=1 UDP_STREAM_EXPECT_PLACE=1)
udp_variant(udp_stream_place_authoff_faults udp_stream RANKS 3 ENV ${UDP_FAULTS}
            FMPL_UDP_AUTH=off FMPL_UDP_ZCOPY_MIN=1024 UDP_STREAM_EXPECT_PLACE=1)
udp_variant(udp_stream_noplace udp_stream RANKS 2 ENV ${UDP_ENV} FMPL_UDP_PLACE=0)
udp_variant(udp_vnic_rma_place vnic_rma RANKS 2 3 ENV ${UDP_ENV} VNIC_RMA_EXPECT_PLACE=1)
udp_variant(udp_vnic_rma_place_faults vnic_rma RANKS 2 ENV ${UDP_FAULTS} VNIC_RMA_EXPECT_PLACE=1)
udp_variant(udp_mpi_p2p_rndv_place_faults mpi_p2p RANKS 2 ENV ${UDP_FAULTS} FMPL_MPI_EAGER_MAX=0
            TIMEOUT 300)
# The large-message collective schedules over udp (fewer sizes).
udp_variant(udp_coll_test_large coll_test_large RANKS 2 3 4 ENV ${UDP_ENV} ARGS quick TIMEOUT 300)
# Receive headers held for the next payload (VNIC_F_DEFER): at 2 ranks (one per core, holds
# that outlast any round trip) the native ping-pong must cost one datagram per message.
udp_variant(udp_fmpl_coalesce fmpl_coalesce RANKS 3 4 7 ENV ${UDP_ENV})
udp_variant(udp_fmpl_coalesce_exact fmpl_coalesce RANKS 2 ENV ${UDP_ENV} FMPL_COALESCE_EXACT=1
            FMPL_UDP_DEFER_US=100000 FMPL_SPIN_US=100000)
udp_variant(udp_fmpl_coalesce_faults fmpl_coalesce RANKS 2 3 ENV ${UDP_FAULTS} ARGS 500)
foreach(t mpi_p2p mpi_coll mpi_comm_basic)
  udp_variant(udp_${t} ${t} RANKS 2 3 4 ENV ${UDP_ENV} TIMEOUT 300)
endforeach()
udp_variant(udp_mpi_p2p_rndv mpi_p2p RANKS 3 ENV ${UDP_ENV} FMPL_MPI_EAGER_MAX=0)
udp_variant(udp_mpi_p2p_faults mpi_p2p RANKS 3 ENV ${UDP_FAULTS} TIMEOUT 300)
udp_variant(udp_mpi_comm_mailbox mpi_comm_mailbox RANKS 3 ENV ${UDP_ENV} FMPL_COLL_GROUPS=6)

# The packet parser: a unit run with any compiler, and a libFuzzer run (20 s) when
# clang can build one (tools/udp_fuzz.sh runs it longer by hand).
add_executable(udp_wire udp_fuzz.c ${CMAKE_SOURCE_DIR}/src/vnic/udp_auth.c)
target_compile_definitions(udp_wire PRIVATE UDP_FUZZ_MAIN)
target_include_directories(udp_wire PRIVATE ${CMAKE_SOURCE_DIR}/src ${CMAKE_SOURCE_DIR}/include)
target_link_libraries(udp_wire PRIVATE fmpl_mac)
add_test(NAME udp_wire COMMAND $<TARGET_FILE:udp_wire>)
set_tests_properties(udp_wire PROPERTIES TIMEOUT 60)
find_program(FMPL_CLANG NAMES clang)
if(FMPL_CLANG)
  execute_process(COMMAND ${CMAKE_COMMAND} -E echo "int LLVMFuzzerTestOneInput(const unsigned char *d, unsigned long n) { (void)d; (void)n; return 0; }"
                  OUTPUT_FILE ${CMAKE_BINARY_DIR}/fuzz_probe.c)
  execute_process(COMMAND ${FMPL_CLANG} -fsanitize=fuzzer ${CMAKE_BINARY_DIR}/fuzz_probe.c
                          -o ${CMAKE_BINARY_DIR}/fuzz_probe
                  RESULT_VARIABLE FMPL_FUZZ_RC OUTPUT_QUIET ERROR_QUIET)
  if(FMPL_FUZZ_RC EQUAL 0)
    add_custom_command(OUTPUT ${CMAKE_BINARY_DIR}/bin/udp_fuzz
      COMMAND ${FMPL_CLANG} -g -O1 -fsanitize=fuzzer,address,undefined
              -fno-sanitize-recover=undefined -I${CMAKE_SOURCE_DIR}/src
              -I${CMAKE_SOURCE_DIR}/include ${FMPL_CRYPTO_CFLAGS} ${FMPL_SODIUM_CFLAGS}
              ${CMAKE_CURRENT_SOURCE_DIR}/udp_fuzz.c ${CMAKE_SOURCE_DIR}/src/vnic/udp_auth.c
              ${FMPL_CRYPTO_LDFLAGS} ${FMPL_SODIUM_LDFLAGS} ${FMPL_IPSEC_MB_FLAGS}
              -o ${CMAKE_BINARY_DIR}/bin/udp_fuzz
      DEPENDS ${CMAKE_CURRENT_SOURCE_DIR}/udp_fuzz.c ${CMAKE_SOURCE_DIR}/src/vnic/udp_wire.h
              ${CMAKE_SOURCE_DIR}/src/vnic/udp_auth.h ${CMAKE_SOURCE_DIR}/src/vnic/udp_auth.c
      COMMENT "libFuzzer target of the udp packet parser")
    add_custom_target(udp_fuzz ALL DEPENDS ${CMAKE_BINARY_DIR}/bin/udp_fuzz)
    # crash artifacts go to the build tree, never into the source tree
    add_test(NAME udp_fuzz COMMAND ${CMAKE_BINARY_DIR}/bin/udp_fuzz -max_total_time=20
             -rss_limit_mb=1024 -print_final_stats=1
             -artifact_prefix=${CMAKE_BINARY_DIR}/udp_fuzz-)
    set_tests_properties(udp_fuzz PROPERTIES TIMEOUT 90)
    # tools/udp_fuzz.sh keeps its crash artifacts out of the repository: a run made to
    # fail at once (1 MB memory limit) leaves its artifact under TMPDIR, none in the tree
    add_test(NAME udp_fuzz_artifacts COMMAND sh -c
      "d=${CMAKE_BINARY_DIR}/udp_fuzz_artifacts_test; rm -rf $d; mkdir -p $d; \
       if TMPDIR=$d sh ${CMAKE_SOURCE_DIR}/tools/udp_fuzz.sh 5 $d/corpus -rss_limit_mb=1; then \
         echo 'FAIL: the run did not stop'; exit 1; fi; \
       ls $d/fmpl-udp-fuzz/artifacts/oom-* || { echo 'FAIL: no artifact in TMPDIR'; exit 1; }; \
       if ls ${CMAKE_SOURCE_DIR} | grep -E '^(oom|crash|leak|timeout|slow-unit)-'; then \
         echo 'FAIL: artifacts in the source tree'; exit 1; fi; echo PASS")
    set_tests_properties(udp_fuzz_artifacts PROPERTIES TIMEOUT 300 PASS_REGULAR_EXPRESSION "PASS")
  endif()
endif()

# Processes of two separately started jobs (other jobs, udp.c): NA x NB ranks, each job on
# shm among itself and udp (opened for this alone) between the jobs; then both jobs with
# every peer over udp, and with faults injected.
add_executable(vnic_jobs vnic_jobs.c)
target_link_libraries(vnic_jobs PRIVATE fmpl_static)
target_include_directories(vnic_jobs PRIVATE ${CMAKE_SOURCE_DIR}/tests)
foreach(pair 1_1 2_1 3_2 4_7)
  string(REPLACE "_" ";" nn ${pair})
  list(GET nn 0 na)
  list(GET nn 1 nb)
  add_test(NAME vnic_jobs.${pair} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh
           ${FMPLRUN} $<TARGET_FILE:vnic_jobs> ${na} ${nb})
  set_tests_properties(vnic_jobs.${pair} PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS")
endforeach()
add_test(NAME vnic_jobs_udp.2_3 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh ${FMPLRUN}
         $<TARGET_FILE:vnic_jobs> 2 3 ${UDP_ENV})
add_test(NAME vnic_jobs_faults.2_2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh
         ${FMPLRUN} $<TARGET_FILE:vnic_jobs> 2 2 ${UDP_FAULTS})
set_tests_properties(vnic_jobs_udp.2_3 vnic_jobs_faults.2_2 PROPERTIES TIMEOUT 120
                     PASS_REGULAR_EXPRESSION "PASS")
# An on-path attacker between two jobs: packets of the other job sniffed, replayed, forged
# (sniffed tag, zeroed tag, flipped bit) and sent from a stranger's socket, refused and
# counted at the victim; the jobs go on. Shm jobs (udp between them only), every peer over
# udp, and FMPL_UDP_AUTH=off in both.
add_executable(udp_forge_jobs udp_forge_jobs.c)
target_link_libraries(udp_forge_jobs PRIVATE fmpl_static)
target_include_directories(udp_forge_jobs PRIVATE ${CMAKE_SOURCE_DIR}/tests ${CMAKE_SOURCE_DIR}/src)
foreach(pair 1_1 2_3)
  string(REPLACE "_" ";" nn ${pair})
  list(GET nn 0 na)
  list(GET nn 1 nb)
  add_test(NAME udp_forge_jobs.${pair} COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh
           ${FMPLRUN} $<TARGET_FILE:udp_forge_jobs> ${na} ${nb})
endforeach()
add_test(NAME udp_forge_jobs_udp.3_2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh
         ${FMPLRUN} $<TARGET_FILE:udp_forge_jobs> 3 2 ${UDP_ENV})
add_test(NAME udp_forge_jobs_authoff.2_2 COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/vnic_jobs.sh
         ${FMPLRUN} $<TARGET_FILE:udp_forge_jobs> 2 2 FMPL_UDP_AUTH=off)
set_tests_properties(udp_forge_jobs.1_1 udp_forge_jobs.2_3 udp_forge_jobs_udp.3_2
                     udp_forge_jobs_authoff.2_2 PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "PASS")
# Spawned children over udp: parents and children each with every peer over udp.
udp_variant(udp_mpi_spawn mpi_spawn RANKS 1 3 ENV ${UDP_ENV} ARGS 3 TIMEOUT 120)
