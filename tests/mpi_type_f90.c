/* mpi_type_f90: MPI_Type_create_f90_integer / _real / _complex: the kind chosen for
 * (p, r), one handle per request, envelope and contents (MPI_COMBINER_F90_*), refused
 * by MPI_Type_free, usable in communication; the error class of impossible requests;
 * MPI_Type_match_size. */
#include <string.h>

#include "mpi.h"
#include "test_util.h"

static int eclass(int rc)
{
    int c;
    MPI_Error_class(rc, &c);
    return c;
}

static void check_f90(MPI_Datatype t, int size, int combiner, int ni, int i0, int i1)
{
    int s, nint, nadd, ntyp, comb, ints[2] = {-9, -9};
    CHECK_RC(MPI_Type_size(t, &s), MPI_SUCCESS);
    CHECK(s == size);
    CHECK_RC(MPI_Type_get_envelope(t, &nint, &nadd, &ntyp, &comb), MPI_SUCCESS);
    CHECK(comb == combiner && nint == ni && nadd == 0 && ntyp == 0);
    CHECK_RC(MPI_Type_get_contents(t, 2, 0, 0, ints, NULL, NULL), MPI_SUCCESS);
    CHECK(ints[0] == i0 && (ni < 2 || ints[1] == i1));
}

int main(int argc, char **argv)
{
    int n, me;
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    MPI_Comm_size(MPI_COMM_WORLD, &n);
    MPI_Comm_rank(MPI_COMM_WORLD, &me);
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);

    MPI_Datatype t, t2;
    CHECK_RC(MPI_Type_create_f90_integer(9, &t), MPI_SUCCESS);
    check_f90(t, 4, MPI_COMBINER_F90_INTEGER, 1, 9, 0);
    CHECK_RC(MPI_Type_create_f90_integer(9, &t2), MPI_SUCCESS);
    CHECK(t == t2);
    CHECK_RC(MPI_Type_create_f90_integer(2, &t2), MPI_SUCCESS);
    check_f90(t2, 1, MPI_COMBINER_F90_INTEGER, 1, 2, 0);
    CHECK_RC(MPI_Type_create_f90_integer(10, &t2), MPI_SUCCESS);
    check_f90(t2, 8, MPI_COMBINER_F90_INTEGER, 1, 10, 0);
    CHECK(eclass(MPI_Type_create_f90_integer(39, &t2)) == MPI_ERR_ARG);
    CHECK(eclass(MPI_Type_free(&t)) == MPI_ERR_TYPE);

    MPI_Datatype r;
    CHECK_RC(MPI_Type_create_f90_real(6, MPI_UNDEFINED, &r), MPI_SUCCESS);
    check_f90(r, 4, MPI_COMBINER_F90_REAL, 2, 6, MPI_UNDEFINED);
    CHECK_RC(MPI_Type_create_f90_real(15, 300, &r), MPI_SUCCESS);
    check_f90(r, 8, MPI_COMBINER_F90_REAL, 2, 15, 300);
    CHECK_RC(MPI_Type_create_f90_real(MPI_UNDEFINED, 400, &t2), MPI_SUCCESS);
    check_f90(t2, 16, MPI_COMBINER_F90_REAL, 2, MPI_UNDEFINED, 400);
    CHECK(eclass(MPI_Type_create_f90_real(40, 10, &t2)) == MPI_ERR_ARG);
    CHECK(eclass(MPI_Type_create_f90_real(MPI_UNDEFINED, MPI_UNDEFINED, &t2)) == MPI_ERR_ARG);
    MPI_Datatype c;
    CHECK_RC(MPI_Type_create_f90_complex(7, 37, &c), MPI_SUCCESS);
    check_f90(c, 16, MPI_COMBINER_F90_COMPLEX, 2, 7, 37);
    CHECK(eclass(MPI_Type_create_f90_complex(5, 5000, &t2)) == MPI_ERR_ARG);

    /* the types carry data: ring exchange of an 8-byte real and a 16-byte complex */
    double x[3] = {me + 0.5, me * 2.0, me * 3.0}, y[3] = {0, 0, 0};
    int to = (me + 1) % n, from = (me + n - 1) % n;
    CHECK_RC(MPI_Sendrecv(x, 1, r, to, 1, y, 1, r, from, 1, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
             MPI_SUCCESS);
    CHECK(y[0] == from + 0.5);
    CHECK_RC(
        MPI_Sendrecv(x + 1, 1, c, to, 2, y + 1, 1, c, from, 2, MPI_COMM_WORLD, MPI_STATUS_IGNORE),
        MPI_SUCCESS);
    CHECK(y[1] == from * 2.0 && y[2] == from * 3.0);

    /* match_size */
    MPI_Datatype m;
    int s;
    CHECK_RC(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 4, &m), MPI_SUCCESS);
    MPI_Type_size(m, &s);
    CHECK(s == 4);
    CHECK_RC(MPI_Type_match_size(MPI_TYPECLASS_REAL, 8, &m), MPI_SUCCESS);
    MPI_Type_size(m, &s);
    CHECK(s == 8);
    CHECK_RC(MPI_Type_match_size(MPI_TYPECLASS_COMPLEX, 8, &m), MPI_SUCCESS);
    MPI_Type_size(m, &s);
    CHECK(s == 8);
    CHECK(eclass(MPI_Type_match_size(MPI_TYPECLASS_INTEGER, 3, &m)) == MPI_ERR_ARG);
    CHECK(eclass(MPI_Type_match_size(99, 4, &m)) == MPI_ERR_ARG);

    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (me == 0)
        printf("mpi_type_f90: ok\n");
    return 0;
}
