# vnic_shm_tune: the measured choice of paths for large transfers between the ranks of a
# host (src/vnic/shm_tune.c). Every get path moves 1, 4 and 16 MiB correctly at 2 and 3
# ranks; the shared get also with tiny pieces (many claims racing) and from every size on.
# The tests measure nothing themselves: FMPL_SHM_TUNE_CACHE=none keeps them off the
# user's cache file (the auto case runs a fresh trial each time).
fmpl_test(vnic_tune vnic_tune.c RANKS 2 3 ENV FMPL_SHM_TUNE_CACHE=none TIMEOUT 120)
foreach(path pipeline cma shared)
  fmpl_test(vnic_tune_${path} vnic_tune.c RANKS 2 3 ENV FMPL_SHM_GET_PATH=${path} TIMEOUT 120)
endforeach()
fmpl_test(vnic_tune_shared_small vnic_tune.c RANKS 2 3
          ENV FMPL_SHM_GET_PATH=shared FMPL_SHM_SHARED_PIECE=4096 FMPL_SHM_SHARED_MIN=0 TIMEOUT 120)
fmpl_test(vnic_tune_nocma vnic_tune.c RANKS 2 ENV FMPL_SHM_CMA=0 FMPL_SHM_GET_PATH=shared
          TIMEOUT 120)
# The cache file: a corrupt, stale or tampered one is ignored and rewritten, a valid one
# is used, the environment overrides it, fmpl-info tells which.
add_test(NAME vnic_tune_cache COMMAND bash ${CMAKE_CURRENT_SOURCE_DIR}/vnic_tune_test.sh
         ${CMAKE_BINARY_DIR}/bin ${CMAKE_CURRENT_BINARY_DIR}/vnic_tune_cache)
set_tests_properties(vnic_tune_cache PROPERTIES TIMEOUT 300)
