# fmpl-info: version, transports, CMA, limits and settings of this installation.
# Linked statically so the installed tool needs nothing but libc.
add_executable(fmpl-info ${CMAKE_CURRENT_LIST_DIR}/fmpl-info.c)
target_link_libraries(fmpl-info PRIVATE fmpl_static)
