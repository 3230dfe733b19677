# Launching through other PMI-1 servers than fmplrun: MPICH's Hydra (mpiexec.hydra,
# Debian package mpich) and Slurm (srun --mpi=pmi2). The tests are registered always
# and report SKIPPED (exit 77) on a machine without the launcher, so installing it
# later needs no new configure.

# Hydra: tests/hydra_test.sh runs mpiexec.hydra -launcher fork -n N PROGRAM.
# fmpl_hydra_test(NAME TARGET NP... [ENV k=v...] [ARGS a...]) registers NAME.hydra.npN.
function(fmpl_hydra_test name target)
  cmake_parse_arguments(H "" "" "ENV;ARGS" ${ARGN})
  foreach(n ${H_UNPARSED_ARGUMENTS})
    set(tn ${name}.hydra.np${n})
    add_test(NAME ${tn} COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hydra_test.sh run ${n}
                                $<TARGET_FILE:${target}> ${H_ARGS})
    set_tests_properties(${tn} PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)
    if(H_ENV)
      set_tests_properties(${tn} PROPERTIES ENVIRONMENT "${H_ENV}")
    endif()
  endforeach()
endfunction()
# The boot layer alone (rank, size, key-value exchange with contents, the longest put
# line, and the node map: one node, every rank local).
fmpl_hydra_test(boot_basic boot_basic 1 2 3 4)
# The same with Hydra's PMI over TCP (-pmi-port: PMI_PORT + PMI_ID, the initack first).
fmpl_hydra_test(boot_basic_port boot_basic 3 ENV HYDRA_ARGS=-pmi-port)
# MPI programs with content checks, odd and even rank counts, over shared memory and
# over the udp transport.
fmpl_hydra_test(mpi_p2p mpi_p2p 2 3)
fmpl_hydra_test(mpi_coll mpi_coll 2 3)
fmpl_hydra_test(mpi_p2p_udp mpi_p2p 2 3 ENV FMPL_TRANSPORT=udp)
fmpl_hydra_test(mpi_coll_udp mpi_coll 2 3 ENV FMPL_TRANSPORT=udp)
# Placement: Hydra does not bind by default, so the library binds the ranks of the host
# itself; with -bind-to core Hydra binds and the library keeps it; FMPL_BIND=none.
fmpl_hydra_test(vnic_placement vnic_placement 1 2 3 ARGS own)
fmpl_hydra_test(vnic_placement_bound vnic_placement 2 ENV HYDRA_ARGS=-bind-to=core ARGS launcher)
fmpl_hydra_test(vnic_placement_none vnic_placement 2 ENV FMPL_BIND=none ARGS none)
# MPI_Comm_split_type(MPI_COMM_TYPE_SHARED) holds every rank: the node map under Hydra.
fmpl_hydra_test(mpi_comm_basic mpi_comm_basic 3)
# A failing rank ends the job non-zero, soon, with no rank left: exit, SIGKILL, abort.
foreach(case early kill abort)
  add_test(NAME hydra.fail.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/hydra_test.sh fail ${case}
                   $<TARGET_FILE:boot_launcher_helper>)
  set_tests_properties(hydra.fail.${case} PROPERTIES TIMEOUT 90 SKIP_RETURN_CODE 77)
endforeach()

# Slurm: tests/slurm_test.sh starts a private one-node cluster (munged, slurmctld,
# slurmd; configuration and state in a temporary directory) and runs boot_basic at 1-3
# tasks, two MPI programs and the placement check at 2 and 3, a failing and an aborting
# rank, through srun --mpi=pmi2. Needs root and the Debian packages slurmctld slurmd
# slurm-client munge; SKIPPED otherwise.
add_test(NAME slurm
         COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/slurm_test.sh $<TARGET_FILE:boot_basic>
                 $<TARGET_FILE:boot_launcher_helper> $<TARGET_FILE:mpi_p2p>
                 $<TARGET_FILE:mpi_coll> $<TARGET_FILE:vnic_placement>)
set_tests_properties(slurm PROPERTIES TIMEOUT 300 SKIP_RETURN_CODE 77)
# The name service (MPI_Publish_name and friends) under Hydra.
fmpl_hydra_test(mpi_names mpi_names 1 3 ARGS plain)
