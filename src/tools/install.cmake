# Install rules of the tools (headers and libraries are installed by the top-level
# CMakeLists.txt): fmplrun, fmpl-info, fmplcc and lib/pkgconfig/fmpl.pc.
# Included after fmpl-info.cmake, fmplcc.cmake and fmplrun.cmake (sorted by name).
set(FMPLPC_EXTRA_CFLAGS "")
set(FMPLPC_EXTRA_LIBS "")
if(FMPL_SANITIZE)
  set(FMPLPC_EXTRA_CFLAGS " -fsanitize=address,undefined")
  set(FMPLPC_EXTRA_LIBS " -fsanitize=address,undefined")
endif()

foreach(tool fmplrun fmpl-info)
  if(TARGET ${tool})
    # Installed tools find an installed libfmpl.so (if they link it) next to them.
    set_target_properties(${tool} PROPERTIES INSTALL_RPATH "$ORIGIN/../${CMAKE_INSTALL_LIBDIR}")
    install(TARGETS ${tool} RUNTIME DESTINATION ${CMAKE_INSTALL_BINDIR})
  endif()
endforeach()

configure_file(${CMAKE_CURRENT_LIST_DIR}/install-gen.cmake.in
               ${CMAKE_BINARY_DIR}/tools-gen/install-gen.cmake @ONLY)
install(SCRIPT ${CMAKE_BINARY_DIR}/tools-gen/install-gen.cmake)
