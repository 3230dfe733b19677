/* bench_pcoll.h — persistent collectives under one name for the MPI benchmarks, whichever
 * library they are built with. */
#ifndef BENCH_PCOLL_H
#define BENCH_PCOLL_H

#include <mpi.h>

/* Persistent collectives under one name, bench_bcast_init and bench_allreduce_init (the
 * MPI-4.0 arguments, MPI_Info included): the standard names for MPI-4 libraries (FMPL,
 * MPICH 4) and Open MPI 5; Open MPI 4's MPIX_ names from <mpi-ext.h> when it was built
 * with the pcollreq extension; none otherwise (BENCH_PCOLL 0: the rows say "missing").
 * -DBENCH_NO_PERSISTENT forces the last case, to try that path with any library. */
#if defined(OPEN_MPI) && OPEN_MPI
#include <mpi-ext.h>
#endif
#if defined(BENCH_NO_PERSISTENT)
#define BENCH_PCOLL 0
#elif MPI_VERSION >= 4 || (defined(OMPI_MAJOR_VERSION) && OMPI_MAJOR_VERSION >= 5)
#define BENCH_PCOLL 1
#define bench_bcast_init MPI_Bcast_init
#define bench_allreduce_init MPI_Allreduce_init
#elif defined(OMPI_HAVE_MPI_EXT_PCOLLREQ) && OMPI_HAVE_MPI_EXT_PCOLLREQ
#define BENCH_PCOLL 1
#define bench_bcast_init MPIX_Bcast_init
#define bench_allreduce_init MPIX_Allreduce_init
#else
#define BENCH_PCOLL 0
#endif

#endif
