/* app_halo3d — 3-D halo exchange with a 7-point Jacobi stencil on a 3-D Cartesian process
 * grid: face exchanges of strided data through derived datatypes.
 *
 *   mpiexec -n 4 app_halo3d [--csv] [--quick] [--reps=N] [--impl=NAME]
 *                           [--nx=N] [--ny=N] [--nz=N] [--iters=N] [--check=N]
 *                           [--px=N] [--py=N] [--pz=N]
 *
 * The problem: Jacobi iterations for the Laplace equation on an nx x ny x nz grid of
 * interior points with zero (Dirichlet) boundaries,
 *     v = ((u[i-1] + u[i+1]) + (u[j-1] + u[j+1]) + (u[k-1] + u[k+1])) / 6
 * (added in that order), starting from a sum of two discrete eigenmodes of the Laplacian
 * (products of sin(pi k (i+1)/(n+1)) over the three axes; modes (1,1,1) and (3,2,5)).
 * The decomposition: MPI_Dims_create + MPI_Cart_create (not periodic, reorder allowed) give
 * a px x py x pz process grid (--px, --py, --pz fix some of them: up to 7 ranks
 * MPI_Dims_create alone never splits all three axes); each rank owns a block (uneven splits: the
 * first ranks of a dimension one more) plus a one-cell halo, stored with k fastest. Every iteration
 * each rank posts MPI_Irecv for its six face halos and MPI_Isend of its six boundary
 * faces, then MPI_Waitall of the twelve: the i faces are MPI_Type_vector(my, mz, mz + 2)
 * (rows of a plane), the j faces MPI_Type_vector(mx, mz, (my + 2) (mz + 2)), the k faces
 * (one double per row: the most scattered) MPI_Type_create_subarray of the block with
 * its halo, one type per face position. Then the block is updated; every --check
 * iterations (and at the last) the squared change sum (v - u)^2 is summed over the ranks
 * with MPI_Allreduce.
 * Measured: the time of --iters iterations (slowest rank; median of --reps runs after a
 * warm-up run); rate = nx * ny * nz * iters / time in Mcells/s (cell updates per second).
 * Verification: each eigenmode decays by (cos(pi k/(nx+1)) + cos(pi l/(ny+1)) +
 * cos(pi m/(nz+1))) / 3 per iteration, so every value after n iterations is known in
 * closed form (checked to 1e-10) and so is the last residual (1e-6 relative). The
 * checksum is the exact (fixed-point) sum of the final grid: the same with any library
 * and any rank count. */
#include "app_util.h"

/* The two eigenmodes of the initial field: wave numbers along i, j, k and amplitude. */
static const int mode_wave[2][3] = {{1, 1, 1}, {3, 2, 5}};
static const double mode_amp[2] = {1.0, 0.5};

typedef struct halo3d {
    long n[3], iters, check;
    long lo[3], m[3];    /* this rank's first global index and extent per axis */
    long sj, si;         /* strides of j and i: mz + 2 and (my + 2) (mz + 2) */
    double *u, *v;       /* (mx + 2) (my + 2) (mz + 2) each, halo included */
    double *sines[2][3]; /* the modes' factors at this rank's indices, per axis */
    double residual;
    MPI_Comm cart;
    int lower[3], upper[3];      /* neighbours per axis (or MPI_PROC_NULL) */
    MPI_Datatype face_i, face_j; /* vectors, placed by the buffer address */
    MPI_Datatype face_k[4];      /* subarrays at k = 0, 1, mz, mz + 1 (buffer: the array) */
} halo3d_t;

static long at(const halo3d_t *p, long i, long j, long k)
{
    return i * p->si + j * p->sj + k;
}

static void halo3d_reset(void *ctx)
{
    halo3d_t *p = ctx;
    size_t n = sizeof(double) * (size_t)((p->m[0] + 2) * p->si);
    memset(p->u, 0, n);
    memset(p->v, 0, n);
    for (long i = 1; i <= p->m[0]; i++)
        for (long j = 1; j <= p->m[1]; j++)
            for (long k = 1; k <= p->m[2]; k++) {
                double x = 0.0;
                for (int w = 0; w < 2; w++)
                    x += mode_amp[w] * p->sines[w][0][i - 1] * p->sines[w][1][j - 1] *
                         p->sines[w][2][k - 1];
                p->u[at(p, i, j, k)] = x;
            }
}

/* The six face halos of u. Tags: 2 * axis + (1 for data travelling to the upper side). */
static void exchange(halo3d_t *p, double *u)
{
    long mx = p->m[0], my = p->m[1];
    MPI_Request req[12];
    MPI_Status st[12];
    MPI_Comm c = p->cart;
    /* receives: from the lower neighbour (travelling up) into the low halo, and back */
    MPI_Irecv(&u[at(p, 0, 1, 1)], 1, p->face_i, p->lower[0], 1, c, &req[0]);
    MPI_Irecv(&u[at(p, mx + 1, 1, 1)], 1, p->face_i, p->upper[0], 0, c, &req[1]);
    MPI_Irecv(&u[at(p, 1, 0, 1)], 1, p->face_j, p->lower[1], 3, c, &req[2]);
    MPI_Irecv(&u[at(p, 1, my + 1, 1)], 1, p->face_j, p->upper[1], 2, c, &req[3]);
    MPI_Irecv(u, 1, p->face_k[0], p->lower[2], 5, c, &req[4]);
    MPI_Irecv(u, 1, p->face_k[3], p->upper[2], 4, c, &req[5]);
    MPI_Isend(&u[at(p, mx, 1, 1)], 1, p->face_i, p->upper[0], 1, c, &req[6]);
    MPI_Isend(&u[at(p, 1, 1, 1)], 1, p->face_i, p->lower[0], 0, c, &req[7]);
    MPI_Isend(&u[at(p, 1, my, 1)], 1, p->face_j, p->upper[1], 3, c, &req[8]);
    MPI_Isend(&u[at(p, 1, 1, 1)], 1, p->face_j, p->lower[1], 2, c, &req[9]);
    MPI_Isend(u, 1, p->face_k[2], p->upper[2], 5, c, &req[10]);
    MPI_Isend(u, 1, p->face_k[1], p->lower[2], 4, c, &req[11]);
    MPI_Waitall(12, req, st);
}

/* One Jacobi update of the block, v from u; returns sum (v - u)^2 when asked. */
static double update(const halo3d_t *p, const double *restrict u, double *restrict v,
                     int want_change)
{
    const double sixth = 1.0 / 6.0;
    long si = p->si, sj = p->sj;
    double change = 0.0;
    for (long i = 1; i <= p->m[0]; i++)
        for (long j = 1; j <= p->m[1]; j++) {
            long b = at(p, i, j, 0);
            const double *c = &u[b];
            double *out = &v[b];
            for (long k = 1; k <= p->m[2]; k++)
                out[k] = sixth * (((c[k - si] + c[k + si]) + (c[k - sj] + c[k + sj])) +
                                  (c[k - 1] + c[k + 1]));
            if (want_change)
                for (long k = 1; k <= p->m[2]; k++)
                    change += (out[k] - c[k]) * (out[k] - c[k]);
        }
    return change;
}

static void halo3d_run(void *ctx)
{
    halo3d_t *p = ctx;
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
    app_opts_t o = {.prog = "app_halo3d"};
    app_param_t prm[] = {
        {"nx", 128, 20, 1, "grid extent along i (slowest)"},
        {"ny", 128, 18, 1, "grid extent along j"},
        {"nz", 128, 16, 1, "grid extent along k (fastest)"},
        {"iters", 80, 10, 1, "Jacobi iterations per run"},
        {"check", 10, 4, 1, "iterations between residual allreduces"},
        {"px", 0, 0, 0, "ranks along i (0: MPI_Dims_create chooses)"},
        {"py", 0, 0, 0, "ranks along j (0: MPI_Dims_create chooses)"},
        {"pz", 0, 0, 0, "ranks along k (0: MPI_Dims_create chooses)"},
    };
    app_parse(argc, argv, &o, prm, 8);
    halo3d_t p = {.n = {prm[0].value, prm[1].value, prm[2].value},
                  .iters = prm[3].value,
                  .check = prm[4].value};

    int dims[3] = {(int)prm[5].value, (int)prm[6].value, (int)prm[7].value};
    int periods[3] = {0, 0, 0}, coords[3], rank, fixed = 1;
    for (int d = 0; d < 3; d++)
        fixed *= dims[d] ? dims[d] : 1;
    if (o.nranks % fixed) {
        if (o.rank == 0)
            fprintf(stderr, "%s: --px * --py * --pz does not divide %d ranks\n", o.prog, o.nranks);
        MPI_Finalize();
        return 2;
    }
    MPI_Dims_create(o.nranks, 3, dims);
    if (p.n[0] < dims[0] || p.n[1] < dims[1] || p.n[2] < dims[2]) {
        if (o.rank == 0)
            fprintf(stderr, "%s: a %ld x %ld x %ld grid is too small for %d x %d x %d ranks\n",
                    o.prog, p.n[0], p.n[1], p.n[2], dims[0], dims[1], dims[2]);
        MPI_Finalize();
        return 2;
    }
    MPI_Cart_create(MPI_COMM_WORLD, 3, dims, periods, 1, &p.cart);
    MPI_Comm_rank(p.cart, &rank);
    MPI_Cart_coords(p.cart, rank, 3, coords);
    for (int d = 0; d < 3; d++) {
        MPI_Cart_shift(p.cart, d, 1, &p.lower[d], &p.upper[d]);
        p.lo[d] = app_split_lo(p.n[d], dims[d], coords[d]);
        p.m[d] = app_split_hi(p.n[d], dims[d], coords[d]) - p.lo[d];
    }
    long mx = p.m[0], my = p.m[1], mz = p.m[2];
    p.sj = mz + 2;
    p.si = (my + 2) * p.sj;
    MPI_Type_vector((int)my, (int)mz, (int)p.sj, MPI_DOUBLE, &p.face_i);
    MPI_Type_vector((int)mx, (int)mz, (int)p.si, MPI_DOUBLE, &p.face_j);
    MPI_Type_commit(&p.face_i);
    MPI_Type_commit(&p.face_j);
    int sizes[3] = {(int)mx + 2, (int)my + 2, (int)mz + 2}, sub[3] = {(int)mx, (int)my, 1};
    const long kpos[4] = {0, 1, mz, mz + 1};
    for (int f = 0; f < 4; f++) {
        int starts[3] = {1, 1, (int)kpos[f]};
        MPI_Type_create_subarray(3, sizes, sub, starts, MPI_ORDER_C, MPI_DOUBLE, &p.face_k[f]);
        MPI_Type_commit(&p.face_k[f]);
    }
    size_t bytes = sizeof(double) * (size_t)((mx + 2) * p.si);
    p.u = malloc(bytes);
    p.v = malloc(bytes);
    int have = p.u && p.v;
    for (int w = 0; w < 2 && have; w++)
        for (int d = 0; d < 3 && have; d++) {
            p.sines[w][d] = malloc(sizeof(double) * (size_t)p.m[d]);
            have = p.sines[w][d] != NULL;
            for (long i = 0; have && i < p.m[d]; i++)
                p.sines[w][d][i] =
                    sin(M_PI * mode_wave[w][d] * (double)(p.lo[d] + i + 1) / (double)(p.n[d] + 1));
        }
    if (!have) {
        fprintf(stderr, "%s: out of memory\n", o.prog);
        MPI_Abort(MPI_COMM_WORLD, 2);
    }

    app_describe(&o,
                 "3-D Jacobi (7-point), %ld x %ld x %ld cells on %d x %d x %d ranks, %ld "
                 "iterations per run, residual allreduce every %ld",
                 p.n[0], p.n[1], p.n[2], dims[0], dims[1], dims[2], p.iters, p.check);
    app_kernel_t k = {halo3d_reset, halo3d_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    double cells = (double)p.n[0] * (double)p.n[1] * (double)p.n[2];
    app_report_rate(&o, p.n[0] * p.n[1] * p.n[2], cells * (double)p.iters / 1e6, "Mcells/s", t,
                    tmin, tmax);

    /* Verification: the closed form of every value and of the last residual. */
    double lambda[2], decay[2], decay_last[2];
    for (int w = 0; w < 2; w++) {
        lambda[w] = 0.0;
        for (int d = 0; d < 3; d++)
            lambda[w] += cos(M_PI * mode_wave[w][d] / (double)(p.n[d] + 1));
        lambda[w] /= 3.0;
        decay[w] = pow(lambda[w], (double)p.iters);
        decay_last[w] = pow(lambda[w], (double)(p.iters - 1));
    }
    int ok = 1;
    double worst = 0.0;
    int64_t sum = 0;
    for (long i = 1; i <= mx; i++)
        for (long j = 1; j <= my; j++)
            for (long kk = 1; kk <= mz; kk++) {
                double x = p.u[at(&p, i, j, kk)], exact = 0.0;
                for (int w = 0; w < 2; w++)
                    exact += mode_amp[w] * decay[w] * p.sines[w][0][i - 1] * p.sines[w][1][j - 1] *
                             p.sines[w][2][kk - 1];
                double err = fabs(x - exact);
                if (!(err <= worst)) /* NaN too */
                    worst = err;
                sum += app_fix(x);
            }
    if (!(worst <= 1e-10))
        ok = app_fail(&o, "a value is %.3g off the closed form", worst);
    MPI_Allreduce(MPI_IN_PLACE, &worst, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    /* sum of mode^2 over the grid = product of (n + 1) / 2; the modes are orthogonal */
    double norm = 1.0, expect = 0.0;
    for (int d = 0; d < 3; d++)
        norm *= (double)(p.n[d] + 1) / 2.0;
    for (int w = 0; w < 2; w++) {
        double dd = mode_amp[w] * decay_last[w] * (lambda[w] - 1.0);
        expect += dd * dd * norm;
    }
    if (o.rank == 0 && !(fabs(p.residual - expect) <= 1e-6 * expect))
        ok = app_fail(&o, "residual %.12g, expected %.12g", p.residual, expect);
    app_verdict(&o, ok, "Jacobi field or residual against the closed form");
    app_note(&o, "verified   every value within %.1e of the closed form; residual %.6e", worst,
             p.residual);
    app_report_checksum(&o, p.n[0] * p.n[1] * p.n[2], app_fix_total(sum));

    for (int f = 0; f < 4; f++)
        MPI_Type_free(&p.face_k[f]);
    MPI_Type_free(&p.face_i);
    MPI_Type_free(&p.face_j);
    MPI_Comm_free(&p.cart);
    free(p.u);
    free(p.v);
    for (int w = 0; w < 2; w++)
        for (int d = 0; d < 3; d++)
            free(p.sines[w][d]);
    MPI_Finalize();
    return 0;
}
