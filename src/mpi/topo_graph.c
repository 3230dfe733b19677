/* topo_graph.c — graph topologies (MPI-4.0 8.5.3): MPI_Graph_create, _map, _get,
 * _neighbors(_count) and MPI_Graphdims_get. Every process holds the whole graph as
 * given (index[] cumulative, edges[]); self-loops and repeated edges are allowed. With
 * reorder (and always in MPI_Graph_map) the vertices are placed by mpii_topo_place:
 * heavy edges (here: many edges) inside a host; on one host the identity. */
#include <stdlib.h>
#include <string.h>

#include "mpi/topo_impl.h"

/* Checks a graph description against a communicator of size processes. */
static int graph_check(int nnodes, const int index[], const int edges[], int size, MPI_Comm comm,
                       const char *fn)
{
    if (nnodes < 0 || nnodes > size)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                         "nnodes %d not in 0..%d (the group's size)", nnodes, size);
    if (nnodes == 0)
        return MPI_SUCCESS;
    if (!index)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "index NULL with nnodes %d", nnodes);
    for (int i = 0; i < nnodes; i++)
        if (index[i] < (i ? index[i - 1] : 0))
            return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                             "index[%d] = %d is below the previous entry", i, index[i]);
    if (index[nnodes - 1] > 0 && !edges)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "edges NULL with index[%d] = %d", nnodes - 1,
                              index[nnodes - 1]);
    for (int e = 0; e < index[nnodes - 1]; e++)
        if (edges[e] < 0 || edges[e] >= nnodes)
            return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                             "edges[%d] = %d is not a node (0..%d)", e, edges[e], nnodes - 1);
    return MPI_SUCCESS;
}

/* The key (new rank) of this process for the graph, placed when reorder says so. */
static int graph_key(mpii_comm_t *c, int nnodes, const int index[], const int edges[], int reorder,
                     int *key)
{
    if (nnodes == 0) {
        *key = MPI_UNDEFINED;
        return MPI_SUCCESS;
    }
    int *off = malloc(((size_t)nnodes + 1) * sizeof *off);
    if (!off)
        return MPI_ERR_NO_MEM;
    off[0] = 0;
    memcpy(off + 1, index, (size_t)nnodes * sizeof *off);
    int rc = mpii_topo_place(c, nnodes, off, edges, NULL, reorder, key);
    free(off);
    return rc;
}

int PMPI_Graph_create(MPI_Comm comm_old, int nnodes, const int index[], const int edges[],
                      int reorder, MPI_Comm *comm_graph)
{
    static const char fn[] = "MPI_Graph_create";
    mpii_comm_t *p;
    int rc = mpii_topo_enter(comm_old, "comm_old", 0, fn, &p);
    if (rc)
        return rc;
    if (!comm_graph)
        return MPII_ERR_NULL(comm_old, "comm_graph", fn);
    if ((rc = graph_check(nnodes, index, edges, p->size, comm_old, fn)))
        return rc;
    int nedges = nnodes ? index[nnodes - 1] : 0, key;
    struct mpii_topo *t = mpii_topo_new(MPI_GRAPH, (size_t)nnodes + (size_t)nedges);
    if (!t || (rc = graph_key(p, nnodes, index, edges, reorder, &key)) != MPI_SUCCESS) {
        mpii_topo_free(t);
        return MPII_ERR_COMM(comm_old, MPI_ERR_NO_MEM, fn);
    }
    t->nnodes = nnodes;
    t->nedges = nedges;
    t->index = mpii_topo_ints(t);
    t->edges = t->index + nnodes;
    if (nnodes)
        memcpy(t->index, index, (size_t)nnodes * sizeof(int));
    if (nedges)
        memcpy(t->edges, edges, (size_t)nedges * sizeof(int));
    mpii_comm_t *c;
    if ((rc = mpii_topo_make(p, key, t, &c)) != MPI_SUCCESS)
        return MPII_ERR_COMM(comm_old, rc, fn);
    *comm_graph = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graph_create, PMPI_Graph_create)

int PMPI_Graph_map(MPI_Comm comm, int nnodes, const int index[], const int edges[], int *newrank)
{
    static const char fn[] = "MPI_Graph_map";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", 0, fn, &c);
    if (rc)
        return rc;
    if (!newrank)
        return MPII_ERR_NULL(comm, "newrank", fn);
    if (nnodes <= 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "nnodes %d is not positive", nnodes);
    if ((rc = graph_check(nnodes, index, edges, c->size, comm, fn)))
        return rc;
    if ((rc = graph_key(c, nnodes, index, edges, 1, newrank)) != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graph_map, PMPI_Graph_map)

int PMPI_Graphdims_get(MPI_Comm comm, int *nnodes, int *nedges)
{
    static const char fn[] = "MPI_Graphdims_get";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_GRAPH, fn, &c);
    if (rc)
        return rc;
    if (!nnodes || !nedges)
        return MPII_ERR_NULL(comm, nnodes ? "nedges" : "nnodes", fn);
    *nnodes = c->topo->nnodes;
    *nedges = c->topo->nedges;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graphdims_get, PMPI_Graphdims_get)

int PMPI_Graph_get(MPI_Comm comm, int maxindex, int maxedges, int index[], int edges[])
{
    static const char fn[] = "MPI_Graph_get";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_GRAPH, fn, &c);
    if (rc)
        return rc;
    const struct mpii_topo *t = c->topo;
    if (maxindex < 0 || maxedges < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s %d < 0",
                              maxindex < 0 ? "maxindex" : "maxedges", BASE_MIN(maxindex, maxedges));
    if ((maxindex > 0 && !index) || (maxedges > 0 && !edges))
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s NULL with %s %d",
                              maxindex > 0 && !index ? "index" : "edges",
                              maxindex > 0 && !index ? "maxindex" : "maxedges",
                              maxindex > 0 && !index ? maxindex : maxedges);
    if (BASE_MIN(maxindex, t->nnodes) > 0)
        memcpy(index, t->index, (size_t)BASE_MIN(maxindex, t->nnodes) * sizeof(int));
    if (BASE_MIN(maxedges, t->nedges) > 0)
        memcpy(edges, t->edges, (size_t)BASE_MIN(maxedges, t->nedges) * sizeof(int));
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graph_get, PMPI_Graph_get)

int PMPI_Graph_neighbors_count(MPI_Comm comm, int rank, int *nneighbors)
{
    static const char fn[] = "MPI_Graph_neighbors_count";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_GRAPH, fn, &c);
    if (rc)
        return rc;
    const struct mpii_topo *t = c->topo;
    if (rank < 0 || rank >= t->nnodes)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_RANK, fn, "rank %d is not in 0..%d",
                         rank, t->nnodes - 1);
    if (!nneighbors)
        return MPII_ERR_NULL(comm, "nneighbors", fn);
    *nneighbors = t->index[rank] - (rank ? t->index[rank - 1] : 0);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graph_neighbors_count, PMPI_Graph_neighbors_count)

int PMPI_Graph_neighbors(MPI_Comm comm, int rank, int maxneighbors, int neighbors[])
{
    static const char fn[] = "MPI_Graph_neighbors";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_GRAPH, fn, &c);
    if (rc)
        return rc;
    const struct mpii_topo *t = c->topo;
    if (rank < 0 || rank >= t->nnodes)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_RANK, fn, "rank %d is not in 0..%d",
                         rank, t->nnodes - 1);
    if (maxneighbors < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "maxneighbors %d < 0", maxneighbors);
    if (maxneighbors > 0 && !neighbors)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "neighbors NULL with maxneighbors %d",
                              maxneighbors);
    int first = rank ? t->index[rank - 1] : 0, n = t->index[rank] - first;
    if (BASE_MIN(maxneighbors, n) > 0)
        memcpy(neighbors, t->edges + first, (size_t)BASE_MIN(maxneighbors, n) * sizeof(int));
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Graph_neighbors, PMPI_Graph_neighbors)
