/* topo.c — Cartesian process topologies (MPI-4.0 chapter 8): Dims_create and the
 * Cart_* functions. Ranks are laid out in row-major order (the last dimension varies
 * fastest); Cart_create and Cart_map never reorder (the standard allows the identity).
 * Graph and distributed-graph topologies are not part of this issue: their functions
 * are not defined. */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

struct mpii_topo {
    int kind;  /* MPI_CART */
    int ndims; /* may be 0 */
    int *dims;
    int *periods;
};

static struct mpii_topo *topo_new(int ndims)
{
    struct mpii_topo *t = malloc(sizeof *t + (size_t)(2 * ndims + 1) * sizeof(int));
    if (!t)
        return NULL;
    t->kind = MPI_CART;
    t->ndims = ndims;
    t->dims = (int *)(t + 1);
    t->periods = t->dims + ndims;
    return t;
}

struct mpii_topo *mpii_topo_dup(const struct mpii_topo *t)
{
    if (!t)
        return NULL;
    struct mpii_topo *n = topo_new(t->ndims);
    if (!n)
        return NULL;
    n->kind = t->kind;
    memcpy(n->dims, t->dims, (size_t)t->ndims * sizeof(int));
    memcpy(n->periods, t->periods, (size_t)t->ndims * sizeof(int));
    return n;
}

void mpii_topo_free(struct mpii_topo *t)
{
    free(t);
}

/* Coordinates of rank in t (row-major). */
static void cart_coords(const struct mpii_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Checks ndims/dims of a Cart_create/Cart_map call; *nnodes gets their product. */
static int check_dims(int ndims, const int dims[], const int periods[], int size, int *nnodes)
{
    if (ndims < 0)
        return MPI_ERR_DIMS;
    if (ndims > 0 && (!dims || !periods))
        return MPI_ERR_ARG;
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return MPI_ERR_DIMS;
        n *= dims[i];
        if (n > size)
            return MPI_ERR_TOPOLOGY;
    }
    *nnodes = (int)n;
    return MPI_SUCCESS;
}

#define GET_INTRA(c, comm, fn)                                                                     \
    MPII_CHECK_INIT(fn);                                                                           \
    mpii_comm_t *c = mpii_comm_get(comm);                                                          \
    if (!c)                                                                                        \
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, fn);                                              \
    if (c->rgroup)                                                                                 \
    return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_COMM, fn, "intercommunicator")

#define GET_CART(c, comm, fn)                                                                      \
    GET_INTRA(c, comm, fn);                                                                        \
    if (!c->topo || c->topo->kind != MPI_CART)                                                     \
    return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_TOPOLOGY, fn, "no Cartesian topology")

/* Creates the communicator of the first nnodes ranks of p (in order) with a Cartesian
 * topology; *out NULL for the others. Collective over p. */
static int cart_make(mpii_comm_t *p, int nnodes, int ndims, const int dims[], const int periods[],
                     mpii_comm_t **out)
{
    struct mpii_topo *t = topo_new(ndims);
    if (!t)
        return MPI_ERR_NO_MEM; /* (the peers would wait: out of memory is fatal anyway) */
    for (int i = 0; i < ndims; i++) {
        t->dims[i] = dims[i];
        t->periods[i] = periods[i] != 0;
    }
    int rc = mpii_comm_split_intra(p, p->rank < nnodes ? 0 : MPI_UNDEFINED, p->rank, out);
    if (rc != MPI_SUCCESS || !*out) {
        free(t);
        return rc;
    }
    (*out)->topo = t;
    return MPI_SUCCESS;
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    (void)reorder;
    if (comm_cart)
        *comm_cart = MPI_COMM_NULL; /* what a failed call leaves */
    GET_INTRA(p, comm_old, fn);
    if (!comm_cart)
        return MPII_ERR_COMM(comm_old, MPI_ERR_ARG, fn);
    int nnodes, rc = check_dims(ndims, dims, periods, p->size, &nnodes);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm_old, rc, fn);
    mpii_comm_t *c;
    rc = cart_make(p, nnodes, ndims, dims, periods, &c);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm_old, rc, fn);
    *comm_cart = c ? c->handle : MPI_COMM_NULL;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_create, PMPI_Cart_create)

int PMPI_Cart_map(MPI_Comm comm, int ndims, const int dims[], const int periods[], int *newrank)
{
    static const char fn[] = "MPI_Cart_map";
    GET_INTRA(p, comm, fn);
    if (!newrank)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fn);
    int nnodes, rc = check_dims(ndims, dims, periods, p->size, &nnodes);
    if (rc != MPI_SUCCESS)
        return MPII_ERR_COMM(comm, rc, fn);
    *newrank = p->rank < nnodes ? p->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_map, PMPI_Cart_map)

static int cmp_desc(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x < y) - (x > y);
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    MPII_CHECK_INIT(fn);
    if (nnodes <= 0)
        return mpii_errf(0, 0, MPI_ERR_ARG, fn, "nnodes %d is not positive", nnodes);
    if (ndims < 0)
        return MPII_ERR(MPI_ERR_DIMS, fn);
    if (ndims > 0 && !dims)
        return MPII_ERR(MPI_ERR_ARG, fn);
    int rest = nnodes, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPII_ERR(MPI_ERR_DIMS, fn);
        if (dims[i] == 0) {
            nfree++;
        } else {
            if (rest % dims[i] != 0)
                return mpii_errf(0, 0, MPI_ERR_DIMS, fn,
                                 "nnodes %d is not a multiple of the fixed dimensions", nnodes);
            rest /= dims[i];
        }
    }
    if (nfree == 0) {
        if (rest != 1)
            return mpii_errf(0, 0, MPI_ERR_DIMS, fn, "the dimensions' product is not nnodes %d",
                             nnodes);
        return MPI_SUCCESS;
    }
    int *f = malloc((size_t)nfree * sizeof *f);
    int primes[32], np = 0;
    if (!f)
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    for (int i = 0; i < nfree; i++)
        f[i] = 1;
    for (int d = 2; (long)d * d <= rest; d++)
        while (rest % d == 0) {
            primes[np++] = d;
            rest /= d;
        }
    if (rest > 1)
        primes[np++] = rest;
    /* largest prime first, each onto the smallest free dimension so far */
    for (int k = np - 1; k >= 0; k--) {
        int m = 0;
        for (int i = 1; i < nfree; i++)
            if (f[i] < f[m])
                m = i;
        f[m] *= primes[k];
    }
    qsort(f, (size_t)nfree, sizeof *f, cmp_desc);
    for (int i = 0, k = 0; i < ndims; i++)
        if (dims[i] == 0)
            dims[i] = f[k++];
    free(f);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Dims_create, PMPI_Dims_create)

int PMPI_Topo_test(MPI_Comm comm, int *status)
{
    MPII_CHECK_INIT("MPI_Topo_test");
    mpii_comm_t *c = mpii_comm_get(comm);
    if (!c)
        return MPII_ERR_COMM(comm, MPI_ERR_COMM, "MPI_Topo_test");
    if (!status)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Topo_test");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Topo_test, PMPI_Topo_test)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    GET_CART(c, comm, "MPI_Cartdim_get");
    if (!ndims)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Cartdim_get");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cartdim_get, PMPI_Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    GET_CART(c, comm, "MPI_Cart_get");
    const struct mpii_topo *t = c->topo;
    if (maxdims < 0 || (maxdims > 0 && (!dims || !periods || !coords)))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Cart_get");
    int n = BASE_MIN(maxdims, t->ndims);
    int *co = malloc((size_t)(t->ndims + 1) * sizeof *co);
    if (!co)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, "MPI_Cart_get");
    cart_coords(t, c->rank, co);
    for (int i = 0; i < n; i++) {
        dims[i] = t->dims[i];
        periods[i] = t->periods[i];
        coords[i] = co[i];
    }
    free(co);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_get, PMPI_Cart_get)

int PMPI_Cart_rank(MPI_Comm comm, const int coords[], int *rank)
{
    GET_CART(c, comm, "MPI_Cart_rank");
    const struct mpii_topo *t = c->topo;
    if (!rank || (t->ndims > 0 && !coords))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Cart_rank");
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, "MPI_Cart_rank",
                                 "coordinate %d of dimension %d is out of range", x, i);
            x %= d;
            if (x < 0)
                x += d;
        }
        r = r * d + x;
    }
    *rank = r;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_rank, PMPI_Cart_rank)

int PMPI_Cart_coords(MPI_Comm comm, int rank, int maxdims, int coords[])
{
    GET_CART(c, comm, "MPI_Cart_coords");
    const struct mpii_topo *t = c->topo;
    if (rank < 0 || rank >= c->size)
        return MPII_ERR_COMM(comm, MPI_ERR_RANK, "MPI_Cart_coords");
    if (maxdims < t->ndims || (t->ndims > 0 && !coords))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Cart_coords");
    cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_coords, PMPI_Cart_coords)

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    GET_CART(c, comm, "MPI_Cart_shift");
    const struct mpii_topo *t = c->topo;
    if (!rank_source || !rank_dest)
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, "MPI_Cart_shift");
    if (direction < 0 || direction >= t->ndims)
        return mpii_errf(FMPL_MPI_KIND_COMM, comm, MPI_ERR_ARG, "MPI_Cart_shift",
                         "direction %d not in 0..%d", direction, t->ndims - 1);
    int *co = malloc((size_t)t->ndims * sizeof *co);
    if (!co)
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, "MPI_Cart_shift");
    cart_coords(t, c->rank, co);
    int d = t->dims[direction], x = co[direction];
    /* stride of this dimension in row-major order */
    int stride = 1;
    for (int i = direction + 1; i < t->ndims; i++)
        stride *= t->dims[i];
    free(co);
    int base = c->rank - x * stride;
    for (int s = 0; s < 2; s++) {
        long y = (long)x + (s ? disp : -(long)disp);
        int r;
        if (y < 0 || y >= d) {
            if (t->periods[direction]) {
                y %= d;
                if (y < 0)
                    y += d;
                r = base + (int)y * stride;
            } else {
                r = MPI_PROC_NULL;
            }
        } else {
            r = base + (int)y * stride;
        }
        *(s ? rank_dest : rank_source) = r;
    }
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_shift, PMPI_Cart_shift)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    GET_CART(c, comm, fn);
    const struct mpii_topo *t = c->topo;
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return MPII_ERR_COMM(comm, MPI_ERR_ARG, fn);
    int *co = malloc((size_t)(t->ndims + 1) * sizeof *co);
    struct mpii_topo *nt = topo_new(t->ndims);
    if (!co || !nt) {
        free(co);
        free(nt);
        return MPII_ERR_COMM(comm, MPI_ERR_NO_MEM, fn);
    }
    cart_coords(t, c->rank, co);
    int color = 0, k = 0;
    for (int i = 0; i < t->ndims; i++) {
        if (remain_dims[i]) {
            nt->dims[k++] = t->dims[i];
        } else {
            color = color * t->dims[i] + co[i];
        }
    }
    nt->ndims = k;
    nt->periods = nt->dims + k;
    for (int i = 0, j = 0; i < t->ndims; i++)
        if (remain_dims[i])
            nt->periods[j++] = t->periods[i];
    free(co);
    mpii_comm_t *n;
    int rc = mpii_comm_split_intra(c, color, c->rank, &n);
    if (rc != MPI_SUCCESS) {
        free(nt);
        return MPII_ERR_COMM(comm, rc, fn);
    }
    n->topo = nt;
    *newcomm = n->handle;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_sub, PMPI_Cart_sub)
