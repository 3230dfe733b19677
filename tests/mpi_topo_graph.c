/* mpi_topo_graph: graph and distributed-graph topologies: Graph_create/get/map,
 * Graphdims_get, Graph_neighbors(_count), Dist_graph_create(_adjacent) with and without
 * weights (MPI_UNWEIGHTED, MPI_WEIGHTS_EMPTY), Dist_graph_neighbors(_count), Topo_test
 * of every kind, the topology kept by Comm_dup, reorder, and the error classes. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

/* A ring with a chord: vertex v is joined to v-1, v+1 and (v + n/2) (all mod n). */
static int ring_edges(int n, int *index, int *edges)
{
    int e = 0;
    for (int v = 0; v < n; v++) {
        if (n > 1) {
            edges[e++] = (v + n - 1) % n;
            edges[e++] = (v + 1) % n;
        }
        if (n > 3)
            edges[e++] = (v + n / 2) % n;
        index[v] = e;
    }
    return e;
}

static void check_graph(MPI_Comm g, int n, const int *index, const int *edges, int nedges)
{
    int st, nn, ne, me;
    CHECK_RC(MPI_Topo_test(g, &st), MPI_SUCCESS);
    CHECK(st == MPI_GRAPH);
    CHECK_RC(MPI_Graphdims_get(g, &nn, &ne), MPI_SUCCESS);
    CHECK(nn == n && ne == nedges);
    int gi[16], ge[64];
    CHECK_RC(MPI_Graph_get(g, 16, 64, gi, ge), MPI_SUCCESS);
    CHECK(!memcmp(gi, index, (size_t)n * sizeof(int)));
    CHECK(!memcmp(ge, edges, (size_t)nedges * sizeof(int)));
    MPI_Comm_rank(g, &me);
    for (int v = 0; v < n; v++) {
        int cnt, nb[8], first = v ? index[v - 1] : 0;
        CHECK_RC(MPI_Graph_neighbors_count(g, v, &cnt), MPI_SUCCESS);
        CHECK(cnt == index[v] - first);
        CHECK_RC(MPI_Graph_neighbors(g, v, 8, nb), MPI_SUCCESS);
        CHECK(!memcmp(nb, edges + first, (size_t)cnt * sizeof(int)));
    }
}

int main(int argc, char **argv)
{
    int n, me;
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* graph over all ranks, without and with reorder (one host: the identity) */
    int index[16], edges[64];
    int ne = ring_edges(n, index, edges);
    for (int reorder = 0; reorder < 2; reorder++) {
        MPI_Comm g, d;
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, reorder, &g), MPI_SUCCESS);
        int gr;
        MPI_Comm_rank(g, &gr);
        CHECK(gr == me);
        check_graph(g, n, index, edges, ne);
        CHECK_RC(MPI_Comm_dup(g, &d), MPI_SUCCESS);
        check_graph(d, n, index, edges, ne);
        MPI_Comm_set_errhandler(g, MPI_ERRORS_RETURN);
        int x, nb[2];
        CHECK(eclass(MPI_Graph_neighbors_count(g, n, &x)) == MPI_ERR_RANK);
        CHECK(eclass(MPI_Graph_neighbors(g, -1, 2, nb)) == MPI_ERR_RANK);
        CHECK(eclass(MPI_Cartdim_get(g, &x)) == MPI_ERR_TOPOLOGY);
        CHECK(eclass(MPI_Dist_graph_neighbors_count(g, &x, &x, &x)) == MPI_ERR_TOPOLOGY);
        MPI_Comm_free(&d);
        MPI_Comm_free(&g);
    }

    /* graph over the first n-1 ranks (the last gets MPI_COMM_NULL), self-loop + repeat */
    if (n > 1) {
        int k = n - 1, idx[16], ed[64], e = 0;
        for (int v = 0; v < k; v++) {
            ed[e++] = v;           /* self-loop */
            ed[e++] = (v + 1) % k; /* twice */
            ed[e++] = (v + 1) % k;
            idx[v] = e;
        }
        MPI_Comm g;
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, k, idx, ed, 0, &g), MPI_SUCCESS);
        CHECK((me < k) == (g != MPI_COMM_NULL));
        if (g != MPI_COMM_NULL) {
            check_graph(g, k, idx, ed, e);
            MPI_Comm_free(&g);
        }
        int nr;
        CHECK_RC(MPI_Graph_map(MPI_COMM_WORLD, k, idx, ed, &nr), MPI_SUCCESS);
        CHECK(me < k ? nr == me : nr == MPI_UNDEFINED);
    }
    /* no nodes: MPI_COMM_NULL everywhere */
    {
        MPI_Comm g = MPI_COMM_SELF;
        CHECK_RC(MPI_Graph_create(MPI_COMM_WORLD, 0, NULL, NULL, 0, &g), MPI_SUCCESS);
        CHECK(g == MPI_COMM_NULL);
    }
    /* graph errors (local checks: every rank makes the same bad call) */
    {
        MPI_Comm g;
        int bad_idx[2] = {2, 1}, ed[2] = {0, 0}, x;
        CHECK(eclass(MPI_Graph_create(MPI_COMM_WORLD, n + 1, index, edges, 0, &g)) == MPI_ERR_ARG);
        CHECK(eclass(MPI_Graph_create(MPI_COMM_WORLD, -1, index, edges, 0, &g)) == MPI_ERR_ARG);
        if (n >= 2)
            CHECK(eclass(MPI_Graph_create(MPI_COMM_WORLD, 2, bad_idx, ed, 0, &g)) == MPI_ERR_ARG);
        int idx1[1] = {1}, out[1] = {n + 3};
        CHECK(eclass(MPI_Graph_create(MPI_COMM_WORLD, 1, idx1, out, 0, &g)) == MPI_ERR_ARG);
        CHECK(eclass(MPI_Graph_map(MPI_COMM_WORLD, 0, idx1, ed, &x)) == MPI_ERR_ARG);
        CHECK(eclass(MPI_Graph_create(MPI_COMM_NULL, 1, idx1, ed, 0, &g)) == MPI_ERR_COMM);
        CHECK(eclass(MPI_Graphdims_get(MPI_COMM_WORLD, &x, &x)) == MPI_ERR_TOPOLOGY);
    }

    /* distributed graph, adjacent: a directed ring me -> me+1 weighted me+1, plus an
     * edge to myself weighted 7 */
    {
        int src[2] = {(me + n - 1) % n, me}, sw[2] = {(me + n - 1) % n + 1, 7};
        int dst[2] = {(me + 1) % n, me}, dw[2] = {me + 1, 7};
        MPI_Comm d, d2;
        CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 2, src, sw, 2, dst, dw,
                                                MPI_INFO_NULL, 0, &d),
                 MPI_SUCCESS);
        int st, in, out, w;
        CHECK_RC(MPI_Topo_test(d, &st), MPI_SUCCESS);
        CHECK(st == MPI_DIST_GRAPH);
        CHECK_RC(MPI_Comm_dup(d, &d2), MPI_SUCCESS);
        CHECK_RC(MPI_Dist_graph_neighbors_count(d2, &in, &out, &w), MPI_SUCCESS);
        CHECK(in == 2 && out == 2 && w);
        int s2[2], sw2[2], t2[2], tw2[2];
        CHECK_RC(MPI_Dist_graph_neighbors(d2, 2, s2, sw2, 2, t2, tw2), MPI_SUCCESS);
        CHECK(!memcmp(s2, src, sizeof src) && !memcmp(sw2, sw, sizeof sw));
        CHECK(!memcmp(t2, dst, sizeof dst) && !memcmp(tw2, dw, sizeof dw));
        MPI_Comm_set_errhandler(d, MPI_ERRORS_RETURN);
        int x;
        CHECK(eclass(MPI_Graphdims_get(d, &x, &x)) == MPI_ERR_TOPOLOGY);
        MPI_Comm_free(&d2);
        MPI_Comm_free(&d);
    }
    /* unweighted, and a process with no edges passing MPI_WEIGHTS_EMPTY */
    {
        MPI_Comm d;
        int deg = me == 0 ? 0 : 1, src = me - 1, dst = me + 1 < n ? me + 1 : 0;
        int outdeg = me + 1 < n ? 1 : 0;
        int rc = MPI_Dist_graph_create_adjacent(
            MPI_COMM_WORLD, deg, &src, deg ? MPI_UNWEIGHTED : MPI_WEIGHTS_EMPTY, outdeg, &dst,
            outdeg ? MPI_UNWEIGHTED : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, 1, &d);
        CHECK_RC(rc, MPI_SUCCESS);
        int in, out, w, s2 = -5, t2 = -5;
        CHECK_RC(MPI_Dist_graph_neighbors_count(d, &in, &out, &w), MPI_SUCCESS);
        CHECK(in == deg && out == outdeg);
        CHECK(w == (deg == 0 ? 1 : 0)); /* MPI_WEIGHTS_EMPTY is not MPI_UNWEIGHTED */
        CHECK_RC(MPI_Dist_graph_neighbors(d, 1, &s2, MPI_UNWEIGHTED, 1, &t2, MPI_UNWEIGHTED),
                 MPI_SUCCESS);
        CHECK(deg == 0 || s2 == me - 1);
        CHECK(outdeg == 0 || t2 == me + 1);
        MPI_Comm_free(&d);
    }
    /* general form: rank 0 names every edge v -> (v+1)%n and v -> (v+2)%n, weight 10v+k */
    for (int reorder = 0; reorder < 2; reorder++) {
        int srcs[16], degs[16], dsts[32], ws[32], k = 0;
        int nsrc = me == 0 ? n : 0;
        for (int v = 0; v < nsrc; v++) {
            srcs[v] = v;
            degs[v] = 2;
            for (int j = 1; j <= 2; j++) {
                dsts[k] = (v + j) % n;
                ws[k++] = 10 * v + j;
            }
        }
        MPI_Comm d;
        CHECK_RC(MPI_Dist_graph_create(MPI_COMM_WORLD, nsrc, srcs, degs, dsts,
                                       nsrc ? ws : MPI_WEIGHTS_EMPTY, MPI_INFO_NULL, reorder, &d),
                 MPI_SUCCESS);
        int in, out, w, s2[2], sw2[2], t2[2], tw2[2];
        CHECK_RC(MPI_Dist_graph_neighbors_count(d, &in, &out, &w), MPI_SUCCESS);
        CHECK(in == 2 && out == 2);
        CHECK_RC(MPI_Dist_graph_neighbors(d, 2, s2, sw2, 2, t2, tw2), MPI_SUCCESS);
        for (int j = 1; j <= 2; j++) {
            CHECK(t2[j - 1] == (me + j) % n);
            if (me == 0)
                CHECK(tw2[j - 1] == 10 * me + j);
        }
        /* in-edges in the order they were named: from me-1 (j=1) and me-2 (j=2) */
        int a = (me + n - 1) % n, b = (me + n - 2) % n;
        CHECK((s2[0] == a && s2[1] == b) || (s2[0] == b && s2[1] == a));
        if (me == 0)
            for (int i = 0; i < 2; i++)
                CHECK(sw2[i] == 10 * s2[i] + (s2[i] == a && (i == 0 || a != b) ? 1 : 2));
        MPI_Comm_free(&d);
    }
    /* distributed-graph errors */
    {
        MPI_Comm d;
        int r = n, w = -1, ok = 0;
        CHECK(eclass(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &r, MPI_UNWEIGHTED, 0, &ok,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d)) ==
              MPI_ERR_ARG);
        CHECK(eclass(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &ok, &w, 0, &ok,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d)) ==
              MPI_ERR_ARG);
        CHECK(eclass(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, -1, &ok, MPI_UNWEIGHTED, 0, &ok,
                                                    MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d)) ==
              MPI_ERR_ARG);
        CHECK(eclass(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, 1, &ok, MPI_WEIGHTS_EMPTY, 0,
                                                    &ok, MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &d)) ==
              MPI_ERR_ARG);
        int deg = -1;
        CHECK(eclass(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &ok, &deg, &ok, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &d)) == MPI_ERR_ARG);
        int one = 1;
        CHECK(eclass(MPI_Dist_graph_create(MPI_COMM_WORLD, 1, &r, &one, &ok, MPI_UNWEIGHTED,
                                           MPI_INFO_NULL, 0, &d)) == MPI_ERR_ARG);
        int x;
        CHECK(eclass(MPI_Dist_graph_neighbors_count(MPI_COMM_WORLD, &x, &x, &x)) ==
              MPI_ERR_TOPOLOGY);
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_topo_graph: ok\n");
    return 0;
}
