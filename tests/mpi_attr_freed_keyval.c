/* mpi_attr_freed_keyval.c — a freed keyval whose attributes still exist (MPI-4.0 7.7.2:
 * "the actual free does not transpire until after all references ... have been freed",
 * by MPI_*_delete_attr or by freeing the object), on communicators, datatypes and
 * windows:
 *   - the attributes keep their callbacks: a dup copies them, a free deletes them;
 *   - MPI_*_delete_attr with the freed keyval's old value removes one (MPICH's
 *     attr/fkeyval*), and MPI_*_free_keyval again is a no-op while attributes remain,
 *     also from inside a delete callback (attr/keyval_double_free*);
 *   - set and get under the freed keyval are MPI_ERR_KEYVAL, and once the last
 *     attribute is gone the old value is no keyval at all (MPI_ERR_KEYVAL everywhere);
 *   - an attribute error on a window goes to the window's error handler.
 * Attribute values are counters the callbacks change, so the checks see which callback
 * ran how often on which value. */
#include <stdint.h>

#include "mpi.h"
#include "test_util.h"

static int copies, deletes;
static intptr_t last_deleted;

static int count_copy(int old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)extra;
    copies++;
    *(void **)out = (void *)((intptr_t)in + 100);
    *flag = 1;
    return MPI_SUCCESS;
}

static int count_delete(int obj, int keyval, void *val, void *extra)
{
    (void)obj, (void)keyval, (void)extra;
    deletes++;
    last_deleted = (intptr_t)val;
    return MPI_SUCCESS;
}

/* A delete callback that frees its keyval (its own copy of the handle), as MPICH's
 * keyval_double_free does; the caller frees it again later. */
static int kind_of_free; /* 'c' comm, 't' type, 'w' win */
static int freeing_delete(int obj, int keyval, void *val, void *extra)
{
    (void)obj, (void)val, (void)extra;
    deletes++;
    int k = keyval;
    int rc = kind_of_free == 'c'   ? MPI_Comm_free_keyval(&k)
             : kind_of_free == 't' ? MPI_Type_free_keyval(&k)
                                   : MPI_Win_free_keyval(&k);
    CHECK(rc == MPI_SUCCESS && k == MPI_KEYVAL_INVALID);
    return MPI_SUCCESS;
}

static int comm_copy(MPI_Comm o, int k, void *e, void *in, void *out, int *f)
{
    return count_copy(o, k, e, in, out, f);
}
static int comm_delete(MPI_Comm o, int k, void *v, void *e)
{
    return count_delete(o, k, v, e);
}
static int comm_freeing_delete(MPI_Comm o, int k, void *v, void *e)
{
    return freeing_delete(o, k, v, e);
}
static int type_copy(MPI_Datatype o, int k, void *e, void *in, void *out, int *f)
{
    return count_copy(o, k, e, in, out, f);
}
static int type_delete(MPI_Datatype o, int k, void *v, void *e)
{
    return count_delete(o, k, v, e);
}
static int type_freeing_delete(MPI_Datatype o, int k, void *v, void *e)
{
    return freeing_delete(o, k, v, e);
}
static int win_delete(MPI_Win o, int k, void *v, void *e)
{
    return count_delete(o, k, v, e);
}
static int win_freeing_delete(MPI_Win o, int k, void *v, void *e)
{
    return freeing_delete(o, k, v, e);
}

static void reset(void)
{
    copies = deletes = 0;
    last_deleted = -1;
}

static void comm_cases(void)
{
    void *val;
    int flag;
    MPI_Comm c, d;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN), MPI_SUCCESS);

    /* fkeyval: free the keyval in use; dup and free still run its callbacks */
    int k, old;
    CHECK_RC(MPI_Comm_create_keyval(comm_copy, comm_delete, &k, NULL), MPI_SUCCESS);
    old = k;
    CHECK_RC(MPI_Comm_set_attr(c, k, (void *)7), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&k), MPI_SUCCESS);
    CHECK(k == MPI_KEYVAL_INVALID);
    reset();
    CHECK_RC(MPI_Comm_dup(c, &d), MPI_SUCCESS);
    CHECK(copies == 1);
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    CHECK(deletes == 1 && last_deleted == 107);
    /* set and get do not take it; delete does, once */
    CHECK_CLASS(MPI_Comm_set_attr(c, old, (void *)8), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(c, old, &val, &flag), MPI_ERR_KEYVAL);
    reset();
    CHECK_RC(MPI_Comm_delete_attr(c, old), MPI_SUCCESS);
    CHECK(deletes == 1 && last_deleted == 7);
    /* the last attribute is gone, and the keyval with it */
    CHECK_CLASS(MPI_Comm_delete_attr(c, old), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_free_keyval(&old), MPI_ERR_KEYVAL);

    /* the deprecated calls behave the same (fkeyval uses them) */
    CHECK_RC(MPI_Keyval_create(comm_copy, comm_delete, &k, NULL), MPI_SUCCESS);
    old = k;
    CHECK_RC(MPI_Attr_put(c, k, (void *)9), MPI_SUCCESS);
    CHECK_RC(MPI_Keyval_free(&k), MPI_SUCCESS);
    reset();
    CHECK_RC(MPI_Attr_delete(c, old), MPI_SUCCESS);
    CHECK(deletes == 1 && last_deleted == 9);
    CHECK_CLASS(MPI_Attr_delete(c, old), MPI_ERR_KEYVAL);

    /* keyval_double_free: the delete callback frees the keyval, then the program frees
     * it twice more while an attribute still holds it */
    kind_of_free = 'c';
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, comm_freeing_delete, &k, NULL),
             MPI_SUCCESS);
    int copy1 = k, copy2 = k;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_SELF, &d), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(c, k, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(d, k, NULL), MPI_SUCCESS);
    reset();
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS); /* first free, in the callback */
    CHECK(deletes == 1);
    CHECK_RC(MPI_Comm_free_keyval(&k), MPI_SUCCESS); /* second */
    CHECK(k == MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Comm_free_keyval(&copy1), MPI_SUCCESS); /* third */
    CHECK(copy1 == MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS); /* the last attribute: a fourth free inside */
    CHECK(deletes == 2);
    CHECK_CLASS(MPI_Comm_free_keyval(&copy2), MPI_ERR_KEYVAL);
}

static void type_cases(void)
{
    void *val;
    int flag, k, old, copy;
    MPI_Datatype t, t2;
    CHECK_RC(MPI_Type_contiguous(3, MPI_INT, &t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_create_keyval(type_copy, type_delete, &k, NULL), MPI_SUCCESS);
    old = copy = k;
    CHECK_RC(MPI_Type_set_attr(t, k, (void *)5), MPI_SUCCESS);
    CHECK_RC(MPI_Type_set_attr(MPI_INT, k, (void *)6), MPI_SUCCESS); /* predefined too */
    CHECK_RC(MPI_Type_free_keyval(&k), MPI_SUCCESS);
    CHECK(k == MPI_KEYVAL_INVALID);
    reset();
    CHECK_RC(MPI_Type_dup(t, &t2), MPI_SUCCESS);
    CHECK(copies == 1);
    CHECK_CLASS(MPI_Type_get_attr(t2, old, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_set_attr(t2, old, NULL), MPI_ERR_KEYVAL);
    CHECK_RC(MPI_Type_free(&t2), MPI_SUCCESS);
    CHECK(deletes == 1 && last_deleted == 105);
    CHECK_RC(MPI_Type_free_keyval(&copy), MPI_SUCCESS); /* again: no-op */
    CHECK(copy == MPI_KEYVAL_INVALID);
    CHECK_RC(MPI_Type_free(&t), MPI_SUCCESS);
    CHECK(deletes == 2 && last_deleted == 5);
    CHECK_RC(MPI_Type_delete_attr(MPI_INT, old), MPI_SUCCESS);
    CHECK(deletes == 3 && last_deleted == 6);
    CHECK_CLASS(MPI_Type_delete_attr(MPI_INT, old), MPI_ERR_KEYVAL);

    /* keyval_double_free_type: the delete callback frees the keyval */
    kind_of_free = 't';
    CHECK_RC(MPI_Type_create_keyval(MPI_TYPE_NULL_COPY_FN, type_freeing_delete, &k, NULL),
             MPI_SUCCESS);
    int copy1 = k, copy2 = k;
    CHECK_RC(MPI_Type_contiguous(2, MPI_INT, &t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_set_attr(t, k, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Type_set_attr(MPI_DOUBLE, k, NULL), MPI_SUCCESS);
    reset();
    CHECK_RC(MPI_Type_free(&t), MPI_SUCCESS);
    CHECK(deletes == 1);
    CHECK_RC(MPI_Type_free_keyval(&k), MPI_SUCCESS);
    CHECK_RC(MPI_Type_free_keyval(&copy1), MPI_SUCCESS);
    CHECK_RC(MPI_Type_delete_attr(MPI_DOUBLE, copy2), MPI_SUCCESS);
    CHECK(deletes == 2);
    CHECK_CLASS(MPI_Type_free_keyval(&copy2), MPI_ERR_KEYVAL);
}

static void win_cases(void)
{
    int rank, buf[4] = {0}, k, old, flag;
    void *val;
    MPI_Win w;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPI_Win_create(buf, sizeof buf, sizeof buf[0], MPI_INFO_NULL, MPI_COMM_WORLD, &w),
             MPI_SUCCESS);
    /* errors go to the window's handler: MPI_COMM_WORLD's is fatal here */
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL), MPI_SUCCESS);
    CHECK_RC(MPI_Win_set_errhandler(w, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_set_attr(w, 999999, NULL), MPI_ERR_KEYVAL);

    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_delete, &k, NULL), MPI_SUCCESS);
    old = k;
    CHECK_RC(MPI_Win_set_attr(w, k, (void *)(intptr_t)(rank + 1)), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free_keyval(&k), MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_get_attr(w, old, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Win_set_attr(w, old, NULL), MPI_ERR_KEYVAL);
    reset();
    CHECK_RC(MPI_Win_delete_attr(w, old), MPI_SUCCESS);
    CHECK(deletes == 1 && last_deleted == rank + 1);
    CHECK_CLASS(MPI_Win_delete_attr(w, old), MPI_ERR_KEYVAL);

    /* keyval_double_free_win */
    kind_of_free = 'w';
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, win_freeing_delete, &k, NULL),
             MPI_SUCCESS);
    int copy1 = k, copy2 = k;
    CHECK_RC(MPI_Win_set_attr(w, k, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free_keyval(&k), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free_keyval(&copy1), MPI_SUCCESS);
    reset();
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    CHECK_RC(MPI_Win_free(&w), MPI_SUCCESS); /* the callback frees once more */
    CHECK(deletes == 1);
    CHECK_CLASS(MPI_Win_free_keyval(&copy2), MPI_ERR_KEYVAL);
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    comm_cases();
    type_cases();
    win_cases();
    int rank;
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    if (rank == 0)
        printf("mpi_attr_freed_keyval: OK\n");
    return 0;
}
