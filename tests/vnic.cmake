# vnic: the software NIC and its shared-memory transport. Every multi-rank test runs
# twice: with CMA (the default) and with FMPL_SHM_CMA=0 (pipelined bounce buffers).
fmpl_test(vnic_heap vnic_heap.c RANKS 0)
foreach(t vnic_rma vnic_errors vnic_atomic vnic_notify vnic_wait)
  fmpl_test(${t} ${t}.c RANKS 1 2 3 4 7 TIMEOUT 60)
  fmpl_test(${t}_nocma ${t}.c RANKS 2 3 4 7 ENV FMPL_SHM_CMA=0 TIMEOUT 60)
endforeach()
# Small bounce chunks and a small inbox: many chunks in flight, inbox back-pressure.
fmpl_test(vnic_rma_small vnic_rma.c RANKS 3
          ENV FMPL_SHM_CMA=0 FMPL_SHM_BOUNCE_CHUNK=4096 FMPL_SHM_CELLS=128 TIMEOUT 60)
# Latency/bandwidth sanity program: as a test it only checks data (few iterations);
# run it by hand for figures: build/bin/fmplrun -n 2 build/bin/vnic_pingpong 200000
fmpl_test(vnic_pingpong vnic_pingpong.c RANKS 2 ARGS 50 TIMEOUT 60)
