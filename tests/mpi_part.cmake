# MPI partitioned communication (src/mpi/p2p_part.c): rings, all-to-one, derived types,
# Parrived polling, error paths; also with every data message through rendezvous.
fmpl_test(mpi_part mpi_part.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_part_rndv mpi_part.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 120)
