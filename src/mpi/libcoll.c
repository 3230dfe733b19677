/* libcoll.c — the MPI layer's own small collectives, for communicator creation.
 *
 * They run over mpii_lib_send/mpii_lib_recv (blocking, on the communicator's library
 * context ctx + 1) with simple algorithms that work for any size: binomial trees for
 * bcast and the AND-reduction, a ring for allgather. Blocking sends are never paired
 * against each other in a cycle: in the ring, even ranks send first and odd ranks
 * receive first, so the calls complete even if a send waits for its receive.
 * One tag per operation: per pair of processes the messages of one operation are sent
 * in order, and operations on one communicator are called in the same order by all
 * members, so non-overtaking keeps them apart.
 *
 * The tagged forms run over a subset of c's ranks: member i is rank map[i] of c (map
 * NULL: all of c, member i is rank i), p members, this process is member me. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

#define MEMBER(i) (map ? map[(i)] : (i))

int mpii_lib_bcast_tag(mpii_comm_t *c, const int *map, int p, int me, void *buf, size_t len,
                       int root, int tag)
{
    int rel = (me - root + p) % p;
    int mask = 1;
    while (mask < p) {
        if (rel & mask) {
            int rc = mpii_lib_recv(c, buf, len, MEMBER((rel - mask + root) % p), tag);
            if (rc != MPI_SUCCESS)
                return rc;
            break;
        }
        mask <<= 1;
    }
    for (mask >>= 1; mask > 0; mask >>= 1)
        if (rel + mask < p) {
            int rc = mpii_lib_send(c, buf, len, MEMBER((rel + mask + root) % p), tag);
            if (rc != MPI_SUCCESS)
                return rc;
        }
    return MPI_SUCCESS;
}

int mpii_lib_allreduce_band_tag(mpii_comm_t *c, const int *map, int p, int me, uint64_t *words,
                                int n, int tag)
{
    int r = me;
    size_t len = (size_t)n * sizeof *words;
    uint64_t *tmp = malloc(len ? len : 1);
    if (!tmp)
        return MPI_ERR_NO_MEM;
    int rc = MPI_SUCCESS;
    for (int mask = 1; mask < p; mask <<= 1) {
        if (r & mask) {
            rc = mpii_lib_send(c, words, len, MEMBER(r - mask), tag);
            break;
        }
        if (r + mask < p) {
            rc = mpii_lib_recv(c, tmp, len, MEMBER(r + mask), tag);
            if (rc != MPI_SUCCESS)
                break;
            for (int i = 0; i < n; i++)
                words[i] &= tmp[i];
        }
    }
    free(tmp);
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_lib_bcast_tag(c, map, p, me, words, len, 0, tag);
}

int mpii_lib_allgather_tag(mpii_comm_t *c, const int *map, int p, int me, const void *send,
                           void *recv, size_t len, int tag)
{
    int r = me;
    char *out = recv;
    if ((const char *)send != out + (size_t)r * len)
        memmove(out + (size_t)r * len, send, len);
    int right = MEMBER((r + 1) % p), left = MEMBER((r - 1 + p) % p);
    for (int s = 0; s < p - 1; s++) {
        int sb = (r - s + p) % p, rb = (r - s - 1 + 2 * p) % p;
        int rc;
        if (r % 2 == 0) {
            rc = mpii_lib_send(c, out + (size_t)sb * len, len, right, tag);
            if (rc == MPI_SUCCESS)
                rc = mpii_lib_recv(c, out + (size_t)rb * len, len, left, tag);
        } else {
            rc = mpii_lib_recv(c, out + (size_t)rb * len, len, left, tag);
            if (rc == MPI_SUCCESS)
                rc = mpii_lib_send(c, out + (size_t)sb * len, len, right, tag);
        }
        if (rc != MPI_SUCCESS)
            return rc;
    }
    return MPI_SUCCESS;
}

int mpii_lib_allgather(mpii_comm_t *c, const void *send, void *recv, size_t len)
{
    return mpii_lib_allgather_tag(c, NULL, c->size, c->rank, send, recv, len, MPII_TAG_LIBCOLL);
}

int mpii_lib_allreduce_band(mpii_comm_t *c, uint64_t *words, int n)
{
    return mpii_lib_allreduce_band_tag(c, NULL, c->size, c->rank, words, n, MPII_TAG_LIBCOLL);
}
