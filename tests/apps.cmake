# Application proxies (bench/apps/app_*.c), built against libfmpl.a like the other MPI
# tests: each in its --quick size at 1, 2, 3, 4 and 7 ranks (uneven splits, non-square
# process grids). The programs verify their results (a serial reference, a closed form,
# conservation and sortedness) and exit non-zero when one is wrong. One run per proxy at
# 2 ranks with --csv must also print the rate row compare.sh reads.
if(EXISTS ${CMAKE_SOURCE_DIR}/bench/apps)
  foreach(app wavefront halo2d halo3d transpose bucketsort particles)
    fmpl_test(apps_${app} ${CMAKE_SOURCE_DIR}/bench/apps/app_${app}.c RANKS 1 2 3 4 7
              ARGS --quick TIMEOUT 60)
    add_test(NAME apps_${app}.csv
             COMMAND sh ${CMAKE_CURRENT_SOURCE_DIR}/tools_expect.sh
                     "^test,${app},malloc,2,[0-9]+,rate,[0-9]+\\.[0-9]+$"
                     "^test,${app},malloc,2,[0-9]+,checksum,-?[0-9]+\\.[0-9]+$" --
                     ${FMPLRUN} -n 2 --timeout 60 $<TARGET_FILE:apps_${app}> --quick --reps=1
                     --csv --impl=test)
    set_tests_properties(apps_${app}.csv PROPERTIES TIMEOUT 60)
  endforeach()
  # app_halo3d with its k axis split: MPI_Dims_create gives the slower axes the ranks
  # first, so below 8 ranks the k faces (the subarray types) only meet MPI_PROC_NULL;
  # here 1 x 2 x 2 at 4 ranks and 2 x 2 x 2 at 8.
  add_test(NAME apps_halo3d.np4.px1 COMMAND ${FMPLRUN} -n 4 --timeout 60
                                            $<TARGET_FILE:apps_halo3d> --quick --px=1)
  add_test(NAME apps_halo3d.np8 COMMAND ${FMPLRUN} -n 8 --timeout 60
                                        $<TARGET_FILE:apps_halo3d> --quick)
  set_tests_properties(apps_halo3d.np4.px1 apps_halo3d.np8 PROPERTIES TIMEOUT 60)
endif()
