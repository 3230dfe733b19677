/* coll.h — collective operations over a group of ranks, built on the vnic only
 * (puts/gets/atomics/counters/notify), so they run over every transport.
 * Issue 2 scope: barrier, bcast, reduce, allreduce, allgather (fixed size) for any
 * group size and root, algorithm chosen by message size and group size. (Issue 4
 * turns these into pre-built schedules; this interface is what callers keep.)
 *
 * All calls are collective over the group's members, block until this rank's part
 * is done, and are made by one thread. Groups with common members must call their
 * collectives in the same order on every member (as MPI requires). */
#ifndef FMPL_COLL_H
#define FMPL_COLL_H

#include <stddef.h>
#include <stdint.h>

#include "vnic/vnic.h"

typedef struct coll_group coll_group_t;

/* Sets up collective state of this process (registers its areas). Called once
 * after vnic_open, on every rank, before any group exists. Collective over the job. */
int coll_init(vnic_t *v);
void coll_finalize(vnic_t *v);

/* Creates this rank's handle on a group: `size` members given by their world ranks
 * in group-rank order (members[rank] is this process). `ctx` identifies the group:
 * every member passes the same value, and two live groups that share a member never
 * share a ctx. Collective over the members. */
int coll_group_create(vnic_t *v, int size, int rank, const int *members, uint32_t ctx,
                      coll_group_t **out);
/* Collective over the members; frees the handle. */
int coll_group_free(coll_group_t *g);

/* A reduction: combine count elements, inout[i] = inout[i] (op) in[i]. */
typedef void (*coll_reduce_fn)(void *inout, const void *in, size_t count, void *arg);
typedef struct coll_reduce_op {
    coll_reduce_fn fn;
    void *arg;
    size_t elem_size;  /* bytes per element */
    int commutative;   /* 0: combine strictly in rank order */
} coll_reduce_op_t;

int coll_barrier(coll_group_t *g);
int coll_bcast(coll_group_t *g, void *buf, size_t size, int root);
/* Result in buf at root only (other ranks' buf unchanged). work: scratch of
 * count*elem_size bytes or NULL (then the library allocates). */
int coll_reduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op, int root,
                void *work);
int coll_allreduce(coll_group_t *g, void *buf, size_t count, const coll_reduce_op_t *op,
                   void *work);
/* recv gets size bytes from each member, in group-rank order; send may be NULL when
 * this rank's block is already in place at recv + rank*size. */
int coll_allgather(coll_group_t *g, const void *send, void *recv, size_t size);

#endif
