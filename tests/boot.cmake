# Boot layer and launcher tests.

# The boot layer alone (boot.h, no fmpl_init): through fmplrun with several rank
# counts, and as a singleton (RANKS 0).
fmpl_test(boot_basic boot_basic.c RANKS 0 1 2 3 4 7 TIMEOUT 30)
# The PMI-1 client against a scripted fake launcher: exact wire lines (MPICH/Hydra
# format), the PMI_ID handshake, a vanishing launcher, bad environments.
fmpl_test(boot_pmi_wire boot_pmi_wire.c RANKS 0 TIMEOUT 30)

# fmplrun's behaviour when ranks fail, hang, abort or print: tests/launcher_test.sh
# runs boot_launcher_helper under fmplrun, one case per test.
add_executable(boot_launcher_helper boot_launcher_helper.c)
target_link_libraries(boot_launcher_helper PRIVATE fmpl_static rt)
target_include_directories(boot_launcher_helper PRIVATE ${CMAKE_SOURCE_DIR}/tests)
# pmi_flood: strangers that hold the PMI port (tests/pmi_flood.c) while a job starts.
add_executable(pmi_flood pmi_flood.c)
add_dependencies(boot_launcher_helper pmi_flood boot_basic)
foreach(case kill early status timeout abort tag signal sigkill exec usage startup
             hosts_usage hosts_run hosts_fail bind pmi_flood stopped)
  add_test(NAME launcher.${case}
           COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/launcher_test.sh $<TARGET_FILE:fmplrun>
                   $<TARGET_FILE:boot_launcher_helper> ${case})
  set_tests_properties(launcher.${case} PROPERTIES TIMEOUT 60)
endforeach()

# The same boot client under MPICH's Hydra and Slurm's srun: tests/launch.cmake.

# fmplrun --hosts across two network namespaces joined by a veth pair (two "hosts"
# with different addresses): tests/netns_test.sh; needs root and iproute2, and
# reports itself skipped (exit 77) otherwise. netns_check is its probe program.
add_executable(netns_check netns_check.c)
target_link_libraries(netns_check PRIVATE fmpl_static)
target_include_directories(netns_check PRIVATE ${CMAKE_SOURCE_DIR}/tests)
add_test(NAME launcher.netns COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/netns_test.sh
         ${CMAKE_BINARY_DIR}/bin)
set_tests_properties(launcher.netns PROPERTIES SKIP_RETURN_CODE 77 TIMEOUT 900)

# fmplrun's PMI-1 spawn command (mcmd=spawn ... endcmd, as MPICH's simple PMI sends it):
# new jobs with their own key-value space, barrier, appnum, preput keys, info wdir,
# path and host; refused requests with their messages; a failing spawned process.
add_executable(boot_spawn boot_spawn.c)
target_include_directories(boot_spawn PRIVATE ${CMAKE_SOURCE_DIR}/tests)
target_link_libraries(boot_spawn PRIVATE rt)
add_test(NAME boot_spawn COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/boot_spawn.sh
                                 $<TARGET_FILE:fmplrun> $<TARGET_FILE:boot_spawn>)
set_tests_properties(boot_spawn PROPERTIES TIMEOUT 120 PASS_REGULAR_EXPRESSION "^PASS")
