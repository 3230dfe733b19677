/* topo_map.c — where the vertices of a graph or distributed-graph topology go when the
 * program lets the library reorder (reorder = 1, MPI_Graph_map): heavy edges inside a
 * host.
 *
 * The n vertices are placed on the first n ranks of the old communicator. When those
 * ranks are on one host every placement is as good as another and the identity is
 * kept. Otherwise the hosts are filled one after the other (in the order of their first
 * rank), each with as many vertices as it has ranks among the n: a region grows from a
 * seed (the free vertex with the heaviest edge to another free vertex), always taking
 * the free vertex with the most edge weight into the region (ties: the lowest vertex),
 * and starts a new seed when nothing free is connected to it. Edges count in both
 * directions. The host's ranks then take the region's vertices in the order they were
 * taken. Every process computes the same answer from the same graph (the distributed
 * graph gathers it first), so no further agreement is needed. O(n^2 + edges). */
#include <stdlib.h>
#include <string.h>

#include "mpi/topo_impl.h"

/* The undirected form of the graph: CSR (uoff, uadj, uw) with each edge both ways. */
typedef struct place_graph {
    int *uoff, *uadj;
    long *uw;
} place_graph_t;

static int place_graph_build(int n, const int *off, const int *adj, const int *w, place_graph_t *g)
{
    int m = off[n];
    g->uoff = calloc((size_t)n + 1, sizeof *g->uoff);
    g->uadj = malloc((size_t)(2 * m + 1) * sizeof *g->uadj);
    g->uw = malloc((size_t)(2 * m + 1) * sizeof *g->uw);
    int *fill = calloc((size_t)n + 1, sizeof *fill);
    if (!g->uoff || !g->uadj || !g->uw || !fill) {
        free(fill);
        return MPI_ERR_NO_MEM;
    }
    for (int v = 0; v < n; v++)
        for (int e = off[v]; e < off[v + 1]; e++) {
            g->uoff[v + 1]++;
            g->uoff[adj[e] + 1]++;
        }
    for (int v = 0; v < n; v++)
        g->uoff[v + 1] += g->uoff[v];
    for (int v = 0; v < n; v++)
        for (int e = off[v]; e < off[v + 1]; e++) {
            int u = adj[e];
            long x = w ? w[e] : 1;
            g->uadj[g->uoff[v] + fill[v]] = u;
            g->uw[g->uoff[v] + fill[v]++] = x;
            g->uadj[g->uoff[u] + fill[u]] = v;
            g->uw[g->uoff[u] + fill[u]++] = x;
        }
    free(fill);
    return MPI_SUCCESS;
}

/* The order in which the hosts' ranks take the vertices: order[0..n). Returns an MPI
 * class. */
static int place_order(int n, const place_graph_t *g, const int *cap, int nhosts, int *order)
{
    char *taken = calloc((size_t)n, 1);
    long *gain = calloc((size_t)n, sizeof *gain);
    if (!taken || !gain) {
        free(taken);
        free(gain);
        return MPI_ERR_NO_MEM;
    }
    int k = 0;
    for (int h = 0; h < nhosts; h++) {
        memset(gain, 0, (size_t)n * sizeof *gain);
        for (int left = cap[h]; left > 0; left--) {
            int best = -1;
            for (int v = 0; v < n; v++)
                if (!taken[v] && gain[v] > 0 && (best < 0 || gain[v] > gain[best]))
                    best = v;
            if (best < 0) { /* a new seed: the heaviest edge between free vertices */
                long heaviest = -1;
                for (int v = 0; v < n; v++) {
                    if (taken[v])
                        continue;
                    long hv = 0;
                    for (int e = g->uoff[v]; e < g->uoff[v + 1]; e++)
                        if (!taken[g->uadj[e]] && g->uadj[e] != v && g->uw[e] > hv)
                            hv = g->uw[e];
                    if (hv > heaviest) {
                        heaviest = hv;
                        best = v;
                    }
                }
            }
            taken[best] = 1;
            order[k++] = best;
            for (int e = g->uoff[best]; e < g->uoff[best + 1]; e++)
                gain[g->uadj[e]] += g->uw[e];
        }
    }
    free(taken);
    free(gain);
    return MPI_SUCCESS;
}

int mpii_topo_place(mpii_comm_t *c, int n, const int *off, const int *adj, const int *w,
                    int reorder, int *key)
{
    *key = c->rank < n ? c->rank : MPI_UNDEFINED;
    if (!reorder || n <= 1)
        return MPI_SUCCESS;
    const boot_nodes_t *vn = vnic_nodes(mpii.vnic);
    if (!vn || vn->nnodes <= 1)
        return MPI_SUCCESS;
    /* hosts of ranks 0..n-1, numbered by first appearance */
    int *host = malloc((size_t)n * sizeof *host), *hid = malloc((size_t)vn->nnodes * sizeof *hid);
    int *cap = calloc((size_t)n, sizeof *cap), *order = malloc((size_t)n * sizeof *order);
    place_graph_t g = {0};
    int rc = MPI_ERR_NO_MEM;
    if (!host || !hid || !cap || !order)
        goto out;
    for (int i = 0; i < vn->nnodes; i++)
        hid[i] = -1;
    int nhosts = 0;
    for (int r = 0; r < n; r++) {
        int node = vn->node_of[c->group->world[r]];
        if (hid[node] < 0)
            hid[node] = nhosts++;
        host[r] = hid[node];
        cap[host[r]]++;
    }
    rc = MPI_SUCCESS;
    if (nhosts == 1 || c->rank >= n)
        goto out;
    if ((rc = place_graph_build(n, off, adj, w, &g)) != MPI_SUCCESS)
        goto out;
    if ((rc = place_order(n, &g, cap, nhosts, order)) != MPI_SUCCESS)
        goto out;
    /* this rank's slot: the ranks of earlier hosts, then its place among its host's */
    int slot = 0;
    for (int r = 0; r < n; r++)
        if (host[r] < host[c->rank] || (host[r] == host[c->rank] && r < c->rank))
            slot++;
    *key = order[slot];
out:
    free(host);
    free(hid);
    free(cap);
    free(order);
    free(g.uoff);
    free(g.uadj);
    free(g.uw);
    return rc;
}
