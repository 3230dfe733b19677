# MPI datatypes and reduction operations (src/mpi/types.c, src/mpi/op.c): one process.
fmpl_test(mpi_type_ctor mpi_type_ctor.c RANKS 1 TIMEOUT 60)
fmpl_test(mpi_type_pack mpi_type_pack.c RANKS 1 TIMEOUT 60)
fmpl_test(mpi_type_op mpi_type_op.c RANKS 1 TIMEOUT 60)
