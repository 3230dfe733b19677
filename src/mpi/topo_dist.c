/* topo_dist.c — distributed-graph topologies (MPI-4.0 8.5.4):
 * MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create and the neighbour queries.
 *
 * A process's topology holds its own adjacency only: sources (in-edges) and
 * destinations (out-edges) with their weights (weighted 0 when the process passed
 * MPI_UNWEIGHTED; MPI_WEIGHTS_EMPTY stands for a list of no weights).
 * MPI_Dist_graph_create lets any process name any edge: every process gathers all the
 * edges named (allgather of counts, then of the edge triples padded to the longest
 * list) and keeps those leaving it, then those entering it, each in the order of (naming
 * rank, position), so that repeated edges between two processes pair up in the same
 * order on both sides (the neighbourhood collectives rely on that).
 *
 * reorder: the graph is a virtual topology whose vertices are the ranks; a process that
 * gets new rank k plays vertex k, i.e. has the adjacency old rank k passed. When the
 * old communicator spans several hosts, the whole graph is gathered and placed by
 * mpii_topo_place (heavy edges inside a host); on one host nothing moves. */
#include <stdlib.h>
#include <string.h>

#include "mpi/topo_impl.h"

/* Allgather of n ints per process (n may differ): *all gets size blocks of *stride ints,
 * process i's first counts[i] of them its own. Returns an MPI class. */
static int dist_allgatherv(mpii_comm_t *c, const int *mine, int n, int **all, int **counts,
                           int *stride)
{
    *all = NULL;
    *counts = malloc((size_t)c->size * sizeof **counts);
    if (!*counts)
        return MPI_ERR_NO_MEM; /* (the peers would wait: out of memory is fatal anyway) */
    int rc = mpii_lib_allgather(c, &n, *counts, sizeof n);
    if (rc != MPI_SUCCESS)
        return rc;
    int max = 1;
    for (int i = 0; i < c->size; i++)
        max = BASE_MAX(max, (*counts)[i]);
    int *pad = calloc((size_t)max, sizeof *pad);
    *all = malloc((size_t)c->size * (size_t)max * sizeof **all);
    if (!pad || !*all) {
        free(pad);
        return MPI_ERR_NO_MEM;
    }
    if (n > 0)
        memcpy(pad, mine, (size_t)n * sizeof *pad);
    rc = mpii_lib_allgather(c, pad, *all, (size_t)max * sizeof *pad);
    free(pad);
    *stride = max;
    return rc;
}

/* A distributed-graph topology of indeg sources and outdeg destinations (weights NULL:
 * unweighted, stored as 1 but reported per `weighted`; src / dst NULL: filled by the
 * caller). */
static struct mpii_topo *dist_topo(int indeg, const int *src, const int *srcw, int outdeg,
                                   const int *dst, const int *dstw, int weighted)
{
    struct mpii_topo *t = mpii_topo_new(MPI_DIST_GRAPH, 2 * ((size_t)indeg + (size_t)outdeg));
    if (!t)
        return NULL;
    t->indeg = indeg;
    t->outdeg = outdeg;
    t->weighted = weighted;
    t->src = mpii_topo_ints(t);
    t->srcw = t->src + indeg;
    t->dst = t->srcw + indeg;
    t->dstw = t->dst + outdeg;
    for (int i = 0; src && i < indeg; i++) {
        t->src[i] = src[i];
        t->srcw[i] = srcw ? srcw[i] : 1;
    }
    for (int i = 0; dst && i < outdeg; i++) {
        t->dst[i] = dst[i];
        t->dstw[i] = dstw ? dstw[i] : 1;
    }
    return t;
}

/* The edges of a gathered edge list (m triples src, dst, weight): the topology of vertex
 * v, and when csr is not NULL the whole graph as CSR out-lists for the placement
 * (csr->off [n + 1], adj and w [m]). */
typedef struct dist_csr {
    int *off, *adj, *w;
} dist_csr_t;

static int dist_csr_build(const int *tri, int m, int n, dist_csr_t *g)
{
    g->off = calloc((size_t)n + 1, sizeof *g->off);
    g->adj = malloc(((size_t)m + 1) * sizeof *g->adj);
    g->w = malloc(((size_t)m + 1) * sizeof *g->w);
    int *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!g->off || !g->adj || !g->w || !fill) {
        free(fill);
        return MPI_ERR_NO_MEM;
    }
    for (int e = 0; e < m; e++)
        g->off[tri[3 * e] + 1]++;
    for (int v = 0; v < n; v++)
        g->off[v + 1] += g->off[v];
    for (int e = 0; e < m; e++) {
        int v = tri[3 * e], k = g->off[v] + fill[v]++;
        g->adj[k] = tri[3 * e + 1];
        g->w[k] = tri[3 * e + 2];
    }
    free(fill);
    return MPI_SUCCESS;
}

static void dist_csr_free(dist_csr_t *g)
{
    free(g->off);
    free(g->adj);
    free(g->w);
}

/* Vertex v's adjacency out of m gathered triples, in their order. */
static struct mpii_topo *dist_topo_of(const int *tri, int m, int v, int weighted)
{
    int indeg = 0, outdeg = 0;
    for (int e = 0; e < m; e++) {
        outdeg += tri[3 * e] == v;
        indeg += tri[3 * e + 1] == v;
    }
    struct mpii_topo *t = dist_topo(indeg, NULL, NULL, outdeg, NULL, NULL, weighted);
    if (!t)
        return NULL;
    int i = 0, o = 0;
    for (int e = 0; e < m; e++) {
        if (tri[3 * e] == v) {
            t->dst[o] = tri[3 * e + 1];
            t->dstw[o++] = tri[3 * e + 2];
        }
        if (tri[3 * e + 1] == v) {
            t->src[i] = tri[3 * e];
            t->srcw[i++] = tri[3 * e + 2];
        }
    }
    return t;
}

/* Checks n ranks of a list and their weights (w: MPI_UNWEIGHTED / MPI_WEIGHTS_EMPTY / an
 * array). deg names n, what the list in the message. */
static int dist_check_list(int n, const int *ranks, const int *w, int size, MPI_Comm comm,
                           const char *fn, const char *deg, const char *what)
{
    if (n < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s %d < 0", deg, n);
    if (n == 0)
        return MPI_SUCCESS;
    if (!ranks)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s NULL with %s %d", what, deg, n);
    if (w == MPI_WEIGHTS_EMPTY || !w)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                         "%d %s but no weights (MPI_UNWEIGHTED for none)", n, what);
    for (int i = 0; i < n; i++) {
        if (ranks[i] < 0 || ranks[i] >= size)
            return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                             "%s[%d] = %d is not a rank (0..%d)", what, i, ranks[i], size - 1);
        if (w != MPI_UNWEIGHTED && w[i] < 0)
            return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, fn,
                             "negative weight %d of %s[%d]", w[i], what, i);
    }
    return MPI_SUCCESS;
}

static const int *dist_weights(const int *w)
{
    return w == MPI_UNWEIGHTED || w == MPI_WEIGHTS_EMPTY ? NULL : w;
}

/* Gathers the edges (m triples at tri, this process's) of every process, places the graph
 * and makes the topology of the vertex this process plays. */
static int dist_make_gathered(mpii_comm_t *p, const int *tri, int m, int weighted, int reorder,
                              mpii_comm_t **out)
{
    int *all = NULL, *counts = NULL, stride = 0, key = p->rank;
    int rc = dist_allgatherv(p, tri, 3 * m, &all, &counts, &stride);
    int total = 0;
    for (int i = 0; rc == MPI_SUCCESS && i < p->size; i++) {
        memmove(all + 3 * total, all + (size_t)i * (size_t)stride, (size_t)counts[i] * sizeof(int));
        total += counts[i] / 3;
    }
    dist_csr_t g = {0};
    if (rc == MPI_SUCCESS && reorder && (rc = dist_csr_build(all, total, p->size, &g)) == 0)
        rc = mpii_topo_place(p, p->size, g.off, g.adj, g.w, reorder, &key);
    dist_csr_free(&g);
    struct mpii_topo *t = rc == MPI_SUCCESS ? dist_topo_of(all, total, key, weighted) : NULL;
    free(all);
    free(counts);
    if (rc == MPI_SUCCESS && !t)
        rc = MPI_ERR_NO_MEM;
    if (rc != MPI_SUCCESS)
        return rc;
    return mpii_topo_make(p, key, t, out);
}

/* Whether the processes of p are on more than one host (the same answer everywhere). */
static int dist_multi_host(const mpii_comm_t *p)
{
    const boot_nodes_t *vn = vnic_nodes(mpii.vnic);
    if (!vn || vn->nnodes <= 1)
        return 0;
    for (int r = 1; r < p->size; r++)
        if (vn->node_of[p->group->world[r]] != vn->node_of[p->group->world[0]])
            return 1;
    return 0;
}

int PMPI_Dist_graph_create_adjacent(MPI_Comm comm_old, int indegree, const int sources[],
                                    const int *sourceweights, int outdegree,
                                    const int destinations[], const int *destweights, MPI_Info info,
                                    int reorder, MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create_adjacent";
    (void)info; /* no hints are used */
    mpii_comm_t *p;
    int rc = mpii_topo_enter(comm_old, "comm_old", 0, fn, &p);
    if (rc)
        return rc;
    if (!comm_dist_graph)
        return MPII_ERR_NULL(comm_old, "comm_dist_graph", fn);
    if ((rc = dist_check_list(indegree, sources, sourceweights, p->size, comm_old, fn, "indegree",
                              "sources")) ||
        (rc = dist_check_list(outdegree, destinations, destweights, p->size, comm_old, fn,
                              "outdegree", "destinations")))
        return rc;
    int weighted = sourceweights != MPI_UNWEIGHTED;
    const int *sw = dist_weights(sourceweights), *dw = dist_weights(destweights);
    mpii_comm_t *c = NULL;
    if (reorder && dist_multi_host(p)) {
        /* the out-edges name the whole graph: gathered, every process plays a vertex */
        int *tri = malloc(3 * ((size_t)outdegree + 1) * sizeof *tri);
        if (!tri)
            return MPII_ERR_COMM(comm_old, MPI_ERR_NO_MEM, fn);
        for (int i = 0; i < outdegree; i++) {
            tri[3 * i] = p->rank;
            tri[3 * i + 1] = destinations[i];
            tri[3 * i + 2] = dw ? dw[i] : 1;
        }
        rc = dist_make_gathered(p, tri, outdegree, weighted, reorder, &c);
        free(tri);
    } else {
        struct mpii_topo *t =
            dist_topo(indegree, sources, sw, outdegree, destinations, dw, weighted);
        rc = t ? mpii_topo_make(p, p->rank, t, &c) : MPI_ERR_NO_MEM;
    }
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm_old, rc, fn);
    *comm_dist_graph = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Dist_graph_create_adjacent, PMPI_Dist_graph_create_adjacent)

int PMPI_Dist_graph_create(MPI_Comm comm_old, int n, const int sources[], const int degrees[],
                           const int destinations[], const int *weights, MPI_Info info, int reorder,
                           MPI_Comm *comm_dist_graph)
{
    static const char fn[] = "MPI_Dist_graph_create";
    (void)info; /* no hints are used */
    mpii_comm_t *p;
    int rc = mpii_topo_enter(comm_old, "comm_old", 0, fn, &p);
    if (rc)
        return rc;
    if (!comm_dist_graph)
        return MPII_ERR_NULL(comm_old, "comm_dist_graph", fn);
    if (n < 0)
        return MPII_ERRF_COMM(comm_old, MPI_ERR_ARG, fn, "n %d < 0", n);
    if (n > 0 && (!sources || !degrees))
        return MPII_ERRF_COMM(comm_old, MPI_ERR_ARG, fn, "%s NULL with n %d",
                              sources ? "degrees" : "sources", n);
    long m = 0;
    for (int i = 0; i < n; i++) {
        if (sources[i] < 0 || sources[i] >= p->size)
            return mpii_errf(FMPL_MPI_KIND_COMM, comm_old, MPI_ERR_ARG, fn,
                             "sources[%d] = %d is not a rank (0..%d)", i, sources[i], p->size - 1);
        if (degrees[i] < 0)
            return mpii_errf(FMPL_MPI_KIND_COMM, comm_old, MPI_ERR_ARG, fn,
                             "negative degrees[%d] = %d", i, degrees[i]);
        m += degrees[i];
    }
    if (m > INT32_MAX / 3)
        return MPII_ERRF_COMM(comm_old, MPI_ERR_ARG, fn, "degrees add up to %ld edges, over %d", m,
                              INT32_MAX / 3);
    if ((rc = dist_check_list((int)m, destinations, weights, p->size, comm_old, fn,
                              "the sum of degrees", "destinations")))
        return rc;
    const int *w = dist_weights(weights);
    int *tri = malloc(3 * ((size_t)m + 1) * sizeof *tri);
    if (!tri)
        return MPII_ERR_COMM(comm_old, MPI_ERR_NO_MEM, fn);
    for (int i = 0, e = 0; i < n; i++)
        for (int k = 0; k < degrees[i]; k++, e++) {
            tri[3 * e] = sources[i];
            tri[3 * e + 1] = destinations[e];
            tri[3 * e + 2] = w ? w[e] : 1;
        }
    mpii_comm_t *c = NULL;
    rc = dist_make_gathered(p, tri, (int)m, weights != MPI_UNWEIGHTED,
                            reorder && dist_multi_host(p), &c);
    free(tri);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm_old, rc, fn);
    *comm_dist_graph = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Dist_graph_create, PMPI_Dist_graph_create)

int PMPI_Dist_graph_neighbors_count(MPI_Comm comm, int *indegree, int *outdegree, int *weighted)
{
    static const char fn[] = "MPI_Dist_graph_neighbors_count";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_DIST_GRAPH, fn, &c);
    if (rc)
        return rc;
    if (!indegree || !outdegree || !weighted)
        return MPII_ERR_NULL(comm,
                             !indegree    ? "indegree"
                             : !outdegree ? "outdegree"
                                          : "weighted",
                             fn);
    *indegree = c->topo->indeg;
    *outdegree = c->topo->outdeg;
    *weighted = c->topo->weighted;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Dist_graph_neighbors_count, PMPI_Dist_graph_neighbors_count)

/* Copies the first max of n entries (weights when the array is a real one). */
static void dist_copy(int *to, const int *from, int max, int n)
{
    if (to && to != MPI_UNWEIGHTED && to != MPI_WEIGHTS_EMPTY && BASE_MIN(max, n) > 0)
        memcpy(to, from, (size_t)BASE_MIN(max, n) * sizeof(int));
}

int PMPI_Dist_graph_neighbors(MPI_Comm comm, int maxindegree, int sources[], int *sourceweights,
                              int maxoutdegree, int destinations[], int *destweights)
{
    static const char fn[] = "MPI_Dist_graph_neighbors";
    mpii_comm_t *c;
    int rc = mpii_topo_enter(comm, "comm", MPI_DIST_GRAPH, fn, &c);
    if (rc)
        return rc;
    const struct mpii_topo *t = c->topo;
    if (maxindegree < 0 || maxoutdegree < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s %d < 0",
                              maxindegree < 0 ? "maxindegree" : "maxoutdegree",
                              BASE_MIN(maxindegree, maxoutdegree));
    if (BASE_MIN(maxindegree, t->indeg) > 0 && !sources)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "sources NULL with maxindegree %d",
                              maxindegree);
    if (BASE_MIN(maxoutdegree, t->outdeg) > 0 && !destinations)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "destinations NULL with maxoutdegree %d",
                              maxoutdegree);
    dist_copy(sources, t->src, maxindegree, t->indeg);
    dist_copy(destinations, t->dst, maxoutdegree, t->outdeg);
    if (t->weighted) {
        dist_copy(sourceweights, t->srcw, maxindegree, t->indeg);
        dist_copy(destweights, t->dstw, maxoutdegree, t->outdeg);
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Dist_graph_neighbors, PMPI_Dist_graph_neighbors)
