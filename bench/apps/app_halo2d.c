/* app_halo2d — 2-D halo exchange with a 5-point Jacobi stencil on a 2-D Cartesian process
 * grid: the nearest-neighbour pattern of structured-grid codes.
 *
 *   mpiexec -n 4 app_halo2d [--csv] [--quick] [--reps=N] [--impl=NAME]
 *                           [--nx=ROWS] [--ny=COLUMNS] [--iters=N] [--check=N]
 *
 * The problem: Jacobi iterations for the Laplace equation on an nx x ny grid of interior
 * points with zero (Dirichlet) boundaries,
 *     v[i][j] = 0.25 ((u[i-1][j] + u[i+1][j]) + (u[i][j-1] + u[i][j+1])),
 * starting from a sum of two discrete eigenmodes of the Laplacian (sin(pi k (i+1)/(nx+1))
 * sin(pi l (j+1)/(ny+1)), (k, l) = (1, 1) and (7, 5)).
 * The decomposition: MPI_Dims_create + MPI_Cart_create (not periodic, reorder allowed) give
 * a px x py process grid; each rank owns a block of rows and columns (uneven splits: the
 * first ranks of a dimension one more) plus a one-cell halo. Every iteration each rank
 * posts MPI_Irecv for its four halos and MPI_Isend of its four edges (rows contiguous,
 * columns as one MPI_Type_vector(rows, 1, row length) each), MPI_Waitall of the eight, then
 * updates its block; every --check iterations (and at the last) the squared change
 * sum (v - u)^2 is summed over the ranks with MPI_Allreduce (the residual).
 * Measured: the time of --iters iterations (slowest rank; median of --reps runs after a
 * warm-up run); rate = nx * ny * iters / time in Mcells/s (cell updates per second).
 * Verification: each eigenmode decays by its own factor per iteration,
 * lambda = (cos(pi k/(nx+1)) + cos(pi l/(ny+1))) / 2, so after n iterations every value
 * is known in closed form (checked to 1e-10) and so is the last residual (to 1e-6
 * relative). The checksum is the exact (fixed-point) sum of the final grid; the stencil
 * adds in a fixed order, so the grid and the checksum are bitwise the same with any
 * library and any rank count. */
#include "app_util.h"

#define TAG_SOUTHWARD 1
#define TAG_NORTHWARD 2
#define TAG_EASTWARD 3
#define TAG_WESTWARD 4

/* The two eigenmodes of the initial field: (k, l) and amplitude. */
static const int mode_k[2] = {1, 7}, mode_l[2] = {1, 5};
static const double mode_amp[2] = {1.0, 0.5};

typedef struct halo2d {
    long nx, ny, iters, check;
    long i0, j0, mx, my;         /* this rank's first global row and column, rows and columns */
    long ld;                     /* my + 2 */
    double *u, *v;               /* (mx + 2) x ld each, halo included */
    double *sin_i[2], *sin_j[2]; /* the modes' factors at this rank's rows and columns */
    double residual;             /* the last one computed */
    MPI_Comm cart;
    MPI_Datatype column;
    int north, south, west, east;
} halo2d_t;

static double mode_factor(int k, long i, long n)
{
    return sin(M_PI * k * (double)(i + 1) / (double)(n + 1));
}

static void halo2d_reset(void *ctx)
{
    halo2d_t *p = ctx;
    size_t n = sizeof(double) * (size_t)((p->mx + 2) * p->ld);
    memset(p->u, 0, n);
    memset(p->v, 0, n);
    for (long i = 1; i <= p->mx; i++)
        for (long j = 1; j <= p->my; j++)
            p->u[i * p->ld + j] = mode_amp[0] * p->sin_i[0][i - 1] * p->sin_j[0][j - 1] +
                                  mode_amp[1] * p->sin_i[1][i - 1] * p->sin_j[1][j - 1];
}

/* The four halos of u: receives posted first, then the sends, then all eight waited. */
static void exchange(halo2d_t *p, double *u)
{
    long ld = p->ld, mx = p->mx, my = p->my;
    MPI_Request req[8];
    MPI_Status st[8];
    MPI_Irecv(&u[1], (int)my, MPI_DOUBLE, p->north, TAG_SOUTHWARD, p->cart, &req[0]);
    MPI_Irecv(&u[(mx + 1) * ld + 1], (int)my, MPI_DOUBLE, p->south, TAG_NORTHWARD, p->cart,
              &req[1]);
    MPI_Irecv(&u[ld], 1, p->column, p->west, TAG_EASTWARD, p->cart, &req[2]);
    MPI_Irecv(&u[ld + my + 1], 1, p->column, p->east, TAG_WESTWARD, p->cart, &req[3]);
    MPI_Isend(&u[ld + 1], (int)my, MPI_DOUBLE, p->north, TAG_NORTHWARD, p->cart, &req[4]);
    MPI_Isend(&u[mx * ld + 1], (int)my, MPI_DOUBLE, p->south, TAG_SOUTHWARD, p->cart, &req[5]);
    MPI_Isend(&u[ld + 1], 1, p->column, p->west, TAG_WESTWARD, p->cart, &req[6]);
    MPI_Isend(&u[ld + my], 1, p->column, p->east, TAG_EASTWARD, p->cart, &req[7]);
    MPI_Waitall(8, req, st);
}

/* One Jacobi update of the block, v from u; returns sum (v - u)^2 when asked. */
static double update(const halo2d_t *p, const double *restrict u, double *restrict v,
                     int want_change)
{
    long ld = p->ld;
    double change = 0.0;
    for (long i = 1; i <= p->mx; i++) {
        const double *up = &u[(i - 1) * ld], *mid = &u[i * ld], *down = &u[(i + 1) * ld];
        double *out = &v[i * ld];
        for (long j = 1; j <= p->my; j++)
            out[j] = 0.25 * ((up[j] + down[j]) + (mid[j - 1] + mid[j + 1]));
        if (want_change)
            for (long j = 1; j <= p->my; j++)
                change += (out[j] - mid[j]) * (out[j] - mid[j]);
    }
    return change;
}

static void halo2d_run(void *ctx)
{
    halo2d_t *p = ctx;
    for (long it = 0; it < p->iters; it++) {
        exchange(p, p->u);
        int want = (it + 1) % p->check == 0 || it == p->iters - 1;
        double change = update(p, p->u, p->v, want);
        if (want)
            MPI_Allreduce(&change, &p->residual, 1, MPI_DOUBLE, MPI_SUM, p->cart);
        double *t = p->u;
        p->u = p->v;
        p->v = t;
    }
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    app_opts_t o = {.prog = "app_halo2d"};
    app_param_t prm[] = {
        {"nx", 1024, 72, 1, "grid rows"},
        {"ny", 1024, 60, 1, "grid columns"},
        {"iters", 200, 20, 1, "Jacobi iterations per run"},
        {"check", 10, 5, 1, "iterations between residual allreduces"},
    };
    app_parse(argc, argv, &o, prm, 4);
    halo2d_t p = {
        .nx = prm[0].value, .ny = prm[1].value, .iters = prm[2].value, .check = prm[3].value};

    int dims[2] = {0, 0}, periods[2] = {0, 0}, coords[2], rank;
    MPI_Dims_create(o.nranks, 2, dims);
    if (p.nx < dims[0] || p.ny < dims[1]) {
        if (o.rank == 0)
            fprintf(stderr, "%s: a %ld x %ld grid is too small for %d x %d ranks\n", o.prog, p.nx,
                    p.ny, dims[0], dims[1]);
        MPI_Finalize();
        return 2;
    }
    MPI_Cart_create(MPI_COMM_WORLD, 2, dims, periods, 1, &p.cart);
    MPI_Comm_rank(p.cart, &rank);
    MPI_Cart_coords(p.cart, rank, 2, coords);
    MPI_Cart_shift(p.cart, 0, 1, &p.north, &p.south);
    MPI_Cart_shift(p.cart, 1, 1, &p.west, &p.east);
    p.i0 = app_split_lo(p.nx, dims[0], coords[0]);
    p.mx = app_split_hi(p.nx, dims[0], coords[0]) - p.i0;
    p.j0 = app_split_lo(p.ny, dims[1], coords[1]);
    p.my = app_split_hi(p.ny, dims[1], coords[1]) - p.j0;
    p.ld = p.my + 2;
    MPI_Type_vector((int)p.mx, 1, (int)p.ld, MPI_DOUBLE, &p.column);
    MPI_Type_commit(&p.column);
    size_t bytes = sizeof(double) * (size_t)((p.mx + 2) * p.ld);
    p.u = malloc(bytes);
    p.v = malloc(bytes);
    for (int m = 0; m < 2; m++) {
        p.sin_i[m] = malloc(sizeof(double) * (size_t)p.mx);
        p.sin_j[m] = malloc(sizeof(double) * (size_t)p.my);
        if (!p.sin_i[m] || !p.sin_j[m])
            break;
        for (long i = 0; i < p.mx; i++)
            p.sin_i[m][i] = mode_factor(mode_k[m], p.i0 + i, p.nx);
        for (long j = 0; j < p.my; j++)
            p.sin_j[m][j] = mode_factor(mode_l[m], p.j0 + j, p.ny);
    }
    if (!p.u || !p.v || !p.sin_i[1] || !p.sin_j[1]) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    app_describe(&o,
                 "2-D Jacobi (5-point), %ld x %ld cells on %d x %d ranks, %ld iterations per "
                 "run, residual allreduce every %ld",
                 p.nx, p.ny, dims[0], dims[1], p.iters, p.check);
    app_kernel_t k = {halo2d_reset, halo2d_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    app_report_rate(&o, p.nx * p.ny, (double)p.nx * (double)p.ny * (double)p.iters / 1e6,
                    "Mcells/s", t, tmin, tmax);

    /* Verification: the closed form of every value and of the last residual. */
    double lambda[2], decay[2], decay_last[2];
    for (int m = 0; m < 2; m++) {
        lambda[m] = 0.5 * (cos(M_PI * mode_k[m] / (double)(p.nx + 1)) +
                           cos(M_PI * mode_l[m] / (double)(p.ny + 1)));
        decay[m] = pow(lambda[m], (double)p.iters);
        decay_last[m] = pow(lambda[m], (double)(p.iters - 1));
    }
    int ok = 1;
    double worst = 0.0;
    int64_t sum = 0;
    for (long i = 1; i <= p.mx; i++)
        for (long j = 1; j <= p.my; j++) {
            double x = p.u[i * p.ld + j];
            double exact = mode_amp[0] * decay[0] * p.sin_i[0][i - 1] * p.sin_j[0][j - 1] +
                           mode_amp[1] * decay[1] * p.sin_i[1][i - 1] * p.sin_j[1][j - 1];
            double err = fabs(x - exact);
            if (!(err <= worst)) /* NaN too */
                worst = err;
            sum += app_fix(x);
        }
    if (!(worst <= 1e-10))
        ok = app_fail(&o, "a value is %.3g off the closed form", worst);
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* sum over the grid of mode^2 = (nx + 1) / 2 * (ny + 1) / 2; the modes are orthogonal. */
    double norm = (double)(p.nx + 1) / 2.0 * (double)(p.ny + 1) / 2.0, expect = 0.0;
    for (int m = 0; m < 2; m++) {
        double d = mode_amp[m] * decay_last[m] * (lambda[m] - 1.0);
        expect += d * d * norm;
    }
    if (o.rank == 0 && !(fabs(p.residual - expect) <= 1e-6 * expect))
        ok = app_fail(&o, "residual %.12g, expected %.12g", p.residual, expect);
    app_verdict(&o, ok, "Jacobi field or residual against the closed form");
    app_note(&o, "verified   every value within %.1e of the closed form; residual %.6e", worst,
             p.residual);
    app_report_checksum(&o, p.nx * p.ny, app_fix_total(sum));

    MPI_Type_free(&p.column);
    MPI_Comm_free(&p.cart);
    free(p.u);
    free(p.v);
    for (int m = 0; m < 2; m++) {
        free(p.sin_i[m]);
        free(p.sin_j[m]);
    }
    MPI_Finalize();
    return 0;
}
