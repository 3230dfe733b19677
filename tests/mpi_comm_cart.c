/* mpi_comm_cart: Dims_create, Cart_create/get/coords/rank/shift/sub/map, Topo_test,
 * Cartdim_get, topology kept by Comm_dup, and the error classes. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void dims(int nn, int nd, const int *in, const int *want)
{
    int d[8];
    memcpy(d, in, (size_t)nd * sizeof *d);
    CHECK_RC(MPI_Dims_create(nn, nd, d), MPI_SUCCESS);
    for (int i = 0; i < nd; i++)
        CHECK(d[i] == want[i]);
}

int main(int argc, char **argv)
{
    int n, me;
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    /* Dims_create: balanced, non-increasing, fixed entries respected */
    dims(6, 2, (int[]){0, 0}, (int[]){3, 2});
    dims(7, 2, (int[]){0, 0}, (int[]){7, 1});
    dims(12, 2, (int[]){0, 0}, (int[]){4, 3});
    dims(24, 3, (int[]){0, 0, 0}, (int[]){4, 3, 2});
    dims(36, 2, (int[]){0, 0}, (int[]){6, 6});
    dims(16, 4, (int[]){0, 0, 0, 0}, (int[]){2, 2, 2, 2});
    dims(12, 3, (int[]){0, 3, 0}, (int[]){2, 3, 2});
    dims(1, 3, (int[]){0, 0, 0}, (int[]){1, 1, 1});
    dims(8, 2, (int[]){2, 4}, (int[]){2, 4});
    /* the most balanced, not the greedy prime assignment (12 x 6, 18 x 8 x 17...) */
    dims(72, 2, (int[]){0, 0}, (int[]){9, 8});
    dims(1224, 3, (int[]){0, 0, 0}, (int[]){17, 9, 8});
    dims(2400, 3, (int[]){0, 0, 0}, (int[]){16, 15, 10});
    dims(360, 3, (int[]){0, 0, 0}, (int[]){10, 6, 6}); /* tie with 9 x 8 x 5: larger smallest */
    {
        int d[2] = {5, 0};
        CHECK(eclass(MPI_Dims_create(12, 2, d)) == MPI_ERR_DIMS);
        int e[2] = {-1, 0};
        CHECK(eclass(MPI_Dims_create(4, 2, e)) == MPI_ERR_DIMS);
        CHECK(eclass(MPI_Dims_create(4, -1, e)) == MPI_ERR_DIMS);
    }

    int st;
    CHECK_RC(MPI_Topo_test(MPI_COMM_WORLD, &st), MPI_SUCCESS);
    CHECK(st == MPI_UNDEFINED);

    /* 2-D grid over all ranks, periodic in dimension 1 only */
    int d[2] = {0, 0}, per[2] = {0, 1};
    MPI_Dims_create(n, 2, d);
    MPI_Comm cart;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 2, d, per, 1, &cart), MPI_SUCCESS);
    CHECK_RC(MPI_Topo_test(cart, &st), MPI_SUCCESS);
    CHECK(st == MPI_CART);
    int nd, gd[2], gp[2], gc[2], r;
    CHECK_RC(MPI_Cartdim_get(cart, &nd), MPI_SUCCESS);
    CHECK(nd == 2);
    CHECK_RC(MPI_Cart_get(cart, 2, gd, gp, gc), MPI_SUCCESS);
    CHECK(gd[0] == d[0] && gd[1] == d[1] && gp[0] == 0 && gp[1] == 1);
    CHECK(gc[0] == me / d[1] && gc[1] == me % d[1]); /* row-major */
    for (int i = 0; i < n; i++) {
        int c[2];
        CHECK_RC(MPI_Cart_coords(cart, i, 2, c), MPI_SUCCESS);
        CHECK(c[0] == i / d[1] && c[1] == i % d[1]);
        CHECK_RC(MPI_Cart_rank(cart, c, &r), MPI_SUCCESS);
        CHECK(r == i);
    }
    {
        int c[2] = {0, -1}; /* periodic wrap */
        CHECK_RC(MPI_Cart_rank(cart, c, &r), MPI_SUCCESS);
        CHECK(r == d[1] - 1);
        c[1] = d[1] + 1;
        CHECK_RC(MPI_Cart_rank(cart, c, &r), MPI_SUCCESS);
        CHECK(r == 1 % d[1]);
        int bad[2] = {d[0], 0}; /* not periodic */
        CHECK(eclass(MPI_Cart_rank(cart, bad, &r)) == MPI_ERR_ARG);
    }
    int src, dst;
    MPI_Status stt;
    CHECK_RC(MPI_Cart_shift(cart, 0, 1, &src, &dst), MPI_SUCCESS);
    CHECK(src == (gc[0] == 0 ? MPI_PROC_NULL : me - d[1]));
    CHECK(dst == (gc[0] == d[0] - 1 ? MPI_PROC_NULL : me + d[1]));
    CHECK_RC(MPI_Cart_shift(cart, 1, -1, &src, &dst), MPI_SUCCESS);
    CHECK(src == gc[0] * d[1] + (gc[1] + 1) % d[1]);
    CHECK(dst == gc[0] * d[1] + (gc[1] - 1 + d[1]) % d[1]);
    CHECK_RC(MPI_Cart_shift(cart, 1, 2 * d[1], &src, &dst), MPI_SUCCESS);
    CHECK(src == me && dst == me);
    CHECK(eclass(MPI_Cart_shift(cart, 2, 1, &src, &dst)) == MPI_ERR_ARG);
    CHECK(eclass(MPI_Cart_coords(cart, n, 2, gc)) == MPI_ERR_RANK);
    CHECK(eclass(MPI_Cart_shift(MPI_COMM_WORLD, 0, 1, &src, &dst)) == MPI_ERR_TOPOLOGY);
    /* shift exchange through the grid: a message along dimension 1 (periodic) */
    {
        int in = -1;
        MPI_Cart_shift(cart, 1, 1, &src, &dst);
        CHECK_RC(MPI_Sendrecv(&me, 1, MPI_INT, dst, 0, &in, 1, MPI_INT, src, 0, cart, &stt),
                 MPI_SUCCESS);
        CHECK(in == src);
    }
    /* sub: rows (keep dimension 1) */
    MPI_Comm row, dupc;
    int keep[2] = {0, 1};
    CHECK_RC(MPI_Cart_sub(cart, keep, &row), MPI_SUCCESS);
    int rs, rr;
    MPI_Comm_size(row, &rs);
    MPI_Comm_rank(row, &rr);
    CHECK(rs == d[1] && rr == gc[1]);
    CHECK_RC(MPI_Cart_get(row, 1, gd, gp, gc), MPI_SUCCESS);
    CHECK(gd[0] == d[1] && gp[0] == 1 && gc[0] == rr);
    MPI_Comm_free(&row);
    /* no dimension kept: a 0-dimensional topology of one process */
    int none[2] = {0, 0};
    CHECK_RC(MPI_Cart_sub(cart, none, &row), MPI_SUCCESS);
    MPI_Comm_size(row, &rs);
    CHECK(rs == 1);
    CHECK_RC(MPI_Cartdim_get(row, &nd), MPI_SUCCESS);
    CHECK(nd == 0);
    MPI_Comm_free(&row);
    /* dup keeps the topology */
    CHECK_RC(MPI_Comm_dup(cart, &dupc), MPI_SUCCESS);
    CHECK_RC(MPI_Topo_test(dupc, &st), MPI_SUCCESS);
    CHECK(st == MPI_CART);
    MPI_Comm_free(&dupc);
    MPI_Comm_free(&cart);

    /* a smaller grid: the ranks beyond it get MPI_COMM_NULL */
    int d1 = n > 1 ? n - 1 : 1, p1 = 0;
    CHECK_RC(MPI_Cart_create(MPI_COMM_WORLD, 1, &d1, &p1, 0, &cart), MPI_SUCCESS);
    CHECK((me < d1) == (cart != MPI_COMM_NULL));
    CHECK_RC(MPI_Cart_map(MPI_COMM_WORLD, 1, &d1, &p1, &r), MPI_SUCCESS);
    CHECK(r == (me < d1 ? me : MPI_UNDEFINED));
    if (cart != MPI_COMM_NULL) {
        CHECK_RC(MPI_Cart_shift(cart, 0, 1, &src, &dst), MPI_SUCCESS);
        CHECK(dst == (me == d1 - 1 ? MPI_PROC_NULL : me + 1));
        MPI_Comm_free(&cart);
    }
    int big = n + 1;
    CHECK(eclass(MPI_Cart_create(MPI_COMM_WORLD, 1, &big, &p1, 0, &cart)) == MPI_ERR_TOPOLOGY);
    int zero = 0;
    CHECK(eclass(MPI_Cart_create(MPI_COMM_WORLD, 1, &zero, &p1, 0, &cart)) == MPI_ERR_DIMS);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    return 0;
}
