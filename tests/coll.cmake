# Collectives (src/coll) straight on boot + vnic + coll, without the fmpl layer.
set(COLL_RANKS 1 2 3 4 5 7 8)
fmpl_test(coll_test_bcast coll_test_bcast.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_reduce coll_test_reduce.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_allgather coll_test_allgather.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_barrier coll_test_barrier.c RANKS ${COLL_RANKS} TIMEOUT 60)
fmpl_test(coll_test_repeat coll_test_repeat.c RANKS ${COLL_RANKS} TIMEOUT 120)
fmpl_test(coll_test_groups coll_test_groups.c RANKS ${COLL_RANKS} TIMEOUT 60)
fmpl_test(coll_test_errors coll_test_errors.c RANKS 1 2 3 4 TIMEOUT 30)
# Small mailboxes and segments: the chain, ring and fix-up paths at small sizes, and
# many segments per message.
foreach(t bcast reduce allgather repeat)
  fmpl_test(coll_test_${t}_smallseg coll_test_${t}.c RANKS 3 4 5
            ENV FMPL_COLL_SMALL=64 FMPL_COLL_SEG=4096 TIMEOUT 120)
endforeach()

