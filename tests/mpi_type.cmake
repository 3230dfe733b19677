# MPI datatypes and reduction operations (src/mpi/types.c, src/mpi/op.c): one process.
fmpl_test(mpi_type_ctor mpi_type_ctor.c RANKS 1 TIMEOUT 60)
fmpl_test(mpi_type_pack mpi_type_pack.c RANKS 1 TIMEOUT 60)
fmpl_test(mpi_type_op mpi_type_op.c RANKS 1 TIMEOUT 60)
# MPI_Type_create_f90_* (src/mpi/types_f90.c) and MPI_Type_match_size.
fmpl_test(mpi_type_f90 mpi_type_f90.c RANKS 1 2 3 TIMEOUT 60)
