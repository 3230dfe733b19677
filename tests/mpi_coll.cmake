# MPI blocking collectives on intracommunicators (src/mpi/coll_basic.c, coll_reduce.c):
# every function and root, in place, derived types, sizes 0..100000, exact reductions,
# non-commutative order, errors; also with every message through rendezvous.
fmpl_test(mpi_coll mpi_coll.c RANKS 1 2 3 4 5 7 8 TIMEOUT 300)
fmpl_test(mpi_coll_rndv mpi_coll.c RANKS 3 4 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 300)
# MPI_I* nonblocking and MPI-4.0 persistent (*_init + MPI_Start) collectives on
# intracommunicators (cases and checks shared in mpi_coll_common.h): every function and
# root, in place, derived types, sizes 0 / 1 / 7 / 100000, exact reductions, a
# non-commutative op, many outstanding on one and two communicators, overlap with
# point-to-point, repeated starts, MPI_Startall, MPI_Request_free, errors.
fmpl_test(mpi_coll_nb mpi_coll_nb.c RANKS 1 2 3 4 5 8 TIMEOUT 300)
fmpl_test(mpi_coll_persist mpi_coll_persist.c RANKS 1 2 3 4 5 8 TIMEOUT 300)
# The same without lanes (point-to-point only), and with one small lane that most
# requests fail to get.
fmpl_test(mpi_coll_persist_nolanes mpi_coll_persist.c RANKS 3 4 ENV FMPL_COLL_LANES=0
          TIMEOUT 300)
fmpl_test(mpi_coll_persist_onelane mpi_coll_persist.c RANKS 2 5
          ENV FMPL_COLL_LANES=1 FMPL_COLL_LANE_BYTES=64 TIMEOUT 300)
# Persistent collectives on lanes (coll.h "lanes"): more live requests than lanes, start,
# completion and free orders that differ between ranks, lanes reused, exact contents.
fmpl_test(mpi_coll_lanes mpi_coll_lanes.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_coll_lanes_few mpi_coll_lanes.c RANKS 3 4 ENV FMPL_COLL_LANES=3 TIMEOUT 120)
# MPI collectives on intercommunicators (src/mpi/coll_inter.c): every function in its
# blocking, nonblocking and persistent forms, every root, unequal groups, exact contents.
fmpl_test(mpi_coll_inter_basic mpi_coll_inter_basic.c RANKS 2 3 4 5 8 TIMEOUT 300)
# MPI collectives on intercommunicators, blocking and nonblocking: every root of each
# group, unequal groups, one-way and count-0 calls, derived types, non-commutative op.
fmpl_test(mpi_coll_inter mpi_coll_inter.c RANKS 2 3 4 5 8 TIMEOUT 120)
# Nonblocking collectives on MPI_COMM_WORLD's mailboxes (coll.h "queued runs"): 100
# outstanding Ibarriers, many mixed calls outstanding with blocking and persistent ones
# between them, completion by Wait and by Test, an active request freed, exact contents.
fmpl_test(mpi_coll_nbq mpi_coll_nbq.c RANKS 1 2 3 4 5 7 8 TIMEOUT 300)
