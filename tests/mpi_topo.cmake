# Graph and distributed-graph topologies (src/mpi/topo_graph.c, topo_dist.c, topo_map.c)
# and the neighbourhood collectives on every kind of topology (coll_neighbor.c).
fmpl_test(mpi_topo_graph mpi_topo_graph.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(mpi_topo_neighbor mpi_topo_neighbor.c RANKS 1 2 3 4 7 TIMEOUT 120)
