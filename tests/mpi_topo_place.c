/* mpi_topo_place: reorder on a job over several (fake) hosts, whose ranks alternate
 * between the hosts (fmplrun --hosts a,b: rank r on host r % 2; 4 or 8 ranks, so that
 * the pairs fit the hosts). The graph pairs vertex 2i with 2i+1 by a heavy edge (weight
 * 100) and joins the pairs in a ring by light ones (weight 1): without reordering every heavy edge
 * crosses hosts. With reorder = 1, MPI_Dist_graph_create_adjacent, MPI_Dist_graph_create and
 * MPI_Graph_create must put both ends of every heavy edge on one host (FMPL_NODE of the process),
 * the process of new rank k must have vertex k's adjacency, and a neighbourhood exchange over the
 * new communicator must deliver what each vertex sent. */
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

#define MAXN 16
static int n, me;

/* Vertex v's out-edges (and weights): its pair partner, and the next pair's first
 * vertex (the ring); in-edges: the partner and the previous pair's vertex that points to
 * v. */
static int out_edges(int v, int *dst, int *w)
{
    int k = 0, partner = v ^ 1;
    if (partner < n) {
        dst[k] = partner;
        w[k++] = 100;
    }
    if (v % 2 == 1 || partner >= n) { /* the pair's second vertex links to the next pair */
        int next = (v / 2 + 1) * 2 % n;
        if (next != v) {
            dst[k] = next;
            w[k++] = 1;
        }
    }
    return k;
}

static int in_edges(int v, int *src, int *w)
{
    int k = 0;
    for (int u = 0; u < n; u++) {
        int d[4], dw[4], m = out_edges(u, d, dw);
        for (int j = 0; j < m; j++)
            if (d[j] == v) {
                src[k] = u;
                w[k++] = dw[j];
            }
    }
    return k;
}

/* Checks the new communicator: heavy edges inside a host, the adjacency of the vertex
 * this process plays, and a neighbourhood exchange. */
static void check_dist(MPI_Comm c)
{
    int k;
    MPI_Comm_rank(c, &k);
    char node[64] = "", all[MAXN][64];
    const char *e = getenv("FMPL_NODE");
    CHECK(e != NULL);
    strncpy(node, e, sizeof node - 1);
    MPI_Allgather(node, 64, MPI_CHAR, all, 64, MPI_CHAR, c);
    for (int v = 0; v + 1 < n; v += 2)
        if (strcmp(all[v], all[v + 1]) != 0) {
            fprintf(stderr, "heavy edge %d-%d crosses hosts %s and %s\n", v, v + 1, all[v],
                    all[v + 1]);
            CHECK(0);
        }
    int in, out, weighted, src[4], sw[4], dst[4], dw[4], esrc[4], esw[4], edst[4], edw[4];
    CHECK_RC(MPI_Dist_graph_neighbors_count(c, &in, &out, &weighted), MPI_SUCCESS);
    int eo = out_edges(k, edst, edw), ei = in_edges(k, esrc, esw);
    CHECK(in == ei && out == eo && weighted);
    CHECK_RC(MPI_Dist_graph_neighbors(c, 4, src, sw, 4, dst, dw), MPI_SUCCESS);
    for (int j = 0; j < out; j++)
        CHECK(dst[j] == edst[j] && dw[j] == edw[j]);
    for (int i = 0; i < in; i++) /* (in the order the edges were named) */
        CHECK(src[i] == esrc[i] && sw[i] == esw[i]);
    int sb[4], rb[4];
    for (int j = 0; j < out; j++)
        sb[j] = k * 100 + dst[j];
    CHECK_RC(MPI_Neighbor_alltoall(sb, 1, MPI_INT, rb, 1, MPI_INT, c), MPI_SUCCESS);
    for (int i = 0; i < in; i++)
        CHECK(rb[i] == src[i] * 100 + k);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    CHECK(n <= MAXN);
    int dst[4], dw[4], src[4], sw[4];
    int out = out_edges(me, dst, dw), in = in_edges(me, src, sw);
    MPI_Comm c;
    /* adjacent: each process names its own edges */
    CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, in, src, sw, out, dst, dw,
                                            MPI_INFO_NULL, 1, &c),
             MPI_SUCCESS);
    check_dist(c);
    MPI_Comm_free(&c);
    /* general: rank 0 names every edge */
    {
        int srcs[MAXN], degs[MAXN], d[4 * MAXN], w[4 * MAXN], m = 0, ns = me == 0 ? n : 0;
        for (int v = 0; v < ns; v++) {
            srcs[v] = v;
            degs[v] = out_edges(v, d + m, w + m);
            m += degs[v];
        }
        CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, ns, srcs, degs, d,
                                       ns ? w : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1, &c),
                 MPI_SUCCESS);
        check_dist(c);
        MPI_Comm_free(&c);
    }
    /* graph topology: the same graph made symmetric, unweighted (heavy = two edges) */
    {
        int index[MAXN], edges[8 * MAXN], m = 0;
        for (int v = 0; v < n; v++) {
            int d[4], w[4], k = out_edges(v, d, w), s[4], sw2[4], ki = in_edges(v, s, sw2);
            for (int j = 0; j < k; j++) {
                edges[m++] = d[j];
                if (w[j] == 100)
                    edges[m++] = d[j];
            }
            for (int j = 0; j < ki; j++)
                if (sw2[j] == 1)
                    edges[m++] = s[j];
            index[v] = m;
        }
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 1, &c), MPI_SUCCESS);
        int k;
        MPI_Comm_rank(c, &k);
        char node[64] = "", all[MAXN][64];
        strncpy(node, getenv("FMPL_NODE"), sizeof node - 1);
        MPI_Allgather(node, 64, MPI_CHAR, all, 64, MPI_CHAR, c);
        for (int v = 0; v + 1 < n; v += 2)
            CHECK(strcmp(all[v], all[v + 1]) == 0);
        int nr;
        CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, n, index, edges, &nr), MPI_SUCCESS);
        CHECK(nr == k);
        MPI_Comm_free(&c);
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_topo_place: ok\n");
    return 0;
}
