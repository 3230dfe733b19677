# vnic: the software NIC and its shared-memory transport. Large puts to private memory
# take one of three paths, each tested: FMPL_SHM_PIPELINE=1 (bounce pipeline, CMA after a
# stall), FMPL_SHM_CMA=0 (pipeline only) and FMPL_SHM_PIPELINE=0 (single-copy CMA); the
# default is whichever was measured for the host (vnic_tune.cmake tests every get path).
fmpl_test(vnic_heap vnic_heap.c RANKS 0)
foreach(t vnic_rma vnic_errors vnic_atomic vnic_notify vnic_wait)
  fmpl_test(${t} ${t}.c RANKS 1 2 3 4 7 TIMEOUT 60)
  fmpl_test(${t}_nocma ${t}.c RANKS 2 3 4 7 ENV FMPL_SHM_CMA=0 TIMEOUT 60)
endforeach()
foreach(t vnic_rma vnic_notify)
  fmpl_test(${t}_cma ${t}.c RANKS 2 3 ENV FMPL_SHM_PIPELINE=0 TIMEOUT 60)
  fmpl_test(${t}_pipeline ${t}.c RANKS 2 3 ENV FMPL_SHM_PIPELINE=1 TIMEOUT 60)
endforeach()
# A pipelined put turns to CMA as soon as the chunks are all in flight.
fmpl_test(vnic_rma_stall vnic_rma.c RANKS 2 3
          ENV FMPL_SHM_PIPELINE=1 FMPL_SHM_STALL_US=0 FMPL_SHM_BOUNCE_CHUNK=4096 TIMEOUT 60)
# Small bounce chunks and a small inbox: many chunks in flight, inbox back-pressure.
fmpl_test(vnic_rma_small vnic_rma.c RANKS 3
          ENV FMPL_SHM_CMA=0 FMPL_SHM_BOUNCE_CHUNK=4096 FMPL_SHM_CELLS=128 TIMEOUT 60)
# Latency/bandwidth sanity program: as a test it only checks data (few iterations);
# run it by hand for figures: build/bin/fmplrun -n 2 build/bin/vnic_pingpong 200000
fmpl_test(vnic_pingpong vnic_pingpong.c RANKS 2 ARGS 50 TIMEOUT 60)
# A job that does not fit in /dev/shm fails at start-up with a clear message.
add_test(NAME vnic_shm_room COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/shm_room_test.sh
         ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(vnic_shm_room PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 60)
# Direct stores into same-host peers' heap memory (vnic_peer_ptr / vnic_peer_wake); over
# udp no peer but self is reachable that way.
fmpl_test(vnic_direct vnic_direct.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(vnic_direct_udp vnic_direct.c RANKS 2 3 ENV FMPL_TRANSPORT=udp ARGS none TIMEOUT 60)
# Active messages (VNIC_OP_SEND): every length up to am_max, order with notifying puts.
fmpl_test(vnic_am vnic_am.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(vnic_am_nocma vnic_am.c RANKS 2 3 ENV FMPL_SHM_CMA=0 TIMEOUT 60)
fmpl_test(vnic_am_small vnic_am.c RANKS 3 ENV FMPL_SHM_CELLS=64 TIMEOUT 60)
# Fastbox: small active messages through the pair's shared line, ordered with the
# inbox; more peers than a rank polls (7 ranks), a small inbox, and without fastbox.
fmpl_test(vnic_fastbox vnic_fastbox.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(vnic_fastbox_small vnic_fastbox.c RANKS 3 ENV FMPL_SHM_CELLS=64 TIMEOUT 120)
fmpl_test(vnic_fastbox_off vnic_fastbox.c RANKS 2 ENV FMPL_SHM_FASTBOX=0 TIMEOUT 120)
# vnic_cpu_needed, which decides whether a spinning wait yields: a rank queued behind
# this one (waiting, computing, asleep), and ranks on CPUs of their own.
fmpl_test(vnic_cpu vnic_cpu.c RANKS 1 2 3 TIMEOUT 60 LAUNCH --bind-to none) # (it pins itself)
# Where vnic_open leaves a rank: fmplrun binds (the library keeps it), or nobody does;
# under Hydra in tests/launch.cmake.
fmpl_test(vnic_placement vnic_placement.c RANKS 1 2 3 ARGS launcher)
fmpl_test(vnic_placement_none vnic_placement.c RANKS 2 3 ARGS none LAUNCH --bind-to none)
# Triggered operations: thresholds, a target that runs its owner's put while the owner
# sleeps, a chain past sleeping ranks, cancel and errors; without CMA (heap sources only
# reach the target) and over udp (the owner runs everything).
fmpl_test(vnic_trigger vnic_trigger.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(vnic_trigger_nocma vnic_trigger.c RANKS 2 3 ENV FMPL_SHM_CMA=0 TIMEOUT 60)
fmpl_test(vnic_trigger_wake vnic_trigger.c RANKS 3 4 ENV FMPL_SLEEP_US=1000000 TIMEOUT 60)
fmpl_test(vnic_trigger_udp vnic_trigger.c RANKS 2 3 ENV FMPL_TRANSPORT=udp ARGS udp TIMEOUT 60)
