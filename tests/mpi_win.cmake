# One-sided communication (src/mpi/win*.c): every window flavour x every synchronization
# x every operation with contents checked, odd sizes and disp units, derived types,
# concurrent accumulates (exact), attributes, error handlers and every error class; on
# shared memory, and over udp (every peer but self), where a passive epoch must also
# complete while its target computes for a second outside MPI (the progress thread).
fmpl_test(mpi_win mpi_win.c RANKS 1 2 3 4 7 TIMEOUT 300)
fmpl_test(mpi_win_udp mpi_win.c RANKS 1 2 3 4 7 ENV FMPL_TRANSPORT=udp FMPL_UDP_PEER_TIMEOUT_MS=120000
          ARGS compute TIMEOUT 300)
# Post/start/complete/wait: starts that do not wait, late posts, an origin epochs ahead of
# the others, groups wider than the accesses; on shm and over udp.
fmpl_test(mpi_win_pscw mpi_win_pscw.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_win_pscw_udp mpi_win_pscw.c RANKS 1 2 3 4 7 ENV FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=120000 TIMEOUT 120)
# MPI_Win_lock / MPI_Win_unlock around their inlined paths: nested epochs closed in either
# order, bad ranks, two windows by turns, a freed window's handle.
fmpl_test(mpi_win_lock mpi_win_lock.c RANKS 1 2 3 4 7 TIMEOUT 120)
# Request-based RMA completed by progress (src/mpi/win_req.c): many large overlapping
# Rputs / Rgets waited for out of order, contents checked; on shm and over udp.
fmpl_test(mpi_win_req mpi_win_req.c RANKS 1 2 3 4 7 TIMEOUT 300)
fmpl_test(mpi_win_req_udp mpi_win_req.c RANKS 1 2 3 4 7 ENV FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=120000 TIMEOUT 300)
# Accumulates: large blocks (the kernel under stripe locks) racing element atomics from
# every rank (exact results); every predefined op x type, contiguous and derived, plain,
# fetching and request-based, checked against MPI_Reduce_local; on shm, over udp, and
# over udp with injected loss, duplication and reordering.
fmpl_test(mpi_win_acc mpi_win_acc.c RANKS 1 2 3 4 7 TIMEOUT 300)
fmpl_test(mpi_win_acc_udp mpi_win_acc.c RANKS 1 2 3 4 7 ENV FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=120000 TIMEOUT 300)
fmpl_test(mpi_win_acc_udp_faults mpi_win_acc.c RANKS 2 3 ENV FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=120000 FMPL_UDP_LOSS=0.1 FMPL_UDP_DUP=0.05
          FMPL_UDP_REORDER=0.05 FMPL_UDP_SEED=7 ARGS quick TIMEOUT 300)
# Store -> load order after MPI_Win_flush (the Dekker pattern between pairs of ranks): a
# flush after direct puts owes the full fence to the rank's next get or atomic.
fmpl_test(mpi_win_order mpi_win_order.c RANKS 2 3 4 TIMEOUT 300)
fmpl_test(mpi_win_order_udp mpi_win_order.c RANKS 2 3 ENV FMPL_TRANSPORT=udp
          FMPL_UDP_PEER_TIMEOUT_MS=120000 TIMEOUT 300)
# Large puts and gets on allocated windows copied in part by the waiting target
# (vnic_copy_shared): sizes around the threshold and the piece, every byte of the target
# window checked, a computing target not waited for, and (MPI_T) targets did take part.
fmpl_test(mpi_win_shared_copy mpi_win_shared_copy.c RANKS 1 2 3 4 7 ARGS served TIMEOUT 300)
