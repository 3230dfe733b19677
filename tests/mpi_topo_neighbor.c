/* mpi_topo_neighbor: the neighbourhood collectives on Cartesian (periodic 2-D, 1-D rings
 * of any size incl. 1 and 2 where a peer is a neighbour on both sides, non-periodic with
 * MPI_PROC_NULL), graph and distributed-graph communicators (self-edges, repeated
 * edges, in- and out-degrees that differ, a process without neighbours): allgather(v),
 * alltoall(v,w), blocking (repeated: the cached schedule with new data), nonblocking,
 * persistent (started twice) and _c forms; every received element checked. Then the
 * error classes. */
#include <stdlib.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

#define MAXD 16
static int n, me;

/* The topology as everyone sees it: in[r][..], out[r][..] of every rank r. */
typedef struct topo {
    int cart;
    int indeg[MAXD], outdeg[MAXD];
    int in[MAXD][MAXD], out[MAXD][MAXD];
} topo_t;

static void topo_learn(MPI_Comm c, topo_t *t)
{
    int st, myin[MAXD], myout[MAXD], deg[2];
    MPI_Topo_test(c, &st);
    t->cart = st == MPI_CART;
    if (st == MPI_CART) {
        int nd;
        MPI_Cartdim_get(c, &nd);
        deg[0] = deg[1] = 2 * nd;
        for (int d = 0; d < nd; d++) {
            MPI_Cart_shift(c, d, 1, &myin[2 * d], &myin[2 * d + 1]);
            myout[2 * d] = myin[2 * d];
            myout[2 * d + 1] = myin[2 * d + 1];
        }
    } else if (st == MPI_GRAPH) {
        MPI_Graph_neighbors_count(c, me, &deg[0]);
        MPI_Graph_neighbors(c, me, MAXD, myin);
        deg[1] = deg[0];
        memcpy(myout, myin, sizeof myin);
    } else {
        int w;
        CHECK(st == MPI_DIST_GRAPH);
        MPI_Dist_graph_neighbors_count(c, &deg[0], &deg[1], &w);
        MPI_Dist_graph_neighbors(c, MAXD, myin, MPI_UNWEIGHTED, MAXD, myout, MPI_UNWEIGHTED);
    }
    int all[MAXD][2 * MAXD + 2], mine[2 * MAXD + 2];
    mine[0] = deg[0];
    mine[1] = deg[1];
    memcpy(mine + 2, myin, MAXD * sizeof(int));
    memcpy(mine + 2 + MAXD, myout, MAXD * sizeof(int));
    MPI_Allgather(mine, 2 * MAXD + 2, MPI_INT, all, 2 * MAXD + 2, MPI_INT, c);
    for (int r = 0; r < n; r++) {
        t->indeg[r] = all[r][0];
        t->outdeg[r] = all[r][1];
        memcpy(t->in[r], all[r] + 2, MAXD * sizeof(int));
        memcpy(t->out[r], all[r] + 2 + MAXD, MAXD * sizeof(int));
    }
}

/* The out-block of the source of my receive slot i that lands there: -1 for
 * MPI_PROC_NULL. */
static int pair_block(const topo_t *t, int i)
{
    int s = t->in[me][i];
    if (s == MPI_PROC_NULL)
        return -1;
    if (t->cart)
        return i ^ 1;
    int k = 0;
    for (int x = 0; x < i; x++)
        k += t->in[me][x] == s;
    for (int j = 0; j < t->outdeg[s]; j++)
        if (t->out[s][j] == me && k-- == 0)
            return j;
    CHECK(0);
    return -1;
}

/* Element e of out-block j at rank r, generation g. */
static int val(int g, int r, int j, int e)
{
    return g * 1000000 + r * 10000 + j * 100 + e % 100;
}

/* Element count of the blocks on the edge from s to d (its j-th out-block) in the v
 * forms: both ends compute the same. */
static int vcount(int s, int j, int base)
{
    return base + (s + j) % 3;
}

static void fill(int *sb, int g, int outdeg, int cnt, int alltoall)
{
    for (int j = 0; j < (alltoall ? outdeg : 1); j++)
        for (int e = 0; e < cnt; e++)
            sb[j * cnt + e] = val(g, me, alltoall ? j : 0, e);
}

/* Checks receive block i (cnt elements at rb) for generation g. */
static void check_block(const topo_t *t, const int *rb, int i, int cnt, int g, int alltoall)
{
    int j = pair_block(t, i), s = t->in[me][i];
    for (int e = 0; e < cnt; e++) {
        int want = j < 0 ? -7 : val(g, s, alltoall ? j : 0, e);
        if (rb[e] != want) {
            fprintf(stderr, "rank %d slot %d (from %d, block %d) elt %d: %d, want %d\n", me, i, s,
                    j, e, rb[e], want);
            CHECK(0);
        }
    }
}

static void uniform(MPI_Comm c, const topo_t *t, int cnt)
{
    int od = t->outdeg[me], id = t->indeg[me];
    int *sb = malloc(((size_t)od + 1) * (size_t)cnt * sizeof(int) + 4);
    int *rb = malloc(((size_t)id + 1) * (size_t)cnt * sizeof(int) + 4);
    size_t rbytes = (size_t)id * (size_t)cnt * sizeof(int);
    for (int alltoall = 0; alltoall < 2; alltoall++) {
        int (*blk)(const void *, int, MPI_Datatype, void *, int, MPI_Datatype, MPI_Comm) =
            alltoall ? MPI_Neighbor_alltoall : MPI_Neighbor_allgather;
        /* blocking, three times with new data (the cached schedule) */
        for (int g = 0; g < 3; g++) {
            fill(sb, g, od, cnt, alltoall);
            for (size_t x = 0; x < rbytes / sizeof(int); x++)
                rb[x] = -7;
            CHECK_RC(blk(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c), MPI_SUCCESS);
            for (int i = 0; i < id; i++)
                check_block(t, rb + i * cnt, i, cnt, g, alltoall);
        }
        /* nonblocking */
        MPI_Request rq;
        fill(sb, 5, od, cnt, alltoall);
        for (size_t x = 0; x < rbytes / sizeof(int); x++)
            rb[x] = -7;
        if (alltoall)
            CHECK_RC(MPI_Ineighbor_alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c, &rq),
                     MPI_SUCCESS);
        else
            CHECK_RC(MPI_Ineighbor_allgather(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c, &rq),
                     MPI_SUCCESS);
        CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        for (int i = 0; i < id; i++)
            check_block(t, rb + i * cnt, i, cnt, 5, alltoall);
        /* persistent, started twice; _c form */
        if (alltoall)
            CHECK_RC(MPI_Neighbor_alltoall_init_c(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c,
                                                  MPI_INFO_NULL, &rq),
                     MPI_SUCCESS);
        else
            CHECK_RC(MPI_Neighbor_allgather_init(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c,
                                                 MPI_INFO_NULL, &rq),
                     MPI_SUCCESS);
        for (int g = 6; g < 8; g++) {
            fill(sb, g, od, cnt, alltoall);
            for (size_t x = 0; x < rbytes / sizeof(int); x++)
                rb[x] = -7;
            CHECK_RC(MPI_Start(&rq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            for (int i = 0; i < id; i++)
                check_block(t, rb + i * cnt, i, cnt, g, alltoall);
        }
        MPI_Request_free(&rq);
        /* the _c blocking form */
        fill(sb, 8, od, cnt, alltoall);
        if (alltoall)
            CHECK_RC(MPI_Neighbor_alltoall_c(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c), MPI_SUCCESS);
        else
            CHECK_RC(MPI_Neighbor_allgather_c(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c), MPI_SUCCESS);
        for (int i = 0; i < id; i++)
            check_block(t, rb + i * cnt, i, cnt, 8, alltoall);
    }
    free(sb);
    free(rb);
}

/* calls blocking calls back to back, each with new data and checked, no synchronisation
 * in between: with the largest blocks of the group mailboxes (32 KiB allgather blocks,
 * 16 KiB alltoall blocks) a call sends a peer a quarter of its edge's cells, so writers
 * run ahead into their readers' acknowledgements within a few calls (readers take a
 * peer's messages out of order; coll_impl.h, coll_freed). */
static void burst(MPI_Comm c, const topo_t *t, int cnt, int calls)
{
    int od = t->outdeg[me], id = t->indeg[me];
    int *sb = malloc(((size_t)od + 1) * (size_t)cnt * sizeof(int));
    int *rb = malloc(((size_t)id + 1) * (size_t)cnt * sizeof(int));
    CHECK(sb && rb);
    for (int alltoall = 0; alltoall < 2; alltoall++)
        for (int g = 0; g < calls; g++) {
            fill(sb, g, od, cnt, alltoall);
            for (size_t x = 0; x < (size_t)id * (size_t)cnt; x++)
                rb[x] = -7;
            if (alltoall)
                CHECK_RC(MPI_Neighbor_alltoall(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c), MPI_SUCCESS);
            else
                CHECK_RC(MPI_Neighbor_allgather(sb, cnt, MPI_INT, rb, cnt, MPI_INT, c),
                         MPI_SUCCESS);
            for (int i = 0; i < id; i++)
                check_block(t, rb + i * cnt, i, cnt, g, alltoall);
        }
    free(sb);
    free(rb);
}

/* The v and w forms: block sizes per edge (vcount), receive blocks laid out backwards
 * with a gap of 2 elements. */
static void vforms(MPI_Comm c, const topo_t *t, int base)
{
    int od = t->outdeg[me], id = t->indeg[me], max = base + 3;
    int *sb = malloc(((size_t)od + 1) * (size_t)max * sizeof(int));
    int *rb = malloc(((size_t)id + 1) * (size_t)(max + 2) * sizeof(int));
    int sc[MAXD], sd[MAXD], rc[MAXD], rd[MAXD];
    MPI_Aint sdb[MAXD], rdb[MAXD];
    MPI_Count scc[MAXD], rcc[MAXD];
    MPI_Datatype st[MAXD], rt[MAXD];
    for (int j = 0; j < od; j++) {
        int d = t->out[me][j];
        sc[j] = d == MPI_PROC_NULL ? 0 : vcount(me, j, base);
        sd[j] = j * max;
        sdb[j] = (MPI_Aint)sd[j] * (MPI_Aint)sizeof(int);
        scc[j] = sc[j];
        st[j] = MPI_INT;
    }
    for (int i = 0; i < id; i++) {
        int j = pair_block(t, i);
        rc[i] = j < 0 ? 0 : vcount(t->in[me][i], j, base);
        rd[i] = (id - 1 - i) * (max + 2);
        rdb[i] = (MPI_Aint)rd[i] * (MPI_Aint)sizeof(int);
        rcc[i] = rc[i];
        rt[i] = MPI_INT;
    }
    for (int form = 0; form < 6; form++) {
        int g = 20 + form;
        for (int j = 0; j < od; j++)
            for (int e = 0; e < max; e++)
                sb[j * max + e] = val(g, me, j, e);
        for (int x = 0; x < (id + 1) * (max + 2); x++)
            rb[x] = -7;
        MPI_Request rq;
        switch (form) {
        case 0:
            CHECK_RC(MPI_Neighbor_alltoallv(sb, sc, sd, MPI_INT, rb, rc, rd, MPI_INT, c),
                     MPI_SUCCESS);
            break;
        case 1: {
            MPI_Aint sdc[MAXD], rdc[MAXD];
            for (int j = 0; j < od; j++)
                sdc[j] = sd[j];
            for (int i = 0; i < id; i++)
                rdc[i] = rd[i];
            CHECK_RC(MPI_Neighbor_alltoallv_init_c(sb, scc, sdc, MPI_INT, rb, rcc, rdc, MPI_INT, c,
                                                   MPI_INFO_NULL, &rq),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Start(&rq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            MPI_Request_free(&rq);
            break;
        }
        case 2:
            CHECK_RC(MPI_Neighbor_alltoallw(sb, sc, sdb, st, rb, rc, rdb, rt, c), MPI_SUCCESS);
            break;
        case 3:
            CHECK_RC(MPI_Ineighbor_alltoallw_c(sb, scc, sdb, st, rb, rcc, rdb, rt, c, &rq),
                     MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            break;
        default: {
            /* allgatherv: every out-neighbour gets block 0 (base elements of it); the
             * receive blocks are all base elements long */
            int ac[MAXD];
            MPI_Count acc[MAXD];
            for (int i = 0; i < id; i++) {
                ac[i] = t->in[me][i] == MPI_PROC_NULL ? 0 : base;
                acc[i] = ac[i];
            }
            if (form == 4) {
                CHECK_RC(MPI_Neighbor_allgatherv(sb, base, MPI_INT, rb, ac, rd, MPI_INT, c),
                         MPI_SUCCESS);
            } else {
                MPI_Aint adc[MAXD];
                for (int i = 0; i < id; i++)
                    adc[i] = rd[i];
                CHECK_RC(
                    MPI_Ineighbor_allgatherv_c(sb, base, MPI_INT, rb, acc, adc, MPI_INT, c, &rq),
                    MPI_SUCCESS);
                CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
            }
            for (int i = 0; i < id; i++) {
                int s = t->in[me][i];
                for (int e = 0; e < ac[i]; e++)
                    CHECK(rb[rd[i] + e] == val(g, s, 0, e));
                CHECK(rb[rd[i] + ac[i]] == -7);
            }
            continue;
        }
        }
        for (int i = 0; i < id; i++) {
            int j = pair_block(t, i), s = t->in[me][i];
            for (int e = 0; e < rc[i]; e++) {
                if (rb[rd[i] + e] != val(g, s, j, e)) {
                    fprintf(stderr, "v form %d rank %d slot %d elt %d: %d want %d\n", form, me, i,
                            e, rb[rd[i] + e], val(g, s, j, e));
                    CHECK(0);
                }
            }
            CHECK(rb[rd[i] + rc[i]] == -7); /* nothing past the block */
        }
    }
    free(sb);
    free(rb);
}

/* Non-contiguous blocks (a vector of 2 ints, stride 3) on one side, plain ints on the
 * other, blocking (on a Cartesian communicator: the mailbox path, packed) and
 * nonblocking. */
static void noncontig(MPI_Comm c, const topo_t *t)
{
    MPI_Datatype vec;
    MPI_Type_vector(2, 1, 3, MPI_INT, &vec);
    MPI_Type_commit(&vec);
    int od = t->outdeg[me], id = t->indeg[me];
    int sb[MAXD * 4], rb[MAXD * 4], cnt = 2;
    for (int round = 0; round < 4; round++) {
        int g = 40 + round, send_vec = round % 2;
        /* vector layout: element e of block j at j*6 + 3e (extent of vec: 4 ints) */
        for (int x = 0; x < MAXD * 4; x++)
            sb[x] = rb[x] = -7;
        for (int j = 0; j < od; j++)
            for (int e = 0; e < cnt; e++)
                sb[send_vec ? j * 4 + 3 * e : j * cnt + e] = val(g, me, j, e);
        MPI_Datatype stype = send_vec ? vec : MPI_INT, rtype = send_vec ? MPI_INT : vec;
        int scnt = send_vec ? 1 : cnt, rcnt = send_vec ? cnt : 1;
        if (round < 2) {
            CHECK_RC(MPI_Neighbor_alltoall(sb, scnt, stype, rb, rcnt, rtype, c), MPI_SUCCESS);
        } else {
            MPI_Request rq;
            CHECK_RC(MPI_Ineighbor_alltoall(sb, scnt, stype, rb, rcnt, rtype, c, &rq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        }
        for (int i = 0; i < id; i++) {
            int j = pair_block(t, i), s = t->in[me][i];
            for (int e = 0; e < cnt; e++) {
                int got = rb[send_vec ? i * cnt + e : i * 4 + 3 * e];
                CHECK(got == (j < 0 ? -7 : val(g, s, j, e)));
            }
            if (!send_vec)
                CHECK(rb[i * 4 + 1] == -7 && rb[i * 4 + 2] == -7); /* the gaps untouched */
        }
    }
    MPI_Type_free(&vec);
}

/* Allgather into a strided receive type (every other int: the mailbox path's unpack and
 * the point-to-point path's typed receive, each with a repeated peer's block copied into
 * its other blocks), cnt elements a block; blocking, then persistent; the gaps between
 * the elements and the blocks from MPI_PROC_NULL stay untouched. */
static void strided_allgather(MPI_Comm c, const topo_t *t, int cnt)
{
    MPI_Datatype vec, every_other;
    MPI_Type_vector(cnt, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, (MPI_Aint)(2 * cnt) * (MPI_Aint)sizeof(int), &every_other);
    MPI_Type_commit(&every_other);
    int id = t->indeg[me];
    size_t rn = ((size_t)id + 1) * 2 * (size_t)cnt;
    int *sb = malloc((size_t)cnt * sizeof(int)), *rb = malloc(rn * sizeof(int));
    MPI_Request rq;
    CHECK_RC(
        MPI_Neighbor_allgather_init(sb, cnt, MPI_INT, rb, 1, every_other, c, MPI_INFO_NULL, &rq),
        MPI_SUCCESS);
    for (int g = 60; g < 63; g++) {
        for (int e = 0; e < cnt; e++)
            sb[e] = val(g, me, 0, e);
        for (size_t x = 0; x < rn; x++)
            rb[x] = -7;
        if (g < 62) {
            CHECK_RC(MPI_Neighbor_allgather(sb, cnt, MPI_INT, rb, 1, every_other, c), MPI_SUCCESS);
        } else {
            CHECK_RC(MPI_Start(&rq), MPI_SUCCESS);
            CHECK_RC(MPI_Wait(&rq, MPI_STATUS_IGNORE), MPI_SUCCESS);
        }
        for (int i = 0; i < id; i++) {
            int s = t->in[me][i];
            for (int e = 0; e < cnt; e++) {
                size_t at = (size_t)i * 2 * (size_t)cnt + 2 * (size_t)e;
                CHECK(rb[at] == (s == MPI_PROC_NULL ? -7 : val(g, s, 0, e)));
                CHECK(rb[at + 1] == -7);
            }
        }
    }
    MPI_Request_free(&rq);
    MPI_Type_free(&vec);
    MPI_Type_free(&every_other);
    free(sb);
    free(rb);
}

static void all_forms(MPI_Comm c)
{
    topo_t t;
    topo_learn(c, &t);
    /* On Cartesian grids whose edges the group mailboxes carry: 2000 ints, one mailbox
     * message a block; 2073 (8292 bytes), two pieces, the second on the tiny channel;
     * 4096 (16 KiB), the largest alltoall block there, two pieces; 8000, four pieces, the
     * last one shorter; 8192 (32 KiB), the largest allgather block there, four pieces.
     * 16384 and 20000: above them, point-to-point rendezvous. Everywhere a repeated
     * peer's allgather block moves once and is copied (coll_neighbor.c); a repeated
     * peer's alltoall blocks travel as one message up to one piece: 1 and 3 ints, and
     * 1024 (4 KiB: two blocks fill the piece exactly). */
    int counts[] = {1, 3, 0, 1024, 2000, 2073, 4096, 8000, 8192, 16384, 20000};
    for (size_t k = 0; k < sizeof counts / sizeof counts[0]; k++)
        uniform(c, &t, counts[k]);
    burst(c, &t, 4096, 300);
    burst(c, &t, 8192, 300);
    burst(c, &t, 2073, 60);
    burst(c, &t, 16, 300); /* merged alltoall messages back to back */
    vforms(c, &t, 2);
    vforms(c, &t, 700);
    noncontig(c, &t);
    strided_allgather(c, &t, 3);
    strided_allgather(c, &t, 8000);
    strided_allgather(c, &t, 20000);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
    CHECK(n <= MAXD);

    MPI_Comm c;
    /* periodic 2-D grid */
    int d2[2] = {0, 0}, p2[2] = {1, 1};
    MPI_Dims_create(n, 2, d2);
    MPI_Cart_create(MPI_COMM_WORLD, 2, d2, p2, 0, &c);
    all_forms(c);
    MPI_Comm_free(&c);
    /* periodic ring of n (1: itself on both sides; 2: the peer on both sides) */
    int d1 = n, p1 = 1;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &c);
    all_forms(c);
    MPI_Comm_free(&c);
    /* non-periodic line: MPI_PROC_NULL at the ends */
    p1 = 0;
    MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &c);
    all_forms(c);
    MPI_Comm_free(&c);
    /* graph: ring plus a self-loop (n = 2: the peer twice, n = 1: itself three times) */
    {
        int index[MAXD], edges[4 * MAXD], e = 0;
        for (int v = 0; v < n; v++) {
            edges[e++] = (v + 1) % n;
            edges[e++] = v;
            edges[e++] = (v + n - 1) % n;
            index[v] = e;
        }
        MPI_Graph_create(MPI_COMM_WORLD, n, index, edges, 0, &c);
        all_forms(c);
        MPI_Comm_free(&c);
    }
    /* distributed graph: me -> me+1 twice, me -> me+2, me -> me; rank n-1 sends to no
     * one when n > 2 (in- and out-degrees differ) */
    {
        int out[4], in[8], od = 0, id = 0;
        int silent = n > 2 ? n - 1 : -1;
        if (me != silent) {
            out[od++] = (me + 1) % n;
            out[od++] = me;
            out[od++] = (me + 2) % n;
            out[od++] = (me + 1) % n;
        }
        for (int s = 0; s < n; s++) { /* in-edges in the order of the sources' lists */
            if (s == silent)
                continue;
            int o[4] = {(s + 1) % n, s, (s + 2) % n, (s + 1) % n};
            for (int k = 0; k < 4; k++)
                if (o[k] == me)
                    in[id++] = s;
        }
        CHECK_RC(MPI_Dist_graph_create_adjacent(MPI_COMM_WORLD, id, in, MPI_UNWEIGHTED, od, out,
                                                MPI_UNWEIGHTED, MPI_INFO_NULL, 0, &c),
                 MPI_SUCCESS);
        all_forms(c);
        MPI_Comm_free(&c);
    }

    /* errors */
    {
        int x[4] = {0}, y[4 * MAXD];
        MPI_Request rq;
        CHECK(eclass(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD)) ==
              MPI_ERR_TOPOLOGY);
        CHECK(eclass(MPI_Ineighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD, &rq)) ==
              MPI_ERR_TOPOLOGY);
        CHECK(eclass(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_NULL)) ==
              MPI_ERR_COMM);
        int dd = n, pp = 1;
        MPI_Cart_create(MPI_COMM_WORLD, 1, &dd, &pp, 0, &c);
        MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
        CHECK(eclass(MPI_Neighbor_allgather(MPI_IN_PLACE, 1, MPI_INT, y, 1, MPI_INT, c)) ==
              MPI_ERR_BUFFER);
        CHECK(eclass(MPI_Neighbor_alltoall(x, -1, MPI_INT, y, 1, MPI_INT, c)) == MPI_ERR_COUNT);
        CHECK(eclass(MPI_Neighbor_alltoall(x, 1, MPI_DATATYPE_NULL, y, 1, MPI_INT, c)) ==
              MPI_ERR_TYPE);
        MPI_Datatype unc;
        MPI_Type_contiguous(2, MPI_INT, &unc);
        CHECK(eclass(MPI_Neighbor_allgather(x, 1, unc, y, 1, MPI_INT, c)) == MPI_ERR_TYPE);
        MPI_Type_free(&unc);
        int cnt[2] = {1, -1}, dsp[2] = {0, 1};
        CHECK(eclass(MPI_Neighbor_alltoallv(x, cnt, dsp, MPI_INT, y, cnt, dsp, MPI_INT, c)) ==
              MPI_ERR_COUNT);
        CHECK(eclass(MPI_Neighbor_allgatherv(x, 1, MPI_INT, y, NULL, dsp, MPI_INT, c)) ==
              MPI_ERR_ARG);
        /* the call still works after the errors */
        for (int k = 0; k < 2; k++)
            x[k] = me * 10 + k;
        CHECK_RC(MPI_Neighbor_alltoall(x, 1, MPI_INT, y, 1, MPI_INT, c), MPI_SUCCESS);
        CHECK(y[0] == ((me + n - 1) % n) * 10 + 1 && y[1] == ((me + 1) % n) * 10 + 0);
        MPI_Comm_free(&c);
        if (n >= 2) {
            MPI_Comm half, inter;
            MPI_Comm_split(MPI_COMM_WORLD, me % 2, me, &half);
            MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, me % 2 ? 0 : 1, 5, &inter);
            MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
            CHECK(eclass(MPI_Neighbor_allgather(x, 1, MPI_INT, y, 1, MPI_INT, inter)) ==
                  MPI_ERR_COMM);
            MPI_Comm_free(&inter);
            MPI_Comm_free(&half);
        }
    }
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_topo_neighbor: ok\n");
    return 0;
}
