# The MPI tool information interface (src/mpi/tool_*.c): control variables against the
# settings records, fmpl-info and the README table; performance variables counting known
# traffic; categories; error paths. FMPL_COLL_GROUPS=1: a duplicate of MPI_COMM_WORLD has
# no mailboxes, so the collective thresholds choose its algorithms.
fmpl_test(mpi_tool mpi_tool.c RANKS 1 2 3 ENV FMPL_COLL_GROUPS=1
          ARGS $<TARGET_FILE:fmpl-info> ${CMAKE_SOURCE_DIR}/README.md TIMEOUT 120)
# Over udp (every peer but self), and with injected loss: the transport's counters.
fmpl_test(mpi_tool_udp mpi_tool.c RANKS 2 3 ENV FMPL_COLL_GROUPS=1 FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=30000
          ARGS $<TARGET_FILE:fmpl-info> ${CMAKE_SOURCE_DIR}/README.md TIMEOUT 120)
fmpl_test(mpi_tool_udp_loss mpi_tool.c RANKS 3 ENV FMPL_COLL_GROUPS=1 FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=30000 FMPL_UDP_LOSS=0.1 FMPL_UDP_SEED=7
          ARGS $<TARGET_FILE:fmpl-info> ${CMAKE_SOURCE_DIR}/README.md TIMEOUT 180)
# MPI_T events and sources (src/mpi/tool_event.c).
fmpl_test(mpi_tool_event mpi_tool_event.c RANKS 1 2 3 4 7 TIMEOUT 120)
