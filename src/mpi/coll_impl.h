/* coll_impl.h — private to the blocking MPI collectives (coll_basic.c, coll_reduce.c).
 *
 * The blocking collectives on intracommunicators run over the point-to-point engine
 * (p2p_impl.h: mpii_lib_isend / mpii_lib_irecv / mpii_lib_waitall on the communicator's
 * library context ctx + 1). Each call takes a fresh tag from the communicator's sequence
 * (mpii_coll_tag) so back-to-back collectives never match each other's messages; inside
 * one call the messages between a pair of processes are told apart by non-overtaking.
 * No process sends to itself: its own part is a local typed copy (dt_copy).
 * Every helper returns an MPI error class without raising it; the MPI_X entry points
 * raise through mpii_err. (The issue-4 schedule engine will later replace the
 * algorithms behind the same entry points.) */
#ifndef FMPL_MPI_COLL_IMPL_H
#define FMPL_MPI_COLL_IMPL_H

#include "mpi/p2p_impl.h"

/* A fresh tag for one collective call on c: 0..MPII_TAG_UB-1 (never MPII_TAG_LIBCOLL). */
static inline int mpii_coll_tag(mpii_comm_t *c)
{
    int t = (int)(c->coll_seq % (uint32_t)MPII_TAG_UB);
    c->coll_seq++;
    return t;
}

/* Common entry checks: MPI initialised, comm a valid intracommunicator. On success *cp is
 * the communicator and MPI_SUCCESS is returned; otherwise the error has been raised and its
 * code is returned (invalid comm: MPI_ERR_COMM on MPI_COMM_WORLD's handler;
 * intercommunicator: MPI_ERR_COMM on comm's, "not implemented yet"). */
int mpii_coll_enter(MPI_Comm comm, const char *fname, mpii_comm_t **cp);

/* Checks a (buffer, count, type) argument triple: MPI_ERR_COUNT for count < 0,
 * MPI_ERR_TYPE for an invalid or uncommitted type, MPI_ERR_BUFFER for a NULL buffer with
 * count > 0 of a predefined non-empty type, or for MPI_IN_PLACE when !in_place_ok. */
int mpii_coll_check_buf(const void *buf, int64_t count, MPI_Datatype type, int in_place_ok);

/* Local typed copy of scount x stype at sbuf to rcount x rtype at rbuf (the smaller of
 * the two streams' byte sizes moves). MPI_ERR_TRUNCATE when the send part is larger. */
int mpii_coll_copy(const void *sbuf, int64_t scount, MPI_Datatype stype, void *rbuf, int64_t rcount,
                   MPI_Datatype rtype);

/* A temporary buffer holding count elements of type in the type's own layout: returns the
 * address to use as buffer (may differ from the allocation by the type's lower bound) and
 * stores the allocation in *mem (free(*mem) later). NULL: out of memory. */
void *mpii_coll_tmp(MPI_Datatype type, int64_t count, void **mem);

/* The extent of a valid datatype handle. */
static inline int64_t mpii_coll_ext(MPI_Datatype t)
{
    return dt_extent(mpii_type_get(t));
}

/* Raises rc on comm unless it is MPI_SUCCESS; returns the code the handler leaves. */
static inline int mpii_coll_fail(MPI_Comm comm, int rc, const char *fname)
{
    return rc == MPI_SUCCESS ? MPI_SUCCESS : MPII_ERR_COMM(comm, rc, fname);
}

/* Binomial-tree bcast / linear scatterv of the library, usable by the reductions
 * (tag given, arguments already checked). counts/displs in elements of type. */
int mpii_coll_bcast(mpii_comm_t *c, void *buf, int64_t count, MPI_Datatype type, int root, int tag);
int mpii_coll_scatterv(mpii_comm_t *c, const void *sbuf, const int64_t *counts,
                       const int64_t *displs, MPI_Datatype stype, void *rbuf, int64_t rcount,
                       MPI_Datatype rtype, int root, int tag);

#endif
