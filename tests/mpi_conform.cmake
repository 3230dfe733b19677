# Behaviour MPICH's test suite found missing (tests/mpich/notes.md), covered by tests of
# our own: a freed keyval whose attributes live on (attr/fkeyval*, keyval_double_free*),
# MPI_Info_create_env the same before, during and after MPI (info/infocreateenv).
fmpl_test(mpi_attr_freed_keyval mpi_attr_freed_keyval.c RANKS 1 2 3 4 7)
fmpl_test(mpi_info_env_launch mpi_info_env_launch.c RANKS 0 1 2 3 4 7)
fmpl_test(mpi_info_env_launch_noargs mpi_info_env_launch.c RANKS 0 2 3 ARGS noargs)
# one-sided synchronization errors and compare-and-swap types (errors/rma)
fmpl_test(mpi_win_epoch_errors mpi_win_epoch_errors.c RANKS 1 2 3 4 7)
# which handler an error goes to: a duplicate keeps its parent's handler of the time it was
# made (errors/comm/*_nullarg), window attribute errors go to the window's (keyvalmis)
fmpl_test(mpi_errh_inherit mpi_errh_inherit.c RANKS 1 2 3 4 7)
