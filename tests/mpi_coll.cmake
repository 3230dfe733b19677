# MPI blocking collectives on intracommunicators (src/mpi/coll_basic.c, coll_reduce.c):
# every function and root, in place, derived types, sizes 0..100000, exact reductions,
# non-commutative order, errors; also with every message through rendezvous.
fmpl_test(mpi_coll mpi_coll.c RANKS 1 2 3 4 5 7 8 TIMEOUT 300)
fmpl_test(mpi_coll_rndv mpi_coll.c RANKS 3 4 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 300)
# MPI collectives on intercommunicators, blocking and nonblocking: every root of each
# group, unequal groups, one-way and count-0 calls, derived types, non-commutative op.
fmpl_test(mpi_coll_inter mpi_coll_inter.c RANKS 2 3 4 5 8 TIMEOUT 120)
