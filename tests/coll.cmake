# Collectives (src/coll) straight on boot + vnic + coll, without the fmpl layer.
set(COLL_RANKS 1 2 3 4 5 7 8)
fmpl_test(coll_test_bcast coll_test_bcast.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_reduce coll_test_reduce.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_allgather coll_test_allgather.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_barrier coll_test_barrier.c RANKS ${COLL_RANKS} TIMEOUT 60)
fmpl_test(coll_test_repeat coll_test_repeat.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_groups coll_test_groups.c RANKS ${COLL_RANKS} TIMEOUT 60)
fmpl_test(coll_test_errors coll_test_errors.c RANKS 1 2 3 4 TIMEOUT 30)
# The large-message schedules (two-chain reduce, chain allreduce, ring allgather) bit for
# bit: several segments, odd sizes and 12-byte elements, every root, non-commutative ops.
fmpl_test(coll_test_large coll_test_large.c RANKS ${COLL_RANKS} TIMEOUT 300)
# Every reduction and allgather on those schedules, down to one element / byte (tiny and
# small channels, the binomial bcast of allreduce on a fold schedule).
fmpl_test(coll_test_reduce_chains coll_test_reduce.c RANKS 2 3 5
          ENV FMPL_COLL_REDUCE_TREE_MAX=0 TIMEOUT 120)
fmpl_test(coll_test_allgather_ring coll_test_allgather.c RANKS 2 3 5
          ENV FMPL_COLL_ALLGATHER_BRUCK_MAX=0 TIMEOUT 120)
# Small mailboxes and segments: the chain, ring and fix-up paths at small sizes, and
# many segments per message.
foreach(t bcast reduce allgather repeat large)
  fmpl_test(coll_test_${t}_smallseg coll_test_${t}.c RANKS 3 4 5
            ENV FMPL_COLL_SMALL=64 FMPL_COLL_SEG=4096 TIMEOUT 120)
endforeach()

# The LogGP-planned bcast: the model's functions, the cache file, the agreed parameters,
# and bcasts at odd sizes with the segments the model picks under parameters that make
# them small (costly bytes), large (costly messages) or the machine's, and the fixed rules.
set(LOGGP_RANKS 1 2 3 4 7)
fmpl_test(coll_test_loggp coll_test_loggp.c RANKS ${LOGGP_RANKS}
          ENV FMPL_COLL_LOGGP_CACHE=none TIMEOUT 120)
fmpl_test(coll_test_loggp_smallseg coll_test_loggp.c RANKS ${LOGGP_RANKS}
          ENV FMPL_COLL_LOGGP_CACHE=none FMPL_COLL_LOGGP_O=1 FMPL_COLL_LOGGP_GAP=1
              FMPL_COLL_LOGGP_G=20000 TIMEOUT 120)
fmpl_test(coll_test_loggp_bigseg coll_test_loggp.c RANKS ${LOGGP_RANKS}
          ENV FMPL_COLL_LOGGP_CACHE=none FMPL_COLL_LOGGP_O=100000 FMPL_COLL_LOGGP_G=1 TIMEOUT 120)
fmpl_test(coll_test_loggp_fixed coll_test_loggp.c RANKS 1 3 4
          ENV FMPL_COLL_LOGGP=0 TIMEOUT 120)

# Runs that send each peer several times as many messages as an edge has cells (the
# acknowledgement window: a reader frees messages out of order, acknowledges in order).
fmpl_test(coll_test_window coll_test_window.c RANKS 2 3 4 5 7 TIMEOUT 120)
fmpl_test(coll_test_window_shallow coll_test_window.c RANKS 3 4
          ENV FMPL_COLL_DEPTH=4 FMPL_COLL_SMALL=256 TIMEOUT 120)
