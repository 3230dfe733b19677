/* mpih_sentinel_warn.c — compiled only (tests/mpih.cmake): the usual calls with the
 * special pointer values build cleanly under -O2 -Wall -Wextra -Werror (no
 * -Wstringop-overflow on the page-zero sentinels). */
#include <mpi.h>

int mpih_sentinel_calls(MPI_Comm comm, MPI_Request *r, int n)
{
    int flag = 0, idx = 0, out = 0, ind[4];
    MPI_Recv(NULL, 0, MPI_INT, 0, 0, comm, MPI_STATUS_IGNORE);
    MPI_Waitall(n, r, MPI_STATUSES_IGNORE);
    MPI_Testall(n, r, &flag, MPI_STATUSES_IGNORE);
    MPI_Waitsome(n, r, &out, ind, MPI_STATUSES_IGNORE);
    MPI_Testsome(n, r, &out, ind, MPI_STATUSES_IGNORE);
    MPI_Waitany(n, r, &idx, MPI_STATUS_IGNORE);
    MPI_Comm g;
    int src = 0, dst = 0;
    MPI_Dist_graph_create_adjacent(comm, 1, &src, MPI_UNWEIGHTED, 1, &dst, MPI_UNWEIGHTED,
                                   MPI_INFO_NULL, 0, &g);
    MPI_Comm inter;
    MPI_Comm_spawn("x", MPI_ARGV_NULL, 1, MPI_INFO_NULL, 0, comm, &inter, MPI_ERRCODES_IGNORE);
    return flag + idx + out;
}
