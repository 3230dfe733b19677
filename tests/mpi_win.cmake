fmpl_test(mpi_win_unsupported mpi_win_unsupported.c RANKS 1 2 TIMEOUT 60)
