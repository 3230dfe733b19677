# MPI point-to-point (src/mpi/p2p.c, request.c): content checks, at every rank count, with
# the default protocols, with every message through rendezvous, and without CMA.
fmpl_test(mpi_p2p mpi_p2p.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_p2p_rndv mpi_p2p.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 120)
fmpl_test(mpi_p2p_nocma mpi_p2p.c RANKS 2 3 ENV FMPL_SHM_CMA=0 TIMEOUT 120)
# Rendezvous reads: by default the path measured for the host (src/vnic/shm_tune.c);
# here through the two-core pipeline with small reads by CMA and large ones through
# small bounce chunks, then a target that is given no time (every blocking get is taken
# over by CMA at once, the target still filling the abandoned chunks), CMA alone, and
# shared gets of every size in tiny pieces (reader and owner racing for them).
fmpl_test(mpi_p2p_getmixed mpi_p2p.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 FMPL_SHM_GET_PATH=pipeline
          FMPL_SHM_GET_PIPELINE_MIN=65536 FMPL_SHM_BOUNCE_CHUNK=4096 TIMEOUT 120)
fmpl_test(mpi_p2p_getstall mpi_p2p.c RANKS 2 3 ENV FMPL_SHM_STALL_US=0 FMPL_SHM_PIPELINE=1
          TIMEOUT 120)
fmpl_test(mpi_p2p_cmaonly mpi_p2p.c RANKS 2 3 ENV FMPL_SHM_PIPELINE=0 TIMEOUT 120)
fmpl_test(mpi_p2p_shared mpi_p2p.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 FMPL_SHM_GET_PATH=shared
          FMPL_SHM_SHARED_MIN=0 FMPL_SHM_SHARED_PIECE=4096 TIMEOUT 120)
# Contiguous rendezvous sends staged in the sender's shared heap (FMPL_MPI_STAGE_MAX): every
# one (the largest take the ring, or find no room and are read from the sender's buffer),
# and none (the default stages those up to 16 KiB).
fmpl_test(mpi_p2p_stage_all mpi_p2p.c RANKS 2 3 ENV FMPL_MPI_STAGE_MAX=1073741824 TIMEOUT 120)
fmpl_test(mpi_p2p_stage_none mpi_p2p.c RANKS 2 3 ENV FMPL_MPI_STAGE_MAX=0 TIMEOUT 120)
fmpl_test(mpi_p2p_cancel_stage mpi_p2p_cancel.c RANKS 2 3
          ENV FMPL_MPI_EAGER_MAX=0 FMPL_MPI_STAGE_MAX=1073741824 TIMEOUT 120)
# Thousands of posted and unexpected messages (the matching tables grow under load).
fmpl_test(mpi_p2p_match mpi_p2p_match.c RANKS 1 2 3 4 7 TIMEOUT 120)
# MPI_Isendrecv(_replace): ring exchanges, derived types, PROC_NULL, completion, cancel.
fmpl_test(mpi_p2p_isendrecv mpi_p2p_isendrecv.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_p2p_isendrecv_rndv mpi_p2p_isendrecv.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 120)
# MPI_Cancel of sends: cancelled when unmatched, not once matched or taken by Mprobe.
fmpl_test(mpi_p2p_cancel mpi_p2p_cancel.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_p2p_cancel_rndv mpi_p2p_cancel.c RANKS 2 3 ENV FMPL_MPI_EAGER_MAX=0 TIMEOUT 120)
# MPI_Isend returns at once when the receiver's inbox is full (deferred sends).
fmpl_test(mpi_isend_noblock mpi_isend_noblock.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_isend_noblock_udp mpi_isend_noblock.c RANKS 2 3 ENV FMPL_TRANSPORT=udp TIMEOUT 120)
# Non-contiguous rendezvous staged in the sender's shared heap (seed 004 on a host), and the
# private path it falls back to (a heap mostly taken; udp).
fmpl_test(mpi_p2p_staged mpi_p2p_staged.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_p2p_staged_smallheap mpi_p2p_staged.c RANKS 2 3 ENV FMPL_SHM_HEAP=25165824 TIMEOUT 120)
fmpl_test(mpi_p2p_staged_udp mpi_p2p_staged.c RANKS 2 3 ENV FMPL_TRANSPORT=udp TIMEOUT 120)
# Eager flow control under incast (seed 002): receive memory bounded by the eager budget
# (1 MiB here), matching and probes under back-pressure; and the point-to-point suite with
# almost no credit (every short message beyond 4 in flight goes by envelope and read).
fmpl_test(mpi_incast mpi_incast.c RANKS 2 3 4 7 ENV FMPL_EAGER_BUDGET=1048576 TIMEOUT 120)
fmpl_test(mpi_p2p_nocredit mpi_p2p.c RANKS 2 3 ENV FMPL_EAGER_BUDGET=0 TIMEOUT 120)
fmpl_test(mpi_incast_udp mpi_incast.c RANKS 3 ENV FMPL_EAGER_BUDGET=1048576 FMPL_TRANSPORT=udp
          ARGS 5000 TIMEOUT 120)
