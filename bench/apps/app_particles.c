/* app_particles — a short-range particle code (molecular dynamics in 2-D) with a 1-D
 * domain decomposition: ghost-particle halos and migration through MPI_Sendrecv, and an
 * MPI_Allreduce of the energies every step.
 *
 *   mpiexec -n 2 app_particles [--csv] [--quick] [--reps=N] [--impl=NAME] [--nx=N]
 *                              [--ny=N] [--steps=N]
 *
 * The problem: nx * ny particles of unit mass in a periodic box of nx * 0.8 by ny * 0.8,
 * started on a jittered square lattice (spacing 0.8) with random velocities of zero
 * total momentum (all a function of the particle's number, whatever the rank count);
 * a soft repulsive pair potential U(r) = 10 (1 - r)^2 for r < 1 (cutoff 1), minimum
 * image in y; velocity Verlet with dt = 0.005, --steps steps per run.
 * The decomposition: the box is cut along x into nranks slabs of equal width (at least
 * the cutoff); a rank owns the particles in its slab. Every step each rank:
 *   1. kicks and drifts its particles;
 *   2. migrates those that left its slab to the left or right neighbour (periodic ring;
 *      MPI_Sendrecv of the counts, then of the particles, each direction);
 *   3. sends copies of its particles within the cutoff of either slab edge to that side
 *      as ghosts (MPI_Sendrecv of counts and positions, each direction; images shifted by
 *      the box length across the periodic boundary);
 *   4. computes the forces on its particles from its own and the ghost particles with
 *      cell lists (cells at least the cutoff wide), and kicks again;
 *   5. sums the kinetic and potential energies over the ranks (MPI_Allreduce of 2
 *      doubles).
 * Measured: the time of --steps steps (slowest rank; median of --reps runs after a
 * warm-up run, each run from the initial state); rate = particles * steps / time in
 * Mparticle-steps/s.
 * Verification: every particle exactly once (count, sum of numbers and of a hash of the
 * numbers), every particle inside its owner's slab after each migration (a particle
 * must not cross a whole slab in a step), total momentum zero (to 1e-9 per particle) and
 * total energy conserved to 1e-3 relative over the run (the largest drift of any step;
 * a lost ghost or migrant shows as a jump).
 * With at most 4096 particles (--quick) rank 0 also runs the same dynamics serially with
 * all pairs (no cells, no decomposition) and every particle's final position and
 * velocity must agree to 1e-8, the energies to 1e-9 relative. The checksum is the
 * fixed-point sum of the final positions; the order of a particle's force terms follows
 * the decomposition, so it is the same with any library for the same rank count. */
#include "app_util.h"

#define SPACING 0.8
#define CUTOFF 1.0
#define STRENGTH 10.0
#define DT 0.005
#define SPEED 1.5 /* initial velocity components in [-SPEED, SPEED) before centring */
#define MIGRANT 5 /* doubles per migrating particle: number, x, y, vx, vy */
#define REFERENCE_MAX 4096

typedef struct particles {
    long nx, ny, steps, total;
    double lx, ly, xlo, xhi;
    int rank, nranks, left, right;
    long n, cap; /* owned particles */
    double *x, *y, *vx, *vy, *ax, *ay;
    long *id;
    long ng, gcap; /* ghosts, then all (owned + ghost) positions for the cell lists */
    double *gx, *gy, *px, *py;
    double *sendl, *sendr, *recvb;
    long sl_cap, sr_cap, rb_cap;
    int ncx, ncy; /* cells: ncx over [xlo - CUTOFF, xhi + CUTOFF), ncy over [0, ly) */
    double csx, csy;
    int *head, *next;
    long next_cap;
    double vmean[2];
    double ke, pe, e0, drift; /* energies of the last step, initial total, largest drift */
    long migrated;            /* particles sent to a neighbour in the run */
    int misplaced;            /* particles received outside this slab */
} particles_t;

/* Grows *buf to hold need elements of size elem (keeps the contents). */
static void grow(void **buf, long *cap, long need, size_t elem)
{
    if (need <= *cap)
        return;
    long c = *cap ? *cap : 64;
    while (c < need)
        c *= 2;
    void *b = realloc(*buf, elem * (size_t)c);
    if (!b) {
        fprintf(stderr, "app_particles: out of memory\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    *buf = b;
    *cap = c;
}

static void grow_owned(particles_t *p, long need)
{
    if (need <= p->cap)
        return;
    long c = p->cap;
    double **arrays[] = {&p->x, &p->y, &p->vx, &p->vy, &p->ax, &p->ay};
    for (int a = 0; a < 6; a++) {
        c = p->cap;
        grow((void **)arrays[a], &c, need, sizeof(double));
    }
    c = p->cap;
    grow((void **)&p->id, &c, need, sizeof(long));
    p->cap = c;
}

/* Slab edges: edge(0) = 0, edge(nranks) = lx exactly. */
static double edge(const particles_t *p, int r)
{
    return r <= 0 ? 0.0 : r >= p->nranks ? p->lx : p->lx * r / p->nranks;
}

static int owner(const particles_t *p, double x)
{
    int r = (int)(x / p->lx * p->nranks);
    r = r < 0 ? 0 : r >= p->nranks ? p->nranks - 1 : r;
    while (r > 0 && x < edge(p, r))
        r--;
    while (r < p->nranks - 1 && x >= edge(p, r + 1))
        r++;
    return r;
}

/* Initial state of particle g (position in the box, velocity before centring). */
static void initial(const particles_t *p, long g, double *x, double *y, double *vx, double *vy)
{
    long ix = g % p->nx, iy = g / p->nx;
    uint64_t h = (uint64_t)g * 4;
    *x = ((double)ix + 0.5 + 0.4 * (app_uniform(h) - 0.5)) * SPACING;
    *y = ((double)iy + 0.5 + 0.4 * (app_uniform(h + 1) - 0.5)) * SPACING;
    *vx = SPEED * (2.0 * app_uniform(h + 2) - 1.0);
    *vy = SPEED * (2.0 * app_uniform(h + 3) - 1.0);
}

/* The pair force factor f (force = f * (dx, dy)) and energy of a pair at r2 < CUTOFF^2. */
static double pair(double r2, double *energy)
{
    double r = sqrt(r2);
    double s = 1.0 - r / CUTOFF;
    *energy = STRENGTH * s * s;
    return r > 1e-12 ? 2.0 * STRENGTH * s / (CUTOFF * r) : 0.0;
}

/* The minimum image of a difference d in a periodic length len. */
static double min_image(double d, double len)
{
    return d > 0.5 * len ? d - len : d < -0.5 * len ? d + len : d;
}

/* Ghosts: copies of the particles within CUTOFF of each slab edge, to that side. */
static void exchange_ghosts(particles_t *p)
{
    long nl = 0, nr = 0;
    double shift_l = p->rank == 0 ? p->lx : 0.0, shift_r = p->rank == p->nranks - 1 ? p->lx : 0.0;
    for (long i = 0; i < p->n; i++) {
        if (p->x[i] < p->xlo + CUTOFF) {
            grow((void **)&p->sendl, &p->sl_cap, 2 * (nl + 1), sizeof(double));
            p->sendl[2 * nl] = p->x[i] + shift_l;
            p->sendl[2 * nl + 1] = p->y[i];
            nl++;
        }
        if (p->x[i] >= p->xhi - CUTOFF) {
            grow((void **)&p->sendr, &p->sr_cap, 2 * (nr + 1), sizeof(double));
            p->sendr[2 * nr] = p->x[i] - shift_r;
            p->sendr[2 * nr + 1] = p->y[i];
            nr++;
        }
    }
    int sends[2] = {(int)nl, (int)nr}, recvs[2]; /* recvs: from the right, from the left */
    MPI_Sendrecv(&sends[0], 1, MPI_INT, p->left, 21, &recvs[0], 1, MPI_INT, p->right, 21,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&sends[1], 1, MPI_INT, p->right, 22, &recvs[1], 1, MPI_INT, p->left, 22,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    p->ng = 0;
    long need = recvs[0] + recvs[1];
    long gc = p->gcap;
    grow((void **)&p->gx, &gc, need, sizeof(double));
    gc = p->gcap;
    grow((void **)&p->gy, &gc, need, sizeof(double));
    p->gcap = gc;
    for (int d = 0; d < 2; d++) {
        grow((void **)&p->recvb, &p->rb_cap, 2 * (long)recvs[d] + 1, sizeof(double));
        MPI_Sendrecv(d ? p->sendr : p->sendl, 2 * sends[d], MPI_DOUBLE, d ? p->right : p->left,
                     23 + d, p->recvb, 2 * recvs[d], MPI_DOUBLE, d ? p->left : p->right, 23 + d,
                     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < recvs[d]; k++) {
            p->gx[p->ng] = p->recvb[2 * k];
            p->gy[p->ng] = p->recvb[2 * k + 1];
            p->ng++;
        }
    }
}

/* Migration: particles that left the slab go to the neighbour on that side (positions
 * wrapped into the box); the rest are compacted in place. */
static void migrate(particles_t *p)
{
    long nl = 0, nr = 0, kept = 0;
    for (long i = 0; i < p->n; i++) {
        double x = p->x[i], y = p->y[i];
        int side = x < p->xlo ? 0 : x >= p->xhi ? 1 : -1;
        x = x < 0.0 ? x + p->lx : x >= p->lx ? x - p->lx : x;
        y = y < 0.0 ? y + p->ly : y >= p->ly ? y - p->ly : y;
        if (side < 0) {
            p->x[kept] = x;
            p->y[kept] = y;
            p->vx[kept] = p->vx[i];
            p->vy[kept] = p->vy[i];
            p->id[kept] = p->id[i];
            kept++;
            continue;
        }
        double **buf = side ? &p->sendr : &p->sendl;
        long *cnt = side ? &nr : &nl;
        grow((void **)buf, side ? &p->sr_cap : &p->sl_cap, MIGRANT * (*cnt + 1), sizeof(double));
        double *m = &(*buf)[MIGRANT * *cnt];
        m[0] = (double)p->id[i];
        m[1] = x;
        m[2] = y;
        m[3] = p->vx[i];
        m[4] = p->vy[i];
        (*cnt)++;
    }
    p->n = kept;
    p->migrated += nl + nr;
    int sends[2] = {(int)nl, (int)nr}, recvs[2];
    MPI_Sendrecv(&sends[0], 1, MPI_INT, p->left, 31, &recvs[0], 1, MPI_INT, p->right, 31,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    MPI_Sendrecv(&sends[1], 1, MPI_INT, p->right, 32, &recvs[1], 1, MPI_INT, p->left, 32,
                 MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    grow_owned(p, p->n + recvs[0] + recvs[1]);
    for (int d = 0; d < 2; d++) {
        grow((void **)&p->recvb, &p->rb_cap, MIGRANT * (long)recvs[d] + 1, sizeof(double));
        MPI_Sendrecv(d ? p->sendr : p->sendl, MIGRANT * sends[d], MPI_DOUBLE,
                     d ? p->right : p->left, 33 + d, p->recvb, MIGRANT * recvs[d], MPI_DOUBLE,
                     d ? p->left : p->right, 33 + d, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
        for (int k = 0; k < recvs[d]; k++) {
            const double *m = &p->recvb[MIGRANT * k];
            long i = p->n++;
            p->id[i] = (long)m[0];
            p->x[i] = m[1];
            p->y[i] = m[2];
            p->vx[i] = m[3];
            p->vy[i] = m[4];
            if (owner(p, m[1]) != p->rank)
                p->misplaced++;
        }
    }
}

/* Forces on the owned particles from owned and ghost ones (cell lists); returns this
 * rank's share of the potential energy (half of each pair it sees). */
static double forces(particles_t *p)
{
    long all = p->n + p->ng;
    long pc = p->next_cap;
    grow((void **)&p->px, &pc, all, sizeof(double));
    pc = p->next_cap;
    grow((void **)&p->py, &pc, all, sizeof(double));
    pc = p->next_cap;
    grow((void **)&p->next, &pc, all, sizeof(int));
    p->next_cap = pc;
    memcpy(p->px, p->x, sizeof(double) * (size_t)p->n);
    memcpy(p->py, p->y, sizeof(double) * (size_t)p->n);
    memcpy(p->px + p->n, p->gx, sizeof(double) * (size_t)p->ng);
    memcpy(p->py + p->n, p->gy, sizeof(double) * (size_t)p->ng);
    int ncx = p->ncx, ncy = p->ncy;
    for (int c = 0; c < ncx * ncy; c++)
        p->head[c] = -1;
    double x0 = p->xlo - CUTOFF;
    for (long i = 0; i < all; i++) {
        int cx = (int)((p->px[i] - x0) / p->csx), cy = (int)(p->py[i] / p->csy);
        cx = cx < 0 ? 0 : cx >= ncx ? ncx - 1 : cx;
        cy = cy < 0 ? 0 : cy >= ncy ? ncy - 1 : cy;
        p->next[i] = p->head[cx * ncy + cy];
        p->head[cx * ncy + cy] = (int)i;
    }
    double pe = 0.0, ly = p->ly, rc2 = CUTOFF * CUTOFF;
    for (long i = 0; i < p->n; i++) {
        double xi = p->px[i], yi = p->py[i], fx = 0.0, fy = 0.0;
        int cx = (int)((xi - x0) / p->csx), cy = (int)(yi / p->csy);
        cx = cx < 0 ? 0 : cx >= ncx ? ncx - 1 : cx;
        cy = cy < 0 ? 0 : cy >= ncy ? ncy - 1 : cy;
        for (int dx = -1; dx <= 1; dx++) {
            int ox = cx + dx;
            if (ox < 0 || ox >= ncx)
                continue;
            for (int dy = -1; dy <= 1; dy++) {
                int oy = (cy + dy + ncy) % ncy;
                for (int j = p->head[ox * ncy + oy]; j >= 0; j = p->next[j]) {
                    if (j == i)
                        continue;
                    double ddx = xi - p->px[j], ddy = min_image(yi - p->py[j], ly);
                    double r2 = ddx * ddx + ddy * ddy;
                    if (r2 >= rc2)
                        continue;
                    double u, f = pair(r2, &u);
                    fx += f * ddx;
                    fy += f * ddy;
                    pe += 0.5 * u;
                }
            }
        }
        p->ax[i] = fx;
        p->ay[i] = fy;
    }
    return pe;
}

/* The energies of the current state over all ranks (and the drift from e0). */
static void energies(particles_t *p, double pe)
{
    double ke = 0.0;
    for (long i = 0; i < p->n; i++)
        ke += 0.5 * (p->vx[i] * p->vx[i] + p->vy[i] * p->vy[i]);
    double local[2] = {ke, pe}, global[2];
    MPI_Allreduce(local, global, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    p->ke = global[0];
    p->pe = global[1];
}

static void particles_reset(void *ctx)
{
    particles_t *p = ctx;
    p->n = 0;
    for (long g = 0; g < p->total; g++) {
        double x, y, vx, vy;
        initial(p, g, &x, &y, &vx, &vy);
        if (owner(p, x) != p->rank)
            continue;
        grow_owned(p, p->n + 1);
        p->x[p->n] = x;
        p->y[p->n] = y;
        p->vx[p->n] = vx - p->vmean[0];
        p->vy[p->n] = vy - p->vmean[1];
        p->id[p->n] = g;
        p->n++;
    }
    exchange_ghosts(p);
    energies(p, forces(p));
    p->e0 = p->ke + p->pe;
    p->drift = 0.0;
    p->migrated = 0;
    p->misplaced = 0;
}

static void particles_run(void *ctx)
{
    particles_t *p = ctx;
    for (long s = 0; s < p->steps; s++) {
        for (long i = 0; i < p->n; i++) {
            p->vx[i] += 0.5 * DT * p->ax[i];
            p->vy[i] += 0.5 * DT * p->ay[i];
            p->x[i] += DT * p->vx[i];
            p->y[i] += DT * p->vy[i];
        }
        migrate(p);
        exchange_ghosts(p);
        double pe = forces(p);
        for (long i = 0; i < p->n; i++) {
            p->vx[i] += 0.5 * DT * p->ax[i];
            p->vy[i] += 0.5 * DT * p->ay[i];
        }
        energies(p, pe);
        double d = fabs(p->ke + p->pe - p->e0);
        p->drift = d > p->drift ? d : p->drift;
    }
}

/* Rank 0's serial reference (all pairs, minimum image in x and y): the state after
 * steps steps into x, y, vx, vy (indexed by particle number), energies into ke, pe. */
static void reference(const particles_t *p, double *x, double *y, double *vx, double *vy,
                      double *ke, double *pe)
{
    long n = p->total;
    double *ax = calloc((size_t)n, sizeof(double)), *ay = calloc((size_t)n, sizeof(double));
    if (!ax || !ay) {
        fprintf(stderr, "app_particles: out of memory for the reference\n");
        MPI_Abort(MPI_COMM_WORLD, 2);
    }
    for (long g = 0; g < n; g++) {
        initial(p, g, &x[g], &y[g], &vx[g], &vy[g]);
        vx[g] -= p->vmean[0];
        vy[g] -= p->vmean[1];
    }
    for (long s = 0; s <= p->steps; s++) {
        if (s > 0)
            for (long i = 0; i < n; i++) {
                vx[i] += 0.5 * DT * ax[i];
                vy[i] += 0.5 * DT * ay[i];
                x[i] += DT * vx[i];
                y[i] += DT * vy[i];
                x[i] = x[i] < 0.0 ? x[i] + p->lx : x[i] >= p->lx ? x[i] - p->lx : x[i];
                y[i] = y[i] < 0.0 ? y[i] + p->ly : y[i] >= p->ly ? y[i] - p->ly : y[i];
            }
        memset(ax, 0, sizeof(double) * (size_t)n);
        memset(ay, 0, sizeof(double) * (size_t)n);
        *pe = 0.0;
        for (long i = 0; i < n; i++)
            for (long j = i + 1; j < n; j++) {
                double dx = min_image(x[i] - x[j], p->lx), dy = min_image(y[i] - y[j], p->ly);
                double r2 = dx * dx + dy * dy;
                if (r2 >= CUTOFF * CUTOFF)
                    continue;
                double u, f = pair(r2, &u);
                ax[i] += f * dx;
                ay[i] += f * dy;
                ax[j] -= f * dx;
                ay[j] -= f * dy;
                *pe += u;
            }
        if (s > 0)
            for (long i = 0; i < n; i++) {
                vx[i] += 0.5 * DT * ax[i];
                vy[i] += 0.5 * DT * ay[i];
            }
    }
    *ke = 0.0;
    for (long i = 0; i < n; i++)
        *ke += 0.5 * (vx[i] * vx[i] + vy[i] * vy[i]);
    free(ax);
    free(ay);
}

/* Compares the distributed final state with the serial reference on rank 0; returns ok. */
static int compare_reference(const app_opts_t *o, particles_t *p)
{
    int n = (int)p->n, *counts = NULL, *displs = NULL;
    double *mine = malloc(sizeof(double) * MIGRANT * (size_t)(p->n + 1)), *all = NULL;
    for (long i = 0; i < p->n; i++) {
        double *m = &mine[MIGRANT * i];
        m[0] = (double)p->id[i];
        m[1] = p->x[i];
        m[2] = p->y[i];
        m[3] = p->vx[i];
        m[4] = p->vy[i];
    }
    if (o->rank == 0) {
        counts = malloc(sizeof(int) * (size_t)o->nranks);
        displs = malloc(sizeof(int) * (size_t)o->nranks);
    }
    MPI_Gather(&n, 1, MPI_INT, counts, 1, MPI_INT, 0, MPI_COMM_WORLD);
    if (o->rank == 0) {
        int at = 0;
        for (int r = 0; r < o->nranks; r++) {
            displs[r] = at;
            counts[r] *= MIGRANT;
            at += counts[r];
        }
        all = malloc(sizeof(double) * (size_t)(at + 1));
    }
    MPI_Gatherv(mine, MIGRANT * n, MPI_DOUBLE, all, counts, displs, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    int ok = 1;
    if (o->rank == 0) {
        long t = p->total;
        double *x = malloc(sizeof(double) * 4 * (size_t)t), ke = 0.0, pe = 0.0;
        reference(p, x, x + t, x + 2 * t, x + 3 * t, &ke, &pe);
        double worst = 0.0;
        for (long k = 0; k < t; k++) { /* every particle is there once: checked before */
            const double *m = &all[MIGRANT * k];
            long g = (long)m[0];
            double d[4] = {min_image(m[1] - x[g], p->lx), min_image(m[2] - x[t + g], p->ly),
                           m[3] - x[2 * t + g], m[4] - x[3 * t + g]};
            for (int c = 0; c < 4; c++)
                worst = fabs(d[c]) > worst || d[c] != d[c] ? fabs(d[c]) : worst;
        }
        if (!(worst <= 1e-8))
            ok = app_fail(o, "a particle is %.3g off the serial all-pairs run", worst);
        if (!(fabs(ke - p->ke) <= 1e-9 * ke && fabs(pe - p->pe) <= 1e-9 * pe))
            ok = app_fail(o, "energies %.15g %.15g, the serial run %.15g %.15g", p->ke, p->pe, ke,
                          pe);
        app_note(o, "verified   positions and velocities within %.1e of a serial all-pairs run",
                 worst);
        free(x);
        free(all);
        free(counts);
        free(displs);
    }
    free(mine);
    return ok;
}

int main(int argc, char **argv)
{
    MPI_Init(&argc, &argv);
    app_opts_t o = {.prog = "app_particles"};
    app_param_t prm[] = {
        {"nx", 192, 30, 1, "lattice columns (box length nx * 0.8 along x, split over ranks)"},
        {"ny", 128, 12, 4, "lattice rows (box length ny * 0.8 along y)"},
        {"steps", 40, 100, 1, "time steps per run"},
    };
    app_parse(argc, argv, &o, prm, 3);
    particles_t p = {.nx = prm[0].value, .ny = prm[1].value, .steps = prm[2].value};
    p.total = p.nx * p.ny;
    p.lx = (double)p.nx * SPACING;
    p.ly = (double)p.ny * SPACING;
    p.rank = o.rank;
    p.nranks = o.nranks;
    p.left = (o.rank + o.nranks - 1) % o.nranks;
    p.right = (o.rank + 1) % o.nranks;
    p.xlo = edge(&p, o.rank);
    p.xhi = edge(&p, o.rank + 1);
    if (p.lx / o.nranks < CUTOFF || p.ly < 3 * CUTOFF) {
        if (o.rank == 0)
            fprintf(stderr,
                    "%s: slabs %.3g wide (at least the cutoff %g needed) or box height %.3g "
                    "(at least %g): raise --nx or --ny\n",
                    o.prog, p.lx / o.nranks, CUTOFF, p.ly, 3 * CUTOFF);
        MPI_Finalize();
        return 2;
    }
    p.ncx = (int)((p.xhi - p.xlo + 2 * CUTOFF) / CUTOFF);
    p.csx = (p.xhi - p.xlo + 2 * CUTOFF) / p.ncx;
    p.ncy = (int)(p.ly / CUTOFF);
    p.csy = p.ly / p.ncy;
    p.head = malloc(sizeof(int) * (size_t)(p.ncx * p.ncy));
    for (long g = 0; g < p.total; g++) { /* the same sums, in the same order, on every rank */
        double x, y, vx, vy;
        initial(&p, g, &x, &y, &vx, &vy);
        p.vmean[0] += vx;
        p.vmean[1] += vy;
    }
    p.vmean[0] /= (double)p.total;
    p.vmean[1] /= (double)p.total;
    grow_owned(&p, 2 * p.total / o.nranks + 64);

    app_describe(&o,
                 "2-D short-range particles, %ld (%ld x %ld lattice) in a %.1f x %.1f periodic "
                 "box, x split into %d slabs, %ld steps per run",
                 p.total, p.nx, p.ny, p.lx, p.ly, o.nranks, p.steps);
    app_kernel_t k = {particles_reset, particles_run, &p};
    double tmin, tmax;
    double t = app_time(&o, &k, &tmin, &tmax);
    app_report_rate(&o, p.total, (double)p.total * (double)p.steps / 1e6, "Mparticle-steps/s", t,
                    tmin, tmax);

    /* Verification: every particle once, in place; momentum, energy; the reference. */
    int ok = 1;
    unsigned long long sums[3] = {(unsigned long long)p.n, 0, 0}, g[3];
    double mom[2] = {0.0, 0.0}, gm[2];
    for (long i = 0; i < p.n; i++) {
        sums[1] += (unsigned long long)p.id[i];
        sums[2] += app_hash((uint64_t)p.id[i]);
        mom[0] += p.vx[i];
        mom[1] += p.vy[i];
        if (owner(&p, p.x[i]) != p.rank || p.y[i] < 0.0 || p.y[i] >= p.ly) {
            ok = app_fail(&o, "particle %ld at (%g, %g) is outside this rank's slab", p.id[i],
                          p.x[i], p.y[i]);
            break;
        }
    }
    MPI_Allreduce(sums, g, 3, MPI_UNSIGNED_LONG_LONG, MPI_SUM, MPI_COMM_WORLD);
    MPI_Allreduce(mom, gm, 2, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    unsigned long long want_hash = 0;
    for (long i = 0; i < p.total; i++)
        want_hash += app_hash((uint64_t)i);
    if (o.rank == 0) {
        unsigned long long tot = (unsigned long long)p.total;
        if (g[0] != tot || g[1] != tot * (tot - 1) / 2 || g[2] != want_hash)
            ok = app_fail(&o, "%llu particles after the run (%llu expected), or not each once",
                          g[0], tot);
        if (!(fabs(gm[0]) <= 1e-9 * (double)tot && fabs(gm[1]) <= 1e-9 * (double)tot))
            ok = app_fail(&o, "total momentum (%.3g, %.3g), not zero", gm[0], gm[1]);
        if (!(p.drift <= 1e-3 * fabs(p.e0)))
            ok = app_fail(&o, "total energy drifted by %.3g from %.10g", p.drift, p.e0);
    }
    if (p.misplaced)
        ok = app_fail(&o, "%d particles arrived outside this slab (moved too far in a step)",
                      p.misplaced);
    app_verdict(&o, ok, "particle count, placement, momentum or energy");
    long long migrated = app_int_total(p.migrated);
    app_note(&o,
             "verified   %ld particles each once, momentum (%.1e, %.1e), energy %.8g drifting "
             "at most %.1e (relative); %lld migrations in a run",
             p.total, gm[0], gm[1], p.e0, p.drift / fabs(p.e0), migrated);
    if (p.total <= REFERENCE_MAX) {
        ok = compare_reference(&o, &p);
        app_verdict(&o, ok, "against the serial all-pairs run");
    }
    int64_t sum = 0;
    for (long i = 0; i < p.n; i++)
        sum += app_fix(p.x[i]) + app_fix(p.y[i]);
    app_report_checksum(&o, p.total, app_fix_total(sum));

    free(p.x);
    free(p.y);
    free(p.vx);
    free(p.vy);
    free(p.ax);
    free(p.ay);
    free(p.id);
    free(p.gx);
    free(p.gy);
    free(p.px);
    free(p.py);
    free(p.sendl);
    free(p.sendr);
    free(p.recvb);
    free(p.head);
    free(p.next);
    MPI_Finalize();
    return 0;
}
