/* libcoll.c — the MPI layer's own small collectives, for communicator creation.
 *
 * Each builds the algorithm (coll/algo) as a schedule over the communicator's library
 * context ctx + 1 (as every MPI collective schedule) and runs it at once, blocking, with
 * the caller's tag: binomial tree for bcast, recursive doubling for the AND-reduction, a
 * ring for allgather. One tag per operation: per pair of processes the messages of one
 * operation are posted in order, and operations on one communicator are called in the
 * same order by all members, so non-overtaking keeps them apart.
 *
 * The tagged forms run over a subset of c's ranks: member i is rank map[i] of c (map
 * NULL: all of c, member i is rank i), p members, this process is member me. */
#include <string.h>

#include "mpi/coll_impl.h"

int mpii_lib_bcast_tag(mpii_comm_t *c, const int *map, int p, int me, void *buf, size_t len,
                       int root, int tag)
{
    coll_sched_t *s = mpii_sched_new(c);
    mpii_algo_t m;
    if (s)
        coll_algo_bcast_binomial(mpii_sched_algo(&m, s, map, p, me, MPI_BYTE, MPI_OP_NULL), buf,
                                 (int64_t)len, root);
    return mpii_sched_run_tagged(s, tag);
}

int mpii_lib_allreduce_band_tag(mpii_comm_t *c, const int *map, int p, int me, uint64_t *words,
                                int n, int tag)
{
    coll_sched_t *s = mpii_sched_new(c);
    mpii_algo_t m;
    if (s) {
        const coll_algo_t *a = mpii_sched_algo(&m, s, map, p, me, MPI_UINT64_T, MPI_BAND);
        coll_algo_allreduce_recdbl(a, words, a->ops->scratch(a, n), n);
    }
    return mpii_sched_run_tagged(s, tag);
}

int mpii_lib_allgather_tag(mpii_comm_t *c, const int *map, int p, int me, const void *send,
                           void *recv, size_t len, int tag)
{
    char *out = recv;
    if ((const char *)send != out + (size_t)me * len)
        memmove(out + (size_t)me * len, send, len);
    coll_sched_t *s = mpii_sched_new(c);
    mpii_algo_t m;
    if (s)
        coll_algo_allgather_ring(mpii_sched_algo(&m, s, map, p, me, MPI_BYTE, MPI_OP_NULL), out,
                                 NULL, NULL, NULL, (int64_t)len, 0);
    return mpii_sched_run_tagged(s, tag);
}

int mpii_lib_allgather(mpii_comm_t *c, const void *send, void *recv, size_t len)
{
    return mpii_lib_allgather_tag(c, NULL, c->size, c->rank, send, recv, len, MPII_TAG_LIBCOLL);
}

int mpii_lib_allreduce_band(mpii_comm_t *c, uint64_t *words, int n)
{
    return mpii_lib_allreduce_band_tag(c, NULL, c->size, c->rank, words, n, MPII_TAG_LIBCOLL);
}
