/* mpi_env_attr.c — attribute caching: keyvals with copy/delete callbacks on
 * communicators (Comm_dup copies through the callbacks, Comm_free deletes, in order;
 * failing callbacks fail the call), datatypes, the deprecated MPI-1 calls, the predefined
 * callbacks and attributes, error classes, and COMM_SELF's attributes deleted first at
 * MPI_Finalize. */
#include <limits.h>
#include <string.h>

#include "mpi.h"
#include "test_util.h"

#define LOG_MAX 64
static int log_kind[LOG_MAX], log_val[LOG_MAX], nlog; /* kind 'c' copy, 'd' delete */
static int copy_rc = MPI_SUCCESS, delete_rc = MPI_SUCCESS;
static int self_deleted, world_deleted_after_self;

static void logit(int kind, void *val)
{
    CHECK(nlog < LOG_MAX);
    log_kind[nlog] = kind;
    log_val[nlog] = (int)(intptr_t)val;
    nlog++;
}

static int copy_fn(MPI_Comm old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old;
    (void)keyval;
    CHECK(extra == (void *)&nlog);
    logit('c', in);
    if (copy_rc != MPI_SUCCESS)
        return copy_rc;
    *(void **)out = (void *)((intptr_t)in + 1000);
    *flag = 1;
    return MPI_SUCCESS;
}

static int delete_fn(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)comm;
    (void)keyval;
    CHECK(extra == (void *)&nlog);
    logit('d', val);
    return delete_rc;
}

static int self_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)val, (void)extra;
    CHECK(comm == MPI_COMM_SELF);
    self_deleted++;
    return MPI_SUCCESS;
}

static int world_delete(MPI_Comm comm, int keyval, void *val, void *extra)
{
    (void)keyval, (void)val, (void)extra;
    CHECK(comm == MPI_COMM_WORLD);
    world_deleted_after_self = self_deleted == 1;
    return MPI_SUCCESS;
}

static int type_copy(MPI_Datatype old, int keyval, void *extra, void *in, void *out, int *flag)
{
    (void)old, (void)keyval, (void)extra;
    *(void **)out = (void *)((intptr_t)in * 2);
    *flag = 1;
    return MPI_SUCCESS;
}

static int type_delete(MPI_Datatype t, int keyval, void *val, void *extra)
{
    (void)t, (void)keyval, (void)extra;
    logit('t', val);
    return MPI_SUCCESS;
}

int main(int argc, char **argv)
{
    CHECK_RC(MPI_Init(&argc, &argv), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN), MPI_SUCCESS);
    int size, flag;
    CHECK_RC(MPI_Comm_size(MPI_COMM_WORLD, &size), MPI_SUCCESS);

    /* predefined attributes */
    int *v;
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v >= 32767 && *v == 0x3FFFFFFF);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_HOST, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == MPI_PROC_NULL);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_IO, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == MPI_ANY_SOURCE);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WTIME_IS_GLOBAL, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == 0);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_APPNUM, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == 0);
    CHECK_RC(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_UNIVERSE_SIZE, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == size);
    CHECK_RC(MPI_Attr_get(MPI_COMM_WORLD, MPI_TAG_UB, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == 0x3FFFFFFF);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, MPI_TAG_UB, NULL), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_delete_attr(MPI_COMM_WORLD, MPI_TAG_UB), MPI_ERR_KEYVAL);
    int k = MPI_TAG_UB;
    CHECK_CLASS(MPI_Comm_free_keyval(&k), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_WIN_BASE, &v, &flag), MPI_ERR_KEYVAL);

    /* user keyvals: copy on dup, delete on free / delete_attr / overwrite */
    int k1, k2, knocopy;
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, delete_fn, &k1, &nlog), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, delete_fn, &k2, &nlog), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, MPI_COMM_NULL_DELETE_FN, &knocopy, NULL),
             MPI_SUCCESS);
    CHECK(k1 != k2 && k1 != MPI_KEYVAL_INVALID);
    MPI_Comm c;
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(c, k1, (void *)1), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(c, k2, (void *)2), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(c, knocopy, (void *)3), MPI_SUCCESS);
    CHECK(nlog == 0);
    CHECK_RC(MPI_Comm_set_attr(c, k1, (void *)11), MPI_SUCCESS); /* deletes the old value */
    CHECK(nlog == 1 && log_kind[0] == 'd' && log_val[0] == 1);
    void *val;
    CHECK_RC(MPI_Comm_get_attr(c, k1, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)11);

    MPI_Comm d;
    nlog = 0;
    CHECK_RC(MPI_Comm_dup(c, &d), MPI_SUCCESS);
    CHECK(nlog == 2 && log_kind[0] == 'c' && log_kind[1] == 'c');
    CHECK_RC(MPI_Comm_get_attr(d, k1, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)1011);
    CHECK_RC(MPI_Comm_get_attr(d, k2, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)1002);
    CHECK_RC(MPI_Comm_get_attr(d, knocopy, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_get_attr(c, knocopy, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)3);

    /* freeing the keyval keeps the attributes (and their callbacks) alive */
    int k1copy = k1;
    CHECK_RC(MPI_Comm_free_keyval(&k1), MPI_SUCCESS);
    CHECK(k1 == MPI_KEYVAL_INVALID);
    CHECK_CLASS(MPI_Comm_get_attr(c, k1copy, &val, &flag), MPI_ERR_KEYVAL);

    /* free: delete callbacks, newest first */
    nlog = 0;
    CHECK_RC(MPI_Comm_free(&d), MPI_SUCCESS);
    CHECK(nlog == 2 && log_kind[0] == 'd' && log_val[0] == 1002 && log_val[1] == 1011);

    /* a failing copy callback fails the dup; a failing delete callback fails delete */
    copy_rc = MPI_ERR_OTHER;
    nlog = 0;
    CHECK(MPI_Comm_dup(c, &d) != MPI_SUCCESS);
    copy_rc = MPI_SUCCESS;
    delete_rc = MPI_ERR_ARG;
    CHECK_CLASS(MPI_Comm_delete_attr(c, k2), MPI_ERR_ARG);
    CHECK_RC(MPI_Comm_get_attr(c, k2, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)2);
    delete_rc = MPI_SUCCESS;
    nlog = 0;
    CHECK_RC(MPI_Comm_delete_attr(c, k2), MPI_SUCCESS);
    CHECK(nlog == 1 && log_val[0] == 2);
    CHECK_RC(MPI_Comm_get_attr(c, k2, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Comm_delete_attr(c, k2), MPI_SUCCESS); /* nothing there: fine */
    nlog = 0;
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
    CHECK(nlog == 1 && log_val[0] == 11);
    CHECK_RC(MPI_Comm_free_keyval(&k2), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&knocopy), MPI_SUCCESS);
    CHECK_CLASS(MPI_Comm_free_keyval(&knocopy), MPI_ERR_KEYVAL);

    /* predefined callbacks */
    int kdup;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &kdup, NULL),
             MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, kdup, (void *)77), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_dup(MPI_COMM_WORLD, &c), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_get_attr(c, kdup, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)77);
    CHECK_RC(MPI_Comm_get_attr(c, MPI_TAG_UB, &v, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && *v == 0x3FFFFFFF);
    CHECK_RC(MPI_Comm_free(&c), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_delete_attr(MPI_COMM_WORLD, kdup), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&kdup), MPI_SUCCESS);

    /* deprecated MPI-1 calls */
    int kold;
    CHECK_RC(MPI_Keyval_create(MPI_DUP_FN, MPI_NULL_DELETE_FN, &kold, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Attr_put(MPI_COMM_SELF, kold, (void *)5), MPI_SUCCESS);
    CHECK_RC(MPI_Attr_get(MPI_COMM_SELF, kold, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)5);
    CHECK_RC(MPI_Attr_delete(MPI_COMM_SELF, kold), MPI_SUCCESS);
    CHECK_RC(MPI_Attr_get(MPI_COMM_SELF, kold, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Keyval_free(&kold), MPI_SUCCESS);
    int dummy;
    CHECK_RC(MPI_NULL_COPY_FN(MPI_COMM_WORLD, 0, NULL, NULL, &val, &dummy), MPI_SUCCESS);
    CHECK(dummy == 0);

    /* errors */
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_NULL, MPI_TAG_UB, NULL), MPI_ERR_COMM);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, 12345, &val, &flag), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, &val, NULL), MPI_ERR_ARG);
    CHECK_CLASS(MPI_Comm_create_keyval(copy_fn, delete_fn, NULL, NULL), MPI_ERR_ARG);

    /* datatypes: keyvals of their own kind, copies on Type_dup, predefined types too */
    int tk, wrongk;
    CHECK_RC(MPI_Type_create_keyval(type_copy, type_delete, &tk, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(copy_fn, delete_fn, &wrongk, &nlog), MPI_SUCCESS);
    CHECK_CLASS(MPI_Type_set_attr(MPI_INT, wrongk, NULL), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Comm_set_attr(MPI_COMM_WORLD, tk, NULL), MPI_ERR_KEYVAL);
    CHECK_CLASS(MPI_Type_set_attr(MPI_DATATYPE_NULL, tk, NULL), MPI_ERR_TYPE);
    MPI_Datatype t, t2;
    CHECK_RC(MPI_Type_contiguous(4, MPI_INT, &t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_set_attr(t, tk, (void *)21), MPI_SUCCESS);
    CHECK_RC(MPI_Type_dup(t, &t2), MPI_SUCCESS);
    CHECK_RC(MPI_Type_get_attr(t2, tk, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)42);
    nlog = 0;
    CHECK_RC(MPI_Type_free(&t2), MPI_SUCCESS);
    CHECK(nlog == 1 && log_kind[0] == 't' && log_val[0] == 42);
    CHECK_RC(MPI_Type_delete_attr(t, tk), MPI_SUCCESS);
    CHECK(nlog == 2 && log_val[1] == 21);
    CHECK_RC(MPI_Type_free(&t), MPI_SUCCESS);
    CHECK_RC(MPI_Type_set_attr(MPI_DOUBLE, tk, (void *)8), MPI_SUCCESS);
    CHECK_RC(MPI_Type_get_attr(MPI_DOUBLE, tk, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 1 && val == (void *)8);
    CHECK_RC(MPI_Type_get_attr(MPI_INT, tk, &val, &flag), MPI_SUCCESS);
    CHECK(flag == 0);
    CHECK_RC(MPI_Type_delete_attr(MPI_DOUBLE, tk), MPI_SUCCESS);
    CHECK_RC(MPI_Type_free_keyval(&tk), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&wrongk), MPI_SUCCESS);

    /* windows do not exist yet */
    int wk;
    CHECK_RC(MPI_Win_create_keyval(MPI_WIN_NULL_COPY_FN, MPI_WIN_NULL_DELETE_FN, &wk, NULL),
             MPI_SUCCESS);
    CHECK_CLASS(MPI_Win_set_attr(MPI_WIN_NULL, wk, NULL), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_get_attr(MPI_WIN_NULL, wk, &val, &flag), MPI_ERR_WIN);
    CHECK_CLASS(MPI_Win_delete_attr(MPI_WIN_NULL, wk), MPI_ERR_WIN);
    CHECK_RC(MPI_Win_free_keyval(&wk), MPI_SUCCESS);

    /* MPI_Finalize deletes COMM_SELF's attributes first */
    int ks, kw;
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, self_delete, &ks, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_create_keyval(MPI_COMM_NULL_COPY_FN, world_delete, &kw, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_WORLD, kw, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_set_attr(MPI_COMM_SELF, ks, NULL), MPI_SUCCESS);
    CHECK_RC(MPI_Comm_free_keyval(&ks), MPI_SUCCESS);
    CHECK_RC(MPI_Finalize(), MPI_SUCCESS);
    CHECK(self_deleted == 1 && world_deleted_after_self == 1);
    return 0;
}
