/* topo.c — Cartesian process topologies (MPI-4.0 chapter 8): Dims_create and the
 * Cart_* functions. Ranks are laid out in row-major order (the last dimension varies
 * fastest); Cart_create and Cart_map never reorder (the standard allows the identity).
 * The topology object, shared with graph (topo_graph.c) and distributed graph
 * (topo_dist.c) topologies, is described in topo_impl.h; MPI_Topo_test is here. */
#include <stdlib.h>
#include <string.h>

#include "mpi/topo_impl.h"

struct mpii_topo *mpii_topo_new(int kind, size_t nints)
{
    size_t bytes = sizeof(struct mpii_topo) + (nints + 1) * sizeof(int);
    struct mpii_topo *t = calloc(1, bytes);
    if (!t)
        return NULL;
    t->kind = kind;
    t->bytes = bytes;
    return t;
}

static struct mpii_topo *topo_new(int ndims)
{
    struct mpii_topo *t = mpii_topo_new(MPI_CART, 2 * (size_t)ndims);
    if (!t)
        return NULL;
    t->ndims = ndims;
    t->dims = mpii_topo_ints(t);
    t->periods = t->dims + ndims;
    return t;
}

/* p, a pointer into the allocation of t, moved to the same place in copy n. */
static int *topo_rebase(const struct mpii_topo *t, struct mpii_topo *n, int *p)
{
    return p ? (int *)((char *)n + ((const char *)p - (const char *)t)) : NULL;
}

struct mpii_topo *mpii_topo_dup(const struct mpii_topo *t)
{
    if (!t)
        return NULL;
    struct mpii_topo *n = malloc(t->bytes);
    if (!n)
        return NULL;
    memcpy(n, t, t->bytes);
    int **fields[] = {&n->dims, &n->periods, &n->index, &n->edges,
                      &n->src,  &n->srcw,    &n->dst,   &n->dstw};
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        *fields[i] = topo_rebase(t, n, *fields[i]);
    n->nbrs = NULL;
    return n;
}

void mpii_topo_free(struct mpii_topo *t)
{
    if (!t)
        return;
    free(t->nbrs);
    free(t);
}

int mpii_topo_enter(MPI_Comm comm, const char *arg, int kind, const char *fn, mpii_comm_t **cp)
{
    MPII_CHECK_INIT(fn);
    mpii_comm_t *c;
    int rc = mpii_comm_arg(comm, arg, MPII_COMM_INTRA, fn, &c);
    if (!c)
        return rc ? rc : MPI_ERR_COMM;
    if (kind && (!c->topo || c->topo->kind != kind))
        return MPII_ERRF_COMM(comm, MPI_ERR_TOPOLOGY, fn, "%s %#x has no %s topology", arg,
                              (unsigned)comm,
                              kind == MPI_CART    ? "Cartesian"
                              : kind == MPI_GRAPH ? "graph"
                                                  : "distributed graph");
    *cp = c;
    return MPI_SUCCESS;
}

int mpii_topo_make(mpii_comm_t *p, int key, struct mpii_topo *t, mpii_comm_t **out)
{
    int rc = mpii_comm_split_intra(p, key == MPI_UNDEFINED ? MPI_UNDEFINED : 0, key, out);
    if (rc != MPI_SUCCESS || !*out) {
        mpii_topo_free(t);
        return rc;
    }
    (*out)->topo = t;
    return MPI_SUCCESS;
}

/* Coordinates of rank in t (row-major). */
static void cart_coords(const struct mpii_topo *t, int rank, int *coords)
{
    for (int i = t->ndims - 1; i >= 0; i--) {
        coords[i] = rank % t->dims[i];
        rank /= t->dims[i];
    }
}

/* Checks ndims/dims/periods of a Cart_create/Cart_map call on comm (argument arg, of
 * size processes): MPI_SUCCESS and *nnodes their product, or the error raised. */
static int check_dims(int ndims, const int dims[], const int periods[], MPI_Comm comm,
                      const char *arg, int size, const char *fn, int *nnodes)
{
    if (ndims < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_DIMS, fn, "ndims %d < 0", ndims);
    if (ndims > 0 && (!dims || !periods))
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, fn, "%s NULL with ndims %d",
                              dims ? "periods" : "dims", ndims);
    long n = 1;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] <= 0)
            return MPII_ERRF_COMM(comm, MPI_ERR_DIMS, fn, "dims[%d] = %d is not positive", i,
                                  dims[i]);
        n *= dims[i];
        if (n > size)
            return MPII_ERRF_COMM(comm, MPI_ERR_TOPOLOGY, fn,
                                  "dims[%d] = %d: the product %ld exceeds the %d ranks of %s", i,
                                  dims[i], n, size, arg);
    }
    *nnodes = (int)n;
    return MPI_SUCCESS;
}

#define GET_INTRA(c, comm, arg, fn)                                                                \
    mpii_comm_t *c = NULL;                                                                         \
    do {                                                                                           \
        int rc_ = mpii_topo_enter(comm, arg, 0, fn, &c);                                           \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

#define GET_CART(c, comm, fn)                                                                      \
    mpii_comm_t *c = NULL;                                                                         \
    do {                                                                                           \
        int rc_ = mpii_topo_enter(comm, "comm", MPI_CART, fn, &c);                                 \
        if (rc_)                                                                                   \
            return rc_;                                                                            \
    } while (0)

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
    return mpii_topo_make(p, p->rank < nnodes ? p->rank : MPI_UNDEFINED, t, out);
}

int PMPI_Cart_create(MPI_Comm comm_old, int ndims, const int dims[], const int periods[],
                     int reorder, MPI_Comm *comm_cart)
{
    static const char fn[] = "MPI_Cart_create";
    (void)reorder;
    if (comm_cart)
        *comm_cart = MPI_COMM_NULL; /* what a failed call leaves */
    GET_INTRA(p, comm_old, "comm_old", fn);
    if (!comm_cart)
        return MPII_ERR_NULL(comm_old, "comm_cart", fn);
    int nnodes, rc = check_dims(ndims, dims, periods, comm_old, "comm_old", p->size, fn, &nnodes);
    if (rc != MPI_SUCCESS)
        return rc;
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
    GET_INTRA(p, comm, "comm", fn);
    if (!newrank)
        return MPII_ERR_NULL(comm, "newrank", fn);
    int nnodes, rc = check_dims(ndims, dims, periods, comm, "comm", p->size, fn, &nnodes);
    if (rc != MPI_SUCCESS)
        return rc;
    *newrank = p->rank < nnodes ? p->rank : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_map, PMPI_Cart_map)

/* The most balanced factorisation of a product into k free dimensions (MPI-4.0 8.5.2:
 * "as close to each other as possible"): the non-increasing f[0..k) whose largest minus
 * smallest entry is least; among equals, the one whose smallest entry is largest, then
 * the next smallest, and so on (MPICH's choice, which its topo/dims5 test lists for
 * 75,000 cases). A search from the smallest entry up, each entry a divisor of what is
 * left and at least the previous one, pruned once an entry alone exceeds the best
 * balance. */
typedef struct dims_search {
    int k, best_bal;
    int *cur, *best; /* [k], filled from index k - 1 (the smallest) down to 0 */
} dims_search_t;

static void dims_try(dims_search_t *d, int pos, int rest, int prev)
{
    int smallest = pos == d->k - 1 ? 0 : d->cur[d->k - 1];
    if (pos == 0) { /* the largest takes what is left */
        if (rest < prev)
            return;
        d->cur[0] = rest;
        int bal = rest - (d->k == 1 ? rest : smallest);
        if (d->best_bal < 0 || bal <= d->best_bal) {
            d->best_bal = bal;
            memcpy(d->best, d->cur, (size_t)d->k * sizeof(int));
        }
        return;
    }
    for (int v = prev;; v++) {
        /* v^(pos + 1) <= rest: the entries from here on are at least v */
        long p = 1;
        for (int i = 0; i <= pos && p <= rest; i++)
            p *= v;
        if (p > rest)
            break;
        if (d->best_bal >= 0 && pos < d->k - 1 && v - smallest > d->best_bal)
            break;
        if (rest % v)
            continue;
        d->cur[pos] = v;
        dims_try(d, pos - 1, rest / v, v);
    }
}

int PMPI_Dims_create(int nnodes, int ndims, int dims[])
{
    static const char fn[] = "MPI_Dims_create";
    MPII_CHECK_INIT(fn);
    if (nnodes <= 0)
        return MPII_ERRF(MPI_ERR_ARG, fn, "nnodes %d is not positive", nnodes);
    if (ndims < 0)
        return MPII_ERRF(MPI_ERR_DIMS, fn, "ndims %d < 0", ndims);
    if (ndims > 0 && !dims)
        return MPII_ERR_NULL(MPI_COMM_NULL, "dims", fn);
    int rest = nnodes, nfree = 0;
    for (int i = 0; i < ndims; i++) {
        if (dims[i] < 0)
            return MPII_ERRF(MPI_ERR_DIMS, fn, "dims[%d] = %d < 0", i, dims[i]);
        if (dims[i] == 0) {
            nfree++;
        } else {
            if (rest % dims[i] != 0)
                return MPII_ERRF(MPI_ERR_DIMS, fn,
                                 "dims[%d] = %d: the fixed dims' product %ld does not divide "
                                 "nnodes %d",
                                 i, dims[i], (long)(nnodes / rest) * dims[i], nnodes);
            rest /= dims[i];
        }
    }
    if (nfree == 0) {
        if (rest != 1)
            return MPII_ERRF(MPI_ERR_DIMS, fn, "the product of dims, %d, is not nnodes %d",
                             nnodes / rest, nnodes);
        return MPI_SUCCESS;
    }
    int *f = malloc(2 * (size_t)nfree * sizeof *f);
    if (!f)
        return MPII_ERR(MPI_ERR_NO_MEM, fn);
    dims_search_t d = {nfree, -1, f + nfree, f};
    dims_try(&d, nfree - 1, rest, 1);
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
    mpii_comm_t *c;
    int rc = mpii_comm_arg(comm, "comm", MPII_COMM_ANY, "MPI_Topo_test", &c);
    if (!c)
        return rc;
    if (!status)
        return MPII_ERR_NULL(comm, "status", "MPI_Topo_test");
    *status = c->topo ? c->topo->kind : MPI_UNDEFINED;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Topo_test, PMPI_Topo_test)

int PMPI_Cartdim_get(MPI_Comm comm, int *ndims)
{
    GET_CART(c, comm, "MPI_Cartdim_get");
    if (!ndims)
        return MPII_ERR_NULL(comm, "ndims", "MPI_Cartdim_get");
    *ndims = c->topo->ndims;
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cartdim_get, PMPI_Cartdim_get)

int PMPI_Cart_get(MPI_Comm comm, int maxdims, int dims[], int periods[], int coords[])
{
    GET_CART(c, comm, "MPI_Cart_get");
    const struct mpii_topo *t = c->topo;
    if (maxdims < 0)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Cart_get", "maxdims %d < 0", maxdims);
    if (maxdims > 0 && (!dims || !periods || !coords))
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Cart_get", "%s NULL with maxdims %d",
                              !dims      ? "dims"
                              : !periods ? "periods"
                                         : "coords",
                              maxdims);
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
        return MPII_ERR_NULL(comm, rank ? "coords" : "rank", "MPI_Cart_rank");
    int r = 0;
    for (int i = 0; i < t->ndims; i++) {
        int x = coords[i], d = t->dims[i];
        if (x < 0 || x >= d) {
            if (!t->periods[i])
                return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Cart_rank",
                                      "coords[%d] = %d is not in 0..%d (not periodic)", i, x,
                                      d - 1);
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
        return MPII_ERRF_COMM(comm, MPI_ERR_RANK, "MPI_Cart_coords", "rank %d is not in 0..%d",
                              rank, c->size - 1);
    if (maxdims < t->ndims)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Cart_coords",
                              "maxdims %d < %d, the dimensions of comm", maxdims, t->ndims);
    if (t->ndims > 0 && !coords)
        return MPII_ERR_NULL(comm, "coords", "MPI_Cart_coords");
    cart_coords(t, rank, coords);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_coords, PMPI_Cart_coords)

void mpii_cart_shift(const struct mpii_topo *t, int rank, int direction, int disp, int *source,
                     int *dest)
{
    /* coordinate along direction and stride of this dimension in row-major order */
    int stride = 1;
    for (int i = direction + 1; i < t->ndims; i++)
        stride *= t->dims[i];
    int d = t->dims[direction], x = (rank / stride) % d;
    int base = rank - x * stride;
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
        *(s ? dest : source) = r;
    }
}

int PMPI_Cart_shift(MPI_Comm comm, int direction, int disp, int *rank_source, int *rank_dest)
{
    GET_CART(c, comm, "MPI_Cart_shift");
    const struct mpii_topo *t = c->topo;
    if (!rank_source || !rank_dest)
        return MPII_ERR_NULL(comm, rank_source ? "rank_dest" : "rank_source", "MPI_Cart_shift");
    if (direction < 0 || direction >= t->ndims)
        return MPII_ERRF_COMM(comm, MPI_ERR_ARG, "MPI_Cart_shift",
                              "direction %d is not in 0..%d (the dimensions of comm)", direction,
                              t->ndims - 1);
    mpii_cart_shift(t, c->rank, direction, disp, rank_source, rank_dest);
    return MPI_SUCCESS;
}
MPII_WEAK(MPI_Cart_shift, PMPI_Cart_shift)

int PMPI_Cart_sub(MPI_Comm comm, const int remain_dims[], MPI_Comm *newcomm)
{
    static const char fn[] = "MPI_Cart_sub";
    GET_CART(c, comm, fn);
    const struct mpii_topo *t = c->topo;
    if (!newcomm || (t->ndims > 0 && !remain_dims))
        return MPII_ERR_NULL(comm, newcomm ? "remain_dims" : "newcomm", fn);
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

/* ------------------------------------------------------------------ neighbour lists */

/* Whether b - a is 0 or plus or minus a power of two modulo p. */
static int topo_pow2_apart(int a, int b, int p)
{
    int d = ((b - a) % p + p) % p;
    return d == 0 || (d & (d - 1)) == 0 || ((p - d) & (p - d - 1)) == 0;
}

/* mpii_nbrs_t.mailbox_edges of a Cartesian topology over size ranks. */
static int topo_cart_mailbox_edges(const struct mpii_topo *t, int size)
{
    for (int r = 0; r < size; r++)
        for (int d = 0; d < t->ndims; d++) {
            int lo, hi;
            mpii_cart_shift(t, r, d, 1, &lo, &hi);
            if ((lo != MPI_PROC_NULL && !topo_pow2_apart(r, lo, size)) ||
                (hi != MPI_PROC_NULL && !topo_pow2_apart(r, hi, size)))
                return 0;
        }
    return 1;
}

/* Contract: topo_impl.h. */
const mpii_nbrs_t *mpii_topo_neighbors(mpii_comm_t *c)
{
    struct mpii_topo *t = c->topo;
    if (t->nbrs)
        return t->nbrs;
    int indeg, outdeg;
    if (t->kind == MPI_CART) {
        indeg = outdeg = 2 * t->ndims;
    } else if (t->kind == MPI_GRAPH) {
        int first = c->rank ? t->index[c->rank - 1] : 0;
        indeg = outdeg = t->index[c->rank] - first;
    } else {
        indeg = t->indeg;
        outdeg = t->outdeg;
    }
    mpii_nbrs_t *n = malloc(sizeof *n + (size_t)(indeg + 2 * outdeg + 1) * sizeof(int));
    if (!n)
        return NULL;
    n->indeg = indeg;
    n->outdeg = outdeg;
    n->in = (int *)(n + 1);
    n->out = n->in + indeg;
    n->send_order = n->out + outdeg;
    for (int j = 0; j < outdeg; j++)
        n->send_order[j] = j;
    n->mailbox_edges = t->kind == MPI_CART && topo_cart_mailbox_edges(t, c->size);
    if (t->kind == MPI_CART) {
        for (int d = 0; d < t->ndims; d++) {
            mpii_cart_shift(t, c->rank, d, 1, &n->in[2 * d], &n->in[2 * d + 1]);
            n->out[2 * d] = n->in[2 * d];
            n->out[2 * d + 1] = n->in[2 * d + 1];
            n->send_order[2 * d] = 2 * d + 1; /* +1 first (topo_impl.h) */
            n->send_order[2 * d + 1] = 2 * d;
        }
    } else if (t->kind == MPI_GRAPH) {
        const int *e = t->edges + (c->rank ? t->index[c->rank - 1] : 0);
        memcpy(n->in, e, (size_t)indeg * sizeof(int));
        memcpy(n->out, e, (size_t)outdeg * sizeof(int));
    } else {
        if (indeg)
            memcpy(n->in, t->src, (size_t)indeg * sizeof(int));
        if (outdeg)
            memcpy(n->out, t->dst, (size_t)outdeg * sizeof(int));
    }
    t->nbrs = n;
    return n;
}
