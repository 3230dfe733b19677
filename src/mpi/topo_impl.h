/* topo_impl.h — private to the topology files (topo.c: Cartesian, topo_graph.c: graph,
 * topo_dist.c: distributed graph, topo_map.c: host-aware placement) and the
 * neighbourhood collectives (coll_neighbor.c).
 *
 * A communicator's topology is one allocation: the header below and the int arrays of
 * its kind after it, so MPI_Comm_dup copies it with one memcpy (mpii_topo_dup rebases
 * the array pointers). The neighbour lists the neighbourhood collectives use are
 * derived once per communicator (mpii_topo_neighbors) and kept beside it. */
#ifndef FMPL_MPI_TOPO_IMPL_H
#define FMPL_MPI_TOPO_IMPL_H

#include "mpi/mpi_impl.h"

/* The neighbours of this process in a communicator's topology, in the order of the
 * neighbourhood collectives' buffer blocks (MPI-4.0 7.6): receive block i comes from
 * in[i], send block j goes to out[j] (MPI_PROC_NULL: no transfer). send_order is the
 * order in which the sends are posted: receive blocks are filled in order from each
 * source, so the k-th message a process posts to a peer lands in the peer's k-th block
 * from it (non-overtaking). For a Cartesian topology the sends of each dimension go
 * +1 first, then -1: a peer that is our neighbour on both sides (a periodic dimension
 * of 2 or 1) then fills its -1 block with our +1 block, as the standard requires. */
typedef struct mpii_nbrs {
    int indeg, outdeg;
    int *in, *out, *send_order;
    /* 1 when every edge of every process (not only this one's) joins two ranks 2^k apart
     * modulo the size, or a rank to itself: the group mailboxes carry such edges
     * (coll.h "group schedules"). Known for Cartesian topologies only (every process
     * knows every edge there); 0 otherwise. The same on every process. */
    int mailbox_edges;
} mpii_nbrs_t;

struct mpii_topo {
    int kind;     /* MPI_CART, MPI_GRAPH or MPI_DIST_GRAPH */
    size_t bytes; /* of the whole allocation */
    /* MPI_CART */
    int ndims; /* may be 0 */
    int *dims;
    int *periods;
    /* MPI_GRAPH: the whole graph as given (index cumulative) */
    int nnodes, nedges;
    int *index, *edges;
    /* MPI_DIST_GRAPH: this process's adjacency; weighted 0 when MPI_UNWEIGHTED */
    int indeg, outdeg, weighted;
    int *src, *srcw, *dst, *dstw;
    mpii_nbrs_t *nbrs; /* derived (mpii_topo_neighbors), not copied by dup */
};

/* A topology of kind with room for nints ints at mpii_topo_ints(t), zeroed; NULL: out of memory. */
struct mpii_topo *mpii_topo_new(int kind, size_t nints);
static inline int *mpii_topo_ints(struct mpii_topo *t)
{
    return (int *)(t + 1);
}

/* The neighbour lists of this process (rank) in c's topology, computed at the first
 * call; NULL: out of memory. */
const mpii_nbrs_t *mpii_topo_neighbors(mpii_comm_t *c);

/* Cartesian neighbours: the ranks at -disp / +disp along direction (MPI_Cart_shift). */
void mpii_cart_shift(const struct mpii_topo *t, int rank, int direction, int disp, int *source,
                     int *dest);

/* Host-aware placement (topo_map.c) of a weighted graph of n vertices (CSR: vertex v's
 * edges are adj[off[v]..off[v+1]) with weights w, NULL: all 1) onto the n first ranks
 * of c: *key gets the vertex this process takes (its rank in the new communicator), or
 * MPI_UNDEFINED when c->rank >= n. When c spans one host, or reorder is 0, the
 * identity. Otherwise the vertices are laid out host after host: each host is filled
 * by growing a region from the heaviest remaining edge, always adding the vertex with
 * the heaviest edges into the region, so heavy edges stay inside a host. Returns an
 * MPI class (MPI_ERR_NO_MEM). */
int mpii_topo_place(mpii_comm_t *c, int n, const int *off, const int *adj, const int *w,
                    int reorder, int *key);

/* The entry checks of the topology calls: comm (argument arg) is an intracommunicator,
 * with a topology of the kind (0: with or without one). Return MPI_SUCCESS or the error
 * raised on comm (nonzero: *cp is only set on success). */
int mpii_topo_enter(MPI_Comm comm, const char *arg, int kind, const char *fname, mpii_comm_t **cp);

/* Creates the communicator of the processes of p with key != MPI_UNDEFINED, ranked by
 * key, with topology t (taken over: freed on failure and for MPI_UNDEFINED); *out NULL
 * for the others. Collective over p. Returns an MPI class. */
int mpii_topo_make(mpii_comm_t *p, int key, struct mpii_topo *t, mpii_comm_t **out);

#endif
