# fmplcc: the compiler wrapper (a shell script), in two variants:
#   - build tree: bin/fmplcc uses include/ of the source tree and lib/ of the build tree;
#   - install tree: generated at install time (install.cmake) for the prefix given to
#     `cmake --install --prefix` (what `make install PREFIX=...` runs).
set(FMPLCC_EXTRA_FLAGS "")
if(FMPL_SANITIZE)
  # A sanitized libfmpl needs the sanitizer runtime in the program too.
  set(FMPLCC_EXTRA_FLAGS "-fsanitize=address,undefined")
endif()

set(FMPLCC_VARIANT "build-tree")
set(FMPLCC_INCDIR "${CMAKE_SOURCE_DIR}/include")
set(FMPLCC_LIBDIR "${CMAKE_LIBRARY_OUTPUT_DIRECTORY}")
configure_file(${CMAKE_CURRENT_LIST_DIR}/fmplcc.in ${CMAKE_BINARY_DIR}/tools-gen/fmplcc @ONLY)
file(COPY ${CMAKE_BINARY_DIR}/tools-gen/fmplcc DESTINATION ${CMAKE_RUNTIME_OUTPUT_DIRECTORY}
     FILE_PERMISSIONS OWNER_READ OWNER_WRITE OWNER_EXECUTE GROUP_READ GROUP_EXECUTE WORLD_READ
                      WORLD_EXECUTE)
