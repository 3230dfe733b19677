# Native API (src/fmpl) tests.
fmpl_test(fmpl_ops fmpl_ops.c RANKS 0 TIMEOUT 30)
fmpl_test(fmpl_p2p fmpl_p2p.c RANKS 0 1 2 3 4 7 TIMEOUT 90)
fmpl_test(fmpl_p2p_nocma fmpl_p2p.c RANKS 2 3 ENV FMPL_SHM_CMA=0 TIMEOUT 90)
fmpl_test(fmpl_p2p_cma fmpl_p2p.c RANKS 2 3 ENV FMPL_SHM_PIPELINE=0 TIMEOUT 90)
fmpl_test(fmpl_p2p_stall fmpl_p2p.c RANKS 2 ENV FMPL_SHM_PIPELINE=1 FMPL_SHM_STALL_US=0 FMPL_SHM_BOUNCE_CHUNK=4096 TIMEOUT 90)
fmpl_test(fmpl_p2p_errors fmpl_p2p_errors.c RANKS 0 1 2 3 4 7 TIMEOUT 60)
# The 2-D transfers (fmpl_send_2d and co.), with CMA, the pipeline and without CMA.
fmpl_test(fmpl_2d fmpl_2d.c RANKS 1 2 3 4 7 TIMEOUT 90)
fmpl_test(fmpl_2d_nocma fmpl_2d.c RANKS 2 3 ENV FMPL_SHM_CMA=0 TIMEOUT 90)
fmpl_test(fmpl_env fmpl_env.c RANKS 0 1 2 3 TIMEOUT 30)
fmpl_test(fmpl_preposted fmpl_preposted.c RANKS 1 2 3 4 7 TIMEOUT 60)
# Receive headers the vnic may hold (VNIC_F_DEFER): ping-pongs, exchanges, crossed orders;
# over udp in tests/udp.cmake (one datagram per ping-pong message).
fmpl_test(fmpl_coalesce fmpl_coalesce.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(fmpl_spool fmpl_spool.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(fmpl_any fmpl_any.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(fmpl_any_fewslots fmpl_any.c RANKS 3 7 ENV FMPL_ANY_SLOTS=4 TIMEOUT 60)
fmpl_test(fmpl_any_nocma fmpl_any.c RANKS 4 ENV FMPL_SHM_CMA=0 TIMEOUT 60)
fmpl_test(fmpl_comm fmpl_comm.c RANKS 1 2 3 4 7 TIMEOUT 60)
fmpl_test(fmpl_collectives fmpl_collectives.c RANKS 1 2 3 4 7 TIMEOUT 60)
# Persistent collectives: on the offload board, queued, without the board, without CMA.
fmpl_test(fmpl_persist fmpl_persist.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(fmpl_persist_off fmpl_persist.c RANKS 2 3 ENV FMPL_COLL_OFFLOAD=0 TIMEOUT 120)
fmpl_test(fmpl_persist_nocma fmpl_persist.c RANKS 3 ENV FMPL_SHM_CMA=0 TIMEOUT 120)
