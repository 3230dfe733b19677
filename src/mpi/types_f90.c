/* types_f90.c — MPI_Type_create_f90_integer / _real / _complex and MPI_Type_match_size
 * (MPI-4.0 19.1.9).
 *
 * A (p, r) request selects the smallest Fortran kind that holds it, as
 * SELECTED_INT_KIND / SELECTED_REAL_KIND do with gfortran's kinds: integers of 1, 2, 4,
 * 8 and 16 bytes (decimal ranges 2, 4, 9, 18, 38), reals of 4 and 8 bytes (precision
 * 6, 15; range 37, 307), C's long double (x86: 18, 4931) and 16 bytes (33, 4931),
 * complexes of two such reals; kinds whose type this build lacks are skipped; none
 * holds it: MPI_ERR_ARG. MPI_UNDEFINED for p or r leaves it free (not both for reals).
 * The answer is a duplicate of the matching named type (MPI_INTEGERn, MPI_REALn,
 * MPI_COMPLEXn), committed, made once per (class, p, r) and kept for the rest of the
 * session: the standard calls these types predefined, so MPI_Type_free refuses them,
 * and MPI_Type_get_envelope / _get_contents report MPI_COMBINER_F90_* with the
 * integers {r} or {p, r} (mpii_type_f90_contents, called by types.c).
 * (MPI_Type_match_size is in types.c.) */
#include <float.h>
#include <stdlib.h>

#include "mpi/mpi_impl.h"

typedef struct f90_type {
    int combiner, p, r;
    MPI_Datatype h;
} f90_type_t;

static f90_type_t *f90_made;
static int f90_n, f90_cap;

void mpii_type_f90_reset(void)
{
    free(f90_made);
    f90_made = NULL;
    f90_n = f90_cap = 0;
}

int mpii_type_f90_contents(MPI_Datatype h, int *combiner, int *ni, int ints[2])
{
    for (int i = 0; i < f90_n; i++)
        if (f90_made[i].h == h) {
            *combiner = f90_made[i].combiner;
            if (*combiner == MPI_COMBINER_F90_INTEGER) {
                *ni = 1;
                ints[0] = f90_made[i].r;
            } else {
                *ni = 2;
                ints[0] = f90_made[i].p;
                ints[1] = f90_made[i].r;
            }
            return 1;
        }
    return 0;
}

/* The type made for (combiner, p, r) from base, made at the first request. */
static int f90_get(int combiner, int p, int r, MPI_Datatype base, MPI_Datatype *out)
{
    for (int i = 0; i < f90_n; i++)
        if (f90_made[i].combiner == combiner && f90_made[i].p == p && f90_made[i].r == r) {
            *out = f90_made[i].h;
            return MPI_SUCCESS;
        }
    if (f90_n == f90_cap) {
        int cap = f90_cap ? 2 * f90_cap : 8;
        f90_type_t *m = realloc(f90_made, (size_t)cap * sizeof *m);
        if (!m)
            return MPI_ERR_NO_MEM;
        f90_made = m;
        f90_cap = cap;
    }
    MPI_Datatype h;
    int rc = PMPI_Type_dup(base, &h);
    if (rc != MPI_SUCCESS)
        return rc;
    PMPI_Type_commit(&h);
    f90_made[f90_n++] = (f90_type_t){combiner, p, r, h};
    *out = h;
    return MPI_SUCCESS;
}

int PMPI_Type_create_f90_integer(int r, MPI_Datatype *newtype)
{
    static const char fn[] = "MPI_Type_create_f90_integer";
    MPII_CHECK_INIT(fn);
    static const struct {
        int range;
        MPI_Datatype t;
    } k[] = {{2, MPI_INTEGER1},
             {4, MPI_INTEGER2},
             {9, MPI_INTEGER4},
             {18, MPI_INTEGER8},
             {38, MPI_INTEGER16}};
    if (!newtype)
        return MPII_ERR_NULL(MPI_COMM_NULL, "newtype", fn);
    int want = r == MPI_UNDEFINED ? 0 : r;
    for (size_t i = 0; i < sizeof k / sizeof k[0]; i++)
        if (want <= k[i].range && mpii_type_get(k[i].t)) {
            int rc = f90_get(MPI_COMBINER_F90_INTEGER, MPI_UNDEFINED, r, k[i].t, newtype);
            return rc ? MPII_ERR(rc, fn) : MPI_SUCCESS;
        }
    return mpii_errf(0, 0, MPI_ERR_ARG, fn, "no integer kind has a decimal range of %d", r);
}
MPII_WEAK(MPI_Type_create_f90_integer, PMPI_Type_create_f90_integer)

/* The real kinds, smallest first: precision and decimal range, the real and complex
 * types. */
static const struct {
    int prec, range;
    MPI_Datatype real, complex;
} f90_reals[] = {
    {6, 37, MPI_REAL4, MPI_COMPLEX8},
    {15, 307, MPI_REAL8, MPI_COMPLEX16},
    {LDBL_DIG, LDBL_MAX_10_EXP, MPI_LONG_DOUBLE, MPI_C_LONG_DOUBLE_COMPLEX},
    {33, 4931, MPI_REAL16, MPI_COMPLEX32},
};

static int f90_real_entry(int complex, int p, int r, MPI_Datatype *newtype, const char *fn)
{
    MPII_CHECK_INIT(fn);
    if (!newtype)
        return MPII_ERR_NULL(MPI_COMM_NULL, "newtype", fn);
    if (p == MPI_UNDEFINED && r == MPI_UNDEFINED)
        return MPII_ERRF(MPI_ERR_ARG, fn, "p and r are both MPI_UNDEFINED");
    int wp = p == MPI_UNDEFINED ? 0 : p, wr = r == MPI_UNDEFINED ? 0 : r;
    for (size_t i = 0; i < sizeof f90_reals / sizeof f90_reals[0]; i++) {
        MPI_Datatype base = complex ? f90_reals[i].complex : f90_reals[i].real;
        if (wp > f90_reals[i].prec || wr > f90_reals[i].range || !mpii_type_get(base))
            continue; /* (not mpii_type_get: a type this build lacks) */
        int rc = f90_get(complex ? MPI_COMBINER_F90_COMPLEX : MPI_COMBINER_F90_REAL, p, r, base,
                         newtype);
        return rc ? MPII_ERR(rc, fn) : MPI_SUCCESS;
    }
    return mpii_errf(0, 0, MPI_ERR_ARG, fn,
                     "no real kind has a precision of %d and a decimal range of %d", p, r);
}

int PMPI_Type_create_f90_real(int p, int r, MPI_Datatype *newtype)
{
    return f90_real_entry(0, p, r, newtype, "MPI_Type_create_f90_real");
}
MPII_WEAK(MPI_Type_create_f90_real, PMPI_Type_create_f90_real)

int PMPI_Type_create_f90_complex(int p, int r, MPI_Datatype *newtype)
{
    return f90_real_entry(1, p, r, newtype, "MPI_Type_create_f90_complex");
}
MPII_WEAK(MPI_Type_create_f90_complex, PMPI_Type_create_f90_complex)
