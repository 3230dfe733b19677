# fmplrun: the launcher (also installed as mpiexec/mpirun). It links fmpl_static only
# for the PMI-1 wire helpers of src/boot/pmi_wire.c, so it needs nothing but libc.
add_executable(fmplrun ${CMAKE_CURRENT_LIST_DIR}/fmplrun.c)
target_link_libraries(fmplrun PRIVATE fmpl_static)
