/* attr.c — attribute caching (MPI-4.0 section 7.7): keyvals, attributes on
 * communicators, datatypes and windows, the predefined callbacks and the predefined
 * attributes.
 *
 * A keyval is an object in the KEYVAL table (mpii_keyval_t) with a reference for its
 * handle and one per attribute using it: MPI_*_free_keyval marks it freed and it
 * disappears with its last attribute. Until then its handle still names it for what
 * MPI-4.0 7.7.2 asks of a freed key in use: the program removes those attributes with
 * MPI_*_delete_attr (so delete takes a freed keyval), and a callback may free the keyval
 * again (a later free of a freed keyval is a no-op, as in MPICH: attr/keyval_double_free).
 * Setting or getting a value under a freed keyval is MPI_ERR_KEYVAL. An object's
 * attributes are a singly linked list, newest first; deleting them all (object free)
 * runs the delete callbacks in that order, the reverse of the order they were set, as
 * MPI-4.0 11.2.2 asks for MPI_COMM_SELF at MPI_Finalize.
 *
 * The predefined attributes (MPI_TAG_UB, MPI_HOST, MPI_IO, MPI_WTIME_IS_GLOBAL,
 * MPI_UNIVERSE_SIZE, MPI_LASTUSEDCODE, MPI_APPNUM) are not stored in lists: every
 * communicator answers them (MPI caches them on MPI_COMM_WORLD; programs ask on any
 * communicator, and a duplicate of MPI_COMM_WORLD would have them too). They cannot be
 * set, deleted or freed (MPI_ERR_KEYVAL). Windows keep their lists in win.c, which also
 * answers the predefined window keyvals (MPI_WIN_BASE ...). */
#include <stdlib.h>
#include <string.h>

#include "mpi/mpi_impl.h"

struct mpii_attr {
    mpii_keyval_t *kv;
    int keyval; /* kv's handle */
    void *val;
    struct mpii_attr *next;
};

/* Predefined keyvals, indices 1..12 of the KEYVAL table. */
enum { KV_PREDEF_LAST = 12, KV_COMM_LAST = 7 };
static mpii_keyval_t kv_predef[KV_PREDEF_LAST + 1];

/* Predefined attribute values (get_attr returns a pointer to them). */
static int attr_tag_ub, attr_host, attr_io, attr_wtime_global, attr_universe, attr_lastused,
    attr_appnum;

static int is_predef_keyval(int keyval)
{
    int i = FMPL_MPI_HANDLE_INDEX(keyval);
    return FMPL_MPI_HANDLE_KIND(keyval) == FMPL_MPI_KIND_KEYVAL && i >= 1 && i <= KV_PREDEF_LAST;
}

/* The keyval behind a handle of the given kind, or NULL. A freed keyval that attributes
 * still use is returned only when freed_ok. */
static mpii_keyval_t *kv_get(int keyval, int kind, int freed_ok)
{
    mpii_keyval_t *kv = (mpii_keyval_t *)mpii_handle_get(FMPL_MPI_KIND_KEYVAL, keyval);
    if (!kv || (kv->freed && !freed_ok) || kv->kind != kind)
        return NULL;
    return kv;
}

static void kv_unref(mpii_keyval_t *kv, int keyval)
{
    if (--kv->refs == 0 && !is_predef_keyval(keyval)) {
        mpii_handle_del(FMPL_MPI_KIND_KEYVAL, keyval);
        free(kv);
    }
}

int mpii_attr_init(void)
{
    for (int i = 1; i <= KV_PREDEF_LAST; i++) {
        kv_predef[i] = (mpii_keyval_t){
            .kind = i <= KV_COMM_LAST ? FMPL_MPI_KIND_COMM : FMPL_MPI_KIND_WIN, .refs = 1};
        mpii_handle_set(FMPL_MPI_KIND_KEYVAL, i, &kv_predef[i]);
    }
    attr_tag_ub = MPII_TAG_UB;
    attr_host = MPI_PROC_NULL;
    attr_io = MPI_ANY_SOURCE;
    attr_wtime_global = 0;
    attr_universe = mpii.world_size;
    attr_appnum = boot_appnum(mpii.boot); /* spawn_multiple: the index of the command */
    return MPI_SUCCESS;
}

void mpii_attr_finalize(void)
{
    mpii_table_t *t = &mpii_tables[FMPL_MPI_KIND_KEYVAL];
    for (int i = FMPL_MPI_PREDEF_MAX; i < t->cap; i++) {
        free(t->obj[i]);
        t->obj[i] = NULL;
    }
    for (int i = 1; i <= KV_PREDEF_LAST; i++)
        mpii_handle_set(FMPL_MPI_KIND_KEYVAL, i, NULL);
    t->live = 0;
    t->next_free = 0;
}

/* ---------------------------------------------------------------- callbacks */

static int call_copy(int kind, const mpii_attr_t *a, int oldhandle, void **out, int *flag)
{
    mpii_keyval_t *kv = a->kv;
    *flag = 0;
    if (!kv->copy_fn)
        return MPI_SUCCESS; /* as MPI_*_NULL_COPY_FN */
    switch (kind) {
    case FMPL_MPI_KIND_DATATYPE:
        return ((MPI_Type_copy_attr_function *)kv->copy_fn)(oldhandle, a->keyval, kv->extra_state,
                                                            a->val, out, flag);
    case FMPL_MPI_KIND_WIN:
        return ((MPI_Win_copy_attr_function *)kv->copy_fn)(oldhandle, a->keyval, kv->extra_state,
                                                           a->val, out, flag);
    default:
        return ((MPI_Comm_copy_attr_function *)kv->copy_fn)(oldhandle, a->keyval, kv->extra_state,
                                                            a->val, out, flag);
    }
}

static int call_delete(int kind, const mpii_attr_t *a, int handle)
{
    mpii_keyval_t *kv = a->kv;
    if (!kv->delete_fn)
        return MPI_SUCCESS;
    switch (kind) {
    case FMPL_MPI_KIND_DATATYPE:
        return ((MPI_Type_delete_attr_function *)kv->delete_fn)(handle, a->keyval, a->val,
                                                                kv->extra_state);
    case FMPL_MPI_KIND_WIN:
        return ((MPI_Win_delete_attr_function *)kv->delete_fn)(handle, a->keyval, a->val,
                                                               kv->extra_state);
    default:
        return ((MPI_Comm_delete_attr_function *)kv->delete_fn)(handle, a->keyval, a->val,
                                                                kv->extra_state);
    }
}

static void attr_drop(mpii_attr_t *a)
{
    kv_unref(a->kv, a->keyval);
    free(a);
}

int mpii_attr_copy(int kind, int oldhandle, mpii_attr_t *oldlist, int newhandle,
                   mpii_attr_t **newlist)
{
    (void)newhandle;
    mpii_attr_t *head = NULL, **tail = &head;
    int rc = MPI_SUCCESS;
    for (const mpii_attr_t *a = oldlist; a; a = a->next) {
        void *out = NULL;
        int flag = 0;
        rc = call_copy(kind, a, oldhandle, &out, &flag);
        if (rc != MPI_SUCCESS)
            break;
        if (!flag)
            continue;
        mpii_attr_t *n = malloc(sizeof *n);
        if (!n) {
            rc = MPI_ERR_NO_MEM;
            break;
        }
        *n = (mpii_attr_t){a->kv, a->keyval, out, NULL};
        a->kv->refs++;
        *tail = n;
        tail = &n->next;
    }
    if (rc != MPI_SUCCESS) {
        while (head) {
            mpii_attr_t *n = head->next;
            attr_drop(head);
            head = n;
        }
    }
    *newlist = head;
    return rc;
}

int mpii_attr_delete_all(int kind, int handle, mpii_attr_t **list)
{
    while (*list) {
        mpii_attr_t *a = *list;
        int rc = call_delete(kind, a, handle);
        if (rc != MPI_SUCCESS)
            return rc;
        *list = a->next;
        attr_drop(a);
    }
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- predefined callbacks */

/* MPI_COMM_NULL_COPY_FN: the attribute is not copied. */
int MPI_COMM_NULL_COPY_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state, (void)attribute_val_in;
    (void)attribute_val_out;
    *flag = 0;
    return MPI_SUCCESS;
}

/* MPI_COMM_DUP_FN: the new object gets the same attribute value. */
int MPI_COMM_DUP_FN(MPI_Comm oldcomm, int comm_keyval, void *extra_state, void *attribute_val_in,
                    void *attribute_val_out, int *flag)
{
    (void)oldcomm, (void)comm_keyval, (void)extra_state;
    *(void **)attribute_val_out = attribute_val_in;
    *flag = 1;
    return MPI_SUCCESS;
}

/* MPI_COMM_NULL_DELETE_FN: does nothing. */
int MPI_COMM_NULL_DELETE_FN(MPI_Comm comm, int comm_keyval, void *attribute_val, void *extra_state)
{
    (void)comm, (void)comm_keyval, (void)attribute_val, (void)extra_state;
    return MPI_SUCCESS;
}

/* MPI_TYPE_NULL_COPY_FN: the attribute is not copied. */
int MPI_TYPE_NULL_COPY_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                          void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return MPI_COMM_NULL_COPY_FN(oldtype, type_keyval, extra_state, attribute_val_in,
                                 attribute_val_out, flag);
}

/* MPI_TYPE_DUP_FN: the new object gets the same attribute value. */
int MPI_TYPE_DUP_FN(MPI_Datatype oldtype, int type_keyval, void *extra_state,
                    void *attribute_val_in, void *attribute_val_out, int *flag)
{
    return MPI_COMM_DUP_FN(oldtype, type_keyval, extra_state, attribute_val_in, attribute_val_out,
                           flag);
}

/* MPI_TYPE_NULL_DELETE_FN: does nothing. */
int MPI_TYPE_NULL_DELETE_FN(MPI_Datatype datatype, int type_keyval, void *attribute_val,
                            void *extra_state)
{
    return MPI_COMM_NULL_DELETE_FN(datatype, type_keyval, attribute_val, extra_state);
}

/* MPI_WIN_NULL_COPY_FN: the attribute is not copied. */
int MPI_WIN_NULL_COPY_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                         void *attribute_val_out, int *flag)
{
    return MPI_COMM_NULL_COPY_FN(oldwin, win_keyval, extra_state, attribute_val_in,
                                 attribute_val_out, flag);
}

/* MPI_WIN_DUP_FN: the new object gets the same attribute value. */
int MPI_WIN_DUP_FN(MPI_Win oldwin, int win_keyval, void *extra_state, void *attribute_val_in,
                   void *attribute_val_out, int *flag)
{
    return MPI_COMM_DUP_FN(oldwin, win_keyval, extra_state, attribute_val_in, attribute_val_out,
                           flag);
}

/* MPI_WIN_NULL_DELETE_FN: does nothing. */
int MPI_WIN_NULL_DELETE_FN(MPI_Win win, int win_keyval, void *attribute_val, void *extra_state)
{
    return MPI_COMM_NULL_DELETE_FN(win, win_keyval, attribute_val, extra_state);
}

/* MPI_NULL_COPY_FN (deprecated): as MPI_COMM_NULL_COPY_FN. */
int MPI_NULL_COPY_FN(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
                     void *attribute_val_out, int *flag)
{
    return MPI_COMM_NULL_COPY_FN(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out,
                                 flag);
}

/* MPI_DUP_FN (deprecated): as MPI_COMM_DUP_FN. */
int MPI_DUP_FN(MPI_Comm oldcomm, int keyval, void *extra_state, void *attribute_val_in,
               void *attribute_val_out, int *flag)
{
    return MPI_COMM_DUP_FN(oldcomm, keyval, extra_state, attribute_val_in, attribute_val_out, flag);
}

/* MPI_NULL_DELETE_FN (deprecated): as MPI_COMM_NULL_DELETE_FN. */
int MPI_NULL_DELETE_FN(MPI_Comm comm, int keyval, void *attribute_val, void *extra_state)
{
    return MPI_COMM_NULL_DELETE_FN(comm, keyval, attribute_val, extra_state);
}

/* ---------------------------------------------------------------- common code */

/* The kind whose error handler an error on object (kind, handle) goes to: the
 * communicator's or the window's own; datatypes have none (MPI_COMM_WORLD's). */
static int err_kind(int kind)
{
    return kind == FMPL_MPI_KIND_COMM || kind == FMPL_MPI_KIND_WIN ? kind : 0;
}

/* Raises code for a call on object (kind, handle). */
static int attr_err(int kind, int handle, int code, const char *fname)
{
    return mpii_err(err_kind(kind), handle, code, fname);
}

/* MPI_ERR_KEYVAL for a keyval that set/get do not take; the message says when it was
 * freed (its attributes still exist). */
static int keyval_err(int kind, int handle, int keyval, const char *fname)
{
    if (kv_get(keyval, kind, 1))
        return mpii_errf(err_kind(kind), handle, MPI_ERR_KEYVAL, fname,
                         "keyval %d was freed (its attributes can only be deleted)", keyval);
    return attr_err(kind, handle, MPI_ERR_KEYVAL, fname);
}

static int kv_create(int kind, void (*copy_fn)(void), void (*delete_fn)(void), int *keyval,
                     void *extra_state, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!keyval)
        return MPII_ERR(MPI_ERR_ARG, fname);
    mpii_keyval_t *kv = calloc(1, sizeof *kv);
    if (!kv)
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    *kv = (mpii_keyval_t){.kind = kind,
                          .copy_fn = copy_fn,
                          .delete_fn = delete_fn,
                          .extra_state = extra_state,
                          .refs = 1};
    int h = mpii_handle_new(FMPL_MPI_KIND_KEYVAL, kv);
    if (h == MPI_KEYVAL_INVALID) {
        free(kv);
        return MPII_ERR(MPI_ERR_NO_MEM, fname);
    }
    *keyval = h;
    return MPI_SUCCESS;
}

static int kv_free(int kind, int *keyval, const char *fname)
{
    MPII_CHECK_INIT(fname);
    if (!keyval)
        return MPII_ERR(MPI_ERR_ARG, fname);
    if (is_predef_keyval(*keyval))
        return MPII_ERRF(MPI_ERR_KEYVAL, fname, "a predefined keyval cannot be freed");
    mpii_keyval_t *kv = kv_get(*keyval, kind, 1);
    if (!kv)
        return MPII_ERR(MPI_ERR_KEYVAL, fname);
    if (!kv->freed) {
        kv->freed = 1;
        kv_unref(kv, *keyval); /* the handle's reference; attributes keep theirs */
    }
    *keyval = MPI_KEYVAL_INVALID;
    return MPI_SUCCESS;
}

/* The attribute list of a valid object, or NULL after raising the error. *rc gets the
 * error code. */
static mpii_attr_t **obj_list(int kind, int handle, const char *fname, int *rc)
{
    mpii_attr_t **l = NULL;
    if (mpii.state != MPII_ACTIVE) {
        *rc = mpii_err(0, 0, MPI_ERR_OTHER, fname);
        return NULL;
    }
    if (kind == FMPL_MPI_KIND_COMM) {
        mpii_comm_t *c = mpii_comm_get(handle);
        if (c)
            return &c->attrs;
        *rc = MPII_ERR_COMM(handle, MPI_ERR_COMM, fname);
    } else if (kind == FMPL_MPI_KIND_DATATYPE) {
        l = mpii_type_attrs(handle);
        if (l)
            return l;
        *rc = MPII_ERR(MPI_ERR_TYPE, fname);
    } else {
        l = mpii_win_attrs(handle);
        if (l)
            return l;
        *rc = mpii_err(FMPL_MPI_KIND_WIN, handle, MPI_ERR_WIN, fname);
    }
    return NULL;
}

static mpii_attr_t **attr_find(mpii_attr_t **list, const mpii_keyval_t *kv)
{
    for (; *list; list = &(*list)->next)
        if ((*list)->kv == kv)
            return list;
    return NULL;
}

static int attr_set(int kind, int handle, int keyval, void *val, const char *fname)
{
    int rc = MPI_SUCCESS;
    mpii_attr_t **list = obj_list(kind, handle, fname, &rc);
    if (!list)
        return rc;
    if (is_predef_keyval(keyval))
        return attr_err(kind, handle, MPI_ERR_KEYVAL, fname);
    mpii_keyval_t *kv = kv_get(keyval, kind, 0);
    if (!kv)
        return keyval_err(kind, handle, keyval, fname);
    mpii_attr_t **p = attr_find(list, kv);
    if (p) {
        /* as if MPI_*_delete_attr ran first */
        rc = call_delete(kind, *p, handle);
        if (rc != MPI_SUCCESS)
            return attr_err(kind, handle, rc, fname);
        (*p)->val = val;
        return MPI_SUCCESS;
    }
    mpii_attr_t *a = malloc(sizeof *a);
    if (!a)
        return attr_err(kind, handle, MPI_ERR_NO_MEM, fname);
    *a = (mpii_attr_t){kv, keyval, val, *list};
    kv->refs++;
    *list = a;
    return MPI_SUCCESS;
}

static int attr_get(int kind, int handle, int keyval, void *attribute_val, int *flag,
                    const char *fname)
{
    int rc = MPI_SUCCESS;
    mpii_attr_t **list = obj_list(kind, handle, fname, &rc);
    if (!list)
        return rc;
    if (!attribute_val || !flag)
        return attr_err(kind, handle, MPI_ERR_ARG, fname);
    if (is_predef_keyval(keyval)) {
        int *v = NULL;
        if (kind == FMPL_MPI_KIND_COMM) {
            switch (keyval) {
            case MPI_TAG_UB: v = &attr_tag_ub; break;
            case MPI_HOST: v = &attr_host; break;
            case MPI_IO: v = &attr_io; break;
            case MPI_WTIME_IS_GLOBAL: v = &attr_wtime_global; break;
            case MPI_UNIVERSE_SIZE: v = &attr_universe; break;
            case MPI_APPNUM: v = &attr_appnum; break;
            case MPI_LASTUSEDCODE:
                attr_lastused = mpii_lastusedcode;
                v = &attr_lastused;
                break;
            default: break;
            }
        } else if (kind == FMPL_MPI_KIND_WIN) {
            void *wv = NULL;
            if (mpii_win_predef_attr(handle, keyval, &wv)) {
                *(void **)attribute_val = wv;
                *flag = 1;
                return MPI_SUCCESS;
            }
        }
        if (!v)
            return attr_err(kind, handle, MPI_ERR_KEYVAL, fname);
        *(void **)attribute_val = v;
        *flag = 1;
        return MPI_SUCCESS;
    }
    mpii_keyval_t *kv = kv_get(keyval, kind, 0);
    if (!kv)
        return keyval_err(kind, handle, keyval, fname);
    mpii_attr_t **p = attr_find(list, kv);
    *flag = p != NULL;
    if (p)
        *(void **)attribute_val = (*p)->val;
    return MPI_SUCCESS;
}

static int attr_delete(int kind, int handle, int keyval, const char *fname)
{
    int rc = MPI_SUCCESS;
    mpii_attr_t **list = obj_list(kind, handle, fname, &rc);
    if (!list)
        return rc;
    if (is_predef_keyval(keyval))
        return attr_err(kind, handle, MPI_ERR_KEYVAL, fname);
    mpii_keyval_t *kv = kv_get(keyval, kind, 1);
    if (!kv)
        return attr_err(kind, handle, MPI_ERR_KEYVAL, fname);
    mpii_attr_t **p = attr_find(list, kv);
    if (!p)
        return MPI_SUCCESS; /* nothing cached under keyval */
    rc = call_delete(kind, *p, handle);
    if (rc != MPI_SUCCESS)
        return attr_err(kind, handle, rc, fname);
    mpii_attr_t *a = *p;
    *p = a->next;
    attr_drop(a);
    return MPI_SUCCESS;
}

/* ---------------------------------------------------------------- communicators */

/* MPI_Comm_create_keyval: a keyval for communicator attributes. */
int PMPI_Comm_create_keyval(MPI_Comm_copy_attr_function *comm_copy_attr_fn,
                            MPI_Comm_delete_attr_function *comm_delete_attr_fn, int *comm_keyval,
                            void *extra_state)
{
    return kv_create(FMPL_MPI_KIND_COMM, (void (*)(void))comm_copy_attr_fn,
                     (void (*)(void))comm_delete_attr_fn, comm_keyval, extra_state,
                     "MPI_Comm_create_keyval");
}
MPII_WEAK(MPI_Comm_create_keyval, PMPI_Comm_create_keyval)

/* MPI_Comm_free_keyval: invalidates the handle; attributes using it stay. */
int PMPI_Comm_free_keyval(int *comm_keyval)
{
    return kv_free(FMPL_MPI_KIND_COMM, comm_keyval, "MPI_Comm_free_keyval");
}
MPII_WEAK(MPI_Comm_free_keyval, PMPI_Comm_free_keyval)

/* MPI_Comm_set_attr: caches attribute_val under comm_keyval (an old value is deleted
 * first through the delete callback). */
int PMPI_Comm_set_attr(MPI_Comm comm, int comm_keyval, void *attribute_val)
{
    return attr_set(FMPL_MPI_KIND_COMM, comm, comm_keyval, attribute_val, "MPI_Comm_set_attr");
}
MPII_WEAK(MPI_Comm_set_attr, PMPI_Comm_set_attr)

/* MPI_Comm_get_attr: *(void **)attribute_val = the value, *flag 1; *flag 0 if none. */
int PMPI_Comm_get_attr(MPI_Comm comm, int comm_keyval, void *attribute_val, int *flag)
{
    return attr_get(FMPL_MPI_KIND_COMM, comm, comm_keyval, attribute_val, flag,
                    "MPI_Comm_get_attr");
}
MPII_WEAK(MPI_Comm_get_attr, PMPI_Comm_get_attr)

/* MPI_Comm_delete_attr: runs the delete callback and removes the attribute. */
int PMPI_Comm_delete_attr(MPI_Comm comm, int comm_keyval)
{
    return attr_delete(FMPL_MPI_KIND_COMM, comm, comm_keyval, "MPI_Comm_delete_attr");
}
MPII_WEAK(MPI_Comm_delete_attr, PMPI_Comm_delete_attr)

/* MPI_Keyval_create (deprecated): as MPI_Comm_create_keyval. */
int PMPI_Keyval_create(MPI_Copy_function *copy_fn, MPI_Delete_function *delete_fn, int *keyval,
                       void *extra_state)
{
    return kv_create(FMPL_MPI_KIND_COMM, (void (*)(void))copy_fn, (void (*)(void))delete_fn, keyval,
                     extra_state, "MPI_Keyval_create");
}
MPII_WEAK(MPI_Keyval_create, PMPI_Keyval_create)

/* MPI_Keyval_free (deprecated): as MPI_Comm_free_keyval. */
int PMPI_Keyval_free(int *keyval)
{
    return kv_free(FMPL_MPI_KIND_COMM, keyval, "MPI_Keyval_free");
}
MPII_WEAK(MPI_Keyval_free, PMPI_Keyval_free)

/* MPI_Attr_put (deprecated): as MPI_Comm_set_attr. */
int PMPI_Attr_put(MPI_Comm comm, int keyval, void *attribute_val)
{
    return attr_set(FMPL_MPI_KIND_COMM, comm, keyval, attribute_val, "MPI_Attr_put");
}
MPII_WEAK(MPI_Attr_put, PMPI_Attr_put)

/* MPI_Attr_get (deprecated): as MPI_Comm_get_attr. */
int PMPI_Attr_get(MPI_Comm comm, int keyval, void *attribute_val, int *flag)
{
    return attr_get(FMPL_MPI_KIND_COMM, comm, keyval, attribute_val, flag, "MPI_Attr_get");
}
MPII_WEAK(MPI_Attr_get, PMPI_Attr_get)

/* MPI_Attr_delete (deprecated): as MPI_Comm_delete_attr. */
int PMPI_Attr_delete(MPI_Comm comm, int keyval)
{
    return attr_delete(FMPL_MPI_KIND_COMM, comm, keyval, "MPI_Attr_delete");
}
MPII_WEAK(MPI_Attr_delete, PMPI_Attr_delete)

/* ---------------------------------------------------------------- datatypes */

/* MPI_Type_create_keyval: a keyval for datatype attributes. */
int PMPI_Type_create_keyval(MPI_Type_copy_attr_function *type_copy_attr_fn,
                            MPI_Type_delete_attr_function *type_delete_attr_fn, int *type_keyval,
                            void *extra_state)
{
    return kv_create(FMPL_MPI_KIND_DATATYPE, (void (*)(void))type_copy_attr_fn,
                     (void (*)(void))type_delete_attr_fn, type_keyval, extra_state,
                     "MPI_Type_create_keyval");
}
MPII_WEAK(MPI_Type_create_keyval, PMPI_Type_create_keyval)

/* MPI_Type_free_keyval: invalidates the handle; attributes using it stay. */
int PMPI_Type_free_keyval(int *type_keyval)
{
    return kv_free(FMPL_MPI_KIND_DATATYPE, type_keyval, "MPI_Type_free_keyval");
}
MPII_WEAK(MPI_Type_free_keyval, PMPI_Type_free_keyval)

/* MPI_Type_set_attr: caches attribute_val on a datatype (predefined ones too). */
int PMPI_Type_set_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val)
{
    return attr_set(FMPL_MPI_KIND_DATATYPE, datatype, type_keyval, attribute_val,
                    "MPI_Type_set_attr");
}
MPII_WEAK(MPI_Type_set_attr, PMPI_Type_set_attr)

/* MPI_Type_get_attr: as MPI_Comm_get_attr for datatypes. */
int PMPI_Type_get_attr(MPI_Datatype datatype, int type_keyval, void *attribute_val, int *flag)
{
    return attr_get(FMPL_MPI_KIND_DATATYPE, datatype, type_keyval, attribute_val, flag,
                    "MPI_Type_get_attr");
}
MPII_WEAK(MPI_Type_get_attr, PMPI_Type_get_attr)

/* MPI_Type_delete_attr: as MPI_Comm_delete_attr for datatypes. */
int PMPI_Type_delete_attr(MPI_Datatype datatype, int type_keyval)
{
    return attr_delete(FMPL_MPI_KIND_DATATYPE, datatype, type_keyval, "MPI_Type_delete_attr");
}
MPII_WEAK(MPI_Type_delete_attr, PMPI_Type_delete_attr)

/* ---------------------------------------------------------------- windows */

/* MPI_Win_create_keyval: a keyval for window attributes (usable once windows exist). */
int PMPI_Win_create_keyval(MPI_Win_copy_attr_function *win_copy_attr_fn,
                           MPI_Win_delete_attr_function *win_delete_attr_fn, int *win_keyval,
                           void *extra_state)
{
    return kv_create(FMPL_MPI_KIND_WIN, (void (*)(void))win_copy_attr_fn,
                     (void (*)(void))win_delete_attr_fn, win_keyval, extra_state,
                     "MPI_Win_create_keyval");
}
MPII_WEAK(MPI_Win_create_keyval, PMPI_Win_create_keyval)

/* MPI_Win_free_keyval: invalidates the handle. */
int PMPI_Win_free_keyval(int *win_keyval)
{
    return kv_free(FMPL_MPI_KIND_WIN, win_keyval, "MPI_Win_free_keyval");
}
MPII_WEAK(MPI_Win_free_keyval, PMPI_Win_free_keyval)

/* MPI_Win_set_attr: MPI_ERR_WIN (no window exists yet). */
int PMPI_Win_set_attr(MPI_Win win, int win_keyval, void *attribute_val)
{
    return attr_set(FMPL_MPI_KIND_WIN, win, win_keyval, attribute_val, "MPI_Win_set_attr");
}
MPII_WEAK(MPI_Win_set_attr, PMPI_Win_set_attr)

/* MPI_Win_get_attr: MPI_ERR_WIN (no window exists yet). */
int PMPI_Win_get_attr(MPI_Win win, int win_keyval, void *attribute_val, int *flag)
{
    return attr_get(FMPL_MPI_KIND_WIN, win, win_keyval, attribute_val, flag, "MPI_Win_get_attr");
}
MPII_WEAK(MPI_Win_get_attr, PMPI_Win_get_attr)

/* MPI_Win_delete_attr: MPI_ERR_WIN (no window exists yet). */
int PMPI_Win_delete_attr(MPI_Win win, int win_keyval)
{
    return attr_delete(FMPL_MPI_KIND_WIN, win, win_keyval, "MPI_Win_delete_attr");
}
MPII_WEAK(MPI_Win_delete_attr, PMPI_Win_delete_attr)
