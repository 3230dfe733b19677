# Graph and distributed-graph topologies (src/mpi/topo_graph.c, topo_dist.c, topo_map.c)
# and the neighbourhood collectives on every kind of topology (coll_neighbor.c).
fmpl_test(mpi_topo_graph mpi_topo_graph.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_topo_neighbor mpi_topo_neighbor.c RANKS 1 2 3 4 7 TIMEOUT 120)
# reorder over fake hosts (fmplrun --hosts with tests/fake_launcher.sh; ranks alternate
# between the hosts): heavy edges end up inside a host (src/mpi/topo_map.c).
add_executable(mpi_topo_place mpi_topo_place.c)
target_link_libraries(mpi_topo_place PRIVATE fmpl_static)
target_include_directories(mpi_topo_place PRIVATE ${CMAKE_SOURCE_DIR}/tests)
foreach(np 4 8)
  add_test(NAME mpi_topo_place.np${np}
           COMMAND ${FMPLRUN} -n ${np} --timeout 120 --hosts a,b --launcher
                   "sh ${CMAKE_CURRENT_SOURCE_DIR}/fake_launcher.sh" --pmi-addr 127.0.0.1
                   $<TARGET_FILE:mpi_topo_place>)
  set_tests_properties(mpi_topo_place.np${np} PROPERTIES TIMEOUT 180)
endforeach()
