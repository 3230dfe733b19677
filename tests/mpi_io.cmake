# MPI-IO (src/mpi/file*.c): views, collective buffering, error classes, shared pointer.
fmpl_test(mpi_io_views mpi_io_views.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_io_errors mpi_io_errors.c RANKS 1 2 3 TIMEOUT 120)
fmpl_test(mpi_io_shared mpi_io_shared.c RANKS 1 2 3 4 7 TIMEOUT 120)
fmpl_test(mpi_io_async mpi_io_async.c RANKS 1 2 3 4 7 TIMEOUT 120)
